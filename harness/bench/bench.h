/*
 * bench.h - `gensweep bench` as a library call: the simulator's own speed and memory, measured
 * and compared with its targets (BENCHMARKS.md).
 *
 * Sections: 1. timing-only simulated instructions per second (a large matmul and an
 * instruction-dense elementwise_add) on every generation; 2. the functional matmul data path
 * against single-threaded OpenBLAS sgemm; 3. the check-suite sweep at -j1 and -j2 and through
 * the old paths; 4. peak RSS; 5. trace cost; 6. end to end against the old paths and the SystemC
 * floor; 8. (its own run, opts.scaling) CPU and memory per simulated instruction of every suite
 * kernel at about 10k, 100k and 1M instructions. The generations are every DIR/NAME.yaml of the
 * configs directory, in name order; the first runs section 6's largest timing-only job, the second
 * (the first when it is alone) the functional, memory and trace measurements.
 *
 * Never prints and never exits: the human-readable report comes through the progress callback
 * as each figure is measured, the figures as a document (the JSON of `bench --json`, schema
 * "gensweep-bench/1"), problems in a gs_diags. Every model run is its own child process; the
 * sweep and the section 6 jobs run the gensweep binary.
 */
#ifndef GS_BENCH_H
#define GS_BENCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called with report text as it is measured (whole lines). */
typedef void (*gs_bench_progress)(void *ctx, const char *text);

/* The default CPU limit of one measured point of section 8, in seconds: a size that takes
 * longer is out of reach (the larger sizes of the kernel are not tried), so the section ends. */
#define GS_BENCH_POINT_CPU_LIMIT 120.0

typedef struct gs_bench_opts {
    int quick;                   /* smaller shapes (seconds) */
    int no_sweep;                /* skip section 3 and its old-path runs */
    int scaling;                 /* run section 8 (every kernel at three sizes) instead of 1-6 */
    const char *scaling_kernels; /* section 8: "a,b" = only these kernels; NULL: every one */
    double point_cpu_limit;      /* section 8: CPU seconds per measured point (a child process)
                                  * before it is stopped and its size reported as not reached;
                                  * <= 0: GS_BENCH_POINT_CPU_LIMIT */
    const char *configs;         /* the generations' directory; NULL: gs_default_configs_dir() */
    const char *exe;             /* the gensweep binary; NULL: this process's own */
    gs_bench_progress progress;  /* NULL: no report text */
    void *progress_ctx;
} gs_bench_opts;

typedef struct gs_bench_result {
    cJSON *doc;   /* the figures ("gensweep-bench/1"), or NULL */
    int failures; /* measurements that could not be taken */
    int missed;   /* targets missed */
} gs_bench_result;

/* Measure. GS_OK when the run completed (r->failures and r->missed say how it went);
 * GS_ERR_USAGE when the configs directory has no usable generation; another status when the
 * run could not start or the document could not be made. Free r with gs_bench_result_free. */
gs_status gs_bench_run(const gs_bench_opts *o, gs_bench_result *r, gs_diags *d);
void gs_bench_result_free(gs_bench_result *r); /* NULL ok */

/* One generation: its config file and the name in it. */
typedef struct gs_bench_gen {
    char *path; /* DIR/FILE.yaml */
    char *stem; /* FILE */
    char *name; /* the config's name */
} gs_bench_gen;

/* The generations of a configs directory: every DIR/NAME.yaml (not subdirectories, not hidden
 * files) in name order, each loaded. GS_ERR_USAGE with the problems in d when the directory
 * cannot be read, holds no *.yaml, or a config does not load. Free with
 * gs_bench_generations_free. */
gs_status gs_bench_find_generations(const char *dir, gs_bench_gen **gens, size_t *n, gs_diags *d);
void gs_bench_generations_free(gs_bench_gen *gens, size_t n); /* NULL ok */

#ifdef __cplusplus
}
#endif
#endif
