/*
 * report_sections.c - the drill-down sections: summary and failures, generations side by side,
 * portability, where the time goes, timelines, correctness, baseline, variants.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

/* Engines in display order; the results file may lack some (gpsimd on gen1). */
static const char *const engine_names[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};
#define N_ENGINES ((int)GS_ARRAY_LEN(engine_names))
static const char *const stall_keys[] = {"busy_ns", "stall_dep_ns", "stall_dma_ns",
                                         "stall_port_ns"};
static const char *const stall_labels[] = {"busy", "waiting on a dependency", "waiting on DMA",
                                           "waiting on a port"};

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
    gs_sb_puts(sb, "<div class=\"scroll\"><table class=\"sortable params\"><thead><tr>"
                   "<th>parameter</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
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

void gs_rp_sec_portability(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "portability", "Portability matrix");
    gs_sb_puts(sb, "<p>Worst status over each kernel's shapes, and the time at its largest "
                   "shape. Hover or focus a cell for every shape's status, time and reason.</p>\n"
                   "<div class=\"scroll\"><table class=\"sortable filterable matrix\"><thead><tr>"
                   "<th>kernel/variant dtype</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    gs_sb tip, gens, sts;
    gs_sb_init(&tip);
    gs_sb_init(&gens);
    gs_sb_init(&sts);
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        gs_sb_reset(&gens);
        gs_sb_reset(&sts);
        for (size_t i = 0; i < r->n_jobs; i++) {
            const rjob *j = &r->jobs[i];
            if (j->row_i != (int)k) continue;
            gs_sb_puts(&gens, r->gens[j->gen_i]);
            gs_sb_putc(&gens, '|');
            gs_sb_puts(&sts, j->status);
            gs_sb_putc(&sts, '|');
        }
        gs_sb_puts(sb, "<tr");
        gs_rp_filter_attrs(sb, gs_sb_cstr(&gens), r->rows[k].kernel, gs_sb_cstr(&sts));
        gs_sb_puts(sb, "><th scope=\"row\">");
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++) {
            const char *worst = NULL;
            gs_sb_reset(&tip);
            for (size_t i = 0; i < r->n_jobs; i++) {
                const rjob *j = &r->jobs[i];
                if (j->row_i != (int)k || j->gen_i != g) continue;
                if (!worst || gs_rp_worse_status(worst, j->status)) worst = j->status;
                gs_sb_printf(&tip, "%s%s: %s", tip.len ? "\n" : "", j->shape, j->status);
                if (isfinite(j->time_ns)) {
                    gs_sb_puts(&tip, ", ");
                    gs_rp_put_time(&tip, j->time_ns);
                }
                if (*j->reason) /* a tooltip shows the start of a long reason */
                    gs_sb_printf(&tip, " — %.200s%s", j->reason,
                                 strlen(j->reason) > 200 ? "…" : "");
            }
            if (!worst) {
                gs_sb_puts(sb, "<td class=\"none\" data-v=\"\">not run</td>");
                continue;
            }
            const rjob *rep_job = gs_rp_representative(r, k, g);
            gs_sb_printf(sb, "<td class=\"cell %s\" tabindex=\"0\" title=\"",
                         gs_rp_status_class(worst));
            gs_rp_text(sb, gs_sb_cstr(&tip));
            gs_sb_puts(sb, "\"");
            gs_rp_put_dv(sb, rep_job ? rep_job->time_ns : (double)NAN);
            gs_sb_puts(sb, "><b>");
            gs_rp_text(sb, worst);
            gs_sb_puts(sb, "</b><br>");
            gs_rp_put_time(sb, rep_job ? rep_job->time_ns : (double)NAN);
            gs_sb_puts(sb, "</td>");
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    if (!gs_sb_ok(&tip) || !gs_sb_ok(&gens) || !gs_sb_ok(&sts)) sb->oom = 1;
    gs_sb_free(&tip);
    gs_sb_free(&gens);
    gs_sb_free(&sts);
    gs_sb_puts(sb, "</tbody></table></div>\n");
    gs_rp_section_close(sb);
}

/* Number of DMA queues a generation has per core (to normalise summed DMA busy time). */
/* DMA queue IDs per core of generation g (results from before the engine x queue model have
 * only core.dma.engines, which then meant queues). */
static double dma_queues(const rep *r, int g)
{
    const cJSON *params = gs_rp_jget(r->cfg[g], "params");
    double q = gs_rp_jnum(gs_rp_jget(params, "core.dma.queues"), "value");
    if (!(q > 0)) q = gs_rp_jnum(gs_rp_jget(params, "core.dma.engines"), "value");
    return q > 0 ? q : 1;
}

/* The DMA engines and queue IDs of each kernel row's largest shape: how many engines its
 * transfers kept busy and how evenly (a transfer over few partitions uses few engines). */
static void dma_table(rep *r)
{
    gs_sb *sb = r->sb;
    gs_sb_puts(sb, "<h3>DMA engines and queues</h3>\n<p>Per generation: the DMA engines the run "
                   "used (of the core's), the busiest engine's busy share of the run, the mean "
                   "over the engines used, and the queue IDs with transfers. Each transfer is "
                   "split over the engines by partition group, so a kernel moving few "
                   "partitions per transfer leaves engines idle.</p>\n<div class=\"scroll\">"
                   "<table class=\"filterable\"><thead><tr><th>kernel/variant dtype</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        gs_sb_puts(sb, "<tr");
        gs_rp_filter_attrs(sb, "", r->rows[k].kernel, "");
        gs_sb_puts(sb, "><th scope=\"row\">");
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = gs_rp_representative(r, k, g);
            const cJSON *dma = j ? gs_rp_jget(j->o, "dma") : NULL;
            const cJSON *busy = gs_rp_jget(dma, "engine_busy_ns");
            const cJSON *qt = gs_rp_jget(dma, "queue_transfers");
            double cores = j ? gs_rp_jnum(j->o, "cores_used") : (double)NAN;
            if (!(cores > 0)) cores = 1;
            if (!j || !cJSON_IsArray(busy) || !(j->time_ns > 0)) {
                gs_sb_puts(sb, "<td class=\"none\">—</td>");
                continue;
            }
            int used = 0, n = 0, queues = 0;
            double max = 0, sum = 0;
            const cJSON *v;
            cJSON_ArrayForEach(v, busy)
            {
                n++;
                if (!cJSON_IsNumber(v) || !(v->valuedouble > 0)) continue;
                used++;
                sum += v->valuedouble;
                if (v->valuedouble > max) max = v->valuedouble;
            }
            cJSON_ArrayForEach(v, qt) queues += cJSON_IsNumber(v) && v->valuedouble > 0;
            const double denom = j->time_ns * cores; /* summed over the cores used */
            gs_sb_printf(sb, "<td>%d of %d engines; busiest %.0f %%, mean %.0f %%; %d queue%s</td>",
                         used, n, 100 * max / denom, used ? 100 * sum / used / denom : 0.0, queues,
                         queues == 1 ? "" : "s");
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
}

void gs_rp_sec_engines(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "engines", "Where the time goes");
    gs_sb_puts(sb,
               "<p>Per engine, the share of the run each engine spent busy or stalled (time "
               "summed over cores, divided by run time × cores; for DMA, busy is the DMA engines' "
               "mean occupancy and its dependency waits are averaged over its queue IDs), for each "
               "kernel row's largest shape. The bottleneck is the engine on "
               "the critical path.</p>\n<p class=\"legend\">");
    for (int s = 0; s < 4; s++)
        gs_sb_printf(sb, "<span><b class=\"sw\" style=\"color:%s\">■</b> %s</span> ",
                     gs_svg_colour(s == 0   ? 3
                                   : s == 1 ? 0
                                   : s == 2 ? 1
                                            : 5),
                     stall_labels[s]);
    gs_sb_puts(sb, "</p>\n<div class=\"scroll\"><table class=\"filterable engines\"><thead><tr>"
                   "<th>kernel/variant dtype</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        gs_sb_puts(sb, "<tr");
        gs_rp_filter_attrs(sb, "", r->rows[k].kernel, "");
        gs_sb_puts(sb, "><th scope=\"row\">");
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = gs_rp_representative(r, k, g);
            const cJSON *eng = j ? gs_rp_jget(j->o, "engines") : NULL;
            double t = j ? j->time_ns : (double)NAN;
            if (!eng || !(t > 0)) {
                gs_sb_puts(sb, "<td class=\"none\">—</td>");
                continue;
            }
            double cores = gs_rp_jnum(j->o, "cores_used");
            if (!(cores > 0)) cores = 1;
            gs_sb_puts(sb, "<td>");
            gs_svg_plot p;
            gs_svg_plot_init(&p, 230, 18 + 14.0 * N_ENGINES + 24);
            p.left = 50;
            p.top = 8;
            p.bottom = 32;
            p.right = 12;
            p.x = (gs_svg_axis){0, 100, 0, "% of run time"};
            p.y = (gs_svg_axis){0, 1, 0, NULL};
            /* the frame without y ticks: engine names label the rows instead */
            gs_sb_printf(sb,
                         "<svg class=\"mini\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                         "height=\"%.0f\" role=\"img\" aria-label=\"engine time\">",
                         p.width, p.height, p.width, p.height);
            double x0 = p.left, x1 = p.width - p.right, y = p.top;
            for (int e = 0; e < N_ENGINES; e++, y += 14) {
                const cJSON *es = gs_rp_jget(eng, engine_names[e]);
                gs_svg_text(sb, x0 - 4, y + 10, "end", NULL, engine_names[e]);
                if (!es) continue;
                /* DMA: busy and port waits are the engine pool's occupancy (per core), the
                 * dependency stalls are summed over its queue IDs */
                const int is_dma = !strcmp(engine_names[e], "dma");
                double acc = 0;
                for (int s = 0; s < 4; s++) {
                    double v = gs_rp_jnum(es, stall_keys[s]);
                    if (!(v > 0)) continue;
                    const double denom =
                        t * cores * (is_dma && (s == 1 || s == 2) ? dma_queues(r, g) : 1);
                    double f = v / denom * 100;
                    if (acc + f > 100) f = 100 - acc;
                    if (f <= 0) continue;
                    gs_sb_printf(sb,
                                 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"11\" "
                                 "fill=\"%s\"><title>%s %s: ",
                                 x0 + acc / 100 * (x1 - x0), y, f / 100 * (x1 - x0),
                                 gs_svg_colour(s == 0   ? 3
                                               : s == 1 ? 0
                                               : s == 2 ? 1
                                                        : 5),
                                 engine_names[e], stall_labels[s]);
                    gs_rp_put_time(sb, v);
                    gs_sb_printf(sb, " (%.1f %%)</title></rect>", v / denom * 100);
                    acc += f;
                }
            }
            gs_sb_printf(sb,
                         "<line class=\"axisl\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                         x0, y + 2, x1, y + 2);
            for (int tk = 0; tk <= 100; tk += 50)
                gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>",
                             x0 + tk / 100.0 * (x1 - x0), y + 14, tk);
            gs_svg_text(sb, (x0 + x1) / 2, y + 27, "middle", "axis", "% of run time");
            gs_sb_puts(sb, "</svg><br>bottleneck: <b>");
            gs_rp_text(sb, *gs_rp_jstr(j->o, "bottleneck") ? gs_rp_jstr(j->o, "bottleneck") : "—");
            gs_sb_puts(sb, "</b> · ");
            gs_rp_text(sb, j->shape);
            gs_sb_puts(sb, "</td>");
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    dma_table(r);
    gs_rp_section_close(sb);
}

/* The job of a kernel row on a generation whose timeline is drawn: the largest shape that has
 * one (timelines come with the functional jobs, not the perf suite's timing-only ones). */
static const rjob *timeline_job(const rep *r, size_t row, int gen)
{
    const rjob *best = NULL;
    for (size_t i = 0; i < r->n_jobs; i++) {
        const rjob *j = &r->jobs[i];
        if (j->row_i != (int)row || j->gen_i != gen ||
            !cJSON_IsObject(gs_rp_jget(j->o, "timeline")))
            continue;
        if (!best || j->size > best->size) best = j;
    }
    return best;
}

static double timeline_total(const rjob *j)
{
    double t = gs_rp_jnum(gs_rp_jget(j->o, "timeline"), "total_ns");
    return t > 0 ? t : j->time_ns;
}

/* axis_ns: the time axis's extent, shared by the generations of one kernel. */
static void timeline_chart(rep *r, const rjob *j, const cJSON *tl, int slice_budget, double axis_ns)
{
    gs_sb *sb = r->sb;
    const cJSON *tracks = gs_rp_jget(tl, "tracks");
    int ntr = cJSON_GetArraySize(tracks),
        shown = ntr < TIMELINE_MAX_TRACKS ? ntr : TIMELINE_MAX_TRACKS;
    double total = gs_rp_jnum(tl, "total_ns");
    if (!(total > 0)) total = j->time_ns;
    if (!(total > 0) || shown == 0) {
        gs_sb_puts(sb, "<p>Empty timeline.</p>");
        return;
    }
    int nslices = 0;
    for (int t = 0; t < shown; t++)
        nslices += cJSON_GetArraySize(gs_rp_jget(cJSON_GetArrayItem(tracks, t), "slices"));
    /* merge consecutive slices so the whole chart stays within its budget */
    int group = nslices > slice_budget ? (nslices + slice_budget - 1) / slice_budget : 1;
    gs_svg_plot p;
    gs_svg_plot_init(&p, 900, 28 + 16.0 * shown + 44);
    p.left = 110;
    p.x = (gs_svg_axis){0, (axis_ns > total ? axis_ns : total) / 1e3, 0, "time (µs)"};
    p.y = (gs_svg_axis){0, 1, 0, NULL};
    gs_svg_axis_nice(&p.x);
    gs_sb_printf(sb,
                 "<svg class=\"gantt\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                 "role=\"img\" aria-label=\"timeline\">",
                 p.width, p.height, p.width, p.height);
    double ybot = p.height - p.bottom;
    for (int i = 0; i <= 5; i++) {
        double v = p.x.lo + (p.x.hi - p.x.lo) * i / 5, x = gs_svg_px(&p, v);
        gs_sb_printf(sb, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                     x, p.top, x, ybot);
        gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, ybot + 14);
        gs_svg_num(sb, v);
        gs_sb_puts(sb, "</text>");
    }
    gs_svg_text(sb, (p.left + p.width - p.right) / 2, p.height - 6, "middle", "axis", "time (µs)");
    for (int t = 0; t < shown; t++) {
        const cJSON *tr = cJSON_GetArrayItem(tracks, t);
        double y = p.top + 16.0 * t;
        const char *name = gs_rp_jstr(tr, "name");
        gs_svg_text(sb, p.left - 6, y + 11, "end", NULL, name);
        /* colour by engine kind: the track name's last word before any queue number */
        int ci = strstr(name, "tensor")   ? 3
                 : strstr(name, "vector") ? 0
                 : strstr(name, "scalar") ? 5
                 : strstr(name, "gpsimd") ? 4
                                          : 1;
        const cJSON *sl = gs_rp_jget(tr, "slices");
        int n = cJSON_GetArraySize(sl);
        gs_sb_printf(sb, "<g fill=\"%s\">", gs_svg_colour(ci));
        for (int i = 0; i < n; i += group) {
            double s0 = INFINITY, s1 = -INFINITY, cnt = 0;
            const char *iname = "", *src = "";
            for (int k = i; k < n && k < i + group; k++) {
                const cJSON *s = cJSON_GetArrayItem(sl, k);
                const cJSON *a = cJSON_GetArrayItem(s, 0), *b = cJSON_GetArrayItem(s, 1);
                if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b)) continue;
                if (a->valuedouble < s0) s0 = a->valuedouble;
                if (b->valuedouble > s1) s1 = b->valuedouble;
                const cJSON *c = cJSON_GetArrayItem(s, 4);
                cnt += cJSON_IsNumber(c) ? c->valuedouble : 1;
                if (k == i) {
                    const cJSON *nm = cJSON_GetArrayItem(s, 2), *sr = cJSON_GetArrayItem(s, 3);
                    iname = cJSON_IsString(nm) ? nm->valuestring : "";
                    src = cJSON_IsString(sr) ? sr->valuestring : "";
                }
            }
            if (!(s1 >= s0)) continue;
            double x0 = gs_svg_px(&p, s0 / 1e3), x1 = gs_svg_px(&p, s1 / 1e3);
            gs_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\"><title>", x0,
                         y, x1 - x0 < 0.5 ? 0.5 : x1 - x0);
            gs_rp_text(sb, iname);
            if (cnt > 1) gs_sb_printf(sb, " (%.0f instructions from here)", cnt);
            gs_sb_puts(sb, " — ");
            gs_rp_text(sb, src);
            gs_sb_printf(sb, "\n%.4g–%.4g µs</title></rect>", s0 / 1e3, s1 / 1e3);
        }
        gs_sb_puts(sb, "</g>");
    }
    gs_sb_puts(sb, "</svg>");
    if (ntr > shown)
        gs_sb_printf(sb, "<p class=\"note\">%d more tracks not drawn (see the trace).</p>",
                     ntr - shown);
}

