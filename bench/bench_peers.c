/* featherbone vs MuJoCo, Bullet and DART on the benchmark models (see bench_peers.h). */
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
#include "peer_dart.h"
#include "scenes.h"
#include "stand.h"

#define PEER_NSTATE 16
#define PEER_SEED 20261121u

static const char* const CALL_NAMES[PEER_NCALL] = {"fb ABA",  "mj_forward", "bt ABA",
                                                   "dt fwd",  "fb RNEA",    "mj_inverse",
                                                   "dt inv"};
static const char* const STEPPER_NAMES[STEP_N] = {"featherbone world step", "MuJoCo mj_step (PGS)",
                                                  "DART step (Dantzig)", "DART step (PGS)"};

const char* peer_call_name(peer_call c) {
    return (c >= 0 && c < PEER_NCALL) ? CALL_NAMES[c] : "?";
}

const char* peer_stepper_name(peer_stepper s) {
    return (s >= 0 && s < STEP_N) ? STEPPER_NAMES[s] : "?";
}

/* Everything one model's contestants need, with the 16 states in each one's own layout. */
typedef struct peer_ctx {
    const fb_model* m;
    fb_data* d;
    mjModel* mj;
    mjData* md;
    bullet_peer* bt;
    dart_peer *dt_fwd, *dt_inv;    /* one Skeleton each: inverse dynamics leaves its result as
                                      the joint forces, forward dynamics must see zero */
    double *q, *qd, *qdd;          /* ours (PEER_NSTATE x nq / nv) */
    double *qpos, *qvel, *qacc;    /* MuJoCo's */
    double *dpos, *dvel, *dacc;    /* DART's (PEER_NSTATE x nv) */
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
    case PEER_DT_FORWARD:
        dart_peer_set_state(x->dt_fwd, x->dpos + s * nv, x->dvel + s * nv);
        dart_peer_forward(x->dt_fwd);
        break;
    case PEER_DT_INVERSE:
        dart_peer_set_state(x->dt_inv, x->dpos + s * nv, x->dvel + s * nv);
        dart_peer_inverse(x->dt_inv, x->dacc + s * nv);
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
        if (x->dt_fwd) {
            dart_peer_to_dart(x->dt_fwd, x->q + s * nq, x->qd + s * nv, x->qdd + s * nv,
                              x->dpos + s * nv, x->dvel + s * nv, x->dacc + s * nv);
        }
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
    free(x->dpos);
    free(x->dvel);
    free(x->dacc);
    free(x->tau);
    bullet_peer_destroy(x->bt);
    dart_peer_destroy(x->dt_fwd);
    dart_peer_destroy(x->dt_inv);
    if (x->md) {
        mj_deleteData(x->md);
    }
    if (x->mj) {
        mj_deleteModel(x->mj);
    }
    fb_data_destroy(x->d);
}

