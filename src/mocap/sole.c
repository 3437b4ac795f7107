/* The sole of a foot: the box of a "box" rules part (the feet) fitted to how the clip stands
 * on it (docs/MOCAP.md, "The sole").
 *
 * The character builder makes a foot's box along the ankle -> toe bone (character.c,
 * plan_shape). A captured foot bone is not parallel to the sole: the ankle sits higher above
 * the floor than the toe joint, so in the clip's standing frames that box stands on one corner,
 * tilted 10-25 degrees (131_01's left foot at frame 0: its bottom corners 4.0-11.8 cm above
 * the ground). Here the box is fitted instead to the plane the clip's sole lies on: the
 * world's up expressed in the foot's axes, averaged over the frames where the foot stands
 * (low and slow), is the sole's normal; the bottom face passes under the toe joint by the toe
 * shape's radius (the toe capsule then lies flat on the same floor), reaches from the heel to
 * the toe joint and up to the ankle, as wide as the old box.
 *
 * The heel: anthropometry puts the ankle (the lateral malleolus projected on the sole) about
 * 20% and the first metatarsophalangeal joint (the ball, where the toes bend) about 73% of
 * the foot's length from the back of the heel (ball-of-foot length about 73% of foot length:
 * Wunderlich & Cavanagh 2001, "Gender differences in adult foot shape: implications for shoe
 * design", Med. Sci. Sports Exerc. 33(4):605-611). The heel is then 0.20 / (0.73 - 0.20) =
 * 0.377 of the ankle-to-toe-joint length behind the ankle. */
#include "mocap/sole.h"
#include "math/detmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/dynamics.h"
#include "math/vec3.h"
#include "util/error.h"
#include "util/sort.h"

/* The heel behind the ankle, per unit of the ankle-to-toe-joint length along the sole. */
#define SOLE_HEEL 0.377
/* A frame is a stance frame of a foot when the ankle moves horizontally slower than SOLE_SLOW
 * (m/s; the speed taken over SOLE_SPAN s: capture noise of a millimetre over one 120 Hz frame
 * would read as 0.1 m/s) and its height is within the SOLE_LOW (m) band of heights that holds
 * the most such frames: where the foot stands most of the time, not the lowest it ever goes
 * (a kneel, a fall to the floor). */
#define SOLE_LOW 0.04
#define SOLE_SLOW 0.15
#define SOLE_SPAN 0.1
/* Nor is a frame where the world's up, in the foot's axes, is further than this (rad, 45 deg)
 * from where it is in the pose that stands, on flat feet (the rest pose, or the clip's first
 * upright frame where the rest pose lays the bones out: docs/MOCAP.md): a foot on tiptoe, or
 * lying on its side on the floor (Boxing_Toes' boxer stays on the ball of his left foot and
 * only lies down on it). */
#define SOLE_REST_ANGLE 0.785
/* A foot needs this much stance (s) for a fit; with less it keeps its box. */
#define SOLE_MIN_TIME 0.25
/* A fit is refused (the box kept) when the sole's forward direction is shorter than this
 * fraction of the ankle-to-toe length (the bone nearly along the sole's normal) or the ankle
 * less than this fraction of the toe radius above the sole. */
#define SOLE_MIN_FRACTION 0.2

/* Where the box of body b ends in front (body coordinates) and the radius its bottom passes
 * under it by: the toe joint and the toe shape's radius (the first child body with a shape),
 * or, for a foot without toes, the far end of today's box and half its height. */
static fb_v3 toe_point(const fb_model* m, int b, const fb_shape* box, double* radius) {
    for (int c = b + 1; c < m->nbody; c++) {
        if (m->parent[c] != b) {
            continue;
        }
        for (int k = 0; k < m->nshape; k++) {
            const fb_shape* s = &m->shape[k];
            if (s->body == c) {
                *radius = s->type == FB_SHAPE_BOX ? 0.5 * s->size.z : s->radius;
                return m->X_tree[c].r;
            }
        }
    }
    *radius = 0.5 * box->size.z;
    return fb_v3_add(box->p0, fb_v3_scale(fb_m3_col(box->R, 0), 0.5 * box->size.x));
}

