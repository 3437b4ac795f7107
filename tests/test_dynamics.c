/* Forward and inverse dynamics, the mass matrix and the Jacobians, each checked against an
 * independent algorithm or an analytic answer:
 *   ABA vs CRBA + Cholesky solve, RNEA after ABA = identity, M symmetric positive definite,
 *   Jacobians vs finite differences of forward kinematics, body velocity vs J qd,
 *   point acceleration vs finite differences of point velocity, and a closed-form pendulum;
 *   and the two compilations of ABA phase 1 (baseline x86-64, AVX2) bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics/crba.h"
#include "math/dense.h"
#include "math/isa.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "support.h"

/* The bound for the algorithm cross-checks (relative). */
#define XCHECK_TOL 1e-9
/* Random trees of up to this many bodies, and how many. */
#define TREE_MAX_BODIES 60
#define NTREES 150

START_TEST(aba_matches_crba_and_rnea_inverts_aba) {
    /* scene_check_dynamics: qdd by ABA vs M^-1 (tau - C) with M from CRBA and C from RNEA;
     * then RNEA(q, qd, qdd_ABA) vs tau; M symmetric and Cholesky-factorable */
    int joint_types_seen[5] = {0};
    for (uint64_t seed = 1; seed <= NTREES; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed, TREE_MAX_BODIES, &err), &err);
        for (int i = 1; i < m->nbody; i++) {
            joint_types_seen[m->jtype[i]]++;
        }
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed * 7919u);
        scene_check c;
        ck_assert_int_eq(scene_check_dynamics(m, d, &r, 4, &c, &err), FB_OK);
        ck_assert_msg(c.m_not_pd == 0, "seed %llu: M not positive definite",
                      (unsigned long long)seed);
        ck_assert_int_eq(c.states, 4);
        ck_assert_msg(c.aba_vs_crba < XCHECK_TOL, "seed %llu: ABA vs CRBA %g",
                      (unsigned long long)seed, c.aba_vs_crba);
        ck_assert_msg(c.rnea_after_aba < XCHECK_TOL, "seed %llu: RNEA(ABA) %g",
                      (unsigned long long)seed, c.rnea_after_aba);
        ck_assert_msg(c.m_asymmetry < 1e-14, "seed %llu: M asymmetric %g",
                      (unsigned long long)seed, c.m_asymmetry);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
    for (int t = 0; t < 5; t++) {
        ck_assert_msg(joint_types_seen[t] > 0, "joint type %d never drawn", t);
    }
}
END_TEST

/* The joint-space solve factors M over a subset of the dofs (those clamped) on the subset's own
 * dof tree, each dof's parent its nearest ancestor in the subset (fb_dof_tree_set), as L^T L
 * with no fill-in. On random trees and random subsets, against a dense Cholesky of the same
 * principal submatrix: solves of a dense right-hand side and of a sparse one (one dof set, as a
 * row's J along one path) agree to 1e-10. */
