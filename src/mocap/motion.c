/* fb_motion: a clip's frames as q(t) of its character, resampled, and back out as BVH. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/dynamics.h"
#include "featherbone/mocap.h"
#include "math/quat.h"
#include "mocap/clip.h"
#include "mocap/euler.h"
#include "util/atomic_file.h"
#include "util/error.h"

/* Highest resampling rate accepted (frames/s). */
#define MOTION_FPS_MAX 10000.0

void fb_motion_destroy(fb_motion* mo) {
    if (!mo) {
        return;
    }
    const fb_allocator a = mo->alloc;
    fb_free(&a, mo->q);
    fb_free(&a, mo);
}


/* Joint i's position coordinates at clip frame f (m, joint-frame axes): the channels, with
 * OFFSET for the components an absolute-mode joint has no channel for. */
static fb_v3 clip_position(const fb_clip* c, int i, int f) {
    const fb_clip_joint* j = &c->joint[i];
    const double* row = c->frames + (size_t)f * (size_t)c->nchan + (size_t)j->col;
    const bool absolute = i > 0 && c->pos_mode == FB_POS_ABSOLUTE;
    double p[3] = {absolute ? j->offset.x : 0.0, absolute ? j->offset.y : 0.0,
                   absolute ? j->offset.z : 0.0};
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] <= FB_CH_ZPOS) {
            p[j->chan[k]] = row[k];
        }
    }
    return fb_v3_scale(fb_v3_make(p[0], p[1], p[2]), c->unit);
}


/* q (nq) of the character at clip frame f. Folded joints have no coordinates; a bone's
 * position channels are in its X_tree, not in q. */
static void frame_q(const fb_clip* c, const fb_character* ch, int f, double* q) {
    const fb_model* m = ch->model;
    fb_q_neutral(m, q);
    for (int i = 0; i < c->njoint; i++) {
        if (ch->role[i] == FB_ROLE_FOLDED) {
            continue;
        }
        const int b = ch->body_of_joint[i];
        double* qb = q + m->q_adr[b];
        switch (m->jtype[b]) {
        case FB_JOINT_FLOATING: {
            const fb_v3 p = clip_position(c, i, f);
            qb[0] = p.x;
            qb[1] = p.y;
            qb[2] = p.z;
            fb_quat_store(qb + 3, fb_clip_frame_rotation(c, i, f));
            break;
        }
        case FB_JOINT_SPHERICAL:
            fb_quat_store(qb, fb_clip_frame_rotation(c, i, f));
            break;
        case FB_JOINT_REVOLUTE: {
            /* the angle after the hinge's rest rotation */
            const fb_quat r = fb_quat_mul(fb_quat_conj(ch->hinge[i].rest),
                                          fb_clip_frame_rotation(c, i, f));
            qb[0] = fb_quat_twist(r, m->axis[b]);
            break;
        }
        case FB_JOINT_PRISMATIC:
        case FB_JOINT_FIXED:
            break;
        }
    }
}

/* Angles of revolute joints continue across frames instead of jumping at +-pi. */
static void unwrap_angles(const fb_model* m, const double* prev, double* q) {
    for (int b = 1; b < m->nbody; b++) {
        if (m->jtype[b] == FB_JOINT_REVOLUTE) {
            const int k = m->q_adr[b];
            q[k] += 2.0 * FB_PI * round((prev[k] - q[k]) / (2.0 * FB_PI));
        }
    }
}

