/* `featherbone bench constraints`: the constraint pipeline on the humanoid standing on its
 * feet: ABA, K by test forces, PGS, apply; K's cost per column against a full ABA call
 * (Kokkevis reports about 3x). */
#ifndef FB_BENCH_CONSTRAINTS_H
#define FB_BENCH_CONSTRAINTS_H

#include "bench_dynamics.h"

typedef enum { BC_ABA, BC_BUILD, BC_SOLVE, BC_APPLY, BC_NSTAGE } bench_cstage;

typedef struct bench_cresult {
    int rows;
    int contacts;
    int iterations; /* PGS sweeps of the last solve */
    double residual;
    bench_stat t[BC_NSTAGE];
} bench_cresult;

const char* bench_cstage_name(bench_cstage s);

/* Runs opt->rounds x opt->calls steps; 0 or -1 with err. */
int bench_constraints_run(const bench_options* opt, bench_cresult* out, fb_error* err);

#endif /* FB_BENCH_CONSTRAINTS_H */
