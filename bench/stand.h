/* The contact-step scenario of ../shared/BENCH_MODELS.md: the capsule humanoid standing on the
 * ground (8 foot and toe contacts), every joint held at its neutral angle by the same PD
 * torques featherbone and the peers apply, dt 1 ms. */
#ifndef FB_BENCH_STAND_H
#define FB_BENCH_STAND_H

#include "featherbone/featherbone.h"

/* Step of the contact-step benchmark (s). */
#define STAND_DT 1e-3
/* Each joint is a critically damped servo of this natural frequency (rad/s) on the inertia its
 * dof sees at the standing pose with everything else free, I_j = 1 / (M^-1)_jj:
 * kp = I_j w^2, kd = 2 I_j w. Gains scaled by inertia keep explicit PD stable on light bodies
 * (kd h / I_j = 2 w h = 0.06). */
#define STAND_OMEGA 30.0
#define STAND_MAX_DOF 64
#define STAND_MAX_Q 128
/* Steps the scene runs at creation before its state is taken as the one to return to: the
 * spec's shin capsules reach 1 cm into the ground at the exact standing pose. */
#define STAND_SETTLE_STEPS 500

/* Steps between returns to the settled state in the benchmarks, so every batch measures the
 * same standing scene: rigidly supported, featherbone's humanoid stays put for ever, but on
 * MuJoCo's soft contacts it starts to tip over after about 900 steps. */
#define STAND_RESET_STEPS 500

typedef struct stand_ctl {
    double kp[STAND_MAX_DOF], kd[STAND_MAX_DOF]; /* per featherbone dof */
    double q0[STAND_MAX_Q], qd0[STAND_MAX_DOF];   /* the settled standing state */
} stand_ctl;

/* The gains of the humanoid m at its standing pose. */
void stand_gains(const fb_model* m, stand_ctl* c);

/* PD torque of one joint toward its neutral angle, from its coordinates q (1 angle, or a
 * unit quaternion [w x y z] of the child relative to the joint frame) and velocities qd (1, or
 * the child-frame angular velocity: the same layout in featherbone and MuJoCo), with the
 * joint's gains kp, kd (1 or 3 each). Writes 1 or 3 torques. Ball joints use the rotation
 * vector of the quaternion (log map). */
void stand_pd(bool ball, const double* kp, const double* kd, const double* q, const double* qd,
              double* tau);

/* The humanoid (with its capsules) in a world of step STAND_DT, standing, with the PD (gains
 * written to *ctl, which must outlive the world) as the world's force hook. *m receives the
 * model (the caller destroys world, then model). opts: the world's options but dt (NULL:
 * fb_default_world_opts()). */
fb_world* stand_world(fb_model** m, stand_ctl* ctl, const fb_world_opts* opts, fb_error* err);

/* Back to the settled standing state. */
void stand_reset(fb_world* w, const stand_ctl* ctl);

#endif /* FB_BENCH_STAND_H */
