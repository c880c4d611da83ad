/*
 * hbm_target.h - the chip's device memory (HBM) as a TLM-2.0 target shared by every DMA queue
 * and gather engine of every core.
 *
 * Timing: the chip bandwidth (config hbm_bandwidth, bytes/ns) is one server. Each request is
 * one DMA engine's share of a transfer, arriving at now + its annotated delay (a share may be
 * reserved ahead, when its engine is still busy). A transaction carries one request (its
 * length and annotated delay), or the shares of a whole transfer in an HbmShares extension
 * (each with its own delay; served in their order, exactly as one transaction each would be).
 * A request needs the server for
 * bytes / hbm_bandwidth and takes the idle time after its arrival, gap by gap, until it has had
 * that much (reservations are kept as busy intervals, busy_intervals.h: work-conserving, so a later
 * reservation for an earlier time fills the gaps instead of queueing behind a future one). The
 * annotated delay returned is "until the server has passed these bytes": N engines streaming at
 * once share hbm_bandwidth, and one engine gets min(its own rate, hbm_bandwidth). The access
 * latency (hbm_latency) is added by the initiator.
 *
 * Data: this target does not copy bytes. The data of HBM tensors lives in the run's gs_mem
 * image (the DMI-style backing store) and is moved by gs_exec_instr when the transfer
 * completes, so the payload carries only command, address and length.
 *
 * Not modelled: HBM channels/banks/pages, refresh, read/write turnaround, per-core
 * arbitration priorities (arrival order only).
 */
#ifndef GS_TLM_HBM_TARGET_H
#define GS_TLM_HBM_TARGET_H

#include <cmath>
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "busy_intervals.h"
#include "gs/config.h"

namespace gs_tlm
{

/*
 * The shares of one DMA transfer that pass the HBM, in one transaction (a TLM-2.0 extension of
 * the generic payload; the payload's own length and delay are then unused). On gen1 a transfer
 * is 16 shares: one b_transport for all of them instead of one each. The initiator owns the
 * request array; the target answers in place.
 */
struct HbmShares : public tlm::tlm_extension<HbmShares> {
    struct Request {
        uint64_t delay_ps; /* in: when the share reaches HBM, from now; out: when HBM has passed
                              its bytes, from now (never before it arrived) */
        uint64_t bytes;    /* HBM bytes charged for it */
    };
    Request *req = nullptr;
    unsigned n = 0;

    tlm::tlm_extension_base *clone() const override { return new HbmShares(*this); }
    void copy_from(const tlm::tlm_extension_base &e) override
    {
        *this = static_cast<const HbmShares &>(e);
    }
};

class HbmTarget : public sc_core::sc_module
{
  public:
    tlm_utils::multi_passthrough_target_socket<HbmTarget> socket;

    HbmTarget(sc_core::sc_module_name name, const gs_config *cfg);

    /* Time the server needs for `bytes` (rounded up to a picosecond: never faster than the
     * bandwidth). */
    uint64_t service_ps(uint64_t bytes) const
    {
        /* the groups of a transfer ask for a few sizes (one to six shares' worth on gen1) again
         * and again: remembered in a small table indexed by a hash of the size */
        Memo &m = memo_[(bytes * 0x9E3779B97F4A7C15ull) >> (64 - kMemoBits)];
        if (bytes != m.bytes) {
            m.bytes = bytes;
            m.ps = (uint64_t)std::ceil((double)bytes * 1000.0 / bytes_per_ns_);
        }
        return m.ps;
    }

    uint64_t busy_ps() const { return busy_ps_; }
    uint64_t bytes() const { return bytes_; }

  private:
    void b_transport(int id, tlm::tlm_generic_payload &trans, sc_core::sc_time &delay);
    /* One request arriving `delay_ps` from now: returns when its bytes have passed, from now. */
    uint64_t serve(uint64_t now, uint64_t delay_ps, uint64_t bytes);
    double bytes_per_ns_;
    static constexpr unsigned kMemoBits = 4;
    struct Memo {
        uint64_t bytes = 0, ps = 0; /* service_ps(0) is 0 */
    };
    mutable Memo memo_[1u << kMemoBits];
    BusyIntervals busy_; /* reservations; those ended before now are dropped */
    uint64_t busy_ps_ = 0;
    uint64_t bytes_ = 0;
};

} // namespace gs_tlm

#endif
