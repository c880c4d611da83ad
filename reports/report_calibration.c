/* report_calibration.c - the "model vs measured" section: the cases of a calibration file
 * (`gensweep calibrate --json`, schema "gensweep-calibration") with their cited measurements,
 * the model's value, the ratio and the geometric-mean error, and any fitted values. */
#include <math.h>
#include <string.h>

#include "report_int.h"

static void shape_text(gs_sb *sb, const cJSON *shape)
{
    const cJSON *d;
    int first = 1;
    cJSON_ArrayForEach(d, shape)
    {
        if (!cJSON_IsNumber(d)) continue;
        gs_sb_printf(sb, "%s%.0f", first ? "" : "x", d->valuedouble);
        first = 0;
    }
}

void gs_rp_sec_calibration(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "calibration", "Model vs measured");
    if (r->n_calib == 0) {
        gs_sb_puts(sb, "<p>No calibration results given (<code>gensweep calibrate "
                       "calibration/cases.yaml --json FILE</code>, then <code>report "
                       "--calibration FILE</code> or <code>sweep --calibration</code>).</p>\n");
        gs_rp_section_close(sb);
        return;
    }
    for (int c = 0; c < r->n_calib; c++) {
        const cJSON *doc = r->calib[c];
        const cJSON *sources = gs_rp_jget(doc, "sources");
        gs_sb_puts(sb, "<p>Published measurements of the hardware, each rerun as a micro-benchmark "
                       "on the generation it was measured on (case file ");
        gs_rp_text(sb, gs_rp_jstr(doc, "cases_file"));
        gs_sb_puts(sb, "). Geometric-mean error factor exp(mean |ln(model / measured)|): <strong>");
        gs_rp_put_num(sb, gs_rp_jnum(doc, "geomean_error"));
        gs_sb_puts(sb,
                   "</strong> (1 = exact).</p>\n<div class=\"scroll\"><table class=\"sortable\">"
                   "<thead><tr><th>case</th><th>generation</th><th>job</th><th>measure</th>"
                   "<th>measured</th><th>model</th><th>model / measured</th><th>source</th>"
                   "<th>what was measured</th></tr></thead><tbody>\n");
        const cJSON *k;
        cJSON_ArrayForEach(k, gs_rp_jget(doc, "cases"))
        {
            if (gs_rp_budget_hit(r)) break;
            gs_sb_puts(sb, "<tr>");
            gs_rp_td_text(sb, gs_rp_jstr(k, "name"));
            gs_rp_td_text(sb, gs_rp_jstr(k, "generation"));
            gs_sb_puts(sb, "<td>");
            gs_rp_text(sb, gs_rp_jstr(k, "kernel"));
            gs_sb_puts(sb, "/");
            gs_rp_text(sb, gs_rp_jstr(k, "variant"));
            gs_sb_puts(sb, " ");
            shape_text(sb, gs_rp_jget(k, "shape"));
            gs_sb_puts(sb, "</td>");
            gs_rp_td_text(sb, gs_rp_jstr(k, "measure"));
            const double m = gs_rp_jnum(k, "measured_ns");
            if (isnan(m)) {
                const cJSON *em = gs_rp_jget(k, "engines_match");
                gs_sb_printf(
                    sb, "<td>%.0f DMA engines</td><td>%.0f engines</td><td class=\"%s\">%s</td>",
                    gs_rp_jnum(k, "expected_engines"), gs_rp_jnum(k, "model_engines"),
                    cJSON_IsTrue(em) ? "ok" : "bad", cJSON_IsTrue(em) ? "match" : "MISMATCH");
            } else {
                gs_rp_td_time(sb, m);
                gs_rp_td_time(sb, gs_rp_jnum(k, "model_ns"));
                gs_rp_td_num(sb, gs_rp_jnum(k, "ratio"));
            }
            const char *src = gs_rp_jstr(k, "source");
            const char *url = gs_rp_jstr(sources, src);
            gs_sb_puts(sb, "<td>");
            if (url[0]) {
                gs_sb_puts(sb, "<span title=\"");
                gs_rp_text(sb, url);
                gs_sb_puts(sb, "\">");
                gs_rp_text(sb, src);
                gs_sb_puts(sb, "</span>");
            } else {
                gs_rp_text(sb, src);
            }
            gs_sb_puts(sb, "</td>");
            gs_rp_td_text(sb, gs_rp_jstr(k, "note"));
            gs_sb_puts(sb, "</tr>\n");
        }
        gs_sb_puts(sb, "</tbody></table></div>\n");
        const cJSON *fits = gs_rp_jget(doc, "fit");
        if (cJSON_GetArraySize(fits) > 0) {
            gs_sb_puts(sb, "<p>Fitted to these cases (per generation, only values marked as "
                           "assumptions):</p>\n<ul>");
            const cJSON *f;
            cJSON_ArrayForEach(f, fits)
            {
                gs_sb_puts(sb, "<li>");
                gs_rp_text(sb, gs_rp_jstr(f, "generation"));
                gs_sb_puts(sb, " <code>");
                gs_rp_text(sb, gs_rp_jstr(f, "key"));
                gs_sb_puts(sb, "</code>: ");
                if (*gs_rp_jstr(f, "skipped")) {
                    gs_sb_puts(sb, "not fitted (");
                    gs_rp_text(sb, gs_rp_jstr(f, "skipped"));
                    gs_sb_puts(sb, ")");
                } else {
                    gs_rp_put_num(sb, gs_rp_jnum(f, "before"));
                    gs_sb_puts(sb, " &rarr; ");
                    gs_rp_put_num(sb, gs_rp_jnum(f, "after"));
                    gs_sb_puts(sb, " ");
                    gs_rp_text(sb, gs_rp_jstr(f, "unit"));
                }
                gs_sb_puts(sb, "</li>");
            }
            gs_sb_puts(sb, "</ul>\n");
        }
    }
    gs_rp_section_close(sb);
}
