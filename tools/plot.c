/* SVG line charts (see plot.h).
 *
 * Why our own writer: no Debian C library does this well. GNU plotutils' libplot, the one
 * packaged C plotting library, is unmaintained since 2009. cairo would only draw the lines —
 * axes, ticks and the legend would still be ours — and its SVG surface turns text into glyph
 * outlines, so labels could be neither selected nor searched, and files grow. A line chart is
 * a few hundred lines of text output, written here directly.
 *
 * Everything is laid out in px of the chart; the y axis of SVG points down. */
#define _POSIX_C_SOURCE 200809L
#include "plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

/* internal header: the library's whole-or-nothing writer, reused rather than copied (the
 * fb_report target in CMakeLists.txt says why a tool reaches into src/ here) */
#include "util/atomic_file.h"
#include "util/error.h"

/* Layout, in px (font sizes in px as well). */
enum {
    FONT = 12,             /* tick labels, axis labels, legend */
    SMALL_FONT = 10,       /* event and reference labels */
    TITLE_FONT = 14,       /* chart title */
    PAD = 10,              /* outer padding */
    TICK_LEN = 4,          /* tick marks outside the plot area */
    LEGEND_ROW = 16,       /* legend line spacing */
    LEGEND_SWATCH = 22,    /* legend line sample */
    LEGEND_MAX_CHARS = 28, /* longer names are cut with an ellipsis (full name as tooltip) */
    MIN_PLOT_W = 60,       /* the plot area never gets narrower (the chart grows instead) */
    PX_PER_XTICK = 90,     /* about one x tick per this many px */
    PX_PER_YTICK = 40,     /* about one y tick per this many px */
};
/* Average glyph advance of a sans-serif font as a fraction of its size: enough to reserve
 * room for labels without measuring text. */
static const double CHAR_W = 0.6;
/* Coordinates are clamped to +-this before clipping, so a value far outside a fixed range
 * cannot overflow; with the plot area a few hundred px wide the visible part of a line to
 * such a point is off by far less than a pixel. */
static const double PX_CLAMP = 1e6;
/* Axis ends closer than this (relative) count as one value: the range is then widened. */
static const double FLAT_REL = 1e-9;
/* Magnitudes below this count as zero when choosing a range (far below any physical value
 * we plot, and above the subnormals where steps lose precision). */
static const double TINY = 1e-290;
/* Automatic y ranges are widened by this fraction of the data's spread before rounding out
 * to whole ticks. */
static const double Y_HEADROOM = 0.02;
/* Slack, in steps, when deciding whether a tick lies on a range end. */
static const double TICK_EPS = 1e-9;

/* Okabe-Ito: blue, vermillion, bluish green, orange, sky blue, reddish purple. */
static const char* const PALETTE[6] = {"#0072B2", "#D55E00", "#009E73",
                                       "#E69F00", "#56B4E9", "#CC79A7"};
static const char DASHED[] = "6 3";

const char* plot_color(int i) {
    return PALETTE[(unsigned)i % 6u];
}

int plot_add_series(plot_chart* c, const char* name, const double* x, const double* y, int n) {
    if (c->n_series < 0 || c->n_series >= PLOT_MAX_SERIES || n < 0 || (n > 0 && !y)) {
        return -1;
    }
    c->series[c->n_series] = (plot_series){.name = name, .x = x, .y = y, .n = n};
    return c->n_series++;
}

/* ---- text ------------------------------------------------------------------------------ */

/* Code points in s (invalid bytes count one each, as they are written as one U+FFFD). */
static int utf8_count(const char* s) {
    int n = 0;
    for (const unsigned char* p = (const unsigned char*)s; p && *p; p++) {
        n += (*p & 0xC0) != 0x80;
    }
    return n;
}

/* Length of the valid UTF-8 sequence at p that XML 1.0 allows, its code point in *cp; 0 when
 * the bytes there are not one. */
