/* The time step with contacts, impacts and joint limits, against physical expectations:
 *   a box at rest on the ground stays put (four contacts, no drift, no penetration);
 *   a box on a slope sticks when tan(theta) < mu and otherwise slides at g (sin - mu cos);
 *   a ball dropped from 1 m with restitution e bounces to e^2 m;
 *   a ragdoll (the bundled clip's character, no control) comes to rest on the ground;
 *   pendulum chains (hinges, ball joints with swing cones) never pass their limits by 0.5 deg;
 *   a ball hitting a free chain in zero gravity: the impulses conserve linear and angular
 *   momentum; with e = 1, mu = 0 kinetic energy; with e = 0 the normal velocity ends at zero;
 *   self-collision: an arm falls onto a post of its own articulation and rests where geometry
 *   and the balance of moments say, and a free chain folding into itself keeps its momentum;
 *   with the pair off (the default) both pass through;
 *   what a step reports it applied: the impulse on each body from each articulation adds up
 *   to the pair's (and the ball's is its opposite), and the joint forces' generalised impulse
 *   (tau and the caller's dof rows) is h times what RNEA, an independent algorithm, finds
 *   from the step's change of velocity;
 *   sleeping: a damped humanoid dropped on the ground comes to rest and falls asleep, then
 *   costs no ABA and no rows and keeps its q bit for bit; a ball thrown at it wakes it, with
 *   the ball's change of momentum equal to the impulse the body received and no sinking into
 *   the ground; an articulation not allowed to sleep never does, and allowing it changes no
 *   bit while it moves; q changes, fb_world_wake, fb_world_set_sleep and hooks wake it, and a
 *   hook's row on a sleeper is refused;
 *   the world's PGS tolerance (relative to the largest multiplier) against the tight absolute
 *   one: contact forces against their closed forms, the friction cone, momentum through a hit,
 *   and the bodies' positions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/quat.h"
#include "math/spatial.h"
#include "stand.h"
#include "support.h"

#define G 9.81
#define DEG (FB_PI / 180.0)



static fb_model* box_model(fb_v3 size) {
    return ck_free_body(ck_shape_box(size), 500.0);
}

static fb_model* ball_model(double radius, double rho) {
    return ck_free_body(ck_shape_sphere(radius), rho);
}

static fb_world* ck_world(int n, const fb_model* const* m, const fb_world_opts* o) {
    fb_error err;
    fb_world* w = fb_world_create(n, m, o, NULL, &err);
    ck_assert_msg(w != NULL, "world: %s", err.msg);
    return w;
}

static void ck_step(fb_world* w) {
    fb_error err;
    ck_assert_msg(fb_world_step(w, &err) == FB_OK, "step at t = %g: %s", fb_world_time(w),
                  err.msg);
}

static fb_v3 body_pos(const fb_data* d) {
    return fb_v3_make(d->q[0], d->q[1], d->q[2]);
}

static double kinetic(const fb_model* m, fb_data* d) {
    fb_kinematics(m, d);
    double ke, pe;
    fb_energy(m, d, &ke, &pe);
    return ke;
}

START_TEST(box_rests_on_flat_ground) {
    const fb_model* m = box_model(fb_v3_make(0.4, 0.2, 0.3));
    fb_world* w = ck_world(1, &m, NULL);
    fb_data* d = fb_world_data(w, 0);
    const fb_v3 p0 = fb_v3_make(0.3, 0.1, -0.2); /* resting on its 0.4 x 0.3 face */
    ck_place(d, p0, fb_quat_identity());
    double worst_pen = 0.0;
    const int steps = (int)(10.0 / fb_world_options(w)->dt);
    for (int k = 0; k < steps; k++) {
        ck_step(w);
        worst_pen = fmax(worst_pen, fb_world_get_stats(w)->max_penetration);
    }
    const fb_v3 drift = fb_v3_sub(body_pos(d), p0);
    printf("resting box, 10 s: drift %.3g m, deepest penetration %.3g m, %d contacts\n",
           fb_v3_norm(drift), worst_pen, fb_world_get_stats(w)->contacts);
    ck_assert_msg(fb_v3_norm(drift) < 1e-3, "drift %g m", fb_v3_norm(drift));
    ck_assert_msg(worst_pen < 1e-3, "penetration %g m", worst_pen);
    ck_assert_int_eq(fb_world_get_stats(w)->contacts, 4);
    fb_world_destroy(w);
    fb_model_destroy((fb_model*)m);
}
END_TEST

/* A box on a plane tilted by theta about Z; returns its speed down the slope at t1 and t2. */
static void slope_run(double theta, double mu, double t1, double t2, double* v1, double* v2,
                      double* moved) {
    const fb_model* m = box_model(fb_v3_make(0.4, 0.2, 0.3));
    fb_world_opts o = fb_default_world_opts();
    o.plane.n = fb_v3_make(-sin(theta), cos(theta), 0.0);
    o.ground_mu = mu;
    fb_world* w = ck_world(1, &m, &o);
    fb_error err;
    ck_assert_int_eq(fb_world_set_material(w, 0, mu, 0.0, &err), FB_OK);
    fb_data* d = fb_world_data(w, 0);
    const fb_v3 p0 = fb_v3_scale(o.plane.n, 0.1);
    ck_place(d, p0, fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), theta));
    const fb_v3 down = fb_v3_make(-cos(theta), -sin(theta), 0.0);
    const int n1 = (int)lround(t1 / o.dt), n2 = (int)lround(t2 / o.dt);
    for (int k = 1; k <= n2; k++) {
        ck_step(w);
        if (k == n1 || k == n2) {
            fb_kinematics(m, d);
            const double v = fb_v3_dot(fb_point_vel(m, d, 1, fb_v3_zero()), down);
            *(k == n1 ? v1 : v2) = v;
        }
    }
    *moved = fb_v3_norm(fb_v3_sub(body_pos(d), p0));
    fb_world_destroy(w);
    fb_model_destroy((fb_model*)m);
}

START_TEST(box_on_slope_sticks_or_slides) {
    double v1, v2, moved;
    /* tan 20 deg = 0.36 < 0.5: sticks */
    slope_run(20 * DEG, 0.5, 1.0, 3.0, &v1, &v2, &moved);
    printf("slope 20 deg, mu 0.5: moved %.3g m in 3 s\n", moved);
    ck_assert_msg(moved < 1e-3, "a sticking box moved %g m", moved);
    /* tan 30 deg = 0.58 > 0.3: slides at g (sin - mu cos) */
    const double theta = 30 * DEG, mu = 0.3;
    slope_run(theta, mu, 0.5, 1.5, &v1, &v2, &moved);
    const double a = (v2 - v1) / 1.0, expect = G * (sin(theta) - mu * cos(theta));
    printf("slope 30 deg, mu 0.3: a = %.5g m/s^2, expected %.5g (%.2f%%)\n", a, expect,
           100.0 * (a / expect - 1.0));
    fb_ck_near(a, expect, 0.02, 0.0);
}
END_TEST

/* Height (above the ground) of the first bounce of a ball of radius r dropped from 1 m. */
#define CAPSULE_R 0.05 /* m: the rolling capsule's radius and its axis' length */
#define CAPSULE_L 0.3

/* A solid ball (radius 0.1 m), or a capsule (CAPSULE_R, CAPSULE_L) lying with its axis along
 * Z, on a plane tilted by theta about Z, friction 1 (it rolls without slipping), rolling
 * resistance `length`, released at rest; returns how far its centre moved down the slope in t
 * seconds (and in all, *moved). The capsule touches at two points, its two ends. */
static double rolling_run(double theta, double length, double t, bool capsule, double* moved) {
    const double r = capsule ? CAPSULE_R : 0.1;
    const fb_model* m = capsule
                            ? ck_free_body(ck_shape_capsule(r, fb_v3_make(0, 0, -0.5 * CAPSULE_L),
                                                            fb_v3_make(0, 0, 0.5 * CAPSULE_L)),
                                           1000.0)
                            : ball_model(r, 1000.0);
    fb_world_opts o = fb_default_world_opts();
    o.plane.n = fb_v3_make(-sin(theta), cos(theta), 0.0);
    fb_world* w = ck_world(1, &m, &o);
    fb_error err;
    ck_assert_int_eq(fb_world_set_rolling(w, 0, length, &err), FB_OK);
    fb_data* d = fb_world_data(w, 0);
    const fb_v3 p0 = fb_v3_scale(o.plane.n, r);
    ck_place(d, p0, fb_quat_identity());
    const fb_v3 down = fb_v3_make(-cos(theta), -sin(theta), 0.0);
    const int n = (int)lround(t / o.dt);
    for (int k = 1; k <= n; k++) {
        ck_step(w);
    }
    const double s = fb_v3_dot(fb_v3_sub(body_pos(d), p0), down);
    *moved = fb_v3_norm(fb_v3_sub(body_pos(d), p0));
    fb_world_destroy(w);
    fb_model_destroy((fb_model*)m);
    return s;
}

/* Rolling resistance (fb_world_set_rolling, fb_contact_rolling_rows): a ball resists rolling
 * with a torque up to length times the normal force. On a slope it stays put while the
 * gravity's moment about the contact, m g sin(theta) r, is within length m g cos(theta)
 * (tan theta < length / r), and else rolls down at a = g (sin theta - (length / r) cos
 * theta) m r^2 / (m r^2 + I) = (5/7) g (...) for a solid ball (I = 2/5 m r^2), as a rolling
 * ball without resistance does at (5/7) g sin theta; a = 2 s / t^2 over 1.5 s (the ball
 * then turns at 18 rad/s; with the explicit body-frame velocity step the world had before
 * fb_velocity_step, 16 % more acceleration by then). A capsule lying across the slope touches
 * it at its two ends, which hold it from rolling but about its axis: each resists that with up
 * to length times its own normal force, so the same closed forms hold with the capsule's r and
 * its moment of inertia about its axis, computed here (a cylinder's m r^2 / 2 and a ball's
 * 2/5 m r^2); without those rows it rolled freely (red). */
START_TEST(ball_on_slope_rolls_or_rests_by_its_rolling_resistance) {
    double moved;
    /* tan 5 deg = 0.087 < 0.01 / 0.1 = 0.1: rests */
    (void)rolling_run(5 * DEG, 0.01, 3.0, false, &moved);
    printf("ball on a 5 deg slope, rolling resistance 1 cm (r 0.1 m): moved %.3g m in 3 s\n",
           moved);
    ck_assert_msg(moved < 1e-3, "a resting ball moved %g m", moved);
    for (int k = 0; k < 2; k++) {
        const double theta = 10 * DEG, length = k == 0 ? 0.0 : 0.01, r = 0.1, t = 1.5;
        const double a = 2.0 * rolling_run(theta, length, t, false, &moved) / (t * t);
        const double expect = 5.0 / 7.0 * G * (sin(theta) - length / r * cos(theta));
        printf("ball on a 10 deg slope, rolling resistance %g m: a = %.5g m/s^2, expected %.5g "
               "(%.2f%%)\n",
               length, a, expect, 100.0 * (a / expect - 1.0));
        fb_ck_near(a, expect, 0.03, 0.0);
    }
    /* the capsule: tan 10 deg = 0.18 < 0.01 / 0.05 = 0.2 rests; at 15 deg (0.27) rolls */
    const double r = CAPSULE_R, mc = 1000.0 * FB_PI * r * r * CAPSULE_L,
                 ms = 1000.0 * 4.0 / 3.0 * FB_PI * r * r * r;
    const double ratio = (0.5 * mc * r * r + 0.4 * ms * r * r) / ((mc + ms) * r * r);
    (void)rolling_run(10 * DEG, 0.01, 3.0, true, &moved);
    printf("capsule (r %g m) lying across a 10 deg slope, rolling resistance 1 cm: moved %.3g m "
           "in 3 s\n",
           r, moved);
    ck_assert_msg(moved < 1e-3, "a resting capsule moved %g m", moved);
    const double theta = 15 * DEG, length = 0.01, t = 1.0;
    const double a = 2.0 * rolling_run(theta, length, t, true, &moved) / (t * t);
    const double expect = G * (sin(theta) - length / r * cos(theta)) / (1.0 + ratio);
    printf("capsule across a 15 deg slope, rolling resistance %g m: a = %.5g m/s^2, expected "
           "%.5g (%.2f%%)\n",
           length, a, expect, 100.0 * (a / expect - 1.0));
    fb_ck_near(a, expect, 0.03, 0.0);
}
END_TEST

/* A ball of radius 0.1 m spinning at 20 rad/s and moving at 2 m/s: free in zero gravity, and
 * rolling on the ground (no slip). Either keeps its kinetic energy and its centre's speed
 * (closed form: nothing does work) over 2 s at the world's 480 Hz. The step's velocity update
 * of a floating body (fb_velocity_step) keeps its linear velocity in the world; the explicit
 * body-frame update before it (v + h (a - w x v)) gave 22.6 J from 11.7 J in 1 s free and 62 J
 * in 2 s rolling. */
START_TEST(spinning_ball_keeps_its_energy) {
    for (int ground = 0; ground < 2; ground++) {
        fb_model* m = ball_model(0.1, 1000.0);
        fb_error err;
        if (!ground) {
            ck_assert_int_eq(fb_model_set_gravity(m, fb_v3_zero(), &err), FB_OK);
        }
        const fb_model* mc = m;
        fb_world_opts o = fb_default_world_opts();
        o.ground = ground;
        fb_world* w = ck_world(1, &mc, &o);
        fb_data* d = fb_world_data(w, 0);
        ck_place(d, fb_v3_make(0, 0.1, 0), fb_quat_identity());
        d->qd[2] = -20.0; /* about -z: rolling toward +x on the ground */
        d->qd[3] = 2.0;
        const double ke0 = kinetic(m, d);
        double worst_ke = 0.0, worst_v = 0.0;
        for (int k = 0; k < 960; k++) {
            ck_step(w);
            worst_ke = fmax(worst_ke, fabs(kinetic(m, d) / ke0 - 1.0));
            worst_v = fmax(worst_v, fabs(fb_v3_norm(fb_point_vel(m, d, 1, fb_v3_zero())) - 2.0));
        }
        printf("ball spinning at 20 rad/s, 2 m/s, %s: kinetic energy within %.2g of %.4g J, "
               "speed within %.2g m/s of 2 over 2 s\n",
               ground ? "rolling on the ground" : "free", worst_ke, ke0, worst_v);
        ck_assert_double_lt(worst_ke, 1e-6);
        ck_assert_double_lt(worst_v, 1e-6);
        fb_world_destroy(w);
        fb_model_destroy(m);
    }
}
END_TEST

