/* featherbone-view: the gains panel and the take's plots (panel.h), with Dear ImGui 1.86 as
 * Debian's libimgui-dev ships it: headers, and libimgui.a with the GLFW and OpenGL 3 backends
 * compiled in (no backend sources), its fonts rasterised by the system's libstb. The viewer's
 * only C++ file: it reads the gains through the editor (gains_edit.h) and changes them only
 * through it, so a drag here and a `gain` line of a script take the same path.
 *
 * Fields come from the editor's tables (gedit_fields), shown when they matter to the
 * controller in force. A drag is one undo step however many frames it lasts; a value typed
 * in (Ctrl+click on a field) is applied when the field is left, and refused by the editor
 * with its message when the gains file would refuse it. */
#include <cmath>
#include <cstdio>
#include <cstring>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <imgui_internal.h> /* TempInputIsActive: a drag field being typed into */

extern "C" {
#include "gains_edit.h"
#include "source.h"
}
#include "panel.h"

namespace {

/* Layout, in pixels at a 720-pixel-high framebuffer (scaled with it): the panel on the
 * right, the plots under it, both clear of the timeline at the bottom. */
const float PANEL_W = 410.0f;
const float PLOT_H = 200.0f;
const float MARGIN = 10.0f;
const float TIMELINE_CLEAR = 48.0f;
/* The plots' shortest time axis (s). */
const double PLOT_SPAN_MIN = 2.0;
/* The plots' colours: MPJPE, the struck body's deviation, hits, the time shown. */
const ImU32 MPJPE_COLOUR = IM_COL32(120, 190, 255, 255);
const ImU32 DEV_COLOUR = IM_COL32(255, 150, 110, 255);
const ImU32 HIT_COLOUR = IM_COL32(250, 220, 70, 220);
const ImU32 NOW_COLOUR = IM_COL32(235, 235, 235, 160);
const ImVec4 ERROR_COLOUR(1.0f, 0.45f, 0.4f, 1.0f);
const ImVec4 OK_COLOUR(0.6f, 0.9f, 0.6f, 1.0f);
const ImVec4 DIM_COLOUR(0.65f, 0.65f, 0.68f, 1.0f);

} // namespace

struct panel {
    GLFWwindow* win;
    gedit* e;
    source* src;
    bool open;
    bool drawn; /* a frame has been built: there is draw data */
    char save_path[1024];
    char group[FB_NAME_MAX];
    int group_field;
    double group_value;
    ImGuiID gesture; /* the field being dragged (0: none) */
    bool gesture_started;
    ImGuiID typed_id; /* a field typed into, applied when left */
    char typed_target[FB_NAME_MAX];
    char typed_field[64];
    double typed_value;
};

extern "C" bool panel_available(void) {
    return true;
}

extern "C" const char* panel_build_info(void) {
    return "gains panel: Dear ImGui " IMGUI_VERSION " (P in the window)";
}

extern "C" panel* panel_create(GLFWwindow* win, gedit* e, source* src, char* err, size_t cap) {
    if (!e) {
        snprintf(err, cap, "no gains to edit (clip playback)");
        return nullptr;
    }
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr; /* no imgui.ini written into the current directory */
    io.LogFilename = nullptr;
    ImGui::StyleColorsDark();
    ImGui::GetStyle().WindowRounding = 3.0f;
    ImGui::GetStyle().Alpha = 0.96f;
    /* the window's events reach the panel through panel_* (interact.c decides who takes
     * them), not through callbacks of its own */
    if (!ImGui_ImplGlfw_InitForOpenGL(win, false) || !ImGui_ImplOpenGL3_Init("#version 330")) {
        ImGui::DestroyContext();
        snprintf(err, cap, "Dear ImGui could not set up its GLFW or OpenGL 3 backend");
        return nullptr;
    }
    panel* p = new panel();
    p->win = win;
    p->e = e;
    p->src = src;
    const char* path = source_gains_path(src);
    if (path) {
        snprintf(p->save_path, sizeof p->save_path, "%s", path);
    } else { /* CLIP.gains.json beside nothing: the clip's name without its extension */
        char name[128];
        snprintf(name, sizeof name, "%s", source_get_info(src)->name);
        char* dot = strrchr(name, '.');
        if (dot && dot != name) {
            *dot = '\0';
        }
        snprintf(p->save_path, sizeof p->save_path, "%s.gains.json", name);
    }
    snprintf(p->group, sizeof p->group, "Left*");
    p->group_value = 0.2;
    return p;
}

