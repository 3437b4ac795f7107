/* featherbone vs MuJoCo and Bullet on the benchmark models (see bench_peers.h). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "bench_peers.h"

#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mjmap.h"
#include "peer_bullet.h"
#include "scenes.h"
#include "stand.h"

#define PEER_NSTATE 16
#define PEER_SEED 20261121u

static const char* const CALL_NAMES[PEER_NCALL] = {"fb ABA", "mj_forward", "bt ABA", "fb RNEA",
                                                   "mj_inverse"};

const char* peer_call_name(peer_call c) {
    return (c >= 0 && c < PEER_NCALL) ? CALL_NAMES[c] : "?";
}

/* Everything one model's contestants need, with the 16 states in each one's own layout. */
typedef struct peer_ctx {
    const fb_model* m;
    fb_data* d;
    mjModel* mj;
    mjData* md;
    bullet_peer* bt;
    double *q, *qd, *qdd;          /* ours (PEER_NSTATE x nq / nv) */
    double *qpos, *qvel, *qacc;    /* MuJoCo's */
    double* tau;
} peer_ctx;

/* One call of contestant c on state s. */
static void call(peer_ctx* x, peer_call c, int s) {
    const fb_model* m = x->m;
    const size_t nq = (size_t)m->nq, nv = (size_t)m->nv;
    switch (c) {
    case PEER_FB_ABA:
    case PEER_FB_RNEA:
        memcpy(x->d->q, x->q + s * nq, nq * sizeof(double));
        memcpy(x->d->qd, x->qd + s * nv, nv * sizeof(double));
        if (c == PEER_FB_ABA) {
            (void)fb_aba(m, x->d, NULL);
        } else {
            fb_rnea(m, x->d, x->qdd + s * nv, x->tau);
        }
        break;
    case PEER_MJ_FORWARD:
    case PEER_MJ_INVERSE:
        memcpy(x->md->qpos, x->qpos + s * nq, nq * sizeof(double));
        memcpy(x->md->qvel, x->qvel + s * nv, nv * sizeof(double));
        if (c == PEER_MJ_FORWARD) {
            mj_forward(x->mj, x->md);
        } else {
            memcpy(x->md->qacc, x->qacc + s * nv, nv * sizeof(double));
            mj_inverse(x->mj, x->md);
        }
        break;
    case PEER_BT_ABA:
        bullet_peer_set_state(x->bt, x->q + s * nq, x->qd + s * nv);
        bullet_peer_aba(x->bt);
        break;
    case PEER_NCALL:
        break;
    }
}

/* MuJoCo's model of featherbone model m through the exporter; NULL with err on failure. */
static mjModel* export_to_mujoco(const fb_model* m, const char* name, fb_error* err) {
    char dir[] = "/tmp/fbpeerXXXXXX", path[128], msg[1000] = "";
    if (!mkdtemp(dir)) {
        err->code = FB_EIO;
        snprintf(err->msg, sizeof err->msg, "bench --peers: cannot make a temporary directory");
        return NULL;
    }
    snprintf(path, sizeof path, "%s/model.xml", dir);
    mjModel* mj = NULL;
    if (fb_model_write_mjcf(m, name, path, err) == FB_OK) {
        mj = mj_loadXML(path, NULL, msg, sizeof msg);
        if (!mj) {
            err->code = FB_EINVAL;
            snprintf(err->msg, sizeof err->msg, "MuJoCo could not load the export: %.400s", msg);
        }
        unlink(path);
    }
    rmdir(dir);
    return mj;
}

static fb_status load_mujoco(peer_ctx* x, int k, fb_error* err) {
    x->mj = export_to_mujoco(x->m, bench_model_name(k), err);
    if (!x->mj) {
        return err->code;
    }
    /* forward and inverse dynamics without contacts, as the reference figures */
    x->mj->opt.disableflags |= mjDSBL_CONTACT;
    x->md = mj_makeData(x->mj);
    return FB_OK;
}

/* Fills the states: BENCH_MODELS.md's, with random accelerations, in both layouts. */
static fb_status make_states(peer_ctx* x, int k, fb_error* err) {
    const fb_model* m = x->m;
    const size_t nq = (size_t)m->nq, nv = (size_t)m->nv;
    fb_mjmap map;
    char msg[256];
    if (!mjmap_make(&map, m, x->mj, msg, sizeof msg)) {
        err->code = FB_EINVAL;
        snprintf(err->msg, sizeof err->msg, "bench --peers: %s", msg);
        return FB_EINVAL;
    }
    scene_rng r = scene_rng_make(PEER_SEED + (uint64_t)k);
    for (int s = 0; s < PEER_NSTATE; s++) {
        scene_bench_state(m, x->d, &r, k == 0);
        memcpy(x->q + s * nq, x->d->q, nq * sizeof(double));
        memcpy(x->qd + s * nv, x->d->qd, nv * sizeof(double));
        for (size_t j = 0; j < nv; j++) {
            x->qdd[s * nv + j] = scene_rng_uniform(&r, -1.0, 1.0);
        }
        mjmap_qpos(&map, x->d->q, x->qpos + s * nq);
        mjmap_dofs(&map, x->d->q, x->d->qd, x->d->qd, MJMAP_VEL, x->qvel + s * nv);
        mjmap_dofs(&map, x->d->q, x->d->qd, x->qdd + s * nv, MJMAP_ACC, x->qacc + s * nv);
    }
    mjmap_free(&map);
    return FB_OK;
}

