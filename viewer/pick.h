/* featherbone-view: which body a ray hits first (click to select, later click to throw).
 * Pure geometry on the model's shapes at the pose in fb_data; no GL. */
#ifndef FB_VIEW_PICK_H
#define FB_VIEW_PICK_H

#include <stdbool.h>

#include "featherbone/featherbone.h"

typedef struct pick_hit {
    int body;     /* the body whose shape was hit */
    int shape;    /* index into m->shape */
    double t;     /* distance along the (unit) ray, m */
    fb_v3 point;  /* hit point, world */
    fb_v3 normal; /* outward unit surface normal at the hit, world */
} pick_hit;

/* Casts the ray origin + t dir (dir unit, t >= 0) against every shape of m at the pose in d
 * (needs FB_STAGE_POS: call fb_kinematics_pos first). Returns true and the nearest hit, or
 * false when the ray misses everything. A ray starting inside a shape hits it at t = 0. */
bool pick_ray(const fb_model* m, const fb_data* d, fb_v3 origin, fb_v3 dir, pick_hit* hit);

/* The single-shape tests, in the shape's own body coordinates (exposed for the tests). Each
 * returns the entry distance t >= 0 and the outward normal, or false on a miss. */
bool pick_sphere(fb_v3 o, fb_v3 d, fb_v3 c, double r, double* t, fb_v3* n);
bool pick_capsule(fb_v3 o, fb_v3 d, fb_v3 p0, fb_v3 p1, double r, double* t, fb_v3* n);
bool pick_box(fb_v3 o, fb_v3 d, fb_v3 c, const fb_m3* R, fb_v3 size, double* t, fb_v3* n);

#endif /* FB_VIEW_PICK_H */
