/* A character standing still at one frame of its clip with a free root, pushed at the pelvis:
 * the push tests of test_balance and `featherbone bench push` (issue 18: 0.1 s pushes at the
 * pelvis of a standing character, growing until it falls, as in SIMBICON [Yin, Loken & van de
 * Panne 2007, §5]).
 *
 * The scene is what `featherbone simulate --root free` sets up, with a clip that stands still:
 * the clip's grounded reference (fb_ref_grounded, both feet flat on the ground), one frame of it
 * repeated into a reference of its own (fitted as given: fb_fit_opts.keep_glitches), that
 * reference grounded again and given to the tracker as its control reference
 * (fb_tracker_set_control), the gains of `gains init` for the clip (human strength) with the
 * root free, the accel controller, the world at the gains' rate with its default options.
 *
 * The push: a force in world axes, horizontal, on the root body at its centre of mass. The
 * world reads external forces as fb_data.f_ext: spatial forces in WORLD coordinates about the
 * WORLD origin (include/featherbone/data.h; rnea.c and aba.c transform them with X_0), so a
 * force F at the world point p is [p x F; F], remade before every step as the pelvis moves. */
#ifndef FB_BENCH_PUSH_H
#define FB_BENCH_PUSH_H

#include <stdbool.h>

#include "featherbone/featherbone.h"

/* The external force of fb_data.f_ext for a force F (N, world) acting at the world point p:
 * [p x F; F], world coordinates about the world origin. */
fb_fv push_wrench(fb_v3 p, fb_v3 F);

/* The scene: the character standing at one frame, and the references and gains it runs with.
 * Borrows the clip and character (they must outlive it). */
typedef struct push_scene {
    const fb_clip* clip;
    const fb_character* ch;
    const fb_model* m;
    int frame;          /* the frame of the clip's grounded reference it stands at */
    fb_ref* clip_ref;   /* the whole clip's reference (the gains are made for it) */
    fb_ref* clip_ground;/* its grounded copy, where the standing frame is taken from */
    fb_ref* stand;      /* the standing frame held still: what the metrics compare with */
    fb_ref* stand_ctl;  /* its grounded copy: what the joints are driven toward */
    fb_gains gains;
    fb_v3 forward, left; /* world, horizontal unit vectors: where the character faces at the
                            standing frame (fb_character_forward) and up x forward */
    double mass;         /* kg */
} push_scene;

/* How long both feet and toes must stand for a frame to be a standing one (s). */
#define PUSH_STAND_HOLD 0.2

/* The character of `clip` standing at frame `frame` of the clip's grounded reference at
 * `rate` Hz (frame < 0: the first where both feet and toes stand for PUSH_STAND_HOLD, which
 * s->frame then holds), for runs of up to `seconds` s. 0, or -1 with err filled (no such frame,
 * the frame out of range, or the library's error). */
int push_scene_create(const fb_clip* clip, const fb_character* ch, double rate, int frame,
                      double seconds, push_scene* s, fb_error* err);
void push_scene_destroy(push_scene* s);

/* The first frame, at or after `from`, at which both feet and both toes of the clip's
 * grounded reference are in stance (fb_ref.stance_at) and stay so for `hold` s; -1 if none. */
int push_stand_frame(const fb_ref* ground, int from, double hold);

/* One run: the character stands from the scene's start; at t_push it is pushed for `duration`
 * s with `force` N along the world direction `dir` (unit, horizontal); the run goes on to
 * t_end. */
typedef struct push_opts {
    fb_v3 dir;
    double force;     /* N */
    double t_push;    /* s (default 1: the character settles on its feet first) */
    double duration;  /* s (default 0.1) */
    double t_back;    /* s after the push's end at which the pose is compared with the one
                         it had when the push began (default 2) */
    double t_end;     /* s (default t_push + duration + t_back) */
} push_opts;

push_opts push_default_opts(void);

typedef struct push_result {
    bool blew_up;        /* fb_world_step failed; msg says why (time, joint) */
    char msg[FB_ERROR_MSG_MAX];
    double t_stop;       /* s: where the run stopped (t_end, or the failed step) */
    fb_fall fall;        /* the tracker's fall (cause FB_FALL_NONE: it stood) */
    /* m: the mean over the clip's joints (bodies with joint_of_body >= 0) of the distance of
     * each joint's world position from where it was when the push began, at t_back after the
     * push's end; and its largest over the run from the push on */
    double pose_back, pose_max;
    double root_drop_max; /* m: how far the pelvis sank below its height at the push's start */
    double start_dev;    /* m: the same mean distance between the pose at the push's start and
                            the standing frame (how far the settled stance is from the clip's) */
    double qd_end;       /* the largest |qd| of any dof at the end (rad/s, m/s) */
    bool asleep_end;     /* the world had put the character to sleep at the end */
    bool finite;         /* q and qd finite at every step */
    /* the joint torques against their limits over the run (every dof but the root's): the
     * largest ratio |tau| / limit (1 = at the limit) of what the tracker set (fb_data.tau: the
     * feedforward and the balance plan's torques, clamped) and of what was applied
     * (fb_tracker_torques: that plus the multipliers of the tracker's rows) */
    double tau_ratio_max, applied_ratio_max;
    /* steps whose last force solve left a multiplier outside its bounds (a row's [lo, hi], a
     * friction row's +-mu times its normal's) by more than 1e-6 of the bound, and the largest
     * excess (N or N m) */
    int bound_steps;
    double bound_excess_max;
    double min_margin;   /* m: the least margin of the centre of mass to the support polygon
                            the planner saw from the push on (NAN: never three points) */
} push_result;

/* Runs the scene once with opts (from the standing start: the world and tracker are made
 * anew, so runs are independent and deterministic). 0, or -1 with err filled when the scene
 * cannot be set up (a blow-up is not an error: r->blew_up). */
int push_run(const push_scene* s, const push_opts* o, push_result* r, fb_error* err);

/* The push series of one direction: forces step, 2 step, ... up to max_force, each a run of
 * opts with that force, until the first that ends in a fall (or a blow-up). */
typedef struct push_series {
    double recovered;      /* N: the largest force after which the pose was back within
                              `within` of its start at t_back and it had not fallen (0: none) */
    double stood;          /* N: the largest force it did not fall from (0: none) */
    double fell_at;        /* N: the first force it fell from (0: none up to max_force) */
    double fall_time;      /* s after the push began, at fell_at */
    int runs;
    int blowups;
    int bound_runs;        /* runs in which a force solve left a multiplier outside its bounds */
    double applied_ratio_max; /* the largest applied torque over its limit in any run */
} push_series;

/* Called after each run of a series (may be NULL). */
typedef void (*push_each_fn)(const push_opts* o, const push_result* r, void* user);

int push_ladder(const push_scene* s, const push_opts* o, double step, double max_force,
                double within, push_each_fn each, void* user, push_series* out, fb_error* err);

#endif /* FB_BENCH_PUSH_H */
