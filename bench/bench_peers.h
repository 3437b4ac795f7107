/* `featherbone bench --peers`: featherbone against MuJoCo (mj_forward, mj_inverse), Bullet
 * (btMultiBody's ABA) and DART (Skeleton::computeForwardDynamics, computeInverseDynamics; when
 * built with it) on the same models, exported through fb_model_write_mjcf for MuJoCo and built
 * from the fb_model for the others, calls interleaved batch by batch in one process so machine
 * drift cancels out of the ratios. */
#ifndef FB_BENCH_PEERS_H
#define FB_BENCH_PEERS_H

#include "bench_dynamics.h"

typedef enum peer_call {
    PEER_FB_ABA,
    PEER_MJ_FORWARD,
    PEER_BT_ABA,
    PEER_DT_FORWARD,
    PEER_FB_RNEA,
    PEER_MJ_INVERSE,
    PEER_DT_INVERSE,
    PEER_NCALL
} peer_call;

typedef struct peer_result {
    int model;
    int nv;
    bool have_bullet, have_dart;
    bench_stat t[PEER_NCALL];
} peer_result;

const char* peer_call_name(peer_call c);

/* The contact step: featherbone's fb_world_step against MuJoCo's mj_step with its PGS solver
 * and DART's World::step with its default boxed-LCP solver (Dantzig, PGS as its fallback) and
 * with its PGS solver, on the standing humanoid of stand.h (same model, same PD torques, same
 * dt), steps interleaved batch by batch. */
typedef enum peer_stepper {
    STEP_FB,
    STEP_MJ_PGS,
    STEP_DT_DANTZIG,
    STEP_DT_PGS,
    STEP_N
} peer_stepper;

const char* peer_stepper_name(peer_stepper s);

typedef struct peer_step_result {
    bool have[STEP_N];
    bench_stat t[STEP_N];   /* us per step */
    double contacts[STEP_N]; /* mean contacts per step */
    double pelvis_move[STEP_N]; /* largest pelvis height change from the settled state (m):
                                   every contestant really stands */
} peer_step_result;

int bench_peers_step(const bench_options* opt, peer_step_result* out, fb_error* err);

/* Runs the comparison on the models selected in opt; returns the number of results or -1. */
int bench_peers_run(const bench_options* opt, peer_result* out, fb_error* err);

#endif /* FB_BENCH_PEERS_H */
