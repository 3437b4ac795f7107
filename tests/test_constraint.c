/* Constraints: the test-force responses (AccelerationDeltas), the constraint matrix K and the
 * projected Gauss-Seidel solver, each against an independent reference:
 *   responses vs the test-force method (a full ABA call with and without the force) and vs
 *   M^-1 J^T f from CRBA; K vs J M^-1 J^T (CRBA + Jacobians) and vs the test-force method,
 *   also for rows between two bodies of one articulation (self-collision);
 *   qdd after the solve vs ABA run with the constraint forces applied; PGS vs Lemke on random
 *   LCPs, and sanity on singular K (duplicate and coplanar contacts); K by the sparse
 *   factorisation of M vs J M^-1 J^T and vs test forces; the joint-space solve of a humanoid
 *   pinned by dof rows, with contacts, against the LCP conditions with the full K. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lemke.h"
#include "math/isa.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "support.h"

#define XCHECK_TOL 1e-9

/* World spatial Jacobian of body i (6 x nv): columns are the ancestors' S in world
 * coordinates about the world origin, so tau = J^T f for a world spatial force f. */
static void spatial_jacobian_world(const fb_model* m, const fb_data* d, int i, double* J) {
    const int nv = m->nv;
    memset(J, 0, 6 * (size_t)nv * sizeof(double));
    for (int j = i; j != 0; j = m->parent[j]) {
        for (int k = m->v_adr[j]; k < m->v_adr[j] + m->jnv[j]; k++) {
            const fb_mv s = fb_xf_inv_mv(d->X_0[j], m->S[k]);
            for (int r = 0; r < 6; r++) {
                J[r * nv + k] = fb_mv_get(s, r);
            }
        }
    }
}

static fb_fv random_force(scene_rng* r) {
    return (fb_fv){{scene_rng_normal(r), scene_rng_normal(r), scene_rng_normal(r)},
                   {scene_rng_normal(r), scene_rng_normal(r), scene_rng_normal(r)}};
}

static void row_jacobian(const fb_model* ma, const fb_data* da, const fb_model* mb,
                         const fb_data* db, const fb_row* row, double* Jp, double* Jk);

/* Adds multipliers lambda of rows as the forces they stand for, to compare with ABA: a dof
 * row's to its dof's tau, a point row's force lambda n at its point (and -lambda n at its
 * second point) to the bodies' f_ext (world coordinates, as fb_data.f_ext). */
static void add_row_forces(const fb_row* rows, const double* lambda, int nr,
                           const fb_model* const* m, fb_data* const* d) {
    for (int k = 0; k < nr; k++) {
        const fb_row* row = &rows[k];
        const double l = lambda[k];
        fb_data* da = d[row->art];
        if (row->type == FB_ROW_DOF) {
            da->tau[row->dof] += l;
            continue;
        }
        const fb_v3 pa = fb_point_pos(m[row->art], da, row->body, row->p);
        da->f_ext[row->body] = fb_fv_add(
            da->f_ext[row->body],
            (fb_fv){fb_v3_scale(fb_v3_cross(pa, row->n), l), fb_v3_scale(row->n, l)});
        if (row->art_b >= 0) {
            fb_data* db = d[row->art_b];
            const fb_v3 pb = fb_point_pos(m[row->art_b], db, row->body_b, row->p_b);
            db->f_ext[row->body_b] = fb_fv_sub(
                db->f_ext[row->body_b],
                (fb_fv){fb_v3_scale(fb_v3_cross(pb, row->n), l), fb_v3_scale(row->n, l)});
        }
    }
}

START_TEST(responses_match_test_force_method_and_crba) {
    for (uint64_t seed = 1; seed <= 60; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed * 17u, 40, &err), &err);
        if (m->nv == 0) {
            fb_model_destroy(m);
            continue;
        }
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed);
        scene_random_state(m, d, &r, 2.0, 5.0);
        const int nv = m->nv;
        const size_t vb = (size_t)nv * sizeof(double);
        double* base = malloc(vb);
        double* delta = malloc(vb);
        double* tau = malloc(vb);
        double* J = malloc(6 * vb);
        double* L = malloc((size_t)nv * vb);
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        memcpy(base, d->qdd, vb);
        /* a force on a random moving body */
        int body = scene_rng_int(&r, 1, m->nbody - 1);
        const fb_fv f = random_force(&r);
        fb_accel_delta_force(m, d, body, f, delta);
        /* oracle 1: the test-force method, ABA with the force added */
        d->f_ext[body] = f;
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        d->f_ext[body] = fb_fv_zero();
        for (int k = 0; k < nv; k++) {
            tau[k] = d->qdd[k] - base[k];
        }
        ck_assert_msg(ck_rel_diff(delta, tau, nv, 1e-12) < XCHECK_TOL, "seed %llu: %g",
                      (unsigned long long)seed, ck_rel_diff(delta, tau, nv, 1e-12));
        /* oracle 2: M^-1 J^T f by CRBA and Cholesky */
        fb_crba(m, d);
        spatial_jacobian_world(m, d, body, J);
        for (int k = 0; k < nv; k++) {
            tau[k] = 0.0;
            for (int a = 0; a < 6; a++) {
                tau[k] += J[a * nv + k] * fb_fv_get(f, a);
            }
        }
        ck_assert(scene_solve_spd(d->M, nv, L, tau));
        ck_assert_msg(ck_rel_diff(delta, tau, nv, 1e-12) < XCHECK_TOL, "seed %llu (CRBA): %g",
                      (unsigned long long)seed, ck_rel_diff(delta, tau, nv, 1e-12));
        /* a unit torque on a random dof: M^-1 e_k */
        ck_assert_int_eq(fb_aba_phase1(m, d, &err), FB_OK);
        const int dof = scene_rng_int(&r, 0, nv - 1);
        fb_accel_delta_dof(m, d, dof, delta);
        fb_crba(m, d);
        memset(tau, 0, vb);
        tau[dof] = 1.0;
        ck_assert(scene_solve_spd(d->M, nv, L, tau));
        ck_assert_msg(ck_rel_diff(delta, tau, nv, 1e-12) < XCHECK_TOL, "seed %llu (dof): %g",
                      (unsigned long long)seed, ck_rel_diff(delta, tau, nv, 1e-12));
        free(base);
        free(delta);
        free(tau);
        free(J);
        free(L);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
}
END_TEST

/* Two articulations: a random tree (0) and a free ball (1). */
static fb_model* free_ball(fb_error* err) {
    fb_model* m = fb_model_create(1, NULL, err);
    fb_body_def def = fb_default_body_def();
    def.name = "ball";
    def.joint = FB_JOINT_FLOATING;
    def.inertia = fb_rbi_sphere(400.0, 0.11, fb_v3_zero());
    fb_model_add_body(m, &def, NULL, err);
    fb_model_finalize(m, err);
    return m;
}

/* Random rows over the two articulations: points with directions, pairs with the ball, dofs. */
static void random_rows(fb_csys* cs, scene_rng* r, int n) {
    fb_error err;
    for (int k = 0; k < n; k++) {
        fb_row row = fb_default_row();
        const int kind = scene_rng_int(r, 0, 2);
        const fb_model* m = cs->m[0];
        if (kind == 0 && m->nv > 0) {
            row.type = FB_ROW_DOF;
            row.dof = scene_rng_int(r, 0, m->nv - 1);
        } else {
            row.body = scene_rng_int(r, 1, m->nbody - 1);
            row.p = fb_v3_scale(scene_rng_unit(r), 0.2);
            row.n = scene_rng_unit(r);
            if (kind == 2) {
                row.art_b = 1;
                row.body_b = 1;
                row.p_b = fb_v3_scale(scene_rng_unit(r), 0.11);
            }
        }
        ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_OK);
    }
}

