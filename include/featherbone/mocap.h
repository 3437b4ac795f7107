/* featherbone: mocap clips in and out.
 *
 *   fb_clip       a clip as the file has it: skeleton (names, hierarchy, offsets, channels and
 *                 rotation orders), frames of channel values in the file's own units and degrees,
 *                 frame time, and what was detected about it (length unit, up axis, meaning of
 *                 position channels on non-root joints)
 *   fb_character  an fb_model built from a clip's skeleton by the character rules, with the map
 *                 between clip joints and bodies and per-body masses
 *   fb_motion     joint trajectories q(t) of a character at a chosen rate
 *
 * Units: inside the library everything is SI (metres, radians); degrees and file units exist
 * only in fb_clip's raw frames and in the files. */
#ifndef FEATHERBONE_MOCAP_H
#define FEATHERBONE_MOCAP_H

#include <stdbool.h>

#include "base.h"
#include "model.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A BVH channel. */
typedef enum fb_channel {
    FB_CH_XPOS = 0,
    FB_CH_YPOS = 1,
    FB_CH_ZPOS = 2,
    FB_CH_XROT = 3,
    FB_CH_YROT = 4,
    FB_CH_ZROT = 5
} fb_channel;

/* "Xposition" ... "Zrotation". */
FB_API const char* fb_channel_name(fb_channel c);

typedef enum fb_up_axis { FB_UP_AUTO = 0, FB_UP_Y = 1, FB_UP_Z = 2 } fb_up_axis;

/* What position channels on a non-root joint mean. */
typedef enum fb_pos_mode {
    FB_POS_AUTO = 0,     /* detect from the data */
    FB_POS_ABSOLUTE = 1, /* the channel is the joint's full offset (it replaces OFFSET) */
    FB_POS_RELATIVE = 2  /* the channel is a displacement added to OFFSET */
} fb_pos_mode;

FB_API const char* fb_pos_mode_name(fb_pos_mode m);

/* Which evidence gave a clip's standing height (and so its detected length unit). */
typedef enum fb_height_from {
    FB_HEIGHT_NONE = 0,  /* no pose stood upright: the tallest reading found (warned) */
    FB_HEIGHT_REST = 1,  /* the rest pose (OFFSETs), when it stands upright */
    FB_HEIGHT_EARLY = 2, /* forward kinematics of the frames of the clip's first second */
    FB_HEIGHT_CLIP = 3   /* forward kinematics of frames spread over the whole clip */
} fb_height_from;

/* "the rest pose", "the poses of the first second", ... */
FB_API const char* fb_height_from_name(fb_height_from h);

/* Most warnings one clip keeps (further ones are counted, not stored). */
#define FB_CLIP_MAX_WARN 16
#define FB_CLIP_WARN_LEN 200

/* One joint of a clip's skeleton. */
typedef struct fb_clip_joint {
    char name[FB_NAME_MAX];
    int parent;          /* index of the parent joint, -1 for the root; parent < own index */
    fb_v3 offset;        /* from the parent's origin, parent axes, file units */
    int nchan;           /* 0..6 */
    fb_channel chan[6];  /* channels in file order */
    int col;             /* column of the first channel in a frame */
    bool has_end;        /* an End Site follows this joint */
    fb_v3 end_offset;    /* the End Site's offset (file units) */
} fb_clip_joint;

/* How to read a clip. Start from fb_default_clip_opts(). */
typedef struct fb_clip_opts {
    double scale;         /* metres per file unit; 0 = detect from the standing height */
    double height;        /* scale the skeleton to this standing height (m); 0 = off */
    fb_up_axis up;        /* FB_UP_AUTO = detect */
    fb_pos_mode pos_mode; /* FB_POS_AUTO = detect */
    bool use_assimp;      /* cross-load BVH files with Assimp (default true) */
} fb_clip_opts;

FB_API fb_clip_opts fb_default_clip_opts(void);

