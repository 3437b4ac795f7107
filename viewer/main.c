/* featherbone-view: command line, window and GL setup, headless screenshots and image
 * sequences. The interactive loop is in interact.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app.h"
#include "gains_edit.h"
#include "panel.h"
#include "shot.h"
#ifdef FB_VIEW_PIN_LIBRARIES
#include "pin.h"
#endif

static const char USAGE[] =
    "usage: featherbone-view CLIP [options]\n"
    "\n"
    "Simulates the character built from a mocap clip tracking the clip, as `featherbone\n"
    "simulate` does, and shows it with the clip as a ghost, the balls, the ground and the\n"
    "contacts. Click the character to throw a ball at it. Without --screenshot or --frames it\n"
    "opens a window (keys: H in the window, or docs/VIEWER.md).\n"
    "\n"
    "The balance overlay (B toggles it, in cyan): the centre of mass (a sphere, with a line\n"
    "down to a disc on the ground), a free root's support polygon (the convex hull of the\n"
    "feet's ground contacts the balance planner holds) with the planner's target for the\n"
    "centre of mass (a darker disc), and what holds the root (a kinematic root) or helps it\n"
    "(an assisted root) as an arrow from the root (1 mm per N). Once the character fell the\n"
    "HUD says \"FALLEN at T s (cause)\".\n"
    "\n"
    "options:\n"
    "  --gains FILE        gains (default: those of `featherbone gains init`); the file is\n"
    "                      re-read when it changes, and a bad one leaves the last good gains\n"
    "  --strength WHO      without --gains: the default gains' torque limits from the mean\n"
    "                      of men's and women's strength (mean), men's or women's\n"
    "  --root MODE         without --gains: the default gains' root, kinematic (the\n"
    "                      default), assisted or free (nothing holds it up)\n"
    "  --hit SPEC          a planned hit, as for `featherbone simulate` (repeatable), e.g.\n"
    "                      time=1.2,target=LeftElbow,speed=10,mass=0.45,radius=0.11\n"
    "  --sample-load PLAN  a free or assisted root follows the offsets a search kept\n"
    "                      (`featherbone simulate --sample N --sample-save PLAN`): the\n"
    "                      walk `simulate` searched, without searching again\n"
    "  --playback          play the clip back without physics (no balls, no gains)\n"
    "  --export PREFIX     E writes PREFIX.bvh, PREFIX.balls.json, PREFIX.hits.json\n"
    "                      (default: CLIP_takeN in the current directory, never overwriting)\n"
    "  --script FILE       timed input events (throw, click, key, screenshot, gain,\n"
    "                      save-gains, undo, redo, quit; docs/VIEWER.md), on a fixed 60\n"
    "                      frames-per-second clock\n"
    "  --wall-clock        a script's times are wall-clock seconds (plays in real time;\n"
    "                      the frames shown then depend on the machine's speed)\n"
    "  --time T            start at T seconds (default 0)\n"
    "  --size WxH          window or image size in pixels (default 1280x720)\n"
    "  --screenshot OUT.png  draw the frame at --time off screen, write it, exit\n"
    "  --frames DIR        write every --every-th clip frame from --time to the end as\n"
    "                      DIR/frame_00000.png ... (DIR is made if missing), exit\n"
    "  --every N           with --frames: every N-th clip frame (default 1)\n"
    "  --ghost-offset      draw the reference pose beside the character, not on it\n"
    "  --no-hud            no text or timeline in the images\n"
    "  --no-balance        start with the balance overlay off (B turns it on)\n"
    "  --scale S           metres per clip file unit (default: detected)\n"
    "  --rules FILE        character rules (default: the bundled data/character_rules.json)\n"
    "  --lossless          no hinges and no dropped joints\n"
    "  -h, --help          this text\n"
    "\n"
    "Exit codes: 0 ok, 1 failure, 2 bad arguments or an unreadable clip, 3 no display or no\n"
    "OpenGL 3.3 (headless: run under xvfb-run -a).\n";

/* --help's last line: whether this build has the gains panel. */
static void print_usage(void) {
    fputs(USAGE, stdout);
    printf("\n%s\n", panel_build_info());
}

