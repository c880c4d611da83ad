/*
 * compare.h - regressions between two result sets, and the committed check-suite baselines.
 *
 * A job regressed when its simulated time grew by more than the threshold, its status got worse
 * (pass < unsupported = does-not-fit < fail = crash = timeout = deadlock = error), or its
 * max abs error grew by more than GS_COMPARE_ERR_TOL_FRACTION of the job's absolute tolerance
 * (the new results' error.tol_abs, else the baseline's tol_abs; with neither, by more than
 * GS_COMPARE_ERR_REL_FALLBACK of the old error). Simulated time is exact, but errors are
 * measured against the host BLAS, whose rounding differs between CPUs, so errors are never
 * compared for exact equality. A job of the baseline that is missing from the new results counts as
 * a regression when the new results ran its generation and kernel at all (a sweep of a subset does
 * not report the rest as missing). Improvements and new jobs are listed too.
 *
 * Either side may be a results.json (harness/RESULTS.md) or a baseline file
 * {"schema": "gensweep-baseline", "schema_version": 1, "generation": "gen2", "suite": "check",
 *  "jobs": [{"id": .., "status": .., "time_ns": .., "max_abs": .., "tol_abs": ..}]}
 * (tests/baselines/; tol_abs may be absent in older files).
 */
#ifndef GS_COMPARE_H
#define GS_COMPARE_H

#include <stdio.h>

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An error regresses when it grows by more than this fraction of the job's tolerance. */
#define GS_COMPARE_ERR_TOL_FRACTION 0.10
/* ... or, when neither side records a tolerance, by more than this fraction of itself. */
#define GS_COMPARE_ERR_REL_FALLBACK 0.10

typedef struct gs_compare_summary {
    int compared; /* jobs in both */
    int regressions;
    int improvements;
    int changed; /* status changed without getting worse (e.g. fail -> crash) */
    int added;   /* in new only */
    int missing; /* in base only and counted as regressions */
} gs_compare_summary;

/* Compare base and cur (documents with a "jobs" array), print one line per finding to out
 * (NULL: silent). threshold is relative (0.02 = 2%). */
void gs_compare_docs(const cJSON *base, const cJSON *cur, double threshold, FILE *out,
                     gs_compare_summary *sum);

/* Load a results.json, a baseline file, or a directory of baseline files (every *.json in it)
 * into one document with a "jobs" array. NULL with err set. */
cJSON *gs_compare_load(const char *path, gs_error *err);

/* Write the reduced check-suite baselines of a results document: dir/check-<generation>.json
 * per generation. Prints each path written to out (NULL: silent). */
gs_status gs_baseline_write(const cJSON *results, const char *dir, FILE *out, gs_error *err);

/* Parse "2%" / "0.02" into a relative threshold. Returns 0 or -1. */
int gs_compare_parse_threshold(const char *s, double *out);

#ifdef __cplusplus
}
#endif
#endif
