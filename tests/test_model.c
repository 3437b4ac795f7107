/* The model: validation of bodies, coordinate bookkeeping, the configuration manifold
 * (integrate / difference) and the benchmark models against BENCH_MODELS.md's own numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/quat.h"
#include "math/spatial.h"
#include "model/limit.h"
#include "support.h"

static fb_body_def body(const char* name, int parent, fb_joint_type j) {
    fb_body_def def = fb_default_body_def();
    def.name = name;
    def.parent = parent;
    def.joint = j;
    def.inertia = fb_rbi_box(1000.0, fb_v3_make(0.1, 0.2, 0.3), fb_v3_make(0.0, -0.1, 0.0));
    return def;
}

START_TEST(bad_bodies_are_refused_with_a_message) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(2, NULL, &err), &err);
    fb_body_def def = body("a", 0, FB_JOINT_REVOLUTE);

    def.name = "";
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "name"));

    def = body("a", 5, FB_JOINT_REVOLUTE);
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "parent"));

    def = body("a", 0, FB_JOINT_REVOLUTE);
    def.axis = fb_v3_zero();
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "axis"));

    def = body("a", 0, FB_JOINT_SPHERICAL);
    def.X_tree.E.m[0][0] = 2.0; /* not a rotation */
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "X_tree"));

    def = body("a", 0, FB_JOINT_SPHERICAL);
    def.inertia.Ibar.m[0][0] = 1e3; /* breaks the triangle inequality */
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "inertia"));

    def = body("a", 0, FB_JOINT_SPHERICAL);
    def.inertia.m = NAN;
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);

    /* good ones, then a duplicate name, then one too many */
    def = body("a", 0, FB_JOINT_SPHERICAL);
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "unique"));
    def = body("b", 1, FB_JOINT_FLOATING);
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_OK);
    def = body("c", 1, FB_JOINT_FIXED);
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_ECAPACITY);

    /* data needs a finalized model; a finalized model takes no more bodies */
    ck_assert_ptr_null(fb_data_create(m, NULL, &err));
    ck_assert_int_eq(err.code, FB_ESTATE);
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_ESTATE);
    fb_model_destroy(m);
    fb_model_destroy(NULL);
    fb_data_destroy(NULL);
}
END_TEST

START_TEST(coordinates_are_laid_out_per_joint) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(5, NULL, &err), &err);
    const fb_joint_type types[5] = {FB_JOINT_FLOATING, FB_JOINT_FIXED, FB_JOINT_SPHERICAL,
                                    FB_JOINT_REVOLUTE, FB_JOINT_PRISMATIC};
    const char* names[5] = {"f", "x", "s", "r", "p"};
    for (int i = 0; i < 5; i++) {
        fb_body_def def = body(names[i], i, types[i]);
        ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_OK);
    }
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    ck_assert_int_eq(m->nq, 7 + 0 + 4 + 1 + 1);
    ck_assert_int_eq(m->nv, 6 + 0 + 3 + 1 + 1);
    const int q_adr[6] = {0, 0, 7, 7, 11, 12}, v_adr[6] = {0, 0, 6, 6, 9, 10};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(m->q_adr[i], q_adr[i]);
        ck_assert_int_eq(m->v_adr[i], v_adr[i]);
    }
    /* neutral: identity quaternions */
    ck_assert(m->q_neutral[3] == 1.0 && m->q_neutral[7] == 1.0);
    ck_assert_int_eq(fb_model_body_by_name(m, "s"), 3);
    ck_assert_int_eq(fb_model_body_by_name(m, "nope"), -1);
    fb_model_destroy(m);
}
END_TEST

START_TEST(difference_inverts_integrate) {
    for (uint64_t seed = 1; seed <= 50; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed, 20, &err), &err);
        fb_data* d = ck_data(m);
        scene_rng r = scene_rng_make(seed);
        scene_random_state(m, d, &r, 2.0, 0.0);
        const size_t nq = (size_t)m->nq + 1, nv = (size_t)m->nv + 1;
        double* q1 = malloc(nq * sizeof(double));
        double* v = malloc(nv * sizeof(double));
        double* q2 = malloc(nq * sizeof(double));
        /* rotations below pi so the shortest arc is the one integrated */
        fb_integrate(m, d->q, d->qd, 0.7, q1);
        fb_difference(m, d->q, q1, v);
        for (int k = 0; k < m->nv; k++) {
            fb_ck_near(v[k], 0.7 * d->qd[k], 1e-12, 1e-12);
        }
        fb_integrate(m, d->q, v, 1.0, q2);
        ck_assert_msg(ck_rel_diff(q2, q1, m->nq, 1.0) < 1e-12, "seed %llu",
                      (unsigned long long)seed);
        free(q1);
        free(v);
        free(q2);
        fb_data_destroy(d);
        fb_model_destroy(m);
    }
}
END_TEST

