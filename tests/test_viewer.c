/* featherbone-view end to end, headless: screenshots of the bundled clip drawn under xvfb-run
 * (Mesa's llvmpipe), checked by their pixels, a ball thrown by a click from a --script, and
 * the command line's refusals.
 *
 * The render palette keeps the sky, ground, grid, shadows and HUD grey (render.h), so the
 * pixels whose channels spread by more than COLOURED_CHROMA are the character and its contact
 * markers. The test fails when the image is not the asked size, when that coloured part is
 * implausibly small (nothing drawn, or drawn off screen) or large (a coloured background, a
 * character filling the frame), and when a frame 4 s later looks the same.
 *
 * Hits: before its ball is launched, a simulation with a hit draws what the one without draws;
 * just after the hit, it draws something else (the ball, the arm pushed off). A script throws
 * a ball at the forearm through the click path (ray cast from the eye), takes screenshots and
 * exports the take (E); `featherbone simulate --hits` of the exported hits writes the same BVH
 * byte for byte and reports the forearm pushed >= 3 cm off the clip (4.4 cm measured with the
 * human strength table) and back within 2 cm.
 *
 * Gains: a script edits LeftElbow's settle time through the gains panel's path (`gain`), has
 * a negative and a NaN value refused, saves; the file differs from the original in that one
 * line (a text diff, with the LeftElbow object around it), `featherbone simulate --gains` of
 * it writes the BVH the viewer exported (E) byte for byte, and after `undo` the file saved is
 * the original byte for byte. With the panel built, a screenshot with it open shows it (a
 * dark window where the sky was).
 *
 * Balance: with a free root (a gains file whose root mode is free), the frame at 0.5 s shows
 * the balance overlay's cyan near the feet (the support polygon, the centre of mass's ground
 * disc and the planner's target); with the overlay toggled off by its key (B), none.
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

/* Renders the bundled clip at time t into path with more options; returns the viewer's exit
 * code. */
static int screenshot_with(const char* path, double t, const char* more) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "xvfb-run -a '%s' '%s/131_01.bvh' --screenshot '%s' --size %dx%d --time %.3f %s",
             FB_VIEW_PATH, FB_DATA_DIR, path, W, H, t, more);
    remove(path);
    return run(cmd);
}

