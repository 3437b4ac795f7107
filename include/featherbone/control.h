/* featherbone: making a character reproduce a clip with its own joint torques
 * [Cline 2003 §5.1; Kokkevis 2004 §8.3].
 *
 *   fb_ref      the clip as the simulation needs it: q, v, a and the feedforward torques of
 *               inverse dynamics at every frame of the simulation rate
 *   fb_gains    how hard each joint follows it (read from / written to a JSON gains file)
 *   fb_tracker  a controller attached to a world: PD (Cline eq. 5.7/5.8) or acceleration
 *               constraints (Kokkevis eq. 22) solved with the contacts, the root kinematic,
 *               assisted or free, torque limits, and the tracking metrics of every step
 *
 * docs/CONTROL.md explains the fit, the controllers, the gains and the metrics. */
#ifndef FEATHERBONE_CONTROL_H
#define FEATHERBONE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "base.h"
#include "data.h"
#include "mocap.h"
#include "model.h"
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reference motion ---------------------------------------------------------------- */

/* The smooth fit of q(t). Every output time takes the clip frame nearest to it, fits a
 * polynomial of `degree` by least squares to the 2 half_window + 1 clip frames around that
 * frame (the window slides inwards at the clip's ends) and evaluates it and its first two
 * derivatives. Rotations are fitted in the tangent space of the nearest frame's rotation
 * (rotation vectors of q_k^-1 q_j) and mapped back exactly, so v and a are the true body
 * angular velocity and acceleration of the fitted curve. By default each joint's window and
 * degree are chosen from its data by generalised cross-validation (docs/CONTROL.md). */
typedef struct fb_fit_opts {
    int half_window; /* clip frames either side; 0 with degree 0 = chosen per joint (default) */
    int degree;      /* polynomial degree, 2 <= degree <= 2 half_window */
    bool keep_glitches; /* true: fit the samples as given; false (default): first repair
                           capture glitches, runs of 1-3 frames (up to 4 at the clip's ends)
                           where a joint leaves the curve through the frames around them and
                           comes back, turn end segments (toe hinges) out of the ground, and
                           place the clip so that its lowest shape point touches the ground
                           (docs/CONTROL.md) */
} fb_fit_opts;

FB_API fb_fit_opts fb_default_fit_opts(void);

/* ---- the contact plan: which feet stand on the ground, when and where -------------------- */

/* One stretch of frames in which a foot or a toe stands on the ground (docs/CONTROL.md §7):
 * low (its lowest shape point within 4 cm of the clip's floor), slow (its shapes' centre
 * moving horizontally slower than 0.15 m/s), a foot flat (its sole tilted less than 30
 * degrees), a toe without its foot only under a heel off the ground; with hysteresis, short
 * gaps closed, short stretches dropped, and a body that slides kept only where it stays
 * within a few centimetres. */
typedef struct fb_stance {
    int first, last;  /* frames of the reference, inclusive */
    fb_v3 p;          /* m, world: where the body's origin stands: a foot's (its ankle) with its
                         sole flat on the ground, centred where the clip's sole is on average
                         over the interval, at the mean heading; a toe's (its joint) the toe
                         shape's radius above the ground, where its foot's stance puts it when
                         the two overlap, else at its mean over the interval.
                         fb_ref_grounded puts the body there at every frame of the interval */
    fb_quat rot;      /* a foot: its orientation there (body -> world): the sole's normal down,
                         at the mean heading; a toe: identity (only its joint is pinned) */
    double heading;   /* rad: the direction it points (a foot: its sole's forward axis; a toe:
                         its length), the angle about the ground's normal from the world's +x
                         towards -z */
} fb_stance;

/* A body the plan follows: a foot (a body with a box shape, a ball joint, a hinge or ball
 * joint above it (the knee) and a ball joint above that (the hip), neither of them the root)
 * or a foot's toe (its first child body with a shape). */
typedef struct fb_ref_contact {
    int body;         /* the foot or toe */
    int foot;         /* a toe: the index in fb_ref.contact of its foot; a foot: -1 */
    int toe;          /* a foot: the index of its toe (-1: none); a toe: -1 */
    int nstance;
    fb_stance* stance; /* (nstance) in time order, disjoint */
} fb_ref_contact;

