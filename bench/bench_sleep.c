/* A fallen character with and without sleeping, timed (see bench_sleep.h). Public API only,
 * plus the shared scenes. */
#include "bench_sleep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_simulate.h"
#include "scenes.h"

#ifndef FB_DATA_DIR
#define FB_DATA_DIR "data"
#endif

/* The scene: rate (Hz) and length (s). */
#define SLEEP_RATE 240.0
#define SLEEP_SECONDS 5.0

bench_sleep_options bench_sleep_default_options(void) {
    return (bench_sleep_options){.damping = 0.5, .sleep_speed = 0.1};
}

/* The character with damping on every joint but the root, and its first pose (q). */
typedef struct sleep_setup {
    fb_clip* clip;
    fb_character* ch;
    double* q0;
} sleep_setup;

static void setup_destroy(sleep_setup* s) {
    free(s->q0);
    fb_character_destroy(s->ch);
    fb_clip_destroy(s->clip);
}

static int setup_create(sleep_setup* s, double damping, fb_error* err) {
    memset(s, 0, sizeof *s);
    if (bench_load_character(FB_DATA_DIR "/131_01.bvh", &s->clip, &s->ch, err) != 0) {
        return -1;
    }
    int rc = -1;
    fb_motion* mo = fb_motion_from_clip(s->clip, s->ch, 0.0, 0, 1, err);
    if (!mo) {
        goto done;
    }
    fb_model* m = s->ch->model;
    for (int i = 1; i < m->nbody; i++) {
        if (m->jnv[i] > 0 && m->jtype[i] != FB_JOINT_FLOATING &&
            fb_model_set_damping(m, i, damping, err) != FB_OK) {
            goto done;
        }
    }
    s->q0 = malloc((size_t)m->nq * sizeof(double));
    if (!s->q0) {
        snprintf(err->msg, sizeof err->msg, "bench sleep: out of memory");
        goto done;
    }
    memcpy(s->q0, mo->q, (size_t)m->nq * sizeof(double));
    scene_ragdoll_lying(s->q0);
    rc = 0;
done:
    fb_motion_destroy(mo);
    if (rc != 0) {
        setup_destroy(s);
    }
    return rc;
}

/* One run of 5 s: each step's wall time (s) into t; ABA runs and rows of each step into aba,
 * rows; the step after which it fell asleep into *asleep_at (-1: it did not); the joint of the
 * fastest dof at the end into out (what keeps it awake). */
static int run_once(const sleep_setup* s, const bench_sleep_options* so, bool sleep, int steps,
                    double* t, long* aba, long* rows, int* asleep_at, bench_sleep_result* out,
                    fb_error* err) {
    const fb_model* m = s->ch->model;
    fb_world_opts o = fb_default_world_opts();
    o.dt = 1.0 / SLEEP_RATE;
    o.sleep_speed = so->sleep_speed;
    fb_world* w = fb_world_create(1, &m, &o, NULL, err);
    if (!w) {
        return -1;
    }
    fb_data* d = fb_world_data(w, 0);
    memcpy(d->q, s->q0, (size_t)m->nq * sizeof(double));
    (void)fb_world_set_sleep(w, 0, sleep, NULL);
    const fb_world_stats* st = fb_world_get_stats(w);
    *asleep_at = -1;
    int rc = 0;
    for (int k = 0; k < steps && rc == 0; k++) {
        const long aba0 = st->aba_calls;
        const double t0 = bench_now_s();
        rc = fb_world_step(w, err) == FB_OK ? 0 : -1;
        t[k] = bench_now_s() - t0;
        aba[k] = st->aba_calls - aba0;
        rows[k] = st->rows;
        if (*asleep_at < 0 && fb_world_asleep(w, 0)) {
            *asleep_at = k + 1;
        }
    }
    if (!sleep) {
        out->fastest_speed = 0.0;
        for (int j = 0; j < m->nv; j++) {
            if (fabs(d->qd[j]) > out->fastest_speed) {
                out->fastest_speed = fabs(d->qd[j]);
                snprintf(out->fastest_joint, sizeof out->fastest_joint, "%s",
                         m->name[m->dof_body[j]]);
            }
        }
    }
    fb_world_destroy(w);
    return rc;
}

