/* The balance planner: the joint accelerations that make a character with a free root move
 * its root as the tracking wants, through its contacts with the ground.
 *
 * Cline's tracking [Cline §5.1] holds the root on the clip's path; with the root free the
 * joints' own tracking rows [Kokkevis eq. 22] leave the root to whatever the contacts do, and
 * the character falls. Here the rows' targets are chosen so that the root's motion is
 * produced through the feet, as momentum-based balance control does [Macchietto, Zordan &
 * Shelton 2009]: joint torques and contact forces are still solved together by the world's
 * LCP (no force acts on the root), the planner only decides what the joints ask for.
 *
 *  1. The bodies touching the ground are held in place: their spatial accelerations, affine in
 *     the joint accelerations, are asked to damp their velocities. The joints between them and
 *     the root (the stance dofs, s) take the accelerations nearest the tracking's that do so
 *     for a given root acceleration a_r (least squares), so q''_s = P + Q a_r; the other dofs
 *     keep the tracking's.
 *  2. The root's generalised force that motion needs is affine in a_r too: W = W0 + H a_r
 *     (the first six rows of M q'' + C).
 *  3. The contacts can supply W = G lambda, lambda >= 0 on the edges of each support point's
 *     friction pyramid. The distribution nearest the wrench of the wanted root acceleration,
 *     W* = W0 + H a_r*, is found by non-negative least squares (fb_nnls6).
 *  4. a_r = H^-1 (G lambda - W0), the root acceleration the contacts can give, and the
 *     stance dofs' targets follow.
 *  5. The stance dofs' torques that make that motion with those contact forces (inverse
 *     dynamics). */
#include "control/balance.h"

#include <math.h>
#include <string.h>

#include "featherbone/dynamics.h"
#include "math/dense.h"
#include "math/nnls.h"
#include "math/spatial.h"
#include "util/error.h"

/* s: a body in contact is asked to lose its velocity at this rate (its spatial acceleration
 * -v / BAL_STICK_TIME): the world's friction rows stop a slip within a substep anyway; this
 * only keeps the plan from asking for a slip to go on. */
#define BAL_STICK_TIME 0.05

/* Weight of the root torque against the root force in the wrench fit (1 / m^2): errors of a
 * torque count as those of a force 1.7 m long (sqrt 3). Chosen on the free walks (stop 28,
 * docs/CONTROL.md §10): started at 20 frames of 131_01 and 131_03, they stand 1.29 s on average
 * with 3 against 1.05 s with 1 (the centre of mass's acceleration first, as Macchietto 2009
 * order it), the pushes recovered as many newtons in all; from 5 on, a centre of mass target
 * far off gets a plan with no contact force at all (test_balance). */
#define BAL_TORQUE_WEIGHT 3.0

/* N^-2 ... the regularisation of the contact forces in the fit: among distributions giving
 * the same wrench, the smallest forces. Small against the wrench errors. */
#define BAL_FORCE_REG 1e-8

/* Relative damping of the stance least squares (J J^T + mu I, mu this times the mean
 * diagonal): keeps it regular where the held bodies' constraints repeat each other (a foot and
 * its toe both down) and near a straight leg's singularity, where an undamped solve asks the
 * knee for huge accelerations to move the root along the leg. Measured on the standing capsule
 * humanoid of bench/scenes.c and a box-footed biped under 0.1 s pushes: 1e-6 and below let the
 * humanoid fall while standing still, 1e-3 and above too; 3e-5 to 3e-4 stand and recover from
 * the same pushes. */
#define BAL_IK_DAMP 1e-4

/* Friction-pyramid edges per support point. */
#define BAL_EDGES FB_BALANCE_EDGES

