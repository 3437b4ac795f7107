/* MJCF export: the model as MuJoCo XML, so the same physics can be loaded by MuJoCo (the
 * cross-check test and the peer benchmark use it) and by people who move between tools. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "featherbone/model.h"
#include "math/quat.h"
#include "math/spatial.h"
#include "util/atomic_file.h"
#include "util/error.h"

/* Enough digits to carry a double exactly through text. */
#define MJCF_DIGITS 17

static void v3(FILE* f, fb_v3 v) {
    fprintf(f, "%.*g %.*g %.*g", MJCF_DIGITS, v.x, MJCF_DIGITS, v.y, MJCF_DIGITS, v.z);
}

static void quat(FILE* f, fb_quat q) {
    fprintf(f, "%.*g %.*g %.*g %.*g", MJCF_DIGITS, q.w, MJCF_DIGITS, q.x, MJCF_DIGITS, q.y,
            MJCF_DIGITS, q.z);
}

static void indent(FILE* f, int depth) {
    for (int k = 0; k < depth; k++) {
        fputs("  ", f);
    }
}

/* Body i's joint elements; the names are the body's, with _x _y _z for a floating joint's
 * slides below the root. */
static void write_joint(FILE* f, const fb_model* m, int i, int depth) {
    const char* name = m->name[i];
    switch (m->jtype[i]) {
    case FB_JOINT_FIXED:
        break;
    case FB_JOINT_REVOLUTE:
    case FB_JOINT_PRISMATIC:
        indent(f, depth);
        fprintf(f, "<joint name=\"%s\" type=\"%s\" axis=\"", name,
                m->jtype[i] == FB_JOINT_REVOLUTE ? "hinge" : "slide");
        v3(f, m->axis[i]);
        if (m->limit[i].on) {
            fprintf(f, "\" limited=\"true\" range=\"%.*g %.*g", MJCF_DIGITS, m->limit[i].lo,
                    MJCF_DIGITS, m->limit[i].hi);
        }
        fputs("\"/>\n", f);
        break;
    case FB_JOINT_SPHERICAL:
        indent(f, depth);
        fprintf(f, "<joint name=\"%s\" type=\"ball\"/>", name);
        if (m->limit[i].on) {
            /* MuJoCo's ball limit bounds the whole rotation angle, not swing and twist; an
             * elliptic range is given by its circumscribing cone about the neutral direction
             * and its four bounds */
            const fb_joint_limit* L = &m->limit[i];
            fprintf(f, "<!-- featherbone limit: swing %.*g", MJCF_DIGITS, L->swing);
            if (L->elliptic) {
                fputs(" (circumscribing cone about neutral ", f);
                v3(f, L->neutral);
                fprintf(f, "; elliptic, s1 %.*g..%.*g about ", MJCF_DIGITS, L->swing_lo[0],
                        MJCF_DIGITS, L->swing_hi[0]);
                v3(f, L->swing_axis);
                fprintf(f, ", s2 %.*g..%.*g)", MJCF_DIGITS, L->swing_lo[1], MJCF_DIGITS,
                        L->swing_hi[1]);
            }
            fprintf(f, ", twist %.*g..%.*g rad -->", MJCF_DIGITS, L->lo, MJCF_DIGITS, L->hi);
        }
        fputc('\n', f);
        break;
    case FB_JOINT_FLOATING:
        indent(f, depth);
        if (m->parent[i] == 0) {
            fprintf(f, "<joint name=\"%s\" type=\"free\"/>\n", name);
        } else {
            /* MuJoCo allows free joints only on children of the world */
            fprintf(f, "<joint name=\"%s_x\" type=\"slide\" axis=\"1 0 0\"/>\n", name);
            indent(f, depth);
            fprintf(f, "<joint name=\"%s_y\" type=\"slide\" axis=\"0 1 0\"/>\n", name);
            indent(f, depth);
            fprintf(f, "<joint name=\"%s_z\" type=\"slide\" axis=\"0 0 1\"/>\n", name);
            indent(f, depth);
            fprintf(f, "<joint name=\"%s\" type=\"ball\"/>\n", name);
        }
        break;
    }
}

