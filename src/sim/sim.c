/* fb_sim: a character tracking its clip while balls hit it [Cline §5.2]. The world, the tracker,
 * the balls' launches, and what is recorded at the clip's frame rate for the exports
 * (sim_export.c writes them) and the report. sim_internal.h holds the object. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/dynamics.h"
#include "featherbone/sim.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "math/vec3.h"
#include "util/error.h"

#include "sim_internal.h"

fb_sim_opts fb_default_sim_opts(void) {
    return (fb_sim_opts){.first = 0,
                         .last = 0,
                         .fit = NULL,
                         .self_collision = false,
                         .ball_mu = 0.5,
                         .recover_tol = 0.02,
                         .spare_balls = 0,
                         .ref = NULL,
                         .export_placed = false,
                         .baseline = true,
                         .control = NULL};
}

static const char* const PART_NAMES[FB_NPART] = {"torso",     "head",     "left arm",
                                                 "right arm", "left leg", "right leg"};

const char* fb_part_name(fb_part p) {
    return (p >= 0 && p < FB_NPART) ? PART_NAMES[p] : "?";
}

/* ---- body parts ---------------------------------------------------------------------------- */

static bool has_word(const char* lower, const char* const* words) {
    for (int k = 0; words[k]; k++) {
        if (strstr(lower, words[k])) {
            return true;
        }
    }
    return false;
}

static const char* const LEG_WORDS[] = {"hip", "leg", "knee", "ankle", "foot", "toe", "thigh",
                                        "shin", "calf", NULL};
static const char* const ARM_WORDS[] = {"shoulder", "arm",   "elbow", "wrist", "hand",
                                        "finger",   "thumb", "collar", "clav", NULL};

/* -1 no side, 0 left, 1 right: "Left..."/"Right...", "LHipJoint"/"RThumb" (a capital L or R
 * before another capital), "lhand"/"rhand" (l or r before a limb word). */
static int side_of(const char* name, const char* lower) {
    if (strncmp(lower, "left", 4) == 0) {
        return 0;
    }
    if (strncmp(lower, "right", 5) == 0) {
        return 1;
    }
    const bool cap = (name[0] == 'L' || name[0] == 'R') && isupper((unsigned char)name[1]);
    const bool limb = (name[0] == 'l' || name[0] == 'r') &&
                      (has_word(lower + 1, LEG_WORDS) || has_word(lower + 1, ARM_WORDS)) &&
                      strlen(lower) < 8;
    if (cap || limb) {
        return lower[0] == 'l' ? 0 : 1;
    }
    return -1;
}

/* The part of each body: by its name where that says (head or neck; a side and a limb word),
 * else its parent's. */
static void classify_parts(const fb_model* m, fb_part* part) {
    part[0] = FB_PART_TORSO;
    for (int b = 1; b < m->nbody; b++) {
        char lower[FB_NAME_MAX];
        size_t k = 0;
        for (; m->name[b][k] && k + 1 < sizeof lower; k++) {
            lower[k] = (char)tolower((unsigned char)m->name[b][k]);
        }
        lower[k] = '\0';
        const int side = side_of(m->name[b], lower);
        static const char* const HEAD_WORDS[] = {"head", "neck", NULL};
        if (has_word(lower, HEAD_WORDS)) {
            part[b] = FB_PART_HEAD;
        } else if (side >= 0 && has_word(lower, LEG_WORDS)) {
            part[b] = side == 0 ? FB_PART_LEFT_LEG : FB_PART_RIGHT_LEG;
        } else if (side >= 0 && has_word(lower, ARM_WORDS)) {
            part[b] = side == 0 ? FB_PART_LEFT_ARM : FB_PART_RIGHT_ARM;
        } else {
            part[b] = part[m->parent[b]];
        }
    }
}

fb_part fb_sim_body_part(const fb_sim* s, int body) {
    const fb_model* m = s->ch->model;
    return (body >= 0 && body < m->nbody) ? s->part[body] : FB_PART_TORSO;
}

/* ---- balls ----------------------------------------------------------------------------------- */

/* The inertia of body b (1-3 the translation carriers, 4 the ball) of a ball model. */
static fb_rbi ball_inertia(double mass, double r, int b) {
    const double carrier = BALL_CARRIER_FRACTION * mass;
    if (b < 4) {
        return fb_rbi_from_mass_com(carrier, fb_v3_zero(), fb_m3_zero());
    }
    const double rho = (mass - 3.0 * carrier) / (4.0 / 3.0 * FB_PI * r * r * r);
    return fb_rbi_sphere(rho, r, fb_v3_zero());
}

/* A ball of mass `mass` and radius r: three prismatic joints along the world axes, then a
 * spherical joint at the centre. Not a floating joint: a floating joint's linear velocity is in
 * body axes and semi-implicit Euler turns it with the body (docs/DYNAMICS.md), so a spinning ball's
 * world momentum would drift by O(h^2 w^2 v) per step; with world-axis prismatic joints it
 * changes by exactly the impulses the ball receives, which the report and the momentum test
 * rely on. The translation bodies carry a negligible mass (the model wants positive masses). */