/* Sizes accepted for --size (pixels a side). */
#define VIEW_SIZE_MIN 16
#define VIEW_SIZE_MAX 8192
/* Initial camera pitch (rad): a little above the character, so the ground reads. */
#define VIEW_PITCH 0.22

typedef struct view_args {
    source_opts src;
    fb_hit hit[FB_SIM_MAX_BALLS];
    const char* script;
    const char* export_prefix;
    double time;
    int w, h;
    const char* screenshot;
    const char* frames;
    int every;
    bool ghost_offset, no_hud, no_balance;
    bool wall_clock;
    bool strength_given; /* --strength */
    bool root_given;     /* --root */
} view_args;

static int usage_error(const char* fmt, const char* a, const char* b) {
    fprintf(stderr, "featherbone-view: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n(featherbone-view --help for usage)\n");
    return VIEW_EXIT_USAGE;
}

static bool parse_double(const char* text, double* out) {
    char* end = NULL;
    const double v = text ? strtod(text, &end) : 0.0;
    if (!text || *text == '\0' || *end != '\0' || !isfinite(v)) {
        return false;
    }
    *out = v;
    return true;
}

static bool parse_size(const char* text, int* w, int* h) {
    char* end = NULL;
    if (!text) {
        return false;
    }
    const long a = strtol(text, &end, 10);
    if (end == text || (*end != 'x' && *end != 'X')) {
        return false;
    }
    const char* second = end + 1;
    const long b = strtol(second, &end, 10);
    if (end == second || *end != '\0' || a < VIEW_SIZE_MIN || b < VIEW_SIZE_MIN ||
        a > VIEW_SIZE_MAX || b > VIEW_SIZE_MAX) {
        return false;
    }
    *w = (int)a;
    *h = (int)b;
    return true;
}

/* Options that take a value; returns the exit code on error, -1 when `opt` is not one. */
static int take_value(view_args* a, const char* opt, const char* val) {
    if (!val) {
        return usage_error("%s: expected a value%s", opt, "");
    }
    if (strcmp(opt, "--time") == 0) {
        if (!parse_double(val, &a->time) || a->time < 0.0) {
            return usage_error("--time: expected seconds >= 0, found '%s'%s", val, "");
        }
    } else if (strcmp(opt, "--size") == 0) {
        if (!parse_size(val, &a->w, &a->h)) {
            return usage_error("--size: expected WxH with 16..8192 pixels a side, found '%s'%s",
                               val, "");
        }
    } else if (strcmp(opt, "--screenshot") == 0) {
        a->screenshot = val;
    } else if (strcmp(opt, "--frames") == 0) {
        a->frames = val;
    } else if (strcmp(opt, "--every") == 0) {
        double n = 0.0;
        if (!parse_double(val, &n) || n < 1.0 || n > 1e6 || n != floor(n)) {
            return usage_error("--every: expected a whole number >= 1, found '%s'%s", val, "");
        }
        a->every = (int)n;
    } else if (strcmp(opt, "--scale") == 0) {
        if (!parse_double(val, &a->src.scale) || !(a->src.scale > 0.0)) {
            return usage_error("--scale: expected a positive number, found '%s'%s", val, "");
        }
    } else if (strcmp(opt, "--rules") == 0) {
        a->src.rules = val;
    } else if (strcmp(opt, "--gains") == 0) {
        a->src.gains = val;
    } else if (strcmp(opt, "--strength") == 0) {
        a->src.strength = fb_choice_index(fb_strength_names, FB_NSTRENGTH, val);
        if (a->src.strength < 0) {
            return usage_error("--strength: expected mean, men or women, found '%s'%s", val, "");
        }
        a->strength_given = true;
    } else if (strcmp(opt, "--root") == 0) {
        a->src.root = fb_choice_index(fb_root_mode_names, FB_NROOT_MODE, val);
        if (a->src.root < 0) {
            return usage_error("--root: expected kinematic, assisted or free, found '%s'%s", val,
                               "");
        }
        a->root_given = true;
    } else if (strcmp(opt, "--sample-load") == 0) {
        a->src.sample_plan = val;
    } else if (strcmp(opt, "--script") == 0) {
        a->script = val;
    } else if (strcmp(opt, "--export") == 0) {
        a->export_prefix = val;
    } else if (strcmp(opt, "--hit") == 0) {
        fb_error err;
        if (a->src.nhit >= FB_SIM_MAX_BALLS) {
            char most[16];
            snprintf(most, sizeof most, "%d", FB_SIM_MAX_BALLS);
            return usage_error("--hit: at most %s hits%s", most, "");
        }
        if (fb_hit_parse(val, &a->hit[a->src.nhit], &err) != FB_OK) {
            return usage_error("--hit: %s%s", err.msg, "");
        }
        a->src.nhit++;
    } else {
        return -1;
    }
    return 0;
}

