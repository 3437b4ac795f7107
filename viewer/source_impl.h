/* featherbone-view: what the two sources (source_sim.c, source_clip.c) give source.c, which
 * dispatches source.h's calls to them, and the loading they share. */
#ifndef FB_VIEW_SOURCE_IMPL_H
#define FB_VIEW_SOURCE_IMPL_H

#include "source.h"

typedef struct source_ops {
    void (*close)(void* impl);
    fb_status (*advance_to)(void* impl, double t, fb_error* err);
    const source_view* (*view)(const void* impl);
    const source_info* (*info)(const void* impl);
    bool (*throw_ball)(void* impl, const source_throw_spec* t, char* msg, size_t cap);
    void (*clear_throws)(void* impl, char* msg, size_t cap);
    bool (*poll)(void* impl);
    bool (*export_take)(void* impl, const char* prefix, char* msg, size_t cap);
    double (*step_rtf)(const void* impl);
    /* gains: NULL for clip playback, which has none */
    const fb_gains* (*gains)(const void* impl);
    const char* (*gains_path)(const void* impl);
    bool (*set_gains)(void* impl, const fb_gains* g, char* msg, size_t cap);
    bool (*save_gains)(void* impl, const char* path, char* msg, size_t cap);
    void (*hold_reloads)(void* impl, bool hold);
    const fb_gains* (*pending_gains)(const void* impl);
    void (*drop_pending)(void* impl, bool taken);
    const fb_sim* (*sim)(const void* impl);
} source_ops;

/* The clip and its character as `featherbone info` builds them (the bundled rules unless
 * o->rules or --lossless; units detected unless o->scale). On failure everything is freed and
 * err says why. The rules must outlive the character: the caller keeps *rules. */
fb_status source_load(const source_opts* o, fb_rules* rules, fb_clip** clip, fb_character** ch,
                      fb_error* err);

/* The window title's clip name (the file name without its directory). */
void source_name(const char* path, char* out, size_t cap);

/* The box every body origin of the motion passes through, padded, with the ground in it;
 * d is scratch (its q is overwritten). */
void source_bounds(const fb_model* m, const double* q, int nframe, fb_data* d, fb_v3* lo,
                   fb_v3* hi);

void* source_clip_open(const source_opts* o, const source_ops** ops, fb_error* err);
void* source_sim_open(const source_opts* o, const source_ops** ops, fb_error* err);

#endif /* FB_VIEW_SOURCE_IMPL_H */
