/* Inverse kinematics of a leg for the grounded reference (ground.c; docs/CONTROL.md, "The
 * grounded reference"): the foot put at a given pose by the hip, knee and ankle, the toe
 * hinge's angles, the joint ranges.
 *
 * The knee is the two-link solution [Tolani, Goswami & Badler 2000, "Real-time inverse
 * kinematics techniques for anthropomorphic limbs", Graphical Models 62(5), §3]: its bend
 * about its hinge axis (a ball-joint knee: about the axis its thigh and shank bend about)
 * gives the hip-to-ankle distance exactly, on the side the clip bends it; the hip is turned by
 * the least rotation that points the leg at the ankle's place, which keeps the knee's swing
 * plane as near the clip's as a rotation can; the ankle takes the foot's orientation through
 * the shank's new one. Closed forms throughout: a rotation about an axis by t puts any vector
 * at c0 + c1 cos t + c2 sin t along any other (turn_parts), solved by harmonic_solve. */
#include "control/leg_ik.h"
#include "math/detmath.h"

#include <math.h>
#include <string.h>

#include "featherbone/collision.h"
#include "featherbone/dynamics.h"
#include "model/limit.h"
#include "math/quat.h"

/* Times a leg is swung to keep its thigh and shank out of the ground (each swing takes the
 * lowest point found out; another may then be the lowest) */
#define LEG_SWINGS 4

double fb_wrap_angle(double t) {
    return t - 2.0 * FB_PI * floor((t + FB_PI) / (2.0 * FB_PI));
}


/* The quaternion of R with the sign nearest `near` (no flip between frames). */
static fb_quat quat_near(fb_m3 R, fb_quat near) {
    const fb_quat q = fb_quat_from_m3(R);
    const double d = q.w * near.w + q.x * near.x + q.y * near.y + q.z * near.z;
    return d < 0.0 ? (fb_quat){-q.w, -q.x, -q.y, -q.z} : q;
}

/* A solution of c1 cos t + c2 sin t = rhs: t = phi +- acos(rhs / rho) (phi = atan2(c2, c1),
 * rho = hypot(c1, c2)), the one with the sign `side` (+1, -1), or with side 0 the one nearest
 * 0; clamped to the nearest reachable value when there is none (*exact false). */
static double harmonic_solve(double c1, double c2, double rhs, int side, bool* exact) {
    const double rho = fb_hypot(c1, c2);
    if (!(rho > 1e-15)) {
        *exact = fabs(rhs) < 1e-15;
        return 0.0;
    }
    double k = rhs / rho;
    *exact = fabs(k) <= 1.0 + 1e-9; /* at full stretch rounding may pass 1 */
    k = k > 1.0 ? 1.0 : (k < -1.0 ? -1.0 : k);
    const double phi = fb_atan2(c2, c1), u = fb_acos(k);
    const double t1 = fb_wrap_angle(phi + u), t2 = fb_wrap_angle(phi - u);
    if (side != 0) {
        return side > 0 ? t1 : t2;
    }
    return fabs(t1) <= fabs(t2) ? t1 : t2;
}

/* A rotation about unit axis a by t applied to x, split as x_par + cos t x_perp + sin t a x
 * x_perp: the three parts of v . R(a, t) x (v . x_par, v . x_perp, v . (a x x_perp)). */
static void turn_parts(fb_v3 a, fb_v3 x, fb_v3 v, double c[3]) {
    const fb_v3 par = fb_v3_scale(a, fb_v3_dot(a, x));
    const fb_v3 perp = fb_v3_sub(x, par);
    c[0] = fb_v3_dot(v, par);
    c[1] = fb_v3_dot(v, perp);
    c[2] = fb_v3_dot(v, fb_v3_cross(a, perp));
}

/* Clamps body b's joint coordinates q (its own, at m->q_adr[b]) into its range (the swing's
 * ellipse and the twist's bounds of model/limit.h, as the world's limit rows see them); true
 * when it moved them. */
