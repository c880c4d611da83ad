/*
 * lines.h - what each kernel source line cost in a run (`run --lines`, the record's "lines"):
 * per file:line of the kernel (a C kernel's __FILE__:__LINE__, an NKI program's Python line),
 * the engine-busy time, the DMA bytes and time, the instruction count, the stall it caused and
 * why the line itself waited. Computed in plain C from the program and the timeline the model
 * filled (gs/stats.h), so a test can hand one over.
 *
 * Definitions (the model's own, so that the lines sum to the run's totals):
 *  busy[e]  a compute engine's instructions: end - start - HBM wait (its busy time);
 *           GS_ENG_DMA: its transfers' spans, trigger to last share (the DMA queues' busy time).
 *  stall    an instruction started later than its stream allowed (a compute engine: the end of
 *           the engine's previous instruction; a DMA queue: the previous transfer's trigger)
 *           because of a dependency: start - that floor, the engine stall the run's statistics
 *           count (stall_dep + stall_dma). It is caused by the line of the dependency that set
 *           the start (gs_timeline_instr.pred) and waited by the instruction's own line.
 *  why      a stall on an instruction that reads what the dependency wrote is a dependency on
 *           the dependency's line; one on an instruction that only overwrites an SBUF/PSUM
 *           buffer the dependency used (a WAR/WAW on a rotating buffer) is a buffer reuse of
 *           that buffer's pool (its name and declaration site). A DMA transfer whose
 *           dependencies were met before its queue triggered it waited for queue order (behind
 *           the queue's previous transfer, whose line is named); that wait is the line's too,
 *           but no engine stall (the queue's earlier transfer held it).
 *  cost     busy (every engine, DMA time included) + stall caused: the sort key.
 */
#ifndef GS_LINES_H
#define GS_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "gs/isa.h"
#include "gs/stats.h"
#include "gs/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_line_wait_kind {
    GS_WAIT_DEPENDENCY,   /* read what an instruction of `file:line` wrote */
    GS_WAIT_BUFFER_REUSE, /* overwrote a buffer of pool `pool` (declared at file:line) */
    GS_WAIT_QUEUE_ORDER,  /* its DMA queue's previous transfer (at file:line) triggered later */
    GS_WAIT_KIND_COUNT
} gs_line_wait_kind;

const char *gs_line_wait_kind_name(gs_line_wait_kind k); /* "dependency", ... */

/* The reasons kept per line, largest first. */
#define GS_LINE_WAITS 3

typedef struct gs_line_wait {
    gs_line_wait_kind kind;
    const char *file; /* the other line, or the pool's declaration site (NULL: not known) */
    int line;
    char pool[48]; /* GS_WAIT_BUFFER_REUSE: the pool's name */
    uint64_t ps;
} gs_line_wait;

typedef struct gs_line_cost {
    const char *file; /* NULL: instructions without a source line */
    int line;
    uint64_t busy_ps[GS_ENGINE_COUNT]; /* see the top: GS_ENG_DMA is the transfers' time */
    double dma_bytes;                  /* bytes its transfers moved on the DMA queues */
    uint64_t instructions;
    uint64_t caused_ps;  /* stall of other instructions whose dependency was one of its own */
    uint64_t stalled_ps; /* its instructions' engine stall (the part of waited_ps that is) */
    uint64_t waited_ps;  /* stalled_ps + DMA queue-order waits */
    gs_line_wait wait[GS_LINE_WAITS];
    size_t n_wait;
} gs_line_cost;

/* Every source line of a run, largest cost first (ties: file, then line). */
typedef struct gs_lines {
    gs_line_cost *line;
    size_t n;
} gs_lines;

/* The lines of program p's run (tl: what the run did; only completed instructions count).
 * GS_ERR_INVALID when the timeline does not fit the program, GS_ERR_NOMEM. out is zeroed first
 * and owned by the caller (gs_lines_free). */
gs_status gs_lines_compute(const gs_program *p, const gs_timeline *tl, gs_lines *out,
                           gs_error *err);
void gs_lines_free(gs_lines *l); /* NULL ok; zeroed */

/* The lines beyond the first `top` summed into one (file NULL, no waits); zero when none. */
gs_line_cost gs_lines_rest(const gs_lines *l, size_t top);

/* Append the record's "lines" object (results/RESULTS.md) for the first `top` lines:
 * {"count": lines, "top": [row, ..], "rest": row of the others or null}; a row is
 * {"src", "cost_ns", "busy_ns": {engine: ns, ..}, "dma_ns", "dma_bytes", "instructions",
 * "stall_caused_ns", "stalled_ns", "waited_ns", "waits": [{"kind", "src", "pool"?, "ns"}]}. */
void gs_lines_json(gs_sb *sb, const gs_lines *l, size_t top);

/* Append the table `run --lines` prints (the first `top` lines and the rest as one row). */
void gs_lines_text(gs_sb *sb, const gs_lines *l, size_t top);

#ifdef __cplusplus
}
#endif
#endif
