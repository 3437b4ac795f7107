/* Filling fb_error and the default allocator. */
#ifndef FB_UTIL_ERROR_H
#define FB_UTIL_ERROR_H

#include "featherbone/base.h"

/* Writes code and a printf-style message into err (if not NULL) and returns code. */
fb_status fb_fail(fb_error* err, fb_status code, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears err (if not NULL) to FB_OK with an empty message and returns FB_OK. */
fb_status fb_ok(fb_error* err);

/* Allocates size bytes from a (NULL means the default allocator). */
void* fb_alloc(const fb_allocator* a, size_t size);
void fb_free(const fb_allocator* a, void* p);

/* fb_alloc, the bytes zeroed (calloc with the default allocator). */
void* fb_alloc_zero(const fb_allocator* a, size_t size);

#endif /* FB_UTIL_ERROR_H */
