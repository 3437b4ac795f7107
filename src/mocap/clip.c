/* fb_clip: storage, warnings, and detection of length unit, up axis and position-channel
 * meaning (docs/MOCAP.md states the rules). */
#include "mocap/clip.h"
#include "math/detmath.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/quat.h"
#include "math/spatial.h"
#include "mocap/constants.h"
#include "mocap/euler.h"
#include "util/error.h"
#include "util/sort.h"

static const char* const CHANNEL_NAMES[6] = {"Xposition", "Yposition", "Zposition",
                                              "Xrotation", "Yrotation", "Zrotation"};

const char* fb_channel_name(fb_channel c) {
    return (c >= FB_CH_XPOS && c <= FB_CH_ZROT) ? CHANNEL_NAMES[c] : "?";
}

const char* fb_pos_mode_name(fb_pos_mode m) {
    switch (m) {
    case FB_POS_AUTO:
        return "none";
    case FB_POS_ABSOLUTE:
        return "absolute (replaces OFFSET)";
    case FB_POS_RELATIVE:
        return "relative (added to OFFSET)";
    }
    return "?";
}

fb_clip_opts fb_default_clip_opts(void) {
    return (fb_clip_opts){.scale = 0.0, .height = 0.0, .up = FB_UP_AUTO,
                          .pos_mode = FB_POS_AUTO, .use_assimp = true};
}

fb_clip* fb_clip_new(const fb_allocator* a, const char* source, fb_error* err) {
    const fb_allocator al = a ? *a : fb_default_allocator();
    fb_clip* c = fb_alloc(&al, sizeof *c);
    if (!c) {
        fb_fail(err, FB_ENOMEM, "%s: out of memory", source);
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->alloc = al;
    snprintf(c->source, sizeof c->source, "%s", source);
    return c;
}

void fb_clip_destroy(fb_clip* c) {
    if (!c) {
        return;
    }
    const fb_allocator a = c->alloc;
    fb_free(&a, c->joint);
    fb_free(&a, c->frames);
    fb_free(&a, c);
}

int fb_clip_push_joint(fb_clip* c, const fb_clip_joint* j, fb_error* err) {
    if (c->njoint == c->joint_cap) {
        const int cap = c->joint_cap ? 2 * c->joint_cap : 32;
        fb_clip_joint* grown = fb_alloc(&c->alloc, (size_t)cap * sizeof *grown);
        if (!grown) {
            fb_fail(err, FB_ENOMEM, "%s: out of memory for %d joints", c->source, cap);
            return -1;
        }
        if (c->joint) {
            memcpy(grown, c->joint, (size_t)c->njoint * sizeof *grown);
        }
        fb_free(&c->alloc, c->joint);
        c->joint = grown;
        c->joint_cap = cap;
    }
    c->joint[c->njoint] = *j;
    return c->njoint++;
}

void fb_clip_warn(fb_clip* c, const char* fmt, ...) {
    if (c->nwarn < FB_CLIP_MAX_WARN) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->warn[c->nwarn], FB_CLIP_WARN_LEN, fmt, ap);
        va_end(ap);
    }
    c->nwarn++;
}

int fb_clip_joint_by_name(const fb_clip* c, const char* name) {
    for (int i = 0; i < c->njoint; i++) {
        if (strcmp(c->joint[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

int fb_clip_rot_axes(const fb_clip_joint* j, int* axes) {
    int n = 0;
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] >= FB_CH_XROT) {
            axes[n++] = (int)j->chan[k] - (int)FB_CH_XROT;
        }
    }
    return n;
}

fb_quat fb_clip_frame_rotation(const fb_clip* c, int i, int f) {
    const fb_clip_joint* j = &c->joint[i];
    const double* row = c->frames + (size_t)f * (size_t)c->nchan + (size_t)j->col;
    int axes[3];
    double ang[3];
    int n = 0;
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] >= FB_CH_XROT) {
            axes[n] = (int)j->chan[k] - (int)FB_CH_XROT;
            ang[n++] = row[k] * (FB_PI / 180.0);
        }
    }
    return fb_euler_to_quat(axes, n, ang);
}

