/* Clip import: files in, through featherbone's BVH reader and Assimp.
 *
 * BVH: bvh.c reads the text at double precision with every channel order; Assimp loads the same
 * file and its node tree must hold every joint under the same parent (a mismatch, or Assimp
 * failing where our reader succeeded, is a warning: the reader is the authority on BVH).
 * Anything else (FBX, glTF, Collada, ...): Assimp's node hierarchy (the nodes that are animated
 * or have animated descendants) and first animation become a clip sampled at 30 fps: every
 * joint rotates through Z X Y channels, and the root and any node whose translation animates
 * also get position channels, which then hold the whole translation (absolute). Assimp objects
 * never leave this file. */
#include <assimp/cimport.h>
#include <assimp/scene.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "featherbone/mocap.h"
#include "math/quat.h"
#include "mocap/clip.h"
#include "mocap/constants.h"
#include "mocap/euler.h"
#include "util/error.h"

/* Relative change below which a node's animated translation counts as constant (Assimp keeps
 * keys in single precision, ~6e-8 relative). */
#define IMPORT_STILL_TOL 1e-6
/* Rate (frames/s) for non-BVH clips whose keys do not give one. */
#define IMPORT_DEFAULT_FPS 30.0
/* Largest file read (bytes): 1 GiB, far beyond any clip, so a wrong path to a disk image
 * fails cleanly rather than exhausting memory. */
#define IMPORT_MAX_BYTES (1L << 30)

/* Reads a whole file into memory from the given allocator. */
static char* read_file(const char* path, const fb_allocator* a, size_t* len, fb_error* err) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        fb_fail(err, FB_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char* buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) {
        size = ftell(f);
    }
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fb_fail(err, FB_EIO, "%s: cannot read (not a regular file?)", path);
    } else if (size > IMPORT_MAX_BYTES) {
        fb_fail(err, FB_EINVAL, "%s: expected a clip under 1 GiB, found %ld bytes", path, size);
    } else if (!(buf = fb_alloc(a, (size_t)size + 1))) {
        fb_fail(err, FB_ENOMEM, "%s: out of memory for %ld bytes", path, size);
    } else if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fb_fail(err, FB_EIO, "%s: read failed", path);
        fb_free(a, buf);
        buf = NULL;
    } else {
        buf[size] = '\0';
        *len = (size_t)size;
    }
    fclose(f);
    return buf;
}

static bool has_extension(const char* path, const char* ext) {
    const size_t n = strlen(path), m = strlen(ext);
    if (n < m) {
        return false;
    }
    for (size_t k = 0; k < m; k++) {
        if (tolower((unsigned char)path[n - m + k]) != ext[k]) {
            return false;
        }
    }
    return true;
}

static const struct aiNode* find_node(const struct aiNode* n, const char* name) {
    if (strcmp(n->mName.data, name) == 0) {
        return n;
    }
    for (unsigned k = 0; k < n->mNumChildren; k++) {
        const struct aiNode* hit = find_node(n->mChildren[k], name);
        if (hit) {
            return hit;
        }
    }
    return NULL;
}

/* BVH: Assimp must load the file and hold every joint under the same parent. */
static void cross_load_bvh(fb_clip* c, const char* path) {
    const struct aiScene* sc = aiImportFile(path, 0);
    if (!sc || !sc->mRootNode) {
        fb_clip_warn(c, "Assimp could not load this file (%s); featherbone's BVH reader did",
                     aiGetErrorString());
        return;
    }
    int mismatched = 0;
    for (int i = 0; i < c->njoint; i++) {
        const struct aiNode* n = find_node(sc->mRootNode, c->joint[i].name);
        const int p = c->joint[i].parent;
        if (!n || (p >= 0 && (!n->mParent || strcmp(n->mParent->mName.data,
                                                     c->joint[p].name) != 0))) {
            mismatched++;
        }
    }
    if (mismatched) {
        fb_clip_warn(c, "Assimp's node tree differs from the BVH hierarchy at %d joints",
                     mismatched);
    }
    aiReleaseImport(sc);
}

