/* featherbone-view: the one place GL and GLFW headers come from.
 *
 * OpenGL 3.3 core functions must be loaded at run time. We use libepoxy (Debian libepoxy-dev):
 * it needs no init call and no generated loader source in the tree, resolves each function on
 * first use for the current context, and works the same with GLX, EGL, Windows and macOS.
 * GL_GLEXT_PROTOTYPES against libGL would also link on Mesa, but only because Linux's libGL
 * happens to export every core entry point; glad would mean keeping generated code here. */
#ifndef FB_VIEW_GL_H
#define FB_VIEW_GL_H

#include <epoxy/gl.h>

/* epoxy declares the GL API; GLFW must not include its own GL header after it */
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#endif /* FB_VIEW_GL_H */
