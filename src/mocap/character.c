/* Character builder: a clip's skeleton -> fb_model with shapes and masses (docs/MOCAP.md).
 *
 * Every clip joint becomes a body whose frame sits at the joint with the rest pose's axes
 * (BVH rest poses carry no rotations); its segment runs to its child joint, or to the centroid
 * of its children and End Site when there are several (a capsule stops short of a narrower
 * joint it ends at: plan_shape). End Sites become massless fixed bodies that mark the segment
 * ends. Masses come from the shapes at the rules' density (water, Cline §5.1), optionally
 * scaled to a total, or from de Leva's segment fractions. Only the root floats: other joints
 * with position channels hang from their parent by the bone those channels carry
 * (channel_bone), and a root that never moves above the hips is folded into the world
 * (fb_clip_skeleton_root). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "featherbone/mocap.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "mocap/clip.h"
#include "mocap/constants.h"
#include "mocap/euler.h"
#include "mocap/build.h"
#include "mocap/sole.h"
#include "util/error.h"

/* Neighbouring bodies whose masses differ by more than this factor are reported: a known
 * source of ill-conditioned constraint matrices. */
#define MASS_RATIO_WARN 100.0
/* A joint whose rotations stay below this (rad^2, mean squared angle) has no usable hinge
 * axis; its joint frame's x axis is used instead. */
#define HINGE_MIN_MOTION 1e-8
/* Power-iteration steps for the principal rotation axis (3x3, converges in far fewer). */
#define HINGE_POWER_STEPS 100

/* de Leva 1996, "Adjustments to Zatsiorsky-Seluyanov's segment inertia parameters",
 * J. Biomech. 29(9):1223-1230, Table 4 (males): segment mass in % of body mass. Limbs are per
 * side; `sides` counts how many of each a body has. */
static const struct {
    const char* name;
    double percent;
    int sides;
} DE_LEVA[] = {
    {"head", 6.94, 1},     {"trunk", 43.46, 1}, {"upperarm", 2.71, 2}, {"forearm", 1.62, 2},
    {"hand", 0.61, 2},     {"thigh", 14.16, 2}, {"shank", 4.33, 2},    {"foot", 1.37, 2},
};
#define NSEGMENT ((int)(sizeof DE_LEVA / sizeof DE_LEVA[0]))

fb_build_opts fb_default_build_opts(void) {
    return (fb_build_opts){.rules = NULL, .mass_model = FB_MASS_DENSITY, .mass = 0.0};
}

static bool in_list(const char (*list)[FB_PATTERN_MAX], int n, const char* name) {
    for (int k = 0; k < n; k++) {
        if (fb_rule_matches(name, list[k])) {
            return true;
        }
    }
    return false;
}

static const fb_rule_part* part_for(const fb_rules* r, const char* name) {
    for (int k = 0; k < r->npart; k++) {
        if (fb_rule_matches(name, r->part[k].pattern)) {
            return &r->part[k];
        }
    }
    return NULL;
}

static int segment_index(const char* s) {
    for (int k = 0; k < NSEGMENT; k++) {
        if (strcmp(s, DE_LEVA[k].name) == 0) {
            return k;
        }
    }
    return 1; /* trunk */
}



/* A hinge fit that leaves more than this (rad) off its axis is tried again about the joint's
 * mean rotation (1 degree): clips whose joints carry a constant joint orient in their rotation
 * channels (bones along local X) are hinges after that constant, not through the identity. */
#define HINGE_REST_TRY (FB_PI / 180.0)
/* ...and the second fit is taken when it leaves at most this fraction of the first's off its
 * axis: a joint orient leaves ~0 against tens of degrees; on clips whose rest pose is the
 * hinge's zero (Boxing_Toes, louise: 3-DOF elbows and knees) the two differ by a few degrees,
 * and their hinges stay through the identity. */
#define HINGE_REST_GAIN 0.5

/* The hinge of joint i after the constant rotation `rest`: the principal axis of the rotation
 * vectors of rest^-1 q over the clip (the eigenvector of sum r r^T with the largest eigenvalue,
 * by power iteration), and the largest rotation off it. */
