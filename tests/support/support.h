/* Shared helpers for the Check suites: tolerance checks, model construction that fails the
 * test loudly, and a reference integrator for the conservation tests. */
#ifndef FB_TEST_SUPPORT_H
#define FB_TEST_SUPPORT_H

#include <check.h>
#include <math.h>

#include "checks.h"
#include "featherbone/featherbone.h"
#include "scenes.h"

/* |a - b| <= atol + rtol |b|, with both values in the failure message. */
#define fb_ck_near(a, b, rtol, atol)                                                           \
    do {                                                                                       \
        const double ck_a_ = (a), ck_b_ = (b);                                                 \
        ck_assert_msg(fabs(ck_a_ - ck_b_) <= (atol) + (rtol)*fabs(ck_b_),                      \
                      "%s = %.17g, expected %s = %.17g (rtol %g, atol %g)", #a, ck_a_, #b,     \
                      ck_b_, (double)(rtol), (double)(atol));                                  \
    } while (0)

/* max_k |a_k - b_k| / max(max_k |b_k|, floor) */
double ck_rel_diff(const double* a, const double* b, int n, double floor);

/* Runs a suite with CK_NORMAL output and returns the process exit code. */
int ck_run_suite(Suite* s);

/* Makes a fresh directory /tmp/fb_NAME_ plus six random characters (mkdtemp) into dir, or
 * fails the test. */
void ck_tmpdir(char* dir, size_t cap, const char* name);

/* Fails the test unless xmllint (libxml2, an independent parser) accepts the file at path as
 * well-formed XML; says so when xmllint is missing. */
void ck_well_formed(const char* path);

/* Writes text to path, or fails the test. */
void ck_write_text(const char* path, const char* text);

/* The whole file at path as a string (malloc'd), or fails the test. */
char* ck_slurp(const char* path);

/* Fails the test unless the files at a and b hold the same bytes (what differs names the
 * byte); returns their length. */
long ck_same_file(const char* a, const char* b);

/* Builders that fail the current test with the library's message instead of returning NULL. */
fb_model* ck_model(fb_model* m, const fb_error* err);
fb_data* ck_data(const fb_model* m);

/* Shapes with identity axes (body coordinates), for one-body scenes. */
fb_shape ck_shape_sphere(double r);
fb_shape ck_shape_capsule(double r, fb_v3 p0, fb_v3 p1);
fb_shape ck_shape_box(fb_v3 size);

/* A model of one free body (floating joint, body 1) carrying `sh`, its inertia that of the
 * shape as a solid of density rho. Fails the test on error. */
fb_model* ck_free_body(fb_shape sh, double rho);

/* Puts that free body at p with orientation q (body -> world), at rest. */
void ck_place(fb_data* d, fb_v3 p, fb_quat q);

/* The benchmark humanoid (scene_humanoid) with passive damping b (N m s/rad) on its ball
 * joints and hinges; fails the test on error. */
fb_model* ck_damped_humanoid(double b);

/* Loads the clip at clip_path and builds its character with the rules at rules_path (the
 * bundled ones in the tests); fails the test with the library's message otherwise. */
void ck_load_character(const char* clip_path, const char* rules_path, fb_clip** clip,
                       fb_character** ch);

/* One classical fourth-order Runge-Kutta step of the passive dynamics (ABA with d->tau and
 * d->f_ext), done on the configuration manifold: the stages live in local coordinates xi
 * around the step's start q0 (q = fb_integrate(q0, xi, 1)), and the rotational part of each
 * joint obeys xi' = Jr^-1(xi) w, the inverse right Jacobian of SO(3) (Munthe-Kaas' RKMK
 * method), so the step is fourth-order accurate also for spherical and floating joints. */
void ck_rk4_step(const fb_model* m, fb_data* d, double dt);

#endif /* FB_TEST_SUPPORT_H */
