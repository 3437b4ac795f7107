/* featherbone-view: the support polygon of the balance overlay. */
#include "overlay.h"

/* m^2: turns of less area are taken as straight (points on an edge, collinear sets) */
#define HULL_TURN_EPS 1e-12

/* Twice the signed area of (o, a, b) seen from above (+Y): positive for a counter-clockwise
 * turn. With x right and z toward the eye below it, seen from above is (x, -z). */
static double turn(fb_v3 o, fb_v3 a, fb_v3 b) {
    return (a.x - o.x) * (o.z - b.z) - (o.z - a.z) * (b.x - o.x);
}

int overlay_hull(const fb_v3* p, int n, fb_v3* out) {
    if (n < 3 || n > FB_BALANCE_MAX_POINTS) {
        return 0;
    }
    fb_v3 s[FB_BALANCE_MAX_POINTS];
    for (int i = 0; i < n; i++) { /* insertion sort by (x, -z): left to right seen from above */
        const fb_v3 t = {p[i].x, 0.0, p[i].z};
        int j = i - 1;
        for (; j >= 0 && (s[j].x > t.x || (s[j].x == t.x && s[j].z < t.z)); j--) {
            s[j + 1] = s[j];
        }
        s[j + 1] = t;
    }
    /* lower chain then upper chain; h holds up to 2 n points, the last repeating the first */
    fb_v3 h[2 * FB_BALANCE_MAX_POINTS];
    int k = 0;
    for (int i = 0; i < n; i++) {
        while (k >= 2 && turn(h[k - 2], h[k - 1], s[i]) <= HULL_TURN_EPS) {
            k--;
        }
        h[k++] = s[i];
    }
    for (int i = n - 2, lo = k + 1; i >= 0; i--) {
        while (k >= lo && turn(h[k - 2], h[k - 1], s[i]) <= HULL_TURN_EPS) {
            k--;
        }
        h[k++] = s[i];
    }
    const int m = k - 1; /* the last point is the first again */
    if (m < 3) {
        return 0;
    }
    for (int i = 0; i < m; i++) {
        out[i] = h[i];
    }
    return m;
}
