/* featherbone: status codes, error reports, allocator, export macro.
 *
 * Every fallible library function returns an fb_status (FB_OK = 0) and takes an
 * fb_error* as its last argument (which may be NULL). The library never prints,
 * aborts or exits on user input. */
#ifndef FEATHERBONE_BASE_H
#define FEATHERBONE_BASE_H

#include <stddef.h>

#if defined(FB_STATIC_DEFINE)
#define FB_API
#elif defined(_WIN32)
#ifdef FB_BUILDING
#define FB_API __declspec(dllexport)
#else
#define FB_API __declspec(dllimport)
#endif
#else
#define FB_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Outcome of a library call. */
typedef enum fb_status {
    FB_OK = 0,
    FB_EINVAL = 1,    /* an argument or input value is invalid (bad input: CLI exit 2) */
    FB_ENOMEM = 2,    /* the allocator returned NULL */
    FB_ECAPACITY = 3, /* a declared maximum was exceeded; the message gives the size needed */
    FB_ENUMERIC = 4,  /* NaN/Inf, a singular matrix or a runaway state */
    FB_EIO = 5,       /* a file could not be read or written */
    FB_ESTATE = 6     /* a call made out of order (e.g. a model used before fb_model_finalize) */
} fb_status;

/* Message capacity of fb_error, including the terminating NUL. */
#define FB_ERROR_MSG_MAX 512

/* What went wrong: the status and a message "<input>:<line or field>: expected X, found Y". */
typedef struct fb_error {
    fb_status code;
    char msg[FB_ERROR_MSG_MAX];
} fb_error;

/* Short, constant name of a status ("FB_EINVAL"). Never NULL. */
FB_API const char* fb_status_name(fb_status s);

/* Memory source for everything the library allocates. Stored in the object made with it;
 * there is no process-wide hook. `ctx` is passed back unchanged. */
typedef struct fb_allocator {
    void* (*alloc)(void* ctx, size_t size); /* like malloc; NULL on failure */
    void (*free)(void* ctx, void* ptr);     /* like free; ptr may be NULL */
    void* ctx;
} fb_allocator;

/* The allocator backed by malloc/free. */
FB_API fb_allocator fb_default_allocator(void);

#ifdef __cplusplus
}
#endif

#endif /* FEATHERBONE_BASE_H */
