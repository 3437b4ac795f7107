/* The contact plan of a reference: which feet and toes stand on the ground, when and where
 * (docs/CONTROL.md §7). No paper: thresholds with hysteresis, the usual footplant detection
 * of motion-capture cleanup (a foot is planted where it is low and nearly still).
 *
 * A foot is a body with a box shape (the sole, docs/MOCAP.md) on a ball joint, under a knee
 * (hinge or ball joint) under a hip (ball joint); its toe is its first child body with a
 * shape. At every frame each of them is in stance or in the air:
 *   low   its lowest shape point within PLAN_LOW of the clip's floor,
 *   slow  the centre of its shapes moving horizontally slower than PLAN_SLOW,
 *   flat  a foot: its sole tilted less than PLAN_TILT; a toe without its foot in stance: the
 *         foot in a pose the toe can hold (a heel off the ground, PLAN_TOE_*),
 * entered when all hold and left when one passes its looser exit value (hysteresis); then gaps
 * shorter than PLAN_MIN_GAP are closed, stances shorter than PLAN_MIN_STANCE dropped, a body
 * that slides kept in stance only where it stays within PLAN_DRIFT (keep_still), and a toe
 * stance spanning two of its foot's cut between them.
 *
 * The clip's floor is not y = 0: the reference is placed with the lowest point its shapes
 * reach over the whole clip on the ground (placement.c), a kneel or a fall, so standing feet
 * float above it. The floor is the median height of the feet's and toes' lowest points over
 * the frames where they move slowly: where the clip stands.
 *
 * Each interval gets where its body stands (fb_stance): a foot's sole flat on the ground,
 * centred where the clip's sole is on average over the interval, at the mean heading; a toe
 * where its foot's stance puts it when the two meet, else at its mean position, lying on the
 * ground. fb_ref_grounded (ground.c) makes the reference do that. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/ref_internal.h"
#include "featherbone/collision.h"
#include "featherbone/control.h"
#include "featherbone/dynamics.h"
#include "math/detmath.h"
#include "math/quat.h"
#include "util/error.h"
#include "util/sort.h"

/* m above the clip's floor: a body is low below PLAN_LOW, and stays in stance below
 * PLAN_LOW_EXIT */
#define PLAN_LOW 0.04
#define PLAN_LOW_EXIT 0.05
/* m/s, horizontal: a body is slow below PLAN_SLOW and stays in stance below PLAN_SLOW_EXIT
 * (a planted foot of the shared clips moves at 1-5 cm/s in the fitted reference, capture
 * noise; a swinging one at 1-4 m/s) */
#define PLAN_SLOW 0.15
#define PLAN_SLOW_EXIT 0.25
/* rad: a foot is flat when its sole is turned less than PLAN_TILT from the ground's (entering
 * a stance), PLAN_TILT_EXIT (staying in it); the captured standing feet of the shared clips
 * tilt up to 24 degrees (the capture's foot orientation wanders), a foot kneeling on its toes
 * 70-110 */
#define PLAN_TILT (30.0 * FB_PI / 180.0)
#define PLAN_TILT_EXIT (40.0 * FB_PI / 180.0)
/* rad: a toe stands without its foot only while it can hold the foot: the foot rolled less
 * than PLAN_TOE_ROLL about its length, its toes no more than -PLAN_TOE_PITCH above its heel,
 * and its sole facing down rather than up (a heel off the ground, not a foot rolled onto its
 * edge, pointing its toes up or kneeling past upright); else the foot's box would go into the
 * ground around a toe put on it */
#define PLAN_TOE_ROLL (20.0 * FB_PI / 180.0)
#define PLAN_TOE_PITCH (-10.0 * FB_PI / 180.0)
/* s: speeds are displacements over this span (the fit's 240 Hz frames carry noise steps) */
#define PLAN_SPAN 0.02
/* s: shorter gaps between two stances are closed, shorter stances dropped */
#define PLAN_MIN_GAP 0.1
#define PLAN_MIN_STANCE 0.1
/* s: a toe stance this close to one of its foot's (or overlapping it) stands where that
 * foot's stance puts it */
