/* The balance planner of a free root (src/control/balance.c, src/math/nnls.c), checked with
 * code that shares nothing with it but the model, and the standing character under pushes.
 *
 *   - the support polygon (fb_balance_hull) is the convex hull of its points seen along gravity:
 *     its vertices among them, turning left at each, every point inside (a square, a line,
 *     500 random sets);
 *   - nnls: the contact-force fit meets the Karush-Kuhn-Tucker conditions written here
 *     (x >= 0, the gradient >= 0 where x = 0 and = 0 where x > 0), which for a strictly
 *     convex problem say it is the minimum;
 *   - the plan on random standing states of the bench humanoid (bench/scenes.c) and of the
 *     CMU character at frames of 131_01 where both feet stand, with random velocities, wanted
 *     accelerations and centre of mass targets, and the ground contacts the collision code
 *     finds: (a) the planned accelerations (every dof, the root's included) and the planned
 *     contact forces satisfy the equations of motion with no actuation at the root, the first
 *     six rows of M q'' + C - sum_p J_p^T f_p zero (M by CRBA, C by RNEA with q'' = 0, J_p by
 *     central differences of forward kinematics, not the library's Jacobian), and the stance
 *     dofs' torques are the other rows of that sum; (b) every planned force is unilateral and
 *     inside its friction cone, and only on bodies that bear weight; a target far outside the
 *     feet and states without contacts give finite plans that still satisfy (a) and (b);
 *   - (c) the torques the tracker sets (fb_data.tau: the plan's, clamped) within the joints'
 *     limits at every step of a pushed stand;
 *   - pushes (bench/push.c): f_ext's convention (world coordinates about the world origin) on a
 *     free body; the CMU character standing at a grounded frame of 131_01 with a free root
 *     recovers from a moderate 0.1 s pelvis push (back within 2 cm of its pose 2 s after) and
 *     falls from a large one, comes to rest and never blows up. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/balance.h"
#include "math/nnls.h"
#include "math/quat.h"
#include "math/vec3.h"
#include "push.h"
#include "support.h"

/* ---- the contact-force fit ------------------------------------------------------------- */

/* The KKT conditions to this fraction of the gradient's size at x = 0: fb_nnls6 solves each
 * subproblem through eps S^-1 + G_P G_P^T, whose condition grows as 1 / eps (1e-8) where the
 * passive columns span less than six dimensions. */
#define NNLS_TOL 1e-7

START_TEST(nnls_meets_its_optimality_conditions) {
    scene_rng rng = scene_rng_make(18);
    double G[6 * 96], x[96];
    bool passive[96];
    for (int trial = 0; trial < 300; trial++) {
        const int n = scene_rng_int(&rng, 1, 96);
        for (int k = 0; k < 6 * n; k++) {
            G[k] = scene_rng_uniform(&rng, -1.0, 1.0) * (k % 6 < 3 ? 1.5 : 1.0);
        }
        double s[6], w[6];
        for (int r = 0; r < 6; r++) {
            s[r] = scene_rng_uniform(&rng, 0.1, 2.0);
            w[r] = scene_rng_uniform(&rng, -800.0, 800.0);
        }
        const double eps = 1e-8;
        double gmax = 0.0;
        for (int k = 0; k < 6 * n; k++) {
            gmax = fmax(gmax, fabs(G[k]));
        }
        const int passes = fb_nnls6(G, n, s, w, eps, x, passive);
        ck_assert_msg(passes >= 0, "trial %d: fb_nnls6 failed (%d)", trial, passes);
        /* the gradient of 1/2 |S^1/2 (G x - w)|^2 + eps/2 |x|^2, written out here */
        double res[6];
        for (int r = 0; r < 6; r++) {
            res[r] = -w[r];
            for (int j = 0; j < n; j++) {
                res[r] += G[6 * j + r] * x[j];
            }
        }
        /* the problem's scale: the gradient's size at x = 0 */
        double scale = 0.0;
        for (int r = 0; r < 6; r++) {
            scale = fmax(scale, gmax * s[r] * fabs(w[r]));
        }
        for (int j = 0; j < n; j++) {
            double g = eps * x[j];
            for (int r = 0; r < 6; r++) {
                g += G[6 * j + r] * s[r] * res[r];
            }
            ck_assert_msg(x[j] >= 0.0 && isfinite(x[j]), "trial %d: x[%d] = %g", trial, j, x[j]);
            if (x[j] > 0.0) {
                ck_assert_msg(fabs(g) <= NNLS_TOL * scale, "trial %d: x[%d] = %g > 0 but gradient %g",
                              trial, j, x[j], g);
            } else {
                ck_assert_msg(g >= -NNLS_TOL * scale, "trial %d: x[%d] = 0 but gradient %g < 0",
                              trial, j, g);
            }
        }
    }
}
END_TEST

/* ---- the support polygon (fb_balance_hull) --------------------------------------------- */

/* Twice the signed area of (a, b, c) on the ground seen from above (+Y, so x right and -z
 * up): positive when counter-clockwise. */
static double area2_from_above(fb_v3 a, fb_v3 b, fb_v3 c) {
    const double ax = b.x - a.x, ay = -(b.z - a.z), bx = c.x - a.x, by = -(c.z - a.z);
    return ax * by - ay * bx;
}

/* The hull of p is h: its vertices are points of p, it turns left at every vertex seen from
 * above, and every point of p lies inside it or on its boundary there. */
static void ck_is_hull(const fb_v3* p, int n, const fb_v3* h, int nh) {
    ck_assert_int_ge(nh, 3);
    for (int i = 0; i < nh; i++) {
        bool found = false;
        for (int k = 0; k < n; k++) {
            found = found || (p[k].x == h[i].x && p[k].y == h[i].y && p[k].z == h[i].z);
        }
        ck_assert_msg(found, "hull vertex %d is not one of the points", i);
        ck_assert_double_gt(area2_from_above(h[i], h[(i + 1) % nh], h[(i + 2) % nh]), 0.0);
        for (int k = 0; k < n; k++) {
            ck_assert_msg(area2_from_above(h[i], h[(i + 1) % nh], p[k]) >= -1e-12,
                          "point %d outside edge %d", k, i);
        }
    }
}

/* The polygon the planner measures its margin to (and the viewer draws), from any points: the
 * convex hull seen along gravity (-Y here). */
