/*
 * report_answer.c - the sections that answer "which generation is faster on what, and why":
 * the verdict per generation pair, the kernel x generation speedup heatmap and the per-kernel
 * rooflines. They use the timing-only (perf suite) jobs when the results have any: check-suite
 * shapes are correctness shapes whose times are mostly fixed latencies.
 *
 * Speedups are pairwise: a generation is compared with the previous generation (in the order
 * of the results' configs) that ran the same kernel/variant/dtype/shape, or with --base-gen,
 * so a base that cannot run a job never blanks a later generation's number. Geomeans come
 * from reports/speedup.c, the same code as `gensweep compare --across`.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speedup.h"
#include "svg.h"

int gs_rp_answer_job(const rep *r, const rjob *j)
{
    return !r->answer_timing || !strcmp(gs_rp_jstr(j->o, "mode"), "timing");
}

static int keep_answer(const cJSON *job, void *ctx)
{
    const rep *r = ctx;
    return !r->answer_timing || !strcmp(gs_rp_jstr(job, "mode"), "timing");
}

static int passed(const rjob *j)
{
    return !strcmp(j->status, "pass") && j->time_ns > 0;
}

/* Jobs by kernel row, shape, generation, then file order. */
static int by_row_shape_gen(const void *x, const void *y)
{
    const rjob *a = *(const rjob *const *)x, *b = *(const rjob *const *)y;
    if (a->row_i != b->row_i) return a->row_i < b->row_i ? -1 : 1;
    int c = strcmp(a->shape, b->shape);
    if (c) return c;
    if (a->gen_i != b->gen_i) return a->gen_i < b->gen_i ? -1 : 1;
    return (a > b) - (a < b);
}

static int qualifies(const rjob *b)
{
    return b->answer && passed(b);
}

/* The references of one (row, shape) group g[0..n-1], sorted by generation then file order. A
 * job on generation g is compared with --base-gen's job, else with the one of the nearest earlier
 * generation where the same kernel/variant/dtype/shape passed (on a generation with several, the
 * first in the file). */
static void group_refs(const rep *r, rjob **g, size_t n)
{
    int count = 0;
    const rjob *base = NULL;
    for (size_t i = 0; i < n; i++) {
        count += qualifies(g[i]);
        if (!base && g[i]->gen_i == r->base_gen && qualifies(g[i])) base = g[i];
    }
    const rjob *best = NULL; /* the nearest earlier generation's */
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && g[e]->gen_i == g[i]->gen_i)
            e++;
        const rjob *level = NULL;
        for (size_t k = i; k < e; k++) {
            g[k]->shape_passed = count;
            if (r->base_given)
                g[k]->ref = g[k]->gen_i == r->base_gen ? NULL : base;
            else
                g[k]->ref = best;
            if (!level && qualifies(g[k])) level = g[k];
        }
        if (level) best = level;
        i = e;
    }
}

