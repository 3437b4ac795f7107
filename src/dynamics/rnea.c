/* Inverse dynamics: the recursive Newton-Euler algorithm [RBDA T5.1]. */
#include "featherbone/dynamics.h"
#include "dynamics/kinematics.h"
#include "math/spatial.h"

void fb_rnea(const fb_model* m, fb_data* d, const double* qdd, double* tau) {
    /* root to leaves: kinematics, accelerations (gravity as the base acceleration -g) and the
     * net force each body needs, less the external force it receives */
    fb_kin_world(d);
    d->a[0] = fb_mv_make(fb_v3_zero(), fb_v3_neg(m->opt.gravity));
    for (int i = 1; i < m->nbody; i++) {
        fb_kin_body(m, d, i);
        fb_mv a = fb_mv_add(fb_xf_mv(d->X_up[i], d->a[m->parent[i]]), d->c[i]);
        if (qdd) {
            a = fb_mv_add(a, fb_S_mul(m, i, qdd));
        }
        d->a[i] = a;
        const fb_fv Iv = fb_rbi_mv(m->I[i], d->v[i]);
        d->f[i] = fb_fv_add(fb_rbi_mv(m->I[i], a), fb_crf(d->v[i], Iv));
        if (!fb_fv_is_zero(d->f_ext[i])) { /* most bodies have none */
            d->f[i] = fb_fv_sub(d->f[i], fb_xf_fv(d->X_0[i], d->f_ext[i]));
        }
    }
    /* leaves to root: joint forces, and each body's force handed on to its parent */
    for (int i = m->nbody - 1; i >= 1; i--) {
        fb_S_tr_mul(m, i, d->f[i], tau);
        const double b = m->damping[i]; /* the passive damping the joint torque overcomes */
        for (int k = m->v_adr[i]; b != 0.0 && k < m->v_adr[i] + m->jnv[i]; k++) {
            tau[k] += b * d->qd[k];
        }
        const int p = m->parent[i];
        if (p != 0) {
            d->f[p] = fb_fv_add(d->f[p], fb_xf_tr_fv(d->X_up[i], d->f[i]));
        }
    }
    d->stage = FB_STAGE_POS | FB_STAGE_VEL | FB_STAGE_ACC;
}

void fb_bias(const fb_model* m, fb_data* d, double* C) {
    fb_rnea(m, d, NULL, C);
}
