/* ABA phase 1 and the contact kernel with AVX2: this file is compiled with -mavx2
 * (CMakeLists.txt), so math/rows.h's rows are 256-bit vectors here (see aba_kernel.h). */
#define FB_ABA_KERNEL fb_aba_phase1_avx2
#include "dynamics/aba_kernel_impl.h"
#define FB_ABA_CONTACT fb_aba_contact_path_avx2
#include "dynamics/aba_contact_impl.h"
