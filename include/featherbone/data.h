/* featherbone: fb_data, the state and every intermediate of one simulation of one model.
 *
 * Made from one finalized model, valid for that model only. One fb_data per thread or job; the
 * model is shared read-only. All arrays are sized at creation: no dynamics call allocates.
 * Each field says its shape and which call writes it. Per-body quantities are in body
 * coordinates unless the name ends in _w or the comment says world. */
#ifndef FEATHERBONE_DATA_H
#define FEATHERBONE_DATA_H

#include "base.h"
#include "model.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of fb_data.stage: which results are current for the present state. Any change of
 * q, qd, tau or f_ext by the caller should be followed by the call that needs them; the
 * stage bits are how debug builds catch a call made out of order. */
enum {
    FB_STAGE_POS = 1u << 0, /* XJ, X_up, X_0 */
    FB_STAGE_VEL = 1u << 1, /* vJ, v, c */
    FB_STAGE_ABA1 = 1u << 2, /* IA, U, D_inv, pA_v (ABA phase 1) */
    FB_STAGE_ACC = 1u << 3, /* a (by fb_aba_phase2 or fb_rnea) */
    FB_STAGE_CRBA = 1u << 4 /* M */
};

typedef struct fb_data {
    /* state: written by the caller and the integrator */
    double time; /* s */
    double damping_dt; /* > 0: joint damping acts implicitly over a step of this length
                          (ABA solves with M + dt B, B the damping): stable for any damping.
                          0: explicit. Keep it unchanged between phase 1 and the calls that
                          reuse it. The world sets it for the length of each substep. */
    double* q;   /* (nq) generalised positions */
    double* qd;  /* (nv) generalised velocities */

    /* inputs: written by the caller */
    double* tau;  /* (nv) joint forces/torques (N, N m) */
    fb_fv* f_ext; /* (nbody) external force on each body, world coordinates, about the world
                     origin [RBDA T5.1 f^x]; f_ext[0] is ignored */

    /* outputs */
    double* qdd; /* (nv) generalised accelerations; fb_aba_phase2 */
    double* M;   /* (nv x nv) joint-space inertia, row-major, both triangles; fb_crba */

    /* kinematics; fb_kinematics */
    fb_xf* XJ;   /* (nbody) joint transform, joint frame -> body frame */
    fb_xf* X_up; /* (nbody) parent -> body, XJ * X_tree */
    fb_xf* X_0;  /* (nbody) world -> body */
    fb_mv* vJ;   /* (nbody) joint velocity S qd */
    fb_mv* v;    /* (nbody) body spatial velocity */
    fb_mv* c;    /* (nbody) velocity-product acceleration cJ + v x vJ [RBDA T7.1] */

    /* accelerations; fb_aba_phase2 or fb_rnea */
    fb_mv* a; /* (nbody) body spatial acceleration with gravity applied as the base acceleration
                 -g [RBDA §5.3]: the true acceleration is a + X_0 [0; g] (fb_point_acc adds
                 it back) */

    /* articulated-body quantities; fb_aba_phase1 (IA, U, D_inv, pA_v) and phase 2 (pA, u) */
    fb_abi* IA;    /* (nbody) articulated-body inertia I^A */
    fb_fv* pA_v;   /* (nbody) velocity-product bias force v x* I v of the body alone */
    fb_fv* pA;     /* (nbody) articulated bias force p^A (phase 2: includes f_ext) */
    fb_fv* U;      /* (nv) U = I^A S, one column per dof */
    double* D_inv; /* (nbody x 36) D^-1 = (S^T U)^-1, jnv x jnv row-major at 36 i */
    double* u;     /* (nv) u = tau - S^T p^A */

    /* test-force responses (AccelerationDeltas); fb_accel_delta_* */
    fb_fv* dpA; /* (nbody) change of the articulated bias force */
    fb_mv* da;  /* (nbody) change of the body acceleration */
    double* du; /* (nv) change of u along the test force's path */

    /* RNEA and CRBA */
    fb_fv* f;  /* (nbody) joint force transmitted to body i from its parent; fb_rnea */
    fb_rbi* IC; /* (nbody) composite-rigid-body inertia [RBDA T6.2]; fb_crba */
    fb_fv* F;  /* (nv) F = IC S columns, then propagated; fb_crba */

    unsigned stage; /* FB_STAGE_* bits of what is current */

    /* private */
    fb_allocator alloc;
    void* block; /* the single allocation all arrays point into */
    int nbody, nq, nv;
} fb_data;

/* Makes data for a finalized model, with q at the neutral configuration and everything else
 * zero. `alloc` may be NULL for the default allocator. Returns NULL and fills err on failure
 * (FB_ESTATE for a model not finalized, FB_ENOMEM). */
FB_API fb_data* fb_data_create(const fb_model* m, const fb_allocator* alloc, fb_error* err);

/* Frees the data. NULL does nothing. */
FB_API void fb_data_destroy(fb_data* d);

/* Makes dst what src is: its state, inputs, outputs and intermediates (stage included), as
 * MuJoCo's mj_copyData does; both made for the same model (false, nothing copied, when their
 * counts differ). */
FB_API bool fb_data_copy(fb_data* dst, const fb_data* src);

/* Puts the state back to neutral q, zero qd, tau, f_ext, time; clears the stage bits. */
FB_API void fb_data_reset(const fb_model* m, fb_data* d);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_DATA_H */
