/* The tracked walk hit by two balls, timed (see bench_simulate.h). Uses the public API only. */
#include "bench_simulate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FB_DATA_DIR
#define FB_DATA_DIR "data"
#endif

/* The scene: the simulation rate and the two hits (fb_hit_parse specs; mass 0.45 kg, radius
 * 0.11 m and 10 m/s are the defaults, written out for the reader). */
#define SIM_RATE 240.0
#define NBALL 2
static const char* const HIT_SPECS[NBALL] = {
    "time=1.5,target=LeftElbow,speed=10,mass=0.45,radius=0.11,from=left",
    "time=3.0,target=Chest,speed=10,mass=0.45,radius=0.11,from=front",
};

static const char* const PART_NAMES[BSIM_NPART] = {"step", "dynamics", "K build", "PGS",
                                                   "collision"};

const char* bench_sim_part_name(bench_sim_part p) {
    return (p >= 0 && p < BSIM_NPART) ? PART_NAMES[p] : "?";
}

static const char* const PHASE_NAMES[BSIM_NPHASE] = {"standing", "fallen", "asleep"};

const char* bench_sim_phase_name(bench_sim_phase p) {
    return (p >= 0 && p < BSIM_NPHASE) ? PHASE_NAMES[p] : "?";
}

bench_sim_options bench_sim_default_options(void) {
    return (bench_sim_options){.root = FB_ROOT_KINEMATIC, .hits = true};
}

/* Everything shared by the runs of one root mode. */
typedef struct sim_setup {
    fb_clip* clip;
    fb_character* ch;
    fb_gains g;
    int nball;
    fb_hit hit[NBALL];
    fb_ref* control; /* a plan's reference (bench_sim_options.plan), or NULL */
} sim_setup;

static void setup_destroy(sim_setup* s) {
    fb_ref_destroy(s->control);
    fb_character_destroy(s->ch);
    fb_clip_destroy(s->clip);
}

int bench_load_character(const char* clip_path, fb_clip** clip, fb_character** ch,
                         fb_error* err) {
    *ch = NULL;
    *clip = NULL;
    fb_rules* rules = malloc(sizeof *rules); /* large; only read while building */
    if (!rules) {
        snprintf(err->msg, sizeof err->msg, "bench: out of memory");
        return -1;
    }
    *clip = fb_clip_load(clip_path, NULL, NULL, err);
    if (*clip && fb_rules_load(FB_DATA_DIR "/character_rules.json", rules, err) == FB_OK) {
        fb_build_opts bo = fb_default_build_opts();
        bo.rules = rules;
        *ch = fb_character_build(*clip, &bo, err);
    }
    free(rules);
    if (!*ch) {
        fb_clip_destroy(*clip);
        *clip = NULL;
        return -1;
    }
    return 0;
}

/* The clip, its character (bundled rules), the gains of `gains init` with the accel controller
 * and the root mode, the hits (none with hits off) and, with a plan, the reference it lays on
 * the clip's (fb_sample_plan_reference, as `simulate --sample-load`: untimed, as the fit is). */
static int setup_create(sim_setup* s, const char* clip, fb_root_mode root, bool hits,
                        const char* plan, fb_error* err) {
    memset(s, 0, sizeof *s);
    int rc = -1;
    fb_ref* ref = NULL;
    if (bench_load_character(clip, &s->clip, &s->ch, err) != 0) {
        return -1;
    }
    ref = fb_ref_from_clip(s->clip, s->ch, SIM_RATE, 0, 0, NULL, err);
    if (!ref || fb_gains_init(s->ch->model, ref, &s->g, err) != FB_OK) {
        goto done;
    }
    s->g.rate = SIM_RATE;
    s->g.controller = FB_CTRL_ACCEL;
    s->g.root.mode = root;
    s->nball = hits ? NBALL : 0;
    rc = 0;
    for (int k = 0; k < s->nball && rc == 0; k++) {
        rc = fb_hit_parse(HIT_SPECS[k], &s->hit[k], err) == FB_OK ? 0 : -1;
    }
    if (rc == 0 && plan) {
        fb_sample_plan p;
        const fb_sim_opts so = fb_default_sim_opts();
        rc = -1;
        if (fb_sample_plan_load(plan, s->ch->model, &p, err) == FB_OK) {
            s->control = fb_sample_plan_reference(s->clip, s->ch, &s->g, &so, &p, err);
            fb_sample_plan_free(&p);
            rc = s->control ? 0 : -1;
        }
    }
done:
    fb_ref_destroy(ref);
    if (rc != 0) {
        setup_destroy(s);
    }
    return rc;
}

