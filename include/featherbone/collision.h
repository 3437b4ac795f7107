/* featherbone: contacts between the shapes of articulations, and with a ground plane.
 *
 * Narrow phase only (the scenes have a few dozen shapes): sphere, capsule and box against a
 * plane (which may be a slope), and a sphere against a sphere, capsule or box. A contact has a
 * point on each side, a normal pointing from B to A (pushing A along +n separates them), a
 * depth (positive when the shapes overlap) and an id that stays the same while the same
 * features touch, so the solver can warm-start it. A box resting flat on a plane gives its
 * four corners, not one point. */
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

/* Adds a normal row (unilateral) and two friction rows (bounded by mu times the normal force,
 * along two tangents) per contact, aiming at normal acceleration `normal_target[k]` (NULL =
 * 0). Between two articulations both sides act at the midpoint of the contact points. Row ids
 * derive from the contact ids. Needs FB_STAGE_POS in the articulations. */
FB_API fb_status fb_contact_rows(fb_csys* cs, const fb_contact* c, int n, double mu,
                                 const double* normal_target, fb_error* err);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_COLLISION_H */
