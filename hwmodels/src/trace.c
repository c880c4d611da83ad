/* trace.c - streaming Chrome/Perfetto trace-event JSON (see gs/trace.h). */
#include "gs/trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gs/jsonw.h"
#include "gs/strbuf.h"

#define FILE_BUFFER (1u << 20) /* stdio buffer: fewer write syscalls */

typedef struct slice {
    size_t index; /* SIZE_MAX: empty */
    int32_t pid, tid;
    uint64_t ts_ps;
} slice;

/* A chunk's end: at t1 the rate drops by `rate`. */
typedef struct rate_end {
    uint64_t t1;
    double rate;
} rate_end;

struct gs_trace_rate {
    gs_trace *t;
    gs_trace_rate *next; /* the trace's list */
    int pid;
    const char *name, *series;
    double value;
    int have_pending;
    uint64_t pending_ts;
    double pending_value, last_written;
    rate_end *ends; /* min-heap by (t1, rate) */
    size_t n_ends, cap_ends;
};

struct gs_trace {
    FILE *f;    /* on a duplicate of out.fd, so closing it leaves out.fd for the commit */
    gs_out out; /* the temp file renamed over the target by gs_trace_close */
    char *path;
    gs_sb sb;     /* each event, written to f when complete */
    gs_jw w;      /* the whole document; its text goes through sb */
    int io_error; /* 0, or the errno of the first failure (ENOMEM: out of memory) */
    uint64_t next_flow;
    slice *slices; /* slot index % GS_TRACE_FLOW_WINDOW */
    gs_trace_rate *rates;
};

/* Microseconds with six decimals from integer picoseconds: exact, no floating point (and no
 * printf: the hot path). */
static void kus(gs_jw *w, const char *key, uint64_t ps)
{
    char buf[32];
    char *e = buf + sizeof buf, *q = e;
    uint64_t f = ps % 1000000u, v = ps / 1000000u;
    for (int k = 0; k < 6; ++k) {
        *--q = (char)('0' + f % 10u);
        f /= 10u;
    }
    *--q = '.';
    do {
        *--q = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    gs_jw_key(w, key);
    gs_jw_rawn(w, q, (size_t)(e - q));
}

/* The text written since the last flush to the file (the writer keeps its state). */
static void flush(gs_trace *t)
{
    if (!gs_sb_ok(&t->sb) || gs_jw_error(&t->w)) {
        if (!t->io_error) t->io_error = ENOMEM;
        return;
    }
    errno = 0;
    if (t->sb.len && fwrite(t->sb.data, 1, t->sb.len, t->f) != t->sb.len && !t->io_error)
        t->io_error = errno ? errno : EIO;
    gs_sb_reset(&t->sb);
}

gs_trace *gs_trace_open(const char *path, gs_error *err)
{
    gs_trace *t = gs_calloc(1, sizeof *t);
    slice *slices = gs_calloc(GS_TRACE_FLOW_WINDOW, sizeof *slices);
    char *p = gs_strdup(path);
    if (!t || !slices || !p) {
        gs_free(t);
        gs_free(slices);
        gs_free(p);
        gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory opening the trace file");
        return NULL;
    }
    /* Written to a temp file renamed over path when complete (the shared output helper), so
     * a job killed while tracing leaves no partial trace and a previous one stays whole. */
    gs_error oerr;
    gs_error_clear(&oerr);
    if (gs_out_open(&t->out, path, &oerr) != GS_OK) {
        const char *why = oerr.message; /* "cannot write: <reason>" or why path is refused */
        if (!strncmp(why, "cannot write: ", 14)) why += 14;
        gs_error_set(err, oerr.code, path, 0, 0, "cannot create trace file: %s", why);
        gs_free(t);
        gs_free(slices);
        gs_free(p);
        return NULL;
    }
    int fd = dup(t->out.fd);
    t->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!t->f) {
        int e = errno;
        if (fd >= 0) close(fd);
        gs_out_abort(&t->out);
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot create trace file: %s", strerror(e));
        gs_free(t);
        gs_free(slices);
        gs_free(p);
        return NULL;
    }
    setvbuf(t->f, NULL, _IOFBF, FILE_BUFFER);
    t->path = p;
    t->slices = slices;
    for (size_t k = 0; k < GS_TRACE_FLOW_WINDOW; ++k) {
        t->slices[k].index = SIZE_MAX;
        t->slices[k].pid = t->slices[k].tid = -1;
    }
    gs_sb_init(&t->sb);
    gs_jw_init(&t->w, &t->sb);
    t->next_flow = 1;
    gs_jw_begin_object(&t->w, GS_JW_COMPACT);
    gs_jw_kstr(&t->w, "displayTimeUnit", "ns");
    gs_jw_key(&t->w, "traceEvents");
    gs_jw_begin_array(&t->w, GS_JW_LINES_CLOSE);
    flush(t);
    return t;
}

