/* featherbone <-> MuJoCo state mapping (see mjmap.h and docs/INTEROP.md). */
#include "mjmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/quat.h"
#include "math/spatial.h"

bool mjmap_make(fb_mjmap* mp, const fb_model* m, const mjModel* mj, char* msg, size_t cap) {
    mp->m = m;
    mp->mj = mj;
    mp->qadr = calloc((size_t)m->nbody, sizeof(int));
    mp->dadr = calloc((size_t)m->nbody, sizeof(int));
    if (!mp->qadr || !mp->dadr) {
        snprintf(msg, cap, "out of memory");
        mjmap_free(mp);
        return false;
    }
    for (int b = 1; b < m->nbody; b++) {
        if (m->jtype[b] == FB_JOINT_FIXED) {
            continue;
        }
        char name[FB_NAME_MAX + 4];
        snprintf(name, sizeof name, "%s%s", m->name[b],
                 (m->jtype[b] == FB_JOINT_FLOATING && m->parent[b] != 0) ? "_x" : "");
        const int j = mj_name2id(mj, mjOBJ_JOINT, name);
        if (j < 0) {
            snprintf(msg, cap, "MuJoCo has no joint '%s'", name);
            mjmap_free(mp);
            return false;
        }
        mp->qadr[b] = mj->jnt_qposadr[j];
        mp->dadr[b] = mj->jnt_dofadr[j];
    }
    return true;
}

void mjmap_free(fb_mjmap* mp) {
    free(mp->qadr);
    free(mp->dadr);
    mp->qadr = mp->dadr = NULL;
}

/* Rotation taking the floating body's velocity axes to MuJoCo's: R_t R(q) at the root, R(q)
 * below it (slides are along the parent joint frame). */
static fb_m3 lin_rot(const fb_mjmap* mp, int b, const double* q) {
    const fb_model* m = mp->m;
    const fb_m3 R = fb_quat_to_m3(fb_quat_load(q + m->q_adr[b] + 3));
    return m->parent[b] == 0 ? fb_m3_mul(fb_m3_transpose(m->X_tree[b].E), R) : R;
}

void mjmap_qpos(const fb_mjmap* mp, const double* q, double* qpos) {
    const fb_model* m = mp->m;
    for (int b = 1; b < m->nbody; b++) {
        const double* qb = q + m->q_adr[b];
        double* o = qpos + mp->qadr[b];
        switch (m->jtype[b]) {
        case FB_JOINT_FIXED:
            break;
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC:
            o[0] = qb[0];
            break;
        case FB_JOINT_SPHERICAL:
            memcpy(o, qb, 4 * sizeof(double));
            break;
        case FB_JOINT_FLOATING: {
            fb_v3 p = fb_v3_make(qb[0], qb[1], qb[2]);
            fb_quat r = fb_quat_load(qb + 3);
            if (m->parent[b] == 0) {
                const fb_m3 Rt = fb_m3_transpose(m->X_tree[b].E);
                p = fb_v3_add(m->X_tree[b].r, fb_m3_mv(Rt, p));
                r = fb_quat_mul(fb_quat_from_m3(Rt), r);
            }
            o[0] = p.x;
            o[1] = p.y;
            o[2] = p.z;
            fb_quat_store(o + 3, r);
            break;
        }
        }
    }
}

void mjmap_dofs(const fb_mjmap* mp, const double* q, const double* qd, const double* x,
                fb_mjmap_kind kind, double* out) {
    const fb_model* m = mp->m;
    for (int b = 1; b < m->nbody; b++) {
        const double* xb = x + m->v_adr[b];
        double* o = out + mp->dadr[b];
        if (m->jtype[b] != FB_JOINT_FLOATING) {
            memcpy(o, xb, (size_t)m->jnv[b] * sizeof(double));
            continue;
        }
        const fb_m3 R = lin_rot(mp, b, q);
        fb_v3 lin = fb_v3_make(xb[3], xb[4], xb[5]);
        if (kind == MJMAP_ACC) {
            const double* vb = qd + m->v_adr[b];
            lin = fb_v3_add(lin, fb_v3_cross(fb_v3_make(vb[0], vb[1], vb[2]),
                                             fb_v3_make(vb[3], vb[4], vb[5])));
        }
        lin = fb_m3_mv(R, lin); /* R is a rotation: T^-T = T on this block */
        o[0] = lin.x;
        o[1] = lin.y;
        o[2] = lin.z;
        o[3] = xb[0];
        o[4] = xb[1];
        o[5] = xb[2];
    }
}

void mjmap_qacc_back(const fb_mjmap* mp, const double* q, const double* qd, const double* a,
                     double* qdd) {
    const fb_model* m = mp->m;
    for (int b = 1; b < m->nbody; b++) {
        const double* ab = a + mp->dadr[b];
        double* o = qdd + m->v_adr[b];
        if (m->jtype[b] != FB_JOINT_FLOATING) {
            memcpy(o, ab, (size_t)m->jnv[b] * sizeof(double));
            continue;
        }
        const double* vb = qd + m->v_adr[b];
        const fb_v3 w = fb_v3_make(vb[0], vb[1], vb[2]), v = fb_v3_make(vb[3], vb[4], vb[5]);
        const fb_v3 lin = fb_v3_sub(fb_m3_tr_mv(lin_rot(mp, b, q), fb_v3_make(ab[0], ab[1], ab[2])),
                                    fb_v3_cross(w, v));
        o[0] = ab[3];
        o[1] = ab[4];
        o[2] = ab[5];
        o[3] = lin.x;
        o[4] = lin.y;
        o[5] = lin.z;
    }
}