static fb_hinge_info fit_hinge(const fb_clip* c, int i, fb_quat rest, bool* moved) {
    const fb_quat rest_inv = fb_quat_conj(rest);
    fb_m3 S = fb_m3_zero();
    for (int f = 0; f < c->nframe; f++) {
        const fb_v3 r = fb_quat_log(fb_quat_mul(rest_inv, fb_clip_frame_rotation(c, i, f)));
        S = fb_m3_add(S, fb_m3_outer(r, r));
    }
    const double tr = S.m[0][0] + S.m[1][1] + S.m[2][2];
    fb_hinge_info h = {{1.0, 0.0, 0.0}, 0.0, rest};
    *moved = tr / (c->nframe > 0 ? c->nframe : 1) > HINGE_MIN_MOTION;
    if (*moved) {
        fb_v3 v = {1.0, 1.0, 1.0};
        for (int k = 0; k < HINGE_POWER_STEPS; k++) {
            const fb_v3 w = fb_m3_mv(S, v);
            const double n = fb_v3_norm(w);
            if (!(n > 0.0)) {
                break;
            }
            v = fb_v3_scale(w, 1.0 / n);
        }
        /* a canonical sign: the largest component positive */
        const double big = fabs(v.x) >= fabs(v.y) && fabs(v.x) >= fabs(v.z)
                               ? v.x
                               : (fabs(v.y) >= fabs(v.z) ? v.y : v.z);
        h.axis = big < 0.0 ? fb_v3_neg(v) : v;
    }
    for (int f = 0; f < c->nframe; f++) {
        const fb_quat q = fb_quat_mul(rest_inv, fb_clip_frame_rotation(c, i, f));
        const fb_quat tw = fb_quat_from_axis_angle(h.axis, fb_quat_twist(q, h.axis));
        const fb_v3 swing = fb_quat_log(fb_quat_mul(fb_quat_conj(tw), q));
        h.max_off_axis = fmax(h.max_off_axis, fb_v3_norm(swing));
    }
    return h;
}

/* The mean rotation of joint i over the clip: the normalised sum of its quaternions, each on
 * the first frame's side (the chordal L2 mean; for rotations about one axis after a constant,
 * it is one of them). */
static fb_quat mean_rotation(const fb_clip* c, int i) {
    const fb_quat q0 = fb_clip_frame_rotation(c, i, 0);
    fb_quat sum = {0.0, 0.0, 0.0, 0.0};
    for (int f = 0; f < c->nframe; f++) {
        const fb_quat q = fb_clip_frame_rotation(c, i, f);
        const double s = (q.w * q0.w + q.x * q0.x + q.y * q0.y + q.z * q0.z) < 0.0 ? -1.0 : 1.0;
        sum = (fb_quat){sum.w + s * q.w, sum.x + s * q.x, sum.y + s * q.y, sum.z + s * q.z};
    }
    return fb_quat_norm(sum) > 0.0 ? fb_quat_normalize(sum) : q0;
}

/* The hinge of joint i: through the identity (the CMU clips' knees and elbows, ASF joints of
 * one degree of freedom), or, where that leaves more than HINGE_REST_TRY off the axis and the
 * other leaves at most HINGE_REST_GAIN of it, after the joint's mean rotation (zero angle at
 * the mean pose). */
static fb_hinge_info estimate_hinge(const fb_clip* c, int i, bool* moved) {
    fb_hinge_info h = fit_hinge(c, i, fb_quat_identity(), moved);
    if (*moved && h.max_off_axis > HINGE_REST_TRY) {
        bool moved_rest;
        const fb_hinge_info r = fit_hinge(c, i, mean_rotation(c, i), &moved_rest);
        if (moved_rest && r.max_off_axis <= HINGE_REST_GAIN * h.max_off_axis) {
            h = r;
        }
    }
    return h;
}

void fb_character_warn(fb_character* ch, const char* fmt, ...) {
    if (ch->nwarn < FB_CLIP_MAX_WARN) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ch->warn[ch->nwarn], FB_CLIP_WARN_LEN, fmt, ap);
        va_end(ap);
    }
    ch->nwarn++;
}

