/* fb_ref: the clip fitted smoothly (q, v, a per frame at the simulation rate) and the
 * feedforward torques of inverse dynamics [Cline §5.1: "fit a smooth curve to the position
 * data, then take its second derivative"].
 *
 * The fit: at every output time the clip frame k nearest to it is the centre of a window of
 * 2 half_window + 1 frames, and a polynomial of `degree` is fitted to them by least squares
 * (a Savitzky-Golay filter evaluated off-centre, which the window's weights absorb).
 * Rotations are fitted in the tangent space at frame k: r_j = log(q_k^-1 q_j), then
 * q = q_k exp(r), w = J_r(r) r', w' = J_r(r) r'' + (d/dt J_r) r' exactly (math/so3.h).
 *
 * How much to smooth is chosen per joint from the data by generalised cross-validation
 * [Craven & Wahba 1979; Woltring 1986, the GCVSPL package biomechanics uses for exactly this]:
 * among a ladder of (window, degree) pairs, the one minimising
 *     GCV = mean squared residual at the clip frames / (1 - mean leverage)^2.
 * On clean motion that is the least smoothing pair (the residuals vanish), whose derivatives
 * are accurate to 1e-7 of their peak on a 1-2 Hz sinusoid at 120 Hz (tests/test_control.c);
 * on noisy capture it is a wider window, which keeps the noise out of the accelerations and
 * so out of the feedforward torques. Why this fit: it is local (a bad frame touches only its
 * window), reproduces polynomials up to its degree exactly, and needs no tuning. A cubic
 * spline through every frame would give accelerations only to O(h^2) and amplify noise.
 *
 * Before the fit, capture glitches (a joint leaving the curve for 1-3 frames and coming back)
 * are replaced by the curve through the frames around them ("capture glitches" below). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/collision.h"
#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "dynamics/kinematics.h"
#include "math/dense.h"
#include "math/quat.h"
#include "math/so3.h"
#include "util/atomic_file.h"
#include "util/error.h"

/* Largest half window and output rate accepted. */
#define FIT_HALF_WINDOW_MAX 32
#define REF_RATE_MAX 10000.0

fb_fit_opts fb_default_fit_opts(void) {
    return (fb_fit_opts){.half_window = 0, .degree = 0, .keep_glitches = false};
}

/* The (half window, degree) pairs GCV chooses from, least smoothing first. */
static const int FIT_LADDER[][2] = {{4, 7}, {4, 6}, {4, 5}, {6, 7}, {6, 5},
                                    {8, 7}, {8, 5},  {12, 7}, {12, 5}, {16, 5}};
#define FIT_NLADDER ((int)(sizeof FIT_LADDER / sizeof FIT_LADDER[0]))

void fb_ref_destroy(fb_ref* r) {
    if (!r) {
        return;
    }
    const fb_allocator a = r->alloc;
    fb_free(&a, r->q);
    fb_free(&a, r->fit_half_window);
    fb_free(&a, r);
}

double fb_ref_duration(const fb_ref* r) {
    return (r->nframe - 1) * r->dt;
}

/* Least-squares weights over a window: value, first and second derivative (per unit of the
 * normalised time s) at s = x of the polynomial of degree p fitted to samples at s_j. */
typedef struct fit_weights {
    int lo, n;                    /* window: samples lo .. lo + n - 1 */
    double w[3][2 * FIT_HALF_WINDOW_MAX + 1];
} fit_weights;

/* Times are normalised by `scale` samples around the centre sample k, which keeps the
 * normal equations well conditioned (monomials on [-1, 1]). Returns false if singular. */
static bool fit_window(int ns, int k, double x, int hw, int degree, fit_weights* fw) {
    int lo = k - hw, hi = k + hw;
    if (lo < 0) {
        hi -= lo;
        lo = 0;
    }
    if (hi > ns - 1) {
        lo -= hi - (ns - 1);
        hi = ns - 1;
        if (lo < 0) {
            lo = 0;
        }
    }
    const int n = hi - lo + 1;
    const int p = degree < n - 1 ? degree : n - 1;
    const int nc = p + 1;
    const double scale = (double)hw;
    double G[(2 * FIT_HALF_WINDOW_MAX + 1) * (2 * FIT_HALF_WINDOW_MAX + 1)];
    double V[2 * FIT_HALF_WINDOW_MAX + 1][2 * FIT_HALF_WINDOW_MAX + 1];
    for (int j = 0; j < n; j++) {
        const double s = (lo + j - k) / scale;
        double pw = 1.0;
        for (int c = 0; c < nc; c++) {
            V[j][c] = pw;
            pw *= s;
        }
    }
    for (int r = 0; r < nc; r++) {
        for (int c = 0; c < nc; c++) {
            double acc = 0.0;
            for (int j = 0; j < n; j++) {
                acc += V[j][r] * V[j][c];
            }
            G[r * nc + c] = acc;
        }
    }
    if (!fb_chol_factor(G, nc)) {
        return false;
    }
    const double xs = (x - k) / scale;
    for (int d = 0; d < 3; d++) {
        /* e = d-th derivative of [1 s s^2 ...] at xs */
        double e[2 * FIT_HALF_WINDOW_MAX + 1];
        for (int c = 0; c < nc; c++) {
            double f = 1.0;
            for (int t = 0; t < d; t++) {
                f *= (double)(c - t);
            }
            e[c] = (c >= d) ? f * pow(xs, c - d) : 0.0;
        }
        fb_chol_solve(G, nc, e);
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int c = 0; c < nc; c++) {
                acc += V[j][c] * e[c];
            }
            fw->w[d][j] = acc;
        }
    }
    fw->lo = lo;
    fw->n = n;
    return true;
}

