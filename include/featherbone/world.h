/* featherbone: a world of articulations that touch the ground and each other, stepped in time
 * [Kokkevis §7]. See docs/CONSTRAINTS.md for the step and its tolerances.
 *
 * What collides: every articulation's shapes with the ground plane; a ball (an articulation of
 * spheres only) with the shapes of every other articulation; and, within one articulation,
 * only the pairs of bodies switched on with fb_world_set_self_collision (none by default).
 *
 * One step of length dt: ABA phase 1 and 2 with the caller's tau and f_ext; contact rows
 * (normal and two friction rows per touching contact) and joint-limit rows; K and a0; impacts
 * at the velocity level where a row approaches (restitution e, friction impulses); the force
 * LCP with Baumgarte targets; semi-implicit Euler (qd += h qdd, a floating joint's linear
 * velocity stepped in the world: fb_velocity_step; then q moves with the new qd).
 * A substep that makes a new contact deeper than pen_tol (or a new limit overshoot beyond
 * limit_tol) is undone and retried at half the length. A substep that leaves a joint of an
 * articulation not driven (fb_world_set_driven) past its range by more than limit_tol is
 * followed by a projection of the positions back within it (limit_projection: Cline's
 * post-stabilisation, the smallest step in the inertia's measure that keeps contacts from going
 * deeper). Everything is allocated by fb_world_create: stepping allocates nothing.
 *
 * Sleeping (as in [Box2D], [Bullet], [PhysX]: docs/REFERENCES.md): an articulation
 * allowed to (fb_world_set_sleep; none is by default) that stays still (every |qd| below
 * sleep_speed) for sleep_time falls asleep at the end of a step: qd and qdd are set to zero and
 * the step skips it (no ABA, no integration, no ground or self contacts, no rows) until it is
 * woken: by an awake articulation touching it (a ball), by fb_world_wake or
 * fb_world_set_sleep(.., false), or by the caller changing its q or qd. docs/CONSTRAINTS.md,
 * "Sleeping". */
#ifndef FEATHERBONE_WORLD_H
#define FEATHERBONE_WORLD_H

#include "base.h"
#include "collision.h"
#include "constraint.h"
#include "data.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fb_world_opts {
    double dt;                 /* s; default 1/480 */
    bool ground;               /* a ground plane; default true */
    fb_plane plane;            /* default y = 0 (a slope: any unit normal and offset) */
    double ground_mu;          /* friction of the ground; default 1 */
    double ground_restitution; /* default 0 */
    double contact_margin;     /* m: shapes closer than this count as touching; default 1e-3 */
    double limit_margin;       /* rad or m: same for joint limits; default 0.5 degree */
    double erp;                /* Baumgarte: a penetration relaxes at rate erp/h per second,
                                  critically damped; default 0.2 */
    double max_push_speed;     /* m/s: the fastest a penetration is pushed out (Baumgarte's
                                  spring sees at most the depth that gives this speed);
                                  default 0.5 */
    double max_limit_speed;    /* rad/s (m/s for prismatic joints): the same for a joint past
                                  its limit; default 1 */
    double pen_tol;            /* m: deepest new penetration a substep may make; default 1e-3 */
    double limit_tol;          /* rad: largest new limit overshoot; default 0.25 degree */
    int max_halvings;          /* shortest substep dt / 2^max_halvings; default 8 */
    double impact_speed;       /* m/s, rad/s: rows approaching faster get an impulse; 1e-3 */
    double bounce_speed;       /* m/s, rad/s: restitution applies only above this; 0.05 */
    double max_speed;          /* m/s, rad/s: a joint faster than this is a blow-up; 1e3 */
    int max_contacts;          /* default 256 */
    fb_pgs_opts pgs;           /* default fb_default_pgs_opts() with rel_tol 1e-8 */
    double sleep_speed;        /* rad/s or m/s: an articulation is still while every dof's |qd|
                                  is below this; default 0.01 */
    double sleep_time;         /* s it must stay still to fall asleep; default 0.5 */
    bool limit_projection;     /* a substep that leaves a joint past its range by more than
                                  limit_tol is followed by a projection of the positions back
                                  within it (Cline's post-stabilisation; articulations not
                                  driven); default true */
} fb_world_opts;

