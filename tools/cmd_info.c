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
    "detected length unit (and the evidence that decided it), up axis and meaning of non-root\n"
    "position channels, and the character built from it: joint types, DOF, per-body mass and\n"
    "shape, bones carried from position channels (bone_cm: length~largest deviation over the\n"
    "clip), total mass, height, estimated hinge axes, joint ranges (and where the clip widened\n"
    "them), and any warnings.\n"
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
    if (role == FB_ROLE_FOLDED) {
        return "folded";
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

/* Which evidence gave the standing height, and what the others read (docs/MOCAP.md). */
static void print_height_evidence(const fb_clip* c) {
    printf("           from %s; the rest pose %s (top to bottom %.2f of its two chains' "
           "length)\n",
           fb_height_from_name(c->height_from),
           c->height_from == FB_HEIGHT_REST ? "stands" : "does not stand", c->rest_upright);
    if (c->posed_upright > 0) {
        printf("           frames 0-%d: %d of %d stand upright, median height %.4g units\n",
               c->posed_frames - 1, c->posed_upright, c->posed_frames, c->posed_height_file);
    } else {
        printf("           frames 0-%d: none stands upright\n", c->posed_frames - 1);
    }
}

/* The position channels: their meaning, the bones the character carries from them (how many
 * agree with OFFSET, the most stretched), and the root folded away. */
static void print_positions(const clip_args* a, const fb_clip* c, const fb_character* ch) {
    printf("positions  non-root position channels: %s%s", fb_pos_mode_name(c->pos_mode),
           (c->pos_mode != FB_POS_AUTO && a->clip_opts.pos_mode == FB_POS_AUTO) ? " (detected)"
                                                                               : "");
    int bones = 0, agree = 0, worst = -1;
    for (int i = 0; i < c->njoint; i++) {
        const fb_bone_info* b = &ch->bone[i];
        if (b->from_channels) {
            bones++;
            agree += b->offset_agrees;
            worst = (worst < 0 || b->max_dev > ch->bone[worst].max_dev) ? i : worst;
        }
    }
    if (bones > 0) {
        printf("\n           %d joints carry them as bones (%d agree with OFFSET; the rest at "
               "their mean); the longest stretch: %s, %.2f cm",
               bones, agree, c->joint[worst].name, 100.0 * ch->bone[worst].max_dev);
    }
    if (!ch->articulated) {
        printf("\n           taken as free translations (--free-positions): the character is "
               "not articulated");
    }
    if (ch->root > 0) {
        printf("\n           the root '%s' never moves: folded away; the character's root is "
               "'%s'", c->joint[0].name, c->joint[ch->root].name);
    }
    putchar('\n');
}

/* Each joint's range: its kind, its share of a chain's range, and every bound; a bound the clip
 * went past shows by how much it was widened and at which frame. */
static void print_ranges(const fb_clip* c, const fb_character* ch) {
    bool any = false;
    for (int i = 0; i < c->njoint; i++) {
        const fb_joint_range* r = &ch->range[i];
        if (r->rule < 0) {
            continue;
        }
        if (!any) {
            printf("\nranges (deg: the rules' table times the joint's share of its chain, swing/"
                   "twist; \"+W@F\": widened by W to hold clip frame F)\n");
            any = true;
        }
        printf("  %-16s %-8s %4.2f/%4.2f ", c->joint[i].name, fb_range_kind_name(r->kind),
               r->share, r->twist_share);
        for (int k = 0; k < FB_RANGE_NBOUND; k++) {
            const char* name = fb_range_bound_name(r->kind, k);
            if (!name) {
                continue;
            }
            /* a symmetric pair (spine: lateral flexion either way) shares one name: "a/b" */
            const bool second =
                k % 2 == 1 && strcmp(name, fb_range_bound_name(r->kind, k - 1)) == 0;
            if (second) {
                printf("/%.1f", r->bound[k] * RAD_TO_DEG);
            } else {
                printf(" %s %.1f", name, r->bound[k] * RAD_TO_DEG);
            }
            if (r->widened[k] > 0.0) {
                const double w = r->widened[k] * RAD_TO_DEG;
                printf(" (+%.*f@%d)", w < 0.1 ? 2 : 1, w, r->frame[k]);
            }
        }
        printf("%s\n", r->capped ? " (capped at 175)" : "");
    }
}

static void print_info(const clip_args* a, const fb_clip* c, const fb_character* ch) {
    const fb_model* m = ch->model;
    int nend = 0, counts[5] = {0};
    for (int i = 0; i < c->njoint; i++) {
        nend += c->joint[i].has_end;
        counts[m->jtype[ch->body_of_joint[i]]] += ch->role[i] != FB_ROLE_FOLDED;
    }
    printf("clip       %s (%s)\n", c->source, c->format);
    printf("skeleton   %d joints, %d End Sites, %d channels; root %s\n", c->njoint, nend,
           c->nchan, c->joint[0].name);
    printf("frames     %d at %.6g fps (frame time %.9g s), %.3f s", c->nframe,
           1.0 / c->frame_time, c->frame_time, c->nframe * c->frame_time);
    if (c->declared_frames != c->nframe) {
        printf("; the file declares %d", c->declared_frames);
    }
    printf("\nunits      %s: %.6g m per file unit; standing height %.4g units = %.3f m\n",
           c->unit_name, c->unit, c->height_file, c->height_file * c->unit);
    print_height_evidence(c);
    printf("up axis    %s%s\n", c->up == FB_UP_Z ? "Z (rotated to Y up)" : "Y",
           a->clip_opts.up == FB_UP_AUTO ? " (detected)" : " (given)");
    print_positions(a, c, ch);
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
    /* passive damping and friction: the rules give every joint but the root the same */
    double damping = 0.0, friction = 0.0;
    for (int b = 1; b < m->nbody; b++) {
        damping = fmax(damping, m->damping[b]);
        friction = fmax(friction, m->friction[b]);
    }
    if (damping > 0.0) {
        printf("damping    %.3g N m s/rad on every joint but the root (passive: the rules' "
               "joint_damping)\n",
               damping);
    }
    if (friction > 0.0) {
        printf("friction   %.3g N m on every dof but the root's, where no controller holds it "
               "(passive: the rules' joint_friction)\n",
               friction);
    }
    if (ch->rolling_resistance > 0.0) {
        printf("rolling    %.3g m: a body on the ground at one or two points resists rolling up "
               "to that times its weight on each (the rules' rolling_resistance)\n",
               ch->rolling_resistance);
    }
    /* the bone column only where position channels give bones */
    bool any_bone = false;
    for (int i = 0; i < c->njoint; i++) {
        any_bone |= ch->bone[i].from_channels;
    }
    printf("\n%-26s %-22s %-8s %3s %8s%s  %s\n", "joint", "channels", "joint", "dof",
           "mass_kg", any_bone ? "  bone_cm" : "", "shape");
    for (int i = 0; i < c->njoint; i++) {
        const int b = ch->body_of_joint[i];
        int depth = 0;
        for (int p = c->joint[i].parent; p >= 0; p = c->joint[p].parent) {
            depth++;
        }
        char name[96], chans[64], shape[64], bone[48] = "";
        snprintf(name, sizeof name, "%*s%s", 2 * depth, "", c->joint[i].name);
        channel_list(&c->joint[i], chans, sizeof chans);
        shape_text(m, b, shape, sizeof shape);
        /* a bone from position channels: its length and how far the channels stray from it */
        if (ch->bone[i].from_channels) {
            char text[32];
            snprintf(text, sizeof text, "%.1f~%.1f", 100.0 * ch->bone[i].length,
                     100.0 * ch->bone[i].max_dev);
            snprintf(bone, sizeof bone, " %8s", text);
        } else if (any_bone) {
            snprintf(bone, sizeof bone, " %8s", "-");
        }
        const bool folded = ch->role[i] == FB_ROLE_FOLDED;
        printf("%-26s %-22s %-8s %3d %8.3f%s  %s\n", name, chans,
               joint_word(m->jtype[b], ch->role[i]), folded ? 0 : m->jnv[b],
               folded ? 0.0 : m->I[b].m, bone, folded ? "-" : shape);
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
            const fb_quat r = ch->hinge[i].rest;
            printf("  %-22s axis (%6.3f %6.3f %6.3f), off-axis up to %.1f deg", c->joint[i].name,
                   ax.x, ax.y, ax.z, ch->hinge[i].max_off_axis * RAD_TO_DEG);
            /* a hinge after a constant rotation: its angle counts from the mean pose */
            if (r.w < 1.0) {
                printf(", after a rest rotation of %.1f deg",
                       2.0 * atan2(sqrt(r.x * r.x + r.y * r.y + r.z * r.z), fabs(r.w)) *
                           RAD_TO_DEG);
            }
            putchar('\n');
        }
    }
    print_ranges(c, ch);
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
