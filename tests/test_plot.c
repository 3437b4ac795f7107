/* The SVG chart writer and the HTML report helpers of the tool (tools/plot.c, tools/html.c):
 * nice ticks, escaping, gaps, decimation that keeps peaks, clipping, degenerate input,
 * deterministic bytes, whole-or-nothing files, and well-formed XML checked by xmllint
 * (Debian libxml2-utils), an independent parser. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html.h"
#include "plot.h"
#include "support.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* A fresh directory under /tmp; removed by rm_dir. */
static void make_dir(char* dir, size_t cap) {
    ck_tmpdir(dir, cap, "plot");
}


/* The chart as a string (caller frees); fails the test if plot_svg_write fails. */
static char* svg_of(const plot_chart* c) {
    char* buf = NULL;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(plot_svg_write(f, c), 0);
    fclose(f);
    return buf;
}

/* Writes a standalone SVG into dir and checks it with xmllint and for stray NaN/Inf. */
static void ck_chart_file(const char* dir, const char* name, const plot_chart* c) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.svg", dir, name);
    fb_error err;
    ck_assert_msg(plot_svg_save(path, c, &err) == FB_OK, "%s", err.msg);
    ck_well_formed(path);
    char* s = ck_slurp(path);
    ck_assert_msg(!strstr(s, "nan") && !strstr(s, "inf") && !strstr(s, "NaN") && !strstr(s, "Inf"),
                  "%s: a non-finite number was written", name);
    free(s);
}

/* The points of series k's path: (x, y) pairs into xy (up to cap pairs); the number of
 * moveto commands into *moves. Returns the number of points (0 when there is no path). */
static int path_points(const char* svg, int k, double* xy, int cap, int* moves) {
    char key[32];
    snprintf(key, sizeof key, "<path class=\"s%d\"", k);
    const char* p = strstr(svg, key);
    *moves = 0;
    if (!p) {
        return 0;
    }
    p = strstr(p, " d=\"");
    ck_assert_ptr_nonnull(p);
    p += 4;
    int n = 0;
    while (*p && *p != '"') {
        if (*p == 'M') {
            ++*moves;
            p++;
            continue;
        }
        if (*p == ' ') {
            p++;
            continue;
        }
        char* end = NULL;
        const double x = strtod(p, &end);
        ck_assert_msg(end != p, "unexpected path text '%.20s'", p);
        p = end + (*end == ' ');
        const double y = strtod(p, &end);
        ck_assert_msg(end != p, "path ends inside a pair");
        p = end;
        if (n < cap) {
            xy[2 * n] = x, xy[2 * n + 1] = y;
        }
        n++;
    }
    return n;
}

/* The plot area rectangle: x, y, width, height. */
static void plot_area(const char* svg, double r[4]) {
    const char* p = strstr(svg, "<rect class=\"plot-area\"");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(sscanf(p,
                            "<rect class=\"plot-area\" x=\"%lf\" y=\"%lf\" width=\"%lf\" "
                            "height=\"%lf\"",
                            &r[0], &r[1], &r[2], &r[3]),
                     4);
}

static int count(const char* s, const char* what) {
    int n = 0;
    for (const char* p = s; (p = strstr(p, what)); p += strlen(what)) {
        n++;
    }
    return n;
}

/* ---- ticks ------------------------------------------------------------------------------ */

