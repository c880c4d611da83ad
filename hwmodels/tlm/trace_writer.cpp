/* trace_writer.cpp - streaming Chrome/Perfetto trace-event JSON (see trace_writer.h). */
#include "trace_writer.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>

namespace gs_tlm
{

namespace
{
/* Decimal digits of v (hot path: no printf). */
void put_u64(gs_sb *sb, uint64_t v)
{
    char buf[24];
    char *e = buf + sizeof buf, *q = e;
    do {
        *--q = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    gs_sb_putn(sb, q, (size_t)(e - q));
}
void put_i64(gs_sb *sb, int64_t v)
{
    if (v < 0) {
        gs_sb_putc(sb, '-');
        put_u64(sb, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(sb, (uint64_t)v);
    }
}
/* Microseconds with six decimals from integer picoseconds: exact, no floating point. */
void put_us(gs_sb *sb, uint64_t ps)
{
    put_u64(sb, ps / 1000000u);
    char frac[7];
    uint64_t f = ps % 1000000u;
    for (int k = 5; k >= 0; --k) {
        frac[1 + k] = (char)('0' + f % 10u);
        f /= 10u;
    }
    frac[0] = '.';
    gs_sb_putn(sb, frac, sizeof frac);
}
constexpr size_t kFileBuffer = 1u << 20; /* stdio buffer: fewer write syscalls */

/* The repository root as this file was compiled (its path minus hwmodels/tlm/trace_writer.cpp),
 * so kernel sources recorded with absolute __FILE__ paths appear relative in the trace. Empty
 * when the build gave relative paths. */
std::size_t source_root_len()
{
    static const char self[] = __FILE__;
    static const char tail[] = "hwmodels/tlm/trace_writer.cpp";
    const std::size_t n = sizeof self - 1, t = sizeof tail - 1;
    if (n > t && !strcmp(self + n - t, tail) && self[0] == '/') return n - t;
    return 0;
}
const char *relative_source(const char *file)
{
    static const std::size_t root = source_root_len();
    if (file && root && !strncmp(file, __FILE__, root)) return file + root;
    return file;
}
} // namespace

TraceWriter::TraceWriter()
    : next_flow_(1), f_(nullptr), first_(true), io_error_(false), path_(nullptr)
{
    gs_sb_init(&sb_);
}

TraceWriter::~TraceWriter()
{
    close(nullptr);
    gs_sb_free(&sb_);
}

gs_status TraceWriter::open(const char *path, gs_error *err)
{
    f_ = fopen(path, "wb");
    if (!f_) {
        return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot create trace file: %s",
                            strerror(errno));
    }
    setvbuf(f_, nullptr, _IOFBF, kFileBuffer);
    path_ = gs_strdup(path);
    first_ = true;
    slices_.reserve(kFlowWindow); /* once, so growing never copies (pages touched as used) */
    if (fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f_) == EOF) io_error_ = true;
    return GS_OK;
}

void TraceWriter::begin_event()
{
    gs_sb_reset(&sb_);
    if (!first_) gs_sb_puts(&sb_, ",\n");
    first_ = false;
}

void TraceWriter::end_event()
{
    if (!gs_sb_ok(&sb_)) {
        io_error_ = true;
        return;
    }
    if (sb_.len && fwrite(sb_.data, 1, sb_.len, f_) != sb_.len) io_error_ = true;
}

void TraceWriter::process_name(int pid, const char *name)
{
    if (!f_) return;
    begin_event();
    gs_sb_printf(
        &sb_,
        "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":", pid);
    gs_sb_json_str(&sb_, name);
    gs_sb_puts(&sb_, "}}");
    end_event();
}

void TraceWriter::thread_name(int pid, int tid, const char *name)
{
    if (!f_) return;
    begin_event();
    gs_sb_printf(&sb_,
                 "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":",
                 pid, tid);
    gs_sb_json_str(&sb_, name);
    gs_sb_puts(&sb_, "}}");
    end_event();
}

void TraceWriter::thread_sort_index(int pid, int tid, int index)
{
    if (!f_) return;
    begin_event();
    gs_sb_printf(&sb_,
                 "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\","
                 "\"args\":{\"sort_index\":%d}}",
                 pid, tid, index);
    end_event();
}

void TraceWriter::complete(int pid, int tid, const char *name, uint64_t ts_ps, uint64_t dur_ps,
                           size_t index, const char *operands, const uint32_t *deps,
                           uint32_t n_deps, const char *file, int line, uint64_t port_wait_ps)
{
    if (!f_) return;
    begin_event();
    gs_sb_puts(&sb_, "{\"ph\":\"X\",\"pid\":");
    put_i64(&sb_, pid);
    gs_sb_puts(&sb_, ",\"tid\":");
    put_i64(&sb_, tid);
    gs_sb_puts(&sb_, ",\"name\":");
    gs_sb_json_str(&sb_, name);
    gs_sb_puts(&sb_, ",\"ts\":");
    put_us(&sb_, ts_ps);
    gs_sb_puts(&sb_, ",\"dur\":");
    put_us(&sb_, dur_ps);
    gs_sb_puts(&sb_, ",\"args\":{\"index\":");
    put_u64(&sb_, index);
    gs_sb_puts(&sb_, ",\"operands\":");
    gs_sb_json_str(&sb_, operands ? operands : "");
    gs_sb_puts(&sb_, ",\"deps\":[");
    for (uint32_t k = 0; k < n_deps; ++k) {
        if (k) gs_sb_putc(&sb_, ',');
        put_u64(&sb_, deps[k]);
    }
    gs_sb_puts(&sb_, "],\"src\":");
    file = relative_source(file);
    const std::size_t flen = file ? strlen(file) : 1;
    char src[GS_ERROR_FILE_MAX + 24];
    if (flen < GS_ERROR_FILE_MAX) {
        memcpy(src, file ? file : "?", flen);
        src[flen] = ':';
        char *e = src + sizeof src - 1, *q = e;
        *e = '\0';
        uint64_t v = line < 0 ? 0 : (uint64_t)line;
        do {
            *--q = (char)('0' + v % 10u);
            v /= 10u;
        } while (v);
        memmove(src + flen + 1, q, (size_t)(e - q) + 1);
    } else {
        snprintf(src, sizeof src, "%.*s:%d", GS_ERROR_FILE_MAX, file, line);
    }
    gs_sb_json_str(&sb_, src);
    if (port_wait_ps) {
        gs_sb_puts(&sb_, ",\"hbm_wait_us\":");
        put_us(&sb_, port_wait_ps);
    }
    gs_sb_puts(&sb_, "}}");
    end_event();

    const Slice me = {index, pid, tid, ts_ps};
    for (uint32_t k = 0; k < n_deps; ++k) {
        const size_t slot = deps[k] % kFlowWindow;
        if (slot >= slices_.size() || slices_[slot].index != deps[k]) continue;
        const Slice &d = slices_[slot];
        if (d.pid == pid && d.tid == tid) continue;
        const uint64_t id = next_flow_++;
        /* "s" inside the producer's slice (its start), "f" at the consumer's start bound to
         * the enclosing slice ("bp":"e"), so viewers draw producer end -> consumer start */
        flow("s", id, d);
        flow("f", id, me);
    }
    const size_t slot = index % kFlowWindow;
    if (slot >= slices_.size()) slices_.resize(slot + 1, Slice{SIZE_MAX, -1, -1, 0});
    slices_[slot] = me;
}

void TraceWriter::flow(const char *ph, uint64_t id, const Slice &at)
{
    begin_event();
    gs_sb_puts(&sb_, "{\"ph\":\"");
    gs_sb_puts(&sb_, ph);
    gs_sb_puts(&sb_, "\",\"id\":");
    put_u64(&sb_, id);
    gs_sb_puts(&sb_, ",\"name\":\"dep\",\"cat\":\"dep\",\"pid\":");
    put_i64(&sb_, at.pid);
    gs_sb_puts(&sb_, ",\"tid\":");
    put_i64(&sb_, at.tid);
    gs_sb_puts(&sb_, ",\"ts\":");
    put_us(&sb_, at.ts_ps);
    if (ph[0] == 'f') gs_sb_puts(&sb_, ",\"bp\":\"e\"");
    gs_sb_puts(&sb_, "}");
    end_event();
}

void TraceWriter::counter(int pid, const char *name, const char *series, uint64_t ts_ps,
                          double value)
{
    if (!f_) return;
    begin_event();
    gs_sb_printf(&sb_, "{\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"name\":", pid);
    gs_sb_json_str(&sb_, name);
    gs_sb_puts(&sb_, ",\"ts\":");
    put_us(&sb_, ts_ps);
    gs_sb_puts(&sb_, ",\"args\":{");
    gs_sb_json_str(&sb_, series);
    gs_sb_putc(&sb_, ':');
    gs_sb_json_num(&sb_, value);
    gs_sb_puts(&sb_, "}}");
    end_event();
}

gs_status TraceWriter::close(gs_error *err)
{
    if (!f_) return GS_OK;
    if (fputs("\n]}\n", f_) == EOF) io_error_ = true;
    if (fclose(f_) != 0) io_error_ = true;
    f_ = nullptr;
    slices_.clear();
    slices_.shrink_to_fit();
    gs_status st = GS_OK;
    if (io_error_) {
        st = gs_error_set(err, GS_ERR_IO, path_, 0, 0, "error writing trace file");
    }
    gs_free(path_);
    path_ = nullptr;
    return st;
}

RateCounter::RateCounter(TraceWriter *tw, int pid, const char *name, const char *series)
    : tw_(tw), pid_(pid), name_(name), series_(series), value_(0), have_pending_(false),
      pending_ts_(0), pending_value_(0), last_written_(0)
{
}

void RateCounter::set(uint64_t ts, double value)
{
    if (have_pending_ && ts != pending_ts_) {
        if (pending_value_ != last_written_) {
            tw_->counter(pid_, name_, series_, pending_ts_, pending_value_);
            last_written_ = pending_value_;
        }
    }
    have_pending_ = true;
    pending_ts_ = ts;
    pending_value_ = value;
}

void RateCounter::flush_until(uint64_t ts)
{
    while (!ends_.empty() && ends_.top().first <= ts) {
        End e = ends_.top();
        ends_.pop();
        value_ -= e.second;
        /* Snap accumulated rounding to exactly zero when nothing is in flight. */
        if (ends_.empty()) value_ = 0.0;
        set(e.first, value_);
    }
}

void RateCounter::add(uint64_t t0_ps, uint64_t t1_ps, double rate)
{
    if (!tw_ || !tw_->is_open() || t1_ps <= t0_ps) return;
    flush_until(t0_ps);
    value_ += rate;
    set(t0_ps, value_);
    ends_.push(End(t1_ps, rate));
}

void RateCounter::finish()
{
    if (!tw_ || !tw_->is_open()) return;
    flush_until(UINT64_MAX);
    if (have_pending_ && pending_value_ != last_written_) {
        tw_->counter(pid_, name_, series_, pending_ts_, pending_value_);
        last_written_ = pending_value_;
    }
    have_pending_ = false;
}

} // namespace gs_tlm
