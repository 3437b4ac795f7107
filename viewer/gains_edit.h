/* featherbone-view: editing the gains in the window. The gains panel's model, and the path
 * every edit takes, from the panel's widgets and from --script's `gain` alike (no GL, no
 * ImGui here: viewer/panel.cpp draws it, tests/test_viewer_source checks it).
 *
 * The editor keeps the gains in force (those of the source, source.h), the gains as last
 * loaded or saved (so it knows when there are unsaved edits: the dirty mark), and the states
 * before each edit (undo) and after each undo (redo). An edit is checked as the gains file's
 * reader checks it (a finite number in the field's range, an enum's names) and refused with a
 * message otherwise, the previous value kept; an accepted one restarts the take with the new
 * gains and replays it to the time shown, as a reload of the file does.
 *
 * How an edit reads in the file: a joint's field is set through a rule for exactly the
 * pattern edited (a joint's name, or a glob such as `Left*` for a group edit). The rule of
 * that pattern is changed in place when there is one and that gives the wanted gains;
 * otherwise a new rule with only that field is added at the end (rules apply in file order);
 * a rule that a later one overrides is moved to the end when that changes nothing else. Each
 * candidate is resolved against the model (fb_gains_resolve) and taken only when exactly the
 * joints the pattern names have the new value and every other gain of every joint is as it
 * was. So an edit of one joint in a `gains init` file changes one number of the file. */
#ifndef FB_VIEW_GAINS_EDIT_H
#define FB_VIEW_GAINS_EDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"

/* What a field belongs to: the top of the file (rate, controller, pd_form), the root, the
 * defaults every joint falls back to, or joints (a name or a glob). */
typedef enum gedit_scope { GEDIT_TAKE = 0, GEDIT_ROOT, GEDIT_DEFAULTS, GEDIT_JOINT } gedit_scope;

/* The controllers a joint field matters to (the panel shows only those of the one in force). */
enum {
    GEDIT_FOR_ACCEL = 1u << 0,
    GEDIT_FOR_PD_CLINE = 1u << 1,
    GEDIT_FOR_PD_PLAIN = 1u << 2,
    GEDIT_FOR_ALL = (1u << 3) - 1
};

/* One editable field. The tables (gedit_fields) drive the panel, the script and the checks:
 * a new gains field is one row. */
typedef struct gedit_field {
    const char* name;         /* the gains file's key */
    const char* unit;         /* "" when none */
    const char* help;         /* one line for the panel's tooltip */
    size_t offset;            /* of the value: in fb_joint_gains (joint fields, also the
                                 defaults), else in fb_gains */
    unsigned bit;             /* FB_GAIN_* of joint fields, else 0 */
    const char* const* names; /* an enum's value names, in enum order (NULL: a number) */
    int nnames;
    double lo, hi;            /* accepted range */
    bool lo_open;             /* lo itself is refused (> lo) */
    unsigned shown;           /* GEDIT_FOR_*: the controllers it matters to */
    double speed;             /* the panel's drag: change per pixel, relative to the value */
} gedit_field;

/* The fields of a scope (GEDIT_DEFAULTS has the joint fields), n of them. */
const gedit_field* gedit_fields(gedit_scope scope, int* n);

/* Whether a field matters to the controller of g. */
bool gedit_field_shown(const gedit_field* f, const fb_gains* g);

/* The name with Left and Right swapped (also left/right, LEFT/RIGHT, and a leading L or R
 * before an upper-case letter or '_'); false when it names no side. */
bool gedit_mirror_name(const char* name, char* out, size_t cap);

typedef struct gedit gedit;

/* An editor of the source's gains; NULL when the source has none (clip playback) or out of
 * memory. The source must outlive it. */
gedit* gedit_create(source* src);
void gedit_destroy(gedit* e);

/* The gains in force, and as last loaded or saved. */
const fb_gains* gedit_gains(const gedit* e);
bool gedit_dirty(const gedit* e);

/* Sets `field` of `target` to value: target is "take", "root", "defaults", or a joint's name
 * or a glob of them (keywords win over joints of those names). With mirror on, a joint edit
 * also sets the mirrored joints (gedit_mirror_name). merge: a continued drag of the same field
 * of the same target, one undo step with the edit before it. False when refused; the message
 * (gedit_message) says why in either case. */
bool gedit_set(gedit* e, const char* target, const char* field, double value, bool merge);

/* gedit_set from text: a number, or an enum's value name. */
bool gedit_set_text(gedit* e, const char* target, const char* field, const char* text);

bool gedit_undo(gedit* e);
bool gedit_redo(gedit* e);
bool gedit_can_undo(const gedit* e);
bool gedit_can_redo(const gedit* e);

/* Writes the gains in force to path (NULL: the watched file), whole or not at all, with the
 * library's writer. */
bool gedit_save(gedit* e, const char* path);

/* Takes in what the source did on its own (a reload of the watched file): called after
 * source_poll. A reload is one more undo step. */
void gedit_sync(gedit* e);

/* The watched file changed on disk while the edits were unsaved (source_pending_gains):
 * take the file's gains (the edits stay one undo away) or keep the edits. */
bool gedit_conflict(const gedit* e);
bool gedit_take_file(gedit* e);
void gedit_keep_edits(gedit* e);

/* The joint whose gains move body b: b or its nearest ancestor with degrees of freedom
 * (-1: none). gedit_select_body selects it; gedit_select_name a joint by name. */
int gedit_joint_of_body(const gedit* e, int body);
void gedit_select_body(gedit* e, int body);
bool gedit_select_name(gedit* e, const char* name);
int gedit_selected(const gedit* e);

/* The value of a field (of a scope; of `body`'s joint for GEDIT_JOINT) in force; *rule the
 * index of the rule that gives a joint's (-1: the defaults). */
double gedit_value(const gedit* e, gedit_scope scope, const gedit_field* f, int body, int* rule);

/* Joints (with degrees of freedom) a pattern names. */
int gedit_count_matches(const gedit* e, const char* pattern);

void gedit_set_mirror(gedit* e, bool on);
bool gedit_mirror(const gedit* e);

/* The last edit's, undo's or save's message; *error when it was a refusal or a failure. */
const char* gedit_message(const gedit* e, bool* error);

/* The model the gains are for. */
const fb_model* gedit_model(const gedit* e);

#endif /* FB_VIEW_GAINS_EDIT_H */
