/* One `featherbone simulate` job: what the command line (or one line of a batch manifest)
 * asks for, and the function that runs it. Thread-safe: jobs share nothing, so `featherbone
 * batch` runs several at once. */
#ifndef FB_TOOLS_SIM_JOB_H
#define FB_TOOLS_SIM_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "clip_args.h"
#include "featherbone/featherbone.h"

#define SIM_JOB_MAX_OUTPUTS 6

typedef struct sim_job {
    clip_args clip;         /* CLIP and the character options */
    const char* gains;      /* --gains FILE, or NULL: the defaults of `gains init` */
    int strength;           /* --strength (fb_strength): whose strength the defaults' torque
                               limits are, -1 = gains init's default (the mean); not with a
                               gains file */
    const char* out;        /* -o OUT.bvh (required) */
    int nreport;            /* --report R.html and/or --report R.json */
    const char* report[2];
    bool gltf;              /* --format gltf: also OUT.gltf */
    int controller;         /* --controller, -1 = as the gains say */
    int root;               /* --root, -1 = as the gains say */
    int anchor;             /* --anchor path|feet (fb_root_anchor), -1 = as the gains say */
    double rate;            /* --rate HZ, 0 = as the gains say (gains init: 240) */
    int first, last;        /* --frames A:B, 0:0 = the whole clip */
    int nhit;               /* hits from --hit and --hits */
    fb_hit hit[FB_SIM_MAX_BALLS];
    int random_hits;        /* --random-hits N */
    uint64_t seed;          /* --seed S */
    bool self_collision;    /* --self-collision */
    bool keep_placement;    /* --keep-placement: exports as simulated, on the ground the clip
                               was placed on (default: in the input's frame) */
    bool progress;          /* print progress to the log (a terminal) */
    int sample;             /* --sample N: simulations per window of the search for a reference
                               a free root can follow (fb_sim_sample), 0 = none */
    int threads;            /* --threads T: the search's simulations run at once */
    const char* sample_save; /* --sample-save F.json: the search's offsets kept in F */
    const char* sample_load; /* --sample-load F.json: follow the offsets kept in F (no search) */
    double sample_hit_scale; /* --sample-hit-scale M: fb_sample_opts.hit_scale (0: not counted;
                                < 0: not given, the library's default) */
    int sample_hit;          /* --sample-hit N: fb_sample_opts.hit_samples (0: not given, the
                                library's default, --sample's N) */
    double sample_pull;      /* --sample-pull P: fb_sample_opts.pull (< 0: not given, the
                                library's default) */
    double sample_step;      /* --sample-step RAD: fb_sample_opts.sigma_joint (< 0: not given,
                                the library's default) */
    double sample_root_scale; /* --sample-root-scale M: fb_sample_opts.root_scale (< 0: not
                                 given, the library's default) */
    double sample_height_scale; /* --sample-height-scale M: fb_sample_opts.height_scale (< 0:
                                   not given, the library's default) */
    double sample_upright;      /* --sample-upright F: fb_sample_opts.upright (< 0: not given,
                                   the library's default) */
} sim_job;

void sim_job_init(sim_job* j);

/* "A:B" (simulate --frames, a manifest's "frames"): 0 <= A < B - 1, B = 0 for the end of the
 * clip. Fills j->first, j->last; false when text is not that. */
bool sim_job_parse_frames(const char* text, sim_job* j);

/* The files a job writes (OUT.bvh, OUT.balls.json, the reports, OUT.gltf and the sampling plan
 * when asked, in that order); returns their count. */
int sim_job_outputs(const sim_job* j, char bufs[SIM_JOB_MAX_OUTPUTS][1024]);

/* The sampling options together: a plan followed (sample_load) is not searched for (sample) or
 * kept (sample_save), and a plan kept needs a search. False with the reason in msg (the
 * options named as simulate's). */
bool sim_job_sampling_ok(const sim_job* j, const char** field, char* msg, size_t cap);

/* Runs the job: loads, simulates, writes every output whole or not at all. Messages (errors,
 * the summary, progress when asked) go to `log` prefixed with `tag`. Returns an exit code:
 * 0 ok, 1 failure (a blow-up: nothing is written), 2 bad input. */
int sim_job_run(const sim_job* j, FILE* log, const char* tag);

#endif /* FB_TOOLS_SIM_JOB_H */
