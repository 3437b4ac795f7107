/* featherbone: a character tracking its clip while balls hit it [Cline §5.2].
 *
 * fb_sim puts a clip's character (tracked by fb_tracker with the given gains) and one free
 * ball per hit into a world with ground contact, launches each ball so that it reaches its aim
 * point on the target body at the hit time, steps the world over the clip and records, at the
 * clip's own frame rate, the character's joint positions, the balls, the tracking metrics,
 * the joint torques and the contact forces. See docs/SIMULATE.md.
 *
 * A ball is a real dynamic body from its launch on: gravity, contact with the character, the
 * ground and the other balls, restitution and friction. Before its launch it waits, at rest,
 * far from everything. It is launched `distance` from the aim point along `from`, on the
 * ballistic path that reaches the aim point (where the clip puts it) at the hit time, moving
 * at `speed` along the line of flight when gravity is ignored.
 *
 * Everything is allocated by fb_sim_create; stepping allocates nothing. Same inputs, same
 * results, bit for bit. */
#ifndef FEATHERBONE_SIM_H
#define FEATHERBONE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "control.h"
#include "mocap.h"
#include "types.h"
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- hits ------------------------------------------------------------------------------ */

/* Named directions a ball can come from, in the character's heading frame at the hit time
 * (front = the way the character faces, projected on the ground). */
typedef enum fb_hit_from {
    FB_FROM_FRONT = 0,
    FB_FROM_BACK,
    FB_FROM_LEFT,
    FB_FROM_RIGHT,
    FB_FROM_ABOVE,
    FB_FROM_VECTOR /* `dir`, world axes */
} fb_hit_from;

typedef struct fb_hit {
    double time;              /* s of the clip at which the ball reaches the aim point */
    char target[FB_NAME_MAX]; /* the struck body, named by the clip joint that drives it */
    double speed;             /* m/s */
    double mass;              /* kg */
    double radius;            /* m */
    fb_hit_from from;         /* where the ball comes from (default front) */
    fb_v3 dir;                /* FB_FROM_VECTOR: unit vector from the aim point toward the
                                 launch point, world axes */
    fb_v3 offset;             /* aim point relative to the body's centre of mass, body
                                 coordinates (m); default 0 */
    double restitution;       /* of the ball (default 0.5); a contact uses the larger of the
                                 two sides' */
    double distance;          /* m from the aim point at launch (default 1) */
} fb_hit;

/* Defaults: time 1 s, no target, 10 m/s, 0.45 kg, radius 0.11 m, from front, restitution
 * 0.5, distance 1 m. */
FB_API fb_hit fb_default_hit(void);

/* Parses "time=1.2,target=LeftElbow,speed=10,mass=0.45,radius=0.11[,from=front|back|left|
 * right|above|X:Y:Z][,offset=X:Y:Z][,restitution=E][,distance=D]" over fb_default_hit().
 * `target` and `time` are required. FB_EINVAL names the field and what was expected. */
FB_API fb_status fb_hit_parse(const char* spec, fb_hit* hit, fb_error* err);

/* FB_EINVAL naming the field when a hit built in code is out of the ranges fb_hit_parse
 * accepts (speed, mass, radius, distance > 0; restitution in [0, 1]; a unit `dir` for
 * FB_FROM_VECTOR; an offset within 2 m; a target name). */
FB_API fb_status fb_hit_check(const fb_hit* hit, fb_error* err);

/* Writes a hit back as a spec fb_hit_parse reads (every field). */
FB_API void fb_hit_format(const fb_hit* hit, char* buf, size_t cap);

/* s: random hits are at least this far apart in time */
#define FB_HITS_MIN_GAP 0.1
/* s: the earliest time a random hit may take: a ball at the lowest random speed (6 m/s) needs
 * 1/6 s to fly its 1 m, and leaves 0.05 s after the start */
#define FB_HITS_T_MIN (1.0 / 6.0 + 0.05)

/* Draws n hits reproducibly from `seed`: targets among the character's bodies that carry
 * shapes (not the root), directions among the named ones, speed 6-14 m/s, mass 0.3-1 kg,
 * radius 0.08-0.12 m, and times over [t_min, t_max] (t_min >= FB_HITS_T_MIN) at least
 * FB_HITS_MIN_GAP apart, uniformly among such arrangements; the hits come in the order of
 * their times. FB_EINVAL when the window cannot hold n hits so spaced (the message gives how
 * many it holds, fb_hits_random_max). The generator is featherbone's own (splitmix64), so the
 * draw is the same on every platform. */
