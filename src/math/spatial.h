/* Spatial algebra in Featherstone's conventions [RBDA ch 2]: motion vectors fb_mv [w; v], force
 * vectors fb_fv [n; f], Plücker transforms fb_xf in short form (E, r), rigid-body inertia fb_rbi
 * (m, h, Ibar about the frame origin), articulated inertia fb_abi (symmetric 6x6 in 3x3 blocks).
 * Each operation names the matrix product it replaces; none builds a 6x6 matrix.
 *
 * For X = B_X_A = (E, r): E rotates A coordinates into B coordinates, r is B's origin in A
 * coordinates, and X = [E 0; -E rx E] [RBDA eq 2.24, Table 2.5].
 *
 *   fb_xf_mv       X m          motion A -> B
 *   fb_xf_inv_mv   X^-1 m       motion B -> A
 *   fb_xf_fv       X* f         force A -> B   (X* = X^-T)
 *   fb_xf_tr_fv    X^T f        force B -> A
 *   fb_xf_mul      X2 X1        A -> B -> C
 *   fb_xf_inv      X^-1
 *   fb_crm         v x m        motion cross product   [RBDA eq 2.31]
 *   fb_crf         v x* f       force cross product    [RBDA eq 2.32]
 *   fb_rbi_mv      I m          rigid-body inertia times motion
 *   fb_xf_tr_rbi   X^T I X      inertia from B coordinates to A coordinates [RBDA Table 2.8]
 *   fb_abi_mv      IA m
 *   fb_xf_tr_abi   X^T IA X     articulated inertia from B to A coordinates
 */
#ifndef FB_MATH_SPATIAL_H
#define FB_MATH_SPATIAL_H

#include "vec3.h"

/* ---- motion and force vectors ---------------------------------------------------------- */

static inline fb_mv fb_mv_make(fb_v3 w, fb_v3 v) {
    return (fb_mv){w, v};
}
static inline fb_mv fb_mv_zero(void) {
    return (fb_mv){{0, 0, 0}, {0, 0, 0}};
}
static inline fb_mv fb_mv_add(fb_mv a, fb_mv b) {
    return (fb_mv){fb_v3_add(a.w, b.w), fb_v3_add(a.v, b.v)};
}
static inline fb_mv fb_mv_sub(fb_mv a, fb_mv b) {
    return (fb_mv){fb_v3_sub(a.w, b.w), fb_v3_sub(a.v, b.v)};
}
static inline fb_mv fb_mv_scale(fb_mv a, double s) {
    return (fb_mv){fb_v3_scale(a.w, s), fb_v3_scale(a.v, s)};
}
/* y + s x */
static inline fb_mv fb_mv_axpy(fb_mv y, double s, fb_mv x) {
    return (fb_mv){fb_v3_axpy(y.w, s, x.w), fb_v3_axpy(y.v, s, x.v)};
}
/* Component k (0..5) of [w; v]. */
static inline double fb_mv_get(fb_mv a, int k) {
    return k < 3 ? fb_v3_get(a.w, k) : fb_v3_get(a.v, k - 3);
}

static inline fb_fv fb_fv_zero(void) {
    return (fb_fv){{0, 0, 0}, {0, 0, 0}};
}
static inline fb_fv fb_fv_add(fb_fv a, fb_fv b) {
    return (fb_fv){fb_v3_add(a.n, b.n), fb_v3_add(a.f, b.f)};
}
static inline fb_fv fb_fv_sub(fb_fv a, fb_fv b) {
    return (fb_fv){fb_v3_sub(a.n, b.n), fb_v3_sub(a.f, b.f)};
}
static inline fb_fv fb_fv_scale(fb_fv a, double s) {
    return (fb_fv){fb_v3_scale(a.n, s), fb_v3_scale(a.f, s)};
}
/* y + s x */
static inline fb_fv fb_fv_axpy(fb_fv y, double s, fb_fv x) {
    return (fb_fv){fb_v3_axpy(y.n, s, x.n), fb_v3_axpy(y.f, s, x.f)};
}
/* Component k (0..5) of [n; f]. */
static inline double fb_fv_get(fb_fv a, int k) {
    return k < 3 ? fb_v3_get(a.n, k) : fb_v3_get(a.f, k - 3);
}
/* True when every component is exactly zero. */
static inline bool fb_fv_is_zero(fb_fv a) {
    return a.n.x == 0.0 && a.n.y == 0.0 && a.n.z == 0.0 && a.f.x == 0.0 && a.f.y == 0.0 &&
           a.f.z == 0.0;
}
/* The scalar product m . f (power, when m is a velocity). */
static inline double fb_mv_dot_fv(fb_mv m, fb_fv f) {
    return fb_v3_dot(m.w, f.n) + fb_v3_dot(m.v, f.f);
}

