/* The viewer's GL-free parts: ray casts against spheres, capsules and boxes (closed-form
 * distances), picking the nearest body of a posed model, the camera's pixel rays, which must
 * invert its projection. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "camera.h"
#include "pick.h"
#include "support.h"
#include "vmath.h"

#define TOL 1e-12

static const fb_m3 IDENT = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};

/* Rotation by angle a about +Y, row-major. */
static fb_m3 rot_y(double a) {
    return (fb_m3){{{cos(a), 0, sin(a)}, {0, 1, 0}, {-sin(a), 0, cos(a)}}};
}

START_TEST(sphere_distances) {
    double t;
    fb_v3 n;
    /* head-on: enters at distance - radius, normal facing the ray */
    ck_assert(pick_sphere(v3(0, 0, 5), v3(0, 0, -1), v3(0, 0, 1), 0.5, &t, &n));
    fb_ck_near(t, 3.5, 0, TOL);
    fb_ck_near(n.z, 1.0, 0, TOL);
    /* off-centre by h: t = d - sqrt(r^2 - h^2) */
    ck_assert(pick_sphere(v3(0.3, 0, 5), v3(0, 0, -1), v3(0, 0, 0), 0.5, &t, &n));
    fb_ck_near(t, 5.0 - 0.4, 0, TOL);
    /* passes beside, and lies behind the origin */
    ck_assert(!pick_sphere(v3(0.51, 0, 5), v3(0, 0, -1), v3(0, 0, 0), 0.5, &t, &n));
    ck_assert(!pick_sphere(v3(0, 0, 5), v3(0, 0, 1), v3(0, 0, 0), 0.5, &t, &n));
    /* starts inside */
    ck_assert(pick_sphere(v3(0.1, 0, 0), v3(0, 0, 1), v3(0, 0, 0), 0.5, &t, &n));
    fb_ck_near(t, 0.0, 0, 0);
}
END_TEST

START_TEST(capsule_distances) {
    const fb_v3 p0 = v3(0, -1, 0), p1 = v3(0, 1, 0);
    double t;
    fb_v3 n;
    /* side of the cylinder */
    ck_assert(pick_capsule(v3(5, 0.5, 0), v3(-1, 0, 0), p0, p1, 0.2, &t, &n));
    fb_ck_near(t, 4.8, 0, TOL);
    fb_ck_near(n.x, 1.0, 0, TOL);
    /* along the axis onto the cap: d - (half length + r) */
    ck_assert(pick_capsule(v3(0, 5, 0), v3(0, -1, 0), p0, p1, 0.2, &t, &n));
    fb_ck_near(t, 5.0 - 1.2, 0, TOL);
    fb_ck_near(n.y, 1.0, 0, TOL);
    /* just past the rounded end: the cap sphere, not the cylinder */
    const double y = 1.1, r = 0.2;
    ck_assert(pick_capsule(v3(5, y, 0), v3(-1, 0, 0), p0, p1, r, &t, &n));
    fb_ck_near(t, 5.0 - sqrt(r * r - (y - 1.0) * (y - 1.0)), 0, TOL);
    /* beyond the end: miss; a zero-length capsule is a sphere */
    ck_assert(!pick_capsule(v3(5, 1.21, 0), v3(-1, 0, 0), p0, p1, r, &t, &n));
    ck_assert(pick_capsule(v3(5, 0, 0), v3(-1, 0, 0), p1, p1, r, &t, &n) == false);
    ck_assert(pick_capsule(v3(5, 1, 0), v3(-1, 0, 0), p1, p1, r, &t, &n));
    fb_ck_near(t, 4.8, 0, TOL);
    /* oblique: the first of cylinder and caps, checked against a fine march */
    const fb_v3 o = v3(1.0, 2.0, 0.3), d = v3_unit(v3(-1.0, -1.3, -0.2));
    ck_assert(pick_capsule(o, d, p0, p1, r, &t, &n));
    double march = -1.0;
    for (int k = 0; k < 400000 && march < 0.0; k++) {
        const fb_v3 p = v3_add(o, v3_scale(d, k * 1e-5));
        const double s = fmin(fmax(p.y, -1.0), 1.0);
        if (hypot(hypot(p.x, p.y - s), p.z) <= r) {
            march = k * 1e-5;
        }
    }
    fb_ck_near(t, march, 0, 2e-5);
}
END_TEST

