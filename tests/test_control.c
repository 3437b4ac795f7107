/* Motion tracking, against independent answers:
 *   the SO(3) right Jacobian and its derivative against finite differences of q0 exp(r(t));
 *   the motion fit's q, v, a against the analytic derivatives of a synthetic clip (sinusoids
 *   on a hinge, a ball joint with a turning axis and a floating root);
 *   the feedforward torques fed open-loop to ABA and the integrator reproduce the fit;
 *   the settle-time gains against an RK4 integration of the error dynamics;
 *   gains files: round trip, globs, and errors that name the field;
 *   a new tracker's torques are zero, not uninitialised, before its first step;
 *   the glitch repair: a clean fast motion left bit-identical, injected spikes removed with the
 *   fit then matching the clean analytic curve;
 *   the reference and the ground: a toe pointing into the floor turned up by exactly the
 *   analytic least angle; a clip sinking into (floating over) the ground placed on it by
 *   exactly its lowest point, with a turned (Z-up) root frame too;
 *   tracking whole clips (the bundled walk and 131_03): open loop, accel and pd with a kinematic
 *   root, accel at 120 Hz, assisted root, with the reference never inside the ground. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "math/quat.h"
#include "math/so3.h"
#include "math/spatial.h"
#include "support.h"

#define TWO_PI (2.0 * FB_PI)

/* ---- SO(3) --------------------------------------------------------------------------- */

/* r(t) = r0 + r1 t + r2 t^2 / 2; body angular velocity and acceleration of exp(r(t)) at t = 0
 * by central differences of the quaternion curve. */
static fb_v3 fd_omega(fb_v3 r0, fb_v3 r1, fb_v3 r2, double t, double h) {
    const fb_v3 rp = fb_v3_add(fb_v3_axpy(r0, t + h, r1), fb_v3_scale(r2, 0.5 * (t + h) * (t + h)));
    const fb_v3 rm = fb_v3_add(fb_v3_axpy(r0, t - h, r1), fb_v3_scale(r2, 0.5 * (t - h) * (t - h)));
    const fb_quat q0 = fb_quat_exp(rm), q1 = fb_quat_exp(rp);
    /* log(q0^-1 q1) / 2h = w at the midpoint to O(h^2) */
    return fb_v3_scale(fb_quat_log(fb_quat_mul(fb_quat_conj(q0), q1)), 0.5 / h);
}

START_TEST(so3_jacobian_matches_finite_differences) {
    srand(7);
    for (int trial = 0; trial < 200; trial++) {
        fb_v3 r[3];
        for (int k = 0; k < 3; k++) {
            r[k] = fb_v3_make(rand() / (double)RAND_MAX - 0.5, rand() / (double)RAND_MAX - 0.5,
                              rand() / (double)RAND_MAX - 0.5);
        }
        /* angles from 1e-3 to ~2.5 rad, across the series/closed-form switch */
        const double scale = pow(10.0, -3.0 + 3.4 * (trial % 20) / 19.0);
        r[0] = fb_v3_scale(r[0], scale);
        const fb_v3 w = fb_so3_jr(r[0], r[1]);
        const fb_v3 wd = fb_v3_add(fb_so3_jr(r[0], r[2]), fb_so3_jr_dot(r[0], r[1]));
        const double h = 1e-4;
        const fb_v3 w_fd = fd_omega(r[0], r[1], r[2], 0.0, h);
        const fb_v3 wd_fd = fb_v3_scale(
            fb_v3_sub(fd_omega(r[0], r[1], r[2], h, h), fd_omega(r[0], r[1], r[2], -h, h)),
            0.5 / h);
        ck_assert_msg(fb_v3_norm(fb_v3_sub(w, w_fd)) < 1e-7, "trial %d |r| %g: w off by %g",
                      trial, fb_v3_norm(r[0]), fb_v3_norm(fb_v3_sub(w, w_fd)));
        ck_assert_msg(fb_v3_norm(fb_v3_sub(wd, wd_fd)) < 1e-6, "trial %d |r| %g: w' off by %g",
                      trial, fb_v3_norm(r[0]), fb_v3_norm(fb_v3_sub(wd, wd_fd)));
    }
}
END_TEST

/* ---- the fit on a synthetic clip ------------------------------------------------------- */