typedef struct fb_ref {
    int nframe;  /* frames at the simulation rate; frame i is at time i dt; the last at or just
                    past the last sample, so that the samples' whole span is covered */
    int nq, nv;
    double dt;   /* s, 1 / rate */
    double* q;   /* (nframe x nq) fitted positions */
    double* v;   /* (nframe x nv) velocities (the joints' own coordinates, as fb_data.qd) */
    double* a;   /* (nframe x nv) accelerations (as fb_data.qdd) */
    double* tau; /* (nframe x nv) feedforward psi = RNEA(q, v_step, a_step): joint torques in
                    each joint's child coordinates; a floating root's six entries are the wrench
                    [n; f] (root body coordinates) the ground would have to supply */
    /* What the simulator's semi-implicit Euler step (v += dt a, fb_velocity_step; q = q (+)
     * dt v) needs to land on q exactly at every frame: v_step[i] = (q[i-1] (-) q[i]) / dt,
     * a_step[i] = (v_step[i+1] - v_step[i]) / dt (fb_velocity_rate: a floating root's linear
     * part as the world steps it). They differ from v, a by O(dt); the feedforward and the
     * controllers use them, so that psi fed open-loop reproduces the fitted q (as MuJoCo's
     * inverse dynamics is consistent with its integrator). */
    double* v_step; /* (nframe x nv) */
    double* a_step; /* (nframe x nv) */
    int* fit_half_window; /* (nbody) the fit each joint got */
    int* fit_degree;      /* (nbody) */
    /* The glitch repair (fb_fit_opts.keep_glitches): samples replaced per joint, their sum,
     * and one line per repaired joint naming its frames and how far they were off; before
     * them, a line for the clip's placement on the ground and one per end segment turned out
     * of it. */
    int* repaired;        /* (nbody) */
    int nrepaired;
    int nwarn;                                     /* lines issued (may exceed the stored) */
    char warn[FB_CLIP_MAX_WARN][FB_CLIP_WARN_LEN]; /* the first FB_CLIP_MAX_WARN */
    /* The contact plan (docs/CONTROL.md §7): every foot, each followed by its toe, and at every
     * frame which of its stance intervals holds it. */
    int ncontact;
    fb_ref_contact* contact; /* (ncontact) */
    int* stance_at;          /* (nframe x ncontact): the index in contact[c].stance of the
                                interval containing frame i, or -1 (in the air) */
    /* m, world axes: how far the placement on the ground moved the clip (the floating root of
     * every frame); zero when it was not placed. Exports undo it (fb_sim_motion). */
    fb_v3 place_shift;
    double floor;            /* m: the clip's floor the plan measured heights from: the median
                                height over the ground of the feet's and toes' lowest points in
                                the frames where they move slowly */
    fb_allocator alloc;
} fb_ref;

/* The reference of a model from `nsample` samples of q (nsample x nq) taken every sample_dt
 * seconds, at `rate` frames per second (0 = the samples' own rate). Scalar joints must be
 * unwrapped already (fb_motion_from_clip does that). Capture glitches are repaired on a copy
 * of the samples first unless opts->keep_glitches (the reference's repaired, nrepaired and
 * warn say what was changed; warnings number the samples from 0). Joint damping enters psi
 * as RNEA computes it. FB_EINVAL for bad arguments (named), FB_ENOMEM. */
FB_API fb_ref* fb_ref_create(const fb_model* m, int nsample, double sample_dt, const double* q,
                             double rate, const fb_fit_opts* opts, const fb_allocator* alloc,
                             fb_error* err);

/* The same from a clip and its character (the clip's frames first..last-1; last 0 = end);
 * warnings number the clip's frames. */
FB_API fb_ref* fb_ref_from_clip(const fb_clip* clip, const fb_character* ch, double rate,
                                int first, int last, const fb_fit_opts* opts, fb_error* err);

FB_API void fb_ref_destroy(fb_ref* r);

/* ---- the grounded reference -------------------------------------------------------------- */

