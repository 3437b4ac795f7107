/* Copying a simulation into another made alike (sim_internal.h: fb_sim_copy), for the sampling
 * search that goes on from saved simulations (sample.c). MuJoCo's mj_copyData does the same
 * for its data; here the state is spread over the world, the trackers and the records, so each
 * part copies its own (fb_world_copy, fb_tracker_copy) and this file the simulation's. */
#include <string.h>

#include "control/tracker_internal.h"
#include "util/error.h"

#include "sim_internal.h"

fb_status fb_sim_copy(fb_sim* dst, const fb_sim* src, fb_error* err) {
    const fb_model* m = src->ch->model;
    if (dst->ch != src->ch || dst->clip != src->clip || dst->nslot != src->nslot ||
        dst->nball != src->nball || dst->rec_cap != src->rec_cap || !dst->bw != !src->bw ||
        dst->dt != src->dt) {
        return fb_fail(err, FB_EINVAL,
                       "simulation copy: the simulations were not made alike "
                       "(character, clip, balls, frames, baseline, rate)");
    }
    if (dst == src) {
        return fb_ok(err);
    }
    fb_status st = fb_world_copy(dst->w, src->w, err);
    st = st == FB_OK ? fb_tracker_copy(dst->tr, src->tr, err) : st;
    if (st == FB_OK && src->bw) {
        st = fb_world_copy(dst->bw, src->bw, err);
        st = st == FB_OK ? fb_tracker_copy(dst->btr, src->btr, err) : st;
    }
    if (st != FB_OK) {
        return st;
    }
    /* everything but what dst owns or lends: its options and references, worlds, trackers,
     * ball models and arrays */
    const fb_sim keep = *dst;
    *dst = *src;
    dst->o = keep.o;
    dst->ref = keep.ref;
    dst->own_ref = keep.own_ref;
    dst->ground_ref = keep.ground_ref;
    dst->control = keep.control;
    dst->w = keep.w;
    dst->tr = keep.tr;
    dst->bw = keep.bw;
    dst->btr = keep.btr;
    memcpy(dst->ball_m, keep.ball_m, sizeof dst->ball_m);
    dst->part = keep.part;
    dst->body_err = keep.body_err;
    dst->refd = keep.refd;
    dst->tmp = keep.tmp;
    dst->frames = keep.frames;
    dst->rec_q = keep.rec_q;
    dst->rec_tau = keep.rec_tau;
    dst->rec_balls = keep.rec_balls;
    dst->rec_mpjpe = keep.rec_mpjpe;
    dst->rec_target = keep.rec_target;
    dst->touch = keep.touch;
    dst->pre_q = keep.pre_q;
    const size_t n = (size_t)src->nrec, nb = (size_t)m->nbody, nq = (size_t)m->nq;
    const size_t nv = (size_t)m->nv, ns = (size_t)src->nslot;
    memcpy(dst->frames, src->frames, n * sizeof(fb_sim_frame));
    memcpy(dst->rec_q, src->rec_q, n * nq * sizeof(double));
    memcpy(dst->rec_tau, src->rec_tau, n * nv * sizeof(double));
    memcpy(dst->rec_balls, src->rec_balls, (n * ns * 3 + 1) * sizeof(double));
    memcpy(dst->rec_target, src->rec_target, (n * ns * 2 + 1) * sizeof(double));
    memcpy(dst->rec_mpjpe, src->rec_mpjpe, n * sizeof(double));
    memcpy(dst->touch, src->touch, (ns * nb + 1) * sizeof(fb_hit_body));
    memcpy(dst->body_err, src->body_err, nb * sizeof(double));
    memcpy(dst->tmp, src->tmp, nv * sizeof(double));
    (void)fb_data_copy(dst->refd, src->refd);
    if (src->pre_q) {
        memcpy(dst->pre_q, src->pre_q, (nq + nv) * sizeof(double));
    }
    return fb_ok(err);
}

void fb_sim_control_changed(fb_sim* s, int from, int to) {
    fb_tracker_control_changed(s->tr, from, to);
    if (s->btr) {
        fb_tracker_control_changed(s->btr, from, to);
    }
}
