/* Test helpers (see support.h). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, popen */
#include "support.h"

#include <dirent.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "math/quat.h"
#include "math/spatial.h"

double ck_rel_diff(const double* a, const double* b, int n, double floor) {
    double diff = 0.0, scale = floor;
    for (int k = 0; k < n; k++) {
        diff = fmax(diff, fabs(a[k] - b[k]));
        scale = fmax(scale, fabs(b[k]));
    }
    return diff / scale;
}

int ck_run_suite(Suite* s) {
    SRunner* sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

fb_model* ck_model(fb_model* m, const fb_error* err) {
    ck_assert_msg(m != NULL, "model: %s", err->msg);
    return m;
}

fb_data* ck_data(const fb_model* m) {
    fb_error err;
    fb_data* d = fb_data_create(m, NULL, &err);
    ck_assert_msg(d != NULL, "data: %s", err.msg);
    return d;
}

void ck_random_trees(ck_tree_check check) {
    for (uint64_t seed = 1; seed <= 10; seed++) {
        fb_error err;
        fb_model* m = ck_model(scene_random_tree(seed * 31u, 30, &err), &err);
        char label[32];
        snprintf(label, sizeof label, "random tree %llu", (unsigned long long)seed);
        check(label, m, seed);
        fb_model_destroy(m);
    }
}

fb_shape ck_shape_sphere(double r) {
    fb_shape s;
    memset(&s, 0, sizeof s);
    s.type = FB_SHAPE_SPHERE;
    s.radius = r;
    s.R = fb_m3_identity();
    return s;
}

fb_shape ck_shape_capsule(double r, fb_v3 p0, fb_v3 p1) {
    fb_shape s = ck_shape_sphere(r);
    s.type = FB_SHAPE_CAPSULE;
    s.p0 = p0;
    s.p1 = p1;
    return s;
}

fb_shape ck_shape_box(fb_v3 size) {
    fb_shape s = ck_shape_sphere(1.0);
    s.type = FB_SHAPE_BOX;
    s.size = size;
    return s;
}

fb_model* ck_free_body(fb_shape sh, double rho) {
    fb_error err;
    fb_model* m = ck_model(fb_model_create(1, NULL, &err), &err);
    fb_body_def def = fb_default_body_def();
    def.name = "body";
    def.joint = FB_JOINT_FLOATING;
    def.inertia = sh.type == FB_SHAPE_BOX       ? fb_rbi_box(rho, sh.size, sh.p0)
                  : sh.type == FB_SHAPE_CAPSULE ? fb_rbi_capsule(rho, sh.radius, sh.p0, sh.p1)
                                                : fb_rbi_sphere(rho, sh.radius, sh.p0);
    ck_assert_msg(fb_model_add_body(m, &def, &sh.body, &err) == FB_OK, "%s", err.msg);
    ck_assert_msg(fb_model_add_shape(m, &sh, &err) == FB_OK, "%s", err.msg);
    ck_assert_msg(fb_model_finalize(m, &err) == FB_OK, "%s", err.msg);
    return m;
}

void ck_place(fb_data* d, fb_v3 p, fb_quat q) {
    d->q[0] = p.x;
    d->q[1] = p.y;
    d->q[2] = p.z;
    fb_quat_store(d->q + 3, q);
    memset(d->qd, 0, 6 * sizeof(double));
}

/* Jr^-1(psi) w = w + psi x w / 2 + k psi x (psi x w), k = 1/th^2 - (1 + cos th)/(2 th sin th)
 * (-> 1/12 as th -> 0): the rate of the rotation vector psi of a rotation exp(psi) whose body
 * angular velocity is w. */
static fb_v3 dexpinv(fb_v3 psi, fb_v3 w) {
    const double th = fb_v3_norm(psi);
    const double k = (th < 1e-4) ? 1.0 / 12.0 + th * th / 720.0
                                 : 1.0 / (th * th) - (1.0 + cos(th)) / (2.0 * th * sin(th));
    const fb_v3 pw = fb_v3_cross(psi, w);
    return fb_v3_add(fb_v3_axpy(w, 0.5, pw), fb_v3_scale(fb_v3_cross(psi, pw), k));
}

/* xi' (local-coordinate rate) from the velocity qd at local coordinates xi. */
static void local_rate(const fb_model* m, const double* xi, const double* qd, double* rate) {
    for (int i = 1; i < m->nbody; i++) {
        const int k = m->v_adr[i];
        switch (m->jtype[i]) {
        case FB_JOINT_FIXED:
            break;
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC:
            rate[k] = qd[k];
            break;
        case FB_JOINT_SPHERICAL:
        case FB_JOINT_FLOATING: {
            const fb_v3 psi = {xi[k], xi[k + 1], xi[k + 2]};
            const fb_v3 r = dexpinv(psi, fb_v3_make(qd[k], qd[k + 1], qd[k + 2]));
            rate[k] = r.x;
            rate[k + 1] = r.y;
            rate[k + 2] = r.z;
            if (m->jtype[i] == FB_JOINT_FLOATING) {
                /* retract moves p by R(q0) delta, and p' = R(q) v = R(q0) exp(psi) v */
                const fb_v3 dv = fb_quat_rotate(fb_quat_exp(psi),
                                                fb_v3_make(qd[k + 3], qd[k + 4], qd[k + 5]));
                rate[k + 3] = dv.x;
                rate[k + 4] = dv.y;
                rate[k + 5] = dv.z;
            }
            break;
        }
        }
    }
}

/* q = q0 (+) xi in the local coordinates local_rate uses, written here rather than taken from
 * fb_integrate (whose floating convention is the simulator's): scalar joints add, a ball
 * joint's quaternion times exp(psi), a floating joint's too and its position p0 + R(q0) delta. */
static void retract(const fb_model* m, const double* q0, const double* xi, double* q) {
    for (int i = 1; i < m->nbody; i++) {
        const double* a = q0 + m->q_adr[i];
        const double* x = xi + m->v_adr[i];
        double* o = q + m->q_adr[i];
        switch (m->jtype[i]) {
        case FB_JOINT_FIXED:
            break;
        case FB_JOINT_REVOLUTE:
        case FB_JOINT_PRISMATIC:
            o[0] = a[0] + x[0];
            break;
        case FB_JOINT_SPHERICAL:
        case FB_JOINT_FLOATING: {
            const int qo = m->jtype[i] == FB_JOINT_FLOATING ? 3 : 0;
            const fb_quat r0 = fb_quat_load(a + qo);
            if (qo == 3) {
                const fb_v3 dp = fb_quat_rotate(r0, fb_v3_make(x[3], x[4], x[5]));
                o[0] = a[0] + dp.x;
                o[1] = a[1] + dp.y;
                o[2] = a[2] + dp.z;
            }
            const fb_quat r = fb_quat_exp(fb_v3_make(x[0], x[1], x[2]));
            fb_quat_store(o + qo, fb_quat_normalize(fb_quat_mul(r0, r)));
            break;
        }
        }
    }
}

void ck_rk4_step(const fb_model* m, fb_data* d, double dt) {
    const int nq = m->nq, nv = m->nv;
    const size_t vb = (size_t)nv * sizeof(double) + 1, qb = (size_t)nq * sizeof(double) + 1;
    double* q0 = malloc(qb);
    double* qd0 = malloc(vb);
    double* xi = malloc(vb);
    double* k_xi = malloc(4 * vb);
    double* k_qd = malloc(4 * vb);
    ck_assert(q0 && qd0 && xi && k_xi && k_qd);
    memcpy(q0, d->q, (size_t)nq * sizeof(double));
    memcpy(qd0, d->qd, (size_t)nv * sizeof(double));
    static const double stage_c[4] = {0.0, 0.5, 0.5, 1.0};
    static const double weight[4] = {1.0 / 6.0, 2.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0};
    fb_error err;
    for (int s = 0; s < 4; s++) {
        /* stage state: xi = c dt k_{s-1}, qd = qd0 + c dt a_{s-1} */
        for (int k = 0; k < nv; k++) {
            xi[k] = (s == 0) ? 0.0 : stage_c[s] * dt * k_xi[(s - 1) * nv + k];
            d->qd[k] = (s == 0) ? qd0[k] : qd0[k] + stage_c[s] * dt * k_qd[(s - 1) * nv + k];
        }
        retract(m, q0, xi, d->q);
        ck_assert_msg(fb_aba(m, d, &err) == FB_OK, "%s", err.msg);
        local_rate(m, xi, d->qd, k_xi + s * nv);
        memcpy(k_qd + s * nv, d->qdd, (size_t)nv * sizeof(double));
    }
    for (int k = 0; k < nv; k++) {
        double dxi = 0.0, dqd = 0.0;
        for (int s = 0; s < 4; s++) {
            dxi += weight[s] * k_xi[s * nv + k];
            dqd += weight[s] * k_qd[s * nv + k];
        }
        xi[k] = dt * dxi;
        d->qd[k] = qd0[k] + dt * dqd;
    }
    retract(m, q0, xi, d->q);
    d->time += dt;
    free(q0);
    free(qd0);
    free(xi);
    free(k_xi);
    free(k_qd);
}

fb_model* ck_damped_humanoid(double b) {
    fb_error err;
    fb_model* m = ck_model(scene_humanoid(&err), &err);
    for (int i = 1; i < m->nbody; i++) {
        if (m->jtype[i] == FB_JOINT_SPHERICAL || m->jtype[i] == FB_JOINT_REVOLUTE) {
            ck_assert_int_eq(fb_model_set_damping(m, i, b, &err), FB_OK);
        }
    }
    return m;
}

void ck_load_character(const char* clip_path, const char* rules_path, fb_clip** clip,
                       fb_character** ch) {
    fb_error err;
    *clip = fb_clip_load(clip_path, NULL, NULL, &err);
    ck_assert_msg(*clip != NULL, "%s", err.msg);
    fb_rules* rules = malloc(sizeof *rules); /* large; only read while building */
    ck_assert_ptr_nonnull(rules);
    ck_assert_msg(fb_rules_load(rules_path, rules, &err) == FB_OK, "%s", err.msg);
    fb_build_opts bo = fb_default_build_opts();
    bo.rules = rules;
    *ch = fb_character_build(*clip, &bo, &err);
    free(rules);
    ck_assert_msg(*ch != NULL, "%s", err.msg);
}

long ck_same_file(const char* a, const char* b) {
    FILE* fa = fopen(a, "rb");
    FILE* fb = fopen(b, "rb");
    ck_assert_msg(fa && fb, "cannot open %s or %s", a, b);
    long bytes = 0;
    for (int ca = fgetc(fa), cb = fgetc(fb);; ca = fgetc(fa), cb = fgetc(fb), bytes++) {
        ck_assert_msg(ca == cb, "%s and %s differ at byte %ld", a, b, bytes);
        if (ca == EOF) {
            break;
        }
    }
    fclose(fa);
    fclose(fb);
    return bytes;
}

void ck_tmpdir(char* dir, size_t cap, const char* name) {
    const int n = snprintf(dir, cap, "/tmp/fb_%s_XXXXXX", name);
    ck_assert_msg(n > 0 && (size_t)n < cap, "ck_tmpdir: %s: the name does not fit", name);
    ck_assert_msg(mkdtemp(dir) != NULL, "cannot make a directory like %s", dir);
}

int ck_run(const char* program, const char* args, char* out, size_t cap) {
    char cmd[4096];
    const int n = snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", program, args);
    ck_assert_msg(n > 0 && (size_t)n < sizeof cmd, "ck_run: the command does not fit");
    FILE* p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    const size_t got = fread(out, 1, cap - 1, p);
    out[got] = '\0';
    const int status = pclose(p);
    ck_assert_msg(WIFEXITED(status), "%s did not exit", program);
    return WEXITSTATUS(status);
}

int ck_count_entries(const char* dir) {
    DIR* d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int n = 0;
    for (struct dirent* e; (e = readdir(d));) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n;
}

void ck_remove_dir(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) {
        return;
    }
    for (struct dirent* e; (e = readdir(d));) {
        if (e->d_name[0] != '.') {
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

void ck_write_text(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

char* ck_slurp(const char* path) {
    FILE* f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

void ck_well_formed(const char* path) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", path);
    const int rc = system(cmd);
    ck_assert_msg(rc != -1 && WEXITSTATUS(rc) != 127,
                  "xmllint not found: install libxml2-utils (scripts/deps.sh)");
    ck_assert_msg(rc == 0, "xmllint rejects %s (exit %d)", path, WEXITSTATUS(rc));
}

/* The elliptic swing's g computed another way than the library: the angle by acos, its
 * direction from d0 x b normalised, the quadrant's radii; and its gradient in (s1, s2). */
double ck_swing_g(const fb_joint_limit* L, fb_quat q, double G[2]) {
    const fb_v3 b = fb_quat_rotate(q, L->twist_axis);
    const double th = acos(fmax(-1.0, fmin(1.0, fb_v3_dot(L->neutral, b))));
    const fb_v3 k = fb_v3_cross(L->neutral, b);
    if (!(fb_v3_norm(k) > 1e-12)) {
        G[0] = G[1] = 0.0;
        return fb_v3_dot(L->neutral, b) > 0.0 ? 0.0 : NAN; /* at the neutral: inside */
    }
    const fb_v3 ku = fb_v3_scale(k, 1.0 / fb_v3_norm(k));
    const fb_v3 u2 = fb_v3_cross(L->neutral, L->swing_axis);
    const double s1 = th * fb_v3_dot(ku, L->swing_axis), s2 = th * fb_v3_dot(ku, u2);
    const double r1 = s1 >= 0.0 ? L->swing_hi[0] : -L->swing_lo[0];
    const double r2 = s2 >= 0.0 ? L->swing_hi[1] : -L->swing_lo[1];
    const double g = sqrt((s1 / r1) * (s1 / r1) + (s2 / r2) * (s2 / r2));
    G[0] = s1 / (r1 * r1 * g);
    G[1] = s2 / (r2 * r2 * g);
    return g;
}
