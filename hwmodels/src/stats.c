/* stats.c - run statistics, roofline and critical path over a run's timeline (gs/stats.h). */
#include "gs/stats.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gs/cost.h"
#include "gs/strbuf.h"

/* the largest chip's stream ids fit gs_timeline_instr.stream */
_Static_assert((uint64_t)GS_MAX_CORES *((uint64_t)GS_ENG_DMA + GS_MAX_QUEUES) <= UINT16_MAX,
               "stream ids must fit a uint16_t");

gs_status gs_timeline_init(gs_timeline *tl, size_t n, unsigned cores, unsigned queues,
                           unsigned dma_engines, gs_error *err)
{
    memset(tl, 0, sizeof *tl);
    if (cores < 1 || cores > GS_MAX_CORES || queues < 1 || queues > GS_MAX_QUEUES ||
        dma_engines < 1 || dma_engines > GS_MAX_QUEUES)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "timeline: %u cores, %u DMA queues and %u DMA engines per core are "
                            "outside 1..%d cores and 1..%d queues and engines",
                            cores, queues, dma_engines, GS_MAX_CORES, GS_MAX_QUEUES);
    /* an instruction's predecessor is an int32_t (gs_timeline_instr) */
    if (n > (size_t)INT32_MAX)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "timeline: %zu instructions, more than the %d a run can hold", n,
                            INT32_MAX);
    tl->n = n;
    tl->cores = cores;
    tl->queues = queues;
    tl->dma_engines = dma_engines;
    tl->streams_per_core = (unsigned)GS_ENG_DMA + queues;
    /* at least one element each, so an empty program still has valid arrays */
    tl->instr = gs_calloc(n ? n : 1, sizeof *tl->instr);
    tl->stream = gs_calloc((size_t)cores * tl->streams_per_core, sizeof *tl->stream);
    tl->dma = gs_calloc((size_t)cores * dma_engines, sizeof *tl->dma);
    tl->wait = gs_calloc((size_t)cores * tl->streams_per_core, sizeof *tl->wait);
    if (!tl->instr || !tl->stream || !tl->dma || !tl->wait) {
        gs_timeline_free(tl);
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0,
                            "out of memory for the timeline of %zu instructions", n);
    }
    for (size_t i = 0; i < n; ++i)
        tl->instr[i].pred = -1;
    for (size_t k = 0; k < (size_t)cores * tl->streams_per_core; ++k)
        tl->wait[k].instr = tl->wait[k].waiting_on = -1;
    return GS_OK;
}

void gs_timeline_free(gs_timeline *tl)
{
    if (!tl) return;
    gs_free(tl->instr);
    gs_free(tl->stream);
    gs_free(tl->dma);
    gs_free(tl->wait);
    memset(tl, 0, sizeof *tl);
}

static double ps_to_ns(uint64_t ps)
{
    return (double)ps / 1000.0;
}

/* max/min that pick the same operand as std::max/std::min (the first on ties). */
static double dmax(double a, double b)
{
    return a < b ? b : a;
}
static double dmin(double a, double b)
{
    return b < a ? b : a;
}

/* The timeline fits the program and the config: every index used below is in range. */
static gs_status check_timeline(const gs_config *cfg, const gs_program *p, const gs_timeline *tl,
                                gs_error *err)
{
    const size_t n = gs_program_count(p);
    if (tl->n != n)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "timeline of %zu instructions for a program of %zu", tl->n, n);
    if (tl->cores < 1 || tl->cores > GS_MAX_CORES || tl->cores != (unsigned)cfg->cores.v ||
        tl->streams_per_core != (unsigned)GS_ENG_DMA + tl->queues || !tl->instr || !tl->stream ||
        !tl->dma)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "timeline shape (%u cores, %u streams per core) does not fit config "
                            "%s",
                            tl->cores, tl->streams_per_core, cfg->name ? cfg->name : "?");
    /* the timeline only: the instructions' cores are checked where they are read (roofline),
     * so the program (large: an 88-byte record per instruction) is swept once */
    const unsigned streams = tl->cores * tl->streams_per_core;
    for (size_t i = 0; i < n; ++i) {
        const gs_timeline_instr *x = &tl->instr[i];
        if (!x->done) continue;
        if (x->stream >= streams || x->pred >= (int64_t)n) {
            const gs_instr *in = gs_program_instr(p, i);
            return gs_error_set(err, GS_ERR_INVALID, in->file, in->line, 0,
                                "timeline entry of instruction %zu is out of range (stream %u of "
                                "%u, predecessor %lld of %zu instructions)",
                                i, x->stream, streams, (long long)x->pred, n);
        }
    }
    return GS_OK;
}

