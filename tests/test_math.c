/* Spatial algebra, quaternions and dense kernels, each checked against its definition written
 * out as plain 6x6 / 3x3 matrices (RBDA eqs 2.24-2.32, Table 2.8). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "math/dense.h"
#include "math/detmath.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "support.h"

/* Property tests run this many random cases. */
#define NCASE 200
/* Agreement expected between two ways of computing the same product in double. */
#define TOL 1e-12

typedef double mat6[6][6];

/* The 6x6 Plücker matrix [E 0; -E rx E] of X. */
static void xf_to_6(fb_xf X, mat6 out) {
    const fb_m3 mErx = fb_m3_scale(fb_m3_mul(X.E, fb_m3_skew(X.r)), -1.0);
    memset(out, 0, sizeof(mat6));
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            out[r][c] = X.E.m[r][c];
            out[r + 3][c + 3] = X.E.m[r][c];
            out[r + 3][c] = mErx.m[r][c];
        }
    }
}

static void mul6(mat6 A, const double* x, double* y) {
    for (int r = 0; r < 6; r++) {
        y[r] = 0.0;
        for (int c = 0; c < 6; c++) {
            y[r] += A[r][c] * x[c];
        }
    }
}

static void tr6(mat6 A, mat6 T) {
    for (int r = 0; r < 6; r++) {
        for (int c = 0; c < 6; c++) {
            T[r][c] = A[c][r];
        }
    }
}

static void matmul6(mat6 A, mat6 B, mat6 C) {
    for (int r = 0; r < 6; r++) {
        for (int c = 0; c < 6; c++) {
            C[r][c] = 0.0;
            for (int k = 0; k < 6; k++) {
                C[r][c] += A[r][k] * B[k][c];
            }
        }
    }
}

static void mv_arr(fb_mv m, double* a) {
    for (int k = 0; k < 6; k++) {
        a[k] = fb_mv_get(m, k);
    }
}
static void fv_arr(fb_fv f, double* a) {
    for (int k = 0; k < 6; k++) {
        a[k] = fb_fv_get(f, k);
    }
}

static fb_xf rand_xf(scene_rng* r) {
    return (fb_xf){fb_quat_to_m3(scene_rng_quat(r)),
                   fb_v3_make(scene_rng_normal(r), scene_rng_normal(r), scene_rng_normal(r))};
}
static fb_v3 rand_v3(scene_rng* r) {
    return fb_v3_make(scene_rng_normal(r), scene_rng_normal(r), scene_rng_normal(r));
}
static fb_mv rand_mv(scene_rng* r) {
    return fb_mv_make(rand_v3(r), rand_v3(r));
}
static fb_fv rand_fv(scene_rng* r) {
    return (fb_fv){rand_v3(r), rand_v3(r)};
}
static fb_rbi rand_rbi(scene_rng* r) {
    const fb_m3 R = fb_quat_to_m3(scene_rng_quat(r));
    const fb_m3 Ic = fb_m3_congr(R, fb_m3_diag(0.3, 0.4, 0.5));
    return fb_rbi_from_mass_com(scene_rng_uniform(r, 0.5, 3.0), rand_v3(r), Ic);
}

static void rbi_to_6(fb_rbi I, mat6 out) {
    const fb_abi A = fb_abi_from_rbi(I);
    for (int r = 0; r < 6; r++) {
        for (int c = 0; c < 6; c++) {
            out[r][c] = fb_abi_get(&A, r, c);
        }
    }
}

static void ck_arr_near(const double* a, const double* b, int n) {
    ck_assert_msg(ck_rel_diff(a, b, n, 1.0) < TOL, "relative difference %g",
                  ck_rel_diff(a, b, n, 1.0));
}

