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
 *   clip playback refuses balls and exports with a reason;
 *   the balance overlay: the centre of mass, a free root's support polygon (its margin against
 *     the planner's), the HUD's "FALLEN at" once fallen, an assisted root's help at its root;
 *   the gains editor (viewer/gains_edit.c, the panel's path): an edit of one joint changes
 *     exactly that gain, checked against gains resolved here by hand from the rules; a glob
 *     edits a group, mirror its twin; a rule overridden later is moved last or, when that
 *     would change other gains, the edit is refused; bad values are refused and change
 *     nothing; undo returns to the saved bytes; a file changed on disk under unsaved edits
 *     waits until told which wins. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, fnmatch */
#include <fnmatch.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "featherbone/featherbone.h"
#include "gains_edit.h"
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
    snprintf(path, sizeof path, "%s/library.bvh", dir);
    ck_assert_int_eq(fb_sim_write_bvh(sim, path, &err), FB_OK);
    char exported[300];
    snprintf(exported, sizeof exported, "%s.bvh", prefix);
    ck_assert_int_gt(ck_same_file(exported, path), 100000);
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

/* The gains of gains init written to path; returns them as the file reads back (cJSON writes
 * 15 significant digits when they read back within a rounding error, so a number may come
 * back one bit off the one written). */
static fb_gains init_file(const char* path) {
    fb_clip* clip;
    fb_character* ch;
    ck_load_character(CLIP, FB_DATA_DIR "/character_rules.json", &clip, &ch);
    fb_error err;
    fb_ref* ref = fb_ref_from_clip(clip, ch, 240.0, 0, 0, NULL, &err);
    ck_assert_msg(ref != NULL, "%s", err.msg);
    fb_gains g;
    ck_assert_int_eq(fb_gains_init(ch->model, ref, &g, &err), FB_OK);
    ck_assert_int_eq(fb_gains_save(&g, path, &err), FB_OK);
    ck_assert_int_eq(fb_gains_load(path, &g, &err), FB_OK);
    fb_ref_destroy(ref);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    return g;
}

/* With an assisted root, which leaves the clip's path, the HUD's deviation is the struck
 * point's in the root's axes (fb_sim_frame_hit_err_root), not the world's. */
START_TEST(an_assisted_roots_hit_is_shown_root_relative) {
    source* s = open_source(NULL, false);
    char msg[256];
    fb_gains g = *source_gains(s);
    g.root.mode = FB_ROOT_ASSISTED;
    ck_assert_msg(source_set_gains(s, &g, msg, sizeof msg), "%s", msg);
    advance(s, 1.0);
    ck_assert_msg(throw_at(s, "Chest", msg, sizeof msg), "%s", msg);
    advance(s, 2.5);
    const char* line = source_get_view(s)->line[1];
    printf("assisted root, after the throw: %s\n", line);
    double shown = 0.0;
    ck_assert_msg(sscanf(strstr(line, "s, ") + 3, "%lf cm off root-relative", &shown) == 1 &&
                      strstr(line, "cm off root-relative"),
                  "%s", line);
    const fb_sim* sim = source_sim(s);
    const fb_hit_result* r = &fb_sim_hits(sim)[fb_sim_nball(sim) - 1];
    ck_assert(r->touched);
    int nf = 0;
    const fb_sim_frame* fr = fb_sim_frames(sim, &nf);
    const int k = fb_sim_nball(sim) - 1;
    double root = 0.0, world = 0.0;
    for (int f = 0; f < nf; f++) {
        if (fr[f].time >= r->contact_time && fr[f].time <= r->contact_time + 1.0) {
            root = fmax(root, fb_sim_frame_hit_err_root(sim, f)[k]);
            world = fmax(world, fb_sim_frame_hit_err(sim, f)[k]);
        }
    }
    printf("root-relative peak %.2f cm, world %.2f cm, shown %.1f cm\n", 100.0 * root,
           100.0 * world, shown);
    ck_assert_double_eq_tol(shown, 100.0 * root, 0.051);
    ck_assert_double_gt(fabs(world - root), 0.005); /* the world's would not pass */
    source_close(s);
}
END_TEST

START_TEST(the_gains_file_is_watched) {
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "viewgains");
    char path[300];
    snprintf(path, sizeof path, "%s/gains.json", dir);
    fb_gains g = init_file(path); /* the gains of gains init, as a file */
    fb_error err;

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

/* Distance (m) from q to the boundary of the counter-clockwise polygon h on the ground, seen
 * from above; negative outside: computed here, apart from the planner's margin (balance.c), to
 * hold the polygon the overlay draws against it. */
static double margin_in(const fb_v3* h, int n, fb_v3 q) {
    double best = INFINITY;
    bool inside = true;
    for (int i = 0; i < n; i++) {
        const fb_v3 a = h[i], b = h[(i + 1) % n];
        const double ex = b.x - a.x, ez = b.z - a.z, l2 = ex * ex + ez * ez;
        /* left of a->b seen from above (x right, -z up) */
        inside = inside && ex * (a.z - q.z) - (a.x - q.x) * ez >= 0.0;
        double t = l2 > 0.0 ? ((q.x - a.x) * ex + (q.z - a.z) * ez) / l2 : 0.0;
        t = fmin(1.0, fmax(0.0, t));
        const double dx = a.x + t * ex - q.x, dz = a.z + t * ez - q.z;
        best = fmin(best, sqrt(dx * dx + dz * dz));
    }
    return inside ? best : -best;
}

/* The balance overlay follows the simulation: the centre of mass (the mass-weighted mean of
 * the bodies' centres, computed here), a free root's support polygon while the planner runs
 * (every support point inside it, and the planner's margin the distance computed here from
 * it), nothing of it once fallen, and the HUD's "FALLEN at" line; an assisted root's help and
 * a kinematic root's hold (fb_sim_root_support) at the root, with their HUD lines. */
START_TEST(the_balance_overlay_follows_the_simulation) {
    source* s = open_source(NULL, false);
    char msg[256];
    fb_gains g = *source_gains(s);
    const fb_model* m = source_get_view(s)->model;
    const int nf = (int)(1.6 * 120.0);
    int planned = 0, polygons = 0, fallen_at = -1, helped = 0, held = 0;
    double worst_margin = 0.0, worst_com = 0.0;
    for (int mode = 0; mode < 3; mode++) {
        g.root.mode = (fb_root_mode)mode;
        ck_assert_msg(source_set_gains(s, &g, msg, sizeof msg), "%s", msg);
        advance(s, 0.0);
        for (int f = 1; f <= nf; f++) {
            advance(s, f / 120.0);
            const source_view* v = source_get_view(s);
            const source_balance* b = &v->balance;
            /* the centre of mass, from the bodies' own */
            double mass = 0.0;
            fb_v3 c = {0, 0, 0};
            for (int i = 1; i < m->nbody; i++) {
                const double mi = m->I[i].m;
                const fb_v3 ci = {m->I[i].h.x / mi, m->I[i].h.y / mi, m->I[i].h.z / mi};
                const fb_v3 p = fb_point_pos(m, v->data, i, ci);
                c = (fb_v3){c.x + mi * p.x, c.y + mi * p.y, c.z + mi * p.z};
                mass += mi;
            }
            ck_assert(b->com_known);
            worst_com = fmax(worst_com, fabs(b->com.x - c.x / mass) + fabs(b->com.y - c.y / mass) +
                                            fabs(b->com.z - c.z / mass));
            if (mode != FB_ROOT_FREE) {
                ck_assert(!b->planner && b->nsupport == 0 && b->fall.cause == FB_FALL_NONE);
                if (b->assist) {
                    helped += mode == FB_ROOT_ASSISTED;
                    held += mode == FB_ROOT_KINEMATIC;
                    const fb_v3 r = fb_point_pos(m, v->data, 1, (fb_v3){0, 0, 0});
                    ck_assert(r.x == b->assist_at.x && r.y == b->assist_at.y &&
                              r.z == b->assist_at.z);
                    fb_v3 held_f;
                    fb_sim_root_support(source_sim(s), &held_f, NULL, NULL);
                    ck_assert(held_f.x == b->assist_force.x && held_f.y == b->assist_force.y &&
                              held_f.z == b->assist_force.z);
                    const char* want = mode == FB_ROOT_ASSISTED ? "help at the root: "
                                                                : "the kinematic root holds it: ";
                    ck_assert_msg(strncmp(v->line[4], want, strlen(want)) == 0, "%s", v->line[4]);
                }
                continue;
            }
            ck_assert(!b->assist);
            if (b->fall.cause != FB_FALL_NONE) {
                fallen_at = fallen_at < 0 ? f : fallen_at;
                char want[64];
                snprintf(want, sizeof want, "FALLEN at %.2f s (%s)", b->fall.time,
                         fb_fall_cause_name(b->fall.cause));
                ck_assert_msg(strcmp(v->line[4], want) == 0, "'%s', expected '%s'", v->line[4],
                              want);
                ck_assert(!b->planner && b->nsupport == 0);
                continue;
            }
            ck_assert_msg(b->planner, "frame %d: a standing free root without the planner", f);
            planned++;
            const fb_balance_info* bi =
                fb_tracker_balance(fb_sim_tracker((fb_sim*)source_sim(s)));
            if (b->nsupport == 0) {
                ck_assert(isnan(b->margin));
                continue;
            }
            polygons++;
            for (int k = 0; k < bi->npoint; k++) {
                ck_assert(margin_in(b->support, b->nsupport, bi->point[k]) >= -1e-12);
            }
            /* the planner measured the centre of mass at the start of its substep */
            worst_margin = fmax(worst_margin, fabs(margin_in(b->support, b->nsupport, bi->com) -
                                                   b->margin));
            ck_assert_msg(strncmp(v->line[4], "balance: centre of mass ", 24) == 0, "%s",
                          v->line[4]);
        }
    }
    printf("balance overlay: free root planned %d frames, %d with a support polygon; fallen from "
           "frame %d; the planner's margin against the overlay's polygon within %.1e m; the "
           "centre of mass within %.1e m; the assisted root helped in %d of %d frames, the "
           "kinematic root held in %d\n",
           planned, polygons, fallen_at, worst_margin, worst_com, helped, nf, held);
    ck_assert_int_gt(polygons, 5);
    ck_assert_int_gt(fallen_at, 0);
    ck_assert_int_gt(helped, nf / 2);
    ck_assert_int_gt(held, nf / 2);
    ck_assert_double_lt(worst_margin, 1e-9);
    ck_assert_double_lt(worst_com, 1e-9);
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


/* ---- the gains editor ---------------------------------------------------------------------- */

/* Joint gains as the file's rules give them, resolved here without the library: the defaults,
 * then every rule naming the joint (fnmatch), in order, each setting its own fields. */
static fb_joint_gains by_hand(const fb_gains* g, const char* joint) {
    fb_joint_gains j = g->defaults;
    for (int r = 0; r < g->nrule; r++) {
        const fb_gains_rule* x = &g->rule[r];
        if (fnmatch(x->pattern, joint, 0) != 0) {
            continue;
        }
        j.ks = (x->set & FB_GAIN_KS) ? x->g.ks : j.ks;
        j.kd = (x->set & FB_GAIN_KD) ? x->g.kd : j.kd;
        j.kp = (x->set & FB_GAIN_KP) ? x->g.kp : j.kp;
        j.kv = (x->set & FB_GAIN_KV) ? x->g.kv : j.kv;
        j.settle_time = (x->set & FB_GAIN_SETTLE) ? x->g.settle_time : j.settle_time;
        j.damping_ratio = (x->set & FB_GAIN_ZETA) ? x->g.damping_ratio : j.damping_ratio;
        j.torque_limit = (x->set & FB_GAIN_LIMIT) ? x->g.torque_limit : j.torque_limit;
    }
    return j;
}

/* Every joint of the model: the gains after are those before, but for the settle time of the
 * joints `pattern` names, which is `v`. */
static void only_settle_changed(const fb_model* m, const fb_gains* before, const fb_gains* after,
                                const char* pattern, double v) {
    for (int b = 1; b < m->nbody; b++) {
        if (m->jnv[b] == 0) {
            continue;
        }
        fb_joint_gains want = by_hand(before, m->name[b]);
        const fb_joint_gains got = by_hand(after, m->name[b]);
        if (fnmatch(pattern, m->name[b], 0) == 0) {
            want.settle_time = v;
        }
        ck_assert_msg(memcmp(&want, &got, sizeof want) == 0, "%s: the gains changed beyond %s's "
                      "settle_time (settle %g, want %g; limit %g, want %g)", m->name[b], pattern,
                      got.settle_time, want.settle_time, got.torque_limit, want.torque_limit);
    }
}

START_TEST(one_joint_edit_is_one_number_of_the_file) {
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "gedit");
    char path[300], saved[300], undone[300];
    snprintf(path, sizeof path, "%s/gains.json", dir);
    snprintf(saved, sizeof saved, "%s/saved.json", dir);
    snprintf(undone, sizeof undone, "%s/undone.json", dir);
    const fb_gains orig = init_file(path);
    source* s = open_source(path, false);
    advance(s, 0.4);
    gedit* e = gedit_create(s);
    ck_assert_ptr_nonnull(e);
    const fb_model* m = gedit_model(e);
    ck_assert(!gedit_dirty(e) && !gedit_can_undo(e));

    /* LeftElbow: its own rule, changed in place */
    ck_assert_msg(gedit_set_text(e, "LeftElbow", "settle_time", "0.6"), "%s",
                  gedit_message(e, NULL));
    ck_assert(gedit_dirty(e));
    ck_assert_int_eq(gedit_gains(e)->nrule, orig.nrule);
    for (int r = 0; r < orig.nrule; r++) { /* in place: the rules keep their order */
        ck_assert_str_eq(gedit_gains(e)->rule[r].pattern, orig.rule[r].pattern);
    }
    only_settle_changed(m, &orig, gedit_gains(e), "LeftElbow", 0.6);
    ck_assert_msg(memcmp(source_gains(s), gedit_gains(e), sizeof(fb_gains)) == 0,
                  "the source runs other gains than the editor shows");
    ck_assert_msg(fabs(source_get_view(s)->time - 0.4) < 0.003, "the take was not replayed to "
                  "0.4 s: %.4f", source_get_view(s)->time);
    /* bad values: refused with the reason, nothing changed */
    fb_gains before = *gedit_gains(e);
    const char* bad[][3] = {{"LeftElbow", "settle_time", "-0.5"}, {"LeftElbow", "settle_time", "nan"},
                            {"LeftElbow", "settle_time", "inf"},  {"LeftElbow", "damping_ratio", "0"},
                            {"LeftElbow", "torque_limit", "-1"},  {"LeftElbow", "settle_time", "x"},
                            {"LeftElbow", "setle_time", "1"},     {"Tail", "settle_time", "1"},
                            {"root", "mode", "flying"},           {"take", "rate", "5"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_msg(!gedit_set_text(e, bad[k][0], bad[k][1], bad[k][2]), "%s %s %s accepted",
                      bad[k][0], bad[k][1], bad[k][2]);
        bool error = false;
        const char* msg = gedit_message(e, &error);
        ck_assert_msg(error && strstr(msg, "refused"), "%s", msg);
        ck_assert_msg(memcmp(&before, gedit_gains(e), sizeof before) == 0, "%s %s %s changed "
                      "the gains", bad[k][0], bad[k][1], bad[k][2]);
    }
    ck_assert_msg(strstr(gedit_message(e, NULL), "rate"), "%s", gedit_message(e, NULL));
    ck_assert(gedit_set_text(e, "LeftElbow", "settle_time", "-0.5") == false);
    ck_assert_msg(strstr(gedit_message(e, NULL), "expected a value > 0, found -0.5; kept 0.6 s"),
                  "%s", gedit_message(e, NULL));
    /* saved: the file reads back as the gains; undo gives back the original's bytes */
    ck_assert_msg(gedit_save(e, saved), "%s", gedit_message(e, NULL));
    ck_assert(!gedit_dirty(e));
    fb_gains back;
    fb_error err;
    ck_assert_int_eq(fb_gains_load(saved, &back, &err), FB_OK);
    only_settle_changed(m, &orig, &back, "LeftElbow", 0.6);
    ck_assert(gedit_undo(e));
    ck_assert(gedit_dirty(e) && gedit_can_redo(e));
    ck_assert(gedit_save(e, undone));
    ck_same_file(path, undone);
    ck_assert(gedit_redo(e));
    only_settle_changed(m, &orig, gedit_gains(e), "LeftElbow", 0.6);

    /* a group: Left* becomes one rule at the end; mirror sets Right* with it */
    before = *gedit_gains(e);
    ck_assert(gedit_set(e, "Left*", "settle_time", 0.25, false));
    ck_assert_int_eq(gedit_gains(e)->nrule, before.nrule + 1);
    ck_assert_str_eq(gedit_gains(e)->rule[before.nrule].pattern, "Left*");
    ck_assert_uint_eq(gedit_gains(e)->rule[before.nrule].set, FB_GAIN_SETTLE);
    only_settle_changed(m, &before, gedit_gains(e), "Left*", 0.25);
    before = *gedit_gains(e);
    gedit_set_mirror(e, true);
    ck_assert(gedit_set(e, "LeftForeArm", "settle_time", 0.4, false) ||
              gedit_set(e, "LeftElbow", "settle_time", 0.4, false));
    ck_assert_msg(strstr(gedit_message(e, NULL), "Right"), "%s", gedit_message(e, NULL));
    const fb_joint_gains le = by_hand(gedit_gains(e), "LeftElbow");
    const fb_joint_gains re = by_hand(gedit_gains(e), "RightElbow");
    ck_assert(le.settle_time == 0.4 && re.settle_time == 0.4);
    gedit_set_mirror(e, false);
    /* a drag is one undo step */
    before = *gedit_gains(e);
    for (int k = 1; k <= 5; k++) {
        ck_assert(gedit_set(e, "Neck", "settle_time", 0.3 + 0.02 * k, k > 1));
    }
    ck_assert(gedit_undo(e));
    ck_assert_msg(memcmp(&before, gedit_gains(e), sizeof before) == 0, "one undo did not undo "
                  "the whole drag");
    /* the root and the take's fields, by their names */
    ck_assert_msg(gedit_set_text(e, "root", "mode", "assisted"), "%s", gedit_message(e, NULL));
    ck_assert_int_eq(source_gains(s)->root.mode, FB_ROOT_ASSISTED);
    ck_assert_msg(gedit_set_text(e, "take", "controller", "pd"), "%s", gedit_message(e, NULL));
    ck_assert_msg(strstr(source_get_view(s)->line[0], "pd, assisted"), "%s",
                  source_get_view(s)->line[0]);
    gedit_destroy(e);
    source_close(s);
    remove(path);
    remove(saved);
    remove(undone);
    rmdir(dir);
}
END_TEST

START_TEST(rules_the_edit_cannot_reach) {
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "gedit2");
    char path[300];
    snprintf(path, sizeof path, "%s/gains.json", dir);
    fb_gains g = init_file(path);
    /* LeftElbow's own rule first, a glob after it that also sets its settle time */
    g.nrule = 2;
    g.rule[0] = (fb_gains_rule){.pattern = "LeftElbow", .set = FB_GAIN_LIMIT,
                                .g = {.torque_limit = 80.0}};
    g.rule[1] = (fb_gains_rule){.pattern = "Left*", .set = FB_GAIN_SETTLE,
                                .g = {.settle_time = 0.08}};
    fb_error err;
    ck_assert_int_eq(fb_gains_save(&g, path, &err), FB_OK);
    source* s = open_source(path, false);
    gedit* e = gedit_create(s);
    const fb_model* m = gedit_model(e);
    /* in place it would do nothing (Left* comes after): the rule moves last */
    ck_assert_msg(gedit_set(e, "LeftElbow", "settle_time", 0.5, false), "%s",
                  gedit_message(e, NULL));
    ck_assert_str_eq(gedit_gains(e)->rule[1].pattern, "LeftElbow");
    only_settle_changed(m, &g, gedit_gains(e), "LeftElbow", 0.5);
    gedit_destroy(e);
    source_close(s);
    /* now the glob also sets the torque limit: moving LeftElbow's rule would change it */
    g.rule[0].set |= FB_GAIN_SETTLE;
    g.rule[0].g.settle_time = 0.2;
    g.rule[1].set |= FB_GAIN_LIMIT;
    g.rule[1].g.torque_limit = 50.0;
    ck_assert_int_eq(fb_gains_save(&g, path, &err), FB_OK);
    s = open_source(path, false);
    e = gedit_create(s);
    m = gedit_model(e);
    ck_assert(!gedit_set(e, "LeftElbow", "settle_time", 0.5, false));
    ck_assert_msg(strstr(gedit_message(e, NULL), "a later rule"), "%s", gedit_message(e, NULL));
    ck_assert_msg(!gedit_dirty(e) && !gedit_can_undo(e), "a refused edit changed the gains");
    /* the glob itself can be edited */
    ck_assert(gedit_set(e, "Left*", "settle_time", 0.5, false));
    only_settle_changed(m, &g, gedit_gains(e), "Left*", 0.5);
    gedit_destroy(e);
    source_close(s);
    remove(path);
    rmdir(dir);
}
END_TEST

START_TEST(the_file_changing_under_unsaved_edits_asks) {
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "gedit3");
    char path[300];
    snprintf(path, sizeof path, "%s/gains.json", dir);
    fb_gains disk = init_file(path);
    source* s = open_source(path, false);
    gedit* e = gedit_create(s);
    advance(s, 0.3);
    ck_assert(gedit_set(e, "LeftElbow", "settle_time", 0.6, false));
    const fb_gains mine = *gedit_gains(e);
    /* someone else writes the file: it waits */
    disk.rate = 300.0;
    fb_error err;
    sleep(1); /* a new modification time even on coarse file systems */
    ck_assert_int_eq(fb_gains_save(&disk, path, &err), FB_OK);
    ck_assert(source_poll(s));
    gedit_sync(e);
    ck_assert(gedit_conflict(e));
    ck_assert_msg(strstr(source_get_view(s)->line[2], "changed on disk"), "%s",
                  source_get_view(s)->line[2]);
    ck_assert_msg(memcmp(&mine, gedit_gains(e), sizeof mine) == 0 &&
                  memcmp(&mine, source_gains(s), sizeof mine) == 0, "the file's gains came in");
    /* keep mine */
    gedit_keep_edits(e);
    ck_assert(!gedit_conflict(e) && gedit_dirty(e));
    ck_assert(!source_poll(s));
    /* once more, and take the file's this time: the edits are one undo away */
    disk.rate = 360.0;
    sleep(1);
    ck_assert_int_eq(fb_gains_save(&disk, path, &err), FB_OK);
    ck_assert(source_poll(s));
    ck_assert(gedit_conflict(e));
    ck_assert(gedit_take_file(e));
    ck_assert(!gedit_conflict(e) && !gedit_dirty(e));
    ck_assert(source_gains(s)->rate == 360.0);
    ck_assert_msg(fabs(source_get_view(s)->time - 0.3) < 0.003, "not replayed to 0.3 s");
    ck_assert(gedit_undo(e));
    ck_assert(memcmp(&mine, gedit_gains(e), sizeof mine) == 0);
    /* saved to the watched file: no reload of our own write */
    ck_assert(gedit_save(e, NULL));
    ck_assert(!source_poll(s));
    /* with nothing unsaved, a change is simply reloaded and taken in */
    disk.rate = 240.0;
    sleep(1);
    ck_assert_int_eq(fb_gains_save(&disk, path, &err), FB_OK);
    ck_assert(source_poll(s));
    gedit_sync(e);
    ck_assert(!gedit_conflict(e) && !gedit_dirty(e));
    ck_assert(gedit_gains(e)->rate == 240.0);
    gedit_destroy(e);
    source_close(s);
    remove(path);
    rmdir(dir);
}
END_TEST

