/* featherbone-view: the clip-playback source. The character is built from the clip as the
 * featherbone CLI builds it (tools/clip_args.c: bundled rules, detected units), and posed by
 * interpolating the clip's motion at its own rate. There is no physics: the ghost is the same
 * pose, there are no balls, and the contacts are the shapes near the ground, each given an
 * even share of the body weight so the arrows have something to show (said on the HUD). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

/* Shapes within this distance of the ground (m) are shown as touching it: mocap feet hover
 * and sink by about this much. */
#define GROUND_MARGIN 0.03
#define MAX_CONTACTS 64
/* Room left around the character's path in the framing box (m). */
#define BOUNDS_PAD 0.15

struct source {
    fb_clip* clip;
    fb_character* ch;
    fb_motion* mo;
    fb_data* d;     /* the shown pose */
    fb_data* ghost; /* the reference pose: the same, here */
    double* v;      /* (nv) scratch for interpolation */
    fb_rules rules;
    fb_contact contact[MAX_CONTACTS];
    double force[MAX_CONTACTS];
    const fb_model* art_model[1];
    const fb_data* art_data[1];
    source_view view;
    source_info info;
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

/* The box every body origin passes through over the clip, padded, with the ground in it. */
static void clip_bounds(source* s) {
    const fb_model* m = s->ch->model;
    fb_v3 lo = {1e300, 0.0, 1e300}, hi = {-1e300, -1e300, -1e300};
    for (int f = 0; f < s->mo->nframe; f++) {
        memcpy(s->d->q, s->mo->q + (size_t)f * m->nq, (size_t)m->nq * sizeof(double));
        fb_kinematics_pos(m, s->d);
        for (int b = 1; b < m->nbody; b++) {
            const fb_v3 p = fb_point_pos(m, s->d, b, (fb_v3){0.0, 0.0, 0.0});
            lo = (fb_v3){fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z)};
            hi = (fb_v3){fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z)};
        }
    }
    s->info.lo = (fb_v3){lo.x - BOUNDS_PAD, fmin(lo.y, 0.0), lo.z - BOUNDS_PAD};
    s->info.hi = (fb_v3){hi.x + BOUNDS_PAD, hi.y + BOUNDS_PAD, hi.z + BOUNDS_PAD};
}

source* source_open(const source_opts* o, fb_error* err) {
    source* s = calloc(1, sizeof *s);
    if (!s) {
        if (err) {
            *err = (fb_error){FB_ENOMEM, "out of memory"};
        }
        return NULL;
    }
    fb_clip_opts copts = fb_default_clip_opts();
    copts.scale = o->scale;
    fb_build_opts bopts = fb_default_build_opts();
    char buf[1024];
    if (!o->lossless) {
        if (fb_rules_load(rules_path(o, buf, sizeof buf), &s->rules, err) != FB_OK) {
            source_close(s);
            return NULL;
        }
        bopts.rules = &s->rules;
    }
    s->clip = fb_clip_load(o->clip, &copts, NULL, err);
    s->ch = s->clip ? fb_character_build(s->clip, &bopts, err) : NULL;
    s->mo = s->ch ? fb_motion_from_clip(s->clip, s->ch, 0.0, 0, 0, err) : NULL;
    s->d = s->mo ? fb_data_create(s->ch->model, NULL, err) : NULL;
    s->ghost = s->d ? fb_data_create(s->ch->model, NULL, err) : NULL;
    s->v = s->ghost ? calloc((size_t)s->ch->model->nv + 1, sizeof *s->v) : NULL;
    if (!s->v) {
        if (s->ghost && err) {
            *err = (fb_error){FB_ENOMEM, "out of memory"};
        }
        source_close(s);
        return NULL;
    }
    s->info.nframe = s->mo->nframe;
    s->info.frame_time = s->mo->dt;
    s->info.duration = (s->mo->nframe - 1) * s->mo->dt;
    const char* base = strrchr(o->clip, '/');
    snprintf(s->info.name, sizeof s->info.name, "%s", base ? base + 1 : o->clip);
    clip_bounds(s);

    s->art_model[0] = s->ch->model;
    s->art_data[0] = s->d;
    s->view = (source_view){.model = s->ch->model,
                            .data = s->d,
                            .ghost = s->ghost,
                            .contact = s->contact,
                            .contact_force = s->force,
                            .art_model = s->art_model,
                            .art_data = s->art_data,
                            .nart = 1};
    if (source_advance_to(s, 0.0, err) != FB_OK) {
        source_close(s);
        return NULL;
    }
    return s;
}

void source_close(source* s) {
    if (!s) {
        return;
    }
    free(s->v);
    fb_data_destroy(s->ghost);
    fb_data_destroy(s->d);
    fb_motion_destroy(s->mo);
    fb_character_destroy(s->ch);
    fb_clip_destroy(s->clip);
    free(s);
}

/* Ground contacts of the pose, each carrying an even share of the weight. */
static void ground_contacts(source* s) {
    const fb_model* m = s->ch->model;
    int n = 0;
    /* a full list still shows the first MAX_CONTACTS: the status only says more would not fit */
    (void)fb_collide_plane(m, s->d, 0, fb_ground_plane(), GROUND_MARGIN, s->contact, &n,
                           MAX_CONTACTS, NULL);
    const double g = fabs(m->opt.gravity.y);
    for (int k = 0; k < n; k++) {
        s->force[k] = fb_model_mass(m) * g / n;
    }
    s->view.ncontact = n;
    snprintf(s->view.line[1], SOURCE_LINE_MAX, "ground contacts %d (weight shared evenly)", n);
}

fb_status source_advance_to(source* s, double t, fb_error* err) {
    (void)err; /* playback cannot fail */
    const fb_model* m = s->ch->model;
    t = fmin(fmax(t, 0.0), s->info.duration);
    /* between frames i and i+1: q = q_i (+) a (q_{i+1} (-) q_i), the geodesic on every joint */
    const double f = t / s->mo->dt;
    int i = (int)floor(f);
    double a = f - i;
    if (i >= s->mo->nframe - 1) {
        i = s->mo->nframe - 1;
        a = 0.0;
    }
    const double* q0 = s->mo->q + (size_t)i * m->nq;
    if (a > 0.0) {
        fb_difference(m, q0, q0 + m->nq, s->v);
        fb_integrate(m, q0, s->v, a, s->d->q);
    } else {
        memcpy(s->d->q, q0, (size_t)m->nq * sizeof(double));
    }
    s->d->time = t;
    fb_kinematics_pos(m, s->d);
    memcpy(s->ghost->q, s->d->q, (size_t)m->nq * sizeof(double));
    s->ghost->time = t;
    fb_kinematics_pos(m, s->ghost);

    s->view.time = t;
    s->view.frame = (int)floor(f + 0.5) < s->mo->nframe ? (int)floor(f + 0.5) : s->mo->nframe - 1;
    snprintf(s->view.line[0], SOURCE_LINE_MAX, "clip playback: no physics yet (ghost = clip)");
    ground_contacts(s);
    return FB_OK;
}

const source_view* source_get_view(const source* s) {
    return &s->view;
}

const source_info* source_get_info(const source* s) {
    return &s->info;
}

bool source_throw(source* s, fb_v3 from, fb_v3 vel) {
    (void)s;
    (void)from;
    (void)vel;
    return false;
}