FB_API fb_status fb_hits_random(const fb_character* ch, int n, uint64_t seed, double t_min,
                                double t_max, fb_hit* out, fb_error* err);

/* How many random hits [t_min, t_max] holds FB_HITS_MIN_GAP apart (at most FB_SIM_MAX_BALLS;
 * 0 for an empty window). */
FB_API int fb_hits_random_max(double t_min, double t_max);

/* Reads hits from JSON: {"hits": [{"time": 1.2, "target": "LeftElbow", ...}, ...]} with the
 * fields of fb_hit ("from": a name or [x, y, z]; "offset": [x, y, z]). Fills at most cap hits
 * into out and their count into *n. FB_EINVAL names the file, the hit's index and field. */
FB_API fb_status fb_hits_load(const char* path, fb_hit* out, int cap, int* n, fb_error* err);

/* Writes n hits as the JSON fb_hits_load reads, every field, each number as the shortest text
 * that reads back as the same double; whole or not at all. FB_EIO names the file. */
FB_API fb_status fb_hits_save(const char* path, const fb_hit* hits, int n, fb_error* err);

/* ---- the simulation -------------------------------------------------------------------- */

#define FB_SIM_MAX_BALLS (FB_CSYS_MAX_ART - 1)

/* Body parts for the per-part error. */
typedef enum fb_part {
    FB_PART_TORSO = 0,
    FB_PART_HEAD,
    FB_PART_LEFT_ARM,
    FB_PART_RIGHT_ARM,
    FB_PART_LEFT_LEG,
    FB_PART_RIGHT_LEG,
    FB_NPART
} fb_part;
FB_API const char* fb_part_name(fb_part p);

typedef struct fb_sim_opts {
    int first, last;        /* clip frames to track (last = 0: to the end) */
    const fb_fit_opts* fit; /* NULL = per-joint cross-validation */
    bool self_collision;    /* the character's non-adjacent bodies collide (default false) */
    double ball_mu;         /* ball friction (default 0.5) */
    double recover_tol;     /* m: a hit is recovered from when the struck body is back within
                               this of the clip after its peak (default 0.02) */
    int spare_balls;        /* balls kept aside for fb_sim_add_hit (default 0); hits + spare
                               balls at most FB_SIM_MAX_BALLS */
    const fb_ref* ref;      /* borrowed: the clip's reference at the gains' rate over
                               first..last (fb_ref_from_clip with `fit`), to share one fit
                               among simulations; NULL = fit one (default) */
    bool export_placed;     /* fb_sim_motion and fb_sim_export_offset as simulated, on the
                               ground the reference was placed on; false (default): in the
                               input clip's frame, the placement undone */
    bool baseline;          /* step, beside the world, the character alone (no balls) with the
                               same tracker, for each hit's root_impulse and ground_impulse
                               (default true when there are balls; it doubles the cost of a
                               step in the hits' windows). Never with a free root: it has no
                               support, and the ground's share would compare two walks that
                               drift apart (docs/SIMULATE.md) */
    const fb_ref* control;  /* borrowed, free or assisted root: the reference the tracker drives
                               the character toward (fb_tracker_set_control; fb_sim_sample's),
                               of the same frames as `ref`; NULL (default) = the clip's
                               reference with its feet on the ground (fb_ref_grounded) */
} fb_sim_opts;
FB_API fb_sim_opts fb_default_sim_opts(void);

