/* Character rules from JSON (cJSON): strict, so a typo in a key is an error naming it. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/mocap.h"
#include "util/error.h"
#include "util/json_file.h"

/* Largest rules file read (bytes). */
#define RULES_MAX_BYTES (1 << 20)
/* Radii accepted (m): a finger to a wide chest, with margin. */
#define RULES_RADIUS_MIN 1e-3
#define RULES_RADIUS_MAX 0.5

static const char* const SEGMENTS[] = {"head", "trunk", "upperarm", "forearm",
                                       "hand", "thigh", "shank",    "foot"};

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
                            char (*out)[FB_PATTERN_MAX], int* n, fb_error* err) {
    if (!cJSON_IsArray(arr)) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected an array of strings", path, key);
    }
    *n = 0;
    for (const cJSON* it = arr->child; it; it = it->next) {
        char field[48];
        snprintf(field, sizeof field, "%s[%d]", key, *n);
        if (*n >= FB_RULES_MAX) {
            return fb_fail(err, FB_EINVAL, "%s: %s: expected at most %d entries", path, key,
                           FB_RULES_MAX);
        }
        const fb_status s = pattern_copy(path, field, it, out[*n], err);
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
        } else if (strcmp(key, "parts") == 0) {
            if (!cJSON_IsArray(it)) {
                s = fb_fail(err, FB_EINVAL, "%s: parts: expected an array", path);
            }
            r->npart = 0;
            for (const cJSON* p = it->child; s == FB_OK && p; p = p->next) {
                if (r->npart >= FB_RULES_MAX) {
                    s = fb_fail(err, FB_EINVAL, "%s: parts: expected at most %d", path,
                                FB_RULES_MAX);
                } else {
                    s = parse_part(path, r->npart, p, &r->part[r->npart], err);
                    r->npart += (s == FB_OK);
                }
            }
        } else if (strcmp(key, "hinges") == 0) {
            s = parse_list(path, key, it, r->hinge, &r->nhinge, err);
        } else if (strcmp(key, "drop") == 0) {
            s = parse_list(path, key, it, r->drop, &r->ndrop, err);
        } else {
            s = fb_fail(err, FB_EINVAL,
                        "%s: %s: unknown key (expected density, default_radius, parts, hinges, "
                        "drop)",
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
