/* Narrow-phase contacts against hand-computed geometry: depth, normal and points of spheres,
 * capsules and boxes on a plane (flat and sloped) and of a ball against each shape; contact
 * counts (four for a box on its face, two on an edge, one on a corner); shape pairs for
 * self-collision against closed-form distances (capsules parallel, crossing, skew, end to
 * middle and end to end; a capsule on a box's face, across its edge and standing on it); ids
 * stable while the same features touch; and contact rows that hold a body up with exactly its
 * weight. */
#include <string.h>

#include "math/quat.h"
#include "math/spatial.h"
#include "support.h"

#define GEOM_TOL 1e-12
#define NCAP 32

/* Places the free body at p with orientation q and updates kinematics. */
static void place(const fb_model* m, fb_data* d, fb_v3 p, fb_quat q) {
    ck_place(d, p, q);
    fb_kinematics(m, d);
}

static int plane_contacts(const fb_model* m, const fb_data* d, fb_plane pl, fb_contact* c) {
    int n = 0;
    fb_error err;
    ck_assert_int_eq(fb_collide_plane(m, d, 0, pl, 1e-3, c, &n, NCAP, &err), FB_OK);
    return n;
}

START_TEST(sphere_on_flat_and_sloped_planes) {
    fb_model* m = ck_free_body(ck_shape_sphere(0.2), 1000.0);
    fb_data* d = ck_data(m);
    fb_contact c[NCAP];
    /* 1 cm into the ground */
    place(m, d, fb_v3_make(0.3, 0.19, -0.1), fb_quat_identity());
    ck_assert_int_eq(plane_contacts(m, d, fb_ground_plane(), c), 1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    fb_ck_near(c[0].n.y, 1.0, 0.0, GEOM_TOL);
    fb_ck_near(c[0].p_b.y, 0.0, 0.0, GEOM_TOL); /* on the plane, under the centre */
    fb_ck_near(c[0].p_b.x, 0.3, 0.0, GEOM_TOL);
    fb_ck_near(c[0].p_a.y, -0.2, 0.0, GEOM_TOL); /* the sphere's lowest point, body coords */
    ck_assert_int_eq(c[0].art_b, -1);
    /* 5 cm above: nothing within the 1 mm margin */
    place(m, d, fb_v3_make(0.0, 0.25, 0.0), fb_quat_identity());
    ck_assert_int_eq(plane_contacts(m, d, fb_ground_plane(), c), 0);
    /* a 30 degree slope through the origin: the contact normal is the slope's */
    const double th = FB_PI / 6.0;
    const fb_plane slope = {{-sin(th), cos(th), 0.0}, 0.0};
    place(m, d, fb_v3_scale(slope.n, 0.195), fb_quat_identity());
    ck_assert_int_eq(plane_contacts(m, d, slope, c), 1);
    fb_ck_near(c[0].depth, 0.005, 0.0, GEOM_TOL);
    ck_assert(fb_v3_norm(fb_v3_sub(c[0].n, slope.n)) < GEOM_TOL);
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(capsule_lying_and_standing) {
    fb_model* m = ck_free_body(ck_shape_capsule(0.05, fb_v3_make(-0.2, 0, 0), fb_v3_make(0.2, 0, 0)), 1000.0);
    fb_data* d = ck_data(m);
    fb_contact c[NCAP];
    /* lying along x, touching: both ends */
    place(m, d, fb_v3_make(0.0, 0.05, 0.0), fb_quat_identity());
    ck_assert_int_eq(plane_contacts(m, d, fb_ground_plane(), c), 2);
    ck_assert(c[0].id != c[1].id);
    fb_ck_near(fabs(c[0].p_a.x - c[1].p_a.x), 0.4, 0.0, GEOM_TOL);
    /* standing on one end (rotated 90 degrees about z) */
    place(m, d, fb_v3_make(0.0, 0.25, 0.0),
          fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), FB_PI / 2.0));
    ck_assert_int_eq(plane_contacts(m, d, fb_ground_plane(), c), 1);
    fb_ck_near(c[0].depth, 0.0, 0.0, GEOM_TOL);
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(box_on_face_edge_and_corner) {
    fb_model* m = ck_free_body(ck_shape_box(fb_v3_make(0.4, 0.2, 0.3)), 1000.0);
    fb_data* d = ck_data(m);
    fb_contact c[NCAP];
    /* flat on its 0.4 x 0.3 face: the four corners (Gao's pitfall: not one point) */
    place(m, d, fb_v3_make(0.0, 0.1 - 0.002, 0.0), fb_quat_identity());
    ck_assert_int_eq(plane_contacts(m, d, fb_ground_plane(), c), 4);
    for (int k = 0; k < 4; k++) {
        fb_ck_near(c[k].depth, 0.002, 0.0, GEOM_TOL);
        fb_ck_near(fabs(c[k].p_a.x), 0.2, 0.0, GEOM_TOL);
        fb_ck_near(fabs(c[k].p_a.z), 0.15, 0.0, GEOM_TOL);
    }
    /* on an edge: turned about x until the diagonal of the y-z face stands vertical, the lowest
     * edge runs along x: two corners */
    const double half_diag = sqrt(0.1 * 0.1 + 0.15 * 0.15);
    place(m, d, fb_v3_make(0.0, half_diag, 0.0),
          fb_quat_from_axis_angle(fb_v3_make(1, 0, 0), atan2(0.15, 0.1)));
    const int on_edge = plane_contacts(m, d, fb_ground_plane(), c);
    ck_assert_int_eq(on_edge, 2);
    /* on a corner: a generic rotation, raised so the lowest corner just touches */
    const fb_quat q = fb_quat_from_axis_angle(fb_v3_scale(fb_v3_make(1, 1, 0.3), 1 / sqrt(2.09)),
                                              0.7);
    place(m, d, fb_v3_zero(), q);
    double lowest = INFINITY;
    for (int k = 0; k < 8; k++) {
        const fb_v3 corner = {(k & 1 ? 0.2 : -0.2), (k & 2 ? 0.1 : -0.1), (k & 4 ? 0.15 : -0.15)};
        lowest = fmin(lowest, fb_point_pos(m, d, 1, corner).y);
    }
    place(m, d, fb_v3_make(0.0, -lowest, 0.0), q);
    ck_assert_int_eq(plane_contacts(m, d, fb_ground_plane(), c), 1);
    fb_ck_near(c[0].depth, 0.0, 0.0, GEOM_TOL);
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

/* A ball (articulation 1) of radius 0.1 at `at` against the shape of articulation 0 at the
 * origin; returns the contact count and fills c. */
static int ball_against(fb_shape sh, fb_quat q, fb_v3 at, fb_contact* c) {
    fb_error err;
    fb_model* ma = ck_free_body(sh, 1000.0);
    fb_model* mb = ck_free_body(ck_shape_sphere(0.1), 1000.0);
    fb_data* da = ck_data(ma);
    fb_data* db = ck_data(mb);
    place(ma, da, fb_v3_zero(), q);
    place(mb, db, at, fb_quat_identity());
    int n = 0;
    ck_assert_int_eq(fb_collide_spheres(ma, da, 0, mb, db, 1, 1e-3, c, &n, NCAP, &err), FB_OK);
    for (int k = 0; k < n; k++) {
        /* the two points, moved to the world, are depth apart along the normal */
        const fb_v3 pa = fb_point_pos(ma, da, c[k].body_a, c[k].p_a);
        const fb_v3 pb = fb_point_pos(mb, db, c[k].body_b, c[k].p_b);
        fb_ck_near(fb_v3_dot(fb_v3_sub(pb, pa), c[k].n), c[k].depth, 0.0, 1e-12);
        fb_ck_near(fb_v3_norm(c[k].n), 1.0, 0.0, 1e-12);
    }
    fb_data_destroy(da);
    fb_data_destroy(db);
    fb_model_destroy(ma);
    fb_model_destroy(mb);
    return n;
}

START_TEST(ball_against_sphere_capsule_and_box) {
    fb_contact c[NCAP];
    /* two spheres of radius 0.2 and 0.1, centres 0.28 apart along (3,4,0)/5: 2 cm deep */
    const fb_v3 u = {0.6, 0.8, 0.0};
    ck_assert_int_eq(ball_against(ck_shape_sphere(0.2), fb_quat_identity(), fb_v3_scale(u, 0.28), c), 1);
    fb_ck_near(c[0].depth, 0.02, 0.0, GEOM_TOL);
    ck_assert(fb_v3_norm(fb_v3_add(c[0].n, u)) < GEOM_TOL); /* from the ball to the sphere */
    /* capsule along x: beside its middle, and beyond its end */
    const fb_shape cap = ck_shape_capsule(0.05, fb_v3_make(-0.3, 0, 0), fb_v3_make(0.3, 0, 0));
    ck_assert_int_eq(ball_against(cap, fb_quat_identity(), fb_v3_make(0.1, 0.14, 0.0), c), 1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    fb_ck_near(c[0].n.y, -1.0, 0.0, GEOM_TOL);
    ck_assert_int_eq(ball_against(cap, fb_quat_identity(), fb_v3_make(0.44, 0.0, 0.0), c), 1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    fb_ck_near(c[0].n.x, -1.0, 0.0, GEOM_TOL);
    /* box 0.4 x 0.2 x 0.3: against a face, an edge, and with the centre inside */
    const fb_shape bx = ck_shape_box(fb_v3_make(0.4, 0.2, 0.3));
    ck_assert_int_eq(ball_against(bx, fb_quat_identity(), fb_v3_make(0.05, 0.19, 0.0), c), 1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    fb_ck_near(c[0].n.y, -1.0, 0.0, GEOM_TOL);
    const double e = 0.09 / sqrt(2.0); /* 0.09 from the edge (x = 0.2, y = 0.1) */
    ck_assert_int_eq(ball_against(bx, fb_quat_identity(), fb_v3_make(0.2 + e, 0.1 + e, 0.0), c),
                     1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    fb_ck_near(c[0].n.x, -1.0 / sqrt(2.0), 0.0, GEOM_TOL);
    ck_assert_int_eq(ball_against(bx, fb_quat_identity(), fb_v3_make(0.0, 0.07, 0.0), c), 1);
    fb_ck_near(c[0].depth, 0.13, 0.0, GEOM_TOL); /* 0.03 to the top face, plus the radius */
    fb_ck_near(c[0].n.y, -1.0, 0.0, GEOM_TOL);
    /* apart */
    ck_assert_int_eq(ball_against(bx, fb_quat_identity(), fb_v3_make(0.0, 0.3, 0.0), c), 0);
}
END_TEST

START_TEST(ids_are_stable_and_capacity_is_reported) {
    fb_error err;
    fb_model* m = ck_free_body(ck_shape_box(fb_v3_make(0.4, 0.2, 0.3)), 1000.0);
    fb_data* d = ck_data(m);
    fb_contact a[NCAP], b[NCAP];
    place(m, d, fb_v3_make(0.0, 0.099, 0.0), fb_quat_identity());
    const int na = plane_contacts(m, d, fb_ground_plane(), a);
    place(m, d, fb_v3_make(0.01, 0.0995, -0.01),
          fb_quat_from_axis_angle(fb_v3_make(0, 1, 0), 0.05));
    const int nb = plane_contacts(m, d, fb_ground_plane(), b);
    ck_assert_int_eq(na, 4);
    ck_assert_int_eq(nb, 4);
    for (int k = 0; k < 4; k++) {
        ck_assert(a[k].id == b[k].id); /* the same corners, the same ids */
    }
    int n = 0;
    ck_assert_int_eq(fb_collide_plane(m, d, 0, fb_ground_plane(), 1e-3, a, &n, 2, &err),
                     FB_ECAPACITY);
    ck_assert_ptr_nonnull(strstr(err.msg, "need room for 4"));
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

/* ---- shape pairs: closed-form distances -------------------------------------------------- */

/* Shape a of a free body (articulation 0) placed at pa, qa against shape b of another
 * (articulation 1) at pb, qb, through fb_collide_shape_pair; checks what every contact must
 * satisfy (unit normal, the two points depth apart along it, sides as asked) and returns the
 * count. */
static int pair_contacts(fb_shape a, fb_v3 pa, fb_quat qa, fb_shape b, fb_v3 pb, fb_quat qb,
                         fb_contact* c) {
    fb_error err;
    fb_model* ma = ck_free_body(a, 1000.0);
    fb_model* mb = ck_free_body(b, 1000.0);
    fb_data* da = ck_data(ma);
    fb_data* db = ck_data(mb);
    place(ma, da, pa, qa);
    place(mb, db, pb, qb);
    int n = 0;
    ck_assert_int_eq(
        fb_collide_shape_pair(ma, da, 0, 0, mb, db, 1, 0, 1e-3, c, &n, NCAP, &err), FB_OK);
    for (int k = 0; k < n; k++) {
        ck_assert(c[k].art_a == 0 && c[k].body_a == 1 && c[k].art_b == 1 && c[k].body_b == 1);
        const fb_v3 wa = fb_point_pos(ma, da, 1, c[k].p_a);
        const fb_v3 wb = fb_point_pos(mb, db, 1, c[k].p_b);
        fb_ck_near(fb_v3_dot(fb_v3_sub(wb, wa), c[k].n), c[k].depth, 0.0, GEOM_TOL);
        fb_ck_near(fb_v3_norm(c[k].n), 1.0, 0.0, GEOM_TOL);
        /* in world coordinates for the checks that follow */
        c[k].p_a = wa;
        c[k].p_b = wb;
    }
    fb_data_destroy(da);
    fb_data_destroy(db);
    fb_model_destroy(ma);
    fb_model_destroy(mb);
    return n;
}

static void ck_v3_near(fb_v3 a, fb_v3 b, double tol) {
    ck_assert_msg(fb_v3_norm(fb_v3_sub(a, b)) <= tol, "(%.15g %.15g %.15g) vs (%.15g %.15g %.15g)",
                  a.x, a.y, a.z, b.x, b.y, b.z);
}

/* Capsules of radius 0.05 (A) and 0.04 (B): 0.09 between the axes touches. */
#define RA 0.05
#define RB 0.04

START_TEST(capsule_capsule_parallel_crossing_and_ends) {
    fb_contact c[NCAP];
    const fb_quat I = fb_quat_identity();
    const fb_shape a = ck_shape_capsule(RA, fb_v3_make(-0.3, 0, 0), fb_v3_make(0.3, 0, 0));
    const fb_shape bx = ck_shape_capsule(RB, fb_v3_make(-0.3, 0, 0), fb_v3_make(0.3, 0, 0));
    /* parallel, 0.08 apart, overlapping over x in [0.1, 0.3]: two contacts at the ends of the
     * overlap, each 1 cm deep, pushing A down */
    ck_assert_int_eq(pair_contacts(a, fb_v3_zero(), I, bx, fb_v3_make(0.4, 0.08, 0.0), I, c), 2);
    ck_assert(c[0].id != c[1].id);
    for (int k = 0; k < 2; k++) {
        fb_ck_near(c[k].depth, 0.01, 0.0, GEOM_TOL);
        ck_v3_near(c[k].n, fb_v3_make(0, -1, 0), GEOM_TOL);
        ck_v3_near(c[k].p_a, fb_v3_make(k == 0 ? 0.1 : 0.3, RA, 0.0), GEOM_TOL);
        ck_v3_near(c[k].p_b, fb_v3_make(k == 0 ? 0.1 : 0.3, 0.08 - RB, 0.0), GEOM_TOL);
    }
    /* tilted up by 0.01 rad (still "parallel"), B's left end 0.0895 above A's axis at x = 0.1:
     * 0.5 mm deep there, while over A's right end B's axis is 0.0915 cos 0.01 = 0.091495 away,
     * 1.5 mm apart, beyond the margin: only the left contact stays */
    const double tilt = 0.01;
    const fb_quat qt = fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), tilt);
    const fb_v3 pt = fb_v3_sub(fb_v3_make(0.1, 0.0895, 0.0),
                               fb_quat_rotate(qt, fb_v3_make(-0.3, 0, 0)));
    ck_assert_int_eq(pair_contacts(a, fb_v3_zero(), I, bx, pt, qt, c), 1);
    ck_v3_near(c[0].p_a, fb_v3_make(0.1, RA, 0.0), GEOM_TOL);
    fb_ck_near(c[0].depth, RA + RB - 0.0895, 0.0, GEOM_TOL);
    /* crossing at right angles, B along z 0.085 above A: one contact 5 mm deep at the crossing */
    const fb_quat qz = fb_quat_from_axis_angle(fb_v3_make(0, 1, 0), FB_PI / 2.0);
    ck_assert_int_eq(pair_contacts(a, fb_v3_zero(), I, bx, fb_v3_make(0.12, 0.085, 0.0), qz, c),
                     1);
    fb_ck_near(c[0].depth, 0.005, 0.0, GEOM_TOL);
    ck_v3_near(c[0].p_a, fb_v3_make(0.12, RA, 0.0), GEOM_TOL);
    ck_v3_near(c[0].n, fb_v3_make(0, -1, 0), GEOM_TOL);
    /* an end against the middle (a T): B along y, its lower end 0.07 above A's axis at x = 0.2 */
    const fb_quat qy = fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), FB_PI / 2.0);
    ck_assert_int_eq(pair_contacts(a, fb_v3_zero(), I, bx, fb_v3_make(0.2, 0.37, 0.0), qy, c),
                     1);
    fb_ck_near(c[0].depth, RA + RB - 0.07, 0.0, GEOM_TOL);
    ck_v3_near(c[0].p_b, fb_v3_make(0.2, 0.07 - RB, 0.0), GEOM_TOL);
    /* end against end, collinear: B starts 0.08 beyond A's end */
    ck_assert_int_eq(pair_contacts(a, fb_v3_zero(), I, bx, fb_v3_make(0.68, 0.0, 0.0), I, c), 1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    ck_v3_near(c[0].n, fb_v3_make(-1, 0, 0), GEOM_TOL);
    /* end against end, at 45 degrees: B's first end sits at (0.36, 0.03, 0) from A's right end
     * (0.3, 0, 0) and B runs away from A: the ends are sqrt(0.06^2 + 0.03^2) apart */
    const fb_quat q45 = fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), FB_PI / 4.0);
    const fb_v3 p45 = fb_v3_sub(fb_v3_make(0.36, 0.03, 0.0),
                                fb_quat_rotate(q45, fb_v3_make(-0.3, 0, 0)));
    ck_assert_int_eq(pair_contacts(a, fb_v3_zero(), I, bx, p45, q45, c), 1);
    const double gap = sqrt(0.06 * 0.06 + 0.03 * 0.03);
    fb_ck_near(c[0].depth, RA + RB - gap, 0.0, GEOM_TOL);
    ck_v3_near(c[0].n, fb_v3_make(-0.06 / gap, -0.03 / gap, 0.0), GEOM_TOL);
    /* apart by 2 mm more than the radii: nothing */
    ck_assert_int_eq(pair_contacts(a, fb_v3_zero(), I, bx, fb_v3_make(0.0, 0.092, 0.0), qz, c),
                     0);
}
END_TEST

START_TEST(capsule_capsule_skew_in_random_frames) {
    /* two skew axes with a known common perpendicular: A's point s0 and B's point t0 are h
     * apart along n = u x v / |u x v|, everything in a random frame; the contact sits there */
    scene_rng r = scene_rng_make(11);
    fb_contact c[NCAP];
    for (int trial = 0; trial < 200; trial++) {
        const fb_quat q = scene_rng_quat(&r);
        const fb_v3 u = scene_rng_unit(&r);
        fb_v3 v = scene_rng_unit(&r);
        if (fb_v3_norm(fb_v3_cross(u, v)) < 0.1) {
            continue; /* near-parallel: the two-point case, tested above */
        }
        const fb_v3 nrm = fb_v3_scale(fb_v3_cross(u, v), 1.0 / fb_v3_norm(fb_v3_cross(u, v)));
        const double la = 0.6, lb = 0.5, s0 = scene_rng_uniform(&r, 0.05, 0.95),
                     t0 = scene_rng_uniform(&r, 0.05, 0.95), h = scene_rng_uniform(&r, 0.005, 0.09);
        /* body frames: A's axis from 0 to la u, B's from 0 to lb v, B placed so the closest
         * points meet the construction */
        const fb_shape a = ck_shape_capsule(RA, fb_v3_zero(), fb_v3_scale(u, la));
        const fb_shape b = ck_shape_capsule(RB, fb_v3_zero(), fb_v3_scale(v, lb));
        const fb_v3 pa = scene_rng_unit(&r);
        const fb_v3 ca = fb_v3_scale(u, s0 * la), cb = fb_v3_scale(v, t0 * lb);
        const fb_v3 off = fb_v3_sub(fb_v3_axpy(ca, -h, nrm), cb); /* B's origin, A's frame */
        const fb_v3 pb = fb_v3_add(pa, fb_quat_rotate(q, off));
        ck_assert_int_eq(pair_contacts(a, pa, q, b, pb, q, c), 1);
        fb_ck_near(c[0].depth, RA + RB - h, 0.0, 1e-12);
        ck_v3_near(c[0].n, fb_quat_rotate(q, nrm), 1e-9); /* from B (below) to A */
        ck_v3_near(c[0].p_a, fb_v3_add(pa, fb_quat_rotate(q, fb_v3_axpy(ca, -RA, nrm))), 1e-12);
    }
}
END_TEST

START_TEST(sphere_and_box_pairs) {
    fb_contact c[NCAP];
    const fb_quat I = fb_quat_identity();
    const fb_shape cap = ck_shape_capsule(RA, fb_v3_make(-0.3, 0, 0), fb_v3_make(0.3, 0, 0));
    const fb_shape ball = ck_shape_sphere(0.1);
    /* the sphere as side A, the capsule as B: normal from the capsule to the sphere */
    ck_assert_int_eq(pair_contacts(ball, fb_v3_make(0.1, 0.14, 0.0), I, cap, fb_v3_zero(), I, c),
                     1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    ck_v3_near(c[0].n, fb_v3_make(0, 1, 0), GEOM_TOL);
    /* sphere against sphere, 0.18 apart along (0, 0.6, 0.8) */
    const fb_v3 u = {0.0, 0.6, 0.8};
    ck_assert_int_eq(pair_contacts(ball, fb_v3_scale(u, 0.18), I, ck_shape_sphere(0.09),
                                   fb_v3_zero(), I, c),
                     1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    ck_v3_near(c[0].n, u, GEOM_TOL);
    /* box 0.4 x 0.2 x 0.3 at the origin */
    const fb_shape bx = ck_shape_box(fb_v3_make(0.4, 0.2, 0.3));
    /* a capsule lying flat on the top face, 2 mm in: held by its two end spheres */
    ck_assert_int_eq(pair_contacts(bx, fb_v3_zero(), I, ck_shape_capsule(RB,
                                   fb_v3_make(-0.15, 0, 0), fb_v3_make(0.15, 0, 0)),
                                   fb_v3_make(0.0, 0.1 + RB - 0.002, 0.02), I, c),
                     2);
    for (int k = 0; k < 2; k++) {
        fb_ck_near(c[k].depth, 0.002, 0.0, GEOM_TOL);
        ck_v3_near(c[k].n, fb_v3_make(0, -1, 0), GEOM_TOL);
        fb_ck_near(fabs(c[k].p_a.x), 0.15, 0.0, GEOM_TOL);
    }
    ck_assert(c[0].id != c[1].id);
    /* a capsule across the edge x = 0.2, y = 0.1 at 45 degrees, its axis 0.04 from the edge:
     * the interior point over the edge, 1 cm deep; the ends are far */
    const fb_v3 diag = fb_v3_scale(fb_v3_make(1, 1, 0), 1.0 / sqrt(2.0));
    const fb_quat q = fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), -FB_PI / 4.0);
    const fb_v3 on_edge = fb_v3_make(0.2, 0.1, 0.05);
    ck_assert_int_eq(pair_contacts(bx, fb_v3_zero(), I, cap, fb_v3_axpy(on_edge, 0.04, diag), q,
                                   c),
                     1);
    fb_ck_near(c[0].depth, RA - 0.04, 0.0, 1e-9);
    ck_v3_near(c[0].p_a, on_edge, 1e-9);
    ck_v3_near(c[0].n, fb_v3_neg(diag), 1e-9);
    /* the same pair with the capsule as side A: the normal reversed */
    ck_assert_int_eq(pair_contacts(cap, fb_v3_axpy(on_edge, 0.04, diag), q, bx, fb_v3_zero(), I,
                                   c),
                     1);
    ck_v3_near(c[0].n, diag, 1e-9);
    ck_v3_near(c[0].p_b, on_edge, 1e-9);
    /* a capsule standing on the top face, its lower end sphere 1 cm in: one contact */
    const fb_quat up = fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), FB_PI / 2.0);
    ck_assert_int_eq(pair_contacts(bx, fb_v3_zero(), I, cap,
                                   fb_v3_make(0.05, 0.1 + RA - 0.01 + 0.3, 0.0), up, c),
                     1);
    fb_ck_near(c[0].depth, 0.01, 0.0, GEOM_TOL);
    /* box against box is not supported: no contact, no error */
    ck_assert_int_eq(pair_contacts(bx, fb_v3_zero(), I, bx, fb_v3_make(0.1, 0.1, 0.0), I, c), 0);
}
END_TEST

