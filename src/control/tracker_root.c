/* What acts at or through a tracker's root: an assisted root's help (a capped PD wrench toward
 * the clip's root, or toward where the clip's root stands over the planted feet) and, for a
 * free root, the balance planner's targets for the joints' rows (src/control/balance.c).
 * The rest of the tracker is src/control/tracker.c. */
#include <math.h>
#include <string.h>

#include "control/tracker_impl.h"
#include "featherbone/dynamics.h"
#include "math/quat.h"
#include "math/spatial.h"

/* s: an assisted root anchored at its feet (FB_ANCHOR_FEET) moves its target with the planted
 * feet's offset from the clip's, followed at this time constant. Measured 2026-11-27 (stop 34,
 * docs/CONTROL.md §2) on 131_01 and 131_03 with gains init's assisted gains: 0.005, 0.01 and
 * 0.02 s give 29.4-30.1 % and 25.0-25.6 % of the weight in help against 44.3 and 35.9 %
 * anchored to the path, the pose alone within 0.83-0.85 and 0.74-0.75 cm either way. */
#define ANCHOR_TIME 0.02

void fb_tracker_no_assist(fb_tracker* tr) {
    tr->assist_f = tr->assist_n = 0.0;
    tr->assist_fw = tr->assist_nw = fb_v3_zero();
}

/* An assisted root anchored at its feet (FB_ANCHOR_FEET): the feet the control reference's
 * contact plan has planted at this time, their mean offset (origins, world) from where the
 * reference puts them, across the ground, followed at ANCHOR_TIME while any is planted and
 * kept while none is; the root's target (qd) is moved by it. */
void fb_tracker_anchor_at_feet(fb_tracker* tr, double h) {
    if (tr->g.root.mode != FB_ROOT_ASSISTED || tr->g.root.anchor != FB_ANCHOR_FEET ||
        !tr->floating_root) {
        return;
    }
    const fb_model* m = tr->m;
    const fb_ref* r = tr->ctl;
    const int nc = r->ncontact;
    const long i = fb_ref_frame(r, tr->t);
    memcpy(tr->dref->q, tr->qd, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, tr->dref);
    memcpy(tr->dnow->q, tr->d->q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, tr->dnow);
    fb_v3 off = fb_v3_zero();
    int n = 0;
    for (int c = 0; c < nc; c++) {
        if (r->contact[c].foot >= 0 || r->stance_at[(size_t)i * (size_t)nc + (size_t)c] < 0) {
            continue; /* a toe, or a foot in the air */
        }
        const int b = r->contact[c].body;
        off = fb_v3_add(off, fb_v3_sub(fb_point_pos(m, tr->dnow, b, fb_v3_zero()),
                                       fb_point_pos(m, tr->dref, b, fb_v3_zero())));
        n++;
    }
    if (n > 0) {
        off = fb_v3_scale(off, 1.0 / n);
        off = fb_v3_sub(off, fb_v3_scale(tr->ground.n, fb_v3_dot(off, tr->ground.n)));
        tr->anchor = fb_v3_add(tr->anchor,
                               fb_v3_scale(fb_v3_sub(off, tr->anchor), fmin(1.0, h / ANCHOR_TIME)));
    }
    const int qa = m->q_adr[1];
    tr->qd[qa] += tr->anchor.x;
    tr->qd[qa + 1] += tr->anchor.y;
    tr->qd[qa + 2] += tr->anchor.z;
}

/* The root's wrench: feedforward when kinematic (its rows do the rest), a capped PD wrench
 * when assisted, nothing when free. */
void fb_tracker_root_wrench(fb_tracker* tr) {
    fb_tracker_no_assist(tr);
    if (!tr->floating_root) {
        return;
    }
    double* t = tr->tau; /* root dofs are 0..5 */
    if (tr->g.root.mode == FB_ROOT_KINEMATIC) {
        memcpy(t, tr->psi, 6 * sizeof(double));
        return;
    }
    memset(t, 0, 6 * sizeof(double));
    if (tr->g.root.mode == FB_ROOT_FREE) {
        return;
    }
    double acc[6];
    for (int k = 0; k < 6; k++) {
        acc[k] = tr->root_kp * tr->e[k] + tr->root_kd * tr->ed[k];
    }
    for (int r = 0; r < 6; r++) {
        double s = 0.0;
        for (int c = 0; c < 6; c++) {
            s += tr->root_M[r * 6 + c] * acc[c];
        }
        t[r] = s;
    }
    const double n = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    const double f = sqrt(t[3] * t[3] + t[4] * t[4] + t[5] * t[5]);
    const double sn = n > tr->g.root.max_torque ? tr->g.root.max_torque / n : 1.0;
    const double sf = f > tr->g.root.max_force ? tr->g.root.max_force / f : 1.0;
    for (int k = 0; k < 3; k++) {
        t[k] *= sn;
        t[3 + k] *= sf;
    }
    tr->assist_n = n * sn;
    tr->assist_f = f * sf;
    /* in world axes: the root's [n; f] are in its body coordinates; its orientation is the
     * joint's rotation after the tree transform, as at the start of the substep */
    const fb_model* m = tr->m;
    const fb_quat qr = fb_quat_load(tr->d->q + m->q_adr[1] + 3);
    const fb_m3 E = m->X_tree[1].E;
    tr->assist_nw = fb_m3_tr_mv(E, fb_quat_rotate(qr, fb_v3_make(t[0], t[1], t[2])));
    tr->assist_fw = fb_m3_tr_mv(E, fb_quat_rotate(qr, fb_v3_make(t[3], t[4], t[5])));
}

