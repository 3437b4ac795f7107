/* featherbone simulate: the character tracks its clip while balls hit it; writes the simulated
 * clip, the balls and a report. */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "sim_job.h"

static const char USAGE[] =
    "usage: featherbone simulate CLIP -o OUT.bvh [--hit SPEC]... [--hits FILE.json]\n"
    "                            [--random-hits N --seed S]\n"
    "                            [--gains G.json | --strength mean|men|women]\n"
    "                            [--controller pd|accel] [--root kinematic|assisted|free]\n"
    "                            [--anchor path|feet]\n"
    "                            [--rate HZ] [--frames A:B] [--report R.html|R.json]...\n"
    "                            [--format gltf] [--self-collision] [--keep-placement]\n"
    "                            [--sample N [--threads T] [--sample-save F.json]\n"
    "                             [--sample-hit N] [--sample-hit-scale M] [--sample-pull P]\n"
    "                             [--sample-step RAD] [--sample-root-scale M]\n"
    "                             [--sample-height-scale M] [--sample-upright F]]\n"
    "                            [--sample-load F.json] [--quiet]\n"
    "\n"
    "Builds the clip's character, fits the clip and its feedforward torques, and simulates the\n"
    "character tracking the clip with its own joint torques while balls hit it (ground contact,\n"
    "balls as real bodies). Writes the simulated clip as BVH with the input's skeleton, names,\n"
    "channel orders and frame rate, one frame per input frame (or per frame of --frames), in\n"
    "the input's frame of reference, the balls' trajectories to OUT.balls.json, and optionally\n"
    "a report. A blow-up is reported with its time and joint, and nothing is written.\n"
    "\n"
    "  -o, --output OUT.bvh  the simulated clip (whole or not at all)\n"
    "  --hit SPEC            a ball, e.g. "
    "time=1.2,target=LeftElbow,speed=10,mass=0.45,radius=0.11\n"
    "                        keys: time (s, when the ball reaches the body; required), target\n"
    "                        (the joint that drives the body; required), speed (m/s, default\n"
    "                        10), mass (kg, 0.45), radius (m, 0.11), from (front, back, left,\n"
    "                        right, above in the character's heading, or X:Y:Z world axes;\n"
    "                        default front), offset (X:Y:Z aim point from the body's centre of\n"
    "                        mass, body axes, m), restitution (0.5), distance (launch distance,\n"
    "                        m, default 1)\n"
    "  --hits FILE.json      many: {\"hits\": [{\"time\": 1.2, \"target\": \"LeftElbow\", ...}]}\n"
    "  --random-hits N       N more hits drawn from --seed S (targets, directions, times,\n"
    "                        speeds, masses; the same seed gives the same hits everywhere),\n"
    "                        at least 0.1 s apart, from 0.25 s to 1 s before the end (to 0.1 s\n"
    "                        before it when the clip is too short for that); a clip too short\n"
    "                        for N hits is an error (exit 2) that says how many fit\n"
    "  --seed S              seed of --random-hits and --sample (default 1)\n";

/* The gains and output options: a literal of their own (C99 promises 4095 characters in one). */
static const char USAGE_GAINS[] =
    "  --gains G.json        gains file (default: what `featherbone gains init` writes)\n"
    "  --strength WHO        without --gains: the default gains' torque limits from the mean\n"
    "                        of men's and women's strength (mean, the default), men's or\n"
    "                        women's, as `gains init --strength` (docs/STRENGTH.md)\n"
    "  --controller, --root  override the gains file's controller and root mode\n"
    "  --anchor path|feet    assisted root: where its help pulls (the gains' root.anchor):\n"
    "                        path, the clip's root (default); feet, where the clip's root\n"
    "                        stands over the planted feet (a third less help on the CMU\n"
    "                        walks, the root further from the path; docs/CONTROL.md §2)\n"
    "  --rate HZ             simulation rate (default: the gains file's; gains init: 240)\n"
    "  --frames A:B          simulate clip frames A..B-1 only (B = 0: to the end)\n"
    "  --report FILE         R.html: a self-contained page of plots and tables; R.json: the\n"
    "                        same numbers (may be given twice)\n"
    "  --format gltf         also write OUT.gltf: the character and balls, animated (Assimp)\n"
    "  --self-collision      the character's non-adjacent body parts collide with each other\n"
    "  --keep-placement      write the clip and the balls as simulated: on the ground the clip\n"
    "                        was placed on (the note \"placed ... cm higher\"), not moved back\n"
    "                        into the input's frame\n";

