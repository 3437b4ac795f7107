/* A sampling plan's file (fb_sample_plan_save, fb_sample_plan_load; docs/CONTROL.md §11): the
 * offsets a search found, kept so that a later run follows them without searching again. The
 * axes are named by joint and axis, so that a plan read on another character is refused by
 * name; the numbers are written as the shortest text that reads back as the same double
 * (fb_json_exact), so that the reference made from a plan read back is the searched one bit
 * for bit. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featherbone/sim.h"
#include "util/error.h"
#include "util/json_file.h"

#define PLAN_FORMAT "featherbone sampling plan"
#define PLAN_VERSION 1
/* Largest plan file read (bytes): an hour of 0.1 s windows of 64 axes is about 50 MB. */
#define PLAN_MAX_BYTES (64u << 20)

fb_status fb_sample_plan_save(const char* path, const fb_model* m, const char* clip,
                              const fb_sample_plan* plan, fb_error* err) {
    cJSON* root = cJSON_CreateObject();
    bool ok = root && cJSON_AddStringToObject(root, "format", PLAN_FORMAT) &&
              cJSON_AddNumberToObject(root, "version", PLAN_VERSION) &&
              (!clip || cJSON_AddStringToObject(root, "clip", clip)) &&
              fb_json_add_exact(root, "window_s", plan->window);
    cJSON* axes = ok ? cJSON_AddArrayToObject(root, "axes") : NULL;
    ok = ok && axes;
    for (int i = 0; ok && i < plan->dofs; i++) {
        const int b = m->dof_body[plan->dof[i]];
        cJSON* a = cJSON_CreateObject();
        ok = a && cJSON_AddItemToArray(axes, a) &&
             cJSON_AddStringToObject(a, "joint", m->name[b]) &&
             cJSON_AddNumberToObject(a, "axis", plan->dof[i] - m->v_adr[b]);
    }
    if (ok && plan->searched_known) {
        /* how the search's walk ended: a follower compares its own end with it */
        cJSON* srch = cJSON_AddObjectToObject(root, "searched");
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, plan->searched_end);
        ok =
            srch &&
            (isnan(plan->searched_fall) ? cJSON_AddNullToObject(srch, "fall_s") != NULL
                                        : fb_json_add_exact(srch, "fall_s", plan->searched_fall)) &&
            cJSON_AddStringToObject(srch, "end_state", hex);
    }
    cJSON* points = ok ? cJSON_AddArrayToObject(root, "points") : NULL;
    ok = ok && points;
    for (int k = 0; ok && k <= plan->windows; k++) {
        cJSON* row = cJSON_CreateArray();
        ok = row && cJSON_AddItemToArray(points, row);
        for (int i = 0; ok && i < plan->dofs; i++) {
            cJSON* v = fb_json_exact(plan->points[(size_t)k * (size_t)plan->dofs + (size_t)i]);
            ok = v && cJSON_AddItemToArray(row, v);
        }
    }
    if (!ok) {
        cJSON_Delete(root);
        root = NULL; /* fb_json_write reports it */
    }
    return fb_json_write(path, root, err);
}

/* The number at key in obj, in [lo, hi]; FB_EINVAL naming the file and the field. */
static fb_status plan_number(const char* path, const cJSON* obj, const char* key, const char* field,
                             double lo, double hi, double* out, fb_error* err) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected a number", path, field);
    }
    if (v->valuedouble < lo || v->valuedouble > hi) {
        return fb_fail(err, FB_EINVAL, "%s: %s: expected %g..%g, found %g", path, field, lo, hi,
                       v->valuedouble);
    }
    *out = v->valuedouble;
    return FB_OK;
}

/* The axes: each {"joint": name, "axis": k} resolved on m into dof[]. */
static fb_status plan_axes(const char* path, const cJSON* axes, const fb_model* m,
                           fb_sample_plan* p, fb_error* err) {
    const int n = cJSON_GetArraySize(axes);
    if (!cJSON_IsArray(axes) || n < 1 || n > FB_SAMPLE_MAX_DOFS) {
        return fb_fail(err, FB_EINVAL, "%s: axes: expected an array of 1..%d joint axes", path,
                       FB_SAMPLE_MAX_DOFS);
    }
    p->dofs = n;
    for (int i = 0; i < n; i++) {
        const cJSON* a = cJSON_GetArrayItem(axes, i);
        const cJSON* joint = cJSON_GetObjectItemCaseSensitive(a, "joint");
        if (!cJSON_IsString(joint)) {
            return fb_fail(err, FB_EINVAL, "%s: axes[%d].joint: expected a joint name", path, i);
        }
        const int b = fb_model_body_by_name(m, joint->valuestring);
        if (b < 1 || m->jnv[b] < 1) {
            return fb_fail(err, FB_EINVAL,
                           "%s: axes[%d].joint: no joint '%s' that moves in this character", path,
                           i, joint->valuestring);
        }
        char field[32];
        snprintf(field, sizeof field, "axes[%d].axis", i);
        double k = 0.0;
        const fb_status s = plan_number(path, a, "axis", field, 0, m->jnv[b] - 1, &k, err);
        if (s != FB_OK) {
            return s;
        }
        if (k != floor(k)) {
            return fb_fail(err, FB_EINVAL, "%s: %s: expected a whole number, found %g", path, field,
                           k);
        }
        p->dof[i] = m->v_adr[b] + (int)k;
    }
    return FB_OK;
}

