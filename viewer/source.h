/* featherbone-view: where the pictures come from.
 *
 * The viewer draws whatever a source shows at a time t: a character (model + pose), the mocap
 * pose it should follow (the ghost), balls, contacts with their forces, and a few lines of
 * numbers for the HUD. Render, camera and HUD know only this interface. Today's implementation
 * (source_clip.c) plays the clip back: the "simulated" character is the clip itself, posed by
 * interpolating fb_motion_from_clip at the clip rate. The simulation replaces it with an
 * implementation that steps a world, and nothing else in the viewer changes.
 *
 * Time runs from 0 to source_info().duration. Moving forward advances the source; moving
 * backwards is allowed (scrubbing) and may cost a restart and a replay for a simulation. */
#ifndef FB_VIEW_SOURCE_H
#define FB_VIEW_SOURCE_H

#include <stdbool.h>

#include "featherbone/featherbone.h"

/* Free HUD lines a source fills (tracking error, last hit, gains file state, ...). */
#define SOURCE_LINES 4
#define SOURCE_LINE_MAX 96

/* How to open a source. Zero-initialise, then set clip. */
typedef struct source_opts {
    const char* clip;  /* the mocap clip (BVH, or anything Assimp imports) */
    const char* rules; /* character rules; NULL = the bundled data/character_rules.json */
    double scale;      /* metres per clip file unit; 0 = detect */
    bool lossless;     /* every rotating joint a ball joint (no hinges, no drops) */
} source_opts;

/* A ball to draw. */
typedef struct source_ball {
    fb_v3 centre;  /* world, m */
    double radius; /* m */
    float rgba[4];
} source_ball;

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

/* Throws a ball from `from` (world, m) with velocity `vel` (m/s). False when this source
 * cannot (clip playback has no physics); the simulation will say yes. */
bool source_throw(source* s, fb_v3 from, fb_v3 vel);

#endif /* FB_VIEW_SOURCE_H */
