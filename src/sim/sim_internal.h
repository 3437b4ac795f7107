/* What the simulation's files share (src/sim/sim.c: create, step, record; sim_export.c: the
 * simulated clip written back in the input's skeleton; sim_copy.c: one simulation copied into
 * another; sim_outcome.c: what each hit did): the fb_sim object; and the sampling search's
 * options' check (sample_opts.c, for sample.c). Not installed. */
#ifndef FB_SIM_INTERNAL_H
#define FB_SIM_INTERNAL_H

#include "featherbone/sim.h"

/* Where a ball waits before its launch: far from the character and from each other, high
 * above the ground (m). */
#define PARK_X 1000.0
#define PARK_SPACING 10.0
#define PARK_Y 100.0

/* A ball's three translation bodies carry this fraction of its mass each (the model needs
 * positive masses; see ball_model). */
#define BALL_CARRIER_FRACTION 1e-9

struct fb_sim {
    const fb_clip* clip;
    const fb_character* ch;
    fb_sim_opts o;
    const fb_ref* ref;
    fb_ref* own_ref; /* the reference when fitted here (NULL when opts.ref lent one) */
    fb_ref* ground_ref;    /* free or assisted root: the reference with its feet on the ground
                              that the tracker drives toward (fb_ref_grounded) when the options
                              lend none; NULL otherwise */
    const fb_ref* control; /* what the tracker drives toward: opts.control or ground_ref */
    fb_world* w;
    fb_tracker* tr;
    double dt;      /* world step (s) */
    double clip_dt; /* recording interval (s) */
    int nball;      /* balls in use: the hits given, then those added by fb_sim_add_hit */
    int nslot;      /* balls in the world: nball + the spare ones not yet used */
    fb_v3 forward;  /* the character's forward in its root body's axes, for the hits' directions */
    fb_model* ball_m[FB_SIM_MAX_BALLS];
    fb_v3 ball_mass[FB_SIM_MAX_BALLS]; /* kg: the mass each of a ball's world-axis joints moves
                                          (ball_axis_mass) */
    bool launched[FB_SIM_MAX_BALLS];
    fb_hit_result hit[FB_SIM_MAX_BALLS];
    fb_part* part;      /* (nbody) */
    int part_count[FB_NPART];
    double* body_err;   /* (nbody) scratch */
    fb_data* refd;      /* the reference pose, for aim points */
    double* tmp;        /* (nv) scratch of fb_ref_at */
    int nrec, rec_cap;
    fb_sim_frame* frames; /* (rec_cap) */
    double* rec_q;        /* (rec_cap x nq) */
    double* rec_tau;      /* (rec_cap x nv) */
    double* rec_balls;    /* (rec_cap x nslot x 3) */
    double* rec_mpjpe;    /* (rec_cap) scratch of finish() */
    double* rec_target;   /* (rec_cap x 2 x nslot): how far each hit's aim point on its body is
                             from where the clip puts it, in the world (nslot), then each in
                             its root's axes (nslot) */
    fb_v3 imp_ground;                /* N s since the last recorded frame: ground on the */
    fb_v3 imp_ball[FB_SIM_MAX_BALLS]; /* character, and each ball on the character */
    double imp_time;                 /* s those cover */
    fb_hit_body* touch; /* (nslot x nbody) the bodies each ball touched, hit[k].nbody of them */
    int root;           /* the character's floating root on the world, or -1 */
    bool kinematic_root; /* a floating root the tracker's rows carry along the clip */
    fb_v3 support_f, support_n;   /* a kinematic root's wrench in the last step (N, N m: the
                                     mean over the step, world axes; fb_sim_root_support) */
    fb_assist_totals support_tot; /* its totals since the start */
    /* the baseline: the character alone in a world of its own, tracked as in the simulation,
     * started from the simulation's state at a ball's first touch and stepped over that hit's
     * window, for what the root and the ground absorbed of it (NULL: none; never for a free
     * root, which has no support, and whose ground share would compare two walks) */
    fb_world* bw;
    fb_tracker* btr;
    int base_hit;     /* the hit it was started for, -1 none */
    bool baseline_ok; /* it has not failed since */
    double* pre_q;    /* (nq + nv) the character's q and qd before the step in progress */
    bool tau0;        /* frame 0's torques are those of the first step */
    bool finished;
};

/* Makes dst what src is, so that both step on alike bit for bit: the worlds, trackers,
 * balls, hits and the frames recorded. Both made by fb_sim_create with the same clip,
 * character, gains and hits and options alike but for the control reference (FB_EINVAL
 * otherwise, nothing copied). dst keeps its control reference and what its trackers derive
 * from it (the centre of mass path). Hits added since (fb_sim_add_hit) must be the same in
 * both. For a search that goes on from a saved simulation instead of simulating from the
 * start (src/sim/sample.c). */
fb_status fb_sim_copy(fb_sim* dst, const fb_sim* src, fb_error* err);

/* The control reference changed in place: the trackers redo what they derive from it, the
 * centre of mass path at frames [from, to) only (those changed that the simulation will read:
 * the caller knows). */
void fb_sim_control_changed(fb_sim* s, int from, int to);

/* A hit's peak is looked for within this long after it (s): the struck body is pushed away
 * within a few tenths of a second; later errors belong to the tracking, not to the hit. */
#define FB_SIM_HIT_WINDOW 1.0

/* Peak errors, recovery and hold times of every hit, from the recorded frames; marks the
 * simulation finished (src/sim/sim_outcome.c). */
void fb_sim_finish_hits(fb_sim* s);

/* The sampling search's bounds: simulations a window, threads (sample_opts.c checks them). */
#define FB_SAMPLE_MAX_SAMPLES 100000
#define FB_SAMPLE_MAX_THREADS 64

/* FB_OK when the search's options are within their ranges (sample_opts.c), else FB_EINVAL
 * naming the first that is not. */
fb_status fb_sample_check_opts(const fb_sample_opts* o, fb_error* err);

#endif
