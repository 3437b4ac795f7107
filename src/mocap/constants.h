/* Constants of the mocap layer. Each: unit, usual value, why. */
#ifndef FB_MOCAP_CONSTANTS_H
#define FB_MOCAP_CONSTANTS_H

/* The length unit of the CMU database's BVH conversions (m): the ASF skeletons' unit, the
 * factor bvh11 and others use to get metres (the shared CMU clips stand ~30 units tall). */
#define FB_CMU_UNIT 0.056444

/* Standing height (m) the unit detection aims for: an adult. The unit whose reading is nearest
 * in ratio wins; neighbouring units differ by at least 1.77x (dm and CMU), so any true height
 * within 1.33x of this (1.28 to 2.26 m) is always detected right. */
#define FB_TYPICAL_HEIGHT 1.7

/* Detected heights outside this range (m) warn: likely a wrong unit. */
#define FB_PLAUSIBLE_HEIGHT_MIN 0.5
#define FB_PLAUSIBLE_HEIGHT_MAX 2.6

/* A bone counts at full length towards the standing height when its vertical extent is more
 * than this fraction of its length (about 60 degrees from horizontal or steeper). */
#define FB_VERTICAL_BONE 0.5

/* A clip is Z-up when its rest pose is this many times taller along Z than along Y. */
#define FB_UP_Z_RATIO 1.5

/* A pose stands upright when the vertical distance from its lowest to its highest end point is
 * at least this fraction of the length of the two bone chains from the root to them (all bones
 * at full length). A standing person: head-top and toe chains 0.80-0.86 of the way straight
 * (hip and shoulder offsets and the foot are not vertical); crouching, sitting, lying or a
 * rest pose laid out along local X (bones in the Maya joint-orient style) fall far below. */
#define FB_UPRIGHT_MIN 0.7

/* The "early frames" whose poses read the standing height when the rest pose does not stand
 * (s from the first frame): mocap takes start standing, in a T-pose or at rest, before moving. */
#define FB_EARLY_SECONDS 1.0

/* Frames spread over the whole clip that are read when none of the early frames stands. */
#define FB_POSED_SAMPLES 240

/* A joint never moves when every channel stays within this of its first frame's value (file
 * units or degrees): a dummy root written as zeros. */
#define FB_STATIC_TOL 1e-6

/* Position channels agree with OFFSET when they stay within this (m) of it at every frame: the
 * bone is then OFFSET itself, not the channels' mean. 0.01 mm: below any capture's noise. */
#define FB_BONE_AGREE 1e-5

/* A bone whose length varies by more than this over the clip (m, largest deviation from the
 * bone built) is warned about: a rigid bone cannot follow a stretchy rig or a retargeting
 * error. Capture rigs write fixed bone vectors; 1 cm is well above their rounding. */
#define FB_BONE_STRETCH_WARN 0.01

/* BVH frame times accepted (s): 10 kHz to 1 Hz. Anything else is taken for a broken file. */
#define FB_FRAME_TIME_MIN 1e-4
#define FB_FRAME_TIME_MAX 1.0

/* Most joints / frames one clip may declare: far beyond any real clip, and small enough that
 * the sizes never overflow. */
#define FB_CLIP_MAX_JOINTS 10000
#define FB_CLIP_MAX_FRAMES 10000000

#endif /* FB_MOCAP_CONSTANTS_H */
