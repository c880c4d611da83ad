/*
 * worker.h - starting sweep jobs without exec (a fork server).
 *
 * A sweep (and whatif, tune, bench, which run sweeps) starts every job as a child process, for
 * isolation: a crash, timeout, memory limit or deadlock stays the job's own. The job used to be
 * a fresh exec of this binary (`gensweep run ...`): dynamic loading and relocation of SystemC,
 * OpenBLAS and the C++ runtime for every job, most of a small job's cost. Now the sweep process
 * itself is the pre-loaded worker: it never elaborates SystemC (SystemC elaborates once per
 * process), so a fork of it is a clean process with everything loaded, and the child runs the
 * `run` command in-process with the same arguments, then exits. The parent sees the same child
 * process as before (pid, process group, exit status, signals, rusage), so the sweep's
 * bookkeeping is unchanged; the record the child writes is byte-identical.
 *
 * Without a registered runner (a binary that does not carry the `run` command) or with
 * GS_BASELINE_PATHS=1, =all or a value naming "exec" in the environment (`gensweep bench`
 * measures the old path that way), jobs are exec'd as before.
 */
#ifndef GS_HARNESS_WORKER_H
#define GS_HARNESS_WORKER_H

#include <stddef.h>

#include "gs/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The `run` command's entry point (argv[0] is "run"); NULL unregisters. */
typedef int (*gs_worker_runner)(int argc, char **argv);
void gs_worker_set_runner(gs_worker_runner run);

/* Whether jobs start as forks of this process (a runner is registered, exec not asked for). */
int gs_worker_forks(void);

/*
 * In a freshly forked job child whose stdio is already redirected: run `exe run ...`
 * (argv[0] = exe, argv[1] = "run", NULL-terminated) in this process and _exit with its status,
 * or exec exe with argv when jobs are not forked. Returns only if the exec failed.
 */
void gs_worker_start_job(const char *exe, const char *const *argv);

/* execv with a const argv (execv takes char *const[] for historical reasons and writes
 * nothing). Returns only if the exec failed (errno set). */
void gs_execv(const char *exe, const char *const *argv);

/*
 * Hand the next forked job the config the sweep already loaded: `cfg`, loaded from `path` with
 * the overrides `sets` applied in order (the sweep keeps ownership). Called in the parent just
 * before the fork; the job's `run` takes it instead of loading and overriding the file again
 * (the same steps on the same file give the same object).
 */
void gs_worker_offer_config(const char *path, const char *const *sets, size_t n_sets,
                            gs_config *cfg);

/*
 * In a forked job: the offered config if it was loaded from `path` with exactly `sets`, else NULL
 * (load it). The caller owns it (the job's copy of the sweep's memory: freeing it touches only
 * the job process). NULL outside a forked job, and after the first call.
 */
gs_config *gs_worker_take_config(const char *path, const char *const *sets, size_t n_sets);

/*
 * OpenBLAS single-threaded in this process and the jobs it starts (unless OPENBLAS_NUM_THREADS
 * is set): one thread through the API, the worker threads OpenBLAS started when it loaded
 * stopped, and OPENBLAS_NUM_THREADS=1 in the environment of exec'd children. Replaces
 * restarting the process with the variable set. Called at the start of main.
 */
void gs_worker_blas_single_thread(void);

#ifdef __cplusplus
}
#endif
#endif
