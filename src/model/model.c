/* fb_model: creation, adding bodies with validation, finalisation. */
#include "featherbone/model.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/spatial.h"
#include "model/constants.h"
#include "util/block.h"
#include "util/error.h"

fb_body_def fb_default_body_def(void) {
    return (fb_body_def){
        .name = NULL,
        .parent = 0,
        .joint = FB_JOINT_FIXED,
        .axis = {0.0, 0.0, 1.0},
        .X_tree = fb_xf_identity(),
        .inertia = fb_rbi_zero(),
    };
}

const char* fb_joint_type_name(fb_joint_type t) {
    switch (t) {
    case FB_JOINT_FIXED:
        return "fixed";
    case FB_JOINT_REVOLUTE:
        return "revolute";
    case FB_JOINT_PRISMATIC:
        return "prismatic";
    case FB_JOINT_SPHERICAL:
        return "spherical";
    case FB_JOINT_FLOATING:
        return "floating";
    }
    return "unknown";
}

int fb_joint_nq(fb_joint_type t) {
    static const int nq[] = {0, 1, 1, 4, 7};
    return (t >= FB_JOINT_FIXED && t <= FB_JOINT_FLOATING) ? nq[t] : 0;
}

int fb_joint_nv(fb_joint_type t) {
    static const int nv[] = {0, 1, 1, 3, 6};
    return (t >= FB_JOINT_FIXED && t <= FB_JOINT_FLOATING) ? nv[t] : 0;
}

fb_rbi fb_rbi_from_mass_com(double mass, fb_v3 c, fb_m3 Ic) {
    /* Ibar = Ic + m cx cx^T = Ic - m cx cx [RBDA eq 2.63] */
    const fb_m3 cx = fb_m3_skew(c);
    return (fb_rbi){mass, fb_v3_scale(c, mass), fb_m3_sub(Ic, fb_m3_scale(fb_m3_mul(cx, cx), mass))};
}

/* ---- allocation: every array in one block -------------------------------------------- */

static size_t layout_model(fb_model* m, char* base, int cap) {
    size_t off = 0;
    const size_t nb = (size_t)cap;
    const size_t nv_max = nb * FB_JOINT_NV_MAX, nq_max = nb * FB_JOINT_NQ_MAX;
    m->parent = fb_block_carve(base, &off, nb * sizeof(int));
    m->jtype = fb_block_carve(base, &off, nb * sizeof(fb_joint_type));
    m->q_adr = fb_block_carve(base, &off, nb * sizeof(int));
    m->v_adr = fb_block_carve(base, &off, nb * sizeof(int));
    m->jnq = fb_block_carve(base, &off, nb * sizeof(int));
    m->jnv = fb_block_carve(base, &off, nb * sizeof(int));
    m->axis = fb_block_carve(base, &off, nb * sizeof(fb_v3));
    m->X_tree = fb_block_carve(base, &off, nb * sizeof(fb_xf));
    m->X_tree_rot = fb_block_carve(base, &off, nb * sizeof(bool));
    m->I = fb_block_carve(base, &off, nb * sizeof(fb_rbi));
    m->limit = fb_block_carve(base, &off, nb * sizeof(fb_joint_limit));
    m->damping = fb_block_carve(base, &off, nb * sizeof(double));
    m->friction = fb_block_carve(base, &off, nb * sizeof(double));
    m->name = fb_block_carve(base, &off, nb * FB_NAME_MAX);
    m->S = fb_block_carve(base, &off, nv_max * sizeof(fb_mv));
    m->dof_body = fb_block_carve(base, &off, nv_max * sizeof(int));
    m->q_neutral = fb_block_carve(base, &off, nq_max * sizeof(double));
    m->shape = fb_block_carve(base, &off, 2 * nb * sizeof(fb_shape));
    return off;
}

