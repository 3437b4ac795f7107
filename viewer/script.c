/* featherbone-view: reading --script files (script.h). */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "script.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gains_edit.h"
#include "gl.h"

/* Largest script read (lines of at most this many bytes). */
#define SCRIPT_LINE_MAX 2048
#define SCRIPT_EVENTS_MAX 100000

typedef struct key_name {
    const char* name;
    int key;
} key_name;

static const key_name KEYS[] = {
    {"space", GLFW_KEY_SPACE}, {"right", GLFW_KEY_RIGHT},         {"left", GLFW_KEY_LEFT},
    {"r", GLFW_KEY_R},         {"g", GLFW_KEY_G},                 {"o", GLFW_KEY_O},
    {"c", GLFW_KEY_C},         {"f", GLFW_KEY_F},                 {"h", GLFW_KEY_H},
    {"e", GLFW_KEY_E},         {"backspace", GLFW_KEY_BACKSPACE}, {"escape", GLFW_KEY_ESCAPE},
    {"p", GLFW_KEY_P},         {"b", GLFW_KEY_B},
};
#define NKEY ((int)(sizeof KEYS / sizeof KEYS[0]))
static const char CHARS[] = "[]{}+-";

static bool fail(char* err, size_t cap, const char* path, int line, const char* what,
                 const char* found) {
    snprintf(err, cap, "%s:%d: expected %s, found '%.60s'", path, line, what, found);
    return false;
}

static bool number(const char* text, double* out) {
    char* end = NULL;
    errno = 0;
    const double v = text ? strtod(text, &end) : 0.0;
    if (!text || end == text || *end != '\0' || errno != 0 || !isfinite(v)) {
        return false;
    }
    *out = v;
    return true;
}

/* `gain TARGET FIELD VALUE`: the field must be one of the target's (the value is checked
 * when it is set, by the editor, which refuses it with a message as the panel does). */
static bool parse_gain(char* rest, const char* path, int line, script_event* e, char* err,
                       size_t cap) {
    char* save = NULL;
    const char* target = strtok_r(rest, " \t", &save);
    const char* field = strtok_r(NULL, " \t", &save);
    const char* value = strtok_r(NULL, " \t", &save);
    if (!target || !field || !value || strtok_r(NULL, " \t", &save)) {
        return fail(err, cap, path, line, "gain TARGET FIELD VALUE", target ? target : "");
    }
    const gedit_scope scope = strcmp(target, "take") == 0       ? GEDIT_TAKE
                              : strcmp(target, "root") == 0     ? GEDIT_ROOT
                              : strcmp(target, "defaults") == 0 ? GEDIT_DEFAULTS
                                                                : GEDIT_JOINT;
    int n = 0;
    const gedit_field* f = gedit_fields(scope, &n);
    char names[256] = "";
    size_t len = 0;
    for (int k = 0; k < n; k++) {
        if (strcmp(f[k].name, field) == 0) {
            e->action = SCRIPT_GAIN;
            snprintf(e->arg, sizeof e->arg, "%s", target);
            snprintf(e->field, sizeof e->field, "%s", field);
            snprintf(e->value, sizeof e->value, "%s", value);
            return true;
        }
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
                                f[k].name);
    }
    char what[300];
    snprintf(what, sizeof what, "a field of %s: %s", target, names);
    return fail(err, cap, path, line, what, field);
}

