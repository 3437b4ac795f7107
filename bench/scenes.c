/* Benchmark and test scenes (BENCH_MODELS.md), random trees and random states. */
#include "scenes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "math/quat.h"
#include "math/spatial.h"

/* ---- random numbers -------------------------------------------------------------------- */

scene_rng scene_rng_make(uint64_t seed) {
    return (scene_rng){seed};
}

uint64_t scene_rng_next(scene_rng* r) {
    /* splitmix64 (Steele, Lea, Flood 2014) */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double scene_rng_uniform(scene_rng* r, double lo, double hi) {
    const double u = (double)(scene_rng_next(r) >> 11) * 0x1.0p-53; /* [0, 1) */
    return lo + (hi - lo) * u;
}

int scene_rng_int(scene_rng* r, int lo, int hi) {
    return lo + (int)(scene_rng_next(r) % (uint64_t)(hi - lo + 1));
}

double scene_rng_normal(scene_rng* r) {
    const double u1 = 1.0 - scene_rng_uniform(r, 0.0, 1.0); /* (0, 1] */
    const double u2 = scene_rng_uniform(r, 0.0, 1.0);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * FB_PI * u2);
}

fb_quat scene_rng_quat(scene_rng* r) {
    /* four normals, normalised: uniform on the 3-sphere */
    fb_quat q = {scene_rng_normal(r), scene_rng_normal(r), scene_rng_normal(r),
                 scene_rng_normal(r)};
    return fb_quat_normalize(q);
}

fb_v3 scene_rng_unit(scene_rng* r) {
    const fb_v3 v = {scene_rng_normal(r), scene_rng_normal(r), scene_rng_normal(r)};
    return fb_v3_scale(v, 1.0 / fb_v3_norm(v));
}

/* ---- building ------------------------------------------------------------------------- */

/* Shape of body k (returns false for none). */
typedef bool (*scene_shape_fn)(int k, fb_shape* shape, void* ctx);

static fb_model* build_with_shapes(int n, scene_body_fn make, scene_shape_fn shape, void* ctx,
                                   fb_error* err) {
    fb_model* m = fb_model_create(n, NULL, err);
    if (!m) {
        return NULL;
    }
    for (int k = 1; k <= n; k++) {
        char name[SCENE_NAME_CAP];
        fb_body_def def = fb_default_body_def();
        def.name = name;
        make(k, &def, name, ctx);
        int id = 0;
        fb_status s = fb_model_add_body(m, &def, &id, err);
        fb_shape sh;
        if (s == FB_OK && shape && shape(k, &sh, ctx)) {
            sh.body = id;
            s = fb_model_add_shape(m, &sh, err);
        }
        if (s != FB_OK) {
            fb_model_destroy(m);
            return NULL;
        }
    }
    if (fb_model_finalize(m, err) != FB_OK) {
        fb_model_destroy(m);
        return NULL;
    }
    return m;
}

fb_model* scene_build(int n, scene_body_fn make, void* ctx, fb_error* err) {
    return build_with_shapes(n, make, NULL, ctx, err);
}

/* ---- Bender's trees -------------------------------------------------------------------- */

/* Box cross-section (m) of Bender's trees. */
#define BENDER_WIDTH 0.04
/* Leaf box length (m); a box at depth k of a tree of depth d is 1.5^(d-k) times as long. */
#define BENDER_LEAF_LENGTH 0.1
#define BENDER_GROWTH 1.5

static double bender_length(int depth, int level) {
    return pow(BENDER_GROWTH, depth - level) * BENDER_LEAF_LENGTH;
}

/* Adds the box at `level` under `parent` (joint at `offset` in the parent frame) and its
 * subtree, depth first so that parent[i] < i. */
static fb_status add_bender_subtree(fb_model* m, int parent, fb_v3 offset, int depth, int level,
                                    int* counter, fb_error* err) {
    const double l = bender_length(depth, level);
    char name[32];
    snprintf(name, sizeof name, "box%d", (*counter)++);
    fb_body_def def = fb_default_body_def();
    def.name = name;
    def.parent = parent;
    def.joint = FB_JOINT_SPHERICAL;
    def.X_tree = fb_xf_xlt(offset);
    /* the box hangs along -Y from its joint at the top end */
    def.inertia = fb_rbi_box(SCENE_BENDER_DENSITY, fb_v3_make(BENDER_WIDTH, l, BENDER_WIDTH),
                             fb_v3_make(0.0, -0.5 * l, 0.0));
    int id;
    fb_status s = fb_model_add_body(m, &def, &id, err);
    if (s != FB_OK || level == depth) {
        return s;
    }
    /* both children attach at the bottom end of this box */
    for (int child = 0; child < 2 && s == FB_OK; child++) {
        s = add_bender_subtree(m, id, fb_v3_make(0.0, -l, 0.0), depth, level + 1, counter, err);
    }
    return s;
}

