/*
 * across.h - `gensweep compare --across BASE OTHER [results.json...]`: which generation is
 * faster on what. Jobs of two generations are matched by kernel/variant/dtype/shape (see
 * reports/speedup.h, which the report uses too), and the command prints each matched job's
 * speedup (time on BASE / time on OTHER), the geometric mean per kernel class and overall.
 * Exit 0 when at least one pair was compared; 2 for usage errors, unreadable or malformed
 * results, a generation in none of the files, or nothing to compare.
 */
#ifndef GS_ACROSS_H
#define GS_ACROSS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Results read when none is named. */
#define GS_ACROSS_DEFAULT_RESULTS "build/sweep/results.json"

/* Print the comparison of base vs other over the jobs of docs[0..n) (results documents) to
 * out; errors to errout. mode: NULL for every job, else only jobs whose "mode" equals it
 * ("timing", "functional"). quiet: summary lines only. Returns the exit status. */
int gs_across_run(const cJSON *const *docs, size_t n, const char *base, const char *other,
                  const char *mode, int quiet, FILE *out, FILE *errout);

/* The command: argv[0] is "compare" and --across is among the arguments. */
int gs_across_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
