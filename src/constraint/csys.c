/* The constraint system: rows; K = J M^-1 J^T by test forces or by the sparse factorisation
 * of M, or with a tracking controller's dof rows left out (FB_K_JOINT_SPACE); projected
 * Gauss-Seidel; and the joint-space solve of those dof rows with the other rows by pivoting.
 *
 * Sections: rows; K by test forces; K by the factorisation, and what FB_K_JOINT_SPACE leaves
 * out and forms on demand; PGS (with the block of joint rows); the joint-space solve; solve,
 * apply, impulse. */
#include <math.h>
#include <string.h>

#include "featherbone/constraint.h"
#include "featherbone/dynamics.h"
#include "constraint/accel_deltas.h"
#include "dynamics/crba.h"
#include "math/dense.h"
#include "math/spatial.h"
#include "util/block.h"
#include "util/error.h"

/* A row direction must be a unit vector to this tolerance (it scales the multiplier). */
#define ROW_UNIT_TOL 1e-6

/* Dof rows an articulation needs for its block to be solved apart (in joint space, or as one
 * block of PGS). */
#define BLOCK_MIN_ROWS 8

/* Most other rows (contacts, friction, limits) the joint-space solve takes; past it, PGS. */
#define JS_MAX_O 96

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

/* Scratch of the joint-space solve (see its section). n: the largest nv; o: JS_MAX_O. */
typedef struct js_scratch {
    int* rk;      /* (n) the row of each dof, or -1 */
    int* dstate;  /* (n) DOF_* */
    int* cidx;    /* (n) the dofs at a bound (or without a row), in order */
    double* delta; /* (n) the change of each dof's acceleration its row asks for */
    double* u;    /* (n) M delta */
    double* tau;  /* (n) each dof's multiplier */
    double* lo;   /* (n) its bounds */
    double* hi;   /* (n) */
    double* g;    /* (n) J_O^T lambda_O on the articulation */
    double* z;    /* (n) the change of the clamped dofs' accelerations beyond delta */
    double* z0;   /* (n) */
    double* dz;   /* (n) */
    double* Mcc;  /* (n x n) M over the clamped dofs, factored */
    double* Y;    /* (n x o) Mcc^-1 J_{O,C}^T, column per other row */
    int* oidx;    /* (o) the other rows */
    int* ostate;  /* (o) ROW_* */
    double* olo;  /* (o) the bounds each was given */
    double* ohi;  /* (o) */
    double* h;    /* (o) w_O = h + S lambda_O */
    double* jd;   /* (o) J_o . delta on the articulation, plus b - t */
    double* dl;   /* (o) */
    double* dw;   /* (o) */
    double* w;    /* (o) */
    double* Ja;   /* (o x n) each other row's J on the articulation, dense */
    double* Koth; /* (o x o) K over the other rows without the articulation's share */
    double* S;    /* (o x o) the other rows' K seen through the clamped dofs */
    int* fo;      /* (o) the free other rows */
    int* fpos;    /* (o) each other row's position among the free ones, or -1 */
    int* touch;   /* (o) whether each acts on the articulation */
    int* nidx;    /* (o) a friction row's normal row among the other rows, or -1 */
    double* mu;   /* (o) its friction coefficient */
    double* A;    /* (o x o) the free rows' matrix, LU-factored */
    int* piv;     /* (o) its pivots */
    int* opos;    /* (cap) each row's position among the other rows, or -1 */
} js_scratch;

/* Carves a js_scratch for articulations of at most n dofs and cap rows. */
static js_scratch* js_layout(char* base, size_t* off, size_t n, size_t cap) {
    js_scratch* js = fb_block_carve(base, off, sizeof(js_scratch));
    js_scratch j;
    const size_t o = JS_MAX_O;
    int** in[] = {&j.rk, &j.dstate, &j.cidx};
    for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
        *in[k] = fb_block_carve(base, off, n * sizeof(int));
    }
    double** dn[] = {&j.delta, &j.u, &j.tau, &j.lo, &j.hi, &j.g, &j.z, &j.z0, &j.dz};
    for (size_t k = 0; k < sizeof dn / sizeof dn[0]; k++) {
        *dn[k] = fb_block_carve(base, off, n * sizeof(double));
    }
    j.Mcc = fb_block_carve(base, off, n * n * sizeof(double));
    j.Y = fb_block_carve(base, off, n * o * sizeof(double));
    int** io[] = {&j.oidx, &j.ostate, &j.fo, &j.fpos, &j.touch, &j.nidx, &j.piv};
    for (size_t k = 0; k < sizeof io / sizeof io[0]; k++) {
        *io[k] = fb_block_carve(base, off, o * sizeof(int));
    }
    double** d_o[] = {&j.olo, &j.ohi, &j.h, &j.jd, &j.dl, &j.dw, &j.w, &j.mu};
    for (size_t k = 0; k < sizeof d_o / sizeof d_o[0]; k++) {
        *d_o[k] = fb_block_carve(base, off, o * sizeof(double));
    }
    j.Ja = fb_block_carve(base, off, o * n * sizeof(double));
    j.Koth = fb_block_carve(base, off, o * o * sizeof(double));
    j.S = fb_block_carve(base, off, o * o * sizeof(double));
    j.A = fb_block_carve(base, off, o * o * sizeof(double));
    j.opos = fb_block_carve(base, off, cap * sizeof(int));
    if (js) {
        *js = j;
    }
    return js;
}

