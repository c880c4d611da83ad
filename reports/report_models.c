/* report_models.c - the "model layers" section: the workloads of a model sweep (`sweep --suite
 * model`, workloads.json, schema "gensweep-workloads"): each layer's time per generation
 * (tokens/s of one layer for decode), per generation pair the speedup of each layer and which
 * steps dominate it on either side, and each layer's steps per generation. A layer with a step
 * that could not run has no total to compare: it shows the steps and their statuses instead. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* Steps named as dominant per generation. */
#define TOP_STEPS 3

/* The result of workload w on generation g (NULL: none). */
static const cJSON *result_on(const cJSON *w, const char *g)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, gs_rp_jget(w, "results"))
    {
        if (!strcmp(gs_rp_jstr(x, "generation"), g)) return x;
    }
    return NULL;
}

/* A layer total that can be compared: every step ran and the time is a positive number. */
static double layer_time(const cJSON *res)
{
    const double t = gs_rp_jnum(res, "time_ns");
    return res && cJSON_IsTrue(gs_rp_jget(res, "complete")) && isfinite(t) && t > 0 ? t
                                                                                    : (double)NAN;
}

/* "gen2: 1 step could not run (huge: does-not-fit)" or "no result on gen2". */
static void why_no_total(gs_sb *sb, const cJSON *res, const char *g)
{
    if (!res) {
        gs_sb_puts(sb, "no result on ");
        gs_rp_text(sb, g);
        return;
    }
    gs_rp_text(sb, g);
    int n = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, gs_rp_jget(res, "rows"))
    {
        if (!strcmp(gs_rp_jstr(row, "status"), "pass")) continue;
        gs_sb_puts(sb, n++ ? ", " : ": could not run ");
        gs_rp_text(sb, gs_rp_jstr(row, "step"));
        gs_sb_puts(sb, " (");
        gs_rp_text(sb, gs_rp_jstr(row, "status"));
        gs_sb_puts(sb, ")");
    }
    if (!n) gs_sb_puts(sb, ": no layer total");
}

static int is_decode(const cJSON *w)
{
    return !strcmp(gs_rp_jstr(w, "phase"), "decode");
}

static void put_tokens(gs_sb *sb, double tps)
{
    if (isfinite(tps) && tps > 0)
        gs_sb_printf(sb, "%.4g tok/s", tps);
    else
        gs_sb_puts(sb, "—");
}

/* The TOP_STEPS steps with the largest share: "mlp (swiglu_mlp) 62%, ...". */
static void top_steps(gs_sb *sb, const cJSON *res)
{
    const cJSON *top[TOP_STEPS] = {NULL};
    const cJSON *row;
    cJSON_ArrayForEach(row, gs_rp_jget(res, "rows"))
    {
        const double s = gs_rp_jnum(row, "share");
        if (!isfinite(s)) continue;
        for (int k = 0; k < TOP_STEPS; k++) {
            if (top[k] && !(s > gs_rp_jnum(top[k], "share"))) continue;
            for (int m = TOP_STEPS - 1; m > k; m--)
                top[m] = top[m - 1];
            top[k] = row;
            break;
        }
    }
    if (!top[0]) {
        gs_sb_puts(sb, "—");
        return;
    }
    for (int k = 0; k < TOP_STEPS && top[k]; k++) {
        gs_sb_puts(sb, k ? ", " : "");
        gs_sb_puts(sb, "<span class=\"step\">");
        gs_rp_text(sb, gs_rp_jstr(top[k], "step"));
        gs_sb_puts(sb, " (");
        gs_rp_text(sb, gs_rp_jstr(top[k], "kernel"));
        gs_sb_printf(sb, ") %.0f%%</span>", 100.0 * gs_rp_jnum(top[k], "share"));
    }
}

