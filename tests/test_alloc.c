/* No heap allocation inside the dynamics calls. The test executable is linked with
 * -Wl,--wrap=malloc,calloc,realloc,free, so every allocation the library makes, through any
 * path, passes through the counters below; and a counting fb_allocator checks that the
 * library allocates only through the allocator it is given, and frees all of it. */
#include <stddef.h>
#include <stdlib.h>

#include "math/quat.h"
#include "math/vec3.h"
#include "support.h"

void* __real_malloc(size_t size);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t size);
void __real_free(void* p);
void* __wrap_malloc(size_t size);
void* __wrap_calloc(size_t n, size_t size);
void* __wrap_realloc(void* p, size_t size);
void __wrap_free(void* p);

/* volatile: the compiler knows malloc as a builtin that reads no globals and would otherwise
 * drop the stores around it */
static volatile long g_heap_calls; /* malloc/calloc/realloc/free calls while counting */
static volatile int g_counting;

void* __wrap_malloc(size_t size) {
    g_heap_calls += g_counting;
    return __real_malloc(size);
}
void* __wrap_calloc(size_t n, size_t size) {
    g_heap_calls += g_counting;
    return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t size) {
    g_heap_calls += g_counting;
    return __real_realloc(p, size);
}
void __wrap_free(void* p) {
    g_heap_calls += g_counting;
    __real_free(p);
}

typedef struct counting {
    long allocs, frees;
} counting;

static void* counting_alloc(void* ctx, size_t size) {
    ((counting*)ctx)->allocs++;
    return __real_malloc(size);
}
static void counting_free(void* ctx, void* p) {
    if (p) {
        ((counting*)ctx)->frees++;
    }
    __real_free(p);
}

START_TEST(dynamics_calls_do_not_allocate) {
    counting cnt = {0, 0};
    const fb_allocator alloc = {counting_alloc, counting_free, &cnt};
    fb_error err;
    fb_model* m = ck_model(scene_humanoid(&err), &err);
    fb_data* d = fb_data_create(m, &alloc, &err);
    ck_assert_ptr_nonnull(d);
    const long after_create = cnt.allocs;
    ck_assert_int_gt(after_create, 0); /* the data did come from the allocator it was given */
    double tau[57], J[6 * 57], C[57];
    ck_assert_int_eq(m->nv, 57);
    scene_rng r = scene_rng_make(1);
    scene_random_state(m, d, &r, 1.0, 1.0);

    /* the probe works: a malloc here is seen */
    g_counting = 1;
    void* volatile probe = malloc(16); /* volatile: the compiler may not elide the pair */
    g_counting = 0;
    free(probe);
    ck_assert_int_eq(g_heap_calls, 1);
    g_heap_calls = 0;

    g_counting = 1;
    for (int rep = 0; rep < 10; rep++) {
        fb_kinematics(m, d);
        (void)fb_momentum(m, d);
        fb_kinematics_pos(m, d);
        (void)fb_aba(m, d, NULL);
        fb_aba_phase2(m, d);
        fb_rnea(m, d, d->qdd, tau);
        fb_bias(m, d, C);
        fb_crba(m, d);
        fb_jac_point(m, d, 5, fb_v3_make(0.1, 0.0, 0.0), J);
        fb_jac_body(m, d, 5, J);
        fb_integrate(m, d->q, d->qd, 1e-3, d->q);
        fb_difference(m, d->q, d->q, d->qd);
    }
    g_counting = 0;
    ck_assert_msg(g_heap_calls == 0, "%ld heap calls inside dynamics", g_heap_calls);
    ck_assert_int_eq(cnt.allocs, after_create);

    /* the constraint pipeline: K by test forces, PGS, apply */
    const fb_model* ms[1] = {m};
    fb_data* ds[1] = {d};
    fb_csys* cs = fb_csys_create(1, ms, ds, 12, &alloc, &err);
    ck_assert_ptr_nonnull(cs);
    for (int k = 0; k < 12; k++) {
        fb_row row = fb_default_row();
        row.body = 1 + k % (m->nbody - 1);
        row.n = fb_v3_make(0.0, 1.0, 0.0);
        row.id = (uint64_t)k + 1;
        ck_assert_int_eq(fb_csys_add_row(cs, &row, &err), FB_OK);
    }
    g_counting = 1;
    for (int rep = 0; rep < 5; rep++) {
        (void)fb_aba(m, d, NULL);
        (void)fb_csys_build(cs, NULL);
        fb_csys_solve(cs, NULL);
        fb_csys_apply(cs);
    }
    g_counting = 0;
    ck_assert_msg(g_heap_calls == 0, "%ld heap calls inside the constraint solve", g_heap_calls);
    fb_csys_destroy(cs);

    fb_data_destroy(d);
    ck_assert_int_eq(cnt.frees, cnt.allocs);
    fb_model_destroy(m);
}
END_TEST