START_TEST(k_matches_j_minv_jt_and_the_test_force_method) {
    for (uint64_t seed = 1; seed <= 40; seed++) {
        fb_error err;
        fb_model* ma = ck_model(scene_random_tree(seed * 29u, 30, &err), &err);
        fb_model* mb = ck_model(free_ball(&err), &err);
        if (ma->nv == 0) {
            fb_model_destroy(ma);
            fb_model_destroy(mb);
            continue;
        }
        fb_data* da = ck_data(ma);
        fb_data* db = ck_data(mb);
        scene_rng r = scene_rng_make(seed);
        scene_random_state(ma, da, &r, 2.0, 5.0);
        scene_random_state(mb, db, &r, 2.0, 0.0);
        ck_assert_int_eq(fb_aba(ma, da, &err), FB_OK);
        ck_assert_int_eq(fb_aba(mb, db, &err), FB_OK);
        const fb_model* ms[2] = {ma, mb};
        fb_data* ds[2] = {da, db};
        fb_csys* cs = fb_csys_create(2, ms, ds, 24, NULL, &err);
        ck_assert_msg(cs, "%s", err.msg);
        const int nr = scene_rng_int(&r, 1, 20);
        random_rows(cs, &r, nr);
        ck_assert_int_eq(fb_csys_build(cs, &err), FB_OK);
        /* reference: J M^-1 J^T with M block diagonal over the two articulations */
        const int nva = ma->nv, nvb = mb->nv, nvt = nva + nvb;
        double* J = calloc((size_t)nr * (size_t)nvt, sizeof(double));
        double* Jp = malloc(3 * (size_t)nvt * sizeof(double));
        double* La = malloc((size_t)nva * (size_t)nva * sizeof(double));
        double* Lb = malloc((size_t)nvb * (size_t)nvb * sizeof(double));
        double* x = malloc((size_t)nvt * sizeof(double));
        fb_crba(ma, da);
        fb_crba(mb, db);
        for (int k = 0; k < nr; k++) {
            row_jacobian(ma, da, mb, db, &cs->row[k], Jp, J + (size_t)k * (size_t)nvt);
        }
        double worst = 0.0, scale = 1e-12;
        for (int c = 0; c < nr; c++) {
            memcpy(x, J + (size_t)c * (size_t)nvt, (size_t)nvt * sizeof(double));
            ck_assert(scene_solve_spd(da->M, nva, La, x));
            ck_assert(scene_solve_spd(db->M, nvb, Lb, x + nva));
            for (int k = 0; k < nr; k++) {
                double v = 0.0;
                for (int j = 0; j < nvt; j++) {
                    v += J[(size_t)k * (size_t)nvt + j] * x[j];
                }
                worst = fmax(worst, fabs(cs->K[k * nr + c] - v));
                scale = fmax(scale, fabs(v));
            }
        }
        ck_assert_msg(worst / scale < XCHECK_TOL, "seed %llu: K vs J M^-1 J^T %g",
                      (unsigned long long)seed, worst / scale);
        /* reference 2, the test-force method [Kokkevis §4.2]: for each column a full ABA call
         * with that row's unit multiplier applied as an external force or torque */
        worst = 0.0;
        for (int c = 0; c < nr; c++) {
            const fb_row* row = &cs->row[c];
            if (row->type == FB_ROW_DOF) {
                da->tau[row->dof] += 1.0;
            } else {
                const fb_v3 pa = fb_point_pos(ma, da, row->body, row->p);
                da->f_ext[row->body] = (fb_fv){fb_v3_cross(pa, row->n), row->n};
                if (row->art_b == 1) {
                    const fb_v3 pb = fb_point_pos(mb, db, row->body_b, row->p_b);
                    db->f_ext[1] = (fb_fv){fb_v3_neg(fb_v3_cross(pb, row->n)), fb_v3_neg(row->n)};
                }
            }
            ck_assert_int_eq(fb_aba(ma, da, &err), FB_OK);
            ck_assert_int_eq(fb_aba(mb, db, &err), FB_OK);
            for (int k = 0; k < nr; k++) {
                const fb_row* rk = &cs->row[k];
                double a = (rk->type == FB_ROW_DOF)
                               ? da->qdd[rk->dof]
                               : fb_v3_dot(rk->n, fb_point_acc(ma, da, rk->body, rk->p));
                if (rk->type == FB_ROW_POINT && rk->art_b == 1) {
                    a -= fb_v3_dot(rk->n, fb_point_acc(mb, db, rk->body_b, rk->p_b));
                }
                worst = fmax(worst, fabs(cs->K[k * nr + c] - (a - cs->a0[k])));
            }
            /* undo: forces off, torque back */
            if (row->type == FB_ROW_DOF) {
                da->tau[row->dof] -= 1.0;
            } else {
                da->f_ext[row->body] = fb_fv_zero();
                db->f_ext[1] = fb_fv_zero();
            }
        }
        ck_assert_msg(worst / scale < XCHECK_TOL, "seed %llu: K vs test-force method %g",
                      (unsigned long long)seed, worst / scale);
        /* after a solve, qdd0 + sum lambda dqdd equals ABA with the forces applied */
        for (int k = 0; k < nr; k++) {
            cs->row[k].lo = -INFINITY; /* bilateral: reach target 0 exactly */
        }
        fb_pgs_opts o = fb_default_pgs_opts();
        o.max_iter = 5000;
        o.tol = 1e-13;
        fb_csys_solve(cs, &o);
        ck_assert_int_eq(fb_aba(ma, da, &err), FB_OK);
        ck_assert_int_eq(fb_aba(mb, db, &err), FB_OK);
        fb_csys_apply(cs);
        double* qa = malloc((size_t)nva * sizeof(double));
        double* qb = malloc((size_t)nvb * sizeof(double));
        memcpy(qa, da->qdd, (size_t)nva * sizeof(double));
        memcpy(qb, db->qdd, (size_t)nvb * sizeof(double));
        add_row_forces(cs->row, cs->lambda, nr, ms, ds);
        ck_assert_int_eq(fb_aba(ma, da, &err), FB_OK);
        ck_assert_int_eq(fb_aba(mb, db, &err), FB_OK);
        ck_assert_msg(ck_rel_diff(qa, da->qdd, nva, 1.0) < XCHECK_TOL, "seed %llu: applied",
                      (unsigned long long)seed);
        ck_assert_msg(ck_rel_diff(qb, db->qdd, nvb, 1.0) < XCHECK_TOL, "seed %llu: applied b",
                      (unsigned long long)seed);
        free(qa);
        free(qb);
        free(J);
        free(Jp);
        free(La);
        free(Lb);
        free(x);
        fb_csys_destroy(cs);
        fb_data_destroy(da);
        fb_data_destroy(db);
        fb_model_destroy(ma);
        fb_model_destroy(mb);
    }
}
END_TEST

/* n^T (J_p(body, p) [- J_p(body_b, p_b)]) into Jk (nv): row k of J for a point row within one
 * articulation, from CRBA's independent point Jacobians. */
static void point_row_jacobian(const fb_model* m, const fb_data* d, const fb_row* row,
                               double* Jp, double* Jk) {
    const int nv = m->nv;
    memset(Jk, 0, (size_t)nv * sizeof(double));
    for (int side = 0; side < (row->art_b >= 0 ? 2 : 1); side++) {
        const double sign = side == 0 ? 1.0 : -1.0;
        fb_jac_point(m, d, side == 0 ? row->body : row->body_b, side == 0 ? row->p : row->p_b,
                     Jp);
        for (int j = 0; j < nv; j++) {
            Jk[j] += sign * (row->n.x * Jp[j] + row->n.y * Jp[nv + j] + row->n.z * Jp[2 * nv + j]);
        }
    }
}

/* Rows between two bodies of one articulation (self-collision): their column is one test with
 * both forces (fb_accel_delta_force_pair); and couples, two points of one body (rolling
 * resistance). On random trees with a mix of such pair rows, couples, single point rows and
 * dof rows: the pair response against the sum of two single responses, K
 * against J M^-1 J^T from CRBA and point Jacobians, the row velocities against J qd, and
 * qdd0 + sum lambda dqdd (fb_csys_apply) against ABA with those forces applied as f_ext. */
START_TEST(k_of_rows_within_one_articulation_matches_j_minv_jt) {
    int pair_rows = 0, couple_rows = 0, trees = 0;
    double worst_k = 0.0, worst_pair = 0.0, worst_apply = 0.0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed * 31u, 30, &err), &err);
        if (m->nv == 0 || m->nbody < 3) {
            fb_model_destroy(m);
            continue;
        }
        trees++;
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed);
        scene_random_state(m, d, &r, 2.0, 5.0);
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        const int nv = m->nv;
        const size_t vb = (size_t)nv * sizeof(double);
        double* dq_pair = malloc(vb);
        double* dq_a = malloc(vb);
        double* dq_b = malloc(vb);
        /* the pair response is the sum of the two single ones */
        const int ba = scene_rng_int(&r, 1, m->nbody - 1), bb = scene_rng_int(&r, 1, m->nbody - 1);
        const fb_fv fa = random_force(&r), fbv = random_force(&r);
        fb_accel_delta_force_pair(m, d, ba, fa, bb, fbv, dq_pair);
        fb_accel_delta_force(m, d, ba, fa, dq_a);
        fb_accel_delta_force(m, d, bb, fbv, dq_b);
        for (int k = 0; k < nv; k++) {
            dq_a[k] += dq_b[k];
        }
        worst_pair = fmax(worst_pair, ck_rel_diff(dq_pair, dq_a, nv, 1e-12));
        ck_assert_msg(ck_rel_diff(dq_pair, dq_a, nv, 1e-12) < XCHECK_TOL,
                      "seed %llu: pair response vs two responses %g", (unsigned long long)seed,
                      ck_rel_diff(dq_pair, dq_a, nv, 1e-12));
        /* rows: 0 dof, 1 point, 2 and 3 a point relative to another body of the tree, 4 a
         * couple (a point relative to another point of its own body: rolling resistance) */
        const fb_model* ms[1] = {m};
        fb_data* ds[1] = {d};
        fb_csys* cs = fb_csys_create(1, ms, ds, 24, NULL, &err);
        ck_assert_msg(cs, "%s", err.msg);
        const int nr = scene_rng_int(&r, 1, 20);
        for (int k = 0; k < nr; k++) {
            fb_row row = fb_default_row();
            const int kind = scene_rng_int(&r, 0, 4);
            if (kind == 0) {
                row.type = FB_ROW_DOF;
                row.dof = scene_rng_int(&r, 0, nv - 1);
            } else {
                row.body = scene_rng_int(&r, 1, m->nbody - 1);
                row.p = fb_v3_scale(scene_rng_unit(&r), 0.2);
                row.n = scene_rng_unit(&r);
                if (kind == 2 || kind == 3) {
                    row.art_b = 0;
                    row.body_b = scene_rng_int(&r, 1, m->nbody - 2);
                    row.body_b += row.body_b >= row.body; /* any other body */
                    row.p_b = fb_v3_scale(scene_rng_unit(&r), 0.2);
                    pair_rows++;
                } else if (kind == 4) {
                    row.art_b = 0;
                    row.body_b = row.body;
                    row.p_b = fb_v3_add(row.p, scene_rng_unit(&r));
                    couple_rows++;
                }
            }
            ck_assert_msg(fb_csys_add_row(cs, &row, &err) == FB_OK, "%s", err.msg);
        }
        ck_assert_int_eq(fb_csys_build(cs, &err), FB_OK);
        /* reference: J M^-1 J^T by CRBA and Cholesky */
        double* J = calloc((size_t)nr * (size_t)nv, sizeof(double));
        double* Jp = malloc(3 * vb);
        double* L = malloc((size_t)nv * vb);
        double* x = malloc(vb);
        fb_crba(m, d);
        for (int k = 0; k < nr; k++) {
            const fb_row* row = &cs->row[k];
            double* Jk = J + (size_t)k * (size_t)nv;
            if (row->type == FB_ROW_DOF) {
                Jk[row->dof] = 1.0;
            } else {
                point_row_jacobian(m, d, row, Jp, Jk);
            }
        }
        double worst = 0.0, scale = 1e-12;
        for (int c = 0; c < nr; c++) {
            memcpy(x, J + (size_t)c * (size_t)nv, vb);
            ck_assert(scene_solve_spd(d->M, nv, L, x));
            for (int k = 0; k < nr; k++) {
                double v = 0.0;
                for (int j = 0; j < nv; j++) {
                    v += J[(size_t)k * (size_t)nv + j] * x[j];
                }
                worst = fmax(worst, fabs(cs->K[k * nr + c] - v));
                scale = fmax(scale, fabs(v));
            }
        }
        worst_k = fmax(worst_k, worst / scale);
        ck_assert_msg(worst / scale < XCHECK_TOL, "seed %llu: K vs J M^-1 J^T %g",
                      (unsigned long long)seed, worst / scale);
        /* the row velocities are J qd */
        double v[24];
        fb_kinematics(m, d);
        fb_csys_row_velocity(cs, v);
        for (int k = 0; k < nr; k++) {
            double Jqd = 0.0;
            for (int j = 0; j < nv; j++) {
                Jqd += J[(size_t)k * (size_t)nv + j] * d->qd[j];
            }
            fb_ck_near(v[k], Jqd, XCHECK_TOL, XCHECK_TOL);
        }
        /* for any multipliers (random ones: random rows may be dependent, and the solver is
         * tested elsewhere), qdd0 + sum lambda dqdd is ABA with the forces applied */
        for (int k = 0; k < nr; k++) {
            cs->lambda[k] = scene_rng_uniform(&r, -10.0, 10.0);
        }
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        fb_csys_apply(cs);
        memcpy(x, d->qdd, vb);
        const fb_model* m1[1] = {m};
        fb_data* d1[1] = {d};
        add_row_forces(cs->row, cs->lambda, nr, m1, d1);
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        worst_apply = fmax(worst_apply, ck_rel_diff(x, d->qdd, nv, 1.0));
        ck_assert_msg(ck_rel_diff(x, d->qdd, nv, 1.0) < XCHECK_TOL, "seed %llu: applied %g",
                      (unsigned long long)seed, ck_rel_diff(x, d->qdd, nv, 1.0));
        free(dq_pair);
        free(dq_a);
        free(dq_b);
        free(J);
        free(Jp);
        free(L);
        free(x);
        fb_csys_destroy(cs);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
    printf("rows within one articulation: %d trees, %d pair rows, %d couples; K vs J M^-1 J^T "
           "%.2e, pair response %.2e, applied %.2e\n",
           trees, pair_rows, couple_rows, worst_k, worst_pair, worst_apply);
    ck_assert_int_gt(pair_rows, 100);
    ck_assert_int_gt(couple_rows, 50);
}
END_TEST

