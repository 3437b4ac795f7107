/* featherbone-view without Dear ImGui (libimgui-dev was not found when it was built): the
 * calls of panel.h, and no panel. Editing the gains still works from --script (`gain`,
 * `save-gains`, `undo`, `redo`: gains_edit.h); the HUD and --help say the panel is missing. */
#include "panel.h"

#include <stdio.h>

bool panel_available(void) {
    return false;
}

const char* panel_build_info(void) {
    return "gains panel: not built (no Dear ImGui, Debian libimgui-dev, at build time)";
}

panel* panel_create(struct GLFWwindow* win, struct gedit* e, struct source* src, char* err,
                    size_t cap) {
    (void)win;
    (void)e;
    (void)src;
    snprintf(err, cap, "%s", panel_build_info());
    return NULL;
}

void panel_destroy(panel* p) {
    (void)p;
}

void panel_set_open(panel* p, bool open) {
    (void)p;
    (void)open;
}

bool panel_is_open(const panel* p) {
    (void)p;
    return false;
}

bool panel_mouse_button(panel* p, int button, int action, int mods) {
    (void)p;
    (void)button;
    (void)action;
    (void)mods;
    return false;
}

bool panel_scroll(panel* p, double xoff, double yoff) {
    (void)p;
    (void)xoff;
    (void)yoff;
    return false;
}

bool panel_key(panel* p, int key, int scancode, int action, int mods) {
    (void)p;
    (void)key;
    (void)scancode;
    (void)action;
    (void)mods;
    return false;
}

bool panel_char(panel* p, unsigned int c) {
    (void)p;
    (void)c;
    return false;
}

bool panel_wants_mouse(const panel* p) {
    (void)p;
    return false;
}

void panel_frame(panel* p, double time, int w, int h) {
    (void)p;
    (void)time;
    (void)w;
    (void)h;
}

void panel_draw(panel* p) {
    (void)p;
}