static int utf8_char(const unsigned char* p, uint32_t* cp) {
    const unsigned c = p[0];
    int len;
    uint32_t v;
    if (c < 0x80) {
        len = 1, v = c;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07;
    } else {
        return 0;
    }
    for (int k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80) { /* also stops at the terminating NUL */
            return 0;
        }
        v = (v << 6) | (p[k] & 0x3Fu);
    }
    const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000}; /* shortest form only */
    if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || v == 0xFFFE ||
        v == 0xFFFF || (v < 0x20 && v != '\t' && v != '\n' && v != '\r')) {
        return 0;
    }
    *cp = v;
    return len;
}

/* Writes at most max_cp code points of s (all when max_cp < 0), escaped. */
static void xml_text_n(FILE* f, const char* s, int max_cp) {
    const unsigned char* p = (const unsigned char*)s;
    for (int n = 0; p && *p && (max_cp < 0 || n < max_cp); n++) {
        uint32_t cp = 0;
        const int len = utf8_char(p, &cp);
        if (len == 0) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD for the offending byte */
            p++;
            continue;
        }
        switch (cp) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fwrite(p, 1, (size_t)len, f);
            break;
        }
        p += len;
    }
}

void plot_xml_text(FILE* f, const char* s) {
    xml_text_n(f, s, -1);
}

/* A px coordinate with one decimal, by integer arithmetic: locale-free, no "-0", no
 * exponent. v must be within +-PX_CLAMP. */
static void put_num(FILE* f, double v) {
    long long t = llround(v * 10.0);
    if (t < 0) {
        fputc('-', f);
        t = -t;
    }
    fprintf(f, "%lld", t / 10);
    if (t % 10) {
        fprintf(f, ".%lld", t % 10);
    }
}

/* ---- axes ------------------------------------------------------------------------------ */

plot_axis plot_axis_make(double dmin, double dmax, int target, bool expand) {
    plot_axis a;
    memset(&a, 0, sizeof a);
    /* repair the ends: non-finite, huge, swapped */
    if (!isfinite(dmin) && !isfinite(dmax)) {
        dmin = 0.0, dmax = 1.0;
    } else if (!isfinite(dmin)) {
        dmin = dmax;
    } else if (!isfinite(dmax)) {
        dmax = dmin;
    }
    dmin = fmin(fmax(dmin, -PLOT_MAX_ABS), PLOT_MAX_ABS);
    dmax = fmin(fmax(dmax, -PLOT_MAX_ABS), PLOT_MAX_ABS);
    if (dmin > dmax) {
        const double t = dmin;
        dmin = dmax, dmax = t;
    }
    /* a flat range (constant data, or a spread lost in rounding) gets a margin */
    const double mag = fmax(fabs(dmin), fabs(dmax));
    if (!(dmax - dmin > FLAT_REL * mag) || dmax - dmin < TINY) {
        const double mid = dmin / 2.0 + dmax / 2.0;
        const double half = fabs(mid) >= TINY ? 0.1 * fabs(mid) : 1.0;
        dmin = mid - half, dmax = mid + half;
    }
    /* the step: 1, 2 or 5 times a power of ten, nearest to span / target */
    target = target < 2 ? 2 : target > 20 ? 20 : target;
    const double raw = (dmax - dmin) / target;
    const double p10 = pow(10.0, floor(log10(raw)));
    const double norm = raw / p10;
    double mant = norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0;
    double k0, k1;
    for (;;) {
        const double step = mant * p10;
        k0 = expand ? floor(dmin / step + TICK_EPS) : ceil(dmin / step - TICK_EPS);
        k1 = expand ? ceil(dmax / step - TICK_EPS) : floor(dmax / step + TICK_EPS);
        if (k1 - k0 + 1.0 <= PLOT_MAX_TICKS) {
            a.step = step;
            break;
        }
        /* cannot happen with target <= 20 (at most ~33 ticks); kept so it cannot overrun */
        mant = mant == 1.0 ? 2.0 : mant == 2.0 ? 5.0 : mant * 2.0;
    }
    a.lo = expand ? fmin(k0 * a.step, dmin) : dmin;
    a.hi = expand ? fmax(k1 * a.step, dmax) : dmax;
    /* ticks as whole multiples of the step (no accumulated sums); the zero tick exactly 0 */
    for (double k = k0; k <= k1 && a.n < PLOT_MAX_TICKS; k += 1.0) {
        const double t = k * a.step;
        a.tick[a.n++] = fabs(t) < 1e-6 * a.step ? 0.0 : t;
    }
    return a;
}

