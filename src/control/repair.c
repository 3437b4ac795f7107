/* The clip's samples repaired before the fit: capture glitches (a joint leaving the curve for
 * 1-3 frames and coming back) replaced by the curve through the frames around them, and end
 * segments (a toe, a hand's tip) turned out of the ground where the clip's pose puts their
 * shapes into it (docs/CONTROL.md, "Capture glitches are repaired first" and "The clip and the
 * ground"). The curves are local polynomial fits (fit.c) [Savitzky–Golay], on SO(3) for
 * rotations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/collision.h"
#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "control/ref_internal.h"
#include "dynamics/kinematics.h"
#include "math/quat.h"
#include "util/error.h"

/* ---- capture glitches ------------------------------------------------------------------- */

/* The repair before the fit (docs/CONTROL.md, "Capture glitches"). Each joint is a channel or
 * two: its rotation, the root's position, a hinge's angle. Frame k of a channel is compared
 * with the cubic through the four nearest other frames (k-2, k-1, k+1, k+2 inside the clip);
 * the distance, divided by that predictor's noise gain sqrt(1 + sum w^2), is the frame's
 * residual. Smooth motion, however fast, leaves residuals of order h^4 q'''' (a uniform turn
 * none at all); a glitch leaves one far above the residuals around it. A frame is suspect
 * when its residual exceeds GLITCH_FACTOR times their median over GLITCH_WINDOW_S either side
 * (and an absolute floor). It is repaired only if some run of at most GLITCH_RUN_MAX frames
 * containing it (GLITCH_END_MAX at the clip's ends), replaced by the curve through the good
 * frames around it, leaves every residual near it below its threshold: the frames either side
 * of the run must agree with each other. So a glitch (the joint leaves the curve and comes
 * back) is repaired, and a fast but genuine movement (it goes and stays) is kept as captured.
 * Inside the clip the run gets the cubic through the two frames either side; at the clip's
 * ends the quadratic fitted to the GLITCH_END_FIT frames next to it, extrapolated. Rotations
 * are interpolated in the tangent space of a neighbouring frame, so on SO(3). */
#define GLITCH_FACTOR 8.0      /* residual / local median above which a frame is suspect */
#define GLITCH_WINDOW_S 0.25   /* s either side of a frame for its local median */
#define GLITCH_FLOOR_ROT 0.005 /* rad (0.3 deg): smaller residuals are never glitches */
#define GLITCH_FLOOR_POS 0.002 /* m */
#define GLITCH_RUN_MAX 3       /* longest run of bad frames repaired inside the clip */
#define GLITCH_END_MAX 4       /* ... and at either end */
#define GLITCH_END_FIT 6       /* frames the extrapolation at an end is fitted to */

/* One channel of the samples: a rotation (quaternion at off) or n = 1 or 3 numbers at off. */
typedef struct glitch_chan {
    const double* qs; /* (ns x nq) */
    double* mut;      /* the same, writable */
    int ns, nq, off, n;
    bool rot;
} glitch_chan;

static fb_v3 chan_vec(const glitch_chan* g, const double* row) {
    const double* p = row + g->off;
    return g->n == 3 ? fb_v3_make(p[0], p[1], p[2]) : fb_v3_make(p[0], 0.0, 0.0);
}

/* Row y seen from row x: log(q_x^-1 q_y), or y - x. */
static fb_v3 chan_diff(const glitch_chan* g, const double* x, const double* y) {
    if (g->rot) {
        return fb_quat_log(fb_quat_mul(fb_quat_conj(fb_quat_load(x + g->off)),
                                       fb_quat_load(y + g->off)));
    }
    return fb_v3_sub(chan_vec(g, y), chan_vec(g, x));
}

static const double* chan_row(const glitch_chan* g, int j) {
    return g->qs + (size_t)j * (size_t)g->nq;
}

