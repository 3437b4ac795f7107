/* featherbone-view: the few vector and matrix helpers the viewer needs.
 *
 * The library's math (src/math/) is internal, and the viewer uses only the public API, so the
 * handful of fb_v3 operations used by the camera and the picker are here as static inlines.
 * GL matrices are float, column-major (m[col * 4 + row]), as OpenGL takes them; the library's
 * fb_m3 is row-major and double, so conversions name the layout they produce. */
#ifndef FB_VIEW_VMATH_H
#define FB_VIEW_VMATH_H

#include <math.h>

#include "featherbone/types.h"

/* ---- fb_v3 (double), for the camera and picking ---------------------------------------- */

static inline fb_v3 v3(double x, double y, double z) {
    return (fb_v3){x, y, z};
}
static inline fb_v3 v3_add(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.x + b.x, a.y + b.y, a.z + b.z};
}
static inline fb_v3 v3_sub(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline fb_v3 v3_scale(fb_v3 a, double s) {
    return (fb_v3){a.x * s, a.y * s, a.z * s};
}
static inline double v3_dot(fb_v3 a, fb_v3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
/* right-handed cross product a x b */
static inline fb_v3 v3_cross(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static inline double v3_norm(fb_v3 a) {
    return sqrt(v3_dot(a, a));
}
/* a / |a|, or (0, 1, 0) for a zero vector */
static inline fb_v3 v3_unit(fb_v3 a) {
    const double n = v3_norm(a);
    return n > 0.0 ? v3_scale(a, 1.0 / n) : (fb_v3){0.0, 1.0, 0.0};
}
/* R a, R row-major */
static inline fb_v3 m3_mul_v3(const fb_m3* R, fb_v3 a) {
    return (fb_v3){R->m[0][0] * a.x + R->m[0][1] * a.y + R->m[0][2] * a.z,
                   R->m[1][0] * a.x + R->m[1][1] * a.y + R->m[1][2] * a.z,
                   R->m[2][0] * a.x + R->m[2][1] * a.y + R->m[2][2] * a.z};
}
/* R^T a, R row-major */
static inline fb_v3 m3_tmul_v3(const fb_m3* R, fb_v3 a) {
    return (fb_v3){R->m[0][0] * a.x + R->m[1][0] * a.y + R->m[2][0] * a.z,
                   R->m[0][1] * a.x + R->m[1][1] * a.y + R->m[2][1] * a.z,
                   R->m[0][2] * a.x + R->m[1][2] * a.y + R->m[2][2] * a.z};
}

/* ---- mat4 (float, column-major), for GL ------------------------------------------------ */

typedef struct mat4 {
    float m[16]; /* column-major: element (row r, col c) at m[c * 4 + r] */
} mat4;

static inline mat4 mat4_identity(void) {
    return (mat4){{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
}

/* a b */
static inline mat4 mat4_mul(const mat4* a, const mat4* b) {
    mat4 r;
    for (int c = 0; c < 4; c++) {
        for (int row = 0; row < 4; row++) {
            float s = 0.0f;
            for (int k = 0; k < 4; k++) {
                s += a->m[k * 4 + row] * b->m[c * 4 + k];
            }
            r.m[c * 4 + row] = s;
        }
    }
    return r;
}

/* The rigid (or scaled) transform x -> R diag(s) x + p, R row-major (body -> world). */
static inline mat4 mat4_from_rt(const fb_m3* R, fb_v3 p, fb_v3 s) {
    mat4 r = mat4_identity();
    const double sc[3] = {s.x, s.y, s.z};
    for (int c = 0; c < 3; c++) {
        for (int row = 0; row < 3; row++) {
            r.m[c * 4 + row] = (float)(R->m[row][c] * sc[c]);
        }
    }
    r.m[12] = (float)p.x;
    r.m[13] = (float)p.y;
    r.m[14] = (float)p.z;
    return r;
}

#endif /* FB_VIEW_VMATH_H */
