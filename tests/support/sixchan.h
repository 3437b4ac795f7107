/* Test-side BVH helpers for skeletons with position channels on every joint (the layout of
 * Perception Neuron / Axis Neuron exports and the Bandai Namco research motion dataset): clips
 * in that layout made from ordinary ones, and forward kinematics of a clip's raw channel values
 * written here, independently of the library's character, motion and kinematics. */
#ifndef FB_TEST_SIXCHAN_H
#define FB_TEST_SIXCHAN_H

#include <stdbool.h>

#include "featherbone/mocap.h"

/* How to lay out the clip written by ck_write_six_channel. */
typedef struct ck_six_opts {
    const char* order;  /* rotation channel order of every joint: "XYZ", "ZXY", ... */
    double scale;       /* file units written per unit of the source (CMU -> cm: 5.6444) */
    const char* stretch; /* a joint whose position channels grow over the clip (NULL: none) */
    double stretch_by;  /* ...linearly from its bone vector at the first frame to (1 + this)
                           times it at the last */
} ck_six_opts;

/* Writes to `path` the motion of `src` (a clip whose only position channels are the root's)
 * in the six-channel layout: a dummy root "Root" whose channels stay at zero, then the source's
 * joints, each with 6 channels (X Y Z position, then the rotations in opts->order). Every
 * joint's frame is turned by a constant rotation (Maya's joint orient) so that its bone runs
 * along its local +X or -X (alternating from joint to joint; for joints with several children,
 * the first child that is not at zero distance); the rotation channels are changed to match,
 * so the world poses are the source's. OFFSETs and the position channels carry the bone
 * vectors in the parent's turned frame (the same every frame, but for `stretch`); the hips'
 * position channels carry their whole position, their OFFSET is straight above the dummy root
 * at their first frame's height (the source must be Y up). Lengths are multiplied by
 * opts->scale. Numbers have 10 decimals. Fails the test on I/O errors. */
void ck_write_six_channel(const fb_clip* src, const ck_six_opts* opts, const char* path);

/* World positions (file units and axes) of every joint of clip `c` at frame f, by forward
 * kinematics of its raw channel values: rotation channels composed in file order (R = R_a(v_a)
 * R_b(v_b) R_c(v_c), child -> parent), the root's position channels added to its OFFSET, and a
 * non-root joint's position channels taking the place of its OFFSET (the reading of the files
 * ck_write_six_channel makes and of the exports made from them). pos has c->njoint entries. */
void ck_bvh_fk(const fb_clip* c, int f, fb_v3* pos);

/* The largest distance (file units) between joint positions of clips a and b over frames
 * a_first + k and b_first + k, k < nframe, joints matched by name (a's joints missing from b,
 * or with skip[i] set when skip is not NULL, are left out; `matched` counts those compared,
 * may be NULL), b's positions multiplied by b_scale first. *where gets "joint at frame k" of
 * the worst (may be NULL, 96 bytes). */
double ck_bvh_fk_distance(const fb_clip* a, int a_first, const fb_clip* b, int b_first,
                          int nframe, double b_scale, const bool* skip, int* matched,
                          char* where);

#endif /* FB_TEST_SIXCHAN_H */
