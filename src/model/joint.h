/* Joint calculations used by the dynamics: jcalc [RBDA §4.4] and products with the motion
 * subspace S. */
#ifndef FB_MODEL_JOINT_H
#define FB_MODEL_JOINT_H

#include "featherbone/model.h"
#include "math/spatial.h"

/* jcalc for body i's joint [RBDA §4.4]: XJ (joint frame -> body frame) from q. The joint
 * velocity is vJ = S qd (fb_S_mul) and the velocity-product term cJ is zero for every joint
 * type here, because each S is constant in child coordinates. */
void fb_jcalc(const fb_model* m, int i, const double* q, fb_xf* XJ);

/* S_i x: body i's motion subspace times its slice of a per-dof vector x (nv). Ball and
 * floating joints, whose S columns are unit vectors, skip the multiplications. */
static inline fb_mv fb_S_mul(const fb_model* m, int i, const double* x) {
    const int k0 = m->v_adr[i];
    const double* xi = x + k0;
    switch (m->jtype[i]) {
    case FB_JOINT_SPHERICAL:
        return (fb_mv){{xi[0], xi[1], xi[2]}, {0.0, 0.0, 0.0}};
    case FB_JOINT_FLOATING:
        return (fb_mv){{xi[0], xi[1], xi[2]}, {xi[3], xi[4], xi[5]}};
    case FB_JOINT_FIXED:
    case FB_JOINT_REVOLUTE:
    case FB_JOINT_PRISMATIC:
        break;
    }
    fb_mv out = fb_mv_zero();
    for (int k = 0; k < m->jnv[i]; k++) {
        out = fb_mv_axpy(out, xi[k], m->S[k0 + k]);
    }
    return out;
}

/* out = S_i^T f: body i's slice of a per-dof vector (out has nv entries; only i's are set). */
static inline void fb_S_tr_mul(const fb_model* m, int i, fb_fv f, double* out) {
    const int k0 = m->v_adr[i];
    double* o = out + k0;
    switch (m->jtype[i]) {
    case FB_JOINT_FLOATING:
        o[3] = f.f.x;
        o[4] = f.f.y;
        o[5] = f.f.z;
        o[0] = f.n.x;
        o[1] = f.n.y;
        o[2] = f.n.z;
        return;
    case FB_JOINT_SPHERICAL:
        o[0] = f.n.x;
        o[1] = f.n.y;
        o[2] = f.n.z;
        return;
    case FB_JOINT_FIXED:
    case FB_JOINT_REVOLUTE:
    case FB_JOINT_PRISMATIC:
        break;
    }
    for (int k = 0; k < m->jnv[i]; k++) {
        o[k] = fb_mv_dot_fv(m->S[k0 + k], f);
    }
}

#endif /* FB_MODEL_JOINT_H */
