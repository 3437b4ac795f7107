/* The time step [Kokkevis §7]: contacts and limits -> impacts -> constraint forces ->
 * accelerations -> semi-implicit Euler, with backtracking (halving) on deep new penetration.
 *
 * Penetration correction is Baumgarte's: a unilateral row aims at the acceleration
 * omega^2 depth - 2 omega v (a critically damped spring pulling the overlap to zero), with
 * omega = erp / h. It only ever pushes (the row's multiplier stays >= 0) and, since impacts have
 * already removed the approach velocity, adds no energy beyond the overlap it removes. Cline's
 * post-stabilisation (a projection of the positions after each step) would remove drift
 * exactly but costs a second solve per step; docs/CONSTRAINTS.md gives the measured residual
 * penetration of this choice. Joint limits of articulations not driven take it, only after a
 * substep that leaves one past limit_tol (world_limits.c, project_limits below).
 *
 * Sleeping articulations (sleep.c) are skipped throughout: no ABA, rows, ground or self
 * contacts, integration; the step wakes them at its start, at each substep's start and from the
 * forces hook, and puts the still ones to sleep at its end. world_internal.h holds the world. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "featherbone/world.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "featherbone/dynamics.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "model/limit.h"
#include "sim/world_internal.h"
#include "util/block.h"
#include "util/error.h"

/* The world's PGS stops when no multiplier moves by more than 1e-8 of the largest (or 1e-10
 * N, fb_default_pgs_opts's): a standing character's contact forces to 1e-8 of its weight,
 * whatever its mass, where the absolute 1e-10 N alone asked for 1e-13 of it (16 sweeps a step
 * instead of 4; docs/BENCHMARKS.md). */
static fb_pgs_opts world_pgs_opts(void) {
    fb_pgs_opts o = fb_default_pgs_opts();
    o.rel_tol = 1e-8;
    return o;
}

