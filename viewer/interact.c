/* featherbone-view: the interactive window: playback clock, keys and mouse, throwing balls,
 * watching the gains file, exporting the take, and running --script input. */
#define _POSIX_C_SOURCE 200809L /* access */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "gains_edit.h"
#include "panel.h"
#include "pick.h"

/* Cursor travel (window pixels) below which a press and release is a click, not a drag. */
#define CLICK_SLOP 4.0
/* Smoothing times (s): the camera following the character, the real-time factor shown. */
#define FOLLOW_TAU 0.25
#define RTF_TAU 0.5
/* Longest wall-clock step the playback takes at once (s): after a stall it does not jump. */
#define MAX_WALL_DT 0.1
/* How often the gains file is looked at (s of wall clock). */
#define POLL_INTERVAL 0.5
/* Most exports of one session with the default names (CLIP_take1 ...). */
#define MAX_TAKES 9999
#define DEG (3.141592653589793 / 180.0)

static app* app_of(GLFWwindow* w) {
    return (app*)glfwGetWindowUserPointer(w);
}

/* Window coordinates -> framebuffer pixels (they differ on high-DPI screens). */
static void to_framebuffer(GLFWwindow* win, double x, double y, double* fx, double* fy, int* fw,
                           int* fh) {
    int ww, wh;
    glfwGetWindowSize(win, &ww, &wh);
    glfwGetFramebufferSize(win, fw, fh);
    *fx = ww > 0 ? x * *fw / ww : x;
    *fy = wh > 0 ? y * *fh / wh : y;
}

static void step_frames(app* a, int n) {
    const source_info* info = source_get_info(a->src);
    a->playing = false;
    app_seek(a, fmin(fmax(a->t + n * info->frame_time, 0.0), info->duration));
}

double app_ball_radius(double mass) {
    return VIEW_BALL_RADIUS * cbrt(mass / VIEW_BALL_MASS);
}

/* E: the whole take to PREFIX.bvh, .balls.json, .hits.json. */
static void export_take(app* a) {
    char prefix[1024];
    if (a->export_prefix) {
        snprintf(prefix, sizeof prefix, "%s", a->export_prefix);
    } else { /* CLIP_takeN beside nothing that exists */
        char name[256];
        snprintf(name, sizeof name, "%s", source_get_info(a->src)->name);
        char* dot = strrchr(name, '.');
        if (dot && dot != name) {
            *dot = '\0';
        }
        for (int n = 1; n <= MAX_TAKES; n++) {
            char bvh[1100];
            snprintf(prefix, sizeof prefix, "%s_take%d", name, n);
            snprintf(bvh, sizeof bvh, "%s.bvh", prefix);
            if (access(bvh, F_OK) != 0) {
                break;
            }
        }
    }
    source_export(a->src, prefix, a->message, sizeof a->message);
}

/* The keys that act on a press only (not on repeats). */
static void key_pressed(app* a, int key) {
    switch (key) {
    case GLFW_KEY_G:
        a->flags.ghost = !a->flags.ghost;
        break;
    case GLFW_KEY_O:
        a->flags.ghost_offset = !a->flags.ghost_offset;
        break;
    case GLFW_KEY_C:
        a->flags.contacts = !a->flags.contacts;
        break;
    case GLFW_KEY_B:
        a->flags.balance = !a->flags.balance;
        break;
    case GLFW_KEY_F:
        camera_set_follow(&a->cam, !a->cam.follow, app_follow_point(a));
        break;
    case GLFW_KEY_H:
        a->help = !a->help;
        break;
    case GLFW_KEY_P:
        if (a->panel) {
            panel_set_open(a->panel, !panel_is_open(a->panel));
        } else {
            snprintf(a->message, sizeof a->message, "%s",
                     a->edit ? panel_build_info() : "clip playback: no gains to edit");
        }
        break;
    case GLFW_KEY_E:
        export_take(a);
        break;
    case GLFW_KEY_BACKSPACE:
        source_clear_throws(a->src, a->message, sizeof a->message);
        a->t = source_get_view(a->src)->time;
        break;
    case GLFW_KEY_SPACE:
        a->playing = !a->playing;
        break;
    case GLFW_KEY_ESCAPE:
        glfwSetWindowShouldClose(a->win, GLFW_TRUE);
        break;
    default:
        break;
    }
}

