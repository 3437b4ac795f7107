/* Joint-space inertia: the composite-rigid-body algorithm [RBDA T6.2], and its sparse
 * factorisation and inverse [RBDA §6.5]. */
#include "dynamics/crba.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "featherbone/dynamics.h"
#include "math/spatial.h"
#include "model/joint.h"

void fb_crba_matrix(const fb_model* m, fb_data* d, double* M) {
    assert(d->stage & FB_STAGE_POS);
    const int nv = m->nv;
    memset(M, 0, (size_t)nv * (size_t)nv * sizeof(double));
    for (int i = 1; i < m->nbody; i++) {
        d->IC[i] = m->I[i];
    }
    /* leaves to root: composite inertias */
    for (int i = m->nbody - 1; i >= 1; i--) {
        const int p = m->parent[i];
        if (p != 0) {
            d->IC[p] = fb_rbi_add(d->IC[p], fb_xf_tr_rbi(d->X_up[i], d->IC[i]));
        }
    }
    /* each body's F = I^c S, carried up the chain of ancestors: M_ij = F^T S_j */
    for (int i = m->nbody - 1; i >= 1; i--) {
        const int k0 = m->v_adr[i], n = m->jnv[i];
        /* implicit damping: the joint's torque -b (qd + h qdd) puts h b on the diagonal */
        const double extra = d->damping_dt * m->damping[i];
        for (int c = 0; c < n; c++) {
            d->F[k0 + c] = fb_rbi_mv(d->IC[i], m->S[k0 + c]);
            for (int r = 0; r < n; r++) {
                M[(k0 + r) * nv + k0 + c] =
                    fb_mv_dot_fv(m->S[k0 + r], d->F[k0 + c]) + (r == c ? extra : 0.0);
            }
        }
        for (int j = i; m->parent[j] != 0;) {
            const fb_xf X = d->X_up[j];
            j = m->parent[j];
            const int j0 = m->v_adr[j];
            for (int c = 0; c < n; c++) {
                d->F[k0 + c] = fb_xf_tr_fv(X, d->F[k0 + c]);
                for (int r = 0; r < m->jnv[j]; r++) {
                    const double Mij = fb_mv_dot_fv(m->S[j0 + r], d->F[k0 + c]);
                    M[(j0 + r) * nv + k0 + c] = Mij;
                    M[(k0 + c) * nv + j0 + r] = Mij;
                }
            }
        }
    }
}

void fb_inertia_mul(const fb_model* m, fb_data* d, const double* x, double* y) {
    assert(d->stage & FB_STAGE_POS);
    /* root to leaves: a_i = X_up a_parent + S_i x_i, f_i = I_i a_i */
    d->da[0] = fb_mv_zero();
    for (int i = 1; i < m->nbody; i++) {
        d->da[i] = fb_mv_add(fb_xf_mv(d->X_up[i], d->da[m->parent[i]]), fb_S_mul(m, i, x));
        d->dpA[i] = fb_rbi_mv(m->I[i], d->da[i]);
    }
    /* leaves to root: y_i = S_i^T f_i (+ h b x_i), f_parent += X_up^T f_i */
    for (int i = m->nbody - 1; i >= 1; i--) {
        fb_S_tr_mul(m, i, d->dpA[i], y);
        const double extra = d->damping_dt * m->damping[i];
        for (int k = m->v_adr[i]; extra != 0.0 && k < m->v_adr[i] + m->jnv[i]; k++) {
            y[k] += extra * x[k];
        }
        const int p = m->parent[i];
        if (p != 0) {
            d->dpA[p] = fb_fv_add(d->dpA[p], fb_xf_tr_fv(d->X_up[i], d->dpA[i]));
        }
    }
}

void fb_crba(const fb_model* m, fb_data* d) {
    fb_kinematics_pos(m, d);
    const double h = d->damping_dt;
    d->damping_dt = 0.0; /* fb_crba gives M itself */
    fb_crba_matrix(m, d, d->M);
    d->damping_dt = h;
    d->stage |= FB_STAGE_CRBA;
}

/* The dofs above body i (on its ancestors). */
int fb_dof_tree_size(const fb_model* m) {
    int size = 0;
    for (int i = 1; i < m->nbody; i++) {
        int above = 0; /* dofs on the ancestors */
        for (int j = m->parent[i]; j > 0; j = m->parent[j]) {
            above += m->jnv[j];
        }
        for (int c = 0; c < m->jnv[i]; c++) {
            size += above + c + 1;
        }
    }
    return size;
}