#define PLAN_TOE_NEAR 0.15
/* m: a stance is where the body's shapes' centre stays within a square of this half-size
 * (horizontally): a foot that slides slowly further (131_01 ends sliding its straight left
 * leg 10 cm inwards over 1.5 s at 7 cm/s) stands only in the longest stretch that stays in
 * one, then in the longest of what is left either side, and so on */
#define PLAN_DRIFT 0.025

int fb_ref_legs(const fb_model* m, fb_leg* legs, int max) {
    int n = 0;
    for (int b = 1; b < m->nbody && n < max; b++) {
        int box = -1;
        for (int s = 0; s < m->nshape && box < 0; s++) {
            box = m->shape[s].body == b && m->shape[s].type == FB_SHAPE_BOX ? s : -1;
        }
        const int k = m->parent[b];
        const int h = k > 0 ? m->parent[k] : 0;
        if (box < 0 || m->jtype[b] != FB_JOINT_SPHERICAL || k <= 0 || h <= 0 ||
            (m->jtype[k] != FB_JOINT_REVOLUTE && m->jtype[k] != FB_JOINT_SPHERICAL) ||
            m->jtype[h] != FB_JOINT_SPHERICAL) {
            continue;
        }
        fb_leg* L = &legs[n++];
        *L = (fb_leg){.foot = b, .knee = k, .hip = h, .toe = -1, .box = box, .toe_shape = -1};
        /* the sole: the face most downwards at rest (the world's down in the foot's axes
         * there, turned by the joint frames of its chain) */
        fb_m3 R = fb_m3_identity();
        for (int a = b; a > 0; a = m->parent[a]) {
            R = fb_m3_mul(fb_m3_transpose(m->X_tree[a].E), R);
        }
        const fb_v3 down = fb_m3_tr_mv(R, fb_v3_make(0.0, -1.0, 0.0));
        const fb_shape* sh = &m->shape[box];
        int f = 0;
        double best = -INFINITY;
        for (int j = 0; j < 3; j++) {
            if (fabs(fb_v3_dot(fb_m3_col(sh->R, j), down)) > best) {
                best = fabs(fb_v3_dot(fb_m3_col(sh->R, j), down));
                f = j;
            }
        }
        const double sign = fb_v3_dot(fb_m3_col(sh->R, f), down) < 0.0 ? -1.0 : 1.0;
        L->sole_n = fb_v3_scale(fb_m3_col(sh->R, f), sign);
        L->sole_c = fb_v3_add(sh->p0, fb_v3_scale(L->sole_n, 0.5 * fb_v3_get(sh->size, f)));
        L->sole_fwd = fb_m3_col(sh->R, f == 0 ? 1 : 0);
        for (int c = b + 1; c < m->nbody && L->toe < 0; c++) {
            for (int s = 0; s < m->nshape && m->parent[c] == b && L->toe < 0; s++) {
                if (m->shape[s].body == c) {
                    L->toe = c;
                    L->toe_shape = s;
                }
            }
        }
    }
    return n;
}

/* World centre of body b's shapes (their centres' mean). Needs FB_STAGE_POS. */
static fb_v3 shapes_centre(const fb_model* m, const fb_data* d, int b) {
    fb_v3 c = fb_v3_zero();
    int n = 0;
    for (int s = 0; s < m->nshape; s++) {
        const fb_shape* sh = &m->shape[s];
        if (sh->body == b) {
            const fb_v3 p = sh->type == FB_SHAPE_CAPSULE
                                ? fb_v3_scale(fb_v3_add(sh->p0, sh->p1), 0.5)
                                : sh->p0;
            c = fb_v3_add(c, fb_point_pos(m, d, b, p));
            n++;
        }
    }
    return n > 0 ? fb_v3_scale(c, 1.0 / n) : fb_point_pos(m, d, b, fb_v3_zero());
}

/* Two unit vectors spanning the plane: e1 the world's x projected on it (z when x is along
 * its normal), e2 = n x e1; a heading is the angle from e1 towards e2. */
