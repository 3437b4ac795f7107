/* Joint-space inertia: the composite-rigid-body algorithm [RBDA T6.2]. */
#include <string.h>

#include "featherbone/dynamics.h"
#include "math/spatial.h"
#include "model/joint.h"

void fb_crba(const fb_model* m, fb_data* d) {
    fb_kinematics_pos(m, d);
    const int nv = m->nv;
    memset(d->M, 0, (size_t)nv * (size_t)nv * sizeof(double));
    for (int i = 1; i < m->nbody; i++) {
        d->IC[i] = m->I[i];
    }
    /* leaves to root: composite inertias */
    for (int i = m->nbody - 1; i >= 1; i--) {
        const int p = m->parent[i];
        if (p != 0) {
            d->IC[p] = fb_rbi_add(d->IC[p], fb_xf_tr_rbi(d->X_up[i], d->IC[i]));
        }
    }
    /* each body's F = I^c S, carried up the chain of ancestors: M_ij = F^T S_j */
    for (int i = m->nbody - 1; i >= 1; i--) {
        const int k0 = m->v_adr[i], n = m->jnv[i];
        for (int c = 0; c < n; c++) {
            d->F[k0 + c] = fb_rbi_mv(d->IC[i], m->S[k0 + c]);
            for (int r = 0; r < n; r++) {
                d->M[(k0 + r) * nv + k0 + c] = fb_mv_dot_fv(m->S[k0 + r], d->F[k0 + c]);
            }
        }
        for (int j = i; m->parent[j] != 0;) {
            const fb_xf X = d->X_up[j];
            j = m->parent[j];
            const int j0 = m->v_adr[j];
            for (int c = 0; c < n; c++) {
                d->F[k0 + c] = fb_xf_tr_fv(X, d->F[k0 + c]);
                for (int r = 0; r < m->jnv[j]; r++) {
                    const double Mij = fb_mv_dot_fv(m->S[j0 + r], d->F[k0 + c]);
                    d->M[(j0 + r) * nv + k0 + c] = Mij;
                    d->M[(k0 + c) * nv + j0 + r] = Mij;
                }
            }
        }
    }
    d->stage |= FB_STAGE_CRBA;
}