/* An unbounded row on dof `dof` of articulation 0 aiming at acceleration `target`. */
static fb_row dof_row(int dof, double target) {
    fb_row row = fb_default_row();
    row.type = FB_ROW_DOF;
    row.art = 0;
    row.dof = dof;
    row.lo = -INFINITY;
    row.hi = INFINITY;
    row.target = target;
    return row;
}

/* ---- joint friction ---------------------------------------------------------------------- */

#define ROD_RHO 700.0 /* kg/m^3: a 4 x 30 x 4 cm rod, its joint at one end */
#define ROD_A 0.04
#define ROD_L 0.3

/* The rod's moment of inertia about an axis through its joint across it (x or z): a box's
 * m (a^2 + L^2) / 12 about its centre, and m (L/2)^2 more (parallel axes). */
static double rod_inertia(void) {
    const double mass = ROD_RHO * ROD_A * ROD_L * ROD_A;
    return mass * (ROD_A * ROD_A + ROD_L * ROD_L) / 12.0 + mass * 0.25 * ROD_L * ROD_L;
}

/* The rod on one joint of type t at the world (its range lim, or none for NULL), zero gravity,
 * with joint damping b and friction f. */
static fb_model* rod_model(fb_joint_type t, const fb_joint_limit* lim, double b, double f) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    fb_body_def def = fb_default_body_def();
    def.name = "rod";
    def.joint = t;
    def.axis = fb_v3_make(0, 0, 1);
    def.inertia =
        fb_rbi_box(ROD_RHO, fb_v3_make(ROD_A, ROD_L, ROD_A), fb_v3_make(0, -0.5 * ROD_L, 0));
    if (lim) {
        def.limit = *lim;
    }
    def.damping = b;
    def.friction = f;
    ck_assert_msg(fb_model_add_body(m, &def, NULL, &err) == FB_OK, "%s", err.msg);
    ck_assert_int_eq(fb_model_set_gravity(m, fb_v3_zero(), &err), FB_OK);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

/* The rod with joint friction f set after it is built (fb_model_set_friction), no damping. */
static fb_model* friction_rod(fb_joint_type t, double f) {
    fb_model* m = rod_model(t, NULL, 0.0, 0.0);
    fb_error err;
    ck_assert_int_eq(fb_model_set_friction(m, 1, f, &err), FB_OK);
    return m;
}

/* Runs the rod for `seconds` with torque tau on its first dof from velocity qd0 on it (the
 * other dofs at rest); returns the first dof's velocity then and, in *others, the largest
 * |velocity| of the others on the way; *rows: the rows of the last step. */
static double friction_run(const fb_model* m, double tau, double qd0, double seconds,
                           fb_world_hook hook, double* others, int* rows) {
    fb_world_opts o = fb_default_world_opts();
    o.ground = false;
    fb_world* w = ck_world(1, &m, &o);
    fb_world_set_hook(w, hook, NULL);
    fb_data* d = fb_world_data(w, 0);
    d->qd[0] = qd0;
    *others = 0.0;
    for (int k = 0; k < (int)lround(seconds / o.dt); k++) {
        d->tau[0] = tau;
        ck_step(w);
        for (int j = 1; j < m->nv; j++) {
            *others = fmax(*others, fabs(d->qd[j]));
        }
    }
    const double v = d->qd[0];
    *rows = fb_world_get_stats(w)->rows;
    fb_world_destroy(w);
    return v;
}

#define HELD_ACC 1.0 /* rad/s^2 */

/* A caller's row holding the rod's first dof at HELD_ACC. */
static fb_status hold_first_dof(void* user, fb_world* w, fb_hook_phase phase, double t, double h,
                                fb_csys* cs, fb_error* err) {
    (void)user;
    (void)w;
    (void)t;
    (void)h;
    if (phase != FB_HOOK_ROWS) {
        return FB_OK;
    }
    const fb_row row = dof_row(0, HELD_ACC);
    return fb_csys_add_row(cs, &row, err);
}

/* Joint friction (fb_model_set_friction: dry friction, a world row per dof bounded by f), with
 * closed forms for a rod of inertia I about its joint (computed here from its size): under a
 * torque below f it never moves; above, it turns at (tau - f) / I; let go at w0 it slows at
 * f / I and stops for good at t* = I w0 / f (half its speed at t* / 2); a ball joint spun
 * about the rod's cross axis x (a principal axis: no gyroscopic torque) the same, its other
 * dofs still. A dof a caller's row holds gets no friction row: it follows the row exactly. */
START_TEST(joint_friction_holds_slows_and_stops_a_rod) {
    const double f = 0.01, I = rod_inertia(), w0 = 2.0, t_stop = I * w0 / f;
    double others, v;
    int rows;
    for (int ball = 0; ball < 2; ball++) {
        fb_model* m = friction_rod(ball ? FB_JOINT_SPHERICAL : FB_JOINT_REVOLUTE, f);
        const char* name = ball ? "ball joint" : "hinge";
        v = friction_run(m, 0.5 * f, 0.0, 1.0, NULL, &others, &rows);
        printf("joint friction, %s: under half its friction 1 s: %.3g rad/s (%d rows)\n", name, v,
               rows);
        ck_assert_double_le(fabs(v), 1e-12);
        ck_assert_int_eq(rows, ball ? 3 : 1);
        const double expect = (2.0 * f - f) / I;
        v = friction_run(m, 2.0 * f, 0.0, 1.0, NULL, &others, &rows);
        printf("  under twice its friction 1 s: %.9g rad/s, (tau - f) t / I = %.9g\n", v, expect);
        fb_ck_near(v, expect, 1e-9, 0.0);
        /* about t* / 2, on a step (1/480 s) */
        const double t_half = round(0.5 * t_stop * 480.0) / 480.0;
        const double half = friction_run(m, 0.0, w0, t_half, NULL, &others, &rows);
        v = friction_run(m, 0.0, w0, 2.0 * t_stop, NULL, &others, &rows);
        printf("  let go at %g rad/s: %.9g rad/s at %.4f s (w0 - f t / I = %.9g), %.3g at 2 t* "
               "= %.3f s, other dofs up to %.3g rad/s\n",
               w0, half, t_half, w0 - f * t_half / I, v, 2.0 * t_stop, others);
        fb_ck_near(half, w0 - f * t_half / I, 1e-9, 0.0);
        ck_assert_double_le(fabs(v), 1e-12);
        ck_assert_double_le(others, 1e-12);
        fb_model_destroy(m);
    }
    fb_model* m = friction_rod(FB_JOINT_REVOLUTE, f);
    v = friction_run(m, 0.0, 0.0, 1.0, hold_first_dof, &others, &rows);
    printf("  held by a caller's row at %g rad/s^2: %.12g rad/s after 1 s, %d row\n", HELD_ACC, v,
           rows);
    fb_ck_near(v, HELD_ACC, 1e-12, 0.0);
    ck_assert_int_eq(rows, 1);
    /* refused: negative, on no body, on a floating joint */
    fb_error err;
    ck_assert_int_eq(fb_model_set_friction(m, 1, -0.1, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "friction: expected >= 0"), "%s", err.msg);
    ck_assert_int_eq(fb_model_set_friction(m, 2, 0.1, &err), FB_EINVAL);
    fb_model_destroy(m);
    m = ball_model(0.1, 1000.0);
    ck_assert_int_eq(fb_model_set_friction(m, 1, 0.1, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "a floating joint has none"), "%s", err.msg);
    fb_model_destroy(m);
}
END_TEST

static double bounce_height(double e, double dt) {
    const double r = 0.1;
    const fb_model* m = ball_model(r, 1000.0);
    fb_world_opts o = fb_default_world_opts();
    o.dt = dt;
    fb_world* w = ck_world(1, &m, &o);
    fb_error err;
    ck_assert_int_eq(fb_world_set_material(w, 0, 1.0, e, &err), FB_OK);
    fb_data* d = fb_world_data(w, 0);
    ck_place(d, fb_v3_make(0, 1.0 + r, 0), fb_quat_identity());
    int bounced = 0;
    double apex = 0.0, prev_vy = 0.0;
    for (int k = 0; k < (int)(5.0 / dt) && bounced < 2; k++) {
        ck_step(w);
        const double vy = d->qd[4]; /* body frame = world frame: the ball does not spin */
        if (bounced == 0 && prev_vy < 0.0 && vy > 0.0) {
            bounced = 1;
        }
        if (bounced == 1) {
            apex = fmax(apex, d->q[1] - r);
            bounced += vy < 0.0;
        }
        prev_vy = vy;
    }
    ck_assert_int_eq(bounced, 2);
    fb_world_destroy(w);
    fb_model_destroy((fb_model*)m);
    return apex;
}

/* The impact itself is exact (the test below it checks the velocities); what is left is the
 * first-order error of semi-implicit Euler in free flight, about h v / (2 height) per leg
 * (-2.1% for e = 0.3 at the default 1/480 s, -0.5% at 1/1920 s). The bound is checked at
 * 1/960 s, where every e here is within 1.1%. */
START_TEST(ball_bounces_to_e_squared) {
    const double es[] = {0.3, 0.55, 0.8};
    for (int k = 0; k < 3; k++) {
        const double e = es[k];
        const double h_default = bounce_height(e, 1.0 / 480.0);
        const double h = bounce_height(e, 1.0 / 960.0);
        printf("ball e = %.2f: bounce height %.5g m at dt 1/960 s (%.2f%%), %.5g m at 1/480 s "
               "(%.2f%%); expected %.5g\n",
               e, h, 100.0 * (h / (e * e) - 1.0), h_default, 100.0 * (h_default / (e * e) - 1.0),
               e * e);
        fb_ck_near(h, e * e, 0.02, 0.0);
    }
}
END_TEST

/* Passive joint damping of the ragdoll (N m s/rad). */
#define RAGDOLL_DAMPING 0.5

/* The CMU walk's character (bundled rules) as a ragdoll, and its first pose in *mo. */
static fb_character* ragdoll(fb_clip** clip, fb_motion** mo) {
    fb_error err;
    *clip = fb_clip_load(FB_DATA_DIR "/131_01.bvh", NULL, NULL, &err);
    ck_assert_msg(*clip != NULL, "%s", err.msg);
    fb_rules rules;
    ck_assert_msg(fb_rules_load(FB_DATA_DIR "/character_rules.json", &rules, &err) == FB_OK,
                  "%s", err.msg);
    fb_build_opts bo = fb_default_build_opts();
    bo.rules = &rules;
    fb_character* ch = fb_character_build(*clip, &bo, &err);
    ck_assert_msg(ch != NULL, "%s", err.msg);
    *mo = fb_motion_from_clip(*clip, ch, 0.0, 0, 1, &err);
    ck_assert_msg(*mo != NULL, "%s", err.msg);
    /* joints have some passive damping, as real ones do (a frictionless ball joint lets a
     * hand spin about its own axis for ever) */
    for (int i = 1; i < ch->model->nbody; i++) {
        if (ch->model->jnv[i] > 0 && ch->model->jtype[i] != FB_JOINT_FLOATING) {
            ck_assert_int_eq(fb_model_set_damping(ch->model, i, RAGDOLL_DAMPING, &err), FB_OK);
        }
    }
    return ch;
}

START_TEST(ragdoll_comes_to_rest) {
    fb_clip* clip;
    fb_motion* mo;
    fb_character* ch = ragdoll(&clip, &mo);
    const fb_model* m = ch->model;
    fb_world* w = ck_world(1, &m, NULL);
    fb_data* d = fb_world_data(w, 0);
    /* the clip's first pose laid on its back (rotated -90 degrees about X) and dropped with its
     * root 40 cm up, a little tilted so it does not land symmetrically */
    memcpy(d->q, mo->q, (size_t)m->nq * sizeof(double));
    scene_ragdoll_lying(d->q);
    double worst_pen = 0.0;
    const int steps = (int)(3.0 / fb_world_options(w)->dt);
    for (int k = 0; k < steps; k++) {
        ck_step(w);
        if (k > steps / 2) {
            worst_pen = fmax(worst_pen, fb_world_get_stats(w)->max_penetration);
        }
    }
    const double ke = kinetic(m, d);
    const fb_world_stats* st = fb_world_get_stats(w);
    printf("ragdoll after 3 s: kinetic energy %.3g J, penetration %.3g m, %d contacts, "
           "%ld halvings, %ld impacts\n",
           ke, worst_pen, st->contacts, st->halvings, st->impacts);
    ck_assert_msg(ke < 1e-3, "kinetic energy %g J", ke);
    ck_assert_msg(worst_pen < 5e-3, "penetration %g m", worst_pen);
    for (int j = 0; j < m->nq; j++) {
        ck_assert(isfinite(d->q[j]));
    }
    fb_world_destroy(w);
    fb_motion_destroy(mo);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
}
END_TEST

/* fb_world_copy: the ragdoll of the test above dropped; after 0.3 s (on the ground, contacts
 * and their warm starts in play) its world is copied into a second world of the same model that
 * had stepped elsewhere (another pose, 0.1 s); both then step on 3 s, to rest and asleep, and
 * every step's q and qd, contacts and sleep must be the same bit for bit (a bit the copy
 * missed would show as the two drifting apart). The constraint matrix and the block solver's
 * factors, copied only as far as either world used them, hold the source's every byte, also
 * when a fresh world is copied over one that used more. A world of another model is refused. */
