/* Lemke's algorithm with the covering vector e = 1, on a dense tableau (see lemke.h). */
#include "lemke.h"

#include <math.h>
#include <string.h>

#define LEMKE_MAX_N 64
#define LEMKE_EPS 1e-13

/* Tableau rows: [w (n) | z (n) | z0 | rhs], for w - M z - e z0 = q. Variables are numbered
 * 0..n-1 (w), n..2n-1 (z), 2n (z0). */
bool lemke_solve(const double* M, const double* q, int n, double* z) {
    static double T[LEMKE_MAX_N][2 * LEMKE_MAX_N + 2];
    int basis[LEMKE_MAX_N];
    if (n > LEMKE_MAX_N) {
        return false;
    }
    const int cols = 2 * n + 2, z0 = 2 * n, rhs = 2 * n + 1;
    int r = 0;
    for (int i = 0; i < n; i++) {
        memset(T[i], 0, sizeof T[i]);
        T[i][i] = 1.0;
        for (int j = 0; j < n; j++) {
            T[i][n + j] = -M[i * n + j];
        }
        T[i][z0] = -1.0;
        T[i][rhs] = q[i];
        basis[i] = i;
        if (q[i] < q[r]) {
            r = i;
        }
        z[i] = 0.0;
    }
    if (q[r] >= 0.0) {
        return true; /* z = 0 solves it */
    }
    int entering = z0;
    for (int iter = 0; iter < 50 * n + 50; iter++) {
        /* pivot on (r, entering) */
        const double piv = T[r][entering];
        for (int c = 0; c < cols; c++) {
            T[r][c] /= piv;
        }
        for (int i = 0; i < n; i++) {
            if (i != r && T[i][entering] != 0.0) {
                const double f = T[i][entering];
                for (int c = 0; c < cols; c++) {
                    T[i][c] -= f * T[r][c];
                }
            }
        }
        const int leaving = basis[r];
        basis[r] = entering;
        if (leaving == z0) {
            for (int i = 0; i < n; i++) {
                if (basis[i] >= n && basis[i] < 2 * n) {
                    z[basis[i] - n] = T[i][rhs];
                }
            }
            return true;
        }
        /* the complement of the variable that left enters */
        entering = leaving < n ? leaving + n : leaving - n;
        /* ratio test over rows where the entering column is negative in w = ... form: the
         * tableau holds x_B + A x_N = rhs, so entering with a positive coefficient lowers x_B */
        r = -1;
        double best = INFINITY;
        for (int i = 0; i < n; i++) {
            if (T[i][entering] > LEMKE_EPS) {
                const double ratio = T[i][rhs] / T[i][entering];
                if (ratio < best) {
                    best = ratio;
                    r = i;
                }
            }
        }
        if (r < 0) {
            return false; /* ray termination */
        }
    }
    return false;
}
