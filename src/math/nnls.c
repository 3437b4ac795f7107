/* Non-negative least squares for contact wrenches (see nnls.h). */
#include "nnls.h"

#include <math.h>
#include <string.h>

#include "dense.h"

/* z_P = G_P^T (eps S^-1 + G_P G_P^T)^-1 w, z = 0 off P. False if the 6 x 6 is not SPD. */
static bool solve_passive(const double* G, int n, const double s[6], const double w[6],
                          double eps, const bool* passive, double* z) {
    double N[36], y[6];
    for (int r = 0; r < 6; r++) {
        for (int c = 0; c < 6; c++) {
            N[r * 6 + c] = r == c ? eps / s[r] : 0.0;
        }
        y[r] = w[r];
    }
    for (int j = 0; j < n; j++) {
        if (!passive[j]) {
            continue;
        }
        const double* g = G + 6 * j;
        for (int r = 0; r < 6; r++) {
            for (int c = 0; c <= r; c++) {
                N[r * 6 + c] += g[r] * g[c];
            }
        }
    }
    for (int r = 0; r < 6; r++) {
        for (int c = r + 1; c < 6; c++) {
            N[r * 6 + c] = N[c * 6 + r];
        }
    }
    if (!fb_chol_factor(N, 6)) {
        return false;
    }
    fb_chol_solve(N, 6, y);
    for (int j = 0; j < n; j++) {
        double v = 0.0;
        if (passive[j]) {
            const double* g = G + 6 * j;
            for (int r = 0; r < 6; r++) {
                v += g[r] * y[r];
            }
        }
        z[j] = v;
    }
    return true;
}

/* Gradient of the objective / 2 for edge j: g_j^T S (G x - w) + eps x_j, with the residual
 * res = G x - w given. */
static double gradient(const double* G, const double s[6], const double res[6], double eps,
                       const double* x, int j) {
    const double* g = G + 6 * j;
    double v = eps * x[j];
    for (int r = 0; r < 6; r++) {
        v += g[r] * s[r] * res[r];
    }
    return v;
}

static void residual(const double* G, int n, const double w[6], const double* x, double res[6]) {
    for (int r = 0; r < 6; r++) {
        res[r] = -w[r];
    }
    for (int j = 0; j < n; j++) {
        if (x[j] != 0.0) {
            for (int r = 0; r < 6; r++) {
                res[r] += G[6 * j + r] * x[j];
            }
        }
    }
}

int fb_nnls6(const double* G, int n, const double s[6], const double w[6], double eps,
             double* x, bool* passive) {
    double z[FB_NNLS6_MAX]; /* the subproblem's solution */
    if (n < 0 || n > FB_NNLS6_MAX) {
        return -1;
    }
    memset(passive, 0, (size_t)n * sizeof(bool));
    for (int j = 0; j < n; j++) {
        x[j] = 0.0;
    }
    /* gradient tolerance: relative to the size of the problem */
    double scale = 0.0;
    for (int r = 0; r < 6; r++) {
        scale = fmax(scale, fabs(w[r]) * s[r]);
    }
    double gmax = 0.0;
    for (int j = 0; j < n; j++) {
        for (int r = 0; r < 6; r++) {
            gmax = fmax(gmax, fabs(G[6 * j + r]));
        }
    }
    const double tol = 1e-12 * (scale * gmax + 1e-300);
    const int max_pass = 3 * n + 6;
    int pass = 0;
    double res[6];
    for (; pass < max_pass; pass++) {
        residual(G, n, w, x, res);
        /* the most negative gradient among the active (x = 0) edges */
        int best = -1;
        double gbest = -tol;
        for (int j = 0; j < n; j++) {
            if (!passive[j]) {
                const double gj = gradient(G, s, res, eps, x, j);
                if (gj < gbest) {
                    gbest = gj;
                    best = j;
                }
            }
        }
        if (best < 0) {
            break; /* KKT: every active edge's gradient is >= 0 */
        }
        passive[best] = true;
        /* the subproblem on the passive set; step back to feasibility while it leaves it */
        for (int inner = 0; inner <= n; inner++) {
            if (!solve_passive(G, n, s, w, eps, passive, z)) {
                return -1;
            }
            double alpha = 1.0;
            int hit = -1;
            for (int j = 0; j < n; j++) {
                if (passive[j] && z[j] <= 0.0) {
                    const double a = x[j] / (x[j] - z[j]);
                    if (a < alpha) {
                        alpha = a;
                        hit = j;
                    }
                }
            }
            if (hit < 0) {
                for (int j = 0; j < n; j++) {
                    x[j] = passive[j] ? z[j] : 0.0;
                }
                break;
            }
            for (int j = 0; j < n; j++) {
                if (passive[j]) {
                    x[j] += alpha * (z[j] - x[j]);
                    if (j == hit || x[j] <= 0.0) {
                        x[j] = 0.0;
                        passive[j] = false;
                    }
                }
            }
        }
    }
    return pass;
}
