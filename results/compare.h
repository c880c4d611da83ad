/*
 * compare.h - one job against its baseline (gs_compare_job), the one judgement the CI gate
 * (`sweep --baseline`, `baseline check`), `gensweep compare`, `history gate` and the report's
 * baseline section all use; whole result sets (gs_compare_docs); the committed check-suite
 * baselines.
 *
 * A job regressed when its simulated time grew by more than the threshold, its status got worse
 * (its severity in results/job_status.h grew: pass < unsupported = does-not-fit < fail = crash =
 * timeout = deadlock = error), or its max abs error grew by more than
 * GS_COMPARE_ERR_TOL_FRACTION of the job's absolute tolerance (the new results' error.tol_abs,
 * else the baseline's tol_abs; with neither, by more than GS_COMPARE_ERR_REL_FALLBACK of the old
 * error). Simulated time is exact, but errors are measured against the host BLAS, whose rounding
 * differs between CPUs, so errors are never compared for exact equality. A job whose status got
 * worse or better is judged on its status alone. A job of the baseline that is missing from the
 * new results counts as a regression when the new results ran its generation and kernel at all
 * (a sweep of a subset does not report the rest as missing). Improvements and new jobs are
 * listed too.
 *
 * Either side may be a results.json (results/RESULTS.md) or a baseline file
 * {"schema": "gensweep-baseline", "schema_version": 1, "generation": "gen2", "suite": "check",
 *  "jobs": [{"id": .., "status": .., "time_ns": .., "max_abs": .., "tol_abs": ..}]}
 * (tests/baselines/; tol_abs may be absent in older files).
 */
#ifndef GS_COMPARE_H
#define GS_COMPARE_H

#include <stdio.h>

#include "results.h"
#include "results_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An error regresses when it grows by more than this fraction of the job's tolerance. */
#define GS_COMPARE_ERR_TOL_FRACTION 0.10
/* ... or, when neither side records a tolerance, by more than this fraction of itself. */
#define GS_COMPARE_ERR_REL_FALLBACK 0.10

/* Verdicts of one job against the baseline: X(enum, name). */
#define GS_VERDICT_TABLE(X)                                                                        \
    X(GS_VERDICT_SAME, "same")               /* in both, nothing beyond the thresholds */          \
    X(GS_VERDICT_REGRESSION, "regression")   /* worse status, slower, or a larger error */         \
    X(GS_VERDICT_IMPROVEMENT, "improvement") /* better status, or faster */                        \
    X(GS_VERDICT_NEW, "new")                 /* in the new results only */                         \
    X(GS_VERDICT_MISSING, "missing")         /* baseline only, its generation+kernel ran */        \
    X(GS_VERDICT_NOT_RUN, "not-run")         /* baseline only, its generation+kernel did not */

typedef enum gs_verdict {
#define GS_VERDICT_ENUM(e, n) e,
    GS_VERDICT_TABLE(GS_VERDICT_ENUM)
#undef GS_VERDICT_ENUM
        GS_VERDICT_COUNT
} gs_verdict;
const char *gs_verdict_name(gs_verdict v);
/* Whether a verdict fails the gate (a regression, or a missing job). */
int gs_verdict_is_regression(gs_verdict v);

/* What gs_compare_job found for one job; strings point into the documents. */
typedef struct gs_job_diff {
    gs_verdict verdict;
    const char *id;
    const char *base_status, *cur_status; /* "" on a side without the job */
    int status_change;                    /* +1 severity grew, -1 fell, 0 equal */
    int status_renamed;                   /* equal severity, different status (fail -> crash) */
    double base_ns, cur_ns;               /* simulated times, NAN when absent */
    double time_rel;          /* cur / base - 1; NAN unless both are known and base > 0 */
    int time_change;          /* +1 beyond +threshold, -1 beyond -threshold (equal status only) */
    double base_err, cur_err; /* max abs errors, NAN when absent */
    double err_tol;           /* tolerance the growth was judged against, NAN: none recorded */
    int err_regressed;        /* grew beyond the allowance (equal status only) */
    /* Why the job cannot be compared (a static sentence), NULL when it can: with the same
     * status on both sides, a time or a check record (max abs error) on one side only, a pass
     * without a time, or a time that is not a positive number. The verdict is then
     * GS_VERDICT_REGRESSION: a gate never passes what it could not compare. */
    const char *uncomparable;
} gs_job_diff;

