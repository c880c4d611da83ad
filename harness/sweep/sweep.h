/*
 * sweep.h - the generation sweep: plan jobs (configs x kernels x variants x shapes x dtypes),
 * run each in its own process (the gensweep binary itself: `run ... --record FILE`), at most N
 * at once, with a timeout and a memory limit per job, and assemble results.json (harness/
 * RESULTS.md), results.csv and junit.xml.
 *
 * The library prints nothing and never exits: problems come back in a gs_diags or gs_error,
 * progress through a callback in the options; `gensweep sweep` (cmd_sweep.c) prints them and maps
 * the exit status. Files: sweep_plan.c (configs, kernels, tuning -> job list), sweep_exec.c (job
 * processes through the runner proc.h: timeout, memory limit, reaping; the output directory's
 * lock), sweep_output.c (the results document, baselines, the report).
 *
 * Isolation: a job killed by a signal is "crash" (with its stderr tail), one that outlives the
 * timeout has its process group killed and is "timeout", one that exits without a record is
 * "error"; every other job's record is kept. SIGINT/SIGTERM stop launching, kill the running
 * jobs and still write the outputs, marked "complete": false, "interrupted": true.
 *
 * Not done here: nothing is retried; a job's record is trusted as written.
 */
#ifndef GS_SWEEP_H
#define GS_SWEEP_H

#include <cjson/cJSON.h>

#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_sweep_suite {
    GS_SWEEP_CHECK = 1, /* check shapes, functional + timing */
    GS_SWEEP_PERF = 2,  /* perf shapes, timing only */
    GS_SWEEP_ALL = 3,
    GS_SWEEP_CUSTOM = 4, /* jobs added one by one (tune) */
    GS_SWEEP_MODEL = 8   /* model-level workloads: their jobs added by the session
                            (harness/workload, `sweep --suite model`); timing only */
} gs_sweep_suite;

/* What the sweep tells its progress callback. */
typedef enum gs_sweep_event {
    GS_SWEEP_JOB_DONE, /* a job finished (its record is given) */
    GS_SWEEP_TICK,     /* about every 0.5 s while jobs run (for a live status line) */
    GS_SWEEP_END       /* the last call: every job finished, or the sweep was interrupted */
} gs_sweep_event;

typedef struct gs_sweep_progress {
    gs_sweep_event event;
    size_t done, total; /* jobs finished / to run in this shard */
    int failures;       /* finished jobs that failed (gs_job_status_is_failure) */
    double elapsed_s;   /* since the first job started */
    int quiet;          /* the options' quiet: report failures only */
    /* GS_SWEEP_JOB_DONE only: */
    const char *id;
    const cJSON *record; /* the job's record (RESULTS.md), NULL when it could not be built */
    int failed;          /* the record is a failure (or missing) */
} gs_sweep_progress;

typedef void (*gs_sweep_progress_fn)(void *ctx, const gs_sweep_progress *p);

typedef struct gs_sweep_opts {
    const char *const *configs; /* files or directories (their *.yaml); NULL/0: "configs" */
    size_t n_configs;
    const char *kernels; /* comma-separated names; NULL: every kernel */
    gs_sweep_suite suite;
    int jobs;                     /* processes at once; <= 0: number of CPUs */
    int shard_index, shard_count; /* 1-based; 0/0: 1/1 */
    const char *out_dir;          /* NULL: GS_SWEEP_DEFAULT_OUT */
    const char *const *baselines; /* compare against these (results, baseline files or dirs) */
    size_t n_baselines;
    double threshold;        /* relative time threshold for regressions */
    const char *const *sets; /* --set KEY=VALUE for every config */
    size_t n_sets;
    double timeout_s;              /* per job; <= 0: GS_SWEEP_DEFAULT_TIMEOUT */
    double mem_limit;              /* bytes of address space per job; 0: none */
    int quiet;                     /* no progress and no summary (passed on to the callback) */
    const char *trace_dir;         /* write each job's Perfetto trace there, or NULL */
    int no_tuning;                 /* ignore configs/tuning/<gen>.json */
    int no_report;                 /* do not write report.html */
    int timelines;                 /* -1 default (check jobs only), 0 none, 1 every job */
    gs_sweep_progress_fn progress; /* called as jobs finish (NULL: silent) */
    void *progress_ctx;
} gs_sweep_opts;