START_TEST(mirror_names) {
    char out[64];
    const char* pairs[][2] = {{"LeftElbow", "RightElbow"}, {"RightUpLeg", "LeftUpLeg"},
                              {"Left*", "Right*"},         {"left_knee", "right_knee"},
                              {"LShoulder", "RShoulder"},  {"R_hip", "L_hip"}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        ck_assert(gedit_mirror_name(pairs[k][0], out, sizeof out));
        ck_assert_str_eq(out, pairs[k][1]);
    }
    ck_assert(!gedit_mirror_name("Hips", out, sizeof out));
    ck_assert(!gedit_mirror_name("Lumbar", out, sizeof out));
    source* playback = open_source(NULL, true);
    ck_assert_ptr_null(gedit_create(playback)); /* no gains to edit */
    source_close(playback);
}
END_TEST

static Suite* suite(void) {
    Suite* s = suite_create("viewer_source");
    TCase* tc = tcase_create("sim");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, a_thrown_ball_strikes_and_replays_bit_for_bit);
    tcase_add_test(tc, an_assisted_roots_hit_is_shown_root_relative);
    tcase_add_test(tc, the_gains_file_is_watched);
    tcase_add_test(tc, playback_refuses_balls_and_exports);
    tcase_add_test(tc, the_balance_overlay_follows_the_simulation);
    tcase_add_test(tc, bad_inputs_are_refused);
    tcase_add_test(tc, one_joint_edit_is_one_number_of_the_file);
    tcase_add_test(tc, rules_the_edit_cannot_reach);
    tcase_add_test(tc, the_file_changing_under_unsaved_edits_asks);
    tcase_add_test(tc, mirror_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(suite());
}