void fb_character_destroy(fb_character* ch) {
    if (!ch) {
        return;
    }
    const fb_allocator a = ch->alloc;
    fb_model_destroy(ch->model);
    fb_free(&a, ch->body_of_joint);
    fb_free(&a, ch->role);
    fb_free(&a, ch->joint_of_body);
    fb_free(&a, ch->hinge);
    fb_free(&a, ch->bone);
    fb_free(&a, ch->range);
    fb_free(&a, ch);
}

/* Per clip joint: its joint type, axis, shape and mass properties before any mass scaling, and
 * the bone from its parent (file units: OFFSET, or what its position channels carry). */
typedef struct joint_plan {
    fb_joint_type type;
    fb_v3 axis;
    fb_shape shape; /* body index filled when added */
    fb_rbi inertia;
    int segment; /* de Leva segment index */
    fb_v3 bone;  /* file units, parent axes */
} joint_plan;

/* The shape of clip joint i: a capsule (or box, or sphere when it has no length) from the joint
 * to `end` (body coordinates, m), and its inertia at density rho. A capsule whose segment ends
 * at a narrower joint (the shape starting there has radius `end_radius` < radius; 0 = none)
 * stops one radius short of it: its rounded end reaches the joint's centre and the narrower
 * shape covers the joint. A capsule cannot taper; a thigh as thick at the knee as at the hip
 * stuck 2.5 cm further out of the knee than the shank, and more sideways (a kneel put it
 * 2.7 cm into the ground). The mass and inertia stay those of the whole segment, joint to
 * joint. */
static void plan_shape(const fb_rule_part* part, double radius, double end_radius, fb_v3 end,
                       fb_v3 up, double rho, joint_plan* p) {
    const double L = fb_v3_norm(end);
    fb_shape* s = &p->shape;
    memset(s, 0, sizeof *s);
    s->radius = radius;
    s->R = fb_m3_identity();
    if (L < FB_CLIP_MIN_LENGTH) {
        s->type = FB_SHAPE_SPHERE;
        p->inertia = fb_rbi_sphere(rho, radius, fb_v3_zero());
    } else if (part && part->box) {
        /* a box along the segment, reaching one radius behind the joint (the heel), two radii
         * wide and high; its axes: along, sideways (up x along), and along x sideways */
        const fb_v3 u = fb_v3_scale(end, 1.0 / L);
        fb_v3 side = fb_v3_cross(up, u);
        if (fb_v3_norm(side) < 1e-6) {
            side = fb_v3_cross(fb_v3_make(0.0, 0.0, 1.0), u);
        }
        side = fb_v3_scale(side, 1.0 / fb_v3_norm(side));
        const fb_v3 third = fb_v3_cross(u, side);
        s->type = FB_SHAPE_BOX;
        s->size = fb_v3_make(L + radius, 2.0 * radius, 2.0 * radius);
        s->p0 = fb_v3_sub(fb_v3_scale(end, 0.5), fb_v3_scale(u, 0.5 * radius));
        s->R = (fb_m3){{{u.x, side.x, third.x}, {u.y, side.y, third.y}, {u.z, side.z, third.z}}};
        const double mass = rho * s->size.x * s->size.y * s->size.z;
        const fb_rbi axis_aligned = fb_rbi_box(rho, s->size, fb_v3_zero());
        /* Ibar of the centred box is its Ic; rotate it into body axes */
        p->inertia = fb_rbi_from_mass_com(mass, s->p0, fb_m3_congr(s->R, axis_aligned.Ibar));
    } else {
        s->type = FB_SHAPE_CAPSULE;
        const double taper = end_radius > 0.0 && end_radius < radius ? radius : 0.0;
        /* a segment shorter than its taper keeps its end: it stays a short capsule */
        s->p1 = taper < L ? fb_v3_scale(end, (L - taper) / L) : end;
        p->inertia = fb_rbi_capsule(rho, radius, fb_v3_zero(), end);
    }
}

