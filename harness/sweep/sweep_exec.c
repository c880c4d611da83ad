/*
 * sweep_exec.c - running the sweep's jobs: each a child process of the runner (proc.h) in its
 * own process group (forked from the pre-loaded worker, worker.h, or exec'd), at most opts.jobs
 * at once, with a timeout and an address-space limit; a finished process becomes its record (the
 * job's own, or one written here for a crash, timeout, sanitizer report or a job that left none);
 * SIGINT/SIGTERM stop launching and kill what runs. Also the lock that makes an output directory
 * one sweep's alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "jobspec.h"
#include "proc.h"
#include "record.h"
#include "results.h"
#include "sweep_internal.h"
#include "worker.h"

/* The end of a failed job's stderr kept in its record: room for a sanitizer report (its stack
 * trace alone runs to ~2 KB) and the job's own last lines before it. */
#define TAIL_BYTES 4096

/* Set by the SIGINT/SIGTERM handler; a handler can only reach a file-scope flag. */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

typedef struct slot {
    gs_proc *proc; /* NULL: free */
    size_t job;
} slot;

static void job_file(const gs_sweep *s, size_t j, const char *ext, char *buf, size_t n)
{
    snprintf(buf, n, "%s/job-%zu.%s", s->tmp_dir, j, ext);
}

/* Make a file name out of a job id for --trace-dir. */
static void id_to_file(const char *id, char *buf, size_t n)
{
    size_t w = 0;
    for (const char *p = id; *p && w + 1 < n; p++)
        buf[w++] = (*p == '/' || *p == ' ') ? '_' : *p;
    buf[w] = '\0';
}

/* Start job ji: a request for the fork server, or `gensweep run --config FILE <job options>
 * [--set ...] ... --record FILE` exec'd. */
static gs_proc *launch(gs_sweep *s, size_t ji)
{
    const sweep_job *j = &s->jobs[ji];
    char rec[4200], errf[4200], trace[4200], tl[64];
    gs_job_argv ja;
    gs_job_spec_to_argv(&j->spec, &ja);
    job_file(s, ji, "json", rec, sizeof rec);
    job_file(s, ji, "err", errf, sizeof errf);
    snprintf(tl, sizeof tl, "%g", s->o.timeout_s);
    /* every --set reaches the job: a dropped one would run a different config */
    const char **argv = gs_calloc(16 + (size_t)ja.argc + 2 * s->o.n_sets, sizeof *argv);
    if (!argv) {
        errno = ENOMEM;
        return NULL;
    }
    int a = 0;
    argv[a++] = s->exe;
    argv[a++] = "run";
    argv[a++] = "--config";
    argv[a++] = s->cfg_paths[j->cfg];
    for (int i = 0; i < ja.argc; i++)
        argv[a++] = ja.argv[i];
    for (size_t i = 0; i < s->o.n_sets; i++) {
        argv[a++] = "--set";
        argv[a++] = s->o.sets[i];
    }
    if (!j->functional) argv[a++] = "--timing-only";
    argv[a++] = "--record";
    argv[a++] = rec;
    int timeline = s->o.timelines < 0 ? j->functional : s->o.timelines;
    if (timeline) argv[a++] = "--timeline";
    if (s->o.trace_dir) {
        char f[600];
        id_to_file(j->id, f, sizeof f);
        snprintf(trace, sizeof trace, "%s/%s.json", s->o.trace_dir, f);
        argv[a++] = "--trace";
        argv[a++] = trace;
    }
    argv[a++] = "--wall-limit";
    argv[a++] = tl;
    /* the child gets the sweep's limit as an rlimit below; 0 keeps it (no second default) */
    argv[a++] = "--mem-limit";
    argv[a++] = "0";
    argv[a] = NULL;
    remove(rec);
    /* the same job as a request for the fork server (the argv is for the exec fallback) */
    gs_job_spec spec = j->spec;
    spec.cfg = s->cfgs[j->cfg];
    gs_job_request rq;
    memset(&rq, 0, sizeof rq);
    rq.spec = &spec;
    rq.run.functional = j->functional;
    rq.run.timeline = timeline;
    rq.run.trace = s->o.trace_dir ? trace : NULL;
    rq.run.wall_limit_s = strtod(tl, NULL); /* the value the exec'd job parses */
    rq.record = rec;
    rq.mem_limit = 0; /* the child gets the sweep's limit as an rlimit below */
    gs_proc_opts po;
    memset(&po, 0, sizeof po);
    po.kind = GS_PROC_WORKER;
    po.exe = s->exe;
    po.argv = argv;
    po.request = &rq;
    po.out = GS_PROC_DEVNULL;
    po.err = GS_PROC_FILE;
    po.err_path = errf;
    po.mem_limit = s->o.mem_limit;
    po.timeout_s = s->o.timeout_s + 1.0;
    po.own_group = 1;
    po.exec_fail_who = "gensweep sweep"; /* the job's own stderr (its record's tail) */
    po.tail_bytes = TAIL_BYTES;
    po.remove_outputs = 1;
    gs_proc *p = gs_proc_start(&po);
    int e = errno;
    gs_free(argv);
    errno = e;
    return p;
}

