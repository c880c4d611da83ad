/*
 * sweep_internal.h - the sweep's state, shared by sweep_plan.c (fills it), sweep_exec.c (runs
 * its jobs) and sweep_output.c (writes what they gave). Not for other modules: sweep.h is the
 * interface.
 */
#ifndef GS_SWEEP_INTERNAL_H
#define GS_SWEEP_INTERNAL_H

#include "sweep.h"

typedef struct sweep_job {
    size_t cfg;
    gs_job_spec spec;
    int functional;
    char id[512];
} sweep_job;

struct gs_sweep {
    gs_sweep_opts o; /* defaults resolved */
    gs_config **cfgs;
    char **cfg_paths;
    size_t n_cfgs;
    sweep_job *jobs;
    size_t n_jobs, cap_jobs;
    size_t planned; /* jobs of the whole (unsharded) plan */
    char exe[4096];
    char tmp_dir[4096];
    int trace_lock_fd; /* the lock on --trace-dir (gs_sweep_lock_out), -1: none */
};

/* The results document around the jobs' records (sweep_output.c): recs[i] / walls[i] of job i
 * (NULL: no record), taken over. */
cJSON *gs_sweep_document(const gs_sweep *s, cJSON **recs, const double *walls, int interrupted,
                         const char *started, const char *finished, double total_s);

#endif
