/* 3x3 matrices as three rows, for the kernels compiled twice (baseline x86-64 and AVX2, see
 * math/isa.h). A product is three row combinations, row_i(A B) = sum_k A_ik row_k(B): whole-row
 * multiplies by one entry and adds, which map onto 256-bit vectors.
 *
 * In a translation unit compiled with AVX2 (__AVX2__) a row is one 256-bit vector: lanes x, y,
 * z and a fourth that is never stored (zero from the loads). Elsewhere it is three doubles.
 * Every operation is lane by lane, and each lane sees the same IEEE operations in the same order
 * in both forms (-ffp-contract=off, no reassociation, and -mavx2 does not enable FMA), so the
 * two compilations give the same bits; each product also gives the same bits as its scalar
 * counterpart in vec3.h (fb_m3_mul, fb_m3_tr_mul, fb_m3_tr_mv, fb_v3_cross).
 *
 *   fb_r3_load, fb_r3_store, fb_r3_v3, fb_r3_to_v3   3 doubles or an fb_v3 <-> a row
 *   fb_r3_add, fb_r3_sub, fb_r3_scale (a s), fb_r3_at (lane k), fb_r3_cross (a x b)
 *   fb_rm3_load, fb_rm3_store, fb_rm3_acc (acc += A)
 *   fb_rm3_add, fb_rm3_sub, fb_rm3_transpose
 *   fb_rm3_mul (A B), fb_rm3_tr_mul (A^T B), fb_rm3_tr_congr (E^T A E, as (E^T A) E)
 *   fb_rm3_tr_mv (A^T x as a row), fb_rm3_skew_mul (rx A), fb_rm3_mul_skew (A rx)
 *   fb_rm3_xf_mul (fb_xf_mul's product: X2 X1)
 *   fb_rabi_load, fb_rabi_store, fb_rabi_acc   an articulated inertia's blocks as rows
 *   fb_rabi_xf_tr (X^T IA X), fb_rabi_xf_tr_lin (X^T [0 0; 0 K] X)
 */
#ifndef FB_MATH_ROWS_H
#define FB_MATH_ROWS_H

#include "featherbone/types.h"
#include "vec3.h"


#if defined(__AVX2__)

typedef double fb_r3 __attribute__((vector_size(32)));
typedef long long fb_r3_mask __attribute__((vector_size(32)));

static inline fb_r3 fb_r3_make(double x, double y, double z) {
    return (fb_r3){x, y, z, 0.0};
}
static inline double fb_r3_at(fb_r3 a, int k) {
    return a[k];
}
static inline fb_r3 fb_r3_add(fb_r3 a, fb_r3 b) {
    return a + b;
}
static inline fb_r3 fb_r3_sub(fb_r3 a, fb_r3 b) {
    return a - b;
}
static inline fb_r3 fb_r3_scale(fb_r3 a, double s) {
    return a * s;
}
/* a x b = a_yzx b_zxy - a_zxy b_yzx, lane by lane as fb_v3_cross */
static inline fb_r3 fb_r3_cross(fb_r3 a, fb_r3 b) {
    const fb_r3_mask yzx = {1, 2, 0, 3}, zxy = {2, 0, 1, 3};
    return __builtin_shuffle(a, yzx) * __builtin_shuffle(b, zxy) -
           __builtin_shuffle(a, zxy) * __builtin_shuffle(b, yzx);
}

#else

typedef struct fb_r3 {
    double v[3];
} fb_r3;

static inline fb_r3 fb_r3_make(double x, double y, double z) {
    return (fb_r3){{x, y, z}};
}
static inline double fb_r3_at(fb_r3 a, int k) {
    return a.v[k];
}
static inline fb_r3 fb_r3_add(fb_r3 a, fb_r3 b) {
    return (fb_r3){{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2]}};
}
static inline fb_r3 fb_r3_sub(fb_r3 a, fb_r3 b) {
    return (fb_r3){{a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2]}};
}
static inline fb_r3 fb_r3_scale(fb_r3 a, double s) {
    return (fb_r3){{a.v[0] * s, a.v[1] * s, a.v[2] * s}};
}
static inline fb_r3 fb_r3_cross(fb_r3 a, fb_r3 b) {
    return (fb_r3){{a.v[1] * b.v[2] - a.v[2] * b.v[1], a.v[2] * b.v[0] - a.v[0] * b.v[2],
                     a.v[0] * b.v[1] - a.v[1] * b.v[0]}};
}

#endif

