/* The balls' trajectories and the JSON report of a simulation (the HTML page is in
 * sim_report_html.c). Numbers are printed by cJSON (shortest form that reads back exactly), so
 * the same run gives the same bytes. */
#include "sim_report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/atomic_file.h"
#include "util/json_file.h"

/* Degrees per radian: the report gives angles in degrees. */
#define DEG_PER_RAD (180.0 / 3.14159265358979323846)

fb_status text_save(const char* path, const char* text, fb_error* err) {
    fb_atomic_file a;
    fb_status s = fb_atomic_open(&a, path, err);
    if (s != FB_OK) {
        return s;
    }
    fputs(text, a.f);
    fputc('\n', a.f);
    return fb_atomic_commit(&a, err);
}

const char* sim_fall_words(double t, char* buf, size_t cap) {
    if (isnan(t)) {
        snprintf(buf, cap, "stands to the end");
    } else {
        snprintf(buf, cap, "falls at %.2f s", t);
    }
    return buf;
}

/* ---- summary -------------------------------------------------------------------------------- */

/* The balance planner's weight of a torque's error against a force's (1/m^2,
 * src/control/balance.c BAL_TORQUE_WEIGHT): the residual is fitted as the planner fits. */
#define RESIDUAL_TORQUE_WEIGHT 3.0

bool sim_report_sampled(const sim_report_info* info) {
    return info->sample != NULL || info->sample_plan != NULL;
}

double sim_weight(const fb_model* m) {
    const fb_v3 g = m->opt.gravity;
    return fb_model_mass(m) * sqrt(g.x * g.x + g.y * g.y + g.z * g.z);
}

bool sim_ground_residual(const fb_sim* s, const fb_model* m, fb_root_mode root, double weight,
                         bool sampled, sim_residual* out, double* pct) {
    if (root == FB_ROOT_KINEMATIC) {
        return false;
    }
    fb_error err;
    /* the grounded reference the sim made is its control reference unless it followed
     * another (a sampled one): then made again, as fb_sim_create and the search make it */
    fb_ref* made = sampled ? fb_ref_grounded(m, fb_sim_ref(s), NULL, &err) : NULL;
    const fb_ref* r = sampled ? made : fb_sim_control_ref(s);
    if (!r || r->nframe < 1) {
        fb_ref_destroy(made);
        return false;
    }
    double* res = malloc((size_t)r->nframe * 6 * sizeof *res);
    int* np = malloc((size_t)r->nframe * sizeof *np);
    const double mu = fb_world_options(fb_sim_world((fb_sim*)s))->ground_mu;
    bool ok = res && np &&
              fb_ref_ground_residual(m, r, mu, SIM_RESIDUAL_MARGIN, RESIDUAL_TORQUE_WEIGHT, res, np,
                                     &err) == FB_OK;
    if (ok) {
        *out = (sim_residual){.frames = r->nframe, .sampled = sampled};
        for (int f = 0; f < r->nframe; f++) {
            const double* w = res + 6 * (size_t)f;
            out->mean_force += sqrt(w[3] * w[3] + w[4] * w[4] + w[5] * w[5]) / r->nframe;
            out->mean_torque += sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) / r->nframe;
            out->no_contact += np[f] == 0;
        }
        int n = 0;
        const fb_sim_frame* fr = fb_sim_frames(s, &n);
        for (int k = 0; pct && k < n; k++) {
            const double* w = res + 6 * (size_t)fb_ref_frame(r, fr[k].time);
            pct[k] = 100.0 * sqrt(w[3] * w[3] + w[4] * w[4] + w[5] * w[5]) / weight;
        }
    }
    free(np);
    free(res);
    fb_ref_destroy(made);
    return ok;
}

bool sim_report_residual(const fb_sim* s, const sim_report_info* info, const fb_model* m,
                         double weight, sim_residual* out, double* pct) {
    if (!info->residual) {
        return sim_ground_residual(s, m, info->gains->root.mode, weight, sim_report_sampled(info),
                                   out, pct);
    }
    *out = *info->residual;
    int n = 0;
    (void)fb_sim_frames(s, &n);
    if (pct && n > 0) {
        memcpy(pct, info->residual_pct, (size_t)n * sizeof *pct);
    }
    return true;
}

/* Whether the contact plan of r has a foot or a toe on the ground at time t (its frame
 * nearest t). */
