/*
 * bench.c - the simulator's own speed and memory, measured (see bench.h).
 *
 * Every measurement that runs the SystemC model happens in a forked child (SystemC elaborates
 * once per process); the child sends its timings back through a pipe and the parent reads the
 * child's peak RSS from wait4(). The parent never touches SystemC, so each child starts from
 * the same small image. The sweep timings run `gensweep sweep --suite check` (the gensweep
 * binary) as a child process, polling its VmHWM for the sweep parent's own peak RSS; wait4()
 * gives the peak of the largest job it ran.
 *
 * Process runners of its own, not shared with the sweep's (sweep.c): run_child (fork, the job
 * in-process, result through a pipe), run_sweep (fork + exec of `gensweep sweep`) and
 * run_job_proc (one sweep job started as the sweep starts it, gs_worker_start_job, reaped with
 * wait4 for its rusage). run_job_proc is the one that duplicates the sweep's launch/collect of
 * a job; it is kept behind its one call so that it can become a call into the sweep's job
 * runner once that runner reports rusage.
 *
 * Measured, not asserted: targets are reported met or missed with the margin.
 */
#define _GNU_SOURCE /* wait4, mkdtemp, nftw */
#include <cblas.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli_util.h"
#include "datadir.h"
#include "gs/config.h"
#include "gs/model.h"
#include "gs/strbuf.h"
#include "job.h"
#include "results.h"
#include "sc_floor.h"
#include "worker.h"

/* ---- targets ---- */
#define TARGET_INSTR_PER_S 1e6         /* timing-only simulated instructions per second */
#define TARGET_SGEMM_RATIO 0.5         /* functional matmul / OpenBLAS sgemm throughput */
#define TARGET_SWEEP_J2_S 60.0         /* check-suite sweep over the generations at -j2 */
#define TARGET_SWEEP_SPEEDUP 1.7       /* -j1 time / -j2 time */
#define TARGET_TIMING_RSS_MB 200.0     /* timing-only job at the largest perf shape */
#define TARGET_TRACE_RSS_GROWTH_MB 8.0 /* trace RSS overhead may not grow with trace length */
#define SGEMM_REPS 3                   /* best of: favours OpenBLAS, so the ratio is conservative */
#define SWEEP_POLL_NS 10000000L        /* VmHWM polling period of the sweep parent */

/* ---- end-to-end targets: each a ratio to the old path measured in the same run, or a rate ---- */
#define TARGET_SWEEP_CPU_RATIO 0.5 /* check sweep CPU time, new path / old path, same job list */
#define TARGET_E2E_INSTR_PER_S 2e6 /* largest timing-only job, as a sweep job, fork to exit */
#define TARGET_FUNC_SPEEDUP 2.0    /* functional matmul 2048^3 job, old CPU time / new */
#define FLOOR_SWITCHES 2000000L    /* SystemC ping-pong length (quick: a tenth) */

/* What a child sends back. Fixed-size so one write()/read() carries it. */
typedef struct child_result {
    int ok;          /* 1 when the job ran to completion */
    char status[24]; /* job status name */
    char error[480]; /* first error, formatted */
    uint64_t instructions;
    double build_s;   /* kernel build (program + dependencies) */
    double sim_s;     /* gs_model_run's own wall clock (stats.wall_s) */
    double run_s;     /* gs_model_run call including elaboration */
    double run_cpu_s; /* its CPU time */
    double exec_s;    /* pure-C executor over the same program (functional children) */
    double exec_cpu_s;
    int exec_ok;
    double sgemm_s;     /* best cblas_sgemm on the same M, N, K */
    double sgemm_cpu_s; /* CPU time of that best run */
    double sim_ns;      /* simulated time */
    uint64_t trace_bytes;
    double floor_ns;     /* SystemC floor child: wall ns per timed switch */
    double floor_cpu_ns; /* and CPU ns per switch (elaboration included) */
} child_result;

typedef struct job_req {
    const char *config; /* path */
    const char *kernel;
    const char *variant; /* NULL: first */
    gs_dtype dtype;
    int n_dims;
    int64_t dims[GS_SUITE_MAX_DIMS];
    const char *param_name; /* one optional tunable */
    int64_t param_value;
    int functional;
    int with_exec_and_sgemm; /* functional matmul: also time the executor and sgemm */
    const char *trace;
    long floor_switches; /* > 0: measure the SystemC floor instead of a job */
} job_req;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of this process: next to wall time, because other work on a shared machine stretches
 * wall time but not the CPU time the simulator itself needs. */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void set_err(child_result *r, const gs_error *e)
{
    gs_error_format(e, r->error, sizeof r->error);
}

static void fill_random(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(seed >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
    }
}

/* Best time of SGEMM_REPS single-threaded cblas_sgemm C[M,N] = A[M,K] B[K,N] (and that run's
 * CPU time); <0 on OOM. */
static double time_sgemm(int64_t M, int64_t K, int64_t N, double *cpu)
{
    float *a = gs_malloc((size_t)(M * K) * sizeof *a), *b = gs_malloc((size_t)(K * N) * sizeof *b);
    float *c = gs_malloc((size_t)(M * N) * sizeof *c);
    double best = -1;
    if (a && b && c) {
        fill_random(a, (size_t)(M * K), 1);
        fill_random(b, (size_t)(K * N), 2);
        if (openblas_get_num_threads() != 1) openblas_set_num_threads(1); /* as the executor */
        for (int rep = 0; rep < SGEMM_REPS; rep++) {
            double t0 = now_s(), c0 = cpu_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a,
                        (int)K, b, (int)N, 0.0f, c, (int)N);
            double t = now_s() - t0;
            if (best < 0 || t < best) {
                best = t;
                *cpu = cpu_s() - c0;
            }
        }
    }
    gs_free(a);
    gs_free(b);
    gs_free(c);
    return best;
}

