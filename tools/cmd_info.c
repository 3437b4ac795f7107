/* featherbone info: what a clip holds and the character built from it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clip_args.h"
#include "commands.h"

/* degrees per radian, for display */
#define RAD_TO_DEG 57.29577951308232

static const char USAGE[] =
    "usage: featherbone info CLIP [options]\n"
    "\n"
    "Prints the clip's skeleton (joints, channels and rotation orders), frames and rate, the\n"
    "detected length unit, up axis and meaning of non-root position channels, and the\n"
    "character built from it: joint types, DOF, per-body mass and shape, total mass, height,\n"
    "estimated hinge axes, and any warnings.\n"
    "\n";

/* Short channel names: Xp Yp Zp Xr Yr Zr. */
static void channel_list(const fb_clip_joint* j, char* buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "%d", j->nchan);
    for (int k = 0; k < j->nchan && n < cap; k++) {
        const char* name = fb_channel_name(j->chan[k]);
        n += (size_t)snprintf(buf + n, cap - n, " %c%c", name[0], j->chan[k] <= FB_CH_ZPOS ? 'p' : 'r');
    }
}

static const char* joint_word(fb_joint_type t, fb_joint_role role) {
    if (role == FB_ROLE_DROPPED) {
        return "dropped";
    }
    switch (t) {
    case FB_JOINT_FLOATING:
        return "floating";
    case FB_JOINT_SPHERICAL:
        return "ball";
    case FB_JOINT_REVOLUTE:
        return "hinge";
    case FB_JOINT_PRISMATIC:
        return "slider";
    case FB_JOINT_FIXED:
        return "fixed";
    }
    return "?";
}

static void shape_text(const fb_model* m, int b, char* buf, size_t cap) {
    snprintf(buf, cap, "-");
    for (int s = 0; s < m->nshape; s++) {
        const fb_shape* sh = &m->shape[s];
        if (sh->body != b) {
            continue;
        }
        if (sh->type == FB_SHAPE_CAPSULE) {
            const double L = sqrt(pow(sh->p1.x - sh->p0.x, 2) + pow(sh->p1.y - sh->p0.y, 2) +
                                  pow(sh->p1.z - sh->p0.z, 2));
            snprintf(buf, cap, "capsule r %.3f len %.3f", sh->radius, L);
        } else if (sh->type == FB_SHAPE_SPHERE) {
            snprintf(buf, cap, "sphere r %.3f", sh->radius);
        } else {
            snprintf(buf, cap, "box %.3f x %.3f x %.3f", sh->size.x, sh->size.y, sh->size.z);
        }
    }
}