static size_t layout(fb_csys* cs, char* base, int cap, int nv_total) {
    size_t off = 0;
    const size_t c = (size_t)cap, nvt = (size_t)nv_total;
    cs->row = fb_block_carve(base, &off, c * sizeof(fb_row));
    cs->K = fb_block_carve(base, &off, c * c * sizeof(double));
    cs->a0 = fb_block_carve(base, &off, c * sizeof(double));
    cs->lambda = fb_block_carve(base, &off, c * sizeof(double));
    cs->dqdd = fb_block_carve(base, &off, c * nvt * sizeof(double));
    cs->prev_id = fb_block_carve(base, &off, c * sizeof(uint64_t));
    cs->prev_lambda = fb_block_carve(base, &off, c * sizeof(double));
    cs->blk_L = fb_block_carve(base, &off, c * c * sizeof(double));
    cs->blk_x = fb_block_carve(base, &off, c * sizeof(double));
    cs->blk_idx = fb_block_carve(base, &off, c * sizeof(int));
    cs->blk_F = fb_block_carve(base, &off, c * c * sizeof(double));
    cs->blk_state = fb_block_carve(base, &off, c * sizeof(int));
    cs->blk_free = fb_block_carve(base, &off, c * sizeof(int));
    /* M and its factor per articulation, the dof trees */
    size_t msum = 0, lsum = 0, nmax = 0;
    fb_dof_tree* tree = fb_block_carve(base, &off, (size_t)cs->nart * sizeof(fb_dof_tree));
    cs->tree = tree;
    for (int k = 0; k < cs->nart; k++) {
        const size_t n = (size_t)cs->m[k]->nv;
        const int size = fb_dof_tree_size(cs->m[k]);
        cs->m_off[k] = msum;
        cs->l_off[k] = lsum;
        msum += n * n;
        lsum += (size_t)size;
        nmax = n > nmax ? n : nmax;
        fb_dof_tree t;
        t.lambda = fb_block_carve(base, &off, n * sizeof(int));
        t.len = fb_block_carve(base, &off, n * sizeof(int));
        t.off = fb_block_carve(base, &off, n * sizeof(int));
        t.chain = fb_block_carve(base, &off, (size_t)size * sizeof(int));
        if (tree) {
            tree[k] = t;
        }
    }
    size_t bsum = 0, bmax = 0;
    for (int k = 0; k < cs->nart; k++) {
        cs->b_off[k] = bsum;
        bsum += (size_t)cs->m[k]->nbody;
        bmax = (size_t)cs->m[k]->nbody > bmax ? (size_t)cs->m[k]->nbody : bmax;
    }
    cs->visit = fb_block_carve(base, &off, bsum);
    cs->mark = fb_block_carve(base, &off, bmax);
    cs->in_body = fb_block_carve(base, &off, 2 * c * sizeof(int));
    cs->in_f = fb_block_carve(base, &off, 2 * c * sizeof(fb_fv));
    cs->in_dof = fb_block_carve(base, &off, 3 * c * sizeof(int));
    cs->in_tau = fb_block_carve(base, &off, 3 * c * sizeof(double));
    cs->vwork = fb_block_carve(base, &off, nmax * sizeof(double));
    cs->nbody_total = (int)bsum;
    cs->kdu = fb_block_carve(base, &off, c * nvt * sizeof(double));
    cs->ky = fb_block_carve(base, &off, c * nvt * sizeof(double));
    cs->kpath = fb_block_carve(base, &off, c * bsum * sizeof(int));
    cs->kpn = fb_block_carve(base, &off, c * sizeof(int));
    cs->gdof = fb_block_carve(base, &off, bsum * sizeof(int));
    cs->gnv = fb_block_carve(base, &off, bsum * sizeof(int));
    cs->pgs_rhs = fb_block_carve(base, &off, c * sizeof(double));
    cs->pgs_on = fb_block_carve(base, &off, c * sizeof(unsigned char));
    cs->klist = fb_block_carve(base, &off, bsum * c * sizeof(int));
    cs->klen = fb_block_carve(base, &off, bsum * sizeof(int));
    cs->kseg = fb_block_carve(base, &off, 3 * bsum * sizeof(int));
    cs->M = fb_block_carve(base, &off, msum * sizeof(double));
    cs->L = fb_block_carve(base, &off, lsum * sizeof(double));
    cs->e = fb_block_carve(base, &off, nvt * sizeof(double));
    cs->unformed = fb_block_carve(base, &off, c * sizeof(unsigned char));
    cs->dof_art = fb_block_carve(base, &off, nvt * sizeof(int));
    cs->jidx = fb_block_carve(base, &off, c * nvt * sizeof(int));
    cs->jval = fb_block_carve(base, &off, c * nvt * sizeof(double));
    cs->jstart = fb_block_carve(base, &off, c * sizeof(int));
    cs->jcount = fb_block_carve(base, &off, c * sizeof(int));
    cs->js = js_layout(base, &off, nmax, c);
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
    for (int k = 0; k < nart; k++) {
        fb_dof_tree_init(m[k], &((fb_dof_tree*)cs->tree)[k]);
        for (int j = 0; j < m[k]->nv; j++) {
            cs->dof_art[cs->v_off[k] + j] = k;
        }
        for (int i = 0; i < m[k]->nbody; i++) {
            cs->gdof[cs->b_off[k] + (size_t)i] = cs->v_off[k] + m[k]->v_adr[i];
            cs->gnv[cs->b_off[k] + (size_t)i] = m[k]->jnv[i];
        }
    }
    cs->k_method = FB_K_TEST_FORCES;
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

/* Forgets what the last build and solve left beside K (M, lazy blocks, joint accelerations). */
static void forget_build(fb_csys* cs) {
    cs->restricted = false;
    cs->kbuilt = false;
    memset(cs->m_valid, 0, sizeof cs->m_valid);
    memset(cs->m_ready, 0, sizeof cs->m_ready);
    memset(cs->l_valid, 0, sizeof cs->l_valid);
    memset(cs->lazy, 0, sizeof cs->lazy);
    memset(cs->e_valid, 0, sizeof cs->e_valid);
}

void fb_csys_set_k_method(fb_csys* cs, fb_k_method method) {
    cs->k_method = method;
    forget_build(cs);
}

void fb_csys_clear(fb_csys* cs) {
    cs->nrow = 0;
    forget_build(cs);
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
    forget_build(cs); /* K no longer matches the rows */
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

/* K and the responses by test forces [Kokkevis §4.3]. */
static void build_test_forces(fb_csys* cs) {
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
}

/* a . b over n entries, in four running sums (a single sum waits on each addition's latency;
 * the order is fixed, so the result is the same on every run). With GCC or Clang and SSE2 the
 * four sums are two pairs of lanes, each lane doing exactly the arithmetic of its scalar sum,
 * so both forms give the same bits. */
#if defined(__GNUC__) && defined(__SSE2__)
typedef double fb_v2d __attribute__((vector_size(16), aligned(8)));
static inline double dot4(const double* a, const double* b, int n) {
    fb_v2d s01 = {0.0, 0.0}, s23 = {0.0, 0.0};
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        fb_v2d a01, a23, b01, b23; /* unaligned loads, without aliasing a double as a vector */
        memcpy(&a01, a + k, sizeof a01);
        memcpy(&a23, a + k + 2, sizeof a23);
        memcpy(&b01, b + k, sizeof b01);
        memcpy(&b23, b + k + 2, sizeof b23);
        s01 += a01 * b01;
        s23 += a23 * b23;
    }
    double s0 = s01[0];
    for (; k < n; k++) {
        s0 += a[k] * b[k];
    }
    return (s0 + s01[1]) + (s23[0] + s23[1]);
}
#else
static inline double dot4(const double* a, const double* b, int n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; k++) {
        s0 += a[k] * b[k];
    }
    return (s0 + s1) + (s2 + s3);
}
#endif