START_TEST(transforms_match_6x6) {
    scene_rng r = scene_rng_make(11);
    for (int t = 0; t < NCASE; t++) {
        const fb_xf X = rand_xf(&r);
        const fb_mv m = rand_mv(&r);
        const fb_fv f = rand_fv(&r);
        mat6 X6, XT, Xinv6, Xstar;
        double a[6], b[6], y[6];
        xf_to_6(X, X6);
        tr6(X6, XT);
        xf_to_6(fb_xf_inv(X), Xinv6);
        tr6(Xinv6, Xstar); /* X* = X^-T */
        /* X m */
        mv_arr(m, a);
        mul6(X6, a, y);
        mv_arr(fb_xf_mv(X, m), b);
        ck_arr_near(b, y, 6);
        /* X^-1 m, and X^-1 X = 1 */
        mul6(Xinv6, a, y);
        mv_arr(fb_xf_inv_mv(X, m), b);
        ck_arr_near(b, y, 6);
        mv_arr(fb_xf_inv_mv(X, fb_xf_mv(X, m)), b);
        ck_arr_near(b, a, 6);
        /* X* f and X^T f */
        fv_arr(f, a);
        mul6(Xstar, a, y);
        fv_arr(fb_xf_fv(X, f), b);
        ck_arr_near(b, y, 6);
        mul6(XT, a, y);
        fv_arr(fb_xf_tr_fv(X, f), b);
        ck_arr_near(b, y, 6);
        /* power is invariant: (X m) . (X* f) = m . f */
        fb_ck_near(fb_mv_dot_fv(fb_xf_mv(X, m), fb_xf_fv(X, f)), fb_mv_dot_fv(m, f), 1e-12,
                   1e-12);
    }
}
END_TEST

START_TEST(composition_matches_6x6) {
    scene_rng r = scene_rng_make(12);
    for (int t = 0; t < NCASE; t++) {
        const fb_xf X1 = rand_xf(&r), X2 = rand_xf(&r);
        mat6 A, B, AB, P;
        xf_to_6(X1, A);
        xf_to_6(X2, B);
        matmul6(B, A, AB);
        xf_to_6(fb_xf_mul(X2, X1), P);
        ck_arr_near(&P[0][0], &AB[0][0], 36);
    }
}
END_TEST

START_TEST(cross_products_match_6x6) {
    scene_rng r = scene_rng_make(13);
    for (int t = 0; t < NCASE; t++) {
        const fb_mv v = rand_mv(&r), m = rand_mv(&r);
        const fb_fv f = rand_fv(&r);
        /* crm(v) = [wx 0; vx wx], crf(v) = -crm(v)^T [RBDA eqs 2.31, 2.32] */
        mat6 crm, crf;
        memset(crm, 0, sizeof crm);
        const fb_m3 wx = fb_m3_skew(v.w), vx = fb_m3_skew(v.v);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                crm[i][j] = wx.m[i][j];
                crm[i + 3][j + 3] = wx.m[i][j];
                crm[i + 3][j] = vx.m[i][j];
            }
        }
        for (int i = 0; i < 6; i++) {
            for (int j = 0; j < 6; j++) {
                crf[i][j] = -crm[j][i];
            }
        }
        double a[6], b[6], y[6];
        mv_arr(m, a);
        mul6(crm, a, y);
        mv_arr(fb_crm(v, m), b);
        ck_arr_near(b, y, 6);
        fv_arr(f, a);
        mul6(crf, a, y);
        fv_arr(fb_crf(v, f), b);
        ck_arr_near(b, y, 6);
    }
}
END_TEST

START_TEST(inertia_transforms_match_6x6) {
    scene_rng r = scene_rng_make(14);
    for (int t = 0; t < NCASE; t++) {
        const fb_xf X = rand_xf(&r);
        const fb_rbi I = rand_rbi(&r);
        const fb_mv m = rand_mv(&r);
        mat6 I6, X6, XT, tmp, XTIX;
        rbi_to_6(I, I6);
        double a[6], b[6], y[6];
        /* I m */
        mv_arr(m, a);
        mul6(I6, a, y);
        fv_arr(fb_rbi_mv(I, m), b);
        ck_arr_near(b, y, 6);
        /* X^T I X, as a rigid-body inertia and as an articulated inertia */
        xf_to_6(X, X6);
        tr6(X6, XT);
        matmul6(I6, X6, tmp);
        matmul6(XT, tmp, XTIX);
        mat6 P;
        rbi_to_6(fb_xf_tr_rbi(X, I), P);
        ck_arr_near(&P[0][0], &XTIX[0][0], 36);
        /* an articulated inertia that is not rigid: add a random symmetric PSD term */
        fb_abi IA = fb_abi_from_rbi(I);
        const fb_fv u = rand_fv(&r);
        IA.A = fb_m3_add(IA.A, fb_m3_outer(u.n, u.n));
        IA.B = fb_m3_add(IA.B, fb_m3_outer(u.n, u.f));
        IA.C = fb_m3_add(IA.C, fb_m3_outer(u.f, u.f));
        for (int i = 0; i < 6; i++) {
            for (int j = 0; j < 6; j++) {
                I6[i][j] = fb_abi_get(&IA, i, j);
            }
        }
        matmul6(I6, X6, tmp);
        matmul6(XT, tmp, XTIX);
        fb_abi out;
        fb_xf_tr_abi(&out, X, &IA);
        for (int i = 0; i < 6; i++) {
            for (int j = 0; j < 6; j++) {
                P[i][j] = fb_abi_get(&out, i, j);
            }
        }
        ck_arr_near(&P[0][0], &XTIX[0][0], 36);
        mul6(I6, a, y);
        fv_arr(fb_abi_mv(&IA, m), b);
        ck_arr_near(b, y, 6);
    }
}
END_TEST

