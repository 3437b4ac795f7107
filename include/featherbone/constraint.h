/* featherbone: constraints on articulations, solved as one mixed LCP [Kokkevis §4, §6].
 *
 * A constraint row asks for an acceleration: of one joint dof, or of a point of a body along a
 * direction, or of a point relative to a point of another articulation (a ball against a
 * character) or of another body of the same articulation (self-collision). Each row has a multiplier lambda bounded by [lo, hi]: a torque on the dof, or a
 * force lambda n at the point (and -lambda n at the second point). Friction rows take their
 * bounds from a normal row: |lambda| <= mu lambda_normal.
 *
 * The constraint matrix K (K[r][c] = the acceleration of row r per unit multiplier of row c,
 * = J M^-1 J^T) is built column by column: column c is dqdd_c = M^-1 J_c^T, the response of
 * every joint to the row's multiplier, by default from test-force responses (AccelerationDeltas,
 * Kokkevis §4.3): one backward pass along the test force's path to the root and one forward
 * pass, reusing ABA phase 1, instead of an ABA call per column; or by one sparse solve with
 * each articulation's joint-space inertia M factored as L^T L along its tree (RBDA §6.5). After
 * the solve the joint accelerations are qdd = qdd0 + sum_c lambda_c dqdd_c, with no further ABA
 * call. A tracking controller's dof rows (one per dof) are best left out of K and solved in
 * joint space with M (FB_K_JOINT_SPACE, fb_csys_solve). */
#ifndef FEATHERBONE_CONSTRAINT_H
#define FEATHERBONE_CONSTRAINT_H

#include <stdint.h>

#include "base.h"
#include "data.h"
#include "model.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- test-force responses (AccelerationDeltas) [Kokkevis §4.3] ------------------------- */

/* dqdd (nv) = M^-1 J_i^T f: the change of every joint acceleration when the spatial force f
 * (world coordinates, about the world origin, like f_ext) acts on body i and the joint forces
 * stay as they are; also leaves each body's change of acceleration in d->da. Needs
 * FB_STAGE_ABA1. O(n), allocation-free. */
FB_API void fb_accel_delta_force(const fb_model* m, fb_data* d, int body, fb_fv f, double* dqdd);

/* dqdd (nv) = M^-1 (J_a^T f_a + J_b^T f_b): the response to two spatial forces (world
 * coordinates, about the origin) on bodies a and b of the same articulation at once, such as
 * the equal and opposite forces of a contact between two of its bodies. One backward pass
 * along the union of the two paths to the root and one forward pass; d->da as above. Bodies
 * may be equal. Needs FB_STAGE_ABA1. O(n), allocation-free. */
FB_API void fb_accel_delta_force_pair(const fb_model* m, fb_data* d, int body_a, fb_fv f_a,
                                      int body_b, fb_fv f_b, double* dqdd);

/* dqdd (nv) = M^-1 e_k: the response to a unit generalised force on dof k; d->da as above. */
FB_API void fb_accel_delta_dof(const fb_model* m, fb_data* d, int dof, double* dqdd);

/* dqdd (nv) = M^-1 tau with tau zero except w.x, w.y, w.z on the first (up to three) dofs of
 * body i's joint: a torque along an axis of a spherical joint, for instance. */
FB_API void fb_accel_delta_joint(const fb_model* m, fb_data* d, int body, fb_v3 w,
                                 double* dqdd);

/* ---- rows and the constraint system ------------------------------------------------------ */

typedef enum fb_row_type {
    FB_ROW_DOF = 0,  /* the acceleration of one dof of articulation `art` */
    FB_ROW_POINT = 1, /* n . (acceleration of point p on body) [minus that of p_b on body_b] */
    FB_ROW_JOINT = 2  /* n . (accelerations of the first three dofs of body's joint): n.x alone
                         for a hinge, an axis in child coordinates for a spherical joint */
} fb_row_type;

/* Most articulations one constraint system spans (a character and its balls). */
#define FB_CSYS_MAX_ART 16

