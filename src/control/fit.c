/* The reference's fit: the clip fitted smoothly, q, v, a per frame at the simulation rate
 * [Cline §5.1: "fit a smooth curve to the position data, then take its second derivative"],
 * by local polynomials [Savitzky–Golay], rotations on SO(3) [Chirikjian §10.2], the
 * smoothing chosen per joint by GCV [Craven–Wahba, Woltring].
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
 * spline through every frame would give accelerations only to O(h^2) and amplify noise. */
#include <math.h>
#include <string.h>

#include "control/ref_internal.h"
#include "featherbone/control.h"
#include "math/dense.h"
#include "math/detmath.h"
#include "math/quat.h"
#include "math/so3.h"

fb_fit_opts fb_default_fit_opts(void) {
    return (fb_fit_opts){.half_window = 0, .degree = 0, .keep_glitches = false};
}

/* The (half window, degree) pairs GCV chooses from, least smoothing first. */
const int fb_fit_ladder[][2] = {{4, 7}, {4, 6}, {4, 5}, {6, 7}, {6, 5},
                                {8, 7}, {8, 5},  {12, 7}, {12, 5}, {16, 5}};
_Static_assert(sizeof fb_fit_ladder / sizeof fb_fit_ladder[0] == FIT_NLADDER,
               "FIT_NLADDER counts fb_fit_ladder");

/* Times are normalised by `scale` samples around the centre sample k, which keeps the
 * normal equations well conditioned (monomials on [-1, 1]). Returns false if singular. */
bool fb_fit_window(int ns, int k, double x, int hw, int degree, fit_weights* fw) {
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
            e[c] = (c >= d) ? f * fb_powi(xs, c - d) : 0.0;
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
    if (!fb_fit_window(ns, k, x, hw, degree, fw)) {
        return false;
    }
    fit_weights mid, end;
    if ((fw->lo == k - hw && fw->n == 2 * hw + 1) ||
        !fb_fit_window(2 * hw + 1, hw, hw, hw, degree, &mid)) {
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
        if (!fb_fit_window(ns, k_end, x_end, hw, p, &end)) {
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
    return p == degree || fb_fit_window(ns, k, x, hw, p, fw);
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
 * fitted tangent vector (the frame is the tangent space's origin). Writes choice (nbody).
 * The pairs' windows at frame k all lie in their union, whose tangent vectors log(q_k^-1 q_j)
 * are computed once for every pair (the same numbers, summed in the same order, as
 * tangent_sums: 5 times fewer logarithms over the ladder). */
bool fb_fit_choose(const fb_model* m, int ns, const double* qs, const int (*pairs)[2],
                   int npair, double* score, int* choice) {
    const int nb = m->nbody, nq = m->nq;
    for (int b = 0; b < nb; b++) {
        choice[b] = 0;
    }
    if (npair == 1) {
        return true;
    }
    fit_weights fw[FIT_NLADDER];
    double lev[FIT_NLADDER] = {0.0};
    fb_v3 r[2 * FIT_HALF_WINDOW_MAX + 1];
    if (npair > FIT_NLADDER) {
        return false;
    }
    memset(score, 0, (size_t)npair * (size_t)nb * sizeof(double));
    for (int k = 0; k < ns; k++) {
        int lo = ns, hi = 0; /* the union of the windows: samples lo..hi-1 */
        for (int c = 0; c < npair; c++) {
            if (!fit_window_ends(ns, k, k, pairs[c][0], pairs[c][1], &fw[c])) {
                return false;
            }
            lev[c] += fw[c].w[0][k - fw[c].lo];
            lo = fw[c].lo < lo ? fw[c].lo : lo;
            hi = fw[c].lo + fw[c].n > hi ? fw[c].lo + fw[c].n : hi;
        }
        for (int b = 1; b < nb; b++) {
            const int qa = m->q_adr[b];
            const fb_joint_type jt = m->jtype[b];
            const int npos = jt == FB_JOINT_FLOATING ? 3 : (jt == FB_JOINT_REVOLUTE ||
                                                           jt == FB_JOINT_PRISMATIC) ? 1 : 0;
            const bool rot = jt == FB_JOINT_SPHERICAL || jt == FB_JOINT_FLOATING;
            const int qr = qa + (jt == FB_JOINT_FLOATING ? 3 : 0);
            if (rot) {
                const fb_quat qk_inv =
                    fb_quat_conj(fb_quat_load(qs + (size_t)k * (size_t)nq + (size_t)qr));
                for (int x = lo; x < hi; x++) {
                    const fb_quat qx = fb_quat_load(qs + (size_t)x * (size_t)nq + (size_t)qr);
                    r[x - lo] = fb_quat_log(fb_quat_mul(qk_inv, qx));
                }
            }
            for (int c = 0; c < npair; c++) {
                double* rss = score + (size_t)c * (size_t)nb;
                for (int i = 0; i < npos; i++) {
                    double f[3];
                    fit_scalar(&fw[c], qs, nq, qa + i, 1.0, f);
                    const double e = f[0] - qs[(size_t)k * (size_t)nq + (size_t)(qa + i)];
                    rss[b] += e * e;
                }
                if (rot) {
                    fb_v3 s0 = fb_v3_zero();
                    for (int x = 0; x < fw[c].n; x++) {
                        s0 = fb_v3_axpy(s0, fw[c].w[0][x], r[fw[c].lo + x - lo]);
                    }
                    rss[b] += fb_v3_dot(s0, s0);
                }
            }
        }
    }
    for (int c = 0; c < npair; c++) {
        double* rss = score + (size_t)c * (size_t)nb;
        const double g = 1.0 - lev[c] / ns;
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
bool fb_fit_frame(const fb_model* m, int ns, double sdt, const double* qs, double x,
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

bool fb_fit_rates_changed(const fb_model* m, const double* q_before, fb_ref* out,
                          const unsigned char* changed, double* tmp) {
    const int nf = out->nframe, hw = FIT_REFIT_HALF_WINDOW;
    const int pairs[1][2] = {{FIT_REFIT_HALF_WINDOW, FIT_REFIT_DEGREE}};
    int* zeros = (int*)(void*)(tmp + 2 * (size_t)m->nq + 4 * (size_t)m->nv);
    for (int b = 0; b < m->nbody; b++) {
        zeros[b] = 0;
    }
    double* qf = tmp;
    double* vg = tmp + 2 * (size_t)m->nq;
    double* ag = vg + m->nv;
    double* vo = ag + m->nv;
    double* ao = vo + m->nv;
    for (int i = 0; i < nf; i++) {
        bool near = false;
        for (int j = i - hw - 1; j <= i + hw + 1 && !near; j++) {
            near = j >= 0 && j < nf && changed[j];
        }
        if (!near) {
            continue;
        }
        if (!fb_fit_frame(m, nf, out->dt, out->q, i, pairs, zeros, qf, vg, ag) ||
            !fb_fit_frame(m, nf, out->dt, q_before, i, pairs, zeros, qf, vo, ao)) {
            return false;
        }
        double* v = out->v + (size_t)i * (size_t)m->nv;
        double* a = out->a + (size_t)i * (size_t)m->nv;
        for (int j = 0; j < m->nv; j++) {
            v[j] += vg[j] - vo[j];
            a[j] += ag[j] - ao[j];
        }
    }
    return true;
}