/* One recorded frame (at the clip's frame rate). */
typedef struct fb_sim_frame {
    double time;                /* s since the start of the simulation */
    fb_track_metrics metrics;   /* tracking against the clip; with a kinematic root its
                                   assist_force and assist_torque are the root's constraint
                                   wrench over the last step (fb_sim_root_support) */
    double part_err[FB_NPART];  /* m: mean position error of each part's joints */
    double ground_force;        /* N: magnitude of the ground's force on the character (normal
                                   and friction, impacts included), averaged since the last
                                   recorded frame; asleep (a fallen body at rest, which the
                                   world steps no contact for) its weight */
    double ball_force;          /* N: the same summed over the balls' contacts with it */
    bool fallen;                /* the tracker had found the character fallen by then
                                   (fb_tracker_fall); once true it stays true */
    double com_margin;          /* m: how far the centre of mass's ground projection was inside
                                   the support polygon in the balance planner's last substep
                                   (fb_balance_info.margin; negative: outside); NAN when the
                                   planner did not run (not a free root, the pd controller,
                                   fallen) or had fewer than three support points */
    double com_target_dist;     /* m: the distance from the centre of mass to where the planner
                                   steered it (|com - com_target|) in its last substep; NAN
                                   when it did not run */
} fb_sim_frame;

/* A body a ball touched. */
typedef struct fb_hit_body {
    int body;      /* a body of the character */
    double time;   /* s: the ball's first touch of it (the start of that step) */
    fb_v3 impulse; /* N s, world axes: the impulse the ball gave it (impacts and contact forces) */
} fb_hit_body;

/* What became of one hit. */
typedef struct fb_hit_result {
    fb_hit hit;
    int body;                 /* the target body */
    double launch_time;       /* s */
    fb_v3 launch_pos, launch_vel;
    bool touched;             /* the ball touched the character */
    double contact_time;      /* s, first touch */
    fb_v3 impulse;            /* N s: total impulse the ball gave the character */
    fb_v3 ball_dp;            /* N s: the ball's change of momentum over its contact with the
                                 character, gravity's impulse over that time taken out */
    int nbody;                /* bodies the ball touched (fb_sim_hit_bodies: which, and the
                                 impulse each received; they add up to `impulse`) */
    fb_v3 root_impulse;       /* N s: what the root's support (a kinematic root's rows, an
                                 assisted root's help) gave the character beyond what it gave
                                 the character without balls (opts.baseline), over
                                 absorb_window: about -impulse when the root took the whole
                                 blow; NaN without the baseline (a free root's) */
    fb_v3 ground_impulse;     /* N s: the same for the ground's contacts */
    double absorb_window;     /* s from the first touch that those cover: 1 s, or up to the
                                 next hit's first touch or the end of the clip */
    double peak_err;          /* m: largest distance of the aim point on the struck body from
                                 where the clip puts it, within 1 s after the hit */
    double peak_time;         /* s */
    double recover_time;      /* s after the hit until that distance is back within
                                 recover_tol after its peak (0: it never left; NaN: not within
                                 the clip) */
    double mpjpe_recover_time; /* s after the hit until the MPJPE is within recover_tol, from
                                  the struck body's return on (NaN: not within the clip) */
    double peak_err_root;      /* m: peak_err root-relative: the aim point in the root's axes,
                                  simulated and in the clip's pose (where the body is and which
                                  way it faces left out: what a free root is judged by) */
    double recover_time_root;  /* s: recover_time of that distance */
    double hold_time;          /* s after the hit from which the distance stays within
                                  recover_tol up to hold_window after the hit (issue 18's "back
                                  within 2 cm 1.5 s after", held): 0 when it never left it,
                                  NaN when it is not within it at hold_window */
    double hold_time_root;     /* s: hold_time of the root-relative distance */
    double hold_window;        /* s after the hit that hold_time covers: 2.5 s, or up to the
                                  next hit's first touch or the end of the clip */
} fb_hit_result;

typedef struct fb_sim fb_sim;

/* A simulation of `clip`'s character `ch` tracking frames first..last of the clip with gains
 * g (its rate is the step rate) while `nhit` balls hit it (at most FB_SIM_MAX_BALLS). A hit
 * whose target names no body is FB_EINVAL listing the valid names; a hit too early for its
 * ball to fly `distance` at `speed` is FB_EINVAL. clip and ch must outlive the simulation. */
FB_API fb_sim* fb_sim_create(const fb_clip* clip, const fb_character* ch, const fb_gains* g,
                             const fb_hit* hits, int nhit, const fb_sim_opts* opts,
                             fb_error* err);
FB_API void fb_sim_destroy(fb_sim* s);

