/* What featherbone-view shows, without a window (viewer/source.h; docs/VIEWER.md):
 *   the simulation source plays the bundled walk; a ball thrown at the forearm from the eye
 *     strikes it, the HUD line reports the deviation and the return within 2 cm;
 *   going back in time replays: the pose before the throw and the pose after it are, bit for
 *     bit, those of the first pass;
 *   the take exported (E) holds the thrown hit, and its BVH is, byte for byte, what the
 *     library's simulation of the exported hits writes (what `featherbone simulate --hits`
 *     runs);
 *   the gains file is watched: a file that does not read leaves the previous gains in force
 *     and says so, a good one restarts the take with it at the same time, a deleted one is
 *     reported once;
 *   clip playback refuses balls and exports with a reason. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "featherbone/featherbone.h"
#include "source.h"
#include "support.h"

#define CLIP FB_DATA_DIR "/131_01.bvh"

static source* open_source(const char* gains, bool playback) {
    source_opts o = {.clip = CLIP, .gains = gains, .playback = playback};
    fb_error err = {0};
    source* s = source_open(&o, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    return s;
}

static void advance(source* s, double t) {
    fb_error err = {0};
    ck_assert_msg(source_advance_to(s, t, &err) == FB_OK, "%s", err.msg);
    ck_assert_msg(fabs(source_get_view(s)->time - t) < 0.003, "at %.4f s, asked %.4f s",
                  source_get_view(s)->time, t);
}

static double* copy_q(const source* s) {
    const source_view* v = source_get_view(s);
    double* q = malloc((size_t)v->model->nq * sizeof(double));
    ck_assert_ptr_nonnull(q);
    memcpy(q, v->data->q, (size_t)v->model->nq * sizeof(double));
    return q;
}

static void same_q(const source* s, const double* q, const char* when) {
    const source_view* v = source_get_view(s);
    ck_assert_msg(memcmp(v->data->q, q, (size_t)v->model->nq * sizeof(double)) == 0,
                  "the replayed pose %s differs from the first pass's", when);
}

/* A throw at the centre of mass of the body `name` drives, from 2 m in front and a little
 * above. */
static bool throw_at(source* s, const char* name, char* msg, size_t cap) {
    const source_view* v = source_get_view(s);
    const int b = fb_model_body_by_name(v->model, name);
    ck_assert_int_gt(b, 0);
    const double m = v->model->I[b].m;
    const fb_v3 com = {v->model->I[b].h.x / m, v->model->I[b].h.y / m, v->model->I[b].h.z / m};
    const fb_v3 p = fb_point_pos(v->model, v->data, b, com);
    const source_throw_spec t = {.body = b,
                                 .point = p,
                                 .eye = {p.x + 0.4, p.y + 0.5, p.z + 1.9},
                                 .speed = 10.0,
                                 .mass = 0.45,
                                 .radius = 0.11};
    return source_throw(s, &t, msg, cap);
}