static inline fb_r3 fb_r3_load(const double* p) {
    return fb_r3_make(p[0], p[1], p[2]);
}
static inline void fb_r3_store(double* p, fb_r3 a) {
    p[0] = fb_r3_at(a, 0);
    p[1] = fb_r3_at(a, 1);
    p[2] = fb_r3_at(a, 2);
}
static inline fb_r3 fb_r3_v3(fb_v3 a) {
    return fb_r3_make(a.x, a.y, a.z);
}
static inline fb_v3 fb_r3_to_v3(fb_r3 a) {
    return (fb_v3){fb_r3_at(a, 0), fb_r3_at(a, 1), fb_r3_at(a, 2)};
}
/* (a0 b0 + a1 b1) + a2 b2 for the rows b: the combination every product below is made of */
static inline fb_r3 fb_r3_comb(double a0, double a1, double a2, fb_r3 b0, fb_r3 b1,
                                 fb_r3 b2) {
    return fb_r3_add(fb_r3_add(fb_r3_scale(b0, a0), fb_r3_scale(b1, a1)),
                      fb_r3_scale(b2, a2));
}

/* A 3x3 matrix as rows. */
typedef struct fb_rm3 {
    fb_r3 r[3];
} fb_rm3;

static inline fb_rm3 fb_rm3_load(const fb_m3* A) {
    return (fb_rm3){{fb_r3_load(A->m[0]), fb_r3_load(A->m[1]), fb_r3_load(A->m[2])}};
}
static inline void fb_rm3_store(fb_m3* out, fb_rm3 A) {
    for (int i = 0; i < 3; i++) {
        fb_r3_store(out->m[i], A.r[i]);
    }
}
/* acc += A */
static inline void fb_rm3_acc(fb_m3* acc, fb_rm3 A) {
    for (int i = 0; i < 3; i++) {
        fb_r3_store(acc->m[i], fb_r3_add(fb_r3_load(acc->m[i]), A.r[i]));
    }
}
static inline fb_rm3 fb_rm3_add(fb_rm3 A, fb_rm3 B) {
    return (fb_rm3){{fb_r3_add(A.r[0], B.r[0]), fb_r3_add(A.r[1], B.r[1]),
                     fb_r3_add(A.r[2], B.r[2])}};
}
static inline fb_rm3 fb_rm3_sub(fb_rm3 A, fb_rm3 B) {
    return (fb_rm3){{fb_r3_sub(A.r[0], B.r[0]), fb_r3_sub(A.r[1], B.r[1]),
                     fb_r3_sub(A.r[2], B.r[2])}};
}
static inline fb_rm3 fb_rm3_transpose(fb_rm3 A) {
#if defined(__AVX2__)
    const fb_r3 z = {0.0, 0.0, 0.0, 0.0};
    const fb_r3_mask lo = {0, 4, 2, 6}, hi = {1, 5, 3, 7}, low2 = {0, 1, 4, 5},
                      high2 = {2, 3, 6, 7};
    const fb_r3 ab_lo = __builtin_shuffle(A.r[0], A.r[1], lo); /* a0 b0 a2 b2 */
    const fb_r3 ab_hi = __builtin_shuffle(A.r[0], A.r[1], hi); /* a1 b1 a3 b3 */
    const fb_r3 cz_lo = __builtin_shuffle(A.r[2], z, lo);      /* c0 0 c2 0 */
    const fb_r3 cz_hi = __builtin_shuffle(A.r[2], z, hi);      /* c1 0 c3 0 */
    return (fb_rm3){{__builtin_shuffle(ab_lo, cz_lo, low2), __builtin_shuffle(ab_hi, cz_hi, low2),
                     __builtin_shuffle(ab_lo, cz_lo, high2)}};
#else
    fb_rm3 T;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            T.r[i].v[j] = A.r[j].v[i];
        }
    }
    return T;