/* floor(log10(v)) for v > 0, robust to log10 landing just below an exact power of ten */
static int decade(double v) {
    return (int)floor(log10(v) + 1e-9);
}

void plot_tick_label(const plot_axis* a, double v, char* buf, size_t cap) {
    if (cap == 0) {
        return;
    }
    if (v == 0.0) {
        v = 0.0; /* no "-0" */
    }
    const int se = decade(a->step);
    if (fmax(fabs(a->lo), fabs(a->hi)) < 1e6 && a->step >= 1e-4) {
        snprintf(buf, cap, "%.*f", se < 0 ? -se : 0, v);
        return;
    }
    if (v == 0.0 || !isfinite(v)) {
        snprintf(buf, cap, "%s", v == 0.0 ? "0" : "?");
        return;
    }
    /* mantissa digits down to the step's decade, then tidied: 2.50e+07 -> 2.5e7 */
    int digits = decade(fabs(v)) - se;
    digits = digits < 0 ? 0 : digits > 16 ? 16 : digits;
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*e", digits, v);
    char* e = strchr(tmp, 'e');
    if (!e) {
        snprintf(buf, cap, "%s", tmp);
        return;
    }
    *e = '\0';
    const char* ex = e + 1;
    char* end = e; /* strip trailing zeros of the mantissa, then a bare '.' */
    if (strchr(tmp, '.')) {
        while (end > tmp && end[-1] == '0') {
            *--end = '\0';
        }
        if (end > tmp && end[-1] == '.') {
            *--end = '\0';
        }
    }
    const bool neg = *ex == '-';
    ex += (*ex == '-' || *ex == '+');
    while (ex[0] == '0' && ex[1] != '\0') {
        ex++;
    }
    snprintf(buf, cap, "%se%s%s", tmp, neg ? "-" : "", ex);
}

/* ---- layout ---------------------------------------------------------------------------- */

typedef struct frame {
    double x0, y0, w, h; /* plot area: left, top, width, height (px) */
    plot_axis ax, ay;
} frame;

typedef struct layout {
    int width, height; /* the whole chart */
    frame fr;
    int n_legend;    /* named series */
    double legend_x; /* left of the legend column */
    bool any_data;   /* at least one valid point */
} layout;

static bool ok(double v) {
    return isfinite(v) && fabs(v) <= PLOT_MAX_ABS;
}

static double sx(const plot_series* s, int i) {
    return s->x ? s->x[i] : (double)i;
}

/* NaN-safe clamp to +-PX_CLAMP */
static double clamp_px(double v) {
    return !(v > -PX_CLAMP) ? -PX_CLAMP : v > PX_CLAMP ? PX_CLAMP : v;
}

static double fx(const frame* fr, double x) {
    return clamp_px(fr->x0 + (x - fr->ax.lo) / (fr->ax.hi - fr->ax.lo) * fr->w);
}

static double fy(const frame* fr, double y) {
    return clamp_px(fr->y0 + fr->h - (y - fr->ay.lo) / (fr->ay.hi - fr->ay.lo) * fr->h);
}

static bool fixed(const double r[2]) {
    return isfinite(r[0]) && isfinite(r[1]) && r[0] < r[1];
}

/* Longest tick label of an axis, in characters. */
static int widest_label(const plot_axis* a) {
    int w = 0;
    for (int t = 0; t < a->n; t++) {
        char buf[64];
        plot_tick_label(a, a->tick[t], buf, sizeof buf);
        w = (int)strlen(buf) > w ? (int)strlen(buf) : w;
    }
    return w;
}

