/* Sampling-based control of a free root [Liu, Yin, van de Panne, Shao & Xu 2010, "Sampling-based
 * contact-rich motion control" (SAMCON)] on top of the tracker (docs/CONTROL.md §11).
 *
 * The tracker follows a reference; with a free root the clip's own (on the ground: ground.c)
 * cannot be followed: its centre of mass leaves the feet and the character falls within
 * seconds. SAMCON's answer is to search, window by window, for offsets to the reference that
 * the simulated character can follow, by simulating many candidates and keeping the best.
 * Here the offsets are piecewise linear in time, one control point per window; a candidate
 * changes the last control point of a kept sequence by a Gaussian step. Each candidate is
 * simulated to the window's end plus a look-ahead and scored by the pose error against the clip
 * over that span, a fall costing more than any pose (a root sunk below o->upright of the clip's
 * height, taken up to where the clip stands, a crouch the look-ahead may not leave, costs a
 * fall's cost in the span's mean and sends the search back as a fall does). The `keep` best go on
 * to the next window. As SAMCON keeps a set of states, the search keeps each kept sequence's
 * simulation as it was just before the next window (fb_sim_copy: every bit of the worlds, trackers
 * and records), and a candidate goes on from its sequence's copy: the simulation finally run from
 * the start with the chosen reference is, bit for bit, the one scored, since a new control point
 * changes nothing the simulation read before the window (SAVE_MARGIN). o->replay simulates every
 * candidate from the start instead (the search before the copies, kept to check them: the same
 * plan, test_sample).
 *
 * The cost: samples x duration x (window + lookahead) / window simulated seconds (replayed,
 * samples x duration^2 / (2 window)); the candidates of a window are independent and run on
 * o->threads threads. No library does this search: it is SAMCON's algorithm on this
 * simulator, so it is written here. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "control/ref_internal.h"
#include "featherbone/collision.h"
#include "featherbone/dynamics.h"
#include "featherbone/sim.h"
#include "math/detmath.h"
#include "math/vec3.h"
#include "util/error.h"
#include "util/sort.h"

#include "sim_internal.h"

#define MAX_DOFS FB_SAMPLE_MAX_DOFS
#define MAX_THREADS FB_SAMPLE_MAX_THREADS
/* Scales of the score's terms: root-relative joint positions (m) and the root's turn (rad) from
 * the clip's (the root's position's is o->root_scale, its drop below the clip's height's
 * o->height_scale); a window's score is the mean over its recorded frames of the squares of
 * each error over its scale, summed. */
#define COST_POSE 0.03
#define COST_ROOT_ROT 0.15
/* s after a hit's time between which its aim point's root-relative deviation counts in the
 * score (o->hit_scale): issue 18's "back within 2 cm 1.5 s after", held for the second after
 * (sim_outcome.c's hold). Since stop 39, and on by default; until then from the hit to 2 s
 * after it and off by default, which weighed the give the issue asks of a struck body as much
 * as its return (docs/CONTROL.md §11 has what each did). Since stop 47 the deviation over the
 * line FB_HIT_LINE of the hold's tolerance counts again, FB_HIT_LINE_WEIGHT times, from
 * FB_HIT_LINE_FROM after the hit (sim.h). */
#define HIT_BACK_FROM FB_HIT_BACK
#define HIT_BACK_TO FB_HIT_HELD
/* A fall (or a blow-up) costs FALL_COST plus FALL_COST per second of the span left after it:
 * more than any pose, and an earlier fall more than a later one. The root sinking below
 * o->upright of the clip's height costs the same at the frame it sinks, but counted in the
 * span's mean over its frames (about a hundredth of a fall's over a 0.9-s span of 120 recorded
 * frames a second); the search goes back for it as for a fall (docs/CONTROL.md §11, stop 38:
 * measured so). */
#define FALL_COST 1000.0
/* When the best candidate of a window falls within its span (every kept sequence has run into
 * a fall the look-ahead could not see earlier), the search goes back this many windows and
 * searches again from the sequences it kept there, with new draws (SAMCON restarts a failed
 * window the same way); at most o->backtracks times in all, then it goes on with the best. */
#define BACKTRACK_WINDOWS 5
/* Steps before a window's start at which the kept sequences' simulations are saved for its
 * candidates to go on from. What the simulation reads of its reference at a time reaches at
 * most two frames past it (the step velocities by backward differences, the feedforward
 * torques of the next frame, the centre of mass path by central differences, fb_ref_at between
 * two frames), and a window's new control point moves the frames after its start only: six
 * steps leave room. test_sample checks that the saved simulations give the replayed plan. */
#define SAVE_MARGIN 6
/* Frames past a simulation's end that its candidate's reference is laid to (and its centre of
 * mass path made): the two it reads past a time (SAVE_MARGIN's comment), with room. The frames
 * after are left as an earlier candidate laid them: nothing reads them. */
#define READ_MARGIN SAVE_MARGIN

typedef struct sampler sampler;

/* One thread's simulations: its own reference to offset, the simulation that follows it, and
 * its outcome. */
typedef struct worker {
    sampler* sp;
    int index;
    fb_ref* ctl;
    fb_sim* s; /* tracking ctl: a kept simulation is copied into it (not with o->replay) */
    fb_data* d;
    double* dv; /* (nv) */
    /* what ctl holds: the sequence laid last (ps), the frames below laid_q whose q and v_step
     * are that sequence's, below laid_tau whose a_step and tau are, and below com_ok those of
     * s's centre of mass path (fb_sim_copy leaves it to s); a candidate lays again only the
     * frames its sequence moves (the search's candidates share their control points up to
     * the window's) up to where its simulation ends */
    double* laid;
    int laid_q, laid_tau, com_ok;
    pthread_t tid;
    fb_status st;
    fb_error err;
} worker;

