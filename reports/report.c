/*
 * report.c - the HTML performance report (see report.h): the page around the sections
 * (report_int.h lists the modules). The stylesheet and the script are real files
 * (reports/assets/report.css, report.js), embedded at build time as C strings (assets.cmake);
 * the script only sorts and filters rows already in the page, so the static HTML carries
 * everything. Once it has run and the page has loaded and been laid out, it sets data-gs-ready
 * on <html>: the browser test (tests/browser) waits for that rather than for a fixed time.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results_schema.h"

/* Generated from reports/assets/ at build time. */
extern const char gs_report_asset_css[];
extern const char gs_report_asset_js[];

/* Most distinct values one filter lists. */
#define FILTER_MAX_OPTIONS 256

/* <select> options: the distinct values of a job field, in first-seen order (compared with the
 * options listed so far, so a large results file stays linear in its jobs). */
static void filter_select(rep *r, const char *id, const char *label, int field)
{
    gs_sb *sb = r->sb;
    const char *seen[FILTER_MAX_OPTIONS];
    int ns = 0;
    gs_sb_printf(sb, "<label>%s <select id=\"%s\"><option value=\"\">all</option>", label, id);
    for (size_t i = 0; i < r->n_jobs && ns < FILTER_MAX_OPTIONS; i++) {
        const char *v = field == 0   ? r->jobs[i].gen
                        : field == 1 ? r->jobs[i].kernel
                                     : r->jobs[i].status;
        int dup = 0;
        for (int k = 0; k < ns && !dup; k++)
            dup = !strcmp(seen[k], v);
        if (dup) continue;
        seen[ns++] = v;
        gs_sb_puts(sb, "<option value=\"");
        gs_rp_text(sb, v);
        gs_sb_puts(sb, "\">");
        gs_rp_text(sb, v);
        gs_sb_puts(sb, "</option>");
    }
    gs_sb_puts(sb, "</select></label>");
}

static void render_page(rep *r)
{
    gs_sb *sb = r->sb;
    gs_sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<title>gensweep report: ");
    if (r->incomplete) gs_sb_puts(sb, "INCOMPLETE: ");
    for (int g = 0; g < r->n_gens; g++) {
        if (g) gs_sb_puts(sb, ", ");
        gs_rp_text(sb, r->gens[g]);
    }
    gs_sb_puts(sb, "</title>\n<style>");
    gs_sb_puts(sb, gs_report_asset_css);
    gs_sb_puts(sb, "</style>\n</head>\n<body>\n<header><h1>gensweep: which generation is "
                   "faster on what, and why</h1></header>\n<nav aria-label=\"sections\">"
                   "<a href=\"#verdict\">Verdict</a><a href=\"#heatmap\">Speedups</a>"
                   "<a href=\"#rooflines\">Rooflines</a><a href=\"#models\">Model layers</a>"
                   "<a href=\"#summary\">Summary</a>"
                   "<a href=\"#generations\">Generations</a>"
                   "<a href=\"#calibration\">Model vs measured</a>"
                   "<a href=\"#portability\">Portability</a><a href=\"#engines\">Engines</a>"
                   "<a href=\"#timelines\">Timelines</a><a href=\"#correctness\">Correctness</a>"
                   "<a href=\"#baseline\">Baseline</a><a href=\"#variants\">Variants</a>"
                   "<a href=\"#whatif\">What-if</a></nav>\n<main>\n");
    gs_rp_sec_incomplete(r);
    gs_rp_sec_verdict(r);
    gs_rp_sec_heatmap(r);
    gs_rp_sec_rooflines(r);
    gs_rp_sec_models(r);
    gs_sb_puts(sb, "<div id=\"filters\" hidden>Filter the tables below: ");
    filter_select(r, "f-gen", "generation", 0);
    filter_select(r, "f-kernel", "kernel", 1);
    filter_select(r, "f-status", "status", 2);
    gs_sb_puts(sb, "<button type=\"button\" id=\"f-reset\">reset</button> "
                   "<span id=\"f-count\" class=\"note\"></span></div>\n");
    gs_rp_sec_summary(r);
    gs_rp_sec_generations(r);
    gs_rp_sec_calibration(r);
    gs_rp_sec_portability(r);
    gs_rp_sec_engines(r);
    gs_rp_sec_timelines(r);
    gs_rp_sec_correctness(r);
    gs_rp_sec_baseline(r);
    gs_rp_sec_variants(r);
    gs_rp_sec_whatif(r);
    if (r->cut)
        gs_sb_printf(sb,
                     "<p class=\"warn\" id=\"cut\">This page reached its size budget of %zu "
                     "MiB: rows past that point were left out of its tables; every job is in "
                     "the results file.</p>\n",
                     GS_REPORT_BUDGET_BYTES >> 20);
    gs_sb_puts(sb, "</main>\n<script>");
    gs_sb_puts(sb, gs_report_asset_js);
    gs_sb_puts(sb, "</script>\n</body>\n</html>\n");
}

