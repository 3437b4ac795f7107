/* Non-negative least squares with a wrench-sized right-hand side.
 *
 *   fb_nnls6   min ||S^1/2 (G x - w)||^2 + eps ||x||^2 over x >= 0, G 6 x n
 *
 * The contact-force distribution of the balance controller: x are the coefficients of the
 * friction-pyramid edges at the support points, G maps them to the wrench they put on the
 * root, w is the wrench wanted. Lawson and Hanson's active-set method ("Solving Least Squares
 * Problems", 1974, ch. 23), each subproblem solved through the identity
 * (eps I + G_P^T S G_P)^-1 G_P^T S w = G_P^T (eps S^-1 + G_P G_P^T)^-1 w, so that a pass
 * costs one 6 x 6 Cholesky whatever the number of edges. Hand-written: a few dozen lines, no
 * allocation, where a general QP library would add a dependency and allocate per call. */
#ifndef FB_MATH_NNLS_H
#define FB_MATH_NNLS_H

#include <stdbool.h>

/* Most unknowns fb_nnls6 takes. */
#define FB_NNLS6_MAX 256

/* Solves the problem above for x (n <= FB_NNLS6_MAX), starting from x = 0. G is column-major (6 doubles per column), s the six
 * diagonal weights (> 0), eps > 0. `passive` (n bools) is scratch; on return it marks the
 * x > 0. Returns the passes made (at most 3 n + 6); negative when a 6 x 6 system was not
 * positive definite or n is out of range (x then holds the last feasible point). */
int fb_nnls6(const double* G, int n, const double s[6], const double w[6], double eps,
             double* x, bool* passive);

#endif /* FB_MATH_NNLS_H */
