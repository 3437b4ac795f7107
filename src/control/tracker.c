/* The tracker: a world hook that makes one articulation follow a reference motion, by
 * feedforward and PD [Cline §5.1] or by acceleration constraints [Kokkevis §8.3].
 *
 * Every substep, at FB_HOOK_FORCES: the reference at the substep's time (q_d, v_d, a_d and
 * the feedforward psi), the tracking error of every joint (rotation vectors for ball joints,
 * in the child frame), and the joint torques:
 *   pd     tau = psi + K e + D e', K = max(ks |psi_joint|, kp), D = max(kd |psi_joint|, kv)
 *          [Cline eq. 5.7, 5.8] or K = kp, D = kv (plain), with e and e' those the joints will
 *          have at the end of the substep (stable PD [Tan, Liu & Turk 2011]), clamped to the
 *          torque limit;
 *   accel  tau = psi (clamped); at FB_HOOK_ROWS one acceleration row per dof asks for
 *          a_d + Kp e + Kd e' [Kokkevis eq. 22], its multiplier bounded so that tau + lambda
 *          stays within the torque limit, solved by the world with the contacts in one LCP.
 * The root: kinematic = six unbounded rows that make it follow the clip; assisted = a PD
 * wrench (the whole body's inertia times the wanted acceleration) capped in force and
 * torque; free = nothing (the assisted root's help and a free root's balance planner are in
 * tracker_root.c). */
#include <math.h>
#include <string.h>

#include "control/tracker_impl.h"
#include "control/tracker_internal.h"
#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "math/dense.h"
#include "math/detmath.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "util/error.h"

/* s: how fast a kinematic root's rows take out a drift from the clip (critically damped).
 * The rows follow the clip's acceleration exactly; this only corrects what rounding and
 * contact conflicts leave, and must be stiff: at 0.3 s a foot driven into the ground (131_01's
 * kneel) pushed the root 8 mm off and the step blew up. root.settle_time is the assisted
 * root's. */
#define KINEMATIC_ROOT_SETTLE 0.05

/* The share of a stance joint's torque limit by which its row may correct the balance plan's
 * torque (see add_rows). */
#define BAL_ROW_SHARE 0.2

/* s: the settle time of the centre of mass's PD toward the clip's (balance) */
#define BAL_COM_SETTLE 0.5

/* Row identities for warm starting: a tag, the articulation, the dof. */
#define TRACK_ROW_TAG 0x54524bull


/* Error e = q_d (-) q and its rate e' = v_d (seen in the current frame) - v, per dof; and a_d
 * seen in the current frame into ad (in place). */
static void tracking_error(const fb_tracker* tr) {
    const fb_model* m = tr->m;
    const double* q = tr->d->q;
    const double* v = tr->d->qd;
    for (int b = 1; b < m->nbody; b++) {
        const int qa = m->q_adr[b], va = m->v_adr[b];
        switch (m->jtype[b]) {
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC:
            tr->e[va] = tr->qd[qa] - q[qa];
            tr->ed[va] = tr->vd[va] - v[va];
            break;
        case FB_JOINT_SPHERICAL:
        case FB_JOINT_FLOATING: {
            const int qr = qa + (m->jtype[b] == FB_JOINT_FLOATING ? 3 : 0);
            const fb_quat cur = fb_quat_load(q + qr), des = fb_quat_load(tr->qd + qr);
            const fb_quat rel = fb_quat_mul(fb_quat_conj(cur), des); /* desired -> current */
            const fb_v3 er = fb_quat_log(rel);
            fb_v3 wd = fb_v3_make(tr->vd[va], tr->vd[va + 1], tr->vd[va + 2]);
            fb_v3 al = fb_v3_make(tr->ad[va], tr->ad[va + 1], tr->ad[va + 2]);
            wd = fb_quat_rotate(rel, wd);
            al = fb_quat_rotate(rel, al);
            const double ev[3] = {er.x, er.y, er.z}, wv[3] = {wd.x, wd.y, wd.z},
                         av[3] = {al.x, al.y, al.z};
            for (int k = 0; k < 3; k++) {
                tr->e[va + k] = ev[k];
                tr->ed[va + k] = wv[k] - v[va + k];
                tr->ad[va + k] = av[k];
            }
            if (m->jtype[b] == FB_JOINT_FLOATING) {
                /* position error and velocities of the origin, in the current body frame */
                const fb_v3 ep = fb_v3_make(tr->qd[qa] - q[qa], tr->qd[qa + 1] - q[qa + 1],
                                            tr->qd[qa + 2] - q[qa + 2]);
                const fb_v3 epb = fb_quat_rotate(fb_quat_conj(cur), ep);
                const fb_v3 vdl = fb_quat_rotate(rel, fb_v3_make(tr->vd[va + 3], tr->vd[va + 4],
                                                                 tr->vd[va + 5]));
                const fb_v3 adl = fb_quat_rotate(rel, fb_v3_make(tr->ad[va + 3], tr->ad[va + 4],
                                                                 tr->ad[va + 5]));
                const double pv[3] = {epb.x, epb.y, epb.z}, vv[3] = {vdl.x, vdl.y, vdl.z},
                             aa[3] = {adl.x, adl.y, adl.z};
                for (int k = 0; k < 3; k++) {
                    tr->e[va + 3 + k] = pv[k];
                    tr->ed[va + 3 + k] = vv[k] - v[va + 3 + k];
                    tr->ad[va + 3 + k] = aa[k];
                }
            }
            break;
        }
        case FB_JOINT_FIXED:
            break;
        }
    }
}