bool fb_clip_has_pos(const fb_clip_joint* j) {
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] <= FB_CH_ZPOS) {
            return true;
        }
    }
    return false;
}

fb_m3 fb_clip_up_rotation(const fb_clip* c) {
    /* Z up -> Y up: (x, y, z) -> (x, z, -y), a rotation of -90 degrees about x */
    if (c->up == FB_UP_Z) {
        return (fb_m3){{{1, 0, 0}, {0, 0, 1}, {0, -1, 0}}};
    }
    return fb_m3_identity();
}

/* Rest positions of joints and End Sites in file units and file axes (no unit, no up
 * rotation): each joint sits at its parent's position plus its OFFSET. */
static void rest_file(const fb_clip* c, fb_v3* joints, fb_v3* ends) {
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        const fb_v3 base = (j->parent < 0) ? fb_v3_zero() : joints[j->parent];
        joints[i] = fb_v3_add(base, j->offset);
        ends[i] = j->has_end ? fb_v3_add(joints[i], j->end_offset) : joints[i];
    }
}

/* Runs rest_file into scratch from the clip's allocator; false when out of memory. */
static bool rest_scratch(const fb_clip* c, fb_v3** joints, fb_v3** ends) {
    const size_t n = (size_t)(c->njoint > 0 ? c->njoint : 1);
    *joints = fb_alloc(&c->alloc, n * sizeof(fb_v3));
    *ends = fb_alloc(&c->alloc, n * sizeof(fb_v3));
    if (!*joints || !*ends) {
        fb_free(&c->alloc, *joints);
        fb_free(&c->alloc, *ends);
        return false;
    }
    rest_file(c, *joints, *ends);
    return true;
}

void fb_clip_rest_positions(const fb_clip* c, fb_v3* joints, fb_v3* ends) {
    fb_v3 *J, *E;
    if (!rest_scratch(c, &J, &E)) {
        return;
    }
    const fb_m3 R = fb_clip_up_rotation(c);
    for (int i = 0; i < c->njoint; i++) {
        if (joints) {
            joints[i] = fb_m3_mv(R, fb_v3_scale(J[i], c->unit));
        }
        if (ends) {
            ends[i] = c->joint[i].has_end ? fb_m3_mv(R, fb_v3_scale(E[i], c->unit)) : fb_v3_zero();
        }
    }
    fb_free(&c->alloc, J);
    fb_free(&c->alloc, E);
}

fb_v3 fb_clip_frame_offset(const fb_clip* c, int i, int f) {
    const fb_clip_joint* j = &c->joint[i];
    const double* row = c->frames + (size_t)f * (size_t)c->nchan + (size_t)j->col;
    const bool replaces = i > 0 && c->pos_mode == FB_POS_ABSOLUTE;
    double p[3] = {j->offset.x, j->offset.y, j->offset.z};
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] <= FB_CH_ZPOS) {
            p[j->chan[k]] = replaces ? row[k] : p[j->chan[k]] + row[k];
        }
    }
    return fb_v3_make(p[0], p[1], p[2]);
}

bool fb_clip_joint_static(const fb_clip* c, int i) {
    const fb_clip_joint* j = &c->joint[i];
    for (int k = 0; k < j->nchan; k++) {
        const double* v = c->frames + (size_t)(j->col + k);
        for (int f = 1; f < c->nframe; f++) {
            if (fabs(v[(size_t)f * (size_t)c->nchan] - v[0]) > FB_STATIC_TOL) {
                return false;
            }
        }
    }
    return true;
}

int fb_clip_skeleton_root(const fb_clip* c) {
    int r = 0;
    while (r + 1 < c->njoint && !c->joint[r].has_end && c->joint[r + 1].parent == r &&
           fb_clip_has_pos(&c->joint[r + 1]) && fb_clip_joint_static(c, r)) {
        int children = 0;
        for (int k = r + 1; k < c->njoint; k++) {
            children += c->joint[k].parent == r;
        }
        if (children != 1) {
            break;
        }
        r++;
    }
    return r;
}

