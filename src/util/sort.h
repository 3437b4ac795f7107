/* Sorting numbers with the C library's qsort: the one comparison the library's medians and
 * percentiles use. */
#ifndef FB_UTIL_SORT_H
#define FB_UTIL_SORT_H

#include <stddef.h>
#include <stdlib.h>

/* qsort's comparison of two doubles, ascending (no NaN is sorted with it). */
static inline int fb_cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) ascending. */
static inline void fb_sort_doubles(double* v, size_t n) {
    qsort(v, n, sizeof(double), fb_cmp_double);
}

#endif /* FB_UTIL_SORT_H */
