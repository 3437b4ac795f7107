/* The per-body steps of ABA phase 2, shared with the test-force responses
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

#endif /* FB_DYNAMICS_ABA_H */
