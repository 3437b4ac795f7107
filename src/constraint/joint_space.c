/* The joint-space solve: a tracked articulation's dof rows (its joint torques within their
 * limits) solved with the other rows (contacts, friction, limits, rows on other
 * articulations) in joint space with the articulation's M, by principal pivoting
 * (Cottle-Dantzig, box bounds as in [Baraff 1994]; the dofs alone by block principal pivoting
 * [Judice–Pires]). The method is described at the head of its section below; the LCP is
 * [Kokkevis §6]'s. */
#include <math.h>
#include <string.h>

#include "featherbone/constraint.h"
#include "constraint/csys_internal.h"
#include "constraint/joint_space_internal.h"
#include "dynamics/crba.h"
#include "math/dense.h"
#include "util/block.h"

/* Carves a js_scratch for articulations of at most n dofs and cap rows. */
void* fb_js_layout(char* base, size_t* off, size_t n, size_t cap) {
    js_scratch* js = fb_block_carve(base, off, sizeof(js_scratch));
    js_scratch j;
    const size_t o = JS_MAX_O;
    int** in[] = {&j.rk, &j.dstate, &j.cidx, &j.cpos, &j.ct.lambda, &j.ct.len, &j.ct.off};
    for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
        *in[k] = fb_block_carve(base, off, n * sizeof(int));
    }
    double** dn[] = {&j.delta, &j.u, &j.tau, &j.lo, &j.hi, &j.g, &j.z, &j.z0, &j.dz};
    for (size_t k = 0; k < sizeof dn / sizeof dn[0]; k++) {
        *dn[k] = fb_block_carve(base, off, n * sizeof(double));
    }
    j.Mcc = fb_block_carve(base, off, n * n * sizeof(double));
    j.ct.chain = fb_block_carve(base, off, n * (n + 1) / 2 * sizeof(int));
    j.Lcc = fb_block_carve(base, off, n * (n + 1) / 2 * sizeof(double));
    j.Y = fb_block_carve(base, off, n * o * sizeof(double));
    j.Jc = fb_block_carve(base, off, n * o * sizeof(double));
    int** io[] = {&j.oidx, &j.ostate, &j.fo, &j.fpos, &j.touch, &j.nidx, &j.piv};
    for (size_t k = 0; k < sizeof io / sizeof io[0]; k++) {
        *io[k] = fb_block_carve(base, off, o * sizeof(int));
    }
    double** d_o[] = {&j.olo, &j.ohi, &j.h, &j.jd, &j.dl, &j.dw, &j.w, &j.mu, &j.fbnd};
    for (size_t k = 0; k < sizeof d_o / sizeof d_o[0]; k++) {
        *d_o[k] = fb_block_carve(base, off, o * sizeof(double));
    }
    j.Ja = fb_block_carve(base, off, o * n * sizeof(double));
    j.Koth = fb_block_carve(base, off, o * o * sizeof(double));
    j.S = fb_block_carve(base, off, o * o * sizeof(double));
    j.A = fb_block_carve(base, off, o * o * sizeof(double));
    j.opos = fb_block_carve(base, off, cap * sizeof(int));
    struct js_sets* sets[] = {&j.prev[0], &j.prev[1], &j.stag};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        sets[k]->ok = false;
        sets[k]->a = sets[k]->n = sets[k]->no = 0;
        sets[k]->dstate = fb_block_carve(base, off, n * sizeof(int));
        sets[k]->id = fb_block_carve(base, off, o * sizeof(uint64_t));
        sets[k]->ostate = fb_block_carve(base, off, o * sizeof(int));
    }
    if (js) {
        *js = j;
    }
    return js;
}

void fb_js_copy_values(void* dst, const void* src) {
    js_scratch* d = dst;
    const js_scratch* s = src;
    d->ct.n = s->ct.n;
    d->ct.size = s->ct.size;
    for (int k = 0; k < 2; k++) {
        d->prev[k].ok = s->prev[k].ok;
        d->prev[k].a = s->prev[k].a;
        d->prev[k].n = s->prev[k].n;
        d->prev[k].no = s->prev[k].no;
    }
}

