/* Writing a file whole or not at all: write to a temporary beside the target, then rename. */
#ifndef FB_UTIL_ATOMIC_FILE_H
#define FB_UTIL_ATOMIC_FILE_H

#include <stdio.h>

#include "featherbone/base.h"

typedef struct fb_atomic_file {
    FILE* f;        /* write here */
    char tmp[4096]; /* the temporary's path */
    const char* path;
} fb_atomic_file;

/* Opens a temporary beside `path` (mode 0644). FB_EIO with the reason on failure. */
fb_status fb_atomic_open(fb_atomic_file* a, const char* path, fb_error* err);

/* Closes and renames into place; on any write error removes the temporary and returns FB_EIO.
 * The target is untouched unless this succeeds. */
fb_status fb_atomic_commit(fb_atomic_file* a, fb_error* err);

/* Closes and removes the temporary (after a failure while writing). */
void fb_atomic_abort(fb_atomic_file* a);

#endif /* FB_UTIL_ATOMIC_FILE_H */
