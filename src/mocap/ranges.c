/* Joint ranges of the character (docs/MOCAP.md, "Joint ranges"): the rules' anatomical ranges
 * (a published table of human ranges of motion) placed on the clip's skeleton.
 *
 * Directions come from the rest pose (which must stand), in the joint frames (BVH rest
 * rotations are identity, so at rest every joint frame has the root's axes, but for a hinge's
 * rest rotation or a folded root, taken from the model's X_tree): up (the clip's up axis),
 * forward (fb_character_forward) and, per joint, lateral (away from the midline, on the joint's
 * side).
 * A ball joint's range is an elliptic swing of its bone from a neutral direction plus a twist
 * about the bone (fb_joint_limit, model.h): the neutral is "hanging down" for the joints that
 * carry a limb from the trunk (hip, shoulder; so a T-pose rig's shoulder is measured from
 * arms-down and 131_01's splayed rest legs from straight down) and the rest pose elsewhere (the
 * trunk, neck, wrist, ankle and the clavicle of a shoulder chain stand in their neutral there).
 * Knees and elbows are hinges whose extension stop is where the child bone is most nearly in
 * line with the parent's, flexion to the side the clip bends to; toes hinge from their rest.
 * Where the clip goes past a range (capture noise) the range is widened just enough to hold
 * it, and ch->range says which bound, by how much and at which frame. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/detmath.h"
#include "math/quat.h"
#include "mocap/build.h"
#include "mocap/clip.h"
#include "model/limit.h"
#include "util/error.h"
#include "util/sort.h"

/* A joint nearer the midline than this (m, along the body's left) counts as on it. */
#define RANGE_MIDLINE 0.01
/* A hinge whose median angle over the clip lies this far (rad, 2 deg) from straight tells
 * which way it flexes; closer, the anatomical direction decides. */
#define RANGE_BENT_MIN (2.0 * FB_PI / 180.0)
/* A direction within asin(0.1) ~ 6 deg of a joint's neutral gives it no swing axis. */
#define RANGE_AXIS_MIN 0.1
/* A widening below this (rad, 0.01 deg) is not noted: a straight knee's rounding, not a clip
 * going past its range (the bound still holds the frame). */
#define RANGE_NOTE_MIN (0.01 * FB_PI / 180.0)
/* Relative slack added to a bound widened to hold the clip, so that the frame that set it
 * lies inside after rounding. */
#define RANGE_WIDEN_SLACK 1e-9

/* Where a ball joint's swing is measured from. */
typedef enum neutral_kind { NEUTRAL_REST = 0, NEUTRAL_DOWN = 1 } neutral_kind;

/* Anatomical directions, resolved per joint in its frame (joint_dirs). */
typedef enum dir_kind {
    DIR_FORWARD,
    DIR_BACKWARD,
    DIR_UP,
    DIR_DOWN,
    DIR_LATERAL,
    DIR_LATERAL_UP, /* lateral and up: the way an arm's bones move in abduction, be the bone a
                       hanging humerus (lateral) or a clavicle (up) */
    DIR_PALM,
    DIR_THUMB
} dir_kind;

/* Each kind's geometry: the neutral, and the directions the bone's end moves toward in
 * flexion (slot 0) and abduction (slot 2). Hinges use `flex` only: the way the child's end
 * moves as the joint flexes (the anatomical default; knees and elbows follow the clip). */
