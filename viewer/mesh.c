/* featherbone-view: capsules, boxes, cylinders and cones as triangle lists. */
#include "mesh.h"

#include <math.h>
#include <stdlib.h>

#include "vmath.h"

#define PI 3.141592653589793

void mesh_buf_free(mesh_buf* b) {
    free(b->v);
    b->v = NULL;
    b->n = b->cap = 0;
}

static void put(mesh_buf* b, fb_v3 p, fb_v3 n) {
    if (b->failed) {
        return;
    }
    if (b->n == b->cap) {
        const int cap = b->cap ? 2 * b->cap : 4096;
        float* v = realloc(b->v, (size_t)cap * MESH_FLOATS_PER_VERTEX * sizeof *v);
        if (!v) {
            b->failed = true;
            return;
        }
        b->v = v;
        b->cap = cap;
    }
    float* o = b->v + (size_t)b->n * MESH_FLOATS_PER_VERTEX;
    o[0] = (float)p.x;
    o[1] = (float)p.y;
    o[2] = (float)p.z;
    o[3] = (float)n.x;
    o[4] = (float)n.y;
    o[5] = (float)n.z;
    b->n++;
}

static void tri(mesh_buf* b, fb_v3 p0, fb_v3 n0, fb_v3 p1, fb_v3 n1, fb_v3 p2, fb_v3 n2) {
    put(b, p0, n0);
    put(b, p1, n1);
    put(b, p2, n2);
}

/* Unit vectors u, v with (u, v, w) right-handed and orthonormal. */
static void basis_around(fb_v3 w, fb_v3* u, fb_v3* v) {
    const fb_v3 other = fabs(w.x) < 0.9 ? v3(1.0, 0.0, 0.0) : v3(0.0, 1.0, 0.0);
    *u = v3_unit(v3_cross(other, w));
    *v = v3_cross(w, *u);
}

mesh_range mesh_capsule(mesh_buf* b, fb_v3 p0, fb_v3 p1, double r) {
    const int first = b->n;
    const fb_v3 axis = v3_sub(p1, p0);
    const fb_v3 w = v3_norm(axis) > 0.0 ? v3_unit(axis) : v3(0.0, 1.0, 0.0);
    fb_v3 u, v;
    basis_around(w, &u, &v);
    /* rings from the pole over p1 (theta 0) to the pole under p0 (theta pi): the upper half
     * sphere around p1, the lower around p0; the band between the two equator rings is the
     * cylinder */
    const int half = MESH_STACKS / 2, nring = MESH_STACKS + 2;
    for (int k = 0; k + 1 < nring; k++) {
        const int ka = k <= half ? k : k - 1, kb = k + 1 <= half ? k + 1 : k;
        const fb_v3 ca = k <= half ? p1 : p0, cb = k + 1 <= half ? p1 : p0;
        const double ta = PI * ka / MESH_STACKS, tb = PI * kb / MESH_STACKS;
        for (int j = 0; j < MESH_SLICES; j++) {
            const double f0 = 2.0 * PI * j / MESH_SLICES, f1 = 2.0 * PI * (j + 1) / MESH_SLICES;
            const double th[4] = {ta, ta, tb, tb}, ph[4] = {f0, f1, f0, f1};
            fb_v3 n[4];
            for (int q = 0; q < 4; q++) {
                n[q] = v3_add(v3_add(v3_scale(u, sin(th[q]) * cos(ph[q])),
                                     v3_scale(v, sin(th[q]) * sin(ph[q]))),
                              v3_scale(w, cos(th[q])));
            }
            const fb_v3 a0 = v3_add(ca, v3_scale(n[0], r)), a1 = v3_add(ca, v3_scale(n[1], r));
            const fb_v3 b0 = v3_add(cb, v3_scale(n[2], r)), b1 = v3_add(cb, v3_scale(n[3], r));
            tri(b, b0, n[2], b1, n[3], a0, n[0]);
            tri(b, a0, n[0], b1, n[3], a1, n[1]);
        }
    }
    return (mesh_range){first, b->n - first};
}

