/* featherbone-view: where the pictures come from.
 *
 * The viewer draws whatever a source shows at a time t: a character (model + pose), the mocap
 * pose it should follow (the ghost), balls, contacts with their forces, and a few lines of
 * numbers for the HUD. Render, camera and HUD know only this interface. Two implementations:
 * source_sim.c steps the simulation `featherbone simulate` runs (fb_sim: the character tracking
 * the clip with its gains, hit by balls), and source_clip.c plays the clip back without
 * physics (--playback). source.c picks one and loads the clip and character for both.
 *
 * Time runs from 0 to source_info().duration. Moving forward advances the source; moving
 * backwards is allowed (scrubbing) and costs the simulation a restart and a replay. */
#ifndef FB_VIEW_SOURCE_H
#define FB_VIEW_SOURCE_H

#include <stdbool.h>

#include <stddef.h>

#include "featherbone/featherbone.h"

/* Free HUD lines a source fills (tracking error, last hit, gains file state, balance or the
 * fall, ...). */
#define SOURCE_LINES 5
#define SOURCE_LINE_MAX 128

/* How to open a source. Zero-initialise, then set clip. */
typedef struct source_opts {
    const char* clip;  /* the mocap clip (BVH, or anything Assimp imports) */
    const char* rules; /* character rules; NULL = the bundled data/character_rules.json */
    double scale;      /* metres per clip file unit; 0 = detect */
    bool lossless;     /* every rotating joint a ball joint (no hinges, no drops) */
    bool playback;     /* the clip without physics (source_clip.c) */
    const char* gains; /* gains file, re-read when it changes; NULL = `gains init` defaults */
    int strength;      /* those defaults' strength (fb_strength; 0, the default: the mean) */
    int root;          /* those defaults' root mode (fb_root_mode; 0, the default: kinematic) */
    const fb_hit* hit; /* hits planned from the start (--hit), nhit of them */
    int nhit;
    const char* sample_plan; /* --sample-load: follow the offsets a search kept (simulate
                                --sample-save); NULL = none */
} source_opts;

/* A ball to draw. */
typedef struct source_ball {
    fb_v3 centre;  /* world, m */
    double radius; /* m */
    float rgba[4];
} source_ball;

/* The balance overlay (B): the centre of mass, the support polygon of a free root's balance
 * planner, what holds or helps the root (a kinematic root's constraint, an assisted root's
 * help). World axes, m; the ground is y = 0. */
typedef struct source_balance {
    bool com_known;   /* com is given */
    fb_v3 com;        /* the character's centre of mass */
    bool planner;     /* the balance planner ran in the last substep (free root, accel
                         controller, not fallen): com_target is given */
    fb_v3 com_target; /* where it steered the centre of mass */
    int nsupport;     /* vertices of the support polygon (fb_balance_info.support: the convex
                         hull of the planner's support points across gravity), counter-clockwise
                         seen from above, on the ground (y = 0); 0 without the planner or with
                         fewer than three points */
    fb_v3 support[FB_BALANCE_MAX_POINTS];
    double margin;    /* m: the planner's margin of the centre of mass inside the polygon
                         (negative: outside; NAN: none) */
    bool assist;      /* something held or helped the root in the last step */
    fb_v3 assist_at;  /* the root body's origin */
    fb_v3 assist_force; /* N, that force (fb_sim_root_support) */
    fb_fall fall;     /* the tracker's fall (cause FB_FALL_NONE: standing, or no tracker) */
} source_balance;

/* What the source shows now. Every pointer is borrowed until the next call on the source. */
typedef struct source_view {
    double time; /* s */
    int frame;   /* the clip frame at this time (nearest) */

    const fb_model* model; /* the character */
    const fb_data* data;   /* its pose; position kinematics current (fb_kinematics_pos) */
    const fb_data* ghost;  /* the reference pose of the same model (kinematics current), or
                              NULL when there is none */

    const source_ball* ball; /* (nball) */
    int nball;

    /* contacts as the library reports them; art_model/art_data resolve their articulation
     * indices (art_a, art_b) to the model and pose their body points are given in */
    const fb_contact* contact;   /* (ncontact) */
    const double* contact_force; /* (ncontact) normal force, N; NULL = not known */
    int ncontact;
    const fb_model* const* art_model; /* (nart) */
    const fb_data* const* art_data;   /* (nart) */
    int nart;

    source_balance balance; /* the balance overlay */

    char line[SOURCE_LINES][SOURCE_LINE_MAX]; /* free HUD lines; empty ones are skipped */
} source_view;

