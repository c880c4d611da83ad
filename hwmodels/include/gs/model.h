/*
 * gs/model.h - C facade over the SystemC TLM-2.0 model of a chip: create a model from a
 * validated config, run a program (functional + timing, or timing-only), read statistics,
 * destroy. Usable from C (harness, tests) without any SystemC include.
 *
 * SystemC elaborates once per process and cannot be reset, so a process runs at most one
 * program through gs_model_run(); a second call fails with GS_ERR_USAGE. Callers that need
 * several runs start a process per run (the sweep runs each job in a forked child; the tests
 * use tests/support/isolated_run.h).
 */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include "gs/common.h"
#include "gs/config.h"
#include "gs/exec.h"
#include "gs/isa.h"
#include "gs/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_run_opts {
    int functional;         /* 1: move and compute real data (mem required); 0: timing only */
    double sim_limit_ns;    /* stop with GS_ERR_TIMEOUT past this simulated time (0: none) */
    double wall_limit_s;    /* ... or this much host time (0: none) */
    const char *trace_path; /* Chrome/Perfetto trace-event JSON, or NULL */
    /* Called once at the end of the run, after the statistics, with what the run did (every
     * instruction's start, end and stream): the caller may summarise it (the job record's
     * timeline) without a trace. NULL: not called. */
    void (*on_timeline)(const gs_timeline *tl, void *ud);
    void *on_timeline_ud;
    /* Non-NULL: a trace that cannot be created or written (bad path, disk full) is reported
     * here and the run goes on without it, its status and statistics untouched (a sweep job's
     * trace is a by-product); code GS_OK when the trace was written. NULL: it fails the run. */
    gs_error *trace_warn;
} gs_run_opts;

typedef struct gs_model gs_model;

gs_model *gs_model_create(const gs_config *cfg, gs_error *err);
void gs_model_free(gs_model *m); /* NULL ok */

/* Run program p. In functional mode `mem` holds inputs before and outputs after. On deadlock
 * returns GS_ERR_DEADLOCK with err naming the waiting instructions (and their source lines);
 * statistics are filled as far as the run got. */
gs_status gs_model_run(gs_model *m, const gs_program *p, gs_mem *mem, const gs_run_opts *opts,
                       gs_run_stats *stats, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
