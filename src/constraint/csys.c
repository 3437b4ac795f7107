/* The constraint system [Kokkevis §6, Cline §2.7]: its rows and their checks, its lifetime
 * (one block laid out twice), each row's acceleration with zero multipliers (a0) and its
 * velocity, the entry points that build K (by the method chosen: k_test_forces.c,
 * k_backward.c, k_factor.c) and solve (joint_space.c where it applies, else pgs.c) with warm
 * starts, and what the multipliers do to the joints (apply; impulses [Kokkevis §5]).
 * csys_internal.h lists the files and what they share. */
#include <math.h>
#include <string.h>

#include "featherbone/constraint.h"
#include "featherbone/dynamics.h"
#include "constraint/accel_deltas.h"
#include "constraint/csys_internal.h"
#include "dynamics/crba.h"
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
    cs->js = fb_js_layout(base, &off, nmax, c);
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
    char* block = fb_alloc_zero(&a, size);
    if (!block) {
        fb_free(&a, cs);
        fb_fail(err, FB_ENOMEM, "fb_csys_create: out of memory for %d rows", max_rows);
        return NULL;
    }
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

/* dst's block made src's (size bytes; the same layout), but for the three cap x cap arrays
 * (K, blk_L, blk_F: most of the block, sized for the world's every contact) only as far as
 * either system ever wrote them (nrow_max^2 doubles): beyond that both hold the zeros they were
 * allocated with, so the result is the whole copy's, without writing (and making resident)
 * some 27 MB a saved simulation of the sampling search never uses. old: dst before the copy
 * (its nrow_max); dst->nrow_max becomes the larger. */
static void copy_block(fb_csys* dst, const fb_csys* src, const fb_csys* old, size_t size) {
    const int n = src->nrow_max > old->nrow_max ? src->nrow_max : old->nrow_max;
    dst->nrow_max = n;
    const size_t used = (size_t)n * (size_t)n * sizeof(double);
    const size_t whole = (size_t)src->cap * (size_t)src->cap * sizeof(double);
    const char* s = src->block;
    char* d = dst->block;
    /* the three arrays in block order (layout carves K, then blk_L, then blk_F) */
    const size_t at[3] = {(size_t)((const char*)src->K - s), (size_t)((const char*)src->blk_L - s),
                          (size_t)((const char*)src->blk_F - s)};
    if (!(at[0] < at[1] && at[1] < at[2])) {
        memcpy(d, s, size); /* not the order layout carves them in: the whole block */
        return;
    }
    size_t from = 0;
    for (int k = 0; k < 3; k++) {
        memcpy(d + from, s + from, at[k] - from);
        memcpy(d + at[k], s + at[k], used);
        from = at[k] + whole;
    }
    memcpy(d + from, s + from, size - from);
}