static const struct {
    neutral_kind neutral;
    dir_kind flex, abd;
} GEOM[FB_RANGE_NKIND] = {
    [FB_RANGE_HIP] = {NEUTRAL_DOWN, DIR_FORWARD, DIR_LATERAL},
    [FB_RANGE_KNEE] = {NEUTRAL_REST, DIR_BACKWARD, DIR_LATERAL},
    [FB_RANGE_ANKLE] = {NEUTRAL_REST, DIR_UP, DIR_LATERAL},
    [FB_RANGE_TOE] = {NEUTRAL_REST, DIR_DOWN, DIR_LATERAL},
    [FB_RANGE_PELVIS] = {NEUTRAL_REST, DIR_FORWARD, DIR_LATERAL_UP},
    [FB_RANGE_SPINE] = {NEUTRAL_REST, DIR_FORWARD, DIR_LATERAL},
    [FB_RANGE_NECK] = {NEUTRAL_REST, DIR_FORWARD, DIR_LATERAL},
    [FB_RANGE_SHOULDER] = {NEUTRAL_DOWN, DIR_FORWARD, DIR_LATERAL_UP},
    [FB_RANGE_ELBOW] = {NEUTRAL_REST, DIR_FORWARD, DIR_LATERAL},
    [FB_RANGE_WRIST] = {NEUTRAL_REST, DIR_PALM, DIR_THUMB},
};

/* What the pass over the joints needs about the rest pose: the character's up, forward and
 * left in its root body's coordinates, and per body the rotation from those into its joint
 * frame at rest (identity for plain BVH joints; a hinge's rest rotation and a folded root's
 * pose otherwise) and its joint's position. */
typedef struct rest_pose {
    const fb_model* m;
    const fb_character* ch;
    fb_v3 up, forward, left; /* root body coordinates */
    fb_m3* R;                /* (nbody) root body -> body b's joint frame, at rest */
    fb_v3* pos;              /* (nbody) body b's joint, root body coordinates (m) */
} rest_pose;

static fb_v3 unit_or_zero(fb_v3 v) {
    const double n = fb_v3_norm(v);
    return n > FB_CLIP_MIN_LENGTH ? fb_v3_scale(v, 1.0 / n) : fb_v3_zero();
}

/* A root-body direction in clip joint i's joint frame. */
static fb_v3 in_joint(const rest_pose* rp, int i, fb_v3 v) {
    return fb_m3_mv(rp->R[rp->ch->body_of_joint[i]], v);
}

/* The rotations and positions of rest_pose from the model's X_tree (bodies after their
 * parents; the root body is the reference). */
static void rest_frames(rest_pose* rp) {
    const fb_model* m = rp->m;
    rp->R[0] = rp->R[1] = fb_m3_identity();
    rp->pos[0] = rp->pos[1] = fb_v3_zero();
    for (int b = 2; b < m->nbody; b++) {
        const int p = m->parent[b];
        rp->R[b] = fb_m3_mul(m->X_tree[b].E, rp->R[p]);
        rp->pos[b] = fb_v3_add(rp->pos[p], fb_m3_tr_mv(rp->R[p], m->X_tree[b].r));
    }
}

/* The direction of the segment leading to clip joint i (from its parent's joint), or to the
 * nearest ancestor's with one, in i's joint frame; `fallback` when none has length. */
static fb_v3 incoming_dir(const rest_pose* rp, int i, fb_v3 fallback) {
    const fb_model* m = rp->m;
    const int b = rp->ch->body_of_joint[i];
    fb_m3 M = fb_m3_identity(); /* body bb's joint frame -> b's */
    for (int bb = b; bb > 1; bb = m->parent[bb]) {
        const fb_xf X = m->X_tree[bb];
        const fb_v3 d = unit_or_zero(fb_m3_mv(X.E, X.r));
        if (fb_v3_norm(d) > 0.0) {
            return fb_m3_mv(M, d);
        }
        M = fb_m3_mul(M, X.E);
    }
    return fallback;
}

/* Joint i's bone (its segment, from the joint to its end), or, for a segment of no length
 * (CMU's Chest2 and LeftWrist), the segment leading to it. */
static fb_v3 bone_dir(const rest_pose* rp, const fb_v3* end, int i, fb_v3 fallback) {
    const fb_v3 d = unit_or_zero(end[i]);
    return fb_v3_norm(d) > 0.0 ? d : incoming_dir(rp, i, fallback);
}