/* ---- K by the sparse factorisation of M, and the joint-space solve ------------------------ */

/* Row k's generalised force J_k^T over the two articulations (tree then ball), for the
 * J M^-1 J^T reference: dof, joint (weights on the joint's dofs) and point rows, those with a
 * second point on the ball or on another body of the tree. */
static void row_jacobian(const fb_model* ma, const fb_data* da, const fb_model* mb,
                         const fb_data* db, const fb_row* row, double* Jp, double* Jk) {
    const int nva = ma->nv, nvb = mb->nv;
    memset(Jk, 0, (size_t)(nva + nvb) * sizeof(double));
    if (row->type == FB_ROW_DOF) {
        Jk[row->dof] = 1.0;
        return;
    }
    if (row->type == FB_ROW_JOINT) {
        const double w[3] = {row->n.x, row->n.y, row->n.z};
        for (int k = 0; k < ma->jnv[row->body] && k < 3; k++) {
            Jk[ma->v_adr[row->body] + k] = w[k];
        }
        return;
    }
    if (row->art_b == 0) {
        point_row_jacobian(ma, da, row, Jp, Jk);
        return;
    }
    fb_jac_point(ma, da, row->body, row->p, Jp);
    for (int j = 0; j < nva; j++) {
        Jk[j] = row->n.x * Jp[j] + row->n.y * Jp[nva + j] + row->n.z * Jp[2 * nva + j];
    }
    if (row->art_b == 1) {
        fb_jac_point(mb, db, row->body_b, row->p_b, Jp);
        for (int j = 0; j < nvb; j++) {
            Jk[nva + j] = -(row->n.x * Jp[j] + row->n.y * Jp[nvb + j] + row->n.z * Jp[2 * nvb + j]);
        }
    }
}

/* Random rows of every kind on a tree (articulation 0) and a free ball (1): dof rows, joint
 * rows, points, points against the ball, points against another body of the tree. */
static void random_rows_all_kinds(fb_csys* cs, scene_rng* r, int n) {
    fb_error err;
    const fb_model* m = cs->m[0];
    for (int k = 0; k < n; k++) {
        fb_row row = fb_default_row();
        const int kind = scene_rng_int(r, 0, 4);
        const int body = scene_rng_int(r, 1, m->nbody - 1);
        if (kind == 0) {
            row.type = FB_ROW_DOF;
            row.dof = scene_rng_int(r, 0, m->nv - 1);
        } else if (kind == 1 && m->jnv[body] > 0) {
            row.type = FB_ROW_JOINT;
            row.body = body;
            const fb_v3 u = scene_rng_unit(r);
            row.n = m->jnv[body] >= 3   ? u
                    : m->jnv[body] == 2 ? fb_v3_scale(fb_v3_make(u.x, u.y, 0.0),
                                                      1.0 / hypot(u.x, u.y))
                                        : fb_v3_make(1.0, 0.0, 0.0);
        } else {
            row.body = body;
            row.p = fb_v3_scale(scene_rng_unit(r), 0.2);
            row.n = scene_rng_unit(r);
            const int other = scene_rng_int(r, 1, m->nbody - 1);
            if (kind == 3) {
                row.art_b = 1;
                row.body_b = 1;
                row.p_b = fb_v3_scale(scene_rng_unit(r), 0.11);
            } else if (kind == 4 && other != body) {
                row.art_b = 0;
                row.body_b = other;
                row.p_b = fb_v3_scale(scene_rng_unit(r), 0.2);
            }
        }
        ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_OK);
    }
}

/* One random case of the K tests below: a random tree and a free ball at random states (in
 * half the cases the tree's joints damped implicitly, so the matrix is M + h B, as ABA's),
 * 1 to 24 random rows of every kind in two systems, one forming K by `method` and one by test
 * forces, both built; the rows' Jacobians J and the CRBA mass matrices (plus h B) for the
 * reference J (M + h B)^-1 J^T. */
typedef struct k_case {
    fb_model *ma, *mb;
    fb_data *da, *db;
    fb_csys *cm, *ct; /* K by the method, by test forces */
    int nr, nva, nvb, nvt;
    double *J, *Jp, *La, *Lb, *x;
    scene_rng r; /* the case's random stream, after the rows */
} k_case;

static bool k_case_make(k_case* c, uint64_t tree_seed, uint64_t rng_seed, fb_k_method method) {
    fb_error err;
    *c = (k_case){0};
    c->ma = ck_model(scene_random_tree(tree_seed, 30, &err), &err);
    c->mb = ck_model(free_ball(&err), &err);
    if (c->ma->nv == 0) {
        fb_model_destroy(c->ma);
        fb_model_destroy(c->mb);
        return false;
    }
    fb_model *ma = c->ma, *mb = c->mb;
    c->r = scene_rng_make(rng_seed);
    const double h = (rng_seed % 2) ? 1.0 / 480.0 : 0.0;
    for (int i = 1; h > 0.0 && i < ma->nbody; i++) {
        if (ma->jtype[i] != FB_JOINT_FLOATING && ma->jtype[i] != FB_JOINT_FIXED) {
            ck_assert_int_eq(
                fb_model_set_damping(ma, i, scene_rng_uniform(&c->r, 0.0, 50.0), &err), FB_OK);
        }
    }
    c->da = ck_data(ma);
    c->db = ck_data(mb);
    scene_random_state(ma, c->da, &c->r, 2.0, 5.0);
    scene_random_state(mb, c->db, &c->r, 2.0, 0.0);
    c->da->damping_dt = h;
    ck_assert_int_eq(fb_aba(ma, c->da, &err), FB_OK);
    ck_assert_int_eq(fb_aba(mb, c->db, &err), FB_OK);
    const fb_model* ms[2] = {ma, mb};
    fb_data* ds[2] = {c->da, c->db};
    c->cm = fb_csys_create(2, ms, ds, 24, NULL, &err);
    c->ct = fb_csys_create(2, ms, ds, 24, NULL, &err);
    ck_assert_msg(c->cm && c->ct, "%s", err.msg);
    fb_csys_set_k_method(c->cm, method);
    fb_csys_set_k_method(c->ct, FB_K_TEST_FORCES);
    c->nr = scene_rng_int(&c->r, 1, 24);
    scene_rng r2 = c->r;
    random_rows_all_kinds(c->cm, &c->r, c->nr);
    random_rows_all_kinds(c->ct, &r2, c->nr);
    ck_assert_int_eq(fb_csys_build(c->cm, &err), FB_OK);
    ck_assert_int_eq(fb_csys_build(c->ct, &err), FB_OK);
    c->nva = ma->nv;
    c->nvb = mb->nv;
    c->nvt = c->nva + c->nvb;
    c->J = malloc((size_t)c->nr * (size_t)c->nvt * sizeof(double));
    c->Jp = malloc(3 * (size_t)c->nvt * sizeof(double));
    c->La = malloc((size_t)c->nva * (size_t)c->nva * sizeof(double));
    c->Lb = malloc((size_t)c->nvb * (size_t)c->nvb * sizeof(double));
    c->x = malloc((size_t)c->nvt * sizeof(double));
    ck_assert(c->J && c->Jp && c->La && c->Lb && c->x);
    for (int k = 0; k < c->nr; k++) {
        row_jacobian(ma, c->da, mb, c->db, &c->cm->row[k], c->Jp,
                     c->J + (size_t)k * (size_t)c->nvt);
    }
    return true;
}

/* The mass matrices (plus h B) by CRBA; after any use of the systems' ABA results. */
static void k_case_crba(k_case* c) {
    fb_crba(c->ma, c->da);
    fb_crba(c->mb, c->db);
    for (int k = 0; k < c->nva; k++) {
        c->da->M[k * c->nva + k] += c->da->damping_dt * c->ma->damping[c->ma->dof_body[k]];
    }
}

/* Largest |entry| of K by test forces (at least 1e-12). */
static double k_case_kmax(const k_case* c) {
    double kmax = 1e-12;
    for (int k = 0; k < c->nr * c->nr; k++) {
        kmax = fmax(kmax, fabs(c->ct->K[k]));
    }
    return kmax;
}

/* The method's K against the reference (*eref, absolute; *scale the reference's largest
 * entry) and against test forces (*etf, absolute); with `columns`, the method's dqdd columns
 * against the reference's and test forces' (*ecol, relative to the largest test-force one). */
static void k_case_compare(k_case* c, bool columns, double* eref, double* scale, double* etf,
                           double* ecol) {
    const int nr = c->nr, nvt = c->nvt;
    double cmax = 1e-12;
    for (int k = 0; columns && k < nr * nvt; k++) {
        cmax = fmax(cmax, fabs(c->ct->dqdd[k]));
    }
    *eref = *etf = *ecol = 0.0;
    *scale = 1e-12;
    for (int col = 0; col < nr; col++) {
        memcpy(c->x, c->J + (size_t)col * (size_t)nvt, (size_t)nvt * sizeof(double));
        ck_assert(scene_solve_spd(c->da->M, c->nva, c->La, c->x));
        ck_assert(scene_solve_spd(c->db->M, c->nvb, c->Lb, c->x + c->nva));
        if (columns) {
            const double* colm = c->cm->dqdd + (size_t)col * (size_t)c->cm->nv_total;
            const double* colt = c->ct->dqdd + (size_t)col * (size_t)c->ct->nv_total;
            for (int j = 0; j < nvt; j++) {
                *ecol = fmax(*ecol, fmax(fabs(colm[j] - c->x[j]), fabs(colm[j] - colt[j])) / cmax);
            }
        }
        for (int k = 0; k < nr; k++) {
            double v = 0.0;
            for (int j = 0; j < nvt; j++) {
                v += c->J[(size_t)k * (size_t)nvt + j] * c->x[j];
            }
            *scale = fmax(*scale, fabs(v));
            *eref = fmax(*eref, fabs(c->cm->K[k * nr + col] - v));
            *etf = fmax(*etf, fabs(c->cm->K[k * nr + col] - c->ct->K[k * nr + col]));
        }
    }
}