/* ---- the joint-space solve ------------------------------------------------------------------
 *
 * A tracking controller pins every dof of its character with a dof row (its multiplier a
 * joint torque within the torque limit), and the other rows (contacts, friction, limits) act
 * on the same joints. Swept row by row, that system converges slowly (M^-1 couples the dofs of
 * one body strongly), and not at all where a contact presses on a fully pinned character: the
 * contact's row is then a combination of the dof rows, every sweep raises its multiplier by
 * the same amount and the joints cancel it, until a torque limit is reached after hundreds of
 * sweeps. Solved in joint space instead, with the articulation's M:
 *
 *   - each dof is free (its row holds: its acceleration changes by delta_k, the row's target
 *     less its acceleration without multipliers) or clamped (its torque tau_k at a bound; a dof
 *     without a row is clamped at 0). With e the change of the joint accelerations,
 *     M e = tau + g, g = J_O^T lambda_O the other rows' generalised force: on the free dofs
 *     e = delta; on the clamped ones (C) z = e - delta = M_CC^-1 (tau_C + g_C - u_C), u = M
 *     delta; and the free torques follow, tau_F = u_F + M_FC z - g_F.
 *   - the other rows see the articulation only through the clamped dofs: w_O = h + S lambda_O
 *     with S = J_OC M_CC^-1 J_OC^T + K_OO without the articulation's share (what the rows do to
 *     other articulations, a ball), h their w with lambda_O = 0.
 *
 * Which dofs and rows sit at a bound is found by principal pivoting (Cottle-Dantzig, box bounds
 * as in Baraff, "Fast contact force computation for nonpenetrating rigid bodies", SIGGRAPH
 * 1994): the dofs first with the other rows at zero (clamping every dof whose torque leaves its
 * bounds and freeing every clamped dof whose acceleration is on the wrong side, until neither
 * happens), then each other row driven in turn from zero toward w = 0 with the free rows and
 * dofs following, each step stopped by the first event: the row reaches w = 0 (free) or a bound
 * (done), a free dof's torque or a free row's multiplier reaches a bound (clamped), a clamped
 * one's w reaches 0 (freed). A friction row at its bound is tied to its normal row,
 * lambda_t = +-mu lambda_n (sliding), not held at a number, so normal and friction forces
 * settle together (the free system is then not symmetric: LU). Everything is recomputed from
 * the sets after each event with matrices of the clamped dofs' and the other rows' size only:
 * a pivot costs O(nv |C|), not O(rows^2). */

/* Pivots in a row that move nothing before the pivoting gives up (a cycle). */
#define JS_MAX_STALLED 16

/* Relative regularisation of the other rows' matrix S: S_ii (1 + JS_REG). Contacts that a
 * fully pinned articulation can only answer through its few clamped dofs (a fallen character
 * lying on several shapes: 12 contact rows against the root's 6 dofs) make S singular, and
 * LU on a singular S returns multipliers of 1e15 from rounding-sized pivots. Made positive
 * definite, the LCP has one solution, the bounded one a unilateral contact set allows (a
 * duplicate contact takes no force rather than an infinite pair); the contacts yield by
 * JS_REG S_ii lambda, 1e-8 of their response. */
#define JS_REG 1e-10

/* Tolerances of the pivoting, relative to the problem's scale (its largest right-hand side,
 * its largest torque bound), and the largest residual of an accepted solution on the same
 * scale: a tenth of the largest acceleration asked for, a guard against garbage from a nearly
 * singular set (the pivoting itself solves to JS_TOL), and for a warm start, which pivots not
 * at all, JS_WARM_ACCEPT: its sets must be the solution's to rounding. */
#define JS_TOL 1e-11
#define JS_ACCEPT 1e-1
/* How far past its bound an accepted multiplier may be, relative to the problem's force scale
 * and to the bound (rounding of the pivoting's solves: 1e3 times JS_TOL) */
#define JS_BOUND_TOL 1e-8

/* The articulation the joint-space solve applies to: M made by the last build and its dof rows
 * taking part on at least BLOCK_MIN_ROWS dofs, one row per dof; -1 if none. Sets s->rk. */
int fb_js_art(fb_csys* cs, const lcp_rhs* q) {
    js_scratch* s = cs->js;
    for (int a = 0; a < cs->nart; a++) {
        if (!cs->m_valid[a]) {
            continue;
        }
        const int n = cs->m[a]->nv;
        for (int k = 0; k < n; k++) {
            s->rk[k] = -1;
        }
        int count = 0;
        bool unique = true;
        for (int r = 0; r < cs->nrow && unique; r++) {
            const fb_row* row = &cs->row[r];
            if (row->type == FB_ROW_DOF && row->art == a && !isinf(rhs_target(cs, q, r))) {
                unique = s->rk[row->dof] < 0;
                s->rk[row->dof] = r;
                count++;
            }
        }
        if (unique && count >= BLOCK_MIN_ROWS) {
            return a;
        }
    }
    return -1;
}

/* Ties each friction row among the other rows to its normal row (ties) or none. A row whose
 * normal is out of the solve is never tied: its bounds are fixed numbers. */
void fb_js_set_ties(js_ctx* x, bool ties) {
    js_scratch* s = x->s;
    for (int i = 0; i < x->no; i++) {
        const int r = x->cs->row[s->oidx[i]].friction_of;
        const int n = ties && r >= 0 ? s->opos[r] : -1;
        s->nidx[i] = n >= 0 && s->ostate[n] != ROW_OUT ? n : -1;
    }
}

/* The other rows, delta, u = M delta, J_O on the articulation, h's constant part, and K over the
 * other rows without the articulation's share. False when there are too many other rows. */
