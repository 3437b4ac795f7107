/* featherbone-view: --script FILE, timed input for tests, demos and screenshots.
 *
 * One event per line, `TIME ACTION [ARGS]`; `#` starts a comment. TIME is seconds on the
 * script's clock, which runs at a fixed 60 frames a second from the window's first frame
 * (playing at 1x from --time 0, it is the simulation's time). Actions:
 *   throw JOINT        click where the camera sees the centre of the body the clip joint
 *                      drives (a ball is thrown at whatever body is in front there)
 *   click X Y          click at window pixel (X, Y), origin top-left
 *   key NAME           a key: space right left r g o c b f h e p backspace escape, or one of the
 *                      characters [ ] { } + -
 *   zoom STEPS         zoom as STEPS clicks of the scroll wheel (negative: out)
 *   orbit YAW PITCH    turn the eye around its target by YAW and PITCH degrees
 *   screenshot PATH    write the window's frame as a PNG
 *   gain TARGET FIELD VALUE   set a gain through the gains panel's path (gains_edit.h):
 *                      TARGET a joint, a glob of joints (Left*), root, defaults or take;
 *                      VALUE a number or an enum's name; a refusal is reported, not fatal
 *   save-gains PATH    write the gains in force to PATH (whole or not at all)
 *   undo, redo         undo or redo the last gains edit
 *   select JOINT       show that joint in the gains panel
 *   panel on|off       open or close the gains panel
 *   mirror on|off      gains edits of a Left joint also set the Right one, and back
 *   quit               close the window (exit 0)
 * A script is read whole before the window opens; a bad line is an error naming the file and
 * the line. */
#ifndef FB_VIEW_SCRIPT_H
#define FB_VIEW_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#define SCRIPT_FPS 60.0
#define SCRIPT_ARG_MAX 1024

typedef enum script_action {
    SCRIPT_THROW,
    SCRIPT_CLICK,
    SCRIPT_KEY,
    SCRIPT_CHAR,
    SCRIPT_ZOOM,
    SCRIPT_ORBIT,
    SCRIPT_SCREENSHOT,
    SCRIPT_GAIN,
    SCRIPT_SAVE_GAINS,
    SCRIPT_UNDO,
    SCRIPT_REDO,
    SCRIPT_SELECT,
    SCRIPT_PANEL,
    SCRIPT_MIRROR,
    SCRIPT_QUIT
} script_action;

typedef struct script_event {
    double time; /* s on the script's clock */
    script_action action;
    int line;    /* in the file, for messages */
    double x, y; /* click; zoom: x; orbit: degrees */
    int key;     /* GLFW key code (SCRIPT_KEY) or character (SCRIPT_CHAR) */
    char arg[SCRIPT_ARG_MAX]; /* throw, select: the joint; screenshot, save-gains: the path;
                                 gain: the target */
    char field[64];           /* gain: the field */
    char value[64];           /* gain: the value, as written */
} script_event;

typedef struct script {
    char path[1024];
    script_event* ev; /* (n), in time order (stable: same-time events in file order) */
    int n;
    int next; /* the first event not run yet */
} script;

/* Reads a script. False with "PATH:LINE: what was expected" in err. */
bool script_load(const char* path, script* s, char* err, size_t cap);
void script_free(script* s);

#endif /* FB_VIEW_SCRIPT_H */
