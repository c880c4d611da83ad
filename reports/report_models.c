/* report_models.c - the "model layers" section: the workloads of a model sweep (`sweep --suite
 * model`, workloads.json, schema "gensweep-workloads"): each layer's time per generation
 * (tokens/s of one layer for decode), per generation pair the speedup of each layer and which
 * steps dominate it on either side, and each layer's steps per generation. A layer with a step
 * that could not run has no total to compare: it shows the steps and their statuses instead. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "job_status.h"
#include "report_int.h"

/* ---- checking a workloads.json (gs_rp_check_workloads) ---- */

/* A number that is finite and in lo .. hi. */
static int num_in(const cJSON *v, double lo, double hi)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= lo &&
           v->valuedouble <= hi;
}

static int nonempty_str(const cJSON *v)
{
    return cJSON_IsString(v) && v->valuestring[0];
}

/* Whether the results name generation g (a config, or a job's generation). */
static int results_have_gen(const cJSON *results, const char *g)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, gs_rp_jget(results, "configs"))
    {
        if (!strcmp(gs_rp_jstr(x, "name"), g)) return 1;
    }
    cJSON_ArrayForEach(x, gs_rp_jget(results, "jobs"))
    {
        if (!strcmp(gs_rp_jstr(x, "generation"), g)) return 1;
    }
    return 0;
}

#define WL_BAD(...) gs_error_set(err, GS_ERR_INVALID, name, 0, 0, __VA_ARGS__)

/* One row: step and kernel named, a known status (or "missing": not run, interrupted), a time
 * exactly when it passed, a share of the layer in 0 .. 1. */
static gs_status check_row(const cJSON *row, const char *at, const char *name, gs_error *err)
{
    if (!cJSON_IsObject(row)) return WL_BAD("%s: not an object", at);
    if (!nonempty_str(gs_rp_jget(row, "step")) || !nonempty_str(gs_rp_jget(row, "kernel")))
        return WL_BAD("%s: \"step\" and \"kernel\" must be non-empty strings", at);
    const char *status = gs_rp_jstr(row, "status");
    if (gs_job_status_parse(status) < 0 && strcmp(status, "missing") != 0)
        return WL_BAD("%s.status: '%.60s' is not a job status", at, status);
    const cJSON *t = gs_rp_jget(row, "time_ns");
    const int pass = !strcmp(status, "pass");
    if (pass ? !num_in(t, 1e-9, 1e18) : t && !cJSON_IsNull(t))
        return WL_BAD("%s.time_ns: must be %s", at,
                      pass ? "a positive number of nanoseconds (the step passed)"
                           : "null (the step did not run)");
    const cJSON *sh = gs_rp_jget(row, "share");
    if (sh && !cJSON_IsNull(sh) && !num_in(sh, 0, 1))
        return WL_BAD("%s.share: must be a number in 0 .. 1 or null", at);
    return GS_OK;
}

/* One generation's result: its rows, a layer total that is their sum, complete exactly when
 * every step ran. */
static gs_status check_result(const cJSON *res, const char *at, const cJSON *gens, const char *name,
                              gs_error *err)
{
    if (!cJSON_IsObject(res)) return WL_BAD("%s: not an object", at);
    const char *g = gs_rp_jstr(res, "generation");
    int known = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, gens) known |= cJSON_IsString(x) && !strcmp(x->valuestring, g);
    if (!known) return WL_BAD("%s.generation: '%.60s' is not in \"generations\"", at, g);
    const cJSON *rows = gs_rp_jget(res, "rows");
    if (!cJSON_IsArray(rows) || !cJSON_GetArraySize(rows))
        return WL_BAD("%s.rows: must be a non-empty array", at);
    double sum = 0;
    int not_run = 0, i = 0;
    char rat[160];
    cJSON_ArrayForEach(x, rows)
    {
        snprintf(rat, sizeof rat, "%s.rows[%d]", at, i++);
        gs_status st = check_row(x, rat, name, err);
        if (st != GS_OK) return st;
        const double t = gs_rp_jnum(x, "time_ns");
        if (isnan(t))
            not_run++;
        else
            sum += t;
    }
    const cJSON *c = gs_rp_jget(res, "complete");
    if (!cJSON_IsBool(c)) return WL_BAD("%s.complete: must be true or false", at);
    if (cJSON_IsTrue(c) != (not_run == 0))
        return WL_BAD("%s.complete: %s, but %d of its steps did not run", at,
                      cJSON_IsTrue(c) ? "true" : "false", not_run);
    const cJSON *n = gs_rp_jget(res, "steps_not_run");
    if (n && !cJSON_IsNull(n) && !(num_in(n, 0, 1e6) && n->valuedouble == not_run))
        return WL_BAD("%s.steps_not_run: must be %d (the rows without a time)", at, not_run);
    const cJSON *t = gs_rp_jget(res, "time_ns");
    if (!num_in(t, 0, 1e18) || fabs(t->valuedouble - sum) > 1e-9 * (sum > 1 ? sum : 1))
        return WL_BAD("%s.time_ns: must be the sum of its rows' times (%.6g ns)", at, sum);
    const cJSON *tps = gs_rp_jget(res, "tokens_per_s_per_layer");
    if (tps && !cJSON_IsNull(tps) && !num_in(tps, 1e-30, 1e30))
        return WL_BAD("%s.tokens_per_s_per_layer: must be a positive number or null", at);
    return GS_OK;
}

