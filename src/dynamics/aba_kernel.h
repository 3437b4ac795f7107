/* ABA phase 1 [RBDA T7.1], the part that is compiled twice (math/isa.h): for baseline x86-64
 * (aba_kernel_base.c) and with AVX2 (aba_kernel_avx2.c, where the build allows it). Both are
 * the one source, aba_kernel_impl.h, and give the same bits. fb_aba_phase1 (aba.c) calls the
 * one fb_isa_active() names. */
#ifndef FB_DYNAMICS_ABA_KERNEL_H
#define FB_DYNAMICS_ABA_KERNEL_H

#include <stdbool.h>

#include "featherbone/data.h"

/* Where in its 36 D_inv entries a ball joint (undamped, not at the root) keeps
 * K = C - B^T A^-1 B, the articulated inertia [0 0; 0 K] it hands to its parent (in its own
 * coordinates), after its 9 entries of A^-1; phase 2 uses it for I^a c. */
#define FB_ABA_BALL_K 9

/* Phase 1 on m, d: with `positions`, jcalc, X_up and X_0 first (else they are current); the
 * velocities, every body's I^A, U, D^-1 and pA_v. Returns 0, or the body whose D = S^T I^A S
 * is not positive definite (phase 1 then stops). */
int fb_aba_phase1_base(const fb_model* m, fb_data* d, bool positions);
int fb_aba_phase1_avx2(const fb_model* m, fb_data* d, bool positions);

#endif /* FB_DYNAMICS_ABA_KERNEL_H */