/* How fb_ref_grounded stands the reference on the ground. */
typedef struct fb_ground_opts {
    double blend_time;    /* s: the legs blend into each stance interval over this time before
                             it and out of it over this time after (shortened to half the gap
                             between two intervals of the same body) (default 0.12) */
    double carry_time;    /* s: outside the stance intervals the feet's corrections (their
                             offsets from the clip) fade in and out over this time and are
                             carried across gaps between stances shorter than twice it; the
                             root's lowering comes and goes over it around the frames that need
                             it (default 0.3). Frames further than blend_time and twice
                             carry_time from every stance interval keep their pose bit for bit */
    double min_knee_bend; /* rad: a leg the grounding moves is not straightened beyond this
                             bend of the knee from fully straight (near straight the knee's
                             angle changes fast with the hip-ankle distance); where a stance
                             needs more reach the root is lowered (default 0.15) */
    double smooth_time;   /* s: then every frame is smoothed over this either side (the cubic
                             fitted by least squares to the frames within it): the
                             frame-to-frame steps of the grounding and of the fit ask for
                             accelerations no contact gives (default 0.05; 0: not smoothed) */
} fb_ground_opts;

FB_API fb_ground_opts fb_default_ground_opts(void);

/* A copy of the reference (made for model m) in which every foot stands on its sole during
 * its stance intervals (ref->contact): the sole flat on the ground where the plan puts it
 * (fb_stance.p, rot: the clip's position and heading averaged over the interval, so the foot
 * does not skate), the toe lying flat while it stands, by inverse kinematics of the leg (the
 * knee's bend from the hip-ankle distance on the side the clip bends it; the hip turned onto
 * the ankle by the least rotation, keeping the knee's swing plane; the ankle and toe
 * rotations), the root lowered where a leg cannot reach, and only there, smoothly; blended in
 * and out (opts); joints outside the legs untouched; no shape below the ground. Joint ranges
 * (fb_model.limit) are respected. Then, with opts->smooth_time > 0 and a foot to stand on,
 * every frame smoothed (the planted feet then move by a few millimetres and a landing foot may
 * go as far into the ground, every joint by as much as the smoothing takes off its motion;
 * docs/CONTROL.md §7). v, a, v_step, a_step and the feedforward are recomputed as
 * fb_ref_create does. The first warning says what was changed. opts NULL = defaults.
 * FB_EINVAL for bad options (named), FB_ENOMEM. Runs once, before a simulation (about 70 ms
 * for an 8 s clip at 240 Hz, a third of it the smoothing); docs/CONTROL.md §7. */
FB_API fb_ref* fb_ref_grounded(const fb_model* m, const fb_ref* ref, const fb_ground_opts* opts,
                               fb_error* err);

/* What the ground cannot give: at every frame of r (a reference of m, whose body 1 is a
 * floating root), the root wrench its motion needs (r->tau's six root entries, [n; f] in root
 * coordinates, gravity included) less the nearest that contact forces at the pose's ground
 * contacts within `margin` (m) can give inside friction pyramids of coefficient mu (the
 * balance planner's fit: non-negative least squares, a torque's error weighted torque_weight,
 * 1/m^2, against a force's). What is left is what a helper at the root would have to add for
 * the body to follow r exactly with these contacts: the least help an assisted root needs at
 * zero tracking error (issue 18). Writes res (nframe x 6, [n; f] root coordinates) and, when
 * not NULL, npoint (nframe) the contact points used (at most 64 a frame). FB_EINVAL for a
 * reference of another model or a root that is not floating. */
FB_API fb_status fb_ref_ground_residual(const fb_model* m, const fb_ref* r, double mu,
                                        double margin, double torque_weight, double* res,
                                        int* npoint, fb_error* err);

/* Duration (s) from the first to the last frame. */
FB_API double fb_ref_duration(const fb_ref* r);

/* The frame nearest time t (s), within the reference's frames (0 before the first or for a
 * NaN, the last after it). */
FB_API int fb_ref_frame(const fb_ref* r, double t);

/* The reference at time t (clamped to the clip) as the controllers use it: frame i at or
 * before t, s = t - t_i: q = q_i (+) s v_step[i+1], v = v_step[i] + s a_step[i], a = a_step[i],
 * the feedforward torque interpolated linearly. Any output may be NULL. Allocation-free; `tmp`
 * must hold nv doubles when q is wanted. */
