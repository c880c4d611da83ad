/* explore_internal.h - what the explore modules share: one sweep through the sweep library. */
#ifndef GS_EXPLORE_INTERNAL_H
#define GS_EXPLORE_INTERNAL_H

#include "gs/common.h"
#include "sweep.h"

/* One sweep into ov->out_dir (results.json, .csv, junit.xml), through the sweep library:
 * nothing printed (progress through ov->progress), problems appended to d. 0 when every job
 * passed, 1 when one failed, the jobs could not run or the results could not be written, 2 on
 * a usage error. */
int gs_explore_run_sweep(const gs_sweep_opts *ov, gs_diags *d);

#endif