#endif
}
/* A B: row i = sum_k A_ik row_k(B) (fb_m3_mul's sums) */
static inline fb_rm3 fb_rm3_mul(fb_rm3 A, fb_rm3 B) {
    fb_rm3 C;
    for (int i = 0; i < 3; i++) {
        C.r[i] = fb_r3_comb(fb_r3_at(A.r[i], 0), fb_r3_at(A.r[i], 1), fb_r3_at(A.r[i], 2),
                             B.r[0], B.r[1], B.r[2]);
    }
    return C;
}
/* A^T B: row i = sum_k A_ki row_k(B) (fb_m3_tr_mul's sums) */
static inline fb_rm3 fb_rm3_tr_mul(fb_rm3 A, fb_rm3 B) {
    fb_rm3 C;
    for (int i = 0; i < 3; i++) {
        C.r[i] = fb_r3_comb(fb_r3_at(A.r[0], i), fb_r3_at(A.r[1], i), fb_r3_at(A.r[2], i),
                             B.r[0], B.r[1], B.r[2]);
    }
    return C;
}
/* E^T A E, as (E^T A) E (fb_m3_tr_congr) */
static inline fb_rm3 fb_rm3_tr_congr(fb_rm3 E, fb_rm3 A) {
    return fb_rm3_mul(fb_rm3_tr_mul(E, A), E);
}
/* A^T x as a row: sum_k x_k row_k(A) (fb_m3_tr_mv) */
static inline fb_r3 fb_rm3_tr_mv(fb_rm3 A, fb_v3 x) {
    return fb_r3_comb(x.x, x.y, x.z, A.r[0], A.r[1], A.r[2]);
}
/* rx A: column j becomes r x col_j(A), so row 0 = r_y row_2 - r_z row_1 and so on */
static inline fb_rm3 fb_rm3_skew_mul(fb_v3 r, fb_rm3 A) {
    return (fb_rm3){{fb_r3_sub(fb_r3_scale(A.r[2], r.y), fb_r3_scale(A.r[1], r.z)),
                     fb_r3_sub(fb_r3_scale(A.r[0], r.z), fb_r3_scale(A.r[2], r.x)),
                     fb_r3_sub(fb_r3_scale(A.r[1], r.x), fb_r3_scale(A.r[0], r.y))}};
}
/* A rx: row i becomes row_i(A) x r */
static inline fb_rm3 fb_rm3_mul_skew(fb_rm3 A, fb_v3 r) {
    const fb_r3 rr = fb_r3_v3(r);
    return (fb_rm3){{fb_r3_cross(A.r[0], rr), fb_r3_cross(A.r[1], rr),
                     fb_r3_cross(A.r[2], rr)}};
}
/* X2 X1 = (E2 E1, r1 + E1^T r2), as fb_xf_mul computes it. Always inlined in the baseline
 * compilations (GCC otherwise leaves a call in kinematics.c's loop, where fb_xf_mul was
 * inlined); in the AVX2 copy GCC's own choice measured 5 % faster on ABA. */
#if defined(__AVX2__)
static inline fb_xf fb_rm3_xf_mul(fb_xf X2, fb_xf X1) {
#else
static inline __attribute__((always_inline)) fb_xf fb_rm3_xf_mul(fb_xf X2, fb_xf X1) {
#endif
    const fb_rm3 E1 = fb_rm3_load(&X1.E);
    fb_xf out;
    fb_rm3_store(&out.E, fb_rm3_mul(fb_rm3_load(&X2.E), E1));
    out.r = fb_v3_add(X1.r, fb_r3_to_v3(fb_rm3_tr_mv(E1, X2.r)));
    return out;
}

/* An articulated inertia [A B; B^T C] as rows of its blocks. */
typedef struct fb_rabi {
    fb_rm3 A, B, C;
} fb_rabi;

static inline fb_rabi fb_rabi_load(const fb_abi* I) {
    return (fb_rabi){fb_rm3_load(&I->A), fb_rm3_load(&I->B), fb_rm3_load(&I->C)};
}
static inline void fb_rabi_store(fb_abi* out, fb_rabi I) {
    fb_rm3_store(&out->A, I.A);
    fb_rm3_store(&out->B, I.B);
    fb_rm3_store(&out->C, I.C);
}
/* acc += I */
static inline void fb_rabi_acc(fb_abi* acc, fb_rabi I) {
    fb_rm3_acc(&acc->A, I.A);
    fb_rm3_acc(&acc->B, I.B);
    fb_rm3_acc(&acc->C, I.C);
}
/* X^T IA X: IA given in B coordinates, expressed in A coordinates. X = rot(E) xlt(r), so the
 * rotation gives E^T A E, E^T B E, E^T C E and the translation xlt = [1 0; -rx 1] then gives
 * C'' = C', B'' = B' + rx C', A'' = A' + rx B''^T - B' rx. */
static inline fb_rabi fb_rabi_xf_tr(fb_xf X, fb_rabi I) {
    const fb_rm3 E = fb_rm3_load(&X.E);
    const fb_rm3 A = fb_rm3_tr_congr(E, I.A), B = fb_rm3_tr_congr(E, I.B),
                 C = fb_rm3_tr_congr(E, I.C);
    const fb_rm3 B2 = fb_rm3_add(B, fb_rm3_skew_mul(X.r, C));
    const fb_rm3 A2 = fb_rm3_sub(fb_rm3_add(A, fb_rm3_skew_mul(X.r, fb_rm3_transpose(B2))),
                                 fb_rm3_mul_skew(B, X.r));
    return (fb_rabi){A2, B2, C};
}
/* The A = B = 0 case: C' = E^T K E, B'' = rx C', A'' = rx B''^T. The articulated inertia a
 * ball joint hands to its parent has only this lower-right block. */
static inline fb_rabi fb_rabi_xf_tr_lin(fb_xf X, fb_rm3 K) {
    const fb_rm3 C = fb_rm3_tr_congr(fb_rm3_load(&X.E), K);
    const fb_rm3 B = fb_rm3_skew_mul(X.r, C);
    return (fb_rabi){fb_rm3_skew_mul(X.r, fb_rm3_transpose(B)), B, C};
}

#endif /* FB_MATH_ROWS_H */
