/*
 * bench.c - the simulator's own speed and memory, measured (see bench.h): the sections, each
 * measuring in child processes (bench_child.c) and reporting as it goes, and the run that holds
 * them together. The header and the targets are bench_report.c's.
 *
 * Every measurement that runs the SystemC model happens in a forked child (SystemC elaborates
 * once per process); the parent never touches SystemC, so each child starts from the same small
 * image. The sweep timings run `gensweep sweep --suite check` (the gensweep binary) as a child
 * process; section 6 runs single jobs as the sweep starts them.
 *
 * Measured, not asserted: targets are reported met or missed with the margin.
 */
#define _GNU_SOURCE /* mkdtemp, nftw */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_internal.h"
#include "parse.h"
#include "datadir.h"
#include "gs/strbuf.h"

#define FLOOR_SWITCHES 2000000L /* SystemC ping-pong length (quick: a tenth) */
#define FN_RUNS 3               /* functional matmul children (section 2), best kept (quick: one) */
#define BIG_RUNS 3              /* runs of the largest job per path, best kept (quick: one) */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
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
        gs_config *c = gs_config_load_with(v[i].path, NULL, 0, d);
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
            if (gs_bench_child(&q, &r, &rss) != 0 || !r.ok) b->failures++;
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
        /* the model runs once per process (SystemC elaborates once): FN_RUNS processes, the
         * least time of each path kept, as sgemm keeps its best of three in each (a single
         * ~40 ms run moved by 20% on this shared machine) */
        child_result r;
        long rss = 0;
        const int runs = b->o.quick ? 1 : FN_RUNS;
        for (int k = 0; k < runs; k++) {
            child_result x;
            long xrss = 0;
            const int bad =
                gs_bench_child(&q, &x, &xrss) != 0 || !x.ok || !x.exec_ok || !(x.sgemm_s > 0);
            rss = GS_MAX(rss, xrss);
            if (k == 0 || bad) r = x; /* a failed run's record is the one reported */
            if (bad) {
                b->failures++;
                break;
            }
            if (k == 0) continue;
            if (x.run_s < r.run_s) {
                r.run_s = x.run_s;
                r.run_cpu_s = x.run_cpu_s;
            }
            if (x.exec_s < r.exec_s) {
                r.exec_s = x.exec_s;
                r.exec_cpu_s = x.exec_cpu_s;
            }
            if (x.sgemm_s < r.sgemm_s) {
                r.sgemm_s = x.sgemm_s;
                r.sgemm_cpu_s = x.sgemm_cpu_s;
            }
        }
        const double flop = 2.0 * (double)fm * (double)fk * (double)fn;
        double g_model = r.run_s > 0 ? flop / r.run_s / 1e9 : 0;
        double g_exec = r.exec_s > 0 ? flop / r.exec_s / 1e9 : 0;
        double g_blas = r.sgemm_s > 0 ? flop / r.sgemm_s / 1e9 : 0;
        b->ratio_model = g_blas > 0 ? g_model / g_blas : 0;
        ratio_exec = g_blas > 0 ? g_exec / g_blas : 0;
        say(&b->o,
            "\n2. functional matmul %" PRId64 "x%" PRId64 "x%" PRId64
            " (MxKxN, bf16 on %s) vs OpenBLAS sgemm (fp32, 1 thread), same process; best of %d "
            "processes\n",
            fm, fk, fn, b->g_fn->name, runs);
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
        jnum(f, "runs", runs);
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
        gs_bench_sweep_proc(b->self, b->gens, b->n_gens, 1, out1, 0, &b->s1);
        gs_bench_sweep_proc(b->self, b->gens, b->n_gens, 2, out2, 0, &b->s2);
        /* the same job list through the old paths (exec'd jobs, scalar references, full scans),
         * interleaved with the current one, best CPU time of two each: other work on a shared
         * machine inflates CPU time too (caches, memory bandwidth) */
        gs_bench_sweep_proc(b->self, b->gens, b->n_gens, 2, out3, 1, &b->s_old);
        gs_bench_sweep_proc(b->self, b->gens, b->n_gens, 2, out4, 1, &s_oldb);
        gs_bench_sweep_proc(b->self, b->gens, b->n_gens, 2, out5, 0, &s2b);
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
            if (gs_bench_child(&qs[k], &r, &rss) != 0 || !r.ok) b->failures++;
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
                if (gs_bench_child(&q, &r, &rss) != 0 || !r.ok) b->failures++;
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
/* A matmul job on the config at path as a sweep would request it (record: rec). */
typedef struct job_request {
    gs_config *cfg;
    gs_job_spec spec;
    gs_job_request rq;
} job_request;

