/* jobrun.c - the job pipeline and its record (see jobrun.h). */
#include "jobrun.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "gs/model.h"
#include "record.h"

#if defined(__SANITIZE_ADDRESS__)
#define GS_JOBRUN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_JOBRUN_ASAN 1
#endif
#endif

gs_status gs_job_limit_memory(double bytes, gs_error *err)
{
    if (!(bytes > 0)) return GS_OK;
#ifdef GS_JOBRUN_ASAN
    /* ASan reserves terabytes of address space: an RLIMIT_AS would only break the sanitizer */
    return gs_error_set(err, GS_ERR_UNSUPPORTED, NULL, 0, 0,
                        "is ignored in an AddressSanitizer build");
#else
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0) return GS_OK;
    rlim_t want = (rlim_t)bytes;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= want) return GS_OK;
    rl.rlim_cur = want;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return gs_error_set(err, GS_ERR_IO, NULL, 0, 0, "cannot set the limit: %s",
                            strerror(errno));
    return GS_OK;
#endif
}

/* gs_run_opts.on_timeline: the record's timeline and the source lines' costs, from what the run
 * did. */
static void timeline_of_run(const gs_timeline *tl, void *ud)
{
    gs_job_result *r = ud;
    if (r->want_lines) {
        gs_lines_free(&r->lines);
        r->lines_st = gs_lines_compute(gs_job_program(r->job), tl, &r->lines, &r->lines_err);
    }
    if (!r->want_timeline) return;
    gs_sb_free(&r->timeline);
    gs_sb_init(&r->timeline);
    r->timeline_st = gs_record_timeline(gs_job_program(r->job), tl, r->stats.total_ns,
                                        GS_TIMELINE_MAX_SLICES, &r->timeline, &r->timeline_err);
    if (r->timeline_st == GS_OK && !gs_sb_ok(&r->timeline))
        r->timeline_st = gs_error_set(&r->timeline_err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

/* Run the built, initialised job on the model or the C executor. */
static gs_status execute(const gs_job_spec *spec, const gs_job_run_opts *o, gs_job_result *r)
{
    if (o->c_executor)
        return gs_exec_program(gs_job_memory(r->job), gs_job_program(r->job), &r->err);
    gs_model *m = gs_model_create(spec->cfg, &r->err);
    if (!m) return r->err.code != GS_OK ? r->err.code : GS_ERR_INTERNAL;
    /* the trace is a by-product: one that cannot be written leaves the job's status and
     * numbers alone and is reported beside them (r->trace_err, the record's "trace_error") */
    gs_run_opts ro = {o->functional, o->sim_limit_ns, o->wall_limit_s, o->trace, NULL,
                      NULL,          &r->trace_err};
    if (o->timeline || o->lines > 0) {
        ro.on_timeline = timeline_of_run;
        ro.on_timeline_ud = r;
        r->want_timeline = o->timeline;
        r->want_lines = o->lines > 0;
        /* until the run hands its timeline over */
        r->timeline_st = r->lines_st = GS_ERR_INTERNAL;
    }
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
    if ((st == GS_OK || st == GS_ERR_MISMATCH) && o->functional && o->outputs_dir) {
        gs_status ws = gs_job_write_outputs(r->job, o->outputs_dir, &r->err);
        if (ws != GS_OK) st = ws;
    }
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
    gs_sb_free(&r->timeline);
    gs_lines_free(&r->lines);
}

gs_status gs_job_record(gs_sb *sb, const gs_job_spec *spec, const gs_job_run_opts *o,
                        const gs_job_result *r, gs_error *warn)
{
    char reason[2048] = "";
    if (r->st != GS_OK) gs_record_format_error(&r->err, reason, sizeof reason);
    char trace_error[2048] = "";
    if (o->trace && r->trace_err.code != GS_OK)
        gs_record_format_error(&r->trace_err, trace_error, sizeof trace_error);
    const gs_run_stats *stats = r->ran_model ? &r->stats : NULL;
    int complete = stats && (r->st == GS_OK || r->st == GS_ERR_MISMATCH);
    int have_tl = o->timeline && complete && r->timeline_st == GS_OK;
    if (o->timeline && complete && r->timeline_st != GS_OK && warn) *warn = r->timeline_err;
    const int have_lines = o->lines > 0 && complete && r->lines_st == GS_OK;
    if (o->lines > 0 && complete && r->lines_st != GS_OK && warn) *warn = r->lines_err;
    gs_sb lines;
    gs_sb_init(&lines);
    if (have_lines) gs_lines_json(&lines, &r->lines, (size_t)o->lines);
    gs_record_job_info info = {
        .spec = spec,
        .functional = o->functional,
        .status = r->status,
        .reason = reason,
        .stderr_tail = "",
        .stats = complete ? stats : NULL,
        .program = r->job ? gs_job_program(r->job) : NULL,
        .check = &r->check,
        .timeline_json = have_tl && r->timeline.len ? r->timeline.data : NULL,
        .lines_json = have_lines && lines.len ? lines.data : NULL,
        .trace_path = r->trace_err.code == GS_OK ? o->trace : NULL,
        .trace_error = trace_error[0] ? trace_error : NULL,
        .wall_s = stats ? stats->wall_s : 0.0,
    };
    gs_status rs = have_lines && !gs_sb_ok(&lines) ? GS_ERR_NOMEM : gs_record_write_job(sb, &info);
    gs_sb_free(&lines);
    gs_sb_putc(sb, '\n');
    if (rs == GS_OK && !gs_sb_ok(sb)) rs = GS_ERR_NOMEM;
    return rs;
}

/* The model's statistics of a completed run, one aspect a line. */
static void stats_text(gs_sb *sb, const gs_job_spec *spec, const gs_run_stats *s)
{
    const gs_config *c = spec->cfg;
    gs_sb_printf(sb, "time        %.3f us (%.0f tensor cycles @ %.2f GHz)\n", s->total_ns / 1e3,
                 s->engine_cycles[GS_ENG_TENSOR], c->tensor.clock.v / 1e9);
    gs_sb_printf(sb, "instructions %" PRIu64 " on %u core(s)\n", s->instructions, s->cores_used);
    gs_sb_printf(sb, "engines     %-8s %10s %8s %10s %10s %10s\n", "", "busy us", "util", "dep us",
                 "dma us", "port us");
    for (int e = 0; e < GS_ENGINE_COUNT; e++) {
        if (!gs_config_has_engine(c, (gs_engine)e)) continue;
        const gs_engine_stats *es = &s->engine_total[e];
        /* DMA: busy is the engine pool's occupancy (engines' busy time / engines) */
        double util =
            s->total_ns > 0 ? es->busy_ns / (s->total_ns * (double)GS_MAX(1u, s->cores_used)) : 0.0;
        gs_sb_printf(sb, "            %-8s %10.3f %7.1f%% %10.3f %10.3f %10.3f\n",
                     gs_engine_name((gs_engine)e), es->busy_ns / 1e3, 100.0 * util,
                     es->stall_dep_ns / 1e3, es->stall_dma_ns / 1e3, es->stall_port_ns / 1e3);
    }
    gs_sb_printf(sb, "flops       %.4g (%.2f TFLOP/s achieved of %.2f peak)\n", s->flops,
                 s->achieved_flops / 1e12, s->peak_flops / 1e12);
    gs_sb_printf(sb, "hbm         %.4g bytes (%.1f GB/s achieved of %.1f peak)\n", s->hbm_bytes,
                 s->achieved_hbm_bytes_per_s / 1e9, s->peak_hbm_bytes_per_s / 1e9);
    gs_sb_printf(sb, "ceilings    compute: peak rate of");
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (s->compute_engines & (1u << e)) gs_sb_printf(sb, " %s", gs_engine_name((gs_engine)e));
    if (s->compute_ceiling_flops > 0)
        gs_sb_printf(sb, " (tensor %.2f TFLOP/s on %u cores)", s->compute_ceiling_flops / 1e12,
                     GS_MAX(1u, s->cores_used));
    gs_sb_printf(sb, "; memory %.1f GB/s = min(HBM %.1f, DMA %u cores x %u engines x %.1f GB/s)\n",
                 s->memory_ceiling_bytes_per_s / 1e9, s->hbm_ceiling_bytes_per_s / 1e9,
                 GS_MAX(1u, s->cores_used), s->dma_engines_per_core, c->dma.bandwidth_per_engine.v);
    gs_sb_printf(sb,
                 "roofline    %.3f us bound on the schedule's traffic (compute %.3f, memory %.3f): "
                 "actual/bound = %.2f\n",
                 s->roofline_ns / 1e3, s->compute_bound_ns / 1e3, s->memory_bound_ns / 1e3,
                 s->roofline_ratio);
    gs_sb_printf(
        sb, "            %.3f us bound on the minimum traffic (%.4g bytes): actual/bound = %.2f\n",
        s->min_roofline_ns / 1e3, s->min_traffic_bytes, s->min_roofline_ratio);
    if (s->bound_ns > 0) {
        gs_sb_printf(sb, "bound       %.3f us, set by %s: actual/bound = %.2f; per engine (us):",
                     s->bound_ns / 1e3, s->bound_engine, s->bound_ratio);
        for (int e = 0; e < GS_ENGINE_COUNT; e++)
            if (e != GS_ENG_DMA && s->engine_bound_ns[e] > 0)
                gs_sb_printf(sb, " %s %.3f", gs_engine_name((gs_engine)e),
                             s->engine_bound_ns[e] / 1e3);
        gs_sb_printf(sb, "; memory %.3f (minimum traffic %.3f)\n", s->memory_bound_ns / 1e3,
                     s->min_memory_bound_ns / 1e3);
    }
    gs_sb_printf(sb, "dma         %.4g bytes over %u queue IDs x %u engines per core\n",
                 s->dma_bytes, s->queues_per_core, s->dma_engines_per_core);
    char label[128];
    gs_sb_printf(sb, "bottleneck  %s; critical path mostly %s\n",
                 gs_run_stats_label(s, label, sizeof label), s->bottleneck_name);
    gs_sb_printf(sb, "sbuf/psum   %" PRIu64 " / %" PRIu64 " bytes per partition (high water)\n",
                 s->sbuf_high_water, s->psum_high_water);
    gs_sb_puts(sb, "levels     ");
    for (int m = 0; m < GS_MEMSPACE_COUNT; m++) {
        const gs_level_traffic *lt = &s->level[m];
        const double gbps =
            s->total_ns > 0 ? (lt->read_bytes + lt->write_bytes) / s->total_ns : 0.0;
        gs_sb_printf(sb, "%s %s read %.4g, written %.4g bytes (%.1f GB/s)", m ? ";" : "",
                     gs_memspace_name((gs_memspace)m), lt->read_bytes, lt->write_bytes, gbps);
    }
    gs_sb_puts(sb, "\n");
}

void gs_job_text(gs_sb *sb, const gs_job_spec *spec, const gs_job_run_opts *o,
                 const gs_job_result *r)
{
    const gs_config *cfg = spec->cfg;
    gs_sb_printf(sb, "generation  %s (%s)\nkernel      %s/%s %s shape", cfg->name, cfg->family,
                 spec->kernel->name, spec->kernel->variants[spec->variant],
                 gs_dtype_name(spec->dtype));
    for (int i = 0; i < spec->n_dims; i++)
        gs_sb_printf(sb, "%s%" PRId64, i ? "x" : " ", spec->dims[i]);
    gs_sb_printf(sb, "\n");
    if (r->ran_model && (r->st == GS_OK || r->st == GS_ERR_MISMATCH)) {
        stats_text(sb, spec, &r->stats);
        if (o->lines > 0 && r->lines_st == GS_OK) gs_lines_text(sb, &r->lines, (size_t)o->lines);
    }
    if (r->check.checked)
        gs_sb_printf(sb, "check       max abs err %.3g, max rel err %.3g (tol %.3g + %.3g*|ref|)\n",
                     r->check.max_abs_err, r->check.max_rel_err, r->check.tol_abs,
                     r->check.tol_rel);
    else if (!o->functional)
        gs_sb_printf(sb, "check       skipped (timing-only)\n");
    else if (!spec->kernel->reference && r->status == GS_JOB_PASS)
        gs_sb_printf(sb, "check       none (the kernel has no reference: outputs not checked)\n");
    gs_sb_printf(sb, "status      %s\n", gs_job_status_name(r->status));
}
