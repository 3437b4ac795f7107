/* Elementary functions that round the same on every machine.
 *
 *   fb_sin, fb_cos, fb_atan2, fb_asin, fb_acos, fb_exp, fb_log, fb_hypot, fb_powi
 *
 * Why not libm: glibc picks its sin, cos, atan2, asin, acos, exp, log and pow at run time by
 * the processor (x86-64: FMA and AVX2 variants beside the baseline ones), and the variants do
 * not round alike in the last bit. A last bit is enough to make a free root's walk another walk,
 * so a plan searched on one processor fell on another (docs/SIMULATE.md, "The same bits on
 * every processor"). No library in Debian offers portable rounding (openlibm and CORE-MATH are not
 * packaged), so these are written here: textbook range reduction (Cody & Waite, "Software
 * Manual for the Elementary Functions", 1980) and truncated series, in plain double
 * arithmetic that the build never contracts into FMA (-ffp-contract=off). Each is within 3
 * ulp of glibc's (tests/test_math.c checks them against it, an independent implementation)
 * and uses only operations whose result IEEE 754 fixes (+, -, *, /, sqrt, floor, frexp,
 * ldexp), so any machine with IEEE doubles evaluated in double gives the same bits (measured on
 * x86-64 with glibc's variants; another architecture was not tried).
 *
 * The special values follow C99 Annex F where the library can meet them (NaN in, NaN out;
 * infinities; signed zeros of sin, atan2, asin). fb_sin and fb_cos reduce their argument
 * exactly only below FB_TRIG_REDUCE_MAX; beyond it (1.6e6 rad, never an angle of this
 * library) they fall back to libm. */
#ifndef FB_MATH_DETMATH_H
#define FB_MATH_DETMATH_H

/* rad: the largest |x| fb_sin and fb_cos reduce themselves (under 2^20 quarter turns). */
#define FB_TRIG_REDUCE_MAX 1.6e6

double fb_sin(double x);
double fb_cos(double x);
double fb_atan2(double y, double x);
double fb_asin(double x);
double fb_acos(double x);
double fb_exp(double x);
double fb_log(double x);
/* sqrt(x^2 + y^2) without overflow or underflow in the squares. */
double fb_hypot(double x, double y);
/* x^n for an integer n, by repeated squaring. */
double fb_powi(double x, int n);

#endif
