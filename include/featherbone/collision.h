/* featherbone: contacts between the shapes of articulations, and with a ground plane.
 *
 * Narrow phase only (the scenes have a few dozen shapes): sphere, capsule and box against a
 * plane (which may be a slope); a sphere against a sphere, capsule or box; a capsule against a
 * capsule or a box. Box against box is not supported (such a pair gives no contact). A
 * contact has a point on each side, a normal pointing from B to A (pushing A along +n
 * separates them), a depth (positive when the shapes overlap) and an id that stays the same
 * while the same features touch, so the solver can warm-start it. A box resting flat on a
 * plane gives its four corners, not one point. The two sides may be two bodies of one
 * articulation (self-collision, see fb_world_set_self_collision). */
#ifndef FEATHERBONE_COLLISION_H
#define FEATHERBONE_COLLISION_H

#include <stdint.h>

#include "base.h"
#include "constraint.h"
#include "data.h"
#include "model.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The points x with n . x = offset; n is a unit vector pointing out of the ground. */
typedef struct fb_plane {
    fb_v3 n;
    double offset;
} fb_plane;

/* The ground y = 0. */
FB_API fb_plane fb_ground_plane(void);

typedef struct fb_contact {
    int art_a, body_a; /* side A: articulation and body */
    fb_v3 p_a;         /* contact point on A, body coordinates */
    int art_b, body_b; /* side B, or art_b = -1 for the plane */
    fb_v3 p_b;         /* contact point on B, body coordinates (world for the plane) */
    fb_v3 n;           /* unit normal, world coordinates, from B to A */
    double depth;      /* m; > 0 overlapping, < 0 separated by that much (within the margin) */
    uint64_t id;       /* stable identity of the touching features */
    double r_a, r_b;   /* m: radius of curvature of each side at the contact (a sphere's or a
                          capsule's radius; 0 for a box and for the plane) */
} fb_contact;

/* Contacts of articulation `art`'s shapes with the plane, appended to out[*n..cap); keeps
 * those closer than `margin` (m). FB_ECAPACITY when out is full (the message gives the count
 * needed). Allocation-free. Needs FB_STAGE_POS. */
FB_API fb_status fb_collide_plane(const fb_model* m, const fb_data* d, int art, fb_plane plane,
                                  double margin, fb_contact* out, int* n, int cap,
                                  fb_error* err);

/* Contacts between the spheres of articulation B and the shapes of articulation A (a ball and
 * a character), appended like fb_collide_plane. */
FB_API fb_status fb_collide_spheres(const fb_model* ma, const fb_data* da, int art_a,
                                    const fb_model* mb, const fb_data* db, int art_b,
                                    double margin, fb_contact* out, int* n, int cap,
                                    fb_error* err);

/* Contacts between shape sa of articulation A and shape sb of articulation B, appended like
 * fb_collide_plane; for self-collision pass the same model, data and articulation twice (two
 * shapes of different bodies). The contacts' side A is shape sa. Pairs:
 *   sphere - sphere, capsule or box: through the point of the other shape nearest the centre;
 *   capsule - capsule: the closest points of the two axes [Ericson §5.1.9]; when the axes are
 *     parallel (within about 1 degree) and overlap, two contacts at the ends of the overlap, so
 *     a capsule can lie along another (the farther one dropped when beyond the margin);
 *   capsule - box: each end sphere within the margin, plus the axis point nearest the box when
 *     it lies between the ends and is closer than both (a capsule across an edge);
 *   box - box: not supported, no contact.
 * Ids are stable while the same pair of features touches (feature: 0 for a single point;
 * capsule pairs 1, 2 for the ends of a parallel overlap; capsule-box 0, 1 for the end spheres,
 * 2 for the interior point). FB_EINVAL for a shape index out of range. Needs FB_STAGE_POS. */
FB_API fb_status fb_collide_shape_pair(const fb_model* ma, const fb_data* da, int art_a, int sa,
                                       const fb_model* mb, const fb_data* db, int art_b, int sb,
                                       double margin, fb_contact* out, int* n, int cap,
                                       fb_error* err);

/* Adds a normal row (unilateral) and two friction rows (bounded by mu times the normal force,
 * along two tangents) per contact, aiming at normal acceleration `normal_target[k]` (NULL =
 * 0). Between two articulations, or two bodies of one articulation, both sides act at the
 * midpoint of the contact points. The normal row's points are moved along the normal to each
 * side's centre of curvature (r_a, r_b): the force keeps its line of action (K is the same),
 * but the row's acceleration is then the gap's, not that of the material point under the
 * contact, whose centripetal part on a spinning ball or a rolling capsule (omega^2 r, away from
 * the ground) would read as separation. Friction rows keep the material points (no slip is a
 * condition on them). Row ids derive from the contact ids. Needs FB_STAGE_POS in the
 * articulations. */
FB_API fb_status fb_contact_rows(fb_csys* cs, const fb_contact* c, int n, double mu,
                                 const double* normal_target, fb_error* err);

/* Rolling resistance of one contact of body A with the ground (art_b < 0) whose normal row is
 * row `normal` of cs: with axis NULL two rows on A's angular velocity about the ground's two
 * tangent axes (the rolling), else one about `axis` (world, unit, perpendicular to the
 * contact's normal: the line through a body's two contacts, about which they leave it free
 * to roll), each aiming at no rolling and bounded by `length` times the normal force (a
 * torque: the normal force's centre moving at most `length` (m) from the contact point within
 * the contact patch before the body rolls, as MuJoCo's rolling friction, condim 6). Each row is
 * a couple, a pair of opposite forces on A 1 m apart along the normal (FB_ROW_POINT with
 * body_b == body), so its multiplier is the torque in N m. FB_EINVAL for a contact between
 * articulations, length < 0 or an axis not unit and perpendicular to the normal (to 1e-9).
 * Needs FB_STAGE_POS in the articulation. */
FB_API fb_status fb_contact_rolling_rows(fb_csys* cs, const fb_contact* c, int normal,
                                         double length, const fb_v3* axis, fb_error* err);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_COLLISION_H */