START_TEST(support_polygon_is_the_convex_hull) {
    const fb_v3 G = {0.0, -9.81, 0.0};
    /* a square with a point inside and one on an edge: the four corners, counter-clockwise */
    const fb_v3 sq[6] = {{0.5, 0.3, 0.5}, {0, 0.1, 0}, {1, 0, 0},
                         {0.5, 0, 0},     {1, 0, 1},   {0, 0, 1}};
    fb_v3 h[FB_BALANCE_MAX_POINTS];
    const int nh = fb_balance_hull(sq, 6, G, h);
    ck_assert_int_eq(nh, 4);
    ck_is_hull(sq, 6, h, nh);
    double area = 0.0;
    for (int i = 1; i + 1 < nh; i++) {
        area += 0.5 * area2_from_above(h[0], h[i], h[i + 1]);
    }
    fb_ck_near(area, 1.0, 1e-15, 0.0);
    /* too few, or in a line: no polygon */
    ck_assert_int_eq(fb_balance_hull(sq, 2, G, h), 0);
    const fb_v3 line[4] = {{0, 0, 0}, {1, 0, 1}, {2, 0.5, 2}, {0.5, 0, 0.5}};
    ck_assert_int_eq(fb_balance_hull(line, 4, G, h), 0);
    /* random sets (a fixed LCG), some with x on a coarse grid (ties) or repeated points */
    uint64_t r = 12345;
    int made = 0;
    for (int trial = 0; trial < 500; trial++) {
        fb_v3 p[FB_BALANCE_MAX_POINTS];
        const int n = 3 + trial % (FB_BALANCE_MAX_POINTS - 2);
        for (int k = 0; k < n; k++) {
            double c[3];
            for (int j = 0; j < 3; j++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                c[j] = (double)(r >> 40) / (double)(1ull << 24) - 0.5;
            }
            p[k] = (fb_v3){trial % 3 == 0 ? floor(8.0 * c[0]) / 8.0 : c[0], c[1], c[2]};
            if (k > 0 && trial % 5 == 0) {
                p[k] = p[k - 1]; /* a repeat */
            }
        }
        const int m = fb_balance_hull(p, n, G, h);
        if (m > 0) {
            ck_is_hull(p, n, h, m);
            made++;
        }
    }
    printf("support polygons: %d of 500 random point sets gave a hull, each checked\n", made);
    ck_assert_int_gt(made, 350);
}
END_TEST

/* ---- the plan, checked independently ---------------------------------------------------- */

/* The test's own point Jacobians: the world positions and rotations of every body at
 * q (+) h e_k and q (+) -h e_k for every dof k (fb_integrate, forward kinematics). */
typedef struct fd_jac {
    int nv, nbody;
    fb_v3* o;  /* (2 nv x nbody) body origins */
    fb_m3* R;  /* (2 nv x nbody) body -> world rotations */
    double h;
} fd_jac;

static void fd_jac_make(const fb_model* m, const double* q, fd_jac* J) {
    J->nv = m->nv;
    J->nbody = m->nbody;
    J->h = 1e-6;
    J->o = malloc(2 * (size_t)m->nv * (size_t)m->nbody * sizeof(fb_v3));
    J->R = malloc(2 * (size_t)m->nv * (size_t)m->nbody * sizeof(fb_m3));
    double* v = calloc((size_t)m->nv, sizeof(double));
    fb_data* d = ck_data(m);
    ck_assert(J->o && J->R && v);
    for (int k = 0; k < m->nv; k++) {
        v[k] = 1.0;
        for (int side = 0; side < 2; side++) {
            fb_integrate(m, q, v, side == 0 ? J->h : -J->h, d->q);
            fb_kinematics_pos(m, d);
            for (int b = 1; b < m->nbody; b++) {
                const size_t i = (2 * (size_t)k + (size_t)side) * (size_t)m->nbody + (size_t)b;
                J->o[i] = fb_point_pos(m, d, b, fb_v3_zero());
                J->R[i] = fb_body_rot(m, d, b);
            }
        }
        v[k] = 0.0;
    }
    fb_data_destroy(d);
    free(v);
}

static void fd_jac_free(fd_jac* J) {
    free(J->o);
    free(J->R);
}

/* Column k of the Jacobian of the point `local` (body coordinates) on body b. */
static fb_v3 fd_jac_col(const fd_jac* J, int b, fb_v3 local, int k) {
    const size_t ip = (2 * (size_t)k) * (size_t)J->nbody + (size_t)b;
    const size_t im = ip + (size_t)J->nbody;
    const fb_v3 pp = fb_v3_add(J->o[ip], fb_m3_mv(J->R[ip], local));
    const fb_v3 pm = fb_v3_add(J->o[im], fb_m3_mv(J->R[im], local));
    return fb_v3_scale(fb_v3_sub(pp, pm), 0.5 / J->h);
}

/* One state to plan for: the model, its data (q, qd set), contacts, what is wanted. */
typedef struct plan_case {
    const fb_model* m;
    fb_data* d;
    fb_contact con[256];
    int ncon;
    double mu;
    double* want;
    fb_balance_com com;
    const bool* bearing; /* (nbody) or NULL: every body */
    const char* label;
} plan_case;

static void plan_case_free(plan_case* c) {
    free(c->want);
    fb_data_destroy(c->d);
}

/* A planner of model m (bearing: nbody, NULL = every body bears weight) and a case for it. */
static fb_balance* planner_for(const fb_model* m, const bool* bearing, plan_case* c,
                               const char* label) {
    fb_balance* bal = fb_balance_create(m, NULL);
    ck_assert_ptr_nonnull(bal);
    for (int b = 0; bearing && b < m->nbody; b++) {
        fb_balance_bear(bal, b, bearing[b]);
    }
    *c = (plan_case){.m = m, .d = ck_data(m), .bearing = bearing, .label = label};
    c->want = malloc((size_t)m->nv * sizeof(double));
    ck_assert_ptr_nonnull(c->want);
    return bal;
}

/* What a check of one plan found. */
typedef struct plan_check {
    double root_res;   /* N, N m: the largest of the root rows of M q'' + C - sum J^T f */
    double stance_res; /* N m: the largest |that sum - tau| over the stance dofs */
    double cone_excess; /* N: the largest |f_t| - mu f_n, or -f_n */
    int npoint;
    fb_balance_plan plan;
} plan_check;

/* The support polygon, brute force: the signed distance (positive inside) of q from the
 * boundary of the convex hull of pts[0..n) in the ground plane (x, z: the ground's normal is
 * y), from the hull's edges found as the pairs with every point on their left; NAN with fewer
 * than three points or all of them on one line: no triangle of them larger than 1e-13 m^2
 * (twice its area; the planner's own test is 1e-12, and between the two either answer is
 * right: *ambiguous). */