START_TEST(principal_submatrix_factors_on_its_own_tree) {
    double worst = 0.0;
    int cases = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed * 53u, 30, &err), &err);
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed + 900);
        scene_random_state(m, d, &r, 2.0, 5.0);
        fb_crba(m, d);
        const int n = m->nv;
        fb_dof_tree t;
        const int size = fb_dof_tree_size(m);
        t.lambda = malloc((size_t)n * sizeof(int));
        t.len = malloc((size_t)n * sizeof(int));
        t.off = malloc((size_t)n * sizeof(int));
        t.chain = malloc((size_t)size * sizeof(int) + 1);
        fb_dof_tree_init(m, &t);
        fb_dof_tree ct;
        ct.lambda = malloc((size_t)n * sizeof(int));
        ct.len = malloc((size_t)n * sizeof(int));
        ct.off = malloc((size_t)n * sizeof(int));
        ct.chain = malloc((size_t)(n * (n + 1) / 2) * sizeof(int) + 1);
        int* idx = malloc((size_t)n * sizeof(int));
        int* pos = malloc((size_t)n * sizeof(int));
        double* A = malloc((size_t)(n * n) * sizeof(double) + 1);
        double* C = malloc((size_t)(n * n) * sizeof(double) + 1);
        double* L = malloc((size_t)(n * (n + 1) / 2) * sizeof(double) + 1);
        double* x = malloc((size_t)n * sizeof(double) + 1);
        double* y = malloc((size_t)n * sizeof(double) + 1);
        /* the two right-hand sides of each subset again, solved together */
        double* many = malloc((size_t)(2 * n) * sizeof(double) + 1);
        double* single = malloc((size_t)(2 * n) * sizeof(double) + 1);
        for (int sub = 0; sub < 4; sub++) {
            int nc = 0;
            for (int k = 0; k < n; k++) {
                pos[k] = -1;
                if (scene_rng_uniform(&r, 0.0, 1.0) < 0.6) {
                    pos[k] = nc;
                    idx[nc++] = k;
                }
            }
            if (nc == 0) {
                continue;
            }
            int off = 0;
            ct.n = nc;
            for (int c = 0; c < nc; c++) {
                int p = t.lambda[idx[c]];
                while (p >= 0 && pos[p] < 0) {
                    p = t.lambda[p];
                }
                fb_dof_tree_set(&ct, c, p < 0 ? -1 : pos[p], &off);
            }
            ct.size = off;
            for (int a = 0; a < nc; a++) {
                for (int b = 0; b < nc; b++) {
                    A[a * nc + b] = C[a * nc + b] = d->M[idx[a] * n + idx[b]];
                }
            }
            ck_assert(fb_ltl_factor(&ct, A, L));
            ck_assert(fb_chol_factor(C, nc));
            for (int kind = 0; kind < 2; kind++) {
                const int one = (int)scene_rng_uniform(&r, 0.0, nc - 1e-9);
                for (int k = 0; k < nc; k++) {
                    x[k] = kind == 0 ? scene_rng_uniform(&r, -1.0, 1.0) : (k == one ? 1.0 : 0.0);
                    y[k] = x[k];
                }
                memcpy(many + kind * n, x, (size_t)nc * sizeof(double));
                fb_ltl_solve(&ct, L, x);
                memcpy(single + kind * n, x, (size_t)nc * sizeof(double));
                fb_chol_solve(C, nc, y);
                worst = fmax(worst, ck_rel_diff(x, y, nc, 1.0));
                cases++;
            }
            double* const xs[2] = {many, many + n};
            fb_ltl_solve_many(&ct, L, xs, 2);
            ck_assert_msg(memcmp(many, single, (size_t)nc * sizeof(double)) == 0 &&
                              memcmp(many + n, single + n, (size_t)nc * sizeof(double)) == 0,
                          "fb_ltl_solve_many differs from fb_ltl_solve");
        }
        free(t.lambda);
        free(t.len);
        free(t.off);
        free(t.chain);
        free(ct.lambda);
        free(ct.len);
        free(ct.off);
        free(ct.chain);
        free(idx);
        free(pos);
        free(A);
        free(C);
        free(L);
        free(x);
        free(y);
        free(many);
        free(single);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
    printf("principal submatrices of M on their own dof trees: %d solves, %.2e from dense "
           "Cholesky at most\n",
           cases, worst);
    ck_assert_int_ge(cases, 200);
    ck_assert_double_lt(worst, 1e-10);
}
END_TEST

/* Joint damping: explicit (RNEA and CRBA include it through C = ... + B qd, so the cross-checks
 * above hold) and implicit over a step dt (ABA then solves (M + dt B) qdd = tau - C). */