static int clampi(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

static layout make_layout(const plot_chart* c) {
    layout L;
    memset(&L, 0, sizeof L);
    L.width = c->width > 0 ? clampi(c->width, 200, 10000) : PLOT_DEFAULT_WIDTH;
    L.height = c->height > 0 ? clampi(c->height, 150, 10000) : PLOT_DEFAULT_HEIGHT;
    /* data extent over valid points; reference lines count towards y */
    double xr[2] = {INFINITY, -INFINITY}, yr[2] = {INFINITY, -INFINITY};
    int legend_chars = 0;
    for (int k = 0; k < c->n_series; k++) {
        const plot_series* s = &c->series[k];
        for (int i = 0; i < s->n; i++) {
            const double x = sx(s, i), y = s->y[i];
            if (ok(x) && ok(y)) {
                xr[0] = fmin(xr[0], x), xr[1] = fmax(xr[1], x);
                yr[0] = fmin(yr[0], y), yr[1] = fmax(yr[1], y);
                L.any_data = true;
            }
        }
        if (s->name && s->name[0]) {
            L.n_legend++;
            const int n = utf8_count(s->name);
            legend_chars = n > legend_chars ? n : legend_chars;
        }
    }
    for (int k = 0; k < c->n_refs; k++) {
        if (ok(c->refs[k].at)) {
            yr[0] = fmin(yr[0], c->refs[k].at), yr[1] = fmax(yr[1], c->refs[k].at);
        }
    }
    if (c->y_from_zero) {
        yr[0] = fmin(yr[0], 0.0), yr[1] = fmax(yr[1], 0.0);
    }
    if (!(xr[0] <= xr[1])) {
        xr[0] = 0.0, xr[1] = 1.0;
    }
    if (!(yr[0] <= yr[1])) {
        yr[0] = 0.0, yr[1] = 1.0;
    }
    /* headroom, so a line or threshold at an extreme does not run along the frame; an end at
     * zero stays there (errors and magnitudes start at 0) */
    const double pad = Y_HEADROOM * (yr[1] - yr[0]);
    yr[0] -= yr[0] != 0.0 ? pad : 0.0;
    yr[1] += yr[1] != 0.0 ? pad : 0.0;
    /* vertical: title, plot area, tick labels, x label; grown to fit the legend */
    frame* fr = &L.fr;
    const double top = c->title ? PAD + TITLE_FONT + 12 : PAD + 4;
    const double bottom = TICK_LEN + FONT + 8 + (c->x_label ? FONT + 8 : 0) + PAD / 2;
    const double legend_h = L.n_legend * LEGEND_ROW + 8;
    if (L.height < top + bottom + legend_h) {
        L.height = (int)ceil(top + bottom + legend_h);
    }
    fr->y0 = top;
    fr->h = L.height - top - bottom;
    fr->ay = fixed(c->y_range)
                 ? plot_axis_make(c->y_range[0], c->y_range[1], (int)(fr->h / PX_PER_YTICK), false)
                 : plot_axis_make(yr[0], yr[1], (int)(fr->h / PX_PER_YTICK), true);
    /* horizontal: y label, y tick labels, plot area, legend; grown to keep the area usable */
    const double left = PAD / 2 + (c->y_label ? FONT + 10 : 0) +
                        widest_label(&fr->ay) * CHAR_W * FONT + TICK_LEN + 6;
    const int chars = legend_chars < LEGEND_MAX_CHARS ? legend_chars : LEGEND_MAX_CHARS;
    const double legend_w = L.n_legend ? LEGEND_SWATCH + 6 + chars * CHAR_W * FONT + PAD : 0.0;
    const double right = PAD + legend_w;
    if (L.width < left + right + MIN_PLOT_W) {
        L.width = (int)ceil(left + right + MIN_PLOT_W);
    }
    fr->x0 = round(left);
    fr->w = round(L.width - left - right);
    L.legend_x = fr->x0 + fr->w + PAD;
    fr->ax = fixed(c->x_range)
                 ? plot_axis_make(c->x_range[0], c->x_range[1], (int)(fr->w / PX_PER_XTICK), false)
                 : plot_axis_make(xr[0], xr[1], (int)(fr->w / PX_PER_XTICK), false);
    return L;
}

/* ---- lines ----------------------------------------------------------------------------- */

/* Clips the segment a-b to the rectangle [x0, x1] x [y0, y1] (Liang-Barsky). An end that is
 * inside stays bit-identical, so consecutive segments join without a new moveto. */
static bool clip_segment(const frame* fr, double* ax, double* ay, double* bx, double* by) {
    const double dx = *bx - *ax, dy = *by - *ay;
    const double p[4] = {-dx, dx, -dy, dy};
    const double q[4] = {*ax - fr->x0, fr->x0 + fr->w - *ax, *ay - fr->y0, fr->y0 + fr->h - *ay};
    double t0 = 0.0, t1 = 1.0;
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0.0) {
            if (q[k] < 0.0) {
                return false; /* parallel to this edge and outside it */
            }
            continue;
        }
        const double r = q[k] / p[k];
        if (p[k] < 0.0) {
            if (r > t1) {
                return false;
            }
            t0 = r > t0 ? r : t0;
        } else {
            if (r < t0) {
                return false;
            }
            t1 = r < t1 ? r : t1;
        }
    }
    const double x0 = *ax, y0 = *ay;
    if (t1 < 1.0) {
        *bx = x0 + t1 * dx, *by = y0 + t1 * dy;
    }
    if (t0 > 0.0) {
        *ax = x0 + t0 * dx, *ay = y0 + t0 * dy;
    }
    return true;
}

