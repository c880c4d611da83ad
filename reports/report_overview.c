/*
 * report_overview.c - the drill-down's first sections, about the sweep as a whole: summary
 * (inputs, totals, counts by status, failures and regressions listed) and the generations'
 * parameters side by side with their sources.
 */
#include "report_int.h"

#include <math.h>
#include <string.h>

void gs_rp_sec_summary(rep *r)
{
    gs_sb *sb = r->sb;
    const cJSON *tool = gs_rp_jget(r->root, "tool"), *wall = gs_rp_jget(r->root, "wall");
    gs_rp_section_open(sb, "summary", "Summary");
    gs_sb_puts(sb, "<dl class=\"facts\"><dt>results</dt><dd>");
    gs_rp_text(sb, r->results_name);
    gs_sb_puts(sb, "</dd><dt>date</dt><dd>");
    gs_rp_text(sb, *gs_rp_jstr(wall, "started") ? gs_rp_jstr(wall, "started") : "unknown");
    gs_sb_puts(sb, "</dd><dt>tool</dt><dd>gensweep ");
    gs_rp_text(sb, gs_rp_jstr(tool, "version"));
    gs_sb_puts(sb, ", commit ");
    gs_rp_text(sb, gs_rp_jstr(tool, "commit"));
    gs_sb_puts(sb, "</dd><dt>suite</dt><dd>");
    gs_rp_text(sb, gs_rp_jstr(r->root, "suite"));
    if (cJSON_IsFalse(gs_rp_jget(r->root, "complete")))
        gs_sb_puts(sb, " <strong class=\"warn\">(incomplete: <a href=\"#incomplete\">what is "
                       "missing</a>)</strong>");
    gs_sb_puts(sb, "</dd><dt>configs</dt><dd>");
    for (int g = 0; g < r->n_gens; g++) {
        if (g) gs_sb_puts(sb, ", ");
        gs_rp_text(sb, r->gens[g]);
    }
    const cJSON *ov;
    int first = 1;
    cJSON_ArrayForEach(ov, gs_rp_jget(r->root, "overrides"))
    {
        if (!cJSON_IsString(ov)) continue;
        gs_sb_puts(sb, first ? " with overrides <code>" : "</code>, <code>");
        gs_rp_text(sb, ov->valuestring);
        first = 0;
    }
    if (!first) gs_sb_puts(sb, "</code>");
    double sim = 0;
    for (size_t i = 0; i < r->n_jobs; i++)
        if (isfinite(r->jobs[i].time_ns)) sim += r->jobs[i].time_ns;
    gs_sb_puts(sb, "</dd><dt>total simulated time</dt><dd>");
    gs_rp_put_time(sb, sim);
    gs_sb_puts(sb, "</dd><dt>wall time</dt><dd>");
    double ws = gs_rp_jnum(wall, "total_s");
    if (isfinite(ws))
        gs_sb_printf(sb, "%.1f s", ws);
    else
        gs_sb_puts(sb, "—");
    gs_sb_printf(sb, "</dd><dt>jobs</dt><dd>%zu</dd></dl>\n", r->n_jobs);

    /* counts by status, known statuses in table order, then unknown ones */
    gs_sb_puts(sb, "<table class=\"counts\"><thead><tr><th>status</th><th>jobs</th></tr></thead>"
                   "<tbody>");
    for (size_t s = 0; s < gs_rp_status_count(); s++) {
        size_t c = 0;
        for (size_t i = 0; i < r->n_jobs; i++)
            if (!strcmp(r->jobs[i].status, gs_rp_status_name(s))) c++;
        gs_sb_puts(sb, "<tr><td>");
        gs_rp_status_badge(sb, gs_rp_status_name(s));
        gs_sb_printf(sb, "</td><td class=\"n\">%zu</td></tr>", c);
    }
    size_t unknown = 0;
    for (size_t i = 0; i < r->n_jobs; i++)
        if (gs_rp_status_index(r->jobs[i].status) < 0) unknown++;
    if (unknown)
        gs_sb_printf(sb,
                     "<tr><td><span class=\"st unknown\">unknown status</span></td>"
                     "<td class=\"n\">%zu</td></tr>",
                     unknown);
    gs_sb_puts(sb, "</tbody></table>\n");

    size_t nfail = 0;
    for (size_t i = 0; i < r->n_jobs; i++)
        nfail += gs_rp_status_is_failure(r->jobs[i].status) != 0;
    gs_sb_printf(sb, "<h3 id=\"failures\">Failures (%zu)</h3>", nfail);
    if (nfail) {
        gs_sb_puts(sb, "<ul class=\"problems\">");
        for (size_t i = 0; i < r->n_jobs; i++) {
            if (gs_rp_budget_hit(r)) break;
            const rjob *j = &r->jobs[i];
            if (!gs_rp_status_is_failure(j->status)) continue;
            gs_sb_printf(sb, "<li><a href=\"#job-%zu\">", i);
            gs_rp_text(sb, j->id);
            gs_sb_puts(sb, "</a> ");
            gs_rp_status_badge(sb, j->status);
            if (*j->reason) {
                gs_sb_puts(sb, " ");
                gs_rp_text_cut(sb, j->reason);
            }
            gs_sb_puts(sb, "</li>");
        }
        gs_sb_puts(sb, "</ul>\n");
    } else {
        gs_rp_no_failure(r);
    }
    if (r->broot) {
        size_t nreg = 0;
        for (size_t i = 0; i < r->n_jobs; i++)
            nreg += r->jobs[i].diff.verdict == GS_VERDICT_REGRESSION;
        for (size_t i = 0; i < r->n_bjobs; i++)
            nreg += r->bjobs[i].diff.verdict == GS_VERDICT_MISSING;
        gs_sb_printf(sb, "<h3>Regressions against the baseline (%zu)</h3>", nreg);
        if (nreg) {
            gs_sb_puts(sb, "<ul class=\"problems\">");
            for (size_t i = 0; i < r->n_jobs; i++) {
                if (gs_rp_budget_hit(r)) break;
                const rjob *j = &r->jobs[i];
                if (j->diff.verdict != GS_VERDICT_REGRESSION) continue;
                gs_sb_printf(sb, "<li><a href=\"#base-%zu\">", i);
                gs_rp_text(sb, j->id);
                gs_sb_puts(sb, "</a>");
                if (isfinite(j->diff.time_rel))
                    gs_sb_printf(sb, " %+.1f %%", 100.0 * j->diff.time_rel);
                gs_sb_puts(sb, "</li>");
            }
            for (size_t i = 0; i < r->n_bjobs; i++) {
                if (gs_rp_budget_hit(r)) break;
                const rjob *b = &r->bjobs[i];
                if (b->diff.verdict != GS_VERDICT_MISSING) continue;
                gs_sb_printf(sb, "<li><a href=\"#base-m%zu\">", i);
                gs_rp_text(sb, b->id);
                gs_sb_puts(sb, "</a> missing</li>");
            }
            gs_sb_puts(sb, "</ul>\n");
        } else {
            gs_sb_puts(sb, "<p>No regression.</p>\n");
        }
    }
    gs_rp_section_close(sb);
}

