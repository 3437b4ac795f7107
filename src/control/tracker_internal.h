/* What the simulation asks of a tracker beyond its API (src/control/tracker.c): copying one
 * into another, for a search that goes on from a saved simulation (src/sim/sample.c). Not
 * installed. */
#ifndef FB_CONTROL_TRACKER_INTERNAL_H
#define FB_CONTROL_TRACKER_INTERNAL_H

#include "featherbone/control.h"

/* Makes dst what src is: the reference's time, the tracking's state and scratch, the fall, the
 * help's totals, the balance planner's state. dst keeps its world and data (the world's copy
 * copies those), its references, and what it derives from its control reference (the centre
 * of mass path, which bodies bear weight). Both made for the same model, reference frames
 * and controller (FB_EINVAL otherwise, nothing copied). */
fb_status fb_tracker_copy(fb_tracker* dst, const fb_tracker* src, fb_error* err);

/* The control reference changed in place (the pointer the tracker holds is the same): what
 * the tracker derives from it (the centre of mass path, which bodies bear weight) is made
 * again, the path at frames [from, to) only (those changed that the tracker will read). */
void fb_tracker_control_changed(fb_tracker* tr, int from, int to);

#endif