START_TEST(box_distances) {
    double t;
    fb_v3 n;
    const fb_v3 size = v3(1.0, 0.4, 0.2);
    ck_assert(pick_box(v3(5, 0.1, 0.05), v3(-1, 0, 0), v3(0, 0, 0), &IDENT, size, &t, &n));
    fb_ck_near(t, 4.5, 0, TOL);
    fb_ck_near(n.x, 1.0, 0, TOL);
    ck_assert(pick_box(v3(0.2, -3, 0), v3(0, 1, 0), v3(0, 0, 0), &IDENT, size, &t, &n));
    fb_ck_near(t, 2.8, 0, TOL);
    fb_ck_near(n.y, -1.0, 0, TOL);
    ck_assert(!pick_box(v3(5, 0.21, 0), v3(-1, 0, 0), v3(0, 0, 0), &IDENT, size, &t, &n));
    /* turned 90 degrees about Y, the long edge lies along Z: hits its end face at 5 - 0.5 */
    const fb_m3 R = rot_y(0.5 * 3.141592653589793);
    ck_assert(pick_box(v3(0, 0, 5), v3(0, 0, -1), v3(0, 0, 0), &R, size, &t, &n));
    fb_ck_near(t, 4.5, 0, 1e-12);
    fb_ck_near(n.z, 1.0, 0, 1e-12);
    /* the same box moved: distances follow its centre */
    ck_assert(pick_box(v3(1, 0, 5), v3(0, 0, -1), v3(1, 0, 2), &R, size, &t, &n));
    fb_ck_near(t, 2.5, 0, 1e-12);
}
END_TEST

/* Two spheres on a chain: body 1 (free, r 0.1 at its origin) and body 2 (fixed 1 m along +Z
 * of body 1, r 0.2). */
static fb_model* two_spheres(void) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(2, NULL, &err), &err);
    fb_body_def def = fb_default_body_def();
    def.name = "root";
    def.joint = FB_JOINT_FLOATING;
    def.inertia = fb_rbi_sphere(1000.0, 0.1, v3(0, 0, 0));
    int b1, b2;
    ck_assert(fb_model_add_body(m, &def, &b1, &err) == FB_OK);
    def.name = "tip";
    def.parent = b1;
    def.joint = FB_JOINT_FIXED;
    def.X_tree = (fb_xf){IDENT, v3(0, 0, 1)};
    ck_assert(fb_model_add_body(m, &def, &b2, &err) == FB_OK);
    fb_shape s = ck_shape_sphere(0.1);
    s.body = b1;
    ck_assert(fb_model_add_shape(m, &s, &err) == FB_OK);
    s = ck_shape_sphere(0.2);
    s.body = b2;
    ck_assert(fb_model_add_shape(m, &s, &err) == FB_OK);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

