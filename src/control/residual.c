/* What the ground cannot give: the part of a reference's root wrench that no contact force
 * within friction can supply (fb_ref_ground_residual, control.h).
 *
 * A reference's feedforward holds, at a floating root, the wrench the ground would have to
 * supply for the motion (inverse dynamics, gravity included). The contacts of the pose with
 * the ground can give only wrenches G lambda, lambda >= 0 on the edges of their friction
 * pyramids; the nearest such wrench is found as the balance planner finds it (fb_nnls6 over
 * fb_balance_edges), and what is left is what a helper at the root would have to add for the
 * body to follow the reference exactly: issue 18's "residual help", the least an assisted root
 * can need at zero tracking error with these contacts. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "control/balance.h"
#include "featherbone/dynamics.h"
#include "math/nnls.h"
#include "math/spatial.h"
#include "util/error.h"

/* Contacts looked for per frame; the first FB_NNLS6_MAX / FB_BALANCE_EDGES points are used. */
#define RES_MAX_CONTACTS 256
#define RES_MAX_POINTS (FB_NNLS6_MAX / FB_BALANCE_EDGES)

/* N^-2: among distributions giving the same wrench, the smallest forces (as the planner's
 * BAL_FORCE_REG). */
#define RES_FORCE_REG 1e-8

fb_status fb_ref_ground_residual(const fb_model* m, const fb_ref* r, double mu, double margin,
                                 double torque_weight, double* res, int* npoint, fb_error* err) {
    if (m->nbody < 2 || m->jtype[1] != FB_JOINT_FLOATING || r->nv != m->nv || r->nq != m->nq) {
        return fb_fail(err, FB_EINVAL,
                       "ground residual: the reference is not of this model's floating root");
    }
    if (!(mu >= 0.0) || !(margin >= 0.0) || !(torque_weight > 0.0)) {
        return fb_fail(err, FB_EINVAL,
                       "ground residual: expected friction >= 0, margin >= 0 and a torque "
                       "weight > 0 (found %g, %g, %g)",
                       mu, margin, torque_weight);
    }
    fb_data* d = fb_data_create(m, NULL, err);
    fb_contact* con = malloc(RES_MAX_CONTACTS * sizeof *con);
    fb_v3* buf = malloc((2 * RES_MAX_POINTS + FB_NNLS6_MAX) * sizeof *buf);
    double* G = malloc((size_t)(7 * FB_NNLS6_MAX) * sizeof *G);
    bool* passive = malloc(FB_NNLS6_MAX * sizeof *passive);
    fb_status st = FB_OK;
    if (!d || !con || !buf || !G || !passive) {
        st = fb_fail(err, FB_ENOMEM, "ground residual: out of memory");
        goto done;
    }
    fb_v3 *point = buf, *normal = buf + RES_MAX_POINTS, *dir = normal + RES_MAX_POINTS;
    double* lam = G + 6 * FB_NNLS6_MAX;
    const double sw[6] = {torque_weight, torque_weight, torque_weight, 1.0, 1.0, 1.0};
    for (int f = 0; f < r->nframe; f++) {
        memcpy(d->q, r->q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, d);
        int ncon = 0;
        st =
            fb_collide_plane(m, d, 0, fb_ground_plane(), margin, con, &ncon, RES_MAX_CONTACTS, err);
        if (st != FB_OK) {
            goto done;
        }
        int np = 0;
        for (int k = 0; k < ncon && np < RES_MAX_POINTS; k++) {
            point[np] = fb_xf_inv_point(d->X_0[con[k].body_a], con[k].p_a);
            normal[np++] = con[k].n;
        }
        const double* w = r->tau + (size_t)f * (size_t)m->nv;
        const int ne = fb_balance_edges(m, d, point, normal, np, mu, dir, G);
        if (ne == 0 || fb_nnls6(G, ne, sw, w, RES_FORCE_REG, lam, passive) < 0) {
            memset(lam, 0, (size_t)FB_NNLS6_MAX * sizeof *lam);
        }
        double* out = res + 6 * (size_t)f;
        for (int k = 0; k < 6; k++) {
            out[k] = w[k];
        }
        for (int e = 0; e < ne; e++) {
            for (int k = 0; k < 6; k++) {
                out[k] -= G[6 * e + k] * lam[e];
            }
        }
        if (npoint) {
            npoint[f] = np;
        }
    }
    st = fb_ok(err);
done:
    free(passive);
    free(G);
    free(buf);
    free(con);
    fb_data_destroy(d);
    return st;
}
