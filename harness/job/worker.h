/*
 * worker.h - starting sweep jobs without exec (a fork server).
 *
 * A sweep (and whatif, tune, calibrate, bench, which run sweeps or jobs) starts every job as a
 * child process, for isolation: a crash, timeout, memory limit or deadlock stays the job's own.
 * The sweep process itself is the pre-loaded worker: it never elaborates SystemC (SystemC
 * elaborates once per process), so a fork of it is a clean process with everything loaded.
 * The parent builds a request (the spec with the config it already loaded and --set applied,
 * the run options, the record path, the memory limit) and the forked child hands it to the
 * registered job server (the job pipeline: gs_run_serve, no argv, no second config load), then
 * exits. The parent sees the same child process as an exec'd one (pid, process group, exit
 * status, signals, rusage); the record the child writes is byte-identical.
 *
 * Without a registered server (a binary that does not carry the job pipeline), without a
 * request, or with GS_BASELINE_PATHS=1, =all or a value naming "exec" in the environment
 * (`gensweep bench` measures the old path that way), the job is exec'd as
 * `gensweep run ...` with the argv the parent also built.
 */
#ifndef GS_HARNESS_WORKER_H
#define GS_HARNESS_WORKER_H

#include <stddef.h>

#include "jobspec.h" /* gs_job_spec, gs_job_run_opts */

#ifdef __cplusplus
extern "C" {
#endif

/* A job for the fork server: spec (spec->cfg is the config the parent loaded, with its --set
 * applied; the child uses its copy), how to run it, where to write its record (RESULTS.md "jobs"
 * element), and the child's address-space limit (bytes; 0: the inherited one). */
typedef struct gs_job_request {
    const gs_job_spec *spec;
    gs_job_run_opts run;
    const char *record;
    double mem_limit;
} gs_job_request;

/* Runs rq in this (forked) process: the job pipeline; its diagnostics on stderr. Returns the
 * exit status (`gensweep run`'s). */
typedef int (*gs_job_server)(const gs_job_request *rq);
/* Register the server (NULL unregisters: every job is exec'd). */
void gs_worker_set_server(gs_job_server serve);

/* Whether jobs start as forks of this process (a server is registered, exec not asked for). */
int gs_worker_forks(void);

/*
 * In a freshly forked job child whose stdio is already redirected: serve rq in this process and
 * _exit with its status, or, when jobs are not forked or rq is NULL, exec exe with argv
 * (argv[0] = exe, argv[1] = "run", NULL-terminated). Returns only if the exec failed.
 */
void gs_worker_start_job(const char *exe, const char *const *argv, const gs_job_request *rq);

/* execv with a const argv (execv takes char *const[] for historical reasons and writes
 * nothing). Returns only if the exec failed (errno set). */
void gs_execv(const char *exe, const char *const *argv);

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