/* The child's work: build, (init memory,) run the model, check; optionally executor + sgemm. */
static void child_job(const job_req *q, child_result *r)
{
    if (q->floor_switches > 0) {
        double c0 = cpu_s();
        r->floor_ns = gs_sc_floor_ns_per_switch(q->floor_switches);
        r->floor_cpu_ns = (cpu_s() - c0) * 1e9 / (double)q->floor_switches;
        r->ok = r->floor_ns > 0;
        snprintf(r->status, sizeof r->status, "%s", r->ok ? "pass" : "error");
        return;
    }
    gs_error err;
    gs_error_clear(&err);
    gs_diags d;
    gs_diags_init(&d);
    gs_config *cfg = gs_config_load(q->config, &d);
    if (!cfg) {
        if (d.count) set_err(r, &d.items[0]);
        gs_diags_free(&d);
        snprintf(r->status, sizeof r->status, "error");
        return;
    }
    gs_diags_free(&d);
    gs_job_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.cfg = cfg;
    spec.seed = 1;
    spec.dtype = q->dtype;
    spec.kernel = gs_suite_find(q->kernel);
    gs_job *job = NULL;
    gs_status st = GS_OK;
    if (!spec.kernel) {
        snprintf(r->error, sizeof r->error, "unknown kernel '%s'", q->kernel);
        st = GS_ERR_USAGE;
        goto out;
    }
    if (q->variant) spec.variant = gs_suite_variant(spec.kernel, q->variant);
    if (spec.variant < 0) {
        snprintf(r->error, sizeof r->error, "kernel %s has no variant '%s'", q->kernel, q->variant);
        st = GS_ERR_USAGE;
        goto out;
    }
    spec.n_dims = q->n_dims;
    memcpy(spec.dims, q->dims, sizeof spec.dims);
    for (int i = 0; q->param_name && i < spec.kernel->n_params; i++)
        if (!strcmp(spec.kernel->param_names[i], q->param_name)) spec.params[i] = q->param_value;

    double t0 = now_s();
    st = gs_job_build(&spec, &job, &err);
    r->build_s = now_s() - t0;
    if (st == GS_OK && q->functional) st = gs_job_init_memory(job, &err);
    if (st == GS_OK) {
        gs_model *m = gs_model_create(cfg, &err);
        if (!m) {
            st = err.code != GS_OK ? err.code : GS_ERR_INTERNAL;
        } else {
            gs_run_opts ro = {q->functional, 0, 0, q->trace};
            gs_run_stats stats;
            t0 = now_s();
            double c0 = cpu_s();
            st = gs_model_run(m, gs_job_program(job), q->functional ? gs_job_memory(job) : NULL,
                              &ro, &stats, &err);
            r->run_s = now_s() - t0;
            r->run_cpu_s = cpu_s() - c0;
            r->sim_s = stats.wall_s;
            r->instructions = stats.instructions;
            r->sim_ns = stats.total_ns;
            gs_model_free(m);
        }
    }
    if (st == GS_OK && q->functional) {
        gs_job_check chk;
        st = gs_job_check_outputs(job, &chk, &err);
    }
    if (st == GS_OK && q->trace) {
        struct stat sb;
        if (stat(q->trace, &sb) == 0) r->trace_bytes = (uint64_t)sb.st_size;
    }
    if (st == GS_OK && q->with_exec_and_sgemm) {
        /* same program, fresh inputs, through the pure-C executor: the data path alone */
        gs_error e2;
        gs_error_clear(&e2);
        gs_status s2 = gs_job_init_memory(job, &e2);
        t0 = now_s();
        double c0 = cpu_s();
        if (s2 == GS_OK) s2 = gs_exec_program(gs_job_memory(job), gs_job_program(job), &e2);
        r->exec_s = now_s() - t0;
        r->exec_cpu_s = cpu_s() - c0;
        if (s2 == GS_OK) {
            gs_job_check chk;
            s2 = gs_job_check_outputs(job, &chk, &e2);
        }
        r->exec_ok = s2 == GS_OK;
        /* matmul dims are M x K x N */
        r->sgemm_s = time_sgemm(q->dims[0], q->dims[1], q->dims[2], &r->sgemm_cpu_s);
    }
out:
    if (st != GS_OK && !r->error[0]) set_err(r, &err);
    snprintf(r->status, sizeof r->status, "%s", gs_job_status_name(gs_job_status_from(st)));
    r->ok = st == GS_OK;
    gs_job_free(job);
    gs_config_free(cfg);
}

/* Fork, run the job in the child, collect its result and peak RSS (KiB). Returns 0, or -1 when
 * the child could not be started or died (r->error says why). */
static int run_child(const job_req *q, child_result *r, long *maxrss_kb)
{
    memset(r, 0, sizeof *r);
    *maxrss_kb = 0;
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(r->error, sizeof r->error, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(r->error, sizeof r->error, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        child_result cr;
        memset(&cr, 0, sizeof cr);
        child_job(q, &cr);
        const char *p = (const char *)&cr;
        size_t left = sizeof cr;
        while (left) {
            ssize_t w = write(fd[1], p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            p += w;
            left -= (size_t)w;
        }
        close(fd[1]);
        fflush(stdout);
        fflush(stderr);
        _exit(0); /* no SystemC teardown */
    }
    close(fd[1]);
    size_t got = 0;
    char *p = (char *)r;
    while (got < sizeof *r) {
        ssize_t n = read(fd[0], p + got, sizeof *r - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd[0]);
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &ws, 0, &ru) < 0 && errno == EINTR) {
    }
    *maxrss_kb = ru.ru_maxrss;
    if (got != sizeof *r || !WIFEXITED(ws)) {
        memset(r, 0, sizeof *r);
        snprintf(r->status, sizeof r->status, "crash");
        snprintf(r->error, sizeof r->error, "benchmark child died (%s %d)",
                 WIFSIGNALED(ws) ? "signal" : "exit status",
                 WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
        return -1;
    }
    return 0;
}

/* ---- the sweep as a child process ---- */

static long vm_hwm_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

typedef struct sweep_result {
    int ran;
    int exit_status;
    double wall_s;
    long parent_rss_kb; /* the sweep process itself (last VmHWM seen) */
    long max_rss_kb;    /* wait4: the largest of the sweep and every job it ran */
    double cpu_s;       /* wait4: user + system time of the sweep and every job it ran */
    char log[1100];
    char summary[160]; /* the sweep's "N jobs in T s: ..." line */
} sweep_result;

/* The old paths (exec'd jobs, scalar references, full-scan dependency tracking) for a child
 * process, or the current ones. */
static void select_paths(int old_path)
{
    if (old_path)
        setenv("GS_BASELINE_PATHS", "1", 1);
    else
        unsetenv("GS_BASELINE_PATHS");
}

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

static void run_sweep(const char *self, const gs_bench_gen *gens, size_t n_gens, int jobs,
                      const char *out_dir, int old_path, sweep_result *r)
{
    memset(r, 0, sizeof *r);
    /* exactly the generations measured (a configs directory may hold other files) */
    const char **argv = gs_calloc(n_gens + 10, sizeof *argv);
    if (!argv) {
        r->exit_status = -1;
        return;
    }
    char jarg[16], logpath[1100];
    snprintf(jarg, sizeof jarg, "-j%d", jobs);
    snprintf(logpath, sizeof logpath, "%s.log", out_dir);
    snprintf(r->log, sizeof r->log, "%s", logpath);
    fflush(stdout);
    fflush(stderr);
    const char *fixed[] = {self, "sweep", "--suite", "check", jarg, "--out", out_dir, "--configs"};
    int a = 0;
    for (size_t i = 0; i < GS_ARRAY_LEN(fixed); i++)
        argv[a++] = fixed[i];
    for (size_t g = 0; g < n_gens; g++)
        argv[a++] = gens[g].path;
    argv[a] = NULL;
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        gs_free(argv);
        r->exit_status = -1;
        return;
    }
    if (pid == 0) {
        int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        select_paths(old_path);
        gs_execv(self, argv);
        fprintf(stderr, "gensweep bench: cannot run %s: %s\n", self, strerror(errno));
        _exit(127);
    }
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        long hwm = vm_hwm_kb(pid);
        if (hwm > r->parent_rss_kb) r->parent_rss_kb = hwm;
        pid_t w = wait4(pid, &ws, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        struct timespec nap = {0, SWEEP_POLL_NS};
        nanosleep(&nap, NULL);
    }
    gs_free(argv);
    r->wall_s = now_s() - t0;
    r->ran = 1;
    r->exit_status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    r->max_rss_kb = ru.ru_maxrss;
    r->cpu_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    FILE *lf = fopen(logpath, "r");
    char line[512];
    while (lf && fgets(line, sizeof line, lf))
        if (strstr(line, " jobs in ")) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(r->summary, sizeof r->summary, "%.159s", line);
        }
    if (lf) fclose(lf);
}

/* ---- one job as the sweep runs it: a forked worker (new) or an exec'd process (old) ---- */

typedef struct proc_result {
    int ok;         /* exited 0 with a passing record */
    double wall_s;  /* fork to reap */
    double cpu_s;   /* user + system of the job process */
    long maxrss_kb; /* wait4 */
    double instructions;
    char status[24];
} proc_result;

