/* The constraint system: rows, K = J M^-1 J^T by test forces, projected Gauss-Seidel. */
#include <math.h>
#include <string.h>

#include "featherbone/constraint.h"
#include "featherbone/dynamics.h"
#include "math/dense.h"
#include "math/spatial.h"
#include "util/block.h"
#include "util/error.h"

/* A row direction must be a unit vector to this tolerance (it scales the multiplier). */
#define ROW_UNIT_TOL 1e-6

fb_row fb_default_row(void) {
    fb_row r;
    memset(&r, 0, sizeof r);
    r.type = FB_ROW_POINT;
    r.art_b = -1;
    r.friction_of = -1;
    r.lo = 0.0;
    r.hi = INFINITY;
    return r;
}

fb_pgs_opts fb_default_pgs_opts(void) {
    return (fb_pgs_opts){.max_iter = 200, .tol = 1e-10, .warm = true};
}

static size_t layout(fb_csys* cs, char* base, int cap, int nv_total) {
    size_t off = 0;
    const size_t c = (size_t)cap;
    cs->row = fb_block_carve(base, &off, c * sizeof(fb_row));
    cs->K = fb_block_carve(base, &off, c * c * sizeof(double));
    cs->a0 = fb_block_carve(base, &off, c * sizeof(double));
    cs->lambda = fb_block_carve(base, &off, c * sizeof(double));
    cs->dqdd = fb_block_carve(base, &off, c * (size_t)nv_total * sizeof(double));
    cs->prev_id = fb_block_carve(base, &off, c * sizeof(uint64_t));
    cs->prev_lambda = fb_block_carve(base, &off, c * sizeof(double));
    cs->blk_L = fb_block_carve(base, &off, c * c * sizeof(double));
    cs->blk_x = fb_block_carve(base, &off, c * sizeof(double));
    cs->blk_idx = fb_block_carve(base, &off, c * sizeof(int));
    return off;
}

fb_csys* fb_csys_create(int nart, const fb_model* const* m, fb_data* const* d, int max_rows,
                        const fb_allocator* alloc, fb_error* err) {
    if (nart < 1 || nart > FB_CSYS_MAX_ART || max_rows < 1 || max_rows > 100000) {
        fb_fail(err, FB_EINVAL, "fb_csys_create: expected 1..%d articulations and 1..100000 rows",
                FB_CSYS_MAX_ART);
        return NULL;
    }
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    fb_csys* cs = fb_alloc(&a, sizeof *cs);
    if (!cs) {
        fb_fail(err, FB_ENOMEM, "fb_csys_create: out of memory");
        return NULL;
    }
    memset(cs, 0, sizeof *cs);
    cs->alloc = a;
    cs->nart = nart;
    for (int k = 0; k < nart; k++) {
        cs->m[k] = m[k];
        cs->d[k] = d[k];
        cs->v_off[k] = cs->nv_total;
        cs->nv_total += m[k]->nv;
    }
    cs->cap = max_rows;
    const size_t size = layout(cs, NULL, max_rows, cs->nv_total);
    char* block = fb_alloc(&a, size);
    if (!block) {
        fb_free(&a, cs);
        fb_fail(err, FB_ENOMEM, "fb_csys_create: out of memory for %d rows", max_rows);
        return NULL;
    }
    memset(block, 0, size);
    layout(cs, block, max_rows, cs->nv_total);
    cs->block = block;
    fb_ok(err);
    return cs;
}

void fb_csys_destroy(fb_csys* cs) {
    if (!cs) {
        return;
    }
    const fb_allocator a = cs->alloc;
    fb_free(&a, cs->block);
    fb_free(&a, cs);
}

void fb_csys_clear(fb_csys* cs) {
    cs->nrow = 0;
}

static bool body_ok(const fb_csys* cs, int art, int body) {
    return art >= 0 && art < cs->nart && body >= 1 && body < cs->m[art]->nbody;
}

