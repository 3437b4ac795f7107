/* The grounded reference (fb_ref_grounded; docs/CONTROL.md §7): a copy of a reference in
 * which every foot stands on its sole during its stance intervals (the contact plan,
 * contact.c), by inverse kinematics of the leg (leg_ik.c), so that a body simulated with a
 * free root has something to stand on [Kovar, Schreiner & Gleicher 2002, "Footskate cleanup
 * for motion capture editing", SCA: planted feet held where the clip has them on average, the
 * legs solved analytically, the root lowered where a leg cannot reach, the corrections blended
 * in and out].
 *
 * The captured feet hover and tilt (the clip's floor is where its lowest shape goes, a kneel;
 * the captured foot's orientation wanders 10-20 degrees between stances), so a foot that
 * follows the clip stands on one corner, or on nothing. Per leg and frame:
 *
 *   target  inside a foot's stance, the planted pose (fb_stance: sole flat on the ground at
 *           the clip's mean position and heading over the interval, so it does not skate);
 *           outside, the clip's foot with the correction of the stances around carried
 *           (carry_at: bridged across gaps shorter than twice carry_time, faded over it
 *           otherwise), blended onto the planted pose over blend_time (a C2 smootherstep of
 *           the position and of the orientation's slerp); a standing toe pins the foot at the
 *           toe joint, the foot turned as a toe can hold it (heel_off); a foot or toe that
 *           would go into the ground is lifted out;
 *   root    lowered where a leg cannot reach its target with the knee bent min_knee_bend
 *           short of straight, by the least amount, bridged and smoothed over carry_time
 *           (root_drop);
 *   legs    the hip, knee and ankle solved for the target (fb_leg_solve), the toe keeping the
 *           direction the clip gives it in the world and lying flat while it stands;
 *   toes    off the stances, a toe turned to stay GROUND_SWING_CLEARANCE clear of the ground
 *           (swing_toes).
 *
 * Frames further than blend_time and twice carry_time from every stance keep their pose bit
 * for bit, but for a toe turned clear of the ground. Then every frame is smoothed over
 * smooth_time (ground_smooth.c: the steps from frame to frame ask for accelerations no contact
 * gives; with smooth_time 0 not, and the frames above stay bit for bit). Then v, a (the
 * input's, corrected by the change the fit sees), v_step, a_step and the feedforward are
 * recomputed as fb_ref_create makes them. Joint ranges are respected by clamping into them
 * (counted in a warning). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "control/leg_ik.h"
#include "control/ref_internal.h"
#include "featherbone/collision.h"
#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "math/detmath.h"
#include "math/quat.h"
#include "util/error.h"

/* The fit the rates of the changed frames are taken with: 9 frames of the simulation rate,
 * degree 5 (docs/CONTROL.md). */
/* Passes of the search that lifts a foot its joints' stops turned into the ground back onto it
 * (each way), and the depth (m) that ends it. */
#define GROUND_STOP_PASSES 12
#define GROUND_STOP_SLACK 1e-4

/* m: a shape this far below the ground after grounding is reported (after the smoothing,
 * ground_smooth.c counts those over 1 mm) */
#define GROUND_DEPTH_NOTE 1e-6
/* m: a swinging toe's least height over the ground (swing_toes). Without it a toe the clip
 * drags along the floor at 1-1.5 m/s with no gap (131_01's left toe at 0.75-1.05 s, between
 * two stances, turned out of the floor by the repair) stubs on it in the simulation: its
 * friction stops the swing and the body's weight goes onto it */
#define GROUND_SWING_CLEARANCE 0.01
/* s: the toe's turns smoothed over this either side */
#define GROUND_SWING_SMOOTH 0.05

fb_ground_opts fb_default_ground_opts(void) {
    return (fb_ground_opts){
        .blend_time = 0.12, .carry_time = 0.3, .min_knee_bend = 0.15, .smooth_time = 0.05};
}

/* ---- blending ----------------------------------------------------------------------------- */

/* 6x^5 - 15x^4 + 10x^3: 0 and 1 with zero first and second derivatives at both ends */
static double smootherstep(double x) {
    x = x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
    return x * x * x * (x * (6.0 * x - 15.0) + 10.0);
}

/* Per frame, how far contact c is pulled onto its stances: weight w (1 inside an interval,
 * falling to 0 over the blend zone either side, zones shortened to half the gap between two
 * intervals) and the interval it is pulled onto (-1: none). */
static void blend_weights(const fb_ref_contact* ct, int nf, double zone, double* w, int* at) {
    for (int i = 0; i < nf; i++) {
        w[i] = 0.0;
        at[i] = -1;
    }
    for (int s = 0; s < ct->nstance; s++) {
        const fb_stance* x = &ct->stance[s];
        const double before = s > 0 ? fmin(zone, 0.5 * (x->first - ct->stance[s - 1].last))
                                    : zone;
        const double after = s + 1 < ct->nstance
                                 ? fmin(zone, 0.5 * (ct->stance[s + 1].first - x->last))
                                 : zone;
        for (int i = x->first; i <= x->last; i++) {
            w[i] = 1.0;
            at[i] = s;
        }
        for (int i = x->first - 1; i >= 0 && x->first - i < before; i--) {
            w[i] = smootherstep(1.0 - (x->first - i) / before);
            at[i] = s;
        }
        for (int i = x->last + 1; i < nf && i - x->last < after; i++) {
            w[i] = smootherstep(1.0 - (i - x->last) / after);
            at[i] = s;
        }
    }
}