int bench_sleep_run(const bench_options* opt, const bench_sleep_options* so,
                    bench_sleep_result* out, fb_error* err) {
    memset(out, 0, sizeof *out);
    sleep_setup s;
    if (setup_create(&s, so->damping, err) != 0) {
        return -1;
    }
    const int steps = (int)(SLEEP_SECONDS * SLEEP_RATE + 0.5), rounds = opt->rounds;
    const size_t n = (size_t)steps;
    /* per run: this run's step times; pooled samples per [run][part] over the rounds */
    double* t = malloc(n * sizeof(double));
    long* aba = malloc(2 * n * sizeof(long));
    long* rows = malloc(2 * n * sizeof(long));
    double* pool[2][2];
    double* rtf[2] = {malloc((size_t)rounds * sizeof(double)),
                      malloc((size_t)rounds * sizeof(double))};
    int npool[2][2] = {{0, 0}, {0, 0}};
    bool ok = t && aba && rows && rtf[0] && rtf[1];
    for (int r = 0; r < 2; r++) {
        for (int p = 0; p < 2; p++) {
            pool[r][p] = malloc(n * (size_t)rounds * sizeof(double));
            ok = ok && pool[r][p];
        }
    }
    int rc = -1;
    if (!ok) {
        snprintf(err->msg, sizeof err->msg, "bench sleep: out of memory");
        goto done;
    }
    int split = steps;
    for (int round = -1; round < rounds; round++) { /* round -1 warms up */
        if (!opt->quiet) {
            fprintf(stderr, "\rbench sleep: round %d/%d", round + 1, rounds);
            fflush(stderr);
        }
        for (int i = 0; i < 2; i++) {
            const int run = (round & 1) ? 1 - i : i; /* on, off; then off, on */
            int asleep_at;
            if (run_once(&s, so, run == BSLEEP_ON, steps, t, aba + run * steps,
                         rows + run * steps, &asleep_at, out, err) != 0) {
                goto done;
            }
            if (run == BSLEEP_ON) {
                split = asleep_at < 0 ? steps : asleep_at;
            }
            if (round < 0) {
                continue;
            }
            double total = 0.0;
            for (int k = 0; k < steps; k++) {
                total += t[k];
            }
            rtf[run][round] = SLEEP_SECONDS / total;
            /* split where the latest run with sleep fell asleep (an off-first round's off run
             * takes the previous round's, the warm-up's at least: the runs are deterministic) */
            for (int k = 0; k < steps; k++) {
                const int p = k < split ? BSLEEP_BEFORE : BSLEEP_AFTER;
                pool[run][p][npool[run][p]++] = 1e6 * t[k];
            }
        }
    }
    if (!opt->quiet) {
        fprintf(stderr, "\r%40s\r", "");
    }
    out->nbody = s.ch->model->nbody;
    out->nv = s.ch->model->nv;
    out->steps = steps;
    out->dt = 1.0 / SLEEP_RATE;
    out->rounds = rounds;
    out->step_asleep = split;
    out->t_asleep = split < steps ? split / SLEEP_RATE : -1.0;
    for (int r = 0; r < 2; r++) {
        out->rtf[r] = bench_stats(rtf[r], rounds);
        for (int p = 0; p < 2; p++) {
            const int k0 = p == BSLEEP_BEFORE ? 0 : split, k1 = p == BSLEEP_BEFORE ? split : steps;
            double a = 0.0, w = 0.0;
            for (int k = k0; k < k1; k++) {
                a += (double)aba[r * steps + k];
                w += (double)rows[r * steps + k];
            }
            out->aba[r][p] = k1 > k0 ? a / (k1 - k0) : 0.0;
            out->rows[r][p] = k1 > k0 ? w / (k1 - k0) : 0.0;
            if (npool[r][p] > 0) {
                out->step_us[r][p] = bench_stats(pool[r][p], npool[r][p]);
            }
        }
    }
    rc = 0;
done:
    free(t);
    free(aba);
    free(rows);
    free(rtf[0]);
    free(rtf[1]);
    for (int r = 0; r < 2; r++) {
        for (int p = 0; p < 2; p++) {
            free(pool[r][p]);
        }
    }
    setup_destroy(&s);
    return rc;
}
