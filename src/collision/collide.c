/* Narrow phase: sphere, capsule and box against a plane; a sphere against a sphere, capsule or
 * box; a capsule against a capsule or a box (box against box is not done). Shapes live in body
 * coordinates; everything is compared in world coordinates. Capsule against capsule by the
 * closest points of two segments [Ericson §5.1.9]; the rest is elementary geometry. */
#include <math.h>

#include "featherbone/collision.h"
#include "featherbone/dynamics.h"
#include "math/spatial.h"
#include "util/error.h"

/* Contact ids: articulations, shapes and a feature index packed into 64 bits. */
static uint64_t contact_id(int art_a, int shape_a, int art_b, int shape_b, int feature) {
    return ((uint64_t)(art_a & 0xff) << 56) | ((uint64_t)(shape_a & 0xfffff) << 36) |
           ((uint64_t)((art_b + 1) & 0xff) << 28) | ((uint64_t)(shape_b & 0xfffff) << 8) |
           (uint64_t)(feature & 0xff);
}

fb_plane fb_ground_plane(void) {
    return (fb_plane){{0.0, 1.0, 0.0}, 0.0};
}

/* Appends a contact, or counts the overflow. */
static void push(fb_contact* out, int* n, int cap, int* needed, const fb_contact* c) {
    if (*n < cap) {
        out[*n] = *c;
        (*n)++;
    }
    (*needed)++;
}

/* A sphere of radius r centred at c_w (world), part of body `body`, against the plane. */
static void sphere_plane(const fb_data* d, int art, int body, int shape, int feature, fb_v3 c_w,
                         double r, fb_plane pl, double margin, fb_contact* out, int* n, int cap,
                         int* needed) {
    const double dist = fb_v3_dot(pl.n, c_w) - pl.offset - r;
    if (dist >= margin) {
        return;
    }
    const fb_v3 on_a = fb_v3_axpy(c_w, -r, pl.n);                 /* deepest point of A */
    const fb_v3 on_plane = fb_v3_axpy(on_a, -dist, pl.n);         /* its projection */
    const fb_xf X = d->X_0[body];
    const fb_contact c = {art, body, fb_m3_mv(X.E, fb_v3_sub(on_a, X.r)), -1, 0, on_plane, pl.n,
                          -dist, contact_id(art, shape, -1, 0, feature), r, 0.0};
    push(out, n, cap, needed, &c);
}

fb_status fb_collide_plane(const fb_model* m, const fb_data* d, int art, fb_plane pl,
                           double margin, fb_contact* out, int* n, int cap, fb_error* err) {
    int needed = *n;
    for (int s = 0; s < m->nshape; s++) {
        const fb_shape* sh = &m->shape[s];
        const int b = sh->body;
        switch (sh->type) {
        case FB_SHAPE_SPHERE:
            sphere_plane(d, art, b, s, 0, fb_point_pos(m, d, b, sh->p0), sh->radius, pl, margin,
                         out, n, cap, &needed);
            break;
        case FB_SHAPE_CAPSULE:
            /* the two end spheres: a capsule lying on the plane touches along a line, held by
             * its two ends */
            sphere_plane(d, art, b, s, 0, fb_point_pos(m, d, b, sh->p0), sh->radius, pl, margin,
                         out, n, cap, &needed);
            sphere_plane(d, art, b, s, 1, fb_point_pos(m, d, b, sh->p1), sh->radius, pl, margin,
                         out, n, cap, &needed);
            break;
        case FB_SHAPE_BOX:
            /* every corner within the margin: four for a box resting on a face */
            for (int k = 0; k < 8; k++) {
                const fb_v3 half = {(k & 1 ? 0.5 : -0.5) * sh->size.x,
                                    (k & 2 ? 0.5 : -0.5) * sh->size.y,
                                    (k & 4 ? 0.5 : -0.5) * sh->size.z};
                const fb_v3 corner = fb_v3_add(sh->p0, fb_m3_mv(sh->R, half));
                sphere_plane(d, art, b, s, k, fb_point_pos(m, d, b, corner), 0.0, pl, margin,
                             out, n, cap, &needed);
            }
            break;
        }
    }
    if (needed > cap) {
        return fb_fail(err, FB_ECAPACITY, "contacts: need room for %d, have %d", needed, cap);
    }
    return fb_ok(err);
}