START_TEST(joint_damping_explicit_and_implicit) {
    for (uint64_t seed = 1; seed <= 40; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed * 31u, 30, &err), &err);
        scene_rng r = scene_rng_make(seed);
        for (int i = 1; i < m->nbody; i++) {
            if (m->jtype[i] != FB_JOINT_FLOATING && m->jtype[i] != FB_JOINT_FIXED) {
                ck_assert_int_eq(fb_model_set_damping(m, i, scene_rng_uniform(&r, 0.0, 5.0), &err),
                                 FB_OK);
            }
        }
        fb_data* d = ck_data(m);
        scene_check c;
        ck_assert_int_eq(scene_check_dynamics(m, d, &r, 2, &c, &err), FB_OK);
        ck_assert_msg(c.aba_vs_crba < XCHECK_TOL && c.rnea_after_aba < XCHECK_TOL,
                      "seed %llu: explicit damping: ABA vs CRBA %g, RNEA(ABA) %g",
                      (unsigned long long)seed, c.aba_vs_crba, c.rnea_after_aba);
        const int nv = m->nv;
        if (nv == 0) {
            fb_data_destroy(d);
            fb_model_destroy(m);
            continue;
        }
        scene_random_state(m, d, &r, 2.0, 5.0);
        const double dt = 0.01;
        double* C = malloc((size_t)nv * sizeof(double));
        double* rhs = malloc((size_t)nv * sizeof(double));
        double* A = malloc((size_t)nv * (size_t)nv * sizeof(double));
        fb_bias(m, d, C);
        fb_crba(m, d);
        memcpy(A, d->M, (size_t)nv * (size_t)nv * sizeof(double));
        for (int k = 0; k < nv; k++) {
            A[k * nv + k] += dt * m->damping[m->dof_body[k]];
            rhs[k] = d->tau[k] - C[k];
        }
        ck_assert(fb_chol_factor(A, nv));
        fb_chol_solve(A, nv, rhs);
        d->damping_dt = dt;
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        const double e = ck_rel_diff(d->qdd, rhs, nv, 1.0);
        ck_assert_msg(e < XCHECK_TOL, "seed %llu: implicit damping: ABA vs (M + dt B) solve %g",
                      (unsigned long long)seed, e);
        free(C);
        free(rhs);
        free(A);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
}
END_TEST

START_TEST(benchmark_models_pass_the_cross_checks) {
    fb_error err;
    fb_model* models[2] = {ck_model(scene_humanoid(&err), &err),
                           ck_model(scene_bender_tree(7, &err), &err)};
    for (int k = 0; k < 2; k++) {
        fb_data* d = ck_data(models[k]);
        scene_rng r = scene_rng_make(99 + (uint64_t)k);
        scene_check c;
        ck_assert_int_eq(scene_check_dynamics(models[k], d, &r, 5, &c, &err), FB_OK);
        ck_assert(c.m_not_pd == 0 && c.aba_vs_crba < XCHECK_TOL &&
                  c.rnea_after_aba < XCHECK_TOL);
        fb_data_destroy(d);
        fb_model_destroy(models[k]);
    }
}
END_TEST

START_TEST(phase2_reuses_phase1_for_new_forces) {
    /* two sets of forces on one phase 1 give what full ABA gives for each */
    fb_error err;
    fb_model* m = ck_model(scene_random_tree(4242, 40, &err), &err);
    fb_data* d = ck_data(m);
    scene_rng r = scene_rng_make(5);
    scene_random_state(m, d, &r, 2.0, 10.0);
    const size_t nv = (size_t)m->nv;
    double* tau2 = malloc(nv * sizeof(double) + 1);
    double* qdd_a = malloc(nv * sizeof(double) + 1);
    double* qdd_b = malloc(nv * sizeof(double) + 1);
    for (size_t k = 0; k < nv; k++) {
        tau2[k] = scene_rng_uniform(&r, -3.0, 3.0);
    }
    ck_assert_int_eq(fb_aba_phase1(m, d, &err), FB_OK);
    fb_aba_phase2(m, d);
    memcpy(qdd_a, d->qdd, nv * sizeof(double));
    memcpy(d->tau, tau2, nv * sizeof(double));
    d->f_ext[m->nbody - 1] = (fb_fv){{1.0, 2.0, 3.0}, {-4.0, 5.0, -6.0}};
    fb_aba_phase2(m, d);
    memcpy(qdd_b, d->qdd, nv * sizeof(double));
    ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
    ck_assert(ck_rel_diff(qdd_b, d->qdd, m->nv, 1.0) == 0.0);
    ck_assert(ck_rel_diff(qdd_a, qdd_b, m->nv, 1.0) > 1e-6); /* the forces did change it */
    free(tau2);
    free(qdd_a);
    free(qdd_b);
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

/* fb_aba_phase1_velocities after the velocities alone changed (as after an impulse, with the
 * stage cleared to positions) gives bit for bit what a full fb_aba gives, on random trees with
 * and without implicit joint damping. */
START_TEST(phase1_velocities_matches_full_phase1) {
    for (uint64_t seed = 1; seed <= 30; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed * 97u, 40, &err), &err);
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed + 77);
        for (int i = 1; seed % 2 && i < m->nbody; i++) {
            if (m->jtype[i] != FB_JOINT_FLOATING && m->jtype[i] != FB_JOINT_FIXED) {
                ck_assert_int_eq(
                    fb_model_set_damping(m, i, scene_rng_uniform(&r, 0.0, 20.0), &err), FB_OK);
            }
        }
        d->damping_dt = seed % 2 ? 1.0 / 480.0 : 0.0;
        scene_random_state(m, d, &r, 2.0, 10.0);
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        const size_t nv = (size_t)m->nv, nb = (size_t)m->nbody;
        for (size_t k = 0; k < nv; k++) {
            d->qd[k] += scene_rng_uniform(&r, -1.0, 1.0);
        }
        d->stage = FB_STAGE_POS;
        fb_aba_phase1_velocities(m, d);
        fb_aba_phase2(m, d);
        double* qdd = malloc(nv * sizeof(double) + 1);
        fb_fv* pA_v = malloc(nb * sizeof(fb_fv));
        fb_mv* c = malloc(nb * sizeof(fb_mv));
        memcpy(qdd, d->qdd, nv * sizeof(double));
        memcpy(pA_v, d->pA_v, nb * sizeof(fb_fv));
        memcpy(c, d->c, nb * sizeof(fb_mv));
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        ck_assert(memcmp(qdd, d->qdd, nv * sizeof(double)) == 0);
        ck_assert(memcmp(pA_v + 1, d->pA_v + 1, (nb - 1) * sizeof(fb_fv)) == 0);
        ck_assert(memcmp(c + 1, d->c + 1, (nb - 1) * sizeof(fb_mv)) == 0);
        free(qdd);
        free(pA_v);
        free(c);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
}
END_TEST

