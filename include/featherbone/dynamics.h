/* featherbone: kinematics, forward dynamics (ABA), inverse dynamics (RNEA), joint-space
 * inertia (CRBA), Jacobians, configuration-space integration, energy and momentum.
 *
 * All functions take the model const and write only into fb_data (or an output array the
 * caller owns). None allocates. Gravity is applied as a fictitious base acceleration -g
 * [RBDA §5.3], so the accelerations in d->a are offset by it (see fb_data.a). */
#ifndef FEATHERBONE_DYNAMICS_H
#define FEATHERBONE_DYNAMICS_H

#include "base.h"
#include "data.h"
#include "model.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration space ------------------------------------------------------------- */

/* Writes the neutral configuration (zero angles and displacements, identity quaternions). */
FB_API void fb_q_neutral(const fb_model* m, double* q);

/* q_out = q (+) v dt on the configuration manifold: scalar joints add, quaternions are
 * multiplied on the right by exp(w dt / 2) (w in child coordinates), floating positions move by
 * R v dt with R the rotation at the end of the step (the frame v is in after a step of
 * fb_velocity_step). Quaternions are renormalised. q_out may alias q. */
FB_API void fb_integrate(const fb_model* m, const double* q, const double* v, double dt,
                         double* q_out);

/* The inverse of fb_integrate with dt = 1: v such that fb_integrate(q0, v, 1) = q1. Rotation
 * parts use the quaternion logarithm of q0^-1 q1 (shortest arc). */
FB_API void fb_difference(const fb_model* m, const double* q0, const double* q1, double* v);

/* The velocity step of the simulator's semi-implicit Euler, qd <- qd + dt qdd, for every joint
 * but a floating one, whose linear velocity (body coordinates) is stepped in the world: its
 * origin's classical acceleration R (a + w x v) is applied there and the result expressed in
 * the body's frame after the step, turned by exp(dt w') with w' the new angular velocity. An
 * explicit step of the body-frame form (v + dt (a - w x v) ... the velocity product w x v
 * taken at the step's start) lengthens v by (1 + (w dt)^2)^1/2 a step: a ball rolling at
 * 20 rad/s on the ground sped up from 2 m/s by itself, its kinetic energy 5x in 2 s at 480 Hz.
 * Force-free, this step keeps the world velocity exactly. */
FB_API void fb_velocity_step(const fb_model* m, double* qd, const double* qdd, double dt);

/* Its inverse: the qdd with which fb_velocity_step takes v0 to v1 in dt. */
FB_API void fb_velocity_rate(const fb_model* m, const double* v0, const double* v1, double dt,
                             double* qdd);

/* Renormalises every quaternion in q; FB_ENUMERIC if one has zero or non-finite norm. */
FB_API fb_status fb_normalize_q(const fb_model* m, double* q, fb_error* err);

/* ---- kinematics ------------------------------------------------------------------------ */

/* Forward kinematics and velocities from d->q, d->qd: XJ, X_up, X_0, vJ, v, c. */
FB_API void fb_kinematics(const fb_model* m, fb_data* d);

/* Position kinematics only: XJ, X_up, X_0. */
FB_API void fb_kinematics_pos(const fb_model* m, fb_data* d);

/* World position of point p (body coordinates) on body i. Needs FB_STAGE_POS. */
FB_API fb_v3 fb_point_pos(const fb_model* m, const fb_data* d, int i, fb_v3 p);

/* World velocity of point p on body i. Needs FB_STAGE_VEL. */
FB_API fb_v3 fb_point_vel(const fb_model* m, const fb_data* d, int i, fb_v3 p);

/* World (classical) acceleration of point p on body i, gravity not included.
 * Needs FB_STAGE_ACC (after fb_aba or fb_rnea). */
FB_API fb_v3 fb_point_acc(const fb_model* m, const fb_data* d, int i, fb_v3 p);

/* Orientation of body i: R maps body coordinates to world coordinates. Needs FB_STAGE_POS. */
FB_API fb_m3 fb_body_rot(const fb_model* m, const fb_data* d, int i);