static bool planned_stance(const fb_ref* r, double t) {
    const long i = fb_ref_frame(r, t);
    for (int c = 0; c < r->ncontact; c++) {
        if (r->stance_at[(size_t)i * (size_t)r->ncontact + (size_t)c] >= 0) {
            return true;
        }
    }
    return false;
}

/* sim_summary's ground fields from the recorded frames. An airborne frame is one after the
 * first and before any fall whose ground force, averaged since the frame before, is exactly
 * zero: no step between them had a ground contact pushing. */
static void ground_contact(const fb_sim* s, const fb_sim_frame* fr, int n, sim_summary* out) {
    const fb_ref* r = fb_sim_control_ref(s);
    const bool plan = r->ncontact > 0;
    out->ground_peak_time = NAN;
    out->airborne_planned = plan ? 0 : -1;
    int run = 0;
    for (int f = 0; f < n; f++) {
        if (fr[f].ground_force > out->ground_peak) {
            out->ground_peak = fr[f].ground_force;
            out->ground_peak_time = fr[f].time;
        }
        /* off the ground counts before a fall only: after it, the body's tumbling says
         * nothing of its gait */
        run = f > 0 && fr[f].ground_force == 0.0 && !fr[f].fallen ? run + 1 : 0;
        if (run > 0) {
            out->airborne_frames++;
            out->airborne_planned += plan && planned_stance(r, fr[f].time);
            /* a run of k frames spans the k recorded intervals that ended in them */
            out->airborne_longest = fmax(out->airborne_longest, fr[f].time - fr[f - run].time);
        }
    }
}

/* The axes that sat at their torque limits (the same test as the tracker's limits_bound, on
 * the torques recorded with each frame), the most often bound first (ties: the lower dof). */
static void bound_axes(const fb_sim* s, const fb_model* m, const fb_sim_frame* fr, int n,
                       sim_summary* out) {
    const fb_joint_gains* jg = fb_tracker_gains(fb_sim_tracker((fb_sim*)s));
    const int v0 = m->jtype[1] == FB_JOINT_FLOATING ? 6 : 0;
    for (int j = v0; j < m->nv; j++) {
        const double lim = jg[m->dof_body[j]].torque_limit;
        sim_bound b = {.dof = j, .limit = lim};
        /* from frame 1, as limit_frames: frame 0's count is the tracker's before the first
         * step, its recorded torques the first step's (set after it) */
        for (int f = 1, run = 0; lim > 0.0 && f < n; f++) {
            run = fabs(fb_sim_frame_tau(s, f)[j]) >= lim * (1.0 - 1e-9) ? run + 1 : 0;
            if (run == 0) {
                continue;
            }
            b.frames++;
            /* a run of k frames spans the k recorded intervals that ended in them */
            const double span = fr[f].time - fr[f - run].time;
            if (b.frames == 1 || span > b.longest) {
                b.longest = span;
                b.from = fr[f - run + 1].time;
            }
        }
        if (b.frames == 0) {
            continue;
        }
        int k = out->nbound < SIM_REPORT_BOUND_DOFS ? out->nbound++ : SIM_REPORT_BOUND_DOFS;
        while (k > 0 && out->bound[k - 1].frames < b.frames) {
            if (k < SIM_REPORT_BOUND_DOFS) {
                out->bound[k] = out->bound[k - 1];
            }
            k--;
        }
        if (k < SIM_REPORT_BOUND_DOFS) {
            out->bound[k] = b;
        }
    }
}