/* The sampling options and the end: a second literal (C99 promises 4095 characters in one). */
static const char USAGE_SAMPLING[] =
    "  --sample N            free or assisted root: first search, by N simulations per\n"
    "                        0.1 s window, for offsets to the reference that the character\n"
    "                        can follow without falling (SAMCON-style sampling;\n"
    "                        docs/CONTROL.md §11), then simulate tracking it; 40 is a quick\n"
    "                        start, 80 README's (the pose within 3 cm on most seeds of the\n"
    "                        bundled walk, twice the time); the search costs about\n"
    "                        N x duration x 9 simulated seconds\n"
    "  --threads T           the search's simulations run T at once (default: the cores, at\n"
    "                        most 8); the result does not depend on T\n"
    "  --sample-hit-scale M  with hits: the struck body's root-relative deviation over M\n"
    "                        (m) counts in the search's score from 1.5 to 2.5 s after each\n"
    "                        hit, so that it is back within 2 cm by then, and from 1.3 s\n"
    "                        its excess over 1.8 cm 1000 times again (0 to 10; default\n"
    "                        0.02; 0: neither counted; docs/CONTROL.md §11)\n"
    "  --sample-hit N        with hits: N simulations in each window where the search answers\n"
    "                        a hit (its look-ahead reaches the hit and its start is at most\n"
    "                        2.5 s after it; default: --sample's N; docs/CONTROL.md §11)\n"
    "  --sample-pull P       each window's step of a joint's offset is drawn about (1 - P)\n"
    "                        times the last one, so the offsets fall back toward the clip\n"
    "                        unless the search keeps them (0 to 0.9; default 0.1; 0: the\n"
    "                        random walk before stop 35; the root's offsets are not pulled)\n"
    "  --sample-step RAD     the spread of a window's step of a joint's offset and of the\n"
    "                        root's turn (0 to 1 rad; default 0.02; 0.05 until stop 38,\n"
    "                        docs/CONTROL.md §11)\n"
    "  --sample-root-scale M\n"
    "                        the root's distance from the clip's path over M (m) counts in\n"
    "                        the search's score (0.001 to 10; default 0.05; smaller keeps\n"
    "                        the root nearer the path, docs/CONTROL.md §11)\n"
    "  --sample-height-scale M\n"
    "                        the root's drop below the clip's height over M (m) counts in\n"
    "                        the search's score (0: not, or 0.001 to 10; default 0.05);\n"
    "                        here and below, the clip's height is taken up to where the\n"
    "                        clip stands (its median): a hop not made is no drop\n"
    "  --sample-upright F    a candidate whose root sinks below F of the clip's height counts\n"
    "                        as fallen (0 to 0.99; default 0.8; 0: only real falls)\n"
    "  --sample-save F.json  keep the offsets the search found in F (whole or not at all)\n"
    "  --sample-load F.json  instead of searching, follow the offsets kept in F: the same\n"
    "                        clip, frames, gains and hits give the searched run bit for bit\n"
    "  --quiet               no progress line\n"
    "\n"
    "Hit times count from the first simulated frame. At most 15 balls.\n"
    "exit codes: 0 ok, 1 simulation failure (blow-up), 2 bad input or usage\n";

static int parse_frames(const char* val, sim_job* j) {
    if (!sim_job_parse_frames(val, j)) {
        fprintf(stderr, "featherbone simulate: --frames: expected A:B with 0 <= A < B - 1 (B = 0 "
                "for the end), found '%s'\n", val ? val : "(nothing)");
        return -1;
    }
    return 0;
}

static int add_hit(sim_job* j, const fb_hit* h) {
    if (j->nhit >= FB_SIM_MAX_BALLS) {
        fprintf(stderr, "featherbone simulate: at most %d hits\n", FB_SIM_MAX_BALLS);
        return -1;
    }
    j->hit[j->nhit++] = *h;
    return 0;
}

