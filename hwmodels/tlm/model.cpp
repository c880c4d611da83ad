/*
 * model.cpp - the C facade of gs/model.h over the SystemC chip model: elaboration,
 * the run and deadlock/timeout diagnosis. Statistics are computed in plain C from the run's
 * timeline (gs/stats.h).
 */
#include "gs/model.h"

#include <memory>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include <systemc>

#include "chip.h"
#include "run_state.h"

/* libsystemc references sc_main (its own main() calls it). gensweep drives the simulation
 * from gs_model_run instead, so this one is never called. */
int sc_main(int, char **)
{
    return 1;
}

struct gs_model {
    const gs_config *cfg; /* borrowed: must outlive the model */
};

namespace
{

using namespace gs_tlm;

bool g_ran = false; /* SystemC elaborates once per process */
/* The one elaborated model of this process: kept reachable until exit (SystemC cannot tear a
 * simulated hierarchy down and build another). */
gs_tlm::Run *g_run = nullptr;
gs_tlm::Chip *g_chip = nullptr;

/* SystemC reports: info (e.g. "simulation stopped by user") is dropped and the rest goes to
 * stderr, because stdout carries gensweep's results. */
void report_handler(const sc_core::sc_report &rep, const sc_core::sc_actions &actions)
{
    sc_core::sc_actions a = actions;
    if (a & sc_core::SC_DISPLAY) {
        if (rep.get_severity() > sc_core::SC_INFO)
            fprintf(stderr, "%s\n", sc_core::sc_report_compose_message(rep).c_str());
        a &= ~sc_core::SC_DISPLAY;
    }
    a &= ~sc_core::SC_LOG;
    sc_core::sc_report_handler::default_handler(rep, a);
}

/* Where each stream stopped, into the timeline (for the deadlock report). */
void note_waits(Run &r)
{
    for (Stream *s : r.streams) {
        if (!s || s->pos() >= s->instrs.size()) continue;
        r.tl.wait[s->id()].instr = s->instrs[s->pos()];
        r.tl.wait[s->id()].waiting_on = s->waiting_on();
    }
}

void write_trace_header(Run &r)
{
    const unsigned used = std::max(1u, gs_program_cores_used(r.prog));
    for (unsigned c = 0; c < used && c < r.cores; ++c) {
        char name[32];
        snprintf(name, sizeof name, "core %u", c);
        r.trace.process_name((int)c, name);
        /* every engine of the config and every queue, idle ones (not elaborated) included */
        for (unsigned k = 0; k < r.streams_per_core; ++k) {
            const gs_engine e = r.stream_engine(c * r.streams_per_core + k);
            if (e != GS_ENG_DMA && !gs_config_has_engine(r.cfg, e)) continue;
            const unsigned q = e == GS_ENG_DMA ? k - (unsigned)GS_ENG_DMA : 0;
            const int tid = e == GS_ENG_DMA ? kDmaTid0 + (int)q : (int)e;
            std::string tn = e == GS_ENG_DMA ? "dma q" + std::to_string(q) : gs_engine_name(e);
            r.trace.thread_name((int)c, tid, tn.c_str());
            r.trace.thread_sort_index((int)c, tid, tid);
        }
        for (unsigned e = 0; e < r.dma_engines; ++e) {
            const int tid = kDmaTid0 + (int)r.queues + (int)e;
            r.trace.thread_name((int)c, tid, ("dma engine " + std::to_string(e)).c_str());
            r.trace.thread_sort_index((int)c, tid, tid);
        }
    }
    r.dma_counter_names.clear();
    for (unsigned c = 0; c < used && c < r.cores; ++c)
        for (unsigned e = 0; e < r.dma_engines; ++e)
            r.dma_counter_names.push_back("dma engine " + std::to_string(e) + " bandwidth");
    r.dma_counters.clear();
    for (unsigned c = 0; c < used && c < r.cores; ++c)
        for (unsigned e = 0; e < r.dma_engines; ++e)
            r.dma_counters.emplace_back(new RateCounter(
                &r.trace, (int)c, r.dma_counter_names[c * r.dma_engines + e].c_str(), "GB/s"));
    r.trace.process_name((int)r.cores, "chip");
    r.hbm_counter.reset(new RateCounter(&r.trace, (int)r.cores, "HBM bandwidth in use", "GB/s"));
}

} // namespace