/* The search's end, when the file has it ("searched": {"fall_s": null or s, "end_state": 16
 * hex digits}); a plan saved before stop 50 has none, and p->searched_known stays false. */
static fb_status plan_searched(const char* path, const cJSON* srch, fb_sample_plan* p,
                               fb_error* err) {
    if (!srch) {
        return FB_OK;
    }
    if (!cJSON_IsObject(srch)) {
        return fb_fail(err, FB_EINVAL, "%s: searched: expected an object", path);
    }
    const cJSON* fall = cJSON_GetObjectItemCaseSensitive(srch, "fall_s");
    const cJSON* end = cJSON_GetObjectItemCaseSensitive(srch, "end_state");
    /* 16 lowercase hex digits, as the writer makes them: strtoull then reads them whole */
    if (!cJSON_IsString(end) || strlen(end->valuestring) != 16 ||
        strspn(end->valuestring, "0123456789abcdef") != 16) {
        return fb_fail(err, FB_EINVAL, "%s: searched.end_state: expected 16 hex digits", path);
    }
    p->searched_fall = NAN;
    if (!cJSON_IsNull(fall)) {
        const fb_status s =
            plan_number(path, srch, "fall_s", "searched.fall_s", 0.0, 1e9, &p->searched_fall, err);
        if (s != FB_OK) {
            return s;
        }
    }
    p->searched_known = true;
    p->searched_end = strtoull(end->valuestring, NULL, 16);
    return FB_OK;
}

/* The control points: rows of p->dofs finite numbers, at least two rows. */
static fb_status plan_points(const char* path, const cJSON* points, fb_sample_plan* p,
                             fb_error* err) {
    const int rows = cJSON_GetArraySize(points);
    if (!cJSON_IsArray(points) || rows < 2) {
        return fb_fail(err, FB_EINVAL,
                       "%s: points: expected an array of at least two control points", path);
    }
    p->windows = rows - 1;
    p->points = malloc((size_t)rows * (size_t)p->dofs * sizeof(double));
    if (!p->points) {
        return fb_fail(err, FB_ENOMEM, "%s: out of memory", path);
    }
    /* walked item by item: cJSON_GetArrayItem counts from the head, which made reading a
     * plan quadratic in its size */
    int k = 0;
    const cJSON* row = NULL;
    cJSON_ArrayForEach(row, points) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != p->dofs) {
            return fb_fail(err, FB_EINVAL, "%s: points[%d]: expected %d numbers (one per axis)",
                           path, k, p->dofs);
        }
        int i = 0;
        const cJSON* v = NULL;
        cJSON_ArrayForEach(v, row) {
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
                return fb_fail(err, FB_EINVAL, "%s: points[%d][%d]: expected a number", path, k, i);
            }
            p->points[(size_t)k * (size_t)p->dofs + (size_t)i] = v->valuedouble;
            i++;
        }
        k++;
    }
    return FB_OK;
}

fb_status fb_sample_plan_load(const char* path, const fb_model* m, fb_sample_plan* plan,
                              fb_error* err) {
    cJSON* root = NULL;
    fb_status s = fb_json_read(path, "sampling plan", PLAN_MAX_BYTES, &root, err);
    if (s != FB_OK) {
        return s;
    }
    fb_sample_plan p = {0};
    const cJSON* format = cJSON_GetObjectItemCaseSensitive(root, "format");
    double version = 0.0; /* checked, not kept: one version so far */
    if (!cJSON_IsObject(root) || !cJSON_IsString(format) ||
        strcmp(format->valuestring, PLAN_FORMAT) != 0) {
        s = fb_fail(err, FB_EINVAL,
                    "%s: format: expected \"%s\" (a file simulate --sample-save "
                    "wrote)",
                    path, PLAN_FORMAT);
    } else {
        s = plan_number(path, root, "version", "version", PLAN_VERSION, PLAN_VERSION, &version,
                        err);
    }
    s = s == FB_OK ? plan_number(path, root, "window_s", "window_s", 0.01, 10.0, &p.window, err)
                   : s;
    s = s == FB_OK ? plan_axes(path, cJSON_GetObjectItemCaseSensitive(root, "axes"), m, &p, err)
                   : s;
    s = s == FB_OK ? plan_points(path, cJSON_GetObjectItemCaseSensitive(root, "points"), &p, err)
                   : s;
    s = s == FB_OK
            ? plan_searched(path, cJSON_GetObjectItemCaseSensitive(root, "searched"), &p, err)
            : s;
    cJSON_Delete(root);
    if (s != FB_OK) {
        fb_sample_plan_free(&p);
        return s;
    }
    *plan = p;
    fb_ok(err);
    return FB_OK;
}