/* Fill the roofline fields of st (see gs/stats.h): ceilings of the machine for the cores the
 * run used, the schedule's traffic and the problem's minimum traffic. */
static gs_status roofline(const gs_config *cfg, const gs_program *p, const gs_timeline *tl,
                          gs_run_stats *st, gs_error *err)
{
    const unsigned cores = st->cores_used > 1u ? st->cores_used : 1u;
    /* compute: per core and engine, the work at the engine's peak rate (never more than the
     * instruction actually took); engines run in parallel, cores too */
    const size_t n_bound = (size_t)tl->cores * GS_ENGINE_COUNT;
    const size_t n_tensors = gs_program_tensor_count(p);
    double *bound = gs_calloc(n_bound, sizeof *bound);
    double *moved = gs_calloc(n_tensors ? n_tensors : 1, sizeof *moved);
    if (!bound || !moved) {
        gs_free(bound);
        gs_free(moved);
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory for the roofline");
    }
    double peak_tensor = 0;
    for (size_t i = 0; i < tl->n; ++i) {
        const gs_timeline_instr *x = &tl->instr[i];
        if (!x->done) continue;
        const gs_instr *in = gs_program_instr(p, i);
        if (in->core >= tl->cores) {
            gs_free(bound);
            gs_free(moved);
            return gs_error_set(err, GS_ERR_INVALID, in->file, in->line, 0,
                                "timeline: instruction %zu runs on core %u of %u", i, in->core,
                                tl->cores);
        }
        st->flops += gs_cost_flops(in);
        st->hbm_bytes += gs_cost_hbm_bytes(in);
        if (in->engine == GS_ENG_DMA || in->op == GS_OP_GATHER) {
            const double b = (double)gs_ap_bytes(in->out[0]);
            /* what was read of a copy's source (a converting copy's sides differ) */
            const double b_in = in->op == GS_OP_DMA_COPY ? (double)gs_ap_bytes(in->in[0]) : b;
            if (in->n_in > 0 && in->in[0]->space == GS_MEM_HBM && in->in[0]->tensor >= 0 &&
                (size_t)in->in[0]->tensor < n_tensors)
                moved[(size_t)in->in[0]->tensor] += b_in;
            if (in->n_out > 0 && in->out[0]->space == GS_MEM_HBM && in->out[0]->tensor >= 0 &&
                (size_t)in->out[0]->tensor < n_tensors)
                moved[(size_t)in->out[0]->tensor] += b;
        }
        if (in->engine == GS_ENG_DMA) continue;
        st->compute_engines |= 1u << in->engine;
        const double t = gs_cost_peak_ns(cfg, in);
        if (!(t > 0)) continue;
        if (in->engine == GS_ENG_TENSOR)
            for (int k = 0; k < in->n_in && k < 2; ++k)
                peak_tensor = dmax(peak_tensor, gs_config_peak_flops(cfg, in->in[k]->dtype));
        bound[(size_t)in->core * GS_ENGINE_COUNT + in->engine] +=
            dmin(t, ps_to_ns(x->end_ps - x->start_ps));
    }
    for (size_t k = 0; k < n_bound; ++k) {
        st->compute_bound_ns = dmax(st->compute_bound_ns, bound[k]);
        st->engine_bound_ns[k % GS_ENGINE_COUNT] =
            dmax(st->engine_bound_ns[k % GS_ENGINE_COUNT], bound[k]);
    }
    st->compute_ceiling_flops = peak_tensor * cores;
    st->peak_flops = st->compute_ceiling_flops;

    st->hbm_ceiling_bytes_per_s = gs_config_hbm_bytes_per_s(cfg);
    st->dma_ceiling_bytes_per_s = gs_config_dma_core_bytes_per_ns(cfg) * 1e9 * cores;
    st->memory_ceiling_bytes_per_s = dmin(st->hbm_ceiling_bytes_per_s, st->dma_ceiling_bytes_per_s);
    st->peak_hbm_bytes_per_s = st->hbm_ceiling_bytes_per_s;
    const double hbm_ns = cfg->hbm_bandwidth.v > 0 ? st->hbm_bytes / cfg->hbm_bandwidth.v : 0;
    const double dma_bpns = st->dma_ceiling_bytes_per_s * 1e-9;
    const double dma_ns = dma_bpns > 0 ? st->dma_bytes / dma_bpns : 0;
    st->memory_bound_ns = dmax(hbm_ns, dma_ns);
    st->roofline_ns = dmax(st->compute_bound_ns, st->memory_bound_ns);
    st->roofline_ratio = st->roofline_ns > 0 ? st->total_ns / st->roofline_ns : 0;

    /* minimum traffic: inputs read once, outputs written once; an input the schedule reads
     * only in part (a gathered table) counts the bytes it read */
    for (size_t t = 0; t < n_tensors; ++t) {
        const gs_tensor_info *ti = gs_program_tensor(p, (int32_t)t);
        if (!ti || ti->kind == GS_TENSOR_SCRATCH) continue;
        st->min_traffic_bytes += dmin((double)ti->bytes, moved[t]);
    }
    const double mem_bpns = st->memory_ceiling_bytes_per_s * 1e-9;
    st->min_memory_bound_ns = mem_bpns > 0 ? st->min_traffic_bytes / mem_bpns : 0;
    st->min_roofline_ns = dmax(st->compute_bound_ns, st->min_memory_bound_ns);
    st->min_roofline_ratio = st->min_roofline_ns > 0 ? st->total_ns / st->min_roofline_ns : 0;
    /* the bound and what sets it: the largest engine bound, then the memory bounds (on the
     * schedule's traffic: HBM or the DMA engines; the minimum traffic's is never larger) */
    st->bound_ns = 0;
    st->bound_engine[0] = '\0';
    for (int e = 0; e < GS_ENGINE_COUNT; ++e)
        if (st->engine_bound_ns[e] > st->bound_ns) {
            st->bound_ns = st->engine_bound_ns[e];
            snprintf(st->bound_engine, sizeof st->bound_engine, "%s", gs_engine_name((gs_engine)e));
        }
    const double mem_parts[3] = {hbm_ns, dma_ns, st->min_memory_bound_ns};
    const char *const mem_names[3] = {
        "hbm", "dma", mem_bpns * 1e9 >= st->hbm_ceiling_bytes_per_s ? "hbm" : "dma"};
    for (int k = 0; k < 3; ++k)
        if (mem_parts[k] > st->bound_ns) {
            st->bound_ns = mem_parts[k];
            snprintf(st->bound_engine, sizeof st->bound_engine, "%s", mem_names[k]);
        }
    st->bound_ratio = st->bound_ns > 0 ? st->total_ns / st->bound_ns : 0;
    if (st->total_ns > 0) {
        st->achieved_flops = st->flops / (st->total_ns * 1e-9);
        st->achieved_hbm_bytes_per_s = st->hbm_bytes / (st->total_ns * 1e-9);
    }
    gs_free(bound);
    gs_free(moved);
    return GS_OK;
}

