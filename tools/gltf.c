/* Animated glTF 2.0 export through Assimp (see gltf.h).
 *
 * The aiScene is built here by hand from Assimp's C structs (calloc'd, and freed by
 * scene_free: aiReleaseImport frees only scenes Assimp made itself), exported to memory with
 * aiExportSceneToBlob, and written out by us. Assimp's gltf2 exporter puts the binary buffer in
 * a second file named after the first; exporting to memory lets us embed that buffer as a data
 * URI, so the output is one file, published whole with one rename. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "gltf.h"

#include <assimp/cexport.h>
#include <assimp/cimport.h>
#include <assimp/scene.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/atomic_file.h"
#include "util/error.h"

/* Assimp's export format id for glTF 2.0 as JSON (+ buffer); "glb2" would be the binary one. */
#define GLTF_FORMAT_ID "gltf2"

/* Coarse tessellation of spheres and capsules: segments around the axis and rings per half
 * sphere. The file is for looking at the motion (the physics used the exact shapes); 8 x 3
 * keeps the 38-body walker under 3000 triangles. */
#define ROUND_SEGMENTS 8u
#define ROUND_HALF_RINGS 3u

/* aiExportSceneToBlob names the exporter's extra files "$blobfile.<ext>"; the JSON points at
 * the buffer with this exact text (rapidjson's pretty writer), which becomes a data URI. */
#define BLOB_BUFFER_NAME "bin"
#define BLOB_BUFFER_URI "\"uri\": \"$blobfile.bin\""
#define DATA_URI_OPEN "\"uri\": \"data:application/octet-stream;base64,"

#define PI 3.14159265358979323846

static void set_name(struct aiString* s, const char* text) {
    const size_t n = strnlen(text, MAXLEN - 1);
    memcpy(s->data, text, n);
    s->data[n] = '\0';
    s->length = (ai_uint32)n;
}

/* ---- meshes -------------------------------------------------------------------------- */

/* Where a shape's vertices go: origin c and unit axes ex, ey, ez (right-handed), body
 * coordinates. */
typedef struct frame {
    fb_v3 c, ex, ey, ez;
} frame;

/* A mesh being filled: vertices and triangles into arrays sized beforehand by shape_counts. */
typedef struct mesh_fill {
    struct aiVector3D* v;
    unsigned* idx; /* 3 per triangle */
    unsigned nv, nt;
} mesh_fill;

static void put_vertex(mesh_fill* o, const frame* F, double x, double y, double z) {
    o->v[o->nv].x = (ai_real)(F->c.x + x * F->ex.x + y * F->ey.x + z * F->ez.x);
    o->v[o->nv].y = (ai_real)(F->c.y + x * F->ex.y + y * F->ey.y + z * F->ez.y);
    o->v[o->nv].z = (ai_real)(F->c.z + x * F->ex.z + y * F->ey.z + z * F->ez.z);
    o->nv++;
}

/* counter-clockwise seen from outside, as glTF wants front faces */
static void put_triangle(mesh_fill* o, unsigned a, unsigned b, unsigned c) {
    o->idx[3 * o->nt] = a;
    o->idx[3 * o->nt + 1] = b;
    o->idx[3 * o->nt + 2] = c;
    o->nt++;
}

/* Rings between the poles of a sphere (half_len 0) or capsule: a capsule has the equator
 * twice, at +half_len and -half_len, and the band between them is its cylinder. */
static unsigned round_rings(double half_len) {
    return half_len > 0.0 ? 2 * ROUND_HALF_RINGS : 2 * ROUND_HALF_RINGS - 1;
}

/* Half the length of a capsule's axis segment; 0 for spheres. */
static double half_len(const fb_shape* s) {
    if (s->type != FB_SHAPE_CAPSULE) {
        return 0.0;
    }
    const double x = s->p1.x - s->p0.x, y = s->p1.y - s->p0.y, z = s->p1.z - s->p0.z;
    return 0.5 * sqrt(x * x + y * y + z * z);
}