/* The root's height above the ground (along its normal) in configuration q. */
static double root_height(const fb_tracker* tr, const double* q) {
    const int qa = tr->m->q_adr[1];
    const fb_v3 p = fb_v3_make(q[qa], q[qa + 1], q[qa + 2]);
    return fb_v3_dot(tr->ground.n, p) - tr->ground.offset;
}

/* Whether the character has fallen (fb_fall: the root far below the clip's or tilted far from
 * it), the driven reference's pose at time t being qclip; sets tr->fall once, at the first
 * substep or recorded frame it holds. A kinematic root cannot fall. */
static void check_fall(fb_tracker* tr, const double* qclip, double t) {
    if (tr->fall.cause != FB_FALL_NONE || !tr->floating_root ||
        tr->g.root.mode == FB_ROOT_KINEMATIC) {
        return;
    }
    const int qr = tr->m->q_adr[1] + 3;
    const double h = root_height(tr, tr->d->q), hc = root_height(tr, qclip);
    /* the tilt: the angle between the up axis and where the body turns the clip root's up */
    const fb_quat cur = fb_quat_load(tr->d->q + qr), des = fb_quat_load(qclip + qr);
    const fb_v3 up_body = fb_quat_rotate(fb_quat_conj(des), tr->ground.n);
    const double c = fb_v3_dot(fb_quat_rotate(cur, up_body), tr->ground.n);
    const double tilt = fb_acos(fmax(-1.0, fmin(1.0, c)));
    fb_fall_cause cause = FB_FALL_NONE;
    if (h < FB_FALL_HEIGHT_FRACTION * hc) {
        cause = FB_FALL_HEIGHT;
    } else if (tilt > FB_FALL_TILT_DEG * FB_PI / 180.0) {
        cause = FB_FALL_TILT;
    }
    if (cause != FB_FALL_NONE) {
        tr->fall = (fb_fall){.cause = cause, .time = t, .height = h, .clip_height = hc,
                             .tilt = tilt};
    }
}

/* Each dof's PD stiffness K and damping D this substep [Cline eq. 5.7]: K = max(ks |psi_j|,
 * kp), D = max(kd |psi_j|, kv) with |psi_j| the norm over the joint's dofs, or kp, kv. */
static void pd_gains(fb_tracker* tr) {
    const fb_model* m = tr->m;
    for (int b = 1; b < m->nbody; b++) {
        if (m->jnv[b] == 0 || (tr->floating_root && b == 1)) {
            continue;
        }
        const fb_joint_gains* g = &tr->jg[b];
        const int va = m->v_adr[b], n = m->jnv[b];
        double K = g->kp, D = g->kv;
        if (tr->g.pd_form == FB_PD_CLINE) {
            double mag = 0.0;
            for (int k = 0; k < n; k++) {
                mag += tr->psi[va + k] * tr->psi[va + k];
            }
            mag = sqrt(mag);
            K = fmax(g->ks * mag, g->kp);
            D = fmax(g->kd * mag, g->kv);
        }
        for (int k = 0; k < n; k++) {
            tr->K[va + k] = K;
            tr->D[va + k] = D;
        }
    }
}

/* Stable PD [Tan, Liu & Turk 2011]: the PD terms use the error the joints will have at the
 * end of the substep, q+ = q (+) h v+ and v+ = v + h qdd, with qdd predicted by the
 * joint-space dynamics without the contacts:
 *   tau = psi + K (e + h e' + h^2 (a_d - qdd)) + D (e' + h (a_d - qdd)),
 *   (M + h D + h^2 K) qdd = psi - C + K (e + h e' + h^2 a_d) + D (e' + h a_d)
 * on the actuated rows; the root's rows take its acceleration as its rows ask for it when
 * kinematic, its wrench when assisted or free. This is backward Euler on the error dynamics:
 * stable for any gains and step, where explicit PD needs K h^2 < I and D h < 2 I of every
 * joint's inertia I, which Cline's gains (growing with |psi|) and a foot's ground contact
 * (stiffening the loop) break. On the clip (e = e' = 0) qdd = a_d and tau = psi. Tan et al.
 * predict the position with the velocity at the step's start; our integrator moves q with
 * v+, which puts h^2 K in the matrix as well. Returns false if the matrix is not positive
 * definite (then the caller uses the explicit form). */
