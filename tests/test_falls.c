/* Falls with a free root (issue 17, "Targets and tests"), judged from what the real
 * `featherbone simulate --root free` writes:
 *   on the bundled walk (131_01) and on 131_03 (../shared, skipped with a note when absent),
 *   with no hit, the demo's hit (scripts/demo.sh), a 5 kg ball at 15 m/s to the head and 20
 *   seeds of `--random-hits 5`, every run exits 0 and writes every frame (the input's count),
 *   no body is deeper than 2 cm in the ground at any frame, and no knee or elbow is more than
 *   2 degrees past its stop.
 * The judge shares nothing with the library's kinematics: the exported BVH (--keep-placement,
 * so the ground is y = 0 in it) is read from its text and posed by forward kinematics written
 * in the tests (support/bvhtext.c); the depth of each body is that of its shapes, taken from
 * the character the library builds from the clip (input, not output) and placed on the body's
 * frame here; the stops are the character's ranges (the model's limits of its knee and elbow
 * hinges), the hinge angle the twist about the hinge's axis of the exported rotation, computed
 * here. Release: whole clips; AddressSanitizer (about 20x slower): the first 2 s of each clip
 * and fewer seeds, so the asan tree stays within the CI's budget.
 * The ragdoll: the same character dropped from standing with zero torques (no tracker), from
 * 21 standing frames of the clip (0, 10, ..., 200; under the sanitizer 5 of them), with the
 * rules' passive joint damping and friction and rolling resistance: asserted, no drop past any
 * range by more than 1 deg (the world's limit projection) nor gaining energy of its own beyond
 * the integrator's, and every one at rest within 3 s (docs/CONSTRAINTS.md, "The ragdoll").
 * FB_RAGDOLL_SURVEY=1 drops it from every 12th frame of the whole clip instead (83 drops),
 * asserting the same but at rest within 3 s for RAGDOLL_SURVEY_SHARE of them and by the end
 * (4 s) for all. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bvhtext.h"
#include "support.h"

/* The targets */
#define MAX_DEPTH 0.02     /* m: no body deeper in the ground */
#define MAX_PAST_STOP 2.0  /* deg: no knee or elbow further past its stop */

/* Seeds of --random-hits 5; the excerpt simulated under the sanitizer */
#if !CK_ASAN
#define NSEED 20
#define FRAMES ""
#define EXCERPT 0
#else
#define NSEED 5
#define FRAMES " --frames 0:240"
#define EXCERPT 240
#endif

#define CK_PI 3.14159265358979323846

/* The demo's hit (scripts/demo.sh), and a hit too strong to absorb (issue 18) */
static const char* const DEMO_HIT = "--hit time=1.2,target=LeftElbow,speed=10,mass=0.45,radius=0.11";
static const char* const HEAD_HIT = "--hit time=0.5,target=Head,speed=15,mass=5";

static char out_buf[1 << 16];

/* ---- the character: where each body's frame comes from, its shapes, its hinges ----------- */

typedef struct body_src {
    int bvh;        /* the exported joint whose frame is the body's, or -1: */
    int parent;     /* ... the parent body's frame moved by X_tree (fixed bodies: dropped
                       joints, End Sites) */
    double E[9];    /* X_tree: parent -> body rotation (Plucker E, row-major) */
    double r[3];    /* X_tree: the body's origin in the parent's frame (m) */
} body_src;

typedef struct hinge_check {
    int body;       /* a knee or elbow hinge */
    int bvh;        /* its joint in the export */
    const char* name;
    double axis[3]; /* joint frame */
    double rest[9]; /* the hinge's rest rotation: exported rotation = rest R(axis, angle) */
    double lo, hi;  /* rad: its stops */
} hinge_check;

typedef struct figure {
    const char* clip; /* path */
    fb_clip* c;
    fb_character* ch;
    int nbody;
    body_src src[CK_BVH_MAX_JOINTS];
    int nhinge;
    hinge_check hinge[16];
} figure;

