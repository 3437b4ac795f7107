/* featherbone-view: triangle meshes made on the CPU once at start (no GL here).
 *
 * A vertex is 6 floats: position then unit normal. Triangles are counter-clockwise seen from
 * outside. Each shape of a model becomes one mesh in its body's coordinates, so a frame only
 * sets one matrix per body; balls, contact markers and force arrows share unit meshes. */
#ifndef FB_VIEW_MESH_H
#define FB_VIEW_MESH_H

#include <stdbool.h>

#include "featherbone/featherbone.h"

#define MESH_FLOATS_PER_VERTEX 6

/* A growable array of vertices (3 per triangle). */
typedef struct mesh_buf {
    float* v; /* (n x 6) */
    int n;    /* vertices */
    int cap;
    bool failed; /* an allocation failed; the buffer keeps what it had */
} mesh_buf;

/* A run of vertices in a mesh_buf. */
typedef struct mesh_range {
    int first, count;
} mesh_range;

/* Tessellation: around an axis, and from pole to pole (even). */
#define MESH_SLICES 20
#define MESH_STACKS 10

void mesh_buf_free(mesh_buf* b);

/* A capsule of radius r around the segment p0-p1 (a sphere when p0 = p1). */
mesh_range mesh_capsule(mesh_buf* b, fb_v3 p0, fb_v3 p1, double r);

/* A box centred at c with axes R (columns, row-major fb_m3) and edge lengths size. */
mesh_range mesh_box(mesh_buf* b, fb_v3 c, const fb_m3* R, fb_v3 size);

/* Unit meshes along +Y: a closed cylinder of radius 1 from y = 0 to 1, a cone with its base
 * (radius 1) at y = 0 and its tip at y = 1. */
mesh_range mesh_cylinder(mesh_buf* b);
mesh_range mesh_cone(mesh_buf* b);

/* One triangle (0, 0, 0), (1, 0, 0), (0, 0, 1), normal +Y: any triangle is its image under
 * an affine map (the balance overlay's support polygon, drawn as a fan). */
mesh_range mesh_triangle(mesh_buf* b);

/* The mesh of one fb_shape, in its body's coordinates. */
mesh_range mesh_shape(mesh_buf* b, const fb_shape* sh);

#endif /* FB_VIEW_MESH_H */