/* The accelerations the tracking wants of every dof [Kokkevis eq. 22]: the clip's plus the
 * settle-time gains on the error; the root's with its own gains. */
void fb_tracker_wanted(fb_tracker* tr) {
    const fb_model* m = tr->m;
    for (int b = 1; b < m->nbody; b++) {
        const bool root = tr->floating_root && b == 1;
        const double kp = root ? tr->root_kp : tr->kp_acc[b];
        const double kd = root ? tr->root_kd : tr->kd_acc[b];
        for (int k = 0; k < m->jnv[b]; k++) {
            const int j = m->v_adr[b] + k;
            tr->want[j] = tr->ad[j] + kp * tr->e[j] + kd * tr->ed[j];
        }
    }
}

/* The centre of mass of the control reference at frames [from, to) (tr->com_ref). */
static void com_path(fb_tracker* tr, int from, int to) {
    const fb_model* m = tr->m;
    for (int f = from; f < to; f++) {
        memcpy(tr->dref->q, tr->ctl->q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, tr->dref);
        const fb_v3 c = fb_com(m, tr->dref);
        tr->com_ref[3 * f] = c.x;
        tr->com_ref[3 * f + 1] = c.y;
        tr->com_ref[3 * f + 2] = c.z;
    }
}

/* What the tracker derives from its control reference: the centre of mass's path (of frames
 * [from, to)), and which bodies carry the planned weight (the contact plan's toes touch but
 * do not). */
void fb_tracker_use_control(fb_tracker* tr, int from, int to) {
    com_path(tr, from, to);
    for (int b = 0; b < tr->m->nbody; b++) {
        fb_balance_bear(tr->bal, b, true);
    }
    for (int c = 0; c < tr->ctl->ncontact; c++) {
        if (tr->ctl->contact[c].foot >= 0) {
            fb_balance_bear(tr->bal, tr->ctl->contact[c].body, false);
        }
    }
}

/* The clip's centre of mass at the current time: the nearest frame's, its velocity and
 * acceleration by central differences of the frames around it. */
static fb_balance_com com_at(const fb_tracker* tr) {
    const fb_ref* r = tr->ctl;
    int i = fb_ref_frame(r, tr->t);
    i = i < 1 ? 1 : (i > r->nframe - 2 ? r->nframe - 2 : i); /* frames i - 1 and i + 1 too */
    fb_balance_com c = {.kp = tr->com_kp, .kd = tr->com_kd};
    if (r->nframe < 3) {
        c.c = fb_v3_make(tr->com_ref[0], tr->com_ref[1], tr->com_ref[2]);
        return c;
    }
    const double* p = tr->com_ref + 3 * (i - 1); /* frames i - 1, i, i + 1 */
    const double h = r->dt;
    double v[3], a[3];
    for (int k = 0; k < 3; k++) {
        v[k] = (p[6 + k] - p[k]) / (2.0 * h);
        a[k] = (p[6 + k] - 2.0 * p[3 + k] + p[k]) / (h * h);
    }
    c.c = fb_v3_make(p[3], p[4], p[5]);
    c.v = fb_v3_make(v[0], v[1], v[2]);
    c.a = fb_v3_make(a[0], a[1], a[2]);
    return c;
}

/* Balance (accel controller, free root): the planner's targets for the rows, and the stance
 * joints' torques. An assisted root keeps its helping wrench (root_wrench): the planner is
 * for a body that stands on its own. */
void fb_tracker_plan_balance(fb_tracker* tr, double t, double h) {
    if (!tr->bal || tr->g.controller != FB_CTRL_ACCEL || !tr->floating_root ||
        tr->g.root.mode != FB_ROOT_FREE) {
        return;
    }
    int ncon = 0;
    const fb_contact* con = fb_world_contacts_current(tr->w, &ncon);
    fb_balance_com com = com_at(tr);
    com.h = h;
    com.t = t;
    fb_balance_run(tr->bal, tr->m, tr->d, con, ncon, tr->art, fb_world_options(tr->w)->ground_mu,
                   tr->want, &com, tr->btarget, tr->btau, &tr->plan);
    tr->balanced = true;
    /* the stance dofs are driven by the torques of the plan, within their limits: their rows
     * would let the solver spread the contact forces its own way (the legs' internal forces
     * are free in a closed loop) and hold the plan's small inconsistencies rigidly */
    for (int j = 6; j < tr->m->nv; j++) {
        if (!isnan(tr->btau[j])) {
            const double lim = tr->jg[tr->m->dof_body[j]].torque_limit;
            tr->tau[j] = clampd(tr->btau[j], lim);
        }
    }
}