void sim_summarize(const fb_sim* s, const fb_model* m, sim_summary* out) {
    memset(out, 0, sizeof *out);
    int n = 0;
    const fb_sim_frame* fr = fb_sim_frames(s, &n);
    out->nframe = n;
    out->duration = n > 0 ? fr[n - 1].time : 0.0;
    for (int f = 0; f < n; f++) {
        out->mpjpe_mean += fr[f].metrics.mpjpe / n;
        out->mpjpe_root_mean += fr[f].metrics.mpjpe_root / n;
        out->root_pos_max = fmax(out->root_pos_max, fr[f].metrics.root_pos_err);
        if (fr[f].metrics.mpjpe > out->mpjpe_max) {
            out->mpjpe_max = fr[f].metrics.mpjpe;
            out->mpjpe_max_time = fr[f].time;
        }
        for (int p = 0; p < FB_NPART; p++) {
            out->part_mean[p] += fr[f].part_err[p] / n;
            out->part_max[p] = fmax(out->part_max[p], fr[f].part_err[p]);
        }
        out->limit_frames += fr[f].metrics.limits_bound > 0;
    }
    ground_contact(s, fr, n, out);
    bound_axes(s, m, fr, n, out);
    fb_sim_root_support(s, NULL, NULL, &out->assist);
    out->weight = sim_weight(m);
    out->assist_mean_force = out->duration > 0.0 ? out->assist.force_impulse / out->duration : 0.0;
    out->fall = fb_tracker_fall(fb_sim_tracker((fb_sim*)s));
    out->fall_frame = -1;
    for (int f = 0; f < n && out->fall_frame < 0; f++) {
        out->fall_frame = fr[f].fallen ? f : -1;
    }
    /* the most loaded dofs by RMS torque; the root's six are its wrench, not a joint */
    const int v0 = m->jtype[1] == FB_JOINT_FLOATING ? 6 : 0;
    for (int j = v0; j < m->nv; j++) {
        double ss = 0.0;
        for (int f = 0; f < n; f++) {
            const double t = fb_sim_frame_tau(s, f)[j];
            ss += t * t;
        }
        const double rms = n > 0 ? sqrt(ss / n) : 0.0;
        /* insertion into the sorted top list */
        int k = out->ntop < SIM_REPORT_TOP_DOFS ? out->ntop++ : SIM_REPORT_TOP_DOFS;
        while (k > 0 && out->top_rms[k - 1] < rms) {
            if (k < SIM_REPORT_TOP_DOFS) {
                out->top_rms[k] = out->top_rms[k - 1];
                out->top_dof[k] = out->top_dof[k - 1];
            }
            k--;
        }
        if (k < SIM_REPORT_TOP_DOFS) {
            out->top_rms[k] = rms;
            out->top_dof[k] = j;
        }
    }
}

void sim_fall_text(const sim_summary* sm, fb_root_mode root, char* buf, size_t cap) {
    const fb_fall* f = &sm->fall;
    if (f->cause == FB_FALL_HEIGHT) {
        snprintf(buf, cap, "fell at %.2f s: %s (%.2f m, the clip's %.2f m)", f->time,
                 fb_fall_cause_name(f->cause), f->height, f->clip_height);
    } else if (f->cause != FB_FALL_NONE) {
        snprintf(buf, cap, "fell at %.2f s: %s (%.0f deg from the clip's)", f->time,
                 fb_fall_cause_name(f->cause), f->tilt * DEG_PER_RAD);
    } else {
        snprintf(buf, cap, "%s", root == FB_ROOT_KINEMATIC ? "" : "stayed up");
    }
}

static double norm3(fb_v3 v) {
    return sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

static fb_v3 neg3(fb_v3 v) {
    return (fb_v3){-v.x, -v.y, -v.z};
}

static fb_v3 scaled3(fb_v3 v, double k) {
    return (fb_v3){k * v.x, k * v.y, k * v.z};
}

double sim_hit_impulse_norm(const fb_hit_result* r) {
    return norm3(r->impulse);
}

double sim_hit_share(fb_v3 part, fb_v3 impulse) {
    const double jj = impulse.x * impulse.x + impulse.y * impulse.y + impulse.z * impulse.z;
    const double d = part.x * impulse.x + part.y * impulse.y + part.z * impulse.z;
    return jj > 0.0 ? d / jj : NAN;
}

int sim_hit_bodies_sorted(const fb_sim* s, int k, fb_hit_body* out) {
    int n = 0;
    const fb_hit_body* b = fb_sim_hit_bodies(s, k, &n);
    for (int i = 0; i < n; i++) { /* insertion by |impulse|, ties keep the order of touch */
        const double mi = norm3(b[i].impulse);
        int j = i;
        for (; j > 0 && norm3(out[j - 1].impulse) < mi; j--) {
            out[j] = out[j - 1];
        }
        out[j] = b[i];
    }
    return n;
}

void sim_hit_where(const fb_sim* s, const fb_model* m, int k, int most, char* buf, size_t cap) {
    fb_hit_body* b = malloc(((size_t)m->nbody + 1) * sizeof *b);
    const int n = b ? sim_hit_bodies_sorted(s, k, b) : 0;
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && i < most && len < cap; i++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%.24s %.2f", i ? ", " : "",
                                m->name[b[i].body], norm3(b[i].impulse));
    }
    if (len < cap) {
        len += (size_t)snprintf(buf + len, cap - len, "%s", n > 0 ? " N s" : "nothing");
    }
    if (n > most && len < cap) {
        snprintf(buf + len, cap - len, " +%d", n - most);
    }
    free(b);
}