/* Everything ABA writes, copied for a bitwise comparison. */
typedef struct aba_out {
    size_t nv, nb;
    double *qdd, *D_inv;
    fb_xf* X_0;
    fb_abi* IA;
    fb_fv *U, *pA_v;
} aba_out;

static void aba_out_take(aba_out* o, const fb_model* m, const fb_data* d) {
    o->nv = (size_t)m->nv;
    o->nb = (size_t)m->nbody;
    o->qdd = malloc(o->nv * sizeof(double) + 1);
    o->U = malloc(o->nv * sizeof(fb_fv) + 1);
    o->D_inv = malloc(36 * o->nb * sizeof(double));
    o->X_0 = malloc(o->nb * sizeof(fb_xf));
    o->IA = malloc(o->nb * sizeof(fb_abi));
    o->pA_v = malloc(o->nb * sizeof(fb_fv));
    memcpy(o->qdd, d->qdd, o->nv * sizeof(double));
    memcpy(o->U, d->U, o->nv * sizeof(fb_fv));
    memcpy(o->D_inv, d->D_inv, 36 * o->nb * sizeof(double));
    memcpy(o->X_0, d->X_0, o->nb * sizeof(fb_xf));
    memcpy(o->IA, d->IA, o->nb * sizeof(fb_abi));
    memcpy(o->pA_v, d->pA_v, o->nb * sizeof(fb_fv));
}

/* Whether d holds what o holds, bit for bit (bodies 1.. only). */
static bool aba_out_same(const aba_out* o, const fb_data* d) {
    const size_t nb = o->nb - 1;
    return memcmp(o->qdd, d->qdd, o->nv * sizeof(double)) == 0 &&
           memcmp(o->U, d->U, o->nv * sizeof(fb_fv)) == 0 &&
           memcmp(o->D_inv + 36, d->D_inv + 36, 36 * nb * sizeof(double)) == 0 &&
           memcmp(o->X_0 + 1, d->X_0 + 1, nb * sizeof(fb_xf)) == 0 &&
           memcmp(o->IA + 1, d->IA + 1, nb * sizeof(fb_abi)) == 0 &&
           memcmp(o->pA_v + 1, d->pA_v + 1, nb * sizeof(fb_fv)) == 0;
}

static void aba_out_free(aba_out* o) {
    free(o->qdd);
    free(o->U);
    free(o->D_inv);
    free(o->X_0);
    free(o->IA);
    free(o->pA_v);
}