static void plane_basis(fb_plane g, fb_v3* e1, fb_v3* e2) {
    fb_v3 x = fb_v3_make(1.0, 0.0, 0.0);
    if (fabs(fb_v3_dot(x, g.n)) > 0.9) {
        x = fb_v3_make(0.0, 0.0, 1.0);
    }
    x = fb_v3_sub(x, fb_v3_scale(g.n, fb_v3_dot(x, g.n)));
    *e1 = fb_v3_scale(x, 1.0 / fb_v3_norm(x));
    *e2 = fb_v3_cross(g.n, *e1);
}

static double heading_of(fb_v3 f, fb_v3 e1, fb_v3 e2) {
    return fb_atan2(fb_v3_dot(f, e2), fb_v3_dot(f, e1));
}


/* Puts frame i of the reference into d and runs position kinematics. */
static void pose_at(const fb_model* m, const fb_ref* r, fb_data* d, int i) {
    memcpy(d->q, r->q + (size_t)i * (size_t)m->nq, (size_t)m->nq * sizeof(double));
    fb_kinematics_pos(m, d);
}

/* Where the foot of leg L stands over frames st->first..last (fb_stance.p, rot, heading): each
 * frame's orientation turned by the least angle that lays the sole flat; the mean heading of
 * those and the mean horizontal position of the sole's centre. */
static void plant_foot(const fb_model* m, const fb_ref* r, fb_data* d, const fb_leg* L,
                       fb_plane g, fb_stance* st) {
    const fb_v3 n_face = L->sole_n, c_face = L->sole_c, fwd = L->sole_fwd;
    fb_v3 e1, e2;
    plane_basis(g, &e1, &e2);
    double sum_s = 0.0, sum_c = 0.0, psi0 = 0.0;
    fb_m3 R0 = fb_m3_identity();
    fb_v3 centre = fb_v3_zero();
    for (int i = st->first; i <= st->last; i++) {
        pose_at(m, r, d, i);
        const fb_m3 R = fb_body_rot(m, d, L->foot);
        const fb_quat flat = fb_quat_between(fb_m3_mv(R, n_face), fb_v3_neg(g.n));
        const fb_m3 Rf = fb_m3_mul(fb_quat_to_m3(flat), R);
        const double psi = heading_of(fb_m3_mv(Rf, fwd), e1, e2);
        sum_s += fb_sin(psi);
        sum_c += fb_cos(psi);
        if (i == st->first) {
            psi0 = psi;
            R0 = Rf;
        }
        centre = fb_v3_add(centre, fb_point_pos(m, d, L->foot, c_face));
    }
    const double psi = fb_atan2(sum_s, sum_c);
    const fb_m3 R = fb_m3_mul(fb_quat_to_m3(fb_quat_exp(fb_v3_scale(g.n, psi - psi0))), R0);
    centre = fb_v3_scale(centre, 1.0 / (st->last - st->first + 1));
    centre = fb_v3_sub(centre, fb_v3_scale(g.n, fb_v3_dot(g.n, centre) - g.offset));
    st->p = fb_v3_sub(centre, fb_m3_mv(R, c_face));
    st->rot = fb_quat_from_m3(R);
    st->heading = psi;
}

/* Where the toe of leg L stands over st->first..last: where the foot's stance `fs` puts it
 * (NULL: none near), else at the toe joint's mean position, the toe shape's radius above the
 * ground, its heading the mean of its shape's length. */
static void plant_toe(const fb_model* m, const fb_ref* r, fb_data* d, const fb_leg* L,
                      fb_plane g, const fb_stance* fs, fb_stance* st) {
    st->rot = fb_quat_identity();
    if (fs) {
        st->p = fb_v3_add(fs->p, fb_quat_rotate(fs->rot, m->X_tree[L->toe].r));
        st->heading = fs->heading;
        return;
    }
    const fb_shape* sh = &m->shape[L->toe_shape];
    const fb_v3 along = sh->type == FB_SHAPE_CAPSULE ? fb_v3_sub(sh->p1, sh->p0)
                                                     : fb_m3_col(sh->R, 0);
    const double radius = sh->type == FB_SHAPE_BOX ? 0.5 * sh->size.z : sh->radius;
    fb_v3 e1, e2, p = fb_v3_zero();
    plane_basis(g, &e1, &e2);
    double sum_s = 0.0, sum_c = 0.0;
    for (int i = st->first; i <= st->last; i++) {
        pose_at(m, r, d, i);
        p = fb_v3_add(p, fb_point_pos(m, d, L->toe, fb_v3_zero()));
        const double psi = heading_of(fb_m3_mv(fb_body_rot(m, d, L->toe), along), e1, e2);
        sum_s += fb_sin(psi);
        sum_c += fb_cos(psi);
    }
    p = fb_v3_scale(p, 1.0 / (st->last - st->first + 1));
    p = fb_v3_sub(p, fb_v3_scale(g.n, fb_v3_dot(g.n, p) - g.offset - radius));
    st->p = p;
    st->heading = fb_atan2(sum_s, sum_c);
}

