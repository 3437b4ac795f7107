/* Mocap in and out. Oracles: Assimp's own import of the same files (an independent reader of
 * BVH, so a wrong Euler order would show), hand-computed rotations, synthetic clips with known
 * motion, and rotation-space (not Euler-number) comparison for round trips.
 *
 * The shared clips (../shared/data/mocap) are used when present; without them those tests
 * pass with a note (they cannot run), everything else still runs. */
#define _DEFAULT_SOURCE /* popen, mkdtemp, mkstemps */
#include <assimp/cimport.h>
#include <assimp/scene.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "math/quat.h"
#include "math/spatial.h"
#include "mocap/clip.h"
#include "mocap/euler.h"
#include "sixchan.h"
#include "support.h"

/* The round-trip bounds: rad per joint rotation, file units per position. */
#define RT_ROT_TOL 1e-6
#define RT_POS_TOL 1e-6
/* Assimp keeps keys in single precision: agreement expected to ~1e-7 rad, allow 1e-5. */
#define ASSIMP_ROT_TOL 1e-5
/* radians per degree */
#define DEG_RAD (FB_PI / 180.0)

static const char* data_path(const char* name) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", FB_TEST_DATA_DIR, name);
    return buf;
}

/* Angle (rad) of the rotation between two unit quaternions: 2 atan2(|v|, |w|) of a^-1 b, which
 * stays accurate for tiny angles where 2 acos(a . b) bottoms out near 3e-8. */
static double quat_angle(fb_quat a, fb_quat b) {
    const fb_quat r = fb_quat_mul(fb_quat_conj(a), b);
    return 2.0 * atan2(sqrt(r.x * r.x + r.y * r.y + r.z * r.z), fabs(r.w));
}

static fb_clip* parse(const char* text, fb_error* err) {
    return fb_clip_parse_bvh(text, strlen(text), "test.bvh", NULL, NULL, err);
}

/* The rotation of clip joint i at frame f, composed here from the channels directly. */
static fb_quat rotation_of(const fb_clip* c, int i, int f) {
    const fb_clip_joint* j = &c->joint[i];
    fb_quat q = fb_quat_identity();
    for (int k = 0; k < j->nchan; k++) {
        if (j->chan[k] < FB_CH_XROT) {
            continue;
        }
        const double a = c->frames[(size_t)f * (size_t)c->nchan + (size_t)(j->col + k)];
        const fb_v3 axis = {j->chan[k] == FB_CH_XROT, j->chan[k] == FB_CH_YROT,
                            j->chan[k] == FB_CH_ZROT};
        q = fb_quat_mul(q, fb_quat_from_axis_angle(axis, a * FB_PI / 180.0));
    }
    return q;
}

/* ---- messy but valid input --------------------------------------------------------------- */

static const char TEMPLATE[] =
    "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n"
    "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    "\tJOINT Chest\n\t{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Xrotation Yrotation Zrotation\n"
    "\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 20 0\n\t\t}\n\t}\n}\n"
    "MOTION\nFrames: 2\nFrame Time: 0.0083333\n"
    "0 90 0 0 0 0 10 20 30\n1 91 0 5 0 0 12 22 32\n";

/* Replaces every "\n" of TEMPLATE by `eol`. */
static void with_line_endings(const char* eol_a, const char* eol_b, char* out) {
    size_t n = 0;
    int line = 0;
    for (const char* p = TEMPLATE; *p; p++) {
        if (*p == '\n') {
            const char* e = (line++ % 2) ? eol_b : eol_a;
            memcpy(out + n, e, strlen(e));
            n += strlen(e);
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

static void ck_same_clip(const fb_clip* a, const fb_clip* b) {
    ck_assert_int_eq(a->njoint, b->njoint);
    ck_assert_int_eq(a->nframe, b->nframe);
    ck_assert_int_eq(a->nchan, b->nchan);
    ck_assert(a->frame_time == b->frame_time);
    for (int i = 0; i < a->njoint; i++) {
        ck_assert_str_eq(a->joint[i].name, b->joint[i].name);
        ck_assert_int_eq(a->joint[i].parent, b->joint[i].parent);
    }
    for (int k = 0; k < a->nframe * a->nchan; k++) {
        ck_assert(a->frames[k] == b->frames[k]);
    }
}

START_TEST(line_endings_crlf_lf_cr_and_mixed) {
    fb_error err;
    fb_clip* ref = parse(TEMPLATE, &err);
    ck_assert_msg(ref, "%s", err.msg);
    const char* eols[3] = {"\r\n", "\r", "\n"};
    char buf[4096];
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            with_line_endings(eols[a], eols[b], buf);
            fb_clip* c = parse(buf, &err);
            ck_assert_msg(c, "endings %d/%d: %s", a, b, err.msg);
            ck_same_clip(c, ref);
            fb_clip_destroy(c);
        }
    }
    /* line numbers in errors count every kind of break: the bad value is on line 20 */
    with_line_endings("\r", "\r\n", buf);
    char* bad = strstr(buf, "12 22 32");
    ck_assert_ptr_nonnull(bad);
    bad[0] = 'x';
    ck_assert_ptr_null(parse(buf, &err));
    ck_assert_msg(strstr(err.msg, "test.bvh:20:"), "%s", err.msg);
    fb_clip_destroy(ref);
}
END_TEST

START_TEST(numbers_spaces_tabs_and_trailing_whitespace) {
    fb_error err;
    const char* messy =
        "HIERARCHY  \nROOT\tHips \n{ \n OFFSET\t0  0\t\t0   \n"
        " CHANNELS 6 Xposition  Yposition Zposition Zrotation Xrotation Yrotation \t\n"
        " JOINT Chest{\n  OFFSET 0 10 0\n  CHANNELS 3 Xrotation Yrotation Zrotation\n"
        "  End Site{ OFFSET 0 20 0 }\n }\n}\n"
        "MOTION\nFrames:    2\nFrame Time:\t.0083333   \n"
        "0\t90 0 0 0 0 10 20 30  \t\n  1 91 0 5 0 0 12 22 32\n\n\n";
    fb_clip* c = parse(messy, &err);
    ck_assert_msg(c, "%s", err.msg);
    fb_clip* ref = parse(TEMPLATE, &err);
    ck_same_clip(c, ref);
    fb_ck_near(c->frame_time, 0.0083333, 0.0, 0.0);
    ck_assert_int_eq(c->nwarn, 0);
    fb_clip_destroy(c);
    fb_clip_destroy(ref);
}
END_TEST

START_TEST(declared_frame_count_differs_from_lines) {
    fb_error err;
    char buf[4096];
    /* more complete lines than declared (like Boxing_Toes): warn, keep all */
    snprintf(buf, sizeof buf, "%s2 92 0 6 0 0 14 24 34\n", TEMPLATE);
    fb_clip* c = parse(buf, &err);
    ck_assert_msg(c, "%s", err.msg);
    ck_assert_int_eq(c->nframe, 3);
    ck_assert_int_eq(c->declared_frames, 2);
    ck_assert_int_eq(c->nwarn, 1);
    ck_assert_ptr_nonnull(strstr(c->warn[0], "declares 2 frames"));
    fb_clip_destroy(c);
    /* fewer: warn, keep what is there */
    snprintf(buf, sizeof buf, "%s", TEMPLATE);
    memcpy(strstr(buf, "Frames: 2"), "Frames: 5", 9);
    c = parse(buf, &err);
    ck_assert_msg(c, "%s", err.msg);
    ck_assert_int_eq(c->nframe, 2);
    ck_assert_int_eq(c->nwarn, 1);
    fb_clip_destroy(c);
}
END_TEST

START_TEST(rotation_orders_differ_per_joint) {
    /* the root is Z X Y, the chest X Y Z: each composes in its own file order */
    fb_error err;
    fb_clip* c = parse(TEMPLATE, &err);
    ck_assert_msg(c, "%s", err.msg);
    const double d = FB_PI / 180.0;
    const fb_v3 X = {1, 0, 0}, Y = {0, 1, 0}, Z = {0, 0, 1};
    /* frame 1: root Z=5 X=0 Y=0; chest X=12 Y=22 Z=32 */
    const fb_quat root = fb_quat_from_axis_angle(Z, 5 * d);
    const fb_quat chest = fb_quat_mul(
        fb_quat_mul(fb_quat_from_axis_angle(X, 12 * d), fb_quat_from_axis_angle(Y, 22 * d)),
        fb_quat_from_axis_angle(Z, 32 * d));
    ck_assert(quat_angle(rotation_of(c, 0, 1), root) < 1e-15);
    ck_assert(quat_angle(rotation_of(c, 1, 1), chest) < 1e-15);
    int axes[3];
    ck_assert_int_eq(fb_clip_rot_axes(&c->joint[0], axes), 3);
    ck_assert(axes[0] == 2 && axes[1] == 0 && axes[2] == 1);
    ck_assert_int_eq(fb_clip_rot_axes(&c->joint[1], axes), 3);
    ck_assert(axes[0] == 0 && axes[1] == 1 && axes[2] == 2);
    fb_clip_destroy(c);
}
END_TEST

/* ---- malformed input ------------------------------------------------------------------- */

START_TEST(malformed_files_are_refused_with_file_and_line) {
    static const struct {
        const char* file;
        const char* says; /* a fragment the message must contain */
    } CASES[] = {
        {"bad_truncated_motion.bvh", ":20: frame 2: expected 9 values"},
        {"bad_value_count.bvh", ":20: frame 2: expected 9 values (one per channel), found 10"},
        {"bad_non_numeric.bvh", ":19: expected a number, found 'abc'"},
        {"bad_unbalanced_open.bvh", "expected OFFSET, CHANNELS, JOINT, End Site or '}'"},
        {"bad_unbalanced_close.bvh", ":16: expected MOTION after the skeleton"},
        {"bad_zero_frames.bvh", "expected at least one frame line"},
        {"bad_frame_time.bvh", ":18: expected a frame time from 0.0001 to 1 s, found 0 s"},
        {"bad_frame_time_huge.bvh", "found 3600 s"},
        {"bad_duplicate_name.bvh", ":10: expected a unique joint name, found 'Chest'"},
        {"bad_nan.bvh", ":20: expected a finite number, found 'nan'"},
        {"bad_inf.bvh", ":20: expected a finite number, found '-inf'"},
        {"bad_empty.bvh", ":1: expected 'HIERARCHY', found the end of the file"},
        {"bad_header.bvh", ":1: expected 'HIERARCHY', found 'HIERARCH'"},
        {"bad_channel_name.bvh", ":9: expected a channel name"},
        {"bad_no_motion.bvh", "expected 'MOTION', found the end of the file"},
        {"bad_offset.bvh", ":8: expected an OFFSET number, found 'ten'"},
    };
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        fb_error err;
        const char* path = data_path(CASES[k].file);
        fb_clip* c = fb_clip_load(path, NULL, NULL, &err);
        ck_assert_msg(c == NULL, "%s was accepted", CASES[k].file);
        ck_assert_int_eq(err.code, FB_EINVAL);
        ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, CASES[k].says),
                      "%s: message '%s' lacks '%s'", CASES[k].file, err.msg, CASES[k].says);
    }
    fb_error err;
    fb_clip* good = fb_clip_load(data_path("good.bvh"), NULL, NULL, &err);
    ck_assert_msg(good, "%s", err.msg);
    ck_assert_int_eq(good->nwarn, 0); /* Assimp agrees with the good file */
    fb_clip_destroy(good);
    ck_assert_ptr_null(fb_clip_load(data_path("does_not_exist.bvh"), NULL, NULL, &err));
    ck_assert_int_eq(err.code, FB_EIO);
    /* a non-BVH file goes to Assimp, whose reason is passed on with the file name */
    char path[] = "/tmp/fbjunkXXXXXX.glb";
    const int fd = mkstemps(path, 4);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "glTF\x02\0\0\0 not really", 20), 20);
    close(fd);
    ck_assert_ptr_null(fb_clip_load(path, NULL, NULL, &err));
    ck_assert_int_eq(err.code, FB_EINVAL);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "Assimp could not import it"), "%s",
                  err.msg);
    unlink(path);
}
END_TEST