/* -1 right of the midline, +1 left of it or on it. */
static int side_of(const rest_pose* rp, int i) {
    const double x = fb_v3_dot(rp->pos[rp->ch->body_of_joint[i]], rp->left);
    return x < -RANGE_MIDLINE ? -1 : 1;
}

/* Anatomical direction d for joint i (joint frame). The palm faces medially and down (palms
 * down in a T-pose, toward the thigh with the arm hanging: the mid-prone forearm), made
 * perpendicular to the forearm; the thumb points along palm x forearm on the left, mirrored on
 * the right (forward with the arm hanging). */
static fb_v3 joint_dir(const rest_pose* rp, int i, dir_kind d) {
    const fb_v3 up = in_joint(rp, i, rp->up);
    const fb_v3 lateral = in_joint(rp, i, fb_v3_scale(rp->left, side_of(rp, i)));
    switch (d) {
    case DIR_FORWARD:
        return in_joint(rp, i, rp->forward);
    case DIR_BACKWARD:
        return in_joint(rp, i, fb_v3_neg(rp->forward));
    case DIR_UP:
        return up;
    case DIR_DOWN:
        return fb_v3_neg(up);
    case DIR_LATERAL:
        return lateral;
    case DIR_LATERAL_UP:
        return unit_or_zero(fb_v3_add(lateral, up));
    case DIR_PALM:
    case DIR_THUMB:
        break;
    }
    const fb_v3 fore = incoming_dir(rp, i, fb_v3_neg(up));
    const fb_v3 md = fb_v3_sub(fb_v3_neg(lateral), up);
    fb_v3 palm = unit_or_zero(fb_v3_sub(md, fb_v3_scale(fore, fb_v3_dot(md, fore))));
    if (!(fb_v3_norm(palm) > 0.0)) {
        palm = fb_v3_neg(lateral);
    }
    return d == DIR_PALM ? palm : fb_v3_scale(fb_v3_cross(palm, fore), side_of(rp, i));
}

/* ---- which joints, and their share --------------------------------------------------------- */

/* entry[i]: the rules' range for clip joint i (-1 = none); pos/len: its place in the chain of
 * joints sharing that range and the chain's length. */
static void assign(const fb_clip* c, const fb_rules* r, fb_character* ch, int* entry, int* pos,
                   int* len) {
    const fb_model* m = ch->model;
    for (int i = 0; i < c->njoint; i++) {
        const int b = ch->body_of_joint[i];
        const fb_joint_type t = m->jtype[b];
        entry[i] = -1;
        if (ch->role[i] != FB_ROLE_BODY || (t != FB_JOINT_SPHERICAL && t != FB_JOINT_REVOLUTE)) {
            continue;
        }
        for (int e = 0; e < r->nrange && entry[i] < 0; e++) {
            for (int k = 0; k < r->range[e].nmatch && entry[i] < 0; k++) {
                entry[i] = fb_rule_matches(c->joint[i].name, r->range[e].match[k]) ? e : -1;
            }
        }
        const int e = entry[i];
        if (e >= 0 && fb_range_kind_is_hinge(r->range[e].kind) != (t == FB_JOINT_REVOLUTE)) {
            fb_character_warn(ch, "'%s' is a %s joint and the %s range is for %s: no range",
                              c->joint[i].name, t == FB_JOINT_REVOLUTE ? "hinge" : "ball",
                              fb_range_kind_name(r->range[e].kind),
                              t == FB_JOINT_REVOLUTE ? "ball joints" : "hinges");
            entry[i] = -1;
        }
    }
    /* chains: a joint whose parent has the same range continues the parent's chain */
    for (int i = 0; i < c->njoint; i++) {
        const int p = c->joint[i].parent;
        pos[i] = (p >= 0 && entry[i] >= 0 && entry[p] == entry[i]) ? pos[p] + 1 : 0;
        len[i] = 0; /* joints below in the chain, for now */
    }
    for (int i = c->njoint - 1; i > 0; i--) {
        const int p = c->joint[i].parent;
        if (entry[i] >= 0 && entry[p] == entry[i]) {
            len[p] = len[p] > len[i] + 1 ? len[p] : len[i] + 1;
        }
    }
    for (int i = 0; i < c->njoint; i++) {
        len[i] = pos[i] == 0 ? len[i] + 1 : len[c->joint[i].parent];
    }
}