START_TEST(a_copied_world_steps_on_alike) {
    fb_error err;
    fb_clip* clip;
    fb_motion* mo;
    fb_character* ch = ragdoll(&clip, &mo);
    const fb_model* m = ch->model;
    fb_world_opts o = fb_default_world_opts();
    o.sleep_speed = 0.1; /* bench sleep's: asleep within the run */
    fb_world* a = ck_world(1, &m, &o);
    fb_world* b = ck_world(1, &m, &o);
    ck_assert_int_eq(fb_world_set_sleep(a, 0, true, &err), FB_OK);
    memcpy(fb_world_data(a, 0)->q, mo->q, (size_t)m->nq * sizeof(double));
    scene_ragdoll_lying(fb_world_data(a, 0)->q);
    memcpy(fb_world_data(b, 0)->q, mo->q, (size_t)m->nq * sizeof(double));
    const double dt = fb_world_options(a)->dt;
    for (int k = 0; k < (int)(0.3 / dt); k++) {
        ck_step(a);
    }
    for (int k = 0; k < (int)(0.1 / dt); k++) {
        ck_step(b);
    }
    ck_assert_int_gt(fb_world_get_stats(a)->contacts, 0);
    const int rows_b = fb_world_csys(b)->nrow_max;
    ck_assert_int_eq(fb_world_copy(b, a, &err), FB_OK);
    /* the constraint matrix and the block solver's factors (cap x cap each) hold the source's
     * every byte, though the copy writes them only as far as either system used them */
    const fb_csys* ka = fb_world_csys(a);
    const fb_csys* kb = fb_world_csys(b);
    const size_t whole = (size_t)ka->cap * (size_t)ka->cap * sizeof(double);
    printf("copy: the source had held up to %d rows, the copy %d, of %d\n", ka->nrow_max, rows_b,
           ka->cap);
    ck_assert(ka->nrow_max > 0 && ka->nrow_max < ka->cap);
    ck_assert(memcmp(ka->K, kb->K, whole) == 0 && memcmp(ka->blk_L, kb->blk_L, whole) == 0 &&
              memcmp(ka->blk_F, kb->blk_F, whole) == 0);
    const fb_data* da = fb_world_data(a, 0);
    const fb_data* db = fb_world_data(b, 0);
    bool slept = false;
    for (int k = 0; k < (int)(3.0 / dt); k++) {
        ck_step(a);
        ck_step(b);
        ck_assert_msg(memcmp(da->q, db->q, (size_t)m->nq * sizeof(double)) == 0 &&
                          memcmp(da->qd, db->qd, (size_t)m->nv * sizeof(double)) == 0,
                      "step %d after the copy: the worlds differ", k + 1);
        ck_assert_int_eq(fb_world_get_stats(a)->contacts, fb_world_get_stats(b)->contacts);
        ck_assert(fb_world_asleep(a, 0) == fb_world_asleep(b, 0));
        ck_assert(fb_world_time(a) == fb_world_time(b));
        slept = slept || fb_world_asleep(a, 0);
    }
    ck_assert_msg(slept, "the ragdoll never slept: the copy's sleep state is not checked");
    /* a fresh world copied over one that held rows: those are written over with its zeros */
    fb_world* fresh = ck_world(1, &m, &o);
    ck_assert_int_eq(fb_world_copy(a, fresh, &err), FB_OK);
    ck_assert(memcmp(ka->K, fb_world_csys(fresh)->K, whole) == 0 &&
              memcmp(ka->blk_L, fb_world_csys(fresh)->blk_L, whole) == 0 &&
              memcmp(ka->blk_F, fb_world_csys(fresh)->blk_F, whole) == 0);
    fb_world_destroy(fresh);
    fb_model* box = box_model(fb_v3_make(0.2, 0.2, 0.2));
    const fb_model* mb = box;
    fb_world* c = ck_world(1, &mb, NULL);
    ck_assert_int_eq(fb_world_copy(c, a, &err), FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "differ"));
    fb_world_destroy(c);
    fb_model_destroy(box);
    fb_world_destroy(a);
    fb_world_destroy(b);
    fb_motion_destroy(mo);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
}
END_TEST

/* A chain of n links of length L hanging from the world, joints of type t with limit lim
 * (each link a capsule-like rod: inertia of a thin box). */
static fb_model* chain(int n, fb_joint_type t, const fb_joint_limit* lim) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(n, NULL, &err), &err);
    const double L = 0.3;
    for (int k = 0; k < n; k++) {
        char name[16];
        snprintf(name, sizeof name, "link%d", k);
        fb_body_def def = fb_default_body_def();
        def.name = name;
        def.parent = k;
        def.joint = t;
        def.axis = fb_v3_make(0, 0, 1);
        def.X_tree = fb_xf_xlt(fb_v3_make(k == 0 ? 0.0 : L, 0, 0));
        def.inertia = fb_rbi_box(700.0, fb_v3_make(L, 0.04, 0.04), fb_v3_make(L / 2, 0, 0));
        if (k > 0) {
            def.limit = *lim;
        }
        ck_assert_msg(fb_model_add_body(m, &def, NULL, &err) == FB_OK, "%s", err.msg);
    }
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

/* Largest limit overshoot over `seconds` of swinging, starting from q0/qd0. */
static double swing_overshoot(const fb_model* m, const double* qd0, double seconds,
                              long* limit_steps) {
    fb_world_opts o = fb_default_world_opts();
    o.ground = false;
    fb_world* w = ck_world(1, &m, &o);
    fb_data* d = fb_world_data(w, 0);
    memcpy(d->qd, qd0, (size_t)m->nv * sizeof(double));
    double worst = 0.0;
    *limit_steps = 0;
    for (int k = 0; k < (int)(seconds / o.dt); k++) {
        ck_step(w);
        worst = fmax(worst, fb_world_get_stats(w)->max_limit_violation);
        *limit_steps += fb_world_get_stats(w)->limits > 0;
    }
    fb_world_destroy(w);
    return worst;
}

START_TEST(hinge_chain_stays_within_limits) {
    const fb_joint_limit lim = {.on = true, .lo = -30 * DEG, .hi = 30 * DEG};
    fb_model* m = chain(4, FB_JOINT_REVOLUTE, &lim);
    /* released horizontal (gravity swings it down) and spun hard */
    double qd[4] = {6.0, -4.0, 5.0, -8.0};
    long at_limit;
    const double worst = swing_overshoot(m, qd, 4.0, &at_limit);
    printf("hinge chain: deepest limit overshoot %.3g deg, %ld steps at a limit\n", worst / DEG,
           at_limit);
    ck_assert_msg(at_limit > 100, "the chain hardly reached its limits (%ld steps)", at_limit);
    ck_assert_msg(worst < 0.5 * DEG, "overshoot %g deg", worst / DEG);
    fb_model_destroy(m);
}
END_TEST

START_TEST(ball_joint_chain_stays_within_cone_and_twist) {
    const fb_joint_limit lim = {.on = true,
                                .lo = -20 * DEG,
                                .hi = 20 * DEG,
                                .swing = 35 * DEG,
                                .twist_axis = {1, 0, 0}};
    fb_model* m = chain(4, FB_JOINT_SPHERICAL, &lim);
    scene_rng r = scene_rng_make(7);
    double qd[12];
    for (int j = 0; j < 12; j++) {
        qd[j] = scene_rng_uniform(&r, -6.0, 6.0);
    }
    long at_limit;
    const double worst = swing_overshoot(m, qd, 4.0, &at_limit);
    printf("ball-joint chain: deepest swing/twist overshoot %.3g deg, %ld steps at a limit\n",
           worst / DEG, at_limit);
    ck_assert_msg(at_limit > 100, "the chain hardly reached its limits (%ld steps)", at_limit);
    ck_assert_msg(worst < 0.5 * DEG, "overshoot %g deg", worst / DEG);
    fb_model_destroy(m);
}
END_TEST

/* A free-floating chain of three 40 cm capsules in zero gravity (floating root, a hinge with
 * stops at +-30 deg, a ball joint with a 35 deg cone and +-20 deg of twist about its x axis). */
static fb_model* limited_free_chain(void) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(3, NULL, &err), &err);
    for (int k = 0; k < 3; k++) {
        fb_body_def def = fb_default_body_def();
        def.name = k == 0 ? "root" : (k == 1 ? "hinge" : "ball");
        def.parent = k;
        def.joint = k == 0 ? FB_JOINT_FLOATING : (k == 1 ? FB_JOINT_REVOLUTE : FB_JOINT_SPHERICAL);
        def.axis = fb_v3_make(0, 0, 1);
        def.X_tree = fb_xf_xlt(fb_v3_make(k == 0 ? 0.0 : 0.4, 0, 0));
        def.inertia = fb_rbi_capsule(1000.0, 0.05, fb_v3_zero(), fb_v3_make(0.4, 0, 0));
        if (k == 1) {
            def.limit = (fb_joint_limit){.on = true, .lo = -30 * DEG, .hi = 30 * DEG};
        } else if (k == 2) {
            def.limit = (fb_joint_limit){.on = true,
                                         .lo = -20 * DEG,
                                         .hi = 20 * DEG,
                                         .swing = 35 * DEG,
                                         .twist_axis = {1, 0, 0}};
        }
        ck_assert_msg(fb_model_add_body(m, &def, NULL, &err) == FB_OK, "%s", err.msg);
    }
    ck_assert_int_eq(fb_model_set_gravity(m, fb_v3_zero(), &err), FB_OK);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

/* The centre of mass, summed here over the bodies' own centres. */
static fb_v3 centre_of_mass(const fb_model* m, fb_data* d) {
    fb_kinematics_pos(m, d);
    fb_v3 s = fb_v3_zero();
    double mass = 0.0;
    for (int b = 1; b < m->nbody; b++) {
        const fb_rbi* I = &m->I[b];
        s = fb_v3_add(s, fb_v3_scale(fb_point_pos(m, d, b, fb_v3_scale(I->h, 1.0 / I->m)), I->m));
        mass += I->m;
    }
    return fb_v3_scale(s, 1.0 / mass);
}

/* The chain at rest with its hinge `past` deg past its stop and its ball joint's x axis swung
 * `past` deg past its cone (about z); one step. Returns the hinge angle and the swing (the
 * angle between x and where the joint takes it, computed here), deg, and how far the centre
 * of mass moved. */
static void step_past_limits(bool projection, double past, double* hinge, double* swing,
                             double* com_moved, long* projections) {
    fb_model* m = limited_free_chain();
    fb_world_opts o = fb_default_world_opts();
    o.ground = false;
    o.limit_projection = projection;
    fb_world* w = ck_world(1, (const fb_model* const*)&m, &o);
    fb_data* d = fb_world_data(w, 0);
    d->q[m->q_adr[2]] = (30 + past) * DEG;
    fb_quat_store(d->q + m->q_adr[3],
                  fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), (35 + past) * DEG));
    const fb_v3 c0 = centre_of_mass(m, d);
    ck_step(w);
    *hinge = d->q[m->q_adr[2]] / DEG;
    const fb_v3 x = fb_v3_make(1, 0, 0);
    const fb_v3 bx = fb_quat_rotate(fb_quat_load(d->q + m->q_adr[3]), x);
    *swing = acos(fmin(1.0, fb_v3_dot(x, bx))) / DEG;
    *com_moved = fb_v3_norm(fb_v3_sub(centre_of_mass(m, d), c0));
    *projections = fb_world_get_stats(w)->projections;
    fb_world_destroy(w);
    fb_model_destroy(m);
}

/* Post-stabilisation (limit_projection, Cline's thesis §3.4): a step that leaves joints past
 * their ranges is followed by a projection of the positions back within them. Off, one step
 * takes the joints 6 deg past back by what Baumgarte's capped spring gives (max_limit_speed h,
 * 0.12 deg); on, to within limit_tol (0.25 deg). The projection's step is M-weighted: nothing
 * pushes the free chain from outside, so its centre of mass does not move to first order,
 * only by the linearisation's second order: halving the overshoot quarters what it moves (a
 * root held and the joints clamped would move it in proportion, by centimetres). */
START_TEST(projection_brings_joints_back_within_their_ranges) {
    double hinge, swing, moved[2];
    long n;
    step_past_limits(false, 6.0, &hinge, &swing, &moved[0], &n);
    printf("limits 6 deg past, no projection: after one step the hinge at %.3f deg (stop 30), "
           "the swing %.3f deg (cone 35), centre of mass moved %.3g m\n",
           hinge, swing, moved[0]);
    ck_assert_msg(hinge > 35.8 && swing > 40.8 && n == 0, "%g %g %ld", hinge, swing, n);
    for (int k = 0; k < 2; k++) {
        const double past = k == 0 ? 6.0 : 3.0;
        step_past_limits(true, past, &hinge, &swing, &moved[k], &n);
        printf("limits %g deg past, projection: after one step the hinge at %.3f deg, the "
               "swing %.3f deg, centre of mass moved %.3g m, %ld projections\n",
               past, hinge, swing, moved[k], n);
        ck_assert_msg(n >= 1, "no projection");
        ck_assert_msg(hinge <= 30.25 && hinge > 29.0, "hinge at %g deg", hinge);
        ck_assert_msg(swing <= 35.25 && swing > 34.0, "swing %g deg", swing);
    }
    const double ratio = moved[0] / moved[1];
    printf("  centre of mass: moved %.3g times as far at twice the overshoot (2: first order, "
           "4: second)\n",
           ratio);
    ck_assert_msg(ratio > 3.5 && ratio < 4.5, "%g", ratio);
}
END_TEST

/* The 30 cm rod hanging from the world on one joint of type t with limit lim, in zero
 * gravity, with joint damping so that a steady push settles. */
static fb_model* pushed_rod(fb_joint_type t, const fb_joint_limit* lim) {
    return rod_model(t, lim, 0.3, 0.0);
}

/* Pushes the rod for 2 s with a torque of 2 N m about `dir` (joint frame; for a hinge, its
 * sign), or about the rod's own axis with twist != 0; returns its final q (4 numbers). Fails
 * if a limit is ever passed by more than 0.5 deg on the way. */
static void push_rod(const fb_model* m, fb_v3 dir, double twist, double* q_end) {
    fb_world_opts o = fb_default_world_opts();
    o.ground = false;
    fb_world* w = ck_world(1, &m, &o);
    fb_data* d = fb_world_data(w, 0);
    for (int k = 0; k < (int)(2.0 / o.dt); k++) {
        if (m->jtype[1] == FB_JOINT_REVOLUTE) {
            d->tau[0] = 2.0 * dir.z;
        } else {
            const fb_m3 R = fb_quat_to_m3(fb_quat_load(d->q));
            const fb_v3 t = twist != 0.0 ? fb_v3_scale(m->limit[1].twist_axis, 2.0 * twist)
                                         : fb_m3_tr_mv(R, fb_v3_scale(dir, 2.0));
            d->tau[0] = t.x;
            d->tau[1] = t.y;
            d->tau[2] = t.z;
        }
        ck_step(w);
        const double past = fb_world_get_stats(w)->max_limit_violation;
        ck_assert_msg(past < 0.5 * DEG, "passed a limit by %g deg at step %d", past / DEG, k);
    }
    memcpy(q_end, d->q, (size_t)m->nq * sizeof(double));
    fb_world_destroy(w);
}

/* A ball joint with an elliptic range (flexion 60, extension 20, abduction 40, adduction 10
 * deg about a hanging rod, twist +-30) pushed toward each side stops on its boundary: straight
 * out along an axis it rests at that axis's bound (the oracle's s within 0.05 deg), between
 * two it slides to a boundary point of that quadrant; pushed about its own axis it stops at
 * the twist bounds. */
