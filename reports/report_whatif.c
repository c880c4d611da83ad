/*
 * report_whatif.c - what-if sensitivity curves, tuning gains and parameter attribution.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speedup.h"
#include "svg.h"

/* The most sensitive curves drawn per what-if chart (all are in the table). */
#define WHATIF_MAX_CURVES 7 /* one distinct colour each (svg.c's palette) */

/* Display scale of a parameter unit: values are divided by *div and labelled with the unit
 * returned (bytes as MiB, bandwidth as GB/s, clocks as GHz). */
static const char *display_unit(const char *unit, double *div)
{
    *div = 1;
    if (!strcmp(unit, "B")) {
        *div = 1024.0 * 1024.0;
        return "MiB";
    }
    if (!strcmp(unit, "B/ns")) return "GB/s"; /* 1 B/ns = 1 GB/s */
    if (!strcmp(unit, "B/s")) {
        *div = 1e9;
        return "GB/s";
    }
    if (!strcmp(unit, "Hz")) {
        *div = 1e9;
        return "GHz";
    }
    return *unit ? unit : "value";
}

/* Per-step sensitivities of one what-if job as text ("-0.95, -0.10, 0.00"), with the flags. */
static void steps_cell(gs_sb *sb, const cJSON *w, const cJSON *job, int *flag_out)
{
    const cJSON *vals = gs_rp_jget(w, "values"), *ts = gs_rp_jget(job, "time_ns");
    double v[GS_SPEEDUP_MAX_STEPS + 1], t[GS_SPEEDUP_MAX_STEPS + 1], st[GS_SPEEDUP_MAX_STEPS];
    int n = 0;
    for (int i = 0; i < cJSON_GetArraySize(vals) && n <= GS_SPEEDUP_MAX_STEPS; i++, n++) {
        v[n] = gs_rp_jnum(cJSON_GetArrayItem(vals, i), "value");
        const cJSON *x = cJSON_GetArrayItem(ts, i);
        t[n] = cJSON_IsNumber(x) ? x->valuedouble : (double)NAN;
    }
    int nonmono = 0, inv = 0;
    int ns = gs_sensitivity_steps(v, t, n, gs_param_direction(gs_rp_jstr(w, "unit")), st, &nonmono,
                                  &inv);
    gs_sb_puts(sb, "<td class=\"n\">");
    for (int i = 0; i < ns; i++)
        gs_sb_printf(sb, "%s%.2f", i ? ", " : "", st[i]);
    if (ns <= 0) gs_sb_puts(sb, "—");
    gs_sb_puts(sb, "</td><td>");
    if (inv)
        gs_sb_printf(sb, "<b class=\"warn\">inversion</b> (%d step%s the wrong way)", inv,
                     inv > 1 ? "s" : "");
    if (nonmono) gs_sb_printf(sb, "%s<b class=\"warn\">non-monotonic</b>", inv ? "; " : "");
    gs_sb_puts(sb, "</td>");
    if (flag_out) *flag_out = inv || nonmono;
}

/*
 * What-if and tuning come from their own files (results/RESULTS.md: whatif.json with schema
 * "gensweep-whatif", tuning files with "gensweep-tuning"), passed with --whatif / --tuning.
 */