/* The stance flags of one body (nf frames): hysteresis on height h, speed v and the sole's
 * tilt (NULL: a toe, any), short gaps closed, short stances dropped. */
static void stance_flags(const double* h, const double* v, const double* tilt, int nf,
                         double floor, double dt, unsigned char* in) {
    bool on = false;
    for (int i = 0; i < nf; i++) {
        on = on ? h[i] < floor + PLAN_LOW_EXIT && v[i] < PLAN_SLOW_EXIT &&
                      (!tilt || tilt[i] < PLAN_TILT_EXIT)
                : h[i] < floor + PLAN_LOW && v[i] < PLAN_SLOW && (!tilt || tilt[i] < PLAN_TILT);
        in[i] = on;
    }
    const int gap = (int)ceil(PLAN_MIN_GAP / dt - 1e-9);
    const int shortest = (int)ceil(PLAN_MIN_STANCE / dt - 1e-9);
    for (int pass = 0; pass < 2; pass++) {
        const unsigned char look = pass == 0 ? 0 : 1; /* gaps first, then stances */
        for (int i = 0; i < nf;) {
            if (in[i] != look) {
                i++;
                continue;
            }
            int j = i;
            while (j < nf && in[j] == look) {
                j++;
            }
            /* a gap is closed only between two stances; a stance is dropped anywhere */
            const bool inner = pass == 1 || (i > 0 && j < nf);
            if (inner && j - i < (pass == 0 ? gap : shortest)) {
                memset(in + i, !look, (size_t)(j - i));
            }
            i = j;
        }
    }
}

/* The longest stretch of frames a..b (inclusive) whose points (u, w) stay in a square of
 * half-size PLAN_DRIFT: two pointers, the running extremes kept in monotonic deques (dq: 4
 * (b - a + 1) ints). Writes it to *x..*y. */
static void longest_still(const double* u, const double* w, int a, int b, int* dq, int* x,
                          int* y) {
    const int n = b - a + 1;
    int* qs[4] = {dq, dq + n, dq + 2 * n, dq + 3 * n};  /* max u, min u, max w, min w */
    int head[4] = {0, 0, 0, 0}, tail[4] = {0, 0, 0, 0};
    *x = *y = a;
    for (int lo = a, hi = a; hi <= b; hi++) {
        for (int k = 0; k < 4; k++) {
            const double* v = k < 2 ? u : w;
            const double sign = k % 2 == 0 ? 1.0 : -1.0;
            while (tail[k] > head[k] && sign * v[qs[k][tail[k] - 1]] <= sign * v[hi]) {
                tail[k]--;
            }
            qs[k][tail[k]++] = hi;
        }
        for (;;) {
            const double ru = u[qs[0][head[0]]] - u[qs[1][head[1]]];
            const double rw = w[qs[2][head[2]]] - w[qs[3][head[3]]];
            if (ru <= 2.0 * PLAN_DRIFT && rw <= 2.0 * PLAN_DRIFT) {
                break;
            }
            lo++;
            for (int k = 0; k < 4; k++) {
                while (head[k] < tail[k] && qs[k][head[k]] < lo) {
                    head[k]++;
                }
            }
        }
        if (hi - lo > *y - *x) {
            *x = lo;
            *y = hi;
        }
    }
}

