/*
 * bench_scaling.c - section 8 of `gensweep bench` (its own run: `bench --scaling`): whether the
 * simulator's cost stays linear in the work. Every suite kernel (its first variant, bf16 when it
 * takes it) runs timing-only on the newest generation (the last config: the largest HBM) at
 * three sizes about an order of magnitude apart (SCALE_TARGETS instructions), and the section
 * prints CPU time (kernel build + model run) and peak RSS per simulated instruction at each, and
 * the spread of the CPU figure over the three (target: within SCALE_FLAT).
 *
 * A size is reached by scaling one dimension of the kernel's first perf shape (or first check
 * shape when that does not run; the first dimension, the last when scaling the first fails): the
 * instruction count is measured, a power law fitted to the last two measurements (linear until
 * there are two), and the dimension scaled again, up to SCALE_TRIES runs per size. Kernels with a
 * "chunk" parameter run with SCALE_CHUNK-element chunks so that a million instructions fit in HBM.
 * Separate from bench.c because it is its own run with its own target, and the shape search is
 * nothing the other sections need.
 */
#include <math.h>
#include <stdlib.h>

#include "bench_internal.h"
#include "suite.h"

#define SCALE_N 3
static const double SCALE_TARGETS[SCALE_N] = {1e4, 1e5, 1e6};
#define SCALE_QUICK_DIV 100 /* --quick: targets / 100 */
#define SCALE_FLAT 1.5      /* max / min CPU per instruction over the three sizes */
#define SCALE_TRIES 5       /* runs to reach a size (within SCALE_TOL of the target) */
#define SCALE_TOL 1.6
#define SCALE_REPS 3 /* runs of a size below SCALE_REPS_BELOW instructions, least CPU kept */
#define SCALE_REPS_BELOW 200000.0
#define SCALE_CHUNK 256

static gs_dtype pick_dtype(const gs_kernel_def *k)
{
    if (k->dtypes & (1u << GS_BF16)) return GS_BF16;
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (k->dtypes & (1u << t)) return (gs_dtype)t;
    return GS_BF16;
}

typedef struct scale_point {
    int ok;
    int64_t dims[GS_SUITE_MAX_DIMS];
    double instructions, cpu_s, rss_kb;
    char status[24];
} scale_point;

static void run_point(const char *config, const gs_kernel_def *k, const int64_t *dims, int reps,
                      double cpu_limit, scale_point *p)
{
    job_req q;
    memset(&q, 0, sizeof q);
    q.cpu_limit_s = cpu_limit;
    q.config = config;
    q.kernel = k->name;
    q.dtype = pick_dtype(k);
    q.n_dims = k->n_dims;
    memcpy(q.dims, dims, sizeof q.dims);
    for (int i = 0; i < k->n_params; i++)
        if (!strcmp(k->param_names[i], "chunk")) {
            q.param_name = "chunk";
            q.param_value = SCALE_CHUNK;
        }
    memset(p, 0, sizeof *p);
    memcpy(p->dims, dims, sizeof p->dims);
    for (int r = 0; r < reps; r++) {
        child_result cr;
        long rss = 0;
        if (gs_bench_child(&q, &cr, &rss) != 0 || !cr.ok) {
            snprintf(p->status, sizeof p->status, "%s", cr.status[0] ? cr.status : "error");
            p->ok = 0;
            return;
        }
        double cpu = cr.build_cpu_s + cr.run_cpu_s;
        if (!p->ok || cpu < p->cpu_s) p->cpu_s = cpu;
        if (!p->ok || (double)rss < p->rss_kb) p->rss_kb = (double)rss;
        p->instructions = (double)cr.instructions;
        p->ok = 1;
        snprintf(p->status, sizeof p->status, "%s", cr.status);
    }
}

static int over_cpu_limit(const scale_point *p)
{
    return !strcmp(p->status, "cpu-limit");
}

/* Reach about `target` instructions by scaling dims[d] from the measured point `from`. A size
 * stopped at the CPU limit ends the search: the target is out of reach within the limit. */
