/* Dynamics cross-checks against independent algorithms, shared by `featherbone selfcheck` and
 * the tests: forward dynamics by ABA against the CRBA mass matrix solved by Cholesky, and
 * inverse dynamics (RNEA) applied to ABA's accelerations against the input torques. */
#ifndef FB_BENCH_CHECKS_H
#define FB_BENCH_CHECKS_H

#include "featherbone/featherbone.h"
#include "scenes.h"

/* Worst relative errors over the states checked. */
typedef struct scene_check {
    int states;            /* states checked */
    double aba_vs_crba;    /* max |qdd_ABA - M^-1 (tau - C)|_inf / |M^-1 (tau - C)|_inf */
    double rnea_after_aba; /* max |RNEA(q, qd, ABA(q, qd, tau)) - tau|_inf / |tau|_inf */
    double m_asymmetry;    /* max |M - M^T|_inf / |M|_inf */
    int m_not_pd;          /* states whose M failed the Cholesky factorisation */
} scene_check;

/* Checks `nstates` random states (scene_random_state with velocities in (-2, 2), torques in
 * (-10, 10), and random external forces) of model m. d must be made from m. */
fb_status scene_check_dynamics(const fb_model* m, fb_data* d, scene_rng* r, int nstates,
                               scene_check* out, fb_error* err);

/* Solves M x = b (nv) by Cholesky of a copy of M (scratch nv*nv); false if M is not SPD. */
bool scene_solve_spd(const double* M, int n, double* scratch, double* b);

#endif /* FB_BENCH_CHECKS_H */
