/* Joint limits in the world: their constraints at the current positions (one to three per
 * limited joint), the rows the substep makes of them, and the position projection that follows
 * a substep which left one past its range (Cline's post-stabilisation [Cline thesis §3.3-3.4]).
 * world_internal.h holds the world; docs/CONSTRAINTS.md, "Joint limits". */
#include <math.h>
#include <string.h>

#include "featherbone/collision.h"
#include "featherbone/dynamics.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "model/limit.h"
#include "sim/world_internal.h"
#include "util/error.h"

/* Joint-limit row ids set the top bit; contact row ids are 3 id + 1..3 of a packed contact id
 * (collision.c), which for articulations below 42 leave it clear. */
#define LIMIT_ID_BIT (UINT64_C(1) << 63)

/* Body i's limit constraints at the current q, one per kind (swing or low stop, twist-low or
 * low, twist-high or high); returns false where a kind does not apply. */
static void limits_of(const fb_model* m, const fb_data* d, int i, fb_limit_c c[FB_LIMIT_KINDS],
                      bool use[FB_LIMIT_KINDS]) {
    const fb_joint_limit* L = &m->limit[i];
    const double* q = d->q + m->q_adr[i];
    for (int k = 0; k < FB_LIMIT_KINDS; k++) {
        use[k] = false;
    }
    if (m->jtype[i] == FB_JOINT_REVOLUTE || m->jtype[i] == FB_JOINT_PRISMATIC) {
        c[1] = (fb_limit_c){{1.0, 0.0, 0.0}, L->lo - q[0]};
        c[2] = (fb_limit_c){{-1.0, 0.0, 0.0}, q[0] - L->hi};
        use[1] = use[2] = true;
        return;
    }
    /* spherical: q is the child's rotation relative to the joint frame; the swing of the
     * twist axis a (circular cone or elliptic range, model/limit.c) grows at n . w (w in child
     * coordinates) */
    const fb_quat qr = {q[0], q[1], q[2], q[3]};
    const fb_v3 a = L->twist_axis;
    fb_v3 n;
    double depth;
    if (fb_limit_swing(L, qr, &n, &depth)) {
        c[0] = (fb_limit_c){fb_v3_neg(n), depth};
        use[0] = true;
    }
    /* the twist grows at T . w (model/limit.c): its rows along T / |T|, depths in that unit */
    fb_v3 T;
    const double twist = fb_limit_twist(a, qr, &T);
    const double rate = fb_v3_norm(T);
    T = fb_v3_scale(T, 1.0 / rate);
    c[1] = (fb_limit_c){T, (L->lo - twist) / rate};
    c[2] = (fb_limit_c){fb_v3_neg(T), (twist - L->hi) / rate};
    use[1] = use[2] = true;
}

static uint64_t limit_id(int art, int body, int kind) {
    return LIMIT_ID_BIT | ((uint64_t)art << 40) | ((uint64_t)body << 8) | (uint64_t)kind;
}

fb_status fb_world_for_each_limit(fb_world* w, fb_limit_fn fn, void* ctx, fb_error* err) {
    for (int k = 0; k < w->nart; k++) {
        if (w->asleep[k]) {
            continue; /* no rows; its overshoots are those it fell asleep with */
        }
        const fb_model* m = w->m[k];
        for (int i = 1; i < m->nbody; i++) {
            if (!m->limit[i].on) {
                continue;
            }
            /* zeroed: gcc -O2 -Wmaybe-uninitialized sees through limits_of's use[] */
            fb_limit_c c[FB_LIMIT_KINDS] = {{{0.0, 0.0, 0.0}, 0.0}};
            bool use[FB_LIMIT_KINDS];
            limits_of(m, w->d[k], i, c, use);
            for (int j = 0; j < FB_LIMIT_KINDS; j++) {
                const fb_status s = use[j] ? fn(w, k, i, j, &c[j], ctx, err) : FB_OK;
                if (s != FB_OK) {
                    return s;
                }
            }
        }
    }
    return FB_OK;
}

/* overshoot[0]: the largest overshoot of a limit that has no row in the last substep (a limit
 * newly hit); overshoot[1]: the largest of all; overshoot[2]: the largest of an articulation
 * not driven (those fb_world_post_stabilize projects). */
