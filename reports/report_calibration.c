/* report_calibration.c - the "model vs measured" section: the cases of a calibration file
 * (`gensweep calibrate --json`, schema "gensweep-calibration") with their cited measurements,
 * the model's value, the ratio and the geometric-mean error, and any fitted values. */
#include <math.h>
#include <stdio.h>
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

/* One role's summary: its timed cases, geomean error factor and worst case (the JSON's
 * "<role>_cases", "geomean_error_<role>", "worst_<role>"), and for the validation cases the
 * committed target. */
static void role_line(gs_sb *sb, const cJSON *doc, const char *role, const char *what)
{
    char key[64];
    snprintf(key, sizeof key, "%s_cases", role);
    const double n = gs_rp_jnum(doc, key);
    snprintf(key, sizeof key, "geomean_error_%s", role);
    const double g = gs_rp_jnum(doc, key);
    snprintf(key, sizeof key, "worst_%s", role);
    const cJSON *w = gs_rp_jget(doc, key);
    gs_sb_printf(sb, "<p>%s: %.0f timed", what, isnan(n) ? 0.0 : n);
    if (isnan(g) || !cJSON_IsObject(w)) {
        gs_sb_puts(sb, ", no error factor.</p>\n");
        return;
    }
    gs_sb_puts(sb, ", geometric-mean error factor <strong>");
    gs_rp_put_num(sb, g);
    gs_sb_puts(sb, "</strong>, worst ");
    gs_rp_text(sb, gs_rp_jstr(w, "name"));
    gs_sb_puts(sb, " (model / measured ");
    gs_rp_put_num(sb, gs_rp_jnum(w, "ratio"));
    gs_sb_puts(sb, ")");
    const cJSON *ok = gs_rp_jget(doc, "target_ok");
    if (!strcmp(role, "validate") && ok) {
        gs_sb_puts(sb, "; committed target &le; ");
        gs_rp_put_num(sb, gs_rp_jnum(doc, "target_validate_geomean_error"));
        gs_sb_printf(sb, ": <span class=\"%s\">%s</span>", cJSON_IsTrue(ok) ? "ok" : "bad",
                     cJSON_IsTrue(ok) ? "met" : "NOT MET");
    }
    gs_sb_puts(sb, ".</p>\n");
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
        gs_sb_puts(sb, "). Geometric-mean error factor exp(mean |ln(model / measured)|), 1 = "
                       "exact, over all timed cases: <strong>");
        gs_rp_put_num(sb, gs_rp_jnum(doc, "geomean_error"));
        gs_sb_puts(sb, "</strong>.</p>\n");
        role_line(sb, doc, "fit", "Fit cases (the only ones <code>calibrate --fit</code> uses)");
        role_line(sb, doc, "validate",
                  "Validation cases (measurements the model was never fitted to)");
        gs_sb_puts(sb, "<div class=\"scroll\"><table class=\"sortable\">"
                       "<thead><tr><th>case</th><th>role</th><th>generation</th><th>job</th>"
                       "<th>measure</th>"
                       "<th>measured</th><th>model</th><th>model / measured</th><th>source</th>"
                       "<th>what was measured</th></tr></thead><tbody>\n");
        const cJSON *k;
        cJSON_ArrayForEach(k, gs_rp_jget(doc, "cases"))
        {
            if (gs_rp_budget_hit(r)) break;
            gs_sb_puts(sb, "<tr>");
            gs_rp_td_text(sb, gs_rp_jstr(k, "name"));
            gs_rp_td_text(sb, gs_rp_jstr(k, "role"));
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