/* ---- Euler angles ------------------------------------------------------------------------ */

START_TEST(euler_round_trip_in_every_order) {
    static const int ORDERS[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    scene_rng r = scene_rng_make(8);
    for (int o = 0; o < 6; o++) {
        for (int t = 0; t < 2000; t++) {
            fb_quat q = scene_rng_quat(&r);
            if (t % 10 == 0) { /* near gimbal lock: middle angle +-90 deg */
                double ang[3] = {scene_rng_uniform(&r, -3, 3), (t % 20 ? 1 : -1) * FB_PI / 2 +
                                                                   scene_rng_uniform(&r, -1e-9, 1e-9),
                                 scene_rng_uniform(&r, -3, 3)};
                q = fb_euler_to_quat(ORDERS[o], 3, ang);
            }
            double ang[3];
            fb_quat_to_euler(q, ORDERS[o], NULL, ang);
            const double err = quat_angle(fb_euler_to_quat(ORDERS[o], 3, ang), q);
            ck_assert_msg(err < 1e-7, "order %d case %d: %g rad", o, t, err);
        }
    }
}
END_TEST

START_TEST(euler_unwrapping_never_jumps) {
    /* a steady spin about z through many turns, in Z X Y order */
    const int axes[3] = {2, 0, 1};
    double prev[3], ang[3];
    fb_quat_to_euler(fb_quat_from_axis_angle(fb_v3_make(1, 0, 0), 0.3), axes, NULL, prev);
    for (int f = 1; f < 2000; f++) {
        const double a = 0.05 * f;
        const fb_quat q = fb_quat_mul(fb_quat_from_axis_angle(fb_v3_make(0, 0, 1), a),
                                      fb_quat_from_axis_angle(fb_v3_make(1, 0, 0), 0.3));
        fb_quat_to_euler(q, axes, prev, ang);
        for (int k = 0; k < 3; k++) {
            ck_assert_msg(fabs(ang[k] - prev[k]) < 0.2, "frame %d: jump %g", f, ang[k] - prev[k]);
        }
        memcpy(prev, ang, sizeof ang);
    }
    fb_ck_near(ang[0], 0.05 * 1999, 1e-9, 0.0); /* the angle kept counting turns */
}
END_TEST

/* ---- units, up axis, position channels ---------------------------------------------------- */

/* A standing figure: hips at 0.9 m, head top 1.7 m, in `scale` file units per metre. */
static void standing_bvh(double units_per_m, bool z_up, char* buf, size_t cap) {
    const double s = units_per_m;
    const char* up = z_up ? "0 0 %g" : "0 %g 0";
    char leg[64], spine[64], foot[64];
    snprintf(leg, sizeof leg, up, -0.85 * s);
    snprintf(spine, sizeof spine, up, 0.8 * s);
    snprintf(foot, sizeof foot, up, -0.05 * s);
    snprintf(buf, cap,
             "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
             " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
             " JOINT Leg\n {\n  OFFSET %s\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
             "  End Site\n  {\n   OFFSET %s\n  }\n }\n"
             " JOINT Spine\n {\n  OFFSET 0 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
             "  End Site\n  {\n   OFFSET %s\n  }\n }\n}\n"
             "MOTION\nFrames: 1\nFrame Time: 0.01\n0 0 0 0 0 0 0 0 0 0 0 0\n",
             leg, foot, spine);
}

START_TEST(units_are_detected_from_the_standing_height) {
    static const struct {
        double units_per_m;
        const char* name;
    } CASES[] = {{1.0, "m"},           {10.0, "dm"},   {100.0, "cm"},
                 {1000.0, "mm"},       {39.37, "inch"}, {1.0 / 0.056444, "CMU"}};
    char buf[2048];
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        standing_bvh(CASES[k].units_per_m, false, buf, sizeof buf);
        fb_error err;
        fb_clip* c = parse(buf, &err);
        ck_assert_msg(c, "%s", err.msg);
        ck_assert_msg(strncmp(c->unit_name, CASES[k].name, strlen(CASES[k].name)) == 0,
                      "%g units/m detected as %s", CASES[k].units_per_m, c->unit_name);
        fb_ck_near(c->height_file * c->unit, 1.7, 0.02, 0.0);
        fb_clip_destroy(c);
    }
    /* overrides */
    standing_bvh(100.0, false, buf, sizeof buf);
    fb_clip_opts o = fb_default_clip_opts();
    o.height = 1.8;
    fb_error err;
    fb_clip* c = fb_clip_parse_bvh(buf, strlen(buf), "t", &o, NULL, &err);
    fb_ck_near(c->height_file * c->unit, 1.8, 1e-12, 0.0);
    fb_clip_destroy(c);
    o = fb_default_clip_opts();
    o.scale = 0.02;
    c = fb_clip_parse_bvh(buf, strlen(buf), "t", &o, NULL, &err);
    ck_assert(c->unit == 0.02);
    fb_clip_destroy(c);
}
END_TEST

/* A figure in centimetres (hips 0.9 m up, head top 1.7 m) whose rest pose lies along x, with
 * 300 frames at 100 fps: the root turned by zrot degrees about z (or yrot about y) from frame
 * `from` on, by 0 before. Turning +90 about z stands it up along +y, -90 about y along +z. */
static void lying_bvh(int from, double zrot, double yrot, char* buf, size_t cap) {
    size_t n = (size_t)snprintf(
        buf, cap,
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
        " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        " JOINT Leg\n {\n  OFFSET -85 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET -5 0 0\n  }\n }\n"
        " JOINT Spine\n {\n  OFFSET 0 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET 80 0 0\n  }\n }\n}\n"
        "MOTION\nFrames: 300\nFrame Time: 0.01\n");
    for (int f = 0; f < 300 && n < cap; f++) {
        n += (size_t)snprintf(buf + n, cap - n, "0 90 0 %g 0 %g 0 0 0 0 0 0\n",
                              f >= from ? zrot : 0.0, f >= from ? yrot : 0.0);
    }
}

/* The rest pose decides only where it stands; else the poses of the first second (forward
 * kinematics through the channels), else poses over the clip, else the tallest reading, warned;
 * the up axis comes from the same poses. */
START_TEST(units_come_from_standing_poses_when_the_rest_pose_does_not) {
    static char buf[32768];
    static const struct {
        int from;
        double zrot, yrot;
        fb_height_from evidence;
        fb_up_axis up;
        const char* unit;
        double height_m;
    } CASES[] = {
        {0, 90, 0, FB_HEIGHT_EARLY, FB_UP_Y, "cm", 1.70},    /* stands from the start */
        {0, 0, -90, FB_HEIGHT_EARLY, FB_UP_Z, "cm", 1.70},   /* ... along z */
        {150, 90, 0, FB_HEIGHT_CLIP, FB_UP_Y, "cm", 1.70},   /* stands up after 1.5 s */
        {0, 30, 0, FB_HEIGHT_NONE, FB_UP_Y, "inch", 2.159}, /* never stands: 30 deg up */
    };
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        lying_bvh(CASES[k].from, CASES[k].zrot, CASES[k].yrot, buf, sizeof buf);
        fb_error err;
        fb_clip* c = parse(buf, &err);
        ck_assert_msg(c, "%s", err.msg);
        ck_assert_msg(c->rest_upright < 1e-12, "case %zu: rest upright %g", k, c->rest_upright);
        ck_assert_msg(c->height_from == CASES[k].evidence, "case %zu: evidence %s", k,
                      fb_height_from_name(c->height_from));
        ck_assert_msg(c->up == CASES[k].up, "case %zu: up %d", k, c->up);
        ck_assert_msg(strcmp(c->unit_name, CASES[k].unit) == 0, "case %zu: unit %s", k,
                      c->unit_name);
        /* standing: 85 + 5 + 80 cm; at 30 degrees each bone counts by its rise, half of it */
        fb_ck_near(c->height_file * c->unit, CASES[k].height_m, 1e-9, 0.0);
        const bool warned = c->nwarn > 0 && strstr(c->warn[0], "no pose stands upright");
        ck_assert_msg(warned == (CASES[k].evidence == FB_HEIGHT_NONE), "case %zu: %d warnings",
                      k, c->nwarn);
        fb_clip_destroy(c);
    }
}
END_TEST