FB_API fb_world_opts fb_default_world_opts(void);

typedef struct fb_world_stats {
    int contacts;               /* touching contacts in the last substep */
    int limits;                 /* active joint-limit rows in the last substep */
    int rows;                   /* constraint rows in the last substep */
    int iterations;             /* PGS sweeps of the last force solve */
    double residual;            /* its LCP residual (m/s^2) */
    double max_penetration;     /* m, deepest contact after the last step */
    double max_limit_violation; /* rad or m, largest limit overshoot after the last step */
    int sleeping;               /* articulations asleep after the last step */
    /* accumulated since creation or fb_world_reset_stats */
    long steps, substeps, halvings, impacts;
    long aba_calls;             /* ABA runs: phases 1 and 2 of one articulation in a substep
                                   (an impact's redo of the velocity terms not counted) */
    long wakeups;               /* sleeping articulations woken */
    long projections;           /* limit projections (limit_projection), and those skipped */
    long projections_skipped;   /* (more than 64 contacts on the articulations to project) */
    double t_dynamics, t_collision, t_build, t_solve, t_total; /* s of wall time */
} fb_world_stats;

typedef struct fb_world fb_world;

/* When a hook runs within a substep. */
typedef enum fb_hook_phase {
    FB_HOOK_FORCES = 0, /* before dynamics: set tau (and f_ext) for this substep */
    FB_HOOK_ROWS = 1    /* after the contact and limit rows: add the caller's own rows */
} fb_hook_phase;

/* Called at both phases of every substep (t = its start time, h = its length); cs is the
 * constraint system to add rows to at FB_HOOK_ROWS (NULL at FB_HOOK_FORCES). A status other
 * than FB_OK stops the step with that error. A sleeping articulation (fb_world_asleep) takes
 * no rows (fb_csys_add_row returns FB_ESTATE) and its tau and f_ext are not read: a hook that
 * wants to drive one wakes it with fb_world_wake at FB_HOOK_FORCES; at FB_HOOK_ROWS the wake
 * counts from the next substep. */
typedef fb_status (*fb_world_hook)(void* user, fb_world* w, fb_hook_phase phase, double t,
                                   double h, fb_csys* cs, fb_error* err);

/* A world over `nart` articulations (models finalized, shared read-only; at most
 * FB_CSYS_MAX_ART). Makes one fb_data per articulation at its neutral configuration.
 * `opts` NULL = defaults. FB_EINVAL names a bad option. */
FB_API fb_world* fb_world_create(int nart, const fb_model* const* m, const fb_world_opts* opts,
                                 const fb_allocator* alloc, fb_error* err);
FB_API void fb_world_destroy(fb_world* w);

/* Makes dst what src is: every articulation's state, the contacts, the solver's warm starts,
 * sleep, impulses, time and counters, so that both step on alike bit for bit. dst keeps its
 * models (of the same shapes as src's: FB_EINVAL otherwise, nothing copied) and its hook. */
FB_API fb_status fb_world_copy(fb_world* dst, const fb_world* src, fb_error* err);

/* Articulation k's state and inputs (q, qd, tau, f_ext are the caller's to set). */
FB_API fb_data* fb_world_data(fb_world* w, int k);
FB_API const fb_model* fb_world_model(const fb_world* w, int k);
FB_API int fb_world_nart(const fb_world* w);
FB_API const fb_world_opts* fb_world_options(const fb_world* w);

/* Friction coefficient and restitution of articulation k's shapes. A contact uses the smaller
 * friction and the larger restitution of its two sides. Defaults mu 1, e 0. */
