/* record.c - job and config records of results.json, and the run's timeline aggregation (see
 * record.h and results/RESULTS.md). */
#include "record.h"

#include "jobspec.h"
#include "gs/jsonw.h"
#include "gs/trace.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The working directory with a trailing '/', or "" when it cannot be read. Paths under it are
 * recorded relative to it, so results and messages read the same in every clone of the
 * repository (kernel source locations are already relative: -ffile-prefix-map). */
static const char *cwd_prefix(void)
{
    static char buf[4096];
    static int done;
    if (!done) {
        done = 1;
        if (getcwd(buf, sizeof buf - 1) && buf[0] == '/' && buf[1]) {
            size_t n = strlen(buf);
            buf[n] = '/';
            buf[n + 1] = '\0';
        } else {
            buf[0] = '\0';
        }
    }
    return buf;
}

const char *gs_record_rel_path(const char *path)
{
    if (!path) return "";
    const char *cwd = cwd_prefix();
    size_t n = strlen(cwd);
    if (n && !strncmp(path, cwd, n) && path[n]) return path + n;
    return path;
}

void gs_record_format_error(const gs_error *err, char *buf, size_t size)
{
    gs_error_format(err, buf, size);
    /* Messages quote config paths too: drop the working-directory prefix wherever it appears. */
    const char *cwd = cwd_prefix();
    size_t n = strlen(cwd);
    if (!n) return;
    char *p = buf;
    while ((p = strstr(p, cwd)) != NULL)
        memmove(p, p + n, strlen(p + n) + 1);
}

/* A ratio that is null (not 0) when the denominator is 0. */
static void kratio(gs_jw *w, const char *k, double num, double den)
{
    if (den > 0)
        gs_jw_knum(w, k, num / den);
    else
        gs_jw_knull(w, k);
}

