/* Shared helpers for the Check suites: tolerance checks, model construction that fails the
 * test loudly, and a reference integrator for the conservation tests. */
#ifndef FB_TEST_SUPPORT_H
#define FB_TEST_SUPPORT_H

#include <check.h>
#include <math.h>

#include "checks.h"
#include "featherbone/featherbone.h"
#include "scenes.h"

/* CK_ASAN: 1 in a build with AddressSanitizer (GCC defines __SANITIZE_ADDRESS__, clang answers
 * __has_feature), which runs the simulation about 20x slower: suites that simulate whole clips
 * take excerpts there, to keep the CI within its budget. */
#if defined(__SANITIZE_ADDRESS__)
#define CK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CK_ASAN 1
#endif
#endif
#ifndef CK_ASAN
#define CK_ASAN 0
#endif

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

/* Runs `program args` through the shell, stderr joined to stdout, the output into out (cap
 * bytes, NUL-terminated); returns the exit code, or fails the test when it did not exit. */
int ck_run(const char* program, const char* args, char* out, size_t cap);

/* The entries of the directory dir other than . and .., or fails the test. */
int ck_count_entries(const char* dir);

/* Removes the files in the (flat) directory dir and dir itself; nothing when it is not there. */
void ck_remove_dir(const char* dir);

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

/* The 10 random trees of the cross-checks against other engines (scene_random_tree, up to 30
 * bodies: every joint type, floating joints at the root and further down, rotated X_tree,
 * off-diagonal inertias, welded bodies), each handed to check with a label and a seed 1..10. */
typedef void (*ck_tree_check)(const char* label, const fb_model* m, uint64_t seed);
void ck_random_trees(ck_tree_check check);

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

/* g of an elliptic swing range (fb_joint_limit, model.h) at rotation q, computed independently
 * of the library (the angle by acos, its direction from d0 x b normalised): <= 1 inside,
 * 1 on the boundary; G (not NULL) its gradient in (s1, s2). b at d0 gives 0 (G = 0), b
 * opposite it NaN. */
double ck_swing_g(const fb_joint_limit* L, fb_quat q, double G[2]);

#endif /* FB_TEST_SUPPORT_H */
