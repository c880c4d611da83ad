/* sweep.c - the generation sweep: plan, run job processes, assemble results (see sweep.h). */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "datadir.h"
#include "gs/strbuf.h"
#include "record.h"
#include "results.h"
#include "version.h"
#include "calibrate.h"
#include "worker.h"

#include "report.h"

#define MAX_ARGS 64
#define TAIL_BYTES 2000

typedef struct sweep_job {
    size_t cfg;
    gs_job_spec spec;
    int functional;
    char id[512];
} sweep_job;

struct gs_sweep {
    gs_sweep_opts o;
    gs_config **cfgs;
    char **cfg_paths;
    size_t n_cfgs;
    sweep_job *jobs;
    size_t n_jobs, cap_jobs;
    size_t planned; /* jobs of the whole (unsharded) plan */
    char exe[4096];
    char tmp_dir[4096];
};

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

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void print_diags(gs_diags *d)
{
    char buf[2048];
    for (size_t i = 0; i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        fprintf(stderr, "%s\n", buf);
    }
}

static int add_config(gs_sweep *s, const char *path)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *c = gs_config_load(path, &d);
    for (size_t i = 0; c && i < s->o.n_sets; i++)
        if (gs_config_set(c, s->o.sets[i], &d) != GS_OK) {
            gs_config_free(c);
            c = NULL;
        }
    if (!c) {
        print_diags(&d);
        gs_diags_free(&d);
        return -1;
    }
    gs_diags_free(&d);
    for (size_t i = 0; i < s->n_cfgs; i++)
        if (!strcmp(s->cfgs[i]->name, c->name)) {
            fprintf(stderr, "gensweep sweep: %s and %s both define generation '%s'\n",
                    s->cfg_paths[i], path, c->name);
            gs_config_free(c);
            return -1;
        }
    gs_config **nc = gs_realloc(s->cfgs, (s->n_cfgs + 1) * sizeof *nc);
    if (nc) s->cfgs = nc;
    char **np = gs_realloc(s->cfg_paths, (s->n_cfgs + 1) * sizeof *np);
    if (np) s->cfg_paths = np;
    char *dup = gs_strdup(path);
    if (!nc || !np || !dup) {
        gs_free(dup);
        gs_config_free(c);
        fprintf(stderr, "gensweep sweep: out of memory\n");
        return -1;
    }
    s->cfgs[s->n_cfgs] = c;
    s->cfg_paths[s->n_cfgs++] = dup;
    return 0;
}

/* A directory contributes its *.yaml files (not subdirectories: what-if variants live in
 * configs/whatif/ and are swept only when named). */
static int add_config_arg(gs_sweep *s, const char *arg)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        fprintf(stderr, "gensweep sweep: --configs %s: %s\n", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return add_config(s, arg);
    DIR *d = opendir(arg);
    if (!d) {
        fprintf(stderr, "gensweep sweep: --configs %s: %s\n", arg, strerror(errno));
        return -1;
    }
    char *names[256];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < GS_ARRAY_LEN(names)) {
        size_t len = strlen(de->d_name);
        if (len > 5 && !strcmp(de->d_name + len - 5, ".yaml") && de->d_name[0] != '.') {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", arg, de->d_name);
            names[n++] = gs_strdup(p);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, str_cmp);
    int rc = n ? 0 : -1;
    if (!n) fprintf(stderr, "gensweep sweep: --configs %s: no *.yaml files\n", arg);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && (!names[i] || add_config(s, names[i]) != 0)) rc = -1;
        gs_free(names[i]);
    }
    return rc;
}

void gs_sweep_opts_default(gs_sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    o->suite = GS_SWEEP_CHECK;
    o->threshold = 0.02;
    o->timelines = -1;
#if defined(__SANITIZE_ADDRESS__)
#define GS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_ASAN 1
#endif
#endif
#ifdef GS_ASAN
    /* ASan reserves terabytes of address space: RLIMIT_AS would kill every job. */
    o->mem_limit = 0;
#else
    o->mem_limit = GS_SWEEP_DEFAULT_MEM_LIMIT;
#endif
}

gs_sweep *gs_sweep_create(const gs_sweep_opts *o)
{
    gs_sweep *s = gs_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->o = *o;
    if (s->o.shard_count <= 0) s->o.shard_index = s->o.shard_count = 1;
    if (!s->o.out_dir) s->o.out_dir = GS_SWEEP_DEFAULT_OUT;
    if (s->o.timeout_s <= 0) s->o.timeout_s = GS_SWEEP_DEFAULT_TIMEOUT;
    if (s->o.jobs <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        s->o.jobs = n > 0 ? (int)n : 1;
    }
    ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
    if (n <= 0) {
        fprintf(stderr, "gensweep sweep: cannot find its own binary (/proc/self/exe): %s\n",
                strerror(errno));
        gs_free(s);
        return NULL;
    }
    s->exe[n] = '\0';
    const char *const def_configs[] = {gs_default_configs_dir()};
    const char *const *cl = o->n_configs ? o->configs : def_configs;
    size_t ncl = o->n_configs ? o->n_configs : 1;
    for (size_t i = 0; i < ncl; i++)
        if (add_config_arg(s, cl[i]) != 0) {
            gs_sweep_free(s);
            return NULL;
        }
    return s;
}

