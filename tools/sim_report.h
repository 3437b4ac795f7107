/* What `featherbone simulate` writes besides the BVH: the balls' trajectories (JSON), and the
 * report (JSON, or one self-contained HTML page with the same numbers). */
#ifndef FB_TOOLS_SIM_REPORT_H
#define FB_TOOLS_SIM_REPORT_H

#include <stddef.h>

#include "featherbone/featherbone.h"

/* Most joint-torque series a report plots (the most loaded dofs). */
#define SIM_REPORT_TOP_DOFS 12

typedef struct sim_report_info {
    const char* clip_path;
    const char* gains_path; /* NULL: the defaults of `gains init` */
    int strength;           /* those defaults' strength (fb_strength), -1: not asked (the
                               mean) */
    const fb_gains* gains;  /* as simulated (after the command line's overrides) */
    const fb_character* ch;
    const fb_sample_result* sample; /* the search for the reference (--sample), or NULL */
    fb_sample_opts sample_opts;     /* its options (--sample N and the --sample-* options) */
    const char* sample_plan;        /* the plan file the search was kept in (--sample-save) or the
                                       reference followed (--sample-load), or NULL */
    int plan_as_searched;           /* --sample-load: 1 the run is the walk the plan's search
                                       found, bit for bit, -1 it is not; 0 not known (a plan
                                       saved before stop 50) or no plan followed */
    const struct sim_residual* residual; /* the run's ground residual made once for all its
                                            outputs (sim_ground_residual), or NULL: each report
                                            makes it (none for a kinematic root) */
    const double* residual_pct;          /* with it: per recorded frame, % of the weight */
} sim_report_info;

/* Where the gains came from, as the reports name it: the file, or head and tail around gains
 * init's --strength when it was asked ("(gains init" ")": "(gains init --strength men)"); in
 * buf when not the file's path. */
const char* sim_report_gains(const sim_report_info* info, const char* head, const char* tail,
                             char* buf, size_t cap);

/* Most joint axes the reports list as having sat at their torque limits. */
#define SIM_REPORT_BOUND_DOFS 12

/* A joint axis whose torque sat at its limit (the gains' torque_limit; the same test as
 * fb_track_metrics.limits_bound) in some recorded frames: how many, and its longest run of
 * consecutive ones. A joint too weak for the clip (a hop on one leg, a heavy lift) shows
 * here, where the count over all axes does not say which. */
typedef struct sim_bound {
    int dof;
    double limit;   /* N m */
    int frames;     /* recorded frames */
    double longest; /* s: the longest run, from the frame before it to its last */
    double from;    /* s: the first frame of that run */
} sim_bound;

/* The numbers both reports and the terminal summary give. */
typedef struct sim_summary {
    int nframe;
    double duration;                 /* s */
    double mpjpe_mean, mpjpe_max;    /* m */
    double mpjpe_max_time;           /* s */
    double mpjpe_root_mean;          /* m: the same with joints relative to the root (the pose
                                        alone: fb_track_metrics.mpjpe_root) */
    double root_pos_max;             /* m: the root's largest distance from the clip's path */
    double part_mean[FB_NPART], part_max[FB_NPART]; /* m */
    int limit_frames;                /* recorded frames with a torque limit bound */
    int nbound;                      /* axes in bound[]: the most often bound, most first */
    sim_bound bound[SIM_REPORT_BOUND_DOFS];
    /* The ground against the body (what a walk does that a tracked pose does not show): the
     * largest recorded ground force and its first time; the recorded frames after the first
     * and before any fall with no ground force at all (off the ground since the frame before),
     * those of them where the contact plan of the reference the tracker drives toward has a
     * foot or a toe on the ground (-1: that reference has no plan), and the longest run of
     * them (s, from the frame before it to its last). */
    double ground_peak;              /* N */
    double ground_peak_time;         /* s */
    int airborne_frames;             /* recorded frames */
    int airborne_planned;            /* recorded frames, or -1 */
    double airborne_longest;         /* s */
    fb_assist_totals assist;         /* what held or helped the root (fb_sim_root_support: a
                                        kinematic root's constraint, an assisted root's help) */
    double weight;                   /* N: the character's weight, mass times |gravity| */
    double assist_mean_force;        /* N: the helping force's mean over time (its impulse over
                                        the duration) */
    fb_fall fall;                    /* whether, when and why the character fell (cause
                                        FB_FALL_NONE: it did not) */
    int fall_frame;                  /* the first recorded frame marked fallen, or -1 */
    int ntop;
    int top_dof[SIM_REPORT_TOP_DOFS]; /* the dofs with the largest RMS torque, root excluded */
    double top_rms[SIM_REPORT_TOP_DOFS];
} sim_summary;

void sim_summarize(const fb_sim* s, const fb_model* m, sim_summary* out);

