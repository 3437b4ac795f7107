/* Elementary functions that round the same on every machine (why: detmath.h).
 *
 * Each function reduces its argument to a small interval exactly or nearly so (Cody & Waite:
 * a constant split in parts short enough that k * part is exact), evaluates a truncated
 * Taylor series there by Horner's rule, and puts the result back together. The series are
 * cut where the first dropped term is below 2^-56 of the result, so what is left of the error
 * is the rounding of a handful of operations: 1-3 ulp against libm (tests/test_math.c).
 * Accuracy to the last bit is not the aim; the same bits everywhere is. */
#include "detmath.h"

#include <math.h>

/* pi/2 in three parts, the first two of 33 significant bits (k * part exact for |k| < 2^20),
 * the third rounded; together 119 bits of pi/2. Hex literals are exact. */
static const double PIO2_1 = 0x1.921fb544p+0;
static const double PIO2_2 = 0x1.0b4611a6p-34;
static const double PIO2_3 = 0x1.3198a2e037073p-69;
static const double TWO_OVER_PI = 0x1.45f306dc9c883p-1;

/* pi, pi/2, pi/4 rounded (HI) and what rounding left out (LO). */
static const double PI_HI = 0x1.921fb54442d18p+1;
static const double PI_LO = 0x1.1a62633145c07p-53;
static const double PIO2_HI = 0x1.921fb54442d18p+0;
static const double PIO2_LO = 0x1.1a62633145c07p-54;
static const double PIO4_HI = 0x1.921fb54442d18p-1;
static const double PIO4_LO = 0x1.1a62633145c07p-55;
static const double TAN_PI_8 = 0x1.a827999fcef32p-2; /* sqrt(2) - 1 */

/* ln 2 in two parts, the first of 29 significant bits (k * LN2_HI exact for |k| < 2^24). */
static const double LN2_HI = 0x1.62e42ffp-1;
static const double LN2_LO = -0x1.718432a1b0e26p-35;
static const double INV_LN2 = 0x1.71547652b82fep+0;
static const double SQRT_HALF = 0x1.6a09e667f3bcdp-1;
/* exp overflows above ln(DBL_MAX) and is below half the least subnormal under this. */
static const double EXP_OVERFLOW = 0x1.62e42fefa39efp+9;
static const double EXP_UNDERFLOW = -0x1.74910d52d3051p+9;

/* ---- sine and cosine ---------------------------------------------------------------------- */

/* sin r for |r| <= pi/4: the series to r^17 (the first term dropped, r^19/19!, is < 1e-19
 * of the result). */
static double sin_kernel(double r) {
    const double z = r * r;
    const double p =
        -1.0 / 6.0 +
        z * (1.0 / 120.0 +
             z * (-1.0 / 5040.0 +
                  z * (1.0 / 362880.0 +
                       z * (-1.0 / 39916800.0 +
                            z * (1.0 / 6227020800.0 +
                                 z * (-1.0 / 1307674368000.0 + z * (1.0 / 355687428096000.0)))))));
    return r + r * z * p;
}

/* cos r for |r| <= pi/4: the series to r^18; 1 - r^2/2 is summed with the rounding of the
 * subtraction carried into the tail. */
static double cos_kernel(double r) {
    const double z = r * r, hz = 0.5 * z, w = 1.0 - hz;
    const double p =
        1.0 / 24.0 +
        z * (-1.0 / 720.0 +
             z * (1.0 / 40320.0 +
                  z * (-1.0 / 3628800.0 +
                       z * (1.0 / 479001600.0 +
                            z * (-1.0 / 87178291200.0 + z * (1.0 / 20922789888000.0 +
                                                             z * (-1.0 / 6402373705728000.0)))))));
    return w + (((1.0 - w) - hz) + z * z * p);
}

/* x = k pi/2 + r with |r| <= pi/4 (to rounding), for |x| < FB_TRIG_REDUCE_MAX; returns
 * k mod 4. x - k PIO2_1 is exact (Sterbenz), as are the products. */
static int reduce_pio2(double x, double* r) {
    const double k = floor(x * TWO_OVER_PI + 0.5);
    *r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
    return (int)((long)k & 3);
}

/* sin(q pi/2 + r) from the kernels. */
static double sin_quadrant(int q, double r) {
    const double v = (q & 1) ? cos_kernel(r) : sin_kernel(r);
    return (q & 2) ? -v : v;
}

double fb_sin(double x) {
    if (!isfinite(x)) {
        return x - x;
    }
    if (fabs(x) < 0x1p-27) { /* sin x = x to rounding (keeps -0) */
        return x;
    }
    if (fabs(x) >= FB_TRIG_REDUCE_MAX) {
        return sin(x);
    }
    double r;
    const int q = reduce_pio2(x, &r);
    return sin_quadrant(q, r);
}

double fb_cos(double x) {
    if (!isfinite(x)) {
        return x - x;
    }
    if (fabs(x) >= FB_TRIG_REDUCE_MAX) {
        return cos(x);
    }
    double r;
    const int q = reduce_pio2(x, &r);
    return sin_quadrant(q + 1, r);
}

/* ---- inverse tangent ---------------------------------------------------------------------- */

/* atan t for 0 <= t <= 1. Above tan(pi/8) it is pi/4 + atan((t - 1)/(t + 1)), so the series
 * runs on |u| <= tan(pi/8), where its terms to u^39 leave < 2^-56 of the result. */
