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
        gs_sb_puts(sb, " <strong class=\"warn\">(incomplete: interrupted or one shard)</strong>");
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
        gs_sb_puts(sb, "<p>No job failed.</p>\n");
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