/* A record written by the parent for a job that left none (crash, timeout, lost). */
static cJSON *parent_record(const sweep_job *j, gs_job_status st, const char *reason,
                            const char *tail)
{
    gs_record_job_info info;
    memset(&info, 0, sizeof info);
    info.spec = &j->spec;
    info.functional = j->functional;
    info.status = st;
    info.reason = reason;
    info.stderr_tail = tail;
    info.wall_s = -1;
    gs_sb sb;
    gs_sb_init(&sb);
    gs_record_write_job(&sb, &info);
    cJSON *r = gs_sb_ok(&sb) ? cJSON_Parse(gs_sb_cstr(&sb)) : NULL;
    gs_sb_free(&sb);
    return r;
}

int gs_sweep_record_failed(const cJSON *rec)
{
    const char *st = gs_json_str(rec, "status");
    for (int q = 0; q < GS_JOB_STATUS_COUNT; q++)
        if (!strcmp(st, gs_job_status_name((gs_job_status)q)))
            return gs_job_status_is_failure((gs_job_status)q);
    return 1;
}

/* A job killed by a signal: "crash", saying why when its stderr tells (out of memory under the
 * limit, a sanitizer report ending in SIGABRT with ASAN_OPTIONS=abort_on_error=1). */
static cJSON *crash_record(const gs_sweep *s, const sweep_job *j, int sig, const char *tail)
{
    char reason[512];
    int oom = tail && (strstr(tail, "bad_alloc") || strstr(tail, "out of memory") ||
                       strstr(tail, "Cannot allocate"));
    char lim[96] = "";
    if (oom && s->o.mem_limit > 0)
        snprintf(lim, sizeof lim, " after running out of memory (limit %.0f MiB per job)",
                 s->o.mem_limit / (1024.0 * 1024.0));
    const char *san = tail ? strstr(tail, "ERROR: ") : NULL;
    if (san && strstr(san, "Sanitizer") && !lim[0])
        snprintf(lim, sizeof lim, " after a sanitizer report: %.*s",
                 (int)GS_MIN(strcspn(san, "\n"), (size_t)60), san);
    snprintf(reason, sizeof reason, "job process killed by signal %d (%s)%s", sig,
             gs_proc_signal_name(sig), lim);
    return parent_record(j, GS_JOB_CRASH, reason, tail);
}

/* Whether the job directory can take a write, and if not, why (errno): a job that could not
 * write its record on a full disk could not write its stderr there either, so nothing else says
 * so. The probe is larger than a record, written whole, then removed. */
