/* The report of a simulation as one self-contained HTML page (tools/html.h): the run, a
 * summary table, one table row per hit, the per-body-part errors, and charts over time with
 * the hits marked. The numbers are those of the JSON report (sim_report.c), printed with fixed
 * decimals, so the same run gives the same bytes; nothing on the page depends on the clock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "plot.h"
#include "sim_report.h"

/* Chart size in px: the page's column is 1100 px wide; the SVG scales down below that. */
enum { CHART_W = 1040, CHART_H = 300, CHART_H_SMALL = 220 };

/* Per-frame series the charts plot, each (nframe) long, in the units of their chart. */
enum {
    SER_TIME,                         /* s */
    SER_MPJPE,                        /* cm */
    SER_MAXERR,                       /* cm */
    SER_PART,                         /* FB_NPART of them, cm */
    SER_GROUND = SER_PART + FB_NPART, /* N */
    SER_BALL,                         /* N */
    SER_LIMITS,                       /* dofs */
    SER_ASSIST_F,                     /* N */
    SER_ASSIST_T,                     /* N m */
    SER_ASSIST_PCT,                   /* % of the body's weight */
    SER_RESIDUAL_PCT,                 /* % of the body's weight: sim_ground_residual */
    SER_MARGIN,                       /* cm, NaN where the balance planner did not run */
    SER_COM_TARGET,                   /* cm, likewise */
    SER_TORQUE,                       /* SIM_REPORT_TOP_DOFS of them, N m */
    SER_COUNT = SER_TORQUE + SIM_REPORT_TOP_DOFS
};

typedef struct page {
    const fb_sim* s;
    const sim_report_info* info;
    const fb_model* m;
    sim_summary sm;
    const fb_sim_frame* fr;
    int n;       /* recorded frames */
    double* ser; /* (SER_COUNT x n) */
    int nhit;
    plot_mark hit_mark[FB_SIM_MAX_BALLS + 1]; /* at each hit's contact (or its time: a miss),
                                                 then the fall when there was one */
    int nmark;                                /* nhit, + 1 with a fall */
    char hit_label[FB_SIM_MAX_BALLS][16]; /* "hit 1" ... */
    char fall_label[48];                  /* "fell: root too low" */
    char fall_text[160];                  /* sim_fall_text */
    char aim_label[2][FB_SIM_MAX_BALLS][32]; /* "hit 1, root-relative", "hit 1, in the world" */
    plot_mark tol_mark;                   /* the recovery tolerance, cm */
    bool has_residual;                    /* sim_ground_residual (a free or an assisted root) */
    sim_residual residual;
    char tol_label[48];
} page;

static double* ser(const page* p, int k) {
    return p->ser + (size_t)k * (size_t)p->n;
}

/* After the SER_COUNT series: each hit's aim point's deviation (cm), root-relative (hits
 * 0..nhit-1), then in the world (nhit..2 nhit-1); the series index of hit k's. */
static int aim_ser(const page* p, int k, bool world) {
    return SER_COUNT + (world ? p->nhit : 0) + k;
}

/* Fills the series from the recorded frames (lengths in cm, as the JSON report gives them). */
static void fill_series(page* p) {
    for (int f = 0; f < p->n; f++) {
        const fb_sim_frame* fr = &p->fr[f];
        ser(p, SER_TIME)[f] = fr->time;
        ser(p, SER_MPJPE)[f] = 100.0 * fr->metrics.mpjpe;
        ser(p, SER_MAXERR)[f] = 100.0 * fr->metrics.max_joint_err;
        for (int q = 0; q < FB_NPART; q++) {
            ser(p, SER_PART + q)[f] = 100.0 * fr->part_err[q];
        }
        ser(p, SER_GROUND)[f] = fr->ground_force;
        ser(p, SER_BALL)[f] = fr->ball_force;
        ser(p, SER_LIMITS)[f] = fr->metrics.limits_bound;
        ser(p, SER_ASSIST_F)[f] = fr->metrics.assist_force;
        ser(p, SER_ASSIST_T)[f] = fr->metrics.assist_torque;
        ser(p, SER_ASSIST_PCT)[f] = 100.0 * fr->metrics.assist_force / p->sm.weight;
        ser(p, SER_MARGIN)[f] = 100.0 * fr->com_margin;
        ser(p, SER_COM_TARGET)[f] = 100.0 * fr->com_target_dist;
        const double* tau = fb_sim_frame_tau(p->s, f);
        for (int k = 0; k < p->sm.ntop; k++) {
            ser(p, SER_TORQUE + k)[f] = tau[p->sm.top_dof[k]];
        }
        for (int k = 0; k < p->nhit; k++) {
            ser(p, aim_ser(p, k, false))[f] = 100.0 * fb_sim_frame_hit_err_root(p->s, f)[k];
            ser(p, aim_ser(p, k, true))[f] = 100.0 * fb_sim_frame_hit_err(p->s, f)[k];
        }
    }
}