static bool stable_pd(fb_tracker* tr, double h) {
    const fb_model* m = tr->m;
    const int nv = m->nv, r0 = tr->floating_root ? 6 : 0;
    fb_data* d = tr->dspd;
    memcpy(d->q, tr->d->q, (size_t)m->nq * sizeof(double));
    memcpy(d->qd, tr->d->qd, (size_t)nv * sizeof(double));
    fb_crba(m, d);
    fb_bias(m, d, tr->bias);
    /* a kinematic root's acceleration is known: what its rows ask for (add_rows) */
    const bool root_known = tr->floating_root && tr->g.root.mode == FB_ROOT_KINEMATIC;
    for (int k = 0; k < r0; k++) {
        tr->qdd[k] = root_known ? tr->ad[k] + tr->root_kp * tr->e[k] + tr->root_kd * tr->ed[k]
                                : 0.0;
    }
    const int u0 = root_known ? r0 : 0, n = nv - u0;
    double* A = tr->A;
    double* x = tr->qdd + u0;
    for (int i = u0; i < nv; i++) {
        const double* Mi = d->M + (size_t)i * (size_t)nv;
        for (int j = u0; j < nv; j++) {
            A[(size_t)(i - u0) * (size_t)n + (size_t)(j - u0)] = Mi[j];
        }
        double rhs = tr->tau[i] - tr->bias[i]; /* root rows: the wrench root_wrench set */
        if (i >= r0) {
            const double K = tr->K[i], D = tr->D[i];
            rhs = tr->psi[i] - tr->bias[i] + K * (tr->e[i] + h * tr->ed[i] + h * h * tr->ad[i]) +
                  D * (tr->ed[i] + h * tr->ad[i]);
            /* the joint's passive damping, implicit in the world's step (M + h B) */
            A[(size_t)(i - u0) * (size_t)n + (size_t)(i - u0)] +=
                h * (D + m->damping[m->dof_body[i]]) + h * h * K;
        }
        for (int j = 0; j < u0; j++) {
            rhs -= Mi[j] * tr->qdd[j];
        }
        x[i - u0] = rhs;
    }
    if (!fb_chol_factor(A, n)) {
        return false;
    }
    fb_chol_solve(A, n, x);
    for (int j = r0; j < nv; j++) {
        const double da = h * (tr->ad[j] - tr->qdd[j]);
        tr->tau[j] = tr->psi[j] + tr->K[j] * (tr->e[j] + h * tr->ed[j] + h * da) +
                     tr->D[j] * (tr->ed[j] + da);
    }
    return true;
}

/* The fallen body's torques (pd; accel asks it of its rows, add_rows): every joint damped
 * toward rest, tau = -D qd with D = I / FB_FALL_DAMP_TIME for the dof's inertia I, implicit
 * over the substep (stable PD with no stiffness, no feedforward and the clip's velocity zero)
 * and within FB_FALL_STRENGTH of the torque limit; the root gets nothing. */
static void fallen_torques(fb_tracker* tr, double h) {
    const fb_model* m = tr->m;
    const int r0 = tr->floating_root ? 6 : 0;
    memset(tr->tau, 0, (size_t)m->nv * sizeof(double));
    memset(tr->psi, 0, (size_t)m->nv * sizeof(double));
    fb_tracker_no_assist(tr);
    if (tr->g.controller != FB_CTRL_PD) {
        return;
    }
    for (int j = r0; j < m->nv; j++) {
        tr->e[j] = 0.0;
        tr->ed[j] = -tr->d->qd[j];
        tr->ad[j] = 0.0;
        tr->K[j] = 0.0;
        tr->D[j] = tr->M_diag[j] / FB_FALL_DAMP_TIME;
    }
    if (!stable_pd(tr, h)) {
        for (int j = r0; j < m->nv; j++) {
            tr->tau[j] = tr->D[j] * tr->ed[j];
        }
    }
    for (int j = r0; j < m->nv; j++) {
        tr->tau[j] = clampd(tr->tau[j], FB_FALL_STRENGTH * tr->jg[m->dof_body[j]].torque_limit);
    }
}

/* Joint torques for this substep (the root's come from root_wrench, before): pd, or the
 * feedforward alone (accel: the rows do the rest); clamped to each joint's limit. */
