/*
 * deps.c - the kernel builder's dependency tracker (kb_internal.h): derives the dependencies of
 * each instruction the builder (kb.c) emits.
 *
 * Dependencies: every region (an HBM tensor, or one SBUF/PSUM pool buffer) keeps a list of the
 * accesses made to it. A new instruction depends on earlier writes that overlap what it reads
 * (RAW), and on earlier reads and writes that overlap what it writes (WAR, WAW). Overlap is exact
 * (the contiguous runs of both access patterns are intersected, ap.c) when the patterns have at
 * most a few thousand runs, and falls back to bounding boxes (conservative: an extra dependency,
 * never a missing one) beyond that. An access that is fully covered by a later dense write is
 * dropped from its list: anything overlapping it later also overlaps the write, which is ordered
 * after it. Likewise an SBUF/PSUM read covered by a later dense read on the same compute engine of
 * the same core: an engine runs its instructions one after the other, so the later read ends after
 * the earlier one and a write waiting for it waits for both (same start time: the semaphore
 * latency is the same for both). Without this a tile written piecewise (one column at a time)
 * and read whole every round piles up its reads, and every new write depends on all of them:
 * quadratic in the rounds, in the dependency lists themselves. In SBUF/PSUM an access whose
 * pattern is not dense makes the earlier accesses of the very same (interned) pattern redundant
 * in the same way (a write: any earlier one; a read: earlier reads on its engine): a strided view
 * written and read every round (matmul_mx's MX scales) would otherwise pile up too. Finally an
 * SBUF/PSUM read, by any engine, drops the earlier reads it covers that it waits for, directly
 * or through one of its dependencies (prune_reads_before): it starts after they end, so the
 * argument is the same as for one engine (a tile stored by DMA every round and written back in
 * halves, as rope does, piled up its stores' reads before).
 *
 * Long HBM histories (an output written tile by tile, a tensor read thousands of times) get an
 * index: a grid over the tensor seen as rows of one pitch, each access filed under the cells its
 * rectangle covers (a superset of its elements), so a new access is compared only with the
 * accesses that share a cell. Long SBUF/PSUM histories (a tile written one column per step, a
 * scan) get one too: the buffer's bytes of a partition in cells as wide as its narrowest access.
 * Candidates are then tested exactly as in a full scan and taken in list order, so the dependencies
 * are the same as scanning the whole list, at a cost per access that does not grow with the
 * program. Dropped accesses stay in an indexed list as tombstones until they are half of it (then
 * the list is compacted and the index rebuilt when next needed).
 *
 * Reads of HBM are recorded lazily. An HBM read list is only ever consulted by a write to the
 * same tensor (a write scans it for WAR dependencies; a dense write prunes it), and the inputs
 * of a large kernel are read hundreds of thousands of times and never written: storing each of
 * those reads as a full access (32 bytes, plus index cells once the list is indexed) is memory
 * traffic and first-touch page faults for a list nobody reads. So an HBM read is appended to
 * its region's pending list as a handle (instruction, operand slot: 8 bytes), and the pending
 * handles are turned into accesses, in order, exactly as an eager record would have stored them
 * (footprint of the same pattern, index insert if the list is indexed) just before anything
 * consults or changes the reads list (materialize(): in collect() before a write's scan, in
 * record() before a dense write's prune). The dependencies are therefore the same as with eager
 * recording. SBUF/PSUM reads stay eager: their lists are pruned by the next dense write of the
 * tile and stay short, and gs_kb_inherit_history copies them. With the index off
 * (GS_BASELINE_PATHS, the reference behaviour) every read is recorded eagerly.
 *
 * The geometry of single patterns (bounding boxes, density, row patterns, exact overlap) is in
 * ap.c (ap_geom.h), which knows nothing of the builder. The hazard rules and the index stay in
 * this one file (a little over 900 lines) on purpose: the index answers exactly the overlap
 * question the rules ask, and the two are tested and changed together; splitting them would
 * put the invariant "indexed candidates == a full scan" across a file boundary.
 */
#include "kb_internal.h"

#include <stdlib.h>
#include <string.h>

#include "program.h"

#define INDEX_MIN 32       /* list length from which an HBM list is indexed */
#define INDEX_MAX_CELLS 64 /* an access covering more cells is kept in the index's wide list */
#define INDEX_GRID_CELLS (1u << 18)  /* cells per index at most (cells grow to fit) */
#define INDEX_LOCAL_CELLS (1u << 12) /* the same for an SBUF/PSUM buffer's index */

/* ---- footprints ---- */

/* One operand access in a region's history. The access pattern itself is not copied: it is
 * operand `slot` of instruction `instr` in the program (0..GS_INSTR_MAX_IN-1: in[slot], then
 * out[slot - GS_INSTR_MAX_IN]), which keeps the history small for programs of hundreds of
 * thousands of instructions. */
typedef struct access {
    uint32_t instr;
    uint8_t write;
    uint8_t dense; /* footprint == bounding box */
    uint8_t slot;
    uint8_t dead; /* dropped from an indexed list (a tombstone until the list is compacted) */
    uint32_t p0, p1;
    int64_t lo, hi;
} access;

/* Summary of ACCESS_BLOCK consecutive list items: the union of their partitions and bounding
 * boxes, so a scan skips blocks that cannot overlap (an output tensor written tile by tile
 * would otherwise compare every new tile with every earlier one). */
#define ACCESS_BLOCK 32
typedef struct access_block {
    int64_t lo, hi;
    uint32_t p0, p1;
} access_block;

typedef struct index_cell {
    uint32_t *pos; /* positions in the list's items, increasing */
    uint32_t n, cap;
} index_cell;

/* The grid of an indexed list (see the file comment). HBM: rows are `pitch` elements; a cell is
 * ch rows x cw elements. SBUF/PSUM (local): one row, the buffer's bytes [base, base + pitch) of
 * a partition, a cell cw bytes (partitions are compared by the exact test). */
typedef struct list_index {
    int local;
    int64_t base;
    int64_t pitch, ch, cw, rows;
    int64_t gr, gc; /* grid rows and columns of cells */
    index_cell *cells;
    index_cell wide; /* accesses covering more than INDEX_MAX_CELLS cells */
} list_index;

typedef struct access_list {
    access *items;
    size_t n, cap;
    access_block *blocks;
    size_t blocks_cap;
    size_t summarized; /* items [0, summarized) are summarized; reset when items move */
    size_t n_dead;     /* tombstones (indexed lists only) */
    list_index *idx;   /* NULL: scanned in full */
} access_list;