static unsigned long long fnv1a(const void* p, size_t n) {
    const unsigned char* b = p;
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ull;
    }
    return h;
}

typedef struct run_out {
    double wall;
    double part[BSIM_NPART]; /* s, totals */
    long steps, substeps, halvings, impacts;
    double contacts, rows, sweeps; /* sums over steps */
    int phase_steps[BSIM_NPHASE];
    double phase_wall[BSIM_NPHASE]; /* s */
    fb_fall fall;
    int touched[NBALL];
    double mpjpe_sum, mpjpe_max;
    int frames;
    double peak_err[NBALL];
    unsigned long long q_hash;
} run_out;

/* The phase the step just taken belongs to. */
static bench_sim_phase phase_of(fb_sim* sim) {
    if (fb_tracker_fall(fb_sim_tracker(sim)).cause == FB_FALL_NONE) {
        return BSIM_STANDING;
    }
    return fb_world_asleep(fb_sim_world(sim), 0) ? BSIM_ASLEEP : BSIM_FALLEN;
}

/* One run over the whole clip: fb_sim_create untimed, then fb_sim_step to the end timed (each
 * step by itself too, for its phase). */
static int run_once(const sim_setup* s, run_out* out, fb_error* err) {
    memset(out, 0, sizeof *out);
    fb_sim_opts so = fb_default_sim_opts();
    so.control = s->control;
    fb_sim* sim = fb_sim_create(s->clip, s->ch, &s->g, s->hit, s->nball, &so, err);
    if (!sim) {
        return -1;
    }
    fb_world* w = fb_sim_world(sim);
    fb_world_reset_stats(w);
    int rc = -1;
    const double t0 = bench_now_s();
    double t_prev = t0;
    while (!fb_sim_done(sim)) {
        if (fb_sim_step(sim, err) != FB_OK) {
            goto done;
        }
        const double t_now = bench_now_s();
        const bench_sim_phase ph = phase_of(sim);
        out->phase_steps[ph]++;
        out->phase_wall[ph] += t_now - t_prev;
        t_prev = t_now;
        const fb_world_stats* st = fb_world_get_stats(w);
        out->steps++;
        out->contacts += st->contacts;
        out->rows += st->rows;
        out->sweeps += st->iterations;
    }
    out->wall = bench_now_s() - t0;
    const fb_world_stats* st = fb_world_get_stats(w);
    out->part[BSIM_TOTAL] = st->t_total;
    out->part[BSIM_DYNAMICS] = st->t_dynamics;
    out->part[BSIM_BUILD] = st->t_build;
    out->part[BSIM_SOLVE] = st->t_solve;
    out->part[BSIM_COLLISION] = st->t_collision;
    out->substeps = st->substeps;
    out->halvings = st->halvings;
    out->impacts = st->impacts;
    out->fall = fb_tracker_fall(fb_sim_tracker(sim));
    int nf = 0;
    const fb_sim_frame* fr = fb_sim_frames(sim, &nf);
    for (int f = 0; f < nf; f++) {
        out->mpjpe_sum += fr[f].metrics.mpjpe;
        out->mpjpe_max = fmax(out->mpjpe_max, fr[f].metrics.mpjpe);
    }
    out->frames = nf;
    const fb_hit_result* hr = fb_sim_hits(sim);
    for (int k = 0; k < s->nball; k++) {
        out->touched[k] = hr[k].touched;
        out->peak_err[k] = hr[k].peak_err;
    }
    out->q_hash = fnv1a(fb_world_data(w, 0)->q, (size_t)s->ch->model->nq * sizeof(double));
    rc = 0;
done:
    fb_sim_destroy(sim);
    return rc;
}

static int cmp_run(const void* a, const void* b) {
    const double x = ((const run_out*)a)->wall, y = ((const run_out*)b)->wall;
    return (x > y) - (x < y);
}

