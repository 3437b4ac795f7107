/* featherbone: the command-line tool. Parses, calls the library, prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "featherbone/featherbone.h"

static const char USAGE[] =
    "usage: featherbone <command> [options]\n"
    "\n"
    "Motion capture made physical: reduced-coordinate articulated dynamics.\n"
    "\n"
    "commands:\n"
    "  info        a clip's skeleton, frames, units and the character built from it\n"
    "  convert     a clip through featherbone and back out as BVH (convert --help)\n"
    "  export-model  a clip's character (or a benchmark scene) as MuJoCo XML\n"
    "  simulate    the character tracks its clip while balls hit it; writes the simulated\n"
    "              clip (BVH), the balls and a report (simulate --help)\n"
    "  batch       the simulate jobs of a JSON Lines manifest, N at once (batch --help)\n"
    "  torques     the feedforward joint torques of a clip (inverse dynamics), as CSV\n"
    "  gains init  a starting gains file for tracking a clip\n"
    "  selfcheck   check the dynamics on the bundled humanoid and Bender tree\n"
    "              against independent algorithms (ABA vs CRBA, RNEA after ABA)\n"
    "  bench       timings: dynamics, contact step, simulation, sleeping (bench --help)\n"
    "  help        this text\n"
    "\n"
    "options:\n"
    "  -h, --help     this text (each command also takes --help)\n"
    "  --version      print the version\n"
    "\n"
    "exit codes: 0 ok, 1 failure, 2 bad input or usage\n";

bool is_help(const char* arg) {
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

bool parse_positive_int(const char* opt, const char* text, int* out) {
    char* end = NULL;
    const long v = text ? strtol(text, &end, 10) : 0;
    if (!text || *text == '\0' || *end != '\0' || v < 1 || v > 1000000000L) {
        fprintf(stderr, "featherbone: %s: expected a positive integer, found '%s'\n", opt,
                text ? text : "(nothing)");
        return false;
    }
    *out = (int)v;
    return true;
}

bool parse_positive_double(const char* opt, const char* text, double* out) {
    char* end = NULL;
    const double v = text ? strtod(text, &end) : 0.0;
    if (!text || *text == '\0' || *end != '\0' || !(v > 0.0) || v > 1e9) {
        fprintf(stderr, "featherbone: %s: expected a positive number, found '%s'\n", opt,
                text ? text : "(nothing)");
        return false;
    }
    *out = v;
    return true;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fputs(USAGE, stderr);
        return EXIT_USAGE;
    }
    const char* cmd = argv[1];
    if (is_help(cmd) || strcmp(cmd, "help") == 0) {
        fputs(USAGE, stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("featherbone %s\n", FB_VERSION_STRING);
        return EXIT_OK;
    }
    if (strcmp(cmd, "selfcheck") == 0) {
        return cmd_selfcheck(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "bench") == 0) {
        return cmd_bench(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "info") == 0) {
        return cmd_info(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "convert") == 0) {
        return cmd_convert(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "export-model") == 0) {
        return cmd_export_model(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "torques") == 0) {
        return cmd_torques(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "simulate") == 0) {
        return cmd_simulate(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "batch") == 0) {
        return cmd_batch(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "gains") == 0) {
        return cmd_gains(argc - 2, argv + 2);
    }
    fprintf(stderr, "featherbone: unknown command '%s' (expected one of: simulate, batch, info, convert, export-model, torques, gains, selfcheck, bench, help)\n",
            cmd);
    return EXIT_USAGE;
}
