/* The standing character pushed at the pelvis (see push.h): the public API and the
 * library's vector helpers. */
#include "push.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/vec3.h"

static int fail_msg(fb_error* err, const char* what) {
    snprintf(err->msg, sizeof err->msg, "push: %s", what);
    return -1;
}

void push_scene_destroy(push_scene* s) {
    fb_ref_destroy(s->stand_ctl);
    fb_ref_destroy(s->stand);
    fb_ref_destroy(s->clip_ground);
    fb_ref_destroy(s->clip_ref);
    memset(s, 0, sizeof *s);
}

int push_stand_frame(const fb_ref* g, int from, double hold) {
    const int nc = g->ncontact, need = (int)ceil(hold / g->dt);
    int run = 0;
    for (int f = from < 0 ? 0 : from; f < g->nframe && nc > 0; f++) {
        bool all = true;
        for (int c = 0; c < nc; c++) {
            all = all && g->stance_at[(size_t)f * (size_t)nc + (size_t)c] >= 0;
        }
        run = all ? run + 1 : 0;
        if (run > need) {
            return f - need;
        }
    }
    return -1;
}

int push_scene_create(const fb_clip* clip, const fb_character* ch, double rate, int frame,
                      double seconds, push_scene* s, fb_error* err) {
    memset(s, 0, sizeof *s);
    s->clip = clip;
    s->ch = ch;
    s->m = ch->model;
    s->frame = frame;
    const fb_model* m = ch->model;
    s->clip_ref = fb_ref_from_clip(clip, ch, rate, 0, 0, NULL, err);
    s->clip_ground = s->clip_ref ? fb_ref_grounded(m, s->clip_ref, NULL, err) : NULL;
    if (!s->clip_ground) {
        push_scene_destroy(s);
        return -1;
    }
    if (frame < 0) {
        frame = push_stand_frame(s->clip_ground, 0, PUSH_STAND_HOLD);
        s->frame = frame;
        if (frame < 0) {
            push_scene_destroy(s);
            return fail_msg(err, "no frame where both feet and toes stand for 0.2 s (give one)");
        }
    }
    const int nframe = s->clip_ground->nframe;
    if (frame >= nframe) {
        push_scene_destroy(s);
        snprintf(err->msg, sizeof err->msg, "push: frame %d is not one of the clip's 0..%d", frame,
                 nframe - 1);
        return -1;
    }
    /* the standing frame held still, fitted as given (it stands on the ground already) */
    const int n = (int)ceil(seconds * rate) + 2;
    double* qs = malloc((size_t)n * (size_t)m->nq * sizeof(double));
    if (!qs) {
        push_scene_destroy(s);
        return fail_msg(err, "out of memory");
    }
    const double* qf = s->clip_ground->q + (size_t)frame * (size_t)m->nq;
    for (int i = 0; i < n; i++) {
        memcpy(qs + (size_t)i * (size_t)m->nq, qf, (size_t)m->nq * sizeof(double));
    }
    fb_fit_opts fo = fb_default_fit_opts();
    fo.keep_glitches = true;
    s->stand = fb_ref_create(m, n, 1.0 / rate, qs, rate, &fo, NULL, err);
    free(qs);
    /* as `simulate` does for a free root (src/sim/sim.c) */
    s->stand_ctl = s->stand ? fb_ref_grounded(m, s->stand, NULL, err) : NULL;
    if (!s->stand_ctl || fb_gains_init(m, s->clip_ref, &s->gains, err) != FB_OK) {
        push_scene_destroy(s);
        return -1;
    }
    s->gains.rate = rate;
    s->gains.controller = FB_CTRL_ACCEL;
    s->gains.root.mode = FB_ROOT_FREE;
    s->mass = fb_model_mass(m);
    /* the heading at the standing frame, in the ground plane */
    fb_data* d = fb_data_create(m, NULL, err);
    if (!d) {
        push_scene_destroy(s);
        return -1;
    }
    memcpy(d->q, s->stand_ctl->q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, d);
    const fb_m3 R = fb_body_rot(m, d, 1);
    fb_data_destroy(d);
    const fb_v3 up = fb_ground_plane().n;
    const fb_v3 fb = fb_character_forward(clip, ch);
    fb_v3 f = fb_m3_mv(R, fb);
    f = fb_v3_sub(f, fb_v3_scale(up, fb_v3_dot(f, up)));
    const double fl = fb_v3_norm(f);
    if (!(fl > 1e-6)) {
        push_scene_destroy(s);
        return fail_msg(err, "the character faces straight up or down at that frame");
    }
    s->forward = fb_v3_scale(f, 1.0 / fl);
    s->left = fb_v3_cross(up, s->forward);
    return 0;
}

