/* Character rules from JSON (cJSON): strict, so a typo in a key is an error naming it. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/mocap.h"
#include "mocap/build.h"
#include "util/error.h"
#include "util/json_file.h"

/* Largest rules file read (bytes). */
#define RULES_MAX_BYTES (1 << 20)
/* Radii accepted (m): a finger to a wide chest, with margin. */
#define RULES_RADIUS_MIN 1e-3
#define RULES_RADIUS_MAX 0.5

static const char* const SEGMENTS[] = {"head", "trunk", "upperarm", "forearm",
                                       "hand", "thigh", "shank",    "foot"};

/* Radians per degree: the rules give ranges in degrees, as the tables of ranges of motion do. */
#define RULES_DEG (3.14159265358979323846 / 180.0)
/* Largest bound accepted (deg): half a turn either way. */
#define RULES_BOUND_MAX 180.0

/* Each range kind's name and the keys of its six bounds (fb_range_bound_name); NULL where a
 * kind has no such slot. */
static const struct {
    const char* name;
    const char* bound[FB_RANGE_NBOUND];
} KINDS[FB_RANGE_NKIND] = {
    [FB_RANGE_HIP] = {"hip", {"flexion", "extension", "abduction", "adduction", "medial_rotation",
                              "lateral_rotation"}},
    [FB_RANGE_KNEE] = {"knee", {"flexion", "extension", NULL, NULL, NULL, NULL}},
    [FB_RANGE_ANKLE] = {"ankle", {"dorsiflexion", "plantarflexion", "abduction", "adduction",
                                  "eversion", "inversion"}},
    [FB_RANGE_TOE] = {"toe", {"flexion", "extension", NULL, NULL, NULL, NULL}},
    [FB_RANGE_PELVIS] = {"pelvis", {"tilt", "tilt", "obliquity", "obliquity", "rotation",
                                    "rotation"}},
    [FB_RANGE_SPINE] = {"spine", {"flexion", "extension", "lateral_flexion", "lateral_flexion",
                                  "rotation", "rotation"}},
    [FB_RANGE_NECK] = {"neck", {"flexion", "extension", "lateral_flexion", "lateral_flexion",
                                "rotation", "rotation"}},
    [FB_RANGE_SHOULDER] = {"shoulder", {"flexion", "extension", "abduction", "adduction",
                                        "medial_rotation", "lateral_rotation"}},
    [FB_RANGE_ELBOW] = {"elbow", {"flexion", "extension", NULL, NULL, NULL, NULL}},
    [FB_RANGE_WRIST] = {"wrist", {"flexion", "extension", "radial_deviation", "ulnar_deviation",
                                  "pronation", "supination"}},
};

const char* fb_range_kind_name(fb_range_kind k) {
    return ((int)k >= 0 && (int)k < FB_RANGE_NKIND) ? KINDS[k].name : NULL;
}

const char* fb_range_bound_name(fb_range_kind k, int slot) {
    return ((int)k >= 0 && (int)k < FB_RANGE_NKIND && slot >= 0 && slot < FB_RANGE_NBOUND)
               ? KINDS[k].bound[slot]
               : NULL;
}

bool fb_range_kind_is_hinge(fb_range_kind k) {
    return k == FB_RANGE_KNEE || k == FB_RANGE_ELBOW || k == FB_RANGE_TOE;
}

/* Case-insensitive: '=name' matches the whole name, anything else a substring. */
bool fb_rule_matches(const char* name, const char* pattern) {
    const bool whole = pattern[0] == '=';
    const char* p = whole ? pattern + 1 : pattern;
    const size_t n = strlen(name), k = strlen(p);
    for (size_t start = 0; start + k <= n; start++) {
        size_t i = 0;
        while (i < k && tolower((unsigned char)name[start + i]) == tolower((unsigned char)p[i])) {
            i++;
        }
        if (i == k && (!whole || (start == 0 && k == n))) {
            return true;
        }
        if (whole) {
            return false;
        }
    }
    return false;
}

fb_rules fb_rules_lossless(void) {
    fb_rules r;
    memset(&r, 0, sizeof r);
    r.density = 1000.0;
    r.default_radius = 0.04;
    return r;
}

static bool valid_segment(const char* s) {
    for (size_t k = 0; k < sizeof SEGMENTS / sizeof SEGMENTS[0]; k++) {
        if (strcmp(s, SEGMENTS[k]) == 0) {
            return true;
        }
    }
    return false;
}

