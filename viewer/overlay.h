/* featherbone-view: the balance overlay's geometry (no GL): the support polygon on the ground
 * as the convex hull of the balance planner's support points. */
#ifndef FB_VIEW_OVERLAY_H
#define FB_VIEW_OVERLAY_H

#include "featherbone/featherbone.h"

/* The convex hull of p[0..n) projected on the ground (y = 0: the world's up is +Y,
 * docs/VIEWER.md), counter-clockwise seen from above (+Y), into out (room for n points), with
 * y = 0; returns its vertex count: 0 with fewer than three points or when they are collinear
 * (within 1e-12 m^2 of area per turn). Andrew's monotone chain; points on an edge are left
 * out. Allocation-free; n at most FB_BALANCE_MAX_POINTS. */
int overlay_hull(const fb_v3* p, int n, fb_v3* out);

#endif /* FB_VIEW_OVERLAY_H */