gs_status gs_rp_index_jobs(rep *r)
{
    size_t n = r->n_jobs;
    r->row_start = gs_calloc(r->n_rows + 1, sizeof *r->row_start);
    r->row_jobs = gs_calloc(n ? n : 1, sizeof *r->row_jobs);
    rjob **o = gs_calloc(n ? n : 1, sizeof *o);
    size_t *fill = gs_calloc(r->n_rows + 1, sizeof *fill);
    if (!r->row_start || !r->row_jobs || !o || !fill) {
        gs_free(o);
        gs_free(fill);
        return GS_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        r->row_start[r->jobs[i].row_i + 1]++; /* every job of the main file has a row */
    for (size_t k = 0; k < r->n_rows; k++)
        r->row_start[k + 1] += r->row_start[k];
    for (size_t i = 0; i < n; i++) {
        size_t k = (size_t)r->jobs[i].row_i;
        r->row_jobs[r->row_start[k] + fill[k]++] = i;
        o[i] = &r->jobs[i];
    }
    qsort(o, n, sizeof *o, by_row_shape_gen);
    for (size_t i = 0; i < n;) {
        size_t e = i + 1;
        while (e < n && o[e]->row_i == o[i]->row_i && !strcmp(o[e]->shape, o[i]->shape))
            e++;
        group_refs(r, o + i, e - i);
        i = e;
    }
    gs_free(o);
    gs_free(fill);
    return GS_OK;
}

/* What most often bounds the passing answer jobs of a kernel class on generation g
 * (gs_rp_job_bound_class: "throughput-bound on X" or "latency-bound"), into out. */
static const char *class_bound(const rep *r, int g, const char *cls, int *count, int *of, char *out,
                               size_t size)
{
    char names[16][48];
    int cnt[16], nn = 0;
    *of = 0;
    for (size_t i = 0; i < r->n_jobs; i++) {
        const rjob *j = &r->jobs[i];
        if (j->gen_i != g || !j->answer || !passed(j) || strcmp(gs_kernel_class(j->kernel), cls))
            continue;
        char b[48];
        if (!*gs_rp_job_bound_class(j->o, b, sizeof b)) continue;
        (*of)++;
        int k = 0;
        while (k < nn && strcmp(names[k], b))
            k++;
        if (k == nn && nn < 16) {
            snprintf(names[nn], sizeof names[nn], "%s", b);
            cnt[nn++] = 0;
        }
        if (k < nn) cnt[k]++;
    }
    int best = -1;
    for (int k = 0; k < nn; k++)
        if (best < 0 || cnt[k] > cnt[best]) best = k;
    *count = best >= 0 ? cnt[best] : 0;
    if (best < 0) return NULL;
    snprintf(out, size, "%s", names[best]);
    return out;
}

static const cJSON *find_attrib(const rep *r, const char *from, const char *to)
{
    for (int i = 0; i < r->n_attrib; i++)
        if (!strcmp(gs_rp_jstr(r->attrib[i], "from"), from) &&
            !strcmp(gs_rp_jstr(r->attrib[i], "to"), to))
            return r->attrib[i];
    return NULL;
}

/* The parameters that differ between two configs, largest ratio first (at most max). */
static void changed_params(rep *r, int a, int b, int max)
{
    gs_sb *sb = r->sb;
    const cJSON *pa = gs_rp_jget(r->cfg[a], "params"), *pb = gs_rp_jget(r->cfg[b], "params");
    const cJSON *keys[256];
    double score[256];
    int n = 0, total = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, pb)
    {
        double vb = gs_rp_jnum(p, "value"), va = gs_rp_jnum(gs_rp_jget(pa, p->string), "value");
        if (!p->string || va == vb || (isnan(va) && isnan(vb))) continue;
        total++;
        double s = va > 0 && vb > 0 ? fabs(log(vb / va)) : -1; /* added/removed: last */
        if (n < 256) {
            keys[n] = p;
            score[n++] = s;
        }
    }
    if (!total) {
        gs_sb_puts(sb, "no numeric parameter differs");
        return;
    }
    for (int i = 0; i < n; i++) /* selection sort: n is small */
        for (int k = i + 1; k < n; k++)
            if (score[k] > score[i]) {
                double ts = score[i];
                const cJSON *tk = keys[i];
                score[i] = score[k];
                keys[i] = keys[k];
                score[k] = ts;
                keys[k] = tk;
            }
    for (int i = 0; i < n && i < max; i++) {
        const cJSON *q = keys[i];
        double va = gs_rp_jnum(gs_rp_jget(pa, q->string), "value"), vb = gs_rp_jnum(q, "value");
        gs_sb_puts(sb, i ? "; <code>" : "<code>");
        gs_rp_text(sb, q->string);
        gs_sb_puts(sb, "</code> ");
        gs_rp_put_param(sb, va, gs_rp_jstr(q, "unit"));
        gs_sb_puts(sb, " → ");
        gs_rp_put_param(sb, vb, gs_rp_jstr(q, "unit"));
        if (va > 0 && vb > 0) gs_sb_printf(sb, " (×%.3g)", vb / va);
    }
    if (total > max) gs_sb_printf(sb, "; and %d more (see Generations)", total - max);
}

static void put_speedup(gs_sb *sb, double s)
{
    if (isfinite(s))
        gs_sb_printf(sb, "%.3g×", s);
    else
        gs_sb_puts(sb, "—");
}