struct fb_balance {
    fb_allocator alloc;
    int nv;
    size_t cbytes;  /* of the arrays from C on (one allocation) */
    fb_data* d;     /* scratch state: kinematics, bias, M */
    double* C;      /* (nv) bias C(q, qd) */
    double* Jb;     /* (6 x nv) one body Jacobian */
    double* Js;     /* (6 MAXB x nv) the held bodies' rows on the stance dofs (ns used) */
    double* Jr;     /* (6 MAXB x 6) ... on the root dofs */
    double* r0;     /* (6 MAXB) right-hand side with a_r = 0 */
    double* A;      /* (6 MAXB x 6 MAXB) Js Js^T + mu I, factored */
    double* y;      /* (6 MAXB) scratch */
    double* P;      /* (nv) the stance dofs' accelerations with a_r = 0 */
    double* Q;      /* (nv x 6) their change per unit root acceleration */
    int* sidx;      /* (nv) the stance dofs */
    bool* stance;   /* (nv) */
    double* qdd0;   /* (nv) */
    bool* bearing;  /* (nbody) whose contacts may carry the planned forces (fb_balance_bear) */
    fb_v3 com_off;  /* the centre of mass target's offset from the clip's (filtered) */
    fb_v3 com_off0; /* ... as it was when the substep at com_t began */
    double com_t;   /* the start of the last substep planned (NAN: none) */
    double G[6 * BAL_EDGES * FB_BALANCE_MAX_POINTS];
    int pbody[FB_BALANCE_MAX_POINTS];   /* each support point's body ... */
    fb_v3 plocal[FB_BALANCE_MAX_POINTS]; /* ... and where on it (body coordinates) */
    fb_v3 pdir[BAL_EDGES * FB_BALANCE_MAX_POINTS]; /* the pyramid edges (world) */
    double* Jp;     /* (3 x nv) one point Jacobian */
    double lam[BAL_EDGES * FB_BALANCE_MAX_POINTS];
    bool passive[BAL_EDGES * FB_BALANCE_MAX_POINTS];
};

void fb_balance_destroy(fb_balance* b) {
    if (!b) {
        return;
    }
    const fb_allocator a = b->alloc;
    fb_data_destroy(b->d);
    fb_free(&a, b->C);
    fb_free(&a, b->bearing);
    fb_free(&a, b);
}

/* The arrays inside C's allocation, after it. */
static void point_arrays(fb_balance* b) {
    const size_t nv = (size_t)b->nv, nr = 6 * FB_BAL_MAX_BODIES;
    b->Jb = b->C + nv;
    b->Js = b->Jb + 6 * nv;
    b->Jr = b->Js + nr * nv;
    b->r0 = b->Jr + nr * 6;
    b->A = b->r0 + nr;
    b->y = b->A + nr * nr;
    b->P = b->y + nr;
    b->Q = b->P + nv;
    b->qdd0 = b->Q + 6 * nv;
    b->Jp = b->qdd0 + nv;
    b->sidx = (int*)(b->Jp + 3 * nv);
    b->stance = (bool*)(b->sidx + nv);
}

