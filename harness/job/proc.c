/* proc.c - the one runner for child processes (see proc.h). */
#define _GNU_SOURCE /* wait4 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gs/common.h"
#include "worker.h"

struct gs_proc {
    pid_t pid; /* 0 once reaped */
    double start;
    int own_group;
    double timeout_s;
    int reaped;
    char *out_path, *err_path; /* owned copies: removed when remove_outputs */
    int remove_outputs;
    size_t tail_bytes;
    char *tail;
    gs_proc_result res;
};

/* Children started and not yet reaped, for gs_proc_kill_running: the pid, negated for a child
 * with its own process group; 0 is a free slot. Written by the runner, read by a handler. */
static volatile sig_atomic_t g_running[GS_PROC_TRACKED];

static void track(pid_t pid, int own_group)
{
    for (int i = 0; i < GS_PROC_TRACKED; i++)
        if (g_running[i] == 0) {
            g_running[i] = own_group ? -pid : pid;
            return;
        }
}

static void untrack(pid_t pid)
{
    for (int i = 0; i < GS_PROC_TRACKED; i++)
        if (g_running[i] == pid || g_running[i] == -pid) g_running[i] = 0;
}

void gs_proc_kill_running(void)
{
    for (int i = 0; i < GS_PROC_TRACKED; i++)
        if (g_running[i] != 0) kill(g_running[i], SIGKILL);
    for (int i = 0; i < GS_PROC_TRACKED; i++) {
        pid_t pid = g_running[i] < 0 ? -g_running[i] : g_running[i];
        if (pid > 0)
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
            }
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

/* In the child: fd `to` from `how` (path for files). Best effort: a child that cannot open its
 * output still runs, as a job whose stderr file is missing reports no tail. */
static void redirect(int to, gs_proc_output how, const char *path, int dev_null)
{
    if (how == GS_PROC_INHERIT) return;
    if (how == GS_PROC_FILE && path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, to);
            if (fd != to) close(fd);
        }
        return;
    }
    if (dev_null >= 0) dup2(dev_null, to);
}

/*
 * In the child, first: die with the parent. A parent killed with SIGKILL (a Slurm time limit, the
 * OOM killer, kill -9) cannot kill its children, and its timeouts die with it: a hung job would
 * spin forever as an orphan. The kernel sends SIGKILL when the parent exits; the setting survives
 * the exec of `gensweep run`, python or any binary that is not setuid, and the child's own
 * children get the same from their runner, so a chain dies link by link. It is tied to the thread
 * that forked: the runner's callers start children from their main thread (the sweep is single-
 * threaded). A parent that died before the prctl is seen as a changed parent pid.
 */
static void die_with_parent(pid_t parent)
{
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return; /* best effort: the group still helps */
    if (getppid() != parent) raise(SIGKILL);
#else
    (void)parent;
#endif
}

/* The child side of gs_proc_start; never returns. */
static void child(const gs_proc_opts *o, pid_t parent)
{
    die_with_parent(parent);
    if (o->own_group) {
        /* a timeout kills the child and anything it started; Ctrl-C on the terminal reaches
         * only the parent, which decides; the parent's handlers are not the child's */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
    }
    if (o->cpu_limit_s > 0) {
        /* the kernel's own stop, even when the parent cannot poll (stopped, or busy) */
        struct rlimit rl;
        rl.rlim_cur = (rlim_t)ceil(o->cpu_limit_s);
        rl.rlim_max = rl.rlim_cur + 1;
        setrlimit(RLIMIT_CPU, &rl);
    }
    int dn = open("/dev/null", O_RDWR);
    if (dn >= 0) dup2(dn, 0);
    redirect(1, o->out, o->out_path, dn);
    if (o->err == GS_PROC_FILE && o->out == GS_PROC_FILE && o->err_path && o->out_path &&
        !strcmp(o->err_path, o->out_path))
        dup2(1, 2); /* one file: truncated once, both streams appended in order */
    else
        redirect(2, o->err, o->err_path, dn);
    if (dn > 2) close(dn);
    if (o->env_name) {
        if (o->env_value)
            setenv(o->env_name, o->env_value, 1);
        else
            unsetenv(o->env_name);
    }
    if (o->mem_limit > 0) {
        /* last, after setenv's allocation: a limit below what this process already maps (an
         * ASan build maps terabytes of shadow) fails the next mmap here, and ASan's allocator
         * aborts on that instead of returning NULL, killing the child by SIGABRT before it runs
         * (the flaky "front end was killed by SIGABRT" of nki_frontend_Limits) */
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = (rlim_t)o->mem_limit;
        setrlimit(RLIMIT_AS, &rl);
    }
    if (o->kind == GS_PROC_FUNCTION) {
        int rc = o->fn ? o->fn(o->fn_ctx) : 127;
        fflush(stdout);
        fflush(stderr);
        _exit(rc & 0xff); /* no atexit handlers or static destructors of the parent's image */
    }
    if (o->kind == GS_PROC_WORKER)
        gs_worker_start_job(o->exe, o->argv, o->request); /* fork server; exec as fallback */
    else
        gs_execv(o->exe, o->argv);
    if (o->exec_fail_who)
        fprintf(stderr, "%s: cannot run %s: %s\n", o->exec_fail_who, o->exe, strerror(errno));
    _exit(127);
}

