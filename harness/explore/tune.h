/*
 * tune.h - the parameter search behind `gensweep tune`: search a kernel's tunable params on one
 * generation with timing-only jobs (one process each, through the sweep runner).
 *
 * Without a variant every variant runs once with its default params and the fastest is tuned.
 * The default and each param alone run first (engine choices 1..3, buffer counts 1..4, tile
 * sizes as powers of two up to the engine limits); a param that never changes the program is not
 * used by the variant and is left out. Then the product of the used params (up to
 * GS_TUNE_FULL_PRODUCT_MAX combinations) or the best of each combined. The result ranks one row
 * per program (param sets spelling the same program are merged).
 *
 * Never prints and never exits: problems come back in a gs_diags, the ranking in the result,
 * the steps of the search through the progress callback.
 */
#ifndef GS_TUNE_H
#define GS_TUNE_H

#include "gs/common.h"
#include "gs/kernel.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_TUNE_MAX_CAND 16
#define GS_TUNE_FULL_PRODUCT_MAX 64
#define GS_TUNE_DEFAULT_OUT "build/tune"

/* Called with progress text: whole lines, or the pieces of one line as its parts are known. */
typedef void (*gs_tune_progress)(void *ctx, const char *text);

typedef struct gs_tune_opts {
    gs_sweep_opts sweep; /* gs_sweep_opts_default with the caller's jobs, timeout and memory
                            limit; configs, out_dir, quiet, reports, timelines and tuning files
                            are set by the search */
    const char *config;  /* the generation config file */
    const char *kernel;
    const char *shape;         /* "AxB.."; NULL: the kernel's first perf shape */
    const char *variant;       /* NULL: the fastest at default params */
    const char *dtype;         /* NULL: bf16 when the kernel takes it, else fp32 */
    const char *write;         /* NULL: write nothing; "": <config dir>/tuning/<generation>.json;
                                  else this file. Sweeps of the config then use the best params. */
    gs_tune_progress progress; /* NULL: none */
    void *progress_ctx;
} gs_tune_opts;

typedef struct gs_tune_row {
    int64_t p[GS_KERNEL_MAX_PARAMS]; /* 0 = the kernel default */
    double t;                        /* simulated ns; NAN when the job did not pass */
    double roofline_ratio;           /* time / roofline bound (NAN when not passed) */
    double instructions;             /* with t, tells whether a param changed the program */
    char status[32];
    char reason[160];
} gs_tune_row;

typedef struct gs_tune_result {
    const gs_kernel_def *kernel;
    int variant;                    /* the variant tuned */
    char generation[128];           /* the config's name */
    int used[GS_KERNEL_MAX_PARAMS]; /* params that change the variant's program here */
    int n_used;
    gs_tune_row *rows; /* ranked, fastest first, one per program */
    int n_rows;
    int merged;        /* param sets that spelled a better-ranked row's program */
    double default_ns; /* the kernel default's time; NAN when it did not pass */
    char default_status[32];
    char default_reason[160];
    int ok;             /* rows[0] passed */
    int interrupted;    /* SIGINT/SIGTERM stopped a batch: later steps did not run */
    char written[4096]; /* the tuning file written, "" when none */
} gs_tune_result;

/*
 * Run the search. GS_OK when it ran (r->ok says whether a candidate passed); GS_ERR_USAGE for
 * bad input (unknown kernel, variant, dtype, shape, a kernel without params, a config that does
 * not load), with the problems in d (config problems keep their file:line:col, the search's own
 * have an empty file); another status when no variant runs, out of memory, or the tuning file
 * could not be written (the ranking is kept). Free r with gs_tune_result_free.
 */
gs_status gs_tune_run(const gs_tune_opts *o, gs_tune_result *r, gs_diags *d);
void gs_tune_result_free(gs_tune_result *r); /* NULL ok */

/* The params the variant uses, as "tn=256 bufs=2"; "default" when none. */
void gs_tune_format_params(const gs_tune_result *r, const int64_t *p, char *buf, size_t n);

/* Candidate values of one tunable from its name and the target's caps (0, the kernel default,
 * first); returns how many (at most GS_TUNE_MAX_CAND). */
int gs_tune_candidates(const char *name, const gs_caps *caps, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