static void whatif_chart(rep *r, const cJSON *w)
{
    gs_sb *sb = r->sb;
    const cJSON *vals = gs_rp_jget(w, "values"), *jobs = gs_rp_jget(w, "jobs");
    int nv = cJSON_GetArraySize(vals);
    double vmin = INFINITY, vmax = 0, tmin = INFINITY, tmax = 0;
    for (int i = 0; i < nv; i++) {
        double v = gs_rp_jnum(cJSON_GetArrayItem(vals, i), "value");
        if (v > 0 && v < vmin) vmin = v;
        if (v > vmax) vmax = v;
    }
    /* pick the curves with the largest |sensitivity| (ties: file order) */
    const cJSON *pick[WHATIF_MAX_CURVES];
    int np = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        double s = fabs(gs_rp_jnum(j, "sensitivity"));
        if (!isfinite(s)) s = -1;
        if (np < WHATIF_MAX_CURVES) {
            pick[np++] = j;
        } else {
            int lo = 0;
            for (int k = 1; k < np; k++)
                if (fabs(gs_rp_jnum(pick[k], "sensitivity")) <
                    fabs(gs_rp_jnum(pick[lo], "sensitivity")))
                    lo = k;
            double sl = fabs(gs_rp_jnum(pick[lo], "sensitivity"));
            if (!isfinite(sl) || s > sl) pick[lo] = j;
        }
    }
    for (int k = 0; k < np; k++) {
        const cJSON *t;
        cJSON_ArrayForEach(t, gs_rp_jget(pick[k], "time_ns"))
        {
            if (!cJSON_IsNumber(t) || !(t->valuedouble > 0)) continue;
            if (t->valuedouble < tmin) tmin = t->valuedouble;
            if (t->valuedouble > tmax) tmax = t->valuedouble;
        }
    }
    gs_sb_puts(sb, "<figure><figcaption>");
    gs_rp_text(sb, gs_rp_jstr(w, "config"));
    gs_sb_puts(sb, ": <code>");
    gs_rp_text(sb, gs_rp_jstr(w, "param"));
    gs_sb_puts(sb, "</code></figcaption>");
    if (!(vmax > 0) || !(tmax > 0)) {
        gs_sb_puts(sb, "<p>No usable points.</p></figure>");
        return;
    }
    double div;
    const char *du = display_unit(gs_rp_jstr(w, "unit"), &div);
    char xl[160];
    snprintf(xl, sizeof xl, "%.100s (%.40s)", gs_rp_jstr(w, "param"), du);
    vmin /= div;
    vmax /= div;
    gs_svg_plot p;
    gs_svg_plot_init(&p, 460, 300);
    p.top = 48;
    p.x = (gs_svg_axis){vmin, vmax, 1, xl};
    p.y = (gs_svg_axis){tmin / 1e3 / 1.5, tmax / 1e3 * 1.5, 1, "time (µs)"};
    gs_svg_axis_nice(&p.x);
    gs_svg_axis_nice(&p.y);
    gs_svg_begin(sb, &p, "what-if sensitivity");
    double base = gs_rp_jnum(w, "base_value") / div;
    if (base > 0)
        gs_sb_printf(sb,
                     "<line class=\"axisl\" stroke-dasharray=\"3 3\" x1=\"%.1f\" y1=\"%.1f\" "
                     "x2=\"%.1f\" y2=\"%.1f\"><title>configured value</title></line>",
                     gs_svg_px(&p, base), p.top, gs_svg_px(&p, base), p.height - p.bottom);
    const char *colours[WHATIF_MAX_CURVES];
    for (int k = 0; k < np; k++) {
        const cJSON *ts = gs_rp_jget(pick[k], "time_ns");
        gs_sb_printf(sb, "<g class=\"curve\" stroke=\"%s\" fill=\"%s\"><polyline points=\"",
                     gs_svg_colour(k), gs_svg_colour(k));
        for (int i = 0; i < nv; i++) {
            double v = gs_rp_jnum(cJSON_GetArrayItem(vals, i), "value") / div;
            const cJSON *t = cJSON_GetArrayItem(ts, i);
            if (!(v > 0) || !cJSON_IsNumber(t) || !(t->valuedouble > 0)) continue;
            gs_sb_printf(sb, "%.1f,%.1f ", gs_svg_px(&p, v), gs_svg_py(&p, t->valuedouble / 1e3));
        }
        gs_sb_puts(sb, "\"/>");
        for (int i = 0; i < nv; i++) {
            double v = gs_rp_jnum(cJSON_GetArrayItem(vals, i), "value") / div;
            const cJSON *t = cJSON_GetArrayItem(ts, i);
            if (!(v > 0) || !cJSON_IsNumber(t) || !(t->valuedouble > 0)) continue;
            gs_sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>", gs_svg_px(&p, v),
                         gs_svg_py(&p, t->valuedouble / 1e3));
            gs_rp_text(sb, gs_rp_jstr(pick[k], "id"));
            gs_sb_puts(sb, " at ");
            gs_rp_text(sb, gs_rp_jstr(cJSON_GetArrayItem(vals, i), "label"));
            gs_sb_puts(sb, ": ");
            gs_rp_put_time(sb, t->valuedouble);
            gs_sb_puts(sb, "</title></circle>");
        }
        gs_sb_puts(sb, "</g>");
        colours[k] = gs_svg_colour(k);
    }
    gs_svg_end(sb);
    /* the legend: every curve, as text under the chart (labels never overlap the curves) */
    gs_sb_puts(sb, "<ul class=\"ceils\">");
    for (int k = 0; k < np; k++) {
        gs_sb_printf(sb, "<li><b style=\"color:%s\">━</b> ", colours[k]);
        gs_rp_text(sb, gs_rp_jstr(pick[k], "id"));
        gs_sb_printf(sb, " (sensitivity %.2f)</li>", gs_rp_jnum(pick[k], "sensitivity"));
    }
    gs_sb_puts(sb, "</ul></figure>");
}

