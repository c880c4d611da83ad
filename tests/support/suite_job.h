/*
 * suite_job.h - tests that build the kernel suite's programs (gs_job_build): the job spec of a
 * suite kernel at a shape. Needs the harness headers on the include path.
 */
#ifndef GS_TEST_SUITE_JOB_H
#define GS_TEST_SUITE_JOB_H

#include "job.h"

/* Kernel `def`, variant v, dtype t at shape sh on cfg, seed 1. */
inline gs_job_spec gs_test_suite_spec(const gs_config *cfg, const gs_kernel_def *def, int v,
                                      gs_dtype t, const gs_shape &sh)
{
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = def;
    spec.variant = v;
    spec.dtype = t;
    spec.seed = 1;
    spec.n_dims = sh.n;
    for (int i = 0; i < sh.n; i++)
        spec.dims[i] = sh.d[i];
    return spec;
}

#endif
