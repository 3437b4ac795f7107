/* featherbone-view: HUD text (stb_easy_font), key help and the timeline. */
#include "hud.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl.h"
#include "glsl.h"

/* stb_easy_font is a header of static functions; we use only some of them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop

/* Quads one frame may hold (text is ~4 quads per character), in stb_easy_font's vertex
 * layout: x, y, z floats and 4 colour bytes. */
#define HUD_MAX_QUADS 12000
#define HUD_LINE_MAX 160
/* Line height of stb_easy_font (pixels at scale 1) and the panel padding. */
#define FONT_LINE 12
#define PAD 6

typedef struct hud_vertex {
    float x, y, z;
    uint8_t rgba[4];
} hud_vertex;

struct hud {
    GLuint prog, vao, vbo, ibo;
    GLint u_screen;
    hud_vertex* v; /* (4 HUD_MAX_QUADS) */
    int nquad;
    int scale;
};

static const uint8_t TEXT[4] = {242, 242, 242, 255};
static const uint8_t TEXT_DIM[4] = {200, 200, 200, 255};
static const uint8_t PANEL[4] = {28, 28, 30, 150};
static const uint8_t TRACK[4] = {30, 30, 32, 70};
static const uint8_t FILL[4] = {58, 58, 62, 235};
static const uint8_t HEAD[4] = {250, 250, 250, 255};
static const uint8_t HEAD_EDGE[4] = {30, 30, 32, 255};

static const char HUD_VS[] = "#version 330 core\n"
                             "layout(location = 0) in vec2 aPos;\n"
                             "layout(location = 1) in vec4 aColor;\n"
                             "uniform vec2 uScreen;\n"
                             "out vec4 vColor;\n"
                             "void main() {\n"
                             "    vColor = aColor;\n"
                             "    gl_Position = vec4(2.0 * aPos.x / uScreen.x - 1.0,\n"
                             "                       1.0 - 2.0 * aPos.y / uScreen.y, 0.0, 1.0);\n"
                             "}\n";
static const char HUD_FS[] = "#version 330 core\n"
                             "in vec4 vColor;\n"
                             "out vec4 oColor;\n"
                             "void main() { oColor = vColor; }\n";

int hud_scale(int h) {
    return h <= 720 ? 1 : (h + 719) / 720;
}

hud* hud_create(char* err, size_t cap) {
    hud* h = calloc(1, sizeof *h);
    uint32_t* idx = malloc((size_t)HUD_MAX_QUADS * 6 * sizeof *idx);
    if (h) {
        h->v = malloc((size_t)HUD_MAX_QUADS * 4 * sizeof *h->v);
    }
    if (!h || !idx || !h->v) {
        snprintf(err, cap, "out of memory");
        free(idx);
        hud_destroy(h);
        return NULL;
    }
    h->prog = glsl_program(HUD_VS, HUD_FS, err, cap);
    if (!h->prog) {
        free(idx);
        hud_destroy(h);
        return NULL;
    }
    h->u_screen = glGetUniformLocation(h->prog, "uScreen");
    /* quads as two triangles each, through one index list made here */
    for (uint32_t q = 0; q < HUD_MAX_QUADS; q++) {
        const uint32_t t[6] = {0, 1, 2, 0, 2, 3};
        for (int k = 0; k < 6; k++) {
            idx[q * 6 + (uint32_t)k] = 4 * q + t[k];
        }
    }
    glGenVertexArrays(1, &h->vao);
    glGenBuffers(1, &h->vbo);
    glGenBuffers(1, &h->ibo);
    glBindVertexArray(h->vao);
    glBindBuffer(GL_ARRAY_BUFFER, h->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)HUD_MAX_QUADS * 4 * sizeof(hud_vertex), NULL,
                 GL_STREAM_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(hud_vertex), (const void*)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(hud_vertex),
                          (const void*)offsetof(hud_vertex, rgba));
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, h->ibo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)HUD_MAX_QUADS * 6 * sizeof *idx, idx,
                 GL_STATIC_DRAW);
    glBindVertexArray(0);
    free(idx);
    return h;
}

void hud_destroy(hud* h) {
    if (!h) {
        return;
    }
    glDeleteProgram(h->prog);
    glDeleteBuffers(1, &h->vbo);
    glDeleteBuffers(1, &h->ibo);
    glDeleteVertexArrays(1, &h->vao);
    free(h->v);
    free(h);
}

/* ---- building the quads ---------------------------------------------------------------- */

static void rect(hud* h, double x0, double y0, double x1, double y1, const uint8_t c[4]) {
    if (h->nquad >= HUD_MAX_QUADS) {
        return;
    }
    hud_vertex* v = h->v + 4 * h->nquad++;
    const float xs[4] = {(float)x0, (float)x1, (float)x1, (float)x0};
    const float ys[4] = {(float)y0, (float)y0, (float)y1, (float)y1};
    for (int k = 0; k < 4; k++) {
        v[k] = (hud_vertex){xs[k], ys[k], 0.0f, {c[0], c[1], c[2], c[3]}};
    }
}

