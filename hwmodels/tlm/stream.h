/*
 * stream.h - the in-order instruction streams of a core: compute engines (tensor, vector,
 * scalar, gpsimd) and DMA queues, plus the DMA engines the queues share.
 *
 * Every stream is a SystemC method process (SC_METHOD) that walks its instructions as a state
 * machine. It is statically sensitive to one event of its own, which is notified for whatever
 * it waits for (the last of its dependencies completing; the end of a busy time, as a timed
 * notification; a gather's reservation): a method runs without a thread context switch, and
 * static sensitivity keeps SystemC's per-activation bookkeeping small.
 *
 * Compute engine, per instruction:
 *  1. wait until every dependency has completed (targeted wake-up: the owner of the last
 *     dependency to complete notifies exactly the waiting stream, once per instruction);
 *  2. start = max(this stream free, max over deps of dep end + sem_latency if the dependency ran
 *     on another stream) - the predecessor that set the start is recorded for the critical path;
 *  3. busy for the cost-model time (triggered again at its end; gather adds its transfer over
 *     the core's DMA engines like a DMA queue);
 *  4. functional mode: gs_exec_instr at completion (dependents start no earlier, so they see
 *     the data); mark done, wake waiters, write the trace slice.
 *
 * DMA queue (queue ID q of a core: the kernel API's queue argument): its issue method takes the
 * queue's transfers in order; a transfer is triggered when its dependencies are met (+ the
 * semaphore) and no earlier than the queue's previous trigger, and its shares reach the DMA
 * engines issue_latency later. Each engine serves the shares it is given one at a time in
 * arrival order - with one transfer per queue in flight on an engine, that is the round robin
 * over queues of the hardware at share granularity, and transfers of one queue stay in order on
 * every engine. A share is one timed reservation on its engine (fixed + descriptors + bytes at
 * the engine's bandwidth, its bytes through the shared HBM target), not one event per
 * descriptor. The issue method posts each triggered transfer to the chip's DMA arbiter
 * (dma_arbiter.h), which makes the reservations at the end of the delta cycle, in trigger then
 * program order, so that transfers triggered at the same time reserve in an order fixed by the
 * program, not by the order SystemC runs the processes in. The queue's completion method
 * completes each transfer when its last share ends (it is triggered at that time, once per
 * transfer), so a queue keeps several transfers in flight and their issue latencies overlap.
 *
 * Timing is consumed in simulated-time order rather than decoupled with a quantum keeper:
 * reservations are made when a transfer is triggered, for the time it reaches the engines, so
 * the HBM target sees them in time order and results stay exact and deterministic. Because the
 * arbiter fixes the order of the reservations, how the processes wait (one wake-up per
 * instruction for its dependencies, one per transfer for its completion) does not change any
 * simulated time.
 *
 * Not modelled: instruction fetch/decode, engine-internal pipelining beyond the cost model's
 * min_ii, DMA QoS classes (v4 schedules queues by class; here every queue is equal),
 * preemption of a share by another queue's (arbitration is per share, not per descriptor).
 */
#ifndef GS_TLM_STREAM_H
#define GS_TLM_STREAM_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <queue>
#include <utility>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "dma_arbiter.h"
#include "gs/cost.h"
#include "hbm_target.h"
#include "run_state.h"

namespace gs_tlm
{

class DmaEngines;

/* The result of a transfer over the engines: when it ends and how much of it was HBM waiting. */
struct TransferTiming {
    uint64_t end_ps;
    uint64_t port_ps;
};

class Stream : public sc_core::sc_module
{
  public:
    Stream(sc_core::sc_module_name name, Run &run, unsigned core, gs_engine engine, unsigned queue);

    unsigned core() const { return core_; }
    gs_engine engine() const { return engine_; }
    unsigned queue() const { return queue_; }
    unsigned id() const { return id_; }
    int trace_tid() const { return engine_ == GS_ENG_DMA ? kDmaTid0 + (int)queue_ : (int)engine_; }
    /* The trace track of instruction i's slice (trace_tid(), but see DmaQueue). */
    virtual int trace_tid_of(uint32_t i)
    {
        (void)i;
        return trace_tid();
    }

    /* Program binding: indices of this stream's instructions, in program order. */
    std::vector<uint32_t> instrs;
    /* Deadlock reporting: position in instrs and the dependency being waited on (-1: none). */
    size_t pos() const { return pos_; }
    int64_t waiting_on() const;

    /* `s` waits for instruction `instr` of this stream. */
    void add_waiter(uint32_t instr, Stream *s) { waiters_.emplace_back(instr, s); }