START_TEST(ball_joint_stops_at_its_ellipse) {
    const fb_joint_limit lim = {.on = true,
                                .lo = -30 * DEG,
                                .hi = 30 * DEG,
                                .twist_axis = {0, -1, 0},
                                .elliptic = true,
                                .neutral = {0, -1, 0},
                                .swing_axis = {1, 0, 0},
                                .swing_lo = {-20 * DEG, -10 * DEG},
                                .swing_hi = {60 * DEG, 40 * DEG}};
    fb_model* m = pushed_rod(FB_JOINT_SPHERICAL, &lim);
    const fb_v3 u1 = lim.swing_axis, u2 = fb_v3_cross(lim.neutral, lim.swing_axis);
    double worst = 0.0;
    for (int k = 0; k < 8; k++) {
        const double ang = k * FB_PI / 4.0;
        const fb_v3 dir = fb_v3_add(fb_v3_scale(u1, cos(ang)), fb_v3_scale(u2, sin(ang)));
        double q[4], grad[2];
        push_rod(m, dir, 0.0, q);
        const fb_quat qe = fb_quat_load(q);
        const double g = ck_swing_g(&m->limit[1], qe, grad);
        /* the oracle's s: its angle and direction */
        const fb_v3 b = fb_quat_rotate(qe, lim.twist_axis);
        const fb_v3 kk = fb_v3_cross(lim.neutral, b);
        const double th = acos(fmin(1.0, fb_v3_dot(lim.neutral, b)));
        const double s1 = th * fb_v3_dot(kk, u1) / fb_v3_norm(kk);
        const double s2 = th * fb_v3_dot(kk, u2) / fb_v3_norm(kk);
        printf("ball joint pushed at %3.0f deg: stops at s = (%6.2f, %6.2f) deg, g = %.6f\n",
               ang / DEG, s1 / DEG, s2 / DEG, g);
        worst = fmax(worst, fabs(g - 1.0));
        ck_assert_msg(fabs(g - 1.0) < 1e-3, "push %d: g = %g, not on the boundary", k, g);
        ck_assert_msg(s1 * cos(ang) > -1e-3 && s2 * sin(ang) > -1e-3, "push %d: wrong side", k);
        if (k % 2 == 0) { /* along an axis: at that axis's bound */
            const double want1 = k == 0 ? 60 * DEG : (k == 4 ? -20 * DEG : 0.0);
            const double want2 = k == 2 ? 40 * DEG : (k == 6 ? -10 * DEG : 0.0);
            ck_assert_msg(fabs(s1 - want1) < 0.05 * DEG && fabs(s2 - want2) < 0.05 * DEG,
                          "push %d: s = (%g, %g) deg", k, s1 / DEG, s2 / DEG);
        }
    }
    for (int sgn = -1; sgn <= 1; sgn += 2) {
        double q[4];
        push_rod(m, fb_v3_zero(), sgn, q);
        const double tw = fb_quat_twist(fb_quat_load(q), lim.twist_axis);
        printf("ball joint twisted %+d: stops at %.3f deg\n", sgn, tw / DEG);
        ck_assert_msg(fabs(tw - sgn * 30 * DEG) < 0.05 * DEG, "twist %g deg", tw / DEG);
    }
    printf("ball joint: boundary reached to |g - 1| <= %.1e\n", worst);
    fb_model_destroy(m);
}
END_TEST

/* A hinge pushed either way stops at that stop. */
START_TEST(hinge_stops_at_both_ends) {
    const fb_joint_limit lim = {.on = true, .lo = -40 * DEG, .hi = 70 * DEG};
    fb_model* m = pushed_rod(FB_JOINT_REVOLUTE, &lim);
    for (int sgn = -1; sgn <= 1; sgn += 2) {
        double q[1];
        push_rod(m, fb_v3_make(0, 0, sgn), 0.0, q);
        printf("hinge pushed %+d: stops at %.4f deg\n", sgn, q[0] / DEG);
        ck_assert_msg(fabs(q[0] - (sgn > 0 ? lim.hi : lim.lo)) < 0.05 * DEG, "at %g deg",
                      q[0] / DEG);
    }
    fb_model_destroy(m);
}
END_TEST

/* A hook holding joints 0 and 2 of a three-link chain still (rows qdd = 0, any torque), as a
 * tracker holds the joints next to one that hits its stop. */
static fb_status hold_0_and_2(void* user, fb_world* w, fb_hook_phase phase, double t, double h,
                              fb_csys* cs, fb_error* err) {
    (void)user;
    (void)w;
    (void)t;
    (void)h;
    for (int k = 0; phase == FB_HOOK_ROWS && k <= 2; k += 2) {
        const fb_row row = dof_row(k, 0.0);
        const fb_status s = fb_csys_add_row(cs, &row, err);
        if (s != FB_OK) {
            return s;
        }
    }
    return FB_OK;
}

/* Joint 1 of the chain swings at 3 rad/s into its 30 deg stop while the hook holds joints 0
 * and 2 still. Driven (fb_world_set_driven), the stop and the holding rows meet in one solve:
 * joints 0 and 2 never move (their rows give whatever torque it takes) and joint 1 stops at its
 * limit. Not driven, the stop is Kokkevis' impulse on the chain as it is, passive (the hook's
 * rows take no impulse): it sets joints 0 and 2 moving (the rows then keep that velocity) and
 * the swinging chain carries joint 1 off its stop. Both stay within the limit. */
START_TEST(driven_joint_stops_with_the_hook_rows) {
    const fb_joint_limit lim = {.on = true, .lo = -30 * DEG, .hi = 30 * DEG};
    fb_model* m = chain(3, FB_JOINT_REVOLUTE, &lim);
    fb_error err;
    ck_assert(fb_model_set_gravity(m, fb_v3_zero(), &err) == FB_OK);
    double moved[2];
    for (int driven = 0; driven < 2; driven++) {
        fb_world_opts o = fb_default_world_opts();
        o.ground = false;
        fb_world* w = ck_world(1, (const fb_model* const*)&m, &o);
        ck_assert(fb_world_set_driven(w, 1, true, &err) == FB_EINVAL); /* no articulation 1 */
        ck_assert_msg(strstr(err.msg, "art"), "%s", err.msg);
        ck_assert(fb_world_set_driven(w, 0, driven, &err) == FB_OK);
        fb_world_set_hook(w, hold_0_and_2, NULL);
        fb_data* d = fb_world_data(w, 0);
        d->q[1] = 20 * DEG;
        d->qd[1] = 3.0;
        double past = 0.0, still = 0.0;
        for (int k = 0; k < (int)(0.5 / o.dt); k++) {
            ck_step(w);
            past = fmax(past, fb_world_get_stats(w)->max_limit_violation);
            still = fmax(still, fmax(fabs(d->qd[0]), fabs(d->qd[2])));
        }
        printf("chain, joint 1 into its stop at 3 rad/s, %s: joints 0 and 2 up to %.3g rad/s, "
               "joint 1 at %.2f deg (%.3g rad/s), %.3g deg past\n",
               driven ? "driven" : "not driven", still, d->q[1] / DEG, d->qd[1], past / DEG);
        ck_assert_msg(past < 0.5 * DEG, "past the stop by %g deg", past / DEG);
        ck_assert_double_le(d->q[1], 30.5 * DEG);
        if (driven) {
            /* it got there and stays: the rest of the chain holds still */
            ck_assert_double_ge(d->q[1], 29.5 * DEG);
            ck_assert_double_le(fabs(d->qd[1]), 1e-6);
        }
        moved[driven] = still;
        fb_world_destroy(w);
    }
    ck_assert_msg(moved[1] < 1e-6, "driven: the held joints moved at %g rad/s", moved[1]);
    ck_assert_msg(moved[0] > 0.1,
                  "not driven: the impulse should set the passive chain moving (%g rad/s)",
                  moved[0]);
    fb_model_destroy(m);
}
END_TEST

/* A free-floating chain of three capsules on hinges, in zero gravity. */
static fb_model* free_chain(void) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(3, NULL, &err), &err);
    for (int k = 0; k < 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "seg%d", k);
        fb_body_def def = fb_default_body_def();
        def.name = name;
        def.parent = k;
        def.joint = k == 0 ? FB_JOINT_FLOATING : (k == 1 ? FB_JOINT_REVOLUTE : FB_JOINT_SPHERICAL);
        def.axis = fb_v3_make(0, 0, 1);
        def.X_tree = fb_xf_xlt(fb_v3_make(k == 0 ? 0.0 : 0.4, 0, 0));
        def.inertia = fb_rbi_capsule(1000.0, 0.05, fb_v3_zero(), fb_v3_make(0.4, 0, 0));
        int id;
        ck_assert_int_eq(fb_model_add_body(m, &def, &id, &err), FB_OK);
        fb_shape sh;
        memset(&sh, 0, sizeof sh);
        sh.type = FB_SHAPE_CAPSULE;
        sh.body = id;
        sh.radius = 0.05;
        sh.p1 = fb_v3_make(0.4, 0, 0);
        sh.R = fb_m3_identity();
        ck_assert_int_eq(fb_model_add_shape(m, &sh, &err), FB_OK);
    }
    ck_assert_int_eq(fb_model_set_gravity(m, fb_v3_zero(), &err), FB_OK);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

static fb_fv total_momentum(fb_world* w) {
    fb_fv h = fb_fv_zero();
    for (int k = 0; k < fb_world_nart(w); k++) {
        fb_data* d = fb_world_data(w, k);
        fb_kinematics(fb_world_model(w, k), d);
        const fb_fv hk = fb_momentum(fb_world_model(w, k), d);
        h = (fb_fv){fb_v3_add(h.n, hk.n), fb_v3_add(h.f, hk.f)};
    }
    return h;
}

/* Relative change of a spatial momentum, linear and angular parts each against their size. */
static void momentum_change(fb_fv a, fb_fv b, double* lin, double* ang) {
    *lin = fb_v3_norm(fb_v3_sub(a.f, b.f)) / fb_v3_norm(a.f);
    *ang = fb_v3_norm(fb_v3_sub(a.n, b.n)) / fmax(fb_v3_norm(a.n), fb_v3_norm(a.f) * 0.4);
}

/* A world in zero gravity, no ground: the free chain (articulation 0) and a 0.45 kg ball of
 * radius 0.11 m (articulation 1) with friction mu and restitution e; the options but the
 * ground are base's (NULL: the defaults). */
static fb_world* chain_and_ball_opts(double mu, double e, const fb_world_opts* base,
                                     fb_model** chain_m, fb_model** ball_m) {
    *chain_m = free_chain();
    *ball_m = ball_model(0.11, 0.45 / (4.0 / 3.0 * FB_PI * 0.11 * 0.11 * 0.11));
    fb_error err;
    ck_assert_int_eq(fb_model_set_gravity(*ball_m, fb_v3_zero(), &err), FB_OK);
    const fb_model* ms[2] = {*chain_m, *ball_m};
    fb_world_opts o = base ? *base : fb_default_world_opts();
    o.ground = false;
    fb_world* w = ck_world(2, ms, &o);
    ck_assert_int_eq(fb_world_set_material(w, 1, mu, e, &err), FB_OK);
    ck_assert_int_eq(fb_world_set_material(w, 0, mu, 0.0, &err), FB_OK);
    return w;
}

static fb_world* chain_and_ball(double mu, double e, fb_model** chain_m, fb_model** ball_m) {
    return chain_and_ball_opts(mu, e, NULL, chain_m, ball_m);
}

/* The chain and a ball about to hit its middle segment; one impulse solve at that instant. */
static void ball_hits_chain(double e, double mu) {
    fb_model *chain_m, *ball_m;
    fb_world* w = chain_and_ball(mu, e, &chain_m, &ball_m);
    const fb_model* ms[2] = {chain_m, ball_m};
    fb_error err;
    fb_data* dc = fb_world_data(w, 0);
    fb_data* db = fb_world_data(w, 1);
    /* the chain bent a little and tumbling slowly; the ball touches segment 1 off-centre */
    ck_place(dc, fb_v3_zero(), fb_quat_identity());
    dc->q[7] = 0.3;
    dc->qd[0] = 0.2;
    dc->qd[5] = 0.1;
    dc->qd[6] = -0.5;
    fb_kinematics(chain_m, dc);
    const fb_v3 target = fb_point_pos(chain_m, dc, 2, fb_v3_make(0.2, 0, 0));
    const fb_v3 from = fb_v3_scale(fb_v3_make(0.1, 1.0, 0.3), 1.0 / sqrt(1.1));
    ck_place(db, fb_v3_axpy(target, 0.05 + 0.11, from), fb_quat_identity());
    db->qd[3] = -10.0 * from.x;
    db->qd[4] = -10.0 * from.y;
    db->qd[5] = -10.0 * from.z;
    /* the contacts and rows of that instant, built the way the step builds them */
    fb_csys* cs = (fb_csys*)fb_world_csys(w);
    fb_contact con[8];
    int n = 0;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(fb_aba(ms[k], fb_world_data(w, k), &err), FB_OK);
    }
    ck_assert_int_eq(fb_collide_spheres(chain_m, dc, 0, ball_m, db, 1, 1e-3, con, &n, 8, &err),
                     FB_OK);
    ck_assert_int_eq(n, 1);
    fb_csys_clear(cs);
    ck_assert_int_eq(fb_contact_rows(cs, con, n, mu, NULL, &err), FB_OK);
    ck_assert_int_eq(fb_csys_build(cs, &err), FB_OK);
    double v[3], vt[3] = {0, 0, 0};
    fb_csys_row_velocity(cs, v);
    ck_assert_msg(v[0] < -5.0, "the ball approaches at %g m/s", v[0]);
    vt[0] = -e * v[0];
    const fb_fv h0 = total_momentum(w);
    const double ke0 = kinetic(chain_m, dc) + kinetic(ball_m, db);
    fb_pgs_opts po = fb_default_pgs_opts();
    po.tol = 1e-14;
    po.max_iter = 1000;
    fb_csys_impulse(cs, v, vt, &po);
    const fb_fv h1 = total_momentum(w);
    const double ke1 = kinetic(chain_m, dc) + kinetic(ball_m, db);
    double lin, ang;
    momentum_change(h0, h1, &lin, &ang);
    fb_csys_row_velocity(cs, v);
    printf("ball hits chain, e = %.1f mu = %.1f: momentum change lin %.2g ang %.2g, "
           "KE %.6g -> %.6g J, normal velocity after %.3g m/s, impulse %.4g N s\n",
           e, mu, lin, ang, ke0, ke1, v[0], cs->lambda[0]);
    ck_assert_msg(cs->lambda[0] > 0.5, "impulse %g", cs->lambda[0]);
    ck_assert_msg(lin < 1e-6 && ang < 1e-6, "momentum changed: linear %g, angular %g", lin,
                  ang);
    if (e == 1.0 && mu == 0.0) {
        fb_ck_near(ke1, ke0, 1e-6, 0.0);
    }
    if (e == 0.0) {
        ck_assert_msg(fabs(v[0]) < 1e-6 * 10.0, "normal velocity after %g", v[0]);
    }
    fb_world_destroy(w);
    fb_model_destroy(chain_m);
    fb_model_destroy(ball_m);
}

