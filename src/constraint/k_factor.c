/* K = J M^-1 J^T by the sparse factorisation of M (FB_K_FACTOR): each articulation's M by CRBA
 * [RBDA T6.2] factored as L^T L along its tree [RBDA §6.5], a column of M^-1 J^T by one sparse
 * solve per row; and FB_K_JOINT_SPACE, which leaves out the share of K of an articulation the
 * joint-space solve takes (joint_space.c), forms the other shares by test forces
 * (k_test_forces.c) and the left-out ones only when a solve needs them (fb_k_form_needed). */
#include <math.h>
#include <string.h>

#include "featherbone/constraint.h"
#include "featherbone/dynamics.h"
#include "constraint/csys_internal.h"
#include "dynamics/crba.h"
#include "util/error.h"

/* ---- K by the sparse factorisation of M -------------------------------------------------- */

/* The generalised force J^T f of a unit force `dir` (world) at point p of body `body` of
 * articulation a: S_k^T (X_0[j]* f) for each dof k of each body j on the path to the root,
 * appended as (global dof, value) entries; returns how many. */
static int path_force(const fb_csys* cs, int a, int body, fb_v3 p, fb_v3 dir, int* idx,
                      double* val) {
    const fb_model* m = cs->m[a];
    const fb_data* d = cs->d[a];
    const fb_fv f = point_force(d, body, p, dir);
    int n = 0;
    for (int j = body; j != 0; j = m->parent[j]) {
        if (m->jnv[j] == 0) {
            continue;
        }
        const fb_fv fj = fb_xf_fv(d->X_0[j], f);
        for (int k = m->v_adr[j]; k < m->v_adr[j] + m->jnv[j]; k++) {
            idx[n] = cs->v_off[a] + k;
            val[n++] = fb_mv_dot_fv(m->S[k], fj);
        }
    }
    return n;
}

/* Row r's generalised force J_r^T (what its multiplier does to the joints) as sparse entries
 * into jidx/jval from `start`; returns the count. A dof may appear twice (a row between two
 * bodies of one articulation lists both paths): the entries add. */
static int row_force(fb_csys* cs, int r, int start) {
    const fb_row* row = &cs->row[r];
    int* idx = cs->jidx + start;
    double* val = cs->jval + start;
    const int a = row->art;
    const fb_model* m = cs->m[a];
    if (row->type == FB_ROW_DOF) {
        idx[0] = cs->v_off[a] + row->dof;
        val[0] = 1.0;
        return 1;
    }
    if (row->type == FB_ROW_JOINT) {
        const double w[3] = {row->n.x, row->n.y, row->n.z};
        int n = 0;
        for (int k = 0; k < m->jnv[row->body] && k < 3; k++) {
            idx[n] = cs->v_off[a] + m->v_adr[row->body] + k;
            val[n++] = w[k];
        }
        return n;
    }
    int n = path_force(cs, a, row->body, row->p, row->n, idx, val);
    if (row->art_b >= 0) {
        n += path_force(cs, row->art_b, row->body_b, row->p_b, fb_v3_neg(row->n), idx + n,
                        val + n);
    }
    return n;
}

/* Row r's cs->unformed: whether it acts on articulations whose share of K is left out
 * (FB_K_JOINT_SPACE), and only on those. */
static unsigned char row_unformed(const fb_csys* cs, int r) {
    bool lazy = false, other = false;
    for (int e = cs->jstart[r]; e < cs->jstart[r] + cs->jcount[r]; e++) {
        const bool l = cs->lazy[cs->dof_art[cs->jidx[e]]];
        lazy = lazy || l;
        other = other || !l;
    }
    return lazy ? (other ? 1 : 2) : 0;
}

/* Articulation k's part of column c of dqdd, M_k^-1 J_ck^T, by one sparse solve with M_k's
 * factor. */
static void factor_part(fb_csys* cs, int c, int k) {
    double* out = cs->dqdd + (size_t)c * (size_t)cs->nv_total + cs->v_off[k];
    memset(out, 0, (size_t)cs->m[k]->nv * sizeof(double));
    for (int e = cs->jstart[c]; e < cs->jstart[c] + cs->jcount[c]; e++) {
        if (cs->dof_art[cs->jidx[e]] == k) {
            out[cs->jidx[e] - cs->v_off[k]] += cs->jval[e];
        }
    }
    fb_ltl_solve(&((const fb_dof_tree*)cs->tree)[k], cs->L + cs->l_off[k], out);
}