static void shape_counts(const fb_shape* s, unsigned* nv, unsigned* nt) {
    if (s->type == FB_SHAPE_BOX) {
        *nv = 8;
        *nt = 12;
        return;
    }
    const unsigned nr = round_rings(half_len(s));
    *nv = 2 + nr * ROUND_SEGMENTS;
    *nt = 2 * ROUND_SEGMENTS * nr; /* two polar fans and nr - 1 bands */
}

/* A sphere or capsule of radius r around the segment from -h to +h on F's z axis. */
static void put_round(mesh_fill* o, const frame* F, double r, double h) {
    const unsigned first = o->nv, nr = round_rings(h), S = ROUND_SEGMENTS;
    put_vertex(o, F, 0.0, 0.0, h + r);
    for (unsigned k = 0; k < nr; k++) {
        /* polar angle index; with a cylinder the equator (index ROUND_HALF_RINGS) comes twice */
        const unsigned polar = h > 0.0 && k >= ROUND_HALF_RINGS ? k : k + 1;
        const double theta = PI * polar / (2.0 * ROUND_HALF_RINGS);
        const double z = r * cos(theta) + (k < ROUND_HALF_RINGS ? h : -h);
        for (unsigned j = 0; j < S; j++) {
            const double phi = 2.0 * PI * j / S;
            put_vertex(o, F, r * sin(theta) * cos(phi), r * sin(theta) * sin(phi), z);
        }
    }
    put_vertex(o, F, 0.0, 0.0, -h - r);
    const unsigned last = o->nv - 1, low = first + 1 + (nr - 1) * S;
    for (unsigned j = 0; j < S; j++) {
        const unsigned j1 = (j + 1) % S;
        put_triangle(o, first, first + 1 + j, first + 1 + j1);
        put_triangle(o, last, low + j1, low + j);
        for (unsigned k = 0; k + 1 < nr; k++) {
            const unsigned a = first + 1 + k * S, b = a + S;
            put_triangle(o, a + j, b + j, b + j1);
            put_triangle(o, a + j, b + j1, a + j1);
        }
    }
}

/* A box centred on F's origin with edge lengths size along F's axes. Corner i has the sign
 * of axis k given by bit k of i. */
static void put_box(mesh_fill* o, const frame* F, fb_v3 size) {
    const unsigned first = o->nv;
    const double half[3] = {0.5 * size.x, 0.5 * size.y, 0.5 * size.z};
    for (unsigned i = 0; i < 8; i++) {
        put_vertex(o, F, (i & 1u) ? half[0] : -half[0], (i & 2u) ? half[1] : -half[1],
                   (i & 4u) ? half[2] : -half[2]);
    }
    for (unsigned k = 0; k < 3; k++) {
        for (int s = 0; s < 2; s++) {
            /* tangent axes t1, t2 with t1 x t2 = the outward normal (+e_k or -e_k): the quad
             * (-,-) (+,-) (+,+) (-,+) in (t1, t2) is then counter-clockwise from outside */
            const unsigned t1 = s ? (k + 1) % 3 : (k + 2) % 3, t2 = s ? (k + 2) % 3 : (k + 1) % 3;
            const unsigned side = s ? 1u << k : 0u;
            const unsigned sa[4] = {0, 1, 1, 0}, sb[4] = {0, 0, 1, 1};
            unsigned q[4];
            for (int c = 0; c < 4; c++) {
                q[c] = first + (side | sa[c] << t1 | sb[c] << t2);
            }
            put_triangle(o, q[0], q[1], q[2]);
            put_triangle(o, q[0], q[2], q[3]);
        }
    }
}

static fb_v3 unit_or(fb_v3 a, fb_v3 fallback) {
    const double n = sqrt(a.x * a.x + a.y * a.y + a.z * a.z);
    return n > 0.0 ? (fb_v3){a.x / n, a.y / n, a.z / n} : fallback;
}