/* Scratch of the grounding, per leg: the weights and intervals of its foot and toe. */
typedef struct leg_plan {
    fb_leg leg;
    int side;          /* knee_side */
    int cf, ct;        /* contact indices of the foot and toe (-1: none) */
    double *wf, *wt;   /* (nf) */
    double* cw;        /* (nf) the carry's weight (carry_at) */
    int *sf, *st;      /* (nf) */
    /* per foot stance: the correction (rotation, world, on the left; shift) that takes the
     * clip's foot (root lowered) to the planted pose at its first and last frames */
    fb_quat *start_q, *end_q; /* (nstance) */
    fb_v3 *start_p, *end_p;   /* (nstance) */
} leg_plan;

/* The offset that carries the correction of leg P's foot beyond its stances, at frame i (not
 * inside one): between two stances less than 2 `zone` frames apart the correction of the
 * first's last frame turns into that of the second's first frame (smootherstep), else each
 * fades out over `zone` frames from its stance; the correction of a stance's end frame is what
 * takes the clip's foot there to the planted pose. cq, cp: rotation (world, applied on the
 * left) and shift; returns the carry's weight (0: none). */
static double carry_at(const leg_plan* P, const fb_ref_contact* ct, int i, double zone,
                       fb_quat* cq, fb_v3* cp) {
    int next = 0;
    while (next < ct->nstance && ct->stance[next].first <= i) {
        next++;
    }
    const int prev = next - 1; /* stance[prev].last < i < stance[next].first */
    *cq = fb_quat_identity();
    *cp = fb_v3_zero();
    const bool has_prev = prev >= 0, has_next = next < ct->nstance;
    const int a = has_prev ? ct->stance[prev].last : 0, b = has_next ? ct->stance[next].first : 0;
    if (has_prev && has_next && b - a <= 2.0 * zone) {
        const double u = smootherstep((double)(i - a) / (b - a));
        *cq = fb_quat_slerp(P->end_q[prev], P->start_q[next], u);
        *cp = fb_v3_add(fb_v3_scale(P->end_p[prev], 1.0 - u), fb_v3_scale(P->start_p[next], u));
        return 1.0;
    }
    double w = 0.0;
    if (has_prev && i - a < zone) {
        const double f = 1.0 - smootherstep((i - a) / zone);
        *cq = fb_quat_slerp(fb_quat_identity(), P->end_q[prev], f);
        *cp = fb_v3_scale(P->end_p[prev], f);
        w = f;
    }
    if (has_next && b - i < zone) {
        const double f = 1.0 - smootherstep((b - i) / zone);
        *cq = fb_quat_mul(fb_quat_slerp(fb_quat_identity(), P->start_q[next], f), *cq);
        *cp = fb_v3_add(*cp, fb_v3_scale(P->start_p[next], f));
        w = fmax(w, f);
    }
    return w;
}

/* Leg L's foot at orientation R (world) as a toe on the ground can hold it: its roll about
 * its length taken out (its side axis turned level by the least rotation) and its toes not
 * above its heel (pitched level when they are): then the sole's front edge, the toe's
 * radius under the toe joint, stays out of the ground with the toe joint at that height. */
static fb_m3 heel_off(const fb_leg* L, fb_m3 R, fb_plane g) {
    const fb_v3 side = fb_m3_mv(R, fb_v3_cross(L->sole_n, L->sole_fwd));
    const fb_v3 level = fb_v3_sub(side, fb_v3_scale(g.n, fb_v3_dot(side, g.n)));
    const double nl = fb_v3_norm(level);
    if (nl > 1e-9) {
        R = fb_m3_mul(fb_quat_to_m3(fb_quat_between(fb_v3_scale(side, 1.0 / fb_v3_norm(side)),
                                                 fb_v3_scale(level, 1.0 / nl))), R);
    }
    const fb_v3 fwd = fb_m3_mv(R, L->sole_fwd);
    if (fb_v3_dot(fwd, g.n) > 0.0) {
        const fb_v3 flat = fb_v3_sub(fwd, fb_v3_scale(g.n, fb_v3_dot(fwd, g.n)));
        const double nf = fb_v3_norm(flat);
        if (nf > 1e-9) {
            R = fb_m3_mul(fb_quat_to_m3(fb_quat_between(fb_v3_scale(fwd, 1.0 / fb_v3_norm(fwd)),
                                                     fb_v3_scale(flat, 1.0 / nf))), R);
        }
    }
    return R;
}

/* Leg P's toe angle at frame i with the foot at orientation RF (kinematics of the clip's pose
 * in d): the direction the clip gives the toe in the world kept (the foot's turn not passed
 * on to it), blended onto lying flat by the toe's stance weight; *flat_prev: the flat angle
 * of the frame before, which the flat way follows (no flip between frames), updated. */