/* Body i's inertial: mass, centre of mass and the full inertia about it (body axes). */
static void write_inertial(FILE* f, const fb_model* m, int i, int depth) {
    const fb_rbi* I = &m->I[i];
    if (!(I->m > 0.0)) {
        return; /* massless: no inertial element, zero mass in MuJoCo too */
    }
    const fb_v3 c = fb_v3_scale(I->h, 1.0 / I->m);
    /* Ic = Ibar - m cx cx^T = Ibar + m cx cx [RBDA eq 2.63] */
    const fb_m3 cx = fb_m3_skew(c);
    const fb_m3 Ic = fb_m3_add(I->Ibar, fb_m3_scale(fb_m3_mul(cx, cx), I->m));
    indent(f, depth);
    fputs("<inertial pos=\"", f);
    v3(f, c);
    fprintf(f, "\" mass=\"%.*g\" fullinertia=\"%.*g %.*g %.*g %.*g %.*g %.*g\"/>\n", MJCF_DIGITS,
            I->m, MJCF_DIGITS, Ic.m[0][0], MJCF_DIGITS, Ic.m[1][1], MJCF_DIGITS, Ic.m[2][2],
            MJCF_DIGITS, Ic.m[0][1], MJCF_DIGITS, Ic.m[0][2], MJCF_DIGITS, Ic.m[1][2]);
}

static void write_geoms(FILE* f, const fb_model* m, int i, int depth) {
    for (int s = 0; s < m->nshape; s++) {
        const fb_shape* sh = &m->shape[s];
        if (sh->body != i) {
            continue;
        }
        indent(f, depth);
        switch (sh->type) {
        case FB_SHAPE_SPHERE:
            fprintf(f, "<geom type=\"sphere\" size=\"%.*g\" pos=\"", MJCF_DIGITS, sh->radius);
            v3(f, sh->p0);
            break;
        case FB_SHAPE_CAPSULE:
            fprintf(f, "<geom type=\"capsule\" size=\"%.*g\" fromto=\"", MJCF_DIGITS, sh->radius);
            v3(f, sh->p0);
            fputc(' ', f);
            v3(f, sh->p1);
            break;
        case FB_SHAPE_BOX:
            fputs("<geom type=\"box\" size=\"", f);
            v3(f, fb_v3_scale(sh->size, 0.5)); /* MuJoCo takes half sizes */
            fputs("\" quat=\"", f);
            quat(f, fb_quat_from_m3(sh->R));
            fputs("\" pos=\"", f);
            v3(f, sh->p0);
            break;
        }
        /* contype 1, conaffinity 0: the bodies touch the ground (conaffinity 1) but not each
         * other, as in featherbone, which has no self-collision */
        fputs("\" contype=\"1\" conaffinity=\"0\"/>\n", f);
    }
}

/* Body i and (recursively) its children, which come after it in index order. */
static void write_body(FILE* f, const fb_model* m, int i, int depth) {
    /* the body frame at the neutral configuration is the joint frame: X_tree */
    indent(f, depth);
    fprintf(f, "<body name=\"%s\" pos=\"", m->name[i]);
    v3(f, m->X_tree[i].r);
    fputs("\" quat=\"", f);
    quat(f, fb_quat_from_m3(fb_m3_transpose(m->X_tree[i].E)));
    fputs("\">\n", f);
    write_joint(f, m, i, depth + 1);
    write_inertial(f, m, i, depth + 1);
    write_geoms(f, m, i, depth + 1);
    for (int c = i + 1; c < m->nbody; c++) {
        if (m->parent[c] == i) {
            write_body(f, m, c, depth + 1);
        }
    }
    indent(f, depth);
    fputs("</body>\n", f);
}

static void write_actuators(FILE* f, const fb_model* m) {
    fputs("  <actuator>\n", f);
    for (int i = 1; i < m->nbody; i++) {
        if (m->jtype[i] == FB_JOINT_REVOLUTE || m->jtype[i] == FB_JOINT_PRISMATIC) {
            fprintf(f, "    <motor name=\"%s\" joint=\"%s\" gear=\"1\"/>\n", m->name[i], m->name[i]);
        }
    }
    fputs("  </actuator>\n", f);
}

fb_status fb_model_write_mjcf(const fb_model* m, const char* name, const char* path,
                              fb_error* err) {
    if (!m->finalized) {
        return fb_fail(err, FB_ESTATE, "fb_model_write_mjcf: expected a finalized model");
    }
    fb_atomic_file af;
    fb_status s = fb_atomic_open(&af, path, err);
    if (s != FB_OK) {
        return s;
    }
    FILE* f = af.f;
    fprintf(f, "<!-- written by featherbone: Y up, SI units; see docs/INTEROP.md -->\n");
    fprintf(f, "<mujoco model=\"%s\">\n", name ? name : "featherbone");
    fputs("  <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n", f);
    fputs("  <option gravity=\"", f);
    v3(f, m->opt.gravity);
    fputs("\"/>\n  <worldbody>\n", f);
    fputs("    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\" zaxis=\"0 1 0\" contype=\"0\" "
          "conaffinity=\"1\"/>\n",
          f);
    for (int i = 1; i < m->nbody; i++) {
        if (m->parent[i] == 0) {
            write_body(f, m, i, 2);
        }
    }
    fputs("  </worldbody>\n", f);
    write_actuators(f, m);
    fputs("</mujoco>\n", f);
    return fb_atomic_commit(&af, err);
}
