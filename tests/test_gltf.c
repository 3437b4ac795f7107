/* The animated glTF export (tools/gltf.c), read back with Assimp's importer and checked
 * against independent answers:
 *   the node tree against the model's (one node per body under the world body, one per ball);
 *   the ball's translation keys against the straight line it was given;
 *   world positions composed from the imported keys along the imported tree against the
 *   library's forward kinematics;
 *   the meshes: closed and wound outward (positive volume by the divergence theorem), their
 *   volume near the shapes' (a coarse tessellation is a little smaller);
 *   errors: a missing directory and a target that cannot be replaced give FB_EIO and leave no
 *   file behind; a motion of another model gives FB_EINVAL.
 * Skipped (exit 77) when this Assimp has no glTF 2.0 exporter. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <assimp/cexport.h>
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gltf.h"
#include "math/quat.h"
#include "support.h"

#define SKIP 77
#define NFRAME 60
#define BALL_RADIUS 0.11

/* Key values go through float: positions of a few metres keep ~2.4e-7 m. */
#define KEY_TOL 1e-6
/* World positions compose ~8 float keys down a limb: a few 1e-7 m. */
#define FK_TOL 1e-5

typedef struct walk {
    fb_clip* clip;
    fb_character* ch;
    fb_motion* mo;
    double ball_pos[NFRAME * 3];
    char dir[64];
    char path[128];
} walk;

/* The bundled walk's character, 60 frames of it, and one ball on a straight line
 * p(t) = p0 + v t, written to a fresh directory. */
static void walk_make(walk* w) {
    fb_error err;
    w->clip = fb_clip_load(FB_DATA_DIR "/131_01.bvh", NULL, NULL, &err);
    ck_assert_msg(w->clip != NULL, "%s", err.msg);
    static fb_rules rules;
    ck_assert_msg(fb_rules_load(FB_DATA_DIR "/character_rules.json", &rules, &err) == FB_OK, "%s",
                  err.msg);
    fb_build_opts bo = fb_default_build_opts();
    bo.rules = &rules;
    w->ch = fb_character_build(w->clip, &bo, &err);
    ck_assert_msg(w->ch != NULL, "%s", err.msg);
    w->mo = fb_motion_from_clip(w->clip, w->ch, 0.0, 0, NFRAME, &err);
    ck_assert_msg(w->mo != NULL, "%s", err.msg);
    ck_assert_int_eq(w->mo->nframe, NFRAME);
    for (int f = 0; f < NFRAME; f++) {
        const double t = f * w->mo->dt;
        w->ball_pos[3 * f] = 2.0 - 3.0 * t;
        w->ball_pos[3 * f + 1] = 1.2 + 0.5 * t;
        w->ball_pos[3 * f + 2] = -0.5 + 1.0 * t;
    }
    ck_tmpdir(w->dir, sizeof w->dir, "gltf");
    snprintf(w->path, sizeof w->path, "%s/walk.gltf", w->dir);
}

static void walk_free(walk* w) {
    unlink(w->path);
    rmdir(w->dir);
    fb_motion_destroy(w->mo);
    fb_character_destroy(w->ch);
    fb_clip_destroy(w->clip);
}

