/* Point and body Jacobians: the columns are the motion subspaces of the body's ancestors. */
#include <assert.h>
#include <string.h>

#include "featherbone/dynamics.h"
#include "math/spatial.h"

void fb_jac_point(const fb_model* m, const fb_data* d, int i, fb_v3 p, double* J) {
    assert(d->stage & FB_STAGE_POS);
    const int nv = m->nv;
    memset(J, 0, 3 * (size_t)nv * sizeof(double));
    const fb_v3 p_w = fb_xf_inv_point(d->X_0[i], p);
    for (int j = i; j != 0; j = m->parent[j]) {
        for (int k = m->v_adr[j]; k < m->v_adr[j] + m->jnv[j]; k++) {
            /* S_k in world coordinates (about the world origin), then the velocity it gives
             * the point p_w */
            const fb_mv s = fb_xf_inv_mv(d->X_0[j], m->S[k]);
            const fb_v3 col = fb_v3_add(s.v, fb_v3_cross(s.w, p_w));
            J[k] = col.x;
            J[nv + k] = col.y;
            J[2 * nv + k] = col.z;
        }
    }
}

void fb_jac_body(const fb_model* m, const fb_data* d, int i, double* J) {
    assert(d->stage & FB_STAGE_POS);
    const int nv = m->nv;
    memset(J, 0, 6 * (size_t)nv * sizeof(double));
    for (int j = i; j != 0; j = m->parent[j]) {
        /* body j -> body i: iX_0 (jX_0)^-1 */
        const fb_xf X = fb_xf_mul(d->X_0[i], fb_xf_inv(d->X_0[j]));
        for (int k = m->v_adr[j]; k < m->v_adr[j] + m->jnv[j]; k++) {
            const fb_mv s = fb_xf_mv(X, m->S[k]);
            for (int r = 0; r < 6; r++) {
                J[r * nv + k] = fb_mv_get(s, r);
            }
        }
    }
}
