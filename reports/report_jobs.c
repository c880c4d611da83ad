/*
 * report_jobs.c - the per-job sections: correctness (failed jobs, checked outputs per kernel and
 * generation, every job) and the comparison against a baseline results file.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One row of the every-job table. */
static void job_row(rep *r, size_t i)
{
    gs_sb *sb = r->sb;
    const rjob *j = &r->jobs[i];
    const cJSON *e = gs_rp_jget(j->o, "error");
    gs_sb_printf(sb, "<tr id=\"job-%zu\"", i);
    gs_rp_filter_attrs(sb, j->gen, j->kernel, j->status);
    gs_sb_printf(sb, "%s>", gs_rp_status_is_failure(j->status) ? " class=\"bad\"" : "");
    gs_sb_puts(sb, "<td class=\"id\">");
    gs_rp_text_cut(sb, j->id);
    gs_sb_puts(sb, "</td><td>");
    gs_rp_status_badge(sb, j->status);
    gs_sb_puts(sb, "</td>");
    gs_rp_td_time(sb, j->time_ns);
    gs_rp_td_num(sb, gs_rp_jnum(j->o, "roofline_ratio"));
    /* the kind without the numbers (the engines section and the rooflines give the line):
     * the table has a row per job */
    char kind[64];
    gs_rp_td_text(sb, gs_rp_job_bound_class(j->o, kind, sizeof kind));
    if (cJSON_IsTrue(gs_rp_jget(e, "checked"))) {
        double ea = gs_rp_jnum(e, "max_abs"), ta = gs_rp_jnum(e, "tol_abs");
        gs_sb_puts(sb, "<td class=\"n\"");
        gs_rp_put_dv(sb, ea);
        gs_sb_puts(sb, ">");
        gs_rp_put_num(sb, ea);
        gs_sb_puts(sb, " / ");
        gs_rp_put_num(sb, ta);
        gs_sb_puts(sb, "</td>");
        gs_rp_td_num(sb, gs_rp_jnum(e, "mismatches"));
    } else {
        gs_sb_puts(sb, "<td colspan=\"2\" class=\"none\" data-v=\"\">not checked</td>");
    }
    gs_sb_puts(sb, "<td class=\"reason\">");
    gs_rp_text_cut(sb, j->reason);
    const char *tail = gs_rp_jstr(j->o, "stderr_tail");
    if (*tail) {
        gs_sb_puts(sb, "<details class=\"more\"><summary>stderr</summary><div>");
        gs_rp_text(sb, tail);
        gs_sb_puts(sb, "</div></details>");
    }
    gs_sb_puts(sb, "</td></tr>\n");
}

static void job_table_head(gs_sb *sb, const char *id)
{
    gs_sb_printf(sb,
                 "<div class=\"scroll\"><table id=\"%s\" class=\"sortable filterable "
                 "jobs\"><thead><tr><th>job</th><th>status</th><th>time</th>"
                 "<th>× roofline</th><th>what bounds it</th><th>max abs err / tol</th>"
                 "<th>mismatches</th><th>reason</th></tr></thead><tbody>\n",
                 id);
}

static int job_checked(const rjob *j)
{
    return cJSON_IsTrue(gs_rp_jget(gs_rp_jget(j->o, "error"), "checked"));
}

/* Kernel rows with a checked output on some generation. */
static int row_checked(rep *r, size_t k, void *ctx)
{
    (void)ctx;
    for (size_t q = 0; q < gs_rp_row_count(r, k); q++)
        if (job_checked(gs_rp_row_job(r, k, q))) return 1;
    return 0;
}

/* A kernel row's checked jobs on one generation: passed / checked and the worst error. */
static void checked_cell(rep *r, size_t k, int g, void *ctx)
{
    (void)ctx;
    gs_sb *sb = r->sb;
    int checked = 0, ok = 0;
    double worst = NAN;
    for (size_t q = 0; q < gs_rp_row_count(r, k); q++) {
        const rjob *j = gs_rp_row_job(r, k, q);
        if (j->gen_i != g || !job_checked(j)) continue;
        const cJSON *e = gs_rp_jget(j->o, "error");
        checked++;
        ok += !strcmp(j->status, "pass");
        double f = gs_rp_jnum(e, "max_abs") / gs_rp_jnum(e, "tol_abs");
        if (isfinite(f) && !(f <= worst)) worst = f;
    }
    if (!checked) {
        gs_sb_puts(sb, "<td class=\"none\" data-v=\"\">—</td>");
        return;
    }
    gs_sb_printf(sb, "<td class=\"n%s\"", ok < checked ? " badc" : "");
    gs_rp_put_dv(sb, worst);
    gs_sb_printf(sb, ">%d/%d · ", ok, checked);
    if (isfinite(worst))
        gs_sb_printf(sb, "%.2g", worst);
    else
        gs_sb_puts(sb, "—");
    gs_sb_puts(sb, "</td>");
}