double sim_hit_momentum_mismatch(const fb_hit_result* r) {
    const double j = norm3(r->impulse);
    const fb_v3 sum = {r->ball_dp.x + r->impulse.x, r->ball_dp.y + r->impulse.y,
                       r->ball_dp.z + r->impulse.z};
    return j > 0.0 ? norm3(sum) / j : 0.0;
}

/* ---- balls ---------------------------------------------------------------------------------- */

static cJSON* vec3(fb_v3 v) {
    const double c[3] = {v.x, v.y, v.z};
    return cJSON_CreateDoubleArray(c, 3);
}

/* A number, or null for NaN (JSON has no NaN). */
static cJSON* number(double v) {
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

fb_status sim_balls_json(const fb_sim* s, const char* path, fb_error* err) {
    const fb_v3 off = fb_sim_export_offset(s);
    int n = 0;
    const fb_sim_frame* fr = fb_sim_frames(s, &n);
    const fb_hit_result* hr = fb_sim_hits(s);
    const int nb = fb_sim_nball(s);
    cJSON* root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "featherbone-balls");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddNumberToObject(root, "frame_time", n > 1 ? fr[1].time - fr[0].time : 0.0);
    cJSON_AddNumberToObject(root, "frames", n);
    cJSON* balls = cJSON_AddArrayToObject(root, "balls");
    for (int k = 0; k < nb; k++) {
        const fb_hit_result* r = &hr[k];
        cJSON* b = cJSON_CreateObject();
        char spec[512];
        fb_hit_format(&r->hit, spec, sizeof spec);
        cJSON_AddStringToObject(b, "hit", spec);
        cJSON_AddNumberToObject(b, "mass", r->hit.mass);
        cJSON_AddNumberToObject(b, "radius", r->hit.radius);
        cJSON_AddNumberToObject(b, "launch_time", r->launch_time);
        const fb_v3 p0 = {r->launch_pos.x + off.x, r->launch_pos.y + off.y,
                          r->launch_pos.z + off.z};
        cJSON_AddItemToObject(b, "launch_position", vec3(p0));
        cJSON_AddItemToObject(b, "launch_velocity", vec3(r->launch_vel));
        cJSON* pos = cJSON_AddArrayToObject(b, "positions");
        for (int f = 0; f < n; f++) {
            const double* p = fb_sim_frame_balls(s, f) + 3 * k;
            const double q[3] = {p[0] + off.x, p[1] + off.y, p[2] + off.z};
            cJSON_AddItemToArray(pos, fr[f].time + 1e-9 < r->launch_time
                                          ? cJSON_CreateNull()
                                          : cJSON_CreateDoubleArray(q, 3));
        }
        cJSON_AddItemToArray(balls, b);
    }
    return fb_json_write(path, root, err);
}

/* ---- report --------------------------------------------------------------------------------- */

/* A series: fn(frame) for every recorded frame, scaled. */
static cJSON* series(const fb_sim_frame* fr, int n, double (*fn)(const fb_sim_frame*, int),
                     int arg, double scale) {
    cJSON* a = cJSON_CreateArray();
    for (int f = 0; f < n; f++) {
        cJSON_AddItemToArray(a, number(scale * fn(&fr[f], arg)));
    }
    return a;
}

static double f_time(const fb_sim_frame* f, int k) {
    (void)k;
    return f->time;
}
static double f_mpjpe(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.mpjpe;
}
static double f_mpjpe_root(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.mpjpe_root;
}
static double f_max_err(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.max_joint_err;
}
static double f_root_pos(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.root_pos_err;
}
static double f_com(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.com_err;
}
static double f_part(const fb_sim_frame* f, int k) {
    return f->part_err[k];
}
static double f_ground(const fb_sim_frame* f, int k) {
    (void)k;
    return f->ground_force;
}
static double f_ball(const fb_sim_frame* f, int k) {
    (void)k;
    return f->ball_force;
}
static double f_limits(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.limits_bound;
}
static double f_assist_force(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.assist_force;
}
static double f_assist_torque(const fb_sim_frame* f, int k) {
    (void)k;
    return f->metrics.assist_torque;
}