static fb_v3 cross(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

static void put_shape(mesh_fill* o, const fb_shape* s) {
    frame F = {s->p0, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    if (s->type == FB_SHAPE_BOX) {
        /* the box's axes are the columns of R */
        F.ex = (fb_v3){s->R.m[0][0], s->R.m[1][0], s->R.m[2][0]};
        F.ey = (fb_v3){s->R.m[0][1], s->R.m[1][1], s->R.m[2][1]};
        F.ez = (fb_v3){s->R.m[0][2], s->R.m[1][2], s->R.m[2][2]};
        put_box(o, &F, s->size);
        return;
    }
    if (s->type == FB_SHAPE_CAPSULE) {
        const fb_v3 a = {s->p1.x - s->p0.x, s->p1.y - s->p0.y, s->p1.z - s->p0.z};
        F.c = (fb_v3){0.5 * (s->p0.x + s->p1.x), 0.5 * (s->p0.y + s->p1.y),
                      0.5 * (s->p0.z + s->p1.z)};
        /* z along the segment; x, y any right-handed completion */
        F.ez = unit_or(a, F.ez);
        const fb_v3 other = fabs(F.ez.x) < 0.9 ? (fb_v3){1, 0, 0} : (fb_v3){0, 1, 0};
        F.ex = unit_or(cross(other, F.ez), F.ex);
        F.ey = cross(F.ez, F.ex);
    }
    put_round(o, &F, s->radius, half_len(s));
}

/* A mesh with nv vertices and nt triangles; the faces' index lists share one block (Assimp's
 * exporter copies the scene, so it never frees them one by one). */
static struct aiMesh* mesh_alloc(const char* name, unsigned nv, unsigned nt, mesh_fill* o) {
    struct aiMesh* me = calloc(1, sizeof *me);
    if (!me) {
        return NULL;
    }
    set_name(&me->mName, name);
    me->mPrimitiveTypes = aiPrimitiveType_TRIANGLE;
    me->mVertices = calloc(nv, sizeof *me->mVertices);
    me->mFaces = calloc(nt, sizeof *me->mFaces);
    unsigned* idx = calloc(3 * (size_t)nt, sizeof *idx);
    if (!me->mVertices || !me->mFaces || !idx) {
        free(idx);
        free(me->mFaces);
        free(me->mVertices);
        free(me);
        return NULL;
    }
    me->mNumVertices = nv;
    me->mNumFaces = nt;
    for (unsigned t = 0; t < nt; t++) {
        me->mFaces[t].mNumIndices = 3;
        me->mFaces[t].mIndices = idx + 3 * (size_t)t;
    }
    *o = (mesh_fill){me->mVertices, idx, 0, 0};
    return me;
}

/* ---- the scene ----------------------------------------------------------------------- */

/* Nodes are freed through the flat array they were made in, not through the tree, so a scene
 * that failed half-built is freed the same way. */
static void nodes_free(struct aiNode** node, int nnode) {
    for (int n = 0; node && n < nnode; n++) {
        if (node[n]) {
            free(node[n]->mChildren);
            free(node[n]->mMeshes);
            free(node[n]);
        }
    }
    free(node);
}

/* Everything but the nodes (nodes_free). */
static void scene_free(struct aiScene* sc) {
    if (!sc) {
        return;
    }
    for (unsigned k = 0; sc->mMeshes && k < sc->mNumMeshes; k++) {
        struct aiMesh* me = sc->mMeshes[k];
        if (me) {
            free(me->mNumFaces ? me->mFaces[0].mIndices : NULL);
            free(me->mFaces);
            free(me->mVertices);
            free(me);
        }
    }
    free(sc->mMeshes);
    for (unsigned a = 0; sc->mAnimations && a < sc->mNumAnimations; a++) {
        struct aiAnimation* an = sc->mAnimations[a];
        for (unsigned k = 0; an && an->mChannels && k < an->mNumChannels; k++) {
            struct aiNodeAnim* ch = an->mChannels[k];
            if (ch) {
                free(ch->mPositionKeys);
                free(ch->mRotationKeys);
                free(ch);
            }
        }
        if (an) {
            free(an->mChannels);
        }
        free(an);
    }
    free(sc->mAnimations);
    free(sc);
}

/* The mesh of body i's shapes (NULL with *none set when it has none). */
static struct aiMesh* body_mesh(const fb_model* m, int i, bool* none) {
    unsigned nv = 0, nt = 0;
    for (int k = 0; k < m->nshape; k++) {
        if (m->shape[k].body == i) {
            unsigned v, t;
            shape_counts(&m->shape[k], &v, &t);
            nv += v;
            nt += t;
        }
    }
    *none = nv == 0;
    if (*none) {
        return NULL;
    }
    mesh_fill o;
    struct aiMesh* me = mesh_alloc(m->name[i], nv, nt, &o);
    for (int k = 0; me && k < m->nshape; k++) {
        if (m->shape[k].body == i) {
            put_shape(&o, &m->shape[k]);
        }
    }
    return me;
}

static struct aiMesh* ball_mesh(const char* name, double r) {
    const fb_shape s = {.type = FB_SHAPE_SPHERE, .radius = r};
    unsigned nv, nt;
    shape_counts(&s, &nv, &nt);
    mesh_fill o;
    struct aiMesh* me = mesh_alloc(name, nv, nt, &o);
    if (me) {
        put_shape(&o, &s);
    }
    return me;
}

/* Ball k's node name: "ball<k>", with '_' appended while a body has that name (the exporter
 * finds an animated node by its name). */
static void ball_name(const fb_model* m, int k, char* buf, size_t cap) {
    snprintf(buf, cap, "ball%d", k);
    for (size_t n = strlen(buf); fb_model_body_by_name(m, buf) >= 0 && n + 1 < cap; n++) {
        buf[n] = '_';
        buf[n + 1] = '\0';
    }
}

/* Nodes (node[i] body i, node[nbody + k] ball k, node[0] the root) linked as the model's tree,
 * and one mesh per body with shapes and per ball. Keys and rest poses come later. */
static bool build_nodes(struct aiScene* sc, struct aiNode** node, const fb_model* m, int nball,
                        const double* ball_radius) {
    const int nnode = m->nbody + nball;
    sc->mMeshes = calloc((size_t)nnode, sizeof *sc->mMeshes);
    if (!sc->mMeshes) {
        return false;
    }
    for (int n = 0; n < nnode; n++) {
        node[n] = calloc(1, sizeof *node[n]);
        if (!node[n]) {
            return false;
        }
        struct aiMatrix4x4* T = &node[n]->mTransformation;
        T->a1 = T->b2 = T->c3 = T->d4 = 1.0f;
    }
    sc->mRootNode = node[0];
    /* children arrays sized from the tree; balls hang below the root */
    for (int n = 1; n < nnode; n++) {
        node[n < m->nbody ? m->parent[n] : 0]->mNumChildren++;
    }
    for (int i = 0; i < m->nbody; i++) {
        if (node[i]->mNumChildren) {
            node[i]->mChildren = calloc(node[i]->mNumChildren, sizeof *node[i]->mChildren);
            if (!node[i]->mChildren) {
                return false;
            }
            node[i]->mNumChildren = 0;
        }
    }
    for (int n = 1; n < nnode; n++) {
        struct aiNode* p = node[n < m->nbody ? m->parent[n] : 0];
        p->mChildren[p->mNumChildren++] = node[n];
        node[n]->mParent = p;
    }
    /* names and meshes */
    for (int n = 0; n < nnode; n++) {
        char name[FB_NAME_MAX + 16];
        bool none = false;
        struct aiMesh* me;
        if (n < m->nbody) {
            snprintf(name, sizeof name, "%s", m->name[n]);
            me = body_mesh(m, n, &none);
        } else {
            ball_name(m, n - m->nbody, name, sizeof name);
            me = ball_mesh(name, ball_radius[n - m->nbody]);
        }
        set_name(&node[n]->mName, name);
        if (none) {
            continue;
        }
        node[n]->mMeshes = calloc(1, sizeof *node[n]->mMeshes);
        if (!me || !node[n]->mMeshes) {
            sc->mMeshes[sc->mNumMeshes++] = me; /* NULL is skipped by scene_free */
            return false;
        }
        node[n]->mMeshes[0] = sc->mNumMeshes;
        node[n]->mNumMeshes = 1;
        sc->mMeshes[sc->mNumMeshes++] = me;
    }
    return true;
}

/* One animation, a channel per body (translation and rotation) and per ball (translation),
 * nframe keys each, in ticks of one frame. */
static bool build_animation(struct aiScene* sc, struct aiNode* const* node, const fb_model* m,
                            const fb_motion* mo, int nball) {
    sc->mAnimations = calloc(1, sizeof *sc->mAnimations);
    if (!sc->mAnimations || !(sc->mAnimations[0] = calloc(1, sizeof *sc->mAnimations[0]))) {
        return false;
    }
    sc->mNumAnimations = 1;
    struct aiAnimation* an = sc->mAnimations[0];
    set_name(&an->mName, "simulation");
    an->mTicksPerSecond = 1.0 / mo->dt;
    an->mDuration = mo->nframe - 1;
    const unsigned nch = (unsigned)(m->nbody - 1 + nball);
    an->mChannels = calloc(nch, sizeof *an->mChannels);
    if (!an->mChannels) {
        return false;
    }
    an->mNumChannels = nch;
    for (unsigned k = 0; k < nch; k++) {
        struct aiNodeAnim* ch = an->mChannels[k] = calloc(1, sizeof *ch);
        if (!ch) {
            return false;
        }
        const bool body = k + 1 < (unsigned)m->nbody;
        ch->mNodeName = node[k + 1]->mName;
        ch->mPositionKeys = calloc((size_t)mo->nframe, sizeof *ch->mPositionKeys);
        ch->mRotationKeys = body ? calloc((size_t)mo->nframe, sizeof *ch->mRotationKeys) : NULL;
        if (!ch->mPositionKeys || (body && !ch->mRotationKeys)) {
            return false;
        }
        ch->mNumPositionKeys = (unsigned)mo->nframe;
        ch->mNumRotationKeys = body ? (unsigned)mo->nframe : 0;
    }
    return true;
}

/* ---- keys ---------------------------------------------------------------------------- */

/* Body i's transform relative to its parent node, from X_up = (E, r) [types.h]: the node
 * rotates by E^T (body -> parent coordinates) and sits at r, the body origin in parent
 * coordinates. The quaternion takes the sign nearest `prev`, so viewers that blend keys
 * component-wise do not swing the long way round. */
static bool body_key(const fb_xf* X, const struct aiQuaternion* prev, struct aiVector3D* t,
                     struct aiQuaternion* q) {
    const struct aiMatrix3x3 R = {
        (ai_real)X->E.m[0][0], (ai_real)X->E.m[1][0], (ai_real)X->E.m[2][0],
        (ai_real)X->E.m[0][1], (ai_real)X->E.m[1][1], (ai_real)X->E.m[2][1],
        (ai_real)X->E.m[0][2], (ai_real)X->E.m[1][2], (ai_real)X->E.m[2][2]};
    aiCreateQuaternionFromMatrix(q, &R);
    const double n =
        sqrt((double)q->w * q->w + (double)q->x * q->x + (double)q->y * q->y + (double)q->z * q->z);
    const double dot =
        prev ? prev->w * q->w + prev->x * q->x + prev->y * q->y + prev->z * q->z : 1.0;
    const double s = (dot < 0.0 ? -1.0 : 1.0) / n;
    q->w = (ai_real)(q->w * s);
    q->x = (ai_real)(q->x * s);
    q->y = (ai_real)(q->y * s);
    q->z = (ai_real)(q->z * s);
    t->x = (ai_real)X->r.x;
    t->y = (ai_real)X->r.y;
    t->z = (ai_real)X->r.z;
    return isfinite(n) && n > 0.0 && isfinite(t->x) && isfinite(t->y) && isfinite(t->z);
}

/* A node's rest transform: rotation q, translation t. */
static void set_transform(struct aiNode* n, const struct aiQuaternion* q,
                          const struct aiVector3D* t) {
    const double w = q->w, x = q->x, y = q->y, z = q->z;
    struct aiMatrix4x4* T = &n->mTransformation;
    T->a1 = (ai_real)(1 - 2 * (y * y + z * z));
    T->a2 = (ai_real)(2 * (x * y - w * z));
    T->a3 = (ai_real)(2 * (x * z + w * y));
    T->b1 = (ai_real)(2 * (x * y + w * z));
    T->b2 = (ai_real)(1 - 2 * (x * x + z * z));
    T->b3 = (ai_real)(2 * (y * z - w * x));
    T->c1 = (ai_real)(2 * (x * z - w * y));
    T->c2 = (ai_real)(2 * (y * z + w * x));
    T->c3 = (ai_real)(1 - 2 * (x * x + y * y));
    T->a4 = t->x;
    T->b4 = t->y;
    T->c4 = t->z;
}

/* Fills every key: position kinematics of each frame for the bodies, the given positions for
 * the balls; frame 0 is also each node's rest transform. */
static fb_status fill_keys(struct aiScene* sc, struct aiNode* const* node, const fb_model* m,
                           const fb_motion* mo, int nball, const double* ball_pos, fb_data* d,
                           fb_error* err) {
    struct aiNodeAnim* const* ch = sc->mAnimations[0]->mChannels;
    for (int f = 0; f < mo->nframe; f++) {
        memcpy(d->q, mo->q + (size_t)f * mo->nq, (size_t)mo->nq * sizeof *d->q);
        fb_kinematics_pos(m, d);
        for (int i = 1; i < m->nbody; i++) {
            struct aiVectorKey* pk = &ch[i - 1]->mPositionKeys[f];
            struct aiQuatKey* rk = &ch[i - 1]->mRotationKeys[f];
            pk->mTime = rk->mTime = f;
            const struct aiQuaternion* prev = f ? &ch[i - 1]->mRotationKeys[f - 1].mValue : NULL;
            if (!body_key(&d->X_up[i], prev, &pk->mValue, &rk->mValue)) {
                return fb_fail(err, FB_EINVAL, "frame %d: body '%s': pose not finite", f, m->name[i]);
            }
            if (f == 0) {
                set_transform(node[i], &rk->mValue, &pk->mValue);
            }
        }
        for (int k = 0; k < nball; k++) {
            const double* p = ball_pos + 3 * ((size_t)f * nball + k);
            struct aiVectorKey* pk = &ch[m->nbody - 1 + k]->mPositionKeys[f];
            pk->mTime = f;
            pk->mValue = (struct aiVector3D){(ai_real)p[0], (ai_real)p[1], (ai_real)p[2]};
            if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
                return fb_fail(err, FB_EINVAL, "frame %d: ball %d: position not finite", f, k);
            }
            if (f == 0) {
                const struct aiQuaternion one = {1, 0, 0, 0};
                set_transform(node[m->nbody + k], &one, &pk->mValue);
            }
        }
    }
    return FB_OK;
}

/* ---- the file ------------------------------------------------------------------------ */

static const char* find(const char* hay, size_t n, const char* needle) {
    const size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) {
        if (memcmp(hay + i, needle, k) == 0) {
            return hay + i;
        }
    }
    return NULL;
}