fb_fv push_wrench(fb_v3 p, fb_v3 F) {
    return (fb_fv){fb_v3_cross(p, F), F};
}

/* The largest amount by which a multiplier of the world's last force solve lies outside its
 * bounds, counted where it exceeds 1e-6 of them (0: none). */
static double bound_excess(const fb_world* w) {
    const fb_csys* cs = fb_world_csys(w);
    double worst = 0.0;
    for (int r = 0; cs && r < cs->nrow; r++) {
        const fb_row* row = &cs->row[r];
        double lo = row->lo, hi = row->hi;
        if (row->friction_of >= 0) {
            hi = row->mu * fmax(0.0, cs->lambda[row->friction_of]);
            lo = -hi;
        }
        const double l = cs->lambda[r];
        const double ex = fmax(l - hi, lo - l);
        const double tol = 1e-6 * fmax(1.0, fmax(isfinite(lo) ? fabs(lo) : 0.0,
                                                 isfinite(hi) ? fabs(hi) : 0.0));
        if (ex > tol) {
            worst = fmax(worst, ex);
        }
    }
    return worst;
}

push_opts push_default_opts(void) {
    return (push_opts){.dir = {1.0, 0.0, 0.0}, .force = 0.0, .t_push = 1.0, .duration = 0.1,
                       .t_back = 2.0, .t_end = 0.0};
}

/* The mean distance over the clip's joints between the body origins of d (positions current)
 * and p0. */
static double pose_distance(const push_scene* s, const fb_data* d, const fb_v3* p0) {
    double sum = 0.0;
    int n = 0;
    for (int b = 1; b < s->m->nbody; b++) {
        if (s->ch->joint_of_body[b] >= 0) {
            sum += fb_v3_norm(fb_v3_sub(fb_point_pos(s->m, d, b, fb_v3_zero()), p0[b]));
            n++;
        }
    }
    return n ? sum / n : 0.0;
}