/* argv: the `run` command line after the binary (NULL-terminated, at most 30 items); the record
 * goes to `rec`. */
static void run_job_proc(const char *self, const char *const *args, const char *rec, int old_path,
                         proc_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->status, sizeof r->status, "error");
    const char *argv[32];
    int a = 0;
    argv[a++] = self;
    for (int i = 0; args[i] && a < 28; i++)
        argv[a++] = args[i];
    argv[a++] = "--record";
    argv[a++] = rec;
    argv[a] = NULL;
    remove(rec);
    fflush(stdout);
    fflush(stderr);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) return;
    if (pid == 0) {
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
        }
        select_paths(old_path);
        gs_worker_start_job(self, argv); /* exec'd when old_path */
        _exit(127);
    }
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &ws, 0, &ru) < 0 && errno == EINTR) {
    }
    r->wall_s = now_s() - t0;
    r->cpu_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    r->maxrss_kb = ru.ru_maxrss;
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_json_read_file(rec, &err);
    if (doc) {
        snprintf(r->status, sizeof r->status, "%s", gs_json_str(doc, "status"));
        r->instructions = gs_json_num(doc, "instructions");
        cJSON_Delete(doc);
    }
    remove(rec);
    r->ok = WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && !strcmp(r->status, "pass");
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* ---- machine ---- */

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *c = strchr(line, ':');
        if (!c) continue;
        c++;
        while (*c == ' ' || *c == '\t')
            c++;
        snprintf(buf, n, "%s", c);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static long mem_total_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "MemTotal:", 9)) kb = strtol(line + 9, NULL, 10);
    fclose(f);
    return kb;
}

static void loadavg(double l[3])
{
    l[0] = l[1] = l[2] = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    if (fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3) l[0] = l[1] = l[2] = -1;
    fclose(f);
}

/* ---- the document (cJSON; written by the caller through gs_json_emit) ---- */

static void jnum(cJSON *o, const char *k, double v)
{
    cJSON_AddNumberToObject(o, k, v);
}
static void jstr(cJSON *o, const char *k, const char *v)
{
    cJSON_AddStringToObject(o, k, v);
}
static void jbool(cJSON *o, const char *k, int v)
{
    cJSON_AddBoolToObject(o, k, v);
}
/* A new object at the end of array a (NULL when out of memory: the j* calls then do nothing) */
static cJSON *jrow(cJSON *a)
{
    cJSON *o = cJSON_CreateObject();
    if (o && !cJSON_AddItemToArray(a, o)) {
        cJSON_Delete(o);
        o = NULL;
    }
    return o;
}
/* n numbers as an array member */
static void jnums(cJSON *o, const char *k, const double *v, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, k);
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
}

static void shape_str(const job_req *q, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < q->n_dims && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? "x" : "", q->dims[i]);
}

static double mb(long kb)
{
    return (double)kb / 1024.0;
}

/* ---- targets ---- */

typedef struct target {
    const char *name;
    const char *goal;
    double measured;
    const char *unit;
    int met; /* -1: not measured */
    char note[160];
} target;

static void add_target(target *t, int *n, const char *name, const char *goal, double measured,
                       const char *unit, int met, const char *note)
{
    t[*n].name = name;
    t[*n].goal = goal;
    t[*n].measured = measured;
    t[*n].unit = unit;
    t[*n].met = met;
    snprintf(t[*n].note, sizeof t[*n].note, "%s", note ? note : "");
    (*n)++;
}

/* ---- the generations ---- */

static int gen_cmp(const void *a, const void *b)
{
    return strcmp(((const gs_bench_gen *)a)->path, ((const gs_bench_gen *)b)->path);
}

void gs_bench_generations_free(gs_bench_gen *gens, size_t n)
{
    for (size_t i = 0; gens && i < n; i++) {
        gs_free(gens[i].path);
        gs_free(gens[i].stem);
        gs_free(gens[i].name);
    }
    gs_free(gens);
}

gs_status gs_bench_find_generations(const char *dir, gs_bench_gen **gens, size_t *n, gs_diags *d)
{
    *gens = NULL;
    *n = 0;
    DIR *dh = opendir(dir);
    if (!dh) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "cannot read %s: %s (use --configs DIR)", dir,
                     strerror(errno));
        return GS_ERR_USAGE;
    }
    gs_bench_gen *v = NULL;
    size_t cnt = 0, cap = 0;
    gs_status st = GS_OK;
    struct dirent *de;
    while (st == GS_OK && (de = readdir(dh)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") != 0 || de->d_name[0] == '.') continue;
        gs_sb p;
        gs_sb_init(&p);
        gs_sb_printf(&p, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (stat(gs_sb_cstr(&p), &sb) != 0 || !S_ISREG(sb.st_mode)) {
            gs_sb_free(&p);
            continue;
        }
        if (cnt == cap) {
            cap = cap ? 2 * cap : 8;
            gs_bench_gen *nv = gs_realloc(v, cap * sizeof *nv);
            if (!nv) {
                gs_sb_free(&p);
                st = GS_ERR_NOMEM;
                break;
            }
            v = nv;
        }
        memset(&v[cnt], 0, sizeof v[cnt]);
        v[cnt].path = gs_sb_take(&p);
        v[cnt].stem = gs_strdup(de->d_name);
        if (v[cnt].stem) v[cnt].stem[l - 5] = '\0';
        if (!v[cnt++].path || !v[cnt - 1].stem) st = GS_ERR_NOMEM;
        gs_sb_free(&p);
    }
    closedir(dh);
    if (st == GS_OK && cnt == 0) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "no *.yaml configs in %s (use --configs DIR)",
                     dir);
        st = GS_ERR_USAGE;
    }
    if (st == GS_OK) qsort(v, cnt, sizeof *v, gen_cmp);
    /* every config's problems, not just the first's */
    for (size_t i = 0; st != GS_ERR_NOMEM && i < cnt; i++) {
        gs_config *c = gs_cli_load_config(v[i].path, NULL, 0, NULL, d);
        if (!c) {
            st = GS_ERR_USAGE;
            continue;
        }
        v[i].name = gs_strdup(c->name);
        gs_config_free(c);
        if (!v[i].name) st = GS_ERR_NOMEM;
    }
    if (st == GS_ERR_NOMEM) gs_diags_add(d, st, NULL, 0, 0, "out of memory");
    if (st != GS_OK) {
        gs_bench_generations_free(v, cnt);
        return st;
    }
    *gens = v;
    *n = cnt;
    return GS_OK;
}

static void say(const gs_bench_opts *o, const char *fmt, ...) GS_PRINTF(2, 3);
static void say(const gs_bench_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, buf);
}

static void req_init(job_req *q, const char *config, const char *kernel, int n, int64_t d0,
                     int64_t d1, int64_t d2)
{
    memset(q, 0, sizeof *q);
    q->config = config;
    q->kernel = kernel;
    q->dtype = GS_BF16;
    q->n_dims = n;
    q->dims[0] = d0;
    q->dims[1] = d1;
    q->dims[2] = d2;
}