fb_world_opts fb_default_world_opts(void) {
    return (fb_world_opts){
        .dt = 1.0 / 480.0,
        .ground = true,
        .plane = fb_ground_plane(),
        .ground_mu = 1.0,
        .ground_restitution = 0.0,
        .contact_margin = 1e-3,
        .limit_margin = 0.5 * FB_PI / 180.0,
        .erp = 0.2,
        .max_push_speed = 0.5,
        .max_limit_speed = 1.0,
        .pen_tol = 1e-3,
        .limit_tol = 0.25 * FB_PI / 180.0,
        .max_halvings = 8,
        .impact_speed = 1e-3,
        .bounce_speed = 0.05,
        .max_speed = 1e3,
        .max_contacts = 256,
        .pgs = world_pgs_opts(),
        .sleep_speed = 0.01,
        .sleep_time = 0.5,
        .limit_projection = true,
    };
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool positive(double x) {
    return x > 0.0 && isfinite(x);
}

static fb_status check_opts(const fb_world_opts* o, fb_error* err) {
    if (!positive(o->dt)) {
        return fb_fail(err, FB_EINVAL, "world options: dt: expected > 0, found %g", o->dt);
    }
    if (!fb_v3_is_finite(o->plane.n) || fabs(fb_v3_norm(o->plane.n) - 1.0) > 1e-9 ||
        !isfinite(o->plane.offset)) {
        return fb_fail(err, FB_EINVAL, "world options: plane: expected a unit normal");
    }
    if (!(o->ground_mu >= 0.0) || !isfinite(o->ground_mu) || !(o->ground_restitution >= 0.0) ||
        !(o->ground_restitution <= 1.0)) {
        return fb_fail(err, FB_EINVAL,
                       "world options: ground_mu/ground_restitution: expected mu >= 0, e in [0, 1]");
    }
    if (!(o->contact_margin >= 0.0) || !(o->limit_margin >= 0.0) || !positive(o->pen_tol) ||
        !positive(o->limit_tol) || !(o->erp >= 0.0 && o->erp <= 1.0)) {
        return fb_fail(err, FB_EINVAL, "world options: margins and tolerances: expected >= 0, "
                       "tolerances > 0, erp in [0, 1]");
    }
    if (!positive(o->max_push_speed) || !positive(o->max_limit_speed)) {
        return fb_fail(err, FB_EINVAL, "world options: max_push_speed, max_limit_speed: expected "
                       "> 0, found %g, %g", o->max_push_speed, o->max_limit_speed);
    }
    if (o->max_halvings < 0 || o->max_halvings > 30 || !(o->impact_speed >= 0.0) ||
        !(o->bounce_speed >= 0.0) || !positive(o->max_speed)) {
        return fb_fail(err, FB_EINVAL, "world options: max_halvings 0..30, speeds >= 0 expected");
    }
    if (o->max_contacts < 1 || o->max_contacts > 10000 || o->pgs.max_iter < 1 ||
        !(o->pgs.tol >= 0.0) || !(o->pgs.rel_tol >= 0.0)) {
        return fb_fail(err, FB_EINVAL,
                       "world options: max_contacts 1..10000, pgs.max_iter >= 1, pgs.tol and "
                       "pgs.rel_tol >= 0 expected");
    }
    if (!(o->sleep_speed >= 0.0) || !isfinite(o->sleep_speed) || !(o->sleep_time >= 0.0) ||
        !isfinite(o->sleep_time)) {
        return fb_fail(err, FB_EINVAL,
                       "world options: sleep_speed/sleep_time: expected finite values >= 0, "
                       "found %g, %g",
                       o->sleep_speed, o->sleep_time);
    }
    return FB_OK;
}

/* Joint-limit rows a model may need at once. */
static int limit_rows_max(const fb_model* m) {
    int n = 0;
    for (int i = 1; i < m->nbody; i++) {
        n += m->limit[i].on ? FB_LIMIT_KINDS : 0;
    }
    return n;
}

static size_t layout(fb_world* w, char* base, int max_rows) {
    size_t off = 0;
    const size_t nc = (size_t)w->o.max_contacts, nr = (size_t)max_rows;
    w->con = fb_block_carve(base, &off, nc * sizeof(fb_contact));
    w->con_next = fb_block_carve(base, &off, nc * sizeof(fb_contact));
    w->con_last = fb_block_carve(base, &off, nc * sizeof(fb_contact));
    w->con_row = fb_block_carve(base, &off, nc * sizeof(int));
    w->vrow = fb_block_carve(base, &off, nr * sizeof(double));
    w->vtarget = fb_block_carve(base, &off, nr * sizeof(double));
    w->depth = fb_block_carve(base, &off, nr * sizeof(double));
    w->rest = fb_block_carve(base, &off, nr * sizeof(double));
    int nbimp = 0;
    for (int k = 0; k < w->nart; k++) {
        const size_t nb = (size_t)w->m[k]->nbody, nv = (size_t)w->m[k]->nv;
        w->q_save[k] = fb_block_carve(base, &off, (size_t)w->m[k]->nq * sizeof(double));
        w->qd_save[k] = fb_block_carve(base, &off, nv * sizeof(double));
        w->qd_post[k] = fb_block_carve(base, &off, nv * sizeof(double));
        w->qdd_post[k] = fb_block_carve(base, &off, nv * sizeof(double));
        w->q_pos[k] = fb_block_carve(base, &off, (size_t)w->m[k]->nq * sizeof(double));
        w->q_sleep[k] = fb_block_carve(base, &off, (size_t)w->m[k]->nq * sizeof(double));
        w->self_on[k] = fb_block_carve(base, &off, nb * nb * sizeof(uint8_t));
        w->jimp_sub[k] = fb_block_carve(base, &off, nv * sizeof(double));
        w->jimp_step[k] = fb_block_carve(base, &off, nv * sizeof(double));
        w->held[k] = fb_block_carve(base, &off, nv * sizeof(uint8_t));
        w->boff[k] = nbimp;
        nbimp += w->m[k]->nbody * (w->nart + 1);
    }
    const size_t nbi = (size_t)nbimp;
    w->nbimp = nbimp;
    w->bimp_sub = fb_block_carve(base, &off, nbi * sizeof(fb_v3));
    w->bimp_step = fb_block_carve(base, &off, nbi * sizeof(fb_v3));
    w->bdirty_sub = fb_block_carve(base, &off, nbi * sizeof(int));
    w->bdirty_step = fb_block_carve(base, &off, nbi * sizeof(int));
    w->bmark_sub = fb_block_carve(base, &off, nbi * sizeof(uint8_t));
    w->bmark_step = fb_block_carve(base, &off, nbi * sizeof(uint8_t));
    return off;
}

/* Contacts a limit projection takes rows for (world_limits.c): a body lying on the ground
 * touches it at 20-25; with more, the projection waits for a substep with fewer. Its K is
 * rows^2, 0.7 MB at this size against the step's 6 MB. */
#define POST_CONTACTS 64

/* Rows the caller's hook may add per substep, beyond contacts and limits. */
#define HOOK_ROWS_PER_DOF 1

fb_world* fb_world_create(int nart, const fb_model* const* m, const fb_world_opts* opts,
                          const fb_allocator* alloc, fb_error* err) {
    const fb_world_opts o = opts ? *opts : fb_default_world_opts();
    if (nart < 1 || nart > FB_CSYS_MAX_ART) {
        fb_fail(err, FB_EINVAL, "fb_world_create: expected 1..%d articulations, found %d",
                FB_CSYS_MAX_ART, nart);
        return NULL;
    }
    if (check_opts(&o, err) != FB_OK) {
        return NULL;
    }
    for (int k = 0; k < nart; k++) {
        if (!m[k] || !m[k]->finalized) {
            fb_fail(err, FB_ESTATE, "fb_world_create: articulation %d: model not finalized", k);
            return NULL;
        }
    }
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    fb_world* w = fb_alloc(&a, sizeof *w);
    if (!w) {
        fb_fail(err, FB_ENOMEM, "fb_world_create: out of memory");
        return NULL;
    }
    memset(w, 0, sizeof *w);
    w->o = o;
    w->alloc = a;
    w->nart = nart;
    int max_rows = 3 * o.max_contacts;
    int post_rows = 3 * (o.max_contacts < POST_CONTACTS ? o.max_contacts : POST_CONTACTS);
    for (int k = 0; k < nart; k++) {
        w->m[k] = m[k];
        w->mu[k] = 1.0;
        w->e[k] = 0.0;
        w->has_shapes[k] = m[k]->nshape > 0;
        w->spheres_only[k] = m[k]->nshape > 0;
        for (int s = 0; s < m[k]->nshape; s++) {
            w->spheres_only[k] = w->spheres_only[k] && m[k]->shape[s].type == FB_SHAPE_SPHERE;
        }
        /* rolling rows: two at most for each body on the ground; joint friction: one per dof */
        max_rows +=
            limit_rows_max(m[k]) + HOOK_ROWS_PER_DOF * m[k]->nv + 2 * m[k]->nbody + m[k]->nv;
        post_rows += limit_rows_max(m[k]);
    }
    const size_t size = layout(w, NULL, max_rows);
    w->block = fb_alloc_zero(&a, size);
    bool ok = w->block != NULL;
    for (int k = 0; ok && k < nart; k++) {
        w->d[k] = fb_data_create(m[k], &a, err);
        ok = w->d[k] != NULL;
    }
    if (ok) {
        layout(w, w->block, max_rows);
        w->cs = fb_csys_create(nart, m, w->d, max_rows, &a, err);
        w->post = w->cs ? fb_csys_create(nart, m, w->d, post_rows, &a, err) : NULL;
        ok = w->post != NULL;
        if (ok) {
            /* a tracking controller's dof rows are solved with M, not formed in K */
            fb_csys_set_k_method(w->cs, FB_K_JOINT_SPACE);
            fb_csys_set_k_method(w->post, FB_K_JOINT_SPACE);
        }
    } else if (!w->block) {
        fb_fail(err, FB_ENOMEM, "fb_world_create: out of memory");
    }
    if (!ok) {
        fb_world_destroy(w);
        return NULL;
    }
    fb_ok(err);
    return w;
}

fb_status fb_world_copy(fb_world* dst, const fb_world* src, fb_error* err) {
    bool same = dst->nart == src->nart && dst->o.max_contacts == src->o.max_contacts;
    for (int k = 0; same && k < src->nart; k++) {
        same = dst->m[k]->nbody == src->m[k]->nbody && dst->m[k]->nq == src->m[k]->nq &&
               dst->m[k]->nv == src->m[k]->nv;
    }
    if (!same) {
        return fb_fail(err, FB_EINVAL,
                       "fb_world_copy: the worlds differ in articulations or their shapes");
    }
    if (dst == src) {
        return fb_ok(err);
    }
    /* the systems first (their rows follow from the shapes checked above) */
    fb_status st = fb_csys_copy(dst->cs, src->cs, err);
    st = st == FB_OK ? fb_csys_copy(dst->post, src->post, err) : st;
    if (st != FB_OK) {
        return st;
    }
    /* everything but what dst owns or lends: its block, data, systems, models and hook */
    const fb_world keep = *dst;
    *dst = *src;
    memcpy(dst->m, keep.m, sizeof dst->m);
    memcpy(dst->d, keep.d, sizeof dst->d);
    dst->cs = keep.cs;
    dst->post = keep.post;
    dst->hook = keep.hook;
    dst->user = keep.user;
    dst->alloc = keep.alloc;
    dst->block = keep.block;
    fb_world shape = *dst; /* counts the block's bytes without touching dst's pointers */
    memcpy(dst->block, src->block, layout(&shape, NULL, src->cs->cap));
    layout(dst, dst->block, dst->cs->cap);
    for (int k = 0; k < dst->nart; k++) {
        (void)fb_data_copy(dst->d[k], src->d[k]);
    }
    return fb_ok(err);
}

void fb_world_destroy(fb_world* w) {
    if (!w) {
        return;
    }
    const fb_allocator a = w->alloc;
    fb_csys_destroy(w->cs);
    fb_csys_destroy(w->post);
    for (int k = 0; k < w->nart; k++) {
        fb_data_destroy(w->d[k]);
    }
    fb_free(&a, w->block);
    fb_free(&a, w);
}

fb_data* fb_world_data(fb_world* w, int k) {
    return (k >= 0 && k < w->nart) ? w->d[k] : NULL;
}

const fb_model* fb_world_model(const fb_world* w, int k) {
    return (k >= 0 && k < w->nart) ? w->m[k] : NULL;
}

int fb_world_nart(const fb_world* w) {
    return w->nart;
}

const fb_world_opts* fb_world_options(const fb_world* w) {
    return &w->o;
}

void fb_world_set_hook(fb_world* w, fb_world_hook hook, void* user) {
    w->hook = hook;
    w->user = user;
}

void* fb_world_hook_user(const fb_world* w) {
    return w->hook ? w->user : NULL;
}

bool fb_world_driven(const fb_world* w, int art) {
    return art >= 0 && art < w->nart && w->driven[art];
}

fb_status fb_world_set_driven(fb_world* w, int art, bool driven, fb_error* err) {
    if (art < 0 || art >= w->nart) {
        return fb_fail(err, FB_EINVAL, "fb_world_set_driven: art: expected 0..%d, found %d",
                       w->nart - 1, art);
    }
    w->driven[art] = driven;
    return fb_ok(err);
}

double fb_world_time(const fb_world* w) {
    return w->time;
}

void fb_world_set_time(fb_world* w, double t) {
    w->time = t;
    for (int k = 0; k < w->nart; k++) {
        w->d[k]->time = t;
        w->d[k]->stage = 0;
    }
}

const fb_csys* fb_world_csys(const fb_world* w) {
    return w->cs;
}

const fb_world_stats* fb_world_get_stats(const fb_world* w) {
    return &w->st;
}

void fb_world_reset_stats(fb_world* w) {
    memset(&w->st, 0, sizeof w->st);
    for (int k = 0; k < w->nart; k++) {
        w->st.sleeping += w->asleep[k];
    }
}

/* ---- contacts ---------------------------------------------------------------------------- */

/* Whether articulation k's X_up and X_0 are those of its current q, made by the world (the
 * positions at the end of a substep serve the next substep's contacts and ABA): same q, and
 * nothing since cleared the stage (integration and backtracking do). */
bool fb_world_positions_current(const fb_world* w, int k) {
    return w->pos_known[k] && (w->d[k]->stage & FB_STAGE_POS) &&
           memcmp(w->q_pos[k], w->d[k]->q, (size_t)w->m[k]->nq * sizeof(double)) == 0;
}

/* Notes that articulation k's positions were made at its current q. */
static void note_positions(fb_world* w, int k) {
    memcpy(w->q_pos[k], w->d[k]->q, (size_t)w->m[k]->nq * sizeof(double));
    w->pos_known[k] = true;
}

/* Every touching contact at the current positions (position kinematics done here, unless
 * the world made them at this q already). A sleeping articulation makes no ground or self
 * contacts (its q is constant), and none with another sleeper; with an awake one it does
 * (that contact wakes it). */
static fb_status collide_all(fb_world* w, fb_contact* out, int* n, fb_error* err) {
    const int cap = w->o.max_contacts;
    *n = 0;
    for (int k = 0; k < w->nart; k++) {
        if (!fb_world_positions_current(w, k)) {
            fb_kinematics_pos(w->m[k], w->d[k]);
            note_positions(w, k);
        }
    }
    fb_status s = FB_OK;
    for (int k = 0; s == FB_OK && k < w->nart; k++) {
        if (w->o.ground && w->has_shapes[k] && !w->asleep[k]) {
            s = fb_collide_plane(w->m[k], w->d[k], k, w->o.plane, w->o.contact_margin, out, n,
                                 cap, err);
        }
    }
    /* between articulations: a ball against anything */
    for (int a = 0; s == FB_OK && a < w->nart; a++) {
        for (int b = a + 1; s == FB_OK && b < w->nart; b++) {
            if (w->asleep[a] && w->asleep[b]) {
                continue;
            }
            if (w->spheres_only[b] && w->has_shapes[a]) {
                s = fb_collide_spheres(w->m[a], w->d[a], a, w->m[b], w->d[b], b,
                                       w->o.contact_margin, out, n, cap, err);
            } else if (w->spheres_only[a] && w->has_shapes[b]) {
                s = fb_collide_spheres(w->m[b], w->d[b], b, w->m[a], w->d[a], a,
                                       w->o.contact_margin, out, n, cap, err);
            }
        }
    }
    /* within an articulation: the pairs of bodies switched on, every shape of one against
     * every shape of the other */
    for (int k = 0; s == FB_OK && k < w->nart; k++) {
        const fb_model* m = w->m[k];
        const uint8_t* on = w->self_on[k];
        for (int sa = 0; s == FB_OK && w->nself[k] > 0 && !w->asleep[k] && sa < m->nshape;
             sa++) {
            const int ba = m->shape[sa].body;
            for (int sb = sa + 1; s == FB_OK && sb < m->nshape; sb++) {
                const int bb = m->shape[sb].body;
                if (ba != bb && on[ba * m->nbody + bb]) {
                    s = fb_collide_shape_pair(m, w->d[k], k, sa, m, w->d[k], k, sb,
                                              w->o.contact_margin, out, n, cap, err);
                }
            }
        }
    }
    if (s == FB_ECAPACITY) {
        return fb_fail(err, FB_ECAPACITY, "world: more than max_contacts = %d contacts (%s)",
                       cap, err ? err->msg : "");
    }
    return s;
}

static bool contact_known(const fb_contact* c, int n, uint64_t id) {
    for (int k = 0; k < n; k++) {
        if (c[k].id == id) {
            return true;
        }
    }
    return false;
}

/* ---- the substep -------------------------------------------------------------------------- */

static fb_status add_contact_rows(fb_world* w, fb_error* err) {
    memcpy(w->con_last, w->con, (size_t)w->ncon * sizeof(fb_contact));
    w->ncon_last = w->ncon;
    for (int k = 0; k < w->ncon; k++) {
        const fb_contact* c = &w->con[k];
        const double mu_b = c->art_b >= 0 ? w->mu[c->art_b] : w->o.ground_mu;
        const double e_b = c->art_b >= 0 ? w->e[c->art_b] : w->o.ground_restitution;
        const int r0 = w->cs->nrow;
        const fb_status s = fb_contact_rows(w->cs, c, 1, fmin(w->mu[c->art_a], mu_b), NULL, err);
        if (s != FB_OK) {
            return s;
        }
        w->con_row[k] = r0;
        if (w->roll[c->art_a] > 0.0 && c->art_b < 0) {
            const fb_status sr = fb_world_add_rolling_rows(w, k, r0, err);
            if (sr != FB_OK) {
                return sr;
            }
        }
        for (int r = r0; r < w->cs->nrow; r++) {
            w->depth[r] = (r == r0) ? c->depth : NAN;
            w->rest[r] = fmax(w->e[c->art_a], e_b);
        }
    }
    return FB_OK;
}

/* ABA for every articulation awake; joint damping acts implicitly over the substep h (until
 * the substep ends: phase 2 and the test-force responses must see the same D). */
static fb_status run_aba(fb_world* w, double h, fb_error* err) {
    for (int k = 0; k < w->nart; k++) {
        if (w->asleep[k]) {
            continue;
        }
        w->d[k]->damping_dt = h;
        /* the positions of the contacts just found serve phase 1 as well (bit-identical) */
        const fb_status s = fb_world_positions_current(w, k)
                                ? fb_aba_phase1_at_positions(w->m[k], w->d[k], err)
                                : fb_aba_phase1(w->m[k], w->d[k], err);
        if (s != FB_OK) {
            return s;
        }
        note_positions(w, k);
        fb_aba_phase2(w->m[k], w->d[k]);
        w->st.aba_calls++;
    }
    return FB_OK;
}

/* ABA again after an impulse changed only the velocities: phase 1's position terms (the
 * articulated inertias, U, D^-1) are those of run_aba at the same positions and damping step,
 * so only its velocity terms are made anew (bit-identical to a full phase 1). */
static void run_aba_velocities(fb_world* w) {
    for (int k = 0; k < w->nart; k++) {
        if (w->asleep[k]) {
            continue;
        }
        fb_aba_phase1_velocities(w->m[k], w->d[k]);
        fb_aba_phase2(w->m[k], w->d[k]);
    }
}

/* Adds f to the substep's impulse on body `body` of articulation `art` from articulation o
 * (nart: the ground). */
static void add_body_impulse(fb_world* w, int art, int body, int o, fb_v3 f) {
    const int i = w->boff[art] + body * (w->nart + 1) + o;
    if (!w->bmark_sub[i]) {
        w->bmark_sub[i] = 1;
        w->bdirty_sub[w->nbdirty_sub++] = i;
    }
    w->bimp_sub[i] = fb_v3_add(w->bimp_sub[i], f);
}

/* Adds scale times the multipliers of the world's point rows (contacts) to the impulses
 * between the articulations they join, and between their bodies: lambda n on art (body),
 * -lambda n on art_b (body_b). */
static void add_pair_impulses(fb_world* w, double scale) {
    const fb_csys* cs = w->cs;
    for (int r = 0; r < w->nrow_own; r++) {
        const fb_row* row = &cs->row[r];
        if (row->type != FB_ROW_POINT || cs->lambda[r] == 0.0) {
            continue;
        }
        const fb_v3 f = fb_v3_scale(row->n, scale * cs->lambda[r]);
        const int b = row->art_b < 0 ? w->nart : row->art_b;
        w->imp_sub[row->art][b] = fb_v3_add(w->imp_sub[row->art][b], f);
        add_body_impulse(w, row->art, row->body, b, f);
        if (row->art_b >= 0) {
            w->imp_sub[b][row->art] = fb_v3_sub(w->imp_sub[b][row->art], f);
            add_body_impulse(w, b, row->body_b, row->art, fb_v3_neg(f));
        }
    }
}

/* Clears the per-body impulses of the substep in progress (only the entries it set). */
static void clear_body_impulses_sub(fb_world* w) {
    for (int k = 0; k < w->nbdirty_sub; k++) {
        const int i = w->bdirty_sub[k];
        w->bimp_sub[i] = fb_v3_zero();
        w->bmark_sub[i] = 0;
    }
    w->nbdirty_sub = 0;
}

/* The generalised impulse of each articulation's joint forces over the substep: h tau, plus
 * h lambda of the caller's dof rows (rows from `from` on). */
static void joint_impulses_sub(fb_world* w, int from, double h) {
    for (int k = 0; k < w->nart; k++) {
        const fb_data* d = w->d[k];
        double* j = w->jimp_sub[k];
        for (int v = 0; v < w->m[k]->nv; v++) {
            j[v] = h * d->tau[v];
        }
    }
    const fb_csys* cs = w->cs;
    for (int r = from; r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        if (row->type == FB_ROW_DOF) {
            w->jimp_sub[row->art][row->dof] += h * cs->lambda[r];
        }
    }
}

/* A substep was accepted: its impulses join the step's. */
static void accept_impulses(fb_world* w) {
    for (int a = 0; a <= w->nart; a++) {
        for (int b = 0; b <= w->nart; b++) {
            w->imp_step[a][b] = fb_v3_add(w->imp_step[a][b], w->imp_sub[a][b]);
        }
    }
    for (int k = 0; k < w->nbdirty_sub; k++) {
        const int i = w->bdirty_sub[k];
        if (!w->bmark_step[i]) {
            w->bmark_step[i] = 1;
            w->bdirty_step[w->nbdirty_step++] = i;
        }
        w->bimp_step[i] = fb_v3_add(w->bimp_step[i], w->bimp_sub[i]);
    }
    for (int k = 0; k < w->nart; k++) {
        for (int v = 0; v < w->m[k]->nv; v++) {
            w->jimp_step[k][v] += w->jimp_sub[k][v];
        }
    }
}

/* Clears the step's impulses (at the start of a step). */
static void clear_step_impulses(fb_world* w) {
    memset(w->imp_step, 0, sizeof w->imp_step);
    for (int k = 0; k < w->nbdirty_step; k++) {
        const int i = w->bdirty_step[k];
        w->bimp_step[i] = fb_v3_zero();
        w->bmark_step[i] = 0;
    }
    w->nbdirty_step = 0;
    for (int k = 0; k < w->nart; k++) {
        memset(w->jimp_step[k], 0, (size_t)w->m[k]->nv * sizeof(double));
    }
}

/* Whether row r is a joint limit of a driven articulation (fb_world_set_driven), stopped in the
 * force solve rather than by an impulse. The impulse solve leaves the caller's rows out (they
 * are accelerations set for the substep from its start): an impulse would stop the joint on a
 * passive chain, its neighbours flung (131_03's right knee at a hop's take-off: the ankle went
 * from 12.7 to -6.5 rad/s), and the controller's own braking toward the stop would then be
 * applied on top, the stop counted twice (the knee rebounded 7 deg, the export 1.6 cm off its
 * input). In the force solve the limit's "stopped within the substep" (target -v / h, what the
 * impulse with restitution 0 gives) and the controller's rows meet in one LCP: the limit takes
 * only what the controller does not give, and the chain is held by the controller's rows.
 * Contacts keep their impulses (a ball's hit is an impact). docs/CONSTRAINTS.md, "Joint
 * limits". */
static bool stops_in_solve(const fb_world* w, const fb_row* row) {
    return row->type == FB_ROW_JOINT && w->driven[row->art];
}

/* Impulses for rows that approach [Kokkevis §5]: unilateral rows aim at -e v (0 below the
 * bounce speed), friction rows at no slip; the caller's rows take no impulse. Returns whether
 * an impact was resolved (velocities changed). */
static bool impacts(fb_world* w, double h) {
    fb_csys* cs = w->cs;
    fb_csys_row_velocity(cs, w->vrow);
    bool any = false;
    for (int r = 0; r < cs->nrow; r++) {
        if (stops_in_solve(w, &cs->row[r])) {
            continue; /* stopped in the force solve, with the driving rows (substep) */
        }
        /* a row still apart by a gap (depth < 0, within the margin) is hit only if it would
         * close the gap within the substep: slower, it closes it by itself */
        const double gap = isnan(w->depth[r]) ? 0.0 : fmax(0.0, -w->depth[r]);
        any = any || (!isnan(w->depth[r]) && w->vrow[r] < -w->o.impact_speed - gap / h);
    }
    if (!any) {
        return false;
    }
    for (int r = 0; r < cs->nrow; r++) {
        const double v = w->vrow[r];
        if (!isnan(w->depth[r])) {
            w->vtarget[r] = (-v > w->o.bounce_speed) ? -w->rest[r] * v : 0.0;
        } else if (cs->row[r].friction_of >= 0) {
            w->vtarget[r] = 0.0;
        } else {
            w->vtarget[r] = -INFINITY;
        }
    }
    fb_pgs_opts o = w->o.pgs;
    o.warm = false;
    fb_csys_impulse(cs, w->vrow, w->vtarget, &o);
    add_pair_impulses(w, 1.0);
    w->st.impacts++;
    return true;
}

/* Wakes the sleepers due and those an awake articulation touches (sleep.c), and makes the
 * contacts again while any woke (a woken one's ground and self contacts, and those with the
 * sleepers it touches, which wake in turn). */
static fb_status wake_and_collide(fb_world* w, fb_error* err) {
    for (;;) {
        fb_sleep_wake_touching(w);
        if (!w->recollide) {
            return FB_OK;
        }
        w->recollide = false;
        const fb_status s = collide_all(w, w->con, &w->ncon, err);
        if (s != FB_OK) {
            return s;
        }
    }
}

/* One substep of length h from the current state and contacts (w->con). */
static fb_status substep(fb_world* w, double h, fb_error* err) {
    fb_csys* cs = w->cs;
    fb_status s = FB_OK;
    if (w->hook) {
        s = w->hook(w->user, w, FB_HOOK_FORCES, w->time, h, NULL, err);
        if (s == FB_OK && w->recollide) {
            s = wake_and_collide(w, err); /* the hook woke an articulation */
        }
        if (s != FB_OK) {
            return s;
        }
    }
    double t0 = now_s();
    s = run_aba(w, h, err);
    w->aba_done = true;
    if (s != FB_OK) {
        return s;
    }
    double t1 = now_s();
    w->st.t_dynamics += t1 - t0;

    fb_csys_clear(cs);
    w->st.limits = 0;
    s = add_contact_rows(w, err);
    if (s == FB_OK) {
        s = fb_world_for_each_limit(w, fb_world_add_limit_row, NULL, err);
    }
    const int n_own = cs->nrow;
    w->nrow_own = n_own;
    memset(w->imp_sub, 0, sizeof w->imp_sub);
    clear_body_impulses_sub(w);
    if (s == FB_OK && w->hook) {
        s = w->hook(w->user, w, FB_HOOK_ROWS, w->time, h, cs, err);
    }
    if (s == FB_OK) {
        s = fb_world_add_friction_rows(w, n_own, err); /* the dofs no caller's row holds */
    }
    if (s != FB_OK) {
        return s;
    }
    for (int r = n_own; r < cs->nrow; r++) {
        w->depth[r] = NAN;
        w->rest[r] = 0.0;
    }
    s = fb_csys_build(cs, err);
    if (s != FB_OK) {
        return s;
    }
    t0 = now_s();
    w->st.t_build += t0 - t1;

    if (impacts(w, h)) {
        t1 = now_s();
        w->st.t_solve += t1 - t0;
        run_aba_velocities(w);
        s = fb_csys_build_a0(cs, err);
        if (s != FB_OK) {
            return s;
        }
        fb_csys_row_velocity(cs, w->vrow);
        t0 = now_s();
        w->st.t_dynamics += t0 - t1;
    }

    /* Baumgarte targets for unilateral rows; friction rows aim to stop the slip within the
     * substep (they saturate at mu N while sliding; joint friction at f). The critically damped
     * spring omega^2 d - 2 omega v pushes out at up to omega d / 2: past the depth that gives
     * max_push_speed (max_limit_speed for limits) it sees only that depth, so a deep overlap
     * (a joint driven far past its stop) is undone at that speed rather than flung out. */
    const double omega = w->o.erp / h;
    const double push_depth = 2.0 * w->o.max_push_speed / omega;
    const double limit_depth = 2.0 * w->o.max_limit_speed / omega;
    for (int r = 0; r < cs->nrow; r++) {
        fb_row* row = &cs->row[r];
        if (!isnan(w->depth[r]) && w->depth[r] < 0.0) {
            /* still apart: only what would close the gap within the substep is held back
             * (position after the substep gap + h (v + h a) >= 0); Baumgarte's damping term
             * would brake an approach a margin early */
            row->target = (w->depth[r] - h * w->vrow[r]) / (h * h);
        } else if (!isnan(w->depth[r])) {
            const double cap = row->type == FB_ROW_JOINT ? limit_depth : push_depth;
            const double v = w->vrow[r];
            const double spring = omega * omega * fmin(w->depth[r], cap);
            if (stops_in_solve(w, row) && v < -w->o.impact_speed) {
                row->target = spring - v / h; /* the impact's stop, within the substep */
            } else {
                row->target = spring - 2.0 * omega * v;
            }
        } else if (row->friction_of >= 0 || fb_world_is_friction_row(row)) {
            row->target = -w->vrow[r] / h;
        }
    }
    fb_csys_solve(cs, &w->o.pgs);
    fb_csys_apply(cs);
    add_pair_impulses(w, h);
    joint_impulses_sub(w, n_own, h);
    t1 = now_s();
    w->st.t_solve += t1 - t0;

    for (int k = 0; k < w->nart; k++) {
        const fb_model* m = w->m[k];
        fb_data* d = w->d[k];
        if (w->asleep[k]) {
            d->time += h; /* its state stays as it is */
            continue;
        }
        fb_velocity_step(m, d->qd, d->qdd, h);
        fb_integrate(m, d->q, d->qd, h, d->q);
        d->time += h;
        d->stage = 0;
        d->damping_dt = 0.0; /* the caller's own ABA calls see explicit damping */
    }
    w->time += h;
    w->aba_done = false;
    w->st.t_dynamics += now_s() - t1;
    w->st.contacts = w->ncon;
    w->st.rows = cs->nrow;
    w->st.iterations = cs->iterations;
    w->st.residual = cs->residual;
    w->st.substeps++;
    return FB_OK;
}

static void save_state(fb_world* w) {
    for (int k = 0; k < w->nart; k++) {
        memcpy(w->q_save[k], w->d[k]->q, (size_t)w->m[k]->nq * sizeof(double));
        memcpy(w->qd_save[k], w->d[k]->qd, (size_t)w->m[k]->nv * sizeof(double));
    }
}

/* The state saved at the substep's start; a sleeper (asleep throughout: none falls asleep
 * within a step) keeps its state and stage, only its time goes back. */
static void restore_state(fb_world* w, double t) {
    w->aba_done = false;
    for (int k = 0; k < w->nart; k++) {
        if (w->asleep[k]) {
            w->d[k]->time = t;
            continue;
        }
        memcpy(w->d[k]->q, w->q_save[k], (size_t)w->m[k]->nq * sizeof(double));
        memcpy(w->d[k]->qd, w->qd_save[k], (size_t)w->m[k]->nv * sizeof(double));
        w->d[k]->time = t;
        w->d[k]->stage = 0;
        w->d[k]->damping_dt = 0.0;
    }
    w->time = t;
}

/* FB_ENUMERIC naming the first joint whose velocity or position is not finite or runs away. */
static fb_status check_blowup(const fb_world* w, double t, fb_error* err) {
    for (int k = 0; k < w->nart; k++) {
        const fb_model* m = w->m[k];
        const fb_data* d = w->d[k];
        for (int j = 0; j < m->nv; j++) {
            if (!isfinite(d->qd[j]) || fabs(d->qd[j]) > w->o.max_speed) {
                return fb_fail(err, FB_ENUMERIC,
                               "simulation blew up at t = %.4f s: articulation %d, joint '%s': "
                               "velocity %g beyond max_speed %g",
                               t, k, m->name[m->dof_body[j]], d->qd[j], w->o.max_speed);
            }
        }
        for (int j = 0; j < m->nq; j++) {
            if (!isfinite(d->q[j])) {
                return fb_fail(err, FB_ENUMERIC,
                               "simulation blew up at t = %.4f s: articulation %d: position %d "
                               "not finite",
                               t, k, j);
            }
        }
    }
    return FB_OK;
}

/* An accepted substep left a joint of an articulation not driven past its range by more than
 * limit_tol: positions are projected back (world_limits.c) and the contacts and figures made
 * again at the new ones. A limp body's limit rows hold its joints' velocities but not their
 * paths: turning at 25-90 rad/s in a collapse, a ball joint's limit curves away by 0.4-1.2 deg
 * a substep while its row's velocity is zero (its n . w-dot leaves out w^T H w), and the PGS
 * sweeps of a body lying on its limits and the ground stop at their cap. The ragdoll went
 * 3.3-6.9 deg past its ranges without this (docs/CONSTRAINTS.md, "Joint limits").
 *
 * A projection is first order: where two ball joints of a light chain share the correction
 * (the neck's, under the head) the step is a few degrees and its own curvature leaves the
 * joints up to 1.3 deg past (one pass: 0.53-2.60 deg after six of the ragdoll's drops). A
 * pass from the new positions takes that back, as Newton's method would: PROJECTION_PASSES at
 * most, stopping once every limit is within limit_tol (two have sufficed in every drop
 * measured). */
#define PROJECTION_PASSES 4

static fb_status project_limits(fb_world* w, fb_error* err) {
    double overshoot[3] = {0.0, 0.0, 0.0};
    for (int pass = 0; pass < PROJECTION_PASSES; pass++) {
        fb_status s = fb_world_post_stabilize(w, err);
        if (s == FB_OK) {
            s = collide_all(w, w->con, &w->ncon, err);
        }
        if (s != FB_OK) {
            return s;
        }
        overshoot[0] = overshoot[1] = overshoot[2] = 0.0;
        (void)fb_world_for_each_limit(w, fb_world_note_overshoot, overshoot, err);
        if (overshoot[2] <= w->o.limit_tol) {
            break;
        }
    }
    double deep = 0.0;
    for (int k = 0; k < w->ncon; k++) {
        deep = fmax(deep, w->con[k].depth);
    }
    w->st.max_penetration = deep;
    w->st.max_limit_violation = overshoot[1];
    return FB_OK;
}

fb_status fb_world_step(fb_world* w, fb_error* err) {
    const double t_start = now_s();
    /* contacts at the state the caller left (it may have moved things since the last step,
     * which wakes a sleeper) */
    fb_sleep_wake_moved(w);
    fb_status s = collide_all(w, w->con, &w->ncon, err);
    if (s != FB_OK) {
        return s;
    }
    w->recollide = false; /* those contacts include any woken so far */
    const double dt = w->o.dt;
    const double t_end = w->time + dt;
    clear_step_impulses(w);
    double h = dt;
    int halvings = 0;
    while (s == FB_OK && w->time < t_end - 1e-9 * dt) {
        h = fmin(h, t_end - w->time);
        const double t0 = w->time;
        /* a sleeper an awake articulation now touches wakes before anything is solved */
        s = wake_and_collide(w, err);
        if (s != FB_OK) {
            break;
        }
        save_state(w);
        s = substep(w, h, err);
        if (s != FB_OK) {
            restore_state(w, t0);
            break;
        }
        const double tc = now_s();
        s = collide_all(w, w->con_next, &w->ncon_next, err);
        w->st.t_collision += now_s() - tc;
        if (s != FB_OK) {
            restore_state(w, t0);
            break;
        }
        double new_deep = 0.0, deep = 0.0;
        for (int k = 0; k < w->ncon_next; k++) {
            const fb_contact* c = &w->con_next[k];
            deep = fmax(deep, c->depth);
            if (c->depth > w->o.pen_tol && !contact_known(w->con, w->ncon, c->id)) {
                new_deep = fmax(new_deep, c->depth);
            }
        }
        double overshoot[3] = {0.0, 0.0, 0.0};
        (void)fb_world_for_each_limit(w, fb_world_note_overshoot, overshoot, err);
        const double new_limit = overshoot[0], limit = overshoot[1];
        if ((new_deep > w->o.pen_tol || new_limit > w->o.limit_tol) &&
            halvings < w->o.max_halvings) {
            restore_state(w, t0); /* backtrack: the same substep at half the length */
            h *= 0.5;
            halvings++;
            w->st.halvings++;
            continue;
        }
        s = check_blowup(w, w->time, err);
        if (s != FB_OK) {
            restore_state(w, t0);
            break;
        }
        /* accept: the contacts at the new state are those of the next substep */
        accept_impulses(w);
        fb_contact* tmp = w->con;
        w->con = w->con_next;
        w->con_next = tmp;
        w->ncon = w->ncon_next;
        w->st.max_penetration = deep;
        w->st.max_limit_violation = limit;
        if (w->o.limit_projection && overshoot[2] > w->o.limit_tol) {
            s = project_limits(w, err);
        }
    }
    if (s == FB_OK) {
        fb_sleep_settle(w);
    }
    w->st.steps++;
    w->st.t_total += now_s() - t_start;
    return s;
}
