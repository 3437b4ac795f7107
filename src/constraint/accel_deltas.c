/* Test-force responses: ABM_AccelerationDeltas [Kokkevis §4.3], generalised to multi-dof
 * joints (U = I^A S is 6 x n_i, D is n_i x n_i).
 *
 * The response to a test force is ABA phase 2 with every velocity and gravity term zero and
 * only the test force as input: the bias forces change only on the path from the pushed body
 * to the root (one backward pass along it), and the accelerations then change everywhere below
 * that path (one forward pass). Both passes use ABA's own per-body kernels (dynamics/aba.h). */
#include <assert.h>
#include <string.h>

#include "constraint/accel_deltas.h"

#include "featherbone/constraint.h"
#include "dynamics/aba.h"
#include "math/spatial.h"

/* One body of the backward pass: body j's bias force changed by dpA (all of it: every child's
 * share already added); sets du of j's dofs and returns the change j hands to its parent, in
 * the parent's coordinates. */
static fb_fv backward_one(const fb_model* m, fb_data* d, int j, fb_fv dpA) {
    const int k0 = m->v_adr[j];
    /* u = tau - S^T p^A and tau does not change: du = -S^T dpA (plus any test torque already
     * placed in du by the caller) */
    for (int k = 0; k < m->jnv[j]; k++) {
        d->du[k0 + k] -= fb_mv_dot_fv(m->S[k0 + k], dpA);
    }
    d->dpA[j] = dpA;
    const fb_fv pa = fb_aba_bias_up(m, d, j, dpA, d->du + k0, NULL);
    return fb_xf_tr_fv(d->X_up[j], pa);
}

/* Backward pass from body i, whose bias force changed by dpA_i, to the root: du along the
 * path (du of other dofs zero), each body's changed bias handed to its parent. */
static void backward_from(const fb_model* m, fb_data* d, int i, fb_fv dpA_i) {
    fb_fv dpA = dpA_i;
    for (int j = i; j != 0; j = m->parent[j]) {
        dpA = backward_one(m, d, j, dpA);
    }
}

/* Forward pass over every body: da and dqdd from du (velocity products and gravity are not
 * part of a response). */
static void forward_all(const fb_model* m, fb_data* d, double* dqdd) {
    d->da[0] = fb_mv_zero();
    for (int i = 1; i < m->nbody; i++) {
        const int k0 = m->v_adr[i];
        const fb_mv a1 = fb_xf_mv(d->X_up[i], d->da[m->parent[i]]);
        d->da[i] = fb_aba_accel_down(m, d, i, a1, d->du + k0, dqdd + k0);
    }
}

void fb_accel_delta_force(const fb_model* m, fb_data* d, int body, fb_fv f, double* dqdd) {
    assert(d->stage & FB_STAGE_ABA1);
    memset(d->du, 0, (size_t)m->nv * sizeof(double));
    /* an external force enters p^A with a minus sign [RBDA T7.1] */
    backward_from(m, d, body, fb_fv_scale(fb_xf_fv(d->X_0[body], f), -1.0));
    forward_all(m, d, dqdd);
}

void fb_accel_delta_force_pair(const fb_model* m, fb_data* d, int body_a, fb_fv f_a, int body_b,
                               fb_fv f_b, double* dqdd) {
    assert(d->stage & FB_STAGE_ABA1);
    memset(d->du, 0, (size_t)m->nv * sizeof(double));
    /* the two paths to the root walked together, the higher-numbered body first: parent[i] < i,
     * so that body is no ancestor of the other and nothing more arrives at it. Where the paths
     * meet, the two changes add and go on to the root as one */
    int i = body_a, j = body_b;
    fb_fv dpA_i = fb_fv_scale(fb_xf_fv(d->X_0[i], f_a), -1.0);
    fb_fv dpA_j = fb_fv_scale(fb_xf_fv(d->X_0[j], f_b), -1.0);
    while (i != j) {
        if (i > j) {
            dpA_i = backward_one(m, d, i, dpA_i);
            i = m->parent[i];
        } else {
            dpA_j = backward_one(m, d, j, dpA_j);
            j = m->parent[j];
        }
    }
    backward_from(m, d, i, fb_fv_add(dpA_i, dpA_j));
    forward_all(m, d, dqdd);
}

void fb_accel_delta_dof(const fb_model* m, fb_data* d, int dof, double* dqdd) {
    assert(d->stage & FB_STAGE_ABA1);
    memset(d->du, 0, (size_t)m->nv * sizeof(double));
    d->du[dof] = 1.0; /* a unit generalised force on the dof: du = e_dof */
    backward_from(m, d, m->dof_body[dof], fb_fv_zero());
    forward_all(m, d, dqdd);
}

void fb_accel_delta_joint(const fb_model* m, fb_data* d, int body, fb_v3 w, double* dqdd) {
    assert(d->stage & FB_STAGE_ABA1);
    memset(d->du, 0, (size_t)m->nv * sizeof(double));
    const double wk[3] = {w.x, w.y, w.z};
    for (int k = 0; k < m->jnv[body] && k < 3; k++) {
        d->du[m->v_adr[body] + k] = wk[k];
    }
    backward_from(m, d, body, fb_fv_zero());
    forward_all(m, d, dqdd);
}