static bool js_setup(js_ctx* x, bool ties) {
    fb_csys* cs = x->cs;
    js_scratch* s = x->s;
    const int n = x->n, nr = cs->nrow;
    const lcp_rhs* q = x->q;
    x->no = 0;
    double scale = 1.0, lscale = 1.0;
    for (int r = 0; r < nr; r++) {
        const fb_row* row = &cs->row[r];
        s->opos[r] = -1;
        if (row->type == FB_ROW_DOF && row->art == x->a && s->rk[row->dof] == r) {
            continue;
        }
        if (isinf(rhs_target(cs, q, r))) {
            continue; /* left out of this solve */
        }
        if (x->no == JS_MAX_O) {
            return false;
        }
        s->opos[r] = x->no;
        s->oidx[x->no++] = r;
        scale = fmax(scale, fabs(q->b[r] - rhs_target(cs, q, r)));
    }
    for (int i = 0; i < x->no; i++) {
        s->mu[i] = cs->row[s->oidx[i]].mu;
    }
    for (int k = 0; k < n; k++) {
        const int r = s->rk[k];
        s->delta[k] = 0.0;
        s->tau[k] = 0.0;
        s->dstate[k] = DOF_FIXED;
        if (r >= 0) {
            s->delta[k] = rhs_target(cs, q, r) - q->b[r];
            bounds(cs, r, &s->lo[k], &s->hi[k]);
            s->dstate[k] = DOF_FREE;
            scale = fmax(scale, fabs(s->delta[k]));
            lscale = fmax(lscale, fmax(isfinite(s->lo[k]) ? fabs(s->lo[k]) : 0.0,
                                       isfinite(s->hi[k]) ? fabs(s->hi[k]) : 0.0));
        }
    }
    x->tol_w = JS_TOL * scale;
    x->tol_l = JS_TOL * lscale;
    if (cs->m_ready[x->a]) {
        for (int i = 0; i < n; i++) {
            const double* Mi = x->M + (size_t)i * (size_t)n;
            double v = 0.0;
            for (int j = 0; j < n; j++) {
                v += Mi[j] * s->delta[j];
            }
            s->u[i] = v;
        }
    } else {
        fb_inertia_mul(cs->m[x->a], cs->d[x->a], s->delta, s->u);
    }
    const int voff = cs->v_off[x->a];
    for (int i = 0; i < x->no; i++) {
        const int r = s->oidx[i];
        double* Ji = s->Ja + (size_t)i * (size_t)n;
        memset(Ji, 0, (size_t)n * sizeof(double));
        for (int e = cs->jstart[r]; e < cs->jstart[r] + cs->jcount[r]; e++) {
            if (cs->dof_art[cs->jidx[e]] == x->a) {
                Ji[cs->jidx[e] - voff] += cs->jval[e];
            }
        }
        double jd = q->b[r] - rhs_target(cs, q, r);
        for (int k = 0; k < n; k++) {
            jd += Ji[k] * s->delta[k];
        }
        s->jd[i] = jd;
    }
    /* K over the other rows without the articulation's share: what they do to the other
     * articulations (a ball), from their columns there */
    for (int i = 0; i < x->no; i++) {
        const int r = s->oidx[i];
        /* most rows act on the articulation alone: their share is 0 without visiting J again */
        bool elsewhere = false;
        for (int e = cs->jstart[r]; e < cs->jstart[r] + cs->jcount[r]; e++) {
            elsewhere = elsewhere || cs->dof_art[cs->jidx[e]] != x->a;
        }
        for (int i2 = 0; i2 <= i; i2++) {
            const double* col = cs->dqdd + (size_t)s->oidx[i2] * (size_t)cs->nv_total;
            double v = 0.0;
            for (int e = cs->jstart[r]; elsewhere && e < cs->jstart[r] + cs->jcount[r]; e++) {
                if (cs->dof_art[cs->jidx[e]] != x->a) {
                    v += cs->jval[e] * col[cs->jidx[e]];
                }
            }
            s->Koth[i * JS_MAX_O + i2] = s->Koth[i2 * JS_MAX_O + i] = v;
        }
    }
    /* a row no force moves keeps its multiplier (as PGS does): out of the solve */
    for (int i = 0; i < x->no; i++) {
        const double* Ji = s->Ja + (size_t)i * (size_t)n;
        s->touch[i] = 0;
        for (int k = 0; k < n && !s->touch[i]; k++) {
            s->touch[i] = Ji[k] != 0.0;
        }
        const bool moves = s->touch[i] || s->Koth[i * JS_MAX_O + i] > 0.0;
        s->ostate[i] = moves ? ROW_UNSEEN : ROW_OUT;
    }
    fb_js_set_ties(x, ties);
    return true;
}

/* The dof tree of the clamped dofs (s->ct, in their order cidx): each one's parent is its
 * nearest clamped ancestor in the articulation's tree. M_CC, a principal submatrix of M, has
 * this tree's sparsity (its entries join a dof and its ancestors only), so it factors as
 * L^T L without fill-in [RBDA §6.5] and a row's J, non-zero along one path to the root, is
 * solved along that path: O(nc depth) a solve where a dense Cholesky took O(nc^2). */
static void clamped_tree(js_ctx* x) {
    js_scratch* s = x->s;
    const fb_dof_tree* t = &((const fb_dof_tree*)x->cs->tree)[x->a];
    fb_dof_tree* ct = &s->ct;
    for (int k = 0; k < x->n; k++) {
        s->cpos[k] = -1;
    }
    ct->n = x->nc;
    int off = 0;
    for (int c = 0; c < x->nc; c++) {
        const int k = s->cidx[c];
        s->cpos[k] = c;
        int p = t->lambda[k];
        while (p >= 0 && s->cpos[p] < 0) {
            p = t->lambda[p];
        }
        fb_dof_tree_set(ct, c, p < 0 ? -1 : s->cpos[p], &off);
    }
    ct->size = off;
}