static int screenshot(const char* path, double t) {
    return screenshot_with(path, t, "");
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

static bool slurp(const char* path, char* buf, size_t cap);

/* The viewer on the bundled clip with `args` exits 2 and says `says` on stderr. */
static void refused_saying(const char* out, const char* args, const char* says) {
    char cmd[4096], said[1024] = "";
    snprintf(cmd, sizeof cmd, "'%s' '%s/131_01.bvh' %s >/dev/null 2>'%s/refusal.txt'", FB_VIEW_PATH,
             FB_DATA_DIR, args, out);
    const int rc = run(cmd);
    snprintf(cmd, sizeof cmd, "%s/refusal.txt", out);
    slurp(cmd, said, sizeof said);
    CHECK(rc == 2 && strstr(said, says), "`featherbone-view %s`: exit %d, '%s'", args, rc, said);
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
        "'" FB_DATA_DIR "/131_01.bvh' --every 2",                /* --every without --frames */
        "'" FB_DATA_DIR "/131_01.bvh' --bogus",                  /* unknown option */
        "'" FB_DATA_DIR "/131_01.bvh' --hit time=1,target=Tail", /* no such joint */
        "'" FB_DATA_DIR "/131_01.bvh' --hit time=1",             /* no target */
        "'" FB_DATA_DIR "/131_01.bvh' --playback --hit time=1,target=Head", /* no physics */
        "'" FB_DATA_DIR "/131_01.bvh' --gains /nonexistent.json",           /* unreadable gains */
        "'" FB_DATA_DIR "/131_01.bvh' --sample-load /nonexistent.json",     /* unreadable plan */
        "'" FB_DATA_DIR "/131_01.bvh' --playback --sample-load p.json",     /* no physics */
        "'" FB_DATA_DIR "/131_01.bvh' --script /nonexistent.txt",           /* unreadable script */
        "'" FB_DATA_DIR "/131_01.bvh' --script '" FB_TEST_DATA_DIR "/bad_header.bvh'", /* bad */
        "'" FB_DATA_DIR "/131_01.bvh' --playback --strength men", /* no physics */
        "'" FB_DATA_DIR "/131_01.bvh' --playback --root free",    /* no physics */
        "'" FB_DATA_DIR "/131_01.bvh' --root floating",           /* no such root mode */
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
    /* a good gains file and --strength: the file's limits or the strength's, not both */
    snprintf(cmd, sizeof cmd, "'%s' gains init '%s/131_01.bvh' -o '%s/g.json' >/dev/null",
             FB_CLI_PATH, FB_DATA_DIR, out);
    CHECK(run(cmd) == 0, "gains init for the refusals failed");
    char args[1024];
    snprintf(args, sizeof args, "--gains '%s/g.json' --strength men", out);
    refused_saying(out, args, "--strength: the torque limits are the gains file's");
    snprintf(args, sizeof args, "--gains '%s/g.json' --root free", out);
    refused_saying(out, args, "--root: the root's mode is the gains file's");
    /* a strength it does not know: refused as that, not as an unknown option */
    refused_saying(out, "--strength strong",
                   "--strength: expected mean, men or women, found 'strong'");
}

/* Reads an RGB image, checking its size; NULL (and a failure) otherwise. */
static unsigned char* load(const char* path) {
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(path, &w, &h, &n, 3);
    CHECK(px, "cannot read %s", path);
    if (px && (w != W || h != H)) {
        CHECK(false, "%s is %dx%d, asked %dx%d", path, w, h, W, H);
        stbi_image_free(px);
        return NULL;
    }
    return px;
}

/* The fraction of pixels coloured in one of two images only; -1 when one does not read. */
static double moved_between(const char* a_path, const char* b_path) {
    unsigned char* a = load(a_path);
    unsigned char* b = load(b_path);
    const double f = a && b ? moved_fraction(a, b, W * H) : -1.0;
    stbi_image_free(a);
    stbi_image_free(b);
    return f;
}

#define HIT "time=1.2,target=LeftElbow,speed=10,mass=0.45,radius=0.11"
/* Just after the hit, the ball and the arm pushed off change at least this fraction. */
#define HIT_MOVED_MIN 0.0005

/* The frames compared pixel by pixel are drawn without the HUD: its translucent box darkens
 * what it covers, and two runs whose HUD says different things (a hit listed, a script's
 * export) would differ under a box of another size, not in the character. */
#define NO_HUD "--no-hud "

static void check_hit_frames(const char* out) {
    char plain[1024], hit[1024];
    snprintf(plain, sizeof plain, "%s/plain.png", out);
    snprintf(hit, sizeof hit, "%s/hit.png", out);
    CHECK(screenshot_with(plain, 0.9, NO_HUD) == 0, "screenshot at 0.9 s");
    CHECK(screenshot_with(hit, 0.9, NO_HUD "--hit " HIT) == 0, "screenshot with a hit at 0.9 s");
    const double before = moved_between(plain, hit);
    CHECK(screenshot_with(plain, 1.25, NO_HUD) == 0, "screenshot at 1.25 s");
    CHECK(screenshot_with(hit, 1.25, NO_HUD "--hit " HIT) == 0, "screenshot with a hit at 1.25 s");
    const double after = moved_between(plain, hit);
    printf("with and without a hit at 1.2 s, pixels coloured in one only: %.4f%% at 0.9 s "
           "(before the launch: expected 0), %.4f%% at 1.25 s (at least %.3f%%)\n",
           100 * before, 100 * after, 100 * HIT_MOVED_MIN);
    CHECK(before == 0.0, "before the ball's launch the frames differ (%.5f)", before);
    CHECK(after >= HIT_MOVED_MIN, "just after the hit the frames differ by %.5f only", after);
}

/* Reads a whole small text file into buf; false when it cannot. */
static bool slurp(const char* path, char* buf, size_t cap) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        return false;
    }
    const size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return true;
}

static bool same_bytes(const char* a_path, const char* b_path) {
    FILE* a = fopen(a_path, "rb");
    FILE* b = fopen(b_path, "rb");
    bool same = a && b;
    for (int ca = 0, cb = 0; same && ca != EOF;) {
        ca = fgetc(a);
        cb = fgetc(b);
        same = ca == cb;
    }
    if (a) {
        fclose(a);
    }
    if (b) {
        fclose(b);
    }
    return same;
}

/* Writes `text` as OUT/NAME.script, runs the viewer on the bundled clip with it and `more`
 * options, the output to OUT/NAME.log, read into said (and printed); the exit code. */
