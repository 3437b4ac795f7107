/* Shared clip and character options of the featherbone commands. */
#include "clip_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

const char CLIP_ARGS_HELP[] =
    "clip options:\n"
    "  --scale S        metres per file unit (default: detected from the standing height)\n"
    "  --height H       scale the skeleton to stand H metres tall\n"
    "  --up y|z         the clip's up axis (default: detected)\n"
    "  --pos-mode absolute|relative\n"
    "                   meaning of position channels on non-root joints (default: detected)\n"
    "  --no-assimp      skip the Assimp cross-load of BVH files\n";

const char CHARACTER_ARGS_HELP[] =
    "character options:\n"
    "  --rules FILE     character rules (default: the bundled data/character_rules.json)\n"
    "  --lossless       no hinges and no dropped joints: every rotating joint a ball joint\n"
    "  --free-positions position channels on non-root joints as free translations: those\n"
    "                   joints float and the character is not articulated (default: such a\n"
    "                   joint is what its rotation channels say, carrying its bone vector)\n"
    "  --mass KG        total body mass (scales the densities; needed for anthropometric)\n"
    "  --mass-model density|anthropometric\n"
    "                   masses from the shapes at the rules' density (default), or from\n"
    "                   de Leva 1996 segment fractions of --mass\n";

void clip_args_init(clip_args* a) {
    memset(a, 0, sizeof *a);
    a->clip_opts = fb_default_clip_opts();
    a->build = fb_default_build_opts();
}

const char* data_file(const char* name, char* buf, size_t cap) {
    const char* dir = getenv("FEATHERBONE_DATA");
    snprintf(buf, cap, "%s/%s", (dir && dir[0]) ? dir : FB_DATA_DIR, name);
    return buf;
}

int exit_code_for(fb_status s) {
    return (s == FB_EINVAL || s == FB_EIO) ? EXIT_USAGE : EXIT_FAIL;
}

int clip_args_take(clip_args* a, int argc, char** argv, int* i, bool character) {
    const char* opt = argv[*i];
    const char* val = (*i + 1 < argc) ? argv[*i + 1] : NULL;
    if (strcmp(opt, "--no-assimp") == 0) {
        a->clip_opts.use_assimp = false;
        return 1;
    }
    if (strcmp(opt, "--scale") == 0 || strcmp(opt, "--height") == 0) {
        double* dst = opt[2] == 's' ? &a->clip_opts.scale : &a->clip_opts.height;
        if (!parse_positive_double(opt, val, dst)) {
            return -1;
        }
        (*i)++;
        return 1;
    }
    if (strcmp(opt, "--up") == 0) {
        if (val && (strcmp(val, "y") == 0 || strcmp(val, "Y") == 0)) {
            a->clip_opts.up = FB_UP_Y;
        } else if (val && (strcmp(val, "z") == 0 || strcmp(val, "Z") == 0)) {
            a->clip_opts.up = FB_UP_Z;
        } else {
            fprintf(stderr, "featherbone: --up: expected y or z, found '%s'\n",
                    val ? val : "(nothing)");
            return -1;
        }
        (*i)++;
        return 1;
    }
    if (strcmp(opt, "--pos-mode") == 0) {
        if (val && strcmp(val, "absolute") == 0) {
            a->clip_opts.pos_mode = FB_POS_ABSOLUTE;
        } else if (val && strcmp(val, "relative") == 0) {
            a->clip_opts.pos_mode = FB_POS_RELATIVE;
        } else {
            fprintf(stderr, "featherbone: --pos-mode: expected absolute or relative, found '%s'\n",
                    val ? val : "(nothing)");
            return -1;
        }
        (*i)++;
        return 1;
    }
    if (!character) {
        return 0;
    }
    if (strcmp(opt, "--rules") == 0) {
        if (!val) {
            fprintf(stderr, "featherbone: --rules: expected a file\n");
            return -1;
        }
        a->rules_path = val;
        (*i)++;
        return 1;
    }
    if (strcmp(opt, "--lossless") == 0) {
        a->lossless = true;
        return 1;
    }
    if (strcmp(opt, "--free-positions") == 0) {
        a->build.free_positions = true;
        return 1;
    }
    if (strcmp(opt, "--mass") == 0) {
        if (!parse_positive_double(opt, val, &a->build.mass)) {
            return -1;
        }
        (*i)++;
        return 1;
    }
    if (strcmp(opt, "--mass-model") == 0) {
        if (val && strcmp(val, "density") == 0) {
            a->build.mass_model = FB_MASS_DENSITY;
        } else if (val && strcmp(val, "anthropometric") == 0) {
            a->build.mass_model = FB_MASS_ANTHROPOMETRIC;
        } else {
            fprintf(stderr,
                    "featherbone: --mass-model: expected density or anthropometric, found '%s'\n",
                    val ? val : "(nothing)");
            return -1;
        }
        (*i)++;
        return 1;
    }
    return 0;
}