static fb_status pattern_copy(const char* path, const char* field, const cJSON* item, char* out,
                              fb_error* err) {
    if (!cJSON_IsString(item) || item->valuestring[0] == '\0' ||
        strlen(item->valuestring) >= FB_PATTERN_MAX) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected a non-empty string under %d characters",
                       path, field, FB_PATTERN_MAX);
    }
    snprintf(out, FB_PATTERN_MAX, "%s", item->valuestring);
    return FB_OK;
}

static fb_status positive(const char* path, const char* field, const cJSON* item, double lo,
                          double hi, double* out, fb_error* err) {
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < lo ||
        item->valuedouble > hi) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected a number from %g to %g", path, field, lo,
                       hi);
    }
    *out = item->valuedouble;
    return FB_OK;
}

static fb_status parse_part(const char* path, int k, const cJSON* obj, fb_rule_part* p,
                            fb_error* err) {
    char field[64];
    if (!cJSON_IsObject(obj)) {
        return fb_fail(err, FB_EINVAL, "%s: parts[%d]: expected an object", path, k);
    }
    memset(p, 0, sizeof *p);
    snprintf(p->segment, sizeof p->segment, "trunk");
    bool have_match = false, have_radius = false;
    for (const cJSON* it = obj->child; it; it = it->next) {
        fb_status s = FB_OK;
        snprintf(field, sizeof field, "parts[%d].%.20s", k, it->string);
        if (strcmp(it->string, "match") == 0) {
            s = pattern_copy(path, field, it, p->pattern, err);
            have_match = true;
        } else if (strcmp(it->string, "radius") == 0) {
            s = positive(path, field, it, RULES_RADIUS_MIN, RULES_RADIUS_MAX, &p->radius, err);
            have_radius = true;
        } else if (strcmp(it->string, "segment") == 0) {
            if (!cJSON_IsString(it) || !valid_segment(it->valuestring)) {
                s = fb_fail(err, FB_EINVAL,
                            "%s: %s: expected head, trunk, upperarm, forearm, hand, thigh, "
                            "shank or foot",
                            path, field);
            } else {
                snprintf(p->segment, sizeof p->segment, "%s", it->valuestring);
            }
        } else if (strcmp(it->string, "box") == 0) {
            if (!cJSON_IsBool(it)) {
                s = fb_fail(err, FB_EINVAL, "%s: %s: expected true or false", path, field);
            }
            p->box = cJSON_IsTrue(it);
        } else {
            s = fb_fail(err, FB_EINVAL, "%s: %s: unknown key (expected match, radius, segment, box)",
                        path, field);
        }
        if (s != FB_OK) {
            return s;
        }
    }
    if (!have_match || !have_radius) {
        return fb_fail(err, FB_EINVAL, "%s: parts[%d]: expected both \"match\" and \"radius\"",
                       path, k);
    }
    return FB_OK;
}

static fb_status parse_list(const char* path, const char* key, const cJSON* arr,
                            char (*out)[FB_PATTERN_MAX], int* n, int max, fb_error* err) {
    if (!cJSON_IsArray(arr)) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected an array of strings", path, key);
    }
    *n = 0;
    for (const cJSON* it = arr->child; it; it = it->next) {
        char field[64];
        snprintf(field, sizeof field, "%s[%d]", key, *n);
        if (*n >= max) {
            return fb_fail(err, FB_EINVAL, "%s: %s: expected at most %d entries", path, key, max);
        }
        const fb_status s = pattern_copy(path, field, it, out[*n], err);
        if (s != FB_OK) {
            return s;
        }
        (*n)++;
    }
    return FB_OK;
}

/* The keys a range of kind k takes, for messages: "kind, match, share, flexion, ...". */
static void range_keys(fb_range_kind k, char* buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "kind, match, share%s",
                                KINDS[k].bound[4] ? ", twist_share" : "");
    for (int b = 0; b < FB_RANGE_NBOUND && n < cap; b++) {
        const char* key = KINDS[k].bound[b];
        if (key && (b == 0 || !KINDS[k].bound[b - 1] || strcmp(key, KINDS[k].bound[b - 1]) != 0)) {
            n += (size_t)snprintf(buf + n, cap - n, ", %s", key);
        }
    }
}