/* Render from parsed documents (the caller keeps them): check them, load the jobs, write the
 * page into out. */
static gs_status render_docs(const cJSON *root, const char *results_name, const cJSON *broot,
                             const char *baseline_name, const cJSON *const *extra, int n_extra,
                             const char *const *extra_names, const gs_report_opts *opts, gs_sb *out,
                             gs_error *err)
{
    rep r;
    memset(&r, 0, sizeof r);
    r.results_name = results_name ? results_name : "results";
    r.baseline_name = baseline_name ? baseline_name : "baseline";
    r.regress_pct = opts && opts->regress_pct > 0 ? opts->regress_pct : 2.0;
    r.sb = out;
    gs_status st = gs_rp_check_results(root, r.results_name, err);
    if (st == GS_OK && broot) st = gs_rp_check_results(broot, r.baseline_name, err);
    if (st == GS_OK && n_extra > GS_REPORT_MAX_EXTRA)
        st = gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "more than %d what-if/tuning files",
                          GS_REPORT_MAX_EXTRA);
    for (int i = 0; st == GS_OK && i < n_extra; i++) {
        const char *xname = extra_names && extra_names[i] ? extra_names[i] : "what-if/tuning file";
        st = gs_rp_add_extra(&r, extra[i], xname, err);
        /* a workloads.json is checked field by field and against these results */
        if (st == GS_OK && !strcmp(gs_rp_jstr(extra[i], "schema"), "gensweep-workloads"))
            st = gs_rp_check_workloads(extra[i], xname, root, err);
    }
    if (st != GS_OK) goto out;
    r.root = root;
    r.broot = broot;
    const cJSON *c;
    cJSON_ArrayForEach(c, gs_rp_jget(root, "configs"))
    {
        const char *name = gs_rp_jstr(c, "name");
        if (!*name || gs_rp_gen_index(&r, name) >= 0) continue;
        if (r.n_gens == MAX_GENS) {
            st = gs_error_set(err, GS_ERR_INVALID, r.results_name, 0, 0,
                              "more than %d generations in one report", MAX_GENS);
            goto out;
        }
        r.cfg[r.n_gens] = c;
        r.gens[r.n_gens++] = name;
    }
    st = gs_rp_load_jobs(&r, root, r.results_name, &r.jobs, &r.n_jobs, 1, err);
    if (st == GS_OK && broot)
        st = gs_rp_load_jobs(&r, broot, r.baseline_name, &r.bjobs, &r.n_bjobs, 0, err);
    if (st == GS_OK && broot) st = gs_rp_judge_baseline(&r, err);
    if (st != GS_OK) goto out;
    if (opts && opts->base_gen) {
        r.base_given = 1;
        r.base_gen = gs_rp_gen_index(&r, opts->base_gen);
        if (r.base_gen < 0) {
            st = gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                              "--base-gen '%s' is not a generation in %s", opts->base_gen,
                              r.results_name);
            goto out;
        }
    }
    gs_rp_gaps_load(&r);
    for (size_t i = 0; i < r.n_jobs; i++)
        r.answer_timing |= !strcmp(gs_rp_jstr(r.jobs[i].o, "mode"), "timing");
    for (size_t i = 0; i < r.n_jobs; i++)
        r.jobs[i].answer = gs_rp_answer_job(&r, &r.jobs[i]);
    if (gs_rp_index_jobs(&r) != GS_OK) {
        st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    render_page(&r);
    if (!gs_sb_ok(out)) st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
out:
    gs_free(r.jobs);
    gs_free(r.bjobs);
    gs_free(r.rows);
    gs_free(r.row_jobs);
    gs_free(r.row_start);
    return st;
}