static int job_dir_write_errno(const char *dir)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/probe-%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    static const char zeros[64 * 1024];
    int e = 0;
    for (size_t done = 0; done < sizeof zeros && !e;) { /* a short write: the next one says why */
        ssize_t w = write(fd, zeros + done, sizeof zeros - done);
        if (w < 0 && errno != EINTR)
            e = errno;
        else if (w == 0)
            e = ENOSPC;
        else if (w > 0)
            done += (size_t)w;
    }
    if (close(fd) != 0 && !e) e = errno;
    unlink(probe);
    return e;
}

/* A job that exited: its own record (with the stderr tail added for failures), or, when it left
 * none, "crash" for a sanitizer report (exit 1 under ASan/UBSan, not a signal) or "error". */
static cJSON *exited_record(const sweep_job *j, const char *dir, const char *rec, int exit_code,
                            const char *tail, double *wall_s)
{
    gs_error err;
    gs_error_clear(&err);
    cJSON *r = access(rec, R_OK) == 0 ? gs_json_read_file(rec, &err) : NULL;
    if (r && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "status"))) {
        cJSON_Delete(r);
        r = NULL;
    }
    if (r) {
        double w = gs_json_num(r, "wall_s");
        if (!isnan(w)) *wall_s = w;
        cJSON_DeleteItemFromObjectCaseSensitive(r, "wall_s");
        /* the record is the job's own word; add the stderr tail for failures */
        if (gs_sweep_record_failed(r) && tail)
            cJSON_ReplaceItemInObjectCaseSensitive(r, "stderr_tail", cJSON_CreateString(tail));
        return r;
    }
    char reason[512];
    const char *san = tail ? strstr(tail, "ERROR: ") : NULL;
    if (san && (strstr(san, "Sanitizer") || strstr(san, "LeakSanitizer"))) {
        size_t len = strcspn(san, "\n");
        snprintf(reason, sizeof reason, "job process stopped by a sanitizer: %.*s",
                 (int)GS_MIN(len, (size_t)300), san);
        return parent_record(j, GS_JOB_CRASH, reason, tail);
    }
    const int werr = job_dir_write_errno(dir);
    if (werr)
        snprintf(reason, sizeof reason,
                 "job process exited with status %d without writing its record: its output "
                 "folder cannot be written (%s)",
                 exit_code, strerror(werr));
    else
        snprintf(reason, sizeof reason,
                 "job process exited with status %d without writing its record", exit_code);
    return parent_record(j, GS_JOB_ERROR, reason, tail);
}

/* Turn a finished job process into its record (its stderr file is already read and gone). */
static cJSON *collect(gs_sweep *s, size_t ji, const gs_proc_result *pr, double *wall_s)
{
    const sweep_job *j = &s->jobs[ji];
    char rec[4200];
    job_file(s, ji, "json", rec, sizeof rec);
    const char *tail = pr->tail;
    cJSON *r = NULL;
    *wall_s = pr->wall_s;
    if (pr->timed_out) {
        char reason[512];
        snprintf(reason, sizeof reason, "no result after %g s: killed (--timeout)", s->o.timeout_s);
        r = parent_record(j, GS_JOB_TIMEOUT, reason, tail);
    } else if (pr->signal > 0) {
        r = crash_record(s, j, pr->signal, tail);
    } else {
        r = exited_record(j, s->tmp_dir, rec, pr->exit_code, tail, wall_s);
    }
    remove(rec);
    return r;
}

/* Remove every file in dir (job records, stderr files, and the temp files of job processes
 * killed while writing), then dir itself. */
static void remove_tree_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            gs_sb p;
            gs_sb_init(&p);
            gs_sb_printf(&p, "%s/%s", dir, de->d_name);
            if (gs_sb_ok(&p)) unlink(gs_sb_cstr(&p));
            gs_sb_free(&p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Remove the job directories (.jobs-<pid>) that sweeps killed with SIGKILL left in out: those
 * of a pid that no longer exists. A live pid's (another user's too: EPERM) is kept, and only
 * real directories are touched, never what a symlink points to. */
