/* What the files of the world share (internal; the API is include/featherbone/world.h):
 *
 *   world.c  the world, its options and tables, collision, and the step [Kokkevis §7]
 *   sleep.c  sleeping: articulations at rest left out of the step, and woken again
 *
 * The step calls the sleep functions below at its start, at the start of every substep and at
 * its end. */
#ifndef FB_SIM_WORLD_INTERNAL_H
#define FB_SIM_WORLD_INTERNAL_H

#include "featherbone/world.h"

struct fb_world {
    fb_world_opts o;
    int nart;
    const fb_model* m[FB_CSYS_MAX_ART];
    fb_data* d[FB_CSYS_MAX_ART];
    double mu[FB_CSYS_MAX_ART], e[FB_CSYS_MAX_ART];
    double roll[FB_CSYS_MAX_ART]; /* m: rolling resistance of a single ground contact */
    bool has_shapes[FB_CSYS_MAX_ART];
    bool spheres_only[FB_CSYS_MAX_ART]; /* a ball: collides with every other articulation */
    uint8_t* self_on[FB_CSYS_MAX_ART];  /* (nbody x nbody) symmetric: 1 where bodies i and j of
                                           articulation k collide with each other */
    int nself[FB_CSYS_MAX_ART];         /* pairs switched on in self_on[k] */
    double* q_save[FB_CSYS_MAX_ART];
    double* qd_save[FB_CSYS_MAX_ART];
    double* q_pos[FB_CSYS_MAX_ART]; /* (nq) the q at which the world last made X_up, X_0 ... */
    bool pos_known[FB_CSYS_MAX_ART]; /* ... if it did */
    fb_csys* cs;
    fb_csys* post;                    /* the projection's rows (world_limits.c) */
    double* qd_post[FB_CSYS_MAX_ART]; /* (nv) qd and qdd kept across the projection */
    double* qdd_post[FB_CSYS_MAX_ART];
    fb_contact* con; /* touching contacts at the current state */
    int ncon;
    fb_contact* con_next; /* at the end of a substep, before it is accepted */
    int ncon_next;
    fb_contact* con_last; /* the contacts the last substep used, with rows con_row */
    int ncon_last;
    int* con_row;    /* (max_contacts) normal row of each contact in the last substep */
    double* vrow;    /* (rows) row velocities */
    double* vtarget; /* (rows) impulse targets */
    double* depth;   /* (rows) overlap of unilateral rows; NAN for the others */
    double* rest;    /* (rows) restitution of unilateral rows */
    int nrow_own;    /* rows of the last substep added by the world (contacts, limits) */
    /* linear impulse (N s, world) on articulation a from articulation b (index nart: the
     * ground) through contact rows: over the substep in progress, and over the last step */
    fb_v3 imp_sub[FB_CSYS_MAX_ART + 1][FB_CSYS_MAX_ART + 1];
    fb_v3 imp_step[FB_CSYS_MAX_ART + 1][FB_CSYS_MAX_ART + 1];
    /* the same per body: on body b of articulation a from articulation o (nart: the ground) at
     * index boff[a] + b (nart + 1) + o of bimp_sub / bimp_step (nbimp entries). Few are
     * non-zero in a step, so each keeps a list of its non-zero entries (bdirty_*, marked in
     * bmark_*) and clears only those */
    int boff[FB_CSYS_MAX_ART];
    int nbimp;
    fb_v3* bimp_sub;
    fb_v3* bimp_step;
    int* bdirty_sub;
    int* bdirty_step;
    int nbdirty_sub, nbdirty_step;
    uint8_t* bmark_sub;
    uint8_t* bmark_step;
    /* (nv of each articulation) generalised impulse of its joint forces (d->tau) and the
     * caller's dof rows: over the substep in progress and over the last step */
    double* jimp_sub[FB_CSYS_MAX_ART];
    double* jimp_step[FB_CSYS_MAX_ART];
    uint8_t* held[FB_CSYS_MAX_ART]; /* (nv) scratch: dofs a caller's row holds (joint friction) */
    /* sleeping (sleep.c) */
    bool sleep_ok[FB_CSYS_MAX_ART];   /* fb_world_set_sleep: articulation k may sleep */
    bool asleep[FB_CSYS_MAX_ART];     /* k sleeps: the step skips it */
    bool driven[FB_CSYS_MAX_ART];     /* fb_world_set_driven: k's limits stop in the force solve */
    bool wake_due[FB_CSYS_MAX_ART];   /* woken after its substep's ABA: wakes at the next */
    double still[FB_CSYS_MAX_ART];    /* s that k has been still (every |qd| < sleep_speed) */
    double* q_sleep[FB_CSYS_MAX_ART]; /* (nq) k's q when it fell asleep */
    bool aba_done;                    /* the substep in progress has run its ABA */
    bool recollide;                   /* an articulation woke: its contacts are to be made */
    double time;
    fb_world_hook hook;
    void* user;
    fb_world_stats st;
    fb_allocator alloc;
    void* block;
};