void gs_sweep_free(gs_sweep *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_cfgs; i++) {
        gs_config_free(s->cfgs[i]);
        gs_free(s->cfg_paths[i]);
    }
    gs_free(s->cfgs);
    gs_free(s->cfg_paths);
    gs_free(s->jobs);
    gs_free(s);
}

size_t gs_sweep_config_count(const gs_sweep *s)
{
    return s->n_cfgs;
}

const gs_config *gs_sweep_config(const gs_sweep *s, size_t i)
{
    return i < s->n_cfgs ? s->cfgs[i] : NULL;
}

const char *gs_sweep_config_path(const gs_sweep *s, size_t i)
{
    return i < s->n_cfgs ? s->cfg_paths[i] : NULL;
}

size_t gs_sweep_job_count(const gs_sweep *s)
{
    return s->n_jobs;
}

int gs_sweep_add(gs_sweep *s, size_t cfg_index, const gs_job_spec *spec, int functional)
{
    if (s->n_jobs == s->cap_jobs) {
        size_t nc = s->cap_jobs ? s->cap_jobs * 2 : 64;
        sweep_job *g = gs_realloc(s->jobs, nc * sizeof *g);
        if (!g) return -1;
        s->jobs = g;
        s->cap_jobs = nc;
    }
    sweep_job *j = &s->jobs[s->n_jobs++];
    memset(j, 0, sizeof *j);
    j->cfg = cfg_index;
    j->spec = *spec;
    j->spec.cfg = s->cfgs[cfg_index];
    if (!j->spec.seed) j->spec.seed = 1;
    j->functional = functional;
    gs_sb id;
    gs_sb_init(&id);
    gs_record_job_id(&id, &j->spec);
    snprintf(j->id, sizeof j->id, "%s", gs_sb_cstr(&id));
    gs_sb_free(&id);
    return 0;
}

/* Tuned default params for kernel k from <config dir>/tuning/<name>.json (written by
 * `gensweep tune --write`); params untouched when there is none. */
/* The tuning file of config ci, when there is one to use: 1 with its path in buf. */
static int tuning_path(const gs_sweep *s, size_t ci, char *buf, size_t size)
{
    if (s->o.no_tuning) return 0;
    const char *cp = s->cfg_paths[ci];
    const char *slash = strrchr(cp, '/');
    int dl = slash ? (int)(slash - cp) : 1;
    snprintf(buf, size, "%.*s/tuning/%s.json", dl, slash ? cp : ".", s->cfgs[ci]->name);
    return access(buf, R_OK) == 0;
}

static void apply_tuning(const gs_sweep *s, size_t ci, const gs_kernel_def *k, int64_t *params)
{
    char path[4096];
    if (!tuning_path(s, ci, path, sizeof path)) return;
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_json_read_file(path, &err);
    if (!doc) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "gensweep sweep: ignoring tuning file: %s\n", buf);
        return;
    }
    const cJSON *kp = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "kernels"), k->name),
        "params");
    for (int p = 0; p < k->n_params; p++) {
        double v = gs_json_num(kp, k->param_names[p]);
        if (!isnan(v) && v >= 0 && v < 1e12) params[p] = (int64_t)v;
    }
    cJSON_Delete(doc);
}

static gs_dtype default_dtype(const gs_kernel_def *k)
{
    if (k->dtypes & (1u << GS_BF16)) return GS_BF16;
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (k->dtypes & (1u << t)) return (gs_dtype)t;
    return GS_BF16;
}

static int job_cmp(const void *a, const void *b)
{
    return strcmp(((const sweep_job *)a)->id, ((const sweep_job *)b)->id);
}

