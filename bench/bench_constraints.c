/* The constraint pipeline timed on the standing humanoid (see bench_constraints.h). */
#include "bench_constraints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "stand.h"

/* Friction coefficient of the foot contacts. */
#define BC_MU 0.8

static const char* const STAGE_NAMES[BC_NSTAGE] = {"ABA", "K build", "PGS", "apply",
                                                   "K bkwd"};

const char* bench_cstage_name(bench_cstage s) {
    return (s >= 0 && s < BC_NSTAGE) ? STAGE_NAMES[s] : "?";
}

static const char* const PART_NAMES[BS_NPART] = {"step", "dynamics", "collision", "K build",
                                                 "PGS+impacts"};

const char* bench_spart_name(bench_spart p) {
    return (p >= 0 && p < BS_NPART) ? PART_NAMES[p] : "?";
}

/* The timers of a world's stats as an array in bench_spart order. */
static void step_timers(const fb_world_stats* st, double* t) {
    t[BS_TOTAL] = st->t_total;
    t[BS_DYNAMICS] = st->t_dynamics;
    t[BS_COLLISION] = st->t_collision;
    t[BS_BUILD] = st->t_build;
    t[BS_SOLVE] = st->t_solve;
}

/* The full world step of the standing humanoid, timed by the world's own timers. */
static int run_world_steps(const bench_options* opt, bench_cresult* out, fb_error* err) {
    fb_model* m = NULL;
    stand_ctl ctl;
    fb_world* w = stand_world(&m, &ctl, NULL, err);
    const int nb = opt->calls / opt->batch;
    const size_t nsamples = (size_t)opt->rounds * (size_t)nb;
    double* samples = malloc(BS_NPART * nsamples * sizeof(double));
    int rc = -1;
    long steps = 0, contacts = 0, iters = 0;
    if (!w || !samples) {
        goto done;
    }
    for (int round = -1; round < opt->rounds; round++) {
        if (!opt->quiet) {
            fprintf(stderr, "\rbench constraints: world step round %d/%d", round + 1,
                    opt->rounds);
            fflush(stderr);
        }
        for (int b = 0; b < nb; b++) {
            double t0[BS_NPART], t1[BS_NPART];
            step_timers(fb_world_get_stats(w), t0);
            for (int i = 0; i < opt->batch; i++) {
                if (fb_world_step(w, err) != FB_OK) {
                    goto done;
                }
                contacts += fb_world_get_stats(w)->contacts;
                iters += fb_world_get_stats(w)->iterations;
                if (++steps % STAND_RESET_STEPS == 0) {
                    stand_reset(w, &ctl);
                }
            }
            step_timers(fb_world_get_stats(w), t1);
            for (int p = 0; round >= 0 && p < BS_NPART; p++) {
                samples[(size_t)p * nsamples + (size_t)round * (size_t)nb + (size_t)b] =
                    (t1[p] - t0[p]) / opt->batch * 1e6;
            }
        }
    }
    for (int p = 0; p < BS_NPART; p++) {
        out->step[p] = bench_stats(samples + (size_t)p * nsamples, (int)nsamples);
    }
    out->step_contacts = (double)contacts / (double)steps;
    out->step_iterations = (double)iters / (double)steps;
    out->halvings = fb_world_get_stats(w)->halvings;
    rc = 0;
done:
    free(samples);
    fb_world_destroy(w);
    fb_model_destroy(m);
    return rc;
}

/* Two contacts under each foot and toe capsule (heel and tip of its axis, one radius down):
 * a normal row and two friction rows each. */