/* The run's metrics (RESULTS.md), from the model's statistics. */
static void write_stats(gs_jw *w, const gs_run_stats *st, const gs_config *c)
{
    gs_jw_knum(w, "time_ns", st->total_ns);
    /* the kernel's time is from its first trigger to its last completion; a launch costs more
     * end to end (what published benchmark latencies measure), charged here, not in time_ns */
    const double launch = c ? c->launch_overhead.v : 0;
    gs_jw_knum(w, "launch_ns", launch);
    gs_jw_knum(w, "time_with_launch_ns", st->total_ns + launch);
    gs_jw_knum(w, "instructions", (double)st->instructions);
    gs_jw_knum(w, "cores_used", st->cores_used);
    gs_jw_knum(w, "flops", st->flops);
    /* the model counts FLOPs of every engine in one number; no tensor-only split yet */
    gs_jw_knull(w, "tensor_flops");
    gs_jw_knum(w, "hbm_bytes", st->hbm_bytes);
    gs_jw_knum(w, "dma_bytes", st->dma_bytes);
    kratio(w, "arith_intensity", st->flops, st->hbm_bytes);
    gs_jw_knum(w, "achieved_tflops", st->achieved_flops / 1e12);
    gs_jw_knum(w, "peak_tflops", st->peak_flops / 1e12);
    gs_jw_knum(w, "achieved_hbm_gbps", st->achieved_hbm_bytes_per_s / 1e9);
    gs_jw_knum(w, "peak_hbm_gbps", st->peak_hbm_bytes_per_s / 1e9);
    gs_jw_knum(w, "compute_bound_ns", st->compute_bound_ns);
    gs_jw_knum(w, "memory_bound_ns", st->memory_bound_ns);
    if (st->roofline_ns > 0) {
        gs_jw_knum(w, "roofline_ns", st->roofline_ns);
        gs_jw_knum(w, "roofline_ratio", st->roofline_ratio);
    } else {
        gs_jw_knull(w, "roofline_ns");
        gs_jw_knull(w, "roofline_ratio");
    }
    if (st->min_roofline_ns > 0) {
        gs_jw_knum(w, "min_traffic_bytes", st->min_traffic_bytes);
        gs_jw_knum(w, "min_roofline_ns", st->min_roofline_ns);
        gs_jw_knum(w, "min_roofline_ratio", st->min_roofline_ratio);
    } else {
        gs_jw_knull(w, "min_traffic_bytes");
        gs_jw_knull(w, "min_roofline_ns");
        gs_jw_knull(w, "min_roofline_ratio");
    }
    /* the per-engine bound (gs_run_stats): every compute engine's minimum time, the largest
     * of them and the memory bounds, and which one that is */
    if (st->bound_ns > 0) {
        gs_jw_knum(w, "bound_ns", st->bound_ns);
        gs_jw_knum(w, "bound_ratio", st->bound_ratio);
        gs_jw_kstr(w, "bound_engine", st->bound_engine);
    } else {
        gs_jw_knull(w, "bound_ns");
        gs_jw_knull(w, "bound_ratio");
        gs_jw_knull(w, "bound_engine");
    }
    gs_jw_key(w, "engine_bound_ns");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (e != GS_ENG_DMA) gs_jw_knum(w, gs_engine_name((gs_engine)e), st->engine_bound_ns[e]);
    gs_jw_end_object(w);
    gs_jw_knum(w, "compute_ceiling_tflops", st->compute_ceiling_flops / 1e12);
    gs_jw_knum(w, "dma_ceiling_gbps", st->dma_ceiling_bytes_per_s / 1e9);
    gs_jw_knum(w, "hbm_ceiling_gbps", st->hbm_ceiling_bytes_per_s / 1e9);
    gs_jw_knum(w, "memory_ceiling_gbps", st->memory_ceiling_bytes_per_s / 1e9);
    gs_jw_key(w, "compute_engines");
    gs_jw_begin_array(w, GS_JW_COMPACT);
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (st->compute_engines & (1u << e)) gs_jw_str(w, gs_engine_name((gs_engine)e));
    gs_jw_end_array(w);
    /* the DMA structure: per engine and per queue ID, summed over the cores used */
    gs_jw_key(w, "dma");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_knum(w, "engines", st->dma_engines_per_core);
    gs_jw_knum(w, "queues", st->queues_per_core);
    const unsigned ne = GS_MIN(st->dma_engines_per_core, (unsigned)GS_MAX_QUEUES);
    const unsigned nq = GS_MIN(st->queues_per_core, (unsigned)GS_MAX_QUEUES);
    const unsigned nc = GS_MIN(GS_MAX(st->cores_used, 1u), (unsigned)GS_MAX_CORES);
    static const char *const arrays[] = {"engine_busy_ns", "engine_bytes", "queue_busy_ns",
                                         "queue_bytes", "queue_transfers"};
    for (int a = 0; a < 5; a++) {
        gs_jw_key(w, arrays[a]);
        gs_jw_begin_array(w, GS_JW_COMPACT);
        const unsigned n = a < 2 ? ne : nq;
        for (unsigned x = 0; x < n; x++) {
            double v = 0;
            for (unsigned core = 0; core < nc; core++) {
                if (a == 0) v += st->dma_engine[core][x].busy_ns;
                if (a == 1) v += st->dma_engine[core][x].bytes;
                if (a == 2) v += st->queue[core][x].busy_ns;
                if (a == 3) v += st->queue[core][x].bytes;
                if (a == 4) v += (double)st->queue[core][x].transfers;
            }
            gs_jw_num(w, v);
        }
        gs_jw_end_array(w);
    }
    gs_jw_end_object(w);
    /* bytes read and written per memory level by the instructions' operands (gs/stats.h),
     * and their sum over the run's time */
    gs_jw_key(w, "levels");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    for (int m = 0; m < GS_MEMSPACE_COUNT; m++) {
        const gs_level_traffic *lt = &st->level[m];
        gs_jw_key(w, gs_memspace_name((gs_memspace)m));
        gs_jw_begin_object(w, GS_JW_COMPACT);
        gs_jw_knum(w, "read_bytes", lt->read_bytes);
        gs_jw_knum(w, "write_bytes", lt->write_bytes);
        kratio(w, "gbps", lt->read_bytes + lt->write_bytes, st->total_ns);
        gs_jw_end_object(w);
    }
    gs_jw_end_object(w);
    gs_jw_key(w, "first_instr");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_knum(w, "trigger_ns", st->first_trigger_ns);
    gs_jw_knum(w, "start_ns", st->first_start_ns);
    gs_jw_knum(w, "end_ns", st->first_end_ns);
    gs_jw_knum(w, "dma_engines", st->first_engines_used);
    gs_jw_end_object(w);
    gs_jw_kstr(w, "bottleneck", st->bottleneck_name);
    /* throughput- or latency-bound (gs/stats.h), and the line that says it */
    if (st->bound_kind[0]) {
        char label[128];
        gs_jw_kstr(w, "bound_kind", st->bound_kind);
        gs_jw_kstr(w, "busiest", st->busiest);
        gs_jw_knum(w, "busy_share", st->busiest_share);
        gs_jw_kstr(w, "bottleneck_label", gs_run_stats_label(st, label, sizeof label));
    } else {
        gs_jw_knull(w, "bound_kind");
        gs_jw_knull(w, "busiest");
        gs_jw_knull(w, "busy_share");
        gs_jw_knull(w, "bottleneck_label");
    }
    gs_jw_key(w, "critical_path_ns");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        gs_jw_knum(w, gs_engine_name((gs_engine)e), st->critical_path_ns[e]);
    gs_jw_knum(w, "hbm", st->critical_path_hbm_ns);
    gs_jw_end_object(w);
    gs_jw_key(w, "engines");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    for (int e = 0; e < GS_ENGINE_COUNT; e++) {
        if (!gs_config_has_engine(c, (gs_engine)e)) continue;
        const gs_engine_stats *es = &st->engine_total[e];
        gs_jw_key(w, gs_engine_name((gs_engine)e));
        gs_jw_begin_object(w, GS_JW_COMPACT);
        gs_jw_knum(w, "busy_ns", es->busy_ns);
        gs_jw_knum(w, "stall_dep_ns", es->stall_dep_ns);
        gs_jw_knum(w, "stall_dma_ns", es->stall_dma_ns);
        gs_jw_knum(w, "stall_port_ns", es->stall_port_ns);
        gs_jw_knum(w, "instructions", (double)es->instructions);
        gs_jw_end_object(w);
    }
    gs_jw_end_object(w);
}