/* The point of shape sh (of body b) nearest the world point x, in world coordinates, and
 * whether x is inside it. */
static fb_v3 closest_on_shape(const fb_model* m, const fb_data* d, const fb_shape* sh, fb_v3 x,
                              bool* inside) {
    const int b = sh->body;
    *inside = false;
    switch (sh->type) {
    case FB_SHAPE_SPHERE: {
        const fb_v3 c = fb_point_pos(m, d, b, sh->p0);
        const fb_v3 dir = fb_v3_sub(x, c);
        const double len = fb_v3_norm(dir);
        *inside = len < sh->radius;
        return len > 0.0 ? fb_v3_axpy(c, sh->radius / len, dir) : fb_v3_axpy(c, sh->radius,
                                                                             fb_v3_make(0, 1, 0));
    }
    case FB_SHAPE_CAPSULE: {
        const fb_v3 a = fb_point_pos(m, d, b, sh->p0), e = fb_point_pos(m, d, b, sh->p1);
        const fb_v3 ab = fb_v3_sub(e, a);
        const double L2 = fb_v3_dot(ab, ab);
        const double t = L2 > 0.0 ? fmin(1.0, fmax(0.0, fb_v3_dot(fb_v3_sub(x, a), ab) / L2)) : 0.0;
        const fb_v3 c = fb_v3_axpy(a, t, ab);
        const fb_v3 dir = fb_v3_sub(x, c);
        const double len = fb_v3_norm(dir);
        *inside = len < sh->radius;
        return len > 0.0 ? fb_v3_axpy(c, sh->radius / len, dir) : fb_v3_axpy(c, sh->radius,
                                                                             fb_v3_make(0, 1, 0));
    }
    case FB_SHAPE_BOX: {
        /* x in the box's frame, clamped to the half sizes */
        const fb_xf X = d->X_0[b];
        const fb_v3 xb = fb_m3_mv(X.E, fb_v3_sub(x, X.r));
        const fb_v3 local = fb_m3_tr_mv(sh->R, fb_v3_sub(xb, sh->p0));
        const fb_v3 h = fb_v3_scale(sh->size, 0.5);
        fb_v3 q = {fmin(h.x, fmax(-h.x, local.x)), fmin(h.y, fmax(-h.y, local.y)),
                   fmin(h.z, fmax(-h.z, local.z))};
        if (q.x == local.x && q.y == local.y && q.z == local.z) {
            /* inside: push out through the nearest face */
            *inside = true;
            const double dx = h.x - fabs(local.x), dy = h.y - fabs(local.y),
                         dz = h.z - fabs(local.z);
            if (dx <= dy && dx <= dz) {
                q.x = local.x < 0 ? -h.x : h.x;
            } else if (dy <= dz) {
                q.y = local.y < 0 ? -h.y : h.y;
            } else {
                q.z = local.z < 0 ? -h.z : h.z;
            }
        }
        return fb_v3_add(X.r, fb_m3_tr_mv(X.E, fb_v3_add(sh->p0, fb_m3_mv(sh->R, q))));
    }
    }
    return x;
}

/* A sphere of radius r centred at c (world), on body `body_b` of side B, against shape sa of
 * side A: the contact through the point of A nearest c, normal from the sphere to A. */