/* ABA phase 1 is compiled for baseline x86-64 and with AVX2 (math/isa.h); the AVX2 copy, used
 * where the processor has it, must give the same bits: every output of fb_aba (qdd, X_0, I^A,
 * U, D^-1, pA_v) compared with memcmp on the benchmark models and random trees of every joint
 * type, with and without implicit damping, 5 states each. Also, in either copy, phase 1's
 * positions are bit for bit those of fb_kinematics_pos (the world mixes the two). */
START_TEST(avx2_kernels_give_the_same_bits) {
    const bool avx2 = fb_isa_best() == FB_ISA_AVX2;
    printf("ABA phase 1 kernels: %s%s\n", fb_isa_name(fb_isa_best()),
           avx2 ? ", compared with x86-64" : " only (no AVX2 here or in this build)");
    fflush(stdout);
    int compared = 0;
    for (int k = 0; k < 40; k++) {
        fb_error err;
        fb_model* m = ck_model(k == 0   ? scene_humanoid(&err)
                               : k < 5 ? scene_bender_tree(3 + k, &err)
                                        : scene_random_tree((uint64_t)k * 131u, 40, &err),
                               &err);
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make((uint64_t)k + 500u);
        if (k % 2 == 1 && k >= 5) {
            for (int i = 1; i < m->nbody; i++) {
                if (m->jtype[i] != FB_JOINT_FLOATING && m->jtype[i] != FB_JOINT_FIXED) {
                    ck_assert_int_eq(
                        fb_model_set_damping(m, i, scene_rng_uniform(&r, 0.0, 20.0), &err),
                        FB_OK);
                }
            }
            d->damping_dt = 1.0 / 480.0;
        }
        for (int s = 0; s < 5; s++) {
            scene_random_state(m, d, &r, 2.0, 10.0);
            fb_isa_force(FB_ISA_BASE);
            ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
            aba_out base;
            aba_out_take(&base, m, d);
            fb_kinematics_pos(m, d);
            ck_assert_msg(memcmp(base.X_0 + 1, d->X_0 + 1, (base.nb - 1) * sizeof(fb_xf)) == 0,
                          "model %d: phase 1's X_0 differs from fb_kinematics_pos's", k);
            if (avx2) {
                fb_isa_force(FB_ISA_AVX2);
                ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
                ck_assert_msg(aba_out_same(&base, d),
                              "model %d state %d: the AVX2 kernels give other bits", k, s);
                compared++;
            }
            aba_out_free(&base);
        }
        fb_isa_force(FB_ISA_AUTO);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
    ck_assert(!avx2 || compared == 200);
}
END_TEST

/* Step used for central differences of kinematics: error ~h^2 ~1e-12, round-off ~eps/h. */
#define FD_STEP 1e-6
#define FD_TOL 1e-7

START_TEST(point_jacobian_matches_finite_differences) {
    for (uint64_t seed = 1; seed <= 30; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed, 25, &err), &err);
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed);
        scene_random_state(m, d, &r, 2.0, 0.0);
        const int nv = m->nv, nq = m->nq;
        double* J = malloc(3 * (size_t)nv * sizeof(double) + 1);
        double* Jb = malloc(6 * (size_t)nv * sizeof(double) + 1);
        double* q0 = malloc((size_t)nq * sizeof(double) + 1);
        double* e = calloc((size_t)nv + 1, sizeof(double));
        memcpy(q0, d->q, (size_t)nq * sizeof(double));
        const int body = scene_rng_int(&r, 1, m->nbody - 1);
        const fb_v3 p = fb_v3_scale(scene_rng_unit(&r), 0.3);
        fb_kinematics(m, d);
        fb_jac_point(m, d, body, p, J);
        fb_jac_body(m, d, body, Jb);
        /* J qd is the point velocity; Jb qd is the body's spatial velocity */
        const fb_v3 vp = fb_point_vel(m, d, body, p);
        double Jqd[3] = {0, 0, 0}, Jbqd[6] = {0, 0, 0, 0, 0, 0}, vb[6];
        for (int k = 0; k < nv; k++) {
            for (int a = 0; a < 3; a++) {
                Jqd[a] += J[a * nv + k] * d->qd[k];
            }
            for (int a = 0; a < 6; a++) {
                Jbqd[a] += Jb[a * nv + k] * d->qd[k];
            }
        }
        for (int a = 0; a < 6; a++) {
            vb[a] = fb_mv_get(d->v[body], a);
        }
        ck_assert_msg(ck_rel_diff(Jqd, &vp.x, 3, 1.0) < 1e-12, "seed %llu J qd",
                      (unsigned long long)seed);
        ck_assert_msg(ck_rel_diff(Jbqd, vb, 6, 1.0) < 1e-12, "seed %llu Jb qd",
                      (unsigned long long)seed);
        /* each column: the point's motion when dof k moves by +-h on the manifold */
        for (int k = 0; k < nv; k++) {
            e[k] = 1.0;
            fb_integrate(m, q0, e, FD_STEP, d->q);
            fb_kinematics_pos(m, d);
            const fb_v3 pp = fb_point_pos(m, d, body, p);
            fb_integrate(m, q0, e, -FD_STEP, d->q);
            fb_kinematics_pos(m, d);
            const fb_v3 pm = fb_point_pos(m, d, body, p);
            e[k] = 0.0;
            const double col[3] = {(pp.x - pm.x) / (2 * FD_STEP), (pp.y - pm.y) / (2 * FD_STEP),
                                   (pp.z - pm.z) / (2 * FD_STEP)};
            const double Jcol[3] = {J[k], J[nv + k], J[2 * nv + k]};
            ck_assert_msg(ck_rel_diff(Jcol, col, 3, 1.0) < FD_TOL, "seed %llu dof %d: %g",
                          (unsigned long long)seed, k, ck_rel_diff(Jcol, col, 3, 1.0));
        }
        free(J);
        free(Jb);
        free(q0);
        free(e);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
}
END_TEST

