/* Reading a JSON file with cJSON, with errors that name the file and the line. */
#ifndef FB_UTIL_JSON_FILE_H
#define FB_UTIL_JSON_FILE_H

#include <cjson/cJSON.h>
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

#endif /* FB_UTIL_JSON_FILE_H */