int gs_sweep_plan(gs_sweep *s)
{
    const gs_kernel_def *sel[256];
    size_t n_sel = 0;
    if (s->o.kernels && s->o.kernels[0]) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", s->o.kernels);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            const gs_kernel_def *k = gs_suite_find(t);
            if (!k) {
                fprintf(stderr, "gensweep sweep: unknown kernel '%s'; known:", t);
                for (size_t i = 0; i < gs_suite_count(); i++)
                    fprintf(stderr, " %s", gs_suite_kernel(i)->name);
                fprintf(stderr, "\n");
                return -1;
            }
            if (n_sel < GS_ARRAY_LEN(sel)) sel[n_sel++] = k;
        }
    } else {
        for (size_t i = 0; i < gs_suite_count() && n_sel < GS_ARRAY_LEN(sel); i++)
            sel[n_sel++] = gs_suite_kernel(i);
    }
    for (size_t ci = 0; ci < s->n_cfgs; ci++)
        for (size_t ki = 0; ki < n_sel; ki++) {
            const gs_kernel_def *k = sel[ki];
            gs_job_spec spec;
            memset(&spec, 0, sizeof spec);
            spec.kernel = k;
            spec.seed = 1;
            apply_tuning(s, ci, k, spec.params);
            gs_dtype dt0 = default_dtype(k);
            for (int v = 0; v < k->n_variants; v++) {
                spec.variant = v;
                for (int part = 0; part < 2; part++) {
                    int functional = part == 0;
                    if (!(s->o.suite & (functional ? GS_SWEEP_CHECK : GS_SWEEP_PERF))) continue;
                    const gs_shape *shapes = functional ? k->check_shapes : k->perf_shapes;
                    for (int si = 0; si < GS_SUITE_MAX_SHAPES && shapes[si].n; si++) {
                        spec.n_dims = shapes[si].n;
                        memcpy(spec.dims, shapes[si].d, sizeof spec.dims);
                        /* Every shape in the default dtype; the kernel's other dtypes on the
                         * first check shape only, which keeps the check suite small while
                         * still covering each dtype path (and "unsupported" where a generation
                         * lacks it). */
                        for (int t = 0; t < GS_DTYPE_COUNT; t++) {
                            if (!(k->dtypes & (1u << t))) continue;
                            if ((gs_dtype)t != dt0 && !(functional && si == 0)) continue;
                            spec.dtype = (gs_dtype)t;
                            if (gs_sweep_add(s, ci, &spec, functional) != 0) return -1;
                        }
                    }
                }
            }
        }
    qsort(s->jobs, s->n_jobs, sizeof *s->jobs, job_cmp);
    /* the same id from the check and the perf suite: keep the functional one */
    size_t w = 0;
    for (size_t i = 0; i < s->n_jobs; i++)
        if (!w || strcmp(s->jobs[w - 1].id, s->jobs[i].id) != 0) s->jobs[w++] = s->jobs[i];
    s->n_jobs = w;
    s->planned = w;
    if (s->o.shard_count > 1) {
        w = 0;
        for (size_t i = 0; i < s->n_jobs; i++)
            if ((int)(i % (size_t)s->o.shard_count) == s->o.shard_index - 1)
                s->jobs[w++] = s->jobs[i];
        s->n_jobs = w;
    }
    return 0;
}

/* ---- running ---- */

typedef struct slot {
    pid_t pid;
    size_t job;
    double start;
    int timed_out;
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

static pid_t launch(gs_sweep *s, size_t ji)
{
    const sweep_job *j = &s->jobs[ji];
    const gs_kernel_def *k = j->spec.kernel;
    char shape[256] = "", rec[4200], errf[4200], trace[4200], tl[64],
         params[GS_KERNEL_MAX_PARAMS][96];
    size_t w = 0;
    for (int i = 0; i < j->spec.n_dims && w < sizeof shape - 24; i++)
        w += (size_t)snprintf(shape + w, sizeof shape - w, "%s%" PRId64, i ? "x" : "",
                              j->spec.dims[i]);
    job_file(s, ji, "json", rec, sizeof rec);
    job_file(s, ji, "err", errf, sizeof errf);
    snprintf(tl, sizeof tl, "%g", s->o.timeout_s);
    const char *argv[MAX_ARGS];
    int a = 0;
    argv[a++] = s->exe;
    argv[a++] = "run";
    argv[a++] = "--config";
    argv[a++] = s->cfg_paths[j->cfg];
    argv[a++] = "--kernel";
    argv[a++] = k->name;
    argv[a++] = "--variant";
    argv[a++] = k->variants[j->spec.variant];
    argv[a++] = "--dtype";
    argv[a++] = gs_dtype_name(j->spec.dtype);
    argv[a++] = "--shape";
    argv[a++] = shape;
    for (int p = 0; p < k->n_params && a < MAX_ARGS - 24; p++) {
        if (!j->spec.params[p]) continue;
        snprintf(params[p], sizeof params[p], "%s=%" PRId64, k->param_names[p], j->spec.params[p]);
        argv[a++] = "--param";
        argv[a++] = params[p];
    }
    for (size_t i = 0; i < s->o.n_sets && a < MAX_ARGS - 14; i++) {
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
    gs_worker_offer_config(s->cfg_paths[j->cfg], s->o.sets, s->o.n_sets, s->cfgs[j->cfg]);
    fflush(stdout); /* a forked job must not inherit (and flush) the sweep's pending output */
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        /* Own process group: a timeout kills the job and anything it started; Ctrl-C on the
         * terminal reaches only the sweep, which decides. */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (s->o.mem_limit > 0) {
            struct rlimit rl;
            rl.rlim_cur = rl.rlim_max = (rlim_t)s->o.mem_limit;
            setrlimit(RLIMIT_AS, &rl);
        }
        int dn = open("/dev/null", O_RDWR);
        int ef = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
        }
        if (ef >= 0) dup2(ef, 2);
        gs_worker_start_job(s->exe, argv); /* fork server; exec as fallback */
        fprintf(stderr, "gensweep sweep: cannot run %s: %s\n", s->exe, strerror(errno));
        _exit(127);
    }
    if (pid > 0) setpgid(pid, pid); /* also here: no race with the child's own call */
    return pid;
}

