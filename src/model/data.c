/* fb_data: one block holding every state array and intermediate, sized from the model. */
#include "featherbone/data.h"

#include <string.h>

#include "util/block.h"
#include "util/error.h"

static size_t layout_data(fb_data* d, char* base, size_t nb, size_t nq, size_t nv) {
    size_t off = 0;
    d->q = fb_block_carve(base, &off, nq * sizeof(double));
    d->qd = fb_block_carve(base, &off, nv * sizeof(double));
    d->tau = fb_block_carve(base, &off, nv * sizeof(double));
    d->f_ext = fb_block_carve(base, &off, nb * sizeof(fb_fv));
    d->qdd = fb_block_carve(base, &off, nv * sizeof(double));
    d->M = fb_block_carve(base, &off, nv * nv * sizeof(double));
    d->XJ = fb_block_carve(base, &off, nb * sizeof(fb_xf));
    d->X_up = fb_block_carve(base, &off, nb * sizeof(fb_xf));
    d->X_0 = fb_block_carve(base, &off, nb * sizeof(fb_xf));
    d->vJ = fb_block_carve(base, &off, nb * sizeof(fb_mv));
    d->v = fb_block_carve(base, &off, nb * sizeof(fb_mv));
    d->c = fb_block_carve(base, &off, nb * sizeof(fb_mv));
    d->a = fb_block_carve(base, &off, nb * sizeof(fb_mv));
    d->IA = fb_block_carve(base, &off, nb * sizeof(fb_abi));
    d->pA_v = fb_block_carve(base, &off, nb * sizeof(fb_fv));
    d->pA = fb_block_carve(base, &off, nb * sizeof(fb_fv));
    d->U = fb_block_carve(base, &off, nv * sizeof(fb_fv));
    d->D_inv = fb_block_carve(base, &off, nb * 36 * sizeof(double));
    d->u = fb_block_carve(base, &off, nv * sizeof(double));
    d->dpA = fb_block_carve(base, &off, nb * sizeof(fb_fv));
    d->da = fb_block_carve(base, &off, nb * sizeof(fb_mv));
    d->du = fb_block_carve(base, &off, nv * sizeof(double));
    d->f = fb_block_carve(base, &off, nb * sizeof(fb_fv));
    d->IC = fb_block_carve(base, &off, nb * sizeof(fb_rbi));
    d->F = fb_block_carve(base, &off, nv * sizeof(fb_fv));
    return off;
}

fb_data* fb_data_create(const fb_model* m, const fb_allocator* alloc, fb_error* err) {
    if (!m || !m->finalized) {
        fb_fail(err, FB_ESTATE, "fb_data_create: expected a finalized model");
        return NULL;
    }
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    fb_data* d = fb_alloc(&a, sizeof *d);
    if (!d) {
        fb_fail(err, FB_ENOMEM, "fb_data_create: out of memory");
        return NULL;
    }
    memset(d, 0, sizeof *d);
    const size_t size = layout_data(d, NULL, (size_t)m->nbody, (size_t)m->nq, (size_t)m->nv);
    char* block = fb_alloc(&a, size);
    if (!block) {
        fb_free(&a, d);
        fb_fail(err, FB_ENOMEM, "fb_data_create: out of memory (%zu bytes)", size);
        return NULL;
    }
    memset(block, 0, size);
    layout_data(d, block, (size_t)m->nbody, (size_t)m->nq, (size_t)m->nv);
    d->alloc = a;
    d->block = block;
    d->nbody = m->nbody;
    d->nq = m->nq;
    d->nv = m->nv;
    fb_data_reset(m, d);
    fb_ok(err);
    return d;
}

void fb_data_destroy(fb_data* d) {
    if (!d) {
        return;
    }
    const fb_allocator a = d->alloc;
    fb_free(&a, d->block);
    fb_free(&a, d);
}

bool fb_data_copy(fb_data* dst, const fb_data* src) {
    if (dst->nbody != src->nbody || dst->nq != src->nq || dst->nv != src->nv) {
        return false;
    }
    if (dst == src) {
        return true;
    }
    fb_data shape = *dst; /* counts the block's bytes without touching dst's pointers */
    memcpy(dst->block, src->block,
           layout_data(&shape, NULL, (size_t)src->nbody, (size_t)src->nq, (size_t)src->nv));
    dst->time = src->time;
    dst->damping_dt = src->damping_dt;
    dst->stage = src->stage;
    return true;
}

void fb_data_reset(const fb_model* m, fb_data* d) {
    d->time = 0.0;
    for (int k = 0; k < m->nq; k++) {
        d->q[k] = m->q_neutral[k];
    }
    memset(d->qd, 0, (size_t)m->nv * sizeof(double));
    memset(d->tau, 0, (size_t)m->nv * sizeof(double));
    memset(d->qdd, 0, (size_t)m->nv * sizeof(double));
    memset(d->f_ext, 0, (size_t)m->nbody * sizeof(fb_fv));
    d->stage = 0;
}
