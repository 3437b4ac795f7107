/* Self-contained HTML report pages (see html.h). */
#define _POSIX_C_SOURCE 200809L
#include "html.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "util/atomic_file.h" /* internal: see plot.c */

/* Readable defaults: a measure of about 70 characters for prose, system fonts, tabular
 * figures in tables, charts scaled down to the column on narrow screens. No '<' or '&' here:
 * the page must stay well-formed XML. */
static const char CSS[] =
    "body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "color:#1d1d1d;background:#fff;max-width:1100px;margin:1.5em auto;padding:0 1em}\n"
    "h1,h2,h3,h4,h5,h6{line-height:1.25;margin:1.4em 0 .5em}\n"
    "h1{font-size:1.6em;margin-top:.5em}h2{font-size:1.3em;border-bottom:1px solid #ddd}\n"
    "p{max-width:70ch}\n"
    "pre{background:#f5f5f5;padding:.6em .8em;overflow-x:auto;font-size:13px}\n"
    "figure{margin:1em 0}\n"
    "svg{max-width:100%;height:auto}\n"
    "table{border-collapse:collapse;margin:1em 0;font-variant-numeric:tabular-nums}\n"
    "caption{text-align:left;font-weight:600;padding-bottom:.3em}\n"
    "th,td{padding:.25em .7em;border-bottom:1px solid #e2e2e2;text-align:left;"
    "vertical-align:top}\n"
    "th{border-bottom:2px solid #bbb}\n"
    "td.num{text-align:right;white-space:nowrap}\n"
    "tbody tr:nth-child(even){background:#f8f8f8}\n";

void html_begin(html_doc* h, FILE* f, const char* title) {
    memset(h, 0, sizeof *h);
    h->f = f;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>",
          f);
    plot_xml_text(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", CSS);
    plot_xml_text(f, title);
    fputs("</h1>\n", f);
}

int html_end(html_doc* h) {
    if (h->table_cols) {
        html_table_end(h);
    }
    fputs("</body>\n</html>\n", h->f);
    return (h->failed || ferror(h->f)) ? -1 : 0;
}

/* Text in an element: <tag>text</tag> and a newline. */
static void element(html_doc* h, const char* tag, const char* text) {
    if (h->table_cols) { /* prose inside a table would be misplaced: close it first */
        html_table_end(h);
        h->failed = true;
    }
    fprintf(h->f, "<%s>", tag);
    plot_xml_text(h->f, text);
    fprintf(h->f, "</%s>\n", tag);
}

void html_heading(html_doc* h, int level, const char* text) {
    const char* tags[] = {"h2", "h3", "h4", "h5", "h6"};
    element(h, tags[level < 2 ? 0 : level > 6 ? 4 : level - 2], text);
}

void html_paragraph(html_doc* h, const char* text) {
    element(h, "p", text);
}

void html_paragraphf(html_doc* h, const char* fmt, ...) {
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    element(h, "p", buf);
}

void html_pre(html_doc* h, const char* text) {
    element(h, "pre", text);
}

void html_chart(html_doc* h, const plot_chart* c) {
    if (h->table_cols) {
        html_table_end(h);
        h->failed = true;
    }
    /* a chart that cannot be drawn writes nothing (plot_svg_write checks before writing) */
    fputs("<figure>\n", h->f);
    if (plot_svg_write(h->f, c) != 0) {
        h->failed = true;
    }
    fputs("</figure>\n", h->f);
}

void html_table_begin(html_doc* h, const char* caption, int n_cols, const char* const* header) {
    if (h->table_cols) {
        html_table_end(h);
        h->failed = true;
    }
    if (n_cols < 1) {
        h->failed = true;
        n_cols = 1;
    }
    fputs("<table>\n", h->f);
    if (caption) {
        fputs("<caption>", h->f);
        plot_xml_text(h->f, caption);
        fputs("</caption>\n", h->f);
    }
    if (header) {
        fputs("<thead><tr>", h->f);
        for (int k = 0; k < n_cols; k++) {
            fputs("<th>", h->f);
            plot_xml_text(h->f, header[k]);
            fputs("</th>", h->f);
        }
        fputs("</tr></thead>\n", h->f);
    }
    fputs("<tbody>\n", h->f);
    h->table_cols = n_cols;
    h->cell = 0;
}

/* Starts a cell, opening a row when the last one is full. False outside a table. */
static bool cell_open(html_doc* h, bool num) {
    if (!h->table_cols) {
        h->failed = true;
        return false;
    }
    if (h->cell == h->table_cols) {
        fputs("</tr>\n", h->f);
        h->cell = 0;
    }
    if (h->cell == 0) {
        fputs("<tr>", h->f);
    }
    fputs(num ? "<td class=\"num\">" : "<td>", h->f);
    h->cell++;
    return true;
}

void html_cell_text(html_doc* h, const char* text) {
    if (cell_open(h, false)) {
        plot_xml_text(h->f, text);
        fputs("</td>", h->f);
    }
}

void html_cell_num(html_doc* h, double v, int decimals) {
    if (!cell_open(h, true)) {
        return;
    }
    if (!isfinite(v)) {
        fputs("\xE2\x80\x93</td>", h->f); /* U+2013 en dash */
        return;
    }
    decimals = decimals < 0 ? 0 : decimals > 12 ? 12 : decimals;
    /* no "-0.000" for a value that rounds to zero */
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)) {
        memmove(buf, buf + 1, strlen(buf));
    }
    fprintf(h->f, "%s</td>", buf);
}

void html_table_end(html_doc* h) {
    if (!h->table_cols) {
        h->failed = true;
        return;
    }
    if (h->cell > 0) {
        for (; h->cell < h->table_cols; h->cell++) {
            fputs("<td></td>", h->f);
        }
        fputs("</tr>\n", h->f);
    }
    fputs("</tbody>\n</table>\n", h->f);
    h->table_cols = 0;
    h->cell = 0;
}

fb_status html_save(const char* path, const char* title, int (*body)(html_doc* h, void* ctx),
                    void* ctx, fb_error* err) {
    fb_atomic_file af;
    const fb_status s = fb_atomic_open(&af, path, err);
    if (s != FB_OK) {
        return s;
    }
    html_doc h;
    html_begin(&h, af.f, title);
    const int body_rc = body ? body(&h, ctx) : 0;
    if (html_end(&h) != 0 || body_rc != 0) {
        fb_atomic_abort(&af);
        if (err) {
            err->code = FB_EIO;
            snprintf(err->msg, sizeof err->msg, "%s: %s", path,
                     body_rc != 0 ? "the report could not be completed"
                                  : "write failed or an invalid chart or table");
        }
        return FB_EIO;
    }
    return fb_atomic_commit(&af, err);
}
