/* The reference placed on the ground: one vertical shift of the floating root over the whole
 * clip puts the lowest point of the character's shapes over all frames on the plane (the
 * clip's floor is the lowest its body goes); and the lowest point of a body's shapes, which
 * the end segments' turning (repair.c) also measures (docs/CONTROL.md, "The clip and the ground").
 * No paper: the geometry of spheres, capsules and boxes against a plane. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "featherbone/collision.h"
#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "control/ref_internal.h"
#include "math/vec3.h"

/* Signed height over the plane of body b's lowest shape point (m). Needs FB_STAGE_POS. */
double fb_lowest_point(const fb_model* m, const fb_data* d, int b, fb_plane g) {
    return fb_lowest_point_at(m, b, fb_body_rot(m, d, b), fb_point_pos(m, d, b, fb_v3_zero()),
                              g);
}

double fb_lowest_point_at(const fb_model* m, int b, fb_m3 R, fb_v3 p, fb_plane g) {
    double h = INFINITY;
    for (int k = 0; k < m->nshape; k++) {
        const fb_shape* s = &m->shape[k];
        if (s->body != b) {
            continue;
        }
        const double c = fb_v3_dot(g.n, fb_v3_add(p, fb_m3_mv(R, s->p0))) - g.offset;
        switch (s->type) {
        case FB_SHAPE_SPHERE:
            h = fmin(h, c - s->radius);
            break;
        case FB_SHAPE_CAPSULE:
            h = fmin(h, fmin(c, fb_v3_dot(g.n, fb_v3_add(p, fb_m3_mv(R, s->p1))) - g.offset) -
                            s->radius);
            break;
        case FB_SHAPE_BOX: {
            /* the plane's normal in the box's axes: the half extents along it */
            const fb_v3 nb = fb_m3_tr_mv(s->R, fb_m3_tr_mv(R, g.n));
            h = fmin(h, c - 0.5 * (fabs(nb.x) * s->size.x + fabs(nb.y) * s->size.y +
                                   fabs(nb.z) * s->size.z));
            break;
        }
        }
    }
    return h;
}

/* ---- the clip's floor ----------------------------------------------------------------------- */

/* m: a placement smaller than this is not worth a warning line */
#define PLACE_NOTE_MIN 1e-6

/* Where the clip's floor is. A capture's floor is where the subject stood, which the skeleton
 * fitted to the markers and the character's shapes only approximate: 131_01's shapes reach
 * 0.84 cm into the plane y = 0 as it kneels while its standing feet float 2-4 cm above it.
 * With a kinematic root such a pose cannot be followed at all: the contact pushes the limb
 * off it, the tracking rows give way at their torque limits. So the reference is placed, by
 * one vertical shift of the floating root over the whole clip, with the lowest point of the
 * character's shapes over all frames on the ground: the clip's floor is the lowest its body
 * goes. Every joint keeps its place relative to every other, at every frame; the metrics
 * compare the simulation with the reference so placed, and the simulation starts from it; the
 * shift is kept in place_shift, so that exports can put the clip back in the input's frame. A
 * model without a floating root on the world, or without shapes, is left where it is. */
void fb_ref_place_on_ground(const fb_model* m, fb_ref* r, double* qs, int ns, fb_data* d) {
    int root = -1;
    for (int b = 1; b < m->nbody && root < 0; b++) {
        root = m->parent[b] == 0 && m->jtype[b] == FB_JOINT_FLOATING ? b : -1;
    }
    if (root < 0 || m->nshape == 0) {
        return;
    }
    const fb_plane g = fb_ground_plane();
    double low = INFINITY, t_low = 0.0;
    int b_low = 0;
    for (int i = 0; i < r->nframe; i++) {
        memcpy(d->q, r->q + (size_t)i * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, d);
        for (int s = 0; s < m->nshape; s++) {
            const int b = m->shape[s].body;
            if (s > 0 && m->shape[s - 1].body == b) {
                continue; /* lowest_point took all of b's shapes */
            }
            const double h = fb_lowest_point(m, d, b, g);
            if (h < low) {
                low = h;
                b_low = b;
                t_low = i * r->dt;
            }
        }
    }
    /* the shift along the ground's normal, in the root joint's parent frame (E maps world
     * directions into it; a Z-up clip's root frame is turned) */
    const fb_v3 dp = fb_m3_mv(m->X_tree[root].E, fb_v3_scale(g.n, -low));
    r->place_shift = fb_v3_scale(g.n, -low);
    /* the frames, and the samples the first frame's velocity is extrapolated from */
    for (int i = 0; i < r->nframe + ns; i++) {
        double* p = (i < r->nframe ? r->q + (size_t)i * (size_t)m->nq
                                   : qs + (size_t)(i - r->nframe) * (size_t)m->nq) +
                    (size_t)m->q_adr[root];
        p[0] += dp.x;
        p[1] += dp.y;
        p[2] += dp.z;
    }
    r->place_shift = fb_v3_scale(g.n, -low);
    if (fabs(low) < PLACE_NOTE_MIN) {
        return; /* on the ground already (a segment just turned onto it) */
    }
    char text[FB_CLIP_WARN_LEN];
    snprintf(text, sizeof text,
             "placed %.2f cm %s: the lowest point of the shapes (%s at %.3f s) on the ground",
             100.0 * fabs(low), low < 0.0 ? "higher" : "lower", m->name[b_low], t_low);
    fb_ref_warn_first(r, text);
}
