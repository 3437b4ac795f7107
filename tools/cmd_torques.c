/* featherbone torques: the feedforward joint torques of a clip (inverse dynamics of the fitted
 * motion), and featherbone gains init: a starting gains file for a clip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clip_args.h"
#include "commands.h"

static const char TORQUES_USAGE[] =
    "usage: featherbone torques CLIP -o TORQUES.csv [--rate HZ]\n"
    "\n"
    "Fits a smooth curve to the clip's joint trajectories (per joint, the window chosen by\n"
    "cross-validation; docs/CONTROL.md), and writes the torques inverse dynamics gives at every\n"
    "frame of the simulation rate: one column per degree of freedom, named by joint and axis\n"
    "(ball joints .x .y .z in the child frame; the root's .nx .. .fz are the wrench the ground\n"
    "would have to supply).\n"
    "\n"
    "  -o, --output FILE  the CSV to write (whole or not at all)\n"
    "  --rate HZ          simulation rate (default 240)\n";

static const char GAINS_USAGE[] =
    "usage: featherbone gains init CLIP -o GAINS.json [--rate HZ] [--controller pd|accel]\n"
    "                              [--root kinematic|assisted|free] [--strength mean|men|women]\n"
    "\n"
    "Writes a gains file with every field present: per joint, stiffness and damping from the\n"
    "joint's effective inertia, Cline's torque-scaled gains from its feedforward torques, and a\n"
    "torque limit from human strength: the human joint's strongest isometric torque per kg of\n"
    "body mass times the character's mass. Every field is documented in docs/CONTROL.md.\n"
    "\n"
    "  --strength WHO  whose strength (docs/STRENGTH.md): mean, the mean of men's and women's\n"
    "                  (the default, what simulate uses without --gains); men; women. The\n"
    "                  knee, for instance: 2.8, 3.19 and 2.41 N m/kg\n";

/* Parses the command line of either command; returns an exit code or -1 to go on. */
static int parse(const char* cmd, const char* usage, int argc, char** argv, clip_args* a,
                 ctrl_args* c, fb_strength* strength) {
    clip_args_init(a);
    *c = (ctrl_args){.out = NULL, .rate = 240.0, .controller = -1, .root = -1};
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            fputs(usage, stdout);
            return EXIT_OK;
        }
        if (strength && strcmp(argv[i], "--strength") == 0) {
            const char* v = i + 1 < argc ? argv[++i] : "";
            const int k = fb_choice_index(fb_strength_names, FB_NSTRENGTH, v);
            if (k < 0) {
                fprintf(stderr,
                        "featherbone %s: --strength: expected mean, men or women (found "
                        "'%s')\n",
                        cmd, v);
                return EXIT_USAGE;
            }
            *strength = (fb_strength)k;
            continue;
        }
        int took = ctrl_args_take(cmd, c, argc, argv, &i);
        if (took == 0) {
            took = clip_args_take(a, argc, argv, &i, true);
        }
        if (took < 0) {
            return EXIT_USAGE;
        }
        if (took == 0) {
            if (argv[i][0] == '-' || a->clip) {
                fprintf(stderr, "featherbone %s: unexpected argument '%s'\n%s", cmd, argv[i],
                        usage);
                return EXIT_USAGE;
            }
            a->clip = argv[i];
        }
    }
    if (!a->clip || !c->out) {
        fprintf(stderr, "featherbone %s: expected CLIP and -o FILE\n%s", cmd, usage);
        return EXIT_USAGE;
    }
    if (strcmp(a->clip, c->out) == 0) {
        fprintf(stderr, "featherbone %s: refusing to overwrite the input '%s'\n", cmd, c->out);
        return EXIT_USAGE;
    }
    return -1;
}

/* Loads the clip and character and fits the reference; prints errors. */
static int load_ref(const char* cmd, clip_args* a, double rate, fb_clip** clip,
                    fb_character** ch, fb_ref** ref) {
    const int rc = clip_args_load(a, true, clip, ch);
    if (rc != EXIT_OK) {
        return rc;
    }
    fb_error err;
    *ref = fb_ref_from_clip(*clip, *ch, rate, 0, 0, NULL, &err);
    if (!*ref) {
        fprintf(stderr, "featherbone %s: %s\n", cmd, err.msg);
        fb_character_destroy(*ch);
        fb_clip_destroy(*clip);
        return exit_code_for(err.code);
    }
    return EXIT_OK;
}

int cmd_torques(int argc, char** argv) {
    clip_args a;
    ctrl_args c;
    int rc = parse("torques", TORQUES_USAGE, argc, argv, &a, &c, NULL);
    if (rc >= 0) {
        return rc;
    }
    fb_clip* clip;
    fb_character* ch;
    fb_ref* ref;
    rc = load_ref("torques", &a, c.rate, &clip, &ch, &ref);
    if (rc != EXIT_OK) {
        return rc;
    }
    fb_error err;
    if (fb_ref_write_torques_csv(ch->model, ref, c.out, &err) != FB_OK) {
        fprintf(stderr, "featherbone torques: %s\n", err.msg);
        rc = EXIT_FAIL;
    } else {
        printf("wrote %s: %d frames at %g Hz, %d columns (%d joints)\n", c.out, ref->nframe,
               1.0 / ref->dt, ch->model->nv, ch->model->nbody - 1);
    }
    fb_ref_destroy(ref);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    return rc;
}

int cmd_gains(int argc, char** argv) {
    if (argc < 1 || is_help(argv[0])) {
        fputs(GAINS_USAGE, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : EXIT_OK;
    }
    if (strcmp(argv[0], "init") != 0) {
        fprintf(stderr, "featherbone gains: unknown subcommand '%s' (expected init)\n%s", argv[0],
                GAINS_USAGE);
        return EXIT_USAGE;
    }
    clip_args a;
    ctrl_args c;
    fb_strength who = FB_STRENGTH_MEAN;
    int rc = parse("gains init", GAINS_USAGE, argc - 1, argv + 1, &a, &c, &who);
    if (rc >= 0) {
        return rc;
    }
    fb_clip* clip;
    fb_character* ch;
    fb_ref* ref;
    rc = load_ref("gains init", &a, c.rate, &clip, &ch, &ref);
    if (rc != EXIT_OK) {
        return rc;
    }
    fb_error err;
    fb_gains* g = malloc(sizeof *g);
    if (!g) {
        fprintf(stderr, "featherbone gains init: out of memory\n");
        rc = EXIT_FAIL;
    } else if (fb_gains_init_strength(ch->model, ref, who, g, &err) != FB_OK) {
        fprintf(stderr, "featherbone gains init: %s\n", err.msg);
        rc = exit_code_for(err.code);
    } else {
        if (c.controller >= 0) {
            g->controller = (fb_controller)c.controller;
        }
        if (c.root >= 0) {
            g->root.mode = (fb_root_mode)c.root;
        }
        if (fb_gains_save(g, c.out, &err) != FB_OK) {
            fprintf(stderr, "featherbone gains init: %s\n", err.msg);
            rc = EXIT_FAIL;
        } else {
            printf("wrote %s: %s controller, %s root, %g Hz, %d joints, %s strength\n", c.out,
                   fb_controller_name(g->controller), fb_root_mode_name(g->root.mode), g->rate,
                   g->nrule, fb_strength_name(who));
        }
    }
    free(g);
    fb_ref_destroy(ref);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    return rc;
}