/* v x m = [w x mw; w x mv + vv x mw] [RBDA eq 2.31] */
static inline fb_mv fb_crm(fb_mv v, fb_mv m) {
    return (fb_mv){fb_v3_cross(v.w, m.w),
                   fb_v3_add(fb_v3_cross(v.w, m.v), fb_v3_cross(v.v, m.w))};
}
/* v x* f = [w x fn + vv x ff; w x ff] [RBDA eq 2.32] */
static inline fb_fv fb_crf(fb_mv v, fb_fv f) {
    return (fb_fv){fb_v3_add(fb_v3_cross(v.w, f.n), fb_v3_cross(v.v, f.f)),
                   fb_v3_cross(v.w, f.f)};
}

/* ---- Plücker transforms ---------------------------------------------------------------- */

static inline fb_xf fb_xf_identity(void) {
    return (fb_xf){fb_m3_identity(), {0, 0, 0}};
}
/* Pure rotation: B has A's origin, E rotates A coordinates into B coordinates. */
static inline fb_xf fb_xf_rot(fb_m3 E) {
    return (fb_xf){E, {0, 0, 0}};
}
/* Pure translation: B's origin is at r in A coordinates, axes parallel. */
static inline fb_xf fb_xf_xlt(fb_v3 r) {
    return (fb_xf){fb_m3_identity(), r};
}
/* X m = [E w; E (v - r x w)] */
static inline fb_mv fb_xf_mv(fb_xf X, fb_mv m) {
    return (fb_mv){fb_m3_mv(X.E, m.w), fb_m3_mv(X.E, fb_v3_sub(m.v, fb_v3_cross(X.r, m.w)))};
}
/* X^-1 m = [E^T w; E^T v + r x E^T w] */
static inline fb_mv fb_xf_inv_mv(fb_xf X, fb_mv m) {
    const fb_v3 w = fb_m3_tr_mv(X.E, m.w);
    return (fb_mv){w, fb_v3_add(fb_m3_tr_mv(X.E, m.v), fb_v3_cross(X.r, w))};
}
/* X* f = [E (n - r x f); E f] */
static inline fb_fv fb_xf_fv(fb_xf X, fb_fv f) {
    return (fb_fv){fb_m3_mv(X.E, fb_v3_sub(f.n, fb_v3_cross(X.r, f.f))), fb_m3_mv(X.E, f.f)};
}
/* X^T f = [E^T n + r x E^T f; E^T f] */
static inline fb_fv fb_xf_tr_fv(fb_xf X, fb_fv f) {
    const fb_v3 ff = fb_m3_tr_mv(X.E, f.f);
    return (fb_fv){fb_v3_add(fb_m3_tr_mv(X.E, f.n), fb_v3_cross(X.r, ff)), ff};
}
/* X2 X1 (first X1: A -> B, then X2: B -> C) = (E2 E1, r1 + E1^T r2) */
static inline fb_xf fb_xf_mul(fb_xf X2, fb_xf X1) {
    return (fb_xf){fb_m3_mul(X2.E, X1.E), fb_v3_add(X1.r, fb_m3_tr_mv(X1.E, X2.r))};
}
/* X^-1 = (E^T, -E r) */
static inline fb_xf fb_xf_inv(fb_xf X) {
    return (fb_xf){fb_m3_transpose(X.E), fb_v3_neg(fb_m3_mv(X.E, X.r))};
}
/* The point with coordinates p in A, in B coordinates: E (p - r). */
static inline fb_v3 fb_xf_point(fb_xf X, fb_v3 p) {
    return fb_m3_mv(X.E, fb_v3_sub(p, X.r));
}
/* The point with coordinates p in B, in A coordinates: r + E^T p. */
static inline fb_v3 fb_xf_inv_point(fb_xf X, fb_v3 p) {
    return fb_v3_add(X.r, fb_m3_tr_mv(X.E, p));
}

