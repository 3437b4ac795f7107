/* A self-contained HTML report page: inline CSS, inline SVG charts, no scripts, no network.
 *
 * The page is also well-formed XML (polyglot HTML5), so `xmllint --noout` checks it. Every
 * text argument is escaped; there is no way to write raw markup. Write errors are remembered
 * and reported by html_end (and html_save), so callers need not check each call.
 *
 *     html_doc h;
 *     html_begin(&h, f, "Simulation report");
 *     html_heading(&h, 2, "Tracking");
 *     html_chart(&h, &chart);
 *     const char* head[] = {"body part", "mean error (m)", "max error (m)"};
 *     html_table_begin(&h, "Per body part", 3, head);
 *     html_cell_text(&h, "left hand"); html_cell_num(&h, 0.021, 3); html_cell_num(&h, 0.09, 3);
 *     html_table_end(&h);
 *     return html_end(&h);
 */
#ifndef FB_TOOLS_HTML_H
#define FB_TOOLS_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "featherbone/base.h"
#include "plot.h"

typedef struct html_doc {
    FILE* f;
    bool failed;    /* a chart was invalid or a call came out of order */
    int table_cols; /* columns of the open table; 0 = no table open */
    int cell;       /* cells written in the current row */
} html_doc;

/* Starts the page: doctype, <head> with the title and the style sheet, <body>, and the title
 * again as the <h1>. */
void html_begin(html_doc* h, FILE* f, const char* title);

/* Closes the page (and a table left open). Returns 0, or -1 when anything failed on the way
 * (a write error, an invalid chart, a table call out of order). Does not close the FILE. */
int html_end(html_doc* h);

/* <h2>..<h6> (level clamped to 2..6: the page title is the only <h1>). */
void html_heading(html_doc* h, int level, const char* text);

/* A paragraph of text. */
void html_paragraph(html_doc* h, const char* text);

/* A paragraph from a printf format; the formatted text (cut at 4095 bytes) is escaped. */
void html_paragraphf(html_doc* h, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Preformatted text (a command line, a log excerpt). */
void html_pre(html_doc* h, const char* text);

/* The chart inline, as <figure><svg>. An invalid chart writes nothing and marks failure. */
void html_chart(html_doc* h, const plot_chart* c);

/* Opens a table of n_cols columns with an optional caption (NULL = none) and header row
 * (header may be NULL; a NULL entry is an empty header cell). Cells then fill rows left to
 * right, a new row starting every n_cols cells. */
void html_table_begin(html_doc* h, const char* caption, int n_cols, const char* const* header);

/* A text cell (left-aligned). */
void html_cell_text(html_doc* h, const char* text);

/* A numeric cell: right-aligned, fixed `decimals` (clamped to 0..12), tabular figures;
 * NaN and infinities as an en dash. */
void html_cell_num(html_doc* h, double v, int decimals);

/* Closes the table, padding a partial last row with empty cells. */
void html_table_end(html_doc* h);

/* Writes a whole page to `path` whole or not at all: html_begin(title), body(h, ctx),
 * html_end, into a temporary beside the path that is renamed into place only when all of it
 * succeeded (body returning non-zero counts as failure). FB_EIO on failure; err may be NULL. */
fb_status html_save(const char* path, const char* title, int (*body)(html_doc* h, void* ctx),
                    void* ctx, fb_error* err);

#endif /* FB_TOOLS_HTML_H */
