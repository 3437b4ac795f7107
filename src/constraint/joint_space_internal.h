/* What the joint-space solve's files share (joint_space.c: the pivoting; joint_space_warm.c:
 * its warm start; joint_space_stagger.c: its second try): the scratch, the sets' states, the
 * solve's context. Not installed. */
#ifndef FB_CONSTRAINT_JOINT_SPACE_INTERNAL_H
#define FB_CONSTRAINT_JOINT_SPACE_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "constraint/csys_internal.h"
#include "dynamics/crba.h"

/* Most other rows (contacts, friction, limits) the joint-space solve takes; past it, PGS. */
#define JS_MAX_O 96

/* Scratch of the joint-space solve (see the solve's section in joint_space.c). n: the largest nv;
 * o: JS_MAX_O. */
typedef struct js_scratch {
    int* rk;      /* (n) the row of each dof, or -1 */
    int* dstate;  /* (n) DOF_* */
    int* cidx;    /* (n) the dofs at a bound (or without a row), in order */
    double* delta; /* (n) the change of each dof's acceleration its row asks for */
    double* u;    /* (n) M delta */
    double* tau;  /* (n) each dof's multiplier */
    double* lo;   /* (n) its bounds */
    double* hi;   /* (n) */
    double* g;    /* (n) J_O^T lambda_O on the articulation */
    double* z;    /* (n) the change of the clamped dofs' accelerations beyond delta */
    double* z0;   /* (n) */
    double* dz;   /* (n) */
    double* Mcc;  /* (n x n) M over the clamped dofs */
    /* the dof tree of the clamped dofs (n; chains n (n + 1) / 2) */
    fb_dof_tree ct;
    int* cpos;    /* (n) each dof's position among the clamped ones, or -1 */
    double* Lcc;  /* (n (n + 1) / 2) Mcc = L^T L with the clamped tree's sparsity */
    double* Y;    /* (n x o) Mcc^-1 J_{O,C}^T, column per other row */
    double* Jc;   /* (n x o) J_{O,C}: each other row's J at the clamped dofs, in their order */
    int* oidx;    /* (o) the other rows */
    int* ostate;  /* (o) ROW_* */
    double* olo;  /* (o) the bounds each was given */
    double* ohi;  /* (o) */
    double* h;    /* (o) w_O = h + S lambda_O */
    double* jd;   /* (o) J_o . delta on the articulation, plus b - t */
    double* dl;   /* (o) */
    double* dw;   /* (o) */
    double* w;    /* (o) */
    double* Ja;   /* (o x n) each other row's J on the articulation, dense */
    double* Koth; /* (o x o) K over the other rows without the articulation's share */
    double* S;    /* (o x o) the other rows' K seen through the clamped dofs */
    int* fo;      /* (o) the free other rows */
    int* fpos;    /* (o) each other row's position among the free ones, or -1 */
    int* touch;   /* (o) whether each acts on the articulation */
    int* nidx;    /* (o) a friction row's normal row among the other rows, or -1 */
    double* mu;   /* (o) its friction coefficient */
    double* A;    /* (o x o) the free rows' matrix, LU-factored */
    int* piv;     /* (o) its pivots */
    int* opos;    /* (cap) each row's position among the other rows, or -1 */
    double* fbnd; /* (o) a friction row's bound in a staggered round (fb_js_staggered) */
    /* the sets of the last accepted solve with ties, per kind of right-hand side (0: forces,
     * 1: impulses), for the next solve's warm start (js_warm) */
    struct js_sets {
        bool ok;          /* there is one */
        int a, n, no;     /* its articulation, dofs and other rows */
        int* dstate;      /* (n) each dof's DOF_* */
        uint64_t* id;     /* (o) each other row's id */
        int* ostate;      /* (o) its ROW_* */
    } prev[2];
    struct js_sets stag; /* a staggered round's sets as the tied problem's (fb_js_staggered) */
} js_scratch;

enum { DOF_FREE = 0, DOF_LO, DOF_HI, DOF_FIXED };
/* ROW_TLO, ROW_THI: a friction row at -mu lambda_n, +mu lambda_n */
enum { ROW_UNSEEN = 0, ROW_DRIVEN, ROW_FREE, ROW_LO, ROW_HI, ROW_TLO, ROW_THI, ROW_OUT };

typedef struct js_ctx {
    fb_csys* cs;
    const lcp_rhs* q;
    js_scratch* s;
    int a, n;        /* the articulation and its dofs */
    const double* M; /* its M */
    int no, nc, nfo; /* other rows, clamped dofs, free other rows */
    double tol_w, tol_l;
    int pivots, max_pivots;
    bool c_dirty; /* the clamped dofs changed since js_factor */
    /* every other row at zero (js_dofs): only M_CC's factor, z and the dofs' torques are
     * made, not the other rows' Y, S, h and w, which nothing reads until a row moves */
    bool rows_idle;
    bool h_stale; /* z0 and h not made since js_factor made M_CC's factor */
    const double* fbound; /* the friction rows' bounds in a staggered round, or NULL */
} js_ctx;

/* Whether other row i is a friction row tied to a normal row among the other rows. */
static inline bool js_tied_friction(const js_scratch* s, int i) {
    return s->nidx[i] >= 0;
}