/* A metadata event ("M"): name and args {akey: astr} or {akey: aint}. */
static void meta(gs_trace *t, int pid, int tid, const char *name, const char *akey,
                 const char *astr, int aint)
{
    gs_jw *w = &t->w;
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_kstr(w, "ph", "M");
    gs_jw_kint(w, "pid", pid);
    gs_jw_kint(w, "tid", tid);
    gs_jw_kstr(w, "name", name);
    gs_jw_key(w, "args");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    if (astr)
        gs_jw_kstr(w, akey, astr);
    else
        gs_jw_kint(w, akey, aint);
    gs_jw_end_object(w);
    gs_jw_end_object(w);
    flush(t);
}

void gs_trace_process_name(gs_trace *t, int pid, const char *name)
{
    if (!t) return;
    meta(t, pid, 0, "process_name", "name", name ? name : "", 0);
}

void gs_trace_thread_name(gs_trace *t, int pid, int tid, const char *name)
{
    if (!t) return;
    meta(t, pid, tid, "thread_name", "name", name ? name : "", 0);
}

void gs_trace_thread_sort_index(gs_trace *t, int pid, int tid, int index)
{
    if (!t) return;
    meta(t, pid, tid, "thread_sort_index", "sort_index", NULL, index);
}

static void flow(gs_trace *t, const char *ph, uint64_t id, const slice *at)
{
    gs_jw *w = &t->w;
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_kstr(w, "ph", ph);
    gs_jw_key(w, "id");
    gs_jw_uint(w, id);
    gs_jw_kstr(w, "name", "dep");
    gs_jw_kstr(w, "cat", "dep");
    gs_jw_kint(w, "pid", at->pid);
    gs_jw_kint(w, "tid", at->tid);
    kus(w, "ts", at->ts_ps);
    if (ph[0] == 'f') gs_jw_kstr(w, "bp", "e");
    gs_jw_end_object(w);
    flush(t);
}

void gs_trace_format_src(char *src, size_t size, const char *file, int line)
{
    const size_t flen = file ? strlen(file) : 1;
    if (flen < GS_ERROR_FILE_MAX && flen + 22 < size) {
        memcpy(src, file ? file : "?", flen);
        src[flen] = ':';
        char *e = src + size - 1, *q = e;
        *e = '\0';
        uint64_t v = line < 0 ? 0 : (uint64_t)line;
        do {
            *--q = (char)('0' + v % 10u);
            v /= 10u;
        } while (v);
        memmove(src + flen + 1, q, (size_t)(e - q) + 1);
    } else {
        snprintf(src, size, "%.*s:%d", GS_ERROR_FILE_MAX, file, line);
    }
}

void gs_trace_complete(gs_trace *t, int pid, int tid, const char *name, uint64_t ts_ps,
                       uint64_t dur_ps, size_t index, const char *operands, const uint32_t *deps,
                       uint32_t n_deps, const char *file, int line, uint64_t port_wait_ps)
{
    gs_trace_complete_dma(t, pid, tid, name, ts_ps, dur_ps, index, operands, deps, n_deps, file,
                          line, port_wait_ps, NULL);
}