/* A chart over time with the hits as events. */
static plot_chart time_chart(const page* p, const char* title, const char* y_label, int height) {
    plot_chart c = {.title = title,
                    .x_label = "time (s)",
                    .y_label = y_label,
                    .width = CHART_W,
                    .height = height,
                    .events = p->hit_mark,
                    .n_events = p->nmark,
                    .y_from_zero = true};
    if (p->n > 1) { /* the whole run, even where a series has gaps */
        c.x_range[0] = p->fr[0].time;
        c.x_range[1] = p->fr[p->n - 1].time;
    }
    return c;
}

static void add(const page* p, plot_chart* c, const char* name, int k) {
    plot_add_series(c, name, ser(p, SER_TIME), ser(p, k), p->n);
}

/* A recovery time in s: "0.35"; 0 means the error never left the tolerance, NaN that it did
 * not come back within the clip. */
static void recovery_text(double t, char* buf, size_t cap) {
    if (isnan(t)) {
        snprintf(buf, cap, "not within the clip");
    } else if (t == 0.0) {
        snprintf(buf, cap, "0 (stayed within)");
    } else {
        snprintf(buf, cap, "%.2f", t);
    }
}

/* When the struck body stayed back (fb_hit_result.hold_time): "1.62 (to 2.50)"; 0 means it
 * never left the tolerance, NaN that it was out of it at the window's end. */
static void hold_cell_text(double t, double window, char* buf, size_t cap) {
    if (isnan(t)) {
        snprintf(buf, cap, "not at %.2f", window);
    } else if (t == 0.0) {
        snprintf(buf, cap, "0 (stayed within to %.2f)", window);
    } else {
        snprintf(buf, cap, "%.2f (to %.2f)", t, window);
    }
}

/* ---- sections ------------------------------------------------------------------------- */

/* What was simulated: clip, gains, controller, root, rates, frames, the search for the
 * reference, the hits' specs. */
