/* Report pages as a browser draws them.
 *
 * A sample page (heading, chart with events and a threshold, table) and the report of a real
 * simulation (`simulate --report R.html`: fb_sim on the bundled clip with one hit, written by
 * sim_report_html) are rendered by headless Chromium to PNGs, decoded with stb_image, which
 * must be the requested size, not blank, and show the series colours (so the inline SVG was
 * drawn, not only the text around it). The simulation report is also checked without a
 * browser: well-formed XML (xmllint, Debian libxml2-utils), its sections and charts, no
 * reference to anything outside the page, the summary numbers, and the same bytes when
 * written twice.
 *
 * Without chromium (Debian package chromium; $FB_CHROMIUM names another binary) the page
 * checks still run and the test then reports itself skipped (exit 77). Set $FB_RENDER_OUT to
 * a directory to keep the pages and the PNGs. */
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
#include "sim_report.h"
#include "support.h"

enum { SHOT_W = 1200, SHOT_H = 900 };
/* The whole simulation report in one screenshot (the page is about 4000 px tall). */
enum { REPORT_SHOT_H = 4600 };
/* Chromium is killed after this long (a render takes ~3 s on the development machine). */
static const double RENDER_TIMEOUT_S = 45.0;

static char chromium[1024];
static bool have_chromium;

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

/* Runs chromium on dir/<name>.html, a screenshot of width x height px into dir/<name>.png;
 * returns its exit status, or -1 when it had to be killed. */