/* When the clamped dofs changed: M_CC and its factor, Y = M_CC^-1 J_OC^T and S. Always: the
 * matrix of the free rows, A = S_FF plus the tied friction rows' share in their normals'
 * columns, and its LU factors. False when a factor fails. */
static bool js_factor(js_ctx* x) {
    js_scratch* s = x->s;
    const int n = x->n;
    if (x->c_dirty) {
        x->c_dirty = false;
        x->h_stale = true;
        x->nc = 0;
        for (int k = 0; k < n; k++) {
            if (s->dstate[k] != DOF_FREE) {
                s->cidx[x->nc++] = k;
            }
        }
        const int nc = x->nc;
        if (nc > 0) {
            ensure_m(x->cs, x->a);
        }
        for (int r = 0; r < nc; r++) {
            const double* Mr = x->M + (size_t)s->cidx[r] * (size_t)n;
            for (int c = 0; c < nc; c++) {
                s->Mcc[r * nc + c] = Mr[s->cidx[c]];
            }
        }
        clamped_tree(x);
        if (!fb_ltl_factor(&s->ct, s->Mcc, s->Lcc)) {
            return false;
        }
        if (x->rows_idle) {
            x->nfo = 0;
            return true;
        }
        double* ys[JS_MAX_O];
        int m = 0;
        for (int i = 0; i < x->no; i++) {
            const double* Ji = s->Ja + (size_t)i * (size_t)n;
            double* Jci = s->Jc + (size_t)i * (size_t)n;
            double* Yi = s->Y + (size_t)i * (size_t)n;
            for (int c = 0; c < nc; c++) {
                Jci[c] = Yi[c] = Ji[s->cidx[c]];
            }
            if (s->touch[i]) {
                ys[m++] = Yi;
            }
        }
        fb_ltl_solve_many(&s->ct, s->Lcc, ys, m); /* each row's J: one path to the root */
        for (int i = 0; i < x->no; i++) {
            const double* Jci = s->Jc + (size_t)i * (size_t)n;
            for (int i2 = 0; i2 <= i; i2++) {
                const double* Y2 = s->Y + (size_t)i2 * (size_t)n;
                double v = 0.0;
                for (int c = 0; s->touch[i] && s->touch[i2] && c < nc; c++) {
                    v += Jci[c] * Y2[c];
                }
                s->S[i * JS_MAX_O + i2] = v + s->Koth[i * JS_MAX_O + i2];
                s->S[i2 * JS_MAX_O + i] = v + s->Koth[i2 * JS_MAX_O + i];
            }
            s->S[i * JS_MAX_O + i] *= 1.0 + JS_REG;
        }
    }
    x->nfo = 0;
    for (int i = 0; i < x->no; i++) {
        s->fpos[i] = -1;
        if (s->ostate[i] == ROW_FREE) {
            s->fpos[i] = x->nfo;
            s->fo[x->nfo++] = i;
        }
    }
    const int nf = x->nfo;
    for (int r = 0; r < nf; r++) {
        for (int c = 0; c < nf; c++) {
            s->A[r * nf + c] = s->S[s->fo[r] * JS_MAX_O + s->fo[c]];
        }
    }
    for (int t = 0; t < x->no; t++) {
        const int c = js_is_tied(s, t) && js_tied_friction(s, t) ? s->fpos[s->nidx[t]] : -1;
        if (c < 0) {
            continue; /* not tied, or tied to a normal that is not free */
        }
        const double ct = js_tie(s, t);
        for (int r = 0; r < nf; r++) {
            s->A[r * nf + c] += ct * s->S[s->fo[r] * JS_MAX_O + t];
        }
    }
    return fb_lu_factor(s->A, nf, s->piv);
}

/* Sets the tied friction rows' multipliers from their normals'. */
static void js_set_tied(js_ctx* x) {
    for (int t = 0; t < x->no; t++) {
        if (js_is_tied(x->s, t) && js_tied_friction(x->s, t)) {
            *js_lambda(x, t) = js_tie(x->s, t) * *js_lambda(x, x->s->nidx[t]);
        }
    }
}

/* Everything that follows from the sets and the fixed values: the free rows' multipliers (and
 * the tied ones'), z, the free dofs' torques, and w of the other rows. */
