/* isolated_run.c - a model run in a forked child, results back through shared memory (see
 * isolated_run.h). */
/* MAP_ANONYMOUS is not in POSIX.1-2008 (the build's _POSIX_C_SOURCE) */
#define _DEFAULT_SOURCE
#include "isolated_run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct iso_result {
    gs_status status;
    int finished;
    gs_error err;
    gs_run_stats stats;
} iso_result;

/* Parent-side guard for a child that stops responding: well past the run's own wall limit. */
#define CHILD_GRACE_FACTOR 2.0
#define CHILD_GRACE_SECONDS 10.0

static size_t output_bytes(const gs_program *p)
{
    size_t total = 0;
    for (size_t t = 0; t < gs_program_tensor_count(p); ++t) {
        const gs_tensor_info *ti = gs_program_tensor(p, (int32_t)t);
        if (ti && ti->kind == GS_TENSOR_OUTPUT) total += (size_t)ti->bytes;
    }
    return total;
}

/* Copy the output tensors between mem and a flat buffer (to_buf: mem -> buf). */
static void copy_outputs(const gs_program *p, gs_mem *mem, unsigned char *buf, int to_buf)
{
    size_t off = 0;
    for (size_t t = 0; t < gs_program_tensor_count(p); ++t) {
        const gs_tensor_info *ti = gs_program_tensor(p, (int32_t)t);
        if (!ti || ti->kind != GS_TENSOR_OUTPUT) continue;
        void *data = gs_mem_tensor(mem, (int32_t)t);
        if (data && ti->bytes) {
            if (to_buf)
                memcpy(buf + off, data, (size_t)ti->bytes);
            else
                memcpy(data, buf + off, (size_t)ti->bytes);
        }
        off += (size_t)ti->bytes;
    }
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

gs_status gs_test_run_isolated(const gs_config *cfg, const gs_program *p, gs_mem *mem,
                               const gs_run_opts *opts, gs_run_stats *stats, gs_error *err)
{
    gs_error_clear(err);
    if (stats) memset(stats, 0, sizeof *stats);
    if (!cfg || !p)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "gs_test_run_isolated: no config or program");
    const int functional = opts ? opts->functional != 0 : mem != NULL;
    if (functional && !mem)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "gs_test_run_isolated: functional mode needs memory");
    const size_t out_bytes = functional ? output_bytes(p) : 0;
    const size_t size = sizeof(iso_result) + out_bytes;
    void *shm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED)
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0,
                            "cannot map %zu bytes for the model run: %s", size, strerror(errno));
    iso_result *res = (iso_result *)shm;
    res->status = GS_ERR_INTERNAL;
    res->finished = 0;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(shm, size);
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0, "fork failed: %s", strerror(errno));
    }
    if (pid == 0) {
        gs_error_clear(&res->err);
        gs_model *m = gs_model_create(cfg, &res->err);
        gs_status st = m ? gs_model_run(m, p, mem, opts, &res->stats, &res->err) : res->err.code;
        if (functional) copy_outputs(p, mem, (unsigned char *)shm + sizeof(iso_result), 1);
        res->status = st;
        res->finished = 1;
        fflush(stdout);
        fflush(stderr);
        _exit(0); /* no atexit handlers, no SystemC teardown */
    }
    int wstatus = 0;
    int killed = 0;
    if (opts && opts->wall_limit_s > 0) {
        struct timespec t0, nap = {0, 1000000};
        clock_gettime(CLOCK_MONOTONIC, &t0);
        const double deadline = opts->wall_limit_s * CHILD_GRACE_FACTOR + CHILD_GRACE_SECONDS;
        for (;;) {
            pid_t w = waitpid(pid, &wstatus, WNOHANG);
            if (w == pid || (w < 0 && errno != EINTR)) break;
            if (seconds_since(&t0) > deadline) {
                kill(pid, SIGKILL);
                while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
                }
                killed = 1;
                break;
            }
            nanosleep(&nap, NULL);
        }
    } else {
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
    }
    gs_status st;
    if (killed) {
        st = gs_error_set(err, GS_ERR_TIMEOUT, NULL, 0, 0,
                          "model run did not finish within %g s of wall-clock time; killed",
                          opts->wall_limit_s);
    } else if (!res->finished || !WIFEXITED(wstatus)) {
        st = gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0, "model run crashed (%s %d)",
                          WIFSIGNALED(wstatus) ? "signal" : "exit status",
                          WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
    } else {
        st = res->status;
        if (err) *err = res->err;
        if (stats) *stats = res->stats;
        if (functional) copy_outputs(p, mem, (unsigned char *)shm + sizeof(iso_result), 0);
    }
    munmap(shm, size);
    return st;
}