bool fb_leg_clamp(const fb_model* m, int b, double* q) {
    const int n = m->jtype[b] == FB_JOINT_SPHERICAL ? 4 : 1;
    double before[4];
    memcpy(before, q, (size_t)n * sizeof(double));
    fb_limit_project(&m->limit[b], m->jtype[b], q);
    return memcmp(before, q, (size_t)n * sizeof(double)) != 0;
}

/* The knee of leg L at pose q seen from the thigh (kinematics of q current in d): its bend
 * axis a (thigh coordinates), the knee's offset rk and the shank vector s (thigh coordinates,
 * knee to ankle), and the joint-frame axis the bend turns about. */
typedef struct knee_geom {
    fb_v3 rk, s, a, a_joint;
    fb_quat qk; /* the knee's rotation in its joint frame */
} knee_geom;

static knee_geom knee_at(const fb_model* m, const fb_leg* L, const double* q) {
    const int k = L->knee;
    const fb_xf Xk = m->X_tree[k];
    knee_geom g;
    const double* qk = q + m->q_adr[k];
    g.qk = m->jtype[k] == FB_JOINT_REVOLUTE ? fb_quat_from_axis_angle(m->axis[k], qk[0])
                                            : fb_quat_load(qk);
    const fb_v3 shank_j = fb_quat_rotate(g.qk, m->X_tree[L->foot].r); /* joint frame */
    if (m->jtype[k] == FB_JOINT_REVOLUTE) {
        g.a_joint = m->axis[k];
    } else {
        /* a ball-joint knee bends about the axis across its thigh and shank */
        const fb_v3 thigh_j = fb_m3_mv(Xk.E, fb_v3_neg(Xk.r));
        fb_v3 a = fb_v3_cross(thigh_j, shank_j);
        const double n = fb_v3_norm(a);
        a = n > 1e-9 * fb_v3_norm(thigh_j) * fb_v3_norm(shank_j) ? fb_v3_scale(a, 1.0 / n)
                                                                : fb_v3_make(1.0, 0.0, 0.0);
        g.a_joint = a;
    }
    g.rk = Xk.r;
    g.s = fb_m3_tr_mv(Xk.E, shank_j);
    g.a = fb_m3_tr_mv(Xk.E, g.a_joint);
    return g;
}

/* The hip-ankle distance's reach: the largest over the knee's bend, less min_bend. */
static double knee_reach(const knee_geom* g, double min_bend) {
    double c[3];
    turn_parts(g->a, g->s, g->rk, c);
    const double rho = fb_hypot(c[1], c[2]);
    const double d2 =
        fb_v3_dot(g->rk, g->rk) + fb_v3_dot(g->s, g->s) + 2.0 * (c[0] + rho * fb_cos(min_bend));
    return sqrt(fmax(d2, 0.0));
}

/* The side a hinge knee bends to, +1 or -1: the sign, summed over the reference's frames, of
 * its angle from straight (the angle of the longest hip-ankle distance); 0 for a ball-joint
 * knee. */
int fb_leg_knee_side(const fb_model* m, const fb_ref* ref, const fb_leg* L) {
    const int k = L->knee;
    if (m->jtype[k] != FB_JOINT_REVOLUTE) {
        return 0;
    }
    const fb_xf Xk = m->X_tree[k];
    double c[3];
    turn_parts(fb_m3_tr_mv(Xk.E, m->axis[k]), fb_m3_tr_mv(Xk.E, m->X_tree[L->foot].r), Xk.r, c);
    const double straight = fb_atan2(c[2], c[1]);
    double sum = 0.0;
    for (int i = 0; i < ref->nframe; i++) {
        sum += fb_wrap_angle(ref->q[(size_t)i * (size_t)m->nq + (size_t)m->q_adr[k]] - straight);
    }
    return sum < 0.0 ? -1 : 1;
}

