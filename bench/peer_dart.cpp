// DART as a benchmark peer and cross-check (see peer_dart.h). C++ because DART is C++; it
// stays in bench/ and is built only when DART is found.
#include "peer_dart.h"

#include <dart/collision/ode/OdeCollisionDetector.hpp>
#include <dart/config.hpp>
#include <dart/constraint/BoxedLcpConstraintSolver.hpp>
#include <dart/constraint/PgsBoxedLcpSolver.hpp>
#include <dart/dynamics/BallJoint.hpp>
#include <dart/dynamics/BodyNode.hpp>
#include <dart/dynamics/CapsuleShape.hpp>
#include <dart/dynamics/BoxShape.hpp>
#include <dart/dynamics/FreeJoint.hpp>
#include <dart/dynamics/PlaneShape.hpp>
#include <dart/dynamics/PrismaticJoint.hpp>
#include <dart/dynamics/RevoluteJoint.hpp>
#include <dart/dynamics/ShapeNode.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/dynamics/SphereShape.hpp>
#include <dart/dynamics/WeldJoint.hpp>
#include <dart/simulation/World.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

using dart::dynamics::BodyNode;
using dart::dynamics::SkeletonPtr;

struct dart_peer {
    const fb_model* m;
    SkeletonPtr skel;
    std::vector<int> dadr;  // DART index of body i's first dof (-1: no dofs)
    Eigen::VectorXd pos, vel, acc, tau;
};

struct dart_stand {
    dart_peer* peer;  // the humanoid, with its shapes
    const stand_ctl* ctl;
    dart::simulation::WorldPtr world;
    Eigen::VectorXd pos0, vel0, force;
    std::vector<double> q;  // our q rebuilt from DART's, for stand_pd
};

static void fail(fb_error* err, fb_status code, const char* what) {
    if (err) {
        err->code = code;
        std::snprintf(err->msg, sizeof err->msg, "DART peer: %s", what);
    }
}

static Eigen::Vector3d ev(fb_v3 v) {
    return Eigen::Vector3d(v.x, v.y, v.z);
}

// The joint frame in the parent body's frame: X_tree = (E, r) maps parent coordinates to
// joint coordinates, so the frame's axes in parent coordinates are E^T's columns.
static Eigen::Isometry3d joint_frame(const fb_xf& X) {
    Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            T.linear()(r, c) = X.E.m[c][r];
        }
    }
    T.translation() = ev(X.r);
    return T;
}

// Our inertia (mass m, h = m c, Ibar about the body origin) as DART's (mass, centre, the
// rotational inertia about the centre): Ic = Ibar - m (|c|^2 1 - c c^T).
static dart::dynamics::Inertia inertia(const fb_rbi& I) {
    const Eigen::Vector3d c = I.m > 0.0 ? Eigen::Vector3d(ev(I.h) / I.m) : Eigen::Vector3d::Zero();
    Eigen::Matrix3d Ib;
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++) {
            Ib(r, k) = I.Ibar.m[r][k];
        }
    }
    const Eigen::Matrix3d Ic = Ib - I.m * (c.dot(c) * Eigen::Matrix3d::Identity() - c * c.transpose());
    return dart::dynamics::Inertia(I.m, c, Ic);
}

// Body `name` on joint type J (properties pr) at joint frame T of parent.
template <class J>
static std::pair<dart::dynamics::Joint*, BodyNode*> add_body(const SkeletonPtr& skel,
                                                             BodyNode* parent,
                                                             typename J::Properties pr,
                                                             const Eigen::Isometry3d& T,
                                                             const char* name) {
    pr.mName = std::string(name) + "_joint";
    pr.mT_ParentBodyToJoint = T;
    dart::dynamics::BodyNode::Properties bp;
    bp.mName = name;
    return skel->createJointAndBodyNodePair<J>(parent, pr, bp);
}