/* Whether contestant c runs in this build and on this model. */
static bool have_call(const peer_result* res, peer_call c) {
    if (c == PEER_BT_ABA) {
        return res->have_bullet;
    }
    if (c == PEER_DT_FORWARD || c == PEER_DT_INVERSE) {
        return res->have_dart;
    }
    return true;
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
    x.dpos = malloc(S * nv * sizeof(double) + 1);
    x.dvel = malloc(S * nv * sizeof(double) + 1);
    x.dacc = malloc(S * nv * sizeof(double) + 1);
    x.tau = malloc(nv * sizeof(double));
    const int nb = opt->calls / opt->batch;
    const size_t nsamples = (size_t)opt->rounds * (size_t)nb;
    double* samples = malloc(PEER_NCALL * nsamples * sizeof(double));
    int rc = -1;
    if (!x.d || !x.q || !x.qd || !x.qdd || !x.qpos || !x.qvel || !x.qacc || !x.dpos || !x.dvel ||
        !x.dacc || !x.tau || !samples) {
        err->code = FB_ENOMEM;
        snprintf(err->msg, sizeof err->msg, "bench --peers: out of memory");
        goto done;
    }
    fb_error peer_err;
    x.bt = bullet_peer_create(m, &peer_err);
    res->have_bullet = x.bt != NULL;
    x.dt_fwd = dart_peer_create(m, &peer_err);
    x.dt_inv = x.dt_fwd ? dart_peer_create(m, &peer_err) : NULL;
    res->have_dart = x.dt_fwd && x.dt_inv;
    if (load_mujoco(&x, k, err) != FB_OK || make_states(&x, k, err) != FB_OK) {
        goto done;
    }
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
                if (!have_call(res, (peer_call)c)) {
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
        if (!have_call(res, (peer_call)c)) {
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

/* Every contestant of the contact step, each on its own copy of the scene. */
typedef struct step_ctx {
    fb_model* m;
    stand_ctl ctl;
    fb_world* w;
    mjModel* mj;
    mjData* md;
    fb_mjmap map;
    bool have_map;
    dart_stand* dt[2]; /* Dantzig (DART's default), PGS */
} step_ctx;

/* One step of contestant k. */
static fb_status step_one(step_ctx* x, peer_stepper k, fb_error* err) {
    switch (k) {
    case STEP_FB:
        return fb_world_step(x->w, err);
    case STEP_MJ_PGS:
        mj_stand_step(x->m, &x->ctl, &x->map, x->mj, x->md);
        break;
    case STEP_DT_DANTZIG:
    case STEP_DT_PGS:
        dart_stand_step(x->dt[k - STEP_DT_DANTZIG]);
        break;
    case STEP_N:
        break;
    }
    return FB_OK;
}

/* Contacts of contestant k's last step, and its pelvis height. */
static int step_contacts(const step_ctx* x, peer_stepper k, double* pelvis_y) {
    switch (k) {
    case STEP_FB:
        *pelvis_y = fb_world_data(x->w, 0)->q[1];
        return fb_world_get_stats(x->w)->contacts;
    case STEP_MJ_PGS:
        *pelvis_y = x->md->qpos[x->map.qadr[1] + 1];
        return x->md->ncon;
    case STEP_DT_DANTZIG:
    case STEP_DT_PGS:
        *pelvis_y = dart_stand_pelvis_y(x->dt[k - STEP_DT_DANTZIG]);
        return dart_stand_contacts(x->dt[k - STEP_DT_DANTZIG]);
    case STEP_N:
        break;
    }
    *pelvis_y = 0.0;
    return 0;
}

/* Every contestant back to the settled standing state. */
static void step_reset(step_ctx* x) {
    stand_reset(x->w, &x->ctl);
    mj_stand_reset(&x->map, &x->ctl, x->mj, x->md);
    for (int k = 0; k < 2; k++) {
        if (x->dt[k]) {
            dart_stand_reset(x->dt[k]);
        }
    }
}

static void step_free(step_ctx* x) {
    if (x->have_map) {
        mjmap_free(&x->map);
    }
    if (x->md) {
        mj_deleteData(x->md);
    }
    if (x->mj) {
        mj_deleteModel(x->mj);
    }
    dart_stand_destroy(x->dt[0]);
    dart_stand_destroy(x->dt[1]);
    fb_world_destroy(x->w);
    fb_model_destroy(x->m);
}

int bench_peers_step(const bench_options* opt, peer_step_result* out, fb_error* err) {
    step_ctx x;
    memset(&x, 0, sizeof x);
    memset(out, 0, sizeof *out);
    x.w = stand_world(&x.m, &x.ctl, NULL, err);
    x.mj = x.w ? export_to_mujoco(x.m, "humanoid", err) : NULL;
    x.md = x.mj ? mj_makeData(x.mj) : NULL;
    const int nb = opt->calls / opt->batch;
    const size_t nsamples = (size_t)opt->rounds * (size_t)nb;
    double* samples = malloc(STEP_N * nsamples * sizeof(double));
    int rc = -1;
    char msg[256];
    if (!x.md || !samples) {
        goto done;
    }
    if (!(x.have_map = mjmap_make(&x.map, x.m, x.mj, msg, sizeof msg))) {
        err->code = FB_EINVAL;
        snprintf(err->msg, sizeof err->msg, "bench --peers: %s", msg);
        goto done;
    }
    x.mj->opt.timestep = STAND_DT;
    x.mj->opt.solver = mjSOL_PGS;
    out->have[STEP_FB] = out->have[STEP_MJ_PGS] = true;
    for (int k = 0; dart_peer_version() && k < 2; k++) { /* NULL: built without DART */
        x.dt[k] = dart_stand_create(x.m, &x.ctl, k == 1, err);
        if (!x.dt[k]) {
            goto done;
        }
        out->have[STEP_DT_DANTZIG + k] = true;
    }
    step_reset(&x);
    double y0[STEP_N];
    for (int k = 0; k < STEP_N; k++) {
        (void)step_contacts(&x, (peer_stepper)k, &y0[k]);
    }
    long steps = 0, con[STEP_N] = {0};
    for (int round = -1; round < opt->rounds; round++) {
        if (!opt->quiet) {
            fprintf(stderr, "\rbench --peers: contact step round %d/%d", round + 1, opt->rounds);
            fflush(stderr);
        }
        for (int b = 0; b < nb; b++) {
            for (int k = 0; k < STEP_N; k++) {
                if (!out->have[k]) {
                    continue;
                }
                const double t0 = bench_now_s();
                for (int i = 0; i < opt->batch; i++) {
                    if (step_one(&x, (peer_stepper)k, err) != FB_OK) {
                        goto done;
                    }
                    double y;
                    con[k] += step_contacts(&x, (peer_stepper)k, &y);
                }
                const double t = (bench_now_s() - t0) / opt->batch * 1e6;
                if (round >= 0) {
                    samples[(size_t)k * nsamples + (size_t)round * (size_t)nb + (size_t)b] = t;
                }
                double y;
                (void)step_contacts(&x, (peer_stepper)k, &y);
                out->pelvis_move[k] = fmax(out->pelvis_move[k], fabs(y - y0[k]));
            }
            steps += opt->batch;
            if (steps % STAND_RESET_STEPS == 0) {
                step_reset(&x);
            }
        }
    }
    if (!opt->quiet) {
        fprintf(stderr, "\r%50s\r", "");
    }
    for (int k = 0; k < STEP_N; k++) {
        if (out->have[k]) {
            out->t[k] = bench_stats(samples + (size_t)k * nsamples, (int)nsamples);
            out->contacts[k] = (double)con[k] / (double)steps;
        }
    }
    rc = 0;
done:
    free(samples);
    step_free(&x);
    return rc;
}