/* Draws one series as a <path>, opened at its first visible segment. */
typedef struct pen {
    FILE* f;
    const frame* fr;
    int series;
    bool started; /* the <path d="... is open */
    bool down;    /* the path ends at (px, py) */
    double px, py;
    bool has_prev; /* (qx, qy) is the previous point of the current run */
    double qx, qy;
} pen;

static void pen_emit(pen* p, bool move, double x, double y) {
    if (!p->started) {
        fprintf(p->f,
                "<path class=\"s%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                "stroke-linejoin=\"round\"%s%s%s d=\"",
                p->series, plot_color(p->series), p->series >= 6 ? " stroke-dasharray=\"" : "",
                p->series >= 6 ? DASHED : "", p->series >= 6 ? "\"" : "");
        p->started = true;
    }
    fputc(move ? 'M' : ' ', p->f);
    put_num(p->f, x);
    fputc(' ', p->f);
    put_num(p->f, y);
}

static void pen_to(pen* p, double x, double y) {
    if (p->has_prev) {
        double ax = p->qx, ay = p->qy, bx = x, by = y;
        if (clip_segment(p->fr, &ax, &ay, &bx, &by)) {
            if (!p->down || ax != p->px || ay != p->py) {
                pen_emit(p, true, ax, ay);
            }
            pen_emit(p, false, bx, by);
            p->down = true, p->px = bx, p->py = by;
        }
    }
    p->has_prev = true, p->qx = x, p->qy = y;
}

static void pen_break(pen* p) {
    p->has_prev = false, p->down = false;
}

/* Decimation state: the points of the current pixel column seen so far. */
typedef struct col_pt {
    int i;
    double x, y;
} col_pt;
typedef struct column {
    bool open;
    long col;
    col_pt first, lo, hi, last; /* lo, hi: least and greatest px y */
} column;

static void column_add(column* c, long col, int i, double x, double y) {
    const col_pt pt = {i, x, y};
    if (!c->open) {
        c->open = true, c->col = col;
        c->first = c->lo = c->hi = c->last = pt;
        return;
    }
    c->lo = y < c->lo.y ? pt : c->lo;
    c->hi = y > c->hi.y ? pt : c->hi;
    c->last = pt;
}

/* Emits the column's first, extreme and last points in their original order. */
static void column_flush(column* c, pen* p) {
    if (!c->open) {
        return;
    }
    c->open = false;
    const col_pt* lo = c->lo.i < c->hi.i ? &c->lo : &c->hi;
    const col_pt* hi = c->lo.i < c->hi.i ? &c->hi : &c->lo;
    const col_pt* pts[4] = {&c->first, lo, hi, &c->last};
    int prev = -1;
    for (int k = 0; k < 4; k++) {
        if (pts[k]->i > prev) {
            pen_to(p, pts[k]->x, pts[k]->y);
            prev = pts[k]->i;
        }
    }
}