static void k_case_free(k_case* c) {
    free(c->J);
    free(c->Jp);
    free(c->La);
    free(c->Lb);
    free(c->x);
    fb_csys_destroy(c->cm);
    fb_csys_destroy(c->ct);
    fb_data_destroy(c->da);
    fb_data_destroy(c->db);
    fb_model_destroy(c->ma);
    fb_model_destroy(c->mb);
}

/* FB_K_FACTOR (CRBA, M = L^T L along the dof tree, one sparse solve per column) against
 * J M^-1 J^T from CRBA and a dense Cholesky solve, and against FB_K_TEST_FORCES, K and every
 * column dqdd, to 1e-10 relative; on random trees with a free ball, rows of every kind, and
 * in half the cases implicit joint damping (the matrix is then M + h B, as ABA's). */
START_TEST(k_by_factorisation_matches_crba_and_test_forces) {
    double worst_ref = 0.0, worst_tf = 0.0, worst_col = 0.0;
    int cases = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        k_case c;
        if (!k_case_make(&c, seed * 43u, seed + 1000, FB_K_FACTOR)) {
            continue;
        }
        k_case_crba(&c);
        const double kmax = k_case_kmax(&c);
        double eref, scale, etf, ecol;
        k_case_compare(&c, true, &eref, &scale, &etf, &ecol);
        worst_ref = fmax(worst_ref, eref / scale);
        worst_tf = fmax(worst_tf, etf / kmax);
        worst_col = fmax(worst_col, ecol);
        ck_assert_msg(eref / scale < 1e-10, "seed %llu: K vs J (M + hB)^-1 J^T %g",
                      (unsigned long long)seed, eref / scale);
        ck_assert_msg(etf / kmax < 1e-10, "seed %llu: K vs test forces %g",
                      (unsigned long long)seed, etf / kmax);
        ck_assert_msg(ecol < 1e-10, "seed %llu: columns %g", (unsigned long long)seed, ecol);
        cases++;
        k_case_free(&c);
    }
    printf("K by factorisation, %d cases: vs J M^-1 J^T %.2e, vs test forces %.2e, columns "
           "%.2e\n",
           cases, worst_ref, worst_tf, worst_col);
}
END_TEST

/* FB_K_BACKWARD (one backward pass per row, K_rc = sum du_r . D^-1 du_c over the shared
 * bodies, no forward pass) against J (M + hB)^-1 J^T from CRBA and a dense Cholesky solve, and
 * against FB_K_TEST_FORCES (a backward and a forward pass per column), to 1e-12 relative; on
 * random trees with a free ball, rows of every kind (dof, joint, point, point against the ball,
 * point against another body of the tree), in half the cases with implicit joint damping. Then
 * qdd0 + sum lambda dqdd for random multipliers (fb_csys_apply: one summed response, as K has
 * no columns) against the test-force columns' sum. The build is bit-identical when repeated. */
START_TEST(k_by_backward_passes_matches_crba_and_test_forces) {
    double worst_ref = 0.0, worst_tf = 0.0, worst_apply = 0.0;
    int cases = 0, rows = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        k_case c;
        if (!k_case_make(&c, seed * 59u, seed + 3000, FB_K_BACKWARD)) {
            continue;
        }
        const int nr = c.nr, nva = c.nva, nvb = c.nvb, nvt = c.nvt;
        fb_data *da = c.da, *db = c.db;
        fb_error err;
        double* K1 = malloc((size_t)nr * (size_t)nr * sizeof(double));
        memcpy(K1, c.cm->K, (size_t)nr * (size_t)nr * sizeof(double));
        ck_assert_int_eq(fb_csys_build(c.cm, &err), FB_OK);
        ck_assert(memcmp(K1, c.cm->K, (size_t)nr * (size_t)nr * sizeof(double)) == 0);
        /* the response to random multipliers: one summed pass against the columns' sum (before
         * CRBA, which overwrites what ABA left) */
        double* qdd0 = malloc((size_t)nvt * sizeof(double));
        double* qddt = malloc((size_t)nvt * sizeof(double));
        memcpy(qdd0, da->qdd, (size_t)nva * sizeof(double));
        memcpy(qdd0 + nva, db->qdd, (size_t)nvb * sizeof(double));
        for (int k = 0; k < nr; k++) {
            c.ct->lambda[k] = c.cm->lambda[k] = scene_rng_uniform(&c.r, -10.0, 10.0);
        }
        fb_csys_apply(c.ct);
        memcpy(qddt, da->qdd, (size_t)nva * sizeof(double));
        memcpy(qddt + nva, db->qdd, (size_t)nvb * sizeof(double));
        memcpy(da->qdd, qdd0, (size_t)nva * sizeof(double));
        memcpy(db->qdd, qdd0 + nva, (size_t)nvb * sizeof(double));
        fb_csys_apply(c.cm);
        double amax = 1e-12, eapp = 0.0;
        for (int j = 0; j < nvt; j++) {
            const double b = j < nva ? da->qdd[j] : db->qdd[j - nva];
            amax = fmax(amax, fabs(qddt[j] - qdd0[j]));
            eapp = fmax(eapp, fabs(b - qddt[j]));
        }
        worst_apply = fmax(worst_apply, eapp / amax);
        ck_assert_msg(eapp / amax < 1e-12, "seed %llu: apply %g", (unsigned long long)seed,
                      eapp / amax);
        k_case_crba(&c);
        const double kmax = k_case_kmax(&c);
        double eref, scale, etf, ecol;
        k_case_compare(&c, false, &eref, &scale, &etf, &ecol);
        worst_ref = fmax(worst_ref, eref / kmax);
        worst_tf = fmax(worst_tf, etf / kmax);
        ck_assert_msg(eref / kmax < 1e-12, "seed %llu: K vs J (M + hB)^-1 J^T %g",
                      (unsigned long long)seed, eref / kmax);
        ck_assert_msg(etf / kmax < 1e-12, "seed %llu: K vs test forces %g",
                      (unsigned long long)seed, etf / kmax);
        cases++;
        rows += nr;
        free(qdd0);
        free(qddt);
        free(K1);
        k_case_free(&c);
    }
    printf("K by backward passes, %d cases, %d rows: vs J M^-1 J^T %.2e, vs test forces %.2e, "
           "apply %.2e\n",
           cases, rows, worst_ref, worst_tf, worst_apply);
}
END_TEST

/* Random contacts on the tree (articulation 0) and the free ball (1): against the ground,
 * the ball against the tree (either side first), and between two bodies of the tree (a
 * self-contact, whose rows go one by one). Returns their number. */
static int random_contacts(const fb_model* m, scene_rng* r, fb_contact* c, int n) {
    for (int k = 0; k < n; k++) {
        const int kind = scene_rng_int(r, 0, 3);
        const int body = scene_rng_int(r, 1, m->nbody - 1);
        const int other = scene_rng_int(r, 1, m->nbody - 1);
        c[k] = (fb_contact){.art_a = 0, .body_a = body, .p_a = fb_v3_scale(scene_rng_unit(r), 0.2),
                            .art_b = -1, .p_b = fb_v3_zero(), .n = scene_rng_unit(r),
                            .depth = 1e-3, .id = (uint64_t)k + 1u,
                            .r_a = scene_rng_uniform(r, 0.0, 0.1)};
        if (kind == 1 || kind == 2) {
            c[k].art_b = 1;
            c[k].body_b = 1;
            c[k].p_b = fb_v3_scale(scene_rng_unit(r), 0.11);
            c[k].r_b = 0.11;
            if (kind == 2) { /* the ball as side A */
                c[k].art_a = 1;
                c[k].body_a = 1;
                c[k].art_b = 0;
                c[k].body_b = body;
            }
        } else if (kind == 3 && other != body) {
            c[k].art_b = 0;
            c[k].body_b = other;
            c[k].p_b = fb_v3_scale(scene_rng_unit(r), 0.2);
        }
    }
    return n;
}

/* s n^T (the world Jacobian of point p of body i) added to Jk: a point row's generalised force
 * on one articulation, for the J M^-1 J^T reference. */
static void add_point_jacobian(const fb_model* m, const fb_data* d, int i, fb_v3 p, fb_v3 n,
                               double s, double* Jp, double* Jk) {
    const int nv = m->nv;
    fb_jac_point(m, d, i, p, Jp);
    for (int j = 0; j < nv; j++) {
        Jk[j] += s * (n.x * Jp[j] + n.y * Jp[nv + j] + n.z * Jp[2 * nv + j]);
    }
}

/* A contact's three rows (normal and two friction rows, fb_contact_rows) are built by one
 * backward pass for the three (fb_aba_contact_path, under FB_K_BACKWARD): each row's path, du
 * and D^-1 du are bit for bit those of its own single-row pass (the same rows with a dof row
 * after each, which keeps them apart), in both compilations of the kernel (baseline x86-64 and
 * AVX2: the same K, bit for bit), and K matches J (M + hB)^-1 J^T from CRBA and point
 * Jacobians. Random trees with a free ball, 1-8 contacts against the ground, the ball (either
 * side first) and another body of the tree, half with implicit joint damping. */
