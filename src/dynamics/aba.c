/* The articulated-body algorithm [RBDA T7.1] in two phases (ARCHITECTURE.md):
 * phase 1 depends on the state only, phase 2 on the applied forces. Multi-DOF joints use
 * U = I^A S (6 x n_i) and D = S^T U (n_i x n_i). */
#include <assert.h>

#include "featherbone/dynamics.h"
#include "math/dense.h"
#include "math/spatial.h"
#include "model/joint.h"
#include "util/error.h"

/* out = IA - sum_c W_c U_c^T with W = U D^-1: the articulated inertia body i passes to its
 * parent, I^a = I^A - U D^-1 U^T [RBDA T7.1]. Only blocks A, B, C are formed; the lower-left
 * block is B^T by symmetry. */
static void inertia_to_parent(const fb_model* m, const fb_data* d, int i, fb_abi* out) {
    const int k0 = m->v_adr[i], n = m->jnv[i];
    const double* Dinv = d->D_inv + 36 * i;
    *out = d->IA[i];
    for (int c = 0; c < n; c++) {
        fb_fv W = fb_fv_zero();
        for (int r = 0; r < n; r++) {
            W = fb_fv_axpy(W, Dinv[r * n + c], d->U[k0 + r]);
        }
        const fb_fv U = d->U[k0 + c];
        out->A = fb_m3_sub(out->A, fb_m3_outer(W.n, U.n));
        out->B = fb_m3_sub(out->B, fb_m3_outer(W.n, U.f));
        out->C = fb_m3_sub(out->C, fb_m3_outer(W.f, U.f));
    }
}

fb_status fb_aba_phase1(const fb_model* m, fb_data* d, fb_error* err) {
    fb_kinematics(m, d);
    /* every body starts as a rigid body with its velocity-product bias force */
    for (int i = 1; i < m->nbody; i++) {
        d->IA[i] = fb_abi_from_rbi(m->I[i]);
        d->pA_v[i] = fb_crf(d->v[i], fb_rbi_mv(m->I[i], d->v[i]));
    }
    /* leaves to root: U, D^-1, and the articulated inertia handed to the parent */
    for (int i = m->nbody - 1; i >= 1; i--) {
        const int k0 = m->v_adr[i], n = m->jnv[i];
        double D[36];
        for (int c = 0; c < n; c++) {
            d->U[k0 + c] = fb_abi_mv(&d->IA[i], m->S[k0 + c]);
        }
        for (int r = 0; r < n; r++) {
            for (int c = 0; c < n; c++) {
                D[r * n + c] = fb_mv_dot_fv(m->S[k0 + r], d->U[k0 + c]);
            }
        }
        if (n > 0 && !fb_spd_inverse(D, n, d->D_inv + 36 * i)) {
            d->stage &= ~(unsigned)FB_STAGE_ABA1;
            return fb_fail(err, FB_ENUMERIC,
                           "t=%g s: body '%s' (%s joint): articulated inertia S^T I^A S is not "
                           "positive definite (massless subtree?)",
                           d->time, m->name[i], fb_joint_type_name(m->jtype[i]));
        }
        const int p = m->parent[i];
        if (p != 0) {
            fb_abi Ia;
            inertia_to_parent(m, d, i, &Ia);
            fb_xf_tr_abi(&Ia, d->X_up[i], &Ia);
            d->IA[p] = fb_abi_add(d->IA[p], Ia);
        }
    }
    d->stage |= FB_STAGE_ABA1;
    return fb_ok(err);
}

/* U D^-1 x for body i, where x has n_i entries. */
static fb_fv U_Dinv_mul(const fb_model* m, const fb_data* d, int i, const double* x) {
    const int k0 = m->v_adr[i], n = m->jnv[i];
    const double* Dinv = d->D_inv + 36 * i;
    fb_fv out = fb_fv_zero();
    for (int r = 0; r < n; r++) {
        double y = 0.0;
        for (int c = 0; c < n; c++) {
            y += Dinv[r * n + c] * x[c];
        }
        out = fb_fv_axpy(out, y, d->U[k0 + r]);
    }
    return out;
}

void fb_aba_phase2(const fb_model* m, fb_data* d) {
    assert(d->stage & FB_STAGE_ABA1);
    /* bias forces: velocity products minus external forces, in body coordinates */
    for (int i = 1; i < m->nbody; i++) {
        d->pA[i] = fb_fv_sub(d->pA_v[i], fb_xf_fv(d->X_0[i], d->f_ext[i]));
    }
    /* leaves to root: u = tau - S^T p^A; p^a = p^A + I^a c + U D^-1 u handed to the parent.
     * I^a c is expanded as I^A c - U D^-1 U^T c, so I^a itself is never stored. */
    for (int i = m->nbody - 1; i >= 1; i--) {
        const int k0 = m->v_adr[i], n = m->jnv[i];
        double x[FB_JOINT_NV_MAX];
        fb_S_tr_mul(m, i, d->pA[i], d->u);
        for (int k = 0; k < n; k++) {
            d->u[k0 + k] = d->tau[k0 + k] - d->u[k0 + k];
        }
        const int p = m->parent[i];
        if (p == 0) {
            continue;
        }
        for (int k = 0; k < n; k++) {
            x[k] = d->u[k0 + k] - fb_mv_dot_fv(d->c[i], d->U[k0 + k]);
        }
        fb_fv pa = fb_fv_add(d->pA[i], fb_abi_mv(&d->IA[i], d->c[i]));
        pa = fb_fv_add(pa, U_Dinv_mul(m, d, i, x));
        d->pA[p] = fb_fv_add(d->pA[p], fb_xf_tr_fv(d->X_up[i], pa));
    }
    /* root to leaves: accelerations, gravity as the base acceleration -g [RBDA §5.3] */
    d->a[0] = fb_mv_make(fb_v3_zero(), fb_v3_neg(m->opt.gravity));
    for (int i = 1; i < m->nbody; i++) {
        const int k0 = m->v_adr[i], n = m->jnv[i];
        const double* Dinv = d->D_inv + 36 * i;
        const fb_mv a1 = fb_mv_add(fb_xf_mv(d->X_up[i], d->a[m->parent[i]]), d->c[i]);
        double x[FB_JOINT_NV_MAX];
        for (int k = 0; k < n; k++) {
            x[k] = d->u[k0 + k] - fb_mv_dot_fv(a1, d->U[k0 + k]);
        }
        for (int r = 0; r < n; r++) {
            double y = 0.0;
            for (int c = 0; c < n; c++) {
                y += Dinv[r * n + c] * x[c];
            }
            d->qdd[k0 + r] = y;
        }
        d->a[i] = fb_mv_add(a1, fb_S_mul(m, i, d->qdd));
    }
    d->stage |= FB_STAGE_ACC;
}

fb_status fb_aba(const fb_model* m, fb_data* d, fb_error* err) {
    const fb_status s = fb_aba_phase1(m, d, err);
    if (s != FB_OK) {
        return s;
    }
    fb_aba_phase2(m, d);
    return FB_OK;
}
