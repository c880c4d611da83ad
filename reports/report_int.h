/*
 * report_int.h - what the report's modules share (not installed, not for other libraries): the
 * loaded results (rep), escaping and number-formatting helpers, and one function per section.
 * report_load.c reads and checks the inputs and holds the helpers; report_answer.c writes the
 * sections that answer "which generation is faster on what, and why" (verdict, speedup
 * heatmap, per-kernel rooflines); the drill-down is report_overview.c (summary, generations),
 * report_kernels.c (per-kernel tables: portability, engines, DMA), report_charts.c (timelines,
 * variants) and report_jobs.c (correctness, baseline); report_whatif.c what-if, tuning and
 * attribution; report_calibration.c model vs measured; report_models.c the model layers of
 * a model sweep; report.c the page.
 */
#ifndef GS_REPORT_INT_H
#define GS_REPORT_INT_H

#include <cjson/cJSON.h>

#include "compare.h"
#include "report.h"

/* Limits that keep a full sweep's report light (a few MB). */
#define MAX_GENS 64
#define TIMELINE_TOTAL_SLICES 5000 /* rectangles over all timelines */
#define TIMELINE_MIN_SLICES 24     /* per timeline, whatever the share */
#define TIMELINE_MAX_TRACKS 24     /* per timeline; the rest are counted, not drawn */

typedef struct rjob {
    const cJSON *o;
    const char *id, *gen, *kernel, *variant, *dtype, *status, *reason;
    char shape[96];
    double size; /* product of the shape's dims: "largest shape" = largest size */
    double time_ns;
    int gen_i;
    int row_i;        /* kernel row (kernel/variant/dtype) */
    int answer;       /* counts for the verdict, heatmap and rooflines (gs_rp_answer_job) */
    gs_job_diff diff; /* against the baseline (gs_rp_judge_baseline); zero without one */
    /* gs_rp_index_jobs: the job its speedup is taken against (the heatmap's reference; NULL:
     * none), and how many passing answer jobs its row has at its shape (on any generation) */
    const struct rjob *ref;
    int shape_passed;
} rjob;

typedef struct krow {
    const char *kernel, *variant, *dtype;
} krow;

typedef struct rep {
    const cJSON *root;
    const cJSON *cfg[MAX_GENS]; /* NULL for a generation seen only in jobs */
    const char *gens[MAX_GENS];
    int n_gens;
    rjob *jobs;
    size_t n_jobs;
    krow *rows;
    size_t n_rows;
    /* gs_rp_index_jobs: row k's jobs are jobs[row_jobs[row_start[k] .. row_start[k + 1] - 1]],
     * in file order (the sections that look at one row at a time read only its jobs) */
    size_t *row_jobs, *row_start;
    const cJSON *broot; /* baseline or NULL */
    rjob *bjobs;
    size_t n_bjobs;
    const char *results_name, *baseline_name;
    const cJSON *whatif[GS_REPORT_MAX_EXTRA]; /* "gensweep-whatif" documents */
    int n_whatif;
    const cJSON *tuning[GS_REPORT_MAX_EXTRA]; /* "gensweep-tuning" documents */
    int n_tuning;
    const cJSON *attrib[GS_REPORT_MAX_EXTRA]; /* "gensweep-attribute" documents */
    int n_attrib;
    const cJSON *calib[GS_REPORT_MAX_EXTRA]; /* "gensweep-calibration" documents */
    int n_calib;
    const cJSON *wl[GS_REPORT_MAX_EXTRA]; /* "gensweep-workloads" documents */
    int n_wl;
    int base_gen;
    int base_given;    /* --base-gen: speedups against it instead of the previous generation */
    int answer_timing; /* the answer sections use the timing-only (perf) jobs: some exist */
    double regress_pct;
    int cut; /* the page reached GS_REPORT_BUDGET_BYTES: later rows were left out */
    /* gs_rp_gaps_load: what the results lack. incomplete: "complete": false, interrupted, or
     * fewer jobs than the plan (or this shard's share of it) has; absent: how many planned jobs
     * have no result (0 when unknown); not_run: merge's list of them by id and shard, or NULL */
    int incomplete, interrupted;
    double absent, planned;
    const cJSON *not_run;
    gs_sb *sb;
} rep;