extern "C" void panel_destroy(panel* p) {
    if (!p) {
        return;
    }
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    delete p;
}

extern "C" void panel_set_open(panel* p, bool open) {
    if (p) {
        p->open = open;
    }
}

extern "C" bool panel_is_open(const panel* p) {
    return p && p->open;
}

extern "C" bool panel_wants_mouse(const panel* p) {
    return p && p->open && p->drawn && ImGui::GetIO().WantCaptureMouse;
}

extern "C" bool panel_mouse_button(panel* p, int button, int action, int mods) {
    if (!p) {
        return false;
    }
    ImGui_ImplGlfw_MouseButtonCallback(p->win, button, action, mods);
    /* a release always reaches the scene too, so that a drag begun there ends there */
    return action == GLFW_PRESS && panel_wants_mouse(p);
}

extern "C" bool panel_scroll(panel* p, double xoff, double yoff) {
    if (!p) {
        return false;
    }
    ImGui_ImplGlfw_ScrollCallback(p->win, xoff, yoff);
    return panel_wants_mouse(p);
}

extern "C" bool panel_key(panel* p, int key, int scancode, int action, int mods) {
    if (!p) {
        return false;
    }
    ImGui_ImplGlfw_KeyCallback(p->win, key, scancode, action, mods);
    return p->open && p->drawn && ImGui::GetIO().WantCaptureKeyboard;
}

extern "C" bool panel_char(panel* p, unsigned int c) {
    if (!p) {
        return false;
    }
    ImGui_ImplGlfw_CharCallback(p->win, c);
    return p->open && p->drawn && ImGui::GetIO().WantCaptureKeyboard;
}

namespace {

/* Applies a field's new value from a widget: a drag at once (one undo step per drag), a typed
 * value when its field is left. */
void field_changed(panel* p, const char* target, const gedit_field* f, double v, bool changed) {
    const ImGuiID id = ImGui::GetItemID();
    if (ImGui::IsItemActivated()) {
        p->gesture = id;
        p->gesture_started = false;
    }
    if (changed && ImGui::TempInputIsActive(id)) { /* typing: wait for the field to be left */
        p->typed_id = id;
        snprintf(p->typed_target, sizeof p->typed_target, "%s", target);
        snprintf(p->typed_field, sizeof p->typed_field, "%s", f->name);
        p->typed_value = v;
    } else if (changed) {
        const bool merge = p->gesture == id && p->gesture_started;
        gedit_set(p->e, target, f->name, v, merge);
        p->gesture_started = p->gesture == id;
    }
    if (ImGui::IsItemDeactivated()) {
        if (p->typed_id == id) {
            gedit_set(p->e, p->typed_target, p->typed_field, p->typed_value, false);
            p->typed_id = 0;
        }
        if (p->gesture == id) {
            p->gesture = 0;
        }
    }
}

/* One row of a fields table: name (unit), the value to drag or type or choose, and for a
 * joint where it comes from and the default it falls back to. */
void field_row(panel* p, gedit_scope scope, const char* target, const gedit_field* f, int body) {
    int rule = -1;
    double v = gedit_value(p->e, scope, f, body, &rule);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(f->name);
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s%s%s%s", f->help, f->unit[0] ? " (" : "", f->unit,
                          f->unit[0] ? ")" : "");
    }
    ImGui::TableNextColumn();
    ImGui::PushID(f->name);
    ImGui::SetNextItemWidth(-FLT_MIN);
    if (f->names) {
        const int cur = (int)v;
        if (ImGui::BeginCombo("##v", f->names[cur])) {
            for (int k = 0; k < f->nnames; k++) {
                if (ImGui::Selectable(f->names[k], k == cur) && k != cur) {
                    gedit_set(p->e, target, f->name, k, false);
                }
            }
            ImGui::EndCombo();
        }
    } else {
        const float speed = (float)fmax(fabs(v) * f->speed, 1e-4);
        const bool changed =
            ImGui::DragScalar("##v", ImGuiDataType_Double, &v, speed, nullptr, nullptr, "%.5g");
        field_changed(p, target, f, v, changed);
    }
    ImGui::PopID();
    if (scope == GEDIT_JOINT) {
        ImGui::TableNextColumn();
        if (rule < 0) {
            ImGui::TextColored(DIM_COLOUR, "default");
        } else {
            ImGui::TextUnformatted(gedit_gains(p->e)->rule[rule].pattern);
        }
        ImGui::TableNextColumn();
        int none = -1;
        ImGui::TextColored(DIM_COLOUR, "%.4g", gedit_value(p->e, GEDIT_DEFAULTS, f, 0, &none));
    }
}