static void js_state(js_ctx* x) {
    js_scratch* s = x->s;
    const int n = x->n, nc = x->nc, no = x->no, nf = x->nfo;
    /* z0 and h follow from the clamped dofs and their torques alone (at their bounds): made
     * again only when the factor was */
    if (x->h_stale) {
        for (int c = 0; c < nc; c++) {
            s->z0[c] = s->tau[s->cidx[c]] - s->u[s->cidx[c]];
        }
        fb_ltl_solve(&s->ct, s->Lcc, s->z0);
        for (int i = 0; i < no && !x->rows_idle; i++) {
            const double* Jci = s->Jc + (size_t)i * (size_t)n;
            double h = s->jd[i];
            for (int c = 0; s->touch[i] && c < nc; c++) {
                h += Jci[c] * s->z0[c];
            }
            s->h[i] = h;
        }
        x->h_stale = x->rows_idle; /* h was not made */
    }
    /* the rows not free and not tied to a free normal hold their values */
    for (int f = 0; f < nf; f++) {
        *js_lambda(x, s->fo[f]) = 0.0;
    }
    js_set_tied(x);
    for (int f = 0; f < nf; f++) {
        const int i = s->fo[f];
        double v = -s->h[i];
        for (int i2 = 0; i2 < no; i2++) {
            const bool moving = s->ostate[i2] == ROW_FREE ||
                                (js_is_tied(s, i2) && js_tied_friction(s, i2) &&
                                 s->ostate[s->nidx[i2]] == ROW_FREE);
            if (!moving) {
                v -= s->S[i * JS_MAX_O + i2] * *js_lambda(x, i2);
            }
        }
        s->dl[f] = v;
    }
    fb_lu_solve(s->A, nf, s->piv, s->dl);
    for (int f = 0; f < nf; f++) {
        *js_lambda(x, s->fo[f]) = s->dl[f];
    }
    js_set_tied(x);
    for (int c = 0; c < nc; c++) {
        s->z[c] = s->z0[c];
    }
    for (int k = 0; k < n; k++) {
        s->g[k] = 0.0;
    }
    for (int i = 0; i < no; i++) {
        const double l = *js_lambda(x, i);
        if (l == 0.0 || !s->touch[i]) {
            continue;
        }
        const double* Yi = s->Y + (size_t)i * (size_t)n;
        const double* Ji = s->Ja + (size_t)i * (size_t)n;
        for (int c = 0; c < nc; c++) {
            s->z[c] += Yi[c] * l;
        }
        for (int k = 0; k < n; k++) {
            s->g[k] += Ji[k] * l;
        }
    }
    for (int k = 0; k < n; k++) {
        if (s->dstate[k] != DOF_FREE) {
            continue;
        }
        const double* Mk = x->M + (size_t)k * (size_t)n;
        double t = s->u[k] - s->g[k];
        for (int c = 0; c < nc; c++) {
            t += Mk[s->cidx[c]] * s->z[c];
        }
        s->tau[k] = t;
    }
    for (int i = 0; i < no && !x->rows_idle; i++) {
        double w = s->h[i];
        for (int i2 = 0; i2 < no; i2++) {
            w += s->S[i * JS_MAX_O + i2] * *js_lambda(x, i2);
        }
        s->w[i] = w;
    }
}

/* Recomputes everything after a change of the sets; false when a factor fails. */
bool fb_js_update(js_ctx* x) {
    if (!js_factor(x)) {
        return false;
    }
    js_state(x);
    return true;
}

/* The dofs alone (other rows at zero), by block principal pivoting (Judice and Pires,
 * "A block principal pivoting algorithm for large-scale strictly monotone linear
 * complementarity problems", 1994): clamp every dof whose torque leaves its bounds and free
 * every clamped dof whose acceleration is on the wrong side, until neither happens; when a
 * round does not reduce the number of such dofs three times in a row, one dof per round (the
 * first, Murty's rule), which terminates for the positive definite M. */
static bool js_dofs(js_ctx* x) {
    js_scratch* s = x->s;
    int best = x->n + 1, worse = 0;
    x->rows_idle = true; /* the rounds make only the dofs' values; the last set once in full */
    for (int round = 0; round < 4 * x->n + 64; round++) {
        if (!fb_js_update(x)) {
            return false;
        }
        x->pivots++;
        /* the infeasible dofs: free ones past a bound, clamped ones on the wrong side */
        int bad = 0, first = -1;
        for (int k = 0; k < x->n; k++) {
            const bool over = js_dof_past(x, k);
            bad += over;
            first = (over && first < 0) ? k : first;
        }
        for (int c = 0; c < x->nc; c++) {
            const int k = s->cidx[c];
            const bool wrong = js_dof_wrong(x, c);
            bad += wrong;
            first = (wrong && (first < 0 || k < first)) ? k : first;
        }
        if (bad == 0) {
            /* the set found, everything made from it as a round made it before rows_idle (the
             * same bits): the rows are driven from here */
            x->rows_idle = false;
            x->c_dirty = true;
            return fb_js_update(x);
        }
        worse = bad < best ? 0 : worse + 1;
        best = bad < best ? bad : best;
        const bool one = worse >= 3;
        for (int k = 0; k < x->n; k++) {
            if (one && k != first) {
                continue;
            }
            if (s->dstate[k] == DOF_FREE && s->tau[k] < s->lo[k] - x->tol_l) {
                s->dstate[k] = DOF_LO;
                s->tau[k] = s->lo[k];
            } else if (s->dstate[k] == DOF_FREE && s->tau[k] > s->hi[k] + x->tol_l) {
                s->dstate[k] = DOF_HI;
                s->tau[k] = s->hi[k];
            }
        }
        for (int c = 0; c < x->nc; c++) {
            const int k = s->cidx[c];
            if (one && k != first) {
                continue;
            }
            if ((s->dstate[k] == DOF_LO && s->z[c] < -x->tol_w) ||
                (s->dstate[k] == DOF_HI && s->z[c] > x->tol_w)) {
                s->dstate[k] = DOF_FREE;
            }
        }
        x->c_dirty = true;
    }
    return false;
}

/* The step t at which lambda + t dl reaches the bound of row i moving that way: box bounds, or
 * +-mu (lambda_n + t dl_n) for a friction row whose normal is among the other rows. Sets *up to
 * the side reached. */