void gs_rp_sec_timelines(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "timelines", "Timelines");
    gs_sb_puts(sb, "<p>For each kernel row's largest shape with a timeline, engines and DMA "
                   "queues over time (aggregated: a bar may stand for several instructions). The "
                   "generations of one kernel share one time axis, so bar lengths compare. Hover "
                   "a bar for the instruction and the kernel source line.</p>\n"
                   "<p class=\"legend\">");
    static const struct {
        const char *name;
        int colour;
    } kinds[] = {{"tensor", 3}, {"vector", 0}, {"scalar", 5}, {"gpsimd", 4}, {"DMA queues", 1}};
    for (size_t i = 0; i < GS_ARRAY_LEN(kinds); i++)
        gs_sb_printf(sb, "<span><b class=\"sw\" style=\"color:%s\">■</b> %s</span> ",
                     gs_svg_colour(kinds[i].colour), kinds[i].name);
    gs_sb_puts(sb, "</p>\n");
    int ntl = 0;
    for (size_t k = 0; k < r->n_rows; k++)
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = timeline_job(r, k, g);
            if (j && cJSON_IsObject(gs_rp_jget(j->o, "timeline"))) ntl++;
        }
    if (!ntl) gs_sb_puts(sb, "<p>No job in these results carries a timeline.</p>\n");
    int budget = ntl ? TIMELINE_TOTAL_SLICES / ntl : 0;
    if (budget < TIMELINE_MIN_SLICES) budget = TIMELINE_MIN_SLICES;
    int first = 1;
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        int any = 0;
        for (int g = 0; g < r->n_gens && !any; g++) {
            const rjob *j = timeline_job(r, k, g);
            any = j && cJSON_IsObject(gs_rp_jget(j->o, "timeline"));
        }
        if (!any) continue;
        gs_sb_printf(sb, "<details class=\"tl\"%s><summary>", first ? " open" : "");
        first = 0;
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</summary>");
        double axis = 0;
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = timeline_job(r, k, g);
            if (j && timeline_total(j) > axis) axis = timeline_total(j);
        }
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = timeline_job(r, k, g);
            const cJSON *tl = j ? gs_rp_jget(j->o, "timeline") : NULL;
            if (!cJSON_IsObject(tl)) continue;
            gs_sb_puts(sb, "<h4>");
            gs_rp_text(sb, j->id);
            gs_sb_puts(sb, " — ");
            gs_rp_put_time(sb, j->time_ns);
            gs_sb_puts(sb, "</h4>");
            timeline_chart(r, j, tl, budget, axis);
            const char *trace = gs_rp_jstr(j->o, "trace");
            if (*trace) {
                gs_sb_puts(sb, "<p class=\"note\">Full trace: ");
                if (gs_rp_safe_relative_link(trace)) {
                    gs_sb_puts(sb, "<a href=\"");
                    gs_rp_text(sb, trace);
                    gs_sb_puts(sb, "\">");
                    gs_rp_text(sb, trace);
                    gs_sb_puts(sb, "</a>");
                } else {
                    gs_sb_puts(sb, "<code>");
                    gs_rp_text(sb, trace);
                    gs_sb_puts(sb, "</code>");
                }
                gs_sb_puts(sb, " (Perfetto / chrome://tracing JSON)</p>");
            }
        }
        gs_sb_puts(sb, "</details>\n");
    }
    gs_rp_section_close(sb);
}

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
    gs_rp_td_text(sb, gs_rp_jstr(j->o, "bottleneck"));
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
                 "<th>× roofline</th><th>bottleneck</th><th>max abs err / tol</th>"
                 "<th>mismatches</th><th>reason</th></tr></thead><tbody>\n",
                 id);
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
        gs_sb_puts(sb, "<p>No job failed.</p>\n");
    }
    /* compact: per kernel row and generation, the checked jobs and the worst error as a share
     * of its tolerance */
    gs_sb_puts(sb, "<h3>Checked outputs</h3><p>Per kernel and generation: functional jobs that "
                   "passed / checked, and the worst max abs error as a fraction of its tolerance "
                   "(1 = at the tolerance).</p><div class=\"scroll\"><table class=\"sortable "
                   "filterable compact\"><thead><tr><th>kernel/variant dtype</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        int any = 0;
        for (size_t i = 0; i < r->n_jobs && !any; i++)
            any = r->jobs[i].row_i == (int)k &&
                  cJSON_IsTrue(gs_rp_jget(gs_rp_jget(r->jobs[i].o, "error"), "checked"));
        if (!any) continue;
        gs_sb_puts(sb, "<tr");
        gs_rp_filter_attrs(sb, "", r->rows[k].kernel, "");
        gs_sb_puts(sb, "><th scope=\"row\">");
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++) {
            int checked = 0, ok = 0;
            double worst = NAN;
            for (size_t i = 0; i < r->n_jobs; i++) {
                const rjob *j = &r->jobs[i];
                const cJSON *e = gs_rp_jget(j->o, "error");
                if (j->row_i != (int)k || j->gen_i != g || !cJSON_IsTrue(gs_rp_jget(e, "checked")))
                    continue;
                checked++;
                ok += !strcmp(j->status, "pass");
                double f = gs_rp_jnum(e, "max_abs") / gs_rp_jnum(e, "tol_abs");
                if (isfinite(f) && !(f <= worst)) worst = f;
            }
            if (!checked) {
                gs_sb_puts(sb, "<td class=\"none\" data-v=\"\">—</td>");
                continue;
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
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
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
    char id[48];
    for (size_t i = 0; i < r->n_jobs && !gs_rp_budget_hit(r); i++) {
        if (r->jobs[i].diff.verdict != GS_VERDICT_REGRESSION) continue;
        snprintf(id, sizeof id, "base-%zu", i);
        baseline_row(r, &r->jobs[i], NULL, id);
    }
    for (size_t i = 0; i < r->n_bjobs && !gs_rp_budget_hit(r); i++) {
        if (r->bjobs[i].diff.verdict != GS_VERDICT_MISSING) continue;
        snprintf(id, sizeof id, "base-m%zu", i);
        baseline_row(r, NULL, &r->bjobs[i], id);
    }
    for (size_t i = 0; i < r->n_jobs && !gs_rp_budget_hit(r); i++) {
        if (r->jobs[i].diff.verdict != GS_VERDICT_IMPROVEMENT) continue;
        snprintf(id, sizeof id, "base-%zu", i);
        baseline_row(r, &r->jobs[i], NULL, id);
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    gs_rp_section_close(sb);
}

/* Grouped bars: one group per generation, one bar per variant (time in µs). */
void gs_rp_sec_variants(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "variants", "Variants");
    gs_sb_puts(sb, "<p>Kernels with more than one variant (the matmul ladder, fused vs "
                   "unfused): time of each variant at its largest shape, per generation (lower "
                   "is better).</p>\n<div class=\"charts\">");
    int any = 0;
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        /* one chart per kernel+dtype, drawn at the first row of that pair */
        int first = 1, nvar = 0;
        for (size_t e = 0; e < k && first; e++)
            first = !(strcmp(r->rows[e].kernel, r->rows[k].kernel) == 0 &&
                      strcmp(r->rows[e].dtype, r->rows[k].dtype) == 0);
        if (!first) continue;
        size_t vrows[16];
        for (size_t e = k; e < r->n_rows && nvar < 16; e++)
            if (!strcmp(r->rows[e].kernel, r->rows[k].kernel) &&
                !strcmp(r->rows[e].dtype, r->rows[k].dtype))
                vrows[nvar++] = e;
        if (nvar < 2) continue;
        any = 1;
        double ymax = 0;
        for (int v = 0; v < nvar; v++)
            for (int g = 0; g < r->n_gens; g++) {
                const rjob *j = gs_rp_representative(r, vrows[v], g);
                if (j && j->time_ns / 1e3 > ymax) ymax = j->time_ns / 1e3;
            }
        gs_svg_plot p;
        gs_svg_plot_init(&p, 460, 300);
        p.top = 48;
        p.x = (gs_svg_axis){0, 1, 0, "generation"};
        p.y = (gs_svg_axis){0, ymax > 0 ? ymax : 1, 0, "time (µs)"};
        gs_svg_axis_nice(&p.y);
        gs_sb_puts(sb, "<figure><figcaption>");
        gs_rp_text(sb, r->rows[k].kernel);
        gs_sb_puts(sb, " ");
        gs_rp_text(sb, r->rows[k].dtype);
        gs_sb_puts(sb, "</figcaption>");
        /* y axis only: the x positions are categories */
        gs_sb_printf(sb,
                     "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                     "height=\"%.0f\" role=\"img\" aria-label=\"variants\">",
                     p.width, p.height, p.width, p.height);
        for (int i = 0; i <= 5; i++) {
            double v = p.y.lo + (p.y.hi - p.y.lo) * i / 5, y = gs_svg_py(&p, v);
            gs_sb_printf(sb,
                         "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                         p.left, y, p.width - p.right, y, p.left - 4, y + 4);
            gs_svg_num(sb, v);
            gs_sb_puts(sb, "</text>");
        }
        gs_sb_printf(sb, "<g transform=\"translate(14 %.1f) rotate(-90)\">",
                     (p.top + p.height - p.bottom) / 2);
        gs_svg_text(sb, 0, 0, "middle", "axis", "time (µs)");
        gs_sb_puts(sb, "</g>");
        double gw = (p.width - p.left - p.right) / (r->n_gens ? r->n_gens : 1);
        double bw = gw * 0.8 / nvar;
        for (int g = 0; g < r->n_gens; g++) {
            double gx = p.left + gw * g + gw * 0.1;
            gs_svg_text(sb, gx + gw * 0.4, p.height - p.bottom + 14, "middle", NULL, r->gens[g]);
            for (int v = 0; v < nvar; v++) {
                const rjob *j = gs_rp_representative(r, vrows[v], g);
                if (!j || !(j->time_ns > 0)) continue;
                double y = gs_svg_py(&p, j->time_ns / 1e3);
                gs_sb_printf(sb,
                             "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                             "fill=\"%s\"><title>",
                             gx + bw * v, y, bw * 0.9, p.height - p.bottom - y, gs_svg_colour(v));
                gs_rp_text(sb, j->id);
                gs_sb_puts(sb, ": ");
                gs_rp_put_time(sb, j->time_ns);
                gs_sb_puts(sb, "</title></rect>");
            }
        }
        gs_svg_text(sb, (p.left + p.width - p.right) / 2, p.height - 6, "middle", "axis",
                    "generation (bars: variants)");
        const char *labels[16], *colours[16];
        for (int v = 0; v < nvar; v++) {
            labels[v] = r->rows[vrows[v]].variant;
            colours[v] = gs_svg_colour(v);
        }
        gs_svg_plot lp = p;
        lp.top = 24;
        gs_svg_legend(sb, &lp, labels, colours, nvar);
        gs_svg_end(sb);
        gs_sb_puts(sb, "</figure>");
    }
    gs_sb_puts(sb, "</div>\n");
    if (!any) gs_sb_puts(sb, "<p>No kernel in these results has more than one variant.</p>\n");
    gs_rp_section_close(sb);
}
