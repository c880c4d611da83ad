/*
 * job_status.h - the job statuses a results file holds (results/RESULTS.md): one X-macro table
 * with, per status, whether it counts as a failure, its severity (what the CI gate and the
 * report's baseline section compare: a status whose severity grew is a regression) and its
 * JUnit element. The harness, the results validator and the report all read this table.
 */
#ifndef GS_JOB_STATUS_H
#define GS_JOB_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Severity: 0 ran and passed, 1 did not run on this generation (not a failure), 2 failed.
 * Statuses of equal severity are "changed", neither better nor worse (fail -> crash). */
#define GS_JOB_SEVERITY_PASS 0
#define GS_JOB_SEVERITY_SKIP 1
#define GS_JOB_SEVERITY_FAIL 2

/* X(enum, name, counts as failure, severity, JUnit element or NULL for a passing testcase) */
#define GS_JOB_STATUS_TABLE(X)                                                                     \
    X(GS_JOB_PASS, "pass", 0, GS_JOB_SEVERITY_PASS, NULL)                                          \
    X(GS_JOB_FAIL, "fail", 1, GS_JOB_SEVERITY_FAIL, "failure")                                     \
    X(GS_JOB_UNSUPPORTED, "unsupported", 0, GS_JOB_SEVERITY_SKIP, "skipped")                       \
    X(GS_JOB_DOES_NOT_FIT, "does-not-fit", 0, GS_JOB_SEVERITY_SKIP, "skipped")                     \
    X(GS_JOB_CRASH, "crash", 1, GS_JOB_SEVERITY_FAIL, "error")                                     \
    X(GS_JOB_TIMEOUT, "timeout", 1, GS_JOB_SEVERITY_FAIL, "error")                                 \
    X(GS_JOB_DEADLOCK, "deadlock", 1, GS_JOB_SEVERITY_FAIL, "failure")                             \
    X(GS_JOB_ERROR, "error", 1, GS_JOB_SEVERITY_FAIL, "error")

typedef enum gs_job_status {
#define GS_JS_ENUM(e, n, f, s, j) e,
    GS_JOB_STATUS_TABLE(GS_JS_ENUM)
#undef GS_JS_ENUM
        GS_JOB_STATUS_COUNT
} gs_job_status;

/* "?" for a value outside the table. */
const char *gs_job_status_name(gs_job_status s);
/* 1 for a value outside the table (an unknown status never passes). */
int gs_job_status_is_failure(gs_job_status s);
/* GS_JOB_SEVERITY_FAIL for a value outside the table. */
int gs_job_status_severity(gs_job_status s);
/* "failure", "error", "skipped", or NULL for a pass; "error" for a value outside the table. */
const char *gs_job_status_junit(gs_job_status s);
/* The status named name, or -1 when the table has no such name (or name is NULL). */
int gs_job_status_parse(const char *name);

#ifdef __cplusplus
}
#endif
#endif