START_TEST(a_thrown_ball_strikes_and_replays_bit_for_bit) {
    source* s = open_source(NULL, false);
    char msg[256];
    advance(s, 1.0);
    double* q_throw = copy_q(s);
    ck_assert_msg(throw_at(s, "LeftElbow", msg, sizeof msg), "%s", msg);
    ck_assert_msg(strstr(msg, "threw") && strstr(msg, "LeftElbow"), "%s", msg);
    advance(s, 2.5);
    const source_view* v = source_get_view(s);
    printf("after the throw: %s\n", v->line[1]);
    double peak = 0.0;
    ck_assert_msg(sscanf(strstr(v->line[1], "s, ") + 3, "%lf cm off", &peak) == 1, "%s",
                  v->line[1]);
    ck_assert_msg(peak >= 5.0, "the forearm moved %.2f cm", peak);
    ck_assert_msg(strstr(v->line[1], "back within 2 cm in"), "%s", v->line[1]);
    double* q_after = copy_q(s);
    /* back before the throw, then to the same time after it: a replay from the start */
    advance(s, 1.0);
    same_q(s, q_throw, "at the throw");
    advance(s, 2.5);
    same_q(s, q_after, "1.5 s after the throw");

    /* the take: exported, read back, simulated by the library as `simulate --hits` does */
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "viewsrc");
    char prefix[256], path[300];
    snprintf(prefix, sizeof prefix, "%s/take", dir);
    ck_assert_msg(source_export(s, prefix, msg, sizeof msg), "%s", msg);
    fb_hit hits[FB_SIM_MAX_BALLS];
    int n = 0;
    fb_error err;
    snprintf(path, sizeof path, "%s.hits.json", prefix);
    ck_assert_msg(fb_hits_load(path, hits, FB_SIM_MAX_BALLS, &n, &err) == FB_OK, "%s", err.msg);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(hits[0].target, "LeftElbow");
    ck_assert_int_eq(hits[0].from, FB_FROM_VECTOR);
    fb_clip* clip;
    fb_character* ch;
    ck_load_character(CLIP, FB_DATA_DIR "/character_rules.json", &clip, &ch);
    fb_ref* ref = fb_ref_from_clip(clip, ch, 240.0, 0, 0, NULL, &err);
    ck_assert_msg(ref != NULL, "%s", err.msg);
    fb_gains g;
    ck_assert_int_eq(fb_gains_init(ch->model, ref, &g, &err), FB_OK);
    fb_ref_destroy(ref);
    fb_sim* sim = fb_sim_create(clip, ch, &g, hits, n, NULL, &err);
    ck_assert_msg(sim != NULL, "%s", err.msg);
    ck_assert_int_eq(fb_sim_run(sim, NULL, NULL, &err), FB_OK);
    fb_motion* mo = fb_sim_motion(sim, &err);
    snprintf(path, sizeof path, "%s/library.bvh", dir);
    ck_assert_int_eq(fb_motion_write_bvh(clip, ch, mo, 1.0, path, &err), FB_OK);
    char exported[300];
    snprintf(exported, sizeof exported, "%s.bvh", prefix);
    ck_assert_int_gt(ck_same_file(exported, path), 100000);
    fb_motion_destroy(mo);
    fb_sim_destroy(sim);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);

    /* Backspace: the thrown ball is forgotten, the take starts again */
    source_clear_throws(s, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "cleared 1 thrown ball"), "%s", msg);
    ck_assert_double_eq(source_get_view(s)->time, 0.0);
    advance(s, 2.5);
    ck_assert_msg(strstr(source_get_view(s)->line[1], "no hits"), "%s",
                  source_get_view(s)->line[1]);
    /* too late in the clip for a ball to arrive */
    advance(s, source_get_info(s)->duration - 0.05);
    ck_assert(!throw_at(s, "Head", msg, sizeof msg));
    ck_assert_msg(strstr(msg, "too late"), "%s", msg);

    for (const char* ext[] = {".bvh", ".balls.json", ".hits.json"}, **e = ext; e < ext + 3;
         e++) {
        snprintf(path, sizeof path, "%s%s", prefix, *e);
        ck_assert_int_eq(unlink(path), 0);
    }
    snprintf(path, sizeof path, "%s/library.bvh", dir);
    unlink(path);
    rmdir(dir);
    free(q_throw);
    free(q_after);
    source_close(s);
}
END_TEST