typedef struct fb_clip {
    int njoint;            /* skeleton joints (End Sites are not joints) */
    fb_clip_joint* joint;  /* (njoint) parents before children */
    int nchan;             /* values per frame */
    int nframe;            /* frames kept */
    int declared_frames;   /* the file's "Frames:" (BVH), or nframe */
    double frame_time;     /* s */
    double* frames;        /* (nframe x nchan) values as in the file: file units, degrees */

    double unit;             /* metres per file unit, detected or given */
    char unit_name[32];      /* "cm", "m", "dm", "inch", "CMU (0.056444 m)", "given", ... */
    double height_file;      /* standing height in file units, from `height_from` */
    fb_height_from height_from; /* the evidence that gave height_file (docs/MOCAP.md) */
    double rest_height_file; /* the rest pose's standing height (file units) */
    double rest_upright;     /* the rest pose's top-to-bottom extent over the length of its two
                                bone chains (0..1; a standing person ~0.85, a line 0) */
    double posed_height_file; /* median standing height of the upright frames of the first
                                 second (file units; 0 when none stood) */
    int posed_frames;        /* frames of the first second measured */
    int posed_upright;       /* of those, the upright ones */
    int stand_frame;         /* the first of them that stands upright, or -1 */
    fb_up_axis up;           /* detected or given: FB_UP_Y or FB_UP_Z */
    fb_pos_mode pos_mode;    /* detected or given; FB_POS_AUTO when no non-root joint has
                                position channels */
    char format[16];         /* "bvh", or the Assimp importer's file extension */
    char source[256];        /* the path (or name) it was read from */

    int nwarn;                                   /* warnings issued (may exceed the stored) */
    char warn[FB_CLIP_MAX_WARN][FB_CLIP_WARN_LEN]; /* the first FB_CLIP_MAX_WARN */

    /* private */
    fb_allocator alloc;
    int joint_cap;
} fb_clip;

/* Reads a clip. BVH files are parsed at double precision by featherbone's own reader (which
 * also keeps every joint's channel order, which Assimp discards) and cross-loaded with Assimp,
 * whose node tree must match; other formats (FBX, glTF, Collada, ...) are imported through
 * Assimp. Errors: FB_EIO (cannot read), FB_EINVAL (malformed: the message names the file, the
 * line for BVH, and what was expected), FB_ENOMEM. `opts` and `alloc` may be NULL. */
FB_API fb_clip* fb_clip_load(const char* path, const fb_clip_opts* opts,
                             const fb_allocator* alloc, fb_error* err);

/* Parses BVH text (len bytes, need not be NUL-terminated); `name` is used in messages. No
 * Assimp cross-load. */
FB_API fb_clip* fb_clip_parse_bvh(const char* text, size_t len, const char* name,
                                  const fb_clip_opts* opts, const fb_allocator* alloc,
                                  fb_error* err);

FB_API void fb_clip_destroy(fb_clip* c);

/* Joint index by name, or -1. */
FB_API int fb_clip_joint_by_name(const fb_clip* c, const char* name);

/* Rest-pose position of every joint (njoint) and End Site (per joint; zero when none), in
 * metres, world axes after the up-axis change. Either output may be NULL. */
FB_API void fb_clip_rest_positions(const fb_clip* c, fb_v3* joints, fb_v3* ends);

/* ---- character ------------------------------------------------------------------------- */

/* Mass models. */
typedef enum fb_mass_model {
    FB_MASS_DENSITY = 0,      /* shapes at a density (water, scaled to --mass if given) */
    FB_MASS_ANTHROPOMETRIC = 1 /* segment mass fractions (de Leva 1996) of a given body mass */
} fb_mass_model;

/* Character rules (data/character_rules.json). Patterns are case-insensitive substrings of
 * joint names; within each list the first match wins. */
#define FB_RULES_MAX 48
#define FB_PATTERN_MAX 32
typedef struct fb_rule_part {
    char pattern[FB_PATTERN_MAX]; /* substring of a joint name */
    double radius;                /* capsule radius (m) */
    char segment[16];             /* de Leva segment: head, trunk, upperarm, forearm, hand,
                                     thigh, shank, foot */
    bool box;                     /* a box instead of a capsule (feet) */
} fb_rule_part;