int push_run(const push_scene* s, const push_opts* o, push_result* r, fb_error* err) {
    memset(r, 0, sizeof *r);
    r->finite = true;
    r->min_margin = NAN;
    const fb_model* m = s->m;
    const double rate = s->gains.rate;
    const long i_push = lround(o->t_push * rate);
    const long i_pend = i_push + lround(o->duration * rate);
    const long i_back = i_pend + lround(o->t_back * rate);
    const long i_end = o->t_end > 0.0 ? lround(o->t_end * rate) : i_back;
    fb_world_opts wo = fb_default_world_opts();
    wo.dt = 1.0 / rate;
    fb_world* w = fb_world_create(1, &m, &wo, NULL, err);
    fb_tracker* tr = w ? fb_tracker_create(w, 0, s->stand, &s->gains, s->ch->joint_of_body, err)
                       : NULL;
    fb_v3* p0 = calloc((size_t)m->nbody, sizeof(fb_v3));
    fb_v3* pf = calloc((size_t)m->nbody, sizeof(fb_v3));
    int rc = -1;
    if (!tr || !p0 || !pf || fb_tracker_set_control(tr, s->stand_ctl, err) != FB_OK) {
        if (tr && (!p0 || !pf)) {
            fail_msg(err, "out of memory");
        }
        goto done;
    }
    fb_data* d = fb_world_data(w, 0);
    const fb_joint_gains* jg = fb_tracker_gains(tr);
    const fb_v3 F = fb_v3_scale(o->dir, o->force);
    const fb_v3 c1 = fb_v3_scale(m->I[1].h, 1.0 / m->I[1].m); /* the pelvis's centre of mass */
    const fb_v3 up = fb_ground_plane().n;
    double h0 = 0.0;
    /* the standing frame's joints, for start_dev */
    fb_data* dref = fb_data_create(m, NULL, err);
    if (!dref) {
        goto done;
    }
    memcpy(dref->q, s->stand->q, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, dref);
    for (int b = 1; b < m->nbody; b++) {
        pf[b] = fb_point_pos(m, dref, b, fb_v3_zero());
    }
    fb_data_destroy(dref);
    for (long i = 0; i < i_end; i++) {
        fb_kinematics_pos(m, d);
        if (i == i_push) {
            for (int b = 1; b < m->nbody; b++) {
                p0[b] = fb_point_pos(m, d, b, fb_v3_zero());
            }
            r->start_dev = pose_distance(s, d, pf);
            h0 = fb_v3_dot(p0[1], up);
        }
        memset(d->f_ext, 0, (size_t)m->nbody * sizeof(fb_fv));
        if (i >= i_push && i < i_pend) {
            /* world coordinates about the world origin: [p x F; F] */
            const fb_v3 p = fb_point_pos(m, d, 1, c1);
            d->f_ext[1] = push_wrench(p, F);
        }
        if (fb_world_step(w, err) != FB_OK) {
            r->blew_up = true;
            snprintf(r->msg, sizeof r->msg, "%s", err->msg);
            break;
        }
        memset(d->f_ext, 0, (size_t)m->nbody * sizeof(fb_fv));
        for (int k = 0; k < m->nq; k++) {
            r->finite = r->finite && isfinite(d->q[k]);
        }
        for (int k = 0; k < m->nv; k++) {
            r->finite = r->finite && isfinite(d->qd[k]);
        }
        fb_track_metrics mt;
        fb_tracker_measure(tr, &mt, NULL); /* collects the applied torques */
        const double* tau = fb_tracker_torques(tr);
        for (int k = 6; k < m->nv; k++) {
            const double lim = jg[m->dof_body[k]].torque_limit;
            if (lim > 0.0) {
                r->tau_ratio_max = fmax(r->tau_ratio_max, fabs(d->tau[k]) / lim);
                r->applied_ratio_max = fmax(r->applied_ratio_max, fabs(tau[k]) / lim);
            }
        }
        const double ex = bound_excess(w);
        r->bound_steps += ex > 0.0;
        r->bound_excess_max = fmax(r->bound_excess_max, ex);
        if (i >= i_push) {
            fb_kinematics_pos(m, d);
            const double dev = pose_distance(s, d, p0);
            r->pose_max = fmax(r->pose_max, dev);
            r->root_drop_max =
                fmax(r->root_drop_max, h0 - fb_v3_dot(fb_point_pos(m, d, 1, fb_v3_zero()), up));
            if (i + 1 == i_back) {
                r->pose_back = dev;
            }
            const fb_balance_info* bi = fb_tracker_balance(tr);
            if (bi->active && isfinite(bi->margin)) {
                r->min_margin = isnan(r->min_margin) ? bi->margin : fmin(r->min_margin, bi->margin);
            }
        }
    }
    r->t_stop = fb_world_time(w);
    r->fall = fb_tracker_fall(tr);
    r->asleep_end = fb_world_asleep(w, 0);
    for (int k = 0; k < m->nv; k++) {
        r->qd_end = fmax(r->qd_end, fabs(d->qd[k]));
    }
    rc = 0;
done:
    free(p0);
    free(pf);
    fb_tracker_destroy(tr);
    fb_world_destroy(w);
    return rc;
}

int push_ladder(const push_scene* s, const push_opts* o, double step, double max_force,
                double within, push_each_fn each, void* user, push_series* out, fb_error* err) {
    memset(out, 0, sizeof *out);
    for (int k = 1; k * step <= max_force + 1e-9; k++) {
        push_opts ok = *o;
        ok.force = k * step;
        push_result r;
        if (push_run(s, &ok, &r, err) != 0) {
            return -1;
        }
        if (each) {
            each(&ok, &r, user);
        }
        out->runs++;
        out->blowups += r.blew_up;
        out->bound_runs += r.bound_steps > 0;
        out->applied_ratio_max = fmax(out->applied_ratio_max, r.applied_ratio_max);
        if (r.blew_up || r.fall.cause != FB_FALL_NONE) {
            out->fell_at = ok.force;
            out->fall_time = r.blew_up ? r.t_stop - ok.t_push : r.fall.time - ok.t_push;
            break;
        }
        out->stood = ok.force;
        if (r.pose_back <= within) {
            out->recovered = ok.force;
        }
    }
    return 0;
}