static int run_script(const char* out, const char* name, const char* text, const char* more,
                      char* said, size_t cap) {
    char script[1024], log[1024], cmd[8192];
    snprintf(script, sizeof script, "%s/%s.script", out, name);
    snprintf(log, sizeof log, "%s/%s.log", out, name);
    FILE* f = fopen(script, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", script);
    snprintf(cmd, sizeof cmd,
             "xvfb-run -a '%s' '%s/131_01.bvh' --script '%s' --size %dx%d %s >'%s' 2>&1",
             FB_VIEW_PATH, FB_DATA_DIR, script, W, H, more, log);
    const int rc = run(cmd);
    said[0] = '\0';
    slurp(log, said, cap);
    printf("%s", said);
    return rc;
}

static void check_script(const char* out) {
    char cmd[8192], text[8192], more[1200];
    snprintf(text, sizeof text,
             "# test_viewer: a ball thrown at the forearm by a click, through the script\n"
             "0.5 screenshot %s/script_before.png\n"
             "1.0 throw LeftElbow\n"
             "2.0 screenshot %s/script_after.png\n"
             "2.5 key e\n"
             "2.6 quit\n",
             out, out);
    snprintf(more, sizeof more, NO_HUD "--export '%s/take'", out);
    char said[8192];
    int rc = run_script(out, "throw", text, more, said, sizeof said);
    CHECK(rc == 0, "the script run exited %d", rc);
    CHECK(strstr(said, "threw 0.45 kg at 10 m/s at LeftElbow"), "no throw at the forearm");
    /* the frames: as without the throw before it, not after it */
    char plain[1024], shot[1024];
    snprintf(plain, sizeof plain, "%s/plain.png", out);
    snprintf(shot, sizeof shot, "%s/script_before.png", out);
    CHECK(screenshot_with(plain, 0.5, NO_HUD) == 0, "screenshot at 0.5 s");
    const double before = moved_between(plain, shot);
    CHECK(screenshot_with(plain, 2.0, NO_HUD) == 0, "screenshot at 2.0 s");
    snprintf(shot, sizeof shot, "%s/script_after.png", out);
    const double after = moved_between(plain, shot);
    printf("script frames against the untouched simulation: %.4f%% at 0.5 s, %.4f%% at 2.0 s\n",
           100 * before, 100 * after);
    CHECK(before == 0.0, "before the throw the frames differ by %.5f",
          before);
    CHECK(after >= HIT_MOVED_MIN, "after the throw the frames differ by %.5f only", after);
    /* the take, simulated again by the command line from the exported hits */
    char report[1024];
    snprintf(report, sizeof report, "%s/cli.txt", out);
    snprintf(cmd, sizeof cmd,
             "'%s' simulate '%s/131_01.bvh' --hits '%s/take.hits.json' -o '%s/cli.bvh' >'%s' "
             "2>&1",
             FB_CLI_PATH, FB_DATA_DIR, out, out, report);
    rc = run(cmd);
    said[0] = '\0';
    slurp(report, said, sizeof said);
    printf("%s", said);
    CHECK(rc == 0, "simulate --hits of the exported take exited %d", rc);
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/take.bvh", out);
    snprintf(b, sizeof b, "%s/cli.bvh", out);
    CHECK(same_bytes(a, b), "the exported take and `simulate --hits` of it differ");
    const char* dev = strstr(said, "deviated up to ");
    double cm = 0.0, back = 0.0;
    CHECK(dev && sscanf(dev, "deviated up to %lf cm; back within 2 cm after %lf s", &cm, &back) == 2,
          "no deviation and recovery in the summary");
    CHECK(cm >= 3.0 && back > 0.0 && back <= 1.5, "the forearm moved %.2f cm, back in %.2f s",
          cm, back);
}

/* Lines of a small text file (at most cap of them, each cut at 255 bytes); the count. */
static int read_lines(const char* path, char (*line)[256], int cap) {
    FILE* f = fopen(path, "r");
    int n = 0;
    while (f && n < cap && fgets(line[n], 256, f)) {
        n++;
    }
    if (f) {
        fclose(f);
    }
    return n;
}

/* The original and the edited gains file differ in exactly one line: LeftElbow's settle
 * time, 0.3 then 0.6, inside the "LeftElbow" object. */
static void check_one_line_changed(const char* orig, const char* edited) {
    enum { MAXL = 2000 };
    static char a[MAXL][256], b[MAXL][256];
    const int na = read_lines(orig, a, MAXL), nb = read_lines(edited, b, MAXL);
    CHECK(na > 20 && na == nb, "%s has %d lines, %s %d", orig, na, edited, nb);
    int ndiff = 0, at = -1;
    for (int k = 0; k < na && k < nb; k++) {
        if (strcmp(a[k], b[k]) != 0) {
            ndiff++;
            at = k;
        }
    }
    CHECK(ndiff == 1, "%d lines differ between %s and %s (expected 1)", ndiff, orig, edited);
    if (at < 0) {
        return;
    }
    printf("the one line changed (%d): %s  ->  %s", at + 1, a[at], b[at]);
    CHECK(strstr(a[at], "\"settle_time\":\t0.3,") && strstr(b[at], "\"settle_time\":\t0.6,"),
          "line %d: '%s' became '%s'", at + 1, a[at], b[at]);
    int open = at;
    while (open > 0 && !strchr(a[open], '{')) {
        open--;
    }
    CHECK(strstr(a[open], "\"LeftElbow\":"), "the changed line is in '%s', not LeftElbow's",
          a[open]);
}

/* `featherbone gains init` of the bundled clip into path. */
static void gains_init(const char* path) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' gains init '%s/131_01.bvh' -o '%s' >/dev/null", FB_CLI_PATH,
             FB_DATA_DIR, path);
    CHECK(run(cmd) == 0, "gains init failed");
}