  protected:
    /* Whether every dependency of `in` has completed. If not, the calling method is triggered
     * again when the last of them completes (each not yet done counts it among its waiters;
     * one wake-up for all of them), or never for a dependency that does not exist (reported
     * as a deadlock, via waiting_on). */
    bool deps_done(const gs_instr *in);
    /* Earliest start after the dependencies (+ semaphore when they ran elsewhere) and `floor`
     * (this stream's own constraint, set by instruction floor_idx); records its start and
     * predecessor in the timeline and the dependency stall. */
    uint64_t dep_start(uint32_t i, const gs_instr *in, uint64_t floor, int64_t floor_idx);
    void complete(uint32_t i, const gs_instr *in);
    void count_transfer(double bytes)
    {
        stats_.bytes += bytes;
        stats_.transfers++;
    }

    Run &run_;
    /* the stream's method is sensitive to it alone (see the file comment) */
    sc_core::sc_event wake_;
    size_t pos_ = 0;
    bool waiting_ = false; /* for dependencies (waiting_on() finds which) */
    uint64_t prev_end_ps_ = 0;
    int64_t prev_idx_ = -1;

  private:
    unsigned core_;
    gs_engine engine_;
    unsigned queue_;
    unsigned id_;
    uint32_t missing_ = 0; /* dependencies still to complete before wake_ */
    std::vector<std::pair<uint32_t, Stream *>> waiters_;
    gs_stream_counters &stats_; /* this stream's counters in the run's timeline */
};

/* A transfer's HBM side (set per transfer by start()) and the costs of its shares, kept from
 * one transfer to the next: the shares of a transfer are mostly equal, and so are the transfers
 * of a loop, so the costs are computed when their inputs change rather than once per engine.
 * It also holds the transaction that takes the transfer's shares to the HBM (run_transfer). */
class TransferHbm
{
  public:
    TransferHbm();
    TransferHbm(const TransferHbm &) = delete;
    TransferHbm &operator=(const TransferHbm &) = delete;

    void start(const Run &r, const gs_instr *in, const gs_dma_plan &plan);
    bool src_hbm = false; /* reads HBM (else writes it) */
    double hbm_bytes = 0; /* gs_cost_hbm_bytes of the instruction */
    double charge = 0;    /* HBM bytes charged per effective byte of a share */
    uint64_t addr = 0;    /* HBM address of the HBM side */

    struct ShareCost {
        uint64_t setup_ps = 0;  /* fixed cost and descriptors */
        uint64_t stream_ps = 0; /* its effective bytes at the engine's rate */
        uint64_t charged = 0;   /* HBM bytes reserved for one copy of it */
        /* the largest group of such shares (up to the core's engines) that passes the HBM
         * within one share's streaming time (see run_transfer) */
        unsigned max_group = 1;
    };
    /* The costs of share `sh` of the started transfer on a core with `engines` engines. */
    const ShareCost &cost(const Run &r, const gs_dma_plan &plan, const gs_dma_share &sh,
                          unsigned engines);

    /* Engines [e, e + copies) with the same share that start together and end together. */
    struct Group {
        unsigned e, copies;
        uint64_t start_ps;    /* the shares start on their engines */
        uint64_t bytes_at_ps; /* their bytes start to flow (after fixed cost and descriptors) */
        uint64_t end_ps;      /* the engines are done at their own rate */
        uint64_t charged;     /* HBM bytes of one copy */
        bool hbm;             /* passes the HBM (one request of `shares`) */
    };
    std::vector<Group> groups; /* sized to the engines; run_transfer uses a prefix */
    /* The HBM requests of the groups that pass it, in group order, and their transaction. */
    std::vector<HbmShares::Request> requests;
    tlm::tlm_generic_payload trans;
    HbmShares *shares; /* trans's extension (the payload owns it) */

  private:
    /* what cost_ was computed from (compared field by field: a key built on the stack and
     * compared as a whole stalled on store forwarding) */
    struct Key {
        double eff_bytes = -1, descriptors = -1, fixed_ns = -1, descriptor_ns = -1, engine_bw = -1,
               charge = -1;
        int hbm = -1;
        unsigned engines = 0;
    };
    Key key_;
    ShareCost cost_;
};

/* A compute engine: cost from gs_cost_compute_ns (with its own gs_cost_state, e.g. the scalar
 * engine's loaded activation table); gather adds its transfer through HBM, posted to the
 * arbiter like a DMA queue's. */
class ComputeEngine : public Stream, public DmaRequester
{
  public:
    ComputeEngine(sc_core::sc_module_name name, Run &run, unsigned core, gs_engine engine,
                  DmaEngines &dma_engines);
    void reserve(uint32_t i, uint64_t trigger_ps) override;

