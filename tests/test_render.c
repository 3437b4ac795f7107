/* A report page as a browser draws it: headless Chromium renders a sample page (heading,
 * chart with events and a threshold, table) to a PNG, decoded with stb_image, which must be
 * the requested size, not blank, and show the first two series colours (so the inline SVG
 * was drawn, not only the text around it).
 *
 * Skipped (exit 77) when chromium is not installed (Debian package chromium; $FB_CHROMIUM
 * names another binary). Set $FB_RENDER_OUT to a directory to keep the page and the PNG. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp, setpgid, kill */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stb/stb_image.h>

#include "html.h"
#include "plot.h"
#include "support.h"

enum { SHOT_W = 1200, SHOT_H = 900 };
/* Chromium is killed after this long (a render takes ~3 s on the development machine). */
static const double RENDER_TIMEOUT_S = 45.0;

static char chromium[1024];

/* chromium on $PATH (or $FB_CHROMIUM); false when there is none */
static bool find_chromium(void) {
    const char* env = getenv("FB_CHROMIUM");
    if (env && env[0]) {
        snprintf(chromium, sizeof chromium, "%s", env);
        return access(chromium, X_OK) == 0;
    }
    const char* path = getenv("PATH");
    const char* names[2] = {"chromium", "chromium-browser"};
    for (int k = 0; k < 2; k++) {
        for (const char* p = path ? path : "/usr/bin:/bin"; *p;) {
            const size_t len = strcspn(p, ":");
            snprintf(chromium, sizeof chromium, "%.*s/%s", (int)len, p, names[k]);
            if (len > 0 && access(chromium, X_OK) == 0) {
                return true;
            }
            p += len + (p[len] == ':');
        }
    }
    return false;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int rm_entry(const char* p, const struct stat* st, int type, struct FTW* ftw) {
    (void)st, (void)type, (void)ftw;
    return remove(p);
}

/* The sample page: what `simulate --report` will write, with made-up numbers. */
enum { N = 600 };
static double t[N], err_hand[N], err_foot[N];
static const plot_mark hits[2] = {{1.5, "hit: head"}, {3.2, "hit: chest"}};
static const plot_mark limit[1] = {{0.08, "fall threshold"}};

static int sample_body(html_doc* h, void* ctx) {
    (void)ctx;
    for (int i = 0; i < N; i++) {
        t[i] = i / 120.0;
        err_hand[i] = 0.02 + 0.015 * sin(3.0 * t[i]) + (t[i] > 1.5 ? 0.03 * exp(-(t[i] - 1.5)) : 0);
        err_foot[i] = 0.01 + 0.008 * cos(5.0 * t[i]);
    }
    html_paragraph(h, "Clip walk.bvh, 600 frames at 120 Hz, humanoid of 29 bodies.");
    html_heading(h, 2, "Tracking error");
    plot_chart c = {.title = "Tracking error by body part",
                    .x_label = "time (s)",
                    .y_label = "position error (m)",
                    .width = 900,
                    .height = 340,
                    .events = hits,
                    .n_events = 2,
                    .refs = limit,
                    .n_refs = 1,
                    .y_from_zero = true};
    plot_add_series(&c, "left hand", t, err_hand, N);
    plot_add_series(&c, "right foot", t, err_foot, N);
    html_chart(h, &c);
    const char* head[3] = {"body part", "mean (m)", "max (m)"};
    html_table_begin(h, "Tracking error", 3, head);
    html_cell_text(h, "left hand");
    html_cell_num(h, 0.031, 3);
    html_cell_num(h, 0.066, 3);
    html_cell_text(h, "right foot");
    html_cell_num(h, 0.010, 3);
    html_cell_num(h, 0.018, 3);
    html_table_end(h);
    return 0;
}

/* Runs chromium on the page; returns its exit status, or -1 when it had to be killed. */
static int run_chromium(const char* dir, double* seconds) {
    char profile[600], shot[600], url[600], log[600];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", dir);
    snprintf(shot, sizeof shot, "--screenshot=%s/shot.png", dir);
    snprintf(url, sizeof url, "file://%s/page.html", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    char size[64];
    snprintf(size, sizeof size, "--window-size=%d,%d", SHOT_W, SHOT_H);
    const char* argv[12];
    int argc = 0;
    argv[argc++] = chromium;
    argv[argc++] = "--headless";
    argv[argc++] = "--disable-gpu";
    argv[argc++] = "--hide-scrollbars";
    argv[argc++] = "--no-first-run";
    argv[argc++] = profile; /* a fresh profile: no state shared with other runs */
    argv[argc++] = shot;
    argv[argc++] = size;
    if (geteuid() == 0) {
        argv[argc++] = "--no-sandbox"; /* as root Chromium refuses to start without it */
    }
    argv[argc++] = url;
    argv[argc] = NULL;
    const double t0 = now_s();
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0); /* its own group, so a timeout kills all its processes */
        if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr)) {
            _exit(126);
        }
        execv(chromium, (char* const*)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    int status = 0;
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            break;
        }
        ck_assert_msg(r == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (now_s() - t0 > RENDER_TIMEOUT_S) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            *seconds = now_s() - t0;
            return -1;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    *seconds = now_s() - t0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Pixels within tol (per channel) of the colour "#rrggbb". */
static long pixels_near(const unsigned char* px, long n, const char* hex, int tol) {
    unsigned r, g, b;
    ck_assert_int_eq(sscanf(hex, "#%02x%02x%02x", &r, &g, &b), 3);
    long hits_n = 0;
    for (long i = 0; i < n; i++) {
        const unsigned char* p = px + 3 * i;
        hits_n +=
            abs(p[0] - (int)r) <= tol && abs(p[1] - (int)g) <= tol && abs(p[2] - (int)b) <= tol;
    }
    return hits_n;
}

START_TEST(chromium_draws_the_report) {
    const char* keep = getenv("FB_RENDER_OUT");
    char dir[512];
    if (keep && keep[0]) {
        snprintf(dir, sizeof dir, "%s", keep);
        mkdir(dir, 0755);
    } else {
        strcpy(dir, "/tmp/fbrenderXXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
    }
    char page[600], shot[600], log[600];
    snprintf(page, sizeof page, "%s/page.html", dir);
    snprintf(shot, sizeof shot, "%s/shot.png", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    fb_error err;
    ck_assert_msg(html_save(page, "featherbone report: walk.bvh", sample_body, NULL, &err) == FB_OK,
                  "%s", err.msg);
    double seconds = 0.0;
    const int rc = run_chromium(dir, &seconds);
    printf("chromium rendered the page in %.1f s (exit %d)\n", seconds, rc);
    ck_assert_msg(rc == 0, "chromium failed (exit %d, %.1f s); see %s", rc, seconds, log);
    int w = 0, h = 0, comp = 0;
    unsigned char* px = stbi_load(shot, &w, &h, &comp, 3);
    ck_assert_msg(px != NULL, "%s: %s", shot, stbi_failure_reason());
    ck_assert_int_eq(w, SHOT_W);
    ck_assert_int_eq(h, SHOT_H);
    /* not blank: some ink, but not all of it (a crash page or a black frame fails) */
    const long n = (long)w * h;
    long ink = 0;
    for (long i = 0; i < n; i++) {
        ink += px[3 * i] < 200 || px[3 * i + 1] < 200 || px[3 * i + 2] < 200;
    }
    printf("ink %.2f%%, series 0: %ld px, series 1: %ld px\n", 100.0 * ink / n,
           pixels_near(px, n, plot_color(0), 40), pixels_near(px, n, plot_color(1), 40));
    ck_assert_msg(ink > n / 200 && ink < n / 2, "%ld of %ld pixels inked", ink, n);
    /* the chart's lines are there, in their colours */
    ck_assert_int_gt(pixels_near(px, n, plot_color(0), 40), 300);
    ck_assert_int_gt(pixels_near(px, n, plot_color(1), 40), 300);
    stbi_image_free(px);
    if (!(keep && keep[0])) {
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}
END_TEST

int main(void) {
    if (!find_chromium()) {
        printf("chromium not found (Debian package chromium, or set FB_CHROMIUM): render check "
               "skipped\n");
        return 77;
    }
    Suite* s = suite_create("render");
    TCase* tc = tcase_create("render");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, chromium_draws_the_report);
    suite_add_tcase(s, tc);
    return ck_run_suite(s);
}
