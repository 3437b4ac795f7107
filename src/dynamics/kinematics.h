/* Per-body kinematics step shared by fb_kinematics and the forward passes of ABA and RNEA,
 * which fuse it into their own loops so each body is visited once. */
#ifndef FB_DYNAMICS_KINEMATICS_H
#define FB_DYNAMICS_KINEMATICS_H

#include "featherbone/data.h"
#include "math/rows.h"
#include "math/spatial.h"
#include "model/joint.h"

/* Body i's XJ, X_up and X_0 from d->q (parent's X_0 must be current). The products go by rows
 * (math/rows.h: fb_xf_mul's bits), so ABA phase 1's AVX2 copy makes the same positions. */
static inline void fb_kin_body_pos(const fb_model* m, fb_data* d, int i) {
    fb_jcalc(m, i, d->q, &d->XJ[i]);
    /* XJ (E, r) after a pure shift (1, s) is (E, s + r) */
    d->X_up[i] = m->X_tree_rot[i]
                     ? fb_rm3_xf_mul(d->XJ[i], m->X_tree[i])
                     : (fb_xf){d->XJ[i].E, fb_v3_add(m->X_tree[i].r, d->XJ[i].r)};
    const int p = m->parent[i];
    d->X_0[i] = (p == 0) ? d->X_up[i] : fb_rm3_xf_mul(d->X_up[i], d->X_0[p]);
}

/* Body i's vJ, v and c from d->qd [RBDA T7.1] (X_up current, the parent's v done); cJ = 0
 * for our joints. */
static inline void fb_kin_body_vel(const fb_model* m, fb_data* d, int i) {
    const fb_mv vJ = fb_S_mul(m, i, d->qd);
    d->vJ[i] = vJ;
    d->v[i] = fb_mv_add(fb_xf_mv(d->X_up[i], d->v[m->parent[i]]), vJ);
    d->c[i] = fb_crm(d->v[i], vJ);
}

/* Body i's positions, then its velocities. */
static inline void fb_kin_body(const fb_model* m, fb_data* d, int i) {
    fb_kin_body_pos(m, d, i);
    fb_kin_body_vel(m, d, i);
}

/* The world body's entries, before a forward pass. */
static inline void fb_kin_world(fb_data* d) {
    d->X_0[0] = fb_xf_identity();
    d->v[0] = fb_mv_zero();
    d->c[0] = fb_mv_zero();
}

#endif /* FB_DYNAMICS_KINEMATICS_H */
