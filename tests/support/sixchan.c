/* Six-channel clips and forward kinematics written for the tests (see sixchan.h). The rotation
 * algebra here is plain 3x3 matrices, on purpose not the library's quaternions and Euler code. */
#include "sixchan.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK_PI 3.14159265358979323846

typedef struct mat3 {
    double m[3][3];
} mat3;

static mat3 mat_identity(void) {
    return (mat3){{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
}

static mat3 mat_mul(mat3 a, mat3 b) {
    mat3 r;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
        }
    }
    return r;
}

static mat3 mat_tr(mat3 a) {
    mat3 r;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            r.m[i][j] = a.m[j][i];
        }
    }
    return r;
}

static fb_v3 mat_v(mat3 a, fb_v3 v) {
    return (fb_v3){a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
                   a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
                   a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z};
}

/* Rotation by deg degrees about axis 0, 1 or 2 (x, y, z). */
static mat3 mat_axis(int axis, double deg) {
    const double a = deg * CK_PI / 180.0, c = cos(a), s = sin(a);
    mat3 r = mat_identity();
    const int i = (axis + 1) % 3, j = (axis + 2) % 3;
    r.m[i][i] = c;
    r.m[i][j] = -s;
    r.m[j][i] = s;
    r.m[j][j] = c;
    return r;
}

/* Rotation by angle (rad) about the unit axis u (Rodrigues). */
static mat3 mat_rodrigues(fb_v3 u, double angle) {
    const double c = cos(angle), s = sin(angle), t = 1.0 - c;
    return (mat3){{{t * u.x * u.x + c, t * u.x * u.y - s * u.z, t * u.x * u.z + s * u.y},
                   {t * u.x * u.y + s * u.z, t * u.y * u.y + c, t * u.y * u.z - s * u.x},
                   {t * u.x * u.z - s * u.y, t * u.y * u.z + s * u.x, t * u.z * u.z + c}}};
}

static double vnorm(fb_v3 v) {
    return sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

static fb_v3 vscale(fb_v3 v, double s) {
    return (fb_v3){v.x * s, v.y * s, v.z * s};
}

static fb_v3 vadd(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.x + b.x, a.y + b.y, a.z + b.z};
}

static fb_v3 vcross(fb_v3 a, fb_v3 b) {
    return (fb_v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

static double vdot(fb_v3 a, fb_v3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static double value(const fb_clip* c, int i, int k, int f) {
    return c->frames[(size_t)f * (size_t)c->nchan + (size_t)(c->joint[i].col + k)];
}

/* The rotation channels of joint i at frame f composed in file order. */
static mat3 joint_rotation(const fb_clip* c, int i, int f) {
    const fb_clip_joint* j = &c->joint[i];
    mat3 r = mat_identity();
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] >= FB_CH_XROT) {
            r = mat_mul(r, mat_axis((int)j->chan[k] - (int)FB_CH_XROT, value(c, i, k, f)));
        }
    }
    return r;
}

/* Joint i's translation from its parent at frame f (see ck_bvh_fk for the reading). */
static fb_v3 joint_translation(const fb_clip* c, int i, int f) {
    const fb_clip_joint* j = &c->joint[i];
    double t[3] = {j->offset.x, j->offset.y, j->offset.z};
    double ch[3] = {0, 0, 0};
    bool any = false;
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] <= FB_CH_ZPOS) {
            ch[j->chan[k]] = value(c, i, k, f);
            any = true;
        }
    }
    for (int a = 0; any && a < 3; a++) {
        t[a] = j->parent < 0 ? t[a] + ch[a] : ch[a];
    }
    return (fb_v3){t[0], t[1], t[2]};
}

void ck_bvh_fk(const fb_clip* c, int f, fb_v3* pos) {
    mat3* W = malloc((size_t)c->njoint * sizeof *W);
    ck_assert_ptr_nonnull(W);
    for (int i = 0; i < c->njoint; i++) {
        const int p = c->joint[i].parent;
        const fb_v3 t = joint_translation(c, i, f);
        const mat3 R = joint_rotation(c, i, f);
        if (p < 0) {
            pos[i] = t;
            W[i] = R;
        } else {
            pos[i] = vadd(pos[p], mat_v(W[p], t));
            W[i] = mat_mul(W[p], R);
        }
    }
    free(W);
}

