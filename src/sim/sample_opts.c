/* The sampling search's options (fb_sample_opts, docs/CONTROL.md §11): their defaults and their
 * check, apart from the search (sample.c). */
#include "util/error.h"

#include "sim_internal.h"

fb_sample_opts fb_default_sample_opts(void) {
    return (fb_sample_opts){.samples = 40,
                            .keep = 10,
                            .window = 0.1,
                            .lookahead = 0.8,
                            .sigma_joint = 0.02,
                            .sigma_root = 0.01,
                            .root_scale = 0.05,
                            .height_scale = 0.05,
                            .upright = 0.8,
                            .pull = 0.1,
                            .seed = 1,
                            .threads = 1,
                            .backtracks = 20,
                            .hit_scale = 0.02,
                            .hit_samples = 0};
}

fb_status fb_sample_check_opts(const fb_sample_opts* o, fb_error* err) {
    if (o->samples < 1 || o->samples > FB_SAMPLE_MAX_SAMPLES) {
        return fb_fail(err, FB_EINVAL, "sampling: samples: expected 1..%d, found %d",
                       FB_SAMPLE_MAX_SAMPLES, o->samples);
    }
    if (o->keep < 1 || o->keep > o->samples) {
        return fb_fail(err, FB_EINVAL, "sampling: keep: expected 1..samples (%d), found %d",
                       o->samples, o->keep);
    }
    if (!(o->window >= 0.01 && o->window <= 10.0)) {
        return fb_fail(err, FB_EINVAL, "sampling: window: expected 0.01..10 s, found %g",
                       o->window);
    }
    if (!(o->lookahead >= 0.0 && o->lookahead <= 10.0)) {
        return fb_fail(err, FB_EINVAL, "sampling: lookahead: expected 0..10 s, found %g",
                       o->lookahead);
    }
    if (!(o->sigma_joint >= 0.0 && o->sigma_joint <= 1.0) ||
        !(o->sigma_root >= 0.0 && o->sigma_root <= 1.0)) {
        return fb_fail(err, FB_EINVAL,
                       "sampling: sigma_joint, sigma_root: expected 0..1, "
                       "found %g, %g",
                       o->sigma_joint, o->sigma_root);
    }
    if (!(o->root_scale >= 0.001 && o->root_scale <= 10.0)) {
        return fb_fail(err, FB_EINVAL, "sampling: root_scale: expected 0.001..10 m, found %g",
                       o->root_scale);
    }
    if (!(o->pull >= 0.0 && o->pull < 1.0)) {
        return fb_fail(err, FB_EINVAL, "sampling: pull: expected 0 to below 1, found %g", o->pull);
    }
    if (!(o->height_scale == 0.0 || (o->height_scale >= 0.001 && o->height_scale <= 10.0))) {
        return fb_fail(err, FB_EINVAL,
                       "sampling: height_scale: expected 0 (not counted) or 0.001..10 m, found %g",
                       o->height_scale);
    }
    if (!(o->upright >= 0.0 && o->upright < 1.0)) {
        return fb_fail(err, FB_EINVAL, "sampling: upright: expected 0..1 (below 1), found %g",
                       o->upright);
    }
    if (o->hit_samples != 0 &&
        (o->hit_samples < o->keep || o->hit_samples > FB_SAMPLE_MAX_SAMPLES)) {
        return fb_fail(err, FB_EINVAL,
                       "sampling: hit_samples: expected 0 (as samples) or keep (%d)..%d, "
                       "found %d",
                       o->keep, FB_SAMPLE_MAX_SAMPLES, o->hit_samples);
    }
    if (!(o->hit_scale >= 0.0 && o->hit_scale <= 10.0)) {
        return fb_fail(err, FB_EINVAL, "sampling: hit_scale: expected 0..10 m, found %g",
                       o->hit_scale);
    }
    if (o->backtracks < 0) {
        return fb_fail(err, FB_EINVAL, "sampling: backtracks: expected 0 or more, found %d",
                       o->backtracks);
    }
    if (o->threads < 1 || o->threads > FB_SAMPLE_MAX_THREADS) {
        return fb_fail(err, FB_EINVAL, "sampling: threads: expected 1..%d, found %d",
                       FB_SAMPLE_MAX_THREADS, o->threads);
    }
    return FB_OK;
}
