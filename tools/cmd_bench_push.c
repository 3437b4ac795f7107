/* featherbone bench push: the push table of issue 18 (bench/push.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_simulate.h"
#include "commands.h"
#include "push.h"

#ifndef FB_DATA_DIR
#define FB_DATA_DIR "data"
#endif

static const char USAGE[] =
    "usage: featherbone bench push [options]\n"
    "\n"
    "The push test of SIMBICON (Yin, Loken & van de Panne 2007): the character of a clip\n"
    "standing still with a free root at a frame of its grounded reference where both feet and\n"
    "toes stand (the reference and gains `simulate --root free` uses: gains init, accel,\n"
    "240 Hz), pushed 1 s in at the pelvis (a horizontal force in world axes at the root body's\n"
    "centre of mass) for 0.1 s, once per force: step, 2 step, ... until it falls, in four\n"
    "directions (the force along the way it faces, against it, to its left and to its right).\n"
    "Prints per direction the largest force after which it stood with its joints back within\n"
    "--within of where they were when the push began, 2 s after the push ended; the largest\n"
    "it did not fall from; the first it fell from and how long after the push began; and in\n"
    "how many runs the world's force solve left a multiplier outside its bounds.\n"
    "\n"
    "  --clip PATH      the clip (default data/131_01.bvh; the bundled rules must fit it)\n"
    "  --frame N        the standing frame of the grounded reference at 240 Hz (default: the\n"
    "                   first where both feet and toes stand for 0.2 s)\n"
    "  --step N         force step, N (default 25)\n"
    "  --max N          largest force tried, N (default 1500)\n"
    "  --duration S     push duration, s (default 0.1)\n"
    "  --within M       recovered: joints back within this mean distance, m (default 0.02)\n"
    "  --runs           also print every run\n";

#define PUSH_RATE 240.0

static void print_run(const push_opts* o, const push_result* r, void* user) {
    (void)user;
    printf("  %7.1f N: %s", o->force,
           r->blew_up                     ? "BLEW UP"
           : r->fall.cause != FB_FALL_NONE ? "fell"
                                          : "stood");
    if (r->fall.cause != FB_FALL_NONE) {
        printf(" %.3f s after (%s)", r->fall.time - o->t_push, fb_fall_cause_name(r->fall.cause));
    }
    printf("; joints %.2f cm off 2 s after, %.2f cm at most; pelvis down %.2f cm; "
           "tau/limit %.3f, applied %.3f",
           100.0 * r->pose_back, 100.0 * r->pose_max, 100.0 * r->root_drop_max,
           r->tau_ratio_max, r->applied_ratio_max);
    if (r->bound_steps > 0) {
        printf("; %d steps with multipliers out of bounds (up to %.3g)", r->bound_steps,
               r->bound_excess_max);
    }
    printf("\n");
}

int cmd_bench_push(int argc, char** argv) {
    const char* clip_path = FB_DATA_DIR "/131_01.bvh";
    int frame = -1;
    double step = 25.0, max_force = 1500.0, duration = 0.1, within = 0.02;
    bool runs = false;
    for (int i = 0; i < argc; i++) {
        const char* a = argv[i];
        const char* val = i + 1 < argc ? argv[i + 1] : NULL;
        if (is_help(a)) {
            fputs(USAGE, stdout);
            return EXIT_OK;
        } else if (strcmp(a, "--runs") == 0) {
            runs = true;
        } else if (strcmp(a, "--clip") == 0) {
            if (!val) {
                fprintf(stderr, "featherbone bench push: --clip: expected a path\n");
                return EXIT_USAGE;
            }
            clip_path = val;
            i++;
        } else if (strcmp(a, "--frame") == 0) {
            char* end = NULL;
            const long f = val ? strtol(val, &end, 10) : -1;
            if (!val || *end != '\0' || f < 0 || f > 100000000) {
                fprintf(stderr, "featherbone bench push: --frame: expected a frame number >= 0, "
                                "found '%s'\n",
                        val ? val : "(nothing)");
                return EXIT_USAGE;
            }
            frame = (int)f;
            i++;
        } else if (strcmp(a, "--step") == 0 || strcmp(a, "--max") == 0 ||
                   strcmp(a, "--duration") == 0 || strcmp(a, "--within") == 0) {
            double* dst = a[2] == 's' ? &step : a[2] == 'm' ? &max_force
                                            : a[2] == 'd' ? &duration
                                                          : &within;
            if (!parse_positive_double(a, val, dst)) {
                return EXIT_USAGE;
            }
            i++;
        } else {
            fprintf(stderr, "featherbone bench push: unknown argument '%s'\n%s", a, USAGE);
            return EXIT_USAGE;
        }
    }
    fb_error err;
    fb_clip* clip = NULL;
    fb_character* ch = NULL;
    if (bench_load_character(clip_path, &clip, &ch, &err) != 0) {
        fprintf(stderr, "featherbone bench push: %s\n", err.msg);
        return EXIT_USAGE;
    }
    int rc = EXIT_FAIL;
    push_scene s;
    memset(&s, 0, sizeof s);
    push_opts o = push_default_opts();
    o.duration = duration;
    const double seconds = o.t_push + o.duration + o.t_back + 1.0;
    /* frame -1: the first that stands, found on the clip's grounded reference */
    if (push_scene_create(clip, ch, PUSH_RATE, frame, seconds, &s, &err) != 0) {
        fprintf(stderr, "featherbone bench push: %s: %s\n", clip_path, err.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    frame = s.frame;
    const char* base = strrchr(clip_path, '/');
    printf("featherbone %s bench push: %s, frame %d (%.3f s) of its grounded reference, "
           "%.2f kg, %.0f Hz, free root; pushes of %g s at the pelvis's centre of mass %g s in, "
           "in steps of %g N; recovered = standing with the joints back within %g cm %g s "
           "after\n",
           FB_VERSION_STRING, base ? base + 1 : clip_path, frame, frame / PUSH_RATE, s.mass,
           PUSH_RATE, o.duration, o.t_push, step, 100.0 * within, o.t_back);
    const fb_v3 dirs[4] = {s.forward, {-s.forward.x, -s.forward.y, -s.forward.z}, s.left,
                           {-s.left.x, -s.left.y, -s.left.z}};
    static const char* const names[4] = {"forward", "backward", "leftward", "rightward"};
    push_series ser[4];
    const clock_t c0 = clock();
    for (int k = 0; k < 4; k++) {
        o.dir = dirs[k];
        if (runs) {
            printf("%s (%.3f, %.3f, %.3f):\n", names[k], dirs[k].x, dirs[k].y, dirs[k].z);
        }
        if (push_ladder(&s, &o, step, max_force, within, runs ? print_run : NULL, NULL, &ser[k],
                        &err) != 0) {
            fprintf(stderr, "featherbone bench push: %s\n", err.msg);
            goto done;
        }
    }
    printf("%-10s %12s %9s %10s %13s %5s %8s %11s %12s\n", "push", "recovered_N", "stood_N",
           "fell_at_N", "fell_after_s", "runs", "blowups", "bound_runs", "applied/lim");
    for (int k = 0; k < 4; k++) {
        char fell[32] = "-", after[32] = "-";
        if (ser[k].fell_at > 0.0) {
            snprintf(fell, sizeof fell, "%.0f", ser[k].fell_at);
            snprintf(after, sizeof after, "%.3f", ser[k].fall_time);
        }
        printf("%-10s %12.0f %9.0f %10s %13s %5d %8d %11d %12.3f\n", names[k], ser[k].recovered,
               ser[k].stood, fell, after, ser[k].runs, ser[k].blowups, ser[k].bound_runs,
               ser[k].applied_ratio_max);
    }
    printf("%.1f s of CPU time\n", (double)(clock() - c0) / CLOCKS_PER_SEC);
    rc = EXIT_OK;
done:
    push_scene_destroy(&s);
    fb_character_destroy(ch);
    fb_clip_destroy(clip);
    return rc;
}
