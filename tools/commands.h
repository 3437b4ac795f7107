/* The featherbone subcommands. Each takes argc/argv after the subcommand name and returns the
 * process exit code: 0 ok, 1 failure, 2 bad input or usage. */
#ifndef FB_TOOLS_COMMANDS_H
#define FB_TOOLS_COMMANDS_H

#include <stdbool.h>

int cmd_selfcheck(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_bench_push(int argc, char** argv); /* `bench push` (tools/cmd_bench_push.c) */
int cmd_info(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_export_model(int argc, char** argv);
int cmd_torques(int argc, char** argv);
int cmd_gains(int argc, char** argv);
int cmd_simulate(int argc, char** argv);
int cmd_batch(int argc, char** argv);

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* True when argv[i] is -h or --help. */
bool is_help(const char* arg);

/* Parses a positive int option value; prints an error naming the option and returns false if
 * it is not one. */
bool parse_positive_int(const char* opt, const char* text, int* out);

/* The same for a positive number (at most 1e9). */
bool parse_positive_double(const char* opt, const char* text, double* out);

#endif /* FB_TOOLS_COMMANDS_H */
