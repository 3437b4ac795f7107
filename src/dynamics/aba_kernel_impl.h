/* ABA phase 1 [RBDA T7.1], included by aba_kernel_base.c and aba_kernel_avx2.c, which name the
 * entry point (FB_ABA_KERNEL) and choose the instruction set by their compile flags; see
 * aba_kernel.h. The 3x3 products go through math/rows.h (whole rows, 256-bit vectors in the
 * AVX2 copy); the rest is the scalar spatial algebra. Multi-DOF joints use U = I^A S
 * (6 x n_i) and D = S^T U (n_i x n_i). No include guard: each includer compiles it once. */
#include <math.h>
#include <string.h>

#include "dynamics/aba_kernel.h"
#include "dynamics/kinematics.h"
#include "math/dense.h"
#include "math/rows.h"
#include "math/spatial.h"
#include "model/joint.h"

/* The articulated inertia Ia that body i hands on, added to its parent's I^A in the parent's
 * coordinates: IA_p += X_up^T Ia X_up. */
static inline void hand_on(const fb_model* m, fb_data* d, int i, fb_rabi Ia) {
    fb_rabi_acc(&d->IA[m->parent[i]], fb_rabi_xf_tr(d->X_up[i], Ia));
}

/* The generic case of joint_inertia (prismatic joints, and fixed ones): U = I^A S, D = S^T U (plus
 * dt b on the diagonal: implicit damping, the joint's torque -b (qd + dt qdd)), and the
 * articulated inertia handed to the parent, I^a = I^A - U D^-1 U^T [RBDA T7.1], formed as
 * I^A - sum_c W_c U_c^T with W = U D^-1. */
static bool generic_joint_inertia(const fb_model* m, fb_data* d, int i) {
    const int k0 = m->v_adr[i], n = m->jnv[i];
    double* Dinv = d->D_inv + 36 * i;
    double D[36];
    for (int c = 0; c < n; c++) {
        d->U[k0 + c] = fb_abi_mv(&d->IA[i], m->S[k0 + c]);
    }
    const double extra = d->damping_dt * m->damping[i];
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < n; c++) {
            D[r * n + c] = fb_mv_dot_fv(m->S[k0 + r], d->U[k0 + c]) + (r == c ? extra : 0.0);
        }
    }
    if (n > 0 && !fb_spd_inverse(D, n, Dinv)) {
        return false;
    }
    if (m->parent[i] == 0) {
        return true;
    }
    fb_abi Ia = d->IA[i];
    for (int c = 0; c < n; c++) {
        fb_fv W = fb_fv_zero();
        for (int r = 0; r < n; r++) {
            W = fb_fv_axpy(W, Dinv[r * n + c], d->U[k0 + r]);
        }
        const fb_fv U = d->U[k0 + c];
        Ia.A = fb_m3_sub(Ia.A, fb_m3_outer(W.n, U.n));
        Ia.B = fb_m3_sub(Ia.B, fb_m3_outer(W.n, U.f));
        Ia.C = fb_m3_sub(Ia.C, fb_m3_outer(W.f, U.f));
    }
    hand_on(m, d, i, fb_rabi_load(&Ia));
    return true;
}

/* A revolute joint, S = [s; 0] with s its unit axis in body coordinates: U = [A s; B^T s]
 * (A s taken as A^T s, the same for the symmetric A: a row combination), D = s . A s (+ dt b),
 * and I^a = I^A - W U^T with W = U / D, a rank-one update row by row. */
static bool hinge_inertia(const fb_model* m, fb_data* d, int i) {
    const int k0 = m->v_adr[i];
    const fb_v3 s = m->S[k0].w;
    const fb_rabi IA = fb_rabi_load(&d->IA[i]);
    const fb_r3 un = fb_rm3_tr_mv(IA.A, s), uf = fb_rm3_tr_mv(IA.B, s);
    d->U[k0] = (fb_fv){fb_r3_to_v3(un), fb_r3_to_v3(uf)};
    const double D = fb_v3_dot(s, d->U[k0].n) + d->damping_dt * m->damping[i];
    if (!(D > 0.0) || !isfinite(D)) {
        return false;
    }
    const double Dinv = 1.0 / D;
    d->D_inv[36 * i] = Dinv;
    if (m->parent[i] == 0) {
        return true;
    }
    const fb_r3 wn = fb_r3_scale(un, Dinv), wf = fb_r3_scale(uf, Dinv);
    fb_rabi Ia;
    for (int r = 0; r < 3; r++) {
        Ia.A.r[r] = fb_r3_sub(IA.A.r[r], fb_r3_scale(un, fb_r3_at(wn, r)));
        Ia.B.r[r] = fb_r3_sub(IA.B.r[r], fb_r3_scale(uf, fb_r3_at(wn, r)));
        Ia.C.r[r] = fb_r3_sub(IA.C.r[r], fb_r3_scale(uf, fb_r3_at(wf, r)));
    }
    hand_on(m, d, i, Ia);
    return true;
}

