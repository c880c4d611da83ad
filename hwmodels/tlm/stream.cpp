/* stream.cpp - compute engines and DMA queues (see stream.h). */
#include "stream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "hbm_target.h"

namespace gs_tlm
{

namespace
{
/*
 * Start loading this stream's next instruction records while the current one is simulated:
 * big programs do not fit in cache (a gs_instr is 88 bytes, two cache lines) and the first
 * touch of each record was the largest single cost per simulated instruction. The record two
 * ahead is fetched, and the dependency list and first operands of the next one (its record was
 * fetched one instruction ago, so reading where they lie does not stall).
 */
void prefetch_instr(const gs_instr *in)
{
    const char *p = reinterpret_cast<const char *>(in);
    for (std::size_t off = 0; off < sizeof *in; off += 64)
        __builtin_prefetch(p + off);
}

void prefetch_ahead(const gs_program *prog, const std::vector<uint32_t> &instrs, std::size_t pos)
{
    if (pos + 2 < instrs.size()) prefetch_instr(gs_program_instr(prog, instrs[pos + 2]));
    if (pos + 1 < instrs.size()) {
        const gs_instr *next = gs_program_instr(prog, instrs[pos + 1]);
        if (next->n_deps) __builtin_prefetch(next->deps);
        __builtin_prefetch(next->in[0]);
        __builtin_prefetch(next->out[0]);
    }
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

/* A DMA endpoint for the trace: the access pattern, an HBM one led by its tensor's name. */
std::string trace_endpoint(const Run &r, const gs_ap *ap)
{
    if (!ap) return "";
    char text[256];
    gs_ap_format(ap, text, sizeof text);
    const gs_tensor_info *ti = ap->space == GS_MEM_HBM && ap->tensor >= 0
                                   ? gs_program_tensor(r.prog, ap->tensor)
                                   : nullptr;
    return ti ? std::string(ti->name) + ": " + text : std::string(text);
}
} // namespace

Stream::Stream(sc_core::sc_module_name name, Run &run, unsigned core, gs_engine engine,
               unsigned queue)
    : sc_core::sc_module(name), run_(run), core_(core), engine_(engine), queue_(queue),
      id_(run.stream_id(core, engine, queue)), stats_(run.tl.stream[id_])
{
}

bool Stream::deps_done(const gs_instr *in)
{
    Run &r = run_;
    uint32_t missing = 0;
    for (uint32_t k = 0; k < in->n_deps; ++k) {
        const uint32_t d = in->deps[k];
        if (d >= r.n) {
            waiting_ = true; /* nothing will notify wake_: reported as a deadlock */
            return false;
        }
        if (!r.instr(d).done) {
            r.streams[r.instr(d).stream]->add_waiter(d, this);
            ++missing;
        }
    }
    if (!missing) return true;
    missing_ = missing;
    waiting_ = true;
    return false;
}

int64_t Stream::waiting_on() const
{
    if (!waiting_ || pos_ >= instrs.size()) return -1;
    const gs_instr *in = gs_program_instr(run_.prog, instrs[pos_]);
    for (uint32_t k = 0; k < in->n_deps; ++k)
        if (in->deps[k] >= run_.n || !run_.instr(in->deps[k]).done) return in->deps[k];
    return -1;
}

uint64_t Stream::dep_start(uint32_t i, const gs_instr *in, uint64_t floor, int64_t floor_idx)
{
    /* Which predecessor sets the start: this stream's own constraint or the latest dependency
     * (plus the semaphore when it ran elsewhere). Ties keep program order. */
    Run &r = run_;
    uint64_t start = floor;
    int64_t pred = floor_idx;
    bool by_dep = false;
    for (uint32_t k = 0; k < in->n_deps; ++k) {
        const uint32_t d = in->deps[k];
        const gs_timeline_instr &x = r.instr(d);
        const uint64_t t = x.end_ps + (x.stream != id_ ? r.sem_ps : 0);
        if (t > start) {
            start = t;
            pred = d;
            by_dep = true;
        }
    }
    const uint64_t stall = start - floor;
    if (stall) {
        if (by_dep && r.stream_engine(r.instr((size_t)pred).stream) == GS_ENG_DMA)
            stats_.stall_dma_ps += stall;
        else
            stats_.stall_dep_ps += stall;
    }
    r.instr(i).start_ps = start;
    r.instr(i).pred = (int32_t)pred; /* < n <= INT32_MAX (gs_timeline_init) */
    return start;
}

void Stream::complete(uint32_t i, const gs_instr *in)
{
    Run &r = run_;
    const uint64_t end = sc_core::sc_time_stamp().value();
    gs_timeline_instr &x = r.instr(i);
    x.end_ps = end;
    const uint64_t dur = end - x.start_ps;
    stats_.busy_ps += dur - x.hbm_wait_ps;
    stats_.hbm_wait_ps += x.hbm_wait_ps;
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
    x.done = 1;
    for (size_t k = 0; k < waiters_.size();) {
        if (waiters_[k].first == i) {
            if (--waiters_[k].second->missing_ == 0) waiters_[k].second->wake_.notify();
            waiters_[k] = waiters_.back();
            waiters_.pop_back();
        } else {
            ++k;
        }
    }
    if (r.trace.is_open()) {
        char text[1024];
        gs_instr_format(r.prog, i, text, sizeof text);
        const char *operands = operands_only(text, gs_opcode_name(in->op));
        if (engine_ == GS_ENG_DMA) {
            /* a transfer, from its trigger to its completion */
            const std::string from = trace_endpoint(r, in->n_in > 0 ? in->in[0] : nullptr);
            const std::string to = trace_endpoint(r, in->n_out > 0 ? in->out[0] : nullptr);
            const gs_trace_dma d = {in->n_out > 0 ? (double)gs_ap_bytes(in->out[0]) : 0.0,
                                    from.c_str(), to.c_str(), 0, 0};
            r.trace.complete_dma((int)core_, trace_tid_of(i), gs_opcode_name(in->op), x.start_ps,
                                 dur, i, operands, in->deps, in->n_deps, in->file, in->line,
                                 x.hbm_wait_ps, d);
        } else {
            r.trace.complete((int)core_, trace_tid(), gs_opcode_name(in->op), x.start_ps, dur, i,
                             operands, in->deps, in->n_deps, in->file, in->line, x.hbm_wait_ps);
        }
    }
    r.on_complete();
}

/* ---- compute engines ---- */

ComputeEngine::ComputeEngine(sc_core::sc_module_name name, Run &run, unsigned core,
                             gs_engine engine, DmaEngines &dma_engines)
    : Stream(name, run, core, engine, 0), dma_engines_(dma_engines)
{
    gs_cost_state_init(&cost_state_);
    SC_HAS_PROCESS(ComputeEngine);
    SC_METHOD(step);
    sensitive << wake_;
}

void ComputeEngine::step()
{
    Run &r = run_;
    while (pos_ < instrs.size()) {
        const uint32_t i = instrs[pos_];
        const gs_instr *in = gs_program_instr(r.prog, i);
        const uint64_t now = sc_core::sc_time_stamp().value();
        switch (phase_) {
        case Phase::kNext:
            prefetch_ahead(r.prog, instrs, pos_);
            if (!deps_done(in)) {
                phase_ = Phase::kDeps;
                return;
            }
            /* fall through */
        case Phase::kDeps: {
            waiting_ = false;
            const uint64_t start = dep_start(i, in, prev_end_ps_, prev_idx_);
            const uint64_t busy = ns_to_ps(gs_cost_compute_ns(r.cfg, in, &cost_state_));
            /* gather: descriptor generation on the engine, then the rows over the core's DMA
             * engines like a DMA transfer */
            phase_ = in->op == GS_OP_GATHER ? Phase::kGatherPost : Phase::kDone;
            if (start - now + busy > 0) {
                wake_.notify(sc_core::sc_time::from_value(start - now + busy));
                return;
            }
            continue;
        }
        case Phase::kGatherPost:
            /* triggered now; reserve() answers at the end of this delta cycle */
            r.arbiter->post(this, i, now);
            phase_ = Phase::kGatherReserved;
            return; /* reserve() notifies wake_ */
        case Phase::kGatherReserved:
            phase_ = Phase::kGatherDone;
            if (gather_.end_ps > now) {
                wake_.notify(sc_core::sc_time::from_value(gather_.end_ps - now));
                return;
            }
            continue;
        case Phase::kGatherDone:
            count_transfer(gather_bytes_);
            /* fall through */
        case Phase::kDone:
            if (r.status != GS_OK) return; /* the run is stopping */
            r.instr(i).hbm_wait_ps = in->op == GS_OP_GATHER ? gather_.port_ps : 0;
            complete(i, in);
            if (r.status != GS_OK) return; /* functional error: the run is stopping */
            ++pos_;
            phase_ = Phase::kNext;
            continue;
        }
    }
}

void ComputeEngine::reserve(uint32_t i, uint64_t trigger_ps)
{
    const gs_instr *in = gs_program_instr(run_.prog, i);
    gs_dma_plan plan;
    gs_cost_dma_plan(run_.cfg, in, &plan);
    gather_ = run_transfer(run_, dma_engines_, i, in, plan, trigger_ps, xfer_);
    gather_bytes_ = plan.bytes;
    wake_.notify(sc_core::SC_ZERO_TIME);
}

/* ---- DMA engines ---- */

DmaEngines::DmaEngines(Run &run, unsigned core, HbmTarget &hbm)
    : run_(run), core_(core), free_ps_(run.dma_engines, 0),
      stats_(&run.tl.dma[(size_t)core * run.tl.dma_engines])
{
    for (unsigned e = 0; e < run.dma_engines; ++e) {
        std::string name = "dma_engine" + std::to_string(e);
        modules_.emplace_back(new DmaEngine(name.c_str()));
        modules_.back()->hbm_port.bind(hbm.socket);
    }
}

TransferHbm::TransferHbm() : shares(new HbmShares)
{
    trans.set_data_ptr(nullptr);
    trans.set_byte_enable_ptr(nullptr);
    trans.set_dmi_allowed(false);
    trans.set_extension(shares);
}

void TransferHbm::start(const Run &r, const gs_instr *in, const gs_dma_plan &plan)
{
    src_hbm = false;
    hbm_bytes = charge = 0;
    addr = 0;
    if (!plan.hbm) return;
    src_hbm = in->in[0]->space == GS_MEM_HBM;
    /* HBM charge: every HBM side of the transfer passes the server (an HBM->HBM copy twice),
     * and never less than the bytes the statistics count as HBM traffic, so the memory-bound
     * roofline stays a true lower bound. */
    const int sides = (int)src_hbm + (int)(in->n_out > 0 && in->out[0]->space == GS_MEM_HBM);
    hbm_bytes = gs_cost_hbm_bytes(in);
    charge =
        std::max((double)std::max(sides, 1), plan.eff_bytes > 0 ? hbm_bytes / plan.eff_bytes : 0);
    const gs_ap &ap = src_hbm ? *in->in[0] : *in->out[0];
    const gs_tensor_info *ti = ap.tensor >= 0 ? gs_program_tensor(r.prog, ap.tensor) : nullptr;
    addr = (ti ? ti->hbm_addr : 0) +
           (uint64_t)std::max<int64_t>(ap.offset, 0) * gs_dtype_size(ap.dtype);
}

const TransferHbm::ShareCost &TransferHbm::cost(const Run &r, const gs_dma_plan &plan,
                                                const gs_dma_share &sh, unsigned engines)
{
    Key &k = key_;
    if (sh.eff_bytes == k.eff_bytes && sh.descriptors == k.descriptors &&
        plan.fixed_ns == k.fixed_ns && plan.descriptor_ns == k.descriptor_ns &&
        plan.engine_bw == k.engine_bw && charge == k.charge && plan.hbm == k.hbm &&
        engines == k.engines)
        return cost_;
    k.eff_bytes = sh.eff_bytes;
    k.descriptors = sh.descriptors;
    k.fixed_ns = plan.fixed_ns;
    k.descriptor_ns = plan.descriptor_ns;
    k.engine_bw = plan.engine_bw;
    k.charge = charge;
    k.hbm = plan.hbm;
    k.engines = engines;
    cost_.setup_ps = ns_to_ps(plan.fixed_ns + sh.descriptors * plan.descriptor_ns);
    cost_.stream_ps = plan.engine_bw > 0 ? ns_to_ps_ceil(sh.eff_bytes / plan.engine_bw) : 0;
    cost_.charged = (uint64_t)std::ceil(sh.eff_bytes * charge);
    /* service_ps is monotonic in the bytes: the groups that pass are those up to the first that
     * does not */
    cost_.max_group = engines;
    if (plan.hbm && plan.engine_bw > 0) {
        const uint64_t unit = (uint64_t)std::ceil(sh.eff_bytes);
        unsigned g = 1;
        while (g < engines && r.hbm->service_ps(unit * (g + 1)) <= cost_.stream_ps)
            ++g;
        cost_.max_group = g;
    }
    return cost_;
}

void DmaEngines::occupy(unsigned first, unsigned copies, const Timing &t, uint32_t i,
                        const gs_instr *in, const gs_dma_plan &plan)
{
    /* in locals: the counters' updates then need no reload of t through memory */
    const uint64_t busy_end = t.busy_end_ps, busy = t.busy_end_ps - t.start_ps, port = t.port_ps;
    for (unsigned e = first; e < first + copies; ++e) {
        free_ps_[e] = busy_end;
        gs_dma_engine_counters &st = stats_[e];
        st.busy_ps += busy;
        st.hbm_wait_ps += port;
        st.bytes += plan.share[e].bytes;
        st.shares++;
    }
    Run &r = run_;
    if (r.trace.is_open()) {
        /* the engine's track shows the time it is busy with the share, so the shares one engine
         * serves one after another never overlap there; the bandwidth counter, its bytes */
        const std::string from = trace_endpoint(r, in->n_in > 0 ? in->in[0] : nullptr);
        const std::string to = trace_endpoint(r, in->n_out > 0 ? in->out[0] : nullptr);
        for (unsigned e = first; e < first + copies; ++e) {
            const double bytes = plan.share[e].bytes;
            const gs_trace_dma d = {bytes, from.c_str(), to.c_str(), 1, t.end_ps};
            r.trace.complete_dma((int)core_, kDmaTid0 + (int)r.queues + (int)e,
                                 gs_opcode_name(in->op), t.start_ps, busy, i, "", nullptr, 0,
                                 in->file, in->line, t.port_ps, d);
            RateCounter *bw = r.dma_counter(core_, e);
            if (bw && busy_end > t.bytes_at_ps)
                bw->add(t.bytes_at_ps, busy_end,
                        bytes * 1000.0 / (double)(busy_end - t.bytes_at_ps));
        }
    }
}

TransferTiming run_transfer(Run &run, DmaEngines &engines, uint32_t i, const gs_instr *in,
                            const gs_dma_plan &plan, uint64_t ready_ps, TransferHbm &x)
{
    const uint64_t now = sc_core::sc_time_stamp().value();
    const unsigned n = std::min<unsigned>(plan.n_engines, engines.size());
    x.start(run, in, plan);
    /* at most one group and one request per engine; filled field by field (building a
     * Request on the stack and copying it stalled on store forwarding) */
    if (x.groups.size() < n) {
        x.groups.resize(n);
        x.requests.resize(n);
    }
    unsigned n_groups = 0, n_requests = 0;
    uint64_t charged_total = 0;
    const TransferHbm::ShareCost *cost = nullptr;
    const gs_dma_share *costed = nullptr; /* the share `cost` was computed for */
    /* 1. The shares as groups and what each group asks of the HBM. Engines in a row with the
     * same share (plan.same_run), free at the same time: one reservation, but only while the HBM
     * passes the whole group within one share's streaming time (c.max_group): then the group ends
     * as its shares would one by one; when the HBM is the limit, shares are reserved one by one so
     * that each engine is freed as soon as its own bytes passed. The scan stops one past max_group:
     * that group is too large already. A group's start depends only on its own engines, which
     * no other group of the transfer touches, so all requests can be made before any engine is
     * occupied. */
    for (unsigned e = 0; e < n;) {
        const gs_dma_share &sh = plan.share[e];
        if (!(sh.bytes > 0)) {
            ++e;
            continue;
        }
        /* the costs depend on the share only through these (the rest is the transfer's) */
        if (!costed || sh.eff_bytes != costed->eff_bytes || sh.descriptors != costed->descriptors) {
            cost = &x.cost(run, plan, sh, n);
            costed = &sh;
        }
        const TransferHbm::ShareCost &c = *cost;
        const uint64_t start = engines.start_for(e, ready_ps);
        unsigned g = 1;
        while (e + g < n && g <= c.max_group && g < plan.same_run[e] &&
               engines.start_for(e + g, ready_ps) == start)
            ++g;
        if (g > c.max_group) g = 1;
        TransferHbm::Group &gr = x.groups[n_groups++];
        gr.e = e;
        gr.copies = g;
        gr.start_ps = start;
        /* fixed cost and descriptors, then the bytes at the engine's rate */
        gr.bytes_at_ps = start + c.setup_ps;
        gr.end_ps = gr.bytes_at_ps + c.stream_ps;
        gr.charged = c.charged;
        gr.hbm = plan.hbm && sh.eff_bytes > 0;
        if (gr.hbm) {
            /* loosely timed: the group's bytes reach HBM at bytes_at (a delay from now); the
             * target answers with the delay until it has passed them */
            HbmShares::Request &q = x.requests[n_requests++];
            q.delay_ps = gr.bytes_at_ps - now;
            q.bytes = c.charged * g;
            charged_total += q.bytes;
        }
        e += g;
    }
    /* 2. One transaction takes every request to the HBM, which reserves them in order. */
    if (n_requests > 0) {
        tlm::tlm_generic_payload &tr = x.trans;
        x.shares->req = x.requests.data();
        x.shares->n = n_requests;
        tr.set_command(x.src_hbm ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
        tr.set_address(x.addr);
        tr.set_data_length((unsigned)std::min<uint64_t>(charged_total, UINT32_MAX));
        tr.set_streaming_width(tr.get_data_length());
        tr.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        engines.hbm_port(x.groups[0].e)->b_transport(tr, delay);
    }
    /* 3. Each group's timing, then its engines are occupied. */
    TransferTiming t = {ready_ps, 0};
    uint64_t first = UINT64_MAX;
    const HbmShares::Request *answer = x.requests.data();
    for (unsigned k = 0; k < n_groups; ++k) {
        const TransferHbm::Group &gr = x.groups[k];
        DmaEngines::Timing s;
        s.start_ps = gr.start_ps;
        s.bytes_at_ps = gr.bytes_at_ps;
        uint64_t end = gr.end_ps; /* the engine is done with the share */
        s.port_ps = 0;
        uint64_t latency = 0;
        if (gr.hbm) {
            const uint64_t hbm_end = now + (answer++)->delay_ps;
            /* contention: any wait beyond this one share's own HBM time (sharing it with the
             * engines of the same group counts as waiting for HBM bandwidth) */
            const uint64_t uncontended =
                std::max(end, gr.bytes_at_ps + run.hbm->service_ps(gr.charged));
            if (hbm_end > end) end = hbm_end;
            s.port_ps = end - std::min(end, uncontended);
            if (run.hbm_counter) /* the trace's bandwidth counter */
                run.hbm_rate(gr.bytes_at_ps, end,
                             gr.copies * plan.share[gr.e].bytes *
                                 (x.hbm_bytes / std::max(plan.bytes, 1.0)) * 1000.0 /
                                 (double)std::max<uint64_t>(end - gr.bytes_at_ps, 1));
            /* the access latency delays the share's completion, but the engine pipelines it:
             * it is free for the next share once the bytes have passed */
            latency = run.hbm_latency_ps;
        }
        s.busy_end_ps = end;
        s.end_ps = end + latency;
        engines.occupy(gr.e, gr.copies, s, i, in, plan);
        first = std::min(first, s.start_ps);
        if (s.end_ps > t.end_ps) {
            t.end_ps = s.end_ps;
            t.port_ps = s.port_ps;
        }
    }
    if (i == 0) {
        run.tl.first_engines_used = plan.engines_used;
        run.tl.first_share_start_ps = first == UINT64_MAX ? ready_ps : first;
    }
    return t;
}

/* ---- DMA queues ---- */

DmaQueue::DmaQueue(sc_core::sc_module_name name, Run &run, unsigned core, unsigned queue,
                   DmaEngines &engines)
    : Stream(name, run, core, GS_ENG_DMA, queue), sbuf_port("sbuf_port"), psum_port("psum_port"),
      engines_(engines), sbuf_part_bytes_(gs_config_sbuf_partition_bytes(run.cfg)),
      psum_part_bytes_(gs_config_psum_partition_bytes(run.cfg))
{
    SC_HAS_PROCESS(DmaQueue);
    SC_METHOD(issue_method);
    sensitive << wake_;
    SC_METHOD(completion_method);
    sensitive << pending_changed_;
}

void DmaQueue::local_access(uint32_t i, const gs_instr *in, const gs_ap &ap, tlm::tlm_command cmd)
{
    const uint64_t part_bytes = ap.space == GS_MEM_SBUF ? sbuf_part_bytes_ : psum_part_bytes_;
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
}

void DmaQueue::issue_method()
{
    Run &r = run_;
    while (pos_ < instrs.size()) {
        const uint32_t i = instrs[pos_];
        const gs_instr *in = gs_program_instr(r.prog, i);
        if (!resumed_) {
            prefetch_ahead(r.prog, instrs, pos_);
            if (!deps_done(in)) {
                resumed_ = true;
                return;
            }
        }
        resumed_ = false;
        waiting_ = false;
        /* triggered in queue order, then the shares reach the engines issue_latency later */
        const uint64_t trigger = dep_start(i, in, last_trigger_, last_idx_);
        last_trigger_ = trigger;
        last_idx_ = i;
        if (in->n_in > 0 && is_local(in->in[0]->space))
            local_access(i, in, *in->in[0], tlm::TLM_READ_COMMAND);
        if (in->n_out > 0 && is_local(in->out[0]->space))
            local_access(i, in, *in->out[0], tlm::TLM_WRITE_COMMAND);
        if (r.status != GS_OK) return;
        /* reserved at the end of this delta cycle (dma_arbiter.h); the queue need not wait */
        ++posted_;
        r.arbiter->post(this, i, trigger);
        ++pos_;
    }
    issue_done_ = true;
    pending_changed_.notify(sc_core::SC_ZERO_TIME);
}

void DmaQueue::reserve(uint32_t i, uint64_t trigger_ps)
{
    Run &r = run_;
    const gs_instr *in = gs_program_instr(r.prog, i);
    /* the plan of one of the last two shapes when the transfer has it (a loop's loads); a
     * queue's transfers are reserved in queue order */
    unsigned k = recent_;
    if (!planned_[k] || !gs_cost_dma_same_shape(planned_[k], in)) {
        k ^= 1u;
        if (!planned_[k] || !gs_cost_dma_same_shape(planned_[k], in))
            gs_cost_dma_plan(r.cfg, in, &plan_[k]); /* replaces the older of the two */
    }
    planned_[k] = in;
    recent_ = k;
    const gs_dma_plan &plan = plan_[k];
    /* reserved for the time the shares reach the engines: the engines and the HBM take
     * reservations ahead of time in trigger order, which is ready order (one issue latency for
     * every transfer of a core) */
    const uint64_t ready = trigger_ps + ns_to_ps(plan.issue_ns);
    const TransferTiming t = run_transfer(r, engines_, i, in, plan, ready, xfer_);
    r.instr(i).hbm_wait_ps = t.port_ps;
    if (r.trace.is_open()) trace_lane(i, r.instr(i).start_ps, t.end_ps);
    count_transfer(plan.bytes);
    ++reserved_;
    /* trigger the completion method when this transfer ends, if that is before the one it waits
     * for: then it wakes once per transfer, at its end (a later notification of the event is
     * replaced by an earlier one) */
    const bool earlier = pending_.empty() || t.end_ps < pending_.top().first;
    pending_.push(Pending(t.end_ps, i));
    if (earlier)
        pending_changed_.notify(
            sc_core::sc_time::from_value(t.end_ps - sc_core::sc_time_stamp().value()));
}

int DmaQueue::lane_tid(unsigned k) const
{
    const Run &r = run_;
    return kDmaTid0 + (int)(r.queues + r.dma_engines + (k - 1) * r.queues + queue());
}

void DmaQueue::trace_lane(uint32_t i, uint64_t start_ps, uint64_t end_ps)
{
    /* transfers are reserved in trigger (= start) order: the first track free at the start */
    unsigned k = 0;
    while (k < lane_end_.size() && lane_end_[k] > start_ps)
        ++k;
    if (k == lane_end_.size()) {
        lane_end_.push_back(0);
        if (k > 0) {
            Run &r = run_;
            const int tid = lane_tid(k);
            const std::string name =
                "dma q" + std::to_string(queue()) + " (" + std::to_string(k + 1) + ")";
            r.trace.thread_name((int)core(), tid, name.c_str());
            r.trace.thread_sort_index((int)core(), tid, tid);
        }
    }
    lane_end_[k] = end_ps;
    if (k > 0) lane_of_[i] = k;
}

int DmaQueue::trace_tid_of(uint32_t i)
{
    auto it = lane_of_.find(i);
    if (it == lane_of_.end()) return trace_tid();
    const unsigned k = it->second;
    lane_of_.erase(it);
    return lane_tid(k);
}

void DmaQueue::completion_method()
{
    Run &r = run_;
    const uint64_t now = sc_core::sc_time_stamp().value();
    while (!pending_.empty() && pending_.top().first <= now) {
        const Pending next = pending_.top();
        pending_.pop();
        complete(next.second, gs_program_instr(r.prog, next.second));
        if (r.status != GS_OK) return; /* not triggered again */
    }
    /* run again when the earliest ends (a transfer reserved meanwhile that ends earlier
     * notifies the event earlier: the earlier notification wins) */
    if (!pending_.empty())
        pending_changed_.notify(sc_core::sc_time::from_value(pending_.top().first - now));
}

} // namespace gs_tlm