static void quat_to_rows(fb_quat q, double R[9]) {
    const double w = q.w, x = q.x, y = q.y, z = q.z;
    const double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                         2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

/* The character of the clip (bundled rules) and, against the first export's joints, where
 * each body's frame comes from. */
static void figure_make(figure* fg, const char* clip, const ck_bvh* ex) {
    memset(fg, 0, sizeof *fg);
    fg->clip = clip;
    ck_load_character(clip, FB_DATA_DIR "/character_rules.json", &fg->c, &fg->ch);
    const fb_model* m = fg->ch->model;
    ck_assert_int_le(m->nbody, CK_BVH_MAX_JOINTS);
    fg->nbody = m->nbody;
    for (int b = 1; b < m->nbody; b++) {
        body_src* s = &fg->src[b];
        const int j = fg->ch->joint_of_body[b];
        s->bvh = -1;
        s->parent = m->parent[b];
        if (j >= 0 && m->jtype[b] != FB_JOINT_FIXED) {
            s->bvh = ck_bvh_find(ex, fg->c->joint[j].name);
            ck_assert_msg(s->bvh >= 0, "%s: joint %s not in the export", clip,
                          fg->c->joint[j].name);
        } else {
            ck_assert_msg(s->parent > 0, "%s: body %s: a fixed body on the world", clip,
                          m->name[b]);
        }
        for (int r = 0; r < 3; r++) {
            for (int k = 0; k < 3; k++) {
                s->E[r * 3 + k] = m->X_tree[b].E.m[r][k];
            }
        }
        s->r[0] = m->X_tree[b].r.x;
        s->r[1] = m->X_tree[b].r.y;
        s->r[2] = m->X_tree[b].r.z;
        if (j < 0 || m->jtype[b] != FB_JOINT_REVOLUTE || fg->ch->range[j].rule < 0 ||
            (fg->ch->range[j].kind != FB_RANGE_KNEE && fg->ch->range[j].kind != FB_RANGE_ELBOW)) {
            continue;
        }
        ck_assert_int_lt(fg->nhinge, 16);
        ck_assert_msg(m->limit[b].on, "%s: %s has a range but no limit", clip, m->name[b]);
        hinge_check* h = &fg->hinge[fg->nhinge++];
        h->body = b;
        h->bvh = s->bvh;
        h->name = m->name[b];
        h->axis[0] = m->axis[b].x;
        h->axis[1] = m->axis[b].y;
        h->axis[2] = m->axis[b].z;
        quat_to_rows(fg->ch->hinge[j].rest, h->rest);
        h->lo = m->limit[b].lo;
        h->hi = m->limit[b].hi;
    }
    ck_assert_msg(fg->nhinge == 4, "%s: %d knees and elbows, expected 4", clip, fg->nhinge);
}

static void figure_free(figure* fg) {
    fb_character_destroy(fg->ch);
    fb_clip_destroy(fg->c);
}

/* ---- judging an export ------------------------------------------------------------------- */

/* c = a b (row-major 3x3); at = true: c = a^T b */
static void mul3(const double* a, const double* b, double* c, bool at) {
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++) {
            double v = 0.0;
            for (int i = 0; i < 3; i++) {
                v += (at ? a[i * 3 + r] : a[r * 3 + i]) * b[i * 3 + k];
            }
            c[r * 3 + k] = v;
        }
    }
}

/* World position of point x (body coordinates) of a body at (R, p). */
static void to_world(const double R[9], const double p[3], const double x[3], double out[3]) {
    for (int r = 0; r < 3; r++) {
        out[r] = p[r] + R[r * 3] * x[0] + R[r * 3 + 1] * x[1] + R[r * 3 + 2] * x[2];
    }
}

/* The lowest point (world y, m) of shape sh on a body at (R, p). */
static double shape_bottom(const fb_shape* sh, const double R[9], const double p[3]) {
    double w[3];
    const double c0[3] = {sh->p0.x, sh->p0.y, sh->p0.z};
    switch (sh->type) {
    case FB_SHAPE_SPHERE:
        to_world(R, p, c0, w);
        return w[1] - sh->radius;
    case FB_SHAPE_CAPSULE: {
        const double c1[3] = {sh->p1.x, sh->p1.y, sh->p1.z};
        to_world(R, p, c0, w);
        const double y0 = w[1];
        to_world(R, p, c1, w);
        return fmin(y0, w[1]) - sh->radius;
    }
    case FB_SHAPE_BOX: {
        double low = INFINITY;
        const double half[3] = {0.5 * sh->size.x, 0.5 * sh->size.y, 0.5 * sh->size.z};
        for (int k = 0; k < 8; k++) {
            double x[3];
            for (int r = 0; r < 3; r++) {
                const double e[3] = {(k & 1) ? half[0] : -half[0], (k & 2) ? half[1] : -half[1],
                                     (k & 4) ? half[2] : -half[2]};
                x[r] = c0[r] + sh->R.m[r][0] * e[0] + sh->R.m[r][1] * e[1] + sh->R.m[r][2] * e[2];
            }
            to_world(R, p, x, w);
            low = fmin(low, w[1]);
        }
        return low;
    }
    }
    return INFINITY;
}