  private:
    /* The engine's SC_METHOD: runs its instructions in order, a step per activation (see the
     * file comment). */
    void step();
    enum class Phase { kNext, kDeps, kGatherPost, kGatherReserved, kGatherDone, kDone };
    Phase phase_ = Phase::kNext;
    gs_cost_state cost_state_;
    DmaEngines &dma_engines_;
    TransferHbm xfer_;
    /* the gather being reserved: its answer, and an event for it */
    TransferTiming gather_{0, 0};
    double gather_bytes_ = 0;
};

/* One DMA engine of a core as a module: its port to the HBM target (DmaEngines keeps its
 * timing). */
class DmaEngine : public sc_core::sc_module
{
  public:
    tlm_utils::simple_initiator_socket<DmaEngine> hbm_port;
    explicit DmaEngine(sc_core::sc_module_name name)
        : sc_core::sc_module(name), hbm_port("hbm_port")
    {
    }
};

/* The DMA engines of a core. Each serves transfer shares one at a time, in the order they are
 * reserved. A transfer touches every engine, so their timing state (when each is free, its
 * counters in the run's timeline) is kept side by side rather than in each module. */
class DmaEngines
{
  public:
    /* Create the core's engine modules (children of the module being constructed) and bind
     * them to the HBM target. */
    DmaEngines(Run &run, unsigned core, HbmTarget &hbm);

    struct Timing {
        uint64_t start_ps;    /* the share starts on the engine */
        uint64_t bytes_at_ps; /* its bytes start to flow (after fixed cost and descriptors) */
        uint64_t busy_end_ps; /* the engine is free again (its bytes have passed) */
        uint64_t end_ps;      /* the share is complete (+ the HBM access latency) */
        uint64_t port_ps;     /* of which waiting for HBM bandwidth */
    };
    unsigned size() const { return (unsigned)free_ps_.size(); }
    /* When a share arriving at ready_ps would start on engine e. */
    uint64_t start_for(unsigned e, uint64_t ready_ps) const
    {
        return std::max(ready_ps, free_ps_[e]);
    }
    /* Occupy engines [first, first + copies) for their shares of instruction i, all with
     * timing t (statistics, trace). */
    void occupy(unsigned first, unsigned copies, const Timing &t, uint32_t i, const gs_instr *in,
                const gs_dma_plan &plan);
    /* Engine e's port to the HBM target. */
    tlm_utils::simple_initiator_socket<DmaEngine> &hbm_port(unsigned e)
    {
        return modules_[e]->hbm_port;
    }

  private:
    Run &run_;
    unsigned core_;
    std::vector<std::unique_ptr<DmaEngine>> modules_;
    std::vector<uint64_t> free_ps_;
    gs_dma_engine_counters *stats_; /* engine e's counters in the run's timeline: stats_[e] */
};

/* Run `plan` for instruction i over the engines of a core, the shares arriving at ready_ps
 * (>= now; `x`: the calling stream's transfer state). The shares that pass the HBM are sent in
 * one transaction, through the port of the first engine that has one. */
TransferTiming run_transfer(Run &run, DmaEngines &engines, uint32_t i, const gs_instr *in,
                            const gs_dma_plan &plan, uint64_t ready_ps, TransferHbm &x);

/* A DMA queue ID of a core (see the file comment). */
class DmaQueue : public Stream, public DmaRequester
{
  public:
    tlm_utils::simple_initiator_socket<DmaQueue> sbuf_port;
    tlm_utils::simple_initiator_socket<DmaQueue> psum_port;

    DmaQueue(sc_core::sc_module_name name, Run &run, unsigned core, unsigned queue,
             DmaEngines &engines);
    void reserve(uint32_t i, uint64_t trigger_ps) override;
    /* A queue has several transfers in flight, and a later one may end after an earlier one
     * that it does not contain: the trace draws each on the first of the queue's tracks (its
     * own, then "dma qN (2)", ...) where it overlaps no other, so slices never partially
     * overlap on a track. */
    int trace_tid_of(uint32_t i) override;

  private:
    void trace_lane(uint32_t i, uint64_t start_ps, uint64_t end_ps);
    int lane_tid(unsigned k) const;
    std::vector<uint64_t> lane_end_;                 /* trace only: each track's last end */
    std::unordered_map<uint32_t, unsigned> lane_of_; /* trace only: transfers not on track 0 */
    /* The queue's two SC_METHODs: triggers and posts its transfers in order; completes them. */
    void issue_method();
    void completion_method();
    bool resumed_ = false; /* issue_method was triggered by the dependencies of instrs[pos_] */
    uint64_t last_trigger_ = 0;
    int64_t last_idx_ = -1;
    void local_access(uint32_t i, const gs_instr *in, const gs_ap &ap, tlm::tlm_command cmd);
    tlm::tlm_generic_payload local_trans_;
    DmaEngines &engines_;
    const uint64_t sbuf_part_bytes_, psum_part_bytes_; /* local addresses: partition * these */
    TransferHbm xfer_;
    /* the plans of the last two shapes this queue transferred and an instruction of each
     * (a loop's loads alternate between two operands' tiles); plan_[recent_] is the newer */
    const gs_instr *planned_[2] = {nullptr, nullptr};
    gs_dma_plan plan_[2]{};
    unsigned recent_ = 0;
    /* transfers in flight: (end, instruction), earliest end first */
    using Pending = std::pair<uint64_t, uint32_t>;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
    sc_core::sc_event pending_changed_;
    bool issue_done_ = false;
    size_t posted_ = 0, reserved_ = 0; /* transfers posted to the arbiter, and reserved */
};

} // namespace gs_tlm

#endif