static double f_fallen(const fb_sim_frame* f, int k) {
    (void)k;
    return f->fallen ? 1.0 : 0.0;
}
static double f_com_margin(const fb_sim_frame* f, int k) {
    (void)k;
    return f->com_margin;
}
static double f_com_target(const fb_sim_frame* f, int k) {
    (void)k;
    return f->com_target_dist;
}

/* A vector of which every component may be NaN (null). */
static cJSON* vec3_or_null(fb_v3 v) {
    cJSON* a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, number(v.x));
    cJSON_AddItemToArray(a, number(v.y));
    cJSON_AddItemToArray(a, number(v.z));
    return a;
}

static cJSON* hit_json(const fb_sim* s, int k, const fb_model* m) {
    const fb_hit_result* r = &fb_sim_hits(s)[k];
    cJSON* o = cJSON_CreateObject();
    char spec[512];
    fb_hit_format(&r->hit, spec, sizeof spec);
    cJSON_AddStringToObject(o, "hit", spec);
    cJSON_AddStringToObject(o, "target", r->hit.target);
    cJSON_AddStringToObject(o, "body", m->name[r->body]);
    cJSON_AddNumberToObject(o, "time", r->hit.time);
    cJSON_AddNumberToObject(o, "launch_time", r->launch_time);
    cJSON_AddBoolToObject(o, "touched", r->touched);
    cJSON_AddItemToObject(o, "contact_time", number(r->touched ? r->contact_time : NAN));
    cJSON_AddItemToObject(o, "impulse_Ns", vec3(r->impulse));
    cJSON_AddItemToObject(o, "ball_momentum_change_Ns", vec3(r->ball_dp));
    cJSON* bodies = cJSON_AddArrayToObject(o, "bodies");
    fb_hit_body* b = malloc(((size_t)m->nbody + 1) * sizeof *b);
    const int nb = b ? sim_hit_bodies_sorted(s, k, b) : 0;
    for (int i = 0; i < nb; i++) {
        cJSON* e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "body", m->name[b[i].body]);
        cJSON_AddItemToObject(e, "impulse_Ns", vec3(b[i].impulse));
        cJSON_AddNumberToObject(e, "first_touch", b[i].time);
        cJSON_AddItemToArray(bodies, e);
    }
    free(b);
    cJSON_AddItemToObject(o, "root_impulse_Ns", vec3_or_null(r->root_impulse));
    cJSON_AddItemToObject(o, "ground_impulse_Ns", vec3_or_null(r->ground_impulse));
    cJSON_AddItemToObject(o, "root_share",
                          number(sim_hit_share(neg3(r->root_impulse), r->impulse)));
    cJSON_AddItemToObject(o, "ground_share",
                          number(sim_hit_share(neg3(r->ground_impulse), r->impulse)));
    cJSON_AddNumberToObject(o, "absorb_window_s", r->absorb_window);
    cJSON_AddItemToObject(o, "peak_error_cm", number(100.0 * r->peak_err));
    cJSON_AddItemToObject(o, "peak_time", number(r->peak_time));
    cJSON_AddItemToObject(o, "recover_time", number(r->recover_time));
    cJSON_AddItemToObject(o, "mpjpe_recover_time", number(r->mpjpe_recover_time));
    cJSON_AddItemToObject(o, "peak_error_root_cm", number(100.0 * r->peak_err_root));
    cJSON_AddItemToObject(o, "recover_time_root", number(r->recover_time_root));
    cJSON_AddItemToObject(o, "hold_time", number(r->hold_time));
    cJSON_AddItemToObject(o, "hold_time_root", number(r->hold_time_root));
    cJSON_AddNumberToObject(o, "hold_window_s", r->hold_window);
    /* the two deviations at every recorded frame (aligned with series.time) */
    int n = 0;
    (void)fb_sim_frames(s, &n);
    cJSON* e = cJSON_AddArrayToObject(o, "error_cm");
    cJSON* er = cJSON_AddArrayToObject(o, "error_root_cm");
    for (int f = 0; f < n; f++) {
        cJSON_AddItemToArray(e, number(100.0 * fb_sim_frame_hit_err(s, f)[k]));
        cJSON_AddItemToArray(er, number(100.0 * fb_sim_frame_hit_err_root(s, f)[k]));
    }
    return o;
}

