/*
 * jobrun.h - the one job pipeline: build -> initialise memory -> run (SystemC model, or the
 * pure-C executor) -> roofline check -> output check, and the job's record (results/RESULTS.md).
 * `gensweep run` is this plus option parsing and printing; a sweep job is the same pipeline
 * called in the forked child with the request the sweep built (worker.h: the server cli registers,
 * gs_run_serve in cli/cmd_run.c).
 */
#ifndef GS_JOBRUN_H
#define GS_JOBRUN_H

#include "gs/stats.h"
#include "gs/strbuf.h"
#include "job.h"
#include "jobspec.h" /* gs_job_run_opts */
#include "lines.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lower this process's address-space limit to bytes (0: leave it), never above what it
 * inherited (a sweep job inherits the sweep's). GS_OK; GS_ERR_UNSUPPORTED with err (nothing
 * set: a warning) in an AddressSanitizer build, which reserves terabytes of address space;
 * GS_ERR_IO with err when the limit cannot be set. */
gs_status gs_job_limit_memory(double bytes, gs_error *err);

typedef struct gs_job_result {
    gs_job_status status;
    gs_status st;  /* GS_OK, or what stopped the pipeline (err says why) */
    gs_error err;  /* with the kernel's line for kernel errors */
    int bad_input; /* the kernel refused the shape/params/dtype: a usage error */
    int ran_model; /* stats are the model's */
    gs_run_stats stats;
    gs_job_check check;
    gs_job *job;           /* the built job (NULL when it could not be created) */
    gs_sb timeline;        /* the aggregated timeline (opts.timeline and the model ran) */
    gs_status timeline_st; /* GS_OK, or why the timeline is missing (timeline_err says) */
    gs_error timeline_err;
    gs_error trace_err; /* code GS_OK, or why the trace was not written (the job goes on) */
    int want_timeline, want_lines; /* what the run's timeline is turned into */
    gs_lines lines;                /* the source lines' costs (opts.lines and the model ran) */
    gs_status lines_st;            /* GS_OK, or why the lines are missing (lines_err says) */
    gs_error lines_err;
} gs_job_result;

/*
 * Run spec through the pipeline into r (free with gs_job_result_free). The job's status is in
 * r->status: a check shape that does not fit is a failure (a kernel must run its own check
 * shapes everywhere). Returns GS_OK when the pipeline ran (whatever the status), or
 * GS_ERR_USAGE with r->err for options that cannot go together (--executor c with timing only).
 */
gs_status gs_job_run(const gs_job_spec *spec, const gs_job_run_opts *o, gs_job_result *r);
void gs_job_result_free(gs_job_result *r); /* NULL ok */

/*
 * Append the job record (one RESULTS.md "jobs" element and a newline). The model's statistics
 * count only when the run completed (pass or wrong results); a deadlock or timeout has no
 * metrics, and an unchecked (timing-only) run has "error": null. A timeline that cannot be
 * built from the trace leaves it out with the reason in warn. A scratch trace is removed.
 * GS_OK or GS_ERR_NOMEM (GS_ERR_INTERNAL: the record writer misused the JSON writer).
 */
gs_status gs_job_record(gs_sb *sb, const gs_job_spec *spec, const gs_job_run_opts *o,
                        const gs_job_result *r, gs_error *warn);

/* Append the human-readable report of a run (what `gensweep run` prints): generation, kernel,
 * shape, the model's statistics when it completed, the check and the status. */
void gs_job_text(gs_sb *sb, const gs_job_spec *spec, const gs_job_run_opts *o,
                 const gs_job_result *r);

#ifdef __cplusplus
}
#endif
#endif