static gs_status bench_request(const char *path, const char *shape, int functional, const char *rec,
                               job_request *out)
{
    memset(out, 0, sizeof *out);
    out->cfg = gs_config_load_with(path, NULL, 0, NULL);
    if (!out->cfg) return GS_ERR_INVALID;
    gs_job_options jo;
    gs_job_options_init(&jo);
    jo.kernel = "matmul";
    jo.shape = shape;
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_job_spec_from_options(&jo, out->cfg, &out->spec, &err);
    out->rq.spec = &out->spec;
    out->rq.run.functional = functional;
    out->rq.record = rec;
    return st;
}

static void bench_request_free(job_request *r)
{
    gs_config_free(r->cfg);
    memset(r, 0, sizeof *r);
}

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
        if (gs_bench_child(&q, &r, &rss) != 0 || !r.ok) b->failures++;
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
        /* the same two jobs as requests for the fork server (a sweep's current path) */
        job_request rq_big, rq_fn;
        const gs_status st_big = bench_request(b->g_big->path, b->shape_big, 0, rec, &rq_big);
        const gs_status st_fn = bench_request(b->g_fn->path, b->shape_fn, 1, rec, &rq_fn);
        if (st_big != GS_OK || st_fn != GS_OK) {
            say(&b->o, "   the jobs' configs no longer load\n");
            b->failures++;
            bench_request_free(&rq_big);
            bench_request_free(&rq_fn);
            return;
        }
        /* the target's job: a single run on a shared machine moves by several per cent, so
         * BIG_RUNS alternating runs per path, the one with the least CPU time kept (its RSS
         * the largest of the runs) */
        b->big_runs = b->o.quick ? 1 : BIG_RUNS;
        const int runs = b->big_runs;
        int failed[2] = {0, 0};
        for (int r = 0; r < runs; r++)
            for (int k = 0; k < 2; k++) {
                if (failed[k]) continue;
                proc_result pr;
                gs_bench_job_proc(b->self, a_big, &rq_big.rq, k, &pr);
                const long rss = r ? GS_MAX(b->big[k].maxrss_kb, pr.maxrss_kb) : pr.maxrss_kb;
                if (!pr.ok) failed[k] = 1;
                if (!pr.ok || r == 0 || pr.cpu_s < b->big[k].cpu_s) b->big[k] = pr;
                b->big[k].maxrss_kb = rss;
            }
        for (int k = 0; k < 2; k++)
            if (!b->big[k].ok) b->failures++;
        for (int k = 0; k < 2; k++) {
            gs_bench_job_proc(b->self, a_fn, &rq_fn.rq, k, &b->fjob[k]);
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
        bench_request_free(&rq_big);
        bench_request_free(&rq_fn);
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
        jnum(f, "timing_largest_runs", b->big_runs);
        jnum(f, "functional_cpu_speedup", b->func_speedup);
        jnum(f, "sweep_cpu_ratio", b->sweep_cpu_ratio);
    }
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
    const char *tmpdir = getenv("TMPDIR"); /* the user's choice of scratch space, as mktemp(1) */
    snprintf(b->tmp, sizeof b->tmp, "%s/gensweep-bench-XXXXXX",
             tmpdir && tmpdir[0] ? tmpdir : "/tmp");
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

    gs_bench_header(b);
    if (b->o.scaling) {
        gs_bench_scaling(b);
        res->missed = b->scale_missed;
    } else {
        bench_sim_speed(b);
        bench_functional_matmul(b);
        bench_sweep(b);
        bench_memory(b);
        bench_trace(b);
        bench_end_to_end(b);
        res->missed = gs_bench_targets(b);
    }
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
