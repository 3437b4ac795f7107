/* featherbone convert: a clip through featherbone and back out as BVH. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clip_args.h"
#include "commands.h"

static const char USAGE[] =
    "usage: featherbone convert CLIP -o OUT.bvh [--fps F] [--scale S] [--frames A:B]\n"
    "\n"
    "Reads the clip, turns it into joint trajectories of a lossless character (every rotating\n"
    "joint a ball joint, rotations as quaternions), and writes them back as BVH with the\n"
    "input's hierarchy, names, offsets, channel orders and frame rate. Euler angles come out in\n"
    "each joint's own order, unwrapped so frames never jump by 360 degrees.\n"
    "\n"
    "  -o, --output FILE  the BVH to write (written whole or not at all; never the input)\n"
    "  --fps F            resample to F frames per second (rotations by slerp)\n"
    "  --scale S          multiply every length written by S (0.01: centimetres to metres)\n"
    "  --frames A:B       only clip frames A to B-1 (0-based; A: or :B leave one end open)\n"
    "  --up y|z, --pos-mode absolute|relative, --no-assimp   as for `featherbone info`\n";

static bool parse_frames(const char* text, int* first, int* last) {
    const char* colon = text ? strchr(text, ':') : NULL;
    if (!colon) {
        return false;
    }
    char* end = NULL;
    *first = 0;
    *last = 0;
    if (colon != text) {
        const long a = strtol(text, &end, 10);
        if (end != colon || a < 0 || a > 100000000L) {
            return false;
        }
        *first = (int)a;
    }
    if (colon[1] != '\0') {
        const long b = strtol(colon + 1, &end, 10);
        if (*end != '\0' || b < 1 || b > 100000000L) {
            return false;
        }
        *last = (int)b;
    }
    return true;
}

int cmd_convert(int argc, char** argv) {
    clip_args a;
    clip_args_init(&a);
    const char* out = NULL;
    double fps = 0.0, scale = 1.0;
    int first = 0, last = 0;
    for (int i = 0; i < argc; i++) {
        const char* opt = argv[i];
        const char* val = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (is_help(opt)) {
            fputs(USAGE, stdout);
            return EXIT_OK;
        } else if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) {
            if (!val) {
                fprintf(stderr, "featherbone convert: %s: expected a file\n", opt);
                return EXIT_USAGE;
            }
            out = val;
            i++;
        } else if (strcmp(opt, "--fps") == 0 || strcmp(opt, "--scale") == 0) {
            char* end = NULL;
            const double v = val ? strtod(val, &end) : 0.0;
            if (!val || *end != '\0' || !(v > 0.0) || v > 1e6) {
                fprintf(stderr, "featherbone convert: %s: expected a positive number, found '%s'\n",
                        opt, val ? val : "(nothing)");
                return EXIT_USAGE;
            }
            *(opt[2] == 'f' ? &fps : &scale) = v;
            i++;
        } else if (strcmp(opt, "--frames") == 0) {
            if (!parse_frames(val, &first, &last)) {
                fprintf(stderr, "featherbone convert: --frames: expected A:B, found '%s'\n",
                        val ? val : "(nothing)");
                return EXIT_USAGE;
            }
            i++;
        } else {
            const int took = clip_args_take(&a, argc, argv, &i, false);
            if (took < 0) {
                return EXIT_USAGE;
            }
            if (took == 0) {
                if (opt[0] == '-' || a.clip) {
                    fprintf(stderr, "featherbone convert: unexpected argument '%s'\n%s", opt,
                            USAGE);
                    return EXIT_USAGE;
                }
                a.clip = opt;
            }
        }
    }
    if (!out) {
        fprintf(stderr, "featherbone convert: expected -o OUT.bvh\n%s", USAGE);
        return EXIT_USAGE;
    }
    if (a.clip && strcmp(a.clip, out) == 0) {
        fprintf(stderr, "featherbone convert: refusing to overwrite the input '%s'\n", out);
        return EXIT_USAGE;
    }
    a.lossless = true;
    fb_clip* c;
    fb_character* ch;
    int rc = clip_args_load(&a, true, &c, &ch);
    if (rc != EXIT_OK) {
        return rc;
    }
    fb_error err;
    fb_motion* mo = fb_motion_from_clip(c, ch, fps, first, last, &err);
    if (!mo) {
        fprintf(stderr, "featherbone convert: %s\n", err.msg);
        rc = exit_code_for(err.code);
    } else if (fb_motion_write_bvh(c, ch, mo, scale, out, &err) != FB_OK) {
        fprintf(stderr, "featherbone convert: %s\n", err.msg);
        rc = EXIT_FAIL;
    } else {
        printf("wrote %s: %d frames at %.6g fps, %d joints\n", out, mo->nframe, 1.0 / mo->dt,
               c->njoint);
        for (int k = 0; k < c->nwarn && k < FB_CLIP_MAX_WARN; k++) {
            fprintf(stderr, "warning: %s\n", c->warn[k]);
        }
    }
    fb_motion_destroy(mo);
    fb_character_destroy(ch);
    fb_clip_destroy(c);
    return rc;
}
