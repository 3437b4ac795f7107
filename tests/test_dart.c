/* Cross-check against DART (Debian libdart-dev, 6.12): the same model, built as a DART
 * Skeleton from the fb_model (bench/peer_dart.cpp: joint frames from X_tree, inertias about
 * the centre of mass, ball joints as rotation vectors), must give the same forward dynamics
 * (ABA vs Skeleton::computeForwardDynamics) and inverse dynamics (RNEA vs
 * Skeleton::computeInverseDynamics) to 1e-8 relative, on every benchmark model of
 * ../shared/BENCH_MODELS.md and 20 random states each (random torques for the forward
 * dynamics, random accelerations for the inverse). DART is an independent implementation
 * (Featherstone's ABA in its own Lie-group formulation, Eigen), so agreement checks our
 * dynamics and the state mapping `bench --peers` times DART with. */
#include <stdio.h>
#include <stdlib.h>

#include "peer_dart.h"
#include "support.h"

/* The bound and state count. */
#define DART_TOL 1e-8
#define NSTATE 20

static double rel(const double* a, const double* b, int n) {
    return ck_rel_diff(a, b, n, 1e-12);
}

/* NSTATE random states of m through both; the worst relative differences into *fwd, *inv. */
static void cross_check(const char* label, const fb_model* m, uint64_t seed) {
    fb_error err;
    dart_peer* p = dart_peer_create(m, &err);
    ck_assert_msg(p, "%s: %s", label, err.msg);
    fb_data* d = ck_data(m);
    const int nv = m->nv;
    const size_t vb = (size_t)nv * sizeof(double) + 1;
    double* pos = malloc(vb);
    double* vel = malloc(vb);
    double* x = malloc(vb);
    double* xd = malloc(vb);
    double* ours = malloc(vb);
    double* theirs = malloc(vb);
    scene_rng r = scene_rng_make(seed);
    double worst_fwd = 0.0, worst_inv = 0.0, qdd_max = 0.0;
    for (int s = 0; s < NSTATE; s++) {
        scene_random_state(m, d, &r, 2.0, 10.0);
        dart_peer_to_dart(p, d->q, d->qd, d->tau, pos, vel, xd);
        dart_peer_set_state(p, pos, vel);
        /* forward: ABA vs computeForwardDynamics, same torques */
        dart_peer_set_forces(p, xd);
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        dart_peer_forward(p);
        dart_peer_qdd(p, theirs);
        worst_fwd = fmax(worst_fwd, rel(d->qdd, theirs, nv));
        for (int k = 0; k < nv; k++) {
            qdd_max = fmax(qdd_max, fabs(d->qdd[k]));
        }
        /* inverse: RNEA of random accelerations vs computeInverseDynamics */
        for (int k = 0; k < nv; k++) {
            x[k] = scene_rng_uniform(&r, -5.0, 5.0);
        }
        dart_peer_to_dart(p, NULL, NULL, x, NULL, NULL, xd);
        dart_peer_inverse(p, xd);
        dart_peer_tau(p, theirs);
        fb_rnea(m, d, x, ours);
        worst_inv = fmax(worst_inv, rel(ours, theirs, nv));
    }
    printf("%s vs DART %s over %d states: forward %.2e (|qdd| up to %.3g), inverse %.2e\n",
           label, dart_peer_version(), NSTATE, worst_fwd, qdd_max, worst_inv);
    fflush(stdout);
    ck_assert_msg(worst_fwd < DART_TOL, "%s: forward dynamics differ by %g", label, worst_fwd);
    ck_assert_msg(worst_inv < DART_TOL, "%s: inverse dynamics differ by %g", label, worst_inv);
    free(pos);
    free(vel);
    free(x);
    free(xd);
    free(ours);
    free(theirs);
    fb_data_destroy(d);
    dart_peer_destroy(p);
}

START_TEST(humanoid_matches_dart) {
    fb_error err;
    fb_model* m = ck_model(scene_humanoid(&err), &err);
    cross_check("humanoid", m, 1);
    fb_model_destroy(m);
}
END_TEST

START_TEST(bender_trees_match_dart) {
    for (int depth = 4; depth <= 7; depth++) {
        fb_error err;
        fb_model* m = ck_model(scene_bender_tree(depth, &err), &err);
        char label[32];
        snprintf(label, sizeof label, "tree%d", (1 << (depth + 1)) - 1);
        cross_check(label, m, (uint64_t)depth + 10u);
        fb_model_destroy(m);
    }
}
END_TEST

START_TEST(random_trees_match_dart) {
    /* every joint type (welded bodies, slides, hinges on random axes, floating joints at the
     * root and further down), rotated X_tree, off-diagonal inertias */
    ck_random_trees(cross_check);
}
END_TEST

static Suite* dart_suite(void) {
    Suite* s = suite_create("dart");
    TCase* tc = tcase_create("dart");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, humanoid_matches_dart);
    tcase_add_test(tc, bender_trees_match_dart);
    tcase_add_test(tc, random_trees_match_dart);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(dart_suite());
}