static void sphere_shape(const fb_model* ma, const fb_data* da, int art_a, int sa,
                         const fb_data* db, int art_b, int body_b, fb_v3 c, double r,
                         uint64_t id, double margin, fb_contact* out, int* n, int cap,
                         int* needed) {
    const fb_shape* sh = &ma->shape[sa];
    bool inside;
    const fb_v3 q = closest_on_shape(ma, da, sh, c, &inside);
    /* the normal points from the sphere (B) to the shape (A) */
    fb_v3 dir = fb_v3_sub(q, c);
    const double len = fb_v3_norm(dir);
    if (inside) {
        dir = fb_v3_neg(dir); /* the centre is inside A: A is pushed the other way */
    }
    const double dist = (inside ? -len : len) - r;
    if (dist >= margin || !(len > 0.0)) {
        return;
    }
    const fb_v3 nrm = fb_v3_scale(dir, 1.0 / len);
    const fb_v3 on_b = fb_v3_axpy(c, r, nrm);
    const fb_xf Xa = da->X_0[sh->body], Xb = db->X_0[body_b];
    const double r_a = sh->type == FB_SHAPE_BOX ? 0.0 : sh->radius;
    const fb_contact ct = {art_a, sh->body, fb_m3_mv(Xa.E, fb_v3_sub(q, Xa.r)), art_b, body_b,
                           fb_m3_mv(Xb.E, fb_v3_sub(on_b, Xb.r)), nrm, -dist, id, r_a, r};
    push(out, n, cap, needed, &ct);
}

fb_status fb_collide_spheres(const fb_model* ma, const fb_data* da, int art_a,
                             const fb_model* mb, const fb_data* db, int art_b, double margin,
                             fb_contact* out, int* n, int cap, fb_error* err) {
    int needed = *n;
    for (int sb = 0; sb < mb->nshape; sb++) {
        const fb_shape* ball = &mb->shape[sb];
        if (ball->type != FB_SHAPE_SPHERE) {
            continue;
        }
        const fb_v3 c = fb_point_pos(mb, db, ball->body, ball->p0);
        for (int sa = 0; sa < ma->nshape; sa++) {
            sphere_shape(ma, da, art_a, sa, db, art_b, ball->body, c, ball->radius,
                         contact_id(art_a, sa, art_b, sb, 0), margin, out, n, cap, &needed);
        }
    }
    if (needed > cap) {
        return fb_fail(err, FB_ECAPACITY, "contacts: need room for %d, have %d", needed, cap);
    }
    return fb_ok(err);
}

/* ---- shape pairs (self-collision) -------------------------------------------------------- */

/* Segments shorter than this (m) are points: their direction is not used. */
#define SEGMENT_MIN_LEN 1e-12

/* Two capsule axes count as parallel when the sine of the angle between them is below this
 * (about 1.1 degrees). Then the contact is two points, at the ends of the stretch where the
 * axes overlap, so a capsule lying along another rests on a line instead of rocking about one
 * point; an end whose gap exceeds the margin is dropped, so the two points only appear once the
 * capsule lies really flat (at 0.02 rad a 0.4 m overlap opens 8 mm at the far end). */
#define CAPSULE_PARALLEL_SIN 0.02

/* Golden-section sweeps for the point of a segment nearest a box: the bracket shrinks to
 * 0.618^60 = 3e-13 of the segment's length. */
#define SEGMENT_BOX_SWEEPS 60

/* A capsule's interior point nearest a box becomes a contact of its own only when it is closer
 * than both end spheres by this much (m); a capsule lying flat on a face is held by its ends. */
#define SEGMENT_BOX_FLAT 1e-6

static double clamp01(double x) {
    return fmin(1.0, fmax(0.0, x));
}

/* The parameters s, t in [0, 1] of the closest points of the segments p0 + s d1 and
 * q0 + t d2 [Ericson §5.1.9: C. Ericson, Real-Time Collision Detection, 2005; not yet in
 * REFERENCES.md]: the unconstrained minimum of the lines, clamped to A, then the point of B
 * nearest that, clamped, then A again. Parallel axes take s = 0 first. */