static bool inside(const frame* fr, double x, double y) {
    return x >= fr->x0 && x <= fr->x0 + fr->w && y >= fr->y0 && y <= fr->y0 + fr->h;
}

static void draw_series(FILE* f, const frame* fr, const plot_series* s, int si) {
    fputs("<g>", f);
    if (s->name && s->name[0]) {
        fputs("<title>", f);
        plot_xml_text(f, s->name);
        fputs("</title>", f);
    }
    pen p = {.f = f, .fr = fr, .series = si};
    /* more points than pixel columns: keep first/min/max/last per column */
    const bool decimate = s->n > (int)fr->w;
    column col = {0};
    for (int i = 0; i < s->n; i++) {
        const double x = sx(s, i), y = s->y[i];
        if (!ok(x) || !ok(y)) {
            column_flush(&col, &p);
            pen_break(&p);
            continue;
        }
        const double X = fx(fr, x), Y = fy(fr, y);
        if (!decimate) {
            pen_to(&p, X, Y);
            continue;
        }
        const long c = (long)floor(X);
        if (col.open && c != col.col) {
            column_flush(&col, &p);
        }
        column_add(&col, c, i, X, Y);
    }
    column_flush(&col, &p);
    if (p.started) {
        fputs("\"/>", f);
    }
    /* a point with no valid neighbour has no line: a dot */
    for (int i = 0; i < s->n; i++) {
        const bool here = ok(sx(s, i)) && ok(s->y[i]);
        const bool before = i > 0 && ok(sx(s, i - 1)) && ok(s->y[i - 1]);
        const bool after = i + 1 < s->n && ok(sx(s, i + 1)) && ok(s->y[i + 1]);
        const double X = fx(fr, sx(s, i)), Y = fy(fr, s->y[i]);
        if (here && !before && !after && inside(fr, X, Y)) {
            fputs("<circle cx=\"", f);
            put_num(f, X);
            fputs("\" cy=\"", f);
            put_num(f, Y);
            fprintf(f, "\" r=\"2\" fill=\"%s\"/>", plot_color(si));
        }
    }
    fputs("</g>\n", f);
}

/* ---- furniture: grid, axes, labels, marks, legend ------------------------------------- */

static void put_attr_num(FILE* f, const char* name, double v) {
    fprintf(f, " %s=\"", name);
    put_num(f, clamp_px(v));
    fputc('"', f);
}

/* Opens a <text> element at (x, y) with optional extra attributes. */
static void text_at(FILE* f, double x, double y, const char* attrs) {
    fputs("<text", f);
    put_attr_num(f, "x", x);
    put_attr_num(f, "y", y);
    fprintf(f, "%s%s>", attrs[0] ? " " : "", attrs);
}

