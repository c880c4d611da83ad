/* workload_json.c - workload results as JSON (workload.h): the members of one generation's
 * result, shared by `workload run --json` (one document per run) and `sweep --suite model`
 * (workloads.json, every workload on every generation), so both carry the same rows. */
#include <math.h>
#include <string.h>

#include "workload.h"

void gs_workload_json_result(gs_jw *j, const gs_workload *w, const gs_wl_result *r)
{
    gs_jw_key(j, "rows");
    gs_jw_begin_array(j, GS_JW_LINES);
    for (int i = 0; i < w->n_steps; i++) {
        const gs_wl_step *st = &w->steps[i];
        const gs_wl_row *row = &r->rows[i];
        gs_jw_begin_object(j, GS_JW_COMPACT);
        gs_jw_kstr(j, "step", st->name);
        gs_jw_kstr(j, "kernel", st->kernel->name);
        if (row->variant >= 0)
            gs_jw_kstr(j, "variant", st->kernel->variants[row->variant]);
        else
            gs_jw_knull(j, "variant");
        gs_jw_key(j, "shape");
        gs_jw_begin_array(j, GS_JW_COMPACT);
        for (int k = 0; k < st->n_dims; k++)
            gs_jw_int(j, st->dims[k]);
        gs_jw_end_array(j);
        gs_jw_kint(j, "count", st->count);
        gs_jw_kstr(j, "status", row->status);
        gs_jw_kstr(j, "reason", row->reason);
        if (row->variant >= 0) {
            gs_jw_knum(j, "time_ns", row->time_ns);
            gs_jw_knum(j, "share", row->time_ns / r->time_ns);
            if (isnan(row->bound_ns)) {
                gs_jw_knull(j, "bound_ns");
                gs_jw_knull(j, "bound_ratio");
            } else {
                gs_jw_knum(j, "bound_ns", row->bound_ns);
                gs_jw_knum(j, "bound_ratio", row->bound_ratio);
            }
            gs_jw_kstr(j, "bottleneck", row->bottleneck);
        } else {
            gs_jw_knull(j, "time_ns");
        }
        gs_jw_end_object(j);
    }
    gs_jw_end_array(j);
    gs_jw_knum(j, "time_ns", r->time_ns);
    gs_jw_kbool(j, "complete", r->n_failed == 0);
    gs_jw_kint(j, "steps_not_run", r->n_failed);
    if (!strcmp(w->phase, "decode") && r->time_ns > 0 && !r->n_failed)
        gs_jw_knum(j, "tokens_per_s_per_layer", (double)w->batch * 1e9 / r->time_ns);
    else
        gs_jw_knull(j, "tokens_per_s_per_layer");
}

/* The workload's own members: name, file, phase, dtype, batch, dims. */
static void workload_members(gs_jw *j, const gs_workload *w)
{
    gs_jw_kstr(j, "workload", w->name);
    gs_jw_kstr(j, "file", w->path);
    gs_jw_kstr(j, "phase", w->phase);
    gs_jw_kstr(j, "dtype", gs_dtype_name(w->dtype));
    gs_jw_kint(j, "batch", w->batch);
    gs_jw_key(j, "dims");
    gs_jw_begin_object(j, GS_JW_COMPACT);
    for (int i = 0; i < w->n_dims; i++)
        gs_jw_kint(j, w->dim_names[i], w->dim_values[i]);
    gs_jw_end_object(j);
}

void gs_workload_json(gs_sb *sb, const gs_workload *w, const gs_wl_result *r)
{
    gs_jw j;
    gs_jw_init(&j, sb);
    gs_jw_begin_object(&j, GS_JW_LINES);
    gs_jw_kstr(&j, "schema", "gensweep-workload");
    gs_jw_kint(&j, "schema_version", 1);
    workload_members(&j, w);
    gs_jw_kstr(&j, "generation", r->generation);
    gs_workload_json_result(&j, w, r);
    gs_jw_end_object(&j);
    gs_sb_putc(sb, '\n');
}

void gs_wl_suite_json(gs_sb *sb, const gs_wl_suite *ws, const gs_sweep *s, const gs_wl_result *res,
                      int interrupted)
{
    const size_t nc = gs_sweep_config_count(s);
    int complete = !interrupted;
    for (size_t i = 0; i < ws->n * nc; i++)
        complete &= res[i].n_failed == 0;
    gs_jw j;
    gs_jw_init(&j, sb);
    gs_jw_begin_object(&j, GS_JW_LINES);
    gs_jw_kstr(&j, "schema", "gensweep-workloads");
    gs_jw_kint(&j, "schema_version", 1);
    gs_jw_kbool(&j, "complete", complete);
    gs_jw_kbool(&j, "interrupted", interrupted);
    gs_jw_key(&j, "generations");
    gs_jw_begin_array(&j, GS_JW_COMPACT);
    for (size_t c = 0; c < nc; c++)
        gs_jw_str(&j, gs_sweep_config(s, c)->name);
    gs_jw_end_array(&j);
    gs_jw_key(&j, "workloads");
    gs_jw_begin_array(&j, GS_JW_LINES);
    for (size_t k = 0; k < ws->n; k++) {
        const gs_workload *w = ws->w[k];
        gs_jw_begin_object(&j, GS_JW_LINES);
        workload_members(&j, w);
        gs_jw_key(&j, "results");
        gs_jw_begin_array(&j, GS_JW_LINES);
        for (size_t c = 0; c < nc; c++) {
            const gs_wl_result *r = &res[k * nc + c];
            gs_jw_begin_object(&j, GS_JW_LINES);
            gs_jw_kstr(&j, "generation", r->generation);
            gs_workload_json_result(&j, w, r);
            gs_jw_end_object(&j);
        }
        gs_jw_end_array(&j);
        gs_jw_end_object(&j);
    }
    gs_jw_end_array(&j);
    gs_jw_end_object(&j);
    gs_sb_putc(sb, '\n');
}