gs_status gs_record_write_job(gs_sb *sb, const gs_record_job_info *r)
{
    const gs_job_spec *s = r->spec;
    const gs_kernel_def *k = s->kernel;
    gs_jw w;
    gs_jw_init(&w, sb);
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    gs_sb id;
    gs_sb_init(&id);
    gs_job_spec_id(&id, s);
    gs_jw_kstr(&w, "id", gs_sb_cstr(&id));
    gs_sb_free(&id);
    gs_jw_kstr(&w, "generation", s->cfg->name);
    gs_jw_kstr(&w, "kernel", k->name);
    gs_jw_kstr(&w, "variant", k->variants[s->variant]);
    gs_jw_kstr(&w, "dtype", gs_dtype_name(s->dtype));
    gs_jw_key(&w, "shape");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (int i = 0; i < s->n_dims; i++)
        gs_jw_int(&w, s->dims[i]);
    gs_jw_end_array(&w);
    gs_jw_key(&w, "dims");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (int i = 0; i < k->n_dims; i++)
        gs_jw_str(&w, k->dim_names[i]);
    gs_jw_end_array(&w);
    gs_jw_key(&w, "params");
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    for (int i = 0; i < k->n_params; i++)
        gs_jw_kint(&w, k->param_names[i], s->params[i]);
    gs_jw_end_object(&w);
    gs_jw_kstr(&w, "mode", r->functional ? "functional" : "timing");
    gs_jw_kstr(&w, "status", gs_job_status_name(r->status));
    gs_jw_kstr(&w, "reason", r->reason ? r->reason : "");
    gs_jw_kstr(&w, "stderr_tail", r->stderr_tail ? r->stderr_tail : "");

    if (r->stats) {
        write_stats(&w, r->stats, s->cfg);
    } else {
        static const char *const null_keys[] = {"time_ns",
                                                "launch_ns",
                                                "time_with_launch_ns",
                                                "instructions",
                                                "cores_used",
                                                "flops",
                                                "tensor_flops",
                                                "hbm_bytes",
                                                "dma_bytes",
                                                "arith_intensity",
                                                "achieved_tflops",
                                                "peak_tflops",
                                                "achieved_hbm_gbps",
                                                "peak_hbm_gbps",
                                                "compute_bound_ns",
                                                "memory_bound_ns",
                                                "roofline_ns",
                                                "roofline_ratio",
                                                "min_traffic_bytes",
                                                "min_roofline_ns",
                                                "min_roofline_ratio",
                                                "bound_ns",
                                                "bound_ratio",
                                                "bound_engine",
                                                "engine_bound_ns",
                                                "compute_ceiling_tflops",
                                                "dma_ceiling_gbps",
                                                "hbm_ceiling_gbps",
                                                "memory_ceiling_gbps",
                                                "compute_engines",
                                                "dma",
                                                "levels",
                                                "first_instr",
                                                "bottleneck",
                                                "bound_kind",
                                                "busiest",
                                                "busy_share",
                                                "bottleneck_label",
                                                "critical_path_ns",
                                                "engines"};
        for (size_t i = 0; i < GS_ARRAY_LEN(null_keys); i++) {
            /* a built program still knows its instruction count */
            if (!strcmp(null_keys[i], "instructions") && r->program)
                gs_jw_knum(&w, "instructions", (double)gs_program_count(r->program));
            else
                gs_jw_knull(&w, null_keys[i]);
        }
    }
    if (r->program) {
        gs_jw_knum(&w, "sbuf_high_water", (double)gs_program_sbuf_high_water(r->program));
        gs_jw_knum(&w, "psum_high_water", (double)gs_program_psum_high_water(r->program));
    } else {
        gs_jw_knull(&w, "sbuf_high_water");
        gs_jw_knull(&w, "psum_high_water");
    }
    gs_jw_key(&w, "error");
    if (r->check && r->check->checked) {
        const gs_job_check *ck = r->check;
        gs_jw_begin_object(&w, GS_JW_COMPACT);
        gs_jw_kbool(&w, "checked", 1);
        gs_jw_knum(&w, "max_abs", ck->max_abs_err);
        gs_jw_knum(&w, "max_rel", ck->max_rel_err);
        gs_jw_knum(&w, "tol_abs", ck->tol_abs);
        gs_jw_knum(&w, "tol_rel", ck->tol_rel);
        gs_jw_kstr(&w, "worst", ck->worst);
        gs_jw_knum(&w, "mismatches", (double)ck->mismatches);
        gs_jw_end_object(&w);
    } else {
        gs_jw_null(&w);
    }
    if (r->timeline_json) {
        gs_jw_key(&w, "timeline");
        gs_jw_raw(&w, r->timeline_json);
    }
    if (r->lines_json) {
        gs_jw_key(&w, "lines");
        gs_jw_raw(&w, r->lines_json);
    }
    gs_jw_kstr(&w, "trace", r->trace_path);
    if (r->trace_error) gs_jw_kstr(&w, "trace_error", r->trace_error);
    if (r->wall_s >= 0) gs_jw_knum(&w, "wall_s", r->wall_s);
    gs_jw_end_object(&w);
    return gs_jw_finish(&w, NULL);
}