static void run_section(html_doc* h, const page* p) {
    const fb_gains* g = p->info->gains;
    const double frame_dt = p->n > 1 ? p->fr[1].time - p->fr[0].time : 0.0;
    const bool assisted = g->root.mode == FB_ROOT_ASSISTED;
    char gains[1100];
    html_paragraphf(h,
                    "Clip: %s; gains: %s; controller: %s; root: %s%s%s; simulated at %.0f Hz, "
                    "recorded at %.0f Hz: %d frames, %.3f s.",
                    p->info->clip_path,
                    sim_report_gains(p->info, "gains init defaults", "", gains, sizeof gains),
                    fb_controller_name(g->controller), fb_root_mode_name(g->root.mode),
                    assisted ? ", its help anchored to the " : "",
                    assisted ? fb_root_anchor_name(g->root.anchor) : "", g->rate,
                    frame_dt > 0.0 ? 1.0 / frame_dt : 0.0, p->n, p->sm.duration);
    const fb_v3 pl = fb_sim_placement(p->s), off = fb_sim_export_offset(p->s);
    const double pl_cm = 100.0 * sqrt(pl.x * pl.x + pl.y * pl.y + pl.z * pl.z);
    if (pl_cm > 0.0) {
        html_paragraphf(h,
                        "Placement: the clip was moved %.2f cm %s to put the lowest point of "
                        "the character's shapes on the ground (docs/CONTROL.md); the exported "
                        "clip and balls %s.",
                        pl_cm, pl.y >= 0.0 ? "up" : "down",
                        off.x != 0.0 || off.y != 0.0 || off.z != 0.0
                            ? "are moved back into the input's frame"
                            : "keep that placement (--keep-placement)");
    }
    const fb_sample_result* r = p->info->sample;
    if (r) {
        const fb_sample_opts* o = &p->info->sample_opts;
        char before[48], after[48], hits[224] = "";
        if (o->hit_scale > 0.0 && p->nhit > 0) {
            snprintf(hits, sizeof hits,
                     ", the struck bodies' return counted from %g to %g s after each hit over "
                     "%g m (--sample-hit-scale)",
                     FB_HIT_BACK, FB_HIT_HELD, o->hit_scale);
        }
        if (r->hit_windows > 0 && r->hit_samples != o->samples) {
            const size_t at = strlen(hits);
            snprintf(hits + at, sizeof hits - at,
                     ", %d simulations in the %d windows answering a hit", r->hit_samples,
                     r->hit_windows);
        }
        html_paragraphf(
            h,
            "Reference: sampled (--sample %d, docs/CONTROL.md §11%s): %d windows, %d "
            "joint axes offset by steps of %g rad, pulled back toward the clip by %g "
            "a window, the root's distance from the clip's path scored over %g m and its drop "
            "below the clip's height (up to its standing height, %.3f m) over %g m, the root "
            "below %g of that height a fall, %ld simulations (%d times back). Tracking the "
            "clip the character %s; tracking the sampled reference it %s.",
            o->samples, hits, r->windows, r->dofs, o->sigma_joint, o->pull, o->root_scale,
            r->stand_height, o->height_scale, o->upright, r->simulations, r->backtracks,
            sim_fall_words(r->fall_before, before, sizeof before),
            sim_fall_words(r->fall_after, after, sizeof after));
    }
    if (p->info->sample_plan) {
        html_paragraphf(h, "%s the sampling plan %s (docs/CONTROL.md §11).",
                        r ? "The search's offsets were kept in"
                          : "Reference: followed, without "
                            "a search (--sample-load),",
                        p->info->sample_plan);
    }
    if (p->info->sample_plan && !r && p->info->plan_as_searched != 0) {
        html_paragraph(h, p->info->plan_as_searched == 1
                              ? "This run is the walk the plan's search found, bit for bit."
                              : "This run is not the walk the plan's search found: other hits, "
                                "gains or options than the search's, or another build's "
                                "rounding (a searched walk holds only bit for bit).");
    }
    if (p->nhit == 0) {
        html_paragraph(h, "No hits.");
        return;
    }
    html_paragraphf(h, "%d hit%s (as --hit specs):", p->nhit, p->nhit == 1 ? "" : "s");
    char text[FB_SIM_MAX_BALLS * 560];
    size_t len = 0;
    for (int k = 0; k < p->nhit; k++) {
        char spec[512];
        fb_hit_format(&fb_sim_hits(p->s)[k].hit, spec, sizeof spec);
        len += (size_t)snprintf(text + len, sizeof text - len, "%shit %d: %s", k ? "\n" : "", k + 1,
                                spec);
        len = len < sizeof text ? len : sizeof text - 1;
    }
    html_pre(h, text);
}

