/* The balance planner of a tracker with a free or assisted root: which accelerations the
 * joints should ask for so that the root's wanted motion is produced through the contacts.
 * Internal to the library (the tracker owns one); see balance.c and docs/CONTROL.md. */
#ifndef FB_CONTROL_BALANCE_H
#define FB_CONTROL_BALANCE_H

#include <stdbool.h>

#include "featherbone/collision.h"
#include "featherbone/control.h"
#include "featherbone/model.h"
#include "featherbone/data.h"

/* Bodies in contact it plans for (and FB_BALANCE_MAX_POINTS support points, the first ones in
 * the world's contact order). */
#define FB_BAL_MAX_BODIES 8

typedef struct fb_balance fb_balance;

fb_balance* fb_balance_create(const fb_model* m, const fb_allocator* a);
void fb_balance_destroy(fb_balance* b);

/* Whether the contacts of `body` may carry the planned forces (default: every body's). A
 * toe touching the ground is held in place like the other bodies in contact, but the weight
 * is planned on the foot: a toe hinge's strength (a few N m) cannot hold the body's weight at
 * its tip, so a centre of pressure there is not one the character can keep. */
void fb_balance_bear(fb_balance* b, int body, bool bearing);

/* Makes dst, made for the same model, what src is (its centre of mass offset, last plan and
 * scratch), except which bodies bear weight (fb_balance_bear: from the control reference). */
void fb_balance_copy(fb_balance* dst, const fb_balance* src);

/* What one plan found (for the tracker's report and the viewer). */
typedef struct fb_balance_plan {
    fb_balance_info info; /* support points, centre of mass (world) */
    int body[FB_BALANCE_MAX_POINTS];  /* the body of each support point */
    fb_v3 f[FB_BALANCE_MAX_POINTS];   /* N, world: the contact force planned at each */
    double root_want[6];  /* the root acceleration asked for ([w; v], root coordinates) */
    double root_acc[6];   /* the one the contacts can give */
    double wrench_err;    /* |S^1/2 (planned - wanted root wrench)| */
} fb_balance_plan;

/* The centre of mass the planner steers: the clip's (world), and the gains of the PD that
 * pulls the character's toward it. */
typedef struct fb_balance_com {
    fb_v3 c, v, a; /* position (m), velocity (m/s), acceleration (m/s^2) */
    double kp, kd; /* 1/s^2, 1/s */
    double h;      /* s: the substep */
    double t;      /* s: when it starts (world time; a substep planned again from the same
                      start is one the world undid and does over) */
} fb_balance_com;

/* The support polygon of points p[0..n) (n <= FB_BALANCE_MAX_POINTS): their convex hull on the
 * plane across gravity, its vertices (points of p) counter-clockwise about the up direction
 * (-gravity) into out; returns their count, 0 with fewer than three points or all of them on
 * one line (no turn of more than BAL_HULL_EPS, 1e-12 m^2). Andrew's monotone chain; points on
 * an edge are left out. What fb_balance_info.support holds. */
int fb_balance_hull(const fb_v3* p, int n, fb_v3 gravity, fb_v3* out);

/* Edges of a friction pyramid at each support point (FB_BALANCE_EDGES, the normal n
 * tilted by mu along two tangents), into dir_out (FB_BALANCE_EDGES x npoint), and G (6 per
 * edge, column-major): the generalised force a unit force along each edge at its point (world)
 * puts on the root (body 1) of the state d (positions current). Returns the edge count. */
#define FB_BALANCE_EDGES 4
int fb_balance_edges(const fb_model* m, const fb_data* d, const fb_v3* point, const fb_v3* normal,
                     int npoint, double mu, fb_v3* dir_out, double* G);

/* Forgets the state kept between substeps (the centre of mass target's offset). */
void fb_balance_reset(fb_balance* b);

/* The linear part of the root's wanted acceleration is replaced by the
 * one that gives the whole body's centre of mass the acceleration of com's PD: the root then
 * turns as want says and moves so that the centre of mass follows the clip's. Its target is
 * the clip's centre of mass, moved over the support (the convex hull of the support points,
 * BAL_SUPPORT_MARGIN inside) when it is not: a character whose masses differ from the
 * captured person's cannot stand where the person's centre of mass stood.
 *
 * Plans the joints' accelerations for the state d (the world's data of the character:
 * positions and velocities current) with ground contacts con[0..ncon) of articulation art
 * (others are skipped), from the accelerations `want` (nv) the tracking asks for (the root's
 * six included, [w; v] in root coordinates as qdd): the bodies in contact are held in place by
 * the joints between them and the root, and the root's acceleration is the one nearest
 * want's that the contacts can produce within their friction cones. Writes the dof targets into target (nv; the
 * root's six are the root acceleration planned), into tau (nv) the torques of the stance dofs
 * that make that motion with the planned contact forces (NAN for the other dofs, which keep
 * their rows), and the plan into *out. Allocation-free. */
void fb_balance_run(fb_balance* b, const fb_model* m, const fb_data* d, const fb_contact* con,
                    int ncon, int art, double mu, const double* want,
                    const fb_balance_com* com, double* target, double* tau,
                    fb_balance_plan* out);

#endif /* FB_CONTROL_BALANCE_H */