void gs_trace_complete_dma(gs_trace *t, int pid, int tid, const char *name, uint64_t ts_ps,
                           uint64_t dur_ps, size_t index, const char *operands,
                           const uint32_t *deps, uint32_t n_deps, const char *file, int line,
                           uint64_t port_wait_ps, const gs_trace_dma *dma)
{
    if (!t) return;
    gs_jw *w = &t->w;
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_kstr(w, "ph", "X");
    gs_jw_kint(w, "pid", pid);
    gs_jw_kint(w, "tid", tid);
    gs_jw_kstr(w, "name", name ? name : "");
    kus(w, "ts", ts_ps);
    kus(w, "dur", dur_ps);
    gs_jw_key(w, "args");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_key(w, "index");
    gs_jw_uint(w, index);
    gs_jw_kstr(w, "operands", operands ? operands : "");
    gs_jw_key(w, "deps");
    gs_jw_begin_array(w, GS_JW_COMPACT);
    for (uint32_t k = 0; k < n_deps; ++k)
        gs_jw_uint(w, deps[k]);
    gs_jw_end_array(w);
    char src[GS_ERROR_FILE_MAX + 24];
    gs_trace_format_src(src, sizeof src, file, line);
    gs_jw_kstr(w, "src", src);
    if (port_wait_ps) kus(w, "hbm_wait_us", port_wait_ps);
    if (dma) {
        gs_jw_knum(w, "bytes", dma->bytes);
        gs_jw_kstr(w, "from", dma->from ? dma->from : "");
        gs_jw_kstr(w, "to", dma->to ? dma->to : "");
        if (dma->share) kus(w, "done_us", dma->done_ps);
    }
    gs_jw_end_object(w);
    gs_jw_end_object(w);
    flush(t);
    if (dma && dma->share) return; /* flows bind to the instruction's own slice */

    const slice me = {index, pid, tid, ts_ps};
    for (uint32_t k = 0; k < n_deps; ++k) {
        const slice *d = &t->slices[deps[k] % GS_TRACE_FLOW_WINDOW];
        if (d->index != deps[k]) continue;
        if (d->pid == pid && d->tid == tid) continue;
        const uint64_t id = t->next_flow++;
        /* "s" inside the producer's slice (its start), "f" at the consumer's start bound to the
         * enclosing slice ("bp":"e"), so viewers draw producer end -> consumer start */
        flow(t, "s", id, d);
        flow(t, "f", id, &me);
    }
    t->slices[index % GS_TRACE_FLOW_WINDOW] = me;
}

void gs_trace_counter(gs_trace *t, int pid, const char *name, const char *series, uint64_t ts_ps,
                      double value)
{
    if (!t) return;
    gs_jw *w = &t->w;
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_kstr(w, "ph", "C");
    gs_jw_kint(w, "pid", pid);
    gs_jw_kint(w, "tid", 0);
    gs_jw_kstr(w, "name", name ? name : "");
    kus(w, "ts", ts_ps);
    gs_jw_key(w, "args");
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_knum(w, series ? series : "", value);
    gs_jw_end_object(w);
    gs_jw_end_object(w);
    flush(t);
}

/* ---- rate counters ---- */

gs_trace_rate *gs_trace_rate_create(gs_trace *t, int pid, const char *name, const char *series)
{
    if (!t) return NULL;
    gs_trace_rate *r = gs_calloc(1, sizeof *r);
    if (!r) {
        if (!t->io_error) t->io_error = ENOMEM; /* the counter is missing from the trace */
        return NULL;
    }
    r->t = t;
    r->pid = pid;
    r->name = name;
    r->series = series;
    r->next = t->rates;
    t->rates = r;
    return r;
}

static int end_less(const rate_end *a, const rate_end *b)
{
    return a->t1 < b->t1 || (a->t1 == b->t1 && a->rate < b->rate);
}