static void segment_closest(fb_v3 p0, fb_v3 d1, fb_v3 q0, fb_v3 d2, double* s, double* t) {
    const double eps = SEGMENT_MIN_LEN * SEGMENT_MIN_LEN;
    const fb_v3 r = fb_v3_sub(p0, q0);
    const double a = fb_v3_dot(d1, d1), e = fb_v3_dot(d2, d2), f = fb_v3_dot(d2, r);
    if (a <= eps && e <= eps) {
        *s = *t = 0.0;
        return;
    }
    if (a <= eps) {
        *s = 0.0;
        *t = clamp01(f / e);
        return;
    }
    const double c = fb_v3_dot(d1, r);
    if (e <= eps) {
        *t = 0.0;
        *s = clamp01(-c / a);
        return;
    }
    const double b = fb_v3_dot(d1, d2), denom = a * e - b * b;
    *s = denom > 0.0 ? clamp01((b * f - c * e) / denom) : 0.0;
    *t = (b * *s + f) / e;
    if (*t < 0.0) {
        *t = 0.0;
        *s = clamp01(-c / a);
    } else if (*t > 1.0) {
        *t = 1.0;
        *s = clamp01((b - c) / a);
    }
}

/* Two unit tangents completing n to a right-handed basis. */
static void tangents(fb_v3 n, fb_v3* t1, fb_v3* t2) {
    const fb_v3 helper = fabs(n.x) < 0.9 ? fb_v3_make(1, 0, 0) : fb_v3_make(0, 1, 0);
    *t1 = fb_v3_cross(n, helper);
    *t1 = fb_v3_scale(*t1, 1.0 / fb_v3_norm(*t1));
    *t2 = fb_v3_cross(n, *t1);
}

/* A unit vector perpendicular to u (u nonzero). */
static fb_v3 perpendicular(fb_v3 u) {
    fb_v3 t1, t2;
    tangents(fb_v3_scale(u, 1.0 / fb_v3_norm(u)), &t1, &t2);
    return t1;
}

/* One side of a pair: shape s of articulation art, its axis in world coordinates. */
typedef struct side {
    const fb_model* m;
    const fb_data* d;
    int art, s;
    const fb_shape* sh;
    fb_v3 p0, p1; /* axis ends (world); p0 = p1 = centre for a sphere or box */
} side;

static side side_make(const fb_model* m, const fb_data* d, int art, int s) {
    const fb_shape* sh = &m->shape[s];
    side x = {m, d, art, s, sh, fb_point_pos(m, d, sh->body, sh->p0), fb_v3_zero()};
    x.p1 = sh->type == FB_SHAPE_CAPSULE ? fb_point_pos(m, d, sh->body, sh->p1) : x.p0;
    return x;
}

/* The radius of a sphere around the shape's centre that holds all of it. */
static double bounding_radius(const side* x) {
    switch (x->sh->type) {
    case FB_SHAPE_SPHERE:
        return x->sh->radius;
    case FB_SHAPE_CAPSULE:
        return 0.5 * fb_v3_norm(fb_v3_sub(x->p1, x->p0)) + x->sh->radius;
    case FB_SHAPE_BOX:
        return 0.5 * fb_v3_norm(x->sh->size);
    }
    return INFINITY;
}

/* The contact between the axis point pa of capsule (or sphere) A and the axis point pb of B,
 * both world, if their surfaces are closer than the margin. `fallback` is the normal to use
 * when the axes meet (pa = pb). */
static void axis_contact(const side* A, const side* B, fb_v3 pa, fb_v3 pb, fb_v3 fallback,
                         int feature, double margin, fb_contact* out, int* n, int cap,
                         int* needed) {
    const fb_v3 diff = fb_v3_sub(pa, pb);
    const double dist = fb_v3_norm(diff);
    const double gap = dist - A->sh->radius - B->sh->radius;
    if (gap >= margin) {
        return;
    }
    const fb_v3 nrm = dist > 0.0 ? fb_v3_scale(diff, 1.0 / dist) : fallback;
    const fb_v3 on_a = fb_v3_axpy(pa, -A->sh->radius, nrm);
    const fb_v3 on_b = fb_v3_axpy(pb, B->sh->radius, nrm);
    const fb_xf Xa = A->d->X_0[A->sh->body], Xb = B->d->X_0[B->sh->body];
    const fb_contact ct = {A->art, A->sh->body, fb_m3_mv(Xa.E, fb_v3_sub(on_a, Xa.r)), B->art,
                           B->sh->body, fb_m3_mv(Xb.E, fb_v3_sub(on_b, Xb.r)), nrm, -gap,
                           contact_id(A->art, A->s, B->art, B->s, feature), A->sh->radius,
                           B->sh->radius};
    push(out, n, cap, needed, &ct);
}

