// Bullet btMultiBody as a benchmark peer (see peer_bullet.h). C++ because Bullet is C++; it
// stays in bench/ and is built only when Bullet is found.
#include "peer_bullet.h"

#include <BulletDynamics/Featherstone/btMultiBody.h>

#include <cstdio>
#include <cstring>
#include <vector>

struct bullet_peer {
    const fb_model* m;
    btMultiBody* mb;
    bool floating_base;         // body 1 is the base
    std::vector<int> link;      // link index of each body (-1: the base or the world)
    btAlignedObjectArray<btScalar> scratch_r;
    btAlignedObjectArray<btVector3> scratch_v;
    btAlignedObjectArray<btMatrix3x3> scratch_m;
};

static btVector3 bt(fb_v3 v) {
    return btVector3(v.x, v.y, v.z);
}

static fb_v3 com_of(const fb_rbi& I) {
    return I.m > 0.0 ? fb_v3{I.h.x / I.m, I.h.y / I.m, I.h.z / I.m} : fb_v3{0.0, 0.0, 0.0};
}

// Principal moments about the centre of mass: the diagonal of Ic (axes assumed principal).
static btVector3 moments(const fb_rbi& I) {
    const fb_v3 c = com_of(I);
    const double cc = c.x * c.x + c.y * c.y + c.z * c.z;
    return btVector3(I.Ibar.m[0][0] - I.m * (cc - c.x * c.x), I.Ibar.m[1][1] - I.m * (cc - c.y * c.y),
                     I.Ibar.m[2][2] - I.m * (cc - c.z * c.z));
}

// The rotation taking parent coordinates to the body's: X_tree's E as a quaternion.
static btQuaternion rot_parent_to_this(const fb_xf& X) {
    btMatrix3x3 E(X.E.m[0][0], X.E.m[0][1], X.E.m[0][2], X.E.m[1][0], X.E.m[1][1], X.E.m[1][2],
                  X.E.m[2][0], X.E.m[2][1], X.E.m[2][2]);
    btQuaternion q;
    E.getRotation(q);
    return q;
}

extern "C" bullet_peer* bullet_peer_create(const fb_model* m, fb_error* err) {
    int roots = 0;
    for (int i = 1; i < m->nbody; i++) {
        roots += m->parent[i] == 0;
        if (m->jtype[i] == FB_JOINT_FLOATING && !(i == 1 && m->parent[i] == 0)) {
            if (err) {
                err->code = FB_EINVAL;
                std::snprintf(err->msg, sizeof err->msg,
                              "bullet peer: floating joint '%s' is not the single root",
                              m->name[i]);
            }
            return nullptr;
        }
    }
    bullet_peer* p = new bullet_peer;
    p->m = m;
    p->floating_base = m->nbody > 1 && m->jtype[1] == FB_JOINT_FLOATING && roots == 1;
    p->link.assign(m->nbody, -1);
    int nlinks = 0;
    for (int i = p->floating_base ? 2 : 1; i < m->nbody; i++) {
        p->link[i] = nlinks++;
    }
    const fb_rbi base = p->floating_base ? m->I[1] : fb_rbi{0.0, {0, 0, 0}, {}};
    p->mb = new btMultiBody(nlinks, base.m, p->floating_base ? moments(base) : btVector3(0, 0, 0),
                            !p->floating_base, false);
    for (int i = p->floating_base ? 2 : 1; i < m->nbody; i++) {
        const int par = m->parent[i];
        const int parent_link = p->link[par];
        const fb_v3 cpar = par == 0 ? fb_v3{0, 0, 0} : com_of(m->I[par]);
        const fb_v3 r = m->X_tree[i].r;
        const btVector3 pivot(r.x - cpar.x, r.y - cpar.y, r.z - cpar.z);
        const btVector3 com = bt(com_of(m->I[i]));
        const btQuaternion rot = rot_parent_to_this(m->X_tree[i]);
        const double mass = m->I[i].m;
        switch (m->jtype[i]) {
        case FB_JOINT_SPHERICAL:
            p->mb->setupSpherical(p->link[i], mass, moments(m->I[i]), parent_link, rot, pivot, com,
                                  true);
            break;
        case FB_JOINT_REVOLUTE:
            p->mb->setupRevolute(p->link[i], mass, moments(m->I[i]), parent_link, rot,
                                 bt(m->axis[i]), pivot, com, true);
            break;
        case FB_JOINT_PRISMATIC:
            p->mb->setupPrismatic(p->link[i], mass, moments(m->I[i]), parent_link, rot,
                                  bt(m->axis[i]), pivot, com, true);
            break;
        default:
            p->mb->setupFixed(p->link[i], mass, moments(m->I[i]), parent_link, rot, pivot, com);
            break;
        }
    }
    p->mb->finalizeMultiDof();
    return p;
}

extern "C" void bullet_peer_destroy(bullet_peer* p) {
    if (p) {
        delete p->mb;
        delete p;
    }
}

extern "C" void bullet_peer_set_state(bullet_peer* p, const double* q, const double* qd) {
    const fb_model* m = p->m;
    if (p->floating_base) {
        const double* qb = q + m->q_adr[1];
        const double* vb = qd + m->v_adr[1];
        p->mb->setBasePos(btVector3(qb[0], qb[1], qb[2]));
        // Bullet keeps the world-to-base rotation: the inverse of ours
        p->mb->setWorldToBaseRot(btQuaternion(-qb[4], -qb[5], -qb[6], qb[3]));
        p->mb->setBaseOmega(btVector3(vb[0], vb[1], vb[2]));
        p->mb->setBaseVel(btVector3(vb[3], vb[4], vb[5]));
    }
    for (int i = 1; i < m->nbody; i++) {
        const int l = p->link[i];
        if (l < 0) {
            continue;
        }
        const double* qi = q + m->q_adr[i];
        const double* vi = qd + m->v_adr[i];
        if (m->jtype[i] == FB_JOINT_SPHERICAL) {
            const double xyzw[4] = {qi[1], qi[2], qi[3], qi[0]};
            p->mb->setJointPosMultiDof(l, xyzw);
            p->mb->setJointVelMultiDof(l, vi);
        } else if (m->jtype[i] == FB_JOINT_REVOLUTE || m->jtype[i] == FB_JOINT_PRISMATIC) {
            p->mb->setJointPos(l, qi[0]);
            p->mb->setJointVel(l, vi[0]);
        }
    }
}

extern "C" void bullet_peer_aba(bullet_peer* p) {
    const fb_model* m = p->m;
    const btVector3 g = bt(m->opt.gravity);
    p->mb->clearForcesAndTorques();
    if (p->floating_base) {
        p->mb->addBaseForce(g * m->I[1].m);
    }
    for (int i = 1; i < m->nbody; i++) {
        if (p->link[i] >= 0) {
            p->mb->addLinkForce(p->link[i], g * m->I[i].m);
        }
    }
    p->mb->computeAccelerationsArticulatedBodyAlgorithmMultiDof(0.001, p->scratch_r, p->scratch_v,
                                                                p->scratch_m, false, false, false);
}