/* The world step (contacts, impacts, limits, PGS, integration, backtracking): the humanoid
 * dropped onto the ground with damped, limited joints, stepped through its landing. */
/* The benchmark humanoid with joint damping 1 N m s/rad on its ball joints and hinges. */
static fb_model* damped_humanoid(void) {
    return ck_damped_humanoid(1.0);
}

/* A world of that humanoid standing (allocated through `alloc`). */
static fb_world* standing_world(const fb_model* m, const fb_allocator* alloc) {
    fb_error err;
    fb_world* w = fb_world_create(1, &m, NULL, alloc, &err);
    ck_assert_msg(w != NULL, "%s", err.msg);
    scene_humanoid_standing(m, fb_world_data(w, 0)->q);
    return w;
}

START_TEST(world_step_does_not_allocate) {
    counting cnt = {0, 0};
    const fb_allocator alloc = {counting_alloc, counting_free, &cnt};
    fb_model* m = damped_humanoid();
    fb_world* w = standing_world(m, &alloc);
    fb_data* d = fb_world_data(w, 0);
    d->q[1] += 0.05;
    d->qd[0] = 1.0; /* tipping over */
    const long after_create = cnt.allocs;
    g_heap_calls = 0;
    g_counting = 1;
    int failed = 0; /* Check's own asserts allocate: none inside the counted loop */
    for (int k = 0; k < 400; k++) {
        failed += fb_world_step(w, NULL) != FB_OK;
    }
    g_counting = 0;
    ck_assert_int_eq(failed, 0);
    ck_assert_msg(g_heap_calls == 0, "%ld heap calls inside fb_world_step", g_heap_calls);
    ck_assert_int_eq(cnt.allocs, after_create);
    ck_assert_int_gt(fb_world_get_stats(w)->impacts, 0); /* it did land */
    fb_world_destroy(w);
    ck_assert_int_eq(cnt.frees, cnt.allocs);
    fb_model_destroy(m);
}
END_TEST

/* The same with self-collision on: every pair of the humanoid's bodies that are not parent
 * and child and do not touch standing (fb_world_set_self_collision_nonadjacent, then
 * fb_world_clear_self_collision_touching), the legs swinging into each other as it falls. */
START_TEST(world_step_with_self_collision_does_not_allocate) {
    counting cnt = {0, 0};
    const fb_allocator alloc = {counting_alloc, counting_free, &cnt};
    fb_error err;
    fb_model* m = damped_humanoid();
    fb_world* w = standing_world(m, &alloc);
    fb_data* d = fb_world_data(w, 0);
    ck_assert_int_eq(fb_world_set_self_collision_nonadjacent(w, 0, true, &err), FB_OK);
    int cleared = 0;
    ck_assert_int_eq(fb_world_clear_self_collision_touching(w, 0, &cleared, &err), FB_OK);
    ck_assert_int_gt(cleared, 0);
    d->q[1] += 0.05;
    d->qd[0] = 1.0; /* tipping over */
    const int thigh_l = fb_model_body_by_name(m, "thigh_l");
    const int thigh_r = fb_model_body_by_name(m, "thigh_r");
    ck_assert(fb_world_self_collision(w, 0, thigh_l, thigh_r));
    const int hip_l = m->v_adr[thigh_l], hip_r = m->v_adr[thigh_r];
    d->qd[hip_l + 2] = -4.0; /* the legs swing together about the forward axis */
    d->qd[hip_r + 2] = 4.0;
    const long after_create = cnt.allocs;
    g_heap_calls = 0;
    g_counting = 1;
    int failed = 0, self_contacts = 0;
    for (int k = 0; k < 400; k++) {
        failed += fb_world_step(w, NULL) != FB_OK;
        int n;
        const fb_contact* c = fb_world_contacts(w, &n);
        for (int j = 0; j < n; j++) {
            self_contacts += c[j].art_b == c[j].art_a;
        }
    }
    g_counting = 0;
    ck_assert_int_eq(failed, 0);
    ck_assert_msg(g_heap_calls == 0, "%ld heap calls inside fb_world_step", g_heap_calls);
    ck_assert_int_eq(cnt.allocs, after_create);
    ck_assert_msg(self_contacts > 0, "no self-contact in the run");
    fb_world_destroy(w);
    ck_assert_int_eq(cnt.frees, cnt.allocs);
    fb_model_destroy(m);
}
END_TEST