/* The run's totals: tracking error, torque limits, what held or helped the root. */
static void summary_table(html_doc* h, const page* p) {
    const sim_summary* sm = &p->sm;
    const char* head[3] = {"quantity", "value", "unit"};
    html_table_begin(h, "The whole run", 3, head);
    html_cell_text(h, "MPJPE, mean over the frames");
    html_cell_num(h, 100.0 * sm->mpjpe_mean, 2);
    html_cell_text(h, "cm");
    char text[128];
    snprintf(text, sizeof text, "MPJPE, largest (at %.2f s)", sm->mpjpe_max_time);
    html_cell_text(h, text);
    html_cell_num(h, 100.0 * sm->mpjpe_max, 2);
    html_cell_text(h, "cm");
    html_cell_text(h, "MPJPE root-relative (the pose alone), mean");
    html_cell_num(h, 100.0 * sm->mpjpe_root_mean, 2);
    html_cell_text(h, "cm");
    html_cell_text(h, "root's largest distance from the clip's path");
    html_cell_num(h, 100.0 * sm->root_pos_max, 2);
    html_cell_text(h, "cm");
    snprintf(text, sizeof text, "frames with a torque limit bound (of %d)", sm->nframe);
    html_cell_text(h, text);
    html_cell_num(h, sm->limit_frames, 0);
    html_cell_text(h, "frames");
    snprintf(text, sizeof text, "largest ground force (at %.2f s; %.1f body weights)",
             sm->ground_peak_time, sm->ground_peak / sm->weight);
    html_cell_text(h, text);
    html_cell_num(h, sm->ground_peak, 0);
    html_cell_text(h, "N");
    snprintf(text, sizeof text, "frames off the ground (the longest run %.2f s)",
             sm->airborne_longest);
    html_cell_text(h, text);
    html_cell_num(h, sm->airborne_frames, 0);
    html_cell_text(h, "frames");
    if (sm->airborne_planned >= 0) {
        html_cell_text(h, "of them, frames where the clip has a foot or toe on the ground");
        html_cell_num(h, sm->airborne_planned, 0);
        html_cell_text(h, "frames");
    }
    html_cell_text(h, "fall");
    html_cell_text(h, p->fall_text[0] ? p->fall_text : "none: a kinematic root cannot fall");
    html_cell_text(h, "");
    const fb_root_mode mode = p->info->gains->root.mode;
    if (mode == FB_ROOT_FREE) { /* nothing holds or helps it */
        html_cell_text(h, "root assistance");
        html_cell_text(h, "none (free root)");
        html_cell_text(h, "");
    } else {
        /* a kinematic root's constraint holds the body up (fb_sim_root_support) */
        const char* what = mode == FB_ROOT_KINEMATIC ? "kinematic root's hold" : "root assistance";
        snprintf(text, sizeof text, "%s: mean force (%.1f%% of the body's weight, %.0f N)", what,
                 100.0 * sm->assist_mean_force / sm->weight, sm->weight);
        html_cell_text(h, text);
        html_cell_num(h, sm->assist_mean_force, 1);
        html_cell_text(h, "N");
        const char* names[4] = {"force impulse", "torque impulse", "peak force", "peak torque"};
        const double values[4] = {sm->assist.force_impulse, sm->assist.torque_impulse,
                                  sm->assist.peak_force, sm->assist.peak_torque};
        const char* units[4] = {"N s", "N m s", "N", "N m"};
        for (int k = 0; k < 4; k++) {
            snprintf(text, sizeof text, "%s: %s", what, names[k]);
            html_cell_text(h, text);
            html_cell_num(h, values[k], k < 2 ? 2 : 1);
            html_cell_text(h, units[k]);
        }
    }
    if (p->has_residual) {
        snprintf(text, sizeof text,
                 "help following the %sreference exactly would need: mean force (%.1f%% of "
                 "the body's weight)",
                 p->residual.sampled ? "grounded " : "",
                 100.0 * p->residual.mean_force / sm->weight);
        html_cell_text(h, text);
        html_cell_num(h, p->residual.mean_force, 1);
        html_cell_text(h, "N");
        html_cell_text(h, "the same: mean torque");
        html_cell_num(h, p->residual.mean_torque, 1);
        html_cell_text(h, "N m");
        snprintf(text, sizeof text,
                 "the reference's frames with no ground contact within %.0f cm (of %d)",
                 100.0 * SIM_RESIDUAL_MARGIN, p->residual.frames);
        html_cell_text(h, text);
        html_cell_num(h, p->residual.no_contact, 0);
        html_cell_text(h, "frames");
    }
    html_table_end(h);
}

/* One row per hit: where and when it struck, the impulse, how far the struck body was pushed
 * and how long it took to come back. */
static void hits_table(html_doc* h, const page* p) {
    char seg[96], all[96], rel[96], held[112];
    snprintf(seg, sizeof seg, "struck body back within %g cm after (s)", p->tol_mark.at);
    snprintf(all, sizeof all, "whole body (MPJPE) back within %g cm after (s)", p->tol_mark.at);
    snprintf(rel, sizeof rel, "root-relative: back within %g cm after (s)", p->tol_mark.at);
    snprintf(held, sizeof held, "root-relative: held within %g cm from (s; judged to)",
             p->tol_mark.at);
    const char* head[12] = {"hit",
                            "target",
                            "contact (s)",
                            "impulse (N s)",
                            "ball momentum change vs impulse (rel. diff.)",
                            "peak deviation (cm)",
                            "at (s)",
                            seg,
                            all,
                            "root-relative: peak deviation (cm)",
                            rel,
                            held};
    html_table_begin(h, "Hits", 12, head);
    for (int k = 0; k < p->nhit; k++) {
        const fb_hit_result* r = &fb_sim_hits(p->s)[k];
        char text[64];
        char label[32]; /* a no-break space keeps "hit 1" on one line */
        snprintf(label, sizeof label, "hit\xC2\xA0%d", k + 1);
        html_cell_text(h, label);
        html_cell_text(h, r->hit.target);
        if (!r->touched) {
            html_cell_text(h, "missed");
            for (int c = 0; c < 9; c++) {
                html_cell_text(h, "");
            }
            continue;
        }
        html_cell_num(h, r->contact_time, 3);
        html_cell_num(h, sim_hit_impulse_norm(r), 3);
        snprintf(text, sizeof text, "%.1e", sim_hit_momentum_mismatch(r));
        html_cell_text(h, text);
        html_cell_num(h, 100.0 * r->peak_err, 2);
        html_cell_num(h, r->peak_time, 3);
        recovery_text(r->recover_time, text, sizeof text);
        html_cell_text(h, text);
        recovery_text(r->mpjpe_recover_time, text, sizeof text);
        html_cell_text(h, text);
        html_cell_num(h, 100.0 * r->peak_err_root, 2);
        recovery_text(r->recover_time_root, text, sizeof text);
        html_cell_text(h, text);
        hold_cell_text(r->hold_time_root, r->hold_window, text, sizeof text);
        html_cell_text(h, text);
    }
    html_table_end(h);
}

