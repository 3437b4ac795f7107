/* featherbone export-model: a character (or a benchmark scene) as MuJoCo XML. */
#include <stdio.h>
#include <string.h>

#include "clip_args.h"
#include "commands.h"
#include "scenes.h"

static const char USAGE[] =
    "usage: featherbone export-model CLIP -o MODEL.xml [character options]\n"
    "       featherbone export-model --scene humanoid|tree31|tree63|tree127|tree255 -o MODEL.xml\n"
    "\n"
    "Writes the character built from CLIP (or a benchmark scene of BENCH_MODELS.md) as MuJoCo\n"
    "XML: bodies with explicit inertials, joints, capsule/box/sphere geoms, a motor per hinge,\n"
    "the ground plane and gravity, in featherbone's axes (Y up). docs/INTEROP.md maps the\n"
    "states between the two.\n"
    "\n"
    "  -o, --output FILE  the XML to write (whole or not at all)\n"
    "  --scene NAME       a benchmark model instead of a clip\n";

static fb_model* scene_model(const char* name, fb_error* err) {
    if (strcmp(name, "humanoid") == 0) {
        return scene_humanoid(err);
    }
    static const char* const TREES[4] = {"tree31", "tree63", "tree127", "tree255"};
    for (int k = 0; k < 4; k++) {
        if (strcmp(name, TREES[k]) == 0) {
            return scene_bender_tree(4 + k, err);
        }
    }
    return NULL;
}

int cmd_export_model(int argc, char** argv) {
    clip_args a;
    clip_args_init(&a);
    const char *out = NULL, *scene = NULL;
    for (int i = 0; i < argc; i++) {
        const char* opt = argv[i];
        const char* val = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (is_help(opt)) {
            printf("%s\n%s\n%s", USAGE, CLIP_ARGS_HELP, CHARACTER_ARGS_HELP);
            return EXIT_OK;
        } else if ((strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) && val) {
            out = val;
            i++;
        } else if (strcmp(opt, "--scene") == 0 && val) {
            scene = val;
            i++;
        } else {
            const int took = clip_args_take(&a, argc, argv, &i, true);
            if (took < 0) {
                return EXIT_USAGE;
            }
            if (took == 0) {
                if (opt[0] == '-' || a.clip) {
                    fprintf(stderr, "featherbone export-model: unexpected argument '%s'\n%s", opt,
                            USAGE);
                    return EXIT_USAGE;
                }
                a.clip = opt;
            }
        }
    }
    if (!out || (!scene == !a.clip)) {
        fprintf(stderr, "featherbone export-model: expected CLIP or --scene NAME, and -o FILE\n%s",
                USAGE);
        return EXIT_USAGE;
    }
    fb_error err;
    fb_clip* c = NULL;
    fb_character* ch = NULL;
    fb_model* own = NULL;
    const fb_model* m;
    if (scene) {
        own = scene_model(scene, &err);
        if (!own) {
            fprintf(stderr, "featherbone export-model: --scene: expected humanoid, tree31, "
                            "tree63, tree127 or tree255, found '%s'\n",
                    scene);
            return EXIT_USAGE;
        }
        m = own;
    } else {
        const int rc = clip_args_load(&a, true, &c, &ch);
        if (rc != EXIT_OK) {
            return rc;
        }
        m = ch->model;
    }
    const fb_status s = fb_model_write_mjcf(m, scene ? scene : c->joint[0].name, out, &err);
    if (s != FB_OK) {
        fprintf(stderr, "featherbone export-model: %s\n", err.msg);
    } else {
        printf("wrote %s: %d bodies, %d DOF\n", out, m->nbody - 1, m->nv);
    }
    fb_model_destroy(own);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
    return s == FB_OK ? EXIT_OK : EXIT_FAIL;
}