/* Layer time per workload x generation. */
static void totals_table(rep *r, const cJSON *doc, const cJSON *gens)
{
    gs_sb *sb = r->sb;
    gs_sb_puts(sb, "<div class=\"scroll\"><table class=\"sortable models\"><thead><tr>"
                   "<th>workload</th><th>phase</th>");
    const cJSON *g;
    cJSON_ArrayForEach(g, gens)
    {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, cJSON_IsString(g) ? g->valuestring : "");
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    const cJSON *w;
    cJSON_ArrayForEach(w, gs_rp_jget(doc, "workloads"))
    {
        if (gs_rp_budget_hit(r)) break;
        gs_sb_puts(sb, "<tr>");
        gs_rp_td_text(sb, gs_rp_jstr(w, "workload"));
        gs_rp_td_text(sb, gs_rp_jstr(w, "phase"));
        cJSON_ArrayForEach(g, gens)
        {
            const char *gn = cJSON_IsString(g) ? g->valuestring : "";
            const cJSON *res = result_on(w, gn);
            const double t = layer_time(res);
            gs_sb_puts(sb, "<td class=\"n\"");
            gs_rp_put_dv(sb, t);
            gs_sb_puts(sb, ">");
            if (isnan(t)) {
                gs_sb_puts(sb, "<span class=\"warn\">incomplete</span> <span class=\"note\">");
                why_no_total(sb, res, gn);
                gs_sb_puts(sb, "</span>");
            } else {
                gs_rp_put_time(sb, t);
                if (is_decode(w)) {
                    gs_sb_puts(sb, "<br><span class=\"note\">");
                    put_tokens(sb, gs_rp_jnum(res, "tokens_per_s_per_layer"));
                    gs_sb_puts(sb, "</span>");
                }
            }
            gs_sb_puts(sb, "</td>");
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
}

/* One generation pair: per workload the two layer times, the speedup, tokens/s and the
 * dominant steps on each side. */
static void pair_table(rep *r, const cJSON *doc, const char *a, const char *b)
{
    gs_sb *sb = r->sb;
    gs_sb_puts(sb, "<h3 class=\"pair\">");
    gs_rp_text(sb, b);
    gs_sb_puts(sb, " vs ");
    gs_rp_text(sb, a);
    gs_sb_puts(sb, "</h3>\n<div class=\"scroll\"><table class=\"sortable models-pair\"><thead><tr>"
                   "<th>workload</th><th>phase</th><th>layer on ");
    gs_rp_text(sb, a);
    gs_sb_puts(sb, "</th><th>layer on ");
    gs_rp_text(sb, b);
    gs_sb_puts(sb, "</th><th>speedup</th><th>decode tokens/s, one layer</th><th>top steps on ");
    gs_rp_text(sb, a);
    gs_sb_puts(sb, "</th><th>top steps on ");
    gs_rp_text(sb, b);
    gs_sb_puts(sb, "</th></tr></thead><tbody>\n");
    const cJSON *w;
    cJSON_ArrayForEach(w, gs_rp_jget(doc, "workloads"))
    {
        if (gs_rp_budget_hit(r)) break;
        const cJSON *ra = result_on(w, a), *rb = result_on(w, b);
        const double ta = layer_time(ra), tb = layer_time(rb);
        const double sp = ta / tb;
        gs_sb_puts(sb, "<tr>");
        gs_rp_td_text(sb, gs_rp_jstr(w, "workload"));
        gs_rp_td_text(sb, gs_rp_jstr(w, "phase"));
        gs_rp_td_time(sb, ta);
        gs_rp_td_time(sb, tb);
        if (isfinite(sp)) {
            gs_sb_puts(sb, "<td class=\"n speedup\"");
            gs_rp_put_dv(sb, sp);
            gs_rp_speedup_style(sb, sp);
            gs_sb_printf(sb, ">%.3g×</td>", sp);
        } else {
            gs_sb_puts(sb, "<td class=\"n\" data-v=\"\">— <span class=\"note\">");
            why_no_total(sb, isnan(ta) ? ra : rb, isnan(ta) ? a : b);
            gs_sb_puts(sb, "</span></td>");
        }
        gs_sb_puts(sb, "<td class=\"n\">");
        if (is_decode(w) && isfinite(sp)) {
            put_tokens(sb, gs_rp_jnum(ra, "tokens_per_s_per_layer"));
            gs_sb_puts(sb, " &rarr; ");
            put_tokens(sb, gs_rp_jnum(rb, "tokens_per_s_per_layer"));
        } else {
            gs_sb_puts(sb, "—");
        }
        gs_sb_puts(sb, "</td><td>");
        top_steps(sb, ra);
        gs_sb_puts(sb, "</td><td>");
        top_steps(sb, rb);
        gs_sb_puts(sb, "</td></tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
}

/* The steps of workload w, one column per generation: time and share, or the status. */
static void steps_table(rep *r, const cJSON *w, const cJSON *gens)
{
    gs_sb *sb = r->sb;
    gs_sb_puts(sb, "<details class=\"model-steps\"><summary>");
    gs_rp_text(sb, gs_rp_jstr(w, "workload"));
    gs_sb_puts(sb, ": its steps on each generation</summary>\n<div class=\"scroll\"><table "
                   "class=\"sortable\"><thead><tr><th>step</th><th>kernel</th><th>shape</th>"
                   "<th>count</th>");
    const cJSON *g;
    cJSON_ArrayForEach(g, gens)
    {
        gs_sb_puts(sb, "<th>");
        gs_rp_text(sb, cJSON_IsString(g) ? g->valuestring : "");
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    const cJSON *first = cJSON_GetArrayItem(gs_rp_jget(w, "results"), 0);
    const int n_rows = cJSON_GetArraySize(gs_rp_jget(first, "rows"));
    for (int i = 0; i < n_rows && !gs_rp_budget_hit(r); i++) {
        const cJSON *row0 = cJSON_GetArrayItem(gs_rp_jget(first, "rows"), i);
        gs_sb_puts(sb, "<tr>");
        gs_rp_td_text(sb, gs_rp_jstr(row0, "step"));
        gs_rp_td_text(sb, gs_rp_jstr(row0, "kernel"));
        gs_sb_puts(sb, "<td>");
        const cJSON *d;
        int k = 0;
        cJSON_ArrayForEach(d, gs_rp_jget(row0, "shape"))
        {
            if (cJSON_IsNumber(d)) gs_sb_printf(sb, "%s%.0f", k++ ? "x" : "", d->valuedouble);
        }
        gs_sb_puts(sb, "</td>");
        gs_rp_td_num(sb, gs_rp_jnum(row0, "count"));
        cJSON_ArrayForEach(g, gens)
        {
            const cJSON *res = result_on(w, cJSON_IsString(g) ? g->valuestring : "");
            const cJSON *row = cJSON_GetArrayItem(gs_rp_jget(res, "rows"), i);
            const double t = gs_rp_jnum(row, "time_ns"), s = gs_rp_jnum(row, "share");
            if (!row || isnan(t)) {
                gs_sb_puts(sb, "<td class=\"reason\" data-v=\"\">");
                gs_rp_status_badge(sb, row ? gs_rp_jstr(row, "status") : "missing");
                gs_sb_puts(sb, " ");
                gs_rp_text_cut(sb, gs_rp_jstr(row, "reason"));
                gs_sb_puts(sb, "</td>");
                continue;
            }
            gs_sb_puts(sb, "<td class=\"n\"");
            gs_rp_put_dv(sb, t);
            gs_sb_puts(sb, ">");
            gs_rp_put_time(sb, t);
            if (isfinite(s)) gs_sb_printf(sb, " (%.1f%%)", 100.0 * s);
            gs_sb_puts(sb, "<br><span class=\"note\">");
            gs_rp_text(sb, gs_rp_jstr(row, "variant"));
            const char *bn = gs_rp_jstr(row, "bottleneck");
            if (*bn) {
                gs_sb_puts(sb, ", bottleneck ");
                gs_rp_text(sb, bn);
            }
            gs_sb_puts(sb, "</span></td>");
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div></details>\n");
}

void gs_rp_sec_models(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "models", "Model layers");
    if (r->n_wl == 0) {
        gs_sb_puts(sb, "<p>No model-level workload results given (<code>gensweep sweep --suite "
                       "model</code> writes <code>workloads.json</code> and adds it; or "
                       "<code>report --workloads FILE</code>).</p>\n");
        gs_rp_section_close(sb);
        return;
    }
    gs_sb_puts(sb, "<p>Each workload is one decoder layer written as suite kernels "
                   "(workloads/README.md), timing only; a step's time is its fastest variant "
                   "at the kernel's default params times its count, the layer the sum of its "
                   "steps. Decode shows tokens/s of that one layer (batch / layer time; a model "
                   "of L layers gets 1/L of it). Speedup = layer time on the earlier generation "
                   "/ on the later one (&gt; 1: the later is faster); a layer with a step that "
                   "could not run has no total and no speedup.</p>\n");
    for (int d = 0; d < r->n_wl; d++) {
        const cJSON *doc = r->wl[d];
        const cJSON *gens = gs_rp_jget(doc, "generations");
        if (!cJSON_IsTrue(gs_rp_jget(doc, "complete")))
            gs_sb_printf(sb, "<p class=\"warn\">Incomplete: %s.</p>\n",
                         cJSON_IsTrue(gs_rp_jget(doc, "interrupted"))
                             ? "the sweep was interrupted, steps not run are marked missing"
                             : "some steps could not run on some generation (below)");
        totals_table(r, doc, gens);
        const int n = cJSON_GetArraySize(gens);
        int base = -1;
        if (r->base_given)
            for (int i = 0; i < n; i++) {
                const cJSON *g = cJSON_GetArrayItem(gens, i);
                if (cJSON_IsString(g) && !strcmp(g->valuestring, r->gens[r->base_gen])) base = i;
            }
        for (int i = 0; i < n && !gs_rp_budget_hit(r); i++) {
            const int a = base >= 0 ? base : i - 1;
            const cJSON *ga = cJSON_GetArrayItem(gens, a), *gb = cJSON_GetArrayItem(gens, i);
            if (a < 0 || a == i || !cJSON_IsString(ga) || !cJSON_IsString(gb)) continue;
            pair_table(r, doc, ga->valuestring, gb->valuestring);
        }
        const cJSON *w;
        cJSON_ArrayForEach(w, gs_rp_jget(doc, "workloads"))
        {
            if (gs_rp_budget_hit(r)) break;
            steps_table(r, w, gens);
        }
    }
    gs_rp_section_close(sb);
}