FB_API void fb_ref_at(const fb_model* m, const fb_ref* r, double t, double* q, double* v,
                      double* a, double* tau, double* tmp);


/* Writes the feedforward torques as CSV: a time column, then one column per dof named by
 * joint and axis ("LeftElbow", "Neck.x", the root's "Hips.nx" .. "Hips.fz"), N m or N. Whole
 * or not at all. */
FB_API fb_status fb_ref_write_torques_csv(const fb_model* m, const fb_ref* r, const char* path,
                                          fb_error* err);

/* The name of dof j as the CSV columns give it. */
FB_API void fb_dof_label(const fb_model* m, int dof, char* out, size_t cap);

/* ---- gains ------------------------------------------------------------------------------- */

typedef enum fb_controller {
    FB_CTRL_PD = 0,   /* joint torques from PD on the clip plus feedforward [Cline eq. 5.7-5.8] */
    FB_CTRL_ACCEL = 1 /* acceleration-constraint rows solved with the contacts [Kokkevis eq. 22] */
} fb_controller;

typedef enum fb_pd_form {
    FB_PD_CLINE = 0, /* gains scaled by the joint's feedforward torque |psi| (eq. 5.7) */
    FB_PD_PLAIN = 1  /* fixed kp, kv */
} fb_pd_form;

typedef enum fb_root_mode {
    FB_ROOT_KINEMATIC = 0, /* the root follows the clip exactly (unbounded rows) */
    FB_ROOT_ASSISTED = 1,  /* free, plus a capped PD wrench toward the clip's root */
    FB_ROOT_FREE = 2       /* only contacts hold the character up */
} fb_root_mode;

/* Where an assisted root's help pulls its root. */
typedef enum fb_root_anchor {
    FB_ANCHOR_PATH = 0, /* to the clip's root (the default): the body follows the clip's path,
                           the help dragging it there wherever the feet landed */
    FB_ANCHOR_FEET = 1  /* to the clip's root moved by where the planted feet are against the
                           clip's (across the ground, followed in ANCHOR_TIME): the help holds
                           the body up and in its pose over its own feet and leaves the path
                           to them (docs/CONTROL.md §2) */
} fb_root_anchor;

/* The names a gains file, the command line and a batch manifest give each choice, indexed by
 * the enum's value (one table for all three readers and the writers). */
#define FB_NCONTROLLER 2
#define FB_NPD_FORM 2
#define FB_NROOT_MODE 3
#define FB_NROOT_ANCHOR 2
FB_API extern const char* const fb_controller_names[FB_NCONTROLLER];
FB_API extern const char* const fb_pd_form_names[FB_NPD_FORM];
FB_API extern const char* const fb_root_mode_names[FB_NROOT_MODE];
FB_API extern const char* const fb_root_anchor_names[FB_NROOT_ANCHOR];
/* The index of `name` in names[0..n), -1 when it is none of them (or NULL). */
FB_API int fb_choice_index(const char* const* names, int n, const char* name);

FB_API const char* fb_controller_name(fb_controller c);
FB_API const char* fb_root_mode_name(fb_root_mode r);
FB_API const char* fb_root_anchor_name(fb_root_anchor a);
FB_API const char* fb_pd_form_name(fb_pd_form f);

/* How one joint follows the clip. Errors of ball joints are rotation vectors (log of the
 * relative rotation), per axis of the child frame. */
typedef struct fb_joint_gains {
    double ks;            /* pd, Cline: stiffness per N m of |psi| (1/rad) */
    double kd;            /* pd, Cline: damping per N m of |psi| (s/rad) */
    double kp;            /* pd: stiffness (N m/rad); Cline: the minimum stiffness */
    double kv;            /* pd: damping (N m s/rad); Cline: the minimum damping */
    double settle_time;   /* accel: s in which an error falls to 10% and stays there */
    double damping_ratio; /* accel: zeta of the error dynamics */
    double torque_limit;  /* N m per axis, every controller; 0 = none */
} fb_joint_gains;