/* The articulations row c acts on, into touched. */
static void row_arts(const fb_csys* cs, int c, bool touched[FB_CSYS_MAX_ART]) {
    for (int k = 0; k < cs->nart; k++) {
        touched[k] = false;
    }
    for (int e = cs->jstart[c]; e < cs->jstart[c] + cs->jcount[c]; e++) {
        touched[cs->dof_art[cs->jidx[e]]] = true;
    }
}

/* Column c of dqdd, M^-1 J_c^T: each articulation's part by a sparse solve with its factor
 * (FB_K_FACTOR) or by test forces (FB_K_JOINT_SPACE, which leaves out the parts of the
 * articulations solved in joint space: zero). */
static void form_column(fb_csys* cs, int c) {
    double* col = cs->dqdd + (size_t)c * (size_t)cs->nv_total;
    memset(col, 0, (size_t)cs->nv_total * sizeof(double));
    bool touched[FB_CSYS_MAX_ART];
    row_arts(cs, c, touched);
    for (int k = 0; k < cs->nart; k++) {
        if (!touched[k] || cs->lazy[k]) {
            continue;
        }
        if (cs->k_method == FB_K_FACTOR) {
            factor_part(cs, c, k);
        } else {
            fb_k_test_force_part(cs, c, k);
        }
    }
}

/* K_rc = K_cr = J_r dqdd_c for every row r >= c (and r < c without a column), given column
 * c. */
static void fill_k(fb_csys* cs, int c) {
    const int nr = cs->nrow;
    const double* col = cs->dqdd + (size_t)c * (size_t)cs->nv_total;
    for (int r = 0; r < nr; r++) {
        if (r < c && cs->unformed[r] < 2) {
            continue; /* from column r */
        }
        double x = 0.0;
        for (int e = cs->jstart[r]; e < cs->jstart[r] + cs->jcount[r]; e++) {
            x += cs->jval[e] * col[cs->jidx[e]];
        }
        cs->K[r * nr + c] = x;
        cs->K[c * nr + r] = x;
    }
}

/* M = L^T L of articulation k into cs->L. */
static bool factor_one(fb_csys* cs, int k) {
    ensure_m(cs, k);
    const fb_dof_tree* t = &((const fb_dof_tree*)cs->tree)[k];
    cs->l_valid[k] = fb_ltl_factor(t, cs->M + cs->m_off[k], cs->L + cs->l_off[k]);
    return cs->l_valid[k];
}

/* Rows to form past which factoring a left-out articulation's M beats a test force per row. */
#define FORM_BY_FACTOR_ROWS 16

/* For a solve that needs them: the full columns of the rows that take part (finite target)
 * and their K entries, where the build left out an articulation's share (FB_K_JOINT_SPACE):
 * that share by test forces for a few rows (an impact's contacts), by factoring M for many.
 * Rows left out of the solve stay as they are (their multipliers are zero). */
void fb_k_form_needed(fb_csys* cs, const double* target_or_null) {
    const int nr = cs->nrow;
    int* formed = cs->blk_state; /* scratch until the sweeps */
    int count = 0;
    for (int c = 0; c < nr; c++) {
        const double t = target_or_null ? target_or_null[c] : cs->row[c].target;
        formed[c] = cs->unformed[c] && !isinf(t);
        count += formed[c];
    }
    const bool by_factor = count >= FORM_BY_FACTOR_ROWS;
    for (int k = 0; by_factor && k < cs->nart; k++) {
        if (cs->lazy[k] && !cs->l_valid[k]) {
            (void)factor_one(cs, k); /* positive definite: CRBA's M, as ABA found */
        }
    }
    for (int c = 0; c < nr; c++) {
        if (!formed[c]) {
            continue;
        }
        if (cs->unformed[c] == 2) { /* no column yet */
            memset(cs->dqdd + (size_t)c * (size_t)cs->nv_total, 0,
                   (size_t)cs->nv_total * sizeof(double));
        }
        bool touched[FB_CSYS_MAX_ART];
        row_arts(cs, c, touched);
        for (int k = 0; k < cs->nart; k++) {
            if (touched[k] && cs->lazy[k]) {
                if (by_factor) {
                    factor_part(cs, c, k);
                } else {
                    phase1_again(cs, k);
                    fb_k_test_force_part(cs, c, k);
                }
            }
        }
        cs->unformed[c] = 0;
    }
    for (int c = 0; c < nr; c++) {
        if (!formed[c]) {
            continue;
        }
        const double* col = cs->dqdd + (size_t)c * (size_t)cs->nv_total;
        for (int r = 0; r < nr; r++) {
            const double t = target_or_null ? target_or_null[r] : cs->row[r].target;
            if (isinf(t) || cs->unformed[r] || (formed[r] && r < c)) {
                continue;
            }
            double x = 0.0;
            for (int e = cs->jstart[r]; e < cs->jstart[r] + cs->jcount[r]; e++) {
                x += cs->jval[e] * col[cs->jidx[e]];
            }
            cs->K[r * nr + c] = x;
            cs->K[c * nr + r] = x;
        }
    }
}

