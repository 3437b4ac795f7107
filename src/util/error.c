/* Errors and allocation: the only place the library touches malloc/free. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fb_status fb_fail(fb_error* err, fb_status code, const char* fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

fb_status fb_ok(fb_error* err) {
    if (err) {
        err->code = FB_OK;
        err->msg[0] = '\0';
    }
    return FB_OK;
}

const char* fb_status_name(fb_status s) {
    switch (s) {
    case FB_OK:
        return "FB_OK";
    case FB_EINVAL:
        return "FB_EINVAL";
    case FB_ENOMEM:
        return "FB_ENOMEM";
    case FB_ECAPACITY:
        return "FB_ECAPACITY";
    case FB_ENUMERIC:
        return "FB_ENUMERIC";
    case FB_EIO:
        return "FB_EIO";
    case FB_ESTATE:
        return "FB_ESTATE";
    }
    return "FB_UNKNOWN";
}

static void* malloc_alloc(void* ctx, size_t size) {
    (void)ctx;
    return malloc(size);
}

static void malloc_free(void* ctx, void* p) {
    (void)ctx;
    free(p);
}

fb_allocator fb_default_allocator(void) {
    return (fb_allocator){malloc_alloc, malloc_free, NULL};
}

void* fb_alloc(const fb_allocator* a, size_t size) {
    return a ? a->alloc(a->ctx, size) : malloc(size);
}

void* fb_alloc_zero(const fb_allocator* a, size_t size) {
    if (!a || a->alloc == malloc_alloc) {
        /* calloc: a large block comes as the system's zero pages, touched only where used
         * (a world's constraint scratch is sized for 256 contacts; a walk uses a few dozen
         * rows of it) */
        return calloc(1, size);
    }
    void* p = a->alloc(a->ctx, size);
    if (p) {
        memset(p, 0, size);
    }
    return p;
}

void fb_free(const fb_allocator* a, void* p) {
    if (a) {
        a->free(a->ctx, p);
    } else {
        free(p);
    }
}