/* The fields of a scope the controller in force uses, as a table. */
void fields_table(panel* p, const char* id, gedit_scope scope, const char* target, int body) {
    const bool joint = scope == GEDIT_JOINT;
    if (!ImGui::BeginTable(id, joint ? 4 : 2, ImGuiTableFlags_SizingStretchProp |
                                                  ImGuiTableFlags_RowBg)) {
        return;
    }
    ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed, 100.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    if (joint) {
        ImGui::TableSetupColumn("from", ImGuiTableColumnFlags_WidthFixed, 80.0f);
        ImGui::TableSetupColumn("default", ImGuiTableColumnFlags_WidthFixed, 54.0f);
        ImGui::TableHeadersRow();
    }
    int n = 0;
    const gedit_field* f = gedit_fields(scope, &n);
    for (int k = 0; k < n; k++) {
        if (scope != GEDIT_JOINT && scope != GEDIT_DEFAULTS) {
            field_row(p, scope, target, &f[k], body);
        } else if (gedit_field_shown(&f[k], gedit_gains(p->e))) {
            field_row(p, scope, target, &f[k], body);
        }
    }
    ImGui::EndTable();
}

/* The joint chosen by a click, or from the list. */
void joint_section(panel* p) {
    const fb_model* m = gedit_model(p->e);
    const int sel = gedit_selected(p->e);
    ImGui::SetNextItemWidth(180.0f);
    if (ImGui::BeginCombo("joint", sel > 0 ? m->name[sel] : "(right-click a body)")) {
        for (int b = 1; b < m->nbody; b++) {
            if (m->jnv[b] > 0 && m->jtype[b] != FB_JOINT_FLOATING &&
                ImGui::Selectable(m->name[b], b == sel)) {
                gedit_select_body(p->e, b);
            }
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    bool mirror = gedit_mirror(p->e);
    if (ImGui::Checkbox("mirror L/R", &mirror)) {
        gedit_set_mirror(p->e, mirror);
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("edits of a Left joint also set its Right twin, and back");
    }
    if (sel > 0 && m->jtype[sel] == FB_JOINT_FLOATING) {
        ImGui::TextColored(DIM_COLOUR, "%s is the root: its fields are below", m->name[sel]);
    } else if (sel > 0) {
        fields_table(p, "joint", GEDIT_JOINT, m->name[sel], sel);
    }
}

void group_section(panel* p) {
    int n = 0;
    const gedit_field* f = gedit_fields(GEDIT_JOINT, &n);
    ImGui::SetNextItemWidth(90.0f);
    ImGui::InputText("##pattern", p->group, sizeof p->group);
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("a glob of joint names, as in the gains file: Left*, *Knee");
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(110.0f);
    if (p->group_field < 0 || p->group_field >= n) {
        p->group_field = 0;
    }
    if (ImGui::BeginCombo("##field", f[p->group_field].name)) {
        for (int k = 0; k < n; k++) {
            if (ImGui::Selectable(f[k].name, k == p->group_field)) {
                p->group_field = k;
            }
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(70.0f);
    ImGui::InputDouble("##value", &p->group_value, 0.0, 0.0, "%.4g");
    ImGui::SameLine();
    const int count = gedit_count_matches(p->e, p->group);
    char label[48];
    snprintf(label, sizeof label, "set %d joint%s", count, count == 1 ? "" : "s");
    ImGui::BeginDisabled(count == 0);
    if (ImGui::Button(label)) {
        gedit_set(p->e, p->group, f[p->group_field].name, p->group_value, false);
    }
    ImGui::EndDisabled();
}

void file_section(panel* p) {
    const char* path = source_gains_path(p->src);
    const bool dirty = gedit_dirty(p->e);
    ImGui::Text("%s%s", path ? path : "(gains of gains init: no file)", dirty ? "  *" : "");
    if (dirty) {
        ImGui::SameLine();
        ImGui::TextColored(ERROR_COLOUR, "unsaved");
    }
    ImGui::BeginDisabled(!gedit_can_undo(p->e));
    if (ImGui::Button("undo")) {
        gedit_undo(p->e);
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!gedit_can_redo(p->e));
    if (ImGui::Button("redo")) {
        gedit_redo(p->e);
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("save to")) {
        gedit_save(p->e, p->save_path);
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::InputText("##path", p->save_path, sizeof p->save_path);
    if (gedit_conflict(p->e)) {
        ImGui::Separator();
        ImGui::TextColored(ERROR_COLOUR, "The file changed on disk; the edits here are unsaved.");
        if (ImGui::Button("keep my edits")) {
            gedit_keep_edits(p->e);
        }
        ImGui::SameLine();
        if (ImGui::Button("take the file's")) {
            gedit_take_file(p->e);
        }
    }
    bool error = false;
    const char* msg = gedit_message(p->e, &error);
    if (msg[0]) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(error ? ERROR_COLOUR : OK_COLOUR, "%s", msg);
        ImGui::PopTextWrapPos();
    }
}

void gains_window(panel* p, float x, float y, float w, float h) {
    ImGui::SetNextWindowPos(ImVec2(x, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(w, h), ImGuiCond_Always);
    char title[64];
    snprintf(title, sizeof title, "gains%s###gains", gedit_dirty(p->e) ? " *" : "");
    if (!ImGui::Begin(title, &p->open, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                           ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    file_section(p);
    ImGui::Separator();
    joint_section(p);
    if (ImGui::CollapsingHeader("group edit")) {
        group_section(p);
    }
    if (ImGui::CollapsingHeader("root", ImGuiTreeNodeFlags_DefaultOpen)) {
        fields_table(p, "root", GEDIT_ROOT, "root", 0);
    }
    if (ImGui::CollapsingHeader("defaults")) {
        fields_table(p, "defaults", GEDIT_DEFAULTS, "defaults", 0);
    }
    if (ImGui::CollapsingHeader("take")) {
        fields_table(p, "take", GEDIT_TAKE, "take", 0);
    }
    ImGui::End();
}

/* A plot of y(frame) over [0, duration] in the next `h` pixels of the window, with the hits'
 * times and the time shown marked. */
struct series {
    const fb_sim* sim;
    int hit;           /* the hit whose struck body's deviation is plotted; -1: the MPJPE */
    fb_root_mode root; /* which deviation: source_hit_err */
};

double series_value(const series& s, int f) {
    if (s.hit < 0) {
        int nf = 0;
        return fb_sim_frames(s.sim, &nf)[f].metrics.mpjpe;
    }
    return source_hit_err(s.sim, s.root, f)[s.hit];
}

void plot(const series& s, double duration, double now, float h, ImU32 colour,
          const char* label) {
    int nf = 0;
    const fb_sim_frame* fr = fb_sim_frames(s.sim, &nf);
    double top = 0.01; /* m: at least 1 cm full scale */
    for (int f = 0; f < nf; f++) {
        top = fmax(top, series_value(s, f));
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x;
    const ImVec2 p1(p0.x + w, p0.y + h);
    dl->AddRectFilled(p0, p1, IM_COL32(20, 20, 24, 200));
    const auto X = [&](double t) { return p0.x + (float)(t / duration) * w; };
    const auto Y = [&](double v) { return p1.y - (float)(v / top) * (h - 4.0f); };
    const int nb = fb_sim_nball(s.sim);
    const fb_hit_result* hr = fb_sim_hits(s.sim);
    for (int k = 0; k < nb; k++) {
        const double t = hr[k].touched ? hr[k].contact_time : hr[k].hit.time;
        dl->AddLine(ImVec2(X(t), p0.y), ImVec2(X(t), p1.y), HIT_COLOUR,
                    k == s.hit ? 2.0f : 1.0f);
    }
    ImVec2 prev(0.0f, 0.0f);
    for (int f = 0; f < nf; f++) {
        const ImVec2 q(X(fr[f].time), Y(series_value(s, f)));
        if (f > 0) {
            dl->AddLine(prev, q, colour, 1.5f);
        }
        prev = q;
    }
    dl->AddLine(ImVec2(X(now), p0.y), ImVec2(X(now), p1.y), NOW_COLOUR);
    char text[160];
    snprintf(text, sizeof text, "%s: %.1f cm full scale", label, 100.0 * top);
    dl->AddText(ImVec2(p0.x + 4.0f, p0.y + 2.0f), IM_COL32(230, 230, 230, 255), text);
    snprintf(text, sizeof text, "0 - %.1f s", duration);
    const ImVec2 ts = ImGui::CalcTextSize(text);
    dl->AddText(ImVec2(p1.x - ts.x - 4.0f, p1.y - ts.y - 2.0f), IM_COL32(160, 160, 165, 255),
                text);
    ImGui::Dummy(ImVec2(w, h));
}

void plots_window(panel* p, double now, float x, float y, float w, float h) {
    const fb_sim* sim = source_sim(p->src);
    if (!sim) {
        return;
    }
    ImGui::SetNextWindowPos(ImVec2(x, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(w, h), ImGuiCond_Always);
    if (!ImGui::Begin("take###plots", nullptr, ImGuiWindowFlags_NoMove |
                                                   ImGuiWindowFlags_NoResize |
                                                   ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    /* the take so far, on a time axis that grows with it (at least PLOT_SPAN_MIN s) */
    const double duration =
        fmin(source_get_info(p->src)->duration, fmax(PLOT_SPAN_MIN, 1.15 * now));
    const float ph = (ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y) * 0.5f;
    const fb_root_mode root = source_gains(p->src)->root.mode;
    plot(series{sim, -1, root}, duration, now, ph, MPJPE_COLOUR, "MPJPE");
    const int nb = fb_sim_nball(sim);
    if (nb > 0) {
        const fb_hit_result* r = &fb_sim_hits(sim)[nb - 1];
        char label[128];
        snprintf(label, sizeof label, "hit %d, %.40s off the clip%s", nb, r->hit.target,
                 root == FB_ROOT_KINEMATIC ? "" : " (root-relative)");
        plot(series{sim, nb - 1, root}, duration, now, ph, DEV_COLOUR, label);
    } else {
        ImGui::TextColored(DIM_COLOUR, "no hits yet: click the character to throw a ball");
    }
    ImGui::End();
}

} // namespace

extern "C" void panel_frame(panel* p, double time, int w, int h) {
    if (!p) {
        return;
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    if (p->open) {
        const ImVec2 size = ImGui::GetIO().DisplaySize;
        const float s = h > 720 ? (float)h / 720.0f : 1.0f;
        (void)w;
        ImGui::GetIO().FontGlobalScale = s;
        const float pw = PANEL_W * s, ph = PLOT_H * s, m = MARGIN * s;
        const float bottom = size.y - TIMELINE_CLEAR * s;
        gains_window(p, size.x - pw - m, m, pw, bottom - ph - 2.0f * m);
        plots_window(p, time, size.x - pw - m, bottom - ph, pw, ph);
    }
    ImGui::Render();
    p->drawn = true;
}

extern "C" void panel_draw(panel* p) {
    if (p && p->drawn && p->open) {
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    }
}
