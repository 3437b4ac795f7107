/* The joint-space solve's second try: staggered friction (fb_js_staggered below; the solve is
 * described in joint_space.c, and in docs/CONSTRAINTS.md, "Staggered friction"). */
#include <math.h>

#include "constraint/joint_space_internal.h"

/* Staggered rounds at most, and how far each moves the friction bounds toward mu times the last
 * round's normal forces (1: all the way, which on 131_01's free walk swings between two sets
 * without end; 0.5 settles). */
#define JS_STAGGER_ROUNDS 8
#define JS_STAGGER_RELAX 0.5

/* Whether the sets a staggered round starts from (the last round's) still solve it with its
 * friction bounds: every free dof within its torque limits and every clamped one pushing the
 * right way, every free row within its bounds and every row at a bound pushing the right way,
 * to the pivoting's own tolerances. */
static bool js_box_holds(js_ctx* x) {
    for (int k = 0; k < x->n; k++) {
        if (js_dof_past(x, k)) {
            return false;
        }
    }
    for (int c = 0; c < x->nc; c++) {
        if (js_dof_wrong(x, c)) {
            return false;
        }
    }
    for (int i = 0; i < x->no; i++) {
        if (js_row_wrong(x, i)) {
            return false;
        }
    }
    return true;
}

/* The solve where the pivoting with friction tied to its normals gave up (sliding friction
 * makes that matrix unsymmetric, and on a walk's feet, mu 1, it cycles: a normal row freed and
 * clamped again without the driven row moving; or it has no solution at all, Painleve's case):
 * staggered rounds, a fixed point on the friction bounds after Kaufman, Sueda, James & Pai
 * ("Staggered projections for frictional contact in multibody systems", SIGGRAPH Asia 2008).
 * Each round solves with every friction row bounded by a number (the first round's from its
 * normal as it is when driven, later rounds' moved JS_STAGGER_RELAX of the way to mu times the
 * last round's normal force), a symmetric problem whose pivoting does not cycle; a round first
 * tries the last round's sets, then drives again only the rows they no longer hold
 * (fb_js_repair), and pivots from the start when that fails. Each new round's sets
 * are then tried as the tied problem's (a friction row at a bound tied to its normal),
 * evaluated without pivoting and accepted as a warm start is, to rounding: the answer is an
 * exact solution of the tied problem or none (the caller sweeps). */
bool fb_js_staggered(js_ctx* x, struct js_sets* prev) {
    js_scratch* s = x->s;
    const fb_csys* cs = x->cs;
    int pivots = 0;
    x->fbound = NULL;
    for (int round = 0; round < JS_STAGGER_ROUNDS; round++) {
        bool same = false;   /* the last round's sets hold in this one */
        bool solved = false; /* this round solved without pivoting from the start */
        if (round > 0) {
            fb_js_set_ties(x, false);
            fb_js_cold(x);
            x->fbound = s->fbnd;
            x->rows_idle = false;
            const bool warm = fb_js_warm(x, &s->stag);
            same = warm && js_box_holds(x);
            /* else the rows and dofs the new bounds put wrong are driven again: with numbers
             * for bounds the problem is symmetric and positive definite, its solution one */
            solved = same || (warm && fb_js_repair(x));
            if (!solved) {
                fb_js_cold(x);
            }
        }
        if (!solved && !fb_js_pivot(x)) {
            return false;
        }
        pivots += x->pivots;
        bool moved = round == 0;
        for (int i = 0; i < x->no; i++) {
            const int n = cs->row[s->oidx[i]].friction_of;
            const double b = n >= 0 ? s->mu[i] * fmax(0.0, cs->lambda[n]) : 0.0;
            const double next = round == 0 ? b : s->fbnd[i] + JS_STAGGER_RELAX * (b - s->fbnd[i]);
            moved = moved || next != s->fbnd[i];
            s->fbnd[i] = next;
        }
        if (!same) {
            /* this round's sets as the tied problem's (held ones stay held: fb_js_warm) */
            fb_js_keep(x, &s->stag);
            for (int i = 0; i < x->no; i++) {
                const int st = s->stag.ostate[i];
                if (cs->row[s->oidx[i]].friction_of >= 0 && (st == ROW_LO || st == ROW_HI)) {
                    s->stag.ostate[i] = st == ROW_HI ? ROW_THI : ROW_TLO;
                }
            }
            fb_js_set_ties(x, true);
            fb_js_cold(x);
            x->fbound = NULL;
            if (fb_js_warm(x, &s->stag) && fb_js_finish(x, JS_WARM_ACCEPT)) {
                x->cs->iterations = pivots;
                fb_js_keep(x, prev);
                return true;
            }
        }
        if (!moved) {
            return false; /* the bounds settled on sets that do not hold tied */
        }
    }
    return false;
}