/* Adds a hit to a running simulation, with one of its spare balls (interactive throws: the
 * viewer). The hit is planned as at fb_sim_create, from the current time on: FB_EINVAL when
 * its ball cannot fly `distance` at `speed` before `time` from now, or `time` is past the end,
 * or the target names no body; FB_ESTATE when no spare ball is left or the simulation is
 * over. Adding a hit whose launch time (time - distance / speed) is now gives, bit for bit,
 * the motion of the simulation created with that hit in place of the spare ball. */
FB_API fb_status fb_sim_add_hit(fb_sim* s, const fb_hit* hit, fb_error* err);

/* One world step (1 / rate), with the balls launched on time and a frame recorded when the
 * step reaches one. FB_ENUMERIC on a blow-up names the time and the joint. */
FB_API fb_status fb_sim_step(fb_sim* s, fb_error* err);

/* Steps to the end of the clip; progress(user, fraction) after every recorded frame when not
 * NULL. */
FB_API fb_status fb_sim_run(fb_sim* s, void (*progress)(void* user, double fraction),
                            void* user, fb_error* err);

FB_API bool fb_sim_done(const fb_sim* s);
FB_API double fb_sim_time(const fb_sim* s);
/* A fingerprint of the character's state as it stands (FNV-1a over the bits of its q and
 * velocities): two simulations with the same fingerprint at the same time are, to every
 * practical purpose, the same run bit for bit; any other rounding anywhere before shows. */
FB_API uint64_t fb_sim_state_hash(const fb_sim* s);
FB_API double fb_sim_duration(const fb_sim* s);
FB_API fb_world* fb_sim_world(fb_sim* s);
FB_API fb_tracker* fb_sim_tracker(fb_sim* s);
/* What held or helped the character at its root beside gravity, contacts and balls: a
 * kinematic root's constraint (the feedforward the tracker sets at the root and the
 * multipliers of its root rows, from the world's joint impulse: the mean force and torque
 * over the last step), an assisted root's help (fb_tracker_assist: the last substep's); zero
 * for a free root. World axes; the torque about the root body's origin. Totals since the start
 * (impulses of the magnitudes, peaks) in *tot, limit_substeps as fb_tracker_totals'. Any
 * output may be NULL. */
FB_API void fb_sim_root_support(const fb_sim* s, fb_v3* force, fb_v3* torque,
                                fb_assist_totals* tot);
FB_API const fb_ref* fb_sim_ref(const fb_sim* s);
/* The reference the tracker drives toward: opts.control when given, else for a free or an
 * assisted root the clip's fit stood on the ground (fb_ref_grounded), else the clip's fit. */
FB_API const fb_ref* fb_sim_control_ref(const fb_sim* s);

/* The recorded frames so far (*n of them) and the character's q (nq per frame) and the
 * balls' positions (3 per ball, world, m) at them. Consecutive frames' balls lie
 * 3 x (hits + spare balls) apart; a spare ball not in use stays parked far away. */
FB_API const fb_sim_frame* fb_sim_frames(const fb_sim* s, int* n);
FB_API const double* fb_sim_frame_q(const fb_sim* s, int frame);
FB_API const double* fb_sim_frame_balls(const fb_sim* s, int frame);
/* How far each hit's aim point on its body is from where the clip puts it (fb_sim_nball, m) at a
 * recorded frame: what peak_err and recover_time are computed from. */
FB_API const double* fb_sim_frame_hit_err(const fb_sim* s, int frame);
/* The same distances root-relative: each aim point in its root's axes, simulated and where
 * the clip puts it (peak_err_root, recover_time_root). */
FB_API const double* fb_sim_frame_hit_err_root(const fb_sim* s, int frame);
/* Torques (nv, fb_tracker_torques) at a recorded frame. */
FB_API const double* fb_sim_frame_tau(const fb_sim* s, int frame);

FB_API int fb_sim_nball(const fb_sim* s);
/* The hits' outcomes (nball), complete once the simulation is done. */
FB_API const fb_hit_result* fb_sim_hits(const fb_sim* s);
/* The part each body belongs to (by its name and its parent's part). */
FB_API fb_part fb_sim_body_part(const fb_sim* s, int body);

/* The bodies ball k touched (*n of them, in the order of their first touch), with the
 * impulse the ball gave each; NULL and 0 for a ball out of range. */
FB_API const fb_hit_body* fb_sim_hit_bodies(const fb_sim* s, int k, int* n);