void fb_dof_tree_init(const fb_model* m, fb_dof_tree* t) {
    t->n = m->nv;
    int off = 0;
    for (int i = 1; i < m->nbody; i++) {
        const int k0 = m->v_adr[i], nk = m->jnv[i];
        int up = -1;
        for (int j = m->parent[i]; nk > 0 && j > 0; j = m->parent[j]) {
            if (m->jnv[j] > 0) {
                up = m->v_adr[j] + m->jnv[j] - 1;
                break;
            }
        }
        for (int c = 0; c < nk; c++) {
            fb_dof_tree_set(t, k0 + c, c == 0 ? up : k0 + c - 1, &off);
        }
    }
    t->size = off;
}

void fb_dof_tree_set(fb_dof_tree* t, int k, int parent, int* off) {
    t->lambda[k] = parent;
    t->len[k] = parent < 0 ? 1 : t->len[parent] + 1;
    t->off[k] = *off;
    if (parent >= 0) {
        memcpy(t->chain + *off, t->chain + t->off[parent], (size_t)t->len[parent] * sizeof(int));
    }
    t->chain[*off + t->len[k] - 1] = k;
    *off += t->len[k];
}

bool fb_ltl_factor(const fb_dof_tree* t, const double* M, double* Lc) {
    const int n = t->n;
    /* gather: row k of the lower triangle at the columns of k's chain */
    for (int k = 0; k < n; k++) {
        const int* ck = t->chain + t->off[k];
        const double* Mk = M + (size_t)k * (size_t)n;
        double* Hk = Lc + t->off[k];
        for (int p = 0; p < t->len[k]; p++) {
            Hk[p] = Mk[ck[p]];
        }
    }
    /* RBDA Table 6.3, leaves first. With the chains as prefixes, row i = chain_k[p] of the
     * update H_ij -= H_ki H_kj (j on i's chain) is positions 0..p of both rows */
    for (int k = n - 1; k >= 0; k--) {
        double* Hk = Lc + t->off[k];
        const int lk = t->len[k];
        if (!(Hk[lk - 1] > 0.0) || !isfinite(Hk[lk - 1])) {
            return false;
        }
        const double a = sqrt(Hk[lk - 1]);
        Hk[lk - 1] = a;
        const double inv = 1.0 / a;
        for (int p = 0; p < lk - 1; p++) {
            Hk[p] *= inv;
        }
        const int* ck = t->chain + t->off[k];
        for (int p = lk - 2; p >= 0; p--) {
            double* Hi = Lc + t->off[ck[p]];
            const double hki = Hk[p];
            for (int q = 0; q <= p; q++) {
                Hi[q] -= hki * Hk[q];
            }
        }
    }
    return true;
}

/* fb_ltl_solve_many's work, inlined in both solves so that the one right-hand side of
 * fb_ltl_solve is a loop of its own (through the general loop, a few per cent of the
 * joint-space solve's time) */
static inline void ltl_solve(const fb_dof_tree* t, const double* Lc, double* const* xs, int m) {
    const int n = t->n;
    /* L^T y = x, leaves first: y_k = x_k / L_kk, then x_i -= L_ki y_k along k's chain. A dof
     * whose x is still zero when reached (nothing below it pushed) is skipped, so a sparse x
     * (a force along one path to the root) costs only that path */
    for (int k = n - 1; k >= 0; k--) {
        const double* Lk = Lc + t->off[k];
        const int lk = t->len[k];
        const int* ck = t->chain + t->off[k];
        for (int j = 0; j < m; j++) {
            double* x = xs[j];
            if (x[k] == 0.0) {
                continue;
            }
            const double y = x[k] / Lk[lk - 1];
            x[k] = y;
            for (int p = 0; p < lk - 1; p++) {
                x[ck[p]] -= Lk[p] * y;
            }
        }
    }
    /* L z = y, root first: z_k = (y_k - sum over k's ancestors i of L_ki z_i) / L_kk */
    for (int k = 0; k < n; k++) {
        const double* Lk = Lc + t->off[k];
        const int lk = t->len[k];
        const int* ck = t->chain + t->off[k];
        for (int j = 0; j < m; j++) {
            double* x = xs[j];
            double s = x[k];
            for (int p = 0; p < lk - 1; p++) {
                s -= Lk[p] * x[ck[p]];
            }
            x[k] = s / Lk[lk - 1];
        }
    }
}

void fb_ltl_solve(const fb_dof_tree* t, const double* Lc, double* x) {
    ltl_solve(t, Lc, &x, 1);
}

void fb_ltl_solve_many(const fb_dof_tree* t, const double* Lc, double* const* xs, int m) {
    ltl_solve(t, Lc, xs, m);
}