/* Mass factor per joint: 1 (density), M / total (density with a target), or de Leva. */
static fb_status mass_factors(const fb_clip* c, const fb_build_opts* o, const joint_plan* plan,
                              double* factor, fb_character* ch, fb_error* err) {
    double total = 0.0;
    for (int i = 0; i < c->njoint; i++) {
        total += plan[i].inertia.m;
        factor[i] = 1.0;
    }
    if (o->mass_model == FB_MASS_DENSITY) {
        for (int i = 0; o->mass > 0.0 && i < c->njoint; i++) {
            factor[i] = o->mass / total;
        }
        return FB_OK;
    }
    if (!(o->mass > 0.0)) {
        return fb_fail(err, FB_EINVAL,
                       "%s: the anthropometric mass model needs a body mass (--mass KG)",
                       c->source);
    }
    /* each segment's share of the body mass, split over its bodies by shape mass; segments
     * the skeleton lacks give their share to the others in proportion */
    double seg_mass[NSEGMENT] = {0}, present = 0.0;
    for (int i = 0; i < c->njoint; i++) {
        seg_mass[plan[i].segment] += plan[i].inertia.m;
    }
    for (int k = 0; k < NSEGMENT; k++) {
        if (seg_mass[k] > 0.0) {
            present += DE_LEVA[k].percent * DE_LEVA[k].sides;
        } else {
            fb_character_warn(ch,
                              "no joint maps to the de Leva segment '%s'; its %.2f%% is shared out",
                              DE_LEVA[k].name, DE_LEVA[k].percent * DE_LEVA[k].sides);
        }
    }
    for (int i = 0; i < c->njoint; i++) {
        const int k = plan[i].segment;
        const double share = DE_LEVA[k].percent * DE_LEVA[k].sides / present;
        factor[i] = o->mass * share / seg_mass[k];
    }
    return FB_OK;
}

static fb_rbi rbi_scaled(fb_rbi I, double s) {
    return (fb_rbi){I.m * s, fb_v3_scale(I.h, s), fb_m3_scale(I.Ibar, s)};
}

/* The bone of non-root joint i, which has position channels (file units): OFFSET where the
 * channels agree with it at every frame (FB_BONE_AGREE), else their mean over the clip; and, in
 * *b, how much the channels stretch it. */
static fb_v3 channel_bone(const fb_clip* c, int i, fb_bone_info* b) {
    const fb_v3 off = c->joint[i].offset;
    fb_v3 sum = fb_v3_zero();
    double from_offset = 0.0, lo = INFINITY, hi = 0.0;
    for (int f = 0; f < c->nframe; f++) {
        const fb_v3 e = fb_clip_frame_offset(c, i, f);
        sum = fb_v3_add(sum, e);
        from_offset = fmax(from_offset, fb_v3_norm(fb_v3_sub(e, off)));
        lo = fmin(lo, fb_v3_norm(e));
        hi = fmax(hi, fb_v3_norm(e));
    }
    b->from_channels = true;
    b->offset_agrees = from_offset * c->unit <= FB_BONE_AGREE;
    const fb_v3 v = b->offset_agrees ? off : fb_v3_scale(sum, 1.0 / c->nframe);
    const double L = fb_v3_norm(v);
    b->length = L * c->unit;
    b->min_len = lo * c->unit;
    b->max_len = hi * c->unit;
    b->max_dev = fmax(hi - L, L - lo) * c->unit;
    return v;
}

/* The bone each joint hangs from: OFFSET, or for joints whose position channels the character
 * carries (non-root, unless free positions), channel_bone, warning when it stretches. */
static void plan_bones(const fb_clip* c, const fb_build_opts* o, fb_character* ch,
                       joint_plan* plan) {
    int floating = 0;
    for (int i = 0; i < c->njoint; i++) {
        plan[i].bone = c->joint[i].offset;
        if (i <= ch->root || !fb_clip_has_pos(&c->joint[i])) {
            continue;
        }
        if (o->free_positions) {
            floating++;
            continue;
        }
        fb_bone_info* b = &ch->bone[i];
        plan[i].bone = channel_bone(c, i, b);
        if (b->max_dev > FB_BONE_STRETCH_WARN) {
            fb_character_warn(ch,
                      "bone '%s' is %.1f to %.1f cm long over the clip (%.1f%%), up to %.1f cm "
                      "off the %.1f cm built: a rigid bone cannot follow",
                      c->joint[i].name, 100.0 * b->min_len, 100.0 * b->max_len,
                      b->min_len > 0.0 ? 100.0 * (b->max_len - b->min_len) / b->min_len : 0.0,
                      100.0 * b->max_dev, 100.0 * b->length);
        }
    }
    ch->articulated = floating == 0;
    if (floating > 0) {
        fb_character_warn(ch,
                  "position channels taken as free translations: %d non-root joints float, so "
                  "the character is not articulated",
                  floating);
    }
}