/* U, D^-1 and the contribution to the parent's I^A for body i's joint. Ball and floating
 * joints, whose S is made of unit columns, get closed forms of the generic case:
 * - ball, S = [1; 0]: U = [A; B^T], D = A, and I^a = I^A - U A^-1 U^T = [0 0; 0 C - B^T A^-1 B];
 * - floating, S = 1: U = D = I^A and I^a = 0, so nothing reaches the parent;
 * and hinges the rank-one form of hinge_inertia. Returns false when D is not positive
 * definite. */
static bool joint_inertia(const fb_model* m, fb_data* d, int i) {
    const int k0 = m->v_adr[i];
    const fb_abi* IA = &d->IA[i];
    double* Dinv = d->D_inv + 36 * i;
    switch (m->jtype[i]) {
    case FB_JOINT_SPHERICAL: {
        for (int c = 0; c < 3; c++) {
            d->U[k0 + c] = (fb_fv){fb_m3_col(IA->A, c), fb_m3_row(IA->B, c)};
        }
        /* D = A + beta 1 (implicit damping, fb_aba_ball_beta), G = D^-1 */
        const double beta = fb_aba_ball_beta(m, d, i);
        fb_m3 D = IA->A;
        for (int c = 0; c < 3; c++) {
            D.m[c][c] += beta;
        }
        if (!fb_spd3_inverse(&D.m[0][0], Dinv)) {
            return false;
        }
        if (m->parent[i] != 0) {
            /* K = C - B^T (G B) */
            const fb_rm3 B = fb_rm3_load(&IA->B);
            const fb_rm3 G = {{fb_r3_load(Dinv), fb_r3_load(Dinv + 3), fb_r3_load(Dinv + 6)}};
            const fb_rm3 W = fb_rm3_mul(G, B);
            const fb_rm3 K = fb_rm3_sub(fb_rm3_load(&IA->C), fb_rm3_tr_mul(B, W));
            fb_m3 Kout;
            fb_rm3_store(&Kout, K);
            memcpy(Dinv + FB_ABA_BALL_K, &Kout.m[0][0], sizeof Kout.m);
            if (beta == 0.0) {
                fb_rabi_acc(&d->IA[m->parent[i]], fb_rabi_xf_tr_lin(d->X_up[i], K));
            } else {
                /* I^a = [beta (1 - beta G), beta G B; beta B^T G, K] */
                fb_rabi Ia = {.C = K};
                for (int r = 0; r < 3; r++) {
                    Ia.A.r[r] = fb_r3_scale(G.r[r], -beta * beta);
                    Ia.B.r[r] = fb_r3_scale(W.r[r], beta);
                }
                Ia.A.r[0] = fb_r3_add(Ia.A.r[0], fb_r3_make(beta, 0.0, 0.0));
                Ia.A.r[1] = fb_r3_add(Ia.A.r[1], fb_r3_make(0.0, beta, 0.0));
                Ia.A.r[2] = fb_r3_add(Ia.A.r[2], fb_r3_make(0.0, 0.0, beta));
                hand_on(m, d, i, Ia);
            }
        }
        return true;
    }
    case FB_JOINT_FLOATING:
        for (int c = 0; c < 6; c++) {
            d->U[k0 + c] = fb_abi_mv(IA, m->S[k0 + c]);
        }
        return fb_abi_inverse(IA, Dinv);
    case FB_JOINT_REVOLUTE:
        return hinge_inertia(m, d, i);
    case FB_JOINT_FIXED:
    case FB_JOINT_PRISMATIC:
        break;
    }
    return generic_joint_inertia(m, d, i);
}

int FB_ABA_KERNEL(const fb_model* m, fb_data* d, bool positions) {
    /* root to leaves: kinematics; every body starts as a rigid body with its
     * velocity-product bias force */
    fb_kin_world(d);
    for (int i = 1; i < m->nbody; i++) {
        if (positions) {
            fb_kin_body_pos(m, d, i);
        }
        fb_kin_body_vel(m, d, i);
        d->IA[i] = fb_abi_from_rbi(m->I[i]);
        d->pA_v[i] = fb_crf(d->v[i], fb_rbi_mv(m->I[i], d->v[i]));
    }
    /* leaves to root: U, D^-1, and the articulated inertia handed to the parent */
    for (int i = m->nbody - 1; i >= 1; i--) {
        if (!joint_inertia(m, d, i)) {
            return i;
        }
    }
    return 0;
}