/* m, world axes: how far the reference's placement on the ground moved the clip
 * (fb_ref.place_shift): the simulation runs on the clip so placed. */
FB_API fb_v3 fb_sim_placement(const fb_sim* s);

/* m, world axes: what an export adds to simulated positions to put them in the input clip's
 * frame: -fb_sim_placement, or zero with opts.export_placed. The balls' exports add it. */
FB_API fb_v3 fb_sim_export_offset(const fb_sim* s);

/* The simulated motion (the recorded frames' q of the character) as an fb_motion at the
 * clip's frame rate: one frame per clip frame simulated, in the input clip's frame (the root
 * moved by fb_sim_export_offset). The character's own pose, as simulated: hinges keep only
 * their hinge rotation, dropped joints their rest pose, the reference's repairs and toe turns
 * (docs/CONTROL.md) stay. For the glTF export and fb_motion_write_bvh with the character; the
 * caller destroys it. */
FB_API fb_motion* fb_sim_motion(const fb_sim* s, fb_error* err);

/* ---- sampling (src/sim/sample.c) ------------------------------------------------------- */

/* Most joint axes a search offsets. */
#define FB_SAMPLE_MAX_DOFS 64

/* The offsets a search found (its best sequence), to keep in a file and to follow again
 * without searching (fb_sample_plan_save, fb_sample_plan_load, fb_sample_plan_reference):
 * the grounded reference's dof dof[i] offset by points[k * dofs + i] at t = k window, linear
 * between control points. */
typedef struct fb_sample_plan {
    double window;               /* s between control points */
    int windows;                 /* control points less one: the windows of the span */
    int dofs;                    /* joint axes offset */
    int dof[FB_SAMPLE_MAX_DOFS]; /* each one's velocity index in the model */
    double* points;              /* ((windows + 1) x dofs): rad, or m for the root's
                                    position; allocated, fb_sample_plan_free */
    /* How the search's last simulation, the one following these offsets from the start,
     * ended (since stop 50; a run following the plan is that walk only bit for bit, so a
     * follower can tell whether it is): known false for a plan saved without it */
    bool searched_known;
    double searched_fall;  /* s: its fall (NAN: it stayed up to the end) */
    uint64_t searched_end; /* fb_sim_state_hash at its end when it stayed up (else 0) */
} fb_sample_plan;

/* Frees a plan's points (and sets them NULL); NULL or an empty plan is fine. */
FB_API void fb_sample_plan_free(fb_sample_plan* p);

/* How fb_sim_sample searches (docs/CONTROL.md §11). */
/* s after a hit: issue 18 asks the struck body back within 2 cm FB_HIT_BACK after it, held
 * there to FB_HIT_HELD after it (fb_hit_result.hold_time's span, and the span the sampling
 * search's hit term scores, fb_sample_opts.hit_scale). */
#define FB_HIT_BACK 1.5
#define FB_HIT_HELD 2.5
/* The hit term's line (since stop 47): where a struck body's deviation from FB_HIT_LINE_FROM
 * to FB_HIT_HELD s after its hit is over FB_HIT_LINE times the recovery tolerance
 * (fb_sim_opts.recover_tol, the hold's 2 cm), the excess over fb_sample_opts.hit_scale,
 * squared, counts FB_HIT_LINE_WEIGHT times in the score: the hold asks for every frame within
 * the tolerance, and a square alone lets a short burst over it cost little; it starts before
 * FB_HIT_BACK so that the struck body is back by then, not on its way (docs/CONTROL.md §11). */
#define FB_HIT_LINE 0.9
#define FB_HIT_LINE_WEIGHT 1000.0
#define FB_HIT_LINE_FROM 1.3