fb_status fb_csys_add_row(fb_csys* cs, const fb_row* r, fb_error* err) {
    const int k = cs->nrow;
    if (k >= cs->cap) {
        return fb_fail(err, FB_ECAPACITY, "constraint rows: full (%d rows)", cs->cap);
    }
    if (r->art < 0 || r->art >= cs->nart) {
        return fb_fail(err, FB_EINVAL, "row %d: art: expected 0..%d, found %d", k, cs->nart - 1,
                       r->art);
    }
    if (r->type == FB_ROW_DOF) {
        if (r->dof < 0 || r->dof >= cs->m[r->art]->nv) {
            return fb_fail(err, FB_EINVAL, "row %d: dof: expected 0..%d, found %d", k,
                           cs->m[r->art]->nv - 1, r->dof);
        }
    } else if (r->type == FB_ROW_POINT) {
        if (!body_ok(cs, r->art, r->body) || !fb_v3_is_finite(r->p)) {
            return fb_fail(err, FB_EINVAL, "row %d: body/p: expected a moving body and a point", k);
        }
        if (r->art_b >= 0 &&
            ((r->art_b == r->art && r->body_b == r->body) || !body_ok(cs, r->art_b, r->body_b) ||
             !fb_v3_is_finite(r->p_b))) {
            return fb_fail(err, FB_EINVAL,
                           "row %d: art_b/body_b: expected a body of another articulation or "
                           "another body of art %d, found art %d body %d",
                           k, r->art, r->art_b, r->body_b);
        }
        if (!fb_v3_is_finite(r->n) || fabs(fb_v3_norm(r->n) - 1.0) > ROW_UNIT_TOL) {
            return fb_fail(err, FB_EINVAL, "row %d: n: expected a unit vector", k);
        }
    } else if (r->type == FB_ROW_JOINT) {
        if (!body_ok(cs, r->art, r->body) || cs->m[r->art]->jnv[r->body] == 0) {
            return fb_fail(err, FB_EINVAL, "row %d: body: expected a body with a moving joint", k);
        }
        const int nv = cs->m[r->art]->jnv[r->body];
        if (!fb_v3_is_finite(r->n) || fabs(fb_v3_norm(r->n) - 1.0) > ROW_UNIT_TOL ||
            (nv < 3 && r->n.z != 0.0) || (nv < 2 && r->n.y != 0.0)) {
            return fb_fail(err, FB_EINVAL,
                           "row %d: n: expected unit weights over the joint's %d dofs", k, nv);
        }
    } else {
        return fb_fail(err, FB_EINVAL,
                       "row %d: type: expected FB_ROW_DOF, FB_ROW_POINT or FB_ROW_JOINT", k);
    }
    if (!(r->lo <= r->hi) || isnan(r->lo) || isnan(r->hi) || !isfinite(r->target)) {
        return fb_fail(err, FB_EINVAL, "row %d: expected lo <= hi and a finite target", k);
    }
    if (r->friction_of >= 0 && (r->friction_of >= k || !(r->mu >= 0.0) || !isfinite(r->mu))) {
        return fb_fail(err, FB_EINVAL,
                       "row %d: friction_of/mu: expected an earlier normal row and mu >= 0", k);
    }
    cs->row[k] = *r;
    cs->nrow++;
    return fb_ok(err);
}

/* n . (change of the world acceleration of point p on body), from d->da. */
static double point_response(const fb_data* d, int body, fb_v3 p, fb_v3 n) {
    const fb_mv da = d->da[body];
    /* world direction into body coordinates: E n */
    return fb_v3_dot(fb_m3_mv(d->X_0[body].E, n), fb_v3_add(da.v, fb_v3_cross(da.w, p)));
}

/* n . (the first three entries of x at body i's joint dofs): a joint row's value of x. */
static double joint_dot(const fb_model* m, int body, fb_v3 n, const double* x) {
    const double w[3] = {n.x, n.y, n.z};
    const double* xi = x + m->v_adr[body];
    double s = 0.0;
    for (int k = 0; k < m->jnv[body] && k < 3; k++) {
        s += w[k] * xi[k];
    }
    return s;
}

/* Adds to column c of K every row's response to the test force just applied to articulation
 * `art` (whose d->da and dqdd it left). */
static void collect(fb_csys* cs, int art, int c, const double* dqdd) {
    const fb_data* d = cs->d[art];
    for (int r = 0; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        double resp = 0.0;
        if (row->type == FB_ROW_DOF) {
            resp = (row->art == art) ? dqdd[row->dof] : 0.0;
        } else if (row->type == FB_ROW_JOINT) {
            resp = (row->art == art) ? joint_dot(cs->m[art], row->body, row->n, dqdd) : 0.0;
        } else {
            if (row->art == art) {
                resp += point_response(d, row->body, row->p, row->n);
            }
            if (row->art_b == art) {
                resp -= point_response(d, row->body_b, row->p_b, row->n);
            }
        }
        cs->K[r * cs->nrow + c] += resp;
    }
}