/* Fills a; returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(view_args* a, int argc, char** argv) {
    *a = (view_args){.w = 1280, .h = 720, .every = 1};
    bool every_given = false;
    for (int i = 1; i < argc; i++) {
        const char* opt = argv[i];
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            print_usage();
            return VIEW_EXIT_OK;
        } else if (strcmp(opt, "--ghost-offset") == 0) {
            a->ghost_offset = true;
        } else if (strcmp(opt, "--no-hud") == 0) {
            a->no_hud = true;
        } else if (strcmp(opt, "--no-balance") == 0) {
            a->no_balance = true;
        } else if (strcmp(opt, "--lossless") == 0) {
            a->src.lossless = true;
        } else if (strcmp(opt, "--playback") == 0) {
            a->src.playback = true;
        } else if (strcmp(opt, "--wall-clock") == 0) {
            a->wall_clock = true;
        } else if (opt[0] == '-' && opt[1] != '\0') {
            const int rc = take_value(a, opt, i + 1 < argc ? argv[i + 1] : NULL);
            if (rc == -1) {
                return usage_error("unknown option '%s'%s", opt, "");
            }
            if (rc != 0) {
                return rc;
            }
            every_given = every_given || strcmp(opt, "--every") == 0;
            i++;
        } else if (a->src.clip) {
            return usage_error("unexpected argument '%s' (the clip is '%s')", opt, a->src.clip);
        } else {
            a->src.clip = opt;
        }
    }
    if (!a->src.clip) {
        return usage_error("expected a CLIP file%s%s", "", "");
    }
    if (a->screenshot && a->frames) {
        return usage_error("--screenshot and --frames: give one of them%s%s", "", "");
    }
    if (every_given && !a->frames) {
        return usage_error("--every goes with --frames%s%s", "", "");
    }
    if (a->script && (a->screenshot || a->frames)) {
        return usage_error("--script runs the window: not with --screenshot or --frames%s%s", "",
                           "");
    }
    if (a->wall_clock && !a->script) {
        return usage_error("--wall-clock goes with --script%s%s", "", "");
    }
    if (a->src.playback && (a->src.gains || a->src.nhit > 0 || a->src.sample_plan ||
                            a->strength_given || a->root_given)) {
        return usage_error("--playback has no physics: no --gains, --strength, --root, --hit or "
                           "--sample-load with it%s%s",
                           "", "");
    }
    if (a->src.gains && a->strength_given) {
        return usage_error("--strength: the torque limits are the gains file's (--gains %s)%s",
                           a->src.gains, "; --strength makes the default gains'");
    }
    if (a->src.gains && a->root_given) {
        /* the file is watched and edits are saved to it: its root mode is the one in force */
        return usage_error("--root: the root's mode is the gains file's (--gains %s)%s",
                           a->src.gains, "; --root sets the default gains'");
    }
    a->src.hit = a->hit;
    return -1;
}

/* ---- GL ----------------------------------------------------------------------------------- */

static char glfw_error_text[256];

static void glfw_error(int code, const char* text) {
    snprintf(glfw_error_text, sizeof glfw_error_text, "%s (GLFW error 0x%x)", text, code);
}

/* Mesa's software rasterisers (llvmpipe, softpipe, swrast): no GPU. */
static bool software_renderer(void) {
    const char* r = (const char*)glGetString(GL_RENDERER);
    return r && (strstr(r, "llvmpipe") || strstr(r, "softpipe") || strstr(r, "swrast"));
}

