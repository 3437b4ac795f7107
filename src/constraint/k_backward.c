/* K = J M^-1 J^T by backward passes alone (FB_K_BACKWARD) [Featherstone 2010]: one backward
 * pass of ABA's response kernels [RBDA T7.1] per row (accel_deltas.c), and K as the dot
 * products of the rows' du with each other's D^-1 du over the bodies their paths share; the
 * rows' du stay for fb_csys_apply (one forward pass for all the multipliers). */
#include <string.h>

#include "featherbone/constraint.h"
#include "constraint/accel_deltas.h"
#include "constraint/csys_internal.h"
#include "dynamics/aba.h"
#include "math/spatial.h"

/* ---- K by backward passes alone (FB_K_BACKWARD) ----------------------------------------------
 * ABA's backward pass maps a generalised force tau to du (the change of u at every dof on the
 * inputs' paths), du = Gamma tau, and its forward pass maps du to qdd = Gamma^T D^-1 du, so
 * M^-1 = Gamma^T D^-1 Gamma and K_rc = J_r M^-1 J_c^T = (Gamma J_r^T) . D^-1 (Gamma J_c^T): the
 * dot product of row r's du with row c's D^-1 du over the bodies on both rows' paths (this is
 * the operational-space inverse inertia, Lambda^-1 = J M^-1 J^T, computed as in Featherstone,
 * "Exploiting sparsity in operational-space dynamics", IJRR 2010, without forming the 6 x 6
 * blocks). One backward pass per row, no forward pass, and the dot products run over the
 * shared part of two paths only (a foot's and the other foot's rows meet at the root). */

/* Row r's backward pass in every articulation it acts on: du, D^-1 du and its bodies. */
static void backward_row(fb_csys* cs, int r) {
    const fb_row* row = &cs->row[r];
    const size_t nvt = (size_t)cs->nv_total;
    double* du = cs->kdu + (size_t)r * nvt;
    double* y = cs->ky + (size_t)r * nvt;
    int* path = cs->kpath + (size_t)r * (size_t)cs->nbody_total;
    int len = 0;
    /* articulations from the last: the list of bodies stays sorted, highest global index first */
    for (int k = cs->nart - 1; k >= 0; k--) {
        if (row->art != k && !(row->type == FB_ROW_POINT && row->art_b == k)) {
            continue;
        }
        int nf = 0, nt = 0;
        fb_row_inputs(cs, r, k, 1.0, &nf, &nt);
        int* p = path + len;
        const int np = fb_accel_delta_backward(cs->m[k], cs->d[k], nf, cs->in_body, cs->in_f, nt,
                                               cs->in_dof, cs->in_tau, cs->mark, p,
                                               du + cs->v_off[k], y + cs->v_off[k]);
        for (int i = 0; i < np; i++) {
            p[i] += (int)cs->b_off[k];
        }
        len += np;
    }
    cs->kpn[r] = len;
}

/* Whether rows r, r + 1, r + 2 are one contact's (a normal and its two friction rows): point
 * rows on the same body, or pair of bodies in two articulations (a self-contact's two forces
 * meet on one path: those go row by row). Their backward passes then run together. */
static bool contact_at(const fb_csys* cs, int r) {
    if (r + 3 > cs->nrow) {
        return false;
    }
    const fb_row* a = &cs->row[r];
    if (a->type != FB_ROW_POINT || a->art_b == a->art) {
        return false;
    }
    for (int c = 1; c < 3; c++) {
        const fb_row* b = &cs->row[r + c];
        if (b->type != FB_ROW_POINT || b->art != a->art || b->body != a->body ||
            b->art_b != a->art_b || (a->art_b >= 0 && b->body_b != a->body_b)) {
            return false;
        }
    }
    return true;
}

/* The backward passes of rows r .. r + 2, one contact's (contact_at), in one walk up each
 * articulation's path with the three unit forces at once (fb_aba_contact_path: each row gets
 * the bits backward_row gives it). */