static void joint_torques(fb_tracker* tr, double h) {
    const fb_model* m = tr->m;
    const int r0 = tr->floating_root ? 6 : 0;
    bool done = false;
    if (tr->g.controller == FB_CTRL_PD) {
        pd_gains(tr);
        done = stable_pd(tr, h);
    }
    for (int j = r0; j < m->nv; j++) {
        if (!done) {
            tr->tau[j] = tr->psi[j];
            if (tr->g.controller == FB_CTRL_PD) { /* explicit PD, if the matrix failed */
                tr->tau[j] += tr->K[j] * tr->e[j] + tr->D[j] * tr->ed[j];
            }
        }
    }
    for (int b = 1; b < m->nbody; b++) {
        if (m->jnv[b] == 0 || (tr->floating_root && b == 1)) {
            continue;
        }
        for (int k = 0; k < m->jnv[b]; k++) {
            const int j = m->v_adr[b] + k;
            tr->tau[j] = clampd(tr->tau[j], tr->jg[b].torque_limit);
        }
    }
}

static fb_status add_rows(fb_tracker* tr, fb_csys* cs, fb_error* err) {
    const fb_model* m = tr->m;
    tr->row_start = cs->nrow;
    fb_row row = fb_default_row();
    row.type = FB_ROW_DOF;
    row.art = tr->art;
    for (int b = 1; b < m->nbody; b++) {
        const bool root = tr->floating_root && b == 1;
        if (m->jnv[b] == 0 || (root && tr->g.root.mode != FB_ROOT_KINEMATIC) ||
            (!root && tr->g.controller != FB_CTRL_ACCEL)) {
            continue;
        }
        /* a stance joint: its torque comes from the balance plan; its row may correct it by at
         * most BAL_ROW_SHARE of its limit */
        const bool stance = tr->balanced && !isnan(tr->btau[m->v_adr[b]]);
        const bool fallen = tr->fall.cause != FB_FALL_NONE;
        const double lim = root ? 0.0 : tr->jg[b].torque_limit * (fallen ? FB_FALL_STRENGTH : 1.0);
        for (int k = 0; k < m->jnv[b]; k++) {
            const int j = m->v_adr[b] + k;
            row.dof = j;
            row.lo = lim > 0.0 ? -lim - tr->tau[j] : -INFINITY;
            row.hi = lim > 0.0 ? lim - tr->tau[j] : INFINITY;
            if (stance) {
                const double band = BAL_ROW_SHARE * (lim > 0.0 ? lim : fabs(tr->tau[j]) + 1.0);
                row.lo = fmax(row.lo, -band);
                row.hi = fmin(row.hi, band);
            }
            /* fallen: damped toward rest (fb_fall); balancing: the planner's; else the clip
             * [Kokkevis eq. 22] */
            row.target = fallen         ? -tr->d->qd[j] / FB_FALL_DAMP_TIME
                         : tr->balanced ? tr->btarget[j]
                                        : tr->want[j];
            row.id = (TRACK_ROW_TAG << 40) | ((uint64_t)tr->art << 24) | (uint64_t)(j + 1);
            const fb_status s = fb_csys_add_row(cs, &row, err);
            if (s != FB_OK) {
                return s;
            }
        }
    }
    tr->nrow = cs->nrow - tr->row_start;
    return FB_OK;
}

static fb_status hook(void* user, fb_world* w, fb_hook_phase phase, double t, double h,
                      fb_csys* cs, fb_error* err) {
    fb_tracker* tr = user;
    if (fb_world_asleep(w, tr->art)) {
        /* a fallen body at rest (fb_world_set_sleep below): nothing to drive, no rows */
        if (phase == FB_HOOK_FORCES) {
            tr->t = t - tr->t0;
            tr->nrow = 0;
            tr->plan.info.active = false;
            memset(tr->tau, 0, (size_t)tr->m->nv * sizeof(double));
        }
        return FB_OK;
    }
    if (phase == FB_HOOK_FORCES) {
        /* a substep the world undid (halved on a deep new contact) comes again from the same
         * start: the help counted for the undone one goes */
        if (t == tr->forces_t) {
            tr->tot = tr->tot0;
            tr->anchor = tr->anchor0;
        } else {
            tr->tot0 = tr->tot;
            tr->anchor0 = tr->anchor;
            tr->forces_t = t;
        }
        tr->t = t - tr->t0;
        fb_ref_at(tr->m, tr->ctl, tr->t, tr->qd, tr->vd, tr->ad, tr->psi, tr->tmp);
        fb_tracker_anchor_at_feet(tr, h);
        for (int j = 0; j < tr->m->nv; j++) {
            /* the world's passive damping is implicit over the substep, -b (qd + h qdd): the
             * feedforward pays its h b qdd share too (inverse dynamics gave b qd) */
            tr->psi[j] += h * tr->m->damping[tr->m->dof_body[j]] * tr->ad[j];
        }
        tracking_error(tr);
        fb_tracker_wanted(tr);
        check_fall(tr, tr->qd, tr->t);
        memset(tr->tau, 0, (size_t)tr->m->nv * sizeof(double));
        tr->balanced = false;
        tr->plan.info.active = false;
        /* driven toward the clip, its joint stops meet the tracker's rows in one solve;
         * fallen, its rows only damp and its chain is limp (fb_world_set_driven) */
        (void)fb_world_set_driven(w, tr->art, tr->fall.cause == FB_FALL_NONE, NULL);
        if (tr->fall.cause != FB_FALL_NONE) {
            /* once still, the world may leave the fallen body out of its steps until a ball
             * touches it */
            (void)fb_world_set_sleep(w, tr->art, true, NULL);
            fallen_torques(tr, h);
        } else {
            fb_tracker_root_wrench(tr);
            joint_torques(tr, h);
            fb_tracker_plan_balance(tr, t, h);
        }
        memcpy(tr->d->tau, tr->tau, (size_t)tr->m->nv * sizeof(double));
        tr->tot.force_impulse += tr->assist_f * h;
        tr->tot.torque_impulse += tr->assist_n * h;
        tr->tot.peak_force = fmax(tr->tot.peak_force, tr->assist_f);
        tr->tot.peak_torque = fmax(tr->tot.peak_torque, tr->assist_n);
        return FB_OK;
    }
    return add_rows(tr, cs, err);
}

