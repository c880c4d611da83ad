/* jobrun.c - the job pipeline and its record (see jobrun.h). */
#include "jobrun.h"

#include <stdio.h>
#include <string.h>

#include "gs/model.h"
#include "record.h"
#include "worker.h"

gs_config *gs_job_load_config(const char *path, const char *const *sets, size_t n_sets,
                              gs_diags *diags)
{
    /* a sweep job forked from the sweep: its config, already loaded with these overrides */
    gs_config *cfg = gs_worker_take_config(path, sets, n_sets);
    if (cfg) return cfg;
    cfg = gs_config_load(path, diags);
    for (size_t i = 0; cfg && i < n_sets; i++)
        if (gs_config_set(cfg, sets[i], diags) != GS_OK) {
            gs_config_free(cfg);
            cfg = NULL;
        }
    return cfg;
}

/* Run the built, initialised job on the model or the C executor. */
static gs_status execute(const gs_job_spec *spec, const gs_job_run_opts *o, gs_job_result *r)
{
    if (o->c_executor)
        return gs_exec_program(gs_job_memory(r->job), gs_job_program(r->job), &r->err);
    gs_model *m = gs_model_create(spec->cfg, &r->err);
    if (!m) return r->err.code != GS_OK ? r->err.code : GS_ERR_INTERNAL;
    gs_run_opts ro = {o->functional, o->sim_limit_ns, o->wall_limit_s, o->trace};
    gs_status st =
        gs_model_run(m, gs_job_program(r->job), o->functional ? gs_job_memory(r->job) : NULL, &ro,
                     &r->stats, &r->err);
    r->ran_model = 1;
    gs_model_free(m);
    return st;
}

gs_status gs_job_run(const gs_job_spec *spec, const gs_job_run_opts *o, gs_job_result *r)
{
    memset(r, 0, sizeof *r);
    gs_error_clear(&r->err);
    gs_status st = gs_job_build(spec, &r->job, &r->err);
    /* the kernel refusing its shape or params: the input is wrong, not the model */
    r->bad_input = st == GS_ERR_INVALID;
    if (st == GS_OK && o->functional) st = gs_job_init_memory(r->job, &r->err);
    if (st == GS_OK) {
        if (o->c_executor && !o->functional)
            return gs_error_set(&r->err, GS_ERR_USAGE, NULL, 0, 0,
                                "--executor c has no timing; drop --timing-only");
        st = execute(spec, o, r);
    }
    /* Physics: no run may beat its roofline; if one does, the model is wrong, whatever the
     * data say. The sweep's per-kernel tests rely on this check. */
    if (st == GS_OK && r->ran_model) st = gs_job_check_roofline(&r->stats, &r->err);
    if (st == GS_OK && o->functional) st = gs_job_check_outputs(r->job, &r->check, &r->err);
    r->st = st;
    r->status = gs_job_status_from(st);
    /* a kernel must run its own check shapes everywhere: not fitting one is a kernel failure,
     * not a clean status (a perf shape may legitimately outgrow a small SBUF) */
    if (r->status == GS_JOB_DOES_NOT_FIT && gs_job_is_check_shape(spec)) {
        r->status = GS_JOB_FAIL;
        static const char prefix[] = "a check shape must fit every generation: ";
        const size_t pl = sizeof prefix - 1;
        const size_t ml = strnlen(r->err.message, sizeof r->err.message - 1 - pl);
        memmove(r->err.message + pl, r->err.message, ml);
        memcpy(r->err.message, prefix, pl);
        r->err.message[pl + ml] = '\0';
    }
    return GS_OK;
}

void gs_job_result_free(gs_job_result *r)
{
    if (!r) return;
    gs_job_free(r->job);
    r->job = NULL;
}

gs_status gs_job_record(gs_sb *sb, const gs_job_spec *spec, const gs_job_run_opts *o,
                        const gs_job_result *r, gs_error *warn)
{
    char reason[2048] = "";
    if (r->st != GS_OK) gs_record_format_error(&r->err, reason, sizeof reason);
    const gs_run_stats *stats = r->ran_model ? &r->stats : NULL;
    int complete = stats && (r->st == GS_OK || r->st == GS_ERR_MISMATCH);
    gs_sb tl;
    gs_sb_init(&tl);
    int have_tl = 0;
    if (o->timeline && complete && o->trace)
        have_tl = gs_record_timeline(o->trace, stats->total_ns, GS_TIMELINE_MAX_SLICES, &tl,
                                     warn) == GS_OK;
    if (o->trace_scratch && o->trace) remove(o->trace);
    gs_record_job_info info = {
        .spec = spec,
        .functional = o->functional,
        .status = r->status,
        .reason = reason,
        .stderr_tail = "",
        .stats = complete ? stats : NULL,
        .program = r->job ? gs_job_program(r->job) : NULL,
        .check = &r->check,
        .timeline_json = have_tl ? gs_sb_cstr(&tl) : NULL,
        .trace_path = o->trace && !o->trace_scratch ? o->trace : NULL,
        .wall_s = stats ? stats->wall_s : 0.0,
    };
    gs_record_write_job(sb, &info);
    gs_sb_putc(sb, '\n');
    gs_status rs = gs_sb_ok(sb) && gs_sb_ok(&tl) ? GS_OK : GS_ERR_NOMEM;
    gs_sb_free(&tl);
    return rs;
}
