/* Joint-range geometry: the swing of a spherical joint's limit (circular cone or elliptic
 * anatomical range) and the rate of its constraint, shared by the world's limit rows
 * (src/sim/world.c) and the character builder's ranges (src/mocap/ranges.c). */
#ifndef FB_MODEL_LIMIT_H
#define FB_MODEL_LIMIT_H

#include <stdbool.h>

#include "featherbone/model.h"

/* The swing coordinates s = (s1, s2) (rad) of an elliptic limit at the child rotation q
 * (fb_joint_limit in model.h): the rotation vector taking L->neutral to b = R(q) twist_axis,
 * on (u1, u2). Returns theta = |s|, the angle between them, in [0, pi]. */
double fb_limit_swing_coords(const fb_joint_limit* L, fb_quat q, double s[2]);

/* g(s) of an elliptic limit (1 on the boundary, < 1 inside) and its gradient G = dg/ds (may be
 * NULL). At s = 0, g = 0 and G = 0. */
double fb_limit_ellipse(const fb_joint_limit* L, const double s[2], double G[2]);

/* The swing constraint of spherical limit L at rotation q: `depth` (rad, > 0 past the range)
 * and the unit weights `n` over the joint's three dofs (its angular velocity w, child
 * coordinates) at which the depth grows: depth' = n . w. Circular cone: depth = swing angle -
 * L->swing. Elliptic: g' = gdot . (R w) with, writing b = cos(theta) d0 + sin(theta) e and
 * k = d0 x e [derivation in docs/CONSTRAINTS.md],
 *   gdot = (G.k) k - theta (G.e) d0 + theta cot(theta) (G.e) e        (G as a joint-frame
 * vector G1 u1 + G2 u2); n = R^T gdot / |gdot| and depth = (g - 1) / |gdot|, the first-order
 * rotation (rad) that takes the joint to the boundary. Returns false where the swing has no
 * direction (b along the axis at rest for the cone; b at d0 or opposite it for the ellipse):
 * no row there. */
bool fb_limit_swing(const fb_joint_limit* L, fb_quat q, fb_v3* n, double* depth);

/* The twist angle tau = fb_quat_twist(q, a) (rad, in (-pi, pi]) of rotation q about the unit
 * axis a (the split q = twist(a, tau) * swing), and in *T its exact rate: tau' = T . w for the
 * angular velocity w in child coordinates. With q = (c, v) and p = v . a,
 *   T = (c^2 a + c (a x v) + p v) / (c^2 + p^2),
 * which is a at zero swing and tilts from it by half the swing angle (|T| = 1 / cos(swing/2)
 * for a pure swing): a twist row along a alone pushes the wrong way at large swings. T = a
 * where the twist is undefined (c = p = 0: a half-turn swing). */
double fb_limit_twist(fb_v3 a, fb_quat q, fb_v3* T);

/* Moves the joint coordinates q (the joint's jnq) of a joint of the given type into its range
 * L: a hinge or slider clamped, a spherical joint's rotation turned back onto the swing range
 * and the twist range (first-order steps, repeated to rounding). Nothing when L is off. */
void fb_limit_project(const fb_joint_limit* L, fb_joint_type type, double* q);

#endif /* FB_MODEL_LIMIT_H */