typedef struct fb_row {
    fb_row_type type;
    int art;         /* articulation of the dof, or of the point */
    int dof;         /* FB_ROW_DOF */
    int body;        /* FB_ROW_POINT: the body ...; FB_ROW_JOINT: the joint's body */
    fb_v3 p;         /* ... and the point on it, body coordinates (m) */
    int art_b;       /* FB_ROW_POINT: -1, or the articulation of a second point whose
                        acceleration is subtracted: another articulation, or art itself with
                        body_b != body (the row's test force is then one pair of forces, the
                        column the difference of the two bodies' responses), or body_b ==
                        body with p_b != p (a couple: the row reads the body's angular
                        acceleration about (p - p_b) x n, times |p - p_b|) */
    int body_b;      /* the second point's body ... */
    fb_v3 p_b;       /* ... and the point, body coordinates */
    fb_v3 n;         /* FB_ROW_POINT: unit direction, world coordinates; FB_ROW_JOINT: unit
                        weights of the joint's dofs (components past its dof count zero) */
    double lo, hi;   /* bounds of the multiplier (N or N m); -INFINITY / INFINITY allowed */
    int friction_of; /* -1, or the index of the normal row that bounds this one by mu */
    double mu;       /* friction coefficient for friction rows */
    double target;   /* the acceleration the row aims at (m/s^2, rad/s^2) */
    uint64_t id;     /* identity across steps, for warm starting (0 = none) */
} fb_row;

/* A row with defaults: point type, no second point, bounds [0, inf), no friction, target 0. */
FB_API fb_row fb_default_row(void);

typedef struct fb_pgs_opts {
    int max_iter;   /* sweeps at most (default 200) */
    double tol;     /* stop when no multiplier moves by more than this (default 1e-10) */
    double rel_tol; /* or by more than rel_tol times the largest multiplier after the sweep
                       (default 0: off; the world's default options set 1e-8) */
    bool warm;      /* start from the previous solve's multipliers of rows with the same id */
} fb_pgs_opts;

FB_API fb_pgs_opts fb_default_pgs_opts(void);

/* How fb_csys_build forms K and the responses. */
typedef enum fb_k_method {
    FB_K_TEST_FORCES = 0, /* default: one test-force response per row [Kokkevis §4.3] */
    FB_K_FACTOR = 1,      /* M of each articulation (CRBA) factored as L^T L along its tree
                             [RBDA §6.5]; column c = M^-1 J_c^T by one sparse solve. Cheaper
                             than test forces for many dof rows, dearer for a few point rows */
    FB_K_JOINT_SPACE = 2, /* test forces, except for an articulation that has dof rows
                             (FB_ROW_DOF) on at least 8 of its dofs, one row per dof at most,
                             such as a tracking controller's: that articulation's share of K and
                             of the responses is left out (K's entries between two of its dof
                             rows, columns and the rows' entries on it). fb_csys_solve solves it
                             in joint space with its M, forming what a solve still needs
                             (an impact's contact rows) on demand, and fb_csys_apply uses the
                             solver's joint accelerations. What a world step uses; without
                             such an articulation it forms K as FB_K_BACKWARD does */
    FB_K_BACKWARD = 3     /* one backward pass of test forces per row and no forward pass:
                             ABA's backward map Gamma (generalised force -> change of u) factors
                             M^-1 = Gamma^T D^-1 Gamma, so K_rc = sum over the bodies on both
                             rows' paths of du_r . D^-1 du_c. The columns dqdd are not formed;
                             fb_csys_apply and fb_csys_impulse sum the rows' forces into one
                             response per articulation */
} fb_k_method;

