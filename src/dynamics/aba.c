/* The articulated-body algorithm [RBDA T7.1] in two phases (ARCHITECTURE.md):
 * phase 1 depends on the state only (aba_kernel_impl.h, compiled for two instruction sets),
 * phase 2 on the applied forces. Multi-DOF joints use U = I^A S (6 x n_i) and
 * D = S^T U (n_i x n_i). */
#include <assert.h>
#include <string.h>

#include "featherbone/dynamics.h"
#include "dynamics/kinematics.h"
#include "math/spatial.h"
#include "dynamics/aba.h"
#include "dynamics/aba_kernel.h"
#include "math/isa.h"
#include "model/joint.h"
#include "util/error.h"

/* Phase 1 (aba_kernel_impl.h) in the instruction set fb_isa_active() names; `positions`:
 * jcalc, X_up and X_0 are made too (else they are current). */
static fb_status phase1(const fb_model* m, fb_data* d, bool positions, fb_error* err) {
#if defined(FB_HAVE_AVX2_KERNELS)
    const int bad = fb_isa_active() == FB_ISA_AVX2 ? fb_aba_phase1_avx2(m, d, positions)
                                                   : fb_aba_phase1_base(m, d, positions);
#else
    const int bad = fb_aba_phase1_base(m, d, positions);
#endif
    if (bad) {
        d->stage = FB_STAGE_POS | FB_STAGE_VEL;
        return fb_fail(err, FB_ENUMERIC,
                       "t=%g s: body '%s' (%s joint): articulated inertia S^T I^A S is not "
                       "positive definite (massless subtree?)",
                       d->time, m->name[bad], fb_joint_type_name(m->jtype[bad]));
    }
    d->stage = FB_STAGE_POS | FB_STAGE_VEL | FB_STAGE_ABA1;
    return fb_ok(err);
}

fb_status fb_aba_phase1(const fb_model* m, fb_data* d, fb_error* err) {
    return phase1(m, d, true, err);
}

fb_status fb_aba_phase1_at_positions(const fb_model* m, fb_data* d, fb_error* err) {
    assert(d->stage & FB_STAGE_POS);
    return phase1(m, d, false, err);
}