/* Where each ball's impulse went: every body it touched, then what the root's support and
 * the ground absorbed over the window after the touch (against the run without balls). */
static void where_table(html_doc* h, const page* p) {
    const char* head[5] = {"hit", "body, or what absorbed it", "first touch (s)",
                           "impulse (N s)", "share of the ball's impulse"};
    html_table_begin(h, "Where each ball's impulse went", 5, head);
    fb_hit_body* b = malloc(((size_t)p->m->nbody + 1) * sizeof *b);
    for (int k = 0; b && k < p->nhit; k++) {
        const fb_hit_result* r = &fb_sim_hits(p->s)[k];
        if (!r->touched) {
            continue;
        }
        char label[32], text[96];
        snprintf(label, sizeof label, "hit\xC2\xA0%d", k + 1);
        const int n = sim_hit_bodies_sorted(p->s, k, b);
        for (int i = 0; i < n; i++) {
            const fb_v3 j = b[i].impulse;
            html_cell_text(h, label);
            html_cell_text(h, p->m->name[b[i].body]);
            html_cell_num(h, b[i].time, 3);
            html_cell_num(h, sqrt(j.x * j.x + j.y * j.y + j.z * j.z), 3);
            snprintf(text, sizeof text, "%.0f%%", 100.0 * sim_hit_share(j, r->impulse));
            html_cell_text(h, text);
        }
        const fb_v3 part[2] = {r->root_impulse, r->ground_impulse};
        const char* who[2] = {"absorbed by the root", "absorbed by the ground"};
        for (int i = 0; i < 2; i++) {
            const fb_v3 a = {-part[i].x, -part[i].y, -part[i].z};
            const double share = sim_hit_share(a, r->impulse);
            if (!isfinite(share)) {
                continue;
            }
            snprintf(text, sizeof text, "%s (%.2f s after the touch)", who[i], r->absorb_window);
            html_cell_text(h, label);
            html_cell_text(h, text);
            html_cell_text(h, "");
            html_cell_num(h, sqrt(a.x * a.x + a.y * a.y + a.z * a.z), 3);
            snprintf(text, sizeof text, "%.0f%%", 100.0 * share);
            html_cell_text(h, text);
        }
    }
    free(b);
    html_table_end(h);
}

static void parts_table(html_doc* h, const page* p) {
    const char* head[3] = {"body part", "mean error (cm)", "max error (cm)"};
    html_table_begin(h, "Tracking error per body part (mean over the part's joints)", 3, head);
    for (int q = 0; q < FB_NPART; q++) {
        html_cell_text(h, fb_part_name((fb_part)q));
        html_cell_num(h, 100.0 * p->sm.part_mean[q], 2);
        html_cell_num(h, 100.0 * p->sm.part_max[q], 2);
    }
    html_table_end(h);
}

/* Each ball's aim point: how far it is from where the clip puts it, root-relative (issue 18's
 * measure of a hit's return: solid) and in the world (dashed in the same colour, up to
 * PLOT_MAX_SERIES / 2 hits), against the recovery tolerance. */
