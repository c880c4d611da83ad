/*
 * bench_report.c - the framing of `gensweep bench`'s report and document: the machine and its
 * load (the header, and the load at the end), and the targets (BENCHMARKS.md), each reported met
 * or missed with its margin from the figures the sections measured (bench.c). Measured, not
 * asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_internal.h"

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

/* The header: build, machine and load, and the document's first members. */
void gs_bench_header(bench_run *b)
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

int gs_bench_targets(bench_run *b)
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
    snprintf(note, sizeof note,
             "%s matmul %s fork to exit, per CPU s, best of %d; wall: %.0f; old: %.0f",
             b->g_big->name, b->shape_big, b->big_runs, b->e2e_rate,
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