/* The world spatial force (about the origin) of a force n at point p of body. */
static fb_fv point_force(const fb_data* d, int body, fb_v3 p, fb_v3 n) {
    const fb_v3 pw = fb_point_pos(NULL, d, body, p);
    return (fb_fv){fb_v3_cross(pw, n), n};
}

/* FB_ESTATE unless every articulation has ABA phases 1 and 2 done. */
static fb_status need_aba(const fb_csys* cs, const char* who, fb_error* err) {
    for (int k = 0; k < cs->nart; k++) {
        const unsigned need = FB_STAGE_ABA1 | FB_STAGE_ACC;
        if ((cs->d[k]->stage & need) != need) {
            return fb_fail(err, FB_ESTATE, "%s: articulation %d needs ABA phase 1 and 2 first",
                           who, k);
        }
    }
    return FB_OK;
}

fb_status fb_csys_build_a0(fb_csys* cs, fb_error* err) {
    const fb_status s = need_aba(cs, "fb_csys_build_a0", err);
    if (s != FB_OK) {
        return s;
    }
    for (int r = 0; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        const fb_model* m = cs->m[row->art];
        const fb_data* d = cs->d[row->art];
        if (row->type == FB_ROW_DOF) {
            cs->a0[r] = d->qdd[row->dof];
        } else if (row->type == FB_ROW_JOINT) {
            cs->a0[r] = joint_dot(m, row->body, row->n, d->qdd);
        } else {
            double a = fb_v3_dot(row->n, fb_point_acc(m, d, row->body, row->p));
            if (row->art_b >= 0) {
                a -= fb_v3_dot(row->n, fb_point_acc(cs->m[row->art_b], cs->d[row->art_b],
                                                    row->body_b, row->p_b));
            }
            cs->a0[r] = a;
        }
    }
    return fb_ok(err);
}

void fb_csys_row_velocity(const fb_csys* cs, double* v) {
    for (int r = 0; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        const fb_model* m = cs->m[row->art];
        const fb_data* d = cs->d[row->art];
        if (row->type == FB_ROW_DOF) {
            v[r] = d->qd[row->dof];
        } else if (row->type == FB_ROW_JOINT) {
            v[r] = joint_dot(m, row->body, row->n, d->qd);
        } else {
            double x = fb_v3_dot(row->n, fb_point_vel(m, d, row->body, row->p));
            if (row->art_b >= 0) {
                x -= fb_v3_dot(row->n, fb_point_vel(cs->m[row->art_b], cs->d[row->art_b],
                                                    row->body_b, row->p_b));
            }
            v[r] = x;
        }
    }
}

fb_status fb_csys_build(fb_csys* cs, fb_error* err) {
    const fb_status s = fb_csys_build_a0(cs, err);
    if (s != FB_OK) {
        return s;
    }
    const int nr = cs->nrow;
    /* column by column: the test force of row c, in each articulation it touches (one test
     * per articulation: a row within one articulation pushes both its bodies at once) */
    memset(cs->K, 0, (size_t)nr * (size_t)nr * sizeof(double));
    for (int c = 0; c < nr; c++) {
        const fb_row* row = &cs->row[c];
        double* col = cs->dqdd + (size_t)c * (size_t)cs->nv_total;
        memset(col, 0, (size_t)cs->nv_total * sizeof(double));
        const int a = row->art;
        double* qa = col + cs->v_off[a];
        if (row->type == FB_ROW_DOF) {
            fb_accel_delta_dof(cs->m[a], cs->d[a], row->dof, qa);
        } else if (row->type == FB_ROW_JOINT) {
            fb_accel_delta_joint(cs->m[a], cs->d[a], row->body, row->n, qa);
        } else if (row->art_b == a) {
            /* two bodies of one articulation: both forces in one test (collect then sees the
             * difference of the two points' responses) */
            fb_accel_delta_force_pair(
                cs->m[a], cs->d[a], row->body, point_force(cs->d[a], row->body, row->p, row->n),
                row->body_b, point_force(cs->d[a], row->body_b, row->p_b, fb_v3_neg(row->n)), qa);
        } else {
            fb_accel_delta_force(cs->m[a], cs->d[a], row->body,
                                 point_force(cs->d[a], row->body, row->p, row->n), qa);
        }
        collect(cs, a, c, qa);
        if (row->type == FB_ROW_POINT && row->art_b >= 0 && row->art_b != a) {
            const int b = row->art_b;
            double* qb = col + cs->v_off[b];
            fb_accel_delta_force(cs->m[b], cs->d[b], row->body_b,
                                 point_force(cs->d[b], row->body_b, row->p_b, fb_v3_neg(row->n)),
                                 qb);
            collect(cs, b, c, qb);
        }
    }
    return fb_ok(err);
}

