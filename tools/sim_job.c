/* One simulate job: load, fit, simulate, write every output whole or not at all. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "sim_job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "gltf.h"
#include "sim_report.h"

void sim_job_init(sim_job* j) {
    memset(j, 0, sizeof *j);
    clip_args_init(&j->clip);
    j->controller = -1;
    j->root = -1;
    j->anchor = -1;
    j->strength = -1;
    j->sample_hit_scale = -1.0;
    j->sample_pull = -1.0;
    j->sample_step = -1.0;
    j->sample_root_scale = -1.0;
    j->sample_height_scale = -1.0;
    j->sample_upright = -1.0;
}

bool sim_job_parse_frames(const char* val, sim_job* j) {
    char* end = NULL;
    const long a = val ? strtol(val, &end, 10) : -1;
    long b = -1;
    if (end && *end == ':') {
        char* end2 = NULL;
        b = strtol(end + 1, &end2, 10);
        end = end2;
    }
    if (!val || !end || *end != '\0' || a < 0 || b < 0 || (b != 0 && b <= a + 1) ||
        b > 100000000L) {
        return false;
    }
    j->first = (int)a;
    j->last = (int)b;
    return true;
}

/* OUT without a trailing ".bvh" (any case). */
static void out_base(const char* out, char* buf, size_t cap) {
    const size_t n = strlen(out);
    const size_t keep = (n > 4 && strcasecmp(out + n - 4, ".bvh") == 0) ? n - 4 : n;
    snprintf(buf, cap, "%.*s", (int)keep, out);
}

int sim_job_outputs(const sim_job* j, char bufs[SIM_JOB_MAX_OUTPUTS][1024]) {
    char base[1024];
    out_base(j->out, base, sizeof base);
    int n = 0;
    snprintf(bufs[n++], 1024, "%s", j->out);
    snprintf(bufs[n++], 1024, "%.1000s.balls.json", base);
    for (int k = 0; k < j->nreport && k < 2; k++) {
        snprintf(bufs[n++], 1024, "%s", j->report[k]);
    }
    if (j->gltf) {
        snprintf(bufs[n++], 1024, "%.1000s.gltf", base);
    }
    if (j->sample_save) {
        snprintf(bufs[n++], 1024, "%s", j->sample_save);
    }
    return n;
}

/* The search's options as the job asks them: its samples, the library's defaults where an
 * option was not given (the job's field below 0), its hit scale (0: not counted) and seed; what
 * the search runs and what the report names. */
static fb_sample_opts job_sample_opts(const sim_job* j) {
    fb_sample_opts o = fb_default_sample_opts();
    o.pull = j->sample_pull >= 0.0 ? j->sample_pull : o.pull;
    o.sigma_joint = j->sample_step >= 0.0 ? j->sample_step : o.sigma_joint;
    o.root_scale = j->sample_root_scale >= 0.0 ? j->sample_root_scale : o.root_scale;
    o.height_scale = j->sample_height_scale >= 0.0 ? j->sample_height_scale : o.height_scale;
    o.upright = j->sample_upright >= 0.0 ? j->sample_upright : o.upright;
    o.samples = j->sample;
    o.hit_scale = j->sample_hit_scale >= 0.0 ? j->sample_hit_scale : o.hit_scale;
    o.hit_samples = j->sample_hit;
    o.seed = j->seed;
    return o;
}

bool sim_job_sampling_ok(const sim_job* j, const char** field, char* msg, size_t cap) {
    const char* why = NULL;
    const char* key = NULL;
    if (j->sample_load && (j->sample > 0 || j->sample_save)) {
        why = "--sample-load follows a plan without searching: not with --sample or "
              "--sample-save";
        key = "sample_load";
    }
    /* the options that weigh, shape or keep a search: each needs one */
    const struct {
        bool given;
        const char* key;
        const char* why;
    } need[] = {{j->sample_hit_scale >= 0.0, "sample_hit_scale",
                 "--sample-hit-scale weighs the search of --sample N: give --sample too"},
                {j->sample_hit > 0, "sample_hit",
                 "--sample-hit shapes the search of --sample N: give --sample too"},
                {j->sample_pull >= 0.0, "sample_pull",
                 "--sample-pull shapes the search of --sample N: give --sample too"},
                {j->sample_step >= 0.0, "sample_step",
                 "--sample-step shapes the search of --sample N: give --sample too"},
                {j->sample_root_scale >= 0.0, "sample_root_scale",
                 "--sample-root-scale weighs the search of --sample N: give --sample too"},
                {j->sample_height_scale >= 0.0, "sample_height_scale",
                 "--sample-height-scale weighs the search of --sample N: give --sample too"},
                {j->sample_upright >= 0.0, "sample_upright",
                 "--sample-upright shapes the search of --sample N: give --sample too"},
                {j->sample_save != NULL, "sample_save",
                 "--sample-save keeps what --sample N finds: give --sample too"}};
    for (size_t k = 0; !why && j->sample == 0 && k < sizeof need / sizeof need[0]; k++) {
        why = need[k].given ? need[k].why : NULL;
        key = need[k].given ? need[k].key : NULL;
    }
    if (field) {
        *field = key;
    }
    if (why) {
        snprintf(msg, cap, "%s", why);
    }
    return why == NULL;
}