/* One run: the options, the generations, and the figures later sections and the targets use. */
typedef struct bench_run {
    gs_bench_opts o;
    const gs_bench_gen *gens;
    size_t n_gens;
    const gs_bench_gen *g_big, *g_fn; /* roles: see bench.h */
    char self[1024];                  /* the gensweep binary */
    char tmp[64];                     /* scratch directory, removed at the end */
    char gen_files[1024];             /* "gen1,gen2": the file stems, for the report */
    char gen_range[300];              /* "gen1-gen4" */
    cJSON *doc;                       /* the figures */
    int failures;                     /* measurements that could not be taken */
    int64_t mm;                       /* section 1's matmul M = K = N */
    double min_rate, min_cpu_rate, timing_rss_kb, largest_sim_rate, largest_cpu_rate;
    double ratio_model, cpu_ratio_model;
    sweep_result s1, s2, s_old;
    double sweep_cpu_new, sweep_cpu_old; /* best of two each, interleaved */
    double trace_growth_mb;
    double floor_cpu_ns, floor_pct, floor_pct_wall;
    char shape_big[64], shape_fn[64];
    proc_result big[2], fjob[2]; /* [0] current, [1] old */
    double e2e_rate, func_speedup, sweep_cpu_ratio, e2e_cpu_rate;
} bench_run;

/* The header: build, machine and load, and the document's first members. */
static void bench_header(bench_run *b)
{
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    double load0[3];
    loadavg(load0);
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    say(&b->o, "gensweep bench%s (%s build)\n", b->o.quick ? " --quick" : "",
#ifdef NDEBUG
        "optimised"
#else
        "UNOPTIMISED debug: figures are not representative"
#endif
    );
    say(&b->o, "machine     %ld CPUs, %s, %.1f GiB RAM; load average %.2f %.2f %.2f\n", nproc, cpu,
        (double)mem_total_kb() / 1048576.0, load0[0], load0[1], load0[2]);
    jstr(b->doc, "schema", "gensweep-bench/1");
    jbool(b->doc, "quick", b->o.quick);
#ifdef NDEBUG
    jbool(b->doc, "optimised_build", 1);
#else
    jbool(b->doc, "optimised_build", 0);
#endif
    cJSON *f = cJSON_AddObjectToObject(b->doc, "machine");
    jnum(f, "nproc", (double)nproc);
    jstr(f, "cpu", cpu);
    jnum(f, "mem_total_kb", (double)mem_total_kb());
    jnums(f, "loadavg_start", load0, 3);
}

/* 1. timing-only simulation speed */
static void bench_sim_speed(bench_run *b)
{
    b->mm = b->o.quick ? 2048 : 8192;            /* matmul M = K = N: the largest perf shape */
    const int64_t ew = b->o.quick ? 2048 : 8192; /* elementwise_add R = C */
    const int64_t ew_chunk = 64;                 /* small chunks: many short instructions */
    b->min_rate = b->min_cpu_rate = -1;
    say(&b->o,
        "\n1. timing-only simulation speed (instructions per wall second of gs_model_run)\n");
    say(&b->o, "   %-5s %-32s %8s %7s %7s %11s %11s %11s %7s\n", "gen", "workload", "instrs",
        "build s", "sim s", "instr/s", "per CPU s", "end-to-end", "RSS MB");
    cJSON *rows = cJSON_AddArrayToObject(b->doc, "sim_speed");
    for (size_t g = 0; g < b->n_gens; g++) {
        for (int w = 0; w < 2; w++) {
            job_req q;
            if (w == 0) {
                req_init(&q, b->gens[g].path, "matmul", 3, b->mm, b->mm, b->mm);
            } else {
                req_init(&q, b->gens[g].path, "elementwise_add", 2, ew, ew, 0);
                q.param_name = "chunk";
                q.param_value = ew_chunk;
            }
            child_result r;
            long rss = 0;
            if (run_child(&q, &r, &rss) != 0 || !r.ok) b->failures++;
            char shape[64], wl[96];
            shape_str(&q, shape, sizeof shape);
            snprintf(wl, sizeof wl, "%s %s%s", q.kernel, shape, w ? " chunk=64" : "");
            double rate = r.sim_s > 0 ? (double)r.instructions / r.sim_s : 0;
            double e2e =
                r.build_s + r.run_s > 0 ? (double)r.instructions / (r.build_s + r.run_s) : 0;
            double cpu_rate = r.run_cpu_s > 0 ? (double)r.instructions / r.run_cpu_s : 0;
            if (r.ok && (b->min_rate < 0 || rate < b->min_rate)) b->min_rate = rate;
            if (r.ok && (b->min_cpu_rate < 0 || cpu_rate < b->min_cpu_rate))
                b->min_cpu_rate = cpu_rate;
            if (w == 0 && rss > b->timing_rss_kb) b->timing_rss_kb = (double)rss;
            if (&b->gens[g] == b->g_big && w == 0 && r.ok) {
                b->largest_sim_rate = rate;
                b->largest_cpu_rate = cpu_rate;
            }
            say(&b->o, "   %-5s %-32s %8" PRIu64 " %7.3f %7.3f %11.0f %11.0f %11.0f %7.1f%s%s\n",
                b->gens[g].name, wl, r.instructions, r.build_s, r.sim_s, rate, cpu_rate, e2e,
                mb(rss), r.ok ? "" : "  ", r.ok ? "" : r.status);
            if (!r.ok && r.error[0]) say(&b->o, "         %s\n", r.error);
            cJSON *f = jrow(rows);
            jstr(f, "generation", b->gens[g].name);
            jstr(f, "kernel", q.kernel);
            jstr(f, "shape", shape);
            jnum(f, "chunk", w ? (double)ew_chunk : 0);
            jstr(f, "status", r.status);
            jnum(f, "instructions", (double)r.instructions);
            jnum(f, "build_s", r.build_s);
            jnum(f, "sim_s", r.sim_s);
            jnum(f, "instr_per_s", rate);
            jnum(f, "run_cpu_s", r.run_cpu_s);
            jnum(f, "instr_per_cpu_s", cpu_rate);
            jnum(f, "end_to_end_instr_per_s", e2e);
            jnum(f, "simulated_ns", r.sim_ns);
            jnum(f, "rss_kb", (double)rss);
        }
    }
}