/* One generation pair: a, b indexes into r->gens. */
static void verdict_pair(rep *r, const cJSON **jobs, size_t nj, int a, int b)
{
    gs_sb *sb = r->sb;
    gs_speedup_pair p;
    if (gs_speedup_compare(jobs, nj, r->gens[a], r->gens[b], keep_answer, r, &p) != 0) {
        sb->oom = 1;
        return;
    }
    /* jobs of this pair may be missing (incomplete results): the speedup is said to be partial,
     * in the headline and in words */
    const int partial = gs_rp_pair_partial(r, a, b);
    gs_sb_puts(sb, partial ? "<div class=\"verdict partial\" data-partial=\"1\"><h3>"
                           : "<div class=\"verdict\"><h3>");
    gs_rp_text(sb, r->gens[b]);
    gs_sb_puts(sb, " vs ");
    gs_rp_text(sb, r->gens[a]);
    gs_sb_puts(sb, ": ");
    if (p.n_compared) {
        gs_sb_printf(sb, "<b class=\"big\">%.3g×</b> %s", p.geomean,
                     p.geomean >= 1 ? "faster" : "slower");
        if (partial)
            gs_sb_puts(sb, " <span class=\"partial-tag\">partial: over the jobs present "
                           "only</span>");
        gs_sb_puts(sb, "</h3>");
        if (partial) {
            gs_sb_puts(sb, "<p class=\"warn\">Partial: the results are incomplete (<a "
                           "href=\"#incomplete\">what is missing</a>)");
            if (r->absent > 0)
                gs_sb_printf(sb, ", %.0f planned job%s did not run", r->absent,
                             r->absent == 1 ? "" : "s");
            gs_sb_puts(sb, "; this speedup leaves them out and may change when they run.</p>");
        }
        gs_sb_puts(sb, "<p>Geometric mean of the speedup (time on ");
        gs_rp_text(sb, r->gens[a]);
        gs_sb_puts(sb, " / time on ");
        gs_rp_text(sb, r->gens[b]);
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < p.n_match; i++)
            if (isfinite(p.m[i].speedup)) {
                if (p.m[i].speedup < lo) lo = p.m[i].speedup;
                if (p.m[i].speedup > hi) hi = p.m[i].speedup;
            }
        gs_sb_printf(sb, ") over %zu %sjobs that passed on both (range %.3g× – %.3g×)",
                     p.n_compared, r->answer_timing ? "perf-suite (timing-only) " : "", lo, hi);
        if (p.n_match > p.n_compared || p.n_base > p.n_match || p.n_other > p.n_match)
            gs_sb_printf(sb, "; %zu ran on only one of them or did not pass on both",
                         (p.n_match - p.n_compared) + (p.n_base - p.n_match) +
                             (p.n_other - p.n_match));
        gs_sb_puts(sb, ". <span class=\"note\">Every job: <code>gensweep compare --across ");
        gs_rp_text(sb, r->gens[a]);
        gs_sb_puts(sb, " ");
        gs_rp_text(sb, r->gens[b]);
        gs_sb_puts(sb, r->answer_timing ? " --mode timing" : "");
        gs_sb_puts(sb, " results.json</code></span></p>");
    } else {
        gs_sb_puts(sb, "no common passing job");
        if (partial)
            gs_sb_puts(sb, " <span class=\"partial-tag\">partial: over the jobs present "
                           "only</span>");
        gs_sb_puts(sb, "</h3><p>No kernel/variant/dtype/shape passed on both generations.</p>");
    }
    const cJSON *at = find_attrib(r, r->gens[a], r->gens[b]);
    if (at) {
        const cJSON *ps = gs_rp_jget(at, "params"), *best = NULL;
        const cJSON *q;
        /* a share that could not be formed (null) is never the best */
        cJSON_ArrayForEach(q, ps) if (isfinite(gs_rp_jnum(q, "share")) &&
                                      (!best || gs_rp_jnum(q, "share") > gs_rp_jnum(best, "share")))
            best = q;
        gs_sb_puts(sb, "<p class=\"cause\"><b>Why</b> (attribution, ");
        gs_rp_text(sb, gs_rp_jstr(at, "suite"));
        gs_sb_printf(sb, " suite: every numeric change applied to %s gives %.3g×", r->gens[a],
                     gs_rp_jnum(gs_rp_jget(at, "all"), "geomean"));
        double gto = gs_rp_jnum(gs_rp_jget(at, "to_all"), "geomean");
        if (isfinite(gto) && fabs(log(gto / gs_rp_jnum(gs_rp_jget(at, "all"), "geomean"))) > 0.01)
            gs_sb_printf(sb,
                         " of %s's %.3g×; the rest comes from what no numeric parameter "
                         "expresses: family behaviour, parameters on one side only",
                         r->gens[b], gto);
        gs_sb_puts(sb, ")");
        if (best) {
            gs_sb_puts(sb, ": <code>");
            gs_rp_text(sb, gs_rp_jstr(best, "key"));
            gs_sb_printf(sb, "</code> explains <b>%.0f %%</b> (%.3g× alone)",
                         100 * gs_rp_jnum(best, "share"), gs_rp_jnum(best, "geomean"));
            /* the others that matter (5 % or more either way), largest share first */
            const cJSON *big[64];
            int nb = 0, small = 0;
            cJSON_ArrayForEach(q, ps)
            {
                if (q == best) continue;
                if (!(fabs(gs_rp_jnum(q, "share")) >= 0.05) || nb == 64) {
                    small++;
                    continue;
                }
                int k = nb++;
                while (k > 0 && gs_rp_jnum(big[k - 1], "share") < gs_rp_jnum(q, "share")) {
                    big[k] = big[k - 1];
                    k--;
                }
                big[k] = q;
            }
            for (int k = 0; k < nb; k++) {
                gs_sb_puts(sb, "; <code>");
                gs_rp_text(sb, gs_rp_jstr(big[k], "key"));
                gs_sb_printf(sb, "</code> %.0f %%", 100 * gs_rp_jnum(big[k], "share"));
            }
            if (small) gs_sb_printf(sb, "; %d more under 5 %% each", small);
            double inter = gs_rp_jnum(at, "interaction_share");
            if (isfinite(inter) && fabs(inter) >= 0.05) {
                gs_sb_printf(sb, "; interactions %.0f %% (the parts do not add up)", 100 * inter);
                /* the pair carrying most of them, by name */
                const cJSON *bp = NULL;
                cJSON_ArrayForEach(
                    q, gs_rp_jget(at, "pairs")) if (isfinite(gs_rp_jnum(q, "share")) &&
                                                    (!bp || fabs(gs_rp_jnum(q, "share")) >
                                                                fabs(gs_rp_jnum(bp, "share")))) bp =
                    q;
                if (bp) {
                    gs_sb_puts(sb, ", most of them <code>");
                    gs_rp_text(sb, gs_rp_jstr(bp, "a"));
                    gs_sb_puts(sb, "</code> + <code>");
                    gs_rp_text(sb, gs_rp_jstr(bp, "b"));
                    gs_sb_printf(sb, "</code> together (%.0f %%)", 100 * gs_rp_jnum(bp, "share"));
                }
            }
        }
        gs_sb_puts(sb, ". <a href=\"#attribution\">details</a></p>");
    }
    gs_sb_puts(sb, "<p class=\"changed\"><b>What changed</b>: ");
    if (r->cfg[a] && r->cfg[b])
        changed_params(r, a, b, 5);
    else
        gs_sb_puts(sb, "(no configuration in the results)");
    if (!at)
        gs_sb_puts(sb, ". <span class=\"note\">The share of the speedup each change explains: "
                       "<code>gensweep attribute --from A.yaml --to B.yaml</code>, then "
                       "<code>report --attribute attribute.json</code>.</span>");
    gs_sb_puts(sb, "</p>");
    if (p.n_cls) {
        gs_sb_puts(sb, "<table class=\"classes\"><thead><tr><th>kernel class</th><th>speedup "
                       "(geomean)</th><th>jobs</th><th>what bounds it on ");
        gs_rp_text(sb, r->gens[a]);
        gs_sb_puts(sb, "</th><th>what bounds it on ");
        gs_rp_text(sb, r->gens[b]);
        gs_sb_puts(sb, "</th></tr></thead><tbody>");
        for (int c = 0; c < p.n_cls; c++) {
            gs_sb_puts(sb, "<tr><th scope=\"row\">");
            gs_rp_text(sb, p.cls[c].name);
            gs_sb_puts(sb, "</th><td class=\"n\"");
            gs_rp_speedup_style(sb, p.cls[c].geomean);
            gs_sb_puts(sb, ">");
            put_speedup(sb, p.cls[c].geomean);
            gs_sb_printf(sb, "</td><td class=\"n\">%d</td>", p.cls[c].n);
            for (int side = 0; side < 2; side++) {
                int cnt, of;
                char buf[48];
                const char *bn =
                    class_bound(r, side ? b : a, p.cls[c].name, &cnt, &of, buf, sizeof buf);
                gs_sb_puts(sb, "<td>");
                if (bn) {
                    gs_rp_text(sb, bn);
                    gs_sb_printf(sb, " <span class=\"note\">(%d of %d)</span>", cnt, of);
                } else {
                    gs_sb_puts(sb, "—");
                }
                gs_sb_puts(sb, "</td>");
            }
            gs_sb_puts(sb, "</tr>");
        }
        gs_sb_puts(sb, "</tbody></table>");
    }
    gs_sb_puts(sb, "</div>\n");
    gs_speedup_pair_free(&p);
}