double ck_bvh_fk_distance(const fb_clip* a, int a_first, const fb_clip* b, int b_first,
                          int nframe, double b_scale, const bool* skip, int* matched,
                          char* where) {
    fb_v3* pa = malloc((size_t)a->njoint * sizeof *pa);
    fb_v3* pb = malloc((size_t)b->njoint * sizeof *pb);
    int* map = malloc((size_t)a->njoint * sizeof *map);
    ck_assert(pa && pb && map);
    int n = 0;
    for (int i = 0; i < a->njoint; i++) {
        map[i] = (skip && skip[i]) ? -1 : fb_clip_joint_by_name(b, a->joint[i].name);
        n += map[i] >= 0;
    }
    double worst = 0.0;
    for (int k = 0; k < nframe; k++) {
        ck_bvh_fk(a, a_first + k, pa);
        ck_bvh_fk(b, b_first + k, pb);
        for (int i = 0; i < a->njoint; i++) {
            if (map[i] < 0) {
                continue;
            }
            const fb_v3 d = vadd(pa[i], vscale(pb[map[i]], -b_scale));
            if (vnorm(d) > worst || (k == 0 && i == 0)) {
                worst = fmax(worst, vnorm(d));
                if (where) {
                    snprintf(where, 96, "%.60s at frame %d", a->joint[i].name, k);
                }
            }
        }
    }
    if (matched) {
        *matched = n;
    }
    free(pa);
    free(pb);
    free(map);
    return worst;
}

/* ---- writing the six-channel layout ---------------------------------------------------------- */

/* Angles (deg) of R = R_o0(a0) R_o1(a1) R_o2(a2) for a Tait-Bryan order o (three distinct axes):
 * R[o0][o2] = s sin a1 with s the order's parity; a0 from column o2, a2 from row o0. */
static void mat_to_euler(mat3 R, const int* o, double* deg) {
    const int i = o[0], j = o[1], k = o[2];
    const double s = ((j - i + 3) % 3 == 1) ? 1.0 : -1.0;
    const double a1 = atan2(s * R.m[i][k], hypot(R.m[i][i], R.m[i][j]));
    const double a0 = atan2(-s * R.m[j][k], R.m[k][k]);
    const double a2 = atan2(-s * R.m[i][j], R.m[i][i]);
    deg[0] = a0 * 180.0 / CK_PI;
    deg[1] = a1 * 180.0 / CK_PI;
    deg[2] = a2 * 180.0 / CK_PI;
}

/* The bone of source joint i: its first child not at zero distance, else its End Site. */
static fb_v3 bone_of(const fb_clip* c, int i) {
    for (int k = i + 1; k < c->njoint; k++) {
        if (c->joint[k].parent == i && vnorm(c->joint[k].offset) > 1e-9) {
            return c->joint[k].offset;
        }
    }
    return c->joint[i].has_end ? c->joint[i].end_offset : (fb_v3){0, 0, 0};
}

/* The joint orient of source joint i: columns (x, y, z) with x along +-its bone, turned about
 * it by an angle that differs per joint; an arbitrary rotation for joints with no bone. */
static mat3 orient_of(const fb_clip* c, int i) {
    const fb_v3 d = bone_of(c, i);
    const double L = vnorm(d);
    if (L < 1e-9) {
        const fb_v3 u = vscale((fb_v3){1, 2, 3}, 1.0 / sqrt(14.0));
        return mat_rodrigues(u, 0.7 + 0.1 * i);
    }
    const fb_v3 x = vscale(d, (i % 2 ? -1.0 : 1.0) / L);
    fb_v3 h = fabs(x.y) < 0.9 ? (fb_v3){0, 1, 0} : (fb_v3){0, 0, 1};
    h = vadd(h, vscale(x, -vdot(h, x)));
    fb_v3 y = vscale(h, 1.0 / vnorm(h));
    y = mat_v(mat_rodrigues(x, 0.3 * i), y);
    const fb_v3 z = vcross(x, y);
    return (mat3){{{x.x, y.x, z.x}, {x.y, y.y, z.y}, {x.z, y.z, z.z}}};
}

