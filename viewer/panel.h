/* featherbone-view: the gains panel and the take's plots, drawn with Dear ImGui (Debian
 * libimgui-dev: its GLFW and OpenGL 3 backends) in panel.cpp, the viewer's one C++ file.
 * Every edit goes through the editor (gains_edit.h), as --script's `gain` does. Where Dear
 * ImGui is not installed the viewer is built with panel_none.c instead: the same calls, no
 * panel (panel_available() says so, and --help and the HUD with it). */
#ifndef FB_VIEW_PANEL_H
#define FB_VIEW_PANEL_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gedit;
struct source;
struct GLFWwindow;

typedef struct panel panel;

/* Whether this viewer was built with the panel, and one line saying so (and with what). */
bool panel_available(void);
const char* panel_build_info(void);

/* A panel in the window (GL context current) editing through e and plotting src's take.
 * NULL with the reason in err when there is no panel (not built, or no gains to edit). */
panel* panel_create(struct GLFWwindow* win, struct gedit* e, struct source* src, char* err,
                    size_t cap);
void panel_destroy(panel* p);

void panel_set_open(panel* p, bool open);
bool panel_is_open(const panel* p);

/* Window events, given to the panel first: true when it took them (the cursor is over it, or
 * a text field has the keyboard), and then the scene must not act on them. */
bool panel_mouse_button(panel* p, int button, int action, int mods);
bool panel_scroll(panel* p, double xoff, double yoff);
bool panel_key(panel* p, int key, int scancode, int action, int mods);
bool panel_char(panel* p, unsigned int c);
/* Whether the cursor is over the panel (a click there is not a throw). */
bool panel_wants_mouse(const panel* p);

/* Builds this frame's panel (edits made in it take effect now) for a framebuffer of w x h
 * pixels; then panel_draw draws it over the bound framebuffer (as often as asked: the window
 * and a screenshot of the same frame). */
void panel_frame(panel* p, double time, int w, int h);
void panel_draw(panel* p);

#ifdef __cplusplus
}
#endif

#endif /* FB_VIEW_PANEL_H */