void gs_rp_sec_verdict(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "verdict", "Verdict: which generation is faster on what, and why");
    if (r->answer_timing)
        gs_sb_puts(sb, "<p class=\"note\">From the perf suite's timing-only jobs (realistic "
                       "shapes). Bound = the engine on the critical path, most common over the "
                       "class's jobs.</p>\n");
    else
        gs_sb_puts(sb, "<p class=\"warn\">These results have no perf-suite (timing-only) jobs: the "
                       "numbers below come from the check suite's small correctness shapes, "
                       "whose times are mostly fixed latencies. Sweep with <code>--suite "
                       "all</code> for the machines' answer.</p>\n");
    size_t nj = r->n_jobs;
    const cJSON **jobs = gs_calloc(nj ? nj : 1, sizeof *jobs);
    if (!jobs) {
        sb->oom = 1;
        return;
    }
    for (size_t i = 0; i < nj; i++)
        jobs[i] = r->jobs[i].o;
    if (r->n_gens < 2) gs_sb_puts(sb, "<p>One generation only: nothing to compare.</p>\n");
    gs_sb_puts(sb, "<div class=\"verdicts\">");
    for (int g = 0; g < r->n_gens; g++) {
        int a = r->base_given ? r->base_gen : g - 1;
        if (g == a || a < 0) continue;
        verdict_pair(r, jobs, nj, a, g);
    }
    gs_sb_puts(sb, "</div>\n");
    gs_free(jobs);
    gs_rp_section_close(sb);
}