/* The angle (rad, in (-pi, pi]) of rotation P about the unit axis a: the twist of its
 * quaternion about a (P = R(a, angle) for a pure hinge). */
static double angle_about(const double P[9], const double a[3]) {
    double w, v[3];
    const double tr = P[0] + P[4] + P[8];
    if (tr > 0.0) { /* Shepperd: the largest of 4w^2, 4x^2, 4y^2, 4z^2 first */
        const double s = 2.0 * sqrt(1.0 + tr);
        w = 0.25 * s;
        v[0] = (P[7] - P[5]) / s;
        v[1] = (P[2] - P[6]) / s;
        v[2] = (P[3] - P[1]) / s;
    } else if (P[0] > P[4] && P[0] > P[8]) {
        const double s = 2.0 * sqrt(1.0 + P[0] - P[4] - P[8]);
        w = (P[7] - P[5]) / s;
        v[0] = 0.25 * s;
        v[1] = (P[1] + P[3]) / s;
        v[2] = (P[2] + P[6]) / s;
    } else if (P[4] > P[8]) {
        const double s = 2.0 * sqrt(1.0 + P[4] - P[0] - P[8]);
        w = (P[2] - P[6]) / s;
        v[0] = (P[1] + P[3]) / s;
        v[1] = 0.25 * s;
        v[2] = (P[5] + P[7]) / s;
    } else {
        const double s = 2.0 * sqrt(1.0 + P[8] - P[0] - P[4]);
        w = (P[3] - P[1]) / s;
        v[0] = (P[2] + P[6]) / s;
        v[1] = (P[5] + P[7]) / s;
        v[2] = 0.25 * s;
    }
    double t = 2.0 * atan2(v[0] * a[0] + v[1] * a[1] + v[2] * a[2], w);
    return t > CK_PI ? t - 2.0 * CK_PI : (t <= -CK_PI ? t + 2.0 * CK_PI : t);
}

typedef struct verdict {
    int frames;                 /* written */
    double depth;               /* m: the deepest any body went (>= 0) */
    int depth_frame, depth_body;
    double past;                /* deg: the furthest a knee or elbow went past its stop */
    int past_frame, past_hinge;
    double first_low;           /* m: the lowest point at the first frame */
} verdict;

/* Poses every body of the figure at frame f of export ex: R, p (m) per body. */
static void pose_bodies(const figure* fg, const ck_bvh* ex, double unit, int f, double (*R)[9],
                        double (*p)[3]) {
    static double jp[CK_BVH_MAX_JOINTS][3], jR[CK_BVH_MAX_JOINTS][9];
    ck_bvh_pose(ex, f, jp, jR);
    for (int b = 1; b < fg->nbody; b++) {
        const body_src* s = &fg->src[b];
        if (s->bvh >= 0) {
            memcpy(R[b], jR[s->bvh], sizeof R[b]);
            for (int r = 0; r < 3; r++) {
                p[b][r] = unit * jp[s->bvh][r];
            }
        } else { /* R_b = R_parent E^T, p_b = p_parent + R_parent r */
            double Et[9];
            for (int r = 0; r < 3; r++) {
                for (int k = 0; k < 3; k++) {
                    Et[r * 3 + k] = s->E[k * 3 + r];
                }
            }
            mul3(R[s->parent], Et, R[b], false);
            to_world(R[s->parent], p[s->parent], s->r, p[b]);
        }
    }
}

