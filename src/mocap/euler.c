/* Euler angles <-> quaternions in any axis order (see euler.h). */
#include "mocap/euler.h"
#include "math/detmath.h"

#include <math.h>

#include "math/quat.h"

fb_quat fb_euler_to_quat(const int* axes, int n, const double* angles) {
    fb_quat q = fb_quat_identity();
    for (int k = 0; k < n; k++) {
        fb_v3 axis = {0.0, 0.0, 0.0};
        if (axes[k] == 0) {
            axis.x = 1.0;
        } else if (axes[k] == 1) {
            axis.y = 1.0;
        } else {
            axis.z = 1.0;
        }
        q = fb_quat_mul(q, fb_quat_from_axis_angle(axis, angles[k]));
    }
    return q;
}

void fb_euler_complete_axes(const int* axes, int n, int* out3) {
    int used[3] = {0, 0, 0};
    int m = 0;
    for (int k = 0; k < n && k < 3; k++) {
        out3[m++] = axes[k];
        used[axes[k]] = 1;
    }
    for (int a = 0; a < 3 && m < 3; a++) {
        if (!used[a]) {
            out3[m++] = a;
        }
    }
}

/* a + 2 pi k nearest to ref */
static double nearest_turn(double a, double ref) {
    const double two_pi = 2.0 * FB_PI;
    return a + two_pi * round((ref - a) / two_pi);
}

void fb_quat_to_euler(fb_quat q, const int* axes, const double* prev, double* angles) {
    const fb_m3 R = fb_quat_to_m3(q);
    const int i = axes[0], j = axes[1], k = axes[2];
    /* parity: +1 for cyclic orders (xyz, yzx, zxy), -1 for the others */
    const double s = ((j - i + 3) % 3 == 1) ? 1.0 : -1.0;
    /* R = R_i(a) R_j(b) R_k(c): R[i][k] = s sin b, and a from the k column. Then c comes
     * from row j of R_i(a)^T R = R_j(b) R_k(c), whose entries stay of order one even at
     * b = +-90 degrees, where the textbook c = atan2(-s R[i][j], R[i][i]) divides two vanishing
     * numbers (the approach of Eigen's eulerAngles). atan2 of the row norm keeps b accurate
     * near +-90 degrees where asin would not. */
    const double cb = fb_hypot(R.m[i][i], R.m[i][j]);
    const double b = fb_atan2(s * R.m[i][k], cb);
    const double a = fb_atan2(-s * R.m[j][k], R.m[k][k]);
    const double sa = fb_sin(a), ca = fb_cos(a);
    const double mji = ca * R.m[j][i] + s * sa * R.m[k][i];
    const double mjj = ca * R.m[j][j] + s * sa * R.m[k][j];
    const double c = fb_atan2(s * mji, mjj);
    if (!prev) {
        angles[0] = a;
        angles[1] = b;
        angles[2] = c;
        return;
    }
    /* the other solution (a + pi, pi - b, c + pi); each unwrapped towards prev */
    double sol[2][3] = {{a, b, c}, {a + FB_PI, FB_PI - b, c + FB_PI}};
    double best = INFINITY;
    for (int t = 0; t < 2; t++) {
        double dist = 0.0;
        for (int m = 0; m < 3; m++) {
            sol[t][m] = nearest_turn(sol[t][m], prev[m]);
            dist += fabs(sol[t][m] - prev[m]);
        }
        if (dist < best) {
            best = dist;
            angles[0] = sol[t][0];
            angles[1] = sol[t][1];
            angles[2] = sol[t][2];
        }
    }
}
