/* featherbone: motion capture made physical. The whole public API.
 *
 * A C11 library for reduced-coordinate articulated characters: spatial algebra in
 * Featherstone's conventions, the articulated-body algorithm in two phases, inverse dynamics
 * and the joint-space inertia. See docs/ for the design and the conventions. */
#ifndef FEATHERBONE_H
#define FEATHERBONE_H

#include "base.h"
#include "data.h"
#include "dynamics.h"
#include "collision.h"
#include "world.h"
#include "sim.h"
#include "constraint.h"
#include "control.h"
#include "mocap.h"
#include "model.h"
#include "types.h"

#define FB_VERSION_MAJOR 0
#define FB_VERSION_MINOR 1
#define FB_VERSION_PATCH 0
#define FB_VERSION_STRING "0.1.0"

#endif /* FEATHERBONE_H */