static void judge(const figure* fg, const char* path, verdict* v) {
    ck_bvh ex;
    ck_bvh_read(path, &ex);
    const double unit = fg->c->unit;
    const fb_model* m = fg->ch->model;
    static double R[CK_BVH_MAX_JOINTS][9], p[CK_BVH_MAX_JOINTS][3];
    memset(v, 0, sizeof *v);
    v->frames = ex.declared == ex.nframe ? ex.nframe : -1;
    v->depth_body = v->past_hinge = -1;
    for (int f = 0; f < ex.nframe; f++) {
        pose_bodies(fg, &ex, unit, f, R, p);
        double low = INFINITY;
        for (int s = 0; s < m->nshape; s++) {
            const fb_shape* sh = &m->shape[s];
            const double y = shape_bottom(sh, R[sh->body], p[sh->body]);
            low = fmin(low, y);
            if (-y > v->depth) {
                v->depth = -y;
                v->depth_frame = f;
                v->depth_body = sh->body;
            }
        }
        if (f == 0) {
            v->first_low = low;
        }
        for (int k = 0; k < fg->nhinge; k++) {
            const hinge_check* h = &fg->hinge[k];
            double Rl[9], P[9];
            ck_bvh_local_rotation(&ex, h->bvh, f, Rl);
            mul3(h->rest, Rl, P, true); /* rest^T R_local = R(axis, angle) */
            const double t = angle_about(P, h->axis);
            const double past = fmax(fmax(h->lo - t, t - h->hi), 0.0) * 180.0 / CK_PI;
            if (past > v->past) {
                v->past = past;
                v->past_frame = f;
                v->past_hinge = k;
            }
        }
    }
    ck_bvh_free(&ex);
}

/* ---- the runs ---------------------------------------------------------------------------- */

#define MAX_RUNS (3 + 20)

typedef struct run_spec {
    char label[48];
    char args[160];
} run_spec;

static int make_runs(run_spec* r) {
    int n = 0;
    snprintf(r[n].label, sizeof r[n].label, "no hit");
    r[n++].args[0] = '\0';
    snprintf(r[n].label, sizeof r[n].label, "the demo's hit");
    snprintf(r[n++].args, sizeof r[0].args, "%s", DEMO_HIT);
    snprintf(r[n].label, sizeof r[n].label, "5 kg at 15 m/s, head");
    snprintf(r[n++].args, sizeof r[0].args, "%s", HEAD_HIT);
    for (int seed = 1; seed <= NSEED; seed++) {
        snprintf(r[n].label, sizeof r[n].label, "--random-hits 5 --seed %d", seed);
        snprintf(r[n++].args, sizeof r[0].args, "--random-hits 5 --seed %d", seed);
    }
    return n;
}

/* Simulates every run on the clip and judges each export; fails after all of them, naming
 * every run that missed a target. */
static void falls_of(const char* clip) {
    if (access(clip, R_OK) != 0) {
        printf("note: %s not present, its falls not checked\n", clip);
        return;
    }
    ck_bvh in;
    ck_bvh_read(clip, &in);
    const int want = EXCERPT > 0 && EXCERPT < in.nframe ? EXCERPT : in.nframe;
    ck_bvh_free(&in);
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "falls");
    run_spec runs[MAX_RUNS];
    const int nrun = make_runs(runs);
    figure fg;
    bool made = false;
    char failed[4096] = "";
    double worst_depth = 0.0, worst_past = 0.0;
    const char* name = strrchr(clip, '/') + 1;
    for (int k = 0; k < nrun; k++) {
        char out[600], cmd[2048];
        snprintf(out, sizeof out, "%s/run%d.bvh", dir, k);
        snprintf(cmd, sizeof cmd, "simulate '%s' -o '%s' --root free --keep-placement --quiet%s %s",
                 clip, out, FRAMES, runs[k].args);
        const int rc = ck_run(FB_CLI_PATH, cmd, out_buf, sizeof out_buf);
        const size_t len = strlen(failed);
        if (rc != 0 || access(out, R_OK) != 0) {
            printf("%s, %s: exit %d: %s\n", name, runs[k].label, rc, out_buf);
            snprintf(failed + len, sizeof failed - len, " %.47s: exit %d;", runs[k].label, rc);
            continue;
        }
        ck_bvh ex;
        ck_bvh_read(out, &ex);
        if (!made) {
            figure_make(&fg, clip, &ex);
            made = true;
        }
        ck_bvh_free(&ex);
        verdict v;
        judge(&fg, out, &v);
        const fb_model* m = fg.ch->model;
        printf("%s, %-26s %4d frames; deepest %5.2f cm (%s, frame %d); knees and elbows at "
               "most %5.2f deg past a stop (%s, frame %d); first frame's lowest point %+.2f cm\n",
               name, runs[k].label, v.frames, 100.0 * v.depth,
               v.depth_body > 0 ? m->name[v.depth_body] : "-", v.depth_frame, v.past,
               v.past_hinge >= 0 ? fg.hinge[v.past_hinge].name : "-", v.past_frame,
               100.0 * v.first_low);
        worst_depth = fmax(worst_depth, v.depth);
        worst_past = fmax(worst_past, v.past);
        /* the judge's own kinematics agree with the simulation's placement: the clip starts
         * standing on the ground */
        ck_assert_msg(fabs(v.first_low) < 0.02, "%s, %s: the first frame's lowest point is %g m "
                      "off the ground: the test's kinematics do not match the export", name,
                      runs[k].label, v.first_low);
        if (v.frames != want || v.depth > MAX_DEPTH || v.past > MAX_PAST_STOP) {
            snprintf(failed + len, sizeof failed - len, " %.47s: %d of %d frames, %.2f cm deep, "
                     "%.2f deg past a stop;", runs[k].label, v.frames, want, 100.0 * v.depth,
                     v.past);
        }
        unlink(out);
        snprintf(out, sizeof out, "%s/run%d.balls.json", dir, k);
        unlink(out);
    }
    printf("%s: %d runs%s; deepest %.2f cm, furthest past a knee or elbow stop %.2f deg\n",
           name, nrun, CK_ASAN ? " (first 240 frames)" : " (whole clip)", 100.0 * worst_depth,
           worst_past);
    if (made) {
        figure_free(&fg);
    }
    ck_remove_dir(dir);
    ck_assert_msg(failed[0] == '\0', "%s:%s", name, failed);
}