/* Rows over a set of articulations, the constraint matrix, and the solver's state. */
typedef struct fb_csys {
    int nart;
    const fb_model* m[FB_CSYS_MAX_ART];
    fb_data* d[FB_CSYS_MAX_ART];
    int nrow;       /* rows added since the last clear */
    int cap;        /* most rows */
    fb_row* row;    /* (cap) */
    double* K;      /* (cap x cap) row-major, nrow x nrow used; fb_csys_build (with
                       FB_K_JOINT_SPACE see there) */
    double* a0;     /* (cap) each row's acceleration with zero multipliers; fb_csys_build */
    double* lambda; /* (cap) multipliers; fb_csys_solve */
    double* dqdd;   /* (cap x total nv) column c's joint-acceleration response, per articulation
                       at offset col * nv_total + v_off[art]. FB_K_JOINT_SPACE: only for the
                       dofs on the rows' paths to the root, none for an articulation left out,
                       and none at all when no articulation is left out; FB_K_BACKWARD: none */
    int v_off[FB_CSYS_MAX_ART];
    int nv_total;
    int iterations;  /* sweeps the last solve used (with a joint-space block: pivots) */
    double residual; /* largest violation of the LCP conditions after the last solve */
    bool asleep[FB_CSYS_MAX_ART]; /* articulations left out of the system (a world's sleeping
                                     ones): fb_csys_set_asleep */
    /* private */
    uint64_t* prev_id;
    double* prev_lambda;
    int nprev;
    double* blk_L; /* (cap x cap) Cholesky factor of the joint-row block (fb_csys_solve) */
    double* blk_x; /* (cap) */
    int* blk_idx;  /* (cap) rows of the block */
    double* blk_F; /* (cap x cap) Cholesky factor of the block's rows not held at a bound */
    int* blk_state; /* (cap) 0 free, -1 held at lo, +1 held at hi */
    int* blk_free;  /* (cap) the free rows (indices into blk_idx) */
    int blk_ver, blk_fver; /* the held set's version, and the version blk_F was factored for */
    int nrow_max;          /* the most rows it has held: K, blk_L and blk_F (n x n, n <= nrow) have
                              never been written past nrow_max^2 (fb_csys_copy copies that much) */
    fb_k_method k_method;
    void* tree;      /* (nart) each articulation's dof tree (src/dynamics/crba.h) */
    double* M;       /* M of articulation k at M + m_off[k] (nv_k x nv_k) ... */
    double* L;       /* ... its factor, compressed, at L + l_off[k] ... */
    size_t m_off[FB_CSYS_MAX_ART], l_off[FB_CSYS_MAX_ART];
    bool m_valid[FB_CSYS_MAX_ART]; /* ... for the last fb_csys_build: M can be had, ... */
    bool m_ready[FB_CSYS_MAX_ART]; /* ... and is there (made when first needed) */
    bool lazy[FB_CSYS_MAX_ART];    /* its share of K and dqdd is left out (FB_K_JOINT_SPACE) */
    bool l_valid[FB_CSYS_MAX_ART]; /* L is M's factor */
    bool e_valid[FB_CSYS_MAX_ART]; /* the last solve left its joint accelerations' change in
                                      e + v_off[k] (the joint-space solve) */
    double* e;       /* (nv_total) */
    unsigned char* unformed; /* (cap) FB_K_JOINT_SPACE: 0 column c of dqdd and its K entries
                                are complete; 1 they lack the share of the articulations left
                                out; 2 the row acts on those only (no column, K entries 0) */
    int* dof_art;    /* (nv_total) the articulation of each global dof */
    int* jidx;       /* (cap x nv_total) row r's generalised force J_r^T: global dof ... */
    double* jval;    /* ... and value, entries jstart[r] .. + jcount[r] - 1 */
    int* jstart;     /* (cap) */
    int* jcount;     /* (cap) */
    void* js;        /* the joint-space solver's scratch */
    /* FB_K_JOINT_SPACE: the bodies on the paths of the rows, per articulation (nbody bytes at
     * visit + b_off[k]); the columns hold the responses of their dofs only, and fb_csys_apply
     * sums the rows' forces into one response per articulation instead */
    unsigned char* visit;
    unsigned char* mark;
    size_t b_off[FB_CSYS_MAX_ART];
    bool restricted;
    int* in_body;    /* (2 cap) inputs of one summed response: bodies, forces ... */
    fb_fv* in_f;     /* (2 cap) */
    int* in_dof;     /* (3 cap) ... dofs, generalised forces */
    double* in_tau;  /* (3 cap) */
    double* vwork;   /* (largest nv) */
    /* FB_K_BACKWARD (and FB_K_JOINT_SPACE with no articulation left out): per row, du and
     * D^-1 du of its backward pass (cap x nv_total, at the global dofs of the bodies on its
     * paths) and those bodies (cap x nbody_total, global body index b_off[art] + body,
     * highest first; kpn of them) */
    double* kdu;
    double* ky;
    int* kpath;
    int* kpn;        /* (cap) */
    int* gdof;       /* (nbody_total) each body's first global dof ... */
    int* gnv;        /* (nbody_total) ... and its dof count */
    int nbody_total;
    bool kbuilt;     /* the last build was by backward passes (kdu, ky, kpath valid) */
    double* pgs_rhs; /* (cap) b - t of each row during the sweeps ... */
    unsigned char* pgs_on; /* (cap) ... and whether the sweeps move it */
    int* klist;      /* (nbody_total x cap) the rows whose paths pass through each body ... */
    int* klen;       /* (nbody_total) ... and their count */
    int* kseg;       /* (3 nbody_total) runs of adjoining dofs the same rows pass through: a
                        body whose list applies, first global dof, count */
    fb_allocator alloc;
    void* block; /* the single allocation all arrays point into */
} fb_csys;

/* A system over `nart` articulations (model and data each) holding up to max_rows rows. */
FB_API fb_csys* fb_csys_create(int nart, const fb_model* const* m, fb_data* const* d,
                               int max_rows, const fb_allocator* alloc, fb_error* err);
FB_API void fb_csys_destroy(fb_csys* cs);

/* Makes dst what src is, rows, multipliers and warm starts included, dst keeping its models and
 * data (which the caller copies); both made with the same articulations' shapes and rows
 * (FB_EINVAL otherwise, nothing copied). */
