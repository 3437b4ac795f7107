/* Bullet's btMultiBody (double precision) as a benchmark peer, behind a C interface: the
 * only C++ in the project (bench/peer_bullet.cpp). */
#ifndef FB_BENCH_PEER_BULLET_H
#define FB_BENCH_PEER_BULLET_H

#include "featherbone/featherbone.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bullet_peer bullet_peer;

/* Builds the btMultiBody of m: a floating root becomes a moving base, otherwise the base is
 * fixed at the world origin; ball, hinge, slide and fixed joints map to Bullet's. Bodies must
 * have their principal axes along the body axes (true of the benchmark models). NULL with
 * err filled for a model Bullet cannot represent. */
bullet_peer* bullet_peer_create(const fb_model* m, fb_error* err);
void bullet_peer_destroy(bullet_peer* p);

/* Sets the joint positions and velocities from our q, qd (same meaning, Bullet's layouts). */
void bullet_peer_set_state(bullet_peer* p, const double* q, const double* qd);

/* Gravity forces, then forward dynamics by Bullet's articulated-body algorithm. */
void bullet_peer_aba(bullet_peer* p);

#ifdef __cplusplus
}
#endif

#endif /* FB_BENCH_PEER_BULLET_H */
