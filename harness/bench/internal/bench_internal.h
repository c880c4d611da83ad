/*
 * bench_internal.h - what the parts of `gensweep bench` share: bench.c (the sections, each
 * measuring and reporting), bench_child.c (every child process they start, through proc.h) and
 * bench_report.c (the machine, the targets and the document's framing). Not for other modules:
 * bench.h is the interface.
 */
#ifndef GS_BENCH_INTERNAL_H
#define GS_BENCH_INTERNAL_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "gs/config.h"
#include "job.h"
#include "worker.h" /* gs_job_request */

/* What a child sends back. Fixed-size so one write()/read() carries it. */
typedef struct child_result {
    int ok;          /* 1 when the job ran to completion */
    char status[24]; /* job status name */
    char error[480]; /* first error, formatted */
    uint64_t instructions;
    double build_s;     /* kernel build (program + dependencies) */
    double build_cpu_s; /* its CPU time */
    double sim_s;       /* gs_model_run's own wall clock (stats.wall_s) */
    double run_s;       /* gs_model_run call including elaboration */
    double run_cpu_s;   /* its CPU time */
    double exec_s;      /* pure-C executor over the same program (functional children) */
    double exec_cpu_s;
    int exec_ok;
    double sgemm_s;     /* best cblas_sgemm on the same M, N, K */
    double sgemm_cpu_s; /* CPU time of that best run */
    double sim_ns;      /* simulated time */
    uint64_t trace_bytes;
    double floor_ns;     /* SystemC floor child: wall ns per timed switch */
    double floor_cpu_ns; /* and CPU ns per switch (elaboration included) */
} child_result;

typedef struct job_req {
    const char *config; /* path */
    const char *kernel;
    const char *variant; /* NULL: first */
    gs_dtype dtype;
    int n_dims;
    int64_t dims[GS_SUITE_MAX_DIMS];
    const char *param_name; /* one optional tunable */
    int64_t param_value;
    int functional;
    int with_exec_and_sgemm; /* functional matmul: also time the executor and sgemm */
    const char *trace;
    long floor_switches; /* > 0: measure the SystemC floor instead of a job */
    double cpu_limit_s;  /* > 0: the child's CPU time limit (RLIMIT_CPU, whole seconds); over
                          * it the point's status is "cpu-limit" */
} job_req;

/* `gensweep sweep` run as a child process. */
typedef struct sweep_result {
    int ran;
    int exit_status;
    double wall_s;
    long parent_rss_kb; /* the sweep process itself (last VmHWM seen) */
    long max_rss_kb;    /* wait4: the largest of the sweep and every job it ran */
    double cpu_s;       /* wait4: user + system time of the sweep and every job it ran */
    char log[1100];
    char summary[160]; /* the sweep's "N jobs in T s: ..." line */
} sweep_result;

/* One job as the sweep runs it: a forked worker (current) or an exec'd process (old paths). */
typedef struct proc_result {
    int ok;         /* exited 0 with a passing record */
    double wall_s;  /* fork to reap */
    double cpu_s;   /* user + system of the job process */
    long maxrss_kb; /* wait4 */
    double instructions;
    char status[24];
} proc_result;

/* One run: the options, the generations, and the figures later sections and the targets use. */
typedef struct bench_run {
    gs_bench_opts o;
    const gs_bench_gen *gens;
    size_t n_gens;
    const gs_bench_gen *g_big, *g_fn; /* roles: see bench.h */
    char self[1024];                  /* the gensweep binary */
    char tmp[64];                     /* scratch directory, removed at the end */
    char gen_files[1024];             /* "gen1,gen2": the file stems, for the report */
    char gen_range[300];              /* "gen1-gen4" */
    cJSON *doc;                       /* the figures */
    int failures;                     /* measurements that could not be taken */
    int64_t mm;                       /* section 1's matmul M = K = N */
    double min_rate, min_cpu_rate, timing_rss_kb, largest_sim_rate, largest_cpu_rate;
    double ratio_model, cpu_ratio_model;
    sweep_result s1, s2, s_old;
    double sweep_cpu_new, sweep_cpu_old; /* best of two each, interleaved */
    double trace_growth_mb;
    double floor_cpu_ns, floor_pct, floor_pct_wall;
    char shape_big[64], shape_fn[64];
    proc_result big[2], fjob[2]; /* [0] current, [1] old */
    int big_runs;                /* runs of the largest job per path (the best is big[]) */
    double e2e_rate, func_speedup, sweep_cpu_ratio, e2e_cpu_rate;
    double scale_worst; /* section 8: the largest spread of CPU per instruction */
    int scale_missed;   /* kernels over the section's target */
} bench_run;

/* ---- section 8, its own run (bench_scaling.c) ---- */
void gs_bench_scaling(bench_run *b);

/* ---- child processes (bench_child.c) ---- */

/* Fork, run the job in the child, collect its result and peak RSS (KiB). Returns 0, or -1 when
 * the child could not be started or died (r->error says why). */
int gs_bench_child(const job_req *q, child_result *r, long *maxrss_kb);

/* `self sweep --suite check -jJOBS --out OUT_DIR --configs GEN...`, its output in OUT_DIR.log,
 * through the old paths when old_path. */
void gs_bench_sweep_proc(const char *self, const gs_bench_gen *gens, size_t n_gens, int jobs,
                         const char *out_dir, int old_path, sweep_result *r);

/* One job as the sweep starts it: served from the request rq by a fork of this process (its
 * record to rq->record), or, through the old paths (old_path), exec'd as the `run` command line
 * args (after the binary, NULL-terminated, at most 27 items) with --record rq->record. */
void gs_bench_job_proc(const char *self, const char *const *args, const gs_job_request *rq,
                       int old_path, proc_result *r);

/* ---- the report's framing (bench_report.c) ---- */

/* The header: build, machine and load, and the document's first members. */
void gs_bench_header(bench_run *b);
/* The targets, met or missed (and the load at the end); returns how many were missed. */
int gs_bench_targets(bench_run *b);

/* ---- the document (cJSON; written by the caller through gs_json_emit) and the text ---- */

static inline void jnum(cJSON *o, const char *k, double v)
{
    cJSON_AddNumberToObject(o, k, v);
}
static inline void jstr(cJSON *o, const char *k, const char *v)
{
    cJSON_AddStringToObject(o, k, v);
}
static inline void jbool(cJSON *o, const char *k, int v)
{
    cJSON_AddBoolToObject(o, k, v);
}
/* A new object at the end of array a (NULL when out of memory: the j* calls then do nothing) */
static inline cJSON *jrow(cJSON *a)
{
    cJSON *o = cJSON_CreateObject();
    if (o && !cJSON_AddItemToArray(a, o)) {
        cJSON_Delete(o);
        o = NULL;
    }
    return o;
}
/* n numbers as an array member */
static inline void jnums(cJSON *o, const char *k, const double *v, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, k);
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
}

static inline void shape_str(const job_req *q, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < q->n_dims && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? "x" : "", q->dims[i]);
}

static inline double mb(long kb)
{
    return (double)kb / 1024.0;
}

static inline void say(const gs_bench_opts *o, const char *fmt, ...) GS_PRINTF(2, 3);
static inline void say(const gs_bench_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, buf);
}

static inline void req_init(job_req *q, const char *config, const char *kernel, int n, int64_t d0,
                            int64_t d1, int64_t d2)
{
    memset(q, 0, sizeof *q);
    q->config = config;
    q->kernel = kernel;
    q->dtype = GS_BF16;
    q->n_dims = n;
    q->dims[0] = d0;
    q->dims[1] = d1;
    q->dims[2] = d2;
}

#endif
