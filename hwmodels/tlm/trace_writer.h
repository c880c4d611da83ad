/*
 * trace_writer.h - the SystemC layer's handle on the Chrome/Perfetto trace: a C++ owner of the
 * plain-C streaming writer in gs/trace.h (see there for the format). A writer that is not open
 * ignores every event.
 */
#ifndef GS_TLM_TRACE_WRITER_H
#define GS_TLM_TRACE_WRITER_H

#include <cstddef>
#include <cstdint>

#include "gs/common.h"
#include "gs/trace.h"

namespace gs_tlm
{

class TraceWriter
{
  public:
    TraceWriter() = default;
    ~TraceWriter() { close(nullptr); }
    TraceWriter(const TraceWriter &) = delete;
    TraceWriter &operator=(const TraceWriter &) = delete;

    /* Create/truncate path and write the header. GS_ERR_IO with err set on failure. */
    gs_status open(const char *path, gs_error *err)
    {
        t_ = gs_trace_open(path, err);
        return t_ ? GS_OK : (err ? err->code : GS_ERR_IO);
    }
    bool is_open() const { return t_ != nullptr; }
    gs_trace *handle() const { return t_; }

    void process_name(int pid, const char *name) { gs_trace_process_name(t_, pid, name); }
    void thread_name(int pid, int tid, const char *name)
    {
        gs_trace_thread_name(t_, pid, tid, name);
    }
    void thread_sort_index(int pid, int tid, int index)
    {
        gs_trace_thread_sort_index(t_, pid, tid, index);
    }
    void complete(int pid, int tid, const char *name, uint64_t ts_ps, uint64_t dur_ps, size_t index,
                  const char *operands, const uint32_t *deps, uint32_t n_deps, const char *file,
                  int line, uint64_t port_wait_ps)
    {
        gs_trace_complete(t_, pid, tid, name, ts_ps, dur_ps, index, operands, deps, n_deps, file,
                          line, port_wait_ps);
    }

    void complete_dma(int pid, int tid, const char *name, uint64_t ts_ps, uint64_t dur_ps,
                      size_t index, const char *operands, const uint32_t *deps, uint32_t n_deps,
                      const char *file, int line, uint64_t port_wait_ps, const gs_trace_dma &dma)
    {
        gs_trace_complete_dma(t_, pid, tid, name, ts_ps, dur_ps, index, operands, deps, n_deps,
                              file, line, port_wait_ps, &dma);
    }

    /* Terminate the JSON and close (the trace's rate counters end with it). GS_ERR_IO if
     * anything failed to write. Idempotent. */
    gs_status close(gs_error *err)
    {
        gs_trace *t = t_;
        t_ = nullptr;
        return gs_trace_close(t, err);
    }

  private:
    gs_trace *t_ = nullptr;
};

/* A rate counter of the open trace (gs_trace_rate): owned and freed by the trace, so it must not
 * be used after the trace is closed. Does nothing when the trace is not open. */
class RateCounter
{
  public:
    RateCounter(TraceWriter *tw, int pid, const char *name, const char *series)
        : r_(gs_trace_rate_create(tw ? tw->handle() : nullptr, pid, name, series))
    {
    }
    void add(uint64_t t0_ps, uint64_t t1_ps, double rate)
    {
        gs_trace_rate_add(r_, t0_ps, t1_ps, rate);
    }
    void finish() { gs_trace_rate_finish(r_); }

  private:
    gs_trace_rate *r_;
};

} // namespace gs_tlm

#endif
