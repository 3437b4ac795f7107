/* featherbone-view end to end, headless: screenshots of the bundled clip drawn under xvfb-run
 * (Mesa's llvmpipe), checked by their pixels, and the command line's refusals.
 *
 * The render palette keeps the sky, ground, grid, shadows and HUD grey (render.h), so the
 * pixels whose channels spread by more than COLOURED_CHROMA are the character and its contact
 * markers. The test fails when the image is not the asked size, when that coloured part is
 * implausibly small (nothing drawn, or drawn off screen) or large (a coloured background, a
 * character filling the frame), and when a frame 4 s later looks the same.
 *
 * Without xvfb-run, or when the viewer says there is no OpenGL 3.3 (its exit code 3), the test
 * reports itself skipped (exit 77) with the reason: it never passes without looking. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <stb_image.h>

#define SKIP 77
/* The asked image size. */
#define W 640
#define H 360
/* A pixel is "coloured" when its channels spread by more than this (0..255); the background's
 * spread stays within RENDER_GREY_CHROMA = 24 (render.h), the body colours' well above 48. */
#define COLOURED_CHROMA 48
/* Plausible coverage of the character in a frame of the whole walk. */
#define COVER_MIN 0.005
#define COVER_MAX 0.40
/* Two frames 4 s apart: the character covers different pixels, at least this fraction. */
#define DIFFER_MIN 0.002

static int failures = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Runs a shell command, returns its exit code (-1 when it did not exit normally). */
static int run(const char* cmd) {
    printf("+ %s\n", cmd);
    fflush(stdout);
    const int st = system(cmd);
    return (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
}

static bool have_xvfb_run(void) {
    return system("command -v xvfb-run >/dev/null 2>&1") == 0;
}

/* Renders the bundled clip at time t into path; returns the viewer's exit code. */
static int screenshot(const char* path, double t) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "xvfb-run -a '%s' '%s/131_01.bvh' --screenshot '%s' --size %dx%d --time %.3f",
             FB_VIEW_PATH, FB_DATA_DIR, path, W, H, t);
    remove(path);
    return run(cmd);
}

/* Fraction of coloured pixels; NULL image = -1. */
static double coloured_fraction(const unsigned char* px, int n) {
    long count = 0;
    for (int i = 0; i < n; i++) {
        const unsigned char* p = px + 3 * i;
        const int hi = p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2]) : (p[1] > p[2] ? p[1] : p[2]);
        const int lo = p[0] < p[1] ? (p[0] < p[2] ? p[0] : p[2]) : (p[1] < p[2] ? p[1] : p[2]);
        count += hi - lo > COLOURED_CHROMA;
    }
    return (double)count / n;
}

/* Fraction of pixels coloured in one image and not in the other: where the character moved
 * (the HUD text and timeline, which also change, are grey and do not count). */
static double moved_fraction(const unsigned char* a, const unsigned char* b, int n) {
    long count = 0;
    for (int i = 0; i < n; i++) {
        count += (coloured_fraction(a + 3 * i, 1) > 0.0) != (coloured_fraction(b + 3 * i, 1) > 0.0);
    }
    return (double)count / n;
}

/* No temporary files left next to the images. */
static void check_no_leftovers(const char* dir) {
    DIR* d = opendir(dir);
    CHECK(d, "cannot list %s", dir);
    if (!d) {
        return;
    }
    for (struct dirent* e; (e = readdir(d));) {
        CHECK(!strstr(e->d_name, ".tmp"), "a temporary file was left behind: %s/%s", dir,
              e->d_name);
    }
    closedir(d);
}