static void check_gains(const char* out) {
    char orig[1024], cmd[8192], text[8192], more[2200];
    snprintf(orig, sizeof orig, "%s/gains.json", out);
    gains_init(orig);
    snprintf(text, sizeof text,
             "# test_viewer: gains edited through the panel's path, saved, exported, undone\n"
             "0.5 throw LeftElbow\n"
             "1.0 gain LeftElbow settle_time 0.6\n"
             "1.1 gain LeftElbow settle_time -0.5\n"
             "1.2 gain LeftElbow settle_time nan\n"
             "1.3 save-gains %s/edited.json\n"
             "1.4 key e\n"
             "1.5 select LeftElbow\n"
             "1.6 screenshot %s/panel.png\n"
             "1.7 undo\n"
             "1.8 save-gains %s/undone.json\n"
             "1.9 quit\n",
             out, out, out);
    snprintf(more, sizeof more, "--gains '%s' --export '%s/gtake'", orig, out);
    char said[16384];
    int rc = run_script(out, "gains", text, more, said, sizeof said);
    CHECK(rc == 0, "the gains script exited %d", rc);
    CHECK(strstr(said, "gains: LeftElbow settle_time = 0.6 s"), "the edit was not made");
    CHECK(strstr(said, "refused: LeftElbow settle_time: expected a value > 0, found -0.5; kept "
                       "0.6 s"), "the negative settle time was not refused with its reason");
    CHECK(strstr(said, "refused: LeftElbow settle_time: expected a number, found nan; kept "
                       "0.6 s"), "the NaN settle time was not refused with its reason");
    char edited[1024], undone[1024];
    snprintf(edited, sizeof edited, "%s/edited.json", out);
    snprintf(undone, sizeof undone, "%s/undone.json", out);
    check_one_line_changed(orig, edited);
    CHECK(same_bytes(orig, undone), "after undo the gains saved differ from the original");
    /* the command line with the saved gains and the exported hits: the exported take */
    snprintf(cmd, sizeof cmd,
             "'%s' simulate '%s/131_01.bvh' --gains '%s' --hits '%s/gtake.hits.json' "
             "-o '%s/gcli.bvh' >/dev/null 2>&1",
             FB_CLI_PATH, FB_DATA_DIR, edited, out, out);
    rc = run(cmd);
    CHECK(rc == 0, "simulate --gains of the saved gains exited %d", rc);
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/gtake.bvh", out);
    snprintf(b, sizeof b, "%s/gcli.bvh", out);
    CHECK(same_bytes(a, b), "the viewer's export and `simulate --gains` of the saved file differ");
    /* and the edit mattered: the original gains give another take */
    snprintf(cmd, sizeof cmd,
             "'%s' simulate '%s/131_01.bvh' --gains '%s' --hits '%s/gtake.hits.json' "
             "-o '%s/gorig.bvh' >/dev/null 2>&1",
             FB_CLI_PATH, FB_DATA_DIR, orig, out, out);
    CHECK(run(cmd) == 0, "simulate --gains of the original exited");
    snprintf(b, sizeof b, "%s/gorig.bvh", out);
    CHECK(!same_bytes(a, b), "the edited settle time changed nothing in the take");
    /* the panel, when this viewer has one: a dark window over the sky at the top right */
    snprintf(cmd, sizeof cmd, "'%s' --help | grep -q 'gains panel: Dear ImGui'", FB_VIEW_PATH);
    if (run(cmd) != 0) {
        printf("the viewer was built without the gains panel: its picture not checked\n");
        return;
    }
    char shot[1024];
    snprintf(shot, sizeof shot, "%s/panel.png", out);
    unsigned char* px = load(shot);
    if (px) {
        long dark = 0, n = 0;
        for (int y = 40; y < 120; y++) {
            for (int x = W - 300; x < W - 40; x++, n++) {
                const unsigned char* p = px + 3 * (y * W + x);
                dark += p[0] + p[1] + p[2] < 3 * 90;
            }
        }
        printf("panel screenshot: %.1f%% of the panel's corner dark\n", 100.0 * dark / n);
        CHECK(dark > n / 2, "no panel at the top right of %s (%ld of %ld pixels dark)", shot, dark,
              n);
    }
    stbi_image_free(px);
}