/* Last lines of a job's stderr (at most TAIL_BYTES, starting at a line boundary). */
static char *read_tail(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return gs_strdup("");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > TAIL_BYTES ? size - TAIL_BYTES : 0;
    fseek(f, from, SEEK_SET);
    char *buf = gs_malloc(TAIL_BYTES + 1);
    size_t n = buf ? fread(buf, 1, TAIL_BYTES, f) : 0;
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

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGKILL:
        return "SIGKILL";
    case SIGTERM:
        return "SIGTERM";
    default:
        return "signal";
    }
}

/* Turn a finished job process into its record. */
static cJSON *collect(gs_sweep *s, size_t ji, int wstatus, int timed_out, double elapsed,
                      double *wall_s)
{
    const sweep_job *j = &s->jobs[ji];
    char rec[4200], errf[4200], reason[512];
    job_file(s, ji, "json", rec, sizeof rec);
    job_file(s, ji, "err", errf, sizeof errf);
    char *tail = read_tail(errf);
    cJSON *r = NULL;
    *wall_s = elapsed;
    if (timed_out) {
        snprintf(reason, sizeof reason, "no result after %g s: killed (--timeout)", s->o.timeout_s);
        r = parent_record(j, GS_JOB_TIMEOUT, reason, tail);
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        int oom = tail && (strstr(tail, "bad_alloc") || strstr(tail, "out of memory") ||
                           strstr(tail, "Cannot allocate"));
        char lim[96] = "";
        if (oom && s->o.mem_limit > 0)
            snprintf(lim, sizeof lim, " after running out of memory (limit %.0f MiB per job)",
                     s->o.mem_limit / (1024.0 * 1024.0));
        /* with ASAN_OPTIONS=abort_on_error=1 a sanitizer report ends in SIGABRT: name it */
        const char *san = tail ? strstr(tail, "ERROR: ") : NULL;
        if (san && strstr(san, "Sanitizer") && !lim[0])
            snprintf(lim, sizeof lim, " after a sanitizer report: %.*s",
                     (int)GS_MIN(strcspn(san, "\n"), (size_t)60), san);
        snprintf(reason, sizeof reason, "job process killed by signal %d (%s)%s", sig,
                 signal_name(sig), lim);
        r = parent_record(j, GS_JOB_CRASH, reason, tail);
    } else {
        gs_error err;
        gs_error_clear(&err);
        r = access(rec, R_OK) == 0 ? gs_json_read_file(rec, &err) : NULL;
        if (r && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "status"))) {
            cJSON_Delete(r);
            r = NULL;
        }
        if (r) {
            double w = gs_json_num(r, "wall_s");
            if (!isnan(w)) *wall_s = w;
            cJSON_DeleteItemFromObjectCaseSensitive(r, "wall_s");
            /* the record is the job's own word; add the stderr tail for failures */
            const char *stname = gs_json_str(r, "status");
            int failure = 1;
            for (int q = 0; q < GS_JOB_STATUS_COUNT; q++)
                if (!strcmp(stname, gs_job_status_name((gs_job_status)q)))
                    failure = gs_job_status_is_failure((gs_job_status)q);
            if (failure && tail)
                cJSON_ReplaceItemInObjectCaseSensitive(r, "stderr_tail", cJSON_CreateString(tail));
        } else {
            /* Under ASan/UBSan a crash is a sanitizer report and exit(1), not a signal: it is
             * still a crash, named by the report's ERROR line. */
            const char *san = tail ? strstr(tail, "ERROR: ") : NULL;
            if (san && (strstr(san, "Sanitizer") || strstr(san, "LeakSanitizer"))) {
                size_t len = strcspn(san, "\n");
                snprintf(reason, sizeof reason, "job process stopped by a sanitizer: %.*s",
                         (int)GS_MIN(len, (size_t)300), san);
                r = parent_record(j, GS_JOB_CRASH, reason, tail);
            } else {
                snprintf(reason, sizeof reason,
                         "job process exited with status %d without writing its record",
                         WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
                r = parent_record(j, GS_JOB_ERROR, reason, tail);
            }
        }
    }
    remove(rec);
    remove(errf);
    gs_free(tail);
    return r;
}