/* An HBM read not yet recorded in its region's reads list (see the file comment): operand `slot`
 * of instruction `instr`, as in an access. 8 bytes against an access's 32. */
typedef struct pending_read {
    uint32_t instr;
    uint8_t slot;
} pending_read;

/* Reads and writes are kept apart so that a read scans only the writes: programs that read the
 * same input tiles over and over (a matmul's operands) would otherwise rescan every earlier
 * read on every new read, which is quadratic in the program's length. Both lists stay in
 * instruction order; an HBM region's reads are `reads` followed by `pending` (later reads). */
struct region {
    access_list reads, writes;
    pending_read *pending; /* HBM only */
    size_t n_pending, cap_pending;
};
typedef struct region region;

static void index_free(list_index *x)
{
    if (!x) return;
    for (int64_t i = 0; i < x->gr * x->gc; i++)
        gs_free(x->cells[i].pos);
    gs_free(x->cells);
    gs_free(x->wide.pos);
    gs_free(x);
}

void gs_kb_tracker_free(void *v)
{
    tracker *t = v;
    if (!t) return;
    for (size_t i = 0; i < t->n_hbm; i++) {
        gs_free(t->hbm[i].reads.items);
        gs_free(t->hbm[i].writes.items);
        gs_free(t->hbm[i].reads.blocks);
        gs_free(t->hbm[i].writes.blocks);
        index_free(t->hbm[i].reads.idx);
        index_free(t->hbm[i].writes.idx);
        gs_free(t->hbm[i].pending);
    }
    for (size_t i = 0; i < t->n_buf; i++) {
        gs_free(t->buf[i].reads.items);
        gs_free(t->buf[i].writes.items);
        gs_free(t->buf[i].reads.blocks);
        gs_free(t->buf[i].writes.blocks);
        index_free(t->buf[i].reads.idx);
        index_free(t->buf[i].writes.idx);
    }
    gs_free(t->hbm);
    gs_free(t->buf);
    gs_free(t->tile_parts);
    gs_free(t->tile_bytes);
    gs_free(t->released);
    gs_free(t->alloc);
    gs_free(t->held);
    gs_free(t);
}

int gs_kb_tracker_note_buffer(tracker *t, int32_t id)
{
    if ((size_t)id < t->n_tile) return 1;
    size_t n = (size_t)id + 1;
    uint32_t *tp = gs_realloc(t->tile_parts, n * sizeof *tp);
    if (!tp) return 0;
    t->tile_parts = tp;
    uint64_t *tb = gs_realloc(t->tile_bytes, n * sizeof *tb);
    if (!tb) return 0;
    t->tile_bytes = tb;
    uint8_t *rl = gs_realloc(t->released, n * sizeof *rl);
    if (!rl) return 0;
    t->released = rl;
    tile_alloc *al = gs_realloc(t->alloc, n * sizeof *al);
    if (!al) return 0;
    t->alloc = al;
    int32_t *h = gs_realloc(t->held, n * sizeof *h);
    if (!h) return 0;
    t->held = h;
    for (size_t i = t->n_tile; i < n; i++) {
        t->tile_parts[i] = 0;
        t->tile_bytes[i] = 0;
        t->released[i] = 0;
        t->alloc[i] = (tile_alloc){NULL, 0, 0};
    }
    t->n_tile = n;
    return 1;
}

static region *region_of(tracker *t, const gs_ap *a)
{
    region **arr = a->space == GS_MEM_HBM ? &t->hbm : &t->buf;
    size_t *n = a->space == GS_MEM_HBM ? &t->n_hbm : &t->n_buf;
    size_t id = (size_t)a->tensor;
    if (id >= *n) {
        size_t nn = id + 1 + id / 2;
        region *r = gs_realloc(*arr, nn * sizeof *r);
        if (!r) return NULL;
        memset(r + *n, 0, (nn - *n) * sizeof *r);
        *arr = r;
        *n = nn;
    }
    return &(*arr)[id];
}

/* An access's footprint: its pattern's, computed once per distinct pattern. */
static void footprint(const gs_ap *a, gs_ap_facts *f, access *acc)
{
    const gs_ap_facts *x = gs_ap_footprint(a, f);
    acc->p0 = x->p0;
    acc->p1 = x->p1;
    acc->lo = x->lo;
    acc->hi = x->hi;
    acc->dense = x->dense;
}

static const gs_ap *access_ap(const gs_kb *kb, const access *a)
{
    const gs_instr *in = gs_program_instr(kb->p, a->instr);
    return a->slot < GS_INSTR_MAX_IN ? in->in[a->slot] : in->out[a->slot - GS_INSTR_MAX_IN];
}

/* acc_overlap when the partitions and bounding boxes overlap and not both accesses are dense. */
static int acc_overlap_exact(const gs_kb *kb, const gs_ap *xap, const access *y)
{
    const gs_ap *yap = access_ap(kb, y);
    gs_row_pattern rx, ry;
    if (gs_ap_as_rows(xap, &rx) && gs_ap_as_rows(yap, &ry)) {
        int o = gs_rows_overlap(&rx, &ry);
        if (o >= 0) return o;
    }
    return gs_ap_overlap_exact(xap, yap);
}

static inline int acc_overlap(const gs_kb *kb, const access *x, const gs_ap *xap, const access *y)
{
    if (x->p1 <= y->p0 || y->p1 <= x->p0) return 0;
    if (x->hi <= y->lo || y->hi <= x->lo) return 0;
    if (x->dense && y->dense) return 1;
    return acc_overlap_exact(kb, xap, y);
}

/* Dependencies from which an instruction's are deduplicated through kb->dep_set instead of a
 * look at each one: a tile's first write after a scan waits for every column read of the
 * buffer's previous tile (hundreds: quadratic per instruction when each was compared with all) */
#define DEP_SET_MIN 16

/* Put d in the hash set (sized for twice the dependencies); 1 if it was there already. */
static inline int dep_set_put(gs_kb *kb, uint32_t d)
{
    size_t h = ((size_t)d * 2654435761u) & kb->dep_mask;
    for (;; h = (h + 1) & kb->dep_mask) {
        kb->work++;
        if (kb->dep_set[h] == d + 1u) return 1;
        if (!kb->dep_set[h]) {
            kb->dep_set[h] = d + 1u;
            return 0;
        }
    }
}

