/* fb_clip: storage, warnings, and detection of length unit, up axis and position-channel
 * meaning (docs/MOCAP.md states the rules). */
#include "mocap/clip.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "math/spatial.h"
#include "mocap/constants.h"
#include "mocap/euler.h"
#include "util/error.h"

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

/* A bone's share of the standing height: its full length when it is mostly vertical (a
 * splayed or slightly bent leg still stands that tall), its vertical extent when it is mostly
 * horizontal (feet, hip and shoulder offsets). */
static double bone_height(fb_v3 off, int up) {
    const double L = fb_v3_norm(off), v = fabs(fb_v3_get(off, up));
    return (v > FB_VERTICAL_BONE * L) ? L : v;
}

/* Height share of the bone chain from the root to joint i's end point (End Site, or itself). */
static double chain_height(const fb_clip* c, int i, int up) {
    double h = c->joint[i].has_end ? bone_height(c->joint[i].end_offset, up) : 0.0;
    for (int j = i; c->joint[j].parent >= 0; j = c->joint[j].parent) {
        h += bone_height(c->joint[j].offset, up);
    }
    return h;
}

/* Standing height in file units, whatever the rest posture: the chain from the root to the
 * highest end point plus that to the lowest (head top and sole when upright), each bone counted
 * by bone_height. ends[] are the rest end points (file axes). */
static double standing_height(const fb_clip* c, const fb_v3* ends) {
    const int up = (c->up == FB_UP_Z) ? 2 : 1;
    int top = 0, bottom = 0;
    for (int i = 0; i < c->njoint; i++) {
        if (fb_v3_get(ends[i], up) > fb_v3_get(ends[top], up)) {
            top = i;
        }
        if (fb_v3_get(ends[i], up) < fb_v3_get(ends[bottom], up)) {
            bottom = i;
        }
    }
    return chain_height(c, top, up) + chain_height(c, bottom, up);
}

/* Lengths a clip may be written in: metres per unit, the name reported. */
static const struct {
    double metres;
    const char* name;
} UNITS[] = {
    {1.0, "m"},    {0.1, "dm"},   {0.01, "cm"}, {0.001, "mm"}, {0.0254, "inch"},
    {FB_CMU_UNIT, "CMU (0.056444 m)"},
};

/* The unit whose reading of the rest height is nearest (in ratio) to a typical adult's. */
static int detect_unit(double height_file) {
    int best = 0;
    double best_err = INFINITY;
    for (int k = 0; k < (int)(sizeof UNITS / sizeof UNITS[0]); k++) {
        const double e = fabs(log(height_file * UNITS[k].metres / FB_TYPICAL_HEIGHT));
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

    /* up axis: the longer of the rest pose's Y and Z extents, unless given */
    fb_v3 *J, *E;
    if (!rest_scratch(c, &J, &E)) {
        return fb_fail(err, FB_ENOMEM, "%s: out of memory", c->source);
    }
    fb_v3 lo = J[0], hi = J[0];
    for (int i = 0; i < c->njoint; i++) {
        for (int pass = 0; pass < 2; pass++) {
            const fb_v3 p = pass ? E[i] : J[i];
            lo = (fb_v3){fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z)};
            hi = (fb_v3){fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z)};
        }
    }
    const double ext_y = hi.y - lo.y, ext_z = hi.z - lo.z;
    c->up = (o.up != FB_UP_AUTO) ? o.up
                                 : (ext_z > FB_UP_Z_RATIO * ext_y ? FB_UP_Z : FB_UP_Y);
    c->height_file = standing_height(c, E);
    fb_free(&c->alloc, J);
    fb_free(&c->alloc, E);

    /* length unit: given, scaled to a height, or detected from the height */
    if (o.scale > 0.0) {
        c->unit = o.scale;
        snprintf(c->unit_name, sizeof c->unit_name, "given (--scale)");
    } else if (o.height > 0.0) {
        if (!(c->height_file > 0.0)) {
            return fb_fail(err, FB_EINVAL, "%s: --height: the rest pose has no height to scale",
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
                         "rest height %.4g file units reads as %.3g m in the nearest unit (%s); "
                         "give --scale or --height",
                         c->height_file, h, UNITS[k].name);
        }
    } else {
        c->unit = 1.0;
        snprintf(c->unit_name, sizeof c->unit_name, "m (no height to detect from)");
        fb_clip_warn(c, "the rest pose is flat; assuming metres (give --scale)");
    }
    c->pos_mode = (o.pos_mode != FB_POS_AUTO) ? o.pos_mode : detect_pos_mode(c);
    return fb_ok(err);
}
