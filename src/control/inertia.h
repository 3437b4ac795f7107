/* The inertia each joint feels when it alone pushes and the root is held: 1 / (M_a^-1)_jj
 * averaged over the joint's dofs, M_a the actuated block of the joint-space inertia. Used by
 * `gains init` to size gains and by the tracker to keep explicit PD gains stable. */
#ifndef FB_CONTROL_INERTIA_H
#define FB_CONTROL_INERTIA_H

#include "featherbone/base.h"
#include "featherbone/model.h"

/* inertia (nbody; 0 for the world, fixed joints and a floating root) at configuration q.
 * FB_ENOMEM, FB_ENUMERIC when M is not positive definite. */
fb_status fb_joint_effective_inertia(const fb_model* m, const double* q, double* inertia,
                                     fb_error* err);

#endif /* FB_CONTROL_INERTIA_H */
