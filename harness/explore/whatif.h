/*
 * whatif.h - the what-if study behind `gensweep whatif`: run the suite once per value of one
 * config parameter (or per cell of a two-parameter grid) and derive every job's simulated time
 * per value, its sensitivity (d ln time / d ln value) and the sensitivity of each step, with
 * inversions and non-monotonic curves flagged. Writes DIR/whatif.json (results/RESULTS.md), each
 * cell's sweep in DIR/<value>[_<value2>]/ and DIR/report.html.
 *
 * Never prints and never exits: problems come back in a gs_diags, the document in the result,
 * the per-cell headers through the progress callback. The cell sweeps run through the sweep
 * library (their job progress through sweep.progress; their problems into the gs_diags).
 */
#ifndef GS_WHATIF_H
#define GS_WHATIF_H

#include <cjson/cJSON.h>

#include "gs/common.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_WHATIF_MAX_VALUES 32
#define GS_WHATIF_DEFAULT_OUT "build/whatif"

/* Called with a line of progress text (ends in '\n'). */
typedef void (*gs_whatif_progress)(void *ctx, const char *text);

typedef struct gs_whatif_opts {
    gs_sweep_opts sweep;     /* for every cell, from gs_sweep_opts_default (kernels, suite, jobs,
                                timeout, quiet ...); configs, sets and out_dir are replaced per cell */
    const char *config;      /* the generation config file */
    const char *const *sets; /* --set KEY=VALUE applied before the swept values */
    size_t n_sets;
    const char *param[2];  /* swept keys: one, or two for a grid */
    const char *values[2]; /* comma-separated values of each ("0.5x,1x,2x", "24MiB,48MiB") */
    int n_params;
    const char *out_dir;         /* NULL: GS_WHATIF_DEFAULT_OUT */
    gs_whatif_progress progress; /* "== key = value ==" before each cell; NULL: none */
    void *progress_ctx;
} gs_whatif_opts;

typedef struct gs_whatif_result {
    cJSON *doc;         /* the whatif.json document, or NULL when none was made */
    int failed_cells;   /* cells whose sweep had failing jobs (its exit status 1) */
    int written;        /* whatif.json written to path */
    char path[4200];    /* DIR/whatif.json */
    int report_written; /* report.html written to report */
    char report[4200];
} gs_whatif_result;

/*
 * Run the study. GS_OK when whatif.json and the report were written (r->failed_cells may still
 * be non-zero); GS_ERR_USAGE for bad input (unknown key, too few or too many values, a value the
 * config refuses, a cell sweep's usage error), with the problems in d (d may already hold
 * entries; config problems keep their file:line:col, the study's own have an empty file); any
 * other status when a cell left no results or a file could not be written (r->doc is kept when
 * it was made). Free r with gs_whatif_result_free.
 */
gs_status gs_whatif_run(const gs_whatif_opts *o, gs_whatif_result *r, gs_diags *d);
void gs_whatif_result_free(gs_whatif_result *r); /* NULL ok */

#ifdef __cplusplus
}
#endif
#endif