/* Frame j := frame b (+) t. */
static void chan_set(const glitch_chan* g, int b, int j, fb_v3 t) {
    double* p = g->mut + (size_t)j * (size_t)g->nq + (size_t)g->off;
    if (g->rot) {
        const fb_quat qb = fb_quat_load(chan_row(g, b) + g->off);
        fb_quat_store(p, fb_quat_normalize(fb_quat_mul(qb, fb_quat_exp(t))));
        return;
    }
    const fb_v3 x = fb_v3_add(chan_vec(g, chan_row(g, b)), t);
    p[0] = x.x;
    if (g->n == 3) {
        p[1] = x.y;
        p[2] = x.z;
    }
}

/* Lagrange weights at x of the cubic through four nodes. */
static void lagrange4(const int node[4], double x, double w[4]) {
    for (int i = 0; i < 4; i++) {
        w[i] = 1.0;
        for (int m = 0; m < 4; m++) {
            if (m != i) {
                w[i] *= (x - node[m]) / (double)(node[i] - node[m]);
            }
        }
    }
}

/* The residual of frame k (above); ns >= 5. */
static double chan_residual(const glitch_chan* g, int k) {
    const int lo = k < 2 ? 0 : (k > g->ns - 3 ? g->ns - 5 : k - 2);
    int node[4], n = 0;
    for (int j = lo; j < lo + 5; j++) {
        if (j != k) {
            node[n++] = j;
        }
    }
    double w[4], gain = 1.0;
    lagrange4(node, k, w);
    const double* base = chan_row(g, k > lo ? k - 1 : k + 1);
    fb_v3 pred = fb_v3_zero();
    for (int i = 0; i < 4; i++) {
        pred = fb_v3_axpy(pred, w[i], chan_diff(g, base, chan_row(g, node[i])));
        gain += w[i] * w[i];
    }
    return fb_v3_norm(fb_v3_sub(chan_diff(g, base, chan_row(g, k)), pred)) / sqrt(gain);
}

/* Replaces frames a..b (above); the frames it reads exist (the caller checked). */
static void chan_fill(const glitch_chan* g, int a, int b) {
    if (a > 0 && b < g->ns - 1) { /* inside the clip: the cubic through a-2, a-1, b+1, b+2 */
        const int node[4] = {a - 2, a - 1, b + 1, b + 2};
        fb_v3 t[4];
        for (int i = 0; i < 4; i++) {
            t[i] = chan_diff(g, chan_row(g, a - 1), chan_row(g, node[i]));
        }
        for (int j = a; j <= b; j++) {
            double w[4];
            lagrange4(node, j, w);
            fb_v3 x = fb_v3_zero();
            for (int i = 0; i < 4; i++) {
                x = fb_v3_axpy(x, w[i], t[i]);
            }
            chan_set(g, a - 1, j, x);
        }
        return;
    }
    /* at an end: the least-squares quadratic through the GLITCH_END_FIT frames next to the
     * run, counted away from the end, extrapolated */
    const int dir = (a == 0) ? 1 : -1, base = (a == 0) ? b + 1 : a - 1;
    fb_v3 t[GLITCH_END_FIT];
    for (int i = 0; i < GLITCH_END_FIT; i++) {
        t[i] = chan_diff(g, chan_row(g, base), chan_row(g, base + dir * i));
    }
    for (int j = a; j <= b; j++) {
        fit_weights fw;
        (void)fb_fit_window(GLITCH_END_FIT, 0, (j - base) * dir, GLITCH_END_FIT / 2, 2, &fw);
        fb_v3 x = fb_v3_zero();
        for (int i = 0; i < fw.n; i++) {
            x = fb_v3_axpy(x, fw.w[0][i], t[fw.lo + i]);
        }
        chan_set(g, base, j, x);
    }
}

/* The k-th smallest of x[0..n-1] (Hoare's selection; reorders x). */
static double select_kth(double* x, int n, int k) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const double p = x[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (x[i] < p) {
                i++;
            }
            while (x[j] > p) {
                j--;
            }
            if (i <= j) {
                const double s = x[i];
                x[i++] = x[j];
                x[j--] = s;
            }
        }
        if (k <= j) {
            hi = j;
        } else if (k >= i) {
            lo = i;
        } else {
            break;
        }
    }
    return x[k];
}