void gs_rp_sec_generations(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "generations", "Generations side by side");
    gs_sb_puts(sb, "<p>Every numeric parameter of each configuration. Rows whose values differ "
                   "between generations are <span class=\"diff\">highlighted</span>. Each value "
                   "is marked with its source key (hover for the note) or as "
                   "<span class=\"assumed\">assumed</span> (no public number).</p>\n");
    gs_rp_gen_table_open(r, "sortable params", "parameter");
    /* derived peaks first: they are what people compare */
    static const struct {
        const char *key, *label;
    } peaks[] = {{"bf16_tflops", "peak bf16 TFLOP/s per core"},
                 {"fp32_tflops", "peak fp32 TFLOP/s per core"},
                 {"fp8_tflops", "peak fp8 TFLOP/s per core"},
                 {"hbm_gbps", "HBM GB/s per chip"},
                 {"sbuf_mib", "SBUF MiB per core"},
                 {"cores", "cores per chip"}};
    for (size_t p = 0; p < GS_ARRAY_LEN(peaks); p++) {
        gs_sb_puts(sb, "<tr class=\"derived\"><th scope=\"row\">");
        gs_sb_puts(sb, peaks[p].label);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++)
            gs_rp_td_num(sb, gs_rp_jnum(gs_rp_jget(r->cfg[g], "peaks"), peaks[p].key));
        gs_sb_puts(sb, "</tr>\n");
    }
    /* parameters in the first config's (table) order, then any only later configs have */
    for (int c = 0; c < r->n_gens; c++) {
        const cJSON *prm;
        cJSON_ArrayForEach(prm, gs_rp_jget(r->cfg[c], "params"))
        {
            if (gs_rp_budget_hit(r)) break;
            const char *key = prm->string;
            if (!key) continue;
            int seen = 0;
            for (int e = 0; e < c && !seen; e++)
                seen = gs_rp_jget(gs_rp_jget(r->cfg[e], "params"), key) != NULL;
            if (seen) continue;
            double v0 = NAN;
            int differs = 0, have = 0;
            for (int g = 0; g < r->n_gens; g++) {
                double v = gs_rp_jnum(gs_rp_jget(gs_rp_jget(r->cfg[g], "params"), key), "value");
                if (!have) {
                    v0 = v;
                    have = 1;
                } else if (!(v == v0 || (isnan(v) && isnan(v0)))) {
                    differs = 1;
                }
            }
            gs_sb_printf(sb, "<tr%s><th scope=\"row\"><code>", differs ? " class=\"diff\"" : "");
            gs_rp_text(sb, key);
            gs_sb_puts(sb, "</code></th>");
            for (int g = 0; g < r->n_gens; g++) {
                const cJSON *pv = gs_rp_jget(gs_rp_jget(r->cfg[g], "params"), key);
                double v = gs_rp_jnum(pv, "value");
                const char *src = gs_rp_jstr(pv, "src"), *note = gs_rp_jstr(pv, "note");
                gs_sb_puts(sb, "<td class=\"n\"");
                gs_rp_put_dv(sb, v);
                gs_sb_puts(sb, ">");
                gs_rp_put_param(sb, v, gs_rp_jstr(pv, "unit"));
                if (*src) {
                    int assumed = !strcmp(src, "assumed");
                    gs_sb_printf(sb, " <span class=\"%s\" title=\"",
                                 assumed                 ? "assumed"
                                 : !strcmp(src, "--set") ? "override"
                                                         : "src");
                    if (!assumed) {
                        gs_sb_puts(sb, "source ");
                        gs_rp_text(sb, src);
                        const char *url = gs_rp_jstr(gs_rp_jget(r->cfg[g], "sources"), src);
                        if (*url) {
                            gs_sb_puts(sb, ": ");
                            gs_rp_text(sb, url);
                        }
                        if (*note) gs_sb_puts(sb, " — ");
                    }
                    gs_rp_text(sb, note);
                    gs_sb_puts(sb, "\">");
                    gs_rp_text(sb, src);
                    gs_sb_puts(sb, "</span>");
                }
                gs_sb_puts(sb, "</td>");
            }
            gs_sb_puts(sb, "</tr>\n");
        }
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    /* the sources, as text: the report links nowhere outside itself */
    gs_sb_puts(sb, "<h3>Sources</h3><dl class=\"sources\">");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<dt>");
        gs_rp_text(sb, r->gens[g]);
        if (r->cfg[g]) {
            gs_sb_puts(sb, " — ");
            gs_rp_text(sb, gs_rp_jstr(r->cfg[g], "description"));
        }
        gs_sb_puts(sb, "</dt>");
        const cJSON *s;
        cJSON_ArrayForEach(s, gs_rp_jget(r->cfg[g], "sources"))
        {
            gs_sb_puts(sb, "<dd><b>");
            gs_rp_text(sb, s->string);
            gs_sb_puts(sb, "</b> ");
            gs_rp_text(sb, cJSON_IsString(s) ? s->valuestring : "");
            gs_sb_puts(sb, "</dd>");
        }
    }
    gs_sb_puts(sb, "</dl>\n");
    gs_rp_section_close(sb);
}

