/* `featherbone bench --peers`: featherbone against MuJoCo (mj_forward, mj_inverse) and Bullet
 * (btMultiBody's ABA) on the same models, exported through fb_model_write_mjcf, calls
 * interleaved batch by batch in one process so machine drift cancels out of the ratios. */
#ifndef FB_BENCH_PEERS_H
#define FB_BENCH_PEERS_H

#include "bench_dynamics.h"

typedef enum peer_call {
    PEER_FB_ABA,
    PEER_MJ_FORWARD,
    PEER_BT_ABA,
    PEER_FB_RNEA,
    PEER_MJ_INVERSE,
    PEER_NCALL
} peer_call;

typedef struct peer_result {
    int model;
    int nv;
    bool have_bullet;
    bench_stat t[PEER_NCALL];
} peer_result;

const char* peer_call_name(peer_call c);

/* The contact step: featherbone's fb_world_step against MuJoCo's mj_step with its PGS solver,
 * on the standing humanoid of stand.h (same model through the exporter, same PD torques, same
 * dt), steps interleaved batch by batch. */
typedef struct peer_step_result {
    bench_stat fb, mj;            /* us per step */
    double fb_contacts, mj_contacts; /* mean contacts per step */
    double fb_pelvis_drop, mj_pelvis_drop; /* largest pelvis height change from the settled
                                              state (m): both really stand */
} peer_step_result;

int bench_peers_step(const bench_options* opt, peer_step_result* out, fb_error* err);

/* Runs the comparison on the models selected in opt; returns the number of results or -1. */
int bench_peers_run(const bench_options* opt, peer_result* out, fb_error* err);

#endif /* FB_BENCH_PEERS_H */