/* A chain member's share: the rules' fraction for its place when they give one per joint of
 * the chain, an equal share otherwise. */
static double share_of(const double* w, int n, int pos, int len) {
    return n == len ? w[pos] : 1.0 / len;
}

/* ---- ball joints ------------------------------------------------------------------------- */

/* Widens the quadrant of the swing range that s lies in just enough to hold s, in the way
 * that grows the quadrant's area least: one radius alone (when the other component is inside
 * its own) or both in proportion; records the frame in the slots widened. slot1/slot2: the
 * slots of the quadrant's radii. */
static void widen_swing(fb_joint_limit* L, const double s[2], int f, const int slot[2],
                        fb_joint_range* jr) {
    double* r1 = s[0] >= 0.0 ? &L->swing_hi[0] : &L->swing_lo[0];
    double* r2 = s[1] >= 0.0 ? &L->swing_hi[1] : &L->swing_lo[1];
    const double R1 = fabs(*r1), R2 = fabs(*r2);
    const double x = fabs(s[0]) / R1, y = fabs(s[1]) / R2, g2 = x * x + y * y;
    /* both radii scaled by g: the area grows by g^2 */
    double n1 = R1 * sqrt(g2), n2 = R2 * sqrt(g2), best = g2;
    if (y < 1.0 && fabs(s[0]) / sqrt(1.0 - y * y) / R1 < best) {
        best = fabs(s[0]) / sqrt(1.0 - y * y) / R1;
        n1 = R1 * best;
        n2 = R2;
    }
    if (x < 1.0 && fabs(s[1]) / sqrt(1.0 - x * x) / R2 < best) {
        best = fabs(s[1]) / sqrt(1.0 - x * x) / R2;
        n1 = R1;
        n2 = R2 * best;
    }
    const double n[2] = {n1, n2}, old[2] = {R1, R2};
    double* rr[2] = {r1, r2};
    for (int k = 0; k < 2; k++) {
        if (n[k] > old[k]) {
            double v = n[k] * (1.0 + RANGE_WIDEN_SLACK);
            if (v > FB_RANGE_SWING_MAX) {
                v = FB_RANGE_SWING_MAX;
                jr->capped = true;
            }
            *rr[k] = *rr[k] < 0.0 ? -v : v;
            jr->frame[slot[k]] = f;
        }
    }
}

/* The elliptic limit of ball joint i from its share of the range, then widened over the clip's
 * frames; its bounds by slot into jr. */