static fb_model* ball_model(double mass, double r, int index, fb_error* err) {
    fb_model* m = fb_model_create(4, NULL, err);
    if (!m) {
        return NULL;
    }
    const fb_v3 axes[3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};
    static const char* const NAMES[4] = {"x", "y", "z", "ball"};
    fb_status s = FB_OK;
    int body = 0;
    for (int k = 0; k < 4 && s == FB_OK; k++) {
        char name[FB_NAME_MAX];
        snprintf(name, sizeof name, "ball%d_%s", index, NAMES[k]);
        fb_body_def def = fb_default_body_def();
        def.name = name;
        def.parent = body;
        def.inertia = ball_inertia(mass, r, k + 1);
        if (k < 3) {
            def.joint = FB_JOINT_PRISMATIC;
            def.axis = axes[k];
        } else {
            def.joint = FB_JOINT_SPHERICAL;
        }
        s = fb_model_add_body(m, &def, &body, err);
    }
    fb_shape sh = {0};
    sh.type = FB_SHAPE_SPHERE;
    sh.body = body;
    sh.radius = r;
    sh.p0 = fb_v3_zero();
    if (s == FB_OK) {
        s = fb_model_add_shape(m, &sh, err);
    }
    if (s == FB_OK) {
        s = fb_model_finalize(m, err);
    }
    if (s != FB_OK) {
        fb_model_destroy(m);
        return NULL;
    }
    return m;
}

/* Gives a ball model of ball_model() another mass (kg) and radius (m). Only the inertias and
 * the sphere's radius change; nothing is derived from them when a model is finalised, so a
 * world that steps the model takes the new values at its next step. */
static void ball_model_size(fb_model* m, double mass, double r) {
    for (int b = 1; b <= 4; b++) {
        m->I[b] = ball_inertia(mass, r, b);
    }
    m->shape[0].radius = r;
}

/* kg: the mass each world-axis joint of a ball model moves (the carriers below it and the
 * ball): the ball's momentum along an axis is this times the joint's velocity, and gravity's
 * force on the joint this times g. The x carrier is not moved by the y and z joints, so each
 * axis has its own (they differ by 1e-9 of the ball; the momentum check wants them exact). */
static fb_v3 ball_axis_mass(const fb_model* bm) {
    double a[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < 3; k++) {
        for (int b = k + 1; b < bm->nbody; b++) {
            a[k] += bm->I[b].m;
        }
    }
    return fb_v3_make(a[0], a[1], a[2]);
}

static fb_v3 v3_mul(fb_v3 a, fb_v3 b) {
    return fb_v3_make(a.x * b.x, a.y * b.y, a.z * b.z);
}

/* Puts ball k at p with velocity v (world), not spinning. */
static void ball_set(fb_sim* s, int k, fb_v3 p, fb_v3 v) {
    fb_data* d = fb_world_data(s->w, 1 + k);
    d->q[0] = p.x;
    d->q[1] = p.y;
    d->q[2] = p.z;
    fb_quat_store(d->q + 3, fb_quat_identity());
    memset(d->qd, 0, 6 * sizeof(double));
    d->qd[0] = v.x;
    d->qd[1] = v.y;
    d->qd[2] = v.z;
    d->stage = 0;
}

static fb_v3 ball_pos(fb_sim* s, int k) {
    const double* q = fb_world_data(s->w, 1 + k)->q;
    return fb_v3_make(q[0], q[1], q[2]);
}

static fb_v3 ball_vel(fb_sim* s, int k) {
    const double* qd = fb_world_data(s->w, 1 + k)->qd;
    return fb_v3_make(qd[0], qd[1], qd[2]);
}

static fb_v3 gravity(const fb_sim* s) {
    return s->ch->model->opt.gravity;
}

/* A hit's aim point in its body's coordinates. */
static fb_v3 aim_local(const fb_model* m, const fb_hit_result* r) {
    const int b = r->body;
    return fb_v3_add(fb_v3_scale(m->I[b].h, 1.0 / m->I[b].m), r->hit.offset);
}

/* The launch of hit k: the aim point where the reference puts it at the hit time, the
 * direction in the heading frame there, and the ballistic path that reaches the aim point
 * then. */
static fb_status plan_launch(fb_sim* s, int k, double t_now, fb_error* err) {
    const fb_model* m = s->ch->model;
    fb_hit_result* r = &s->hit[k];
    const fb_hit* h = &r->hit;
    const double flight = h->distance / h->speed;
    const double dur = fb_ref_duration(s->ref);
    /* half a step of slack: a ball is launched at the step nearest its launch time */
    if (h->time - flight < t_now - 0.5 * s->dt || h->time > dur) {
        return fb_fail(err, FB_EINVAL,
                       "hit %d (%s at %.3f s): expected a time between %.3f s (a ball at %g m/s "
                       "needs %.3f s to fly %g m) and the end of the clip at %.3f s",
                       k + 1, h->target, h->time, t_now + flight, h->speed, flight, h->distance,
                       dur);
    }
    const int f = fb_ref_frame(s->ref, h->time);
    memcpy(s->refd->q, s->ref->q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, s->refd);
    const fb_v3 aim = fb_point_pos(m, s->refd, r->body, aim_local(m, r));
    /* heading: the character's forward (root body coordinates) turned into the world */
    fb_v3 fwd = fb_m3_tr_mv(s->refd->X_0[1].E, s->forward);
    fwd.y = 0.0;
    fwd = fb_v3_norm(fwd) > 1e-6 ? fb_v3_scale(fwd, 1.0 / fb_v3_norm(fwd))
                                 : fb_v3_make(0.0, 0.0, 1.0);
    const fb_v3 up = {0.0, 1.0, 0.0};
    const fb_v3 left = fb_v3_cross(up, fwd);
    fb_v3 dir;
    switch (h->from) {
    case FB_FROM_FRONT: dir = fwd; break;
    case FB_FROM_BACK: dir = fb_v3_neg(fwd); break;
    case FB_FROM_LEFT: dir = left; break;
    case FB_FROM_RIGHT: dir = fb_v3_neg(left); break;
    case FB_FROM_ABOVE: dir = up; break;
    default: dir = h->dir; break;
    }
    const fb_v3 p0 = fb_v3_add(aim, fb_v3_scale(dir, h->distance));
    const fb_v3 g = gravity(s);
    /* p0 + v0 T + g T^2 / 2 = aim */
    const fb_v3 v0 = fb_v3_sub(fb_v3_scale(fb_v3_sub(aim, p0), 1.0 / flight),
                               fb_v3_scale(g, 0.5 * flight));
    r->launch_time = h->time - flight;
    r->launch_pos = p0;
    r->launch_vel = v0;
    return FB_OK;
}