/* Make the set hold kb->deps in `slots` slots (a power of two at least twice their number). */
static int dep_set_fill(gs_kb *kb, size_t slots)
{
    if (slots > kb->dep_set_cap) {
        uint32_t *n = gs_realloc(kb->dep_set, slots * sizeof *n);
        if (!n) return 0;
        kb->dep_set = n;
        kb->dep_set_cap = slots;
    }
    memset(kb->dep_set, 0, slots * sizeof *kb->dep_set);
    kb->dep_mask = slots - 1;
    kb->work += kb->n_deps;
    for (size_t i = 0; i < kb->n_deps; i++)
        (void)dep_set_put(kb, kb->deps[i]);
    return 1;
}

/* Start a new instruction's dependencies (the set is emptied in the slots it used). */
static void deps_reset(gs_kb *kb)
{
    if (kb->dep_mask) memset(kb->dep_set, 0, (kb->dep_mask + 1) * sizeof *kb->dep_set);
    kb->dep_mask = 0;
    kb->n_deps = 0;
}

static inline int add_dep(gs_kb *kb, uint32_t d)
{
    if (kb->dep_mask) {
        if (dep_set_put(kb, d)) return 1;
    } else {
        kb->work += kb->n_deps;
        for (size_t i = 0; i < kb->n_deps; i++)
            if (kb->deps[i] == d) return 1;
    }
    if (kb->n_deps == kb->cap_deps) {
        size_t nc = kb->cap_deps ? kb->cap_deps * 2 : 32;
        uint32_t *n = gs_realloc(kb->deps, nc * sizeof *n);
        if (!n) return 0;
        kb->deps = n;
        kb->cap_deps = nc;
    }
    kb->deps[kb->n_deps++] = d;
    if (kb->n_deps >= DEP_SET_MIN && kb->n_deps * 2 > kb->dep_mask)
        return dep_set_fill(kb, kb->dep_mask ? (kb->dep_mask + 1) * 2 : 4 * DEP_SET_MIN);
    return 1;
}

/* Bring the block summaries up to date with the items (only the blocks past `summarized`). */
static int summarize(access_list *l)
{
    if (l->summarized >= l->n) return 1;
    size_t nb = (l->n + ACCESS_BLOCK - 1) / ACCESS_BLOCK;
    if (nb > l->blocks_cap) {
        size_t nc = GS_MAX(nb, l->blocks_cap * 2);
        access_block *b = gs_realloc(l->blocks, nc * sizeof *b);
        if (!b) return 0;
        l->blocks = b;
        l->blocks_cap = nc;
    }
    for (size_t b = l->summarized / ACCESS_BLOCK; b < nb; b++) {
        size_t end = GS_MIN(l->n, (b + 1) * ACCESS_BLOCK);
        access_block *s = &l->blocks[b];
        const access *a = &l->items[b * ACCESS_BLOCK];
        s->lo = a->lo;
        s->hi = a->hi;
        s->p0 = a->p0;
        s->p1 = a->p1;
        for (size_t k = b * ACCESS_BLOCK + 1; k < end; k++) {
            a = &l->items[k];
            s->lo = GS_MIN(s->lo, a->lo);
            s->hi = GS_MAX(s->hi, a->hi);
            s->p0 = GS_MIN(s->p0, a->p0);
            s->p1 = GS_MAX(s->p1, a->p1);
        }
    }
    l->summarized = l->n;
    return 1;
}

static inline int push_match(gs_kb *kb, int which, uint32_t instr)
{
    if (kb->match_n[which] == kb->match_cap[which]) {
        size_t nc = kb->match_cap[which] ? kb->match_cap[which] * 2 : 32;
        uint32_t *m = gs_realloc(kb->match[which], nc * sizeof *m);
        if (!m) return 0;
        kb->match[which] = m;
        kb->match_cap[which] = nc;
    }
    kb->match[which][kb->match_n[which]++] = instr;
    return 1;
}

/* ---- the index of long HBM lists ---- */

/* Rows [*r0, *r1] and elements [*c0, *c1] within a row (inclusive) of `pitch`-element rows that
 * hold every element of an HBM access: its rows when it is a row pattern of that pitch, else
 * its bounding box taken as one run. */
static void hbm_rect(const gs_ap *ap, const access *acc, int64_t pitch, int64_t *r0, int64_t *r1,
                     int64_t *c0, int64_t *c1)
{
    gs_row_pattern r;
    if (!gs_ap_as_rows(ap, &r) || (r.rows > 1 && r.pitch != pitch) || r.pitch < 0) {
        r.base = acc->lo;
        r.n = acc->hi - acc->lo;
        r.rows = 1;
    }
    int64_t q = gs_floor_div(r.base, pitch), col = r.base - q * pitch;
    int64_t last = r.base + (r.rows - 1) * pitch + r.n - 1;
    *r0 = q;
    *r1 = gs_floor_div(last, pitch);
    if (col + r.n <= pitch) {
        *c0 = col;
        *c1 = col + r.n - 1;
    } else {
        *c0 = 0;
        *c1 = pitch - 1;
    }
}

static int cell_push(index_cell *c, uint32_t pos)
{
    if (c->n == c->cap) {
        uint32_t nc = c->cap ? c->cap * 2 : 4;
        uint32_t *n = gs_realloc(c->pos, nc * sizeof *n);
        if (!n) return 0;
        c->pos = n;
        c->cap = nc;
    }
    c->pos[c->n++] = pos;
    return 1;
}

/* Cells [*g0, *g1] x [*h0, *h1] of an access's rectangle; 0 when it belongs in the wide list. */
static int index_cells(const list_index *x, const gs_ap *ap, const access *acc, int64_t *g0,
                       int64_t *g1, int64_t *h0, int64_t *h1)
{
    int64_t r0, r1, c0, c1;
    if (x->local) {
        /* an access outside the buffer (inherited from a released one) goes in the wide list */
        r0 = r1 = 0;
        c0 = acc->lo - x->base;
        c1 = acc->hi - 1 - x->base;
        if (c0 < 0 || c1 >= x->pitch || c1 < c0) return 0;
    } else {
        hbm_rect(ap, acc, x->pitch, &r0, &r1, &c0, &c1);
    }
    if (r0 < 0 || r1 >= x->rows) return 0;
    *g0 = r0 / x->ch;
    *g1 = r1 / x->ch;
    *h0 = c0 / x->cw;
    *h1 = c1 / x->cw;
    return (*g1 - *g0 + 1) * (*h1 - *h0 + 1) <= INDEX_MAX_CELLS;
}