int clip_args_load(clip_args* a, bool character, fb_clip** clip, fb_character** ch) {
    fb_error err;
    *clip = NULL;
    if (ch) {
        *ch = NULL;
    }
    if (!a->clip) {
        fprintf(stderr, "featherbone: expected a CLIP file\n");
        return EXIT_USAGE;
    }
    if (character && !a->lossless) {
        char buf[1024];
        const char* path = a->rules_path ? a->rules_path
                                         : data_file("character_rules.json", buf, sizeof buf);
        if (fb_rules_load(path, &a->rules, &err) != FB_OK) {
            fprintf(stderr, "featherbone: %s\n", err.msg);
            return exit_code_for(err.code);
        }
        a->build.rules = &a->rules;
    }
    *clip = fb_clip_load(a->clip, &a->clip_opts, NULL, &err);
    if (!*clip) {
        fprintf(stderr, "featherbone: %s\n", err.msg);
        return exit_code_for(err.code);
    }
    if (character) {
        *ch = fb_character_build(*clip, &a->build, &err);
        if (!*ch) {
            fprintf(stderr, "featherbone: %s\n", err.msg);
            fb_clip_destroy(*clip);
            *clip = NULL;
            return exit_code_for(err.code);
        }
    }
    return EXIT_OK;
}

/* Options shared by both commands; returns 1 if taken, 0 if not, -1 on a bad value. */
int ctrl_args_take(const char* cmd, ctrl_args* c, int argc, char** argv, int* i) {
    const char* opt = argv[*i];
    const char* val = (*i + 1 < argc) ? argv[*i + 1] : NULL;
    if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) {
        if (!val) {
            fprintf(stderr, "featherbone %s: %s: expected a file\n", cmd, opt);
            return -1;
        }
        c->out = val;
    } else if (strcmp(opt, "--rate") == 0) {
        char* end = NULL;
        const double v = val ? strtod(val, &end) : 0.0;
        if (!val || *end != '\0' || !(v >= 30.0) || v > 10000.0) {
            fprintf(stderr, "featherbone %s: --rate: expected 30 to 10000 Hz, found '%s'\n", cmd,
                    val ? val : "(nothing)");
            return -1;
        }
        c->rate = v;
    } else if (strcmp(opt, "--controller") == 0) {
        const int k = fb_choice_index(fb_controller_names, FB_NCONTROLLER, val);
        if (k < 0) {
            fprintf(stderr, "featherbone %s: --controller: expected pd or accel, found '%s'\n",
                    cmd, val ? val : "(nothing)");
            return -1;
        }
        c->controller = k;
    } else if (strcmp(opt, "--root") == 0) {
        c->root = fb_choice_index(fb_root_mode_names, FB_NROOT_MODE, val);
        if (c->root < 0) {
            fprintf(stderr,
                    "featherbone %s: --root: expected kinematic, assisted or free, found '%s'\n",
                    cmd, val ? val : "(nothing)");
            return -1;
        }
    } else {
        return 0;
    }
    (*i)++;
    return 1;
}