/* A window with a current GL 3.3 core context; hidden for headless work. */
static GLFWwindow* open_window(const view_args* a, const char* title, bool headless) {
    glfwSetErrorCallback(glfw_error);
    if (!glfwInit()) {
        return NULL;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_VISIBLE, headless ? GLFW_FALSE : GLFW_TRUE);
    glfwWindowHint(GLFW_SAMPLES, headless ? 0 : 4);
    glfwWindowHint(GLFW_STENCIL_BITS, 8);
    glfwWindowHint(GLFW_DEPTH_BITS, 24);
    /* headless frames go to a framebuffer object of their own size; the window only holds the
     * GL context */
    GLFWwindow* win =
        glfwCreateWindow(headless ? 64 : a->w, headless ? 64 : a->h, title, NULL, NULL);
    if (!win) {
        glfwTerminate();
        return NULL;
    }
    glfwMakeContextCurrent(win);
    if (!headless && software_renderer()) {
        /* multisampling the window quadruples a software rasteriser's work (Mesa llvmpipe
         * under Xvfb: 55 against 24 ms a 960x540 frame): without it the window keeps up */
        glfwDestroyWindow(win);
        glfwWindowHint(GLFW_SAMPLES, 0);
        win = glfwCreateWindow(a->w, a->h, title, NULL, NULL);
        if (!win) {
            glfwTerminate();
            return NULL;
        }
        glfwMakeContextCurrent(win);
    }
    glfwSwapInterval(1);
#ifdef FB_VIEW_PIN_LIBRARIES
    pin_loaded_libraries(); /* the GL driver is loaded now */
#endif
    return win;
}

/* ---- drawing ------------------------------------------------------------------------------ */

static void draw_hud(app* a, int w, int h);

void app_seek(app* a, double t) {
    fb_error err = {0};
    if (source_advance_to(a->src, t, &err) != FB_OK) {
        snprintf(a->message, sizeof a->message, "stopped: %.100s", err.msg);
        a->playing = false;
    }
    a->t = source_get_view(a->src)->time;
}

fb_v3 app_follow_point(const app* a) {
    const source_view* v = source_get_view(a->src);
    const fb_v3 p =
        fb_point_pos(v->model, v->data, v->model->nbody > 1 ? 1 : 0, (fb_v3){0.0, 0.0, 0.0});
    return (fb_v3){p.x, 0.0, p.z};
}

void app_draw(app* a, int w, int h) {
    const source_view* v = source_get_view(a->src);
    render_frame(a->r, &a->cam, w, h, v, &a->flags);
    if (a->show_hud) {
        draw_hud(a, w, h);
    }
    panel_draw(a->panel);
}

/* The gains line of the HUD: unsaved edits, or how to edit (the editor's messages go to the
 * message line and the panel). */
static void gains_line(const app* a, char* out, size_t cap) {
    if (!a->edit) {
        out[0] = '\0';
    } else if (gedit_dirty(a->edit)) {
        const char* path = source_gains_path(a->src);
        snprintf(out, cap, "gains * unsaved edits%s%.80s", path ? " (Ctrl+S saves to " : "",
                 path ? path : "");
        if (path) {
            strncat(out, ")", cap - strlen(out) - 1);
        }
    } else if (!panel_available()) {
        snprintf(out, cap, "%s", panel_build_info());
    } else {
        snprintf(out, cap, "%s", a->panel ? "gains: P opens the panel; right-click a body for "
                                            "its joint" : "");
    }
}

static void draw_hud(app* a, int w, int h) {
    const source_view* v = source_get_view(a->src);
    const source_info* info = source_get_info(a->src);
    char ball[96];
    snprintf(ball, sizeof ball, "ball %.3g m/s  %.2g kg  r %.2f m   click to throw  [ ] speed  "
             "{ } mass", a->ball_speed, a->ball_mass, app_ball_radius(a->ball_mass));
    hud_state s = {.time = v->time,
                   .duration = info->duration,
                   .frame = v->frame,
                   .nframe = info->nframe,
                   .speed = a->speed,
                   .rtf = a->rtf,
                   .step_rtf = source_step_rtf(a->src),
                   .ball = ball,
                   .playing = a->playing,
                   .help = a->help,
                   .ghost = a->flags.ghost,
                   .ghost_offset = a->flags.ghost_offset,
                   .contacts = a->flags.contacts,
                   .balance = a->flags.balance,
                   .follow = a->cam.follow,
                   .message = a->message[0] ? a->message : NULL};
    char gains[160];
    gains_line(a, gains, sizeof gains);
    s.gains = gains;
    for (int k = 0; k < SOURCE_LINES; k++) {
        s.lines[k] = v->line[k];
    }
    hud_draw(a->hud, w, h, &s);
}

