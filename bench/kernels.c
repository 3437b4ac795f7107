/* The kernels' instruction set for the benchmarks (see kernels.h). */
#include "kernels.h"

#include "math/isa.h"

const char* bench_kernels(void) {
    return fb_isa_name(fb_isa_active());
}
