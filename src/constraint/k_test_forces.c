/* K = J M^-1 J^T by test forces [Kokkevis §4.3] (FB_K_TEST_FORCES): one test-force response
 * per row and articulation it touches (accel_deltas.c, ABM_AccelerationDeltas), each row's
 * response to it read off as a column of K and kept (dqdd) for fb_csys_apply; and one
 * articulation's part of a column by test forces, which k_factor.c calls for what
 * FB_K_JOINT_SPACE forms by test forces. */
#include <string.h>

#include "featherbone/constraint.h"
#include "featherbone/dynamics.h"
#include "constraint/accel_deltas.h"
#include "constraint/csys_internal.h"

/* n . (change of the world acceleration of point p on body), from d->da. */
static double point_response(const fb_data* d, int body, fb_v3 p, fb_v3 n) {
    const fb_mv da = d->da[body];
    /* world direction into body coordinates: E n */
    return fb_v3_dot(fb_m3_mv(d->X_0[body].E, n), fb_v3_add(da.v, fb_v3_cross(da.w, p)));
}

/* Adds to column c of K every row's response to the test force just applied to articulation
 * `art` (whose d->da and dqdd it left). */
static void collect(fb_csys* cs, int art, int c, const double* dqdd) {
    const fb_data* d = cs->d[art];
    for (int r = 0; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        double resp = 0.0;
        if (row->type == FB_ROW_DOF) {
            resp = (row->art == art) ? dqdd[row->dof] : 0.0;
        } else if (row->type == FB_ROW_JOINT) {
            resp = (row->art == art) ? joint_dot(cs->m[art], row->body, row->n, dqdd) : 0.0;
        } else {
            if (row->art == art) {
                resp += point_response(d, row->body, row->p, row->n);
            }
            if (row->art_b == art) {
                resp -= point_response(d, row->body_b, row->p_b, row->n);
            }
        }
        cs->K[r * cs->nrow + c] += resp;
    }
}

/* K and the responses by test forces [Kokkevis §4.3]. */
void fb_k_test_forces(fb_csys* cs) {
    const int nr = cs->nrow;
    /* column by column: the test force of row c, in each articulation it touches (one test
     * per articulation: a row within one articulation pushes both its bodies at once) */
    memset(cs->K, 0, (size_t)nr * (size_t)nr * sizeof(double));
    for (int c = 0; c < nr; c++) {
        const fb_row* row = &cs->row[c];
        double* col = cs->dqdd + (size_t)c * (size_t)cs->nv_total;
        memset(col, 0, (size_t)cs->nv_total * sizeof(double));
        const int a = row->art;
        double* qa = col + cs->v_off[a];
        if (row->type == FB_ROW_DOF) {
            fb_accel_delta_dof(cs->m[a], cs->d[a], row->dof, qa);
        } else if (row->type == FB_ROW_JOINT) {
            fb_accel_delta_joint(cs->m[a], cs->d[a], row->body, row->n, qa);
        } else if (row->art_b == a) {
            /* two bodies of one articulation: both forces in one test (collect then sees the
             * difference of the two points' responses) */
            fb_accel_delta_force_pair(
                cs->m[a], cs->d[a], row->body, point_force(cs->d[a], row->body, row->p, row->n),
                row->body_b, point_force(cs->d[a], row->body_b, row->p_b, fb_v3_neg(row->n)), qa);
        } else {
            fb_accel_delta_force(cs->m[a], cs->d[a], row->body,
                                 point_force(cs->d[a], row->body, row->p, row->n), qa);
        }
        collect(cs, a, c, qa);
        if (row->type == FB_ROW_POINT && row->art_b >= 0 && row->art_b != a) {
            const int b = row->art_b;
            double* qb = col + cs->v_off[b];
            fb_accel_delta_force(cs->m[b], cs->d[b], row->body_b,
                                 point_force(cs->d[b], row->body_b, row->p_b, fb_v3_neg(row->n)),
                                 qb);
            collect(cs, b, c, qb);
        }
    }
}

/* Articulation k's part of column c by test forces [Kokkevis §4.3]: the response of k's
 * joints to row c's multiplier acting on k. */
void fb_k_test_force_part(fb_csys* cs, int c, int k) {
    const fb_row* row = &cs->row[c];
    const fb_model* m = cs->m[k];
    fb_data* d = cs->d[k];
    double* out = cs->dqdd + (size_t)c * (size_t)cs->nv_total + cs->v_off[k];
    if (cs->restricted) {
        /* one pass over the bodies the rows reach: the other dofs' responses are not needed */
        int nf = 0, nt = 0;
        fb_row_inputs(cs, c, k, 1.0, &nf, &nt);
        fb_accel_delta_sum(m, d, nf, cs->in_body, cs->in_f, nt, cs->in_dof, cs->in_tau,
                           cs->visit + cs->b_off[k], cs->mark, out);
        return;
    }
    if (row->type == FB_ROW_DOF) {
        fb_accel_delta_dof(m, d, row->dof, out);
    } else if (row->type == FB_ROW_JOINT) {
        fb_accel_delta_joint(m, d, row->body, row->n, out);
    } else if (row->art == k && row->art_b == k) {
        fb_accel_delta_force_pair(m, d, row->body, point_force(d, row->body, row->p, row->n),
                                  row->body_b,
                                  point_force(d, row->body_b, row->p_b, fb_v3_neg(row->n)), out);
    } else if (row->art == k) {
        fb_accel_delta_force(m, d, row->body, point_force(d, row->body, row->p, row->n), out);
    } else {
        fb_accel_delta_force(m, d, row->body_b,
                             point_force(d, row->body_b, row->p_b, fb_v3_neg(row->n)), out);
    }
}