/* ---- K by backward passes alone (FB_K_BACKWARD) ----------------------------------------------
 * ABA's backward pass maps a generalised force tau to du (the change of u at every dof on the
 * inputs' paths), du = Gamma tau, and its forward pass maps du to qdd = Gamma^T D^-1 du, so
 * M^-1 = Gamma^T D^-1 Gamma and K_rc = J_r M^-1 J_c^T = (Gamma J_r^T) . D^-1 (Gamma J_c^T): the
 * dot product of row r's du with row c's D^-1 du over the bodies on both rows' paths (this is
 * the operational-space inverse inertia, Lambda^-1 = J M^-1 J^T, computed as in Featherstone,
 * "Exploiting sparsity in operational-space dynamics", IJRR 2010, without forming the 6 x 6
 * blocks). One backward pass per row, no forward pass, and the dot products run over the
 * shared part of two paths only (a foot's and the other foot's rows meet at the root). */

static void row_inputs(fb_csys* cs, int c, int k, double l, int* nf, int* nt);

/* Row r's backward pass in every articulation it acts on: du, D^-1 du and its bodies. */
static void backward_row(fb_csys* cs, int r) {
    const fb_row* row = &cs->row[r];
    const size_t nvt = (size_t)cs->nv_total;
    double* du = cs->kdu + (size_t)r * nvt;
    double* y = cs->ky + (size_t)r * nvt;
    int* path = cs->kpath + (size_t)r * (size_t)cs->nbody_total;
    int len = 0;
    /* articulations from the last: the list of bodies stays sorted, highest global index first */
    for (int k = cs->nart - 1; k >= 0; k--) {
        if (row->art != k && !(row->type == FB_ROW_POINT && row->art_b == k)) {
            continue;
        }
        int nf = 0, nt = 0;
        row_inputs(cs, r, k, 1.0, &nf, &nt);
        int* p = path + len;
        const int np = fb_accel_delta_backward(cs->m[k], cs->d[k], nf, cs->in_body, cs->in_f, nt,
                                               cs->in_dof, cs->in_tau, cs->mark, p,
                                               du + cs->v_off[k], y + cs->v_off[k]);
        for (int i = 0; i < np; i++) {
            p[i] += (int)cs->b_off[k];
        }
        len += np;
    }
    cs->kpn[r] = len;
}

/* du_r . y_c over n dofs (a hinge, a ball, a free joint unrolled). */
static inline double body_dot(const double* du, const double* y, int n) {
    switch (n) {
    case 1:
        return du[0] * y[0];
    case 3:
        return du[0] * y[0] + du[1] * y[1] + du[2] * y[2];
    case 6:
        return (du[0] * y[0] + du[1] * y[1] + du[2] * y[2]) +
               (du[3] * y[3] + du[4] * y[4] + du[5] * y[5]);
    default:
        return dot4(du, y, n);
    }
}

/* K from the rows' backward passes, body by body: each body adds du_r . y_c over its dofs to
 * K_rc for every pair of rows whose paths pass through it (its share of Gamma^T D^-1 Gamma). */