fb_motion* fb_motion_from_clip(const fb_clip* c, const fb_character* ch, double fps, int first,
                               int last, fb_error* err) {
    const fb_model* m = ch->model;
    if (last <= 0) {
        last = c->nframe;
    }
    if (first < 0 || first >= last || last > c->nframe) {
        fb_fail(err, FB_EINVAL, "%s: frames %d:%d: expected a range within 0:%d", c->source, first,
                last, c->nframe);
        return NULL;
    }
    if (!(fps >= 0.0) || fps > MOTION_FPS_MAX) {
        fb_fail(err, FB_EINVAL, "fps: expected 0 (the clip's rate) to %g, found %g", MOTION_FPS_MAX,
                fps);
        return NULL;
    }
    const double dt = fps > 0.0 ? 1.0 / fps : c->frame_time;
    const double span = (last - 1 - first) * c->frame_time;
    const long n = 1 + (long)floor(span / dt + 1e-9);
    const fb_allocator a = c->alloc;
    fb_motion* mo = fb_alloc(&a, sizeof *mo);
    double* qa = fb_alloc(&a, 2 * (size_t)m->nq * sizeof(double) + 1);
    if (mo) {
        memset(mo, 0, sizeof *mo);
        mo->alloc = a;
        mo->q = fb_alloc(&a, (size_t)n * (size_t)m->nq * sizeof(double) + 1);
    }
    if (!mo || !mo->q || !qa) {
        fb_fail(err, FB_ENOMEM, "%s: out of memory for %ld frames", c->source, n);
        fb_free(&a, qa);
        fb_motion_destroy(mo);
        return NULL;
    }
    mo->nframe = (int)n;
    mo->nq = m->nq;
    mo->dt = dt;
    mo->t0 = first * c->frame_time;
    double* qb = qa + m->nq;
    double* v = NULL;
    for (long k = 0; k < n; k++) {
        /* clip frame position of this sample; rotations by slerp (integrate along the
         * difference), scalar coordinates and the root's position linearly */
        const double s = first + k * dt / c->frame_time;
        const int f0 = (int)fmin(floor(s), last - 1), f1 = (f0 + 1 < last) ? f0 + 1 : f0;
        const double alpha = s - f0;
        double* out = mo->q + (size_t)k * (size_t)m->nq;
        frame_q(c, ch, f0, out);
        if (k > 0) {
            unwrap_angles(m, out - m->nq, out);
        }
        if (alpha > 1e-12 && f1 != f0) {
            frame_q(c, ch, f1, qb);
            unwrap_angles(m, out, qb);
            if (!v) {
                v = fb_alloc(&a, (size_t)m->nv * sizeof(double) + 1);
                if (!v) {
                    fb_fail(err, FB_ENOMEM, "%s: out of memory", c->source);
                    fb_free(&a, qa);
                    fb_motion_destroy(mo);
                    return NULL;
                }
            }
            fb_difference(m, out, qb, v);
            double p[3] = {0.0, 0.0, 0.0};
            const bool floating = m->nbody > 1 && m->jtype[1] == FB_JOINT_FLOATING;
            for (int x = 0; floating && x < 3; x++) {
                p[x] = out[m->q_adr[1] + x] + alpha * (qb[m->q_adr[1] + x] - out[m->q_adr[1] + x]);
            }
            fb_integrate(m, out, v, alpha, out);
            for (int x = 0; floating && x < 3; x++) {
                out[m->q_adr[1] + x] = p[x]; /* the root's position linearly */
            }
        }
    }
    fb_free(&a, v);
    fb_free(&a, qa);
    fb_ok(err);
    return mo;
}

/* ---- BVH export ------------------------------------------------------------------------ */

static void write_indent(FILE* f, int depth) {
    for (int k = 0; k < depth; k++) {
        fputc('\t', f);
    }
}

/* Digits written after the decimal point: 5e-7 of the unit or degree at most, inside the
 * 1e-6 round-trip tolerance, and the precision the input files themselves use. */
#define BVH_DECIMALS 6

static void write_hierarchy(FILE* f, const fb_clip* c, double scale) {
    fputs("HIERARCHY\n", f);
    int depth = 0;
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        /* close the blocks of joints that are not ancestors of this one */
        int d = 0;
        for (int p = j->parent; p >= 0; p = c->joint[p].parent) {
            d++;
        }
        while (depth > d) {
            depth--;
            write_indent(f, depth);
            fputs("}\n", f);
        }
        write_indent(f, depth);
        fprintf(f, "%s %s\n", j->parent < 0 ? "ROOT" : "JOINT", j->name);
        write_indent(f, depth);
        fputs("{\n", f);
        write_indent(f, depth + 1);
        fprintf(f, "OFFSET %.*f %.*f %.*f\n", BVH_DECIMALS, j->offset.x * scale, BVH_DECIMALS,
                j->offset.y * scale, BVH_DECIMALS, j->offset.z * scale);
        write_indent(f, depth + 1);
        fprintf(f, "CHANNELS %d", j->nchan);
        for (int k = 0; k < j->nchan; k++) {
            fprintf(f, " %s", fb_channel_name(j->chan[k]));
        }
        fputc('\n', f);
        if (j->has_end) {
            write_indent(f, depth + 1);
            fputs("End Site\n", f);
            write_indent(f, depth + 1);
            fputs("{\n", f);
            write_indent(f, depth + 2);
            fprintf(f, "OFFSET %.*f %.*f %.*f\n", BVH_DECIMALS, j->end_offset.x * scale,
                    BVH_DECIMALS, j->end_offset.y * scale, BVH_DECIMALS, j->end_offset.z * scale);
            write_indent(f, depth + 1);
            fputs("}\n", f);
        }
        depth = d + 1;
    }
    while (depth > 0) {
        depth--;
        write_indent(f, depth);
        fputs("}\n", f);
    }
}

/* The rotation clip joint i's body holds in q, as a quaternion (a hinge's after its rest). */
static fb_quat joint_rotation(const fb_character* ch, int i, const double* q) {
    const fb_model* m = ch->model;
    const int b = ch->body_of_joint[i];
    const double* qb = q + m->q_adr[b];
    switch (m->jtype[b]) {
    case FB_JOINT_FLOATING:
        return fb_quat_load(qb + 3);
    case FB_JOINT_SPHERICAL:
        return fb_quat_load(qb);
    case FB_JOINT_REVOLUTE:
        return fb_quat_mul(ch->hinge[i].rest, fb_quat_from_axis_angle(m->axis[b], qb[0]));
    case FB_JOINT_PRISMATIC:
    case FB_JOINT_FIXED:
        break;
    }
    return fb_quat_identity();
}

