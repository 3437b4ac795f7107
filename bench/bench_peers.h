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

/* Runs the comparison on the models selected in opt; returns the number of results or -1. */
int bench_peers_run(const bench_options* opt, peer_result* out, fb_error* err);

#endif /* FB_BENCH_PEERS_H */