/* Scratch of the repair: (ns) residuals, thresholds, a window's copy, suspects no run could
 * repair, the frames repaired in the current joint; one run's saved frames. */
typedef struct glitch_scratch {
    double *z, *thr, *win, *save;
    unsigned char *tried, *hit;
} glitch_scratch;

/* Repairs one channel in place; marks repaired frames in s->hit and describes each run
 * (first frame, last frame, largest distance of a captured frame from its repair) through
 * `note`. */
static void chan_repair(const glitch_chan* g, double floor, int half_win, glitch_scratch* s,
                        void (*note)(void* ctx, int a, int b, double dev), void* ctx) {
    const int ns = g->ns, nq = g->nq;
    for (int k = 0; k < ns; k++) {
        s->z[k] = chan_residual(g, k);
        s->tried[k] = 0;
    }
    for (int k = 0; k < ns; k++) {
        const int lo = k - half_win < 0 ? 0 : k - half_win;
        const int hi = k + half_win > ns - 1 ? ns - 1 : k + half_win;
        memcpy(s->win, s->z + lo, (size_t)(hi - lo + 1) * sizeof(double));
        s->thr[k] = fmax(GLITCH_FACTOR * select_kth(s->win, hi - lo + 1, (hi - lo) / 2), floor);
    }
    for (int iter = 0; iter < ns; iter++) {
        /* the most suspect frame not yet tried */
        int k = -1;
        double worst = 1.0;
        for (int j = 0; j < ns; j++) {
            if (!s->tried[j] && s->z[j] > worst * s->thr[j]) {
                worst = s->z[j] / s->thr[j];
                k = j;
            }
        }
        if (k < 0) {
            return;
        }
        s->tried[k] = 1;
        /* the shortest run containing k whose repair quiets its neighbourhood */
        for (int len = 1; len <= GLITCH_END_MAX; len++) {
            int a = -1, b = -1;
            for (int a0 = k - len + 1; a0 <= k && a < 0; a0++) {
                int lo = a0, hi = a0 + len - 1;
                const bool start = lo <= 1, end = hi >= ns - 2;
                if (start == end && (start || len > GLITCH_RUN_MAX)) {
                    continue; /* both ends at once, or too long inside */
                }
                lo = start ? 0 : lo;
                hi = end ? ns - 1 : hi;
                const int n = hi - lo + 1;
                if ((start || end) && (n > GLITCH_END_MAX || ns < n + GLITCH_END_FIT + 3)) {
                    continue;
                }
                memcpy(s->save, chan_row(g, lo), (size_t)n * (size_t)nq * sizeof(double));
                chan_fill(g, lo, hi);
                bool quiet = true;
                for (int j = (lo - 2 < 0 ? 0 : lo - 2); j <= hi + 2 && j < ns && quiet; j++) {
                    quiet = chan_residual(g, j) <= s->thr[j];
                }
                if (quiet) {
                    a = lo;
                    b = hi;
                } else {
                    memcpy(g->mut + (size_t)lo * (size_t)nq, s->save,
                           (size_t)n * (size_t)nq * sizeof(double));
                }
            }
            if (a < 0) {
                continue;
            }
            double dev = 0.0;
            for (int j = a; j <= b; j++) {
                dev = fmax(dev, fb_v3_norm(chan_diff(g, chan_row(g, j),
                                                     s->save + (size_t)(j - a) * (size_t)nq)));
                s->hit[j] = 1;
            }
            for (int j = (a - 4 < 0 ? 0 : a - 4); j <= b + 4 && j < ns; j++) {
                s->z[j] = chan_residual(g, j);
            }
            note(ctx, a, b, dev);
            break;
        }
    }
}

/* What was repaired in one joint, for its warning line: the runs (the first
 * GLITCH_NOTE_RUNS) and the largest distances of a captured frame from its repair. */