/* Keeps of the stance a..b of flags `in` only the stretches where the body stays still (above):
 * the longest, then recursively the longest of what lies further than `gap` frames either
 * side, none shorter than `shortest`. */
static void keep_still(const double* u, const double* w, int a, int b, int gap, int shortest,
                       int* dq, unsigned char* in) {
    if (b - a + 1 < shortest) {
        if (b >= a) {
            memset(in + a, 0, (size_t)(b - a + 1));
        }
        return;
    }
    int x, y;
    longest_still(u, w, a, b, dq, &x, &y);
    if (y - x + 1 < shortest) {
        memset(in + a, 0, (size_t)(b - a + 1));
        return;
    }
    const int l0 = x - gap > a ? x - gap : a; /* cleared: l0 .. x-1 and y+1 .. r1 */
    const int r1 = y + gap < b ? y + gap : b;
    if (x > l0) {
        memset(in + l0, 0, (size_t)(x - l0));
    }
    if (r1 > y) {
        memset(in + y + 1, 0, (size_t)(r1 - y));
    }
    keep_still(u, w, a, l0 - 1, gap, shortest, dq, in);
    keep_still(u, w, r1 + 1, b, gap, shortest, dq, in);
}

/* A toe stance stands where the foot's stance it meets puts it: one that spans two of its
 * foot's stances is cut between them (the frames between the two are left in the air), and
 * pieces shorter than `shortest` dropped (also those left by the test of the foot's pose). */
static void cut_at_foot_gaps(unsigned char* toe, const unsigned char* foot, int nf,
                             int shortest) {
    int last_end = -1; /* the end of the previous foot stance, while in a toe stance */
    for (int i = 0; i < nf; i++) {
        if (!toe[i]) {
            last_end = -1;
            continue;
        }
        if (foot[i] && (i == 0 || !foot[i - 1]) && last_end >= 0) {
            memset(toe + last_end + 1, 0, (size_t)(i - last_end - 1));
        }
        if (foot[i] && (i + 1 == nf || !foot[i + 1])) {
            last_end = i;
        }
    }
    for (int i = 0; i < nf;) {
        int j = i;
        while (j < nf && toe[j] == toe[i]) {
            j++;
        }
        if (toe[i] && j - i < shortest) {
            memset(toe + i, 0, (size_t)(j - i));
        }
        i = j;
    }
}