/* Launches the balls whose time has come (at the step nearest their launch time, on their
 * path: the state the path has at the current time) and parks the others. */
static void place_balls(fb_sim* s) {
    const double t = fb_tracker_time(s->tr);
    const fb_v3 g = gravity(s);
    for (int k = 0; k < s->nslot; k++) {
        if (k < s->nball && s->launched[k]) {
            continue;
        }
        const fb_hit_result* r = &s->hit[k];
        if (k < s->nball && t >= r->launch_time - 0.5 * s->dt) {
            const double tau = t - r->launch_time;
            const fb_v3 p = fb_v3_add(fb_v3_add(r->launch_pos, fb_v3_scale(r->launch_vel, tau)),
                                      fb_v3_scale(g, 0.5 * tau * tau));
            ball_set(s, k, p, fb_v3_add(r->launch_vel, fb_v3_scale(g, tau)));
            s->launched[k] = true;
        } else {
            ball_set(s, k, fb_v3_make(PARK_X + PARK_SPACING * k, PARK_Y, 0.0), fb_v3_zero());
        }
    }
}

/* ---- recording ------------------------------------------------------------------------------ */

static void record(fb_sim* s) {
    if (s->nrec >= s->rec_cap) {
        return;
    }
    const fb_model* m = s->ch->model;
    const int f = s->nrec++;
    fb_sim_frame* fr = &s->frames[f];
    memset(fr, 0, sizeof *fr);
    fb_tracker_measure(s->tr, &fr->metrics, s->body_err);
    if (s->kinematic_root) { /* its hold (the tracker measures an assisted root's help only) */
        fr->metrics.assist_force = fb_v3_norm(s->support_f);
        fr->metrics.assist_torque = fb_v3_norm(s->support_n);
    }
    fr->time = fr->metrics.time;
    /* the fall and the balance planner's last substep: before the first step, neither */
    fr->fallen = fb_tracker_fall(s->tr).cause != FB_FALL_NONE;
    const fb_balance_info* bal = fb_tracker_balance(s->tr);
    fr->com_margin = bal->active ? bal->margin : NAN;
    fr->com_target_dist = bal->active ? fb_v3_norm(fb_v3_sub(bal->com, bal->com_target)) : NAN;
    for (int b = 1; b < m->nbody; b++) {
        if (s->ch->joint_of_body[b] >= 0) {
            fr->part_err[s->part[b]] += s->body_err[b];
        }
    }
    for (int p = 0; p < FB_NPART; p++) {
        fr->part_err[p] /= s->part_count[p] > 0 ? s->part_count[p] : 1;
    }
    /* mean forces since the last recorded frame (a ball's contact lasts a few steps and falls
     * between frames) */
    const double span = s->imp_time > 0.0 ? s->imp_time : 1.0; /* 0 at the first frame */
    s->imp_time = 0.0;
    fr->ground_force = fb_v3_norm(s->imp_ground) / span;
    s->imp_ground = fb_v3_zero();
    for (int k = 0; k < s->nslot; k++) { /* the spare balls too: parked */
        fr->ball_force += fb_v3_norm(s->imp_ball[k]) / span;
        s->imp_ball[k] = fb_v3_zero();
        const fb_v3 p = ball_pos(s, k);
        double* bp = s->rec_balls + ((size_t)f * (size_t)s->nslot + (size_t)k) * 3;
        bp[0] = p.x;
        bp[1] = p.y;
        bp[2] = p.z;
    }
    const fb_data* d = fb_world_data(s->w, 0);
    if (s->nball > 0) { /* the aim points in the simulated and the reference pose */
        fb_kinematics_pos(m, fb_world_data(s->w, 0));
        fb_ref_at(m, s->ref, fr->time, s->refd->q, NULL, NULL, NULL, s->tmp);
        fb_kinematics_pos(m, s->refd);
    }
    double* err = s->rec_target + (size_t)f * 2 * (size_t)s->nslot;
    for (int k = 0; k < s->nball; k++) { /* in the world, and each in its root's axes */
        const fb_v3 p = aim_local(m, &s->hit[k]);
        const int b = s->hit[k].body;
        const fb_v3 ps = fb_point_pos(m, d, b, p), pr = fb_point_pos(m, s->refd, b, p);
        err[k] = fb_v3_norm(fb_v3_sub(ps, pr));
        err[s->nslot + k] =
            fb_v3_norm(fb_v3_sub(fb_xf_point(d->X_0[1], ps), fb_xf_point(s->refd->X_0[1], pr)));
    }
    memcpy(s->rec_q + (size_t)f * (size_t)m->nq, d->q, (size_t)m->nq * sizeof(double));
    memcpy(s->rec_tau + (size_t)f * (size_t)m->nv, fb_tracker_torques(s->tr),
           (size_t)m->nv * sizeof(double));
}