/* Capsule A against capsule B: the closest points of the two axes (feature 0), or, for
 * parallel axes that overlap, the two ends of the overlap (features 1 and 2). */
static void capsule_capsule(const side* A, const side* B, double margin, fb_contact* out,
                            int* n, int cap, int* needed) {
    const fb_v3 d1 = fb_v3_sub(A->p1, A->p0), d2 = fb_v3_sub(B->p1, B->p0);
    const double la = fb_v3_norm(d1), lb = fb_v3_norm(d2);
    const fb_v3 axb = fb_v3_cross(d1, d2);
    const double sin_ab = (la > SEGMENT_MIN_LEN && lb > SEGMENT_MIN_LEN)
                              ? fb_v3_norm(axb) / (la * lb)
                              : 1.0;
    /* where the axes meet: across both axes (or across the longer one), away from B's centre */
    fb_v3 fallback = fb_v3_norm(axb) > 0.0 ? fb_v3_scale(axb, 1.0 / fb_v3_norm(axb))
                     : la > SEGMENT_MIN_LEN ? perpendicular(d1)
                     : lb > SEGMENT_MIN_LEN ? perpendicular(d2)
                                            : fb_v3_make(0, 1, 0);
    const fb_v3 between = fb_v3_sub(fb_v3_add(A->p0, A->p1), fb_v3_add(B->p0, B->p1));
    if (fb_v3_dot(fallback, between) < 0.0) {
        fallback = fb_v3_neg(fallback);
    }
    if (sin_ab < CAPSULE_PARALLEL_SIN) {
        /* B's ends projected on A's axis (fractions of A), and the stretch both cover */
        const double sb0 = fb_v3_dot(fb_v3_sub(B->p0, A->p0), d1) / (la * la);
        const double sb1 = fb_v3_dot(fb_v3_sub(B->p1, A->p0), d1) / (la * la);
        const double lo = fmax(0.0, fmin(sb0, sb1)), hi = fmin(1.0, fmax(sb0, sb1));
        if (hi > lo) {
            for (int k = 0; k < 2; k++) {
                const fb_v3 pa = fb_v3_axpy(A->p0, k == 0 ? lo : hi, d1);
                const double t = clamp01(fb_v3_dot(fb_v3_sub(pa, B->p0), d2) / (lb * lb));
                axis_contact(A, B, pa, fb_v3_axpy(B->p0, t, d2), fallback, 1 + k, margin, out,
                             n, cap, needed);
            }
            return;
        }
    }
    double s, t;
    segment_closest(A->p0, d1, B->p0, d2, &s, &t);
    axis_contact(A, B, fb_v3_axpy(A->p0, s, d1), fb_v3_axpy(B->p0, t, d2), fallback, 0, margin,
                 out, n, cap, needed);
}

/* Signed distance (m, negative inside) from the point x, in the box's own frame (centre at the
 * origin, axes along its edges), to a box of half sizes h. */
static double box_signed_distance(fb_v3 h, fb_v3 x) {
    const fb_v3 q = {fabs(x.x) - h.x, fabs(x.y) - h.y, fabs(x.z) - h.z};
    const fb_v3 outside = {fmax(q.x, 0.0), fmax(q.y, 0.0), fmax(q.z, 0.0)};
    return fb_v3_norm(outside) + fmin(fmax(q.x, fmax(q.y, q.z)), 0.0);
}

/* Where the axis point a + t ae is nearest an edge or a corner of the box of half sizes h (box
 * frame), the exact parameter of the axis point nearest that feature; else t. The golden
 * section resolves a smooth minimum only to about the square root of the rounding error. */
