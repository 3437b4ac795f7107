/* The tracker's state, shared by its files (src/control/tracker.c: the hook, the joints'
 * torques and rows, create, copy and measure; tracker_root.c: what acts at or through the
 * root, the assisted root's help and the balance planner's targets). Not installed; the
 * simulation's view of a tracker is tracker_internal.h. */
#ifndef FB_CONTROL_TRACKER_IMPL_H
#define FB_CONTROL_TRACKER_IMPL_H

#include <math.h>
#include <stdbool.h>

#include "control/balance.h"
#include "featherbone/control.h"
#include "featherbone/world.h"

struct fb_tracker {
    fb_world* w;
    int art;
    const fb_model* m;
    fb_data* d;        /* the world's data of the character */
    const fb_ref* ref; /* what the metrics compare with: the clip */
    const fb_ref* ctl; /* what the joints are driven toward: ref, or one made from it for a
                          free or assisted root (fb_tracker_set_control) */
    fb_gains g;
    fb_joint_gains* jg; /* (nbody) resolved */
    double* kp_acc;     /* (nbody) accel controller gains from settle time and damping ratio */
    double* kd_acc;
    double root_kp, root_kd; /* the kinematic root's rows, or the assisted root's wrench */
    double root_M[36];       /* the whole body's inertia seen by the root (root coordinates) */
    bool floating_root;
    double t0; /* world time of the clip's start */
    double t;  /* clip time of the last substep */
    /* per substep (nv unless said) */
    double *qd, *vd, *ad, *psi, *tmp, *e, *ed, *tau, *applied;
    /* stable PD: per-dof gains, the bias C, the predicted qdd; A (nv x nv) = M + h D + h^2 K;
     * dspd computes M and C at the current state */
    double *K, *D, *bias, *qdd, *A;
    fb_data* dspd;
    int row_start, nrow;
    double assist_f, assist_n;  /* N, N m: the assisted root's helping force and torque */
    fb_v3 assist_fw, assist_nw; /* the same as vectors, world axes (fb_tracker_assist) */
    fb_assist_totals tot;
    fb_assist_totals tot0; /* ... as they were when the substep at forces_t began */
    double forces_t;       /* world time of the last substep's forces (NAN: none yet) */
    /* an assisted root anchored at its feet: how far (world, across the ground) its target
     * is moved from the clip's root; and as it was when the substep at forces_t began */
    fb_v3 anchor, anchor0;
    /* the fall: found by check_fall, then the fallen body is damped toward rest */
    fb_fall fall;
    fb_plane ground;
    double* M_diag; /* (nv) M's diagonal at the clip's first frame: each dof's inertia */
    /* balance (accel controller, free root): the rows' targets come from the
     * planner, which produces the root's wanted motion through the contacts */
    fb_balance* bal;
    double* want;    /* (nv) the tracking's accelerations, root included */
    double* btarget; /* (nv) the planner's */
    double* btau;    /* (nv) the planner's torques of the stance dofs (NAN: the dof keeps its
                        row) */
    bool balanced;   /* this substep's rows use btarget */
    fb_balance_plan plan;
    double* com_ref; /* (3 nframe) the clip's centre of mass at every frame of the reference */
    double com_kp, com_kd;
    /* metrics */
    fb_data* dref;
    fb_data* dnow; /* scratch: the character's current pose with its positions' stage (inside the
                      hook the world's data is not at that stage): where the planted feet are,
                      for an assisted root anchored at its feet */
    bool* measured; /* (nbody) bodies whose origins are clip joints */
    fb_allocator alloc;
};

static inline double clampd(double x, double lim) {
    return lim > 0.0 ? fmax(-lim, fmin(lim, x)) : x;
}

/* ---- tracker_root.c ---- */

/* No help at the root this substep. */
void fb_tracker_no_assist(fb_tracker* tr);

/* An assisted root anchored at its feet: moves the root's target (tr->qd) by the planted
 * feet's offset from the control reference's, followed over the substep h. */
void fb_tracker_anchor_at_feet(fb_tracker* tr, double h);

/* The root's wrench into tr->tau's first six: feedforward when kinematic, the capped PD help
 * when assisted, nothing when free. */
void fb_tracker_root_wrench(fb_tracker* tr);

/* What the tracker derives from its control reference (the centre of mass's path of frames
 * [from, to), which bodies bear weight). */
void fb_tracker_use_control(fb_tracker* tr, int from, int to);

/* The accelerations the tracking wants of every dof into tr->want (the clip's plus the gains on
 * the error [Kokkevis eq. 22]): the rows' targets, and what the balance planner produces. */
void fb_tracker_wanted(fb_tracker* tr);

/* Balance (accel controller, free root): the planner's targets for the rows and the stance
 * joints' torques, for the substep at world time t of length h (tr->want made first). */
void fb_tracker_plan_balance(fb_tracker* tr, double t, double h);

#endif