/* ---- create / step ------------------------------------------------------------------------- */

void fb_sim_destroy(fb_sim* s) {
    if (!s) {
        return;
    }
    fb_tracker_destroy(s->tr);
    fb_world_destroy(s->w);
    fb_tracker_destroy(s->btr);
    fb_world_destroy(s->bw);
    free(s->pre_q);
    free(s->touch);
    for (int k = 0; k < s->nslot; k++) {
        fb_model_destroy(s->ball_m[k]);
    }
    fb_ref_destroy(s->own_ref);
    fb_ref_destroy(s->ground_ref);
    fb_data_destroy(s->refd);
    free(s->part);
    free(s->body_err);
    free(s->tmp);
    free(s->frames);
    free(s->rec_q);
    free(s->rec_tau);
    free(s->rec_balls);
    free(s->rec_target);
    free(s->rec_mpjpe);
    free(s);
}

/* Switches on self-collision of a world's character (articulation 0): its non-adjacent
 * pairs, less those touching in its current pose. */
static fb_status self_collision_on(fb_world* w, fb_error* err) {
    const fb_status st = fb_world_set_self_collision_nonadjacent(w, 0, true, err);
    return st == FB_OK ? fb_world_clear_self_collision_touching(w, 0, NULL, err) : st;
}

/* A hit's root and ground shares before its first touch: zero, or NaN without a baseline. */
static void clear_absorbed(const fb_sim* s, fb_hit_result* r) {
    const double z = s->bw ? 0.0 : NAN;
    r->root_impulse = fb_v3_make(z, z, z);
    r->ground_impulse = r->root_impulse;
    r->absorb_window = 0.0;
}

/* The body a hit's target names (a clip joint: its own body, or the body a dropped joint was
 * frozen into); FB_EINVAL listing the valid names. */
static fb_status find_target(const fb_clip* c, const fb_character* ch, const char* name,
                             int k, int* body, fb_error* err) {
    const int j = fb_clip_joint_by_name(c, name);
    if (j >= 0 && ch->body_of_joint[j] > 0) {
        *body = ch->body_of_joint[j];
        return FB_OK;
    }
    char list[FB_ERROR_MSG_MAX];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < c->njoint && len + 1 < sizeof list; i++) {
        const int n = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                               c->joint[i].name);
        len += n > 0 ? (size_t)n : 0;
    }
    return fb_fail(err, FB_EINVAL, "hit %d: target '%s' is not a joint of the clip (valid: %s)",
                   k + 1, name, list);
}

