/*
 * sweep.h - the generation sweep: plan jobs (configs x kernels x variants x shapes x dtypes),
 * run each in its own process (the gensweep binary itself: `run ... --record FILE`), at most N
 * at once, with a timeout and a memory limit per job, and assemble results.json (harness/
 * RESULTS.md), results.csv and junit.xml.
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
    GS_SWEEP_CUSTOM = 4 /* jobs added one by one (tune) */
} gs_sweep_suite;

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
    double timeout_s;        /* per job; <= 0: GS_SWEEP_DEFAULT_TIMEOUT */
    double mem_limit;        /* bytes of address space per job; 0: none */
    int quiet;               /* no progress and no summary */
    const char *trace_dir;   /* write each job's Perfetto trace there, or NULL */
    int no_tuning;           /* ignore configs/tuning/<gen>.json */
    int no_report;           /* do not write report.html */
    int timelines;           /* -1 default (check jobs only), 0 none, 1 every job */
    const char *calibration; /* case file (.yaml: run) or calibrate --json result, or NULL */
} gs_sweep_opts;

#define GS_SWEEP_DEFAULT_OUT "build/sweep"
#define GS_SWEEP_DEFAULT_TIMEOUT 600.0
#define GS_SWEEP_DEFAULT_MEM_LIMIT (4.0 * 1024 * 1024 * 1024)

/* Defaults: check suite, 2% threshold, check-job timelines, the default memory limit (none
 * under AddressSanitizer, which reserves terabytes of address space). */
void gs_sweep_opts_default(gs_sweep_opts *o);

/* CLI (cmd_sweep.c): parse one option shared by sweep, baseline and whatif (--configs,
 * --kernels, --suite, -j, --set, --timeout, --mem-limit, --quiet, --no-tuning, --out) at
 * argv[*i]. Returns 1 when consumed, 0 when not one of them, -1 after printing a usage error.
 * cfgs/sets are arrays of at least GS_SWEEP_MAX_LIST entries. */
#define GS_SWEEP_MAX_LIST 64
int gs_sweep_parse_common(int argc, char **argv, int *i, gs_sweep_opts *o, const char **cfgs,
                          size_t *n_cfg, const char **sets, size_t *n_sets);

typedef struct gs_sweep gs_sweep;

/* Load the configs (applying the --set overrides). NULL with the problems printed to stderr
 * (usage/config errors). */
gs_sweep *gs_sweep_create(const gs_sweep_opts *o);
void gs_sweep_free(gs_sweep *s); /* NULL ok */

/* Plan the suite's jobs (every config x selected kernel ...), sorted by id. Returns 0, or -1
 * after printing a usage error (unknown kernel). */
int gs_sweep_plan(gs_sweep *s);
/* Add one job (tune, what-if). cfg_index selects a loaded config. Returns 0 or -1 (OOM). */
int gs_sweep_add(gs_sweep *s, size_t cfg_index, const gs_job_spec *spec, int functional);
size_t gs_sweep_config_count(const gs_sweep *s);
const gs_config *gs_sweep_config(const gs_sweep *s, size_t i);
const char *gs_sweep_config_path(const gs_sweep *s, size_t i); /* the file it was loaded from */
size_t gs_sweep_job_count(const gs_sweep *s);

/* Run the jobs of this shard and return the results document (RESULTS.md), or NULL on OOM.
 * *interrupted is set when SIGINT/SIGTERM stopped it. */
cJSON *gs_sweep_execute(gs_sweep *s, int *interrupted);

/* The whole `gensweep sweep`: create, plan, execute, write the outputs into out_dir, compare
 * with baselines, write the report. Returns the exit status (0 ok, 1 failures/regressions/
 * interrupted, 2 usage). */
int gs_sweep_main(const gs_sweep_opts *o);

#ifdef __cplusplus
}
#endif
#endif