#define GLITCH_NOTE_RUNS 24
typedef struct glitch_note {
    int run[GLITCH_NOTE_RUNS][2];
    int nrun;
    double dev_rot, dev_pos;
    bool rot;
} glitch_note;

static void note_run(void* ctx, int a, int b, double dev) {
    glitch_note* n = ctx;
    if (n->rot) {
        n->dev_rot = fmax(n->dev_rot, dev);
    } else {
        n->dev_pos = fmax(n->dev_pos, dev);
    }
    if (n->nrun < GLITCH_NOTE_RUNS) {
        n->run[n->nrun][0] = a;
        n->run[n->nrun++][1] = b;
    }
}

static int cmp_run(const void* x, const void* y) {
    return ((const int*)x)[0] - ((const int*)y)[0];
}

/* "name: capture glitch repaired in N frames (a-b, c, ...), up to X deg off the frames
 * around" (within FB_CLIP_WARN_LEN). */
static void note_write(glitch_note* n, const char* name, int nframes, int frame0, char* out,
                       size_t cap) {
    qsort(n->run, (size_t)n->nrun, sizeof n->run[0], cmp_run);
    /* merge overlapping and adjacent runs (the root's position and rotation are repaired
     * apart), then list them while they fit */
    int nm = 0;
    for (int k = 0; k < n->nrun; k++) {
        if (nm > 0 && n->run[k][0] <= n->run[nm - 1][1] + 1) {
            n->run[nm - 1][1] = n->run[k][1] > n->run[nm - 1][1] ? n->run[k][1] : n->run[nm - 1][1];
        } else {
            n->run[nm][0] = n->run[k][0];
            n->run[nm++][1] = n->run[k][1];
        }
    }
    char runs[56];
    size_t len = 0;
    int k = 0;
    for (; k < nm && len + 16 < sizeof runs; k++) {
        len += (size_t)snprintf(runs + len, sizeof runs - len, "%s%d", k ? ", " : "",
                                frame0 + n->run[k][0]);
        if (n->run[k][1] > n->run[k][0]) {
            len += (size_t)snprintf(runs + len, sizeof runs - len, "-%d", frame0 + n->run[k][1]);
        }
    }
    if (k < nm || n->nrun == GLITCH_NOTE_RUNS) {
        snprintf(runs + len, sizeof runs - len, ", ...");
    }
    char dev[48] = "";
    if (n->dev_rot > 0.0) {
        snprintf(dev, sizeof dev, "%.1f deg", n->dev_rot * 180.0 / FB_PI);
    }
    if (n->dev_pos > 0.0) {
        const size_t l = strlen(dev);
        snprintf(dev + l, sizeof dev - l, "%s%.1f cm", l ? ", " : "", 100.0 * n->dev_pos);
    }
    snprintf(out, cap, "%.32s: capture glitch repaired in %d frame%s (%.56s), up to %.24s off "
             "the frames around", name, nframes, nframes > 1 ? "s" : "", runs, dev);
}

/* Repairs the samples qs (ns x nq) in place, joint by joint; counts the repaired samples per
 * body in r->repaired and r->nrepaired and writes one warning per repaired joint. frame0 is
 * the clip frame of the first sample. False when out of memory. */
