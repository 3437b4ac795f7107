/* featherbone: fb_model, the articulated character, constant after it is built.
 *
 * Numbering follows RBDA: body 0 is the fixed world, bodies 1..nbody-1 each have exactly one
 * joint connecting them to parent[i] < i. Every body frame has its origin at its joint.
 *
 * Joints and their coordinates (q has nq entries, velocities/forces have nv):
 *   FIXED      nq 0 nv 0
 *   REVOLUTE   nq 1 nv 1  angle (rad) about `axis`, given in the joint frame
 *   PRISMATIC  nq 1 nv 1  displacement (m) along `axis`, given in the joint frame
 *   SPHERICAL  nq 4 nv 3  q = unit quaternion [w x y z] of the child relative to the joint
 *                         frame; v = angular velocity in child coordinates
 *   FLOATING   nq 7 nv 6  q = [p; quat]: child origin in joint-frame coordinates, then the
 *                         quaternion; v = [w; v], the child's spatial velocity relative to the
 *                         parent in child coordinates (S = identity)
 * For every joint type here the motion subspace S is constant in child coordinates, so the
 * model stores it (RBDA Table 4.1; the floating joint as in RBDA §4.5). */
#ifndef FEATHERBONE_MODEL_H
#define FEATHERBONE_MODEL_H

#include <stdbool.h>

#include "base.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fb_joint_type {
    FB_JOINT_FIXED = 0,
    FB_JOINT_REVOLUTE = 1,
    FB_JOINT_PRISMATIC = 2,
    FB_JOINT_SPHERICAL = 3,
    FB_JOINT_FLOATING = 4
} fb_joint_type;

/* Largest number of position / velocity coordinates one joint has. */
#define FB_JOINT_NQ_MAX 7
#define FB_JOINT_NV_MAX 6

/* Name capacity per body, including the terminating NUL. */
#define FB_NAME_MAX 64

/* Options that may change between steps (through validating setters, never mid-step). */
typedef struct fb_options {
    fb_v3 gravity; /* m/s^2, world coordinates; default (0, -9.81, 0) */
} fb_options;

/* Collision and mass geometry attached to a body (body coordinates, metres). */
typedef enum fb_shape_type {
    FB_SHAPE_SPHERE = 0,
    FB_SHAPE_CAPSULE = 1,
    FB_SHAPE_BOX = 2
} fb_shape_type;

typedef struct fb_shape {
    fb_shape_type type;
    int body;      /* the body it belongs to */
    double radius; /* sphere, capsule */
    fb_v3 p0, p1;  /* capsule: the axis segment; sphere and box: p0 is the centre */
    fb_v3 size;    /* box: edge lengths along its axes */
    fb_m3 R;       /* box: its axes as columns, in body coordinates */
} fb_shape;

/* A joint's range of motion [Kokkevis §8.2]. Revolute and prismatic joints: lo <= q <= hi.
 * Spherical joints: the child's rotation q is split into a twist about `twist_axis` (child
 * coordinates; the same in the joint frame at rest) and a swing of that axis; the twist angle
 * stays within [lo, hi] and the swing within a cone:
 *   circular (elliptic false): the angle between the axis at rest and b = R(q) twist_axis
 *     stays <= `swing`;
 *   elliptic (anatomical ranges, docs/CONSTRAINTS.md): the swing vector s = theta k, the
 *     rotation taking `neutral` d0 to b (theta the angle between them, k = d0 x b / |d0 x b|),
 *     has components s1 = s . u1 and s2 = s . u2 on u1 = `swing_axis` and u2 = d0 x u1; each
 *     quadrant of the (s1, s2) plane is a quarter ellipse through the four bounds:
 *     g = sqrt((s1/r1)^2 + (s2/r2)^2) <= 1 with r1 = swing_hi[0] where s1 >= 0 and
 *     -swing_lo[0] where s1 < 0, r2 likewise. fb_model_set_limit sets `swing` to the
 *     largest of the four radii (the circumscribing circular cone about d0).
 * Floating and fixed joints have none. */
