/* run_state.cpp - per-run shared state (see run_state.h). */
#include "run_state.h"

#include <systemc>

namespace gs_tlm
{

namespace
{
/* Completions between two host-clock reads for the wall-clock limit. */
constexpr uint64_t kWallCheckEvery = 64;
} // namespace

Run::Run(const gs_config *cfg_, const gs_program *prog_, gs_mem *mem_, const gs_run_opts &opts)
    : cfg(cfg_), prog(prog_), mem(mem_), functional(opts.functional != 0),
      n(gs_program_count(prog_))
{
    cores = (unsigned)cfg->cores.v;
    queues = (unsigned)cfg->dma.queues.v;
    dma_engines = (unsigned)cfg->dma.engines.v;
    streams_per_core = (unsigned)GS_ENG_DMA + queues;
    sem_ps = ns_to_ps(cfg->sem_latency.v);
    hbm_latency_ps = ns_to_ps(cfg->hbm_latency.v);
    gs_error_clear(&err);
    status = gs_timeline_init(&tl, n, cores, queues, dma_engines, &err);
    streams.assign((size_t)cores * streams_per_core, nullptr);
    wall_limit_s = opts.wall_limit_s;
    clock_gettime(CLOCK_MONOTONIC, &wall_start);
}

Run::~Run()
{
    gs_timeline_free(&tl);
}

double Run::wall_elapsed_s() const
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - wall_start.tv_sec) +
           1e-9 * (double)(now.tv_nsec - wall_start.tv_nsec);
}

void Run::hbm_rate(uint64_t t0_ps, uint64_t t1_ps, double rate)
{
    if (!hbm_counter) return;
    hbm_rate_flush(sc_core::sc_time_stamp().value());
    hbm_samples.push(RateSample{t0_ps, t1_ps, rate});
}

void Run::hbm_rate_flush(uint64_t upto_ps)
{
    while (hbm_counter && !hbm_samples.empty() && hbm_samples.top().t0 <= upto_ps) {
        const RateSample s = hbm_samples.top();
        hbm_samples.pop();
        hbm_counter->add(s.t0, s.t1, s.rate);
    }
}

void Run::fail(gs_status st, const gs_error &e)
{
    if (status == GS_OK) {
        status = st;
        err = e;
        err.code = st;
    }
    sc_core::sc_stop();
}

void Run::on_complete()
{
    ++tl.completed;
    if (wall_limit_s > 0 && tl.completed % kWallCheckEvery == 0 &&
        wall_elapsed_s() > wall_limit_s) {
        wall_hit = true;
        sc_core::sc_stop();
    }
}

} // namespace gs_tlm