/* ---- standing height ------------------------------------------------------------------------ */

/* One pose of the skeleton for the height, file units and file axes: each joint's bone from its
 * parent, its End Site's bone, and its end point (End Site, or the joint itself). */
typedef struct pose {
    fb_v3* bone;
    fb_v3* end_bone;
    fb_v3* end_pt;
    fb_v3* at;   /* joint positions */
    fb_quat* W;  /* joint orientations (posed only) */
    int root;    /* fb_clip_skeleton_root: where the height's bone chains start */
} pose;

static bool pose_alloc(const fb_clip* c, pose* p) {
    const size_t n = (size_t)(c->njoint > 0 ? c->njoint : 1);
    p->bone = fb_alloc(&c->alloc, 4 * n * sizeof(fb_v3));
    p->W = fb_alloc(&c->alloc, n * sizeof(fb_quat));
    if (!p->bone || !p->W) {
        fb_free(&c->alloc, p->bone);
        fb_free(&c->alloc, p->W);
        return false;
    }
    p->end_bone = p->bone + n;
    p->end_pt = p->bone + 2 * n;
    p->at = p->bone + 3 * n;
    p->root = fb_clip_skeleton_root(c);
    return true;
}

static void pose_free(const fb_clip* c, pose* p) {
    fb_free(&c->alloc, p->bone);
    fb_free(&c->alloc, p->W);
}

/* The rest pose: OFFSETs as they are. */
static void pose_rest(const fb_clip* c, pose* p) {
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        p->bone[i] = j->offset;
        p->at[i] = j->parent < 0 ? j->offset : fb_v3_add(p->at[j->parent], j->offset);
        p->end_bone[i] = j->has_end ? j->end_offset : fb_v3_zero();
        p->end_pt[i] = fb_v3_add(p->at[i], p->end_bone[i]);
    }
}

/* Frame f's pose by forward kinematics of the channels (position channels as pos_mode reads
 * them). */
static void pose_frame(const fb_clip* c, int f, pose* p) {
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        const fb_v3 t = fb_clip_frame_offset(c, i, f);
        const fb_quat Wp = j->parent < 0 ? fb_quat_identity() : p->W[j->parent];
        p->bone[i] = fb_quat_rotate(Wp, t);
        p->at[i] = j->parent < 0 ? p->bone[i] : fb_v3_add(p->at[j->parent], p->bone[i]);
        p->W[i] = fb_quat_mul(Wp, fb_clip_frame_rotation(c, i, f));
        p->end_bone[i] = j->has_end ? fb_quat_rotate(p->W[i], j->end_offset) : fb_v3_zero();
        p->end_pt[i] = fb_v3_add(p->at[i], p->end_bone[i]);
    }
}

bool fb_clip_frame_positions(const fb_clip* c, int f, fb_v3* joints) {
    pose p;
    if (!pose_alloc(c, &p)) {
        return false;
    }
    if (f < 0) {
        pose_rest(c, &p);
    } else {
        pose_frame(c, f, &p);
    }
    memcpy(joints, p.at, (size_t)c->njoint * sizeof *joints);
    pose_free(c, &p);
    return true;
}

/* A bone's share of the standing height: its full length when it is mostly vertical (a
 * splayed or slightly bent leg still stands that tall), its vertical extent when it is mostly
 * horizontal (feet, hip and shoulder offsets). */
static double bone_height(fb_v3 off, int up) {
    const double L = fb_v3_norm(off), v = fabs(fb_v3_get(off, up));
    return (v > FB_VERTICAL_BONE * L) ? L : v;
}

/* Height share of the bone chain from the skeleton's root r to joint i's end point, and (into
 * *length) the chain's length with every bone at full length. */
static double chain_height(const fb_clip* c, const pose* p, int r, int i, int up,
                           double* length) {
    double h = bone_height(p->end_bone[i], up);
    *length = fb_v3_norm(p->end_bone[i]);
    for (int j = i; j != r && c->joint[j].parent >= 0; j = c->joint[j].parent) {
        h += bone_height(p->bone[j], up);
        *length += fb_v3_norm(p->bone[j]);
    }
    return h;
}