START_TEST(impact_conserves_momentum_and_energy) {
    ball_hits_chain(1.0, 0.0);
    ball_hits_chain(0.0, 0.0);
    ball_hits_chain(0.0, 0.8);
    ball_hits_chain(0.5, 0.5);
}
END_TEST

/* The ball thrown at the free chain (10 m/s down onto its middle) and 60 steps: the largest
 * relative momentum change of a step holding an impact (-1 if none) and of a contact-free
 * one. Returns the impacts. */
static long step_through_hit(fb_world* w, double* impact_change, double* free_drift) {
    fb_data* db = fb_world_data(w, 1);
    ck_place(db, fb_v3_make(0.6, 0.5, 0.02), fb_quat_identity());
    db->qd[4] = -10.0;
    fb_fv prev = total_momentum(w);
    const double scale = fb_v3_norm(prev.f);
    *impact_change = -1.0;
    *free_drift = 0.0;
    long impacts = 0;
    for (int k = 0; k < 60; k++) {
        ck_step(w);
        const fb_fv now = total_momentum(w);
        const double change = fmax(fb_v3_norm(fb_v3_sub(now.f, prev.f)),
                                   fb_v3_norm(fb_v3_sub(now.n, prev.n)) / 0.4) / scale;
        if (fb_world_get_stats(w)->impacts > impacts) {
            *impact_change = fmax(*impact_change, change);
        } else {
            *free_drift = fmax(*free_drift, change);
        }
        impacts = fb_world_get_stats(w)->impacts;
        prev = now;
    }
    return impacts;
}

/* The same through the step. The impact adds nothing, but semi-implicit Euler on body-frame
 * velocities drifts a tumbling chain's momentum by about (h w)^2 / 2 per step, so the step
 * holding the impact is held to the drift of the contact-free steps around it. */
START_TEST(stepping_through_a_hit_conserves_momentum) {
    fb_model *chain_m, *ball_m;
    fb_world* w = chain_and_ball(0.5, 0.6, &chain_m, &ball_m);
    fb_data* db = fb_world_data(w, 1);
    double impact_change, free_drift;
    const long impacts = step_through_hit(w, &impact_change, &free_drift);
    printf("stepping through a hit: %ld impact(s), momentum change in the impact step %.2g, "
           "largest in a contact-free step %.2g; ball vy %.3g m/s after\n",
           impacts, impact_change, free_drift, db->qd[4]);
    ck_assert_msg(impacts >= 1, "no impact");
    ck_assert_msg(db->qd[4] > -9.0, "the ball passed through (vy %g)", db->qd[4]);
    ck_assert_msg(impact_change <= fmax(2.0 * free_drift, 1e-9),
                  "the impact step changed momentum by %g (integrator drift %g)", impact_change,
                  free_drift);
    fb_world_destroy(w);
    fb_model_destroy(chain_m);
    fb_model_destroy(ball_m);
}
END_TEST

/* A hook that drives the chain (articulation 0): a torque on every dof at FB_HOOK_FORCES, and
 * a dof row asking the hinge (dof 6) for an acceleration at FB_HOOK_ROWS. */
static fb_status drive_chain(void* user, fb_world* w, fb_hook_phase phase, double t, double h,
                             fb_csys* cs, fb_error* err) {
    (void)user;
    (void)h;
    fb_data* d = fb_world_data(w, 0);
    if (phase == FB_HOOK_FORCES) {
        for (int j = 0; j < fb_world_model(w, 0)->nv; j++) {
            d->tau[j] = 0.3 * sin(1.7 * j + 5.0 * t);
        }
        return FB_OK;
    }
    fb_row row = dof_row(6, 2.0);
    row.id = 77;
    return fb_csys_add_row(cs, &row, err);
}

START_TEST(a_step_reports_the_impulses_it_applied) {
    fb_model *chain_m, *ball_m;
    fb_world* w = chain_and_ball(0.5, 0.6, &chain_m, &ball_m);
    fb_world_set_hook(w, drive_chain, NULL);
    fb_data* dc = fb_world_data(w, 0);
    fb_data* db = fb_world_data(w, 1);
    ck_place(db, fb_v3_make(0.6, 0.5, 0.02), fb_quat_identity());
    db->qd[4] = -10.0;
    const int nv = chain_m->nv;
    double q0[16], qd0[16], qdd[16], tau[16];
    int touching = 0, free_steps = 0;
    double worst_body = 0.0, worst_rnea = 0.0;
    for (int k = 0; k < 60; k++) {
        memcpy(q0, dc->q, (size_t)chain_m->nq * sizeof(double));
        memcpy(qd0, dc->qd, (size_t)nv * sizeof(double));
        const long halvings = fb_world_get_stats(w)->halvings;
        ck_step(w);
        const fb_v3 pair = fb_world_pair_impulse(w, 0, 1);
        fb_v3 sum = fb_v3_zero();
        for (int b = 0; b < chain_m->nbody; b++) {
            sum = fb_v3_add(sum, fb_world_body_impulse(w, 0, b, 1));
        }
        fb_v3 ball = fb_v3_zero();
        for (int b = 0; b < ball_m->nbody; b++) {
            ball = fb_v3_add(ball, fb_world_body_impulse(w, 1, b, 0));
        }
        if (fb_v3_norm(pair) > 0.0) {
            touching++;
            worst_body = fmax(worst_body, fb_v3_norm(fb_v3_sub(sum, pair)) / fb_v3_norm(pair));
            worst_body = fmax(worst_body, fb_v3_norm(fb_v3_add(ball, pair)) / fb_v3_norm(pair));
        } else {
            ck_assert(fb_v3_norm(sum) == 0.0 && fb_v3_norm(ball) == 0.0);
        }
        /* a step without contacts or halvings is one substep of dt: RNEA at its start with
         * the acceleration it took gives the joint forces that acted */
        if (fb_v3_norm(pair) == 0.0 && fb_world_get_stats(w)->contacts == 0 &&
            fb_world_get_stats(w)->halvings == halvings) {
            const double dt = fb_world_options(w)->dt;
            fb_data* d = ck_data(chain_m);
            memcpy(d->q, q0, (size_t)chain_m->nq * sizeof(double));
            memcpy(d->qd, qd0, (size_t)nv * sizeof(double));
            fb_velocity_rate(chain_m, qd0, dc->qd, dt, qdd); /* the step's acceleration */
            fb_rnea(chain_m, d, qdd, tau);
            const double* jimp = fb_world_joint_impulse(w, 0);
            double scale = 0.0;
            for (int j = 0; j < nv; j++) {
                scale = fmax(scale, fabs(tau[j]));
            }
            for (int j = 0; j < nv; j++) {
                worst_rnea = fmax(worst_rnea, fabs(jimp[j] / dt - tau[j]) / scale);
            }
            fb_data_destroy(d);
            free_steps++;
        }
    }
    printf("step impulses: %d steps touching, bodies' sum against the pair's %.2g; %d free "
           "steps, joint impulse / dt against RNEA %.2g\n",
           touching, worst_body, free_steps, worst_rnea);
    ck_assert_int_ge(touching, 1);
    ck_assert_int_ge(free_steps, 20);
    ck_assert_double_lt(worst_body, 1e-12);
    ck_assert_double_lt(worst_rnea, 1e-9);
    ck_assert_ptr_null(fb_world_joint_impulse(w, 2));
    ck_assert(fb_v3_norm(fb_world_body_impulse(w, 0, 99, 1)) == 0.0);
    fb_world_destroy(w);
    fb_model_destroy(chain_m);
    fb_model_destroy(ball_m);
}
END_TEST

/* A forces hook that clears every articulation's stage: the world then makes the positions
 * anew for phase 1 instead of reusing those its collision pass made. */
static fb_status forget_positions(void* user, fb_world* w, fb_hook_phase phase, double t,
                                  double h, fb_csys* cs, fb_error* err) {
    (void)user;
    (void)t;
    (void)h;
    (void)cs;
    (void)err;
    for (int k = 0; phase == FB_HOOK_FORCES && k < fb_world_nart(w); k++) {
        fb_world_data(w, k)->stage = 0;
    }
    return FB_OK;
}

/* The world reuses the positions its collision pass made for the next substep's contacts and
 * phase 1 (fb_aba_phase1_at_positions). The chain-and-ball hit stepped that way and stepped
 * with every position made anew (the stage cleared before each step and in a forces hook) ends
 * in bit-identical states, impact included. (After an impulse both redo only phase 1's velocity
 * terms, fb_aba_phase1_velocities, checked against a full phase 1 in test_dynamics.) */
START_TEST(reused_positions_give_bit_identical_steps) {
    fb_model *cm[2], *bm[2];
    fb_world* w[2];
    for (int v = 0; v < 2; v++) {
        w[v] = chain_and_ball(0.5, 0.6, &cm[v], &bm[v]);
        fb_data* db = fb_world_data(w[v], 1);
        ck_place(db, fb_v3_make(0.6, 0.5, 0.02), fb_quat_identity());
        db->qd[4] = -10.0;
    }
    fb_world_set_hook(w[1], forget_positions, NULL);
    for (int step = 0; step < 60; step++) {
        for (int k = 0; k < 2; k++) {
            fb_world_data(w[1], k)->stage = 0;
        }
        ck_step(w[0]);
        ck_step(w[1]);
    }
    ck_assert_int_ge(fb_world_get_stats(w[0])->impacts, 1);
    ck_assert_int_eq(fb_world_get_stats(w[0])->impacts, fb_world_get_stats(w[1])->impacts);
    for (int k = 0; k < 2; k++) {
        const fb_model* m = k == 0 ? cm[0] : bm[0];
        const fb_data* a = fb_world_data(w[0], k);
        const fb_data* b = fb_world_data(w[1], k);
        ck_assert(memcmp(a->q, b->q, (size_t)m->nq * sizeof(double)) == 0);
        ck_assert(memcmp(a->qd, b->qd, (size_t)m->nv * sizeof(double)) == 0);
    }
    for (int v = 0; v < 2; v++) {
        fb_world_destroy(w[v]);
        fb_model_destroy(cm[v]);
        fb_model_destroy(bm[v]);
    }
}
END_TEST

/* ---- self-collision ---------------------------------------------------------------------- */

/* Radius of the arm's and the post's capsules (m). */
#define SELF_R 0.04

/* A post and an arm of one articulation, both children of the world: the post (body 1) welded
 * at x = 0.3, a vertical capsule from y = -0.6 up to its top at y = -0.15; the arm (body 2) on
 * a hinge about z at the origin, a capsule from x = 0.05 to 0.6, released horizontal. */
static fb_model* arm_and_post(void) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(2, NULL, &err), &err);
    fb_body_def post = fb_default_body_def();
    post.name = "post";
    post.X_tree = fb_xf_xlt(fb_v3_make(0.3, 0.0, 0.0));
    int id;
    ck_assert_int_eq(fb_model_add_body(m, &post, &id, &err), FB_OK);
    fb_shape sh = ck_shape_capsule(SELF_R, fb_v3_make(0, -0.6, 0), fb_v3_make(0, -0.15, 0));
    sh.body = id;
    ck_assert_int_eq(fb_model_add_shape(m, &sh, &err), FB_OK);
    fb_body_def arm = fb_default_body_def();
    arm.name = "arm";
    arm.joint = FB_JOINT_REVOLUTE;
    sh = ck_shape_capsule(SELF_R, fb_v3_make(0.05, 0, 0), fb_v3_make(0.6, 0, 0));
    arm.inertia = fb_rbi_capsule(1000.0, SELF_R, sh.p0, sh.p1);
    ck_assert_int_eq(fb_model_add_body(m, &arm, &id, &err), FB_OK);
    sh.body = id;
    ck_assert_int_eq(fb_model_add_shape(m, &sh, &err), FB_OK);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

typedef struct arm_run {
    double deepest;     /* m, deepest post-arm overlap seen (narrow phase, every step) */
    double energy_rise; /* J, largest rise of KE + PE over its value at release */
    double angle;       /* rad below horizontal at the end */
    double speed;       /* rad/s at the end */
    double force;       /* N, normal force of the post-arm contact at the end */
    double lever;       /* m, distance along the arm from the hinge to the contact at the end */
} arm_run;

/* Swings the arm for `seconds` with the post-arm pair on or off (frictionless, e = 0). */
static arm_run swing_arm(const fb_model* m, bool self, double seconds) {
    fb_world_opts o = fb_default_world_opts();
    o.ground = false;
    fb_world* w = ck_world(1, &m, &o);
    fb_error err;
    ck_assert_int_eq(fb_world_set_material(w, 0, 0.0, 0.0, &err), FB_OK);
    ck_assert(!fb_world_self_collision(w, 0, 1, 2)); /* off by default */
    if (self) {
        /* post and arm are siblings, not parent and child: the convenience switches them on */
        ck_assert_int_eq(fb_world_set_self_collision_nonadjacent(w, 0, true, &err), FB_OK);
        ck_assert(fb_world_self_collision(w, 0, 2, 1));
    }
    fb_data* d = fb_world_data(w, 0);
    double ke, pe0;
    fb_kinematics(m, d);
    fb_energy(m, d, &ke, &pe0);
    arm_run run = {0.0, -INFINITY, 0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k < (int)(seconds / o.dt); k++) {
        ck_step(w);
        double pe;
        fb_kinematics(m, d);
        fb_energy(m, d, &ke, &pe);
        run.energy_rise = fmax(run.energy_rise, ke + pe - pe0);
        fb_contact c[4];
        int n = 0;
        ck_assert_int_eq(fb_collide_shape_pair(m, d, 0, 0, m, d, 0, 1, 0.0, c, &n, 4, &err),
                         FB_OK);
        for (int j = 0; j < n; j++) {
            run.deepest = fmax(run.deepest, c[j].depth);
        }
    }
    run.angle = -d->q[0];
    run.speed = d->qd[0];
    int n;
    const fb_contact* c = fb_world_contacts(w, &n);
    for (int j = 0; j < n; j++) {
        ck_assert(c[j].art_a == 0 && c[j].art_b == 0 && c[j].body_a == 1 && c[j].body_b == 2);
        run.force += fb_world_contact_force(w, j);
        /* the contact point's distance along the arm's axis (the lever of a normal force) */
        const fb_v3 u = fb_point_pos(m, d, 2, fb_v3_make(1, 0, 0)); /* the hinge is at 0 */
        run.lever = fb_v3_dot(fb_point_pos(m, d, 2, c[j].p_b), u);
    }
    ck_assert_int_eq(fb_world_get_stats(w)->max_penetration <= o.pen_tol, true);
    fb_world_destroy(w);
    return run;
}

