/* Cross-check against MuJoCo (Debian libmujoco-dev, 2.2): the same model, exported by
 * fb_model_write_mjcf and loaded with mj_loadXML, must give the same forward dynamics (ABA vs
 * mj_forward), inverse dynamics (RNEA vs mj_inverse) to 1e-8 relative and the same mass matrix
 * (CRBA vs mj_fullM) to 1e-10, on >= 100 random states and forces with contacts disabled.
 *
 * State mapping (docs/INTEROP.md). Hinge, slide and ball joints agree as they are (MuJoCo's ball
 * joint quaternion is w-first and its angular velocity local, like ours). A floating joint is
 * a free joint at the root (three slides and a ball further down); with R the rotation of the
 * body relative to the parent joint frame (for the root, also times X_tree's rotation):
 *   qpos  [R_t p + r_t; q_t q]                ours [p; q]
 *   qvel  [R v; w]                            ours [w; v]  (v: body-frame origin velocity)
 *   force [R f; n]                            ours [n; f]
 *   qacc  [R (dv + w x v); dw]                ours [dw; dv]
 * MuJoCo's mass matrix then relates as M_ours = T^T M_mj T with qvel_mj = T qvel_ours. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "math/dense.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "mjmap.h"
#include "support.h"

/* The bounds. */
#define FWD_INV_TOL 1e-8
#define MASS_TOL 1e-10
#define NSTATE 100
/* MuJoCo keeps each body's inertia as principal moments and axes (mju_eig3, a Jacobi iteration
 * stored through a quaternion), which for a fully populated inertia reproduces the file's to
 * ~1e-6 relative, not to machine precision. The exported inertias are checked against
 * MuJoCo's to EXPORT_INERTIA_TOL (catching a wrong export); the dynamics are then compared on
 * identical physics: our model rebuilt with the inertias MuJoCo actually uses. */
#define EXPORT_INERTIA_TOL 1e-5

static double rel(const double* a, const double* b, int n) {
    return ck_rel_diff(a, b, n, 1e-12);
}

/* MuJoCo's inertia of body b as ours: mass, centre and R diag(I) R^T about it. */
static fb_rbi mujoco_inertia(const mjModel* mj, int id) {
    const fb_quat q = {mj->body_iquat[4 * id], mj->body_iquat[4 * id + 1],
                       mj->body_iquat[4 * id + 2], mj->body_iquat[4 * id + 3]};
    const fb_m3 R = fb_quat_to_m3(fb_quat_normalize(q));
    const double* I = mj->body_inertia + 3 * id;
    const fb_v3 c = {mj->body_ipos[3 * id], mj->body_ipos[3 * id + 1], mj->body_ipos[3 * id + 2]};
    return fb_rbi_from_mass_com(mj->body_mass[id], c, fb_m3_congr(R, fb_m3_diag(I[0], I[1], I[2])));
}

/* m rebuilt body by body with MuJoCo's inertias; checks them against m's on the way. */
static fb_model* with_mujoco_inertia(const fb_model* m, const mjModel* mj, const char* label) {
    fb_error err;
    fb_model* out = ck_model(fb_model_create(m->nbody - 1, NULL, &err), &err);
    double worst = 0.0;
    for (int b = 1; b < m->nbody; b++) {
        const int id = mj_name2id(mj, mjOBJ_BODY, m->name[b]);
        ck_assert_msg(id > 0, "MuJoCo has no body '%s'", m->name[b]);
        fb_body_def def = fb_default_body_def();
        def.name = m->name[b];
        def.parent = m->parent[b];
        def.joint = m->jtype[b];
        def.axis = m->axis[b];
        def.X_tree = m->X_tree[b];
        def.inertia = mujoco_inertia(mj, id);
        const double* a = &def.inertia.Ibar.m[0][0];
        const double* e = &m->I[b].Ibar.m[0][0];
        worst = fmax(worst, fabs(def.inertia.m - m->I[b].m) / fmax(m->I[b].m, 1e-12));
        worst = fmax(worst, ck_rel_diff(a, e, 9, 1e-12));
        ck_assert_int_eq(fb_model_add_body(out, &def, NULL, &err), FB_OK);
    }
    ck_assert_int_eq(fb_model_finalize(out, &err), FB_OK);
    ck_assert_msg(worst < EXPORT_INERTIA_TOL, "%s: MuJoCo's inertias differ from ours by %g",
                  label, worst);
    return out;
}