/*
 * Judge one job: base and cur are job objects of either file form; either may be NULL (new /
 * baseline-only). cur_ran_kernel says, for a baseline-only job, whether the new results ran its
 * generation and kernel (gs_compare_covers): then it is missing, else not run. threshold is
 * relative (0.02 = 2 %). Fills *d (may be NULL) and returns the verdict.
 */
gs_verdict gs_compare_job(const cJSON *base, const cJSON *cur, int cur_ran_kernel, double threshold,
                          gs_job_diff *d);
/* Does the index of the new results' jobs (gs_json_index_create(jobs, 0)) hold any job of id's
 * generation and kernel (the first two '/'-separated fields)? */
int gs_compare_covers(const gs_json_index *cur, const char *id);
/* The gate's lines for one finding ("REGRESSION  ID: ...", "improved    ...", "changed     ...",
 * "new         ..."), control characters escaped; nothing for a job that is the same or not
 * run. out NULL: nothing. */
void gs_compare_print(FILE *out, const gs_job_diff *d);

typedef struct gs_compare_summary {
    int compared;    /* jobs in both */
    int regressions; /* jobs judged regressions, missing ones included */
    int improvements;
    int changed;     /* status changed without getting worse or better (e.g. fail -> crash) */
    int added;       /* in new only */
    int missing;     /* in base only and counted as regressions */
    int incomplete;  /* the new results say they did not run everything (gs_compare_gaps) */
    int uncompared;  /* jobs in both that cannot be compared (gs_job_diff.uncomparable; not
                      * counted in regressions) */
    int no_baseline; /* generations of the new results without a single baseline job (a
                      * baseline file missing): their jobs are new, none can be compared */
} gs_compare_summary;

/* Whether a comparison fails the gate: a regression, new results that did not all run, a job
 * that cannot be compared, or a generation without a baseline. */
int gs_compare_failed(const gs_compare_summary *sum);
/* The gate's one-line count ("3 compared, 0 regressions, ... 0 missing"), with ", N cannot be
 * compared", ", N generations without a baseline" and ", incomplete" when they apply. */
void gs_compare_summary_line(gs_sb *sb, const gs_compare_summary *sum);

/* What the new results (a results.json document) say did not run: interrupted, marked
 * incomplete (an unsharded file), fewer jobs than its share of "planned_jobs", or a config of
 * an unsharded file without a single job. A gs_free'd sentence, or NULL when nothing is missing
 * (and for a baseline file, which records none of it). A gate passing such a file would pass
 * what did not run. */
char *gs_compare_gaps(const cJSON *cur);

/* Compare base and cur (documents with a "jobs" array): every baseline job in order, then the
 * new ones, through gs_compare_job, then each generation of cur (the first '/'-separated field
 * of its ids) of which base holds no job (one "NO BASELINE" line each, sum->no_baseline), then
 * what cur says did not run (gs_compare_gaps: one "INCOMPLETE" line, sum->incomplete); print
 * the findings to out (NULL: silent). threshold is relative (0.02 = 2%). */
void gs_compare_docs(const cJSON *base, const cJSON *cur, double threshold, FILE *out,
                     gs_compare_summary *sum);

/* Load a results.json, a baseline file, or a directory of baseline files (every *.json in it)
 * into one document with a "jobs" array. NULL with err set. */
cJSON *gs_compare_load(const char *path, gs_error *err);

/* Write the reduced check-suite baselines of a results document: dir/<suite>-<generation>.json
 * per generation. kernels NULL: each file holds the results' jobs of its generation. kernels a
 * comma-separated list: only the generations with jobs of those kernels are written, and each
 * file keeps its other kernels' jobs (a listed kernel's jobs replace its old ones in place).
 * Prints each path written to out (NULL: silent). */
gs_status gs_baseline_write(const cJSON *results, const char *kernels, const char *dir, FILE *out,
                            gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
