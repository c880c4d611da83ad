/*
 * calibrate.h - model vs measured: run the micro-benchmark (or kernel) cases of a calibration
 * file on the generation configs, compare each with its cited measurement, and fit named
 * [assumed] parameters to the measurements (`gensweep calibrate`, calibration/README.md).
 *
 * A case file (YAML):
 *   sources: {KEY: citation, ...}
 *   targets: {validate_geomean_error: 1.5}   # optional: the ceiling `--check` holds to
 *   cases:
 *     - name: dmao-4x4096            # unique
 *       config: gen3                 # a generation name among the loaded configs
 *       kernel: ubench_dma           # [variant: V] [dtype: T] [params: {name: value}]
 *       shape: [4, 4096]
 *       measure: transfer            # kernel | kernel_with_launch | transfer | per_step
 *       role: fit                    # fit (--fit may use it) | validate (never fitted to)
 *       time: 1416ns                 # or engine_bandwidth: 23GB/s (transfer only)
 *       engines: 1                   # optional structural check (transfer only)
 *       source: DMAO                 # a key of sources:
 *       note: "what was measured, where"
 *     - name: mm-tiled-nki             # an NKI case: a published kernel file
 *       config: gen2
 *       nki:                         # instead of kernel:, shape:, variant:, dtype:, params:
 *         mirror: GS_NKI_SAMPLES     # env variable: the root of a copy of the repository
 *         file: src/.../mm.py        # relative to that root
 *         kernel: nki_matmul_tiled_  # the function
 *         args: [lhsT=bf16:8192x4096, rhs=bf16:8192x8192]   # as nki run's --arg
 *         grid: 4x2                  # optional: nki run's --grid
 *         reference: refs.py:func    # optional: --reference, FILE relative to the case file
 *         repository: aws-neuron/nki-samples   # what it was written against (recorded)
 *         commit: 6905a68a122f937e68403727759f035ddd144f95
 *       measure: kernel_with_launch  # kernel or kernel_with_launch only
 * An NKI case runs as `gensweep nki run FILE --kernel K --config CFG --arg ... --json` (with
 * --timing-only unless a reference is given) in a child process of this binary; when the mirror
 * variable is unset or the file is absent it is skipped ("skipped: $VAR not set"), never an
 * error, and counted in the document's skipped_cases.
 * measure: kernel = the job's simulated time (time_ns); kernel_with_launch = that plus one
 * launch (time_with_launch_ns: what end-to-end benchmark latencies measure); transfer = instruction
 * 0's span from its first engine share to its end (a DMA transfer, without the issue latency before
 * it); per_step = the slope of the job's time over its first dimension, (time(2N) - time(N)) / N.
 *
 * The runs are ordinary timing-only jobs in their own processes (the sweep library), so a
 * calibrated number comes from the same code path as every other job.
 */
#ifndef GS_CALIBRATE_H
#define GS_CALIBRATE_H

#include <cjson/cJSON.h>

#include "gs/common.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_calib gs_calib;

/* Load and check a case file against the configs of `o` (o->configs, o->sets). NULL with every
 * problem appended to diags ("file:line:col: key: message"). */
gs_calib *gs_calib_load(const char *path, const gs_sweep_opts *o, gs_diags *diags);
void gs_calib_free(gs_calib *c); /* NULL ok */
size_t gs_calib_case_count(const gs_calib *c);
/* Does the case file commit a validation target (targets: validate_geomean_error)? */
int gs_calib_has_target(const gs_calib *c);

typedef struct gs_calib_fit_opts {
    const char *const *keys; /* config keys to fit (each must be [assumed] or [fit]) */
    size_t n_keys;
    int rounds;                                    /* coordinate-descent rounds; <= 0: 3 */
    void (*progress)(const char *line, void *ctx); /* one line per evaluation round, or NULL */
    void *ctx;
} gs_calib_fit_opts;

/* Run every case once with the configs as loaded. Returns the calibration document
 * (RESULTS-style JSON: cases with measured, model, ratio; geomean error), or NULL with err set
 * (a case's job failed, I/O). With fit != NULL and keys given, first fits the keys per
 * generation (minimising the squared log error of that generation's timed cases, plus a small
 * pull towards the starting values so that parameters the cases cannot tell apart stay put),
 * then reports the cases at the fitted values; the document's "fit" lists before/after values
 * and errors, and "yaml" holds the fitted values as config lines tagged [fit: ...]. Each key is
 * searched within / and x 64 its starting value, clamped to what the config accepts; a fitted
 * value at an end of that range has "at_bound" saying which end and whether it is the config's
 * limit. */
cJSON *gs_calib_run(gs_calib *c, const gs_calib_fit_opts *fit, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