/* Kernel rows with a job that feeds the answer sections. */
static int heatmap_row_shown(rep *r, size_t k, void *ctx)
{
    (void)ctx;
    for (size_t q = 0; q < gs_rp_row_count(r, k); q++)
        if (gs_rp_row_job(r, k, q)->answer) return 1;
    return 0;
}

/* A kernel row on one generation: the geometric mean speedup over its shapes against their
 * reference jobs, each shape's in the tooltip. */
static void heatmap_cell(rep *r, size_t k, int g, void *ctx)
{
    gs_sb *sb = r->sb, *tip = ctx;
    double lsum = 0;
    int n = 0, other_ref = -1, mixed = 0;
    const rjob *first = NULL; /* the first job that ran: its status when none has a reference */
    gs_sb_reset(tip);
    for (size_t q = 0; q < gs_rp_row_count(r, k); q++) {
        const rjob *j = gs_rp_row_job(r, k, q);
        if (j->gen_i != g || !j->answer) continue;
        if (!first) first = j;
        const rjob *ref = passed(j) ? j->ref : NULL;
        gs_sb_puts(tip, tip->len ? "\n" : "");
        gs_sb_puts(tip, j->shape);
        if (!ref) {
            gs_sb_printf(tip, ": %s, no reference", j->status);
            continue;
        }
        double s = ref->time_ns / j->time_ns;
        lsum += log(s);
        n++;
        if (other_ref < 0)
            other_ref = ref->gen_i;
        else if (other_ref != ref->gen_i)
            mixed = 1;
        gs_sb_printf(tip, ": %.3g× vs %s (", s, r->gens[ref->gen_i]);
        gs_rp_put_time(tip, ref->time_ns);
        gs_sb_puts(tip, " → ");
        gs_rp_put_time(tip, j->time_ns);
        gs_sb_puts(tip, ")");
    }
    double s = n ? exp(lsum / n) : (double)NAN;
    gs_sb_puts(sb, "<td class=\"n\"");
    gs_rp_put_dv(sb, s);
    if (n) gs_rp_speedup_style(sb, s);
    gs_sb_puts(sb, " title=\"");
    gs_rp_text(sb, tip->len ? gs_sb_cstr(tip) : "not run");
    gs_sb_puts(sb, "\">");
    if (n) {
        gs_sb_printf(sb, "%.2f×", s);
        int expected = r->base_given ? r->base_gen : g - 1;
        if (mixed || other_ref != expected) {
            gs_sb_puts(sb, "<small> vs ");
            gs_rp_text(sb, mixed ? "several" : r->gens[other_ref]);
            gs_sb_puts(sb, "</small>");
        }
    } else {
        /* no reference: the base, the first generation to run it, or not passed */
        int base_col = r->base_given ? g == r->base_gen : g == 0;
        gs_sb_puts(sb, !first                      ? "not run"
                       : base_col && passed(first) ? "base"
                       : passed(first)             ? "first"
                                                   : "");
        if (first && !passed(first)) gs_rp_text(sb, first->status);
    }
    gs_sb_puts(sb, "</td>");
}

void gs_rp_sec_heatmap(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "heatmap", "Speedup per kernel and generation");
    gs_sb_puts(sb, "<p>Each cell: geometric mean over the kernel's shapes of the time on the "
                   "reference generation divided by the time on this one (");
    if (r->base_given) {
        gs_sb_puts(sb, "reference: <b>");
        gs_rp_text(sb, r->gens[r->base_gen]);
        gs_sb_puts(sb, "</b>, --base-gen");
    } else {
        gs_sb_puts(sb, "reference: the previous generation that ran the same shape");
    }
    gs_sb_puts(sb, "). Blue: faster, vermillion: slower; a small label names the reference when "
                   "it is not the previous generation. Hover a cell for its jobs.</p>\n");
    if (r->incomplete)
        gs_sb_puts(sb, "<p class=\"warn\">Partial: the results are incomplete (<a "
                       "href=\"#incomplete\">what is missing</a>); each cell is over the jobs "
                       "present only.</p>\n");
    gs_sb tip;
    gs_sb_init(&tip);
    gs_rp_kernel_gen_table(
        r, "sortable filterable heat",
        &(gs_rp_kernel_cells){.row_shown = heatmap_row_shown, .cell = heatmap_cell, .ctx = &tip});
    if (!gs_sb_ok(&tip)) sb->oom = 1;
    gs_sb_free(&tip);
    gs_rp_section_close(sb);
}

