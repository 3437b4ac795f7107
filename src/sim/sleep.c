/* Sleeping: an articulation at rest is left out of the step until something disturbs it, as
 * [Box2D] (b2_timeToSleep, islands asleep and woken whole), [Bullet] (deactivation time;
 * btMultiBody's sleep timeout) and [PhysX] (an articulation's sleep threshold and wake counter)
 * do; here the unit is an articulation and stillness is every dof's |qd| < sleep_speed.
 *
 * Falling asleep, at the end of a step: an articulation allowed to sleep whose every dof moves
 * slower than sleep_speed (rad/s or m/s) accumulates still time; once it has sleep_time of it,
 * it falls asleep with the awake articulations it touches, if they are all ready too (an
 * island sleeps whole: a sleeper touching an awake body would be woken at once). Its qd and
 * qdd are set to exactly zero; from then on the step runs no ABA for it, does not integrate it,
 * makes no ground or self contacts and no rows for it, and fb_csys refuses rows on it.
 *
 * Waking: a contact with an awake articulation (found by the collision pass at the start of
 * each substep, before anything is solved), fb_world_wake, fb_world_set_sleep(.., false), or a
 * change of q or qd by the caller between steps. A sleeper woken makes its ground and self
 * contacts again before the substep's rows, so nothing falls through; woken from a hook at
 * FB_HOOK_ROWS (after the substep's ABA) it wakes at the next substep. */
#include <math.h>
#include <string.h>

#include "sim/world_internal.h"
#include "util/error.h"

fb_status fb_world_set_sleep(fb_world* w, int art, bool allowed, fb_error* err) {
    if (art < 0 || art >= w->nart) {
        return fb_fail(err, FB_EINVAL, "fb_world_set_sleep: art: expected 0..%d, found %d",
                       w->nart - 1, art);
    }
    if (!allowed) {
        (void)fb_world_wake(w, art, NULL);
    }
    w->sleep_ok[art] = allowed; /* the still time counts from the step's end on */
    return fb_ok(err);
}

bool fb_world_asleep(const fb_world* w, int art) {
    return art >= 0 && art < w->nart && w->asleep[art];
}

fb_status fb_world_wake(fb_world* w, int art, fb_error* err) {
    if (art < 0 || art >= w->nart) {
        return fb_fail(err, FB_EINVAL, "fb_world_wake: art: expected 0..%d, found %d",
                       w->nart - 1, art);
    }
    w->still[art] = 0.0;
    if (w->asleep[art]) {
        if (w->aba_done) {
            w->wake_due[art] = true; /* this substep has no ABA for it: the next one */
        } else {
            fb_sleep_wake(w, art);
        }
    }
    return fb_ok(err);
}

void fb_sleep_wake(fb_world* w, int k) {
    if (!w->asleep[k]) {
        return;
    }
    w->asleep[k] = false;
    w->wake_due[k] = false;
    w->still[k] = 0.0;
    fb_csys_set_asleep(w->cs, k, false);
    w->recollide = true;
    w->st.wakeups++;
    w->st.sleeping--;
}

void fb_sleep_wake_moved(fb_world* w) {
    for (int k = 0; k < w->nart; k++) {
        if (!w->asleep[k]) {
            continue;
        }
        const fb_model* m = w->m[k];
        const fb_data* d = w->d[k];
        bool moved = memcmp(d->q, w->q_sleep[k], (size_t)m->nq * sizeof(double)) != 0;
        for (int j = 0; j < m->nv && !moved; j++) {
            moved = d->qd[j] != 0.0;
        }
        if (moved) {
            fb_sleep_wake(w, k);
        }
    }
}

/* Whether contact c joins two articulations (not the ground, not one with itself). */
static bool between_two(const fb_contact* c) {
    return c->art_b >= 0 && c->art_b != c->art_a;
}

void fb_sleep_wake_touching(fb_world* w) {
    for (int k = 0; k < w->nart; k++) {
        if (w->wake_due[k]) {
            fb_sleep_wake(w, k);
        }
    }
    /* a sleeper touching an awake articulation wakes, and so on through the island (each pass
     * wakes one more at least, or ends) */
    for (bool woke = true; woke;) {
        woke = false;
        for (int i = 0; i < w->ncon; i++) {
            const fb_contact* c = &w->con[i];
            if (!between_two(c) || w->asleep[c->art_a] == w->asleep[c->art_b]) {
                continue;
            }
            fb_sleep_wake(w, w->asleep[c->art_a] ? c->art_a : c->art_b);
            woke = true;
        }
    }
}

/* Whether every dof of articulation k moves slower than sleep_speed. */
static bool still_now(const fb_world* w, int k) {
    const double* qd = w->d[k]->qd;
    for (int j = 0; j < w->m[k]->nv; j++) {
        if (!(fabs(qd[j]) < w->o.sleep_speed)) {
            return false;
        }
    }
    return true;
}

void fb_sleep_settle(fb_world* w) {
    bool ready[FB_CSYS_MAX_ART];
    bool any = false;
    for (int k = 0; k < w->nart; k++) {
        ready[k] = false;
        if (w->asleep[k]) {
            continue;
        }
        w->still[k] = (w->sleep_ok[k] && still_now(w, k)) ? w->still[k] + w->o.dt : 0.0;
        ready[k] = w->still[k] >= w->o.sleep_time;
        any = any || ready[k];
    }
    if (!any) {
        return;
    }
    /* an island sleeps whole: one touching an awake articulation that is not ready stays
     * awake, and so on through the island */
    for (bool dropped = true; dropped;) {
        dropped = false;
        for (int i = 0; i < w->ncon; i++) {
            const fb_contact* c = &w->con[i];
            if (!between_two(c)) {
                continue;
            }
            const int a = c->art_a, b = c->art_b;
            const bool a_busy = !w->asleep[a] && !ready[a], b_busy = !w->asleep[b] && !ready[b];
            if (ready[a] && b_busy) {
                ready[a] = false;
                dropped = true;
            } else if (ready[b] && a_busy) {
                ready[b] = false;
                dropped = true;
            }
        }
    }
    for (int k = 0; k < w->nart; k++) {
        if (!ready[k]) {
            continue;
        }
        const fb_model* m = w->m[k];
        fb_data* d = w->d[k];
        memset(d->qd, 0, (size_t)m->nv * sizeof(double));
        memset(d->qdd, 0, (size_t)m->nv * sizeof(double));
        memcpy(w->q_sleep[k], d->q, (size_t)m->nq * sizeof(double));
        d->stage &= ~(unsigned)(FB_STAGE_VEL | FB_STAGE_ABA1 | FB_STAGE_ACC);
        w->asleep[k] = true;
        fb_csys_set_asleep(w->cs, k, true);
        w->st.sleeping++;
    }
}