/* A cell of a 2-D what-if grid: time at (a, b), or NAN. */
static double grid_t(const cJSON *job, int a, int b)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(gs_rp_jget(job, "time_grid"), a), b);
    return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : (double)NAN;
}

/* Index of the unchanged value of a 2-D axis: labelled 1x/x1, else the configured value. */
static int grid_base(const cJSON *w, const char *values, const char *base_key)
{
    const cJSON *vals = gs_rp_jget(w, values);
    int n = cJSON_GetArraySize(vals);
    for (int i = 0; i < n; i++) {
        const char *l = gs_rp_jstr(cJSON_GetArrayItem(vals, i), "label");
        if (!strcmp(l, "1x") || !strcmp(l, "x1")) return i;
    }
    for (int i = 0; i < n; i++)
        if (gs_rp_jnum(cJSON_GetArrayItem(vals, i), "value") == gs_rp_jnum(w, base_key)) return i;
    return 0;
}

/* One heatmap table: speedup of each cell over the unchanged cell (geomean over the jobs given,
 * each needing a time in both cells). */
static void grid_table(rep *r, const cJSON *w, const cJSON *const *jobs, int nj)
{
    gs_sb *sb = r->sb;
    const cJSON *v1 = gs_rp_jget(w, "values"), *v2 = gs_rp_jget(w, "values2");
    int n1 = cJSON_GetArraySize(v1), n2 = cJSON_GetArraySize(v2);
    int b1 = grid_base(w, "values", "base_value"), b2 = grid_base(w, "values2", "base_value2");
    gs_sb_puts(sb, "<table class=\"heat grid\"><thead><tr><th><code>");
    gs_rp_text(sb, gs_rp_jstr(w, "param"));
    gs_sb_puts(sb, "</code> ↓ <code>");
    gs_rp_text(sb, gs_rp_jstr(w, "param2"));
    gs_sb_puts(sb, "</code> →</th>");
    for (int b = 0; b < n2; b++) {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, gs_rp_jstr(cJSON_GetArrayItem(v2, b), "label"));
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>");
    for (int a = 0; a < n1; a++) {
        gs_sb_puts(sb, "<tr><th scope=\"row\">");
        gs_rp_text(sb, gs_rp_jstr(cJSON_GetArrayItem(v1, a), "label"));
        gs_sb_puts(sb, "</th>");
        for (int b = 0; b < n2; b++) {
            double ls = 0;
            int n = 0;
            for (int k = 0; k < nj; k++) {
                double t0 = grid_t(jobs[k], b1, b2), t = grid_t(jobs[k], a, b);
                if (t0 > 0 && t > 0) {
                    ls += log(t0 / t);
                    n++;
                }
            }
            double s = n ? exp(ls / n) : (double)NAN;
            gs_sb_puts(sb, "<td class=\"n\"");
            if (n) gs_rp_speedup_style(sb, s);
            if (a == b1 && b == b2) gs_sb_puts(sb, " title=\"unchanged\"");
            gs_sb_puts(sb, ">");
            if (n)
                gs_sb_printf(sb, "%s%.3g×%s", a == b1 && b == b2 ? "<b>" : "", s,
                             a == b1 && b == b2 ? "</b>" : "");
            else
                gs_sb_puts(sb, "—");
            gs_sb_puts(sb, "</td>");
        }
        gs_sb_puts(sb, "</tr>");
    }
    gs_sb_puts(sb, "</tbody></table>");
}

/* Most per-job grids drawn for a 2-D what-if (the rest are in whatif.json). */
#define WHATIF_GRID_JOBS 12