/* Bits of fb_gains_rule.set: which fields a rule gives. */
enum {
    FB_GAIN_KS = 1u << 0,
    FB_GAIN_KD = 1u << 1,
    FB_GAIN_KP = 1u << 2,
    FB_GAIN_KV = 1u << 3,
    FB_GAIN_SETTLE = 1u << 4,
    FB_GAIN_ZETA = 1u << 5,
    FB_GAIN_LIMIT = 1u << 6,
    FB_GAIN_ALL = (1u << 7) - 1
};

/* A per-joint override: an exact joint name or a glob ("Left*", "*Knee"); rules apply in
 * order after the defaults, each setting only its fields. */
typedef struct fb_gains_rule {
    char pattern[FB_NAME_MAX];
    unsigned set;
    fb_joint_gains g;
} fb_gains_rule;

#define FB_GAINS_MAX_RULES 128

typedef struct fb_root_gains {
    fb_root_mode mode;
    double settle_time;   /* s: how the assisted root's wrench brings it back to the clip (a
                             kinematic root's rows follow the clip with a fixed stiff one) */
    double damping_ratio;
    double max_force;     /* assisted: cap on the helping force (N) */
    double max_torque;    /* assisted: cap on the helping torque (N m) */
    fb_root_anchor anchor; /* assisted: where the help pulls (default FB_ANCHOR_PATH; a gains
                              file may leave it out) */
} fb_root_gains;

typedef struct fb_gains {
    double rate;              /* simulation rate (Hz) */
    fb_controller controller;
    fb_pd_form pd_form;
    fb_root_gains root;
    fb_joint_gains defaults;
    int nrule;
    fb_gains_rule rule[FB_GAINS_MAX_RULES];
} fb_gains;

/* Conservative gains with no joint rules: rate 240 Hz, accel, root kinematic. Real use
 * starts from fb_gains_init. */
FB_API fb_gains fb_default_gains(void);

/* Whose strength gains init gives the joints (docs/STRENGTH.md, docs/CONTROL.md §8): the mean
 * of men's and women's isometric peaks per kg of body mass (the default), men's, or women's. */
typedef enum fb_strength {
    FB_STRENGTH_MEAN = 0,
    FB_STRENGTH_MEN,
    FB_STRENGTH_WOMEN,
    FB_NSTRENGTH
} fb_strength;

FB_API extern const char* const fb_strength_names[FB_NSTRENGTH]; /* "mean", "men", "women" */
FB_API const char* fb_strength_name(fb_strength s);

/* A good starting file for a character and its clip (what `featherbone gains init` writes):
 * per joint, stiffness and damping from the inertia it moves with every other joint held
 * (M's diagonal at the clip's first frame, root held) for a 5 Hz critically damped response,
 * Cline's ks, kd so that at the joint's RMS feedforward torque they give the same, torque
 * limits from human strength (the strongest direction of the human joint, per kg, times the
 * character's mass; the mean of men's and women's), a softer settle time for joints that do
 * not carry the body; the assisted root's caps from the body's weight; one exact-name rule per
 * joint (docs/CONTROL.md). */
FB_API fb_status fb_gains_init(const fb_model* m, const fb_ref* ref, fb_gains* g,
                               fb_error* err);
/* The same with the strength of `who` (fb_gains_init is FB_STRENGTH_MEAN); FB_EINVAL for a
 * value out of range. */
FB_API fb_status fb_gains_init_strength(const fb_model* m, const fb_ref* ref, fb_strength who,
                                        fb_gains* g, fb_error* err);

/* Reads a gains file; every top-level field and every default must be present, joint rules
 * may give any subset. FB_EINVAL names the file and field (and for an unknown key the close
 * matches); names are checked against a model by fb_gains_resolve. */
FB_API fb_status fb_gains_load(const char* path, fb_gains* g, fb_error* err);

/* Writes a gains file with every field (whole or not at all). */
FB_API fb_status fb_gains_save(const fb_gains* g, const char* path, fb_error* err);

/* The gains of every body (nbody; the world and fixed joints get the defaults): defaults, then
 * each rule whose pattern matches the body's name. FB_EINVAL when a rule matches no joint with
 * degrees of freedom (the message lists close names). */