/* The arm falls onto the post's top and stays there. Closed form: the arm's axis comes within
 * 2 r of the post's top P = (0.3, -0.15) at the angle theta* below horizontal with
 * 0.15 cos theta - 0.3 sin theta = 2 r; at rest there the post holds the arm's weight, the
 * moments about the hinge balancing: F (P . u) = m g c cos theta* (c: the arm's centre of mass
 * along it). Frictionless with e = 0, the hit ends the swing: the energy never rises above its
 * value at release. Without the pair (the default) the same arm swings through the post. */
START_TEST(arm_swings_onto_a_post_of_its_own_articulation) {
    fb_model* m = arm_and_post();
    const double phi = atan2(0.3, 0.15);
    const double theta = acos(2.0 * SELF_R / hypot(0.15, 0.3)) - phi;
    const double lever = 0.3 * cos(theta) + 0.15 * sin(theta);
    const double mass = m->I[2].m, c = 0.325;
    const double force = mass * G * c * cos(theta) / lever;
    const arm_run on = swing_arm(m, true, 2.0);
    printf("arm onto post, self-collision on: deepest %.3g m, largest energy change from "
           "release %+.3g J; rests at %.6f rad (closed form %.6f, %+.2g), %.2g rad/s; contact "
           "force %.6g N (closed form %.6g, %+.2g%%), lever %.6f m (%.6f)\n",
           on.deepest, on.energy_rise, on.angle, theta, on.angle - theta, on.speed, on.force,
           force, 100.0 * (on.force / force - 1.0), on.lever, lever);
    ck_assert_msg(on.deepest <= 1e-3, "penetration %g m beyond pen_tol", on.deepest);
    ck_assert_msg(on.energy_rise < 1e-3 * mass * G * c, "energy rose by %g J", on.energy_rise);
    fb_ck_near(on.angle, theta, 0.0, 1e-3);
    ck_assert_msg(fabs(on.speed) < 1e-3, "still moving at %g rad/s", on.speed);
    fb_ck_near(on.force, force, 1e-3, 0.0);
    fb_ck_near(on.lever, lever, 0.0, 1e-3);
    /* off (the default): the capsules pass through each other and the arm swings past the
     * vertical */
    const arm_run off = swing_arm(m, false, 2.0);
    printf("arm onto post, self-collision off: deepest %.3g m, swings to %.3f rad\n",
           off.deepest, off.angle);
    ck_assert_msg(off.deepest > 0.05, "the capsules did not overlap (%g m)", off.deepest);
    fb_model_destroy(m);
}
END_TEST

START_TEST(self_collision_table_checks_its_arguments) {
    fb_model* m = free_chain(); /* seg0 - seg1 - seg2 on bodies 1, 2, 3 */
    const fb_model* mc = m;
    fb_world* w = ck_world(1, &mc, NULL);
    fb_error err;
    for (int a = 1; a <= 3; a++) {
        for (int b = 1; b <= 3; b++) {
            ck_assert(!fb_world_self_collision(w, 0, a, b)); /* all off by default */
        }
    }
    ck_assert_int_eq(fb_world_set_self_collision(w, 1, 1, 3, true, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "art:") != NULL, "%s", err.msg);
    ck_assert_int_eq(fb_world_set_self_collision(w, 0, 0, 3, true, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "body_a:") != NULL, "%s", err.msg);
    ck_assert_int_eq(fb_world_set_self_collision(w, 0, 1, 4, true, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "body_b:") != NULL, "%s", err.msg);
    ck_assert_int_eq(fb_world_set_self_collision(w, 0, 2, 2, true, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "body_b:") != NULL, "%s", err.msg);
    ck_assert_int_eq(fb_world_set_self_collision_nonadjacent(w, -1, true, &err), FB_EINVAL);
    ck_assert_int_eq(fb_world_clear_self_collision_touching(w, 2, NULL, &err), FB_EINVAL);
    /* one pair, both orders */
    ck_assert_int_eq(fb_world_set_self_collision(w, 0, 3, 2, true, &err), FB_OK);
    ck_assert(fb_world_self_collision(w, 0, 2, 3) && fb_world_self_collision(w, 0, 3, 2));
    ck_assert_int_eq(fb_world_set_self_collision(w, 0, 2, 3, false, &err), FB_OK);
    ck_assert(!fb_world_self_collision(w, 0, 3, 2));
    /* not parent and child: only seg0 - seg2 */
    ck_assert_int_eq(fb_world_set_self_collision_nonadjacent(w, 0, true, &err), FB_OK);
    ck_assert(fb_world_self_collision(w, 0, 1, 3));
    ck_assert(!fb_world_self_collision(w, 0, 1, 2) && !fb_world_self_collision(w, 0, 2, 3));
    /* straight, seg0 and seg2 are 0.4 m apart: nothing to clear; folded onto each other
     * (hinge at 180 degrees) they overlap: cleared */
    fb_data* d = fb_world_data(w, 0);
    int cleared = -1;
    ck_assert_int_eq(fb_world_clear_self_collision_touching(w, 0, &cleared, &err), FB_OK);
    ck_assert_int_eq(cleared, 0);
    ck_assert(fb_world_self_collision(w, 0, 1, 3));
    d->q[7] = FB_PI;
    fb_quat_store(d->q + 8, fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), FB_PI));
    ck_assert_int_eq(fb_world_clear_self_collision_touching(w, 0, &cleared, &err), FB_OK);
    ck_assert_int_eq(cleared, 1);
    ck_assert(!fb_world_self_collision(w, 0, 1, 3));
    fb_world_destroy(w);
    fb_model_destroy(m);
}
END_TEST

/* The free chain folding onto itself in zero gravity: the middle hinge bent back by 150
 * degrees, the last segment swinging about its ball joint into the first. Contact forces and
 * impulses between two bodies of one articulation are internal: they must leave its linear and
 * angular momentum alone (the step holding the hit is held to the drift of the contact-free
 * steps, as above), and with e = 0 they can only take kinetic energy away. Returns the
 * deepest overlap of the first and last segments (narrow phase, every step). */
static double fold_chain(bool self, double* impact_change, double* free_drift, double* ke0,
                         double* ke1, long* impacts) {
    fb_model* m = free_chain();
    fb_world_opts o = fb_default_world_opts();
    o.ground = false;
    const fb_model* mc = m;
    fb_world* w = ck_world(1, &mc, &o);
    fb_error err;
    ck_assert_int_eq(fb_world_set_material(w, 0, 0.5, 0.0, &err), FB_OK);
    if (self) {
        ck_assert_int_eq(fb_world_set_self_collision(w, 0, 3, 1, true, &err), FB_OK);
    }
    fb_data* d = fb_world_data(w, 0);
    ck_place(d, fb_v3_zero(), fb_quat_identity());
    d->q[7] = 150.0 * DEG;
    fb_quat_store(d->q + 8, fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), 50.0 * DEG));
    d->qd[9] = 4.0; /* the last segment swings on towards the first */
    d->qd[0] = 0.3; /* and the whole chain tumbles a little */
    fb_fv prev = total_momentum(w);
    const double scale = fb_v3_norm(prev.f) + fb_v3_norm(prev.n) / 0.4;
    *ke0 = kinetic(m, d);
    *impact_change = -1.0;
    *free_drift = 0.0;
    *impacts = 0;
    double deepest = 0.0;
    for (int k = 0; k < (int)(1.0 / o.dt); k++) {
        ck_step(w);
        const fb_fv now = total_momentum(w);
        const double change = (fb_v3_norm(fb_v3_sub(now.f, prev.f)) +
                               fb_v3_norm(fb_v3_sub(now.n, prev.n)) / 0.4) / scale;
        if (fb_world_get_stats(w)->impacts > *impacts) {
            *impact_change = fmax(*impact_change, change);
        } else {
            *free_drift = fmax(*free_drift, change);
        }
        *impacts = fb_world_get_stats(w)->impacts;
        prev = now;
        fb_contact c[4];
        int n = 0;
        ck_assert_int_eq(fb_collide_shape_pair(m, d, 0, 0, m, d, 0, 2, 0.0, c, &n, 4, &err),
                         FB_OK);
        for (int j = 0; j < n; j++) {
            deepest = fmax(deepest, c[j].depth);
        }
    }
    *ke1 = kinetic(m, d);
    fb_world_destroy(w);
    fb_model_destroy(m);
    return deepest;
}

START_TEST(folding_chain_keeps_momentum_through_self_contact) {
    double impact_change, free_drift, ke0, ke1;
    long impacts;
    const double deepest = fold_chain(true, &impact_change, &free_drift, &ke0, &ke1, &impacts);
    printf("folding chain, self-collision on: %ld impact(s), deepest %.3g m; momentum change in "
           "impact steps %.2g, largest in a contact-free step %.2g; KE %.5g -> %.5g J\n",
           impacts, deepest, impact_change, free_drift, ke0, ke1);
    ck_assert_msg(impacts >= 1, "no impact");
    ck_assert_msg(deepest <= 1e-3, "penetration %g m beyond pen_tol", deepest);
    ck_assert_msg(impact_change <= fmax(2.0 * free_drift, 1e-9),
                  "an impact step changed momentum by %g (integrator drift %g)", impact_change,
                  free_drift);
    ck_assert_msg(ke1 < ke0, "kinetic energy rose from %g to %g J", ke0, ke1);
    const double through = fold_chain(false, &impact_change, &free_drift, &ke0, &ke1, &impacts);
    printf("folding chain, self-collision off: %ld impacts, deepest %.3g m, KE %.5g -> %.5g J\n",
           impacts, through, ke0, ke1);
    ck_assert_int_eq(impacts, 0);
    ck_assert_msg(through > 0.05, "the segments did not overlap (%g m)", through);
}
END_TEST

START_TEST(world_rejects_bad_options_and_reports_blowups) {
    fb_model* m = ball_model(0.1, 1000.0);
    const fb_model* mc = m;
    fb_world_opts o = fb_default_world_opts();
    o.dt = -1.0;
    fb_error err;
    ck_assert_ptr_null(fb_world_create(1, &mc, &o, NULL, &err));
    ck_assert_int_eq(err.code, FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "dt") != NULL, "%s", err.msg);
    fb_world* w = ck_world(1, &mc, NULL);
    ck_assert_int_eq(fb_world_set_material(w, 0, -1.0, 0.0, &err), FB_EINVAL);
    ck_assert_int_eq(fb_world_set_rolling(w, 0, -0.01, &err), FB_EINVAL);
    ck_assert_int_eq(fb_world_set_rolling(w, 0, 0.5, &err), FB_EINVAL);
    ck_assert_int_eq(fb_world_set_rolling(w, 1, 0.01, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "expected 0..0") != NULL, "%s", err.msg);
    /* a runaway: a huge force makes the ball exceed max_speed */
    fb_data* d = fb_world_data(w, 0);
    ck_place(d, fb_v3_make(0, 5, 0), fb_quat_identity());
    d->f_ext[1] = (fb_fv){fb_v3_zero(), fb_v3_make(1e9, 0, 0)};
    ck_assert_int_eq(fb_world_step(w, &err), FB_ENUMERIC);
    ck_assert_msg(strstr(err.msg, "t = ") && strstr(err.msg, "body"), "%s", err.msg);
    ck_assert(isfinite(d->qd[3]) && fabs(d->qd[3]) < 1.0); /* left at the last good state */
    fb_world_destroy(w);
    fb_model_destroy(m);
}
END_TEST

/* ---- sleeping ---------------------------------------------------------------------------- */

/* Rate of the sleeping scenes (Hz): the lead's simulations run at 240 Hz. */
#define SLEEP_HZ 240.0

/* A world of the damped bench humanoid (articulation 0; 1 N m s/rad, as test_alloc's) tipping
 * over from standing, at SLEEP_HZ with the given sleep_time, and a ball (articulation 1) if
 * given, parked 10 m up. */
static fb_world* tipping_humanoid(const fb_model* hm, const fb_model* ball, double sleep_time) {
    const fb_model* ms[2] = {hm, ball};
    fb_world_opts o = fb_default_world_opts();
    o.dt = 1.0 / SLEEP_HZ;
    o.sleep_time = sleep_time;
    fb_world* w = ck_world(ball ? 2 : 1, ms, &o);
    fb_data* d = fb_world_data(w, 0);
    scene_humanoid_standing(hm, d->q);
    d->q[1] += 0.05;
    d->qd[0] = 1.0; /* tipping over */
    if (ball) {
        ck_place(fb_world_data(w, 1), fb_v3_make(0.0, 10.0, 0.0), fb_quat_identity());
    }
    return w;
}

/* The deepest overlap (m) of articulation art's shapes with the ground, made on a scratch data
 * at its q (the world's data untouched); -1 when none is within 1 cm. */
static double ground_depth(fb_world* w, int art) {
    const fb_model* m = fb_world_model(w, art);
    fb_data* d = ck_data(m);
    memcpy(d->q, fb_world_data(w, art)->q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, d);
    fb_contact c[64];
    int n = 0;
    fb_error err;
    ck_assert_int_eq(fb_collide_plane(m, d, art, fb_ground_plane(), 0.01, c, &n, 64, &err), FB_OK);
    double deepest = -1.0;
    for (int k = 0; k < n; k++) {
        deepest = fmax(deepest, c[k].depth);
    }
    fb_data_destroy(d);
    return deepest;
}

/* Steps w until articulation art sleeps, for at most `seconds`; returns the kinetic energy
 * (J, fb_energy) of its last awake state, or fails the test. */
