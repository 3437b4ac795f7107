/* DART 6.12 (Debian libdart-dev) as a benchmark peer and a cross-check, behind a C interface
 * (bench/peer_dart.cpp): the same fb_model built as a dart::dynamics::Skeleton, and the
 * standing humanoid of stand.h in a dart::simulation::World.
 *
 * State mapping (checked by tests/test_dart.c). DART's joints keep a frame T_ParentBodyToJoint
 * (ours: X_tree, the rotation E^T and the origin r) and move the child relative to it:
 * - ball: 3 positions, the rotation vector of our quaternion (log map); velocities and
 *   accelerations the child-frame angular ones, as ours;
 * - free: 6 positions [rotation vector; translation] (ours [translation; quaternion]);
 *   velocities [w; v] and accelerations [dw; dv] body-frame spatial, as ours;
 * - revolute and prismatic: the angle or displacement along the same axis; fixed: a weld.
 * The dofs are listed in our order (each body's joint gets its own slice of DART's
 * generalised vectors; the index map is made from DART's, not assumed). */
#ifndef FB_BENCH_PEER_DART_H
#define FB_BENCH_PEER_DART_H

#include "featherbone/featherbone.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "stand.h" /* C declarations, without their own extern "C" */

typedef struct dart_peer dart_peer;

/* The Skeleton of m (bodies only, no shapes), with m's gravity; a floating joint anywhere is
 * a FreeJoint. NULL with err filled on a DART exception. */
dart_peer* dart_peer_create(const fb_model* m, fb_error* err);
void dart_peer_destroy(dart_peer* p);

/* Our q, qd (and a per-dof vector x: accelerations or forces, same layout as qd) in DART's
 * generalised coordinates: pos (nv), vel (nv), xd (nv); any output may be NULL. */
void dart_peer_to_dart(const dart_peer* p, const double* q, const double* qd, const double* x,
                       double* pos, double* vel, double* xd);

/* Sets DART's positions and velocities (DART's layout, as dart_peer_to_dart writes them). */
void dart_peer_set_state(dart_peer* p, const double* pos, const double* vel);
/* Sets DART's joint forces (DART's layout); they stay until set again. */
void dart_peer_set_forces(dart_peer* p, const double* tau);

/* Skeleton::computeForwardDynamics (gravity, the forces set, no contacts). */
void dart_peer_forward(dart_peer* p);
/* Skeleton::computeInverseDynamics for accelerations acc (DART's layout), no external,
 * damping or spring forces. */
void dart_peer_inverse(dart_peer* p, const double* acc);

/* The accelerations of the last forward call and the forces of the last inverse call, in our
 * layout (nv). */
void dart_peer_qdd(const dart_peer* p, double* qdd);
void dart_peer_tau(const dart_peer* p, double* tau);

/* The standing humanoid of stand.h in a DART World: the humanoid m (with its shapes as
 * collision shapes; capsules and spheres) and a ground box whose top face is the plane y = 0,
 * friction 1 on both (DART's default, our world's default), dt STAND_DT, gravity m's.
 * Collision by DART's ODE detector (capsule-plane contacts as featherbone's: two where a
 * capsule lies flat; FCL's primitive capsule gives one point); the contact LCP by DART's
 * BoxedLcpConstraintSolver with its default Dantzig solver (PGS as the fallback), or with
 * `pgs` by its PgsBoxedLcpSolver alone. ctl must outlive it. */
typedef struct dart_stand dart_stand;
dart_stand* dart_stand_create(const fb_model* m, const stand_ctl* ctl, bool pgs, fb_error* err);
void dart_stand_destroy(dart_stand* s);
/* Back to ctl's settled state (q0, qd0). */
void dart_stand_reset(dart_stand* s);
/* The PD torques of stand.h from DART's state, then World::step. */
void dart_stand_step(dart_stand* s);
/* Contacts of the last step, and the pelvis height (m). */
int dart_stand_contacts(const dart_stand* s);
double dart_stand_pelvis_y(const dart_stand* s);

/* "6.12.1"; NULL in a build without DART (bench/peer_dart_none.c, where every create returns
 * NULL and the rest does nothing). */
const char* dart_peer_version(void);

#ifdef __cplusplus
}
#endif

#endif /* FB_BENCH_PEER_DART_H */