static void reach(const char *config, const gs_kernel_def *k, int d, const scale_point *from,
                  double target, double cpu_limit, scale_point *out)
{
    scale_point a = *from, b;
    int have_b = 0;
    int64_t fail = 0; /* the smallest size of dims[d] that did not run */
    memset(out, 0, sizeof *out);
    snprintf(out->status, sizeof out->status, "shape search");
    for (int t = 0; t < SCALE_TRIES; t++) {
        double e = 1; /* instructions ~ dim^e, from the last two points */
        if (have_b && a.dims[d] != b.dims[d] && a.instructions > 0 && b.instructions > 0 &&
            a.instructions != b.instructions)
            e = log(a.instructions / b.instructions) / log((double)a.dims[d] / (double)b.dims[d]);
        if (!(e > 0.2) || !(e < 4)) e = 1;
        int64_t dims[GS_SUITE_MAX_DIMS];
        memcpy(dims, a.dims, sizeof dims);
        double f = pow(target / a.instructions, 1 / e);
        int64_t v = (int64_t)llround((double)a.dims[d] * f);
        if (fail && v >= fail) /* below what did not fit: half way there, geometrically */
            v = (int64_t)llround(sqrt((double)a.dims[d] * (double)fail));
        dims[d] = GS_MAX(v, (int64_t)1);
        if (dims[d] == a.dims[d] && t > 0) break;
        scale_point p;
        run_point(config, k, dims, 1, cpu_limit, &p);
        if (!p.ok) { /* e.g. does-not-fit: try a smaller size, else the target is out of reach */
            memcpy(out->dims, dims, sizeof out->dims);
            snprintf(out->status, sizeof out->status, "%s", p.status);
            if (over_cpu_limit(&p)) return;
            fail = dims[d];
            continue;
        }
        b = a;
        have_b = 1;
        a = p;
        if (p.instructions >= target / SCALE_TOL && p.instructions <= target * SCALE_TOL) break;
    }
    if (a.instructions < target / SCALE_TOL / SCALE_TOL ||
        a.instructions > target * SCALE_TOL * 2) {
        if (!fail) memcpy(out->dims, a.dims, sizeof out->dims);
        return; /* not reached: out->ok = 0 */
    }
    /* the figure: best of SCALE_REPS for the small sizes (their CPU time is a few ms) */
    run_point(config, k, a.dims, a.instructions < SCALE_REPS_BELOW ? SCALE_REPS : 1, cpu_limit,
              out);
}

/* Whether `name` is an item of the comma-separated `list` (NULL: every name is). */
static int listed(const char *list, const char *name)
{
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncmp(p, name, n)) return 1;
        p += l + (e ? 1 : 0);
    }
    return 0;
}

static void dims_str(const int64_t *dims, int n, char *buf, size_t size)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && l < size; i++)
        l += (size_t)snprintf(buf + l, size - l, "%s%" PRId64, i ? "x" : "", dims[i]);
}