static fb_joint_limit ball_range(const fb_clip* c, const fb_v3* end, const rest_pose* rp, int i,
                                 const fb_rule_range* g, bool last, fb_character* ch,
                                 fb_joint_range* jr) {
    const fb_range_kind k = g->kind;
    const int side = side_of(rp, i);
    fb_joint_limit L = {.on = true, .elliptic = true};
    const fb_v3 up = in_joint(rp, i, rp->up);
    L.twist_axis = bone_dir(rp, end, i, up);
    /* the neutral: hanging down for the limb a chain ends in, else the rest pose */
    L.neutral = GEOM[k].neutral == NEUTRAL_DOWN && last ? fb_v3_neg(up) : L.twist_axis;
    const fb_v3 f1 = joint_dir(rp, i, GEOM[k].flex), f2 = joint_dir(rp, i, GEOM[k].abd);
    const fb_v3 w1 = fb_v3_cross(L.neutral, f1), w2 = fb_v3_cross(L.neutral, f2);
    if (fb_v3_norm(w1) > RANGE_AXIS_MIN) {
        L.swing_axis = unit_or_zero(w1);
    } else {
        /* flexion along the bone: measure it about the axis square to abduction's */
        L.swing_axis = unit_or_zero(fb_v3_cross(w2, L.neutral));
        fb_character_warn(ch, "'%s': its %s direction lies along its bone; flexion is measured "
                          "square to abduction", c->joint[i].name, fb_range_kind_name(k));
    }
    if (!(fb_v3_norm(L.swing_axis) > 0.0)) {
        const fb_v3 any = fabs(L.neutral.x) < 0.9 ? fb_v3_make(1.0, 0.0, 0.0) : up;
        L.swing_axis = unit_or_zero(fb_v3_cross(L.neutral, any));
    }
    /* s2 > 0 toward abduction when u2 = d0 x u1 turns the bone toward f2 */
    const bool abd_pos = fb_v3_dot(fb_v3_cross(L.neutral, L.swing_axis), w2) >= 0.0;
    const double* b = jr->bound;
    L.swing_hi[0] = b[0];
    L.swing_lo[0] = -b[1];
    L.swing_hi[1] = abd_pos ? b[2] : b[3];
    L.swing_lo[1] = -(abd_pos ? b[3] : b[2]);
    /* the twist: positive turns the front medially on the left, laterally on the right */
    L.hi = side > 0 ? b[4] : b[5];
    L.lo = -(side > 0 ? b[5] : b[4]);

    const int s1_slot[2] = {0, 1}; /* s1 >= 0, < 0 */
    const int s2_slot[2] = {abd_pos ? 2 : 3, abd_pos ? 3 : 2};
    for (int f = 0; f < c->nframe; f++) {
        const fb_quat q = fb_clip_frame_rotation(c, i, f);
        double s[2];
        fb_limit_swing_coords(&L, q, s);
        if (fb_limit_ellipse(&L, s, NULL) > 1.0) {
            const int slot[2] = {s1_slot[s[0] < 0.0], s2_slot[s[1] < 0.0]};
            widen_swing(&L, s, f, slot, jr);
        }
        const double tw = fb_quat_twist(q, L.twist_axis);
        if (tw > L.hi) {
            L.hi = tw * (1.0 + RANGE_WIDEN_SLACK);
            jr->frame[side > 0 ? 4 : 5] = f;
        }
        if (tw < L.lo) {
            L.lo = tw * (1.0 + RANGE_WIDEN_SLACK);
            jr->frame[side > 0 ? 5 : 4] = f;
        }
    }
    L.hi = fmin(L.hi, FB_PI);
    L.lo = fmax(L.lo, -FB_PI);
    double* out = jr->bound;
    out[0] = L.swing_hi[0];
    out[1] = -L.swing_lo[0];
    out[abd_pos ? 2 : 3] = L.swing_hi[1];
    out[abd_pos ? 3 : 2] = -L.swing_lo[1];
    out[side > 0 ? 4 : 5] = L.hi;
    out[side > 0 ? 5 : 4] = -L.lo;
    return L;
}

/* ---- hinges ------------------------------------------------------------------------------ */

/* The hinge angle at which the child bone a (rotated about the unit axis h) lies most nearly
 * along the parent bone p: maximises (R(h, t) a) . p. */
static double straight_angle(fb_v3 h, fb_v3 a, fb_v3 p) {
    const fb_v3 ap = fb_v3_sub(a, fb_v3_scale(h, fb_v3_dot(a, h)));
    return fb_atan2(fb_v3_dot(fb_v3_cross(h, ap), p), fb_v3_dot(ap, p));
}

/* The limit of hinge i: knees and elbows from straight (extension) to the clip's side
 * (flexion), toes from their rest; then widened over the clip's frames (angles unwrapped frame
 * to frame as fb_motion_from_clip does). th: scratch (nframe). */
