/* fb_ref: a clip made into the reference a tracking controller follows [Cline §5.1]: the
 * samples checked, repaired (repair.c: capture glitches, end segments turned out of the
 * ground), fitted smoothly at the simulation rate (fit.c: q, v, a per frame, the smoothing
 * chosen by GCV, rotations on SO(3)), placed on the ground (placement.c), given the
 * integrator's velocities and accelerations and the feedforward torques of inverse dynamics
 * (feedforward.c) and its contact plan (contact.c); and the reference read at any time
 * (fb_ref_at). ground.c makes a grounded copy of it (fb_ref_grounded).
 *
 * ref_internal.h lists what the files share. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "control/ref_internal.h"
#include "model/limit.h"
#include "util/error.h"

/* Largest output rate accepted. */
#define REF_RATE_MAX 10000.0

void fb_ref_destroy(fb_ref* r) {
    if (!r) {
        return;
    }
    const fb_allocator a = r->alloc;
    fb_free(&a, r->q);
    fb_free(&a, r->fit_half_window);
    fb_free(&a, r->contact);
    fb_free(&a, r);
}

fb_ref* fb_ref_alloc(const fb_model* m, long nf, double dt, const fb_allocator* a) {
    fb_ref* r = fb_alloc(a, sizeof *r);
    const size_t per = (size_t)m->nq + 5 * (size_t)m->nv;
    double* block = fb_alloc(a, (size_t)nf * per * sizeof(double) + 1);
    int* ints = fb_alloc(a, 4 * (size_t)m->nbody * sizeof(int));
    if (!r || !block || !ints) {
        fb_free(a, r);
        fb_free(a, block);
        fb_free(a, ints);
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->alloc = *a;
    r->q = block;
    r->fit_half_window = ints;
    r->nframe = (int)nf;
    r->nq = m->nq;
    r->nv = m->nv;
    r->dt = dt;
    r->v = r->q + (size_t)nf * (size_t)m->nq;
    r->a = r->v + (size_t)nf * (size_t)m->nv;
    r->tau = r->a + (size_t)nf * (size_t)m->nv;
    r->v_step = r->tau + (size_t)nf * (size_t)m->nv;
    r->a_step = r->v_step + (size_t)nf * (size_t)m->nv;
    r->fit_degree = ints + m->nbody;
    r->repaired = ints + 3 * m->nbody;
    memset(r->repaired, 0, (size_t)m->nbody * sizeof(int));
    return r;
}

double fb_ref_duration(const fb_ref* r) {
    return (r->nframe - 1) * r->dt;
}

/* Puts a warning line first: what moved the reference as a whole (the placement) or a segment
 * over many frames matters more than the last of many glitch lines, which drop off when there
 * are more than FB_CLIP_MAX_WARN. */
void fb_ref_warn_first(fb_ref* r, const char* text) {
    const int keep = r->nwarn < FB_CLIP_MAX_WARN ? r->nwarn : FB_CLIP_MAX_WARN - 1;
    memmove(r->warn[1], r->warn[0], (size_t)keep * sizeof r->warn[0]);
    snprintf(r->warn[0], FB_CLIP_WARN_LEN, "%s", text);
    r->nwarn++;
}

/* fb_ref_create; frame0 numbers the first sample in the warnings. */
/* Moves r's frames into the joints' ranges (fb_limit_project) and refits the rates of the
 * frames near those moved (fb_fit_rates_changed). False when out of memory or a window is
 * singular. */
static bool in_ranges(const fb_model* m, fb_ref* r, const fb_allocator* a) {
    const size_t nf = (size_t)r->nframe, nq = (size_t)m->nq;
    double* before = fb_alloc(a, (nf * nq + 2 * nq + 4 * (size_t)m->nv) * sizeof(double) +
                                     (size_t)m->nbody * sizeof(int) + nf);
    if (!before) {
        return false;
    }
    double* tmp = before + nf * nq;
    unsigned char* changed =
        (unsigned char*)(tmp + 2 * nq + 4 * (size_t)m->nv) + (size_t)m->nbody * sizeof(int);
    memcpy(before, r->q, nf * nq * sizeof(double));
    bool any = false;
    for (size_t i = 0; i < nf; i++) {
        double* qi = r->q + i * nq;
        for (int b = 1; b < m->nbody; b++) {
            fb_limit_project(&m->limit[b], m->jtype[b], qi + m->q_adr[b]);
        }
        changed[i] = memcmp(qi, before + i * nq, nq * sizeof(double)) != 0;
        any = any || changed[i];
    }
    const bool ok = !any || fb_fit_rates_changed(m, before, r, changed, tmp);
    fb_free(a, before);
    return ok;
}

static fb_ref* ref_create(const fb_model* m, int nsample, double sample_dt, const double* q,
                          double rate, const fb_fit_opts* opts, const fb_allocator* alloc,
                          int frame0, fb_error* err) {
    const fb_fit_opts o = opts ? *opts : fb_default_fit_opts();
    if (!m || !m->finalized) {
        fb_fail(err, FB_ESTATE, "reference: the model is not finalized");
        return NULL;
    }
    const bool automatic = o.half_window == 0 && o.degree == 0;
    if (!automatic && (o.half_window < 1 || o.half_window > FIT_HALF_WINDOW_MAX)) {
        fb_fail(err, FB_EINVAL, "fit half_window: expected 0 (automatic) or 1 to %d, found %d",
                FIT_HALF_WINDOW_MAX, o.half_window);
        return NULL;
    }
    if (!automatic && (o.degree < 2 || o.degree > 2 * o.half_window)) {
        fb_fail(err, FB_EINVAL, "fit degree: expected 2 to %d (2 half_window), found %d",
                2 * o.half_window, o.degree);
        return NULL;
    }
    if (nsample < 3 || !q) {
        fb_fail(err, FB_EINVAL, "reference: expected at least 3 samples, found %d", nsample);
        return NULL;
    }
    if (!(sample_dt > 0.0) || !isfinite(sample_dt)) {
        fb_fail(err, FB_EINVAL, "reference: sample interval must be > 0, found %g", sample_dt);
        return NULL;
    }
    if (!(rate >= 0.0) || rate > REF_RATE_MAX) {
        fb_fail(err, FB_EINVAL, "rate: expected 0 (the samples' rate) to %g Hz, found %g",
                REF_RATE_MAX, rate);
        return NULL;
    }
    for (long i = 0; i < (long)nsample * m->nq; i++) {
        if (!isfinite(q[i])) {
            fb_fail(err, FB_EINVAL, "reference: sample %ld, coordinate %ld is not finite",
                    i / m->nq, i % m->nq);
            return NULL;
        }
    }
    const double dt = rate > 0.0 ? 1.0 / rate : sample_dt;
    /* to the last sample or just past it: a frame time such as 0.0083333 s is not 1/120 s, and
     * a reference that stopped short of the last sample lost the clip's last frame */
    const long nf = 1 + (long)ceil((nsample - 1) * sample_dt / dt - 1e-9);
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    fb_ref* r = fb_ref_alloc(m, nf, dt, &a);
    double* score = fb_alloc(&a, (size_t)FIT_NLADDER * (size_t)m->nbody * sizeof(double));
    /* the samples the fit reads (repaired), and scratch for q[-1] */
    double* qs = fb_alloc(&a, ((size_t)nsample + 1) * (size_t)m->nq * sizeof(double) +
                                  2 * (size_t)m->nv * sizeof(double));
    fb_data* d = fb_data_create(m, &a, err);
    if (!r || !score || !qs || !d) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory for %ld frames", nf);
        goto fail;
    }
    int* choice = r->fit_half_window + 2 * m->nbody;
    memcpy(qs, q, (size_t)nsample * (size_t)m->nq * sizeof(double));
    if (!o.keep_glitches && !fb_ref_repair_glitches(m, qs, nsample, sample_dt, frame0, &a, r)) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory");
        goto fail;
    }
    if (!o.keep_glitches && !fb_ref_clear_end_segments(m, qs, nsample, frame0, d, &a, r)) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory");
        goto fail;
    }
    const int fixed[1][2] = {{o.half_window, o.degree}};
    const int(*pairs)[2] = automatic ? fb_fit_ladder : fixed;
    if (!fb_fit_choose(m, nsample, qs, pairs, automatic ? FIT_NLADDER : 1, score, choice)) {
        fb_fail(err, FB_ENUMERIC, "reference: a fit window is singular");
        goto fail;
    }
    for (int b = 0; b < m->nbody; b++) {
        r->fit_half_window[b] = pairs[choice[b]][0];
        r->fit_degree[b] = pairs[choice[b]][1];
    }
    for (long i = 0; i < nf; i++) {
        double* qi = r->q + (size_t)i * (size_t)m->nq;
        double* vi = r->v + (size_t)i * (size_t)m->nv;
        double* ai = r->a + (size_t)i * (size_t)m->nv;
        fb_q_neutral(m, qi);
        memset(vi, 0, (size_t)m->nv * sizeof(double));
        memset(ai, 0, (size_t)m->nv * sizeof(double));
        if (!fb_fit_frame(m, nsample, sample_dt, qs, i * dt / sample_dt, pairs, choice, qi, vi,
                          ai)) {
            fb_fail(err, FB_ENUMERIC, "reference: the fit at frame %ld is singular", i);
            goto fail;
        }
    }
    /* a fit near a stop overshoots it (131_03's right knee 1.4 deg past straight): the
     * reference is kept inside the joints' ranges, where the character can follow it, and
     * its rates refitted there (the overshoot's would drive the joint back off the stop) */
    if (!in_ranges(m, r, &a)) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory");
        goto fail;
    }
    if (!o.keep_glitches) {
        fb_ref_place_on_ground(m, r, qs, nsample, d);
    }
    fb_ref_feedforward(m, r, qs, nsample, sample_dt, pairs, choice, d);
    if (!fb_ref_contact_plan(m, r, d)) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory for the contact plan");
        goto fail;
    }
    fb_free(&a, score);
    fb_free(&a, qs);
    fb_data_destroy(d);
    fb_ok(err);
    return r;