/* ranges[k].kind: which kind, looked up before the other keys (their names depend on it). */
static fb_status range_kind(const char* path, int k, const cJSON* obj, fb_range_kind* kind,
                            fb_error* err) {
    const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    for (int c = 0; it && cJSON_IsString(it) && c < FB_RANGE_NKIND; c++) {
        if (strcmp(it->valuestring, KINDS[c].name) == 0) {
            *kind = (fb_range_kind)c;
            return FB_OK;
        }
    }
    return fb_fail(err, FB_EINVAL,
                   "%s: ranges[%d].kind: expected hip, knee, ankle, toe, pelvis, spine, neck, "
                   "shoulder, elbow or wrist",
                   path, k);
}

/* A bound in degrees: (0, 180] for ball kinds (the neutral must lie strictly inside), [0, 180]
 * for hinges; stored in radians in every slot the key names. */
static fb_status range_bound(const char* path, const char* field, const cJSON* it,
                             fb_rule_range* g, bool* have, fb_error* err) {
    const bool hinge = fb_range_kind_is_hinge(g->kind);
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble > RULES_BOUND_MAX ||
        (hinge ? it->valuedouble < 0.0 : !(it->valuedouble > 0.0))) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected degrees, %s to %g", path, field,
                       hinge ? "0" : "more than 0", RULES_BOUND_MAX);
    }
    for (int b = 0; b < FB_RANGE_NBOUND; b++) {
        if (KINDS[g->kind].bound[b] && strcmp(KINDS[g->kind].bound[b], it->string) == 0) {
            g->bound[b] = it->valuedouble * RULES_DEG;
            have[b] = true;
        }
    }
    return FB_OK;
}

static bool is_bound_key(fb_range_kind k, const char* key) {
    for (int b = 0; b < FB_RANGE_NBOUND; b++) {
        if (KINDS[k].bound[b] && strcmp(KINDS[k].bound[b], key) == 0) {
            return true;
        }
    }
    return false;
}

/* A chain's shares: 1 to FB_RANGE_SHARE_MAX fractions in (0, 1]. */
static fb_status range_shares(const char* path, const char* field, const cJSON* arr, double* w,
                              int* n, fb_error* err) {
    *n = 0;
    for (const cJSON* it = cJSON_IsArray(arr) ? arr->child : NULL; it; it = it->next) {
        if (*n >= FB_RANGE_SHARE_MAX || !cJSON_IsNumber(it) || !(it->valuedouble > 0.0) ||
            !(it->valuedouble <= 1.0)) {
            break;
        }
        w[(*n)++] = it->valuedouble;
    }
    if (!cJSON_IsArray(arr) || *n != cJSON_GetArraySize(arr) || *n == 0) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected 1 to %d fractions in (0, 1]", path,
                       field, FB_RANGE_SHARE_MAX);
    }
    return FB_OK;
}

static fb_status parse_range(const char* path, int k, const cJSON* obj, fb_rule_range* g,
                             fb_error* err) {
    char field[64];
    if (!cJSON_IsObject(obj)) {
        return fb_fail(err, FB_EINVAL, "%s: ranges[%d]: expected an object", path, k);
    }
    memset(g, 0, sizeof *g);
    fb_status s = range_kind(path, k, obj, &g->kind, err);
    bool have[FB_RANGE_NBOUND] = {false}, have_match = false;
    for (const cJSON* it = obj->child; s == FB_OK && it; it = it->next) {
        snprintf(field, sizeof field, "ranges[%d].%.24s", k, it->string);
        if (strcmp(it->string, "kind") == 0) {
            continue;
        } else if (strcmp(it->string, "match") == 0) {
            snprintf(field, sizeof field, "ranges[%d].match", k);
            s = parse_list(path, field, it, g->match, &g->nmatch, FB_RANGE_MATCH_MAX, err);
            have_match = s == FB_OK && g->nmatch > 0;
        } else if (strcmp(it->string, "share") == 0) {
            s = range_shares(path, field, it, g->share, &g->nshare, err);
        } else if (strcmp(it->string, "twist_share") == 0 && KINDS[g->kind].bound[4]) {
            s = range_shares(path, field, it, g->twist_share, &g->ntwist_share, err);
        } else if (is_bound_key(g->kind, it->string)) {
            s = range_bound(path, field, it, g, have, err);
        } else {
            char keys[200];
            range_keys(g->kind, keys, sizeof keys);
            s = fb_fail(err, FB_EINVAL, "%s: %s: unknown key for a %s range (expected %s)", path,
                        field, KINDS[g->kind].name, keys);
        }
    }
    for (int b = 0; s == FB_OK && b < FB_RANGE_NBOUND; b++) {
        if (KINDS[g->kind].bound[b] && !have[b]) {
            s = fb_fail(err, FB_EINVAL, "%s: ranges[%d].%s: missing (a %s range needs it)", path,
                        k, KINDS[g->kind].bound[b], KINDS[g->kind].name);
        }
    }
    if (s == FB_OK && !have_match) {
        s = fb_fail(err, FB_EINVAL, "%s: ranges[%d].match: expected a non-empty list of patterns",
                    path, k);
    }
    return s;
}

