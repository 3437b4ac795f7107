/* `featherbone bench simulate`: the job users come for, timed end to end (issue 7, "Speed";
 * issues 17 and 18 for the free root).
 *
 * The character of the CMU walk (data/131_01.bvh, bundled character rules) tracks the whole
 * clip at 240 Hz with the accel controller, a root mode (kinematic by default; assisted or
 * free) and the gains of `gains init`, with ground contact, while two balls (0.45 kg, r 0.11
 * m, 10 m/s) hit it: the left forearm from the left at 1.5 s and the chest from the front at
 * 3.0 s (none with hits off). It is `featherbone simulate`'s own loop (fb_sim,
 * include/featherbone/sim.h): each run makes a new fb_sim (untimed: the fit of the clip and
 * the world) and calls fb_sim_step to the end of the clip; the wall time of that loop (world
 * steps, ball launches, impulse accounting, frames recorded at the clip's rate) gives the
 * real-time factor, and the world's own timers split it into dynamics, K build, PGS and
 * collision. With a root other than kinematic, runs of the kinematic root are interleaved with
 * the measured ones (A, B, A, B ...) as a reference against the machine's speed changes, and
 * each run's steps are split by phase: standing, fallen (awake) and asleep. The measured root
 * may track a sampling plan's reference (bench_sim_options.plan; bench/plans/131_01_free.json
 * keeps the free root standing with the two balls): issue 18's walk, where the grounded
 * reference falls at 1.43 s. */
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

/* The phases of a run a step belongs to (a free or assisted root). */
typedef enum {
    BSIM_STANDING, /* before the tracker found a fall (fb_tracker_fall) */
    BSIM_FALLEN,   /* fallen and awake */
    BSIM_ASLEEP,   /* fallen and asleep at the end of the step (fb_world_asleep) */
    BSIM_NPHASE
} bench_sim_phase;

const char* bench_sim_phase_name(bench_sim_phase p);

typedef struct bench_sim_options {
    fb_root_mode root; /* default FB_ROOT_KINEMATIC */
    bool hits;         /* the two balls; default true */
    const char* plan;  /* a sampling plan (simulate --sample-save) the measured root tracks, as
                          `simulate --sample-load` does: a free root that stands; NULL (default)
                          = the grounded reference. Not with the kinematic root. */
} bench_sim_options;

bench_sim_options bench_sim_default_options(void);

typedef struct bench_sim_result {
    const char* clip;
    fb_root_mode root;
    bool hits;
    int nbody, nv;
    int steps;          /* world steps per run */
    double sim_seconds; /* simulated time per run */
    int runs;
    double rtf[BENCH_SIM_MAX_RUNS];  /* real-time factor of each run */
    double wall[BENCH_SIM_MAX_RUNS]; /* s of each run's stepping loop */
    bench_stat rtf_stat;             /* median, p10, p90, min over the runs */
    double part[BSIM_NPART];          /* us per step, of the median run (by wall time) */
    double rest;                      /* us per step outside fb_world_step (fb_sim's own work) */
    /* the phases (median run): steps in each and their mean wall time per step (us) */
    int phase_steps[BSIM_NPHASE];
    double phase_us[BSIM_NPHASE];
    double fall_time;    /* s, NAN when it did not fall */
    int fall_cause;      /* fb_fall_cause */
    /* what the simulation did (the same in every run: it is deterministic) */
    double contacts, rows, sweeps; /* per substep, mean over the steps */
    long substeps, halvings, impacts;
    int nball;           /* balls in the scene (2, or 0 with hits off) */
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
 * bundled walk. With so->root kinematic, out[0] only; otherwise out[0] is so->root's and
 * out[1] the kinematic root's, their runs interleaved (both with so->hits). 0, or -1 with
 * err. */
int bench_simulate_run(const bench_options* opt, const bench_sim_options* so, const char* clip,
                       bench_sim_result out[2], fb_error* err);

#endif /* FB_BENCH_SIMULATE_H */
