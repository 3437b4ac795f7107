/* Internal helpers shared by the clip readers (BVH text, Assimp scenes) and the detection of
 * units, up axis and position-channel meaning. */
#ifndef FB_MOCAP_CLIP_H
#define FB_MOCAP_CLIP_H

#include "featherbone/mocap.h"

/* An empty clip using allocator a (NULL = default). */
fb_clip* fb_clip_new(const fb_allocator* a, const char* source, fb_error* err);

/* Appends a joint; returns its index or -1 (FB_ENOMEM in err). */
int fb_clip_push_joint(fb_clip* c, const fb_clip_joint* j, fb_error* err);

/* Records a warning (printf-style); only the first FB_CLIP_MAX_WARN are stored. */
void fb_clip_warn(fb_clip* c, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* After the frames are in: detects (or applies the given) unit, up axis and position mode, and
 * checks every value is finite. FB_EINVAL when a value is not, or an option is out of range. */
fb_status fb_clip_finish(fb_clip* c, const fb_clip_opts* opts, fb_error* err);

/* The rotation axes (0, 1, 2) of joint j's rotation channels in file order; returns how many. */
int fb_clip_rot_axes(const fb_clip_joint* j, int* axes);

/* The rotation of clip joint i at frame f: its rotation channels composed in file order. */
fb_quat fb_clip_frame_rotation(const fb_clip* c, int i, int f);

/* Joint i's translation from its parent at frame f (file units, parent axes): OFFSET, with the
 * position channels added (the root; relative mode) or in place of it (absolute mode). */
fb_v3 fb_clip_frame_offset(const fb_clip* c, int i, int f);

/* True when every channel of joint i stays within FB_STATIC_TOL of its first frame's value. */
bool fb_clip_joint_static(const fb_clip* c, int i);

/* The joint the skeleton hangs from: the clip's root or, while that never moves
 * (fb_clip_joint_static), has no End Site and has one child joint, which has position channels,
 * that child (a dummy root above the hips). The joints before it (0 .. root-1: in BVH order a
 * joint's first child follows it) are that chain. */
int fb_clip_skeleton_root(const fb_clip* c);

/* Joint positions (njoint; file units, file axes) at frame f by forward kinematics of the
 * channels, or of the rest pose when f < 0. False when out of memory. */
bool fb_clip_frame_positions(const fb_clip* c, int f, fb_v3* joints);

/* True when joint j has any position channel. */
bool fb_clip_has_pos(const fb_clip_joint* j);

/* The rotation from file axes to featherbone's Y-up axes (identity for Y-up clips, -90 deg
 * about x for Z-up ones). */
fb_m3 fb_clip_up_rotation(const fb_clip* c);

/* Lengths below this (m) count as zero when building segments. */
#define FB_CLIP_MIN_LENGTH 1e-6

#endif /* FB_MOCAP_CLIP_H */
