/*
 * proc.h - the one runner for child processes: the sweep's jobs (sweep_exec.c) and every process
 * `gensweep bench` starts.
 *
 * A child is started one of three ways: exec'd, started through the fork server
 * (gs_worker_start_job: the job pipeline in a fork of this process, exec'd when jobs are not
 * forked), or a function run in a plain fork. Its stdin is /dev/null; stdout and stderr go to
 * files, /dev/null, or stay the parent's. It may get an address-space limit (RLIMIT_AS), its own
 * process group (a kill reaches what it started; Ctrl-C on the terminal reaches only the parent)
 * and a wall timeout after which the runner kills it. Reaping gives the exit status or the
 * signal, wall time, and the rusage (CPU time, peak RSS) of the child and what it waited for.
 * Files named as remove_outputs are removed when the child is reaped and again when the handle
 * is freed, so no path leaves them; freeing a handle whose child still runs kills and reaps it.
 * A child dies with its parent (Linux: SIGKILL from the kernel when the parent exits, SIGKILL of
 * the parent included), so nothing the runner starts outlives the process that started it.
 *
 * Not thread-safe; the parent must not reap children with waitpid(-1) behind the runner's back.
 * Start children from a thread that lives as long as they should: the kernel's death signal
 * follows the thread that forked, not the process.
 */
#ifndef GS_HARNESS_PROC_H
#define GS_HARNESS_PROC_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_proc_start_kind {
    GS_PROC_EXEC = 0, /* execv(exe, argv) */
    GS_PROC_WORKER,   /* gs_worker_start_job(exe, argv, request): a forked job, or exec */
    GS_PROC_FUNCTION  /* _exit(fn(fn_ctx)) in the fork */
} gs_proc_start_kind;

/* Where a child's stdout or stderr goes. */
typedef enum gs_proc_output {
    GS_PROC_DEVNULL = 0, /* /dev/null */
    GS_PROC_FILE,        /* the file (created or truncated, mode 0644) */
    GS_PROC_INHERIT      /* the parent's */
} gs_proc_output;

typedef struct gs_proc_opts {
    gs_proc_start_kind kind;
    const char *exe;                      /* EXEC, WORKER: the binary */
    const char *const *argv;              /* EXEC, WORKER: argv[0] = exe, NULL-terminated */
    const struct gs_job_request *request; /* WORKER: the job for the fork server (NULL: exec) */
    int (*fn)(void *fn_ctx); /* FUNCTION: the child's work; its return is the exit status */
    void *fn_ctx;
    gs_proc_output out, err;   /* stdout, stderr */
    const char *out_path;      /* out == GS_PROC_FILE */
    const char *err_path;      /* err == GS_PROC_FILE; the same path as out_path: one file */
    double mem_limit;          /* bytes of address space (RLIMIT_AS); <= 0: none */
    double cpu_limit_s;        /* CPU seconds (RLIMIT_CPU, rounded up; SIGXCPU, then SIGKILL a
                                * second later); <= 0: none */
    double timeout_s;          /* wall seconds from the start, then SIGKILL; <= 0: none */
    int own_group;             /* its own process group, SIGINT/SIGTERM at their defaults */
    const char *env_name;      /* set in the child only: env_name=env_value, or unset when */
    const char *env_value;     /* env_value is NULL */
    const char *exec_fail_who; /* "gensweep sweep": "<who>: cannot run EXE: why" on the child's
                                * stderr when the exec fails; NULL: nothing */
    size_t tail_bytes;         /* > 0: keep the end of err_path (this many bytes at most) */
    int remove_outputs;        /* remove out_path and err_path once reaped and at free */
} gs_proc_opts;

/* How a child ended. */
typedef struct gs_proc_result {
    int exited; /* 1: exit_code is its exit status */
    int exit_code;
    int signal;       /* > 0: the signal that killed it */
    int timed_out;    /* killed by the runner at timeout_s */
    int wstatus;      /* the raw wait status */
    double wall_s;    /* start to reap */
    double cpu_s;     /* user + system, the child and the children it waited for */
    long maxrss_kb;   /* peak RSS of the largest of those */
    const char *tail; /* tail_bytes > 0: the end of its stderr file, trailing newlines cut ("" when
                       * there was none); owned by the handle */
} gs_proc_result;

typedef struct gs_proc gs_proc;

/* Start a child. NULL with errno set when it could not be started (fork failed, out of memory);
 * an exec that fails in the child is exit status 127. stdout and stderr are flushed first so the
 * child inherits no pending output. */
gs_proc *gs_proc_start(const gs_proc_opts *o);

pid_t gs_proc_pid(const gs_proc *p);

/* Reap without blocking: the result once the child has ended, else NULL (after killing it when
 * its timeout has passed). Repeated calls after the end return the same result. */
const gs_proc_result *gs_proc_poll(gs_proc *p);

/* Block until the child ends (polling every 10 ms when it has a timeout). */
const gs_proc_result *gs_proc_wait(gs_proc *p);

/* SIGKILL the child (its process group when it has one); reap it with poll or wait. Not a
 * timeout: the result's timed_out stays 0. */
void gs_proc_kill(gs_proc *p);

/* Kill and reap a child that still runs, remove the outputs when asked, free. NULL ok. */
void gs_proc_free(gs_proc *p);

/* 1 when the child was stopped by its RLIMIT_CPU of cpu_limit_s (> 0): SIGXCPU at the soft limit
 * (the limit rounded up), or SIGKILL at the hard limit a second later. SIGXCPU is not checked
 * against the measured CPU time: rusage is tick-sampled and may read a little under the limit
 * the kernel enforced. A SIGKILL counts only with at least the soft limit used (other SIGKILLs:
 * the runner's timeout, gs_proc_kill, the OOM killer). */
int gs_proc_stopped_at_cpu_limit(const gs_proc_result *r, double cpu_limit_s);

/* Name of a signal that ends a job ("SIGSEGV", "SIGINT", "SIGXCPU", ...), or "signal". */
const char *gs_proc_signal_name(int sig);

/* For a signal handler about to end the process: SIGKILL every child started here and not yet
 * reaped (their process groups for own_group), then reap them, so none is still writing when
 * the handler removes their files. Async-signal-safe (kill and waitpid only); children beyond
 * the first GS_PROC_TRACKED running at once are not reached (they still die with the parent). */
#define GS_PROC_TRACKED 64
void gs_proc_kill_running(void);

#ifdef __cplusplus
}
#endif
#endif
