/*
 * gs/trace.h - streams Chrome/Perfetto trace-event JSON to a file as a simulation runs.
 *
 * Events are written as they happen (memory does not grow with the trace), one per line, inside
 * {"displayTimeUnit":"ns","traceEvents":[ ... ]}. gs_trace_close() always terminates the JSON,
 * so a run that stops in deadlock or timeout still leaves a valid file. Timestamps are integer
 * picoseconds of simulated time printed as microseconds with six decimals, so they equal the
 * model's times exactly. Written through the JSON writer (gs/jsonw.h).
 *
 * Dependencies that cross tracks (another engine, DMA queue or core) are drawn as flow events
 * (an "s"/"f" pair per dependency, category "dep", bound to the producer's and the consumer's
 * slices); dependencies on the same track are visible as program order, and every slice lists
 * all its dependencies in args.deps. To place the flows the writer remembers the track and start
 * of the slices of the last GS_TRACE_FLOW_WINDOW instruction indices (a fixed window, so memory
 * stays bounded however long the trace): a dependency further back in the program keeps its
 * entry in args.deps but gets no arrow. Source paths ("src") are the instructions' file names:
 * relative to the repository root, as the build maps __FILE__ (-ffile-prefix-map).
 *
 * Plain C (no SystemC): the SystemC layer calls it as instructions complete.
 */
#ifndef GS_TRACE_H
#define GS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_TRACE_FLOW_WINDOW 8192

typedef struct gs_trace gs_trace;

/* Start a trace for path and write the header. The trace goes to a temp file in path's
 * directory (gs_out_open, gs/strbuf.h) that gs_trace_close renames over path once complete: a
 * process killed while tracing leaves no partial file and path keeps what it had. Only a
 * regular file (or nothing) at path is replaced: a directory, FIFO, device or symlink there is
 * GS_ERR_USAGE. NULL with err set (GS_ERR_USAGE, GS_ERR_IO, GS_ERR_NOMEM). */
gs_trace *gs_trace_open(const char *path, gs_error *err);
/* Terminate the JSON, close, rename over path and free. GS_ERR_IO naming path if anything failed
 * to write (the temp file is removed, path untouched). NULL: GS_OK. */
gs_status gs_trace_close(gs_trace *t, gs_error *err);

/* Metadata: names of a process (pid) and of a thread (track) inside it. */
void gs_trace_process_name(gs_trace *t, int pid, const char *name);
void gs_trace_thread_name(gs_trace *t, int pid, int tid, const char *name);
/* Sort hint so tracks appear in tid order. */
void gs_trace_thread_sort_index(gs_trace *t, int pid, int tid, int index);

/* "file:line" as slices name their source ("?" for no file; a file name too long for `size`
 * is cut); size >= GS_ERROR_FILE_MAX + 24 holds every one. */
void gs_trace_format_src(char *src, size_t size, const char *file, int line);

/* One instruction as a complete ("X") slice, plus a flow from each dependency on another
 * track. An instruction completes after its dependencies, so they were written already. */
void gs_trace_complete(gs_trace *t, int pid, int tid, const char *name, uint64_t ts_ps,
                       uint64_t dur_ps, size_t index, const char *operands, const uint32_t *deps,
                       uint32_t n_deps, const char *file, int line, uint64_t port_wait_ps);

/* What a DMA slice moves: args.bytes, args.from and args.to (each endpoint's access pattern,
 * an HBM one led by its tensor's name). A share (`share` set) is one DMA engine's part of a
 * transfer, drawn on the engine's track for the time the engine is busy with it; it is not the
 * instruction's own slice, so flows never bind to it, and args.done_us says when the share
 * completes (after the HBM access latency, which the engine pipelines: the next share may start
 * on the engine before then). */
typedef struct gs_trace_dma {
    double bytes;
    const char *from, *to;
    int share;
    uint64_t done_ps; /* share only */
} gs_trace_dma;

/* gs_trace_complete for a DMA transfer or one engine's share of it (dma not NULL). */
void gs_trace_complete_dma(gs_trace *t, int pid, int tid, const char *name, uint64_t ts_ps,
                           uint64_t dur_ps, size_t index, const char *operands,
                           const uint32_t *deps, uint32_t n_deps, const char *file, int line,
                           uint64_t port_wait_ps, const gs_trace_dma *dma);

/* A counter ("C") sample: series `series` of counter `name` takes `value` at ts_ps. */
void gs_trace_counter(gs_trace *t, int pid, const char *name, const char *series, uint64_t ts_ps,
                      double value);

/*
 * Bandwidth in use as a step function: each chunk adds `rate` over [t0, t1). Samples go to the
 * trace as a counter, coalescing changes at the same timestamp. Chunks must be added in
 * non-decreasing t0 (simulated time order). The trace owns its rate counters: gs_trace_close()
 * writes what they still hold and frees them. name and series are borrowed. NULL trace or
 * out of memory: NULL (adding to a NULL counter does nothing).
 */
typedef struct gs_trace_rate gs_trace_rate;

gs_trace_rate *gs_trace_rate_create(gs_trace *t, int pid, const char *name, const char *series);
void gs_trace_rate_add(gs_trace_rate *r, uint64_t t0_ps, uint64_t t1_ps, double rate);
/* Write what is pending now (gs_trace_close does it too). */
void gs_trace_rate_finish(gs_trace_rate *r);

#ifdef __cplusplus
}
#endif
#endif
