/* featherbone-view: an orbit camera around a target point (Y up, metres), with pan, zoom,
 * following a moving point, framing a box, and the ray through a pixel. Pure math: no GL, so
 * the tests use it directly. Angles in radians. */
#ifndef FB_VIEW_CAMERA_H
#define FB_VIEW_CAMERA_H

#include <stdbool.h>

#include "featherbone/types.h"
#include "vmath.h"

typedef struct camera {
    fb_v3 target;    /* the point orbited and looked at (world) */
    double yaw;      /* rad about +Y; 0 puts the eye on +Z of the target */
    double pitch;    /* rad above the horizontal plane, within +-CAMERA_PITCH_MAX */
    double distance; /* m from the eye to the target */
    double fovy;     /* rad, vertical field of view */
    double znear, zfar;
    bool follow;         /* camera_follow moves the target with the followed point */
    fb_v3 follow_offset; /* target - followed point: straight above it when following starts
                            (at the target's height), then moved by pans */
} camera;

/* Largest pitch (rad): just short of looking straight down or up, where yaw is undefined. */
#define CAMERA_PITCH_MAX 1.5
/* Zoom range (m). */
#define CAMERA_DIST_MIN 0.3
#define CAMERA_DIST_MAX 200.0
/* Room camera_frame leaves around a box, as a fraction of the viewport on each side. */
#define CAMERA_FRAME_MARGIN 0.04

/* A camera 5 m from the origin, 15 degrees down, 40 degrees vertical field of view. */
camera camera_default(void);

/* Eye position (world). */
fb_v3 camera_eye(const camera* c);

/* Unit vectors of the view: forward (eye -> target), right, up; any may be NULL. */
void camera_basis(const camera* c, fb_v3* forward, fb_v3* right, fb_v3* up);

/* Orbit by a mouse drag of (dx, dy) pixels in a viewport `h` pixels high (right = turn the
 * scene to the right, down = look from higher up). */
void camera_orbit(camera* c, double dx, double dy, int h);

/* Turns the eye around the target by dyaw (about the vertical) and dpitch (rad); the pitch
 * stays within +-CAMERA_PITCH_MAX. */
void camera_turn(camera* c, double dyaw, double dpitch);

/* Pan: the target follows the drag so the point under the cursor stays under it (at the
 * target's depth). */
void camera_pan(camera* c, double dx, double dy, int h);

/* Zoom by scroll steps (positive = closer), geometric, within the zoom range. */
void camera_zoom(camera* c, double steps);

/* Places the camera so the box [lo, hi] is in view for an aspect ratio w/h, looking at it from
 * the side of its longest horizontal extent (a walk is seen from the side, slightly ahead),
 * `pitch` rad from above. */
void camera_frame(camera* c, fb_v3 lo, fb_v3 hi, double aspect, double pitch);

/* Starts (on) or stops following point p; while on, camera_follow keeps the target over p
 * (at the height it had), or where a pan since moved it relative to p. */
void camera_set_follow(camera* c, bool on, fb_v3 p);

/* Moves the target toward p + follow_offset, smoothed over about `tau` s (0 = at once), after
 * `dt` s. Does nothing when not following. */
void camera_follow(camera* c, fb_v3 p, double dt, double tau);

/* View and projection matrices for GL (column-major). */
mat4 camera_view(const camera* c);
mat4 camera_proj(const camera* c, double aspect);

/* The ray through pixel (px, py) of a w x h viewport (origin top-left, pixel centres at
 * +0.5): origin at the eye, unit direction. */
void camera_ray(const camera* c, double px, double py, int w, int h, fb_v3* origin, fb_v3* dir);

/* Where world point p lands in a w x h viewport (pixels, origin top-left); false when p is
 * behind the eye. */
bool camera_project(const camera* c, fb_v3 p, int w, int h, double* px, double* py);

#endif /* FB_VIEW_CAMERA_H */