fb_model* scene_bender_tree(int depth, fb_error* err) {
    const int n = (1 << (depth + 1)) - 1;
    fb_model* m = fb_model_create(n, NULL, err);
    if (!m) {
        return NULL;
    }
    int counter = 0;
    if (add_bender_subtree(m, 0, fb_v3_zero(), depth, 0, &counter, err) != FB_OK ||
        fb_model_finalize(m, err) != FB_OK) {
        fb_model_destroy(m);
        return NULL;
    }
    return m;
}

/* ---- the capsule humanoid -------------------------------------------------------------- */

/* One row of the humanoid table: the joint sits at `offset` in the parent's frame and the
 * capsule's axis runs from the joint along `dir` for `length`. Facing +Z, Y up, so left = +X. */
typedef struct humanoid_part {
    const char* name;
    const char* parent;
    fb_joint_type joint;
    double radius, length;
    fb_v3 offset, dir;
} humanoid_part;

#define X_AXIS {1, 0, 0}
#define NEG_X {-1, 0, 0}
#define UP {0, 1, 0}
#define DOWN {0, -1, 0}
#define FWD {0, 0, 1}

static const humanoid_part HUMANOID[] = {
    /* the pelvis capsule lies across the hips, centred on the body origin */
    {"pelvis", NULL, FB_JOINT_FLOATING, 0.090, 0.140, {-0.07, 0, 0}, X_AXIS},
    {"spine1", "pelvis", FB_JOINT_SPHERICAL, 0.080, 0.120, {0, 0.17, 0}, UP},
    {"spine2", "spine1", FB_JOINT_SPHERICAL, 0.090, 0.120, {0, 0.12, 0}, UP},
    {"spine3", "spine2", FB_JOINT_SPHERICAL, 0.100, 0.180, {0, 0.12, 0}, UP},
    {"neck", "spine3", FB_JOINT_SPHERICAL, 0.045, 0.080, {0, 0.18, 0}, UP},
    {"head", "neck", FB_JOINT_SPHERICAL, 0.090, 0.060, {0, 0.08, 0}, UP},
    {"clavicle_l", "spine3", FB_JOINT_SPHERICAL, 0.040, 0.160, {0.02, 0.16, 0}, X_AXIS},
    {"upperarm_l", "clavicle_l", FB_JOINT_SPHERICAL, 0.045, 0.280, {0.16, 0, 0}, DOWN},
    {"forearm_l", "upperarm_l", FB_JOINT_REVOLUTE, 0.040, 0.240, {0, -0.28, 0}, DOWN},
    {"hand_l", "forearm_l", FB_JOINT_SPHERICAL, 0.035, 0.080, {0, -0.24, 0}, DOWN},
    {"clavicle_r", "spine3", FB_JOINT_SPHERICAL, 0.040, 0.160, {-0.02, 0.16, 0}, NEG_X},
    {"upperarm_r", "clavicle_r", FB_JOINT_SPHERICAL, 0.045, 0.280, {-0.16, 0, 0}, DOWN},
    {"forearm_r", "upperarm_r", FB_JOINT_REVOLUTE, 0.040, 0.240, {0, -0.28, 0}, DOWN},
    {"hand_r", "forearm_r", FB_JOINT_SPHERICAL, 0.035, 0.080, {0, -0.24, 0}, DOWN},
    {"thigh_l", "pelvis", FB_JOINT_SPHERICAL, 0.075, 0.390, {0.09, -0.08, 0}, DOWN},
    {"shin_l", "thigh_l", FB_JOINT_REVOLUTE, 0.050, 0.420, {0, -0.39, 0}, DOWN},
    {"foot_l", "shin_l", FB_JOINT_SPHERICAL, 0.040, 0.160, {0, -0.42, 0}, FWD},
    {"toe_l", "foot_l", FB_JOINT_REVOLUTE, 0.040, 0.030, {0, 0, 0.16}, FWD},
    {"thigh_r", "pelvis", FB_JOINT_SPHERICAL, 0.075, 0.390, {-0.09, -0.08, 0}, DOWN},
    {"shin_r", "thigh_r", FB_JOINT_REVOLUTE, 0.050, 0.420, {0, -0.39, 0}, DOWN},
    {"foot_r", "shin_r", FB_JOINT_SPHERICAL, 0.040, 0.160, {0, -0.42, 0}, FWD},
    {"toe_r", "foot_r", FB_JOINT_REVOLUTE, 0.040, 0.030, {0, 0, 0.16}, FWD},
};