/* Anatomical joint ranges (docs/MOCAP.md, "Joint ranges"). Each kind fixes how its bounds are
 * measured: ball kinds as an elliptic swing of the bone from a neutral direction plus a twist
 * about the bone, hinge kinds as an angle from the straight (knee, elbow) or rest (toe) pose. */
typedef enum fb_range_kind {
    FB_RANGE_HIP = 0,
    FB_RANGE_KNEE = 1,
    FB_RANGE_ANKLE = 2,
    FB_RANGE_TOE = 3,
    FB_RANGE_PELVIS = 4,
    FB_RANGE_SPINE = 5,
    FB_RANGE_NECK = 6,
    FB_RANGE_SHOULDER = 7,
    FB_RANGE_ELBOW = 8,
    FB_RANGE_WRIST = 9
} fb_range_kind;
#define FB_RANGE_NKIND 10

/* The six bounds of a range, by slot: 0/1 the swing toward flexion / extension, 2/3 toward
 * abduction (away from the midline) / adduction, 4/5 the twist medial / lateral (medial: the
 * front of the segment turning toward the midline). Hinge kinds use slots 0 and 1 only. What
 * each slot is called for a kind (an ankle's slot 0 is dorsiflexion, a wrist's slot 4
 * pronation): fb_range_bound_name. */
#define FB_RANGE_NBOUND 6

/* "hip", "knee", ...; NULL for a kind that does not exist. */
FB_API const char* fb_range_kind_name(fb_range_kind k);

/* The rules file's key for slot `slot` of kind k ("flexion", "dorsiflexion", "rotation"), or
 * NULL where the kind has no such slot. Symmetric kinds (spine, neck, pelvis) give two slots
 * the same key. */
FB_API const char* fb_range_bound_name(fb_range_kind k, int slot);

/* True for the kinds that apply to hinges (knee, elbow, toe); the others apply to ball joints. */
FB_API bool fb_range_kind_is_hinge(fb_range_kind k);

#define FB_RANGES_MAX 24
#define FB_RANGE_MATCH_MAX 8
#define FB_RANGE_SHARE_MAX 8
/* One anatomical range of the rules: the joints it applies to and its bounds. Joints it
 * matches that form a chain (each the child of the previous: CMU's lowerback, Chest, Chest2)
 * share it: the joint k-th from the top carries share[k] of the swing bounds (slots 0-3) and
 * twist_share[k] of the twist bounds (slots 4, 5) when the chain has that many joints, 1/n of
 * every bound in a chain of n otherwise. */
typedef struct fb_rule_range {
    fb_range_kind kind;
    int nmatch;
    char match[FB_RANGE_MATCH_MAX][FB_PATTERN_MAX]; /* patterns, as for parts */
    double bound[FB_RANGE_NBOUND];                  /* rad, by slot (0 where the kind has none) */
    int nshare;
    double share[FB_RANGE_SHARE_MAX]; /* fractions in (0, 1], top of the chain first */
    int ntwist_share;                 /* 0 = as share */
    double twist_share[FB_RANGE_SHARE_MAX];
} fb_rule_range;

typedef struct fb_rules {
    double density;       /* kg/m^3 */
    double default_radius; /* m, for joints no part pattern matches */
    double joint_damping; /* N m s/rad, passive damping of every joint but the root (0: none) */
    double joint_friction;     /* N m, passive dry friction of every joint but the root (0: none;
                                  fb_model_set_friction) */
    double rolling_resistance; /* m, of the body's shapes on the ground (0: none;
                                  fb_world_set_rolling) */
    int npart;
    fb_rule_part part[FB_RULES_MAX];
    int nhinge;
    char hinge[FB_RULES_MAX][FB_PATTERN_MAX]; /* joints made revolute */
    int ndrop;
    char drop[FB_RULES_MAX][FB_PATTERN_MAX]; /* joints frozen into their parent */
    int nrange;
    fb_rule_range range[FB_RANGES_MAX]; /* joint ranges; the first entry matching a joint wins */
} fb_rules;

