/*
 * report.h - the self-contained HTML performance report.
 *
 * Reads results files (results/RESULTS.md, schema version 1) and never runs a model, so a report
 * can be rebuilt from results alone. The output is one HTML file: inline CSS, inline SVG charts,
 * a small inline script for sorting and filtering tables; no network, no external files; every
 * section readable with JavaScript off. Every string from a results file (config, kernel, reason,
 * error text) is escaped (report_load.c).
 *
 * Sections (element ids), the answer first: verdict (per generation pair: geomean speedup,
 * bound per kernel class, what changed, attribution when given), heatmap (kernel x generation
 * speedups, pairwise), rooflines (per kernel, one point per generation), models (the layers of
 * a model sweep's workloads.json, schema "gensweep-workloads"); then the drill-down:
 * summary, generations, portability, engines, timelines, correctness, baseline, variants,
 * whatif (what-if curves and grids, tuning, attribution). All are always present; a section
 * with no data (no baseline given, no what-if results) says so. Strings from input files are
 * cut (GS_RP_CELL_MAX in report_int.h, full text up to a cap in a <details>) and repaired to
 * valid UTF-8; the page stops adding rows at GS_REPORT_BUDGET_BYTES.
 */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include "gs/common.h"
#include "gs/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The results schema version this reader understands. */
#define GS_REPORT_SCHEMA_VERSION 1
/* Size budget of a report page: past it, sections stop adding rows and say so (the results
 * file keeps everything). A hostile or huge results file cannot make the page much larger. */
#define GS_REPORT_BUDGET_BYTES ((size_t)8 * 1024 * 1024)

/* Most what-if + tuning files one report takes. */
#define GS_REPORT_MAX_EXTRA 16

typedef struct gs_report_opts {
    const char *base_gen; /* generation the speedups are relative to; NULL: the first config */
    double regress_pct;   /* baseline: a time growth beyond this percentage is a regression
                             (<= 0: the default 2 %) */
    /* What-if results (whatif.json, schema "gensweep-whatif"), tuning files (schema
     * "gensweep-tuning"), attribution, calibration and workload results ("gensweep-attribute",
     * "gensweep-calibration", "gensweep-workloads"), told apart by their "schema"
     * (results/RESULTS.md). extra_paths name
     * them (gs_report_write_opts reads them); gs_report_render takes their contents in
     * extra_texts instead. At most GS_REPORT_MAX_EXTRA. */
    const char *const *extra_paths;
    const char *const *extra_texts;
    int n_extra;
} gs_report_opts;

/*
 * Read results_json_path (and baseline_path_or_NULL, an earlier results file), write the report
 * to out_html atomically. Both are read and checked by the results library's validator
 * (results/results_schema.h, the one compare and merge use). On failure returns the status with
 * err naming the file and the problem (unreadable or special file, malformed JSON with its line,
 * unknown schema/version, wrong types, duplicate ids, ...); out_html is then not touched.
 */
gs_status gs_report_write(const char *results_json_path, const char *baseline_path_or_NULL,
                          const char *out_html, gs_error *err);
/* As gs_report_write, with options (opts may be NULL). */
gs_status gs_report_write_opts(const char *results_json_path, const char *baseline_path_or_NULL,
                               const char *out_html, const gs_report_opts *opts, gs_error *err);

/*
 * Render from JSON text already in memory into out (appended). `results_name` and
 * `baseline_name` name the inputs in errors and in the report. baseline_text may be NULL.
 */
gs_status gs_report_render(const char *results_text, const char *results_name,
                           const char *baseline_text, const char *baseline_name,
                           const gs_report_opts *opts, gs_sb *out, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