void fb_tracker_destroy(fb_tracker* tr) {
    if (!tr) {
        return;
    }
    if (tr->w) {
        /* the world outlives its tracker: it steps on without it, the character no longer
         * driven (before, the hook pointed at freed memory) */
        if (fb_world_hook_user(tr->w) == tr) {
            fb_world_set_hook(tr->w, NULL, NULL);
        }
        (void)fb_world_set_driven(tr->w, tr->art, false, NULL);
    }
    const fb_allocator a = tr->alloc;
    fb_data_destroy(tr->dref);
    fb_data_destroy(tr->dnow);
    fb_data_destroy(tr->dspd);
    fb_free(&a, tr->A);
    fb_free(&a, tr->jg);
    fb_free(&a, tr->kp_acc);
    fb_free(&a, tr->qd);
    fb_free(&a, tr->measured);
    fb_free(&a, tr->M_diag);
    fb_free(&a, tr->want);
    fb_free(&a, tr->com_ref);
    fb_balance_destroy(tr->bal);
    fb_free(&a, tr);
}

void fb_tracker_reset(fb_tracker* tr) {
    const fb_model* m = tr->m;
    memcpy(tr->d->q, tr->ctl->q, (size_t)m->nq * sizeof(double));
    memcpy(tr->d->qd, tr->ctl->v_step, (size_t)m->nv * sizeof(double));
    memset(tr->d->tau, 0, (size_t)m->nv * sizeof(double));
    memset(tr->tau, 0, (size_t)m->nv * sizeof(double)); /* measured before the first step */
    memset(tr->applied, 0, (size_t)m->nv * sizeof(double));
    tr->d->stage = 0;
    tr->t0 = fb_world_time(tr->w);
    tr->t = 0.0;
    tr->nrow = 0;
    memset(&tr->tot, 0, sizeof tr->tot);
    tr->tot0 = tr->tot;
    tr->forces_t = NAN;
    tr->anchor = tr->anchor0 = fb_v3_zero();
    tr->fall = (fb_fall){.cause = FB_FALL_NONE};
    fb_tracker_no_assist(tr);
    fb_balance_reset(tr->bal);
    (void)fb_world_set_sleep(tr->w, tr->art, false, NULL);
}

/* The arrays that live inside another's allocation: kd_acc in kp_acc's, btarget and btau in
 * want's, the per-substep ones in qd's. */
static void point_arrays(fb_tracker* tr) {
    const size_t nb = (size_t)tr->m->nbody, nv = (size_t)tr->m->nv;
    tr->kd_acc = tr->kp_acc + nb;
    tr->btarget = tr->want + nv;
    tr->btau = tr->btarget + nv;
    tr->vd = tr->qd + tr->m->nq;
    tr->ad = tr->vd + nv;
    tr->psi = tr->ad + nv;
    tr->tmp = tr->psi + nv;
    tr->e = tr->tmp + nv;
    tr->ed = tr->e + nv;
    tr->tau = tr->ed + nv;
    tr->applied = tr->tau + nv;
    tr->K = tr->applied + nv;
    tr->D = tr->K + nv;
    tr->bias = tr->D + nv;
    tr->qdd = tr->bias + nv;
}