/* The tracking controllers run inside the step (world hook): tracking the bundled walk with
 * the accel controller and with PD (kinematic root, ground on, the feet touch it) makes no
 * heap call per step either; measuring the metrics neither; nor does a ball-hit simulation's
 * step (fb_sim_step), to the end of its clip; nor one with a free root (the balance planner,
 * then the fall) or an assisted root. */
START_TEST(tracking_step_does_not_allocate) {
    fb_error err;
    fb_clip* clip = fb_clip_load(FB_DATA_DIR "/131_01.bvh", NULL, NULL, &err);
    ck_assert_msg(clip != NULL, "%s", err.msg);
    static fb_rules rules;
    ck_assert_int_eq(fb_rules_load(FB_DATA_DIR "/character_rules.json", &rules, &err), FB_OK);
    fb_build_opts bo = fb_default_build_opts();
    bo.rules = &rules;
    fb_character* ch = fb_character_build(clip, &bo, &err);
    ck_assert_msg(ch != NULL, "%s", err.msg);
    fb_ref* r = fb_ref_from_clip(clip, ch, 240.0, 100, 300, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    for (int mode = 0; mode < 2; mode++) {
        fb_gains g;
        ck_assert_int_eq(fb_gains_init(ch->model, r, &g, &err), FB_OK);
        g.controller = mode == 0 ? FB_CTRL_ACCEL : FB_CTRL_PD;
        g.root.mode = FB_ROOT_KINEMATIC;
        fb_world_opts wo = fb_default_world_opts();
        wo.dt = mode == 0 ? 1.0 / 240.0 : 1.0 / 480.0; /* the rates each is made for */
        const fb_model* m = ch->model;
        fb_world* w = fb_world_create(1, &m, &wo, NULL, &err);
        fb_tracker* tr = fb_tracker_create(w, 0, r, &g, ch->joint_of_body, &err);
        ck_assert_msg(tr != NULL, "%s", err.msg);
        fb_track_metrics mt;
        g_heap_calls = 0;
        g_counting = 1;
        int failed = 0;
        for (int k = 0; k < 200; k++) {
            failed += fb_world_step(w, NULL) != FB_OK;
            fb_tracker_measure(tr, &mt, NULL);
        }
        g_counting = 0;
        ck_assert_int_eq(failed, 0);
        ck_assert_msg(g_heap_calls == 0, "%ld heap calls while tracking (mode %d)", g_heap_calls,
                      mode);
        fb_tracker_destroy(tr);
        fb_world_destroy(w);
    }
    fb_ref_destroy(r);
    /* a ball-hit simulation: launches, contacts with the ball, recording, and the hits'
     * results computed when the clip ends */
    fb_hit h;
    ck_assert_int_eq(fb_hit_parse("time=0.5,target=LeftElbow", &h, &err), FB_OK);
    fb_ref* r2 = fb_ref_from_clip(clip, ch, 240.0, 100, 220, NULL, &err);
    fb_gains g;
    ck_assert_int_eq(fb_gains_init(ch->model, r2, &g, &err), FB_OK);
    fb_ref_destroy(r2);
    fb_sim_opts so = fb_default_sim_opts();
    so.first = 100;
    so.last = 220;
    fb_sim* sim = fb_sim_create(clip, ch, &g, &h, 1, &so, &err);
    ck_assert_msg(sim != NULL, "%s", err.msg);
    g_heap_calls = 0;
    g_counting = 1;
    int failed = 0;
    while (!fb_sim_done(sim) && failed == 0) {
        failed += fb_sim_step(sim, NULL) != FB_OK;
    }
    g_counting = 0;
    ck_assert_int_eq(failed, 0);
    ck_assert(fb_sim_hits(sim)[0].touched);
    ck_assert_msg(g_heap_calls == 0, "%ld heap calls in a ball-hit simulation", g_heap_calls);
    fb_sim_destroy(sim);
    /* the free root (the balance planner every substep, then the fall and the fallen body's
     * damping: the first 1.5 s of 131_01, within which it falls, asserted below) and the assisted root, from the clip's start */
    const fb_root_mode roots[2] = {FB_ROOT_FREE, FB_ROOT_ASSISTED};
    for (int k = 0; k < 2; k++) {
        fb_gains gr = g;
        gr.root.mode = roots[k];
        fb_sim_opts sr = fb_default_sim_opts();
        sr.last = 180; /* 1.5 s */
        fb_sim* s2 = fb_sim_create(clip, ch, &gr, NULL, 0, &sr, &err);
        ck_assert_msg(s2 != NULL, "%s", err.msg);
        g_heap_calls = 0;
        g_counting = 1;
        failed = 0;
        while (!fb_sim_done(s2) && failed == 0) {
            failed += fb_sim_step(s2, NULL) != FB_OK;
        }
        g_counting = 0;
        ck_assert_int_eq(failed, 0);
        ck_assert_msg(g_heap_calls == 0, "%ld heap calls with the %s root", g_heap_calls,
                      k == 0 ? "free" : "assisted");
        if (k == 0) {
            ck_assert_msg(fb_tracker_fall(fb_sim_tracker(s2)).cause != FB_FALL_NONE,
                          "the free root did not fall: the fallen phase went untested");
        }
        fb_sim_destroy(s2);
    }
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
}
END_TEST

/* Sleeping: the humanoid lands and falls asleep, a ball thrown at it wakes it (its contacts
 * made again within the substep), and it is stepped on; no heap call from start to end. */
START_TEST(sleeping_and_waking_do_not_allocate) {
    counting cnt = {0, 0};
    const fb_allocator alloc = {counting_alloc, counting_free, &cnt};
    fb_error err;
    fb_model* m = damped_humanoid();
    fb_model* ball = ck_free_body(ck_shape_sphere(0.11), 1000.0); /* 5.6 kg */
    ck_assert_int_eq(fb_model_set_gravity(ball, fb_v3_zero(), &err), FB_OK);
    const fb_model* ms[2] = {m, ball};
    fb_world_opts o = fb_default_world_opts();
    o.dt = 1.0 / 240.0;
    fb_world* w = fb_world_create(2, ms, &o, &alloc, &err);
    ck_assert_msg(w != NULL, "%s", err.msg);
    fb_data* d = fb_world_data(w, 0);
    fb_data* db = fb_world_data(w, 1);
    scene_humanoid_standing(m, d->q);
    d->q[1] += 0.05;
    d->qd[0] = 1.0; /* tipping over */
    ck_place(db, fb_v3_make(0.0, 10.0, 0.0), fb_quat_identity()); /* parked, floating */
    ck_assert_int_eq(fb_world_set_sleep(w, 0, true, &err), FB_OK);
    const long after_create = cnt.allocs;
    g_heap_calls = 0;
    g_counting = 1;
    int failed = 0;
    for (int k = 0; k < 6 * 240 && !fb_world_asleep(w, 0); k++) {
        failed += fb_world_step(w, NULL) != FB_OK;
    }
    const bool slept = fb_world_asleep(w, 0);
    fb_kinematics_pos(m, d);
    ck_place(db, fb_v3_add(fb_point_pos(m, d, 1, fb_v3_zero()), fb_v3_make(0.0, 0.45, 0.0)),
             fb_quat_identity());
    db->qd[4] = -6.0;
    for (int k = 0; k < 120; k++) {
        failed += fb_world_step(w, NULL) != FB_OK;
    }
    g_counting = 0;
    ck_assert_int_eq(failed, 0);
    ck_assert(slept);
    ck_assert_int_eq(fb_world_get_stats(w)->wakeups, 1);
    ck_assert_msg(g_heap_calls == 0, "%ld heap calls while sleeping and waking", g_heap_calls);
    ck_assert_int_eq(cnt.allocs, after_create);
    fb_world_destroy(w);
    ck_assert_int_eq(cnt.frees, cnt.allocs);
    fb_model_destroy(ball);
    fb_model_destroy(m);
}
END_TEST

static Suite* alloc_suite(void) {
    Suite* s = suite_create("alloc");
    TCase* tc = tcase_create("alloc");
    tcase_add_test(tc, dynamics_calls_do_not_allocate);
    tcase_add_test(tc, world_step_does_not_allocate);
    tcase_add_test(tc, world_step_with_self_collision_does_not_allocate);
    tcase_add_test(tc, tracking_step_does_not_allocate);
    tcase_add_test(tc, sleeping_and_waking_do_not_allocate);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(alloc_suite());
}