static double hull_distance(const fb_v3* pts, int n, fb_v3 q, bool* ambiguous) {
    double area = 0.0; /* twice the largest triangle */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < n; k++) {
                area = fmax(area, (pts[j].x - pts[i].x) * (pts[k].z - pts[i].z) -
                                      (pts[j].z - pts[i].z) * (pts[k].x - pts[i].x));
            }
        }
    }
    *ambiguous = n >= 3 && area > 1e-13 && area < 1e-11;
    if (n < 3 || area <= 1e-13) {
        return NAN;
    }
    double dist = INFINITY;
    bool inside = true;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            const double ex = pts[j].x - pts[i].x, ez = pts[j].z - pts[i].z;
            const double l2 = ex * ex + ez * ez;
            bool edge = l2 > 1e-18; /* points a nanometre apart are one */
            for (int k = 0; k < n && edge; k++) {
                edge = ex * (pts[k].z - pts[i].z) - ez * (pts[k].x - pts[i].x) >= -1e-12;
            }
            if (!edge) {
                continue;
            }
            inside = inside && ex * (q.z - pts[i].z) - ez * (q.x - pts[i].x) >= 0.0;
            const double t =
                fmin(1.0, fmax(0.0, ((q.x - pts[i].x) * ex + (q.z - pts[i].z) * ez) / l2));
            dist = fmin(dist, hypot(pts[i].x + t * ex - q.x, pts[i].z + t * ez - q.z));
        }
    }
    return inside ? dist : -dist;
}

/* Runs the planner on c and checks (a) and (b) and the centre of mass's margin; returns the
 * residuals for expect_consistent. */
static plan_check plan_and_check(fb_balance* bal, const plan_case* c) {
    const fb_model* m = c->m;
    const int nv = m->nv;
    plan_check out;
    memset(&out, 0, sizeof out);
    double* target = malloc((size_t)nv * sizeof(double));
    double* tau = malloc((size_t)nv * sizeof(double));
    double* C = malloc((size_t)nv * sizeof(double));
    double* res = malloc((size_t)nv * sizeof(double));
    ck_assert(target && tau && C && res);
    fb_balance_run(bal, m, c->d, c->con, c->ncon, 0, c->mu, c->want, &c->com, target, tau,
                   &out.plan);
    const fb_balance_plan* p = &out.plan;
    for (int k = 0; k < nv; k++) {
        ck_assert_msg(isfinite(target[k]), "%s: target[%d] = %g", c->label, k, target[k]);
        ck_assert_msg(isfinite(tau[k]) || isnan(tau[k]), "%s: tau[%d] = %g", c->label, k, tau[k]);
    }
    for (int k = 0; k < 6; k++) {
        ck_assert_msg(isfinite(p->root_acc[k]) && isfinite(p->root_want[k]),
                      "%s: root acceleration %d not finite", c->label, k);
        ck_assert_msg(isnan(tau[k]), "%s: a torque planned for root dof %d", c->label, k);
    }
    ck_assert_msg(isfinite(p->wrench_err), "%s: wrench error %g", c->label, p->wrench_err);
    out.npoint = p->info.npoint;

    /* M and C of the state: CRBA, RNEA with q'' = 0, no external force */
    fb_data* d = ck_data(m);
    memcpy(d->q, c->d->q, (size_t)m->nq * sizeof(double));
    memcpy(d->qd, c->d->qd, (size_t)nv * sizeof(double));
    fb_crba(m, d);
    fb_rnea(m, d, NULL, C);
    for (int r = 0; r < nv; r++) {
        double v = C[r];
        for (int k = 0; k < nv; k++) {
            v += d->M[(size_t)r * (size_t)nv + (size_t)k] * target[k];
        }
        res[r] = v;
    }
    /* minus the planned contact forces through the test's own Jacobians */
    fd_jac J;
    fd_jac_make(m, c->d->q, &J);
    fb_kinematics_pos(m, d);
    for (int i = 0; i < p->info.npoint; i++) {
        const int b = p->body[i];
        ck_assert_msg(b >= 1 && b < m->nbody, "%s: support point %d on body %d", c->label, i, b);
        ck_assert_msg(!c->bearing || c->bearing[b] || fb_v3_norm(p->f[i]) == 0.0,
                      "%s: a force planned on %s, which bears no weight", c->label, m->name[b]);
        /* the point in the body's coordinates, from its world position */
        const fb_m3 R = fb_body_rot(m, d, b);
        const fb_v3 local =
            fb_m3_tr_mv(R, fb_v3_sub(p->info.point[i], fb_point_pos(m, d, b, fb_v3_zero())));
        for (int k = 0; k < nv; k++) {
            res[k] -= fb_v3_dot(fd_jac_col(&J, b, local, k), p->f[i]);
        }
        /* (b) unilateral, inside the cone: the ground's normal is the contact's */
        const fb_v3 n = fb_ground_plane().n;
        const double fn = fb_v3_dot(p->f[i], n);
        const double ft = fb_v3_norm(fb_v3_sub(p->f[i], fb_v3_scale(n, fn)));
        out.cone_excess = fmax(out.cone_excess, fmax(-fn, ft - c->mu * fn));
        ck_assert_msg(fabs(p->info.force[i] - fn) <= 1e-9 * (1.0 + fabs(fn)),
                      "%s: point %d's reported normal force %g, its force's %g", c->label, i,
                      p->info.force[i], fn);
    }
    fd_jac_free(&J);
    /* the centre of mass and its margin to the support polygon the plan reports */
    const fb_v3 com = fb_com(m, d);
    ck_assert_msg(fb_v3_norm(fb_v3_sub(com, p->info.com)) <= 1e-12,
                  "%s: the plan's centre of mass is %g m off", c->label,
                  fb_v3_norm(fb_v3_sub(com, p->info.com)));
    /* the polygon it reports is the hull of its support points */
    if (p->info.nsupport > 0) {
        ck_is_hull(p->info.point, p->info.npoint, p->info.support, p->info.nsupport);
    }
    bool ambiguous = false;
    const double margin = hull_distance(p->info.point, p->info.npoint, com, &ambiguous);
    ck_assert_msg((ambiguous && isnan(p->info.margin)) ||
                      (isnan(margin) == isnan(p->info.margin) &&
                       (isnan(margin) || fabs(margin - p->info.margin) <= 1e-9)),
                  "%s: the margin of the centre of mass is %g m, the plan says %g m (%d points)",
                  c->label, margin, p->info.margin, p->info.npoint);
    for (int k = 0; k < 6; k++) {
        out.root_res = fmax(out.root_res, fabs(res[k]));
    }
    for (int k = 6; k < nv; k++) {
        if (!isnan(tau[k])) {
            out.stance_res = fmax(out.stance_res, fabs(res[k] - tau[k]));
        }
    }
    fb_data_destroy(d);
    free(target);
    free(tau);
    free(C);
    free(res);
    return out;
}

/* The whole body's weight (N): the scale of the residuals. */
static double weight(const fb_model* m) {
    return fb_model_mass(m) * fb_v3_norm(m->opt.gravity);
}

/* Puts the lowest shape point of the articulation `depth` m into the ground by moving the
 * floating root along the ground's normal. */
