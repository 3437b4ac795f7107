/* Hits: the spec strings of `--hit`, the JSON of `--hits`, and reproducible random draws. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/sim.h"
#include "math/vec3.h"
#include "util/error.h"
#include "util/json_file.h"

/* Largest hits file read (bytes). */
#define HITS_FILE_MAX ((size_t)4 << 20)

static const char* const FROM_NAMES[] = {"front", "back", "left", "right", "above"};
#define NFROM ((int)(sizeof FROM_NAMES / sizeof FROM_NAMES[0]))

fb_hit fb_default_hit(void) {
    return (fb_hit){.time = 1.0,
                    .target = "",
                    .speed = 10.0,
                    .mass = 0.45,
                    .radius = 0.11,
                    .from = FB_FROM_FRONT,
                    .dir = {0.0, 0.0, 1.0},
                    .offset = {0.0, 0.0, 0.0},
                    .restitution = 0.5,
                    .distance = 1.0};
}

/* ---- checking one field ------------------------------------------------------------------- */

typedef struct range {
    const char* key;
    double lo, hi; /* lo exclusive when lo_open */
    bool lo_open;
    const char* what;
} range;

static const range RANGES[] = {
    {"time", 0.0, 1e6, false, "a time in s, >= 0"},
    {"speed", 0.0, 200.0, true, "a speed in m/s, > 0 and <= 200"},
    {"mass", 0.0, 1000.0, true, "a mass in kg, > 0 and <= 1000"},
    {"radius", 0.0, 2.0, true, "a radius in m, > 0 and <= 2"},
    {"restitution", 0.0, 1.0, false, "a restitution in [0, 1]"},
    {"distance", 0.0, 100.0, true, "a distance in m, > 0 and <= 100"},
};
#define NRANGE ((int)(sizeof RANGES / sizeof RANGES[0]))

static double* number_field(fb_hit* h, int k) {
    double* const f[NRANGE] = {&h->time, &h->speed, &h->mass, &h->radius, &h->restitution,
                               &h->distance};
    return f[k];
}

static int range_index(const char* key) {
    for (int k = 0; k < NRANGE; k++) {
        if (strcmp(RANGES[k].key, key) == 0) {
            return k;
        }
    }
    return -1;
}

static bool in_range(int k, double v) {
    const range* r = &RANGES[k];
    return isfinite(v) && v <= r->hi && (r->lo_open ? v > r->lo : v >= r->lo);
}

/* "X:Y:Z" into v. */
static bool parse_vector(const char* s, fb_v3* v) {
    double c[3];
    const char* p = s;
    for (int k = 0; k < 3; k++) {
        char* end = NULL;
        c[k] = strtod(p, &end);
        if (end == p || !isfinite(c[k]) || (k < 2 ? *end != ':' : *end != '\0')) {
            return false;
        }
        p = end + 1;
    }
    *v = fb_v3_make(c[0], c[1], c[2]);
    return true;
}

static fb_status set_from_vector(fb_hit* h, fb_v3 v, const char* where, fb_error* err) {
    const double n = fb_v3_norm(v);
    if (!(n > 1e-9)) {
        return fb_fail(err, FB_EINVAL, "%s: from: expected a non-zero direction", where);
    }
    h->from = FB_FROM_VECTOR;
    h->dir = fb_v3_scale(v, 1.0 / n);
    return FB_OK;
}

static fb_status set_from_name(fb_hit* h, const char* name, const char* where, fb_error* err) {
    for (int k = 0; k < NFROM; k++) {
        if (strcmp(name, FROM_NAMES[k]) == 0) {
            h->from = (fb_hit_from)k;
            return FB_OK;
        }
    }
    return fb_fail(err, FB_EINVAL,
                   "%s: from: expected front, back, left, right, above or a vector X:Y:Z, "
                   "found '%s'",
                   where, name);
}