/* Machine-true ceilings of a job: the record's fields (compute of the engines the kernel uses
 * x cores used; min of DMA and HBM bandwidth), else derived from today's fields (peak_tflops
 * of the job, which already counts the cores used; DMA = cores x engines x per-engine rate). */
static void job_ceilings(const rep *r, const rjob *j, double *tflops, double *mem_gbps,
                         double *dma_gbps, double *hbm_gbps)
{
    *tflops = gs_rp_jnum(j->o, "compute_ceiling_tflops");
    if (!(*tflops > 0)) *tflops = gs_rp_jnum(j->o, "peak_tflops");
    *hbm_gbps = gs_rp_jnum(j->o, "hbm_ceiling_gbps");
    if (!(*hbm_gbps > 0)) *hbm_gbps = gs_rp_jnum(j->o, "peak_hbm_gbps");
    *dma_gbps = gs_rp_jnum(j->o, "dma_ceiling_gbps");
    if (!(*dma_gbps > 0)) {
        const cJSON *prm = gs_rp_jget(r->cfg[j->gen_i], "params");
        double eng = gs_rp_jnum(gs_rp_jget(prm, "core.dma.engines"), "value");
        double per = gs_rp_jnum(gs_rp_jget(prm, "core.dma.bandwidth_per_engine"), "value");
        double cores = gs_rp_jnum(j->o, "cores_used");
        if (!(cores > 0)) cores = 1;
        *dma_gbps = eng > 0 && per > 0 ? cores * eng * per : (double)NAN; /* B/ns = GB/s */
    }
    *mem_gbps = gs_rp_jnum(j->o, "memory_ceiling_gbps");
    if (!(*mem_gbps > 0))
        *mem_gbps = *dma_gbps > 0 && *hbm_gbps > 0 ? GS_MIN(*dma_gbps, *hbm_gbps)
                    : *hbm_gbps > 0                ? *hbm_gbps
                                                   : *dma_gbps;
}

static void put_bw(gs_sb *sb, double gbps)
{
    if (!(gbps > 0))
        gs_sb_puts(sb, "—");
    else if (gbps >= 1000)
        gs_sb_printf(sb, "%.3g TB/s", gbps / 1000);
    else
        gs_sb_printf(sb, "%.3g GB/s", gbps);
}

/* Representative shape of a row for the rooflines: the largest answer shape that passed on
 * the most generations. */
static const char *roofline_shape(const rep *r, size_t row)
{
    const char *best = NULL;
    int best_n = 0;
    double best_size = 0;
    for (size_t q = 0; q < gs_rp_row_count(r, row); q++) {
        const rjob *j = gs_rp_row_job(r, row, q);
        if (!j->answer || !passed(j)) continue;
        int n = j->shape_passed;
        if (n > best_n || (n == best_n && j->size > best_size)) {
            best = j->shape;
            best_n = n;
            best_size = j->size;
        }
    }
    return best;
}

/* The kernel's own ceilings on generation g's point (docs/BOUND.md): each compute engine it
 * used at its best rate for the kernel's instructions (the job's FLOPs over that engine's bound:
 * a horizontal line), HBM (a diagonal at its bandwidth) and the DMA engines (a diagonal at their
 * bandwidth times HBM bytes per DMA byte). TFLOP/s; GB/s. NAN where the job does not say. */
typedef struct roof {
    double eng[4];   /* tensor vector scalar gpsimd, TFLOP/s */
    double hbm, dma; /* GB/s of HBM traffic */
} roof;

static const char *const roof_engines[4] = {"tensor", "vector", "scalar", "gpsimd"};
/* dash pattern per ceiling, the same for every generation (the colour is the generation) */
static const char *const roof_dash[6] = {"", "6 3", "2 2", "8 3 2 3", "", "4 4"};
static const char *const roof_kinds[6] = {"tensor", "vector", "scalar", "gpsimd", "hbm", "dma"};

static void job_roof(const rep *r, const rjob *j, roof *o)
{
    const double flops = gs_rp_jnum(j->o, "flops");
    const cJSON *eb = gs_rp_jget(j->o, "engine_bound_ns");
    for (int e = 0; e < 4; e++) {
        const double b = gs_rp_jnum(eb, roof_engines[e]);
        o->eng[e] = b > 0 && flops > 0 ? flops / b / 1e3 : (double)NAN;
    }
    double cc, mc;
    job_ceilings(r, j, &cc, &mc, &o->dma, &o->hbm);
    if (!eb) o->eng[0] = cc > 0 ? cc : (double)NAN; /* older results: the tensor peak */
    const double hb = gs_rp_jnum(j->o, "hbm_bytes"), db = gs_rp_jnum(j->o, "dma_bytes");
    o->dma = o->dma > 0 && db > 0 && hb > 0 ? o->dma * hb / db : (double)NAN;
}

