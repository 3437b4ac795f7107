/* Laying out many arrays inside one allocation: each object (model, data) computes its layout
 * twice with the same code, once to count the bytes (base NULL) and once to place the arrays. */
#ifndef FB_UTIL_BLOCK_H
#define FB_UTIL_BLOCK_H

#include <stddef.h>

/* Alignment of each array inside a block (bytes): enough for double and for SIMD loads. */
#define FB_BLOCK_ALIGN 32

/* Returns base + *offset (NULL when only counting) and advances *offset past `size` bytes,
 * rounded up to FB_BLOCK_ALIGN. */
static inline void* fb_block_carve(char* base, size_t* offset, size_t size) {
    void* p = base ? base + *offset : NULL;
    *offset += (size + FB_BLOCK_ALIGN - 1) & ~(size_t)(FB_BLOCK_ALIGN - 1);
    return p;
}

#endif /* FB_UTIL_BLOCK_H */
