/* Joint-range geometry (limit.h): swing coordinates and the swing constraint's row. */
#include "model/limit.h"
#include "math/detmath.h"

#include <math.h>

#include "math/quat.h"

/* sin(theta) below which the swing direction is taken as undefined (theta within 1e-12 rad of
 * 0 or pi): a direction made from a vector that short would be rounding noise. */
#define SWING_SIN_MIN 1e-12

/* b = R(q) a, and its split about d0: cos, sin and the unit in-plane part e. */
typedef struct swing_geom {
    fb_m3 R;
    double c, s, theta;
    fb_v3 e, k;
} swing_geom;

static swing_geom swing_about(const fb_joint_limit* L, fb_quat q) {
    swing_geom g;
    g.R = fb_quat_to_m3(q);
    const fb_v3 b = fb_m3_mv(g.R, L->twist_axis);
    g.c = fb_v3_dot(L->neutral, b);
    const fb_v3 p = fb_v3_sub(b, fb_v3_scale(L->neutral, g.c));
    g.s = fb_v3_norm(p);
    g.theta = fb_atan2(g.s, g.c);
    g.e = g.s > SWING_SIN_MIN ? fb_v3_scale(p, 1.0 / g.s) : fb_v3_zero();
    g.k = fb_v3_cross(L->neutral, g.e);
    return g;
}

double fb_limit_swing_coords(const fb_joint_limit* L, fb_quat q, double s[2]) {
    const swing_geom g = swing_about(L, q);
    const fb_v3 sv = fb_v3_scale(g.k, g.theta);
    s[0] = fb_v3_dot(sv, L->swing_axis);
    s[1] = fb_v3_dot(sv, fb_v3_cross(L->neutral, L->swing_axis));
    return g.theta;
}

double fb_limit_ellipse(const fb_joint_limit* L, const double s[2], double G[2]) {
    /* each quadrant its own quarter ellipse: the radii on the side s lies */
    const double r1 = s[0] >= 0.0 ? L->swing_hi[0] : -L->swing_lo[0];
    const double r2 = s[1] >= 0.0 ? L->swing_hi[1] : -L->swing_lo[1];
    const double x = s[0] / r1, y = s[1] / r2;
    const double g = sqrt(x * x + y * y);
    if (G) {
        G[0] = g > 0.0 ? x / (r1 * g) : 0.0;
        G[1] = g > 0.0 ? y / (r2 * g) : 0.0;
    }
    return g;
}

/* The circular cone about the rest axis a: the swing angle between a and b = R a grows at
 * n . w with n = R^T (a x b) / |a x b|. */
static bool cone_swing(const fb_joint_limit* L, fb_quat q, fb_v3* n, double* depth) {
    const fb_v3 a = L->twist_axis;
    const fb_m3 R = fb_quat_to_m3(q);
    const fb_v3 b = fb_m3_mv(R, a);
    const fb_v3 axb = fb_v3_cross(a, b);
    const double sin_s = fb_v3_norm(axb);
    if (!(sin_s > 1e-9)) {
        return false;
    }
    *n = fb_m3_tr_mv(R, fb_v3_scale(axb, 1.0 / sin_s));
    *depth = atan2(sin_s, fb_v3_dot(a, b)) - L->swing;
    return true;
}

bool fb_limit_swing(const fb_joint_limit* L, fb_quat q, fb_v3* n, double* depth) {
    if (!L->elliptic) {
        return cone_swing(L, q, n, depth);
    }
    const swing_geom g = swing_about(L, q);
    if (!(g.s > SWING_SIN_MIN)) {
        return false;
    }
    const fb_v3 u1 = L->swing_axis, u2 = fb_v3_cross(L->neutral, u1);
    const fb_v3 sv = fb_v3_scale(g.k, g.theta);
    const double s[2] = {fb_v3_dot(sv, u1), fb_v3_dot(sv, u2)};
    double G[2];
    const double gval = fb_limit_ellipse(L, s, G);
    if (!(fb_hypot(G[0], G[1]) > 0.0)) {
        return false;
    }
    /* s' = theta' k - (theta / sin) (b' . k) e with theta' = w.k, b'.k = w.(sin d0 - cos e),
     * w = R w_child the angular velocity in the joint frame */
    const fb_v3 Gv = fb_v3_add(fb_v3_scale(u1, G[0]), fb_v3_scale(u2, G[1]));
    const double Gk = fb_v3_dot(Gv, g.k), Ge = fb_v3_dot(Gv, g.e);
    fb_v3 gdot = fb_v3_scale(g.k, Gk);
    gdot = fb_v3_sub(gdot, fb_v3_scale(L->neutral, g.theta * Ge));
    gdot = fb_v3_add(gdot, fb_v3_scale(g.e, g.theta * g.c / g.s * Ge));
    /* |gdot|^2 = (G.k)^2 + (theta / sin)^2 (G.e)^2 >= |G|^2 > 0 */
    const double rate = fb_v3_norm(gdot);
    *n = fb_v3_scale(fb_m3_tr_mv(g.R, gdot), 1.0 / rate);
    *depth = (gval - 1.0) / rate;
    return true;
}

double fb_limit_twist(fb_v3 a, fb_quat q, fb_v3* T) {
    const fb_v3 v = {q.x, q.y, q.z};
    const double p = fb_v3_dot(v, a), den = q.w * q.w + p * p;
    if (den > SWING_SIN_MIN) {
        fb_v3 t = fb_v3_scale(a, q.w * q.w);
        t = fb_v3_add(t, fb_v3_scale(fb_v3_cross(a, v), q.w));
        *T = fb_v3_scale(fb_v3_add(t, fb_v3_scale(v, p)), 1.0 / den);
    } else {
        *T = a;
    }
    return fb_quat_twist(q, a);
}

/* Iterations of fb_limit_project: each a first-order step back to the boundary, whose error
 * is second order in the overshoot; a few degrees past a stop is gone to rounding in four. */
#define PROJECT_ITER 8

void fb_limit_project(const fb_joint_limit* L, fb_joint_type type, double* q) {
    if (!L->on) {
        return;
    }
    if (type == FB_JOINT_REVOLUTE || type == FB_JOINT_PRISMATIC) {
        q[0] = fmin(L->hi, fmax(L->lo, q[0]));
        return;
    }
    if (type != FB_JOINT_SPHERICAL) {
        return;
    }
    /* alternate steps on the swing and the twist: q <- q exp(-depth n) moves the swing back by
     * depth to first order (depth' = n . w, w in child coordinates), q <- q exp(dt T / |T|^2)
     * the twist by dt */
    fb_quat r = fb_quat_load(q);
    for (int it = 0; it < PROJECT_ITER; it++) {
        bool moved = false;
        fb_v3 n;
        double depth;
        if (fb_limit_swing(L, r, &n, &depth) && depth > 0.0) {
            r = fb_quat_normalize(fb_quat_mul(r, fb_quat_exp(fb_v3_scale(n, -depth))));
            moved = true;
        }
        fb_v3 T;
        const double tw = fb_limit_twist(L->twist_axis, r, &T);
        const double want = fmin(L->hi, fmax(L->lo, tw));
        const double t2 = fb_v3_dot(T, T);
        if (want != tw && t2 > 0.0) {
            r = fb_quat_normalize(fb_quat_mul(r, fb_quat_exp(fb_v3_scale(T, (want - tw) / t2))));
            moved = true;
        }
        if (!moved) {
            break;
        }
    }
    fb_quat_store(q, r);
}
