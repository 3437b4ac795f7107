/* BVH read from its text, and forward kinematics with plain 3x3 matrices (see bvhtext.h). */
#include "bvhtext.h"

#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* The next whitespace-separated word of *s into w (empty at the end). */
static void word(const char** s, char* w, size_t cap) {
    const char* p = *s;
    while (*p && isspace((unsigned char)*p)) {
        p++;
    }
    size_t n = 0;
    while (*p && !isspace((unsigned char)*p)) {
        if (n + 1 < cap) {
            w[n++] = *p;
        }
        p++;
    }
    w[n] = '\0';
    *s = p;
}

void ck_bvh_read(const char* path, ck_bvh* b) {
    char* text = ck_slurp(path);
    memset(b, 0, sizeof *b);
    const char* s = text;
    char w[256];
    int stack[CK_BVH_MAX_JOINTS], depth = 0, current = -1;
    for (word(&s, w, sizeof w); w[0] && strcmp(w, "MOTION") != 0; word(&s, w, sizeof w)) {
        if (!strcmp(w, "ROOT") || !strcmp(w, "JOINT") || !strcmp(w, "End")) {
            ck_assert_msg(b->njoint < CK_BVH_MAX_JOINTS, "%s: too many joints", path);
            ck_bvh_joint* j = &b->joint[b->njoint];
            j->end = w[0] == 'E';
            word(&s, w, sizeof w); /* the name, or "Site" */
            snprintf(j->name, sizeof j->name, "%.63s", w);
            j->parent = depth > 0 ? stack[depth - 1] : -1;
            current = b->njoint++;
        } else if (!strcmp(w, "{")) {
            stack[depth++] = current;
        } else if (!strcmp(w, "}")) {
            depth--;
        } else if (!strcmp(w, "OFFSET")) {
            for (int k = 0; k < 3; k++) {
                word(&s, w, sizeof w);
                b->joint[current].offset[k] = strtod(w, NULL);
            }
        } else if (!strcmp(w, "CHANNELS")) {
            word(&s, w, sizeof w);
            ck_bvh_joint* j = &b->joint[current];
            j->nchan = atoi(w);
            j->col = b->nchan;
            b->nchan += j->nchan;
            for (int k = 0; k < j->nchan; k++) {
                word(&s, w, sizeof w);
                const bool rot = strstr(w, "rotation") != NULL;
                j->chan[k] = (char)(rot ? w[0] : tolower((unsigned char)w[0]));
            }
        }
    }
    ck_assert_msg(w[0], "%s: no MOTION", path);
    word(&s, w, sizeof w); /* Frames: */
    word(&s, w, sizeof w);
    b->declared = atoi(w);
    word(&s, w, sizeof w); /* Frame */
    word(&s, w, sizeof w); /* Time: */
    word(&s, w, sizeof w);
    b->frame_time = strtod(w, NULL);
    size_t cap = 1024, n = 0;
    b->v = malloc(cap * sizeof(double));
    for (word(&s, w, sizeof w); w[0]; word(&s, w, sizeof w)) {
        if (n == cap) {
            cap *= 2;
            b->v = realloc(b->v, cap * sizeof(double));
        }
        b->v[n++] = strtod(w, NULL);
    }
    b->nframe = b->nchan > 0 ? (int)(n / (size_t)b->nchan) : 0;
    free(text);
}

void ck_bvh_free(ck_bvh* b) {
    free(b->v);
    b->v = NULL;
}

int ck_bvh_find(const ck_bvh* b, const char* name) {
    for (int i = 0; i < b->njoint; i++) {
        if (!b->joint[i].end && strcmp(b->joint[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* R = R * (rotation by deg degrees about axis a: 'X', 'Y' or 'Z'), row-major 3x3. */
static void rotate_by(double R[9], char a, double deg) {
    const double t = deg * (3.14159265358979323846 / 180.0), c = cos(t), s = sin(t);
    double E[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    /* the plane it turns, in the cyclic order: X turns y to z, Y z to x, Z x to y */
    const int i = a == 'X' ? 1 : (a == 'Y' ? 2 : 0), j = (i + 1) % 3;
    E[i * 3 + i] = c;
    E[i * 3 + j] = -s;
    E[j * 3 + i] = s;
    E[j * 3 + j] = c;
    double P[9];
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++) {
            P[r * 3 + k] = R[r * 3] * E[k] + R[r * 3 + 1] * E[3 + k] + R[r * 3 + 2] * E[6 + k];
        }
    }
    memcpy(R, P, sizeof P);
}

void ck_bvh_local_rotation(const ck_bvh* b, int i, int f, double Rl[9]) {
    const ck_bvh_joint* j = &b->joint[i];
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(Rl, I, sizeof I);
    const double* v = b->v + (size_t)f * (size_t)b->nchan + (size_t)j->col;
    for (int k = 0; k < j->nchan; k++) {
        if (isupper((unsigned char)j->chan[k])) {
            rotate_by(Rl, j->chan[k], v[k]);
        }
    }
}

void ck_bvh_pose(const ck_bvh* b, int f, double (*p)[3], double (*Rout)[9]) {
    static double R[CK_BVH_MAX_JOINTS][9];
    for (int i = 0; i < b->njoint; i++) {
        const ck_bvh_joint* j = &b->joint[i];
        double t[3] = {j->offset[0], j->offset[1], j->offset[2]};
        double Rl[9];
        ck_bvh_local_rotation(b, i, f, Rl);
        const double* v = b->v + (size_t)f * (size_t)b->nchan + (size_t)j->col;
        for (int k = 0; k < j->nchan; k++) {
            if (islower((unsigned char)j->chan[k])) {
                t[j->chan[k] - 'x'] += v[k];
            }
        }
        if (j->parent < 0) {
            memcpy(p[i], t, sizeof t);
            memcpy(R[i], Rl, sizeof Rl);
        } else {
            const double* Rp = R[j->parent];
            for (int r = 0; r < 3; r++) {
                p[i][r] = p[j->parent][r] + Rp[r * 3] * t[0] + Rp[r * 3 + 1] * t[1] +
                          Rp[r * 3 + 2] * t[2];
                for (int k = 0; k < 3; k++) {
                    R[i][r * 3 + k] = Rp[r * 3] * Rl[k] + Rp[r * 3 + 1] * Rl[3 + k] +
                                      Rp[r * 3 + 2] * Rl[6 + k];
                }
            }
        }
        if (Rout) {
            memcpy(Rout[i], R[i], sizeof R[i]);
        }
    }
}