/* The coefficient of a tied friction row: lambda_t = c lambda_n. */
static inline double js_tie(const js_scratch* s, int i) {
    return s->ostate[i] == ROW_THI ? s->mu[i] : -s->mu[i];
}

static inline bool js_is_tied(const js_scratch* s, int i) {
    return s->ostate[i] == ROW_TLO || s->ostate[i] == ROW_THI;
}

/* The other rows' multipliers live in cs->lambda; this one's. */
static inline double* js_lambda(js_ctx* x, int i) {
    return &x->cs->lambda[x->s->oidx[i]];
}

/* Other row i's bounds: its row's (a friction row's from its normal as it is now), or in a
 * staggered round a friction row's from the rounds before (x->fbound). */
static inline void js_bounds(const js_ctx* x, int i, double* lo, double* hi) {
    const int r = x->s->oidx[i];
    if (x->fbound && x->cs->row[r].friction_of >= 0) {
        *lo = -x->fbound[i];
        *hi = x->fbound[i];
        return;
    }
    bounds(x->cs, r, lo, hi);
}

/* Whether free dof k's torque is past a bound, to the pivoting's tolerance. */
static inline bool js_dof_past(const js_ctx* x, int k) {
    const js_scratch* s = x->s;
    return s->dstate[k] == DOF_FREE &&
           (s->tau[k] < s->lo[k] - x->tol_l || s->tau[k] > s->hi[k] + x->tol_l);
}

/* Whether the c-th clamped dof's acceleration is on the wrong side of its bound. */
static inline bool js_dof_wrong(const js_ctx* x, int c) {
    const js_scratch* s = x->s;
    const int st = s->dstate[s->cidx[c]];
    return (st == DOF_LO && s->z[c] < -x->tol_w) || (st == DOF_HI && s->z[c] > x->tol_w);
}

/* Whether other row i's multiplier or w breaks its set's conditions, to the pivoting's
 * tolerances: a free row's multiplier past a bound (js_bounds; a tied friction row's, mu times
 * its normal's), a row at a bound whose w would take it past. */
static inline bool js_row_wrong(js_ctx* x, int i) {
    const js_scratch* s = x->s;
    const double l = *js_lambda(x, i), w = s->w[i];
    switch (s->ostate[i]) {
    case ROW_FREE: {
        if (js_tied_friction(s, i)) {
            return fabs(l) > s->mu[i] * fmax(0.0, *js_lambda(x, s->nidx[i])) + x->tol_l;
        }
        double lo, hi;
        js_bounds(x, i, &lo, &hi);
        return l < lo - x->tol_l || l > hi + x->tol_l;
    }
    case ROW_LO:
    case ROW_TLO:
        return w < -x->tol_w;
    case ROW_HI:
    case ROW_THI:
        return w > x->tol_w;
    default:
        return false;
    }
}

/* The acceptance of an answer made from given sets without pivoting (the warm start's, and a
 * staggered round's tried as the tied problem's): its residual to this fraction of the
 * problem's scale, every multiplier within its bounds; the sets must be the solution's to
 * rounding. */
#define JS_WARM_ACCEPT 1e-7

/* Recomputes everything after a change of the sets (joint_space.c); false when a factor
 * fails. */
bool fb_js_update(js_ctx* x);

/* Ties each friction row among the other rows to its normal row (ties) or none
 * (joint_space.c). */
void fb_js_set_ties(js_ctx* x, bool ties);

/* The pivoting from the sets js_setup or fb_js_cold left (joint_space.c); false when it gives
 * up. */
bool fb_js_pivot(js_ctx* x);

/* Drives each unseen other row in turn from zero, the friction rows last (joint_space.c);
 * false when the pivoting gives up. */
bool fb_js_drive_unseen(js_ctx* x);

/* The dof rows' multipliers, the joint accelerations and the residual from the sets; whether
 * the solution meets its conditions to `accept` of the problem's scale and its bounds
 * (joint_space.c). */
bool fb_js_finish(js_ctx* x, double accept);

/* The second try where the pivoting with friction tied to its normals gave up: staggered
 * rounds (joint_space_stagger.c); an exact solution of the tied problem (its sets kept in prev
 * for the next warm start) or false. */
bool fb_js_staggered(js_ctx* x, struct js_sets* prev);

/* The warm start (joint_space_warm.c): the sets of the last accepted solve of this kind
 * (prev), row by row by id, the rows new since at their lower bound, and everything that
 * follows from them; false when there is nothing to start from or a factor fails. */
bool fb_js_warm(js_ctx* x, const struct js_sets* prev);

/* After a warm start whose sets are not the solution's: the rows whose multiplier or w breaks
 * its set's conditions back to unseen at zero (with the friction rows tied to them) and the
 * dofs that break theirs moved as js_dofs moves them, until every seen row and every dof meets
 * its conditions (joint_space_warm.c); then the unseen rows driven as from the start
 * (fb_js_drive_unseen). False when that takes more than a few rounds, a factor fails or a
 * drive gives up. */
bool fb_js_repair(js_ctx* x);

/* Back to the sets js_setup left, for the pivoting from the start. */
void fb_js_cold(js_ctx* x);

/* Keeps the sets of an accepted solve for the next one's warm start. */
void fb_js_keep(const js_ctx* x, struct js_sets* prev);

#endif /* FB_CONSTRAINT_JOINT_SPACE_INTERNAL_H */