static fb_status add_foot_rows(fb_csys* cs, const fb_model* m, int* contacts, fb_error* err) {
    static const char* const FEET[4] = {"foot_l", "foot_r", "toe_l", "toe_r"};
    static const double LEN[4] = {0.16, 0.16, 0.03, 0.03};
    static const double RADIUS = 0.04;
    *contacts = 0;
    for (int f = 0; f < 4; f++) {
        const int body = fb_model_body_by_name(m, FEET[f]);
        for (int end = 0; end < 2; end++) {
            fb_row n = fb_default_row();
            n.body = body;
            n.p = (fb_v3){0.0, -RADIUS, end ? LEN[f] : 0.0};
            n.n = (fb_v3){0.0, 1.0, 0.0};
            n.id = (uint64_t)(3 * *contacts + 1);
            fb_status s = fb_csys_add_row(cs, &n, err);
            const int normal = cs->nrow - 1;
            for (int t = 0; s == FB_OK && t < 2; t++) {
                fb_row fr = n;
                fr.n = t ? (fb_v3){0.0, 0.0, 1.0} : (fb_v3){1.0, 0.0, 0.0};
                fr.friction_of = normal;
                fr.mu = BC_MU;
                fr.id = n.id + 1 + (uint64_t)t;
                s = fb_csys_add_row(cs, &fr, err);
            }
            if (s != FB_OK) {
                return s;
            }
            (*contacts)++;
        }
    }
    return FB_OK;
}

int bench_constraints_run(const bench_options* opt, bench_cresult* out, fb_error* err) {
    fb_model* m = scene_humanoid(err);
    fb_data* d = m ? fb_data_create(m, NULL, err) : NULL;
    const fb_model* ms[1] = {m};
    fb_data* ds[1] = {d};
    fb_csys* cs = d ? fb_csys_create(1, ms, ds, 32, NULL, err) : NULL;
    fb_csys* cb = cs ? fb_csys_create(1, ms, ds, 32, NULL, err) : NULL;
    const int nb = opt->calls / opt->batch;
    const size_t nsamples = (size_t)opt->rounds * (size_t)nb;
    double* samples = malloc(BC_NSTAGE * nsamples * sizeof(double));
    int rc = -1;
    if (!cb || !samples || add_foot_rows(cs, m, &out->contacts, err) != FB_OK ||
        add_foot_rows(cb, m, &out->contacts, err) != FB_OK) {
        goto done;
    }
    fb_csys_set_k_method(cb, FB_K_BACKWARD);
    scene_humanoid_standing(m, d->q);
    for (int round = -1; round < opt->rounds; round++) {
        if (!opt->quiet) {
            fprintf(stderr, "\rbench constraints: round %d/%d", round + 1, opt->rounds);
            fflush(stderr);
        }
        for (int b = 0; b < nb; b++) {
            double t[BC_NSTAGE] = {0};
            for (int i = 0; i < opt->batch; i++) {
                double t0 = bench_now_s();
                (void)fb_aba(m, d, NULL);
                double t1 = bench_now_s();
                (void)fb_csys_build(cs, NULL);
                double t2 = bench_now_s();
                fb_csys_solve(cs, NULL);
                double t3 = bench_now_s();
                fb_csys_apply(cs);
                double t4 = bench_now_s();
                (void)fb_csys_build(cb, NULL);
                double t5 = bench_now_s();
                t[BC_ABA] += t1 - t0;
                t[BC_BUILD] += t2 - t1;
                t[BC_SOLVE] += t3 - t2;
                t[BC_APPLY] += t4 - t3;
                t[BC_BUILD_BK] += t5 - t4;
            }
            for (int s = 0; round >= 0 && s < BC_NSTAGE; s++) {
                samples[(size_t)s * nsamples + (size_t)round * (size_t)nb + (size_t)b] =
                    t[s] / opt->batch * 1e6;
            }
        }
    }
    if (!opt->quiet) {
        fprintf(stderr, "\r%40s\r", "");
    }
    out->rows = cs->nrow;
    out->iterations = cs->iterations;
    out->residual = cs->residual;
    for (int s = 0; s < BC_NSTAGE; s++) {
        out->t[s] = bench_stats(samples + (size_t)s * nsamples, (int)nsamples);
    }
    rc = run_world_steps(opt, out, err);
done:
    free(samples);
    fb_csys_destroy(cb);
    fb_csys_destroy(cs);
    fb_data_destroy(d);
    fb_model_destroy(m);
    return rc;
}
