/*
 * session.c - the sweep session every command that runs a sweep shares (gs_sweep_main): plan,
 * lock the output, run with a progress line, write the results, compare with the baselines,
 * run the calibration cases and write the report; for `--suite model` the workloads' jobs
 * instead of the kernel suite's plan and their workloads.json (harness/workload); the progress
 * printer and the sweep's way of printing diagnostics. The library (sweep.h) plans, runs and
 * writes; this prints and maps exit statuses.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "calibrate.h"
#include "cli_util.h"
#include "commands.h"
#include "compare.h"
#include "gs/strbuf.h"
#include "results.h"
#include "sweep.h"
#include "workload.h"

/* The calibration results for the report: a calibrate --json file as given, or a case file run
 * on the sweep's configs (and --set) with the results written to out_dir/calibration.json:
 * the session runs calibration, so the sweep library never does.
 * Problems go to diags as "--calibration: ..." (file-located ones keep their file:line:col). */
static gs_status sweep_calibration(const gs_sweep *s, const char *c, char *path, size_t size,
                                   gs_diags *diags)
{
    const gs_sweep_opts *o = gs_sweep_options(s);
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
            gs_diags_add(diags, d.items[i].code, NULL, 0, 0, "--calibration: %s:%d:%d: %s",
                         d.items[i].file, d.items[i].line, d.items[i].column, d.items[i].message);
        gs_diags_free(&d);
        return GS_ERR_INVALID;
    }
    gs_diags_free(&d);
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_calib_run(cal, NULL, &err);
    gs_calib_free(cal);
    if (!doc) {
        gs_diags_add(diags, err.code, NULL, 0, 0, "--calibration: %s", err.message);
        return err.code;
    }
    snprintf(path, size, "%s/calibration.json", o->out_dir);
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    FILE *f = text ? fopen(path, "w") : NULL;
    int ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) ok = 0;
    cJSON_free(text);
    if (!ok) {
        gs_diags_add(diags, GS_ERR_IO, NULL, 0, 0, "--calibration: cannot write %s", path);
        return GS_ERR_IO;
    }
    return GS_OK;
}