/* Wakes articulation k now (nothing if awake): its still time restarts, it takes rows and the
 * step runs it again; w->recollide asks for its contacts. */
void fb_sleep_wake(fb_world* w, int k);

/* At the start of a step: wakes every sleeper whose q or qd the caller changed. */
void fb_sleep_wake_moved(fb_world* w);

/* At the start of a substep, before its hook: wakes the sleepers woken too late for the last
 * substep, and every sleeper touching an awake articulation in w->con (and what those touch,
 * the island). Any that woke set w->recollide: their ground and self contacts are to be made. */
void fb_sleep_wake_touching(fb_world* w);

/* At the end of a step: the still time of each articulation that may sleep, and those still
 * for sleep_time, with everything awake they touch, fall asleep (qd = qdd = 0). */
void fb_sleep_settle(fb_world* w);

/* Whether articulation k's X_up and X_0 are those of its current q, made by the world
 * (world.c): phase 1 of ABA may then take them (fb_aba_phase1_at_positions). */
bool fb_world_positions_current(const fb_world* w, int k);

/* ---- joint limits (world_limits.c) ---- */

/* At most three limit constraints per joint: a spherical joint's swing and both twist stops,
 * or a hinge's two stops. */
#define FB_LIMIT_KINDS 3

typedef struct fb_limit_c {
    fb_v3 n;      /* row weights over the joint's dofs (pushing back into the range) */
    double depth; /* overshoot (> 0 outside the range) */
} fb_limit_c;

typedef fb_status (*fb_limit_fn)(fb_world* w, int art, int body, int kind, const fb_limit_c* c,
                                 void* ctx, fb_error* err);

/* Calls fn for every limit constraint of every limited joint of every articulation awake, at
 * the current positions. */
fb_status fb_world_for_each_limit(fb_world* w, fb_limit_fn fn, void* ctx, fb_error* err);

/* A limit_fn: ctx is double[3], overshoot[0] the largest of a limit without a row in the last
 * substep, [1] the largest of all, [2] the largest of an articulation not driven. */
fb_status fb_world_note_overshoot(fb_world* w, int art, int body, int kind, const fb_limit_c* c,
                                  void* ctx, fb_error* err);

/* A limit_fn: the substep's row (in w->cs) of a limit within limit_margin of its stop. */
fb_status fb_world_add_limit_row(fb_world* w, int art, int body, int kind, const fb_limit_c* c,
                                 void* ctx, fb_error* err);

/* Moves the positions of every articulation awake and not driven back within its limits, by
 * the smallest step in the inertia's measure that keeps its contacts from going deeper
 * (Cline's post-stabilisation); velocities unchanged. w->con must be the contacts at the
 * current positions; the caller makes them anew after. */
fb_status fb_world_post_stabilize(fb_world* w, fb_error* err);

/* Joint friction (world_limits.c): after the caller's rows (from row `from` of w->cs on), one
 * row per dof of every articulation awake and not driven whose joint has friction
 * (fb_model_set_friction) and that no caller's dof row holds, bounded by the friction, aiming
 * to stop the dof within the substep (the step sets the target); their depth and restitution
 * are the caller's to set. */
fb_status fb_world_add_friction_rows(fb_world* w, int from, fb_error* err);

/* Whether row is one of fb_world_add_friction_rows'. */
bool fb_world_is_friction_row(const fb_row* row);

/* ---- contacts (world_contacts.c) ---- */

/* Rolling resistance (fb_world_set_rolling) for the ground contact w->con[k], whose normal row
 * is r0 of w->cs: a body touching at one point resists rolling about both tangent axes; at two,
 * each contact about the line through them, which they leave free; at more, they hold it. */
fb_status fb_world_add_rolling_rows(fb_world* w, int k, int r0, fb_error* err);

#endif /* FB_SIM_WORLD_INTERNAL_H */
