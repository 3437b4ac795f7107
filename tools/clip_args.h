/* Options shared by the commands that read a clip and build a character. */
#ifndef FB_TOOLS_CLIP_ARGS_H
#define FB_TOOLS_CLIP_ARGS_H

#include <stdbool.h>

#include "featherbone/featherbone.h"

typedef struct clip_args {
    const char* clip;      /* the positional CLIP argument */
    fb_clip_opts clip_opts;
    const char* rules_path; /* --rules, or the bundled data/character_rules.json */
    bool lossless;          /* --lossless: no hinges, no drops */
    fb_build_opts build;
    fb_rules rules;
} clip_args;

/* Help text for the options below. */
extern const char CLIP_ARGS_HELP[];
extern const char CHARACTER_ARGS_HELP[];

void clip_args_init(clip_args* a);

/* If argv[*i] is one of the shared options, consumes it (and its value) and returns 1; returns
 * 0 when it is not one; -1 after printing an error for a bad value. `character` enables the
 * character options (--rules, --lossless, --free-positions, --mass, --mass-model). */
int clip_args_take(clip_args* a, int argc, char** argv, int* i, bool character);

/* Loads the clip (and, when `character` is set, the rules and the character). Prints the
 * error and returns the exit code (0 ok). */
int clip_args_load(clip_args* a, bool character, fb_clip** clip, fb_character** ch);

/* Path of a bundled data file: $FEATHERBONE_DATA/name if set, else the source tree's data/. */
const char* data_file(const char* name, char* buf, size_t cap);

/* Exit code for a library status: 2 for bad input, 1 otherwise. */
int exit_code_for(fb_status s);

/* Options of the commands that track a clip (torques, gains init, simulate). */
typedef struct ctrl_args {
    const char* out; /* -o, --output */
    double rate;     /* --rate HZ */
    int controller;  /* --controller pd|accel, -1 = not given */
    int root;        /* --root kinematic|assisted|free, -1 = not given */
} ctrl_args;

/* If argv[*i] is one of -o/--output, --rate, --controller, --root, consumes it and its value
 * and returns 1; 0 when it is not one; -1 after printing an error (prefixed "featherbone
 * <cmd>") for a bad value. */
int ctrl_args_take(const char* cmd, ctrl_args* c, int argc, char** argv, int* i);

#endif /* FB_TOOLS_CLIP_ARGS_H */