static void toe_pose(const fb_model* m, const leg_plan* P, const fb_data* d, int i, fb_m3 RF,
                     fb_plane g, double* toe, double* flat_prev) {
    const int t = P->leg.toe;
    double th = fb_leg_toe_keep(m, &P->leg, RF, fb_body_rot(m, d, t), d->q[m->q_adr[t]]);
    const double wt = P->ct >= 0 ? P->wt[i] : 0.0;
    if (wt > 0.0) {
        const bool before = i > 0 && P->wt[i - 1] > 0.0;
        const double flat = fb_leg_toe_angle(m, &P->leg, RF, g, th, 0.0, before ? flat_prev : NULL);
        *flat_prev = flat;
        th += wt * fb_wrap_angle(flat - th);
    }
    *toe = th;
}

/* Where leg P's foot goes at frame i (kinematics of the dropped pose current in d): RT, AT;
 * returns whether the leg is changed at all. The clip's foot pose, with the correction carried
 * from the stances around (carry_at), is blended onto the stance's planted pose (weight wf);
 * a standing toe (weight wt) pins the foot at the toe joint, the foot turned as the toe can
 * hold it (heel_off); a foot that would still go into the ground is lifted out. */
static bool leg_target(const fb_model* m, const fb_ref* ref, const fb_data* d,
                       const leg_plan* P, int i, double zone, double drop, fb_plane g, fb_m3* RT,
                       fb_v3* AT, double* toe, double* flat_prev) {
    const double wf = P->wf[i], wt = P->ct >= 0 ? P->wt[i] : 0.0;
    const int foot = P->leg.foot;
    const fb_stance* fs = wf > 0.0 ? &ref->contact[P->cf].stance[P->sf[i]] : NULL;
    const bool hinge_toe = P->leg.toe >= 0 && m->jtype[P->leg.toe] == FB_JOINT_REVOLUTE;
    if (wf == 1.0) {
        *RT = fb_quat_to_m3(fs->rot);
        *AT = fs->p;
        if (hinge_toe) {
            toe_pose(m, P, d, i, *RT, g, toe, flat_prev);
        }
        return true;
    }
    fb_quat cq;
    fb_v3 cp;
    const double cw = carry_at(P, &ref->contact[P->cf], i, zone, &cq, &cp);
    if (wf == 0.0 && wt == 0.0 && cw == 0.0) {
        return false;
    }
    /* the carried pose: the shift is from the clip's foot where the clip has it, before the
     * root was lowered by `drop` (a swinging foot is not dragged down with the root), fading
     * with the carry */
    fb_quat qc = fb_quat_mul(cq, fb_quat_from_m3(fb_body_rot(m, d, foot)));
    fb_v3 AF = fb_v3_add(fb_v3_add(fb_point_pos(m, d, foot, fb_v3_zero()), cp),
                         fb_v3_scale(g.n, cw * drop));
    if (wt > 0.0) {
        qc = fb_quat_slerp(qc, fb_quat_from_m3(heel_off(&P->leg, fb_quat_to_m3(qc), g)), wt);
    }
    fb_m3 RF = fb_quat_to_m3(qc);
    if (wf > 0.0) {
        RF = fb_quat_to_m3(fb_quat_slerp(qc, fs->rot, wf));
        AF = fb_v3_add(AF, fb_v3_scale(fb_v3_sub(fs->p, AF), wf));
    }
    if (wt > 0.0) {
        /* the toe pins the foot at its joint: the foot turns about it */
        const fb_v3 pin = fb_v3_sub(ref->contact[P->ct].stance[P->st[i]].p,
                                    fb_m3_mv(RF, m->X_tree[P->leg.toe].r));
        AF = fb_v3_add(AF, fb_v3_scale(fb_v3_sub(pin, AF), wt));
    }
    /* out of the ground: the sole and, unless it stands, the toe as it will point */
    double low = fb_lowest_point_at(m, foot, RF, AF, g);
    if (hinge_toe) {
        toe_pose(m, P, d, i, RF, g, toe, flat_prev);
        if (wt < 1.0) {
            const fb_xf Xt = m->X_tree[P->leg.toe];
            const fb_m3 Rt = fb_m3_mul(fb_m3_mul(RF, fb_m3_transpose(Xt.E)),
                                       fb_quat_to_m3(fb_quat_from_axis_angle(m->axis[P->leg.toe],
                                                                             *toe)));
            /* (by lifting the foot less the nearer it is planted: the toe is then turned out,
             * not the planted foot lifted) */
            low = fmin(low, (1.0 - wf) * fb_lowest_point_at(m, P->leg.toe, Rt,
                                                            fb_v3_add(AF, fb_m3_mv(RF, Xt.r)),
                                                            g));
        }
    }
    if (low < 0.0) {
        AF = fb_v3_sub(AF, fb_v3_scale(g.n, low));
    }
    *RT = RF;
    *AT = AF;
    return true;
}

/* The larger of leg P's foot and toe stance weights at frame i. */
static double stance_weight(const leg_plan* P, int i) {
    return fmax(P->wf[i], P->ct >= 0 ? P->wt[i] : 0.0);
}

/* Swinging toes kept clear of the ground: in every frame off a leg's stances (its foot's and
 * toe's stance weights below 1) where the toe's lowest point is less than
 * GROUND_SWING_CLEARANCE (times 1 - that weight) over the ground, the toe's hinge (an end
 * segment: no joint of the clip moves with it) is turned to reach it, the same way through each
 * run of such frames (the way that reaches it in more of them, then the one that turns less);
 * the turns are smoothed over GROUND_SWING_SMOOTH (a running maximum, then a raised cosine,
 * nothing outside the run) and faded by 1 - the weight: no jump between frames, none at the
 * stances. buf: 3 nf doubles. */