/* The balance overlay's cyan (render.h: green and blue both above red by more than 0.3 of
 * the range, which no other colour drawn has). */
#define OVERLAY_LEAD 76
/* Its support polygon's violet-blue (render.h: hue 259 deg, blue highest, green lowest,
 * (R - G) / (B - G) = 0.31, kept when blended with the grey ground): a pixel of that hue
 * within 14 deg, (R - G) / (B - G) in [0.1, 0.5], and B - G at least this. */
#define SUPPORT_CHROMA 40
/* Pixels of each the free root's frame must show near the feet (measured: see the log). */
#define OVERLAY_FEET_MIN 40
#define SUPPORT_FEET_MIN 20

static bool overlay_pixel(const unsigned char* p) {
    return p[1] - p[0] > OVERLAY_LEAD && p[2] - p[0] > OVERLAY_LEAD;
}

static bool support_pixel(const unsigned char* p) {
    const int r = p[0], g = p[1], b = p[2];
    return b > r && r > g && b - g >= SUPPORT_CHROMA && 10 * (r - g) >= (b - g) &&
           2 * (r - g) <= (b - g);
}

/* The character's box (x0, y0, x1, y1: its coloured pixels but the overlay's); false when
 * there are none. */
static bool body_box(const unsigned char* px, int* box) {
    box[0] = W, box[1] = H, box[2] = -1, box[3] = -1;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            const unsigned char* p = px + 3 * (y * W + x);
            if (coloured_fraction(p, 1) > 0.0 && !overlay_pixel(p) && !support_pixel(p)) {
                box[0] = x < box[0] ? x : box[0];
                box[1] = y < box[1] ? y : box[1];
                box[2] = x > box[2] ? x : box[2];
                box[3] = y > box[3] ? y : box[3];
            }
        }
    }
    return box[2] >= 0;
}

/* Pixels that `is` in the rectangle [x0, x1] x [y0, y1] (clipped to the image). */
static long pixels_in(const unsigned char* px, bool (*is)(const unsigned char*), int x0, int y0,
                      int x1, int y1) {
    long n = 0;
    for (int y = y0 < 0 ? 0 : y0; y <= y1 && y < H; y++) {
        for (int x = x0 < 0 ? 0 : x0; x <= x1 && x < W; x++) {
            n += is(px + 3 * (y * W + x));
        }
    }
    return n;
}

/* A `gains init` file of the bundled clip with the root's mode free, at path; false (and a
 * failure) when it cannot be made. */
static bool free_gains(const char* path) {
    gains_init(path);
    static char file[1 << 17];
    CHECK(slurp(path, file, sizeof file), "cannot read %s", path);
    char* mode = strstr(file, "\"mode\":\t\"kinematic\"");
    CHECK(mode, "no root mode in %s", path);
    if (!mode) {
        return false;
    }
    FILE* f = fopen(path, "w");
    const bool ok = f && fprintf(f, "%.*s\"mode\":\t\"free\"%s", (int)(mode - file), file,
                                 mode + strlen("\"mode\":\t\"kinematic\"")) > 0;
    CHECK(f && fclose(f) == 0 && ok, "cannot write %s", path);
    return ok;
}

/* A sampling plan for the whole bundled clip (simulate --sample-save's format): its 83 windows
 * of 0.1 s (8.275 s), the 23 axes the search offsets on the CMU character, every offset 0 but
 * the spine's first axis (lowerback), bent by 0.05 rad from the second control point on. */
