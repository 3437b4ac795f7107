/* The models every benchmark, test, tool and (later) the viewer use, defined once
 * (../shared/BENCH_MODELS.md), plus seeded random trees and states for property tests.
 * An internal library: not part of the public API. */
#ifndef FB_BENCH_SCENES_H
#define FB_BENCH_SCENES_H

#include <stdint.h>

#include "featherbone/featherbone.h"

/* A small deterministic generator (splitmix64): the same seed gives the same sequence on every
 * machine, so a failing property test can be replayed from its printed seed. */
typedef struct scene_rng {
    uint64_t s;
} scene_rng;

scene_rng scene_rng_make(uint64_t seed);
uint64_t scene_rng_next(scene_rng* r);
/* Uniform in [lo, hi). */
double scene_rng_uniform(scene_rng* r, double lo, double hi);
/* Uniform integer in [lo, hi]. */
int scene_rng_int(scene_rng* r, int lo, int hi);
/* Standard normal (Box-Muller). */
double scene_rng_normal(scene_rng* r);
/* A uniformly distributed unit quaternion. */
fb_quat scene_rng_quat(scene_rng* r);
/* A uniformly distributed unit vector. */
fb_v3 scene_rng_unit(scene_rng* r);

/* Fills def (already fb_default_body_def(), with `name` pointing at a buffer of
 * SCENE_NAME_CAP chars) for body k = 1..n of a model being built. */
#define SCENE_NAME_CAP 32
typedef void (*scene_body_fn)(int k, fb_body_def* def, char* name, void* ctx);

/* Builds and finalizes a model of n bodies from make(); NULL and err filled on failure. */
fb_model* scene_build(int n, scene_body_fn make, void* ctx, fb_error* err);

/* Bender's binary tree of depth 4..7 (31, 63, 127, 255 boxes on ball joints), hanging from a
 * fixed base at the origin. NULL and err filled on failure. */
fb_model* scene_bender_tree(int depth, fb_error* err);

/* The 22-body, 57-DOF capsule humanoid (70.9 kg, 1.75 m), standing at the neutral
 * configuration with its pelvis at SCENE_HUMANOID_PELVIS_HEIGHT; each body carries the capsule
 * its inertia was computed from as its collision shape (the shins' 2 cm shorter at the ankle,
 * so that the feet and toes, not the shin ends, touch the ground: 8 contacts). */
fb_model* scene_humanoid(fb_error* err);

/* Pelvis height (m) of the standing humanoid: feet and toes touch y = 0. */
#define SCENE_HUMANOID_PELVIS_HEIGHT 0.93

/* Density of the humanoid's capsules (kg/m^3), water as in Cline §5.1. */
#define SCENE_HUMANOID_DENSITY 1000.0

/* Density of Bender's boxes (kg/m^3). */
#define SCENE_BENDER_DENSITY 600.0

/* The standing pose: neutral joints, pelvis at its standing height. */
void scene_humanoid_standing(const fb_model* m, double* q);

/* A character's pose q (floating root first: position, then quaternion w x y z) laid on its
 * back to be dropped as a ragdoll: rotated -90 degrees about X, then 0.2 rad about
 * (0.2, 0, 1) so it does not land symmetrically, root 40 cm above the ground. */
void scene_ragdoll_lying(double* q);

/* A random tree of 1..max_bodies bodies with every joint type, random X_tree, axes and
 * physically valid inertias, drawn from `seed`. */
fb_model* scene_random_tree(uint64_t seed, int max_bodies, fb_error* err);

/* Random q (angles in (-pi, pi), displacements and floating positions in (-0.5, 0.5), uniform
 * quaternions), qd in (-qd_max, qd_max) and tau in (-tau_max, tau_max). */
void scene_random_state(const fb_model* m, fb_data* d, scene_rng* r, double qd_max,
                        double tau_max);

/* The benchmark states of BENCH_MODELS.md: for Bender trees uniform quaternions and angular
 * velocities in (-2, 2); for the humanoid pelvis tilt <= 0.5 rad at standing height, joint
 * rotations <= 0.6 rad, velocities in (-1, 1). Zero torques. */
void scene_bench_state(const fb_model* m, fb_data* d, scene_rng* r, int is_humanoid);

#endif /* FB_BENCH_SCENES_H */