/* Reads a rules file. FB_EIO / FB_EINVAL with the file and field named. */
FB_API fb_status fb_rules_load(const char* path, fb_rules* rules, fb_error* err);

/* Rules with no hinges, no drops and no ranges: every rotating clip joint stays a free ball
 * joint, so a clip -> character -> clip round trip is lossless (used by `featherbone
 * convert`). */
FB_API fb_rules fb_rules_lossless(void);

typedef struct fb_build_opts {
    const fb_rules* rules;    /* NULL = fb_rules_lossless() */
    fb_mass_model mass_model; /* default FB_MASS_DENSITY */
    double mass;              /* total mass target (kg); 0 = as the density gives (required
                                 > 0 for FB_MASS_ANTHROPOMETRIC) */
    bool free_positions;      /* true: every joint with position channels is a floating joint
                                 (the channels as free translations; the character is then not
                                 articulated) and no root is folded away. Default false: only
                                 the root floats, other such joints carry their bone vector */
} fb_build_opts;

FB_API fb_build_opts fb_default_build_opts(void);

/* What became of each clip joint. */
typedef enum fb_joint_role {
    FB_ROLE_BODY = 0,    /* drives a body of its own (floating, ball, hinge or fixed joint) */
    FB_ROLE_DROPPED = 1, /* frozen into its parent by a drop rule */
    FB_ROLE_FOLDED = 2   /* a root that never moves, folded into the world: no body of its own
                            (body_of_joint 0); its constant pose is in its child's X_tree */
} fb_joint_role;

/* Hinge axes are estimated as the principal axis of a joint's rotations over the clip; the
 * rotation off that axis cannot be represented and is reported here. Where the rotations are
 * a hinge after a constant rotation (a joint orient, as in files whose bones run along local
 * X), that constant is the hinge's rest: clip rotation = rest * rotation about the axis. */
typedef struct fb_hinge_info {
    fb_v3 axis;          /* unit, joint frame */
    double max_off_axis; /* rad, largest rotation off the axis over the clip */
    fb_quat rest;        /* the constant rotation before the hinge (identity for most clips);
                            in the joint's X_tree */
} fb_hinge_info;

/* A joint whose position channels the character carries as a bone (non-root joints with
 * position channels, unless free_positions): the bone built and how much the channels stretch
 * it over the clip. */
typedef struct fb_bone_info {
    bool from_channels;  /* the joint has position channels and is built as a bone */
    bool offset_agrees;  /* the channels agree with OFFSET (FB_BONE_AGREE): the bone is OFFSET;
                            otherwise it is the channels' mean over the clip */
    double length;       /* m, the bone built */
    double min_len, max_len; /* m, the shortest and longest the channels make it */
    double max_dev;      /* m, the largest |length at a frame - length| */
} fb_bone_info;

/* A joint's range as built: the rules' bounds times the joint's share of its chain, widened
 * where the clip itself goes past them (capture noise) so that every frame of the clip lies
 * inside. The model's fb_joint_limit holds the same range as the constraint sees it. */
typedef struct fb_joint_range {
    int rule;                        /* index into the rules' ranges; -1 = the joint has none */
    fb_range_kind kind;
    double share;                    /* of the rule's swing bounds this joint carries */
    double twist_share;              /* ... and of its twist bounds (chains) */
    double bound[FB_RANGE_NBOUND];   /* rad, by slot, after widening (0 where no slot) */
    double widened[FB_RANGE_NBOUND]; /* rad: how far the clip widened each bound (0 = not) */
    int frame[FB_RANGE_NBOUND];      /* clip frame of the extreme that set a widened bound */
    bool capped;                     /* a swing bound reached FB_RANGE_SWING_MAX and stopped */
} fb_joint_range;

/* Largest swing bound a ball joint's range may have (rad, 175 deg): the swing's direction is
 * undefined with the bone opposite its neutral direction, so a range keeps short of it. */
#define FB_RANGE_SWING_MAX (175.0 * 3.14159265358979323846 / 180.0)