START_TEST(k_by_contacts_gives_each_row_the_bits_of_its_own_pass) {
    const bool avx2 = fb_isa_best() == FB_ISA_AVX2;
    double worst_ref = 0.0;
    int cases = 0, grouped = 0, isa_cases = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        /* k_case's tree, ball and states; its two systems hold the contacts' rows instead */
        k_case c;
        if (!k_case_make(&c, seed * 71u, seed + 7000, FB_K_BACKWARD)) {
            continue;
        }
        fb_error err;
        fb_csys *cs = c.cm, *apart = c.ct;
        fb_csys_clear(cs);
        fb_csys_clear(apart);
        fb_csys_set_k_method(apart, FB_K_BACKWARD);
        fb_contact con[4];
        const int ncon = random_contacts(c.ma, &c.r, con, scene_rng_int(&c.r, 1, 4));
        ck_assert_int_eq(fb_contact_rows(cs, con, ncon, 0.8, NULL, &err), FB_OK);
        const int nr = cs->nrow;
        for (int k = 0; k < nr; k++) {
            fb_row row = cs->row[k];
            row.friction_of = row.friction_of >= 0 ? 2 * row.friction_of : -1;
            ck_assert_int_eq(fb_csys_add_row(apart, &row, &err), FB_OK);
            fb_row dof = fb_default_row();
            dof.type = FB_ROW_DOF;
            dof.dof = scene_rng_int(&c.r, 0, c.nva - 1);
            ck_assert_int_eq(fb_csys_add_row(apart, &dof, &err), FB_OK);
        }
        ck_assert_int_eq(fb_csys_build(cs, &err), FB_OK);
        ck_assert_int_eq(fb_csys_build(apart, &err), FB_OK);
        const size_t nvt = (size_t)c.nvt, nb = (size_t)cs->nbody_total;
        for (int k = 0; k < nr; k++) {
            const size_t ka = 2 * (size_t)k;
            ck_assert_int_eq(cs->kpn[k], apart->kpn[ka]);
            const int* path = cs->kpath + (size_t)k * nb;
            ck_assert(memcmp(path, apart->kpath + ka * nb, (size_t)cs->kpn[k] * sizeof(int)) == 0);
            for (int i = 0; i < cs->kpn[k]; i++) {
                const size_t j = (size_t)cs->gdof[path[i]], n = (size_t)cs->gnv[path[i]];
                ck_assert_msg(memcmp(cs->kdu + (size_t)k * nvt + j, apart->kdu + ka * nvt + j,
                                     n * sizeof(double)) == 0 &&
                                  memcmp(cs->ky + (size_t)k * nvt + j,
                                         apart->ky + ka * nvt + j, n * sizeof(double)) == 0,
                              "seed %llu row %d body %d: du or y differs from the row's own "
                              "pass",
                              (unsigned long long)seed, k, path[i]);
            }
            grouped += cs->row[k].art_b != cs->row[k].art;
        }
        if (avx2) {
            /* the other compilation of the kernel: the same K */
            double K1[12 * 12];
            memcpy(K1, cs->K, (size_t)nr * (size_t)nr * sizeof(double));
            fb_isa_force(FB_ISA_BASE);
            ck_assert_int_eq(fb_csys_build(cs, &err), FB_OK);
            fb_isa_force(FB_ISA_AUTO);
            ck_assert_msg(memcmp(K1, cs->K, (size_t)nr * (size_t)nr * sizeof(double)) == 0,
                          "seed %llu: the baseline kernel gives another K",
                          (unsigned long long)seed);
            isa_cases++;
        }
        /* K against J (M + hB)^-1 J^T, J from point Jacobians */
        k_case_crba(&c);
        const fb_model* ms[2] = {c.ma, c.mb};
        fb_data* ds[2] = {c.da, c.db};
        double* J = calloc((size_t)nr * nvt, sizeof(double));
        ck_assert(J != NULL);
        for (int k = 0; k < nr; k++) {
            const fb_row* row = &cs->row[k];
            double* Jk = J + (size_t)k * nvt;
            add_point_jacobian(ms[row->art], ds[row->art], row->body, row->p, row->n, 1.0, c.Jp,
                               Jk + (row->art ? c.nva : 0));
            if (row->art_b >= 0) {
                add_point_jacobian(ms[row->art_b], ds[row->art_b], row->body_b, row->p_b, row->n,
                                   -1.0, c.Jp, Jk + (row->art_b ? c.nva : 0));
            }
        }
        double kmax = 1e-12, eref = 0.0;
        for (int col = 0; col < nr; col++) {
            memcpy(c.x, J + (size_t)col * nvt, nvt * sizeof(double));
            ck_assert(scene_solve_spd(c.da->M, c.nva, c.La, c.x));
            ck_assert(scene_solve_spd(c.db->M, c.nvb, c.Lb, c.x + c.nva));
            for (int k = 0; k < nr; k++) {
                double v = 0.0;
                for (size_t j = 0; j < nvt; j++) {
                    v += J[(size_t)k * nvt + j] * c.x[j];
                }
                kmax = fmax(kmax, fabs(v));
                eref = fmax(eref, fabs(cs->K[k * nr + col] - v));
            }
        }
        worst_ref = fmax(worst_ref, eref / kmax);
        ck_assert_msg(eref / kmax < 1e-12, "seed %llu: K vs J (M + hB)^-1 J^T %g",
                      (unsigned long long)seed, eref / kmax);
        cases++;
        free(J);
        k_case_free(&c);
    }
    printf("K by contacts, %d cases (%d in both compilations), %d rows of contacts between two "
           "articulations or with the ground: du, y bit-identical to single rows; vs J M^-1 J^T "
           "%.2e\n",
           cases, isa_cases, grouped, worst_ref);
    ck_assert(!avx2 || isa_cases == cases);
}
END_TEST

/* The joint-space solve's scene: the humanoid (in odd seeds with implicit joint damping) in a
 * random bench state with random torques, and a free ball, both after ABA; two constraint
 * systems over them with K methods k0 and k1, no rows yet; and the random stream, for the rows. */
typedef struct js_case {
    fb_model *ma, *mb;
    fb_data *da, *db;
    fb_csys* c[2];
    scene_rng r;
} js_case;

static void js_case_make(js_case* c, uint64_t seed, fb_k_method k0, fb_k_method k1) {
    fb_error err;
    c->ma = ck_model(scene_humanoid(&err), &err);
    c->mb = ck_model(free_ball(&err), &err);
    c->da = ck_data(c->ma);
    c->db = ck_data(c->mb);
    c->r = scene_rng_make(seed + 7000);
    if (seed % 2) { /* implicit joint damping: the matrix is M + h B */
        for (int i = 1; i < c->ma->nbody; i++) {
            if (c->ma->jtype[i] != FB_JOINT_FLOATING && c->ma->jtype[i] != FB_JOINT_FIXED) {
                ck_assert_int_eq(
                    fb_model_set_damping(c->ma, i, scene_rng_uniform(&c->r, 0.0, 20.0), &err),
                    FB_OK);
            }
        }
        c->da->damping_dt = 1.0 / 480.0;
    }
    scene_bench_state(c->ma, c->da, &c->r, 1);
    scene_random_state(c->mb, c->db, &c->r, 2.0, 0.0);
    for (int k = 0; k < c->ma->nv; k++) {
        c->da->tau[k] = scene_rng_uniform(&c->r, -20.0, 20.0);
    }
    ck_assert_int_eq(fb_aba(c->ma, c->da, &err), FB_OK);
    ck_assert_int_eq(fb_aba(c->mb, c->db, &err), FB_OK);
    const fb_model* ms[2] = {c->ma, c->mb};
    fb_data* ds[2] = {c->da, c->db};
    const fb_k_method k[2] = {k0, k1};
    for (int i = 0; i < 2; i++) {
        c->c[i] = fb_csys_create(2, ms, ds, 128, NULL, &err);
        ck_assert_msg(c->c[i] != NULL, "%s", err.msg);
        fb_csys_set_k_method(c->c[i], k[i]);
    }
}

static void js_case_free(js_case* c) {
    fb_csys_destroy(c->c[0]);
    fb_csys_destroy(c->c[1]);
    fb_data_destroy(c->da);
    fb_data_destroy(c->db);
    fb_model_destroy(c->ma);
    fb_model_destroy(c->mb);
}

/* The same random rows added to each of the n systems: 0-6 contacts on the humanoid's feet and
 * hands (a normal row, lo 0, and two friction rows with a random mu; every third against the
 * ball) pressing or not, and a dof row on every dof (the root's unbounded, the joints' within
 * random torque limits, some of them the tight limits of a saturated feedforward). */
static void js_rows(fb_csys* const* cs, int n, const fb_model* ma, scene_rng* r) {
    static const char* const ENDS[4] = {"foot_l", "foot_r", "hand_l", "hand_r"};
    fb_error err;
    const int ncon = scene_rng_int(r, 0, 6);
    for (int c = 0; c < ncon; c++) {
        fb_row nr = fb_default_row();
        nr.body = fb_model_body_by_name(ma, ENDS[scene_rng_int(r, 0, 3)]);
        nr.p = fb_v3_scale(scene_rng_unit(r), 0.05);
        nr.n = fb_v3_make(0.0, 1.0, 0.0);
        if (c % 3 == 2) { /* against the ball */
            nr.art_b = 1;
            nr.body_b = 1;
            nr.p_b = fb_v3_make(0.0, -0.11, 0.0);
        }
        nr.target = scene_rng_uniform(r, -5.0, 50.0) - 0.0;
        nr.id = 100 + 3 * (uint64_t)c;
        const int normal = cs[0]->nrow;
        for (int k = 0; k < n; k++) {
            ck_assert_int_eq(fb_csys_add_row(cs[k], &nr, &err), FB_OK);
        }
        const double mu = scene_rng_uniform(r, 0.2, 1.2);
        for (int t = 0; t < 2; t++) {
            fb_row f = nr;
            f.n = t ? fb_v3_make(0.0, 0.0, 1.0) : fb_v3_make(1.0, 0.0, 0.0);
            f.lo = -INFINITY;
            f.friction_of = normal;
            f.mu = mu;
            f.target = scene_rng_uniform(r, -20.0, 20.0);
            f.id = nr.id + 1 + (uint64_t)t;
            for (int k = 0; k < n; k++) {
                ck_assert_int_eq(fb_csys_add_row(cs[k], &f, &err), FB_OK);
            }
        }
    }
    for (int j = 0; j < ma->nv; j++) {
        fb_row d = fb_default_row();
        d.type = FB_ROW_DOF;
        d.dof = j;
        const double lim = scene_rng_uniform(r, 2.0, 150.0);
        const double tau = scene_rng_uniform(r, -1.2, 1.2) * lim; /* may saturate */
        d.lo = j < 6 ? -INFINITY : -lim - fmin(fmax(tau, -lim), lim);
        d.hi = j < 6 ? INFINITY : lim - fmin(fmax(tau, -lim), lim);
        d.target = scene_rng_uniform(r, -30.0, 30.0);
        d.id = 1000 + (uint64_t)j;
        for (int k = 0; k < n; k++) {
            ck_assert_int_eq(fb_csys_add_row(cs[k], &d, &err), FB_OK);
        }
    }
}

/* The first solve of a warm-start test: the scene's random rows laid in its first system, cw, and
 * solved from nothing (no warm sets yet). r is left past the rows, for the targets' moves; the
 * options, returned, are those of every later solve. */
static fb_pgs_opts js_first_solve(js_case* jc, fb_csys* cw, scene_rng* r) {
    fb_error err;
    *r = jc->r;
    js_rows(jc->c, 1, jc->ma, r);
    fb_pgs_opts o = fb_default_pgs_opts();
    o.warm = false;
    ck_assert_int_eq(fb_csys_build(cw, &err), FB_OK);
    fb_csys_solve(cw, &o);
    return o;
}

/* How far multipliers lambda (of a system with cf's rows) miss the LCP conditions, with cf's
 * full K (FB_K_FACTOR, built independently of the solve): the worst row's w on the wrong side of
 * its bound, or off zero between its bounds, relative to the problem's scale (*wscale, its
 * largest right-hand side); every multiplier must lie within its bounds (a friction row's from
 * its normal's multiplier). Counts the dof rows at a bound and the contacts pressing, when
 * asked. */
