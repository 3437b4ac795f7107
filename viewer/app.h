/* featherbone-view: the application state shared by the headless and interactive paths. */
#ifndef FB_VIEW_APP_H
#define FB_VIEW_APP_H

#include <stdbool.h>

#include "camera.h"
#include "gl.h"
#include "hud.h"
#include "render.h"
#include "source.h"

/* Process exit codes: the CLI's three, and one for "no OpenGL here" so scripts and the test
 * can tell a machine without a display or GL 3.3 from a failure of the viewer. */
enum { VIEW_EXIT_OK = 0, VIEW_EXIT_FAIL = 1, VIEW_EXIT_USAGE = 2, VIEW_EXIT_NO_GL = 3 };

/* Playback speeds (x real time): halved and doubled by - and + within this range. */
#define VIEW_SPEED_MIN 0.25
#define VIEW_SPEED_MAX 4.0

typedef struct app {
    source* src;
    renderer* r;
    hud* hud;
    GLFWwindow* win;
    camera cam;
    render_flags flags;
    bool show_hud;

    double t;     /* s, the time shown */
    double speed; /* x real time */
    bool playing;
    bool help;
    double rtf; /* achieved real-time factor, smoothed */
    char message[SOURCE_LINE_MAX + 32];

    /* mouse */
    bool orbiting, panning, scrubbing, pressed;
    double mx, my;           /* cursor, window coordinates */
    double press_x, press_y; /* where the left button went down */
    bool moved;              /* the cursor went further than a click since then */
} app;

/* Draws the scene and the HUD for the app's current state into the bound framebuffer. */
void app_draw(app* a, int w, int h);

/* Moves to time t, reporting a source failure in the message line (and pausing). */
void app_seek(app* a, double t);

/* The point the camera follows: the root body's origin, on the ground. */
fb_v3 app_follow_point(const app* a);

/* Runs the window until it is closed or Esc. Returns the exit code. */
int app_run_interactive(app* a);

#endif /* FB_VIEW_APP_H */