fb_status fb_world_note_overshoot(fb_world* w, int art, int body, int kind, const fb_limit_c* c,
                                  void* ctx, fb_error* err) {
    (void)err;
    double* overshoot = ctx;
    if (c->depth <= 0.0) {
        return FB_OK;
    }
    overshoot[1] = fmax(overshoot[1], c->depth);
    if (!w->driven[art]) {
        overshoot[2] = fmax(overshoot[2], c->depth);
    }
    const uint64_t id = limit_id(art, body, kind);
    bool active = false;
    for (int r = 0; r < w->cs->nrow && !active; r++) {
        active = w->cs->row[r].id == id;
    }
    if (!active) {
        overshoot[0] = fmax(overshoot[0], c->depth);
    }
    return FB_OK;
}

/* The unilateral row of one limit constraint. */
static fb_row limit_row(int art, int body, int kind, const fb_limit_c* c) {
    fb_row row = fb_default_row();
    row.type = FB_ROW_JOINT;
    row.art = art;
    row.body = body;
    row.n = c->n;
    row.id = limit_id(art, body, kind);
    return row;
}

/* A unilateral limit row for a joint within limit_margin of a stop. */
fb_status fb_world_add_limit_row(fb_world* w, int art, int body, int kind, const fb_limit_c* c,
                                 void* ctx, fb_error* err) {
    (void)ctx;
    if (c->depth <= -w->o.limit_margin) {
        return FB_OK;
    }
    const fb_row row = limit_row(art, body, kind, c);
    const int r = w->cs->nrow;
    const fb_status s = fb_csys_add_row(w->cs, &row, err);
    if (s == FB_OK) {
        w->depth[r] = c->depth;
        w->rest[r] = 0.0;
        w->st.limits++;
    }
    return s;
}

/* ---- joint friction ---------------------------------------------------------------------- */

/* Joint friction rows' ids: a limit's, with kinds from here on (dof j of the joint: + j). */
#define FRICTION_KIND 16

bool fb_world_is_friction_row(const fb_row* row) {
    return (row->id & LIMIT_ID_BIT) != 0 && (row->id & 0xff) >= FRICTION_KIND;
}

fb_status fb_world_add_friction_rows(fb_world* w, int from, fb_error* err) {
    fb_csys* cs = w->cs;
    for (int k = 0; k < w->nart; k++) {
        memset(w->held[k], 0, (size_t)w->m[k]->nv);
    }
    for (int r = from; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        if (row->type == FB_ROW_DOF) {
            w->held[row->art][row->dof] = 1;
        }
    }
    for (int k = 0; k < w->nart; k++) {
        const fb_model* m = w->m[k];
        for (int b = 1; !w->asleep[k] && !w->driven[k] && b < m->nbody; b++) {
            const double f = m->friction[b];
            /* a joint with friction has at most three dofs (none on a floating joint) */
            for (int j = 0; f > 0.0 && j < m->jnv[b]; j++) {
                if (w->held[k][m->v_adr[b] + j]) {
                    continue;
                }
                fb_row row = fb_default_row();
                row.type = FB_ROW_JOINT;
                row.art = k;
                row.body = b;
                row.n = (fb_v3){j == 0, j == 1, j == 2};
                row.lo = -f;
                row.hi = f;
                row.id = limit_id(k, b, FRICTION_KIND + j);
                const fb_status s = fb_csys_add_row(cs, &row, err);
                if (s != FB_OK) {
                    return s;
                }
            }
        }
    }
    return FB_OK;
}

/* ---- post-stabilisation ------------------------------------------------------------------ */

/* Whether fb_world_post_stabilize moves articulation k: awake and not driven. A driven one's
 * stops are met in the force solve together with its controller's rows (world.c,
 * stops_in_solve); a position step its controller does not know of would move a kinematic
 * root off its path. */
static bool projected(const fb_world* w, int k) {
    return !w->asleep[k] && !w->driven[k];
}

/* A limit row of the projection: the joint is to come back by its depth (J dp >= depth); a
 * limit still within its margin may close by up to its gap, no further. */
static fb_status add_post_row(fb_world* w, int art, int body, int kind, const fb_limit_c* c,
                              void* ctx, fb_error* err) {
    (void)ctx;
    if (!projected(w, art) || c->depth <= -w->o.limit_margin) {
        return FB_OK;
    }
    const fb_row row = limit_row(art, body, kind, c);
    const int r = w->post->nrow;
    const fb_status s = fb_csys_add_row(w->post, &row, err);
    if (s == FB_OK) {
        w->vtarget[r] = c->depth;
    }
    return s;
}