gs_status gs_record_write_config(gs_sb *sb, const gs_config *c)
{
    gs_jw w;
    gs_jw_init(&w, sb);
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    gs_jw_kstr(&w, "name", c->name);
    gs_jw_kstr(&w, "family", c->family);
    gs_jw_kstr(&w, "path", gs_record_rel_path(c->path));
    gs_jw_kstr(&w, "description", c->description);
    gs_jw_key(&w, "sources");
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    for (size_t i = 0; i < c->n_sources; i++)
        gs_jw_kstr(&w, c->source_keys[i], c->source_refs[i]);
    gs_jw_end_object(&w);
    gs_jw_key(&w, "params");
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    size_t nf = 0;
    const gs_config_field *fields = gs_config_fields(&nf);
    for (size_t i = 0; i < nf; i++) {
        const gs_num *n = gs_config_get(c, fields[i].path);
        gs_jw_key(&w, fields[i].path);
        gs_jw_begin_object(&w, GS_JW_COMPACT);
        if (n && n->src)
            gs_jw_knum(&w, "value", n->v);
        else
            gs_jw_knull(&w, "value");
        gs_jw_kstr(&w, "unit", gs_unit_record_name(fields[i].unit));
        gs_jw_kstr(&w, "src", n ? n->src : NULL);
        gs_jw_kstr(&w, "note", n ? n->note : NULL);
        gs_jw_end_object(&w);
    }
    gs_jw_end_object(&w);
    gs_jw_key(&w, "dtypes");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (c->dtypes & (1u << t)) gs_jw_str(&w, gs_dtype_name((gs_dtype)t));
    gs_jw_end_array(&w);
    gs_jw_key(&w, "ops");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    for (int o = 0; o < GS_OPCODE_COUNT; o++)
        if (c->ops & (1ull << o)) gs_jw_str(&w, gs_opcode_name((gs_opcode)o));
    gs_jw_end_array(&w);
    gs_jw_key(&w, "peaks");
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    gs_jw_knum(&w, "bf16_tflops", gs_config_peak_flops(c, GS_BF16) / 1e12);
    gs_jw_knum(&w, "fp32_tflops", gs_config_peak_flops(c, GS_FP32) / 1e12);
    gs_jw_knum(&w, "fp8_tflops", gs_config_peak_flops(c, GS_FP8_E4M3) / 1e12);
    gs_jw_knum(&w, "hbm_gbps", gs_config_hbm_bytes_per_s(c) / 1e9);
    gs_jw_knum(&w, "sbuf_mib", c->sbuf_bytes.v / (1024.0 * 1024.0));
    gs_jw_knum(&w, "cores", c->cores.v);
    gs_jw_end_object(&w);
    gs_jw_end_object(&w);
    return gs_jw_finish(&w, NULL);
}