/* fit_window, with the degree lowered where the window has slid inwards at the clip's ends:
 * an off-centre polynomial of high degree amplifies the capture noise of the first and last
 * frames enormously (degree 7 over 9 frames: its second derivative has 1150 times the noise
 * variance of the middle at the first frame, 7000 times half a frame before it). The degree
 * is the highest whose second derivative at the clip's end (half a sample beyond it, where
 * the reference's first step reads it) has no more noise than in the middle (the sum of the
 * squared weights), and the same for every evaluation point of that end, so that the fitted
 * curve does not jump between them. */
static bool fit_window_ends(int ns, int k, double x, int hw, int degree, fit_weights* fw) {
    if (!fit_window(ns, k, x, hw, degree, fw)) {
        return false;
    }
    fit_weights mid, end;
    if ((fw->lo == k - hw && fw->n == 2 * hw + 1) ||
        !fit_window(2 * hw + 1, hw, hw, hw, degree, &mid)) {
        return true; /* centred (or the clip is shorter than the window) */
    }
    double cap = 0.0;
    for (int j = 0; j < mid.n; j++) {
        cap += mid.w[2][j] * mid.w[2][j];
    }
    const bool start = fw->lo == 0;
    const int k_end = start ? 0 : ns - 1;
    const double x_end = start ? -0.5 : ns - 0.5;
    int p = degree;
    for (; p > 2; p--) {
        if (!fit_window(ns, k_end, x_end, hw, p, &end)) {
            return false;
        }
        double var = 0.0;
        for (int j = 0; j < end.n; j++) {
            var += end.w[2][j] * end.w[2][j];
        }
        if (var <= cap) {
            break;
        }
    }
    return p == degree || fit_window(ns, k, x, hw, p, fw);
}

/* Value, first and second time derivative of a scalar sequence over the window. */
static void fit_scalar(const fit_weights* fw, const double* q, int stride, int idx, double T,
                       double out[3]) {
    double s[3] = {0.0, 0.0, 0.0};
    for (int j = 0; j < fw->n; j++) {
        const double y = q[(size_t)(fw->lo + j) * (size_t)stride + (size_t)idx];
        for (int d = 0; d < 3; d++) {
            s[d] += fw->w[d][j] * y;
        }
    }
    out[0] = s[0];
    out[1] = s[1] / T;
    out[2] = s[2] / (T * T);
}

/* The window's weighted sums of tangent vectors r_j = log(q_k^-1 q_j) (quaternions at
 * q[j stride + idx]) for the value and the two derivatives (per unit normalised time). */
static void tangent_sums(const fit_weights* fw, const double* q, int stride, int idx, int k,
                         fb_v3 s[3]) {
    const fb_quat qk_inv = fb_quat_conj(fb_quat_load(q + (size_t)k * (size_t)stride + (size_t)idx));
    s[0] = s[1] = s[2] = fb_v3_zero();
    for (int j = 0; j < fw->n; j++) {
        const fb_quat qj = fb_quat_load(q + (size_t)(fw->lo + j) * (size_t)stride + (size_t)idx);
        const fb_v3 r = fb_quat_log(fb_quat_mul(qk_inv, qj));
        for (int d = 0; d < 3; d++) {
            s[d] = fb_v3_axpy(s[d], fw->w[d][j], r);
        }
    }
}

/* A rotation over the window, in the tangent space at sample k: the fitted rotation and its
 * body angular velocity and acceleration. */
