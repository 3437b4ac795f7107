/* ABA phase 1 for baseline x86-64 (see aba_kernel.h). */
#define FB_ABA_KERNEL fb_aba_phase1_base
#include "dynamics/aba_kernel_impl.h"