#define GS_SWEEP_DEFAULT_OUT "build/sweep"
#define GS_SWEEP_DEFAULT_TIMEOUT 600.0
#define GS_SWEEP_DEFAULT_MEM_LIMIT (4.0 * 1024 * 1024 * 1024)

/* Defaults: check suite, 2% threshold, check-job timelines, the default memory limit (none
 * under AddressSanitizer, which reserves terabytes of address space), no progress callback. */
void gs_sweep_opts_default(gs_sweep_opts *o);

/* Most configs and --set values one sweep takes from a command line. */
#define GS_SWEEP_MAX_LIST 64

typedef struct gs_sweep gs_sweep;

/*
 * Diagnostics: the library prints nothing. Problems go into a gs_diags the caller prints: the
 * config loader's as they are (located by file[:line:col]); the sweep's own with an empty file
 * and a message meant to follow the command name ("gensweep sweep: ...").
 */

/* Load the configs (applying the --set overrides). NULL with the problems in diags. */
gs_sweep *gs_sweep_create(const gs_sweep_opts *o, gs_diags *diags);
void gs_sweep_free(gs_sweep *s); /* NULL ok */
/* The options with their defaults resolved (jobs, shard, out_dir, timeout). */
const gs_sweep_opts *gs_sweep_options(const gs_sweep *s);

/* Plan the suite's jobs (every config x selected kernel ...), sorted by id. Returns 0, or -1
 * with the error in diags (unknown kernel: a usage error). Warnings (a tuning file that is
 * ignored) are added to diags either way. */
int gs_sweep_plan(gs_sweep *s, gs_diags *diags);
/* Add one job (tune, what-if, workloads). cfg_index selects a loaded config. The jobs added
 * so are the plan ("planned_jobs"). Returns 0 or -1 (OOM). */
int gs_sweep_add(gs_sweep *s, size_t cfg_index, const gs_job_spec *spec, int functional);
size_t gs_sweep_config_count(const gs_sweep *s);
const gs_config *gs_sweep_config(const gs_sweep *s, size_t i);
const char *gs_sweep_config_path(const gs_sweep *s, size_t i); /* the file it was loaded from */
size_t gs_sweep_job_count(const gs_sweep *s);
const char *gs_sweep_job_id(const gs_sweep *s, size_t i); /* planned order; NULL past the end */
/* The tuning file config i uses (1, path in buf), or 0 (none, or --no-tuning). */
int gs_sweep_tuning_path(const gs_sweep *s, size_t i, char *buf, size_t size);

/* Make the output (and trace) directory and lock it for this sweep: the descriptor to keep
 * open (closing it releases the lock), or -1 with err (not a directory, in use by another
 * sweep, ...: bad input, before any job runs). A --trace-dir other than the output directory
 * is locked too (in use by another sweep, as its --out or --trace-dir: the same error); s holds
 * that lock until gs_sweep_free. */
int gs_sweep_lock_out(gs_sweep *s, gs_error *err);

/* Run the jobs of this shard and return the results document (RESULTS.md), or NULL with err
 * (the job directory cannot be made, out of memory). *interrupted is set when SIGINT/SIGTERM
 * stopped it. Progress goes to the options' callback. */
cJSON *gs_sweep_execute(gs_sweep *s, int *interrupted, gs_error *err);

/* Read and merge the --baseline files: NULL when there are none, or on error with err set and
 * *failed = 1 (before anything runs, so a bad path costs no sweep). */
cJSON *gs_sweep_load_baselines(const gs_sweep_opts *o, int *failed, gs_error *err);

/* Write the report (html) of results_path (the sweep's results.json), with the first baseline
 * when it is a results file, the tuning files the sweep used and n_extra more report inputs
 * (a calibrate --json file, the workloads.json of a model sweep). GS_OK or the report's error
 * in err. */
gs_status gs_sweep_write_report(const gs_sweep *s, const char *results_path, const char *html,
                                const char *const *extra, int n_extra, gs_error *err);

/* 1 when a job record's status counts as a failure (an unknown or missing status too). */
int gs_sweep_record_failed(const cJSON *rec);

#ifdef __cplusplus
}
#endif
#endif
