/* Joints: jcalc [RBDA §4.4, Table 4.1] (joint transform and velocity) and the configuration
 * manifold (integrate, difference, normalise). This is the one place that switches on the
 * joint type; the algorithms loop over the columns of S. */
#include "model/joint.h"

#include "featherbone/dynamics.h"

#include <math.h>
#include <string.h>

#include "math/quat.h"
#include "util/error.h"

void fb_jcalc(const fb_model* m, int i, const double* q, fb_xf* XJ) {
    const double* qi = q + m->q_adr[i];
    /* XJ maps joint-frame coordinates to body coordinates: E = R^T for a child rotated by R,
     * r = the child origin in joint-frame coordinates [RBDA Table 4.1] */
    switch (m->jtype[i]) {
    case FB_JOINT_FIXED:
        *XJ = fb_xf_identity();
        break;
    case FB_JOINT_REVOLUTE:
        *XJ = fb_xf_rot(
            fb_m3_transpose(fb_quat_to_m3(fb_quat_from_axis_angle(m->axis[i], qi[0]))));
        break;
    case FB_JOINT_PRISMATIC:
        *XJ = fb_xf_xlt(fb_v3_scale(m->axis[i], qi[0]));
        break;
    case FB_JOINT_SPHERICAL:
        *XJ = fb_xf_rot(fb_m3_transpose(fb_quat_to_m3(fb_quat_load(qi))));
        break;
    case FB_JOINT_FLOATING:
        *XJ = (fb_xf){fb_m3_transpose(fb_quat_to_m3(fb_quat_load(qi + 3))),
                      fb_v3_make(qi[0], qi[1], qi[2])};
        break;
    }
}

void fb_q_neutral(const fb_model* m, double* q) {
    for (int k = 0; k < m->nq; k++) {
        q[k] = m->q_neutral[k];
    }
}

void fb_integrate(const fb_model* m, const double* q, const double* v, double dt, double* q_out) {
    for (int i = 1; i < m->nbody; i++) {
        const double* qi = q + m->q_adr[i];
        const double* vi = v + m->v_adr[i];
        double* qo = q_out + m->q_adr[i];
        switch (m->jtype[i]) {
        case FB_JOINT_FIXED:
            break;
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC:
            qo[0] = qi[0] + vi[0] * dt;
            break;
        case FB_JOINT_SPHERICAL: {
            /* w is in child coordinates, so the increment multiplies on the right */
            const fb_quat r = fb_quat_exp(fb_v3_scale(fb_v3_make(vi[0], vi[1], vi[2]), dt));
            fb_quat_store(qo, fb_quat_normalize(fb_quat_mul(fb_quat_load(qi), r)));
            break;
        }
        case FB_JOINT_FLOATING: {
            /* orientation as for a spherical joint; the position moves by the body-frame
             * linear velocity rotated with the orientation at the end of the step, the frame
             * the velocity is in after it (fb_velocity_step) */
            const fb_quat r = fb_quat_exp(fb_v3_scale(fb_v3_make(vi[0], vi[1], vi[2]), dt));
            const fb_quat q1 = fb_quat_normalize(fb_quat_mul(fb_quat_load(qi + 3), r));
            const fb_v3 dp = fb_quat_rotate(q1, fb_v3_make(vi[3], vi[4], vi[5]));
            qo[0] = qi[0] + dp.x * dt;
            qo[1] = qi[1] + dp.y * dt;
            qo[2] = qi[2] + dp.z * dt;
            fb_quat_store(qo + 3, q1);
            break;
        }
        }
    }
}

