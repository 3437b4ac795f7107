/* BVH reader: HIERARCHY and MOTION at double precision, keeping every joint's channel order.
 *
 * Hand-written because no library gives what featherbone needs from a BVH file: Assimp (which
 * does load the same files, see import.c) keeps its keys in single precision and discards the
 * channel lists and rotation orders that a faithful export must write back. The reader accepts
 * the messiness of real files: CRLF, LF and bare CR line endings (mixed too), numbers without a
 * leading zero, runs of spaces and tabs, trailing whitespace, braces glued to words, and a
 * "Frames:" count that disagrees with the frame lines present (warned, the lines win). It
 * rejects, naming the line: truncated or overlong frame lines, non-numeric, NaN or infinite
 * values, unbalanced braces, zero frames, absurd frame times and duplicate joint names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/mocap.h"
#include "mocap/clip.h"
#include "mocap/constants.h"
#include "util/error.h"

/* Deepest joint nesting accepted (a guard against stack exhaustion on hostile input). */
#define BVH_MAX_DEPTH 256
/* Longest token kept (names are checked against FB_NAME_MAX separately). */
#define BVH_TOKEN_MAX 128

typedef struct lexer {
    const char* p;   /* next character */
    const char* end; /* one past the last character */
    int line;        /* line of *p, from 1 */
    fb_clip* clip;   /* for the file name in messages */
    fb_error* err;
} lexer;

static bool is_blank(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\v';
}

/* Consumes one line break at p (CRLF, LF or a bare CR) if there is one. */
static bool eat_newline(lexer* lx) {
    if (lx->p < lx->end && *lx->p == '\r') {
        lx->p++;
        if (lx->p < lx->end && *lx->p == '\n') {
            lx->p++;
        }
        lx->line++;
        return true;
    }
    if (lx->p < lx->end && *lx->p == '\n') {
        lx->p++;
        lx->line++;
        return true;
    }
    return false;
}

static void skip_space(lexer* lx) {
    while (lx->p < lx->end) {
        if (is_blank(*lx->p) || *lx->p == '\0') {
            lx->p++;
        } else if (!eat_newline(lx)) {
            return;
        }
    }
}

static fb_status fail_at(lexer* lx, int line, const char* what, const char* found) {
    return fb_fail(lx->err, FB_EINVAL, "%s:%d: expected %s, found %s", lx->clip->source, line,
                   what, found);
}

/* Next token into tok ("" at the end of the input); braces are tokens of their own. */
static void next_token(lexer* lx, char* tok, int* line) {
    skip_space(lx);
    *line = lx->line;
    size_t n = 0;
    if (lx->p < lx->end && (*lx->p == '{' || *lx->p == '}')) {
        tok[n++] = *lx->p++;
    } else {
        while (lx->p < lx->end && !is_blank(*lx->p) && *lx->p != '\r' && *lx->p != '\n' &&
               *lx->p != '\0' && *lx->p != '{' && *lx->p != '}') {
            if (n < BVH_TOKEN_MAX - 1) {
                tok[n++] = *lx->p;
            }
            lx->p++;
        }
    }
    tok[n] = '\0';
}

/* "'tok'" or "the end of the file", for messages. */
static const char* shown(const char* tok, char* buf, size_t cap) {
    if (tok[0] == '\0') {
        return "the end of the file";
    }
    snprintf(buf, cap, "'%s'", tok);
    return buf;
}

static fb_status expect(lexer* lx, const char* word) {
    char tok[BVH_TOKEN_MAX], buf[BVH_TOKEN_MAX + 8];
    int line;
    next_token(lx, tok, &line);
    if (strcmp(tok, word) != 0) {
        char what[64];
        snprintf(what, sizeof what, "'%s'", word);
        return fail_at(lx, line, what, shown(tok, buf, sizeof buf));
    }
    return FB_OK;
}

/* A finite number from a whole token. */
static fb_status number_token(lexer* lx, const char* what, double* out) {
    char tok[BVH_TOKEN_MAX], buf[BVH_TOKEN_MAX + 8];
    int line;
    next_token(lx, tok, &line);
    char* end = NULL;
    const double v = strtod(tok, &end);
    if (tok[0] == '\0' || *end != '\0') {
        return fail_at(lx, line, what, shown(tok, buf, sizeof buf));
    }
    if (!isfinite(v)) {
        return fail_at(lx, line, "a finite number", shown(tok, buf, sizeof buf));
    }
    *out = v;
    return FB_OK;
}