START_TEST(the_gains_file_is_watched) {
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "viewgains");
    char path[300];
    snprintf(path, sizeof path, "%s/gains.json", dir);
    /* the gains of gains init, as a file */
    fb_clip* clip;
    fb_character* ch;
    ck_load_character(CLIP, FB_DATA_DIR "/character_rules.json", &clip, &ch);
    fb_error err;
    fb_ref* ref = fb_ref_from_clip(clip, ch, 240.0, 0, 0, NULL, &err);
    ck_assert_msg(ref != NULL, "%s", err.msg);
    fb_gains g;
    ck_assert_int_eq(fb_gains_init(ch->model, ref, &g, &err), FB_OK);
    ck_assert_int_eq(fb_gains_save(&g, path, &err), FB_OK);

    source* s = open_source(path, false);
    const source_view* v = source_get_view(s);
    ck_assert_msg(strstr(v->line[0], "accel"), "%s", v->line[0]);
    ck_assert(!source_poll(s)); /* unchanged */
    advance(s, 0.5);
    /* a file that does not read: the previous gains stay */
    ck_write_text(path, "{\"controller\": \"accel\",\n \"rate\": -3}\n");
    ck_assert(source_poll(s));
    ck_assert_msg(strstr(v->line[2], "NOT reloaded") && strstr(v->line[2], "rate"), "%s",
                  v->line[2]);
    ck_assert_msg(strstr(v->line[0], "accel"), "%s", v->line[0]);
    ck_assert(!source_poll(s));
    advance(s, 0.8);
    /* a good one: the take restarts with it and is replayed to where it was */
    g.controller = FB_CTRL_PD;
    g.rate = 480.0;
    ck_assert_int_eq(fb_gains_save(&g, path, &err), FB_OK);
    ck_assert(source_poll(s));
    v = source_get_view(s);
    ck_assert_msg(strstr(v->line[2], "reloaded") && !strstr(v->line[2], "NOT"), "%s",
                  v->line[2]);
    ck_assert_msg(strstr(v->line[0], "480 Hz, pd"), "%s", v->line[0]);
    ck_assert_msg(fabs(v->time - 0.8) < 0.003, "at %.4f s after the reload", v->time);
    advance(s, 1.5);
    /* deleted: said once */
    ck_assert_int_eq(unlink(path), 0);
    ck_assert(source_poll(s));
    ck_assert_msg(strstr(v->line[2], "cannot read"), "%s", v->line[2]);
    ck_assert(!source_poll(s));
    advance(s, 2.0);
    source_close(s);
    fb_ref_destroy(ref);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    rmdir(dir);
}
END_TEST

START_TEST(playback_refuses_balls_and_exports) {
    source* s = open_source(NULL, true);
    char msg[256];
    advance(s, 1.0);
    ck_assert(!throw_at(s, "LeftElbow", msg, sizeof msg));
    ck_assert_msg(strstr(msg, "no physics"), "%s", msg);
    ck_assert(!source_export(s, "/tmp/never", msg, sizeof msg));
    ck_assert_msg(strstr(msg, "nothing simulated"), "%s", msg);
    ck_assert(!source_poll(s));
    source_close(s);
}
END_TEST

START_TEST(bad_inputs_are_refused) {
    fb_error err = {0};
    source_opts o = {.clip = FB_DATA_DIR "/missing.bvh"};
    ck_assert_ptr_null(source_open(&o, &err));
    ck_assert_int_eq(err.code, FB_EIO);
    o = (source_opts){.clip = CLIP, .gains = "/nonexistent/gains.json"};
    ck_assert_ptr_null(source_open(&o, &err));
    ck_assert_msg(strstr(err.msg, "/nonexistent/gains.json"), "%s", err.msg);
    fb_hit h;
    ck_assert_int_eq(fb_hit_parse("time=1.2,target=Tail", &h, &err), FB_OK);
    o = (source_opts){.clip = CLIP, .hit = &h, .nhit = 1};
    ck_assert_ptr_null(source_open(&o, &err));
    ck_assert_msg(err.code == FB_EINVAL && strstr(err.msg, "Tail"), "%s", err.msg);
}
END_TEST

static Suite* suite(void) {
    Suite* s = suite_create("viewer_source");
    TCase* tc = tcase_create("sim");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, a_thrown_ball_strikes_and_replays_bit_for_bit);
    tcase_add_test(tc, the_gains_file_is_watched);
    tcase_add_test(tc, playback_refuses_balls_and_exports);
    tcase_add_test(tc, bad_inputs_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(suite());
}