static void whatif_grid(rep *r, const cJSON *w)
{
    gs_sb *sb = r->sb;
    const cJSON *jobs = gs_rp_jget(w, "jobs");
    int nj = cJSON_GetArraySize(jobs);
    const cJSON **all = gs_calloc(nj ? (size_t)nj : 1, sizeof *all);
    double *range = gs_calloc(nj ? (size_t)nj : 1, sizeof *range);
    if (!all || !range) {
        gs_free(all);
        gs_free(range);
        sb->oom = 1;
        return;
    }
    int n = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        double lo = INFINITY, hi = 0;
        const cJSON *row, *c;
        cJSON_ArrayForEach(row, gs_rp_jget(j, "time_grid")) cJSON_ArrayForEach(c, row)
        {
            if (!cJSON_IsNumber(c) || !(c->valuedouble > 0)) continue;
            lo = GS_MIN(lo, c->valuedouble);
            hi = GS_MAX(hi, c->valuedouble);
        }
        all[n] = j;
        range[n++] = hi > 0 ? hi / lo : 1;
    }
    gs_sb_puts(sb, "<figure class=\"grid2\"><figcaption>");
    gs_rp_text(sb, gs_rp_jstr(w, "config"));
    gs_sb_printf(sb, ": speedup over the unchanged values (bold), geomean of %d jobs</figcaption>",
                 n);
    grid_table(r, w, all, n);
    /* per job: the widest-ranging first */
    for (int i = 0; i < n; i++)
        for (int k = i + 1; k < n; k++)
            if (range[k] > range[i]) {
                double tr = range[i];
                const cJSON *tj = all[i];
                range[i] = range[k];
                all[i] = all[k];
                range[k] = tr;
                all[k] = tj;
            }
    gs_sb_printf(sb, "<details><summary>Per job (the %d with the widest range)</summary>",
                 GS_MIN(n, WHATIF_GRID_JOBS));
    for (int i = 0; i < n && i < WHATIF_GRID_JOBS; i++) {
        gs_sb_puts(sb, "<h4>");
        gs_rp_text(sb, gs_rp_jstr(all[i], "id"));
        gs_sb_printf(sb, " <span class=\"note\">(%.3g× from fastest to slowest)</span></h4>",
                     range[i]);
        grid_table(r, w, &all[i], 1);
    }
    gs_sb_puts(sb, "</details></figure>");
    gs_free(all);
    gs_free(range);
}

/* attribute.json (`gensweep attribute`): each parameter's share of a generation pair's
 * speedup, overall and per job. */