mesh_range mesh_box(mesh_buf* b, fb_v3 c, const fb_m3* R, fb_v3 size) {
    const int first = b->n;
    const double h[3] = {0.5 * size.x, 0.5 * size.y, 0.5 * size.z};
    const fb_v3 e[3] = {v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)};
    for (int k = 0; k < 3; k++) {
        for (int s = -1; s <= 1; s += 2) {
            /* tangents with t1 x t2 = the outward normal s e_k */
            const int i1 = s > 0 ? (k + 1) % 3 : (k + 2) % 3,
                      i2 = s > 0 ? (k + 2) % 3 : (k + 1) % 3;
            const fb_v3 nl = v3_scale(e[k], s * 1.0);
            fb_v3 p[4];
            const double sa[4] = {-1, 1, 1, -1}, sb[4] = {-1, -1, 1, 1};
            for (int q = 0; q < 4; q++) {
                const fb_v3 local =
                    v3_add(v3_scale(nl, h[k]),
                           v3_add(v3_scale(e[i1], sa[q] * h[i1]), v3_scale(e[i2], sb[q] * h[i2])));
                p[q] = v3_add(c, m3_mul_v3(R, local));
            }
            const fb_v3 n = m3_mul_v3(R, nl);
            tri(b, p[0], n, p[1], n, p[2], n);
            tri(b, p[0], n, p[2], n, p[3], n);
        }
    }
    return (mesh_range){first, b->n - first};
}

/* A ring of side quads between radius r0 at y0 and r1 at y1 with normals tilted by the
 * slope, plus caps where a radius is not zero. */
static void solid_of_revolution(mesh_buf* b, double r0, double y0, double r1, double y1) {
    const double slope = (r0 - r1) / (y1 - y0); /* the normal's y per unit of radial */
    for (int j = 0; j < MESH_SLICES; j++) {
        const double f0 = 2.0 * PI * j / MESH_SLICES, f1 = 2.0 * PI * (j + 1) / MESH_SLICES;
        const fb_v3 d0 = v3(sin(f0), 0.0, cos(f0)), d1 = v3(sin(f1), 0.0, cos(f1));
        const fb_v3 n0 = v3_unit(v3(d0.x, slope, d0.z)), n1 = v3_unit(v3(d1.x, slope, d1.z));
        const fb_v3 a0 = v3(r0 * d0.x, y0, r0 * d0.z), a1 = v3(r0 * d1.x, y0, r0 * d1.z);
        const fb_v3 b0 = v3(r1 * d0.x, y1, r1 * d0.z), b1 = v3(r1 * d1.x, y1, r1 * d1.z);
        tri(b, a0, n0, a1, n1, b0, n0);
        if (r1 > 0.0) {
            tri(b, b0, n0, a1, n1, b1, n1);
            tri(b, v3(0.0, y1, 0.0), v3(0, 1, 0), b0, v3(0, 1, 0), b1, v3(0, 1, 0));
        }
        if (r0 > 0.0) {
            tri(b, v3(0.0, y0, 0.0), v3(0, -1, 0), a1, v3(0, -1, 0), a0, v3(0, -1, 0));
        }
    }
}

mesh_range mesh_cylinder(mesh_buf* b) {
    const int first = b->n;
    solid_of_revolution(b, 1.0, 0.0, 1.0, 1.0);
    return (mesh_range){first, b->n - first};
}

mesh_range mesh_cone(mesh_buf* b) {
    const int first = b->n;
    solid_of_revolution(b, 1.0, 0.0, 0.0, 1.0);
    return (mesh_range){first, b->n - first};
}

mesh_range mesh_triangle(mesh_buf* b) {
    const int first = b->n;
    const fb_v3 up = v3(0.0, 1.0, 0.0);
    tri(b, v3(0.0, 0.0, 0.0), up, v3(1.0, 0.0, 0.0), up, v3(0.0, 0.0, 1.0), up);
    return (mesh_range){first, b->n - first};
}

mesh_range mesh_shape(mesh_buf* b, const fb_shape* sh) {
    switch (sh->type) {
    case FB_SHAPE_SPHERE:
        return mesh_capsule(b, sh->p0, sh->p0, sh->radius);
    case FB_SHAPE_CAPSULE:
        return mesh_capsule(b, sh->p0, sh->p1, sh->radius);
    case FB_SHAPE_BOX:
        return mesh_box(b, sh->p0, &sh->R, sh->size);
    }
    return (mesh_range){b->n, 0};
}