/* Marks body i and its ancestors in mark (stops at the first one already marked). */
static void mark_path(const fb_model* m, int i, unsigned char* mark) {
    for (int j = i; j > 0 && !mark[j]; j = m->parent[j]) {
        mark[j] = 1;
    }
}

/* Marks the union of the paths from the forces' bodies and the dofs' bodies to the root, and
 * clears the bias change dpA and the generalised-force change du of every body on it. */
static void mark_union(const fb_model* m, fb_data* d, int nforce, const int* body, int ntau,
                       const int* dof, unsigned char* mark, double* du) {
    memset(mark, 0, (size_t)m->nbody);
    for (int k = 0; k < nforce; k++) {
        mark_path(m, body[k], mark);
    }
    for (int k = 0; k < ntau; k++) {
        mark_path(m, m->dof_body[dof[k]], mark);
    }
    for (int i = 1; i < m->nbody; i++) {
        if (mark[i]) {
            d->dpA[i] = fb_fv_zero();
            for (int k = m->v_adr[i]; k < m->v_adr[i] + m->jnv[i]; k++) {
                du[k] = 0.0;
            }
        }
    }
}

void fb_accel_delta_sum(const fb_model* m, fb_data* d, int nforce, const int* body,
                        const fb_fv* f, int ntau, const int* dof, const double* tau,
                        const unsigned char* visit, unsigned char* mark, double* dqdd) {
    assert(d->stage & FB_STAGE_ABA1);
    mark_union(m, d, nforce, body, ntau, dof, mark, d->du);
    /* an external force enters p^A with a minus sign [RBDA T7.1]; a generalised force on a
     * dof enters u */
    for (int k = 0; k < nforce; k++) {
        d->dpA[body[k]] = fb_fv_sub(d->dpA[body[k]], fb_xf_fv(d->X_0[body[k]], f[k]));
    }
    for (int k = 0; k < ntau; k++) {
        d->du[dof[k]] += tau[k];
    }
    /* one backward pass over the union of the paths, leaves first: every body's change of
     * bias is complete (its own and its children's) when it is reached */
    for (int j = m->nbody - 1; j >= 1; j--) {
        if (!mark[j]) {
            continue;
        }
        const fb_fv up = backward_one(m, d, j, d->dpA[j]);
        const int p = m->parent[j];
        if (p != 0) {
            d->dpA[p] = fb_fv_add(d->dpA[p], up);
        }
    }
    /* the forward pass: bodies off the union have du = 0; those not visited are skipped (a
     * visit set is closed under parents: paths to the root) */
    d->da[0] = fb_mv_zero();
    for (int i = 1; i < m->nbody; i++) {
        if (visit && !visit[i]) {
            continue;
        }
        const int k0 = m->v_adr[i];
        const fb_mv a1 = fb_xf_mv(d->X_up[i], d->da[m->parent[i]]);
        if (mark[i]) {
            d->da[i] = fb_aba_accel_down(m, d, i, a1, d->du + k0, dqdd + k0);
        } else {
            const double zero[FB_JOINT_NV_MAX] = {0.0};
            d->da[i] = fb_aba_accel_down(m, d, i, a1, zero, dqdd + k0);
        }
    }
}

int fb_accel_delta_backward(const fb_model* m, fb_data* d, int nforce, const int* body,
                            const fb_fv* f, int ntau, const int* dof, const double* tau,
                            unsigned char* mark, int* path, double* du, double* y) {
    assert(d->stage & FB_STAGE_ABA1);
    if (nforce == 1 && ntau == 0 && body[0] > 0) {
        /* one force (a contact's row): straight up its path */
        int n = 0;
        fb_fv dpA = fb_fv_scale(fb_xf_fv(d->X_0[body[0]], f[0]), -1.0);
        for (int j = body[0]; j != 0; j = m->parent[j]) {
            path[n++] = j;
            const int k0 = m->v_adr[j];
            for (int k = 0; k < m->jnv[j]; k++) {
                du[k0 + k] = 0.0;
            }
            dpA = fb_aba_response_up(m, d, j, dpA, du + k0, y + k0);
        }
        return n;
    }
    mark_union(m, d, nforce, body, ntau, dof, mark, du);
    /* an external force enters p^A with a minus sign [RBDA T7.1]; a generalised force on a
     * dof enters u */
    for (int k = 0; k < nforce; k++) {
        if (body[k] > 0) {
            d->dpA[body[k]] = fb_fv_sub(d->dpA[body[k]], fb_xf_fv(d->X_0[body[k]], f[k]));
        }
    }
    for (int k = 0; k < ntau; k++) {
        du[dof[k]] += tau[k];
    }
    /* leaves first: a body's change of bias is complete when it is reached */
    int n = 0;
    for (int j = m->nbody - 1; j >= 1; j--) {
        if (!mark[j]) {
            continue;
        }
        path[n++] = j;
        const int k0 = m->v_adr[j];
        const fb_fv up = fb_aba_response_up(m, d, j, d->dpA[j], du + k0, y + k0);
        const int p = m->parent[j];
        if (p != 0) {
            d->dpA[p] = fb_fv_add(d->dpA[p], up);
        }
    }
    return n;
}

void fb_accel_delta_forward(const fb_model* m, fb_data* d, double* dqdd) {
    assert(d->stage & FB_STAGE_ABA1);
    forward_all(m, d, dqdd);
}
