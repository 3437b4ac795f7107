/* `featherbone bench dynamics`: per-call timing of ABA, RNEA and CRBA on the models of
 * BENCH_MODELS.md. The algorithms are interleaved batch by batch inside each round so that the
 * machine's speed changes fall on all of them alike. */
#ifndef FB_BENCH_DYNAMICS_H
#define FB_BENCH_DYNAMICS_H

#include <stdbool.h>

#include "featherbone/featherbone.h"

typedef enum bench_algo { BENCH_ABA, BENCH_RNEA, BENCH_CRBA, BENCH_NALGO } bench_algo;

typedef struct bench_options {
    int rounds;      /* measured rounds after one warm-up round (default 5) */
    int calls;       /* calls per algorithm per round (default 10000) */
    int batch;       /* calls timed together; one sample per batch (default 100) */
    unsigned models; /* bit k set: run model k of bench_model_name (default all) */
    bool quiet;      /* no progress on stderr */
} bench_options;

/* Per-call time statistics (microseconds) over all batch samples of all rounds. */
typedef struct bench_stat {
    double median, p10, p90, min;
} bench_stat;

typedef struct bench_result {
    int model;   /* index into bench_model_name */
    int bodies;  /* moving bodies */
    int nv;      /* degrees of freedom */
    bench_stat t[BENCH_NALGO];
} bench_result;

/* Number of benchmark models and their names: humanoid, tree31, tree63, tree127, tree255. */
#define BENCH_NMODEL 5
const char* bench_model_name(int k);
const char* bench_algo_name(bench_algo a);

/* Target per-call time (us) from the issue for (model, algo), or 0 when there is none. */
double bench_target_us(int model, bench_algo a);

bench_options bench_default_options(void);

/* Shared by the benchmarks: a monotonic clock (s), statistics of n samples (sorts them), and
 * the benchmark model k (0 humanoid, 1..4 Bender's trees of depth 4..7). */
double bench_now_s(void);
bench_stat bench_stats(double* samples, int n);
fb_model* bench_build_model(int k, fb_error* err);

/* Calls run(opt, k, out + n * stride) for each model k selected in opt->models (n counts the
 * calls); returns n, or -1 when a run fails. */
typedef int (*bench_model_fn)(const bench_options* opt, int k, void* out, fb_error* err);
int bench_each_model(const bench_options* opt, bench_model_fn run, void* out, size_t stride,
                     fb_error* err);

/* Runs the benchmark; writes one result per selected model into out (BENCH_NMODEL entries).
 * Returns the number of results, or -1 with err filled. */
int bench_dynamics_run(const bench_options* opt, bench_result* out, fb_error* err);

#endif /* FB_BENCH_DYNAMICS_H */