static int run_chromium(const char* dir, const char* name, int width, int height, double* seconds) {
    char profile[600], shot[600], url[600], log[600];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", dir);
    snprintf(shot, sizeof shot, "--screenshot=%s/%s.png", dir, name);
    snprintf(url, sizeof url, "file://%s/%s.html", dir, name);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    char size[64];
    snprintf(size, sizeof size, "--window-size=%d,%d", width, height);
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
    fflush(NULL); /* the child's freopen would write our buffered output a second time */
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

/* dir: $FB_RENDER_OUT (kept) or a fresh temporary directory (removed by drop_dir). */
static void make_dir(char* dir, size_t cap) {
    const char* keep = getenv("FB_RENDER_OUT");
    if (keep && keep[0]) {
        snprintf(dir, cap, "%s", keep);
        mkdir(dir, 0755);
    } else {
        ck_tmpdir(dir, cap, "render");
    }
}

static void drop_dir(const char* dir) {
    const char* keep = getenv("FB_RENDER_OUT");
    if (!(keep && keep[0])) {
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}

/* Renders dir/<name>.html to dir/<name>.png and decodes it (3 channels; caller frees). */
static unsigned char* render(const char* dir, const char* name, int width, int height) {
    double seconds = 0.0;
    const int rc = run_chromium(dir, name, width, height, &seconds);
    printf("%s: chromium rendered the page in %.1f s (exit %d)\n", name, seconds, rc);
    ck_assert_msg(rc == 0, "chromium failed (exit %d, %.1f s); see %s/chromium.log", rc, seconds,
                  dir);
    char shot[600];
    snprintf(shot, sizeof shot, "%s/%s.png", dir, name);
    int w = 0, h = 0, comp = 0;
    unsigned char* px = stbi_load(shot, &w, &h, &comp, 3);
    ck_assert_msg(px != NULL, "%s: %s", shot, stbi_failure_reason());
    ck_assert_int_eq(w, width);
    ck_assert_int_eq(h, height);
    return px;
}

/* Pixels that are not near-white. */
static long ink_of(const unsigned char* px, long n) {
    long ink = 0;
    for (long i = 0; i < n; i++) {
        ink += px[3 * i] < 200 || px[3 * i + 1] < 200 || px[3 * i + 2] < 200;
    }
    return ink;
}

START_TEST(chromium_draws_the_report) {
    char dir[512];
    make_dir(dir, sizeof dir);
    char page[600];
    snprintf(page, sizeof page, "%s/page.html", dir);
    fb_error err;
    ck_assert_msg(html_save(page, "featherbone report: walk.bvh", sample_body, NULL, &err) == FB_OK,
                  "%s", err.msg);
    unsigned char* px = render(dir, "page", SHOT_W, SHOT_H);
    /* not blank: some ink, but not all of it (a crash page or a black frame fails) */
    const long n = (long)SHOT_W * SHOT_H;
    const long ink = ink_of(px, n);
    printf("ink %.2f%%, series 0: %ld px, series 1: %ld px\n", 100.0 * ink / n,
           pixels_near(px, n, plot_color(0), 40), pixels_near(px, n, plot_color(1), 40));
    ck_assert_msg(ink > n / 200 && ink < n / 2, "%ld of %ld pixels inked", ink, n);
    /* the chart's lines are there, in their colours */
    ck_assert_int_gt(pixels_near(px, n, plot_color(0), 40), 300);
    ck_assert_int_gt(pixels_near(px, n, plot_color(1), 40), 300);
    stbi_image_free(px);
    drop_dir(dir);
}
END_TEST

/* ---- the report of a real simulation ------------------------------------------------- */

static int count(const char* s, const char* what) {
    int n = 0;
    for (const char* p = s; (p = strstr(p, what)); p += strlen(what)) {
        n++;
    }
    return n;
}

/* Distinct colours in the image, each channel quantised to 16 levels. */
static int distinct_colours(const unsigned char* px, long n) {
    static bool seen[4096];
    memset(seen, 0, sizeof seen);
    int k = 0;
    for (long i = 0; i < n; i++) {
        const int c = (px[3 * i] >> 4) << 8 | (px[3 * i + 1] >> 4) << 4 | px[3 * i + 2] >> 4;
        k += !seen[c];
        seen[c] = true;
    }
    return k;
}

/* The simulation a report describes: frames 100..400 of the bundled walk (its first frames
 * jitter), gains of `gains init` with the given root mode, and one ball on the left forearm
 * (the scenario: 0.45 kg at 10 m/s). */
typedef struct sim_case {
    fb_clip* clip;
    fb_character* ch;
    fb_gains g;
    fb_sim* s;
} sim_case;

static void run_sim(sim_case* c, fb_root_mode root) {
    fb_error err;
    c->clip = fb_clip_load(FB_DATA_DIR "/131_01.bvh", NULL, NULL, &err);
    ck_assert_msg(c->clip != NULL, "%s", err.msg);
    static fb_rules rules;
    ck_assert_msg(fb_rules_load(FB_DATA_DIR "/character_rules.json", &rules, &err) == FB_OK, "%s",
                  err.msg);
    fb_build_opts bo = fb_default_build_opts();
    bo.rules = &rules;
    c->ch = fb_character_build(c->clip, &bo, &err);
    ck_assert_msg(c->ch != NULL, "%s", err.msg);
    fb_sim_opts so = fb_default_sim_opts();
    so.first = 100;
    so.last = 400;
    fb_ref* r = fb_ref_from_clip(c->clip, c->ch, 240.0, so.first, so.last, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_msg(fb_gains_init(c->ch->model, r, &c->g, &err) == FB_OK, "%s", err.msg);
    fb_ref_destroy(r);
    c->g.root.mode = root;
    /* the free root falls within its first second (docs/CONTROL.md section 10): its ball is
     * thrown before, while the body stands where the ball is aimed */
    fb_hit hit;
    const char* spec = root == FB_ROOT_FREE ? "time=0.5,target=LeftElbow,speed=10,mass=0.45"
                                            : "time=1.0,target=LeftElbow,speed=10,mass=0.45";
    ck_assert_msg(fb_hit_parse(spec, &hit, &err) == FB_OK, "%s", err.msg);
    c->s = fb_sim_create(c->clip, c->ch, &c->g, &hit, 1, &so, &err);
    ck_assert_msg(c->s != NULL, "%s", err.msg);
    ck_assert_msg(fb_sim_run(c->s, NULL, NULL, &err) == FB_OK, "%s", err.msg);
}

static void free_sim(sim_case* c) {
    fb_sim_destroy(c->s);
    fb_character_destroy(c->ch);
    fb_clip_destroy(c->clip);
}

/* The page has what `simulate --report` promises: the run, the summary and hit tables, the
 * per-part table, one chart per quantity with the hit marked (nchart of them), and nothing
 * from outside. */
static void ck_report_contents(const char* html, const sim_case* c, int nchart) {
    const char* sections[] = {"<h2>Summary</h2>",
                              "<h2>Tracking error</h2>",
                              "<h2>Joint torques</h2>",
                              "<h2>Contact forces</h2>",
                              "<h2>Torque limits</h2>",
                              "<caption>Hits</caption>",
                              "<caption>Tracking error per body part",
                              "gains init defaults",
                              c->g.root.mode == FB_ROOT_FREE ? "time=0.5,target=LeftElbow,"
                                                             : "time=1,target=LeftElbow,"};
    for (size_t k = 0; k < sizeof sections / sizeof sections[0]; k++) {
        ck_assert_msg(strstr(html, sections[k]), "the page has no '%s'", sections[k]);
    }
    /* what held (a kinematic root) or helped (an assisted root) the root: its charts and
     * totals; none for a free root */
    const bool assisted = c->g.root.mode == FB_ROOT_ASSISTED;
    const bool held = c->g.root.mode == FB_ROOT_KINEMATIC;
    ck_assert(!strstr(html, "<h2>Root assistance</h2>") == !assisted);
    ck_assert(!strstr(html, "<td>root assistance: peak force</td>") == !assisted);
    ck_assert(!strstr(html, "<td>root assistance: mean force (") == !assisted);
    ck_assert(!strstr(html, "<h2>The kinematic root&#39;s hold</h2>") == !held);
    ck_assert(!strstr(html, "<td>kinematic root&#39;s hold: peak force</td>") == !held);
    ck_assert(!strstr(html, "<td>kinematic root&#39;s hold: mean force (") == !held);
    ck_assert(!strstr(html, "<td>none (free root)</td>") == (assisted || held));
    /* the least help following the reference exactly would need (sim_ground_residual): a free
     * or an assisted root's, drawn with an assisted root's help */
    ck_assert(!strstr(html, "<td>help following the reference exactly would need: mean force (") ==
              held);
    ck_assert(!strstr(html, "ground residual") == !assisted);
    /* the balance chart with a free root, the fall stated and marked on every chart when the
     * character fell */
    const bool free_root = c->g.root.mode == FB_ROOT_FREE;
    ck_assert(!strstr(html, "<h2>Balance</h2>") == !free_root);
    ck_assert(!strstr(html, "Centre of mass against the support") == !free_root);
    const fb_fall fall = fb_tracker_fall(fb_sim_tracker(c->s));
    if (fall.cause != FB_FALL_NONE) {
        char cell[96], mark[96];
        snprintf(cell, sizeof cell, "<td>fell at %.2f s: %s (", fall.time,
                 fb_fall_cause_name(fall.cause));
        snprintf(mark, sizeof mark, ">fell: %s</text>", fb_fall_cause_name(fall.cause));
        ck_assert_msg(strstr(html, cell), "the summary has no '%s'", cell);
        ck_assert_int_eq(count(html, mark), nchart);
    } else {
        ck_assert(strstr(html, c->g.root.mode == FB_ROOT_KINEMATIC
                                   ? "<td>none: a kinematic root cannot fall</td>"
                                   : "<td>stayed up</td>"));
        ck_assert_int_eq(count(html, ">fell: "), 0);
    }
    /* the ball's aim point, root-relative and in the world (the hits' series, sim.h) */
    ck_assert_int_eq(count(html, "<title>Each ball&#39;s aim point: its distance from where the "
                                 "clip puts it</title>"),
                     1);
    ck_assert_int_eq(count(html, ">hit 1, root-relative</text>"), 1);
    ck_assert_int_eq(count(html, ">hit 1, in the world</text>"), 1);
    ck_assert_int_eq(count(html, "<svg"), nchart);
    ck_assert_int_eq(count(html, "</svg>"), nchart);
    ck_assert_int_eq(count(html, ">hit 1</text>"), nchart); /* the hit marked on every chart */
    for (int p = 0; p < FB_NPART; p++) {
        char cell[64];
        snprintf(cell, sizeof cell, "<td>%s</td>", fb_part_name((fb_part)p));
        ck_assert_msg(strstr(html, cell), "no row for %s", fb_part_name((fb_part)p));
    }
    /* self-contained: the only URL is the SVG namespace; no scripts, links or images */
    ck_assert_int_eq(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    const char* banned[] = {"<script", "href", "src=", "url(", "@import", "<link", "<img"};
    for (size_t k = 0; k < sizeof banned / sizeof banned[0]; k++) {
        ck_assert_msg(!strstr(html, banned[k]), "the page has '%s'", banned[k]);
    }
    ck_assert_msg(!strstr(html, "nan") && !strstr(html, "NaN") && !strstr(html, "inf"),
                  "a non-finite number was printed");
    /* the summary's numbers, recomputed here from the recorded frames and the hit */
    int n = 0;
    const fb_sim_frame* fr = fb_sim_frames(c->s, &n);
    double mean = 0.0;
    for (int f = 0; f < n; f++) {
        mean += fr[f].metrics.mpjpe / n;
    }
    const fb_hit_result* r = &fb_sim_hits(c->s)[0];
    ck_assert(r->touched);
    const double j = sqrt(r->impulse.x * r->impulse.x + r->impulse.y * r->impulse.y +
                          r->impulse.z * r->impulse.z);
    char want[6][64];
    snprintf(want[0], sizeof want[0], ">%.2f</td>", 100.0 * mean);
    snprintf(want[1], sizeof want[1], ">%.3f</td>", j);
    snprintf(want[2], sizeof want[2], ">%.2f</td>", 100.0 * r->peak_err);
    if (isnan(r->recover_time)) {
        snprintf(want[3], sizeof want[3], "<td>not within the clip</td>");
    } else if (r->recover_time == 0.0) {
        snprintf(want[3], sizeof want[3], "<td>0 (stayed within)</td>");
    } else {
        snprintf(want[3], sizeof want[3], "<td>%.2f</td>", r->recover_time);
    }
    snprintf(want[4], sizeof want[4], ">%.2f</td>", 100.0 * r->peak_err_root);
    if (isnan(r->hold_time_root)) {
        snprintf(want[5], sizeof want[5], "<td>not at %.2f</td>", r->hold_window);
    } else if (r->hold_time_root == 0.0) {
        snprintf(want[5], sizeof want[5], "<td>0 (stayed within to %.2f)</td>", r->hold_window);
    } else {
        snprintf(want[5], sizeof want[5], "<td>%.2f (to %.2f)</td>", r->hold_time_root,
                 r->hold_window);
    }
    for (int k = 0; k < 6; k++) {
        ck_assert_msg(strstr(html, want[k]), "the page has no cell '%s'", want[k]);
    }
    printf("%s root: %d frames, %d charts, MPJPE mean %.2f cm, impulse %.3f N s, peak deviation "
           "%.2f cm, struck body back after %.2f s\n",
           fb_root_mode_name(c->g.root.mode), n, nchart, 100.0 * mean, j, 100.0 * r->peak_err,
           r->recover_time);
}

/* The rendered page: whole, inked but not black, several colours, every chart colour drawn. */
static void ck_report_render(const char* dir) {
    unsigned char* px = render(dir, "report", SHOT_W, REPORT_SHOT_H);
    ck_assert_msg(px[3 * ((long)SHOT_W * REPORT_SHOT_H - 1)] > 200,
                  "the page is taller than the screenshot");
    const long n = (long)SHOT_W * REPORT_SHOT_H;
    const long ink = ink_of(px, n);
    const int colours = distinct_colours(px, n);
    long series[6];
    for (int k = 0; k < 6; k++) {
        series[k] = pixels_near(px, n, plot_color(k), 40);
    }
    printf("report: ink %.2f%%, %d distinct colours, series colours 0-5: %ld %ld %ld %ld %ld "
           "%ld px\n",
           100.0 * ink / n, colours, series[0], series[1], series[2], series[3], series[4],
           series[5]);
    ck_assert_msg(ink > n / 50 && ink < n / 2, "%ld of %ld pixels inked", ink, n);
    ck_assert_int_ge(colours, 16);
    /* the part chart draws six series, the torque chart twelve: all six colours show */
    for (int k = 0; k < 6; k++) {
        ck_assert_msg(series[k] > 200, "series colour %d: %ld px", k, series[k]);
    }
    stbi_image_free(px);
}

/* Writes the report of a run twice into dir (<name>.html, <name>-again.html) and checks it;
 * returns the page. */
static char* write_report(const sim_case* c, const char* dir, const char* name, int nchart) {
    char page[600], again[600];
    snprintf(page, sizeof page, "%s/%s.html", dir, name);
    snprintf(again, sizeof again, "%s/%s-again.html", dir, name);
    const sim_report_info info = {
        .clip_path = "data/131_01.bvh", .gains_path = NULL, .gains = &c->g, .ch = c->ch};
    fb_error err;
    ck_assert_msg(sim_report_html(c->s, &info, page, &err) == FB_OK, "%s", err.msg);
    ck_assert_msg(sim_report_html(c->s, &info, again, &err) == FB_OK, "%s", err.msg);
    char* html = ck_slurp(page);
    char* html2 = ck_slurp(again);
    printf("%s: %zu bytes\n", name, strlen(html));
    ck_assert_msg(strcmp(html, html2) == 0, "the same run wrote different pages");
    free(html2);
    ck_well_formed(page);
    ck_report_contents(html, c, nchart);
    /* a path that cannot be written is an error, not a crash */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no-such-dir/%s.html", dir, name);
    ck_assert_int_ne(sim_report_html(c->s, &info, bad, &err), FB_OK);
    return html;
}

/* The scenario (kinematic root): checked, and rendered when chromium is there. */
START_TEST(simulation_report_page) {
    sim_case c;
    run_sim(&c, FB_ROOT_KINEMATIC);
    char dir[512];
    make_dir(dir, sizeof dir);
    /* MPJPE, parts, struck parts, aim point, torques, ground, balls, torque limits */
    free(write_report(&c, dir, "report", 10));
    if (have_chromium) {
        ck_report_render(dir);
    }
    free_sim(&c);
    drop_dir(dir);
}
END_TEST

/* With the root assisted the page adds the assistance charts (the wrench, and the force as a
 * share of the weight) and totals. */
START_TEST(simulation_report_page_assisted) {
    sim_case c;
    run_sim(&c, FB_ROOT_ASSISTED);
    char dir[512];
    make_dir(dir, sizeof dir);
    free(write_report(&c, dir, "report-assisted", 10));
    free_sim(&c);
    drop_dir(dir);
}
END_TEST

/* With a free root the page adds the balance chart; the walk falls, and the fall is in the
 * summary and on every chart. */
START_TEST(simulation_report_page_free) {
    sim_case c;
    run_sim(&c, FB_ROOT_FREE);
    ck_assert_msg(fb_tracker_fall(fb_sim_tracker(c.s)).cause != FB_FALL_NONE,
                  "the free walk did not fall: the fall's marks are not checked");
    char dir[512];
    make_dir(dir, sizeof dir);
    free(write_report(&c, dir, "report-free", 9));
    free_sim(&c);
    drop_dir(dir);
}
END_TEST

int main(void) {
    have_chromium = find_chromium();
    Suite* s = suite_create("render");
    TCase* tc = tcase_create("render");
    tcase_set_timeout(tc, 240);
    if (have_chromium) {
        tcase_add_test(tc, chromium_draws_the_report);
    }
    tcase_add_test(tc, simulation_report_page);
    tcase_add_test(tc, simulation_report_page_assisted);
    tcase_add_test(tc, simulation_report_page_free);
    suite_add_tcase(s, tc);
    const int rc = ck_run_suite(s);
    if (rc == EXIT_SUCCESS && !have_chromium) {
        printf("chromium not found (Debian package chromium, or set FB_CHROMIUM): the report "
               "page was checked but not rendered; render check skipped\n");
        return 77;
    }
    return rc;
}