static double refine_box_t(fb_v3 h, fb_v3 a, fb_v3 ae, double t) {
    const fb_v3 x = fb_v3_axpy(a, t, ae);
    double corner[3];
    int nout = 0, free_axis = 0;
    for (int k = 0; k < 3; k++) {
        const double xk = fb_v3_get(x, k), hk = fb_v3_get(h, k);
        corner[k] = fmin(hk, fmax(-hk, xk));
        if (fabs(xk) > hk) {
            nout++;
        } else {
            free_axis = k;
        }
    }
    const fb_v3 q = {corner[0], corner[1], corner[2]};
    if (nout == 3) {
        return clamp01(fb_v3_dot(fb_v3_sub(q, a), ae) / fb_v3_dot(ae, ae));
    }
    if (nout == 2) {
        double e0[3] = {corner[0], corner[1], corner[2]}, dir[3] = {0.0, 0.0, 0.0};
        e0[free_axis] = -fb_v3_get(h, free_axis);
        dir[free_axis] = 2.0 * fb_v3_get(h, free_axis);
        double s, u;
        segment_closest(a, ae, fb_v3_make(e0[0], e0[1], e0[2]),
                        fb_v3_make(dir[0], dir[1], dir[2]), &s, &u);
        return s;
    }
    return t;
}

/* Capsule C (side B) against box X (side A): the end spheres (features 0 and 1) and the axis
 * point nearest the box (feature 2) where that lies between the ends and is closer than both;
 * ids id0 + feature. The signed distance to a convex set is convex along a line, so a
 * golden-section search over the axis finds its minimum. */
static void capsule_box(const side* X, const side* C, uint64_t id0, double margin,
                        fb_contact* out, int* n, int cap, int* needed) {
    const fb_shape* bx = X->sh;
    /* the axis in the box's frame: body coordinates, then the box's axes */
    const fb_xf Xb = X->d->X_0[bx->body];
    const fb_v3 a = fb_m3_tr_mv(bx->R, fb_v3_sub(fb_m3_mv(Xb.E, fb_v3_sub(C->p0, Xb.r)), bx->p0));
    const fb_v3 e = fb_m3_tr_mv(bx->R, fb_v3_sub(fb_m3_mv(Xb.E, fb_v3_sub(C->p1, Xb.r)), bx->p0));
    const fb_v3 ae = fb_v3_sub(e, a);
    const fb_v3 h = fb_v3_scale(bx->size, 0.5);
    const double phi = 0.5 * (sqrt(5.0) - 1.0);
    double lo = 0.0, hi = 1.0;
    double t1 = hi - phi * (hi - lo), t2 = lo + phi * (hi - lo);
    double f1 = box_signed_distance(h, fb_v3_axpy(a, t1, ae));
    double f2 = box_signed_distance(h, fb_v3_axpy(a, t2, ae));
    for (int k = 0; k < SEGMENT_BOX_SWEEPS; k++) {
        if (f1 <= f2) {
            hi = t2;
            t2 = t1;
            f2 = f1;
            t1 = hi - phi * (hi - lo);
            f1 = box_signed_distance(h, fb_v3_axpy(a, t1, ae));
        } else {
            lo = t1;
            t1 = t2;
            f1 = f2;
            t2 = lo + phi * (hi - lo);
            f2 = box_signed_distance(h, fb_v3_axpy(a, t2, ae));
        }
    }
    const double t = refine_box_t(h, a, ae, 0.5 * (lo + hi));
    const double f_mid = box_signed_distance(h, fb_v3_axpy(a, t, ae));
    const double f_ends = fmin(box_signed_distance(h, a), box_signed_distance(h, e));
    const double r = C->sh->radius;
    const int body = C->sh->body;
    sphere_shape(X->m, X->d, X->art, X->s, C->d, C->art, body, C->p0, r, id0, margin, out, n,
                 cap, needed);
    sphere_shape(X->m, X->d, X->art, X->s, C->d, C->art, body, C->p1, r, id0 + 1u, margin, out,
                 n, cap, needed);
    if (f_mid < f_ends - SEGMENT_BOX_FLAT) {
        const fb_v3 c = fb_v3_axpy(C->p0, t, fb_v3_sub(C->p1, C->p0));
        sphere_shape(X->m, X->d, X->art, X->s, C->d, C->art, body, c, r, id0 + 2u, margin, out,
                     n, cap, needed);
    }
}