static int index_insert(list_index *x, const access *acc, const gs_ap *ap, uint32_t pos)
{
    int64_t g0, g1, h0, h1;
    if (!index_cells(x, ap, acc, &g0, &g1, &h0, &h1)) return cell_push(&x->wide, pos);
    for (int64_t g = g0; g <= g1; g++)
        for (int64_t h = h0; h <= h1; h++)
            if (!cell_push(&x->cells[g * x->gc + h], pos)) return 0;
    return 1;
}

/* The geometry of the index of SBUF/PSUM list l of buffer `buffer`: its bytes, in cells as wide
 * as the narrowest access of the list (a tile written a column at a time: one column). 0 when
 * the buffer is unknown. */
static int index_local_geometry(const gs_kb *kb, const access_list *l, int32_t buffer,
                                list_index *x)
{
    const gs_buffer_info *bi = gs_program_buffer(kb->p, buffer);
    if (!bi || bi->bytes == 0) return 0;
    x->local = 1;
    x->base = (int64_t)bi->offset;
    x->pitch = (int64_t)bi->bytes;
    x->rows = 1;
    x->ch = 1;
    x->cw = x->pitch;
    for (size_t i = 0; i < l->n; i++)
        if (!l->items[i].dead && l->items[i].hi > l->items[i].lo)
            x->cw = GS_MIN(x->cw, l->items[i].hi - l->items[i].lo);
    return 1;
}

/* Build the index of list l (HBM tensor or SBUF/PSUM buffer `id`). HBM: the geometry is taken
 * from the tensor's rows and the first row-pattern access of the list (cells of about one
 * tile); local: index_local_geometry. */
static int index_build(gs_kb *kb, access_list *l, gs_memspace space, int32_t id)
{
    list_index *x = gs_calloc(1, sizeof *x);
    if (!x) return 0;
    int64_t max_cells = INDEX_GRID_CELLS;
    if (space != GS_MEM_HBM) {
        if (!index_local_geometry(kb, l, id, x)) {
            gs_free(x);
            return 1; /* leave it unindexed */
        }
        max_cells = INDEX_LOCAL_CELLS;
    } else {
        const gs_tensor_info *ti = gs_program_tensor(kb->p, id);
        if (!ti || ti->elems == 0) {
            gs_free(x);
            return 1; /* leave it unindexed */
        }
        x->pitch = ti->ndim > 0 ? ti->shape[ti->ndim - 1] : (int64_t)ti->elems;
        if (x->pitch <= 0) x->pitch = (int64_t)ti->elems;
        x->rows = ((int64_t)ti->elems + x->pitch - 1) / x->pitch;
        x->ch = 1;
        x->cw = x->pitch;
        for (size_t i = 0; i < l->n; i++) {
            gs_row_pattern r;
            if (l->items[i].dead || !gs_ap_as_rows(access_ap(kb, &l->items[i]), &r)) continue;
            if (r.rows > 1 && r.pitch != x->pitch) continue;
            x->ch = GS_MAX(r.rows, 1);
            x->cw = GS_MIN(GS_MAX(r.n, 1), x->pitch);
            break;
        }
    }
    for (;;) {
        x->gr = (x->rows + x->ch - 1) / x->ch;
        x->gc = (x->pitch + x->cw - 1) / x->cw;
        if (x->gr * x->gc <= max_cells) break;
        if (x->gr >= x->gc)
            x->ch *= 2;
        else
            x->cw *= 2;
    }
    x->cells = gs_calloc((size_t)(x->gr * x->gc), sizeof *x->cells);
    if (!x->cells) {
        gs_free(x);
        return 0;
    }
    l->idx = x;
    for (size_t i = 0; i < l->n; i++)
        if (!l->items[i].dead &&
            !index_insert(x, &l->items[i], access_ap(kb, &l->items[i]), (uint32_t)i))
            return 0;
    return 1;
}

static int cand_push(gs_kb *kb, uint32_t pos)
{
    if (kb->cand_n == kb->cand_cap) {
        size_t nc = kb->cand_cap ? kb->cand_cap * 2 : 64;
        uint32_t *n = gs_realloc(kb->cand, nc * sizeof *n);
        if (!n) return 0;
        kb->cand = n;
        kb->cand_cap = nc;
    }
    kb->cand[kb->cand_n++] = pos;
    return 1;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Order and dedupe the candidates through a bitmap over their range of list positions, and drop
 * dead ones, when the range is dense enough (at most 2 words per candidate) for that to cost
 * O(candidates), less than sorting them: an access that covers many cells gathers each item
 * once per cell it shares (swiglu_mlp spent 65 % of its CPU sorting those). 1: done; 0: the
 * range is too sparse, sort instead; -1: out of memory. The same positions in the same order
 * as sorting, either way. */
static int cand_order_dense(gs_kb *kb, const access_list *l)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < kb->cand_n; i++) {
        lo = GS_MIN(lo, kb->cand[i]);
        hi = GS_MAX(hi, kb->cand[i]);
    }
    const size_t words = ((size_t)(hi - lo) >> 6) + 1;
    if (words > 2 * kb->cand_n) return 0;
    if (words > kb->cand_bits_cap) {
        size_t nc = GS_MAX(words, 2 * kb->cand_bits_cap);
        uint64_t *nb = gs_realloc(kb->cand_bits, nc * sizeof *nb);
        if (!nb) return -1;
        memset(nb + kb->cand_bits_cap, 0, (nc - kb->cand_bits_cap) * sizeof *nb);
        kb->cand_bits = nb;
        kb->cand_bits_cap = nc;
    }
    uint64_t *bits = kb->cand_bits;
    for (size_t i = 0; i < kb->cand_n; i++) {
        const uint32_t d = kb->cand[i] - lo;
        bits[d >> 6] |= 1ull << (d & 63);
    }
    size_t m = 0; /* m <= the distinct positions read so far: cand is free to overwrite */
    for (size_t w = 0; w < words; w++) {
        uint64_t v = bits[w];
        if (!v) continue;
        bits[w] = 0;
        while (v) {
            const uint32_t pos = lo + (uint32_t)(w << 6) + (uint32_t)__builtin_ctzll(v);
            v &= v - 1;
            if (!l->items[pos].dead) kb->cand[m++] = pos;
        }
    }
    kb->cand_n = m;
    return 1;
}