static double js_bound_step(const js_ctx* x, int i, double l, double dl, bool* up) {
    const js_scratch* s = x->s;
    if (js_tied_friction(s, i)) {
        const int nn = s->nidx[i];
        const double ln = *js_lambda((js_ctx*)x, nn), dn = s->dl[nn], mu = s->mu[i];
        const double du = dl - mu * dn; /* the gap to the upper bound closes at -du */
        const double dd = dl + mu * dn; /* to the lower at dd */
        double t = INFINITY;
        if (du > 0.0) {
            t = fmax(0.0, mu * ln - l) / du;
            *up = true;
        }
        if (dd < 0.0) {
            const double tl = fmax(0.0, l + mu * ln) / -dd;
            if (tl < t) {
                t = tl;
                *up = false;
            }
        }
        return t;
    }
    if (dl > 0.0) {
        *up = true;
        return fmax(0.0, s->ohi[i] - l) / dl;
    }
    if (dl < 0.0) {
        *up = false;
        return fmax(0.0, l - s->olo[i]) / -dl;
    }
    return INFINITY;
}

/* Drives other row d from zero until it is complementary. */
static bool js_drive(js_ctx* x, int d) {
    js_scratch* s = x->s;
    const int n = x->n, no = x->no;
    double lo, hi;
    js_bounds(x, d, &lo, &hi);
    if (lo > 0.0 || hi < 0.0) {
        return false;
    }
    s->olo[d] = lo;
    s->ohi[d] = hi;
    /* lambda_d is 0 and w_d current since the last update: nothing to recompute yet */
    s->ostate[d] = ROW_DRIVEN;
    int stalled = 0; /* pivots in a row that moved nothing: a cycle, past a few */
    /* the last pivot, if it moved nothing: the event that undoes it, on which row or dof, and
     * that one's state before it */
    int undo = 0, undo_who = -1, undo_state = -1;
    for (;;) {
        const double ld = *js_lambda(x, d), wd = s->w[d];
        const bool tied = js_tied_friction(s, d);
        const double lim = tied ? s->mu[d] * fmax(0.0, *js_lambda(x, s->nidx[d])) : 0.0;
        const bool at_lo = tied ? ld <= -lim : ld <= lo;
        const bool at_hi = tied ? ld >= lim : ld >= hi;
        if (at_lo && wd >= -x->tol_w) {
            s->ostate[d] = tied ? ROW_TLO : ROW_LO;
            return !tied || fb_js_update(x);
        }
        if (at_hi && wd <= x->tol_w) {
            s->ostate[d] = tied ? ROW_THI : ROW_HI;
            return !tied || fb_js_update(x);
        }
        if (fabs(wd) <= x->tol_w) {
            s->ostate[d] = ROW_FREE;
            return fb_js_update(x);
        }
        if (++x->pivots > x->max_pivots) {
            return false;
        }
        const double dir = wd < 0.0 ? 1.0 : -1.0;
        /* the direction: dlambda_d = dir (its tied rows follow), the free rows keep w = 0 */
        const int nf = x->nfo, nc = x->nc;
        double* dl = s->dl; /* over the other rows */
        for (int i = 0; i < no; i++) {
            dl[i] = 0.0;
        }
        dl[d] = dir;
        for (int t = 0; t < no; t++) {
            if (js_is_tied(s, t) && js_tied_friction(s, t) && s->nidx[t] == d) {
                dl[t] = js_tie(s, t) * dir;
            }
        }
        double* y = s->dw; /* scratch for the free rows' solve */
        for (int f = 0; f < nf; f++) {
            double v = 0.0;
            for (int i = 0; i < no; i++) {
                v -= s->S[s->fo[f] * JS_MAX_O + i] * dl[i];
            }
            y[f] = v;
        }
        fb_lu_solve(s->A, nf, s->piv, y);
        for (int f = 0; f < nf; f++) {
            dl[s->fo[f]] = y[f];
        }
        for (int t = 0; t < no; t++) {
            if (js_is_tied(s, t) && js_tied_friction(s, t) &&
                s->ostate[s->nidx[t]] == ROW_FREE) {
                dl[t] = js_tie(s, t) * dl[s->nidx[t]];
            }
        }
        for (int c = 0; c < nc; c++) {
            s->dz[c] = 0.0;
        }
        for (int k = 0; k < n; k++) {
            s->g[k] = 0.0; /* here: the change of g */
        }
        for (int i = 0; i < no; i++) {
            if (dl[i] == 0.0 || !s->touch[i]) {
                continue;
            }
            const double* Yi = s->Y + (size_t)i * (size_t)n;
            const double* Ji = s->Ja + (size_t)i * (size_t)n;
            for (int c = 0; c < nc; c++) {
                s->dz[c] += Yi[c] * dl[i];
            }
            for (int k = 0; k < n; k++) {
                s->g[k] += Ji[k] * dl[i];
            }
        }
        double* dw = s->dw;
        for (int i = 0; i < no; i++) {
            double v = 0.0;
            for (int i2 = 0; i2 < no; i2++) {
                v += s->S[i * JS_MAX_O + i2] * dl[i2];
            }
            dw[i] = v;
        }
        /* the step to the first event */
        double t = INFINITY, dt_who = 0.0;
        bool up_who = false;
        int event = 0, who = -1; /* 1 d free, 2 d at a bound, 3 a free row at a bound, 4 a
                                    clamped row frees, 5 a free dof clamps, 6 a clamped dof
                                    frees */
        if (dw[d] * wd < 0.0) {
            t = -wd / dw[d];
            event = 1;
        }
        bool up = false;
        const double td = js_bound_step(x, d, ld, dir, &up);
        if (td < t) {
            t = td;
            event = 2;
            up_who = up;
        }
        for (int i = 0; i < no; i++) {
            const int st = s->ostate[i];
            double tt = INFINITY;
            int ev = 0;
            if (st == ROW_FREE) {
                tt = js_bound_step(x, i, *js_lambda(x, i), dl[i], &up);
                ev = 3;
            } else if (((st == ROW_LO || st == ROW_TLO) && dw[i] < 0.0) ||
                       ((st == ROW_HI || st == ROW_THI) && dw[i] > 0.0)) {
                tt = -s->w[i] / dw[i];
                ev = 4;
            }
            if (tt < t) {
                t = tt;
                event = ev;
                who = i;
                up_who = up;
            }
        }
        for (int k = 0; k < n; k++) {
            if (s->dstate[k] != DOF_FREE) {
                continue;
            }
            const double* Mk = x->M + (size_t)k * (size_t)n;
            double dt = -s->g[k];
            for (int c = 0; c < nc; c++) {
                dt += Mk[s->cidx[c]] * s->dz[c];
            }
            double tt = INFINITY;
            if (dt > 0.0) {
                tt = (s->hi[k] - s->tau[k]) / dt;
            } else if (dt < 0.0) {
                tt = (s->lo[k] - s->tau[k]) / dt;
            }
            if (tt < t) {
                t = tt;
                event = 5;
                who = k;
                dt_who = dt;
            }
        }
        for (int c = 0; c < nc; c++) {
            const int k = s->cidx[c];
            if ((s->dstate[k] == DOF_LO && s->dz[c] < 0.0) ||
                (s->dstate[k] == DOF_HI && s->dz[c] > 0.0)) {
                const double tt = -s->z[c] / s->dz[c];
                if (tt < t) {
                    t = tt;
                    event = 6;
                    who = k;
                }
            }
        }
        if (!isfinite(t)) {
            return false; /* nothing limits the step */
        }
        t = fmax(t, 0.0);
        stalled = t > 0.0 ? 0 : stalled + 1;
        if (stalled > JS_MAX_STALLED) {
            return false; /* a cycle */
        }
        int* state = event < 3 ? NULL : (event < 5 ? &s->ostate[who] : &s->dstate[who]);
        const bool undoes = t == 0.0 && event == undo && who == undo_who;
        const int undo_state_before = undo_state;
        /* clamping a row or dof (3, 5) and freeing it (4, 6) undo each other */
        undo = t > 0.0 || event < 3 ? 0 : (event % 2 == 1 ? event + 1 : event - 1);
        undo_who = who;
        undo_state = state ? *state : -1;
        /* the step: the driven row moves; the free and tied rows follow (recomputed below) */
        *js_lambda(x, d) = ld + dir * t;
        if (event == 1) {
            s->ostate[d] = ROW_FREE;
        } else if (event == 2) {
            if (tied) {
                s->ostate[d] = up_who ? ROW_THI : ROW_TLO;
            } else {
                *js_lambda(x, d) = dir > 0.0 ? hi : lo;
                s->ostate[d] = dir > 0.0 ? ROW_HI : ROW_LO;
            }
        } else if (event == 3) {
            if (js_tied_friction(s, who)) {
                s->ostate[who] = up_who ? ROW_THI : ROW_TLO;
            } else {
                *js_lambda(x, who) = up_who ? s->ohi[who] : s->olo[who];
                s->ostate[who] = up_who ? ROW_HI : ROW_LO;
            }
        } else if (event == 4) {
            s->ostate[who] = ROW_FREE;
        } else if (event == 5) {
            const bool upd = dt_who > 0.0;
            s->tau[who] = upd ? s->hi[who] : s->lo[who];
            s->dstate[who] = upd ? DOF_HI : DOF_LO;
            x->c_dirty = true;
        } else {
            s->dstate[who] = DOF_FREE;
            x->c_dirty = true;
        }
        if (undoes && state && *state == undo_state_before) {
            /* back to the sets before the last pivot, neither having moved anything: everything
             * follows from the sets, so the two would take turns until the stall count ran
             * out. The same failure, sooner */
            return false;
        }
        if (!fb_js_update(x)) {
            return false;
        }
        if (event == 1 || event == 2) {
            return true;
        }
    }
}