static double step_until_asleep(fb_world* w, int art, double seconds) {
    const fb_model* m = fb_world_model(w, art);
    fb_data* d = fb_world_data(w, art);
    double ke = INFINITY;
    const double t_end = fb_world_time(w) + seconds;
    while (!fb_world_asleep(w, art)) {
        ck_assert_msg(fb_world_time(w) < t_end, "not asleep after %g s", seconds);
        ke = kinetic(m, d);
        ck_step(w);
    }
    return ke;
}

START_TEST(resting_humanoid_falls_asleep_and_costs_nothing) {
    fb_model* hm = ck_damped_humanoid(1.0);
    fb_world* w = tipping_humanoid(hm, NULL, 0.5);
    fb_data* d = fb_world_data(w, 0);
    fb_error err;
    ck_assert_int_eq(fb_world_set_sleep(w, 0, true, &err), FB_OK);
    /* the fall: every substep runs ABA and solves the contacts */
    for (int k = 0; k < (int)(1.5 * SLEEP_HZ); k++) {
        ck_step(w);
        ck_assert(!fb_world_asleep(w, 0));
    }
    const fb_world_stats* st = fb_world_get_stats(w);
    ck_assert_int_eq(st->aba_calls, st->substeps);
    const int rows_lying = st->rows;
    ck_assert_int_ge(rows_lying, 30); /* lying on the ground: 10 contacts and more */
    const double ke = step_until_asleep(w, 0, 3.0);
    const double t_sleep = fb_world_time(w);
    const double depth = ground_depth(w, 0);
    printf("humanoid asleep at t = %.3f s: kinetic energy before %.2e J, %d rows while lying, "
           "deepest overlap %.2e m\n",
           t_sleep, ke, rows_lying, depth);
    /* at rest on the ground (not hanging in the air, not sunk), velocities exactly zero */
    ck_assert_msg(ke < 1e-3, "kinetic energy %g J when it fell asleep", ke);
    ck_assert_msg(depth > -fb_world_options(w)->contact_margin &&
                      depth < fb_world_options(w)->pen_tol,
                  "deepest overlap %g m", depth);
    for (int j = 0; j < hm->nv; j++) {
        ck_assert(d->qd[j] == 0.0 && d->qdd[j] == 0.0);
    }
    ck_assert_int_eq(st->sleeping, 1);
    /* asleep: the same q bit for bit, no ABA, no contacts, no rows; time goes on */
    double* q0 = malloc((size_t)hm->nq * sizeof(double));
    ck_assert_ptr_nonnull(q0);
    memcpy(q0, d->q, (size_t)hm->nq * sizeof(double));
    const long aba0 = st->aba_calls, sub0 = st->substeps;
    for (int k = 0; k < (int)SLEEP_HZ; k++) {
        ck_step(w);
        ck_assert(memcmp(q0, d->q, (size_t)hm->nq * sizeof(double)) == 0);
        ck_assert(fb_world_asleep(w, 0));
        ck_assert_int_eq(st->rows, 0);
        ck_assert_int_eq(st->contacts, 0);
    }
    ck_assert_int_eq(st->aba_calls, aba0);
    ck_assert_int_eq(st->substeps - sub0, (long)SLEEP_HZ);
    fb_ck_near(d->time, fb_world_time(w), 1e-12, 0.0);
    fb_ck_near(fb_world_time(w), t_sleep + 1.0, 1e-9, 0.0);
    printf("asleep for 1 s: %ld ABA runs (before: one per substep, %ld), 0 rows (before: %d)\n",
           st->aba_calls - aba0, aba0, rows_lying);
    free(q0);
    fb_world_destroy(w);
    fb_model_destroy(hm);
}
END_TEST

/* The ball's linear momentum (world). */
static fb_v3 linear_momentum(fb_world* w, int art) {
    fb_data* d = fb_world_data(w, art);
    fb_kinematics(fb_world_model(w, art), d);
    return fb_momentum(fb_world_model(w, art), d).f;
}

START_TEST(ball_wakes_a_sleeping_body_without_sinking_it) {
    fb_model* hm = ck_damped_humanoid(1.0);
    const double mass = 2.0, r = 0.11, speed = 6.0;
    fb_model* bm = ball_model(r, mass / (4.0 / 3.0 * FB_PI * r * r * r));
    fb_error err;
    ck_assert_int_eq(fb_model_set_gravity(bm, fb_v3_zero(), &err), FB_OK); /* it floats */
    fb_world* w = tipping_humanoid(hm, bm, 0.5);
    ck_assert_int_eq(fb_world_set_material(w, 1, 0.0, 0.0, &err), FB_OK); /* no spin */
    ck_assert_int_eq(fb_world_set_sleep(w, 0, true, &err), FB_OK);
    (void)step_until_asleep(w, 0, 4.0);
    const fb_world_stats* st = fb_world_get_stats(w);
    ck_assert_int_eq(st->wakeups, 0);
    /* thrown down onto the pelvis from 45 cm above it */
    fb_data* dh = fb_world_data(w, 0);
    fb_data* db = fb_world_data(w, 1);
    fb_kinematics_pos(hm, dh);
    const fb_v3 pelvis = fb_point_pos(hm, dh, 1, fb_v3_zero());
    ck_place(db, fb_v3_add(pelvis, fb_v3_make(0.0, 0.45, 0.0)), fb_quat_identity());
    db->qd[4] = -speed;
    fb_v3 dp = fb_v3_zero(), imp = fb_v3_zero();
    double deepest = -1.0, woke_at = -1.0;
    for (int k = 0; k < (int)(0.5 * SLEEP_HZ); k++) {
        const fb_v3 p0 = linear_momentum(w, 1);
        ck_step(w);
        /* the ball's own change of momentum, less what the ground gave it (none expected) */
        const fb_v3 step_dp = fb_v3_sub(fb_v3_sub(linear_momentum(w, 1), p0),
                                        fb_world_pair_impulse(w, 1, -1));
        const fb_v3 step_imp = fb_world_pair_impulse(w, 0, 1);
        dp = fb_v3_add(dp, step_dp);
        imp = fb_v3_add(imp, step_imp);
        if (woke_at < 0.0 && !fb_world_asleep(w, 0)) {
            woke_at = fb_world_time(w);
        }
        if (woke_at >= 0.0) {
            deepest = fmax(deepest, ground_depth(w, 0));
        }
    }
    const double rel = fb_v3_norm(fb_v3_add(dp, imp)) / fb_v3_norm(imp);
    printf("ball on the sleeper: woke at t = %.4f s, impulse %.4f N s (ball %.4f N s), "
           "relative difference %.2e; deepest overlap with the ground after %.2e m "
           "(pen_tol %g)\n",
           woke_at, fb_v3_norm(imp), fb_v3_norm(dp), rel, deepest, fb_world_options(w)->pen_tol);
    ck_assert_msg(woke_at >= 0.0, "the ball did not wake the body");
    ck_assert_int_eq(st->wakeups, 1);
    /* a 2 kg ball at 6 m/s stopped by the body (e = 0) gives it m v at least, the body's
     * recoil less than that again */
    ck_assert_msg(fb_v3_norm(imp) > 0.5 * mass * speed, "impulse %g N s", fb_v3_norm(imp));
    ck_assert_msg(rel < 1e-9, "ball momentum change %g vs impulse %g (relative %g)",
                  fb_v3_norm(dp), fb_v3_norm(imp), rel);
    /* pen_tol bounds any landing (the backtracking); a body woken with its ground contacts
     * in the same substep stays within the residual of one at rest, micrometres (made only
     * after that substep, it sank 0.58 mm) */
    ck_assert_msg(deepest < 0.1 * fb_world_options(w)->pen_tol, "sank %g m into the ground",
                  deepest);
    fb_world_destroy(w);
    fb_model_destroy(bm);
    fb_model_destroy(hm);
}
END_TEST

START_TEST(sleep_not_allowed_never_sleeps_and_allowing_changes_no_bit) {
    fb_model* hm = ck_damped_humanoid(1.0);
    fb_error err;
    /* A: not allowed; B: allowed (falls asleep near 3.6 s); C: allowed, but sleep_time 1e9 */
    fb_world* w[3];
    for (int v = 0; v < 3; v++) {
        w[v] = tipping_humanoid(hm, NULL, v == 2 ? 1e9 : 0.5);
    }
    ck_assert_int_eq(fb_world_set_sleep(w[1], 0, true, &err), FB_OK);
    ck_assert_int_eq(fb_world_set_sleep(w[2], 0, true, &err), FB_OK);
    const size_t qb = (size_t)hm->nq * sizeof(double), vb = (size_t)hm->nv * sizeof(double);
    const int steps = (int)(4.5 * SLEEP_HZ);
    int compared = 0;
    for (int k = 0; k < steps; k++) {
        for (int v = 0; v < 3; v++) {
            ck_step(w[v]);
        }
        const fb_data* a = fb_world_data(w[0], 0);
        ck_assert(!fb_world_asleep(w[0], 0) && !fb_world_asleep(w[2], 0));
        for (int v = 1; v < 3; v++) {
            const fb_data* b = fb_world_data(w[v], 0);
            if (!fb_world_asleep(w[v], 0)) { /* awake, moving or not: the same bits */
                ck_assert(memcmp(a->q, b->q, qb) == 0 && memcmp(a->qd, b->qd, vb) == 0);
                compared++;
            }
        }
    }
    const fb_world_stats* sa = fb_world_get_stats(w[0]);
    ck_assert_int_eq(sa->sleeping, 0);
    ck_assert_int_eq(sa->aba_calls, sa->substeps);
    ck_assert(fb_world_asleep(w[1], 0)); /* the allowed one did fall asleep */
    printf("not allowed: awake after 4.5 s, %ld ABA runs in %ld substeps; allowed: bit-identical "
           "in the %d awake steps compared\n",
           sa->aba_calls, sa->substeps, compared);
    for (int v = 0; v < 3; v++) {
        fb_world_destroy(w[v]);
    }
    fb_model_destroy(hm);
}
END_TEST

/* A hook that adds one joint row on articulation 0 at FB_HOOK_ROWS; with `wake` set it wakes
 * articulation 0 at FB_HOOK_FORCES first. */
typedef struct row_hook {
    bool wake;
    int rows_added;
} row_hook;

static fb_status add_row_on_0(void* user, fb_world* w, fb_hook_phase phase, double t, double h,
                              fb_csys* cs, fb_error* err) {
    (void)t;
    (void)h;
    row_hook* rh = user;
    if (phase == FB_HOOK_FORCES) {
        return rh->wake ? fb_world_wake(w, 0, err) : FB_OK;
    }
    fb_row row = fb_default_row();
    row.type = FB_ROW_DOF;
    row.art = 0;
    row.dof = 0;
    row.lo = -1.0;
    row.hi = 1.0;
    const fb_status s = fb_csys_add_row(cs, &row, err);
    rh->rows_added += s == FB_OK;
    return s;
}

/* A box resting on the ground with a ball (r 5 cm) resting on top: an island. */
static fb_world* box_and_ball(fb_model** box, fb_model** ball) {
    *box = box_model(fb_v3_make(0.4, 0.2, 0.3));
    *ball = ball_model(0.05, 1000.0);
    const fb_model* ms[2] = {*box, *ball};
    fb_world_opts o = fb_default_world_opts();
    o.dt = 1.0 / SLEEP_HZ;
    fb_world* w = ck_world(2, ms, &o);
    ck_place(fb_world_data(w, 0), fb_v3_make(0.0, 0.1, 0.0), fb_quat_identity());
    ck_place(fb_world_data(w, 1), fb_v3_make(0.05, 0.25, 0.0), fb_quat_identity());
    return w;
}

/* An island sleeps whole: a box under a ball that may not sleep stays awake (asleep, the
 * ball's contact would wake it at once); when both may, they fall asleep in the same step, and
 * waking the ball wakes the box through their contact. */
START_TEST(an_island_sleeps_and_wakes_whole) {
    fb_model *box, *ball;
    fb_error err;
    fb_world* w = box_and_ball(&box, &ball);
    const fb_world_stats* st = fb_world_get_stats(w);
    ck_assert_int_eq(fb_world_set_sleep(w, 0, true, &err), FB_OK);
    for (int k = 0; k < (int)(2.0 * SLEEP_HZ); k++) {
        ck_step(w);
        ck_assert_msg(!fb_world_asleep(w, 0), "the box slept under an awake ball");
    }
    ck_assert_int_eq(st->wakeups, 0);
    fb_world_destroy(w);
    fb_model_destroy(box);
    fb_model_destroy(ball);

    w = box_and_ball(&box, &ball);
    st = fb_world_get_stats(w);
    ck_assert_int_eq(fb_world_set_sleep(w, 0, true, &err), FB_OK);
    ck_assert_int_eq(fb_world_set_sleep(w, 1, true, &err), FB_OK);
    (void)step_until_asleep(w, 0, 2.0);
    ck_assert(fb_world_asleep(w, 1)); /* in the same step */
    ck_assert_int_eq(st->sleeping, 2);
    ck_step(w);
    ck_assert_int_eq(st->contacts, 0); /* asleep, not even the ball on the box is made */
    ck_assert_int_eq(fb_world_wake(w, 1, &err), FB_OK);
    ck_step(w);
    ck_assert(!fb_world_asleep(w, 0) && !fb_world_asleep(w, 1));
    ck_assert_int_eq(st->wakeups, 2);
    ck_assert_int_eq(st->sleeping, 0);
    fb_world_destroy(w);
    fb_model_destroy(box);
    fb_model_destroy(ball);
}
END_TEST