struct sampler {
    const fb_clip* clip;
    const fb_character* ch;
    const fb_gains* g;
    const fb_hit* hits;
    int nhit;
    fb_sim_opts so; /* each evaluation's: the fitted reference, no baseline */
    const fb_ref* ground;
    fb_sample_opts o;
    double stand; /* m: the clip's standing root height (standing_height) */
    int nd;
    int dof[MAX_DOFS];
    double sigma[MAX_DOFS];
    double decay[MAX_DOFS]; /* a step is drawn about decay times the last point (o.pull) */
    int nwin;
    double duration;
    size_t ps; /* doubles in a sequence: (nwin + 1) control points of nd */
    /* the window being searched: candidates cand (n x ps), their scores and falls; order: the
     * candidates by kept sequence, in which the threads take them (apply lays less when a
     * thread's candidates follow the same sequence) */
    int n;
    int* order;
    double* cand;
    double* cost;
    double* fall;
    bool* low;
    double t0, t1; /* the span scored */
    /* the kept sequences' simulations (not with o->replay): as made (start), saved before
     * the window (psim, npar of them, the fall each met before its save in pfall: NAN none),
     * and those being saved before the next (nsim, nfall) by the jobs of an ADVANCE */
    fb_sim* start;
    fb_sim** psim;
    fb_sim** nsim;
    double* pfall;
    double* nfall;
    int npar;
    /* what the threads run: the window's candidates (EVALUATE), or (ADVANCE) sequences aseq[j]
     * from psim[apar[j]] (-1: start) to ts, into nsim[j] */
    enum { EVALUATE, ADVANCE } job;
    int njob;
    const double** aseq;
    int* apar;
    double ts;
    int nthread;
    worker w[MAX_THREADS];
};

/* xorshift64* [Vigna 2016] and Box–Muller: the draws depend on the seed alone, not on the C
 * library's rand() or on which thread runs a candidate. */