/* The sole's normal in body b's axes from the motion's frames (nf x nq, dt apart): the mean
 * of the world's up over the stance frames; stand: the frame that stands (-1: the rest pose).
 * False when there are too few. scratch: 9 nf doubles. */
static bool sole_normal(const fb_model* m, fb_data* d, const double* q, int nf, double dt,
                        int stand_frame, int b, double* scratch, fb_v3* u) {
    double* y = scratch;
    double* sorted = scratch + nf;
    double* speed = scratch + 2 * (size_t)nf;
    fb_v3* up = (fb_v3*)(void*)(scratch + 3 * (size_t)nf); /* nf vectors */
    fb_v3* p = up + nf;                                     /* nf vectors */
    /* the world's up in the foot's axes in the pose that stands: the rest pose when it stands
     * upright, else the clip's first frame that does (a rest pose with the bones laid out
     * along local X; docs/MOCAP.md) */
    if (stand_frame < 0) {
        fb_q_neutral(m, d->q);
    } else {
        memcpy(d->q, q + (size_t)stand_frame * (size_t)m->nq, (size_t)m->nq * sizeof(double));
    }
    fb_kinematics_pos(m, d);
    const fb_v3 rest_up = fb_m3_tr_mv(fb_body_rot(m, d, b), fb_v3_make(0.0, 1.0, 0.0));
    const double cos_rest = fb_cos(SOLE_REST_ANGLE);
    for (int f = 0; f < nf; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, d);
        p[f] = fb_point_pos(m, d, b, fb_v3_zero());
        up[f] = fb_m3_tr_mv(fb_body_rot(m, d, b), fb_v3_make(0.0, 1.0, 0.0));
        y[f] = p[f].y;
    }
    const int k = (int)fmax(1.0, round(0.5 * SOLE_SPAN / dt));
    for (int f = 0; f < nf; f++) {
        const int f0 = f - k < 0 ? 0 : f - k, f1 = f + k > nf - 1 ? nf - 1 : f + k;
        const fb_v3 dp = fb_v3_sub(p[f1], p[f0]);
        speed[f] = f1 > f0 ? fb_hypot(dp.x, dp.z) / ((f1 - f0) * dt) : 0.0;
    }
    /* the standing height: the band of heights where the foot is most often upright and still */
    int ns = 0;
    for (int f = 0; f < nf; f++) {
        if (speed[f] < SOLE_SLOW && fb_v3_dot(up[f], rest_up) > cos_rest) {
            sorted[ns++] = y[f];
        }
    }
    if (ns == 0) {
        return false;
    }
    fb_sort_doubles(sorted, (size_t)ns);
    double stand = sorted[0];
    for (int i = 0, j = 0, best = 0; i < ns; i++) {
        while (j < ns && sorted[j] < sorted[i] + SOLE_LOW) {
            j++;
        }
        if (j - i > best) {
            best = j - i;
            stand = sorted[i];
        }
    }
    fb_v3 sum = fb_v3_zero();
    int n = 0;
    for (int f = 0; f < nf; f++) {
        if (speed[f] < SOLE_SLOW && fb_v3_dot(up[f], rest_up) > cos_rest && y[f] >= stand &&
            y[f] < stand + SOLE_LOW) {
            sum = fb_v3_add(sum, up[f]);
            n++;
        }
    }
    const double len = fb_v3_norm(sum);
    if (n < (int)ceil(SOLE_MIN_TIME / dt) || !(len > 0.0)) {
        return false;
    }
    *u = fb_v3_scale(sum, 1.0 / len);
    return true;
}

/* The fitted box of body b for the sole normal u (body axes), replacing *box; false (box
 * untouched) when the geometry does not allow one. */