/* Every limited hinge of m is a limited MuJoCo hinge with the same range. */
static void check_ranges(const fb_model* m, const mjModel* mj, const char* label) {
    int n = 0;
    for (int b = 1; b < m->nbody; b++) {
        if (m->jtype[b] != FB_JOINT_REVOLUTE || !m->limit[b].on) {
            continue;
        }
        const int j = mj_name2id(mj, mjOBJ_JOINT, m->name[b]);
        ck_assert_msg(j >= 0, "%s: MuJoCo has no joint '%s'", label, m->name[b]);
        ck_assert_msg(mj->jnt_limited[j], "%s: MuJoCo's '%s' is not limited", label, m->name[b]);
        fb_ck_near(mj->jnt_range[2 * j], m->limit[b].lo, 0.0, 1e-15);
        fb_ck_near(mj->jnt_range[2 * j + 1], m->limit[b].hi, 0.0, 1e-15);
        n++;
    }
    if (n > 0) {
        printf("%s: %d limited hinges read back by MuJoCo with their ranges\n", label, n);
    }
}

/* Exports m, loads it in MuJoCo with contacts off, and compares NSTATE random states on
 * identical inertias. */
static void cross_check(const char* label, const fb_model* m0, uint64_t seed) {
    char dir[64], path[256], mjerr[1000] = "";
    ck_tmpdir(dir, sizeof dir, "mj");
    snprintf(path, sizeof path, "%s/model.xml", dir);
    fb_error err;
    ck_assert_msg(fb_model_write_mjcf(m0, label, path, &err) == FB_OK, "%s", err.msg);
    mjModel* mj = mj_loadXML(path, NULL, mjerr, sizeof mjerr);
    ck_assert_msg(mj, "%s: MuJoCo: %s", label, mjerr);
    unlink(path);
    rmdir(dir);
    /* the dynamics are compared without constraints: our ABA has neither contacts nor joint
     * limits (those are the world's rows); the hinge ranges must still arrive as written */
    mj->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT;
    check_ranges(m0, mj, label);
    fb_model* m = with_mujoco_inertia(m0, mj, label);
    ck_assert_int_eq(mj->nq, m->nq);
    ck_assert_int_eq(mj->nv, m->nv);
    mjData* md = mj_makeData(mj);
    fb_data* d = ck_data(m);
    fb_mjmap mp;
    char msg[256];
    ck_assert_msg(mjmap_make(&mp, m, mj, msg, sizeof msg), "%s: %s", label, msg);
    const int nv = m->nv;
    const size_t vb = (size_t)nv * sizeof(double) + 1;
    double* tau = malloc(vb);
    double* x = malloc(vb);
    double* y = malloc(vb);
    double* qdd_mj = malloc(vb);
    double* M = malloc((size_t)nv * (size_t)nv * sizeof(double) + 1);
    double* Tc = malloc(vb); /* one column of T */
    double* MT = malloc((size_t)nv * (size_t)nv * sizeof(double) + 1);
    int* Tn = malloc((size_t)nv * sizeof(int) + 1);
    int* Ti = malloc(3 * (size_t)nv * sizeof(int) + 1);
    double* Tv = malloc(3 * (size_t)nv * sizeof(double) + 1);
    double* unit = calloc((size_t)nv + 1, sizeof(double));
    scene_rng r = scene_rng_make(seed);
    double worst_fwd = 0.0, worst_inv = 0.0, worst_M = 0.0, worst_cond = 0.0;
    for (int s = 0; s < NSTATE; s++) {
        scene_random_state(m, d, &r, 2.0, 10.0);
        mjmap_qpos(&mp, d->q, md->qpos);
        mjmap_dofs(&mp, d->q, d->qd, d->qd, MJMAP_VEL, md->qvel);
        mjmap_dofs(&mp, d->q, d->qd, d->tau, MJMAP_FORCE, md->qfrc_applied);
        mju_zero(md->ctrl, mj->nu);
        /* forward: ABA vs mj_forward */
        ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
        mj_forward(mj, md);
        mjmap_qacc_back(&mp, d->q, d->qd, md->qacc, qdd_mj);
        worst_fwd = fmax(worst_fwd, rel(d->qdd, qdd_mj, nv));
        /* inverse: RNEA of random accelerations vs mj_inverse */
        for (int k = 0; k < nv; k++) {
            x[k] = scene_rng_uniform(&r, -5.0, 5.0);
        }
        mjmap_dofs(&mp, d->q, d->qd, x, MJMAP_ACC, md->qacc);
        mj_inverse(mj, md);
        fb_rnea(m, d, x, tau);
        mjmap_dofs(&mp, d->q, d->qd, tau, MJMAP_FORCE, y);
        worst_inv = fmax(worst_inv, rel(y, md->qfrc_inverse, nv));
        /* mass matrix: M_ours = T^T M_mj T; T has at most three nonzeros per column */
        fb_crba(m, d);
        mj_fullM(mj, M, md->qM);
        for (int c = 0; c < nv; c++) {
            unit[c] = 1.0;
            mjmap_dofs(&mp, d->q, d->qd, unit, MJMAP_VEL, Tc);
            unit[c] = 0.0;
            Tn[c] = 0;
            for (int k = 0; k < nv && Tn[c] < 3; k++) {
                if (Tc[k] != 0.0) {
                    Ti[3 * c + Tn[c]] = k;
                    Tv[3 * c + Tn[c]++] = Tc[k];
                }
            }
        }
        for (int rr = 0; rr < nv; rr++) {
            for (int c = 0; c < nv; c++) {
                double sum = 0.0;
                for (int a = 0; a < Tn[rr]; a++) {
                    for (int b2 = 0; b2 < Tn[c]; b2++) {
                        sum += Tv[3 * rr + a] * M[Ti[3 * rr + a] * nv + Ti[3 * c + b2]] *
                               Tv[3 * c + b2];
                    }
                }
                y[c] = sum; /* row rr of T^T M_mj T */
            }
            worst_M = fmax(worst_M, ck_rel_diff(d->M + rr * nv, y, nv, 1e-12));
        }
        /* conditioning of this state's M (largest over smallest pivot of its Cholesky factor,
         * squared): how much round-off either algorithm may show */
        memcpy(MT, d->M, (size_t)nv * (size_t)nv * sizeof(double));
        if (fb_chol_factor(MT, nv)) {
            double lo = INFINITY, hi = 0.0;
            for (int k = 0; k < nv; k++) {
                lo = fmin(lo, MT[k * nv + k]);
                hi = fmax(hi, MT[k * nv + k]);
            }
            worst_cond = fmax(worst_cond, (hi / lo) * (hi / lo));
        }
    }
    printf("%s vs MuJoCo %s over %d states: forward %.2e, inverse %.2e, mass matrix %.2e "
           "(cond(M) up to ~%.0e)\n",
           label, mj_versionString(), NSTATE, worst_fwd, worst_inv, worst_M, worst_cond);
    fflush(stdout);
    ck_assert_msg(worst_fwd < FWD_INV_TOL, "%s: forward dynamics differ by %g", label, worst_fwd);
    ck_assert_msg(worst_inv < FWD_INV_TOL, "%s: inverse dynamics differ by %g", label, worst_inv);
    ck_assert_msg(worst_M < MASS_TOL, "%s: mass matrix differs by %g", label, worst_M);
    free(tau);
    free(x);
    free(y);
    free(qdd_mj);
    free(M);
    free(Tc);
    free(MT);
    free(Tn);
    free(Ti);
    free(Tv);
    free(unit);
    mjmap_free(&mp);
    fb_data_destroy(d);
    fb_model_destroy(m);
    mj_deleteData(md);
    mj_deleteModel(mj);
}