fb_sim* fb_sim_create(const fb_clip* clip, const fb_character* ch, const fb_gains* g,
                      const fb_hit* hits, int nhit, const fb_sim_opts* opts, fb_error* err) {
    if (!clip || !ch || !g || (nhit > 0 && !hits)) {
        fb_fail(err, FB_EINVAL, "simulation: clip, character and gains are required");
        return NULL;
    }
    const int spare = opts ? opts->spare_balls : 0;
    if (nhit < 0 || spare < 0 || nhit + spare > FB_SIM_MAX_BALLS) {
        fb_fail(err, FB_EINVAL,
                "simulation: expected at most %d balls, hits and spare ones, found %d and %d",
                FB_SIM_MAX_BALLS, nhit, spare);
        return NULL;
    }
    if (opts && opts->ref &&
        (opts->ref->nq != ch->model->nq || fabs(opts->ref->dt * g->rate - 1.0) > 1e-9)) {
        fb_fail(err, FB_EINVAL,
                "simulation: the reference given (%d coordinates at %.6g Hz) is not one of this "
                "character at the gains' rate (%d at %.6g Hz)",
                opts->ref->nq, 1.0 / opts->ref->dt, ch->model->nq, g->rate);
        return NULL;
    }
    const fb_model* m = ch->model;
    fb_sim* s = calloc(1, sizeof *s);
    if (!s) {
        fb_fail(err, FB_ENOMEM, "simulation: out of memory");
        return NULL;
    }
    s->clip = clip;
    s->ch = ch;
    s->o = opts ? *opts : fb_default_sim_opts();
    s->nball = nhit;
    s->nslot = nhit + spare;
    s->dt = 1.0 / g->rate;
    s->clip_dt = clip->frame_time;
    fb_status st = FB_OK;
    if (s->o.ref) {
        s->ref = s->o.ref;
    } else {
        s->own_ref = fb_ref_from_clip(clip, ch, g->rate, s->o.first, s->o.last, s->o.fit, err);
        s->ref = s->own_ref;
    }
    s->refd = fb_data_create(m, NULL, err);
    s->part = calloc((size_t)m->nbody, sizeof(fb_part));
    s->body_err = calloc((size_t)m->nbody, sizeof(double));
    s->tmp = calloc((size_t)m->nv, sizeof(double));
    if (!s->ref || !s->refd || !s->part || !s->body_err || !s->tmp) {
        if (s->ref && s->refd) {
            fb_fail(err, FB_ENOMEM, "simulation: out of memory");
        }
        fb_sim_destroy(s);
        return NULL;
    }
    classify_parts(m, s->part);
    for (int b = 1; b < m->nbody; b++) {
        s->part_count[s->part[b]] += ch->joint_of_body[b] >= 0;
    }
    s->forward = fb_character_forward(clip, ch);
    const fb_hit spare_hit = fb_default_hit();
    for (int k = 0; k < s->nslot && st == FB_OK; k++) {
        const fb_hit* h = k < nhit ? &hits[k] : &spare_hit;
        s->hit[k].hit = *h;
        if (k < nhit) {
            st = fb_hit_check(h, err);
        }
        if (k < nhit && st == FB_OK) {
            st = find_target(clip, ch, h->target, k, &s->hit[k].body, err);
        }
        if (st == FB_OK) {
            s->ball_m[k] = ball_model(h->mass, h->radius, k, err);
            st = s->ball_m[k] ? FB_OK : FB_EINVAL;
        }
        if (st == FB_OK) {
            s->ball_mass[k] = ball_axis_mass(s->ball_m[k]);
        }
    }
    for (int k = 0; k < nhit && st == FB_OK; k++) {
        st = plan_launch(s, k, 0.0, err);
    }
    /* the world: the character, then the balls */
    if (st == FB_OK) {
        const fb_model* ms[FB_CSYS_MAX_ART];
        ms[0] = m;
        for (int k = 0; k < s->nslot; k++) {
            ms[1 + k] = s->ball_m[k];
        }
        fb_world_opts wo = fb_default_world_opts();
        wo.dt = s->dt;
        s->w = fb_world_create(1 + s->nslot, ms, &wo, NULL, err);
        st = s->w ? FB_OK : FB_EINVAL;
    }
    for (int k = 0; k < s->nslot && st == FB_OK; k++) {
        st = fb_world_set_material(s->w, 1 + k, s->o.ball_mu, s->hit[k].hit.restitution, err);
    }
    if (st == FB_OK) {
        s->tr = fb_tracker_create(s->w, 0, s->ref, g, ch->joint_of_body, err);
        st = s->tr ? FB_OK : FB_EINVAL;
    }
    /* a root that is not carried stands on its own feet: the tracker is driven toward the
     * clip with its stance feet flat on the ground (docs/CONTROL.md §7) and measured against
     * the clip itself */
    if (st == FB_OK && g->root.mode != FB_ROOT_KINEMATIC) {
        s->ground_ref = s->o.control ? NULL : fb_ref_grounded(m, s->ref, NULL, err);
        s->control = s->o.control ? s->o.control : s->ground_ref;
        st = s->control ? fb_tracker_set_control(s->tr, s->control, err) : FB_EINVAL;
    }
    if (st == FB_OK && s->o.self_collision) {
        st = self_collision_on(s->w, err);
    }
    /* the baseline: the character alone, same options and gains. Not for a free root: it has
     * no support to measure, and the ground's share would be the difference of two walks
     * that drift apart (docs/SIMULATE.md), at the cost of a second character step */
    if (st == FB_OK && s->nslot > 0 && s->o.baseline && g->root.mode != FB_ROOT_FREE) {
        fb_world_opts wo = fb_default_world_opts();
        wo.dt = s->dt;
        s->bw = fb_world_create(1, &m, &wo, NULL, err);
        s->btr = s->bw ? fb_tracker_create(s->bw, 0, s->ref, g, ch->joint_of_body, err) : NULL;
        if (s->btr && s->control && fb_tracker_set_control(s->btr, s->control, err)) {
            fb_tracker_destroy(s->btr);
            s->btr = NULL;
        }
        s->pre_q = calloc((size_t)m->nq + (size_t)m->nv, sizeof(double));
        st = s->btr ? (s->pre_q ? FB_OK : fb_fail(err, FB_ENOMEM, "simulation: out of memory"))
                    : FB_EINVAL;
        if (st == FB_OK && s->o.self_collision) {
            st = self_collision_on(s->bw, err);
        }
    }
    s->base_hit = -1;
    s->root = m->nbody > 1 && m->parent[1] == 0 && m->jtype[1] == FB_JOINT_FLOATING ? 1 : -1;
    s->kinematic_root = s->root >= 0 && g->root.mode == FB_ROOT_KINEMATIC;
    s->touch = st == FB_OK ? calloc((size_t)s->nslot * (size_t)m->nbody + 1, sizeof(fb_hit_body))
                           : NULL;
    if (st == FB_OK && !s->touch) {
        st = fb_fail(err, FB_ENOMEM, "simulation: out of memory");
    }
    for (int k = 0; k < s->nslot && st == FB_OK; k++) {
        clear_absorbed(s, &s->hit[k]);
    }
    /* recording: one frame per clip frame over the reference's duration (which reaches the
     * last clip frame or just past it), at most the clip's frames first..last-1 */
    if (st == FB_OK) {
        const int nclip = (s->o.last > 0 ? s->o.last : clip->nframe) - s->o.first;
        s->rec_cap = (int)floor(fb_ref_duration(s->ref) / s->clip_dt + 1e-6) + 1;
        s->rec_cap = nclip > 0 && nclip < s->rec_cap ? nclip : s->rec_cap;
        const size_t n = (size_t)s->rec_cap;
        s->frames = calloc(n, sizeof(fb_sim_frame));
        s->rec_q = calloc(n * (size_t)m->nq, sizeof(double));
        s->rec_tau = calloc(n * (size_t)m->nv, sizeof(double));
        s->rec_balls = calloc(n * (size_t)s->nslot * 3 + 1, sizeof(double));
        s->rec_target = calloc(n * 2 * (size_t)s->nslot + 1, sizeof(double));
        s->rec_mpjpe = calloc(n, sizeof(double));
        if (!s->frames || !s->rec_q || !s->rec_tau || !s->rec_balls || !s->rec_target ||
            !s->rec_mpjpe) {
            st = fb_fail(err, FB_ENOMEM, "simulation: out of memory for %d frames", s->rec_cap);
        }
    }
    if (st != FB_OK) {
        fb_sim_destroy(s);
        return NULL;
    }
    place_balls(s);
    record(s);
    fb_ok(err);
    return s;
}