static void indent(FILE* f, int depth) {
    for (int k = 0; k < depth; k++) {
        fputc('\t', f);
    }
}

static int depth_of(const fb_clip* c, int i) {
    int d = 0;
    for (int p = c->joint[i].parent; p >= 0; p = c->joint[p].parent) {
        d++;
    }
    return d;
}

static void write_v(FILE* f, fb_v3 v) {
    fprintf(f, " %.10f %.10f %.10f", v.x, v.y, v.z);
}

void ck_write_six_channel(const fb_clip* src, const ck_six_opts* o, const char* path) {
    int order[3];
    for (int k = 0; k < 3; k++) {
        order[k] = o->order[k] - 'X';
    }
    char chans[96];
    snprintf(chans, sizeof chans, "CHANNELS 6 Xposition Yposition Zposition %crotation %crotation "
             "%crotation", o->order[0], o->order[1], o->order[2]);
    const int n = src->njoint;
    mat3* A = malloc((size_t)n * sizeof *A);
    fb_v3* off = malloc((size_t)n * sizeof *off);
    ck_assert(A && off);
    for (int i = 0; i < n; i++) {
        A[i] = orient_of(src, i);
    }
    /* the OFFSETs: the bones in the parent's turned frame; the hips straight above the dummy
     * root at their first frame's height (as Perception Neuron files have them) */
    for (int i = 0; i < n; i++) {
        const int p = src->joint[i].parent;
        off[i] = p < 0 ? (fb_v3){0.0, joint_translation(src, i, 0).y * o->scale, 0.0}
                       : vscale(mat_v(mat_tr(A[p]), src->joint[i].offset), o->scale);
    }
    FILE* f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fprintf(f, "HIERARCHY\nROOT Root\n{\n\tOFFSET 0.0 0.0 0.0\n\t%s\n", chans);
    for (int i = 0; i < n; i++) {
        const int d = depth_of(src, i) + 1;
        indent(f, d);
        fprintf(f, "JOINT %s\n", src->joint[i].name);
        indent(f, d);
        fputs("{\n", f);
        indent(f, d + 1);
        fputs("OFFSET", f);
        write_v(f, off[i]);
        fputc('\n', f);
        indent(f, d + 1);
        fprintf(f, "%s\n", chans);
        if (src->joint[i].has_end) {
            indent(f, d + 1);
            fputs("End Site\n", f);
            indent(f, d + 1);
            fputs("{\n", f);
            indent(f, d + 2);
            fputs("OFFSET", f);
            write_v(f, vscale(mat_v(mat_tr(A[i]), src->joint[i].end_offset), o->scale));
            fputc('\n', f);
            indent(f, d + 1);
            fputs("}\n", f);
        }
        /* close this joint and the ancestors the next joint is not under */
        const int next = i + 1 < n ? depth_of(src, i + 1) + 1 : 1;
        for (int k = d; k >= next; k--) {
            indent(f, k);
            fputs("}\n", f);
        }
    }
    fprintf(f, "}\nMOTION\nFrames: %d\nFrame Time: %.9g\n", src->nframe, src->frame_time);
    const int stretch = o->stretch ? fb_clip_joint_by_name(src, o->stretch) : -1;
    for (int fr = 0; fr < src->nframe; fr++) {
        fputs("0 0 0 0 0 0", f);
        for (int i = 0; i < n; i++) {
            const int p = src->joint[i].parent;
            fb_v3 t = off[i];
            if (p < 0) {
                t = vscale(joint_translation(src, i, fr), o->scale);
            } else if (i == stretch) {
                t = vscale(t, 1.0 + o->stretch_by * fr / (src->nframe > 1 ? src->nframe - 1 : 1));
            }
            /* R' = A_p^T R A_i: the same world rotation W A_i of the turned frame */
            const mat3 Ap = p < 0 ? mat_identity() : A[p];
            const mat3 R = mat_mul(mat_tr(Ap), mat_mul(joint_rotation(src, i, fr), A[i]));
            double deg[3];
            mat_to_euler(R, order, deg);
            write_v(f, t);
            write_v(f, (fb_v3){deg[0], deg[1], deg[2]});
        }
        fputc('\n', f);
    }
    ck_assert_int_eq(fclose(f), 0);
    free(A);
    free(off);
}
