/* Small dense symmetric positive-definite linear algebra (row-major, n x n).
 *
 *   fb_chol_factor   A = L L^T in place (lower triangle holds L; the upper is left alone)
 *   fb_chol_solve    x from L L^T x = b, in place on b
 *   fb_lu_factor, fb_lu_solve  a small general matrix (partial pivoting)
 *   fb_spd_inverse   A^-1 of a small SPD matrix (n <= 6), for the D blocks of ABA
 *
 * Hand-written because these are the inner kernels of the dynamics (D^-1 per joint, M solves in
 * tests and references): a few dozen lines with no allocation, where pulling in LAPACK would add
 * a dependency, allocation and call overhead for 3x3 blocks. */
#ifndef FB_MATH_DENSE_H
#define FB_MATH_DENSE_H

#include <stdbool.h>

/* Factors the SPD matrix A (n x n, row-major) in place into its lower Cholesky factor.
 * Returns false (A partly overwritten) if a pivot is not positive or not finite. */
bool fb_chol_factor(double* A, int n);

/* Solves L L^T x = b with L from fb_chol_factor; b (n) is overwritten with x. */
void fb_chol_solve(const double* L, int n, double* b);

/* A = P L U in place (row-major n x n, partial pivoting; piv: n row indices). Returns false
 * (A partly overwritten) when a pivot is zero or not finite. */
bool fb_lu_factor(double* A, int n, int* piv);

/* Solves A x = b with the factors of fb_lu_factor; b (n) is overwritten with x. */
void fb_lu_solve(const double* LU, int n, const int* piv, double* b);

/* Ainv = A^-1 for a symmetric positive-definite 3x3 A (row-major 9), by cofactors: ABA's D
 * block of every ball joint. Returns false (Ainv untouched) unless A passes Sylvester's
 * criterion (leading minors > 0). Ainv must not alias A. */
bool fb_spd3_inverse(const double* A, double* Ainv);

/* Ainv = A^-1 for SPD A with n <= 6 (row-major, both triangles written). Ainv must not alias
 * A. Returns false if A is not positive definite. */
bool fb_spd_inverse(const double* A, int n, double* Ainv);

#endif /* FB_MATH_DENSE_H */