fb_tracker* fb_tracker_create(fb_world* w, int art, const fb_ref* ref, const fb_gains* g,
                              const int* joint_of_body, fb_error* err) {
    if (!w || art < 0 || art >= fb_world_nart(w) || !ref || !g) {
        fb_fail(err, FB_EINVAL, "tracker: expected a world, an articulation in it, a reference "
                                "and gains");
        return NULL;
    }
    const fb_model* m = fb_world_model(w, art);
    if (ref->nq != m->nq || ref->nv != m->nv) {
        fb_fail(err, FB_EINVAL, "tracker: the reference was made for another model (nq %d, nv %d;"
                                " the articulation has nq %d, nv %d)",
                ref->nq, ref->nv, m->nq, m->nv);
        return NULL;
    }
    const fb_allocator a = fb_default_allocator();
    fb_tracker* tr = fb_alloc(&a, sizeof *tr);
    if (!tr) {
        fb_fail(err, FB_ENOMEM, "tracker: out of memory");
        return NULL;
    }
    memset(tr, 0, sizeof *tr);
    tr->alloc = a;
    tr->w = w;
    tr->art = art;
    tr->m = m;
    tr->d = fb_world_data(w, art);
    tr->ref = ref;
    tr->ctl = ref;
    tr->g = *g;
    const size_t nb = (size_t)m->nbody, nv = (size_t)m->nv;
    tr->jg = fb_alloc(&a, nb * sizeof(fb_joint_gains));
    tr->kp_acc = fb_alloc(&a, 2 * nb * sizeof(double));
    tr->qd = fb_alloc(&a, ((size_t)m->nq + 12 * nv) * sizeof(double));
    tr->measured = fb_alloc(&a, nb * sizeof(bool));
    tr->M_diag = fb_alloc(&a, nv * sizeof(double));
    tr->want = fb_alloc(&a, 3 * nv * sizeof(double));
    tr->com_ref = fb_alloc(&a, 3 * (size_t)(ref->nframe > 0 ? ref->nframe : 1) * sizeof(double));
    tr->bal = fb_balance_create(m, &a);
    tr->dref = fb_data_create(m, &a, err);
    tr->dnow = fb_data_create(m, &a, err);
    const bool pd = g->controller == FB_CTRL_PD;
    tr->dspd = pd ? fb_data_create(m, &a, err) : NULL;
    tr->A = pd ? fb_alloc(&a, nv * nv * sizeof(double)) : NULL;
    if (!tr->jg || !tr->kp_acc || !tr->qd || !tr->measured || !tr->M_diag || !tr->want ||
        !tr->bal || !tr->com_ref || !tr->dref || !tr->dnow ||
        (pd && (!tr->dspd || !tr->A))) {
        fb_tracker_destroy(tr);
        fb_fail(err, FB_ENOMEM, "tracker: out of memory");
        return NULL;
    }
    point_arrays(tr);
    /* all of it: the torques read before the first substep (fb_tracker_measure at the start)
     * must be defined; valgrind found frame 0 of the reports' torques uninitialised */
    memset(tr->qd, 0, ((size_t)m->nq + 12 * nv) * sizeof(double));
    if (fb_gains_resolve(g, m, tr->jg, err) != FB_OK) {
        fb_tracker_destroy(tr);
        return NULL;
    }
    for (size_t b = 0; b < nb; b++) {
        fb_gains_from_settle(tr->jg[b].settle_time, tr->jg[b].damping_ratio, &tr->kp_acc[b],
                             &tr->kd_acc[b]);
        tr->measured[b] = b > 0 && (!joint_of_body || joint_of_body[b] >= 0);
    }
    if (g->root.mode == FB_ROOT_KINEMATIC) {
        fb_gains_from_settle(KINEMATIC_ROOT_SETTLE, 1.0, &tr->root_kp, &tr->root_kd);
    } else {
        fb_gains_from_settle(g->root.settle_time, g->root.damping_ratio, &tr->root_kp,
                             &tr->root_kd);
    }
    tr->floating_root = m->nbody > 1 && m->jtype[1] == FB_JOINT_FLOATING;
    const fb_world_opts* wo = fb_world_options(w);
    tr->ground = wo->ground ? wo->plane : fb_ground_plane();
    memcpy(tr->dref->q, ref->q, (size_t)m->nq * sizeof(double));
    fb_crba(m, tr->dref);
    for (size_t j = 0; j < nv; j++) {
        tr->M_diag[j] = tr->dref->M[j * nv + j];
    }
    fb_tracker_use_control(tr, 0, tr->ctl->nframe);
    fb_gains_from_settle(BAL_COM_SETTLE, 1.0, &tr->com_kp, &tr->com_kd);
    memcpy(tr->dref->q, ref->q, (size_t)m->nq * sizeof(double));
    fb_crba(m, tr->dref);
    if (tr->floating_root) {
        /* the composite inertia of the whole body in root coordinates = M's root block */
        for (int r = 0; r < 6; r++) {
            for (int c = 0; c < 6; c++) {
                tr->root_M[r * 6 + c] = tr->dref->M[(size_t)r * nv + (size_t)c];
            }
        }
    }
    fb_world_set_hook(w, hook, tr);
    fb_tracker_reset(tr);
    fb_ok(err);
    return tr;
}