typedef struct fb_joint_limit {
    bool on;
    double lo, hi;    /* rad or m; spherical: twist range (rad), within [-pi, pi] */
    double swing;     /* spherical: cone half-angle (rad), in (0, pi] */
    fb_v3 twist_axis; /* spherical: unit axis, child coordinates */
    bool elliptic;    /* spherical: the swing range below instead of the circular cone */
    fb_v3 neutral;    /* elliptic: d0, unit, joint frame (where the swing is measured from) */
    fb_v3 swing_axis; /* elliptic: u1, unit, joint frame, perpendicular to d0 */
    double swing_lo[2]; /* elliptic: s1 >= swing_lo[0], s2 >= swing_lo[1] (rad, in [-pi, 0)) */
    double swing_hi[2]; /* elliptic: s1 <= swing_hi[0], s2 <= swing_hi[1] (rad, in (0, pi]) */
} fb_joint_limit;

/* Everything needed to add one body. Start from fb_default_body_def(). */
typedef struct fb_body_def {
    const char* name;    /* unique, non-empty, shorter than FB_NAME_MAX */
    int parent;          /* index of an already-added body; 0 = world */
    fb_joint_type joint; /* joint connecting this body to its parent */
    fb_v3 axis;          /* unit axis in the joint frame (REVOLUTE, PRISMATIC only) */
    fb_xf X_tree;        /* parent body frame -> joint frame [RBDA §4.2, X_T] */
    fb_rbi inertia;      /* body inertia in body coordinates; m > 0 unless FIXED */
    fb_joint_limit limit; /* range of motion; off by default */
    double damping;       /* passive joint damping b >= 0 (N m s/rad, N s/m): the joint feels
                             -b qd on each of its dofs (floating joints: none); default 0 */
    double friction;      /* passive joint friction f >= 0 (N m, N): each dof resists moving
                             with up to f, a world row (floating joints: none); default 0 */
} fb_body_def;

/* A def with parent 0, a FIXED joint, identity X_tree, axis (0,0,1) and zero inertia. */
FB_API fb_body_def fb_default_body_def(void);

/* The model. Fields are readable; change them only through the functions below. Array shapes
 * are given in parentheses. */
typedef struct fb_model {
    int nbody; /* bodies including the world body 0 */
    int nq;    /* position coordinates */
    int nv;    /* velocity coordinates (degrees of freedom) */

    int* parent;           /* (nbody) parent body, parent[i] < i; parent[0] = -1 */
    fb_joint_type* jtype;  /* (nbody) joint type of body i; world = FIXED */
    int* q_adr;            /* (nbody) first index of body i's joint in q */
    int* v_adr;            /* (nbody) first index of body i's joint in v, qd, tau */
    int* jnq;              /* (nbody) joint position coordinates */
    int* jnv;              /* (nbody) joint degrees of freedom */
    fb_v3* axis;           /* (nbody) joint axis in the joint frame (revolute/prismatic) */
    fb_xf* X_tree;         /* (nbody) parent frame -> joint frame */
    bool* X_tree_rot;      /* (nbody) X_tree[i].E is not the identity (else a pure shift,
                              which lets kinematics skip a 3x3 product) */
    fb_rbi* I;             /* (nbody) body inertia in body coordinates */
    fb_joint_limit* limit; /* (nbody) joint range of motion (limit[i].on) */
    double* damping;       /* (nbody) passive joint damping b: ABA adds -b qd to tau */
    double* friction;      /* (nbody) passive joint friction f per dof: the world's rows
                              (fb_world_step; dynamics functions leave it out) */
    char (*name)[FB_NAME_MAX]; /* (nbody) body names; world is "world" */
    fb_mv* S;              /* (nv) motion subspace column of each dof, child coordinates */
    int* dof_body;         /* (nv) body owning each dof */
    double* q_neutral;     /* (nq) the zero configuration: zero angles, identity quaternions */
    int nshape;            /* shapes attached */
    fb_shape* shape;       /* (nshape) */

    fb_options opt;

    int capacity;   /* most bodies this model can hold, world included */
    int shape_capacity; /* most shapes: two per body */
    bool finalized; /* true once fb_model_finalize succeeded; the model is then constant */

    /* private */
    fb_allocator alloc;
    void* block; /* the single allocation all arrays point into */
} fb_model;

/* Makes an empty model (world body only) able to hold `max_bodies` bodies besides the world.
 * `alloc` may be NULL for the default allocator. Returns NULL and fills `err` on failure. */
FB_API fb_model* fb_model_create(int max_bodies, const fb_allocator* alloc, fb_error* err);

/* Frees the model. NULL does nothing. */
FB_API void fb_model_destroy(fb_model* m);

/* Adds one body. On success writes its index to *id (may be NULL).
 * Returns FB_EINVAL for a bad def (message names the body and field), FB_ECAPACITY when full,
 * FB_ESTATE after finalize. */