typedef struct fb_sample_opts {
    int samples;        /* simulations per window (default 40) */
    int keep;           /* the best offset sequences kept from window to window (default 10) */
    double window;      /* s between the offsets' control points (default 0.1) */
    double lookahead;   /* s simulated past a window's end to score it (default 0.8) */
    double sigma_joint; /* rad: spread of a control point's change from the last, per
                           sampled joint axis and for the root's turn (default 0.02; 0.05
                           until stop 38) */
    double sigma_root;  /* m: the same for the root's position (default 0.01) */
    double root_scale;  /* m: the scale of the root's distance from the clip's path in the
                           score (default 0.05; 0.10 until stop 38): smaller keeps the root
                           nearer the path */
    double height_scale; /* m: the scale of the root's drop below the clip's root height (up
                            to the clip's standing height, fb_sample_result.stand_height: a
                            hop not made is no drop) in the score (default 0.05; 0: not
                            counted): the root's distance from the path counts a drop no more
                            than a step aside, and a crouch once kept is one no candidate
                            leaves */
    double upright;      /* 0..1 (below 1): a candidate whose root sinks below this fraction of
                            the clip's root height (up to its standing height, as above) is
                            scored a fall's cost at that frame (in the mean over the span's
                            frames) and the search goes back for it as for a fall (default 0.8,
                            the upright line of 75 % and a margin; 0: only the
                            tracker's falls) */
    double pull;        /* 0..1 (below 1): each window's step of a sampled joint axis (not the
                           root's turn or position) is drawn about (1 - pull) times the last
                           control point instead of the point itself, so that the joints'
                           offsets fall back toward the clip unless the score keeps them
                           (default 0.1; 0 = the random walk searched before stop 35) */
    uint64_t seed;      /* of the samples (default 1) */
    int threads;        /* simulations run at once (default 1); the result does not depend on
                           it */
    int backtracks;     /* times at most the search goes back 5 windows when every kept
                           sequence falls (default 20) */
    fb_sample_plan* plan; /* when not NULL: the best sequence's offsets are written there (the
                             caller frees them with fb_sample_plan_free; default NULL) */
    double hit_scale;     /* m: when > 0, from FB_HIT_BACK to FB_HIT_HELD after each hit's
                             time (issue 18's return, held; from the hit to 2 s after it until
                             stop 39),
                             the square of its aim point's root-relative deviation
                             (peak_err_root's) over this scale is added to each frame's score,
                             so that the search brings the struck body back by then, and
                             FB_HIT_LINE_WEIGHT times that of its excess over FB_HIT_LINE of
                             the recovery tolerance, from FB_HIT_LINE_FROM (since stop 47)
                             (default 0.02 since stop 39, docs/CONTROL.md §11; 0 before, and 0
                             counts neither) */
    int hit_samples;      /* simulations per window in the windows whose scored span (the
                             window and its look-ahead) reaches from a hit's time to
                             FB_HIT_HELD after it, where the search answers the hit (0, the
                             default: `samples`, as every window; since stop 44; twice
                             `samples` measured in docs/CONTROL.md §11) */
    bool replay;          /* simulate every candidate from the start instead of from its kept
                             sequence's simulation saved before the window (default false: the
                             same result for about (window + lookahead) / (lookahead + duration
                             / 2) of the work; kept to check the saved simulations against) */
} fb_sample_opts;
FB_API fb_sample_opts fb_default_sample_opts(void);

/* What the search did. */
typedef struct fb_sample_result {
    int windows;        /* control points sampled */
    int dofs;           /* joint axes offset */
    long simulations;   /* evaluations run */
    int hit_windows;    /* windows searched with hit_samples simulations (where the search
                           answers a hit: fb_sample_opts.hit_samples) */
    int hit_samples;    /* their simulations each (fb_sample_opts.hit_samples, 0 resolved) */
    int backtracks;     /* times the search went back */
    double fall_before; /* s: when the character tracking the reference fb_ref_grounded makes
                           fell (NAN: it did not) */
    double fall_after;  /* s: the same tracking the sampled reference (NAN: it did not) */
    double cost;        /* the best sequence's score over its last window */
    uint64_t end_hash;  /* fb_sim_state_hash at the end of the simulation following the
                           sampled reference when it did not fall (0 when it did) */
    double stand_height; /* m: the clip's standing root height, the median over its frames of
                            the root's height above the ground in the reference
                            fb_ref_grounded makes: the clip's root height above it counts as
                            it in the score's drop and sinking line (stop 39) */
} fb_sample_result;

