/* featherbone-view: the simulation source. The simulation `featherbone simulate` runs
 * (fb_sim, docs/SIMULATE.md): the clip's character tracking the clip with its gains (the file
 * given, else those of `gains init`), hit by the balls of --hit and by the balls thrown from
 * the window. The source steps it to the time asked for; going back restarts it and replays
 * (a few tenths of a second: it steps tens of times faster than real time). Thrown balls are
 * kept as hits, so a replay, an export and `featherbone simulate --hits` of the exported take
 * give the same motion. The gains file is watched: a change that reads restarts the
 * simulation with it and replays to where it was; one that does not leaves the previous gains
 * in force and says why on the HUD. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, struct stat's st_mtim */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sim_report.h"
#include "source_impl.h"
#include "vmath.h"

/* Balls kept aside for throws; beyond them a throw restarts the simulation with one more
 * ball (and replays to now). Each parked ball costs its share of a step. */
#define SPARE_BALLS 4
/* How far from the struck point a thrown ball starts (m): from the eye, within these. */
#define THROW_DIST_MIN 0.5
#define THROW_DIST_MAX 6.0
/* Balls farther than this from the origin are parked ones (m): not drawn. */
#define PARKED_BEYOND 500.0
/* Smoothing of the stepping speed shown (s of wall clock). */
#define STEP_RTF_TAU 0.5
/* The gains file's fit when there is none: `gains init`'s rate. */
#define DEFAULT_RATE 240.0
/* A hit's peak is looked for within this long after it (s), as fb_sim does. */
#define HIT_WINDOW 1.0
#define RECOVER_TOL 0.02

typedef struct sim_source {
    const char* clip_path;
    const char* gains_path; /* NULL: the defaults of gains init */
    fb_strength strength;   /* theirs (--strength) */
    fb_root_mode root;      /* their root mode (--root) */
    fb_rules rules;
    fb_clip* clip;
    fb_character* ch;
    fb_gains g;     /* in force */
    fb_ref* ref;    /* the clip's reference at g.rate, shared by every simulation */
    struct stat gains_st; /* the gains file when last read */
    bool gains_st_ok;
    char gains_line[SOURCE_LINE_MAX];
    bool hold;        /* edits unsaved in the window: a changed file waits in `pending` */
    bool has_pending;
    fb_gains pending; /* the file's gains, read while held */

    fb_sim* sim;
    fb_hit hit[FB_SIM_MAX_BALLS]; /* the take: the planned hits, then the thrown ones */
    int nhit, nplanned;
    bool failed;                  /* the simulation blew up; it stays where it stopped */
    char fail_msg[FB_ERROR_MSG_MAX];

    fb_data* ghost; /* the reference pose */
    double* tmp;    /* (nv) scratch of fb_ref_at */
    double* force;  /* (max_contacts) normal force of each contact */
    int force_cap;
    source_ball ball[FB_SIM_MAX_BALLS];
    const fb_model* art_model[FB_CSYS_MAX_ART];
    const fb_data* art_data[FB_CSYS_MAX_ART];
    double step_rtf;
    source_view view;
    source_info info;
    /* --sample-load: the plan, and the reference made from it for the gains' rate (control),
     * the one before (control_prev: a simulation apply_gains keeps on a failed restart still
     * tracks it) */
    const char* plan_path;
    fb_sample_plan plan;
    fb_ref* control;
    fb_ref* control_prev;
    /* whether this run, once done, is the walk the plan's search found (1 yes, -1 no, 0 not
     * judged yet or not known: fb_sample_plan_as_searched), and the HUD's line saying so */
    int plan_verdict;
    char plan_line[SOURCE_LINE_MAX];
} sim_source;