void fb_aba_phase1_velocities(const fb_model* m, fb_data* d) {
    assert(d->stage & FB_STAGE_POS);
    /* root to leaves: the velocity terms of phase 1, as fb_aba_phase1 computes them */
    fb_kin_world(d);
    for (int i = 1; i < m->nbody; i++) {
        fb_kin_body_vel(m, d, i);
        d->pA_v[i] = fb_crf(d->v[i], fb_rbi_mv(m->I[i], d->v[i]));
    }
    d->stage = FB_STAGE_POS | FB_STAGE_VEL | FB_STAGE_ABA1;
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

/* The 3x3 D^-1 = G = (A + beta 1)^-1 of a ball joint as a matrix. */
static fb_m3 Dinv3(const fb_data* d, int i) {
    fb_m3 A;
    memcpy(&A.m[0][0], d->D_inv + 36 * i, sizeof A.m);
    return A;
}

/* Backward step for body i: the bias force handed to the parent,
 * p^a = p^A + I^a c + U D^-1 u [RBDA T7.1]. For an undamped ball joint I^a = [0 0; 0 K] with
 * K = C - B^T A^-1 B, which phase 1 keeps after A^-1 in D_inv (aba_kernel_impl.h), and
 * U D^-1 x = [x; B^T A^-1 x], so p^a = [p^A_n + u; p^A_f + K c_v + B^T A^-1 u]: the moment a
 * ball joint passes on is exactly its torque. Damped (D = A + beta 1, G = D^-1, A G =
 * 1 - beta G, I^a as fb_aba_ball_beta gives it), with y = G (u + beta c_w):
 * p^a = [p^A_n + u + beta (c_w - y + G B c_v); p^A_f + K c_v + B^T y]. Other joints do not keep
 * I^a: with I^a c = I^A c - U D^-1 U^T c, p^a = p^A + I^A c + U D^-1 (u - U^T c). */
static inline fb_fv bias_up(const fb_model* m, const fb_data* d, int i, fb_fv pA, const double* u,
                            const fb_mv* c) {
    const int n = m->jnv[i];
    if (m->jtype[i] == FB_JOINT_SPHERICAL) {
        const double beta = fb_aba_ball_beta(m, d, i);
        const fb_v3 uu = {u[0], u[1], u[2]};
        const fb_m3 G = Dinv3(d, i);
        if (beta > 0.0) {
            const fb_v3 cw = c ? c->w : fb_v3_zero(), cv = c ? c->v : fb_v3_zero();
            const fb_v3 y = fb_m3_mv(G, fb_v3_add(uu, fb_v3_scale(cw, beta)));
            fb_m3 K;
            memcpy(&K.m[0][0], d->D_inv + 36 * i + FB_ABA_BALL_K, sizeof K.m);
            const fb_v3 gbc = fb_m3_mv(G, fb_m3_mv(d->IA[i].B, cv));
            const fb_v3 pn = fb_v3_add(
                fb_v3_add(pA.n, uu), fb_v3_scale(fb_v3_add(fb_v3_sub(cw, y), gbc), beta));
            const fb_v3 pf =
                fb_v3_add(fb_v3_add(pA.f, fb_m3_mv(K, cv)), fb_m3_tr_mv(d->IA[i].B, y));
            return (fb_fv){pn, pf};
        }
        const fb_v3 y = fb_m3_mv(G, uu);
        fb_v3 pf = pA.f;
        if (c) {
            fb_m3 K;
            memcpy(&K.m[0][0], d->D_inv + 36 * i + FB_ABA_BALL_K, sizeof K.m);
            pf = fb_v3_add(pf, fb_m3_mv(K, c->v));
        }
        return (fb_fv){fb_v3_add(pA.n, uu), fb_v3_add(pf, fb_m3_tr_mv(d->IA[i].B, y))};
    }
    const fb_fv Ic = c ? fb_abi_mv(&d->IA[i], *c) : fb_fv_zero();
    double x[FB_JOINT_NV_MAX];
    for (int k = 0; k < n; k++) {
        x[k] = u[k] - fb_mv_dot_fv(m->S[m->v_adr[i] + k], Ic);
    }
    return fb_fv_add(fb_fv_add(pA, Ic), U_Dinv_mul(m, d, i, x));
}

/* Forward step for body i: qdd = D^-1 (u - U^T a') and a = a' + S qdd. For a ball joint
 * U^T a' = A a'_w + B a'_v, so qdd = A^-1 (u - B a'_v) - a'_w and a = [A^-1 (u - B a'_v); a'_v];
 * damped, G A = 1 - beta G gives qdd = G (u - B a'_v + beta a'_w) - a'_w. */
static inline fb_mv accel_down(const fb_model* m, const fb_data* d, int i, fb_mv a1,
                               const double* u, double* qdd) {
    const int k0 = m->v_adr[i], n = m->jnv[i];
    if (m->jtype[i] == FB_JOINT_SPHERICAL) {
        const double beta = fb_aba_ball_beta(m, d, i);
        fb_v3 t = fb_v3_sub(fb_v3_make(u[0], u[1], u[2]), fb_m3_mv(d->IA[i].B, a1.v));
        if (beta > 0.0) {
            t = fb_v3_add(t, fb_v3_scale(a1.w, beta));
        }
        const fb_v3 w = fb_m3_mv(Dinv3(d, i), t);
        qdd[0] = w.x - a1.w.x;
        qdd[1] = w.y - a1.w.y;
        qdd[2] = w.z - a1.w.z;
        return (fb_mv){w, a1.v};
    }
    const double* Dinv = d->D_inv + 36 * i;
    double x[FB_JOINT_NV_MAX];
    for (int k = 0; k < n; k++) {
        x[k] = u[k] - fb_mv_dot_fv(a1, d->U[k0 + k]);
    }
    fb_mv a = a1;
    for (int r = 0; r < n; r++) {
        double y = 0.0;
        for (int c = 0; c < n; c++) {
            y += Dinv[r * n + c] * x[c];
        }
        qdd[r] = y;
        a = fb_mv_axpy(a, y, m->S[k0 + r]);
    }
    return a;
}

/* The exported faces of the two steps (for the test-force responses); phase 2 calls the
 * inline ones directly so they stay inlined in the hot loop. */
fb_fv fb_aba_bias_up(const fb_model* m, const fb_data* d, int i, fb_fv pA, const double* u,
                     const fb_mv* c) {
    return bias_up(m, d, i, pA, u, c);
}

fb_mv fb_aba_accel_down(const fb_model* m, const fb_data* d, int i, fb_mv a1, const double* u,
                        double* qdd) {
    return accel_down(m, d, i, a1, u, qdd);
}

fb_fv fb_aba_response_up(const fb_model* m, const fb_data* d, int i, fb_fv pA, double* du,
                         double* y) {
    const int k0 = m->v_adr[i], n = m->jnv[i];
    fb_fv pa;
    if (m->jtype[i] == FB_JOINT_SPHERICAL) {
        /* S^T pA is the top half of pA; U D^-1 du = [du; B^T A^-1 du] (damped: A G du =
         * du - beta G du) */
        const fb_v3 uu = fb_v3_sub(fb_v3_make(du[0], du[1], du[2]), pA.n);
        const double* A = d->D_inv + 36 * i;
        const fb_v3 w = {A[0] * uu.x + A[1] * uu.y + A[2] * uu.z,
                         A[3] * uu.x + A[4] * uu.y + A[5] * uu.z,
                         A[6] * uu.x + A[7] * uu.y + A[8] * uu.z};
        du[0] = uu.x;
        du[1] = uu.y;
        du[2] = uu.z;
        y[0] = w.x;
        y[1] = w.y;
        y[2] = w.z;
        const double beta = fb_aba_ball_beta(m, d, i);
        fb_v3 pn = fb_v3_add(pA.n, uu);
        if (beta > 0.0) {
            pn = fb_v3_sub(pn, fb_v3_scale(w, beta));
        }
        const fb_v3 pf = fb_v3_add(pA.f, fb_m3_tr_mv(d->IA[i].B, w));
        if (pn.x == 0.0 && pn.y == 0.0 && pn.z == 0.0) {
            /* no test torque on the joint: the moment passed on is zero (exactly: pA.n + (0 -
             * pA.n)), and X^T [0; f] = [r x E^T f; E^T f] */
            const fb_v3 ff = fb_m3_tr_mv(d->X_up[i].E, pf);
            return (fb_fv){fb_v3_cross(d->X_up[i].r, ff), ff};
        }
        pa = (fb_fv){pn, pf};
    } else {
        const double* Dinv = d->D_inv + 36 * i;
        if (m->jtype[i] == FB_JOINT_FLOATING) {
            /* S = 1: S^T pA = [pA.n; pA.f] */
            const double p6[6] = {pA.n.x, pA.n.y, pA.n.z, pA.f.x, pA.f.y, pA.f.z};
            for (int k = 0; k < 6; k++) {
                du[k] -= p6[k];
            }
        } else {
            for (int k = 0; k < n; k++) {
                du[k] -= fb_mv_dot_fv(m->S[k0 + k], pA);
            }
        }
        if (m->parent[i] == 0) {
            /* nothing to hand on: D^-1 du alone */
            for (int r = 0; r < n; r++) {
                double v = 0.0;
                for (int c = 0; c < n; c++) {
                    v += Dinv[r * n + c] * du[c];
                }
                y[r] = v;
            }
            return fb_fv_zero();
        }
        pa = pA;
        for (int r = 0; r < n; r++) {
            double v = 0.0;
            for (int c = 0; c < n; c++) {
                v += Dinv[r * n + c] * du[c];
            }
            y[r] = v;
            pa = fb_fv_axpy(pa, v, d->U[k0 + r]);
        }
    }
    return fb_xf_tr_fv(d->X_up[i], pa);
}

int fb_aba_contact_path(const fb_model* m, const fb_data* d, int body, const fb_fv3* pA,
                        double* du, double* y, size_t stride, int* path) {
    assert(d->stage & FB_STAGE_ABA1);
#if defined(FB_HAVE_AVX2_KERNELS)
    if (fb_isa_active() == FB_ISA_AVX2) {
        return fb_aba_contact_path_avx2(m, d, body, pA, du, y, stride, path);
    }
#endif
    return fb_aba_contact_path_base(m, d, body, pA, du, y, stride, path);
}

void fb_aba_phase2(const fb_model* m, fb_data* d) {
    assert(d->stage & FB_STAGE_ABA1);
    /* bias forces: velocity products minus external forces (most bodies have none) */
    for (int i = 1; i < m->nbody; i++) {
        d->pA[i] = fb_fv_is_zero(d->f_ext[i])
                       ? d->pA_v[i]
                       : fb_fv_sub(d->pA_v[i], fb_xf_fv(d->X_0[i], d->f_ext[i]));
    }
    /* leaves to root: u, and the bias force handed to the parent */
    for (int i = m->nbody - 1; i >= 1; i--) {
        const int k0 = m->v_adr[i];
        fb_S_tr_mul(m, i, d->pA[i], d->u);
        const double b = m->damping[i];
        for (int k = 0; k < m->jnv[i]; k++) {
            d->u[k0 + k] = d->tau[k0 + k] - b * d->qd[k0 + k] - d->u[k0 + k];
        }
        const int p = m->parent[i];
        if (p != 0) {
            const fb_fv pa = bias_up(m, d, i, d->pA[i], d->u + k0, &d->c[i]);
            d->pA[p] = fb_fv_add(d->pA[p], fb_xf_tr_fv(d->X_up[i], pa));
        }
    }
    /* root to leaves: accelerations, gravity as the base acceleration -g [RBDA §5.3] */
    d->a[0] = fb_mv_make(fb_v3_zero(), fb_v3_neg(m->opt.gravity));
    for (int i = 1; i < m->nbody; i++) {
        const int k0 = m->v_adr[i];
        const fb_mv a1 = fb_mv_add(fb_xf_mv(d->X_up[i], d->a[m->parent[i]]), d->c[i]);
        d->a[i] = accel_down(m, d, i, a1, d->u + k0, d->qdd + k0);
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