static fb_status set_offset(fb_hit* h, fb_v3 v, const char* where, fb_error* err) {
    if (!(fb_v3_norm(v) <= 2.0)) {
        return fb_fail(err, FB_EINVAL, "%s: offset: expected a point within 2 m of the body's "
                       "centre of mass", where);
    }
    h->offset = v;
    return FB_OK;
}

static fb_status set_target(fb_hit* h, const char* name, const char* where, fb_error* err) {
    if (name[0] == '\0' || strlen(name) >= FB_NAME_MAX) {
        return fb_fail(err, FB_EINVAL, "%s: target: expected a joint name (1 to %d characters)",
                       where, FB_NAME_MAX - 1);
    }
    snprintf(h->target, sizeof h->target, "%s", name);
    return FB_OK;
}

/* ---- spec strings ------------------------------------------------------------------------- */

fb_status fb_hit_parse(const char* spec, fb_hit* hit, fb_error* err) {
    fb_hit h = fb_default_hit();
    bool have_time = false;
    char buf[1024];
    if (!spec || strlen(spec) >= sizeof buf) {
        return fb_fail(err, FB_EINVAL, "hit: expected key=value pairs separated by commas "
                       "(at most %zu characters)", sizeof buf - 1);
    }
    snprintf(buf, sizeof buf, "%s", spec);
    char where[64];
    snprintf(where, sizeof where, "hit '%.40s%s'", spec, strlen(spec) > 40 ? "..." : "");
    char* save = NULL;
    for (char* tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char* eq = strchr(tok, '=');
        if (!eq) {
            return fb_fail(err, FB_EINVAL, "%s: '%s': expected key=value", where, tok);
        }
        *eq = '\0';
        const char* key = tok;
        const char* val = eq + 1;
        const int k = range_index(key);
        fb_status s = FB_OK;
        if (k >= 0) {
            char* end = NULL;
            const double v = strtod(val, &end);
            if (end == val || *end != '\0' || !in_range(k, v)) {
                return fb_fail(err, FB_EINVAL, "%s: %s: expected %s, found '%s'", where, key,
                               RANGES[k].what, val);
            }
            *number_field(&h, k) = v;
            have_time = have_time || k == 0;
        } else if (strcmp(key, "target") == 0) {
            s = set_target(&h, val, where, err);
        } else if (strcmp(key, "from") == 0) {
            fb_v3 v;
            s = parse_vector(val, &v) ? set_from_vector(&h, v, where, err)
                                      : set_from_name(&h, val, where, err);
        } else if (strcmp(key, "offset") == 0) {
            fb_v3 v;
            s = parse_vector(val, &v)
                    ? set_offset(&h, v, where, err)
                    : fb_fail(err, FB_EINVAL, "%s: offset: expected X:Y:Z (m), found '%s'",
                              where, val);
        } else {
            return fb_fail(err, FB_EINVAL,
                           "%s: unknown key '%s' (expected time, target, speed, mass, radius, "
                           "from, offset, restitution, distance)",
                           where, key);
        }
        if (s != FB_OK) {
            return s;
        }
    }
    if (!have_time || h.target[0] == '\0') {
        return fb_fail(err, FB_EINVAL, "%s: expected at least time= and target=", where);
    }
    *hit = h;
    return fb_ok(err);
}

void fb_hit_format(const fb_hit* h, char* buf, size_t cap) {
    char from[112];
    char n[11][32];
    if (h->from == FB_FROM_VECTOR) {
        snprintf(from, sizeof from, "%s:%s:%s", fb_json_num_text(h->dir.x, n[0]),
                 fb_json_num_text(h->dir.y, n[1]), fb_json_num_text(h->dir.z, n[2]));
    } else {
        snprintf(from, sizeof from, "%s", FROM_NAMES[h->from]);
    }
    snprintf(buf, cap,
             "time=%s,target=%s,speed=%s,mass=%s,radius=%s,from=%s,offset=%s:%s:%s,"
             "restitution=%s,distance=%s",
             fb_json_num_text(h->time, n[3]), h->target, fb_json_num_text(h->speed, n[4]),
             fb_json_num_text(h->mass, n[5]), fb_json_num_text(h->radius, n[6]), from,
             fb_json_num_text(h->offset.x, n[7]), fb_json_num_text(h->offset.y, n[8]),
             fb_json_num_text(h->offset.z, n[9]), fb_json_num_text(h->restitution, n[10]),
             fb_json_num_text(h->distance, n[0]));
}