/* Most rows of the every-job table (the rest stay in results.json): keeps the page light. */
#define JOB_TABLE_MAX 4000

void gs_rp_sec_correctness(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "correctness", "Correctness");
    size_t nfail = 0;
    for (size_t i = 0; i < r->n_jobs; i++)
        nfail += gs_rp_status_is_failure(r->jobs[i].status) != 0;
    if (nfail) {
        gs_sb_printf(sb, "<h3>Failed jobs (%zu)</h3>", nfail);
        job_table_head(sb, "failed");
        size_t shown = 0;
        for (size_t i = 0; i < r->n_jobs && shown < JOB_TABLE_MAX; i++)
            if (gs_rp_status_is_failure(r->jobs[i].status)) {
                if (gs_rp_budget_hit(r)) break;
                job_row(r, i);
                shown++;
            }
        gs_sb_puts(sb, "</tbody></table></div>\n");
    } else {
        gs_rp_no_failure(r);
    }
    /* compact: per kernel row and generation, the checked jobs and the worst error as a share
     * of its tolerance */
    gs_sb_puts(sb, "<h3>Checked outputs</h3><p>Per kernel and generation: functional jobs that "
                   "passed / checked, and the worst max abs error as a fraction of its tolerance "
                   "(1 = at the tolerance).</p>");
    gs_rp_kernel_gen_table(r, "sortable filterable compact",
                           &(gs_rp_kernel_cells){.row_shown = row_checked, .cell = checked_cell});
    gs_sb_printf(sb,
                 "<details class=\"alljobs\"><summary>Every job (%zu): status, time, "
                 "error, reason</summary>",
                 r->n_jobs);
    job_table_head(sb, "jobs");
    for (size_t i = 0; i < r->n_jobs && i < JOB_TABLE_MAX; i++) {
        if (gs_rp_status_is_failure(r->jobs[i].status)) continue; /* listed above */
        if (gs_rp_budget_hit(r)) break;
        job_row(r, i);
    }
    gs_sb_puts(sb, "</tbody></table></div>");
    if (r->n_jobs > JOB_TABLE_MAX)
        gs_sb_printf(sb, "<p class=\"note\">%zu more jobs are in the results file only.</p>",
                     r->n_jobs - JOB_TABLE_MAX);
    gs_sb_puts(sb, "</details>\n");
    gs_rp_section_close(sb);
}

/* What made a verdict, for its table cell: the status, time or error change the gate saw. */
static void verdict_cell(gs_sb *sb, const gs_job_diff *d)
{
    gs_sb_puts(sb, "<td>");
    gs_sb_puts(sb, gs_verdict_name(d->verdict));
    if (d->verdict == GS_VERDICT_MISSING) {
        gs_sb_puts(sb, " (its generation and kernel ran, the job did not)");
    } else if (d->status_change) {
        gs_sb_puts(sb, d->status_change > 0 ? " (worse status)" : " (better status)");
    } else if (d->err_regressed) {
        gs_sb_puts(sb, " (max abs error ");
        gs_rp_put_num(sb, d->base_err);
        gs_sb_puts(sb, " → ");
        gs_rp_put_num(sb, d->cur_err);
        if (d->err_tol > 0) {
            gs_sb_puts(sb, ", tolerance ");
            gs_rp_put_num(sb, d->err_tol);
        }
        gs_sb_puts(sb, ")");
    }
    gs_sb_puts(sb, "</td>");
}

/* One row of the baseline table; j is the job in these results (NULL when missing), b the
 * baseline's (for a missing job). */
