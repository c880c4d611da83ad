/*
 * run_state.h - what one simulation run shares between the TLM modules: the program, the
 * timeline the streams fill (gs/stats.h: per instruction its start, end, which predecessor set
 * the start, HBM wait and owning stream; per stream and DMA engine its counters), the trace,
 * and how the run stopped.
 *
 * Times are integer picoseconds (the SystemC time resolution), so results are exact and
 * deterministic; cost-model nanoseconds are converted once per annotation (ns_to_ps).
 */
#ifndef GS_TLM_RUN_STATE_H
#define GS_TLM_RUN_STATE_H

#include <cmath>
#include <cstdint>
#include <ctime>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "gs/config.h"
#include "gs/exec.h"
#include "gs/isa.h"
#include "gs/model.h"
#include "gs/stats.h"
#include "trace_writer.h"

namespace gs_tlm
{

class Stream;
class HbmTarget;
class DmaEngine;
class DmaArbiter;

/* Nearest picosecond of a non-negative cost in ns (negative or NaN costs count as 0). */
inline uint64_t ns_to_ps(double ns)
{
    return (ns > 0 && std::isfinite(ns)) ? (uint64_t)std::llround(ns * 1000.0) : 0;
}
/* Rounded up: used where the model must never beat a bandwidth bound. */
inline uint64_t ns_to_ps_ceil(double ns)
{
    return (ns > 0 && std::isfinite(ns)) ? (uint64_t)std::ceil(ns * 1000.0) : 0;
}

/* Trace tracks: tid of a compute engine is its gs_engine; DMA queue q is kDmaTid0 + q; DMA
 * engine e is kDmaTid0 + queues + e; queue q's extra track k >= 1 (DmaQueue::trace_tid_of) is
 * kDmaTid0 + queues + engines + (k - 1) * queues + q. */
constexpr int kDmaTid0 = GS_ENG_DMA;

struct Run {
    /* On failure (out of memory for the timeline) status and err say why. */
    Run(const gs_config *cfg, const gs_program *prog, gs_mem *mem, const gs_run_opts &opts);
    ~Run();
    Run(const Run &) = delete;
    Run &operator=(const Run &) = delete;

    const gs_config *cfg;
    const gs_program *prog;
    gs_mem *mem;
    bool functional;
    size_t n; /* instructions */

    unsigned cores;       /* cores on the chip (config) */
    unsigned queues;      /* DMA queue IDs per core (config core.dma.queues) */
    unsigned dma_engines; /* DMA engines per core (config core.dma.engines) */
    unsigned streams_per_core;
    uint64_t sem_ps;         /* cross-engine semaphore signal-to-wake */
    uint64_t hbm_latency_ps; /* once per transfer touching HBM */

    /* what the run did, per instruction, stream and DMA engine (statistics are computed from
     * it in plain C); instr(i) is instruction i's record */
    gs_timeline tl;
    gs_timeline_instr &instr(size_t i) { return tl.instr[i]; }
    const gs_timeline_instr &instr(size_t i) const { return tl.instr[i]; }

    std::vector<Stream *> streams; /* by stream id; nullptr for an absent or idle engine */
    /* Each stream's instructions in program order, by stream id, bound before elaboration:
     * a stream with none is not elaborated (see chip.h). */
    std::vector<std::vector<uint32_t>> bound;
    HbmTarget *hbm = nullptr;
    DmaArbiter *arbiter = nullptr; /* orders the transfers' reservations (dma_arbiter.h) */

    TraceWriter trace;
    std::unique_ptr<RateCounter> hbm_counter;
    /* per DMA engine of each core (core * dma_engines + e): bytes per ns it moves, for the
     * trace; empty without a trace. dma_counter_names keeps the counters' names alive. */
    std::vector<std::unique_ptr<RateCounter>> dma_counters;
    std::vector<std::string> dma_counter_names;
    RateCounter *dma_counter(unsigned core, unsigned e)
    {
        const size_t k = (size_t)core * dma_engines + e;
        return k < dma_counters.size() ? dma_counters[k].get() : nullptr;
    }
    /* HBM bandwidth in use, for the trace counter: `rate` bytes/ns over [t0, t1). Reservations
     * may start in the future, so samples wait here until simulated time reaches them (the
     * counter takes them in time order). */
    void hbm_rate(uint64_t t0_ps, uint64_t t1_ps, double rate);
    void hbm_rate_flush(uint64_t upto_ps);
    struct RateSample {
        uint64_t t0, t1;
        double rate;
        bool operator>(const RateSample &o) const { return t0 > o.t0; }
    };
    std::priority_queue<RateSample, std::vector<RateSample>, std::greater<RateSample>> hbm_samples;

    /* how the run stopped */
    gs_status status = GS_OK;
    gs_error err;
    bool wall_hit = false;
    double wall_limit_s = 0;
    struct timespec wall_start;

    unsigned stream_id(unsigned core, gs_engine e, unsigned queue) const
    {
        return gs_timeline_stream_id(&tl, core, e, queue);
    }
    gs_engine stream_engine(unsigned id) const { return gs_timeline_stream_engine(&tl, id); }
    double wall_elapsed_s() const;
    /* Record the first error and stop the simulation. */
    void fail(gs_status st, const gs_error &e);
    /* Called after every completion: checks the wall-clock limit now and then. */
    void on_complete();
};

} // namespace gs_tlm

#endif