/* ---- random hits -------------------------------------------------------------------------- */

/* splitmix64 (Steele, Lea & Flood 2014): written out rather than taken from libc so that a seed
 * gives the same hits on every platform. */
static uint64_t splitmix64(uint64_t* s) {
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static double uniform(uint64_t* s, double lo, double hi) {
    return lo + (hi - lo) * (double)(splitmix64(s) >> 11) * 0x1.0p-53;
}

/* Sorts x[0..n) in place (n at most FB_SIM_MAX_BALLS). */
static void sort_small(double* x, int n) {
    for (int i = 1; i < n; i++) {
        const double v = x[i];
        int j = i;
        for (; j > 0 && x[j - 1] > v; j--) {
            x[j] = x[j - 1];
        }
        x[j] = v;
    }
}

fb_status fb_hits_random(const fb_character* ch, int n, uint64_t seed, double t_min,
                         double t_max, fb_hit* out, fb_error* err) {
    const fb_model* m = ch->model;
    if (n < 0 || n > FB_SIM_MAX_BALLS) {
        return fb_fail(err, FB_EINVAL, "random hits: expected 0 to %d, found %d",
                       FB_SIM_MAX_BALLS, n);
    }
    if (!(t_min >= FB_HITS_T_MIN) || !(t_max >= t_min) || !isfinite(t_max)) {
        return fb_fail(err, FB_EINVAL,
                       "random hits: expected %g s <= t_min <= t_max (a ball needs up to %.3f s "
                       "to fly 1 m), found %g, %g",
                       FB_HITS_T_MIN, 1.0 / 6.0, t_min, t_max);
    }
    /* the hits' times: n points in [t_min, t_max] at least FB_HITS_MIN_GAP apart (a hair more,
     * so that the printed times keep it too) */
    const double gap = FB_HITS_MIN_GAP + 1e-9;
    const double room = (t_max - t_min) - (n - 1) * gap;
    if (n > 1 && room < 0.0) {
        return fb_fail(err, FB_EINVAL,
                       "random hits: %d hits %g s apart need %.3f s, the window %.3f-%.3f s holds "
                       "at most %d",
                       n, FB_HITS_MIN_GAP, (n - 1) * FB_HITS_MIN_GAP, t_min, t_max,
                       fb_hits_random_max(t_min, t_max));
    }
    /* candidate targets: clip joints that drive a body of their own with a shape, not the
     * root */
    int cand[256];
    int nc = 0;
    for (int j = 0; j < ch->njoint && nc < 256; j++) {
        const int b = ch->body_of_joint[j];
        bool shaped = false;
        for (int k = 0; k < m->nshape && !shaped; k++) {
            shaped = m->shape[k].body == b;
        }
        if (ch->role[j] == FB_ROLE_BODY && b > 1 && shaped) {
            cand[nc++] = j;
        }
    }
    if (nc == 0 && n > 0) {
        return fb_fail(err, FB_EINVAL, "random hits: the character has no body to aim at");
    }
    uint64_t s = seed;
    double u[FB_SIM_MAX_BALLS];
    for (int k = 0; k < n; k++) {
        fb_hit h = fb_default_hit();
        h.speed = uniform(&s, 6.0, 14.0);
        u[k] = uniform(&s, 0.0, 1.0);
        const int j = cand[(int)(splitmix64(&s) % (uint64_t)nc)];
        snprintf(h.target, sizeof h.target, "%s", m->name[ch->body_of_joint[j]]);
        h.from = (fb_hit_from)(splitmix64(&s) % 4); /* front, back, left, right */
        h.mass = uniform(&s, 0.3, 1.0);
        h.radius = uniform(&s, 0.08, 0.12);
        out[k] = h;
    }
    /* uniform over the spaced arrangements: n uniform points in [0, room], sorted, the k-th
     * moved on by k gaps; the hits in the order of their times */
    sort_small(u, n);
    for (int k = 0; k < n; k++) {
        out[k].time = t_min + (u[k] * room + k * gap);
    }
    return fb_ok(err);
}

int fb_hits_random_max(double t_min, double t_max) {
    const double span = t_max - t_min;
    if (!(span >= 0.0)) {
        return 0;
    }
    const int n = 1 + (int)floor(span / (FB_HITS_MIN_GAP + 1e-9));
    return n < FB_SIM_MAX_BALLS ? n : FB_SIM_MAX_BALLS;
}

/* ---- hits files --------------------------------------------------------------------------- */

static bool json_vector(const cJSON* a, fb_v3* v) {
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3) {
        return false;
    }
    double c[3];
    for (int k = 0; k < 3; k++) {
        const cJSON* e = cJSON_GetArrayItem(a, k);
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
            return false;
        }
        c[k] = e->valuedouble;
    }
    *v = fb_v3_make(c[0], c[1], c[2]);
    return true;
}

