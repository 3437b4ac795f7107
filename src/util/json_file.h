/* Reading a JSON file with cJSON, with errors that name the file and the line. */
#ifndef FB_UTIL_JSON_FILE_H
#define FB_UTIL_JSON_FILE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "featherbone/base.h"

/* Parses the file at `path` (at most max_bytes) into *root (free with cJSON_Delete). FB_EIO
 * when it cannot be read, FB_EINVAL "path:line: expected valid JSON" or for a file too large,
 * FB_ENOMEM. `what` names the kind of file in messages ("rules file"). */
fb_status fb_json_read(const char* path, const char* what, size_t max_bytes, cJSON** root,
                       fb_error* err);

/* Writes root as indented JSON and a newline to `path`, whole or not at all, and deletes root
 * (NULL root: out of memory while building it). FB_ENOMEM or FB_EIO naming the file. */
fb_status fb_json_write(const char* path, cJSON* root, fb_error* err);

/* The shortest of %.15g, %.16g, %.17g that reads back as v, into buf (32 bytes); returns buf.
 * cJSON's own printing keeps 15 digits when they read back within an ulp, so a file written
 * with it does not give back the doubles it was written from. */
const char* fb_json_num_text(double v, char* buf);

/* v as a cJSON number that reads back as the same double (fb_json_num_text); null for a value
 * that is not finite (JSON has no such number); NULL when out of memory. */
cJSON* fb_json_exact(double v);

/* Adds fb_json_exact(v) to object obj under key; false when out of memory. */
bool fb_json_add_exact(cJSON* obj, const char* key, double v);

#endif /* FB_UTIL_JSON_FILE_H */