/* Joint i's type (and axis): floating for the root with position channels (and, with free
 * positions, every joint with them); else by its rotation channels and the rules. */
static void plan_type(const fb_clip* c, const fb_rules* r, const fb_build_opts* o, int i,
                      fb_character* ch, joint_plan* p) {
    const fb_clip_joint* j = &c->joint[i];
    int axes[6];
    const int naxes = fb_clip_rot_axes(j, axes);
    p->axis = fb_v3_make(1.0, 0.0, 0.0);
    ch->role[i] = FB_ROLE_BODY;
    if (i < ch->root) {
        p->type = FB_JOINT_FIXED;
        ch->role[i] = FB_ROLE_FOLDED;
    } else if (fb_clip_has_pos(j) && (i == ch->root || o->free_positions)) {
        p->type = FB_JOINT_FLOATING;
    } else if (i != ch->root &&
               in_list((const char(*)[FB_PATTERN_MAX])r->drop, r->ndrop, j->name)) {
        p->type = FB_JOINT_FIXED;
        ch->role[i] = FB_ROLE_DROPPED;
    } else if (naxes == 0) {
        p->type = FB_JOINT_FIXED;
    } else if (naxes == 1) {
        p->type = FB_JOINT_REVOLUTE;
        p->axis = fb_v3_make(axes[0] == 0, axes[0] == 1, axes[0] == 2);
    } else if (naxes == 3 && in_list((const char(*)[FB_PATTERN_MAX])r->hinge, r->nhinge, j->name)) {
        bool moved;
        ch->hinge[i] = estimate_hinge(c, i, &moved);
        p->type = FB_JOINT_REVOLUTE;
        p->axis = ch->hinge[i].axis;
        if (!moved) {
            fb_character_warn(ch, "hinge '%s' barely moves in the clip; using its x axis", j->name);
        }
    } else {
        p->type = FB_JOINT_SPHERICAL;
    }
}

/* The world's up in joint i's axes for laying its box flat: in the rest pose where that stands
 * (the joints' axes are the file's), else in the first pose that stands (files whose rest pose
 * lays the bones out along local X have joint axes turned by a joint orient). W: scratch
 * (njoint), the joints' orientations at that frame, filled as i increases. */
static fb_v3 joint_up(const fb_clip* c, int i, fb_quat* W) {
    const fb_v3 up = fb_m3_tr_mv(fb_clip_up_rotation(c), fb_v3_make(0.0, 1.0, 0.0));
    if (c->height_from == FB_HEIGHT_REST || c->stand_frame < 0) {
        return up;
    }
    const int p = c->joint[i].parent;
    W[i] = fb_quat_mul(p < 0 ? fb_quat_identity() : W[p],
                       fb_clip_frame_rotation(c, i, c->stand_frame));
    return fb_quat_rotate(fb_quat_conj(W[i]), up);
}

/* Decides every joint's type and shape. W: scratch (njoint). */
static void plan_joints(const fb_clip* c, const fb_rules* r, const fb_build_opts* o,
                        fb_character* ch, joint_plan* plan, fb_v3* end, fb_quat* W) {
    int* count = (int*)ch->joint_of_body; /* scratch, overwritten when the bodies are added */
    plan_bones(c, o, ch, plan);
    for (int i = 0; i < c->njoint; i++) {
        end[i] = fb_v3_zero();
        count[i] = 0;
    }
    for (int i = 1; i < c->njoint; i++) {
        const int p = c->joint[i].parent;
        end[p] = fb_v3_add(end[p], fb_v3_scale(plan[i].bone, c->unit));
        count[p]++;
    }
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        if (j->has_end) {
            end[i] = fb_v3_add(end[i], fb_v3_scale(j->end_offset, c->unit));
            count[i]++;
        }
        if (count[i] > 1) {
            end[i] = fb_v3_scale(end[i], 1.0 / count[i]);
        }
    }
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        joint_plan* p = &plan[i];
        plan_type(c, r, o, i, ch, p);
        const fb_rule_part* part = part_for(r, j->name);
        p->segment = segment_index(part ? part->segment : "trunk");
        const fb_v3 up = joint_up(c, i, W);
        if (ch->role[i] == FB_ROLE_FOLDED) {
            memset(&p->shape, 0, sizeof p->shape);
            p->inertia = fb_rbi_zero();
            continue;
        }
        /* the joint the segment ends at, when it ends at exactly one (no End Site) */
        double end_radius = 0.0;
        for (int k = i + 1; count[i] == 1 && !j->has_end && k < c->njoint; k++) {
            if (c->joint[k].parent == i) {
                const fb_rule_part* cp = part_for(r, c->joint[k].name);
                end_radius = cp ? cp->radius : r->default_radius;
            }
        }
        plan_shape(part, part ? part->radius : r->default_radius, end_radius, end[i], up,
                   r->density, p);
    }
}