static void print_info(const clip_args* a, const fb_clip* c, const fb_character* ch) {
    const fb_model* m = ch->model;
    int nend = 0, counts[5] = {0};
    for (int i = 0; i < c->njoint; i++) {
        nend += c->joint[i].has_end;
        counts[m->jtype[ch->body_of_joint[i]]]++;
    }
    printf("clip       %s (%s)\n", c->source, c->format);
    printf("skeleton   %d joints, %d End Sites, %d channels; root %s\n", c->njoint, nend,
           c->nchan, c->joint[0].name);
    printf("frames     %d at %.6g fps (frame time %.9g s), %.3f s", c->nframe,
           1.0 / c->frame_time, c->frame_time, c->nframe * c->frame_time);
    if (c->declared_frames != c->nframe) {
        printf("; the file declares %d", c->declared_frames);
    }
    printf("\nunits      %s: %.6g m per file unit; rest height %.4g units = %.3f m\n",
           c->unit_name, c->unit, c->height_file, c->height_file * c->unit);
    printf("up axis    %s%s\n", c->up == FB_UP_Z ? "Z (rotated to Y up)" : "Y",
           a->clip_opts.up == FB_UP_AUTO ? " (detected)" : " (given)");
    printf("positions  non-root position channels: %s%s\n", fb_pos_mode_name(c->pos_mode),
           (c->pos_mode != FB_POS_AUTO && a->clip_opts.pos_mode == FB_POS_AUTO) ? " (detected)"
                                                                               : "");
    printf("character  %d bodies, %d DOF: %d floating, %d ball, %d hinge, %d fixed; "
           "rules %s\n",
           m->nbody - 1, m->nv, counts[FB_JOINT_FLOATING], counts[FB_JOINT_SPHERICAL],
           counts[FB_JOINT_REVOLUTE], counts[FB_JOINT_FIXED],
           a->lossless ? "lossless (--lossless)" : (a->rules_path ? a->rules_path : "bundled"));
    printf("mass       %.2f kg (%s%s), height %.3f m\n", fb_model_mass(m),
           a->build.mass_model == FB_MASS_ANTHROPOMETRIC ? "anthropometric, de Leva 1996"
                                                         : "shapes at the rules' density",
           a->build.mass > 0.0 && a->build.mass_model == FB_MASS_DENSITY ? ", scaled to --mass"
                                                                         : "",
           ch->height);
    printf("\n%-26s %-22s %-8s %3s %8s  %s\n", "joint", "channels", "joint", "dof", "mass_kg",
           "shape");
    for (int i = 0; i < c->njoint; i++) {
        const int b = ch->body_of_joint[i];
        int depth = 0;
        for (int p = c->joint[i].parent; p >= 0; p = c->joint[p].parent) {
            depth++;
        }
        char name[96], chans[64], shape[64];
        snprintf(name, sizeof name, "%*s%s", 2 * depth, "", c->joint[i].name);
        channel_list(&c->joint[i], chans, sizeof chans);
        shape_text(m, b, shape, sizeof shape);
        printf("%-26s %-22s %-8s %3d %8.3f  %s\n", name, chans,
               joint_word(m->jtype[b], ch->role[i]), m->jnv[b], m->I[b].m, shape);
    }
    bool any_hinge = false;
    for (int i = 0; i < c->njoint; i++) {
        const int b = ch->body_of_joint[i];
        if (m->jtype[b] == FB_JOINT_REVOLUTE && ch->hinge[i].axis.x + ch->hinge[i].axis.y +
                                                        ch->hinge[i].axis.z != 0.0) {
            if (!any_hinge) {
                printf("\nhinges (axis in the joint frame; rotation off it is lost)\n");
                any_hinge = true;
            }
            const fb_v3 ax = ch->hinge[i].axis;
            printf("  %-22s axis (%6.3f %6.3f %6.3f), off-axis up to %.1f deg\n",
                   c->joint[i].name, ax.x, ax.y, ax.z, ch->hinge[i].max_off_axis * RAD_TO_DEG);
        }
    }
    const int nw = c->nwarn + ch->nwarn;
    if (nw > 0) {
        printf("\nwarnings (%d)\n", nw);
        for (int k = 0; k < c->nwarn && k < FB_CLIP_MAX_WARN; k++) {
            printf("  - %s\n", c->warn[k]);
        }
        for (int k = 0; k < ch->nwarn && k < FB_CLIP_MAX_WARN; k++) {
            printf("  - %s\n", ch->warn[k]);
        }
    }
}

int cmd_info(int argc, char** argv) {
    clip_args a;
    clip_args_init(&a);
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("%s%s\n%s", USAGE, CLIP_ARGS_HELP, CHARACTER_ARGS_HELP);
            return EXIT_OK;
        }
        const int took = clip_args_take(&a, argc, argv, &i, true);
        if (took < 0) {
            return EXIT_USAGE;
        }
        if (took == 0) {
            if (argv[i][0] == '-' || a.clip) {
                fprintf(stderr, "featherbone info: unexpected argument '%s'\n%s", argv[i], USAGE);
                return EXIT_USAGE;
            }
            a.clip = argv[i];
        }
    }
    fb_clip* c;
    fb_character* ch;
    const int rc = clip_args_load(&a, true, &c, &ch);
    if (rc != EXIT_OK) {
        return rc;
    }
    print_info(&a, c, ch);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
    return EXIT_OK;
}