/* A number from lo to hi for option opt into *dst: 1, or -1 after saying what was expected. */
static int ranged(const char* opt, const char* val, double lo, double hi, const char* what,
                  double* dst) {
    char* end = NULL;
    const double v = strtod(val, &end);
    if (*val == '\0' || *end != '\0' || !(v >= lo && v <= hi)) {
        fprintf(stderr, "featherbone simulate: %s: expected %s, found '%s'\n", opt, what, val);
        return -1;
    }
    *dst = v;
    return 1;
}

/* The options only simulate takes; 1 taken, 0 not one, -1 bad. */
static int take(sim_job* j, int argc, char** argv, int* i) {
    const char* opt = argv[*i];
    const char* val = (*i + 1 < argc) ? argv[*i + 1] : NULL;
    fb_error err;
    if (strcmp(opt, "--quiet") == 0) {
        j->progress = false;
        return 1;
    }
    if (strcmp(opt, "--self-collision") == 0) {
        j->self_collision = true;
        return 1;
    }
    if (strcmp(opt, "--keep-placement") == 0) {
        j->keep_placement = true;
        return 1;
    }
    const char* with_value[] = {"--hit",
                                "--hits",
                                "--random-hits",
                                "--seed",
                                "--gains",
                                "--frames",
                                "--report",
                                "--sample",
                                "--threads",
                                "--format",
                                "--sample-save",
                                "--sample-load",
                                "--sample-hit-scale",
                                "--anchor",
                                "--sample-pull",
                                "--sample-step",
                                "--sample-root-scale",
                                "--sample-height-scale",
                                "--sample-upright",
                                "--sample-hit",
                                "--strength"};
    const int nwith = (int)(sizeof with_value / sizeof with_value[0]);
    int k = 0;
    while (k < nwith && strcmp(opt, with_value[k]) != 0) {
        k++;
    }
    if (k == nwith) {
        return 0;
    }
    if (!val) {
        fprintf(stderr, "featherbone simulate: %s: expected a value\n", opt);
        return -1;
    }
    (*i)++;
    switch (k) {
    case 0: {
        fb_hit h;
        if (fb_hit_parse(val, &h, &err) != FB_OK) {
            fprintf(stderr, "featherbone simulate: --hit: %s\n", err.msg);
            return -1;
        }
        return add_hit(j, &h) == 0 ? 1 : -1;
    }
    case 1: {
        fb_hit hs[FB_SIM_MAX_BALLS];
        int n = 0;
        if (fb_hits_load(val, hs, FB_SIM_MAX_BALLS - j->nhit, &n, &err) != FB_OK) {
            fprintf(stderr, "featherbone simulate: --hits: %s\n", err.msg);
            return -1;
        }
        for (int h = 0; h < n; h++) {
            j->hit[j->nhit++] = hs[h];
        }
        return 1;
    }
    case 2:
        if (strcmp(val, "0") == 0) {
            j->random_hits = 0;
            return 1;
        }
        return parse_positive_int(opt, val, &j->random_hits) ? 1 : -1;
    case 3: {
        char* end = NULL;
        const unsigned long long s = strtoull(val, &end, 10);
        if (*val == '\0' || *val == '-' || *end != '\0') {
            fprintf(stderr, "featherbone simulate: --seed: expected a non-negative integer, "
                    "found '%s'\n", val);
            return -1;
        }
        j->seed = (uint64_t)s;
        return 1;
    }
    case 4: j->gains = val; return 1;
    case 5: return parse_frames(val, j) == 0 ? 1 : -1;
    case 6:
        if (j->nreport >= 2) {
            fprintf(stderr, "featherbone simulate: --report: at most two (one .html, one "
                    ".json)\n");
            return -1;
        }
        j->report[j->nreport++] = val;
        return 1;
    case 7:
        if (strcmp(val, "0") == 0) {
            j->sample = 0;
            return 1;
        }
        return parse_positive_int(opt, val, &j->sample) ? 1 : -1;
    case 8:
        return parse_positive_int(opt, val, &j->threads) ? 1 : -1;
    case 10:
        j->sample_save = val;
        return 1;
    case 11:
        j->sample_load = val;
        return 1;
    case 12:
        return ranged(opt, val, 0.0, 10.0, "a length in m, 0..10", &j->sample_hit_scale);
    case 14:
        return ranged(opt, val, 0.0, 0.9, "a number from 0 to 0.9", &j->sample_pull);
    case 15:
        return ranged(opt, val, 0.0, 1.0, "an angle in rad, 0 to 1", &j->sample_step);
    case 16:
        return ranged(opt, val, 0.001, 10.0, "a length in m, 0.001 to 10", &j->sample_root_scale);
    case 17:
        return ranged(opt, val, 0.0, 10.0, "a length in m, 0 to 10", &j->sample_height_scale);
    case 18:
        return ranged(opt, val, 0.0, 0.99, "a fraction, 0 to 0.99", &j->sample_upright);
    case 19:
        return parse_positive_int(opt, val, &j->sample_hit) ? 1 : -1;
    case 20:
        j->strength = fb_choice_index(fb_strength_names, FB_NSTRENGTH, val);
        if (j->strength < 0) {
            fprintf(stderr,
                    "featherbone simulate: --strength: expected mean, men or women, "
                    "found '%s'\n",
                    val);
            return -1;
        }
        return 1;
    case 13:
        j->anchor = fb_choice_index(fb_root_anchor_names, FB_NROOT_ANCHOR, val);
        if (j->anchor < 0) {
            fprintf(stderr, "featherbone simulate: --anchor: expected path or feet, found '%s'\n",
                    val);
            return -1;
        }
        return 1;
    default:
        if (strcmp(val, "gltf") != 0 && strcmp(val, "bvh") != 0) {
            fprintf(stderr, "featherbone simulate: --format: expected gltf (BVH is always "
                    "written), found '%s'\n", val);
            return -1;
        }
        j->gltf = j->gltf || strcmp(val, "gltf") == 0;
        return 1;
    }
}