static double lcp_conditions(const fb_csys* cf, const double* lambda, uint64_t seed, double* wscale,
                             int* clamped, int* contacts_on) {
    const int nr = cf->nrow;
    double worst = 0.0;
    *wscale = 1.0;
    for (int k = 0; k < nr; k++) {
        *wscale = fmax(*wscale, fabs(cf->a0[k] - cf->row[k].target));
    }
    for (int k = 0; k < nr; k++) {
        double w = cf->a0[k] - cf->row[k].target;
        for (int c = 0; c < nr; c++) {
            w += cf->K[k * nr + c] * lambda[c];
        }
        const fb_row* row = &cf->row[k];
        double lo = row->lo, hi = row->hi;
        if (row->friction_of >= 0) {
            hi = row->mu * fmax(0.0, lambda[row->friction_of]);
            lo = -hi;
        }
        const double l = lambda[k];
        const double tol = 1e-9 * (1.0 + fabs(l) + (isfinite(hi) ? fabs(hi) : 0.0));
        ck_assert_msg(l >= lo - tol && l <= hi + tol, "seed %llu row %d: %g outside [%g, %g]",
                      (unsigned long long)seed, k, l, lo, hi);
        double v;
        if (lo >= hi - tol) {
            v = 0.0;
        } else if (l <= lo + tol) {
            v = fmax(0.0, -w);
        } else if (l >= hi - tol) {
            v = fmax(0.0, w);
        } else {
            v = fabs(w);
        }
        worst = fmax(worst, v / *wscale);
        if (clamped) {
            *clamped += row->type == FB_ROW_DOF && (l <= lo + tol || l >= hi - tol);
        }
        if (contacts_on) {
            *contacts_on += row->type == FB_ROW_POINT && row->friction_of < 0 && l > tol;
        }
    }
    return worst;
}

/* The joint-space solve: the humanoid (57 dofs, floating root; in half the cases with implicit
 * joint damping) with a dof row on every dof (the root's unbounded, the joints' within random
 * torque limits, random targets, some of them the tight limits of a saturated feedforward),
 * contacts on its feet and hands (normal and two friction rows, random mu) pressing or not,
 * and contacts with a free ball. Solved with
 * FB_K_JOINT_SPACE (the dof rows' block of K not formed): the LCP conditions hold with the full
 * K of FB_K_FACTOR built independently for the same rows, friction stays in its cone, qdd
 * after fb_csys_apply equals ABA with the solved forces applied, and an impact solve without
 * the dof rows gives the multipliers the full K gives. */
START_TEST(joint_space_solve_meets_the_lcp_conditions) {
    double worst_lcp = 0.0, worst_apply = 0.0, worst_inexact = 0.0, worst_impulse = 0.0;
    int most_pivots = 0, clamped = 0, contacts_on = 0, exact = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        fb_error err;
        js_case jc;
        js_case_make(&jc, seed, FB_K_JOINT_SPACE, FB_K_FACTOR);
        fb_model *ma = jc.ma, *mb = jc.mb;
        fb_data *da = jc.da, *db = jc.db;
        const fb_model* ms[2] = {ma, mb};
        fb_data* ds[2] = {da, db};
        fb_csys *cj = jc.c[0], *cf = jc.c[1];
        scene_rng r = jc.r;
        js_rows(jc.c, 2, ma, &r);
        ck_assert_int_eq(fb_csys_build(cj, &err), FB_OK);
        ck_assert_int_eq(fb_csys_build(cf, &err), FB_OK);
        fb_pgs_opts o = fb_default_pgs_opts();
        o.warm = false;
        fb_csys_solve(cj, &o);
        most_pivots = cj->iterations > most_pivots ? cj->iterations : most_pivots;
        /* the LCP conditions with the full K */
        const int nr = cf->nrow;
        double wscale = 1.0;
        const double worst = lcp_conditions(cf, cj->lambda, seed, &wscale, &clamped, &contacts_on);
        /* exact: where sliding friction makes the pivoting cycle (the matrix with friction
         * tied to its normal is not symmetric; such a system may have no solution at all, as
         * in Painleve's paradox), staggered rounds with friction bounded by numbers find the
         * sets (joint_space_stagger.c, fb_js_staggered); where they do not, PGS, whose
         * residual says how far off it is (3 of these 60 before the rounds, with friction held
         * at the bounds their normals gave and kept within the final cone: 6.05e-3 at worst) */
        if (worst < 1e-9) {
            exact++;
            worst_lcp = fmax(worst_lcp, worst);
        } else {
            worst_inexact = fmax(worst_inexact, worst);
        }
        ck_assert_msg(fabs(cj->residual / wscale - worst) <= 1e-9 + 1e-6 * worst,
                      "seed %llu: residual %g reported, %g measured with the full K",
                      (unsigned long long)seed, cj->residual / wscale, worst);
        /* qdd after apply against ABA with the forces */
        fb_csys_apply(cj);
        double* qa = malloc((size_t)ma->nv * sizeof(double));
        double* qb = malloc((size_t)mb->nv * sizeof(double));
        memcpy(qa, da->qdd, (size_t)ma->nv * sizeof(double));
        memcpy(qb, db->qdd, (size_t)mb->nv * sizeof(double));
        add_row_forces(cf->row, cj->lambda, nr, ms, ds);
        ck_assert_int_eq(fb_aba(ma, da, &err), FB_OK);
        ck_assert_int_eq(fb_aba(mb, db, &err), FB_OK);
        const double ea = ck_rel_diff(qa, da->qdd, ma->nv, 1.0);
        const double eb = ck_rel_diff(qb, db->qdd, mb->nv, 1.0);
        worst_apply = fmax(worst_apply, fmax(ea, eb));
        ck_assert_msg(ea < XCHECK_TOL && eb < XCHECK_TOL, "seed %llu: applied %g, %g",
                      (unsigned long long)seed, ea, eb);
        /* an impact solve, the dof rows left out (as the world does): PGS on the contact rows,
         * whose K entries FB_K_JOINT_SPACE forms then (by test forces for a few, by the
         * factor for many); the same multipliers as with the full K */
        double v[128], vt[128], lj[128];
        for (int k = 0; k < nr; k++) {
            v[k] = scene_rng_uniform(&r, -2.0, 1.0);
            vt[k] = cf->row[k].type == FB_ROW_DOF ? -INFINITY : 0.0;
        }
        memcpy(qa, da->qd, (size_t)ma->nv * sizeof(double));
        memcpy(qb, db->qd, (size_t)mb->nv * sizeof(double));
        fb_csys_impulse(cj, v, vt, &o);
        memcpy(lj, cj->lambda, (size_t)nr * sizeof(double));
        memcpy(da->qd, qa, (size_t)ma->nv * sizeof(double));
        memcpy(db->qd, qb, (size_t)mb->nv * sizeof(double));
        fb_csys_impulse(cf, v, vt, &o);
        worst_impulse = fmax(worst_impulse, ck_rel_diff(lj, cf->lambda, nr, 1.0));
        ck_assert_msg(ck_rel_diff(lj, cf->lambda, nr, 1.0) < XCHECK_TOL, "seed %llu: impulse %g",
                      (unsigned long long)seed, ck_rel_diff(lj, cf->lambda, nr, 1.0));
        free(qa);
        free(qb);
        js_case_free(&jc);
    }
    printf("joint-space solve, 60 humanoid cases: %d exact (LCP conditions with the full K "
           "%.2e), the others off by at most %.2e (relative); applied vs ABA %.2e; impacts vs "
           "the full K %.2e; most pivots %d; %d dof rows at a torque limit, %d contacts "
           "pushing\n",
           exact, worst_lcp, worst_inexact, worst_apply, worst_impulse, most_pivots, clamped,
           contacts_on);
    ck_assert_int_eq(exact, 60);
}
END_TEST

/* The joint-space solve's warm start (the sets of the last accepted solve, row by row by id):
 * on the scenes above, the same problem solved again takes no pivot and gives the first solve's
 * multipliers; a problem moved a little (every target by up to 1 %, as from one substep to the
 * next) gives, warm, the multipliers a fresh system gives it cold (1e-6 of the largest), and
 * where the sets changed the warm start is not used. */
START_TEST(joint_space_warm_start_finds_the_cold_solution) {
    int repeat_warm = 0, moved_warm = 0, moved_cold = 0, cases = 0;
    double worst_repeat = 0.0, worst_moved = 0.0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        fb_error err;
        js_case jc;
        js_case_make(&jc, seed, FB_K_JOINT_SPACE, FB_K_JOINT_SPACE);
        fb_csys *cw = jc.c[0], *cc = jc.c[1];
        scene_rng r;
        fb_pgs_opts o = js_first_solve(&jc, cw, &r);
        const int nr = cw->nrow, first_pivots = cw->iterations;
        double l1[128];
        fb_row rows[128];
        memcpy(l1, cw->lambda, (size_t)nr * sizeof(double));
        memcpy(rows, cw->row, (size_t)nr * sizeof(fb_row));
        /* the same problem again */
        ck_assert_int_eq(fb_csys_build(cw, &err), FB_OK);
        fb_csys_solve(cw, &o);
        if (cw->iterations == 0 && first_pivots > 0) {
            repeat_warm++;
            const double d = ck_rel_diff(cw->lambda, l1, nr, 1.0);
            worst_repeat = fmax(worst_repeat, d);
            ck_assert_msg(d < 1e-6, "seed %llu: repeated warm %g off", (unsigned long long)seed,
                          d);
        }
        /* moved a little: warm in cw, cold in a fresh cc */
        fb_csys_clear(cw);
        for (int k = 0; k < nr; k++) {
            fb_row row = rows[k];
            row.target *= 1.0 + scene_rng_uniform(&r, -0.01, 0.01);
            ck_assert_int_eq(fb_csys_add_row(cw, &row, &err), FB_OK);
            ck_assert_int_eq(fb_csys_add_row(cc, &row, &err), FB_OK);
        }
        ck_assert_int_eq(fb_csys_build(cw, &err), FB_OK);
        ck_assert_int_eq(fb_csys_build(cc, &err), FB_OK);
        fb_csys_solve(cw, &o);
        fb_csys_solve(cc, &o);
        if (cc->iterations > 0) { /* the cold solve was the joint-space pivoting */
            cases++;
            moved_warm += cw->iterations == 0;
            moved_cold += cw->iterations > 0;
            const double d = ck_rel_diff(cw->lambda, cc->lambda, nr, 1.0);
            worst_moved = fmax(worst_moved, d);
            ck_assert_msg(d < 1e-6, "seed %llu: warm %g off the cold solve (%d pivots)",
                          (unsigned long long)seed, d, cw->iterations);
        }
        js_case_free(&jc);
    }
    printf("joint-space warm start, 40 humanoid cases: the same problem again warm in %d "
           "(no pivot; %.2e from the first solve); moved 1 %%: %d of %d warm (no pivot), %d "
           "pivoted; warm against cold %.2e of the largest multiplier\n",
           repeat_warm, worst_repeat, moved_warm, cases, moved_cold, worst_moved);
    ck_assert_int_ge(repeat_warm, 30);
    ck_assert_int_ge(moved_warm, 10);
}
END_TEST