FB_API fb_status fb_gains_resolve(const fb_gains* g, const fb_model* m, fb_joint_gains* out,
                                  fb_error* err);

/* Kp, Kd of e'' + Kd e' + Kp e = 0 such that an error starting at rest falls below 10% at
 * t = settle_time and stays below (exactly, for any damping ratio > 0). */
FB_API void fb_gains_from_settle(double settle_time, double damping_ratio, double* kp,
                                 double* kd);

/* ---- the tracker --------------------------------------------------------------------- */

/* How well the character followed the clip at one instant (fb_tracker_measure). */
typedef struct fb_track_metrics {
    double time;          /* s since the tracker's start */
    double mpjpe;         /* m: mean over the clip's joints of |simulated - clip| position */
    double mpjpe_root;    /* m: the same with each joint's position taken relative to the root
                             in the root's axes (the pose alone: where the body is and which
                             way it faces left out); equal to mpjpe for a kinematic root on the
                             clip */
    double max_joint_err; /* m: the worst joint */
    int worst_body;       /* its body */
    double angle_err;     /* rad: mean over actuated joints of the relative rotation angle */
    double root_pos_err;  /* m */
    double root_rot_err;  /* rad */
    double root_height;   /* m: the root's height above the ground; 0 for a fixed root */
    double root_height_err; /* m: the root's height above the ground less the clip's (below the
                               clip: negative); 0 for a fixed root */
    double com_err;       /* m: whole-body centre of mass */
    int limits_bound;     /* dofs whose torque sat at its limit in the last substep */
    double assist_force;  /* N, assisted root: the helping force of the last substep */
    double assist_torque; /* N m */
} fb_track_metrics;

typedef struct fb_tracker fb_tracker;

/* A controller driving articulation `art` of world w along `ref` (made for the same model)
 * with gains g (resolved against the model; errors as fb_gains_resolve). `joint_of_body`
 * (nbody, may be NULL = every body) marks with >= 0 the bodies whose origins are the clip's
 * joints, for the metrics. Installs itself as the world's hook and puts the character at the
 * clip's first frame at the world's current time. While it tracks (not fallen) it marks the
 * articulation driven (fb_world_set_driven: its joint stops meet the tracker's rows in one
 * solve). All memory is allocated here: stepping the world allocates nothing. */
FB_API fb_tracker* fb_tracker_create(fb_world* w, int art, const fb_ref* ref,
                                     const fb_gains* g, const int* joint_of_body,
                                     fb_error* err);
/* Frees the tracker; its world (which must still exist) is left with no hook and the
 * articulation not driven, to step on as a passive body. */
FB_API void fb_tracker_destroy(fb_tracker* tr);

/* Drives the character toward `ctl` instead of the reference the tracker was made with, which
 * the metrics keep comparing with: for a free or assisted root, a reference on which its feet
 * can stand (fb_ref_grounded). Same model, rate and frames; borrowed (it must outlive the
 * tracker); NULL goes back to the tracker's own. Restarts the clip (fb_tracker_reset).
 * FB_EINVAL when it does not match. */
FB_API fb_status fb_tracker_set_control(fb_tracker* tr, const fb_ref* ctl, fb_error* err);

/* Puts the character back at the clip's first frame and restarts the clip at the world's
 * current time. */
FB_API void fb_tracker_reset(fb_tracker* tr);

/* Seconds of the clip the tracker has reached (world time since start). */
FB_API double fb_tracker_time(const fb_tracker* tr);

/* Whether the clip is over (fb_tracker_time past its last frame). */
FB_API bool fb_tracker_done(const fb_tracker* tr);

/* Compares the character's current state with the clip at the current time; per-body position
 * errors (m) into body_err (nbody) when not NULL. Allocation-free. */
FB_API void fb_tracker_measure(fb_tracker* tr, fb_track_metrics* out, double* body_err);

/* The joint forces the controller applied in the last substep (nv; with the accel controller
 * and a kinematic root this includes the rows' multipliers): torques in each joint's child
 * coordinates, the root's entries the wrench on it. */
FB_API const double* fb_tracker_torques(const fb_tracker* tr);