/* Two capsule links of one articulation on hinges about z: body 1 from the origin along +x,
 * body 2 hinged at its end and folding back over it. */
static fb_model* folding_pair(void) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(2, NULL, &err), &err);
    for (int k = 0; k < 2; k++) {
        fb_body_def def = fb_default_body_def();
        def.name = k == 0 ? "upper" : "lower";
        def.parent = k;
        def.joint = FB_JOINT_REVOLUTE;
        def.X_tree = fb_xf_xlt(fb_v3_make(k == 0 ? 0.0 : 0.4, 0, 0));
        def.inertia = fb_rbi_capsule(1000.0, RA, fb_v3_zero(), fb_v3_make(0.4, 0, 0));
        int id;
        ck_assert_int_eq(fb_model_add_body(m, &def, &id, &err), FB_OK);
        fb_shape sh = ck_shape_capsule(RA, fb_v3_make(0.12, 0, 0), fb_v3_make(0.4, 0, 0));
        sh.body = id;
        ck_assert_int_eq(fb_model_add_shape(m, &sh, &err), FB_OK);
    }
    ck_assert_int_eq(fb_model_finalize(m, &err), FB_OK);
    return m;
}

START_TEST(self_pair_ids_are_stable_and_capacity_is_reported) {
    fb_error err;
    fb_model* m = folding_pair();
    fb_data* d = ck_data(m);
    fb_contact a[NCAP], b[NCAP];
    /* folded back by 180 degrees less alpha: the capsules (from 0.12 to 0.4 along each link)
     * come closest where one starts, 0.12 sin(alpha) from the other's axis: 0.0995, 0.5 mm deep */
    const double fold = FB_PI - asin(0.0995 / 0.12);
    d->q[1] = fold;
    fb_kinematics(m, d);
    int na = 0;
    ck_assert_int_eq(fb_collide_shape_pair(m, d, 0, 0, m, d, 0, 1, 1e-3, a, &na, NCAP, &err),
                     FB_OK);
    ck_assert_int_eq(na, 1);
    fb_ck_near(a[0].depth, 2.0 * RA - 0.0995, 0.0, GEOM_TOL);
    for (int k = 0; k < na; k++) {
        ck_assert(a[k].art_a == 0 && a[k].art_b == 0 && a[k].body_a == 1 && a[k].body_b == 2);
    }
    /* a little further in: the same features, the same ids */
    d->q[1] = fold + 1e-3;
    fb_kinematics(m, d);
    int nb = 0;
    ck_assert_int_eq(fb_collide_shape_pair(m, d, 0, 0, m, d, 0, 1, 1e-3, b, &nb, NCAP, &err),
                     FB_OK);
    ck_assert_int_eq(nb, na);
    for (int k = 0; k < na; k++) {
        ck_assert(a[k].id == b[k].id);
        ck_assert(b[k].depth > a[k].depth);
    }
    int n = 0;
    ck_assert_int_eq(fb_collide_shape_pair(m, d, 0, 0, m, d, 0, 1, 1e-3, a, &n, 0, &err),
                     FB_ECAPACITY);
    ck_assert_int_eq(fb_collide_shape_pair(m, d, 0, 0, m, d, 0, 2, 1e-3, a, &n, NCAP, &err),
                     FB_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "sa/sb"));
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