/* One line into e; false with the message in err. */
static bool parse_line(char* text, const char* path, int line, script_event* e, char* err,
                       size_t cap) {
    char* save = NULL;
    const char* t = strtok_r(text, " \t\r\n", &save);
    const char* action = strtok_r(NULL, " \t\r\n", &save);
    char* rest = strtok_r(NULL, "", &save); /* the arguments, untokenised */
    while (rest && isspace((unsigned char)*rest)) {
        rest++;
    }
    if (rest) {
        for (char* end = rest + strlen(rest); end > rest && isspace((unsigned char)end[-1]);) {
            *--end = '\0';
        }
        rest = *rest ? rest : NULL;
    }
    *e = (script_event){.line = line};
    if (!number(t, &e->time) || e->time < 0.0) {
        return fail(err, cap, path, line, "a time in seconds >= 0", t);
    }
    if (!action) {
        return fail(err, cap, path, line, "an action after the time", "");
    }
    if (strcmp(action, "quit") == 0 && !rest) {
        e->action = SCRIPT_QUIT;
    } else if (strcmp(action, "throw") == 0 && rest && !strpbrk(rest, " \t")) {
        e->action = SCRIPT_THROW;
        snprintf(e->arg, sizeof e->arg, "%s", rest);
    } else if (strcmp(action, "screenshot") == 0 && rest) {
        e->action = SCRIPT_SCREENSHOT;
        snprintf(e->arg, sizeof e->arg, "%s", rest);
    } else if (strcmp(action, "gain") == 0 && rest) {
        return parse_gain(rest, path, line, e, err, cap);
    } else if (strcmp(action, "save-gains") == 0 && rest) {
        e->action = SCRIPT_SAVE_GAINS;
        snprintf(e->arg, sizeof e->arg, "%s", rest);
    } else if ((strcmp(action, "undo") == 0 || strcmp(action, "redo") == 0) && !rest) {
        e->action = action[0] == 'u' ? SCRIPT_UNDO : SCRIPT_REDO;
    } else if (strcmp(action, "select") == 0 && rest && !strpbrk(rest, " \t")) {
        e->action = SCRIPT_SELECT;
        snprintf(e->arg, sizeof e->arg, "%s", rest);
    } else if ((strcmp(action, "panel") == 0 || strcmp(action, "mirror") == 0) && rest) {
        if (strcmp(rest, "on") != 0 && strcmp(rest, "off") != 0) {
            return fail(err, cap, path, line, action[0] == 'p' ? "panel on|off" : "mirror on|off",
                        rest);
        }
        e->action = action[0] == 'p' ? SCRIPT_PANEL : SCRIPT_MIRROR;
        e->x = strcmp(rest, "on") == 0;
    } else if (strcmp(action, "zoom") == 0 && rest) {
        if (!number(rest, &e->x) || fabs(e->x) > 100.0) {
            return fail(err, cap, path, line, "zoom STEPS (-100 to 100)", rest);
        }
        e->action = SCRIPT_ZOOM;
    } else if ((strcmp(action, "click") == 0 || strcmp(action, "orbit") == 0) && rest) {
        const bool click = action[0] == 'c';
        char* s2 = NULL;
        const char* xs = strtok_r(rest, " \t", &s2);
        const char* ys = strtok_r(NULL, " \t", &s2);
        if (!number(xs, &e->x) || !number(ys, &e->y) || strtok_r(NULL, " \t", &s2)) {
            return fail(err, cap, path, line,
                        click ? "click X Y (window pixels)" : "orbit YAW PITCH (degrees)",
                        xs ? xs : "");
        }
        e->action = click ? SCRIPT_CLICK : SCRIPT_ORBIT;
    } else if (strcmp(action, "key") == 0 && rest) {
        for (int k = 0; k < NKEY; k++) {
            if (strcmp(rest, KEYS[k].name) == 0) {
                e->action = SCRIPT_KEY;
                e->key = KEYS[k].key;
                return true;
            }
        }
        if (strlen(rest) == 1 && strchr(CHARS, rest[0])) {
            e->action = SCRIPT_CHAR;
            e->key = (unsigned char)rest[0];
            return true;
        }
        return fail(err, cap, path, line,
                    "a key: space right left r g o c b f h e p backspace escape [ ] { } + -",
                    rest);
    } else {
        return fail(err, cap, path, line,
                    "throw JOINT, click X Y, key NAME, zoom STEPS, orbit YAW PITCH, screenshot "
                    "PATH, gain TARGET FIELD VALUE, save-gains PATH, undo, redo, select JOINT, "
                    "panel on|off, mirror on|off or quit", action);
    }
    return true;
}

static int by_time(const void* a, const void* b) {
    const script_event* x = a;
    const script_event* y = b;
    if (x->time != y->time) {
        return x->time < y->time ? -1 : 1;
    }
    return x->line - y->line; /* file order among equal times: a stable sort */
}

bool script_load(const char* path, script* s, char* err, size_t cap) {
    *s = (script){0};
    snprintf(s->path, sizeof s->path, "%s", path);
    FILE* f = fopen(path, "r");
    if (!f) {
        snprintf(err, cap, "%s: cannot read the script: %s", path, strerror(errno));
        return false;
    }
    char text[SCRIPT_LINE_MAX];
    int line = 0, cap_ev = 0;
    bool ok = true;
    while (ok && fgets(text, sizeof text, f)) {
        line++;
        if (!strchr(text, '\n') && !feof(f)) {
            snprintf(err, cap, "%s:%d: expected a line of at most %d bytes", path, line,
                     SCRIPT_LINE_MAX - 2);
            ok = false;
            break;
        }
        char* hash = strchr(text, '#');
        if (hash) {
            *hash = '\0';
        }
        char* p = text;
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (*p == '\0') {
            continue;
        }
        if (s->n == cap_ev) {
            if (cap_ev >= SCRIPT_EVENTS_MAX) {
                snprintf(err, cap, "%s:%d: more than %d events", path, line, SCRIPT_EVENTS_MAX);
                ok = false;
                break;
            }
            cap_ev = cap_ev ? 2 * cap_ev : 16;
            script_event* grown = realloc(s->ev, (size_t)cap_ev * sizeof *grown);
            if (!grown) {
                snprintf(err, cap, "%s: out of memory", path);
                ok = false;
                break;
            }
            s->ev = grown;
        }
        ok = parse_line(p, path, line, &s->ev[s->n], err, cap);
        s->n += ok;
    }
    if (ok && ferror(f)) {
        snprintf(err, cap, "%s: read error", path);
        ok = false;
    }
    fclose(f);
    if (!ok) {
        script_free(s);
        return false;
    }
    if (s->n > 1) {
        qsort(s->ev, (size_t)s->n, sizeof *s->ev, by_time);
    }
    return true;
}

void script_free(script* s) {
    free(s->ev);
    s->ev = NULL;
    s->n = 0;
}