gs_status gs_rp_check_workloads(const cJSON *wl, const char *name, const cJSON *results,
                                gs_error *err)
{
    const cJSON *wc = gs_rp_jget(wl, "complete"), *wi = gs_rp_jget(wl, "interrupted");
    if (!cJSON_IsBool(wc) || !cJSON_IsBool(wi))
        return WL_BAD("\"complete\" and \"interrupted\" must be true or false");
    const cJSON *gens = gs_rp_jget(wl, "generations"), *x;
    if (!cJSON_IsArray(gens)) return WL_BAD("\"generations\": must be an array of names");
    int i = 0;
    cJSON_ArrayForEach(x, gens)
    {
        if (!nonempty_str(x)) return WL_BAD("generations[%d]: must be a non-empty string", i);
        if (results && !results_have_gen(results, x->valuestring))
            return WL_BAD("generations[%d]: '%.60s' is not a generation of the results file: "
                          "not the same sweep",
                          i, x->valuestring);
        i++;
    }
    /* a complete, uninterrupted layer table beside results that say otherwise is another
     * sweep's (its speedups would stand next to results that did not all run) */
    if (results && cJSON_IsFalse(wi) &&
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(results, "interrupted")))
        return WL_BAD("\"interrupted\": false, but the results file was interrupted: not the "
                      "same sweep");
    if (results && cJSON_IsTrue(wc) &&
        cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(results, "complete")))
        return WL_BAD("\"complete\": true, but the results file is not complete: not the same "
                      "sweep");
    const cJSON *ws = gs_rp_jget(wl, "workloads");
    if (!cJSON_IsArray(ws)) return WL_BAD("\"workloads\": must be an array");
    int k = 0, all = 1;
    cJSON_ArrayForEach(x, ws)
    {
        char at[128];
        snprintf(at, sizeof at, "workloads[%d]", k++);
        if (!cJSON_IsObject(x)) return WL_BAD("%s: not an object", at);
        if (!nonempty_str(gs_rp_jget(x, "workload")))
            return WL_BAD("%s.workload: must be a non-empty string", at);
        const char *ph = gs_rp_jstr(x, "phase");
        if (strcmp(ph, "prefill") != 0 && strcmp(ph, "decode") != 0)
            return WL_BAD("%s.phase: must be \"prefill\" or \"decode\"", at);
        const cJSON *b = gs_rp_jget(x, "batch");
        if (b && !(num_in(b, 1, 1e12) && b->valuedouble == floor(b->valuedouble)))
            return WL_BAD("%s.batch: must be a positive integer", at);
        const cJSON *rs = gs_rp_jget(x, "results"), *r;
        if (!cJSON_IsArray(rs)) return WL_BAD("%s.results: must be an array", at);
        int j = 0;
        cJSON_ArrayForEach(r, rs)
        {
            char rat[160];
            snprintf(rat, sizeof rat, "%s.results[%d]", at, j++);
            gs_status st = check_result(r, rat, gens, name, err);
            if (st != GS_OK) return st;
            all &= cJSON_IsTrue(gs_rp_jget(r, "complete"));
        }
    }
    if (cJSON_IsTrue(wc) && (!all || cJSON_IsTrue(wi)))
        return WL_BAD("\"complete\": true, but a layer did not run every step or the sweep was "
                      "interrupted");
    return GS_OK;
}

#undef WL_BAD

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