START_TEST(point_acceleration_matches_finite_differences) {
    /* along the trajectory q(t) = q (+) qd t, qd(t) = qd + qdd t (exact to first order in t for
     * the velocity), the point velocity changes at the rate fb_point_acc reports */
    for (uint64_t seed = 1; seed <= 30; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed + 100, 25, &err), &err);
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed);
        scene_random_state(m, d, &r, 2.0, 5.0);
        const int nv = m->nv, nq = m->nq;
        double* q0 = malloc((size_t)nq * sizeof(double) + 1);
        double* qd0 = malloc((size_t)nv * sizeof(double) + 1);
        double* qdd = malloc((size_t)nv * sizeof(double) + 1);
        memcpy(q0, d->q, (size_t)nq * sizeof(double));
        memcpy(qd0, d->qd, (size_t)nv * sizeof(double));
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        memcpy(qdd, d->qdd, (size_t)nv * sizeof(double));
        const int body = m->nbody - 1;
        const fb_v3 p = fb_v3_scale(scene_rng_unit(&r), 0.3);
        const fb_v3 acc = fb_point_acc(m, d, body, p);
        /* fb_point_acc gives the true acceleration (d->a's gravity offset added back), which
         * is what the difference quotient of true velocities measures */
        fb_v3 vel[2];
        for (int s = 0; s < 2; s++) {
            const double h = s ? FD_STEP : -FD_STEP;
            fb_integrate(m, q0, qd0, h, d->q);
            for (int k = 0; k < nv; k++) {
                d->qd[k] = qd0[k] + h * qdd[k];
            }
            fb_kinematics(m, d);
            vel[s] = fb_point_vel(m, d, body, p);
        }
        const fb_v3 fd = fb_v3_scale(fb_v3_sub(vel[1], vel[0]), 1.0 / (2 * FD_STEP));
        /* the floating joint's fb_integrate is first order in its translation, which enters
         * the velocity of descendants at O(h): a looser bound than the Jacobian's */
        ck_assert_msg(ck_rel_diff(&acc.x, &fd.x, 3, 1.0) < 1e-5, "seed %llu: %g",
                      (unsigned long long)seed, ck_rel_diff(&acc.x, &fd.x, 3, 1.0));
        free(q0);
        free(qd0);
        free(qdd);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
}
END_TEST