fb_status fb_sim_add_hit(fb_sim* s, const fb_hit* hit, fb_error* err) {
    const int k = s->nball;
    if (k >= s->nslot) {
        return fb_fail(err, FB_ESTATE, "hit %d: no spare ball left (%d in this simulation)",
                       k + 1, s->nslot);
    }
    if (fb_sim_done(s)) {
        return fb_fail(err, FB_ESTATE, "hit %d: the simulation is over", k + 1);
    }
    fb_hit_result* r = &s->hit[k];
    const fb_hit_result before = *r;
    *r = (fb_hit_result){.hit = *hit};
    clear_absorbed(s, r);
    fb_status st = fb_hit_check(hit, err);
    if (st == FB_OK) {
        st = find_target(s->clip, s->ch, hit->target, k, &r->body, err);
    }
    if (st == FB_OK) {
        st = fb_world_set_material(s->w, 1 + k, s->o.ball_mu, hit->restitution, err);
    }
    if (st == FB_OK) {
        st = plan_launch(s, k, fb_sim_time(s), err);
    }
    if (st != FB_OK) {
        *r = before;
        return st;
    }
    ball_model_size(s->ball_m[k], hit->mass, hit->radius);
    s->ball_mass[k] = ball_axis_mass(s->ball_m[k]);
    s->nball++;
    return fb_ok(err);
}

/* The world-axis force (k0 = 3) or torque about the root body's origin (k0 = 0) of the
 * character's floating root in an impulse over a step (its generalised impulse's linear or
 * angular part, root coordinates, turned by the root's rotations before (q0) and after the
 * step, averaged: second order in the step's turn). */
static fb_v3 root_world(const fb_model* m, int root, const double* jimp, int k0, const double* q0,
                        const double* q1) {
    const int va = m->v_adr[root] + k0, qa = m->q_adr[root] + 3;
    const fb_v3 f = fb_v3_make(jimp[va], jimp[va + 1], jimp[va + 2]);
    const fb_v3 a = fb_quat_rotate(fb_quat_load(q0 + qa), f);
    const fb_v3 b = fb_quat_rotate(fb_quat_load(q1 + qa), f);
    return fb_m3_tr_mv(m->X_tree[root].E, fb_v3_scale(fb_v3_add(a, b), 0.5));
}

/* The impulse ball k gave each body of the character in the last step, into its list of
 * touched bodies (a body's first touch at t0). */
static void note_bodies(fb_sim* s, int k, double t0) {
    const fb_model* m = s->ch->model;
    fb_hit_result* r = &s->hit[k];
    fb_hit_body* list = s->touch + (size_t)k * (size_t)m->nbody;
    for (int b = 1; b < m->nbody; b++) {
        const fb_v3 j = fb_world_body_impulse(s->w, 0, b, 1 + k);
        if (j.x == 0.0 && j.y == 0.0 && j.z == 0.0) {
            continue;
        }
        int e = 0;
        while (e < r->nbody && list[e].body != b) {
            e++;
        }
        if (e == r->nbody) {
            list[r->nbody++] = (fb_hit_body){.body = b, .time = t0, .impulse = fb_v3_zero()};
        }
        list[e].impulse = fb_v3_add(list[e].impulse, j);
    }
}

/* What the root and the ground absorbed of the hit whose first touch is the latest, while
 * within FB_SIM_HIT_WINDOW of it: the baseline, started at that touch from the state the simulation
 * had before the step (pre_q, at pre_time: the world's time, which is the trackers' as both
 * worlds started at 0), takes the same steps without the ball, and the difference of the
 * root's and the ground's impulses over each step (simulation less baseline) goes to the hit.
 * q0 is the simulation's root before the step. */