/* M and its factor for every articulation a row touches, and which articulations' share of K
 * is left out (FB_K_JOINT_SPACE). */
static fb_status factor_all(fb_csys* cs, bool joint_space, fb_error* err) {
    int ndof[FB_CSYS_MAX_ART] = {0};
    bool used[FB_CSYS_MAX_ART] = {false};
    for (int r = 0; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        used[row->art] = true;
        if (row->type == FB_ROW_POINT && row->art_b >= 0) {
            used[row->art_b] = true;
        }
        ndof[row->art] += row->type == FB_ROW_DOF;
    }
    for (int k = 0; k < cs->nart; k++) {
        const fb_model* m = cs->m[k];
        if (!used[k] || m->nv == 0) {
            continue;
        }
        /* FB_K_JOINT_SPACE: an articulation left out makes M only if its solve needs it (a
         * dof clamped at a torque limit); the others' columns come from test forces */
        cs->lazy[k] = joint_space && ndof[k] >= BLOCK_MIN_ROWS;
        if (!joint_space && !factor_one(cs, k)) {
            return fb_fail(err, FB_ENUMERIC,
                           "fb_csys_build: articulation %d: joint-space inertia not positive "
                           "definite", k);
        }
        cs->m_valid[k] = true;
    }
    return FB_OK;
}

fb_status fb_k_factor(fb_csys* cs, fb_error* err) {
    const int nr = cs->nrow;
    fb_status s = factor_all(cs, cs->k_method == FB_K_JOINT_SPACE, err);
    if (s != FB_OK) {
        return s;
    }
    bool any_lazy = false;
    for (int k = 0; k < cs->nart; k++) {
        any_lazy = any_lazy || cs->lazy[k];
    }
    if (cs->k_method == FB_K_JOINT_SPACE && !any_lazy) {
        fb_k_backward(cs); /* nothing left out: no joint-space solve, and no columns needed */
        return fb_ok(err);
    }
    int start = 0;
    for (int r = 0; r < nr; r++) {
        cs->jstart[r] = start;
        cs->jcount[r] = row_force(cs, r, start);
        start += cs->jcount[r];
    }
    if (cs->k_method == FB_K_JOINT_SPACE) {
        /* the bodies the rows reach, per articulation: their paths to the root */
        cs->restricted = true;
        for (int k = 0; k < cs->nart; k++) {
            memset(cs->visit + cs->b_off[k], 0, (size_t)cs->m[k]->nbody);
        }
        for (int r = 0; r < nr; r++) {
            for (int e = cs->jstart[r]; e < cs->jstart[r] + cs->jcount[r]; e++) {
                const int k = cs->dof_art[cs->jidx[e]];
                const fb_model* m = cs->m[k];
                unsigned char* v = cs->visit + cs->b_off[k];
                for (int j = m->dof_body[cs->jidx[e] - cs->v_off[k]]; j > 0 && !v[j];
                     j = m->parent[j]) {
                    v[j] = 1;
                }
            }
        }
    }
    /* the columns and K, without the share of articulations left out */
    memset(cs->K, 0, (size_t)nr * (size_t)nr * sizeof(double));
    for (int c = 0; c < nr; c++) {
        cs->unformed[c] = row_unformed(cs, c);
        if (cs->unformed[c] < 2) {
            form_column(cs, c);
            fill_k(cs, c);
        }
    }
    return fb_ok(err);
}
