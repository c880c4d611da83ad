/*
 * chip.h - the chip: `cores` cores sharing one HBM target. A core holds its SBUF and PSUM
 * targets, its compute engines (tensor, vector, scalar, and gpsimd where the config has one),
 * `core.dma.engines` DMA engines (each bound to the HBM target) and `core.dma.queues` DMA
 * queue IDs that feed every engine. Everything is sized from the config; no timing lives here.
 *
 * Only the cores a program uses are elaborated, and of those only the engines and queues that
 * have instructions (Run::bound): an idle stream would only start processes that end at once,
 * and a check job uses 2-4 of a core's 16-32 queues (each queue is two SC_METHODs). The trace
 * still names every queue of a used core.
 *
 * Not modelled: inter-core links (collectives), host interface, instruction memories.
 */
#ifndef GS_TLM_CHIP_H
#define GS_TLM_CHIP_H

#include <memory>
#include <vector>

#include <systemc>

#include "dma_arbiter.h"
#include "hbm_target.h"
#include "local_mem.h"
#include "run_state.h"
#include "stream.h"

namespace gs_tlm
{

class Core : public sc_core::sc_module
{
  public:
    Core(sc_core::sc_module_name name, Run &run, unsigned index, HbmTarget &hbm);

    std::unique_ptr<LocalMem> sbuf; /* null when no queue of the core is elaborated */
    std::unique_ptr<LocalMem> psum;
    DmaEngines dma_engines;                             /* declared first: streams use them */
    std::unique_ptr<ComputeEngine> engines[GS_ENG_DMA]; /* by gs_engine; null if absent/idle */
    std::vector<std::unique_ptr<DmaQueue>> queues;      /* by queue ID; null if idle */
};

class Chip : public sc_core::sc_module
{
  public:
    Chip(sc_core::sc_module_name name, Run &run);

    HbmTarget hbm;
    DmaArbiter arbiter;
    std::vector<std::unique_ptr<Core>> cores;
};

} // namespace gs_tlm

#endif