typedef struct fb_character {
    fb_model* model;        /* owned */
    int njoint;             /* clip joints */
    int* body_of_joint;     /* (njoint) the body a clip joint drives, or for a dropped joint
                               the body it was frozen into */
    fb_joint_role* role;    /* (njoint) */
    int* joint_of_body;     /* (nbody) the clip joint of each body, -1 for world and End Sites */
    fb_hinge_info* hinge;   /* (njoint) valid where the joint became revolute */
    fb_joint_range* range;  /* (njoint) the joint's range (range[i].rule >= 0) */
    fb_bone_info* bone;     /* (njoint) valid where bone[i].from_channels */
    int root;               /* the clip joint of the character's root (joints before it on the
                               way down from the clip's root were folded away) */
    bool articulated;       /* false when free_positions left non-root joints floating */
    double height;          /* standing height (m) of the clip (see fb_clip.height_from) */
    double rolling_resistance; /* m: the rules', for fb_world_set_rolling (0: none) */
    int nwarn;
    char warn[FB_CLIP_MAX_WARN][FB_CLIP_WARN_LEN];
    fb_allocator alloc;
} fb_character;

/* Builds the character of a clip: root = floating joint; joints with rotation channels =
 * ball joints (or revolute by the hinge rules, or fixed by the drop rules); joints without
 * channels and End Sites = fixed bodies. A root that never moves (every channel constant) with
 * one child, which has position channels, is folded into the world and that child is the
 * floating root. Other joints with position channels are built as their rotation channels
 * say, carrying their bone vector (OFFSET where the channels agree with it, else the channels'
 * mean), unless opts->free_positions. Shapes: a capsule from each joint to its child (the
 * centroid of its children when there are several; stopping one radius short of a single
 * child whose own shape is narrower, with the mass of the full length), boxes where the rules
 * say. */
FB_API fb_character* fb_character_build(const fb_clip* clip, const fb_build_opts* opts,
                                        fb_error* err);

FB_API void fb_character_destroy(fb_character* ch);

/* The direction the character faces, as a unit vector in its root body's coordinates (body 1;
 * world heading = its body -> world rotation times this). Read in the pose that stands (the
 * rest pose, or the first upright frame when the rest pose does not stand: fb_clip.height_from):
 * forward = left x up, horizontal, with "left" the mean of (left joint - right joint) over the
 * mirrored joint names (LeftX / RightX, LX / RX, lX / rX); world +Z when the clip has no such
 * pair. */
FB_API fb_v3 fb_character_forward(const fb_clip* clip, const fb_character* ch);

/* ---- motion ---------------------------------------------------------------------------- */

typedef struct fb_motion {
    int nframe;
    int nq;
    double dt;  /* s between frames */
    double t0;  /* s, the clip time of frame 0 (from the clip's first frame) */
    double* q;  /* (nframe x nq) */
    fb_allocator alloc;
} fb_motion;

/* The clip's frames first..last-1 as q(t) of the character, resampled to `fps` (0 = the clip's
 * own rate; rotations by slerp, positions linearly). last = 0 means the end. */
FB_API fb_motion* fb_motion_from_clip(const fb_clip* clip, const fb_character* ch, double fps,
                                      int first, int last, fb_error* err);

FB_API void fb_motion_destroy(fb_motion* mo);

/* Writes a motion as BVH with the clip's hierarchy, names, offsets, channel orders; lengths
 * in the clip's file units times `length_scale` (1 = as the input), Euler angles in each
 * joint's own order, unwrapped frame to frame. Every joint keeps its channels: floating joints
 * write their positions from q; position channels the character carries as bones, and every
 * channel of a folded root, are written as the input has them at the frame's clip time
 * (mo->t0 + k mo->dt, linear between input frames). Written to a temporary file and renamed,
 * so the target appears whole or not at all. */
FB_API fb_status fb_motion_write_bvh(const fb_clip* clip, const fb_character* ch,
                                     const fb_motion* mo, double length_scale, const char* path,
                                     fb_error* err);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_MOCAP_H */
