/* featherbone batch, end to end through the real binary: a manifest of good and bad jobs on
 * two threads, the re-run that skips complete outputs, a stale input that brings its job
 * back, two shards that together run each job once, bit-identical BVH from the same job on
 * different threads and runs, whole per-job message blocks, and the manifest's errors. Short
 * clips (frames 100:220 of the bundled walk) keep it to a few seconds. */
#define _POSIX_C_SOURCE 200809L /* popen, mkdtemp, utimensat */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "support.h"

#define CLIP FB_DATA_DIR "/131_01.bvh"
#define JOB "\"frames\": \"100:220\", \"clip\": \"" CLIP "\""

static char out[1 << 17];

/* Runs the CLI with `args`, stdout and stderr into out; returns the exit code. */
static int run(const char* args) {
    return ck_run(FB_CLI_PATH, args, out, sizeof out);
}

static void write_text(const char* dir, const char* name, const char* text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* The whole file (caller frees), or NULL when it does not exist. */
static char* slurp(const char* dir, const char* name, size_t* len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static bool exists(const char* dir, const char* name) {
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static int count(const char* text, const char* needle) {
    int n = 0;
    for (const char* s = strstr(text, needle); s; s = strstr(s + 1, needle)) {
        n++;
    }
    return n;
}

/* Every line is a job's ("[line L] ...") or the summary's ("batch: ..."), and each job's
 * lines come in one block: once another job's line follows, that job never reappears. */
static void check_blocks(const char* text) {
    bool ended[1000] = {false};
    int current = -1;
    for (const char* s = text; *s;) {
        const char* eol = strchr(s, '\n');
        int line = -1;
        if (sscanf(s, "[line %d] ", &line) == 1) {
            ck_assert_msg(line > 0 && line < 1000 && !ended[line],
                          "job line %d printed in two pieces:\n%s", line, text);
            if (current > 0 && current != line) {
                ended[current] = true;
            }
            current = line;
        } else {
            ck_assert_msg(strncmp(s, "batch: ", 7) == 0, "a stray line: %.*s",
                          (int)(eol ? eol - s : (long)strlen(s)), s);
        }
        s = eol ? eol + 1 : s + strlen(s);
    }
}

static char dir[256];

static void make_dir(void) {
    ck_tmpdir(dir, sizeof dir, "batch");
}

static void remove_dir(void) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Lines 2, 4, 5 are good (5 repeats 2 with another output), 6 has an unknown key, 7 an
 * unknown target; outputs relative to the manifest's directory. */
static const char MANIFEST[] =
    "# three good jobs and two bad ones\n"
    "{" JOB ", \"out\": \"a.bvh\", \"hits\": [\"time=0.4,target=LeftElbow\"]}\n"
    "\n"
    "{" JOB ", \"out\": \"b.bvh\", \"hits_file\": \"b_hits.json\", \"report\": \"b.json\"}\n"
    "  {" JOB ", \"out\": \"c.bvh\", \"hits\": [{\"time\": 0.4, \"target\": \"LeftElbow\"}]}\n"
    "{" JOB ", \"out\": \"d.bvh\", \"hitz\": [\"time=0.4,target=LeftElbow\"]}\r\n"
    "{" JOB ", \"out\": \"e.bvh\", \"hits\": [\"time=0.4,target=LeftElbw\"]}\n";

/* Which job lines an output shows finishing (done, skipped or failed), as a bit set. */
static unsigned finished_lines(const char* text) {
    unsigned set = 0;
    const char* ends[] = {": done in", ": skipped (outputs complete)", ": failed (exit"};
    for (int line = 1; line < 10; line++) {
        for (int k = 0; k < 3; k++) {
            char needle[64];
            snprintf(needle, sizeof needle, "m.jsonl:%d%s", line, ends[k]);
            if (strstr(text, needle)) {
                ck_assert_msg(!(set & (1u << line)), "line %d finished twice", line);
                ck_assert_int_eq(count(text, needle), 1);
                set |= 1u << line;
            }
        }
    }
    return set;
}

START_TEST(runs_skips_shards_and_is_deterministic) {
    make_dir();
    write_text(dir, "m.jsonl", MANIFEST);
    write_text(dir, "b_hits.json",
               "{\"hits\": [{\"time\": 0.5, \"target\": \"Head\", \"from\": \"back\"}]}\n");
    char args[1024];
    snprintf(args, sizeof args, "batch '%s/m.jsonl' --jobs 2", dir);

    /* first run: three sets of outputs, the two bad lines named with manifest:line */
    ck_assert_int_eq(run(args), 1);
    check_blocks(out);
    const char* made[] = {"a.bvh",  "a.balls.json", "b.bvh",       "b.balls.json",
                          "b.json", "c.bvh",        "c.balls.json"};
    for (int k = 0; k < 7; k++) {
        ck_assert_msg(exists(dir, made[k]), "%s missing:\n%s", made[k], out);
    }
    ck_assert(!exists(dir, "d.bvh") && !exists(dir, "e.bvh"));
    ck_assert_ptr_nonnull(strstr(out, "m.jsonl:6: \"hitz\": unknown key (did you mean \"hits\"?)"));
    ck_assert_ptr_nonnull(strstr(out, "m.jsonl:7: hit 1: target 'LeftElbw'"));
    ck_assert_ptr_nonnull(strstr(out, "5 jobs, 2 at once: 3 done, 0 skipped, 2 failed"));
    ck_assert_ptr_nonnull(strstr(out, "failed lines: 6 7"));
    ck_assert_int_eq((int)finished_lines(out),
                     (1 << 2) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7));

    /* the same job on two threads at once: the same bytes */
    size_t na = 0, nc = 0;
    char* a = slurp(dir, "a.bvh", &na);
    char* c = slurp(dir, "c.bvh", &nc);
    ck_assert(a && c && na == nc && na > 1000 && memcmp(a, c, na) == 0);
    free(c);

    /* re-run: the good three are skipped, the bad two fail again */
    ck_assert_int_eq(run(args), 1);
    check_blocks(out);
    ck_assert_int_eq(count(out, "skipped (outputs complete)"), 3);
    ck_assert_ptr_nonnull(strstr(out, "0 done, 3 skipped, 2 failed"));

    /* an input newer than the outputs brings back its job only */
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec += 10;
    t[1] = t[0];
    char hits[512];
    snprintf(hits, sizeof hits, "%s/b_hits.json", dir);
    ck_assert_int_eq(utimensat(AT_FDCWD, hits, t, 0), 0);
    ck_assert_int_eq(run(args), 1);
    ck_assert_ptr_nonnull(strstr(out, "m.jsonl:4: done in"));
    ck_assert_ptr_nonnull(strstr(out, "1 done, 2 skipped, 2 failed"));

    /* two shards, forced: every job runs in exactly one of them */
    snprintf(args, sizeof args, "batch '%s/m.jsonl' --jobs 2 --force --shard 1/2", dir);
    ck_assert_int_eq(run(args), 1);
    check_blocks(out);
    const unsigned first = finished_lines(out);
    ck_assert_ptr_nonnull(strstr(out, "3 jobs (shard 1/2 of 5)"));
    snprintf(args, sizeof args, "batch '%s/m.jsonl' --jobs 2 --force --shard 2/2", dir);
    ck_assert_int_eq(run(args), 1);
    check_blocks(out);
    const unsigned second = finished_lines(out);
    ck_assert_uint_eq(first, (1 << 2) | (1 << 5) | (1 << 7)); /* job indices 0, 2, 4 */
    ck_assert_uint_eq(first & second, 0);
    ck_assert_uint_eq(first | second, (1 << 2) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7));

    /* the rerun of line 2 in another process and thread: the same bytes again */
    size_t na2 = 0;
    char* a2 = slurp(dir, "a.bvh", &na2);
    ck_assert(a2 && na2 == na && memcmp(a, a2, na) == 0);
    free(a2);
    free(a);
    remove_dir();
}
END_TEST

START_TEST(bad_lines_fail_alone) {
    make_dir();
    write_text(dir, "m.jsonl",
               "{\"clip\": \"missing.bvh\", \"out\": \"x.bvh\"}\n" /* 1: runs, fails */
               "{\"clip\": \"missing.bvh\", \"out\": \"x.bvh\"}\n" /* 2: same output */
               "{\"clip\": \n"                                     /* 3: not JSON */
               "[1, 2]\n"                                          /* 4: not an object */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"rate\": \"fast\"}\n" /* 5 */
               "{\"clip\": \"c.bvh\"}\n"                                         /* 6: no out */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"controller\": \"pid\"}\n" /* 7 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"random_hits\": 99}\n"     /* 8 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"frames\": \"5:3\"}\n"     /* 9 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"random-hits\": 2}\n"      /* 10 */
               "{\"clip\": \"c.bvh\", \"out\": \"c.bvh\"}\n" /* 11: overwrites */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"hits\": [{\"time\": 1, "
               "\"target\": \"Head\", \"spin\": 3}]}\n"               /* 12 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\"} trailing\n" /* 13 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, \"sample_load\": "
               "\"p.json\"}\n"                                                           /* 14 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": \"many\"}\n"       /* 15 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample_hit_scale\": 0.03}\n" /* 16 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, "
               "\"sample_hit_scale\": 11}\n"                                       /* 17 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"anchor\": \"hips\"}\n" /* 18 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample_pull\": 0.2}\n" /* 19 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, "
               "\"sample_pull\": 1}\n"                                              /* 20 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample_step\": 0.03}\n" /* 21 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, "
               "\"sample_step\": -0.1}\n"                                                 /* 22 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample_root_scale\": 0.07}\n" /* 23 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, "
               "\"sample_root_scale\": 11}\n"                                              /* 24 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample_height_scale\": 0.1}\n" /* 25 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, "
               "\"sample_height_scale\": -1}\n"                                       /* 26 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample_upright\": 0.7}\n" /* 27 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, "
               "\"sample_upright\": 1}\n"                                       /* 28 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample_hit\": 8}\n" /* 29 */
               "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\", \"sample\": 4, "
               "\"sample_hit\": 0}\n"); /* 30 */
    char args[1024];
    snprintf(args, sizeof args, "batch '%s/m.jsonl' --jobs 3", dir);
    ck_assert_int_eq(run(args), 1);
    const char* expect[] = {
        "m.jsonl:1: ",
        "missing.bvh: cannot open",
        "m.jsonl:2: \"out\": line 1 also writes",
        "m.jsonl:3: not valid JSON",
        "m.jsonl:4: expected an object",
        "m.jsonl:5: \"rate\": expected 30 to 10000 (Hz)",
        "m.jsonl:6: \"out\": required",
        "m.jsonl:7: \"controller\": expected \"pd\" or \"accel\"",
        "m.jsonl:8: \"random_hits\": expected an integer from 0 to",
        "m.jsonl:9: \"frames\": expected \"A:B\"",
        "m.jsonl:10: \"random-hits\": unknown key (did you mean \"random_hits\"?)",
        "m.jsonl:11: \"out\": refusing to overwrite the input",
        "m.jsonl:12: \"hits\": [0]: ",
        "unknown key 'spin'",
        "m.jsonl:13: not valid JSON (at column",
        "m.jsonl:14: \"sample_load\": --sample-load follows a plan without searching",
        "m.jsonl:15: \"sample\": expected an integer from 0 to 100000",
        "m.jsonl:16: \"sample_hit_scale\": --sample-hit-scale weighs the search of --sample N",
        "m.jsonl:17: \"sample_hit_scale\": expected a length in m, 0 to 10",
        "m.jsonl:18: \"anchor\": expected \"path\" or \"feet\"",
        "m.jsonl:19: \"sample_pull\": --sample-pull shapes the search of --sample N",
        "m.jsonl:20: \"sample_pull\": expected a number from 0 to 0.9",
        "m.jsonl:21: \"sample_step\": --sample-step shapes the search of --sample N",
        "m.jsonl:22: \"sample_step\": expected an angle in rad, 0 to 1",
        "m.jsonl:23: \"sample_root_scale\": --sample-root-scale weighs the search of --sample N",
        "m.jsonl:24: \"sample_root_scale\": expected a length in m, 0.001 to 10",
        "m.jsonl:25: \"sample_height_scale\": --sample-height-scale weighs the search of --sample "
        "N",
        "m.jsonl:26: \"sample_height_scale\": expected a length in m, 0 to 10",
        "m.jsonl:27: \"sample_upright\": --sample-upright shapes the search of --sample N",
        "m.jsonl:28: \"sample_upright\": expected a fraction, 0 to 0.99",
        "m.jsonl:29: \"sample_hit\": --sample-hit shapes the search of --sample N",
        "m.jsonl:30: \"sample_hit\": expected an integer from 1 to 100000",
        "30 jobs, 3 at once: 0 done, 0 skipped, 30 failed"};
    for (size_t k = 0; k < sizeof expect / sizeof *expect; k++) {
        ck_assert_msg(strstr(out, expect[k]), "expected '%s' in:\n%s", expect[k], out);
    }
    check_blocks(out);
    remove_dir();
}
END_TEST

/* A search kept by one manifest's job ("sample", "sample_save", with its hit weighed by
 * "sample_hit_scale" and its windows searched with "sample_hit" simulations, its joints pulled by
 * "sample_pull" and stepped by "sample_step", its root scored by "sample_root_scale",
 * "sample_height_scale" and "sample_upright", which its report names) and followed by another's
 * ("sample_load"): the two BVH files byte for byte the same, as with simulate. */
START_TEST(sampling_plans_through_manifests) {
    make_dir();
    write_text(dir, "search.jsonl",
               "{\"clip\": \"" CLIP "\", \"out\": \"a.bvh\", \"frames\": \"0:48\", "
               "\"root\": \"free\", \"sample\": 3, \"sample_save\": \"p.json\", "
               "\"hits\": [\"time=0.2,target=Chest,speed=10,mass=0.45\"], "
               "\"sample_hit_scale\": 0.005, \"sample_pull\": 0.25, \"sample_step\": 0.04, "
               "\"sample_root_scale\": 0.07, \"sample_height_scale\": 0.04, "
               "\"sample_upright\": 0.7, \"sample_hit\": 5, \"report\": \"r.json\"}\n");
    write_text(dir, "follow.jsonl",
               "{\"clip\": \"" CLIP "\", \"out\": \"b.bvh\", \"frames\": \"0:48\", "
               "\"root\": \"free\", \"sample_load\": \"p.json\", "
               "\"hits\": [\"time=0.2,target=Chest,speed=10,mass=0.45\"]}\n");
    char args[1024];
    snprintf(args, sizeof args, "batch '%s/search.jsonl'", dir);
    ck_assert_msg(run(args) == 0, "%s", out);
    ck_assert_msg(strstr(out, "sampling: 4 windows") && exists(dir, "p.json"), "%s", out);
    ck_assert_msg(strstr(out, "3 simulations each (5 in the 4 that answer a hit), 22 in all"), "%s",
                  out);
    size_t nr = 0;
    char* rj = slurp(dir, "r.json", &nr);
    cJSON* report = rj ? cJSON_Parse(rj) : NULL;
    const cJSON* js = cJSON_GetObjectItem(report, "sampling");
    ck_assert_msg(js && cJSON_GetObjectItem(js, "hit_scale_m")->valuedouble == 0.005 &&
                      cJSON_GetObjectItem(js, "pull")->valuedouble == 0.25 &&
                      cJSON_GetObjectItem(js, "step_rad")->valuedouble == 0.04 &&
                      cJSON_GetObjectItem(js, "root_scale_m")->valuedouble == 0.07 &&
                      cJSON_GetObjectItem(js, "height_scale_m")->valuedouble == 0.04 &&
                      cJSON_GetObjectItem(js, "upright")->valuedouble == 0.7 &&
                      cJSON_GetObjectItem(js, "samples_per_window")->valuedouble == 3 &&
                      cJSON_GetObjectItem(js, "hit_samples_per_window")->valuedouble == 5 &&
                      cJSON_GetObjectItem(js, "hit_windows")->valuedouble == 4,
                  "the report does not name the search's options");
    cJSON_Delete(report);
    free(rj);
    snprintf(args, sizeof args, "batch '%s/follow.jsonl'", dir);
    ck_assert_msg(run(args) == 0, "%s", out);
    ck_assert_msg(strstr(out, "following the offsets in"), "%s", out);
    size_t na = 0, nb = 0;
    char* a = slurp(dir, "a.bvh", &na);
    char* b = slurp(dir, "b.bvh", &nb);
    ck_assert(a && b);
    ck_assert_msg(na == nb && memcmp(a, b, na) == 0, "the followed plan wrote another clip");
    free(a);
    free(b);
    remove_dir();
}
END_TEST

START_TEST(bad_usage_exits_2) {
    make_dir();
    write_text(dir, "m.jsonl", "{\"clip\": \"c.bvh\", \"out\": \"y.bvh\"}\n");
    write_text(dir, "empty.jsonl", "# nothing\n\n");
    char args[1024];
    ck_assert_int_eq(run("batch --help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: featherbone batch"));
    ck_assert_ptr_nonnull(strstr(out, "relative to the manifest's directory"));
    ck_assert_int_eq(run("batch"), 2);
    snprintf(args, sizeof args, "batch '%s/none.jsonl'", dir);
    ck_assert_int_eq(run(args), 2);
    ck_assert_ptr_nonnull(strstr(out, "none.jsonl: cannot open"));
    snprintf(args, sizeof args, "batch '%s/empty.jsonl'", dir);
    ck_assert_int_eq(run(args), 2);
    ck_assert_ptr_nonnull(strstr(out, "no jobs"));
    const char* bad[] = {"--jobs 0",  "--shard 3/2",   "--shard 0/2",
                         "--shard 1", "--shard slurm", "--frobnicate"};
    for (int k = 0; k < 6; k++) {
        snprintf(args, sizeof args, "batch '%s/m.jsonl' %s", dir, bad[k]);
        ck_assert_msg(run(args) == 2, "%s: expected exit 2:\n%s", bad[k], out);
    }
    remove_dir();
}
END_TEST

int main(void) {
    /* --shard slurm must not find an array task in the test's environment */
    unsetenv("SLURM_ARRAY_TASK_ID");
    Suite* s = suite_create("batch");
    TCase* tc = tcase_create("cli");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, sampling_plans_through_manifests);
    tcase_add_test(tc, bad_usage_exits_2);
    tcase_add_test(tc, bad_lines_fail_alone);
    tcase_add_test(tc, runs_skips_shards_and_is_deterministic);
    suite_add_tcase(s, tc);
    return ck_run_suite(s);
}
