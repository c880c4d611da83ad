/*
 * bench_child.c - every child process `gensweep bench` starts, each through the process runner
 * (proc.h): a measurement run in a fork (SystemC elaborates once per process; the child sends
 * its timings back through a pipe, the runner's rusage gives its peak RSS), `gensweep sweep`
 * (its own peak RSS polled from VmHWM, the largest of its jobs and their CPU time from the
 * rusage), and one job started as the sweep starts it (through the fork server, or exec'd for
 * the old paths).
 */
#define _GNU_SOURCE /* setenv in proc.h's children */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"
#include "gs/model.h"
#include "proc.h"
#include "results.h"
#include "sc_floor.h"

#define SGEMM_REPS 3            /* best of: favours OpenBLAS, so the ratio is conservative */
#define SWEEP_POLL_NS 10000000L /* VmHWM polling period of the sweep parent */

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

    double t0 = now_s(), build_c0 = cpu_s();
    st = gs_job_build(&spec, &job, &err);
    r->build_s = now_s() - t0;
    r->build_cpu_s = cpu_s() - build_c0;
    if (st == GS_OK && q->functional) st = gs_job_init_memory(job, &err);
    if (st == GS_OK) {
        gs_model *m = gs_model_create(cfg, &err);
        if (!m) {
            st = err.code != GS_OK ? err.code : GS_ERR_INTERNAL;
        } else {
            gs_run_opts ro = {q->functional, 0, 0, q->trace, NULL, NULL, NULL};
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

/* The child's side of gs_bench_child: the job, its result written to the pipe. */
typedef struct child_ctx {
    const job_req *q;
    int fd[2];
} child_ctx;

static int child_main(void *ctx)
{
    const child_ctx *c = ctx;
    close(c->fd[0]);
    if (c->q->cpu_limit_s > 0) { /* SIGXCPU at the soft limit, SIGKILL at the hard one */
        rlim_t soft = (rlim_t)ceil(c->q->cpu_limit_s);
        struct rlimit rl = {soft, soft + 5};
        setrlimit(RLIMIT_CPU, &rl);
    }
    child_result cr;
    memset(&cr, 0, sizeof cr);
    child_job(c->q, &cr);
    const char *p = (const char *)&cr;
    size_t left = sizeof cr;
    while (left) {
        ssize_t w = write(c->fd[1], p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        left -= (size_t)w;
    }
    close(c->fd[1]);
    return 0; /* the runner _exits: no SystemC teardown */
}

int gs_bench_child(const job_req *q, child_result *r, long *maxrss_kb)
{
    memset(r, 0, sizeof *r);
    *maxrss_kb = 0;
    child_ctx c = {q, {-1, -1}};
    if (pipe(c.fd) != 0) {
        snprintf(r->error, sizeof r->error, "pipe: %s", strerror(errno));
        return -1;
    }
    gs_proc_opts po;
    memset(&po, 0, sizeof po);
    po.kind = GS_PROC_FUNCTION;
    po.fn = child_main;
    po.fn_ctx = &c;
    po.out = po.err = GS_PROC_INHERIT;
    /* a backstop for a point that hangs without using CPU: far beyond its CPU limit */
    if (q->cpu_limit_s > 0) po.timeout_s = 10 * q->cpu_limit_s + 60;
    gs_proc *p = gs_proc_start(&po);
    if (!p) {
        snprintf(r->error, sizeof r->error, "fork: %s", strerror(errno));
        close(c.fd[0]);
        close(c.fd[1]);
        return -1;
    }
    close(c.fd[1]);
    size_t got = 0;
    char *buf = (char *)r;
    while (got < sizeof *r) {
        ssize_t n = read(c.fd[0], buf + got, sizeof *r - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(c.fd[0]);
    const gs_proc_result *res = gs_proc_wait(p);
    *maxrss_kb = res->maxrss_kb;
    int rc = 0;
    if (got != sizeof *r && gs_proc_stopped_at_cpu_limit(res, q->cpu_limit_s)) {
        memset(r, 0, sizeof *r);
        snprintf(r->status, sizeof r->status, "cpu-limit");
        snprintf(r->error, sizeof r->error, "stopped at its CPU limit of %.0f s",
                 ceil(q->cpu_limit_s));
        rc = -1;
    } else if (got != sizeof *r && res->timed_out) {
        memset(r, 0, sizeof *r);
        snprintf(r->status, sizeof r->status, "timeout");
        snprintf(r->error, sizeof r->error, "stopped after %.0f s of wall time", po.timeout_s);
        rc = -1;
    } else if (got != sizeof *r || !res->exited) {
        memset(r, 0, sizeof *r);
        snprintf(r->status, sizeof r->status, "crash");
        snprintf(r->error, sizeof r->error, "benchmark child died (%s %d)",
                 res->signal ? "signal" : "exit status",
                 res->signal ? res->signal : res->exit_code);
        rc = -1;
    }
    gs_proc_free(p);
    return rc;
}

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

void gs_bench_sweep_proc(const char *self, const gs_bench_gen *gens, size_t n_gens, int jobs,
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
    const char *fixed[] = {self, "sweep", "--suite", "check", jarg, "--out", out_dir, "--configs"};
    int a = 0;
    for (size_t i = 0; i < GS_ARRAY_LEN(fixed); i++)
        argv[a++] = fixed[i];
    for (size_t g = 0; g < n_gens; g++)
        argv[a++] = gens[g].path;
    argv[a] = NULL;
    gs_proc_opts po;
    memset(&po, 0, sizeof po);
    po.kind = GS_PROC_EXEC;
    po.exe = self;
    po.argv = argv;
    po.out = po.err = GS_PROC_FILE;
    po.out_path = po.err_path = logpath;
    po.env_name = "GS_BASELINE_PATHS"; /* the old paths, or the current ones */
    po.env_value = old_path ? "1" : NULL;
    po.exec_fail_who = "gensweep bench";
    gs_proc *p = gs_proc_start(&po);
    gs_free(argv);
    if (!p) {
        r->exit_status = -1;
        return;
    }
    const gs_proc_result *res;
    for (;;) {
        long hwm = vm_hwm_kb(gs_proc_pid(p));
        if (hwm > r->parent_rss_kb) r->parent_rss_kb = hwm;
        if ((res = gs_proc_poll(p)) != NULL) break;
        struct timespec nap = {0, SWEEP_POLL_NS};
        nanosleep(&nap, NULL);
    }
    r->wall_s = res->wall_s;
    r->ran = 1;
    r->exit_status = res->exited ? res->exit_code : 128 + res->signal;
    r->max_rss_kb = res->maxrss_kb;
    r->cpu_s = res->cpu_s;
    gs_proc_free(p);
    FILE *lf = fopen(logpath, "r");
    char line[512];
    while (lf && fgets(line, sizeof line, lf))
        if (strstr(line, " jobs in ")) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(r->summary, sizeof r->summary, "%.159s", line);
        }
    if (lf) fclose(lf);
}

void gs_bench_job_proc(const char *self, const char *const *args, const gs_job_request *rq,
                       int old_path, proc_result *r)
{
    const char *rec = rq->record;
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
    gs_proc_opts po;
    memset(&po, 0, sizeof po);
    po.kind = GS_PROC_WORKER; /* exec'd when old_path */
    po.exe = self;
    po.argv = argv;
    po.request = rq;
    po.env_name = "GS_BASELINE_PATHS";
    po.env_value = old_path ? "1" : NULL;
    gs_proc *p = gs_proc_start(&po);
    if (!p) return;
    const gs_proc_result *res = gs_proc_wait(p);
    r->wall_s = res->wall_s;
    r->cpu_s = res->cpu_s;
    r->maxrss_kb = res->maxrss_kb;
    int exited_ok = res->exited && res->exit_code == 0;
    gs_proc_free(p);
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_json_read_file(rec, &err);
    if (doc) {
        snprintf(r->status, sizeof r->status, "%s", gs_json_str(doc, "status"));
        r->instructions = gs_json_num(doc, "instructions");
        cJSON_Delete(doc);
    }
    remove(rec);
    r->ok = exited_ok && !strcmp(r->status, "pass");
}
