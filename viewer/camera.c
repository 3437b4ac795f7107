/* featherbone-view: the orbit camera. */
#include "camera.h"

#include <math.h>
#include <stddef.h>

/* Orbit speed: a drag across the whole viewport height turns the view by pi. */
#define ORBIT_RAD_PER_VIEWPORT 3.141592653589793
/* Zoom factor per scroll step. */
#define ZOOM_PER_STEP 0.1

camera camera_default(void) {
    camera c = {0};
    c.target = v3(0.0, 1.0, 0.0);
    c.yaw = 0.0;
    c.pitch = 0.26;
    c.distance = 5.0;
    c.fovy = 40.0 * 3.141592653589793 / 180.0;
    c.znear = 0.05;
    c.zfar = 500.0;
    return c;
}

fb_v3 camera_eye(const camera* c) {
    const double cp = cos(c->pitch);
    const fb_v3 dir = v3(cp * sin(c->yaw), sin(c->pitch), cp * cos(c->yaw));
    return v3_add(c->target, v3_scale(dir, c->distance));
}

void camera_basis(const camera* c, fb_v3* forward, fb_v3* right, fb_v3* up) {
    const fb_v3 f = v3_unit(v3_sub(c->target, camera_eye(c)));
    /* the pitch stays short of +-pi/2, so forward is never parallel to world up */
    const fb_v3 r = v3_unit(v3_cross(f, v3(0.0, 1.0, 0.0)));
    if (forward) {
        *forward = f;
    }
    if (right) {
        *right = r;
    }
    if (up) {
        *up = v3_cross(r, f);
    }
}

void camera_orbit(camera* c, double dx, double dy, int h) {
    const double k = ORBIT_RAD_PER_VIEWPORT / (h > 0 ? h : 1);
    camera_turn(c, -dx * k, dy * k);
}

void camera_turn(camera* c, double dyaw, double dpitch) {
    c->yaw += dyaw;
    c->pitch += dpitch;
    if (c->pitch > CAMERA_PITCH_MAX) {
        c->pitch = CAMERA_PITCH_MAX;
    }
    if (c->pitch < -CAMERA_PITCH_MAX) {
        c->pitch = -CAMERA_PITCH_MAX;
    }
    c->yaw = remainder(c->yaw, 2.0 * 3.141592653589793);
}

void camera_pan(camera* c, double dx, double dy, int h) {
    /* metres per pixel at the target's depth */
    const double s = 2.0 * c->distance * tan(0.5 * c->fovy) / (h > 0 ? h : 1);
    fb_v3 right, up;
    camera_basis(c, NULL, &right, &up);
    const fb_v3 shift = v3_add(v3_scale(right, -dx * s), v3_scale(up, dy * s));
    c->target = v3_add(c->target, shift);
    c->follow_offset = v3_add(c->follow_offset, shift);
}

void camera_zoom(camera* c, double steps) {
    c->distance *= exp(-steps * ZOOM_PER_STEP);
    if (c->distance < CAMERA_DIST_MIN) {
        c->distance = CAMERA_DIST_MIN;
    }
    if (c->distance > CAMERA_DIST_MAX) {
        c->distance = CAMERA_DIST_MAX;
    }
}

/* True when every corner of [lo, hi] projects inside the viewport less the margin. */
static bool box_fits(const camera* c, fb_v3 lo, fb_v3 hi, double aspect) {
    const int h = 1000, w = (int)(1000.0 * aspect);
    for (int k = 0; k < 8; k++) {
        const fb_v3 p = v3((k & 1) ? hi.x : lo.x, (k & 2) ? hi.y : lo.y, (k & 4) ? hi.z : lo.z);
        double px, py;
        if (!camera_project(c, p, w, h, &px, &py)) {
            return false;
        }
        if (px < CAMERA_FRAME_MARGIN * w || px > (1.0 - CAMERA_FRAME_MARGIN) * w ||
            py < CAMERA_FRAME_MARGIN * h || py > (1.0 - CAMERA_FRAME_MARGIN) * h) {
            return false;
        }
    }
    return true;
}