static dart_peer* build(const fb_model* m, fb_error* err) {
    using namespace dart::dynamics;
    dart_peer* p = new dart_peer;
    p->m = m;
    p->skel = Skeleton::create("fb");
    p->skel->setGravity(ev(m->opt.gravity));
    std::vector<BodyNode*> node(m->nbody, nullptr);
    for (int i = 1; i < m->nbody; i++) {
        BodyNode* parent = node[m->parent[i]];
        const Eigen::Isometry3d T = joint_frame(m->X_tree[i]);
        const char* name = m->name[i];
        std::pair<Joint*, BodyNode*> jb;
        switch (m->jtype[i]) {
        case FB_JOINT_SPHERICAL:
            jb = add_body<BallJoint>(p->skel, parent, BallJoint::Properties(), T, name);
            break;
        case FB_JOINT_FLOATING:
            jb = add_body<FreeJoint>(p->skel, parent, FreeJoint::Properties(), T, name);
            break;
        case FB_JOINT_REVOLUTE: {
            RevoluteJoint::Properties pr;
            pr.mAxis = ev(m->axis[i]);
            jb = add_body<RevoluteJoint>(p->skel, parent, pr, T, name);
            break;
        }
        case FB_JOINT_PRISMATIC: {
            PrismaticJoint::Properties pr;
            pr.mAxis = ev(m->axis[i]);
            jb = add_body<PrismaticJoint>(p->skel, parent, pr, T, name);
            break;
        }
        case FB_JOINT_FIXED:
            jb = add_body<WeldJoint>(p->skel, parent, WeldJoint::Properties(), T, name);
            break;
        }
        node[i] = jb.second;
        jb.second->setInertia(inertia(m->I[i]));
    }
    p->dadr.assign(m->nbody, -1);
    for (int i = 1; i < m->nbody; i++) {
        if (m->jnv[i] > 0) {
            p->dadr[i] = (int)node[i]->getParentJoint()->getIndexInSkeleton(0);
        }
    }
    const Eigen::Index n = (Eigen::Index)p->skel->getNumDofs();
    if (n != m->nv) {
        fail(err, FB_EINVAL, "DART's skeleton has another number of dofs");
        delete p;
        return nullptr;
    }
    p->pos.setZero(n);
    p->vel.setZero(n);
    p->acc.setZero(n);
    p->tau.setZero(n);
    return p;
}

extern "C" dart_peer* dart_peer_create(const fb_model* m, fb_error* err) {
    try {
        return build(m, err);
    } catch (const std::exception& e) {
        fail(err, FB_EINVAL, e.what());
        return nullptr;
    }
}

extern "C" void dart_peer_destroy(dart_peer* p) {
    delete p;
}

// The rotation vector of the unit quaternion [w x y z] (DART's log map of its matrix).
static Eigen::Vector3d rotvec(const double* q) {
    const Eigen::Quaterniond e(q[0], q[1], q[2], q[3]);
    return dart::dynamics::BallJoint::convertToPositions(e.normalized().toRotationMatrix());
}

extern "C" void dart_peer_to_dart(const dart_peer* p, const double* q, const double* qd,
                                  const double* x, double* pos, double* vel, double* xd) {
    const fb_model* m = p->m;
    for (int i = 1; i < m->nbody; i++) {
        const int k = p->dadr[i], n = m->jnv[i], v = m->v_adr[i];
        if (k < 0) {
            continue;
        }
        const double* qi = q ? q + m->q_adr[i] : nullptr;
        if (pos && qi) {
            if (m->jtype[i] == FB_JOINT_SPHERICAL) {
                const Eigen::Vector3d r = rotvec(qi);
                pos[k] = r.x(), pos[k + 1] = r.y(), pos[k + 2] = r.z();
            } else if (m->jtype[i] == FB_JOINT_FLOATING) {
                const Eigen::Vector3d r = rotvec(qi + 3);
                pos[k] = r.x(), pos[k + 1] = r.y(), pos[k + 2] = r.z();
                pos[k + 3] = qi[0], pos[k + 4] = qi[1], pos[k + 5] = qi[2];
            } else {
                pos[k] = qi[0];
            }
        }
        for (int j = 0; j < n; j++) {
            if (vel && qd) {
                vel[k + j] = qd[v + j];
            }
            if (xd && x) {
                xd[k + j] = x[v + j];
            }
        }
    }
}

