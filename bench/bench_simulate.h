/* `featherbone bench simulate`: the job users come for, timed end to end (issue 7, "Speed").
 *
 * The character of the CMU walk (data/131_01.bvh, bundled character rules) tracks the whole
 * clip at 240 Hz with the accel controller, a kinematic root and the gains of `gains init`,
 * with ground contact, while two balls (0.45 kg, r 0.11 m, 10 m/s) hit it: the left forearm
 * from the left at 1.5 s and the chest from the front at 3.0 s. It is `featherbone simulate`'s
 * own loop (fb_sim, include/featherbone/sim.h): each run makes a new fb_sim (untimed: the fit
 * of the clip and the world) and calls fb_sim_step to the end of the clip; the wall time of
 * that loop (world steps, ball launches, impulse accounting, frames recorded at the clip's
 * rate) gives the real-time factor, and the world's own timers split it into dynamics, K
 * build, PGS and collision. */
#ifndef FB_BENCH_SIMULATE_H
#define FB_BENCH_SIMULATE_H

#include "bench_dynamics.h"

/* Most runs one benchmark keeps. */
#define BENCH_SIM_MAX_RUNS 64

/* Parts of a step (per step, microseconds), in the order printed. */
typedef enum {
    BSIM_TOTAL,     /* the whole fb_world_step */
    BSIM_DYNAMICS,  /* ABA (twice after an impact) and integration */
    BSIM_BUILD,     /* rows' K and a0 */
    BSIM_SOLVE,     /* impacts, PGS, apply */
    BSIM_COLLISION, /* narrow phase after each substep */
    BSIM_NPART
} bench_sim_part;

const char* bench_sim_part_name(bench_sim_part p);

typedef struct bench_sim_result {
    const char* clip;
    int nbody, nv;
    int steps;          /* world steps per run */
    double sim_seconds; /* simulated time per run */
    int runs;
    double rtf[BENCH_SIM_MAX_RUNS];  /* real-time factor of each run */
    double wall[BENCH_SIM_MAX_RUNS]; /* s of each run's stepping loop */
    bench_stat rtf_stat;             /* median, p10, p90, min over the runs */
    double part[BSIM_NPART];          /* us per step, of the median run (by wall time) */
    double rest;                      /* us per step outside fb_world_step (fb_sim's own work) */
    /* what the simulation did (the same in every run: it is deterministic) */
    double contacts, rows, sweeps; /* per substep, mean over the steps */
    long substeps, halvings, impacts;
    int touched[2];      /* whether each ball touched the character */
    double mpjpe_mean;   /* m, over the clip frames */
    double mpjpe_max;
    double peak_err[2];  /* m, largest error of each struck body after its hit */
    unsigned long long q_hash; /* FNV-1a of the character's final q, to compare builds */
} bench_sim_result;

/* Loads the clip at clip_path and builds its character with the bundled rules
 * (data/character_rules.json); 0, or -1 with err (*clip and *ch then NULL). */
int bench_load_character(const char* clip_path, fb_clip** clip, fb_character** ch,
                         fb_error* err);

/* Runs opt->rounds runs (at most BENCH_SIM_MAX_RUNS) after one warm-up run; clip NULL = the
 * bundled walk. 0, or -1 with err. */
int bench_simulate_run(const bench_options* opt, const char* clip, bench_sim_result* out,
                       fb_error* err);

#endif /* FB_BENCH_SIMULATE_H */