int cmd_simulate(int argc, char** argv) {
    sim_job j;
    sim_job_init(&j);
    j.seed = 1;
    j.progress = isatty(fileno(stderr));
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    j.threads = cores < 1 ? 1 : (cores > 8 ? 8 : (int)cores);
    ctrl_args c = {.out = NULL, .rate = 0.0, .controller = -1, .root = -1};
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            fprintf(stdout, "%s%s%s", USAGE, USAGE_GAINS, USAGE_SAMPLING);
            return EXIT_OK;
        }
        int took = take(&j, argc, argv, &i);
        if (took == 0) {
            took = ctrl_args_take("simulate", &c, argc, argv, &i);
        }
        if (took == 0) {
            took = clip_args_take(&j.clip, argc, argv, &i, true);
        }
        if (took < 0) {
            return EXIT_USAGE;
        }
        if (took == 0) {
            if (argv[i][0] == '-' || j.clip.clip) {
                fprintf(stderr, "featherbone simulate: unexpected argument '%s'\n%s%s%s", argv[i],
                        USAGE, USAGE_GAINS, USAGE_SAMPLING);
                return EXIT_USAGE;
            }
            j.clip.clip = argv[i];
        }
    }
    j.out = c.out;
    j.rate = c.rate;
    j.controller = c.controller;
    j.root = c.root;
    if (!j.clip.clip || !j.out) {
        fprintf(stderr, "featherbone simulate: expected CLIP and -o OUT.bvh\n%s%s%s", USAGE,
                USAGE_GAINS, USAGE_SAMPLING);
        return EXIT_USAGE;
    }
    char why[256];
    if (!sim_job_sampling_ok(&j, NULL, why, sizeof why)) {
        fprintf(stderr, "featherbone simulate: %s\n", why);
        return EXIT_USAGE;
    }
    char outs[SIM_JOB_MAX_OUTPUTS][1024];
    const int n = sim_job_outputs(&j, outs);
    for (int k = 0; k < n; k++) {
        for (int m = 0; m < k; m++) {
            if (strcmp(outs[k], outs[m]) == 0) {
                fprintf(stderr, "featherbone simulate: two outputs are both '%s'\n", outs[k]);
                return EXIT_USAGE;
            }
        }
        if (strcmp(outs[k], j.clip.clip) == 0 || (j.gains && strcmp(outs[k], j.gains) == 0) ||
            (j.sample_load && strcmp(outs[k], j.sample_load) == 0)) {
            fprintf(stderr, "featherbone simulate: refusing to overwrite the input '%s'\n",
                    outs[k]);
            return EXIT_USAGE;
        }
    }
    return sim_job_run(&j, stderr, "featherbone simulate");
}
