/* What the files of the constraint system share (internal; the API is
 * include/featherbone/constraint.h). The system is split as MuJoCo splits building the rows
 * from solving them, and Box2D its constraint graph from its solvers:
 *
 *   csys.c           the system: rows, lifetime, a0 and row velocities, the entry points of
 *                    build and solve, and what the multipliers do (apply, impulse)
 *   k_test_forces.c  K by test forces [Kokkevis §4.3] (FB_K_TEST_FORCES), and one
 *                    articulation's part of a column by test forces
 *   k_backward.c     K by backward passes alone (FB_K_BACKWARD) [Featherstone 2010]
 *   k_factor.c       K by the sparse factorisation of M [RBDA §6.5] (FB_K_FACTOR), and what
 *                    FB_K_JOINT_SPACE leaves out and forms on demand
 *   pgs.c            projected Gauss-Seidel [Kokkevis §6], with the block of joint rows
 *   joint_space.c    the joint-space solve of a tracked articulation's dof rows with the other
 *                    rows, by principal pivoting [Baraff 1994, Judice–Pires]
 *
 * The small helpers several of them call in their loops are static inline here, so that each
 * file's compiler sees them as the single file did. */
#ifndef FB_CONSTRAINT_CSYS_INTERNAL_H
#define FB_CONSTRAINT_CSYS_INTERNAL_H

#include <math.h>
#include <string.h>

#include "featherbone/constraint.h"
#include "featherbone/dynamics.h"
#include "dynamics/crba.h"
#include "math/spatial.h"

/* Dof rows an articulation needs for its block to be solved apart (in joint space, or as one
 * block of PGS). */
#define BLOCK_MIN_ROWS 8

/* The system one solve works on: w = K lambda + b - t, with rows whose target t is -inf
 * (impulse solves only) held at zero. */
typedef struct lcp_rhs {
    const double* b; /* (nrow) value with zero multipliers: a0, or the current velocities */
    const double* t; /* (nrow) targets, or NULL for each row's own target */
} lcp_rhs;

/* ---- rows (csys.c) ------------------------------------------------------------------------ */

/* n . (the first three entries of x at body i's joint dofs): a joint row's value of x. */
static inline double joint_dot(const fb_model* m, int body, fb_v3 n, const double* x) {
    const double w[3] = {n.x, n.y, n.z};
    const double* xi = x + m->v_adr[body];
    double s = 0.0;
    for (int k = 0; k < m->jnv[body] && k < 3; k++) {
        s += w[k] * xi[k];
    }
    return s;
}

/* The world spatial force (about the origin) of a force n at point p of body. */
static inline fb_fv point_force(const fb_data* d, int body, fb_v3 p, fb_v3 n) {
    const fb_v3 pw = fb_point_pos(NULL, d, body, p);
    return (fb_fv){fb_v3_cross(pw, n), n};
}

/* The inputs of row c's multiplier (times l) on articulation k, appended to the summed
 * response's input arrays at *nf forces and *nt generalised forces. */
void fb_row_inputs(fb_csys* cs, int c, int k, double l, int* nf, int* nt);

/* Row r's bounds, friction rows from their normal row's current multiplier. */
static inline void bounds(const fb_csys* cs, int r, double* lo, double* hi) {
    const fb_row* row = &cs->row[r];
    if (row->friction_of >= 0) {
        const double ln = cs->lambda[row->friction_of];
        const double limit = row->mu * (ln > 0.0 ? ln : 0.0);
        *lo = -limit;
        *hi = limit;
    } else {
        *lo = row->lo;
        *hi = row->hi;
    }
}

static inline double rhs_target(const fb_csys* cs, const lcp_rhs* q, int r) {
    return q->t ? q->t[r] : cs->row[r].target;
}

/* How far row r with multiplier lambda_r and residual w violates its LCP conditions. */
static inline double lcp_violation(const fb_csys* cs, int r, double w) {
    double lo, hi;
    bounds(cs, r, &lo, &hi);
    const double l = cs->lambda[r];
    if (l <= lo && l >= hi) {
        return 0.0; /* a row pinned by lo == hi (e.g. friction without normal force) */
    }
    if (l <= lo) {
        return fmax(0.0, -w);
    }
    if (l >= hi) {
        return fmax(0.0, w);
    }
    return fabs(w);
}

