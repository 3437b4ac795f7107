/* featherbone-view: ray casts against spheres, capsules and boxes. */
#include "pick.h"

#include <float.h>
#include <math.h>

#include "vmath.h"

/* A capsule axis shorter than this (m) is treated as a sphere. */
#define PICK_MIN_AXIS 1e-9

bool pick_sphere(fb_v3 o, fb_v3 d, fb_v3 c, double r, double* t, fb_v3* n) {
    const fb_v3 oc = v3_sub(o, c);
    const double b = v3_dot(oc, d), cc = v3_dot(oc, oc) - r * r;
    if (cc <= 0.0) { /* starts inside */
        *t = 0.0;
        *n = v3_unit(oc);
        return true;
    }
    const double disc = b * b - cc;
    if (disc < 0.0) {
        return false;
    }
    const double th = -b - sqrt(disc);
    if (th < 0.0) { /* the sphere is behind the origin */
        return false;
    }
    *t = th;
    *n = v3_unit(v3_add(oc, v3_scale(d, th)));
    return true;
}

/* Squared distance from point p to the segment [p0, p0 + a L] (a unit). */
static double segment_dist2(fb_v3 p, fb_v3 p0, fb_v3 a, double L) {
    double s = v3_dot(v3_sub(p, p0), a);
    s = s < 0.0 ? 0.0 : (s > L ? L : s);
    const fb_v3 q = v3_sub(p, v3_add(p0, v3_scale(a, s)));
    return v3_dot(q, q);
}

bool pick_capsule(fb_v3 o, fb_v3 d, fb_v3 p0, fb_v3 p1, double r, double* t, fb_v3* n) {
    const fb_v3 axis = v3_sub(p1, p0);
    const double L = v3_norm(axis);
    if (L < PICK_MIN_AXIS) {
        return pick_sphere(o, d, p0, r, t, n);
    }
    const fb_v3 a = v3_scale(axis, 1.0 / L);
    if (segment_dist2(o, p0, a, L) <= r * r) { /* starts inside */
        *t = 0.0;
        *n = v3_scale(d, -1.0);
        return true;
    }
    /* From outside, the capsule's entry is the first entry into any of its three parts: the
     * finite cylinder and the two end spheres. */
    double best = DBL_MAX;
    fb_v3 bn = {0.0, 0.0, 0.0};
    const fb_v3 oc = v3_sub(o, p0);
    const fb_v3 dp = v3_sub(d, v3_scale(a, v3_dot(d, a)));
    const fb_v3 op = v3_sub(oc, v3_scale(a, v3_dot(oc, a)));
    const double A = v3_dot(dp, dp), B = v3_dot(dp, op), C = v3_dot(op, op) - r * r;
    if (A > 0.0 && B * B - A * C >= 0.0) {
        const double tc = (-B - sqrt(B * B - A * C)) / A;
        const double s = v3_dot(v3_add(oc, v3_scale(d, tc)), a);
        if (tc >= 0.0 && s >= 0.0 && s <= L) {
            best = tc;
            bn = v3_unit(v3_add(op, v3_scale(dp, tc)));
        }
    }
    const fb_v3 ends[2] = {p0, p1};
    for (int k = 0; k < 2; k++) {
        double ts;
        fb_v3 ns;
        if (pick_sphere(o, d, ends[k], r, &ts, &ns) && ts < best) {
            best = ts;
            bn = ns;
        }
    }
    if (best == DBL_MAX) {
        return false;
    }
    *t = best;
    *n = bn;
    return true;
}

bool pick_box(fb_v3 o, fb_v3 d, fb_v3 c, const fb_m3* R, fb_v3 size, double* t, fb_v3* n) {
    /* slabs in the box's own axes [Kay & Kajiya 1986] */
    const fb_v3 ol = m3_tmul_v3(R, v3_sub(o, c)), dl = m3_tmul_v3(R, d);
    const double oo[3] = {ol.x, ol.y, ol.z}, dd[3] = {dl.x, dl.y, dl.z};
    const double h[3] = {0.5 * size.x, 0.5 * size.y, 0.5 * size.z};
    double tmin = -DBL_MAX, tmax = DBL_MAX;
    int axis = 0;
    double sign = 1.0;
    for (int k = 0; k < 3; k++) {
        if (dd[k] == 0.0) {
            if (fabs(oo[k]) > h[k]) {
                return false;
            }
            continue;
        }
        double t1 = (-h[k] - oo[k]) / dd[k], t2 = (h[k] - oo[k]) / dd[k];
        if (t1 > t2) {
            const double tmp = t1;
            t1 = t2;
            t2 = tmp;
        }
        if (t1 > tmin) {
            tmin = t1;
            axis = k;
            sign = dd[k] > 0.0 ? -1.0 : 1.0; /* entering through the face facing the ray */
        }
        tmax = fmin(tmax, t2);
    }
    if (tmax < fmax(tmin, 0.0)) {
        return false;
    }
    if (tmin < 0.0) { /* starts inside */
        *t = 0.0;
        *n = v3_scale(d, -1.0);
        return true;
    }
    const fb_v3 nl = v3(axis == 0 ? sign : 0.0, axis == 1 ? sign : 0.0, axis == 2 ? sign : 0.0);
    *t = tmin;
    *n = m3_mul_v3(R, nl);
    return true;
}

bool pick_ray(const fb_model* m, const fb_data* d, fb_v3 origin, fb_v3 dir, pick_hit* hit) {
    bool any = false;
    double best = DBL_MAX;
    for (int s = 0; s < m->nshape; s++) {
        const fb_shape* sh = &m->shape[s];
        /* into body coordinates: x_b = R^T (x_w - p), R body -> world */
        const fb_m3 R = fb_body_rot(m, d, sh->body);
        const fb_v3 p = fb_point_pos(m, d, sh->body, v3(0.0, 0.0, 0.0));
        const fb_v3 ob = m3_tmul_v3(&R, v3_sub(origin, p)), db = m3_tmul_v3(&R, dir);
        double t = 0.0;
        fb_v3 n = {0.0, 0.0, 0.0};
        bool got = false;
        switch (sh->type) {
        case FB_SHAPE_SPHERE:
            got = pick_sphere(ob, db, sh->p0, sh->radius, &t, &n);
            break;
        case FB_SHAPE_CAPSULE:
            got = pick_capsule(ob, db, sh->p0, sh->p1, sh->radius, &t, &n);
            break;
        case FB_SHAPE_BOX:
            got = pick_box(ob, db, sh->p0, &sh->R, sh->size, &t, &n);
            break;
        }
        if (got && t < best) {
            best = t;
            any = true;
            hit->body = sh->body;
            hit->shape = s;
            hit->t = t;
            hit->point = v3_add(origin, v3_scale(dir, t));
            hit->normal = m3_mul_v3(&R, n);
        }
    }
    return any;
}
