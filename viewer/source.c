/* featherbone-view: source.h's calls, dispatched to the simulation (source_sim.c) or to clip
 * playback (source_clip.c); the loading both share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source_impl.h"

/* Room left around the character's path in the framing box (m). */
#define BOUNDS_PAD 0.15

struct source {
    void* impl;
    const source_ops* ops;
};

/* The bundled rules: $FEATHERBONE_DATA/character_rules.json, else the source tree's data/. */
static const char* rules_path(const source_opts* o, char* buf, size_t cap) {
    if (o->rules) {
        return o->rules;
    }
    const char* dir = getenv("FEATHERBONE_DATA");
    snprintf(buf, cap, "%s/character_rules.json", (dir && dir[0]) ? dir : FB_DATA_DIR);
    return buf;
}

fb_status source_load(const source_opts* o, fb_rules* rules, fb_clip** clip, fb_character** ch,
                      fb_error* err) {
    fb_clip_opts copts = fb_default_clip_opts();
    copts.scale = o->scale;
    fb_build_opts bopts = fb_default_build_opts();
    char buf[1024];
    *clip = NULL;
    *ch = NULL;
    if (!o->lossless) {
        const fb_status s = fb_rules_load(rules_path(o, buf, sizeof buf), rules, err);
        if (s != FB_OK) {
            return s;
        }
        bopts.rules = rules;
    }
    *clip = fb_clip_load(o->clip, &copts, NULL, err);
    *ch = *clip ? fb_character_build(*clip, &bopts, err) : NULL;
    if (!*ch) {
        fb_clip_destroy(*clip);
        *clip = NULL;
        return err ? err->code : FB_EINVAL;
    }
    return FB_OK;
}

void source_name(const char* path, char* out, size_t cap) {
    const char* base = strrchr(path, '/');
    snprintf(out, cap, "%s", base ? base + 1 : path);
}

void source_bounds(const fb_model* m, const double* q, int nframe, fb_data* d, fb_v3* lo_out,
                   fb_v3* hi_out) {
    fb_v3 lo = {1e300, 0.0, 1e300}, hi = {-1e300, -1e300, -1e300};
    for (int f = 0; f < nframe; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, d);
        for (int b = 1; b < m->nbody; b++) {
            const fb_v3 p = fb_point_pos(m, d, b, (fb_v3){0.0, 0.0, 0.0});
            lo = (fb_v3){fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z)};
            hi = (fb_v3){fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z)};
        }
    }
    *lo_out = (fb_v3){lo.x - BOUNDS_PAD, fmin(lo.y, 0.0), lo.z - BOUNDS_PAD};
    *hi_out = (fb_v3){hi.x + BOUNDS_PAD, hi.y + BOUNDS_PAD, hi.z + BOUNDS_PAD};
}

source* source_open(const source_opts* opts, fb_error* err) {
    source* s = calloc(1, sizeof *s);
    if (!s) {
        if (err) {
            *err = (fb_error){FB_ENOMEM, "out of memory"};
        }
        return NULL;
    }
    s->impl = opts->playback ? source_clip_open(opts, &s->ops, err)
                             : source_sim_open(opts, &s->ops, err);
    if (!s->impl) {
        free(s);
        return NULL;
    }
    return s;
}

void source_close(source* s) {
    if (s) {
        s->ops->close(s->impl);
        free(s);
    }
}

fb_status source_advance_to(source* s, double t, fb_error* err) {
    return s->ops->advance_to(s->impl, t, err);
}

const source_view* source_get_view(const source* s) {
    return s->ops->view(s->impl);
}

const source_info* source_get_info(const source* s) {
    return s->ops->info(s->impl);
}

bool source_throw(source* s, const source_throw_spec* t, char* msg, size_t cap) {
    return s->ops->throw_ball(s->impl, t, msg, cap);
}

void source_clear_throws(source* s, char* msg, size_t cap) {
    s->ops->clear_throws(s->impl, msg, cap);
}

bool source_poll(source* s) {
    return s->ops->poll(s->impl);
}

bool source_export(source* s, const char* prefix, char* msg, size_t cap) {
    return s->ops->export_take(s->impl, prefix, msg, cap);
}

double source_step_rtf(const source* s) {
    return s->ops->step_rtf(s->impl);
}

const fb_gains* source_gains(const source* s) {
    return s->ops->gains ? s->ops->gains(s->impl) : NULL;
}

const char* source_gains_path(const source* s) {
    return s->ops->gains_path ? s->ops->gains_path(s->impl) : NULL;
}

bool source_set_gains(source* s, const fb_gains* g, char* msg, size_t cap) {
    if (!s->ops->set_gains) {
        snprintf(msg, cap, "clip playback has no gains");
        return false;
    }
    return s->ops->set_gains(s->impl, g, msg, cap);
}

bool source_save_gains(source* s, const char* path, char* msg, size_t cap) {
    if (!s->ops->save_gains) {
        snprintf(msg, cap, "clip playback has no gains");
        return false;
    }
    return s->ops->save_gains(s->impl, path, msg, cap);
}

void source_hold_reloads(source* s, bool hold) {
    if (s->ops->hold_reloads) {
        s->ops->hold_reloads(s->impl, hold);
    }
}

const fb_gains* source_pending_gains(const source* s) {
    return s->ops->pending_gains ? s->ops->pending_gains(s->impl) : NULL;
}

void source_drop_pending(source* s, bool taken) {
    if (s->ops->drop_pending) {
        s->ops->drop_pending(s->impl, taken);
    }
}

const fb_sim* source_sim(const source* s) {
    return s->ops->sim ? s->ops->sim(s->impl) : NULL;
}

const double* source_hit_err(const fb_sim* sim, fb_root_mode root, int frame) {
    return root == FB_ROOT_KINEMATIC ? fb_sim_frame_hit_err(sim, frame)
                                     : fb_sim_frame_hit_err_root(sim, frame);
}