/* The character root's joint frame (world -> joint): the folded joints' constant poses (at the
 * first frame), then its OFFSET unless its position channels replace it (absolute mode), turned
 * by its hinge's rest rotation if it is one. The joint frames have the file's axes: world ->
 * file is C^T. */
static fb_xf root_tree(const fb_clip* c, const fb_character* ch, const joint_plan* p, int root) {
    const fb_m3 C = fb_clip_up_rotation(c);
    fb_m3 R = fb_m3_identity();
    fb_v3 pos = fb_v3_zero();
    for (int k = 0; k < root; k++) {
        pos = fb_v3_add(pos, fb_m3_mv(R, fb_clip_frame_offset(c, k, 0)));
        R = fb_m3_mul(R, fb_quat_to_m3(fb_clip_frame_rotation(c, k, 0)));
    }
    const bool replaced = root > 0 && c->pos_mode == FB_POS_ABSOLUTE &&
                          fb_clip_has_pos(&c->joint[root]);
    if (!replaced) {
        pos = fb_v3_add(pos, fb_m3_mv(R, c->joint[root].offset));
    }
    if (p->type == FB_JOINT_REVOLUTE) {
        R = fb_m3_mul(R, fb_quat_to_m3(ch->hinge[root].rest));
    }
    const fb_m3 axes = fb_m3_mul(C, R);
    return (fb_xf){fb_m3_transpose(axes), fb_m3_mv(C, fb_v3_scale(pos, c->unit))};
}

/* Joint i's X_tree below its parent's body: its bone (none for a floating joint whose absolute
 * position channels hold it), turned by its hinge's rest rotation. */
static fb_xf joint_tree(const fb_clip* c, const fb_character* ch, const joint_plan* p, int i) {
    const bool absolute = p->type == FB_JOINT_FLOATING && c->pos_mode == FB_POS_ABSOLUTE;
    const fb_v3 r = absolute ? fb_v3_zero() : fb_v3_scale(p->bone, c->unit);
    if (p->type != FB_JOINT_REVOLUTE) {
        return fb_xf_xlt(r);
    }
    /* E maps parent to joint coordinates: the joint's axes are the rest rotation's */
    return (fb_xf){fb_m3_transpose(fb_quat_to_m3(ch->hinge[i].rest)), r};
}

