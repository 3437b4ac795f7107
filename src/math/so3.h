/* Derivatives on the rotation group for curves written as q(t) = q0 exp(r(t)), r a rotation
 * vector (the chart the motion fit works in).
 *
 *   fb_so3_jr       right Jacobian of exp: the body angular velocity is w = J_r(r) r'
 *   fb_so3_jr_dot   (d/dt J_r(r(t))) r', the extra term in the body angular acceleration
 *                   w' = J_r(r) r'' + (d/dt J_r) r'
 *
 * J_r(r) = I - a [r]x + b [r]x^2 with a = (1 - cos t)/t^2, b = (t - sin t)/t^3, t = |r|
 * (Chirikjian, "Stochastic Models, Information Theory, and Lie Groups", vol. 2, §10.2; the
 * sign of the first-order term is that of the body-frame, right-multiplied, convention the
 * quaternion joints use). Below SO3_SERIES_ANGLE the coefficients come from their Taylor
 * series: the closed forms lose 1/t^2 digits to cancellation there. */
#ifndef FB_MATH_SO3_H
#define FB_MATH_SO3_H

#include <math.h>

#include "detmath.h"
#include "vec3.h"

/* rad: below it a, b and their derivatives use series (first dropped term < 1e-11
 * relative at this angle). */
#define SO3_SERIES_ANGLE 0.1

/* a(t), b(t) and A = a'(t)/t, B = b'(t)/t for t = |r|. */
static inline void fb_so3_coeffs(double t, double* a, double* b, double* A, double* B) {
    const double t2 = t * t;
    if (t < SO3_SERIES_ANGLE) {
        *a = 0.5 - t2 / 24.0 + t2 * t2 / 720.0 - t2 * t2 * t2 / 40320.0;
        *b = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0 - t2 * t2 * t2 / 362880.0;
        *A = -1.0 / 12.0 + t2 / 180.0 - t2 * t2 / 6720.0;
        *B = -1.0 / 60.0 + t2 / 1260.0 - t2 * t2 / 60480.0;
        return;
    }
    const double s = fb_sin(t), c = fb_cos(t), t3 = t2 * t, t4 = t2 * t2;
    *a = (1.0 - c) / t2;
    *b = (t - s) / t3;
    *A = s / t3 - 2.0 * (1.0 - c) / t4;
    *B = (1.0 - c) / t4 - 3.0 * (t - s) / (t4 * t);
}

/* J_r(r) x, without forming the matrix. */
static inline fb_v3 fb_so3_jr(fb_v3 r, fb_v3 x) {
    double a, b, A, B;
    fb_so3_coeffs(fb_v3_norm(r), &a, &b, &A, &B);
    const fb_v3 rx = fb_v3_cross(r, x);
    return fb_v3_add(fb_v3_axpy(x, -a, rx), fb_v3_scale(fb_v3_cross(r, rx), b));
}

/* (d/dt J_r(r)) rd for r' = rd: -a' (r x rd) + b' r x (r x rd) + b rd x (r x rd), where
 * a' = A (r . rd) and b' = B (r . rd). */
static inline fb_v3 fb_so3_jr_dot(fb_v3 r, fb_v3 rd) {
    double a, b, A, B;
    fb_so3_coeffs(fb_v3_norm(r), &a, &b, &A, &B);
    (void)a;
    const double rr = fb_v3_dot(r, rd);
    const fb_v3 rx = fb_v3_cross(r, rd);
    fb_v3 out = fb_v3_scale(rx, -A * rr);
    out = fb_v3_axpy(out, B * rr, fb_v3_cross(r, rx));
    return fb_v3_axpy(out, b, fb_v3_cross(rd, rx));
}

#endif /* FB_MATH_SO3_H */
