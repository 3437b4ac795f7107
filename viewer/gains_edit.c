/* featherbone-view: editing the gains in the window (gains_edit.h): the field tables, the
 * checks, how an edit becomes a rule of the gains file, undo and redo, saving, and the file
 * changing on disk under unsaved edits. */
#define _POSIX_C_SOURCE 200809L /* fnmatch */
#include "gains_edit.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Undo steps kept (each a copy of the gains, ~17 kB); the oldest go first. */
#define UNDO_MAX 128
#define MSG_MAX 300

/* ---- the fields --------------------------------------------------------------------------- */

#define JOINT(field) offsetof(fb_joint_gains, field)
#define GAINS(field) offsetof(fb_gains, field)
/* Ranges as the gains file's reader has them (src/control/gains.c). */
#define BIG 1e300

static const gedit_field JOINT_FIELDS[] = {
    {"settle_time", "s", "accel: time in which an error falls to 10% and stays there",
     JOINT(settle_time), FB_GAIN_SETTLE, NULL, 0, 0.0, BIG, true, GEDIT_FOR_ACCEL, 0.005},
    {"damping_ratio", "", "accel: zeta of the error dynamics (1 = critical)",
     JOINT(damping_ratio), FB_GAIN_ZETA, NULL, 0, 0.0, BIG, true, GEDIT_FOR_ACCEL, 0.005},
    {"ks", "1/rad", "pd, Cline: stiffness per N m of feedforward torque (eq. 5.7)", JOINT(ks),
     FB_GAIN_KS, NULL, 0, 0.0, BIG, false, GEDIT_FOR_PD_CLINE, 0.005},
    {"kd", "s/rad", "pd, Cline: damping per N m of feedforward torque (eq. 5.7)", JOINT(kd),
     FB_GAIN_KD, NULL, 0, 0.0, BIG, false, GEDIT_FOR_PD_CLINE, 0.005},
    {"kp", "N m/rad", "pd: stiffness (Cline: the minimum stiffness)", JOINT(kp), FB_GAIN_KP,
     NULL, 0, 0.0, BIG, false, GEDIT_FOR_PD_CLINE | GEDIT_FOR_PD_PLAIN, 0.005},
    {"kv", "N m s/rad", "pd: damping (Cline: the minimum damping)", JOINT(kv), FB_GAIN_KV, NULL,
     0, 0.0, BIG, false, GEDIT_FOR_PD_CLINE | GEDIT_FOR_PD_PLAIN, 0.005},
    {"torque_limit", "N m", "per axis, every controller; 0 = none", JOINT(torque_limit),
     FB_GAIN_LIMIT, NULL, 0, 0.0, BIG, false, GEDIT_FOR_ALL, 0.005},
};

static const gedit_field ROOT_FIELDS[] = {
    {"mode", "", "kinematic: follows the clip; assisted: free plus a capped wrench; free",
     GAINS(root.mode), 0, fb_root_mode_names, FB_NROOT_MODE, 0.0, 2.0, false, GEDIT_FOR_ALL, 0.0},
    {"settle_time", "s", "how the assisted root's wrench brings it back to the clip",
     GAINS(root.settle_time), 0, NULL, 0, 0.0, BIG, true, GEDIT_FOR_ALL, 0.005},
    {"damping_ratio", "", "zeta of the assisted root's return", GAINS(root.damping_ratio), 0, NULL,
     0, 0.0, BIG, true, GEDIT_FOR_ALL, 0.005},
    {"max_force", "N", "assisted: cap on the helping force", GAINS(root.max_force), 0, NULL, 0, 0.0,
     BIG, false, GEDIT_FOR_ALL, 0.005},
    {"max_torque", "N m", "assisted: cap on the helping torque", GAINS(root.max_torque), 0, NULL, 0,
     0.0, BIG, false, GEDIT_FOR_ALL, 0.005},
    {"anchor", "", "assisted: path: pulled to the clip's path; feet: over where its feet landed",
     GAINS(root.anchor), 0, fb_root_anchor_names, FB_NROOT_ANCHOR, 0.0, 1.0, false, GEDIT_FOR_ALL,
     0.0},
};