static void write_plan(const char* path) {
    static const char* axes[] = {"Hips",      "Hips",      "Hips",       "Hips",       "Hips",
                                 "Hips",      "LeftHip",   "LeftHip",    "LeftHip",    "LeftKnee",
                                 "LeftAnkle", "LeftAnkle", "LeftAnkle",  "RightHip",   "RightHip",
                                 "RightHip",  "RightKnee", "RightAnkle", "RightAnkle", "RightAnkle",
                                 "lowerback", "lowerback", "lowerback"};
    static const int axis[] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 0, 0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 0, 1, 2};
    const int na = (int)(sizeof axis / sizeof axis[0]);
    FILE* f = fopen(path, "w");
    CHECK(f, "cannot write %s", path);
    if (!f) {
        return;
    }
    fprintf(f, "{\"format\": \"featherbone sampling plan\", \"version\": 1, "
               "\"window_s\": 0.1,\n \"axes\": [");
    for (int i = 0; i < na; i++) {
        fprintf(f, "%s{\"joint\": \"%s\", \"axis\": %d}", i ? ", " : "", axes[i], axis[i]);
    }
    fprintf(f, "],\n \"points\": [");
    for (int k = 0; k <= 83; k++) {
        fprintf(f, "%s[", k ? ",\n  " : "");
        for (int i = 0; i < na; i++) {
            fprintf(f, "%s%g", i ? ", " : "", k > 0 && i == na - 3 ? 0.05 : 0.0);
        }
        fprintf(f, "]");
    }
    CHECK(fprintf(f, "]}\n") > 0 && fclose(f) == 0, "cannot write %s", path);
}

/* --sample-load: the viewer follows a plan as `simulate --sample-load` does (its export (E)
 * and the command line's BVH byte for byte), the plan changes the run (the command line
 * without it writes another BVH), and a kinematic root with a plan is refused (exit 2). */
static void check_sample_plan(const char* out) {
    char gains[1024], plan[1024], text[512], more[2400], cmd[8192];
    snprintf(gains, sizeof gains, "%s/gains_plan.json", out);
    snprintf(plan, sizeof plan, "%s/plan.json", out);
    if (!free_gains(gains)) {
        return;
    }
    write_plan(plan);
    snprintf(text, sizeof text,
             "# test_viewer: a sampling plan followed and exported\n"
             "0.1 key e\n0.2 quit\n");
    snprintf(more, sizeof more, "--gains '%s' --sample-load '%s' --export '%s/ptake' --no-hud",
             gains, plan, out);
    char said[16384];
    int rc = run_script(out, "plan", text, more, said, sizeof said);
    CHECK(rc == 0, "the plan script exited %d", rc);
    CHECK(strstr(said, "--sample-load"), "the export's command line leaves the plan out");
    CHECK(!strstr(said, "search found"), "a plan without its search's end judged the run: %s",
          said);
    char a[1024], b[1024], c[1024];
    snprintf(a, sizeof a, "%s/ptake.bvh", out);
    snprintf(b, sizeof b, "%s/pcli.bvh", out);
    snprintf(c, sizeof c, "%s/pnone.bvh", out);
    /* the command line, with the plan and without it */
    for (int k = 0; k < 2; k++) {
        char opt[1100] = "";
        if (k == 0) {
            snprintf(opt, sizeof opt, "--sample-load '%s'", plan);
        }
        snprintf(cmd, sizeof cmd,
                 "'%s' simulate '%s/131_01.bvh' --gains '%s' %s -o '%s' --quiet "
                 ">'%s/plan_cli.txt' 2>&1",
                 FB_CLI_PATH, FB_DATA_DIR, gains, opt, k == 0 ? b : c, out);
        CHECK(run(cmd) == 0, "`%s` failed", cmd);
    }
    CHECK(same_bytes(a, b), "the viewer's export with the plan and `simulate --sample-load` "
                            "of it differ");
    CHECK(!same_bytes(b, c), "the plan changed nothing: the check above proves little");
    snprintf(cmd, sizeof cmd,
             "'%s' '%s/131_01.bvh' --sample-load '%s' --screenshot '%s/k.png' "
             ">/dev/null 2>'%s/plan_refusal.txt'",
             FB_VIEW_PATH, FB_DATA_DIR, plan, out, out);
    rc = run(cmd);
    char why[2048] = "";
    snprintf(a, sizeof a, "%s/plan_refusal.txt", out);
    slurp(a, why, sizeof why);
    CHECK(rc == 2 && strstr(why, "kinematic"), "a plan on a kinematic root: exit %d, '%s'", rc,
          why);
}

