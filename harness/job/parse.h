/*
 * parse.h - the one strict parser for every number, shape and kernel param given as text (on a
 * command line, in a job spec, in a results file's job id): plain decimal digits (a '-' only
 * where negatives are allowed), no leading blanks or '+', no trailing junk, no silent
 * saturation (a value out of range is an error naming the range), any length.
 */
#ifndef GS_PARSE_H
#define GS_PARSE_H
#include <stddef.h>
#include <stdint.h>

#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif
