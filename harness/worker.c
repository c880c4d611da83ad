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
static gs_worker_runner runner;

/* The config offered to the next forked job (see gs_worker_offer_config); in_job: this process
 * is a forked job. */
static struct {
    const char *path;
    const char *const *sets;
    size_t n_sets;
    gs_config *cfg;
} offered;
static int in_job;

void gs_worker_offer_config(const char *path, const char *const *sets, size_t n_sets,
                            gs_config *cfg)
{
    offered.path = path;
    offered.sets = sets;
    offered.n_sets = n_sets;
    offered.cfg = cfg;
}

gs_config *gs_worker_take_config(const char *path, const char *const *sets, size_t n_sets)
{
    gs_config *c = offered.cfg;
    if (!in_job || !c || !path || !offered.path || strcmp(path, offered.path) != 0 ||
        n_sets != offered.n_sets)
        return NULL;
    for (size_t i = 0; i < n_sets; i++)
        if (strcmp(sets[i], offered.sets[i]) != 0) return NULL;
    offered.cfg = NULL;
    return c;
}

void gs_worker_set_runner(gs_worker_runner run)
{
    runner = run;
}

int gs_worker_forks(void)
{
    const char *b = getenv("GS_BASELINE_PATHS");
    int exec_jobs = b && (!strcmp(b, "1") || !strcmp(b, "all") || strstr(b, "exec"));
    return runner != NULL && !exec_jobs;
}

/* execv and the runner take char *[] for historical reasons; neither writes the strings (the
 * runner's option parser may reorder the pointers, which live in the caller's array). */
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

void gs_worker_start_job(const char *exe, const char *const *argv)
{
    if (!gs_worker_forks()) {
        execv(exe, mutable_argv(argv));
        return;
    }
    int argc = 0;
    while (argv[argc])
        argc++;
    /* argv[0] is the binary, argv[1] the command: the runner sees argv from the command on */
    in_job = 1;
    int rc = runner(argc - 1, mutable_argv(argv) + 1);
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