/* The live positions of indexed list l that may overlap `acc` (a superset of those that do),
 * increasing and without repeats, into kb->cand. */
static int index_candidates(gs_kb *kb, const access_list *l, const access *acc, const gs_ap *ap)
{
    const list_index *x = l->idx;
    kb->cand_n = 0;
    int64_t g0, g1, h0, h1;
    if (!index_cells(x, ap, acc, &g0, &g1, &h0, &h1)) {
        /* a wide access: every live item is a candidate */
        kb->work += l->n;
        for (size_t i = 0; i < l->n; i++)
            if (!l->items[i].dead && !cand_push(kb, (uint32_t)i)) return 0;
        return 1;
    }
    for (uint32_t k = 0; k < x->wide.n; k++)
        if (!cand_push(kb, x->wide.pos[k])) return 0;
    for (int64_t g = g0; g <= g1; g++)
        for (int64_t h = h0; h <= h1; h++) {
            const index_cell *c = &x->cells[g * x->gc + h];
            for (uint32_t k = 0; k < c->n; k++)
                if (!cand_push(kb, c->pos[k])) return 0;
        }
    kb->work += kb->cand_n + (uint64_t)((g1 - g0 + 1) * (h1 - h0 + 1));
    int one_run = x->wide.n == 0 && g0 == g1 && h0 == h1; /* a cell's positions are increasing */
    if (!one_run && kb->cand_n > 1) {
        int r = cand_order_dense(kb, l);
        if (r < 0) return 0;
        if (r) return 1;
        qsort(kb->cand, kb->cand_n, sizeof *kb->cand, cmp_u32);
    }
    size_t m = 0;
    for (size_t i = 0; i < kb->cand_n; i++) {
        uint32_t pos = kb->cand[i];
        if ((m && kb->cand[m - 1] == pos) || l->items[pos].dead) continue;
        kb->cand[m++] = pos;
    }
    kb->cand_n = m;
    return 1;
}

/* Whether list l of a region holding `ap`'s space is (or should now be) indexed. */
static int use_index(gs_kb *kb, access_list *l, const gs_ap *ap)
{
    if (l->idx) return 1;
    if (!kb->indexed || l->n - l->n_dead < INDEX_MIN) return 0;
    if (!index_build(kb, l, ap->space, ap->tensor)) return -1;
    return l->idx != NULL;
}

/* scan() of a list that is long or indexed. */
static int scan_long(gs_kb *kb, int which, access_list *l, const access *acc, const gs_ap *ap)
{
    int ix = use_index(kb, l, ap);
    if (ix < 0) return 0;
    if (ix) {
        if (!index_candidates(kb, l, acc, ap)) return 0;
        for (size_t i = 0; i < kb->cand_n; i++) {
            const access *it = &l->items[kb->cand[i]];
            if (acc_overlap(kb, acc, ap, it) && !push_match(kb, which, it->instr)) return 0;
        }
        return 1;
    }
    if (!summarize(l)) return 0;
    for (size_t b = 0; b * ACCESS_BLOCK < l->n; b++) {
        const access_block *s = &l->blocks[b];
        kb->work++;
        if (acc->p1 <= s->p0 || s->p1 <= acc->p0 || acc->hi <= s->lo || s->hi <= acc->lo) continue;
        size_t end = GS_MIN(l->n, (b + 1) * ACCESS_BLOCK);
        kb->work += end - b * ACCESS_BLOCK;
        for (size_t k = b * ACCESS_BLOCK; k < end; k++)
            if (acc_overlap(kb, acc, ap, &l->items[k]) && !push_match(kb, which, l->items[k].instr))
                return 0;
    }
    return 1;
}

/* Matches of acc in list l, in list (= instruction) order, into kb->match[which]. */
static inline int scan(gs_kb *kb, int which, access_list *l, const access *acc, const gs_ap *ap)
{
    kb->match_n[which] = 0;
    if (l->idx || l->n >= INDEX_MIN) return scan_long(kb, which, l, acc, ap);
    /* a short list (most are: a dense write prunes its tile's history) is never indexed
     * (use_index), and its one block's summary would only repeat the items' own tests */
    kb->work += l->n;
    for (size_t k = 0; k < l->n; k++)
        if (acc_overlap(kb, acc, ap, &l->items[k]) && !push_match(kb, which, l->items[k].instr))
            return 0;
    return 1;
}

/* Append access acc (pattern ap) to list l, filed in its index if it has one. */
static int list_push(access_list *l, const access *acc, const gs_ap *ap)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        access *n = gs_realloc(l->items, nc * sizeof *n);
        if (!n) return 0;
        l->items = n;
        l->cap = nc;
    }
    if (l->n >= UINT32_MAX) return 0;
    l->items[l->n] = *acc;
    l->items[l->n].dead = 0;
    if (l->idx && !index_insert(l->idx, &l->items[l->n], ap, (uint32_t)l->n)) return 0;
    l->n++;
    return 1;
}

/* Defer HBM read acc of region r (see the file comment). */
static int defer_read(region *r, const access *acc)
{
    if (r->n_pending == r->cap_pending) {
        size_t nc = r->cap_pending ? r->cap_pending * 2 : 64;
        pending_read *n = gs_realloc(r->pending, nc * sizeof *n);
        if (!n) return 0;
        r->pending = n;
        r->cap_pending = nc;
    }
    r->pending[r->n_pending].instr = acc->instr;
    r->pending[r->n_pending].slot = acc->slot;
    r->n_pending++;
    return 1;
}

/* Record region r's pending HBM reads in its reads list, in order, as record() would have
 * stored each of them at its time (its pattern's footprint, filed in the index if the list has
 * one): from here on the list is what eager recording gives. On OOM the handles not yet moved
 * stay pending. */
static int materialize(gs_kb *kb, region *r)
{
    if (r->n_pending == 0) return 1;
    access_list *l = &r->reads;
    if (l->cap - l->n < r->n_pending) {
        size_t nc = GS_MAX(l->cap * 2, l->n + r->n_pending);
        access *n = gs_realloc(l->items, nc * sizeof *n);
        if (!n) return 0;
        l->items = n;
        l->cap = nc;
    }
    /* footprint facts depend on the pattern alone (program.h), so facts computed afresh equal
     * the ones cached beside the interned pattern (not reachable from an instruction's operand):
     * once per run of handles with the same pattern (a tile read by consecutive instructions) */
    const gs_ap *last = NULL;
    gs_ap_facts f;
    memset(&f, 0, sizeof f);
    size_t i = 0;
    for (; i < r->n_pending; i++) {
        access acc;
        memset(&acc, 0, sizeof acc);
        acc.instr = r->pending[i].instr;
        acc.slot = r->pending[i].slot;
        const gs_ap *ap = access_ap(kb, &acc);
        if (!ap) break; /* not reached: every slot of an instruction points to a pattern */
        if (ap != last) {
            memset(&f, 0, sizeof f);
            last = ap;
        }
        footprint(ap, &f, &acc);
        if (!list_push(l, &acc, ap)) break;
    }
    r->n_pending -= i;
    if (r->n_pending) {
        memmove(r->pending, r->pending + i, r->n_pending * sizeof *r->pending);
        return 0;
    }
    return 1;
}

