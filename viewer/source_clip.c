/* featherbone-view: the clip-playback source (--playback). The character is built from the
 * clip as the featherbone CLI builds it (bundled rules, detected units), and posed by
 * interpolating the clip's motion at its own rate. There is no physics: the ghost is the same
 * pose, there are no balls, and the contacts are the shapes near the ground, each given an
 * even share of the body weight so the arrows have something to show (said on the HUD). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source_impl.h"

/* Shapes within this distance of the ground (m) are shown as touching it: mocap feet hover
 * and sink by about this much. */
#define GROUND_MARGIN 0.03
#define MAX_CONTACTS 64

typedef struct clip_source {
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
} clip_source;

static void clip_close(void* impl);
static fb_status clip_advance_to(void* impl, double t, fb_error* err);

static const source_view* clip_view(const void* impl) {
    return &((const clip_source*)impl)->view;
}

static const source_info* clip_info(const void* impl) {
    return &((const clip_source*)impl)->info;
}

static bool clip_throw(void* impl, const source_throw_spec* t, char* msg, size_t cap) {
    (void)impl;
    (void)t;
    snprintf(msg, cap, "clip playback has no physics: no balls (run without --playback)");
    return false;
}

static void clip_clear_throws(void* impl, char* msg, size_t cap) {
    (void)impl;
    snprintf(msg, cap, "no balls in clip playback");
}

static bool clip_poll(void* impl) {
    (void)impl;
    return false;
}

static bool clip_export(void* impl, const char* prefix, char* msg, size_t cap) {
    (void)impl;
    (void)prefix;
    snprintf(msg, cap, "clip playback: nothing simulated to export (run without --playback)");
    return false;
}

static double clip_step_rtf(const void* impl) {
    (void)impl;
    return 0.0;
}

/* no gains: the gains calls of source.h say so */
static const source_ops CLIP_OPS = {.close = clip_close,
                                    .advance_to = clip_advance_to,
                                    .view = clip_view,
                                    .info = clip_info,
                                    .throw_ball = clip_throw,
                                    .clear_throws = clip_clear_throws,
                                    .poll = clip_poll,
                                    .export_take = clip_export,
                                    .step_rtf = clip_step_rtf};

void* source_clip_open(const source_opts* o, const source_ops** ops, fb_error* err) {
    clip_source* s = calloc(1, sizeof *s);
    if (!s) {
        if (err) {
            *err = (fb_error){FB_ENOMEM, "out of memory"};
        }
        return NULL;
    }
    *ops = &CLIP_OPS;
    if (source_load(o, &s->rules, &s->clip, &s->ch, err) != FB_OK) {
        clip_close(s);
        return NULL;
    }
    s->mo = fb_motion_from_clip(s->clip, s->ch, 0.0, 0, 0, err);
    s->d = s->mo ? fb_data_create(s->ch->model, NULL, err) : NULL;
    s->ghost = s->d ? fb_data_create(s->ch->model, NULL, err) : NULL;
    s->v = s->ghost ? calloc((size_t)s->ch->model->nv + 1, sizeof *s->v) : NULL;
    if (!s->v) {
        if (s->ghost && err) {
            *err = (fb_error){FB_ENOMEM, "out of memory"};
        }
        clip_close(s);
        return NULL;
    }
    s->info.nframe = s->mo->nframe;
    s->info.frame_time = s->mo->dt;
    s->info.duration = (s->mo->nframe - 1) * s->mo->dt;
    source_name(o->clip, s->info.name, sizeof s->info.name);
    source_bounds(s->ch->model, s->mo->q, s->mo->nframe, s->d, &s->info.lo, &s->info.hi);

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
    if (clip_advance_to(s, 0.0, err) != FB_OK) {
        clip_close(s);
        return NULL;
    }
    return s;
}

static void clip_close(void* impl) {
    clip_source* s = impl;
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
static void ground_contacts(clip_source* s) {
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

static fb_status clip_advance_to(void* impl, double t, fb_error* err) {
    (void)err; /* playback cannot fail */
    clip_source* s = impl;
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
    snprintf(s->view.line[0], SOURCE_LINE_MAX, "clip playback: no physics (ghost = clip)");
    ground_contacts(s);
    /* the balance overlay: the clip's centre of mass (no planner, no help, no fall) */
    s->view.balance = (source_balance){.com_known = true, .com = fb_com(m, s->d), .margin = NAN};
    return FB_OK;
}
