/* The grounded reference's last stage (fb_ref_grounded; docs/CONTROL.md §7): its frames
 * smoothed over smooth_time either side.
 *
 * Why: a reference's feedforward is inverse dynamics of its step accelerations, second
 * differences of its frames at the simulation rate, so a millimetre that one frame moves
 * against its neighbours asks for metres per second squared. The grounding moves frames one by
 * one (each leg's inverse kinematics onto the planted pose, the root lowered, the toes turned
 * clear), and the fit's window moves on from clip frame to clip frame; no contact gives what
 * that asks. On 131_01 the help the ground cannot give to follow the grounded reference
 * exactly (fb_ref_ground_residual) was 15.1 % of the weight at 240 Hz, 11.9 % at 120 Hz and
 * 21.4 % at 480 Hz: the same motion, more of it the finer it is differenced. Smoothed over
 * ±0.05 s it is 8.0 % at 240 Hz.
 *
 * How: every joint's coordinates by the cubic fitted by least squares over the 2 H + 1 frames
 * around each frame (H = smooth_time / dt; a Savitzky-Golay filter, fb_fit_window, slid inwards
 * at the ends), rotations in the tangent space at the frame itself, q_k exp(sum_j w_j
 * log(q_k^-1 q_j)) (the fit's way, fit.c), the floating root's position in the world's axes,
 * every joint then moved back into its range (fb_limit_project) if the average left it.
 * A cubic passes unchanged; with H = 12 (0.05 s at 240 Hz) a 2 Hz motion keeps 99.9 % of its
 * amplitude, 5 Hz 97.7 %, 10 Hz 73 %, 15 Hz 18 % and nothing above 15 Hz more than 22 %.
 * The smoothing rounds a foot's landing off into the ground (up to 4.8 mm on 131_01, feet and
 * toes alone); that is left (docs/CONTROL.md §7: lifted out again, the landing feet hovered and
 * the walks searched on them did worse). */
#include <math.h>
#include <string.h>

#include "control/ref_internal.h"
#include "featherbone/dynamics.h"
#include "math/quat.h"
#include "model/limit.h"

/* The smoothing fit's degree: cubics pass unchanged */
#define SMOOTH_DEGREE 3
/* m: a shape further than this in the ground after the smoothing, which rounds landings off
 * into it by a few millimetres, is counted */
#define SMOOTH_DEPTH_NOTE 1e-3

/* Frame k of q_in (nf x nq) smoothed into q (nq) with the fit's weights fw. */
static void smooth_frame(const fb_model* m, const double* q_in, int k, const fit_weights* fw,
                         double* q) {
    const int nq = m->nq;
    const double* qk = q_in + (size_t)k * (size_t)nq;
    memcpy(q, qk, (size_t)nq * sizeof(double));
    for (int b = 1; b < m->nbody; b++) {
        const fb_joint_type jt = m->jtype[b];
        const int qa = m->q_adr[b];
        const int npos = jt == FB_JOINT_FLOATING                                 ? 3
                         : (jt == FB_JOINT_REVOLUTE || jt == FB_JOINT_PRISMATIC) ? 1
                                                                                 : 0;
        for (int i = 0; i < npos; i++) {
            double acc = 0.0;
            for (int j = 0; j < fw->n; j++) {
                acc += fw->w[0][j] * q_in[(size_t)(fw->lo + j) * (size_t)nq + (size_t)(qa + i)];
            }
            q[qa + i] = acc;
        }
        if (jt == FB_JOINT_SPHERICAL || jt == FB_JOINT_FLOATING) {
            const int qr = qa + (jt == FB_JOINT_FLOATING ? 3 : 0);
            const fb_quat base = fb_quat_load(qk + qr);
            const fb_quat inv = fb_quat_conj(base);
            fb_v3 r = fb_v3_zero();
            for (int j = 0; j < fw->n; j++) {
                const double* qj = q_in + (size_t)(fw->lo + j) * (size_t)nq + (size_t)qr;
                r = fb_v3_axpy(r, fw->w[0][j], fb_quat_log(fb_quat_mul(inv, fb_quat_load(qj))));
            }
            fb_quat_store(q + qr, fb_quat_normalize(fb_quat_mul(base, fb_quat_exp(r))));
        }
        if (jt != FB_JOINT_FLOATING) {
            /* an average of poses within the range can leave it (a toe at its stop) */
            fb_limit_project(&m->limit[b], jt, q + qa);
        }
    }
}

bool fb_ground_smooth(const fb_model* m, fb_ref* r, double smooth_time, fb_data* d, double* tmp,
                      ground_smooth_info* info) {
    const int nf = r->nframe, nq = m->nq;
    const int H = (int)lround(smooth_time / r->dt);
    memset(info, 0, sizeof *info);
    info->half_window = H;
    if (H < 1 || nf < 2) {
        return true;
    }
    double* q_in = tmp; /* nf x nq: the frames as they were */
    fb_v3* before = (fb_v3*)(void*)(q_in + (size_t)nf * (size_t)nq); /* nbody */
    memcpy(q_in, r->q, (size_t)nf * (size_t)nq * sizeof(double));
    /* a centred window's weights are the same at every frame (the same numbers): made once */
    fit_weights mid, fw;
    const bool centred = nf >= 2 * H + 1;
    if (centred && !fb_fit_window(nf, H, H, H, SMOOTH_DEGREE, &mid)) {
        return false;
    }
    for (int k = 0; k < nf; k++) {
        if (centred && k >= H && k + H < nf) {
            fw = mid;
            fw.lo = k - H;
        } else if (!fb_fit_window(nf, k, k, H, SMOOTH_DEGREE, &fw)) {
            return false;
        }
        smooth_frame(m, q_in, k, &fw, r->q + (size_t)k * (size_t)nq);
    }
    /* how far the smoothing moved the bodies, and into the ground */
    for (int k = 0; k < nf; k++) {
        memcpy(d->q, q_in + (size_t)k * (size_t)nq, (size_t)nq * sizeof(double));
        fb_kinematics_pos(m, d);
        for (int b = 1; b < m->nbody; b++) {
            before[b] = fb_point_pos(m, d, b, fb_v3_zero());
        }
        memcpy(d->q, r->q + (size_t)k * (size_t)nq, (size_t)nq * sizeof(double));
        fb_kinematics_pos(m, d);
        double low = 0.0;
        for (int b = 1; b < m->nbody; b++) {
            low = fmin(low, fb_lowest_point(m, d, b, fb_ground_plane()));
            const double e = fb_v3_norm(fb_v3_sub(fb_point_pos(m, d, b, fb_v3_zero()), before[b]));
            if (e > info->most_moved) {
                info->most_moved = e;
                info->moved_body = b;
                info->moved_frame = k;
            }
        }
        info->below += low < -SMOOTH_DEPTH_NOTE;
        info->deepest = fmin(info->deepest, low);
    }
    return true;
}