/* a . b over n entries, in four running sums (a single sum waits on each addition's latency;
 * the order is fixed, so the result is the same on every run). With GCC or Clang and SSE2 the
 * four sums are two pairs of lanes, each lane doing exactly the arithmetic of its scalar sum,
 * so both forms give the same bits. */
#if defined(__GNUC__) && defined(__SSE2__)
typedef double fb_v2d __attribute__((vector_size(16), aligned(8)));
static inline double dot4(const double* a, const double* b, int n) {
    fb_v2d s01 = {0.0, 0.0}, s23 = {0.0, 0.0};
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        fb_v2d a01, a23, b01, b23; /* unaligned loads, without aliasing a double as a vector */
        memcpy(&a01, a + k, sizeof a01);
        memcpy(&a23, a + k + 2, sizeof a23);
        memcpy(&b01, b + k, sizeof b01);
        memcpy(&b23, b + k + 2, sizeof b23);
        s01 += a01 * b01;
        s23 += a23 * b23;
    }
    double s0 = s01[0];
    for (; k < n; k++) {
        s0 += a[k] * b[k];
    }
    return (s0 + s01[1]) + (s23[0] + s23[1]);
}
#else
static inline double dot4(const double* a, const double* b, int n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; k++) {
        s0 += a[k] * b[k];
    }
    return (s0 + s1) + (s2 + s3);
}
#endif

/* ---- K (k_test_forces.c, k_backward.c, k_factor.c) ----------------------------------------- */

/* K and the responses by test forces [Kokkevis §4.3]. */
void fb_k_test_forces(fb_csys* cs);

/* Articulation k's part of column c by test forces [Kokkevis §4.3]: the response of k's
 * joints to row c's multiplier acting on k. */
void fb_k_test_force_part(fb_csys* cs, int c, int k);

/* Test forces after the build need ABA phase 1 of the build's positions: if the caller ran
 * kinematics since (which clears the stage), phase 1 again (same positions, same result). */
static inline void phase1_again(fb_csys* cs, int k) {
    if (!(cs->d[k]->stage & FB_STAGE_ABA1)) {
        (void)fb_aba_phase1(cs->m[k], cs->d[k], NULL);
    }
}

/* K from the rows' backward passes (FB_K_BACKWARD). */
void fb_k_backward(fb_csys* cs);

/* K by the factorisation (FB_K_FACTOR) or with the articulations solved in joint space left
 * out (FB_K_JOINT_SPACE), after a0; FB_ENUMERIC when an M is not positive definite. */
fb_status fb_k_factor(fb_csys* cs, fb_error* err);

/* Articulation k's M (+ h B) by CRBA, if the build has not made it yet. */
static inline void ensure_m(fb_csys* cs, int k) {
    if (!cs->m_ready[k]) {
        fb_crba_matrix(cs->m[k], cs->d[k], cs->M + cs->m_off[k]);
        cs->m_ready[k] = true;
    }
}

/* For a solve that needs them: the full columns of the rows that take part (finite target)
 * and their K entries, where the build left out an articulation's share (FB_K_JOINT_SPACE). */
void fb_k_form_needed(fb_csys* cs, const double* target_or_null);

/* ---- the solvers (pgs.c, joint_space.c) ----------------------------------------------------- */

/* Projected Gauss-Seidel, with a block of joint rows where there are enough of them; sets
 * cs->iterations and cs->residual. */
void fb_pgs_sweeps(fb_csys* cs, const lcp_rhs* q, const fb_pgs_opts* o);

/* Carves the joint-space solve's scratch for articulations of at most n dofs and cap rows
 * (base NULL: counts the bytes; util/block.h). */
void* fb_js_layout(char* base, size_t* off, size_t n, size_t cap);

/* After fb_js_layout has placed dst's scratch over a copy of src's block: the scratch's values
 * that are not arrays (the warm start's sets' sizes, the clamped tree's counts), from src's. */
void fb_js_copy_values(void* dst, const void* src);

/* The articulation the joint-space solve applies to, or -1. */
int fb_js_art(fb_csys* cs, const lcp_rhs* q);

/* The joint-space solve of articulation a, by pivoting with friction tied to its normals
 * (ties) or by staggered rounds (not ties); false when it gives up (then PGS). */
bool fb_js_solve(fb_csys* cs, const lcp_rhs* q, int a, bool ties);

#endif /* FB_CONSTRAINT_CSYS_INTERNAL_H */