bool fb_ref_repair_glitches(const fb_model* m, double* qs, int ns, double sample_dt, int frame0,
                            const fb_allocator* al, fb_ref* r) {
    memset(r->repaired, 0, (size_t)m->nbody * sizeof(int));
    if (ns < GLITCH_END_FIT + 5) {
        return true; /* too short to tell a glitch from motion */
    }
    glitch_scratch s;
    const size_t nd = 3 * (size_t)ns + (size_t)GLITCH_END_MAX * (size_t)m->nq;
    double* block = fb_alloc(al, nd * sizeof(double) + 2 * (size_t)ns);
    if (!block) {
        return false;
    }
    s.z = block;
    s.thr = s.z + ns;
    s.win = s.thr + ns;
    s.save = s.win + ns;
    s.tried = (unsigned char*)(block + nd);
    s.hit = s.tried + ns;
    const int half_win = (int)fmax(4.0, round(GLITCH_WINDOW_S / sample_dt));
    for (int b = 1; b < m->nbody; b++) {
        const fb_joint_type jt = m->jtype[b];
        const int qa = m->q_adr[b];
        glitch_chan ch[2];
        double floor[2];
        int nch = 0;
        const glitch_chan base = {.qs = qs, .mut = qs, .ns = ns, .nq = m->nq, .off = qa};
        if (jt == FB_JOINT_FLOATING || jt == FB_JOINT_SPHERICAL) {
            ch[nch] = base;
            ch[nch].off = qa + (jt == FB_JOINT_FLOATING ? 3 : 0);
            ch[nch].rot = true;
            floor[nch++] = GLITCH_FLOOR_ROT;
        }
        if (jt == FB_JOINT_FLOATING || jt == FB_JOINT_REVOLUTE || jt == FB_JOINT_PRISMATIC) {
            ch[nch] = base;
            ch[nch].n = jt == FB_JOINT_FLOATING ? 3 : 1;
            floor[nch++] = jt == FB_JOINT_REVOLUTE ? GLITCH_FLOOR_ROT : GLITCH_FLOOR_POS;
        }
        glitch_note note = {.nrun = 0};
        memset(s.hit, 0, (size_t)ns);
        for (int c = 0; c < nch; c++) {
            note.rot = ch[c].rot || jt == FB_JOINT_REVOLUTE;
            chan_repair(&ch[c], floor[c], half_win, &s, note_run, &note);
        }
        for (int k = 0; k < ns; k++) {
            r->repaired[b] += s.hit[k];
        }
        r->nrepaired += r->repaired[b];
        if (r->repaired[b] > 0) {
            if (r->nwarn < FB_CLIP_MAX_WARN) {
                note_write(&note, m->name[b], r->repaired[b], frame0, r->warn[r->nwarn],
                           FB_CLIP_WARN_LEN);
            }
            r->nwarn++;
        }
    }
    fb_free(al, block);
    return true;
}

/* ---- end segments in the ground -------------------------------------------------------- */

/* Clip poses put shapes into the ground y = 0 where the capture's skeleton and the character's
 * shapes disagree with the floor: 131_01 kneels with its toes pointing 2.3 cm into it (the
 * capture barely bends them) and the toe capsule 4.8 cm. Where the shape belongs to an *end
 * segment* - a hinge whose descendants are only End Site markers (fixed, massless, shapeless)
 * - turning the hinge moves no joint of the clip, only that segment's shapes and its End Site;
 * so its angle is turned, by the least amount either way, until its shapes clear the ground,
 * and the positions of every clip joint in the reference stay as captured. Other joints are
 * left as captured (moving them would move joints of the clip). */

/* Bisection steps for the clearing angle (pi / 2^40, far below the fit's noise) and the
 * coarse step that brackets it. */
#define CLEAR_BISECT 40
#define CLEAR_STEP (FB_PI / 180.0)

bool fb_ref_end_segment(const fb_model* m, int b) {
    if (m->jtype[b] != FB_JOINT_REVOLUTE) {
        return false;
    }
    bool has_shape = false;
    for (int s = 0; s < m->nshape; s++) {
        has_shape = has_shape || m->shape[s].body == b;
    }
    for (int c = b + 1; c < m->nbody && has_shape; c++) {
        int a = m->parent[c];
        while (a > b) {
            a = m->parent[a];
        }
        if (a != b) {
            continue;
        }
        if (m->jtype[c] != FB_JOINT_FIXED || m->I[c].m > 0.0) {
            return false;
        }
        for (int s = 0; s < m->nshape; s++) {
            if (m->shape[s].body == c) {
                return false;
            }
        }
    }
    return has_shape;
}