/* Body k of the humanoid table; parents come earlier in the table, so their index is theirs. */
static void humanoid_body(int k, fb_body_def* def, char* name, void* ctx) {
    (void)ctx;
    const int n = (int)(sizeof HUMANOID / sizeof HUMANOID[0]);
    const humanoid_part* p = &HUMANOID[k - 1];
    snprintf(name, SCENE_NAME_CAP, "%s", p->name);
    def->parent = 0;
    for (int j = 0; p->parent && j < n; j++) {
        if (strcmp(HUMANOID[j].name, p->parent) == 0) {
            def->parent = j + 1;
        }
    }
    def->joint = p->joint;
    /* hinges turn about the sagittal-plane normal, X */
    def->axis = fb_v3_make(1.0, 0.0, 0.0);
    /* the pelvis is placed by its floating coordinates (scene_humanoid_standing) */
    def->X_tree = fb_xf_xlt(p->parent ? p->offset : fb_v3_zero());
    const fb_v3 p0 = p->parent ? fb_v3_zero() : p->offset;
    const fb_v3 p1 = fb_v3_axpy(p0, p->length, p->dir);
    def->inertia = fb_rbi_capsule(SCENE_HUMANOID_DENSITY, p->radius, p0, p1);
}

/* How much shorter than its inertia's capsule the shins' collision capsule is (m): with the
 * spec's 5 cm shin radius and 4 cm ankle height the full capsule would reach 1 cm into the
 * ground and the standing humanoid would stand on its shins, not on its feet and toes. */
#define SHIN_COLLISION_TRIM 0.02

/* The capsule of body k: the one its inertia came from (the shins' trimmed at the ankle). */
static bool humanoid_shape(int k, fb_shape* sh, void* ctx) {
    (void)ctx;
    const humanoid_part* p = &HUMANOID[k - 1];
    memset(sh, 0, sizeof *sh);
    sh->type = FB_SHAPE_CAPSULE;
    sh->radius = p->radius;
    sh->p0 = p->parent ? fb_v3_zero() : p->offset;
    const double trim = strncmp(p->name, "shin", 4) == 0 ? SHIN_COLLISION_TRIM : 0.0;
    sh->p1 = fb_v3_axpy(sh->p0, p->length - trim, p->dir);
    sh->R = fb_m3_identity();
    return true;
}

fb_model* scene_humanoid(fb_error* err) {
    return build_with_shapes((int)(sizeof HUMANOID / sizeof HUMANOID[0]), humanoid_body,
                             humanoid_shape, NULL, err);
}

void scene_humanoid_standing(const fb_model* m, double* q) {
    fb_q_neutral(m, q);
    q[m->q_adr[1] + 1] = SCENE_HUMANOID_PELVIS_HEIGHT;
}

void scene_ragdoll_lying(double* q) {
    const fb_quat root = {q[3], q[4], q[5], q[6]};
    const fb_quat lay = fb_quat_mul(fb_quat_from_axis_angle(fb_v3_make(0.2, 0.0, 1.0), 0.2),
                                    fb_quat_from_axis_angle(fb_v3_make(1, 0, 0), -FB_PI / 2));
    const fb_quat r = fb_quat_mul(lay, root);
    q[1] = 0.4;
    q[3] = r.w;
    q[4] = r.x;
    q[5] = r.y;
    q[6] = r.z;
}

/* ---- random trees and states ----------------------------------------------------------- */

/* A random physically valid inertia: a random second moment of mass Sigma (the mass spread
 * over up to ~0.3 m), Ic = tr(Sigma) 1 - Sigma, in random principal axes, random centre. */
static fb_rbi random_inertia(scene_rng* r) {
    const double mass = scene_rng_uniform(r, 0.1, 5.0);
    const fb_m3 R = fb_quat_to_m3(scene_rng_quat(r));
    const double s0 = mass * scene_rng_uniform(r, 1e-3, 0.1);
    const double s1 = mass * scene_rng_uniform(r, 1e-3, 0.1);
    const double s2 = mass * scene_rng_uniform(r, 1e-3, 0.1);
    const fb_m3 Sigma = fb_m3_congr(R, fb_m3_diag(s0, s1, s2));
    const double tr = s0 + s1 + s2;
    const fb_m3 Ic = fb_m3_sub(fb_m3_diag(tr, tr, tr), Sigma);
    const fb_v3 c = fb_v3_scale(scene_rng_unit(r), scene_rng_uniform(r, 0.0, 0.3));
    return fb_rbi_from_mass_com(mass, c, Ic);
}

