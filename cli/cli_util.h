/*
 * cli_util.h - what the gensweep commands share: argument parsing (--set and positionals) and
 * printing the libraries' diagnostics, files named by a bare name. The strict number parsers
 * are harness/job/parse.h.
 */
#ifndef GS_CLI_UTIL_H
#define GS_CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gs/common.h"
#include "gs/config.h"
#include "gs/strbuf.h"
#include "parse.h" /* the strict number parsers the commands use */

#ifdef __cplusplus
extern "C" {
#endif

/* The parsed arguments of one subcommand: repeated `--set K=V` values and positionals, as
 * pointers into argv. */
typedef struct gs_cli_args {
    const char **sets;
    size_t n_sets;
    const char **pos;
    size_t n_pos;
} gs_cli_args;

/* Parse argv[1..argc) (argv[0] is the subcommand name). Accepts `--set K=V`, `--set=K=V` and
 * `--` (everything after it is positional). When allow_set is 0, --set is an unknown option.
 * On a bad option prints "gensweep CMD: ..." with a hint to stderr and returns -1; on success
 * returns 0. Free with gs_cli_args_free. */
int gs_cli_parse(int argc, char **argv, int allow_set, gs_cli_args *out);
void gs_cli_args_free(gs_cli_args *a);

/* Print every problem in d to stderr, one line each: a problem with a file as
 * "file:line:col: message", a command's own (no file) as "gensweep CMD: message". */
void gs_cli_print_diags(const char *cmd, const gs_diags *d);

/* The same, each line as it is ("file:line:col: message", or the bare message), with terminal
 * control characters escaped (messages quote text from config files): `run`, `disasm`, `nki`. */
void gs_cli_print_diags_escaped(const gs_diags *d);

/* The file a command-line argument stands for: ARG itself when it is a path, else the bare
 * name (gen3, llama3-8b-decode-4k, cases) looked up in ./SUBDIR, then in the installed data
 * directory (harness/sweep/datadir.h), copied into buf (GS_CLI_PATH_MAX bytes). Returns buf, or
 * NULL after printing "gensweep CMD: OPT 'ARG': message" (the places looked in) to stderr. OPT may
 * be NULL. */
#define GS_CLI_PATH_MAX 4096

/* s as terminal text (gs_sb_term: control and direction characters escaped) in sb, which is
 * reset first: names from workload and result files printed with printf's field widths. */
const char *gs_cli_term(gs_sb *sb, const char *s);
const char *gs_cli_data_file(const char *cmd, const char *opt, const char *subdir, const char *what,
                             const char *arg, char *buf);

#ifdef __cplusplus
}
#endif
/* `--lines [N]` of run and nki run: how many source lines without a count, and at most. */
#define GS_CLI_LINES_DEFAULT 10
#define GS_CLI_LINES_MAX 100000
/* Whether argv[i + 1] is --lines' count: a next word that is not an option ("-3" is a count,
 * a bad one). */
int gs_cli_lines_has_count(int argc, char **argv, int i);
/* The count of --lines (1 .. GS_CLI_LINES_MAX) into *out; 0 after printing "gensweep CMD:
 * --lines: why". */
int gs_cli_parse_lines(const char *cmd, const char *s, int *out);

#endif