/* Every multiplier of the solve within its bounds to rounding: JS_BOUND_TOL of the problem's
 * force scale and of the bound itself. */
static bool js_within_bounds(const js_ctx* x) {
    const fb_csys* cs = x->cs;
    const js_scratch* s = x->s;
    const double tol = JS_BOUND_TOL * (x->tol_l / JS_TOL);
    for (int j = 0; j < x->n + x->no; j++) {
        const int r = j < x->n ? s->rk[j] : s->oidx[j - x->n];
        if (r < 0) {
            continue;
        }
        double lo, hi;
        bounds(cs, r, &lo, &hi);
        const double l = cs->lambda[r];
        if (l < lo - tol - JS_BOUND_TOL * fabs(lo) || l > hi + tol + JS_BOUND_TOL * fabs(hi)) {
            return false;
        }
    }
    return true;
}

/* The multipliers of the dof rows, the joint accelerations and the residual from the sets as
 * they stand; whether the solution meets its conditions to `accept` of the problem's scale
 * and its bounds (the caller's to use or not). */
bool fb_js_finish(js_ctx* x, double accept) {
    fb_csys* cs = x->cs;
    js_scratch* s = x->s;
    const int a = x->a;
    /* the multipliers of the dof rows, the joint accelerations, the residual */
    double* e = cs->e + cs->v_off[a];
    for (int k = 0; k < x->n; k++) {
        e[k] = s->delta[k];
        if (s->rk[k] >= 0) {
            cs->lambda[s->rk[k]] = s->tau[k];
        }
    }
    for (int c = 0; c < x->nc; c++) {
        e[s->cidx[c]] += s->z[c];
    }
    cs->e_valid[a] = true;
    double worst = 0.0;
    for (int k = 0; k < x->n; k++) {
        if (s->rk[k] >= 0) {
            worst = fmax(worst, lcp_violation(cs, s->rk[k], e[k] - s->delta[k]));
        }
    }
    for (int i = 0; i < x->no; i++) {
        /* the residual of the rows as they are, without the regularisation JS_REG put on S */
        const double sii = s->S[i * JS_MAX_O + i];
        const double w = s->w[i] - sii * (JS_REG / (1.0 + JS_REG)) * *js_lambda(x, i);
        worst = fmax(worst, lcp_violation(cs, s->oidx[i], w));
    }
    cs->iterations = x->pivots;
    cs->residual = worst;
    /* a solution that misses its own conditions by more than rounding can explain (pivoting
     * on a nearly singular set, a cycle the stall count missed) is not used: the caller
     * falls back to another method. lcp_violation counts a multiplier past its bound as one
     * at it, so the bounds are checked apart: before, torques up to 300 times their limit and
     * friction on contacts without normal force met every residual and were applied. */
    return worst <= accept * (x->tol_w / JS_TOL) && js_within_bounds(x);
}