static void draw_axes(FILE* f, const plot_chart* c, const layout* L) {
    const frame* fr = &L->fr;
    const double x1 = fr->x0 + fr->w, y1 = fr->y0 + fr->h;
    /* grid at the ticks that lie in the range */
    fputs("<path stroke=\"#e4e4e4\" fill=\"none\" d=\"", f);
    for (int t = 0; t < fr->ay.n; t++) {
        const double y = fy(fr, fr->ay.tick[t]);
        if (y >= fr->y0 - 0.5 && y <= y1 + 0.5) {
            fputc('M', f), put_num(f, fr->x0), fputc(' ', f), put_num(f, y);
            fputc('H', f), put_num(f, x1);
        }
    }
    for (int t = 0; t < fr->ax.n; t++) {
        const double x = fx(fr, fr->ax.tick[t]);
        if (x >= fr->x0 - 0.5 && x <= x1 + 0.5) {
            fputc('M', f), put_num(f, x), fputc(' ', f), put_num(f, fr->y0);
            fputc('V', f), put_num(f, y1);
        }
    }
    fputs("\"/>\n<rect class=\"plot-area\"", f);
    put_attr_num(f, "x", fr->x0);
    put_attr_num(f, "y", fr->y0);
    put_attr_num(f, "width", fr->w);
    put_attr_num(f, "height", fr->h);
    fputs(" fill=\"none\" stroke=\"#888\"/>\n", f);
    /* tick labels */
    fputs("<g fill=\"#333\" font-size=\"11\" text-anchor=\"end\">", f);
    for (int t = 0; t < fr->ay.n; t++) {
        const double y = fy(fr, fr->ay.tick[t]);
        if (y >= fr->y0 - 0.5 && y <= y1 + 0.5) {
            char buf[64];
            plot_tick_label(&fr->ay, fr->ay.tick[t], buf, sizeof buf);
            text_at(f, fr->x0 - TICK_LEN - 3, y + 4, "");
            fprintf(f, "%s</text>", buf);
        }
    }
    fputs("</g>\n<g fill=\"#333\" font-size=\"11\" text-anchor=\"middle\">", f);
    for (int t = 0; t < fr->ax.n; t++) {
        const double x = fx(fr, fr->ax.tick[t]);
        if (x >= fr->x0 - 0.5 && x <= x1 + 0.5) {
            char buf[64];
            plot_tick_label(&fr->ax, fr->ax.tick[t], buf, sizeof buf);
            text_at(f, x, y1 + TICK_LEN + FONT + 1, "");
            fprintf(f, "%s</text>", buf);
        }
    }
    fputs("</g>\n", f);
    /* axis labels and title */
    if (c->x_label) {
        text_at(f, fr->x0 + fr->w / 2, L->height - PAD / 2 - 2, "text-anchor=\"middle\"");
        plot_xml_text(f, c->x_label);
        fputs("</text>\n", f);
    }
    if (c->y_label) {
        fprintf(f, "<text text-anchor=\"middle\" transform=\"translate(%d ", PAD / 2 + FONT);
        put_num(f, fr->y0 + fr->h / 2);
        fputs(") rotate(-90)\">", f);
        plot_xml_text(f, c->y_label);
        fputs("</text>\n", f);
    }
    if (c->title) {
        text_at(f, fr->x0, PAD + TITLE_FONT, "font-size=\"14\" font-weight=\"bold\"");
        plot_xml_text(f, c->title);
        fputs("</text>\n", f);
    }
    if (!L->any_data) {
        text_at(f, fr->x0 + fr->w / 2, fr->y0 + fr->h / 2, "text-anchor=\"middle\" fill=\"#888\"");
        fputs("no data</text>\n", f);
    }
}

/* Reference lines (horizontal, label at the right end) and events (vertical, labels along
 * the top, staggered in two rows so neighbours overlap less). */
static void draw_marks(FILE* f, const plot_chart* c, const frame* fr) {
    const double x1 = fr->x0 + fr->w, y1 = fr->y0 + fr->h;
    for (int k = 0; k < c->n_refs; k++) {
        const double y = fy(fr, c->refs[k].at);
        if (!ok(c->refs[k].at) || y < fr->y0 - 0.5 || y > y1 + 0.5) {
            continue;
        }
        fputs("<g class=\"ref\" fill=\"#666\" font-size=\"10\"><path stroke=\"#777\" "
              "stroke-dasharray=\"6 3 2 3\" d=\"M",
              f);
        put_num(f, fr->x0), fputc(' ', f), put_num(f, y), fputc('H', f), put_num(f, x1);
        fputs("\"/>", f);
        if (c->refs[k].label) {
            text_at(f, x1 - 4, y - 4, "text-anchor=\"end\"");
            plot_xml_text(f, c->refs[k].label);
            fputs("</text>", f);
        }
        fputs("</g>\n", f);
    }
    int drawn = 0;
    for (int k = 0; k < c->n_events; k++) {
        const double x = fx(fr, c->events[k].at);
        if (!ok(c->events[k].at) || x < fr->x0 - 0.5 || x > x1 + 0.5) {
            continue;
        }
        fputs("<g class=\"event\" fill=\"#444\" font-size=\"10\">", f);
        const char* label = c->events[k].label;
        if (label) {
            fputs("<title>", f);
            plot_xml_text(f, label);
            fputs("</title>", f);
        }
        fputs("<path stroke=\"#444\" stroke-dasharray=\"4 3\" d=\"M", f);
        put_num(f, x), fputc(' ', f), put_num(f, fr->y0), fputc('V', f), put_num(f, y1);
        fputs("\"/>", f);
        if (label) {
            /* right of the line, or left of it near the right edge */
            const double w = utf8_count(label) * CHAR_W * SMALL_FONT;
            const bool flip = x + 3 + w > x1;
            text_at(f, flip ? x - 3 : x + 3, fr->y0 + SMALL_FONT + 2 + (drawn % 2) * 11,
                    flip ? "text-anchor=\"end\"" : "");
            plot_xml_text(f, label);
            fputs("</text>", f);
        }
        fputs("</g>\n", f);
        drawn++;
    }
}

