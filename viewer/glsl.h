/* featherbone-view: compiling and linking a shader program (needs a current GL context). */
#ifndef FB_VIEW_GLSL_H
#define FB_VIEW_GLSL_H

#include <stddef.h>

#include "gl.h"

/* Program from vertex and fragment source; 0 with the compiler's log in err on failure. */
GLuint glsl_program(const char* vs, const char* fs, char* err, size_t cap);

#endif /* FB_VIEW_GLSL_H */
