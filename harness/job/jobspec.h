/*
 * jobspec.h - the one codec between a job spec (job.h) and its two textual forms: the `run`
 * options that name it (`--kernel K --variant V --dtype T --shape AxB [--param N=V]...
 * [--seed N]`, what a sweep passes to each job process) and its id
 * ("generation/kernel/variant/dtype/shape[/param=value...]", the key of results.json,
 * results/RESULTS.md). Every place that turns a spec into text or text into a spec goes
 * through here, so the three stay in step (round-trip tested in tests/unit/test_jobspec.cpp).
 *
 * The config is not part of the options (the caller names its file with --config); it is part
 * of the id (its generation name).
 */
#ifndef GS_JOBSPEC_H
#define GS_JOBSPEC_H

#include "gs/strbuf.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a job runs (the pipeline: harness/run/jobrun.h). */
typedef struct gs_job_run_opts {
    int functional;      /* 1: data, arithmetic and the output check; 0: timing only */
    int c_executor;      /* the pure-C functional executor instead of the model (no timing) */
    double sim_limit_ns; /* model limits (0: none) */
    double wall_limit_s;
    const char *trace; /* Perfetto trace of the model run, or NULL */
    int timeline;      /* the aggregated timeline in the record (from the run; no trace needed) */
    const char *outputs_dir; /* functional runs: write each output as DIR/NAME.f64, or NULL */
    int lines; /* the costliest source lines (lines.h) in the record and text: how many; 0: none */
} gs_job_run_opts;

/* The job options of a spec, as a NULL-terminated argv (pointers into the struct itself). */
#define GS_JOB_ARGV_MAX (10 + 2 * GS_KERNEL_MAX_PARAMS)
typedef struct gs_job_argv {
    int argc;
    const char *argv[GS_JOB_ARGV_MAX + 1];
    char shape[GS_SUITE_MAX_DIMS * 24];
    char seed[24];
    char params[GS_KERNEL_MAX_PARAMS][96];
} gs_job_argv;

/* --kernel, --variant, --dtype, --shape, then --param NAME=VALUE for each non-zero param (the
 * kernel then chooses that one), and --seed only when it is not the default 1. */
void gs_job_spec_to_argv(const gs_job_spec *spec, gs_job_argv *out);

/* The job options as given on a command line (pointers into argv); NULL: not given. */
typedef struct gs_job_options {
    const char *kernel;
    const char *variant; /* NULL: the kernel's first */
    const char *dtype;   /* NULL: bf16 */
    const char *shape;   /* NULL: the kernel's first check shape */
    const char *params[GS_KERNEL_MAX_PARAMS];
    int n_params;
    uint64_t seed; /* gs_job_options_init: 1 */
} gs_job_options;

void gs_job_options_init(gs_job_options *a);

/* Take one job option at argv[*i] (--kernel/-k, --variant, --dtype, --shape/-s, --param,
 * --seed), advancing *i past its value. 1 when taken, 0 when argv[*i] is not one of them, -1
 * with err (GS_ERR_USAGE) on a missing or bad value ("option --shape needs a value", "--seed:
 * ...", "too many --param options"). */
int gs_job_options_take(gs_job_options *a, int argc, char *const *argv, int *i, gs_error *err);

/* Resolve args on cfg into spec: kernel, variant, dtype, shape (its dims counted against the
 * kernel's), params. GS_ERR_USAGE with err naming the bad value on failure ("unknown kernel
 * 'x'; known: ...", "kernel k has no variant 'v'; variants: ...", "--shape: ...", ...). */
gs_status gs_job_spec_from_options(const gs_job_options *a, const gs_config *cfg, gs_job_spec *spec,
                                   gs_error *err);

/* The suite's kernel called name, or NULL with err "unknown kernel 'name'; known: ...". */
const gs_kernel_def *gs_job_find_kernel(const char *name, gs_error *err);

/* Append the job id "generation/kernel/variant/dtype/shape[/param=value...]" (non-zero params
 * only, in the kernel's param order). The seed is not part of it. */
void gs_job_spec_id(gs_sb *sb, const gs_job_spec *spec);

/* Parse an id of a job on cfg (its generation must be cfg's) into spec (seed 1). GS_ERR_PARSE
 * with err saying which part is wrong. */
gs_status gs_job_spec_from_id(const char *id, const gs_config *cfg, gs_job_spec *spec,
                              gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