static void fit_rotation(const fit_weights* fw, const double* q, int stride, int idx, int k,
                         double T, fb_quat* rot, fb_v3* w, fb_v3* wd) {
    fb_v3 s[3];
    tangent_sums(fw, q, stride, idx, k, s);
    const fb_v3 r = s[0], rd = fb_v3_scale(s[1], 1.0 / T), rdd = fb_v3_scale(s[2], 1.0 / (T * T));
    const fb_quat qk = fb_quat_load(q + (size_t)k * (size_t)stride + (size_t)idx);
    *rot = fb_quat_normalize(fb_quat_mul(qk, fb_quat_exp(r)));
    *w = fb_so3_jr(r, rd);
    *wd = fb_v3_add(fb_so3_jr(r, rdd), fb_so3_jr_dot(r, rd));
}

/* GCV choice of body b's (window, degree) pair among `pairs`: for each pair, the fit at every
 * clip frame k (evaluated at k) against the frame itself; rotations by the angle of the
 * fitted tangent vector (the frame is the tangent space's origin). Writes choice (nbody). */
static bool fit_choose(const fb_model* m, int ns, const double* qs, const int (*pairs)[2],
                       int npair, double* score, int* choice) {
    const int nb = m->nbody, nq = m->nq;
    for (int b = 0; b < nb; b++) {
        choice[b] = 0;
    }
    if (npair == 1) {
        return true;
    }
    fit_weights fw;
    for (int c = 0; c < npair; c++) {
        double* rss = score + (size_t)c * (size_t)nb;
        memset(rss, 0, (size_t)nb * sizeof(double));
        double lev = 0.0;
        for (int k = 0; k < ns; k++) {
            if (!fit_window_ends(ns, k, k, pairs[c][0], pairs[c][1], &fw)) {
                return false;
            }
            lev += fw.w[0][k - fw.lo];
            for (int b = 1; b < nb; b++) {
                const int qa = m->q_adr[b];
                const fb_joint_type jt = m->jtype[b];
                double f[3];
                const int npos = jt == FB_JOINT_FLOATING ? 3 : (jt == FB_JOINT_REVOLUTE ||
                                                               jt == FB_JOINT_PRISMATIC) ? 1 : 0;
                for (int i = 0; i < npos; i++) {
                    fit_scalar(&fw, qs, nq, qa + i, 1.0, f);
                    const double e = f[0] - qs[(size_t)k * (size_t)nq + (size_t)(qa + i)];
                    rss[b] += e * e;
                }
                if (jt == FB_JOINT_SPHERICAL || jt == FB_JOINT_FLOATING) {
                    fb_v3 sums[3];
                    tangent_sums(&fw, qs, nq, qa + (jt == FB_JOINT_FLOATING ? 3 : 0), k, sums);
                    const fb_v3 r = sums[0];
                    rss[b] += fb_v3_dot(r, r);
                }
            }
        }
        const double g = 1.0 - lev / ns;
        for (int b = 1; b < nb; b++) {
            rss[b] = (rss[b] / ns) / (g * g);
        }
    }
    for (int b = 1; b < nb; b++) {
        for (int c = 1; c < npair; c++) {
            if (score[(size_t)c * (size_t)nb + (size_t)b] <
                score[(size_t)choice[b] * (size_t)nb + (size_t)b]) {
                choice[b] = c;
            }
        }
    }
    return true;
}

/* q, v, a of every joint at time x (in samples) of the sampled motion, body b fitted with the
 * pair pairs[choice[b]]. */