static fb_status hit_from_json(const cJSON* o, const char* where, fb_hit* out, fb_error* err) {
    if (!cJSON_IsObject(o)) {
        return fb_fail(err, FB_EINVAL, "%s: expected an object", where);
    }
    fb_hit h = fb_default_hit();
    bool have_time = false;
    for (const cJSON* e = o->child; e; e = e->next) {
        const int k = range_index(e->string);
        fb_status s = FB_OK;
        if (k >= 0) {
            if (!cJSON_IsNumber(e) || !in_range(k, e->valuedouble)) {
                return fb_fail(err, FB_EINVAL, "%s: \"%s\": expected %s", where, e->string,
                               RANGES[k].what);
            }
            *number_field(&h, k) = e->valuedouble;
            have_time = have_time || k == 0;
        } else if (strcmp(e->string, "target") == 0) {
            s = cJSON_IsString(e) ? set_target(&h, e->valuestring, where, err)
                                  : fb_fail(err, FB_EINVAL, "%s: \"target\": expected a string",
                                            where);
        } else if (strcmp(e->string, "from") == 0) {
            fb_v3 v;
            s = cJSON_IsString(e)    ? set_from_name(&h, e->valuestring, where, err)
                : json_vector(e, &v) ? set_from_vector(&h, v, where, err)
                                     : fb_fail(err, FB_EINVAL,
                                               "%s: \"from\": expected a name or [x, y, z]",
                                               where);
        } else if (strcmp(e->string, "offset") == 0) {
            fb_v3 v;
            s = json_vector(e, &v)
                    ? set_offset(&h, v, where, err)
                    : fb_fail(err, FB_EINVAL, "%s: \"offset\": expected [x, y, z] (m)", where);
        } else {
            return fb_fail(err, FB_EINVAL,
                           "%s: unknown field \"%s\" (expected time, target, speed, mass, radius, "
                           "from, offset, restitution, distance)",
                           where, e->string);
        }
        if (s != FB_OK) {
            return s;
        }
    }
    if (!have_time || h.target[0] == '\0') {
        return fb_fail(err, FB_EINVAL, "%s: expected at least \"time\" and \"target\"", where);
    }
    *out = h;
    return FB_OK;
}