static void aim_chart(html_doc* h, const page* p) {
    if (p->nhit == 0) {
        return;
    }
    plot_chart c = time_chart(p, "Each ball's aim point: its distance from where the clip puts it",
                              "deviation (cm)", CHART_H);
    c.refs = &p->tol_mark;
    c.n_refs = 1;
    const bool world = 2 * p->nhit <= PLOT_MAX_SERIES;
    for (int k = 0; k < p->nhit && k < PLOT_MAX_SERIES; k++) {
        add(p, &c, p->aim_label[0][k], aim_ser(p, k, false));
    }
    /* series k + PLOT_MAX_SERIES / 2 is series k's colour dashed: empty ones up to there */
    while (world && c.n_series < PLOT_MAX_SERIES / 2) {
        plot_add_series(&c, NULL, NULL, NULL, 0);
    }
    for (int k = 0; world && k < p->nhit; k++) {
        add(p, &c, p->aim_label[1][k], aim_ser(p, k, true));
    }
    html_chart(h, &c);
}

/* MPJPE against the recovery tolerance; every part; the struck parts with the worst joint;
 * the balls' aim points. */
static void error_charts(html_doc* h, const page* p) {
    plot_chart c = time_chart(p, "Mean per-joint position error (MPJPE)", "error (cm)", CHART_H);
    c.refs = &p->tol_mark;
    c.n_refs = 1;
    add(p, &c, "MPJPE", SER_MPJPE);
    html_chart(h, &c);

    c = time_chart(p, "Position error per body part (mean over the part's joints)", "error (cm)",
                   CHART_H);
    for (int q = 0; q < FB_NPART; q++) {
        add(p, &c, fb_part_name((fb_part)q), SER_PART + q);
    }
    html_chart(h, &c);

    /* the struck bodies' parts (each once), and the worst joint of the whole body */
    c = time_chart(p, "Struck body parts and the worst joint", "error (cm)", CHART_H);
    c.refs = &p->tol_mark;
    c.n_refs = 1;
    bool seen[FB_NPART] = {false};
    for (int k = 0; k < p->nhit; k++) {
        const fb_part q = fb_sim_body_part(p->s, fb_sim_hits(p->s)[k].body);
        if (q >= 0 && q < FB_NPART && !seen[q]) {
            seen[q] = true;
            add(p, &c, fb_part_name(q), SER_PART + q);
        }
    }
    add(p, &c, "worst joint", SER_MAXERR);
    html_chart(h, &c);
    aim_chart(h, p);
}

/* Free root: the centre of mass against the support polygon, as the balance planner saw it
 * in its last substep before each frame (gaps where it did not run: in the air, fallen). */
static void balance_section(html_doc* h, const page* p) {
    if (p->info->gains->root.mode != FB_ROOT_FREE) {
        return;
    }
    html_heading(h, 2, "Balance");
    int ran = 0;
    for (int f = 0; f < p->n; f++) {
        ran += isfinite(ser(p, SER_COM_TARGET)[f]);
    }
    html_paragraphf(h, "The balance planner (docs/CONTROL.md) ran before %d of the %d frames; "
                       "the character %s. Margin: how far the centre of mass's ground "
                       "projection is inside the support polygon (the convex hull of the feet's "
                       "ground contacts; negative: outside it; missing with fewer than three "
                       "contacts). Target distance: from the centre of mass to where the "
                       "planner steered it.",
                    ran, p->n, p->fall_text);
    static const plot_mark edge = {0.0, "edge of the support"};
    plot_chart c = time_chart(p, "Centre of mass against the support", "distance (cm)", CHART_H);
    c.refs = &edge;
    c.n_refs = 1;
    add(p, &c, "margin inside the support", SER_MARGIN);
    add(p, &c, "to the planner's target", SER_COM_TARGET);
    html_chart(h, &c);
}

