/* Line charts as SVG, for `featherbone torques --plot` and the `simulate --report` page.
 *
 * A chart is a plain struct the caller fills (zero-initialised is valid: every field has a
 * default) and points at its own arrays; nothing is copied or allocated, and the chart keeps
 * no pointer after plot_svg_write returns. Output is deterministic: the same chart gives the
 * same bytes (coordinates are written with one decimal by integer arithmetic, no timestamps).
 *
 *     plot_chart c = {.title = "Tracking error", .x_label = "time (s)", .y_label = "m"};
 *     plot_add_series(&c, "hips", t, err_hips, n);
 *     plot_svg_save("err.svg", &c, &err);
 */
#ifndef FB_TOOLS_PLOT_H
#define FB_TOOLS_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "featherbone/base.h"

/* Series per chart: six colour-blind-safe colours, solid then dashed. */
#define PLOT_MAX_SERIES 12
/* Size used when width or height is 0, in px. */
#define PLOT_DEFAULT_WIDTH 800
#define PLOT_DEFAULT_HEIGHT 320
/* Values beyond this magnitude are treated like NaN (a gap), so ranges stay finite. */
#define PLOT_MAX_ABS 1e300
/* Capacity of plot_axis.tick. */
#define PLOT_MAX_TICKS 40

/* One line. x may be NULL: then x_i = i. A NaN or infinite x or y (or one past PLOT_MAX_ABS)
 * breaks the line there; a point with no valid neighbour is drawn as a dot. x need not be
 * sorted (decimation merges runs of consecutive points, so it saves most on sorted x). */
typedef struct plot_series {
    const char* name; /* legend text; NULL or "" = not in the legend */
    const double* x;  /* (n) or NULL */
    const double* y;  /* (n) */
    int n;
} plot_series;

/* A labelled vertical (event, at = x) or horizontal (reference, at = y) line. */
typedef struct plot_mark {
    double at;
    const char* label; /* short; NULL = none */
} plot_mark;

typedef struct plot_chart {
    const char* title;   /* NULL = none */
    const char* x_label; /* NULL = none */
    const char* y_label; /* NULL = none */
    int width, height;   /* px of the whole chart; 0 = default; clamped to [200, 10000] x
                            [150, 10000], and grown to fit the legend */
    int n_series;
    plot_series series[PLOT_MAX_SERIES];
    const plot_mark* events; /* (n_events) vertical lines, e.g. hits; outside the x range:
                                not drawn */
    int n_events;
    const plot_mark* refs; /* (n_refs) horizontal lines, e.g. a threshold; included in the
                              automatic y range */
    int n_refs;
    double x_range[2]; /* fixed [lo, hi] when both finite and lo < hi; else the data's */
    double y_range[2]; /* likewise; the automatic y range gets 2% headroom (not past 0)
                          and is widened to whole ticks */
    bool y_from_zero;  /* automatic y range includes 0 (errors, magnitudes) */
} plot_chart;

/* Appends a series (arrays borrowed until the chart is written). Returns its index, or -1
 * when the chart is full, n < 0, or y is NULL with n > 0. */
int plot_add_series(plot_chart* c, const char* name, const double* x, const double* y, int n);

/* Stroke colour of series i ("#rrggbb"): Okabe-Ito (Wong, Nature Methods 8:441, 2011) without
 * black and yellow; series 6-11 reuse the colours dashed. */
const char* plot_color(int i);

/* Writes the chart as one <svg> element (with its xmlns, so it also works inline in HTML).
 * Lines are clipped to the plot area by geometry (no clipPath ids, so many charts can share a
 * page). A series with more points than the plot area has pixel columns keeps, per column,
 * the first, lowest, highest and last point (in their order), so peaks survive and the file
 * stays small. Returns 0, or -1 on a write error or an invalid chart (n_series outside
 * 0..PLOT_MAX_SERIES, a series with n > 0 and no y, events or refs NULL with a count). */
int plot_svg_write(FILE* f, const plot_chart* c);

/* The XML declaration that starts a standalone .svg file. */
void plot_svg_prolog(FILE* f);

/* Writes prolog + chart to `path` whole or not at all (a temporary beside it, renamed).
 * FB_EINVAL for an invalid chart, FB_EIO when the file cannot be written; err may be NULL. */
fb_status plot_svg_save(const char* path, const plot_chart* c, fb_error* err);

/* Writes s as XML character data, escaped for text and attribute values alike: & < > " '
 * become references; invalid UTF-8 and characters XML 1.0 forbids become U+FFFD. NULL
 * writes nothing. */
void plot_xml_text(FILE* f, const char* s);

/* An axis: its range and ticks at whole multiples of step. */
typedef struct plot_axis {
    double lo, hi; /* lo < hi, both finite */
    double step;   /* 1, 2 or 5 times a power of ten */
    int n;         /* ticks, 0..PLOT_MAX_TICKS */
    double tick[PLOT_MAX_TICKS];
} plot_axis;

/* Ticks for data in [dmin, dmax], about `target` of them (clamped to 2..20). With `expand`
 * the range widens to the enclosing ticks (so ticks cover the data: the y axis); without it
 * the range is [dmin, dmax] and the ticks lie inside (the x axis). A constant range gets a
 * margin of 10% of its value (or [-1, 1] around 0); swapped, non-finite or huge ends are
 * repaired, so the result is always usable. */
plot_axis plot_axis_make(double dmin, double dmax, int target, bool expand);

/* The label of tick value v on axis a: fixed decimals enough for the step ("0.25"), or, for
 * magnitudes from 1e6 up or steps below 1e-4, mantissa and exponent ("1.5e-7"). */
void plot_tick_label(const plot_axis* a, double v, char* buf, size_t cap);

#endif /* FB_TOOLS_PLOT_H */