/* gs_run_stats.level: the bytes each completed instruction's operands read and write per
 * memory level. */
static void level_traffic(const gs_program *p, const gs_timeline *tl, gs_run_stats *st)
{
    for (size_t i = 0; i < tl->n; ++i) {
        if (!tl->instr[i].done) continue;
        const gs_instr *in = gs_program_instr(p, i);
        const double out_bytes = in->n_out > 0 ? (double)gs_ap_bytes(in->out[0]) : 0.0;
        for (int k = 0; k < in->n_in && k < GS_INSTR_MAX_IN; ++k) {
            const gs_ap *a = in->in[k];
            if (a->tensor < 0 || (unsigned)a->space >= GS_MEMSPACE_COUNT) continue;
            /* a gather fetches the destination's rows of its table, not the whole view */
            const double b = in->op == GS_OP_GATHER && k == 0 ? out_bytes : (double)gs_ap_bytes(a);
            st->level[a->space].read_bytes += b;
        }
        if (in->op == GS_OP_MATMUL_MX) {
            const gs_ap *a = GS_MX_MOVING_SCALE(in); /* an input held in an output slot */
            if (a->tensor >= 0 && (unsigned)a->space < GS_MEMSPACE_COUNT)
                st->level[a->space].read_bytes += (double)gs_ap_bytes(a);
        }
        const int n_out = in->op == GS_OP_MATMUL_MX ? 1 : in->n_out;
        for (int k = 0; k < n_out && k < GS_INSTR_MAX_OUT; ++k) {
            const gs_ap *a = in->out[k];
            if (a->tensor < 0 || (unsigned)a->space >= GS_MEMSPACE_COUNT) continue;
            const double b = (double)gs_ap_bytes(a);
            st->level[a->space].write_bytes += b;
            if (k == 0 && (in->flags & GS_F_ACCUMULATE) &&
                (in->op == GS_OP_MATMUL || in->op == GS_OP_MATMUL_MX))
                st->level[a->space].read_bytes += b;
        }
    }
}

