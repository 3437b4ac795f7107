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
 * spline through every frame would give accelerations only to O(h^2) and amplify noise. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "math/dense.h"
#include "math/quat.h"
#include "math/so3.h"
#include "util/atomic_file.h"
#include "util/error.h"

/* Largest half window and output rate accepted. */
#define FIT_HALF_WINDOW_MAX 32
#define REF_RATE_MAX 10000.0

fb_fit_opts fb_default_fit_opts(void) {
    return (fb_fit_opts){.half_window = 0, .degree = 0};
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
            if (!fit_window(ns, k, k, pairs[c][0], pairs[c][1], &fw)) {
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
            if (!fit_window(ns, k, x, pairs[c][0], pairs[c][1], &fws[c])) {
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

fb_ref* fb_ref_create(const fb_model* m, int nsample, double sample_dt, const double* q,
                      double rate, const fb_fit_opts* opts, const fb_allocator* alloc,
                      fb_error* err) {
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
    int* ints = fb_alloc(&a, 3 * (size_t)m->nbody * sizeof(int));
    double* score = fb_alloc(&a, (size_t)FIT_NLADDER * (size_t)m->nbody * sizeof(double));
    fb_data* d = fb_data_create(m, &a, err);
    if (!r || !block || !ints || !score || !d) {
        fb_free(&a, r);
        fb_free(&a, block);
        fb_free(&a, ints);
        fb_free(&a, score);
        fb_data_destroy(d);
        fb_fail(err, FB_ENOMEM, "reference: out of memory for %ld frames", nf);
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->alloc = a;
    r->nframe = (int)nf;
    r->nq = m->nq;
    r->nv = m->nv;
    r->dt = dt;
    r->q = block;
    r->v = r->q + (size_t)nf * (size_t)m->nq;
    r->a = r->v + (size_t)nf * (size_t)m->nv;
    r->tau = r->a + (size_t)nf * (size_t)m->nv;
    r->v_step = r->tau + (size_t)nf * (size_t)m->nv;
    r->a_step = r->v_step + (size_t)nf * (size_t)m->nv;
    r->fit_half_window = ints;
    r->fit_degree = ints + m->nbody;
    int* choice = ints + 2 * m->nbody;
    const int fixed[1][2] = {{o.half_window, o.degree}};
    const int(*pairs)[2] = automatic ? FIT_LADDER : fixed;
    const bool chosen = fit_choose(m, nsample, q, pairs, automatic ? FIT_NLADDER : 1, score,
                                   choice);
    fb_free(&a, score);
    if (!chosen) {
        fb_data_destroy(d);
        fb_ref_destroy(r);
        fb_fail(err, FB_ENUMERIC, "reference: a fit window is singular");
        return NULL;
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
        if (!fit_frame(m, nsample, sample_dt, q, i * dt / sample_dt, pairs, choice, qi, vi, ai)) {
            fb_data_destroy(d);
            fb_ref_destroy(r);
            fb_fail(err, FB_ENUMERIC, "reference: the fit at frame %ld is singular", i);
            return NULL;
        }
    }
    /* The integrator-consistent velocities and accelerations (see fb_ref in control.h):
     * v_step[i] = (q[i-1] (-) q[i]) / dt, q[-1] from the fit extrapolated one frame back;
     * a_step[i] = (v_step[i+1] - v_step[i]) / dt; the last frame keeps the one before. */
    double* qm1 = fb_alloc(&a, ((size_t)m->nq + 2 * (size_t)m->nv) * sizeof(double));
    if (!qm1) {
        fb_data_destroy(d);
        fb_ref_destroy(r);
        fb_fail(err, FB_ENOMEM, "reference: out of memory");
        return NULL;
    }
    double* vtmp = qm1 + m->nq;
    double* atmp = vtmp + m->nv;
    for (long i = 0; i < nf; i++) {
        const double* qi = r->q + (size_t)i * (size_t)m->nq;
        double* vs = r->v_step + (size_t)i * (size_t)m->nv;
        if (i == 0) {
            fb_q_neutral(m, qm1);
            (void)fit_frame(m, nsample, sample_dt, q, -dt / sample_dt, pairs, choice, qm1, vtmp,
                            atmp);
            fb_difference(m, qm1, qi, vs);
            for (int j = 0; j < m->nv; j++) {
                vs[j] /= dt;
            }
        } else {
            fb_difference(m, qi - m->nq, qi, vs);
            for (int j = 0; j < m->nv; j++) {
                vs[j] /= dt;
            }
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
    fb_free(&a, qm1);
    fb_data_destroy(d);
    fb_ok(err);
    return r;
}

fb_ref* fb_ref_from_clip(const fb_clip* clip, const fb_character* ch, double rate, int first,
                         int last, const fb_fit_opts* opts, fb_error* err) {
    fb_motion* mo = fb_motion_from_clip(clip, ch, 0.0, first, last, err);
    if (!mo) {
        return NULL;
    }
    fb_ref* r = fb_ref_create(ch->model, mo->nframe, mo->dt, mo->q, rate, opts, &clip->alloc, err);
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