static void attribution(rep *r, const cJSON *at)
{
    gs_sb *sb = r->sb;
    const cJSON *ps = gs_rp_jget(at, "params");
    gs_sb_puts(sb, "<h4>");
    gs_rp_text(sb, gs_rp_jstr(at, "to"));
    gs_sb_puts(sb, " vs ");
    gs_rp_text(sb, gs_rp_jstr(at, "from"));
    gs_sb_printf(sb, ": %.3g× with every numeric change (%g jobs); ",
                 gs_rp_jnum(gs_rp_jget(at, "all"), "geomean"),
                 gs_rp_jnum(gs_rp_jget(at, "all"), "jobs"));
    gs_rp_text(sb, gs_rp_jstr(at, "to"));
    gs_sb_printf(sb, " itself %.3g×</h4>", gs_rp_jnum(gs_rp_jget(at, "to_all"), "geomean"));
    gs_sb_puts(sb, "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>parameter</th>"
                   "<th>from</th><th>to</th><th>speedup alone (geomean)</th><th>share of the "
                   "speedup</th></tr></thead><tbody>");
    const cJSON *q;
    cJSON_ArrayForEach(q, ps)
    {
        gs_sb_puts(sb, "<tr><td><code>");
        gs_rp_text(sb, gs_rp_jstr(q, "key"));
        gs_sb_puts(sb, "</code>");
        const cJSON *keys = gs_rp_jget(q, "keys");
        if (cJSON_IsTrue(gs_rp_jget(q, "group"))) {
            /* a group: its keys with their values in their units */
            const cJSON *k;
            cJSON_ArrayForEach(k, keys)
            {
                gs_sb_puts(sb, "<br><span class=\"note\"><code>");
                gs_rp_text(sb, gs_rp_jstr(k, "key"));
                gs_sb_puts(sb, "</code> ");
                gs_rp_text(sb, gs_rp_jstr(k, "from_text"));
                gs_sb_puts(sb, " → ");
                gs_rp_text(sb, gs_rp_jstr(k, "to_text"));
                gs_sb_puts(sb, "</span>");
            }
        }
        gs_sb_puts(sb, "</td><td class=\"n\">");
        if (cJSON_GetArraySize(keys) > 1)
            gs_sb_printf(sb, "%d keys", cJSON_GetArraySize(keys));
        else if (*gs_rp_jstr(q, "from_text"))
            gs_rp_text(sb, gs_rp_jstr(q, "from_text"));
        else
            gs_rp_put_param(sb, gs_rp_jnum(q, "from"), gs_rp_jstr(q, "unit"));
        gs_sb_puts(sb, "</td><td class=\"n\">");
        if (cJSON_GetArraySize(keys) > 1)
            gs_sb_puts(sb, "(above)");
        else if (*gs_rp_jstr(q, "to_text"))
            gs_rp_text(sb, gs_rp_jstr(q, "to_text"));
        else
            gs_rp_put_param(sb, gs_rp_jnum(q, "to"), gs_rp_jstr(q, "unit"));
        gs_sb_puts(sb, "</td>");
        double g = gs_rp_jnum(q, "geomean"), sh = gs_rp_jnum(q, "share");
        const char *na = *gs_rp_jstr(q, "na") ? gs_rp_jstr(q, "na") : "not formed";
        gs_sb_puts(sb, "<td class=\"n\"");
        gs_rp_put_dv(sb, g);
        if (isfinite(g)) {
            gs_sb_printf(sb, ">%.4g×</td>", g);
        } else {
            gs_sb_puts(sb, ">— <span class=\"note\">(");
            gs_rp_text(sb, na);
            gs_sb_puts(sb, ")</span></td>");
        }
        gs_sb_puts(sb, "<td class=\"n\"");
        gs_rp_put_dv(sb, sh);
        if (isfinite(sh)) {
            gs_sb_printf(sb, ">%.1f %%</td></tr>", 100 * sh);
        } else {
            gs_sb_puts(sb, ">— <span class=\"note\">(");
            gs_rp_text(sb, na);
            gs_sb_puts(sb, ")</span></td></tr>");
        }
    }
    double inter = gs_rp_jnum(at, "interaction_share");
    gs_sb_puts(sb, "<tr><td>interactions (the parts do not add up)</td><td></td><td></td><td></td>"
                   "<td class=\"n\"");
    gs_rp_put_dv(sb, inter);
    if (isfinite(inter))
        gs_sb_printf(sb, ">%.1f %%</td></tr>", 100 * inter);
    else
        gs_sb_puts(sb, ">—</td></tr>");
    /* the interactions broken down by pair: the joint swap beyond the two alone */
    const cJSON *pr;
    cJSON_ArrayForEach(pr, gs_rp_jget(at, "pairs"))
    {
        gs_sb_puts(sb, "<tr><td>&nbsp;&nbsp;<code>");
        gs_rp_text(sb, gs_rp_jstr(pr, "a"));
        gs_sb_puts(sb, "</code> + <code>");
        gs_rp_text(sb, gs_rp_jstr(pr, "b"));
        gs_sb_puts(sb, "</code> together</td><td></td><td></td>");
        double in = gs_rp_jnum(pr, "interaction"), sh = gs_rp_jnum(pr, "share");
        gs_sb_puts(sb, "<td class=\"n\"");
        gs_rp_put_dv(sb, in);
        if (isfinite(in))
            gs_sb_printf(sb, ">%.4g× beyond alone</td>", in);
        else
            gs_sb_puts(sb, ">—</td>");
        gs_sb_puts(sb, "<td class=\"n\"");
        gs_rp_put_dv(sb, sh);
        if (isfinite(sh)) {
            gs_sb_printf(sb, ">%.1f %%</td></tr>", 100 * sh);
        } else {
            gs_sb_puts(sb, ">— <span class=\"note\">(");
            gs_rp_text(sb, *gs_rp_jstr(pr, "na") ? gs_rp_jstr(pr, "na") : "not formed");
            gs_sb_puts(sb, ")</span></td></tr>");
        }
    }
    if (cJSON_GetArraySize(gs_rp_jget(at, "pairs"))) {
        double res = gs_rp_jnum(at, "residual_share");
        gs_sb_puts(sb, "<tr><td>&nbsp;&nbsp;the rest (not pairwise among these)</td><td></td>"
                       "<td></td><td></td><td class=\"n\"");
        gs_rp_put_dv(sb, res);
        if (isfinite(res))
            gs_sb_printf(sb, ">%.1f %%</td></tr>", 100 * res);
        else
            gs_sb_puts(sb, ">—</td></tr>");
    }
    gs_sb_puts(sb, "</tbody></table></div>");
    /* per job: the all-changes speedup and the parameter explaining most of it */
    gs_sb_puts(sb, "<details><summary>Per job</summary><div class=\"scroll\"><table "
                   "class=\"sortable filterable\"><thead><tr><th>job</th><th>every change</th>"
                   "<th>");
    gs_rp_text(sb, gs_rp_jstr(at, "to"));
    gs_sb_puts(sb, "</th><th>explained most by</th><th>share</th><th>interactions</th></tr>"
                   "</thead><tbody>\n");
    const cJSON *j;
    cJSON_ArrayForEach(j, gs_rp_jget(at, "jobs"))
    {
        if (gs_rp_budget_hit(r)) break;
        int best = -1, i = 0;
        double bs = -INFINITY;
        const cJSON *sh;
        cJSON_ArrayForEach(sh, gs_rp_jget(j, "share"))
        {
            if (cJSON_IsNumber(sh) && sh->valuedouble > bs) {
                bs = sh->valuedouble;
                best = i;
            }
            i++;
        }
        gs_sb_puts(sb, "<tr");
        gs_rp_filter_attrs(sb, "", gs_rp_jstr(j, "kernel"), "");
        gs_sb_puts(sb, ">");
        gs_rp_td_text(sb, gs_rp_jstr(j, "key"));
        gs_rp_td_num(sb, gs_rp_jnum(j, "speedup_all"));
        gs_rp_td_num(sb, gs_rp_jnum(j, "speedup_to"));
        gs_sb_puts(sb, "<td><code>");
        gs_rp_text(sb, best >= 0 ? gs_rp_jstr(cJSON_GetArrayItem(ps, best), "key") : "—");
        gs_sb_puts(sb, "</code></td>");
        gs_rp_td_num(sb, best >= 0 ? 100 * bs : (double)NAN);
        double in = gs_rp_jnum(j, "interaction_share");
        gs_rp_td_num(sb, isfinite(in) ? 100 * in : (double)NAN);
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div></details>");
}

void gs_rp_sec_whatif(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "whatif", "What-if and tuning");
    if (r->n_attrib) {
        gs_sb_puts(sb, "<h3 id=\"attribution\">Attribution</h3><p>From <code>gensweep "
                       "attribute</code>: the suite run on the first config with each differing "
                       "parameter set to the second config's value alone, and with all of them. "
                       "Share = ln(speedup alone) / ln(speedup with every change), geometric "
                       "means over the jobs; the interactions are what the shares do not add up "
                       "to.</p>");
        for (int i = 0; i < r->n_attrib; i++)
            attribution(r, r->attrib[i]);
    }
    if (!r->n_whatif && !r->n_tuning && !r->n_attrib)
        gs_sb_puts(sb, "<p>No what-if or tuning results given (<code>gensweep report RESULTS.json "
                       "--whatif WHATIF.json --tuning configs/tuning/GEN.json</code>).</p>\n");
    if (r->n_whatif) {
        gs_sb_puts(sb, "<h3>Sensitivity</h3><p>Each kernel's time as one parameter varies (the "
                       "dashed line is the configured value; the most sensitive kernels are "
                       "drawn). Sensitivity = d ln(time) / d ln(value): −1 fully bound by the "
                       "parameter, 0 insensitive; end to end from the smallest to the largest "
                       "value, and per step between neighbouring values, so a knee shows. "
                       "<b>Inversion</b>: a step where more of a resource (bytes, bandwidth, "
                       "clock, count) made the job slower, or more of a cost (latency, cycles) "
                       "faster, by over 1 %; <b>non-monotonic</b>: time both rises and "
                       "falls.</p><div class=\"charts\">");
        for (int i = 0; i < r->n_whatif; i++)
            if (gs_rp_jget(r->whatif[i], "param2"))
                whatif_grid(r, r->whatif[i]);
            else
                whatif_chart(r, r->whatif[i]);
        gs_sb_puts(sb, "</div>\n<div class=\"scroll\"><table class=\"sortable filterable\"><thead>"
                       "<tr><th>config</th><th>parameter</th><th>job</th><th>sensitivity</th>"
                       "<th>per step</th><th>flags</th></tr></thead><tbody>\n");
        for (int i = 0; i < r->n_whatif; i++) {
            const cJSON *j;
            cJSON_ArrayForEach(j, gs_rp_jget(r->whatif[i], "jobs"))
            {
                if (gs_rp_budget_hit(r)) break;
                gs_sb_puts(sb, "<tr");
                gs_rp_filter_attrs(sb, gs_rp_jstr(r->whatif[i], "config"), gs_rp_jstr(j, "kernel"),
                                   "");
                gs_sb_puts(sb, ">");
                gs_rp_td_text(sb, gs_rp_jstr(r->whatif[i], "config"));
                gs_sb_puts(sb, "<td>");
                gs_rp_text(sb, gs_rp_jstr(r->whatif[i], "param"));
                if (gs_rp_jget(r->whatif[i], "param2")) {
                    gs_sb_puts(sb, " × ");
                    gs_rp_text(sb, gs_rp_jstr(r->whatif[i], "param2"));
                }
                gs_sb_puts(sb, "</td>");
                gs_rp_td_text(sb, gs_rp_jstr(j, "id"));
                gs_rp_td_num(sb, gs_rp_jnum(j, "sensitivity"));
                if (gs_rp_jget(r->whatif[i], "param2")) { /* 2-D: the other parameter's */
                    gs_sb_puts(sb, "<td colspan=\"2\">");
                    gs_rp_text(sb, gs_rp_jstr(r->whatif[i], "param2"));
                    gs_sb_printf(sb, ": %.3g</td>", gs_rp_jnum(j, "sensitivity2"));
                } else {
                    steps_cell(sb, r->whatif[i], j, NULL);
                }
                gs_sb_puts(sb, "</tr>\n");
            }
        }
        gs_sb_puts(sb, "</tbody></table></div>\n");
    }
    if (r->n_tuning) {
        gs_sb_puts(sb, "<h3>Tuning gains</h3><div class=\"scroll\"><table class=\"sortable "
                       "filterable\"><thead><tr><th>generation</th><th>kernel/variant</th>"
                       "<th>shape</th><th>default</th><th>tuned</th><th>speedup</th>"
                       "<th>best parameters</th></tr></thead><tbody>\n");
        for (int i = 0; i < r->n_tuning; i++) {
            const char *gen = gs_rp_jstr(r->tuning[i], "generation");
            const cJSON *t;
            cJSON_ArrayForEach(t, gs_rp_jget(r->tuning[i], "kernels"))
            {
                if (gs_rp_budget_hit(r)) break;
                double d = gs_rp_jnum(t, "default_ns"), b = gs_rp_jnum(t, "best_ns");
                gs_sb_puts(sb, "<tr");
                gs_rp_filter_attrs(sb, gen, t->string, "");
                gs_sb_puts(sb, ">");
                gs_rp_td_text(sb, gen);
                gs_sb_puts(sb, "<td>");
                gs_rp_text(sb, t->string);
                gs_sb_puts(sb, "/");
                gs_rp_text(sb, gs_rp_jstr(t, "variant"));
                gs_sb_puts(sb, "</td><td>");
                const cJSON *d2;
                int first = 1;
                cJSON_ArrayForEach(d2, gs_rp_jget(t, "shape"))
                {
                    gs_sb_printf(sb, "%s%.0f", first ? "" : "x",
                                 cJSON_IsNumber(d2) ? d2->valuedouble : 0);
                    first = 0;
                }
                gs_sb_puts(sb, "</td>");
                gs_rp_td_time(sb, d);
                gs_rp_td_time(sb, b);
                double gain = d > 0 && b > 0 ? d / b : (double)NAN;
                gs_sb_puts(sb, "<td class=\"n\"");
                gs_rp_put_dv(sb, gain);
                if (isfinite(gain))
                    gs_sb_printf(sb, ">%.3g×</td>", gain);
                else
                    gs_sb_puts(sb, ">—</td>");
                gs_sb_puts(sb, "<td>");
                const cJSON *bp;
                first = 1;
                cJSON_ArrayForEach(bp, gs_rp_jget(t, "params"))
                {
                    if (!first) gs_sb_puts(sb, ", ");
                    gs_rp_text(sb, bp->string);
                    gs_sb_puts(sb, "=");
                    if (cJSON_IsNumber(bp))
                        gs_sb_printf(sb, "%g", bp->valuedouble);
                    else
                        gs_rp_text(sb, cJSON_IsString(bp) ? bp->valuestring : "?");
                    first = 0;
                }
                gs_sb_puts(sb, "</td></tr>\n");
            }
        }
        gs_sb_puts(sb, "</tbody></table></div>\n");
    }
    gs_rp_section_close(sb);
}