static bool ends_with(const char* s, const char* suffix) {
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

typedef struct progress_ctx {
    FILE* log;
    const char* tag;
    double duration;
    int last_percent;
    double start; /* the wall clock when the work began (sampling's time left) */
} progress_ctx;

static void on_progress(void* user, double fraction) {
    progress_ctx* p = user;
    const int percent = (int)floor(100.0 * fraction);
    if (percent / 5 != p->last_percent / 5) {
        fprintf(p->log, "\r%s: simulating %3d%% (%.2f of %.2f s)", p->tag, percent,
                fraction * p->duration, p->duration);
        fflush(p->log);
        p->last_percent = percent;
    }
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A search runs for minutes: the share done and, once a few windows are behind it, the time
 * left at the pace so far (windows cost about the same; a step back makes the estimate grow). */
static void on_sample_progress(void* user, double fraction) {
    progress_ctx* p = user;
    const int percent = (int)floor(100.0 * fraction);
    if (percent != p->last_percent) {
        const double spent = wall_s() - p->start;
        if (percent >= 3 && percent < 100) {
            fprintf(p->log, "\r%s: sampling %3d%%, about %.0f s left   ", p->tag, percent,
                    spent * (1.0 - fraction) / fraction);
        } else {
            fprintf(p->log, "\r%s: sampling %3d%%                      ", p->tag, percent);
        }
        fflush(p->log);
        p->last_percent = percent;
    }
}

/* --sample: the search for a reference the character can follow (fb_sim_sample) into *ctl;
 * its summary on the log. */
static int job_sample(const sim_job* j, const fb_clip* clip, const fb_character* ch,
                      const fb_gains* g, const fb_hit* hits, int nhit, const fb_sim_opts* so,
                      fb_ref** ctl, fb_sample_result* res, FILE* log, const char* tag) {
    fb_error err;
    if (g->root.mode == FB_ROOT_KINEMATIC) {
        fprintf(log,
                "%s: --sample: the root is kinematic (carried along the clip); sampling "
                "needs --root free or --root assisted\n",
                tag);
        return EXIT_USAGE;
    }
    fb_sample_opts o = job_sample_opts(j);
    /* the default share kept, 10 of 40; at least one kept and, from 2 samples on, one drawn
     * (keeping all N would carry the same sequences on and draw nothing) */
    o.keep = j->sample >= 4 * o.keep ? o.keep : (j->sample >= 4 ? j->sample / 4 : 1);
    o.threads = j->threads > 0 ? j->threads : 1;
    if (j->sample_hit > 0 && j->sample_hit < o.keep) {
        fprintf(log,
                "%s: --sample-hit %d: expected at least the %d sequences the search keeps (a "
                "quarter of --sample, at most 10)\n",
                tag, j->sample_hit, o.keep);
        return EXIT_USAGE;
    }
    if (j->sample_hit > 0 && nhit == 0) {
        fprintf(log, "%s: note: --sample-hit: no hits, every window searched with --sample's %d\n",
                tag, j->sample);
    }
    fb_sample_plan plan = {0};
    o.plan = j->sample_save ? &plan : NULL;
    const double t0 = wall_s();
    progress_ctx pc = {log, tag, 0.0, -1, t0};
    *ctl = fb_sim_sample(clip, ch, g, hits, nhit, so, &o, j->progress ? on_sample_progress : NULL,
                         &pc, res, &err);
    if (j->progress) {
        fputc('\n', log);
    }
    if (!*ctl) {
        fprintf(log, "%s: %s\n", tag, err.msg);
        return exit_code_for(err.code);
    }
    char before[48], after[48], struck[160] = "";
    if (nhit > 0 && o.hit_scale > 0.0) {
        snprintf(struck, sizeof struck,
                 ", each struck body's deviation from %g to %g s after its hit over %g m "
                 "(its excess beyond %g m from %g s weighed %g times)",
                 FB_HIT_BACK, FB_HIT_HELD, o.hit_scale, FB_HIT_LINE * so->recover_tol,
                 FB_HIT_LINE_FROM, FB_HIT_LINE_WEIGHT);
    }
    char hitwin[96] = "";
    if (res->hit_windows > 0 && res->hit_samples != o.samples) {
        if (res->hit_windows == 1) {
            snprintf(hitwin, sizeof hitwin, " (%d in the one that answers a hit)",
                     res->hit_samples);
        } else {
            snprintf(hitwin, sizeof hitwin, " (%d in the %d that answer a hit)", res->hit_samples,
                     res->hit_windows);
        }
    }
    fprintf(log,
            "%s: sampling: %d window%s of %.2f s, %d simulation%s each%s, %ld in all (%d time%s "
            "back), on %d thread%s in %.1f s wall; %d joint axes offset (steps of %g rad, the "
            "joints' pulled back by %g a window, the root's distance from the path scored "
            "over %g m and its drop below the clip's height (up to its standing %.3f m) over "
            "%g m, below %g of that height a fall%s); tracking the clip it %s, tracking the "
            "sampled reference it %s\n",
            tag, res->windows, res->windows == 1 ? "" : "s", o.window, o.samples,
            o.samples == 1 ? "" : "s", hitwin, res->simulations, res->backtracks,
            res->backtracks == 1 ? "" : "s", o.threads, o.threads == 1 ? "" : "s", wall_s() - t0,
            res->dofs, o.sigma_joint, o.pull, o.root_scale, res->stand_height, o.height_scale,
            o.upright, struck, sim_fall_words(res->fall_before, before, sizeof before),
            sim_fall_words(res->fall_after, after, sizeof after));
    int rc = EXIT_OK;
    if (j->sample_save) {
        if (fb_sample_plan_save(j->sample_save, ch->model, j->clip.clip, &plan, &err) != FB_OK) {
            fprintf(log, "%s: %s\n", tag, err.msg);
            rc = exit_code_for(err.code);
        } else {
            fprintf(log, "%s: wrote %s (the search's offsets: --sample-load follows them)\n", tag,
                    j->sample_save);
        }
    }
    fb_sample_plan_free(&plan);
    return rc;
}

/* --sample-load: the reference of the offsets a search kept in a file (fb_sample_plan_load,
 * fb_sample_plan_reference) into *ctl, without searching. */
static int job_sample_load(const sim_job* j, const fb_clip* clip, const fb_character* ch,
                           const fb_gains* g, const fb_sim_opts* so, fb_ref** ctl,
                           fb_sample_plan* followed, FILE* log, const char* tag) {
    fb_error err;
    fb_sample_plan plan = {0};
    fb_status st = fb_sample_plan_load(j->sample_load, ch->model, &plan, &err);
    if (st == FB_OK) {
        *ctl = fb_sample_plan_reference(clip, ch, g, so, &plan, &err);
        st = *ctl ? FB_OK : err.code;
    }
    if (st != FB_OK) {
        fprintf(log, "%s: --sample-load: %s\n", tag, err.msg);
    } else {
        fprintf(log,
                "%s: sampling: following the offsets in %s (%d windows of %.2f s, %d joint "
                "axes); no search\n",
                tag, j->sample_load, plan.windows, plan.window, plan.dofs);
    }
    fb_sample_plan_free(&plan);
    *followed = plan; /* its search's end, to compare the run with (plan_as_searched) */
    return st == FB_OK ? EXIT_OK : exit_code_for(st);
}

/* Whether the run that followed plan is the walk its search found, bit for bit, said on the
 * log: 1 it is, -1 it is not; 0 when the plan does not say how its search ended (saved
 * before stop 50). */
static int plan_as_searched(const fb_sim* s, const fb_sample_plan* plan, FILE* log,
                            const char* tag) {
    char was[64], is[64];
    const int same = fb_sample_plan_as_searched(plan, s, is, was, sizeof is);
    if (same > 0) {
        fprintf(log, "%s: the walk the plan's search found, bit for bit: it %s\n", tag, is);
    } else if (same < 0) {
        fprintf(log,
                "%s: note: not the walk the plan's search found (that one %s; this one %s): "
                "other hits, gains or options than the search's, or another build's "
                "rounding, and a searched walk holds only bit for bit (docs/CONTROL.md "
                "section 11); --sample N searches again\n",
                tag, was, is);
    }
    return same;
}

static double norm3(fb_v3 v) {
    return sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

/* "back within 2 cm after 0.35 s", or not back (a recovery time, NaN: not within the clip) */
static void back_text(double t, char* buf, size_t cap) {
    const double tol_cm = 100.0 * fb_default_sim_opts().recover_tol;
    if (isnan(t)) {
        snprintf(buf, cap, "not back within %.0f cm by the clip's end", tol_cm);
    } else {
        snprintf(buf, cap, "back within %.0f cm after %.2f s", tol_cm, t);
    }
}

/* "held within 2 cm from 1.62 s (through 2.50 s after the hit)": fb_hit_result.hold_time */
static void hold_text(double t, double window, char* buf, size_t cap) {
    const double tol_cm = 100.0 * fb_default_sim_opts().recover_tol;
    if (isnan(t)) {
        snprintf(buf, cap, "not within %.0f cm %.2f s after the hit", tol_cm, window);
    } else if (t == 0.0) {
        snprintf(buf, cap, "within %.0f cm throughout the %.2f s after the hit", tol_cm, window);
    } else {
        snprintf(buf, cap, "held within %.0f cm from %.2f s (through %.2f s after the hit)", tol_cm,
                 t, window);
    }
}

static fb_v3 neg3(fb_v3 v) {
    return (fb_v3){-v.x, -v.y, -v.z};
}

/* The window random hits are drawn from (s from the first simulated frame): from
 * RANDOM_T_FIRST (every ball has left by then) to RANDOM_RECOVERY before the end, to see the
 * recovery; on a clip too short for that to hold n hits FB_HITS_MIN_GAP apart, to RANDOM_TAIL
 * before the end. False when even that cannot hold them (t_lo, t_hi: that window). */
#define RANDOM_T_FIRST 0.25
#define RANDOM_RECOVERY 1.0
#define RANDOM_TAIL 0.1

static bool random_window(double dur, int n, double* t_lo, double* t_hi) {
    *t_lo = RANDOM_T_FIRST;
    *t_hi = dur - RANDOM_RECOVERY;
    if (fb_hits_random_max(*t_lo, *t_hi) >= n) {
        return true;
    }
    *t_hi = dur - RANDOM_TAIL;
    return fb_hits_random_max(*t_lo, *t_hi) >= n;
}

/* The gains: the file, or those of `gains init` for this clip at the job's rate, from the
 * reference fitted for them (kept in *ref: the simulation's own, fitted once); then the job's
 * overrides. */
static int job_gains(const sim_job* j, const fb_clip* clip, const fb_character* ch, fb_gains* g,
                     fb_ref** ref_out, FILE* log, const char* tag) {
    fb_error err;
    if (j->gains && j->strength >= 0) {
        fprintf(log,
                "%s: --strength %s: the torque limits are the gains file's (--gains %s); "
                "--strength makes the default gains' (or: gains init --strength)\n",
                tag, fb_strength_name((fb_strength)j->strength), j->gains);
        return EXIT_USAGE;
    }
    if (j->gains) {
        if (fb_gains_load(j->gains, g, &err) != FB_OK) {
            fprintf(log, "%s: %s\n", tag, err.msg);
            return exit_code_for(err.code);
        }
        if (j->rate > 0.0) {
            g->rate = j->rate;
        }
    } else {
        fb_ref* ref = fb_ref_from_clip(clip, ch, j->rate > 0.0 ? j->rate : 240.0, j->first,
                                       j->last, NULL, &err);
        const fb_strength who = j->strength >= 0 ? (fb_strength)j->strength : FB_STRENGTH_MEAN;
        const fb_status s = ref ? fb_gains_init_strength(ch->model, ref, who, g, &err) : err.code;
        *ref_out = ref; /* the simulation's reference too: same clip, frames, rate and fit */
        if (s != FB_OK) {
            fprintf(log, "%s: %s\n", tag, err.msg);
            return exit_code_for(s);
        }
    }
    if (j->controller >= 0) {
        g->controller = (fb_controller)j->controller;
    }
    if (j->anchor >= 0) {
        g->root.anchor = (fb_root_anchor)j->anchor;
    }
    if (j->root >= 0) {
        g->root.mode = (fb_root_mode)j->root;
    }
    return EXIT_OK;
}

/* Writes every output; stops at the first failure (the files written before it stay: each is
 * whole). */
static int write_outputs(const sim_job* j, const fb_sim* s, const fb_character* ch,
                         const fb_gains* g, const fb_sample_result* sample, int as_searched,
                         const sim_residual* residual, const double* residual_pct, FILE* log,
                         const char* tag) {
    fb_error err;
    char paths[SIM_JOB_MAX_OUTPUTS][1024];
    /* the plan (the last, when kept) was written after the search */
    const int np = sim_job_outputs(j, paths) - (j->sample_save ? 1 : 0);
    fb_motion* mo = j->gltf ? fb_sim_motion(s, &err) : NULL;
    fb_status st = j->gltf && !mo ? err.code : fb_sim_write_bvh(s, paths[0], &err);
    if (st == FB_OK) {
        st = sim_balls_json(s, paths[1], &err);
    }
    const sim_report_info info = {.clip_path = j->clip.clip,
                                  .gains_path = j->gains,
                                  .strength = j->strength,
                                  .gains = g,
                                  .ch = ch,
                                  .sample = sample,
                                  .sample_opts = job_sample_opts(j),
                                  .sample_plan = j->sample_load ? j->sample_load : j->sample_save,
                                  .plan_as_searched = as_searched,
                                  .residual = residual,
                                  .residual_pct = residual_pct};
    for (int k = 0; st == FB_OK && k < j->nreport; k++) {
        st = ends_with(j->report[k], ".json") ? sim_report_json(s, &info, j->report[k], &err)
                                              : sim_report_html(s, &info, j->report[k], &err);
    }
    if (st == FB_OK && j->gltf) {
        const int nb = fb_sim_nball(s);
        int nf = 0;
        (void)fb_sim_frames(s, &nf);
        double radius[FB_SIM_MAX_BALLS];
        for (int k = 0; k < nb; k++) {
            radius[k] = fb_sim_hits(s)[k].hit.radius;
        }
        /* the balls where the clip is: moved like it (the job's balls are all in use) */
        const fb_v3 off = fb_sim_export_offset(s);
        double* balls = malloc((size_t)nf * (size_t)nb * 3 * sizeof(double) + 1);
        for (int f = 0; balls && f < nf; f++) {
            for (int k = 0; k < nb; k++) {
                const double* p = fb_sim_frame_balls(s, f) + 3 * k;
                double* q = balls + ((size_t)f * (size_t)nb + (size_t)k) * 3;
                q[0] = p[0] + off.x;
                q[1] = p[1] + off.y;
                q[2] = p[2] + off.z;
            }
        }
        st = balls ? gltf_write(paths[np - 1], ch->model, mo, nb, radius, balls, &err)
                   : FB_ENOMEM;
        if (!balls) {
            snprintf(err.msg, sizeof err.msg, "%s: out of memory", paths[np - 1]);
        }
        free(balls);
    }
    fb_motion_destroy(mo);
    if (st != FB_OK) {
        fprintf(log, "%s: %s\n", tag, err.msg);
        return exit_code_for(st);
    }
    for (int k = 0; k < np; k++) {
        fprintf(log, "%s: wrote %s\n", tag, paths[k]);
    }
    return EXIT_OK;
}

/* What the reference changed of the clip: its placement on the ground and the toes turned out
 * of it, a line each; the capture glitches repaired, one line for them all (the per-joint
 * lines are many on long clips). */
static void print_ref_notes(const fb_ref* ref, const fb_model* m, FILE* log, const char* tag) {
    for (int k = 0; k < ref->nwarn && k < FB_CLIP_MAX_WARN; k++) {
        if (!strstr(ref->warn[k], "capture glitch")) {
            fprintf(log, "%s: note: %s\n", tag, ref->warn[k]);
        }
    }
    int joints = 0;
    for (int b = 0; b < m->nbody; b++) {
        joints += ref->repaired[b] > 0;
    }
    if (ref->nrepaired > 0) {
        fprintf(log, "%s: note: capture glitches repaired: %d samples in %d joints\n", tag,
                ref->nrepaired, joints);
    }
}

/* What the grounding did to the reference a free or an assisted root tracks (fb_ref_grounded,
 * docs/CONTROL.md §7: its feet put on the ground, the root lowered, the frames smoothed), its
 * own lines; nothing for a kinematic root, which tracks the clip's fit. */
static void print_grounded_notes(const fb_sim* s, FILE* log, const char* tag) {
    const fb_ref* ctl = fb_sim_control_ref(s);
    for (int k = 0; ctl != fb_sim_ref(s) && k < ctl->nwarn && k < FB_CLIP_MAX_WARN; k++) {
        if (strncmp(ctl->warn[k], "grounded:", 9) == 0) {
            fprintf(log, "%s: note: %s\n", tag, ctl->warn[k]);
        }
    }
}

/* Axes the terminal names among those that sat at their torque limits. */
#define SUMMARY_BOUND_AXES 3

/* The summary lines on the terminal; res: the run's ground residual (NULL: none). */
static void print_summary(const fb_sim* s, const fb_model* m, const fb_gains* g, double wall,
                          bool searched, const sim_residual* res, FILE* log, const char* tag) {
    sim_summary sm;
    sim_summarize(s, m, &sm);
    fprintf(log, "%s: %.2f s simulated in %.2f s wall (%.1fx real time); MPJPE mean %.2f cm, "
            "max %.2f cm at %.2f s; torque limit bound in %d of %d frames\n",
            tag, sm.duration, wall, wall > 0.0 ? sm.duration / wall : 0.0,
            100.0 * sm.mpjpe_mean, 100.0 * sm.mpjpe_max, sm.mpjpe_max_time, sm.limit_frames,
            sm.nframe);
    if (sm.nbound > 0) {
        /* which axes: a joint too weak for the clip shows here (sim_bound) */
        fprintf(log, "%s: the axes most often at their torque limit:", tag);
        for (int k = 0; k < sm.nbound && k < SUMMARY_BOUND_AXES; k++) {
            const sim_bound* b = &sm.bound[k];
            char label[FB_NAME_MAX + 16];
            fb_dof_label(m, b->dof, label, sizeof label);
            fprintf(log, "%s %s %d frame%s (%.0f N m; the longest run %.2f s from %.2f s)",
                    k > 0 ? "," : "", label, b->frames, b->frames == 1 ? "" : "s", b->limit,
                    b->longest, b->from);
        }
        fprintf(log, "\n");
    }
    if (g->root.mode != FB_ROOT_KINEMATIC) {
        fprintf(log,
                "%s: the pose alone (joints relative to the root): MPJPE mean %.2f cm; "
                "the root up to %.1f cm from the clip's path\n",
                tag, 100.0 * sm.mpjpe_root_mean, 100.0 * sm.root_pos_max);
    }
    if (sm.assist.peak_force > 0.0 || sm.assist.peak_torque > 0.0) {
        /* what held the root (kinematic) or helped it (assisted): fb_sim_root_support */
        const char* what =
            g->root.mode == FB_ROOT_KINEMATIC ? "kinematic root's hold" : "root assistance";
        fprintf(log, "%s: %s: %.0f N mean (%.1f%% of the body's weight, %.0f N), "
                "%.1f N s and %.1f N m s in all, peaks %.0f N (%.0f%%) and %.0f N m\n", tag, what,
                sm.assist_mean_force, 100.0 * sm.assist_mean_force / sm.weight, sm.weight,
                sm.assist.force_impulse, sm.assist.torque_impulse, sm.assist.peak_force,
                100.0 * sm.assist.peak_force / sm.weight, sm.assist.peak_torque);
    }
    if (g->root.mode != FB_ROOT_KINEMATIC) {
        char planned[96] = "";
        if (sm.airborne_planned >= 0) {
            snprintf(planned, sizeof planned, ", %d of them where the clip has a foot down",
                     sm.airborne_planned);
        }
        fprintf(
            log,
            "%s: the ground: its force on the body up to %.0f N (%.1f body weights) at %.2f s; off "
            "the ground in %d of %d frames (the longest %.2f s%s)\n",
            tag, sm.ground_peak, sm.ground_peak / sm.weight, sm.ground_peak_time,
            sm.airborne_frames, sm.nframe, sm.airborne_longest, planned);
    }
    if (res) {
        fprintf(log,
                "%s: following %s reference exactly would need %.0f N mean (%.1f%% of the "
                "body's weight) and %.0f N m of help at the root: what the ground's contacts "
                "(within %.0f cm; none in %d of its %d frames) cannot give its motion%s\n",
                tag, searched ? "the clip's grounded" : "its", res->mean_force,
                100.0 * res->mean_force / sm.weight, res->mean_torque, 100.0 * SIM_RESIDUAL_MARGIN,
                res->no_contact, res->frames,
                searched ? " (the sampled reference this run follows is offset from it for the "
                           "feedback to act on, not to be followed exactly)"
                         : "");
    }
    char fall[160];
    sim_fall_text(&sm, g->root.mode, fall, sizeof fall);
    if (fall[0]) {
        fprintf(log, "%s: %s\n", tag, fall);
    }
    if (sm.fall.cause != FB_FALL_NONE && g->root.mode == FB_ROOT_FREE && !searched) {
        /* the way out is an option away: say which (docs/CONTROL.md §10-11) */
        fprintf(log,
                "%s: note: this free root tracked the clip's own (grounded) reference; --sample 80 "
                "first searches a reference this body can follow, which keeps the shared walks "
                "up (minutes; docs/CONTROL.md section 11)\n",
                tag);
    }
    for (int k = 0; k < fb_sim_nball(s); k++) {
        const fb_hit_result* r = &fb_sim_hits(s)[k];
        if (!r->touched) {
            fprintf(log, "%s: hit %d (%s at %.2f s): the ball missed\n", tag, k + 1,
                    r->hit.target, r->hit.time);
            continue;
        }
        char rec[96], rec_root[96], rec_all[64], held[96];
        back_text(r->recover_time, rec, sizeof rec);
        back_text(r->recover_time_root, rec_root, sizeof rec_root);
        hold_text(r->hold_time_root, r->hold_window, held, sizeof held);
        if (isnan(r->mpjpe_recover_time)) {
            snprintf(rec_all, sizeof rec_all, "whole body not back by the clip's end");
        } else {
            snprintf(rec_all, sizeof rec_all, "whole body after %.2f s", r->mpjpe_recover_time);
        }
        fprintf(log, "%s: hit %d (%s at %.2f s): impulse %.2f N s; %s deviated up to %.1f cm; "
                "%s (%s)\n",
                tag, k + 1, r->hit.target, r->hit.time, norm3(r->impulse),
                m->name[r->body], 100.0 * r->peak_err, rec, rec_all);
        fprintf(log,
                "%s: hit %d: root-relative (the pose alone) %s deviated up to %.1f cm; %s; "
                "%s\n",
                tag, k + 1, m->name[r->body], 100.0 * r->peak_err_root, rec_root, held);
        char where[512];
        sim_hit_where(s, m, k, 8, where, sizeof where);
        const double root = sim_hit_share(neg3(r->root_impulse), r->impulse);
        const double ground = sim_hit_share(neg3(r->ground_impulse), r->impulse);
        if (isfinite(root) && isfinite(ground)) {
            /* whole percent, a rounded -0.3 % printed as 0 % (+ 0.0 turns -0 into 0) */
            fprintf(log, "%s: hit %d: the ball touched %s; of its impulse the root absorbed "
                    "%.0f%% and the ground %.0f%% in the %.2f s after\n",
                    tag, k + 1, where, round(100.0 * root) + 0.0, round(100.0 * ground) + 0.0,
                    r->absorb_window);
        } else {
            fprintf(log, "%s: hit %d: the ball touched %s\n", tag, k + 1, where);
        }
    }
}

int sim_job_run(const sim_job* j, FILE* log, const char* tag) {
    sim_job job = *j; /* clip_args_load fills the rules into its argument */
    fb_clip* clip = NULL;
    fb_character* ch = NULL;
    int rc = clip_args_load(&job.clip, true, &clip, &ch);
    if (rc != EXIT_OK) {
        return rc;
    }
    fb_gains* g = malloc(sizeof *g);
    fb_hit* hits = calloc(FB_SIM_MAX_BALLS, sizeof(fb_hit));
    fb_sim* s = NULL;
    fb_ref* ref = NULL;
    fb_ref* ctl = NULL; /* --sample's reference */
    double* residual_pct = NULL; /* the run's ground residual per recorded frame */
    fb_sample_result sample = {0};
    fb_sample_plan followed = {0}; /* --sample-load's plan: how its search ended */
    fb_error err;
    if (!g || !hits) {
        fprintf(log, "%s: out of memory\n", tag);
        rc = EXIT_FAIL;
        goto done;
    }
    rc = job_gains(&job, clip, ch, g, &ref, log, tag);
    if (rc != EXIT_OK) {
        goto done;
    }
    int nhit = job.nhit;
    memcpy(hits, job.hit, (size_t)nhit * sizeof(fb_hit));
    if (job.random_hits > 0) {
        const int last = job.last > 0 ? job.last : clip->nframe;
        const double dur = (last - job.first - 1) * clip->frame_time;
        if (nhit + job.random_hits > FB_SIM_MAX_BALLS) {
            fprintf(log, "%s: --random-hits: at most %d balls in all, asked for %d\n", tag,
                    FB_SIM_MAX_BALLS, nhit + job.random_hits);
            rc = EXIT_USAGE;
            goto done;
        }
        double t_lo, t_hi;
        if (!random_window(dur, job.random_hits, &t_lo, &t_hi)) {
            fprintf(log, "%s: --random-hits %d: the %.3f s simulated hold at most %d hits %g s "
                    "apart (from %g s to %g s before the end); ask for fewer or simulate more "
                    "frames\n", tag, job.random_hits, dur, fb_hits_random_max(t_lo, t_hi),
                    FB_HITS_MIN_GAP, t_lo, RANDOM_TAIL);
            rc = EXIT_USAGE;
            goto done;
        }
        if (fb_hits_random(ch, job.random_hits, job.seed, t_lo, t_hi, hits + nhit, &err) !=
            FB_OK) {
            fprintf(log, "%s: %s\n", tag, err.msg);
            rc = exit_code_for(err.code);
            goto done;
        }
        nhit += job.random_hits;
    }
    fb_sim_opts so = fb_default_sim_opts();
    so.first = job.first;
    so.last = job.last;
    so.self_collision = job.self_collision;
    so.export_placed = job.keep_placement;
    so.ref = ref; /* NULL with a gains file: the simulation fits its own at the file's rate */
    if (job.sample > 0) {
        rc = job_sample(&job, clip, ch, g, hits, nhit, &so, &ctl, &sample, log, tag);
        if (rc != EXIT_OK) {
            goto done;
        }
        so.control = ctl;
    } else if (job.sample_load) {
        rc = job_sample_load(&job, clip, ch, g, &so, &ctl, &followed, log, tag);
        if (rc != EXIT_OK) {
            goto done;
        }
        so.control = ctl;
    }
    s = fb_sim_create(clip, ch, g, hits, nhit, &so, &err);
    if (!s) {
        fprintf(log, "%s: %s\n", tag, err.msg);
        rc = exit_code_for(err.code);
        goto done;
    }
    print_ref_notes(fb_sim_ref(s), ch->model, log, tag);
    print_grounded_notes(s, log, tag);
    if (norm3(fb_sim_placement(s)) >= 1e-6) {
        fprintf(log, "%s: note: %s\n", tag,
                job.keep_placement
                    ? "the exported clip and balls keep that placement (--keep-placement)"
                    : "the exported clip and balls are in the input's frame: that placement is "
                      "undone in them (--keep-placement keeps it)");
    }
    const double t0 = wall_s();
    progress_ctx pc = {log, tag, fb_sim_duration(s), -100, t0};
    const fb_status st = fb_sim_run(s, job.progress ? on_progress : NULL, &pc, &err);
    const double wall = wall_s() - t0;
    if (job.progress) {
        fputc('\n', log);
    }
    if (st != FB_OK) {
        fprintf(log, "%s: %s; nothing written\n", tag, err.msg);
        rc = st == FB_ENUMERIC ? EXIT_FAIL : exit_code_for(st);
        goto done;
    }
    /* the ground residual, made once for the terminal and every report (it grounds the
     * reference again for a sampled run) */
    const bool searched = job.sample > 0 || job.sample_load;
    int nrec = 0;
    (void)fb_sim_frames(s, &nrec);
    residual_pct = malloc((size_t)(nrec > 0 ? nrec : 1) * sizeof *residual_pct);
    sim_residual made;
    const sim_residual* res =
        residual_pct && sim_ground_residual(s, ch->model, g->root.mode, sim_weight(ch->model),
                                            searched, &made, residual_pct)
            ? &made
            : NULL;
    print_summary(s, ch->model, g, wall, searched, res, log, tag);
    const int as_searched = job.sample_load ? plan_as_searched(s, &followed, log, tag) : 0;
    rc = write_outputs(&job, s, ch, g, job.sample > 0 ? &sample : NULL, as_searched, res,
                       residual_pct, log, tag);
done:
    free(residual_pct);
    fb_sim_destroy(s);
    fb_ref_destroy(ctl);
    fb_ref_destroy(ref);
    free(hits);
    free(g);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    return rc;
}