fb_status fb_csys_copy(fb_csys* dst, const fb_csys* src, fb_error* err) {
    bool same = dst->nart == src->nart && dst->cap == src->cap && dst->nv_total == src->nv_total;
    for (int k = 0; same && k < src->nart; k++) {
        same = dst->m[k]->nbody == src->m[k]->nbody && dst->m[k]->nv == src->m[k]->nv;
    }
    if (!same) {
        return fb_fail(err, FB_EINVAL,
                       "fb_csys_copy: the systems differ in articulations, dofs or rows");
    }
    if (dst == src) {
        return fb_ok(err);
    }
    /* everything but what dst owns or lends: its block, allocator, models and data */
    const fb_csys keep = *dst;
    *dst = *src;
    memcpy(dst->m, keep.m, sizeof dst->m);
    memcpy(dst->d, keep.d, sizeof dst->d);
    dst->alloc = keep.alloc;
    dst->block = keep.block;
    fb_csys shape = *dst; /* counts the block's bytes without touching dst's pointers */
    copy_block(dst, src, &keep, layout(&shape, NULL, src->cap, src->nv_total));
    /* the arrays point into dst's block again; the structs inside it that layout wrote hold
     * counts besides their pointers, taken from src's */
    layout(dst, dst->block, dst->cap, dst->nv_total);
    for (int k = 0; k < dst->nart; k++) {
        fb_dof_tree* t = &((fb_dof_tree*)dst->tree)[k];
        const fb_dof_tree* u = &((const fb_dof_tree*)src->tree)[k];
        t->n = u->n;
        t->size = u->size;
    }
    fb_js_copy_values(dst->js, src->js);
    return fb_ok(err);
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

void fb_csys_set_asleep(fb_csys* cs, int art, bool asleep) {
    if (art >= 0 && art < cs->nart) {
        cs->asleep[art] = asleep;
    }
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
    const int other = r->type == FB_ROW_POINT ? r->art_b : -1;
    if (cs->asleep[r->art] || (other >= 0 && other < cs->nart && cs->asleep[other])) {
        return fb_fail(err, FB_ESTATE,
                       "row %d: articulation %d is asleep: it takes no rows (wake it first, "
                       "fb_world_wake)",
                       k, cs->asleep[r->art] ? r->art : other);
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
            ((r->art_b == r->art && r->body_b == r->body &&
              !(fb_v3_norm(fb_v3_sub(r->p, r->p_b)) > 1e-9)) ||
             !body_ok(cs, r->art_b, r->body_b) ||
             !fb_v3_is_finite(r->p_b))) {
            return fb_fail(err, FB_EINVAL,
                           "row %d: art_b/body_b/p_b: expected a body of another articulation, "
                           "another body of art %d, or another point of the same body (a "
                           "couple), found art %d body %d",
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
    cs->nrow_max = cs->nrow > cs->nrow_max ? cs->nrow : cs->nrow_max;
    forget_build(cs); /* K no longer matches the rows */
    return fb_ok(err);
}

/* FB_ESTATE unless every articulation not left out has ABA phases 1 and 2 done. */
static fb_status need_aba(const fb_csys* cs, const char* who, fb_error* err) {
    for (int k = 0; k < cs->nart; k++) {
        const unsigned need = FB_STAGE_ABA1 | FB_STAGE_ACC;
        if (!cs->asleep[k] && (cs->d[k]->stage & need) != need) {
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

/* The inputs of row c's multiplier (times l) on articulation k, appended to the summed
 * response's input arrays at *nf forces and *nt generalised forces. */
void fb_row_inputs(fb_csys* cs, int c, int k, double l, int* nf, int* nt) {
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

fb_status fb_csys_build(fb_csys* cs, fb_error* err) {
    forget_build(cs);
    fb_status s = fb_csys_build_a0(cs, err);
    if (s != FB_OK) {
        return s;
    }
    const int nr = cs->nrow;
    memset(cs->unformed, 0, (size_t)nr);
    if (cs->k_method == FB_K_TEST_FORCES) {
        fb_k_test_forces(cs);
        return fb_ok(err);
    }
    if (cs->k_method == FB_K_BACKWARD) {
        fb_k_backward(cs);
        return fb_ok(err);
    }
    return fb_k_factor(cs, err);
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

/* The solve: in joint space where it applies, else projected Gauss-Seidel (forming the entries
 * of K the build left out first). */
static void lcp_solve(fb_csys* cs, const lcp_rhs* q, const fb_pgs_opts* o) {
    memset(cs->e_valid, 0, sizeof cs->e_valid);
    const int a = fb_js_art(cs, q);
    if (a >= 0) {
        memcpy(cs->blk_x, cs->lambda, (size_t)cs->nrow * sizeof(double));
        for (int ties = 1; ties >= 0; ties--) {
            if (fb_js_solve(cs, q, a, ties)) {
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
        fb_k_form_needed(cs, q->t);
    }
    fb_pgs_sweeps(cs, q, o);
}

void fb_csys_solve(fb_csys* cs, const fb_pgs_opts* opts) {
    const fb_pgs_opts o = opts ? *opts : fb_default_pgs_opts();
    const int nr = cs->nrow;
    for (int r = 0; r < nr; r++) {
        cs->lambda[r] = o.warm ? warm_value(cs, cs->row[r].id, r) : 0.0;
    }
    const lcp_rhs q = {cs->a0, NULL};
    lcp_solve(cs, &q, &o);
    /* remember the multipliers by row identity for the next warm start */
    cs->nprev = 0;
    for (int r = 0; r < nr; r++) {
        if (cs->row[r].id != 0) {
            cs->prev_id[cs->nprev] = cs->row[r].id;
            cs->prev_lambda[cs->nprev++] = cs->lambda[r];
        }
    }
}

/* Adds sum_c lambda_c dqdd_c to x(k) of every articulation k not left out (its qdd or its
 * qd); for one the joint-space solve handled, its joint accelerations' change e instead. */
static void add_responses(fb_csys* cs, bool to_velocity) {
    for (int k = 0; k < cs->nart; k++) {
        if (cs->asleep[k]) {
            continue; /* no row acts on it */
        }
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
                    fb_row_inputs(cs, c, k, cs->lambda[c], &nf, &nt);
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
    lcp_solve(cs, &q, &o);
    add_responses(cs, true);
    for (int k = 0; k < cs->nart; k++) {
        if (!cs->asleep[k]) {
            cs->d[k]->stage &= ~(unsigned)(FB_STAGE_VEL | FB_STAGE_ABA1 | FB_STAGE_ACC);
        }
    }
}
