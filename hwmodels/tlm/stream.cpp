/* stream.cpp - compute engines and DMA queues (see stream.h). */
#include "stream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hbm_target.h"

namespace gs_tlm
{

namespace
{
/*
 * Modelling granularity of HBM arbitration: a transfer reaches the HBM target in chunks of at
 * most this many (charged) bytes, so concurrent transfers interleave fairly. Not a latency: a
 * single uncontended transfer takes the same time whatever this value.
 */
constexpr double kHbmChunkBytes = 64.0 * 1024.0;
/* SystemC thread stack: gs_exec_instr runs on it. */
constexpr std::size_t kStackBytes = 1u << 20;

/*
 * Start loading this stream's next instruction record while the current one is simulated:
 * big programs do not fit in cache (a gs_instr is ~0.5 KiB, spread over several cache lines)
 * and the first touch of each record was the largest single cost per simulated instruction.
 */
void prefetch_instr(const gs_instr *in)
{
    const char *p = reinterpret_cast<const char *>(in);
    for (std::size_t off = 0; off < sizeof *in; off += 64)
        __builtin_prefetch(p + off);
}

bool is_local(gs_memspace s)
{
    return s == GS_MEM_SBUF || s == GS_MEM_PSUM;
}

/* The operand part of a gs_instr_format line: without the index/core/engine/opcode columns
 * (the slice's track and name already say them) and the trailing " @file:line" (in "src"). */
const char *operands_only(char *text, const char *opname)
{
    const char *p = strstr(text, opname);
    p = p ? p + strlen(opname) : text;
    while (*p == ' ')
        ++p;
    char *at = strstr(text, " @");
    if (at && at >= p) {
        *at = '\0';
        while (at > p && at[-1] == ' ')
            *--at = '\0';
    }
    return p;
}
} // namespace

Stream::Stream(sc_core::sc_module_name name, Run &run, unsigned core, gs_engine engine,
               unsigned queue)
    : sc_core::sc_module(name), hbm_port("hbm_port"), run_(run), core_(core), engine_(engine),
      queue_(queue), id_(run.stream_id(core, engine, queue))
{
    SC_HAS_PROCESS(Stream);
    SC_THREAD(thread);
    set_stack_size(kStackBytes);
}

void Stream::wait_ps(uint64_t ps)
{
    if (ps) sc_core::wait(sc_core::sc_time::from_value(ps));
}

void Stream::thread()
{
    Run &r = run_;
    for (pos_ = 0; pos_ < instrs.size(); ++pos_) {
        const uint32_t i = instrs[pos_];
        const gs_instr *in = gs_program_instr(r.prog, i);
        if (pos_ + 1 < instrs.size()) prefetch_instr(gs_program_instr(r.prog, instrs[pos_ + 1]));
        for (uint32_t k = 0; k < in->n_deps; ++k) {
            const uint32_t d = in->deps[k];
            if (d >= r.n) {
                waiting_on_ = d;
                sc_core::wait(never_); /* never returns: reported as a deadlock */
            }
            while (!r.done[d]) {
                waiting_on_ = d;
                r.streams[r.owner[d]]->add_waiter(d, this);
                sc_core::wait(wake_);
            }
        }
        waiting_on_ = -1;

        /* Which predecessor sets the start: this stream's previous instruction or the latest
         * dependency (plus the semaphore when it ran elsewhere). Ties keep program order. */
        uint64_t start = prev_end_ps_;
        int64_t pred = prev_idx_;
        bool by_dep = false;
        for (uint32_t k = 0; k < in->n_deps; ++k) {
            const uint32_t d = in->deps[k];
            const uint64_t t = r.end_ps[d] + (r.owner[d] != id_ ? r.sem_ps : 0);
            if (t > start) {
                start = t;
                pred = d;
                by_dep = true;
            }
        }
        const uint64_t stall = start - prev_end_ps_;
        if (stall) {
            if (by_dep && r.stream_engine(r.owner[pred]) == GS_ENG_DMA)
                stats_.stall_dma_ps += stall;
            else
                stats_.stall_dep_ps += stall;
        }
        r.start_ps[i] = start;
        r.pred[i] = pred;
        const uint64_t now = sc_core::sc_time_stamp().value();
        const uint64_t port = execute(i, in, start - now);
        if (r.status != GS_OK) return; /* functional error: the run is stopping */
        r.port_ps[i] = port;
        complete(i, in);
    }
}

void Stream::complete(uint32_t i, const gs_instr *in)
{
    Run &r = run_;
    const uint64_t end = sc_core::sc_time_stamp().value();
    r.end_ps[i] = end;
    const uint64_t dur = end - r.start_ps[i];
    stats_.busy_ps += dur - r.port_ps[i];
    stats_.port_ps += r.port_ps[i];
    stats_.instructions++;
    prev_end_ps_ = end;
    prev_idx_ = i;

    if (r.functional) {
        gs_error e;
        gs_error_clear(&e);
        gs_status st = gs_exec_instr(r.mem, r.prog, i, &e);
        if (st != GS_OK) {
            r.fail(st, e);
            return;
        }
    }
    r.done[i] = 1;
    for (size_t k = 0; k < waiters_.size();) {
        if (waiters_[k].first == i) {
            waiters_[k].second->wake_.notify();
            waiters_[k] = waiters_.back();
            waiters_.pop_back();
        } else {
            ++k;
        }
    }
    if (r.trace.is_open()) {
        char text[1024];
        gs_instr_format(r.prog, i, text, sizeof text);
        r.trace.complete((int)core_, trace_tid(), gs_opcode_name(in->op), r.start_ps[i], dur, i,
                         operands_only(text, gs_opcode_name(in->op)), in->deps, in->n_deps,
                         in->file, in->line, r.port_ps[i]);
    }
    r.on_complete();
}

uint64_t Stream::move_bytes(const gs_instr *in, const gs_dma_cost &d)
{
    Run &r = run_;
    if (!(d.eff_bytes > 0)) return 0;
    if (!d.hbm) {
        wait_ps(ns_to_ps(d.eff_bytes / d.queue_bw));
        return 0;
    }
    /* HBM charge: every HBM side of the transfer passes the server (an HBM->HBM copy twice),
     * and never less than the bytes the statistics count as HBM traffic, so the memory-bound
     * roofline stays a true lower bound. */
    const bool src_hbm = in->in[0].space == GS_MEM_HBM;
    const int sides = (int)src_hbm + (int)(in->n_out > 0 && in->out[0].space == GS_MEM_HBM);
    const double hbm_bytes = gs_cost_hbm_bytes(in);
    const double charge = std::max((double)std::max(sides, 1), hbm_bytes / d.eff_bytes);
    const double counted = hbm_bytes / d.eff_bytes; /* for the bandwidth-in-use counter */

    const gs_ap &ap = src_hbm ? in->in[0] : in->out[0];
    const gs_tensor_info *ti = ap.tensor >= 0 ? gs_program_tensor(r.prog, ap.tensor) : nullptr;
    uint64_t addr = (ti ? ti->hbm_addr : 0) +
                    (uint64_t)std::max<int64_t>(ap.offset, 0) * gs_dtype_size(ap.dtype);
    trans_.set_command(src_hbm ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
    trans_.set_data_ptr(nullptr);
    trans_.set_byte_enable_ptr(nullptr);
    trans_.set_dmi_allowed(false);

    uint64_t port = 0;
    double remaining = d.eff_bytes;
    while (remaining > 0) {
        const double c = std::min(remaining, kHbmChunkBytes);
        remaining -= c;
        const uint64_t charged = (uint64_t)std::ceil(c * charge);
        const uint64_t t0 = sc_core::sc_time_stamp().value();
        trans_.set_address(addr);
        trans_.set_data_length((unsigned)charged);
        trans_.set_streaming_width((unsigned)charged);
        trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        hbm_port->b_transport(trans_, delay);
        addr += (uint64_t)c;
        const uint64_t q = ns_to_ps(c / d.queue_bw);
        const uint64_t h = delay.value();
        const uint64_t done = std::max(q, h);
        const uint64_t uncontended = std::max(q, r.hbm->service_ps(charged));
        port += done - std::min(done, uncontended);
        if (r.hbm_counter && done)
            r.hbm_counter->add(t0, t0 + done, c * counted * 1000.0 / (double)done);
        wait_ps(done);
    }
    return port;
}

ComputeEngine::ComputeEngine(sc_core::sc_module_name name, Run &run, unsigned core,
                             gs_engine engine)
    : Stream(name, run, core, engine, 0)
{
    gs_cost_state_init(&cost_state_);
}

uint64_t ComputeEngine::execute(uint32_t, const gs_instr *in, uint64_t lead_ps)
{
    const uint64_t busy = ns_to_ps(gs_cost_compute_ns(run_.cfg, in, &cost_state_));
    if (in->op != GS_OP_GATHER) {
        wait_ps(lead_ps + busy);
        return 0;
    }
    /* gather: descriptor generation on the engine, then the rows through HBM like a DMA. */
    const gs_dma_cost d = gs_cost_gather_transfer(run_.cfg, in);
    wait_ps(lead_ps + busy + ns_to_ps(d.fixed_ns + d.setup_ns) + (d.hbm ? run_.hbm_latency_ps : 0));
    return move_bytes(in, d);
}

DmaQueue::DmaQueue(sc_core::sc_module_name name, Run &run, unsigned core, unsigned queue)
    : Stream(name, run, core, GS_ENG_DMA, queue), sbuf_port("sbuf_port"), psum_port("psum_port")
{
}

void DmaQueue::local_access(uint32_t i, const gs_instr *in, const gs_ap &ap, tlm::tlm_command cmd)
{
    const uint64_t part_bytes = ap.space == GS_MEM_SBUF ? gs_config_sbuf_partition_bytes(run_.cfg)
                                                        : gs_config_psum_partition_bytes(run_.cfg);
    local_trans_.set_command(cmd);
    local_trans_.set_address((uint64_t)ap.part_start * part_bytes +
                             (uint64_t)std::max<int64_t>(ap.offset, 0));
    local_trans_.set_data_ptr(nullptr);
    local_trans_.set_data_length((unsigned)std::min<uint64_t>(gs_ap_bytes(&ap), UINT32_MAX));
    local_trans_.set_streaming_width(local_trans_.get_data_length());
    local_trans_.set_byte_enable_ptr(nullptr);
    local_trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    (ap.space == GS_MEM_SBUF ? sbuf_port : psum_port)->b_transport(local_trans_, delay);
    if (local_trans_.get_response_status() != tlm::TLM_OK_RESPONSE) {
        gs_error e;
        gs_error_set(&e, GS_ERR_BOUNDS, in->file, in->line, 0,
                     "instruction %u (%s): %s address outside core %u's buffer", i,
                     gs_opcode_name(in->op), gs_memspace_name(ap.space), core());
        run_.fail(GS_ERR_BOUNDS, e);
    }
    wait_ps(delay.value());
}

uint64_t DmaQueue::execute(uint32_t i, const gs_instr *in, uint64_t lead_ps)
{
    const gs_dma_cost d = gs_cost_dma(run_.cfg, in);
    wait_ps(lead_ps + ns_to_ps(d.fixed_ns + d.setup_ns) + (d.hbm ? run_.hbm_latency_ps : 0));
    if (in->n_in > 0 && is_local(in->in[0].space))
        local_access(i, in, in->in[0], tlm::TLM_READ_COMMAND);
    if (in->n_out > 0 && is_local(in->out[0].space))
        local_access(i, in, in->out[0], tlm::TLM_WRITE_COMMAND);
    if (run_.status != GS_OK) return 0;
    const uint64_t port = move_bytes(in, d);
    count_transfer(d.bytes);
    return port;
}

} // namespace gs_tlm
