/* featherbone-view: rendering off screen and writing PNG files.
 *
 * Headless frames go to a multisampled framebuffer object of the asked size (independent of
 * any window or X screen size), are resolved, read back, flipped to top-down rows and written
 * with stb_image_write to a temporary name that is then renamed, so an image appears whole or
 * not at all. */
#ifndef FB_VIEW_SHOT_H
#define FB_VIEW_SHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "gl.h"

typedef struct offscreen {
    int w, h, samples;
    GLuint fbo_ms, color_ms, depth_ms; /* where the frame is drawn (multisampled) */
    GLuint fbo, color;                 /* where it is resolved to and read from */
    unsigned char* pixels;             /* (h x w x 4) RGBA, top row first */
} offscreen;

/* Makes the framebuffers (up to 4 samples, fewer if the GL has fewer) and the pixel buffer.
 * False with a message in err when the size is beyond the GL's limits or a framebuffer is
 * incomplete. */
bool offscreen_create(offscreen* o, int w, int h, char* err, size_t cap);
void offscreen_destroy(offscreen* o);

/* Binds the multisampled framebuffer for drawing. */
void offscreen_bind(const offscreen* o);

/* Resolves, reads the frame into o->pixels (top row first). */
void offscreen_read(offscreen* o);

/* Writes w x h RGBA pixels (top row first) as a PNG at path via a temporary file and a
 * rename. False with a message in err on failure (nothing is left at path then). */
bool png_write_atomic(const char* path, const unsigned char* rgba, int w, int h, char* err,
                      size_t cap);

#endif /* FB_VIEW_SHOT_H */