static double atan_unit(double t) {
    static const double A[19] = {
        -1.0 / 3.0,  1.0 / 5.0,   -1.0 / 7.0,  1.0 / 9.0,   -1.0 / 11.0, 1.0 / 13.0,  -1.0 / 15.0,
        1.0 / 17.0,  -1.0 / 19.0, 1.0 / 21.0,  -1.0 / 23.0, 1.0 / 25.0,  -1.0 / 27.0, 1.0 / 29.0,
        -1.0 / 31.0, 1.0 / 33.0,  -1.0 / 35.0, 1.0 / 37.0,  -1.0 / 39.0,
    };
    double u = t, base_hi = 0.0, base_lo = 0.0;
    if (t > TAN_PI_8) {
        u = (t - 1.0) / (t + 1.0);
        base_hi = PIO4_HI;
        base_lo = PIO4_LO;
    }
    const double z = u * u;
    double p = A[18];
    for (int i = 17; i >= 0; i--) {
        p = A[i] + z * p;
    }
    return base_hi + (base_lo + (u + u * z * p));
}

double fb_atan2(double y, double x) {
    if (isnan(x) || isnan(y)) {
        return x + y;
    }
    const double ax = fabs(x), ay = fabs(y);
    double a; /* the angle in the first quadrant, from |x| and |y| */
    if (isinf(ax) && isinf(ay)) {
        a = PIO4_HI;
    } else if (ay <= ax) {
        a = (ax == 0.0) ? 0.0 : atan_unit(ay / ax);
    } else {
        a = PIO2_HI + (PIO2_LO - atan_unit(ax / ay));
    }
    if (signbit(x)) {
        a = PI_HI + (PI_LO - a);
    }
    return copysign(a, y);
}

double fb_asin(double x) {
    if (isnan(x)) {
        return x + x;
    }
    if (fabs(x) > 1.0) {
        return NAN;
    }
    return fb_atan2(x, sqrt((1.0 - x) * (1.0 + x)));
}

double fb_acos(double x) {
    if (isnan(x)) {
        return x + x;
    }
    if (fabs(x) > 1.0) {
        return NAN;
    }
    return fb_atan2(sqrt((1.0 - x) * (1.0 + x)), x);
}

/* ---- exponential and logarithm ------------------------------------------------------------ */

/* exp x = 2^k exp r, r = x - k ln 2 in [-ln2/2, ln2/2]; the series of exp r to r^13 (the
 * first term dropped < 5e-18). 2^k is applied by ldexp, exact but for one rounding into the
 * subnormals. */
double fb_exp(double x) {
    if (isnan(x)) {
        return x + x;
    }
    if (x > EXP_OVERFLOW) {
        return HUGE_VAL;
    }
    if (x < EXP_UNDERFLOW) {
        return 0.0;
    }
    const double k = floor(x * INV_LN2 + 0.5);
    const double r = (x - k * LN2_HI) - k * LN2_LO;
    double q = 1.0 / 6227020800.0; /* 1/13! */
    static const double INV_FACT[11] = {
        1.0 / 2.0,       1.0 / 6.0,        1.0 / 24.0,        1.0 / 120.0,
        1.0 / 720.0,     1.0 / 5040.0,     1.0 / 40320.0,     1.0 / 362880.0,
        1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0,
    };
    for (int i = 10; i >= 0; i--) {
        q = INV_FACT[i] + r * q;
    }
    return ldexp(1.0 + (r + r * r * q), (int)k);
}

/* log x = e ln 2 + log m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh s with s = (m-1)/(m+1),
 * |s| <= 0.172, the series of atanh to s^23 (the first term dropped < 2^-56). */
double fb_log(double x) {
    if (isnan(x)) {
        return x + x;
    }
    if (x < 0.0) {
        return NAN;
    }
    if (x == 0.0) {
        return -HUGE_VAL;
    }
    if (isinf(x)) {
        return x;
    }
    int e;
    double m = frexp(x, &e);
    if (m < SQRT_HALF) {
        m *= 2.0;
        e -= 1;
    }
    static const double L[11] = {
        1.0 / 3.0,  1.0 / 5.0,  1.0 / 7.0,  1.0 / 9.0,  1.0 / 11.0, 1.0 / 13.0,
        1.0 / 15.0, 1.0 / 17.0, 1.0 / 19.0, 1.0 / 21.0, 1.0 / 23.0,
    };
    const double f = m - 1.0, s = f / (2.0 + f), z = s * s;
    double p = L[10];
    for (int i = 9; i >= 0; i--) {
        p = L[i] + z * p;
    }
    const double log_m = 2.0 * s + 2.0 * s * z * p;
    return e * LN2_HI + (e * LN2_LO + log_m);
}

/* ---- the rest ----------------------------------------------------------------------------- */

double fb_hypot(double x, double y) {
    const double ax = fabs(x), ay = fabs(y);
    if (isinf(ax) || isinf(ay)) {
        return HUGE_VAL;
    }
    if (isnan(ax) || isnan(ay)) {
        return ax + ay;
    }
    const double big = (ax > ay) ? ax : ay, small = (ax > ay) ? ay : ax;
    if (big == 0.0) {
        return 0.0;
    }
    const double r = small / big;
    return big * sqrt(1.0 + r * r);
}

double fb_powi(double x, int n) {
    unsigned long m = (n < 0) ? 0UL - (unsigned long)(long)n : (unsigned long)n;
    double result = 1.0, b = x;
    while (m) {
        if (m & 1UL) {
            result *= b;
        }
        b *= b;
        m >>= 1;
    }
    return (n < 0) ? 1.0 / result : result;
}