/* The pivoting from the sets js_setup (or fb_js_cold) left: the dofs alone, then the rows
 * without friction (normals, limits, rows on other articulations), then the friction rows, so
 * that every normal force is there when its friction is driven. */
bool fb_js_pivot(js_ctx* x) {
    x->c_dirty = true;
    return js_dofs(x) && fb_js_drive_unseen(x);
}

/* Drives each unseen other row in turn from zero: those without friction first, then the
 * friction rows. A row is unseen until it is driven (no event of another row's drive touches
 * it), so from js_dofs this drives every row once. */
bool fb_js_drive_unseen(js_ctx* x) {
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < x->no; i++) {
            const bool friction = x->cs->row[x->s->oidx[i]].friction_of >= 0;
            if (friction == (pass == 1) && x->s->ostate[i] == ROW_UNSEEN && !js_drive(x, i)) {
                return false;
            }
        }
    }
    return true;
}

/* The joint-space solve of articulation a, friction rows at a bound tied to their normals:
 * by pivoting (ties), or by staggered rounds (not ties: the caller's second try where the
 * pivoting gave up); false when it gives up (a cycle: with ties the matrix is not symmetric
 * and pivoting can cycle; an unbounded direction; rounds that do not settle). */
bool fb_js_solve(fb_csys* cs, const lcp_rhs* q, int a, bool ties) {
    js_scratch* s = cs->js;
    js_ctx x = {.cs = cs, .q = q, .s = s, .a = a, .n = cs->m[a]->nv,
                .M = cs->M + cs->m_off[a]};
    for (int r = 0; r < cs->nrow; r++) {
        for (int e = cs->jstart[r]; cs->unformed[r] && e < cs->jstart[r] + cs->jcount[r]; e++) {
            const int k = cs->dof_art[cs->jidx[e]];
            if (k != a && cs->lazy[k]) {
                return false; /* another articulation left out: sweep instead */
            }
        }
    }
    if (!js_setup(&x, ties)) {
        return false;
    }
    x.max_pivots = 8 * (x.n + x.no) + 32;
    /* the dofs with every other row at zero, then each other row in turn */
    for (int i = 0; i < x.no; i++) {
        if (s->ostate[i] != ROW_OUT) {
            *js_lambda(&x, i) = 0.0;
        }
    }
    struct js_sets* prev = &s->prev[q->t != NULL];
    if (ties && prev->ok) {
        if (fb_js_warm(&x, prev) && (fb_js_finish(&x, JS_WARM_ACCEPT) ||
                                     (fb_js_repair(&x) && fb_js_finish(&x, JS_ACCEPT)))) {
            fb_js_keep(&x, prev);
            return true;
        }
        fb_js_cold(&x);
    }
    if (!ties) {
        return fb_js_staggered(&x, prev);
    }
    if (!fb_js_pivot(&x)) {
        return false;
    }
    const bool ok = fb_js_finish(&x, JS_ACCEPT);
    prev->ok = false;
    if (ok) {
        fb_js_keep(&x, prev);
    }
    return ok;
}