/* Entry k of an array of objects into out[k]. */
typedef fb_status (*parse_entry)(const char* path, int k, const cJSON* obj, void* out,
                                 fb_error* err);

static fb_status parse_part_at(const char* path, int k, const cJSON* obj, void* out,
                               fb_error* err) {
    return parse_part(path, k, obj, (fb_rule_part*)out + k, err);
}

static fb_status parse_range_at(const char* path, int k, const cJSON* obj, void* out,
                                fb_error* err) {
    return parse_range(path, k, obj, (fb_rule_range*)out + k, err);
}

/* The array `key` of at most max objects, each read by fn into out; *n counts them. */
static fb_status parse_array(const char* path, const char* key, const cJSON* arr, parse_entry fn,
                             void* out, int* n, int max, fb_error* err) {
    if (!cJSON_IsArray(arr)) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected an array", path, key);
    }
    *n = 0;
    for (const cJSON* it = arr->child; it; it = it->next) {
        if (*n >= max) {
            return fb_fail(err, FB_EINVAL, "%s: %s: expected at most %d", path, key, max);
        }
        const fb_status s = fn(path, *n, it, out, err);
        if (s != FB_OK) {
            return s;
        }
        (*n)++;
    }
    return FB_OK;
}

static fb_status parse_rules(const char* path, const cJSON* root, fb_rules* r, fb_error* err) {
    if (!cJSON_IsObject(root)) {
        return fb_fail(err, FB_EINVAL, "%s: expected a JSON object at the top", path);
    }
    for (const cJSON* it = root->child; it; it = it->next) {
        fb_status s = FB_OK;
        const char* key = it->string;
        if (key[0] == '_') {
            continue; /* comments */
        } else if (strcmp(key, "density") == 0) {
            s = positive(path, key, it, 1.0, 1e5, &r->density, err);
        } else if (strcmp(key, "default_radius") == 0) {
            s = positive(path, key, it, RULES_RADIUS_MIN, RULES_RADIUS_MAX, &r->default_radius,
                         err);
        } else if (strcmp(key, "joint_damping") == 0) {
            s = positive(path, key, it, 0.0, 100.0, &r->joint_damping, err);
        } else if (strcmp(key, "joint_friction") == 0) {
            s = positive(path, key, it, 0.0, 100.0, &r->joint_friction, err);
        } else if (strcmp(key, "rolling_resistance") == 0) {
            s = positive(path, key, it, 0.0, 0.1, &r->rolling_resistance, err);
        } else if (strcmp(key, "parts") == 0) {
            s = parse_array(path, key, it, parse_part_at, r->part, &r->npart, FB_RULES_MAX, err);
        } else if (strcmp(key, "hinges") == 0) {
            s = parse_list(path, key, it, r->hinge, &r->nhinge, FB_RULES_MAX, err);
        } else if (strcmp(key, "drop") == 0) {
            s = parse_list(path, key, it, r->drop, &r->ndrop, FB_RULES_MAX, err);
        } else if (strcmp(key, "ranges") == 0) {
            s = parse_array(path, key, it, parse_range_at, r->range, &r->nrange, FB_RANGES_MAX,
                            err);
        } else {
            s = fb_fail(err, FB_EINVAL,
                        "%s: %s: unknown key (expected density, default_radius, joint_damping, "
                        "joint_friction, rolling_resistance, parts, hinges, drop, ranges)",
                        path, key);
        }
        if (s != FB_OK) {
            return s;
        }
    }
    return FB_OK;
}

fb_status fb_rules_load(const char* path, fb_rules* rules, fb_error* err) {
    cJSON* root = NULL;
    fb_status s = fb_json_read(path, "rules file", RULES_MAX_BYTES, &root, err);
    if (s == FB_OK) {
        fb_rules r = fb_rules_lossless();
        s = parse_rules(path, root, &r, err);
        if (s == FB_OK) {
            *rules = r;
            fb_ok(err);
        }
    }
    cJSON_Delete(root);
    return s;
}
