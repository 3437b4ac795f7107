/* Whole-or-nothing file writes (see atomic_file.h). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, fchmod */
#include "util/atomic_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

fb_status fb_atomic_open(fb_atomic_file* a, const char* path, fb_error* err) {
    a->f = NULL;
    a->path = path;
    if (snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof a->tmp) {
        return fb_fail(err, FB_EIO, "%s: path too long", path);
    }
    const int fd = mkstemp(a->tmp);
    /* mkstemp makes the file 0600; an exported file is an ordinary document */
    if (fd < 0 || fchmod(fd, 0644) != 0 || !(a->f = fdopen(fd, "w"))) {
        const int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(a->tmp);
        }
        return fb_fail(err, FB_EIO, "%s: cannot write: %s", path, strerror(e));
    }
    return FB_OK;
}

fb_status fb_atomic_commit(fb_atomic_file* a, fb_error* err) {
    const bool ok = !ferror(a->f);
    const bool closed = fclose(a->f) == 0;
    a->f = NULL;
    if (!ok || !closed) {
        const int e = errno;
        unlink(a->tmp);
        return fb_fail(err, FB_EIO, "%s: write failed: %s", a->path, strerror(e));
    }
    if (rename(a->tmp, a->path) != 0) {
        const int e = errno;
        unlink(a->tmp);
        return fb_fail(err, FB_EIO, "%s: cannot move into place: %s", a->path, strerror(e));
    }
    return fb_ok(err);
}

void fb_atomic_abort(fb_atomic_file* a) {
    if (a->f) {
        fclose(a->f);
        a->f = NULL;
    }
    unlink(a->tmp);
}