gs_proc *gs_proc_start(const gs_proc_opts *o)
{
    gs_proc *p = gs_calloc(1, sizeof *p);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    p->own_group = o->own_group;
    p->timeout_s = o->timeout_s;
    p->remove_outputs = o->remove_outputs;
    p->tail_bytes = o->tail_bytes;
    if ((o->out == GS_PROC_FILE && o->out_path && !(p->out_path = gs_strdup(o->out_path))) ||
        (o->err == GS_PROC_FILE && o->err_path && !(p->err_path = gs_strdup(o->err_path)))) {
        gs_free(p->out_path);
        gs_free(p);
        errno = ENOMEM;
        return NULL;
    }
    fflush(stdout); /* a forked child must not inherit (and flush) the parent's pending output */
    fflush(stderr);
    p->start = now_s();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) child(o, parent);
    if (pid < 0) {
        int e = errno;
        gs_free(p->out_path);
        gs_free(p->err_path);
        gs_free(p);
        errno = e;
        return NULL;
    }
    if (o->own_group) setpgid(pid, pid); /* also here: no race with the child's own call */
    p->pid = pid;
    track(pid, o->own_group);
    return p;
}

pid_t gs_proc_pid(const gs_proc *p)
{
    return p->pid;
}

void gs_proc_kill(gs_proc *p)
{
    if (!p || p->reaped || p->pid <= 0) return;
    kill(p->own_group ? -p->pid : p->pid, SIGKILL);
}

/* The last lines of the child's stderr file (at most tail_bytes, from a line boundary). */
static char *read_tail(const char *path, size_t max)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) return gs_strdup("");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)max ? size - (long)max : 0;
    fseek(f, from, SEEK_SET);
    char *buf = gs_malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max, f) : 0;
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    char *start = buf;
    if (from > 0) {
        char *nl = strchr(buf, '\n');
        if (nl) start = nl + 1;
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    char *out = gs_strdup(start);
    gs_free(buf);
    return out;
}

static void remove_outputs(gs_proc *p)
{
    if (!p->remove_outputs) return;
    if (p->out_path) remove(p->out_path);
    if (p->err_path) remove(p->err_path);
}

static const gs_proc_result *finish(gs_proc *p, int ws, const struct rusage *ru)
{
    gs_proc_result *r = &p->res;
    untrack(p->pid);
    r->wall_s = now_s() - p->start;
    r->wstatus = ws;
    r->exited = WIFEXITED(ws);
    r->exit_code = r->exited ? WEXITSTATUS(ws) : -1;
    r->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    r->cpu_s = tv_s(ru->ru_utime) + tv_s(ru->ru_stime);
    r->maxrss_kb = ru->ru_maxrss;
    if (p->tail_bytes > 0) {
        p->tail = read_tail(p->err_path, p->tail_bytes);
        r->tail = p->tail;
    }
    remove_outputs(p);
    p->reaped = 1;
    return r;
}

const gs_proc_result *gs_proc_poll(gs_proc *p)
{
    if (p->reaped) return &p->res;
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t w = wait4(p->pid, &ws, WNOHANG, &ru);
    if (w == p->pid) return finish(p, ws, &ru);
    if (w < 0 && errno == ECHILD) {
        /* reaped elsewhere: ended, how is unknown (exit status -1) */
        memset(&ru, 0, sizeof ru);
        const gs_proc_result *r = finish(p, 0, &ru);
        p->res.exited = 0;
        p->res.exit_code = -1;
        return r;
    }
    if (p->timeout_s > 0 && !p->res.timed_out && now_s() - p->start > p->timeout_s) {
        p->res.timed_out = 1;
        kill(p->own_group ? -p->pid : p->pid, SIGKILL);
    }
    return NULL;
}

const gs_proc_result *gs_proc_wait(gs_proc *p)
{
    if (p->timeout_s > 0) {
        const gs_proc_result *r;
        while ((r = gs_proc_poll(p)) == NULL) {
            struct timespec nap = {0, 10 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
        return r;
    }
    if (p->reaped) return &p->res;
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t w;
    while ((w = wait4(p->pid, &ws, 0, &ru)) < 0 && errno == EINTR) {
    }
    if (w != p->pid) return gs_proc_poll(p); /* ECHILD: see poll */
    return finish(p, ws, &ru);
}

void gs_proc_free(gs_proc *p)
{
    if (!p) return;
    if (!p->reaped) {
        gs_proc_kill(p);
        p->timeout_s = 0;
        gs_proc_wait(p);
    }
    remove_outputs(p);
    gs_free(p->tail);
    gs_free(p->out_path);
    gs_free(p->err_path);
    gs_free(p);
}

int gs_proc_stopped_at_cpu_limit(const gs_proc_result *r, double cpu_limit_s)
{
    if (!r || r->exited || r->timed_out || cpu_limit_s <= 0) return 0;
    if (r->signal == SIGXCPU) return 1;
    return r->signal == SIGKILL && r->cpu_s >= ceil(cpu_limit_s);
}

const char *gs_proc_signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
        {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},
        {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    return "signal";
}