/* 2. functional matmul data path vs OpenBLAS */
static void bench_functional_matmul(bench_run *b)
{
    const int64_t fm = b->o.quick ? 256 : 1024, fk = b->o.quick ? 256 : 1024,
                  fn = b->o.quick ? 512 : 1024;
    double ratio_exec = 0;
    {
        job_req q;
        req_init(&q, b->g_fn->path, "matmul", 3, fm, fk, fn);
        q.functional = 1;
        q.with_exec_and_sgemm = 1;
        child_result r;
        long rss = 0;
        if (run_child(&q, &r, &rss) != 0 || !r.ok || !r.exec_ok || !(r.sgemm_s > 0)) b->failures++;
        const double flop = 2.0 * (double)fm * (double)fk * (double)fn;
        double g_model = r.run_s > 0 ? flop / r.run_s / 1e9 : 0;
        double g_exec = r.exec_s > 0 ? flop / r.exec_s / 1e9 : 0;
        double g_blas = r.sgemm_s > 0 ? flop / r.sgemm_s / 1e9 : 0;
        b->ratio_model = g_blas > 0 ? g_model / g_blas : 0;
        ratio_exec = g_blas > 0 ? g_exec / g_blas : 0;
        say(&b->o,
            "\n2. functional matmul %" PRId64 "x%" PRId64 "x%" PRId64
            " (MxKxN, bf16 on %s) vs OpenBLAS sgemm (fp32, 1 thread), same process\n",
            fm, fk, fn, b->g_fn->name);
        double gc_model = r.run_cpu_s > 0 ? flop / r.run_cpu_s / 1e9 : 0;
        double gc_exec = r.exec_cpu_s > 0 ? flop / r.exec_cpu_s / 1e9 : 0;
        double gc_blas = r.sgemm_cpu_s > 0 ? flop / r.sgemm_cpu_s / 1e9 : 0;
        b->cpu_ratio_model = gc_blas > 0 ? gc_model / gc_blas : 0;
        say(&b->o, "   %-44s %8s %8s %6s %9s %6s\n", "path", "wall s", "GFLOP/s", "ratio",
            "GFLOP/cpu", "ratio");
        say(&b->o, "   %-44s %8.4f %8.2f %6.2f %9.2f %6.2f\n",
            "model, functional (SystemC + data, whole run)", r.run_s, g_model, b->ratio_model,
            gc_model, b->cpu_ratio_model);
        say(&b->o, "   %-44s %8.4f %8.2f %6.2f %9.2f %6.2f\n", "C executor alone (same program)",
            r.exec_s, g_exec, ratio_exec, gc_exec, gc_blas > 0 ? gc_exec / gc_blas : 0);
        say(&b->o, "   %-44s %8.4f %8.2f %6.2f %9.2f %6.2f\n", "cblas_sgemm (best of 3)", r.sgemm_s,
            g_blas, 1.0, gc_blas, 1.0);
        say(&b->o, "   check: model %s, executor %s; %" PRIu64 " instructions\n", r.status,
            r.exec_ok ? "pass" : "FAIL", r.instructions);
        if (!r.ok && r.error[0]) say(&b->o, "   %s\n", r.error);
        cJSON *f = cJSON_AddObjectToObject(b->doc, "functional_matmul");
        jstr(f, "generation", b->g_fn->name);
        jstr(f, "dtype", "bf16");
        const double mkn[3] = {(double)fm, (double)fk, (double)fn};
        jnums(f, "mkn", mkn, 3);
        jstr(f, "status", r.status);
        jbool(f, "exec_check_pass", r.exec_ok);
        jnum(f, "instructions", (double)r.instructions);
        jnum(f, "model_s", r.run_s);
        jnum(f, "model_gflops", g_model);
        jnum(f, "exec_s", r.exec_s);
        jnum(f, "exec_gflops", g_exec);
        jnum(f, "sgemm_s", r.sgemm_s);
        jnum(f, "sgemm_gflops", g_blas);
        jnum(f, "ratio_model", b->ratio_model);
        jnum(f, "ratio_exec", ratio_exec);
        jnum(f, "model_cpu_s", r.run_cpu_s);
        jnum(f, "exec_cpu_s", r.exec_cpu_s);
        jnum(f, "sgemm_cpu_s", r.sgemm_cpu_s);
        jnum(f, "ratio_model_cpu", b->cpu_ratio_model);
        jnum(f, "rss_kb", (double)rss);
    }
}

/* 3. check-suite sweep at -j1, -j2 and through the old paths */
static void bench_sweep(bench_run *b)
{
    sweep_result s2b, s_oldb;
    memset(&b->s1, 0, sizeof b->s1);
    memset(&b->s2, 0, sizeof b->s2);
    memset(&b->s_old, 0, sizeof b->s_old);
    memset(&s2b, 0, sizeof s2b);
    memset(&s_oldb, 0, sizeof s_oldb);
    say(&b->o, "\n3. check-suite sweep (gensweep sweep --suite check over %s/{%s}.yaml)\n",
        b->o.configs, b->gen_files);
    if (b->o.no_sweep) {
        say(&b->o, "   skipped (--no-sweep)\n");
    } else {
        char out1[1100], out2[1100], out3[1100], out4[1100], out5[1100];
        snprintf(out1, sizeof out1, "%s/sweep-j1", b->tmp);
        snprintf(out2, sizeof out2, "%s/sweep-j2", b->tmp);
        snprintf(out3, sizeof out3, "%s/sweep-old-j2", b->tmp);
        snprintf(out4, sizeof out4, "%s/sweep-old-j2-b", b->tmp);
        snprintf(out5, sizeof out5, "%s/sweep-j2-b", b->tmp);
        run_sweep(b->self, b->gens, b->n_gens, 1, out1, 0, &b->s1);
        run_sweep(b->self, b->gens, b->n_gens, 2, out2, 0, &b->s2);
        /* the same job list through the old paths (exec'd jobs, scalar references, full scans),
         * interleaved with the current one, best CPU time of two each: other work on a shared
         * machine inflates CPU time too (caches, memory bandwidth) */
        run_sweep(b->self, b->gens, b->n_gens, 2, out3, 1, &b->s_old);
        run_sweep(b->self, b->gens, b->n_gens, 2, out4, 1, &s_oldb);
        run_sweep(b->self, b->gens, b->n_gens, 2, out5, 0, &s2b);
        b->sweep_cpu_new = s2b.cpu_s > 0 && s2b.cpu_s < b->s2.cpu_s ? s2b.cpu_s : b->s2.cpu_s;
        b->sweep_cpu_old =
            s_oldb.cpu_s > 0 && s_oldb.cpu_s < b->s_old.cpu_s ? s_oldb.cpu_s : b->s_old.cpu_s;
        if (s_oldb.exit_status != 0) b->s_old.exit_status = s_oldb.exit_status;
        if (s2b.exit_status != 0 && b->s2.exit_status == 0) b->s2.exit_status = s2b.exit_status;
        for (int k = 0; k < 5; k++) {
            const sweep_result *s = k == 4   ? &s2b
                                    : k == 3 ? &s_oldb
                                    : k == 2 ? &b->s_old
                                    : k      ? &b->s2
                                             : &b->s1;
            say(&b->o,
                "   %-10s -j%d %8.2f s wall, %6.2f s CPU, exit status %d, sweep process peak "
                "RSS %.1f MB, largest job %.1f MB\n",
                k == 2 || k == 3 ? "old paths" : "current", k == 0 ? 1 : 2, s->wall_s, s->cpu_s,
                s->exit_status, mb(s->parent_rss_kb), mb(s->max_rss_kb));
            if (s->exit_status == 2 || s->exit_status >= 127) {
                b->failures++;
                say(&b->o, "        (the sweep did not run; see its output below)\n");
                FILE *lf = fopen(s->log, "r");
                char line[512];
                for (int n = 0; lf && n < 5 && fgets(line, sizeof line, lf); n++)
                    say(&b->o, "        %s", line);
                if (lf) fclose(lf);
            }
        }
        if (b->s2.wall_s > 0)
            say(&b->o, "   speedup -j2 over -j1: %.2fx\n", b->s1.wall_s / b->s2.wall_s);
        if (b->s2.summary[0]) say(&b->o, "   (-j2 sweep: %s)\n", b->s2.summary);
        if (b->sweep_cpu_old > 0)
            say(&b->o,
                "   CPU time at -j2, current / old paths (best of two each): %.2f s / %.2f s = "
                "%.2f\n",
                b->sweep_cpu_new, b->sweep_cpu_old, b->sweep_cpu_new / b->sweep_cpu_old);
    }
    {
        cJSON *f = cJSON_AddObjectToObject(b->doc, "sweep");
        jbool(f, "ran", !b->o.no_sweep);
        if (!b->o.no_sweep) {
            jnum(f, "j1_s", b->s1.wall_s);
            jnum(f, "j2_s", b->s2.wall_s);
            jnum(f, "speedup", b->s2.wall_s > 0 ? b->s1.wall_s / b->s2.wall_s : 0);
            jnum(f, "j1_exit", b->s1.exit_status);
            jnum(f, "j2_exit", b->s2.exit_status);
            jnum(f, "j1_cpu_s", b->s1.cpu_s);
            jnum(f, "j2_cpu_s", b->s2.cpu_s);
            jnum(f, "old_j2_s", b->s_old.wall_s);
            jnum(f, "old_j2_exit", b->s_old.exit_status);
            jnum(f, "best_j2_cpu_s", b->sweep_cpu_new);
            jnum(f, "best_old_j2_cpu_s", b->sweep_cpu_old);
            jnum(f, "cpu_ratio_new_old",
                 b->sweep_cpu_old > 0 ? b->sweep_cpu_new / b->sweep_cpu_old : 0);
            jstr(f, "j2_summary", b->s2.summary);
            jnum(f, "parent_rss_kb",
                 (double)(b->s1.parent_rss_kb > b->s2.parent_rss_kb ? b->s1.parent_rss_kb
                                                                    : b->s2.parent_rss_kb));
            jnum(f, "max_job_rss_kb",
                 (double)(b->s1.max_rss_kb > b->s2.max_rss_kb ? b->s1.max_rss_kb
                                                              : b->s2.max_rss_kb));
        }
    }
}

