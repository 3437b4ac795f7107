/* The backward pass of a contact's test forces, three at once (see aba_kernel.h,
 * fb_aba_contact_path), included by aba_kernel_base.c and aba_kernel_avx2.c, which name the
 * entry point (FB_ABA_CONTACT) and choose the instruction set by their compile flags.
 *
 * The three forces are math/rows.h's 3x3 blocks with one input per lane: row k holds component
 * k of the three, so E^T f of all three is fb_rm3_tr_mul(E, F) and r x f is
 * fb_rm3_skew_mul(r, F). Each lane does, operation for operation, what fb_aba_response_up
 * (aba.c) does for one input without test torques, so each column gets the bits of that
 * single-input pass, in both compilations. No include guard: each includer compiles it once. */
#include <string.h>

#include "dynamics/aba_kernel.h"
#include "math/rows.h"
#include "math/spatial.h"

/* Three spatial forces as rows: n and f, row k component k, lane c input c. */
typedef struct fv3_rows {
    fb_rm3 n, f;
} fv3_rows;

/* Lane by lane a . b over three components, a the same 3-vector for every lane
 * (fb_v3_dot's sums). */
static inline fb_r3 dot_rows(fb_v3 a, fb_rm3 b) {
    return fb_r3_comb(a.x, a.y, a.z, b.r[0], b.r[1], b.r[2]);
}

/* Entry k of the three inputs' slices, as a row over the inputs (lane c at x + c stride). */
static inline void lanes_store(double* x, size_t stride, int k, fb_r3 v) {
    x[k] = fb_r3_at(v, 0);
    x[stride + (size_t)k] = fb_r3_at(v, 1);
    x[2 * stride + (size_t)k] = fb_r3_at(v, 2);
}

/* X^T f of the three (fb_xf_tr_fv's sums). */
static inline fv3_rows xf_tr_rows(const fb_xf* X, fv3_rows p) {
    const fb_rm3 E = fb_rm3_load(&X->E);
    const fb_rm3 ff = fb_rm3_tr_mul(E, p.f);
    return (fv3_rows){fb_rm3_add(fb_rm3_tr_mul(E, p.n), fb_rm3_skew_mul(X->r, ff)), ff};
}

/* Body i's step with du = 0 on entry (no test torques): du = -S^T pA, y = D^-1 du, and the
 * change handed to the parent, X_up^T (pA + U D^-1 du) (nothing when the parent is the
 * world). As fb_aba_response_up, with a ball joint's closed forms. */
static inline fv3_rows contact_up(const fb_model* m, const fb_data* d, int i, fv3_rows p,
                                  double* du, double* y, size_t stride) {
    const int k0 = m->v_adr[i], n = m->jnv[i];
    const fb_r3 zero = fb_r3_make(0.0, 0.0, 0.0);
    fv3_rows pa;
    if (m->jtype[i] == FB_JOINT_SPHERICAL) {
        /* uu = du - pA.n, w = A^-1 uu; p^a = [pA.n + uu; pA.f + B^T w] */
        const double* Ai = d->D_inv + 36 * i;
        const fb_rm3 A = {{fb_r3_load(Ai), fb_r3_load(Ai + 3), fb_r3_load(Ai + 6)}};
        fb_rm3 uu;
        for (int k = 0; k < 3; k++) {
            uu.r[k] = fb_r3_sub(zero, p.n.r[k]);
        }
        const fb_rm3 w = fb_rm3_mul(A, uu);
        for (int k = 0; k < 3; k++) {
            lanes_store(du + k0, stride, k, uu.r[k]);
            lanes_store(y + k0, stride, k, w.r[k]);
        }
        fb_rm3 pn = fb_rm3_add(p.n, uu);
        const double beta = fb_aba_ball_beta(m, d, i);
        if (beta > 0.0) {
            /* damped: U G du = [du - beta G du; B^T G du] */
            for (int k = 0; k < 3; k++) {
                pn.r[k] = fb_r3_sub(pn.r[k], fb_r3_scale(w.r[k], beta));
            }
        }
        const fb_rm3 pf = fb_rm3_add(p.f, fb_rm3_tr_mul(fb_rm3_load(&d->IA[i].B), w));
        bool moment = false; /* pA.n + (0 - pA.n) is zero unless pA.n is not finite (or damped) */
        for (int k = 0; k < 3; k++) {
            for (int c = 0; c < 3; c++) {
                moment = moment || fb_r3_at(pn.r[k], c) != 0.0;
            }
        }
        if (!moment) {
            /* a pure force: X^T [0; f] = [r x E^T f; E^T f] */
            const fb_rm3 ff = fb_rm3_tr_mul(fb_rm3_load(&d->X_up[i].E), pf);
            return (fv3_rows){fb_rm3_skew_mul(d->X_up[i].r, ff), ff};
        }
        pa = (fv3_rows){pn, pf};
    } else {
        const double* Dinv = d->D_inv + 36 * i;
        fb_r3 u[FB_JOINT_NV_MAX];
        if (m->jtype[i] == FB_JOINT_FLOATING) {
            /* S = 1: S^T pA = [pA.n; pA.f] */
            for (int k = 0; k < 3; k++) {
                u[k] = fb_r3_sub(zero, p.n.r[k]);
                u[k + 3] = fb_r3_sub(zero, p.f.r[k]);
            }
        } else {
            for (int k = 0; k < n; k++) {
                const fb_mv s = m->S[k0 + k];
                u[k] = fb_r3_sub(zero, fb_r3_add(dot_rows(s.w, p.n), dot_rows(s.v, p.f)));
            }
        }
        const bool root = m->parent[i] == 0;
        pa = p;
        for (int r = 0; r < n; r++) {
            fb_r3 v = zero;
            for (int c = 0; c < n; c++) {
                v = fb_r3_add(v, fb_r3_scale(u[c], Dinv[r * n + c]));
            }
            lanes_store(du + k0, stride, r, u[r]);
            lanes_store(y + k0, stride, r, v);
            if (!root) {
                const fb_fv U = d->U[k0 + r];
                pa.n.r[0] = fb_r3_add(pa.n.r[0], fb_r3_scale(v, U.n.x));
                pa.n.r[1] = fb_r3_add(pa.n.r[1], fb_r3_scale(v, U.n.y));
                pa.n.r[2] = fb_r3_add(pa.n.r[2], fb_r3_scale(v, U.n.z));
                pa.f.r[0] = fb_r3_add(pa.f.r[0], fb_r3_scale(v, U.f.x));
                pa.f.r[1] = fb_r3_add(pa.f.r[1], fb_r3_scale(v, U.f.y));
                pa.f.r[2] = fb_r3_add(pa.f.r[2], fb_r3_scale(v, U.f.z));
            }
        }
        if (root) {
            return (fv3_rows){{{zero, zero, zero}}, {{zero, zero, zero}}};
        }
    }
    return xf_tr_rows(&d->X_up[i], pa);
}

int FB_ABA_CONTACT(const fb_model* m, const fb_data* d, int body, const fb_fv3* pA, double* du,
                   double* y, size_t stride, int* path) {
    fv3_rows p;
    for (int k = 0; k < 3; k++) {
        p.n.r[k] = fb_r3_load(pA->n[k]);
        p.f.r[k] = fb_r3_load(pA->f[k]);
    }
    int len = 0;
    for (int i = body; i != 0; i = m->parent[i]) {
        path[len++] = i;
        p = contact_up(m, d, i, p, du, y, stride);
    }
    return len;
}