static void baseline_row(rep *r, const rjob *j, const rjob *b, const char *row_id)
{
    gs_sb *sb = r->sb;
    const rjob *o = j ? j : b;
    const gs_job_diff *d = &o->diff;
    gs_sb_printf(sb, "<tr id=\"%s\" class=\"%s\"", row_id,
                 gs_verdict_is_regression(d->verdict) ? "bad" : "good");
    gs_rp_filter_attrs(sb, o->gen, o->kernel, j ? j->status : "");
    gs_sb_puts(sb, ">");
    gs_rp_td_text(sb, o->id);
    verdict_cell(sb, d);
    gs_rp_td_time(sb, d->base_ns);
    gs_rp_td_time(sb, d->cur_ns);
    gs_sb_puts(sb, "<td class=\"n\"");
    double pct = 100.0 * d->time_rel;
    gs_rp_put_dv(sb, pct);
    if (isfinite(pct))
        gs_sb_printf(sb, ">%+.1f %%</td>", pct);
    else
        gs_sb_puts(sb, ">—</td>");
    gs_sb_puts(sb, "<td>");
    gs_rp_status_badge(sb, d->base_status);
    gs_sb_puts(sb, " → ");
    if (j)
        gs_rp_status_badge(sb, d->cur_status);
    else
        gs_sb_puts(sb, "missing");
    gs_sb_puts(sb, "</td></tr>\n");
}

/* The rows of the jobs with verdict v: these results' jobs, or for a missing job the
 * baseline's (row ids base-N and base-mN, which the summary links to). */
static void baseline_rows(rep *r, gs_verdict v)
{
    const int missing = v == GS_VERDICT_MISSING;
    const rjob *jobs = missing ? r->bjobs : r->jobs;
    const size_t n = missing ? r->n_bjobs : r->n_jobs;
    char id[48];
    for (size_t i = 0; i < n && !gs_rp_budget_hit(r); i++) {
        if (jobs[i].diff.verdict != v) continue;
        snprintf(id, sizeof id, "base-%s%zu", missing ? "m" : "", i);
        baseline_row(r, missing ? NULL : &jobs[i], missing ? &jobs[i] : NULL, id);
    }
}

void gs_rp_sec_baseline(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "baseline", "Against the baseline");
    if (!r->broot) {
        gs_sb_puts(sb, "<p>No baseline was given (<code>gensweep report RESULTS.json --baseline "
                       "BASE.json</code>).</p>\n");
        gs_rp_section_close(sb);
        return;
    }
    /* the verdicts are gs_compare_job's (results/compare.h), as in the CI gate */
    size_t n[GS_VERDICT_COUNT] = {0};
    for (size_t i = 0; i < r->n_jobs; i++)
        n[r->jobs[i].diff.verdict]++;
    for (size_t i = 0; i < r->n_bjobs; i++)
        if (r->bjobs[i].diff.verdict == GS_VERDICT_MISSING ||
            r->bjobs[i].diff.verdict == GS_VERDICT_NOT_RUN)
            n[r->bjobs[i].diff.verdict]++;
    gs_sb_puts(sb, "<p>Baseline <code>");
    gs_rp_text(sb, r->baseline_name);
    gs_sb_printf(sb,
                 "</code>: %zu regressions (a worse status, time beyond +%.3g %%, an error grown "
                 "by more than %.3g %% of its tolerance, or a job missing although its "
                 "generation and kernel ran: %zu), %zu improvements (a better status or time "
                 "beyond −%.3g %%), %zu unchanged, %zu new jobs, %zu jobs not run (their "
                 "generation and kernel are not in these results).</p>\n",
                 n[GS_VERDICT_REGRESSION] + n[GS_VERDICT_MISSING], r->regress_pct,
                 100.0 * GS_COMPARE_ERR_TOL_FRACTION, n[GS_VERDICT_MISSING],
                 n[GS_VERDICT_IMPROVEMENT], r->regress_pct, n[GS_VERDICT_SAME], n[GS_VERDICT_NEW],
                 n[GS_VERDICT_NOT_RUN]);
    gs_sb_puts(sb, "<div class=\"scroll\"><table class=\"sortable filterable\"><thead><tr>"
                   "<th>job</th><th>verdict</th><th>baseline</th><th>now</th><th>change</th>"
                   "<th>status then → now</th></tr></thead><tbody>\n");
    /* regressions first (missing jobs among them), then improvements */
    baseline_rows(r, GS_VERDICT_REGRESSION);
    baseline_rows(r, GS_VERDICT_MISSING);
    baseline_rows(r, GS_VERDICT_IMPROVEMENT);
    gs_sb_puts(sb, "</tbody></table></div>\n");
    gs_rp_section_close(sb);
}