static double uniform(uint64_t* x) {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

static double gauss(uint64_t* x) {
    const double u = uniform(x), v = uniform(x);
    return sqrt(-2.0 * fb_log(1.0 - u)) * fb_cos(2.0 * FB_PI * v);
}

/* The dofs offset: the floating root's six, and every joint of the legs (hip, knee, ankle)
 * and of the root's other children with degrees of freedom (the spine's first joint); a
 * body on a leg's chain above its hip (the CMU skeleton's LHipJoint) is left. False when the
 * model has no floating root or too many. */
static bool choose_dofs(const fb_model* m, sampler* sp) {
    if (m->nbody < 2 || m->jtype[1] != FB_JOINT_FLOATING || m->parent[1] != 0) {
        return false;
    }
    fb_leg legs[8];
    const int nleg = fb_ref_legs(m, legs, 8);
    bool* on = calloc((size_t)m->nbody, sizeof(bool));
    bool* chain = calloc((size_t)m->nbody, sizeof(bool));
    if (!on || !chain) {
        free(on);
        free(chain);
        return false;
    }
    on[1] = true;
    for (int l = 0; l < nleg; l++) {
        on[legs[l].hip] = on[legs[l].knee] = on[legs[l].foot] = true;
        for (int b = legs[l].foot; b > 1; b = m->parent[b]) {
            chain[b] = true;
        }
    }
    for (int b = 2; b < m->nbody; b++) {
        on[b] = on[b] || (m->parent[b] == 1 && !chain[b] && m->jnv[b] > 0);
    }
    sp->nd = 0;
    bool ok = true;
    for (int b = 1; b < m->nbody; b++) {
        for (int k = 0; on[b] && k < m->jnv[b]; k++) {
            if (sp->nd == MAX_DOFS) {
                ok = false;
                break;
            }
            /* a floating root's linear part (its last three) in metres */
            const bool lin = m->jtype[b] == FB_JOINT_FLOATING && k >= 3;
            sp->sigma[sp->nd] = lin ? sp->o.sigma_root : sp->o.sigma_joint;
            sp->decay[sp->nd] = m->jtype[b] == FB_JOINT_FLOATING ? 1.0 : 1.0 - sp->o.pull;
            sp->dof[sp->nd++] = m->v_adr[b] + k;
        }
    }
    free(on);
    free(chain);
    return ok;
}

/* The clip's standing root height: the median over gr's frames of its root's height above the
 * ground (m); NAN when out of memory. A clip that hops or jumps lifts its root above it for
 * a moment, one that crouches or kneels takes it below for a moment; a walk bobs about it. */
static double standing_height(const fb_model* m, const fb_ref* gr) {
    double* h = malloc((size_t)gr->nframe * sizeof(double));
    if (!h) {
        return NAN;
    }
    const fb_plane g = fb_ground_plane();
    for (int f = 0; f < gr->nframe; f++) {
        const double* p = gr->q + (size_t)f * (size_t)gr->nq + m->q_adr[1];
        h[f] = fb_v3_dot(g.n, fb_v3_make(p[0], p[1], p[2])) - g.offset;
    }
    fb_sort_doubles(h, (size_t)gr->nframe);
    const double mid = h[gr->nframe / 2];
    free(h);
    return mid;
}

/* The control point before out's frame f (sequences laid with points `window` apart, nwin + 1
 * of them): the frame is laid from this point and the next. */
static int point_before(const fb_ref* out, double window, int nwin, int f) {
    const int k = (int)floor(f * out->dt / window);
    return k >= nwin ? nwin - 1 : k;
}

/* out's frames [from, to) (q only): gr's offset at the dofs dof[0..nd) by the sequence seq
 * (control points `window` apart, nwin + 1 of them, linear between). */
static void lay_q(const fb_model* m, const fb_ref* gr, double window, int nwin, int nd,
                  const int* dof, const double* seq, fb_ref* out, double* dv, int from, int to) {
    for (int f = from; f < to; f++) {
        const double t = f * out->dt;
        const int k = point_before(out, window, nwin, f);
        const double u = fmin(1.0, (t - k * window) / window);
        const double* a = seq + (size_t)k * (size_t)nd;
        const double* b = a + nd;
        memset(dv, 0, (size_t)m->nv * sizeof(double));
        bool moved = false;
        for (int i = 0; i < nd; i++) {
            dv[dof[i]] = (1.0 - u) * a[i] + u * b[i];
            moved = moved || dv[dof[i]] != 0.0;
        }
        /* a frame with no offset is the grounded one bit for bit (fb_integrate normalises) */
        const double* q0 = gr->q + (size_t)f * (size_t)m->nq;
        double* q = out->q + (size_t)f * (size_t)m->nq;
        if (moved) {
            fb_integrate(m, q0, dv, 1.0, q);
        } else {
            memcpy(q, q0, (size_t)m->nq * sizeof(double));
        }
    }
}

/* out's frames: lay_q's, and their step rates and feedforward torques. The final reference
 * and fb_sample_plan_reference are made here, the search's candidates alike (apply). */
static void lay(const fb_model* m, const fb_ref* gr, double window, int nwin, int nd,
                const int* dof, const double* seq, fb_ref* out, fb_data* d, double* dv) {
    lay_q(m, gr, window, nwin, nd, dof, seq, out, dv, 0, out->nframe);
    fb_ref_step_velocities(m, out);
    memcpy(out->v_step, gr->v_step, (size_t)m->nv * sizeof(double)); /* frame 0's: the start */
    fb_ref_step_torques(m, out, d);
}

/* A candidate's reference into w->ctl: lay()'s frames for a simulation to time t, each the
 * same bits, laid again only from the first frame seq moves against the sequence w->ctl
 * holds (w->com_ok lowered to it) and only as far as that simulation reads: their number,
 * returned. */
static int apply(const sampler* sp, worker* w, const double* seq, double t) {
    const fb_model* m = sp->ch->model;
    fb_ref* out = w->ctl;
    const int nf = out->nframe, npt = sp->nwin + 1;
    int need = (int)ceil(t / out->dt - 1e-9) + 1 + READ_MARGIN;
    need = need < nf ? need : nf;
    /* the first control point that differs, and the first frame laid from it */
    int c = 0;
    while (c < npt &&
           !memcmp(seq + (size_t)c * (size_t)sp->nd, w->laid + (size_t)c * (size_t)sp->nd,
                   (size_t)sp->nd * sizeof(double))) {
        c++;
    }
    int from = 0;
    while (from < w->laid_q && point_before(out, sp->o.window, sp->nwin, from) + 1 < c) {
        from++;
    }
    /* q and v_step through frame `need` (frame need - 1's a_step reads it), a_step and tau
     * below it; frame i's a_step and tau read v_step of frame i + 1 */
    const int to_q = need + 1 < nf ? need + 1 : nf;
    if (from < to_q) {
        lay_q(m, sp->ground, sp->o.window, sp->nwin, sp->nd, sp->dof, seq, out, w->dv, from, to_q);
        fb_ref_step_velocities_range(m, out, from, to_q);
        if (from == 0) {
            memcpy(out->v_step, sp->ground->v_step, (size_t)m->nv * sizeof(double));
        }
    }
    const int from_tau = from - 1 < w->laid_tau ? (from > 0 ? from - 1 : 0) : w->laid_tau;
    if (from_tau < need) {
        fb_ref_step_torques_range(m, out, w->d, from_tau, need);
    }
    w->laid_q = from > to_q ? from : to_q;
    w->laid_tau = from_tau > need ? from_tau : need;
    w->com_ok = w->com_ok < from ? w->com_ok : from;
    memcpy(w->laid, seq, sp->ps * sizeof(double));
    return need;
}

/* Steps s to t (or a fall: its time into *fall, NAN none; a blow-up counts as one). */
static fb_status run_to(fb_sim* s, double t, double* fall, fb_error* err) {
    *fall = NAN;
    while (!fb_sim_done(s) && fb_sim_time(s) < t - 1e-9) {
        const double now = fb_sim_time(s);
        const fb_status st = fb_sim_step(s, err);
        if (st == FB_ENUMERIC) {
            *fall = now;
            break;
        }
        if (st != FB_OK) {
            return st;
        }
        const fb_fall f = fb_tracker_fall(fb_sim_tracker(s));
        if (f.cause != FB_FALL_NONE) {
            *fall = f.time;
            break;
        }
    }
    return FB_OK;
}

/* The score of s's frames over [t0, t1], a fall at `fall` (NAN none) counted, and whether the
 * root sank below o.upright of the clip's height in them (*low; FALL_COST's comment). */
static double score(const sampler* sp, const fb_sim* s, double t0, double t1, double fall,
                    bool* low) {
    *low = false;
    int n = 0, used = 0;
    const fb_sim_frame* fr = fb_sim_frames(s, &n);
    double c = 0.0;
    for (int i = 0; i < n; i++) {
        if (fr[i].time < t0 - 1e-9) {
            continue;
        }
        const fb_track_metrics* x = &fr[i].metrics;
        const double a = x->mpjpe_root / COST_POSE, b = x->root_pos_err / sp->o.root_scale;
        const double r = x->root_rot_err / COST_ROOT_ROT;
        c += a * a + b * b + r * r;
        /* the clip's root height, up to where it stands: a hop the body does not make is the
         * root's distance from the path, not a drop or a sinking */
        const double clip_height = fmin(x->root_height - x->root_height_err, sp->stand);
        if (sp->o.height_scale > 0.0) {
            const double h = fmax(0.0, clip_height - x->root_height) / sp->o.height_scale;
            c += h * h;
        }
        if (!*low && sp->o.upright > 0.0 && x->root_height < sp->o.upright * clip_height) {
            *low = true;
            c += FALL_COST * (1.0 + (t1 - fr[i].time));
        }
        for (int k = 0; k < sp->nhit && sp->o.hit_scale > 0.0; k++) {
            const double dt = fr[i].time - sp->hits[k].time;
            const double d = fb_sim_frame_hit_err_root(s, i)[k];
            if (dt >= HIT_BACK_FROM && dt <= HIT_BACK_TO) {
                const double e = d / sp->o.hit_scale;
                c += e * e;
            }
            if (dt >= FB_HIT_LINE_FROM && dt <= HIT_BACK_TO) {
                const double over =
                    fmax(0.0, d - FB_HIT_LINE * sp->so.recover_tol) / sp->o.hit_scale;
                c += FB_HIT_LINE_WEIGHT * over * over;
            }
        }
        used++;
    }
    c = used > 0 ? c / used : 0.0;
    if (!isnan(fall)) {
        c += FALL_COST * (1.0 + (t1 - fall));
    }
    return c;
}

/* Simulates with the reference ctl from the start to t1 (or a fall); the score over
 * [t0, t1] and the fall's time (NAN: none) into *fall, and when end is not NULL the state's
 * fingerprint at t1 into *end (fb_sim_state_hash; 0 after a fall). */
static fb_status evaluate(const sampler* sp, const fb_ref* ctl, double t0, double t1, double* cost,
                          double* fall, bool* low, uint64_t* end, fb_error* err) {
    fb_sim_opts so = sp->so;
    so.control = ctl;
    fb_sim* s = fb_sim_create(sp->clip, sp->ch, sp->g, sp->hits, sp->nhit, &so, err);
    if (!s) {
        return err->code;
    }
    const fb_status st = run_to(s, t1, fall, err);
    *cost = score(sp, s, t0, t1, *fall, low);
    if (end) {
        *end = isnan(*fall) ? fb_sim_state_hash(s) : 0;
    }
    fb_sim_destroy(s);
    return st;
}

/* w->s made the simulation `from` (NULL: as made), tracking w->ctl (laid with the sequence
 * the caller chose, its first `need` frames read: apply), and stepped to t unless from's
 * sequence fell before it was saved (from_fall; the fall either way into *fall). */
static fb_status go_on(const sampler* sp, worker* w, const fb_sim* from, double from_fall, double t,
                       int need, double* fall, fb_error* err) {
    fb_status st = fb_sim_copy(w->s, from ? from : sp->start, err);
    if (st != FB_OK) {
        return st;
    }
    if (w->com_ok < need) {
        fb_sim_control_changed(w->s, w->com_ok, need);
        w->com_ok = need;
    }
    *fall = from_fall;
    return isnan(from_fall) ? run_to(w->s, t, fall, err) : FB_OK;
}

/* Job i of the window: candidate i scored (EVALUATE), or kept sequence i's simulation saved
 * at sp->ts (ADVANCE). */
static fb_status run_job(sampler* sp, worker* w, int i) {
    if (sp->job == ADVANCE) {
        const int need = apply(sp, w, sp->aseq[i], sp->ts);
        const int p = sp->apar[i];
        const fb_status st = go_on(sp, w, p >= 0 ? sp->psim[p] : NULL, p >= 0 ? sp->pfall[p] : NAN,
                                   sp->ts, need, &sp->nfall[i], &w->err);
        return st == FB_OK ? fb_sim_copy(sp->nsim[i], w->s, &w->err) : st;
    }
    /* replayed, the simulation is made anew from the whole reference */
    const int need =
        apply(sp, w, sp->cand + (size_t)i * sp->ps, sp->o.replay ? sp->duration : sp->t1);
    if (sp->o.replay) {
        return evaluate(sp, w->ctl, sp->t0, sp->t1, &sp->cost[i], &sp->fall[i], &sp->low[i], NULL,
                        &w->err);
    }
    const int p = i % sp->npar;
    const fb_status st =
        go_on(sp, w, sp->psim[p], sp->pfall[p], sp->t1, need, &sp->fall[i], &w->err);
    sp->cost[i] = score(sp, w->s, sp->t0, sp->t1, sp->fall[i], &sp->low[i]);
    return st;
}

/* A thread's share of the jobs: every nthread-th from its index. */
static void* run_worker(void* arg) {
    worker* w = arg;
    sampler* sp = w->sp;
    w->st = FB_OK;
    for (int i = w->index; i < sp->njob && w->st == FB_OK; i += sp->nthread) {
        w->st = run_job(sp, w, sp->job == EVALUATE ? sp->order[i] : i);
    }
    return NULL;
}

/* Runs the jobs (sp->job, sp->njob of them) on the threads; the first thread's failure. */
static fb_status run_window(sampler* sp, fb_error* err) {
    int started = 1;
    for (int t = 1; t < sp->nthread; t++) {
        if (pthread_create(&sp->w[t].tid, NULL, run_worker, &sp->w[t]) != 0) {
            break;
        }
        started++;
    }
    /* threads that did not start: the calling thread does their share */
    for (int t = started; t < sp->nthread; t++) {
        run_worker(&sp->w[t]);
    }
    run_worker(&sp->w[0]);
    for (int t = 1; t < started; t++) {
        pthread_join(sp->w[t].tid, NULL);
    }
    for (int t = 0; t < sp->nthread; t++) {
        if (sp->w[t].st != FB_OK) {
            *err = sp->w[t].err;
            return sp->w[t].st;
        }
    }
    return FB_OK;
}

/* The simulations of a window in which the search answers a hit (o->hit_samples; 0: as every
 * window's, o->samples), and the most of any window. */
static int hit_samples(const fb_sample_opts* o) {
    return o->hit_samples > 0 ? o->hit_samples : o->samples;
}

static int most_samples(const fb_sample_opts* o) {
    return hit_samples(o) > o->samples ? hit_samples(o) : o->samples;
}

/* Whether window k's scored span, [k window, (k + 1) window + lookahead], meets a hit's
 * [time, time + FB_HIT_HELD]: from the window whose look-ahead first sees the ball to the last
 * whose score holds the struck body's return, the windows where the search answers a hit. */
static bool answers_hit(const sampler* sp, int k) {
    const fb_sample_opts* o = &sp->o;
    const double t0 = k * o->window;
    const double t1 = fmin(sp->duration, (k + 1) * o->window + o->lookahead);
    for (int h = 0; h < sp->nhit; h++) {
        if (t1 >= sp->hits[h].time && t0 <= sp->hits[h].time + FB_HIT_HELD) {
            return true;
        }
    }
    return false;
}

/* Window k's simulations: hit_samples where it answers a hit (the hardest windows of a run with
 * hits: SAMCON's samples a window are a budget, which may be spent where it is needed; twice
 * there did not measurably help, docs/CONTROL.md §11), o->samples elsewhere. */
static int window_samples(const sampler* sp, int k) {
    return answers_hit(sp, k) ? hit_samples(&sp->o) : sp->o.samples;
}

/* What fb_sim_sample and fb_sample_plan_reference ask of their arguments: all given
 * (`given`), and a root that is not kinematic (a kinematic root is carried along the clip:
 * there is nothing to search or to offset). `what` begins the message. */
static bool args_ok(bool given, const fb_gains* g, const char* what, fb_error* err) {
    if (!given) {
        fb_fail(err, FB_EINVAL,
                "%s: a required argument is NULL (clip, character, gains, options or plan)", what);
        return false;
    }
    if (g->root.mode == FB_ROOT_KINEMATIC) {
        fb_fail(err, FB_EINVAL,
                "%s: the root is kinematic (carried along the clip): there is nothing to "
                "search or follow; use a free or assisted root",
                what);
        return false;
    }
    return true;
}

/* Sorts idx[0..n) by cost, ties by index (so the order is the same every run). */
static void rank(const double* cost, int* idx, int n) {
    for (int i = 1; i < n; i++) {
        const int v = idx[i];
        int j = i - 1;
        while (j >= 0 && (cost[idx[j]] > cost[v] || (cost[idx[j]] == cost[v] && idx[j] > v))) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
}

static void free_sampler(sampler* sp) {
    for (int t = 0; t < MAX_THREADS; t++) {
        fb_sim_destroy(sp->w[t].s);
        fb_ref_destroy(sp->w[t].ctl);
        fb_data_destroy(sp->w[t].d);
        free(sp->w[t].dv);
        free(sp->w[t].laid);
    }
    for (int j = 0; sp->psim && j < sp->o.keep; j++) {
        fb_sim_destroy(sp->psim[j]);
        fb_sim_destroy(sp->nsim[j]);
    }
    fb_sim_destroy(sp->start);
    free(sp->psim);
    free(sp->nsim);
    free(sp->pfall);
    free(sp->nfall);
    free(sp->aseq);
    free(sp->apar);
    free(sp->order);
    free(sp->cand);
    free(sp->cost);
    free(sp->fall);
    free(sp->low);
}

/* Where the kept sequences' simulations are saved for window k's candidates (s): SAVE_MARGIN
 * steps before its start, the start itself for the first. */
static double save_time(const sampler* sp, int k) {
    const double dt = sp->ground->dt;
    const double n = floor(k * sp->o.window / dt + 0.5) - SAVE_MARGIN;
    return n > 0.0 ? n * dt : 0.0;
}

/* The simulations every thread, and the saved ones, need (not with o->replay). */
static fb_status make_sims(sampler* sp, fb_error* err) {
    const int keep = sp->o.keep;
    fb_sim_opts so = sp->so;
    so.control = sp->ground;
    sp->start = fb_sim_create(sp->clip, sp->ch, sp->g, sp->hits, sp->nhit, &so, err);
    if (!sp->start) {
        return err->code;
    }
    sp->psim = calloc((size_t)keep, sizeof(fb_sim*));
    sp->nsim = calloc((size_t)keep, sizeof(fb_sim*));
    sp->pfall = calloc((size_t)keep, sizeof(double));
    sp->nfall = calloc((size_t)keep, sizeof(double));
    sp->aseq = calloc((size_t)keep, sizeof(double*));
    sp->apar = calloc((size_t)keep, sizeof(int));
    if (!sp->psim || !sp->nsim || !sp->pfall || !sp->nfall || !sp->aseq || !sp->apar) {
        return fb_fail(err, FB_ENOMEM, "sampling: out of memory");
    }
    for (int j = 0; j < keep; j++) {
        sp->psim[j] = fb_sim_create(sp->clip, sp->ch, sp->g, sp->hits, sp->nhit, &so, err);
        sp->nsim[j] = sp->psim[j]
                          ? fb_sim_create(sp->clip, sp->ch, sp->g, sp->hits, sp->nhit, &so, err)
                          : NULL;
        if (!sp->nsim[j]) {
            return err->code;
        }
    }
    for (int t = 0; t < sp->nthread; t++) {
        so.control = sp->w[t].ctl;
        sp->w[t].s = fb_sim_create(sp->clip, sp->ch, sp->g, sp->hits, sp->nhit, &so, err);
        if (!sp->w[t].s) {
            return err->code;
        }
    }
    return FB_OK;
}

/* The kept sequences' simulations saved before window k (not with o->replay): sequence j
 * (sp->aseq[j], n of them) from the saved simulation sp->apar[j] (-1: as made) stepped to k's
 * save time; they become the ones saved before the window. */
static fb_status save_sims(sampler* sp, int k, int n, fb_error* err) {
    sp->job = ADVANCE;
    sp->njob = n;
    sp->ts = save_time(sp, k);
    const fb_status st = run_window(sp, err);
    for (int j = 0; j < n; j++) {
        fb_sim* x = sp->psim[j];
        sp->psim[j] = sp->nsim[j];
        sp->nsim[j] = x;
        sp->pfall[j] = sp->nfall[j];
    }
    sp->npar = n;
    return st;
}

fb_ref* fb_sim_sample(const fb_clip* clip, const fb_character* ch, const fb_gains* g,
                      const fb_hit* hits, int nhit, const fb_sim_opts* opts,
                      const fb_sample_opts* o, void (*progress)(void* user, double fraction),
                      void* user, fb_sample_result* res, fb_error* err) {
    if (!args_ok(clip && ch && g && o, g, "sampling", err) ||
        fb_sample_check_opts(o, err) != FB_OK) {
        return NULL;
    }
    const fb_model* m = ch->model;
    sampler* sp = calloc(1, sizeof *sp);
    fb_ref* own = NULL;
    fb_ref* out = NULL;
    fb_ref* ground = NULL;
    if (!sp) {
        fb_fail(err, FB_ENOMEM, "sampling: out of memory");
        return NULL;
    }
    *sp = (sampler){.clip = clip, .ch = ch, .g = g, .hits = hits, .nhit = nhit, .o = *o};
    sp->so = opts ? *opts : fb_default_sim_opts();
    sp->so.baseline = false; /* the character's own world is what is scored */
    if (!sp->so.ref) {
        own = fb_ref_from_clip(clip, ch, g->rate, sp->so.first, sp->so.last, sp->so.fit, err);
        sp->so.ref = own;
    }
    ground = sp->so.ref ? fb_ref_grounded(m, sp->so.ref, NULL, err) : NULL;
    sp->ground = ground;
    fb_status st = ground ? FB_OK : err->code;
    if (st == FB_OK && !choose_dofs(m, sp)) {
        st = fb_fail(err, FB_EINVAL,
                     "sampling: the character needs a floating root and at "
                     "most %d sampled joint axes",
                     MAX_DOFS);
    }
    if (st == FB_OK) {
        sp->stand = standing_height(m, ground);
        st = isnan(sp->stand) ? fb_fail(err, FB_ENOMEM, "sampling: out of memory") : FB_OK;
    }
    if (st == FB_OK) {
        sp->duration = fb_ref_duration(ground);
        sp->nwin = (int)ceil(sp->duration / o->window - 1e-9);
        sp->nwin = sp->nwin < 1 ? 1 : sp->nwin;
        sp->ps = (size_t)(sp->nwin + 1) * (size_t)sp->nd;
        sp->nthread = o->threads < o->samples ? o->threads : o->samples;
        const size_t nc = (size_t)most_samples(o);
        sp->order = calloc(nc, sizeof(int));
        sp->cand = calloc(nc * sp->ps, sizeof(double));
        sp->cost = calloc(nc, sizeof(double));
        sp->fall = calloc(nc, sizeof(double));
        sp->low = calloc(nc, sizeof(bool));
        bool ok = sp->order && sp->cand && sp->cost && sp->fall && sp->low;
        for (int t = 0; ok && t < sp->nthread; t++) {
            worker* w = &sp->w[t];
            *w = (worker){.sp = sp, .index = t};
            w->ctl = fb_ref_grounded(m, sp->so.ref, NULL, err);
            w->d = fb_data_create(m, NULL, err);
            w->dv = calloc((size_t)m->nv, sizeof(double));
            w->laid = calloc(sp->ps, sizeof(double));
            ok = w->ctl && w->d && w->dv && w->laid;
        }
        out = ok ? fb_ref_grounded(m, sp->so.ref, NULL, err) : NULL;
        st = out ? FB_OK : fb_fail(err, FB_ENOMEM, "sampling: out of memory");
    }
    double* par = NULL; /* the kept sequences (keep x ps) */
    int* idx = NULL;
    int npar = 1;
    /* the kept sequences before each of the last BACKTRACK_WINDOWS + 1 windows, window k's
     * in slot k mod (BACKTRACK_WINDOWS + 1), for going back */
    const int nslot = BACKTRACK_WINDOWS + 1;
    const size_t set = (size_t)o->keep * sp->ps;
    double* ring = NULL;
    int ring_n[BACKTRACK_WINDOWS + 1] = {0};
    double* reach = NULL; /* (nwin + 1): the seconds simulated to reach window k, for progress */
    fb_sample_result r = {.windows = sp->nwin,
                          .dofs = sp->nd,
                          .stand_height = sp->stand,
                          .hit_samples = hit_samples(o)};
    for (int k = 0; st == FB_OK && k < sp->nwin; k++) {
        r.hit_windows += answers_hit(sp, k);
    }
    if (st == FB_OK) {
        par = calloc(set, sizeof(double));
        ring = calloc((size_t)nslot * set, sizeof(double));
        reach = calloc((size_t)sp->nwin + 1, sizeof(double));
        idx = calloc((size_t)most_samples(o), sizeof(int));
        st = par && ring && reach && idx ? FB_OK
                                         : fb_fail(err, FB_ENOMEM, "sampling: out of memory");
    }
    if (st == FB_OK) {
        /* the reference unsampled, to the end: where the search starts from */
        double c;
        bool low;
        (void)apply(sp, &sp->w[0], par, sp->duration);
        st = evaluate(sp, sp->w[0].ctl, 0.0, sp->duration, &c, &r.fall_before, &low, NULL, err);
        r.simulations++;
    }
    if (st == FB_OK && !o->replay) {
        st = make_sims(sp, err);
        if (st == FB_OK) {
            sp->aseq[0] = par;
            sp->apar[0] = -1;
            st = save_sims(sp, 0, 1, err);
        }
    }
    /* progress: how far the search has come, by the seconds its windows' candidates simulate */
    for (int k = 0; st == FB_OK && k < sp->nwin; k++) {
        const double t1 = fmin(sp->duration, (k + 1) * o->window + o->lookahead);
        reach[k + 1] =
            reach[k] + window_samples(sp, k) * (t1 - (o->replay ? 0.0 : save_time(sp, k)));
    }
    int furthest = 0;
    uint64_t rng = o->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    rng = rng ? rng : 1;
    for (int k = 0; st == FB_OK && k < sp->nwin;) {
        memcpy(ring + (size_t)(k % nslot) * set, par, set * sizeof(double));
        ring_n[k % nslot] = npar;
        /* candidates: each kept sequence carried on unchanged, then steps about them in
         * turn; the control points after k + 1 hold k + 1's (the look-ahead's offsets) */
        sp->n = window_samples(sp, k);
        for (int i = 0; i < sp->n; i++) {
            double* c = sp->cand + (size_t)i * sp->ps;
            memcpy(c, par + (size_t)(i % npar) * sp->ps, sp->ps * sizeof(double));
            double* p = c + (size_t)(k + 1) * (size_t)sp->nd;
            for (int j = 0; j < sp->nd; j++) {
                p[j] = i < npar ? p[j - sp->nd]
                                : sp->decay[j] * p[j - sp->nd] + sp->sigma[j] * gauss(&rng);
            }
            for (int kk = k + 2; kk <= sp->nwin; kk++) {
                memcpy(c + (size_t)kk * (size_t)sp->nd, p, (size_t)sp->nd * sizeof(double));
            }
        }
        for (int p = 0, j = 0; p < npar; p++) {
            for (int i = p; i < sp->n; i += npar) {
                sp->order[j++] = i;
            }
        }
        sp->t0 = k * o->window;
        sp->t1 = fmin(sp->duration, (k + 1) * o->window + o->lookahead);
        sp->job = EVALUATE;
        sp->njob = sp->n;
        st = run_window(sp, err);
        r.simulations += sp->n;
        for (int i = 0; i < sp->n; i++) {
            idx[i] = i;
        }
        rank(sp->cost, idx, sp->n);
        const bool fell = !isnan(sp->fall[idx[0]]) || sp->low[idx[0]];
        if (st == FB_OK && fell && k > 0 && r.backtracks < o->backtracks) {
            const int back = k > BACKTRACK_WINDOWS ? k - BACKTRACK_WINDOWS : 0;
            npar = ring_n[back % nslot];
            memcpy(par, ring + (size_t)(back % nslot) * set, set * sizeof(double));
            r.backtracks++;
            k = back;
            /* their simulations again, from the start */
            for (int j = 0; !o->replay && j < npar; j++) {
                sp->aseq[j] = par + (size_t)j * sp->ps;
                sp->apar[j] = -1;
            }
            st = o->replay ? st : save_sims(sp, k, npar, err);
            continue;
        }
        const int nkeep = sp->n < o->keep ? sp->n : o->keep;
        /* the kept ones' simulations before the next window, from their sequences' */
        for (int j = 0; !o->replay && j < nkeep; j++) {
            sp->aseq[j] = sp->cand + (size_t)idx[j] * sp->ps;
            sp->apar[j] = idx[j] % npar;
        }
        if (st == FB_OK && !o->replay && k + 1 < sp->nwin) {
            st = save_sims(sp, k + 1, nkeep, err);
        }
        npar = nkeep;
        for (int i = 0; st == FB_OK && i < npar; i++) {
            memcpy(par + (size_t)i * sp->ps, sp->cand + (size_t)idx[i] * sp->ps,
                   sp->ps * sizeof(double));
        }
        r.cost = sp->cost[idx[0]];
        k++;
        if (progress && st == FB_OK && k > furthest) {
            furthest = k;
            progress(user, reach[k] / reach[sp->nwin]);
        }
    }
    if (st == FB_OK) {
        double c;
        bool low;
        lay(m, ground, o->window, sp->nwin, sp->nd, sp->dof, par, out, sp->w[0].d, sp->w[0].dv);
        st = evaluate(sp, out, 0.0, sp->duration, &c, &r.fall_after, &low, &r.end_hash, err);
        r.simulations++;
    }
    if (st == FB_OK && o->plan) {
        fb_sample_plan* p = o->plan;
        *p = (fb_sample_plan){.window = o->window,
                              .windows = sp->nwin,
                              .dofs = sp->nd,
                              .searched_known = true,
                              .searched_fall = r.fall_after,
                              .searched_end = r.end_hash};
        memcpy(p->dof, sp->dof, (size_t)sp->nd * sizeof(int));
        p->points = malloc(sp->ps * sizeof(double));
        st = p->points ? FB_OK : fb_fail(err, FB_ENOMEM, "sampling: out of memory");
        if (p->points) {
            memcpy(p->points, par, sp->ps * sizeof(double));
        }
    }
    free(par);
    free(ring);
    free(reach);
    free(idx);
    free_sampler(sp);
    free(sp);
    fb_ref_destroy(ground);
    fb_ref_destroy(own);
    if (st != FB_OK) {
        fb_ref_destroy(out);
        return NULL;
    }
    if (res) {
        *res = r;
    }
    fb_ok(err);
    return out;
}

void fb_sample_plan_free(fb_sample_plan* p) {
    if (p) {
        free(p->points);
        p->points = NULL;
    }
}

/* Whether plan fits the search fb_sim_sample would run here: the same axes (the ones
 * choose_dofs picks on this character) and the span's windows. */
static fb_status plan_fits(const fb_model* m, const fb_sample_plan* plan, double duration,
                           fb_error* err) {
    sampler* sp = calloc(1, sizeof *sp);
    if (!sp) {
        return fb_fail(err, FB_ENOMEM, "sampling: out of memory");
    }
    sp->o = fb_default_sample_opts();
    fb_status st = FB_OK;
    if (!choose_dofs(m, sp)) {
        st = fb_fail(err, FB_EINVAL,
                     "sampling: the character needs a floating root and at most %d sampled "
                     "joint axes",
                     MAX_DOFS);
    } else if (plan->dofs != sp->nd || memcmp(plan->dof, sp->dof, (size_t)sp->nd * sizeof(int))) {
        st = fb_fail(err, FB_EINVAL,
                     "sampling plan: its %d joint axes are not the %d this character's search "
                     "offsets (a plan for another character?)",
                     plan->dofs, sp->nd);
    } else if (!(plan->window >= 0.01 && plan->window <= 10.0)) {
        st = fb_fail(err, FB_EINVAL, "sampling plan: window: expected 0.01..10 s, found %g",
                     plan->window);
    } else {
        int nwin = (int)ceil(duration / plan->window - 1e-9);
        nwin = nwin < 1 ? 1 : nwin;
        if (plan->windows != nwin || !plan->points) {
            st = fb_fail(err, FB_EINVAL,
                         "sampling plan: %d windows of %g s, but the span simulated (%.3f s) "
                         "has %d (a plan for other frames?)",
                         plan->windows, plan->window, duration, nwin);
        }
    }
    free(sp);
    return st;
}

fb_ref* fb_sample_plan_reference(const fb_clip* clip, const fb_character* ch, const fb_gains* g,
                                 const fb_sim_opts* opts, const fb_sample_plan* plan,
                                 fb_error* err) {
    if (!args_ok(clip && ch && g && plan, g, "sampling plan", err)) {
        return NULL;
    }
    const fb_model* m = ch->model;
    const fb_sim_opts so = opts ? *opts : fb_default_sim_opts();
    fb_ref* own =
        so.ref ? NULL : fb_ref_from_clip(clip, ch, g->rate, so.first, so.last, so.fit, err);
    const fb_ref* ref = so.ref ? so.ref : own;
    fb_ref* ground = ref ? fb_ref_grounded(m, ref, NULL, err) : NULL;
    fb_ref* out = NULL;
    fb_data* d = NULL;
    double* dv = NULL;
    fb_status st = ground ? plan_fits(m, plan, fb_ref_duration(ground), err) : err->code;
    if (st == FB_OK) {
        out = fb_ref_grounded(m, ref, NULL, err);
        d = out ? fb_data_create(m, NULL, err) : NULL;
        dv = calloc((size_t)m->nv, sizeof(double));
        st = out && d && dv ? FB_OK : fb_fail(err, FB_ENOMEM, "sampling plan: out of memory");
    }
    if (st == FB_OK) {
        lay(m, ground, plan->window, plan->windows, plan->dofs, plan->dof, plan->points, out, d,
            dv);
        fb_ok(err);
    } else {
        fb_ref_destroy(out);
        out = NULL;
    }
    free(dv);
    fb_data_destroy(d);
    fb_ref_destroy(ground);
    fb_ref_destroy(own);
    return out;
}