/* Puts leg L's foot at orientation RT and origin AT (world) by changing the hip, knee and ankle
 * coordinates of q (d: position kinematics of q as it was); a hinge knee bent to `side`
 * (knee_side); false when the ankle is out of reach (the knee then straightened or folded as
 * far as it goes). */
bool fb_leg_solve(const fb_model* m, const fb_data* d, const fb_leg* L, int side, double* q,
                      fb_m3 RT, fb_v3 AT) {
    const int h = L->hip, k = L->knee, f = L->foot;
    const fb_v3 H = fb_point_pos(m, d, h, fb_v3_zero());
    const fb_m3 Rh = fb_body_rot(m, d, h);
    const fb_m3 Rhp = fb_body_rot(m, d, m->parent[h]);
    /* knee: the bend that gives |AT - H| */
    const knee_geom g = knee_at(m, L, q);
    const fb_v3 e = fb_v3_sub(AT, H);
    double c[3];
    turn_parts(g.a, g.s, g.rk, c);
    const double rhs = 0.5 * (fb_v3_dot(e, e) - fb_v3_dot(g.rk, g.rk) - fb_v3_dot(g.s, g.s)) - c[0];
    bool exact;
    /* a hinge knee bends to the side the clip bends it (the other side of straight is a
     * knee bent backwards); a ball-joint knee the nearer way */
    const double bend = harmonic_solve(c[1], c[2], rhs,
                                       m->jtype[k] == FB_JOINT_REVOLUTE ? side : 0, &exact);
    double* qk = q + m->q_adr[k];
    fb_quat qk_new;
    if (m->jtype[k] == FB_JOINT_REVOLUTE) {
        qk[0] += bend;
        qk_new = fb_quat_from_axis_angle(m->axis[k], qk[0]);
    } else {
        qk_new = fb_quat_normalize(fb_quat_mul(fb_quat_from_axis_angle(g.a_joint, bend), g.qk));
        fb_quat_store(qk, qk_new);
    }
    /* hip: the least turn that points the leg (hip to ankle) at AT */
    const fb_xf Xk = m->X_tree[k], Xh = m->X_tree[h];
    const fb_v3 w = fb_v3_add(Xk.r, fb_m3_tr_mv(Xk.E, fb_quat_rotate(qk_new, m->X_tree[f].r)));
    const fb_v3 cur = fb_m3_mv(Rh, w);
    const double ncur = fb_v3_norm(cur), ne = fb_v3_norm(e);
    fb_m3 Rh_new = Rh;
    if (ncur > 0.0 && ne > 0.0) {
        const fb_quat turn = fb_quat_between(fb_v3_scale(cur, 1.0 / ncur), fb_v3_scale(e, 1.0 / ne));
        Rh_new = fb_m3_mul(fb_quat_to_m3(turn), Rh);
    }
    fb_m3 Rk_new = fb_m3_mul(fb_m3_mul(Rh_new, fb_m3_transpose(Xk.E)), fb_quat_to_m3(qk_new));
    /* a thigh or shank put into the ground (a kneeling leg turned onto its pinned toe): the
     * leg swung about the hip-ankle line, which moves neither hip nor ankle, by the least
     * angle that lifts its lowest point out */
    const fb_plane ground = fb_ground_plane();
    for (int t = 0; t < LEG_SWINGS && ne > 0.0; t++) {
        fb_v3 low_p = fb_v3_zero();
        double low = 0.0, radius = 0.0;
        for (int sh = 0; sh < m->nshape; sh++) {
            const fb_shape* x = &m->shape[sh];
            if ((x->body != h && x->body != k) || x->type == FB_SHAPE_BOX) {
                continue;
            }
            const fb_m3 R = x->body == h ? Rh_new : Rk_new;
            const fb_v3 o = x->body == h ? H : fb_v3_add(H, fb_m3_mv(Rh_new, Xk.r));
            for (int end = 0; end < (x->type == FB_SHAPE_CAPSULE ? 2 : 1); end++) {
                const fb_v3 p = fb_v3_add(o, fb_m3_mv(R, end == 0 ? x->p0 : x->p1));
                const double clear = fb_v3_dot(ground.n, p) - ground.offset - x->radius;
                if (clear < low) {
                    low = clear;
                    low_p = p;
                    radius = x->radius;
                }
            }
        }
        if (low >= 0.0) {
            break;
        }
        const fb_v3 axis = fb_v3_scale(e, 1.0 / ne);
        double cs[3];
        turn_parts(axis, fb_v3_sub(low_p, H), ground.n, cs);
        bool ok;
        const double swing = harmonic_solve(
            cs[1], cs[2], radius + ground.offset - fb_v3_dot(ground.n, H) - cs[0], 0, &ok);
        if (!ok) {
            break;
        }
        const fb_m3 Q = fb_quat_to_m3(fb_quat_from_axis_angle(axis, swing));
        Rh_new = fb_m3_mul(Q, Rh_new);
        Rk_new = fb_m3_mul(Q, Rk_new);
    }
    double* qh = q + m->q_adr[h];
    fb_quat_store(qh, quat_near(fb_m3_mul(Xh.E, fb_m3_tr_mul(Rhp, Rh_new)), fb_quat_load(qh)));
    /* ankle: the foot's orientation through the shank's new one */
    double* qf = q + m->q_adr[f];
    fb_quat_store(qf, quat_near(fb_m3_mul(m->X_tree[f].E, fb_m3_tr_mul(Rk_new, RT)),
                                fb_quat_load(qf)));
    return exact;
}