static void swing_toes(const fb_model* m, fb_data* d, const leg_plan* P, int nl, fb_ref* out,
                       fb_plane g, double* buf) {
    const int nf = out->nframe, nq = m->nq;
    const int h = (int)lround(GROUND_SWING_SMOOTH / out->dt);
    double* need[2] = {buf, buf + nf}; /* the turn each way reaches the clearance with */
    double* env = buf + 2 * (size_t)nf;
    double wsum = 0.0; /* the raised cosine's weights */
    for (int u = -h; u <= h; u++) {
        wsum += 0.5 * (1.0 + fb_cos(FB_PI * u / (h + 1)));
    }
    for (int l = 0; l < nl; l++) {
        const int t = P[l].leg.toe;
        if (t < 0 || !fb_ref_end_segment(m, t)) {
            continue;
        }
        for (int i = 0; i < nf; i++) {
            const double w = stance_weight(&P[l], i);
            need[0][i] = need[1][i] = 0.0;
            if (w < 1.0) {
                memcpy(d->q, out->q + (size_t)i * (size_t)nq, (size_t)nq * sizeof(double));
                fb_kinematics_pos(m, d);
                const double target = GROUND_SWING_CLEARANCE * (1.0 - w);
                need[0][i] = fb_ref_clearing_turn(m, d, t, g, target, +1);
                need[1][i] = fb_ref_clearing_turn(m, d, t, g, target, -1);
            }
        }
        for (int i = 0; i < nf;) {
            if (stance_weight(&P[l], i) >= 1.0) {
                i++;
                continue;
            }
            int j = i; /* the run i..j-1 */
            int miss[2] = {0, 0};
            double sum[2] = {0.0, 0.0};
            while (j < nf && stance_weight(&P[l], j) < 1.0) {
                for (int w = 0; w < 2; w++) {
                    miss[w] += isnan(need[w][j]);
                    sum[w] += isnan(need[w][j]) ? 0.0 : need[w][j];
                }
                j++;
            }
            const int way = miss[1] != miss[0] ? miss[1] < miss[0] : sum[1] < sum[0];
            const double* nw = need[way];
            for (int k = i; k < j; k++) {
                env[k] = 0.0;
                for (int x = (k - h > i ? k - h : i); x < j && x <= k + h; x++) {
                    env[k] = isnan(nw[x]) ? env[k] : fmax(env[k], nw[x]);
                }
            }
            for (int k = i; k < j && sum[way] > 0.0; k++) {
                double turn = 0.0;
                for (int u = -h; u <= h; u++) {
                    const double c = 0.5 * (1.0 + fb_cos(FB_PI * u / (h + 1)));
                    turn += k + u >= i && k + u < j ? c * env[k + u] : 0.0;
                }
                double* q = out->q + (size_t)k * (size_t)nq + (size_t)m->q_adr[t];
                *q += (way == 0 ? 1.0 : -1.0) * (1.0 - stance_weight(&P[l], k)) * turn / wsum;
                fb_leg_clamp(m, t, q);
            }
            i = j;
        }
    }
}

/* ---- the grounded reference --------------------------------------------------------------- */

/* The root's lowering per frame (drop, nf; scratch 2 nf): at every frame where a leg is held
 * entirely by its stance (foot or toe weight 1), the least lowering that lets every such leg
 * reach its ankle's place (need); then its running maximum over half the root time `zone`
 * (frames) either side; gaps in that shorter than the root time bridged by straight lines
 * (the root stays down through a step instead of bobbing up between two stances); then
 * smoothed by a raised cosine over half the root time: at least the need everywhere, without a
 * kink, and nothing further than the root time from a held frame. */
static void root_drop(const fb_model* m, const fb_ref* ref, fb_data* d, const leg_plan* P,
                      int nleg, double zone, double min_bend, fb_plane g, double* drop,
                      double* scratch) {
    const int nf = ref->nframe;
    double* need = scratch;
    double* env = scratch + nf;
    for (int i = 0; i < nf; i++) {
        need[i] = 0.0;
        bool any = false;
        for (int l = 0; l < nleg; l++) {
            any = any || P[l].wf[i] > 0.0 || P[l].cw[i] > 0.0 || (P[l].ct >= 0 && P[l].wt[i] > 0.0);
        }
        if (!any) {
            continue;
        }
        memcpy(d->q, ref->q + (size_t)i * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, d);
        for (int l = 0; l < nleg; l++) {
            fb_m3 RT;
            fb_v3 AT;
            double toe = 0.0, flat = 0.0;
            if (!leg_target(m, ref, d, &P[l], i, zone, 0.0, g, &RT, &AT, &toe, &flat)) {
                continue;
            }
            const fb_v3 H = fb_point_pos(m, d, P[l].leg.hip, fb_v3_zero());
            const fb_v3 e = fb_v3_sub(AT, H);
            const double reach = fb_leg_reach(m, &P[l].leg, d->q, min_bend);
            if (fb_v3_norm(e) <= reach) {
                continue;
            }
            /* |e + x n| = reach: the smaller root x > 0 (the ankle is below the hip) */
            const double en = fb_v3_dot(e, g.n);
            const double disc = en * en - fb_v3_dot(e, e) + reach * reach;
            const double x = disc > 0.0 ? -en - sqrt(disc) : -en;
            need[i] = fmax(need[i], x);
        }
    }
    const int half = (int)floor(0.5 * zone);
    for (int i = 0; i < nf; i++) {
        env[i] = 0.0;
        for (int j = i - half; j <= i + half; j++) {
            env[i] = j >= 0 && j < nf ? fmax(env[i], need[j]) : env[i];
        }
    }
    for (int i = 1; i < nf; i++) {
        if (env[i] > 0.0 || env[i - 1] == 0.0) {
            continue;
        }
        int j = i; /* env[i-1] > 0, env[i..j-1] == 0 */
        while (j < nf && env[j] == 0.0) {
            j++;
        }
        if (j < nf && j - i <= (int)floor(zone)) {
            for (int k = i; k < j; k++) {
                env[k] = env[i - 1] + (env[j] - env[i - 1]) * (k - i + 1) / (double)(j - i + 1);
            }
        }
        i = j;
    }
    for (int i = 0; i < nf; i++) {
        double sum = 0.0, wsum = 0.0;
        for (int j = i - half; j <= i + half; j++) {
            const double w = 0.5 * (1.0 + fb_cos(FB_PI * (j - i) / (half + 1.0)));
            sum += env[j < 0 ? 0 : (j > nf - 1 ? nf - 1 : j)] * w; /* the ends held */
            wsum += w;
        }
        drop[i] = half > 0 ? sum / wsum : env[i];
    }
}

