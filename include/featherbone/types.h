/* featherbone: small value types shared by the whole API.
 *
 * Conventions (Featherstone, "Rigid Body Dynamics Algorithms", 2008 = RBDA):
 * - SI units, right-handed, Y up; gravity is a model option.
 * - Motion vectors are [w; v] (angular first), force vectors are [n; f]. They are different
 *   types so a motion transform cannot be applied to a force by mistake.
 * - A Plücker transform B_X_A (from A coordinates to B coordinates) is stored in the short form
 *   (E, r): E rotates A coordinates into B coordinates, r is B's origin in A coordinates.
 *   As a 6x6 matrix it is [E 0; -E rx E]  [RBDA §2.8].
 * - Matrices are row-major: m[row][col].
 * - Quaternions are unit quaternions with named fields; in q vectors they are stored [w x y z].
 *   A quaternion describes the rotation R of a child frame relative to its parent, so R maps
 *   child coordinates to parent coordinates. */
#ifndef FEATHERBONE_TYPES_H
#define FEATHERBONE_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

/* A 3-vector. */
typedef struct fb_v3 {
    double x, y, z;
} fb_v3;

/* A 3x3 matrix, row-major. */
typedef struct fb_m3 {
    double m[3][3];
} fb_m3;

/* A quaternion w + xi + yj + zk (unit when it is a rotation). */
typedef struct fb_quat {
    double w, x, y, z;
} fb_quat;

/* Spatial motion vector [w; v]: angular part, then linear part (velocity of the point at the
 * frame's origin). */
typedef struct fb_mv {
    fb_v3 w, v;
} fb_mv;

/* Spatial force vector [n; f]: moment about the frame's origin, then force. */
typedef struct fb_fv {
    fb_v3 n, f;
} fb_fv;

/* Plücker transform B_X_A in short form (E, r); see the file comment. */
typedef struct fb_xf {
    fb_m3 E;
    fb_v3 r;
} fb_xf;

/* Rigid-body spatial inertia in compact form [RBDA §2.13]: mass m, first moment h = m c
 * (c = centre of mass in the body frame), and Ibar, the rotational inertia about the body
 * frame's origin (not about the centre of mass). As a 6x6 matrix: [Ibar hx; hx^T m1]. */
typedef struct fb_rbi {
    double m;
    fb_v3 h;
    fb_m3 Ibar;
} fb_rbi;

/* Articulated-body inertia: a symmetric 6x6 matrix [A B; B^T C] stored in 3x3 blocks.
 * A and C are symmetric. It maps motion vectors to force vectors. */
typedef struct fb_abi {
    fb_m3 A, B, C;
} fb_abi;

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_TYPES_H */