fb_status fb_hits_load(const char* path, fb_hit* out, int cap, int* n, fb_error* err) {
    cJSON* root = NULL;
    fb_status s = fb_json_read(path, "hits file", HITS_FILE_MAX, &root, err);
    if (s != FB_OK) {
        return s;
    }
    const cJSON* hits = cJSON_GetObjectItemCaseSensitive(root, "hits");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(hits)) {
        cJSON_Delete(root);
        return fb_fail(err, FB_EINVAL, "%s: expected {\"hits\": [ ... ]}", path);
    }
    const int count = cJSON_GetArraySize(hits);
    if (count > cap) {
        cJSON_Delete(root);
        return fb_fail(err, FB_EINVAL, "%s: hits: %d hits, at most %d fit", path, count, cap);
    }
    int k = 0;
    for (const cJSON* e = hits->child; e && s == FB_OK; e = e->next, k++) {
        char where[300];
        snprintf(where, sizeof where, "%s: hits[%d]", path, k);
        s = hit_from_json(e, where, &out[k], err);
    }
    cJSON_Delete(root);
    if (s == FB_OK) {
        *n = count;
        return fb_ok(err);
    }
    return s;
}

fb_status fb_hit_check(const fb_hit* h, fb_error* err) {
    fb_hit copy = *h;
    char where[FB_NAME_MAX + 16];
    snprintf(where, sizeof where, "hit on '%.*s'", FB_NAME_MAX - 1, h->target);
    for (int k = 0; k < NRANGE; k++) {
        if (!in_range(k, *number_field(&copy, k))) {
            return fb_fail(err, FB_EINVAL, "%s: %s: expected %s", where, RANGES[k].key,
                           RANGES[k].what);
        }
    }
    if ((int)h->from < 0 || h->from > FB_FROM_VECTOR) {
        return fb_fail(err, FB_EINVAL, "%s: from: expected a named direction or a vector", where);
    }
    fb_status s = set_target(&copy, h->target, where, err);
    if (s == FB_OK && h->from == FB_FROM_VECTOR) {
        s = set_from_vector(&copy, h->dir, where, err);
        if (s == FB_OK && fabs(fb_v3_norm(h->dir) - 1.0) > 1e-9) {
            s = fb_fail(err, FB_EINVAL, "%s: from: expected a unit vector", where);
        }
    }
    if (s == FB_OK) {
        s = set_offset(&copy, h->offset, where, err);
    }
    return s == FB_OK ? fb_ok(err) : s;
}

/* The hits files' numbers read back as the same doubles (fb_json_exact), so a saved take
 * replays bit for bit. */
static cJSON* json_v3(fb_v3 v) {
    const double c[3] = {v.x, v.y, v.z};
    cJSON* a = cJSON_CreateArray();
    for (int k = 0; a && k < 3; k++) {
        cJSON* e = fb_json_exact(c[k]);
        if (!e || !cJSON_AddItemToArray(a, e)) {
            cJSON_Delete(e);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

fb_status fb_hits_save(const char* path, const fb_hit* hits, int n, fb_error* err) {
    cJSON* root = cJSON_CreateObject();
    cJSON* list = root ? cJSON_AddArrayToObject(root, "hits") : NULL;
    bool ok = list != NULL;
    for (int k = 0; ok && k < n; k++) {
        const fb_hit* h = &hits[k];
        cJSON* o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(list, o);
        ok = ok && fb_json_add_exact(o, "time", h->time) &&
             cJSON_AddStringToObject(o, "target", h->target) &&
             fb_json_add_exact(o, "speed", h->speed) && fb_json_add_exact(o, "mass", h->mass) &&
             fb_json_add_exact(o, "radius", h->radius);
        if (ok && h->from == FB_FROM_VECTOR) {
            cJSON* d = json_v3(h->dir);
            ok = d && cJSON_AddItemToObject(o, "from", d);
        } else if (ok) {
            ok = cJSON_AddStringToObject(o, "from", FROM_NAMES[h->from]) != NULL;
        }
        cJSON* off = ok ? json_v3(h->offset) : NULL;
        ok = off && cJSON_AddItemToObject(o, "offset", off) &&
             fb_json_add_exact(o, "restitution", h->restitution) &&
             fb_json_add_exact(o, "distance", h->distance);
    }
    if (!ok) {
        cJSON_Delete(root);
        root = NULL;
    }
    return fb_json_write(path, root, err);
}
