/* Narrow phase: sphere, capsule and box against a plane; a sphere against a sphere, capsule or
 * box. Shapes live in body coordinates; everything is compared in world coordinates. */
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
                          -dist, contact_id(art, shape, -1, 0, feature)};
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
            const fb_shape* sh = &ma->shape[sa];
            bool inside;
            const fb_v3 q = closest_on_shape(ma, da, sh, c, &inside);
            /* the normal points from the ball (B) to the shape (A) */
            fb_v3 dir = fb_v3_sub(q, c);
            double len = fb_v3_norm(dir);
            if (inside) {
                dir = fb_v3_neg(dir); /* the centre is inside A: A is pushed the other way */
            }
            const double dist = (inside ? -len : len) - ball->radius;
            if (dist >= margin || !(len > 0.0)) {
                continue;
            }
            const fb_v3 nrm = fb_v3_scale(dir, 1.0 / len);
            const fb_v3 on_b = fb_v3_axpy(c, ball->radius, nrm);
            const fb_xf Xa = da->X_0[sh->body], Xb = db->X_0[ball->body];
            const fb_contact ct = {art_a, sh->body, fb_m3_mv(Xa.E, fb_v3_sub(q, Xa.r)), art_b,
                                   ball->body, fb_m3_mv(Xb.E, fb_v3_sub(on_b, Xb.r)), nrm, -dist,
                                   contact_id(art_a, sa, art_b, sb, 0)};
            push(out, n, cap, &needed, &ct);
        }
    }
    if (needed > cap) {
        return fb_fail(err, FB_ECAPACITY, "contacts: need room for %d, have %d", needed, cap);
    }
    return fb_ok(err);
}

/* Two unit tangents completing n to a right-handed basis. */
static void tangents(fb_v3 n, fb_v3* t1, fb_v3* t2) {
    const fb_v3 helper = fabs(n.x) < 0.9 ? fb_v3_make(1, 0, 0) : fb_v3_make(0, 1, 0);
    *t1 = fb_v3_cross(n, helper);
    *t1 = fb_v3_scale(*t1, 1.0 / fb_v3_norm(*t1));
    *t2 = fb_v3_cross(n, *t1);
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
        fb_status s = fb_csys_add_row(cs, &row, err);
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