/* The resolved gains per body (nbody). */
FB_API const fb_joint_gains* fb_tracker_gains(const fb_tracker* tr);

/* Why a character was found fallen (fb_tracker_fall). */
typedef enum fb_fall_cause {
    FB_FALL_NONE = 0,   /* it has not fallen */
    FB_FALL_HEIGHT = 1, /* its root sank below FB_FALL_HEIGHT_FRACTION of the clip's height */
    FB_FALL_TILT = 2    /* its root tilted more than FB_FALL_TILT_DEG from the clip's */
} fb_fall_cause;

FB_API const char* fb_fall_cause_name(fb_fall_cause c);

/* A character whose root is not kinematic has fallen when its root (the pelvis) is lower
 * above the ground than this fraction of the clip's root height at the same time, or its
 * root's up axis is tilted more than this many degrees from the clip's. From then on the
 * tracker no longer follows the clip: every joint is damped toward rest, with at most
 * FB_FALL_STRENGTH of its torque limit, and an assisted root gets no more help, so the body
 * comes to rest where it fell (docs/CONTROL.md). */
#define FB_FALL_HEIGHT_FRACTION 0.5
#define FB_FALL_TILT_DEG 60.0
#define FB_FALL_STRENGTH 0.3
/* s: the fallen body's joints are damped toward rest with this time constant */
#define FB_FALL_DAMP_TIME 0.2

typedef struct fb_fall {
    fb_fall_cause cause; /* FB_FALL_NONE while standing */
    double time;         /* s since the tracker's start: the substep it was found */
    double height;       /* m: the root's height above the ground then */
    double clip_height;  /* m: the clip's root height then */
    double tilt;         /* rad: the root's tilt from the clip's then */
} fb_fall;

/* Whether and how the character fell. */
FB_API fb_fall fb_tracker_fall(const fb_tracker* tr);

/* What the balance planner of a free root (accel controller) saw and decided in
 * the last substep, for reports and the viewer (docs/CONTROL.md). */
#define FB_BALANCE_MAX_POINTS 24
typedef struct fb_balance_info {
    bool active;          /* the planner ran (free root, accel, not fallen) */
    fb_v3 com;            /* world: the whole body's centre of mass */
    fb_v3 com_target;     /* world: where the planner steered it (the clip's, moved over the
                             support when it was not) */
    double margin;        /* m: how far the centre of mass's ground projection is inside the
                             support polygon (negative: outside; NAN: fewer than three support
                             points) */
    int npoint;           /* support points: the ground contacts the planner used */
    fb_v3 point[FB_BALANCE_MAX_POINTS]; /* world */
    double force[FB_BALANCE_MAX_POINTS]; /* N: the normal force planned at each */
    /* the support polygon the margin is measured to: the convex hull of the points on the
     * plane across gravity, its vertices (support points) counter-clockwise about the up
     * direction; 0 with fewer than three points or all on one line */
    int nsupport;
    fb_v3 support[FB_BALANCE_MAX_POINTS];
} fb_balance_info;

/* The planner's last substep (active false with a kinematic root, the pd controller, or after
 * a fall). Borrowed until the next step. */
FB_API const fb_balance_info* fb_tracker_balance(const fb_tracker* tr);

/* The assisted root's helping wrench of the last substep as vectors, world axes: the force (N)
 * and the torque (N m) about the root body's origin, turned into the world with the root's
 * orientation at the start of that substep. Their magnitudes are fb_track_metrics'
 * assist_force and assist_torque. Zero for a kinematic or free root, after a fall, and before
 * the first step. Either output may be NULL. */
FB_API void fb_tracker_assist(const fb_tracker* tr, fb_v3* force, fb_v3* torque);

/* Totals since the start: impulse of the assisting wrench (N s, N m s), the largest force and
 * torque, and (limit_substeps) how many fb_tracker_measure calls found a torque limit bound in
 * the substep before. */
typedef struct fb_assist_totals {
    double force_impulse, torque_impulse, peak_force, peak_torque;
    long limit_substeps;
} fb_assist_totals;
FB_API fb_assist_totals fb_tracker_totals(const fb_tracker* tr);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_CONTROL_H */
