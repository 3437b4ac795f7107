/* Which instruction set the library's multiversioned kernels run with here ("avx2" or
 * "x86-64", src/math/isa.h), for the benchmarks' headers. */
#ifndef FB_BENCH_KERNELS_H
#define FB_BENCH_KERNELS_H

const char* bench_kernels(void);

#endif /* FB_BENCH_KERNELS_H */