/* Checks the options; FB_OK or FB_EINVAL naming the field. */
static fb_status check_opts(const fb_ground_opts* o, fb_error* err) {
    if (!(o->blend_time >= 0.0) || o->blend_time > 10.0) {
        return fb_fail(err, FB_EINVAL, "ground blend_time: expected 0 to 10 s, found %g",
                       o->blend_time);
    }
    if (!(o->carry_time >= 0.0) || o->carry_time > 10.0) {
        return fb_fail(err, FB_EINVAL, "ground carry_time: expected 0 to 10 s, found %g",
                       o->carry_time);
    }
    if (!(o->min_knee_bend >= 0.0) || o->min_knee_bend > 0.5 * FB_PI) {
        return fb_fail(err, FB_EINVAL, "ground min_knee_bend: expected 0 to pi/2 rad, found %g",
                       o->min_knee_bend);
    }
    if (!(o->smooth_time >= 0.0) || o->smooth_time > 1.0) {
        return fb_fail(err, FB_EINVAL, "ground smooth_time: expected 0 to 1 s, found %g",
                       o->smooth_time);
    }
    return FB_OK;
}

/* The lowest point of every shape at configuration q (m above the ground g); d's kinematics
 * are q's on return. */
static double lowest_shape(const fb_model* m, fb_data* d, const double* q, fb_plane g) {
    memcpy(d->q, q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, d);
    double low = INFINITY;
    for (int b = 1; b < m->nbody; b++) {
        low = fmin(low, fb_lowest_point(m, d, b, g));
    }
    return low;
}

/* The lowest point of leg p's foot at configuration q (m above the ground). */
static double foot_low(const fb_model* m, fb_data* d, const leg_plan* p, const double* q) {
    memcpy(d->q, q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, d);
    return fb_lowest_point(m, d, p->leg.foot, fb_ground_plane());
}

/* Leg p solved for the foot pose (RT, AT) raised by `up` (m) and clamped into its ranges, the
 * toe hinge set to `toe` when moved_toe; returns the foot's lowest point. */
static double lifted(const fb_model* m, fb_data* d, const leg_plan* p, double* q, fb_m3 RT,
                     fb_v3 AT, double up, bool moved_toe, double toe) {
    const fb_plane g = fb_ground_plane();
    (void)fb_leg_solve(m, d, &p->leg, p->side, q, RT, fb_v3_add(AT, fb_v3_scale(g.n, up)));
    if (moved_toe) {
        q[m->q_adr[p->leg.toe]] = toe;
    }
    const int joints[4] = {p->leg.hip, p->leg.knee, p->leg.foot, p->leg.toe};
    for (int j = 0; j < 4; j++) {
        if (joints[j] >= 0) {
            (void)fb_leg_clamp(m, joints[j], q + m->q_adr[joints[j]]);
        }
    }
    return foot_low(m, d, p, q);
}

