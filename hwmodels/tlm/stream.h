/*
 * stream.h - the in-order instruction streams of a core: compute engines (tensor, vector,
 * scalar, gpsimd) and DMA queues. Each is one SC_THREAD that walks its instructions in program
 * order.
 *
 * Per instruction:
 *  1. wait until every dependency has completed (targeted wake-up: the owner of the dependency
 *     notifies exactly the waiting stream when that instruction completes);
 *  2. start = max(this stream free, max over deps of dep end + sem_latency if the dependency ran
 *     on another stream) - the predecessor that set the start is recorded for the critical path;
 *  3. busy for the cost-model time (one wait per instruction; DMA and gather: fixed + setup
 *     (+ hbm_latency), then the bytes in chunks through the shared HbmTarget);
 *  4. functional mode: gs_exec_instr at completion (dependents start no earlier, so they see
 *     the data); mark done, wake waiters, write the trace slice.
 *
 * Timing is consumed at every instruction rather than decoupled with a quantum keeper: with
 * decoupling, queues would reach the shared HBM target out of time order and contention results
 * would change, and results must be exact and deterministic.
 *
 * Not modelled: instruction fetch/decode, engine-internal pipelining beyond the cost model's
 * min_ii, DMA descriptor queues deeper than one transfer in flight per queue.
 */
#ifndef GS_TLM_STREAM_H
#define GS_TLM_STREAM_H

#include <cstdint>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "gs/cost.h"
#include "run_state.h"

namespace gs_tlm
{

/* Accumulated per-stream statistics, in picoseconds. */
struct StreamStats {
    uint64_t busy_ps = 0;      /* occupied, excluding HBM contention waits */
    uint64_t stall_dep_ps = 0; /* start delayed by a compute-engine dependency (+ semaphore) */
    uint64_t stall_dma_ps = 0; /* ... by a DMA dependency */
    uint64_t port_ps = 0;      /* waiting for HBM bandwidth inside transfers */
    uint64_t instructions = 0;
    double bytes = 0; /* DMA bytes moved */
    uint64_t transfers = 0;
};

class Stream : public sc_core::sc_module
{
  public:
    /* Port to device memory (DMA queues; gather on gpsimd). Bound for every stream. */
    tlm_utils::simple_initiator_socket<Stream> hbm_port;

    Stream(sc_core::sc_module_name name, Run &run, unsigned core, gs_engine engine, unsigned queue);

    unsigned core() const { return core_; }
    gs_engine engine() const { return engine_; }
    unsigned queue() const { return queue_; }
    unsigned id() const { return id_; }
    int trace_tid() const { return engine_ == GS_ENG_DMA ? kDmaTid0 + (int)queue_ : (int)engine_; }

    /* Program binding: indices of this stream's instructions, in program order. */
    std::vector<uint32_t> instrs;
    /* Deadlock reporting: position in instrs and the dependency being waited on (-1: none). */
    size_t pos() const { return pos_; }
    int64_t waiting_on() const { return waiting_on_; }
    const StreamStats &stats() const { return stats_; }

    /* `s` waits for instruction `instr` of this stream. */
    void add_waiter(uint32_t instr, Stream *s) { waiters_.emplace_back(instr, s); }

  protected:
    /* Run instruction i starting `lead_ps` from now; on return sc_time_stamp() is its end.
     * Returns the part of its duration spent waiting for HBM bandwidth. */
    virtual uint64_t execute(uint32_t i, const gs_instr *in, uint64_t lead_ps) = 0;
    /* Move a transfer's bytes: through the HBM target in chunks when it touches HBM,
     * else at the queue rate. Returns the HBM contention wait. */
    uint64_t move_bytes(const gs_instr *in, const gs_dma_cost &d);
    void wait_ps(uint64_t ps);
    void count_transfer(double bytes)
    {
        stats_.bytes += bytes;
        stats_.transfers++;
    }

    Run &run_;
    tlm::tlm_generic_payload trans_;

  private:
    void thread();
    void complete(uint32_t i, const gs_instr *in);

    unsigned core_;
    gs_engine engine_;
    unsigned queue_;
    unsigned id_;
    size_t pos_ = 0;
    int64_t waiting_on_ = -1;
    uint64_t prev_end_ps_ = 0;
    int64_t prev_idx_ = -1;
    sc_core::sc_event wake_;
    sc_core::sc_event never_; /* waited on for a dependency that does not exist */
    std::vector<std::pair<uint32_t, Stream *>> waiters_;
    StreamStats stats_;
};

/* A compute engine: cost from gs_cost_compute_ns (with its own gs_cost_state, e.g. the scalar
 * engine's loaded activation table); gather adds its transfer through HBM. */
class ComputeEngine : public Stream
{
  public:
    ComputeEngine(sc_core::sc_module_name name, Run &run, unsigned core, gs_engine engine);

  protected:
    uint64_t execute(uint32_t i, const gs_instr *in, uint64_t lead_ps) override;

  private:
    gs_cost_state cost_state_;
};

/* A DMA queue: one transfer at a time, cost from gs_cost_dma. */
class DmaQueue : public Stream
{
  public:
    tlm_utils::simple_initiator_socket<DmaQueue> sbuf_port;
    tlm_utils::simple_initiator_socket<DmaQueue> psum_port;

    DmaQueue(sc_core::sc_module_name name, Run &run, unsigned core, unsigned queue);

  protected:
    uint64_t execute(uint32_t i, const gs_instr *in, uint64_t lead_ps) override;

  private:
    void local_access(uint32_t i, const gs_instr *in, const gs_ap &ap, tlm::tlm_command cmd);
    tlm::tlm_generic_payload local_trans_;
};

} // namespace gs_tlm

#endif
