/* Spatial algebra [RBDA ch 2]: the operations too large to inline. */
#include "spatial.h"

#include "dense.h"
#include "quat.h"

double fb_abi_get(const fb_abi* IA, int r, int c) {
    if (r < 3) {
        return c < 3 ? IA->A.m[r][c] : IA->B.m[r][c - 3];
    }
    return c < 3 ? IA->B.m[c][r - 3] : IA->C.m[r - 3][c - 3];
}

/* M rx: row i becomes row_i(M) x r. */
static fb_m3 mul_skew(fb_m3 M, fb_v3 r) {
    fb_m3 out;
    for (int i = 0; i < 3; i++) {
        const fb_v3 row = fb_v3_cross(fb_m3_row(M, i), r);
        out.m[i][0] = row.x;
        out.m[i][1] = row.y;
        out.m[i][2] = row.z;
    }
    return out;
}

/* rx M: column j becomes r x col_j(M). */
static fb_m3 skew_mul(fb_v3 r, fb_m3 M) {
    fb_m3 out;
    for (int j = 0; j < 3; j++) {
        const fb_v3 col = fb_v3_cross(r, fb_m3_col(M, j));
        out.m[0][j] = col.x;
        out.m[1][j] = col.y;
        out.m[2][j] = col.z;
    }
    return out;
}

/* X = rot(E) xlt(r), so X^T IA X = xlt^T (rot^T IA rot) xlt. The rotation gives blocks
 * E^T A E, E^T B E, E^T C E; the translation xlt = [1 0; -rx 1] then gives
 *   C'' = C',  B'' = B' + rx C',  A'' = A' + rx B''^T - B' rx. */
void fb_xf_tr_abi(fb_abi* out, fb_xf X, const fb_abi* IA) {
    const fb_m3 A = fb_m3_tr_congr(X.E, IA->A);
    const fb_m3 B = fb_m3_tr_congr(X.E, IA->B);
    const fb_m3 C = fb_m3_tr_congr(X.E, IA->C);
    const fb_m3 B2 = fb_m3_add(B, skew_mul(X.r, C));
    const fb_m3 A2 =
        fb_m3_sub(fb_m3_add(A, skew_mul(X.r, fb_m3_transpose(B2))), mul_skew(B, X.r));
    out->A = A2;
    out->B = B2;
    out->C = C;
}

/* The A = B = 0 case of fb_xf_tr_abi: C' = E^T K E, B'' = rx C', A'' = rx B''^T. */
void fb_abi_add_xf_tr_lin(fb_abi* acc, fb_xf X, fb_m3 K) {
    const fb_m3 C = fb_m3_tr_congr(X.E, K);
    const fb_m3 B = skew_mul(X.r, C);
    acc->A = fb_m3_add(acc->A, skew_mul(X.r, fb_m3_transpose(B)));
    acc->B = fb_m3_add(acc->B, B);
    acc->C = fb_m3_add(acc->C, C);
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