START_TEST(z_up_clips_are_detected_and_stand_up) {
    char buf[2048];
    standing_bvh(100.0, true, buf, sizeof buf);
    fb_error err;
    fb_clip* c = parse(buf, &err);
    ck_assert_msg(c, "%s", err.msg);
    ck_assert_int_eq(c->up, FB_UP_Z);
    fb_v3 J[3], E[3];
    fb_clip_rest_positions(c, J, E);
    /* the spine's end (head top) is 0.8 m above the hips, along +Y, in featherbone's axes */
    fb_ck_near(E[2].y, 0.8, 1e-12, 1e-12);
    fb_ck_near(E[2].z, 0.0, 0.0, 1e-12);
    /* and the character built from it has its head above its hips in the world */
    fb_character* ch = fb_character_build(c, NULL, &err);
    ck_assert_msg(ch, "%s", err.msg);
    fb_data* d = ck_data(ch->model);
    fb_kinematics_pos(ch->model, d);
    const int head = fb_model_body_by_name(ch->model, "Spine_End");
    fb_ck_near(fb_point_pos(ch->model, d, head, fb_v3_zero()).y, 0.8, 1e-12, 1e-12);
    fb_data_destroy(d);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

/* A clip whose "Arm" joint has position channels, written either way: absolute (the channel
 * is the whole offset) or relative (added to OFFSET). Both describe the same motion. */
static void six_channel_bvh(bool absolute, char* buf, size_t cap) {
    char frames[4096] = "";
    size_t n = 0;
    for (int f = 0; f < 20; f++) {
        const double dx = 0.5 * sin(0.3 * f), dy = 0.2 * cos(0.2 * f);
        const double px = absolute ? 30 + dx : dx, py = absolute ? 5 + dy : dy;
        n += (size_t)snprintf(frames + n, sizeof frames - n > 0 ? sizeof frames - n : 0,
                              "0 100 0 0 0 0 %.6f %.6f 0 %d 0 0\n", px, py, 3 * f);
        if (n >= sizeof frames) {
            break;
        }
    }
    snprintf(buf, cap,
             "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
             " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
             " JOINT Arm\n {\n  OFFSET 30 5 0\n"
             "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
             "  End Site\n  {\n   OFFSET 0 -60 0\n  }\n }\n"
             " JOINT Leg\n {\n  OFFSET 0 -90 0\n  CHANNELS 0\n"
             "  End Site\n  {\n   OFFSET 0 -80 0\n  }\n }\n}\n"
             "MOTION\nFrames: 20\nFrame Time: 0.01\n%s",
             frames);
}

/* The bone the Arm's channels of six_channel_bvh carry, averaged here (file units), and the
 * shortest and longest they make it. */
static fb_v3 arm_mean_bone(double* lo, double* hi) {
    fb_v3 sum = fb_v3_zero();
    *lo = INFINITY;
    *hi = 0.0;
    for (int f = 0; f < 20; f++) {
        const fb_v3 e = {30 + 0.5 * sin(0.3 * f), 5 + 0.2 * cos(0.2 * f), 0.0};
        sum = fb_v3_add(sum, e);
        *lo = fmin(*lo, fb_v3_norm(e));
        *hi = fmax(*hi, fb_v3_norm(e));
    }
    return fb_v3_scale(sum, 1.0 / 20.0);
}

START_TEST(non_root_position_channels_are_kept_either_way) {
    static char abs_text[8192], rel_text[8192];
    six_channel_bvh(true, abs_text, sizeof abs_text);
    six_channel_bvh(false, rel_text, sizeof rel_text);
    fb_error err;
    fb_clip* a = parse(abs_text, &err);
    ck_assert_msg(a, "%s", err.msg);
    fb_clip* r = parse(rel_text, &err);
    ck_assert_msg(r, "%s", err.msg);
    ck_assert_int_eq(a->pos_mode, FB_POS_ABSOLUTE);
    ck_assert_int_eq(r->pos_mode, FB_POS_RELATIVE);
    /* by default the arm is a ball joint carrying its bone (the channels' mean: they do not
     * agree with OFFSET); as free translations (free_positions) it floats */
    for (int free_pos = 0; free_pos < 2; free_pos++) {
        fb_build_opts bo = fb_default_build_opts();
        bo.free_positions = free_pos;
        fb_character* ca = fb_character_build(a, &bo, &err);
        fb_character* cr = fb_character_build(r, &bo, &err);
        ck_assert(ca && cr);
        const int arm = fb_model_body_by_name(ca->model, "Arm_End");
        ck_assert_int_eq(ca->model->jtype[fb_model_body_by_name(ca->model, "Arm")],
                         free_pos ? FB_JOINT_FLOATING : FB_JOINT_SPHERICAL);
        ck_assert(ca->articulated == !free_pos && cr->articulated == !free_pos);
        if (!free_pos) {
            double lo, hi;
            const double mean = fb_v3_norm(arm_mean_bone(&lo, &hi));
            const fb_bone_info* bi = &ca->bone[1];
            ck_assert(bi->from_channels && !bi->offset_agrees);
            /* the file holds the channels to 6 decimals: 5e-7 units of rounding */
            fb_ck_near(bi->length, mean * a->unit, 0.0, 1e-6 * a->unit);
            fb_ck_near(bi->min_len, lo * a->unit, 0.0, 1e-6 * a->unit);
            fb_ck_near(bi->max_len, hi * a->unit, 0.0, 1e-6 * a->unit);
            fb_ck_near(bi->max_dev, fmax(hi - mean, mean - lo) * a->unit, 0.0, 2e-6 * a->unit);
            fb_ck_near(cr->bone[1].length, bi->length, 1e-12, 0.0);
            ck_assert_int_eq(ca->nwarn, 0); /* 0.5 cm of stretch: under the warning */
        }
        fb_motion* ma = fb_motion_from_clip(a, ca, 0.0, 0, 0, &err);
        fb_motion* mr = fb_motion_from_clip(r, cr, 0.0, 0, 0, &err);
        fb_data* da = ck_data(ca->model);
        fb_data* dr = ck_data(cr->model);
        /* the hand follows the same world path from both files */
        for (int f = 0; f < 20; f++) {
            memcpy(da->q, ma->q + f * ma->nq, (size_t)ma->nq * sizeof(double));
            memcpy(dr->q, mr->q + f * mr->nq, (size_t)mr->nq * sizeof(double));
            fb_kinematics_pos(ca->model, da);
            fb_kinematics_pos(cr->model, dr);
            const fb_v3 pa = fb_point_pos(ca->model, da, arm, fb_v3_zero());
            const fb_v3 pr = fb_point_pos(cr->model, dr, arm, fb_v3_zero());
            ck_assert_msg(fb_v3_norm(fb_v3_sub(pa, pr)) < 1e-12, "frame %d", f);
        }
        fb_data_destroy(da);
        fb_data_destroy(dr);
        fb_motion_destroy(ma);
        fb_motion_destroy(mr);
        fb_character_destroy(ca);
        fb_character_destroy(cr);
    }
    /* forcing the wrong reading moves the arm by a whole OFFSET */
    fb_clip_opts o = fb_default_clip_opts();
    o.pos_mode = FB_POS_RELATIVE;
    fb_clip* wrong = fb_clip_parse_bvh(abs_text, strlen(abs_text), "t", &o, NULL, &err);
    ck_assert_int_eq(wrong->pos_mode, FB_POS_RELATIVE);
    fb_clip_destroy(wrong);
    fb_clip_destroy(a);
    fb_clip_destroy(r);
}
END_TEST

/* ---- character ----------------------------------------------------------------------------- */

START_TEST(hinge_axis_is_recovered_from_the_motion) {
    /* an elbow bending about a tilted axis through the clip, in Z X Y channels */
    const fb_v3 axis = fb_v3_scale(fb_v3_make(0.8, 0.1, 0.3), 1.0 / sqrt(0.74));
    static char text[65536];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
                                " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
                                "Yrotation\n JOINT LeftElbow\n {\n  OFFSET 0 -30 0\n"
                                "  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n"
                                "   OFFSET 0 -25 0\n  }\n }\n}\nMOTION\nFrames: 100\n"
                                "Frame Time: 0.01\n");
    const int zxy[3] = {2, 0, 1};
    for (int f = 0; f < 100; f++) {
        double ang[3];
        fb_quat_to_euler(fb_quat_from_axis_angle(axis, 1.2 * sin(0.1 * f)), zxy, NULL, ang);
        n += (size_t)snprintf(text + n, sizeof text - n, "0 100 0 0 0 0 %.9f %.9f %.9f\n",
                              ang[0] * 180 / FB_PI, ang[1] * 180 / FB_PI, ang[2] * 180 / FB_PI);
    }
    fb_error err;
    fb_clip* c = parse(text, &err);
    ck_assert_msg(c, "%s", err.msg);
    fb_rules rules = fb_rules_lossless();
    rules.nhinge = 1;
    strcpy(rules.hinge[0], "elbow");
    fb_build_opts o = fb_default_build_opts();
    o.rules = &rules;
    fb_character* ch = fb_character_build(c, &o, &err);
    ck_assert_msg(ch, "%s", err.msg);
    const int b = fb_model_body_by_name(ch->model, "LeftElbow");
    ck_assert_int_eq(ch->model->jtype[b], FB_JOINT_REVOLUTE);
    ck_assert_msg(fabs(fb_v3_dot(ch->model->axis[b], axis)) > 1 - 1e-9, "axis (%g %g %g)",
                  ch->model->axis[b].x, ch->model->axis[b].y, ch->model->axis[b].z);
    ck_assert(ch->hinge[1].max_off_axis < 1e-7);
    /* the hinge angle follows the motion */
    fb_motion* mo = fb_motion_from_clip(c, ch, 0, 0, 0, &err);
    const double sign = fb_v3_dot(ch->model->axis[b], axis) > 0 ? 1.0 : -1.0;
    for (int f = 0; f < 100; f++) {
        fb_ck_near(mo->q[f * mo->nq + ch->model->q_adr[b]], sign * 1.2 * sin(0.1 * f), 0.0, 1e-7);
    }
    fb_motion_destroy(mo);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

/* A capsule ending at a narrower joint stops one radius short of it (its round end reaches the
 * joint's centre, the narrower shape covers the joint); one ending at a wider joint or at an
 * End Site keeps its length; masses stay those of the whole segment. A chain read off the
 * file: Hips -> Thigh (radius 0.08, 40 cm) -> Shin (0.05, 40 cm) -> Foot (End Site), and
 * Hips -> Chest (0.12), wider than the hips' 0.10. */
START_TEST(capsules_stop_short_of_narrower_joints) {
    static const char* text =
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
        " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        " JOINT Thigh\n {\n  OFFSET 10 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  JOINT Shin\n  {\n   OFFSET 0 -40 0\n   CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "   End Site\n   {\n    OFFSET 0 -40 0\n   }\n  }\n }\n"
        " JOINT Chest\n {\n  OFFSET 0 30 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET 0 30 0\n  }\n }\n}\n"
        "MOTION\nFrames: 2\nFrame Time: 0.01\n"
        "0 100 0 0 0 0 0 0 0 0 0 0 0 0 0\n0 100 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    fb_error err;
    fb_clip_opts co = fb_default_clip_opts();
    co.scale = 0.01; /* centimetres */
    fb_clip* c = fb_clip_parse_bvh(text, strlen(text), "taper.bvh", &co, NULL, &err);
    ck_assert_msg(c, "%s", err.msg);
    fb_rules rules = fb_rules_lossless();
    const struct {
        const char* pattern;
        double radius;
    } parts[] = {{"=Hips", 0.10}, {"Thigh", 0.08}, {"Shin", 0.05}, {"Chest", 0.12}};
    rules.npart = 4;
    for (int k = 0; k < 4; k++) {
        snprintf(rules.part[k].pattern, FB_PATTERN_MAX, "%s", parts[k].pattern);
        rules.part[k].radius = parts[k].radius;
    }
    rules.density = 1000.0;
    fb_build_opts o = fb_default_build_opts();
    o.rules = &rules;
    fb_character* ch = fb_character_build(c, &o, &err);
    ck_assert_msg(ch, "%s", err.msg);
    const fb_model* m = ch->model;
    const fb_shape* thigh = NULL;
    const fb_shape* shin = NULL;
    const fb_shape* hips = NULL;
    for (int s = 0; s < m->nshape; s++) {
        const char* name = m->name[m->shape[s].body];
        thigh = strcmp(name, "Thigh") == 0 ? &m->shape[s] : thigh;
        shin = strcmp(name, "Shin") == 0 ? &m->shape[s] : shin;
        hips = strcmp(name, "Hips") == 0 ? &m->shape[s] : hips;
    }
    ck_assert(thigh && shin && hips);
    /* the thigh (0.08) ends at the narrower shin (0.05): 0.40 - 0.08 long */
    ck_assert_int_eq(thigh->type, FB_SHAPE_CAPSULE);
    fb_ck_near(thigh->p1.y, -0.32, 0.0, 1e-12);
    fb_ck_near(fabs(thigh->p1.x) + fabs(thigh->p1.z), 0.0, 0.0, 1e-12);
    /* the shin ends at an End Site, the hips at two joints: full length */
    fb_ck_near(shin->p1.y, -0.40, 0.0, 1e-12);
    /* the hips' segment runs to the centroid of Thigh and Chest; Chest is wider anyway */
    fb_ck_near(hips->p1.x, 0.05, 0.0, 1e-12);
    fb_ck_near(hips->p1.y, 0.15, 0.0, 1e-12);
    /* the thigh's mass is the whole 40 cm capsule's: pi r^2 L + 4/3 pi r^3 at 1000 kg/m^3 */
    const int b = fb_model_body_by_name(m, "Thigh");
    fb_ck_near(m->I[b].m, 1000.0 * FB_PI * 0.08 * 0.08 * (0.40 + 4.0 / 3.0 * 0.08), 1e-12, 0.0);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

START_TEST(mass_models_and_targets) {
    char path[1024];
    snprintf(path, sizeof path, "%s/character_rules.json", FB_DATA_DIR);
    fb_rules rules;
    fb_error err;
    ck_assert_msg(fb_rules_load(path, &rules, &err) == FB_OK, "%s", err.msg);
    char buf[2048];
    standing_bvh(100.0, false, buf, sizeof buf);
    fb_clip* c = parse(buf, &err);
    fb_build_opts o = fb_default_build_opts();
    o.rules = &rules;
    o.mass = 70.0;
    fb_character* ch = fb_character_build(c, &o, &err);
    fb_ck_near(fb_model_mass(ch->model), 70.0, 1e-12, 0.0);
    /* the bundled rules' passive damping on every joint with dofs but the floating root */
    ck_assert_double_gt(rules.joint_damping, 0.0);
    for (int i = 1; i < ch->model->nbody; i++) {
        const fb_joint_type t = ch->model->jtype[i];
        const double want = (t == FB_JOINT_FLOATING || t == FB_JOINT_FIXED) ? 0.0
                                                                            : rules.joint_damping;
        ck_assert_msg(ch->model->damping[i] == want, "%s: damping %g, expected %g",
                      ch->model->name[i], ch->model->damping[i], want);
    }
    /* and their rolling resistance, carried to the character for fb_world_set_rolling */
    ck_assert_double_gt(rules.rolling_resistance, 0.0);
    ck_assert(ch->rolling_resistance == rules.rolling_resistance);
    fb_character_destroy(ch);
    /* anthropometric: needs a mass, and hits it */
    o.mass_model = FB_MASS_ANTHROPOMETRIC;
    o.mass = 0.0;
    ck_assert_ptr_null(fb_character_build(c, &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "--mass"));
    o.mass = 80.0;
    ch = fb_character_build(c, &o, &err);
    ck_assert_msg(ch, "%s", err.msg);
    fb_ck_near(fb_model_mass(ch->model), 80.0, 1e-12, 0.0);
    fb_character_destroy(ch);
    /* a leg made 1000x lighter than the hips is reported */
    fb_rules thin = fb_rules_lossless();
    thin.npart = 2;
    snprintf(thin.part[0].pattern, FB_PATTERN_MAX, "=hips");
    thin.part[0].radius = 0.2;
    snprintf(thin.part[1].pattern, FB_PATTERN_MAX, "leg");
    thin.part[1].radius = 0.002;
    o = fb_default_build_opts();
    o.rules = &thin;
    ch = fb_character_build(c, &o, &err);
    ck_assert_int_eq(ch->nwarn, 1);
    ck_assert_msg(strstr(ch->warn[0], "'Leg'") && strstr(ch->warn[0], "more than 100x"), "%s",
                  ch->warn[0]);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

/* A rules file and what its error message must say. */
typedef struct rules_case {
    const char* json;
    const char* says;
} rules_case;

/* Each case, written to a file, is refused by fb_rules_load with FB_EINVAL and its message. */
static void expect_rules_refused(const char* name, const rules_case* cases, size_t n) {
    char dir[64];
    ck_tmpdir(dir, sizeof dir, name);
    for (size_t k = 0; k < n; k++) {
        char path[256];
        snprintf(path, sizeof path, "%s/r%zu.json", dir, k);
        ck_write_text(path, cases[k].json);
        fb_rules* r = malloc(sizeof *r);
        fb_error err;
        ck_assert_int_eq(fb_rules_load(path, r, &err), FB_EINVAL);
        ck_assert_msg(strstr(err.msg, cases[k].says), "'%s' lacks '%s'", err.msg, cases[k].says);
        free(r);
        unlink(path);
    }
    rmdir(dir);
}

START_TEST(rules_files_are_checked) {
    static const rules_case CASES[] = {
        {"{\"desnity\": 1000}", "desnity: unknown key"},
        {"{\"density\": -1}", "density: expected a number"},
        {"{\"joint_damping\": -0.3}", "joint_damping: expected a number from 0 to 100"},
        {"{\"joint_damping\": \"0.3\"}", "joint_damping: expected a number"},
        {"{\"joint_friction\": -0.1}", "joint_friction: expected a number from 0 to 100"},
        {"{\"rolling_resistance\": 0.5}", "rolling_resistance: expected a number from 0 to 0.1"},
        {"{\"parts\": [{\"match\": \"arm\"}]}", "parts[0]: expected both"},
        {"{\"parts\": [{\"match\": \"arm\", \"radius\": 0.1, \"segment\": \"tail\"}]}",
         "parts[0].segment"},
        {"{\"hinges\": [1, 2]}", "hinges[0]"},
        {"{\n\"density\": 1000,\n\"parts\": [\n", "expected valid JSON"},
    };
    expect_rules_refused("rules", CASES, sizeof CASES / sizeof CASES[0]);
}
END_TEST

/* ---- resampling ------------------------------------------------------------------------------ */

START_TEST(resampling_follows_a_steady_rotation) {
    /* a root spinning steadily about a tilted axis at 100 fps, resampled to 30 fps: slerp of
     * a constant angular velocity is exact, so every new frame lies on the true rotation */
    const fb_v3 axis = fb_v3_scale(fb_v3_make(1, 2, 2), 1.0 / 3.0);
    static char text[200000];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition "
                                "Yposition Zposition Yrotation Xrotation Zrotation\n End Site\n"
                                " {\n  OFFSET 0 50 0\n }\n}\nMOTION\nFrames: 301\n"
                                "Frame Time: 0.01\n");
    const int yxz[3] = {1, 0, 2};
    double prev[3] = {0, 0, 0};
    for (int f = 0; f <= 300; f++) {
        double ang[3];
        fb_quat_to_euler(fb_quat_from_axis_angle(axis, 2.0 * f * 0.01), yxz, prev, ang);
        memcpy(prev, ang, sizeof ang);
        n += (size_t)snprintf(text + n, sizeof text - n, "%.9f 100 0 %.12f %.12f %.12f\n",
                              0.5 * f, ang[0] * 180 / FB_PI, ang[1] * 180 / FB_PI,
                              ang[2] * 180 / FB_PI);
    }
    fb_error err;
    fb_clip* c = parse(text, &err);
    ck_assert_msg(c, "%s", err.msg);
    fb_character* ch = fb_character_build(c, NULL, &err);
    fb_motion* mo = fb_motion_from_clip(c, ch, 30.0, 0, 0, &err);
    ck_assert_msg(mo, "%s", err.msg);
    ck_assert_int_eq(mo->nframe, 91); /* 3 s at 30 fps, both ends included */
    for (int k = 0; k < mo->nframe; k++) {
        const double t = k / 30.0;
        const double* q = mo->q + k * mo->nq;
        const fb_quat expect = fb_quat_from_axis_angle(axis, 2.0 * t);
        ck_assert_msg(quat_angle(fb_quat_load(q + 3), expect) < 1e-9, "frame %d: %g rad", k,
                      quat_angle(fb_quat_load(q + 3), expect));
        fb_ck_near(q[0], 0.5 * t * 100 * c->unit, 1e-9, 1e-12); /* x moves linearly */
    }
    /* a frame range */
    fb_motion* part = fb_motion_from_clip(c, ch, 0.0, 100, 201, &err);
    ck_assert_int_eq(part->nframe, 101);
    ck_assert(quat_angle(fb_quat_load(part->q + 3), fb_quat_from_axis_angle(axis, 2.0)) < 1e-9);
    ck_assert_ptr_null(fb_motion_from_clip(c, ch, 0.0, 200, 100, &err));
    fb_motion_destroy(part);
    fb_motion_destroy(mo);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

/* ---- the shared clips ------------------------------------------------------------------------ */

/* The shared clips, or 0 when ../shared is not there. */
static int shared_clips(char names[][256], int cap) {
    DIR* dir = opendir(FB_SHARED_MOCAP_DIR);
    if (!dir) {
        printf("note: %s not present, shared-clip tests skipped\n", FB_SHARED_MOCAP_DIR);
        return 0;
    }
    int n = 0;
    for (struct dirent* e; (e = readdir(dir)) && n < cap;) {
        const size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".bvh") == 0) {
            snprintf(names[n++], 256, "%s/%.100s", FB_SHARED_MOCAP_DIR, e->d_name);
        }
    }
    closedir(dir);
    return n;
}

START_TEST(shared_clips_agree_with_assimp) {
    char names[16][256];
    const int n = shared_clips(names, 16);
    for (int k = 0; k < n; k++) {
        fb_error err;
        fb_clip* c = fb_clip_load(names[k], NULL, NULL, &err);
        ck_assert_msg(c, "%s", err.msg);
        const struct aiScene* sc = aiImportFile(names[k], 0);
        ck_assert_msg(sc && sc->mNumAnimations == 1, "Assimp: %s", aiGetErrorString());
        const struct aiAnimation* an = sc->mAnimations[0];
        /* the library's own joint rotations: q(t) of the lossless character */
        fb_character* chr = fb_character_build(c, NULL, &err);
        fb_motion* mo = fb_motion_from_clip(c, chr, 0.0, 0, 0, &err);
        ck_assert(chr && mo && mo->nframe == c->nframe);
        const fb_model* m = chr->model;
        double worst = 0.0;
        int compared = 0;
        for (unsigned a = 0; a < an->mNumChannels; a++) {
            const struct aiNodeAnim* ch = an->mChannels[a];
            const int i = fb_clip_joint_by_name(c, ch->mNodeName.data);
            ck_assert_msg(i >= 0, "%s: Assimp channel %s unknown", names[k], ch->mNodeName.data);
            const int b = chr->body_of_joint[i];
            const int at = m->q_adr[b] + (m->jtype[b] == FB_JOINT_FLOATING ? 3 : 0);
            ck_assert(m->jtype[b] == FB_JOINT_FLOATING || m->jtype[b] == FB_JOINT_SPHERICAL);
            for (unsigned f = 0; f < ch->mNumRotationKeys && (int)f < c->nframe; f++) {
                const struct aiQuaternion qa = ch->mRotationKeys[f].mValue;
                const fb_quat q = {qa.w, qa.x, qa.y, qa.z};
                const fb_quat ours = fb_quat_load(mo->q + (size_t)f * (size_t)mo->nq + at);
                worst = fmax(worst, quat_angle(fb_quat_normalize(q), ours));
                compared++;
            }
        }
        fb_motion_destroy(mo);
        fb_character_destroy(chr);
        ck_assert_msg(worst < ASSIMP_ROT_TOL, "%s: rotations differ from Assimp's by %g rad",
                      names[k], worst);
        ck_assert_int_gt(compared, 1000);
        aiReleaseImport(sc);
        fb_clip_destroy(c);
    }
}
END_TEST

START_TEST(shared_clips_round_trip_and_have_plausible_mass) {
    char names[16][256];
    const int n = shared_clips(names, 16);
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "rt");
    char rules_path[1024];
    snprintf(rules_path, sizeof rules_path, "%s/character_rules.json", FB_DATA_DIR);
    fb_rules rules;
    fb_error err;
    ck_assert_msg(fb_rules_load(rules_path, &rules, &err) == FB_OK, "%s", err.msg);
    for (int k = 0; k < n; k++) {
        fb_clip* c = fb_clip_load(names[k], NULL, NULL, &err);
        ck_assert_msg(c, "%s", err.msg);
        /* a plausible character with the default rules */
        fb_build_opts o = fb_default_build_opts();
        o.rules = &rules;
        fb_character* phys = fb_character_build(c, &o, &err);
        ck_assert_msg(phys, "%s", err.msg);
        const double mass = fb_model_mass(phys->model);
        ck_assert_msg(mass > 50.0 && mass < 110.0, "%s: %g kg", names[k], mass);
        fb_character_destroy(phys);
        /* import -> q(t) -> export -> import: the same rotations and positions */
        fb_character* ch = fb_character_build(c, NULL, &err);
        fb_motion* mo = fb_motion_from_clip(c, ch, 0.0, 0, 0, &err);
        char out[512];
        snprintf(out, sizeof out, "%s/rt.bvh", dir);
        ck_assert_msg(fb_motion_write_bvh(c, ch, mo, 1.0, out, &err) == FB_OK, "%s", err.msg);
        fb_clip* back = fb_clip_load(out, NULL, NULL, &err);
        ck_assert_msg(back, "%s", err.msg);
        ck_assert_int_eq(back->nwarn, 0);
        ck_assert_int_eq(back->nframe, c->nframe);
        ck_assert(back->frame_time == c->frame_time);
        ck_assert_int_eq(back->njoint, c->njoint);
        double rot = 0.0, pos = 0.0;
        for (int i = 0; i < c->njoint; i++) {
            const fb_clip_joint* a = &c->joint[i];
            const fb_clip_joint* b = &back->joint[i];
            ck_assert_str_eq(a->name, b->name);
            ck_assert_int_eq(a->parent, b->parent);
            ck_assert_int_eq(a->nchan, b->nchan);
            ck_assert(memcmp(a->chan, b->chan, sizeof a->chan) == 0);
            ck_assert(fb_v3_norm(fb_v3_sub(a->offset, b->offset)) < RT_POS_TOL);
            for (int f = 0; f < c->nframe; f++) {
                rot = fmax(rot, quat_angle(rotation_of(c, i, f), rotation_of(back, i, f)));
                for (int ch_k = 0; ch_k < a->nchan; ch_k++) {
                    if (a->chan[ch_k] <= FB_CH_ZPOS) {
                        const size_t at = (size_t)f * (size_t)c->nchan + (size_t)(a->col + ch_k);
                        pos = fmax(pos, fabs(c->frames[at] - back->frames[at]));
                    }
                }
            }
        }
        ck_assert_msg(rot < RT_ROT_TOL && pos < RT_POS_TOL, "%s: rotation %g rad, position %g",
                      names[k], rot, pos);
        printf("round trip %s: %d frames, worst rotation %.2e rad, position %.2e units, "
               "mass %.1f kg\n",
               strrchr(names[k], '/') + 1, c->nframe, rot, pos, mass);
        /* a second tool opens what we wrote */
        char cmd[1024], line[512];
        snprintf(cmd, sizeof cmd, "assimp info '%s' 2>&1", out);
        FILE* p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        bool ok = false, error = false;
        while (fgets(line, sizeof line, p)) {
            ok |= strstr(line, "Importing file") && strstr(line, "OK");
            error |= strstr(line, "ERROR") != NULL;
        }
        pclose(p);
        ck_assert_msg(ok && !error, "assimp info could not load the export of %s", names[k]);
        unlink(out);
        fb_clip_destroy(back);
        fb_motion_destroy(mo);
        fb_character_destroy(ch);
        fb_clip_destroy(c);
    }
    rmdir(dir);
}
END_TEST

/* ---- joint ranges ------------------------------------------------------------------------ */

static fb_character* with_bundled_rules(const fb_clip* c) {
    char path[1024];
    snprintf(path, sizeof path, "%s/character_rules.json", FB_DATA_DIR);
    fb_rules* rules = malloc(sizeof *rules);
    fb_error err;
    ck_assert_msg(rules && fb_rules_load(path, rules, &err) == FB_OK, "%s", err.msg);
    fb_build_opts o = fb_default_build_opts();
    o.rules = rules;
    fb_character* ch = fb_character_build(c, &o, &err);
    free(rules);
    ck_assert_msg(ch, "%s", err.msg);
    return ch;
}

/* How far (rad, > 0 outside) the joint's q lies past its limit, computed independently of the
 * library's limit rows: hinge against [lo, hi]; ball by the oracle's g (as a fraction of the
 * range) and the twist angle. */
static double past_limit(const fb_model* m, int b, const double* q) {
    const fb_joint_limit* L = &m->limit[b];
    if (m->jtype[b] == FB_JOINT_REVOLUTE) {
        return fmax(L->lo - q[0], q[0] - L->hi);
    }
    const fb_quat qq = fb_quat_load(q);
    double G[2];
    const double g = ck_swing_g(L, qq, G);
    const double tw = fb_quat_twist(qq, L->twist_axis);
    return fmax(isnan(g) ? 1.0 : (g - 1.0), fmax(L->lo - tw, tw - L->hi));
}

/* Every shared clip's character (bundled rules) has ranges on its knees, elbows, hips,
 * shoulders, spine, neck, wrists, ankles and toes, each the rules' bounds times its share of
 * the chain plus what the clip widened; and every frame of the clip, as the character's motion,
 * lies inside them. */
START_TEST(shared_clips_lie_inside_their_joint_ranges) {
    char names[17][256];
    int n = shared_clips(names, 16);
    if (n == 0) {
        snprintf(names[n++], 256, "%s/131_01.bvh", FB_DATA_DIR); /* the bundled one at least */
    }
    static const struct {
        fb_range_kind kind;
        const char* word; /* a joint name containing it must have this range */
    } NEED[] = {{FB_RANGE_KNEE, "knee"}, {FB_RANGE_ELBOW, "elbow"},  {FB_RANGE_HIP, "upleg"},
                {FB_RANGE_HIP, "hip"},   {FB_RANGE_SHOULDER, "arm"}, {FB_RANGE_SPINE, "spine"},
                {FB_RANGE_SPINE, "chest"}, {FB_RANGE_NECK, "neck"},  {FB_RANGE_WRIST, "wrist"},
                {FB_RANGE_ANKLE, "ankle"}, {FB_RANGE_ANKLE, "foot"}, {FB_RANGE_TOE, "toe"}};
    for (int k = 0; k < n; k++) {
        fb_error err;
        fb_clip* c = fb_clip_load(names[k], NULL, NULL, &err);
        ck_assert_msg(c, "%s", err.msg);
        fb_character* ch = with_bundled_rules(c);
        const fb_model* m = ch->model;
        int count[FB_RANGE_NKIND] = {0}, nrange = 0, nwidened = 0, ncapped = 0;
        for (int i = 0; i < c->njoint; i++) {
            const fb_joint_range* r = &ch->range[i];
            const int b = ch->body_of_joint[i];
            char lower[FB_NAME_MAX];
            for (int j = 0; j < FB_NAME_MAX; j++) {
                lower[j] = (char)tolower((unsigned char)c->joint[i].name[j]);
            }
            for (size_t w = 0; w < sizeof NEED / sizeof NEED[0]; w++) {
                const bool named = strstr(lower, NEED[w].word) && !strstr(lower, "hipjoint") &&
                                   !(NEED[w].kind == FB_RANGE_HIP && strcmp(lower, "hips") == 0) &&
                                   !(NEED[w].kind == FB_RANGE_SHOULDER && strstr(lower, "fore"));
                ck_assert_msg(!named || (r->rule >= 0 && r->kind == NEED[w].kind),
                              "%s: %s has no %s range", names[k], c->joint[i].name,
                              fb_range_kind_name(NEED[w].kind));
            }
            ck_assert_int_eq(m->limit[b].on, r->rule >= 0 && ch->role[i] == FB_ROLE_BODY);
            if (r->rule < 0) {
                continue;
            }
            count[r->kind]++;
            nrange++;
            ck_assert(r->share > 0.0 && r->share <= 1.0);
            ck_assert(m->jtype[b] == (fb_range_kind_is_hinge(r->kind) ? FB_JOINT_REVOLUTE
                                                                      : FB_JOINT_SPHERICAL));
            /* the hinges' stops as the bounds say, on the right sides of straight */
            if (m->jtype[b] == FB_JOINT_REVOLUTE) {
                fb_ck_near(m->limit[b].hi - m->limit[b].lo, r->bound[0] + r->bound[1], 0.0,
                           1e-9);
            }
            double widest = 0.0;
            for (int s = 0; s < 4; s++) {
                widest = fmax(widest, r->bound[s]);
            }
            ck_assert(!r->capped || fabs(widest - FB_RANGE_SWING_MAX) < 1e-12);
            ncapped += r->capped;
            for (int s = 0; s < FB_RANGE_NBOUND; s++) {
                nwidened += r->widened[s] > 0.0;
                ck_assert_msg(r->widened[s] == 0.0 || (r->frame[s] >= 0 && r->frame[s] < c->nframe),
                              "%s %s: widened without a frame", names[k], c->joint[i].name);
            }
        }
        ck_assert_msg(count[FB_RANGE_KNEE] == 2 && count[FB_RANGE_ELBOW] == 2 &&
                          count[FB_RANGE_HIP] == 2 && count[FB_RANGE_ANKLE] == 2 &&
                          count[FB_RANGE_WRIST] >= 2 && count[FB_RANGE_SHOULDER] >= 2 &&
                          count[FB_RANGE_SPINE] >= 1 && count[FB_RANGE_NECK] >= 1,
                      "%s: ranges missing", names[k]);
        /* every frame inside, as the simulation sees the clip */
        fb_motion* mo = fb_motion_from_clip(c, ch, 0.0, 0, 0, &err);
        ck_assert_msg(mo, "%s", err.msg);
        double worst = -INFINITY;
        int worst_b = 0, worst_f = 0;
        for (int f = 0; f < mo->nframe; f++) {
            for (int b = 1; b < m->nbody; b++) {
                /* a range the clip would widen past FB_RANGE_SWING_MAX stops there (noted) */
                if (!m->limit[b].on || ch->range[ch->joint_of_body[b]].capped) {
                    continue;
                }
                const double p = past_limit(m, b, mo->q + (size_t)f * (size_t)mo->nq + m->q_adr[b]);
                if (p > worst) {
                    worst = p;
                    worst_b = b;
                    worst_f = f;
                }
            }
        }
        printf("%s: %d joints with ranges (%d bounds widened to hold the clip, %d capped at 175 "
               "deg); nearest a bound: %s at frame %d, %.2e past\n",
               strrchr(names[k], '/') + 1, nrange, nwidened, ncapped, m->name[worst_b], worst_f,
               worst);
        ck_assert_msg(worst < 1e-9, "%s: %s at frame %d is %g past its range", names[k],
                      m->name[worst_b], worst_f, worst);
        fb_motion_destroy(mo);
        fb_character_destroy(ch);
        fb_clip_destroy(c);
    }
}
END_TEST

/* Joints of legs_clip, in file order after the root; each has Z X Y rotation channels. */
enum { L_HIP, L_KNEE, L_ANKLE, R_HIP, R_KNEE, R_ANKLE, CHEST, LEGS_NJOINT };
#define LEGS_NCOL (3 * LEGS_NJOINT)
/* The column of joint j's rotation about axis 'X', 'Y' or 'Z' in a legs_clip row. */
static int col(int j, char axis) {
    return 3 * j + (axis == 'Z' ? 0 : (axis == 'X' ? 1 : 2));
}

/* A two-legged skeleton with a chest (cm; left = +x, forward = +z, so a rotation about +x
 * swings a hanging bone backward and about +z a left bone outward) whose left knee's rest is
 * bent backward by `rest_bend` deg; frame f's rotations (deg) are rows[f]. */
static fb_clip* legs_clip(double rest_bend, double (*rows)[LEGS_NCOL], int nframe) {
    static char text[1 << 17];
    const double rb = rest_bend * FB_PI / 180.0;
    int n = snprintf(text, sizeof text,
                     "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
                     " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n");
    for (int side = 0; side < 2; side++) {
        n += snprintf(text + n, sizeof text - (size_t)n,
                      " JOINT %sHip\n {\n  OFFSET %d -5 0\n  CHANNELS 3 Zrotation Xrotation "
                      "Yrotation\n  JOINT %sKnee\n  {\n   OFFSET 0 -42 0\n   CHANNELS 3 "
                      "Zrotation Xrotation Yrotation\n   JOINT %sAnkle\n   {\n    OFFSET 0 %.9f "
                      "%.9f\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {\n"
                      "     OFFSET 0 -6 14\n    }\n   }\n  }\n }\n",
                      side ? "Right" : "Left", side ? -10 : 10, side ? "Right" : "Left",
                      side ? "Right" : "Left", side ? -42.0 : -42.0 * cos(rb),
                      side ? 0.0 : -42.0 * sin(rb));
    }
    n += snprintf(text + n, sizeof text - (size_t)n,
                  " JOINT Chest\n {\n  OFFSET 0 10 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
                  "  End Site\n  {\n   OFFSET 0 60 0\n  }\n }\n}\nMOTION\nFrames: %d\n"
                  "Frame Time: 0.01\n",
                  nframe);
    for (int f = 0; f < nframe; f++) {
        n += snprintf(text + n, sizeof text - (size_t)n, "0 95 0 0 0 0");
        for (int k = 0; k < LEGS_NCOL; k++) {
            n += snprintf(text + n, sizeof text - (size_t)n, " %.9f", rows[f][k]);
        }
        n += snprintf(text + n, sizeof text - (size_t)n, "\n");
    }
    fb_error err;
    fb_clip* c = parse(text, &err);
    ck_assert_msg(c, "%s", err.msg);
    return c;
}

/* legs_clip moving only the left knee: knee(f) deg about x at frame f (at most 64 frames). */
static fb_clip* left_knee_clip(double rest_bend, double (*knee)(int), int nframe) {
    static double rows[64][LEGS_NCOL];
    memset(rows, 0, sizeof rows);
    for (int f = 0; f < nframe; f++) {
        rows[f][col(L_KNEE, 'X')] = knee(f);
    }
    return legs_clip(rest_bend, rows, nframe);
}

/* The widened amounts (deg) of clip joint `name`'s six bounds. */
static void widened_deg(const fb_clip* c, const fb_character* ch, const char* name, double* w) {
    const fb_joint_range* r = &ch->range[fb_clip_joint_by_name(c, name)];
    ck_assert_msg(r->rule >= 0, "%s has no range", name);
    for (int k = 0; k < FB_RANGE_NBOUND; k++) {
        w[k] = r->widened[k] / DEG_RAD;
    }
}

/* The ranges point the way anatomy does: poses just inside a bound widen nothing, poses past
 * one widen that bound alone, by the excess, mirrored between the left and right hips (hip
 * flexion 120 / extension 30 / abduction 45 / adduction 30 / medial rotation 45 deg; the
 * chest's spine 80 / 25; the ankle's dorsiflexion 20 / plantarflexion 50). */
START_TEST(ranges_follow_the_anatomy) {
    static double rows[16][LEGS_NCOL];
    memset(rows, 0, sizeof rows);
    rows[1][col(L_HIP, 'X')] = -110.0; /* flexion (thigh forward), inside */
    rows[2][col(L_HIP, 'X')] = 40.0;   /* extension, 10 past */
    rows[3][col(L_HIP, 'Z')] = 40.0;   /* abduction (outward, +x), inside */
    rows[4][col(L_HIP, 'Z')] = -35.0;  /* adduction, 5 past */
    rows[5][col(L_HIP, 'Y')] = -50.0;  /* medial rotation (front toward the midline), 5 past */
    rows[6][col(L_HIP, 'Y')] = 40.0;   /* lateral rotation, inside */
    rows[7][col(R_HIP, 'X')] = 33.0;   /* extension, 3 past */
    rows[8][col(R_HIP, 'Z')] = -50.0;  /* abduction (outward, -x), 5 past */
    rows[9][col(R_HIP, 'Z')] = 25.0;   /* adduction, inside */
    rows[10][col(R_HIP, 'Y')] = 52.0;  /* medial rotation, 7 past */
    rows[11][col(CHEST, 'X')] = 70.0;  /* flexion (forward), inside */
    rows[12][col(CHEST, 'X')] = -30.0; /* extension, 5 past */
    rows[13][col(L_ANKLE, 'X')] = -24.0; /* dorsiflexion (toes up), 4 past */
    rows[14][col(L_ANKLE, 'X')] = 45.0;  /* plantarflexion, inside */
    rows[15][col(L_KNEE, 'X')] = 60.0;   /* the knees bend backward */
    rows[15][col(R_KNEE, 'X')] = 60.0;
    fb_clip* c = legs_clip(0.0, rows, 16);
    fb_character* ch = with_bundled_rules(c);
    static const struct {
        const char* joint;
        double want[FB_RANGE_NBOUND]; /* flexion, extension, abduction, adduction, medial,
                                         lateral (ankle: dorsiflexion, plantarflexion, ...) */
    } WANT[] = {{"LeftHip", {0, 10, 0, 5, 5, 0}},
                {"RightHip", {0, 3, 5, 0, 7, 0}},
                {"Chest", {0, 5, 0, 0, 0, 0}},
                {"LeftAnkle", {4, 0, 0, 0, 0, 0}},
                {"LeftKnee", {0, 0, 0, 0, 0, 0}},
                {"RightKnee", {0, 0, 0, 0, 0, 0}}};
    for (size_t k = 0; k < sizeof WANT / sizeof WANT[0]; k++) {
        double w[FB_RANGE_NBOUND];
        widened_deg(c, ch, WANT[k].joint, w);
        printf("%-9s widened by %.6f %.6f %.6f %.6f %.6f %.6f deg\n", WANT[k].joint, w[0], w[1],
               w[2], w[3], w[4], w[5]);
        const fb_range_kind kind = ch->range[fb_clip_joint_by_name(c, WANT[k].joint)].kind;
        for (int s = 0; s < FB_RANGE_NBOUND; s++) {
            ck_assert_msg(fabs(w[s] - WANT[k].want[s]) < 1e-6, "%s: %s widened by %g deg, not %g",
                          WANT[k].joint, fb_range_bound_name(kind, s), w[s], WANT[k].want[s]);
        }
    }
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

/* A clip that bends a knee 10 deg backward at one frame: the knee's extension stop (at the
 * straight leg) is widened by exactly that and the range says which frame. */
static double knee_once_backward(int f) {
    return f == 40 ? -10.0 : 30.0 + 25.0 * sin(0.2 * f);
}

START_TEST(a_knee_bent_backward_widens_its_stop) {
    fb_clip* c = left_knee_clip(0.0, knee_once_backward, 60);
    fb_character* ch = with_bundled_rules(c);
    const int i = fb_clip_joint_by_name(c, "LeftKnee"), b = ch->body_of_joint[i];
    const fb_joint_range* r = &ch->range[i];
    ck_assert_int_eq(r->kind, FB_RANGE_KNEE);
    printf("knee bent 10 deg backward at frame 40: extension %.6f deg (widened %.6f at frame "
           "%d), flexion %.3f deg; limit [%.6f, %.3f] deg\n",
           r->bound[1] / DEG_RAD, r->widened[1] / DEG_RAD, r->frame[1], r->bound[0] / DEG_RAD,
           ch->model->limit[b].lo / DEG_RAD, ch->model->limit[b].hi / DEG_RAD);
    fb_ck_near(r->widened[1], 10.0 * DEG_RAD, 0.0, 1e-6);
    ck_assert_int_eq(r->frame[1], 40);
    fb_ck_near(r->bound[0], 135.0 * DEG_RAD, 0.0, 1e-12); /* flexion untouched */
    ck_assert(r->widened[0] == 0.0);
    /* the model's stop: 10 deg the other side of straight (q = 0 here), flexion positive */
    fb_ck_near(ch->model->limit[b].lo, -10.0 * DEG_RAD, 0.0, 1e-6);
    fb_ck_near(ch->model->limit[b].hi, 135.0 * DEG_RAD, 0.0, 1e-9);
    bool noted = false;
    for (int k = 0; k < ch->nwarn && k < FB_CLIP_MAX_WARN; k++) {
        noted = noted || (strstr(ch->warn[k], "LeftKnee extension by 10.0 deg (frame 40)") != NULL);
    }
    ck_assert_msg(noted, "no warning names the widened knee");
    /* the other knee, never bent back, keeps its stop at straight */
    const int ir = fb_clip_joint_by_name(c, "RightKnee");
    ck_assert(ch->range[ir].widened[1] == 0.0);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

/* A rig whose rest knee is bent 30 deg: the knee's range still stops at the straight leg (the
 * angle where the shank lies along the thigh, checked by turning the rest shank there), not at
 * the rest pose. */
static double knee_from_short_of_straight(int f) {
    return -25.0 + 80.0 * f / 49.0; /* from 5 deg short of straight to 55 deg bent */
}

START_TEST(a_bent_rest_knee_still_stops_straight) {
    fb_clip* c = left_knee_clip(30.0, knee_from_short_of_straight, 50);
    fb_character* ch = with_bundled_rules(c);
    const int i = fb_clip_joint_by_name(c, "LeftKnee"), b = ch->body_of_joint[i];
    const fb_joint_limit* L = &ch->model->limit[b];
    const fb_v3 h = ch->model->axis[b];
    /* the rest shank turned to the extension stop lies along the thigh (straight down) */
    const fb_v3 shank = {0.0, -cos(30.0 * DEG_RAD), -sin(30.0 * DEG_RAD)};
    const fb_v3 at_stop = fb_quat_rotate(fb_quat_from_axis_angle(h, L->lo), shank);
    printf("rest knee bent 30 deg: stops [%.6f, %.6f] deg; the shank at the extension stop "
           "(%.2e %.6f %.2e)\n",
           L->lo / DEG_RAD, L->hi / DEG_RAD, at_stop.x, at_stop.y, at_stop.z);
    fb_ck_near(at_stop.y, -1.0, 0.0, 1e-12);
    fb_ck_near(L->lo, -30.0 * DEG_RAD, 0.0, 1e-9);
    fb_ck_near(L->hi - L->lo, 135.0 * DEG_RAD, 0.0, 1e-9);
    ck_assert(ch->range[i].widened[0] == 0.0 && ch->range[i].widened[1] == 0.0);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
}
END_TEST

/* The ranges section is parsed as strictly as the rest: wrong kinds, unknown or missing keys,
 * bad bounds and shares are errors naming the field. */
START_TEST(range_rules_are_checked) {
    static const rules_case CASES[] = {
        {"{\"ranges\": [{\"kind\": \"tail\", \"match\": [\"x\"]}]}", "ranges[0].kind: expected"},
        {"{\"ranges\": [{\"kind\": \"knee\", \"match\": [\"knee\"], \"flexion\": 135, "
         "\"extension\": 0, \"twist\": 3}]}",
         "ranges[0].twist: unknown key for a knee range (expected kind, match, share, flexion, "
         "extension)"},
        {"{\"ranges\": [{\"kind\": \"knee\", \"match\": [\"knee\"], \"flexion\": 135}]}",
         "ranges[0].extension: missing"},
        {"{\"ranges\": [{\"kind\": \"hip\", \"match\": [\"hip\"], \"flexion\": 120, "
         "\"extension\": 0, \"abduction\": 45, \"adduction\": 30, \"medial_rotation\": 45, "
         "\"lateral_rotation\": 45}]}",
         "ranges[0].extension: expected degrees, more than 0"},
        {"{\"ranges\": [{\"kind\": \"toe\", \"match\": [\"toe\"], \"flexion\": 200, "
         "\"extension\": 70}]}",
         "ranges[0].flexion: expected degrees, 0 to 180"},
        {"{\"ranges\": [{\"kind\": \"toe\", \"match\": [], \"flexion\": 45, \"extension\": 70}]}",
         "ranges[0].match: expected a non-empty list"},
        {"{\"ranges\": [{\"kind\": \"toe\", \"match\": [\"toe\"], \"share\": [1, 0], "
         "\"flexion\": 45, \"extension\": 70}]}",
         "ranges[0].share: expected 1 to 8 fractions in (0, 1]"},
        {"{\"ranges\": [{\"kind\": \"toe\", \"match\": [\"toe\"], \"twist_share\": [1], "
         "\"flexion\": 45, \"extension\": 70}]}",
         "ranges[0].twist_share: unknown key"},
        {"{\"ranges\": {\"kind\": \"toe\"}}", "ranges: expected an array"},
    };
    expect_rules_refused("ranges", CASES, sizeof CASES / sizeof CASES[0]);
}
END_TEST

START_TEST(gltf_through_assimp_matches_the_bvh) {
    /* the bundled clip exported to glTF by Assimp's own tool, read back through featherbone's
     * Assimp path (30 fps samples), against the BVH itself at the same instants */
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "gltf");
    char glb[256], cmd[1024];
    snprintf(glb, sizeof glb, "%s/walk.glb", dir);
    snprintf(cmd, sizeof cmd, "assimp export '%s/131_01.bvh' '%s' >/dev/null 2>&1", FB_DATA_DIR,
             glb);
    ck_assert_msg(system(cmd) == 0, "assimp export failed");
    fb_error err;
    snprintf(cmd, sizeof cmd, "%s/131_01.bvh", FB_DATA_DIR);
    fb_clip* bvh = fb_clip_load(cmd, NULL, NULL, &err);
    fb_clip* gl = fb_clip_load(glb, NULL, NULL, &err);
    ck_assert_msg(bvh && gl, "%s", err.msg);
    ck_assert_str_eq(gl->format, "glb");
    ck_assert_int_eq(gl->njoint, bvh->njoint);
    ck_assert_int_eq(gl->nchan, bvh->nchan); /* a root with position, 30 rotating joints */
    fb_character* cb = fb_character_build(bvh, NULL, &err);
    fb_character* cg = fb_character_build(gl, NULL, &err);
    fb_motion* mb = fb_motion_from_clip(bvh, cb, 30.0, 0, 0, &err);
    fb_motion* mg = fb_motion_from_clip(gl, cg, 0.0, 0, 0, &err);
    ck_assert(mb && mg);
    fb_data* db = ck_data(cb->model);
    fb_data* dg = ck_data(cg->model);
    double worst = 0.0;
    const int frames = mg->nframe < mb->nframe ? mg->nframe : mb->nframe;
    for (int f = 0; f < frames; f++) {
        memcpy(db->q, mb->q + f * mb->nq, (size_t)mb->nq * sizeof(double));
        memcpy(dg->q, mg->q + f * mg->nq, (size_t)mg->nq * sizeof(double));
        fb_kinematics_pos(cb->model, db);
        fb_kinematics_pos(cg->model, dg);
        for (int i = 0; i < bvh->njoint; i++) {
            const int j = fb_clip_joint_by_name(gl, bvh->joint[i].name);
            ck_assert_int_ge(j, 0);
            const fb_v3 pb = fb_point_pos(cb->model, db, cb->body_of_joint[i], fb_v3_zero());
            const fb_v3 pg = fb_point_pos(cg->model, dg, cg->body_of_joint[j], fb_v3_zero());
            worst = fmax(worst, fb_v3_norm(fb_v3_sub(pb, pg)));
        }
    }
    /* every joint in the same place (m), to Assimp's single precision */
    ck_assert_msg(worst < 1e-5, "joints differ by up to %g m", worst);
    ck_assert_int_gt(frames, 200);
    fb_data_destroy(db);
    fb_data_destroy(dg);
    fb_motion_destroy(mb);
    fb_motion_destroy(mg);
    fb_character_destroy(cb);
    fb_character_destroy(cg);
    fb_clip_destroy(bvh);
    fb_clip_destroy(gl);
    unlink(glb);
    rmdir(dir);
}
END_TEST


/* ---- skeletons with position channels on every joint ---------------------------------------- */

/* Centimetres per CMU unit (FB_CMU_UNIT in cm): the six-channel test clips are centimetres. */
#define CM_PER_CMU 5.6444
/* The line-up bound of an unperturbed export (cm, at every joint and frame). */
#define LINE_UP_CM 1.0

/* The bundled character rules, loaded once per test. */
static void bundled_rules(fb_rules* rules) {
    char path[1024];
    snprintf(path, sizeof path, "%s/character_rules.json", FB_DATA_DIR);
    fb_error err;
    ck_assert_msg(fb_rules_load(path, rules, &err) == FB_OK, "%s", err.msg);
}

static fb_character* build_with(const fb_clip* c, const fb_rules* rules) {
    fb_build_opts o = fb_default_build_opts();
    o.rules = rules;
    fb_error err;
    fb_character* ch = fb_character_build(c, &o, &err);
    ck_assert_msg(ch, "%s: %s", c->source, err.msg);
    return ch;
}

/* A clip read without the Assimp cross-load (which these tests do not need); fails the test
 * with the library's message. */
static fb_clip* load_fast(const char* path) {
    fb_clip_opts o = fb_default_clip_opts();
    o.use_assimp = false;
    fb_error err;
    fb_clip* c = fb_clip_load(path, &o, NULL, &err);
    ck_assert_msg(c, "%s", err.msg);
    return c;
}

static int count_joints(const fb_model* m, fb_joint_type t) {
    int n = 0;
    for (int b = 1; b < m->nbody; b++) {
        n += m->jtype[b] == t;
    }
    return n;
}

/* Whether body b has a box shape. */
static bool ck_has_box(const fb_model* m, int b) {
    for (int s = 0; s < m->nshape; s++) {
        if (m->shape[s].body == b && m->shape[s].type == FB_SHAPE_BOX) {
            return true;
        }
    }
    return false;
}

/* The CMU clips rewritten as Perception Neuron / Bandai Namco files write them (6 channels on
 * every joint, a dummy root, bones along local +-X, XYZ and ZXY orders, centimetres): the
 * character is the original's (one floating joint, the same joint types and masses), the units
 * are read as centimetres although the rest pose is a line, and an unperturbed export lines up
 * with the input at every joint and frame by forward kinematics written in the test. */
START_TEST(six_channel_clips_are_articulated_characters) {
    static const char* const SOURCES[] = {"131_01.bvh", "131_03.bvh", "01_01.bvh"};
    static const char* const ORDERS[] = {"XYZ", "ZXY"};
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/131_01.bvh", FB_SHARED_MOCAP_DIR);
    if (access(probe, R_OK) != 0) {
        printf("note: %s not present, six-channel clip test skipped\n", FB_SHARED_MOCAP_DIR);
        return;
    }
    fb_rules* rules = malloc(sizeof *rules);
    ck_assert_ptr_nonnull(rules);
    bundled_rules(rules);
    char dir[64];
    ck_tmpdir(dir, sizeof dir, "six");
    fb_clip_opts fast = fb_default_clip_opts();
    fast.use_assimp = false;
    for (size_t s = 0; s < sizeof SOURCES / sizeof SOURCES[0]; s++) {
        char src_path[1024];
        snprintf(src_path, sizeof src_path, "%s/%s", FB_SHARED_MOCAP_DIR, SOURCES[s]);
        fb_error err;
        fb_clip* src = fb_clip_load(src_path, &fast, NULL, &err);
        ck_assert_msg(src, "%s", err.msg);
        fb_character* orig = build_with(src, rules);
        for (size_t o = 0; o < sizeof ORDERS / sizeof ORDERS[0]; o++) {
            char path[256], out[256], where[96];
            snprintf(path, sizeof path, "%s/six_%s.bvh", dir, ORDERS[o]);
            snprintf(out, sizeof out, "%s/export_%s.bvh", dir, ORDERS[o]);
            const ck_six_opts so = {.order = ORDERS[o], .scale = CM_PER_CMU};
            ck_write_six_channel(src, &so, path);
            fb_clip* six = fb_clip_load(path, &fast, NULL, &err);
            ck_assert_msg(six, "%s", err.msg);
            /* the file holds the source's motion (the generator is right) */
            int matched = 0;
            const double gen = ck_bvh_fk_distance(six, 0, src, 0, src->nframe, CM_PER_CMU,
                                                  NULL, &matched, where);
            ck_assert_msg(gen < 1e-6 && matched == src->njoint, "%s %s: generated clip off by "
                          "%g cm (%s)", SOURCES[s], ORDERS[o], gen, where);
            ck_assert_int_eq(six->njoint, src->njoint + 1);
            /* centimetres, whatever the rest pose (a line along x here) says */
            ck_assert_msg(strncmp(six->unit_name, "cm", 2) == 0, "%s %s: units read as %s",
                          SOURCES[s], ORDERS[o], six->unit_name);
            /* the character: one floating joint, the original's joint types and masses */
            fb_character* ch = build_with(six, rules);
            const fb_model* m = ch->model;
            ck_assert_msg(count_joints(m, FB_JOINT_FLOATING) == 1,
                          "%s %s: %d floating joints, %d ball", SOURCES[s], ORDERS[o],
                          count_joints(m, FB_JOINT_FLOATING), count_joints(m, FB_JOINT_SPHERICAL));
            for (int b = 1; b < orig->model->nbody; b++) {
                const int k = fb_model_body_by_name(m, orig->model->name[b]);
                ck_assert_msg(k > 0, "%s: body %s missing", SOURCES[s], orig->model->name[b]);
                ck_assert_msg(m->jtype[k] == orig->model->jtype[b], "%s %s: %s is a %d joint, "
                              "was %d", SOURCES[s], ORDERS[o], m->name[k], m->jtype[k],
                              orig->model->jtype[b]);
                /* a foot's box is fitted to the clip's motion (docs/MOCAP.md, "The sole"),
                 * which the generated file holds to 6 decimals: the same to 1e-6 */
                const bool fitted = ck_has_box(m, k);
                fb_ck_near(m->I[k].m, orig->model->I[b].m, fitted ? 1e-6 : 1e-9, 1e-12);
            }
            fb_ck_near(fb_model_mass(m), fb_model_mass(orig->model), 1e-7, 0.0);
            /* an unperturbed export keeps every joint's 6 channels and lines up with the input */
            fb_motion* mo = fb_motion_from_clip(six, ch, 0.0, 0, 0, &err);
            ck_assert_msg(mo, "%s", err.msg);
            ck_assert_msg(fb_motion_write_bvh(six, ch, mo, 1.0, out, &err) == FB_OK, "%s",
                          err.msg);
            fb_clip* back = fb_clip_load(out, &fast, NULL, &err);
            ck_assert_msg(back, "%s", err.msg);
            ck_assert_int_eq(back->nframe, six->nframe);
            for (int i = 0; i < six->njoint; i++) {
                ck_assert_int_eq(back->joint[i].nchan, 6);
                ck_assert(memcmp(back->joint[i].chan, six->joint[i].chan, sizeof six->joint[i].chan)
                          == 0);
            }
            /* every joint but those the rules freeze a parent of (fingers: dropped joints
             * keep their rest pose, as in the original's character) */
            bool* below_drop = calloc((size_t)six->njoint, sizeof(bool));
            ck_assert_ptr_nonnull(below_drop);
            int frozen = 0;
            for (int i = 1; i < six->njoint; i++) {
                const int p = six->joint[i].parent;
                below_drop[i] = below_drop[p] || ch->role[p] == FB_ROLE_DROPPED;
                frozen += below_drop[i];
            }
            const double off = ck_bvh_fk_distance(six, 0, back, 0, six->nframe, 1.0, below_drop,
                                                  &matched, where);
            free(below_drop);
            printf("six-channel %s %s: %d joints, %d floating, units %s; export off by %.2e cm "
                   "at %d joints (worst %s; %d below dropped joints not compared)\n", SOURCES[s],
                   ORDERS[o], six->njoint, count_joints(m, FB_JOINT_FLOATING), six->unit_name,
                   off, matched, where, frozen);
            ck_assert_msg(off < LINE_UP_CM, "%s %s: the export is off by %g cm (%s)", SOURCES[s],
                          ORDERS[o], off, where);
            fb_clip_destroy(back);
            fb_motion_destroy(mo);
            fb_character_destroy(ch);
            fb_clip_destroy(six);
            unlink(path);
            unlink(out);
        }
        fb_character_destroy(orig);
        fb_clip_destroy(src);
    }
    rmdir(dir);
    free(rules);
}
END_TEST

/* The bundled walk (CMU units) in the six-channel layout with its left thigh's position channels
 * (the LeftKnee joint's) stretching it from its length to 1.2 times over the clip: the bone
 * built is the channels' mean (1.1 times: its direction does not change), 0.1 times off at the
 * ends, warned with its name and 20.0 %; the dummy root is folded away; an export of a frame
 * range, resampled or not, writes every position channel as the input has it at that time, so
 * it still lines up with the input (forward kinematics in the test). */
START_TEST(stretched_bones_are_measured_and_exported_as_the_input) {
    char dir[64], path[256], out[256], src_path[1024], where[96];
    ck_tmpdir(dir, sizeof dir, "stretch");
    snprintf(path, sizeof path, "%s/stretch.bvh", dir);
    snprintf(out, sizeof out, "%s/out.bvh", dir);
    snprintf(src_path, sizeof src_path, "%s/131_01.bvh", FB_DATA_DIR);
    fb_clip* src = load_fast(src_path);
    ck_assert_int_eq(src->height_from, FB_HEIGHT_REST);
    const ck_six_opts so = {.order = "ZXY", .scale = CM_PER_CMU, .stretch = "LeftKnee",
                            .stretch_by = 0.2};
    ck_write_six_channel(src, &so, path);
    const double thigh = fb_v3_norm(src->joint[fb_clip_joint_by_name(src, "LeftKnee")].offset) *
                         CM_PER_CMU * 0.01; /* m */
    fb_clip_destroy(src);
    fb_clip* c = load_fast(path);
    ck_assert_int_eq(c->height_from, FB_HEIGHT_EARLY);
    ck_assert_str_eq(c->unit_name, "cm");
    fb_rules* rules = malloc(sizeof *rules);
    ck_assert_ptr_nonnull(rules);
    bundled_rules(rules);
    fb_character* ch = build_with(c, rules);
    free(rules);
    /* the dummy root: no body, its child the floating root */
    ck_assert_int_eq(ch->root, 1);
    ck_assert_int_eq(ch->role[0], FB_ROLE_FOLDED);
    ck_assert_int_eq(ch->body_of_joint[0], 0);
    ck_assert_int_eq(ch->body_of_joint[1], 1);
    ck_assert_int_eq(ch->model->jtype[1], FB_JOINT_FLOATING);
    ck_assert_int_eq(ch->model->parent[1], 0);
    /* the stretched bone */
    const int knee = fb_clip_joint_by_name(c, "LeftKnee");
    const fb_bone_info* b = &ch->bone[knee];
    ck_assert(b->from_channels && !b->offset_agrees);
    fb_ck_near(b->min_len, thigh, 1e-9, 0.0);
    fb_ck_near(b->max_len, 1.2 * thigh, 1e-9, 0.0);
    fb_ck_near(b->length, 1.1 * thigh, 1e-9, 0.0);
    fb_ck_near(b->max_dev, 0.1 * thigh, 1e-8, 0.0);
    /* the others agree with OFFSET and are not warned about */
    int warned = -1;
    for (int i = 2; i < c->njoint; i++) {
        ck_assert(ch->bone[i].from_channels);
        ck_assert(i == knee || (ch->bone[i].offset_agrees && ch->bone[i].max_dev < 1e-9));
    }
    for (int k = 0; k < ch->nwarn && k < FB_CLIP_MAX_WARN; k++) {
        if (strstr(ch->warn[k], "bone ")) {
            ck_assert_int_lt(warned, 0);
            warned = k;
        }
    }
    ck_assert_int_ge(warned, 0);
    char figure[32];
    snprintf(figure, sizeof figure, "up to %.1f cm", 10.0 * thigh);
    ck_assert_msg(strstr(ch->warn[warned], "'LeftKnee'") && strstr(ch->warn[warned], "(20.0%)") &&
                      strstr(ch->warn[warned], figure),
                  "%s", ch->warn[warned]);
    /* exports of frames 100..399 at the clip's rate and at half of it */
    for (int half = 0; half < 2; half++) {
        fb_error err;
        fb_motion* mo = fb_motion_from_clip(c, ch, half ? 60.0 : 0.0, 100, 400, &err);
        ck_assert_msg(mo, "%s", err.msg);
        ck_assert_msg(fb_motion_write_bvh(c, ch, mo, 1.0, out, &err) == FB_OK, "%s", err.msg);
        fb_clip* back = load_fast(out);
        const int step = half ? 2 : 1; /* the input frame nearest each sample */
        ck_assert_int_eq(back->nframe, half ? 150 : 300);
        double worst = 0.0;
        for (int k = 0; k < back->nframe; k++) {
            for (int i = 0; i < c->njoint; i++) {
                const fb_clip_joint* j = &c->joint[i];
                for (int q = 0; q < j->nchan; q++) {
                    const size_t at = (size_t)(j->col + q);
                    if (j->chan[q] <= FB_CH_ZPOS || i == 0) {
                        /* the input at the sample's time, linear between frames (the clip's
                         * frame time is 0.0083333 s, not 1/120: 60 fps samples drift off
                         * every second frame) */
                        const double fs = 100.0 + (half ? k / 60.0 / c->frame_time : k);
                        const int f0 = (int)floor(fs + 1e-9);
                        const double a = fmax(fs - f0, 0.0);
                        const double v0 = c->frames[(size_t)f0 * c->nchan + at];
                        const double in =
                            a > 0.0 ? v0 + a * (c->frames[(size_t)(f0 + 1) * c->nchan + at] - v0)
                                    : v0;
                        worst = fmax(worst, fabs(back->frames[(size_t)k * back->nchan + at] - in));
                    }
                }
            }
            const double off = ck_bvh_fk_distance(c, 100 + step * k, back, k, 1, 1.0, NULL,
                                                  NULL, where);
            ck_assert_msg(off < LINE_UP_CM, "frame %d: off by %g cm (%s)", k, off, where);
            ck_assert_msg(half || off < 1e-4, "frame %d: off by %g cm (%s)", k, off, where);
        }
        /* 6 decimals written */
        ck_assert_msg(worst <= 5e-7 + 1e-12, "position channels off the input's by %g", worst);
        fb_clip_destroy(back);
        fb_motion_destroy(mo);
    }
    fb_character_destroy(ch);
    fb_clip_destroy(c);
    unlink(path);
    unlink(out);
    rmdir(dir);
}
END_TEST

/* World heading of a character at clip frame f: its forward turned by the root body's
 * orientation there (the motion's q, kinematics). */
static fb_v3 heading_at(const fb_clip* c, const fb_character* ch, int f) {
    fb_error err;
    fb_motion* mo = fb_motion_from_clip(c, ch, 0.0, f, f + 1, &err);
    ck_assert_msg(mo, "%s", err.msg);
    fb_data* d = ck_data(ch->model);
    memcpy(d->q, mo->q, (size_t)mo->nq * sizeof(double));
    fb_kinematics_pos(ch->model, d);
    const fb_v3 h = fb_m3_tr_mv(d->X_0[1].E, fb_character_forward(c, ch));
    fb_data_destroy(d);
    fb_motion_destroy(mo);
    return h;
}

/* The six-channel walk faces where the original walks: its rest pose lies along a line, so its
 * forward comes from the first frame that stands, in the hips' turned axes; turned into the
 * world at any frame it is the original's heading (read from its rest pose) within 20 degrees
 * (measured 11.3: frame 0 is mid-stride, arms swinging, against the original's rest pose),
 * never the line's arbitrary direction (read from the rest pose it is 155 degrees off). */
START_TEST(six_channel_clips_face_the_original_way) {
    char dir[64], path[256], src_path[1024];
    ck_tmpdir(dir, sizeof dir, "face");
    snprintf(path, sizeof path, "%s/six.bvh", dir);
    snprintf(src_path, sizeof src_path, "%s/131_01.bvh", FB_DATA_DIR);
    fb_clip* src = load_fast(src_path);
    const ck_six_opts so = {.order = "ZXY", .scale = CM_PER_CMU};
    ck_write_six_channel(src, &so, path);
    fb_clip* six = load_fast(path);
    fb_error err;
    fb_character* a = fb_character_build(src, NULL, &err);
    fb_character* b = fb_character_build(six, NULL, &err);
    ck_assert(a && b);
    double worst = 0.0;
    for (int f = 0; f < src->nframe; f += 50) {
        const fb_v3 ha = heading_at(src, a, f), hb = heading_at(six, b, f);
        fb_ck_near(fb_v3_norm(hb), 1.0, 1e-9, 0.0);
        worst = fmax(worst, acos(fmin(1.0, fb_v3_dot(ha, hb))) * 180.0 / FB_PI);
    }
    printf("six-channel walk: heading within %.2f deg of the original's\n", worst);
    ck_assert_msg(worst < 20.0, "headings differ by up to %g deg", worst);
    fb_character_destroy(a);
    fb_character_destroy(b);
    fb_clip_destroy(six);
    fb_clip_destroy(src);
    unlink(path);
    rmdir(dir);
}
END_TEST

static Suite* mocap_suite(void) {
    Suite* s = suite_create("mocap");
    TCase* tc = tcase_create("mocap");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, line_endings_crlf_lf_cr_and_mixed);
    tcase_add_test(tc, numbers_spaces_tabs_and_trailing_whitespace);
    tcase_add_test(tc, declared_frame_count_differs_from_lines);
    tcase_add_test(tc, rotation_orders_differ_per_joint);
    tcase_add_test(tc, malformed_files_are_refused_with_file_and_line);
    tcase_add_test(tc, euler_round_trip_in_every_order);
    tcase_add_test(tc, euler_unwrapping_never_jumps);
    tcase_add_test(tc, units_are_detected_from_the_standing_height);
    tcase_add_test(tc, z_up_clips_are_detected_and_stand_up);
    tcase_add_test(tc, units_come_from_standing_poses_when_the_rest_pose_does_not);
    tcase_add_test(tc, non_root_position_channels_are_kept_either_way);
    tcase_add_test(tc, hinge_axis_is_recovered_from_the_motion);
    tcase_add_test(tc, capsules_stop_short_of_narrower_joints);
    tcase_add_test(tc, mass_models_and_targets);
    tcase_add_test(tc, rules_files_are_checked);
    tcase_add_test(tc, resampling_follows_a_steady_rotation);
    tcase_add_test(tc, shared_clips_agree_with_assimp);
    tcase_add_test(tc, gltf_through_assimp_matches_the_bvh);
    tcase_add_test(tc, shared_clips_round_trip_and_have_plausible_mass);
    tcase_add_test(tc, six_channel_clips_are_articulated_characters);
    tcase_add_test(tc, stretched_bones_are_measured_and_exported_as_the_input);
    tcase_add_test(tc, six_channel_clips_face_the_original_way);
    tcase_add_test(tc, shared_clips_lie_inside_their_joint_ranges);
    tcase_add_test(tc, a_knee_bent_backward_widens_its_stop);
    tcase_add_test(tc, a_bent_rest_knee_still_stops_straight);
    tcase_add_test(tc, ranges_follow_the_anatomy);
    tcase_add_test(tc, range_rules_are_checked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(mocap_suite());
}
