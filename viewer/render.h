/* featherbone-view: drawing a scene with OpenGL 3.3 core.
 *
 * The scene is a sky, a ground grid at y = 0, the character's shapes lit (Lambert with a
 * hemisphere ambient and a soft planar shadow), an optional translucent ghost of the reference
 * pose, balls, and contact points with normal-force arrows. Meshes and GL objects are made by
 * render_create, once; drawing a frame allocates nothing.
 *
 * Palette contract (tests/test_viewer.c relies on it): the sky, the ground, the grid, the
 * shadows and the HUD are greys (every channel within RENDER_GREY_CHROMA of the others), so
 * coloured pixels are the character, the balls and the contacts. */
#ifndef FB_VIEW_RENDER_H
#define FB_VIEW_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "camera.h"
#include "featherbone/featherbone.h"
#include "source.h"

/* Largest difference between the channels of a background pixel (0..255). */
#define RENDER_GREY_CHROMA 24

typedef struct renderer renderer;

/* What to draw. */
typedef struct render_flags {
    bool ghost;        /* the reference pose, translucent */
    bool ghost_offset; /* beside the character (offset along the view's right) instead of on it */
    bool contacts;     /* contact points and normal-force arrows */
    bool shadows;      /* planar shadows on the ground */
} render_flags;

render_flags render_default_flags(void);

/* Makes the meshes of m's shapes (in body coordinates), the unit meshes and the shaders.
 * Needs a current GL 3.3 core context. On failure returns NULL with a message in err. */
renderer* render_create(const fb_model* m, char* err, size_t cap);

/* Frees GL objects and memory. NULL does nothing. Needs the same context current. */
void render_destroy(renderer* r);

/* Draws view v from camera c into the bound framebuffer of w x h pixels (clears it first). */
void render_frame(renderer* r, const camera* c, int w, int h, const source_view* v,
                  const render_flags* f);

/* The parts of render_frame, for callers composing their own frame. All need
 * render_begin (matrices, state) first. */
void render_begin(renderer* r, const camera* c, int w, int h);
void render_sky(renderer* r);
void render_grid(renderer* r);
/* The model at pose d (kinematics current), moved by `offset` (world), with opacity alpha
 * (1 = solid, body colours; < 1 = ghost colour, drawn once per pixel). */
void render_model(renderer* r, const fb_model* m, const fb_data* d, fb_v3 offset, float alpha);
/* The model's shadow on the ground (pose d moved by offset). */
void render_shadow(renderer* r, const fb_model* m, const fb_data* d, fb_v3 offset);
void render_balls(renderer* r, const source_ball* b, int n);
/* Contact points (world point of side B, or of A when B is a body) and, when force is not
 * NULL, arrows along the normal scaled by RENDER_ARROW_M_PER_N (capped). */
void render_contacts(renderer* r, const fb_contact* c, const double* force, int n,
                     const fb_model* const* art_model, const fb_data* const* art_data, int nart);

/* Arrow length per newton of normal force (m/N), and the longest arrow (m). */
#define RENDER_ARROW_M_PER_N 0.001
#define RENDER_ARROW_MAX 1.5

#endif /* FB_VIEW_RENDER_H */