/* ---- headless ----------------------------------------------------------------------------- */

int app_write_png(app* a, int w, int h, const char* path) {
    char err[512];
    offscreen o;
    if (!offscreen_create(&o, w, h, err, sizeof err)) {
        fprintf(stderr, "featherbone-view: %s\n", err);
        return VIEW_EXIT_FAIL;
    }
    offscreen_bind(&o);
    app_draw(a, o.w, o.h);
    offscreen_read(&o);
    const bool ok = png_write_atomic(path, o.pixels, o.w, o.h, err, sizeof err);
    offscreen_destroy(&o);
    if (!ok) {
        fprintf(stderr, "featherbone-view: %s\n", err);
        return VIEW_EXIT_FAIL;
    }
    return VIEW_EXIT_OK;
}

static int write_frame(app* a, offscreen* o, const char* path) {
    char err[512];
    offscreen_bind(o);
    app_draw(a, o->w, o->h);
    offscreen_read(o);
    if (!png_write_atomic(path, o->pixels, o->w, o->h, err, sizeof err)) {
        fprintf(stderr, "featherbone-view: %s\n", err);
        return VIEW_EXIT_FAIL;
    }
    return VIEW_EXIT_OK;
}

static int run_headless(app* a, const view_args* args) {
    char err[512];
    offscreen o;
    if (!offscreen_create(&o, args->w, args->h, err, sizeof err)) {
        fprintf(stderr, "featherbone-view: %s\n", err);
        return VIEW_EXIT_FAIL;
    }
    int rc = VIEW_EXIT_OK;
    if (args->screenshot) {
        rc = write_frame(a, &o, args->screenshot);
    } else {
        if (mkdir(args->frames, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "featherbone-view: --frames %s: cannot make the directory: %s\n",
                    args->frames, strerror(errno));
            offscreen_destroy(&o);
            return VIEW_EXIT_FAIL;
        }
        const source_info* info = source_get_info(a->src);
        a->playing = true; /* the HUD of a video says so */
        const int first = (int)floor(args->time / info->frame_time + 0.5);
        int n = 0;
        for (int f = first; f < info->nframe && rc == VIEW_EXIT_OK; f += args->every, n++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/frame_%05d.png", args->frames, n);
            app_seek(a, f * info->frame_time);
            rc = write_frame(a, &o, path);
        }
        const double fps = 1.0 / (info->frame_time * args->every);
        if (rc == VIEW_EXIT_OK) {
            printf("wrote %d frames (%dx%d) to %s at %.4g fps; a video:\n"
                   "  ffmpeg -framerate %.4g -i %s/frame_%%05d.png -c:v libx264 -pix_fmt yuv420p "
                   "out.mp4\n",
                   n, o.w, o.h, args->frames, fps, fps, args->frames);
        }
    }
    offscreen_destroy(&o);
    return rc;
}

/* ---- main --------------------------------------------------------------------------------- */

/* What a script names that the character or the source does not have (a throw's or a
 * selection's joint, a gain's joints, gains under --playback); NULL when all is there. */
static const char* script_check(const script* sc, const app* a) {
    static char msg[2400];
    const fb_model* m = source_get_view(a->src)->model;
    for (int k = 0; k < sc->n; k++) {
        const script_event* e = &sc->ev[k];
        const bool gains = e->action == SCRIPT_GAIN || e->action == SCRIPT_SAVE_GAINS ||
                           e->action == SCRIPT_UNDO || e->action == SCRIPT_REDO ||
                           e->action == SCRIPT_SELECT || e->action == SCRIPT_MIRROR;
        if (e->action == SCRIPT_THROW && fb_model_body_by_name(m, e->arg) < 0) {
            snprintf(msg, sizeof msg, "%.1000s:%d: throw: '%.1000s' names no body of the character",
                     sc->path, e->line, e->arg);
            return msg;
        }
        if (gains && !a->edit) {
            snprintf(msg, sizeof msg, "%.1000s:%d: --playback has no gains to edit", sc->path,
                     e->line);
            return msg;
        }
        const bool keyword = strcmp(e->arg, "take") == 0 || strcmp(e->arg, "root") == 0 ||
                             strcmp(e->arg, "defaults") == 0;
        if ((e->action == SCRIPT_GAIN && !keyword && gedit_count_matches(a->edit, e->arg) == 0) ||
            (e->action == SCRIPT_SELECT && gedit_count_matches(a->edit, e->arg) == 0)) {
            snprintf(msg, sizeof msg, "%.1000s:%d: '%.1000s' names no joint with degrees of freedom",
                     sc->path, e->line, e->arg);
            return msg;
        }
    }
    return NULL;
}