START_TEST(model_nearest_body) {
    fb_model* m = two_spheres();
    fb_data* d = ck_data(m);
    /* placed at (2, 1, 0), turned 90 degrees about Y: the tip sits at (3, 1, 0) */
    const double a = 0.5 * 3.141592653589793;
    ck_place(d, v3(2, 1, 0), (fb_quat){cos(a / 2), 0, sin(a / 2), 0});
    fb_kinematics_pos(m, d);
    pick_hit hit;
    /* from +X the tip is first */
    ck_assert(pick_ray(m, d, v3(10, 1, 0), v3(-1, 0, 0), &hit));
    ck_assert_int_eq(hit.body, 2);
    fb_ck_near(hit.t, 10.0 - 3.2, 0, 1e-12);
    fb_ck_near(hit.point.x, 3.2, 0, 1e-12);
    fb_ck_near(hit.normal.x, 1.0, 0, 1e-12);
    /* from -X the root is */
    ck_assert(pick_ray(m, d, v3(-10, 1, 0), v3(1, 0, 0), &hit));
    ck_assert_int_eq(hit.body, 1);
    fb_ck_near(hit.t, 12.0 - 0.1, 0, 1e-12);
    /* a ray above both misses */
    ck_assert(!pick_ray(m, d, v3(10, 1.25, 0), v3(-1, 0, 0), &hit));
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(camera_rays_invert_projection) {
    camera c = camera_default();
    c.target = v3(0.5, 0.9, -1.0);
    c.yaw = 0.7;
    c.pitch = 0.3;
    c.distance = 6.0;
    const int w = 640, h = 360;
    fb_v3 o, d;
    /* the centre of the viewport looks at the target */
    camera_ray(&c, 0.5 * w, 0.5 * h, w, h, &o, &d);
    const fb_v3 to = v3_unit(v3_sub(c.target, o));
    fb_ck_near(v3_dot(d, to), 1.0, 0, 1e-12);
    /* any pixel's ray projects back onto that pixel */
    const double px[4][2] = {{0.5, 0.5}, {639.5, 0.5}, {100.25, 300.75}, {320.0, 359.5}};
    for (int k = 0; k < 4; k++) {
        camera_ray(&c, px[k][0], px[k][1], w, h, &o, &d);
        double x, y;
        ck_assert(camera_project(&c, v3_add(o, v3_scale(d, 7.3)), w, h, &x, &y));
        fb_ck_near(x, px[k][0], 0, 1e-9);
        fb_ck_near(y, px[k][1], 0, 1e-9);
    }
    /* behind the eye does not project */
    double x, y;
    ck_assert(!camera_project(&c, v3_sub(o, v3_scale(to, 1.0)), w, h, &x, &y));
}
END_TEST

START_TEST(camera_frames_a_box) {
    camera c = camera_default();
    const fb_v3 lo = v3(-0.5, 0.0, -2.0), hi = v3(1.5, 1.8, 1.0);
    camera_frame(&c, lo, hi, 16.0 / 9.0, 0.22);
    /* every corner inside the margins, and one on them: as close as the box can be */
    const double W = 1600, H = 900, mx = CAMERA_FRAME_MARGIN * W, my = CAMERA_FRAME_MARGIN * H;
    double slack = 1e9;
    for (int k = 0; k < 8; k++) {
        const fb_v3 p = v3((k & 1) ? hi.x : lo.x, (k & 2) ? hi.y : lo.y, (k & 4) ? hi.z : lo.z);
        double x, y;
        ck_assert(camera_project(&c, p, (int)W, (int)H, &x, &y));
        const double room = fmin(fmin(x - mx, W - mx - x), fmin(y - my, H - my - y));
        ck_assert_msg(room >= -1e-6, "corner %d outside the framed viewport by %g px", k, -room);
        slack = fmin(slack, room);
    }
    ck_assert_msg(slack < 0.5, "the nearest corner is %g px inside the margins", slack);
    /* zoom and orbit stay within their limits */
    camera_zoom(&c, -1000.0);
    fb_ck_near(c.distance, CAMERA_DIST_MAX, 0, 0);
    camera_orbit(&c, 0.0, 1e6, 900);
    fb_ck_near(c.pitch, CAMERA_PITCH_MAX, 0, 0);
}
END_TEST

START_TEST(camera_follows_and_pans) {
    camera c = camera_default();
    const double height = c.target.y;
    camera_set_follow(&c, true, v3(1, 0, 1));
    camera_follow(&c, v3(3, 0, -2), 0.1, 0.0); /* centred over the point, at the same height */
    fb_ck_near(c.target.x, 3.0, 0, 1e-12);
    fb_ck_near(c.target.y, height, 0, 1e-12);
    fb_ck_near(c.target.z, -2.0, 0, 1e-12);
    /* a pan drag moves the target by the drag's size at the target's depth, kept in follow */
    fb_v3 right;
    camera_basis(&c, NULL, &right, NULL);
    const fb_v3 before = c.target;
    camera_pan(&c, -100.0, 0.0, 500);
    const double m_per_px = 2.0 * c.distance * tan(0.5 * c.fovy) / 500;
    fb_ck_near(v3_dot(v3_sub(c.target, before), right), 100.0 * m_per_px, 0, 1e-12);
    camera_follow(&c, v3(3, 0, -2), 0.1, 0.0);
    fb_ck_near(v3_norm(v3_sub(c.target, before)), 100.0 * m_per_px, 0, 1e-12);
}
END_TEST

static Suite* viewer_suite(void) {
    Suite* s = suite_create("viewer_pick");
    TCase* tc = tcase_create("pick");
    tcase_add_test(tc, sphere_distances);
    tcase_add_test(tc, capsule_distances);
    tcase_add_test(tc, box_distances);
    tcase_add_test(tc, model_nearest_body);
    suite_add_tcase(s, tc);
    TCase* tc2 = tcase_create("camera");
    tcase_add_test(tc2, camera_rays_invert_projection);
    tcase_add_test(tc2, camera_frames_a_box);
    tcase_add_test(tc2, camera_follows_and_pans);
    suite_add_tcase(s, tc2);
    return s;
}

int main(void) {
    return ck_run_suite(viewer_suite());
}