/* Point Jacobian (3 x nv, row-major, world coordinates): point velocity = J qd.
 * Needs FB_STAGE_POS. */
FB_API void fb_jac_point(const fb_model* m, const fb_data* d, int i, fb_v3 p, double* J);

/* Body Jacobian (6 x nv, row-major, rows [w; v] in body-i coordinates): v_i = J qd.
 * Needs FB_STAGE_POS. */
FB_API void fb_jac_body(const fb_model* m, const fb_data* d, int i, double* J);

/* ---- forward dynamics: the articulated-body algorithm [RBDA T7.1] -------------------- */

/* Phase 1, state only (q, qd): kinematics, then articulated inertias I^A, U = I^A S,
 * D^-1 = (S^T U)^-1 and the velocity-product bias forces, leaves to root. Reused by every
 * phase-2 call for the same state (and by the constraint solver's test forces).
 * FB_ENUMERIC if a D block is not positive definite (message names the body). */
FB_API fb_status fb_aba_phase1(const fb_model* m, fb_data* d, fb_error* err);

/* Phase 1 when the positions are current: X_up and X_0 of the current d->q (fb_kinematics_pos
 * or phase 1 ran at this q, and FB_STAGE_POS is set) are used as they are, not made again by
 * jcalc. The result is bit-identical to fb_aba_phase1's. Errors as fb_aba_phase1. */
FB_API fb_status fb_aba_phase1_at_positions(const fb_model* m, fb_data* d, fb_error* err);

/* Phase 1 again after only the velocities d->qd changed (an impulse): the velocity terms
 * (v, c, the velocity-product bias forces) anew, the articulated inertias, U and D^-1 kept.
 * The caller guarantees that fb_aba_phase1 ran at the same d->q and d->damping_dt and that
 * nothing since changed them (the stage bits may have been cleared: FB_STAGE_POS is needed);
 * the result is then bit-identical to fb_aba_phase1's. Sets FB_STAGE_VEL | FB_STAGE_ABA1. */
FB_API void fb_aba_phase1_velocities(const fb_model* m, fb_data* d);

/* Phase 2, forces (d->tau, d->f_ext) -> d->qdd and d->a. Needs FB_STAGE_ABA1. */
FB_API void fb_aba_phase2(const fb_model* m, fb_data* d);

/* Both phases: d->qdd from d->q, d->qd, d->tau, d->f_ext. */
FB_API fb_status fb_aba(const fb_model* m, fb_data* d, fb_error* err);

/* ---- inverse dynamics [RBDA T5.1] and the mass matrix [RBDA T6.2] ------------------- */

/* tau = M(q) qdd + C(q, qd) with d->f_ext applied (qdd NULL means zero); C includes the joints'
 * passive damping B qd, as ABA does (explicitly, with d->damping_dt = 0). Computes kinematics
 * and writes d->a, d->f. tau (nv) must not alias d's arrays. */
FB_API void fb_rnea(const fb_model* m, fb_data* d, const double* qdd, double* tau);

/* C(q, qd) = RNEA(q, qd, 0): gravity, velocity products and external forces. */
FB_API void fb_bias(const fb_model* m, fb_data* d, double* C);

/* Joint-space inertia M(q) into d->M (both triangles). Computes position kinematics. */
FB_API void fb_crba(const fb_model* m, fb_data* d);

/* ---- quantities for checks and reports ------------------------------------------------ */

/* Kinetic energy sum(v^T I v)/2 and potential energy -sum(m g . c_w) (J), gravity from the
 * model. Needs FB_STAGE_VEL. */
FB_API void fb_energy(const fb_model* m, const fb_data* d, double* kinetic, double* potential);

/* Total spatial momentum of all bodies in world coordinates, about the world origin.
 * Needs FB_STAGE_VEL. */
FB_API fb_fv fb_momentum(const fb_model* m, const fb_data* d);

/* World position of the whole-body centre of mass. Needs FB_STAGE_POS. */
FB_API fb_v3 fb_com(const fb_model* m, const fb_data* d);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_DYNAMICS_H */