static void put_base64(FILE* f, const unsigned char* p, size_t n) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        const unsigned b = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0u) |
                           (i + 2 < n ? (unsigned)p[i + 2] : 0u);
        putc(A[b >> 18 & 63], f);
        putc(A[b >> 12 & 63], f);
        putc(i + 1 < n ? A[b >> 6 & 63] : '=', f);
        putc(i + 2 < n ? A[b & 63] : '=', f);
    }
}

/* The exporter's JSON with the buffer's URI replaced by its bytes, written whole or not at all
 * (the library's temporary-and-rename writer). */
static fb_status write_file(const char* path, const struct aiExportDataBlob* json,
                            const struct aiExportDataBlob* bin, fb_error* err) {
    const char* at = find(json->data, json->size, BLOB_BUFFER_URI);
    const size_t skip = strlen(BLOB_BUFFER_URI);
    if (!at || find(at + skip, json->size - (size_t)(at - (const char*)json->data) - skip,
                    BLOB_BUFFER_URI)) {
        return fb_fail(err, FB_EIO, "%s: Assimp's %s exporter wrote no single buffer URI", path,
                    GLTF_FORMAT_ID);
    }
    fb_atomic_file af;
    const fb_status s = fb_atomic_open(&af, path, err);
    if (s != FB_OK) {
        return s;
    }
    const size_t head = (size_t)(at - (const char*)json->data);
    fwrite(json->data, 1, head, af.f);
    fputs(DATA_URI_OPEN, af.f);
    put_base64(af.f, bin->data, bin->size);
    putc('"', af.f);
    fwrite(at + skip, 1, json->size - head - skip, af.f);
    return fb_atomic_commit(&af, err);
}

