/*
 * cli_util.h - option parsing shared by gensweep subcommands, and the one strict parser for
 * every number, shape and kernel param given on a command line: plain decimal digits (a '-'
 * only where negatives are allowed), no leading blanks or '+', no trailing junk, no silent
 * saturation (a value out of range is an error naming the range), any length.
 */
#ifndef GS_CLI_UTIL_H
#define GS_CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gs/common.h"
#include "gs/config.h"

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

/* An integer in [lo, hi]. 0, or -1 with err (GS_ERR_USAGE) saying what was expected. */
int gs_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out, gs_error *err);
/* An unsigned integer in [0, hi] (seeds: 0 .. UINT64_MAX; "-1" is an error, not 2^64-1). */
int gs_parse_uint(const char *s, uint64_t hi, uint64_t *out, gs_error *err);
/* A finite decimal number ("1", "-0.5", "2.5e-3"; no hex, inf or nan) in [lo, hi]. */
int gs_parse_real(const char *s, double lo, double hi, double *out, gs_error *err);
/* A byte size: a number with an optional unit B, K/KiB, M/MiB, G/GiB, T/TiB (powers of 1024),
 * at most 2^62 bytes. */
int gs_parse_size(const char *s, double *out, gs_error *err);
/* A shape "AxBxC" (also ',' or 'X' between dims): 1..max positive integers <= 2^40, nothing
 * before, between or after but single separators. */
int gs_parse_shape(const char *s, int64_t *dims, int max, int *n, gs_error *err);
/* "NAME=VALUE" with NAME one of names[0..n_names) and VALUE an integer in [0, 2^62]: the index
 * of NAME and the value. The error lists the names. */
int gs_parse_param(const char *s, const char *const *names, int n_names, int *idx, int64_t *value,
                   gs_error *err);

/* A regression threshold (compare, sweep --baseline, history gate): "2%" (a percentage) or
 * "0.02" (a fraction), 0 .. 1e12. 0 with *out the relative threshold, or -1. */
int gs_compare_parse_threshold(const char *s, double *out);

/* The config at path with the overrides sets[0..n_sets) and then extra (when not NULL) applied.
 * NULL with every problem appended to diags (a config that loads adds nothing). */
gs_config *gs_cli_load_config(const char *path, const char *const *sets, size_t n_sets,
                              const char *extra, gs_diags *diags);
/* Print every problem in d to stderr, one line each: a problem with a file as
 * "file:line:col: message", a command's own (no file) as "gensweep CMD: message". */
void gs_cli_print_diags(const char *cmd, const gs_diags *d);

#ifdef __cplusplus
}
#endif
#endif