/* The first `frames` frames of the bundled clip as a BVH file of their own (the viewer takes
 * a whole file); false (and a failure) when it cannot be written. */
static bool short_clip(const char* path, int frames) {
    static char text[1 << 20];
    CHECK(slurp(FB_DATA_DIR "/131_01.bvh", text, sizeof text), "cannot read the bundled clip");
    char* head_end = strstr(text, "Frames:");
    char* p = head_end ? strstr(head_end, "Frame Time:") : NULL;
    p = p ? strchr(p, '\n') : NULL;
    for (int k = 0; p && k < frames; k++) {
        p = strchr(p + 1, '\n');
    }
    CHECK(p, "the bundled clip has no %d frames after its header", frames);
    FILE* f = p ? fopen(path, "w") : NULL;
    const char* time_line = head_end ? strstr(head_end, "Frame Time:") : NULL;
    const bool ok = f && fprintf(f, "%.*sFrames: %d\n%.*s\n", (int)(head_end - text), text, frames,
                                 (int)(p - time_line), time_line) > 0;
    CHECK(f && fclose(f) == 0 && ok, "cannot write %s", path);
    return ok;
}

/* Whether a run following a plan is the walk its search found: a plan `simulate --root free
 * --sample 3 --sample-save` kept on the first second of the bundled clip, followed to the end
 * in the viewer with `--root free` (the default gains' root set, as simulate's is), gives the
 * line `simulate --sample-load` gives, with the end state the plan records (read from the file
 * here); with a ball the search did not have, or the plan's end state altered, the viewer says
 * it is not that walk; a take stopped short of its end says that it was not judged. */
static void check_plan_verdict(const char* out) {
    char clip[1024], plan[1024], bad[1024], cmd[8192];
    snprintf(clip, sizeof clip, "%s/short.bvh", out);
    snprintf(plan, sizeof plan, "%s/vplan.json", out);
    snprintf(bad, sizeof bad, "%s/vplan_bad.json", out);
    if (!short_clip(clip, 120)) {
        return;
    }
    /* both with the default gains of the clip (gains init) and --root free */
    snprintf(cmd, sizeof cmd,
             "'%s' simulate '%s' --root free --sample 3 --threads 2 --sample-save '%s' "
             "-o '%s/vsearch.bvh' --quiet",
             FB_CLI_PATH, clip, plan, out);
    CHECK(run(cmd) == 0, "`%s` failed", cmd);
    static char file[1 << 16];
    CHECK(slurp(plan, file, sizeof file), "cannot read %s", plan);
    const char* key = strstr(file, "\"end_state\":");
    const char* hex = key ? strchr(key + strlen("\"end_state\":"), '"') : NULL;
    CHECK(hex && strspn(hex + 1, "0123456789abcdef") == 16,
          "the search's plan has no end state (did its walk fall?): %s", file);
    if (!hex) {
        return;
    }
    char want[128];
    snprintf(want, sizeof want, "bit for bit: it stayed up, its end state %.16s", hex + 1);
    /* the same plan with another end state */
    FILE* f = fopen(bad, "w");
    const int at = (int)(hex + 1 - file);
    const bool ok =
        f && fprintf(f, "%.*s%c%s", at, file, hex[1] == '0' ? '1' : '0', file + at + 1) > 0;
    CHECK(f && fclose(f) == 0 && ok, "cannot write %s", bad);
    /* the fourth: the plan as is, the take stopped at 0.5 s, before the end */
    static const char* says[4] = {"the walk the plan's search found, bit for bit",
                                  "note: not the walk the plan's search found",
                                  "note: not the walk the plan's search found",
                                  "the plan's walk not judged: the take stopped at 0.50 s"};
    for (int k = 0; k < 4; k++) {
        char log[1024];
        snprintf(log, sizeof log, "%s/verdict%d.txt", out, k);
        snprintf(cmd, sizeof cmd,
                 "xvfb-run -a '%s' '%s' --root free --sample-load '%s' %s --time %s "
                 "--size %dx%d --screenshot '%s/verdict.png' >'%s' 2>&1",
                 FB_VIEW_PATH, clip, k == 2 ? bad : plan,
                 k == 1 ? "--hit time=0.5,target=Chest,speed=10,mass=0.45" : "",
                 k == 3 ? "0.5" : "0.99", W, H, out, log);
        CHECK(run(cmd) == 0, "`%s` failed", cmd);
        char said[4096] = "";
        slurp(log, said, sizeof said);
        printf("%s", said);
        CHECK(strstr(said, says[k]), "run %d: the viewer did not say '%s': %s", k, says[k], said);
        CHECK(k > 0 || strstr(said, want), "the viewer's end is not the plan's (%s): %s", want,
              said);
        CHECK(k == 0 || !strstr(said, "bit for bit"), "run %d judged the searched walk: %s", k,
              said);
        CHECK(k < 3 || !strstr(said, "not the walk"), "a take stopped short judged: %s", said);
        CHECK(k == 3 || !strstr(said, "not judged"), "run %d said not judged: %s", k, said);
    }
}