START_TEST(quaternion_rotation_matches_rodrigues) {
    scene_rng r = scene_rng_make(15);
    for (int t = 0; t < NCASE; t++) {
        const fb_v3 axis = scene_rng_unit(&r);
        const double th = scene_rng_uniform(&r, -3.0, 3.0);
        const fb_quat q = fb_quat_from_axis_angle(axis, th);
        /* Rodrigues: R = 1 + sin th [k]x + (1 - cos th) [k]x^2 */
        const fb_m3 K = fb_m3_skew(axis);
        const fb_m3 R = fb_m3_add(fb_m3_add(fb_m3_identity(), fb_m3_scale(K, sin(th))),
                                  fb_m3_scale(fb_m3_mul(K, K), 1.0 - cos(th)));
        const fb_m3 Rq = fb_quat_to_m3(q);
        ck_arr_near(&Rq.m[0][0], &R.m[0][0], 9);
        const fb_v3 x = rand_v3(&r);
        const fb_v3 a = fb_quat_rotate(q, x), b = fb_m3_mv(R, x);
        ck_arr_near(&a.x, &b.x, 3);
        /* exp of the rotation vector is the same rotation; log inverts exp */
        const fb_quat e = fb_quat_exp(fb_v3_scale(axis, th));
        const fb_m3 Re = fb_quat_to_m3(e);
        ck_arr_near(&Re.m[0][0], &R.m[0][0], 9);
        const fb_v3 w = fb_quat_log(e), w0 = fb_v3_scale(axis, th);
        ck_arr_near(&w.x, &w0.x, 3);
        /* matrix -> quaternion -> matrix */
        const fb_m3 R2 = fb_quat_to_m3(fb_quat_from_m3(R));
        ck_arr_near(&R2.m[0][0], &R.m[0][0], 9);
        /* the product of quaternions is the product of rotations */
        const fb_quat p = scene_rng_quat(&r);
        const fb_m3 Rpq = fb_quat_to_m3(fb_quat_mul(p, q));
        const fb_m3 RpRq = fb_m3_mul(fb_quat_to_m3(p), Rq);
        ck_arr_near(&Rpq.m[0][0], &RpRq.m[0][0], 9);
    }
}
END_TEST

START_TEST(quaternion_small_angles_are_accurate) {
    /* the series branches agree with the closed forms near their switch-over */
    const double angles[] = {0.0, 1e-12, 1e-8, 0.99e-4, 1.01e-4, 1e-3};
    for (size_t i = 0; i < sizeof angles / sizeof angles[0]; i++) {
        const fb_v3 w = fb_v3_make(angles[i], 0.0, 0.0);
        const fb_quat q = fb_quat_exp(w);
        fb_ck_near(q.w, cos(0.5 * angles[i]), 1e-15, 1e-16);
        fb_ck_near(q.x, sin(0.5 * angles[i]), 1e-14, 1e-300);
        fb_ck_near(fb_quat_log(q).x, angles[i], 1e-14, 1e-300);
    }
    /* angle near pi: log picks the shortest arc and keeps its precision */
    const fb_quat q = fb_quat_exp(fb_v3_make(0.0, 0.0, FB_PI - 1e-9));
    fb_ck_near(fb_quat_log(q).z, FB_PI - 1e-9, 1e-14, 0.0);
}
END_TEST