START_TEST(sleepers_wake_when_moved_told_or_driven) {
    fb_model* bm = box_model(fb_v3_make(0.4, 0.2, 0.3));
    const fb_model* mc = bm;
    fb_error err;
    fb_world_opts o = fb_default_world_opts();
    o.sleep_speed = -1.0;
    ck_assert_ptr_null(fb_world_create(1, &mc, &o, NULL, &err));
    ck_assert_msg(err.code == FB_EINVAL && strstr(err.msg, "sleep_speed"), "%s", err.msg);
    o = fb_default_world_opts();
    o.sleep_time = NAN;
    ck_assert_ptr_null(fb_world_create(1, &mc, &o, NULL, &err));
    ck_assert_msg(err.code == FB_EINVAL && strstr(err.msg, "sleep_time"), "%s", err.msg);

    /* a box dropped flat from 1 cm */
    o = fb_default_world_opts();
    o.dt = 1.0 / SLEEP_HZ;
    fb_world* w = ck_world(1, &mc, &o);
    fb_data* d = fb_world_data(w, 0);
    ck_place(d, fb_v3_make(0.0, 0.11, 0.0), fb_quat_identity());
    const fb_world_stats* st = fb_world_get_stats(w);
    ck_assert_int_eq(fb_world_set_sleep(w, 1, true, &err), FB_EINVAL);
    ck_assert_msg(strstr(err.msg, "art"), "%s", err.msg);
    ck_assert_int_eq(fb_world_wake(w, -1, &err), FB_EINVAL);
    ck_assert(!fb_world_asleep(w, 3) && !fb_world_asleep(w, -1) && !fb_world_asleep(w, 0));
    ck_assert_int_eq(fb_world_set_sleep(w, 0, true, &err), FB_OK);
    (void)step_until_asleep(w, 0, 2.0);

    /* the caller lifts it 1 cm: it wakes and falls; pushed sideways, it wakes and slides */
    d->q[1] += 0.01;
    ck_step(w);
    ck_assert(!fb_world_asleep(w, 0));
    ck_assert_int_eq(st->wakeups, 1);
    ck_assert(d->qd[4] < 0.0);
    (void)step_until_asleep(w, 0, 2.0);
    d->qd[3] = 0.2;
    ck_step(w);
    ck_assert(!fb_world_asleep(w, 0));
    ck_assert_int_eq(st->wakeups, 2);
    /* fb_world_wake: awake for sleep_time at least before it sleeps again */
    (void)step_until_asleep(w, 0, 2.0);
    ck_assert_int_eq(fb_world_wake(w, 0, &err), FB_OK);
    ck_assert(!fb_world_asleep(w, 0));
    ck_assert_int_eq(st->wakeups, 3);
    const double t_woken = fb_world_time(w);
    (void)step_until_asleep(w, 0, 2.0);
    ck_assert_double_ge(fb_world_time(w) - t_woken, o.sleep_time - 1e-9);

    /* a hook's row on the sleeper is refused, and the step leaves the state as it was */
    row_hook rh = {false, 0};
    fb_world_set_hook(w, add_row_on_0, &rh);
    ck_assert_int_eq(fb_world_step(w, &err), FB_ESTATE);
    ck_assert_msg(strstr(err.msg, "asleep") && strstr(err.msg, "articulation 0"), "%s",
                  err.msg);
    ck_assert(fb_world_asleep(w, 0));
    ck_assert_int_eq(rh.rows_added, 0);
    /* a hook that wakes it at FB_HOOK_FORCES drives it in the same substep */
    rh.wake = true;
    const long sub0 = st->substeps;
    ck_step(w);
    ck_assert(!fb_world_asleep(w, 0));
    ck_assert_int_ge(rh.rows_added, 1);
    ck_assert_int_eq(rh.rows_added, st->substeps - sub0); /* one in each substep */
    ck_assert_int_eq(st->wakeups, 4);
    fb_world_set_hook(w, NULL, NULL);

    /* disallowed: wakes (if asleep) and stays awake */
    (void)step_until_asleep(w, 0, 2.0);
    ck_assert_int_eq(fb_world_set_sleep(w, 0, false, &err), FB_OK);
    ck_assert(!fb_world_asleep(w, 0));
    ck_assert_int_eq(st->wakeups, 5);
    ck_assert_int_eq(st->sleeping, 0);
    for (int k = 0; k < (int)(2.0 * SLEEP_HZ); k++) {
        ck_step(w);
        ck_assert(!fb_world_asleep(w, 0));
    }
    fb_world_reset_stats(w);
    ck_assert_int_eq(st->sleeping, 0);
    fb_world_destroy(w);
    fb_model_destroy(bm);
}
END_TEST

/* ---- the solver's tolerance ----------------------------------------------------------------- */

/* What contacts must get right, from one set of world options: forces against closed forms
 * (relative to the weight they carry), the friction cone, momentum through a hit, and where
 * the bodies end up (to compare two option sets). */
typedef struct contact_results {
    double rest;   /* box resting flat, 2 s: |sum of the contact forces - m g| / m g */
    double slope;  /* box stuck on a 20 deg slope (mu 0.5), 2 s: |total force - m g up| / m g */
    double normal; /* its normal part against m g cos 20 deg, relative */
    double cone;   /* largest |friction row| - mu x its normal multiplier, N (<= 0 inside) */
    double stand;  /* standing humanoid (PD) after 0.5 s more: |sum of contact forces - M g -
                      dP/dt| / M g, the momentum's rate over the last step */
    fb_v3 stand_f; /* that sum / M g */
    double hit;    /* free chain hit by a ball, zero gravity: momentum change of the impact
                      step over the largest of a contact-free step */
    double sweeps; /* PGS sweeps per step, the humanoid's */
    fb_v3 box, slope_box, pelvis; /* positions at the end */
} contact_results;

/* The sum of the world's point rows' forces (lambda n) on articulation 0, from the last
 * substep's system; with `cone`, the largest excess of a friction row over mu lambda_n. */
static fb_v3 contact_force_sum(const fb_world* w, double* cone) {
    const fb_csys* cs = fb_world_csys(w);
    fb_v3 f = fb_v3_zero();
    for (int r = 0; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        if (row->type == FB_ROW_POINT && row->art == 0) {
            f = fb_v3_axpy(f, cs->lambda[r], row->n);
        }
        if (cone && row->friction_of >= 0) {
            *cone = fmax(*cone, fabs(cs->lambda[r]) - row->mu * cs->lambda[row->friction_of]);
        }
    }
    return f;
}

static contact_results contact_results_with(const fb_world_opts* base) {
    contact_results out;
    memset(&out, 0, sizeof out);
    out.cone = -INFINITY;
    /* the box resting on its 0.4 x 0.3 face */
    fb_model* box = box_model(fb_v3_make(0.4, 0.2, 0.3));
    const fb_model* mc = box;
    const double mg = fb_model_mass(box) * G;
    fb_world* w = ck_world(1, &mc, base);
    ck_place(fb_world_data(w, 0), fb_v3_make(0.3, 0.1, -0.2), fb_quat_identity());
    for (int k = 0; k < (int)(2.0 / base->dt); k++) {
        ck_step(w);
    }
    out.rest = fb_v3_norm(fb_v3_sub(contact_force_sum(w, NULL), fb_v3_make(0, mg, 0))) / mg;
    out.box = body_pos(fb_world_data(w, 0));
    fb_world_destroy(w);
    /* the same box on a 20 degree slope, mu 0.5: it sticks */
    const double theta = 20 * DEG, mu = 0.5;
    fb_world_opts o = *base;
    o.plane.n = fb_v3_make(-sin(theta), cos(theta), 0.0);
    o.ground_mu = mu;
    w = ck_world(1, &mc, &o);
    fb_error err;
    ck_assert_int_eq(fb_world_set_material(w, 0, mu, 0.0, &err), FB_OK);
    ck_place(fb_world_data(w, 0), fb_v3_scale(o.plane.n, 0.1),
             fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), theta));
    for (int k = 0; k < (int)(2.0 / o.dt); k++) {
        ck_step(w);
    }
    const fb_v3 f = contact_force_sum(w, &out.cone);
    out.slope = fb_v3_norm(fb_v3_sub(f, fb_v3_make(0, mg, 0))) / mg;
    out.normal = fabs(fb_v3_dot(f, o.plane.n) / (mg * cos(theta)) - 1.0);
    out.slope_box = body_pos(fb_world_data(w, 0));
    fb_world_destroy(w);
    fb_model_destroy(box);
    /* the benchmark's standing humanoid: settled, then 0.5 s more */
    fb_model* hm = NULL;
    stand_ctl* ctl = malloc(sizeof *ctl);
    ck_assert(ctl != NULL);
    w = stand_world(&hm, ctl, base, &err);
    ck_assert_msg(w != NULL, "%s", err.msg);
    const double Mg = fb_model_mass(hm) * G;
    long sweeps = 0;
    const int nstand = 500;
    fb_fv p0 = fb_fv_zero();
    for (int k = 0; k < nstand; k++) {
        p0 = total_momentum(w);
        ck_step(w);
        sweeps += fb_world_get_stats(w)->iterations;
    }
    const fb_v3 dp = fb_v3_scale(fb_v3_sub(total_momentum(w).f, p0.f), 1.0 / STAND_DT);
    out.stand_f = fb_v3_scale(contact_force_sum(w, &out.cone), 1.0 / Mg);
    out.stand = fb_v3_norm(fb_v3_sub(out.stand_f, fb_v3_scale(fb_v3_add(fb_v3_make(0, Mg, 0), dp), 1.0 / Mg)));
    out.sweeps = (double)sweeps / nstand;
    out.pelvis = body_pos(fb_world_data(w, 0));
    fb_world_destroy(w);
    fb_model_destroy(hm);
    free(ctl);
    /* a ball hits the free chain (as stepping_through_a_hit_conserves_momentum) */
    fb_model *chain_m, *ball_m;
    w = chain_and_ball_opts(0.5, 0.6, base, &chain_m, &ball_m);
    double impact_change, free_drift;
    ck_assert(step_through_hit(w, &impact_change, &free_drift) >= 1);
    out.hit = impact_change / fmax(free_drift, 1e-300);
    fb_world_destroy(w);
    fb_model_destroy(chain_m);
    fb_model_destroy(ball_m);
    return out;
}

/* The world's PGS stops at 1e-8 of the largest multiplier (fb_default_world_opts' rel_tol)
 * where it stopped at 1e-10 N alone: the contact results against their closed forms with
 * both, and how far the bodies end up from the tight solve's. Contact forces sum to the
 * weight they carry (a box resting flat, a box stuck on a slope, whose friction and normal
 * forces sum to m g up and whose normal part is m g cos theta; the standing humanoid: its
 * total weight) to 1e-7 of it, friction rows stay within mu times their normal multiplier
 * exactly, a hit changes the momentum no more than a contact-free step (as with the tight
 * solve), and every body ends within 1e-9 m of where the tight solve puts it. */
START_TEST(pgs_relative_tolerance_keeps_contact_results) {
    fb_world_opts tight = fb_default_world_opts();
    tight.pgs.rel_tol = 0.0;
    const fb_world_opts def = fb_default_world_opts();
    ck_assert(def.pgs.rel_tol > 0.0 && def.pgs.tol == tight.pgs.tol);
    const contact_results a = contact_results_with(&tight), b = contact_results_with(&def);
    const double moved =
        fmax(fmax(fb_v3_norm(fb_v3_sub(a.box, b.box)), fb_v3_norm(fb_v3_sub(a.slope_box, b.slope_box))),
             fb_v3_norm(fb_v3_sub(a.pelvis, b.pelvis)));
    printf("PGS tolerance, tight (%g N) -> default (rel %g): resting box force %.2e -> "
           "%.2e, slope force %.2e -> %.2e (normal %.2e -> %.2e), cone excess %.2e -> %.2e N, "
           "standing humanoid force %.2e -> %.2e (%.1f -> %.1f sweeps a step), hit momentum / "
           "free drift %.2f -> %.2f; bodies apart by %.2e m\n",
           tight.pgs.tol, def.pgs.rel_tol, a.rest, b.rest, a.slope, b.slope, a.normal, b.normal, a.cone, b.cone, a.stand, b.stand,
           a.sweeps, b.sweeps, a.hit, b.hit, moved);
    const contact_results* both[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        const contact_results* c = both[k];
        ck_assert_msg(c->rest < 1e-7 && c->slope < 1e-7 && c->normal < 1e-7 && c->stand < 1e-6,
                      "%s: forces off their closed forms (%g %g %g %g)", k ? "default" : "tight",
                      c->rest, c->slope, c->normal, c->stand);
        ck_assert_msg(c->cone <= 0.0, "friction outside its cone by %g N", c->cone);
        ck_assert_msg(c->hit <= 2.0, "the hit changed momentum %g x a free step's drift", c->hit);
    }
    const double dstand = fb_v3_norm(fb_v3_sub(a.stand_f, b.stand_f));
    printf("standing humanoid: contact forces of the two solves apart by %.2e of its weight\n",
           dstand);
    ck_assert_msg(dstand < 1e-7, "the humanoid's contact forces differ by %g of its weight",
                  dstand);
    ck_assert_msg(moved < 1e-9, "the bodies end %g m from the tight solve's", moved);
}
END_TEST

static Suite* world_suite(void) {
    Suite* s = suite_create("world");
    TCase* tc = tcase_create("scenarios");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, box_rests_on_flat_ground);
    tcase_add_test(tc, box_on_slope_sticks_or_slides);
    tcase_add_test(tc, ball_on_slope_rolls_or_rests_by_its_rolling_resistance);
    tcase_add_test(tc, spinning_ball_keeps_its_energy);
    tcase_add_test(tc, joint_friction_holds_slows_and_stops_a_rod);
    tcase_add_test(tc, ball_bounces_to_e_squared);
    tcase_add_test(tc, ragdoll_comes_to_rest);
    tcase_add_test(tc, a_copied_world_steps_on_alike);
    tcase_add_test(tc, hinge_chain_stays_within_limits);
    tcase_add_test(tc, ball_joint_stops_at_its_ellipse);
    tcase_add_test(tc, hinge_stops_at_both_ends);
    tcase_add_test(tc, driven_joint_stops_with_the_hook_rows);
    tcase_add_test(tc, ball_joint_chain_stays_within_cone_and_twist);
    tcase_add_test(tc, projection_brings_joints_back_within_their_ranges);
    tcase_add_test(tc, impact_conserves_momentum_and_energy);
    tcase_add_test(tc, stepping_through_a_hit_conserves_momentum);
    tcase_add_test(tc, a_step_reports_the_impulses_it_applied);
    tcase_add_test(tc, reused_positions_give_bit_identical_steps);
    tcase_add_test(tc, arm_swings_onto_a_post_of_its_own_articulation);
    tcase_add_test(tc, self_collision_table_checks_its_arguments);
    tcase_add_test(tc, folding_chain_keeps_momentum_through_self_contact);
    tcase_add_test(tc, world_rejects_bad_options_and_reports_blowups);
    tcase_add_test(tc, resting_humanoid_falls_asleep_and_costs_nothing);
    tcase_add_test(tc, ball_wakes_a_sleeping_body_without_sinking_it);
    tcase_add_test(tc, sleep_not_allowed_never_sleeps_and_allowing_changes_no_bit);
    tcase_add_test(tc, sleepers_wake_when_moved_told_or_driven);
    tcase_add_test(tc, an_island_sleeps_and_wakes_whole);
    tcase_add_test(tc, pgs_relative_tolerance_keeps_contact_results);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(world_suite());
}
