/*
 * workload.h - model-level workloads (`gensweep workload run`): one model layer as a list of
 * suite-kernel invocations whose shapes are integer expressions of named model dimensions
 * (workloads/README.md: the file format and which kernel stands for which layer step).
 *
 * Loading checks the whole file (YAML, kernels, dimension expressions) and reports every
 * problem at its file:line:col; running puts every invocation x variant into one timing-only
 * sweep through the sweep library (one job per process, the one job path) and takes the
 * fastest variant that ran for each invocation. Never prints and never exits.
 */
#ifndef GS_WORKLOAD_H
#define GS_WORKLOAD_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "gs/common.h"
#include "gs/jsonw.h"
#include "gs/kernel.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_WL_MAX_DIMS 32
#define GS_WL_MAX_STEPS 64
#define GS_WL_NAME_MAX 64
#define GS_WL_DEFAULT_OUT "build/workload"
#define GS_WL_DEFAULT_DIR "workloads" /* the workloads of `sweep --suite model` */

/* Evaluate an integer expression (decimal literals, names, + - * /, unary -, parentheses) with
 * the named values. GS_OK with *out, or GS_ERR_PARSE with err naming the problem: unknown name,
 * division by zero, a remainder (division must be exact), overflow, syntax; *pos (when not
 * NULL) receives the 0-based offset of the problem in expr. Positivity is the caller's check. */
gs_status gs_wl_expr_eval(const char *expr, const char *const *names, const int64_t *values, int n,
                          int64_t *out, size_t *pos, gs_error *err);

typedef struct gs_wl_step {
    char name[GS_WL_NAME_MAX];
    const gs_kernel_def *kernel;
    int n_dims;
    int64_t dims[GS_SUITE_MAX_DIMS];
    int64_t count; /* the kernel runs this many times (heads run one after another) */
    int variant;   /* the one variant the step allows (variant: in the file), or -1: the fastest */
    char note[512];
    int line; /* of the step in the file */
} gs_wl_step;

typedef struct gs_workload {
    char path[4096];
    char name[GS_WL_NAME_MAX];
    char phase[16]; /* "prefill" or "decode" */
    gs_dtype dtype;
    int n_dims;
    char dim_names[GS_WL_MAX_DIMS][GS_WL_NAME_MAX];
    int64_t dim_values[GS_WL_MAX_DIMS];
    int64_t batch; /* tokens per layer pass in decode: the "batch" dimension (1 when absent) */
    int n_steps;
    gs_wl_step steps[GS_WL_MAX_STEPS];
} gs_workload;

/* Load and check a workload file. dim_sets ("name=value", n_dim_sets of them) replace a
 * dimension's value before the shapes are evaluated. NULL with every problem in d (located
 * file:line:col; GS_ERR_IO for a file that cannot be read, GS_ERR_PARSE for its content). */
gs_workload *gs_workload_load(const char *path, const char *const *dim_sets, size_t n_dim_sets,
                              gs_diags *d);
void gs_workload_free(gs_workload *w); /* NULL ok */

typedef struct gs_wl_row {
    int variant;     /* the chosen variant (fastest that passed); -1 when none ran */
    double time_ns;  /* one run x count; NAN when none ran */
    double one_ns;   /* one run */
    double bound_ns; /* the run's roofline bound x count (NAN when absent) */
    double bound_ratio;
    char bottleneck[64];
    char status[32]; /* "pass" or the best status among the variants (unsupported, ...) */
    char reason[256];
    int variants_tried;
} gs_wl_row;

typedef struct gs_wl_result {
    char generation[128];
    gs_wl_row rows[GS_WL_MAX_STEPS];
    double time_ns; /* sum of the rows that ran */
    int n_failed;   /* rows that could not run */
    int interrupted;
    int records_unwritten; /* the job records could not be written to the out folder (said in
                            * the diagnostics) */
} gs_wl_result;

/* Run every step on so's one config (so->configs[0], with so->sets) and write the job records
 * (results.json, results.csv, junit.xml) to so->out_dir. GS_OK when the sweep ran (r->n_failed
 * says how many steps could not, r->records_unwritten whether the records were not written);
 * GS_ERR_USAGE for a config that does not load; another status when the jobs could not run. */
gs_status gs_workload_run(const gs_workload *w, const gs_sweep_opts *so, gs_wl_result *r,
                          gs_diags *d);

/* The parts of gs_workload_run, for a sweep that runs workloads among other jobs (`sweep --suite
 * model`, workload_suite.c). Add w's jobs on config ci of s: every step x variant it allows, each
 * job once (one an earlier step or another workload already added is shared). 0, or -1 when
 * out of memory. */
int gs_workload_add_jobs(const gs_workload *w, gs_sweep *s, size_t ci);
/* w's rows on config ci from the sweep's results document (RESULTS.md): per step the fastest
 * variant that passed; a step with no record of any of its jobs is "missing" (its reason says
 * whether the sweep was interrupted). */
void gs_workload_collect(const gs_workload *w, const gs_sweep *s, size_t ci, const cJSON *doc,
                         int interrupted, gs_wl_result *r);

/* The members of one result inside an open JSON object (workload_json.c): "rows", "time_ns"
 * (the sum of the rows that ran), "complete", "steps_not_run", "tokens_per_s_per_layer" (decode
 * and complete only, else null); results/RESULTS.md. The caller writes "generation". */
void gs_workload_json_result(gs_jw *j, const gs_workload *w, const gs_wl_result *r);
/* The whole `workload run --json` document (schema "gensweep-workload"), ending in a newline. */
void gs_workload_json(gs_sb *sb, const gs_workload *w, const gs_wl_result *r);

/* The workloads of a model sweep (workload_suite.c). */
typedef struct gs_wl_suite {
    gs_workload **w;
    size_t n;
} gs_wl_suite;

/* The workloads of `sweep --suite model`: the files of list (comma-separated), or with list NULL
 * every *.yaml of dir (sorted by name). GS_OK, or the loader's problems in d (file:line:col) and
 * GS_ERR_USAGE / GS_ERR_PARSE; ws is then empty. */
gs_status gs_wl_suite_load(gs_wl_suite *ws, const char *list, const char *dir, gs_diags *d);
void gs_wl_suite_free(gs_wl_suite *ws); /* its workloads; ws itself is the caller's */
/* Every workload's jobs on every config of s. 0, or -1 (out of memory, in d). */
int gs_wl_suite_plan(const gs_wl_suite *ws, gs_sweep *s, gs_diags *d);
/* The results of every workload on every config, [workload * configs + config]; NULL when out
 * of memory. Free with gs_free. */
gs_wl_result *gs_wl_suite_collect(const gs_wl_suite *ws, const gs_sweep *s, const cJSON *doc,
                                  int interrupted);
/* workloads.json (results/RESULTS.md, schema "gensweep-workloads") of those results. */
void gs_wl_suite_json(gs_sb *sb, const gs_wl_suite *ws, const gs_sweep *s, const gs_wl_result *res,
                      int interrupted);

#ifdef __cplusplus
}
#endif
#endif