/* The keys that repeat while held. */
static bool key_repeats(app* a, int key) {
    switch (key) {
    case GLFW_KEY_RIGHT:
        step_frames(a, 1);
        return true;
    case GLFW_KEY_LEFT:
        step_frames(a, -1);
        return true;
    case GLFW_KEY_R:
        app_seek(a, 0.0);
        return true;
    case GLFW_KEY_KP_ADD:
        app_char(a, '+');
        return true;
    case GLFW_KEY_KP_SUBTRACT:
        app_char(a, '-');
        return true;
    default:
        return false;
    }
}

void app_key(app* a, int key) {
    if (!key_repeats(a, key)) {
        key_pressed(a, key);
    }
}

/* The editor's message on the message line (the panel shows it too). */
static void gains_said(app* a) {
    snprintf(a->message, sizeof a->message, "gains: %s", gedit_message(a->edit, NULL));
    a->t = source_get_view(a->src)->time;
}

/* Ctrl+Z undo, Ctrl+Y and Ctrl+Shift+Z redo, Ctrl+S save to the watched file: the gains. */
static bool gains_shortcut(app* a, int key, int mods) {
    if (!(mods & GLFW_MOD_CONTROL) || !a->edit) {
        return false;
    }
    if (key == GLFW_KEY_Z && !(mods & GLFW_MOD_SHIFT)) {
        gedit_undo(a->edit);
    } else if (key == GLFW_KEY_Y || key == GLFW_KEY_Z) {
        gedit_redo(a->edit);
    } else if (key == GLFW_KEY_S) {
        gedit_save(a->edit, NULL);
    } else {
        return false;
    }
    gains_said(a);
    return true;
}

static void on_key(GLFWwindow* w, int key, int scancode, int action, int mods) {
    app* a = app_of(w);
    if (panel_key(a->panel, key, scancode, action, mods)) {
        return; /* typed into the panel */
    }
    if (action == GLFW_PRESS && gains_shortcut(a, key, mods)) {
        return;
    }
    if (action == GLFW_PRESS) {
        app_key(a, key);
    } else if (action == GLFW_REPEAT) {
        (void)key_repeats(a, key);
    }
}

/* + and - (playback speed), [ ] (ball speed), { } (ball mass): by the character typed,
 * whatever the keyboard layout ('=' is + unshifted). */
void app_char(app* a, unsigned int c) {
    switch (c) {
    case '+':
    case '=':
        a->speed = fmin(a->speed * 2.0, VIEW_SPEED_MAX);
        break;
    case '-':
    case '_':
        a->speed = fmax(a->speed * 0.5, VIEW_SPEED_MIN);
        break;
    case ']':
        a->ball_speed = fmin(a->ball_speed + VIEW_BALL_SPEED_STEP, VIEW_BALL_SPEED_MAX);
        break;
    case '[':
        a->ball_speed = fmax(a->ball_speed - VIEW_BALL_SPEED_STEP, VIEW_BALL_SPEED_MIN);
        break;
    case '}':
        a->ball_mass = fmin(a->ball_mass * VIEW_BALL_MASS_FACTOR, VIEW_BALL_MASS_MAX);
        break;
    case '{':
        a->ball_mass = fmax(a->ball_mass / VIEW_BALL_MASS_FACTOR, VIEW_BALL_MASS_MIN);
        break;
    default:
        break;
    }
}

static void on_char(GLFWwindow* w, unsigned int c) {
    app* a = app_of(w);
    if (!panel_char(a->panel, c)) {
        app_char(a, c);
    }
}

