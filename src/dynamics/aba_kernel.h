/* ABA phase 1 [RBDA T7.1] and the contact rows' backward pass, the parts that are compiled
 * twice (math/isa.h): for baseline x86-64 (aba_kernel_base.c) and with AVX2
 * (aba_kernel_avx2.c, where the build allows it). Each is one source (aba_kernel_impl.h,
 * aba_contact_impl.h) and gives the same bits in both. fb_aba_phase1 and fb_aba_contact_path
 * (aba.c) call the one fb_isa_active() names. */
#ifndef FB_DYNAMICS_ABA_KERNEL_H
#define FB_DYNAMICS_ABA_KERNEL_H

#include <stdbool.h>

#include "featherbone/data.h"
#include "dynamics/aba.h"

/* Where in its 36 D_inv entries a ball joint (not at the root) keeps K = C - B^T G B, the
 * linear block of the articulated inertia it hands to its parent (in its own coordinates),
 * after its 9 entries of G = D^-1 = (A + beta 1)^-1; phase 2 uses it for I^a c. */
#define FB_ABA_BALL_K 9

/* Every ball joint takes the closed forms (S = [1; 0], U = [A; B^T], D = A + beta 1, G and K in
 * D_inv). Its implicit damping over the step, beta = dt b (0 undamped or explicit): its D is
 * A + beta 1. With I - A G = I - G A = beta G, the articulated inertia handed to the parent is
 * I^a = I^A - U G U^T = [beta (1 - beta G), beta G B; beta B^T G, K]: [0 0; 0 K] undamped. */
static inline double fb_aba_ball_beta(const fb_model* m, const fb_data* d, int i) {
    return (m->damping[i] > 0.0 && d->damping_dt > 0.0) ? d->damping_dt * m->damping[i] : 0.0;
}

/* Phase 1 on m, d: with `positions`, jcalc, X_up and X_0 first (else they are current); the
 * velocities, every body's I^A, U, D^-1 and pA_v. Returns 0, or the body whose D = S^T I^A S
 * is not positive definite (phase 1 then stops). */
int fb_aba_phase1_base(const fb_model* m, fb_data* d, bool positions);
int fb_aba_phase1_avx2(const fb_model* m, fb_data* d, bool positions);

/* fb_aba_contact_path (dynamics/aba.h) in the two compilations (aba_contact_impl.h). */
int fb_aba_contact_path_base(const fb_model* m, const fb_data* d, int body, const fb_fv3* pA,
                             double* du, double* y, size_t stride, int* path);
int fb_aba_contact_path_avx2(const fb_model* m, const fb_data* d, int body, const fb_fv3* pA,
                             double* du, double* y, size_t stride, int* path);

#endif /* FB_DYNAMICS_ABA_KERNEL_H */