static fb_status offset3(lexer* lx, fb_v3* out) {
    double v[3];
    for (int k = 0; k < 3; k++) {
        const fb_status s = number_token(lx, "an OFFSET number", &v[k]);
        if (s != FB_OK) {
            return s;
        }
    }
    *out = (fb_v3){v[0], v[1], v[2]};
    return FB_OK;
}

static bool channel_of(const char* tok, fb_channel* out) {
    for (int c = FB_CH_XPOS; c <= FB_CH_ZROT; c++) {
        if (strcmp(tok, fb_channel_name((fb_channel)c)) == 0) {
            *out = (fb_channel)c;
            return true;
        }
    }
    return false;
}

static fb_status parse_channels(lexer* lx, fb_clip_joint* j, int line0) {
    char tok[BVH_TOKEN_MAX], buf[BVH_TOKEN_MAX + 8];
    int line;
    next_token(lx, tok, &line);
    char* end = NULL;
    const long n = strtol(tok, &end, 10);
    if (tok[0] == '\0' || *end != '\0' || n < 0 || n > 6) {
        return fail_at(lx, line, "a channel count 0..6", shown(tok, buf, sizeof buf));
    }
    if (j->nchan > 0) {
        return fail_at(lx, line0, "one CHANNELS line per joint", "a second one");
    }
    unsigned seen = 0;
    for (int k = 0; k < n; k++) {
        next_token(lx, tok, &line);
        fb_channel ch;
        if (!channel_of(tok, &ch)) {
            return fail_at(lx, line, "a channel name (Xposition ... Zrotation)",
                           shown(tok, buf, sizeof buf));
        }
        if (seen & (1u << ch)) {
            return fail_at(lx, line, "each channel once per joint", shown(tok, buf, sizeof buf));
        }
        seen |= 1u << ch;
        j->chan[k] = ch;
    }
    j->nchan = (int)n;
    return FB_OK;
}

/* A joint block after its ROOT/JOINT keyword: name { OFFSET, CHANNELS, children, End Site }. */
static fb_status parse_joint(lexer* lx, int parent, int depth) {
    char tok[BVH_TOKEN_MAX], buf[BVH_TOKEN_MAX + 8];
    int line;
    if (depth > BVH_MAX_DEPTH) {
        return fail_at(lx, lx->line, "joints nested at most 256 deep", "deeper nesting");
    }
    fb_clip_joint j;
    memset(&j, 0, sizeof j);
    j.parent = parent;
    next_token(lx, tok, &line);
    if (tok[0] == '\0' || strcmp(tok, "{") == 0 || strcmp(tok, "}") == 0) {
        return fail_at(lx, line, "a joint name", shown(tok, buf, sizeof buf));
    }
    if (strlen(tok) >= FB_NAME_MAX) {
        return fail_at(lx, line, "a joint name shorter than 64 characters", "a longer one");
    }
    if (fb_clip_joint_by_name(lx->clip, tok) >= 0) {
        return fail_at(lx, line, "a unique joint name", shown(tok, buf, sizeof buf));
    }
    if (lx->clip->njoint >= FB_CLIP_MAX_JOINTS) {
        return fail_at(lx, line, "at most 10000 joints", "more");
    }
    memcpy(j.name, tok, strlen(tok) + 1); /* fits: checked against FB_NAME_MAX above */
    const int name_line = line;
    fb_status s = expect(lx, "{");
    if (s != FB_OK) {
        return s;
    }
    bool have_offset = false;
    /* the joint goes in before its children (parents precede children) */
    const int me = fb_clip_push_joint(lx->clip, &j, lx->err);
    if (me < 0) {
        return FB_ENOMEM;
    }
    for (;;) {
        next_token(lx, tok, &line);
        fb_clip_joint* self = &lx->clip->joint[me];
        if (strcmp(tok, "OFFSET") == 0) {
            if (have_offset) {
                return fail_at(lx, line, "one OFFSET per joint", "a second one");
            }
            have_offset = true;
            s = offset3(lx, &self->offset);
        } else if (strcmp(tok, "CHANNELS") == 0) {
            s = parse_channels(lx, self, line);
        } else if (strcmp(tok, "JOINT") == 0) {
            s = parse_joint(lx, me, depth + 1);
        } else if (strcmp(tok, "End") == 0) {
            if (self->has_end) {
                return fail_at(lx, line, "one End Site per joint", "a second one");
            }
            fb_v3 off;
            if ((s = expect(lx, "Site")) != FB_OK || (s = expect(lx, "{")) != FB_OK ||
                (s = expect(lx, "OFFSET")) != FB_OK || (s = offset3(lx, &off)) != FB_OK ||
                (s = expect(lx, "}")) != FB_OK) {
                return s;
            }
            self = &lx->clip->joint[me];
            self->has_end = true;
            self->end_offset = off;
        } else if (strcmp(tok, "}") == 0) {
            if (!have_offset) {
                return fail_at(lx, name_line, "an OFFSET in joint", lx->clip->joint[me].name);
            }
            return FB_OK;
        } else {
            return fail_at(lx, line, "OFFSET, CHANNELS, JOINT, End Site or '}'",
                           shown(tok, buf, sizeof buf));
        }
        if (s != FB_OK) {
            return s;
        }
    }
}