START_TEST(pendulum_matches_closed_form) {
    /* a rod of mass m, length l hanging from a hinge about z: I_pivot th'' = -m g (l/2) sin th,
     * and the hinge torque needed to hold it still is m g (l/2) sin th */
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    const double mass = 2.0, l = 0.8, g = 9.81;
    fb_body_def def = fb_default_body_def();
    def.name = "rod";
    def.joint = FB_JOINT_REVOLUTE;
    def.axis = fb_v3_make(0.0, 0.0, 1.0);
    def.inertia = fb_rbi_from_mass_com(mass, fb_v3_make(0.0, -l / 2, 0.0),
                                       fb_m3_diag(mass * l * l / 12, 0.0, mass * l * l / 12));
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    fb_data* d = ck_data(m);
    const double I_pivot = mass * l * l / 3.0;
    for (double th = -3.0; th <= 3.0; th += 0.25) {
        d->q[0] = th;
        d->qd[0] = 1.7; /* a hinge about a fixed axis: velocity adds no torque */
        d->tau[0] = 0.0;
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        fb_ck_near(d->qdd[0], -mass * g * (l / 2) * sin(th) / I_pivot, 1e-12, 1e-12);
        double tau;
        d->qd[0] = 0.0;
        fb_bias(m, d, &tau);
        fb_ck_near(tau, mass * g * (l / 2) * sin(th), 1e-12, 1e-12);
        fb_crba(m, d);
        fb_ck_near(d->M[0], I_pivot, 1e-12, 0.0);
    }
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(free_body_falls_and_spins_as_newton_euler_says) {
    /* one floating box: the centre of mass accelerates at g whatever the spin, and with
     * the centre at the body origin, Euler's equations I w' + w x I w = 0 hold */
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    fb_body_def def = fb_default_body_def();
    def.name = "box";
    def.joint = FB_JOINT_FLOATING;
    def.inertia = fb_rbi_box(500.0, fb_v3_make(0.1, 0.3, 0.5), fb_v3_zero());
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    fb_data* d = ck_data(m);
    scene_rng r = scene_rng_make(3);
    scene_random_state(m, d, &r, 3.0, 0.0);
    ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
    const fb_v3 acc = fb_point_acc(m, d, 1, fb_v3_zero());
    fb_ck_near(acc.x, 0.0, 0.0, 1e-12);
    fb_ck_near(acc.y, -9.81, 1e-12, 0.0);
    fb_ck_near(acc.z, 0.0, 0.0, 1e-12);
    const fb_v3 w = fb_v3_make(d->qd[0], d->qd[1], d->qd[2]);
    const fb_m3 I = m->I[1].Ibar;
    const fb_v3 wd = fb_v3_make(d->qdd[0], d->qdd[1], d->qdd[2]);
    const fb_v3 euler = fb_v3_add(fb_m3_mv(I, wd), fb_v3_cross(w, fb_m3_mv(I, w)));
    ck_assert_msg(fb_v3_norm(euler) < 1e-12, "Euler residual %g", fb_v3_norm(euler));
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(massless_joint_reports_the_body) {
    /* a revolute joint whose subtree has no inertia about its axis: D = 0 */
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    fb_body_def def = fb_default_body_def();
    def.name = "ghost";
    def.joint = FB_JOINT_REVOLUTE;
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    fb_data* d = ck_data(m);
    ck_assert_int_eq(fb_aba(m, d, &err), FB_ENUMERIC);
    ck_assert_ptr_nonnull(strstr(err.msg, "ghost"));
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

static Suite* dynamics_suite(void) {
    Suite* s = suite_create("dynamics");
    TCase* tc = tcase_create("dynamics");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, aba_matches_crba_and_rnea_inverts_aba);
    tcase_add_test(tc, joint_damping_explicit_and_implicit);
    tcase_add_test(tc, principal_submatrix_factors_on_its_own_tree);
    tcase_add_test(tc, benchmark_models_pass_the_cross_checks);
    tcase_add_test(tc, phase2_reuses_phase1_for_new_forces);
    tcase_add_test(tc, phase1_velocities_matches_full_phase1);
    tcase_add_test(tc, avx2_kernels_give_the_same_bits);
    tcase_add_test(tc, point_jacobian_matches_finite_differences);
    tcase_add_test(tc, point_acceleration_matches_finite_differences);
    tcase_add_test(tc, pendulum_matches_closed_form);
    tcase_add_test(tc, free_body_falls_and_spins_as_newton_euler_says);
    tcase_add_test(tc, massless_joint_reports_the_body);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(dynamics_suite());
}