/* A fixed-seed linear congruential generator (the printed seed reproduces a failure). */
static double rnd(unsigned long long* s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static void ck_step_125(double step) {
    ck_assert(step > 0.0 && isfinite(step));
    const double m = step / pow(10.0, floor(log10(step) + 1e-9));
    ck_assert_msg(fabs(m - 1.0) < 1e-9 || fabs(m - 2.0) < 1e-9 || fabs(m - 5.0) < 1e-9,
                  "step %.17g is not 1, 2 or 5 times a power of ten", step);
}

START_TEST(ticks_are_1_2_5_and_cover_the_data) {
    const plot_axis a = plot_axis_make(0.0, 1.0, 5, true);
    ck_assert_double_eq(a.step, 0.2);
    ck_assert_int_eq(a.n, 6);
    ck_assert_double_eq(a.tick[0], 0.0);
    fb_ck_near(a.tick[5], 1.0, 0.0, 1e-12);
    const plot_axis b = plot_axis_make(0.3, 9.7, 5, true);
    ck_assert_double_eq(b.step, 2.0);
    ck_assert_double_eq(b.tick[0], 0.0);
    ck_assert_double_eq(b.tick[b.n - 1], 10.0);
    /* many ranges over 40 decades, both signs, from a fixed seed */
    const unsigned long long seed = 12345;
    unsigned long long s = seed;
    for (int trial = 0; trial < 5000; trial++) {
        const double scale = pow(10.0, floor(rnd(&s) * 40.0) - 20.0);
        double lo = (rnd(&s) * 2.0 - 1.0) * scale, hi = lo + rnd(&s) * scale * 3.0;
        const int target = 2 + (int)(rnd(&s) * 12.0);
        const bool expand = trial % 2 == 0;
        const plot_axis x = plot_axis_make(lo, hi, target, expand);
        ck_assert_msg(x.n >= 1 && x.n <= PLOT_MAX_TICKS, "seed %llu trial %d: %d ticks", seed,
                      trial, x.n);
        ck_step_125(x.step);
        ck_assert(x.lo < x.hi);
        const double tol = 1e-9 * x.step;
        for (int t = 1; t < x.n; t++) {
            fb_ck_near(x.tick[t] - x.tick[t - 1], x.step, 1e-6, 0.0);
        }
        if (hi - lo > 1e-6 * fmax(fabs(lo), fabs(hi))) { /* not a flat range */
            if (expand) {
                ck_assert_msg(x.tick[0] <= lo + tol && x.tick[x.n - 1] >= hi - tol,
                              "seed %llu trial %d: ticks [%g, %g] do not cover [%g, %g]", seed,
                              trial, x.tick[0], x.tick[x.n - 1], lo, hi);
                ck_assert(x.lo <= lo && x.hi >= hi);
                ck_assert_int_ge(x.n, 2);
            } else {
                ck_assert(x.lo == lo && x.hi == hi);
                ck_assert(x.tick[0] >= lo - tol && x.tick[x.n - 1] <= hi + tol);
            }
            /* about as many ticks as asked for */
            ck_assert_msg(x.n <= 2 * target + 3, "seed %llu trial %d: %d ticks for %d", seed, trial,
                          x.n, target);
        }
    }
}
END_TEST

START_TEST(degenerate_ranges_give_a_usable_axis) {
    const double cases[][2] = {
        {5, 5},          {0, 0},           {-3, -3},         {NAN, NAN}, {INFINITY, -INFINITY},
        {1e308, -1e308}, {1e-300, 1e-300}, {1e-320, 2e-320}, {3, 1},     {NAN, 2},
        {1, 1 + 1e-15},  {-1e300, 1e300}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const plot_axis a = plot_axis_make(cases[k][0], cases[k][1], 5, true);
        ck_assert_msg(isfinite(a.lo) && isfinite(a.hi) && a.lo < a.hi, "case %zu", k);
        ck_assert_msg(a.n >= 2 && a.n <= PLOT_MAX_TICKS, "case %zu: %d ticks", k, a.n);
        ck_step_125(a.step);
        for (int t = 0; t < a.n; t++) {
            ck_assert(isfinite(a.tick[t]));
        }
    }
    /* a constant keeps its value inside the range */
    const plot_axis c = plot_axis_make(5, 5, 5, true);
    ck_assert(c.lo < 5 && c.hi > 5);
    const plot_axis z = plot_axis_make(0, 0, 5, true);
    ck_assert(z.lo <= -1 && z.hi >= 1);
}
END_TEST

START_TEST(tick_labels) {
    char buf[64];
    const plot_axis a = plot_axis_make(-1.0, 1.0, 4, true);
    plot_tick_label(&a, a.tick[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "-1.0");
    plot_tick_label(&a, 0.5, buf, sizeof buf);
    ck_assert_str_eq(buf, "0.5");
    plot_tick_label(&a, -0.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "0.0");
    const plot_axis i = plot_axis_make(0.0, 100.0, 5, true);
    plot_tick_label(&i, 40.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "40");
    const plot_axis big = plot_axis_make(0.0, 1e7, 5, true);
    plot_tick_label(&big, 2e6, buf, sizeof buf);
    ck_assert_str_eq(buf, "2e6");
    plot_tick_label(&big, 0.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "0");
    const plot_axis tiny = plot_axis_make(0.0, 1e-6, 20, true); /* step 5e-8 */
    plot_tick_label(&tiny, 2.5e-7, buf, sizeof buf);
    ck_assert_str_eq(buf, "2.5e-7");
    const plot_axis neg = plot_axis_make(-3e9, -1e9, 4, true);
    plot_tick_label(&neg, -1.5e9, buf, sizeof buf);
    ck_assert_str_eq(buf, "-1.5e9");
}
END_TEST

/* ---- charts ----------------------------------------------------------------------------- */

START_TEST(text_is_escaped) {
    char dir[64];
    make_dir(dir, sizeof dir);
    static const double x[3] = {0, 1, 2}, y[3] = {1, 3, 2};
    const plot_mark ev[1] = {{1.0, "hit <head> & \"arm\""}};
    const plot_mark ref[1] = {{2.5, "limit 'x' > 2"}};
    plot_chart c = {.title = "a<b & \"c\" 'd'",
                    .x_label = "t <s>",
                    .y_label = "\xff\x01 bad bytes \xc3\xa9",
                    .events = ev,
                    .n_events = 1,
                    .refs = ref,
                    .n_refs = 1};
    plot_add_series(&c, "knee<L> & \"R\"", x, y, 3);
    plot_add_series(&c, "a very long joint name that cannot fit the legend </g>", x, y, 3);
    ck_chart_file(dir, "escaped", &c);
    char* s = svg_of(&c);
    ck_assert_ptr_nonnull(strstr(s, "a&lt;b &amp; &quot;c&quot; &#39;d&#39;"));
    ck_assert_ptr_nonnull(strstr(s, "knee&lt;L&gt; &amp; &quot;R&quot;"));
    ck_assert_ptr_nonnull(strstr(s, "hit &lt;head&gt;"));
    ck_assert_ptr_nonnull(strstr(s, "limit &#39;x&#39; &gt; 2"));
    ck_assert_ptr_nonnull(strstr(s, "\xEF\xBF\xBD\xEF\xBF\xBD bad bytes \xc3\xa9")); /* U+FFFD */
    ck_assert_ptr_null(strstr(s, "<L>"));
    ck_assert_ptr_null(strstr(s, "\x01"));
    ck_assert_ptr_nonnull(strstr(s, "\xE2\x80\xA6")); /* the long name is cut in the legend */
    free(s);
    ck_remove_dir(dir);
}
END_TEST

START_TEST(nan_makes_gaps_and_lone_points_dots) {
    double y[50];
    for (int i = 0; i < 50; i++) {
        y[i] = sin(0.2 * i);
    }
    y[20] = NAN, y[30] = INFINITY, y[32] = NAN; /* runs 0-19, 21-29, 31 alone, 33-49 */
    plot_chart c = {.title = "gaps"};
    plot_add_series(&c, "s", NULL, y, 50);
    char* s = svg_of(&c);
    double xy[200];
    int moves = 0;
    ck_assert_int_eq(path_points(s, 0, xy, 100, &moves), 20 + 9 + 17);
    ck_assert_int_eq(moves, 3);
    ck_assert_int_eq(count(s, "<circle"), 1);
    free(s);
}
END_TEST

START_TEST(decimation_keeps_the_extremes) {
    enum { N = 100000 };
    double* x = malloc(N * sizeof *x);
    double* y = malloc(N * sizeof *y);
    unsigned long long seed = 7;
    for (int i = 0; i < N; i++) {
        x[i] = 0.001 * i;
        y[i] = rnd(&seed) * 2.0 - 1.0;
    }
    y[54321] = 900.0, y[77777] = -700.0; /* one-sample peaks */
    plot_chart c = {.title = "peaks", .y_range = {-1000.0, 1000.0}};
    plot_add_series(&c, "noise", x, y, N);
    char* s = svg_of(&c);
    double r[4];
    plot_area(s, r);
    static double xy[2 * N];
    int moves = 0;
    const int n = path_points(s, 0, xy, N, &moves);
    ck_assert_int_eq(moves, 1);
    ck_assert_msg(n <= 4 * (int)r[2] + 4, "%d points for %g px", n, r[2]);
    double ymin = INFINITY, ymax = -INFINITY, xmin_at = 0, xmax_at = 0;
    for (int k = 0; k < n; k++) {
        if (xy[2 * k + 1] < ymin) {
            ymin = xy[2 * k + 1], xmin_at = xy[2 * k];
        }
        if (xy[2 * k + 1] > ymax) {
            ymax = xy[2 * k + 1], xmax_at = xy[2 * k];
        }
    }
    /* the peaks at their heights (to the written 0.1 px) and places */
    fb_ck_near(ymin, r[1] + r[3] * (1000.0 - 900.0) / 2000.0, 0.0, 0.051);
    fb_ck_near(ymax, r[1] + r[3] * (1000.0 + 700.0) / 2000.0, 0.0, 0.051);
    fb_ck_near(xmin_at, r[0] + r[2] * 54321.0 / (N - 1), 0.0, 0.051);
    fb_ck_near(xmax_at, r[0] + r[2] * 77777.0 / (N - 1), 0.0, 0.051);
    free(s);
    /* fewer points than pixels: every point kept */
    c.series[0].n = 100;
    c.y_range[0] = c.y_range[1] = 0.0;
    s = svg_of(&c);
    ck_assert_int_eq(path_points(s, 0, xy, N, &moves), 100);
    free(s);
    free(x);
    free(y);
}
END_TEST

START_TEST(lines_are_clipped_to_a_fixed_range) {
    double y[200];
    for (int i = 0; i < 200; i++) {
        y[i] = 5.0 * sin(0.1 * i) + (i == 100 ? 1e250 : 0.0);
    }
    plot_chart c = {.y_range = {0.0, 1.0}, .x_range = {20.0, 150.0}};
    plot_add_series(&c, NULL, NULL, y, 200);
    char* s = svg_of(&c);
    double r[4], xy[800];
    plot_area(s, r);
    int moves = 0;
    const int n = path_points(s, 0, xy, 400, &moves);
    ck_assert_int_gt(n, 10);
    ck_assert_int_gt(moves, 3); /* leaves and re-enters the band */
    for (int k = 0; k < n; k++) {
        ck_assert(xy[2 * k] >= r[0] - 0.05 && xy[2 * k] <= r[0] + r[2] + 0.05);
        ck_assert(xy[2 * k + 1] >= r[1] - 0.05 && xy[2 * k + 1] <= r[1] + r[3] + 0.05);
    }
    free(s);
}
END_TEST

START_TEST(degenerate_charts_do_not_break) {
    char dir[64];
    make_dir(dir, sizeof dir);
    static const double one[1] = {3.0}, flat[5] = {2, 2, 2, 2, 2};
    static const double huge[4] = {-1e300, 1e300, 1e308, -1e299};
    static const double tiny[4] = {1e-300, 3e-300, -2e-300, 0.0};
    static const double nans[3] = {NAN, NAN, NAN};
    static const double xs[5] = {1, 1, 1, 1, 1};
    const plot_mark far[2] = {{-1e9, "before"}, {NAN, NULL}};
    plot_chart empty = {0};
    ck_chart_file(dir, "empty", &empty);
    plot_chart zero_n = {.title = "no points"};
    plot_add_series(&zero_n, "none", NULL, NULL, 0);
    ck_chart_file(dir, "zero_n", &zero_n);
    plot_chart single = {.events = far, .n_events = 2, .refs = far, .n_refs = 2};
    plot_add_series(&single, "one", one, one, 1);
    ck_chart_file(dir, "single", &single);
    char* s = svg_of(&single);
    ck_assert_int_eq(count(s, "<circle"), 1);
    free(s);
    plot_chart constant = {.y_from_zero = true};
    plot_add_series(&constant, "flat", NULL, flat, 5);
    plot_add_series(&constant, "vertical", xs, flat, 5);
    ck_chart_file(dir, "constant", &constant);
    plot_chart big = {0};
    plot_add_series(&big, "huge", NULL, huge, 4);
    plot_add_series(&big, "tiny", NULL, tiny, 4);
    ck_chart_file(dir, "big", &big);
    plot_chart small = {0};
    plot_add_series(&small, "tiny", tiny, tiny, 4);
    ck_chart_file(dir, "small", &small);
    plot_chart allnan = {.width = 1, .height = 1};
    plot_add_series(&allnan, "gaps only", nans, nans, 3);
    ck_chart_file(dir, "allnan", &allnan);
    /* full chart: twelve named series, a narrow size that must grow for the legend */
    plot_chart full = {.width = 200, .height = 150, .x_label = "x", .y_label = "y"};
    for (int k = 0; k < PLOT_MAX_SERIES; k++) {
        ck_assert_int_eq(plot_add_series(&full, "series with a name", NULL, flat, 5), k);
    }
    ck_assert_int_eq(plot_add_series(&full, "one too many", NULL, flat, 5), -1);
    ck_chart_file(dir, "full", &full);
    /* invalid charts are refused before anything is written */
    ck_assert_int_eq(plot_add_series(&empty, "bad", NULL, NULL, 3), -1);
    ck_assert_int_eq(plot_add_series(&empty, "bad", NULL, flat, -1), -1);
    plot_chart bad = {.n_series = 1, .series = {{.name = "no y", .n = 4}}};
    FILE* devnull = fopen("/dev/null", "w");
    ck_assert_int_eq(plot_svg_write(devnull, &bad), -1);
    bad = (plot_chart){.n_series = PLOT_MAX_SERIES + 1};
    ck_assert_int_eq(plot_svg_write(devnull, &bad), -1);
    bad = (plot_chart){.n_events = 2};
    ck_assert_int_eq(plot_svg_write(devnull, &bad), -1);
    ck_assert_int_eq(plot_svg_write(devnull, NULL), -1);
    fclose(devnull);
    ck_remove_dir(dir);
}
END_TEST

START_TEST(output_is_deterministic) {
    double t[500], a[500], b[500];
    for (int i = 0; i < 500; i++) {
        t[i] = i / 120.0;
        a[i] = sin(t[i] * 3.0) * 0.7;
        b[i] = cos(t[i] * 2.0) * 1e-3;
    }
    const plot_mark ev[2] = {{1.0, "hit"}, {3.5, "hit"}};
    plot_chart c = {.title = "twice", .events = ev, .n_events = 2};
    plot_add_series(&c, "a", t, a, 500);
    plot_add_series(&c, "b", t, b, 500);
    char* s1 = svg_of(&c);
    char* s2 = svg_of(&c);
    ck_assert_str_eq(s1, s2);
    free(s1);
    free(s2);
}
END_TEST

START_TEST(save_is_whole_or_nothing) {
    char dir[64], path[128];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/c.svg", dir);
    static const double y[3] = {1, 2, 3};
    plot_chart c = {.title = "saved"};
    plot_add_series(&c, "y", NULL, y, 3);
    fb_error err;
    ck_assert_int_eq(plot_svg_save(path, &c, &err), FB_OK);
    char* s = ck_slurp(path);
    ck_assert_int_eq(strncmp(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44), 0);
    free(s);
    ck_assert_int_eq(ck_count_entries(dir), 1); /* no temporary left */
    ck_assert_int_eq(plot_svg_save("/nonexistent/dir/c.svg", &c, &err), FB_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/dir/c.svg"));
    c.series[0].y = NULL;
    unlink(path);
    ck_assert_int_eq(plot_svg_save(path, &c, &err), FB_EINVAL);
    ck_assert_int_eq(ck_count_entries(dir), 0);
    ck_remove_dir(dir);
}
END_TEST

/* ---- HTML ------------------------------------------------------------------------------- */

static int report_body(html_doc* h, void* ctx) {
    const plot_chart* c = ctx;
    html_heading(h, 2, "Tracking <error> & \"hits\"");
    html_paragraphf(h, "%d frames at %g Hz; 5 < 6 & 'quotes'", 240, 120.0);
    html_pre(h, "featherbone simulate clip.bvh --report r.html");
    html_chart(h, c);
    const char* head[3] = {"body part", "mean (m)", "max (m)"};
    html_table_begin(h, "Per body part <table>", 3, head);
    html_cell_text(h, "left <hand>");
    html_cell_num(h, 0.0213, 3);
    html_cell_num(h, NAN, 3);
    html_cell_text(h, "head");
    html_cell_num(h, -0.0001, 2); /* a partial last row is padded */
    html_table_end(h);
    html_chart(h, c); /* two inline charts on one page */
    return 0;
}

static int failing_body(html_doc* h, void* ctx) {
    (void)ctx;
    html_paragraph(h, "half a report");
    return 1;
}

START_TEST(html_page_is_well_formed_and_escaped) {
    char dir[64], path[128];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/r.html", dir);
    double t[100], e[100];
    for (int i = 0; i < 100; i++) {
        t[i] = i * 0.01, e[i] = 0.02 + 0.01 * sin(i * 0.3);
    }
    const plot_mark hit[1] = {{0.5, "hit"}};
    plot_chart c = {.title = "Tracking error",
                    .x_label = "time (s)",
                    .y_label = "m",
                    .events = hit,
                    .n_events = 1,
                    .y_from_zero = true};
    plot_add_series(&c, "left hand", t, e, 100);
    fb_error err;
    ck_assert_msg(html_save(path, "Report <1> & co", report_body, &c, &err) == FB_OK, "%s",
                  err.msg);
    ck_well_formed(path);
    char* s = ck_slurp(path);
    ck_assert_int_eq(strncmp(s, "<!DOCTYPE html>\n", 16), 0);
    ck_assert_ptr_nonnull(strstr(s, "<title>Report &lt;1&gt; &amp; co</title>"));
    ck_assert_ptr_nonnull(strstr(s, "<h2>Tracking &lt;error&gt; &amp; &quot;hits&quot;</h2>"));
    ck_assert_ptr_nonnull(
        strstr(s, "<p>240 frames at 120 Hz; 5 &lt; 6 &amp; &#39;quotes&#39;</p>"));
    ck_assert_ptr_nonnull(strstr(s, "<td>left &lt;hand&gt;</td><td class=\"num\">0.021</td>"
                                    "<td class=\"num\">\xE2\x80\x93</td></tr>"));
    ck_assert_ptr_nonnull(strstr(s, "<td>head</td><td class=\"num\">0.00</td><td></td></tr>"));
    ck_assert_int_eq(count(s, "<svg xmlns"), 2);
    ck_assert_ptr_null(strstr(s, "<script"));
    ck_assert_ptr_null(strstr(s, "http://www.w3.org/2000/svg\" href")); /* nothing external */
    free(s);
    /* a body that fails leaves no file and no temporary */
    unlink(path);
    ck_assert_int_eq(html_save(path, "x", failing_body, NULL, &err), FB_EIO);
    ck_assert_int_eq(ck_count_entries(dir), 0);
    ck_remove_dir(dir);
}
END_TEST

START_TEST(html_misuse_is_reported) {
    FILE* f = fopen("/dev/null", "w");
    html_doc h;
    html_begin(&h, f, "misuse");
    html_cell_text(&h, "no table");
    ck_assert_int_eq(html_end(&h), -1);
    html_begin(&h, f, "invalid chart");
    const plot_chart bad = {.n_series = -1};
    html_chart(&h, &bad);
    ck_assert_int_eq(html_end(&h), -1);
    html_begin(&h, f, "fine");
    html_table_begin(&h, NULL, 2, NULL);
    html_cell_num(&h, 1.0, 40);
    ck_assert_int_eq(html_end(&h), 0); /* a table left open is closed */
    fclose(f);
}
END_TEST

static Suite* plot_suite(void) {
    Suite* s = suite_create("plot");
    TCase* tc = tcase_create("plot");
    tcase_add_test(tc, ticks_are_1_2_5_and_cover_the_data);
    tcase_add_test(tc, degenerate_ranges_give_a_usable_axis);
    tcase_add_test(tc, tick_labels);
    tcase_add_test(tc, text_is_escaped);
    tcase_add_test(tc, nan_makes_gaps_and_lone_points_dots);
    tcase_add_test(tc, decimation_keeps_the_extremes);
    tcase_add_test(tc, lines_are_clipped_to_a_fixed_range);
    tcase_add_test(tc, degenerate_charts_do_not_break);
    tcase_add_test(tc, output_is_deterministic);
    tcase_add_test(tc, save_is_whole_or_nothing);
    tcase_add_test(tc, html_page_is_well_formed_and_escaped);
    tcase_add_test(tc, html_misuse_is_reported);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return ck_run_suite(plot_suite());
}