static void build_backward(fb_csys* cs) {
    const int nr = cs->nrow, nb = cs->nbody_total;
    const size_t nvt = (size_t)cs->nv_total, cap = (size_t)cs->cap;
    cs->restricted = true; /* no columns: fb_csys_apply sums the rows' du */
    cs->kbuilt = true;
    memset(cs->klen, 0, (size_t)nb * sizeof(int));
    for (int r = 0; r < nr; r++) {
        backward_row(cs, r);
        const int* path = cs->kpath + (size_t)r * (size_t)nb;
        for (int i = 0; i < cs->kpn[r]; i++) {
            const int g = path[i];
            cs->klist[(size_t)g * cap + (size_t)cs->klen[g]++] = r;
        }
    }
    for (int r = 0; r < nr; r++) {
        memset(cs->K + (size_t)r * (size_t)nr, 0, (size_t)(r + 1) * sizeof(double));
    }
    /* bodies that the same rows pass through and whose dofs adjoin (a leg's thigh, shin and
     * foot under the foot's and toe's rows) are taken together as one run of dofs */
    int nseg = 0;
    for (int g = nb - 1; g >= 0; g--) {
        const int n = cs->gnv[g], len = cs->klen[g];
        if (n == 0 || len == 0) {
            continue;
        }
        const int s = nseg - 1;
        if (s >= 0 && cs->klen[cs->kseg[3 * s]] == len && cs->gdof[g] + n == cs->kseg[3 * s + 1] &&
            memcmp(cs->klist + (size_t)cs->kseg[3 * s] * cap, cs->klist + (size_t)g * cap,
                   (size_t)len * sizeof(int)) == 0) {
            cs->kseg[3 * s + 1] = cs->gdof[g];
            cs->kseg[3 * s + 2] += n;
        } else {
            cs->kseg[3 * nseg] = g;
            cs->kseg[3 * nseg + 1] = cs->gdof[g];
            cs->kseg[3 * nseg + 2] = n;
            nseg++;
        }
    }
    /* runs from the highest global index down, rows in order: a fixed order of the sums */
    for (int q = 0; q < nseg; q++) {
        const int g = cs->kseg[3 * q], len = cs->klen[g], n = cs->kseg[3 * q + 2];
        const int* rows = cs->klist + (size_t)g * cap;
        const size_t k0 = (size_t)cs->kseg[3 * q + 1];
        for (int i = 0; i < len; i++) {
            const int r = rows[i];
            const double* du = cs->kdu + (size_t)r * nvt + k0;
            double* Kr = cs->K + (size_t)r * (size_t)nr;
            for (int j = 0; j <= i; j++) {
                const int c = rows[j];
                Kr[c] += body_dot(du, cs->ky + (size_t)c * nvt + k0, n);
            }
        }
    }
    for (int r = 0; r < nr; r++) {
        for (int c = 0; c < r; c++) {
            cs->K[c * nr + r] = cs->K[r * nr + c];
        }
    }
}

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

/* Test forces after the build need ABA phase 1 of the build's positions: if the caller ran
 * kinematics since (which clears the stage), phase 1 again (same positions, same result). */
static void phase1_again(fb_csys* cs, int k) {
    if (!(cs->d[k]->stage & FB_STAGE_ABA1)) {
        (void)fb_aba_phase1(cs->m[k], cs->d[k], NULL);
    }
}

/* Articulation k's part of column c by test forces [Kokkevis §4.3]: the response of k's
 * joints to row c's multiplier acting on k. */
/* The inputs of row c's multiplier (times l) on articulation k, appended to the summed
 * response's input arrays at *nf forces and *nt generalised forces. */
static void row_inputs(fb_csys* cs, int c, int k, double l, int* nf, int* nt) {
    const fb_row* row = &cs->row[c];
    const fb_model* m = cs->m[k];
    const fb_data* d = cs->d[k];
    if (row->art == k && row->type == FB_ROW_DOF) {
        cs->in_dof[*nt] = row->dof;
        cs->in_tau[(*nt)++] = l;
    } else if (row->art == k && row->type == FB_ROW_JOINT) {
        const double w[3] = {row->n.x, row->n.y, row->n.z};
        for (int j = 0; j < m->jnv[row->body] && j < 3; j++) {
            cs->in_dof[*nt] = m->v_adr[row->body] + j;
            cs->in_tau[(*nt)++] = l * w[j];
        }
    } else if (row->type == FB_ROW_POINT) {
        if (row->art == k) {
            cs->in_body[*nf] = row->body;
            cs->in_f[(*nf)++] = point_force(d, row->body, row->p, fb_v3_scale(row->n, l));
        }
        if (row->art_b == k) {
            cs->in_body[*nf] = row->body_b;
            cs->in_f[(*nf)++] = point_force(d, row->body_b, row->p_b, fb_v3_scale(row->n, -l));
        }
    }
}