static void ctx_free(peer_ctx* x) {
    free(x->q);
    free(x->qd);
    free(x->qdd);
    free(x->qpos);
    free(x->qvel);
    free(x->qacc);
    free(x->tau);
    bullet_peer_destroy(x->bt);
    if (x->md) {
        mj_deleteData(x->md);
    }
    if (x->mj) {
        mj_deleteModel(x->mj);
    }
    fb_data_destroy(x->d);
}

static int run_model(const bench_options* opt, int k, void* out, fb_error* err) {
    peer_result* res = out;
    fb_model* m = bench_build_model(k, err);
    if (!m) {
        return -1;
    }
    peer_ctx x;
    memset(&x, 0, sizeof x);
    x.m = m;
    const size_t nq = (size_t)m->nq, nv = (size_t)m->nv, S = PEER_NSTATE;
    x.d = fb_data_create(m, NULL, err);
    x.q = malloc(S * nq * sizeof(double));
    x.qd = malloc(S * nv * sizeof(double));
    x.qdd = malloc(S * nv * sizeof(double));
    x.qpos = malloc(S * nq * sizeof(double));
    x.qvel = malloc(S * nv * sizeof(double));
    x.qacc = malloc(S * nv * sizeof(double));
    x.tau = malloc(nv * sizeof(double));
    const int nb = opt->calls / opt->batch;
    const size_t nsamples = (size_t)opt->rounds * (size_t)nb;
    double* samples = malloc(PEER_NCALL * nsamples * sizeof(double));
    int rc = -1;
    if (!x.d || !x.q || !x.qd || !x.qdd || !x.qpos || !x.qvel || !x.qacc || !x.tau || !samples) {
        err->code = FB_ENOMEM;
        snprintf(err->msg, sizeof err->msg, "bench --peers: out of memory");
        goto done;
    }
    if (load_mujoco(&x, k, err) != FB_OK || make_states(&x, k, err) != FB_OK) {
        goto done;
    }
    fb_error bt_err;
    x.bt = bullet_peer_create(m, &bt_err);
    res->have_bullet = x.bt != NULL;
    /* one warm-up round, then the measured ones; contestants interleaved batch by batch */
    int next = 0;
    for (int round = -1; round < opt->rounds; round++) {
        if (!opt->quiet) {
            fprintf(stderr, "\rbench --peers: %-8s round %d/%d", bench_model_name(k), round + 1,
                    opt->rounds);
            fflush(stderr);
        }
        for (int b = 0; b < nb; b++) {
            for (int c = 0; c < PEER_NCALL; c++) {
                if (c == PEER_BT_ABA && !x.bt) {
                    continue;
                }
                const double t0 = bench_now_s();
                for (int i = 0; i < opt->batch; i++) {
                    call(&x, (peer_call)c, (next + i) % PEER_NSTATE);
                }
                const double t = (bench_now_s() - t0) / opt->batch;
                if (round >= 0) {
                    samples[(size_t)c * nsamples + (size_t)round * (size_t)nb + (size_t)b] = t * 1e6;
                }
            }
            next = (next + opt->batch) % PEER_NSTATE;
        }
    }
    if (!opt->quiet) {
        fprintf(stderr, "\r%50s\r", "");
    }
    res->model = k;
    res->nv = m->nv;
    for (int c = 0; c < PEER_NCALL; c++) {
        if (c == PEER_BT_ABA && !x.bt) {
            res->t[c] = (bench_stat){0, 0, 0, 0};
            continue;
        }
        res->t[c] = bench_stats(samples + (size_t)c * nsamples, (int)nsamples);
    }
    rc = 0;
done:
    free(samples);
    ctx_free(&x);
    fb_model_destroy(m);
    return rc;
}

int bench_peers_run(const bench_options* opt, peer_result* out, fb_error* err) {
    return bench_each_model(opt, run_model, out, sizeof *out, err);
}

