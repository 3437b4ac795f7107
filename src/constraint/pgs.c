/* Projected Gauss-Seidel on the mixed LCP [Kokkevis §6, Cline §2.7]: the rows swept one by
 * one, each multiplier clamped to its bounds (a friction row's from its normal's current
 * multiplier); where a tracking controller's joint rows are many, block Gauss-Seidel, those
 * rows solved together by an active set over their Cholesky-factored block of K. */
#include <math.h>
#include <string.h>

#include "featherbone/constraint.h"
#include "constraint/csys_internal.h"
#include "math/dense.h"

/* w_r = (K lambda)_r + b_r - t_r. */
static inline double row_w(const fb_csys* cs, const lcp_rhs* q, int r) {
    const int nr = cs->nrow;
    return (q->b[r] - rhs_target(cs, q, r)) + dot4(cs->K + (size_t)r * (size_t)nr, cs->lambda, nr);
}

/* Largest violation of the LCP conditions (units of b). */
static double lcp_residual(const fb_csys* cs, const lcp_rhs* q) {
    double worst = 0.0;
    for (int r = 0; r < cs->nrow; r++) {
        if (!isinf(rhs_target(cs, q, r))) {
            worst = fmax(worst, lcp_violation(cs, r, row_w(cs, q, r)));
        }
    }
    return worst;
}
/* One projected Gauss-Seidel update of row r; returns how far its multiplier moved and raises
 * *scale to its size. */
static double pgs_row(fb_csys* cs, int r, double* scale) {
    if (!cs->pgs_on[r]) {
        return 0.0; /* a row no force can move, or one left out of this solve */
    }
    const int nr = cs->nrow;
    const double w = cs->pgs_rhs[r] + dot4(cs->K + (size_t)r * (size_t)nr, cs->lambda, nr);
    double lo, hi;
    bounds(cs, r, &lo, &hi);
    /* fmin(hi, fmax(lo, v)) for lo <= hi, without the library calls */
    const double v = cs->lambda[r] - w / cs->K[r * nr + r];
    const double vl = v > lo ? v : lo;
    const double l = vl < hi ? vl : hi;
    const double moved = fabs(l - cs->lambda[r]);
    const double size = fabs(l);
    *scale = size > *scale ? size : *scale;
    cs->lambda[r] = l;
    return moved;
}

/* The rows solved as one block: joint rows (FB_ROW_DOF, FB_ROW_JOINT) whose bounds contain 0
 * and that take part in this solve, such as a tracking controller's acceleration rows. Returns
 * their number (into cs->blk_idx) and factors K over them into cs->blk_L; 0 when there are too
 * few to be worth it or the block is not positive definite. */
static int block_rows(fb_csys* cs, const lcp_rhs* q) {
    const int nr = cs->nrow;
    int nb = 0;
    for (int r = 0; r < nr; r++) {
        const fb_row* row = &cs->row[r];
        double lo, hi;
        bounds(cs, r, &lo, &hi);
        if ((row->type == FB_ROW_DOF || row->type == FB_ROW_JOINT) && row->friction_of < 0 &&
            lo < 0.0 && hi > 0.0 && !isinf(rhs_target(cs, q, r)) &&
            cs->K[r * nr + r] > 0.0) {
            cs->blk_idx[nb++] = r;
        }
    }
    if (nb < BLOCK_MIN_ROWS) {
        return 0;
    }
    for (int i = 0; i < nb; i++) {
        for (int j = 0; j < nb; j++) {
            cs->blk_L[i * nb + j] = cs->K[cs->blk_idx[i] * nr + cs->blk_idx[j]];
        }
    }
    return fb_chol_factor(cs->blk_L, nb) ? nb : 0;
}

/* Changes of the block's held set per sweep (each a factorisation of K over the free rows),
 * and one more per row in the first sweep, which starts from the last step's set; the set
 * carries over to the next sweep when they run out. */