fail:
    fb_free(&a, score);
    fb_free(&a, qs);
    fb_data_destroy(d);
    fb_ref_destroy(r);
    return NULL;
}

fb_ref* fb_ref_create(const fb_model* m, int nsample, double sample_dt, const double* q,
                      double rate, const fb_fit_opts* opts, const fb_allocator* alloc,
                      fb_error* err) {
    return ref_create(m, nsample, sample_dt, q, rate, opts, alloc, 0, err);
}

fb_ref* fb_ref_from_clip(const fb_clip* clip, const fb_character* ch, double rate, int first,
                         int last, const fb_fit_opts* opts, fb_error* err) {
    fb_motion* mo = fb_motion_from_clip(clip, ch, 0.0, first, last, err);
    if (!mo) {
        return NULL;
    }
    fb_ref* r = ref_create(ch->model, mo->nframe, mo->dt, mo->q, rate, opts, &clip->alloc, first,
                           err);
    fb_motion_destroy(mo);
    return r;
}

int fb_ref_frame(const fb_ref* r, double t) {
    const double x = t / r->dt;
    if (!(x > 0.0)) {
        return 0;
    }
    return x >= r->nframe - 1 ? r->nframe - 1 : (int)lround(x);
}

void fb_ref_at(const fb_model* m, const fb_ref* r, double t, double* q, double* v, double* a,
               double* tau, double* tmp) {
    const int last = r->nframe - 1;
    /* a time within 1e-6 frames of a frame is that frame (the world's clock is a sum of
     * substeps and lands a rounding error either side) */
    const double x = t / r->dt;
    int i = (int)floor(fabs(x - round(x)) < 1e-6 ? round(x) : x);
    i = i < 0 ? 0 : (i > last ? last : i);
    double s = t - i * r->dt;
    s = (s < 1e-6 * r->dt || i == last) ? 0.0 : fmin(s, r->dt);
    const int nv = m->nv;
    const double* vi = r->v_step + (size_t)i * (size_t)nv;
    const double* ai = r->a_step + (size_t)i * (size_t)nv;
    if (q) {
        /* the integrator's path: from q_i along v_step[i + 1] */
        const double* vn = (i < last) ? vi + nv : vi;
        for (int j = 0; j < nv; j++) {
            tmp[j] = vn[j] * s;
        }
        fb_integrate(m, r->q + (size_t)i * (size_t)m->nq, tmp, 1.0, q);
    }
    if (v) {
        for (int j = 0; j < nv; j++) {
            v[j] = vi[j] + ai[j] * s;
        }
    }
    if (a) {
        memcpy(a, ai, (size_t)nv * sizeof(double));
    }
    if (tau) {
        const double* t0 = r->tau + (size_t)i * (size_t)nv;
        const double* t1 = (i < last) ? t0 + nv : t0;
        const double u = s / r->dt;
        for (int j = 0; j < nv; j++) {
            tau[j] = t0[j] + u * (t1[j] - t0[j]);
        }
    }
}
