/* featherbone-view: the application state shared by the headless and interactive paths. */
#ifndef FB_VIEW_APP_H
#define FB_VIEW_APP_H

#include <stdbool.h>

#include "camera.h"
#include "gl.h"
#include "hud.h"
#include "render.h"
#include "script.h"
#include "source.h"

/* Process exit codes: the CLI's three, and one for "no OpenGL here" so scripts and the test
 * can tell a machine without a display or GL 3.3 from a failure of the viewer. */
enum { VIEW_EXIT_OK = 0, VIEW_EXIT_FAIL = 1, VIEW_EXIT_USAGE = 2, VIEW_EXIT_NO_GL = 3 };

/* Playback speeds (x real time): halved and doubled by - and + within this range. */
#define VIEW_SPEED_MIN 0.25
#define VIEW_SPEED_MAX 4.0

/* The ball a click throws: speed (m/s) stepped by [ and ], mass (kg) scaled by { and }; the
 * radius follows the mass at a football's density (0.45 kg, 0.11 m). */
#define VIEW_BALL_SPEED 10.0
#define VIEW_BALL_SPEED_STEP 2.0
#define VIEW_BALL_SPEED_MIN 2.0
#define VIEW_BALL_SPEED_MAX 40.0
#define VIEW_BALL_MASS 0.45
#define VIEW_BALL_MASS_FACTOR 1.5
#define VIEW_BALL_MASS_MIN 0.05
#define VIEW_BALL_MASS_MAX 10.0
#define VIEW_BALL_RADIUS 0.11

struct gedit;
struct panel;

typedef struct app {
    source* src;
    struct gedit* edit;  /* the gains editor, or NULL (clip playback: no gains) */
    struct panel* panel; /* the gains panel (window only, and only when built), or NULL */
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
    char message[SOURCE_LINE_MAX + 96];
    double ball_speed, ball_mass; /* the ball a click throws */
    const char* export_prefix;    /* E writes PREFIX.bvh, ...; NULL = CLIP_takeN in the
                                     current directory */
    double poll_wall;             /* wall clock of the last look at the gains file */

    script* script; /* timed input events (--script), or NULL */
    bool script_wall_clock; /* --wall-clock: the script's times are wall-clock seconds */
    int script_rc;  /* exit code a script asks for (a screenshot that cannot be written: 1) */

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

/* Runs the window until it is closed or Esc (or the script's quit). Returns the exit code. */
int app_run_interactive(app* a);

/* The input actions, shared by the window's callbacks and --script: a key (GLFW key code), a
 * typed character, a click at window coordinates (x, y) (throws a ball at the body there). */
void app_key(app* a, int key);
void app_char(app* a, unsigned int c);
void app_click(app* a, double x, double y);
/* A right click: the joint of the body there to the gains panel (opened), no throw. */
void app_select(app* a, double x, double y);

/* Writes the frame the app shows now, at w x h pixels, as a PNG (whole or not at all).
 * Returns an exit code. */
int app_write_png(app* a, int w, int h, const char* path);

/* The radius of a thrown ball of the given mass (m). */
double app_ball_radius(double mass);

#endif /* FB_VIEW_APP_H */