/* Standing height of a pose in file units, whatever its posture: the chain from the skeleton's
 * root (fb_clip_skeleton_root: a dummy root's translation is no bone) to the highest end point
 * plus that to the lowest (head top and sole when upright), each bone counted by bone_height.
 * *upright gets the pose's top-to-bottom extent over the two chains' length. */
static double standing_height(const fb_clip* c, const pose* p, int up, double* upright) {
    const int r = p->root;
    int top = r, bottom = r;
    for (int i = r; i < c->njoint; i++) {
        if (fb_v3_get(p->end_pt[i], up) > fb_v3_get(p->end_pt[top], up)) {
            top = i;
        }
        if (fb_v3_get(p->end_pt[i], up) < fb_v3_get(p->end_pt[bottom], up)) {
            bottom = i;
        }
    }
    double lt, lb;
    const double h = chain_height(c, p, r, top, up, &lt) + chain_height(c, p, r, bottom, up, &lb);
    const double extent = fb_v3_get(p->end_pt[top], up) - fb_v3_get(p->end_pt[bottom], up);
    *upright = lt + lb > 0.0 ? extent / (lt + lb) : 0.0;
    return h;
}

/* The up axis a pose's extents say (1 = Y, 2 = Z), summed over calls into ext[3]. */
static void add_extents(const fb_clip* c, const pose* p, double* ext) {
    fb_v3 lo = p->at[0], hi = p->at[0];
    for (int i = 0; i < c->njoint; i++) {
        for (int pass = 0; pass < 2; pass++) {
            const fb_v3 q = pass ? p->end_pt[i] : p->at[i];
            lo = (fb_v3){fmin(lo.x, q.x), fmin(lo.y, q.y), fmin(lo.z, q.z)};
            hi = (fb_v3){fmax(hi.x, q.x), fmax(hi.y, q.y), fmax(hi.z, q.z)};
        }
    }
    ext[0] += hi.x - lo.x;
    ext[1] += hi.y - lo.y;
    ext[2] += hi.z - lo.z;
}

static fb_up_axis up_of(const double* ext) {
    return ext[2] > FB_UP_Z_RATIO * ext[1] ? FB_UP_Z : FB_UP_Y;
}

/* Standing heights of the frames first, first + step, ... < last that stand upright, into h
 * (sorted); returns how many. *tallest gets the largest height of any of them, *stand (when
 * still -1) the first frame that stands. */
static int posed_heights(const fb_clip* c, pose* p, int first, int last, int step, int up,
                         double* h, double* tallest, int* stand) {
    int n = 0;
    for (int f = first; f < last; f += step) {
        pose_frame(c, f, p);
        double upright;
        const double hf = standing_height(c, p, up, &upright);
        *tallest = fmax(*tallest, hf);
        if (upright >= FB_UPRIGHT_MIN) {
            h[n++] = hf;
            *stand = *stand < 0 ? f : *stand;
        }
    }
    fb_sort_doubles(h, (size_t)n);
    return n;
}