/* Text with its top-left at (x, y), scaled. Characters outside printable ASCII become '?'
 * (the font has nothing else). Returns the width in pixels. */
static int text(hud* h, double x, double y, const char* s, const uint8_t c[4]) {
    char buf[HUD_LINE_MAX];
    size_t n = 0;
    for (; s[n] && n + 1 < sizeof buf; n++) {
        buf[n] = (s[n] >= 32 && s[n] < 127) ? s[n] : '?';
    }
    buf[n] = '\0';
    hud_vertex* start = h->v + 4 * h->nquad;
    const int room = (HUD_MAX_QUADS - h->nquad) * 4 * (int)sizeof(hud_vertex);
    unsigned char col[4] = {c[0], c[1], c[2], c[3]};
    const int q = stb_easy_font_print(0.0f, 0.0f, buf, col, start, room);
    for (int k = 0; k < 4 * q; k++) {
        start[k].x = (float)(x + start[k].x * h->scale);
        start[k].y = (float)(y + start[k].y * h->scale);
    }
    h->nquad += q;
    return stb_easy_font_width(buf) * h->scale;
}

/* Width (pixels at scale 1) of the first n characters of s. */
static int text_width(const char* s, size_t n) {
    char buf[HUD_LINE_MAX];
    snprintf(buf, sizeof buf, "%.*s", (int)n, s);
    for (char* c = buf; *c; c++) {
        *c = (*c >= 32 && *c < 127) ? *c : '?';
    }
    return stb_easy_font_width(buf);
}

/* Size of a panel of lines (NULL or "" lines skipped; a tab starts a second column, aligned
 * across the panel): its width and the x of the second column, at scale 1. */
static void panel_size(const char* const* lines, int n, int* width, int* col2, int* rows) {
    int w1 = 0, w2 = 0, wfull = 0;
    *rows = 0;
    for (int k = 0; k < n; k++) {
        if (!lines[k] || !lines[k][0]) {
            continue;
        }
        (*rows)++;
        const char* tab = strchr(lines[k], '\t');
        if (tab) {
            const int a = text_width(lines[k], (size_t)(tab - lines[k]));
            const int b = text_width(tab + 1, strlen(tab + 1));
            w1 = a > w1 ? a : w1;
            w2 = b > w2 ? b : w2;
        } else {
            const int a = text_width(lines[k], strlen(lines[k]));
            wfull = a > wfull ? a : wfull;
        }
    }
    *col2 = w1 + 12;
    *width = w2 > 0 && *col2 + w2 > wfull ? *col2 + w2 : wfull;
}

/* A panel of lines with its top-left (right_align: top-right) corner at (x, y): a translucent
 * box sized to the text, then the text, the first line brighter. */
static void panel(hud* h, double x, double y, bool right_align, const char* const* lines, int n) {
    int width, col2, rows;
    panel_size(lines, n, &width, &col2, &rows);
    if (rows == 0) {
        return;
    }
    const int s = h->scale, lh = FONT_LINE * s;
    const double w = (double)(width + 2 * PAD) * s;
    if (right_align) {
        x -= w;
    }
    rect(h, x, y, x + w, y + rows * lh + 2 * PAD * s - 2 * s, PANEL);
    double ty = y + PAD * s;
    for (int k = 0; k < n; k++) {
        if (!lines[k] || !lines[k][0]) {
            continue;
        }
        char buf[HUD_LINE_MAX];
        snprintf(buf, sizeof buf, "%s", lines[k]);
        char* tab = strchr(buf, '\t');
        if (tab) {
            *tab = '\0';
            text(h, x + (PAD + col2) * s, ty, tab + 1, TEXT_DIM);
        }
        text(h, x + PAD * s, ty, buf, k == 0 || tab ? TEXT : TEXT_DIM);
        ty += lh;
    }
}

/* Timeline bar geometry for a w x h framebuffer. */
static void timeline_box(int w, int h, double* x0, double* y0, double* x1, double* y1) {
    const int s = hud_scale(h);
    *x0 = 12.0 * s;
    *x1 = w - 12.0 * s;
    *y1 = h - 10.0 * s;
    *y0 = *y1 - 6.0 * s;
}

bool hud_timeline_at(int w, int h, double x, double y, double* frac) {
    double x0, y0, x1, y1;
    timeline_box(w, h, &x0, &y0, &x1, &y1);
    const double slack = 7.0 * hud_scale(h);
    if (x < x0 - slack || x > x1 + slack || y < y0 - slack || y > y1 + slack) {
        return false;
    }
    *frac = hud_timeline_frac(w, h, x);
    return true;
}