fb_status fb_tracker_set_control(fb_tracker* tr, const fb_ref* ctl, fb_error* err) {
    if (!ctl) {
        ctl = tr->ref;
    }
    if (ctl->nq != tr->ref->nq || ctl->nv != tr->ref->nv || ctl->nframe != tr->ref->nframe ||
        ctl->dt != tr->ref->dt) {
        return fb_fail(err, FB_EINVAL, "tracker: the control reference must have the metric "
                       "reference's model, rate and frames (nframe %d against %d)",
                       ctl->nframe, tr->ref->nframe);
    }
    tr->ctl = ctl;
    fb_tracker_use_control(tr, 0, tr->ctl->nframe);
    fb_tracker_reset(tr);
    return fb_ok(err);
}

void fb_tracker_control_changed(fb_tracker* tr, int from, int to) {
    fb_tracker_use_control(tr, from, to);
}

fb_status fb_tracker_copy(fb_tracker* dst, const fb_tracker* src, fb_error* err) {
    const fb_model* m = src->m;
    if (dst->m->nq != m->nq || dst->m->nv != m->nv || dst->m->nbody != m->nbody ||
        dst->ref->nframe != src->ref->nframe || !dst->dspd != !src->dspd) {
        return fb_fail(err, FB_EINVAL,
                       "tracker copy: the trackers differ in model, reference "
                       "or controller");
    }
    if (dst == src) {
        return fb_ok(err);
    }
    /* everything but what dst owns or lends: its world, data, references and arrays, and
     * what it derives from its control reference (com_ref; the planner's bearing) */
    const fb_tracker keep = *dst;
    *dst = *src;
    dst->w = keep.w;
    dst->d = keep.d;
    dst->ref = keep.ref;
    dst->ctl = keep.ctl;
    dst->jg = keep.jg;
    dst->kp_acc = keep.kp_acc;
    dst->qd = keep.qd;
    dst->A = keep.A;
    dst->dspd = keep.dspd;
    dst->M_diag = keep.M_diag;
    dst->bal = keep.bal;
    dst->want = keep.want;
    dst->com_ref = keep.com_ref;
    dst->dref = keep.dref;
    dst->dnow = keep.dnow;
    dst->measured = keep.measured;
    dst->alloc = keep.alloc;
    point_arrays(dst);
    const size_t nb = (size_t)m->nbody, nv = (size_t)m->nv, nq = (size_t)m->nq;
    memcpy(dst->jg, src->jg, nb * sizeof(fb_joint_gains));
    memcpy(dst->kp_acc, src->kp_acc, 2 * nb * sizeof(double));
    memcpy(dst->qd, src->qd, (nq + 12 * nv) * sizeof(double));
    memcpy(dst->measured, src->measured, nb * sizeof(bool));
    memcpy(dst->M_diag, src->M_diag, nv * sizeof(double));
    memcpy(dst->want, src->want, 3 * nv * sizeof(double));
    if (src->A) {
        memcpy(dst->A, src->A, nv * nv * sizeof(double));
        (void)fb_data_copy(dst->dspd, src->dspd);
    }
    (void)fb_data_copy(dst->dref, src->dref);
    fb_balance_copy(dst->bal, src->bal);
    return fb_ok(err);
}

double fb_tracker_time(const fb_tracker* tr) {
    return fb_world_time(tr->w) - tr->t0;
}

bool fb_tracker_done(const fb_tracker* tr) {
    return fb_tracker_time(tr) >= fb_ref_duration(tr->ref) - 1e-9;
}

const double* fb_tracker_torques(const fb_tracker* tr) {
    return tr->applied;
}

const fb_joint_gains* fb_tracker_gains(const fb_tracker* tr) {
    return tr->jg;
}

fb_assist_totals fb_tracker_totals(const fb_tracker* tr) {
    return tr->tot;
}

const fb_balance_info* fb_tracker_balance(const fb_tracker* tr) {
    return &tr->plan.info;
}

void fb_tracker_assist(const fb_tracker* tr, fb_v3* force, fb_v3* torque) {
    if (force) {
        *force = tr->assist_fw;
    }
    if (torque) {
        *torque = tr->assist_nw;
    }
}

fb_fall fb_tracker_fall(const fb_tracker* tr) {
    return tr->fall;
}

const char* fb_fall_cause_name(fb_fall_cause c) {
    switch (c) {
    case FB_FALL_HEIGHT: return "root too low";
    case FB_FALL_TILT: return "root tilted";
    default: return "none";
    }
}

/* tau + the multipliers of the tracker's rows in the last substep; counts the joint dofs whose
 * torque sits at its limit (a stance joint's row held inside its band of the balance plan's
 * torque is not at a limit: the joint could give more). */