/* ---- timeline aggregation ---- */

typedef struct tl_slice {
    double t0, t1;
    const char *op;   /* opcode name (static) */
    const char *file; /* the instruction's source, formatted when written */
    int line;
    double count;
    double busy;  /* time its instructions cover (<= t1 - t0 once merged across gaps) */
    size_t index; /* instruction: orders slices with equal times as they completed */
} tl_slice;

typedef struct tl_track {
    char name[96];
    tl_slice *s;
    size_t n, cap;
} tl_track;

static int slice_cmp(const void *a, const void *b)
{
    const tl_slice *x = a, *y = b;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    if (x->t1 != y->t1) return x->t1 < y->t1 ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Merge neighbours whose gap is <= gap (same opcode unless any_op); returns the new count. */
static size_t merge_pass(tl_slice *s, size_t n, double gap, int any_op)
{
    if (!n) return 0;
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        tl_slice *d = &s[w];
        int same = !strcmp(d->op, s[i].op);
        if (s[i].t0 - d->t1 <= gap && (same || any_op)) {
            if (!same) d->op = "mixed";
            /* slices start in order, so d covers all of [s[i].t0, d->t1] that it spans: only
             * what s[i] covers beyond that is new busy time (exact for single instructions;
             * for a merged s[i], at most what it covers) */
            const double overlap = GS_MAX(0.0, GS_MIN(d->t1, s[i].t1) - s[i].t0);
            d->busy += GS_MAX(0.0, s[i].busy - overlap);
            d->t1 = GS_MAX(d->t1, s[i].t1);
            d->count += s[i].count;
        } else {
            s[++w] = s[i];
        }
    }
    return w + 1;
}