double hud_timeline_frac(int w, int h, double x) {
    double x0, y0, x1, y1;
    timeline_box(w, h, &x0, &y0, &x1, &y1);
    const double f = (x - x0) / (x1 - x0);
    return f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
}

static const char* const HELP[] = {
    "keys",
    "space\tplay / pause",
    "right, left\tone frame forward, back",
    "R\trestart",
    "+  -\tspeed x2, x0.5 (0.25x to 4x)",
    "G\tghost (reference pose) on / off",
    "O\tghost on the character / beside it",
    "C\tcontacts and forces on / off",
    "B\tbalance overlay on / off",
    "F\tcamera follows the character",
    "[  ]\tball speed -2, +2 m/s",
    "{  }\tball mass /1.5, x1.5",
    "E\texport the take (BVH, balls, hits)",
    "Backspace\tforget the thrown balls, restart",
    "P\tgains panel (right-click a body: its joint)",
    "Ctrl+Z, Ctrl+Y\tundo, redo a gains edit",
    "Ctrl+S\tsave the gains to their file",
    "H\tthis help",
    "Esc\tquit",
    " ",
    "mouse",
    "left drag\torbit",
    "shift+left, middle\tpan",
    "scroll\tzoom",
    "click a body\tthrow a ball at it",
    "right-click a body\tits gains in the panel",
    "click, drag the bar\tscrub",
};

static void status_lines(const hud_state* s, char (*l)[HUD_LINE_MAX]) {
    snprintf(l[0], HUD_LINE_MAX, "t %7.3f / %.3f s   frame %d / %d", s->time, s->duration, s->frame,
             s->nframe > 0 ? s->nframe - 1 : 0);
    char rtf[32] = "-";
    if (s->rtf > 0.0) {
        snprintf(rtf, sizeof rtf, "%.2f", s->rtf);
    }
    char steps[48] = "";
    if (s->step_rtf > 0.0) {
        snprintf(steps, sizeof steps, "   (simulation steps at %.0fx)", s->step_rtf);
    }
    snprintf(l[1], HUD_LINE_MAX, "%s   speed %.2gx   real-time factor %s%s",
             s->playing ? "playing" : "paused", s->speed, rtf, steps);
    snprintf(l[2], HUD_LINE_MAX, "ghost %s   contacts %s   balance %s   follow %s   H help",
             s->ghost ? (s->ghost_offset ? "beside" : "on") : "off", s->contacts ? "on" : "off",
             s->balance ? "on" : "off", s->follow ? "on" : "off");
}

void hud_draw(hud* h, int w, int h_px, const hud_state* s) {
    h->nquad = 0;
    h->scale = hud_scale(h_px);
    const int sc = h->scale;

    /* status, the source's lines, the last message */
    char status[3][HUD_LINE_MAX];
    status_lines(s, status);
    const char* lines[3 + 1 + SOURCE_LINES + 2];
    int n = 0;
    for (int k = 0; k < 3; k++) {
        lines[n++] = status[k];
    }
    lines[n++] = s->ball;
    for (int k = 0; k < SOURCE_LINES; k++) {
        lines[n++] = s->lines[k];
    }
    lines[n++] = s->gains;
    lines[n++] = s->message;
    panel(h, 10.0 * sc, 10.0 * sc, false, lines, n);
    if (s->help) {
        const int nh = (int)(sizeof HELP / sizeof HELP[0]);
        panel(h, w - 10.0 * sc, 10.0 * sc, true, HELP, nh);
    }

    /* the timeline: track, elapsed part, playhead */
    double x0, y0, x1, y1;
    timeline_box(w, h_px, &x0, &y0, &x1, &y1);
    const double f = s->duration > 0.0 ? s->time / s->duration : 0.0;
    const double xf = x0 + (x1 - x0) * (f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f));
    rect(h, x0, y0, x1, y1, TRACK);
    rect(h, x0, y0, xf, y1, FILL);
    rect(h, xf - 3.0 * sc, y0 - 5.0 * sc, xf + 3.0 * sc, y1 + 5.0 * sc, HEAD_EDGE);
    rect(h, xf - 2.0 * sc, y0 - 4.0 * sc, xf + 2.0 * sc, y1 + 4.0 * sc, HEAD);

    glDisable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glViewport(0, 0, w, h_px);
    glUseProgram(h->prog);
    glUniform2f(h->u_screen, (float)w, (float)h_px);
    glBindVertexArray(h->vao);
    glBindBuffer(GL_ARRAY_BUFFER, h->vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)h->nquad * 4 * sizeof(hud_vertex), h->v);
    glDrawElements(GL_TRIANGLES, h->nquad * 6, GL_UNSIGNED_INT, (const void*)0);
    glBindVertexArray(0);
    glUseProgram(0);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
}