static void backward_contact(fb_csys* cs, int r) {
    const fb_row* row = &cs->row[r];
    const size_t nvt = (size_t)cs->nv_total, nb = (size_t)cs->nbody_total;
    int* path = cs->kpath + (size_t)r * nb;
    int len = 0;
    for (int k = cs->nart - 1; k >= 0; k--) {
        if (row->art != k && row->art_b != k) {
            continue;
        }
        const fb_data* d = cs->d[k];
        const bool a = row->art == k;
        const int body = a ? row->body : row->body_b;
        /* the unit forces as fb_row_inputs and fb_accel_delta_backward make them: the body's
         * bias changes by -X_0 f */
        fb_fv3 p;
        for (int c = 0; c < 3; c++) {
            const fb_row* rc = &cs->row[r + c];
            const fb_fv f = point_force(d, body, a ? rc->p : rc->p_b,
                                        fb_v3_scale(rc->n, a ? 1.0 : -1.0));
            const fb_fv x = fb_fv_scale(fb_xf_fv(d->X_0[body], f), -1.0);
            for (int j = 0; j < 3; j++) {
                p.n[j][c] = fb_v3_get(x.n, j);
                p.f[j][c] = fb_v3_get(x.f, j);
            }
        }
        const size_t off = (size_t)r * nvt + (size_t)cs->v_off[k];
        int* pk = path + len;
        const int np = fb_aba_contact_path(cs->m[k], d, body, &p, cs->kdu + off, cs->ky + off,
                                           nvt, pk);
        for (int i = 0; i < np; i++) {
            pk[i] += (int)cs->b_off[k];
        }
        len += np;
    }
    for (int c = 0; c < 3; c++) {
        cs->kpn[r + c] = len;
        if (c > 0) {
            memcpy(path + (size_t)c * nb, path, (size_t)len * sizeof(int));
        }
    }
}

/* du_r . y_c over n dofs (a hinge, a ball, a free joint unrolled). */
static inline double body_dot(const double* du, const double* y, int n) {
    switch (n) {
    case 1:
        return du[0] * y[0];
    case 3:
        return du[0] * y[0] + du[1] * y[1] + du[2] * y[2];
    case 6:
        return (du[0] * y[0] + du[1] * y[1] + du[2] * y[2]) +
               (du[3] * y[3] + du[4] * y[4] + du[5] * y[5]);
    default:
        return dot4(du, y, n);
    }
}

/* K from the rows' backward passes, body by body: each body adds du_r . y_c over its dofs to
 * K_rc for every pair of rows whose paths pass through it (its share of Gamma^T D^-1 Gamma). */
void fb_k_backward(fb_csys* cs) {
    const int nr = cs->nrow, nb = cs->nbody_total;
    const size_t nvt = (size_t)cs->nv_total, cap = (size_t)cs->cap;
    cs->restricted = true; /* no columns: fb_csys_apply sums the rows' du */
    cs->kbuilt = true;
    memset(cs->klen, 0, (size_t)nb * sizeof(int));
    for (int r = 0; r < nr;) {
        if (contact_at(cs, r)) {
            backward_contact(cs, r);
            r += 3;
        } else {
            backward_row(cs, r++);
        }
    }
    for (int r = 0; r < nr; r++) {
        const int* path = cs->kpath + (size_t)r * (size_t)nb;
        for (int i = 0; i < cs->kpn[r]; i++) {
            const int g = path[i];
            cs->klist[(size_t)g * cap + (size_t)cs->klen[g]++] = r;
        }
    }
    for (int r = 0; r < nr; r++) {
        memset(cs->K + (size_t)r * (size_t)nr, 0, (size_t)(r + 1) * sizeof(double));
    }
    /* bodies that the same rows pass through and whose dofs adjoin (a leg's thigh, shin and
     * foot under the foot's and toe's rows) are taken together as one run of dofs */
    int nseg = 0;
    for (int g = nb - 1; g >= 0; g--) {
        const int n = cs->gnv[g], len = cs->klen[g];
        if (n == 0 || len == 0) {
            continue;
        }
        const int s = nseg - 1;
        if (s >= 0 && cs->klen[cs->kseg[3 * s]] == len && cs->gdof[g] + n == cs->kseg[3 * s + 1] &&
            memcmp(cs->klist + (size_t)cs->kseg[3 * s] * cap, cs->klist + (size_t)g * cap,
                   (size_t)len * sizeof(int)) == 0) {
            cs->kseg[3 * s + 1] = cs->gdof[g];
            cs->kseg[3 * s + 2] += n;
        } else {
            cs->kseg[3 * nseg] = g;
            cs->kseg[3 * nseg + 1] = cs->gdof[g];
            cs->kseg[3 * nseg + 2] = n;
            nseg++;
        }
    }
    /* runs from the highest global index down, rows in order: a fixed order of the sums */
    for (int q = 0; q < nseg; q++) {
        const int g = cs->kseg[3 * q], len = cs->klen[g], n = cs->kseg[3 * q + 2];
        const int* rows = cs->klist + (size_t)g * cap;
        const size_t k0 = (size_t)cs->kseg[3 * q + 1];
        for (int i = 0; i < len; i++) {
            const int r = rows[i];
            const double* du = cs->kdu + (size_t)r * nvt + k0;
            double* Kr = cs->K + (size_t)r * (size_t)nr;
            for (int j = 0; j <= i; j++) {
                const int c = rows[j];
                Kr[c] += body_dot(du, cs->ky + (size_t)c * nvt + k0, n);
            }
        }
    }
    for (int r = 0; r < nr; r++) {
        for (int c = 0; c < r; c++) {
            cs->K[c * nr + r] = cs->K[r * nr + c];
        }
    }
}