static const gedit_field TAKE_FIELDS[] = {
    {"rate", "Hz", "simulation rate (a new rate refits the clip, about half a second)", GAINS(rate),
     0, NULL, 0, 30.0, 10000.0, false, GEDIT_FOR_ALL, 0.002},
    {"controller", "", "pd: joint torques (Cline); accel: acceleration constraints (Kokkevis)",
     GAINS(controller), 0, fb_controller_names, FB_NCONTROLLER, 0.0, 1.0, false, GEDIT_FOR_ALL,
     0.0},
    {"pd_form", "", "cline: gains scaled by the feedforward torque; plain: fixed kp, kv",
     GAINS(pd_form), 0, fb_pd_form_names, FB_NPD_FORM, 0.0, 1.0, false, GEDIT_FOR_ALL, 0.0},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const gedit_field* gedit_fields(gedit_scope scope, int* n) {
    switch (scope) {
    case GEDIT_TAKE:
        *n = COUNT(TAKE_FIELDS);
        return TAKE_FIELDS;
    case GEDIT_ROOT:
        *n = COUNT(ROOT_FIELDS);
        return ROOT_FIELDS;
    default:
        *n = COUNT(JOINT_FIELDS);
        return JOINT_FIELDS;
    }
}

bool gedit_field_shown(const gedit_field* f, const fb_gains* g) {
    const unsigned now = g->controller == FB_CTRL_ACCEL ? GEDIT_FOR_ACCEL
                         : g->pd_form == FB_PD_CLINE    ? GEDIT_FOR_PD_CLINE
                                                        : GEDIT_FOR_PD_PLAIN;
    return (f->shown & now) != 0;
}

/* The value of a field stored at `base` + offset: a double, or an enum (int-sized). */
static double get_field(const gedit_field* f, const void* base) {
    const char* p = (const char*)base + f->offset;
    if (f->names) {
        int v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    double v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put_field(const gedit_field* f, void* base, double value) {
    char* p = (char*)base + f->offset;
    if (f->names) {
        const int v = (int)value;
        memcpy(p, &v, sizeof v);
    } else {
        memcpy(p, &value, sizeof value);
    }
}

static const gedit_field* find_field(gedit_scope scope, const char* name) {
    int n = 0;
    const gedit_field* f = gedit_fields(scope, &n);
    for (int k = 0; k < n; k++) {
        if (strcmp(f[k].name, name) == 0) {
            return &f[k];
        }
    }
    return NULL;
}

/* The field's names, "a, b, c", for messages. */
static void field_list(gedit_scope scope, char* out, size_t cap) {
    int n = 0;
    const gedit_field* f = gedit_fields(scope, &n);
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < n && len < cap; k++) {
        len += (size_t)snprintf(out + len, cap - len, "%s%s", k ? ", " : "", f[k].name);
    }
}

/* Whether v is a value the gains file accepts for f; the reason in why otherwise. */
static bool valid_value(const gedit_field* f, double v, char* why, size_t cap) {
    if (!isfinite(v)) {
        snprintf(why, cap, "%s: expected a number, found %g", f->name, v);
        return false;
    }
    if (f->names) {
        if (v != floor(v) || v < 0.0 || v >= f->nnames) {
            snprintf(why, cap, "%s: expected one of its names, found %g", f->name, v);
            return false;
        }
        return true;
    }
    if (f->lo_open ? !(v > f->lo) : !(v >= f->lo)) {
        snprintf(why, cap, "%s: expected a value %s %g, found %g", f->name, f->lo_open ? ">" : ">=",
                 f->lo, v);
        return false;
    }
    if (v > f->hi) {
        snprintf(why, cap, "%s: expected a value <= %g, found %g", f->name, f->hi, v);
        return false;
    }
    return true;
}

/* ---- mirror ------------------------------------------------------------------------------ */

bool gedit_mirror_name(const char* name, char* out, size_t cap) {
    static const char* const PAIRS[][2] = {
        {"Left", "Right"}, {"left", "right"}, {"LEFT", "RIGHT"}};
    /* the first side word in the name */
    const char* best = NULL;
    int which = 0, side = 0;
    for (int p = 0; p < COUNT(PAIRS); p++) {
        for (int s = 0; s < 2; s++) {
            const char* at = strstr(name, PAIRS[p][s]);
            if (at && (!best || at < best)) {
                best = at;
                which = p;
                side = s;
            }
        }
    }
    if (best) {
        const size_t pre = (size_t)(best - name);
        snprintf(out, cap, "%.*s%s%s", (int)pre, name, PAIRS[which][1 - side],
                 best + strlen(PAIRS[which][side]));
        return true;
    }
    /* a leading L or R: LShoulder, R_hip */
    if ((name[0] == 'L' || name[0] == 'R') && (isupper((unsigned char)name[1]) || name[1] == '_')) {
        snprintf(out, cap, "%c%s", name[0] == 'L' ? 'R' : 'L', name + 1);
        return true;
    }
    return false;
}

/* ---- the editor -------------------------------------------------------------------------- */

struct gedit {
    source* src;
    const fb_model* m;
    fb_gains cur;   /* the gains in force (the source's) */
    fb_gains saved; /* as last loaded or saved */
    fb_gains* undo; /* (UNDO_MAX) the states before each edit, oldest first */
    int nundo;
    fb_gains* redo; /* (UNDO_MAX) the states undone, latest last */
    int nredo;
    fb_joint_gains* before; /* (nbody) scratch: resolved gains */
    fb_joint_gains* after;
    int sel; /* the selected joint's body, or -1 */
    bool mirror;
    bool can_merge;     /* the last edit can take a continued drag */
    char merge_key[FB_NAME_MAX + 64];
    char msg[MSG_MAX];
    bool msg_error;
};

static void say(gedit* e, bool error, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(gedit* e, bool error, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->msg_error = error;
}

static bool gains_equal(const fb_gains* a, const fb_gains* b) {
    int n = 0;
    const gedit_field* jf = gedit_fields(GEDIT_JOINT, &n);
    if (a->nrule != b->nrule) {
        return false;
    }
    for (int s = GEDIT_TAKE; s <= GEDIT_ROOT; s++) {
        int nf = 0;
        const gedit_field* f = gedit_fields((gedit_scope)s, &nf);
        for (int k = 0; k < nf; k++) {
            if (get_field(&f[k], a) != get_field(&f[k], b)) {
                return false;
            }
        }
    }
    for (int k = 0; k < n; k++) {
        if (get_field(&jf[k], &a->defaults) != get_field(&jf[k], &b->defaults)) {
            return false;
        }
    }
    for (int r = 0; r < a->nrule; r++) {
        const fb_gains_rule* x = &a->rule[r];
        const fb_gains_rule* y = &b->rule[r];
        if (strcmp(x->pattern, y->pattern) != 0 || x->set != y->set) {
            return false;
        }
        for (int k = 0; k < n; k++) {
            if ((x->set & jf[k].bit) && get_field(&jf[k], &x->g) != get_field(&jf[k], &y->g)) {
                return false;
            }
        }
    }
    return true;
}

const fb_model* gedit_model(const gedit* e) {
    return e->m;
}

gedit* gedit_create(source* src) {
    const fb_gains* g = source_gains(src);
    if (!g) {
        return NULL;
    }
    gedit* e = calloc(1, sizeof *e);
    if (!e) {
        return NULL;
    }
    e->src = src;
    e->m = source_get_view(src)->model;
    e->undo = malloc(UNDO_MAX * sizeof *e->undo);
    e->redo = malloc(UNDO_MAX * sizeof *e->redo);
    e->before = malloc((size_t)e->m->nbody * sizeof *e->before);
    e->after = malloc((size_t)e->m->nbody * sizeof *e->after);
    if (!e->undo || !e->redo || !e->before || !e->after) {
        gedit_destroy(e);
        return NULL;
    }
    e->cur = *g;
    e->saved = *g;
    e->sel = -1;
    return e;
}

void gedit_destroy(gedit* e) {
    if (e) {
        free(e->undo);
        free(e->redo);
        free(e->before);
        free(e->after);
        free(e);
    }
}

const fb_gains* gedit_gains(const gedit* e) {
    return &e->cur;
}

bool gedit_dirty(const gedit* e) {
    return !gains_equal(&e->cur, &e->saved);
}

/* A changed state: the file watch holds changes of the file while there are unsaved edits. */
static void state_changed(gedit* e) {
    source_hold_reloads(e->src, gedit_dirty(e));
}

static void push(fb_gains* stack, int* n, const fb_gains* g) {
    if (*n == UNDO_MAX) {
        memmove(stack, stack + 1, (UNDO_MAX - 1) * sizeof *stack);
        (*n)--;
    }
    stack[(*n)++] = *g;
}

/* Puts g in force (restart and replay); false with the reason in the message. */
static bool put_in_force(gedit* e, const fb_gains* g) {
    char why[FB_ERROR_MSG_MAX + 32];
    if (!source_set_gains(e->src, g, why, sizeof why)) {
        say(e, true, "refused: %.200s", why);
        return false;
    }
    e->cur = *g;
    return true;
}

/* ---- joint edits as rules ------------------------------------------------------------------ */

static bool joint_matches(const fb_model* m, int b, const char* pattern) {
    return m->jnv[b] > 0 && fnmatch(pattern, m->name[b], 0) == 0;
}

int gedit_count_matches(const gedit* e, const char* pattern) {
    int n = 0;
    for (int b = 1; b < e->m->nbody; b++) {
        n += joint_matches(e->m, b, pattern);
    }
    return n;
}

/* Whether `cand` resolves to `before` with field f of the joints pattern names set to v, and
 * nothing else changed. */
static bool gives_exactly(gedit* e, const fb_gains* cand, const char* pattern,
                          const gedit_field* f, double v) {
    if (fb_gains_resolve(cand, e->m, e->after, NULL) != FB_OK) {
        return false;
    }
    int n = 0;
    const gedit_field* jf = gedit_fields(GEDIT_JOINT, &n);
    for (int b = 1; b < e->m->nbody; b++) {
        const bool hit = joint_matches(e->m, b, pattern);
        for (int k = 0; k < n; k++) {
            const double want = (hit && &jf[k] == f) ? v : get_field(&jf[k], &e->before[b]);
            if (get_field(&jf[k], &e->after[b]) != want) {
                return false;
            }
        }
    }
    return true;
}

static int rule_of(const fb_gains* g, const char* pattern) {
    for (int r = 0; r < g->nrule; r++) {
        if (strcmp(g->rule[r].pattern, pattern) == 0) {
            return r;
        }
    }
    return -1;
}

/* g with field f of the joints `pattern` names set to v, written as a rule for that pattern
 * (gains_edit.h). 1: done; 0: nothing to change; -1: refused, why says it. */
static int joint_edit(gedit* e, fb_gains* g, const char* pattern, const gedit_field* f,
                      double v, char* why, size_t cap) {
    if (gedit_count_matches(e, pattern) == 0) {
        snprintf(why, cap, "'%s' names no joint with degrees of freedom", pattern);
        return -1;
    }
    if (fb_gains_resolve(g, e->m, e->before, NULL) != FB_OK) {
        snprintf(why, cap, "the gains in force do not resolve against the character");
        return -1;
    }
    bool change = false;
    for (int b = 1; b < e->m->nbody; b++) {
        change = change || (joint_matches(e->m, b, pattern) && get_field(f, &e->before[b]) != v);
    }
    const int r = rule_of(g, pattern);
    if (!change && (r < 0 || !(g->rule[r].set & f->bit) || get_field(f, &g->rule[r].g) == v)) {
        return 0;
    }
    fb_gains* cand = malloc(sizeof *cand);
    if (!cand) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    for (int kind = 0; kind < 3; kind++) {
        *cand = *g;
        if (kind == 0 && r >= 0) { /* the pattern's rule, changed in place */
            put_field(f, &cand->rule[r].g, v);
            cand->rule[r].set |= f->bit;
        } else if (kind == 1 && r < 0 && g->nrule < FB_GAINS_MAX_RULES) { /* a new rule */
            fb_gains_rule* nr = &cand->rule[cand->nrule++];
            memset(nr, 0, sizeof *nr);
            snprintf(nr->pattern, sizeof nr->pattern, "%s", pattern);
            nr->set = f->bit;
            put_field(f, &nr->g, v);
        } else if (kind == 2 && r >= 0) { /* the pattern's rule, changed and moved last */
            fb_gains_rule moved = cand->rule[r];
            memmove(&cand->rule[r], &cand->rule[r + 1],
                    (size_t)(cand->nrule - r - 1) * sizeof moved);
            put_field(f, &moved.g, v);
            moved.set |= f->bit;
            cand->rule[cand->nrule - 1] = moved;
        } else {
            continue;
        }
        if (gives_exactly(e, cand, pattern, f, v)) {
            *g = *cand;
            free(cand);
            return 1;
        }
    }
    free(cand);
    if (g->nrule >= FB_GAINS_MAX_RULES && r < 0) {
        snprintf(why, cap, "the file holds %d rules already, the most it may", FB_GAINS_MAX_RULES);
    } else {
        snprintf(why, cap, "no rule for '%s' gives %s without changing other gains (a later "
                 "rule sets them): edit that rule's pattern instead", pattern, f->name);
    }
    return -1;
}

/* ---- edits ------------------------------------------------------------------------------- */

static bool is_keyword(const char* target, gedit_scope* scope) {
    static const char* const WORDS[] = {"take", "root", "defaults"};
    for (int k = 0; k < 3; k++) {
        if (strcmp(target, WORDS[k]) == 0) {
            *scope = (gedit_scope)k;
            return true;
        }
    }
    *scope = GEDIT_JOINT;
    return false;
}

/* The text of a value: an enum's name, or the number with its unit. */
static void value_text(const gedit_field* f, double v, char* out, size_t cap) {
    if (f->names) {
        snprintf(out, cap, "%s", f->names[(int)v]);
    } else {
        snprintf(out, cap, "%.6g%s%s", v, f->unit[0] ? " " : "", f->unit);
    }
}

bool gedit_set(gedit* e, const char* target, const char* field, double value, bool merge) {
    gedit_scope scope;
    is_keyword(target, &scope);
    const gedit_field* f = find_field(scope, field);
    char why[MSG_MAX];
    if (!f) {
        char list[200];
        field_list(scope, list, sizeof list);
        snprintf(why, sizeof why, "%s: no field '%s'; expected one of: %s", target, field, list);
        say(e, true, "refused: %s", why);
        return false;
    }
    char label[FB_NAME_MAX + 64];
    snprintf(label, sizeof label, "%s %s", target, f->name);
    if (!valid_value(f, value, why, sizeof why)) {
        char keep[64];
        int rule = -1;
        const int b = scope == GEDIT_JOINT ? fb_model_body_by_name(e->m, target) : -1;
        if (scope != GEDIT_JOINT || b > 0) {
            value_text(f, gedit_value(e, scope, f, b, &rule), keep, sizeof keep);
            say(e, true, "refused: %s %.200s; kept %s", target, why, keep);
        } else {
            say(e, true, "refused: %s %.200s; nothing changed", target, why);
        }
        return false;
    }
    fb_gains* g = malloc(sizeof *g);
    if (!g) {
        say(e, true, "refused: out of memory");
        return false;
    }
    *g = e->cur;
    int done = 1;
    char mirrored[FB_NAME_MAX] = "";
    if (scope == GEDIT_JOINT) {
        done = joint_edit(e, g, target, f, value, why, sizeof why);
        char other[FB_NAME_MAX];
        if (done >= 0 && e->mirror && gedit_mirror_name(target, other, sizeof other) &&
            strcmp(other, target) != 0 && gedit_count_matches(e, other) > 0) {
            const int d2 = joint_edit(e, g, other, f, value, why, sizeof why);
            done = d2 < 0 ? -1 : (done | d2);
            snprintf(mirrored, sizeof mirrored, "%s", other);
        }
    } else if (get_field(f, scope == GEDIT_DEFAULTS ? (void*)&g->defaults : (void*)g) == value) {
        done = 0;
    } else {
        put_field(f, scope == GEDIT_DEFAULTS ? (void*)&g->defaults : (void*)g, value);
    }
    if (done < 0) {
        say(e, true, "refused: %.250s", why);
        free(g);
        return false;
    }
    char vt[64];
    value_text(f, value, vt, sizeof vt);
    if (done == 0) {
        say(e, false, "%s is %s already", label, vt);
        free(g);
        return true;
    }
    const fb_gains before = e->cur;
    if (!put_in_force(e, g)) {
        free(g);
        return false;
    }
    free(g);
    const bool merged = merge && e->can_merge && strcmp(e->merge_key, label) == 0;
    if (!merged) {
        push(e->undo, &e->nundo, &before);
    }
    e->nredo = 0;
    e->can_merge = true;
    snprintf(e->merge_key, sizeof e->merge_key, "%s", label);
    if (mirrored[0]) {
        say(e, false, "%s = %s (and %s); the take replayed", label, vt, mirrored);
    } else {
        say(e, false, "%s = %s; the take replayed", label, vt);
    }
    state_changed(e);
    return true;
}

bool gedit_set_text(gedit* e, const char* target, const char* field, const char* text) {
    gedit_scope scope;
    is_keyword(target, &scope);
    const gedit_field* f = find_field(scope, field);
    if (f && f->names) {
        for (int k = 0; k < f->nnames; k++) {
            if (strcmp(text, f->names[k]) == 0) {
                return gedit_set(e, target, field, k, false);
            }
        }
        char list[128] = "";
        size_t len = 0;
        for (int k = 0; k < f->nnames; k++) {
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "",
                                    f->names[k]);
        }
        say(e, true, "refused: %s %s: expected one of %s, found '%.40s'", target, field, list,
            text);
        return false;
    }
    char* end = NULL;
    const double v = strtod(text, &end);
    if (end == text || *end != '\0') {
        say(e, true, "refused: %s %s: expected a number, found '%.40s'", target, field, text);
        return false;
    }
    return gedit_set(e, target, field, v, false);
}

/* ---- undo, redo, save ---------------------------------------------------------------------- */

static bool step_history(gedit* e, fb_gains* from, int* nfrom, fb_gains* to, int* nto,
                         const char* what) {
    if (*nfrom == 0) {
        say(e, false, "nothing to %s", what);
        return false;
    }
    const fb_gains now = e->cur;
    if (!put_in_force(e, &from[*nfrom - 1])) {
        return false;
    }
    (*nfrom)--;
    push(to, nto, &now);
    e->can_merge = false;
    say(e, false, "%s: the take replayed%s", what, gedit_dirty(e) ? "" : " (as saved)");
    state_changed(e);
    return true;
}

bool gedit_undo(gedit* e) {
    return step_history(e, e->undo, &e->nundo, e->redo, &e->nredo, "undo");
}

bool gedit_redo(gedit* e) {
    return step_history(e, e->redo, &e->nredo, e->undo, &e->nundo, "redo");
}

bool gedit_can_undo(const gedit* e) {
    return e->nundo > 0;
}

bool gedit_can_redo(const gedit* e) {
    return e->nredo > 0;
}

bool gedit_save(gedit* e, const char* path) {
    if (!path) {
        path = source_gains_path(e->src);
    }
    if (!path || !path[0]) {
        say(e, true, "NOT saved: no gains file (--gains FILE, or a path to save to)");
        return false;
    }
    char msg[FB_ERROR_MSG_MAX + 64];
    if (!source_save_gains(e->src, path, msg, sizeof msg)) {
        say(e, true, "%s", msg);
        return false;
    }
    e->saved = e->cur;
    e->can_merge = false;
    say(e, false, "%s", msg);
    state_changed(e);
    return true;
}

void gedit_sync(gedit* e) {
    const fb_gains* g = source_gains(e->src);
    if (g && !gains_equal(g, &e->cur)) { /* the file was reloaded */
        push(e->undo, &e->nundo, &e->cur);
        e->nredo = 0;
        e->cur = *g;
        e->saved = *g;
        e->can_merge = false;
        state_changed(e);
    }
}

bool gedit_conflict(const gedit* e) {
    return source_pending_gains(e->src) != NULL;
}

bool gedit_take_file(gedit* e) {
    const fb_gains* p = source_pending_gains(e->src);
    if (!p) {
        return false;
    }
    const fb_gains file = *p;
    const fb_gains before = e->cur;
    if (!put_in_force(e, &file)) {
        return false;
    }
    push(e->undo, &e->nundo, &before);
    e->nredo = 0;
    e->saved = file;
    e->can_merge = false;
    source_drop_pending(e->src, true);
    say(e, false, "took the file's gains (undo brings the edits back)");
    state_changed(e);
    return true;
}

void gedit_keep_edits(gedit* e) {
    if (source_pending_gains(e->src)) {
        source_drop_pending(e->src, false);
        say(e, false, "kept the edits; saving will overwrite the file");
    }
}

/* ---- selection and values ------------------------------------------------------------------ */

int gedit_joint_of_body(const gedit* e, int body) {
    while (body > 0 && e->m->jnv[body] == 0) {
        body = e->m->parent[body];
    }
    return body > 0 ? body : -1;
}

void gedit_select_body(gedit* e, int body) {
    e->sel = body >= 0 && body < e->m->nbody ? gedit_joint_of_body(e, body) : -1;
}

bool gedit_select_name(gedit* e, const char* name) {
    const int b = fb_model_body_by_name(e->m, name);
    if (b <= 0 || e->m->jnv[b] == 0) {
        say(e, true, "'%.60s' names no joint with degrees of freedom", name);
        return false;
    }
    e->sel = b;
    return true;
}

int gedit_selected(const gedit* e) {
    return e->sel;
}

double gedit_value(const gedit* e, gedit_scope scope, const gedit_field* f, int body,
                   int* rule) {
    *rule = -1;
    switch (scope) {
    case GEDIT_TAKE:
    case GEDIT_ROOT:
        return get_field(f, &e->cur);
    case GEDIT_DEFAULTS:
        return get_field(f, &e->cur.defaults);
    default:
        break;
    }
    double v = get_field(f, &e->cur.defaults);
    if (body <= 0 || body >= e->m->nbody) {
        return v;
    }
    for (int r = 0; r < e->cur.nrule; r++) { /* as fb_gains_resolve applies them */
        const fb_gains_rule* x = &e->cur.rule[r];
        if ((x->set & f->bit) && joint_matches(e->m, body, x->pattern)) {
            v = get_field(f, &x->g);
            *rule = r;
        }
    }
    return v;
}

void gedit_set_mirror(gedit* e, bool on) {
    e->mirror = on;
}

bool gedit_mirror(const gedit* e) {
    return e->mirror;
}

const char* gedit_message(const gedit* e, bool* error) {
    if (error) {
        *error = e->msg_error;
    }
    return e->msg;
}