/* Collect dependencies of one operand access against its region's history: a read against the
 * earlier writes (RAW), a write against the earlier reads and writes (WAR, WAW). The matches of
 * the two lists are merged in instruction order so the dependency order is the program order. */
static int collect(gs_kb *kb, const access *acc, const gs_ap *ap)
{
    region *r = region_of(kb->tr, ap);
    if (!r) return 0;
    if (!scan(kb, 0, &r->writes, acc, ap)) return 0;
    kb->match_n[1] = 0;
    if (acc->write && (!materialize(kb, r) || !scan(kb, 1, &r->reads, acc, ap))) return 0;
    const uint32_t *w = kb->match[0], *rd = kb->match[1];
    size_t i = 0, j = 0, nw = kb->match_n[0], nr = kb->match_n[1];
    if (nr == 0) {
        for (; i < nw; i++)
            if (!add_dep(kb, w[i])) return 0;
        return 1;
    }
    while (i < nw || j < nr) {
        uint32_t d = (j >= nr || (i < nw && w[i] <= rd[j])) ? w[i++] : rd[j++];
        if (!add_dep(kb, d)) return 0;
    }
    return 1;
}

static int covers(const access *w, const access *old)
{
    return w->dense && w->p0 <= old->p0 && w->p1 >= old->p1 && w->lo <= old->lo && w->hi >= old->hi;
}

/* Whether access `old` of a list is dropped because of access w (see the file comment): w
 * covers it and, for a read w (by instruction `in`), old is a read by the same compute engine of
 * the same core. */
static int dropped_by(const gs_kb *kb, const access *w, const gs_ap *wap, const access *old,
                      const gs_instr_draft *in)
{
    /* a pattern not dense covers the accesses of the same (interned) pattern */
    if (!covers(w, old) && (w->dense || access_ap(kb, old) != wap)) return 0;
    if (w->write) return 1;
    const gs_instr *e = gs_program_instr(kb->p, old->instr);
    return e->core == in->core && e->engine == in->engine;
}

/* prune() of an indexed list: the dropped accesses become tombstones. */
static int prune_indexed(gs_kb *kb, access_list *l, const access *w, const gs_ap *ap,
                         const gs_instr_draft *in)
{
    /* a covered access lies inside w, so it is among w's candidates */
    if (!index_candidates(kb, l, w, ap)) return 0;
    for (size_t i = 0; i < kb->cand_n; i++) {
        access *it = &l->items[kb->cand[i]];
        if (dropped_by(kb, w, ap, it, in)) {
            it->dead = 1;
            l->n_dead++;
        }
    }
    if (l->n_dead > INDEX_MIN && l->n_dead * 2 > l->n) {
        size_t m = 0;
        for (size_t i = 0; i < l->n; i++)
            if (!l->items[i].dead) l->items[m++] = l->items[i];
        l->n = m;
        l->n_dead = 0;
        l->summarized = 0;
        index_free(l->idx);
        l->idx = NULL; /* rebuilt when next needed */
    }
    return 1;
}

/* Drop the accesses of list l that dense access w (of instruction `in`) makes redundant (see the
 * file comment). */
static inline int prune(gs_kb *kb, access_list *l, const access *w, const gs_ap *ap,
                        const gs_instr_draft *in)
{
    /* a short list is never indexed (use_index): skip the question */
    int ix = !l->idx && l->n < INDEX_MIN ? 0 : use_index(kb, l, ap);
    if (ix < 0) return 0;
    if (ix) return prune_indexed(kb, l, w, ap, in);
    kb->work += l->n;
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!dropped_by(kb, w, ap, &l->items[i], in)) {
            if (m != i) l->items[m] = l->items[i];
            m++;
        } else if (m < l->summarized) {
            l->summarized = m; /* the items from here on move down: summarize them again */
        }
    }
    l->n = m;
    return 1;
}

/* First item of list l (sorted by instruction) made by instruction `instr`, or l->n. */
static size_t first_of(const access_list *l, uint32_t instr)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->items[mid].instr < instr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Drop the accesses of instruction `instr` in list l that read b (being recorded) covers (as
 * dropped_by: dense and covering, or the same pattern). Returns how many. */
static size_t drop_covered_of(gs_kb *kb, access_list *l, const access *b, const gs_ap *bap,
                              uint32_t instr)
{
    size_t n = 0;
    for (size_t i = first_of(l, instr); i < l->n && l->items[i].instr == instr; i++) {
        access *it = &l->items[i];
        if (it->dead || it->write) continue;
        if (!covers(b, it) && (b->dense || access_ap(kb, it) != bap)) continue;
        it->dead = 1;
        l->n_dead++;
        n++;
    }
    return n;
}

/* Whether read `it` of list l is one that read b would drop once it is ordered before b (as
 * drop_covered_of tests it). */
static inline int droppable_by(gs_kb *kb, const access *it, const access *b, const gs_ap *bap)
{
    if (it->dead || it->write) return 0;
    return covers(b, it) || (!b->dense && access_ap(kb, it) == bap);
}

/* Whether instruction c is a dependency of the instruction being recorded (kb->deps) or of one
 * of them: a linear look at each list, for the few reads prune_reads_before may drop. */
static int ordered_before(gs_kb *kb, uint32_t c)
{
    for (size_t i = 0; i < kb->n_deps; i++)
        if (kb->deps[i] == c) return 1;
    for (size_t i = 0; i < kb->n_deps; i++) {
        if (kb->deps[i] <= c) continue; /* its dependencies are all older than it */
        const gs_instr *e = gs_program_instr(kb->p, kb->deps[i]);
        kb->work += e->n_deps;
        for (uint32_t j = 0; j < e->n_deps; j++)
            if (e->deps[j] == c) return 1;
    }
    return 0;
}

