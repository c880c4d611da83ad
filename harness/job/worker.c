/* worker.c - starting sweep jobs as forks of the pre-loaded sweep process (see worker.h). */
#include "worker.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Exported by OpenBLAS (not in cblas.h): joins its worker threads; OpenBLAS itself calls it
 * before every fork (pthread_atfork) and restarts them on demand. */
extern int blas_thread_shutdown_(void);

/* Set once at start-up, before any job starts. */
static gs_job_server server;

void gs_worker_set_server(gs_job_server serve)
{
    server = serve;
}

int gs_worker_forks(void)
{
    const char *b = getenv("GS_BASELINE_PATHS");
    int exec_jobs = b && (!strcmp(b, "1") || !strcmp(b, "all") || strstr(b, "exec"));
    return server != NULL && !exec_jobs;
}

/* execv takes char *[] for historical reasons; it writes nothing. */
static char **mutable_argv(const char *const *argv)
{
    union {
        const char *const *in;
        char **out;
    } u = {argv};
    return u.out;
}

void gs_execv(const char *exe, const char *const *argv)
{
    execv(exe, mutable_argv(argv));
}

void gs_worker_start_job(const char *exe, const char *const *argv, const gs_job_request *rq)
{
    if (!rq || !gs_worker_forks()) {
        execv(exe, mutable_argv(argv));
        return;
    }
    int rc = server(rq);
    fflush(NULL);
    /* No atexit handlers or static destructors of the parent's image: the job is done, and
     * the sweep's own exit belongs to the sweep. */
    _exit(rc & 0xff);
}

/*
 * OpenBLAS reads OPENBLAS_NUM_THREADS once, in its library constructor (before main), and starts
 * that many minus one worker threads (one per CPU when unset); they spin for ~0.1 s of CPU
 * looking for work before they sleep. The executor multiplies single-threaded. Without exec the
 * variable cannot count for this process, so: one thread through the API, the workers stopped
 * now (what OpenBLAS itself does before every fork), and the variable set for the processes
 * this one execs. Forked jobs inherit the single-thread setting; they must not call
 * openblas_set_num_threads again, which restarts the workers stopped by the fork (exec.c checks
 * the count first). An explicit OPENBLAS_NUM_THREADS wins.
 */
void gs_worker_blas_single_thread(void)
{
    if (getenv("OPENBLAS_NUM_THREADS")) return;
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    openblas_set_num_threads(1);
    blas_thread_shutdown_();
}
