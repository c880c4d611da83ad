/*
 * dma_arbiter.h - the order in which DMA transfers reserve the engines and the HBM.
 *
 * A transfer reserves its DMA engines and the shared HBM when it is triggered (stream.h). When
 * several are triggered at the same simulated time, the one that reserves first gets the
 * engines first, so that order is part of the timing. It used to be the order in which SystemC
 * happened to run the triggering processes: a property of the scheduler (which process of a
 * delta cycle runs first, how equal-time timed events leave its queue), not of the model. Any
 * change to how processes wait could move results, and so could another SystemC version.
 *
 * Here the streams post their transfers instead, and this primitive channel makes the
 * reservations in its update phase, once per delta cycle, in a fixed order: by trigger time,
 * then by instruction index (program order). Every transfer of one delta cycle is posted
 * before the update phase, whatever order the processes ran in, so the reservations - and every
 * simulated time - depend only on the program and the config. A queue's own transfers keep
 * queue order (their triggers never decrease and their indices increase).
 */
#ifndef GS_TLM_DMA_ARBITER_H
#define GS_TLM_DMA_ARBITER_H

#include <cstdint>
#include <vector>

#include <systemc>

namespace gs_tlm
{

/* A stream that posts transfers: reserve() is called back from the update phase. */
class DmaRequester
{
  public:
    /* Reserve the engines and the HBM for instruction i, triggered at trigger_ps. */
    virtual void reserve(uint32_t i, uint64_t trigger_ps) = 0;

  protected:
    ~DmaRequester() = default;
};

class DmaArbiter : public sc_core::sc_prim_channel
{
  public:
    DmaArbiter() : sc_core::sc_prim_channel(sc_core::sc_gen_unique_name("dma_arbiter")) {}

    /* Reserve for instruction i (triggered at trigger_ps) at the end of this delta cycle. */
    void post(DmaRequester *who, uint32_t i, uint64_t trigger_ps)
    {
        if (posted_.empty()) request_update();
        posted_.push_back(Request{trigger_ps, i, who});
    }

  protected:
    void update() override;

  private:
    struct Request {
        uint64_t trigger_ps;
        uint32_t instr;
        DmaRequester *who;
    };
    std::vector<Request> posted_, serving_;
};

} // namespace gs_tlm

#endif
