/* ABA phase 1 and the contact kernel for baseline x86-64 (see aba_kernel.h). */
#define FB_ABA_KERNEL fb_aba_phase1_base
#include "dynamics/aba_kernel_impl.h"
#define FB_ABA_CONTACT fb_aba_contact_path_base
#include "dynamics/aba_contact_impl.h"