/* The lowest of a roof's ceilings at arithmetic intensity ai (TFLOP/s). */
static double roof_at(const roof *o, double ai)
{
    double m = INFINITY;
    for (int e = 0; e < 4; e++)
        if (o->eng[e] > 0) m = GS_MIN(m, o->eng[e]);
    if (o->hbm > 0) m = GS_MIN(m, ai * o->hbm / 1e3);
    if (o->dma > 0) m = GS_MIN(m, ai * o->dma / 1e3);
    return m;
}

static void roof_line(gs_sb *sb, const gs_svg_plot *p, const char *col, int kind, double x0,
                      double y0, double x1, double y1)
{
    gs_sb_printf(sb,
                 "<line class=\"ceil roof-%s\" stroke=\"%s\"%s%s%s x1=\"%.1f\" y1=\"%.1f\" "
                 "x2=\"%.1f\" y2=\"%.1f\"/>",
                 roof_kinds[kind], col, *roof_dash[kind] ? " stroke-dasharray=\"" : "",
                 roof_dash[kind], *roof_dash[kind] ? "\"" : "", gs_svg_px(p, x0), gs_svg_py(p, y0),
                 gs_svg_px(p, x1), gs_svg_py(p, y1));
}

/* A diagonal y = x * gbps / 1e3 clipped to the plot. */
static void roof_diagonal(gs_sb *sb, const gs_svg_plot *p, const char *col, int kind, double gbps)
{
    if (!(gbps > 0)) return;
    const double x0 = GS_MAX(p->x.lo, p->y.lo * 1e3 / gbps);
    const double x1 = GS_MIN(p->x.hi, p->y.hi * 1e3 / gbps);
    if (x1 > x0) roof_line(sb, p, col, kind, x0, x0 * gbps / 1e3, x1, x1 * gbps / 1e3);
}