#define BLOCK_CHANGES 8

/* The block's rows not held at a bound into cs->blk_free; returns their count. */
static int block_free_rows(fb_csys* cs, int nb) {
    int nf = 0;
    for (int i = 0; i < nb; i++) {
        if (cs->blk_state[i] == 0) {
            cs->blk_free[nf++] = i;
        }
    }
    return nf;
}

/* The factor of K over the free rows: the whole block's (factored once per solve) when none is
 * held, else K_FF factored anew when the held set changed since the last factorisation. NULL
 * when K_FF is not positive definite (cannot happen for a positive definite block). */
static const double* block_factor(fb_csys* cs, int nb, int nf) {
    if (nf == nb) {
        return cs->blk_L;
    }
    if (cs->blk_fver != cs->blk_ver) {
        const int nr = cs->nrow;
        for (int i = 0; i < nf; i++) {
            const int ri = cs->blk_idx[cs->blk_free[i]];
            for (int j = 0; j < nf; j++) {
                cs->blk_F[i * nf + j] = cs->K[ri * nr + cs->blk_idx[cs->blk_free[j]]];
            }
        }
        if (!fb_chol_factor(cs->blk_F, nf)) {
            return NULL;
        }
        cs->blk_fver = cs->blk_ver;
    }
    return cs->blk_F;
}

/* The held set from the multipliers the solve starts from (the last step's, by row identity):
 * a row at or past a bound is held there. A body at rest keeps its set from step to step. */
static void block_start(fb_csys* cs, int nb) {
    for (int i = 0; i < nb; i++) {
        const int r = cs->blk_idx[i];
        double lo, hi;
        bounds(cs, r, &lo, &hi);
        const double l = cs->lambda[r];
        cs->blk_state[i] = l <= lo ? -1 : (l >= hi ? 1 : 0);
        cs->lambda[r] = l < lo ? lo : (l > hi ? hi : l);
    }
}

/* The block's multipliers with the other rows' held: the box-constrained QP of the block
 * (its rows' residuals w = K lambda + b - t are the gradient of 1/2 lambda' K_BB lambda plus
 * a linear term), solved by a primal active-set method [Nocedal & Wright, "Numerical
 * Optimization", 2nd ed., §16.5]. Each pass takes the free rows' equality step (their
 * residuals vanish after lambda_F -= K_FF^-1 w_F); when that leaves the bounds it goes as far
 * as they allow and holds the row that stops it; else it frees the held row whose residual
 * pulls hardest back inside, and stops when none does (the block's exact solution). The
 * objective never rises (it falls with every step of nonzero length), so the held set does
 * not cycle as it could when every row out of its bounds was clamped at once (the earlier
 * form, with which tests/test_constraint.c's random blocks reach the sweep cap). At most
 * `changes` changes of the held set (bounding degenerate steps of zero length). Returns how
 * far the multipliers moved. */