/* Assigns each joint its first frame column; the total is nchan. */
static void assign_columns(fb_clip* c) {
    int col = 0;
    for (int i = 0; i < c->njoint; i++) {
        c->joint[i].col = col;
        col += c->joint[i].nchan;
    }
    c->nchan = col;
}

/* Counts the lines from p to the end that hold anything but whitespace. */
static long count_data_lines(const char* p, const char* end) {
    long n = 0;
    bool content = false;
    for (; p < end; p++) {
        if (*p == '\n' || *p == '\r') {
            n += content;
            content = false;
        } else if (!is_blank(*p) && *p != '\0') {
            content = true;
        }
    }
    return n + content;
}

/* One frame line into row (nchan values); returns the number of values found (stops counting
 * past nchan), or -1 after a non-numeric or non-finite value (err filled). */
static int parse_frame_line(lexer* lx, double* row, int nchan) {
    int n = 0;
    for (;;) {
        while (lx->p < lx->end && (is_blank(*lx->p) || *lx->p == '\0')) {
            lx->p++;
        }
        if (lx->p >= lx->end || *lx->p == '\r' || *lx->p == '\n') {
            return n;
        }
        /* strtod skips newlines, so it only ever starts on a non-blank character here; the
         * buffer is NUL-terminated (import copies it) so it cannot run past the end */
        char* stop = NULL;
        const double v = strtod(lx->p, &stop);
        if (stop == lx->p || (stop < lx->end && !is_blank(*stop) && *stop != '\r' &&
                              *stop != '\n' && *stop != '\0')) {
            char tok[32];
            size_t k = 0;
            while (lx->p + k < lx->end && k < sizeof tok - 1 && !is_blank(lx->p[k]) &&
                   lx->p[k] != '\r' && lx->p[k] != '\n') {
                tok[k] = lx->p[k];
                k++;
            }
            tok[k] = '\0';
            char buf[48];
            fail_at(lx, lx->line, "a number", shown(tok, buf, sizeof buf));
            return -1;
        }
        if (!isfinite(v)) {
            fb_fail(lx->err, FB_EINVAL, "%s:%d: expected a finite number, found '%.*s'",
                    lx->clip->source, lx->line, (int)(stop - lx->p), lx->p);
            return -1;
        }
        if (n < nchan) {
            row[n] = v;
        }
        n++;
        lx->p = stop;
    }
}

