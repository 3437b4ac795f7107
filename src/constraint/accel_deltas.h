/* Test-force responses to many inputs at once [Kokkevis §4.3], for the constraint system (its
 * K builders src/constraint/k_*.c and fb_csys_apply in csys.c): the public single-input forms
 * are in include/featherbone/constraint.h. */
#ifndef FB_CONSTRAINT_ACCEL_DELTAS_H
#define FB_CONSTRAINT_ACCEL_DELTAS_H

#include "featherbone/data.h"

/* dqdd = M^-1 (tau + sum_k J_k^T f_k): the response of the joints to spatial forces f[k]
 * (world coordinates, about the origin) on bodies body[k] and generalised forces tau[k] on
 * dofs dof[k], all at once: one backward pass over the union of their paths to the root (a
 * body's share handed up once, with every input below it) and one forward pass. The forward
 * pass visits the bodies `visit` marks (nbody bytes, closed under parents, e.g. the union of
 * some paths to the root), or every body if NULL; dofs of bodies not visited are left as they
 * are. mark: nbody bytes of scratch. Needs FB_STAGE_ABA1. Allocation-free. */
void fb_accel_delta_sum(const fb_model* m, fb_data* d, int nforce, const int* body,
                        const fb_fv* f, int ntau, const int* dof, const double* tau,
                        const unsigned char* visit, unsigned char* mark, double* dqdd);

/* The backward pass alone of the same response: for every body on the union of the inputs'
 * paths to the root, du = Gamma (tau + sum_k J_k^T f_k) on its dofs (the change of u) and
 * y = D^-1 du, into du and y (nv each, indexed by dof; other dofs untouched); the bodies, from
 * the highest-numbered down, into path (nbody at most); returns their count. M^-1 = Gamma^T D^-1
 * Gamma, so the inputs r and c of two such calls meet in r^T M^-1 c = sum over the bodies on
 * both paths of du_r . y_c: K without a forward pass. mark: nbody bytes of scratch. Needs
 * FB_STAGE_ABA1. Allocation-free. */
int fb_accel_delta_backward(const fb_model* m, fb_data* d, int nforce, const int* body,
                            const fb_fv* f, int ntau, const int* dof, const double* tau,
                            unsigned char* mark, int* path, double* du, double* y);

/* The forward pass alone: dqdd (nv) = Gamma^T D^-1 du from the du the caller left in d->du
 * (nv, every dof), such as sum_r lambda_r du_r of rows' backward passes; d->da as the other
 * responses. Needs FB_STAGE_ABA1. Allocation-free. */
void fb_accel_delta_forward(const fb_model* m, fb_data* d, double* dqdd);

#endif /* FB_CONSTRAINT_ACCEL_DELTAS_H */