static void absorb(fb_sim* s, const double* q0, double pre_time, double t) {
    int cur = -1;
    for (int k = 0; k < s->nball && s->bw; k++) {
        if (s->hit[k].touched && (cur < 0 || s->hit[k].contact_time > s->hit[cur].contact_time)) {
            cur = k;
        }
    }
    if (cur < 0 || pre_time >= s->hit[cur].contact_time + FB_SIM_HIT_WINDOW - 1e-9) {
        return; /* no window open: the baseline rests */
    }
    const fb_model* m = s->ch->model;
    fb_hit_result* r = &s->hit[cur];
    fb_data* bd = fb_world_data(s->bw, 0);
    if (cur != s->base_hit) { /* its first touch: the baseline starts from the same state */
        memcpy(bd->q, s->pre_q, (size_t)m->nq * sizeof(double));
        memcpy(bd->qd, s->pre_q + m->nq, (size_t)m->nv * sizeof(double));
        fb_world_set_time(s->bw, pre_time);
        s->base_hit = cur;
        s->baseline_ok = true;
    }
    if (!s->baseline_ok) {
        return;
    }
    double bq0[7] = {0};
    if (s->root >= 0) {
        memcpy(bq0, bd->q + m->q_adr[s->root], 7 * sizeof(double));
    }
    fb_error berr;
    if (fb_world_step(s->bw, &berr) != FB_OK) {
        s->baseline_ok = false; /* this hit's shares are unknown; the simulation goes on */
        r->root_impulse = fb_v3_make(NAN, NAN, NAN);
        r->ground_impulse = r->root_impulse;
        return;
    }
    if (s->root >= 0) {
        const fb_v3 a = root_world(m, s->root, fb_world_joint_impulse(s->w, 0), 3, q0,
                                    fb_world_data(s->w, 0)->q);
        const fb_v3 b = root_world(m, s->root, fb_world_joint_impulse(s->bw, 0), 3, bq0, bd->q);
        r->root_impulse = fb_v3_add(r->root_impulse, fb_v3_sub(a, b));
    }
    r->ground_impulse = fb_v3_add(r->ground_impulse,
                                  fb_v3_sub(fb_world_pair_impulse(s->w, 0, -1),
                                            fb_world_pair_impulse(s->bw, 0, -1)));
    r->absorb_window = t - r->contact_time;
}

/* A kinematic root's wrench over the step just made, from the world's joint impulse (the
 * feedforward the tracker set at the root and its rows' multipliers, over every accepted
 * substep): the mean force and torque over the step in world axes, and the totals. q0: the
 * root's coordinates before the step. */
static void support_step(fb_sim* s, const double* q0) {
    const fb_model* m = s->ch->model;
    const double* jimp = fb_world_joint_impulse(s->w, 0);
    const double* q1 = fb_world_data(s->w, 0)->q;
    const fb_v3 j = root_world(m, s->root, jimp, 3, q0, q1);
    const fb_v3 l = root_world(m, s->root, jimp, 0, q0, q1);
    s->support_f = fb_v3_scale(j, 1.0 / s->dt);
    s->support_n = fb_v3_scale(l, 1.0 / s->dt);
    fb_assist_totals* t = &s->support_tot;
    t->force_impulse += fb_v3_norm(j);
    t->torque_impulse += fb_v3_norm(l);
    t->peak_force = fmax(t->peak_force, fb_v3_norm(s->support_f));
    t->peak_torque = fmax(t->peak_torque, fb_v3_norm(s->support_n));
}

void fb_sim_root_support(const fb_sim* s, fb_v3* force, fb_v3* torque, fb_assist_totals* tot) {
    fb_v3 f = s->support_f, n = s->support_n;
    fb_assist_totals t = s->support_tot;
    if (!s->kinematic_root) {
        fb_tracker_assist(s->tr, &f, &n);
        t = fb_tracker_totals(s->tr);
    }
    t.limit_substeps = fb_tracker_totals(s->tr).limit_substeps;
    if (force) {
        *force = f;
    }
    if (torque) {
        *torque = n;
    }
    if (tot) {
        *tot = t;
    }
}