fb_balance* fb_balance_create(const fb_model* m, const fb_allocator* alloc) {
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    fb_balance* b = fb_alloc(&a, sizeof *b);
    if (!b) {
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->com_t = NAN;
    b->alloc = a;
    b->nv = m->nv;
    const size_t nv = (size_t)m->nv, nr = 6 * FB_BAL_MAX_BODIES;
    const size_t ndouble =
        nv + 6 * nv + nr * nv + nr * 6 + nr + nr * nr + nr + nv + 6 * nv + nv + 3 * nv;
    b->cbytes = ndouble * sizeof(double) + 2 * nv * sizeof(int);
    b->C = fb_alloc(&a, b->cbytes);
    b->d = fb_data_create(m, &a, NULL);
    if (!b->C || !b->d) {
        fb_balance_destroy(b);
        return NULL;
    }
    point_arrays(b);
    b->bearing = fb_alloc(&a, (size_t)m->nbody * sizeof(bool));
    if (!b->bearing) {
        fb_balance_destroy(b);
        return NULL;
    }
    for (int i = 0; i < m->nbody; i++) {
        b->bearing[i] = true;
    }
    return b;
}

void fb_balance_copy(fb_balance* dst, const fb_balance* src) {
    /* everything but dst's arrays and what it derives from the control reference (bearing) */
    const fb_balance keep = *dst;
    *dst = *src;
    dst->alloc = keep.alloc;
    dst->d = keep.d;
    dst->bearing = keep.bearing;
    dst->C = keep.C;
    point_arrays(dst);
    memcpy(dst->C, src->C, src->cbytes);
    (void)fb_data_copy(dst->d, src->d);
}

/* Two unit tangents of the unit normal n. */
static void tangents(fb_v3 n, fb_v3* t1, fb_v3* t2) {
    const fb_v3 a = fabs(n.x) < 0.9 ? fb_v3_make(1.0, 0.0, 0.0) : fb_v3_make(0.0, 1.0, 0.0);
    const fb_v3 c = fb_v3_cross(n, a);
    *t1 = fb_v3_scale(c, 1.0 / fb_v3_norm(c));
    *t2 = fb_v3_cross(n, *t1);
}

int fb_balance_edges(const fb_model* m, const fb_data* d, const fb_v3* point, const fb_v3* normal,
                     int npoint, double mu, fb_v3* dir_out, double* G) {
    fb_mv Sw[6]; /* the root's motion columns in world coordinates */
    for (int k = 0; k < 6; k++) {
        Sw[k] = fb_xf_inv_mv(d->X_0[1], m->S[k]);
    }
    for (int p = 0; p < npoint; p++) {
        fb_v3 t1, t2;
        tangents(normal[p], &t1, &t2);
        const fb_v3 dir[BAL_EDGES] = {
            fb_v3_add(normal[p], fb_v3_scale(t1, mu)), fb_v3_sub(normal[p], fb_v3_scale(t1, mu)),
            fb_v3_add(normal[p], fb_v3_scale(t2, mu)), fb_v3_sub(normal[p], fb_v3_scale(t2, mu))};
        for (int e = 0; e < BAL_EDGES; e++) {
            dir_out[BAL_EDGES * p + e] = dir[e];
            const fb_v3 moment = fb_v3_cross(point[p], dir[e]);
            double* g = G + 6 * (BAL_EDGES * p + e);
            for (int k = 0; k < 6; k++) {
                g[k] = fb_v3_dot(Sw[k].w, moment) + fb_v3_dot(Sw[k].v, dir[e]);
            }
        }
    }
    return BAL_EDGES * npoint;
}

/* s: the time constant with which the centre of mass target's offset from the clip's follows
 * the support polygon */
#define BAL_OFFSET_TIME 1.0

/* m: the centre of mass is kept this far inside the support polygon */
#define BAL_SUPPORT_MARGIN 0.02

/* m^2: support points whose triangle is smaller than this (twice its area: a micrometre
 * square) lie on one line. A capsule lying on the ground touches it at two points that
 * differ by rounding (6e-17 m); with an exact test those and a third point made a polygon of
 * no area, and the centre of mass's margin was its distance from a line (test_balance). */
#define BAL_HULL_EPS 1e-12

/* Cross product of (a - o) and (b - o) in the ground plane (u, w). */
static double cross2(const double* o, const double* a, const double* b) {
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

/* The support polygon: the convex hull of the support points projected on the plane across
 * gravity (coordinates along e1, e2), counter-clockwise (Andrew's monotone chain); its
 * vertex count (0 with fewer than three points or when they are collinear). */
typedef struct hull2 {
    fb_v3 e1, e2;
    int n;
    double v[2 * FB_BALANCE_MAX_POINTS + 1][2]; /* n vertices, then the first again */
    int idx[2 * FB_BALANCE_MAX_POINTS + 1];     /* the point each vertex is */
} hull2;

static void support_hull(const fb_v3* point, int n, fb_v3 gravity, hull2* h) {
    const double gn = fb_v3_norm(gravity);
    const fb_v3 up = gn > 0.0 ? fb_v3_scale(gravity, -1.0 / gn) : fb_v3_make(0.0, 1.0, 0.0);
    const fb_v3 a = fabs(up.x) < 0.9 ? fb_v3_make(1.0, 0.0, 0.0) : fb_v3_make(0.0, 1.0, 0.0);
    h->e1 = fb_v3_cross(up, a);
    h->e1 = fb_v3_scale(h->e1, 1.0 / fb_v3_norm(h->e1));
    h->e2 = fb_v3_cross(h->e1, up);
    h->n = 0;
    if (n < 3 || n > FB_BALANCE_MAX_POINTS) {
        return;
    }
    double pt[FB_BALANCE_MAX_POINTS][2];
    int id[FB_BALANCE_MAX_POINTS];
    for (int i = 0; i < n; i++) {
        pt[i][0] = fb_v3_dot(point[i], h->e1);
        pt[i][1] = fb_v3_dot(point[i], h->e2);
        id[i] = i;
    }
    for (int i = 1; i < n; i++) { /* insertion sort by (u, w): n <= FB_BALANCE_MAX_POINTS */
        const double t[2] = {pt[i][0], pt[i][1]};
        const int ti = id[i];
        int j = i - 1;
        while (j >= 0 && (pt[j][0] > t[0] || (pt[j][0] == t[0] && pt[j][1] > t[1]))) {
            pt[j + 1][0] = pt[j][0];
            pt[j + 1][1] = pt[j][1];
            id[j + 1] = id[j];
            j--;
        }
        pt[j + 1][0] = t[0];
        pt[j + 1][1] = t[1];
        id[j + 1] = ti;
    }
    int k = 0;
    for (int pass = 0; pass < 2; pass++) { /* lower hull, then upper */
        const int lo = pass == 0 ? 2 : k + 1;
        for (int c = 0; c < n - pass; c++) {
            const int i = pass == 0 ? c : n - 2 - c;
            while (k >= lo && cross2(h->v[k - 2], h->v[k - 1], pt[i]) <= BAL_HULL_EPS) {
                k--;
            }
            h->v[k][0] = pt[i][0];
            h->v[k][1] = pt[i][1];
            h->idx[k] = id[i];
            k++;
        }
    }
    h->n = k - 1 >= 3 ? k - 1 : 0; /* the last vertex repeats the first */
}

/* The hull's vertices (points of `point`) in order counter-clockwise about the up direction:
 * (e1, e2, up) is left-handed (e1 x e2 = -up), so the hull's order reversed. */
static int hull_points(const hull2* h, const fb_v3* point, fb_v3* out) {
    for (int k = 0; k < h->n; k++) {
        out[k] = point[h->idx[h->n - 1 - k]];
    }
    return h->n;
}

int fb_balance_hull(const fb_v3* point, int n, fb_v3 gravity, fb_v3* out) {
    hull2 h;
    support_hull(point, n, gravity, &h);
    return hull_points(&h, point, out);
}

/* Signed distance of q from the boundary of the hull (positive inside); the nearest boundary
 * point into *near. */
static double hull_margin(const hull2* h, const double q[2], double near[2]) {
    double best = INFINITY;
    bool inside = true;
    for (int i = 0; i < h->n; i++) {
        const double* a = h->v[i];
        const double* b = h->v[i + 1];
        inside = inside && cross2(a, b, q) >= 0.0;
        const double ex = b[0] - a[0], ey = b[1] - a[1], l2 = ex * ex + ey * ey;
        double t = l2 > 0.0 ? ((q[0] - a[0]) * ex + (q[1] - a[1]) * ey) / l2 : 0.0;
        t = fmin(1.0, fmax(0.0, t));
        const double x = a[0] + t * ex, y = a[1] + t * ey;
        const double d2 = (x - q[0]) * (x - q[0]) + (y - q[1]) * (y - q[1]);
        if (d2 < best) {
            best = d2;
            near[0] = x;
            near[1] = y;
        }
    }
    return inside ? sqrt(best) : -sqrt(best);
}

/* The centre of mass target: p moved across gravity to BAL_SUPPORT_MARGIN inside the support
 * polygon when it is not (p itself without a polygon, or when the polygon is narrower than
 * twice the margin: then onto its boundary). Sets info->margin for the centre of mass c. */
static fb_v3 over_support(fb_v3 p, fb_v3 c, fb_balance_info* info, fb_v3 gravity) {
    hull2 h;
    support_hull(info->point, info->npoint, gravity, &h);
    info->nsupport = hull_points(&h, info->point, info->support);
    info->margin = NAN;
    if (h.n == 0) {
        return p;
    }
    double near[2];
    const double qc[2] = {fb_v3_dot(c, h.e1), fb_v3_dot(c, h.e2)};
    info->margin = hull_margin(&h, qc, near);
    const double q[2] = {fb_v3_dot(p, h.e1), fb_v3_dot(p, h.e2)};
    const double m = hull_margin(&h, q, near);
    if (m >= BAL_SUPPORT_MARGIN) {
        return p;
    }
    /* onto the boundary, then inward by the margin toward the polygon's centroid */
    double cx = 0.0, cy = 0.0;
    for (int i = 0; i < h.n; i++) {
        cx += h.v[i][0] / h.n;
        cy += h.v[i][1] / h.n;
    }
    const double dx = cx - near[0], dy = cy - near[1], dl = sqrt(dx * dx + dy * dy);
    const double step = dl > 0.0 ? fmin(BAL_SUPPORT_MARGIN, 0.5 * dl) / dl : 0.0;
    const double u = near[0] + step * dx, w = near[1] + step * dy;
    return fb_v3_add(p, fb_v3_add(fb_v3_scale(h.e1, u - q[0]), fb_v3_scale(h.e2, w - q[1])));
}

/* The bodies of art touching the ground among con (at most FB_BAL_MAX_BODIES) and their
 * points (world, at most FB_BALANCE_MAX_POINTS); returns the body count. */
static int support(fb_balance* b, const fb_data* d, const fb_contact* con, int ncon, int art,
                   int* body, fb_balance_plan* out, fb_v3* normal) {
    int nb = 0;
    out->info.npoint = 0;
    for (int k = 0; k < ncon; k++) {
        const fb_contact* c = &con[k];
        if (c->art_a != art || c->art_b >= 0) {
            continue;
        }
        int i = 0;
        while (i < nb && body[i] != c->body_a) {
            i++;
        }
        if (i == nb) {
            if (nb == FB_BAL_MAX_BODIES) {
                continue;
            }
            body[nb++] = c->body_a;
        }
        if (b->bearing[c->body_a] && out->info.npoint < FB_BALANCE_MAX_POINTS) {
            b->pbody[out->info.npoint] = c->body_a;
            b->plocal[out->info.npoint] = c->p_a;
            out->info.point[out->info.npoint] = fb_xf_inv_point(d->X_0[c->body_a], c->p_a);
            normal[out->info.npoint++] = c->n;
        }
    }
    return nb;
}

void fb_balance_run(fb_balance* b, const fb_model* m, const fb_data* dw, const fb_contact* con,
                    int ncon, int art, double mu, const double* want,
                    const fb_balance_com* com, double* target, double* tau,
                    fb_balance_plan* out) {
    const int nv = m->nv;
    fb_data* d = b->d;
    memcpy(d->q, dw->q, (size_t)m->nq * sizeof(double));
    memcpy(d->qd, dw->qd, (size_t)nv * sizeof(double));
    memcpy(target, want, (size_t)nv * sizeof(double));
    for (int k = 0; k < nv; k++) {
        tau[k] = NAN;
    }
    memset(out, 0, sizeof *out);
    out->info.active = true;
    out->info.margin = NAN;

    /* bias: C, and every body's acceleration with q'' = 0 (d->a, less gravity's share below) */
    fb_bias(m, d, b->C);
    /* the whole body's linear momentum, while the velocities are current (fb_crba below
     * leaves only the positions' stage: debug builds assert on it) */
    const fb_v3 momentum = fb_momentum(m, d).f;
    int body[FB_BAL_MAX_BODIES];
    fb_v3 normal[FB_BALANCE_MAX_POINTS];
    const int nb = support(b, d, con, ncon, art, body, out, normal);

    /* 1. the stance dofs: those of the joints between each held body and the root */
    memset(b->stance, 0, (size_t)nv * sizeof(bool));
    for (int i = 0; i < nb; i++) {
        for (int j = body[i]; j > 1; j = m->parent[j]) {
            for (int k = 0; k < m->jnv[j]; k++) {
                b->stance[m->v_adr[j] + k] = true;
            }
        }
    }
    int ns = 0;
    for (int k = 6; k < nv; k++) {
        if (b->stance[k]) {
            b->sidx[ns++] = k;
        }
    }
    /* the held bodies' rows: J_b,s q''_s + J_b,r a_r = -v_b / T - a_bias - J_b,o q''_o */
    const int nr = 6 * nb;
    for (int i = 0; i < nb; i++) {
        const int bi = body[i];
        fb_jac_body(m, d, bi, b->Jb);
        const fb_mv a = d->a[bi];
        const fb_v3 g_body = fb_m3_mv(d->X_0[bi].E, m->opt.gravity);
        const fb_mv v = d->v[bi];
        const double abias[6] = {a.w.x, a.w.y, a.w.z, a.v.x + g_body.x, a.v.y + g_body.y,
                                 a.v.z + g_body.z};
        const double vel[6] = {v.w.x, v.w.y, v.w.z, v.v.x, v.v.y, v.v.z};
        for (int r = 0; r < 6; r++) {
            const double* Jrow = b->Jb + (size_t)r * (size_t)nv;
            double rhs = -vel[r] / BAL_STICK_TIME - abias[r];
            for (int k = 6; k < nv; k++) {
                rhs -= Jrow[k] * want[k]; /* every non-root dof at the tracking's, for now */
            }
            b->r0[6 * i + r] = rhs;
            for (int c = 0; c < 6; c++) {
                b->Jr[(6 * i + r) * 6 + c] = Jrow[c];
            }
            for (int s = 0; s < ns; s++) {
                b->Js[(size_t)(6 * i + r) * (size_t)nv + (size_t)s] = Jrow[b->sidx[s]];
            }
        }
    }
    /* least squares: q''_s = want_s + Js^T A^-1 (r0 - Jr a_r), A = Js Js^T + mu I */
    memset(b->P, 0, (size_t)nv * sizeof(double));
    memset(b->Q, 0, (size_t)nv * 6 * sizeof(double));
    bool ok = true;
    if (nr > 0 && ns > 0) {
        double tr = 0.0;
        for (int r = 0; r < nr; r++) {
            for (int c = 0; c <= r; c++) {
                double v = 0.0;
                const double* a1 = b->Js + (size_t)r * (size_t)nv;
                const double* a2 = b->Js + (size_t)c * (size_t)nv;
                for (int s = 0; s < ns; s++) {
                    v += a1[s] * a2[s];
                }
                b->A[r * nr + c] = b->A[c * nr + r] = v;
            }
            tr += b->A[r * nr + r];
        }
        const double mu_ik = BAL_IK_DAMP * tr / nr + 1e-300;
        for (int r = 0; r < nr; r++) {
            b->A[r * nr + r] += mu_ik;
        }
        ok = fb_chol_factor(b->A, nr);
        /* columns: 0 = r0, 1..6 = -Jr e_c */
        for (int col = 0; ok && col < 7; col++) {
            for (int r = 0; r < nr; r++) {
                b->y[r] = col == 0 ? b->r0[r] : -b->Jr[r * 6 + (col - 1)];
            }
            fb_chol_solve(b->A, nr, b->y);
            for (int s = 0; s < ns; s++) {
                double v = 0.0;
                for (int r = 0; r < nr; r++) {
                    v += b->Js[(size_t)r * (size_t)nv + (size_t)s] * b->y[r];
                }
                if (col == 0) {
                    b->P[b->sidx[s]] = v;
                } else {
                    b->Q[(size_t)b->sidx[s] * 6 + (size_t)(col - 1)] = v;
                }
            }
        }
    }
    for (int k = 6; k < nv; k++) {
        b->qdd0[k] = want[k] + (b->stance[k] ? b->P[k] : 0.0);
    }
    for (int k = 0; k < 6; k++) {
        b->qdd0[k] = 0.0;
    }

    /* 2. W = W0 + H a_r from M's root rows (fb_crba redoes the positions at the same q, which
     * leaves fb_bias's body velocities valid: the stage says so for whoever reads them next) */
    fb_crba(m, d);
    d->stage |= FB_STAGE_VEL;
    double W0[6], H[36];
    for (int r = 0; r < 6; r++) {
        const double* Mr = d->M + (size_t)r * (size_t)nv;
        double w0 = b->C[r];
        for (int j = 6; j < nv; j++) {
            w0 += Mr[j] * b->qdd0[j];
        }
        W0[r] = w0;
        for (int c = 0; c < 6; c++) {
            double h = Mr[c];
            for (int s = 0; s < ns; s++) {
                const int j = b->sidx[s];
                h += Mr[j] * b->Q[(size_t)j * 6 + (size_t)c];
            }
            H[r * 6 + c] = h;
        }
    }
    /* the root acceleration wanted: want's, or its turn with the linear part that gives the
     * centre of mass com_acc (the linear rows of W are the total external force, m (a_c - g)
     * in root coordinates) */
    double ar_want[6];
    memcpy(ar_want, want, sizeof ar_want);
    if (com) {
        const double mass = fb_model_mass(m);
        const fb_v3 cnow = fb_com(m, d);
        const fb_v3 cd = fb_v3_scale(momentum, 1.0 / mass);
        /* the clip's centre of mass, moved over the support by an offset that follows where
         * the support wants it slowly: moving the centre of mass first moves the centre of
         * pressure the other way, which at the polygon's edge it cannot */
        const fb_v3 raw = fb_v3_sub(over_support(com->c, cnow, &out->info, m->opt.gravity), com->c);
        /* a substep the world undid (halved on a deep new contact) is planned again from the
         * same start: the filter goes on from where it was then, not from the undone one */
        if (com->t == b->com_t) {
            b->com_off = b->com_off0;
        } else {
            b->com_off0 = b->com_off;
            b->com_t = com->t;
        }
        const double k = com->h >= BAL_OFFSET_TIME ? 1.0 : com->h / BAL_OFFSET_TIME;
        b->com_off = fb_v3_add(b->com_off, fb_v3_scale(fb_v3_sub(raw, b->com_off), k));
        const fb_v3 ct = fb_v3_add(com->c, b->com_off);
        out->info.com = cnow;
        out->info.com_target = ct;
        const fb_v3 acc = fb_v3_add(com->a, fb_v3_add(fb_v3_scale(fb_v3_sub(ct, cnow), com->kp),
                                                      fb_v3_scale(fb_v3_sub(com->v, cd), com->kd)));
        const fb_v3 fw = fb_v3_scale(fb_v3_sub(acc, m->opt.gravity), mass);
        const fb_v3 fr = fb_m3_mv(d->X_0[1].E, fw); /* world -> root coordinates */
        const double f[3] = {fr.x, fr.y, fr.z};
        double Hll[9], rhs[3];
        for (int r = 0; r < 3; r++) {
            rhs[r] = f[r] - W0[3 + r];
            for (int c = 0; c < 3; c++) {
                rhs[r] -= H[(3 + r) * 6 + c] * want[c];
                Hll[r * 3 + c] = H[(3 + r) * 6 + 3 + c];
            }
        }
        int piv3[3];
        if (fb_lu_factor(Hll, 3, piv3)) {
            fb_lu_solve(Hll, 3, piv3, rhs);
            for (int r = 0; r < 3; r++) {
                ar_want[3 + r] = rhs[r];
            }
        }
    }
    memcpy(out->root_want, ar_want, sizeof out->root_want);
    double Wwant[6];
    for (int r = 0; r < 6; r++) {
        double v = W0[r];
        for (int c = 0; c < 6; c++) {
            v += H[r * 6 + c] * ar_want[c];
        }
        Wwant[r] = v;
    }

    /* 3. the contacts' wrench on the root: G lambda over the pyramid edges */
    const int ne =
        fb_balance_edges(m, d, out->info.point, normal, out->info.npoint, mu, b->pdir, b->G);
    const double sw[6] = {BAL_TORQUE_WEIGHT, BAL_TORQUE_WEIGHT, BAL_TORQUE_WEIGHT, 1.0, 1.0, 1.0};
    if (ne > 0) {
        if (fb_nnls6(b->G, ne, sw, Wwant, BAL_FORCE_REG, b->lam, b->passive) < 0) {
            memset(b->lam, 0, (size_t)ne * sizeof(double));
        }
    }
    double Wc[6] = {0};
    for (int e = 0; e < ne; e++) {
        for (int r = 0; r < 6; r++) {
            Wc[r] += b->G[6 * e + r] * b->lam[e];
        }
    }
    for (int p = 0; p < out->info.npoint; p++) {
        double f = 0.0;
        fb_v3 fv = fb_v3_zero();
        for (int e = 0; e < BAL_EDGES; e++) {
            f += b->lam[BAL_EDGES * p + e];
            fv = fb_v3_add(fv, fb_v3_scale(b->pdir[BAL_EDGES * p + e], b->lam[BAL_EDGES * p + e]));
        }
        out->info.force[p] = f;
        out->f[p] = fv;
        out->body[p] = b->pbody[p];
    }
    double err2 = 0.0;
    for (int r = 0; r < 6; r++) {
        err2 += sw[r] * (Wc[r] - Wwant[r]) * (Wc[r] - Wwant[r]);
    }
    out->wrench_err = sqrt(err2);

    /* 4. the root acceleration and the stance dofs' targets */
    double ar[6];
    int piv[6];
    for (int r = 0; r < 6; r++) {
        ar[r] = Wc[r] - W0[r];
    }
    if (!ok || !fb_lu_factor(H, 6, piv)) {
        for (int k = 0; k < nv; k++) {
            tau[k] = NAN; /* the tracking's targets as they are, every dof by its row */
        }
        return;
    }
    fb_lu_solve(H, 6, piv, ar);
    memcpy(out->root_acc, ar, sizeof ar);
    for (int k = 0; k < 6; k++) {
        target[k] = ar[k];
    }
    for (int s = 0; s < ns; s++) {
        const int j = b->sidx[s];
        double v = b->qdd0[j];
        for (int c = 0; c < 6; c++) {
            v += b->Q[(size_t)j * 6 + (size_t)c] * ar[c];
        }
        target[j] = v;
    }
    /* 5. the stance dofs' torques that make that motion with those contact forces (inverse
     * dynamics with the contacts [RBDA §5.3: external forces]): tau_s = (M q'' + C)_s - sum_p (J_p,s)^T f_p */
    for (int k = 0; k < nv; k++) {
        tau[k] = NAN;
    }
    for (int s = 0; s < ns; s++) {
        const int j = b->sidx[s];
        const double* Mj = d->M + (size_t)j * (size_t)nv;
        double v = b->C[j];
        for (int k = 0; k < nv; k++) {
            v += Mj[k] * target[k];
        }
        tau[j] = v;
    }
    for (int p = 0; p < out->info.npoint; p++) {
        const fb_v3 f = out->f[p];
        if (f.x == 0.0 && f.y == 0.0 && f.z == 0.0) {
            continue;
        }
        fb_jac_point(m, d, b->pbody[p], b->plocal[p], b->Jp);
        for (int s = 0; s < ns; s++) {
            const int j = b->sidx[s];
            tau[j] -= b->Jp[j] * f.x + b->Jp[nv + j] * f.y + b->Jp[2 * nv + j] * f.z;
        }
    }
}

void fb_balance_bear(fb_balance* b, int body, bool bearing) {
    b->bearing[body] = bearing;
}

void fb_balance_reset(fb_balance* b) {
    b->com_off = b->com_off0 = fb_v3_zero();
    b->com_t = NAN;
}