extern "C" void dart_peer_set_state(dart_peer* p, const double* pos, const double* vel) {
    const Eigen::Index n = p->pos.size();
    p->skel->setPositions(Eigen::Map<const Eigen::VectorXd>(pos, n));
    p->skel->setVelocities(Eigen::Map<const Eigen::VectorXd>(vel, n));
}

extern "C" void dart_peer_set_forces(dart_peer* p, const double* tau) {
    p->skel->setForces(Eigen::Map<const Eigen::VectorXd>(tau, p->tau.size()));
}

extern "C" void dart_peer_forward(dart_peer* p) {
    p->skel->computeForwardDynamics();
}

extern "C" void dart_peer_inverse(dart_peer* p, const double* acc) {
    p->skel->setAccelerations(Eigen::Map<const Eigen::VectorXd>(acc, p->acc.size()));
    p->skel->computeInverseDynamics(false, false, false);
}

// DART's generalised vector x in our layout.
static void to_ours(const dart_peer* p, const Eigen::VectorXd& x, double* out) {
    const fb_model* m = p->m;
    for (int i = 1; i < m->nbody; i++) {
        for (int j = 0; j < m->jnv[i]; j++) {
            out[m->v_adr[i] + j] = x[p->dadr[i] + j];
        }
    }
}

extern "C" void dart_peer_qdd(const dart_peer* p, double* qdd) {
    to_ours(p, p->skel->getAccelerations(), qdd);
}

extern "C" void dart_peer_tau(const dart_peer* p, double* tau) {
    to_ours(p, p->skel->getForces(), tau);
}

extern "C" const char* dart_peer_version(void) {
    return DART_VERSION;
}

// ---- the standing humanoid ---------------------------------------------------------------

// Shape s of m on DART body node bn: capsules (DART's along z, centred) and spheres; boxes.
static void add_shape(BodyNode* bn, const fb_shape& s) {
    using namespace dart::dynamics;
    Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
    ShapePtr shape;
    switch (s.type) {
    case FB_SHAPE_SPHERE:
        shape = std::make_shared<SphereShape>(s.radius);
        T.translation() = ev(s.p0);
        break;
    case FB_SHAPE_CAPSULE: {
        const Eigen::Vector3d a = ev(s.p0), b = ev(s.p1);
        const double len = (b - a).norm();
        shape = std::make_shared<CapsuleShape>(s.radius, len);
        T.translation() = 0.5 * (a + b);
        if (len > 0.0) {
            T.linear() = Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), (b - a) / len)
                             .toRotationMatrix();
        }
        break;
    }
    case FB_SHAPE_BOX:
        shape = std::make_shared<BoxShape>(ev(s.size));
        T.translation() = ev(s.p0);
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) {
                T.linear()(r, c) = s.R.m[r][c];
            }
        }
        break;
    }
    auto* sn = bn->createShapeNodeWith<CollisionAspect, DynamicsAspect>(shape);
    sn->setRelativeTransform(T);
    sn->getDynamicsAspect()->setFrictionCoeff(1.0);
    sn->getDynamicsAspect()->setRestitutionCoeff(0.0);
}