static double median(const double* sorted, int n) {
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

const char* fb_height_from_name(fb_height_from h) {
    switch (h) {
    case FB_HEIGHT_NONE:
        return "no upright pose (the tallest reading)";
    case FB_HEIGHT_REST:
        return "the rest pose";
    case FB_HEIGHT_EARLY:
        return "the poses of the first second";
    case FB_HEIGHT_CLIP:
        return "poses spread over the clip";
    }
    return "?";
}

/* Lengths a clip may be written in: metres per unit, the name reported. */
static const struct {
    double metres;
    const char* name;
} UNITS[] = {
    {1.0, "m"},    {0.1, "dm"},   {0.01, "cm"}, {0.001, "mm"}, {0.0254, "inch"},
    {FB_CMU_UNIT, "CMU (0.056444 m)"},
};

/* The unit whose reading of the standing height is nearest (in ratio) to a typical adult's. */
static int detect_unit(double height_file) {
    int best = 0;
    double best_err = INFINITY;
    for (int k = 0; k < (int)(sizeof UNITS / sizeof UNITS[0]); k++) {
        const double e = fabs(fb_log(height_file * UNITS[k].metres / FB_TYPICAL_HEIGHT));
        if (e < best_err) {
            best_err = e;
            best = k;
        }
    }
    return best;
}

/* Non-root position channels: absolute when the values sit near OFFSET, relative when they
 * sit near zero (sum of |value - offset| against sum of |value| over all such channels). */
static fb_pos_mode detect_pos_mode(const fb_clip* c) {
    double near_offset = 0.0, near_zero = 0.0;
    bool any = false;
    for (int i = 1; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        for (int k = 0; k < j->nchan; k++) {
            if (j->chan[k] > FB_CH_ZPOS) {
                continue;
            }
            any = true;
            const double off = fb_v3_get(j->offset, (int)j->chan[k]);
            for (int f = 0; f < c->nframe; f++) {
                const double v = c->frames[(size_t)f * (size_t)c->nchan + (size_t)(j->col + k)];
                near_offset += fabs(v - off);
                near_zero += fabs(v);
            }
        }
    }
    if (!any) {
        return FB_POS_AUTO;
    }
    return near_offset < near_zero ? FB_POS_ABSOLUTE : FB_POS_RELATIVE;
}

/* The up axis and the standing height (file units) with the evidence that gave them
 * (docs/MOCAP.md, "What is detected"): the rest pose when it stands upright; else the poses of
 * the first second, by forward kinematics; else poses spread over the clip; else the tallest
 * reading of any of them (warned). */
static fb_status detect_height(fb_clip* c, fb_up_axis given_up, fb_error* err) {
    pose p;
    const int early = (int)fmin(c->nframe, fmax(1.0, ceil(FB_EARLY_SECONDS / c->frame_time)));
    const int cap = early > FB_POSED_SAMPLES ? early : FB_POSED_SAMPLES;
    double* h = fb_alloc(&c->alloc, (size_t)cap * sizeof(double));
    if (!h || !pose_alloc(c, &p)) {
        fb_free(&c->alloc, h);
        return fb_fail(err, FB_ENOMEM, "%s: out of memory", c->source);
    }
    /* the rest pose: up is the longer of its Y and Z extents, unless given */
    double ext[3] = {0.0, 0.0, 0.0};
    pose_rest(c, &p);
    add_extents(c, &p, ext);
    c->up = given_up != FB_UP_AUTO ? given_up : up_of(ext);
    c->rest_height_file = standing_height(c, &p, c->up == FB_UP_Z ? 2 : 1, &c->rest_upright);
    const bool rest_stands = c->rest_upright >= FB_UPRIGHT_MIN;
    /* the first second's poses: their extents give up when the rest pose does not stand */
    if (!rest_stands && given_up == FB_UP_AUTO) {
        ext[0] = ext[1] = ext[2] = 0.0;
        for (int f = 0; f < early; f++) {
            pose_frame(c, f, &p);
            add_extents(c, &p, ext);
        }
        c->up = up_of(ext);
    }
    const int up = c->up == FB_UP_Z ? 2 : 1;
    double tallest = c->rest_height_file;
    c->posed_frames = early;
    c->stand_frame = -1;
    c->posed_upright = posed_heights(c, &p, 0, early, 1, up, h, &tallest, &c->stand_frame);
    c->posed_height_file = c->posed_upright > 0 ? median(h, c->posed_upright) : 0.0;
    if (rest_stands) {
        c->height_from = FB_HEIGHT_REST;
        c->height_file = c->rest_height_file;
    } else if (c->posed_upright > 0) {
        c->height_from = FB_HEIGHT_EARLY;
        c->height_file = c->posed_height_file;
    } else {
        /* at most FB_POSED_SAMPLES frames: h holds that many */
        const int step = (c->nframe + FB_POSED_SAMPLES - 1) / FB_POSED_SAMPLES;
        const int n = posed_heights(c, &p, 0, c->nframe, step, up, h, &tallest, &c->stand_frame);
        c->height_from = n > 0 ? FB_HEIGHT_CLIP : FB_HEIGHT_NONE;
        c->height_file = n > 0 ? median(h, n) : tallest;
        if (n == 0 && tallest > 0.0) {
            fb_clip_warn(c, "no pose stands upright (rest pose, first second, %d frames over the "
                         "clip); the standing height is the tallest reading",
                         (c->nframe + step - 1) / step);
        }
    }
    pose_free(c, &p);
    fb_free(&c->alloc, h);
    return FB_OK;
}

fb_status fb_clip_finish(fb_clip* c, const fb_clip_opts* opts, fb_error* err) {
    const fb_clip_opts o = opts ? *opts : fb_default_clip_opts();
    if (c->njoint < 1) {
        return fb_fail(err, FB_EINVAL, "%s: expected at least one joint, found none", c->source);
    }
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        if (!fb_v3_is_finite(j->offset) || !fb_v3_is_finite(j->end_offset)) {
            return fb_fail(err, FB_EINVAL, "%s: joint '%s': OFFSET: expected finite numbers",
                           c->source, j->name);
        }
    }
    const size_t nval = (size_t)c->nframe * (size_t)c->nchan;
    for (size_t k = 0; k < nval; k++) {
        if (!isfinite(c->frames[k])) {
            return fb_fail(err, FB_EINVAL, "%s: frame %zu, channel %zu: expected a finite number",
                           c->source, k / (size_t)c->nchan, k % (size_t)c->nchan);
        }
    }
    if (!(o.scale >= 0.0) || !(o.height >= 0.0) || !isfinite(o.scale) || !isfinite(o.height)) {
        return fb_fail(err, FB_EINVAL, "%s: scale and height: expected finite values >= 0",
                       c->source);
    }

    /* what the position channels mean, then the up axis and the standing height (the poses
     * read them through the channels) */
    c->pos_mode = (o.pos_mode != FB_POS_AUTO) ? o.pos_mode : detect_pos_mode(c);
    const fb_status s = detect_height(c, o.up, err);
    if (s != FB_OK) {
        return s;
    }

    /* length unit: given, scaled to a height, or detected from the height */
    if (o.scale > 0.0) {
        c->unit = o.scale;
        snprintf(c->unit_name, sizeof c->unit_name, "given (--scale)");
    } else if (o.height > 0.0) {
        if (!(c->height_file > 0.0)) {
            return fb_fail(err, FB_EINVAL,
                           "%s: --height: the skeleton has no standing height to scale",
                           c->source);
        }
        c->unit = o.height / c->height_file;
        snprintf(c->unit_name, sizeof c->unit_name, "given (--height)");
    } else if (c->height_file > 0.0) {
        const int k = detect_unit(c->height_file);
        c->unit = UNITS[k].metres;
        snprintf(c->unit_name, sizeof c->unit_name, "%s", UNITS[k].name);
        const double h = c->height_file * c->unit;
        if (h < FB_PLAUSIBLE_HEIGHT_MIN || h > FB_PLAUSIBLE_HEIGHT_MAX) {
            fb_clip_warn(c,
                         "standing height %.4g file units (%s) reads as %.3g m in the nearest "
                         "unit (%s); give --scale or --height",
                         c->height_file, fb_height_from_name(c->height_from), h, UNITS[k].name);
        }
        /* the other evidence, when it stands, should agree */
        const int kp = c->posed_upright > 0 ? detect_unit(c->posed_height_file) : k;
        if (c->height_from == FB_HEIGHT_REST && kp != k) {
            fb_clip_warn(c,
                         "the rest pose stands %.4g units tall (%s), the first second's poses "
                         "%.4g (%s); the rest pose decides: give --scale if it is wrong",
                         c->height_file, UNITS[k].name, c->posed_height_file, UNITS[kp].name);
        }
    } else {
        c->unit = 1.0;
        snprintf(c->unit_name, sizeof c->unit_name, "m (no height to detect from)");
        fb_clip_warn(c, "the skeleton has no height in any pose; assuming metres (give --scale)");
    }
    return fb_ok(err);
}