/* The toe's shape along its length (toe coordinates) and its radius; false when it has no
 * length (a sphere) or the toe is no hinge. */
bool fb_leg_toe_shape(const fb_model* m, const fb_leg* L, fb_v3* along, fb_v3* start,
                      double* radius) {
    if (L->toe < 0 || m->jtype[L->toe] != FB_JOINT_REVOLUTE) {
        return false;
    }
    const fb_shape* sh = &m->shape[L->toe_shape];
    *start = sh->p0;
    switch (sh->type) {
    case FB_SHAPE_CAPSULE:
        *along = fb_v3_sub(sh->p1, sh->p0);
        *radius = sh->radius;
        return fb_v3_norm(*along) > 0.0;
    case FB_SHAPE_BOX:
        *along = fb_v3_scale(fb_m3_col(sh->R, 0), 0.5 * sh->size.x);
        *start = fb_v3_sub(sh->p0, *along);
        *along = fb_v3_scale(*along, 2.0);
        *radius = 0.5 * sh->size.z;
        return true;
    default:
        return false;
    }
}

/* The toe hinge angle (nearest th) that points leg L's toe, with the foot at orientation RF,
 * as near as the hinge allows to the direction it has at world orientation R_toe. */
double fb_leg_toe_keep(const fb_model* m, const fb_leg* L, fb_m3 RF, fb_m3 R_toe, double th) {
    const fb_v3 along = fb_leg_toe_along(m, L);
    const fb_xf Xt = m->X_tree[L->toe];
    /* the wanted direction in the toe's joint frame; R(a, t) along towards it */
    const fb_v3 want = fb_m3_mv(Xt.E, fb_m3_tr_mv(RF, fb_m3_mv(R_toe, along)));
    double c[3];
    turn_parts(m->axis[L->toe], along, want, c);
    if (!(fb_hypot(c[1], c[2]) > 1e-12)) {
        return th;
    }
    const double t = fb_atan2(c[2], c[1]);
    return th + fb_wrap_angle(t - th);
}

/* How far over the ground the near end of leg L's toe (where it meets the foot, which the
 * toe's hinge does not move) clears it with the foot at (RF, AF) and the toe at angle th;
 * INFINITY without a toe. */