static void ground_at(const fb_model* m, fb_data* d, double depth) {
    fb_contact con[256];
    int n = 0;
    fb_error err;
    fb_kinematics_pos(m, d);
    ck_assert_msg(fb_collide_plane(m, d, 0, fb_ground_plane(), 10.0, con, &n, 256, &err) == FB_OK,
                  "%s", err.msg);
    ck_assert_int_gt(n, 0);
    double deepest = -INFINITY;
    for (int k = 0; k < n; k++) {
        deepest = fmax(deepest, con[k].depth);
    }
    const fb_v3 up = fb_ground_plane().n;
    const double dy = depth - deepest;
    d->q[m->q_adr[1]] -= dy * up.x;
    d->q[m->q_adr[1] + 1] -= dy * up.y;
    d->q[m->q_adr[1] + 2] -= dy * up.z;
    fb_kinematics_pos(m, d);
}

/* Random velocities (|qd| < vmax), wanted accelerations (|.| < amax) and a centre of mass
 * target within `reach` of the current one (horizontally), for the case's state. */
static void randomise_motion(plan_case* c, scene_rng* rng, double vmax, double amax,
                             double reach) {
    const fb_model* m = c->m;
    for (int k = 0; k < m->nv; k++) {
        c->d->qd[k] = scene_rng_uniform(rng, -vmax, vmax);
        c->want[k] = scene_rng_uniform(rng, -amax, amax);
    }
    fb_kinematics_pos(m, c->d);
    const fb_v3 com = fb_com(m, c->d);
    c->com = (fb_balance_com){.c = fb_v3_add(com, fb_v3_make(scene_rng_uniform(rng, -reach, reach),
                                                             0.0,
                                                             scene_rng_uniform(rng, -reach, reach))),
                              .v = fb_v3_make(scene_rng_uniform(rng, -0.1, 0.1), 0.0,
                                              scene_rng_uniform(rng, -0.1, 0.1)),
                              .a = fb_v3_make(scene_rng_uniform(rng, -0.5, 0.5),
                                              scene_rng_uniform(rng, -0.2, 0.2),
                                              scene_rng_uniform(rng, -0.5, 0.5)),
                              .h = 1.0 / 240.0};
    fb_gains_from_settle(0.5, 1.0, &c->com.kp, &c->com.kd);
    c->mu = scene_rng_uniform(rng, 0.5, 1.0);
}

/* The world's ground contacts of the case's state. */
static void find_contacts(plan_case* c) {
    fb_error err;
    c->ncon = 0;
    fb_kinematics_pos(c->m, c->d);
    ck_assert_msg(fb_collide_plane(c->m, c->d, 0, fb_ground_plane(),
                                   fb_default_world_opts().contact_margin, c->con, &c->ncon, 256,
                                   &err) == FB_OK,
                  "%s", err.msg);
}

/* Tolerances of (a) and (b), relative to the weight: the planner's factorisations and the
 * central differences (h = 1e-6) are good to ~1e-8 of it. */
#define EOM_TOL 1e-6
#define CONE_TOL 1e-6

static void expect_consistent(const plan_check* k, double wgt, const char* label, int i) {
    ck_assert_msg(k->root_res <= EOM_TOL * wgt,
                  "%s %d: the root rows of M q'' + C - sum J^T f are %g (weight %g N)", label, i,
                  k->root_res, wgt);
    ck_assert_msg(k->stance_res <= EOM_TOL * wgt,
                  "%s %d: a stance dof's torque is %g off M q'' + C - sum J^T f", label, i,
                  k->stance_res);
    ck_assert_msg(k->cone_excess <= CONE_TOL * wgt,
                  "%s %d: a planned force is %g N outside its friction cone or pulls", label, i,
                  k->cone_excess);
}

/* A random standing configuration of the capsule humanoid: every joint turned up to 0.12 rad
 * (ball joints about a random axis), the pelvis tilted up to 0.05 rad, lowered until its lowest
 * capsule is 3 mm in the ground (the shapes within 4 mm of the ground touch it). */
static void humanoid_standing_random(const fb_model* m, fb_data* d, scene_rng* rng) {
    scene_humanoid_standing(m, d->q);
    for (int b = 1; b < m->nbody; b++) {
        const int qa = m->q_adr[b];
        const double amax = b == 1 ? 0.05 : 0.12;
        if (m->jtype[b] == FB_JOINT_SPHERICAL || m->jtype[b] == FB_JOINT_FLOATING) {
            const int qr = qa + (m->jtype[b] == FB_JOINT_FLOATING ? 3 : 0);
            const fb_quat turn = fb_quat_exp(
                fb_v3_scale(scene_rng_unit(rng), 0.5 * scene_rng_uniform(rng, 0.0, amax)));
            fb_quat_store(d->q + qr, fb_quat_mul(fb_quat_load(d->q + qr), turn));
        } else if (m->jtype[b] == FB_JOINT_REVOLUTE) {
            d->q[qa] += scene_rng_uniform(rng, -amax, amax);
        }
    }
    ground_at(m, d, 3e-3);
}

START_TEST(plan_meets_its_conditions_on_the_humanoid) {
    fb_error err;
    fb_model* m = ck_model(scene_humanoid(&err), &err);
    plan_case c;
    fb_balance* bal = planner_for(m, NULL, &c, "humanoid");
    scene_rng rng = scene_rng_make(1801);
    const double wgt = weight(m);
    int points = 0, cases = 0;
    for (int i = 0; i < 150; i++) {
        humanoid_standing_random(m, c.d, &rng);
        randomise_motion(&c, &rng, 0.5, 3.0, 0.03);
        find_contacts(&c);
        fb_balance_reset(bal);
        const plan_check k = plan_and_check(bal, &c);
        expect_consistent(&k, wgt, c.label, i);
        points += k.npoint;
        cases += k.npoint > 0;
    }
    /* the states stand: most have support points, and on average more than one */
    ck_assert_msg(cases >= 140 && points >= 2 * cases, "%d of 150 states had contacts, %d points",
                  cases, points);
    plan_case_free(&c);
    fb_balance_destroy(bal);
    fb_model_destroy(m);
}
END_TEST

/* The CMU character of 131_01 (bundled) and the grounded reference's frames where both feet
 * and toes stand. */
typedef struct cmu_setup {
    fb_clip* clip;
    fb_character* ch;
    fb_ref* ref;
    fb_ref* ground;
    bool* bearing; /* (nbody): the contact plan's toes bear no weight, as the tracker says */
    int* frames;
    int nframes;
} cmu_setup;