#define PRUNE_FEW 8 /* reads to drop up to which each is looked up among the dependencies */

/*
 * Drop the SBUF/PSUM reads that read b (of the instruction being recorded, whose dependencies
 * are kb->deps) covers and is ordered after: b's instruction waits for them, directly or through
 * one of its dependencies (b waits for an instruction that waited for them). Then b starts after
 * they end, so it ends after them, and a later write that overlaps them overlaps b and waits for
 * it: for them too, at the same time (see the file comment). The same-engine rule of dropped_by
 * covers reads of one compute engine; this one covers reads ordered through the data, whatever
 * the engine: a tile stored by DMA each round and written back in halves by the vector engine
 * (rope) piled up its stores' reads, and every write depended on all of them (quadratic). Only
 * the dependencies' own dependencies are looked at. Most calls have nothing to drop (a column
 * read covers no other column's read), so the reads b would drop are found first (from the
 * list's index when it has one) and only those few are looked up among the dependencies; with
 * more than a few, the dependencies' lists are walked once, each entry in the list's range found
 * by binary search (the list is in instruction order). Either way the same reads are dropped.
 * Walking the dependencies first cost the Mamba scan's column reads hundreds of binary searches
 * each (a column read waits for the tile's first write, which waits for every reader of the
 * buffer's previous tile): 97 % of a 20k-instruction build.
 */
static int prune_reads_before(gs_kb *kb, access_list *l, const access *b, const gs_ap *bap)
{
    if (l->n == 0) return 1;
    uint32_t few[PRUNE_FEW];
    size_t n_few = 0, dropped = 0;
    int many = 0;
    if (l->idx) {
        if (!index_candidates(kb, l, b, bap)) return 0;
        for (size_t i = 0; i < kb->cand_n && !many; i++)
            if (droppable_by(kb, &l->items[kb->cand[i]], b, bap)) {
                if (n_few == PRUNE_FEW)
                    many = 1;
                else
                    few[n_few++] = kb->cand[i];
            }
    } else {
        kb->work += l->n;
        for (size_t i = 0; i < l->n && !many; i++)
            if (droppable_by(kb, &l->items[i], b, bap)) {
                if (n_few == PRUNE_FEW)
                    many = 1;
                else
                    few[n_few++] = (uint32_t)i;
            }
    }
    if (!many) {
        for (size_t k = 0; k < n_few; k++) {
            access *it = &l->items[few[k]];
            if (!ordered_before(kb, it->instr)) continue;
            it->dead = 1;
            l->n_dead++;
            dropped++;
        }
    } else {
        /* the list is in instruction order: no instruction outside [lo, hi] has an item in it,
         * and an instruction's dependencies are all older than it, so a dependency d <= lo has
         * none of its own in the list (a tile's first write, on which every column read of the
         * tile waits, often has hundreds: the readers of the buffer's previous tile) */
        const uint32_t lo = l->items[0].instr, hi = l->items[l->n - 1].instr;
        for (size_t i = 0; i < kb->n_deps; i++) {
            uint32_t d = kb->deps[i];
            if (d >= lo && d <= hi) dropped += drop_covered_of(kb, l, b, bap, d);
            if (d <= lo) continue;
            const gs_instr *e = gs_program_instr(kb->p, d);
            kb->work += e->n_deps;
            for (uint32_t j = 0; j < e->n_deps; j++)
                if (e->deps[j] >= lo && e->deps[j] <= hi)
                    dropped += drop_covered_of(kb, l, b, bap, e->deps[j]);
        }
    }
    if (!dropped) return 1;
    if (l->idx) { /* tombstones, as prune_indexed leaves them */
        if (l->n_dead > INDEX_MIN && l->n_dead * 2 > l->n) {
            size_t m = 0;
            for (size_t i = 0; i < l->n; i++)
                if (!l->items[i].dead) l->items[m++] = l->items[i];
            l->n = m;
            l->n_dead = 0;
            l->summarized = 0;
            index_free(l->idx);
            l->idx = NULL; /* rebuilt when next needed */
        }
        return 1;
    }
    size_t m = 0; /* an unindexed list holds no tombstones: compact it */
    for (size_t i = 0; i < l->n; i++) {
        if (!l->items[i].dead) {
            if (m != i) l->items[m] = l->items[i];
            m++;
        } else if (m < l->summarized) {
            l->summarized = m;
        }
    }
    l->n = m;
    l->n_dead = 0;
    return 1;
}

static int record(gs_kb *kb, const access *acc, const gs_ap *ap, const gs_instr_draft *in)
{
    region *r = region_of(kb->tr, ap);
    if (!r) return 0;
    if (!acc->write && ap->space == GS_MEM_HBM && kb->indexed) return defer_read(r, acc);
    /* the eager path of a builder with the index off may follow lazy ones on a shared tracker */
    if (!materialize(kb, r)) return 0;
    const int local = ap->space != GS_MEM_HBM;
    /* every write prunes: a dense one what it covers, any other the earlier accesses of its own
     * pattern. Without the second an HBM region written again and again through one pattern
     * that is not a single run (a 128 x 64 tile stored each round of a loop) kept every write,
     * and each new write depended on all of them: quadratic in the rounds */
    if (acc->write && (!prune(kb, &r->reads, acc, ap, in) || !prune(kb, &r->writes, acc, ap, in)))
        return 0;
    if (!acc->write && local && in->engine != GS_ENG_DMA && !prune(kb, &r->reads, acc, ap, in))
        return 0;
    if (!acc->write && local && !prune_reads_before(kb, &r->reads, acc, ap)) return 0;
    return list_push(acc->write ? &r->writes : &r->reads, acc, ap);
}

static int cmp_access(const void *x, const void *y)
{
    const access *a = x, *b = y;
    return (a->instr > b->instr) - (a->instr < b->instr);
}

/* Append src's live accesses to dst, which is not indexed (its items are sorted after). */
static int list_append_all(access_list *dst, const access_list *src)
{
    if (src->n == 0) return 1;
    if (dst->n + src->n > dst->cap) {
        size_t nc = dst->n + src->n;
        access *n = gs_realloc(dst->items, nc * sizeof *n);
        if (!n) return 0;
        dst->items = n;
        dst->cap = nc;
    }
    if (!src->n_dead) {
        memcpy(dst->items + dst->n, src->items, src->n * sizeof *src->items);
        dst->n += src->n;
        return 1;
    }
    for (size_t i = 0; i < src->n; i++)
        if (!src->items[i].dead) dst->items[dst->n++] = src->items[i];
    return 1;
}