/* ---- gltf_write ---------------------------------------------------------------------- */

static fb_status check_input(const char* path, const fb_model* m, const fb_motion* mo, int nball,
                             const double* ball_radius, const double* ball_pos, fb_error* err) {
    if (!path || !m || !mo || !mo->q) {
        return fb_fail(err, FB_EINVAL, "gltf: path, model and motion are required");
    }
    if (mo->nq != m->nq || mo->nframe < 1 || !(mo->dt > 0.0) || !isfinite(mo->dt)) {
        return fb_fail(err, FB_EINVAL,
                    "%s: motion: expected nq %d, nframe >= 1, dt > 0, found nq %d, nframe %d, "
                    "dt %g",
                    path, m->nq, mo->nq, mo->nframe, mo->dt);
    }
    if (nball < 0 || (nball > 0 && (!ball_radius || !ball_pos))) {
        return fb_fail(err, FB_EINVAL, "%s: balls: expected radii and positions for %d", path, nball);
    }
    for (int k = 0; k < nball; k++) {
        if (!(ball_radius[k] > 0.0) || !isfinite(ball_radius[k])) {
            return fb_fail(err, FB_EINVAL, "%s: ball %d: expected a radius > 0, found %g", path, k,
                        ball_radius[k]);
        }
    }
    return FB_OK;
}