void gs_bench_scaling(bench_run *b)
{
    const gs_bench_gen *g = &b->gens[b->n_gens - 1];
    const double div = b->o.quick ? SCALE_QUICK_DIV : 1;
    const double cpu_limit =
        b->o.point_cpu_limit > 0 ? b->o.point_cpu_limit : GS_BENCH_POINT_CPU_LIMIT;
    say(&b->o,
        "\n8. cost per simulated instruction at three sizes (%s, timing-only; CPU of build + "
        "gs_model_run; target: max/min CPU per instruction <= %.1f; at most %.0f CPU s a "
        "point)\n",
        g->name, SCALE_FLAT, ceil(cpu_limit));
    say(&b->o, "   %-18s %-22s %9s %9s %8s %8s  %s\n", "kernel", "shape", "instrs", "CPU s",
        "ns/instr", "B/instr", "spread");
    cJSON *rows = cJSON_AddArrayToObject(b->doc, "scaling");
    b->scale_worst = 0;
    int incomplete = 0; /* kernels not measured at every size */
    for (size_t i = 0; i < gs_suite_count(); i++) {
        const gs_kernel_def *k = gs_suite_kernel(i);
        if (!listed(b->o.scaling_kernels, k->name)) continue;
        /* the first perf shape, else (none, or it does not run here) the first check shape */
        scale_point start, pts[SCALE_N];
        memset(pts, 0, sizeof pts);
        memset(&start, 0, sizeof start);
        for (int w = 0; w < 2 && !start.ok; w++) {
            const gs_shape *s0 = w == 0 ? &k->perf_shapes[0] : &k->check_shapes[0];
            if (!s0->n) continue;
            int64_t dims[GS_SUITE_MAX_DIMS] = {0};
            for (int d = 0; d < s0->n && d < GS_SUITE_MAX_DIMS; d++)
                dims[d] = s0->d[d];
            run_point(g->path, k, dims, 1, cpu_limit, &start);
        }
        int d = 0;
        for (int t = 0; start.ok && t < SCALE_N; t++) {
            if (t > 0 && over_cpu_limit(&pts[t - 1])) { /* a larger size would be over it too */
                pts[t] = pts[t - 1];
                continue;
            }
            reach(g->path, k, d, &start, SCALE_TARGETS[t] / div, cpu_limit, &pts[t]);
            if (!pts[t].ok && !over_cpu_limit(&pts[t]) && t == 0 && d == 0 &&
                k->n_dims > 1) { /* try the last dim */
                d = k->n_dims - 1;
                reach(g->path, k, d, &start, SCALE_TARGETS[t] / div, cpu_limit, &pts[t]);
            }
        }
        double lo = INFINITY, hi = 0;
        int n_ok = 0;
        for (int t = 0; start.ok && t < SCALE_N; t++) {
            if (!pts[t].ok) continue;
            double per = pts[t].cpu_s / pts[t].instructions;
            lo = GS_MIN(lo, per);
            hi = GS_MAX(hi, per);
            n_ok++;
        }
        double spread = n_ok > 1 ? hi / lo : (double)NAN;
        if (n_ok < SCALE_N) {
            b->failures++;
            incomplete++;
        }
        if (n_ok > 1 && spread > b->scale_worst) b->scale_worst = spread;
        if (n_ok > 1 && spread > SCALE_FLAT) b->scale_missed++;
        cJSON *f = jrow(rows);
        jstr(f, "kernel", k->name);
        jstr(f, "variant", k->variants[0]);
        jstr(f, "dtype", gs_dtype_name(pick_dtype(k)));
        jnum(f, "spread", n_ok > 1 ? spread : -1);
        cJSON *sizes = f ? cJSON_AddArrayToObject(f, "sizes") : NULL;
        for (int t = 0; t < SCALE_N; t++) {
            char shape[96];
            const scale_point *p = start.ok ? &pts[t] : &start;
            dims_str(p->dims, k->n_dims, shape, sizeof shape);
            if (!p->ok) {
                const char *why = p->status[0] ? p->status : "shape search";
                say(&b->o, "   %-18s %-22s not reached (%s)\n", t ? "" : k->name, shape, why);
                cJSON *z = jrow(sizes);
                jstr(z, "shape", shape);
                jstr(z, "status", why);
                continue;
            }
            double ns = 1e9 * p->cpu_s / p->instructions;
            double bpi = 1024.0 * p->rss_kb / p->instructions;
            char sp[32] = "";
            if (t == SCALE_N - 1 && n_ok > 1)
                snprintf(sp, sizeof sp, "%.2fx%s", spread, spread > SCALE_FLAT ? "  MISSED" : "");
            say(&b->o, "   %-18s %-22s %9.0f %9.3f %8.0f %8.0f  %s\n", t ? "" : k->name, shape,
                p->instructions, p->cpu_s, ns, bpi, sp);
            cJSON *z = jrow(sizes);
            jstr(z, "shape", shape);
            jstr(z, "status", "measured");
            jnum(z, "instructions", p->instructions);
            jnum(z, "cpu_s", p->cpu_s);
            jnum(z, "ns_per_instr", ns);
            jnum(z, "rss_kb", p->rss_kb);
            jnum(z, "bytes_per_instr", bpi);
        }
    }
    if (incomplete)
        say(&b->o,
            "   worst spread %.2fx over the kernels measured at two sizes or more: %s; %d "
            "kernel%s not measured at every size (above)\n",
            b->scale_worst, b->scale_missed ? "target missed" : "target not missed", incomplete,
            incomplete == 1 ? "" : "s");
    else
        say(&b->o, "   worst spread %.2fx: %s\n", b->scale_worst,
            b->scale_missed ? "target missed" : "target met");
}