/* m: ground contacts this close count in the reference's ground residual (a foot within a
 * centimetre of the floor touches it with a small change of pose) */
#define SIM_RESIDUAL_MARGIN 0.01

/* What the ground cannot give the clip's grounded reference (fb_ref_ground_residual, contacts
 * within SIM_RESIDUAL_MARGIN, the world's friction, the balance planner's torque weight): the
 * least help that following it exactly would need. It is the reference a free or an assisted
 * root is driven toward (fb_sim_control_ref), but with a sampled reference (--sample,
 * --sample-load), whose offsets are targets for the feedback, not a motion to follow exactly
 * (they lift the feet off the ground), the grounded one they offset. */
typedef struct sim_residual {
    double mean_force;  /* N: the residual force's magnitude, mean over the reference's frames */
    double mean_torque; /* N m: the same for its torque about the root */
    int frames;         /* the reference's frames */
    int no_contact;     /* of them, those with no ground contact within the margin */
    bool sampled;       /* the run followed a sampled reference: these are the grounded one's */
} sim_residual;

/* The body's weight (N): its mass times the model's gravity. */
double sim_weight(const fb_model* m);

/* Computes *out and, when pct is not NULL, the residual force at every recorded frame (the
 * reference's frame nearest its time) as a percentage of `weight` (N); `sampled`: the run
 * followed a sampled reference (the grounded reference is then made here). False, and nothing
 * written, for a kinematic root or when it cannot be computed. */
bool sim_ground_residual(const fb_sim* s, const fb_model* m, fb_root_mode root, double weight,
                         bool sampled, sim_residual* out, double* pct);

/* The report's run's ground residual: info->residual when the job made it, else made here
 * (sim_ground_residual); pct as there. */
bool sim_report_residual(const fb_sim* s, const sim_report_info* info, const fb_model* m,
                         double weight, sim_residual* out, double* pct);

/* Whether a report's run followed a sampled reference (a search's, or a plan's). */
bool sim_report_sampled(const sim_report_info* info);

/* The fall in words: "fell at 1.23 s: root too low (0.41 m, the clip's 0.95 m)" or "fell at
 * 1.23 s: root tilted (64 deg from the clip's)"; "stayed up" when it did not fall and the
 * root could (assisted, free); "" for a kinematic root, which cannot fall. */
void sim_fall_text(const sim_summary* sm, fb_root_mode root, char* buf, size_t cap);

/* |impulse| of a hit, N s: the total impulse the ball gave the character. */
double sim_hit_impulse_norm(const fb_hit_result* r);

/* How well momentum balances over a hit: |ball_dp + impulse| / |impulse| (the ball's change
 * of momentum is minus the impulse it gave the character); 0 for a ball that missed. */
double sim_hit_momentum_mismatch(const fb_hit_result* r);

/* Fraction of a ball's impulse J a part took: its impulse along J over |J| (a body's share:
 * part = the impulse it received; the root's or the ground's: part = what they absorbed, so
 * -root_impulse). NaN when J is zero or the part unknown. */
double sim_hit_share(fb_v3 part, fb_v3 impulse);

/* The bodies ball k touched (fb_sim_hit_bodies), largest impulse first, into out (room for
 * the model's nbody); returns their count. */
int sim_hit_bodies_sorted(const fb_sim* s, int k, fb_hit_body* out);

/* The bodies ball k touched, in one line: "LeftElbow 2.89, LThumb 1.49, LeftShoulder 1.20 N s"
 * (largest impulse first, at most `most` of them, then "+N" for the others; "nothing" when it
 * missed). */
void sim_hit_where(const fb_sim* s, const fb_model* m, int k, int most, char* buf, size_t cap);

/* OUT.balls.json: per ball its hit, mass, radius, launch and one position per recorded frame
 * (null before the launch), moved by fb_sim_export_offset like the exported clip. Whole or not
 * at all. */
fb_status sim_balls_json(const fb_sim* s, const char* path, fb_error* err);

/* The report as JSON (format "featherbone-report", version 1): the run, the summary, each
 * hit's outcome, and the series over time. Whole or not at all. */
fb_status sim_report_json(const fb_sim* s, const sim_report_info* info, const char* path,
                          fb_error* err);

/* The same report as one self-contained HTML page (inline SVG, no scripts, no network). */
fb_status sim_report_html(const fb_sim* s, const sim_report_info* info, const char* path,
                          fb_error* err);

/* A fall time as words: "falls at 1.23 s", or "stands to the end" for NAN (none); buf. */
const char* sim_fall_words(double t, char* buf, size_t cap);

/* Writes text to path whole or not at all. */
fb_status text_save(const char* path, const char* text, fb_error* err);

#endif /* FB_TOOLS_SIM_REPORT_H */