fb_model* fb_model_create(int max_bodies, const fb_allocator* alloc, fb_error* err) {
    if (max_bodies < 0 || max_bodies > FB_MODEL_MAX_BODIES) {
        fb_fail(err, FB_EINVAL, "fb_model_create: max_bodies: expected 0..%d, found %d",
                FB_MODEL_MAX_BODIES, max_bodies);
        return NULL;
    }
    const fb_allocator a = alloc ? *alloc : fb_default_allocator();
    fb_model* m = fb_alloc(&a, sizeof *m);
    if (!m) {
        fb_fail(err, FB_ENOMEM, "fb_model_create: out of memory");
        return NULL;
    }
    memset(m, 0, sizeof *m);
    const int cap = max_bodies + 1;
    const size_t size = layout_model(m, NULL, cap);
    char* block = fb_alloc(&a, size);
    if (!block) {
        fb_free(&a, m);
        fb_fail(err, FB_ENOMEM, "fb_model_create: out of memory for %d bodies", max_bodies);
        return NULL;
    }
    memset(block, 0, size);
    layout_model(m, block, cap);
    m->alloc = a;
    m->block = block;
    m->capacity = cap;
    m->shape_capacity = 2 * cap;
    m->opt.gravity = (fb_v3){0.0, -FB_DEFAULT_GRAVITY, 0.0};

    /* body 0: the fixed world */
    m->nbody = 1;
    m->parent[0] = -1;
    m->jtype[0] = FB_JOINT_FIXED;
    m->X_tree[0] = fb_xf_identity();
    m->I[0] = fb_rbi_zero();
    strcpy(m->name[0], "world");
    fb_ok(err);
    return m;
}

void fb_model_destroy(fb_model* m) {
    if (!m) {
        return;
    }
    const fb_allocator a = m->alloc;
    fb_free(&a, m->block);
    fb_free(&a, m);
}