bool fb_ref_contact_plan(const fb_model* m, fb_ref* r, fb_data* d) {
    fb_leg legs[FB_REF_MAX_LEGS];
    const int nleg = fb_ref_legs(m, legs, FB_REF_MAX_LEGS);
    int body[2 * FB_REF_MAX_LEGS], leg_of[2 * FB_REF_MAX_LEGS], nc = 0;
    for (int l = 0; l < nleg; l++) {
        body[nc] = legs[l].foot;
        leg_of[nc++] = l;
        if (legs[l].toe >= 0) {
            body[nc] = legs[l].toe;
            leg_of[nc++] = l;
        }
    }
    r->ncontact = 0;
    r->contact = NULL;
    r->stance_at = NULL;
    r->floor = 0.0;
    if (nc == 0) {
        return true;
    }
    const fb_allocator* al = &r->alloc;
    const int nf = r->nframe;
    const fb_plane g = fb_ground_plane();
    /* per body and frame: lowest point, speed, centre (3), a sorting copy, the sole's tilt;
     * then the stance flags */
    double* h = fb_alloc(al, (size_t)nc * (size_t)nf * 7 * sizeof(double));
    unsigned char* in = fb_alloc(al, (size_t)nc * (size_t)nf);
    if (!h || !in) {
        fb_free(al, h);
        fb_free(al, in);
        return false;
    }
    double* v = h + (size_t)nc * (size_t)nf;
    fb_v3* c = (fb_v3*)(void*)(v + (size_t)nc * (size_t)nf);
    double* sorted = v + 4 * (size_t)nc * (size_t)nf;
    double* tilt = sorted + (size_t)nc * (size_t)nf;
    for (int i = 0; i < nf; i++) {
        pose_at(m, r, d, i);
        for (int k = 0; k < nc; k++) {
            const size_t ki = (size_t)k * (size_t)nf + (size_t)i;
            h[ki] = fb_lowest_point(m, d, body[k], g);
            c[ki] = shapes_centre(m, d, body[k]);
            const fb_leg* L = &legs[leg_of[k]];
            const fb_m3 R = fb_body_rot(m, d, L->foot);
            const fb_v3 sole = fb_m3_mv(R, L->sole_n);
            if (body[k] == L->foot) {
                tilt[ki] = fb_acos(fmax(-1.0, fmin(1.0, -fb_v3_dot(sole, g.n))));
            } else {
                /* a toe: whether its foot is in a pose the toe can hold it in (1) */
                const fb_v3 fwd = fb_m3_mv(R, L->sole_fwd);
                const fb_v3 side = fb_v3_cross(sole, fwd);
                tilt[ki] = fabs(fb_v3_dot(side, g.n)) < fb_sin(PLAN_TOE_ROLL) &&
                           -fb_v3_dot(fwd, g.n) > fb_sin(PLAN_TOE_PITCH) &&
                           fb_v3_dot(sole, g.n) <= 0.0;
            }
        }
    }
    const int span = (int)fmax(1.0, round(0.5 * PLAN_SPAN / r->dt));
    int nslow = 0;
    for (int k = 0; k < nc; k++) {
        const fb_v3* ck = c + (size_t)k * (size_t)nf;
        for (int i = 0; i < nf; i++) {
            const int i0 = i - span < 0 ? 0 : i - span, i1 = i + span > nf - 1 ? nf - 1 : i + span;
            const fb_v3 dp = fb_v3_sub(ck[i1], ck[i0]);
            const fb_v3 dh = fb_v3_sub(dp, fb_v3_scale(g.n, fb_v3_dot(g.n, dp)));
            const double s = i1 > i0 ? fb_v3_norm(dh) / ((i1 - i0) * r->dt) : 0.0;
            v[(size_t)k * (size_t)nf + (size_t)i] = s;
            if (s < PLAN_SLOW) {
                sorted[nslow++] = h[(size_t)k * (size_t)nf + (size_t)i];
            }
        }
    }
    if (nslow > 0) {
        fb_sort_doubles(sorted, (size_t)nslow);
        r->floor = sorted[nslow / 2];
    }
    /* the flags; then of each stance only where the body stays still (u, w: its centre's
     * coordinates along the ground, reusing the sorting copy and the tilts) */
    double* pu = sorted;
    double* pw = tilt;
    int* dq = fb_alloc(al, 4 * (size_t)nf * sizeof(int) + 1);
    if (!dq) {
        fb_free(al, h);
        fb_free(al, in);
        return false;
    }
    fb_v3 e1, e2;
    plane_basis(g, &e1, &e2);
    const int gap = (int)ceil(PLAN_MIN_GAP / r->dt - 1e-9);
    const int shortest = (int)ceil(PLAN_MIN_STANCE / r->dt - 1e-9);
    int total = 0;
    for (int k = 0; k < nc; k++) {
        unsigned char* ik = in + (size_t)k * (size_t)nf;
        const bool is_toe = body[k] == legs[leg_of[k]].toe;
        stance_flags(h + (size_t)k * (size_t)nf, v + (size_t)k * (size_t)nf,
                     is_toe ? NULL : tilt + (size_t)k * (size_t)nf, nf, r->floor, r->dt, ik);
        for (int i = 0; i < nf; i++) {
            pu[i] = fb_v3_dot(c[(size_t)k * (size_t)nf + (size_t)i], e1);
            pw[i] = fb_v3_dot(c[(size_t)k * (size_t)nf + (size_t)i], e2);
        }
        for (int i = 0; i < nf; i++) {
            if (ik[i] && (i + 1 == nf || !ik[i + 1])) {
                int a = i;
                while (a > 0 && ik[a - 1]) {
                    a--;
                }
                keep_still(pu, pw, a, i, gap, shortest, dq, ik);
            }
        }
        if (is_toe) {
            const double* held = tilt + (size_t)k * (size_t)nf;
            for (int i = 0; i < nf; i++) {
                ik[i] = ik[i] && (ik[i - nf] || held[i] > 0.5);
            }
            cut_at_foot_gaps(ik, ik - nf, nf, shortest);
        }
        for (int i = 0; i < nf; i++) {
            total += ik[i] && (i == 0 || !ik[i - 1]);
        }
    }
    fb_free(al, dq);
    fb_free(al, h);
    /* one block: the contacts, their intervals, stance_at */
    const size_t bytes = (size_t)nc * sizeof(fb_ref_contact) + (size_t)total * sizeof(fb_stance) +
                         (size_t)nc * (size_t)nf * sizeof(int);
    char* block = fb_alloc(al, bytes);
    if (!block) {
        fb_free(al, in);
        return false;
    }
    r->contact = (fb_ref_contact*)(void*)block;
    fb_stance* st = (fb_stance*)(void*)(block + (size_t)nc * sizeof(fb_ref_contact));
    r->stance_at = (int*)(void*)(st + total);
    r->ncontact = nc;
    for (int k = 0; k < nc; k++) {
        fb_ref_contact* ct = &r->contact[k];
        const fb_leg* L = &legs[leg_of[k]];
        const bool is_toe = body[k] == L->toe;
        *ct = (fb_ref_contact){.body = body[k], .foot = is_toe ? k - 1 : -1,
                               .toe = !is_toe && L->toe >= 0 ? k + 1 : -1, .nstance = 0,
                               .stance = st};
        const unsigned char* ik = in + (size_t)k * (size_t)nf;
        for (int i = 0; i < nf; i++) {
            r->stance_at[(size_t)i * (size_t)nc + (size_t)k] = ik[i] ? ct->nstance : -1;
            if (ik[i] && (i + 1 == nf || !ik[i + 1])) {
                int a = i;
                while (a > 0 && ik[a - 1]) {
                    a--;
                }
                st[ct->nstance++] = (fb_stance){.first = a, .last = i};
            }
        }
        st += ct->nstance;
        /* where each interval stands */
        const int near = (int)ceil(PLAN_TOE_NEAR / r->dt - 1e-9);
        for (int s = 0; s < ct->nstance; s++) {
            fb_stance* x = &ct->stance[s];
            if (!is_toe) {
                plant_foot(m, r, d, L, g, x);
                continue;
            }
            /* the foot's stance this toe stance meets: the most overlap, else the nearest */
            const fb_ref_contact* fc = &r->contact[ct->foot];
            const fb_stance* fs = NULL;
            int score = -near - 1;
            for (int t = 0; t < fc->nstance; t++) {
                const fb_stance* y = &fc->stance[t];
                const int lo = x->first > y->first ? x->first : y->first;
                const int hi = x->last < y->last ? x->last : y->last;
                if (hi - lo > score) {
                    score = hi - lo;
                    fs = &fc->stance[t];
                }
            }
            plant_toe(m, r, d, L, g, fs, x);
        }
    }
    fb_free(al, in);
    return true;
}

bool fb_ref_copy_plan(const fb_ref* src, fb_ref* dst) {
    dst->ncontact = 0;
    dst->contact = NULL;
    dst->stance_at = NULL;
    dst->floor = src->floor;
    if (src->ncontact == 0) {
        return true;
    }
    int total = 0;
    for (int k = 0; k < src->ncontact; k++) {
        total += src->contact[k].nstance;
    }
    const size_t nc = (size_t)src->ncontact, nf = (size_t)src->nframe;
    const size_t bytes =
        nc * sizeof(fb_ref_contact) + (size_t)total * sizeof(fb_stance) + nc * nf * sizeof(int);
    char* block = fb_alloc(&dst->alloc, bytes);
    if (!block) {
        return false;
    }
    memcpy(block, src->contact, bytes);
    dst->contact = (fb_ref_contact*)(void*)block;
    fb_stance* st = (fb_stance*)(void*)(block + nc * sizeof(fb_ref_contact));
    dst->stance_at = (int*)(void*)(st + total);
    dst->ncontact = src->ncontact;
    for (int k = 0; k < src->ncontact; k++) {
        dst->contact[k].stance = st;
        st += src->contact[k].nstance;
    }
    return true;
}
