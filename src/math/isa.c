/* Run-time choice of the kernels' instruction set (see isa.h). */
#include "math/isa.h"

#include <stdlib.h>
#include <string.h>

static fb_isa forced = FB_ISA_AUTO;

/* FB_ISA=x86-64 (or avx2) in the environment chooses before main, e.g. to run under valgrind,
 * which does not decode every AVX form GCC emits; both give the same bits. */
__attribute__((constructor)) static void isa_from_environment(void) {
    const char* e = getenv("FB_ISA");
    if (e && strcmp(e, "x86-64") == 0) {
        forced = FB_ISA_BASE;
    } else if (e && strcmp(e, "avx2") == 0) {
        forced = FB_ISA_AVX2;
    }
}

fb_isa fb_isa_best(void) {
#if defined(FB_HAVE_AVX2_KERNELS)
    /* libgcc's cpuid reading, made before main; AVX2 is reported only when the operating
     * system also saves the 256-bit registers (XGETBV) */
    if (__builtin_cpu_supports("avx2")) {
        return FB_ISA_AVX2;
    }
#endif
    return FB_ISA_BASE;
}

fb_isa fb_isa_active(void) {
    const fb_isa best = fb_isa_best();
    if (forced == FB_ISA_AUTO || forced > best) {
        return best;
    }
    return forced;
}

void fb_isa_force(fb_isa isa) {
    forced = isa;
}

const char* fb_isa_name(fb_isa isa) {
    return isa == FB_ISA_AVX2 ? "avx2" : "x86-64";
}