static int run(app* a, const view_args* args) {
    const source_info* info = source_get_info(a->src);
    if (args->time > info->duration) {
        fprintf(stderr,
                "featherbone-view: --time %g: expected a time within the clip, 0 to %.3f s\n",
                args->time, info->duration);
        return VIEW_EXIT_USAGE;
    }
    const bool headless = args->screenshot || args->frames;
    char title[200];
    snprintf(title, sizeof title, "featherbone-view - %s", info->name);
    a->win = open_window(args, title, headless);
    if (!a->win) {
        fprintf(stderr, "featherbone-view: no OpenGL 3.3 window: %s\n",
                glfw_error_text[0] ? glfw_error_text : "GLFW could not start");
        return VIEW_EXIT_NO_GL;
    }
    char err[1024];
    a->r = render_create(source_get_view(a->src)->model, err, sizeof err);
    a->hud = a->r ? hud_create(err, sizeof err) : NULL;
    int rc = VIEW_EXIT_FAIL;
    if (!a->hud) {
        fprintf(stderr, "featherbone-view: %s\n", err);
    } else {
        camera_frame(&a->cam, info->lo, info->hi, (double)args->w / args->h, VIEW_PITCH);
        app_seek(a, args->time);
        if (!headless && a->edit) {
            a->panel = panel_create(a->win, a->edit, a->src, err, sizeof err);
            if (!a->panel && panel_available()) {
                fprintf(stderr, "featherbone-view: no gains panel: %s\n", err);
            }
        }
        rc = headless ? run_headless(a, args) : app_run_interactive(a);
        panel_destroy(a->panel);
        a->panel = NULL;
    }
    hud_destroy(a->hud);
    render_destroy(a->r);
    glfwDestroyWindow(a->win);
    glfwTerminate();
    return rc;
}

int main(int argc, char** argv) {
    view_args args;
    const int prc = parse_args(&args, argc, argv);
    if (prc >= 0) {
        return prc;
    }
    fb_error err = {0};
    app a = {.cam = camera_default(),
             .flags = render_default_flags(),
             .show_hud = !args.no_hud,
             .speed = 1.0,
             .rtf = 0.0,
             .ball_speed = VIEW_BALL_SPEED,
             .ball_mass = VIEW_BALL_MASS,
             .export_prefix = args.export_prefix,
             .script_wall_clock = args.wall_clock,
             .playing = !(args.screenshot || args.frames)};
    a.flags.ghost_offset = args.ghost_offset;
    a.flags.balance = !args.no_balance;
    script sc = {0};
    if (args.script) { /* read before the (slower) clip, so that a typo shows at once */
        char msg[1200];
        if (!script_load(args.script, &sc, msg, sizeof msg)) {
            fprintf(stderr, "featherbone-view: %s\n", msg);
            return VIEW_EXIT_USAGE;
        }
    }
    a.src = source_open(&args.src, &err);
    if (!a.src) {
        script_free(&sc);
        fprintf(stderr, "featherbone-view: %s\n", err.msg);
        return (err.code == FB_EINVAL || err.code == FB_EIO) ? VIEW_EXIT_USAGE : VIEW_EXIT_FAIL;
    }
    a.edit = gedit_create(a.src); /* NULL for clip playback: no gains */
    if (args.script) {
        const char* bad = script_check(&sc, &a);
        if (bad) {
            fprintf(stderr, "featherbone-view: %s\n", bad);
            script_free(&sc);
            gedit_destroy(a.edit);
            source_close(a.src);
            return VIEW_EXIT_USAGE;
        }
        a.script = &sc;
    }
    const int rc = run(&a, &args);
    script_free(&sc);
    gedit_destroy(a.edit);
    source_close(a.src);
    return rc;
}