/* Longest string shown in full in a cell; longer ones are cut there, with the text up to
 * GS_RP_DETAIL_MAX in a <details> element (report_load.c, gs_rp_text_cut). */
#define GS_RP_CELL_MAX 160
#define GS_RP_DETAIL_MAX 4096

/* Job statuses: the table in results/job_status.h. */
size_t gs_rp_status_count(void);
const char *gs_rp_status_name(size_t i);
int gs_rp_status_index(const char *s);
int gs_rp_status_is_failure(const char *s);
const char *gs_rp_status_class(const char *s);
const cJSON *gs_rp_jget(const cJSON *o, const char *k);
const char *gs_rp_jstr(const cJSON *o, const char *k);
double gs_rp_jnum(const cJSON *o, const char *k);
/* What bounds a job, as a line: its "bottleneck_label" ("throughput-bound on dma (busy 91%)",
 * "latency-bound (critical path: ...)"), else (results of an older gensweep) its critical-path
 * "bottleneck"; "" when neither. */
const char *gs_rp_job_bound(const cJSON *o);
/* The same without the numbers, to count jobs by it: "throughput-bound on dma",
 * "latency-bound", else the "bottleneck"; "" when none. buf holds at least 48 bytes. */
const char *gs_rp_job_bound_class(const cJSON *o, char *buf, size_t size);
void gs_rp_text(gs_sb *sb, const char *s);
void gs_rp_put_time(gs_sb *sb, double ns);
void gs_rp_put_num(gs_sb *sb, double v);
void gs_rp_put_dv(gs_sb *sb, double v);
void gs_rp_td_num(gs_sb *sb, double v);
void gs_rp_td_time(gs_sb *sb, double ns);
void gs_rp_td_text(gs_sb *sb, const char *s);
void gs_rp_status_badge(gs_sb *sb, const char *status);
void gs_rp_row_label(gs_sb *sb, const krow *r);
void gs_rp_filter_attrs(gs_sb *sb, const char *gens, const char *kernel, const char *status);
gs_status gs_rp_check_results(const cJSON *root, const char *name, gs_error *err);
gs_status gs_rp_add_extra(rep *r, const cJSON *root, const char *name, gs_error *err);
/* A workloads.json (report_models.c) checked field by field, and against the results it is shown
 * with (its generations among theirs, not complete or uninterrupted beside results that are
 * not): GS_OK, or GS_ERR_INVALID naming the file and the field. */
gs_status gs_rp_check_workloads(const cJSON *wl, const char *name, const cJSON *results,
                                gs_error *err);
int gs_rp_gen_index(rep *r, const char *g);
gs_status gs_rp_load_jobs(rep *r, const cJSON *root, const char *name, rjob **out, size_t *n,
                          int main_file, gs_error *err);
const rjob *gs_rp_representative(const rep *r, size_t row, int gen);
/* Once the jobs are loaded and their `answer` set: the per-row job lists and every job's `ref`
 * and `shape_passed` (sorting, not a scan of every job per job). GS_ERR_NOMEM or GS_OK. */
gs_status gs_rp_index_jobs(rep *r);
/* The jobs of kernel row k: for (const rjob *j = ...) over gs_rp_row_job(r, k, q), q from 0 to
 * gs_rp_row_count(r, k) - 1. */