START_TEST(quaternions_stay_unit_over_a_million_steps) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(2, NULL, &err), &err);
    fb_body_def a = body("ball", 0, FB_JOINT_SPHERICAL);
    fb_body_def b = body("free", 1, FB_JOINT_FLOATING);
    ck_assert_int_eq(fb_model_add_body(m, &a, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_add_body(m, &b, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    double q[11], v[9] = {3.0, -7.0, 11.0, 5.0, 1.0, -2.0, 0.3, 0.2, 0.1};
    fb_q_neutral(m, q);
    for (int step = 0; step < 1000000; step++) {
        fb_integrate(m, q, v, 1e-3, q);
    }
    fb_ck_near(fb_quat_norm(fb_quat_load(q)), 1.0, 0.0, 1e-14);
    fb_ck_near(fb_quat_norm(fb_quat_load(q + 7)), 1.0, 0.0, 1e-14);
    /* and the rotation is right: 1000 s at constant w is exp(1000 w) */
    const fb_quat expect = fb_quat_exp(fb_v3_make(3000.0, -7000.0, 11000.0));
    const fb_m3 R = fb_quat_to_m3(fb_quat_load(q)), Re = fb_quat_to_m3(expect);
    ck_assert_msg(ck_rel_diff(&R.m[0][0], &Re.m[0][0], 9, 1.0) < 1e-8, "orientation drifted");
    fb_model_destroy(m);
}
END_TEST

START_TEST(normalize_q_refuses_zero_quaternion) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    fb_body_def a = body("ball", 0, FB_JOINT_SPHERICAL);
    ck_assert_int_eq(fb_model_add_body(m, &a, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    double q[4] = {0.0, 0.0, 0.0, 0.0};
    ck_assert_int_eq(fb_normalize_q(m, q, &err), FB_ENUMERIC);
    ck_assert_ptr_nonnull(strstr(err.msg, "ball"));
    double q2[4] = {2.0, 0.0, 0.0, 0.0};
    ck_assert_int_eq(fb_normalize_q(m, q2, &err), FB_OK);
    ck_assert(q2[0] == 1.0);
    fb_model_destroy(m);
}
END_TEST

/* BENCH_MODELS.md's humanoid table: body masses (kg) as printed there. */
static const struct {
    const char* name;
    double mass;
} HUMANOID_MASS[] = {
    {"pelvis", 6.616},     {"spine1", 4.557},    {"spine2", 6.107},    {"spine3", 9.844},
    {"neck", 0.891},       {"head", 4.580},      {"clavicle_l", 1.072}, {"upperarm_l", 2.163},
    {"forearm_l", 1.474},  {"hand_l", 0.487},    {"thigh_l", 8.659},   {"shin_l", 3.822},
    {"foot_l", 1.072},     {"toe_l", 0.419},     {"clavicle_r", 1.072}, {"toe_r", 0.419},
};

START_TEST(humanoid_matches_bench_models_table) {
    fb_error err;
    fb_model* m = ck_model(scene_humanoid(&err), &err);
    ck_assert_int_eq(m->nbody - 1, 22);
    ck_assert_int_eq(m->nv, 57);
    fb_ck_near(fb_model_mass(m), 70.9, 0.0, 0.05);
    for (size_t k = 0; k < sizeof HUMANOID_MASS / sizeof HUMANOID_MASS[0]; k++) {
        const int i = fb_model_body_by_name(m, HUMANOID_MASS[k].name);
        ck_assert_int_gt(i, 0);
        fb_ck_near(m->I[i].m, HUMANOID_MASS[k].mass, 0.0, 0.0006);
    }
    int hinges = 0;
    for (int i = 1; i < m->nbody; i++) {
        hinges += m->jtype[i] == FB_JOINT_REVOLUTE;
    }
    ck_assert_int_eq(hinges, 6);
    /* standing: 1.75 m tall, feet and toes touching the ground */
    fb_data* d = ck_data(m);
    scene_humanoid_standing(m, d->q);
    fb_kinematics_pos(m, d);
    const int head = fb_model_body_by_name(m, "head");
    const fb_v3 top = fb_point_pos(m, d, head, fb_v3_make(0.0, 0.06 + 0.09, 0.0));
    fb_ck_near(top.y, 1.75, 0.0, 1e-12);
    const char* low[4] = {"foot_l", "foot_r", "toe_l", "toe_r"};
    for (int k = 0; k < 4; k++) {
        const fb_v3 sole = fb_point_pos(m, d, fb_model_body_by_name(m, low[k]),
                                        fb_v3_make(0.0, -0.04, 0.0));
        fb_ck_near(sole.y, 0.0, 0.0, 1e-12);
    }
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(bender_trees_match_bench_models_table) {
    /* BENCH_MODELS.md: boxes, DOF and total mass (kg) for depths 4..7 */
    const int boxes[4] = {31, 63, 127, 255}, dof[4] = {93, 189, 381, 765};
    const double mass[4] = {4.686, 10.101, 21.296, 44.231};
    for (int k = 0; k < 4; k++) {
        fb_error err;
        fb_model* m = ck_model(scene_bender_tree(4 + k, &err), &err);
        ck_assert_int_eq(m->nbody - 1, boxes[k]);
        ck_assert_int_eq(m->nv, dof[k]);
        fb_ck_near(fb_model_mass(m), mass[k], 0.0, 0.0006);
        /* the root box: 1.5^d * 0.1 m long, principal moments m(0.04^2 + l^2)/12 across,
         * m 2 0.04^2 / 12 along, about its centre (here read back through Ibar) */
        const double l = pow(1.5, 4 + k) * 0.1, mr = 0.96 * l;
        fb_ck_near(m->I[1].m, mr, 1e-12, 0.0);
        const fb_rbi I = m->I[1];
        const double Ic_across = I.Ibar.m[0][0] - mr * (l / 2) * (l / 2);
        fb_ck_near(Ic_across, mr * (0.04 * 0.04 + l * l) / 12.0, 1e-12, 0.0);
        fb_ck_near(I.Ibar.m[1][1], mr * 2.0 * 0.04 * 0.04 / 12.0, 1e-12, 0.0);
        fb_model_destroy(m);
    }
}
END_TEST

START_TEST(capsule_inertia_matches_numerical_integration) {
    /* integrate density over a grid of the capsule's bounding box: an independent estimate of
     * mass, centre and inertia */
    const double rho = 1000.0, r = 0.05, L = 0.2;
    const fb_v3 p0 = {0.1, 0.0, 0.0}, p1 = {0.1, -L, 0.0};
    const fb_rbi I = fb_rbi_capsule(rho, r, p0, p1);
    const int n = 120;
    const double lo[3] = {0.1 - r, -L - r, -r}, hi[3] = {0.1 + r, r, r};
    double h[3], mass = 0.0, Ixx = 0.0, Iyy = 0.0;
    for (int k = 0; k < 3; k++) {
        h[k] = (hi[k] - lo[k]) / n;
    }
    const double dV = h[0] * h[1] * h[2];
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            for (int c = 0; c < n; c++) {
                const double x = lo[0] + (a + 0.5) * h[0], y = lo[1] + (b + 0.5) * h[1],
                             z = lo[2] + (c + 0.5) * h[2];
                /* distance to the axis segment */
                const double yc = fmin(fmax(y, -L), 0.0);
                const double d2 = (x - 0.1) * (x - 0.1) + (y - yc) * (y - yc) + z * z;
                if (d2 <= r * r) {
                    mass += rho * dV;
                    Ixx += rho * dV * (y * y + z * z);
                    Iyy += rho * dV * ((x - 0.1) * (x - 0.1) + z * z);
                }
            }
        }
    }
    fb_ck_near(I.m, mass, 2e-3, 0.0);
    /* Ibar is about the body origin; the grid sums are about (0.1, 0, 0) for Iyy and about
     * the x axis through the origin for Ixx: compare like with like */
    fb_ck_near(I.Ibar.m[0][0], Ixx, 3e-3, 0.0);
    const double Iyy_origin = Iyy + mass * 0.1 * 0.1;
    fb_ck_near(I.Ibar.m[1][1], Iyy_origin, 3e-3, 0.0);
}
END_TEST

/* ---- joint ranges (model/limit.c) --------------------------------------------------------- */

/* A random elliptic limit: any neutral, swing axis and twist axis, bounds 5-150 deg. */
static fb_joint_limit random_ellipse(scene_rng* r) {
    fb_joint_limit L = {.on = true, .elliptic = true, .lo = -1.0, .hi = 1.0};
    L.neutral = scene_rng_unit(r);
    const fb_v3 t = scene_rng_unit(r);
    const fb_v3 u = fb_v3_sub(t, fb_v3_scale(L.neutral, fb_v3_dot(t, L.neutral)));
    L.swing_axis = fb_v3_scale(u, 1.0 / fb_v3_norm(u));
    L.twist_axis = scene_rng_unit(r);
    for (int k = 0; k < 2; k++) {
        L.swing_lo[k] = -scene_rng_uniform(r, 5.0, 150.0) * FB_PI / 180.0;
        L.swing_hi[k] = scene_rng_uniform(r, 5.0, 150.0) * FB_PI / 180.0;
    }
    return L;
}

/* The swing and twist rows against central differences of the oracle's g and of the twist
 * angle along random angular velocities (child coordinates: q(h) = q exp(h w)), at random
 * rotations 3 deg or more away from the neutral and its opposite. */
START_TEST(limit_rows_match_finite_differences) {
    scene_rng r = scene_rng_make(17);
    const double h = 1e-6;
    double worst_swing = 0.0, worst_depth = 0.0, worst_twist = 0.0, worst_cone = 0.0;
    int n = 0;
    while (n < 2000) {
        const fb_joint_limit L = random_ellipse(&r);
        const fb_quat q = scene_rng_quat(&r);
        const fb_v3 b = fb_quat_rotate(q, L.twist_axis);
        if (fb_v3_norm(fb_v3_cross(L.neutral, b)) < sin(3.0 * FB_PI / 180.0)) {
            continue;
        }
        n++;
        const fb_v3 w = scene_rng_unit(&r);
        const fb_quat qp = fb_quat_mul(q, fb_quat_exp(fb_v3_scale(w, h)));
        const fb_quat qm = fb_quat_mul(q, fb_quat_exp(fb_v3_scale(w, -h)));
        double G[2], Gp[2], Gm[2];
        const double g = ck_swing_g(&L, q, G);
        const double fd = (ck_swing_g(&L, qp, Gp) - ck_swing_g(&L, qm, Gm)) / (2.0 * h);
        fb_v3 nrow;
        double depth;
        ck_assert(fb_limit_swing(&L, q, &nrow, &depth));
        ck_assert(fabs(fb_v3_norm(nrow) - 1.0) < 1e-12);
        /* the library's g is the oracle's */
        double sl[2];
        fb_limit_swing_coords(&L, q, sl);
        worst_depth = fmax(worst_depth, fabs(fb_limit_ellipse(&L, sl, NULL) - g));
        /* n is the unit direction of steepest growth: g grows along it at |gdot| > 0, along w
         * at |gdot| n . w; and depth = (g - 1) / |gdot| */
        const fb_quat qn_p = fb_quat_mul(q, fb_quat_exp(fb_v3_scale(nrow, h)));
        const fb_quat qn_m = fb_quat_mul(q, fb_quat_exp(fb_v3_scale(nrow, -h)));
        const double rate = (ck_swing_g(&L, qn_p, Gp) - ck_swing_g(&L, qn_m, Gm)) / (2.0 * h);
        ck_assert_msg(rate > 0.0, "g falls along the row (%g)", rate);
        worst_swing = fmax(worst_swing, fabs(rate * fb_v3_dot(nrow, w) - fd) / fmax(1.0, fabs(fd)));
        worst_depth = fmax(worst_depth, fabs(depth - (g - 1.0) / rate) / fmax(1.0, fabs(depth)));
        /* twist: tau' = T . w */
        fb_v3 T;
        const double tau = fb_limit_twist(L.twist_axis, q, &T);
        const double tp = fb_quat_twist(qp, L.twist_axis), tm = fb_quat_twist(qm, L.twist_axis);
        if (fabs(tau) < 3.0) { /* away from the wrap at +-pi */
            worst_twist = fmax(worst_twist, fabs(fb_v3_dot(T, w) - (tp - tm) / (2.0 * h)));
        }
        /* the circular cone: depth = angle between a and b - swing, growing along n */
        fb_joint_limit C = {.on = true, .swing = 0.5, .twist_axis = L.twist_axis};
        if (fb_limit_swing(&C, q, &nrow, &depth)) {
            const fb_v3 a = C.twist_axis;
            const double ap = acos(fmax(-1.0, fmin(1.0, fb_v3_dot(a, fb_quat_rotate(qp, a)))));
            const double am = acos(fmax(-1.0, fmin(1.0, fb_v3_dot(a, fb_quat_rotate(qm, a)))));
            worst_cone = fmax(worst_cone, fabs(fb_v3_dot(nrow, w) - (ap - am) / (2.0 * h)));
        }
    }
    printf("limit rows vs central differences over %d rotations: swing %.1e, depth %.1e, twist "
           "%.1e, cone %.1e\n",
           n, worst_swing, worst_depth, worst_twist, worst_cone);
    ck_assert_msg(worst_swing < 1e-6, "swing row off by %g", worst_swing);
    ck_assert_msg(worst_depth < 1e-6, "depth off by %g", worst_depth);
    ck_assert_msg(worst_twist < 1e-6, "twist row off by %g", worst_twist);
    ck_assert_msg(worst_cone < 1e-6, "cone row off by %g", worst_cone);
}
END_TEST

/* Elliptic limits: a bad neutral, swing axis or bound is refused naming the field; a good one
 * is stored with unit axes and the circumscribing cone as `swing`. */
START_TEST(elliptic_limits_are_checked) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    fb_body_def def = body("a", 0, FB_JOINT_SPHERICAL);
    const fb_joint_limit good = {.on = true,
                                 .lo = -0.5,
                                 .hi = 0.5,
                                 .twist_axis = {0, -2, 0},
                                 .elliptic = true,
                                 .neutral = {0, -3, 0},
                                 .swing_axis = {1, 1, 0},
                                 .swing_lo = {-0.5, -0.2},
                                 .swing_hi = {2.0, 0.7}};
    static const struct {
        int field;
        const char* says;
    } CASES[] = {{0, "limit.neutral"}, {1, "limit.swing_axis"}, {2, "limit.swing_lo/hi[0]"},
                 {3, "limit.swing_lo/hi[1]"}};
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        def.limit = good;
        if (CASES[k].field == 0) {
            def.limit.neutral = fb_v3_zero();
        } else if (CASES[k].field == 1) {
            def.limit.swing_axis = fb_v3_make(0, 5, 0); /* along the neutral */
        } else if (CASES[k].field == 2) {
            def.limit.swing_lo[0] = 0.1; /* the neutral outside */
        } else {
            def.limit.swing_hi[1] = 4.0; /* past pi */
        }
        ck_assert_int_eq(fb_model_add_body(m, &def, NULL, &err), FB_EINVAL);
        ck_assert_msg(strstr(err.msg, CASES[k].says), "'%s' lacks '%s'", err.msg, CASES[k].says);
    }
    def.limit = good;
    ck_assert_msg(fb_model_add_body(m, &def, NULL, &err) == FB_OK, "%s", err.msg);
    const fb_joint_limit* L = &m->limit[1];
    fb_ck_near(L->swing, 2.0, 0.0, 0.0);
    fb_ck_near(L->neutral.y, -1.0, 0.0, 1e-15);
    fb_ck_near(L->swing_axis.x, 1.0, 0.0, 1e-15); /* made square to the neutral */
    fb_ck_near(L->twist_axis.y, -1.0, 0.0, 1e-15);
    fb_model_destroy(m);
}
END_TEST

static Suite* model_suite(void) {
    Suite* s = suite_create("model");
    TCase* tc = tcase_create("model");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bad_bodies_are_refused_with_a_message);
    tcase_add_test(tc, coordinates_are_laid_out_per_joint);
    tcase_add_test(tc, difference_inverts_integrate);
    tcase_add_test(tc, quaternions_stay_unit_over_a_million_steps);
    tcase_add_test(tc, normalize_q_refuses_zero_quaternion);
    tcase_add_test(tc, humanoid_matches_bench_models_table);
    tcase_add_test(tc, bender_trees_match_bench_models_table);
    tcase_add_test(tc, capsule_inertia_matches_numerical_integration);
    tcase_add_test(tc, limit_rows_match_finite_differences);
    tcase_add_test(tc, elliptic_limits_are_checked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(model_suite());
}
