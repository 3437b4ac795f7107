/* `featherbone bench sleep`: what sleeping saves a character that has fallen (issue 17).
 *
 * The character of the CMU walk (data/131_01.bvh, bundled character rules; its first pose laid
 * on its back and dropped from 40 cm, scene_ragdoll_lying, as test_world's ragdoll) with zero
 * torques and passive joint damping, stepped 5 s at 240 Hz by fb_world_step: once with sleeping
 * allowed (fb_world_set_sleep), once without, alternating in each round (on, off; then off, on)
 * so the machine's speed changes fall on both. Every step is timed; the steps are split at the
 * one where the character fell asleep (the same split for the run without sleep), and the
 * world's counters say what the steps did (ABA runs, rows). */
#ifndef FB_BENCH_SLEEP_H
#define FB_BENCH_SLEEP_H

#include "bench_dynamics.h"

typedef struct bench_sleep_options {
    double damping;     /* N m s/rad on every joint but the root (default 0.5, test_world's) */
    double sleep_speed; /* rad/s, m/s (default 0.1; the world's default is 0.01) */
} bench_sleep_options;

bench_sleep_options bench_sleep_default_options(void);

/* Which run and which part of it. */
typedef enum { BSLEEP_ON = 0, BSLEEP_OFF = 1 } bench_sleep_mode;
typedef enum { BSLEEP_BEFORE = 0, BSLEEP_AFTER = 1 } bench_sleep_part;

typedef struct bench_sleep_result {
    int nbody, nv;
    int steps;            /* steps per run (5 s) */
    double dt;            /* s */
    int rounds;
    double t_asleep;      /* s of simulated time when it fell asleep; -1: it did not */
    int step_asleep;      /* steps before the split (all of them when it did not sleep) */
    bench_stat step_us[2][2];  /* [run][part]: per-step wall time, all rounds pooled */
    bench_stat rtf[2];         /* [run]: real-time factor of the whole 5 s */
    double aba[2][2], rows[2][2]; /* [run][part]: ABA runs and rows per step (deterministic) */
    /* without sleep: the fastest dof at the end, and what keeps it moving */
    char fastest_joint[64];
    double fastest_speed;
} bench_sleep_result;

/* Runs one warm-up round and opt->rounds measured rounds; 0, or -1 with err. */
int bench_sleep_run(const bench_options* opt, const bench_sleep_options* so,
                    bench_sleep_result* out, fb_error* err);

#endif /* FB_BENCH_SLEEP_H */
