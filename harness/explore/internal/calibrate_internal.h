/*
 * calibrate_internal.h - a loaded calibration file, shared by calibrate.c (loading and checking
 * the case file) and calibrate_fit.c (running the cases, comparing, fitting). Not for other
 * modules: calibrate.h is the interface.
 */
#ifndef GS_CALIBRATE_INTERNAL_H
#define GS_CALIBRATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calibrate.h"
#include "gs/kernel.h"
#include "job.h"

#define CAL_MAX_CASES 256
#define CAL_MAX_SOURCES 64

typedef enum cal_measure {
    CAL_KERNEL,
    CAL_TRANSFER,
    CAL_PER_STEP,
    CAL_KERNEL_WITH_LAUNCH
} cal_measure;
/* What a case is for: fit cases are the only ones `--fit` minimises over; validation cases are
 * measurements the model was not fitted to (their error is reported on its own). */
typedef enum cal_role { CAL_ROLE_FIT, CAL_ROLE_VALIDATE } cal_role;
extern const char *const gs_calib_role_names[2];
/* The names of cal_measure in the case file and the document. */
extern const char *const gs_calib_measure_names[4];

#define CAL_NKI_MAX_ARGS 16

/* An NKI case's kernel (the case file's nki: block): a kernel file outside the repository, under
 * the directory an environment variable names (a local mirror of the public repository), run as
 * `gensweep nki run` runs it, in a child process. */
typedef struct cal_nki {
    char mirror[64];                  /* the environment variable holding the mirror's root */
    char file[512];                   /* the kernel file, relative to that root */
    char kernel[128];                 /* the kernel function */
    char args[CAL_NKI_MAX_ARGS][256]; /* --arg NAME=VALUE, as `nki run` takes them */
    int n_args;
    char grid[32];        /* --grid AxB, or "" */
    char reference[1024]; /* --reference FILE.py:FUNC (FILE resolved against the case file's
                           * directory), or "" */
    char repository[128]; /* owner/name of the public repository */
    char commit[48];      /* the commit the case was written against */
} cal_nki;

typedef struct cal_case {
    char name[64];
    char config[64];
    const gs_kernel_def *kernel; /* NULL for an NKI case */
    cal_nki *nki;                /* an NKI case's kernel (owned), or NULL */
    int variant;
    gs_dtype dtype;
    int n_dims;
    int64_t dims[GS_SUITE_MAX_DIMS];
    int64_t params[GS_KERNEL_MAX_PARAMS];
    cal_measure measure;
    cal_role role;
    double time_ns;   /* measured time, or 0 */
    double engine_bw; /* measured per-engine bytes/ns (transfer), or 0 */
    unsigned engines; /* expected engines of the transfer, or 0 */
    char source[48];
    char note[512];
    int line;
    size_t cfg; /* index into the loaded configs */
} cal_case;

struct gs_calib {
    char *path;
    gs_sweep_opts o;
    gs_sweep *cfgs; /* loaded configs (no jobs): names, paths, values */
    cal_case cases[CAL_MAX_CASES];
    size_t n;
    char src_keys[CAL_MAX_SOURCES][48];
    char src_refs[CAL_MAX_SOURCES][512];
    size_t n_src;
    /* targets: the committed ceiling of the validation geomean error factor (0: none) */
    double target_validate;
    int target_line;
    /* why a case did not run in the last pass (an NKI case whose mirror is absent), or "" */
    char skipped[CAL_MAX_CASES][256];
};

#endif
