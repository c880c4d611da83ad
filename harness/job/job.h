/*
 * job.h - one job: a kernel (variant, shape, dtype, params) on one generation config. Builds the
 * program on every core the kernel uses, fills inputs (seeded, deterministic), and checks
 * outputs against the kernel's double-precision reference with dtype-aware tolerances
 * (kernels/README.md). Running the program (pure-C executor or SystemC model) is the caller's.
 */
#ifndef GS_JOB_H
#define GS_JOB_H

#include "parse.h" /* gs_parse_shape, gs_parse_param */
#include "gs/exec.h"
#include "gs/isa.h"
#include "gs/stats.h"
#include "job_status.h"
#include "suite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gs_job_status, its names and GS_JOB_STATUS_TABLE: results/job_status.h. */

/* Map a gs_status from building/running to a job status. */
gs_job_status gs_job_status_from(gs_status st);

typedef struct gs_job_spec {
    const gs_config *cfg;
    const gs_kernel_def *kernel;
    int variant;
    gs_dtype dtype;
    int n_dims;
    int64_t dims[GS_SUITE_MAX_DIMS];
    int64_t params[GS_KERNEL_MAX_PARAMS];
    uint64_t seed;
} gs_job_spec;

typedef struct gs_job_check {
    int checked; /* 1 when outputs were compared */
    double max_abs_err;
    double max_rel_err;
    double tol_abs;         /* absolute part of the tolerance used (worst output) */
    double tol_rel;         /* relative part */
    char worst[96];         /* tensor[row, col] (one index per dim) of the worst element */
    uint64_t mismatches;    /* elements outside tolerance */
    uint64_t bad_nonfinite; /* NaN/Inf where the reference is finite */
} gs_job_check;

typedef struct gs_job gs_job;

/* Build the job's program. On a kernel error (unsupported, does not fit, bad parameters)
 * returns that status with err naming the kernel line; *out is still set when the program
 * could be created, so a listing up to the error is possible. */
gs_status gs_job_build(const gs_job_spec *spec, gs_job **out, gs_error *err);
void gs_job_free(gs_job *j); /* NULL ok */
const gs_program *gs_job_program(const gs_job *j);
/* The dependency tracker's work while building (gs_kb_tracker_work over every core). */
uint64_t gs_job_tracker_work(const gs_job *j);

/* Create device memory, fill inputs (seeded) and outputs with a sentinel (NaN for float
 * dtypes), poison SBUF/PSUM. */
gs_status gs_job_init_memory(gs_job *j, gs_error *err);
/* Draw the inputs of later gs_job_init_memory calls from `seed` (the program does not depend on
 * it: one build serves every seed). */
void gs_job_set_seed(gs_job *j, uint64_t seed);
gs_mem *gs_job_memory(gs_job *j);
/* Compare outputs with the reference. Returns GS_OK when within tolerance, GS_ERR_MISMATCH
 * otherwise (res filled either way). */
gs_status gs_job_check_outputs(gs_job *j, gs_job_check *res, gs_error *err);

/* Write each output tensor's values, decoded to float64 (raw, little-endian, row-major), as
 * dir/NAME.f64. GS_OK, or GS_ERR_IO / GS_ERR_NOMEM with err naming the file. */
gs_status gs_job_write_outputs(gs_job *j, const char *dir, gs_error *err);

/* A completed run that took less time than its roofline (on the schedule's traffic or on the
 * minimum traffic) means the model broke physics: GS_ERR_INTERNAL with err saying by how
 * much. GS_OK otherwise (also when there is no roofline, e.g. an empty program). */
gs_status gs_job_check_roofline(const gs_run_stats *st, gs_error *err);

/* Is the spec's shape one of its kernel's check shapes? */
int gs_job_is_check_shape(const gs_job_spec *spec);

#ifdef __cplusplus
}
#endif
#endif
