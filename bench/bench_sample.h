/* `featherbone bench sample`: the sampling search for a free root's reference (issue 18,
 * docs/CONTROL.md §11) timed two ways on the same problem, interleaved round by round:
 * going on from the kept sequences' simulations saved before each window (fb_sim_copy; what
 * `simulate --sample` runs) and replaying every candidate from the start (fb_sample_opts.replay,
 * the search before stop 32). The problem: the character of the CMU walk (data/131_01.bvh,
 * bundled rules, the gains of `gains init` with a free root) over the clip's first `seconds`,
 * `samples` candidates a window, a quarter of them kept (at least one), the default window
 * (0.1 s) and look-ahead (0.8 s), on one thread. Both searches must find the same plan, bit for
 * bit; the benchmark says whether they did. */
#ifndef FB_BENCH_SAMPLE_H
#define FB_BENCH_SAMPLE_H

#include "bench_dynamics.h"

typedef struct bench_sample_options {
    double seconds; /* of the clip searched (default 2) */
    int samples;    /* candidates a window (default 8) */
} bench_sample_options;

bench_sample_options bench_sample_default_options(void);

/* Which search. */
typedef enum { BSAMPLE_SAVED = 0, BSAMPLE_REPLAYED = 1 } bench_sample_mode;

typedef struct bench_sample_result {
    double seconds; /* of the clip searched */
    int samples, keep, windows, dofs;
    long simulations;  /* per search */
    int backtracks;    /* per search */
    double fall_after; /* s, NAN: the sampled reference's run stands */
    int rounds;
    bench_stat wall[2]; /* [mode]: s per search */
    bench_stat ratio;   /* replayed / saved, round by round */
    bool same_plan;     /* every round's two plans, bit for bit */
} bench_sample_result;

/* Runs opt->rounds rounds (saved then replayed, then replayed then saved, alternating); no
 * warm-up round (each search takes seconds). 0, or -1 with err. */
int bench_sample_run(const bench_options* opt, const bench_sample_options* so,
                     bench_sample_result* out, fb_error* err);

#endif /* FB_BENCH_SAMPLE_H */