static void cmu_setup_make(cmu_setup* s) {
    fb_error err;
    memset(s, 0, sizeof *s);
    ck_load_character(FB_DATA_DIR "/131_01.bvh", FB_DATA_DIR "/character_rules.json", &s->clip,
                      &s->ch);
    const fb_model* m = s->ch->model;
    s->ref = fb_ref_from_clip(s->clip, s->ch, 240.0, 0, 0, NULL, &err);
    ck_assert_msg(s->ref, "%s", err.msg);
    s->ground = fb_ref_grounded(m, s->ref, NULL, &err);
    ck_assert_msg(s->ground, "%s", err.msg);
    s->bearing = malloc((size_t)m->nbody * sizeof(bool));
    s->frames = malloc((size_t)s->ground->nframe * sizeof(int));
    ck_assert(s->bearing && s->frames);
    for (int b = 0; b < m->nbody; b++) {
        s->bearing[b] = true;
    }
    const int nc = s->ground->ncontact;
    int feet = 0;
    for (int c = 0; c < nc; c++) {
        feet += s->ground->contact[c].foot < 0;
        if (s->ground->contact[c].foot >= 0) {
            s->bearing[s->ground->contact[c].body] = false;
        }
    }
    ck_assert_int_eq(feet, 2);
    for (int f = 0; f < s->ground->nframe; f++) {
        bool both = true;
        for (int c = 0; c < nc; c++) {
            if (s->ground->contact[c].foot < 0) {
                both = both && s->ground->stance_at[(size_t)f * (size_t)nc + (size_t)c] >= 0;
            }
        }
        if (both) {
            s->frames[s->nframes++] = f;
        }
    }
    ck_assert_int_gt(s->nframes, 100);
}

static void cmu_setup_free(cmu_setup* s) {
    free(s->frames);
    free(s->bearing);
    fb_ref_destroy(s->ground);
    fb_ref_destroy(s->ref);
    fb_character_destroy(s->ch);
    fb_clip_destroy(s->clip);
}

/* A random one of the frames where both feet stand into c's state, its lowest point 0.5 mm in
 * the ground (the soles stand flat on y = 0 to 1e-4 mm: into the contact margin); the frame. */
static int cmu_stand_at(const cmu_setup* s, plan_case* c, scene_rng* rng) {
    const int f = s->frames[scene_rng_int(rng, 0, s->nframes - 1)];
    const int nq = c->m->nq;
    memcpy(c->d->q, s->ground->q + (size_t)f * (size_t)nq, (size_t)nq * sizeof(double));
    ground_at(c->m, c->d, 5e-4);
    return f;
}

START_TEST(plan_meets_its_conditions_on_the_cmu_character) {
    cmu_setup s;
    cmu_setup_make(&s);
    plan_case c;
    fb_balance* bal = planner_for(s.ch->model, s.bearing, &c, "131_01");
    scene_rng rng = scene_rng_make(1802);
    const double wgt = weight(c.m);
    int points = 0;
    for (int i = 0; i < 100; i++) {
        const int f = cmu_stand_at(&s, &c, &rng);
        randomise_motion(&c, &rng, 0.3, 3.0, 0.03);
        find_contacts(&c);
        fb_balance_reset(bal);
        const plan_check k = plan_and_check(bal, &c);
        expect_consistent(&k, wgt, "131_01 frame", f);
        ck_assert_msg(k.npoint >= 4, "131_01 frame %d: %d support points with both feet down", f,
                      k.npoint);
        points += k.npoint;
    }
    ck_assert_int_ge(points, 400);
    plan_case_free(&c);
    fb_balance_destroy(bal);
    cmu_setup_free(&s);
}
END_TEST

/* The contact-force fit of fb_ref_ground_residual done here, at one frame: the contacts within
 * `margin` (the collision code's), each one's friction pyramid (the normal tilted by mu along
 * the ground's two tangents, world z and x, as the planner's), the root wrench of a unit force
 * along each edge as [R^T (p - o) x e; R^T e] with the root's origin o and axes R read off
 * forward kinematics of points, and min |S^1/2 (w - G l)|^2 over l >= 0 by accelerated
 * projected gradient (FISTA). Returns the minimum's objective; G (6 per edge) and the edge
 * count into *ne. */
static double residual_here(const fb_model* m, fb_data* d, const double* q, const double* w,
                            double mu, double margin, const double sw[6], double* G, int* ne) {
    memcpy(d->q, q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, d);
    fb_contact con[256];
    int n = 0;
    fb_error err;
    ck_assert_msg(fb_collide_plane(m, d, 0, fb_ground_plane(), margin, con, &n, 256, &err) == FB_OK,
                  "%s", err.msg);
    n = n < 64 ? n : 64;
    const fb_v3 o = fb_point_pos(m, d, 1, fb_v3_make(0, 0, 0));
    fb_v3 R[3]; /* the root's axes in the world */
    for (int i = 0; i < 3; i++) {
        R[i] = fb_v3_sub(fb_point_pos(m, d, 1, fb_v3_make(i == 0, i == 1, i == 2)), o);
    }
    *ne = 0;
    for (int k = 0; k < n; k++) {
        const fb_v3 p = fb_point_pos(m, d, con[k].body_a, con[k].p_a);
        const fb_v3 up = con[k].n;
        const fb_v3 t[4] = {{0, 0, mu}, {0, 0, -mu}, {mu, 0, 0}, {-mu, 0, 0}};
        for (int e = 0; e < 4; e++) {
            const fb_v3 f = fb_v3_add(up, t[e]);
            const fb_v3 mom = fb_v3_cross(fb_v3_sub(p, o), f);
            double* g = G + 6 * (*ne)++;
            for (int i = 0; i < 3; i++) {
                g[i] = fb_v3_dot(R[i], mom);
                g[3 + i] = fb_v3_dot(R[i], f);
            }
        }
    }
    double obj0 = 0.0;
    for (int i = 0; i < 6; i++) {
        obj0 += sw[i] * w[i] * w[i];
    }
    if (*ne == 0) {
        return obj0;
    }
    /* the step: 1 / L, L >= the largest eigenvalue of G^T S G (its trace) */
    double L = 0.0;
    for (int e = 0; e < *ne; e++) {
        for (int i = 0; i < 6; i++) {
            L += sw[i] * G[6 * e + i] * G[6 * e + i];
        }
    }
    double *l = calloc(3 * (size_t)*ne, sizeof(double)), *y = l + *ne, *prev = y + *ne;
    ck_assert_ptr_nonnull(l);
    double tk = 1.0, best = obj0;
    for (int it = 0; it < 20000; it++) {
        double r[6];
        for (int i = 0; i < 6; i++) {
            r[i] = w[i];
        }
        for (int e = 0; e < *ne; e++) {
            for (int i = 0; i < 6; i++) {
                r[i] -= G[6 * e + i] * y[e];
            }
        }
        memcpy(prev, l, (size_t)*ne * sizeof(double));
        for (int e = 0; e < *ne; e++) {
            double grad = 0.0;
            for (int i = 0; i < 6; i++) {
                grad -= G[6 * e + i] * sw[i] * r[i];
            }
            l[e] = fmax(0.0, y[e] - grad / L);
        }
        const double tn = 0.5 * (1.0 + sqrt(1.0 + 4.0 * tk * tk));
        for (int e = 0; e < *ne; e++) {
            y[e] = l[e] + (tk - 1.0) / tn * (l[e] - prev[e]);
        }
        tk = tn;
        double rl[6], obj = 0.0;
        for (int i = 0; i < 6; i++) {
            rl[i] = w[i];
        }
        for (int e = 0; e < *ne; e++) {
            for (int i = 0; i < 6; i++) {
                rl[i] -= G[6 * e + i] * l[e];
            }
        }
        for (int i = 0; i < 6; i++) {
            obj += sw[i] * rl[i] * rl[i];
        }
        best = fmin(best, obj);
    }
    free(l);
    return best;
}