static int heap_push(gs_trace_rate *r, rate_end e)
{
    if (r->n_ends == r->cap_ends) {
        size_t nc = r->cap_ends ? r->cap_ends * 2 : 64;
        rate_end *ne = gs_realloc(r->ends, nc * sizeof *ne);
        if (!ne) return 0;
        r->ends = ne;
        r->cap_ends = nc;
    }
    size_t i = r->n_ends++;
    while (i > 0) {
        const size_t parent = (i - 1) / 2;
        if (!end_less(&e, &r->ends[parent])) break;
        r->ends[i] = r->ends[parent];
        i = parent;
    }
    r->ends[i] = e;
    return 1;
}

static rate_end heap_pop(gs_trace_rate *r)
{
    const rate_end top = r->ends[0];
    const rate_end last = r->ends[--r->n_ends];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= r->n_ends) break;
        if (c + 1 < r->n_ends && end_less(&r->ends[c + 1], &r->ends[c])) ++c;
        if (!end_less(&r->ends[c], &last)) break;
        r->ends[i] = r->ends[c];
        i = c;
    }
    if (r->n_ends) r->ends[i] = last;
    return top;
}

static void rate_set(gs_trace_rate *r, uint64_t ts, double value)
{
    if (r->have_pending && ts != r->pending_ts && r->pending_value != r->last_written) {
        gs_trace_counter(r->t, r->pid, r->name, r->series, r->pending_ts, r->pending_value);
        r->last_written = r->pending_value;
    }
    r->have_pending = 1;
    r->pending_ts = ts;
    r->pending_value = value;
}

static void rate_flush_until(gs_trace_rate *r, uint64_t ts)
{
    while (r->n_ends && r->ends[0].t1 <= ts) {
        const rate_end e = heap_pop(r);
        r->value -= e.rate;
        /* snap accumulated rounding to exactly zero when nothing is in flight */
        if (!r->n_ends) r->value = 0.0;
        rate_set(r, e.t1, r->value);
    }
}

void gs_trace_rate_add(gs_trace_rate *r, uint64_t t0_ps, uint64_t t1_ps, double rate)
{
    if (!r || t1_ps <= t0_ps) return;
    rate_flush_until(r, t0_ps);
    r->value += rate;
    rate_set(r, t0_ps, r->value);
    const rate_end e = {t1_ps, rate};
    /* the step never ends: report the trace as bad */
    if (!heap_push(r, e) && !r->t->io_error) r->t->io_error = ENOMEM;
}

void gs_trace_rate_finish(gs_trace_rate *r)
{
    if (!r) return;
    rate_flush_until(r, UINT64_MAX);
    if (r->have_pending && r->pending_value != r->last_written) {
        gs_trace_counter(r->t, r->pid, r->name, r->series, r->pending_ts, r->pending_value);
        r->last_written = r->pending_value;
    }
    r->have_pending = 0;
}

gs_status gs_trace_close(gs_trace *t, gs_error *err)
{
    if (!t) return GS_OK;
    for (gs_trace_rate *r = t->rates; r;) {
        gs_trace_rate *next = r->next;
        gs_trace_rate_finish(r);
        gs_free(r->ends);
        gs_free(r);
        r = next;
    }
    gs_jw_end_array(&t->w);
    gs_jw_end_object(&t->w);
    gs_sb_putc(&t->sb, '\n');
    flush(t);
    errno = 0;
    if (fclose(t->f) != 0 && !t->io_error) t->io_error = errno ? errno : EIO;
    gs_status st = GS_OK;
    if (t->io_error) {
        gs_out_abort(&t->out); /* the target keeps what it had */
        st = gs_error_set(err, t->io_error == ENOMEM ? GS_ERR_NOMEM : GS_ERR_IO, t->path, 0, 0,
                          "error writing trace file: %s", strerror(t->io_error));
    } else {
        st = gs_out_commit(&t->out, err);
    }
    gs_sb_free(&t->sb);
    gs_free(t->slices);
    gs_free(t->path);
    gs_free(t);
    return st;
}