/* The input's value in frame column `col` at clip time t (s): linear between the two
 * neighbouring frames, exactly a frame's value at that frame's time. */
static double input_value(const fb_clip* c, int col, double t) {
    double s = t / c->frame_time;
    if (fabs(s - round(s)) < 1e-9) {
        s = round(s);
    }
    s = fmin(fmax(s, 0.0), c->nframe - 1);
    const int f0 = (int)floor(s), f1 = f0 + 1 < c->nframe ? f0 + 1 : f0;
    const double a = s - f0, v0 = c->frames[(size_t)f0 * (size_t)c->nchan + (size_t)col];
    if (a == 0.0) {
        return v0;
    }
    return v0 + a * (c->frames[(size_t)f1 * (size_t)c->nchan + (size_t)col] - v0);
}

/* One frame line at clip time t: each joint's channels in file order; angles continue from
 * prev (radians, per joint 3 slots) which this updates. Floating joints write their positions
 * from q; the other position channels (bones, folded joints) and every channel of a folded
 * joint are the input's at t. */
static void write_frame(FILE* f, const fb_clip* c, const fb_character* ch, const double* q,
                        double t, double scale, double* prev) {
    const fb_model* m = ch->model;
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        const int b = ch->body_of_joint[i];
        const bool folded = ch->role[i] == FB_ROLE_FOLDED;
        int axes[6], full[3];
        const int n = fb_clip_rot_axes(j, axes);
        double ang[3] = {0.0, 0.0, 0.0};
        if (n > 0 && !folded) {
            fb_euler_complete_axes(axes, n, full);
            fb_quat_to_euler(joint_rotation(ch, i, q), full, prev + 3 * i, ang);
            memcpy(prev + 3 * i, ang, sizeof ang);
        }
        double pos[3] = {0.0, 0.0, 0.0};
        const bool from_q = !folded && m->jtype[b] == FB_JOINT_FLOATING;
        if (from_q) {
            const double* qb = q + m->q_adr[b];
            for (int k = 0; k < 3; k++) {
                pos[k] = qb[k] / c->unit * scale;
            }
        }
        int r = 0;
        for (int k = 0; k < j->nchan; k++) {
            double v;
            if (folded) {
                v = input_value(c, j->col + k, t) * (j->chan[k] <= FB_CH_ZPOS ? scale : 1.0);
            } else if (j->chan[k] >= FB_CH_XROT) {
                v = ang[r++] * (180.0 / FB_PI);
            } else {
                v = from_q ? pos[j->chan[k]] : input_value(c, j->col + k, t) * scale;
            }
            /* a value that prints as zero prints without a sign: "-0.000000" would tell two
             * takes apart by noise below the printed digits */
            v = fabs(v) < 0.5e-6 ? 0.0 : v;
            fprintf(f, "%s%.*f", (i == 0 && k == 0) ? "" : " ", BVH_DECIMALS, v);
        }
    }
    fputc('\n', f);
}

fb_status fb_motion_write_bvh(const fb_clip* c, const fb_character* ch, const fb_motion* mo,
                              double length_scale, const char* path, fb_error* err) {
    if (!(length_scale > 0.0) || !isfinite(length_scale)) {
        return fb_fail(err, FB_EINVAL, "scale: expected a finite value > 0, found %g",
                       length_scale);
    }
    if (mo->nq != ch->model->nq) {
        return fb_fail(err, FB_EINVAL, "motion has %d coordinates, the character %d", mo->nq,
                       ch->model->nq);
    }
    double* prev = calloc(3 * (size_t)c->njoint + 1, sizeof(double));
    if (!prev) {
        return fb_fail(err, FB_ENOMEM, "%s: out of memory", path);
    }
    /* the target appears whole or not at all */
    fb_atomic_file af;
    fb_status s = fb_atomic_open(&af, path, err);
    if (s != FB_OK) {
        free(prev);
        return s;
    }
    FILE* f = af.f;
    write_hierarchy(f, c, length_scale);
    fprintf(f, "MOTION\nFrames: %d\nFrame Time: %.9g\n", mo->nframe, mo->dt);
    /* unwrap against the clip's own first frame, so the numbers stay close to the input's */
    for (int i = 0; i < c->njoint; i++) {
        const double* row = c->frames + (size_t)c->joint[i].col;
        for (int k = 0, r = 0; k < c->joint[i].nchan; k++) {
            if (c->joint[i].chan[k] >= FB_CH_XROT) {
                prev[3 * i + r++] = row[k] * (FB_PI / 180.0);
            }
        }
    }
    for (int k = 0; k < mo->nframe; k++) {
        write_frame(f, c, ch, mo->q + (size_t)k * (size_t)mo->nq, mo->t0 + k * mo->dt,
                    length_scale, prev);
    }
    s = fb_atomic_commit(&af, err);
    free(prev);
    return s;
}
