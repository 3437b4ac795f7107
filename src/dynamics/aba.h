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

/* Three spatial forces at once as two 3x3 blocks: entry [k][c] is component k of force c
 * (n the moment, f the force). */
typedef struct fb_fv3 {
    double n[3][3], f[3][3];
} fb_fv3;

/* The backward pass of three test forces on one body (a contact's normal and friction rows)
 * from it to the root, in one walk: column c of pA is the change of body's bias force by input
 * c (-X_0 f_c), and at every body on the path the step of fb_aba_response_up with no test
 * torques, lane by lane with the same arithmetic, so each input gets the bits of its own
 * single-input pass. Input c's du and y = D^-1 du go to du + c stride and y + c stride
 * (indexed by dof; only the path's dofs are written); the bodies, from `body` up, to path.
 * Returns their count. Runs the AVX2 compilation where fb_isa_active() says so (the same
 * bits). Needs FB_STAGE_ABA1. */
int fb_aba_contact_path(const fb_model* m, const fb_data* d, int body, const fb_fv3* pA,
                        double* du, double* y, size_t stride, int* path);

#endif /* FB_DYNAMICS_ABA_H */