/* floating root (body 1), a ball joint (body 2), a hinge about z (body 3) */
static fb_model* synthetic_model(void) {
    fb_error err;
    fb_model* m = fb_model_create(3, NULL, &err);
    ck_assert_ptr_nonnull(m);
    const fb_rbi I = fb_rbi_capsule(1000.0, 0.05, fb_v3_zero(), fb_v3_make(0.0, -0.3, 0.0));
    fb_body_def d = fb_default_body_def();
    d.name = "root";
    d.joint = FB_JOINT_FLOATING;
    d.inertia = I;
    ck_assert_int_eq(fb_model_add_body(m, &d, NULL, &err), FB_OK);
    d.name = "ball";
    d.parent = 1;
    d.joint = FB_JOINT_SPHERICAL;
    d.X_tree.r = fb_v3_make(0.0, -0.3, 0.0);
    ck_assert_int_eq(fb_model_add_body(m, &d, NULL, &err), FB_OK);
    d.name = "hinge";
    d.parent = 2;
    d.joint = FB_JOINT_REVOLUTE;
    d.axis = fb_v3_make(0.0, 0.0, 1.0);
    ck_assert_int_eq(fb_model_add_body(m, &d, NULL, &err), FB_OK);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

/* The analytic motion at time t: q, and v, a in the joints' coordinates. Frequencies of a
 * brisk human motion: 1 Hz and its harmonics. */
static void synthetic_motion(double t, double* q, double* v, double* a) {
    const double w = TWO_PI;
    /* root: world position and a yaw about y */
    const fb_v3 p = fb_v3_make(0.3 * sin(w * t), 1.0 + 0.05 * sin(2.0 * w * t + 0.3), 1.2 * t);
    const fb_v3 pd = fb_v3_make(0.3 * w * cos(w * t), 0.1 * w * cos(2.0 * w * t + 0.3), 1.2);
    const fb_v3 pdd = fb_v3_make(-0.3 * w * w * sin(w * t),
                                 -0.2 * w * w * sin(2.0 * w * t + 0.3), 0.0);
    const double yaw = 0.5 * sin(w * t), yawd = 0.5 * w * cos(w * t),
                 yawdd = -0.5 * w * w * sin(w * t);
    const fb_v3 ey = fb_v3_make(0.0, 1.0, 0.0);
    const fb_quat R = fb_quat_from_axis_angle(ey, yaw);
    const fb_v3 wr = fb_v3_scale(ey, yawd);
    const fb_v3 vl = fb_quat_rotate(fb_quat_conj(R), pd);
    const fb_v3 al = fb_v3_sub(fb_quat_rotate(fb_quat_conj(R), pdd), fb_v3_cross(wr, vl));
    q[0] = p.x, q[1] = p.y, q[2] = p.z;
    fb_quat_store(q + 3, R);
    v[0] = wr.x, v[1] = wr.y, v[2] = wr.z, v[3] = vl.x, v[4] = vl.y, v[5] = vl.z;
    a[0] = 0.0, a[1] = yawdd, a[2] = 0.0, a[3] = al.x, a[4] = al.y, a[5] = al.z;
    /* ball: rot(e1, t1) rot(e2, t2): w = R2^T e1 t1' + e2 t2',
     * w' = R2^T e1 t1'' - t2' e2 x (R2^T e1) t1' + e2 t2'' */
    const fb_v3 e1 = fb_v3_make(1.0, 0.0, 0.0), e2 = fb_v3_make(0.0, 0.6, 0.8);
    const double t1 = 0.6 * sin(w * t), t1d = 0.6 * w * cos(w * t), t1dd = -0.6 * w * w * sin(w * t);
    const double t2 = 0.4 * sin(2.0 * w * t + 0.5), t2d = 0.8 * w * cos(2.0 * w * t + 0.5),
                 t2dd = -1.6 * w * w * sin(2.0 * w * t + 0.5);
    const fb_quat q1 = fb_quat_from_axis_angle(e1, t1), q2 = fb_quat_from_axis_angle(e2, t2);
    fb_quat_store(q + 7, fb_quat_mul(q1, q2));
    const fb_v3 e1b = fb_quat_rotate(fb_quat_conj(q2), e1);
    const fb_v3 wb = fb_v3_add(fb_v3_scale(e1b, t1d), fb_v3_scale(e2, t2d));
    const fb_v3 wbd = fb_v3_add(fb_v3_sub(fb_v3_scale(e1b, t1dd),
                                          fb_v3_scale(fb_v3_cross(e2, e1b), t2d * t1d)),
                                fb_v3_scale(e2, t2dd));
    v[6] = wb.x, v[7] = wb.y, v[8] = wb.z;
    a[6] = wbd.x, a[7] = wbd.y, a[8] = wbd.z;
    /* hinge */
    q[11] = 0.8 * sin(w * t + 1.0);
    v[9] = 0.8 * w * cos(w * t + 1.0);
    a[9] = -0.8 * w * w * sin(w * t + 1.0);
}

/* A fast clip: the ball joint spins at 1.5 turns/s about a tilted axis while it wobbles as
 * in synthetic_motion, q_ball = exp(W t s) B(t). Body angular velocity w = B^T s W + w_B and
 * acceleration w' = w_B' - w_B x (B^T s W) (d/dt B^T x = -w_B x B^T x for a fixed x). */
static void fast_motion(double t, double* q, double* v, double* a) {
    synthetic_motion(t, q, v, a);
    const double W = 1.5 * TWO_PI;
    const fb_v3 s = fb_v3_scale(fb_v3_make(0.3, 0.9, 0.3), 1.0 / sqrt(0.99));
    const fb_quat B = fb_quat_load(q + 7);
    const fb_v3 wB = fb_v3_make(v[6], v[7], v[8]), wBd = fb_v3_make(a[6], a[7], a[8]);
    fb_quat_store(q + 7, fb_quat_mul(fb_quat_from_axis_angle(s, W * t), B));
    const fb_v3 u = fb_quat_rotate(fb_quat_conj(B), fb_v3_scale(s, W));
    const fb_v3 w = fb_v3_add(u, wB), wd = fb_v3_sub(wBd, fb_v3_cross(wB, u));
    v[6] = w.x, v[7] = w.y, v[8] = w.z;
    a[6] = wd.x, a[7] = wd.y, a[8] = wd.z;
}

typedef void (*motion_fn)(double t, double* q, double* v, double* a);

/* Largest error of the fitted reference against the analytic motion, over frames whose time
 * is at least `margin` s from the clip's ends (the window is one-sided there). */
static void fit_errors(const fb_model* m, const fb_ref* r, motion_fn motion, double margin,
                       double err[3]) {
    double q[12], v[10], a[10], dq[10];
    err[0] = err[1] = err[2] = 0.0;
    const double T = fb_ref_duration(r);
    for (int i = 0; i < r->nframe; i++) {
        const double t = i * r->dt;
        if (t < margin || t > T - margin) {
            continue;
        }
        motion(t, q, v, a);
        fb_difference(m, q, r->q + (size_t)i * 12, dq);
        for (int j = 0; j < 10; j++) {
            err[0] = fmax(err[0], fabs(dq[j]));
            err[1] = fmax(err[1], fabs(r->v[i * 10 + j] - v[j]));
            err[2] = fmax(err[2], fabs(r->a[i * 10 + j] - a[j]));
        }
    }
}

/* secs s of a motion sampled at clip_rate (malloc'd, ns x 12). */
static double* sample_motion(motion_fn motion, double clip_rate, double secs, int* ns) {
    *ns = (int)(secs * clip_rate) + 1;
    double* qs = malloc((size_t)*ns * 12 * sizeof(double));
    double v[10], a[10];
    for (int k = 0; k < *ns; k++) {
        motion(k / clip_rate, qs + (size_t)k * 12, v, a);
    }
    return qs;
}

static fb_ref* synthetic_ref(const fb_model* m, double clip_rate, double sim_rate, double secs,
                             const fb_fit_opts* o) {
    int ns;
    double* qs = sample_motion(synthetic_motion, clip_rate, secs, &ns);
    fb_error err;
    fb_ref* r = fb_ref_create(m, ns, 1.0 / clip_rate, qs, sim_rate, o, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    free(qs);
    return r;
}

/* fb_ref_frame against the brute-force nearest frame, and outside the frames. */
START_TEST(nearest_frame_of_a_time) {
    fb_model* m = synthetic_model();
    const fb_fit_opts o = fb_default_fit_opts();
    fb_ref* r = synthetic_ref(m, 120.0, 240.0, 1.0, &o);
    const int last = r->nframe - 1;
    for (int k = 0; k <= 2000; k++) {
        const double t = -0.1 + 1.2 * k / 2000.0;
        int best = 0;
        for (int i = 1; i <= last; i++) {
            if (fabs(i * r->dt - t) < fabs(best * r->dt - t)) {
                best = i;
            }
        }
        ck_assert_int_eq(fb_ref_frame(r, t), best);
    }
    ck_assert_int_eq(fb_ref_frame(r, NAN), 0);
    ck_assert_int_eq(fb_ref_frame(r, -INFINITY), 0);
    ck_assert_int_eq(fb_ref_frame(r, INFINITY), last);
    ck_assert_int_eq(fb_ref_frame(r, 1e300), last);
    fb_ref_destroy(r);
    fb_model_destroy(m);
}
END_TEST

START_TEST(fit_matches_analytic_derivatives) {
    fb_model* m = synthetic_model();
    const fb_fit_opts o = fb_default_fit_opts();
    /* a 120 Hz clip fitted at 240 Hz: half the frames lie between clip frames */
    fb_ref* r = synthetic_ref(m, 120.0, 240.0, 3.0, &o);
    ck_assert_int_eq(r->nframe, 721);
    double e[3];
    fit_errors(m, r, synthetic_motion, 0.05, e);
    /* peaks of the analytic motion: |v| 0.8 * 2 w, |a| 1.6 * (2 w)^2 (the ball joint's 2 Hz) */
    const double vpeak = 1.6 * TWO_PI, apeak = 6.4 * TWO_PI * TWO_PI;
    printf("fit (GCV chose window %d, degree %d) 120 Hz clip at 240 Hz, interior: |q| %.2e rad "
           "|v| %.2e (%.1e of peak) |a| %.2e (%.1e of peak)\n", 2 * r->fit_half_window[3] + 1,
           r->fit_degree[3], e[0], e[1], e[1] / vpeak, e[2], e[2] / apeak);
    ck_assert_double_lt(e[0], 1e-6);
    ck_assert_double_lt(e[1], 1e-6 * vpeak);
    ck_assert_double_lt(e[2], 1e-6 * apeak);
    fit_errors(m, r, synthetic_motion, 0.0, e);
    printf("                      including the ends: |q| %.2e |v| %.2e |a| %.2e\n", e[0], e[1],
           e[2]);
    fb_ref_destroy(r);
    fb_model_destroy(m);
}
END_TEST

/* ---- glitch repair ------------------------------------------------------------------- */

/* Whether two references hold the same numbers, bit for bit. */
static bool same_ref(const fb_ref* x, const fb_ref* y) {
    const size_t n = (size_t)x->nframe * (size_t)(x->nq + 5 * x->nv);
    return x->nframe == y->nframe && memcmp(x->q, y->q, n * sizeof(double)) == 0;
}

/* A clean fast motion (the ball joint turning at 1.5 turns/s, 0.16 rad per clip frame at its
 * fastest) is not a glitch: the repair leaves every sample alone, so the reference is
 * bit-identical to the one fitted with the repair off, and it matches the analytic curve. */
START_TEST(glitch_repair_leaves_fast_motion_alone) {
    fb_model* m = synthetic_model();
    int ns;
    double* qs = sample_motion(fast_motion, 120.0, 3.0, &ns);
    fb_error err;
    fb_fit_opts keep = fb_default_fit_opts();
    keep.keep_glitches = true;
    fb_ref* r = fb_ref_create(m, ns, 1.0 / 120.0, qs, 240.0, NULL, NULL, &err);
    fb_ref* r0 = fb_ref_create(m, ns, 1.0 / 120.0, qs, 240.0, &keep, NULL, &err);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(r0);
    ck_assert_int_eq(r->nrepaired, 0);
    ck_assert_int_eq(r->nwarn, 0);
    ck_assert(same_ref(r, r0));
    double e[3];
    fit_errors(m, r, fast_motion, 0.05, e);
    printf("fast motion (1.5 turns/s): nothing repaired, reference bit-identical; fit vs analytic "
           "|q| %.1e |v| %.1e |a| %.1e\n", e[0], e[1], e[2]);
    ck_assert_double_lt(e[0], 1e-8);
    ck_assert_double_lt(e[1], 2e-6);
    ck_assert_double_lt(e[2], 1e-3);
    fb_ref_destroy(r);
    fb_ref_destroy(r0);
    free(qs);
    fb_model_destroy(m);
}
END_TEST

/* Glitches injected into the fast clip: the ball joint 60 degrees off for one frame in the
 * middle and 65 degrees off at the first frame (as 01_01 and louise start), the root 8 cm off
 * for one frame. The repair finds exactly those frames, and the fit then matches the clean
 * analytic curve; without the repair the same fit is off by orders of magnitude more. */
START_TEST(glitch_repair_removes_spikes) {
    fb_model* m = synthetic_model();
    int ns;
    double* qs = sample_motion(fast_motion, 120.0, 3.0, &ns);
    const fb_v3 ax = fb_v3_scale(fb_v3_make(1.0, -0.5, 0.2), 1.0 / sqrt(1.29));
    fb_quat_store(qs + 120 * 12 + 7, fb_quat_mul(fb_quat_load(qs + 120 * 12 + 7),
                                                 fb_quat_from_axis_angle(ax, FB_PI / 3.0)));
    fb_quat_store(qs + 7, fb_quat_mul(fb_quat_load(qs + 7),
                                      fb_quat_from_axis_angle(ax, 65.0 * FB_PI / 180.0)));
    qs[200 * 12 + 1] += 0.08;
    fb_error err;
    fb_ref* r = fb_ref_create(m, ns, 1.0 / 120.0, qs, 240.0, NULL, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    fb_fit_opts keep = fb_default_fit_opts();
    keep.keep_glitches = true;
    fb_ref* r0 = fb_ref_create(m, ns, 1.0 / 120.0, qs, 240.0, &keep, NULL, &err);
    ck_assert_ptr_nonnull(r0);
    for (int k = 0; k < r->nwarn; k++) {
        printf("  %s\n", r->warn[k]);
    }
    ck_assert_int_eq(r->repaired[1], 1); /* root: frame 200 */
    ck_assert_int_eq(r->repaired[2], 2); /* ball: frames 0 and 120 */
    ck_assert_int_eq(r->repaired[3], 0);
    ck_assert_int_eq(r->nrepaired, 3);
    ck_assert_int_eq(r->nwarn, 2);
    ck_assert_msg(strstr(r->warn[1], "ball") && strstr(r->warn[1], "0, 120"), "%s", r->warn[1]);
    double e[3], e0[3];
    fit_errors(m, r, fast_motion, 0.05, e);
    fit_errors(m, r0, fast_motion, 0.05, e0);
    printf("spikes repaired: fit vs analytic |q| %.1e |v| %.1e |a| %.1e (without the repair: "
           "%.1e %.1e %.1e)\n", e[0], e[1], e[2], e0[0], e0[1], e0[2]);
    ck_assert_double_lt(e[0], 1e-4);
    ck_assert_double_lt(e[1], 1e-2);
    ck_assert_double_lt(e[2], 2.0);
    ck_assert_double_gt(e0[2], 100.0 * e[2]);
    /* the first frame, extrapolated from the frames after it */
    double q[12], v[10], a[10], dq[10];
    fast_motion(0.0, q, v, a);
    fb_difference(m, q, r->q, dq);
    printf("  first frame after the repair: %.2f deg off the analytic pose\n",
           180.0 / FB_PI * sqrt(dq[6] * dq[6] + dq[7] * dq[7] + dq[8] * dq[8]));
    ck_assert_double_lt(sqrt(dq[6] * dq[6] + dq[7] * dq[7] + dq[8] * dq[8]), 0.01);
    fb_ref_destroy(r);
    fb_ref_destroy(r0);
    free(qs);
    fb_model_destroy(m);
}
END_TEST

/* psi fed open-loop to forward dynamics (ABA + the world's semi-implicit Euler, no control)
 * lands on the fitted q at every frame: the feedforward is consistent with the integrator. */
START_TEST(feedforward_open_loop_reproduces_the_fit) {
    fb_model* m = synthetic_model();
    fb_ref* r = synthetic_ref(m, 120.0, 240.0, 2.0, NULL);
    fb_data* d = ck_data(m);
    memcpy(d->q, r->q, 12 * sizeof(double));
    memcpy(d->qd, r->v_step, 10 * sizeof(double));
    fb_error err;
    double worst = 0.0, dq[10];
    /* 0.5 s: a free chain fed open-loop amplifies even rounding errors exponentially */
    for (int i = 0; i + 1 < r->nframe && i < 120; i++) {
        memcpy(d->tau, r->tau + i * 10, 10 * sizeof(double));
        ck_assert_msg(fb_aba(m, d, &err) == FB_OK, "frame %d: %s", i, err.msg);
        fb_velocity_step(m, d->qd, d->qdd, r->dt); /* the simulator's step */
        fb_integrate(m, d->q, d->qd, r->dt, d->q);
        fb_difference(m, d->q, r->q + (size_t)(i + 1) * 12, dq);
        for (int j = 0; j < 10; j++) {
            worst = fmax(worst, fabs(dq[j]));
        }
    }
    printf("synthetic: psi open-loop over 0.5 s: largest coordinate error %.2e\n", worst);
    ck_assert_double_lt(worst, 1e-9);
    fb_data_destroy(d);
    fb_ref_destroy(r);
    fb_model_destroy(m);
}
END_TEST

/* ---- the reference and the ground ---------------------------------------------------------- */

/* A foot on a floating root: the root (body 1) carries a sphere of radius FOOT_R at its origin;
 * a toe (body 2, a hinge about z) sits TOE_DROP below it with a capsule of length TOE_L and
 * radius TOE_R along its x axis, and an End Site marker (body 3: fixed, massless, no shape) at
 * the capsule's end. `root_E` turns the root's joint frame (identity, or a Z-up clip's). */
#define FOOT_R 0.1
#define TOE_DROP 0.05
#define TOE_L 0.06
#define TOE_R 0.02
static fb_model* foot_model(fb_m3 root_E, const fb_joint_limit* toe_limit) {
    fb_error err;
    fb_model* m = fb_model_create(3, NULL, &err);
    ck_assert_ptr_nonnull(m);
    fb_body_def d = fb_default_body_def();
    d.name = "root";
    d.joint = FB_JOINT_FLOATING;
    d.X_tree.E = root_E;
    d.inertia = fb_rbi_sphere(1000.0, FOOT_R, fb_v3_zero());
    ck_assert_int_eq(fb_model_add_body(m, &d, NULL, &err), FB_OK);
    d = fb_default_body_def();
    d.name = "toe";
    d.parent = 1;
    d.joint = FB_JOINT_REVOLUTE;
    d.axis = fb_v3_make(0.0, 0.0, 1.0);
    d.X_tree = fb_xf_xlt(fb_m3_tr_mv(root_E, fb_v3_make(0.0, -TOE_DROP, 0.0)));
    d.X_tree.E = fb_m3_transpose(root_E); /* the toe's axes are the world's */
    d.inertia = fb_rbi_capsule(1000.0, TOE_R, fb_v3_zero(), fb_v3_make(TOE_L, 0.0, 0.0));
    if (toe_limit) {
        d.limit = *toe_limit;
    }
    ck_assert_int_eq(fb_model_add_body(m, &d, NULL, &err), FB_OK);
    d = fb_default_body_def();
    d.name = "toe_End";
    d.parent = 2;
    d.X_tree = fb_xf_xlt(fb_v3_make(TOE_L, 0.0, 0.0));
    ck_assert_int_eq(fb_model_add_body(m, &d, NULL, &err), FB_OK);
    fb_shape sh = ck_shape_sphere(FOOT_R);
    sh.body = 1;
    ck_assert_int_eq(fb_model_add_shape(m, &sh, &err), FB_OK);
    sh = ck_shape_capsule(TOE_R, fb_v3_zero(), fb_v3_make(TOE_L, 0.0, 0.0));
    sh.body = 2;
    ck_assert_int_eq(fb_model_add_shape(m, &sh, &err), FB_OK);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

/* ns samples at 120 Hz of the foot: root at height y(k) (world), upright; toe angle th(k). */
static double* foot_samples(const fb_model* m, int ns, fb_m3 root_E, double (*y)(int),
                            double (*th)(int)) {
    double* qs = malloc((size_t)ns * (size_t)m->nq * sizeof(double));
    for (int k = 0; k < ns; k++) {
        double* q = qs + (size_t)k * (size_t)m->nq;
        fb_q_neutral(m, q);
        /* the root's position coordinates are in its joint frame: E times the world's */
        const fb_v3 p = fb_m3_mv(root_E, fb_v3_make(0.1 * k / 120.0, y(k), 0.0));
        q[0] = p.x, q[1] = p.y, q[2] = p.z;
        fb_quat_store(q + 3, fb_quat_from_m3(fb_m3_transpose(root_E))); /* upright in the world */
        q[m->q_adr[2]] = th(k);
    }
    return qs;
}

/* Interpolating fit (3 samples, degree 2) at the samples' own rate: the reference's frames are
 * the (repaired, placed) samples themselves. */
static fb_ref* foot_ref(const fb_model* m, int ns, const double* qs, bool keep) {
    fb_fit_opts o = fb_default_fit_opts();
    o.half_window = 1;
    o.degree = 2;
    o.keep_glitches = keep;
    fb_error err;
    fb_ref* r = fb_ref_create(m, ns, 1.0 / 120.0, qs, 0.0, &o, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    return r;
}

static double toe_into_floor(int k) {
    return -1.2 + 0.3 * sin(TWO_PI * k / 120.0); /* -86 to -52 deg: tip down */
}
static double foot_steady(int k) {
    (void)k;
    return 0.12; /* the sphere 2 cm clear of the ground, the toe joint 7 cm up */
}

/* A toe pointing into the floor (its capsule down to 1.2 cm below it) is turned up, frame by
 * frame, by exactly the least angle that brings its capsule onto the ground: the toe joint is
 * h = 7 cm up, so the capsule clears when h + L sin(th) = r, th_c = -asin((h - r) / L); the
 * other way round (curling back under, past straight down) would be a larger turn. The root and
 * the toe joint's position are untouched (the capsule then touches the ground, so no placement
 * is needed), and a fit of the samples as given keeps them. */
START_TEST(end_segments_turn_out_of_the_ground) {
    const fb_m3 I = fb_m3_identity();
    fb_model* m = foot_model(I, NULL);
    const int ns = 121;
    double* qs = foot_samples(m, ns, I, foot_steady, toe_into_floor);
    fb_ref* r = foot_ref(m, ns, qs, false);
    fb_ref* r0 = foot_ref(m, ns, qs, true);
    const double h = foot_steady(0) - TOE_DROP; /* the toe joint's height */
    const double th_c = -asin((h - TOE_R) / TOE_L);
    const int qa = m->q_adr[2];
    int turned = 0;
    double worst = 0.0;
    for (int k = 0; k < ns; k++) {
        const double want = fmax(toe_into_floor(k), th_c);
        turned += want > toe_into_floor(k);
        worst = fmax(worst, fabs(r->q[(size_t)k * (size_t)m->nq + (size_t)qa] - want));
        fb_ck_near(r0->q[(size_t)k * (size_t)m->nq + (size_t)qa], toe_into_floor(k), 0.0, 1e-12);
        for (int j = 0; j < 7; j++) { /* the root, untouched */
            fb_ck_near(r->q[(size_t)k * (size_t)m->nq + (size_t)j],
                       qs[(size_t)k * (size_t)m->nq + (size_t)j], 0.0, 1e-12);
        }
    }
    printf("toe into the floor: %d of %d frames turned up to th_c = %.4f rad, largest difference "
           "%.1e rad; %s\n", turned, ns, th_c, worst, r->nwarn > 0 ? r->warn[0] : "no warning");
    ck_assert_int_gt(turned, 30);
    ck_assert_double_lt(worst, 1e-9);
    ck_assert_int_eq(r->nwarn, 1);
    ck_assert_ptr_nonnull(strstr(r->warn[0], "toe: turned out of the ground in"));
    ck_assert_int_eq(r0->nwarn, 0);
    fb_ref_destroy(r);
    fb_ref_destroy(r0);
    free(qs);
    fb_model_destroy(m);
}
END_TEST

static double toe_far_down(int k) {
    (void)k;
    return -80.0 * FB_PI / 180.0;
}
static double foot_rising(int k) {
    return 0.108 + 0.018 * k / 120.0; /* the toe joint from 5.8 to 7.6 cm up */
}

/* A toe whose range stops short of clearing the floor in some frames: the toe (at -80 deg, in
 * the floor) turns up, the way that clears more frames within its range [-100, -55] deg
 * (curling under would need -110 deg or less), to th_c = -asin((h - r) / L) where th_c <= -55
 * deg, and to its stop, -55 deg, where clearing needs more (h low): no sample leaves the
 * range. */
START_TEST(end_segments_turn_within_their_range) {
    const fb_m3 I = fb_m3_identity();
    const fb_joint_limit lim = {.on = true, .lo = -100.0 * FB_PI / 180.0,
                                .hi = -55.0 * FB_PI / 180.0};
    fb_model* m = foot_model(I, &lim);
    const int ns = 121;
    double* qs = foot_samples(m, ns, I, foot_rising, toe_far_down);
    fb_ref* r = foot_ref(m, ns, qs, false);
    const int qa = m->q_adr[2];
    int at_stop = 0, cleared = 0;
    double worst = 0.0;
    for (int k = 0; k < ns; k++) {
        const double h = foot_rising(k) - TOE_DROP;
        const double want = fmin(-asin((h - TOE_R) / TOE_L), lim.hi);
        at_stop += want == lim.hi;
        cleared += want < lim.hi;
        worst = fmax(worst, fabs(r->q[(size_t)k * (size_t)m->nq + (size_t)qa] - want));
    }
    printf("toe with a range: %d frames turned to the floor, %d to the stop; largest difference "
           "%.1e rad; %s\n",
           cleared, at_stop, worst, r->nwarn > 0 ? r->warn[0] : "no warning");
    ck_assert_int_gt(at_stop, 20);
    ck_assert_int_gt(cleared, 20);
    ck_assert_double_lt(worst, 1e-9);
    fb_ref_destroy(r);
    free(qs);
    fb_model_destroy(m);
}
END_TEST

static double foot_sinks(int k) {
    return FOOT_R + 0.03 + 0.05 * sin(TWO_PI * k / 120.0); /* lowest at k = 90: 2 cm under */
}
static double foot_floats(int k) {
    return FOOT_R + 0.10 + 0.05 * sin(TWO_PI * k / 120.0); /* lowest at k = 90: 5 cm over */
}
static double toe_level(int k) {
    (void)k;
    return 0.0;
}

/* The clip's floor: the reference is shifted along the world's vertical, by one amount for the
 * whole clip, so that the lowest point of the shapes over all frames is on the ground - 2 cm up
 * for a clip whose foot sinks 2 cm into it, 5 cm down for one that floats 5 cm above it -
 * whether the root's joint frame is the world's or turned (a Z-up clip's). Checked on the
 * world positions the kinematics gives; the shift is a translation (x, z and every rotation
 * kept). A fit of the samples as given places nothing. */
START_TEST(the_clip_is_placed_on_the_ground) {
    const struct {
        double (*y)(int);
        double shift;
        const char* say;
    } cases[] = {{foot_sinks, 0.02, "placed 2.00 cm higher"},
                 {foot_floats, -0.05, "placed 5.00 cm lower"}};
    const fb_m3 frames[2] = {fb_m3_identity(), fb_quat_to_m3(fb_quat_from_axis_angle(
                                                   fb_v3_make(1.0, 0.0, 0.0), -0.5 * FB_PI))};
    for (int c = 0; c < 2; c++) {
        for (int f = 0; f < 2; f++) {
            fb_model* m = foot_model(frames[f], NULL);
            const int ns = 121;
            double* qs = foot_samples(m, ns, frames[f], cases[c].y, toe_level);
            fb_ref* r = foot_ref(m, ns, qs, false);
            fb_ref* r0 = foot_ref(m, ns, qs, true);
            fb_data* d = ck_data(m);
            fb_data* d0 = ck_data(m);
            double low = INFINITY;
            for (int k = 0; k < ns; k++) {
                memcpy(d->q, r->q + (size_t)k * (size_t)m->nq, (size_t)m->nq * sizeof(double));
                memcpy(d0->q, qs + (size_t)k * (size_t)m->nq, (size_t)m->nq * sizeof(double));
                fb_kinematics_pos(m, d);
                fb_kinematics_pos(m, d0);
                for (int b = 1; b < m->nbody; b++) {
                    const fb_v3 p = fb_point_pos(m, d, b, fb_v3_zero());
                    const fb_v3 p0 = fb_point_pos(m, d0, b, fb_v3_zero());
                    fb_ck_near(p.x, p0.x, 0.0, 1e-12);
                    fb_ck_near(p.y, p0.y + cases[c].shift, 0.0, 1e-12);
                    fb_ck_near(p.z, p0.z, 0.0, 1e-12);
                }
                low = fmin(low, fb_point_pos(m, d, 1, fb_v3_zero()).y - FOOT_R);
                fb_ck_near(r0->q[(size_t)k * (size_t)m->nq + 1],
                           qs[(size_t)k * (size_t)m->nq + 1], 0.0, 1e-12);
            }
            fb_ck_near(low, 0.0, 0.0, 1e-12);
            ck_assert_int_eq(r->nwarn, 1);
            ck_assert_msg(strstr(r->warn[0], cases[c].say), "%s", r->warn[0]);
            if (c == 0 && f == 1) {
                printf("placement: %s (root frame turned as a Z-up clip's)\n", r->warn[0]);
            }
            fb_data_destroy(d);
            fb_data_destroy(d0);
            fb_ref_destroy(r);
            fb_ref_destroy(r0);
            free(qs);
            fb_model_destroy(m);
        }
    }
}
END_TEST

/* ---- the bundled clip ----------------------------------------------------------------- */

typedef struct clip_case {
    fb_clip* clip;
    fb_character* ch;
} clip_case;

static clip_case load_clip(const char* path) {
    clip_case c;
    ck_load_character(path, FB_DATA_DIR "/character_rules.json", &c.clip, &c.ch);
    return c;
}

static void free_clip(clip_case* c) {
    fb_character_destroy(c->ch);
    fb_clip_destroy(c->clip);
}

/* Whole clips in the release build; excerpts of them under AddressSanitizer (GCC defines
 * __SANITIZE_ADDRESS__, clang answers __has_feature), which runs the tracker ~20x slower and
 * would take the CI past its budget. */
#if defined(__SANITIZE_ADDRESS__)
#define WHOLE_CLIPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WHOLE_CLIPS 0
#endif
#endif
#ifndef WHOLE_CLIPS
#define WHOLE_CLIPS 1
#endif

typedef struct track_result {
    double mpjpe_mean, mpjpe_max, root_dy_max, duration;
    double worst_time;     /* s: when MPJPE peaked */
    double ref_depth;      /* m: the deepest the reference's shapes went into the ground */
    int steps;
    bool finite;       /* every coordinate finite at every step */
    fb_assist_totals assist;
    fb_status status;
    char msg[FB_ERROR_MSG_MAX];
} track_result;

/* Tracks clip frames first..last at `rate` with the gains of `gains init`, the given controller
 * and root mode; ground on. psi_only > 0: no feedback gains, no ground, for psi_only s. */
static track_result track(const clip_case* c, int first, int last, double rate,
                          fb_controller ctrl, fb_root_mode root, double psi_only) {
    fb_error err;
    fb_ref* r = fb_ref_from_clip(c->clip, c->ch, rate, first, last, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    fb_gains g;
    ck_assert_msg(fb_gains_init(c->ch->model, r, &g, &err) == FB_OK, "%s", err.msg);
    g.controller = ctrl;
    g.root.mode = root;
    if (psi_only > 0.0) { /* open loop: no feedback at all */
        g.pd_form = FB_PD_PLAIN;
        for (int k = 0; k < g.nrule; k++) {
            g.rule[k].g.kp = g.rule[k].g.kv = 0.0;
        }
    }
    fb_world_opts wo = fb_default_world_opts();
    wo.dt = 1.0 / rate;
    wo.ground = psi_only == 0.0; /* the open-loop check is of the dynamics alone */
    const fb_model* m = c->ch->model;
    fb_world* w = fb_world_create(1, &m, &wo, NULL, &err);
    ck_assert_msg(w != NULL, "%s", err.msg);
    fb_tracker* tr = fb_tracker_create(w, 0, r, &g, c->ch->joint_of_body, &err);
    ck_assert_msg(tr != NULL, "%s", err.msg);
    /* a root that is not carried is driven toward the clip with its feet on the ground, as
     * `simulate` does (docs/CONTROL.md) */
    fb_ref* grounded = NULL;
    if (root != FB_ROOT_KINEMATIC) {
        grounded = fb_ref_grounded(m, r, NULL, &err);
        ck_assert_msg(grounded != NULL, "%s", err.msg);
        ck_assert_int_eq(fb_tracker_set_control(tr, grounded, &err), FB_OK);
    }
    track_result res = {.finite = true};
    const double until = psi_only > 0.0 ? psi_only : 1e9;
    const fb_data* d = fb_world_data(w, 0);
    /* the reference pose and its contacts with the ground */
    fb_data* dclip = ck_data(m);
    double* tmp = malloc((size_t)m->nv * sizeof(double));
    fb_contact con[256];
    while (!fb_tracker_done(tr) && fb_tracker_time(tr) < until - 1e-9) {
        res.status = fb_world_step(w, &err);
        if (res.status != FB_OK) {
            snprintf(res.msg, sizeof res.msg, "%s", err.msg);
            break;
        }
        for (int j = 0; j < m->nq; j++) {
            res.finite = res.finite && isfinite(d->q[j]);
        }
        fb_track_metrics mt;
        fb_tracker_measure(tr, &mt, NULL);
        res.mpjpe_mean += mt.mpjpe;
        const double e = psi_only > 0.0 ? mt.max_joint_err : mt.mpjpe;
        if (e > res.mpjpe_max) {
            res.mpjpe_max = e;
            res.worst_time = mt.time;
        }
        fb_ref_at(m, r, mt.time, dclip->q, NULL, NULL, NULL, tmp);
        fb_kinematics_pos(m, dclip);
        int ncon = 0;
        double depth = 0.0;
        ck_assert_int_eq(fb_collide_plane(m, dclip, 0, fb_ground_plane(), 0.0, con, &ncon, 256,
                                          &err), FB_OK);
        for (int k = 0; k < ncon; k++) {
            depth = fmax(depth, con[k].depth);
        }
        res.ref_depth = fmax(res.ref_depth, depth);
        const int f = (int)round(mt.time / r->dt);
        /* the root's height against the reference it is driven toward (the grounded one
         * lowers the clip's root to put the feet on the ground) */
        const fb_ref* rc = grounded ? grounded : r;
        res.root_dy_max = fmax(res.root_dy_max,
                               fabs(d->q[1] - rc->q[(size_t)f * (size_t)rc->nq + 1]));
        res.steps++;
    }
    res.mpjpe_mean /= res.steps > 0 ? res.steps : 1;
    res.duration = fb_tracker_time(tr);
    free(tmp);
    fb_data_destroy(dclip);
    res.assist = fb_tracker_totals(tr);
    fb_tracker_destroy(tr);
    fb_world_destroy(w);
    fb_ref_destroy(grounded);
    fb_ref_destroy(r);
    return res;
}

/* The clip's feedforward torques alone (no feedback; root kinematic; no ground, so only the
 * dynamics are checked) reproduce the first 0.5 s of the walk with every joint within 1 cm.
 * Frames 100+ of 131_01: its first frames jitter. */
START_TEST(open_loop_feedforward_tracks_the_walk) {
    clip_case c = load_clip(FB_DATA_DIR "/131_01.bvh");
    const track_result r = track(&c, 100, 200, 240.0, FB_CTRL_PD, FB_ROOT_KINEMATIC, 0.5);
    printf("131_01 frames 100+, psi open-loop, kinematic root, 240 Hz, 0.5 s: worst joint "
           "%.4f cm\n", 100.0 * r.mpjpe_max);
    ck_assert_msg(r.status == FB_OK, "%s", r.msg);
    ck_assert_double_lt(r.mpjpe_max, 0.01);
    free_clip(&c);
}
END_TEST

/* The acceptance on clip frames first..last (last 0 = the end; the whole clip in the
 * release build): kinematic root with accel at 240 Hz, MPJPE < 1 cm at every frame; with pd
 * and the gains of `gains init` at 480 Hz, mean < 3 cm and max < 6 cm (and, stable PD, at
 * 240 Hz too); accel at 120 Hz without NaN or blow-up; assisted root with accel at 240 Hz,
 * root height within 10 cm of the clip's at every frame, with the help it took printed. */
static void check_acceptance(const clip_case* c, const char* name, int first, int last) {
    const struct {
        double rate;
        fb_controller ctrl;
        fb_root_mode root;
    } runs[] = {{240.0, FB_CTRL_ACCEL, FB_ROOT_KINEMATIC}, {480.0, FB_CTRL_PD, FB_ROOT_KINEMATIC},
                {240.0, FB_CTRL_PD, FB_ROOT_KINEMATIC},   {120.0, FB_CTRL_ACCEL, FB_ROOT_KINEMATIC},
                {240.0, FB_CTRL_ACCEL, FB_ROOT_ASSISTED}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        const track_result t = track(c, first, last, runs[k].rate, runs[k].ctrl, runs[k].root,
                                     0.0);
        printf("%s frames %d-%d (%.2f s), %s, %s root, %.0f Hz: MPJPE mean %.3f cm, max %.3f cm "
               "(t = %.3f s)", name, first, last, t.duration, fb_controller_name(runs[k].ctrl),
               fb_root_mode_name(runs[k].root), runs[k].rate, 100.0 * t.mpjpe_mean,
               100.0 * t.mpjpe_max, t.worst_time);
        printf("; reference in the ground by at most %.1e m", t.ref_depth);
        if (runs[k].root == FB_ROOT_ASSISTED) {
            const double T = t.duration > 0.0 ? t.duration : 1.0;
            printf("; root height off by at most %.2f cm; help: force %.0f N mean, %.0f N peak, "
                   "torque %.0f N m mean, %.0f N m peak", 100.0 * t.root_dy_max,
                   t.assist.force_impulse / T, t.assist.peak_force, t.assist.torque_impulse / T,
                   t.assist.peak_torque);
        }
        printf("\n");
        ck_assert_msg(t.status == FB_OK, "%s", t.msg);
        ck_assert(t.finite);
        /* the clip is placed on the ground (its lowest shape point on it), the toes turned
         * out of it: no frame of the reference is inside the ground */
        ck_assert_double_lt(t.ref_depth, 1e-9);
        if (runs[k].root == FB_ROOT_ASSISTED) {
            ck_assert_double_lt(t.root_dy_max, 0.10);
        } else if (runs[k].ctrl == FB_CTRL_ACCEL) {
            ck_assert_double_lt(t.mpjpe_max, 0.01); /* at every frame */
        } else {
            ck_assert_double_lt(t.mpjpe_mean, 0.03);
            ck_assert_double_lt(t.mpjpe_max, 0.06);
        }
    }
}

/* The bundled walk (131_01): whole, or frames 100-280 under the sanitizer. */
START_TEST(acceptance_on_the_walk) {
    clip_case c = load_clip(FB_DATA_DIR "/131_01.bvh");
    check_acceptance(&c, "131_01", WHOLE_CLIPS ? 0 : 100, WHOLE_CLIPS ? 0 : 280);
    free_clip(&c);
}
END_TEST

/* A second clip from ../shared (skipped when it is not there): the hopping 131_03, whole or
 * frames 500-680 under the sanitizer. */
START_TEST(acceptance_on_a_second_clip) {
    const char* path = FB_SHARED_MOCAP_DIR "/131_03.bvh";
    FILE* f = fopen(path, "rb");
    if (!f) {
        printf("%s not present: second-clip tracking skipped\n", path);
        return;
    }
    fclose(f);
    clip_case c = load_clip(path);
    check_acceptance(&c, "131_03", WHOLE_CLIPS ? 0 : 500, WHOLE_CLIPS ? 0 : 680);
    free_clip(&c);
}
END_TEST

/* The largest angular acceleration (rad/s^2, the a_step the feedforward uses) of body b's
 * ball joint in the first `secs` s. */
static double start_acceleration(const fb_model* m, const fb_ref* r, int b, double secs) {
    double peak = 0.0;
    for (int i = 0; i < r->nframe && i * r->dt < secs; i++) {
        const double* a = r->a_step + (size_t)i * (size_t)m->nv + (size_t)m->v_adr[b];
        peak = fmax(peak, sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]));
    }
    return peak;
}

/* The glitches of the bundled walk are found and repaired before the fit. Read off the raw
 * clip: its left hip jitters by about a degree over frames 0-3 and jumps 2 degrees out and
 * back at frames 685-686. The walk starts from standing, so in its first 0.1 s the hip's
 * angular acceleration is that of a gentle start (well under 100 rad/s^2); fitted as
 * captured, the jitter made it several hundred. */
START_TEST(walk_glitches_are_repaired) {
    clip_case c = load_clip(FB_DATA_DIR "/131_01.bvh");
    fb_error err;
    fb_ref* r = fb_ref_from_clip(c.clip, c.ch, 240.0, 0, 0, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    fb_fit_opts keep = fb_default_fit_opts();
    keep.keep_glitches = true;
    fb_ref* r0 = fb_ref_from_clip(c.clip, c.ch, 240.0, 0, 0, &keep, &err);
    ck_assert_msg(r0 != NULL, "%s", err.msg);
    const char* hip = NULL;
    int njoint = 0;
    for (int k = 0; k < r->nwarn && k < FB_CLIP_MAX_WARN; k++) {
        njoint += strstr(r->warn[k], "capture glitch") != NULL;
    }
    printf("131_01: %d samples repaired in %d joints\n", r->nrepaired, njoint);
    for (int k = 0; k < r->nwarn && k < FB_CLIP_MAX_WARN; k++) {
        printf("  %s\n", r->warn[k]);
        hip = strncmp(r->warn[k], "LeftHip:", 8) == 0 ? r->warn[k] : hip;
    }
    ck_assert_int_eq(r0->nrepaired, 0);
    ck_assert_msg(hip && strstr(hip, "(0-2,") && strstr(hip, "685-686"), "%s", hip);
    const int b = fb_model_body_by_name(c.ch->model, "LeftHip");
    ck_assert_int_ge(r->repaired[b], 4);
    const double a_rep = start_acceleration(c.ch->model, r, b, 0.1);
    const double a_raw = start_acceleration(c.ch->model, r0, b, 0.1);
    printf("131_01, first 0.1 s: left hip angular acceleration up to %.0f rad/s^2 repaired, %.0f "
           "as captured\n", a_rep, a_raw);
    ck_assert_double_lt(a_rep, 100.0);
    ck_assert_double_gt(a_raw, 100.0);
    fb_ref_destroy(r);
    fb_ref_destroy(r0);
    free_clip(&c);
}
END_TEST

/* Absurd gains (an accel controller asked to settle in 0.1 ms with no torque limit) blow the
 * simulation up; the step reports it with the time and the joint instead of going on. */
START_TEST(absurd_gains_blow_up_is_reported) {
    clip_case c = load_clip(FB_DATA_DIR "/131_01.bvh");
    fb_error err;
    fb_ref* r = fb_ref_from_clip(c.clip, c.ch, 240.0, 100, 220, NULL, &err);
    ck_assert_ptr_nonnull(r);
    fb_gains g = fb_default_gains();
    g.defaults.settle_time = 1e-4;
    g.defaults.torque_limit = 0.0;
    fb_world_opts wo = fb_default_world_opts();
    wo.dt = 1.0 / 240.0;
    const fb_model* m = c.ch->model;
    fb_world* w = fb_world_create(1, &m, &wo, NULL, &err);
    fb_tracker* tr = fb_tracker_create(w, 0, r, &g, c.ch->joint_of_body, &err);
    ck_assert_msg(tr != NULL, "%s", err.msg);
    /* a push off the clip for the controller to correct */
    fb_world_data(w, 0)->qd[20] += 1.0;
    fb_status s = FB_OK;
    for (int k = 0; k < 240 && s == FB_OK; k++) {
        s = fb_world_step(w, &err);
    }
    printf("absurd gains: %s\n", err.msg);
    ck_assert_int_eq(s, FB_ENUMERIC);
    ck_assert_msg(strstr(err.msg, "t = ") && strstr(err.msg, "joint '"), "%s", err.msg);
    for (int j = 0; j < m->nq; j++) {
        ck_assert(isfinite(fb_world_data(w, 0)->q[j]));
    }
    fb_tracker_destroy(tr);
    fb_world_destroy(w);
    fb_ref_destroy(r);
    free_clip(&c);
}
END_TEST

/* ---- gains ---------------------------------------------------------------------------- */

/* The settle-time gains do what they say: e'' + Kd e' + Kp e = 0 from e = 1 at rest is at 10%
 * at t_s (within the integrator's error) and below it after, for several damping ratios; the
 * paper's Kp = 1/t_s^2, Kd = sqrt(2)/t_s is still at about 50% at t_s. Integrated by RK4 at
 * 1e-4 s, independently of the closed forms the gains come from. */
static double settle_error(double kp, double kd, double ts, double* after_max) {
    double e = 1.0, v = 0.0, at_ts = 1.0;
    const double h = 1e-4;
    *after_max = 0.0;
    for (int k = 0; k < (int)(4.0 * ts / h); k++) {
        const double t = k * h;
        if (fabs(t - ts) < 0.5 * h) {
            at_ts = fabs(e);
        }
        if (t > ts + 0.5 * h) {
            *after_max = fmax(*after_max, fabs(e));
        }
        const double k1e = v, k1v = -kd * v - kp * e;
        const double k2e = v + 0.5 * h * k1v, k2v = -kd * k2e - kp * (e + 0.5 * h * k1e);
        const double k3e = v + 0.5 * h * k2v, k3v = -kd * k3e - kp * (e + 0.5 * h * k2e);
        const double k4e = v + h * k3v, k4v = -kd * k4e - kp * (e + h * k3e);
        e += h / 6.0 * (k1e + 2 * k2e + 2 * k3e + k4e);
        v += h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v);
    }
    return at_ts;
}

/* What a tracker reports before its first substep is defined: no torque has acted (zero), and
 * after a step the torques are finite. Frame 0 of the simulation reports read them: they were
 * uninitialised heap (valgrind; the asan build cannot see it). Destroyed, it leaves the world
 * without its hook and the character not driven (the world's hook pointed at freed memory). */
START_TEST(a_new_tracker_reports_zero_torques) {
    fb_model* m = synthetic_model();
    const fb_fit_opts o = fb_default_fit_opts();
    fb_ref* r = synthetic_ref(m, 120.0, 240.0, 0.5, &o);
    fb_world_opts wo = fb_default_world_opts();
    wo.dt = 1.0 / 240.0;
    wo.ground = false;
    fb_error err;
    const fb_model* ms[1] = {m};
    fb_world* w = fb_world_create(1, ms, &wo, NULL, &err);
    ck_assert_msg(w != NULL, "%s", err.msg);
    for (int c = 0; c < 2; c++) {
        fb_gains g = fb_default_gains();
        g.controller = c == 0 ? FB_CTRL_ACCEL : FB_CTRL_PD;
        fb_tracker* tr = fb_tracker_create(w, 0, r, &g, NULL, &err);
        ck_assert_msg(tr != NULL, "%s", err.msg);
        fb_track_metrics mt;
        fb_tracker_measure(tr, &mt, NULL);
        const double* tau = fb_tracker_torques(tr);
        for (int j = 0; j < m->nv; j++) {
            ck_assert_msg(tau[j] == 0.0, "%s: dof %d: %g before any step",
                          fb_controller_name(g.controller), j, tau[j]);
        }
        ck_assert_int_eq(mt.limits_bound, 0);
        ck_assert_int_eq(fb_world_step(w, &err), FB_OK);
        fb_tracker_measure(tr, &mt, NULL);
        for (int j = 0; j < m->nv; j++) {
            ck_assert(isfinite(fb_tracker_torques(tr)[j]));
        }
        ck_assert(fb_world_hook_user(w) == tr && fb_world_driven(w, 0));
        fb_tracker_destroy(tr);
        /* the world steps on without it: no hook (it pointed at the freed tracker), the
         * character no longer driven */
        ck_assert(fb_world_hook_user(w) == NULL && !fb_world_driven(w, 0));
        ck_assert_int_eq(fb_world_step(w, &err), FB_OK);
    }
    fb_world_destroy(w);
    fb_ref_destroy(r);
    fb_model_destroy(m);
}
END_TEST

START_TEST(settle_time_gains_reach_ten_percent) {
    const double ts = 0.2;
    /* 0.1 and 0.3: many swings, the last crossing found near the envelope's bound */
    const double zetas[] = {0.1, 0.3, 0.5, 0.7071, 1.0, 1.5};
    for (int k = 0; k < 6; k++) {
        double kp, kd, after;
        fb_gains_from_settle(ts, zetas[k], &kp, &kd);
        const double e = settle_error(kp, kd, ts, &after);
        printf("zeta %.3f: Kp %.1f Kd %.2f, |e(t_s)| %.4f, largest after %.4f\n", zetas[k], kp,
               kd, e, after);
        ck_assert_double_lt(fabs(e - 0.1), 1e-3);
        ck_assert_double_le(after, 0.1 + 1e-6);
    }
    double after;
    const double paper = settle_error(1.0 / (ts * ts), sqrt(2.0) / ts, ts, &after);
    printf("Kokkevis' Kp = 1/t_s^2, Kd = sqrt(2)/t_s: |e(t_s)| %.3f\n", paper);
    ck_assert_double_gt(paper, 0.3);
}
END_TEST

/* A gains file that fails must say where and why. */
static void expect_gains_error(const char* text, const char* needle) {
    char path[] = "/tmp/fb_gains_test_XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_write_text(path, text);
    fb_gains g;
    fb_error err;
    ck_assert_int_eq(fb_gains_load(path, &g, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
    remove(path);
}

/* One table of names per choice: each enum value's name is found at that value, spelled as
 * the docs and the gains files spell it; other words and NULL are none. */
START_TEST(choice_names_index_their_enums) {
    ck_assert_int_eq(fb_choice_index(fb_controller_names, FB_NCONTROLLER, "pd"), FB_CTRL_PD);
    ck_assert_int_eq(fb_choice_index(fb_controller_names, FB_NCONTROLLER, "accel"), FB_CTRL_ACCEL);
    ck_assert_int_eq(fb_choice_index(fb_pd_form_names, FB_NPD_FORM, "cline"), FB_PD_CLINE);
    ck_assert_int_eq(fb_choice_index(fb_pd_form_names, FB_NPD_FORM, "plain"), FB_PD_PLAIN);
    const char* roots[] = {"kinematic", "assisted", "free"};
    const fb_root_mode modes[] = {FB_ROOT_KINEMATIC, FB_ROOT_ASSISTED, FB_ROOT_FREE};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(fb_choice_index(fb_root_mode_names, FB_NROOT_MODE, roots[k]), modes[k]);
        ck_assert_str_eq(fb_root_mode_name(modes[k]), roots[k]);
    }
    ck_assert_int_eq(fb_choice_index(fb_root_anchor_names, FB_NROOT_ANCHOR, "path"),
                     FB_ANCHOR_PATH);
    ck_assert_int_eq(fb_choice_index(fb_root_anchor_names, FB_NROOT_ANCHOR, "feet"),
                     FB_ANCHOR_FEET);
    ck_assert_str_eq(fb_root_anchor_name(FB_ANCHOR_FEET), "feet");
    ck_assert_str_eq(fb_controller_name(FB_CTRL_PD), "pd");
    ck_assert_str_eq(fb_pd_form_name(FB_PD_PLAIN), "plain");
    ck_assert_int_eq(fb_choice_index(fb_root_mode_names, FB_NROOT_MODE, "Free"), -1);
    ck_assert_int_eq(fb_choice_index(fb_root_mode_names, FB_NROOT_MODE, "hips"), -1);
    ck_assert_int_eq(fb_choice_index(fb_root_mode_names, FB_NROOT_MODE, NULL), -1);
}
END_TEST

START_TEST(gains_file_round_trip_and_errors) {
    clip_case c = load_clip(FB_DATA_DIR "/131_01.bvh");
    fb_error err;
    fb_ref* r = fb_ref_from_clip(c.clip, c.ch, 240.0, 0, 120, NULL, &err);
    ck_assert_ptr_nonnull(r);
    fb_gains g, back;
    ck_assert_int_eq(fb_gains_init(c.ch->model, r, &g, &err), FB_OK);
    ck_assert_int_gt(g.nrule, 10);
    char path[] = "/tmp/fb_gains_test_XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    g.root.anchor = FB_ANCHOR_FEET; /* not the default: read back, not defaulted */
    ck_assert_int_eq(fb_gains_save(&g, path, &err), FB_OK);
    ck_assert_msg(fb_gains_load(path, &back, &err) == FB_OK, "%s", err.msg);
    ck_assert_int_eq(back.nrule, g.nrule);
    ck_assert_int_eq(back.root.anchor, FB_ANCHOR_FEET);
    /* every number back as the same double: a run with the file is the run with the gains it
     * was written from, bit for bit (cJSON's own printing gave some back an ulp off) */
    ck_assert(back.rate == g.rate && back.root.settle_time == g.root.settle_time &&
              back.root.damping_ratio == g.root.damping_ratio &&
              back.root.max_force == g.root.max_force && back.root.max_torque == g.root.max_torque);
    int ulp_off = 0;
    for (int k = 0; k <= g.nrule; k++) {
        const fb_joint_gains* a = k < g.nrule ? &g.rule[k].g : &g.defaults;
        const fb_joint_gains* b = k < g.nrule ? &back.rule[k].g : &back.defaults;
        if (k < g.nrule) {
            ck_assert_str_eq(back.rule[k].pattern, g.rule[k].pattern);
            ck_assert_uint_eq(back.rule[k].set, g.rule[k].set);
        }
        const unsigned set = k < g.nrule ? g.rule[k].set : FB_GAIN_ALL;
        const double va[] = {a->ks,          a->kd, a->kp, a->kv, a->settle_time, a->damping_ratio,
                             a->torque_limit};
        const double vb[] = {b->ks,          b->kd, b->kp, b->kv, b->settle_time, b->damping_ratio,
                             b->torque_limit};
        for (int f = 0; f < 7; f++) {
            ulp_off += (set & (1u << f)) && va[f] != vb[f];
        }
    }
    ck_assert_msg(ulp_off == 0, "%d gains read back other than written", ulp_off);
    /* globs and exact names resolve; an unknown name lists the close ones */
    fb_joint_gains* jg = malloc((size_t)c.ch->model->nbody * sizeof *jg);
    back.nrule = 1;
    snprintf(back.rule[0].pattern, sizeof back.rule[0].pattern, "Left*");
    back.rule[0].set = FB_GAIN_LIMIT;
    back.rule[0].g.torque_limit = 42.0;
    ck_assert_int_eq(fb_gains_resolve(&back, c.ch->model, jg, &err), FB_OK);
    ck_assert_double_eq(jg[fb_model_body_by_name(c.ch->model, "LeftElbow")].torque_limit, 42.0);
    ck_assert_double_eq(jg[fb_model_body_by_name(c.ch->model, "RightElbow")].torque_limit,
                        back.defaults.torque_limit);
    snprintf(back.rule[0].pattern, sizeof back.rule[0].pattern, "LeftElbw");
    ck_assert_int_eq(fb_gains_resolve(&back, c.ch->model, jg, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "LeftElbow") != NULL, "%s", err.msg);
    free(jg);
    remove(path);
    fb_ref_destroy(r);
    free_clip(&c);

    const char* head = "{\"format\": \"featherbone-gains\", \"version\": 1, \"rate\": 240, "
                       "\"controller\": \"accel\", \"pd_form\": \"cline\", \"root\": {\"mode\": "
                       "\"kinematic\", \"settle_time\": 0.05, \"damping_ratio\": 1, "
                       "\"max_force\": 400, \"max_torque\": 200}, ";
    char buf[2048];
    snprintf(buf, sizeof buf, "%s\"defaults\": {\"ks\": 1, \"kd\": 1, \"kp\": 1, \"kv\": 1, "
             "\"settle_time\": 0.1, \"damping_ratio\": 1, \"torque_limit\": 0}, \"joints\": {}}",
             head);
    /* the valid file loads; without root.anchor (files before it) the path's */
    {
        char p2[] = "/tmp/fb_gains_test_XXXXXX";
        const int f2 = mkstemp(p2);
        close(f2);
        ck_write_text(p2, buf);
        g.root.anchor = FB_ANCHOR_FEET;
        ck_assert_msg(fb_gains_load(p2, &g, &err) == FB_OK, "%s", err.msg);
        ck_assert_int_eq(g.root.anchor, FB_ANCHOR_PATH);
        remove(p2);
    }
    {
        char bad[2048];
        snprintf(bad, sizeof bad, "%s", buf);
        char* at = strstr(bad, "\"max_torque\": 200}");
        ck_assert_ptr_nonnull(at);
        snprintf(at, sizeof bad - (size_t)(at - bad),
                 "\"max_torque\": 200, \"anchor\": \"hips\"}%s",
                 strstr(buf, "\"max_torque\": 200}") + strlen("\"max_torque\": 200}"));
        expect_gains_error(bad, "root.anchor: expected one of");
    }
    snprintf(buf, sizeof buf, "%s\"defaults\": {\"ks\": 1, \"kd\": 1, \"kp\": -1, \"kv\": 1, "
             "\"settle_time\": 0.1, \"damping_ratio\": 1, \"torque_limit\": 0}, \"joints\": {}}",
             head);
    expect_gains_error(buf, "defaults.kp: expected a value >= 0");
    snprintf(buf, sizeof buf, "%s\"defaults\": {\"ks\": 1, \"kd\": 1, \"kp\": 1, \"kv\": 1, "
             "\"settle_time\": 0.1, \"damping_ratio\": 1}, \"joints\": {}}", head);
    expect_gains_error(buf, "defaults.torque_limit: missing");
    snprintf(buf, sizeof buf, "%s\"defaults\": {\"ks\": 1, \"kd\": 1, \"kp\": 1, \"kv\": 1, "
             "\"settle_time\": 0.1, \"damping_ratio\": 1, \"torque_limit\": 0}, \"joints\": "
             "{\"LeftElbow\": {\"setle_time\": 0.2}}}", head);
    expect_gains_error(buf, "settle_time");
    snprintf(buf, sizeof buf, "%s\"defaults\": {\"ks\": \"high\", \"kd\": 1, \"kp\": 1, \"kv\": 1,"
             " \"settle_time\": 0.1, \"damping_ratio\": 1, \"torque_limit\": 0}, \"joints\": {}}",
             head);
    expect_gains_error(buf, "defaults.ks: expected a number");
    expect_gains_error("{\"format\": \"featherbone-gains\", \"version\": 1}", "missing");
    expect_gains_error("{\"format\": \"featherbone-gains\",\n \"version\": 1,,}", ":2:");
    snprintf(buf, sizeof buf, "%s", head);
    buf[strlen(buf) - 2] = '}';
    buf[strlen(buf) - 1] = '\0';
    expect_gains_error(buf, "defaults: missing");
}
END_TEST

static Suite* control_suite(void) {
    Suite* s = suite_create("control");
    TCase* tc = tcase_create("fit");
    tcase_add_test(tc, so3_jacobian_matches_finite_differences);
    tcase_add_test(tc, fit_matches_analytic_derivatives);
    tcase_add_test(tc, nearest_frame_of_a_time);
    tcase_add_test(tc, feedforward_open_loop_reproduces_the_fit);
    tcase_add_test(tc, glitch_repair_leaves_fast_motion_alone);
    tcase_add_test(tc, glitch_repair_removes_spikes);
    tcase_add_test(tc, end_segments_turn_out_of_the_ground);
    tcase_add_test(tc, end_segments_turn_within_their_range);
    tcase_add_test(tc, the_clip_is_placed_on_the_ground);
    suite_add_tcase(s, tc);
    TCase* tg = tcase_create("gains");
    tcase_add_test(tg, settle_time_gains_reach_ten_percent);
    tcase_add_test(tg, a_new_tracker_reports_zero_torques);
    tcase_add_test(tg, choice_names_index_their_enums);
    tcase_add_test(tg, gains_file_round_trip_and_errors);
    suite_add_tcase(s, tg);
    TCase* tt = tcase_create("tracking");
    tcase_set_timeout(tt, 600);
    tcase_add_test(tt, open_loop_feedforward_tracks_the_walk);
    tcase_add_test(tt, walk_glitches_are_repaired);
    tcase_add_test(tt, acceptance_on_the_walk);
    tcase_add_test(tt, acceptance_on_a_second_clip);
    tcase_add_test(tt, absurd_gains_blow_up_is_reported);
    suite_add_tcase(s, tt);
    return s;
}

int main(void) {
    return ck_run_suite(control_suite());
}
