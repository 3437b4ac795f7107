/* Unit quaternions for rotations. Hamilton product; a quaternion q represents the rotation
 * matrix R(q) that maps child coordinates to parent coordinates.
 *
 *   fb_quat_identity, fb_quat_mul (a b), fb_quat_conj, fb_quat_normalize, fb_quat_norm,
 *   fb_quat_to_m3 (R(q)), fb_quat_from_m3, fb_quat_rotate (R(q) x), fb_quat_exp (of a rotation
 *   vector: rotation by |w| about w/|w|), fb_quat_log (inverse of fb_quat_exp, shortest arc),
 *   fb_quat_from_axis_angle, fb_quat_load / fb_quat_store ([w x y z] in a double array),
 *   fb_quat_slerp, fb_quat_between (the least rotation taking one direction to another)
 */
#ifndef FB_MATH_QUAT_H
#define FB_MATH_QUAT_H

#include <math.h>

#include "detmath.h"
#include "vec3.h"

/* Below this rotation angle (rad) exp/log use their Taylor series; at 1e-4 the series'
 * first dropped term is ~1e-17 relative, below double rounding. */
#define FB_QUAT_SMALL_ANGLE 1e-4

static inline fb_quat fb_quat_identity(void) {
    return (fb_quat){1.0, 0.0, 0.0, 0.0};
}
static inline fb_quat fb_quat_load(const double* q) {
    return (fb_quat){q[0], q[1], q[2], q[3]};
}
static inline void fb_quat_store(double* q, fb_quat a) {
    q[0] = a.w;
    q[1] = a.x;
    q[2] = a.y;
    q[3] = a.z;
}
/* Hamilton product a b: apply b, then a. */
static inline fb_quat fb_quat_mul(fb_quat a, fb_quat b) {
    return (fb_quat){a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                     a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                     a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                     a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
static inline fb_quat fb_quat_conj(fb_quat a) {
    return (fb_quat){a.w, -a.x, -a.y, -a.z};
}
static inline double fb_quat_norm(fb_quat a) {
    return sqrt(a.w * a.w + a.x * a.x + a.y * a.y + a.z * a.z);
}
/* a / |a|; the caller guarantees |a| > 0. */
static inline fb_quat fb_quat_normalize(fb_quat a) {
    const double s = 1.0 / fb_quat_norm(a);
    return (fb_quat){a.w * s, a.x * s, a.y * s, a.z * s};
}
/* R(q), the rotation matrix (child -> parent coordinates) of a unit quaternion. */
static inline fb_m3 fb_quat_to_m3(fb_quat q) {
    const double w = q.w, x = q.x, y = q.y, z = q.z;
    return (fb_m3){{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                    {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                    {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}
/* R(q) x */
static inline fb_v3 fb_quat_rotate(fb_quat q, fb_v3 x) {
    const fb_v3 u = {q.x, q.y, q.z};
    const fb_v3 t = fb_v3_scale(fb_v3_cross(u, x), 2.0);
    return fb_v3_add(fb_v3_axpy(x, q.w, t), fb_v3_cross(u, t));
}
/* Rotation by angle |w| (rad) about w / |w|. */
static inline fb_quat fb_quat_exp(fb_v3 w) {
    const double th = fb_v3_norm(w);
    double c, s; /* cos(th/2), sin(th/2)/th */
    if (th < FB_QUAT_SMALL_ANGLE) {
        c = 1.0 - th * th / 8.0;
        s = 0.5 - th * th / 48.0;
    } else {
        c = fb_cos(0.5 * th);
        s = fb_sin(0.5 * th) / th;
    }
    return (fb_quat){c, w.x * s, w.y * s, w.z * s};
}
/* The rotation vector of a unit quaternion, angle in [0, pi] (q and -q give the same). */
static inline fb_v3 fb_quat_log(fb_quat q) {
    if (q.w < 0.0) {
        q = (fb_quat){-q.w, -q.x, -q.y, -q.z};
    }
    const fb_v3 u = {q.x, q.y, q.z};
    const double s = fb_v3_norm(u);
    /* atan2 keeps full precision near 0 and pi, where acos/asin lose it; atan2(s, w)/s stays
     * exact for tiny s > 0, so only s == 0 needs its limit 1/w */
    const double k = (s > 0.0) ? 2.0 * fb_atan2(s, q.w) / s : 2.0 / q.w;
    return fb_v3_scale(u, k);
}
static inline fb_quat fb_quat_from_axis_angle(fb_v3 axis_unit, double angle) {
    const double s = fb_sin(0.5 * angle);
    return (fb_quat){fb_cos(0.5 * angle), axis_unit.x * s, axis_unit.y * s, axis_unit.z * s};
}

/* The twist angle (rad, in (-pi, pi]) of q about the unit axis a, in the swing-twist split
 * q = twist(a, angle) * swing. */
static inline double fb_quat_twist(fb_quat q, fb_v3 a) {
    const double t = 2.0 * fb_atan2(q.x * a.x + q.y * a.y + q.z * a.z, q.w);
    return (t > FB_PI) ? t - 2.0 * FB_PI : (t <= -FB_PI ? t + 2.0 * FB_PI : t);
}

/* Spherical interpolation: the rotation the part w (0..1) of the shortest way from a to b,
 * a exp(w log(a^-1 b)). */
static inline fb_quat fb_quat_slerp(fb_quat a, fb_quat b, double w) {
    if (fb_quat_mul(fb_quat_conj(a), b).w < 0.0) {
        b = (fb_quat){-b.w, -b.x, -b.y, -b.z};
    }
    return fb_quat_normalize(fb_quat_mul(
        a, fb_quat_exp(fb_v3_scale(fb_quat_log(fb_quat_mul(fb_quat_conj(a), b)), w))));
}

/* The rotation taking unit vector u to unit vector v by the least angle (half a turn about an
 * axis across u when they are opposite). */
static inline fb_quat fb_quat_between(fb_v3 u, fb_v3 v) {
    const double c = fb_v3_dot(u, v);
    if (c < -1.0 + 1e-12) {
        fb_v3 a = fb_v3_cross(u, fb_v3_make(1.0, 0.0, 0.0));
        if (fb_v3_norm(a) < 1e-6) {
            a = fb_v3_cross(u, fb_v3_make(0.0, 1.0, 0.0));
        }
        a = fb_v3_scale(a, 1.0 / fb_v3_norm(a));
        return (fb_quat){0.0, a.x, a.y, a.z};
    }
    const fb_v3 a = fb_v3_cross(u, v);
    return fb_quat_normalize((fb_quat){1.0 + c, a.x, a.y, a.z});
}

/* The unit quaternion of a rotation matrix (Shepperd's method: pick the largest pivot). */
fb_quat fb_quat_from_m3(fb_m3 R);

#endif /* FB_MATH_QUAT_H */