START_TEST(contact_rows_hold_the_weight) {
    /* a box resting flat: its four corner contacts with friction hold exactly m g, and with a
     * sideways push below mu m g it does not slide */
    fb_error err;
    fb_model* m = ck_free_body(ck_shape_box(fb_v3_make(0.4, 0.2, 0.3)), 1000.0);
    fb_data* d = ck_data(m);
    place(m, d, fb_v3_make(0.0, 0.1, 0.0), fb_quat_identity());
    d->f_ext[1] = (fb_fv){{0, 0, 0}, {0.5 * 0.8 * m->I[1].m * 9.81, 0, 0}};
    ck_assert_int_eq(fb_aba(m, d, &err), FB_OK);
    fb_contact c[NCAP];
    const int n = plane_contacts(m, d, fb_ground_plane(), c);
    const fb_model* ms[1] = {m};
    fb_data* ds[1] = {d};
    fb_csys* cs = fb_csys_create(1, ms, ds, 3 * NCAP, NULL, &err);
    ck_assert_int_eq(fb_contact_rows(cs, c, n, 0.8, NULL, &err), FB_OK);
    ck_assert_int_eq(cs->nrow, 12);
    ck_assert_int_eq(fb_csys_build(cs, &err), FB_OK);
    fb_pgs_opts o = fb_default_pgs_opts();
    o.max_iter = 5000;
    fb_csys_solve(cs, &o);
    double normal = 0.0;
    for (int k = 0; k < cs->nrow; k += 3) {
        normal += cs->lambda[k];
    }
    fb_ck_near(normal, m->I[1].m * 9.81, 1e-6, 0.0);
    fb_csys_apply(cs);
    double qdd = 0.0;
    for (int k = 0; k < 6; k++) {
        qdd = fmax(qdd, fabs(d->qdd[k]));
    }
    ck_assert_msg(qdd < 1e-6, "the box accelerates at %g", qdd);
    fb_csys_destroy(cs);
    fb_data_destroy(d);
    fb_model_destroy(m);
}
END_TEST

static Suite* collision_suite(void) {
    Suite* s = suite_create("collision");
    TCase* tc = tcase_create("collision");
    tcase_add_test(tc, sphere_on_flat_and_sloped_planes);
    tcase_add_test(tc, capsule_lying_and_standing);
    tcase_add_test(tc, box_on_face_edge_and_corner);
    tcase_add_test(tc, ball_against_sphere_capsule_and_box);
    tcase_add_test(tc, ids_are_stable_and_capacity_is_reported);
    tcase_add_test(tc, capsule_capsule_parallel_crossing_and_ends);
    tcase_add_test(tc, capsule_capsule_skew_in_random_frames);
    tcase_add_test(tc, sphere_and_box_pairs);
    tcase_add_test(tc, self_pair_ids_are_stable_and_capacity_is_reported);
    tcase_add_test(tc, contact_rows_hold_the_weight);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(collision_suite());
}