static inline size_t gs_rp_row_count(const rep *r, size_t k)
{
    return r->row_start[k + 1] - r->row_start[k];
}
static inline const rjob *gs_rp_row_job(const rep *r, size_t k, size_t q)
{
    return &r->jobs[r->row_jobs[r->row_start[k] + q]];
}
gs_status gs_rp_judge_baseline(rep *r, gs_error *err);
void gs_rp_section_open(gs_sb *sb, const char *id, const char *title);
void gs_rp_section_close(gs_sb *sb);
void gs_rp_put_param(gs_sb *sb, double v, const char *unit);
int gs_rp_worse_status(const char *a, const char *b);
void gs_rp_speedup_style(gs_sb *sb, double s);
int gs_rp_safe_relative_link(const char *p);

/* Whether a job feeds the answer sections: timing-only (perf suite) jobs when the results have
 * any, else every job. */
int gs_rp_answer_job(const rep *r, const rjob *j);
/* Text cut to GS_RP_CELL_MAX bytes; a longer text shows its start and keeps up to
 * GS_RP_DETAIL_MAX bytes in a <details> element. */
void gs_rp_text_cut(gs_sb *sb, const char *s);

/* Whether the page has reached its size budget (GS_REPORT_BUDGET_BYTES); every loop that writes
 * a row per kernel or job stops then, and the page says where it was cut. */
int gs_rp_budget_hit(rep *r);

/* The head of a table with one column per generation: <div class="scroll"><table
 * class="TABLE_CLASS"> and a head row of ROW_HEAD and the generations' names, up to <tbody>. */
void gs_rp_gen_table_open(rep *r, const char *table_class, const char *row_head);

/* What varies between the tables with one row per kernel row and one column per generation
 * (speedup heatmap, portability, engine time, DMA, checked outputs). */
typedef struct gs_rp_kernel_cells {
    /* Whether kernel row k gets a table row; NULL: every row. */
    int (*row_shown)(rep *r, size_t k, void *ctx);
    /* The filter attributes of kernel row k's <tr>; NULL: its kernel only
     * (gs_rp_filter_attrs with no generation or status). */
    void (*row_attrs)(rep *r, size_t k, void *ctx);
    /* The <td> of kernel row k on generation g. */
    void (*cell)(rep *r, size_t k, int g, void *ctx);
    void *ctx;
} gs_rp_kernel_cells;

/* The whole table, from gs_rp_gen_table_open to </div>; stops adding rows at the page's size
 * budget (gs_rp_budget_hit). */
void gs_rp_kernel_gen_table(rep *r, const char *table_class, const gs_rp_kernel_cells *t);

/* What an incomplete results file lacks (report_overview.c): set r's incomplete, interrupted,
 * absent, planned and not_run from the results' "complete", "interrupted", "planned_jobs",
 * "shard" and "not_run". */
void gs_rp_gaps_load(rep *r);
/* Whether the speedups of generations a and b may miss jobs: the results are incomplete and
 * (when merge named the jobs not run) one of them is on a or b. */
int gs_rp_pair_partial(const rep *r, int a, int b);
/* "No job failed." or, for incomplete results, that no job that ran failed and how many did
 * not run (a paragraph). */
void gs_rp_no_failure(rep *r);

/* Sections, in page order. */
/* The first-screen notice of incomplete results (nothing when complete): what is missing,
 * which shards and jobs, and that the speedups are partial. */
void gs_rp_sec_incomplete(rep *r);
void gs_rp_sec_verdict(rep *r);
void gs_rp_sec_heatmap(rep *r);
void gs_rp_sec_rooflines(rep *r);
void gs_rp_sec_summary(rep *r);
void gs_rp_sec_generations(rep *r);
void gs_rp_sec_portability(rep *r);
void gs_rp_sec_engines(rep *r);
void gs_rp_sec_timelines(rep *r);
void gs_rp_sec_correctness(rep *r);
void gs_rp_sec_baseline(rep *r);
void gs_rp_sec_variants(rep *r);
void gs_rp_sec_whatif(rep *r);
void gs_rp_sec_calibration(rep *r); /* report_calibration.c */
void gs_rp_sec_models(rep *r);      /* report_models.c */

#endif
