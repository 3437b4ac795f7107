/* `featherbone bench constraints`: the constraint pipeline on the humanoid standing on its
 * feet: ABA, K by test forces, PGS, apply; K's cost per column against a full ABA call
 * (Kokkevis reports about 3x); K by backward passes alone. */
#ifndef FB_BENCH_CONSTRAINTS_H
#define FB_BENCH_CONSTRAINTS_H

#include "bench_dynamics.h"

/* BC_BUILD: K by test forces (FB_K_TEST_FORCES); BC_BUILD_BK: the same K by backward passes
 * alone (FB_K_BACKWARD, what the world step uses), timed beside it and not part of the total */
typedef enum { BC_ABA, BC_BUILD, BC_SOLVE, BC_APPLY, BC_BUILD_BK, BC_NSTAGE } bench_cstage;

/* Parts of a full world step (fb_world_stats timers). */
typedef enum { BS_TOTAL, BS_DYNAMICS, BS_COLLISION, BS_BUILD, BS_SOLVE, BS_NPART } bench_spart;

typedef struct bench_cresult {
    int rows;
    int contacts;
    int iterations; /* PGS sweeps of the last solve */
    double residual;
    bench_stat t[BC_NSTAGE];
    /* the full step of the standing humanoid (stand.h): ground contacts found by the narrow
     * phase, PD torques, impacts, PGS, integration */
    bench_stat step[BS_NPART];
    double step_contacts; /* mean touching contacts per step */
    double step_iterations; /* mean PGS sweeps per step */
    long halvings;
} bench_cresult;

const char* bench_spart_name(bench_spart p);

const char* bench_cstage_name(bench_cstage s);

/* Runs opt->rounds x opt->calls steps; 0 or -1 with err. */
int bench_constraints_run(const bench_options* opt, bench_cresult* out, fb_error* err);

#endif /* FB_BENCH_CONSTRAINTS_H */