fb_ref* fb_ref_grounded(const fb_model* m, const fb_ref* ref, const fb_ground_opts* opts,
                        fb_error* err) {
    const fb_ground_opts o = opts ? *opts : fb_default_ground_opts();
    if (!m || !m->finalized || !ref) {
        fb_fail(err, FB_ESTATE, "grounded reference: %s", !ref ? "no reference"
                                                                : "the model is not finalized");
        return NULL;
    }
    if (ref->nq != m->nq || ref->nv != m->nv) {
        fb_fail(err, FB_EINVAL, "grounded reference: the reference (nq %d, nv %d) is not of this "
                "model (nq %d, nv %d)", ref->nq, ref->nv, m->nq, m->nv);
        return NULL;
    }
    if (check_opts(&o, err) != FB_OK) {
        return NULL;
    }
    const fb_allocator al = ref->alloc;
    const int nf = ref->nframe, nq = m->nq, nv = m->nv;
    fb_ref* out = fb_ref_alloc(m, nf, ref->dt, &al);
    fb_data* d = fb_data_create(m, &al, err);
    leg_plan P[FB_REF_MAX_LEGS];
    fb_leg legs[FB_REF_MAX_LEGS];
    const int nleg = fb_ref_legs(m, legs, FB_REF_MAX_LEGS);
    int nstance = 0;
    for (int c = 0; c < ref->ncontact; c++) {
        nstance += ref->contact[c].nstance;
    }
    /* scratch: per leg 2 weights, 2 intervals and a carry weight per frame; per stance the
     * corrections at its ends (2 quaternions, 2 shifts); the drop and its 2 scratch; the fit's
     * q, v, a twice and a zero choice per body; changed flags */
    const size_t sz = (size_t)nleg * 5 * (size_t)nf * sizeof(double) +
                      (size_t)nstance * 2 * (sizeof(fb_quat) + sizeof(fb_v3)) +
                      3 * (size_t)nf * sizeof(double) +
                      (2 * (size_t)nq + 4 * (size_t)nv) * sizeof(double) +
                      (size_t)m->nbody * sizeof(int) + (size_t)nf + 64;
    double* scratch = fb_alloc(&al, sz);
    double* smooth_tmp = fb_alloc(&al, GROUND_SMOOTH_TMP(m, nf) * sizeof(double));
    if (!out || !d || !scratch || !smooth_tmp || !fb_ref_copy_plan(ref, out)) {
        fb_fail(err, FB_ENOMEM, "grounded reference: out of memory for %d frames", nf);
        fb_ref_destroy(out);
        fb_data_destroy(d);
        fb_free(&al, scratch);
        fb_free(&al, smooth_tmp);
        return NULL;
    }
    /* the copy: everything as the input's, the frames changed below */
    const size_t per = (size_t)nq + 5 * (size_t)nv;
    memcpy(out->q, ref->q, (size_t)nf * per * sizeof(double));
    memcpy(out->fit_half_window, ref->fit_half_window, 4 * (size_t)m->nbody * sizeof(int));
    out->nrepaired = ref->nrepaired;
    out->place_shift = ref->place_shift;
    out->nwarn = ref->nwarn;
    memcpy(out->warn, ref->warn, sizeof out->warn);
    const fb_plane g = fb_ground_plane();
    const double zone = o.blend_time / ref->dt; /* frames */
    double* s = scratch;
    int nl = 0;
    for (int l = 0; l < nleg; l++) {
        leg_plan* p = &P[nl];
        p->leg = legs[l];
        p->side = fb_leg_knee_side(m, ref, &legs[l]);
        p->cf = p->ct = -1;
        for (int c = 0; c < ref->ncontact; c++) {
            p->cf = ref->contact[c].body == legs[l].foot ? c : p->cf;
            p->ct = ref->contact[c].body == legs[l].toe ? c : p->ct;
        }
        if (p->cf < 0) {
            continue;
        }
        const int ns = ref->contact[p->cf].nstance;
        p->wf = s;
        p->wt = s + nf;
        p->cw = s + 2 * (size_t)nf;
        p->sf = (int*)(void*)(s + 3 * (size_t)nf);
        p->st = (int*)(void*)(s + 4 * (size_t)nf);
        p->start_q = (fb_quat*)(void*)(s + 5 * (size_t)nf);
        p->end_q = p->start_q + ns;
        p->start_p = (fb_v3*)(void*)(p->end_q + ns);
        p->end_p = p->start_p + ns;
        s = (double*)(void*)(p->end_p + ns);
        blend_weights(&ref->contact[p->cf], nf, zone, p->wf, p->sf);
        if (p->ct >= 0) {
            blend_weights(&ref->contact[p->ct], nf, zone, p->wt, p->st);
        }
        nl++;
    }
    double* drop = s;
    double* fit_tmp = s + 3 * (size_t)nf;
    unsigned char* changed =
        (unsigned char*)(fit_tmp + 2 * (size_t)nq + 4 * (size_t)nv) + (size_t)m->nbody * sizeof(int);
    /* the feet's corrections at their stances' ends (from the clip's pose as it is, before
     * the root is lowered), then the root's lowering */
    const double carry = o.carry_time / ref->dt; /* frames */
    for (int l = 0; l < nl; l++) {
        leg_plan* p = &P[l];
        const fb_ref_contact* ct = &ref->contact[p->cf];
        for (int k = 0; k < ct->nstance; k++) {
            const fb_stance* x = &ct->stance[k];
            for (int end = 0; end < 2; end++) {
                const int i = end == 0 ? x->first : x->last;
                memcpy(d->q, ref->q + (size_t)i * (size_t)nq, (size_t)nq * sizeof(double));
                fb_kinematics_pos(m, d);
                const fb_quat qc = fb_quat_from_m3(fb_body_rot(m, d, p->leg.foot));
                const fb_v3 Ac = fb_point_pos(m, d, p->leg.foot, fb_v3_zero());
                *(end == 0 ? &p->start_q[k] : &p->end_q[k]) =
                    fb_quat_mul(x->rot, fb_quat_conj(qc));
                *(end == 0 ? &p->start_p[k] : &p->end_p[k]) = fb_v3_sub(x->p, Ac);
            }
        }
    }
    for (int l = 0; l < nl; l++) {
        for (int i = 0; i < nf; i++) {
            fb_quat cq;
            fb_v3 cp;
            P[l].cw[i] = P[l].wf[i] == 1.0 ? 0.0
                                           : carry_at(&P[l], &ref->contact[P[l].cf], i, carry,
                                                      &cq, &cp);
        }
    }
    root_drop(m, ref, d, P, nl, carry, o.min_knee_bend, g, drop, s + nf);
    /* the root: the floating joint on the world (its position coordinates in the world's axes
     * turned by its joint frame, as the placement moves it) */
    int root = -1;
    for (int b = 1; b < m->nbody && root < 0; b++) {
        root = m->parent[b] == 0 && m->jtype[b] == FB_JOINT_FLOATING ? b : -1;
    }
    double most_drop = 0.0, flat_before[FB_REF_MAX_LEGS] = {0.0};
    int unreached = 0, clamped = 0, below = 0;
    double deepest = 0.0;
    for (int i = 0; i < nf; i++) {
        double* q = out->q + (size_t)i * (size_t)nq;
        if (root >= 0 && drop[i] > 0.0) {
            const fb_v3 dp = fb_m3_mv(m->X_tree[root].E, fb_v3_scale(g.n, -drop[i]));
            q[m->q_adr[root]] += dp.x;
            q[m->q_adr[root] + 1] += dp.y;
            q[m->q_adr[root] + 2] += dp.z;
            most_drop = fmax(most_drop, drop[i]);
        }
        bool touched = root >= 0 && drop[i] > 0.0;
        for (int l = 0; l < nl && !touched; l++) {
            touched = P[l].wf[i] > 0.0 || P[l].cw[i] > 0.0 || (P[l].ct >= 0 && P[l].wt[i] > 0.0);
        }
        if (!touched) {
            continue;
        }
        memcpy(d->q, q, (size_t)nq * sizeof(double));
        fb_kinematics_pos(m, d);
        for (int l = 0; l < nl; l++) {
            const leg_plan* p = &P[l];
            fb_m3 RT;
            fb_v3 AT;
            double toe = p->leg.toe >= 0 ? q[m->q_adr[p->leg.toe]] : 0.0;
            bool move = leg_target(m, ref, d, p, i, carry, drop[i], g, &RT, &AT, &toe,
                                   &flat_before[l]);
            const bool moved_toe = move && p->leg.toe >= 0 &&
                                   m->jtype[p->leg.toe] == FB_JOINT_REVOLUTE;
            if (!move && drop[i] > 0.0) {
                /* a free leg lowered with the root into the ground is lifted out of it */
                RT = fb_body_rot(m, d, p->leg.foot);
                AT = fb_point_pos(m, d, p->leg.foot, fb_v3_zero());
                const double th = p->leg.toe >= 0 ? q[m->q_adr[p->leg.toe]] : 0.0;
                const double low = fmin(fb_lowest_point_at(m, p->leg.foot, RT, AT, g),
                                        fb_leg_toe_root_clearance(m, &p->leg, RT, AT, th, g));
                move = low < 0.0;
                AT = fb_v3_sub(AT, fb_v3_scale(g.n, fmin(low, 0.0)));
            }
            if (!move) {
                continue;
            }
            const bool held = p->wf[i] == 1.0 || (p->ct >= 0 && p->wt[i] == 1.0);
            unreached += !fb_leg_solve(m, d, &p->leg, p->side, q, RT, AT) && held;
            if (moved_toe) {
                q[m->q_adr[p->leg.toe]] = toe;
            }
            const int joints[4] = {p->leg.hip, p->leg.knee, p->leg.foot, p->leg.toe};
            int stops = 0;
            for (int j = 0; j < 4; j++) {
                stops += joints[j] >= 0 && fb_leg_clamp(m, joints[j], q + m->q_adr[joints[j]]);
            }
            clamped += stops;
            /* a joint at its stop left the foot turned from the pose asked and into the
             * ground: the pose asked is raised by the least height (bisection) that leaves
             * its lowest point on the ground once solved and clamped again */
            if (foot_low(m, d, p, q) < -GROUND_STOP_SLACK) {
                /* the least lift found to be enough; when none is (the stops keep the foot
                 * from the pose however high it is asked), the one that left it highest */
                double bad = 0.0, good = 0.0, best_up = 0.0, best_low = -INFINITY;
                bool found = false;
                for (int it = 0; it < GROUND_STOP_PASSES && !found; it++) {
                    const double low = lifted(m, d, p, q, RT, AT, good, moved_toe, toe);
                    if (low > best_low) {
                        best_low = low;
                        best_up = good;
                    }
                    found = low >= -GROUND_STOP_SLACK;
                    if (!found) {
                        bad = good;
                        good -= low;
                    }
                }
                for (int it = 0; found && it < GROUND_STOP_PASSES && good - bad > GROUND_STOP_SLACK;
                     it++) {
                    const double mid = 0.5 * (bad + good);
                    if (lifted(m, d, p, q, RT, AT, mid, moved_toe, toe) >= -GROUND_STOP_SLACK) {
                        good = mid;
                    } else {
                        bad = mid;
                    }
                }
                (void)lifted(m, d, p, q, RT, AT, found ? good : best_up, moved_toe, toe);
            }
        }
        /* a toe the new foot pose put into the ground is turned out of it */
        memcpy(d->q, q, (size_t)nq * sizeof(double));
        fb_kinematics_pos(m, d);
        for (int l = 0; l < nl; l++) {
            const fb_leg* L = &P[l].leg;
            fb_v3 along, start;
            double radius;
            if (!fb_leg_toe_shape(m, L, &along, &start, &radius) ||
                fb_lowest_point(m, d, L->toe, g) >= -GROUND_DEPTH_NOTE) {
                continue;
            }
            const fb_m3 RF = fb_body_rot(m, d, L->foot);
            const double near_end = fb_v3_dot(g.n, fb_point_pos(m, d, L->toe, start)) - g.offset;
            double* th = q + m->q_adr[L->toe];
            *th = fb_leg_toe_angle(m, L, RF, g, *th, radius - near_end, NULL);
            clamped += fb_leg_clamp(m, L->toe, th);
        }
        const double low = lowest_shape(m, d, q, g);
        below += low < -GROUND_DEPTH_NOTE;
        deepest = fmin(deepest, low);
    }
    swing_toes(m, d, P, nl, out, g, drop); /* in the drop's 3 nf doubles, no longer needed */
    ground_smooth_info smoothed;
    /* a model without feet gets its reference as it was */
    const bool smooth_ok =
        fb_ground_smooth(m, out, nl > 0 ? o.smooth_time : 0.0, d, smooth_tmp, &smoothed);
    /* what changed: the rates around it */
    double most_turn = 0.0;
    for (int i = 0; i < nf; i++) {
        const double* qa = ref->q + (size_t)i * (size_t)nq;
        const double* qb = out->q + (size_t)i * (size_t)nq;
        changed[i] = memcmp(qa, qb, (size_t)nq * sizeof(double)) != 0;
        if (changed[i]) {
            double* dv = fit_tmp; /* nv */
            fb_difference(m, qa, qb, dv);
            for (int l = 0; l < nl; l++) {
                const int joints[4] = {P[l].leg.hip, P[l].leg.knee, P[l].leg.foot, P[l].leg.toe};
                for (int j = 0; j < 4; j++) {
                    if (joints[j] < 0) {
                        continue;
                    }
                    const double* x = dv + m->v_adr[joints[j]];
                    const double t = m->jnv[joints[j]] == 3
                                         ? sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
                                         : fabs(x[0]);
                    most_turn = fmax(most_turn, t);
                }
            }
        }
    }
    if (!smooth_ok || !fb_fit_rates_changed(m, ref->q, out, changed, fit_tmp)) {
        fb_fail(err, FB_ENUMERIC, "grounded reference: a fit window is singular");
        fb_ref_destroy(out);
        fb_data_destroy(d);
        fb_free(&al, scratch);
        fb_free(&al, smooth_tmp);
        return NULL;
    }
    fb_ref_step_velocities(m, out);
    if (nf > 1 && (changed[0] || changed[1])) {
        /* frame 0's: the input's, plus the change of frame 1's */
        for (int j = 0; j < nv; j++) {
            out->v_step[j] = ref->v_step[j] + (out->v_step[nv + j] - ref->v_step[nv + j]);
        }
    }
    fb_ref_step_torques(m, out, d);
    /* what was done, first in the warnings */
    char text[FB_CLIP_WARN_LEN];
    if (smoothed.half_window > 0) {
        snprintf(text, sizeof text,
                 "grounded: smoothed over %.3f s either side: a body moved up to %.1f mm (%s, "
                 "frame %d); shapes over 1 mm in the ground in %d frames, up to %.2f mm",
                 smoothed.half_window * ref->dt, 1e3 * smoothed.most_moved,
                 smoothed.moved_body > 0 ? m->name[smoothed.moved_body] : "none",
                 smoothed.moved_frame, smoothed.below, -1e3 * smoothed.deepest);
        fb_ref_warn_first(out, text);
    }
    if (below > 0 && smoothed.half_window == 0) {
        snprintf(text, sizeof text, "grounded: shapes below the ground in %d frames, up to %.2f mm",
                 below, -1e3 * deepest);
        fb_ref_warn_first(out, text);
    }
    if (unreached > 0 || clamped > 0) {
        snprintf(text, sizeof text, "grounded: %d planted legs out of reach, %d joints held at "
                 "their ranges", unreached, clamped);
        fb_ref_warn_first(out, text);
    }
    int count[2] = {0, 0}, nframes[2] = {0, 0};
    for (int c = 0; c < ref->ncontact; c++) {
        const int toe = ref->contact[c].foot >= 0;
        count[toe] += ref->contact[c].nstance;
        for (int k = 0; k < ref->contact[c].nstance; k++) {
            nframes[toe] += ref->contact[c].stance[k].last - ref->contact[c].stance[k].first + 1;
        }
    }
    snprintf(text, sizeof text, "grounded: %d foot stances (%.2f s), %d toe stances (%.2f s) on "
             "the ground; leg joints turned up to %.1f deg, the root lowered up to %.2f cm",
             count[0], nframes[0] * ref->dt, count[1], nframes[1] * ref->dt,
             most_turn * 180.0 / FB_PI, 100.0 * most_drop);
    fb_ref_warn_first(out, text);
    fb_data_destroy(d);
    fb_free(&al, scratch);
    fb_free(&al, smooth_tmp);
    fb_ok(err);
    return out;
}