/* The contacts' rows of the projection: a contact between projected articulations (or with
 * the ground) may not be pushed deeper than it is, nor a gap closed past touching (J dp >=
 * min(depth, 0)); no friction (mu 0: the projection may slide a contact). [Cline thesis §3.4]
 * asks contacts to come out as well; their depth is Baumgarte's to undo here (world.c), as in
 * every other substep, so that a projection changes nothing about a body's contacts but what
 * the limits need. */
static fb_status add_post_contact_rows(fb_world* w, fb_error* err) {
    for (int k = 0; k < w->ncon; k++) {
        const fb_contact* c = &w->con[k];
        if (!projected(w, c->art_a) || (c->art_b >= 0 && !projected(w, c->art_b))) {
            continue;
        }
        const int r0 = w->post->nrow;
        const fb_status s = fb_contact_rows(w->post, c, 1, 0.0, NULL, err);
        if (s != FB_OK) {
            return s;
        }
        for (int r = r0; r < w->post->nrow; r++) {
            w->vtarget[r] = r == r0 ? fmin(c->depth, 0.0) : 0.0;
        }
    }
    return FB_OK;
}

/* [Cline thesis §3.4, eq. 3.7] with J for G and the joint-space inertia M as the metric: the
 * position step dp = M^-1 J^T lambda, the smallest in kinetic-energy measure, with
 * J dp >= target, lambda >= 0 and complementarity, is the impulse LCP K lambda >= target (K =
 * J M^-1 J^T, no velocity): fb_csys_impulse's, with the response read off as dp and taken as
 * a step of length 1 (fb_integrate: a ball joint turns by exp(dp)). Velocities are left as
 * they were (a limit approached is stopped by the next substep's impulse). The inertia is
 * undamped (damping_dt 0). */
fb_status fb_world_post_stabilize(fb_world* w, fb_error* err) {
    fb_csys* cs = w->post;
    for (int k = 0; k < w->nart; k++) {
        fb_csys_set_asleep(cs, k, !projected(w, k));
    }
    fb_csys_clear(cs);
    fb_status s = add_post_contact_rows(w, err);
    if (s == FB_OK) {
        s = fb_world_for_each_limit(w, add_post_row, NULL, err);
    }
    if (s == FB_ECAPACITY) {
        w->st.projections_skipped++; /* more contacts than the projection holds: not now */
        return fb_ok(err);
    }
    for (int k = 0; s == FB_OK && k < w->nart; k++) {
        if (!projected(w, k)) {
            continue;
        }
        const fb_model* m = w->m[k];
        fb_data* d = w->d[k];
        memcpy(w->qd_post[k], d->qd, (size_t)m->nv * sizeof(double));
        memcpy(w->qdd_post[k], d->qdd, (size_t)m->nv * sizeof(double));
        d->damping_dt = 0.0;
        /* the positions the collision pass just made at these q serve phase 1 */
        s = fb_world_positions_current(w, k) ? fb_aba_phase1_at_positions(m, d, err)
                                             : fb_aba_phase1(m, d, err);
        if (s == FB_OK) {
            fb_aba_phase2(m, d);
            w->st.aba_calls++;
        }
    }
    if (s == FB_OK) {
        s = fb_csys_build(cs, err);
    }
    if (s != FB_OK) {
        return s;
    }
    memset(w->vrow, 0, (size_t)cs->nrow * sizeof(double));
    fb_pgs_opts o = w->o.pgs;
    o.warm = false;
    fb_csys_impulse(cs, w->vrow, w->vtarget, &o);
    for (int k = 0; k < w->nart; k++) {
        if (!projected(w, k)) {
            continue;
        }
        const fb_model* m = w->m[k];
        fb_data* d = w->d[k];
        for (int j = 0; j < m->nv; j++) {
            d->qd[j] -= w->qd_post[k][j]; /* dp: what the "impulse" added */
        }
        fb_integrate(m, d->q, d->qd, 1.0, d->q);
        memcpy(d->qd, w->qd_post[k], (size_t)m->nv * sizeof(double));
        memcpy(d->qdd, w->qdd_post[k], (size_t)m->nv * sizeof(double));
        d->stage = 0;
    }
    w->st.projections++;
    return FB_OK;
}
