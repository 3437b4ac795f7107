/* Which instruction set the multiversioned kernels run with (docs/BENCHMARKS.md, "Kernels in
 * AVX2"). The library is built for baseline x86-64; the kernels of ABA phase 1 and of the
 * contact rows' backward pass (src/dynamics/aba_kernel_*.c) are compiled a second time with
 * AVX2 where the compiler can, and each call picks the AVX2 copy when the processor and the
 * operating system support it. Both copies give the same bits (math/rows.h), which
 * tests/test_dynamics.c and tests/test_constraint.c check.
 *
 *   fb_isa_best     the best this build and this machine allow
 *   fb_isa_active   the one calls use now: fb_isa_best unless fb_isa_force chose another
 *   fb_isa_force    use `isa` (clamped to fb_isa_best), or FB_ISA_AUTO; for tests and
 *                   benchmarks, before any thread runs the dynamics (not thread-safe)
 * The environment variable FB_ISA=x86-64 (or avx2) forces the choice from the start, e.g. for
 * valgrind (3.19 does not decode the register form of VEX vmovq that GCC emits).
 *   fb_isa_name     "x86-64" or "avx2" */
#ifndef FB_MATH_ISA_H
#define FB_MATH_ISA_H

typedef enum fb_isa { FB_ISA_AUTO = -1, FB_ISA_BASE = 0, FB_ISA_AVX2 = 1 } fb_isa;

fb_isa fb_isa_best(void);
fb_isa fb_isa_active(void);
void fb_isa_force(fb_isa isa);
const char* fb_isa_name(fb_isa isa);

#endif /* FB_MATH_ISA_H */