static double block_step(fb_csys* cs, const lcp_rhs* q, int nb, int changes) {
    double* x = cs->blk_x;
    double moved = 0.0;
    for (int change = 0; change <= changes; change++) {
        const int nf = block_free_rows(cs, nb);
        const double* L = nf > 0 ? block_factor(cs, nb, nf) : NULL;
        if (nf > 0 && !L) {
            break;
        }
        if (nf > 0) {
            for (int k = 0; k < nf; k++) {
                x[k] = row_w(cs, q, cs->blk_idx[cs->blk_free[k]]);
            }
            fb_chol_solve(L, nf, x); /* the step is -x */
            double alpha = 1.0;
            int stop = -1, stop_side = 0;
            for (int k = 0; k < nf; k++) {
                const int r = cs->blk_idx[cs->blk_free[k]];
                double lo, hi;
                bounds(cs, r, &lo, &hi);
                const double l = cs->lambda[r], d = -x[k];
                if (d < 0.0 && l + d < lo) {
                    const double a = fmax(0.0, (lo - l) / d);
                    if (a < alpha) {
                        alpha = a, stop = k, stop_side = -1;
                    }
                } else if (d > 0.0 && l + d > hi) {
                    const double a = fmax(0.0, (hi - l) / d);
                    if (a < alpha) {
                        alpha = a, stop = k, stop_side = 1;
                    }
                }
            }
            for (int k = 0; k < nf; k++) {
                const int r = cs->blk_idx[cs->blk_free[k]];
                double lo, hi;
                bounds(cs, r, &lo, &hi);
                const double l = fmin(hi, fmax(lo, cs->lambda[r] - alpha * x[k]));
                moved = fmax(moved, fabs(l - cs->lambda[r]));
                cs->lambda[r] = l;
            }
            if (stop >= 0) {
                const int i = cs->blk_free[stop], r = cs->blk_idx[i];
                double lo, hi;
                bounds(cs, r, &lo, &hi);
                cs->blk_state[i] = stop_side;
                cs->lambda[r] = stop_side < 0 ? lo : hi;
                cs->blk_ver++;
                continue;
            }
        }
        /* the free rows are solved: free the held row pulled hardest back inside */
        int pull = -1;
        double most = 0.0;
        for (int i = 0; i < nb; i++) {
            const int st = cs->blk_state[i];
            if (st != 0) {
                const double w = row_w(cs, q, cs->blk_idx[i]);
                const double inward = st < 0 ? -w : w;
                if (inward > most) {
                    most = inward, pull = i;
                }
            }
        }
        if (pull < 0) {
            break;
        }
        cs->blk_state[pull] = 0;
        cs->blk_ver++;
    }
    return moved;
}

/* Projected Gauss-Seidel; when enough rows are joint rows with bounds around zero (a tracking
 * controller's), block Gauss-Seidel instead: those rows are solved together (an active-set
 * solve of their K block within their bounds, block_step) and the other rows (contacts,
 * friction, limits) one by one between block solves. PGS alone converges slowly on the strong
 * coupling of M^-1 between the joints of one body, and more slowly still once torque limits
 * bind; the block solve removes that coupling from the iteration. The sweeps stop when no
 * multiplier moved by more than tol, or by more than rel_tol times the largest multiplier
 * after the sweep (the world's: 1e-8; docs/CONSTRAINTS.md "The solver"). */
void fb_pgs_sweeps(fb_csys* cs, const lcp_rhs* q, const fb_pgs_opts* o) {
    const int nr = cs->nrow;
    const int nb = block_rows(cs, q);
    block_start(cs, nb);
    cs->blk_ver = 1;
    cs->blk_fver = 0;
    /* what stays fixed during the sweeps: which rows move, and b - t (w = K lambda + b - t) */
    for (int r = 0; r < nr; r++) {
        const double t = rhs_target(cs, q, r);
        cs->pgs_on[r] = cs->K[r * nr + r] > 0.0 && !isinf(t);
        cs->pgs_rhs[r] = q->b[r] - t;
    }
    int it = 0;
    for (; it < o->max_iter; it++) {
        const int changes = BLOCK_CHANGES + (it == 0 ? nb : 0);
        double moved = nb > 0 ? block_step(cs, q, nb, changes) : 0.0;
        double scale = 0.0; /* the largest multiplier after the sweep */
        for (int i = 0; i < nb; i++) {
            scale = fmax(scale, fabs(cs->lambda[cs->blk_idx[i]]));
        }
        for (int r = 0, i = 0; r < nr; r++) {
            if (i < nb && cs->blk_idx[i] == r) {
                i++;
                continue;
            }
            const double mr = pgs_row(cs, r, &scale);
            moved = mr > moved ? mr : moved;
        }
        if (moved <= o->tol || moved <= o->rel_tol * scale) {
            it++;
            break;
        }
    }
    cs->iterations = it;
    cs->residual = lcp_residual(cs, q);
}