static bool fit_box(const fb_model* m, int b, fb_v3 u, fb_shape* box) {
    double r_toe;
    const fb_v3 toe = toe_point(m, b, box, &r_toe);
    const double along_u = fb_v3_dot(toe, u);
    const fb_v3 fwd = fb_v3_sub(toe, fb_v3_scale(u, along_u));
    const double front = fb_v3_norm(fwd);
    const double bottom = along_u - r_toe; /* the sole plane, along u, the ankle at 0 */
    if (!(front > SOLE_MIN_FRACTION * fb_v3_norm(toe)) || !(-bottom > SOLE_MIN_FRACTION * r_toe)) {
        return false;
    }
    const fb_v3 fw = fb_v3_scale(fwd, 1.0 / front);
    const fb_v3 side = fb_v3_cross(u, fw);
    const double back = -SOLE_HEEL * front;
    box->size = fb_v3_make(front - back, box->size.y, -bottom);
    box->p0 = fb_v3_add(fb_v3_scale(fw, 0.5 * (front + back)), fb_v3_scale(u, 0.5 * bottom));
    box->R = (fb_m3){{{fw.x, side.x, u.x}, {fw.y, side.y, u.y}, {fw.z, side.z, u.z}}};
    return true;
}

fb_status fb_sole_fit(const fb_clip* c, fb_character* ch, const fb_build_opts* o,
                      fb_error* err) {
    fb_model* m = ch->model;
    int nbox = 0;
    for (int k = 0; k < m->nshape; k++) {
        nbox += m->shape[k].type == FB_SHAPE_BOX;
    }
    if (nbox == 0) {
        return fb_ok(err);
    }
    const fb_allocator a = c->alloc;
    fb_motion* mo = fb_motion_from_clip(c, ch, 0.0, 0, 0, err);
    if (!mo) {
        return err ? err->code : FB_ENOMEM;
    }
    fb_data* d = fb_data_create(m, &a, err);
    double* scratch = fb_alloc(&a, 9 * (size_t)mo->nframe * sizeof(double));
    if (!d || !scratch) {
        fb_data_destroy(d);
        fb_free(&a, scratch);
        fb_motion_destroy(mo);
        return fb_fail(err, FB_ENOMEM, "%s: out of memory fitting the soles", c->source);
    }
    /* the pose that stands: -1 the rest pose */
    const int stand = (c->height_from == FB_HEIGHT_REST || c->stand_frame < 0 ||
                       c->stand_frame >= mo->nframe)
                          ? -1
                          : c->stand_frame;
    bool changed = false;
    for (int k = 0; k < m->nshape; k++) {
        fb_shape* box = &m->shape[k];
        const int b = box->body;
        fb_v3 u;
        if (box->type != FB_SHAPE_BOX ||
            !sole_normal(m, d, mo->q, mo->nframe, mo->dt, stand, b, scratch, &u)) {
            continue;
        }
        const double v_old = box->size.x * box->size.y * box->size.z;
        if (!fit_box(m, b, u, box)) {
            continue;
        }
        /* the new box's mass: at the density the old one had (the rules' density times the
         * build's mass factor); the anthropometric model fixes the foot's mass instead */
        const double v_new = box->size.x * box->size.y * box->size.z;
        const double mass = o->mass_model == FB_MASS_ANTHROPOMETRIC ? m->I[b].m
                                                                     : m->I[b].m * v_new / v_old;
        const fb_rbi centred = fb_rbi_box(mass / v_new, box->size, fb_v3_zero());
        m->I[b] = fb_rbi_from_mass_com(mass, box->p0, fb_m3_congr(box->R, centred.Ibar));
        changed = true;
    }
    /* a total mass asked for: every body scaled again, as the build scales them */
    if (changed && o->mass_model == FB_MASS_DENSITY && o->mass > 0.0) {
        const double s = o->mass / fb_model_mass(m);
        for (int b = 1; b < m->nbody; b++) {
            m->I[b] = (fb_rbi){m->I[b].m * s, fb_v3_scale(m->I[b].h, s),
                               fb_m3_scale(m->I[b].Ibar, s)};
        }
    }
    fb_free(&a, scratch);
    fb_data_destroy(d);
    fb_motion_destroy(mo);
    return fb_ok(err);
}