double fb_leg_toe_root_clearance(const fb_model* m, const fb_leg* L, fb_m3 RF, fb_v3 AF,
                                 double th, fb_plane g) {
    fb_v3 along, start;
    double radius;
    if (!fb_leg_toe_shape(m, L, &along, &start, &radius)) {
        return INFINITY;
    }
    const fb_xf Xt = m->X_tree[L->toe];
    const fb_m3 Rt = fb_m3_mul(fb_m3_mul(RF, fb_m3_transpose(Xt.E)),
                               fb_quat_to_m3(fb_quat_from_axis_angle(m->axis[L->toe], th)));
    const fb_v3 p = fb_v3_add(fb_v3_add(AF, fb_m3_mv(RF, Xt.r)), fb_m3_mv(Rt, start));
    return fb_v3_dot(g.n, p) - g.offset - radius;
}

/* The toe's length (toe coordinates): its shape's axis, or its x axis without a long shape. */
fb_v3 fb_leg_toe_along(const fb_model* m, const fb_leg* L) {
    fb_v3 along, start;
    double radius;
    return fb_leg_toe_shape(m, L, &along, &start, &radius) ? along : fb_v3_make(1.0, 0.0, 0.0);
}

/* The toe hinge angle, nearest th, at which the toe's far end is `rise` (m) higher over the
 * plane than its near end, with the foot at orientation RF; th when there is none. */
double fb_leg_toe_angle(const fb_model* m, const fb_leg* L, fb_m3 RF, fb_plane g, double th,
                        double rise, const double* near) {
    fb_v3 along, start;
    double radius;
    if (!fb_leg_toe_shape(m, L, &along, &start, &radius)) {
        return th;
    }
    /* height of R(a, th + t) along, in the toe's joint frame: n_j . R(a, th + t) along */
    const fb_xf Xt = m->X_tree[L->toe];
    const fb_v3 nj = fb_m3_mv(Xt.E, fb_m3_tr_mv(RF, g.n));
    const fb_v3 now = fb_quat_rotate(fb_quat_from_axis_angle(m->axis[L->toe], th), along);
    double c[3];
    turn_parts(m->axis[L->toe], now, nj, c);
    bool exact;
    if (rise != 0.0) {
        const double t = harmonic_solve(c[1], c[2], rise - c[0], 0, &exact);
        return exact ? th + t : th;
    }
    /* lying flat: of the two ways (pointing forwards or back under the foot) the one pointing
     * along the sole's forward axis and, on a foot standing on its toes, bent towards the
     * instep (the kneeling foot's toes), not curled under it */
    const double t1 = harmonic_solve(c[1], c[2], -c[0], 1, &exact);
    const double t2 = harmonic_solve(c[1], c[2], -c[0], -1, &exact);
    if (!exact) {
        return th;
    }
    if (near) {
        /* the way the toe lay a frame before: no flip between frames */
        return fabs(fb_wrap_angle(th + t1 - *near)) <= fabs(fb_wrap_angle(th + t2 - *near)) ? th + t1
                                                                                    : th + t2;
    }
    const fb_v3 pref = fb_m3_mv(Xt.E, fb_v3_sub(L->sole_fwd, L->sole_n)); /* toe joint frame */
    const fb_v3 d1 = fb_quat_rotate(fb_quat_from_axis_angle(m->axis[L->toe], th + t1), along);
    const fb_v3 d2 = fb_quat_rotate(fb_quat_from_axis_angle(m->axis[L->toe], th + t2), along);
    return th + (fb_v3_dot(d1, pref) >= fb_v3_dot(d2, pref) ? t1 : t2);
}

double fb_leg_reach(const fb_model* m, const fb_leg* L, const double* q, double min_bend) {
    const knee_geom g = knee_at(m, L, q);
    return knee_reach(&g, min_bend);
}