/* A warm start that misses (joint_space_warm.c, fb_js_repair): the scenes above solved, then
 * every target moved by up to 20 % (a contact made or broken, a joint at its limit freed), so
 * the last solve's sets no longer hold; the rows and dofs they break are driven again, not every
 * row. Where that answers (fewer pivots than a fresh system's cold solve of the same problem),
 * the answer meets the LCP conditions with the full K built independently (FB_K_FACTOR), exactly
 * as the cold one does. Red without the repair: every miss then pivots from the start, as many
 * pivots as the cold solve. */
START_TEST(joint_space_repair_of_a_missed_warm_start_meets_the_lcp_conditions) {
    int repaired = 0, missed = 0, far = 0, repaired_pivots = 0, cold_pivots = 0;
    double worst_repaired = 0.0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        fb_error err;
        js_case jc;
        js_case_make(&jc, seed, FB_K_JOINT_SPACE, FB_K_FACTOR);
        fb_csys *cw = jc.c[0], *cf = jc.c[1];
        const fb_model* ms[2] = {jc.ma, jc.mb};
        fb_data* ds[2] = {jc.da, jc.db};
        fb_csys* cc = fb_csys_create(2, ms, ds, 128, NULL, &err);
        ck_assert_msg(cc != NULL, "%s", err.msg);
        fb_csys_set_k_method(cc, FB_K_JOINT_SPACE);
        scene_rng r;
        fb_pgs_opts o = js_first_solve(&jc, cw, &r);
        const int nr = cw->nrow;
        fb_row rows[128];
        memcpy(rows, cw->row, (size_t)nr * sizeof(fb_row));
        fb_csys_clear(cw);
        fb_csys* all[3] = {cw, cc, cf};
        for (int k = 0; k < nr; k++) {
            fb_row row = rows[k];
            row.target *= 1.0 + scene_rng_uniform(&r, -0.2, 0.2);
            for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(fb_csys_add_row(all[i], &row, &err), FB_OK);
            }
        }
        for (int i = 0; i < 3; i++) {
            ck_assert_int_eq(fb_csys_build(all[i], &err), FB_OK);
        }
        fb_csys_solve(cw, &o);
        fb_csys_solve(cc, &o);
        if (cw->iterations > 0 && cc->iterations > 0) { /* both pivoted: the warm sets missed */
            missed++;
            if (cw->iterations < cc->iterations) {
                repaired++;
                repaired_pivots += cw->iterations;
                cold_pivots += cc->iterations;
                double wscale;
                const double worst = lcp_conditions(cf, cw->lambda, seed, &wscale, NULL, NULL);
                worst_repaired = fmax(worst_repaired, worst);
                ck_assert_msg(worst < 1e-9, "seed %llu: repaired answer %g off its conditions",
                              (unsigned long long)seed, worst);
                far += ck_rel_diff(cw->lambda, cc->lambda, nr, 1.0) > 1e-6;
            }
        }
        fb_csys_destroy(cc);
        js_case_free(&jc);
    }
    printf("joint-space warm start moved 20 %%: %d of 40 missed, %d of them driven again from "
           "the rows they broke (%d pivots against %d from the start), %.2e of the scale off "
           "the LCP conditions at worst; %d of those a different solution than the cold one\n",
           missed, repaired, repaired_pivots, cold_pivots, worst_repaired, far);
    ck_assert_int_ge(repaired, 10);
    ck_assert_int_lt(repaired_pivots, cold_pivots);
}
END_TEST

/* A constraint system whose K and a0 the test fills in directly (rows are dof rows of a
 * dummy articulation; only their bounds matter to the solver). */
typedef struct lcp_fixture {
    fb_model* m;
    fb_data* d;
    fb_csys* cs;
} lcp_fixture;

static void lcp_make(lcp_fixture* f, int n) {
    fb_error err;
    f->m = ck_model(free_ball(&err), &err);
    f->d = ck_data(f->m);
    const fb_model* ms[1] = {f->m};
    fb_data* ds[1] = {f->d};
    f->cs = fb_csys_create(1, ms, ds, n, NULL, &err);
    for (int k = 0; k < n; k++) {
        fb_row row = fb_default_row();
        row.type = FB_ROW_DOF;
        ck_assert_int_eq(fb_csys_add_row(f->cs, &row, &err), FB_OK);
    }
}

static void lcp_free(lcp_fixture* f) {
    fb_csys_destroy(f->cs);
    fb_data_destroy(f->d);
    fb_model_destroy(f->m);
}

/* A random positive-definite n x n matrix B B^T + n/4 1. */
static void random_pd(scene_rng* r, int n, double* K) {
    double B[16 * 16];
    for (int k = 0; k < n * n; k++) {
        B[k] = scene_rng_normal(r);
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double s = (i == j) ? 0.25 * n : 0.0;
            for (int k = 0; k < n; k++) {
                s += B[i * n + k] * B[j * n + k];
            }
            K[i * n + j] = s;
        }
    }
}

START_TEST(pgs_reaches_lemke_on_random_lcps) {
    scene_rng r = scene_rng_make(2026);
    fb_pgs_opts o = fb_default_pgs_opts();
    o.max_iter = 20000;
    o.tol = 1e-14;
    o.warm = false;
    double worst = 0.0;
    int max_iter = 0;
    for (int t = 0; t < 1000; t++) {
        const int n = scene_rng_int(&r, 1, 12);
        lcp_fixture f;
        lcp_make(&f, n);
        double q[16], z[16];
        random_pd(&r, n, f.cs->K);
        for (int k = 0; k < n; k++) {
            q[k] = scene_rng_uniform(&r, -5.0, 5.0);
            f.cs->a0[k] = q[k];
        }
        ck_assert_msg(lemke_solve(f.cs->K, q, n, z), "case %d: Lemke failed", t);
        fb_csys_solve(f.cs, &o);
        max_iter = f.cs->iterations > max_iter ? f.cs->iterations : max_iter;
        double scale = 1.0;
        for (int k = 0; k < n; k++) {
            scale = fmax(scale, fabs(z[k]));
        }
        worst = fmax(worst, ck_rel_diff(f.cs->lambda, z, n, scale));
        ck_assert_msg(ck_rel_diff(f.cs->lambda, z, n, scale) < 1e-6, "case %d (n %d): %g", t, n,
                      ck_rel_diff(f.cs->lambda, z, n, scale));
        ck_assert(f.cs->residual < 1e-6);
        lcp_free(&f);
    }
    printf("PGS vs Lemke, 1000 LCPs: worst difference %.2e, most sweeps %d\n", worst, max_iter);
}
END_TEST

START_TEST(mixed_and_friction_rows_meet_their_conditions) {
    /* bilateral, unilateral and friction rows together: the LCP conditions hold */
    scene_rng r = scene_rng_make(7);
    fb_pgs_opts o = fb_default_pgs_opts();
    o.max_iter = 20000;
    o.tol = 1e-14;
    for (int t = 0; t < 200; t++) {
        const int n = 9;
        lcp_fixture f;
        lcp_make(&f, n);
        random_pd(&r, n, f.cs->K);
        for (int k = 0; k < n; k++) {
            f.cs->a0[k] = scene_rng_uniform(&r, -5.0, 5.0);
        }
        /* rows 0-2: bilateral; 3: a contact normal; 4, 5: its friction (mu 0.5); 6: torque
         * limited to +-0.7; 7, 8: unilateral */
        for (int k = 0; k < 3; k++) {
            f.cs->row[k].lo = -INFINITY;
        }
        f.cs->row[4].friction_of = f.cs->row[5].friction_of = 3;
        f.cs->row[4].mu = f.cs->row[5].mu = 0.5;
        f.cs->row[6].lo = -0.7;
        f.cs->row[6].hi = 0.7;
        fb_csys_solve(f.cs, &o);
        ck_assert_msg(f.cs->residual < 1e-6, "case %d: residual %g", t, f.cs->residual);
        ck_assert(fabs(f.cs->lambda[4]) <= 0.5 * f.cs->lambda[3] + 1e-12);
        ck_assert(fabs(f.cs->lambda[6]) <= 0.7);
        lcp_free(&f);
    }
}
END_TEST

/* The block of joint rows with bounds about zero (a tracker's acceleration rows within their
 * torque limits) solved together, with unilateral rows between: on random positive definite
 * K, some well and some badly conditioned (B B^T + eps 1), and bounds tight enough that many
 * rows end at one, the multipliers meet the box LCP's conditions, checked here with K: each
 * row within its bounds, its residual w = K lambda + a0 zero where it is inside them and
 * pointing out of the box where it is at a bound. Solved again from its own answer (the warm
 * start the world gives it, the rows at a bound held from the start), the same conditions in
 * at most two sweeps. (The earlier active set clamped every row that left its bounds at once;
 * on such blocks it could cycle and leave the sweeps at their cap.) */