/* ---- non-BVH formats through Assimp -------------------------------------------------- */

static const struct aiNodeAnim* channel_of(const struct aiAnimation* an, const char* name) {
    for (unsigned k = 0; k < an->mNumChannels; k++) {
        if (strcmp(an->mChannels[k]->mNodeName.data, name) == 0) {
            return an->mChannels[k];
        }
    }
    return NULL;
}

/* True when node n or a descendant is animated. */
static bool subtree_animated(const struct aiAnimation* an, const struct aiNode* n) {
    if (channel_of(an, n->mName.data)) {
        return true;
    }
    for (unsigned k = 0; k < n->mNumChildren; k++) {
        if (subtree_animated(an, n->mChildren[k])) {
            return true;
        }
    }
    return false;
}

/* Joints depth first from node n (parents before children). */
static fb_status add_nodes(fb_clip* c, const struct aiAnimation* an, const struct aiNode* n,
                           int parent, int depth, fb_error* err) {
    if (depth > 256 || c->njoint >= FB_CLIP_MAX_JOINTS) {
        return fb_fail(err, FB_EINVAL, "%s: node tree deeper than 256 or larger than 10000",
                       c->source);
    }
    fb_clip_joint j;
    memset(&j, 0, sizeof j);
    snprintf(j.name, sizeof j.name, "%.63s", n->mName.data[0] ? n->mName.data : "node");
    if (fb_clip_joint_by_name(c, j.name) >= 0) {
        snprintf(j.name, sizeof j.name, "%.50s_%d", n->mName.data, c->njoint);
    }
    j.parent = parent;
    const struct aiMatrix4x4* T = &n->mTransformation;
    j.offset = (fb_v3){T->a4, T->b4, T->c4};
    /* the root, and nodes whose translation animates, get position channels; the others keep
     * a constant offset (their translation) and rotate only, like a BVH joint */
    const struct aiNodeAnim* ch = channel_of(an, n->mName.data);
    bool moves = parent < 0;
    if (ch && ch->mNumPositionKeys > 0) {
        const struct aiVector3D p0 = ch->mPositionKeys[0].mValue;
        j.offset = (fb_v3){p0.x, p0.y, p0.z};
        for (unsigned k = 1; k < ch->mNumPositionKeys && !moves; k++) {
            const struct aiVector3D p = ch->mPositionKeys[k].mValue;
            moves = fabs(p.x - p0.x) + fabs(p.y - p0.y) + fabs(p.z - p0.z) >
                    IMPORT_STILL_TOL * (1.0 + fabs(p0.x) + fabs(p0.y) + fabs(p0.z));
        }
    }
    /* position (if any), then rotation as Z X Y (the common BVH order) */
    const fb_channel chans[6] = {FB_CH_XPOS, FB_CH_YPOS, FB_CH_ZPOS,
                                 FB_CH_ZROT, FB_CH_XROT, FB_CH_YROT};
    j.nchan = moves ? 6 : 3;
    memcpy(j.chan, moves ? chans : chans + 3, (size_t)j.nchan * sizeof(fb_channel));
    if (moves && parent < 0) {
        j.offset = fb_v3_zero(); /* the root's channels hold its whole translation */
    }
    const int me = fb_clip_push_joint(c, &j, err);
    if (me < 0) {
        return FB_ENOMEM;
    }
    for (unsigned k = 0; k < n->mNumChildren; k++) {
        if (subtree_animated(an, n->mChildren[k])) {
            const fb_status s = add_nodes(c, an, n->mChildren[k], me, depth + 1, err);
            if (s != FB_OK) {
                return s;
            }
        }
    }
    return FB_OK;
}

