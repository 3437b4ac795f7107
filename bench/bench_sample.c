/* The sampling search timed saved against replayed (see bench_sample.h). Public API only. */
#include "bench_sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_simulate.h"

#ifndef FB_DATA_DIR
#define FB_DATA_DIR "data"
#endif

#define SAMPLE_RATE 240.0

bench_sample_options bench_sample_default_options(void) {
    return (bench_sample_options){.seconds = 2.0, .samples = 8};
}

/* One search: its wall time (s), plan and result. */
static int search(const fb_clip* clip, const fb_character* ch, const fb_gains* g,
                  const fb_sim_opts* so, fb_sample_opts o, bool replay, double* wall,
                  fb_sample_plan* plan, fb_sample_result* r, fb_error* err) {
    o.replay = replay;
    o.plan = plan;
    const double t0 = bench_now_s();
    fb_ref* ref = fb_sim_sample(clip, ch, g, NULL, 0, so, &o, NULL, NULL, r, err);
    *wall = bench_now_s() - t0;
    fb_ref_destroy(ref);
    return ref ? 0 : -1;
}

static bool same_plan(const fb_sample_plan* a, const fb_sample_plan* b) {
    const size_t n = (size_t)(a->windows + 1) * (size_t)a->dofs;
    return a->windows == b->windows && a->dofs == b->dofs &&
           memcmp(a->points, b->points, n * sizeof(double)) == 0;
}

int bench_sample_run(const bench_options* opt, const bench_sample_options* bo,
                     bench_sample_result* out, fb_error* err) {
    memset(out, 0, sizeof *out);
    fb_clip* clip = NULL;
    fb_character* ch = NULL;
    if (bench_load_character(FB_DATA_DIR "/131_01.bvh", &clip, &ch, err) != 0) {
        return -1;
    }
    int rc = -1;
    const int rounds = opt->rounds;
    double* wall = calloc(3 * (size_t)rounds, sizeof(double)); /* saved, replayed, ratio */
    int last = (int)lround(bo->seconds / clip->frame_time);    /* clip frames */
    last = last < 2 ? 2 : (last > clip->nframe ? clip->nframe : last);
    fb_ref* ref = fb_ref_from_clip(clip, ch, SAMPLE_RATE, 0, last, NULL, err);
    fb_gains g;
    if (!wall || !ref || fb_gains_init(ch->model, ref, &g, err) != FB_OK) {
        if (!wall) {
            snprintf(err->msg, sizeof err->msg, "bench sample: out of memory");
        }
        goto done;
    }
    g.root.mode = FB_ROOT_FREE;
    fb_sim_opts so = fb_default_sim_opts();
    so.last = last;
    so.ref = ref;
    fb_sample_opts o = fb_default_sample_opts();
    o.samples = bo->samples;
    o.keep = bo->samples / 4 > 1 ? bo->samples / 4 : 1;
    o.threads = 1;
    *out = (bench_sample_result){.seconds = fb_ref_duration(ref),
                                 .samples = o.samples,
                                 .keep = o.keep,
                                 .rounds = rounds,
                                 .same_plan = true};
    for (int r = 0; r < rounds; r++) {
        fb_sample_plan plan[2] = {{0}};
        fb_sample_result res[2];
        double t[2];
        for (int k = 0; k < 2; k++) {
            const int mode = (r % 2 == 0) ? k : 1 - k; /* saved first, then replayed first */
            if (!opt->quiet) {
                fprintf(stderr, "\rbench sample: round %d of %d, %s   ", r + 1, rounds,
                        mode == BSAMPLE_SAVED ? "saved" : "replayed");
            }
            if (search(clip, ch, &g, &so, o, mode == BSAMPLE_REPLAYED, &t[mode], &plan[mode],
                       &res[mode], err) != 0) {
                fb_sample_plan_free(&plan[0]);
                fb_sample_plan_free(&plan[1]);
                goto done;
            }
        }
        out->same_plan = out->same_plan && same_plan(&plan[0], &plan[1]) &&
                         res[0].simulations == res[1].simulations;
        out->windows = res[0].windows;
        out->dofs = res[0].dofs;
        out->simulations = res[0].simulations;
        out->backtracks = res[0].backtracks;
        out->fall_after = res[0].fall_after;
        wall[r] = t[BSAMPLE_SAVED];
        wall[rounds + r] = t[BSAMPLE_REPLAYED];
        wall[2 * rounds + r] = t[BSAMPLE_REPLAYED] / t[BSAMPLE_SAVED];
        fb_sample_plan_free(&plan[0]);
        fb_sample_plan_free(&plan[1]);
    }
    if (!opt->quiet) {
        fputs("\r                                              \r", stderr);
    }
    out->wall[BSAMPLE_SAVED] = bench_stats(wall, rounds);
    out->wall[BSAMPLE_REPLAYED] = bench_stats(wall + rounds, rounds);
    out->ratio = bench_stats(wall + 2 * rounds, rounds);
    rc = 0;
done:
    free(wall);
    fb_ref_destroy(ref);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    return rc;
}