/* 4. memory: functional jobs at check shapes (timing-only largest shape: from section 1) */
static void bench_memory(bench_run *b)
{
    long func_rss = 0;
    say(&b->o, "\n4. peak RSS of one job (child process, wait4 ru_maxrss)\n");
    {
        cJSON *f = cJSON_AddObjectToObject(b->doc, "memory");
        job_req qs[2];
        req_init(&qs[0], b->g_fn->path, "matmul", 3, 200, 300, 700);
        req_init(&qs[1], b->g_fn->path, "elementwise_add", 2, 256, 1024, 0);
        for (int k = 0; k < 2; k++) {
            qs[k].functional = 1;
            child_result r;
            long rss = 0;
            if (run_child(&qs[k], &r, &rss) != 0 || !r.ok) b->failures++;
            char shape[64];
            shape_str(&qs[k], shape, sizeof shape);
            say(&b->o, "   functional  %s %-16s %-12s %8.1f MB  (%s)\n", b->g_fn->name,
                qs[k].kernel, shape, mb(rss), r.status);
            if (rss > func_rss) func_rss = rss;
        }
        say(&b->o, "   timing-only matmul %" PRId64 "^3 (largest of %s)  %8.1f MB\n", b->mm,
            b->gen_range, mb((long)b->timing_rss_kb));
        if (!b->o.no_sweep)
            say(&b->o, "   sweep parent process                 %8.1f MB\n",
                mb(b->s1.parent_rss_kb > b->s2.parent_rss_kb ? b->s1.parent_rss_kb
                                                             : b->s2.parent_rss_kb));
        jnum(f, "functional_check_rss_kb", (double)func_rss);
        jnum(f, "timing_largest_rss_kb", b->timing_rss_kb);
        char shape[96];
        snprintf(shape, sizeof shape, "matmul %" PRId64 "x%" PRId64 "x%" PRId64, b->mm, b->mm,
                 b->mm);
        jstr(f, "timing_largest_shape", shape);
    }
}

/* 5. trace cost, and whether trace memory grows with trace length */
static void bench_trace(bench_run *b)
{
    const int64_t tr_small = b->o.quick ? 1024 : 2048, tr_big = b->o.quick ? 2048 : 4096;
    double trace_slowdown = 0;
    say(&b->o, "\n5. trace writing cost (timing-only matmul on %s)\n", b->g_fn->name);
    say(&b->o, "   %-16s %-8s %9s %8s %8s %10s\n", "shape", "trace", "instrs", "sim s", "RSS MB",
        "trace MB");
    cJSON *rows = cJSON_AddArrayToObject(b->doc, "trace");
    {
        long rss_no[2] = {0, 0}, rss_tr[2] = {0, 0};
        double sim_no[2] = {0, 0}, sim_tr[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            int64_t n = k ? tr_big : tr_small;
            for (int t = 0; t < 2; t++) {
                job_req q;
                req_init(&q, b->g_fn->path, "matmul", 3, n, n, n);
                char tpath[1100];
                snprintf(tpath, sizeof tpath, "%s/trace-%" PRId64 ".json", b->tmp, n);
                q.trace = t ? tpath : NULL;
                child_result r;
                long rss = 0;
                if (run_child(&q, &r, &rss) != 0 || !r.ok) b->failures++;
                if (t) {
                    rss_tr[k] = rss;
                    sim_tr[k] = r.sim_s;
                    remove(tpath);
                } else {
                    rss_no[k] = rss;
                    sim_no[k] = r.sim_s;
                }
                char shape[64];
                shape_str(&q, shape, sizeof shape);
                say(&b->o, "   %-16s %-8s %9" PRIu64 " %8.3f %8.1f %10.1f\n", shape,
                    t ? "yes" : "no", r.instructions, r.sim_s, mb(rss),
                    (double)r.trace_bytes / 1048576.0);
                cJSON *f = jrow(rows);
                jstr(f, "shape", shape);
                jbool(f, "trace", t);
                jstr(f, "status", r.status);
                jnum(f, "instructions", (double)r.instructions);
                jnum(f, "sim_s", r.sim_s);
                jnum(f, "rss_kb", (double)rss);
                jnum(f, "trace_bytes", (double)r.trace_bytes);
            }
        }
        trace_slowdown = sim_no[1] > 0 ? sim_tr[1] / sim_no[1] : 0;
        double over_small = mb(rss_tr[0] - rss_no[0]), over_big = mb(rss_tr[1] - rss_no[1]);
        b->trace_growth_mb = over_big - over_small;
        say(&b->o,
            "   tracing slows the run %.2fx; RSS overhead of tracing %.1f MB (small) vs %.1f "
            "MB (big): growth %.1f MB\n",
            trace_slowdown, over_small, over_big, b->trace_growth_mb);
    }
}