static bool fit_frame(const fb_model* m, int ns, double sdt, const double* qs, double x,
                      const int (*pairs)[2], const int* choice, double* q, double* v,
                      double* a) {
    int k = (int)floor(x + 0.5);
    k = k < 0 ? 0 : (k > ns - 1 ? ns - 1 : k);
    fit_weights fws[FIT_NLADDER];
    bool have[FIT_NLADDER] = {false};
    const int nq = m->nq;
    for (int b = 1; b < m->nbody; b++) {
        const int c = choice[b];
        if (m->jtype[b] == FB_JOINT_FIXED) {
            continue;
        }
        if (!have[c]) {
            if (!fit_window_ends(ns, k, x, pairs[c][0], pairs[c][1], &fws[c])) {
                return false;
            }
            have[c] = true;
        }
        const fit_weights* fw = &fws[c];
        const double T = pairs[c][0] * sdt;
        const int qa = m->q_adr[b], va = m->v_adr[b];
        switch (m->jtype[b]) {
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC: {
            double f[3];
            fit_scalar(fw, qs, nq, qa, T, f);
            q[qa] = f[0];
            v[va] = f[1];
            a[va] = f[2];
            break;
        }
        case FB_JOINT_SPHERICAL: {
            fb_quat rot;
            fb_v3 w, wd;
            fit_rotation(fw, qs, nq, qa, k, T, &rot, &w, &wd);
            fb_quat_store(q + qa, rot);
            memcpy(v + va, &w, sizeof w);
            memcpy(a + va, &wd, sizeof wd);
            break;
        }
        case FB_JOINT_FLOATING: {
            /* position in the parent (world) frame; v and a want the body's own axes:
             * v_lin = R^T p', and the spatial acceleration's linear part R^T p'' - w x v_lin */
            double pc[3][3]; /* [component][value, first, second derivative] */
            for (int i = 0; i < 3; i++) {
                fit_scalar(fw, qs, nq, qa + i, T, pc[i]);
            }
            const fb_v3 p = fb_v3_make(pc[0][0], pc[1][0], pc[2][0]);
            const fb_v3 pd = fb_v3_make(pc[0][1], pc[1][1], pc[2][1]);
            const fb_v3 pdd = fb_v3_make(pc[0][2], pc[1][2], pc[2][2]);
            fb_quat rot;
            fb_v3 w, wd;
            fit_rotation(fw, qs, nq, qa + 3, k, T, &rot, &w, &wd);
            const fb_quat inv = fb_quat_conj(rot);
            const fb_v3 vl = fb_quat_rotate(inv, pd);
            const fb_v3 al = fb_v3_sub(fb_quat_rotate(inv, pdd), fb_v3_cross(w, vl));
            q[qa] = p.x;
            q[qa + 1] = p.y;
            q[qa + 2] = p.z;
            fb_quat_store(q + qa + 3, rot);
            memcpy(v + va, &w, sizeof w);
            memcpy(v + va + 3, &vl, sizeof vl);
            memcpy(a + va, &wd, sizeof wd);
            memcpy(a + va + 3, &al, sizeof al);
            break;
        }
        case FB_JOINT_FIXED:
            break;
        }
    }
    return true;
}

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
        (void)fit_window(GLITCH_END_FIT, 0, (j - base) * dir, GLITCH_END_FIT / 2, 2, &fw);
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
static bool repair_glitches(const fb_model* m, double* qs, int ns, double sample_dt, int frame0,
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

/* Puts a warning line first: what moved the reference as a whole (the placement) or a segment
 * over many frames matters more than the last of many glitch lines, which drop off when there
 * are more than FB_CLIP_MAX_WARN. */
static void warn_first(fb_ref* r, const char* text) {
    const int keep = r->nwarn < FB_CLIP_MAX_WARN ? r->nwarn : FB_CLIP_MAX_WARN - 1;
    memmove(r->warn[1], r->warn[0], (size_t)keep * sizeof r->warn[0]);
    snprintf(r->warn[0], FB_CLIP_WARN_LEN, "%s", text);
    r->nwarn++;
}

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

/* Whether body b is an end segment (above). */
static bool end_hinge(const fb_model* m, int b) {
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

/* Signed height over the plane of body b's lowest shape point (m). Needs FB_STAGE_POS. */
static double lowest_point(const fb_model* m, const fb_data* d, int b, fb_plane g) {
    double h = INFINITY;
    for (int k = 0; k < m->nshape; k++) {
        const fb_shape* s = &m->shape[k];
        if (s->body != b) {
            continue;
        }
        const double c = fb_v3_dot(g.n, fb_point_pos(m, d, b, s->p0)) - g.offset;
        switch (s->type) {
        case FB_SHAPE_SPHERE:
            h = fmin(h, c - s->radius);
            break;
        case FB_SHAPE_CAPSULE:
            h = fmin(h, fmin(c, fb_v3_dot(g.n, fb_point_pos(m, d, b, s->p1)) - g.offset) -
                            s->radius);
            break;
        case FB_SHAPE_BOX: {
            /* the plane's normal in the box's axes: the half extents along it */
            const fb_v3 nb = fb_m3_tr_mv(s->R, fb_m3_tr_mv(fb_body_rot(m, d, b), g.n));
            h = fmin(h, c - 0.5 * (fabs(nb.x) * s->size.x + fabs(nb.y) * s->size.y +
                                   fabs(nb.z) * s->size.z));
            break;
        }
        }
    }
    return h;
}

/* Height of body b's lowest point with its hinge at angle th (d->q holds the rest of the
 * pose, whose kinematics are current: only b's own transform is redone). */
static double height_at(const fb_model* m, fb_data* d, int b, double th, fb_plane g) {
    d->q[m->q_adr[b]] = th;
    fb_kin_body_pos(m, d, b);
    return lowest_point(m, d, b, g);
}

/* The hinge angle nearest th0 at which body b's lowest point is at least `target` over the
 * plane, searched `dir` (+1, -1) up to half a turn and within the joint's limits; false when
 * there is none. */
static bool clearing_angle(const fb_model* m, fb_data* d, int b, double th0, int dir, fb_plane g,
                           double target, double* th) {
    const fb_joint_limit* L = &m->limit[b];
    double in = th0, out = NAN;
    for (double t = CLEAR_STEP; t <= FB_PI + 1e-12; t += CLEAR_STEP) {
        const double x = th0 + dir * t;
        if (L->on && (x < L->lo || x > L->hi)) {
            return false;
        }
        if (height_at(m, d, b, x, g) >= target) {
            out = x;
            break;
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

/* Turns every end segment of the samples qs (ns x nq) out of the ground, or as far out as it
 * turns (above). A segment can clear the ground turning either way (a toe pointing into the
 * floor, forwards or backwards); within a run of frames that need it, it turns the same way
 * throughout, since going over to the other side would take it through the floor: the way
 * that turns it less at the run's first and last frames (where the reference would jump by
 * it), then less summed over the run. One warning per segment turned, naming
 * its frames (frame0 = the first sample's) and the largest turn. False when out of memory. */
static bool clear_end_segments(const fb_model* m, double* qs, int ns, int frame0, fb_data* d,
                               const fb_allocator* al, fb_ref* r) {
    const fb_plane g = fb_ground_plane();
    double* turn = fb_alloc(al, 2 * (size_t)ns * sizeof(double)); /* (ns x 2) up, down; NAN */
    if (!turn) {
        return false;
    }
    for (int b = 1; b < m->nbody; b++) {
        if (!end_hinge(m, b)) {
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
            while (k1 < ns && !(turn[2 * k1] == 0.0 && turn[2 * k1 + 1] == 0.0)) {
                cost[0] += fabs(turn[2 * k1]); /* NAN when it cannot turn that way */
                cost[1] += fabs(turn[2 * k1 + 1]);
                k1++;
            }
            /* the way whose turn at the run's ends is smaller: there the reference jumps by
             * it, from the frames around the run */
            double edge[2];
            for (int w = 0; w < 2; w++) {
                const double first_turn = fabs(turn[2 * k0 + w]);
                const double last_turn = fabs(turn[2 * (k1 - 1) + w]);
                edge[w] = isnan(cost[w]) ? INFINITY : fmax(first_turn, last_turn);
            }
            const int way = edge[1] < edge[0] || (edge[1] == edge[0] && cost[1] < cost[0]) ? 1 : 0;
            for (int k = k0; k < k1; k++) {
                /* a frame the chosen way cannot clear (out of the joint's range) keeps its
                 * angle */
                const double t = isnan(turn[2 * k + way]) ? 0.0 : turn[2 * k + way];
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
            warn_first(r, text);
        }
    }
    fb_free(al, turn);
    return true;
}

/* ---- the clip's floor ----------------------------------------------------------------------- */

/* m: a placement smaller than this is not worth a warning line */
#define PLACE_NOTE_MIN 1e-6

/* Where the clip's floor is. A capture's floor is where the subject stood, which the skeleton
 * fitted to the markers and the character's shapes only approximate: 131_01's shapes reach
 * 0.84 cm into the plane y = 0 as it kneels while its standing feet float 2-4 cm above it.
 * With a kinematic root such a pose cannot be followed at all: the contact pushes the limb
 * off it, the tracking rows give way at their torque limits. So the reference is placed, by
 * one vertical shift of the floating root over the whole clip, with the lowest point of the
 * character's shapes over all frames on the ground: the clip's floor is the lowest its body
 * goes. Every joint keeps its place relative to every other, at every frame; the metrics
 * compare the simulation with the reference so placed, and the simulation (and so what is
 * exported from it) starts from it. A model without a floating root on the world, or without
 * shapes, is left where it is. */
static void place_on_ground(const fb_model* m, fb_ref* r, double* qs, int ns, fb_data* d) {
    int root = -1;
    for (int b = 1; b < m->nbody && root < 0; b++) {
        root = m->parent[b] == 0 && m->jtype[b] == FB_JOINT_FLOATING ? b : -1;
    }
    if (root < 0 || m->nshape == 0) {
        return;
    }
    const fb_plane g = fb_ground_plane();
    double low = INFINITY, t_low = 0.0;
    int b_low = 0;
    for (int i = 0; i < r->nframe; i++) {
        memcpy(d->q, r->q + (size_t)i * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, d);
        for (int s = 0; s < m->nshape; s++) {
            const int b = m->shape[s].body;
            if (s > 0 && m->shape[s - 1].body == b) {
                continue; /* lowest_point took all of b's shapes */
            }
            const double h = lowest_point(m, d, b, g);
            if (h < low) {
                low = h;
                b_low = b;
                t_low = i * r->dt;
            }
        }
    }
    /* the shift along the ground's normal, in the root joint's parent frame (E maps world
     * directions into it; a Z-up clip's root frame is turned) */
    const fb_v3 dp = fb_m3_mv(m->X_tree[root].E, fb_v3_scale(g.n, -low));
    /* the frames, and the samples the first frame's velocity is extrapolated from */
    for (int i = 0; i < r->nframe + ns; i++) {
        double* p = (i < r->nframe ? r->q + (size_t)i * (size_t)m->nq
                                   : qs + (size_t)(i - r->nframe) * (size_t)m->nq) +
                    (size_t)m->q_adr[root];
        p[0] += dp.x;
        p[1] += dp.y;
        p[2] += dp.z;
    }
    if (fabs(low) < PLACE_NOTE_MIN) {
        return; /* on the ground already (a segment just turned onto it) */
    }
    char text[FB_CLIP_WARN_LEN];
    snprintf(text, sizeof text,
             "placed %.2f cm %s: the lowest point of the shapes (%s at %.3f s) on the ground",
             100.0 * fabs(low), low < 0.0 ? "higher" : "lower", m->name[b_low], t_low);
    warn_first(r, text);
}

/* fb_ref_create; frame0 numbers the first sample in the warnings. */
static fb_ref* ref_create(const fb_model* m, int nsample, double sample_dt, const double* q,
                          double rate, const fb_fit_opts* opts, const fb_allocator* alloc,
                          int frame0, fb_error* err) {
    const fb_fit_opts o = opts ? *opts : fb_default_fit_opts();
    if (!m || !m->finalized) {
        fb_fail(err, FB_ESTATE, "reference: the model is not finalized");
        return NULL;
    }
    const bool automatic = o.half_window == 0 && o.degree == 0;
    if (!automatic && (o.half_window < 1 || o.half_window > FIT_HALF_WINDOW_MAX)) {
        fb_fail(err, FB_EINVAL, "fit half_window: expected 0 (automatic) or 1 to %d, found %d",
                FIT_HALF_WINDOW_MAX, o.half_window);
        return NULL;
    }
    if (!automatic && (o.degree < 2 || o.degree > 2 * o.half_window)) {
        fb_fail(err, FB_EINVAL, "fit degree: expected 2 to %d (2 half_window), found %d",
                2 * o.half_window, o.degree);
        return NULL;
    }
    if (nsample < 3 || !q) {
        fb_fail(err, FB_EINVAL, "reference: expected at least 3 samples, found %d", nsample);
        return NULL;
    }
    if (!(sample_dt > 0.0) || !isfinite(sample_dt)) {
        fb_fail(err, FB_EINVAL, "reference: sample interval must be > 0, found %g", sample_dt);
        return NULL;
    }
    if (!(rate >= 0.0) || rate > REF_RATE_MAX) {
        fb_fail(err, FB_EINVAL, "rate: expected 0 (the samples' rate) to %g Hz, found %g",
                REF_RATE_MAX, rate);
        return NULL;
    }
    for (long i = 0; i < (long)nsample * m->nq; i++) {
        if (!isfinite(q[i])) {
            fb_fail(err, FB_EINVAL, "reference: sample %ld, coordinate %ld is not finite",
                    i / m->nq, i % m->nq);
            return NULL;
        }
    }
    const double dt = rate > 0.0 ? 1.0 / rate : sample_dt;
    const long nf = 1 + (long)floor((nsample - 1) * sample_dt / dt + 1e-9);
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    fb_ref* r = fb_alloc(&a, sizeof *r);
    const size_t per = (size_t)m->nq + 5 * (size_t)m->nv;
    double* block = fb_alloc(&a, (size_t)nf * per * sizeof(double) + 1);
    int* ints = fb_alloc(&a, 4 * (size_t)m->nbody * sizeof(int));
    double* score = fb_alloc(&a, (size_t)FIT_NLADDER * (size_t)m->nbody * sizeof(double));
    /* the samples the fit reads (repaired), and scratch for q[-1] */
    double* qs = fb_alloc(&a, ((size_t)nsample + 1) * (size_t)m->nq * sizeof(double) +
                                  2 * (size_t)m->nv * sizeof(double));
    fb_data* d = fb_data_create(m, &a, err);
    if (r) {
        memset(r, 0, sizeof *r);
        r->alloc = a;
        r->q = block;
        r->fit_half_window = ints;
    }
    if (!r || !block || !ints || !score || !qs || !d) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory for %ld frames", nf);
        goto fail;
    }
    r->nframe = (int)nf;
    r->nq = m->nq;
    r->nv = m->nv;
    r->dt = dt;
    r->v = r->q + (size_t)nf * (size_t)m->nq;
    r->a = r->v + (size_t)nf * (size_t)m->nv;
    r->tau = r->a + (size_t)nf * (size_t)m->nv;
    r->v_step = r->tau + (size_t)nf * (size_t)m->nv;
    r->a_step = r->v_step + (size_t)nf * (size_t)m->nv;
    r->fit_degree = ints + m->nbody;
    int* choice = ints + 2 * m->nbody;
    r->repaired = ints + 3 * m->nbody;
    memset(r->repaired, 0, (size_t)m->nbody * sizeof(int));
    memcpy(qs, q, (size_t)nsample * (size_t)m->nq * sizeof(double));
    if (!o.keep_glitches && !repair_glitches(m, qs, nsample, sample_dt, frame0, &a, r)) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory");
        goto fail;
    }
    if (!o.keep_glitches && !clear_end_segments(m, qs, nsample, frame0, d, &a, r)) {
        fb_fail(err, FB_ENOMEM, "reference: out of memory");
        goto fail;
    }
    const int fixed[1][2] = {{o.half_window, o.degree}};
    const int(*pairs)[2] = automatic ? FIT_LADDER : fixed;
    if (!fit_choose(m, nsample, qs, pairs, automatic ? FIT_NLADDER : 1, score, choice)) {
        fb_fail(err, FB_ENUMERIC, "reference: a fit window is singular");
        goto fail;
    }
    for (int b = 0; b < m->nbody; b++) {
        r->fit_half_window[b] = pairs[choice[b]][0];
        r->fit_degree[b] = pairs[choice[b]][1];
    }
    for (long i = 0; i < nf; i++) {
        double* qi = r->q + (size_t)i * (size_t)m->nq;
        double* vi = r->v + (size_t)i * (size_t)m->nv;
        double* ai = r->a + (size_t)i * (size_t)m->nv;
        fb_q_neutral(m, qi);
        memset(vi, 0, (size_t)m->nv * sizeof(double));
        memset(ai, 0, (size_t)m->nv * sizeof(double));
        if (!fit_frame(m, nsample, sample_dt, qs, i * dt / sample_dt, pairs, choice, qi, vi, ai)) {
            fb_fail(err, FB_ENUMERIC, "reference: the fit at frame %ld is singular", i);
            goto fail;
        }
    }
    if (!o.keep_glitches) {
        place_on_ground(m, r, qs, nsample, d);
    }
    /* The integrator-consistent velocities and accelerations (see fb_ref in control.h):
     * v_step[i] = (q[i-1] (-) q[i]) / dt, q[-1] from the fit extrapolated one frame back;
     * a_step[i] = (v_step[i+1] - v_step[i]) / dt; the last frame keeps the one before. */
    double* qm1 = qs + (size_t)nsample * (size_t)m->nq;
    double* vtmp = qm1 + m->nq;
    double* atmp = vtmp + m->nv;
    for (long i = 0; i < nf; i++) {
        const double* qi = r->q + (size_t)i * (size_t)m->nq;
        double* vs = r->v_step + (size_t)i * (size_t)m->nv;
        if (i == 0) {
            fb_q_neutral(m, qm1);
            (void)fit_frame(m, nsample, sample_dt, qs, -dt / sample_dt, pairs, choice, qm1, vtmp,
                            atmp);
            fb_difference(m, qm1, qi, vs);
        } else {
            fb_difference(m, qi - m->nq, qi, vs);
        }
        for (int j = 0; j < m->nv; j++) {
            vs[j] /= dt;
        }
    }
    for (long i = 0; i < nf; i++) {
        double* as = r->a_step + (size_t)i * (size_t)m->nv;
        const double* vs = r->v_step + (size_t)i * (size_t)m->nv;
        if (i + 1 < nf) {
            for (int j = 0; j < m->nv; j++) {
                as[j] = (vs[m->nv + j] - vs[j]) / dt;
            }
        } else if (nf > 1) {
            memcpy(as, as - m->nv, (size_t)m->nv * sizeof(double));
        } else {
            memcpy(as, r->a, (size_t)m->nv * sizeof(double));
        }
        /* feedforward: psi = M a + C (gravity, velocity products, damping) at the state the
         * integrator will have */
        memcpy(d->q, r->q + (size_t)i * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        memcpy(d->qd, vs, (size_t)m->nv * sizeof(double));
        fb_rnea(m, d, as, r->tau + (size_t)i * (size_t)m->nv);
    }
    fb_free(&a, score);
    fb_free(&a, qs);
    fb_data_destroy(d);
    fb_ok(err);
    return r;
fail:
    fb_free(&a, score);
    fb_free(&a, qs);
    fb_data_destroy(d);
    if (r) {
        fb_ref_destroy(r);
    } else {
        fb_free(&a, block);
        fb_free(&a, ints);
    }
    return NULL;
}

fb_ref* fb_ref_create(const fb_model* m, int nsample, double sample_dt, const double* q,
                      double rate, const fb_fit_opts* opts, const fb_allocator* alloc,
                      fb_error* err) {
    return ref_create(m, nsample, sample_dt, q, rate, opts, alloc, 0, err);
}

fb_ref* fb_ref_from_clip(const fb_clip* clip, const fb_character* ch, double rate, int first,
                         int last, const fb_fit_opts* opts, fb_error* err) {
    fb_motion* mo = fb_motion_from_clip(clip, ch, 0.0, first, last, err);
    if (!mo) {
        return NULL;
    }
    fb_ref* r = ref_create(ch->model, mo->nframe, mo->dt, mo->q, rate, opts, &clip->alloc, first,
                           err);
    fb_motion_destroy(mo);
    return r;
}

void fb_ref_at(const fb_model* m, const fb_ref* r, double t, double* q, double* v, double* a,
               double* tau, double* tmp) {
    const int last = r->nframe - 1;
    /* a time within 1e-6 frames of a frame is that frame (the world's clock is a sum of
     * substeps and lands a rounding error either side) */
    const double x = t / r->dt;
    int i = (int)floor(fabs(x - round(x)) < 1e-6 ? round(x) : x);
    i = i < 0 ? 0 : (i > last ? last : i);
    double s = t - i * r->dt;
    s = (s < 1e-6 * r->dt || i == last) ? 0.0 : fmin(s, r->dt);
    const int nv = m->nv;
    const double* vi = r->v_step + (size_t)i * (size_t)nv;
    const double* ai = r->a_step + (size_t)i * (size_t)nv;
    if (q) {
        /* the integrator's path: from q_i along v_step[i + 1] */
        const double* vn = (i < last) ? vi + nv : vi;
        for (int j = 0; j < nv; j++) {
            tmp[j] = vn[j] * s;
        }
        fb_integrate(m, r->q + (size_t)i * (size_t)m->nq, tmp, 1.0, q);
    }
    if (v) {
        for (int j = 0; j < nv; j++) {
            v[j] = vi[j] + ai[j] * s;
        }
    }
    if (a) {
        memcpy(a, ai, (size_t)nv * sizeof(double));
    }
    if (tau) {
        const double* t0 = r->tau + (size_t)i * (size_t)nv;
        const double* t1 = (i < last) ? t0 + nv : t0;
        const double u = s / r->dt;
        for (int j = 0; j < nv; j++) {
            tau[j] = t0[j] + u * (t1[j] - t0[j]);
        }
    }
}

/* One column name per dof: the joint's name and its axis ("LeftElbow", "Neck.x", "Hips.fy"). */
static void dof_label(const fb_model* m, int j, char* out, size_t cap) {
    const int b = m->dof_body[j], k = j - m->v_adr[b];
    static const char* const AXES3[] = {"x", "y", "z"};
    static const char* const AXES6[] = {"nx", "ny", "nz", "fx", "fy", "fz"};
    switch (m->jtype[b]) {
    case FB_JOINT_SPHERICAL:
        snprintf(out, cap, "%s.%s", m->name[b], AXES3[k]);
        break;
    case FB_JOINT_FLOATING:
        snprintf(out, cap, "%s.%s", m->name[b], AXES6[k]);
        break;
    default:
        snprintf(out, cap, "%s", m->name[b]);
    }
}

fb_status fb_ref_write_torques_csv(const fb_model* m, const fb_ref* r, const char* path,
                                   fb_error* err) {
    fb_atomic_file af;
    fb_status s = fb_atomic_open(&af, path, err);
    if (s != FB_OK) {
        return s;
    }
    fputs("time_s", af.f);
    for (int j = 0; j < m->nv; j++) {
        char label[FB_NAME_MAX + 8];
        dof_label(m, j, label, sizeof label);
        fprintf(af.f, ",%s", label);
    }
    fputc('\n', af.f);
    for (int i = 0; i < r->nframe; i++) {
        fprintf(af.f, "%.6f", i * r->dt);
        for (int j = 0; j < m->nv; j++) {
            fprintf(af.f, ",%.6g", r->tau[(size_t)i * (size_t)m->nv + (size_t)j]);
        }
        fputc('\n', af.f);
    }
    return fb_atomic_commit(&af, err);
}

void fb_dof_label(const fb_model* m, int dof, char* out, size_t cap) {
    dof_label(m, dof, out, cap);
}