/* Key value at time t (ticks): linear for vectors, slerp for quaternions. */
static fb_v3 sample_vec(const struct aiVectorKey* k, unsigned n, double t, fb_v3 fallback) {
    if (n == 0) {
        return fallback;
    }
    unsigned i = 0;
    while (i + 1 < n && k[i + 1].mTime <= t) {
        i++;
    }
    const struct aiVector3D a = k[i].mValue;
    if (i + 1 >= n || t <= k[i].mTime) {
        return (fb_v3){a.x, a.y, a.z};
    }
    const struct aiVector3D b = k[i + 1].mValue;
    const double s = (t - k[i].mTime) / (k[i + 1].mTime - k[i].mTime);
    return (fb_v3){a.x + s * (b.x - a.x), a.y + s * (b.y - a.y), a.z + s * (b.z - a.z)};
}

static fb_quat slerp(fb_quat a, fb_quat b, double s) {
    double d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
    if (d < 0.0) {
        b = (fb_quat){-b.w, -b.x, -b.y, -b.z};
        d = -d;
    }
    return fb_quat_mul(a, fb_quat_exp(fb_v3_scale(
                              fb_quat_log(fb_quat_mul(fb_quat_conj(a), b)), s)));
}

static fb_quat sample_quat(const struct aiQuatKey* k, unsigned n, double t, fb_quat fallback) {
    if (n == 0) {
        return fallback;
    }
    unsigned i = 0;
    while (i + 1 < n && k[i + 1].mTime <= t) {
        i++;
    }
    const fb_quat a = fb_quat_normalize((fb_quat){k[i].mValue.w, k[i].mValue.x, k[i].mValue.y,
                                                  k[i].mValue.z});
    if (i + 1 >= n || t <= k[i].mTime) {
        return a;
    }
    const fb_quat b = fb_quat_normalize((fb_quat){k[i + 1].mValue.w, k[i + 1].mValue.x,
                                                  k[i + 1].mValue.y, k[i + 1].mValue.z});
    return slerp(a, b, (t - k[i].mTime) / (k[i + 1].mTime - k[i].mTime));
}

/* The rest transform of a node as translation + rotation (scale ignored). */
static void node_rest(const struct aiNode* n, fb_v3* t, fb_quat* q) {
    const struct aiMatrix4x4* T = &n->mTransformation;
    *t = (fb_v3){T->a4, T->b4, T->c4};
    fb_m3 R = {{{T->a1, T->a2, T->a3}, {T->b1, T->b2, T->b3}, {T->c1, T->c2, T->c3}}};
    /* remove scale from each column */
    for (int c = 0; c < 3; c++) {
        const double s = fb_v3_norm(fb_m3_col(R, c));
        for (int r = 0; r < 3 && s > 0.0; r++) {
            R.m[r][c] /= s;
        }
    }
    *q = fb_quat_from_m3(R);
}