/* Height of body b's lowest point with its hinge at angle th (d->q holds the rest of the
 * pose, whose kinematics are current: only b's own transform is redone). */
static double height_at(const fb_model* m, fb_data* d, int b, double th, fb_plane g) {
    d->q[m->q_adr[b]] = th;
    fb_kin_body_pos(m, d, b);
    return fb_lowest_point(m, d, b, g);
}

/* The hinge angle nearest th0 at which body b's lowest point is at least `target` over the
 * plane, searched `dir` (+1, -1) up to half a turn and within the joint's limits; false when
 * there is none. */
static bool clearing_angle(const fb_model* m, fb_data* d, int b, double th0, int dir, fb_plane g,
                           double target, double* th) {
    const fb_joint_limit* L = &m->limit[b];
    double in = th0, out = NAN;
    for (double t = CLEAR_STEP; t <= FB_PI + 1e-12; t += CLEAR_STEP) {
        double x = th0 + dir * t;
        /* a step past the stop tries the stop itself, last */
        const bool past = L->on && (x < L->lo || x > L->hi);
        if (past) {
            if (th0 < L->lo || th0 > L->hi) {
                return false;
            }
            x = dir > 0 ? L->hi : L->lo;
        }
        if (height_at(m, d, b, x, g) >= target) {
            out = x;
            break;
        }
        if (past) {
            return false;
        }
        in = x;
    }
    if (isnan(out)) {
        return false;
    }
    for (int k = 0; k < CLEAR_BISECT; k++) {
        const double mid = 0.5 * (in + out);
        if (height_at(m, d, b, mid, g) >= target) {
            out = mid;
        } else {
            in = mid;
        }
    }
    *th = out;
    return true;
}

double fb_ref_clearing_turn(const fb_model* m, fb_data* d, int b, fb_plane g, double target,
                            int way) {
    const int qa = m->q_adr[b];
    const double th0 = d->q[qa];
    double th = th0;
    double turn = 0.0;
    if (fb_lowest_point(m, d, b, g) < target) {
        turn = clearing_angle(m, d, b, th0, way, g, target, &th) ? fabs(th - th0) : NAN;
        d->q[qa] = th0;
        fb_kin_body_pos(m, d, b);
    }
    return turn;
}

/* The turns of body b's hinge from th0 up (turn[0]) and down (turn[1]) that take its shapes
 * to the ground, or - where the joint itself is too low for that (the shape's end at the joint
 * does not move) - as high as they get in a turn; NAN where a way finds none. */
static void frame_turns(const fb_model* m, fb_data* d, int b, double th0, fb_plane g,
                        double turn[2]) {
    double target = 0.0, up = th0, down = th0;
    for (int pass = 0; pass < 2; pass++) {
        turn[0] = clearing_angle(m, d, b, th0, +1, g, target, &up) ? up - th0 : NAN;
        turn[1] = clearing_angle(m, d, b, th0, -1, g, target, &down) ? down - th0 : NAN;
        if (pass > 0 || !isnan(turn[0]) || !isnan(turn[1])) {
            return;
        }
        target = -INFINITY;
        for (double t = 0.0; t < 2.0 * FB_PI; t += CLEAR_STEP) {
            target = fmax(target, height_at(m, d, b, th0 + t, g));
        }
        target = fmin(target, 0.0);
    }
}

/* The turn of body b's hinge from th0 to its stop on way w (0 up, 1 down); 0 without a
 * limit. */
static double stop_turn(const fb_model* m, int b, double th0, int w) {
    const fb_joint_limit* L = &m->limit[b];
    return L->on ? (w == 0 ? L->hi : L->lo) - th0 : 0.0;
}