/* The most loaded joints' torques, with their RMS in a table. */
static void torque_section(html_doc* h, const page* p) {
    html_heading(h, 2, "Joint torques");
    if (p->sm.ntop == 0) {
        html_paragraph(h, "The character has no actuated joints.");
        return;
    }
    char label[SIM_REPORT_TOP_DOFS][FB_NAME_MAX + 16];
    plot_chart c = time_chart(p, "Torques of the most loaded joints (largest RMS)", "torque (N m)",
                              CHART_H + 60);
    c.y_from_zero = false;
    for (int k = 0; k < p->sm.ntop; k++) {
        fb_dof_label(p->m, p->sm.top_dof[k], label[k], sizeof label[k]);
        add(p, &c, label[k], SER_TORQUE + k);
    }
    html_chart(h, &c);
    const char* head[2] = {"joint axis", "RMS torque (N m)"};
    html_table_begin(h, "The most loaded joints", 2, head);
    for (int k = 0; k < p->sm.ntop; k++) {
        html_cell_text(h, label[k]);
        html_cell_num(h, p->sm.top_rms[k], 1);
    }
    html_table_end(h);
    /* which axes sat at their limits: a joint too weak for the clip (sim_bound) */
    if (p->sm.nbound == 0) {
        html_paragraph(h, "No joint axis reached its torque limit.");
        return;
    }
    const char* bhead[5] = {"joint axis", "torque limit (N m)", "frames at it", "longest run (s)",
                            "from (s)"};
    html_table_begin(h, "The axes most often at their torque limit", 5, bhead);
    for (int k = 0; k < p->sm.nbound; k++) {
        const sim_bound* b = &p->sm.bound[k];
        char name[FB_NAME_MAX + 16];
        fb_dof_label(p->m, b->dof, name, sizeof name);
        html_cell_text(h, name);
        html_cell_num(h, b->limit, 0);
        html_cell_num(h, b->frames, 0);
        html_cell_num(h, b->longest, 2);
        html_cell_num(h, b->from, 2);
    }
    html_table_end(h);
}

/* Contact forces, what held or helped the root (kinematic, assisted) and torque limits. */
static void force_section(html_doc* h, const page* p) {
    html_heading(h, 2, "Contact forces");
    html_paragraph(h, "Each point is the contact impulse (normal and friction, impacts included) "
                      "received since the previous recorded frame divided by the time between "
                      "them: the mean force over the frame. The hits table gives each ball's "
                      "whole impulse.");
    /* apart: a ball's push is brief and can be far smaller than the ground's */
    plot_chart c = time_chart(p, "Contact force of the ground on the character (magnitude)",
                              "force (N)", CHART_H_SMALL);
    add(p, &c, "ground", SER_GROUND);
    html_chart(h, &c);
    c = time_chart(p, "Contact force of the balls on the character (magnitude)", "force (N)",
                   CHART_H_SMALL);
    add(p, &c, "balls", SER_BALL);
    html_chart(h, &c);

    if (p->info->gains->root.mode != FB_ROOT_FREE) {
        const bool held = p->info->gains->root.mode == FB_ROOT_KINEMATIC;
        html_heading(h, 2, held ? "The kinematic root's hold" : "Root assistance");
        if (held) {
            html_paragraph(h, "What the kinematic root's constraint put on the body at its root "
                              "(the feedforward and the root rows' forces), the mean over the "
                              "step before each frame: the hand it hangs from. Where the feet "
                              "do not carry the weight, it does.");
        }
        const char* wrench = held ? "Holding wrench on the root (magnitude)"
                                  : "Helping wrench on the root (magnitude)";
        c = time_chart(p, wrench, "force (N) / torque (N m)", CHART_H);
        add(p, &c, "force (N)", SER_ASSIST_F);
        add(p, &c, "torque (N m)", SER_ASSIST_T);
        html_chart(h, &c);
        const char* share = held ? "Holding force as a share of the body's weight"
                                 : "Helping force as a share of the body's weight";
        c = time_chart(p, share, "% of the weight", CHART_H_SMALL);
        add(p, &c, held ? "holding force" : "helping force", SER_ASSIST_PCT);
        if (p->has_residual) {
            add(p, &c, "ground residual", SER_RESIDUAL_PCT);
        }
        html_chart(h, &c);
        if (p->has_residual) {
            html_paragraphf(
                h,
                "Ground residual: what the ground cannot give the reference, the root wrench the "
                "reference's motion needs (inverse dynamics) less the nearest its "
                "ground contacts within %.0f cm can give inside their friction "
                "cones, at the reference's frame nearest each recorded one: the "
                "least help following it exactly would need (docs/CONTROL.md §10).%s",
                100.0 * SIM_RESIDUAL_MARGIN,
                p->residual.sampled
                    ? " This run followed a sampled reference, whose offsets are targets for the "
                      "feedback, not a motion to follow exactly: the residual is the grounded "
                      "reference's, which those offsets were laid on."
                    : "");
        }
    }

    html_heading(h, 2, "Torque limits");
    c = time_chart(p, "Joint axes whose torque sat at its limit", "axes", CHART_H_SMALL);
    add(p, &c, "axes at the limit", SER_LIMITS);
    html_chart(h, &c);
}