void gs_rp_sec_rooflines(rep *r)
{
    gs_sb *sb = r->sb;
    gs_rp_section_open(sb, "rooflines", "Rooflines per kernel");
    gs_sb_puts(sb,
               "<p>One point per generation (colour) at the kernel's representative shape: "
               "arithmetic intensity (FLOP per HBM byte; every engine's operations count) "
               "against achieved TFLOP/s, log scales. The ceilings are the kernel's own, in its "
               "generation's colour, for the cores the run used: each compute engine the "
               "kernel uses at its best rate for the kernel's instructions (horizontal: the "
               "job's FLOPs over that engine's bound), HBM bandwidth and the DMA engines' "
               "bandwidth (diagonals; DMA scaled by the kernel's HBM bytes per DMA byte). The "
               "point's distance below the lowest ceiling is its bound_ratio. Ceilings above "
               "the plot are listed under it. Pure data movement (no FLOPs) has no point. "
               "Hover a point for the job.</p>\n<p class=\"legend\">");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_printf(sb, "<span><b class=\"sw\" style=\"color:%s\">●</b> ", gs_svg_colour(g + 1));
        gs_rp_text(sb, r->gens[g]);
        gs_sb_puts(sb, "</span> ");
    }
    static const char *const kinds[6] = {"tensor", "vector", "scalar", "gpsimd", "HBM", "DMA"};
    for (int k = 0; k < 6; k++)
        gs_sb_printf(sb,
                     "<span><svg width=\"26\" height=\"8\"><line x1=\"0\" y1=\"4\" x2=\"26\" "
                     "y2=\"4\" stroke=\"#555\" stroke-width=\"2\"%s%s%s/></svg> %s%s</span> ",
                     *roof_dash[k] ? " stroke-dasharray=\"" : "", roof_dash[k],
                     *roof_dash[k] ? "\"" : "", kinds[k], k >= 4 ? " (diagonal)" : "");
    gs_sb_puts(sb, "</p>\n<div class=\"charts\">");
    int charts = 0;
    for (size_t k = 0; k < r->n_rows; k++) {
        if (gs_rp_budget_hit(r)) break;
        const char *shape = roofline_shape(r, k);
        if (!shape) continue;
        const rjob *pt[64] = {NULL};
        double ai[64], tf[64];
        roof rf[64];
        double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
        int npts = 0;
        for (size_t q = 0; q < gs_rp_row_count(r, k); q++) {
            const rjob *j = gs_rp_row_job(r, k, q);
            if (!j->answer || !passed(j) || strcmp(j->shape, shape) || j->gen_i >= 64 ||
                pt[j->gen_i])
                continue;
            int g = j->gen_i;
            ai[g] = gs_rp_jnum(j->o, "arith_intensity");
            tf[g] = gs_rp_jnum(j->o, "achieved_tflops");
            if (!(ai[g] > 0) || !(tf[g] > 0)) continue;
            pt[g] = j;
            npts++;
            job_roof(r, j, &rf[g]);
            xmin = GS_MIN(xmin, ai[g]);
            xmax = GS_MAX(xmax, ai[g]);
            ymin = GS_MIN(ymin, tf[g]);
            ymax = GS_MAX(ymax, tf[g]);
            const double top = roof_at(&rf[g], ai[g]);
            if (isfinite(top)) ymax = GS_MAX(ymax, top); /* the roof above the point */
        }
        if (!npts) continue;
        charts++;
        gs_sb_puts(sb, "<figure class=\"roof\"><figcaption>");
        gs_rp_row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, " <span class=\"note\">");
        gs_rp_text(sb, shape);
        gs_sb_puts(sb, "</span></figcaption>");
        gs_svg_plot p;
        gs_svg_plot_init(&p, 380, 260);
        p.x = (gs_svg_axis){xmin / 8, xmax * 8, 1, "FLOP/byte"};
        p.y = (gs_svg_axis){ymin / 4, ymax * 4, 1, "TFLOP/s"};
        gs_svg_axis_nice(&p.x);
        gs_svg_axis_nice(&p.y);
        gs_svg_begin(sb, &p, "roofline");
        for (int g = 0; g < r->n_gens && g < 64; g++) {
            if (!pt[g]) continue;
            const char *col = gs_svg_colour(g + 1);
            for (int e = 0; e < 4; e++)
                if (rf[g].eng[e] >= p.y.lo && rf[g].eng[e] <= p.y.hi)
                    roof_line(sb, &p, col, e, p.x.lo, rf[g].eng[e], p.x.hi, rf[g].eng[e]);
            roof_diagonal(sb, &p, col, 4, rf[g].hbm);
            roof_diagonal(sb, &p, col, 5, rf[g].dma);
            const rjob *j = pt[g];
            gs_sb_printf(sb,
                         "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#000\" "
                         "stroke-width=\"0.5\"><title>",
                         gs_svg_px(&p, ai[g]), gs_svg_py(&p, tf[g]), col);
            gs_rp_text(sb, j->id);
            gs_sb_printf(sb, "\n%.4g FLOP/B, %.4g TFLOP/s, ", ai[g], tf[g]);
            gs_rp_put_time(sb, j->time_ns);
            gs_sb_printf(sb, ", %.3g× its bound (", gs_rp_jnum(j->o, "bound_ratio"));
            gs_rp_text(sb,
                       *gs_rp_jstr(j->o, "bound_engine") ? gs_rp_jstr(j->o, "bound_engine") : "—");
            gs_sb_puts(sb, ")\n");
            gs_rp_text(sb, gs_rp_job_bound(j->o));
            gs_sb_puts(sb, "</title></circle>");
        }
        gs_svg_end(sb);
        /* ceilings as text under the chart: labels on the chart would overlap */
        gs_sb_puts(sb, "<ul class=\"ceils\">");
        for (int g = 0; g < r->n_gens && g < 64; g++) {
            if (!pt[g]) continue;
            gs_sb_printf(sb, "<li><b style=\"color:%s\">●</b> ", gs_svg_colour(g + 1));
            gs_rp_text(sb, r->gens[g]);
            gs_sb_printf(sb, ": %.3g TFLOP/s, ", tf[g]);
            gs_rp_put_time(sb, pt[g]->time_ns);
            gs_sb_printf(sb, ", %.3g× its bound (", gs_rp_jnum(pt[g]->o, "bound_ratio"));
            gs_rp_text(sb, *gs_rp_jstr(pt[g]->o, "bound_engine")
                               ? gs_rp_jstr(pt[g]->o, "bound_engine")
                               : "—");
            gs_sb_puts(sb, "), ");
            gs_rp_text(sb, *gs_rp_job_bound(pt[g]->o) ? gs_rp_job_bound(pt[g]->o) : "—");
            gs_sb_puts(sb, "; ceilings");
            for (int e = 0; e < 4; e++)
                if (rf[g].eng[e] > 0) gs_sb_printf(sb, " %s %.3g,", roof_engines[e], rf[g].eng[e]);
            gs_sb_puts(sb, " TFLOP/s; HBM ");
            put_bw(sb, rf[g].hbm);
            gs_sb_puts(sb, ", DMA ");
            put_bw(sb, rf[g].dma);
            gs_sb_printf(sb, " (%g cores)</li>", gs_rp_jnum(pt[g]->o, "cores_used"));
        }
        gs_sb_puts(sb, "</ul></figure>");
    }
    gs_sb_puts(sb, "</div>\n");
    if (!charts) gs_sb_puts(sb, "<p>No job with FLOPs and HBM traffic to place.</p>\n");
    gs_rp_section_close(sb);
}