fb_status gltf_write(const char* path, const fb_model* m, const fb_motion* mo, int nball,
                     const double* ball_radius, const double* ball_pos, fb_error* err) {
    fb_status s = check_input(path, m, mo, nball, ball_radius, ball_pos, err);
    if (s != FB_OK) {
        return s;
    }
    fb_error derr;
    fb_data* d = fb_data_create(m, NULL, &derr);
    if (!d) {
        return fb_fail(err, derr.code, "%s: %s", path, derr.msg);
    }
    struct aiScene* sc = calloc(1, sizeof *sc);
    struct aiNode** node = calloc((size_t)(m->nbody + nball), sizeof *node);
    if (!sc || !node || !build_nodes(sc, node, m, nball, ball_radius) ||
        !build_animation(sc, node, m, mo, nball)) {
        s = fb_fail(err, FB_ENOMEM, "%s: out of memory building the scene", path);
    } else {
        s = fill_keys(sc, node, m, mo, nball, ball_pos, d, err);
    }
    if (s == FB_OK) {
        const struct aiExportDataBlob* blob = aiExportSceneToBlob(sc, GLTF_FORMAT_ID, 0);
        const struct aiExportDataBlob* bin = blob ? blob->next : NULL;
        if (!blob) {
            /* the C API keeps the exporter's reason to itself (Exporter::GetErrorString) */
            s = fb_fail(err, FB_EIO, "%s: Assimp's %s exporter failed (no reason given)", path,
                     GLTF_FORMAT_ID);
        } else if (!bin || strcmp(bin->name.data, BLOB_BUFFER_NAME) != 0 || bin->next) {
            s = fb_fail(err, FB_EIO, "%s: Assimp's %s exporter: expected one buffer beside the JSON",
                     path, GLTF_FORMAT_ID);
        } else {
            s = write_file(path, blob, bin, err);
        }
        if (blob) {
            aiReleaseExportBlob(blob);
        }
    }
    scene_free(sc);
    nodes_free(node, m->nbody + nball);
    fb_data_destroy(d);
    return s;
}
