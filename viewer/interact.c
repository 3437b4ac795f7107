/* featherbone-view: the interactive window: playback clock, keys and mouse. */
#include <math.h>
#include <stdio.h>

#include "app.h"
#include "pick.h"

/* Cursor travel (window pixels) below which a press and release is a click, not a drag. */
#define CLICK_SLOP 4.0
/* Smoothing times (s): the camera following the character, the real-time factor shown. */
#define FOLLOW_TAU 0.25
#define RTF_TAU 0.5
/* Longest wall-clock step the playback takes at once (s): after a stall it does not jump. */
#define MAX_WALL_DT 0.1

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

static void on_key(GLFWwindow* w, int key, int scancode, int action, int mods) {
    (void)scancode;
    (void)mods;
    app* a = app_of(w);
    if (action == GLFW_RELEASE) {
        return;
    }
    const bool press = action == GLFW_PRESS;
    switch (key) {
    case GLFW_KEY_ESCAPE:
        glfwSetWindowShouldClose(w, GLFW_TRUE);
        break;
    case GLFW_KEY_SPACE:
        a->playing = press ? !a->playing : a->playing;
        break;
    case GLFW_KEY_RIGHT:
        step_frames(a, 1);
        break;
    case GLFW_KEY_LEFT:
        step_frames(a, -1);
        break;
    case GLFW_KEY_R:
        app_seek(a, 0.0);
        break;
    case GLFW_KEY_KP_ADD:
        a->speed = fmin(a->speed * 2.0, VIEW_SPEED_MAX);
        break;
    case GLFW_KEY_KP_SUBTRACT:
        a->speed = fmax(a->speed * 0.5, VIEW_SPEED_MIN);
        break;
    default:
        break;
    }
    if (!press) {
        return;
    }
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
    case GLFW_KEY_F:
        camera_set_follow(&a->cam, !a->cam.follow, app_follow_point(a));
        break;
    case GLFW_KEY_H:
        a->help = !a->help;
        break;
    default:
        break;
    }
}

/* + and - by the character typed, whatever the keyboard layout ('=' is + unshifted). */
static void on_char(GLFWwindow* w, unsigned int c) {
    app* a = app_of(w);
    if (c == '+' || c == '=') {
        a->speed = fmin(a->speed * 2.0, VIEW_SPEED_MAX);
    } else if (c == '-' || c == '_') {
        a->speed = fmax(a->speed * 0.5, VIEW_SPEED_MIN);
    }
}

/* Scrubs to the time under framebuffer x on the timeline. */
static void scrub(app* a, double fx) {
    int fw, fh;
    glfwGetFramebufferSize(a->win, &fw, &fh);
    app_seek(a, hud_timeline_frac(fw, fh, fx) * source_get_info(a->src)->duration);
}

/* A click on the scene: name the body under the cursor. */
static void pick_at(app* a, double x, double y) {
    double fx, fy;
    int fw, fh;
    to_framebuffer(a->win, x, y, &fx, &fy, &fw, &fh);
    fb_v3 o, d;
    camera_ray(&a->cam, fx, fy, fw, fh, &o, &d);
    const source_view* v = source_get_view(a->src);
    pick_hit hit;
    if (pick_ray(v->model, v->data, o, d, &hit)) {
        snprintf(a->message, sizeof a->message, "clicked %s at (%.2f, %.2f, %.2f) m",
                 v->model->name[hit.body], hit.point.x, hit.point.y, hit.point.z);
    } else {
        a->message[0] = '\0';
    }
}

static void on_button(GLFWwindow* w, int button, int action, int mods) {
    app* a = app_of(w);
    if (action == GLFW_RELEASE) {
        if (button == GLFW_MOUSE_BUTTON_LEFT && a->pressed && !a->moved && !a->scrubbing) {
            pick_at(a, a->mx, a->my);
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
    (void)xoff;
    camera_zoom(&app_of(w)->cam, yoff);
}

/* Advances the playback clock by a wall-clock step; the clip loops at its end. */
static void tick(app* a, double wall_dt) {
    if (!a->playing || wall_dt <= 0.0) {
        a->rtf = 0.0; /* shown as "-" */
        return;
    }
    const double before = a->t, duration = source_get_info(a->src)->duration;
    double t = a->t + wall_dt * a->speed;
    if (t > duration) {
        t = 0.0;
    }
    app_seek(a, t);
    const double shown = a->t >= before ? a->t - before : wall_dt * a->speed;
    const double k = 1.0 - exp(-wall_dt / RTF_TAU);
    const double now_rtf = shown / wall_dt;
    a->rtf = a->rtf > 0.0 ? a->rtf + (now_rtf - a->rtf) * k : now_rtf;
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
    while (!glfwWindowShouldClose(w)) {
        glfwPollEvents();
        const double now = glfwGetTime();
        const double dt = fmin(now - last, MAX_WALL_DT);
        last = now;
        tick(a, dt);
        camera_follow(&a->cam, app_follow_point(a), dt, FOLLOW_TAU);
        int fw, fh;
        glfwGetFramebufferSize(w, &fw, &fh);
        if (fw <= 0 || fh <= 0) { /* minimised */
            glfwWaitEvents();
            continue;
        }
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        app_draw(a, fw, fh);
        glfwSwapBuffers(w);
    }
    return VIEW_EXIT_OK;
}
