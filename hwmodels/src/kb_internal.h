/*
 * kb_internal.h - private to the kernel builder: the builder's state and the calls between its
 * parts (kb.c: pools, tiles, emission; kb_ops.c: the instruction API; deps.c: the dependency
 * tracker). Not installed; kernels use gs/kernel.h.
 */
#ifndef GS_KB_INTERNAL_H
#define GS_KB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gs/builder.h"
#include "ap_geom.h"
#include "program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tracker of one program, shared by the builders of its cores (deps.c). Region histories
 * are private to deps.c; the builder reads the per-buffer tile extents and release marks. */
struct region;
typedef struct tracker {
    struct region *hbm;
    size_t n_hbm;
    struct region *buf;
    size_t n_buf;
    /* per-buffer extent of the tile currently allocated in it */
    uint32_t *tile_parts;
    uint64_t *tile_bytes;
    uint8_t *released;        /* the buffer's pool was released: its tiles may not be used again */
    struct tile_alloc *alloc; /* per buffer, the tile now in it (stale handles, kb.c) */
    size_t n_tile;
    /* released buffers whose history may still pass to a new pool (deps.c; room for every
     * buffer, so that releasing never fails): a new pool looks at these, not at every buffer */
    int32_t *held;
    size_t n_held;
} tracker;

/* The tile a buffer now holds: its allocation number (gs_ap.gen of every handle to it; the
 * buffer's first tile is 1, mod 2^16) and the kernel line that allocated it, for the message
 * that refuses a handle to an older tile. */
typedef struct tile_alloc {
    const char *file;
    int32_t line;
    uint16_t gen;
} tile_alloc;

struct gs_pool {
    gs_kb *kb;
    gs_memspace space;
    char name[32];
    unsigned bufs;
    uint64_t bytes; /* per buffer, per partition */
    uint64_t base;
    unsigned next;
    int32_t first_buffer;
    size_t stack_index;
};

struct gs_kb {
    gs_program *p;
    const gs_config *cfg;
    gs_caps caps;
    uint32_t engines; /* bit e: gs_config_has_engine(cfg, e), for every e < GS_ENGINE_COUNT */
    unsigned core;
    gs_error err;
    int failed;
    gs_pool **pools;
    size_t n_pools, cap_pools;
    uint64_t top[GS_MEMSPACE_COUNT];
    unsigned rr_queue; /* the next DMA queue of the round robin, < caps.dma_queues */
    tracker *tr;
    uint32_t *deps;
    size_t n_deps, cap_deps;
    uint32_t *dep_set; /* deps.c: a hash set of deps (instruction + 1, 0 empty) once an */
    size_t dep_mask, dep_set_cap; /* instruction has many; dep_mask + 1 slots in use, 0: off */
    uint32_t *match[2];           /* collect(): matches in the write and read lists */
    size_t match_n[2], match_cap[2];
    int indexed;    /* index long HBM lists and record HBM reads lazily (deps.c; 0: scan every
                     * list in full and record every access at once, the reference behaviour) */
    uint32_t *cand; /* an indexed scan's candidate positions */
    size_t cand_n, cand_cap;
    uint64_t *cand_bits;  /* a bit per list position, to order and dedupe dense candidate sets;
                           * all zero between scans */
    size_t cand_bits_cap; /* in words */
    uint64_t work;        /* history entries the tracker examined (gs_kb_tracker_work) */
};

/* Record the builder's first error (later ones are dropped); returns the recorded code. */
gs_status gs_kb_failf(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt, ...)
    GS_PRINTF(5, 6);
/* Check one operand `what` of `in`: that it is valid and on this core (gs_kb_check_ap), and
 * that a compute engine can address its partitions (gs_kb_check_alignment). */
gs_status gs_kb_check_ap(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                         const gs_ap *a, const char *what);
gs_status gs_kb_check_alignment(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                                const gs_ap *a, const char *what);
/* What a kernel calls the region a pattern views, for messages: "tile of pool 'x'" or
 * "tensor 'A'" (written to buf, returned). */
const char *gs_kb_ap_label(const gs_kb *kb, const gs_ap *a, char *buf, size_t size);
/* Validate the operands of `in` (filled by an operation of kb_ops.c), derive its dependencies and
 * append it to the program; the builder's status. */
gs_status gs_kb_emit(gs_kb *kb, const char *file, int line, gs_instr_draft *in);
/* The common one-output, one-input form. */
gs_status gs_kb_emit_out_in(gs_kb *kb, const char *file, int line, gs_instr_draft *in, gs_ap out,
                            gs_ap src);

/* Free a tracker (the program's builder-state destructor). */
void gs_kb_tracker_free(void *t);
/* Grow the per-buffer arrays to cover buffer id; 0 on OOM. */
int gs_kb_tracker_note_buffer(tracker *t, int32_t id);
/* A new pool's buffers take over the histories of released buffers they overlap; 0 on OOM. */
int gs_kb_inherit_history(gs_kb *kb, const gs_pool *pool);
/* An instruction's operands as the program holds them (gs_program_intern), slot for slot as in
 * its draft, with the facts the builder keeps per distinct pattern (program.h). gs_kb_emit
 * interns them once; the checks, the dependency tracker and the append then share them. */
typedef struct gs_kb_operands {
    const gs_ap *out[GS_INSTR_MAX_OUT];
    const gs_ap *in[GS_INSTR_MAX_IN];
    gs_ap_facts *fout[GS_INSTR_MAX_OUT];
    gs_ap_facts *fin[GS_INSTR_MAX_IN];
} gs_kb_operands;

/* Derive the dependencies of `in` (checked operands, interned in ops) from the regions it
 * touches, append it to the program with them and record its accesses; 0 on OOM. */
int gs_kb_deps_append(gs_kb *kb, const gs_instr_draft *in, const gs_kb_operands *ops);
/* gs_ap_free_elems (ap.c), inline for the builder: its operations size every operand of every
 * instruction. The same definition (a unit test compares the two). */
static inline uint64_t gs_kb_free_elems(const gs_ap *a)
{
    if (!a || a->ndim == 0 || a->ndim > GS_AP_MAX_DIMS) return 0;
    uint64_t n = 1;
    for (unsigned k = 0; k < a->ndim; k++)
        n *= a->shape[k];
    return n;
}

#ifdef __cplusplus
}
#endif
#endif
