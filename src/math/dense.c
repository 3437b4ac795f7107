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

bool fb_lu_factor(double* A, int n, int* piv) {
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++) {
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) {
                p = i;
            }
        }
        piv[k] = p;
        if (p != k) {
            for (int j = 0; j < n; j++) {
                const double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
        }
        const double d = A[k * n + k];
        if (d == 0.0 || !isfinite(d)) {
            return false;
        }
        for (int i = k + 1; i < n; i++) {
            const double l = A[i * n + k] / d;
            A[i * n + k] = l;
            for (int j = k + 1; j < n; j++) {
                A[i * n + j] -= l * A[k * n + j];
            }
        }
    }
    return true;
}

void fb_lu_solve(const double* LU, int n, const int* piv, double* b) {
    for (int k = 0; k < n; k++) {
        const double t = b[k];
        b[k] = b[piv[k]];
        b[piv[k]] = t;
    }
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) {
            s -= LU[i * n + k] * b[k];
        }
        b[i] = s;
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++) {
            s -= LU[i * n + k] * b[k];
        }
        b[i] = s / LU[i * n + i];
    }
}

bool fb_spd3_inverse(const double* A, double* Ainv) {
    const double a = A[0], b = A[1], c = A[2], e = A[4], f = A[5], i = A[8];
    /* cofactors of the symmetric matrix [a b c; b e f; c f i] */
    const double c00 = e * i - f * f, c01 = c * f - b * i, c02 = b * f - c * e;
    const double det = a * c00 + b * c01 + c * c02;
    /* Sylvester: a > 0, ae - b^2 > 0, det > 0; !(x > 0) also rejects NaN */
    if (!(a > 0.0) || !(a * e - b * b > 0.0) || !(det > 0.0) || !isfinite(det)) {
        return false;
    }
    const double s = 1.0 / det;
    const double c11 = a * i - c * c, c12 = b * c - a * f, c22 = a * e - b * b;
    Ainv[0] = c00 * s;
    Ainv[1] = Ainv[3] = c01 * s;
    Ainv[2] = Ainv[6] = c02 * s;
    Ainv[4] = c11 * s;
    Ainv[5] = Ainv[7] = c12 * s;
    Ainv[8] = c22 * s;
    return true;
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
