/* featherbone-view, sanitizer builds only: keep the GL driver mapped until exit.
 *
 * Mesa's driver (swrast_dri.so with LLVM) keeps a few allocations for the life of the process
 * and is unloaded by glfwTerminate. LeakSanitizer checks after that, finds those blocks, and
 * can no longer name the library they came from ("<unknown module>"), so viewer/lsan.supp
 * cannot suppress them by library without suppressing everything. Marking every library
 * loaded so far RTLD_NODELETE keeps them mapped, the reports name them, and the suppressions
 * stay limited to Mesa, GLFW and X. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

#include "pin.h"

static int pin_one(struct dl_phdr_info* info, size_t size, void* data) {
    (void)size;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0]) {
        /* RTLD_NOLOAD: only objects already loaded; the handle is never closed on purpose */
        (void)dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
    return 0;
}

void pin_loaded_libraries(void) {
    dl_iterate_phdr(pin_one, NULL);
}