static int report_body(html_doc* h, void* ctx) {
    const page* p = ctx;
    run_section(h, p);
    html_heading(h, 2, "Summary");
    summary_table(h, p);
    if (p->nhit > 0) {
        hits_table(h, p);
        html_paragraph(h, "Contact: the ball's first touch. Peak deviation: the largest "
                          "distance of the aim point on the struck body from where the clip "
                          "puts it; root-relative, the same in the root's axes, simulated "
                          "and the clip's (where the body is and which way it faces left "
                          "out). Recovery times count from the hit; the whole body's from "
                          "the struck body's return on. Held from: the time after which the "
                          "root-relative deviation stays within the tolerance up to 2.5 s "
                          "after the hit (or the next hit, or the clip's end: the time in "
                          "brackets).");
        where_table(h, p);
        html_paragraph(h, "A body's impulse is what the ball gave it (impacts and contact "
                          "forces); they add up to the ball's impulse. Its share is its part "
                          "along the ball's impulse. What the root (a kinematic root's "
                          "constraint, an assisted root's help) and the ground absorbed is "
                          "their impulse on the character beyond what they gave the same "
                          "character tracking the clip without balls, from the ball's touch "
                          "on, over 1 s or up to the next hit's touch.");
    }
    html_heading(h, 2, "Tracking error");
    error_charts(h, p);
    parts_table(h, p);
    balance_section(h, p);
    torque_section(h, p);
    force_section(h, p);
    return 0;
}

fb_status sim_report_html(const fb_sim* s, const sim_report_info* info, const char* path,
                          fb_error* err) {
    page* p = calloc(1, sizeof *p);
    if (!p) {
        goto oom;
    }
    p->s = s;
    p->info = info;
    p->m = info->ch->model;
    sim_summarize(s, p->m, &p->sm);
    p->fr = fb_sim_frames(s, &p->n);
    p->nhit = fb_sim_nball(s);
    p->ser =
        malloc((size_t)(SER_COUNT + 2 * p->nhit) * (size_t)(p->n > 0 ? p->n : 1) * sizeof(double));
    if (!p->ser) {
        free(p);
        goto oom;
    }
    fill_series(p);
    p->has_residual =
        sim_report_residual(s, info, p->m, p->sm.weight, &p->residual, ser(p, SER_RESIDUAL_PCT));
    for (int k = 0; k < p->nhit; k++) {
        const fb_hit_result* r = &fb_sim_hits(s)[k];
        snprintf(p->hit_label[k], sizeof p->hit_label[k], "hit %d", k + 1);
        snprintf(p->aim_label[0][k], sizeof p->aim_label[0][k], "hit %d, root-relative", k + 1);
        snprintf(p->aim_label[1][k], sizeof p->aim_label[1][k], "hit %d, in the world", k + 1);
        p->hit_mark[k] = (plot_mark){r->touched ? r->contact_time : r->hit.time, p->hit_label[k]};
    }
    /* the fall, marked on every chart like the hits */
    p->nmark = p->nhit;
    sim_fall_text(&p->sm, info->gains->root.mode, p->fall_text, sizeof p->fall_text);
    if (p->sm.fall.cause != FB_FALL_NONE) {
        snprintf(p->fall_label, sizeof p->fall_label, "fell: %s",
                 fb_fall_cause_name(p->sm.fall.cause));
        p->hit_mark[p->nmark++] = (plot_mark){p->sm.fall.time, p->fall_label};
    }
    /* the tolerance fb_sim measured recovery with (the simulate command keeps the default) */
    const double tol_cm = 100.0 * fb_default_sim_opts().recover_tol;
    snprintf(p->tol_label, sizeof p->tol_label, "%g cm: recovery tolerance", tol_cm);
    p->tol_mark = (plot_mark){tol_cm, p->tol_label};
    char title[FB_NAME_MAX + 1100];
    const char* slash = strrchr(info->clip_path, '/');
    snprintf(title, sizeof title, "featherbone simulation report: %s",
             slash ? slash + 1 : info->clip_path);
    const fb_status st = html_save(path, title, report_body, p, err);
    free(p->ser);
    free(p);
    return st;
oom:
    if (err) {
        err->code = FB_ENOMEM;
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", path);
    }
    return FB_ENOMEM;
}