/* fb_ref_ground_residual (what the ground cannot give a reference: issue 18's least help) at 20
 * frames of 131_01's grounded reference against the fit done here: its residual r's objective
 * |S^1/2 r|^2 is the minimum (no larger than the projected gradient's, and within 1e-4 of it),
 * and r meets the minimum's conditions with the edges built here: G^T S r <= 0 (no edge's force
 * would lower it) and (w - r)^T S r = 0; frames with no contact give r = w, bit for bit, as does
 * the whole reference lifted 1 m; bad options are refused. */
START_TEST(the_ground_residual_is_the_least_help) {
    cmu_setup s;
    cmu_setup_make(&s);
    const fb_model* m = s.ch->model;
    fb_ref* r = s.ground;
    const double mu = 1.0, margin = 0.01, sw[6] = {3, 3, 3, 1, 1, 1};
    double* res = malloc((size_t)r->nframe * 6 * sizeof(double));
    int* np = malloc((size_t)r->nframe * sizeof(int));
    double* G = malloc(6 * 256 * sizeof(double));
    fb_data* d = ck_data(m);
    ck_assert(res && np && G);
    fb_error err;
    ck_assert_msg(fb_ref_ground_residual(m, r, mu, margin, 3.0, res, np, &err) == FB_OK, "%s",
                  err.msg);
    int touching = 0;
    double worst_gap = 0.0, worst_kkt = 0.0, sum_res = 0.0, sum_w = 0.0;
    for (int i = 0; i < 20; i++) {
        const int f = (int)((long)i * (r->nframe - 1) / 19);
        const double* w = r->tau + (size_t)f * (size_t)m->nv;
        const double* rf = res + 6 * (size_t)f;
        int ne = 0;
        const double here =
            residual_here(m, d, r->q + (size_t)f * (size_t)m->nq, w, mu, margin, sw, G, &ne);
        ck_assert_int_eq(ne, 4 * np[f]);
        double obj = 0.0, comp = 0.0, scale = 0.0;
        for (int k = 0; k < 6; k++) {
            obj += sw[k] * rf[k] * rf[k];
            comp += (w[k] - rf[k]) * sw[k] * rf[k];
            scale += sw[k] * w[k] * w[k];
        }
        if (ne == 0) {
            ck_assert_msg(memcmp(w, rf, 6 * sizeof(double)) == 0, "frame %d: no contact, r != w",
                          f);
            continue;
        }
        touching++;
        sum_res += sqrt(rf[3] * rf[3] + rf[4] * rf[4] + rf[5] * rf[5]);
        sum_w += sqrt(w[3] * w[3] + w[4] * w[4] + w[5] * w[5]);
        worst_gap = fmax(worst_gap, (obj - here) / scale);
        ck_assert_msg(here - obj <= 1e-4 * scale,
                      "frame %d: the fit here reached %g, the library "
                      "%g",
                      f, here, obj);
        worst_kkt = fmax(worst_kkt, fabs(comp) / scale);
        for (int e = 0; e < ne; e++) {
            double g = 0.0, gn = 0.0;
            for (int k = 0; k < 6; k++) {
                g += G[6 * e + k] * sw[k] * rf[k];
                gn += G[6 * e + k] * G[6 * e + k];
            }
            worst_kkt = fmax(worst_kkt, g / (sqrt(gn) * sqrt(scale)));
        }
    }
    printf("ground residual at 20 frames of 131_01's grounded reference, %d touching: objective "
           "above the fit here by %.1e (of |w|^2) at most; optimality conditions to %.1e; "
           "residual force %.1f N against %.1f N needed (means)\n",
           touching, worst_gap, worst_kkt, sum_res / touching, sum_w / touching);
    ck_assert_int_ge(touching, 15);
    ck_assert_double_le(worst_gap, 1e-6);
    ck_assert_double_le(worst_kkt, 1e-6);
    ck_assert_double_lt(sum_res, 0.5 * sum_w);
    /* lifted 1 m: nothing touches, everything is left */
    for (int f = 0; f < r->nframe; f++) {
        r->q[(size_t)f * (size_t)m->nq + (size_t)m->q_adr[1] + 1] += 1.0;
    }
    ck_assert(fb_ref_ground_residual(m, r, mu, margin, 3.0, res, np, &err) == FB_OK);
    for (int f = 0; f < r->nframe; f++) {
        ck_assert_int_eq(np[f], 0);
        ck_assert(memcmp(res + 6 * (size_t)f, r->tau + (size_t)f * (size_t)m->nv,
                         6 * sizeof(double)) == 0);
    }
    ck_assert_int_eq(fb_ref_ground_residual(m, r, -1.0, margin, 3.0, res, np, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "friction"), "%s", err.msg);
    fb_data_destroy(d);
    free(G);
    free(np);
    free(res);
    cmu_setup_free(&s);
}
END_TEST

/* The centre of mass target: the clip's where it is 2 cm or more inside the support polygon,
 * else moved across gravity to inside it (on the polygon, and at most 2 cm further than its
 * nearest point). com.h of 1 s makes the planner's filter of the offset take it at once. With
 * substeps of 0.1 s the offset follows 0.1 of the way per substep (0.1, then 0.19 of it), and a
 * substep planned again from the same start (one the world undid and does again at half the
 * length) goes on from where the filter was when that substep began. */
