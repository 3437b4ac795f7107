/* Spatial algebra [RBDA ch 2]: the operations too large to inline. */
#include "spatial.h"

#include "dense.h"
#include "rows.h"
#include "quat.h"

double fb_abi_get(const fb_abi* IA, int r, int c) {
    if (r < 3) {
        return c < 3 ? IA->A.m[r][c] : IA->B.m[r][c - 3];
    }
    return c < 3 ? IA->B.m[c][r - 3] : IA->C.m[r - 3][c - 3];
}

void fb_xf_tr_abi(fb_abi* out, fb_xf X, const fb_abi* IA) {
    fb_rabi_store(out, fb_rabi_xf_tr(X, fb_rabi_load(IA)));
}

bool fb_abi_inverse(const fb_abi* IA, double* inv) {
    fb_m3 Ai, Si;
    if (!fb_spd3_inverse(&IA->A.m[0][0], &Ai.m[0][0])) {
        return false;
    }
    const fb_m3 W = fb_m3_mul(Ai, IA->B);
    const fb_m3 S = fb_m3_sub(IA->C, fb_m3_tr_mul(IA->B, W));
    if (!fb_spd3_inverse(&S.m[0][0], &Si.m[0][0])) {
        return false;
    }
    const fb_m3 WSi = fb_m3_mul(W, Si);
    const fb_m3 TL = fb_m3_add(Ai, fb_m3_mul_tr(WSi, W));
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            inv[r * 6 + c] = TL.m[r][c];
            inv[r * 6 + c + 3] = -WSi.m[r][c];
            inv[(r + 3) * 6 + c] = -WSi.m[c][r];
            inv[(r + 3) * 6 + c + 3] = Si.m[r][c];
        }
    }
    return true;
}

fb_quat fb_quat_from_m3(fb_m3 R) {
    const double tr = R.m[0][0] + R.m[1][1] + R.m[2][2];
    fb_quat q;
    /* Shepperd: divide by the largest of 4w^2, 4x^2, 4y^2, 4z^2 for accuracy */
    if (tr >= R.m[0][0] && tr >= R.m[1][1] && tr >= R.m[2][2]) {
        const double s = 2.0 * sqrt(1.0 + tr);
        q = (fb_quat){0.25 * s, (R.m[2][1] - R.m[1][2]) / s, (R.m[0][2] - R.m[2][0]) / s,
                      (R.m[1][0] - R.m[0][1]) / s};
    } else if (R.m[0][0] >= R.m[1][1] && R.m[0][0] >= R.m[2][2]) {
        const double s = 2.0 * sqrt(1.0 + R.m[0][0] - R.m[1][1] - R.m[2][2]);
        q = (fb_quat){(R.m[2][1] - R.m[1][2]) / s, 0.25 * s, (R.m[0][1] + R.m[1][0]) / s,
                      (R.m[0][2] + R.m[2][0]) / s};
    } else if (R.m[1][1] >= R.m[2][2]) {
        const double s = 2.0 * sqrt(1.0 + R.m[1][1] - R.m[0][0] - R.m[2][2]);
        q = (fb_quat){(R.m[0][2] - R.m[2][0]) / s, (R.m[0][1] + R.m[1][0]) / s, 0.25 * s,
                      (R.m[1][2] + R.m[2][1]) / s};
    } else {
        const double s = 2.0 * sqrt(1.0 + R.m[2][2] - R.m[0][0] - R.m[1][1]);
        q = (fb_quat){(R.m[1][0] - R.m[0][1]) / s, (R.m[0][2] + R.m[2][0]) / s,
                      (R.m[1][2] + R.m[2][1]) / s, 0.25 * s};
    }
    return fb_quat_normalize(q);
}
