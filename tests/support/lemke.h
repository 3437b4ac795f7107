/* Lemke's complementary pivoting for the standard LCP (tests only, as the direct reference for
 * projected Gauss-Seidel; Cline §2.7.1): find z >= 0 with w = M z + q >= 0 and z . w = 0. */
#ifndef FB_TEST_LEMKE_H
#define FB_TEST_LEMKE_H

#include <stdbool.h>

/* M is n x n row-major. Returns false if the pivoting fails (ray termination or too many
 * pivots), which for positive-definite M does not happen. n <= 64. */
bool lemke_solve(const double* M, const double* q, int n, double* z);

#endif /* FB_TEST_LEMKE_H */