gs_status gs_record_timeline(const gs_program *p, const gs_timeline *tl, double total_ns,
                             int max_slices, gs_sb *sb, gs_error *err)
{
    /* one track per stream (a compute engine or DMA queue of a core), in stream id order:
     * core, then engine, then queue, which is the order of the trace's (pid, tid) */
    const size_t nt = (size_t)tl->cores * tl->streams_per_core;
    tl_track *tracks = gs_calloc(nt ? nt : 1, sizeof *tracks);
    if (!tracks) return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    gs_status st = GS_OK;
    for (size_t id = 0; id < nt; id++) {
        const gs_engine e = gs_timeline_stream_engine(tl, (unsigned)id);
        const unsigned core = (unsigned)(id / tl->streams_per_core);
        if (e == GS_ENG_DMA)
            snprintf(tracks[id].name, sizeof tracks[id].name, "c%u dma q%u", core,
                     (unsigned)(id % tl->streams_per_core) - (unsigned)GS_ENG_DMA);
        else
            snprintf(tracks[id].name, sizeof tracks[id].name, "c%u %s", core, gs_engine_name(e));
    }
    for (size_t i = 0; i < tl->n; i++) {
        const gs_timeline_instr *x = &tl->instr[i];
        if (!x->done || x->stream >= nt) continue;
        tl_track *t = &tracks[x->stream];
        if (t->n == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 64;
            tl_slice *g = gs_realloc(t->s, nc * sizeof *g);
            if (!g) {
                st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                goto done;
            }
            t->s = g;
            t->cap = nc;
        }
        const gs_instr *in = gs_program_instr(p, i);
        /* the values a trace gives after its microsecond text is read back: ps / 1e6 is
         * correctly rounded either way, so these are the same doubles */
        const double ts_us = (double)x->start_ps / 1e6;
        const double dur_us = (double)(x->end_ps - x->start_ps) / 1e6;
        tl_slice *s = &t->s[t->n++];
        s->t0 = ts_us * 1e3;
        s->t1 = (ts_us + dur_us) * 1e3;
        s->op = gs_opcode_name(in->op);
        s->file = in->file;
        s->line = in->line;
        s->count = 1;
        s->busy = s->t1 - s->t0;
        s->index = i;
    }
    gs_jw w;
    gs_jw_init(&w, sb);
    gs_jw_begin_object(&w, GS_JW_COMPACT);
    gs_jw_knum(&w, "total_ns", total_ns);
    gs_jw_key(&w, "tracks");
    gs_jw_begin_array(&w, GS_JW_COMPACT);
    if (max_slices < 1) max_slices = 1;
    for (size_t i = 0; i < nt; i++) {
        tl_track *t = &tracks[i];
        if (!t->n) continue; /* idle engines and queues: nothing to draw */
        qsort(t->s, t->n, sizeof *t->s, slice_cmp);
        /* Back-to-back slices of one opcode first, then wider gaps until the track is small
         * enough; the gap grows geometrically so this takes O(log) passes. */
        double span = GS_MAX(total_ns, t->s[t->n - 1].t1);
        /* the time the track is busy: the union of its instructions (a DMA queue has several
         * transfers in flight) */
        double busy = 0.0, reach = -INFINITY;
        for (size_t k = 0; k < t->n; k++) {
            busy += GS_MAX(0.0, t->s[k].t1 - GS_MAX(t->s[k].t0, reach));
            reach = GS_MAX(reach, t->s[k].t1);
        }
        double gap = 0.0;
        t->n = merge_pass(t->s, t->n, gap, 0);
        for (gap = span / (8.0 * max_slices); t->n > (size_t)max_slices && gap <= span; gap *= 2)
            t->n = merge_pass(t->s, t->n, gap, 0);
        for (gap = span / (8.0 * max_slices); t->n > (size_t)max_slices; gap *= 2)
            t->n = merge_pass(t->s, t->n, gap, 1);
        gs_jw_begin_object(&w, GS_JW_COMPACT);
        gs_jw_kstr(&w, "name", t->name);
        gs_jw_knum(&w, "busy_ns", busy);
        gs_jw_key(&w, "slices");
        gs_jw_begin_array(&w, GS_JW_COMPACT);
        for (size_t k = 0; k < t->n; k++) {
            const tl_slice *s = &t->s[k];
            gs_jw_begin_array(&w, GS_JW_COMPACT);
            gs_jw_num(&w, s->t0);
            gs_jw_num(&w, s->t1);
            gs_jw_str(&w, s->op);
            char src[GS_ERROR_FILE_MAX + 24];
            gs_trace_format_src(src, sizeof src, s->file, s->line);
            gs_jw_str(&w, gs_record_rel_path(src));
            gs_jw_num(&w, s->count);
            gs_jw_num(&w, s->busy);
            gs_jw_end_array(&w);
        }
        gs_jw_end_array(&w);
        gs_jw_end_object(&w);
    }
    gs_jw_end_array(&w);
    gs_jw_end_object(&w);
    st = gs_jw_finish(&w, err);
done:
    for (size_t i = 0; i < nt; i++)
        gs_free(tracks[i].s);
    gs_free(tracks);
    return st;
}