static void remove_stale_job_dirs(const char *out)
{
    DIR *d = opendir(out);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, ".jobs-", 6) != 0) continue;
        const char *digits = de->d_name + 6;
        char *end = NULL;
        errno = 0;
        long pid = strtol(digits, &end, 10);
        if (!*digits || *end || errno || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        gs_sb p;
        gs_sb_init(&p);
        gs_sb_printf(&p, "%s/%s", out, de->d_name);
        struct stat st;
        if (gs_sb_ok(&p) && lstat(gs_sb_cstr(&p), &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree_files(gs_sb_cstr(&p));
        gs_sb_free(&p);
    }
    closedir(d);
}

/* A POSIX record lock on DIR/.gensweep.lock: released by the kernel however the sweep ends,
 * kill -9 included. opt names the option DIR came from (--out, --trace-dir) in the error. */
static int lock_dir(const char *dir, const char *opt, gs_error *err)
{
    gs_sb p;
    gs_sb_init(&p);
    gs_sb_printf(&p, "%s/.gensweep.lock", dir);
    int fd =
        gs_sb_ok(&p) ? open(gs_sb_cstr(&p), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666) : -1;
    if (fd < 0) {
        gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "%s: cannot create the lock file: %s",
                     gs_sb_cstr(&p), strerror(errno));
        gs_sb_free(&p);
        return -1;
    }
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        int e = errno;
        struct flock who = fl;
        long pid = fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? (long)who.l_pid : 0;
        if ((e == EACCES || e == EAGAIN) && pid)
            gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                         "%s %s is in use by another sweep (pid %ld); wait for it or choose "
                         "another %s",
                         opt, dir, pid, opt);
        else if (e == EACCES || e == EAGAIN)
            gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                         "%s %s is in use by another sweep; wait for it or choose another %s", opt,
                         dir, opt);
        else
            gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "%s: cannot lock: %s", gs_sb_cstr(&p),
                         strerror(e));
        close(fd);
        gs_sb_free(&p);
        return -1;
    }
    gs_sb_free(&p);
    return fd;
}

/* The same directory (one lock file: a second descriptor's close would drop the first's lock)? */
static int same_dir(const char *a, const char *b)
{
    struct stat st_a, st_b;
    return stat(a, &st_a) == 0 && stat(b, &st_b) == 0 && st_a.st_dev == st_b.st_dev &&
           st_a.st_ino == st_b.st_ino;
}

