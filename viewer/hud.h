/* featherbone-view: text and the timeline over the scene (screen pixels, origin top-left).
 *
 * Text is stb_easy_font's vector font (Debian libstb-dev), drawn as quads from a buffer made
 * once at start; a frame allocates nothing. All colours are greys (see render.h). */
#ifndef FB_VIEW_HUD_H
#define FB_VIEW_HUD_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"

typedef struct hud hud;

/* What the HUD shows. */
typedef struct hud_state {
    double time, duration; /* s */
    int frame, nframe;
    double speed; /* playback speed asked for (x real time) */
    double rtf;   /* real-time factor achieved: seconds shown per wall second */
    double step_rtf; /* the simulation's own: simulated seconds per wall second of stepping
                        (0: not known, not shown) */
    bool playing;
    bool help; /* the key help box */
    bool ghost, ghost_offset, contacts, balance, follow;
    const char* ball;                /* the ball a click throws, or NULL */
    const char* lines[SOURCE_LINES]; /* the source's free lines (NULL or "" skipped) */
    const char* gains;               /* the gains editor's line, or NULL */
    const char* message;             /* one more line (what was clicked), or NULL */
} hud_state;

/* Needs a current GL 3.3 core context; NULL with a message in err on failure. */
hud* hud_create(char* err, size_t cap);
void hud_destroy(hud* h);

/* Draws the text block, the help box when asked, and the timeline, over a w x h framebuffer. */
void hud_draw(hud* h, int w, int h_px, const hud_state* s);

/* The timeline bar for a w x h framebuffer: true when pixel (x, y) is on it (with a few pixels
 * of slack), and the time fraction 0..1 under x. */
bool hud_timeline_at(int w, int h, double x, double y, double* frac);

/* The time fraction 0..1 under framebuffer x (clamped), wherever the cursor is vertically. */
double hud_timeline_frac(int w, int h, double x);

/* Pixel scale of the HUD for a framebuffer h pixels high (1 up to 720, then 2, ...). */
int hud_scale(int h);

#endif /* FB_VIEW_HUD_H */
