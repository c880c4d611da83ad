/* chip.cpp - chip and core elaboration from the config (see chip.h). */
#include "chip.h"

#include <algorithm>

#include <string>

namespace gs_tlm
{

Core::Core(sc_core::sc_module_name name, Run &run, unsigned index, HbmTarget &hbm)
    : sc_core::sc_module(name), dma_engines(run, index, hbm)
{
    for (int e = 0; e < (int)GS_ENG_DMA; ++e) {
        std::vector<uint32_t> &bound = run.bound[run.stream_id(index, (gs_engine)e, 0)];
        if (!gs_config_has_engine(run.cfg, (gs_engine)e) || bound.empty()) continue;
        engines[e].reset(
            new ComputeEngine(gs_engine_name((gs_engine)e), run, index, (gs_engine)e, dma_engines));
        engines[e]->instrs.swap(bound);
        run.streams[engines[e]->id()] = engines[e].get();
    }
    queues.resize(run.queues);
    for (unsigned q = 0; q < run.queues; ++q) {
        std::vector<uint32_t> &bound = run.bound[run.stream_id(index, GS_ENG_DMA, q)];
        if (bound.empty()) continue;
        if (!sbuf) { /* a target socket must be bound: only with a queue to bind it to */
            sbuf.reset(new LocalMem("sbuf", (uint64_t)run.cfg->sbuf_bytes.v));
            psum.reset(new LocalMem("psum", (uint64_t)run.cfg->psum_bytes.v));
        }
        std::string qname = "dma" + std::to_string(q);
        queues[q].reset(new DmaQueue(qname.c_str(), run, index, q, dma_engines));
        DmaQueue &dq = *queues[q];
        dq.instrs.swap(bound);
        dq.sbuf_port.bind(sbuf->socket);
        dq.psum_port.bind(psum->socket);
        run.streams[dq.id()] = &dq;
    }
}

Chip::Chip(sc_core::sc_module_name name, Run &run) : sc_core::sc_module(name), hbm("hbm", run.cfg)
{
    run.hbm = &hbm;
    run.arbiter = &arbiter;
    /* Only the cores the program uses: the others would just start idle processes (elaborating
     * all 8 cores of gen3 was ~6 ms, a fifth of a short check job). Their streams stay null. */
    const unsigned used = std::min(run.cores, gs_program_cores_used(run.prog));
    for (unsigned c = 0; c < used; ++c) {
        std::string cname = "core" + std::to_string(c);
        cores.emplace_back(new Core(cname.c_str(), run, c, hbm));
    }
}

} // namespace gs_tlm
