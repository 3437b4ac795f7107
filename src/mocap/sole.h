/* The soles of a character's feet fitted to the clip it is built from (sole.c; docs/MOCAP.md,
 * "The sole"). Internal to the mocap layer. */
#ifndef FB_MOCAP_SOLE_H
#define FB_MOCAP_SOLE_H

#include "featherbone/mocap.h"

/* Refits the box of every "box" rules part of the finished character ch (the feet) to the
 * clip c: its bottom face is the plane the sole lies on in the clip's stance frames, from
 * behind the ankle (the heel) to the toe joint and up to the ankle, as wide as before; its mass
 * and inertia follow as the build options o give them (density: at the density the old box
 * had, all bodies rescaled to o->mass when one is given; anthropometric: the foot's mass
 * kept). A foot the clip never stands on keeps its box. FB_ENOMEM. */
fb_status fb_sole_fit(const fb_clip* c, fb_character* ch, const fb_build_opts* o, fb_error* err);

#endif /* FB_MOCAP_SOLE_H */