/* The contact as seen from the other side: A and B swapped, the normal reversed. */
static fb_contact swapped(const fb_contact* c) {
    return (fb_contact){c->art_b, c->body_b, c->p_b, c->art_a, c->body_a, c->p_a,
                        fb_v3_neg(c->n), c->depth, c->id, c->r_b, c->r_a};
}

fb_status fb_collide_shape_pair(const fb_model* ma, const fb_data* da, int art_a, int sa,
                                const fb_model* mb, const fb_data* db, int art_b, int sb,
                                double margin, fb_contact* out, int* n, int cap, fb_error* err) {
    if (sa < 0 || sa >= ma->nshape || sb < 0 || sb >= mb->nshape) {
        return fb_fail(err, FB_EINVAL, "shape pair: sa/sb: expected 0..%d and 0..%d, found %d, %d",
                       ma->nshape - 1, mb->nshape - 1, sa, sb);
    }
    const side A = side_make(ma, da, art_a, sa), B = side_make(mb, db, art_b, sb);
    /* bounding spheres first: most pairs of a character are far apart */
    const fb_v3 ca = fb_v3_scale(fb_v3_add(A.p0, A.p1), 0.5);
    const fb_v3 cb = fb_v3_scale(fb_v3_add(B.p0, B.p1), 0.5);
    if (fb_v3_norm(fb_v3_sub(ca, cb)) - bounding_radius(&A) - bounding_radius(&B) >= margin) {
        return fb_ok(err);
    }
    const fb_shape_type ta = A.sh->type, tb = B.sh->type;
    const uint64_t id0 = contact_id(art_a, sa, art_b, sb, 0);
    int needed = *n;
    const int first = *n;
    bool swap = false; /* contacts were made with the roles of A and B exchanged */
    if (tb == FB_SHAPE_SPHERE) {
        sphere_shape(ma, da, art_a, sa, db, art_b, B.sh->body, B.p0, B.sh->radius, id0, margin,
                     out, n, cap, &needed);
    } else if (ta == FB_SHAPE_SPHERE) {
        sphere_shape(mb, db, art_b, sb, da, art_a, A.sh->body, A.p0, A.sh->radius, id0, margin,
                     out, n, cap, &needed);
        swap = true;
    } else if (ta == FB_SHAPE_CAPSULE && tb == FB_SHAPE_CAPSULE) {
        capsule_capsule(&A, &B, margin, out, n, cap, &needed);
    } else if (ta == FB_SHAPE_BOX && tb == FB_SHAPE_CAPSULE) {
        capsule_box(&A, &B, id0, margin, out, n, cap, &needed);
    } else if (ta == FB_SHAPE_CAPSULE && tb == FB_SHAPE_BOX) {
        capsule_box(&B, &A, id0, margin, out, n, cap, &needed);
        swap = true;
    }
    /* box against box: not supported, no contact */
    for (int k = first; swap && k < *n; k++) {
        out[k] = swapped(&out[k]);
    }
    if (needed > cap) {
        return fb_fail(err, FB_ECAPACITY, "contacts: need room for %d, have %d", needed, cap);
    }
    return fb_ok(err);
}