START_TEST(walk_131_01_falls_within_the_targets) {
    falls_of(FB_DATA_DIR "/131_01.bvh");
}
END_TEST

START_TEST(walk_131_03_falls_within_the_targets) {
    falls_of(FB_SHARED_MOCAP_DIR "/131_03.bvh");
}
END_TEST

/* ---- the ragdoll: the default character falling with zero torques ------------------------ */

/* How far (deg) body b's joint is past its range at q (its jnq coordinates), computed here:
 * a hinge against its stops; a ball joint's swing by the elliptic range's g (ck_swing_g, the
 * tests' own), as the angle along its direction past the boundary |s| (1 - 1/g), and its
 * twist about the twist axis, 2 atan2(v . a, w) of q = (w, v), against [lo, hi]. */
static double past_range(const fb_model* m, int b, const double* q) {
    const fb_joint_limit* L = &m->limit[b];
    if (!L->on) {
        return 0.0;
    }
    if (m->jtype[b] == FB_JOINT_REVOLUTE) {
        return fmax(fmax(L->lo - q[0], q[0] - L->hi), 0.0) * 180.0 / CK_PI;
    }
    ck_assert_msg(m->jtype[b] == FB_JOINT_SPHERICAL && L->elliptic, "%s: an unexpected range",
                  m->name[b]);
    const fb_quat r = {q[0], q[1], q[2], q[3]};
    double G[2];
    const double g = ck_swing_g(L, r, G);
    /* the swing angle: between the neutral and where the rotation takes the twist axis */
    const fb_v3 a = L->twist_axis;
    const double ra[3] = {a.x, a.y, a.z};
    double R[9];
    quat_to_rows(r, R);
    double bx[3];
    for (int k = 0; k < 3; k++) {
        bx[k] = R[k * 3] * ra[0] + R[k * 3 + 1] * ra[1] + R[k * 3 + 2] * ra[2];
    }
    const double c = bx[0] * L->neutral.x + bx[1] * L->neutral.y + bx[2] * L->neutral.z;
    const double theta = acos(fmax(-1.0, fmin(1.0, c)));
    const double swing = g > 1.0 ? theta * (1.0 - 1.0 / g) : 0.0;
    const double tw = 2.0 * atan2(r.x * a.x + r.y * a.y + r.z * a.z, r.w);
    const double twist = fmax(fmax(L->lo - tw, tw - L->hi), 0.0);
    return fmax(swing, twist) * 180.0 / CK_PI;
}

/* Ragdoll targets (issue 17): at rest within 3 s (kinetic energy below 1e-3 J), nothing past
 * its range (here: by more than 1 deg; the world projects a joint back once it is limit_tol,
 * 0.25 deg, past). The test asserts both for every drop, that no fall gains energy of its own
 * beyond the integrator's (total energy rises in single steps by at most RAGDOLL_GAIN of what
 * it loses), and every drop at rest by its end (4 s). Over the whole clip (the survey) some
 * drops topple late from a propped posture: 82 of 83 at rest within 3 s, the last at 3.817 s
 * (docs/CONSTRAINTS.md, "The ragdoll"). */