void gs_rp_gaps_load(rep *r)
{
    const cJSON *root = r->root;
    r->interrupted = cJSON_IsTrue(gs_rp_jget(root, "interrupted"));
    r->planned = gs_rp_jnum(root, "planned_jobs");
    const cJSON *sh = gs_rp_jget(root, "shard");
    const double idx = gs_rp_jnum(sh, "index"), cnt = gs_rp_jnum(sh, "count");
    /* a shard's own file is judged against its share of the plan (results/RESULTS.md) */
    double expected = r->planned;
    if (isfinite(expected) && isfinite(idx) && isfinite(cnt) && cnt > 1)
        expected = expected >= idx ? floor((expected - idx) / cnt) + 1 : 0;
    r->absent =
        isfinite(expected) && expected > (double)r->n_jobs ? expected - (double)r->n_jobs : 0;
    const cJSON *nr = gs_rp_jget(root, "not_run");
    r->not_run = cJSON_IsArray(nr) && cJSON_GetArraySize(nr) > 0 ? nr : NULL;
    r->incomplete = cJSON_IsFalse(gs_rp_jget(root, "complete")) || r->interrupted ||
                    r->absent > 0 || r->not_run || (isfinite(cnt) && cnt > 1);
}

int gs_rp_pair_partial(const rep *r, int a, int b)
{
    if (!r->incomplete) return 0;
    /* without merge's list of the jobs not run, any pair may have lost some */
    if (!r->not_run || (double)cJSON_GetArraySize(r->not_run) < r->absent) return 1;
    const cJSON *x;
    cJSON_ArrayForEach(x, r->not_run)
    {
        const char *id = gs_rp_jstr(x, "id");
        for (int k = 0; k < 2; k++) {
            const char *g = r->gens[k ? b : a];
            size_t n = strlen(g);
            if (!strncmp(id, g, n) && id[n] == '/') return 1;
        }
    }
    return 0;
}