START_TEST(the_centre_of_mass_target_is_moved_over_the_support) {
    cmu_setup s;
    cmu_setup_make(&s);
    plan_case c;
    fb_balance* bal = planner_for(s.ch->model, s.bearing, &c, "target");
    scene_rng rng = scene_rng_make(1804);
    int inside = 0, moved = 0;
    for (int i = 0; i < 60; i++) {
        const int f = cmu_stand_at(&s, &c, &rng);
        randomise_motion(&c, &rng, 0.0, 0.0, 0.25);
        c.com.h = 1.0;
        find_contacts(&c);
        fb_balance_reset(bal);
        const plan_check k = plan_and_check(bal, &c);
        const fb_balance_info* bi = &k.plan.info;
        bool amb = false;
        const double dc = hull_distance(bi->point, bi->npoint, c.com.c, &amb);
        const double dt = hull_distance(bi->point, bi->npoint, bi->com_target, &amb);
        ck_assert_msg(isfinite(dc) && isfinite(dt), "frame %d: no support polygon", f);
        const double move = fb_v3_norm(fb_v3_sub(bi->com_target, c.com.c));
        if (dc >= 0.02) {
            ck_assert_msg(move == 0.0, "frame %d: a target %.4f m inside was moved %g m", f, dc,
                          move);
            inside++;
        } else {
            ck_assert_msg(dt >= -1e-9, "frame %d: the target is %g m outside the support", f,
                          -dt);
            ck_assert_msg(move <= fmax(0.0, -dc) + 0.02 + 1e-9,
                          "frame %d: a target %.4f m from the support was moved %.4f m", f, -dc,
                          move);
            ck_assert_msg(fabs(bi->com_target.y - c.com.c.y) <= 1e-12,
                          "frame %d: the target moved up by %g m", f,
                          bi->com_target.y - c.com.c.y);
            moved++;
            const fb_v3 full = fb_v3_sub(bi->com_target, c.com.c);
            /* 0.1; 0.1 + 0.1 (1 - 0.1); from 0.1 again, + 0.05 (1 - 0.1); + 0.05 (1 - 0.145) */
            const double share[4] = {0.1, 0.19, 0.145, 0.18775};
            const double start[4] = {5.0, 5.1, 5.1, 5.15};
            const double len[4] = {0.1, 0.1, 0.05, 0.05};
            fb_balance_reset(bal);
            for (int k2 = 0; k2 < 4; k2++) {
                c.com.t = start[k2]; /* 5.1 again: that 0.1 s substep undone, then halved */
                c.com.h = len[k2];
                const plan_check kk = plan_and_check(bal, &c);
                const fb_v3 off = fb_v3_sub(kk.plan.info.com_target, c.com.c);
                const fb_v3 want = fb_v3_scale(full, share[k2]);
                ck_assert_msg(fb_v3_norm(fb_v3_sub(off, want)) <= 1e-12,
                              "frame %d, substep %d: offset %g m, %g m expected", f, k2,
                              fb_v3_norm(off), fb_v3_norm(want));
            }
            c.com.t = 0.0;
        }
    }
    ck_assert_msg(inside >= 3 && moved >= 30, "%d targets inside, %d moved", inside, moved);
    plan_case_free(&c);
    fb_balance_destroy(bal);
    cmu_setup_free(&s);
}
END_TEST

/* What the planner cannot do: a centre of mass target 1 m outside the feet, and a body in the
 * air. The plans stay finite and consistent; toward the far target the contacts push as far
 * as their cones allow: their horizontal force points at it. */
START_TEST(plan_out_of_reach_is_the_nearest_and_finite) {
    fb_error err;
    fb_model* m = ck_model(scene_humanoid(&err), &err);
    plan_case c;
    fb_balance* bal = planner_for(m, NULL, &c, "out of reach");
    scene_rng rng = scene_rng_make(1803);
    const double wgt = weight(m);
    for (int i = 0; i < 40; i++) {
        humanoid_standing_random(m, c.d, &rng);
        randomise_motion(&c, &rng, 0.2, 1.0, 0.0);
        const double ang = scene_rng_uniform(&rng, 0.0, 2.0 * FB_PI);
        const fb_v3 dir = fb_v3_make(cos(ang), 0.0, sin(ang));
        c.com.c = fb_v3_add(c.com.c, fb_v3_scale(dir, 1.0 + 9.0 * (i % 2))); /* 1 m, 10 m */
        c.com.v = fb_v3_zero();
        c.com.a = fb_v3_zero();
        find_contacts(&c);
        fb_balance_reset(bal);
        const plan_check k = plan_and_check(bal, &c);
        expect_consistent(&k, wgt, c.label, i);
        ck_assert_int_gt(k.npoint, 0);
        fb_v3 F = fb_v3_zero();
        for (int p = 0; p < k.plan.info.npoint; p++) {
            F = fb_v3_add(F, k.plan.f[p]);
        }
        ck_assert_msg(k.plan.wrench_err > 1e-3 * wgt,
                      "%d: the wrench asked for a target %g m away was met (error %g)", i,
                      1.0 + 9.0 * (i % 2), k.plan.wrench_err);
        ck_assert_msg(fb_v3_dot(F, dir) > 0.05 * c.mu * fb_v3_dot(F, fb_ground_plane().n),
                      "%d: the contacts push %g N toward the target (normal %g N)", i,
                      fb_v3_dot(F, dir), fb_v3_dot(F, fb_ground_plane().n));
    }
    /* in the air: no support point, the root falls with the joints' accelerations */
    for (int i = 0; i < 10; i++) {
        humanoid_standing_random(m, c.d, &rng);
        c.d->q[m->q_adr[1] + 1] += 0.5;
        randomise_motion(&c, &rng, 0.5, 3.0, 0.03);
        find_contacts(&c);
        ck_assert_int_eq(c.ncon, 0);
        const plan_check k = plan_and_check(bal, &c);
        ck_assert_int_eq(k.npoint, 0);
        expect_consistent(&k, wgt, "in the air", i);
    }
    plan_case_free(&c);
    fb_balance_destroy(bal);
    fb_model_destroy(m);
}
END_TEST

/* ---- pushes ---------------------------------------------------------------------------- */

/* f_ext is world coordinates about the world origin: push_wrench's [p x F; F] at a free
 * body's centre of mass, far from the origin and turned, moves it without turning it. */
START_TEST(a_push_through_the_centre_of_mass_does_not_turn_a_free_body) {
    /* a box whose centre (its centre of mass) is off the body origin */
    fb_shape sh = ck_shape_box(fb_v3_make(0.3, 0.2, 0.4));
    sh.p0 = fb_v3_make(0.1, -0.05, 0.02);
    fb_model* m = ck_free_body(sh, 1000.0);
    fb_error err;
    ck_assert_msg(fb_model_set_gravity(m, fb_v3_zero(), &err) == FB_OK, "%s", err.msg);
    fb_world_opts wo = fb_default_world_opts();
    wo.ground = false;
    wo.dt = 1.0 / 240.0;
    const fb_model* cm = m;
    fb_world* w = fb_world_create(1, &cm, &wo, NULL, &err);
    ck_assert_msg(w, "%s", err.msg);
    fb_data* d = fb_world_data(w, 0);
    ck_place(d, fb_v3_make(2.0, 1.5, -3.0), fb_quat_exp(fb_v3_make(0.3, -0.4, 0.5)));
    const fb_v3 F = fb_v3_make(120.0, -30.0, 75.0);
    const double mass = m->I[1].m;
    const fb_v3 c_body = fb_v3_scale(m->I[1].h, 1.0 / mass);
    for (int i = 0; i < 24; i++) {
        fb_kinematics_pos(m, d);
        d->f_ext[1] = push_wrench(fb_point_pos(m, d, 1, c_body), F);
        ck_assert_msg(fb_world_step(w, &err) == FB_OK, "%s", err.msg);
    }
    fb_kinematics(m, d);
    const fb_fv h = fb_momentum(m, d);
    const double T = 24.0 / 240.0;
    for (int k = 0; k < 3; k++) {
        fb_ck_near(fb_v3_get(h.f, k), fb_v3_get(F, k) * T, 1e-9, 1e-9);
        fb_ck_near(d->qd[k], 0.0, 0.0, 1e-9); /* no turn */
    }
    fb_world_destroy(w);
    fb_model_destroy(m);
}
END_TEST