static void test_force_part(fb_csys* cs, int c, int k) {
    const fb_row* row = &cs->row[c];
    const fb_model* m = cs->m[k];
    fb_data* d = cs->d[k];
    double* out = cs->dqdd + (size_t)c * (size_t)cs->nv_total + cs->v_off[k];
    if (cs->restricted) {
        /* one pass over the bodies the rows reach: the other dofs' responses are not needed */
        int nf = 0, nt = 0;
        row_inputs(cs, c, k, 1.0, &nf, &nt);
        fb_accel_delta_sum(m, d, nf, cs->in_body, cs->in_f, nt, cs->in_dof, cs->in_tau,
                           cs->visit + cs->b_off[k], cs->mark, out);
        return;
    }
    if (row->type == FB_ROW_DOF) {
        fb_accel_delta_dof(m, d, row->dof, out);
    } else if (row->type == FB_ROW_JOINT) {
        fb_accel_delta_joint(m, d, row->body, row->n, out);
    } else if (row->art == k && row->art_b == k) {
        fb_accel_delta_force_pair(m, d, row->body, point_force(d, row->body, row->p, row->n),
                                  row->body_b,
                                  point_force(d, row->body_b, row->p_b, fb_v3_neg(row->n)), out);
    } else if (row->art == k) {
        fb_accel_delta_force(m, d, row->body, point_force(d, row->body, row->p, row->n), out);
    } else {
        fb_accel_delta_force(m, d, row->body_b,
                             point_force(d, row->body_b, row->p_b, fb_v3_neg(row->n)), out);
    }
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
            test_force_part(cs, c, k);
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

/* Articulation k's M (+ h B) by CRBA, if the build has not made it yet. */
static void ensure_m(fb_csys* cs, int k) {
    if (!cs->m_ready[k]) {
        fb_crba_matrix(cs->m[k], cs->d[k], cs->M + cs->m_off[k]);
        cs->m_ready[k] = true;
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
static void form_needed(fb_csys* cs, const double* target_or_null) {
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
                    test_force_part(cs, c, k);
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

fb_status fb_csys_build(fb_csys* cs, fb_error* err) {
    forget_build(cs);
    fb_status s = fb_csys_build_a0(cs, err);
    if (s != FB_OK) {
        return s;
    }
    const int nr = cs->nrow;
    memset(cs->unformed, 0, (size_t)nr);
    if (cs->k_method == FB_K_TEST_FORCES) {
        build_test_forces(cs);
        return fb_ok(err);
    }
    if (cs->k_method == FB_K_BACKWARD) {
        build_backward(cs);
        return fb_ok(err);
    }
    s = factor_all(cs, cs->k_method == FB_K_JOINT_SPACE, err);
    if (s != FB_OK) {
        return s;
    }
    bool any_lazy = false;
    for (int k = 0; k < cs->nart; k++) {
        any_lazy = any_lazy || cs->lazy[k];
    }
    if (cs->k_method == FB_K_JOINT_SPACE && !any_lazy) {
        build_backward(cs); /* nothing left out: no joint-space solve, and no columns needed */
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
/* Previous multiplier of a row with this id, or 0; `hint`: where to look first. */
static double warm_value(const fb_csys* cs, uint64_t id, int hint) {
    if (id != 0 && hint < cs->nprev && cs->prev_id[hint] == id) {
        return cs->prev_lambda[hint]; /* rows come in the same order step after step */
    }
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
        const double ln = cs->lambda[row->friction_of];
        const double limit = row->mu * (ln > 0.0 ? ln : 0.0);
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
    return (q->b[r] - rhs_target(cs, q, r)) + dot4(cs->K + (size_t)r * (size_t)nr, cs->lambda, nr);
}

/* How far row r with multiplier lambda_r and residual w violates its LCP conditions. */
static double lcp_violation(const fb_csys* cs, int r, double w) {
    double lo, hi;
    bounds(cs, r, &lo, &hi);
    const double l = cs->lambda[r];
    if (l <= lo && l >= hi) {
        return 0.0; /* a row pinned by lo == hi (e.g. friction without normal force) */
    }
    if (l <= lo) {
        return fmax(0.0, -w);
    }
    if (l >= hi) {
        return fmax(0.0, w);
    }
    return fabs(w);
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
/* One projected Gauss-Seidel update of row r; returns how far its multiplier moved. */
static double pgs_row(fb_csys* cs, int r) {
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

/* Passes of the block's active-set solve per sweep (each a Cholesky solve, and a new
 * factorisation when the set of rows held at a bound changed). */
#define BLOCK_ACTIVE_PASSES 8

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

/* The block's multipliers solved with the other rows' held, within their bounds, by an active
 * set: the free rows' residuals w_F = (K lambda + b - t)_F vanish after lambda_F -= K_FF^-1 w_F;
 * a row that leaves its bounds is held at the bound it crossed; a held row whose residual
 * pulls it back inside is freed; repeated until the set settles (the box-constrained QP of
 * the block, exact when it does). The held set carries over between sweeps. Returns how far
 * the multipliers moved. */
static double block_step(fb_csys* cs, const lcp_rhs* q, int nb) {
    double* x = cs->blk_x;
    double moved = 0.0;
    for (int pass = 0; pass < BLOCK_ACTIVE_PASSES; pass++) {
        const int nf = block_free_rows(cs, nb);
        const double* L = nf > 0 ? block_factor(cs, nb, nf) : NULL;
        bool changed = false;
        if (L) {
            for (int k = 0; k < nf; k++) {
                x[k] = row_w(cs, q, cs->blk_idx[cs->blk_free[k]]);
            }
            fb_chol_solve(L, nf, x);
            for (int k = 0; k < nf; k++) {
                const int i = cs->blk_free[k], r = cs->blk_idx[i];
                double lo, hi;
                bounds(cs, r, &lo, &hi);
                const double want = cs->lambda[r] - x[k];
                const double l = fmin(hi, fmax(lo, want));
                if (l != want) {
                    cs->blk_state[i] = want < lo ? -1 : 1;
                    changed = true;
                }
                moved = fmax(moved, fabs(l - cs->lambda[r]));
                cs->lambda[r] = l;
            }
        }
        for (int i = 0; i < nb; i++) {
            const int st = cs->blk_state[i];
            if (st != 0) {
                const double w = row_w(cs, q, cs->blk_idx[i]);
                if ((st < 0 && w < 0.0) || (st > 0 && w > 0.0)) {
                    cs->blk_state[i] = 0; /* the residual pulls it back inside */
                    changed = true;
                }
            }
        }
        if (!changed) {
            break;
        }
        cs->blk_ver++;
    }
    return moved;
}

/* Projected Gauss-Seidel; when enough rows are joint rows with bounds around zero (a tracking
 * controller's), block Gauss-Seidel instead: those rows are solved together (an active-set
 * solve of their K block within their bounds, block_step) and the other rows (contacts,
 * friction, limits) one by one between block solves. PGS alone converges slowly on the strong
 * coupling of M^-1 between the joints of one body, and more slowly still once torque limits
 * bind; the block solve removes that coupling from the iteration. */
static void pgs_sweeps(fb_csys* cs, const lcp_rhs* q, const fb_pgs_opts* o) {
    const int nr = cs->nrow;
    const int nb = block_rows(cs, q);
    for (int i = 0; i < nb; i++) {
        cs->blk_state[i] = 0;
    }
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
        double moved = nb > 0 ? block_step(cs, q, nb) : 0.0;
        for (int r = 0, i = 0; r < nr; r++) {
            if (i < nb && cs->blk_idx[i] == r) {
                i++;
                continue;
            }
            const double mr = pgs_row(cs, r);
            moved = mr > moved ? mr : moved;
        }
        if (moved <= o->tol) {
            it++;
            break;
        }
    }
    cs->iterations = it;
    cs->residual = lcp_residual(cs, q);
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

enum { DOF_FREE = 0, DOF_LO, DOF_HI, DOF_FIXED };
/* ROW_TLO, ROW_THI: a friction row at -mu lambda_n, +mu lambda_n */
enum { ROW_UNSEEN = 0, ROW_DRIVEN, ROW_FREE, ROW_LO, ROW_HI, ROW_TLO, ROW_THI, ROW_OUT };

typedef struct js_ctx {
    fb_csys* cs;
    const lcp_rhs* q;
    js_scratch* s;
    int a, n;        /* the articulation and its dofs */
    const double* M; /* its M */
    int no, nc, nfo; /* other rows, clamped dofs, free other rows */
    double tol_w, tol_l;
    int pivots, max_pivots;
    bool c_dirty; /* the clamped dofs changed since js_factor */
} js_ctx;

/* The articulation the joint-space solve applies to: M made by the last build and its dof rows
 * taking part on at least BLOCK_MIN_ROWS dofs, one row per dof; -1 if none. Sets s->rk. */
static int js_art(fb_csys* cs, const lcp_rhs* q) {
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

/* Whether other row i is a friction row tied to a normal row among the other rows. */
static bool js_tied_friction(const js_scratch* s, int i) {
    return s->nidx[i] >= 0;
}

/* The coefficient of a tied friction row: lambda_t = c lambda_n. */
static double js_tie(const js_scratch* s, int i) {
    return s->ostate[i] == ROW_THI ? s->mu[i] : -s->mu[i];
}

static bool js_is_tied(const js_scratch* s, int i) {
    return s->ostate[i] == ROW_TLO || s->ostate[i] == ROW_THI;
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
        const fb_row* row = &cs->row[s->oidx[i]];
        s->nidx[i] = ties && row->friction_of >= 0 ? s->opos[row->friction_of] : -1;
        s->mu[i] = row->mu;
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
    x->tol_w = 1e-11 * scale;
    x->tol_l = 1e-11 * lscale;
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
        for (int i2 = 0; i2 <= i; i2++) {
            const double* col = cs->dqdd + (size_t)s->oidx[i2] * (size_t)cs->nv_total;
            double v = 0.0;
            for (int e = cs->jstart[r]; e < cs->jstart[r] + cs->jcount[r]; e++) {
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
    for (int i = 0; i < x->no; i++) {
        if (s->nidx[i] >= 0 && s->ostate[s->nidx[i]] == ROW_OUT) {
            s->nidx[i] = -1; /* its normal is out: its bounds are fixed numbers */
        }
    }
    return true;
}

/* When the clamped dofs changed: M_CC and its factor, Y = M_CC^-1 J_OC^T and S. Always: the
 * matrix of the free rows, A = S_FF plus the tied friction rows' share in their normals'
 * columns, and its LU factors. False when a factor fails. */
static bool js_factor(js_ctx* x) {
    js_scratch* s = x->s;
    const int n = x->n;
    if (x->c_dirty) {
        x->c_dirty = false;
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
        if (!fb_chol_factor(s->Mcc, nc)) {
            return false;
        }
        for (int i = 0; i < x->no; i++) {
            const double* Ji = s->Ja + (size_t)i * (size_t)n;
            double* Yi = s->Y + (size_t)i * (size_t)n;
            for (int c = 0; c < nc; c++) {
                Yi[c] = Ji[s->cidx[c]];
            }
            if (s->touch[i]) {
                fb_chol_solve(s->Mcc, nc, Yi);
            }
        }
        for (int i = 0; i < x->no; i++) {
            const double* Ji = s->Ja + (size_t)i * (size_t)n;
            for (int i2 = 0; i2 <= i; i2++) {
                const double* Y2 = s->Y + (size_t)i2 * (size_t)n;
                double v = 0.0;
                for (int c = 0; s->touch[i] && s->touch[i2] && c < nc; c++) {
                    v += Ji[s->cidx[c]] * Y2[c];
                }
                s->S[i * JS_MAX_O + i2] = v + s->Koth[i * JS_MAX_O + i2];
                s->S[i2 * JS_MAX_O + i] = v + s->Koth[i2 * JS_MAX_O + i];
            }
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

/* The other rows' multipliers live in cs->lambda; this one's. */
static double* js_lambda(js_ctx* x, int i) {
    return &x->cs->lambda[x->s->oidx[i]];
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
    for (int c = 0; c < nc; c++) {
        s->z0[c] = s->tau[s->cidx[c]] - s->u[s->cidx[c]];
    }
    fb_chol_solve(s->Mcc, nc, s->z0);
    for (int i = 0; i < no; i++) {
        const double* Ji = s->Ja + (size_t)i * (size_t)n;
        double h = s->jd[i];
        for (int c = 0; s->touch[i] && c < nc; c++) {
            h += Ji[s->cidx[c]] * s->z0[c];
        }
        s->h[i] = h;
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
    for (int i = 0; i < no; i++) {
        double w = s->h[i];
        for (int i2 = 0; i2 < no; i2++) {
            w += s->S[i * JS_MAX_O + i2] * *js_lambda(x, i2);
        }
        s->w[i] = w;
    }
}

/* Recomputes everything after a change of the sets; false when a factor fails. */
static bool js_update(js_ctx* x) {
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
    for (int round = 0; round < 4 * x->n + 64; round++) {
        if (!js_update(x)) {
            return false;
        }
        x->pivots++;
        /* the infeasible dofs: free ones past a bound, clamped ones on the wrong side */
        int bad = 0, first = -1;
        for (int k = 0; k < x->n; k++) {
            const bool over = s->dstate[k] == DOF_FREE &&
                              (s->tau[k] < s->lo[k] - x->tol_l || s->tau[k] > s->hi[k] + x->tol_l);
            bad += over;
            first = (over && first < 0) ? k : first;
        }
        for (int c = 0; c < x->nc; c++) {
            const int k = s->cidx[c];
            const bool wrong = (s->dstate[k] == DOF_LO && s->z[c] < -x->tol_w) ||
                               (s->dstate[k] == DOF_HI && s->z[c] > x->tol_w);
            bad += wrong;
            first = (wrong && (first < 0 || k < first)) ? k : first;
        }
        if (bad == 0) {
            return true;
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
    fb_csys* cs = x->cs;
    js_scratch* s = x->s;
    const int n = x->n, no = x->no;
    double lo, hi;
    bounds(cs, s->oidx[d], &lo, &hi); /* a friction row's from its normal as it is now */
    if (lo > 0.0 || hi < 0.0) {
        return false;
    }
    s->olo[d] = lo;
    s->ohi[d] = hi;
    /* lambda_d is 0 and w_d current since the last update: nothing to recompute yet */
    s->ostate[d] = ROW_DRIVEN;
    int stalled = 0; /* pivots in a row that moved nothing: a cycle, past a few */
    for (;;) {
        const double ld = *js_lambda(x, d), wd = s->w[d];
        const bool tied = js_tied_friction(s, d);
        const double lim = tied ? s->mu[d] * fmax(0.0, *js_lambda(x, s->nidx[d])) : 0.0;
        const bool at_lo = tied ? ld <= -lim : ld <= lo;
        const bool at_hi = tied ? ld >= lim : ld >= hi;
        if (at_lo && wd >= -x->tol_w) {
            s->ostate[d] = tied ? ROW_TLO : ROW_LO;
            return !tied || js_update(x);
        }
        if (at_hi && wd <= x->tol_w) {
            s->ostate[d] = tied ? ROW_THI : ROW_HI;
            return !tied || js_update(x);
        }
        if (fabs(wd) <= x->tol_w) {
            s->ostate[d] = ROW_FREE;
            return js_update(x);
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
            return false;
        }
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
        if (!js_update(x)) {
            return false;
        }
        if (event == 1 || event == 2) {
            return true;
        }
    }
}

/* The joint-space solve of articulation a, friction rows at a bound tied to their normals
 * (ties) or held at the bound their normal gave when they were driven; false when it gives up
 * (a cycle: with ties the matrix is not symmetric and pivoting can cycle; an unbounded
 * direction). */
static bool js_solve(fb_csys* cs, const lcp_rhs* q, int a, bool ties) {
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
    x.c_dirty = true;
    if (!js_dofs(&x)) {
        return false;
    }
    /* the rows without friction first (normals, limits, rows on other articulations), then
     * the friction rows, so that every normal force is there when its friction is driven */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < x.no; i++) {
            const bool friction = cs->row[s->oidx[i]].friction_of >= 0;
            if (friction == (pass == 1) && s->ostate[i] != ROW_OUT && !js_drive(&x, i)) {
                return false;
            }
        }
    }
    /* held at bounds from their normals when driven, friction rows may lie outside the cone
     * of the final normals: held at its edge instead, the free rows following */
    for (int round = 0; !ties && round < 4; round++) {
        bool moved = false;
        for (int i = 0; i < x.no; i++) {
            const fb_row* row = &cs->row[s->oidx[i]];
            if (row->friction_of < 0 || s->ostate[i] == ROW_OUT) {
                continue;
            }
            const double lim = row->mu * fmax(0.0, cs->lambda[row->friction_of]);
            double* l = js_lambda(&x, i);
            if (fabs(*l) > lim + x.tol_l) {
                *l = *l > 0.0 ? lim : -lim;
                s->ostate[i] = *l > 0.0 ? ROW_HI : ROW_LO;
                moved = true;
            }
        }
        if (!moved || !js_update(&x)) {
            break;
        }
    }
    /* the multipliers of the dof rows, the joint accelerations, the residual */
    double* e = cs->e + cs->v_off[a];
    for (int k = 0; k < x.n; k++) {
        e[k] = s->delta[k];
        if (s->rk[k] >= 0) {
            cs->lambda[s->rk[k]] = s->tau[k];
        }
    }
    for (int c = 0; c < x.nc; c++) {
        e[s->cidx[c]] += s->z[c];
    }
    cs->e_valid[a] = true;
    double worst = 0.0;
    for (int k = 0; k < x.n; k++) {
        if (s->rk[k] >= 0) {
            worst = fmax(worst, lcp_violation(cs, s->rk[k], e[k] - s->delta[k]));
        }
    }
    for (int i = 0; i < x.no; i++) {
        worst = fmax(worst, lcp_violation(cs, s->oidx[i], s->w[i]));
    }
    cs->iterations = x.pivots;
    cs->residual = worst;
    return true;
}

/* The solve: in joint space where it applies, else projected Gauss-Seidel (forming the entries
 * of K the build left out first). */
static void pgs(fb_csys* cs, const lcp_rhs* q, const fb_pgs_opts* o) {
    memset(cs->e_valid, 0, sizeof cs->e_valid);
    const int a = js_art(cs, q);
    if (a >= 0) {
        memcpy(cs->blk_x, cs->lambda, (size_t)cs->nrow * sizeof(double));
        for (int ties = 1; ties >= 0; ties--) {
            if (js_solve(cs, q, a, ties)) {
                return;
            }
            memcpy(cs->lambda, cs->blk_x, (size_t)cs->nrow * sizeof(double));
            memset(cs->e_valid, 0, sizeof cs->e_valid);
        }
    }
    bool need = false;
    for (int r = 0; r < cs->nrow; r++) {
        need = need || (cs->unformed[r] && !isinf(rhs_target(cs, q, r)));
    }
    if (need) {
        form_needed(cs, q->t);
    }
    pgs_sweeps(cs, q, o);
}

void fb_csys_solve(fb_csys* cs, const fb_pgs_opts* opts) {
    const fb_pgs_opts o = opts ? *opts : fb_default_pgs_opts();
    const int nr = cs->nrow;
    for (int r = 0; r < nr; r++) {
        cs->lambda[r] = o.warm ? warm_value(cs, cs->row[r].id, r) : 0.0;
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

/* Adds sum_c lambda_c dqdd_c to x(k) of every articulation k (its qdd or its qd); for one the
 * joint-space solve handled, its joint accelerations' change e instead. */
static void add_responses(fb_csys* cs, bool to_velocity) {
    for (int k = 0; k < cs->nart; k++) {
        const int nv = cs->m[k]->nv;
        double* x = to_velocity ? cs->d[k]->qd : cs->d[k]->qdd;
        if (cs->e_valid[k]) {
            const double* e = cs->e + cs->v_off[k];
            for (int j = 0; j < nv; j++) {
                x[j] += e[j];
            }
            continue;
        }
        if (cs->kbuilt) {
            /* K by backward passes: the response to all the rows is the forward pass of
             * du = sum_r lambda_r du_r, from each row's du kept by the build */
            fb_data* d = cs->d[k];
            const size_t nvt = (size_t)cs->nv_total, nb = (size_t)cs->nbody_total;
            const int g0 = (int)cs->b_off[k], g1 = g0 + cs->m[k]->nbody;
            memset(d->du, 0, (size_t)nv * sizeof(double));
            bool any = false;
            for (int r = 0; r < cs->nrow; r++) {
                const double l = cs->lambda[r];
                const int* path = cs->kpath + (size_t)r * nb;
                const double* du = cs->kdu + (size_t)r * nvt;
                for (int i = 0; l != 0.0 && i < cs->kpn[r]; i++) {
                    const int g = path[i];
                    if (g < g0 || g >= g1) {
                        continue;
                    }
                    for (int j = cs->gdof[g]; j < cs->gdof[g] + cs->gnv[g]; j++) {
                        d->du[j - cs->v_off[k]] += l * du[j];
                    }
                    any = true;
                }
            }
            if (any) {
                phase1_again(cs, k);
                fb_accel_delta_forward(cs->m[k], d, cs->vwork);
                for (int j = 0; j < nv; j++) {
                    x[j] += cs->vwork[j];
                }
            }
            continue;
        }
        if (cs->restricted) {
            /* the columns hold the reached dofs only: one response to all the rows' forces */
            int nf = 0, nt = 0;
            for (int c = 0; c < cs->nrow; c++) {
                if (cs->lambda[c] != 0.0) {
                    row_inputs(cs, c, k, cs->lambda[c], &nf, &nt);
                }
            }
            if (nf + nt > 0) {
                phase1_again(cs, k);
                fb_accel_delta_sum(cs->m[k], cs->d[k], nf, cs->in_body, cs->in_f, nt, cs->in_dof,
                                   cs->in_tau, NULL, cs->mark, cs->vwork);
                for (int j = 0; j < nv; j++) {
                    x[j] += cs->vwork[j];
                }
            }
            continue;
        }
        for (int c = 0; c < cs->nrow; c++) {
            const double l = cs->lambda[c];
            if (l == 0.0 || cs->unformed[c] == 2) {
                continue; /* a row without a column: only on an articulation solved apart */
            }
            const double* col = cs->dqdd + (size_t)c * (size_t)cs->nv_total + cs->v_off[k];
            for (int j = 0; j < nv; j++) {
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