/* Sampling-based control [Liu et al. 2010, SAMCON]: a reference for a free or assisted root
 * that the character, tracking it, follows the clip without falling. The reference the
 * simulation would drive toward (fb_ref_grounded of the clip's) is offset at the root and the
 * legs' and the spine's joints by piecewise-linear offsets with control points `window` apart;
 * window by window, `samples` simulations (the same clip, gains, options and hits as
 * fb_sim_create's with `opts`; each goes on from its kept sequence's simulation, copied as it
 * was just before the window, or with o->replay from the start) each try a new control point
 * drawn about one of the
 * `keep` best sequences so far, and are scored over the window and `lookahead` after it by
 * how far the character is from the clip (root-relative joint positions, the root's position
 * and turn) and whether it fell; the best `keep` go on. Returns the best sequence's reference
 * (the caller destroys it; give it to fb_sim_create as opts.control: that simulation is the
 * one the search scored last, bit for bit). Deterministic: the same arguments give the same
 * reference whatever o->threads. progress(user, fraction) after every window when not NULL.
 * FB_EINVAL for a kinematic root or bad options (named), FB_ENOMEM. */
FB_API fb_ref* fb_sim_sample(const fb_clip* clip, const fb_character* ch, const fb_gains* g,
                             const fb_hit* hits, int nhit, const fb_sim_opts* opts,
                             const fb_sample_opts* o, void (*progress)(void* user, double fraction),
                             void* user, fb_sample_result* res, fb_error* err);

/* The reference fb_sim_sample returned for `plan`, bit for bit, without the search: the
 * same clip, character, gains and options (clip span, rate, fit) give the same grounded
 * reference, and the plan's offsets are laid on it as the search laid them. FB_EINVAL when
 * the plan does not fit them (another character's axes, another span's windows: named), or
 * for a kinematic root; FB_ENOMEM. The caller destroys the reference. */
FB_API fb_ref* fb_sample_plan_reference(const fb_clip* clip, const fb_character* ch,
                                        const fb_gains* g, const fb_sim_opts* opts,
                                        const fb_sample_plan* plan, fb_error* err);

/* Writes a plan as JSON (docs/CONTROL.md §11: the window, the axes by joint name and axis, the
 * control points), whole or not at all. `clip` names the clip in the file (informative; may be
 * NULL). FB_EIO naming the file, FB_ENOMEM. */
FB_API fb_status fb_sample_plan_save(const char* path, const fb_model* m, const char* clip,
                                     const fb_sample_plan* plan, fb_error* err);

/* Reads a plan fb_sample_plan_save wrote, its axes resolved on m by joint name. FB_EIO when
 * the file cannot be read, FB_EINVAL naming the file and the field (and the line for bad JSON)
 * for anything else; *plan is untouched then. */
FB_API fb_status fb_sample_plan_load(const char* path, const fb_model* m, fb_sample_plan* plan,
                                     fb_error* err);

/* Whether the run s, as it stands, is the walk the search that kept plan found, bit for bit:
 * the same fall time, or, standing, the same fb_sim_state_hash as the search's end (judge it
 * once the run is done: fb_sim_done). 1 it is, -1 it is not, 0 not known (a plan saved
 * without its search's end, before stop 50). When the buffers are not NULL, how each ended in
 * words (`cap` bytes each): this run's in `now`, the search's in `then`: "stayed up, its end
 * state 0123456789abcdef" or "fell at 1.970 s" (then: empty when not known). */
FB_API int fb_sample_plan_as_searched(const fb_sample_plan* plan, const fb_sim* s, char* now,
                                      char* then, size_t cap);

/* Writes the simulated clip as BVH (the input's hierarchy, names, offsets, channel orders and
 * frame rate; fb_motion_write_bvh), one frame per clip frame simulated: the input clip's own
 * frames with what the simulation changed laid on them. Per clip joint and frame the rotation
 * is the input's turned by the simulated joint's rotation from the reference's (a hinge: about
 * its axis by the angle's change), the root's position the input's moved by the simulated
 * root's displacement from the reference's; a dropped joint is as the input has it. So where
 * the simulation follows the reference the export is the input, whatever the character could
 * not represent (a hinge's off-axis rotation) or the reference changed (glitches repaired,
 * toes turned, the placement on the ground). With opts.export_placed the root is moved by
 * the placement too. Whole or not at all. */
FB_API fb_status fb_sim_write_bvh(const fb_sim* s, const char* path, fb_error* err);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_SIM_H */
