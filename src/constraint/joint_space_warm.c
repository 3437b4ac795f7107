/* The joint-space solve's warm start (see joint_space.c, the solve's section, and
 * docs/CONSTRAINTS.md): the sets of clamped dofs and of free, bounded and tied rows of the last
 * accepted solve, kept by row id and tried first on the next one. */
#include <math.h>
#include <string.h>

#include "constraint/joint_space_internal.h"

/* Row id's position in prev, looked for at `hint` first (rows come in the same order solve
 * after solve), or -1. Rows without an id are never found. */
static int js_prev_pos(const struct js_sets* prev, uint64_t id, int hint) {
    if (id == 0) {
        return -1;
    }
    if (hint < prev->no && prev->id[hint] == id) {
        return hint;
    }
    for (int k = 0; k < prev->no; k++) {
        if (prev->id[k] == id) {
            return k;
        }
    }
    return -1;
}

/* The warm start: the sets of the last accepted solve of this kind (prev), row by row by id,
 * the rows new since at their lower bound (a new contact's normal and friction at zero), and
 * everything that follows from them. False when there is nothing to start from or a factor
 * fails. A body whose contacts and clamped joints stay as they were (lying still, standing)
 * needs no pivot: js_finish then finds the solution meets its conditions; else the caller
 * pivots from the start. */
bool fb_js_warm(js_ctx* x, const struct js_sets* prev) {
    js_scratch* s = x->s;
    if (!prev->ok || prev->a != x->a || prev->n != x->n) {
        return false;
    }
    for (int k = 0; k < x->n; k++) {
        if (s->rk[k] < 0) {
            continue;
        }
        const int st = prev->dstate[k];
        if (st == DOF_LO && isfinite(s->lo[k])) {
            s->dstate[k] = DOF_LO;
            s->tau[k] = s->lo[k];
        } else if (st == DOF_HI && isfinite(s->hi[k])) {
            s->dstate[k] = DOF_HI;
            s->tau[k] = s->hi[k];
        }
    }
    for (int i = 0; i < x->no; i++) {
        if (s->ostate[i] == ROW_OUT) {
            continue;
        }
        const int r = s->oidx[i];
        const int p = js_prev_pos(prev, x->cs->row[r].id, i);
        const int st = p >= 0 ? prev->ostate[p] : ROW_LO;
        if (js_tied_friction(s, i)) {
            s->ostate[i] = st == ROW_FREE || st == ROW_THI ? st : ROW_TLO;
            continue; /* its multiplier follows its normal's (js_state) */
        }
        double lo, hi;
        js_bounds(x, i, &lo, &hi);
        const bool low = st == ROW_LO || st == ROW_TLO, high = st == ROW_HI || st == ROW_THI;
        if (low && isfinite(lo)) {
            s->ostate[i] = ROW_LO;
            *js_lambda(x, i) = lo;
        } else if (high && isfinite(hi)) {
            s->ostate[i] = ROW_HI;
            *js_lambda(x, i) = hi;
        } else {
            s->ostate[i] = ROW_FREE;
        }
    }
    x->c_dirty = true;
    return fb_js_update(x);
}

/* Rounds of fb_js_repair before the solve pivots from the start instead. */
#define JS_REPAIR_ROUNDS 8

/* See joint_space_internal.h. The pivoting's invariant is that every row and dof but the one
 * driven meets its conditions and every unseen row is at zero: from a warm start that missed,
 * the rows that break theirs are taken out (to be driven again) rather than every row, so a
 * step where one foot's contact changed drives that foot's rows, not both feet's. The rows'
 * bounds are set for all, as a drive sets its own: the rows kept from the warm sets were not
 * driven in this solve, and the ratio test reads them. */
bool fb_js_repair(js_ctx* x) {
    js_scratch* s = x->s;
    for (int i = 0; i < x->no; i++) {
        if (s->ostate[i] != ROW_OUT) {
            js_bounds(x, i, &s->olo[i], &s->ohi[i]);
        }
    }
    for (int round = 0; round < JS_REPAIR_ROUNDS; round++) {
        int bad = 0;
        for (int i = 0; i < x->no; i++) {
            if (js_row_wrong(x, i)) {
                s->ostate[i] = ROW_UNSEEN;
                bad++;
            }
        }
        for (int i = 0; i < x->no; i++) {
            const bool orphan = js_tied_friction(s, i) && s->ostate[s->nidx[i]] == ROW_UNSEEN;
            if (s->ostate[i] == ROW_UNSEEN || orphan) {
                s->ostate[i] = ROW_UNSEEN;
                *js_lambda(x, i) = 0.0;
            }
        }
        for (int k = 0; k < x->n; k++) {
            if (js_dof_past(x, k)) {
                s->dstate[k] = s->tau[k] < s->lo[k] ? DOF_LO : DOF_HI;
                s->tau[k] = s->dstate[k] == DOF_LO ? s->lo[k] : s->hi[k];
                x->c_dirty = true;
                bad++;
            }
        }
        for (int c = 0; c < x->nc; c++) {
            if (js_dof_wrong(x, c)) {
                s->dstate[s->cidx[c]] = DOF_FREE;
                x->c_dirty = true;
                bad++;
            }
        }
        if (bad == 0) {
            return fb_js_drive_unseen(x);
        }
        x->pivots++;
        if (!fb_js_update(x)) {
            return false;
        }
    }
    return false;
}

/* Back to the sets js_setup left (every dof with a row free, every other row unseen at zero),
 * for the pivoting from the start after a warm start that did not hold. */
void fb_js_cold(js_ctx* x) {
    js_scratch* s = x->s;
    for (int k = 0; k < x->n; k++) {
        s->dstate[k] = s->rk[k] >= 0 ? DOF_FREE : DOF_FIXED;
        s->tau[k] = 0.0;
    }
    for (int i = 0; i < x->no; i++) {
        if (s->ostate[i] != ROW_OUT) {
            s->ostate[i] = ROW_UNSEEN;
            *js_lambda(x, i) = 0.0;
        }
    }
    x->pivots = 0;
    x->c_dirty = true;
}

/* Keeps the sets of an accepted solve for the next one's warm start. */
void fb_js_keep(const js_ctx* x, struct js_sets* prev) {
    const js_scratch* s = x->s;
    prev->ok = true;
    prev->a = x->a;
    prev->n = x->n;
    prev->no = x->no;
    memcpy(prev->dstate, s->dstate, (size_t)x->n * sizeof(int));
    for (int i = 0; i < x->no; i++) {
        prev->id[i] = x->cs->row[s->oidx[i]].id;
        prev->ostate[i] = s->ostate[i];
    }
}