void fb_difference(const fb_model* m, const double* q0, const double* q1, double* v) {
    for (int i = 1; i < m->nbody; i++) {
        const double* a = q0 + m->q_adr[i];
        const double* b = q1 + m->q_adr[i];
        double* vi = v + m->v_adr[i];
        switch (m->jtype[i]) {
        case FB_JOINT_FIXED:
            break;
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC:
            vi[0] = b[0] - a[0];
            break;
        case FB_JOINT_SPHERICAL: {
            const fb_v3 w = fb_quat_log(fb_quat_mul(fb_quat_conj(fb_quat_load(a)),
                                                    fb_quat_load(b)));
            vi[0] = w.x;
            vi[1] = w.y;
            vi[2] = w.z;
            break;
        }
        case FB_JOINT_FLOATING: {
            /* as fb_integrate: the orientation's step, then the position's in the end frame
             * (that of q0 turned by the step, q1's to rounding) */
            const fb_quat qa = fb_quat_load(a + 3);
            const fb_v3 w = fb_quat_log(fb_quat_mul(fb_quat_conj(qa), fb_quat_load(b + 3)));
            const fb_quat qe = fb_quat_normalize(fb_quat_mul(qa, fb_quat_exp(w)));
            const fb_v3 dp = fb_v3_make(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
            const fb_v3 vl = fb_quat_rotate(fb_quat_conj(qe), dp);
            vi[0] = w.x;
            vi[1] = w.y;
            vi[2] = w.z;
            vi[3] = vl.x;
            vi[4] = vl.y;
            vi[5] = vl.z;
            break;
        }
        }
    }
}

void fb_velocity_step(const fb_model* m, double* qd, const double* qdd, double dt) {
    for (int i = 1; i < m->nbody; i++) {
        double* v = qd + m->v_adr[i];
        const double* a = qdd + m->v_adr[i];
        if (m->jtype[i] != FB_JOINT_FLOATING) {
            for (int k = 0; k < m->jnv[i]; k++) {
                v[k] += dt * a[k];
            }
            continue;
        }
        /* the classical acceleration of the origin, R (a_lin + w x v), taken in the world;
         * the new velocity back in the body's frame after the step, turned by exp(dt w') */
        const fb_v3 w0 = fb_v3_make(v[0], v[1], v[2]), v0 = fb_v3_make(v[3], v[4], v[5]);
        const fb_v3 al = fb_v3_add(fb_v3_make(a[3], a[4], a[5]), fb_v3_cross(w0, v0));
        const fb_v3 w1 = fb_v3_add(w0, fb_v3_scale(fb_v3_make(a[0], a[1], a[2]), dt));
        const fb_v3 v1 = fb_quat_rotate(fb_quat_exp(fb_v3_scale(w1, -dt)),
                                        fb_v3_add(v0, fb_v3_scale(al, dt)));
        const double out[6] = {w1.x, w1.y, w1.z, v1.x, v1.y, v1.z};
        memcpy(v, out, sizeof out);
    }
}

void fb_velocity_rate(const fb_model* m, const double* v0, const double* v1, double dt,
                      double* qdd) {
    for (int i = 1; i < m->nbody; i++) {
        const int o = m->v_adr[i];
        if (m->jtype[i] != FB_JOINT_FLOATING) {
            for (int k = 0; k < m->jnv[i]; k++) {
                qdd[o + k] = (v1[o + k] - v0[o + k]) / dt;
            }
            continue;
        }
        const fb_v3 w0 = fb_v3_make(v0[o], v0[o + 1], v0[o + 2]);
        const fb_v3 w1 = fb_v3_make(v1[o], v1[o + 1], v1[o + 2]);
        const fb_v3 l0 = fb_v3_make(v0[o + 3], v0[o + 4], v0[o + 5]);
        const fb_v3 l1 = fb_quat_rotate(fb_quat_exp(fb_v3_scale(w1, dt)),
                                        fb_v3_make(v1[o + 3], v1[o + 4], v1[o + 5]));
        const fb_v3 al = fb_v3_sub(fb_v3_scale(fb_v3_sub(l1, l0), 1.0 / dt), fb_v3_cross(w0, l0));
        const fb_v3 aw = fb_v3_scale(fb_v3_sub(w1, w0), 1.0 / dt);
        const double out[6] = {aw.x, aw.y, aw.z, al.x, al.y, al.z};
        memcpy(qdd + o, out, sizeof out);
    }
}

/* Index within the joint's q of its quaternion, or -1. */
static int quat_offset(fb_joint_type t) {
    return t == FB_JOINT_SPHERICAL ? 0 : (t == FB_JOINT_FLOATING ? 3 : -1);
}

fb_status fb_normalize_q(const fb_model* m, double* q, fb_error* err) {
    for (int i = 1; i < m->nbody; i++) {
        const int off = quat_offset(m->jtype[i]);
        if (off < 0) {
            continue;
        }
        double* qq = q + m->q_adr[i] + off;
        const double n = fb_quat_norm(fb_quat_load(qq));
        if (!(n > 0.0) || !isfinite(n)) {
            return fb_fail(err, FB_ENUMERIC,
                           "body '%s': q[%d..%d]: expected a non-zero finite quaternion",
                           m->name[i], m->q_adr[i] + off, m->q_adr[i] + off + 3);
        }
        fb_quat_store(qq, fb_quat_normalize(fb_quat_load(qq)));
    }
    return fb_ok(err);
}
