/* The simulated clip written back: as BVH in the input's own skeleton and channels (each
 * joint's change from the reference laid on the input's frame, so an unperturbed run is the
 * input itself), and as an fb_motion of the simulated character (the glTF export's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/mocap.h"
#include "math/quat.h"
#include "math/vec3.h"
#include "sim_internal.h"
#include "util/error.h"

/* The change the simulation made to joint `b` of the character at one frame: the rotation
 * from the reference's to the simulated (joint frame, right of the reference's: q_ref dq =
 * q_sim), and for a floating joint the translation (its parent's frame). Identity for a
 * fixed joint. */
static fb_quat joint_change(const fb_model* m, int b, const double* q_ref, const double* q_sim,
                            fb_v3* dp) {
    const int qa = m->q_adr[b];
    *dp = fb_v3_zero();
    switch (m->jtype[b]) {
    case FB_JOINT_FLOATING:
        *dp = fb_v3_make(q_sim[qa] - q_ref[qa], q_sim[qa + 1] - q_ref[qa + 1],
                         q_sim[qa + 2] - q_ref[qa + 2]);
        return fb_quat_mul(fb_quat_conj(fb_quat_load(q_ref + qa + 3)),
                           fb_quat_load(q_sim + qa + 3));
    case FB_JOINT_SPHERICAL:
        return fb_quat_mul(fb_quat_conj(fb_quat_load(q_ref + qa)), fb_quat_load(q_sim + qa));
    case FB_JOINT_REVOLUTE:
        return fb_quat_from_axis_angle(m->axis[b], q_sim[qa] - q_ref[qa]);
    default:
        return fb_quat_identity();
    }
}

/* After a fall the body no longer follows the clip, and the clip's own detail that the fit
 * smoothed away (its difference from the fitted reference: capture noise, a knee held at its
 * stop that the fit rounds off, toes in the floor) does not belong on it: laid on a body lying
 * still it would move it, past its stops and into the ground. From the fall on, the export's
 * reference is moved from the fitted one to the clip itself (in the character's coordinates,
 * placed as the reference is) over this long, so the export becomes the simulated pose. */
#define EXPORT_FALL_FADE FB_FALL_DAMP_TIME

/* q_ref (the fitted reference at a frame) moved a fraction w toward qc, the clip at that
 * frame in the character's coordinates: hinges linearly, ball joints and the root's turn by
 * slerp, the root's position toward the clip's placed on the ground as the reference is. */
static void toward_clip(const fb_sim* s, const double* qc, double w, double* q_ref) {
    const fb_model* m = s->ch->model;
    for (int b = 1; b < m->nbody; b++) {
        const int qa = m->q_adr[b];
        switch (m->jtype[b]) {
        case FB_JOINT_REVOLUTE:
            q_ref[qa] += w * (qc[qa] - q_ref[qa]);
            break;
        case FB_JOINT_SPHERICAL:
            fb_quat_store(q_ref + qa,
                          fb_quat_slerp(fb_quat_load(q_ref + qa), fb_quat_load(qc + qa), w));
            break;
        case FB_JOINT_FLOATING: {
            const fb_v3 dp = fb_m3_mv(m->X_tree[b].E, s->ref->place_shift);
            const double placed[3] = {qc[qa] + dp.x, qc[qa + 1] + dp.y, qc[qa + 2] + dp.z};
            for (int k = 0; k < 3; k++) {
                q_ref[qa + k] += w * (placed[k] - q_ref[qa + k]);
            }
            fb_quat_store(q_ref + qa + 3, fb_quat_slerp(fb_quat_load(q_ref + qa + 3),
                                                        fb_quat_load(qc + qa + 3), w));
            break;
        }
        default:
            break;
        }
    }
}