static void fmt_dur(double s, char *buf, size_t n)
{
    if (s < 0 || !isfinite(s))
        snprintf(buf, n, "?");
    else if (s < 60)
        snprintf(buf, n, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void progress(const gs_sweep *s, int tty, size_t done, size_t total, int failures, double t0,
                     const cJSON *rec, const char *id)
{
    if (s->o.quiet) return;
    double el = now_s() - t0;
    char e1[32], e2[32];
    fmt_dur(el, e1, sizeof e1);
    if (tty) {
        fmt_dur(done ? el / (double)done * (double)(total - done) : -1, e2, sizeof e2);
        printf("\r[%zu/%zu] %d failed, elapsed %s, ETA %s  %.60s\033[K", done, total, failures, e1,
               e2, id ? id : "");
        fflush(stdout);
        return;
    }
    if (!rec) return;
    double t = gs_json_num(rec, "time_ns");
    char tbuf[48] = "";
    if (!isnan(t)) snprintf(tbuf, sizeof tbuf, "%.3f us", t / 1e3);
    int width = total >= 1000 ? 4 : total >= 100 ? 3 : total >= 10 ? 2 : 1;
    printf("[%*zu/%zu] %-12s %s %s\n", width, done, total, gs_json_str(rec, "status"), id, tbuf);
    fflush(stdout);
}

static int record_failed(const cJSON *rec)
{
    const char *st = gs_json_str(rec, "status");
    for (int q = 0; q < GS_JOB_STATUS_COUNT; q++)
        if (!strcmp(st, gs_job_status_name((gs_job_status)q)))
            return gs_job_status_is_failure((gs_job_status)q);
    return 1;
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

/* Lock the output directory for the whole sweep (a POSIX record lock on DIR/.gensweep.lock:
 * released by the kernel however the sweep ends, kill -9 included). Returns the descriptor
 * to keep open, or -1 after printing why. */
static int lock_out_dir(const char *dir)
{
    gs_sb p;
    gs_sb_init(&p);
    gs_sb_printf(&p, "%s/.gensweep.lock", dir);
    int fd =
        gs_sb_ok(&p) ? open(gs_sb_cstr(&p), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666) : -1;
    if (fd < 0) {
        fprintf(stderr, "gensweep sweep: %s: cannot create the lock file: %s\n", gs_sb_cstr(&p),
                strerror(errno));
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
        if (e == EACCES || e == EAGAIN) {
            if (pid)
                fprintf(stderr,
                        "gensweep sweep: --out %s is in use by another sweep (pid %ld); wait "
                        "for it or choose another --out\n",
                        dir, pid);
            else
                fprintf(stderr,
                        "gensweep sweep: --out %s is in use by another sweep; wait for it or "
                        "choose another --out\n",
                        dir);
        } else {
            fprintf(stderr, "gensweep sweep: %s: cannot lock: %s\n", gs_sb_cstr(&p), strerror(e));
        }
        close(fd);
        gs_sb_free(&p);
        return -1;
    }
    gs_sb_free(&p);
    return fd;
}

cJSON *gs_sweep_execute(gs_sweep *s, int *interrupted)
{
    *interrupted = 0;
    gs_error err;
    gs_error_clear(&err);
    snprintf(s->tmp_dir, sizeof s->tmp_dir, "%s/.jobs-%ld", s->o.out_dir, (long)getpid());
    if (gs_mkdirs(s->tmp_dir, &err) != GS_OK ||
        (s->o.trace_dir && gs_mkdirs(s->o.trace_dir, &err) != GS_OK)) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "gensweep sweep: %s\n", buf);
        return NULL;
    }
    char started[32];
    utc_now(started, sizeof started);
    cJSON **recs = gs_calloc(s->n_jobs + 1, sizeof *recs);
    double *walls = gs_calloc(s->n_jobs + 1, sizeof *walls);
    slot *slots = gs_calloc((size_t)s->o.jobs, sizeof *slots);
    if (!recs || !walls || !slots) {
        gs_free(recs);
        gs_free(walls);
        gs_free(slots);
        return NULL;
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_requested = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int tty = isatty(STDOUT_FILENO);
    double t0 = now_s(), last_tick = 0;
    size_t next = 0, done = 0;
    int running = 0, failures = 0, stopping = 0;
    while (running > 0 || (next < s->n_jobs && !stopping)) {
        if (stop_requested && !stopping) {
            stopping = 1;
            for (int i = 0; i < s->o.jobs; i++)
                if (slots[i].pid > 0) kill(-slots[i].pid, SIGKILL);
        }
        while (!stopping && running < s->o.jobs && next < s->n_jobs) {
            int free_slot = -1;
            for (int i = 0; i < s->o.jobs && free_slot < 0; i++)
                if (slots[i].pid <= 0) free_slot = i;
            pid_t pid = launch(s, next);
            if (pid < 0) {
                char reason[160];
                snprintf(reason, sizeof reason, "cannot start the job process: %s",
                         strerror(errno));
                recs[next] = parent_record(&s->jobs[next], GS_JOB_ERROR, reason, "");
                failures++;
                done++;
                next++;
                continue;
            }
            slots[free_slot].pid = pid;
            slots[free_slot].job = next++;
            slots[free_slot].start = now_s();
            slots[free_slot].timed_out = 0;
            running++;
        }
        int wst;
        pid_t p = waitpid(-1, &wst, WNOHANG);
        if (p > 0) {
            for (int i = 0; i < s->o.jobs; i++) {
                if (slots[i].pid != p) continue;
                slots[i].pid = 0;
                running--;
                size_t ji = slots[i].job;
                if (stopping && !slots[i].timed_out) break; /* killed by us: no result */
                recs[ji] =
                    collect(s, ji, wst, slots[i].timed_out, now_s() - slots[i].start, &walls[ji]);
                done++;
                if (!recs[ji] || record_failed(recs[ji])) failures++;
                progress(s, tty, done, s->n_jobs, failures, t0, recs[ji], s->jobs[ji].id);
                if (s->o.quiet && recs[ji] && record_failed(recs[ji])) {
                    gs_sb why;
                    gs_sb_init(&why);
                    gs_sb_term(&why, gs_json_str(recs[ji], "reason"));
                    fprintf(stderr, "gensweep sweep: %s: %s %s\n", s->jobs[ji].id,
                            gs_json_str(recs[ji], "status"), gs_sb_cstr(&why));
                    gs_sb_free(&why);
                }
                break;
            }
            continue;
        }
        double t = now_s();
        for (int i = 0; i < s->o.jobs; i++)
            if (slots[i].pid > 0 && !slots[i].timed_out &&
                t - slots[i].start > s->o.timeout_s + 1.0) {
                slots[i].timed_out = 1;
                kill(-slots[i].pid, SIGKILL);
            }
        if (tty && !s->o.quiet && t - last_tick > 0.5) {
            last_tick = t;
            progress(s, tty, done, s->n_jobs, failures, t0, NULL, NULL);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (tty && !s->o.quiet) printf("\n");
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    *interrupted = stopping;
    /* leftovers of killed jobs */
    for (size_t i = 0; i < s->n_jobs; i++) {
        char f[4200];
        job_file(s, i, "json", f, sizeof f);
        remove(f);
        job_file(s, i, "err", f, sizeof f);
        remove(f);
    }
    remove_tree_files(s->tmp_dir);
    char finished[32];
    utc_now(finished, sizeof finished);

    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", GS_RESULTS_SCHEMA);
    cJSON_AddNumberToObject(doc, "schema_version", GS_RESULTS_SCHEMA_VERSION);
    cJSON *tool = cJSON_AddObjectToObject(doc, "tool");
    cJSON_AddStringToObject(tool, "version", gs_version());
    cJSON_AddStringToObject(tool, "commit", gs_commit());
    static const char *const suite_names[] = {"", "check", "perf", "all", "custom"};
    cJSON_AddStringToObject(
        doc, "suite", s->o.suite >= 1 && s->o.suite <= 4 ? suite_names[s->o.suite] : "custom");
    cJSON_AddBoolToObject(doc, "complete", !stopping && s->o.shard_count == 1);
    cJSON_AddBoolToObject(doc, "interrupted", stopping);
    cJSON *sh = cJSON_AddObjectToObject(doc, "shard");
    cJSON_AddNumberToObject(sh, "index", s->o.shard_index);
    cJSON_AddNumberToObject(sh, "count", s->o.shard_count);
    cJSON *ov = cJSON_AddArrayToObject(doc, "overrides");
    for (size_t i = 0; i < s->o.n_sets; i++)
        cJSON_AddItemToArray(ov, cJSON_CreateString(s->o.sets[i]));
    cJSON_AddNumberToObject(doc, "planned_jobs", (double)s->planned);
    cJSON *cfgs = cJSON_AddArrayToObject(doc, "configs");
    for (size_t i = 0; i < s->n_cfgs; i++) {
        gs_sb sb;
        gs_sb_init(&sb);
        gs_record_write_config(&sb, s->cfgs[i]);
        cJSON *c = gs_sb_ok(&sb) ? cJSON_Parse(gs_sb_cstr(&sb)) : NULL;
        gs_sb_free(&sb);
        if (c) cJSON_AddItemToArray(cfgs, c);
    }
    cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
    cJSON *wall = cJSON_AddObjectToObject(doc, "wall");
    cJSON_AddStringToObject(wall, "started", started);
    cJSON_AddStringToObject(wall, "finished", finished);
    cJSON_AddNumberToObject(wall, "total_s", now_s() - t0);
    cJSON *wj = cJSON_AddObjectToObject(wall, "jobs");
    for (size_t i = 0; i < s->n_jobs; i++) {
        if (!recs[i]) continue;
        cJSON_AddItemToArray(jobs, recs[i]);
        cJSON_AddNumberToObject(wj, s->jobs[i].id, walls[i]);
    }
    gs_free(recs);
    gs_free(walls);
    gs_free(slots);
    gs_results_sort_jobs(doc);
    return doc;
}

static void print_summary(const cJSON *doc, double total_s)
{
    int counts[GS_JOB_STATUS_COUNT] = {0};
    const cJSON *j;
    int n = 0;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        n++;
        for (int q = 0; q < GS_JOB_STATUS_COUNT; q++)
            if (!strcmp(gs_json_str(j, "status"), gs_job_status_name((gs_job_status)q)))
                counts[q]++;
    }
    printf("%d jobs in %.1f s:", n, total_s);
    for (int q = 0; q < GS_JOB_STATUS_COUNT; q++)
        if (counts[q]) printf(" %d %s", counts[q], gs_job_status_name((gs_job_status)q));
    printf("\n");
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        if (!record_failed(j)) continue;
        /* reasons carry kernel and stderr text: no control characters reach the terminal */
        gs_sb id, why;
        gs_sb_init(&id);
        gs_sb_init(&why);
        gs_sb_term(&id, gs_json_str(j, "id"));
        gs_sb_term(&why, gs_json_str(j, "reason"));
        printf("  %-9s %s: %s\n", gs_json_str(j, "status"), gs_sb_cstr(&id), gs_sb_cstr(&why));
        gs_sb_free(&id);
        gs_sb_free(&why);
    }
}

/* The calibration results for the report: a calibrate --json file as given, or a case file run
 * on the sweep's configs (and --set) with the results written to out_dir/calibration.json.
 * Problems are printed; the report then goes without the section. */
static gs_status sweep_calibration(const gs_sweep_opts *o, char *path, size_t size)
{
    const char *c = o->calibration;
    const size_t n = strlen(c);
    if (n > 5 && !strcmp(c + n - 5, ".json")) {
        snprintf(path, size, "%s", c);
        return GS_OK;
    }
    gs_sweep_opts co = *o;
    co.quiet = 1;
    co.no_report = 1;
    co.n_baselines = 0;
    co.shard_index = co.shard_count = 0;
    gs_diags d;
    gs_diags_init(&d);
    gs_calib *cal = gs_calib_load(c, &co, &d);
    if (!cal) {
        for (size_t i = 0; i < d.count; i++)
            fprintf(stderr, "gensweep sweep: --calibration: %s:%d:%d: %s\n", d.items[i].file,
                    d.items[i].line, d.items[i].column, d.items[i].message);
        gs_diags_free(&d);
        return GS_ERR_INVALID;
    }
    gs_diags_free(&d);
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_calib_run(cal, NULL, &err);
    gs_calib_free(cal);
    if (!doc) {
        fprintf(stderr, "gensweep sweep: --calibration: %s\n", err.message);
        return err.code;
    }
    snprintf(path, size, "%s/calibration.json", o->out_dir ? o->out_dir : GS_SWEEP_DEFAULT_OUT);
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    FILE *f = text ? fopen(path, "w") : NULL;
    int ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) ok = 0;
    cJSON_free(text);
    if (!ok) {
        fprintf(stderr, "gensweep sweep: --calibration: cannot write %s\n", path);
        return GS_ERR_IO;
    }
    return GS_OK;
}

int gs_sweep_main(const gs_sweep_opts *o)
{
    gs_sweep *s = gs_sweep_create(o);
    if (!s) return 2;
    if (gs_sweep_plan(s) != 0) {
        gs_sweep_free(s);
        return 2;
    }
    /* The output (and trace) directory must be usable, and ours alone, before any job runs:
     * a file given as --out or --trace-dir is one usage error, not a failure of every job. */
    {
        gs_error err;
        gs_error_clear(&err);
        if (gs_mkdirs(o->out_dir, &err) != GS_OK ||
            (o->trace_dir && gs_mkdirs(o->trace_dir, &err) != GS_OK)) {
            char buf[2048];
            gs_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "gensweep sweep: %s\n", buf);
            gs_sweep_free(s);
            return 2;
        }
    }
    int lock_fd = lock_out_dir(o->out_dir);
    if (lock_fd < 0) {
        gs_sweep_free(s);
        return 2;
    }
    /* load baselines before running so a bad path is a usage error, not a lost sweep */
    cJSON *base = NULL;
    for (size_t i = 0; i < o->n_baselines; i++) {
        gs_error err;
        gs_error_clear(&err);
        cJSON *b = gs_compare_load(o->baselines[i], &err);
        if (!b) {
            char buf[2048];
            gs_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "gensweep sweep: --baseline: %s\n", buf);
            cJSON_Delete(base);
            gs_sweep_free(s);
            close(lock_fd);
            return 2;
        }
        if (!base) {
            base = b;
        } else {
            cJSON *bj = cJSON_GetObjectItemCaseSensitive(b, "jobs");
            cJSON *aj = cJSON_GetObjectItemCaseSensitive(base, "jobs");
            while (bj->child)
                cJSON_AddItemToArray(aj, cJSON_DetachItemViaPointer(bj, bj->child));
            cJSON_Delete(b);
        }
    }
    if (!o->quiet)
        printf("sweep: %zu jobs (%zu configs, suite %s, shard %d/%d, -j %d) -> %s\n",
               gs_sweep_job_count(s), gs_sweep_config_count(s),
               o->suite == GS_SWEEP_PERF  ? "perf"
               : o->suite == GS_SWEEP_ALL ? "all"
                                          : "check",
               s->o.shard_index, s->o.shard_count, s->o.jobs, s->o.out_dir);
    int interrupted = 0;
    cJSON *doc = gs_sweep_execute(s, &interrupted);
    int rc = 0;
    if (!doc) {
        fprintf(stderr, "gensweep sweep: could not run the jobs\n");
        cJSON_Delete(base);
        gs_sweep_free(s);
        close(lock_fd);
        return 1;
    }
    gs_error err;
    gs_error_clear(&err);
    /* nothing is announced that was not written */
    int written = gs_results_write_dir(doc, s->o.out_dir, &err) == GS_OK;
    if (!written) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "gensweep sweep: %s\n", buf);
        rc = 1;
    }
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs")) if (record_failed(j)) rc =
        1;
    if (interrupted) {
        rc = 1;
        fprintf(stderr,
                "gensweep sweep: interrupted; results so far written (\"complete\": false)\n");
    }
    if (!o->quiet)
        print_summary(doc, gs_json_num(cJSON_GetObjectItemCaseSensitive(doc, "wall"), "total_s"));
    if (base) {
        gs_compare_summary sum;
        gs_compare_docs(base, doc, o->threshold, o->quiet ? NULL : stdout, &sum);
        if (sum.regressions) rc = 1;
        if (!o->quiet || sum.regressions)
            fprintf(o->quiet ? stderr : stdout,
                    "baseline: %d compared, %d regressions, %d improvements, %d new, %d missing\n",
                    sum.compared, sum.regressions, sum.improvements, sum.added, sum.missing);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", s->o.out_dir);
    if (!o->no_report && written) {
        char html[4096];
        snprintf(html, sizeof html, "%s/report.html", s->o.out_dir);
        gs_error_clear(&err);
        /* the report reads results files; reduced baseline files and directories are only
         * for the regression check above */
        const char *rb = NULL;
        if (o->n_baselines) {
            gs_error e2;
            gs_error_clear(&e2);
            cJSON *bd = gs_results_load(o->baselines[0], &e2);
            if (bd) rb = o->baselines[0];
            cJSON_Delete(bd);
        }
        /* the tuning files this sweep used, so the report shows the tuning gains */
        char tpaths[8][4096];
        const char *extra[8];
        gs_report_opts ro;
        memset(&ro, 0, sizeof ro);
        for (size_t ci = 0; ci < s->n_cfgs && ro.n_extra < 8; ci++)
            if (tuning_path(s, ci, tpaths[ro.n_extra], sizeof tpaths[0])) {
                extra[ro.n_extra] = tpaths[ro.n_extra];
                ro.n_extra++;
            }
        char cpath[4096];
        if (o->calibration && ro.n_extra < 8 && sweep_calibration(o, cpath, sizeof cpath) == GS_OK)
            extra[ro.n_extra++] = cpath;
        ro.extra_paths = extra;
        if (gs_report_write_opts(path, rb, html, &ro, &err) != GS_OK) {
            char buf[2048];
            gs_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "gensweep sweep: report: %s\n", buf);
            rc = 1;
        } else if (!o->quiet) {
            printf("report: %s\n", html);
        }
    }
    if (!o->quiet && written) printf("results: %s (+ results.csv, junit.xml)\n", path);
    cJSON_Delete(doc);
    cJSON_Delete(base);
    gs_sweep_free(s);
    close(lock_fd);
    return rc;
}