/* MuJoCo's side of the contact step: the PD torques of stand.h into qfrc_applied, then mj_step. */
static void mj_stand_step(const fb_model* m, const stand_ctl* ctl, const fb_mjmap* map,
                          mjModel* mj, mjData* md) {
    for (int i = 1; i < m->nbody; i++) {
        const fb_joint_type jt = m->jtype[i];
        if (jt == FB_JOINT_SPHERICAL || jt == FB_JOINT_REVOLUTE) {
            const int v = m->v_adr[i], dq = map->dadr[i];
            stand_pd(jt == FB_JOINT_SPHERICAL, ctl->kp + v, ctl->kd + v, md->qpos + map->qadr[i],
                     md->qvel + dq, md->qfrc_applied + dq);
        }
    }
    mj_step(mj, md);
}

/* MuJoCo's state set to featherbone's settled standing state. */
static void mj_stand_reset(const fb_mjmap* map, const stand_ctl* ctl, mjModel* mj, mjData* md) {
    mj_resetData(mj, md);
    mjmap_qpos(map, ctl->q0, md->qpos);
    mjmap_dofs(map, ctl->q0, ctl->qd0, ctl->qd0, MJMAP_VEL, md->qvel);
}

int bench_peers_step(const bench_options* opt, peer_step_result* out, fb_error* err) {
    fb_model* m = NULL;
    stand_ctl ctl;
    fb_world* w = stand_world(&m, &ctl, err);
    mjModel* mj = w ? export_to_mujoco(m, "humanoid", err) : NULL;
    mjData* md = mj ? mj_makeData(mj) : NULL;
    fb_mjmap map;
    bool have_map = false;
    const int nb = opt->calls / opt->batch;
    const size_t nsamples = (size_t)opt->rounds * (size_t)nb;
    double* samples = malloc(2 * nsamples * sizeof(double));
    int rc = -1;
    char msg[256];
    if (!md || !samples) {
        goto done;
    }
    if (!(have_map = mjmap_make(&map, m, mj, msg, sizeof msg))) {
        err->code = FB_EINVAL;
        snprintf(err->msg, sizeof err->msg, "bench --peers: %s", msg);
        goto done;
    }
    mj->opt.timestep = STAND_DT;
    mj->opt.solver = mjSOL_PGS;
    fb_data* d = fb_world_data(w, 0);
    const int pelvis_y = map.qadr[1] + 1;
    stand_reset(w, &ctl);
    mj_stand_reset(&map, &ctl, mj, md);
    long steps = 0, fb_con = 0, mj_con = 0;
    out->fb_pelvis_drop = out->mj_pelvis_drop = 0.0;
    for (int round = -1; round < opt->rounds; round++) {
        if (!opt->quiet) {
            fprintf(stderr, "\rbench --peers: contact step round %d/%d", round + 1, opt->rounds);
            fflush(stderr);
        }
        for (int b = 0; b < nb; b++) {
            double t0 = bench_now_s();
            for (int i = 0; i < opt->batch; i++) {
                if (fb_world_step(w, err) != FB_OK) {
                    goto done;
                }
                fb_con += fb_world_get_stats(w)->contacts;
            }
            double t1 = bench_now_s();
            for (int i = 0; i < opt->batch; i++) {
                mj_stand_step(m, &ctl, &map, mj, md);
                mj_con += md->ncon;
            }
            double t2 = bench_now_s();
            if (round >= 0) {
                samples[(size_t)round * (size_t)nb + (size_t)b] = (t1 - t0) / opt->batch * 1e6;
                samples[nsamples + (size_t)round * (size_t)nb + (size_t)b] =
                    (t2 - t1) / opt->batch * 1e6;
            }
            out->fb_pelvis_drop = fmax(out->fb_pelvis_drop, fabs(d->q[1] - ctl.q0[1]));
            out->mj_pelvis_drop = fmax(out->mj_pelvis_drop, fabs(md->qpos[pelvis_y] - ctl.q0[1]));
            steps += opt->batch;
            if (steps % STAND_RESET_STEPS == 0) {
                stand_reset(w, &ctl);
                mj_stand_reset(&map, &ctl, mj, md);
            }
        }
    }
    if (!opt->quiet) {
        fprintf(stderr, "\r%50s\r", "");
    }
    out->fb = bench_stats(samples, (int)nsamples);
    out->mj = bench_stats(samples + nsamples, (int)nsamples);
    out->fb_contacts = (double)fb_con / (double)steps;
    out->mj_contacts = (double)mj_con / (double)steps;
    rc = 0;
done:
    if (have_map) {
        mjmap_free(&map);
    }
    free(samples);
    if (md) {
        mj_deleteData(md);
    }
    if (mj) {
        mj_deleteModel(mj);
    }
    fb_world_destroy(w);
    fb_model_destroy(m);
    return rc;
}
