/*
 * isolated_run.h - run a program on the SystemC model in a forked child, for tests that need
 * several runs in one process (SystemC elaborates once per process: gs/model.h).
 */
#ifndef GS_TEST_ISOLATED_RUN_H
#define GS_TEST_ISOLATED_RUN_H

#include "gs/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Create a model and run in a forked child; stats, err and (functional mode) the output tensors'
 * bytes come back to the parent's mem. A crash of the child is GS_ERR_INTERNAL; a child that
 * outlives twice opts->wall_limit_s plus 10 s is killed (GS_ERR_TIMEOUT). */
gs_status gs_test_run_isolated(const gs_config *cfg, const gs_program *p, gs_mem *mem,
                               const gs_run_opts *opts, gs_run_stats *stats, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