/* Bad arguments and bad clips: exit code 2 with a message, no window needed. */
static void check_refusals(const char* out) {
    const char* bad[] = {
        "",                                                               /* no clip */
        "'" FB_TEST_DATA_DIR "/missing.bvh'",                             /* unreadable */
        "'" FB_TEST_DATA_DIR "/bad_header.bvh'",                          /* malformed */
        "'" FB_DATA_DIR "/131_01.bvh' --size 12x9000",                    /* size out of range */
        "'" FB_DATA_DIR "/131_01.bvh' --time -1",                         /* negative time */
        "'" FB_DATA_DIR "/131_01.bvh' --time 100 --screenshot /dev/null", /* past the end */
        "'" FB_DATA_DIR "/131_01.bvh' --every 2", /* --every without --frames */
        "'" FB_DATA_DIR "/131_01.bvh' --bogus",   /* unknown option */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s/refusal.txt'", FB_VIEW_PATH, bad[k],
                 out);
        const int rc = run(cmd);
        CHECK(rc == 2, "expected exit code 2 for `featherbone-view %s`, got %d", bad[k], rc);
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' --help >/dev/null", FB_VIEW_PATH);
    CHECK(run(cmd) == 0, "--help should exit 0");
}

int main(void) {
    const char* out = FB_TEST_OUT_DIR;
    mkdir(out, 0777);
    check_refusals(out);
    if (!have_xvfb_run()) {
        printf("SKIP: xvfb-run not found (Debian xvfb + xauth): screenshots not checked\n");
        return failures ? 1 : SKIP;
    }
    char a_path[1024], b_path[1024];
    snprintf(a_path, sizeof a_path, "%s/view_t1.png", out);
    snprintf(b_path, sizeof b_path, "%s/view_t5.png", out);
    const double t0 = now();
    int rc = screenshot(a_path, 1.0);
    const double t1 = now();
    if (rc == 3) {
        printf("SKIP: the viewer found no OpenGL 3.3 under xvfb-run (Mesa libgl1-mesa-dri?)\n");
        return failures ? 1 : SKIP;
    }
    CHECK(rc == 0, "screenshot at t = 1 exited %d", rc);
    rc = screenshot(b_path, 5.0);
    CHECK(rc == 0, "screenshot at t = 5 exited %d", rc);
    printf("one screenshot took %.2f s (xvfb-run, clip load, render, PNG)\n", t1 - t0);

    int w = 0, h = 0, n = 0, w2 = 0, h2 = 0;
    unsigned char* a = stbi_load(a_path, &w, &h, &n, 3);
    unsigned char* b = stbi_load(b_path, &w2, &h2, &n, 3);
    CHECK(a && b, "cannot read the screenshots back (%s, %s)", a_path, b_path);
    if (a && b) {
        CHECK(w == W && h == H, "t = 1 image is %dx%d, asked %dx%d", w, h, W, H);
        CHECK(w2 == W && h2 == H, "t = 5 image is %dx%d, asked %dx%d", w2, h2, W, H);
    }
    if (a && b && w == W && h == H && w2 == W && h2 == H) {
        const double ca = coloured_fraction(a, W * H), cb = coloured_fraction(b, W * H);
        const double diff = moved_fraction(a, b, W * H);
        printf("coloured (character) pixels: %.2f%% at t = 1, %.2f%% at t = 5 "
               "(plausible: %.1f%% .. %.0f%%)\n",
               100 * ca, 100 * cb, 100 * COVER_MIN, 100 * COVER_MAX);
        printf("pixels coloured at one time only (t = 1 vs 5): %.2f%% (at least %.1f%%)\n",
               100 * diff, 100 * DIFFER_MIN);
        CHECK(ca >= COVER_MIN && ca <= COVER_MAX, "t = 1: %.4f of pixels coloured", ca);
        CHECK(cb >= COVER_MIN && cb <= COVER_MAX, "t = 5: %.4f of pixels coloured", cb);
        CHECK(diff >= DIFFER_MIN,
              "the character covers the same pixels at t = 1 and t = 5 "
              "but for %.4f of them",
              diff);
        /* the top-left corner is sky (or HUD panel) and grey: the palette contract holds */
        CHECK(coloured_fraction(a + 3 * (W * 2 + W / 2), 1) == 0.0, "the sky is not grey");
    }
    stbi_image_free(a);
    stbi_image_free(b);
    check_no_leftovers(out);
    printf("%s\n", failures ? "test_viewer: FAILED" : "test_viewer: passed");
    return failures ? 1 : 0;
}