static void draw_legend(FILE* f, const plot_chart* c, const layout* L) {
    if (L->n_legend == 0) {
        return;
    }
    fputs("<g class=\"legend\">", f);
    int row = 0;
    for (int k = 0; k < c->n_series; k++) {
        const char* name = c->series[k].name;
        if (!name || !name[0]) {
            continue;
        }
        const double y = L->fr.y0 + 8 + row++ * LEGEND_ROW;
        fputs("<g>", f);
        const bool cut = utf8_count(name) > LEGEND_MAX_CHARS;
        if (cut) {
            fputs("<title>", f);
            plot_xml_text(f, name);
            fputs("</title>", f);
        }
        fprintf(f, "<path stroke=\"%s\" stroke-width=\"2\"%s%s%s d=\"M", plot_color(k),
                k >= 6 ? " stroke-dasharray=\"" : "", k >= 6 ? DASHED : "", k >= 6 ? "\"" : "");
        put_num(f, L->legend_x), fputc(' ', f), put_num(f, y);
        fprintf(f, "h%d\"/>", LEGEND_SWATCH);
        text_at(f, L->legend_x + LEGEND_SWATCH + 6, y + 4, "");
        xml_text_n(f, name, cut ? LEGEND_MAX_CHARS - 1 : -1);
        fputs(cut ? "\xE2\x80\xA6</text></g>" : "</text></g>", f); /* U+2026 ellipsis */
    }
    fputs("</g>\n", f);
}

/* ---- the chart ------------------------------------------------------------------------- */

static bool valid_chart(const plot_chart* c) {
    if (!c || c->n_series < 0 || c->n_series > PLOT_MAX_SERIES || c->n_events < 0 ||
        c->n_refs < 0 || (c->n_events > 0 && !c->events) || (c->n_refs > 0 && !c->refs)) {
        return false;
    }
    for (int k = 0; k < c->n_series; k++) {
        if (c->series[k].n < 0 || (c->series[k].n > 0 && !c->series[k].y)) {
            return false;
        }
    }
    return true;
}

int plot_svg_write(FILE* f, const plot_chart* c) {
    if (!valid_chart(c)) {
        return -1;
    }
    const layout L = make_layout(c);
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"%d\" role=\"img\"",
            L.width, L.height, L.width, L.height, FONT);
    if (c->title) {
        fputs(" aria-label=\"", f);
        plot_xml_text(f, c->title);
        fputs("\">\n<title>", f);
        plot_xml_text(f, c->title);
        fputs("</title>\n", f);
    } else {
        fputs(">\n", f);
    }
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", L.width, L.height);
    draw_axes(f, c, &L);
    draw_marks(f, c, &L.fr);
    for (int k = 0; k < c->n_series; k++) {
        draw_series(f, &L.fr, &c->series[k], k);
    }
    draw_legend(f, c, &L);
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

void plot_svg_prolog(FILE* f) {
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
}

fb_status plot_svg_save(const char* path, const plot_chart* c, fb_error* err) {
    if (!valid_chart(c)) {
        return fb_fail(err, FB_EINVAL, "%s: invalid chart (series count or a missing array)", path);
    }
    fb_atomic_file af;
    const fb_status s = fb_atomic_open(&af, path, err);
    if (s != FB_OK) {
        return s;
    }
    plot_svg_prolog(af.f);
    if (plot_svg_write(af.f, c) != 0) {
        fb_atomic_abort(&af);
        return fb_fail(err, FB_EIO, "%s: write failed", path);
    }
    return fb_atomic_commit(&af, err);
}