fb_status fb_contact_rows(fb_csys* cs, const fb_contact* c, int n, double mu,
                          const double* normal_target, fb_error* err) {
    for (int k = 0; k < n; k++) {
        const fb_contact* ct = &c[k];
        fb_row row = fb_default_row();
        row.art = ct->art_a;
        row.body = ct->body_a;
        row.p = ct->p_a;
        if (ct->art_b >= 0) {
            /* both sides push at one world point, the middle of the two contact points, so
             * the pair of forces has no moment (angular momentum is conserved exactly) */
            const fb_data* da = cs->d[ct->art_a];
            const fb_data* db = cs->d[ct->art_b];
            const fb_v3 mid = fb_v3_scale(fb_v3_add(fb_point_pos(NULL, da, ct->body_a, ct->p_a),
                                                    fb_point_pos(NULL, db, ct->body_b, ct->p_b)),
                                          0.5);
            const fb_xf Xa = da->X_0[ct->body_a], Xb = db->X_0[ct->body_b];
            row.p = fb_m3_mv(Xa.E, fb_v3_sub(mid, Xa.r));
            row.art_b = ct->art_b;
            row.body_b = ct->body_b;
            row.p_b = fb_m3_mv(Xb.E, fb_v3_sub(mid, Xb.r));
        }
        row.n = ct->n;
        row.target = normal_target ? normal_target[k] : 0.0;
        row.id = ct->id * 3u + 1u;
        /* the normal row at the centres of curvature, on the same line of action */
        fb_row nr = row;
        nr.p = fb_v3_add(row.p, fb_m3_mv(cs->d[ct->art_a]->X_0[ct->body_a].E,
                                         fb_v3_scale(ct->n, ct->r_a)));
        if (ct->art_b >= 0) {
            nr.p_b = fb_v3_sub(row.p_b, fb_m3_mv(cs->d[ct->art_b]->X_0[ct->body_b].E,
                                                 fb_v3_scale(ct->n, ct->r_b)));
        }
        fb_status s = fb_csys_add_row(cs, &nr, err);
        const int normal = cs->nrow - 1;
        fb_v3 t[2];
        tangents(ct->n, &t[0], &t[1]);
        for (int j = 0; s == FB_OK && j < 2; j++) {
            fb_row fr = row;
            fr.n = t[j];
            fr.lo = -INFINITY;
            fr.target = 0.0;
            fr.friction_of = normal;
            fr.mu = mu;
            fr.id = ct->id * 3u + 2u + (uint64_t)j;
            s = fb_csys_add_row(cs, &fr, err);
        }
        if (s != FB_OK) {
            return s;
        }
    }
    return fb_ok(err);
}

/* Rolling rows' ids: the contact's friction rows' with this bit set (contact ids times 3 stay
 * below 2^62 for the 16 articulations a system holds; joint limits set bit 63). */
#define ROLLING_ID_BIT (UINT64_C(1) << 62)

fb_status fb_contact_rolling_rows(fb_csys* cs, const fb_contact* c, int normal, double length,
                                  const fb_v3* axis, fb_error* err) {
    if (c->art_b >= 0 || !(length >= 0.0)) {
        return fb_fail(err, FB_EINVAL,
                       "rolling rows: expected a contact with the ground and a length >= 0, "
                       "found art_b %d, length %g",
                       c->art_b, length);
    }
    if (axis != NULL &&
        !(fabs(fb_v3_dot(*axis, *axis) - 1.0) < 1e-9 && fabs(fb_v3_dot(*axis, c->n)) < 1e-9)) {
        return fb_fail(err, FB_EINVAL,
                       "rolling rows: expected a unit axis perpendicular to the normal, found "
                       "(%g, %g, %g)",
                       axis->x, axis->y, axis->z);
    }
    /* omega . (n x t) = t . (omega x n): the velocity along t of A's point p less that of the
     * point 1 m below it (p - n); about a given axis a, t = a x n (n x (a x n) = a for a . n =
     * 0) */
    const fb_v3 n_body = fb_m3_mv(cs->d[c->art_a]->X_0[c->body_a].E, c->n);
    fb_v3 t[2];
    int nt = 2;
    if (axis != NULL) {
        t[0] = fb_v3_cross(*axis, c->n);
        nt = 1;
    } else {
        tangents(c->n, &t[0], &t[1]);
    }
    for (int j = 0; j < nt; j++) {
        fb_row row = fb_default_row();
        row.art = c->art_a;
        row.body = c->body_a;
        row.p = c->p_a;
        row.art_b = c->art_a;
        row.body_b = c->body_a;
        row.p_b = fb_v3_sub(c->p_a, n_body);
        row.n = t[j];
        row.lo = -INFINITY;
        row.friction_of = normal;
        row.mu = length;
        row.id = ROLLING_ID_BIT | (c->id * 3u + 2u + (uint64_t)j);
        const fb_status s = fb_csys_add_row(cs, &row, err);
        if (s != FB_OK) {
            return s;
        }
    }
    return fb_ok(err);
}
