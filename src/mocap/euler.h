/* Euler angles at the BVH boundary, in a joint's own channel order.
 *
 * BVH composes the rotation channels in file order: channels "Zrotation Xrotation Yrotation"
 * mean R = Rz(z) Rx(x) Ry(y), mapping the joint's coordinates to its parent's. Every order of
 * three distinct axes (Tait-Bryan) is handled; joints with one or two rotation channels use
 * the same formulas with the missing axes completed. */
#ifndef FB_MOCAP_EULER_H
#define FB_MOCAP_EULER_H

#include "featherbone/types.h"

/* axes[k] in {0, 1, 2} (x, y, z), n = 1..3 rotation angles (rad) in that order. */
fb_quat fb_euler_to_quat(const int* axes, int n, const double* angles);

/* Angles (rad) with R(q) = R_axes[0](a0) R_axes[1](a1) R_axes[2](a2) for three distinct axes.
 * When prev is not NULL the result is, of the two equivalent solutions shifted by multiples
 * of 2 pi, the one nearest prev (so a sequence of frames never jumps by 360 degrees). */
void fb_quat_to_euler(fb_quat q, const int* axes, const double* prev, double* angles);

/* Completes 1 or 2 distinct axes to a permutation of (0, 1, 2): the given axes first. */
void fb_euler_complete_axes(const int* axes, int n, int* out3);

#endif /* FB_MOCAP_EULER_H */