/* Critical path: from the last instruction to finish, follow the predecessor that set each
 * start; each instruction's duration and its wait for that predecessor (semaphore) go to its
 * engine, HBM contention inside transfers to "hbm". The bottleneck is the largest part.
 * A transfer's predecessor in its own queue is the previous trigger, which may end after this
 * one starts: the parts are sums modulo 2^64 whose negative terms cancel along the path. */
static gs_status critical_path(const gs_timeline *tl, size_t last, gs_run_stats *st, gs_error *err)
{
    uint64_t cp[GS_ENGINE_COUNT] = {0}, cp_hbm = 0;
    size_t steps = 0;
    for (int64_t i = last == SIZE_MAX ? -1 : (int64_t)last; i >= 0; ++steps) {
        /* in a simulated run a predecessor started before its successor: a longer walk is a
         * cycle of a hand-made timeline */
        if (steps >= tl->n)
            return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                                "timeline: the predecessors of instruction %zu form a cycle", last);
        const gs_timeline_instr *x = &tl->instr[(size_t)i];
        const gs_engine e = gs_timeline_stream_engine(tl, x->stream);
        const uint64_t dur = x->end_ps - x->start_ps;
        const int64_t pj = x->pred;
        const uint64_t from = pj >= 0 ? tl->instr[(size_t)pj].end_ps : 0;
        cp[e] += dur - x->hbm_wait_ps + (x->start_ps - from);
        cp_hbm += x->hbm_wait_ps;
        i = pj;
    }
    uint64_t best = 0;
    st->bottleneck = GS_ENG_TENSOR;
    snprintf(st->bottleneck_name, sizeof st->bottleneck_name, "%s", "none");
    for (int e = 0; e < GS_ENGINE_COUNT; ++e) {
        st->critical_path_ns[e] = ps_to_ns(cp[e]);
        if (cp[e] > best) {
            best = cp[e];
            st->bottleneck = (gs_engine)e;
            snprintf(st->bottleneck_name, sizeof st->bottleneck_name, "%s",
                     gs_engine_name((gs_engine)e));
        }
    }
    st->critical_path_hbm_ns = ps_to_ns(cp_hbm);
    if (cp_hbm > best) {
        st->bottleneck = GS_ENG_DMA;
        snprintf(st->bottleneck_name, sizeof st->bottleneck_name, "%s", "hbm");
    }
    return GS_OK;
}

/* Throughput- or latency-bound (gs/stats.h): the busiest resource's occupancy against
 * GS_THROUGHPUT_SHARE. On a tie the later resource wins, so HBM (the shared one) before the DMA
 * engines that wait for it. */
static void bound_kind(const gs_config *cfg, const gs_timeline *tl, gs_run_stats *st)
{
    if (!(st->total_ns > 0)) return;
    double best = -1;
    for (int e = 0; e < GS_ENGINE_COUNT; ++e)
        for (unsigned c = 0; c < tl->cores && c < GS_MAX_CORES; ++c) {
            const double share = st->engine[c][e].busy_ns / st->total_ns;
            if (share > best) {
                best = share;
                snprintf(st->busiest, sizeof st->busiest, "%s", gs_engine_name((gs_engine)e));
            }
        }
    const double hbm = cfg->hbm_bandwidth.v > 0 ? st->hbm_bytes / cfg->hbm_bandwidth.v : 0;
    if (hbm / st->total_ns >= best) {
        best = hbm / st->total_ns;
        snprintf(st->busiest, sizeof st->busiest, "%s", "hbm");
    }
    st->busiest_share = best;
    snprintf(st->bound_kind, sizeof st->bound_kind, "%s",
             best >= GS_THROUGHPUT_SHARE ? "throughput" : "latency");
}