static dart_stand* build_stand(const fb_model* m, const stand_ctl* ctl, bool pgs, fb_error* err) {
    using namespace dart;
    dart_peer* p = build(m, err);
    if (!p) {
        return nullptr;
    }
    dart_stand* s = new dart_stand;
    s->peer = p;
    s->ctl = ctl;
    for (int k = 0; k < m->nshape; k++) {
        const fb_shape& sh = m->shape[k];
        add_shape(s->peer->skel->getBodyNode(m->name[sh.body]), sh);
    }
    auto ground = dynamics::Skeleton::create("ground");
    auto gb = ground->createJointAndBodyNodePair<dynamics::WeldJoint>().second;
    auto* gs = gb->createShapeNodeWith<dynamics::CollisionAspect, dynamics::DynamicsAspect>(
        std::make_shared<dynamics::PlaneShape>(Eigen::Vector3d::UnitY(), 0.0));
    gs->getDynamicsAspect()->setFrictionCoeff(1.0);
    gs->getDynamicsAspect()->setRestitutionCoeff(0.0);
    s->world = simulation::World::create("stand");
    s->world->setTimeStep(STAND_DT);
    s->world->setGravity(ev(m->opt.gravity));
    if (pgs) {
        s->world->setConstraintSolver(std::make_unique<constraint::BoxedLcpConstraintSolver>(
            std::make_shared<constraint::PgsBoxedLcpSolver>(), nullptr));
    }
    s->world->getConstraintSolver()->setCollisionDetector(
        collision::OdeCollisionDetector::create());
    s->world->addSkeleton(p->skel);
    s->world->addSkeleton(ground);
    const Eigen::Index n = p->pos.size();
    s->pos0.setZero(n);
    s->vel0.setZero(n);
    s->force.setZero(n);
    dart_peer_to_dart(p, ctl->q0, ctl->qd0, nullptr, s->pos0.data(), s->vel0.data(), nullptr);
    s->q.assign((size_t)m->nq, 0.0);
    dart_stand_reset(s);
    return s;
}

extern "C" dart_stand* dart_stand_create(const fb_model* m, const stand_ctl* ctl, bool pgs,
                                         fb_error* err) {
    try {
        return build_stand(m, ctl, pgs, err);
    } catch (const std::exception& e) {
        fail(err, FB_EINVAL, e.what());
        return nullptr;
    }
}

extern "C" void dart_stand_destroy(dart_stand* s) {
    if (s) {
        s->world.reset();
        dart_peer_destroy(s->peer);
        delete s;
    }
}

extern "C" void dart_stand_reset(dart_stand* s) {
    s->peer->skel->setPositions(s->pos0);
    s->peer->skel->setVelocities(s->vel0);
    s->peer->skel->resetAccelerations();
}

extern "C" void dart_stand_step(dart_stand* s) {
    const fb_model* m = s->peer->m;
    const dart_peer* p = s->peer;
    const Eigen::VectorXd& pos = p->skel->getPositions();
    const Eigen::VectorXd& vel = p->skel->getVelocities();
    for (int i = 1; i < m->nbody; i++) {
        const fb_joint_type jt = m->jtype[i];
        const int k = p->dadr[i], v = m->v_adr[i];
        if (jt == FB_JOINT_SPHERICAL) {
            // DART's rotation vector as the quaternion stand_pd reads
            const Eigen::Vector3d r(pos[k], pos[k + 1], pos[k + 2]);
            const double a = r.norm();
            const double sh = a > 0.0 ? std::sin(0.5 * a) / a : 0.5;
            const double quat[4] = {std::cos(0.5 * a), sh * r.x(), sh * r.y(), sh * r.z()};
            stand_pd(true, s->ctl->kp + v, s->ctl->kd + v, quat, &vel[k], &s->force[k]);
        } else if (jt == FB_JOINT_REVOLUTE) {
            stand_pd(false, s->ctl->kp + v, s->ctl->kd + v, &pos[k], &vel[k], &s->force[k]);
        }
    }
    p->skel->setForces(s->force);
    s->world->step();
}

extern "C" int dart_stand_contacts(const dart_stand* s) {
    return (int)s->world->getLastCollisionResult().getNumContacts();
}

extern "C" double dart_stand_pelvis_y(const dart_stand* s) {
    return s->peer->skel->getBodyNode(0)->getWorldTransform().translation().y();
}
