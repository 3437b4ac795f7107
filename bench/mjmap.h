/* Mapping featherbone states to MuJoCo's for a model exported by fb_model_write_mjcf
 * (docs/INTEROP.md): used by the cross-check test and by `featherbone bench --peers`. */
#ifndef FB_BENCH_MJMAP_H
#define FB_BENCH_MJMAP_H

#include <mujoco/mujoco.h>
#include <stdbool.h>

#include "featherbone/featherbone.h"

typedef struct fb_mjmap {
    const fb_model* m;
    const mjModel* mj;
    int* qadr; /* (nbody) MuJoCo qpos address of the body's joint (first slide for a floating
                  joint below the root) */
    int* dadr; /* (nbody) MuJoCo dof address */
} fb_mjmap;

/* What a per-dof vector is: velocities map by T, forces by T^-T (= T on rotation blocks),
 * accelerations by T plus the w x v term of floating joints. */
typedef enum { MJMAP_VEL, MJMAP_FORCE, MJMAP_ACC } fb_mjmap_kind;

/* Finds every joint by name; false (message in msg) when one is missing. */
bool mjmap_make(fb_mjmap* mp, const fb_model* m, const mjModel* mj, char* msg, size_t cap);
void mjmap_free(fb_mjmap* mp);

void mjmap_qpos(const fb_mjmap* mp, const double* q, double* qpos);
/* x (nv, ours) -> out (nv, MuJoCo's order); q and qd are our state (qd used for MJMAP_ACC). */
void mjmap_dofs(const fb_mjmap* mp, const double* q, const double* qd, const double* x,
                fb_mjmap_kind kind, double* out);
/* MuJoCo qacc -> our qdd. */
void mjmap_qacc_back(const fb_mjmap* mp, const double* q, const double* qd, const double* qacc,
                     double* qdd);

#endif /* FB_BENCH_MJMAP_H */