/* Scrubs to the time under framebuffer x on the timeline. */
static void scrub(app* a, double fx) {
    int fw, fh;
    glfwGetFramebufferSize(a->win, &fw, &fh);
    app_seek(a, hud_timeline_frac(fw, fh, fx) * source_get_info(a->src)->duration);
}

/* The body under window coordinates (x, y) and the eye's position; false when none. */
static bool body_at(app* a, double x, double y, fb_v3* eye, pick_hit* hit) {
    double fx, fy;
    int fw, fh;
    to_framebuffer(a->win, x, y, &fx, &fy, &fw, &fh);
    fb_v3 d;
    camera_ray(&a->cam, fx, fy, fw, fh, eye, &d);
    const source_view* v = source_get_view(a->src);
    return pick_ray(v->model, v->data, *eye, d, hit);
}

/* A click on the scene: a ball from the eye at the point of the body under the cursor. */
void app_click(app* a, double x, double y) {
    const source_view* v = source_get_view(a->src);
    fb_v3 o;
    pick_hit hit;
    if (!body_at(a, x, y, &o, &hit)) {
        snprintf(a->message, sizeof a->message, "missed: click on the character to throw");
        return;
    }
    const source_throw_spec t = {.body = hit.body,
                                 .point = hit.point,
                                 .eye = o,
                                 .speed = a->ball_speed,
                                 .mass = a->ball_mass,
                                 .radius = app_ball_radius(a->ball_mass)};
    char msg[SOURCE_LINE_MAX + 64];
    source_throw(a->src, &t, msg, sizeof msg);
    snprintf(a->message, sizeof a->message, "%s: %s", v->model->name[hit.body], msg);
    if (a->edit) { /* the struck joint's gains in the panel */
        gedit_select_body(a->edit, hit.body);
    }
}

void app_select(app* a, double x, double y) {
    if (!a->edit) {
        snprintf(a->message, sizeof a->message, "clip playback: no gains to edit");
        return;
    }
    const source_view* v = source_get_view(a->src);
    fb_v3 o;
    pick_hit hit;
    if (!body_at(a, x, y, &o, &hit)) {
        snprintf(a->message, sizeof a->message, "right-click a body to see its joint's gains");
        return;
    }
    gedit_select_body(a->edit, hit.body);
    const int j = gedit_selected(a->edit);
    panel_set_open(a->panel, true);
    snprintf(a->message, sizeof a->message, "%s: its gains %s", j > 0 ? v->model->name[j] : "?",
             a->panel ? "in the panel" : "(no panel in this build: --script gain)");
}

static void on_button(GLFWwindow* w, int button, int action, int mods) {
    app* a = app_of(w);
    if (panel_mouse_button(a->panel, button, action, mods)) {
        return; /* on the panel */
    }
    if (action == GLFW_PRESS && button == GLFW_MOUSE_BUTTON_RIGHT) {
        glfwGetCursorPos(w, &a->mx, &a->my);
        app_select(a, a->mx, a->my);
        return;
    }
    if (action == GLFW_RELEASE) {
        if (button == GLFW_MOUSE_BUTTON_LEFT && a->pressed && !a->moved && !a->scrubbing) {
            app_click(a, a->mx, a->my);
        }
        a->orbiting = a->panning = a->scrubbing = a->pressed = false;
        return;
    }
    glfwGetCursorPos(w, &a->mx, &a->my);
    a->press_x = a->mx;
    a->press_y = a->my;
    a->moved = false;
    if (button == GLFW_MOUSE_BUTTON_MIDDLE) {
        a->panning = true;
        return;
    }
    if (button != GLFW_MOUSE_BUTTON_LEFT) {
        return;
    }
    a->pressed = true;
    double fx, fy, frac;
    int fw, fh;
    to_framebuffer(w, a->mx, a->my, &fx, &fy, &fw, &fh);
    if (a->show_hud && hud_timeline_at(fw, fh, fx, fy, &frac)) {
        a->scrubbing = true;
        scrub(a, fx);
    } else if (mods & GLFW_MOD_SHIFT) {
        a->panning = true;
    } else {
        a->orbiting = true;
    }
}

