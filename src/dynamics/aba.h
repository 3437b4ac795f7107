/* The per-body steps of ABA phase 2 [RBDA T7.1], shared with the test-force responses
 * (src/constraint/accel_deltas.c) so both run the same kernels. Both need FB_STAGE_ABA1. */
#ifndef FB_DYNAMICS_ABA_H
#define FB_DYNAMICS_ABA_H

#include "featherbone/data.h"

/* The bias force body i hands to its parent (in body-i coordinates):
 * p^a = p^A + I^A c + U D^-1 (u - U^T c), with u body i's slice (n_i values) and c its
 * velocity-product acceleration (NULL = zero, as for a response to a test force). */
fb_fv fb_aba_bias_up(const fb_model* m, const fb_data* d, int i, fb_fv pA, const double* u,
                     const fb_mv* c);

/* Body i's joint accelerations qdd = D^-1 (u - U^T a1) into qdd (n_i values), given a1, the
 * parent's acceleration carried into body i (plus c); returns a1 + S qdd. */
fb_mv fb_aba_accel_down(const fb_model* m, const fb_data* d, int i, fb_mv a1, const double* u,
                        double* qdd);

/* The backward step of a response to test inputs (every velocity and gravity term zero) for
 * body i, given pA, the change of its bias force (its own test force and every child's share
 * added). du (n_i values) holds the test torques on its dofs on entry and du = tau - S^T pA on
 * return; y (n_i values) gets D^-1 du. Returns the change handed to the parent, in the
 * parent's coordinates: X_up^T (pA + U D^-1 du), or zero when the parent is the world. With
 * the forward step (fb_aba_accel_down) this is M^-1 = Gamma^T D^-1 Gamma, Gamma the backward
 * map from generalised forces to du, so for two inputs K_rc = sum over bodies of du_r . y_c
 * (src/constraint/k_backward.c). */
fb_fv fb_aba_response_up(const fb_model* m, const fb_data* d, int i, fb_fv pA, double* du,
                         double* y);

#endif /* FB_DYNAMICS_ABA_H */