void gs_sweep_print_diags(const gs_diags *d)
{
    char buf[2048];
    gs_sb esc;
    gs_sb_init(&esc);
    for (size_t i = 0; i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        /* the sweep's own problems have no file: they follow the command name; messages quote
         * names from the files, escaped */
        fprintf(stderr, "%s%s\n",
                d->items[i].file[0] ? "" : "gensweep sweep: ", gs_cli_term(&esc, buf));
    }
    gs_sb_free(&esc);
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

/* On a terminal one status line rewritten in place; otherwise a line per finished job. Quiet:
 * only failed jobs, on stderr. */
void gs_sweep_cli_progress(void *ctx, const gs_sweep_progress *p)
{
    (void)ctx;
    /* a trace not written is a warning beside the job's status, printed even when quiet */
    const cJSON *te = p->event == GS_SWEEP_JOB_DONE && p->record
                          ? cJSON_GetObjectItemCaseSensitive(p->record, "trace_error")
                          : NULL;
    if (te && cJSON_IsString(te) && te->valuestring) {
        gs_sb why;
        gs_sb_init(&why);
        gs_sb_term(&why, te->valuestring);
        fprintf(stderr, "gensweep sweep: %s: warning: trace not written: %s\n", p->id,
                gs_sb_cstr(&why));
        gs_sb_free(&why);
    }
    if (p->quiet) {
        if (p->event != GS_SWEEP_JOB_DONE || !p->record || !p->failed) return;
        gs_sb why;
        gs_sb_init(&why);
        gs_sb_term(&why, gs_json_str(p->record, "reason"));
        fprintf(stderr, "gensweep sweep: %s: %s %s\n", p->id, gs_json_str(p->record, "status"),
                gs_sb_cstr(&why));
        gs_sb_free(&why);
        return;
    }
    int tty = isatty(STDOUT_FILENO);
    if (p->event == GS_SWEEP_END) {
        if (tty) printf("\n");
        return;
    }
    char e1[32], e2[32];
    fmt_dur(p->elapsed_s, e1, sizeof e1);
    if (tty) {
        fmt_dur(p->done ? p->elapsed_s / (double)p->done * (double)(p->total - p->done) : -1, e2,
                sizeof e2);
        printf("\r[%zu/%zu] %d failed, elapsed %s, ETA %s  %.60s\033[K", p->done, p->total,
               p->failures, e1, e2, p->id ? p->id : "");
        fflush(stdout);
        return;
    }
    if (p->event != GS_SWEEP_JOB_DONE || !p->record) return;
    double t = gs_json_num(p->record, "time_ns");
    char tbuf[48] = "";
    if (!isnan(t)) snprintf(tbuf, sizeof tbuf, "%.3f us", t / 1e3);
    int width = p->total >= 1000 ? 4 : p->total >= 100 ? 3 : p->total >= 10 ? 2 : 1;
    printf("[%*zu/%zu] %-12s %s %s\n", width, p->done, p->total, gs_json_str(p->record, "status"),
           p->id, tbuf);
    fflush(stdout);
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
        if (!gs_sweep_record_failed(j)) continue;
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

static void print_error(const char *what, const gs_error *err)
{
    char buf[2048];
    gs_error_format(err, buf, sizeof buf);
    fprintf(stderr, "gensweep sweep: %s%s\n", what, buf);
}

/* The model suite's layer totals: one line per workload with each generation's layer time
 * (tokens/s for decode), or the steps that could not run. */
static void print_workloads(const gs_wl_suite *ws, const gs_sweep *s, const gs_wl_result *res)
{
    const size_t nc = gs_sweep_config_count(s);
    /* names from the workload files: printed escaped (gs_cli_term) */
    gs_sb e1, e2;
    gs_sb_init(&e1);
    gs_sb_init(&e2);
    for (size_t k = 0; k < ws->n; k++) {
        const gs_workload *w = ws->w[k];
        printf("workload %s (%s):\n", gs_cli_term(&e1, w->name), w->phase);
        for (size_t c = 0; c < nc; c++) {
            const gs_wl_result *r = &res[k * nc + c];
            printf("  %-12s", gs_cli_term(&e1, r->generation));
            if (r->n_failed) {
                printf(" incomplete: %d of %d steps could not run:", r->n_failed, w->n_steps);
                for (int i = 0; i < w->n_steps; i++)
                    if (r->rows[i].variant < 0)
                        printf(" %s (%s)", gs_cli_term(&e1, w->steps[i].name),
                               gs_cli_term(&e2, r->rows[i].status));
                printf("\n");
                continue;
            }
            printf(" layer %.3f us", r->time_ns / 1e3);
            if (!strcmp(w->phase, "decode"))
                printf(", %.1f tokens/s per layer", (double)w->batch * 1e9 / r->time_ns);
            printf("\n");
        }
    }
    gs_sb_free(&e1);
    gs_sb_free(&e2);
}

/* workloads.json next to results.json (written whole or not at all, as results.json is), and
 * the layer totals printed. 1 when written (its path in path); 0 after printing why (*rc set). */
static int write_workloads(const gs_wl_suite *ws, const gs_sweep *s, const cJSON *doc,
                           int interrupted, int quiet, char *path, size_t size, int *rc)
{
    gs_wl_result *res = gs_wl_suite_collect(ws, s, doc, interrupted);
    gs_error err;
    gs_error_clear(&err);
    snprintf(path, size, "%s/workloads.json", gs_sweep_options(s)->out_dir);
    if (!res) {
        fprintf(stderr, "gensweep sweep: %s: out of memory\n", path);
        *rc = GS_EXIT_FAIL;
        return 0;
    }
    if (!quiet) print_workloads(ws, s, res);
    gs_sb sb;
    gs_sb_init(&sb);
    gs_wl_suite_json(&sb, ws, s, res, interrupted);
    gs_free(res);
    const int ok = gs_sb_write_file(&sb, path, &err) == GS_OK;
    gs_sb_free(&sb);
    if (!ok) {
        print_error("", &err);
        *rc = GS_EXIT_FAIL;
    }
    return ok;
}

/* Plan, lock the output, load the baselines (a bad one is a usage error before anything runs),
 * run, write; returns the sweep (NULL after printing why, *rc the exit status) with the
 * results document and baselines. */
static gs_sweep *plan_and_run(const gs_sweep_opts *o, const char *workloads, gs_wl_suite *ws,
                              int *lock_fd, cJSON **base, cJSON **doc, int *interrupted, int *rc)
{
    *rc = GS_EXIT_USAGE;
    gs_diags d;
    gs_diags_init(&d);
    const int model = o->suite == GS_SWEEP_MODEL;
    /* the workload files are checked before any config is loaded or job planned */
    gs_sweep *s = model && gs_wl_suite_load(ws, workloads, GS_WL_DEFAULT_DIR, &d) != GS_OK
                      ? NULL
                      : gs_sweep_create(o, &d);
    if (s && (model ? gs_wl_suite_plan(ws, s, &d) : gs_sweep_plan(s, &d)) != 0) {
        gs_sweep_free(s);
        s = NULL;
    }
    gs_sweep_print_diags(&d); /* the errors, or the warnings of a sweep that goes on */
    gs_diags_free(&d);
    if (!s) return NULL;
    gs_error err;
    gs_error_clear(&err);
    *lock_fd = gs_sweep_lock_out(s, &err);
    if (*lock_fd < 0) {
        print_error("", &err);
        gs_sweep_free(s);
        return NULL;
    }
    int failed = 0;
    *base = gs_sweep_load_baselines(o, &failed, &err);
    if (failed) {
        print_error("--baseline: ", &err);
        gs_sweep_free(s);
        close(*lock_fd);
        return NULL;
    }
    const gs_sweep_opts *so = gs_sweep_options(s);
    if (!o->quiet)
        printf("sweep: %zu jobs (%zu configs, suite %s, shard %d/%d, -j %d) -> %s\n",
               gs_sweep_job_count(s), gs_sweep_config_count(s),
               o->suite == GS_SWEEP_PERF    ? "perf"
               : o->suite == GS_SWEEP_ALL   ? "all"
               : o->suite == GS_SWEEP_MODEL ? "model"
                                            : "check",
               so->shard_index, so->shard_count, so->jobs, so->out_dir);
    gs_error_clear(&err);
    *doc = gs_sweep_execute(s, interrupted, &err);
    if (!*doc) {
        if (err.code != GS_OK) print_error("", &err);
        fprintf(stderr, "gensweep sweep: could not run the jobs\n");
        cJSON_Delete(*base);
        gs_sweep_free(s);
        close(*lock_fd);
        *rc = GS_EXIT_FAIL;
        return NULL;
    }
    *rc = GS_EXIT_OK;
    return s;
}

int gs_sweep_main(const gs_sweep_opts *opts, const char *calibration, const char *workloads,
                  cJSON **written_doc)
{
    if (written_doc) *written_doc = NULL;
    gs_sweep_opts o = *opts;
    if (!o.progress) o.progress = gs_sweep_cli_progress;
    /* workloads run each variant at its kernel defaults (workloads/README.md) */
    if (o.suite == GS_SWEEP_MODEL) o.no_tuning = 1;
    int lock_fd = -1, interrupted = 0, rc;
    cJSON *base = NULL, *doc = NULL;
    gs_wl_suite ws;
    memset(&ws, 0, sizeof ws);
    gs_sweep *s = plan_and_run(&o, workloads, &ws, &lock_fd, &base, &doc, &interrupted, &rc);
    if (!s) {
        gs_wl_suite_free(&ws);
        return rc;
    }
    const char *out = gs_sweep_options(s)->out_dir;
    gs_error err;
    gs_error_clear(&err);
    /* nothing is announced that was not written */
    int written = gs_results_write_dir(doc, out, &err) == GS_OK;
    if (!written) {
        print_error("", &err);
        rc = GS_EXIT_FAIL;
    }
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        if (gs_sweep_record_failed(j)) rc = GS_EXIT_FAIL;
    }
    if (interrupted) {
        rc = GS_EXIT_FAIL;
        fprintf(stderr,
                "gensweep sweep: interrupted; results so far written (\"complete\": false)\n");
    }
    if (!o.quiet)
        print_summary(doc, gs_json_num(cJSON_GetObjectItemCaseSensitive(doc, "wall"), "total_s"));
    char wpath[4096];
    const int wl_written =
        o.suite == GS_SWEEP_MODEL &&
        write_workloads(&ws, s, doc, interrupted, o.quiet, wpath, sizeof wpath, &rc);
    if (base) {
        gs_compare_summary sum;
        gs_compare_docs(base, doc, o.threshold, o.quiet ? NULL : stdout, &sum);
        if (gs_compare_failed(&sum)) rc = GS_EXIT_FAIL;
        if (!o.quiet || gs_compare_failed(&sum)) {
            gs_sb line;
            gs_sb_init(&line);
            gs_compare_summary_line(&line, &sum);
            fprintf(o.quiet ? stderr : stdout, "baseline: %s\n", gs_sb_cstr(&line));
            gs_sb_free(&line);
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", out);
    if (!o.no_report && written) {
        char html[4096];
        snprintf(html, sizeof html, "%s/report.html", out);
        gs_diags d;
        gs_diags_init(&d);
        char cpath[4096];
        const char *extra[2];
        int n_extra = 0;
        if (calibration && sweep_calibration(s, calibration, cpath, sizeof cpath, &d) == GS_OK)
            extra[n_extra++] = cpath;
        if (wl_written) extra[n_extra++] = wpath;
        gs_sweep_print_diags(&d); /* a calibration section left out, and why */
        gs_diags_free(&d);
        gs_error_clear(&err);
        gs_status st = gs_sweep_write_report(s, path, html, extra, n_extra, &err);
        if (st != GS_OK) {
            print_error("report: ", &err);
            rc = GS_EXIT_FAIL;
        } else if (!o.quiet) {
            printf("report: %s\n", html);
        }
    }
    if (!o.quiet && written)
        printf("results: %s (+ results.csv, junit.xml%s)\n", path,
               wl_written ? ", workloads.json" : "");
    gs_wl_suite_free(&ws);
    if (written_doc && written) {
        *written_doc = doc;
        doc = NULL;
    }
    cJSON_Delete(doc);
    cJSON_Delete(base);
    gs_sweep_free(s);
    close(lock_fd);
    return rc;
}