/* Previous multiplier of a row with this id, or 0. */
static double warm_value(const fb_csys* cs, uint64_t id) {
    for (int k = 0; id != 0 && k < cs->nprev; k++) {
        if (cs->prev_id[k] == id) {
            return cs->prev_lambda[k];
        }
    }
    return 0.0;
}

/* Row r's bounds, friction rows from their normal row's current multiplier. */
static void bounds(const fb_csys* cs, int r, double* lo, double* hi) {
    const fb_row* row = &cs->row[r];
    if (row->friction_of >= 0) {
        const double limit = row->mu * fmax(0.0, cs->lambda[row->friction_of]);
        *lo = -limit;
        *hi = limit;
    } else {
        *lo = row->lo;
        *hi = row->hi;
    }
}

/* The system one solve works on: w = K lambda + b - t, with rows whose target t is -inf
 * (impulse solves only) held at zero. */
typedef struct lcp_rhs {
    const double* b; /* (nrow) value with zero multipliers: a0, or the current velocities */
    const double* t; /* (nrow) targets, or NULL for each row's own target */
} lcp_rhs;

static double rhs_target(const fb_csys* cs, const lcp_rhs* q, int r) {
    return q->t ? q->t[r] : cs->row[r].target;
}

/* w_r = (K lambda)_r + b_r - t_r. */
static double row_w(const fb_csys* cs, const lcp_rhs* q, int r) {
    const int nr = cs->nrow;
    double w = q->b[r] - rhs_target(cs, q, r);
    for (int c = 0; c < nr; c++) {
        w += cs->K[r * nr + c] * cs->lambda[c];
    }
    return w;
}

/* Largest violation of the LCP conditions (units of b). */
static double lcp_residual(const fb_csys* cs, const lcp_rhs* q) {
    const int nr = cs->nrow;
    double worst = 0.0;
    for (int r = 0; r < nr; r++) {
        if (isinf(rhs_target(cs, q, r))) {
            continue;
        }
        const double w = row_w(cs, q, r);
        double lo, hi;
        bounds(cs, r, &lo, &hi);
        const double l = cs->lambda[r];
        double v;
        if (l <= lo && l >= hi) {
            v = 0.0; /* a row pinned by lo == hi (e.g. friction without normal force) */
        } else if (l <= lo) {
            v = fmax(0.0, -w);
        } else if (l >= hi) {
            v = fmax(0.0, w);
        } else {
            v = fabs(w);
        }
        worst = fmax(worst, v);
    }
    return worst;
}

/* Projected Gauss-Seidel sweeps from the multipliers already in cs->lambda. */
/* One projected Gauss-Seidel update of row r; returns how far its multiplier moved. */
static double pgs_row(fb_csys* cs, const lcp_rhs* q, int r) {
    const int nr = cs->nrow;
    const double Krr = cs->K[r * nr + r];
    if (!(Krr > 0.0) || isinf(rhs_target(cs, q, r))) {
        return 0.0; /* a row no force can move, or one left out of this solve */
    }
    const double w = row_w(cs, q, r);
    double lo, hi;
    bounds(cs, r, &lo, &hi);
    const double l = fmin(hi, fmax(lo, cs->lambda[r] - w / Krr));
    const double moved = fabs(l - cs->lambda[r]);
    cs->lambda[r] = l;
    return moved;
}

/* The rows solved as one block: joint rows (FB_ROW_DOF, FB_ROW_JOINT) whose bounds contain 0
 * and that take part in this solve, such as a tracking controller's acceleration rows. Returns
 * their number (into cs->blk_idx) and factors K over them into cs->blk_L; 0 when there are too
 * few to be worth it or the block is not positive definite. */
#define BLOCK_MIN_ROWS 8
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

/* The block's multipliers solved exactly with the other rows' held: the block's residuals
 * w_B = (K lambda + b - t)_B vanish after lambda_B -= K_BB^-1 w_B. Then clamped to their bounds;
 * returns how far they moved and sets *clamped. */