/* The scene of the push tests: 131_01's character at the first frame where both feet and toes
 * stand for 0.2 s. */
static void push_setup(cmu_setup* s, push_scene* ps, double seconds) {
    cmu_setup_make(s);
    const int frame = push_stand_frame(s->ground, 0, PUSH_STAND_HOLD);
    ck_assert_int_ge(frame, 0);
    fb_error err;
    ck_assert_msg(push_scene_create(s->clip, s->ch, 240.0, frame, seconds, ps, &err) == 0, "%s",
                  err.msg);
}

/* Standing still: nothing moves, and the tracker's torques are within the limits (c). */
static void expect_sane(const push_result* r, const char* what) {
    ck_assert_msg(!r->blew_up, "%s: blew up: %s", what, r->msg);
    ck_assert_msg(r->finite, "%s: a coordinate became non-finite", what);
    ck_assert_msg(r->tau_ratio_max <= 1.0 + 1e-12,
                  "%s: the tracker set a torque %g times its joint's limit", what,
                  r->tau_ratio_max);
    /* and the world applied none past its limit (the joint-space solve once returned torques
     * up to 300 times their limits, which met its residual test, and they were used) */
    ck_assert_msg(r->applied_ratio_max <= 1.0 + 1e-6,
                  "%s: a joint was applied %g times its limit", what, r->applied_ratio_max);
}

/* One push of `force` N toward dir (t_end 0: the scene's end), run and checked sane. */
static void run_push(const push_scene* ps, fb_v3 dir, double force, double t_end, const char* what,
                     push_result* r) {
    push_opts o = push_default_opts();
    o.dir = dir;
    o.force = force;
    o.t_end = t_end;
    fb_error err;
    ck_assert_msg(push_run(ps, &o, r, &err) == 0, "%s", err.msg);
    expect_sane(r, what);
}

/* Stood through the push, and 2 s after it the joints are back within 2 cm. */
static void expect_recovered(const push_result* r, const char* what) {
    ck_assert_msg(r->fall.cause == FB_FALL_NONE, "%s: fell at %.3f s (%s)", what, r->fall.time,
                  fb_fall_cause_name(r->fall.cause));
    ck_assert_msg(r->pose_back < 0.02,
                  "%s: 2 s after the push the joints are %.2f cm from where they stood", what,
                  100.0 * r->pose_back);
}

START_TEST(a_standing_character_recovers_from_a_moderate_push) {
    cmu_setup s;
    push_scene ps;
    push_setup(&s, &ps, 4.0);
    /* 150 N for 0.1 s (15 N s: 0.18 m/s on 81 kg) at the pelvis, from the front and the side */
    const fb_v3 dirs[2] = {ps.forward, ps.left};
    const char* names[2] = {"front", "left"};
    for (int k = 0; k < 2; k++) {
        push_result r;
        run_push(&ps, dirs[k], 150.0, 0.0, names[k], &r);
        expect_recovered(&r, names[k]);
        /* the push moved it, and it had settled near the standing frame */
        ck_assert_msg(r.pose_max > 2e-3, "%s: the push moved the joints %g m at most", names[k],
                      r.pose_max);
        ck_assert_msg(r.start_dev < 0.02, "%s: it settled %.2f cm from the standing frame",
                      names[k], 100.0 * r.start_dev);
    }
    push_scene_destroy(&ps);
    cmu_setup_free(&s);
}
END_TEST

/* A light push from the right (25 N for 0.1 s) threw the character over at 0.6 s: the world
 * applied 6,948 N m to the left ankle (its limit 138 N m) at the push's second step, a solution
 * out of its bounds that the joint-space solve accepted. It stands. */
START_TEST(a_light_push_from_the_right_is_not_a_fall) {
    cmu_setup s;
    push_scene ps;
    push_setup(&s, &ps, 4.0);
    push_result r;
    run_push(&ps, fb_v3_neg(ps.left), 25.0, 0.0, "25 N right", &r);
    expect_recovered(&r, "25 N right");
    push_scene_destroy(&ps);
    cmu_setup_free(&s);
}
END_TEST

START_TEST(a_large_push_ends_in_a_fall_at_rest) {
    cmu_setup s;
    push_scene ps;
    push_setup(&s, &ps, 6.0);
    /* 1000 N: 100 N s, 1.2 m/s on 81 kg */
    push_result r;
    run_push(&ps, ps.forward, 1000.0, 6.0, "1000 N front", &r);
    const push_opts o = push_default_opts();
    ck_assert_msg(r.fall.cause != FB_FALL_NONE, "1000 N front: it did not fall");
    ck_assert_msg(r.fall.time > o.t_push && r.fall.time < o.t_push + 2.0,
                  "1000 N front: fell at %.3f s", r.fall.time);
    ck_assert_msg(r.asleep_end || r.qd_end < 0.05,
                  "1000 N front: still moving at %.3g rad/s or m/s %.1f s after the push",
                  r.qd_end, 6.0 - o.t_push);
    push_scene_destroy(&ps);
    cmu_setup_free(&s);
}
END_TEST

int main(void) {
    Suite* s = suite_create("balance");
    TCase* tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, nnls_meets_its_optimality_conditions);
    tcase_add_test(tc, support_polygon_is_the_convex_hull);
    tcase_add_test(tc, plan_meets_its_conditions_on_the_humanoid);
    tcase_add_test(tc, plan_meets_its_conditions_on_the_cmu_character);
    tcase_add_test(tc, the_ground_residual_is_the_least_help);
    tcase_add_test(tc, the_centre_of_mass_target_is_moved_over_the_support);
    tcase_add_test(tc, plan_out_of_reach_is_the_nearest_and_finite);
    tcase_add_test(tc, a_push_through_the_centre_of_mass_does_not_turn_a_free_body);
    tcase_add_test(tc, a_standing_character_recovers_from_a_moderate_push);
    tcase_add_test(tc, a_light_push_from_the_right_is_not_a_fall);
    tcase_add_test(tc, a_large_push_ends_in_a_fall_at_rest);
    suite_add_tcase(s, tc);
    return ck_run_suite(s);
}