/* 6. end to end against the old paths, and the SystemC floor */
static void bench_end_to_end(bench_run *b)
{
    say(&b->o, "\n6. end to end: jobs as the sweep starts them, current paths vs the old ones "
               "(exec'd job,\n   scalar reference, full-scan dependency tracking), same run\n");
    double floor_ns = 0;
    {
        job_req q;
        memset(&q, 0, sizeof q);
        q.floor_switches = b->o.quick ? FLOOR_SWITCHES / 10 : FLOOR_SWITCHES;
        child_result r;
        long rss = 0;
        if (run_child(&q, &r, &rss) != 0 || !r.ok) b->failures++;
        floor_ns = r.floor_ns;
        b->floor_cpu_ns = r.floor_cpu_ns;
        /* instructions per second against timed switches per second; the CPU-time figures
         * (whole gs_model_run call against the whole floor process) are the ones a shared
         * machine does not distort */
        b->floor_pct =
            b->floor_cpu_ns > 0 ? b->largest_cpu_rate * b->floor_cpu_ns * 1e-9 * 100.0 : 0;
        b->floor_pct_wall = floor_ns > 0 ? b->largest_sim_rate * floor_ns * 1e-9 * 100.0 : 0;
        say(&b->o,
            "   SystemC floor (two SC_THREADs, timed ping-pong, %ld switches): %.1f ns per "
            "switch wall, %.1f ns CPU (%.2f M switches per CPU s)\n",
            q.floor_switches, floor_ns, b->floor_cpu_ns,
            b->floor_cpu_ns > 0 ? 1e3 / b->floor_cpu_ns : 0);
        say(&b->o,
            "   %s matmul %" PRId64 "^3 (section 1): %.2f M instr per CPU s of gs_model_run = "
            "%.0f%% of the floor;\n   simulation-only wall rate %.2f M instr/s = %.0f%% of the "
            "wall floor (one switch per instruction)\n",
            b->g_big->name, b->mm, b->largest_cpu_rate / 1e6, b->floor_pct,
            b->largest_sim_rate / 1e6, b->floor_pct_wall);
    }
    char rec[1100];
    snprintf(rec, sizeof rec, "%s/job-record.json", b->tmp);
    snprintf(b->shape_big, sizeof b->shape_big, "%" PRId64 "x%" PRId64 "x%" PRId64, b->mm, b->mm,
             b->mm);
    const int64_t fsz = b->o.quick ? 512 : 2048;
    snprintf(b->shape_fn, sizeof b->shape_fn, "%" PRId64 "x%" PRId64 "x%" PRId64, fsz, fsz, fsz);
    {
        const char *a_big[] = {"run",     "--config",   b->g_big->path,  "--kernel", "matmul",
                               "--shape", b->shape_big, "--timing-only", NULL};
        const char *a_fn[] = {"run",    "--config", b->g_fn->path, "--kernel",
                              "matmul", "--shape",  b->shape_fn,   NULL};
        for (int k = 0; k < 2; k++) {
            run_job_proc(b->self, a_big, rec, k, &b->big[k]);
            if (!b->big[k].ok) b->failures++;
        }
        for (int k = 0; k < 2; k++) {
            run_job_proc(b->self, a_fn, rec, k, &b->fjob[k]);
            if (!b->fjob[k].ok) b->failures++;
        }
        say(&b->o, "   %-44s %-8s %8s %8s %10s %10s %8s %s\n", "job", "paths", "wall s", "CPU s",
            "instr/s", "per CPU s", "RSS MB", "status");
        for (int w = 0; w < 2; w++)
            for (int k = 0; k < 2; k++) {
                const proc_result *pr = w ? &b->fjob[k] : &b->big[k];
                char what[96];
                snprintf(what, sizeof what, "%s matmul %s %s", w ? b->g_fn->name : b->g_big->name,
                         w ? b->shape_fn : b->shape_big, w ? "functional" : "timing-only");
                say(&b->o, "   %-44s %-8s %8.3f %8.3f %10.0f %10.0f %8.1f %s\n", what,
                    k ? "old" : "current", pr->wall_s, pr->cpu_s,
                    pr->wall_s > 0 ? pr->instructions / pr->wall_s : 0,
                    pr->cpu_s > 0 ? pr->instructions / pr->cpu_s : 0, mb(pr->maxrss_kb),
                    pr->status);
            }
        say(&b->o,
            "   speed-up: timing-only %.2fx wall (%.2fx CPU), functional %.2fx wall (%.2fx "
            "CPU)\n",
            b->big[0].wall_s > 0 ? b->big[1].wall_s / b->big[0].wall_s : 0,
            b->big[0].cpu_s > 0 ? b->big[1].cpu_s / b->big[0].cpu_s : 0,
            b->fjob[0].wall_s > 0 ? b->fjob[1].wall_s / b->fjob[0].wall_s : 0,
            b->fjob[0].cpu_s > 0 ? b->fjob[1].cpu_s / b->fjob[0].cpu_s : 0);
    }
    b->e2e_rate = b->big[0].wall_s > 0 ? b->big[0].instructions / b->big[0].wall_s : 0;
    b->func_speedup = b->fjob[0].cpu_s > 0 ? b->fjob[1].cpu_s / b->fjob[0].cpu_s : 0;
    b->sweep_cpu_ratio = b->sweep_cpu_old > 0 ? b->sweep_cpu_new / b->sweep_cpu_old : 0;
    /* per CPU second: the job is single-threaded, so on an idle machine CPU time is its wall
     * time; on a shared one wall time also counts the other work */
    b->e2e_cpu_rate = b->big[0].cpu_s > 0 ? b->big[0].instructions / b->big[0].cpu_s : 0;
    {
        cJSON *f = cJSON_AddObjectToObject(b->doc, "end_to_end");
        jnum(f, "floor_ns_per_switch", floor_ns);
        jnum(f, "floor_cpu_ns_per_switch", b->floor_cpu_ns);
        jnum(f, "largest_sim_instr_per_s", b->largest_sim_rate);
        jnum(f, "largest_run_instr_per_cpu_s", b->largest_cpu_rate);
        jnum(f, "sim_pct_of_floor", b->floor_pct);
        jnum(f, "sim_pct_of_floor_wall", b->floor_pct_wall);
        for (int w = 0; w < 2; w++)
            for (int k = 0; k < 2; k++) {
                const proc_result *pr = w ? &b->fjob[k] : &b->big[k];
                char key[64];
                snprintf(key, sizeof key, "%s_%s", w ? "functional" : "timing_largest",
                         k ? "old" : "current");
                cJSON *g = cJSON_AddObjectToObject(f, key);
                jstr(g, "shape", w ? b->shape_fn : b->shape_big);
                jstr(g, "status", pr->status);
                jnum(g, "wall_s", pr->wall_s);
                jnum(g, "cpu_s", pr->cpu_s);
                jnum(g, "instructions", pr->instructions);
                jnum(g, "rss_kb", (double)pr->maxrss_kb);
            }
        jnum(f, "timing_largest_instr_per_s", b->e2e_rate);
        jnum(f, "timing_largest_instr_per_cpu_s", b->e2e_cpu_rate);
        jnum(f, "functional_cpu_speedup", b->func_speedup);
        jnum(f, "sweep_cpu_ratio", b->sweep_cpu_ratio);
    }
}

