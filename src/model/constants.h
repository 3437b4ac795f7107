/* Tolerances and limits of the model layer. Each: unit, usual value, why. */
#ifndef FB_MODEL_CONSTANTS_H
#define FB_MODEL_CONSTANTS_H

/* Default gravity magnitude (m/s^2) of fb_options.gravity: 9.81 as in ARCHITECTURE.md, the
 * benchmark models and MuJoCo's default, so peers compare on identical physics. */
#define FB_DEFAULT_GRAVITY 9.81

/* Most bodies one model may declare. 1e6 keeps every size computation far from int overflow
 * while being ~1000x any character. */
#define FB_MODEL_MAX_BODIES 1000000

/* How far E E^T may be from identity, and det E from 1, for X_tree.E to count as a rotation
 * (dimensionless). 1e-9 accepts rotations built in double from angles or quaternions and
 * rejects hand-typed matrices with 4-digit entries, which would skew every transform. */
#define FB_ROTATION_TOL 1e-9

/* Relative tolerance for inertia checks (symmetry, realisability), scaled by tr(Ibar).
 * 1e-9: round-off from building Ibar out of Ic and the centre of mass stays well below it. */
#define FB_INERTIA_REL_TOL 1e-9
/* Absolute floor (kg m^2) added to that scale so tiny bodies are judged fairly. */
#define FB_INERTIA_ABS_TOL 1e-12

/* Shortest joint axis (before normalisation) accepted as a direction. */
#define FB_AXIS_MIN_NORM 1e-12

#endif /* FB_MODEL_CONSTANTS_H */