/* The result of one setup's runs r[0..runs-1] (sorted here by wall time). */
static void summarise(const sim_setup* s, const char* clip, run_out* r, int runs,
                      bench_sim_result* out) {
    memset(out, 0, sizeof *out);
    const run_out* first = &r[0];
    out->clip = clip;
    out->root = s->g.root.mode;
    out->hits = s->nball > 0;
    out->nball = s->nball;
    out->nbody = s->ch->model->nbody;
    out->nv = s->ch->model->nv;
    out->steps = (int)first->steps;
    out->sim_seconds = (double)first->steps / SIM_RATE;
    out->runs = runs;
    double rtf[BENCH_SIM_MAX_RUNS];
    for (int k = 0; k < runs; k++) {
        out->wall[k] = r[k].wall;
        out->rtf[k] = rtf[k] = out->sim_seconds / r[k].wall;
    }
    out->rtf_stat = bench_stats(rtf, runs);
    out->contacts = first->contacts / (double)first->steps;
    out->rows = first->rows / (double)first->steps;
    out->sweeps = first->sweeps / (double)first->steps;
    out->substeps = first->substeps;
    out->halvings = first->halvings;
    out->impacts = first->impacts;
    out->fall_time = first->fall.cause == FB_FALL_NONE ? NAN : first->fall.time;
    out->fall_cause = (int)first->fall.cause;
    out->mpjpe_mean = first->mpjpe_sum / (first->frames ? first->frames : 1);
    out->mpjpe_max = first->mpjpe_max;
    out->q_hash = first->q_hash;
    for (int k = 0; k < s->nball; k++) {
        out->touched[k] = first->touched[k];
        out->peak_err[k] = first->peak_err[k];
    }
    /* the split of the median run (by wall time) */
    qsort(r, (size_t)runs, sizeof *r, cmp_run);
    const run_out* med = &r[runs / 2];
    for (int p = 0; p < BSIM_NPART; p++) {
        out->part[p] = med->part[p] / (double)med->steps * 1e6;
    }
    out->rest = (med->wall - med->part[BSIM_TOTAL]) / (double)med->steps * 1e6;
    for (int p = 0; p < BSIM_NPHASE; p++) {
        out->phase_steps[p] = med->phase_steps[p];
        out->phase_us[p] = med->phase_steps[p] > 0
                               ? med->phase_wall[p] / med->phase_steps[p] * 1e6
                               : 0.0;
    }
}

int bench_simulate_run(const bench_options* opt, const bench_sim_options* so, const char* clip,
                       bench_sim_result out[2], fb_error* err) {
    const char* path = clip ? clip : FB_DATA_DIR "/131_01.bvh";
    /* the setups: the root asked for, then (when it is not kinematic) the kinematic reference */
    const int nset = so->root == FB_ROOT_KINEMATIC ? 1 : 2;
    sim_setup s[2];
    int made = 0;
    for (; made < nset; made++) {
        const fb_root_mode root = made == 0 ? so->root : FB_ROOT_KINEMATIC;
        if (setup_create(&s[made], path, root, so->hits, made == 0 ? so->plan : NULL, err) != 0) {
            break;
        }
    }
    const int runs = opt->rounds < BENCH_SIM_MAX_RUNS ? opt->rounds : BENCH_SIM_MAX_RUNS;
    run_out* r = made == nset ? calloc((size_t)nset * ((size_t)runs + 1), sizeof *r) : NULL;
    int rc = -1;
    if (made == nset && !r) {
        snprintf(err->msg, sizeof err->msg, "bench simulate: out of memory");
    }
    for (int k = -1; r && k < runs; k++) { /* run -1 warms up */
        for (int i = 0; i < nset; i++) { /* interleaved: A, B, A, B ... */
            if (!opt->quiet) {
                fprintf(stderr, "\rbench simulate: run %d/%d%s", k + 1, runs,
                        nset > 1 ? (i == 0 ? " (A)" : " (B)") : "");
                fflush(stderr);
            }
            run_out* dst = &r[(size_t)i * ((size_t)runs + 1) + (size_t)(k < 0 ? runs : k)];
            if (run_once(&s[i], dst, err) != 0) {
                goto done;
            }
        }
    }
    if (!r) {
        goto done;
    }
    if (!opt->quiet) {
        fprintf(stderr, "\r%40s\r", "");
    }
    for (int i = 0; i < nset; i++) {
        summarise(&s[i], path, r + (size_t)i * ((size_t)runs + 1), runs, &out[i]);
    }
    rc = 0;
done:
    free(r);
    for (int i = 0; i < made; i++) {
        setup_destroy(&s[i]);
    }
    return rc;
}