/* The balance overlay: with a free root (a `gains init` file with the root's mode free), at
 * 0.2 s while the planner holds the walk on its feet with a support polygon (0.01-0.38 s in
 * `simulate --root free --report`'s frames since stop 28; 0.40-0.55 s before, when the root
 * torque weighed less in the planner's fit, docs/CONTROL.md §10), the frame has pixels of the
 * overlay's colour near the feet (the bottom quarter of the character's box, widened); the
 * same frame with the overlay toggled off by its key (B) has none anywhere. */
static void check_balance_overlay(const char* out) {
    char gains[1024], text[8192], more[1200];
    snprintf(gains, sizeof gains, "%s/gains_free.json", out);
    if (!free_gains(gains)) {
        return;
    }
    snprintf(text, sizeof text,
             "# test_viewer: the balance overlay of a free root, on and off (B)\n"
             "0.0 key f\n"
             "0.0 orbit -40 10\n"
             "0.0 zoom 8\n"
             "0.2 screenshot %s/balance_on.png\n"
             "0.2 key b\n"
             "0.2 screenshot %s/balance_off.png\n"
             "0.35 quit\n",
             out, out);
    snprintf(more, sizeof more, "--gains '%s' --no-hud", gains);
    char said[16384];
    const int rc = run_script(out, "balance", text, more, said, sizeof said);
    CHECK(rc == 0, "the balance script exited %d", rc);
    char on_path[1024], off_path[1024];
    snprintf(on_path, sizeof on_path, "%s/balance_on.png", out);
    snprintf(off_path, sizeof off_path, "%s/balance_off.png", out);
    unsigned char* on = load(on_path);
    unsigned char* off = load(off_path);
    int box[4];
    if (on && off && body_box(on, box)) {
        const int bw = box[2] - box[0], bh = box[3] - box[1];
        const int x0 = box[0] - bw / 3, y0 = box[3] - bh / 4, x1 = box[2] + bw / 3,
                  y1 = box[3] + bh / 10;
        const long feet = pixels_in(on, overlay_pixel, x0, y0, x1, y1);
        const long support = pixels_in(on, support_pixel, x0, y0, x1, y1);
        const long all_on = pixels_in(on, overlay_pixel, 0, 0, W - 1, H - 1) +
                            pixels_in(on, support_pixel, 0, 0, W - 1, H - 1);
        const long all_off = pixels_in(off, overlay_pixel, 0, 0, W - 1, H - 1) +
                             pixels_in(off, support_pixel, 0, 0, W - 1, H - 1);
        printf("balance overlay, free root at 0.2 s: character box (%d, %d)-(%d, %d); near the "
               "feet %ld pixels of the overlay's cyan (at least %d) and %ld of the support "
               "polygon's violet (at least %d); %ld in all; with B off %ld\n",
               box[0], box[1], box[2], box[3], feet, OVERLAY_FEET_MIN, support,
               SUPPORT_FEET_MIN, all_on, all_off);
        CHECK(feet >= OVERLAY_FEET_MIN, "%ld overlay pixels near the feet", feet);
        CHECK(support >= SUPPORT_FEET_MIN, "%ld support polygon pixels near the feet", support);
        /* with it off, at most the few pixels where the blue limbs' antialiased edges over the
         * pale ghost reach the cyan's hue (2 when measured; the overlay itself is hundreds) */
        CHECK(all_off * 50 <= all_on, "%ld overlay pixels with the overlay off (%ld on)",
              all_off, all_on);
    } else {
        CHECK(false, "no character in %s", on_path);
    }
    stbi_image_free(on);
    stbi_image_free(off);
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
    check_hit_frames(out);
    check_script(out);
    check_gains(out);
    check_balance_overlay(out);
    check_sample_plan(out);
    check_plan_verdict(out);
    check_no_leftovers(out);
    printf("%s\n", failures ? "test_viewer: FAILED" : "test_viewer: passed");
    return failures ? 1 : 0;
}