int fb_model_body_by_name(const fb_model* m, const char* name) {
    if (!name) {
        return -1;
    }
    for (int i = 0; i < m->nbody; i++) {
        if (strcmp(m->name[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

double fb_model_mass(const fb_model* m) {
    double mass = 0.0;
    for (int i = 1; i < m->nbody; i++) {
        mass += m->I[i].m;
    }
    return mass;
}

fb_status fb_model_set_gravity(fb_model* m, fb_v3 gravity, fb_error* err) {
    if (!fb_v3_is_finite(gravity)) {
        return fb_fail(err, FB_EINVAL, "gravity: expected finite components");
    }
    m->opt.gravity = gravity;
    return fb_ok(err);
}

/* ---- validation ------------------------------------------------------------------------ */

static bool m3_is_finite(fb_m3 A) {
    return fb_v3_is_finite(fb_m3_row(A, 0)) && fb_v3_is_finite(fb_m3_row(A, 1)) &&
           fb_v3_is_finite(fb_m3_row(A, 2));
}

/* E is a proper rotation: E E^T = 1 and det E = +1 within FB_ROTATION_TOL. */
static bool m3_is_rotation(fb_m3 E) {
    const fb_m3 P = fb_m3_mul_tr(E, E);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            if (fabs(P.m[r][c] - (r == c ? 1.0 : 0.0)) > FB_ROTATION_TOL) {
                return false;
            }
        }
    }
    const double det = fb_v3_dot(fb_m3_row(E, 0), fb_v3_cross(fb_m3_row(E, 1), fb_m3_row(E, 2)));
    return fabs(det - 1.0) <= FB_ROTATION_TOL;
}

/* Symmetric 3x3 A is positive semi-definite: every principal minor >= -tol. */
static bool m3_is_psd(fb_m3 A, double tol) {
    double (*a)[3] = A.m;
    for (int i = 0; i < 3; i++) {
        if (a[i][i] < -tol) {
            return false;
        }
    }
    const double m01 = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    const double m02 = a[0][0] * a[2][2] - a[0][2] * a[2][0];
    const double m12 = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    const double det = fb_v3_dot(fb_m3_row(A, 0), fb_v3_cross(fb_m3_row(A, 1), fb_m3_row(A, 2)));
    const double tol2 = tol * (fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]) + tol);
    return m01 >= -tol2 && m02 >= -tol2 && m12 >= -tol2 && det >= -tol2 * (fabs(a[0][0]) + 1.0);
}

/* A physically realisable inertia: m >= 0, h = 0 when m = 0, Ibar symmetric, and the second
 * moment of mass about the centre of mass, Sigma = tr(Ic)/2 - Ic, positive semi-definite
 * (which gives Ic >= 0 and the triangle inequality on the principal moments). */
static fb_status check_inertia(const fb_rbi* I, const char* name, fb_error* err) {
    if (!isfinite(I->m) || !fb_v3_is_finite(I->h) || !m3_is_finite(I->Ibar)) {
        return fb_fail(err, FB_EINVAL, "body '%s': inertia: expected finite values", name);
    }
    if (I->m < 0.0) {
        return fb_fail(err, FB_EINVAL, "body '%s': inertia.m: expected >= 0, found %g", name,
                       I->m);
    }
    const double scale = fabs(I->Ibar.m[0][0]) + fabs(I->Ibar.m[1][1]) + fabs(I->Ibar.m[2][2]);
    const double tol = FB_INERTIA_REL_TOL * (scale + FB_INERTIA_ABS_TOL);
    for (int r = 0; r < 3; r++) {
        for (int c = r + 1; c < 3; c++) {
            if (fabs(I->Ibar.m[r][c] - I->Ibar.m[c][r]) > tol) {
                return fb_fail(err, FB_EINVAL, "body '%s': inertia.Ibar: expected symmetric",
                               name);
            }
        }
    }
    if (I->m == 0.0) {
        if (fb_v3_norm(I->h) > 0.0 || scale > 0.0) {
            return fb_fail(err, FB_EINVAL,
                           "body '%s': inertia: zero mass needs zero h and Ibar", name);
        }
        return FB_OK;
    }
    /* Ic = Ibar + m cx cx with c = h/m [RBDA eq 2.63] */
    const fb_m3 cx = fb_m3_skew(fb_v3_scale(I->h, 1.0 / I->m));
    const fb_m3 Ic = fb_m3_add(I->Ibar, fb_m3_scale(fb_m3_mul(cx, cx), I->m));
    const double half_tr = 0.5 * (Ic.m[0][0] + Ic.m[1][1] + Ic.m[2][2]);
    const fb_m3 Sigma = fb_m3_sub(fb_m3_diag(half_tr, half_tr, half_tr), Ic);
    if (!m3_is_psd(Sigma, tol)) {
        return fb_fail(err, FB_EINVAL,
                       "body '%s': inertia: expected a physically realisable inertia "
                       "(principal moments >= 0 satisfying the triangle inequality)",
                       name);
    }
    return FB_OK;
}

/* An elliptic swing range (fb_joint_limit): a unit neutral direction, a swing axis not along
 * it (made perpendicular and unit), bounds with the neutral strictly inside. Sets `swing` to
 * the circumscribing cone's half-angle. */
static fb_status check_elliptic(const fb_joint_limit* lim, const char* name, fb_joint_limit* out,
                                fb_error* err) {
    const double nd = fb_v3_norm(lim->neutral);
    if (!fb_v3_is_finite(lim->neutral) || !(nd > FB_AXIS_MIN_NORM)) {
        return fb_fail(err, FB_EINVAL, "body '%s': limit.neutral: expected a non-zero vector",
                       name);
    }
    const fb_v3 d0 = fb_v3_scale(lim->neutral, 1.0 / nd);
    const fb_v3 a = lim->swing_axis;
    const fb_v3 u = fb_v3_is_finite(a) ? fb_v3_sub(a, fb_v3_scale(d0, fb_v3_dot(d0, a)))
                                       : fb_v3_zero();
    const double nu = fb_v3_norm(u);
    if (!(nu > FB_AXIS_MIN_NORM * (1.0 + fb_v3_norm(a)))) {
        return fb_fail(err, FB_EINVAL, "body '%s': limit.swing_axis: expected a vector not "
                       "along limit.neutral", name);
    }
    double widest = 0.0;
    for (int k = 0; k < 2; k++) {
        if (!(lim->swing_lo[k] < 0.0 && lim->swing_lo[k] >= -FB_PI && lim->swing_hi[k] > 0.0 &&
              lim->swing_hi[k] <= FB_PI)) {
            return fb_fail(err, FB_EINVAL, "body '%s': limit.swing_lo/hi[%d]: expected "
                           "-pi <= lo < 0 < hi <= pi, found %g, %g", name, k, lim->swing_lo[k],
                           lim->swing_hi[k]);
        }
        widest = fmax(widest, fmax(-lim->swing_lo[k], lim->swing_hi[k]));
    }
    out->neutral = d0;
    out->swing_axis = fb_v3_scale(u, 1.0 / nu);
    out->swing = widest;
    return FB_OK;
}

/* A joint limit that fits the joint type: an ordered finite range, a unit twist axis and a
 * swing cone in (0, pi] for spherical joints. Returns the limit to store (axis normalised). */
static fb_status check_limit(fb_joint_type t, const fb_joint_limit* lim, const char* name,
                             fb_joint_limit* out, fb_error* err) {
    *out = *lim;
    if (!lim->on) {
        return FB_OK;
    }
    if (t != FB_JOINT_REVOLUTE && t != FB_JOINT_PRISMATIC && t != FB_JOINT_SPHERICAL) {
        return fb_fail(err, FB_EINVAL, "body '%s': limit: a %s joint has no limits", name,
                       fb_joint_type_name(t));
    }
    if (!isfinite(lim->lo) || !isfinite(lim->hi) || !(lim->lo <= lim->hi)) {
        return fb_fail(err, FB_EINVAL, "body '%s': limit.lo/hi: expected finite lo <= hi", name);
    }
    if (t == FB_JOINT_SPHERICAL) {
        const double n = fb_v3_norm(lim->twist_axis);
        if (!fb_v3_is_finite(lim->twist_axis) || !(n > FB_AXIS_MIN_NORM)) {
            return fb_fail(err, FB_EINVAL, "body '%s': limit.twist_axis: expected a non-zero "
                           "vector", name);
        }
        if (lim->elliptic) {
            const fb_status s = check_elliptic(lim, name, out, err);
            if (s != FB_OK) {
                return s;
            }
        } else if (!(lim->swing > 0.0 && lim->swing <= FB_PI)) {
            return fb_fail(err, FB_EINVAL, "body '%s': limit.swing: expected (0, pi], found %g",
                           name, lim->swing);
        }
        if (lim->lo < -FB_PI || lim->hi > FB_PI) {
            return fb_fail(err, FB_EINVAL, "body '%s': limit.lo/hi: twist expected within "
                           "[-pi, pi]", name);
        }
        out->twist_axis = fb_v3_scale(lim->twist_axis, 1.0 / n);
    }
    return FB_OK;
}

fb_status fb_model_set_limit(fb_model* m, int body, const fb_joint_limit* lim, fb_error* err) {
    if (m->finalized) {
        return fb_fail(err, FB_ESTATE, "fb_model_set_limit: model already finalized");
    }
    if (body < 1 || body >= m->nbody) {
        return fb_fail(err, FB_EINVAL, "fb_model_set_limit: body: expected 1..%d, found %d",
                       m->nbody - 1, body);
    }
    fb_joint_limit checked;
    const fb_status s = check_limit(m->jtype[body], lim, m->name[body], &checked, err);
    if (s != FB_OK) {
        return s;
    }
    m->limit[body] = checked;
    return fb_ok(err);
}

/* A passive joint property (damping, friction): finite, >= 0, and none on a floating or fixed
 * joint. */
static fb_status check_passive(fb_joint_type t, double b, const char* what, const char* name,
                               fb_error* err) {
    if (!(b >= 0.0) || !isfinite(b)) {
        return fb_fail(err, FB_EINVAL, "body '%s': %s: expected >= 0, found %g", name, what, b);
    }
    if (b > 0.0 && (t == FB_JOINT_FLOATING || t == FB_JOINT_FIXED)) {
        return fb_fail(err, FB_EINVAL, "body '%s': %s: a %s joint has none", name, what,
                       fb_joint_type_name(t));
    }
    return FB_OK;
}

static fb_status set_passive(fb_model* m, int body, double value, const char* what, double* field,
                             fb_error* err) {
    if (body < 1 || body >= m->nbody) {
        return fb_fail(err, FB_EINVAL, "fb_model_set_%s: body: expected 1..%d, found %d", what,
                       m->nbody - 1, body);
    }
    const fb_status s = check_passive(m->jtype[body], value, what, m->name[body], err);
    if (s != FB_OK) {
        return s;
    }
    field[body] = value;
    return fb_ok(err);
}

fb_status fb_model_set_damping(fb_model* m, int body, double damping, fb_error* err) {
    return set_passive(m, body, damping, "damping", m->damping, err);
}

fb_status fb_model_set_friction(fb_model* m, int body, double friction, fb_error* err) {
    return set_passive(m, body, friction, "friction", m->friction, err);
}

fb_status fb_model_add_body(fb_model* m, const fb_body_def* def, int* id, fb_error* err) {
    if (m->finalized) {
        return fb_fail(err, FB_ESTATE, "fb_model_add_body: model already finalized");
    }
    if (!def->name || def->name[0] == '\0') {
        return fb_fail(err, FB_EINVAL, "body %d: name: expected a non-empty name", m->nbody);
    }
    const char* name = def->name;
    if (strlen(name) >= FB_NAME_MAX) {
        return fb_fail(err, FB_EINVAL, "body '%.40s...': name: expected fewer than %d characters",
                       name, FB_NAME_MAX);
    }
    if (fb_model_body_by_name(m, name) >= 0) {
        return fb_fail(err, FB_EINVAL, "body '%s': name: expected unique, already used", name);
    }
    if (m->nbody >= m->capacity) {
        return fb_fail(err, FB_ECAPACITY, "body '%s': model is full (capacity %d bodies)", name,
                       m->capacity - 1);
    }
    if (def->parent < 0 || def->parent >= m->nbody) {
        return fb_fail(err, FB_EINVAL, "body '%s': parent: expected 0..%d, found %d", name,
                       m->nbody - 1, def->parent);
    }
    if (def->joint < FB_JOINT_FIXED || def->joint > FB_JOINT_FLOATING) {
        return fb_fail(err, FB_EINVAL, "body '%s': joint: expected a joint type 0..4, found %d",
                       name, (int)def->joint);
    }
    fb_v3 axis = def->axis;
    if (def->joint == FB_JOINT_REVOLUTE || def->joint == FB_JOINT_PRISMATIC) {
        const double n = fb_v3_norm(axis);
        if (!fb_v3_is_finite(axis) || !(n > FB_AXIS_MIN_NORM)) {
            return fb_fail(err, FB_EINVAL, "body '%s': axis: expected a finite non-zero vector",
                           name);
        }
        axis = fb_v3_scale(axis, 1.0 / n);
    }
    if (!m3_is_finite(def->X_tree.E) || !fb_v3_is_finite(def->X_tree.r)) {
        return fb_fail(err, FB_EINVAL, "body '%s': X_tree: expected finite values", name);
    }
    if (!m3_is_rotation(def->X_tree.E)) {
        return fb_fail(err, FB_EINVAL, "body '%s': X_tree.E: expected a rotation matrix", name);
    }
    fb_status s = check_inertia(&def->inertia, name, err);
    if (s != FB_OK) {
        return s;
    }
    fb_joint_limit limit;
    s = check_limit(def->joint, &def->limit, name, &limit, err);
    if (s == FB_OK) {
        s = check_passive(def->joint, def->damping, "damping", name, err);
    }
    if (s == FB_OK) {
        s = check_passive(def->joint, def->friction, "friction", name, err);
    }
    if (s != FB_OK) {
        return s;
    }

    const int i = m->nbody++;
    m->parent[i] = def->parent;
    m->jtype[i] = def->joint;
    m->axis[i] = axis;
    m->X_tree[i] = def->X_tree;
    m->X_tree_rot[i] = memcmp(&def->X_tree.E, &(fb_m3){{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}},
                              sizeof(fb_m3)) != 0;
    m->I[i] = def->inertia;
    m->limit[i] = limit;
    m->damping[i] = def->damping;
    m->friction[i] = def->friction;
    strcpy(m->name[i], name);
    if (id) {
        *id = i;
    }
    return fb_ok(err);
}

fb_status fb_model_add_shape(fb_model* m, const fb_shape* sh, fb_error* err) {
    if (m->finalized) {
        return fb_fail(err, FB_ESTATE, "fb_model_add_shape: model already finalized");
    }
    if (sh->body < 0 || sh->body >= m->nbody) {
        return fb_fail(err, FB_EINVAL, "shape %d: body: expected 0..%d, found %d", m->nshape,
                       m->nbody - 1, sh->body);
    }
    const char* name = m->name[sh->body];
    if (!fb_v3_is_finite(sh->p0) || !fb_v3_is_finite(sh->p1) || !fb_v3_is_finite(sh->size) ||
        !m3_is_finite(sh->R)) {
        return fb_fail(err, FB_EINVAL, "body '%s': shape: expected finite values", name);
    }
    switch (sh->type) {
    case FB_SHAPE_SPHERE:
    case FB_SHAPE_CAPSULE:
        if (!(sh->radius > 0.0) || !isfinite(sh->radius)) {
            return fb_fail(err, FB_EINVAL, "body '%s': shape radius: expected > 0, found %g", name,
                           sh->radius);
        }
        break;
    case FB_SHAPE_BOX:
        if (!(sh->size.x > 0.0 && sh->size.y > 0.0 && sh->size.z > 0.0)) {
            return fb_fail(err, FB_EINVAL, "body '%s': box size: expected > 0", name);
        }
        if (!m3_is_rotation(sh->R)) {
            return fb_fail(err, FB_EINVAL, "body '%s': box axes: expected a rotation", name);
        }
        break;
    default:
        return fb_fail(err, FB_EINVAL, "body '%s': shape type: expected 0..2, found %d", name,
                       (int)sh->type);
    }
    if (m->nshape >= m->shape_capacity) {
        return fb_fail(err, FB_ECAPACITY, "body '%s': shape: model full (%d shapes)", name,
                       m->shape_capacity);
    }
    m->shape[m->nshape++] = *sh;
    return fb_ok(err);
}

/* The motion subspace columns of body i's joint, in child coordinates [RBDA Table 4.1]. */
static void joint_subspace(const fb_model* m, int i, fb_mv* S) {
    const fb_v3 e[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    switch (m->jtype[i]) {
    case FB_JOINT_FIXED:
        break;
    case FB_JOINT_REVOLUTE:
        S[0] = fb_mv_make(m->axis[i], fb_v3_zero());
        break;
    case FB_JOINT_PRISMATIC:
        S[0] = fb_mv_make(fb_v3_zero(), m->axis[i]);
        break;
    case FB_JOINT_SPHERICAL:
        for (int k = 0; k < 3; k++) {
            S[k] = fb_mv_make(e[k], fb_v3_zero());
        }
        break;
    case FB_JOINT_FLOATING:
        for (int k = 0; k < 3; k++) {
            S[k] = fb_mv_make(e[k], fb_v3_zero());
            S[k + 3] = fb_mv_make(fb_v3_zero(), e[k]);
        }
        break;
    }
}

fb_status fb_model_finalize(fb_model* m, fb_error* err) {
    if (m->finalized) {
        return fb_fail(err, FB_ESTATE, "fb_model_finalize: model already finalized");
    }
    int nq = 0, nv = 0;
    for (int i = 0; i < m->nbody; i++) {
        m->q_adr[i] = nq;
        m->v_adr[i] = nv;
        m->jnq[i] = fb_joint_nq(m->jtype[i]);
        m->jnv[i] = fb_joint_nv(m->jtype[i]);
        joint_subspace(m, i, m->S + nv);
        for (int k = 0; k < m->jnv[i]; k++) {
            m->dof_body[nv + k] = i;
        }
        nq += m->jnq[i];
        nv += m->jnv[i];
    }
    m->nq = nq;
    m->nv = nv;
    m->finalized = true;
    /* fb_q_neutral reads the addresses just computed */
    for (int i = 1; i < m->nbody; i++) {
        double* q = m->q_neutral + m->q_adr[i];
        for (int k = 0; k < m->jnq[i]; k++) {
            q[k] = 0.0;
        }
        if (m->jtype[i] == FB_JOINT_SPHERICAL) {
            q[0] = 1.0;
        } else if (m->jtype[i] == FB_JOINT_FLOATING) {
            q[3] = 1.0;
        }
    }
    return fb_ok(err);
}