static void on_cursor(GLFWwindow* w, double x, double y) {
    app* a = app_of(w);
    const double dx = x - a->mx, dy = y - a->my;
    a->mx = x;
    a->my = y;
    if (hypot(x - a->press_x, y - a->press_y) > CLICK_SLOP) {
        a->moved = true;
    }
    int ww, wh;
    glfwGetWindowSize(w, &ww, &wh);
    if (a->scrubbing) {
        double fx, fy;
        int fw, fh;
        to_framebuffer(w, x, y, &fx, &fy, &fw, &fh);
        scrub(a, fx);
    } else if (a->orbiting) {
        camera_orbit(&a->cam, dx, dy, wh);
    } else if (a->panning) {
        camera_pan(&a->cam, dx, dy, wh);
    }
}

static void on_scroll(GLFWwindow* w, double xoff, double yoff) {
    app* a = app_of(w);
    if (!panel_scroll(a->panel, xoff, yoff)) {
        camera_zoom(&a->cam, yoff);
    }
}

/* Advances the playback clock by `clock_dt` s (x speed) that took `wall_dt` s of wall clock;
 * the clip loops at its end. */
static void tick(app* a, double clock_dt, double wall_dt) {
    if (!a->playing || wall_dt <= 0.0) {
        a->rtf = 0.0; /* shown as "-" */
        return;
    }
    const double before = a->t, duration = source_get_info(a->src)->duration;
    double t = a->t + clock_dt * a->speed;
    if (t > duration) {
        t = 0.0;
    }
    app_seek(a, t);
    const double shown = a->t >= before ? a->t - before : clock_dt * a->speed;
    const double k = 1.0 - exp(-wall_dt / RTF_TAU);
    const double now_rtf = shown / wall_dt;
    a->rtf = a->rtf > 0.0 ? a->rtf + (now_rtf - a->rtf) * k : now_rtf;
}

/* Looks at the gains file every POLL_INTERVAL s of wall clock. */
static void poll(app* a, double now) {
    if (now - a->poll_wall >= POLL_INTERVAL) {
        a->poll_wall = now;
        if (source_poll(a->src)) {
            a->t = source_get_view(a->src)->time;
            if (a->edit) { /* a reload: the editor takes it in */
                gedit_sync(a->edit);
            }
        }
    }
}