FB_API fb_status fb_model_add_body(fb_model* m, const fb_body_def* def, int* id, fb_error* err);

/* Attaches a shape to an existing body. FB_EINVAL for a bad shape (non-positive or non-finite
 * sizes, a body that does not exist, box axes that are not a rotation), FB_ECAPACITY when
 * full, FB_ESTATE after finalize. */
FB_API fb_status fb_model_add_shape(fb_model* m, const fb_shape* shape, fb_error* err);

/* Computes coordinate addresses and motion subspaces and checks the whole model. After it
 * succeeds the model is constant and can be shared read-only by any number of fb_data. */
FB_API fb_status fb_model_finalize(fb_model* m, fb_error* err);

/* Sets (or with lim->on false, removes) body i's joint limit; allowed before finalize only.
 * FB_EINVAL for a joint type without limits or a bad range (the message names the field). */
FB_API fb_status fb_model_set_limit(fb_model* m, int body, const fb_joint_limit* lim,
                                    fb_error* err);

/* Sets body i's passive joint damping (any time: it changes no structure). FB_EINVAL for a
 * negative or non-finite value or a floating joint. */
FB_API fb_status fb_model_set_damping(fb_model* m, int body, double damping, fb_error* err);

/* Sets body i's passive joint friction (dry friction, MuJoCo's frictionloss): each dof of its
 * joint resists moving with a torque (force) up to `friction`, and holds still under less. It
 * is a constraint, not a force ABA knows: a world step adds a row for each such dof of an
 * articulation not driven (fb_world_set_driven) that no caller's dof row holds; a joint a
 * controller holds gets none (docs/CONSTRAINTS.md, "Joint friction"). Any time; FB_EINVAL as
 * fb_model_set_damping. */
FB_API fb_status fb_model_set_friction(fb_model* m, int body, double friction, fb_error* err);

/* Body index by name, or -1. */
FB_API int fb_model_body_by_name(const fb_model* m, const char* name);

/* Sets the gravity vector (m/s^2, world coordinates). FB_EINVAL if not finite. */
FB_API fb_status fb_model_set_gravity(fb_model* m, fb_v3 gravity, fb_error* err);

/* Total mass of all bodies (kg). */
FB_API double fb_model_mass(const fb_model* m);

/* Short name of a joint type ("spherical"). */
FB_API const char* fb_joint_type_name(fb_joint_type t);

/* Number of position / velocity coordinates of a joint type. */
FB_API int fb_joint_nq(fb_joint_type t);
FB_API int fb_joint_nv(fb_joint_type t);

/* Rigid-body inertia from mass (kg), centre of mass c (m, body coordinates) and the
 * rotational inertia about the centre of mass, Ic (kg m^2, body axes) [RBDA eq 2.63]. */
FB_API fb_rbi fb_rbi_from_mass_com(double mass, fb_v3 c, fb_m3 Ic);

/* Writes the model as MuJoCo XML (MJCF) for MuJoCo 2.2 or later: nested bodies with their
 * rest placement, explicit inertials (mass, centre, full inertia about the centre), joints
 * (free for a floating root, three slides and a ball for a floating joint further down, ball,
 * hinge, slide; fixed joints weld their body), the shapes as geoms, one motor per hinge and
 * slide, the ground plane y = 0 and the model's gravity. Axes stay featherbone's (Y up): the
 * file sets gravity instead of rotating the model. State mapping: docs/INTEROP.md. Written to a
 * temporary and renamed. FB_ESTATE before finalize, FB_EIO when the file cannot be written. */
FB_API fb_status fb_model_write_mjcf(const fb_model* m, const char* name, const char* path,
                                     fb_error* err);

/* Inertia of a solid capsule of density rho (kg/m^3) and radius r (m) whose axis segment runs
 * from p0 to p1 (body coordinates): a cylinder of length |p1 - p0| plus two hemispheres. */
FB_API fb_rbi fb_rbi_capsule(double rho, double r, fb_v3 p0, fb_v3 p1);

/* Inertia of a solid box of density rho, edge lengths `size` along the body axes, centred
 * at `centre` (body coordinates). */
FB_API fb_rbi fb_rbi_box(double rho, fb_v3 size, fb_v3 centre);

/* Inertia of a solid sphere of density rho and radius r centred at `centre`. */
FB_API fb_rbi fb_rbi_sphere(double rho, double r, fb_v3 centre);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_MODEL_H */