START_TEST(humanoid_matches_mujoco) {
    fb_error err;
    fb_model* m = ck_model(scene_humanoid(&err), &err);
    cross_check("humanoid", m, 1);
    fb_model_destroy(m);
}
END_TEST

START_TEST(tree255_matches_mujoco) {
    fb_error err;
    fb_model* m = ck_model(scene_bender_tree(7, &err), &err);
    cross_check("tree255", m, 2);
    fb_model_destroy(m);
}
END_TEST

START_TEST(character_matches_mujoco) {
    /* the bundled walk's character with the default rules: free root, balls, hinges on
     * estimated axes, welded fingers and End Sites, boxes */
    char path[1024];
    fb_error err;
    fb_rules rules;
    snprintf(path, sizeof path, "%s/character_rules.json", FB_DATA_DIR);
    ck_assert_msg(fb_rules_load(path, &rules, &err) == FB_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/131_01.bvh", FB_DATA_DIR);
    fb_clip* c = fb_clip_load(path, NULL, NULL, &err);
    ck_assert_msg(c, "%s", err.msg);
    fb_build_opts o = fb_default_build_opts();
    o.rules = &rules;
    fb_character* ch = fb_character_build(c, &o, &err);
    ck_assert_msg(ch, "%s", err.msg);
    cross_check("character 131_01", ch->model, 3);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

START_TEST(random_trees_match_mujoco) {
    /* every joint type, floating joints at the root and further down (three slides and a
     * ball in MuJoCo), rotated X_tree, off-diagonal inertias, welded bodies */
    ck_random_trees(cross_check);
}
END_TEST

static Suite* mujoco_suite(void) {
    Suite* s = suite_create("mujoco");
    TCase* tc = tcase_create("mujoco");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, humanoid_matches_mujoco);
    tcase_add_test(tc, tree255_matches_mujoco);
    tcase_add_test(tc, character_matches_mujoco);
    tcase_add_test(tc, random_trees_match_mujoco);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(mujoco_suite());
}