extern "C" {

gs_model *gs_model_create(const gs_config *cfg, gs_error *err)
{
    if (!cfg) {
        gs_error_set(err, GS_ERR_USAGE, nullptr, 0, 0, "gs_model_create: no config");
        return nullptr;
    }
    if (!(cfg->cores.v >= 1 && cfg->cores.v <= GS_MAX_CORES) ||
        !(cfg->dma.engines.v >= 1 && cfg->dma.engines.v <= GS_MAX_QUEUES) ||
        !(cfg->dma.queues.v >= 1 && cfg->dma.queues.v <= GS_MAX_QUEUES) ||
        !(cfg->hbm_bandwidth.v > 0)) {
        gs_error_set(err, GS_ERR_INVALID, cfg->path, 0, 0,
                     "config %s: the model needs 1..%d cores, 1..%d DMA engines per core, 1..%d "
                     "queues per engine and a positive HBM bandwidth",
                     cfg->name ? cfg->name : "?", GS_MAX_CORES, GS_MAX_QUEUES, GS_MAX_QUEUES);
        return nullptr;
    }
    gs_model *m = (gs_model *)gs_calloc(1, sizeof *m);
    if (!m) {
        gs_error_set(err, GS_ERR_NOMEM, nullptr, 0, 0, "out of memory creating the model");
        return nullptr;
    }
    m->cfg = cfg;
    return m;
}

void gs_model_free(gs_model *m)
{
    gs_free(m);
}

gs_status gs_model_run(gs_model *m, const gs_program *p, gs_mem *mem, const gs_run_opts *opts_in,
                       gs_run_stats *stats, gs_error *err)
{
    gs_run_stats local_stats;
    if (!stats) stats = &local_stats;
    memset(stats, 0, sizeof *stats);
    gs_error_clear(err);
    if (!m || !p)
        return gs_error_set(err, GS_ERR_USAGE, nullptr, 0, 0, "gs_model_run: no model or program");
    gs_run_opts opts;
    memset(&opts, 0, sizeof opts);
    if (opts_in)
        opts = *opts_in;
    else
        opts.functional = mem != nullptr;
    if (opts.trace_warn) gs_error_clear(opts.trace_warn);
    if (opts.functional && !mem)
        return gs_error_set(err, GS_ERR_USAGE, nullptr, 0, 0,
                            "gs_model_run: functional mode needs memory");
    if (g_ran)
        return gs_error_set(err, GS_ERR_USAGE, nullptr, 0, 0,
                            "gs_model_run: SystemC can elaborate only one model per process; run "
                            "each further program in its own process");
    /* The run's state is plain C++ (no SystemC object): built first, so that binding the
     * instructions to their streams also checks them (gs_program_validate's condition, one sweep
     * over a program of up to hundreds of thousands of records). An invalid program leaves
     * SystemC untouched: the process may still run another. */
    gs_status st = GS_OK;
    std::unique_ptr<Run> run;
    try {
        run.reset(new Run(m->cfg, p, mem, opts));
        Run &r = *run;
        if (r.status != GS_OK) {
            if (err) *err = r.err;
            return r.status;
        }
        const unsigned engines = gs_config_engine_mask(m->cfg);
        r.bound.resize(r.streams.size());
        for (size_t i = 0; i < r.n; ++i) {
            const gs_instr *in = gs_program_instr(p, i);
            if (!gs_instr_placement_ok(in, r.cores, r.queues, engines))
                return gs_program_validate(p, m->cfg, err);
            const unsigned id = r.stream_id(in->core, in->engine, in->queue);
            r.instr(i).stream = (uint16_t)id;
            r.bound[id].push_back((uint32_t)i);
        }
    } catch (const std::bad_alloc &) {
        return gs_error_set(err, GS_ERR_NOMEM, nullptr, 0, 0,
                            "out of memory binding %zu instructions to streams",
                            gs_program_count(p));
    }
    g_ran = true;

    /* Before the first SystemC call: no copyright banner on stdout. */
    setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    sc_core::sc_report_handler::set_handler(report_handler);
    if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
        return gs_error_set(err, GS_ERR_INTERNAL, nullptr, 0, 0,
                            "SystemC time resolution is not 1 ps");

    g_run = run.release();
    Run &r = *g_run;
    try {
        g_chip = new Chip("chip", r);
        if (opts.trace_path) {
            if (opts.trace_warn) {
                /* a by-product: the run goes on untraced (the writer does nothing unopened) */
                if (r.trace.open(opts.trace_path, opts.trace_warn) == GS_OK) write_trace_header(r);
            } else {
                st = r.trace.open(opts.trace_path, err);
                if (st != GS_OK) return st; /* the model stays elaborated; it cannot rerun */
                write_trace_header(r);
            }
        }
        if (opts.sim_limit_ns > 0)
            sc_core::sc_start(sc_core::sc_time::from_value(ns_to_ps(opts.sim_limit_ns)),
                              sc_core::SC_EXIT_ON_STARVATION);
        else
            sc_core::sc_start();
    } catch (const std::exception &e) {
        r.hbm_counter.reset();
        r.trace.close(nullptr);
        return gs_error_set(err, GS_ERR_INTERNAL, nullptr, 0, 0, "SystemC: %s", e.what());
    }
    const double wall_s = r.wall_elapsed_s();

    st = GS_OK;
    if (r.status != GS_OK) {
        st = r.status;
        if (err) *err = r.err;
    } else if ((size_t)r.tl.completed < r.n) {
        if (r.wall_hit) {
            st = gs_error_set(
                err, GS_ERR_TIMEOUT, nullptr, 0, 0,
                "wall-clock limit of %g s reached with %zu of %zu instructions unfinished",
                opts.wall_limit_s, r.n - (size_t)r.tl.completed, r.n);
        } else if (sc_core::sc_pending_activity()) {
            st = gs_error_set(
                err, GS_ERR_TIMEOUT, nullptr, 0, 0,
                "simulated time limit of %g ns reached with %zu of %zu instructions unfinished",
                opts.sim_limit_ns, r.n - (size_t)r.tl.completed, r.n);
        } else {
            note_waits(r);
            st = gs_timeline_deadlock_error(&r.tl, p, err);
        }
    }
    gs_error serr;
    const gs_status sst = gs_run_stats_compute(r.cfg, p, &r.tl, stats, &serr);
    stats->wall_s = wall_s;
    if (opts.on_timeline) opts.on_timeline(&r.tl, opts.on_timeline_ud);
    if (sst != GS_OK && st == GS_OK) {
        st = sst;
        if (err) *err = serr;
    }
    r.hbm_rate_flush(UINT64_MAX);
    if (r.hbm_counter) r.hbm_counter->finish();
    gs_error terr;
    r.hbm_counter.reset(); /* the trace owns the counter's state */
    if (r.trace.close(&terr) != GS_OK) {
        if (opts.trace_warn) {
            if (opts.trace_warn->code == GS_OK) *opts.trace_warn = terr;
        } else if (st == GS_OK) {
            st = terr.code;
            if (err) *err = terr;
        }
    }
    return st;
}

} /* extern "C" */
