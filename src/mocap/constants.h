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

/* BVH frame times accepted (s): 10 kHz to 1 Hz. Anything else is taken for a broken file. */
#define FB_FRAME_TIME_MIN 1e-4
#define FB_FRAME_TIME_MAX 1.0

/* Most joints / frames one clip may declare: far beyond any real clip, and small enough that
 * the sizes never overflow. */
#define FB_CLIP_MAX_JOINTS 10000
#define FB_CLIP_MAX_FRAMES 10000000

#endif /* FB_MOCAP_CONSTANTS_H */