/* Adds the bodies: joint i's body, then (if any) its End Site's massless body. */
static fb_status add_bodies(const fb_clip* c, fb_character* ch, const joint_plan* plan,
                            const double* factor, fb_error* err) {
    fb_model* m = ch->model;
    for (int i = 0; i < c->njoint; i++) {
        const fb_clip_joint* j = &c->joint[i];
        if (ch->role[i] == FB_ROLE_FOLDED) {
            ch->body_of_joint[i] = 0;
            continue;
        }
        fb_body_def def = fb_default_body_def();
        def.name = j->name;
        def.parent = (i == ch->root) ? 0 : ch->body_of_joint[j->parent];
        def.joint = plan[i].type;
        def.axis = plan[i].axis;
        def.X_tree = (i == ch->root) ? root_tree(c, ch, &plan[i], i)
                                     : joint_tree(c, ch, &plan[i], i);
        def.inertia = rbi_scaled(plan[i].inertia, factor[i]);
        int id;
        fb_status s = fb_model_add_body(m, &def, &id, err);
        if (s != FB_OK) {
            return s;
        }
        ch->body_of_joint[i] = id;
        ch->joint_of_body[id] = i;
        fb_shape sh = plan[i].shape;
        sh.body = id;
        if ((s = fb_model_add_shape(m, &sh, err)) != FB_OK) {
            return s;
        }
        if (j->has_end) {
            char name[FB_NAME_MAX];
            snprintf(name, sizeof name, "%.59s_End", j->name);
            for (int k = 2; fb_model_body_by_name(m, name) >= 0 && k < 1000; k++) {
                snprintf(name, sizeof name, "%.50s_End%d", j->name, k % 1000);
            }
            fb_body_def e = fb_default_body_def();
            e.name = name;
            e.parent = id;
            e.X_tree = fb_xf_xlt(fb_v3_scale(j->end_offset, c->unit));
            if ((s = fb_model_add_body(m, &e, &id, err)) != FB_OK) {
                return s;
            }
            ch->joint_of_body[id] = -1;
        }
    }
    return FB_OK;
}

static void warn_mass_ratios(const fb_clip* c, fb_character* ch) {
    const fb_model* m = ch->model;
    for (int i = ch->root + 1; i < c->njoint; i++) {
        const int b = ch->body_of_joint[i], p = m->parent[b];
        const double mb = m->I[b].m, mp = m->I[p].m;
        if (p > 0 && mb > 0.0 && mp > 0.0 &&
            (mb > MASS_RATIO_WARN * mp || mp > MASS_RATIO_WARN * mb)) {
            fb_character_warn(ch, "'%s' (%.3g kg) and its parent '%s' (%.3g kg) differ by more "
                              "than %gx",
                              m->name[b], mb, m->name[p], mp, MASS_RATIO_WARN);
        }
    }
}

fb_character* fb_character_build(const fb_clip* c, const fb_build_opts* opts, fb_error* err) {
    const fb_build_opts o = opts ? *opts : fb_default_build_opts();
    const fb_rules r = o.rules ? *o.rules : fb_rules_lossless();
    const fb_allocator a = c->alloc;
    if (!(o.mass >= 0.0) || !isfinite(o.mass)) {
        fb_fail(err, FB_EINVAL, "mass: expected a finite value >= 0, found %g", o.mass);
        return NULL;
    }
    int nend = 0;
    for (int i = 0; i < c->njoint; i++) {
        nend += c->joint[i].has_end;
    }
    /* folded joints have no body (and no End Site) */
    const int root = o.free_positions ? 0 : fb_clip_skeleton_root(c);
    const size_t nj = (size_t)c->njoint, nb = nj - (size_t)root + (size_t)nend + 1;
    fb_character* ch = fb_alloc(&a, sizeof *ch);
    joint_plan* plan = fb_alloc(&a, nj * sizeof *plan);
    double* factor = fb_alloc(&a, nj * sizeof(double));
    fb_v3* end = fb_alloc(&a, nj * sizeof(fb_v3));
    fb_quat* W = fb_alloc(&a, nj * sizeof(fb_quat));
    if (ch) {
        memset(ch, 0, sizeof *ch);
        ch->alloc = a;
        ch->njoint = c->njoint;
        ch->root = root;
        ch->body_of_joint = fb_alloc(&a, nj * sizeof(int));
        ch->role = fb_alloc(&a, nj * sizeof(fb_joint_role));
        ch->joint_of_body = fb_alloc(&a, (nb > nj ? nb : nj) * sizeof(int));
        ch->hinge = fb_alloc(&a, nj * sizeof(fb_hinge_info));
        ch->bone = fb_alloc(&a, nj * sizeof(fb_bone_info));
        ch->range = fb_alloc(&a, nj * sizeof(fb_joint_range));
    }
    fb_status s = FB_OK;
    if (!ch || !plan || !factor || !end || !W || !ch->body_of_joint || !ch->role ||
        !ch->joint_of_body || !ch->hinge || !ch->bone || !ch->range) {
        s = fb_fail(err, FB_ENOMEM, "%s: out of memory building the character", c->source);
    }
    if (s == FB_OK) {
        memset(ch->bone, 0, nj * sizeof(fb_bone_info));
        for (size_t i = 0; i < nj; i++) {
            ch->hinge[i] = (fb_hinge_info){{1.0, 0.0, 0.0}, 0.0, fb_quat_identity()};
        }
        plan_joints(c, &r, &o, ch, plan, end, W);
        s = mass_factors(c, &o, plan, factor, ch, err);
    }
    if (s == FB_OK) {
        for (size_t b = 0; b < nb; b++) {
            ch->joint_of_body[b] = -1;
        }
        ch->model = fb_model_create((int)nb - 1, &a, err);
        s = ch->model ? add_bodies(c, ch, plan, factor, err) : FB_ENOMEM;
    }
    if (s == FB_OK) {
        s = fb_ranges_apply(c, &r, ch, end, err);
    }
    ch->rolling_resistance = r.rolling_resistance;
    for (int b = 1; s == FB_OK && b < ch->model->nbody; b++) {
        if (ch->model->jtype[b] != FB_JOINT_FLOATING && ch->model->jtype[b] != FB_JOINT_FIXED) {
            s = fb_model_set_damping(ch->model, b, r.joint_damping, err);
            if (s == FB_OK) {
                s = fb_model_set_friction(ch->model, b, r.joint_friction, err);
            }
        }
    }
    if (s == FB_OK) {
        s = fb_model_finalize(ch->model, err);
    }
    if (s == FB_OK) {
        s = fb_sole_fit(c, ch, &o, err); /* feet: boxes fitted to the clip's soles (sole.c) */
    }
    fb_free(&a, plan);
    fb_free(&a, factor);
    fb_free(&a, end);
    fb_free(&a, W);
    if (s != FB_OK) {
        fb_character_destroy(ch);
        return NULL;
    }
    ch->height = c->height_file * c->unit;
    warn_mass_ratios(c, ch);
    return ch;
}

