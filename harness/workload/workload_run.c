/* workload_run.c - running a loaded workload (workload.h): every step x variant as one
 * timing-only job of a sweep (the sweep library: forked job processes, the one job path), then
 * per step the fastest variant that passed. `workload run` makes a sweep of its own on one
 * config; `sweep --suite model` adds every workload's jobs on every config to one sweep. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "jobspec.h"
#include "results.h"
#include "workload.h"

/* Statuses that say a variant cannot run here, best first: the row keeps the best one when no
 * variant passed (a variant that does not fit says more than one that is unsupported). */
static int status_rank(const char *s)
{
    static const char *const order[] = {"pass", "does-not-fit", "unsupported"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, order[i])) return i;
    return strcmp(s, "missing") != 0 ? 3 : 4;
}

static void spec_of(const gs_workload *w, const gs_wl_step *st, const gs_config *cfg, int v,
                    gs_job_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->cfg = cfg;
    spec->kernel = st->kernel;
    spec->variant = v;
    spec->dtype = (st->kernel->dtypes & (1u << w->dtype)) ? w->dtype : GS_FP32;
    spec->n_dims = st->n_dims;
    memcpy(spec->dims, st->dims, sizeof spec->dims);
    spec->seed = 1;
}

static void take_job(gs_wl_row *row, const gs_wl_step *st, int v, const cJSON *j)
{
    const char *status = gs_json_str(j, "status");
    row->variants_tried++;
    const int pass = !strcmp(status, "pass");
    if (row->variant >= 0) {
        if (!pass || !(gs_json_num(j, "time_ns") < row->one_ns)) return;
    } else if (!pass && status_rank(status) >= status_rank(row->status)) {
        return;
    }
    snprintf(row->status, sizeof row->status, "%s", status);
    snprintf(row->reason, sizeof row->reason, "%s", gs_json_str(j, "reason"));
    if (!pass) return;
    const double c = (double)st->count;
    row->variant = v;
    row->one_ns = gs_json_num(j, "time_ns");
    row->time_ns = row->one_ns * c;
    row->bound_ns = gs_json_num(j, "bound_ns") * c;
    row->bound_ratio = gs_json_num(j, "bound_ratio");
    snprintf(row->bottleneck, sizeof row->bottleneck, "%s", gs_json_str(j, "bottleneck"));
}

/* Whether the sweep already has the job (an earlier step of this workload: two residual adds,
 * two norms of one shape; or another workload of a model sweep): one job, read by every step
 * that runs it. */
static int has_job(const gs_sweep *s, const char *id)
{
    const size_t n = gs_sweep_job_count(s);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(gs_sweep_job_id(s, i), id)) return 1;
    return 0;
}

int gs_workload_add_jobs(const gs_workload *w, gs_sweep *s, size_t ci)
{
    const gs_config *cfg = gs_sweep_config(s, ci);
    for (int i = 0; i < w->n_steps; i++) {
        const gs_wl_step *st = &w->steps[i];
        for (int v = 0; v < st->kernel->n_variants; v++) {
            if (st->variant >= 0 && v != st->variant) continue;
            gs_job_spec spec;
            spec_of(w, st, cfg, v, &spec);
            gs_sb id;
            gs_sb_init(&id);
            gs_job_spec_id(&id, &spec);
            const int dup = gs_sb_ok(&id) && has_job(s, gs_sb_cstr(&id));
            const int ok = gs_sb_ok(&id);
            gs_sb_free(&id);
            if (!ok || (!dup && gs_sweep_add(s, ci, &spec, 0) != 0)) return -1;
        }
    }
    return 0;
}

void gs_workload_collect(const gs_workload *w, const gs_sweep *s, size_t ci, const cJSON *doc,
                         int interrupted, gs_wl_result *r)
{
    memset(r, 0, sizeof *r);
    const gs_config *cfg = gs_sweep_config(s, ci);
    snprintf(r->generation, sizeof r->generation, "%s", cfg->name);
    r->interrupted = interrupted;
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    for (int i = 0; i < w->n_steps; i++) {
        const gs_wl_step *st = &w->steps[i];
        gs_wl_row *row = &r->rows[i];
        row->variant = -1;
        row->time_ns = row->one_ns = row->bound_ns = row->bound_ratio = NAN;
        snprintf(row->status, sizeof row->status, "missing");
        snprintf(row->reason, sizeof row->reason, "%s",
                 interrupted ? "not run: the sweep was interrupted" : "no job record");
        for (int v = 0; v < st->kernel->n_variants; v++) {
            if (st->variant >= 0 && v != st->variant) continue;
            gs_job_spec spec;
            spec_of(w, st, cfg, v, &spec);
            gs_sb id;
            gs_sb_init(&id);
            gs_job_spec_id(&id, &spec);
            const cJSON *j;
            cJSON_ArrayForEach(j, jobs)
            {
                if (!strcmp(gs_json_str(j, "id"), gs_sb_cstr(&id))) take_job(row, st, v, j);
            }
            gs_sb_free(&id);
        }
        if (row->variant >= 0)
            r->time_ns += row->time_ns;
        else
            r->n_failed++;
    }
}

gs_status gs_workload_run(const gs_workload *w, const gs_sweep_opts *ov, gs_wl_result *r,
                          gs_diags *d)
{
    memset(r, 0, sizeof *r);
    gs_sweep_opts so = *ov;
    so.n_configs = 1;
    so.no_report = 1;
    so.quiet = 1;
    so.timelines = 0;
    so.no_tuning = 1; /* each variant at its kernel defaults: the rule of workloads/README.md */
    if (!so.out_dir) so.out_dir = GS_WL_DEFAULT_OUT;
    gs_sweep *s = gs_sweep_create(&so, d);
    if (!s) return GS_ERR_USAGE;
    if (gs_workload_add_jobs(w, s, 0) != 0) {
        gs_sweep_free(s);
        gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return GS_ERR_NOMEM;
    }
    gs_error err;
    gs_error_clear(&err);
    /* --out must be a directory no other sweep is writing, checked before any job runs, as
     * `sweep` does: a file or /dev/null is a usage error, not a failure of every step */
    int lock_fd = gs_sweep_lock_out(s, &err);
    if (lock_fd < 0) {
        gs_diags_add(d, GS_ERR_USAGE, err.file[0] ? err.file : NULL, err.line, err.column, "%s",
                     err.message);
        gs_sweep_free(s);
        return GS_ERR_USAGE;
    }
    int intr = 0;
    cJSON *doc = gs_sweep_execute(s, &intr, &err);
    if (!doc) {
        if (err.code != GS_OK)
            gs_diags_add(d, err.code, err.file[0] ? err.file : NULL, err.line, err.column, "%s",
                         err.message);
        close(lock_fd);
        gs_sweep_free(s);
        return err.code != GS_OK ? err.code : GS_ERR_INTERNAL;
    }
    gs_workload_collect(w, s, 0, doc, intr, r);
    /* the job records, as the help says (before, the folder was made and left empty) */
    if (gs_results_write_dir(doc, so.out_dir, &err) != GS_OK) {
        r->records_unwritten = 1;
        gs_diags_add(d, err.code, err.file[0] ? err.file : NULL, err.line, err.column, "%s",
                     err.message);
    }
    cJSON_Delete(doc);
    close(lock_fd);
    gs_sweep_free(s);
    return GS_OK;
}