FB_API fb_status fb_world_set_material(fb_world* w, int k, double mu, double restitution,
                                       fb_error* err);

/* Rolling resistance of articulation k's shapes on the ground (m, 0 to 0.1; default 0: none):
 * a body that touches the ground at one point only (a capsule head, a ball) resists rolling
 * there with a torque up to `length` times the normal force (fb_contact_rolling_rows). A body
 * touching at two points or more is held from rolling by them, but for rolling about the line
 * through them, which is left free. docs/CONSTRAINTS.md, "Rolling resistance". */
FB_API fb_status fb_world_set_rolling(fb_world* w, int k, double length, fb_error* err);

/* Self-collision: which pairs of bodies of one articulation collide with each other. All pairs
 * are off when the world is created (a character's capsules overlap at its joints, and often
 * elsewhere at rest). With a pair on,
 * every shape of one body is tested against every shape of the other (fb_collide_shape_pair:
 * sphere, capsule and box pairs except box against box, which gives no contact) and the
 * contacts get rows like any other, with friction and restitution of articulation art.
 * Switch pairs between steps; the table was allocated by fb_world_create, so this and the
 * step allocate nothing. Contacts count against max_contacts.
 *
 * fb_world_set_self_collision sets the pair (body_a, body_b) of articulation `art`; bodies
 * 1..nbody-1, in either order. FB_EINVAL names the bad argument (art, body_a, body_b, or
 * body_b equal to body_a). */
FB_API fb_status fb_world_set_self_collision(fb_world* w, int art, int body_a, int body_b,
                                             bool on, fb_error* err);

/* Sets every pair of bodies of articulation `art` that are not parent and child (whose
 * capsules overlap at their joint by construction) to `on`; parent-child pairs keep their
 * setting. FB_EINVAL for a bad art. */
FB_API fb_status fb_world_set_self_collision_nonadjacent(fb_world* w, int art, bool on,
                                                         fb_error* err);

/* Switches off every pair of articulation `art` whose shapes touch (within contact_margin) at
 * its current configuration (d->q), and counts them in *cleared (may be NULL). Called with the
 * character in its rest pose after fb_world_set_self_collision_nonadjacent, it leaves on only
 * the pairs that start apart: a capsule humanoid's spine segments two apart, its clavicles, or
 * hands hanging against the thighs overlap at rest, and a pair that overlaps at rest would be
 * pushed apart for ever. Runs position kinematics on the articulation's data. FB_EINVAL for a
 * bad art. */
FB_API fb_status fb_world_clear_self_collision_touching(fb_world* w, int art, int* cleared,
                                                        fb_error* err);

/* Whether the pair collides (false for indices out of range). */
FB_API bool fb_world_self_collision(const fb_world* w, int art, int body_a, int body_b);

FB_API void fb_world_set_hook(fb_world* w, fb_world_hook hook, void* user);

/* The user pointer of the hook installed (NULL when none is). */
FB_API void* fb_world_hook_user(const fb_world* w);

/* Whether articulation art may sleep (none may when the world is created). Allowed, it falls
 * asleep at the end of a step once it has been still (every |qd| < sleep_speed) for sleep_time,
 * together with every awake articulation it touches (all of them must be allowed and still
 * that long: an island sleeps whole, as in Box2D). Disallowing wakes it. FB_EINVAL for a bad
 * art. */
FB_API fb_status fb_world_set_sleep(fb_world* w, int art, bool allowed, fb_error* err);

/* Whether a hook drives articulation art's joints toward a motion (a tracker; none is by
 * default). A driven articulation's joint limits are stopped in the constraint-force solve,
 * together with the hook's rows, rather than by an impulse before it: the impulse solve leaves
 * the hook's rows out, so it would stop the joint on a passive chain and the hook's own braking
 * toward the stop would then count twice. Not driven, a limit is an impact as in Kokkevis §5
 * (restitution 0): a limp body's chain is passive. docs/CONSTRAINTS.md, "Joint limits".
 * FB_EINVAL for a bad art. */