const char* sim_report_gains(const sim_report_info* info, const char* head, const char* tail,
                             char* buf, size_t cap) {
    if (info->gains_path) {
        return info->gains_path;
    }
    if (info->strength < 0) {
        snprintf(buf, cap, "%s%s", head, tail);
    } else {
        snprintf(buf, cap, "%s --strength %s%s", head,
                 fb_strength_name((fb_strength)info->strength), tail);
    }
    return buf;
}

fb_status sim_report_json(const fb_sim* s, const sim_report_info* info, const char* path,
                          fb_error* err) {
    const fb_model* m = info->ch->model;
    sim_summary sm;
    sim_summarize(s, m, &sm);
    int n = 0;
    const fb_sim_frame* fr = fb_sim_frames(s, &n);
    cJSON* root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "featherbone-report");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "clip", info->clip_path);
    char gains[1100];
    cJSON_AddStringToObject(root, "gains",
                            sim_report_gains(info, "(gains init", ")", gains, sizeof gains));
    cJSON_AddStringToObject(root, "controller", fb_controller_name(info->gains->controller));
    cJSON_AddStringToObject(root, "root", fb_root_mode_name(info->gains->root.mode));
    cJSON_AddStringToObject(root, "anchor", fb_root_anchor_name(info->gains->root.anchor));
    if (info->sample) {
        /* the search for the reference (simulate --sample); a fall time null: none */
        const fb_sample_result* r = info->sample;
        cJSON* js = cJSON_AddObjectToObject(root, "sampling");
        const fb_sample_opts* o = &info->sample_opts;
        cJSON_AddNumberToObject(js, "samples_per_window", o->samples);
        cJSON_AddNumberToObject(js, "hit_scale_m", o->hit_scale);
        cJSON_AddNumberToObject(js, "hit_samples_per_window", r->hit_samples);
        cJSON_AddNumberToObject(js, "hit_windows", r->hit_windows);
        cJSON_AddNumberToObject(js, "pull", o->pull);
        cJSON_AddNumberToObject(js, "step_rad", o->sigma_joint);
        cJSON_AddNumberToObject(js, "root_scale_m", o->root_scale);
        cJSON_AddNumberToObject(js, "height_scale_m", o->height_scale);
        cJSON_AddNumberToObject(js, "upright", o->upright);
        cJSON_AddNumberToObject(js, "standing_height_m", r->stand_height);
        cJSON_AddNumberToObject(js, "windows", r->windows);
        cJSON_AddNumberToObject(js, "dofs", r->dofs);
        cJSON_AddNumberToObject(js, "simulations", (double)r->simulations);
        cJSON_AddItemToObject(js, "fall_before_s", number(r->fall_before));
        cJSON_AddItemToObject(js, "fall_after_s", number(r->fall_after));
        cJSON_AddNumberToObject(js, "last_window_cost", r->cost);
    }
    if (info->sample_plan) {
        /* the plan kept (--sample-save) or followed without a search (--sample-load) */
        cJSON* js = info->sample ? cJSON_GetObjectItem(root, "sampling")
                                 : cJSON_AddObjectToObject(root, "sampling");
        cJSON_AddStringToObject(js, "plan", info->sample_plan);
        if (!info->sample && info->plan_as_searched != 0) {
            cJSON_AddBoolToObject(js, "as_searched", info->plan_as_searched == 1);
        }
    }
    cJSON_AddNumberToObject(root, "rate_hz", info->gains->rate);
    cJSON_AddNumberToObject(root, "frames", n);
    cJSON_AddNumberToObject(root, "duration_s", sm.duration);
    cJSON* pl = cJSON_AddObjectToObject(root, "placement");
    cJSON_AddItemToObject(pl, "shift_cm", vec3(scaled3(fb_sim_placement(s), 100.0)));
    cJSON_AddItemToObject(pl, "export_offset_cm",
                          vec3(scaled3(fb_sim_export_offset(s), 100.0)));

    cJSON* sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "mpjpe_mean_cm", 100.0 * sm.mpjpe_mean);
    cJSON_AddNumberToObject(sum, "mpjpe_max_cm", 100.0 * sm.mpjpe_max);
    cJSON_AddNumberToObject(sum, "mpjpe_max_time", sm.mpjpe_max_time);
    cJSON_AddNumberToObject(sum, "mpjpe_root_relative_mean_cm", 100.0 * sm.mpjpe_root_mean);
    cJSON_AddNumberToObject(sum, "root_position_error_max_cm", 100.0 * sm.root_pos_max);
    cJSON_AddNumberToObject(sum, "frames_with_torque_limit_bound", sm.limit_frames);
    cJSON* tb = cJSON_AddArrayToObject(sum, "torque_limit_bound");
    for (int k = 0; k < sm.nbound; k++) {
        const sim_bound* b = &sm.bound[k];
        char label[FB_NAME_MAX + 16];
        fb_dof_label(m, b->dof, label, sizeof label);
        cJSON* o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "dof", label);
        cJSON_AddNumberToObject(o, "limit_Nm", b->limit);
        cJSON_AddNumberToObject(o, "frames", b->frames);
        cJSON_AddNumberToObject(o, "longest_s", b->longest);
        cJSON_AddNumberToObject(o, "longest_from_s", b->from);
        cJSON_AddItemToArray(tb, o);
    }
    cJSON* gr = cJSON_AddObjectToObject(sum, "ground");
    cJSON_AddNumberToObject(gr, "peak_force_N", sm.ground_peak);
    cJSON_AddItemToObject(gr, "peak_time", number(sm.ground_peak_time));
    cJSON_AddNumberToObject(gr, "peak_force_body_weights", sm.ground_peak / sm.weight);
    cJSON_AddNumberToObject(gr, "airborne_frames", sm.airborne_frames);
    if (sm.airborne_planned >= 0) {
        cJSON_AddNumberToObject(gr, "airborne_frames_with_a_foot_planned_down",
                                sm.airborne_planned);
    } else {
        cJSON_AddNullToObject(gr, "airborne_frames_with_a_foot_planned_down");
    }
    cJSON_AddNumberToObject(gr, "airborne_longest_s", sm.airborne_longest);
    cJSON* parts = cJSON_AddObjectToObject(sum, "parts");
    for (int p = 0; p < FB_NPART; p++) {
        cJSON* po = cJSON_AddObjectToObject(parts, fb_part_name((fb_part)p));
        cJSON_AddNumberToObject(po, "mean_cm", 100.0 * sm.part_mean[p]);
        cJSON_AddNumberToObject(po, "max_cm", 100.0 * sm.part_max[p]);
    }
    /* what held or helped the root (fb_sim_root_support) */
    cJSON* as = cJSON_AddObjectToObject(sum, "assistance");
    const fb_root_mode mode = info->gains->root.mode;
    const char* source = mode == FB_ROOT_KINEMATIC  ? "kinematic root's constraint"
                         : mode == FB_ROOT_ASSISTED ? "assisted root's help"
                                                    : "none (free root)";
    cJSON_AddStringToObject(as, "source", source);
    cJSON_AddNumberToObject(as, "force_impulse_Ns", sm.assist.force_impulse);
    cJSON_AddNumberToObject(as, "torque_impulse_Nms", sm.assist.torque_impulse);
    cJSON_AddNumberToObject(as, "peak_force_N", sm.assist.peak_force);
    cJSON_AddNumberToObject(as, "peak_torque_Nm", sm.assist.peak_torque);
    cJSON_AddNumberToObject(as, "mean_force_N", sm.assist_mean_force);
    cJSON_AddNumberToObject(as, "body_weight_N", sm.weight);
    cJSON_AddItemToObject(as, "mean_force_weight_percent",
                          number(100.0 * sm.assist_mean_force / sm.weight));
    /* the least help following the reference exactly would need (sim_ground_residual) */
    double* pct = malloc((size_t)(n > 0 ? n : 1) * sizeof *pct);
    sim_residual res;
    if (pct && sim_report_residual(s, info, m, sm.weight, &res, pct)) {
        cJSON* ro = cJSON_AddObjectToObject(sum, "reference_ground_residual");
        cJSON_AddBoolToObject(ro, "of_followed_reference", !res.sampled);
        cJSON_AddNumberToObject(ro, "mean_force_N", res.mean_force);
        cJSON_AddNumberToObject(ro, "mean_force_weight_percent",
                                100.0 * res.mean_force / sm.weight);
        cJSON_AddNumberToObject(ro, "mean_torque_Nm", res.mean_torque);
        cJSON_AddNumberToObject(ro, "frames", res.frames);
        cJSON_AddNumberToObject(ro, "frames_without_contact", res.no_contact);
        cJSON_AddNumberToObject(ro, "contact_margin_m", SIM_RESIDUAL_MARGIN);
        cJSON* a = cJSON_AddArrayToObject(ro, "force_weight_percent");
        for (int f = 0; f < n; f++) {
            cJSON_AddItemToArray(a, number(pct[f]));
        }
    }
    free(pct);

    /* the fall: when and why, or null (it stayed up, or a kinematic root, which cannot fall) */
    if (sm.fall.cause == FB_FALL_NONE) {
        cJSON_AddNullToObject(root, "fall");
    } else {
        cJSON* fa = cJSON_AddObjectToObject(root, "fall");
        cJSON_AddNumberToObject(fa, "time_s", sm.fall.time);
        cJSON_AddStringToObject(fa, "cause", fb_fall_cause_name(sm.fall.cause));
        cJSON_AddNumberToObject(fa, "root_height_m", sm.fall.height);
        cJSON_AddNumberToObject(fa, "clip_height_m", sm.fall.clip_height);
        cJSON_AddNumberToObject(fa, "tilt_deg", sm.fall.tilt * DEG_PER_RAD);
    }

    cJSON* hits = cJSON_AddArrayToObject(root, "hits");
    for (int k = 0; k < fb_sim_nball(s); k++) {
        cJSON_AddItemToArray(hits, hit_json(s, k, m));
    }

    cJSON* se = cJSON_AddObjectToObject(root, "series");
    cJSON_AddItemToObject(se, "time", series(fr, n, f_time, 0, 1.0));
    cJSON_AddItemToObject(se, "mpjpe_cm", series(fr, n, f_mpjpe, 0, 100.0));
    cJSON_AddItemToObject(se, "mpjpe_root_relative_cm", series(fr, n, f_mpjpe_root, 0, 100.0));
    cJSON_AddItemToObject(se, "max_joint_error_cm", series(fr, n, f_max_err, 0, 100.0));
    cJSON_AddItemToObject(se, "root_position_error_cm", series(fr, n, f_root_pos, 0, 100.0));
    cJSON_AddItemToObject(se, "com_error_cm", series(fr, n, f_com, 0, 100.0));
    cJSON* pe = cJSON_AddObjectToObject(se, "part_error_cm");
    for (int p = 0; p < FB_NPART; p++) {
        cJSON_AddItemToObject(pe, fb_part_name((fb_part)p), series(fr, n, f_part, p, 100.0));
    }
    cJSON_AddItemToObject(se, "ground_force_N", series(fr, n, f_ground, 0, 1.0));
    cJSON_AddItemToObject(se, "ball_force_N", series(fr, n, f_ball, 0, 1.0));
    cJSON_AddItemToObject(se, "limits_bound", series(fr, n, f_limits, 0, 1.0));
    cJSON_AddItemToObject(se, "assist_force_N", series(fr, n, f_assist_force, 0, 1.0));
    cJSON_AddItemToObject(se, "assist_torque_Nm", series(fr, n, f_assist_torque, 0, 1.0));
    cJSON_AddItemToObject(se, "fallen", series(fr, n, f_fallen, 0, 1.0));
    cJSON_AddItemToObject(se, "com_margin_cm", series(fr, n, f_com_margin, 0, 100.0));
    cJSON_AddItemToObject(se, "com_target_distance_cm", series(fr, n, f_com_target, 0, 100.0));
    cJSON* tq = cJSON_AddObjectToObject(se, "torque_Nm");
    for (int k = 0; k < sm.ntop; k++) {
        char label[FB_NAME_MAX + 16];
        fb_dof_label(m, sm.top_dof[k], label, sizeof label);
        cJSON* a = cJSON_CreateArray();
        for (int f = 0; f < n; f++) {
            cJSON_AddItemToArray(a, number(fb_sim_frame_tau(s, f)[sm.top_dof[k]]));
        }
        cJSON_AddItemToObject(tq, label, a);
    }
    return fb_json_write(path, root, err);
}