/*
 * A new pool may occupy bytes that released pools used, under new buffer ids. Each of its
 * buffers inherits the access history of every released buffer it overlaps (footprints are in
 * absolute bytes, so the overlap checks stay exact), so the first accesses to the new tiles wait
 * for the last accesses of the old ones exactly as they would in one buffer. Without this a
 * kernel that releases and re-creates pools (bmm: one matmul per batch) loses its WAR/WAW
 * dependencies and the model may run a load before the previous tile's last reader. Only the
 * released buffers that still hold a history are looked at (tracker.held), in id order as a scan
 * of every buffer would take them.
 */
static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

int gs_kb_inherit_history(gs_kb *kb, const gs_pool *pool)
{
    tracker *t = kb->tr;
    /* the released buffers (every one is older than the pool) in id order; those without a
     * history (passed on, or never used) leave the list for good: released, they get none */
    size_t m = 0;
    for (size_t i = 0; i < t->n_held; i++) {
        int32_t old = t->held[i];
        if ((size_t)old < t->n_buf && (t->buf[old].reads.n || t->buf[old].writes.n))
            t->held[m++] = old;
    }
    t->n_held = m;
    if (m > 1) qsort(t->held, m, sizeof *t->held, cmp_i32);
    for (unsigned b = 0; b < pool->bufs; b++) {
        int32_t nid = pool->first_buffer + (int32_t)b;
        const gs_buffer_info *nb = gs_program_buffer(kb->p, nid);
        int copied = 0;
        for (size_t hi = 0; hi < t->n_held; hi++) {
            int32_t old = t->held[hi];
            if (!t->released[old] || (size_t)old >= t->n_buf) continue;
            const gs_buffer_info *ob = gs_program_buffer(kb->p, old);
            if (ob->space != nb->space || ob->core != nb->core) continue;
            if (ob->offset >= nb->offset + nb->bytes || nb->offset >= ob->offset + ob->bytes)
                continue;
            if (!t->buf[old].reads.n && !t->buf[old].writes.n) continue;
            gs_ap probe;
            memset(&probe, 0, sizeof probe);
            probe.space = nb->space;
            probe.tensor = nid;
            region *nr = region_of(t, &probe); /* may move t->buf: index `old` again below */
            if (!nr || !list_append_all(&nr->reads, &t->buf[old].reads) ||
                !list_append_all(&nr->writes, &t->buf[old].writes))
                return 0;
            copied = 1;
            if (nb->offset <= ob->offset && ob->offset + ob->bytes <= nb->offset + nb->bytes &&
                nb->part_start <= ob->part_start &&
                ob->part_start + ob->part_count <= nb->part_start + nb->part_count) {
                /* the new buffer holds all of the old one's bytes: from now on its history is the
                 * new buffer's (a later buffer over those bytes overlaps the new one, and only
                 * once it is released), so it is passed on once, not again to every pool that
                 * reuses the bytes (bmm: one matmul per batch, quadratic in the batches) */
                region *o = &t->buf[old];
                o->reads.n = o->writes.n = 0;
                o->reads.n_dead = o->writes.n_dead = 0;
                o->reads.summarized = o->writes.summarized = 0;
                index_free(o->reads.idx);
                index_free(o->writes.idx);
                o->reads.idx = o->writes.idx = NULL;
            }
        }
        if (copied) {
            region *nr = &t->buf[nid];
            /* the items are reordered: an index (never made yet for a new buffer) would be stale */
            index_free(nr->reads.idx);
            index_free(nr->writes.idx);
            nr->reads.idx = nr->writes.idx = NULL;
            nr->reads.n_dead = nr->writes.n_dead = 0;
            if (nr->reads.n) /* qsort's base may not be NULL, even for none */
                qsort(nr->reads.items, nr->reads.n, sizeof *nr->reads.items, cmp_access);
            if (nr->writes.n)
                qsort(nr->writes.items, nr->writes.n, sizeof *nr->writes.items, cmp_access);
            nr->reads.summarized = nr->writes.summarized = 0; /* items moved */
        }
    }
    return 1;
}

/* ---- one instruction ---- */

int gs_kb_deps_append(gs_kb *kb, const gs_instr_draft *in, const gs_kb_operands *ops)
{
    deps_reset(kb);
    access accs[GS_INSTR_MAX_IN + GS_INSTR_MAX_OUT + 2];
    const gs_ap *aps[GS_INSTR_MAX_IN + GS_INSTR_MAX_OUT + 2];
    int na = 0;
    for (int k = 0; k < in->n_in; k++) {
        if (ops->in[k]->tensor < 0) continue;
        aps[na] = ops->in[k];
        footprint(aps[na], ops->fin[k], &accs[na]);
        accs[na].write = 0;
        accs[na].slot = (uint8_t)k;
        na++;
    }
    if (in->op == GS_OP_MATMUL_MX) {
        /* the moving scales: a read, held in the out[1] slot (gs/isa.h) */
        aps[na] = ops->out[1];
        footprint(aps[na], ops->fout[1], &accs[na]);
        accs[na].write = 0;
        accs[na].slot = GS_INSTR_MAX_IN + 1;
        na++;
    }
    if ((in->op == GS_OP_MATMUL || in->op == GS_OP_MATMUL_MX) && (in->flags & GS_F_ACCUMULATE)) {
        /* accumulation reads the PSUM it writes */
        aps[na] = ops->out[0];
        footprint(aps[na], ops->fout[0], &accs[na]);
        accs[na].write = 0;
        accs[na].slot = GS_INSTR_MAX_IN;
        na++;
    }
    for (int k = 0; k < in->n_out; k++) {
        aps[na] = ops->out[k];
        footprint(aps[na], ops->fout[k], &accs[na]);
        accs[na].write = 1;
        accs[na].slot = (uint8_t)(GS_INSTR_MAX_IN + k);
        na++;
    }
    for (int i = 0; i < na; i++)
        if (!collect(kb, &accs[i], aps[i])) return 0;
    int64_t idx =
        gs_program_append_interned(kb->p, in, ops->out, ops->in, kb->deps, (uint32_t)kb->n_deps);
    if (idx < 0) return 0;
    for (int i = 0; i < na; i++) {
        accs[i].instr = (uint32_t)idx;
        if (!record(kb, &accs[i], aps[i], in)) return 0;
    }
    return 1;
}