static fb_status parse_motion(lexer* lx) {
    fb_clip* c = lx->clip;
    char tok[BVH_TOKEN_MAX], buf[BVH_TOKEN_MAX + 8];
    int line;
    fb_status s = expect(lx, "MOTION");
    if (s != FB_OK) {
        return s;
    }
    double frames_decl, frame_time;
    if ((s = expect(lx, "Frames:")) != FB_OK ||
        (s = number_token(lx, "a frame count", &frames_decl)) != FB_OK) {
        return s;
    }
    if (frames_decl != floor(frames_decl) || frames_decl < 0 ||
        frames_decl > FB_CLIP_MAX_FRAMES) {
        snprintf(tok, sizeof tok, "%g", frames_decl);
        return fail_at(lx, lx->line, "a whole frame count", tok);
    }
    if ((s = expect(lx, "Frame")) != FB_OK || (s = expect(lx, "Time:")) != FB_OK ||
        (s = number_token(lx, "a frame time in seconds", &frame_time)) != FB_OK) {
        return s;
    }
    if (frame_time < FB_FRAME_TIME_MIN || frame_time > FB_FRAME_TIME_MAX) {
        snprintf(tok, sizeof tok, "%g s", frame_time);
        return fail_at(lx, lx->line, "a frame time from 0.0001 to 1 s", tok);
    }
    c->declared_frames = (int)frames_decl;
    c->frame_time = frame_time;
    /* nothing else may follow on the Frame Time line */
    while (lx->p < lx->end && (is_blank(*lx->p) || *lx->p == '\0')) {
        lx->p++;
    }
    if (lx->p < lx->end && !eat_newline(lx)) {
        next_token(lx, tok, &line);
        return fail_at(lx, line, "a line break after the frame time", shown(tok, buf, sizeof buf));
    }
    if (c->nchan == 0) {
        return fail_at(lx, lx->line, "at least one channel in the HIERARCHY", "none");
    }
    const long lines = count_data_lines(lx->p, lx->end);
    if (lines == 0) {
        return fail_at(lx, lx->line, "at least one frame line", "none");
    }
    if (lines > FB_CLIP_MAX_FRAMES) {
        return fail_at(lx, lx->line, "at most 10000000 frames", "more");
    }
    c->frames = fb_alloc(&c->alloc, (size_t)lines * (size_t)c->nchan * sizeof(double));
    if (!c->frames) {
        return fb_fail(lx->err, FB_ENOMEM, "%s: out of memory for %ld frames", c->source, lines);
    }
    while (c->nframe < lines) {
        skip_space(lx);
        const int row_line = lx->line;
        double* row = c->frames + (size_t)c->nframe * (size_t)c->nchan;
        const int n = parse_frame_line(lx, row, c->nchan);
        if (n < 0) {
            return FB_EINVAL;
        }
        if (n != c->nchan) {
            return fb_fail(lx->err, FB_EINVAL,
                           "%s:%d: frame %d: expected %d values (one per channel), found %d",
                           c->source, row_line, c->nframe + 1, c->nchan, n);
        }
        c->nframe++;
    }
    if (c->nframe != c->declared_frames) {
        fb_clip_warn(c, "the file declares %d frames but holds %d complete frame lines; using %d",
                     c->declared_frames, c->nframe, c->nframe);
    }
    return FB_OK;
}

fb_clip* fb_clip_parse_bvh(const char* text, size_t len, const char* name,
                           const fb_clip_opts* opts, const fb_allocator* alloc, fb_error* err) {
    fb_clip* c = fb_clip_new(alloc, name ? name : "(bvh)", err);
    if (!c) {
        return NULL;
    }
    /* a NUL-terminated copy, so strtod can never read past the end */
    char* buf = fb_alloc(&c->alloc, len + 1);
    if (!buf) {
        fb_fail(err, FB_ENOMEM, "%s: out of memory", c->source);
        fb_clip_destroy(c);
        return NULL;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    lexer lx = {buf, buf + len, 1, c, err};
    snprintf(c->format, sizeof c->format, "bvh");
    fb_status s = expect(&lx, "HIERARCHY");
    if (s == FB_OK) {
        s = expect(&lx, "ROOT");
    }
    if (s == FB_OK) {
        s = parse_joint(&lx, -1, 0);
    }
    if (s == FB_OK) {
        assign_columns(c);
        char tok[BVH_TOKEN_MAX];
        const char* save = lx.p;
        const int save_line = lx.line;
        int line;
        next_token(&lx, tok, &line);
        if (strcmp(tok, "ROOT") == 0) {
            s = fail_at(&lx, line, "one ROOT skeleton (several are not supported)", "a second ROOT");
        } else if (strcmp(tok, "}") == 0) {
            s = fail_at(&lx, line, "MOTION after the skeleton", "an unbalanced '}'");
        } else {
            lx.p = save;
            lx.line = save_line;
            s = parse_motion(&lx);
        }
    }
    fb_free(&c->alloc, buf);
    if (s == FB_OK) {
        s = fb_clip_finish(c, opts, err);
    }
    if (s != FB_OK) {
        fb_clip_destroy(c);
        return NULL;
    }
    fb_ok(err);
    return c;
}
