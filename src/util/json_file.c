/* Reading a JSON file with cJSON (see json_file.h): the whole file, errors naming the file and
 * line; and writing one whole or not at all (util/atomic_file.h). */
#include "util/json_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/atomic_file.h"
#include "util/error.h"

fb_status fb_json_read(const char* path, const char* what, size_t max_bytes, cJSON** root,
                       fb_error* err) {
    *root = NULL;
    FILE* f = fopen(path, "rb");
    if (!f) {
        return fb_fail(err, FB_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    char* text = malloc(max_bytes + 1);
    const size_t n = text ? fread(text, 1, max_bytes + 1, f) : 0;
    fclose(f);
    if (!text) {
        return fb_fail(err, FB_ENOMEM, "%s: out of memory", path);
    }
    if (n > max_bytes) {
        free(text);
        return fb_fail(err, FB_EINVAL, "%s: expected a %s under %zu KiB", path, what,
                       max_bytes / 1024);
    }
    text[n] = '\0';
    /* where parsing stopped comes back through `at`, not cJSON_GetErrorPtr(): that one is a
     * process-wide variable every parse writes, which threads (featherbone batch) would race
     * on */
    const char* at = NULL;
    *root = cJSON_ParseWithLengthOpts(text, n, &at, 0);
    fb_status s = FB_OK;
    if (!*root) {
        /* turn where parsing stopped into a line number */
        int line = 1;
        for (const char* p = text; at && p < at && p < text + n; p++) {
            line += (*p == '\n');
        }
        s = fb_fail(err, FB_EINVAL, "%s:%d: expected valid JSON", path, line);
    }
    free(text);
    return s;
}

fb_status fb_json_write(const char* path, cJSON* root, fb_error* err) {
    char* text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) {
        return fb_fail(err, FB_ENOMEM, "%s: out of memory", path);
    }
    fb_atomic_file a;
    fb_status s = fb_atomic_open(&a, path, err);
    if (s == FB_OK) {
        fputs(text, a.f);
        fputc('\n', a.f);
        s = fb_atomic_commit(&a, err);
    }
    cJSON_free(text);
    return s == FB_OK ? fb_ok(err) : s;
}

const char* fb_json_num_text(double v, char* buf) {
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, 32, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) {
            break;
        }
    }
    return buf;
}

cJSON* fb_json_exact(double v) {
    if (!isfinite(v)) {
        return cJSON_CreateNull();
    }
    char buf[32];
    return cJSON_CreateRaw(fb_json_num_text(v, buf));
}

bool fb_json_add_exact(cJSON* obj, const char* key, double v) {
    cJSON* e = fb_json_exact(v);
    if (!e || !cJSON_AddItemToObject(obj, key, e)) {
        cJSON_Delete(e);
        return false;
    }
    return true;
}