/* Turns every end segment of the samples qs (ns x nq) out of the ground, or as far out as it
 * turns (above). A segment can clear the ground turning either way (a toe pointing into the
 * floor, forwards or backwards); within a run of frames that need it, it turns the same way
 * throughout, since going over to the other side would take it through the floor: the way
 * that clears more of the run's frames within the joint's range, then the one that turns it
 * less at the run's first and last frames (where the reference would jump by it), then less
 * summed over the run. A frame the way cannot clear within the range turns as far as the
 * range lets it, to the joint's stop (131_01's kneeling toe, curled 35-45 deg into the floor
 * by the capture, would need 80-95 deg of extension), so the run turns as one. One warning
 * per segment turned, naming its frames (frame0 = the first sample's) and the largest turn.
 * False when out of memory. */
bool fb_ref_clear_end_segments(const fb_model* m, double* qs, int ns, int frame0, fb_data* d,
                               const fb_allocator* al, fb_ref* r) {
    const fb_plane g = fb_ground_plane();
    double* turn = fb_alloc(al, 2 * (size_t)ns * sizeof(double)); /* (ns x 2) up, down; NAN */
    if (!turn) {
        return false;
    }
    for (int b = 1; b < m->nbody; b++) {
        if (!fb_ref_end_segment(m, b)) {
            continue;
        }
        const int qa = m->q_adr[b];
        for (int k = 0; k < ns; k++) {
            const double* q = qs + (size_t)k * (size_t)m->nq;
            memcpy(d->q, q, (size_t)m->nq * sizeof(double));
            fb_kinematics_pos(m, d);
            const double th0 = q[qa];
            turn[2 * k] = turn[2 * k + 1] = 0.0;
            if (height_at(m, d, b, th0, g) < 0.0) {
                frame_turns(m, d, b, th0, g, turn + 2 * k);
            }
        }
        int nturn = 0, first = -1, last = -1;
        double most = 0.0;
        for (int k0 = 0; k0 < ns;) {
            if (turn[2 * k0] == 0.0 && turn[2 * k0 + 1] == 0.0) {
                k0++;
                continue;
            }
            int k1 = k0; /* the run k0..k1-1 */
            double cost[2] = {0.0, 0.0};
            int miss[2] = {0, 0}; /* frames a way cannot clear (NAN: out of the joint's range) */
            while (k1 < ns && !(turn[2 * k1] == 0.0 && turn[2 * k1 + 1] == 0.0)) {
                for (int w = 0; w < 2; w++) {
                    miss[w] += isnan(turn[2 * k1 + w]);
                    cost[w] += isnan(turn[2 * k1 + w]) ? 0.0 : fabs(turn[2 * k1 + w]);
                }
                k1++;
            }
            /* the way whose turn at the run's ends is smaller: there the reference jumps by
             * it, from the frames around the run */
            double edge[2];
            for (int w = 0; w < 2; w++) {
                const double first_turn = fabs(turn[2 * k0 + w]);
                const double last_turn = fabs(turn[2 * (k1 - 1) + w]);
                edge[w] = isnan(first_turn) || isnan(last_turn) ? INFINITY
                                                                : fmax(first_turn, last_turn);
            }
            const int way = miss[1] != miss[0] ? miss[1] < miss[0]
                            : edge[1] < edge[0] || (edge[1] == edge[0] && cost[1] < cost[0]);
            for (int k = k0; k < k1; k++) {
                const double th0 = qs[(size_t)k * (size_t)m->nq + (size_t)qa];
                const double t = isnan(turn[2 * k + way]) ? stop_turn(m, b, th0, way)
                                                          : turn[2 * k + way];
                qs[(size_t)k * (size_t)m->nq + (size_t)qa] += t;
                most = fmax(most, fabs(t));
                nturn += t != 0.0;
                first = first < 0 && t != 0.0 ? k : first;
                last = t != 0.0 ? k : last;
            }
            k0 = k1;
        }
        if (nturn > 0) {
            char text[FB_CLIP_WARN_LEN];
            snprintf(text, sizeof text,
                     "%s: turned out of the ground in %d frames (%d-%d), up to %.1f deg",
                     m->name[b], nturn, frame0 + first, frame0 + last, most * 180.0 / FB_PI);
            fb_ref_warn_first(r, text);
        }
    }
    fb_free(al, turn);
    return true;
}