START_TEST(block_rows_meet_the_box_lcp_conditions) {
    scene_rng r = scene_rng_make(11);
    fb_pgs_opts o = fb_default_pgs_opts();
    o.max_iter = 2000;
    o.tol = 1e-13;
    o.rel_tol = 0.0;
    o.warm = false;
    double worst = 0.0;
    int most_sweeps = 0, most_warm = 0, at_bound = 0;
    for (int t = 0; t < 300; t++) {
        const int n = 14, nb = 12;
        lcp_fixture f;
        lcp_make(&f, n);
        random_pd(&r, n, f.cs->K);
        const double eps = t % 2 ? 1e-3 : 0.25 * n;
        for (int k = 0; k < n; k++) {
            f.cs->K[k * n + k] += eps - 0.25 * n;
            f.cs->a0[k] = scene_rng_uniform(&r, -5.0, 5.0);
        }
        for (int k = 0; k < nb; k++) {
            f.cs->row[k].hi = scene_rng_uniform(&r, 0.05, 1.0);
            f.cs->row[k].lo = -scene_rng_uniform(&r, 0.05, 1.0);
        }
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                o.warm = true; /* from the multipliers just found, by row identity */
                for (int k = 0; k < n; k++) {
                    f.cs->row[k].id = 1 + (uint64_t)k;
                }
                fb_csys_solve(f.cs, &o); /* records them under those ids */
            }
            fb_csys_solve(f.cs, &o);
            if (pass == 0) {
                most_sweeps = f.cs->iterations > most_sweeps ? f.cs->iterations : most_sweeps;
                ck_assert_msg(f.cs->iterations < o.max_iter, "case %d: at the sweep cap", t);
            } else {
                most_warm = f.cs->iterations > most_warm ? f.cs->iterations : most_warm;
                ck_assert_msg(f.cs->iterations <= 2, "case %d: %d sweeps warm", t,
                              f.cs->iterations);
            }
            double scale = 1.0;
            for (int k = 0; k < n; k++) {
                scale = fmax(scale, fabs(f.cs->a0[k]));
            }
            for (int k = 0; k < n; k++) {
                double w = f.cs->a0[k];
                for (int c = 0; c < n; c++) {
                    w += f.cs->K[k * n + c] * f.cs->lambda[c];
                }
                const double l = f.cs->lambda[k], lo = f.cs->row[k].lo, hi = f.cs->row[k].hi;
                ck_assert_msg(l >= lo && l <= hi, "case %d row %d: %g outside [%g, %g]", t, k, l,
                              lo, hi);
                const double v = l == lo ? fmax(0.0, -w) : (l == hi ? fmax(0.0, w) : fabs(w));
                at_bound += pass == 0 && (l == lo || l == hi) && k < nb;
                worst = fmax(worst, v / scale);
                ck_assert_msg(v <= 1e-9 * scale, "case %d row %d pass %d: w %g at %g in [%g, %g]",
                              t, k, pass, w, l, lo, hi);
            }
        }
        lcp_free(&f);
    }
    printf("block rows, 300 box LCPs (12 block rows, 2 unilateral): worst condition %.2e of the "
           "right-hand side; most sweeps %d cold, %d warm; %d block rows at a bound\n",
           worst, most_sweeps, most_warm, at_bound);
    ck_assert_int_gt(at_bound, 300);
}
END_TEST

START_TEST(singular_k_does_not_blow_up) {
    /* a box resting flat on the ground: four coplanar corner contacts (rank 3 for the normal
     * rows, Gao's pitfall) plus a duplicated contact */
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    fb_body_def def = fb_default_body_def();
    def.name = "box";
    def.joint = FB_JOINT_FLOATING;
    def.inertia = fb_rbi_box(500.0, fb_v3_make(0.4, 0.2, 0.3), fb_v3_zero());
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    fb_data* d = ck_data(m);
    d->q[1] = 0.1; /* resting: its bottom face at y = 0 */
    ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
    const fb_model* ms[1] = {m};
    fb_data* ds[1] = {d};
    fb_csys* cs = fb_csys_create(1, ms, ds, 8, NULL, &err);
    const double cx[5] = {0.2, -0.2, 0.2, -0.2, 0.2}, cz[5] = {0.15, 0.15, -0.15, -0.15, 0.15};
    for (int k = 0; k < 5; k++) {
        fb_row row = fb_default_row();
        row.body = 1;
        row.p = fb_v3_make(cx[k], -0.1, cz[k]);
        row.n = fb_v3_make(0.0, 1.0, 0.0);
        ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_OK);
    }
    ck_assert_int_eq(fb_csys_build(cs, &err), FB_OK);
    fb_csys_solve(cs, NULL);
    double total = 0.0;
    for (int k = 0; k < 5; k++) {
        ck_assert(isfinite(cs->lambda[k]) && cs->lambda[k] >= 0.0);
        total += cs->lambda[k];
    }
    /* the contacts hold the weight: total normal force m g, and the box does not accelerate */
    fb_ck_near(total, m->I[1].m * 9.81, 1e-6, 0.0);
    /* at rest (zero velocity) the box's qdd is its acceleration: the contacts cancel gravity */
    fb_csys_apply(cs);
    double qdd = 0.0;
    for (int k = 0; k < 6; k++) {
        qdd = fmax(qdd, fabs(d->qdd[k]));
    }
    ck_assert_msg(qdd < 1e-6, "box accelerates at %g", qdd);
    ck_assert(cs->residual < 1e-6);
    fb_csys_destroy(cs);
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(bad_rows_are_refused) {
    fb_error err;
    fb_model* m = ck_model(free_ball(&err), &err);
    fb_data* d = ck_data(m);
    const fb_model* ms[1] = {m};
    fb_data* ds[1] = {d};
    fb_csys* cs = fb_csys_create(1, ms, ds, 2, NULL, &err);
    fb_row row = fb_default_row();
    row.body = 1;
    row.n = fb_v3_make(0.0, 2.0, 0.0);
    ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "unit"));
    row.n = fb_v3_make(0.0, 1.0, 0.0);
    row.body = 5;
    ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_EINVAL);
    row.body = 1;
    row.friction_of = 0;
    ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_EINVAL); /* no earlier row */
    row.friction_of = -1;
    row.art_b = 0; /* a point relative to another point of the same body */
    row.body_b = 1;
    ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "art_b/body_b"));
    row.art_b = -1;
    ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_OK);
    ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_OK);
    ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_ECAPACITY);
    /* build needs ABA first */
    ck_assert_int_eq(fb_csys_build(cs, &err), FB_ESTATE);
    fb_csys_destroy(cs);
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

/* An articulation left out (fb_csys_set_asleep: a world's sleeper) takes no rows, needs no
 * ABA, and keeps its qdd, qd and stage; the other's K, multipliers and accelerations are those
 * of a system without it, for every K method. */
START_TEST(asleep_articulation_is_left_out) {
    fb_error err;
    fb_model* m = ck_model(free_ball(&err), &err);
    const fb_model* ms[2] = {m, m};
    fb_data* ds[2] = {ck_data(m), ck_data(m)};
    fb_data* alone = ck_data(m);
    const fb_k_method methods[4] = {FB_K_TEST_FORCES, FB_K_BACKWARD, FB_K_FACTOR,
                                    FB_K_JOINT_SPACE};
    for (int mi = 0; mi < 4; mi++) {
        fb_csys* cs = fb_csys_create(2, ms, ds, 4, NULL, &err);
        fb_csys* ref = fb_csys_create(1, ms, &alone, 4, NULL, &err);
        ck_assert(cs && ref);
        fb_csys_set_k_method(cs, methods[mi]);
        fb_csys_set_k_method(ref, methods[mi]);
        fb_csys_set_asleep(cs, 1, true);
        /* ball 0 (and its copy) falling and spinning; ball 1 untouched, marked */
        for (int v = 0; v < 2; v++) {
            fb_data* d = v == 0 ? ds[0] : alone;
            fb_q_neutral(m, d->q);
            d->q[1] = 0.5;
            for (int j = 0; j < 6; j++) {
                d->qd[j] = 0.1 * (j + 1);
            }
            ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        }
        for (int j = 0; j < 6; j++) {
            ds[1]->qd[j] = 7.0;
            ds[1]->qdd[j] = 9.0;
        }
        ds[1]->stage = FB_STAGE_VEL; /* not ABA: a sleeper's stage */
        /* rows on ball 1, or reaching it, are refused */
        fb_row row = fb_default_row();
        row.art = 1;
        row.body = 1;
        row.n = fb_v3_make(0.0, 1.0, 0.0);
        ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_ESTATE);
        ck_assert_msg(strstr(err.msg, "asleep") && strstr(err.msg, "articulation 1"), "%s",
                      err.msg);
        row.art = 0;
        row.art_b = 1;
        row.body_b = 1;
        ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_ESTATE);
        /* ball 0's rows: a point pushed up, a dof held */
        row.art_b = -1;
        row.p = fb_v3_make(0.05, -0.11, 0.0);
        row.target = 2.0;
        fb_row dof = fb_default_row();
        dof.type = FB_ROW_DOF;
        dof.art = 0;
        dof.dof = 2;
        dof.lo = -INFINITY;
        for (int v = 0; v < 2; v++) {
            fb_csys* c = v == 0 ? cs : ref;
            ck_assert_int_eq(fb_csys_add_row(c, &row, &err), FB_OK);
            ck_assert_int_eq(fb_csys_add_row(c, &dof, &err), FB_OK);
            ck_assert_msg(fb_csys_build(c, &err) == FB_OK, "method %d: %s", mi, err.msg);
            fb_csys_solve(c, NULL);
            fb_csys_apply(c);
        }
        ck_assert(memcmp(cs->K, ref->K, 4 * sizeof(double)) == 0);
        ck_assert(memcmp(cs->lambda, ref->lambda, 2 * sizeof(double)) == 0);
        ck_assert(memcmp(ds[0]->qdd, alone->qdd, 6 * sizeof(double)) == 0);
        ck_assert_double_gt(cs->lambda[0], 0.0);
        /* an impulse solve leaves ball 1 alone too */
        const double v0[2] = {-1.0, 0.0}, vt[2] = {0.0, -INFINITY};
        fb_csys_impulse(cs, v0, vt, NULL);
        for (int j = 0; j < 6; j++) {
            ck_assert(ds[1]->qd[j] == 7.0 && ds[1]->qdd[j] == 9.0);
        }
        ck_assert_int_eq(ds[1]->stage, FB_STAGE_VEL);
        /* taken back, it needs its ABA like any other */
        fb_csys_set_asleep(cs, 1, false);
        ck_assert_int_eq(fb_csys_build(cs, &err), FB_ESTATE);
        fb_csys_destroy(cs);
        fb_csys_destroy(ref);
    }
    fb_data_destroy(ds[0]);
    fb_data_destroy(ds[1]);
    fb_data_destroy(alone);
    fb_model_destroy(m);
}
END_TEST

static Suite* constraint_suite(void) {
    Suite* s = suite_create("constraint");
    TCase* tc = tcase_create("constraint");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, responses_match_test_force_method_and_crba);
    tcase_add_test(tc, k_matches_j_minv_jt_and_the_test_force_method);
    tcase_add_test(tc, k_of_rows_within_one_articulation_matches_j_minv_jt);
    tcase_add_test(tc, k_by_factorisation_matches_crba_and_test_forces);
    tcase_add_test(tc, k_by_backward_passes_matches_crba_and_test_forces);
    tcase_add_test(tc, k_by_contacts_gives_each_row_the_bits_of_its_own_pass);
    tcase_add_test(tc, joint_space_solve_meets_the_lcp_conditions);
    tcase_add_test(tc, joint_space_warm_start_finds_the_cold_solution);
    tcase_add_test(tc, joint_space_repair_of_a_missed_warm_start_meets_the_lcp_conditions);
    tcase_add_test(tc, pgs_reaches_lemke_on_random_lcps);
    tcase_add_test(tc, mixed_and_friction_rows_meet_their_conditions);
    tcase_add_test(tc, block_rows_meet_the_box_lcp_conditions);
    tcase_add_test(tc, singular_k_does_not_blow_up);
    tcase_add_test(tc, bad_rows_are_refused);
    tcase_add_test(tc, asleep_articulation_is_left_out);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(constraint_suite());
}
