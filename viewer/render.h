/* featherbone-view: drawing a scene with OpenGL 3.3 core.
 *
 * The scene is a sky, a ground grid at y = 0, the character's shapes lit (Lambert with a
 * hemisphere ambient and a soft planar shadow), an optional translucent ghost of the reference
 * pose, balls, and contact points with normal-force arrows. Meshes and GL objects are made by
 * render_create, once; drawing a frame allocates nothing.
 *
 * Palette contract (tests/test_viewer.c relies on it): the sky, the ground, the grid, the
 * shadows and the HUD are greys (every channel within RENDER_GREY_CHROMA of the others), so
 * coloured pixels are the character, the balls, the contacts and the balance overlay. */
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
    bool balance;      /* the balance overlay: centre of mass, support polygon, help (B) */
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

/* The balance overlay, seen through the character (no depth test): in RENDER_BALANCE_RGB the
 * centre of mass as a small sphere with a line down to a disc on the ground, the planner's
 * target as a darker disc on the ground, and the force that holds or helps the root (a
 * kinematic root's, an assisted root's) as an arrow from the root (RENDER_ARROW_M_PER_N,
 * capped); in RENDER_SUPPORT_RGB the support polygon on
 * the ground (translucent, outlined). */
void render_balance(renderer* r, const source_balance* b);

/* The overlay's colours (0..1), which tests/test_viewer.c looks for. A cyan: in no other
 * colour drawn (bodies, ghost, contacts, force arrows, balls) do both green and blue exceed
 * red by 0.3. */
#define RENDER_BALANCE_R 0.02f
#define RENDER_BALANCE_G 0.80f
#define RENDER_BALANCE_B 0.84f
/* A violet-blue (hue 259 deg: blue highest, green lowest, (R - G) / (B - G) = 0.31), a hue no
 * other colour drawn has (the bodies' blue 218, the ghost's 200, ball 3's violet 307; the
 * others are red, yellow, green or cyan); blending with the grey ground keeps the hue. */
#define RENDER_SUPPORT_R 0.45f
#define RENDER_SUPPORT_G 0.20f
#define RENDER_SUPPORT_B 1.00f

/* Arrow length per newton of normal force (m/N), and the longest arrow (m). */
#define RENDER_ARROW_M_PER_N 0.001
#define RENDER_ARROW_MAX 1.5

#endif /* FB_VIEW_RENDER_H */