static void delete_all(cJSON *root, cJSON *broot, cJSON **extra)
{
    cJSON_Delete(root);
    cJSON_Delete(broot);
    for (int i = 0; i < GS_REPORT_MAX_EXTRA; i++)
        cJSON_Delete(extra[i]);
}

gs_status gs_report_render(const char *results_text, const char *results_name,
                           const char *baseline_text, const char *baseline_name,
                           const gs_report_opts *opts, gs_sb *out, gs_error *err)
{
    gs_error local;
    if (!err) err = &local;
    const char *rname = results_name ? results_name : "results";
    const char *bname = baseline_name ? baseline_name : "baseline";
    const char *rtext = results_text ? results_text : "";
    cJSON *root = NULL, *broot = NULL, *extra[GS_REPORT_MAX_EXTRA] = {NULL};
    int n_extra = opts ? opts->n_extra : 0;
    gs_status st = GS_OK;
    if (n_extra > GS_REPORT_MAX_EXTRA || n_extra < 0)
        st = gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "more than %d what-if/tuning files",
                          GS_REPORT_MAX_EXTRA);
    if (st == GS_OK) {
        root = gs_json_parse_text(rtext, strlen(rtext), rname, err);
        if (!root) st = err->code;
    }
    if (st == GS_OK && baseline_text) {
        broot = gs_json_parse_text(baseline_text, strlen(baseline_text), bname, err);
        if (!broot) st = err->code;
    }
    const char *names[GS_REPORT_MAX_EXTRA] = {NULL};
    for (int i = 0; st == GS_OK && i < n_extra; i++) {
        const char *t = opts->extra_texts && opts->extra_texts[i] ? opts->extra_texts[i] : "";
        names[i] = opts->extra_paths ? opts->extra_paths[i] : "what-if/tuning file";
        extra[i] = gs_json_parse_text(t, strlen(t), names[i], err);
        if (!extra[i]) st = err->code;
    }
    if (st == GS_OK)
        st = render_docs(root, rname, broot, bname, (const cJSON *const *)extra, n_extra, names,
                         opts, out, err);
    delete_all(root, broot, extra);
    return st;
}

gs_status gs_report_write_opts(const char *results_json_path, const char *baseline_path_or_NULL,
                               const char *out_html, const gs_report_opts *opts, gs_error *err)
{
    gs_error local;
    if (!err) err = &local;
    if (!results_json_path || !out_html)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "results and output paths are needed");
    cJSON *root = NULL, *broot = NULL, *extra[GS_REPORT_MAX_EXTRA] = {NULL};
    gs_report_opts o = {NULL, 0, NULL, NULL, 0};
    if (opts) o = *opts;
    gs_status st = GS_OK;
    if (o.n_extra > GS_REPORT_MAX_EXTRA || o.n_extra < 0 || (o.n_extra && !o.extra_paths))
        st = gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "at most %d what-if/tuning files",
                          GS_REPORT_MAX_EXTRA);
    /* the reader every results consumer shares: regular files only, size cap, JSON errors with
     * their line */
    if (st == GS_OK && !(root = gs_json_read_file(results_json_path, err))) st = err->code;
    if (st == GS_OK && baseline_path_or_NULL &&
        !(broot = gs_json_read_file(baseline_path_or_NULL, err)))
        st = err->code;
    for (int i = 0; st == GS_OK && i < o.n_extra; i++)
        if (!(extra[i] = gs_json_read_file(o.extra_paths[i], err))) st = err->code;
    gs_sb sb;
    gs_sb_init(&sb);
    if (st == GS_OK)
        st = render_docs(root, results_json_path, broot, baseline_path_or_NULL,
                         (const cJSON *const *)extra, o.n_extra, o.extra_paths, &o, &sb, err);
    if (st == GS_OK) st = gs_sb_write_file(&sb, out_html, err);
    gs_sb_free(&sb);
    delete_all(root, broot, extra);
    return st;
}

gs_status gs_report_write(const char *results_json_path, const char *baseline_path_or_NULL,
                          const char *out_html, gs_error *err)
{
    return gs_report_write_opts(results_json_path, baseline_path_or_NULL, out_html, NULL, err);
}