/* The mirror of a joint name: LeftX -> RightX, LX -> RX, lX -> rX; false when it has none. */
static bool mirror_name(const char* n, char* out, size_t cap) {
    if (strncmp(n, "Left", 4) == 0) {
        snprintf(out, cap, "Right%s", n + 4);
    } else if (n[0] == 'L' || n[0] == 'l') {
        snprintf(out, cap, "%c%s", n[0] == 'L' ? 'R' : 'r', n + 1);
    } else {
        return false;
    }
    return true;
}

fb_v3 fb_character_forward(const fb_clip* c, const fb_character* ch) {
    const fb_m3 C = fb_clip_up_rotation(c);
    /* the pose that stands (-1: the rest pose, every rotation the identity), and the root
     * body's orientation there (body -> world; its axes are the clip joint's) */
    const int f = (c->height_from == FB_HEIGHT_REST || c->stand_frame < 0) ? -1 : c->stand_frame;
    fb_m3 R = C;
    for (int k = 0; k <= ch->root && f >= 0; k++) {
        R = fb_m3_mul(R, fb_quat_to_m3(fb_clip_frame_rotation(c, k, f)));
    }
    fb_v3 fwd = fb_v3_make(0.0, 0.0, 1.0);
    fb_v3* p = fb_alloc(&c->alloc, (size_t)c->njoint * sizeof *p);
    if (p && fb_clip_frame_positions(c, f, p)) {
        fb_v3 left = fb_v3_zero();
        for (int i = 0; i < c->njoint; i++) {
            char mirror[FB_NAME_MAX + 8];
            const int j = mirror_name(c->joint[i].name, mirror, sizeof mirror)
                              ? fb_clip_joint_by_name(c, mirror)
                              : -1;
            if (j >= 0) {
                left = fb_v3_add(left, fb_m3_mv(C, fb_v3_sub(p[i], p[j])));
            }
        }
        left.y = 0.0;
        const double n = fb_v3_norm(left);
        if (n * c->unit > 1e-6) { /* m */
            fwd = fb_v3_scale(fb_v3_cross(left, fb_v3_make(0.0, 1.0, 0.0)), 1.0 / n);
        }
    }
    fb_free(&c->alloc, p);
    return fb_m3_tr_mv(R, fwd);
}