static fb_clip* clip_from_assimp(const char* path, const fb_clip_opts* opts,
                                 const fb_allocator* alloc, fb_error* err) {
    const struct aiScene* sc = aiImportFile(path, 0);
    if (!sc || !sc->mRootNode) {
        fb_fail(err, FB_EINVAL, "%s: Assimp could not import it: %s", path, aiGetErrorString());
        return NULL;
    }
    if (sc->mNumAnimations == 0) {
        fb_fail(err, FB_EINVAL, "%s: expected a skeletal animation, found none", path);
        aiReleaseImport(sc);
        return NULL;
    }
    const struct aiAnimation* an = sc->mAnimations[0];
    const double tps = an->mTicksPerSecond > 0.0 ? an->mTicksPerSecond : IMPORT_DEFAULT_FPS;
    fb_clip* c = fb_clip_new(alloc, path, err);
    if (!c) {
        aiReleaseImport(sc);
        return NULL;
    }
    const char* dot = strrchr(path, '.');
    snprintf(c->format, sizeof c->format, "%s", dot ? dot + 1 : "assimp");
    fb_status s = subtree_animated(an, sc->mRootNode)
                      ? add_nodes(c, an, sc->mRootNode, -1, 0, err)
                      : fb_fail(err, FB_EINVAL, "%s: the animation drives no node", path);
    /* uniform frames over the animation's duration */
    const double duration_s = an->mDuration / tps;
    const double frame_time = 1.0 / IMPORT_DEFAULT_FPS;
    const int nframe = 1 + (int)floor(duration_s / frame_time + 1e-9);
    if (s == FB_OK && (nframe < 1 || nframe > FB_CLIP_MAX_FRAMES || !isfinite(duration_s))) {
        s = fb_fail(err, FB_EINVAL, "%s: animation duration %g s is not usable", path,
                    duration_s);
    }
    if (s == FB_OK) {
        c->nchan = 0;
        for (int i = 0; i < c->njoint; i++) {
            c->joint[i].col = c->nchan;
            c->nchan += c->joint[i].nchan;
        }
        c->frames = fb_alloc(&c->alloc, (size_t)nframe * (size_t)c->nchan * sizeof(double));
        if (!c->frames) {
            s = fb_fail(err, FB_ENOMEM, "%s: out of memory", path);
        }
    }
    for (int i = 0; s == FB_OK && i < c->njoint; i++) {
        const struct aiNode* node = find_node(sc->mRootNode, c->joint[i].name);
        const struct aiNodeAnim* ch = node ? channel_of(an, node->mName.data) : NULL;
        fb_v3 t0;
        fb_quat q0;
        if (node) {
            node_rest(node, &t0, &q0);
        } else {
            t0 = c->joint[i].offset;
            q0 = fb_quat_identity();
        }
        const int axes[3] = {2, 0, 1};
        double prev[3] = {0.0, 0.0, 0.0};
        for (int f = 0; f < nframe; f++) {
            const double t = f * frame_time * tps;
            const fb_v3 p = ch ? sample_vec(ch->mPositionKeys, ch->mNumPositionKeys, t, t0) : t0;
            const fb_quat q = ch ? sample_quat(ch->mRotationKeys, ch->mNumRotationKeys, t, q0) : q0;
            double ang[3];
            fb_quat_to_euler(q, axes, f ? prev : NULL, ang);
            double* row = c->frames + (size_t)f * (size_t)c->nchan + (size_t)c->joint[i].col;
            if (c->joint[i].nchan == 6) {
                row[0] = p.x;
                row[1] = p.y;
                row[2] = p.z;
                row += 3;
            }
            for (int k = 0; k < 3; k++) {
                row[k] = ang[k] * 180.0 / FB_PI;
                prev[k] = ang[k];
            }
        }
    }
    aiReleaseImport(sc);
    if (s == FB_OK) {
        c->nframe = nframe;
        c->declared_frames = nframe;
        c->frame_time = frame_time;
        /* position channels here always hold the whole translation */
        fb_clip_opts o = *opts;
        if (o.pos_mode == FB_POS_AUTO) {
            o.pos_mode = FB_POS_ABSOLUTE;
        }
        s = fb_clip_finish(c, &o, err);
    }
    if (s != FB_OK) {
        fb_clip_destroy(c);
        return NULL;
    }
    return c;
}

fb_clip* fb_clip_load(const char* path, const fb_clip_opts* opts, const fb_allocator* alloc,
                      fb_error* err) {
    const fb_clip_opts o = opts ? *opts : fb_default_clip_opts();
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    size_t len = 0;
    char* text = read_file(path, &a, &len, err);
    if (!text) {
        return NULL;
    }
    /* BVH by extension or by its first word */
    const char* p = text;
    while (*p && isspace((unsigned char)*p)) {
        p++;
    }
    const bool bvh = has_extension(path, ".bvh") || strncmp(p, "HIERARCHY", 9) == 0;
    fb_clip* c = NULL;
    if (bvh) {
        c = fb_clip_parse_bvh(text, len, path, &o, &a, err);
        if (c && o.use_assimp) {
            cross_load_bvh(c, path);
        }
    }
    fb_free(&a, text);
    if (!bvh) {
        c = clip_from_assimp(path, &o, &a, err);
    }
    if (c) {
        fb_ok(err);
    }
    return c;
}
