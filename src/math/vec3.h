/* 3-vectors and 3x3 matrices (row-major). Pure functions on values; no allocation.
 *
 *   fb_v3_add, fb_v3_sub, fb_v3_scale, fb_v3_neg, fb_v3_dot, fb_v3_cross (right-handed),
 *   fb_v3_norm, fb_v3_axpy (y + s x), fb_v3_is_finite
 *   fb_m3_identity, fb_m3_mul (A B), fb_m3_mul_tr (A B^T), fb_m3_tr_mul (A^T B),
 *   fb_m3_transpose, fb_m3_mv (A x), fb_m3_tr_mv (A^T x), fb_m3_add, fb_m3_sub, fb_m3_scale,
 *   fb_m3_skew (x such that skew(a) b = a x b), fb_m3_sym_congr (E^T A E), fb_m3_congr (E A E^T)
 */
#ifndef FB_MATH_VEC3_H
#define FB_MATH_VEC3_H

#include <math.h>
#include <stdbool.h>

#include "featherbone/types.h"

/* pi, since strict C11 <math.h> has no M_PI. */
#define FB_PI 3.14159265358979323846

static inline fb_v3 fb_v3_make(double x, double y, double z) {
    return (fb_v3){x, y, z};
}
static inline fb_v3 fb_v3_zero(void) {
    return (fb_v3){0.0, 0.0, 0.0};
}
static inline fb_v3 fb_v3_add(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.x + b.x, a.y + b.y, a.z + b.z};
}
static inline fb_v3 fb_v3_sub(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline fb_v3 fb_v3_scale(fb_v3 a, double s) {
    return (fb_v3){a.x * s, a.y * s, a.z * s};
}
static inline fb_v3 fb_v3_neg(fb_v3 a) {
    return (fb_v3){-a.x, -a.y, -a.z};
}
/* y + s x */
static inline fb_v3 fb_v3_axpy(fb_v3 y, double s, fb_v3 x) {
    return (fb_v3){y.x + s * x.x, y.y + s * x.y, y.z + s * x.z};
}
static inline double fb_v3_dot(fb_v3 a, fb_v3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
/* Right-handed cross product a x b. */
static inline fb_v3 fb_v3_cross(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static inline double fb_v3_norm(fb_v3 a) {
    return sqrt(fb_v3_dot(a, a));
}
static inline bool fb_v3_is_finite(fb_v3 a) {
    return isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}
/* Component i (0..2). */
static inline double fb_v3_get(fb_v3 a, int i) {
    return i == 0 ? a.x : (i == 1 ? a.y : a.z);
}

static inline fb_m3 fb_m3_identity(void) {
    return (fb_m3){{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
}
static inline fb_m3 fb_m3_zero(void) {
    return (fb_m3){{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
}
static inline fb_m3 fb_m3_diag(double a, double b, double c) {
    return (fb_m3){{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
}
static inline fb_v3 fb_m3_row(fb_m3 A, int r) {
    return (fb_v3){A.m[r][0], A.m[r][1], A.m[r][2]};
}
static inline fb_v3 fb_m3_col(fb_m3 A, int c) {
    return (fb_v3){A.m[0][c], A.m[1][c], A.m[2][c]};
}
/* A x */
static inline fb_v3 fb_m3_mv(fb_m3 A, fb_v3 x) {
    return (fb_v3){A.m[0][0] * x.x + A.m[0][1] * x.y + A.m[0][2] * x.z,
                   A.m[1][0] * x.x + A.m[1][1] * x.y + A.m[1][2] * x.z,
                   A.m[2][0] * x.x + A.m[2][1] * x.y + A.m[2][2] * x.z};
}
/* A^T x */
static inline fb_v3 fb_m3_tr_mv(fb_m3 A, fb_v3 x) {
    return (fb_v3){A.m[0][0] * x.x + A.m[1][0] * x.y + A.m[2][0] * x.z,
                   A.m[0][1] * x.x + A.m[1][1] * x.y + A.m[2][1] * x.z,
                   A.m[0][2] * x.x + A.m[1][2] * x.y + A.m[2][2] * x.z};
}
static inline fb_m3 fb_m3_transpose(fb_m3 A) {
    fb_m3 T;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            T.m[r][c] = A.m[c][r];
        }
    }
    return T;
}
/* A B */
static inline fb_m3 fb_m3_mul(fb_m3 A, fb_m3 B) {
    fb_m3 C;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            C.m[r][c] = A.m[r][0] * B.m[0][c] + A.m[r][1] * B.m[1][c] + A.m[r][2] * B.m[2][c];
        }
    }
    return C;
}
/* A^T B */
static inline fb_m3 fb_m3_tr_mul(fb_m3 A, fb_m3 B) {
    fb_m3 C;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            C.m[r][c] = A.m[0][r] * B.m[0][c] + A.m[1][r] * B.m[1][c] + A.m[2][r] * B.m[2][c];
        }
    }
    return C;
}
/* A B^T */
static inline fb_m3 fb_m3_mul_tr(fb_m3 A, fb_m3 B) {
    fb_m3 C;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            C.m[r][c] = A.m[r][0] * B.m[c][0] + A.m[r][1] * B.m[c][1] + A.m[r][2] * B.m[c][2];
        }
    }
    return C;
}
static inline fb_m3 fb_m3_add(fb_m3 A, fb_m3 B) {
    fb_m3 C;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            C.m[r][c] = A.m[r][c] + B.m[r][c];
        }
    }
    return C;
}
static inline fb_m3 fb_m3_sub(fb_m3 A, fb_m3 B) {
    fb_m3 C;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            C.m[r][c] = A.m[r][c] - B.m[r][c];
        }
    }
    return C;
}
static inline fb_m3 fb_m3_scale(fb_m3 A, double s) {
    fb_m3 C;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            C.m[r][c] = A.m[r][c] * s;
        }
    }
    return C;
}
/* The matrix a x (cross-product matrix): skew(a) b = a x b. */
static inline fb_m3 fb_m3_skew(fb_v3 a) {
    return (fb_m3){{{0, -a.z, a.y}, {a.z, 0, -a.x}, {-a.y, a.x, 0}}};
}
/* E A E^T (A symmetric gives a symmetric result). */
static inline fb_m3 fb_m3_congr(fb_m3 E, fb_m3 A) {
    return fb_m3_mul_tr(fb_m3_mul(E, A), E);
}
/* E^T A E */
static inline fb_m3 fb_m3_tr_congr(fb_m3 E, fb_m3 A) {
    return fb_m3_mul(fb_m3_tr_mul(E, A), E);
}
/* a b^T */
static inline fb_m3 fb_m3_outer(fb_v3 a, fb_v3 b) {
    return (fb_m3){{{a.x * b.x, a.x * b.y, a.x * b.z},
                    {a.y * b.x, a.y * b.y, a.y * b.z},
                    {a.z * b.x, a.z * b.y, a.z * b.z}}};
}

#endif /* FB_MATH_VEC3_H */