/* Fixed facts about a source. */
typedef struct source_info {
    double duration;   /* s, the last time there is */
    double frame_time; /* s between clip frames: one single step */
    int nframe;        /* clip frames */
    fb_v3 lo, hi;      /* world box the character covers over the whole clip (for framing) */
    char name[128];    /* shown in the window title */
} source_info;

typedef struct source source;

/* Opens a source (loads the clip, builds the character) and shows time 0. Returns NULL and
 * fills err on failure: FB_EIO for an unreadable file, FB_EINVAL for a malformed one. */
source* source_open(const source_opts* opts, fb_error* err);

/* Frees the source. NULL does nothing. */
void source_close(source* s);

/* Moves to time t (clamped to [0, duration]). FB_ENUMERIC or another status when the source
 * cannot get there (a simulation that blew up); it then keeps showing its last good state. */
fb_status source_advance_to(source* s, double t, fb_error* err);

/* What is shown now, and the fixed facts. */
const source_view* source_get_view(const source* s);
const source_info* source_get_info(const source* s);

/* A ball thrown from the eye at a point on a body (both world, m). */
typedef struct source_throw_spec {
    int body;     /* the body the point is on */
    fb_v3 point;  /* where the ball should strike it */
    fb_v3 eye;    /* where the ball comes from */
    double speed; /* m/s */
    double mass;  /* kg */
    double radius; /* m */
} source_throw_spec;

/* Throws a ball now. False with the reason in msg (clip playback has no physics; too late in
 * the clip; the take is full); true with what was thrown in msg. */
bool source_throw(source* s, const source_throw_spec* t, char* msg, size_t cap);

/* Forgets the balls thrown so far and restarts from time 0. */
void source_clear_throws(source* s, char* msg, size_t cap);

/* Looks for changes of the inputs it watches (the gains file) and takes them in; false when
 * nothing changed. The state is in the HUD lines. */
bool source_poll(source* s);

/* Writes the whole take (the clip tracked with every hit so far, to its end) as
 * PREFIX.bvh, PREFIX.balls.json and PREFIX.hits.json. False with the reason in msg. */
bool source_export(source* s, const char* prefix, char* msg, size_t cap);

/* Simulated seconds per wall-clock second spent stepping, smoothed (0 = unknown). */
double source_step_rtf(const source* s);

/* ---- gains (the simulation's; clip playback has none) -------------------------------------- */

/* The gains in force, or NULL (clip playback). */
const fb_gains* source_gains(const source* s);

/* The gains file watched (--gains), or NULL. */
const char* source_gains_path(const source* s);

/* Restarts the take with gains g and replays it to the time shown, as a reload of the file
 * does (a new rate costs a new fit of the clip). False with the reason in msg, the gains in
 * force unchanged. */
bool source_set_gains(source* s, const fb_gains* g, char* msg, size_t cap);

/* Writes the gains in force to path with the library's writer (whole or not at all). When
 * path is the watched file, the watch takes what was written as read. False with the reason
 * in msg. */
bool source_save_gains(source* s, const char* path, char* msg, size_t cap);

/* While held (unsaved edits in the window), a changed gains file that reads is not applied:
 * source_poll returns true once and source_pending_gains gives the file's gains until
 * source_drop_pending forgets them (taken: the caller put them in force; else the edits
 * were kept), or a save to the file does. */
void source_hold_reloads(source* s, bool hold);
const fb_gains* source_pending_gains(const source* s);
void source_drop_pending(source* s, bool taken);

/* The simulation shown (its recorded frames and hits, for plots), or NULL (clip playback).
 * Borrowed until the next call that moves or restarts the source. */
const fb_sim* source_sim(const source* s);

/* The hits' deviations the viewer shows at recorded frame `frame` of sim (fb_sim_nball of
 * them, m): root-relative (fb_sim_frame_hit_err_root: the pose alone, issue 18's measure) for
 * a free or an assisted root, which leave the clip's path; the world's for a kinematic root,
 * carried along it. */
const double* source_hit_err(const fb_sim* sim, fb_root_mode root, int frame);

#endif /* FB_VIEW_SOURCE_H */