START_TEST(cholesky_solves_and_inverts) {
    scene_rng r = scene_rng_make(16);
    for (int t = 0; t < NCASE; t++) {
        const int n = scene_rng_int(&r, 1, 6);
        double B[36], A[36], L[36], Ainv[36], x[6], b[6];
        for (int k = 0; k < n * n; k++) {
            B[k] = scene_rng_normal(&r);
        }
        /* A = B B^T + n 1 is symmetric positive definite */
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                A[i * n + j] = (i == j) ? n : 0.0;
                for (int k = 0; k < n; k++) {
                    A[i * n + j] += B[i * n + k] * B[j * n + k];
                }
            }
            x[i] = scene_rng_normal(&r);
        }
        for (int i = 0; i < n; i++) {
            b[i] = 0.0;
            for (int j = 0; j < n; j++) {
                b[i] += A[i * n + j] * x[j];
            }
        }
        memcpy(L, A, sizeof L);
        ck_assert(fb_chol_factor(L, n));
        fb_chol_solve(L, n, b);
        ck_arr_near(b, x, n);
        ck_assert(fb_spd_inverse(A, n, Ainv));
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < n; k++) {
                    s += A[i * n + k] * Ainv[k * n + j];
                }
                fb_ck_near(s, i == j ? 1.0 : 0.0, 0.0, 1e-12);
            }
        }
    }
    /* an indefinite matrix is refused, not factored */
    double bad[4] = {1.0, 2.0, 2.0, 1.0}, inv[4];
    ck_assert(!fb_spd_inverse(bad, 2, inv));
}
END_TEST

/* ---- math/detmath.h: the elementary functions every machine rounds alike ------------------ */

/* Ulps they may differ from glibc's libm (an independent implementation, within 1 ulp of the
 * true value): ours are within about 3 (detmath.c). */
#define DETMATH_ULPS 4