void camera_frame(camera* c, fb_v3 lo, fb_v3 hi, double aspect, double pitch) {
    c->target = v3_scale(v3_add(lo, hi), 0.5);
    c->pitch = pitch;
    /* look across the longest horizontal extent, turned 25 degrees toward its far end so the
     * walk is seen three-quarters from the front */
    const double turn = 25.0 * 3.141592653589793 / 180.0;
    c->yaw = (hi.x - lo.x >= hi.z - lo.z) ? turn : 0.5 * 3.141592653589793 - turn;
    /* the bounding sphere always fits at this distance; bisect down to the tightest fit */
    const double radius = 0.5 * v3_norm(v3_sub(hi, lo)) + 0.1;
    const double half = fmin(0.5 * c->fovy, atan(tan(0.5 * c->fovy) * aspect));
    double far = radius / sin(half) / (1.0 - 2.0 * CAMERA_FRAME_MARGIN) + c->znear, near = c->znear;
    for (int it = 0; it < 40; it++) {
        c->distance = 0.5 * (near + far);
        if (box_fits(c, lo, hi, aspect)) {
            far = c->distance;
        } else {
            near = c->distance;
        }
    }
    c->distance = far;
}

void camera_set_follow(camera* c, bool on, fb_v3 p) {
    c->follow = on;
    if (on) {
        c->follow_offset = (fb_v3){0.0, c->target.y - p.y, 0.0}; /* centred over it */
    }
}

void camera_follow(camera* c, fb_v3 p, double dt, double tau) {
    if (!c->follow) {
        return;
    }
    const fb_v3 goal = v3_add(p, c->follow_offset);
    const double a = tau > 0.0 ? 1.0 - exp(-dt / tau) : 1.0;
    c->target = v3_add(c->target, v3_scale(v3_sub(goal, c->target), a));
}

mat4 camera_view(const camera* c) {
    fb_v3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const fb_v3 e = camera_eye(c);
    /* rows: right, up, -forward; then the eye moved to the origin */
    mat4 m = mat4_identity();
    const fb_v3 rows[3] = {r, u, v3_scale(f, -1.0)};
    for (int row = 0; row < 3; row++) {
        m.m[0 * 4 + row] = (float)rows[row].x;
        m.m[1 * 4 + row] = (float)rows[row].y;
        m.m[2 * 4 + row] = (float)rows[row].z;
        m.m[3 * 4 + row] = (float)-v3_dot(rows[row], e);
    }
    return m;
}

mat4 camera_proj(const camera* c, double aspect) {
    const double f = 1.0 / tan(0.5 * c->fovy), n = c->znear, z = c->zfar;
    mat4 m = {{0}};
    m.m[0] = (float)(f / aspect);
    m.m[5] = (float)f;
    m.m[10] = (float)((z + n) / (n - z));
    m.m[11] = -1.0f;
    m.m[14] = (float)(2.0 * z * n / (n - z));
    return m;
}

void camera_ray(const camera* c, double px, double py, int w, int h, fb_v3* origin, fb_v3* dir) {
    fb_v3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const double t = tan(0.5 * c->fovy), aspect = (double)w / (h > 0 ? h : 1);
    const double x = 2.0 * px / (w > 0 ? w : 1) - 1.0, y = 1.0 - 2.0 * py / (h > 0 ? h : 1);
    *origin = camera_eye(c);
    *dir = v3_unit(v3_add(f, v3_add(v3_scale(r, x * t * aspect), v3_scale(u, y * t))));
}

bool camera_project(const camera* c, fb_v3 p, int w, int h, double* px, double* py) {
    fb_v3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const fb_v3 v = v3_sub(p, camera_eye(c));
    const double z = v3_dot(v, f);
    if (z <= c->znear) {
        return false;
    }
    const double t = tan(0.5 * c->fovy), aspect = (double)w / (h > 0 ? h : 1);
    const double x = v3_dot(v, r) / (z * t * aspect), y = v3_dot(v, u) / (z * t);
    *px = 0.5 * (x + 1.0) * w;
    *py = 0.5 * (1.0 - y) * h;
    return true;
}