const char *gs_run_stats_label(const gs_run_stats *st, char *buf, size_t size)
{
    if (!buf || !size) return buf;
    if (!st || !st->bound_kind[0]) {
        snprintf(buf, size, "%s", "none");
        return buf;
    }
    if (!strcmp(st->bound_kind, "throughput")) {
        snprintf(buf, size, "throughput-bound on %s (busy %.0f%%)", st->busiest,
                 100 * st->busiest_share);
        return buf;
    }
    double part[GS_ENGINE_COUNT + 1];
    const char *name[GS_ENGINE_COUNT + 1];
    for (int e = 0; e < GS_ENGINE_COUNT; ++e) {
        part[e] = st->critical_path_ns[e];
        name[e] = gs_engine_name((gs_engine)e);
    }
    part[GS_ENGINE_COUNT] = st->critical_path_hbm_ns;
    name[GS_ENGINE_COUNT] = "hbm";
    size_t n = (size_t)snprintf(buf, size, "%s", "latency-bound (critical path:");
    int listed = 0;
    for (; listed < 3 && n < size; ++listed) {
        int k = -1;
        for (int e = 0; e <= GS_ENGINE_COUNT; ++e)
            if (part[e] >= 0.05 * st->total_ns && (k < 0 || part[e] > part[k])) k = e;
        if (k < 0) break;
        n += (size_t)snprintf(buf + n, size - n, "%s %s %.0f%%", listed ? "," : "", name[k],
                              100 * part[k] / st->total_ns);
        part[k] = -1;
    }
    if (n < size) snprintf(buf + n, size - n, "%s)", listed ? "" : " spread");
    return buf;
}

gs_status gs_run_stats_compute(const gs_config *cfg, const gs_program *p, const gs_timeline *tl,
                               gs_run_stats *st, gs_error *err)
{
    if (!st) return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "gs_run_stats_compute: no stats");
    memset(st, 0, sizeof *st);
    if (!cfg || !p || !tl)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "gs_run_stats_compute: no config, program or timeline");
    gs_status rc = check_timeline(cfg, p, tl, err);
    if (rc != GS_OK) return rc;

    st->cores_used = gs_program_cores_used(p);
    st->queues_per_core = tl->queues;
    st->dma_engines_per_core = tl->dma_engines;
    uint64_t total_ps = 0;
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < tl->n; ++i) {
        const gs_timeline_instr *x = &tl->instr[i];
        if (x->done && (last == SIZE_MAX || x->end_ps > total_ps)) {
            total_ps = x->end_ps;
            last = i;
        }
    }
    st->total_ns = ps_to_ns(total_ps);
    for (int e = 0; e < GS_ENGINE_COUNT; ++e)
        st->engine_cycles[e] = st->total_ns * gs_cost_clock_hz(cfg, (gs_engine)e) * 1e-9;

    const unsigned streams = tl->cores * tl->streams_per_core;
    for (unsigned id = 0; id < streams; ++id) {
        const gs_stream_counters *ss = &tl->stream[id];
        const unsigned c = id / tl->streams_per_core;
        const gs_engine eng = gs_timeline_stream_engine(tl, id);
        gs_engine_stats *es = &st->engine[c][eng];
        es->stall_dep_ns += ps_to_ns(ss->stall_dep_ps);
        es->stall_dma_ns += ps_to_ns(ss->stall_dma_ps);
        es->instructions += ss->instructions;
        if (eng != GS_ENG_DMA) {
            es->busy_ns += ps_to_ns(ss->busy_ps);
            es->stall_port_ns += ps_to_ns(ss->hbm_wait_ps);
        } else {
            const unsigned q = id % tl->streams_per_core - (unsigned)GS_ENG_DMA;
            gs_queue_stats *qs = &st->queue[c][q];
            qs->busy_ns = ps_to_ns(ss->busy_ps + ss->hbm_wait_ps);
            qs->bytes = ss->bytes;
            qs->transfers = ss->transfers;
            st->dma_bytes += ss->bytes;
        }
    }
    for (unsigned c = 0; c < tl->cores; ++c) {
        gs_engine_stats *es = &st->engine[c][GS_ENG_DMA];
        for (unsigned k = 0; k < tl->dma_engines; ++k) {
            const gs_dma_engine_counters *d = &tl->dma[(size_t)c * tl->dma_engines + k];
            gs_dma_engine_stats *x = &st->dma_engine[c][k];
            x->busy_ns = ps_to_ns(d->busy_ps);
            x->bytes = d->bytes;
            x->shares = d->shares;
            es->busy_ns += ps_to_ns(d->busy_ps - d->hbm_wait_ps) / (double)tl->dma_engines;
            es->stall_port_ns += ps_to_ns(d->hbm_wait_ps) / (double)tl->dma_engines;
        }
    }
    for (unsigned c = 0; c < GS_MAX_CORES; ++c) {
        for (int e = 0; e < GS_ENGINE_COUNT; ++e) {
            gs_engine_stats *t = &st->engine_total[e];
            const gs_engine_stats *x = &st->engine[c][e];
            t->busy_ns += x->busy_ns;
            t->stall_dep_ns += x->stall_dep_ns;
            t->stall_dma_ns += x->stall_dma_ns;
            t->stall_port_ns += x->stall_port_ns;
            t->instructions += x->instructions;
        }
    }
    st->instructions = tl->completed;
    if (tl->n > 0 && tl->instr[0].done) {
        st->first_trigger_ns = ps_to_ns(tl->instr[0].start_ps);
        st->first_engines_used = tl->first_engines_used;
        st->first_start_ns =
            tl->first_engines_used ? ps_to_ns(tl->first_share_start_ps) : st->first_trigger_ns;
        st->first_end_ns = ps_to_ns(tl->instr[0].end_ps);
    }
    rc = roofline(cfg, p, tl, st, err);
    if (rc != GS_OK) return rc;
    rc = critical_path(tl, last, st, err);
    if (rc != GS_OK) return rc;
    bound_kind(cfg, tl, st);
    level_traffic(p, tl, st);
    st->sbuf_high_water = gs_program_sbuf_high_water(p);
    st->psum_high_water = gs_program_psum_high_water(p);
    return GS_OK;
}