void gs_rp_no_failure(rep *r)
{
    if (!r->incomplete) {
        gs_sb_puts(r->sb, "<p>No job failed.</p>\n");
        return;
    }
    gs_sb_puts(r->sb, "<p class=\"warn\">No job that ran failed, but the results are "
                      "incomplete: ");
    if (r->absent > 0)
        gs_sb_printf(r->sb, "%.0f planned job%s did not run", r->absent, r->absent == 1 ? "" : "s");
    else
        gs_sb_puts(r->sb, "not every planned job ran");
    gs_sb_puts(r->sb, " (<a href=\"#incomplete\">what is missing</a>).</p>\n");
}

/* Most jobs not run listed by id (the rest are counted); the first few are shown, the others
 * behind a <details>. */
#define NOT_RUN_LIST_MAX 2000
#define NOT_RUN_SHOWN 12

void gs_rp_sec_incomplete(rep *r)
{
    if (!r->incomplete) return;
    gs_sb *sb = r->sb;
    const cJSON *sh = gs_rp_jget(r->root, "shard");
    const double idx = gs_rp_jnum(sh, "index"), cnt = gs_rp_jnum(sh, "count");
    gs_sb_puts(sb, "<div id=\"incomplete\" class=\"incomplete\" role=\"alert\"><p><strong>"
                   "Incomplete results: this is not the whole sweep.</strong>");
    int any = 0;
    if (isfinite(cnt) && cnt > 1) {
        gs_sb_printf(sb,
                     " This file is <b>shard %.0f of %.0f</b> only: the other shards' jobs are "
                     "not in it (<code>gensweep merge</code> joins the shards).",
                     idx, cnt);
        any = 1;
    }
    if (r->interrupted) {
        gs_sb_puts(sb, " The sweep was <b>interrupted</b> (SIGINT/SIGTERM): the jobs after that "
                       "point did not run.");
        any = 1;
    }
    const char *missing = gs_rp_jstr(r->root, "missing");
    if (*missing) {
        gs_sb_puts(sb, " Missing: <b class=\"missing\">");
        gs_rp_text_cut(sb, missing);
        gs_sb_puts(sb, "</b>.");
        any = 1;
    }
    if (r->absent > 0) {
        gs_sb_printf(sb, " <b>%.0f</b> of the %s%.0f planned jobs have no result.", r->absent,
                     isfinite(cnt) && cnt > 1 ? "shard's " : "", r->absent + (double)r->n_jobs);
        any = 1;
    }
    if (!any) gs_sb_puts(sb, " The results file says <code>\"complete\": false</code>.");
    gs_sb_puts(sb, "</p>\n");
    if (r->not_run) {
        /* the shards named once each, in first-seen order (merge lists them by plan order) */
        int n = cJSON_GetArraySize(r->not_run);
        double seen[64];
        int ns = 0, more = 0;
        const cJSON *x;
        /* a job with a "why" (interrupted, no result) was in a shard that ran */
        cJSON_ArrayForEach(x, r->not_run)
        {
            if (*gs_rp_jstr(x, "why")) continue;
            if (!ns && !more) gs_sb_puts(sb, "<p>Missing shards: <b class=\"missing-shards\">");
            double s = gs_rp_jnum(x, "shard");
            int dup = 0;
            for (int k = 0; k < ns && !dup; k++)
                dup = seen[k] == s;
            if (dup) continue;
            if (ns == 64) {
                more = 1;
                continue;
            }
            seen[ns++] = s;
            gs_sb_printf(sb, "%s%.0f/%.0f", ns > 1 ? ", " : "", s, gs_rp_jnum(x, "shards"));
        }
        if (ns)
            gs_sb_printf(sb, "%s</b>. Jobs not run (%d):</p>\n<ul class=\"notrun\">",
                         more ? ", ..." : "", n);
        else
            gs_sb_printf(sb, "<p>Jobs not run (%d):</p>\n<ul class=\"notrun\">", n);
        int k = 0;
        cJSON_ArrayForEach(x, r->not_run)
        {
            if (k == NOT_RUN_LIST_MAX || gs_rp_budget_hit(r)) break;
            if (k == NOT_RUN_SHOWN)
                gs_sb_printf(sb, "</ul><details><summary>%d more</summary><ul class=\"notrun\">",
                             n - NOT_RUN_SHOWN);
            gs_sb_puts(sb, "<li><code>");
            gs_rp_text_cut(sb, gs_rp_jstr(x, "id"));
            gs_sb_puts(sb, "</code> (");
            const double sn = gs_rp_jnum(x, "shards");
            if (sn > 1 || !*gs_rp_jstr(x, "why"))
                gs_sb_printf(sb, "shard %.0f/%.0f", gs_rp_jnum(x, "shard"), sn);
            if (*gs_rp_jstr(x, "why")) {
                if (sn > 1) gs_sb_puts(sb, ", ");
                gs_rp_text_cut(sb, gs_rp_jstr(x, "why"));
            }
            gs_sb_puts(sb, ")</li>");
            k++;
        }
        if (k < n) gs_sb_printf(sb, "<li>... %d more (every one in the results file)</li>", n - k);
        gs_sb_puts(sb, k > NOT_RUN_SHOWN ? "</ul></details>\n" : "</ul>\n");
    }
    gs_sb_puts(sb, "<p>Every speedup on this page is over the jobs present only: the verdicts of "
                   "generation pairs that lost jobs are marked <b>partial</b> and may change "
                   "when the missing jobs run.</p></div>\n");
}