/* ---- rigid-body inertia ---------------------------------------------------------------- */

static inline fb_rbi fb_rbi_zero(void) {
    return (fb_rbi){0.0, {0, 0, 0}, fb_m3_zero()};
}
static inline fb_rbi fb_rbi_add(fb_rbi a, fb_rbi b) {
    return (fb_rbi){a.m + b.m, fb_v3_add(a.h, b.h), fb_m3_add(a.Ibar, b.Ibar)};
}
/* I m = [Ibar w + h x v; m v - h x w] */
static inline fb_fv fb_rbi_mv(fb_rbi I, fb_mv m) {
    return (fb_fv){fb_v3_add(fb_m3_mv(I.Ibar, m.w), fb_v3_cross(I.h, m.v)),
                   fb_v3_sub(fb_v3_scale(m.v, I.m), fb_v3_cross(I.h, m.w))};
}
/* X^T I X: an inertia given in B coordinates, expressed in A coordinates [RBDA Table 2.8]:
 * m' = m, h' = E^T h + m r, Ibar' = E^T Ibar E - rx (E^T h)x - (E^T h + m r)x rx. */
static inline fb_rbi fb_xf_tr_rbi(fb_xf X, fb_rbi I) {
    const fb_v3 Eh = fb_m3_tr_mv(X.E, I.h);
    const fb_v3 h = fb_v3_axpy(Eh, I.m, X.r);
    const fb_m3 rx = fb_m3_skew(X.r);
    fb_m3 Ib = fb_m3_tr_congr(X.E, I.Ibar);
    Ib = fb_m3_sub(Ib, fb_m3_mul(rx, fb_m3_skew(Eh)));
    Ib = fb_m3_sub(Ib, fb_m3_mul(fb_m3_skew(h), rx));
    return (fb_rbi){I.m, h, Ib};
}

/* ---- articulated-body inertia ---------------------------------------------------------- */

/* The 6x6 [Ibar hx; hx^T m1] of a rigid-body inertia. */
static inline fb_abi fb_abi_from_rbi(fb_rbi I) {
    const fb_m3 hx = fb_m3_skew(I.h);
    return (fb_abi){I.Ibar, hx, fb_m3_diag(I.m, I.m, I.m)};
}
static inline fb_abi fb_abi_add(fb_abi a, fb_abi b) {
    return (fb_abi){fb_m3_add(a.A, b.A), fb_m3_add(a.B, b.B), fb_m3_add(a.C, b.C)};
}
/* IA m = [A w + B v; B^T w + C v] */
static inline fb_fv fb_abi_mv(const fb_abi* IA, fb_mv m) {
    return (fb_fv){fb_v3_add(fb_m3_mv(IA->A, m.w), fb_m3_mv(IA->B, m.v)),
                   fb_v3_add(fb_m3_tr_mv(IA->B, m.w), fb_m3_mv(IA->C, m.v))};
}
/* Element (r, c) of the 6x6 matrix. */
double fb_abi_get(const fb_abi* IA, int r, int c);

/* out = X^T IA X: IA given in B coordinates, expressed in A coordinates. out may alias IA.
 * (math/rows.h's fb_rabi_xf_tr, which ABA phase 1 uses directly.) */
void fb_xf_tr_abi(fb_abi* out, fb_xf X, const fb_abi* IA);

/* inv (6x6 row-major) = IA^-1 by blocks: with W = A^-1 B and the Schur complement
 * S = C - B^T W, IA^-1 = [A^-1 + W S^-1 W^T, -W S^-1; -S^-1 W^T, S^-1]. Returns false unless
 * IA is positive definite (A and S both are). */
bool fb_abi_inverse(const fb_abi* IA, double* inv);

#endif /* FB_MATH_SPATIAL_H */