static fb_joint_limit hinge_range(const fb_clip* c, const fb_v3* end, const rest_pose* rp, int i,
                                  const fb_rule_range* g, fb_v3 h, double* th,
                                  fb_joint_range* jr) {
    const fb_range_kind k = g->kind;
    /* the angle after the hinge's rest rotation, as fb_motion_from_clip reads it */
    const fb_quat rest_inv = fb_quat_conj(rp->ch->hinge[i].rest);
    for (int f = 0; f < c->nframe; f++) {
        th[f] = fb_quat_twist(fb_quat_mul(rest_inv, fb_clip_frame_rotation(c, i, f)), h);
        if (f > 0) {
            th[f] += 2.0 * FB_PI * round((th[f - 1] - th[f]) / (2.0 * FB_PI));
        }
    }
    const fb_v3 a = bone_dir(rp, end, i, fb_v3_neg(in_joint(rp, i, rp->up)));
    double zero = 0.0;
    if (k != FB_RANGE_TOE) {
        zero = straight_angle(h, a, incoming_dir(rp, i, a));
    }
    /* flexion's sign: the anatomical way the child's end moves, unless the clip bends clearly
     * to one side (its median angle, taken in the zero's turn) */
    const fb_v3 a0 = fb_quat_rotate(fb_quat_from_axis_angle(h, zero), a);
    double sign =
        fb_v3_dot(fb_v3_cross(h, a0), joint_dir(rp, i, GEOM[k].flex)) >= 0.0 ? 1.0 : -1.0;
    if (c->nframe > 0) {
        double* sorted = th + c->nframe;
        memcpy(sorted, th, (size_t)c->nframe * sizeof(double));
        fb_sort_doubles(sorted, (size_t)c->nframe);
        const double median = sorted[c->nframe / 2];
        /* the zero in the clip's turn (angles are unwrapped from the first frame's) */
        zero += 2.0 * FB_PI * round((median - zero) / (2.0 * FB_PI));
        if (k != FB_RANGE_TOE && fabs(median - zero) > RANGE_BENT_MIN) {
            sign = median > zero ? 1.0 : -1.0;
        }
    }
    const double flex = jr->bound[0], ext = jr->bound[1];
    fb_joint_limit L = {.on = true};
    L.lo = sign > 0.0 ? zero - ext : zero - flex;
    L.hi = sign > 0.0 ? zero + flex : zero + ext;
    const int hi_slot = sign > 0.0 ? 0 : 1;
    for (int f = 0; f < c->nframe; f++) {
        if (th[f] > L.hi) {
            L.hi = th[f] + RANGE_WIDEN_SLACK * fabs(th[f]);
            jr->frame[hi_slot] = f;
        }
        if (th[f] < L.lo) {
            L.lo = th[f] - RANGE_WIDEN_SLACK * fabs(th[f]);
            jr->frame[1 - hi_slot] = f;
        }
    }
    jr->bound[hi_slot] = L.hi - zero;
    jr->bound[1 - hi_slot] = zero - L.lo;
    return L;
}

/* ---- the pass over the joints ---------------------------------------------------------- */

/* One line summing up the widening: how many joints, and the largest. */
static void note_widening(const fb_clip* c, fb_character* ch) {
    int njoint = 0, worst_i = -1, worst_k = 0;
    bool capped = false;
    for (int i = 0; i < c->njoint; i++) {
        const fb_joint_range* jr = &ch->range[i];
        bool any = false;
        for (int k = 0; jr->rule >= 0 && k < FB_RANGE_NBOUND; k++) {
            if (jr->widened[k] > 0.0) {
                any = true;
                if (worst_i < 0 || jr->widened[k] > ch->range[worst_i].widened[worst_k]) {
                    worst_i = i;
                    worst_k = k;
                }
            }
        }
        njoint += any;
        capped = capped || jr->capped;
    }
    if (worst_i >= 0) {
        const fb_joint_range* w = &ch->range[worst_i];
        fb_character_warn(ch,
                          "the clip goes past the rules' joint ranges: %d joint%s widened to hold "
                          "it, most %s %s by %.1f deg (frame %d)%s; see the ranges",
                          njoint, njoint == 1 ? "" : "s", c->joint[worst_i].name,
                          fb_range_bound_name(w->kind, worst_k),
                          w->widened[worst_k] * 180.0 / FB_PI,
                          w->frame[worst_k], capped ? "; some swings stopped at 175 deg" : "");
    }
}