/* the targets, met or missed; returns how many were missed */
static int bench_targets(bench_run *b)
{
    target tg[16];
    int nt = 0;
    char note[160];
    snprintf(note, sizeof note, "per CPU second: %.0f", b->min_cpu_rate);
    add_target(tg, &nt, "timing-only instructions/s (slowest gen x workload)", ">= 1000000",
               b->min_rate, "instr/s", b->min_rate < 0 ? -1 : b->min_rate >= TARGET_INSTR_PER_S,
               note);
    snprintf(note, sizeof note, "CPU-time ratio: %.2f", b->cpu_ratio_model);
    add_target(tg, &nt, "functional matmul / OpenBLAS sgemm (model run)", ">= 0.5", b->ratio_model,
               "x", b->ratio_model >= TARGET_SGEMM_RATIO, note);
    if (b->o.no_sweep) {
        add_target(tg, &nt, "check sweep wall at -j2", "<= 60 s", 0, "s", -1, "not run");
        add_target(tg, &nt, "sweep speedup -j2 over -j1", ">= 1.7x", 0, "x", -1, "not run");
    } else {
        snprintf(note, sizeof note, "exit status %d", b->s2.exit_status);
        add_target(tg, &nt, "check sweep wall at -j2", "<= 60 s", b->s2.wall_s, "s",
                   b->s2.wall_s > 0 && b->s2.wall_s <= TARGET_SWEEP_J2_S, note);
        double sp = b->s2.wall_s > 0 ? b->s1.wall_s / b->s2.wall_s : 0;
        add_target(tg, &nt, "sweep speedup -j2 over -j1", ">= 1.7x", sp, "x",
                   sp >= TARGET_SWEEP_SPEEDUP, NULL);
    }
    snprintf(note, sizeof note, "matmul %" PRId64 "^3%s", b->mm,
             b->o.quick ? " (quick: not the largest perf shape)" : "");
    add_target(tg, &nt, "timing-only RSS at the largest perf shape", "<= 200 MB",
               mb((long)b->timing_rss_kb), "MB", mb((long)b->timing_rss_kb) <= TARGET_TIMING_RSS_MB,
               note);
    add_target(tg, &nt, "trace memory growth with trace length", "~0 MB (streamed)",
               b->trace_growth_mb, "MB", b->trace_growth_mb <= TARGET_TRACE_RSS_GROWTH_MB, NULL);

    if (b->o.no_sweep) {
        add_target(tg, &nt, "check sweep CPU time, current / old paths", "<= 0.5", 0, "x", -1,
                   "not run");
    } else {
        snprintf(note, sizeof note, "%.2f s vs %.2f s CPU at -j2 (best of 2), exit %d / %d",
                 b->sweep_cpu_new, b->sweep_cpu_old, b->s2.exit_status, b->s_old.exit_status);
        add_target(tg, &nt, "check sweep CPU time, current / old paths", "<= 0.5",
                   b->sweep_cpu_ratio, "x",
                   b->sweep_cpu_ratio > 0 && b->sweep_cpu_ratio <= TARGET_SWEEP_CPU_RATIO, note);
    }
    snprintf(note, sizeof note, "%s matmul %s fork to exit, per CPU s; wall: %.0f; old: %.0f",
             b->g_big->name, b->shape_big, b->e2e_rate,
             b->big[1].cpu_s > 0 ? b->big[1].instructions / b->big[1].cpu_s : 0);
    add_target(tg, &nt, "largest timing-only job end to end", ">= 2000000", b->e2e_cpu_rate,
               "instr/s", b->big[0].ok ? b->e2e_cpu_rate >= TARGET_E2E_INSTR_PER_S : 0, note);
    snprintf(note, sizeof note, "as a sweep job (forked worker)%s",
             b->o.quick ? "; quick: not the largest perf shape" : "");
    add_target(tg, &nt, "largest timing-only job RSS", "<= 200 MB", mb(b->big[0].maxrss_kb), "MB",
               b->big[0].ok ? mb(b->big[0].maxrss_kb) <= TARGET_TIMING_RSS_MB : 0, note);
    snprintf(note, sizeof note, "%s %s, CPU time old / current; wall %.2fx", b->g_fn->name,
             b->shape_fn, b->fjob[0].wall_s > 0 ? b->fjob[1].wall_s / b->fjob[0].wall_s : 0);
    add_target(tg, &nt, "functional matmul job speed-up", ">= 2x", b->func_speedup, "x",
               b->fjob[0].ok && b->fjob[1].ok ? b->func_speedup >= TARGET_FUNC_SPEEDUP : 0, note);
    snprintf(note, sizeof note, "CPU time; floor %.1f ns CPU per timed switch; wall: %.0f%%",
             b->floor_cpu_ns, b->floor_pct_wall);
    add_target(tg, &nt, "simulation-only rate, % of the SystemC floor", "reported", b->floor_pct,
               "%", -2, note);

    int missed = 0;
    say(&b->o, "\ntargets\n");
    cJSON *rows = cJSON_AddArrayToObject(b->doc, "targets");
    for (int i = 0; i < nt; i++) {
        const char *verdict = tg[i].met == -2 ? "reported"
                              : tg[i].met < 0 ? "not measured"
                              : tg[i].met     ? "met"
                                              : "MISSED";
        if (tg[i].met == 0) missed++;
        say(&b->o, "   %-52s %-18s %14.2f %-7s %s%s%s\n", tg[i].name, tg[i].goal, tg[i].measured,
            tg[i].unit, verdict, tg[i].note[0] ? "  " : "", tg[i].note);
        cJSON *f = jrow(rows);
        jstr(f, "name", tg[i].name);
        jstr(f, "goal", tg[i].goal);
        jnum(f, "measured", tg[i].measured);
        jstr(f, "unit", tg[i].unit);
        if (tg[i].met < 0)
            cJSON_AddNullToObject(f, "met");
        else
            jbool(f, "met", tg[i].met);
        jstr(f, "note", tg[i].note);
    }
    double load1[3];
    loadavg(load1);
    say(&b->o, "load average at the end %.2f %.2f %.2f%s\n", load1[0], load1[1], load1[2],
        b->failures ? "; some measurements FAILED (see above)" : "");
    jnums(b->doc, "loadavg_end", load1, 3);
    jnum(b->doc, "failed_measurements", b->failures);
    return missed;
}

/* The binary the sweeps and section 6's jobs run: o->exe, else this process's own. */
static gs_status find_self(const gs_bench_opts *o, char *self, size_t size, gs_diags *d)
{
    if (o->exe) {
        snprintf(self, size, "%s", o->exe);
        return GS_OK;
    }
    ssize_t sl = readlink("/proc/self/exe", self, size - 1);
    if (sl <= 0) {
        gs_diags_add(d, GS_ERR_IO, NULL, 0, 0, "cannot find its own executable: %s",
                     strerror(errno));
        return GS_ERR_IO;
    }
    self[sl] = '\0';
    return GS_OK;
}

gs_status gs_bench_run(const gs_bench_opts *opts, gs_bench_result *res, gs_diags *d)
{
    memset(res, 0, sizeof *res);
    bench_run *b = gs_calloc(1, sizeof *b);
    if (!b) return GS_ERR_NOMEM;
    b->o = *opts;
    if (!b->o.configs) b->o.configs = gs_default_configs_dir();
    gs_bench_gen *gens = NULL;
    size_t n_gens = 0;
    gs_status st = gs_bench_find_generations(b->o.configs, &gens, &n_gens, d);
    if (st == GS_OK) st = find_self(&b->o, b->self, sizeof b->self, d);
    snprintf(b->tmp, sizeof b->tmp, "/tmp/gensweep-bench-XXXXXX");
    if (st == GS_OK && !mkdtemp(b->tmp)) {
        gs_diags_add(d, GS_ERR_IO, NULL, 0, 0, "cannot create a temporary directory: %s",
                     strerror(errno));
        st = GS_ERR_IO;
    }
    if (st != GS_OK) {
        gs_bench_generations_free(gens, n_gens);
        gs_free(b);
        return st;
    }
    b->gens = gens;
    b->n_gens = n_gens;
    b->g_big = &gens[0];
    b->g_fn = &gens[n_gens > 1 ? 1 : 0];
    for (size_t g = 0; g < n_gens; g++) {
        size_t l = strlen(b->gen_files);
        snprintf(b->gen_files + l, sizeof b->gen_files - l, "%s%s", g ? "," : "", gens[g].stem);
    }
    if (n_gens > 1)
        snprintf(b->gen_range, sizeof b->gen_range, "%s-%s", gens[0].name, gens[n_gens - 1].name);
    else
        snprintf(b->gen_range, sizeof b->gen_range, "%s", gens[0].name);
    b->doc = cJSON_CreateObject();

    bench_header(b);
    bench_sim_speed(b);
    bench_functional_matmul(b);
    bench_sweep(b);
    bench_memory(b);
    bench_trace(b);
    bench_end_to_end(b);
    res->missed = bench_targets(b);
    res->failures = b->failures;
    res->doc = b->doc;
    nftw(b->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    gs_bench_generations_free(gens, n_gens);
    gs_free(b);
    if (!res->doc) {
        gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory building the JSON");
        return GS_ERR_NOMEM;
    }
    return GS_OK;
}

void gs_bench_result_free(gs_bench_result *r)
{
    if (!r) return;
    cJSON_Delete(r->doc);
    r->doc = NULL;
}
