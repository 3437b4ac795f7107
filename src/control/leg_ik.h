/* Inverse kinematics of a leg for the grounded reference (leg_ik.c); internal. */
#ifndef FB_CONTROL_LEG_IK_H
#define FB_CONTROL_LEG_IK_H

#include "control/ref_internal.h"

/* t wrapped into [-pi, pi). */
double fb_wrap_angle(double t);

/* Clamps body b's joint coordinates q (its own, at m->q_adr[b]) into its range
 * (fb_model.limit); true when it moved them. */
bool fb_leg_clamp(const fb_model* m, int b, double* q);

/* The largest hip-to-ankle distance leg L reaches with its knee bent at least min_bend (rad)
 * short of straight, at the pose q. */
double fb_leg_reach(const fb_model* m, const fb_leg* L, const double* q, double min_bend);

/* The side a hinge knee bends to in the reference, +1 or -1 (0 for a ball-joint knee). */
int fb_leg_knee_side(const fb_model* m, const fb_ref* ref, const fb_leg* L);

/* Puts leg L's foot at orientation RT and origin AT (world) by changing the hip, knee and ankle
 * coordinates of q (d: position kinematics of q as it was); a hinge knee bent to `side`; a
 * thigh or shank that would go into the ground swung out of it about the hip-ankle line.
 * False when the ankle is out of reach (the knee then as straight, or folded, as it goes). */
bool fb_leg_solve(const fb_model* m, const fb_data* d, const fb_leg* L, int side, double* q,
                  fb_m3 RT, fb_v3 AT);

/* The toe's shape along its length and where that starts (toe coordinates) and its radius;
 * false without a hinge toe or with a shape without length. */
bool fb_leg_toe_shape(const fb_model* m, const fb_leg* L, fb_v3* along, fb_v3* start,
                      double* radius);

/* The toe's length (toe coordinates): its shape's axis, or its x axis. */
fb_v3 fb_leg_toe_along(const fb_model* m, const fb_leg* L);

/* The toe hinge angle (nearest th) that points the toe, with the foot at orientation RF, as
 * near as the hinge allows to the direction it has at world orientation R_toe. */
double fb_leg_toe_keep(const fb_model* m, const fb_leg* L, fb_m3 RF, fb_m3 R_toe, double th);

/* How far the near end of the toe (which its hinge does not move) clears the ground with the
 * foot at (RF, AF) and the toe at angle th; INFINITY without a toe shape. */
double fb_leg_toe_root_clearance(const fb_model* m, const fb_leg* L, fb_m3 RF, fb_v3 AF,
                                 double th, fb_plane g);

/* The toe hinge angle at which the toe's far end is `rise` (m) higher than its near end with
 * the foot at orientation RF: nearest th when rise != 0; lying flat (rise 0): the way nearest
 * *near when given, else the way pointing along the sole and bent towards the instep; th when
 * there is none. */
double fb_leg_toe_angle(const fb_model* m, const fb_leg* L, fb_m3 RF, fb_plane g, double th,
                        double rise, const double* near);

#endif /* FB_CONTROL_LEG_IK_H */