static int collect_applied(fb_tracker* tr) {
    const fb_model* m = tr->m;
    memcpy(tr->applied, tr->tau, (size_t)m->nv * sizeof(double));
    const fb_csys* cs = fb_world_csys(tr->w);
    if (cs && tr->nrow > 0 && tr->row_start + tr->nrow <= cs->nrow) {
        for (int r = tr->row_start; r < tr->row_start + tr->nrow; r++) {
            const fb_row* row = &cs->row[r];
            if (row->type == FB_ROW_DOF && row->art == tr->art) {
                tr->applied[row->dof] += cs->lambda[r];
            }
        }
    }
    int bound = 0;
    for (int j = tr->floating_root ? 6 : 0; j < m->nv; j++) {
        const double lim = tr->jg[m->dof_body[j]].torque_limit;
        bound += lim > 0.0 && fabs(tr->applied[j]) >= lim * (1.0 - 1e-9);
    }
    return bound;
}

void fb_tracker_measure(fb_tracker* tr, fb_track_metrics* out, double* body_err) {
    const fb_model* m = tr->m;
    memset(out, 0, sizeof *out);
    out->time = fb_tracker_time(tr);
    out->limits_bound = collect_applied(tr);
    if (out->limits_bound > 0) {
        tr->tot.limit_substeps++;
    }
    out->assist_force = tr->assist_f;
    out->assist_torque = tr->assist_n;
    /* a state that is a fall is one in the frame that shows it, not from the next substep on
     * (the same test, state and time as that substep's) */
    if (tr->fall.cause == FB_FALL_NONE && tr->floating_root &&
        tr->g.root.mode != FB_ROOT_KINEMATIC) {
        fb_ref_at(m, tr->ctl, out->time, tr->dref->q, NULL, NULL, NULL, tr->tmp);
        check_fall(tr, tr->dref->q, out->time);
        if (tr->fall.cause != FB_FALL_NONE) {
            tr->plan.info.active = false; /* a fallen body has no balance plan */
        }
    }
    fb_ref_at(m, tr->ref, out->time, tr->dref->q, NULL, NULL, NULL, tr->tmp);
    fb_kinematics_pos(m, tr->dref);
    fb_kinematics_pos(m, tr->d);
    int n = 0;
    out->worst_body = -1;
    /* the root's frame in both poses, for the root-relative error */
    const fb_xf Xs = tr->d->X_0[1], Xr = tr->dref->X_0[1];
    for (int b = 1; b < m->nbody; b++) {
        const fb_v3 ps = fb_point_pos(m, tr->d, b, fb_v3_zero());
        const fb_v3 pr = fb_point_pos(m, tr->dref, b, fb_v3_zero());
        const double e = fb_v3_norm(fb_v3_sub(ps, pr));
        if (body_err) {
            body_err[b] = e;
        }
        if (!tr->measured[b]) {
            continue;
        }
        out->mpjpe += e;
        out->mpjpe_root += fb_v3_norm(fb_v3_sub(fb_xf_point(Xs, ps), fb_xf_point(Xr, pr)));
        n++;
        if (e > out->max_joint_err) {
            out->max_joint_err = e;
            out->worst_body = b;
        }
    }
    out->mpjpe = n ? out->mpjpe / n : 0.0;
    out->mpjpe_root = n ? out->mpjpe_root / n : 0.0;
    int na = 0;
    for (int b = 1; b < m->nbody; b++) {
        const int qa = m->q_adr[b];
        double ang;
        switch (m->jtype[b]) {
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC:
            ang = fabs(tr->dref->q[qa] - tr->d->q[qa]);
            break;
        case FB_JOINT_SPHERICAL:
        case FB_JOINT_FLOATING: {
            const int qr = qa + (m->jtype[b] == FB_JOINT_FLOATING ? 3 : 0);
            ang = fb_v3_norm(fb_quat_log(fb_quat_mul(fb_quat_conj(fb_quat_load(tr->d->q + qr)),
                                                     fb_quat_load(tr->dref->q + qr))));
            if (m->jtype[b] == FB_JOINT_FLOATING) {
                out->root_rot_err = ang;
                out->root_pos_err =
                    fb_v3_norm(fb_v3_sub(fb_v3_make(tr->d->q[qa], tr->d->q[qa + 1], tr->d->q[qa + 2]),
                                         fb_v3_make(tr->dref->q[qa], tr->dref->q[qa + 1],
                                                    tr->dref->q[qa + 2])));
                out->root_height = root_height(tr, tr->d->q);
                out->root_height_err = out->root_height - root_height(tr, tr->dref->q);
                continue;
            }
            break;
        }
        default:
            continue;
        }
        out->angle_err += ang;
        na++;
    }
    out->angle_err = na ? out->angle_err / na : 0.0;
    out->com_err = fb_v3_norm(fb_v3_sub(fb_com(m, tr->d), fb_com(m, tr->dref)));
}
