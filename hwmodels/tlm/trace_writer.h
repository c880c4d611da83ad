/*
 * trace_writer.h - streams Chrome/Perfetto trace-event JSON to a file as the simulation runs.
 *
 * Events are written as they happen (memory does not grow with the trace), one per line, inside
 * {"displayTimeUnit":"ns","traceEvents":[ ... ]}. close() always terminates the JSON, so a run
 * that stops in deadlock or timeout still leaves a valid file. Timestamps are integer
 * picoseconds of simulated time printed as microseconds with six decimals, so they equal the
 * model's times exactly. All strings go through gs_sb_json_str (gs/strbuf.h).
 *
 * Dependencies that cross tracks (another engine, DMA queue or core) are drawn as flow events
 * (an "s"/"f" pair per dependency, category "dep", bound to the producer's and the consumer's
 * slices); dependencies on the same track are visible as program order, and every slice lists
 * all its dependencies in args.deps. To place the flows the writer remembers the track and start
 * of the slices of the last kFlowWindow instruction indices (a fixed window, so memory stays
 * bounded however long the trace): a dependency further back in the program keeps its entry in
 * args.deps but gets no arrow. Source paths ("src") are relative to the repository root.
 */
#ifndef GS_TLM_TRACE_WRITER_H
#define GS_TLM_TRACE_WRITER_H

#include <cstdint>
#include <cstdio>
#include <queue>
#include <utility>
#include <vector>

#include "gs/common.h"
#include "gs/strbuf.h"

namespace gs_tlm
{

class TraceWriter
{
  public:
    TraceWriter();
    ~TraceWriter();
    TraceWriter(const TraceWriter &) = delete;
    TraceWriter &operator=(const TraceWriter &) = delete;

    /* Create/truncate path and write the header. GS_ERR_IO with err set on failure. */
    gs_status open(const char *path, gs_error *err);
    bool is_open() const { return f_ != nullptr; }

    /* Metadata: names of a process (pid) and of a thread (track) inside it. */
    void process_name(int pid, const char *name);
    void thread_name(int pid, int tid, const char *name);
    /* Sort hint so tracks appear in tid order. */
    void thread_sort_index(int pid, int tid, int index);

    /* One instruction as a complete ("X") slice, plus a flow from each dependency on another
     * track. An instruction completes after its dependencies, so they were written already. */
    void complete(int pid, int tid, const char *name, uint64_t ts_ps, uint64_t dur_ps, size_t index,
                  const char *operands, const uint32_t *deps, uint32_t n_deps, const char *file,
                  int line, uint64_t port_wait_ps);

    /* A counter ("C") sample: series `series` of counter `name` takes `value` at ts_ps. */
    void counter(int pid, const char *name, const char *series, uint64_t ts_ps, double value);

    /* Terminate the JSON and close. GS_ERR_IO if anything failed to write. Idempotent. */
    gs_status close(gs_error *err);

  private:
    struct Slice {
        size_t index; /* SIZE_MAX: empty */
        int32_t pid, tid;
        uint64_t ts_ps;
    };
    static constexpr size_t kFlowWindow = 8192;
    void begin_event();
    void end_event();
    void flow(const char *ph, uint64_t id, const Slice &at);
    std::vector<Slice> slices_; /* slot index % kFlowWindow, grown up to kFlowWindow */
    uint64_t next_flow_;
    FILE *f_;
    gs_sb sb_;
    bool first_;
    bool io_error_;
    char *path_;
};

/*
 * Bandwidth in use as a step function: each HBM chunk adds `rate` bytes/ns over [t0, t1).
 * Samples are emitted to the trace as a counter, coalescing changes at the same timestamp.
 * Chunks must be added in non-decreasing t0 (simulated time order).
 */
class RateCounter
{
  public:
    RateCounter(TraceWriter *tw, int pid, const char *name, const char *series);
    void add(uint64_t t0_ps, uint64_t t1_ps, double rate);
    void finish();

  private:
    void set(uint64_t ts, double value);
    void flush_until(uint64_t ts);
    TraceWriter *tw_;
    int pid_;
    const char *name_;
    const char *series_;
    double value_;
    bool have_pending_;
    uint64_t pending_ts_;
    double pending_value_;
    double last_written_;
    using End = std::pair<uint64_t, double>;
    std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
};

} // namespace gs_tlm

#endif