/* How many doubles lie between a and b (0 when equal, both zeros alike). */
static uint64_t ulp_distance(double a, double b) {
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    /* sign-magnitude to a line of integers in the doubles' order */
    ia = (ia < 0) ? INT64_MIN - ia : ia;
    ib = (ib < 0) ? INT64_MIN - ib : ib;
    return (ia > ib) ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

static void ck_ulps(const char* what, double x, double ours, double libm) {
    ck_assert_msg(ulp_distance(ours, libm) <= DETMATH_ULPS, "%s(%a) = %a, libm %a (%llu ulp)", what,
                  x, ours, libm, (unsigned long long)ulp_distance(ours, libm));
}

/* A double of random sign and magnitude 10^lo .. 10^hi, log-uniformly. */
static double spread(scene_rng* r, double lo, double hi) {
    const double m = pow(10.0, scene_rng_uniform(r, lo, hi));
    return (scene_rng_uniform(r, 0.0, 1.0) < 0.5) ? -m : m;
}

START_TEST(elementary_functions_match_libm) {
    scene_rng r = scene_rng_make(52);
    for (int t = 0; t < 50000; t++) {
        /* trigonometry: angles of every size the reduction handles, and next to multiples of
         * pi/4 and pi/2, where the reduction and the quadrant switch */
        double x = spread(&r, -8.0, 6.0);
        if (t % 4 == 1) {
            x = scene_rng_int(&r, -400, 400) * (FB_PI / 4.0) + spread(&r, -12.0, -3.0);
        }
        ck_ulps("sin", x, fb_sin(x), sin(x));
        ck_ulps("cos", x, fb_cos(x), cos(x));
        const double y = spread(&r, -200.0, 200.0), z = spread(&r, -200.0, 200.0);
        ck_ulps("atan2 y", y, fb_atan2(y, z), atan2(y, z));
        ck_ulps("atan2 x", z, fb_atan2(z, 1.0 + 0.01 * (t % 7)), atan2(z, 1.0 + 0.01 * (t % 7)));
        const double u = (t % 3) ? scene_rng_uniform(&r, -1.0, 1.0) : spread(&r, -300.0, 0.0);
        ck_ulps("asin", u, fb_asin(u), asin(u));
        ck_ulps("acos", u, fb_acos(u), acos(u));
        const double e = scene_rng_uniform(&r, -745.0, 709.7);
        ck_ulps("exp", e, fb_exp(e), exp(e));
        ck_ulps("exp small", e * 1e-3, fb_exp(e * 1e-3), exp(e * 1e-3));
        const double l = fabs(spread(&r, -320.0, 308.0));
        ck_ulps("log", l, fb_log(l), log(l));
        ck_ulps("log near 1", 1.0 + y * 1e-200, fb_log(1.0 + y * 1e-200), log(1.0 + y * 1e-200));
        ck_ulps("hypot", y, fb_hypot(y, z), hypot(y, z));
        /* repeated squaring rounds once a product: up to 2 log2 |n| + 1 roundings */
        const int n = scene_rng_int(&r, -12, 12);
        const double b = 1.0 + 0.5 * u, pn = fb_powi(b, n);
        ck_assert_msg(ulp_distance(pn, pow(b, n)) <= 8, "powi(%a, %d) = %a, libm %a", b, n, pn,
                      pow(b, n));
    }
}
END_TEST

START_TEST(elementary_functions_special_values) {
    const double inf = INFINITY;
    /* signed zeros kept where C99 Annex F keeps them */
    ck_assert(fb_sin(-0.0) == 0.0 && signbit(fb_sin(-0.0)));
    ck_assert(fb_asin(-0.0) == 0.0 && signbit(fb_asin(-0.0)));
    ck_assert(fb_atan2(-0.0, 1.0) == 0.0 && signbit(fb_atan2(-0.0, 1.0)));
    ck_assert(fb_atan2(0.0, -0.0) == atan2(0.0, -0.0));   /* pi */
    ck_assert(fb_atan2(-0.0, -1.0) == atan2(-0.0, -1.0)); /* -pi */
    ck_assert(fb_cos(-0.0) == 1.0 && fb_exp(0.0) == 1.0 && fb_log(1.0) == 0.0);
    ck_assert(fb_acos(1.0) == 0.0 && fb_acos(-1.0) == atan2(0.0, -1.0));
    /* infinities */
    ck_assert(fb_atan2(inf, inf) == atan2(inf, inf) && fb_atan2(-inf, -inf) == atan2(-inf, -inf));
    ck_assert(fb_atan2(1.0, -inf) == atan2(1.0, -inf) && fb_atan2(inf, 3.0) == atan2(inf, 3.0));
    ck_assert(fb_exp(inf) == inf && fb_exp(-inf) == 0.0 && fb_log(inf) == inf);
    ck_assert(fb_log(0.0) == -inf && fb_hypot(-inf, NAN) == inf);
    /* overflow and underflow at libm's thresholds */
    ck_assert(fb_exp(709.78) == exp(709.78) && fb_exp(709.79) == inf);
    ck_assert(fb_exp(-744.4) == exp(-744.4) && fb_exp(-745.2) == 0.0);
    ck_assert(fb_log(0x1p-1074) == log(0x1p-1074));
    /* outside the domain or not a number: NaN */
    ck_assert(isnan(fb_sin(inf)) && isnan(fb_cos(-inf)) && isnan(fb_sin(NAN)));
    ck_assert(isnan(fb_asin(1.0 + 1e-15)) && isnan(fb_acos(-2.0)) && isnan(fb_log(-1e-300)));
    ck_assert(isnan(fb_atan2(NAN, 1.0)) && isnan(fb_exp(NAN)) && isnan(fb_hypot(NAN, 1.0)));
    /* beyond the reduction's range, libm's answer */
    ck_assert(fb_sin(1e7) == sin(1e7) && fb_cos(-3e9) == cos(-3e9));
    ck_assert(fb_powi(2.0, -1022) == 0x1p-1022 && fb_powi(-3.0, 3) == -27.0);
    ck_assert(fb_powi(5.0, 0) == 1.0 && fb_powi(2.0, INT32_MIN) == 0.0);
}
END_TEST

static Suite* math_suite(void) {
    Suite* s = suite_create("math");
    TCase* tc = tcase_create("spatial");
    tcase_add_test(tc, transforms_match_6x6);
    tcase_add_test(tc, composition_matches_6x6);
    tcase_add_test(tc, cross_products_match_6x6);
    tcase_add_test(tc, inertia_transforms_match_6x6);
    tcase_add_test(tc, quaternion_rotation_matches_rodrigues);
    tcase_add_test(tc, quaternion_small_angles_are_accurate);
    tcase_add_test(tc, cholesky_solves_and_inverts);
    suite_add_tcase(s, tc);
    TCase* el = tcase_create("elementary");
    tcase_add_test(el, elementary_functions_match_libm);
    tcase_add_test(el, elementary_functions_special_values);
    suite_add_tcase(s, el);
    return s;
}

int main(void) {
    return ck_run_suite(math_suite());
}
