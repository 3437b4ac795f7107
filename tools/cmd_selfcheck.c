/* featherbone selfcheck: the dynamics checked against independent algorithms on the bundled
 * models, printed as a table. */
#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "commands.h"
#include "scenes.h"

static const char USAGE[] =
    "usage: featherbone selfcheck [--states N] [--seed S]\n"
    "\n"
    "Checks forward dynamics (ABA) against the joint-space inertia (CRBA) solved by\n"
    "Cholesky, and inverse dynamics (RNEA) of ABA's accelerations against the torques,\n"
    "on random states of the bundled capsule humanoid and Bender's 255-box tree.\n"
    "\n"
    "  --states N   random states per model (default 100)\n"
    "  --seed S     random seed (default 1)\n"
    "\n"
    "Exit code 0 when every error is below 1e-9 relative, 1 otherwise.\n";

/* Largest relative error accepted (the 1e-9 acceptance bound). */
#define SELFCHECK_TOL 1e-9

static bool check_model(const char* label, fb_model* m, int states, scene_rng* r) {
    fb_error err;
    fb_data* d = fb_data_create(m, NULL, &err);
    if (!d) {
        fprintf(stderr, "featherbone: %s: %s\n", label, err.msg);
        return false;
    }
    scene_check c;
    const fb_status s = scene_check_dynamics(m, d, r, states, &c, &err);
    fb_data_destroy(d);
    if (s != FB_OK) {
        fprintf(stderr, "featherbone: %s: %s\n", label, err.msg);
        return false;
    }
    const bool ok = c.aba_vs_crba < SELFCHECK_TOL && c.rnea_after_aba < SELFCHECK_TOL &&
                    c.m_asymmetry < SELFCHECK_TOL && c.m_not_pd == 0 && c.states == states;
    printf("%-10s %6d %4d %8.2f  %9.2e  %9.2e  %9.2e  %s\n", label, m->nbody - 1, m->nv,
           fb_model_mass(m), c.aba_vs_crba, c.rnea_after_aba, c.m_asymmetry,
           ok ? "ok" : "FAIL");
    return ok;
}

int cmd_selfcheck(int argc, char** argv) {
    int states = 100, seed = 1;
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(USAGE, stdout);
            return EXIT_OK;
        } else if (strcmp(argv[i], "--states") == 0 && i + 1 < argc) {
            if (!parse_positive_int("--states", argv[++i], &states)) {
                return EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            if (!parse_positive_int("--seed", argv[++i], &seed)) {
                return EXIT_USAGE;
            }
        } else {
            fprintf(stderr, "featherbone selfcheck: unknown option '%s'\n%s", argv[i], USAGE);
            return EXIT_USAGE;
        }
    }
    fb_error err;
    fb_model* models[2] = {scene_humanoid(&err), NULL};
    if (models[0]) {
        models[1] = scene_bender_tree(7, &err);
    }
    if (!models[0] || !models[1]) {
        fprintf(stderr, "featherbone: building the bundled models: %s\n", err.msg);
        fb_model_destroy(models[0]);
        return EXIT_FAIL;
    }
    printf("featherbone %s selfcheck: %d random states per model, seed %d\n", FB_VERSION_STRING,
           states, seed);
    printf("worst relative errors (pass below %.0e):\n", SELFCHECK_TOL);
    printf("%-10s %6s %4s %8s  %9s  %9s  %9s\n", "model", "bodies", "dof", "mass_kg",
           "ABA-CRBA", "RNEA(ABA)", "M-M^T");
    scene_rng r = scene_rng_make((uint64_t)seed);
    bool ok = check_model("humanoid", models[0], states, &r);
    ok = check_model("tree255", models[1], states, &r) && ok;
    fb_model_destroy(models[0]);
    fb_model_destroy(models[1]);
    printf("selfcheck: %s\n", ok ? "PASSED" : "FAILED");
    return ok ? EXIT_OK : EXIT_FAIL;
}
