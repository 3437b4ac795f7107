/* The standing humanoid with PD torques (see stand.h). */
#include "stand.h"

#include <math.h>
#include <string.h>

#include "math/dense.h"
#include "scenes.h"

void stand_gains(const fb_model* m, stand_ctl* c) {
    fb_error err;
    fb_data* d = fb_data_create(m, NULL, &err);
    memset(c, 0, sizeof *c);
    if (!d || m->nv > STAND_MAX_DOF) {
        fb_data_destroy(d);
        return;
    }
    scene_humanoid_standing(m, d->q);
    fb_crba(m, d);
    const int nv = m->nv;
    if (fb_chol_factor(d->M, nv)) {
        for (int j = 0; j < nv; j++) {
            double e[STAND_MAX_DOF] = {0};
            e[j] = 1.0;
            fb_chol_solve(d->M, nv, e); /* column j of M^-1 */
            const double I = 1.0 / e[j];
            c->kp[j] = I * STAND_OMEGA * STAND_OMEGA;
            c->kd[j] = 2.0 * I * STAND_OMEGA;
        }
    }
    fb_data_destroy(d);
}

void stand_pd(bool ball, const double* kp, const double* kd, const double* q, const double* qd,
              double* tau) {
    if (!ball) {
        tau[0] = -kp[0] * q[0] - kd[0] * qd[0];
        return;
    }
    /* the rotation vector of q (shortest arc): 2 atan2(|v|, w) v / |v| */
    const double s = (q[0] < 0.0) ? -1.0 : 1.0;
    const double vx = s * q[1], vy = s * q[2], vz = s * q[3];
    const double n = sqrt(vx * vx + vy * vy + vz * vz);
    const double k = n > 1e-12 ? 2.0 * atan2(n, s * q[0]) / n : 2.0;
    tau[0] = -kp[0] * k * vx - kd[0] * qd[0];
    tau[1] = -kp[1] * k * vy - kd[1] * qd[1];
    tau[2] = -kp[2] * k * vz - kd[2] * qd[2];
}

static fb_status stand_hook(void* user, fb_world* w, fb_hook_phase phase, double t, double h,
                            fb_csys* cs, fb_error* err) {
    (void)t, (void)h, (void)cs, (void)err;
    if (phase != FB_HOOK_FORCES) {
        return FB_OK;
    }
    const stand_ctl* c = user;
    const fb_model* m = fb_world_model(w, 0);
    fb_data* d = fb_world_data(w, 0);
    for (int i = 1; i < m->nbody; i++) {
        const fb_joint_type jt = m->jtype[i];
        if (jt == FB_JOINT_SPHERICAL || jt == FB_JOINT_REVOLUTE) {
            const int v = m->v_adr[i];
            stand_pd(jt == FB_JOINT_SPHERICAL, c->kp + v, c->kd + v, d->q + m->q_adr[i],
                     d->qd + v, d->tau + v);
        }
    }
    return FB_OK;
}

fb_world* stand_world(fb_model** m, stand_ctl* ctl, const fb_world_opts* opts, fb_error* err) {
    *m = scene_humanoid(err);
    if (!*m) {
        return NULL;
    }
    fb_world_opts o = opts ? *opts : fb_default_world_opts();
    o.dt = STAND_DT;
    const fb_model* mc = *m;
    fb_world* w = fb_world_create(1, &mc, &o, NULL, err);
    if (!w) {
        fb_model_destroy(*m);
        *m = NULL;
        return NULL;
    }
    stand_gains(*m, ctl);
    fb_world_set_hook(w, stand_hook, ctl);
    fb_data* d = fb_world_data(w, 0);
    scene_humanoid_standing(*m, d->q);
    fb_status s = FB_OK;
    for (int k = 0; k < STAND_SETTLE_STEPS && s == FB_OK; k++) {
        s = fb_world_step(w, err);
    }
    if (s != FB_OK || (*m)->nq > STAND_MAX_Q) {
        fb_world_destroy(w);
        fb_model_destroy(*m);
        *m = NULL;
        return NULL;
    }
    memcpy(ctl->q0, d->q, (size_t)(*m)->nq * sizeof(double));
    memcpy(ctl->qd0, d->qd, (size_t)(*m)->nv * sizeof(double));
    return w;
}

void stand_reset(fb_world* w, const stand_ctl* ctl) {
    fb_data* d = fb_world_data(w, 0);
    const fb_model* m = fb_world_model(w, 0);
    memcpy(d->q, ctl->q0, (size_t)m->nq * sizeof(double));
    memcpy(d->qd, ctl->qd0, (size_t)m->nv * sizeof(double));
}