/* Names in a directory, sorted, comma-separated (".", ".." left out). */
static void list_dir(const char* dir, char* out, size_t cap) {
    struct dirent** e;
    const int n = scandir(dir, &e, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    out[0] = '\0';
    for (int k = 0; k < n; k++) {
        if (strcmp(e[k]->d_name, ".") != 0 && strcmp(e[k]->d_name, "..") != 0) {
            strncat(out, out[0] ? "," : "", cap - strlen(out) - 1);
            strncat(out, e[k]->d_name, cap - strlen(out) - 1);
        }
        free(e[k]);
    }
    free(e);
}

/* ---- walking the imported scene --------------------------------------------------------- */

static int count_nodes(const struct aiNode* n) {
    int c = 1;
    for (unsigned k = 0; k < n->mNumChildren; k++) {
        c += count_nodes(n->mChildren[k]);
    }
    return c;
}

static const struct aiNode* find_node(const struct aiNode* n, const char* name) {
    if (strcmp(n->mName.data, name) == 0) {
        return n;
    }
    for (unsigned k = 0; k < n->mNumChildren; k++) {
        const struct aiNode* r = find_node(n->mChildren[k], name);
        if (r) {
            return r;
        }
    }
    return NULL;
}

static const struct aiNodeAnim* find_channel(const struct aiAnimation* an, const char* name) {
    for (unsigned k = 0; k < an->mNumChannels; k++) {
        if (strcmp(an->mChannels[k]->mNodeName.data, name) == 0) {
            return an->mChannels[k];
        }
    }
    return NULL;
}

/* World pose of node n at key f: its parent's pose times its own keys (or, without a channel,
 * its rest transform, which for the root must be the identity). */
static void world_pose(const struct aiAnimation* an, const struct aiNode* n, int f, fb_quat* q,
                       fb_v3* p) {
    if (!n->mParent) {
        const struct aiMatrix4x4* T = &n->mTransformation;
        ck_assert_msg(T->a1 == 1 && T->b2 == 1 && T->c3 == 1 && T->a2 == 0 && T->a4 == 0 &&
                          T->b4 == 0 && T->c4 == 0,
                      "root '%s' is not at the identity", n->mName.data);
        *q = fb_quat_identity();
        *p = fb_v3_zero();
        return;
    }
    world_pose(an, n->mParent, f, q, p);
    const struct aiNodeAnim* ch = find_channel(an, n->mName.data);
    ck_assert_msg(ch != NULL, "node '%s' has no channel", n->mName.data);
    const struct aiVector3D t = ch->mPositionKeys[f].mValue;
    const struct aiQuaternion r = ch->mRotationKeys[f].mValue;
    *p = fb_v3_add(*p, fb_quat_rotate(*q, fb_v3_make(t.x, t.y, t.z)));
    *q = fb_quat_mul(*q, fb_quat_normalize((fb_quat){r.w, r.x, r.y, r.z}));
}

/* Exports the walk and its ball to w->path, or fails the test. */
static void walk_export(const walk* w) {
    const double radius = BALL_RADIUS;
    fb_error err;
    ck_assert_msg(gltf_write(w->path, w->ch->model, w->mo, 1, &radius, w->ball_pos, &err) ==
                      FB_OK,
                  "%s", err.msg);
}

/* ---- tests ------------------------------------------------------------------------------ */

START_TEST(export_reimports_with_the_model_tree_and_motion) {
    walk w;
    walk_make(&w);
    const fb_model* m = w.ch->model;
    walk_export(&w);
    char names[512];
    list_dir(w.dir, names, sizeof names);
    ck_assert_str_eq(names, "walk.gltf"); /* one self-contained file, no temporary left */

    const struct aiScene* sc = aiImportFile(w.path, aiProcess_ValidateDataStructure);
    ck_assert_msg(sc != NULL, "import: %s", aiGetErrorString());

    /* the tree: world at the root, every body under its parent, the ball under the root */
    ck_assert_int_eq(count_nodes(sc->mRootNode), m->nbody + 1);
    ck_assert_str_eq(sc->mRootNode->mName.data, m->name[0]);
    for (int i = 1; i < m->nbody; i++) {
        const struct aiNode* n = find_node(sc->mRootNode, m->name[i]);
        ck_assert_msg(n != NULL, "no node '%s'", m->name[i]);
        ck_assert_str_eq(n->mParent->mName.data, m->name[m->parent[i]]);
    }
    const struct aiNode* ball = find_node(sc->mRootNode, "ball0");
    ck_assert_ptr_nonnull(ball);
    ck_assert_ptr_eq(ball->mParent, sc->mRootNode);

    /* one animation, one channel per node but the root, a key per frame at f dt */
    ck_assert_int_eq(sc->mNumAnimations, 1);
    const struct aiAnimation* an = sc->mAnimations[0];
    ck_assert_int_eq(an->mNumChannels, m->nbody - 1 + 1);
    for (unsigned k = 0; k < an->mNumChannels; k++) {
        const struct aiNodeAnim* ch = an->mChannels[k];
        const bool is_ball = strcmp(ch->mNodeName.data, "ball0") == 0;
        ck_assert_msg(is_ball || fb_model_body_by_name(m, ch->mNodeName.data) > 0,
                      "channel for '%s'", ch->mNodeName.data);
        ck_assert_int_eq(ch->mNumPositionKeys, NFRAME);
        if (!is_ball) {
            ck_assert_int_eq(ch->mNumRotationKeys, NFRAME);
        }
        for (int f = 0; f < NFRAME; f++) {
            fb_ck_near(ch->mPositionKeys[f].mTime / an->mTicksPerSecond, f * w.mo->dt, 0.0, 1e-6);
        }
    }

    /* the ball: its keys are the line it was given (its node hangs at the identity root) */
    const struct aiNodeAnim* bc = find_channel(an, "ball0");
    ck_assert_ptr_nonnull(bc);
    for (int f = 0; f < NFRAME; f++) {
        fb_ck_near(bc->mPositionKeys[f].mValue.x, w.ball_pos[3 * f], 0.0, KEY_TOL);
        fb_ck_near(bc->mPositionKeys[f].mValue.y, w.ball_pos[3 * f + 1], 0.0, KEY_TOL);
        fb_ck_near(bc->mPositionKeys[f].mValue.z, w.ball_pos[3 * f + 2], 0.0, KEY_TOL);
    }

    /* every body's origin, composed from the imported keys, against forward kinematics */
    fb_data* d = ck_data(m);
    const int frames[] = {0, 1, 23, 42, NFRAME - 1};
    double worst = 0.0;
    for (size_t a = 0; a < sizeof frames / sizeof frames[0]; a++) {
        const int f = frames[a];
        memcpy(d->q, w.mo->q + (size_t)f * m->nq, (size_t)m->nq * sizeof *d->q);
        fb_kinematics_pos(m, d);
        for (int i = 1; i < m->nbody; i++) {
            fb_quat q;
            fb_v3 p;
            world_pose(an, find_node(sc->mRootNode, m->name[i]), f, &q, &p);
            const fb_v3 ref = fb_point_pos(m, d, i, fb_v3_zero());
            const double e = fb_v3_norm(fb_v3_sub(p, ref));
            worst = fmax(worst, e);
            ck_assert_msg(e < FK_TOL, "frame %d body %s: |p - fk| = %g m", f, m->name[i], e);
        }
    }
    printf("gltf: %d nodes, %u channels x %d keys; worst body position error %.3g m\n",
           count_nodes(sc->mRootNode), an->mNumChannels, NFRAME, worst);
    fb_data_destroy(d);
    aiReleaseImport(sc);
    walk_free(&w);
}
END_TEST

/* Signed volume of a triangle mesh about point o [divergence theorem: the sum of
 * (v0 - o) . ((v1 - o) x (v2 - o)) / 6]. For a closed mesh wound counter-clockwise from outside
 * it is the volume, positive and the same about any o; a triangle wound the wrong way makes it
 * depend on o. */
static double mesh_volume(const struct aiMesh* me, fb_v3 o) {
    double v = 0.0;
    for (unsigned t = 0; t < me->mNumFaces; t++) {
        ck_assert_int_eq(me->mFaces[t].mNumIndices, 3);
        fb_v3 p[3];
        for (int c = 0; c < 3; c++) {
            const struct aiVector3D a = me->mVertices[me->mFaces[t].mIndices[c]];
            p[c] = fb_v3_sub(fb_v3_make(a.x, a.y, a.z), o);
        }
        v += fb_v3_dot(p[0], fb_v3_cross(p[1], p[2])) / 6.0;
    }
    return v;
}

static double shape_volume(const fb_shape* s) {
    const double ball = 4.0 / 3.0 * FB_PI * s->radius * s->radius * s->radius;
    switch (s->type) {
    case FB_SHAPE_SPHERE:
        return ball;
    case FB_SHAPE_CAPSULE:
        return ball + FB_PI * s->radius * s->radius * fb_v3_norm(fb_v3_sub(s->p1, s->p0));
    case FB_SHAPE_BOX:
        return s->size.x * s->size.y * s->size.z;
    }
    return 0.0;
}

START_TEST(meshes_are_closed_outward_and_the_shapes_size) {
    walk w;
    walk_make(&w);
    const fb_model* m = w.ch->model;
    walk_export(&w);
    const struct aiScene* sc = aiImportFile(w.path, 0);
    ck_assert_msg(sc != NULL, "import: %s", aiGetErrorString());
    double lo = INFINITY, hi = 0.0; /* mesh volume / shape volume */
    for (int i = 0; i <= m->nbody; i++) {
        /* i = nbody: the ball */
        const char* name = i < m->nbody ? m->name[i] : "ball0";
        double want = 0.0;
        for (int k = 0; i < m->nbody && k < m->nshape; k++) {
            want += m->shape[k].body == i ? shape_volume(&m->shape[k]) : 0.0;
        }
        if (i == m->nbody) {
            want = 4.0 / 3.0 * FB_PI * BALL_RADIUS * BALL_RADIUS * BALL_RADIUS;
        }
        const struct aiNode* n = find_node(sc->mRootNode, name);
        ck_assert_ptr_nonnull(n);
        double got = 0.0;
        for (unsigned k = 0; k < n->mNumMeshes; k++) {
            const struct aiMesh* me = sc->mMeshes[n->mMeshes[k]];
            const double v0 = mesh_volume(me, fb_v3_zero());
            const double v1 = mesh_volume(me, fb_v3_make(3.0, -2.0, 1.0));
            ck_assert_msg(fabs(v0 - v1) <= 1e-9, "%s: mesh not closed and wound one way", name);
            got += v0;
        }
        if (want > 0.0) {
            lo = fmin(lo, got / want);
            hi = fmax(hi, got / want);
        }
        /* an inscribed tessellation is a little smaller than its shape; boxes are exact */
        ck_assert_msg(want == 0.0 ? n->mNumMeshes == 0
                                  : got > 0.75 * want && got < (1.0 + 1e-6) * want,
                      "%s: mesh volume %g, shapes %g", name, got, want);
    }
    printf("gltf: mesh volume / shape volume in [%.3f, %.3f]\n", lo, hi);
    aiReleaseImport(sc);
    walk_free(&w);
}
END_TEST

START_TEST(failures_leave_no_file) {
    walk w;
    walk_make(&w);
    const fb_model* m = w.ch->model;
    const double radius = BALL_RADIUS;
    fb_error err;
    char bad[192], names[512];

    /* a directory that does not exist */
    snprintf(bad, sizeof bad, "%s/missing/walk.gltf", w.dir);
    ck_assert_int_eq(gltf_write(bad, m, w.mo, 1, &radius, w.ball_pos, &err), FB_EIO);
    ck_assert_msg(strstr(err.msg, bad) != NULL, "'%s' does not name the path", err.msg);
    ck_assert_int_ne(access(bad, F_OK), 0);
    list_dir(w.dir, names, sizeof names);
    ck_assert_str_eq(names, "");

    /* a target that cannot be replaced (a directory): the temporary is removed again */
    snprintf(bad, sizeof bad, "%s/taken.gltf", w.dir);
    ck_assert_int_eq(mkdir(bad, 0755), 0);
    ck_assert_int_eq(gltf_write(bad, m, w.mo, 1, &radius, w.ball_pos, &err), FB_EIO);
    ck_assert_msg(strstr(err.msg, bad) != NULL, "'%s' does not name the path", err.msg);
    list_dir(w.dir, names, sizeof names);
    ck_assert_str_eq(names, "taken.gltf");
    rmdir(bad);

    /* a motion of another model, a bad radius */
    fb_motion other = *w.mo;
    other.nq = m->nq + 1;
    ck_assert_int_eq(gltf_write(w.path, m, &other, 0, NULL, NULL, &err), FB_EINVAL);
    const double neg = -1.0;
    ck_assert_int_eq(gltf_write(w.path, m, w.mo, 1, &neg, w.ball_pos, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "ball 0") != NULL, "%s", err.msg);
    ck_assert_int_ne(access(w.path, F_OK), 0);
    walk_free(&w);
}
END_TEST

static Suite* gltf_suite(void) {
    Suite* s = suite_create("gltf");
    TCase* tc = tcase_create("export");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, export_reimports_with_the_model_tree_and_motion);
    tcase_add_test(tc, meshes_are_closed_outward_and_the_shapes_size);
    tcase_add_test(tc, failures_leave_no_file);
    suite_add_tcase(s, tc);
    return s;
}

/* Whether this Assimp can write glTF 2.0 (format id "gltf2"). */
static bool have_gltf2_exporter(void) {
    bool found = false;
    for (size_t k = 0; k < aiGetExportFormatCount() && !found; k++) {
        const struct aiExportFormatDesc* e = aiGetExportFormatDescription(k);
        found = e && strcmp(e->id, "gltf2") == 0;
        aiReleaseExportFormatDescription(e);
    }
    return found;
}

int main(void) {
    if (!have_gltf2_exporter()) {
        printf("Assimp has no glTF 2.0 exporter (format id gltf2): glTF export test skipped\n");
        return SKIP;
    }
    return ck_run_suite(gltf_suite());
}