int gs_sweep_lock_out(gs_sweep *s, gs_error *err)
{
    const char *dir = s->o.out_dir;
    /* The output (and trace) directory must be usable before any job runs: a file given as
     * --out or --trace-dir is one usage error, not a failure of every job. */
    if (gs_mkdirs(dir, err) != GS_OK || (s->o.trace_dir && gs_mkdirs(s->o.trace_dir, err) != GS_OK))
        return -1;
    int fd = lock_dir(dir, "--out", err);
    if (fd < 0) return -1;
    /* two sweeps writing traces into one directory overwrite each other's: the trace
     * directory is locked the same way (s holds that lock until gs_sweep_free) */
    if (s->o.trace_dir && s->trace_lock_fd < 0 && !same_dir(dir, s->o.trace_dir)) {
        s->trace_lock_fd = lock_dir(s->o.trace_dir, "--trace-dir", err);
        if (s->trace_lock_fd < 0) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void report(const gs_sweep *s, gs_sweep_progress *p, gs_sweep_event ev, double t0)
{
    if (!s->o.progress) return;
    p->event = ev;
    p->elapsed_s = now_s() - t0;
    p->quiet = s->o.quiet;
    s->o.progress(s->o.progress_ctx, p);
}

cJSON *gs_sweep_execute(gs_sweep *s, int *interrupted, gs_error *err)
{
    *interrupted = 0;
    remove_stale_job_dirs(s->o.out_dir);
    snprintf(s->tmp_dir, sizeof s->tmp_dir, "%s/.jobs-%ld", s->o.out_dir, (long)getpid());
    if (gs_mkdirs(s->tmp_dir, err) != GS_OK ||
        (s->o.trace_dir && gs_mkdirs(s->o.trace_dir, err) != GS_OK))
        return NULL;
    char started[32];
    utc_now(started, sizeof started);
    cJSON **recs = gs_calloc(s->n_jobs + 1, sizeof *recs);
    double *walls = gs_calloc(s->n_jobs + 1, sizeof *walls);
    slot *slots = gs_calloc((size_t)s->o.jobs, sizeof *slots);
    if (!recs || !walls || !slots) {
        gs_free(recs);
        gs_free(walls);
        gs_free(slots);
        gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_requested = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    gs_sweep_progress pr;
    memset(&pr, 0, sizeof pr);
    pr.total = s->n_jobs;
    double t0 = now_s(), last_tick = 0;
    size_t next = 0;
    int running = 0, stopping = 0;
    while (running > 0 || (next < s->n_jobs && !stopping)) {
        if (stop_requested && !stopping) {
            stopping = 1;
            for (int i = 0; i < s->o.jobs; i++)
                gs_proc_kill(slots[i].proc);
        }
        while (!stopping && running < s->o.jobs && next < s->n_jobs) {
            int free_slot = -1;
            for (int i = 0; i < s->o.jobs && free_slot < 0; i++)
                if (!slots[i].proc) free_slot = i;
            gs_proc *proc = launch(s, next);
            if (!proc) {
                char reason[160];
                snprintf(reason, sizeof reason, "cannot start the job process: %s",
                         strerror(errno));
                recs[next] = parent_record(&s->jobs[next], GS_JOB_ERROR, reason, "");
                pr.failures++;
                pr.done++;
                next++;
                continue;
            }
            slots[free_slot].proc = proc;
            slots[free_slot].job = next++;
            running++;
        }
        /* reap what ended (the runner kills a job past its timeout while polling) */
        int reaped = 0;
        for (int i = 0; i < s->o.jobs; i++) {
            const gs_proc_result *res = slots[i].proc ? gs_proc_poll(slots[i].proc) : NULL;
            if (!res) continue;
            reaped++;
            running--;
            size_t ji = slots[i].job;
            if (!(stopping && !res->timed_out)) { /* killed by us: no result */
                recs[ji] = collect(s, ji, res, &walls[ji]);
                pr.done++;
                pr.failed = !recs[ji] || gs_sweep_record_failed(recs[ji]);
                if (pr.failed) pr.failures++;
                pr.id = s->jobs[ji].id;
                pr.record = recs[ji];
                report(s, &pr, GS_SWEEP_JOB_DONE, t0);
                pr.id = NULL;
                pr.record = NULL;
                pr.failed = 0;
            }
            gs_proc_free(slots[i].proc);
            slots[i].proc = NULL;
        }
        if (reaped) continue;
        double t = now_s();
        if (t - last_tick > 0.5) {
            last_tick = t;
            report(s, &pr, GS_SWEEP_TICK, t0);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    report(s, &pr, GS_SWEEP_END, t0);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    *interrupted = stopping;
    /* leftovers of killed jobs (their stderr files went with their runner handles) */
    for (size_t i = 0; i < s->n_jobs; i++) {
        char f[4200];
        job_file(s, i, "json", f, sizeof f);
        remove(f);
    }
    remove_tree_files(s->tmp_dir);
    char finished[32];
    utc_now(finished, sizeof finished);
    cJSON *doc = gs_sweep_document(s, recs, walls, stopping, started, finished, now_s() - t0);
    gs_free(recs);
    gs_free(walls);
    gs_free(slots);
    if (!doc) gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return doc;
}