fb_status fb_ranges_apply(const fb_clip* c, const fb_rules* r, fb_character* ch,
                          const fb_v3* end, fb_error* err) {
    fb_model* m = ch->model;
    const size_t nj = (size_t)c->njoint;
    for (int i = 0; i < c->njoint; i++) {
        ch->range[i] = (fb_joint_range){.rule = -1};
    }
    if (r->nrange == 0) {
        return FB_OK;
    }
    if (c->height_from != FB_HEIGHT_REST) {
        /* the ranges are measured from the rest pose's neutral directions */
        fb_character_warn(ch, "the rest pose does not stand: no joint ranges");
        return FB_OK;
    }
    const fb_allocator* a = &c->alloc;
    const size_t nb = (size_t)m->nbody;
    int* ints = fb_alloc(a, 3 * nj * sizeof(int));
    double* th = fb_alloc(a, 2 * ((size_t)c->nframe + 1) * sizeof(double));
    rest_pose rp = {.m = m,
                    .ch = ch,
                    .R = fb_alloc(a, nb * sizeof(fb_m3)),
                    .pos = fb_alloc(a, nb * sizeof(fb_v3))};
    fb_status s = FB_OK;
    if (!ints || !th || !rp.R || !rp.pos) {
        s = fb_fail(err, FB_ENOMEM, "%s: out of memory for the joint ranges", c->source);
    }
    if (s == FB_OK) {
        int *entry = ints, *pos = ints + nj, *len = ints + 2 * nj;
        assign(c, r, ch, entry, pos, len);
        /* up and forward in the root body's coordinates (the world's up through the root's
         * joint frame, at rest), then every joint frame */
        rp.up = fb_m3_mv(m->X_tree[1].E, fb_v3_make(0.0, 1.0, 0.0));
        rp.forward = fb_character_forward(c, ch);
        rp.left = fb_v3_cross(rp.up, rp.forward);
        rest_frames(&rp);
        for (int i = 0; i < c->njoint && s == FB_OK; i++) {
            if (entry[i] < 0) {
                continue;
            }
            const fb_rule_range* g = &r->range[entry[i]];
            fb_joint_range* jr = &ch->range[i];
            jr->rule = entry[i];
            jr->kind = g->kind;
            jr->share = share_of(g->share, g->nshare, pos[i], len[i]);
            jr->twist_share = g->ntwist_share > 0
                                  ? share_of(g->twist_share, g->ntwist_share, pos[i], len[i])
                                  : jr->share;
            for (int k = 0; k < FB_RANGE_NBOUND; k++) {
                jr->bound[k] = g->bound[k] * (k < 4 ? jr->share : jr->twist_share);
                jr->frame[k] = -1;
            }
            double before[FB_RANGE_NBOUND];
            memcpy(before, jr->bound, sizeof before);
            const int b = ch->body_of_joint[i];
            const fb_joint_limit L =
                m->jtype[b] == FB_JOINT_REVOLUTE
                    ? hinge_range(c, end, &rp, i, g, m->axis[b], th, jr)
                    : ball_range(c, end, &rp, i, g, pos[i] == len[i] - 1, ch, jr);
            for (int k = 0; k < FB_RANGE_NBOUND; k++) {
                const double w = jr->bound[k] - before[k];
                jr->widened[k] = w > RANGE_NOTE_MIN ? w : 0.0;
                jr->frame[k] = jr->widened[k] > 0.0 ? jr->frame[k] : -1;
            }
            s = fb_model_set_limit(m, b, &L, err);
        }
    }
    if (s == FB_OK) {
        note_widening(c, ch);
    }
    fb_free(a, ints);
    fb_free(a, th);
    fb_free(a, rp.R);
    fb_free(a, rp.pos);
    return s;
}
