/* Timing of the dynamics algorithms (see bench_dynamics.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "bench_dynamics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenes.h"

/* Distinct states cycled through, as BENCH_MODELS.md prescribes. */
#define BENCH_NSTATE 16
/* Seed of the benchmark states. */
#define BENCH_SEED 20261121u

static const char* const MODEL_NAMES[BENCH_NMODEL] = {"humanoid", "tree31", "tree63", "tree127",
                                                      "tree255"};
static const char* const ALGO_NAMES[BENCH_NALGO] = {"ABA", "RNEA", "CRBA"};

const char* bench_model_name(int k) {
    return (k >= 0 && k < BENCH_NMODEL) ? MODEL_NAMES[k] : "?";
}

const char* bench_algo_name(bench_algo a) {
    return (a >= 0 && a < BENCH_NALGO) ? ALGO_NAMES[a] : "?";
}

double bench_target_us(int model, bench_algo a) {
    /* issue 2's targets: ABA humanoid 3.5 us, ABA tree255 45 us, RNEA humanoid 2.5 us */
    if (model == 0 && a == BENCH_ABA) {
        return 3.5;
    }
    if (model == 0 && a == BENCH_RNEA) {
        return 2.5;
    }
    if (model == 4 && a == BENCH_ABA) {
        return 45.0;
    }
    return 0.0;
}

bench_options bench_default_options(void) {
    return (bench_options){.rounds = 5, .calls = 10000, .batch = 100, .models = 0x1f,
                           .quiet = false};
}

double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

bench_stat bench_stats(double* samples, int n) {
    qsort(samples, (size_t)n, sizeof(double), cmp_double);
    return (bench_stat){samples[n / 2], samples[n / 10], samples[(9 * n) / 10], samples[0]};
}

fb_model* bench_build_model(int k, fb_error* err) {
    return k == 0 ? scene_humanoid(err) : scene_bender_tree(3 + k, err);
}

/* The states the calls cycle through: q, qd, and a qdd for RNEA. */
typedef struct bench_states {
    double* q;   /* (BENCH_NSTATE x nq) */
    double* qd;  /* (BENCH_NSTATE x nv) */
    double* qdd; /* (BENCH_NSTATE x nv) */
} bench_states;

/* Times `calls` calls of algorithm a, cycling states from *next; returns seconds per call. */
static double time_batch(const fb_model* m, fb_data* d, const bench_states* st, bench_algo a,
                         int calls, int* next, double* tau_out) {
    const size_t qbytes = (size_t)m->nq * sizeof(double), vbytes = (size_t)m->nv * sizeof(double);
    const double t0 = bench_now_s();
    for (int c = 0; c < calls; c++) {
        const int s = (*next + c) % BENCH_NSTATE;
        memcpy(d->q, st->q + (size_t)s * (size_t)m->nq, qbytes);
        memcpy(d->qd, st->qd + (size_t)s * (size_t)m->nv, vbytes);
        switch (a) {
        case BENCH_ABA:
            (void)fb_aba(m, d, NULL);
            break;
        case BENCH_RNEA:
            fb_rnea(m, d, st->qdd + (size_t)s * (size_t)m->nv, tau_out);
            break;
        case BENCH_CRBA:
        case BENCH_NALGO:
            fb_crba(m, d);
            break;
        }
    }
    const double t = (bench_now_s() - t0) / calls;
    *next = (*next + calls) % BENCH_NSTATE;
    return t;
}

static int run_model(const bench_options* opt, int k, void* out, fb_error* err) {
    bench_result* res = out;
    fb_model* m = bench_build_model(k, err);
    fb_data* d = m ? fb_data_create(m, NULL, err) : NULL;
    const int nb = opt->calls / opt->batch;
    const size_t nsamples = (size_t)opt->rounds * (size_t)nb;
    const size_t nq = m ? (size_t)m->nq : 0, nv = m ? (size_t)m->nv : 0;
    bench_states st = {malloc(BENCH_NSTATE * nq * sizeof(double) + 1),
                       malloc(BENCH_NSTATE * nv * sizeof(double) + 1),
                       malloc(BENCH_NSTATE * nv * sizeof(double) + 1)};
    double* samples = malloc(BENCH_NALGO * nsamples * sizeof(double));
    double* tau = malloc(nv * sizeof(double) + 1);
    int rc = -1;
    if (!m || !d || !st.q || !st.qd || !st.qdd || !samples || !tau) {
        if (m && d && err) {
            err->code = FB_ENOMEM;
            strcpy(err->msg, "bench: out of memory");
        }
        goto done;
    }
    /* the states of BENCH_MODELS.md, with random accelerations for RNEA */
    scene_rng r = scene_rng_make(BENCH_SEED + (uint64_t)k);
    for (int s = 0; s < BENCH_NSTATE; s++) {
        scene_bench_state(m, d, &r, k == 0);
        memcpy(st.q + (size_t)s * nq, d->q, nq * sizeof(double));
        memcpy(st.qd + (size_t)s * nv, d->qd, nv * sizeof(double));
        for (size_t j = 0; j < nv; j++) {
            st.qdd[(size_t)s * nv + j] = scene_rng_uniform(&r, -1.0, 1.0);
        }
    }
    /* one warm-up round, then measured rounds; algorithms interleaved batch by batch */
    int next = 0;
    for (int round = -1; round < opt->rounds; round++) {
        if (!opt->quiet) {
            fprintf(stderr, "\rbench: %-8s round %d/%d", MODEL_NAMES[k], round + 1, opt->rounds);
            fflush(stderr);
        }
        for (int b = 0; b < nb; b++) {
            for (int a = 0; a < BENCH_NALGO; a++) {
                const double t = time_batch(m, d, &st, (bench_algo)a, opt->batch, &next, tau);
                if (round >= 0) {
                    samples[(size_t)a * nsamples + (size_t)round * (size_t)nb + (size_t)b] =
                        t * 1e6;
                }
            }
        }
    }
    if (!opt->quiet) {
        fprintf(stderr, "\r%40s\r", "");
    }
    res->model = k;
    res->bodies = m->nbody - 1;
    res->nv = m->nv;
    for (int a = 0; a < BENCH_NALGO; a++) {
        res->t[a] = bench_stats(samples + (size_t)a * nsamples, (int)nsamples);
    }
    rc = 0;
done:
    free(st.q);
    free(st.qd);
    free(st.qdd);
    free(samples);
    free(tau);
    fb_data_destroy(d);
    fb_model_destroy(m);
    return rc;
}

int bench_each_model(const bench_options* opt, bench_model_fn run, void* out, size_t stride,
                     fb_error* err) {
    int n = 0;
    for (int k = 0; k < BENCH_NMODEL; k++) {
        if (!(opt->models & (1u << k))) {
            continue;
        }
        if (run(opt, k, (char*)out + (size_t)n * stride, err) != 0) {
            return -1;
        }
        n++;
    }
    return n;
}

int bench_dynamics_run(const bench_options* opt, bench_result* out, fb_error* err) {
    return bench_each_model(opt, run_model, out, sizeof *out, err);
}
