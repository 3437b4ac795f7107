/* Dynamics cross-checks (see checks.h). */
#include "checks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math/dense.h"

/* Random external forces (N, N m) applied in the checks. */
#define CHECK_F_EXT_MAX 5.0
/* Bounds of the random check states. */
#define CHECK_QD_MAX 2.0
#define CHECK_TAU_MAX 10.0

static double norm_inf(const double* x, int n) {
    double m = 0.0;
    for (int k = 0; k < n; k++) {
        m = fmax(m, fabs(x[k]));
    }
    return m;
}

bool scene_solve_spd(const double* M, int n, double* scratch, double* b) {
    memcpy(scratch, M, (size_t)n * (size_t)n * sizeof(double));
    if (!fb_chol_factor(scratch, n)) {
        return false;
    }
    fb_chol_solve(scratch, n, b);
    return true;
}

fb_status scene_check_dynamics(const fb_model* m, fb_data* d, scene_rng* r, int nstates,
                               scene_check* out, fb_error* err) {
    const int nv = m->nv;
    const size_t n = (size_t)(nv > 0 ? nv : 1);
    memset(out, 0, sizeof *out);
    double* C = malloc(n * sizeof(double));
    double* x = malloc(n * sizeof(double));
    double* tau = malloc(n * sizeof(double));
    double* L = malloc(n * n * sizeof(double));
    fb_status s = FB_OK;
    if (!C || !x || !tau || !L) {
        s = FB_ENOMEM;
        if (err) {
            err->code = s;
            strcpy(err->msg, "scene_check_dynamics: out of memory");
        }
        goto done;
    }
    for (int t = 0; t < nstates; t++) {
        scene_random_state(m, d, r, CHECK_QD_MAX, CHECK_TAU_MAX);
        for (int i = 1; i < m->nbody; i++) {
            for (int k = 0; k < 3; k++) {
                (&d->f_ext[i].n.x)[k] = scene_rng_uniform(r, -CHECK_F_EXT_MAX, CHECK_F_EXT_MAX);
                (&d->f_ext[i].f.x)[k] = scene_rng_uniform(r, -CHECK_F_EXT_MAX, CHECK_F_EXT_MAX);
            }
        }
        /* forward dynamics by ABA */
        if ((s = fb_aba(m, d, err)) != FB_OK) {
            goto done;
        }
        /* the same by M^-1 (tau - C) */
        fb_crba(m, d);
        fb_bias(m, d, C);
        for (int k = 0; k < nv; k++) {
            x[k] = d->tau[k] - C[k];
        }
        double asym = 0.0;
        for (int a = 0; a < nv; a++) {
            for (int b = 0; b < nv; b++) {
                asym = fmax(asym, fabs(d->M[a * nv + b] - d->M[b * nv + a]));
            }
        }
        out->m_asymmetry = fmax(out->m_asymmetry, asym / fmax(norm_inf(d->M, nv * nv), 1e-300));
        if (!scene_solve_spd(d->M, nv, L, x)) {
            out->m_not_pd++;
            continue;
        }
        /* d->qdd still holds ABA's answer: fb_crba and fb_bias write M and C only */
        double diff = 0.0;
        for (int k = 0; k < nv; k++) {
            diff = fmax(diff, fabs(d->qdd[k] - x[k]));
        }
        out->aba_vs_crba = fmax(out->aba_vs_crba, diff / fmax(norm_inf(x, nv), 1e-300));
        /* inverse dynamics of ABA's accelerations gives back the torques */
        memcpy(x, d->qdd, (size_t)nv * sizeof(double));
        fb_rnea(m, d, x, tau);
        diff = 0.0;
        for (int k = 0; k < nv; k++) {
            diff = fmax(diff, fabs(tau[k] - d->tau[k]));
        }
        out->rnea_after_aba =
            fmax(out->rnea_after_aba, diff / fmax(norm_inf(d->tau, nv), 1e-300));
        out->states++;
    }
done:
    free(C);
    free(x);
    free(tau);
    free(L);
    return s;
}