/* Body k of a random tree: random parent, joint, axis, X_tree and inertia. */
static void random_body(int k, fb_body_def* def, char* name, void* ctx) {
    scene_rng* r = ctx;
    snprintf(name, SCENE_NAME_CAP, "b%d", k);
    def->parent = scene_rng_int(r, 0, k - 1);
    def->joint = (fb_joint_type)scene_rng_int(r, FB_JOINT_FIXED, FB_JOINT_FLOATING);
    def->axis = scene_rng_unit(r);
    def->X_tree = (fb_xf){fb_quat_to_m3(scene_rng_quat(r)),
                          fb_v3_scale(scene_rng_unit(r), scene_rng_uniform(r, 0.0, 0.5))};
    def->inertia = random_inertia(r);
}

fb_model* scene_random_tree(uint64_t seed, int max_bodies, fb_error* err) {
    scene_rng r = scene_rng_make(seed);
    const int n = scene_rng_int(&r, 1, max_bodies);
    return scene_build(n, random_body, &r, err);
}

void scene_random_state(const fb_model* m, fb_data* d, scene_rng* r, double qd_max,
                        double tau_max) {
    for (int i = 1; i < m->nbody; i++) {
        double* q = d->q + m->q_adr[i];
        switch (m->jtype[i]) {
        case FB_JOINT_FIXED:
            break;
        case FB_JOINT_REVOLUTE:
            q[0] = scene_rng_uniform(r, -FB_PI, FB_PI);
            break;
        case FB_JOINT_PRISMATIC:
            q[0] = scene_rng_uniform(r, -0.5, 0.5);
            break;
        case FB_JOINT_SPHERICAL:
            fb_quat_store(q, scene_rng_quat(r));
            break;
        case FB_JOINT_FLOATING:
            for (int k = 0; k < 3; k++) {
                q[k] = scene_rng_uniform(r, -0.5, 0.5);
            }
            fb_quat_store(q + 3, scene_rng_quat(r));
            break;
        }
    }
    for (int k = 0; k < m->nv; k++) {
        d->qd[k] = scene_rng_uniform(r, -qd_max, qd_max);
        d->tau[k] = scene_rng_uniform(r, -tau_max, tau_max);
    }
}

/* A rotation by a uniformly random angle in [0, max_angle] about a random axis. */
static fb_quat random_tilt(scene_rng* r, double max_angle) {
    return fb_quat_from_axis_angle(scene_rng_unit(r), scene_rng_uniform(r, 0.0, max_angle));
}

/* BENCH_MODELS.md: humanoid pelvis tilt and joint rotation bounds (rad), velocity bound. */
#define HUMANOID_BENCH_TILT 0.5
#define HUMANOID_BENCH_ROTATION 0.6
#define HUMANOID_BENCH_QD 1.0
/* BENCH_MODELS.md: Bender tree joint angular velocity bound (rad/s). */
#define BENDER_BENCH_QD 2.0

void scene_bench_state(const fb_model* m, fb_data* d, scene_rng* r, int is_humanoid) {
    if (!is_humanoid) {
        scene_random_state(m, d, r, BENDER_BENCH_QD, 0.0);
        return;
    }
    scene_humanoid_standing(m, d->q);
    for (int i = 1; i < m->nbody; i++) {
        double* q = d->q + m->q_adr[i];
        if (m->jtype[i] == FB_JOINT_FLOATING) {
            fb_quat_store(q + 3, random_tilt(r, HUMANOID_BENCH_TILT));
        } else if (m->jtype[i] == FB_JOINT_SPHERICAL) {
            fb_quat_store(q, random_tilt(r, HUMANOID_BENCH_ROTATION));
        } else if (m->jtype[i] == FB_JOINT_REVOLUTE) {
            q[0] = scene_rng_uniform(r, -HUMANOID_BENCH_ROTATION, HUMANOID_BENCH_ROTATION);
        }
    }
    for (int k = 0; k < m->nv; k++) {
        d->qd[k] = scene_rng_uniform(r, -HUMANOID_BENCH_QD, HUMANOID_BENCH_QD);
        d->tau[k] = 0.0;
    }
}