fb_status fb_sim_write_bvh(const fb_sim* s, const char* path, fb_error* err) {
    const fb_model* m = s->ch->model;
    /* the input's frames as q of its lossless character (every rotating joint a ball) */
    fb_status st = FB_OK;
    fb_character* lo = fb_character_build(s->clip, NULL, err);
    fb_motion* mo = lo ? fb_motion_from_clip(s->clip, lo, 0.0, s->o.first, s->o.last, err) : NULL;
    /* after a fall: the input's frames as q of the simulated character */
    const fb_fall fall = fb_tracker_fall(s->tr);
    fb_motion* mc = mo && fall.cause != FB_FALL_NONE
                        ? fb_motion_from_clip(s->clip, s->ch, 0.0, s->o.first, s->o.last, err)
                        : NULL;
    double* q_ref = calloc((size_t)m->nq + (size_t)m->nv + 1, sizeof(double));
    if (!lo || !mo || (fall.cause != FB_FALL_NONE && !mc)) {
        st = FB_EINVAL; /* err says why */
    } else if (!q_ref) {
        st = fb_fail(err, FB_ENOMEM, "%s: out of memory", path);
    } else if (mo->nframe < s->nrec) {
        st = fb_fail(err, FB_ESTATE, "%s: %d frames simulated, the clip has %d", path, s->nrec,
                     mo->nframe);
    }
    if (st == FB_OK) {
        const fb_model* ml = lo->model;
        const fb_v3 shift = s->o.export_placed ? s->ref->place_shift : fb_v3_zero();
        double* tmp = q_ref + m->nq;
        mo->nframe = s->nrec;
        for (int f = 0; f < s->nrec; f++) {
            const double* q_sim = s->rec_q + (size_t)f * (size_t)m->nq;
            double* q = mo->q + (size_t)f * (size_t)ml->nq;
            fb_ref_at(m, s->ref, s->frames[f].time, q_ref, NULL, NULL, NULL, tmp);
            const double w = mc && f < mc->nframe
                                 ? (s->frames[f].time - fall.time) / EXPORT_FALL_FADE
                                 : 0.0;
            if (w > 0.0) {
                toward_clip(s, mc->q + (size_t)f * (size_t)m->nq, fmin(w, 1.0), q_ref);
            }
            for (int i = 0; i < s->clip->njoint; i++) {
                const int b = s->ch->body_of_joint[i], bl = lo->body_of_joint[i];
                if (s->ch->role[i] != FB_ROLE_BODY) {
                    continue; /* dropped: as the input has it */
                }
                fb_v3 dp;
                const fb_quat dq = joint_change(m, b, q_ref, q_sim, &dp);
                const int qa = ml->q_adr[bl];
                if (ml->jtype[bl] == FB_JOINT_FLOATING) {
                    const fb_v3 d = fb_v3_add(dp, fb_m3_mv(ml->X_tree[bl].E, shift));
                    q[qa] += d.x;
                    q[qa + 1] += d.y;
                    q[qa + 2] += d.z;
                    fb_quat_store(q + qa + 3, fb_quat_normalize(fb_quat_mul(
                                                  fb_quat_load(q + qa + 3), dq)));
                } else if (ml->jtype[bl] == FB_JOINT_SPHERICAL) {
                    fb_quat_store(q + qa,
                                  fb_quat_normalize(fb_quat_mul(fb_quat_load(q + qa), dq)));
                }
            }
        }
        st = fb_motion_write_bvh(s->clip, lo, mo, 1.0, path, err);
    }
    free(q_ref);
    fb_motion_destroy(mc);
    fb_motion_destroy(mo);
    fb_character_destroy(lo);
    return st;
}

fb_motion* fb_sim_motion(const fb_sim* s, fb_error* err) {
    const fb_model* m = s->ch->model;
    const fb_allocator a = fb_default_allocator();
    fb_motion* mo = fb_alloc(&a, sizeof *mo);
    double* q = fb_alloc(&a, (size_t)s->nrec * (size_t)m->nq * sizeof(double) + 1);
    if (!mo || !q) {
        fb_free(&a, mo);
        fb_free(&a, q);
        fb_fail(err, FB_ENOMEM, "simulation: out of memory for the motion");
        return NULL;
    }
    memcpy(q, s->rec_q, (size_t)s->nrec * (size_t)m->nq * sizeof(double));
    /* back in the input's frame: the root's position less the placement (in the root joint's
     * parent frame, as q holds it) */
    const fb_v3 off = fb_sim_export_offset(s);
    if (s->root >= 0 && (off.x != 0.0 || off.y != 0.0 || off.z != 0.0)) {
        const fb_v3 dp = fb_m3_mv(m->X_tree[s->root].E, off);
        for (int f = 0; f < s->nrec; f++) {
            double* p = q + (size_t)f * (size_t)m->nq + (size_t)m->q_adr[s->root];
            p[0] += dp.x;
            p[1] += dp.y;
            p[2] += dp.z;
        }
    }
    /* frame 0 is the clip's frame `first`: the export writes the input's bone channels there */
    *mo = (fb_motion){.nframe = s->nrec, .nq = m->nq, .dt = s->clip_dt,
                      .t0 = s->o.first * s->clip_dt, .q = q, .alloc = a};
    fb_ok(err);
    return mo;
}