/* Runs the script's events due at `clock` s. */
static void run_script(app* a, double clock) {
    script* s = a->script;
    while (s->next < s->n && s->ev[s->next].time <= clock + 1e-9) {
        const script_event* e = &s->ev[s->next++];
        int fw, fh;
        glfwGetFramebufferSize(a->win, &fw, &fh);
        switch (e->action) {
        case SCRIPT_THROW: {
            const source_view* v = source_get_view(a->src);
            const int b = fb_model_body_by_name(v->model, e->arg);
            const double m = v->model->I[b].m;
            const fb_v3 com = {v->model->I[b].h.x / m, v->model->I[b].h.y / m,
                               v->model->I[b].h.z / m};
            double px, py;
            int ww, wh;
            glfwGetWindowSize(a->win, &ww, &wh);
            if (camera_project(&a->cam, fb_point_pos(v->model, v->data, b, com), fw, fh, &px,
                               &py)) {
                app_click(a, px * ww / fw, py * wh / fh);
            }
            break;
        }
        case SCRIPT_CLICK:
            app_click(a, e->x, e->y);
            break;
        case SCRIPT_KEY:
            app_key(a, e->key);
            break;
        case SCRIPT_CHAR:
            app_char(a, (unsigned)e->key);
            break;
        case SCRIPT_ZOOM:
            camera_zoom(&a->cam, e->x);
            break;
        case SCRIPT_ORBIT:
            camera_turn(&a->cam, e->x * DEG, e->y * DEG);
            break;
        case SCRIPT_SCREENSHOT:
            if (app_write_png(a, fw, fh, e->arg) != VIEW_EXIT_OK) {
                a->script_rc = VIEW_EXIT_FAIL;
            }
            break;
        case SCRIPT_GAIN: /* the panel's path: the editor, its checks and messages */
            gedit_set_text(a->edit, e->arg, e->field, e->value);
            gains_said(a);
            break;
        case SCRIPT_SAVE_GAINS:
            gedit_save(a->edit, e->arg);
            gains_said(a);
            break;
        case SCRIPT_UNDO:
        case SCRIPT_REDO:
            if (e->action == SCRIPT_UNDO) {
                gedit_undo(a->edit);
            } else {
                gedit_redo(a->edit);
            }
            gains_said(a);
            break;
        case SCRIPT_SELECT:
            gedit_select_name(a->edit, e->arg);
            panel_set_open(a->panel, true);
            break;
        case SCRIPT_PANEL:
            if (a->panel) {
                panel_set_open(a->panel, e->x != 0.0);
            } else {
                snprintf(a->message, sizeof a->message, "%s", panel_build_info());
            }
            break;
        case SCRIPT_MIRROR:
            gedit_set_mirror(a->edit, e->x != 0.0);
            break;
        case SCRIPT_QUIT:
            glfwSetWindowShouldClose(a->win, GLFW_TRUE);
            break;
        }
        printf("script %.3f s (line %d): %s\n", e->time, e->line,
               a->message[0] ? a->message : "ok");
        fflush(stdout);
    }
}

int app_run_interactive(app* a) {
    GLFWwindow* w = a->win;
    glfwSetWindowUserPointer(w, a);
    glfwSetKeyCallback(w, on_key);
    glfwSetCharCallback(w, on_char);
    glfwSetMouseButtonCallback(w, on_button);
    glfwSetCursorPosCallback(w, on_cursor);
    glfwSetScrollCallback(w, on_scroll);
    glEnable(GL_MULTISAMPLE);
    a->rtf = a->speed;
    double last = glfwGetTime();
    const double start = last, t0 = a->t;
    long frames = 0;
    double clock = 0.0; /* the script's */
    while (!glfwWindowShouldClose(w)) {
        glfwPollEvents();
        const double now = glfwGetTime();
        const double wall_dt = fmin(now - last, MAX_WALL_DT);
        last = now;
        poll(a, now);
        /* a script's clock is its frame count (the same run whatever the machine's speed),
         * unless it asks for the wall clock */
        const double dt = a->script && !a->script_wall_clock ? 1.0 / SCRIPT_FPS : wall_dt;
        clock += frames > 0 ? dt : 0.0;
        tick(a, frames > 0 ? dt : 0.0, now - start > 0.0 ? fmax(wall_dt, 1e-6) : 0.0);
        if (a->script) { /* after the tick: frame k shows, and runs the events of, k / fps */
            run_script(a, clock);
        }
        frames++;
        camera_follow(&a->cam, app_follow_point(a), dt, FOLLOW_TAU);
        int fw, fh;
        glfwGetFramebufferSize(w, &fw, &fh);
        if (fw <= 0 || fh <= 0) { /* minimised */
            glfwWaitEvents();
            continue;
        }
        panel_frame(a->panel, a->t, fw, fh); /* edits made in it act now */
        a->t = source_get_view(a->src)->time;
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        app_draw(a, fw, fh);
        glfwSwapBuffers(w);
    }
    if (a->script) {
        const double wall = glfwGetTime() - start;
        printf("script done: %ld frames (%.1f a second), %.3f s of the take shown in %.2f s of "
               "wall clock; the simulation steps at %.0fx real time\n",
               frames, frames / fmax(wall, 1e-9), a->t - t0, wall, source_step_rtf(a->src));
        return a->script_rc;
    }
    return VIEW_EXIT_OK;
}
