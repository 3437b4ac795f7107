/* Small dense SPD kernels: Cholesky factor, solve, inverse. */
#include "dense.h"

#include <math.h>

bool fb_chol_factor(double* A, int n) {
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (int k = 0; k < j; k++) {
            d -= A[j * n + k] * A[j * n + k];
        }
        /* !(d > 0) also rejects NaN */
        if (!(d > 0.0) || !isfinite(d)) {
            return false;
        }
        const double ljj = sqrt(d);
        A[j * n + j] = ljj;
        for (int i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (int k = 0; k < j; k++) {
                s -= A[i * n + k] * A[j * n + k];
            }
            A[i * n + j] = s / ljj;
        }
    }
    return true;
}

void fb_chol_solve(const double* L, int n, double* b) {
    /* forward: L y = b */
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) {
            s -= L[i * n + k] * b[k];
        }
        b[i] = s / L[i * n + i];
    }
    /* backward: L^T x = y */
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++) {
            s -= L[k * n + i] * b[k];
        }
        b[i] = s / L[i * n + i];
    }
}

/* Largest n fb_spd_inverse accepts: a floating joint's 6 dofs. */
#define SPD_INVERSE_N_MAX 6

bool fb_spd_inverse(const double* A, int n, double* Ainv) {
    double L[SPD_INVERSE_N_MAX * SPD_INVERSE_N_MAX];
    if (n < 1 || n > SPD_INVERSE_N_MAX) {
        return false;
    }
    for (int i = 0; i < n * n; i++) {
        L[i] = A[i];
    }
    if (!fb_chol_factor(L, n)) {
        return false;
    }
    for (int c = 0; c < n; c++) {
        double col[SPD_INVERSE_N_MAX];
        for (int r = 0; r < n; r++) {
            col[r] = (r == c) ? 1.0 : 0.0;
        }
        fb_chol_solve(L, n, col);
        for (int r = 0; r < n; r++) {
            Ainv[r * n + c] = col[r];
        }
    }
    /* the inverse of a symmetric matrix is symmetric: make it exactly so */
    for (int r = 0; r < n; r++) {
        for (int c = r + 1; c < n; c++) {
            const double s = 0.5 * (Ainv[r * n + c] + Ainv[c * n + r]);
            Ainv[r * n + c] = s;
            Ainv[c * n + r] = s;
        }
    }
    return true;
}