/* err = (code, msg); returns code. */
static fb_status set_err(fb_error* err, fb_status code, const char* msg) {
    if (err) {
        err->code = code;
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return code;
}

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double step_dt(const sim_source* s) {
    return 1.0 / s->g.rate;
}

/* (Re)starts the simulation of the take from time 0 with the gains in force. */
static fb_status start(sim_source* s, fb_error* err) {
    fb_sim_destroy(s->sim);
    s->sim = NULL;
    fb_sim_opts so = fb_default_sim_opts();
    so.ref = s->ref;
    so.spare_balls = FB_SIM_MAX_BALLS - s->nhit < SPARE_BALLS ? FB_SIM_MAX_BALLS - s->nhit
                                                              : SPARE_BALLS;
    if (s->plan.points) {
        /* made again only for another rate (a new fit) or to refuse a kinematic root */
        if (!s->control || fabs(s->control->dt * s->g.rate - 1.0) >= 1e-12 ||
            s->g.root.mode == FB_ROOT_KINEMATIC) {
            fb_ref* c = fb_sample_plan_reference(s->clip, s->ch, &s->g, &so, &s->plan, err);
            if (!c) {
                return err->code;
            }
            fb_ref_destroy(s->control_prev);
            s->control_prev = s->control;
            s->control = c;
        }
        so.control = s->control;
    }
    s->sim = fb_sim_create(s->clip, s->ch, &s->g, s->hit, s->nhit, &so, err);
    s->failed = false;
    s->fail_msg[0] = '\0';
    s->plan_verdict = 0;
    s->plan_line[0] = '\0';
    if (!s->sim) {
        return err->code;
    }
    fb_world* w = fb_sim_world(s->sim);
    s->view.nart = fb_world_nart(w);
    for (int k = 0; k < s->view.nart; k++) {
        s->art_model[k] = fb_world_model(w, k);
        s->art_data[k] = fb_world_data(w, k);
    }
    return FB_OK;
}

/* Steps to time t (within half a step); false when the simulation blew up on the way. */
static bool step_to(sim_source* s, double t) {
    if (s->failed) {
        return false;
    }
    const double wall0 = wall_now(), t0 = fb_sim_time(s->sim), half = 0.5 * step_dt(s);
    fb_error err;
    while (!fb_sim_done(s->sim) && fb_sim_time(s->sim) < t - half) {
        if (fb_sim_step(s->sim, &err) != FB_OK) {
            s->failed = true;
            snprintf(s->fail_msg, sizeof s->fail_msg, "%s", err.msg);
            fprintf(stderr, "featherbone-view: simulation stopped: %s\n", err.msg);
            return false;
        }
    }
    const double wall = wall_now() - wall0, simulated = fb_sim_time(s->sim) - t0;
    if (simulated > 0.0 && wall > 0.0) {
        const double now = simulated / wall, k = 1.0 - exp(-wall / STEP_RTF_TAU);
        s->step_rtf = s->step_rtf > 0.0 ? s->step_rtf + (now - s->step_rtf) * k : now;
    }
    return true;
}

/* The last hit, as the HUD says it: on its way, missed, or how far it moved its body and
 * whether the body is back (from the recorded frames, as fb_sim's results will say), the
 * bodies the ball touched with their impulses and how much of it the root has absorbed. */
static void hit_line(const sim_source* s, char* out, size_t cap) {
    const int nb = fb_sim_nball(s->sim);
    if (nb == 0) {
        snprintf(out, cap, "no hits yet: click the character to throw a ball");
        return;
    }
    const int k = nb - 1;
    const fb_hit_result* r = &fb_sim_hits(s->sim)[k];
    const double now = fb_sim_time(s->sim);
    if (!r->touched) {
        if (now < r->hit.time + 0.1) {
            snprintf(out, cap, "ball %d on its way to %.24s (due at %.2f s)", k + 1, r->hit.target,
                     r->hit.time);
        } else {
            snprintf(out, cap, "ball %d missed %.24s", k + 1, r->hit.target);
        }
        return;
    }
    int nf = 0;
    const fb_sim_frame* fr = fb_sim_frames(s->sim, &nf);
    double peak = 0.0, back = NAN;
    for (int f = 0; f < nf; f++) {
        const double t = fr[f].time, e = source_hit_err(s->sim, s->g.root.mode, f)[k];
        if (t < r->contact_time || t > r->contact_time + HIT_WINDOW) {
            continue;
        }
        if (e > peak) {
            peak = e;
            back = NAN;
        } else if (peak > RECOVER_TOL && isnan(back) && e <= RECOVER_TOL) {
            back = t - r->contact_time;
        }
    }
    char tail[64] = "";
    if (peak > RECOVER_TOL) {
        if (isnan(back)) {
            snprintf(tail, sizeof tail, ", not back yet");
        } else {
            snprintf(tail, sizeof tail, ", back within 2 cm in %.2f s", back);
        }
    }
    char where[96];
    sim_hit_where(s->sim, s->ch->model, k, 2, where, sizeof where);
    const fb_v3 root = {-r->root_impulse.x, -r->root_impulse.y, -r->root_impulse.z};
    const double share = sim_hit_share(root, r->impulse);
    char took[32] = "";
    if (isfinite(share)) {
        snprintf(took, sizeof took, "; root took %.0f%%", 100.0 * share);
    }
    const int len = snprintf(out, cap, "hit %d: %.24s at %.2f s, %.1f cm off%s%s", k + 1,
                             r->hit.target, r->contact_time, 100.0 * peak,
                             s->g.root.mode == FB_ROOT_KINEMATIC ? "" : " root-relative", tail);
    char more[sizeof where + sizeof took + 2];
    snprintf(more, sizeof more, "; %s%s", where, took);
    if (len > 0 && (size_t)len + 1 < cap) { /* what does not fit the HUD's line is cut */
        const size_t room = cap - (size_t)len - 1, n = strlen(more);
        memcpy(out + len, more, n < room ? n : room);
        out[(size_t)len + (n < room ? n : room)] = '\0';
    }
}

/* The balance overlay (the centre of mass, a free root's support polygon and target, what
 * holds or helps a kinematic or assisted root) and its HUD line: the fall once there is one,
 * else the balance, the hold or the help; d's kinematics current. */
static void balance_view(sim_source* s, const fb_model* m, const fb_data* d, char* line,
                         size_t cap) {
    source_balance* b = &s->view.balance;
    const fb_tracker* tr = fb_sim_tracker(s->sim);
    const fb_balance_info* bi = fb_tracker_balance(tr);
    b->com_known = true;
    b->com = fb_com(m, d);
    b->planner = bi->active;
    b->com_target = bi->com_target;
    b->margin = bi->active ? bi->margin : NAN;
    b->nsupport = bi->active ? bi->nsupport : 0;
    for (int k = 0; k < b->nsupport; k++) { /* drawn on the ground: y = 0 */
        b->support[k] = (fb_v3){bi->support[k].x, 0.0, bi->support[k].z};
    }
    fb_v3 f;
    fb_sim_root_support(s->sim, &f, NULL, NULL);
    const double fn = v3_norm(f);
    b->assist = fn > 0.0;
    b->assist_force = f;
    b->assist_at = fb_point_pos(m, d, m->nbody > 1 ? 1 : 0, (fb_v3){0.0, 0.0, 0.0});
    b->fall = fb_tracker_fall(tr);
    const fb_fall* fa = &b->fall;
    line[0] = '\0';
    if (fa->cause != FB_FALL_NONE) {
        snprintf(line, cap, "FALLEN at %.2f s (%s)", fa->time, fb_fall_cause_name(fa->cause));
    } else if (b->planner && isfinite(b->margin)) {
        const double to_target = v3_norm(v3_sub(b->com, b->com_target));
        snprintf(line, cap, "balance: centre of mass %.1f cm %s the support, %.1f cm from the "
                 "planner's target", 100.0 * fabs(b->margin),
                 b->margin >= 0.0 ? "inside" : "outside", 100.0 * to_target);
    } else if (b->planner) {
        snprintf(line, cap, "balance: fewer than three support points (no polygon)");
    } else if (s->g.root.mode != FB_ROOT_FREE) {
        const double w = fb_model_mass(m) * v3_norm(m->opt.gravity);
        snprintf(line, cap, "%s: %.0f N (%.0f%% of the weight)",
                 s->g.root.mode == FB_ROOT_ASSISTED ? "help at the root"
                                                    : "the kinematic root holds it",
                 fn, 100.0 * fn / w);
    }
}

static void update_view(sim_source* s) {
    const fb_model* m = s->ch->model;
    fb_world* w = fb_sim_world(s->sim);
    fb_data* d = fb_world_data(w, 0);
    const double t = fb_sim_time(s->sim);
    fb_kinematics_pos(m, d);
    fb_ref_at(m, s->ref, t, s->ghost->q, NULL, NULL, NULL, s->tmp);
    fb_kinematics_pos(m, s->ghost);
    s->view.time = t;
    const int f = (int)lround(t / s->info.frame_time);
    s->view.frame = f < s->info.nframe ? f : s->info.nframe - 1;
    s->view.data = d;

    static const float COLOURS[4][4] = {
        {0.95f, 0.85f, 0.25f, 1.0f}, {0.35f, 0.85f, 0.45f, 1.0f}, {0.9f, 0.45f, 0.85f, 1.0f},
        {0.95f, 0.6f, 0.2f, 1.0f}};
    int nb = 0;
    for (int k = 0; k < fb_sim_nball(s->sim); k++) {
        const double* q = fb_world_data(w, 1 + k)->q;
        if (fabs(q[0]) < PARKED_BEYOND && fabs(q[1]) < PARKED_BEYOND) {
            source_ball* b = &s->ball[nb++];
            b->centre = (fb_v3){q[0], q[1], q[2]};
            b->radius = fb_sim_hits(s->sim)[k].hit.radius;
            memcpy(b->rgba, COLOURS[k % 4], sizeof b->rgba);
        }
    }
    s->view.nball = nb;
    int nc = 0;
    s->view.contact = fb_world_contacts(w, &nc);
    nc = nc < s->force_cap ? nc : s->force_cap;
    for (int k = 0; k < nc; k++) {
        s->force[k] = fb_world_contact_force(w, k);
    }
    s->view.ncontact = nc;

    balance_view(s, m, d, s->view.line[4], SOURCE_LINE_MAX);

    int nf = 0;
    const fb_sim_frame* fr = fb_sim_frames(s->sim, &nf);
    const double mpjpe = nf > 0 ? fr[nf - 1].metrics.mpjpe : 0.0;
    snprintf(s->view.line[0], SOURCE_LINE_MAX, "simulation %g Hz, %s, %s root: MPJPE %.2f cm",
             s->g.rate, fb_controller_name(s->g.controller), fb_root_mode_name(s->g.root.mode),
             100.0 * mpjpe);
    hit_line(s, s->view.line[1], SOURCE_LINE_MAX);
    snprintf(s->view.line[2], SOURCE_LINE_MAX, "%s", s->gains_line);
    if (s->failed) {
        snprintf(s->view.line[3], SOURCE_LINE_MAX, "stopped: %.80s", s->fail_msg);
    } else if (s->plan_line[0]) {
        snprintf(s->view.line[3], SOURCE_LINE_MAX, "%s", s->plan_line);
    } else {
        snprintf(s->view.line[3], SOURCE_LINE_MAX,
                 "stepping %.0fx real time; balls %d (%d thrown); E exports the take",
                 s->step_rtf, s->nhit, s->nhit - s->nplanned);
    }
}

/* At the end of a run following a plan that says how its search ended: whether this run is
 * that walk, bit for bit, on the HUD and once on stdout, in `simulate --sample-load`'s words.
 * Clicks, gains edits and other hits make another walk, and the line says so. */
/* Whether the run follows a plan that records its search's end and has not been judged. */
static bool verdict_due(const sim_source* s) {
    return s->plan.points && s->plan.searched_known && s->plan_verdict == 0;
}

static void judge_plan(sim_source* s) {
    if (!verdict_due(s)) {
        return; /* no plan, a plan saved without its search's end, or judged already */
    }
    char now[64], then[64];
    s->plan_verdict = fb_sample_plan_as_searched(&s->plan, s->sim, now, then, sizeof now);
    if (s->plan_verdict > 0) {
        snprintf(s->plan_line, sizeof s->plan_line, "plan: the walk its search found, bit for bit");
        printf("featherbone-view: the walk the plan's search found, bit for bit: it %s\n", now);
    } else if (s->plan_verdict < 0) {
        snprintf(s->plan_line, sizeof s->plan_line,
                 "plan: not the walk its search found (this one %.41s)", now);
        printf("featherbone-view: note: not the walk the plan's search found (that one %s; this "
               "one %s): other hits, gains or options than the search's, or another build's "
               "rounding (docs/CONTROL.md section 11)\n",
               then, now);
    }
    fflush(stdout);
}

static fb_status sim_advance_to(void* impl, double t, fb_error* err) {
    sim_source* s = impl;
    t = fmin(fmax(t, 0.0), s->info.duration);
    if (fb_sim_time(s->sim) > t + 0.5 * step_dt(s)) {
        const fb_status st = start(s, err); /* back in time: replay from the start */
        if (st != FB_OK) {
            return st;
        }
    }
    const bool ok = step_to(s, t);
    if (ok && fb_sim_done(s->sim)) {
        judge_plan(s);
    }
    update_view(s);
    if (!ok) {
        return set_err(err, FB_ENUMERIC, s->fail_msg);
    }
    return set_err(err, FB_OK, "");
}

static const source_view* sim_view(const void* impl) {
    return &((const sim_source*)impl)->view;
}

static const source_info* sim_info(const void* impl) {
    return &((const sim_source*)impl)->info;
}

static double sim_step_rtf(const void* impl) {
    return ((const sim_source*)impl)->step_rtf;
}

/* Restarts the take and replays to the time it was at; false with the reason in msg. */
static bool replay(sim_source* s, char* msg, size_t cap) {
    const double t = fb_sim_time(s->sim);
    fb_error err;
    if (start(s, &err) != FB_OK) {
        snprintf(msg, cap, "%s", err.msg);
        return false;
    }
    step_to(s, t);
    update_view(s);
    return true;
}

/* The clip joint that names body b (its own, or the nearest ancestor's). */
static const char* body_joint_name(const sim_source* s, int b) {
    const fb_model* m = s->ch->model;
    while (b > 0 && s->ch->joint_of_body[b] < 0) {
        b = m->parent[b];
    }
    return b > 0 ? s->clip->joint[s->ch->joint_of_body[b]].name : NULL;
}

/* The direction as the hits file's reader makes it, v * (1 / |v|) of the numbers it reads,
 * taken to where that changes nothing: normalising is not idempotent to the last bit, and a
 * direction one bit off after the exported hits are read back (`featherbone simulate --hits`)
 * gives another take than the one shown and exported. */
static fb_v3 unit_fixed_point(fb_v3 v) {
    for (int k = 0; k < 8; k++) {
        const double inv = 1.0 / sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
        const fb_v3 u = {v.x * inv, v.y * inv, v.z * inv};
        if (u.x == v.x && u.y == v.y && u.z == v.z) {
            break;
        }
        v = u;
    }
    return v;
}

static bool sim_throw(void* impl, const source_throw_spec* t, char* msg, size_t cap) {
    sim_source* s = impl;
    if (s->failed) {
        snprintf(msg, cap, "the simulation stopped: R restarts it");
        return false;
    }
    const char* name = body_joint_name(s, t->body);
    if (!name) {
        snprintf(msg, cap, "that body has no clip joint to aim at");
        return false;
    }
    const fb_model* m = s->ch->model;
    const fb_data* d = fb_world_data(fb_sim_world(s->sim), 0);
    /* the struck point in the body's coordinates, from its centre of mass */
    const fb_v3 o = fb_point_pos(m, d, t->body, (fb_v3){0.0, 0.0, 0.0});
    const fb_m3 R = fb_body_rot(m, d, t->body);
    const double p[3] = {t->point.x - o.x, t->point.y - o.y, t->point.z - o.z};
    double local[3];
    for (int i = 0; i < 3; i++) {
        local[i] = R.m[0][i] * p[0] + R.m[1][i] * p[1] + R.m[2][i] * p[2];
    }
    const double mb = m->I[t->body].m;
    fb_hit h = fb_default_hit();
    snprintf(h.target, sizeof h.target, "%s", name);
    h.offset = (fb_v3){local[0] - m->I[t->body].h.x / mb, local[1] - m->I[t->body].h.y / mb,
                       local[2] - m->I[t->body].h.z / mb};
    const fb_v3 to_eye = {t->eye.x - t->point.x, t->eye.y - t->point.y, t->eye.z - t->point.z};
    const double dist = sqrt(to_eye.x * to_eye.x + to_eye.y * to_eye.y + to_eye.z * to_eye.z);
    if (!(dist > 1e-6)) {
        snprintf(msg, cap, "the eye is on the character: zoom out to throw");
        return false;
    }
    h.from = FB_FROM_VECTOR;
    h.dir = unit_fixed_point((fb_v3){to_eye.x / dist, to_eye.y / dist, to_eye.z / dist});
    h.distance = fmin(fmax(dist, THROW_DIST_MIN), THROW_DIST_MAX);
    h.speed = t->speed;
    h.mass = t->mass;
    h.radius = t->radius;
    /* launched now: the time is when it reaches the point (as the clip moves it meanwhile) */
    h.time = fb_sim_time(s->sim) + h.distance / h.speed;
    if (h.time > s->info.duration) {
        snprintf(msg, cap, "too late to throw: the ball would arrive at %.2f s, after the clip",
                 h.time);
        return false;
    }
    if (s->nhit >= FB_SIM_MAX_BALLS) {
        snprintf(msg, cap, "%d balls in the take, the most a simulation holds: Backspace clears "
                 "the thrown ones", FB_SIM_MAX_BALLS);
        return false;
    }
    fb_error err;
    fb_status st = fb_sim_add_hit(s->sim, &h, &err);
    s->hit[s->nhit++] = h;
    if (st == FB_ESTATE) { /* no spare ball left: one more, from the start */
        st = replay(s, msg, cap) ? FB_OK : FB_EINVAL;
        snprintf(err.msg, sizeof err.msg, "%s", msg);
    }
    if (st != FB_OK) {
        s->nhit--;
        snprintf(msg, cap, "%s", err.msg);
        return false;
    }
    update_view(s);
    snprintf(msg, cap, "threw %.2g kg at %.3g m/s at %s, due at %.2f s", h.mass, h.speed, name,
             h.time);
    return true;
}

static void sim_clear_throws(void* impl, char* msg, size_t cap) {
    sim_source* s = impl;
    const int n = s->nhit - s->nplanned;
    s->nhit = s->nplanned;
    fb_error err;
    if (start(s, &err) != FB_OK) {
        snprintf(msg, cap, "%s", err.msg);
        return;
    }
    update_view(s);
    snprintf(msg, cap, "cleared %d thrown ball%s; back to the start", n, n == 1 ? "" : "s");
}

/* ---- gains -------------------------------------------------------------------------------- */

/* The reference at the gains' rate: the one there is when the rate is the same. */
static fb_ref* ref_at_rate(sim_source* s, double rate, fb_error* err) {
    if (s->ref && fabs(s->ref->dt * rate - 1.0) < 1e-12) {
        fb_ref* r = s->ref;
        s->ref = NULL;
        return r;
    }
    return fb_ref_from_clip(s->clip, s->ch, rate, 0, 0, NULL, err);
}

static bool same_file_state(const struct stat* a, const struct stat* b) {
    return a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void clock_text(char* out, size_t cap) {
    const time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(out, cap, "%H:%M:%S", &tm);
}

/* Restarts the take with gains g (a new fit of the clip when the rate changes) and replays
 * it to the time it was at; on failure the previous simulation, gains and fit stay. */
static fb_status apply_gains(sim_source* s, const fb_gains* g, fb_error* err) {
    const fb_gains old_g = s->g;
    fb_ref* old_ref = s->ref;
    fb_ref* ref = fabs(old_ref->dt * g->rate - 1.0) < 1e-12
                      ? old_ref
                      : fb_ref_from_clip(s->clip, s->ch, g->rate, 0, 0, NULL, err);
    const double t = fb_sim_time(s->sim);
    fb_sim* old_sim = s->sim;
    s->sim = NULL;
    s->g = *g;
    s->ref = ref;
    if (!ref || start(s, err) != FB_OK) { /* start() leaves s->sim NULL on failure */
        if (ref && ref != old_ref) {
            fb_ref_destroy(ref);
        }
        s->sim = old_sim;
        s->g = old_g;
        s->ref = old_ref;
        return err->code;
    }
    fb_sim_destroy(old_sim);
    if (ref != old_ref) {
        fb_ref_destroy(old_ref);
    }
    step_to(s, t);
    update_view(s);
    return FB_OK;
}

static bool sim_poll(void* impl) {
    sim_source* s = impl;
    if (!s->gains_path) {
        return false;
    }
    struct stat st;
    const bool ok = stat(s->gains_path, &st) == 0;
    if (ok && s->gains_st_ok && same_file_state(&st, &s->gains_st)) {
        return false;
    }
    if (!ok && !s->gains_st_ok) {
        return false; /* still missing: said already */
    }
    s->gains_st_ok = ok;
    if (ok) {
        s->gains_st = st;
    }
    char when[16];
    clock_text(when, sizeof when);
    fb_error err;
    fb_gains g;
    if (!ok || fb_gains_load(s->gains_path, &g, &err) != FB_OK) {
        const char* why = ok ? err.msg : "cannot read it";
        const size_t len = strlen(s->gains_path);
        if (strncmp(why, s->gains_path, len) == 0 && why[len] == ':') {
            why += len + 1 + (why[len + 1] == ' '); /* the path is on the line already */
        }
        fprintf(stderr, "featherbone-view: %s: %s; the previous gains stay in force\n",
                s->gains_path, why);
        snprintf(s->gains_line, sizeof s->gains_line, "gains NOT reloaded (%.8s): %.90s", when,
                 why);
        update_view(s);
        return true;
    }
    if (s->hold) { /* unsaved edits in the window: the viewer asks which wins */
        s->pending = g;
        s->has_pending = true;
        snprintf(s->gains_line, sizeof s->gains_line,
                 "gains file changed on disk (%.8s) while edits are unsaved: keep or take it?",
                 when);
        printf("featherbone-view: %s changed on disk while the gains have unsaved edits\n",
               s->gains_path);
        fflush(stdout);
        update_view(s);
        return true;
    }
    s->has_pending = false;
    if (apply_gains(s, &g, &err) != FB_OK) {
        snprintf(s->gains_line, sizeof s->gains_line, "gains NOT reloaded (%.8s): %.90s", when,
                 err.msg);
        update_view(s);
        return true;
    }
    snprintf(s->gains_line, sizeof s->gains_line, "gains reloaded %s from %s", when,
             s->gains_path);
    printf("featherbone-view: gains reloaded from %s\n", s->gains_path);
    update_view(s);
    return true;
}

static const fb_gains* sim_gains(const void* impl) {
    return &((const sim_source*)impl)->g;
}

static const char* sim_gains_path(const void* impl) {
    return ((const sim_source*)impl)->gains_path;
}

static bool sim_set_gains(void* impl, const fb_gains* g, char* msg, size_t cap) {
    sim_source* s = impl;
    fb_error err;
    if (apply_gains(s, g, &err) != FB_OK) {
        snprintf(msg, cap, "%s", err.msg);
        return false;
    }
    msg[0] = '\0';
    return true;
}

static bool sim_save_gains(void* impl, const char* path, char* msg, size_t cap) {
    sim_source* s = impl;
    fb_error err;
    if (fb_gains_save(&s->g, path, &err) != FB_OK) {
        snprintf(msg, cap, "NOT saved: %s", err.msg);
        return false;
    }
    /* the watched file rewritten by us: take it as read, so that the watch does not reload it
     * (or ask about it) */
    struct stat a, b;
    if (s->gains_path && stat(path, &a) == 0 && stat(s->gains_path, &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
        s->gains_st = b;
        s->gains_st_ok = true;
        s->has_pending = false;
        char when[16];
        clock_text(when, sizeof when);
        snprintf(s->gains_line, sizeof s->gains_line, "gains saved %s to %s (watched)", when,
                 s->gains_path);
        update_view(s);
    }
    snprintf(msg, cap, "saved the gains to %s", path);
    return true;
}

static void sim_hold_reloads(void* impl, bool hold) {
    ((sim_source*)impl)->hold = hold;
}

static const fb_gains* sim_pending_gains(const void* impl) {
    const sim_source* s = impl;
    return s->has_pending ? &s->pending : NULL;
}

static void sim_drop_pending(void* impl, bool taken) {
    sim_source* s = impl;
    if (s->has_pending) {
        s->has_pending = false;
        snprintf(s->gains_line, sizeof s->gains_line, "%s",
                 taken ? "gains: took the file's over the edits"
                       : "gains: kept the edits over the file's (unsaved)");
        update_view(s);
    }
}

static const fb_sim* sim_sim(const void* impl) {
    return ((const sim_source*)impl)->sim;
}

/* ---- export ------------------------------------------------------------------------------- */

static bool sim_export(void* impl, const char* prefix, char* msg, size_t cap) {
    sim_source* s = impl;
    fb_error err;
    fb_sim_opts so = fb_default_sim_opts();
    so.ref = s->ref;
    so.control = s->plan.points ? s->control : NULL;
    fb_sim* take = fb_sim_create(s->clip, s->ch, &s->g, s->hit, s->nhit, &so, &err);
    fb_status st = take ? fb_sim_run(take, NULL, NULL, &err) : err.code;
    char path[3][1100];
    snprintf(path[0], sizeof path[0], "%s.bvh", prefix);
    snprintf(path[1], sizeof path[1], "%s.balls.json", prefix);
    snprintf(path[2], sizeof path[2], "%s.hits.json", prefix);
    if (st == FB_OK) { /* as `featherbone simulate` writes it */
        st = fb_sim_write_bvh(take, path[0], &err);
    }
    if (st == FB_OK) {
        st = sim_balls_json(take, path[1], &err);
    }
    if (st == FB_OK) {
        st = fb_hits_save(path[2], s->hit, s->nhit, &err);
    }
    fb_sim_destroy(take);
    if (st != FB_OK) {
        snprintf(msg, cap, "export failed: %s", err.msg);
        fprintf(stderr, "featherbone-view: export failed: %s\n", err.msg);
        return false;
    }
    const bool strength = !s->gains_path && s->strength != FB_STRENGTH_MEAN;
    const bool root = !s->gains_path && s->root != FB_ROOT_KINEMATIC;
    printf("featherbone-view: wrote %s, %s, %s (%d hits); the same take from the command line:\n"
           "  featherbone simulate %s --hits %s%s%s%s%s%s%s -o OUT.bvh\n",
           path[0], path[1], path[2], s->nhit, s->clip_path, path[2],
           s->gains_path ? " --gains " : (strength ? " --strength " : ""),
           s->gains_path ? s->gains_path : (strength ? fb_strength_name(s->strength) : ""),
           root ? " --root " : "", root ? fb_root_mode_name(s->root) : "",
           s->plan_path ? " --sample-load " : "", s->plan_path ? s->plan_path : "");
    fflush(stdout);
    snprintf(msg, cap, "exported %s (+ .balls.json, .hits.json)", path[0]);
    return true;
}

/* ---- open / close ------------------------------------------------------------------------- */

static void sim_close(void* impl) {
    sim_source* s = impl;
    if (!s) {
        return;
    }
    if (s->sim && verdict_due(s) && fb_sim_time(s->sim) > 0.0) {
        /* a take that stopped short of its end (a screenshot, --frames from a late --time, a
         * closed window) cannot say whether it is the searched walk: say that it did not */
        printf("featherbone-view: the plan's walk not judged: the take stopped at %.2f s, before "
               "its end at %.2f s (a take to the end says whether it is the walk the plan's "
               "search found)\n",
               fb_sim_time(s->sim), s->info.duration);
        fflush(stdout);
    }
    fb_sim_destroy(s->sim);
    fb_ref_destroy(s->control);
    fb_ref_destroy(s->control_prev);
    fb_sample_plan_free(&s->plan);
    fb_ref_destroy(s->ref);
    free(s->force);
    free(s->tmp);
    fb_data_destroy(s->ghost);
    fb_character_destroy(s->ch);
    fb_clip_destroy(s->clip);
    free(s);
}

/* The gains in force at the start: the file's, or those of gains init (fitted at 240 Hz). */
static fb_status first_gains(sim_source* s, fb_error* err) {
    if (s->gains_path) {
        s->gains_st_ok = stat(s->gains_path, &s->gains_st) == 0;
        const fb_status st = fb_gains_load(s->gains_path, &s->g, err);
        if (st == FB_OK) {
            char when[16];
            clock_text(when, sizeof when);
            snprintf(s->gains_line, sizeof s->gains_line, "gains read %s from %s (watched)",
                     when, s->gains_path);
        }
        return st;
    }
    s->ref = fb_ref_from_clip(s->clip, s->ch, DEFAULT_RATE, 0, 0, NULL, err);
    if (!s->ref) {
        return err->code;
    }
    char asked[64] = "";
    if (s->strength != FB_STRENGTH_MEAN) {
        snprintf(asked, sizeof asked, " --strength %s", fb_strength_name(s->strength));
    }
    if (s->root != FB_ROOT_KINEMATIC) {
        const size_t n = strlen(asked);
        snprintf(asked + n, sizeof asked - n, " --root %s", fb_root_mode_name(s->root));
    }
    /* " --strength women --root assisted" is 33 characters: the line fits SOURCE_LINE_MAX */
    snprintf(s->gains_line, sizeof s->gains_line, "gains: %s%.48s (--gains FILE to edit them live)",
             asked[0] ? "gains init" : "the defaults of gains init", asked);
    const fb_status st = fb_gains_init_strength(s->ch->model, s->ref, s->strength, &s->g, err);
    s->g.root.mode = s->root;
    return st;
}

static const source_ops SIM_OPS = {.close = sim_close,
                                   .advance_to = sim_advance_to,
                                   .view = sim_view,
                                   .info = sim_info,
                                   .throw_ball = sim_throw,
                                   .clear_throws = sim_clear_throws,
                                   .poll = sim_poll,
                                   .export_take = sim_export,
                                   .step_rtf = sim_step_rtf,
                                   .gains = sim_gains,
                                   .gains_path = sim_gains_path,
                                   .set_gains = sim_set_gains,
                                   .save_gains = sim_save_gains,
                                   .hold_reloads = sim_hold_reloads,
                                   .pending_gains = sim_pending_gains,
                                   .drop_pending = sim_drop_pending,
                                   .sim = sim_sim};

void* source_sim_open(const source_opts* o, const source_ops** ops, fb_error* err) {
    sim_source* s = calloc(1, sizeof *s);
    if (!s) {
        set_err(err, FB_ENOMEM, "out of memory");
        return NULL;
    }
    *ops = &SIM_OPS;
    s->clip_path = o->clip;
    s->gains_path = o->gains;
    s->strength = (fb_strength)o->strength;
    s->root = (fb_root_mode)o->root;
    if (o->nhit > FB_SIM_MAX_BALLS) {
        set_err(err, FB_EINVAL, "--hit: too many balls");
        free(s);
        return NULL;
    }
    if (o->nhit > 0) {
        memcpy(s->hit, o->hit, (size_t)o->nhit * sizeof(fb_hit));
    }
    s->nhit = s->nplanned = o->nhit;
    fb_status st = source_load(o, &s->rules, &s->clip, &s->ch, err);
    if (st == FB_OK) {
        st = first_gains(s, err);
    }
    if (st == FB_OK) {
        s->ref = ref_at_rate(s, s->g.rate, err);
        st = s->ref ? FB_OK : err->code;
    }
    if (st == FB_OK && o->sample_plan) {
        s->plan_path = o->sample_plan;
        st = fb_sample_plan_load(o->sample_plan, s->ch->model, &s->plan, err);
    }
    const fb_model* m = st == FB_OK ? s->ch->model : NULL;
    if (m) {
        s->ghost = fb_data_create(m, NULL, err);
        s->tmp = calloc((size_t)m->nv + 1, sizeof(double));
        s->force_cap = fb_default_world_opts().max_contacts;
        s->force = calloc((size_t)s->force_cap, sizeof(double));
        st = !s->ghost                ? err->code
             : (!s->tmp || !s->force) ? set_err(err, FB_ENOMEM, "out of memory")
                                      : FB_OK;
    }
    if (st == FB_OK) {
        st = start(s, err);
    }
    if (st != FB_OK) {
        sim_close(s);
        return NULL;
    }
    s->info.nframe = (int)floor(fb_sim_duration(s->sim) / s->clip->frame_time + 1e-6) + 1;
    s->info.frame_time = s->clip->frame_time;
    s->info.duration = fb_sim_duration(s->sim);
    source_name(o->clip, s->info.name, sizeof s->info.name);
    source_bounds(m, s->ref->q, s->ref->nframe, s->ghost, &s->info.lo, &s->info.hi);
    s->view = (source_view){.model = m,
                            .ghost = s->ghost,
                            .ball = s->ball,
                            .contact_force = s->force,
                            .art_model = s->art_model,
                            .art_data = s->art_data,
                            .nart = s->view.nart};
    if (sim_advance_to(s, 0.0, err) != FB_OK) {
        sim_close(s);
        return NULL;
    }
    return s;
}
