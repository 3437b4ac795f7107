/* Forward kinematics, body velocities (the first loop of [RBDA T5.1]), and point position /
 * velocity / acceleration (the classical acceleration of a point [RBDA eq 2.42]). */
#include <assert.h>

#include "featherbone/dynamics.h"
#include "dynamics/kinematics.h"
#include "math/spatial.h"

void fb_kinematics_pos(const fb_model* m, fb_data* d) {
    fb_kin_world(d);
    for (int i = 1; i < m->nbody; i++) {
        fb_kin_body_pos(m, d, i);
    }
    d->stage = FB_STAGE_POS;
}

void fb_kinematics(const fb_model* m, fb_data* d) {
    fb_kin_world(d);
    for (int i = 1; i < m->nbody; i++) {
        fb_kin_body(m, d, i);
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
