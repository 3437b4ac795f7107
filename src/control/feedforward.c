/* The reference's feedforward [Cline §5.1, eqs 5.7-5.8]: the velocities and accelerations the
 * integrator will have on the fitted path (v_step, a_step), the joint torques of inverse
 * dynamics along it by RNEA [RBDA T5.1], and those torques written out as CSV. */
#include <stdio.h>
#include <string.h>

#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "control/ref_internal.h"
#include "util/atomic_file.h"

void fb_ref_feedforward(const fb_model* m, fb_ref* r, double* qs, int nsample,
                        double sample_dt, const int (*pairs)[2], const int* choice,
                        fb_data* d) {
    /* The integrator-consistent velocities and accelerations (see fb_ref in control.h):
     * v_step[i] = (q[i-1] (-) q[i]) / dt, q[-1] from the fit extrapolated one frame back;
     * a_step[i] = (v_step[i+1] - v_step[i]) / dt (fb_velocity_rate: a floating root's linear
     * part as the world steps it); the last frame keeps the one before. */
    double* qm1 = qs + (size_t)nsample * (size_t)m->nq;
    double* vtmp = qm1 + m->nq;
    double* atmp = vtmp + m->nv;
    fb_q_neutral(m, qm1);
    (void)fb_fit_frame(m, nsample, sample_dt, qs, -r->dt / sample_dt, pairs, choice, qm1, vtmp,
                       atmp);
    fb_difference(m, qm1, r->q, r->v_step);
    for (int j = 0; j < m->nv; j++) {
        r->v_step[j] /= r->dt;
    }
    fb_ref_step_velocities(m, r);
    fb_ref_step_torques(m, r, d);
}

void fb_ref_step_velocities(const fb_model* m, fb_ref* r) {
    fb_ref_step_velocities_range(m, r, 1, r->nframe);
}

void fb_ref_step_velocities_range(const fb_model* m, fb_ref* r, long from, long to) {
    for (long i = from > 1 ? from : 1; i < to; i++) {
        const double* qi = r->q + (size_t)i * (size_t)m->nq;
        double* vs = r->v_step + (size_t)i * (size_t)m->nv;
        fb_difference(m, qi - m->nq, qi, vs);
        for (int j = 0; j < m->nv; j++) {
            vs[j] /= r->dt;
        }
    }
}

void fb_ref_step_torques(const fb_model* m, fb_ref* r, fb_data* d) {
    fb_ref_step_torques_range(m, r, d, 0, r->nframe);
}

void fb_ref_step_torques_range(const fb_model* m, fb_ref* r, fb_data* d, long from, long to) {
    const long nf = r->nframe;
    const double dt = r->dt;
    for (long i = from; i < to; i++) {
        double* as = r->a_step + (size_t)i * (size_t)m->nv;
        const double* vs = r->v_step + (size_t)i * (size_t)m->nv;
        if (i + 1 < nf) {
            fb_velocity_rate(m, vs, vs + m->nv, dt, as);
        } else if (nf > 1) {
            memcpy(as, as - m->nv, (size_t)m->nv * sizeof(double));
        } else {
            memcpy(as, r->a, (size_t)m->nv * sizeof(double));
        }
        /* feedforward: psi = M a + C (gravity, velocity products, damping) at the state the
         * integrator will have */
        memcpy(d->q, r->q + (size_t)i * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        memcpy(d->qd, vs, (size_t)m->nv * sizeof(double));
        fb_rnea(m, d, as, r->tau + (size_t)i * (size_t)m->nv);
    }
}

/* One column name per dof: the joint's name and its axis ("LeftElbow", "Neck.x", "Hips.fy"). */
static void dof_label(const fb_model* m, int j, char* out, size_t cap) {
    const int b = m->dof_body[j], k = j - m->v_adr[b];
    static const char* const AXES3[] = {"x", "y", "z"};
    static const char* const AXES6[] = {"nx", "ny", "nz", "fx", "fy", "fz"};
    switch (m->jtype[b]) {
    case FB_JOINT_SPHERICAL:
        snprintf(out, cap, "%s.%s", m->name[b], AXES3[k]);
        break;
    case FB_JOINT_FLOATING:
        snprintf(out, cap, "%s.%s", m->name[b], AXES6[k]);
        break;
    default:
        snprintf(out, cap, "%s", m->name[b]);
    }
}

fb_status fb_ref_write_torques_csv(const fb_model* m, const fb_ref* r, const char* path,
                                   fb_error* err) {
    fb_atomic_file af;
    fb_status s = fb_atomic_open(&af, path, err);
    if (s != FB_OK) {
        return s;
    }
    fputs("time_s", af.f);
    for (int j = 0; j < m->nv; j++) {
        char label[FB_NAME_MAX + 8];
        dof_label(m, j, label, sizeof label);
        fprintf(af.f, ",%s", label);
    }
    fputc('\n', af.f);
    for (int i = 0; i < r->nframe; i++) {
        fprintf(af.f, "%.6f", i * r->dt);
        for (int j = 0; j < m->nv; j++) {
            fprintf(af.f, ",%.6g", r->tau[(size_t)i * (size_t)m->nv + (size_t)j]);
        }
        fputc('\n', af.f);
    }
    return fb_atomic_commit(&af, err);
}

void fb_dof_label(const fb_model* m, int dof, char* out, size_t cap) {
    dof_label(m, dof, out, cap);
}
