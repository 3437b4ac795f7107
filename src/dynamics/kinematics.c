/* Forward kinematics, body velocities, and point position / velocity / acceleration. */
#include <assert.h>

#include "featherbone/dynamics.h"
#include "math/spatial.h"
#include "model/joint.h"

/* Root to leaves: joint transforms, parent -> body and world -> body transforms. */
static void position_pass(const fb_model* m, fb_data* d) {
    d->X_0[0] = fb_xf_identity();
    for (int i = 1; i < m->nbody; i++) {
        fb_jcalc(m, i, d->q, &d->XJ[i]);
        /* XJ (E, r) after a pure shift (1, s) is (E, s + r) */
        d->X_up[i] = m->X_tree_rot[i]
                         ? fb_xf_mul(d->XJ[i], m->X_tree[i])
                         : (fb_xf){d->XJ[i].E, fb_v3_add(m->X_tree[i].r, d->XJ[i].r)};
        const int p = m->parent[i];
        d->X_0[i] = (p == 0) ? d->X_up[i] : fb_xf_mul(d->X_up[i], d->X_0[p]);
    }
}

void fb_kinematics_pos(const fb_model* m, fb_data* d) {
    position_pass(m, d);
    d->stage = FB_STAGE_POS;
}

void fb_kinematics(const fb_model* m, fb_data* d) {
    position_pass(m, d);
    /* root to leaves: body velocity and velocity-product acceleration [RBDA T7.1]; cJ = 0 */
    d->v[0] = fb_mv_zero();
    d->c[0] = fb_mv_zero();
    for (int i = 1; i < m->nbody; i++) {
        const fb_mv vJ = fb_S_mul(m, i, d->qd);
        d->vJ[i] = vJ;
        d->v[i] = fb_mv_add(fb_xf_mv(d->X_up[i], d->v[m->parent[i]]), vJ);
        d->c[i] = fb_crm(d->v[i], vJ);
    }
    d->stage = FB_STAGE_POS | FB_STAGE_VEL;
}

fb_m3 fb_body_rot(const fb_model* m, const fb_data* d, int i) {
    (void)m;
    assert(d->stage & FB_STAGE_POS);
    return fb_m3_transpose(d->X_0[i].E);
}

fb_v3 fb_point_pos(const fb_model* m, const fb_data* d, int i, fb_v3 p) {
    (void)m;
    assert(d->stage & FB_STAGE_POS);
    return fb_xf_inv_point(d->X_0[i], p);
}

fb_v3 fb_point_vel(const fb_model* m, const fb_data* d, int i, fb_v3 p) {
    (void)m;
    assert(d->stage & FB_STAGE_VEL);
    const fb_mv v = d->v[i];
    return fb_m3_tr_mv(d->X_0[i].E, fb_v3_add(v.v, fb_v3_cross(v.w, p)));
}

fb_v3 fb_point_acc(const fb_model* m, const fb_data* d, int i, fb_v3 p) {
    assert(d->stage & FB_STAGE_ACC);
    const fb_xf X = d->X_0[i];
    /* d->a carries the fictitious base acceleration -g: add it back, in body coordinates */
    const fb_v3 a_lin = fb_v3_add(d->a[i].v, fb_m3_mv(X.E, m->opt.gravity));
    const fb_v3 w = d->v[i].w;
    const fb_v3 vp = fb_v3_add(d->v[i].v, fb_v3_cross(w, p));
    /* classical acceleration of a body-fixed point from the spatial one [RBDA eq 2.42] */
    const fb_v3 acc = fb_v3_add(fb_v3_add(a_lin, fb_v3_cross(d->a[i].w, p)), fb_v3_cross(w, vp));
    return fb_m3_tr_mv(X.E, acc);
}