#define RAGDOLL_RATE 240.0  /* Hz: simulate's (gains init's) */
#define RAGDOLL_REST_TIME 3.0
#define RAGDOLL_REST_KE 1e-3
#define RAGDOLL_RANGE_TOL 1.0
#define RAGDOLL_GAIN 0.05
#if !CK_ASAN
#define RAGDOLL_FRAME_STEP 10
#else
#define RAGDOLL_FRAME_STEP 50 /* 5 of the 21 drops: a limp body steps slowly (joint friction) */
#endif
#define RAGDOLL_FRAME_LAST 200
#define RAGDOLL_SURVEY_STEP 12 /* frames 0, 12, ..., 984 of the 994 */
#define RAGDOLL_SURVEY_LAST 984
#define RAGDOLL_SURVEY_SHARE 0.95

/* One drop from clip frame f0; prints its figures, asserts no energy gained beyond the
 * integrator's, and returns when the kinetic energy went below RAGDOLL_REST_KE for good (s;
 * INFINITY if not by the end, 4 s; *rests false) and the furthest past a range (deg). */
static void ragdoll_drop(int f0, double* rest_time, double* past, bool* rests) {
    fb_clip* clip;
    fb_character* ch;
    ck_load_character(FB_DATA_DIR "/131_01.bvh", FB_DATA_DIR "/character_rules.json", &clip,
                      &ch);
    const fb_model* m = ch->model;
    fb_error err;
    fb_motion* mo = fb_motion_from_clip(clip, ch, 0.0, f0, f0 + 1, &err);
    ck_assert_msg(mo != NULL, "%s", err.msg);
    fb_world_opts wo = fb_default_world_opts();
    wo.dt = 1.0 / RAGDOLL_RATE;
    fb_world* w = fb_world_create(1, &m, &wo, NULL, &err);
    ck_assert_msg(w != NULL, "%s", err.msg);
    ck_assert_int_eq(fb_world_set_rolling(w, 0, ch->rolling_resistance, &err), FB_OK);
    fb_data* d = fb_world_data(w, 0);
    /* the clip's first frame (it stands), its lowest point 1 cm above the ground, at rest */
    memcpy(d->q, mo->q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, d);
    double low = INFINITY;
    for (int i = 0; i < m->nshape; i++) {
        const int b = m->shape[i].body;
        double R[9];
        const double p[3] = {d->X_0[b].r.x, d->X_0[b].r.y, d->X_0[b].r.z};
        for (int r = 0; r < 3; r++) {
            for (int k = 0; k < 3; k++) {
                R[r * 3 + k] = d->X_0[b].E.m[k][r]; /* body -> world: E^T */
            }
        }
        low = fmin(low, shape_bottom(&m->shape[i], R, p));
    }
    d->q[m->q_adr[1] + 1] += 0.01 - low; /* the root's y: its joint frame is the world's */
    const int steps = (int)lround(4.0 * RAGDOLL_RATE);
    double ke_peak = 0.0, ke_rest = NAN, worst = 0.0, gained = 0.0, lost = 0.0;
    int worst_body = 0, at_rest = -1;
    double worst_t = 0.0;
    fb_kinematics(m, d);
    double ke, pe;
    fb_energy(m, d, &ke, &pe);
    double e_prev = ke + pe;
    for (int k = 1; k <= steps; k++) {
        ck_assert_msg(fb_world_step(w, &err) == FB_OK, "%s", err.msg);
        fb_kinematics(m, d);
        fb_energy(m, d, &ke, &pe);
        const double de = ke + pe - e_prev;
        e_prev = ke + pe;
        gained += fmax(de, 0.0);
        lost += fmax(-de, 0.0);
        ke_peak = fmax(ke_peak, ke);
        at_rest = ke < RAGDOLL_REST_KE ? (at_rest < 0 ? k : at_rest) : -1;
        if (k == (int)lround(RAGDOLL_REST_TIME * RAGDOLL_RATE)) {
            ke_rest = ke;
        }
        for (int b = 1; b < m->nbody; b++) {
            const double p = past_range(m, b, d->q + m->q_adr[b]);
            if (p > worst) {
                worst = p;
                worst_body = b;
                worst_t = k / RAGDOLL_RATE;
            }
        }
    }
    printf("ragdoll (131_01's character, zero torques, %g Hz) dropped from standing at frame "
           "%d: peak kinetic energy %.1f J, %.3g J at %g s (target < %g J), %s; energy gained "
           "in the steps that gained %.2f J against %.1f J lost; furthest past a range %.2f deg "
           "(%s at %.3f s)\n",
           RAGDOLL_RATE, f0, ke_peak, ke_rest, RAGDOLL_REST_TIME, RAGDOLL_REST_KE,
           at_rest > 0 ? "at rest" : "not at rest by 4 s", gained, lost, worst,
           m->name[worst_body], worst_t);
    if (at_rest > 0) {
        printf("  below %g J from %.3f s on\n", RAGDOLL_REST_KE, at_rest / RAGDOLL_RATE);
    }
    fflush(stdout);
    ck_assert_msg(gained <= RAGDOLL_GAIN * lost, "the fall gained %g J in single steps, lost %g J",
                  gained, lost);
    fb_world_destroy(w);
    fb_motion_destroy(mo);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    *rest_time = at_rest > 0 ? at_rest / RAGDOLL_RATE : INFINITY;
    *rests = at_rest > 0;
    *past = worst;
}