static double block_step(fb_csys* cs, const lcp_rhs* q, int nb, bool* clamped) {
    double* x = cs->blk_x;
    for (int i = 0; i < nb; i++) {
        x[i] = row_w(cs, q, cs->blk_idx[i]);
    }
    fb_chol_solve(cs->blk_L, nb, x);
    double moved = 0.0;
    *clamped = false;
    for (int i = 0; i < nb; i++) {
        const int r = cs->blk_idx[i];
        double lo, hi;
        bounds(cs, r, &lo, &hi);
        const double want = cs->lambda[r] - x[i];
        const double l = fmin(hi, fmax(lo, want));
        *clamped = *clamped || l != want;
        moved = fmax(moved, fabs(l - cs->lambda[r]));
        cs->lambda[r] = l;
    }
    return moved;
}

/* Projected Gauss-Seidel; when enough rows are joint rows with bounds around zero (a tracking
 * controller's), block Gauss-Seidel instead: those rows are solved together exactly (Cholesky
 * of their K block, factored once) and the other rows (contacts, friction, limits) one by one
 * between block solves. PGS alone converges slowly on the strong coupling of M^-1 between the
 * joints of one body; the block solve removes that coupling from the iteration. A block whose
 * solution hits a bound is clamped and then swept row by row until it settles. */
static void pgs(fb_csys* cs, const lcp_rhs* q, const fb_pgs_opts* o) {
    const int nr = cs->nrow;
    const int nb = block_rows(cs, q);
    int it = 0;
    bool clamped = false;
    for (; it < o->max_iter; it++) {
        double moved = 0.0;
        if (nb > 0 && !clamped) {
            moved = block_step(cs, q, nb, &clamped);
        }
        for (int r = 0, i = 0; r < nr; r++) {
            if (nb > 0 && !clamped && i < nb && cs->blk_idx[i] == r) {
                i++;
                continue;
            }
            moved = fmax(moved, pgs_row(cs, q, r));
        }
        if (moved <= o->tol) {
            it++;
            break;
        }
    }
    cs->iterations = it;
    cs->residual = lcp_residual(cs, q);
}

void fb_csys_solve(fb_csys* cs, const fb_pgs_opts* opts) {
    const fb_pgs_opts o = opts ? *opts : fb_default_pgs_opts();
    const int nr = cs->nrow;
    for (int r = 0; r < nr; r++) {
        cs->lambda[r] = o.warm ? warm_value(cs, cs->row[r].id) : 0.0;
    }
    const lcp_rhs q = {cs->a0, NULL};
    pgs(cs, &q, &o);
    /* remember the multipliers by row identity for the next warm start */
    cs->nprev = 0;
    for (int r = 0; r < nr; r++) {
        if (cs->row[r].id != 0) {
            cs->prev_id[cs->nprev] = cs->row[r].id;
            cs->prev_lambda[cs->nprev++] = cs->lambda[r];
        }
    }
}

/* Adds sum_c lambda_c dqdd_c to x(k) of every articulation k (its qdd or its qd). */
static void add_responses(fb_csys* cs, bool to_velocity) {
    for (int k = 0; k < cs->nart; k++) {
        const int nv = cs->m[k]->nv;
        double* x = to_velocity ? cs->d[k]->qd : cs->d[k]->qdd;
        for (int c = 0; c < cs->nrow; c++) {
            const double l = cs->lambda[c];
            const double* col = cs->dqdd + (size_t)c * (size_t)cs->nv_total + cs->v_off[k];
            for (int j = 0; l != 0.0 && j < nv; j++) {
                x[j] += l * col[j];
            }
        }
    }
}

void fb_csys_apply(fb_csys* cs) {
    add_responses(cs, false);
}

void fb_csys_impulse(fb_csys* cs, const double* v, const double* v_target,
                     const fb_pgs_opts* opts) {
    const fb_pgs_opts o = opts ? *opts : fb_default_pgs_opts();
    memset(cs->lambda, 0, (size_t)cs->nrow * sizeof(double));
    const lcp_rhs q = {v, v_target};
    pgs(cs, &q, &o);
    add_responses(cs, true);
    for (int k = 0; k < cs->nart; k++) {
        cs->d[k]->stage &= ~(unsigned)(FB_STAGE_VEL | FB_STAGE_ABA1 | FB_STAGE_ACC);
    }
}