/* ---- deadlock report ---- */

static void stream_name(const gs_timeline *tl, unsigned id, char *buf, size_t size)
{
    const unsigned core = id / tl->streams_per_core;
    const gs_engine e = gs_timeline_stream_engine(tl, id);
    if (e == GS_ENG_DMA)
        snprintf(buf, size, "core %u dma q%u", core,
                 id % tl->streams_per_core - (unsigned)GS_ENG_DMA);
    else
        snprintf(buf, size, "core %u %s", core, gs_engine_name(e));
}

/* "#i op (stream, file:line)" */
static void describe(const gs_timeline *tl, const gs_program *p, uint32_t i, gs_sb *sb)
{
    const gs_instr *in = gs_program_instr(p, i);
    char name[64], buf[GS_ERROR_FILE_MAX + 128];
    stream_name(tl, tl->instr[i].stream, name, sizeof name);
    snprintf(buf, sizeof buf, "#%u %s (%s, %s:%d)", i, gs_opcode_name(in->op), name,
             in->file ? in->file : "?", in->line);
    gs_sb_puts(sb, buf);
}

gs_status gs_timeline_deadlock_error(const gs_timeline *tl, const gs_program *p, gs_error *err)
{
    if (!tl || !p || tl->n != gs_program_count(p))
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0,
                            "deadlock: no timeline that fits the program to report it");
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_printf(&sb, "deadlock: %zu of %zu instructions can never complete;",
                 tl->n - (size_t)tl->completed, tl->n);
    const char *file = NULL;
    int line = 0, listed = 0, more = 0;
    const unsigned streams = tl->cores * tl->streams_per_core;
    for (unsigned id = 0; id < streams; ++id) {
        const int64_t i = tl->wait[id].instr, w = tl->wait[id].waiting_on;
        if (i < 0 || (size_t)i >= tl->n || w < 0) continue;
        if (listed >= 6 || sb.len > 700) {
            ++more;
            continue;
        }
        if (!file) {
            const gs_instr *in = gs_program_instr(p, (size_t)i);
            file = in->file;
            line = in->line;
        }
        gs_sb_puts(&sb, " ");
        describe(tl, p, (uint32_t)i, &sb);
        gs_sb_puts(&sb, " waits for ");
        if ((size_t)w >= tl->n) {
            gs_sb_printf(&sb, "#%lld, which does not exist;", (long long)w);
        } else {
            describe(tl, p, (uint32_t)w, &sb);
            if (tl->instr[(size_t)w].stream == id && w > i)
                gs_sb_puts(&sb, ", later in the same in-order stream;");
            else
                gs_sb_puts(&sb, ", not completed;");
        }
        ++listed;
    }
    if (more) gs_sb_printf(&sb, " and %d more waiting streams", more);
    gs_status st = gs_error_set(err, GS_ERR_DEADLOCK, file, line, 0, "%s",
                                gs_sb_ok(&sb) ? gs_sb_cstr(&sb) : "deadlock (out of memory)");
    gs_sb_free(&sb);
    return st;
}