fb_status fb_sim_step(fb_sim* s, fb_error* err) {
    place_balls(s);
    const fb_model* m = s->ch->model;
    fb_v3 v_before[FB_SIM_MAX_BALLS];
    for (int k = 0; k < s->nball; k++) {
        v_before[k] = ball_vel(s, k);
    }
    /* the character before the step: for the baseline, and the root's impulse in world axes */
    const fb_data* d = fb_world_data(s->w, 0);
    const double pre_time = fb_world_time(s->w);
    double q0[7] = {0};
    if (s->root >= 0) {
        memcpy(q0, d->q + m->q_adr[s->root], 7 * sizeof(double));
    }
    if (s->bw) {
        memcpy(s->pre_q, d->q, (size_t)m->nq * sizeof(double));
        memcpy(s->pre_q + m->nq, d->qd, (size_t)m->nv * sizeof(double));
    }
    const bool asleep = fb_world_asleep(s->w, 0);
    const fb_status st = fb_world_step(s->w, err);
    if (st != FB_OK) {
        return st;
    }
    if (s->kinematic_root) {
        support_step(s, q0);
    }
    const double t = fb_tracker_time(s->tr);
    const fb_v3 g = gravity(s);
    s->imp_time += s->dt;
    const fb_v3 from_ground = fb_world_pair_impulse(s->w, 0, -1);
    s->imp_ground = fb_v3_add(s->imp_ground, from_ground);
    if (asleep && fb_v3_norm(from_ground) == 0.0) {
        /* asleep through the step (a fallen body at rest, fb_tracker_fall) it lies still on
         * the ground, for which the world steps no contact: the ground holds its weight */
        s->imp_ground = fb_v3_add(s->imp_ground, fb_v3_scale(g, -fb_model_mass(m) * s->dt));
    }
    for (int k = 0; k < s->nball; k++) {
        fb_hit_result* r = &s->hit[k];
        const fb_v3 from_ball = fb_world_pair_impulse(s->w, 0, 1 + k);
        s->imp_ball[k] = fb_v3_add(s->imp_ball[k], from_ball);
        if (fb_v3_norm(from_ball) == 0.0) {
            continue;
        }
        if (!r->touched) {
            r->touched = true;
            r->contact_time = t - s->dt;
        }
        r->impulse = fb_v3_add(r->impulse, from_ball);
        note_bodies(s, k, t - s->dt);
        /* the ball's own change of momentum over this step, less what gravity, the ground and
         * the other balls gave it: what the character gave it (per axis, the mass that axis's
         * joint moves) */
        fb_v3 dp = v3_mul(s->ball_mass[k], fb_v3_sub(ball_vel(s, k), v_before[k]));
        dp = fb_v3_sub(dp, fb_v3_scale(v3_mul(s->ball_mass[k], g), s->dt));
        dp = fb_v3_sub(dp, fb_world_pair_impulse(s->w, 1 + k, -1));
        for (int j = 0; j < s->nball; j++) {
            dp = j == k ? dp : fb_v3_sub(dp, fb_world_pair_impulse(s->w, 1 + k, 1 + j));
        }
        r->ball_dp = fb_v3_add(r->ball_dp, dp);
    }
    absorb(s, q0, pre_time, t);
    if (!s->tau0) {
        /* frame 0 was recorded before any torque acted: it shows those of the first step */
        fb_track_metrics mt;
        fb_tracker_measure(s->tr, &mt, NULL);
        memcpy(s->rec_tau, fb_tracker_torques(s->tr), (size_t)m->nv * sizeof(double));
        s->tau0 = true;
    }
    while (s->nrec < s->rec_cap && t >= s->nrec * s->clip_dt - 0.5 * s->dt) {
        record(s); /* a step longer than a frame records it twice */
    }
    if (fb_sim_done(s) && !s->finished) {
        fb_sim_finish_hits(s);
    }
    return FB_OK;
}

fb_status fb_sim_run(fb_sim* s, void (*progress)(void* user, double fraction), void* user,
                     fb_error* err) {
    int reported = s->nrec;
    while (!fb_sim_done(s)) {
        const fb_status st = fb_sim_step(s, err);
        if (st != FB_OK) {
            return st;
        }
        if (progress && s->nrec != reported) {
            reported = s->nrec;
            progress(user, (double)s->nrec / (double)s->rec_cap);
        }
    }
    if (!s->finished) {
        fb_sim_finish_hits(s);
    }
    return fb_ok(err);
}

bool fb_sim_done(const fb_sim* s) {
    return fb_tracker_done(s->tr) || s->nrec >= s->rec_cap;
}

double fb_sim_time(const fb_sim* s) {
    return fb_tracker_time(s->tr);
}

double fb_sim_duration(const fb_sim* s) {
    return fb_ref_duration(s->ref);
}

fb_world* fb_sim_world(fb_sim* s) {
    return s->w;
}

fb_tracker* fb_sim_tracker(fb_sim* s) {
    return s->tr;
}

const fb_ref* fb_sim_ref(const fb_sim* s) {
    return s->ref;
}

const fb_ref* fb_sim_control_ref(const fb_sim* s) {
    return s->control ? s->control : s->ref;
}

const fb_sim_frame* fb_sim_frames(const fb_sim* s, int* n) {
    *n = s->nrec;
    return s->frames;
}

static int clamp_frame(const fb_sim* s, int f) {
    return f < 0 ? 0 : (f >= s->nrec ? (s->nrec > 0 ? s->nrec - 1 : 0) : f);
}

const double* fb_sim_frame_q(const fb_sim* s, int frame) {
    return s->rec_q + (size_t)clamp_frame(s, frame) * (size_t)s->ch->model->nq;
}

const double* fb_sim_frame_balls(const fb_sim* s, int frame) {
    return s->rec_balls + (size_t)clamp_frame(s, frame) * (size_t)s->nslot * 3;
}

const double* fb_sim_frame_hit_err(const fb_sim* s, int frame) {
    return s->rec_target + (size_t)clamp_frame(s, frame) * 2 * (size_t)s->nslot;
}

const double* fb_sim_frame_hit_err_root(const fb_sim* s, int frame) {
    return fb_sim_frame_hit_err(s, frame) + s->nslot;
}

const double* fb_sim_frame_tau(const fb_sim* s, int frame) {
    return s->rec_tau + (size_t)clamp_frame(s, frame) * (size_t)s->ch->model->nv;
}

int fb_sim_nball(const fb_sim* s) {
    return s->nball;
}

const fb_hit_result* fb_sim_hits(const fb_sim* s) {
    return s->hit;
}

const fb_hit_body* fb_sim_hit_bodies(const fb_sim* s, int k, int* n) {
    if (k < 0 || k >= s->nball) {
        *n = 0;
        return NULL;
    }
    *n = s->hit[k].nbody;
    return s->touch + (size_t)k * (size_t)s->ch->model->nbody;
}

fb_v3 fb_sim_placement(const fb_sim* s) {
    return s->ref->place_shift;
}

fb_v3 fb_sim_export_offset(const fb_sim* s) {
    return s->o.export_placed ? fb_v3_zero() : fb_v3_neg(s->ref->place_shift);
}