/* The drops from the clip's standing frames 0, 10, ..., 200: every one within
 * RAGDOLL_RANGE_TOL of its ranges (9.5 deg past without the world's limit projection: red),
 * every one at rest at the end (4 s; frame 10's still moves past it without the rules'
 * rolling resistance: red) and by RAGDOLL_REST_TIME (without the rules' joint friction 2 of
 * the 21 are not: red). */
START_TEST(ragdoll_dropped_from_standing) {
    const char* env = getenv("FB_RAGDOLL_SURVEY");
    const bool survey = env && strcmp(env, "1") == 0;
    const int step = survey ? RAGDOLL_SURVEY_STEP : RAGDOLL_FRAME_STEP;
    const int last = survey ? RAGDOLL_SURVEY_LAST : RAGDOLL_FRAME_LAST;
    const double share = survey ? RAGDOLL_SURVEY_SHARE : 1.0;
    double worst = 0.0;
    int rest = 0, drops = 0, worst_frame = 0, late = -1;
    for (int f0 = 0; f0 <= last; f0 += step) {
        double rest_time, past;
        bool rests;
        ragdoll_drop(f0, &rest_time, &past, &rests);
        /* below RAGDOLL_REST_KE from then on to the end */
        rest += rest_time <= RAGDOLL_REST_TIME;
        drops++;
        if (past > worst) {
            worst = past;
            worst_frame = f0;
        }
        if (!rests && late < 0) {
            late = f0;
        }
    }
    printf("  targets: at rest by %g s %s (%d of the %d drops; %s at rest by 4 s); within %g "
           "deg of every range %s (%.2f deg at most, frame %d's drop)\n",
           RAGDOLL_REST_TIME, rest == drops ? "met" : "NOT MET", rest, drops,
           late < 0 ? "every one" : "NOT every one", RAGDOLL_RANGE_TOL,
           worst <= RAGDOLL_RANGE_TOL ? "met" : "NOT MET", worst, worst_frame);
    fflush(stdout);
    ck_assert_msg(worst <= RAGDOLL_RANGE_TOL, "frame %d's drop: %g deg past a range", worst_frame,
                  worst);
    ck_assert_msg(late < 0, "frame %d's drop is not at rest by 4 s", late);
    ck_assert_msg(rest >= share * drops, "%d of %d drops at rest by %g s", rest, drops,
                  RAGDOLL_REST_TIME);
}
END_TEST

static Suite* falls_suite(void) {
    Suite* s = suite_create("falls");
    TCase* a = tcase_create("131_01");
    tcase_set_timeout(a, 900);
    tcase_add_test(a, walk_131_01_falls_within_the_targets);
    suite_add_tcase(s, a);
    TCase* b = tcase_create("131_03");
    tcase_set_timeout(b, 900);
    tcase_add_test(b, walk_131_03_falls_within_the_targets);
    suite_add_tcase(s, b);
    TCase* r = tcase_create("ragdoll");
    tcase_set_timeout(r, 300);
    tcase_add_test(r, ragdoll_dropped_from_standing);
    suite_add_tcase(s, r);
    return s;
}

int main(void) {
    return ck_run_suite(falls_suite());
}