FB_API fb_status fb_csys_copy(fb_csys* dst, const fb_csys* src, fb_error* err);

/* Chooses how fb_csys_build forms K (FB_K_TEST_FORCES when created). */
FB_API void fb_csys_set_k_method(fb_csys* cs, fb_k_method method);

/* Leaves articulation art out of the system (asleep true) or takes it back: an articulation
 * left out takes no rows (fb_csys_add_row refuses them with FB_ESTATE), needs no ABA for
 * fb_csys_build, and fb_csys_apply and fb_csys_impulse leave its qdd, qd and stage alone. What
 * fb_world does for a sleeping articulation (world.h). Out of range: nothing. */
FB_API void fb_csys_set_asleep(fb_csys* cs, int art, bool asleep);

/* Removes the rows (the multipliers of the last solve stay for warm starting). */
FB_API void fb_csys_clear(fb_csys* cs);

/* Adds a row. FB_EINVAL for a bad row (message names the field), FB_ECAPACITY when full,
 * FB_ESTATE for a row on an articulation left out of the system (fb_csys_set_asleep). */
FB_API fb_status fb_csys_add_row(fb_csys* cs, const fb_row* row, fb_error* err);

/* Builds K, the responses dqdd and a0 (by cs->k_method). Every articulation but those left
 * out (fb_csys_set_asleep) must have ABA phase 1 and 2 done for the current state and forces
 * (FB_STAGE_ABA1 | FB_STAGE_ACC).
 * FB_ENUMERIC when an articulation's joint-space inertia is not positive definite.
 * Allocation-free. */
FB_API fb_status fb_csys_build(fb_csys* cs, fb_error* err);

/* Rebuilds a0 only, after the velocities changed and ABA ran again at the same positions (K
 * and the responses depend on the positions alone). */
FB_API fb_status fb_csys_build_a0(fb_csys* cs, fb_error* err);

/* Each row's current velocity (J qd: the quantity whose rate the row constrains) into v
 * (nrow). Needs FB_STAGE_VEL in every articulation. */
FB_API void fb_csys_row_velocity(const fb_csys* cs, double* v);

/* Projected Gauss-Seidel on the mixed LCP: find lambda in [lo, hi] (friction rows in
 * [-mu lambda_n, mu lambda_n]) with w = K lambda + a0 - target such that w >= 0 where lambda is
 * at lo, w <= 0 where at hi, w = 0 between [Kokkevis §6, Cline §2.7]. Sets lambda,
 * iterations and residual. Allocation-free.
 *
 * An articulation with dof rows on at least 8 of its dofs (one each at most; a tracking
 * controller's) whose M the last build made (FB_K_FACTOR, FB_K_JOINT_SPACE) is solved in joint
 * space instead: its dof rows pin their dofs' accelerations, or sit at a bound, and the other
 * rows see the articulation through the dofs at a bound only. A principal pivoting method
 * (Cottle-Dantzig, with box bounds as in Baraff 1994) finds which dofs and rows are at a bound,
 * every pivot costing O(nv x dofs at a bound) rather than O(rows^2); friction bounds are
 * updated from the normal multipliers and the pivoting repeated (at most 4 times). Where it
 * cannot (a cycle, an unbounded direction) the rows are swept by PGS as above. */
FB_API void fb_csys_solve(fb_csys* cs, const fb_pgs_opts* opts);

/* Adds sum_c lambda_c dqdd_c to every articulation's d->qdd. With FB_K_JOINT_SPACE the same
 * response is one test-force pass per articulation with all the rows' forces (ABA phase 1 of
 * the build's positions: made again if the caller ran kinematics since), or for an
 * articulation solved in joint space the solve's own joint accelerations. */
FB_API void fb_csys_apply(fb_csys* cs);

/* Impacts [Kokkevis §5]: the same LCP at the velocity level. Finds impulses lambda in the rows'
 * bounds (friction rows within mu times their normal impulse) such that the rows' velocities
 * after the impulse, v + K lambda, reach v_target where lambda is strictly inside its bounds
 * and exceed it where lambda is at lo (K maps impulses to velocity changes just as it maps
 * forces to accelerations). A row whose v_target is -INFINITY gets no impulse. Then adds
 * sum_c lambda_c dqdd_c to every d->qd (as fb_csys_apply adds to qdd). Multipliers of previous force solves stay for warm
 * starting; sets iterations and residual. Allocation-free. */
FB_API void fb_csys_impulse(fb_csys* cs, const double* v, const double* v_target,
                            const fb_pgs_opts* opts);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_CONSTRAINT_H */