FB_API fb_status fb_world_set_driven(fb_world* w, int art, bool driven, fb_error* err);

/* Whether articulation art is driven (false for an index out of range). */
FB_API bool fb_world_driven(const fb_world* w, int art);

/* Whether articulation art sleeps (false for an index out of range). While it does, its q is
 * constant, its qd and qdd are zero, its time advances with the world's; its tau and f_ext are
 * ignored. */
FB_API bool fb_world_asleep(const fb_world* w, int art);

/* Wakes articulation art (awake, its still time restarts); it may fall asleep again after
 * sleep_time still. Call it before changing what drives a sleeper (tau, f_ext, a hook's rows). A change
 * of its q or qd between steps wakes it by itself at the next step. From a hook: at
 * FB_HOOK_FORCES it wakes for this substep (its contacts are made again before the rows), at
 * FB_HOOK_ROWS from the next one. FB_EINVAL for a bad art. */
FB_API fb_status fb_world_wake(fb_world* w, int art, fb_error* err);

/* Advances every articulation by dt. On a blow-up (a non-finite or runaway joint velocity)
 * the state is left at the last good substep and FB_ENUMERIC names the time, articulation
 * and joint. FB_ECAPACITY when contacts overflow max_contacts. */
FB_API fb_status fb_world_step(fb_world* w, fb_error* err);

/* Time of the world (s). */
FB_API double fb_world_time(const fb_world* w);

/* Sets the world's clock (and every articulation's d->time) to t, and marks every
 * articulation's derived quantities stale: for a caller that has just set the state (q, qd) to
 * continue another simulation's from time t. */
FB_API void fb_world_set_time(fb_world* w, double t);

/* The touching contacts of the last substep; fb_world_contact_force gives the normal force
 * contact k carried (N, the multiplier of its normal row; 0 for an index out of range). */
FB_API const fb_contact* fb_world_contacts(const fb_world* w, int* n);
/* The contacts at the current state, which the next substep starts from (in a
 * FB_HOOK_FORCES hook: those of the substep about to run). */
FB_API const fb_contact* fb_world_contacts_current(const fb_world* w, int* n);
FB_API double fb_world_contact_force(const fb_world* w, int k);
/* The linear impulse (N s, world axes) articulation art_b (-1: the ground) gave articulation
 * art_a through contacts over the last fb_world_step: impact impulses plus the contact forces
 * (normal and friction) times each accepted substep's length. Zero for indices out of
 * range. */
FB_API fb_v3 fb_world_pair_impulse(const fb_world* w, int art_a, int art_b);
/* The same for one body: the linear impulse (N s, world axes) articulation art_b (-1: the
 * ground; art_a itself: self-collision) gave body body_a of articulation art_a through contacts
 * over the last fb_world_step. Summed over art_a's bodies it is fb_world_pair_impulse (to
 * rounding). Zero for indices out of range. */
FB_API fb_v3 fb_world_body_impulse(const fb_world* w, int art_a, int body_a, int art_b);
/* (nv of articulation art) The generalised impulse of its joint forces over the last
 * fb_world_step: the tau the caller set for each accepted substep times its length, plus the
 * multipliers of the caller's dof rows (FB_ROW_DOF, added by a hook) times it; a floating
 * joint's entries are the wrench [n; f] in body coordinates. NULL for an index out of range. */
FB_API const double* fb_world_joint_impulse(const fb_world* w, int art);

/* The constraint system of the last substep (rows, K, multipliers), for inspection. */
FB_API const fb_csys* fb_world_csys(const fb_world* w);

FB_API const fb_world_stats* fb_world_get_stats(const fb_world* w);
FB_API void fb_world_reset_stats(fb_world* w);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_WORLD_H */
