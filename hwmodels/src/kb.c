/*
 * kb.c - the kernel builder: capabilities, SBUF/PSUM pools, operand validation and dependency
 * derivation (see gs/kernel.h).
 *
 * Dependencies: every region (an HBM tensor, or one SBUF/PSUM pool buffer) keeps a list of the
 * accesses made to it. A new instruction depends on earlier writes that overlap what it reads
 * (RAW), and on earlier reads and writes that overlap what it writes (WAR, WAW). Overlap is exact
 * (the contiguous runs of both access patterns are intersected) when the patterns have at most
 * RUN_LIMIT runs, and falls back to bounding boxes (conservative: an extra dependency, never a
 * missing one) beyond that. An access that is fully covered by a later dense write is dropped
 * from its list: anything overlapping it later also overlaps the write, which is ordered after it.
 *
 * Long HBM histories (an output written tile by tile, a tensor read thousands of times) get an
 * index: a grid over the tensor seen as rows of one pitch, each access filed under the cells its
 * rectangle covers (a superset of its elements), so a new access is compared only with the
 * accesses that share a cell. Candidates are then tested exactly as in a full scan and taken in
 * list order, so the dependencies are the same as scanning the whole list, at a cost per access
 * that does not grow with the program. Dropped accesses stay in an indexed list as tombstones
 * until they are half of it (then the list is compacted and the index rebuilt when next needed).
 */
#include "gs/kernel.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/family.h"
#include "program.h"

#define RUN_LIMIT 4096
#define INDEX_MIN 32       /* list length from which an HBM list is indexed */
#define INDEX_MAX_CELLS 64 /* an access covering more cells is kept in the index's wide list */
#define INDEX_GRID_CELLS (1u << 18) /* cells per index at most (cells grow to fit) */
#define POOL_ALIGN 64 /* bytes: SBUF pool buffers start on this boundary (assumption) */

/* ---- footprints ---- */

typedef struct run {
    int64_t lo, hi; /* [lo, hi) in bytes (SBUF/PSUM, within a partition) or elements (HBM) */
} run;

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

/* The grid of an indexed HBM list (see the file comment). Rows are `pitch` elements; a cell is
 * ch rows x cw elements. */
typedef struct list_index {
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

/* Reads and writes are kept apart so that a read scans only the writes: programs that read the
 * same input tiles over and over (a matmul's operands) would otherwise rescan every earlier
 * read on every new read, which is quadratic in the program's length. Both lists stay in
 * instruction order. */
typedef struct region {
    access_list reads, writes;
} region;

typedef struct tracker {
    region *hbm;
    size_t n_hbm;
    region *buf;
    size_t n_buf;
    /* per-buffer extent of the tile currently allocated in it */
    uint32_t *tile_parts;
    uint64_t *tile_bytes;
    uint8_t *released; /* the buffer's pool was released: its tiles may not be used again */
    size_t n_tile;
} tracker;

static void index_free(list_index *x)
{
    if (!x) return;
    for (int64_t i = 0; i < x->gr * x->gc; i++)
        gs_free(x->cells[i].pos);
    gs_free(x->cells);
    gs_free(x->wide.pos);
    gs_free(x);
}

static void tracker_free(void *v)
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
    }
    for (size_t i = 0; i < t->n_buf; i++) {
        gs_free(t->buf[i].reads.items);
        gs_free(t->buf[i].writes.items);
        gs_free(t->buf[i].reads.blocks);
        gs_free(t->buf[i].writes.blocks);
    }
    gs_free(t->hbm);
    gs_free(t->buf);
    gs_free(t->tile_parts);
    gs_free(t->tile_bytes);
    gs_free(t->released);
    gs_free(t);
}

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
    unsigned core;
    gs_error err;
    int failed;
    gs_pool **pools;
    size_t n_pools, cap_pools;
    uint64_t top[GS_MEMSPACE_COUNT];
    unsigned rr_queue;
    tracker *tr;
    uint32_t *deps;
    size_t n_deps, cap_deps;
    uint32_t *match[2]; /* collect(): matches in the write and read lists */
    size_t match_n[2], match_cap[2];
    int indexed;    /* index long HBM lists (0: scan them in full, the reference behaviour) */
    uint32_t *cand; /* an indexed scan's candidate positions */
    size_t cand_n, cand_cap;
};

/* GS_BASELINE_PATHS=1, =all or a value naming "build" in the environment: scan every history
 * in full, as before the index (`gensweep bench` measures the old build against the new one in
 * the same run; the tests compare the dependencies of both). Read for every builder: a test
 * switches it in-process. */
static int index_enabled(void)
{
    const char *b = getenv("GS_BASELINE_PATHS");
    return !(b && (!strcmp(b, "1") || !strcmp(b, "all") || strstr(b, "build")));
}

/* ---- errors ---- */

static gs_status kb_failv(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt,
                          va_list ap)
{
    if (kb->failed) return kb->err.code;
    kb->failed = 1;
    gs_error_setv(&kb->err, code, file, line, 0, fmt, ap);
    return code;
}

static gs_status kb_fail(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt,
                         ...) GS_PRINTF(5, 6);
static gs_status kb_fail(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt,
                         ...)
{
    va_list ap;
    va_start(ap, fmt);
    gs_status st = kb_failv(kb, file, line, code, fmt, ap);
    va_end(ap);
    return st;
}

gs_status gs_kb_fail_at(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt,
                        ...)
{
    if (!kb) return code;
    va_list ap;
    va_start(ap, fmt);
    gs_status st = kb_failv(kb, file, line, code, fmt, ap);
    va_end(ap);
    return st;
}

int gs_kb_ok(const gs_kb *kb)
{
    return kb && !kb->failed;
}

gs_status gs_kb_status(const gs_kb *kb)
{
    if (!kb) return GS_ERR_INVALID;
    return kb->failed ? kb->err.code : GS_OK;
}

const gs_error *gs_kb_error(const gs_kb *kb)
{
    return kb ? &kb->err : NULL;
}

const gs_caps *gs_kb_caps(const gs_kb *kb)
{
    return &kb->caps;
}

/* ---- lifecycle ---- */

static void fill_caps(gs_caps *c, const gs_config *cfg, unsigned core)
{
    memset(c, 0, sizeof *c);
    c->partitions = (unsigned)cfg->partitions.v;
    c->pe_rows = (unsigned)cfg->tensor.rows.v;
    c->pe_cols = (unsigned)cfg->tensor.cols.v;
    c->moving_free_max = (unsigned)cfg->tensor.moving_free_max.v;
    c->sbuf_partition_bytes = gs_config_sbuf_partition_bytes(cfg);
    c->psum_partition_bytes = gs_config_psum_partition_bytes(cfg);
    c->psum_bank_bytes = gs_config_psum_bank_bytes(cfg);
    c->psum_banks = (unsigned)cfg->psum_banks.v;
    c->max_free_sbuf = (unsigned)cfg->vector.max_free_sbuf.v;
    c->max_free_psum = (unsigned)cfg->vector.max_free_psum.v;
    c->cores = (unsigned)cfg->cores.v;
    c->core_id = core;
    c->dma_queues = (unsigned)cfg->dma.queues.v;
    c->dma_engines = (unsigned)cfg->dma.engines.v;
    c->dma_partitions_per_engine = gs_config_dma_partitions_per_engine(cfg);
    c->has_gpsimd = gs_config_has_engine(cfg, GS_ENG_GPSIMD);
    c->dma_transpose = cfg->dma.transpose;
    c->dtypes = cfg->dtypes;
    c->ops = cfg->ops;
    for (int t = 0; t < GS_DTYPE_COUNT; t++) {
        double r = cfg->tensor.rate[t].src ? cfg->tensor.rate[t].v : 0.0;
        /* MX dtypes are multiplied by matmul_mx only (caps.mx_dtypes) */
        if (r > 0 && (cfg->dtypes & (1u << t)) && !gs_dtype_is_mx((gs_dtype)t)) {
            c->matmul_rate[t] = r;
            c->matmul_dtypes |= 1u << t;
        }
    }
    /* the family's features (double row, MX) are told to kernels by its hook */
    const gs_family *f = gs_family_find(cfg->family);
    if (f && f->caps_fixup) f->caps_fixup(cfg, c);
}

gs_kb *gs_kb_create(gs_program *p, unsigned core)
{
    if (!p) return NULL;
    const gs_config *cfg = gs_program_config(p);
    if (!cfg) return NULL;
    gs_kb *kb = gs_calloc(1, sizeof *kb);
    if (!kb) return NULL;
    kb->p = p;
    kb->cfg = cfg;
    kb->core = core;
    kb->indexed = index_enabled();
    gs_error_clear(&kb->err);
    fill_caps(&kb->caps, cfg, core);
    kb->tr = gs_program_builder_state(p);
    if (!kb->tr) {
        kb->tr = gs_calloc(1, sizeof *kb->tr);
        if (!kb->tr) {
            gs_free(kb);
            return NULL;
        }
        gs_program_set_builder_state(p, kb->tr, tracker_free);
    }
    if (core >= kb->caps.cores)
        kb_fail(kb, NULL, 0, GS_ERR_INVALID, "core %u does not exist (target has %u cores)", core,
                kb->caps.cores);
    return kb;
}

void gs_kb_free(gs_kb *kb)
{
    if (!kb) return;
    for (size_t i = 0; i < kb->n_pools; i++) gs_free(kb->pools[i]);
    gs_free(kb->pools);
    gs_free(kb->deps);
    gs_free(kb->match[0]);
    gs_free(kb->match[1]);
    gs_free(kb->cand);
    gs_free(kb);
}

/* ---- pools and tiles ---- */

static uint64_t space_capacity(const gs_kb *kb, gs_memspace s)
{
    return s == GS_MEM_SBUF ? kb->caps.sbuf_partition_bytes : kb->caps.psum_partition_bytes;
}

static int inherit_history(gs_kb *kb, const gs_pool *pool);

static int tracker_note_buffer(tracker *t, int32_t id)
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
    for (size_t i = t->n_tile; i < n; i++) {
        t->tile_parts[i] = 0;
        t->tile_bytes[i] = 0;
        t->released[i] = 0;
    }
    t->n_tile = n;
    return 1;
}

gs_pool *gs_pool_create_at(gs_kb *kb, const char *file, int line, gs_memspace space,
                           const char *name, unsigned bufs, uint64_t bytes_per_partition)
{
    if (!kb || kb->failed) return NULL;
    name = name ? name : "pool";
    if (space != GS_MEM_SBUF && space != GS_MEM_PSUM) {
        kb_fail(kb, file, line, GS_ERR_INVALID, "pool '%s': pools live in sbuf or psum", name);
        return NULL;
    }
    if (bufs == 0 || bufs > 64 || bytes_per_partition == 0) {
        kb_fail(kb, file, line, GS_ERR_INVALID,
                "pool '%s': %u buffers of %" PRIu64 " bytes (need 1..64 buffers, > 0 bytes)",
                name, bufs, bytes_per_partition);
        return NULL;
    }
    uint64_t cap = space_capacity(kb, space);
    uint64_t bytes;
    if (space == GS_MEM_PSUM) {
        /* PSUM buffers are whole banks, so a matmul output never straddles two */
        uint64_t bank = kb->caps.psum_bank_bytes;
        bytes = (bytes_per_partition + bank - 1) / bank * bank;
    } else {
        bytes = (bytes_per_partition + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
    }
    uint64_t need = bytes * bufs;
    if (bytes_per_partition > cap || need > cap - kb->top[space]) {
        kb_fail(kb, file, line, GS_ERR_DOES_NOT_FIT,
                "does not fit: pool '%s' needs %u x %" PRIu64 " bytes per partition of %s, "
                "%" PRIu64 " of %" PRIu64 " free",
                name, bufs, bytes, gs_memspace_name(space), cap - kb->top[space], cap);
        return NULL;
    }
    if (kb->n_pools == kb->cap_pools) {
        size_t nc = kb->cap_pools ? kb->cap_pools * 2 : 8;
        gs_pool **np = gs_realloc(kb->pools, nc * sizeof(gs_pool *));
        if (!np) {
            kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
            return NULL;
        }
        kb->pools = np;
        kb->cap_pools = nc;
    }
    gs_pool *pool = gs_calloc(1, sizeof *pool);
    if (!pool) {
        kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    pool->kb = kb;
    pool->space = space;
    snprintf(pool->name, sizeof pool->name, "%s", name);
    pool->bufs = bufs;
    pool->bytes = bytes;
    pool->base = kb->top[space];
    pool->first_buffer = -1;
    for (unsigned b = 0; b < bufs; b++) {
        gs_buffer_info bi;
        memset(&bi, 0, sizeof bi);
        snprintf(bi.name, sizeof bi.name, "%s.%u", name, b);
        bi.space = space;
        bi.core = (uint16_t)kb->core;
        bi.part_start = 0;
        bi.part_count = kb->caps.partitions;
        bi.offset = pool->base + (uint64_t)b * bytes;
        bi.bytes = bytes;
        int32_t id = gs_program_add_buffer(kb->p, &bi);
        if (id < 0 || !tracker_note_buffer(kb->tr, id)) {
            gs_free(pool);
            kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
            return NULL;
        }
        if (b == 0) pool->first_buffer = id;
    }
    if (!inherit_history(kb, pool)) {
        gs_free(pool);
        kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    kb->top[space] += need;
    gs_program_note_usage(kb->p, space, kb->top[space]);
    pool->stack_index = kb->n_pools;
    kb->pools[kb->n_pools++] = pool;
    return pool;
}

void gs_pool_release(gs_kb *kb, gs_pool *pool)
{
    if (!kb || !pool) return;
    if (pool->stack_index >= kb->n_pools || kb->pools[pool->stack_index] != pool) return;
    size_t first = pool->stack_index; /* `pool` itself is freed in the loop */
    for (size_t i = kb->n_pools; i-- > first;) {
        gs_pool *q = kb->pools[i];
        if (q->base < kb->top[q->space]) kb->top[q->space] = q->base;
        for (unsigned b = 0; b < q->bufs; b++) kb->tr->released[q->first_buffer + (int32_t)b] = 1;
        gs_free(q);
    }
    kb->n_pools = first;
}

gs_tile gs_tile_alloc_at(gs_pool *pool, const char *file, int line, gs_dtype dtype,
                         unsigned parts, uint32_t free_elems)
{
    gs_tile t;
    memset(&t, 0, sizeof t);
    t.ap.tensor = -1;
    if (!pool) return t; /* the pool's creation already recorded the error */
    gs_kb *kb = pool->kb;
    if (kb->failed) return t;
    if ((int)dtype < 0 || dtype >= GS_DTYPE_COUNT) {
        kb_fail(kb, file, line, GS_ERR_INVALID, "tile in pool '%s': invalid dtype", pool->name);
        return t;
    }
    if (parts == 0 || parts > kb->caps.partitions || free_elems == 0) {
        kb_fail(kb, file, line, GS_ERR_INVALID,
                "tile in pool '%s': %u partitions x %u elements (need 1..%u partitions, > 0 "
                "elements)",
                pool->name, parts, free_elems, kb->caps.partitions);
        return t;
    }
    uint64_t bytes = (uint64_t)free_elems * gs_dtype_size(dtype);
    if (bytes > pool->bytes) {
        kb_fail(kb, file, line, GS_ERR_DOES_NOT_FIT,
                "does not fit: tile of %u x %s (%" PRIu64 " bytes per partition) exceeds pool "
                "'%s' buffers of %" PRIu64 " bytes",
                free_elems, gs_dtype_name(dtype), bytes, pool->name, pool->bytes);
        return t;
    }
    int32_t id = pool->first_buffer + (int32_t)pool->next;
    const gs_buffer_info *bi = gs_program_buffer(kb->p, id);
    pool->next = (pool->next + 1) % pool->bufs;
    kb->tr->tile_parts[id] = parts;
    kb->tr->tile_bytes[id] = bytes;
    t.ap.space = pool->space;
    t.ap.dtype = dtype;
    t.ap.tensor = id;
    t.ap.core = (uint16_t)kb->core;
    t.ap.ndim = 1;
    t.ap.part_start = 0;
    t.ap.part_count = parts;
    t.ap.offset = (int64_t)bi->offset;
    t.ap.shape[0] = free_elems;
    t.ap.stride[0] = 1;
    t.free_elems = free_elems;
    return t;
}

/* ---- views ---- */

/* Does a stride fit the 32-bit stride fields of gs_ap? */
static int fits_i32(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

gs_ap gs_tile_view(const gs_tile *t, unsigned p0, unsigned np, uint32_t f0, uint32_t nf)
{
    return gs_tile_view2(t, p0, np, f0, 1, nf, nf);
}

gs_ap gs_tile_view2(const gs_tile *t, unsigned p0, unsigned np, uint32_t f0, uint32_t rows,
                    uint32_t cols, uint32_t row_stride)
{
    gs_ap a = t->ap;
    uint64_t last = rows ? (uint64_t)f0 + (uint64_t)(rows - 1) * row_stride + cols : 0;
    if (t->ap.tensor < 0 || np == 0 || rows == 0 || cols == 0 ||
        (uint64_t)p0 + np > t->ap.part_count || last > t->free_elems)
        a.bad_view = GS_AP_BAD_RANGE;
    else if (rows > 1 && !fits_i32(row_stride))
        a.bad_view = GS_AP_BAD_STRIDE;
    a.part_start = t->ap.part_start + p0;
    a.part_count = np;
    a.offset = t->ap.offset + (int64_t)f0 * (int64_t)gs_dtype_size(t->ap.dtype);
    if (rows == 1) {
        a.ndim = 1;
        a.shape[0] = cols;
        a.stride[0] = 1;
    } else {
        a.ndim = 2;
        a.shape[0] = rows;
        a.stride[0] = (int32_t)row_stride;
        a.shape[1] = cols;
        a.stride[1] = 1;
    }
    return a;
}

static void tensor_2d(const gs_tensor *t, int64_t *rows, int64_t *cols)
{
    int64_t r = 1;
    for (int i = 0; i + 1 < t->ndim; i++) r *= t->shape[i];
    *rows = r;
    *cols = t->ndim >= 1 ? t->shape[t->ndim - 1] : 0;
}

static gs_ap hbm_base(const gs_tensor *t)
{
    gs_ap a;
    memset(&a, 0, sizeof a);
    a.space = GS_MEM_HBM;
    a.dtype = t->dtype;
    a.tensor = t->id;
    a.ndim = 1;
    return a;
}

gs_ap gs_hbm_rows(const gs_tensor *t, int64_t r0, unsigned nr, int64_t c0, uint32_t nc)
{
    int64_t R, C;
    tensor_2d(t, &R, &C);
    gs_ap a = hbm_base(t);
    if (r0 < 0 || c0 < 0 || nr == 0 || nc == 0 || r0 + nr > R || c0 + nc > C)
        a.bad_view = GS_AP_BAD_RANGE;
    else if (nr > 1 && !fits_i32(C))
        a.bad_view = GS_AP_BAD_STRIDE;
    a.part_count = nr;
    a.part_stride = (int32_t)C;
    a.offset = r0 * C + c0;
    a.shape[0] = nc;
    a.stride[0] = 1;
    return a;
}

gs_ap gs_hbm_cols(const gs_tensor *t, int64_t r0, uint32_t nr, int64_t c0, unsigned nc)
{
    int64_t R, C;
    tensor_2d(t, &R, &C);
    gs_ap a = hbm_base(t);
    if (r0 < 0 || c0 < 0 || nr == 0 || nc == 0 || r0 + nr > R || c0 + nc > C)
        a.bad_view = GS_AP_BAD_RANGE;
    else if (nr > 1 && !fits_i32(C))
        a.bad_view = GS_AP_BAD_STRIDE;
    a.part_count = nc;
    a.part_stride = 1;
    a.offset = r0 * C + c0;
    a.shape[0] = nr;
    a.stride[0] = (int32_t)C;
    return a;
}

gs_ap gs_hbm_ap(const gs_tensor *t, int64_t offset, unsigned part_count, int64_t part_stride,
                int ndim, const uint32_t *shape, const int64_t *stride)
{
    gs_ap a = hbm_base(t);
    a.offset = offset;
    a.part_count = part_count;
    a.part_stride = (int32_t)part_stride;
    if (ndim < 1 || ndim > GS_AP_MAX_DIMS || !shape || !stride) {
        a.bad_view = GS_AP_BAD_RANGE;
        return a;
    }
    if (!fits_i32(part_stride)) a.bad_view = GS_AP_BAD_STRIDE;
    a.ndim = (uint8_t)ndim;
    for (int k = 0; k < ndim; k++) {
        a.shape[k] = shape[k];
        a.stride[k] = (int32_t)stride[k];
        if (!fits_i32(stride[k])) a.bad_view = GS_AP_BAD_STRIDE;
    }
    return a;
}

/* ---- footprint geometry ---- */

/* Min and max (inclusive) of sum(i_k * stride_k) over the free dims (and, for HBM, the
 * partition dim), in elements. */
static void ap_extent(const gs_ap *a, int64_t *mn, int64_t *mx)
{
    int64_t lo = 0, hi = 0;
    for (int k = 0; k < a->ndim; k++) {
        int64_t span = (int64_t)(a->shape[k] - 1) * a->stride[k];
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    if (a->space == GS_MEM_HBM) {
        int64_t span = (int64_t)(a->part_count - 1) * a->part_stride;
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    *mn = lo;
    *mx = hi;
}

/* Bounding box in region units: bytes within a partition (SBUF/PSUM) or elements (HBM). */
static void ap_bbox(const gs_ap *a, int64_t *lo, int64_t *hi)
{
    int64_t mn, mx;
    ap_extent(a, &mn, &mx);
    if (a->space == GS_MEM_HBM) {
        *lo = a->offset + mn;
        *hi = a->offset + mx + 1;
    } else {
        int64_t es = (int64_t)gs_dtype_size(a->dtype);
        *lo = a->offset + mn * es;
        *hi = a->offset + mx * es + es;
    }
}

static int cmp_run(const void *x, const void *y)
{
    const run *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Enumerate the contiguous runs of a pattern (sorted, merged). Returns the count, or -1 if it
 * would exceed `limit`. */
static long ap_runs(const gs_ap *a, run *out, long limit)
{
    /* dims as (shape, stride) including HBM's partition dim as the outermost */
    uint32_t shape[GS_AP_MAX_DIMS + 1];
    int64_t stride[GS_AP_MAX_DIMS + 1];
    int nd = 0;
    if (a->space == GS_MEM_HBM) {
        shape[nd] = a->part_count;
        stride[nd++] = a->part_stride;
    }
    for (int k = 0; k < a->ndim; k++) {
        shape[nd] = a->shape[k];
        stride[nd++] = a->stride[k];
    }
    int64_t unit = a->space == GS_MEM_HBM ? 1 : (int64_t)gs_dtype_size(a->dtype);
    int64_t base = a->offset;
    /* the innermost dim is one run if its stride is 1 */
    int64_t inner_len = 1;
    int inner_dims = nd;
    if (nd > 0 && stride[nd - 1] == 1) {
        inner_len = shape[nd - 1];
        inner_dims = nd - 1;
    }
    long count = 1;
    for (int k = 0; k < inner_dims; k++) {
        if (count > limit / (long)GS_MAX(shape[k], 1u)) return -1;
        count *= (long)shape[k];
    }
    if (count > limit) return -1;
    uint32_t idx[GS_AP_MAX_DIMS + 1] = {0};
    for (long r = 0; r < count; r++) {
        int64_t off = 0;
        for (int k = 0; k < inner_dims; k++) off += (int64_t)idx[k] * stride[k];
        if (a->space == GS_MEM_HBM) {
            out[r].lo = base + off;
            out[r].hi = base + off + inner_len;
        } else {
            out[r].lo = base + off * unit;
            out[r].hi = base + (off + inner_len) * unit;
        }
        for (int k = inner_dims - 1; k >= 0; k--) {
            if (++idx[k] < shape[k]) break;
            idx[k] = 0;
        }
    }
    /* row-major patterns with increasing strides enumerate their runs in order already */
    int sorted = 1;
    for (long r = 1; r < count && sorted; r++)
        sorted = out[r - 1].lo <= out[r].lo;
    if (!sorted) qsort(out, (size_t)count, sizeof *out, cmp_run);
    long m = 0;
    for (long r = 0; r < count; r++) {
        if (m > 0 && out[r].lo <= out[m - 1].hi) {
            if (out[r].hi > out[m - 1].hi) out[m - 1].hi = out[r].hi;
        } else {
            out[m++] = out[r];
        }
    }
    return m;
}

static run g_runs_a[RUN_LIMIT], g_runs_b[RUN_LIMIT];

/* Exact overlap when both run lists are small, else bounding boxes (already known to overlap). */
static int ap_overlap_exact(const gs_ap *a, const gs_ap *b)
{
    long na = ap_runs(a, g_runs_a, RUN_LIMIT);
    if (na < 0) return 1;
    long nb = ap_runs(b, g_runs_b, RUN_LIMIT);
    if (nb < 0) return 1;
    long i = 0, j = 0;
    while (i < na && j < nb) {
        if (g_runs_a[i].hi <= g_runs_b[j].lo)
            i++;
        else if (g_runs_b[j].hi <= g_runs_a[i].lo)
            j++;
        else
            return 1;
    }
    return 0;
}

static int is_dense(const gs_ap *a)
{
    long n = ap_runs(a, g_runs_a, 2);
    return n == 1;
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

static void footprint(const gs_ap *a, access *acc)
{
    if (a->space == GS_MEM_HBM) {
        acc->p0 = 0;
        acc->p1 = 1;
    } else {
        acc->p0 = a->part_start;
        acc->p1 = a->part_start + a->part_count;
    }
    ap_bbox(a, &acc->lo, &acc->hi);
    acc->dense = (uint8_t)is_dense(a);
}

static const gs_ap *access_ap(const gs_kb *kb, const access *a)
{
    const gs_instr *in = gs_program_instr(kb->p, a->instr);
    return a->slot < GS_INSTR_MAX_IN ? &in->in[a->slot] : &in->out[a->slot - GS_INSTR_MAX_IN];
}

/* A pattern as `rows` runs of `n` units, the first at `base`, one every `pitch` units (units:
 * elements in HBM, bytes in SBUF/PSUM; partitions of SBUF/PSUM are compared separately). */
typedef struct row_pattern {
    int64_t base, pitch, n;
    int64_t rows;
} row_pattern;

/* Describe the common shapes (one contiguous run per HBM partition-row, or up to two free dims
 * with a contiguous inner one) as row patterns; 0 for anything else. */
static int as_rows(const gs_ap *a, row_pattern *r)
{
    const int hbm = a->space == GS_MEM_HBM;
    const int64_t unit = hbm ? 1 : (int64_t)gs_dtype_size(a->dtype);
    const int nd = a->ndim;
    if (nd < 1 || nd > 2) return 0;
    const uint32_t inner = a->shape[nd - 1];
    if (inner > 1 && a->stride[nd - 1] != 1) return 0;
    r->base = a->offset;
    r->n = (int64_t)inner * unit;
    if (nd == 1) {
        r->rows = hbm ? a->part_count : 1;
        r->pitch = hbm ? a->part_stride : 0;
    } else {
        if (hbm && a->part_count > 1) return 0;
        r->rows = a->shape[0];
        r->pitch = a->stride[0] * unit;
    }
    if (r->rows > 1 && r->pitch <= 0) return 0;
    return 1;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Exact overlap of two row patterns with the same pitch, in O(1): runs of row i of x and row j
 * of y intersect iff d - n_x < k * pitch < d + n_y with d = base_y - base_x and k = i - j.
 * Returns -1 when the pitches differ (not decided here). */
static int rows_overlap(const row_pattern *x, const row_pattern *y)
{
    int64_t pitch = x->rows > 1 ? x->pitch : y->pitch;
    if (x->rows > 1 && y->rows > 1 && x->pitch != y->pitch) return -1;
    const int64_t d = y->base - x->base;
    const int64_t kmin = -(y->rows - 1), kmax = x->rows - 1;
    if (kmin == 0 && kmax == 0) return d - x->n < 0 && 0 < d + y->n;
    int64_t k = floor_div(d - x->n, pitch) + 1; /* smallest k with k * pitch > d - n_x */
    if (k < kmin) k = kmin;
    return k <= kmax && k * pitch < d + y->n;
}

static int acc_overlap(const gs_kb *kb, const access *x, const gs_ap *xap, const access *y)
{
    if (x->p1 <= y->p0 || y->p1 <= x->p0) return 0;
    if (x->hi <= y->lo || y->hi <= x->lo) return 0;
    if (x->dense && y->dense) return 1;
    const gs_ap *yap = access_ap(kb, y);
    row_pattern rx, ry;
    if (as_rows(xap, &rx) && as_rows(yap, &ry)) {
        int o = rows_overlap(&rx, &ry);
        if (o >= 0) return o;
    }
    return ap_overlap_exact(xap, yap);
}

static int add_dep(gs_kb *kb, uint32_t d)
{
    for (size_t i = 0; i < kb->n_deps; i++)
        if (kb->deps[i] == d) return 1;
    if (kb->n_deps == kb->cap_deps) {
        size_t nc = kb->cap_deps ? kb->cap_deps * 2 : 32;
        uint32_t *n = gs_realloc(kb->deps, nc * sizeof *n);
        if (!n) return 0;
        kb->deps = n;
        kb->cap_deps = nc;
    }
    kb->deps[kb->n_deps++] = d;
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

static int push_match(gs_kb *kb, int which, uint32_t instr)
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
    row_pattern r;
    if (!as_rows(ap, &r) || (r.rows > 1 && r.pitch != pitch) || r.pitch < 0) {
        r.base = acc->lo;
        r.n = acc->hi - acc->lo;
        r.rows = 1;
    }
    int64_t q = floor_div(r.base, pitch), col = r.base - q * pitch;
    int64_t last = r.base + (r.rows - 1) * pitch + r.n - 1;
    *r0 = q;
    *r1 = floor_div(last, pitch);
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
    hbm_rect(ap, acc, x->pitch, &r0, &r1, &c0, &c1);
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

/* Build the index of HBM list l (tensor `tensor`), its geometry taken from the tensor's rows and
 * the first row-pattern access of the list (cells of about one tile). */
static int index_build(gs_kb *kb, access_list *l, int32_t tensor)
{
    const gs_tensor_info *ti = gs_program_tensor(kb->p, tensor);
    if (!ti || ti->elems == 0) return 1; /* leave it unindexed */
    list_index *x = gs_calloc(1, sizeof *x);
    if (!x) return 0;
    x->pitch = ti->ndim > 0 ? ti->shape[ti->ndim - 1] : (int64_t)ti->elems;
    if (x->pitch <= 0) x->pitch = (int64_t)ti->elems;
    x->rows = ((int64_t)ti->elems + x->pitch - 1) / x->pitch;
    x->ch = 1;
    x->cw = x->pitch;
    for (size_t i = 0; i < l->n; i++) {
        row_pattern r;
        if (l->items[i].dead || !as_rows(access_ap(kb, &l->items[i]), &r)) continue;
        if (r.rows > 1 && r.pitch != x->pitch) continue;
        x->ch = GS_MAX(r.rows, 1);
        x->cw = GS_MIN(GS_MAX(r.n, 1), x->pitch);
        break;
    }
    for (;;) {
        x->gr = (x->rows + x->ch - 1) / x->ch;
        x->gc = (x->pitch + x->cw - 1) / x->cw;
        if (x->gr * x->gc <= (int64_t)INDEX_GRID_CELLS) break;
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

/* The live positions of indexed list l that may overlap `acc` (a superset of those that do),
 * increasing and without repeats, into kb->cand. */
static int index_candidates(gs_kb *kb, const access_list *l, const access *acc, const gs_ap *ap)
{
    const list_index *x = l->idx;
    kb->cand_n = 0;
    int64_t g0, g1, h0, h1;
    if (!index_cells(x, ap, acc, &g0, &g1, &h0, &h1)) {
        /* a wide access: every live item is a candidate */
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
    int one_run = x->wide.n == 0 && g0 == g1 && h0 == h1; /* a cell's positions are increasing */
    if (!one_run) qsort(kb->cand, kb->cand_n, sizeof *kb->cand, cmp_u32);
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
    if (!kb->indexed || ap->space != GS_MEM_HBM || l->n - l->n_dead < INDEX_MIN) return 0;
    if (!index_build(kb, l, ap->tensor)) return -1;
    return l->idx != NULL;
}

/* Matches of acc in list l, in list (= instruction) order, into kb->match[which]. */
static int scan(gs_kb *kb, int which, access_list *l, const access *acc, const gs_ap *ap)
{
    kb->match_n[which] = 0;
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
        if (acc->p1 <= s->p0 || s->p1 <= acc->p0 || acc->hi <= s->lo || s->hi <= acc->lo)
            continue;
        size_t end = GS_MIN(l->n, (b + 1) * ACCESS_BLOCK);
        for (size_t k = b * ACCESS_BLOCK; k < end; k++)
            if (acc_overlap(kb, acc, ap, &l->items[k]) && !push_match(kb, which, l->items[k].instr))
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
    if (acc->write && !scan(kb, 1, &r->reads, acc, ap)) return 0;
    const uint32_t *w = kb->match[0], *rd = kb->match[1];
    size_t i = 0, j = 0, nw = kb->match_n[0], nr = kb->match_n[1];
    while (i < nw || j < nr) {
        uint32_t d = (j >= nr || (i < nw && w[i] <= rd[j])) ? w[i++] : rd[j++];
        if (!add_dep(kb, d)) return 0;
    }
    return 1;
}

static int covers(const access *w, const access *old)
{
    return w->dense && w->p0 <= old->p0 && w->p1 >= old->p1 && w->lo <= old->lo &&
           w->hi >= old->hi;
}

/* Drop the accesses a dense write covers (see the file comment). */
static int prune(gs_kb *kb, access_list *l, const access *w, const gs_ap *ap)
{
    int ix = use_index(kb, l, ap);
    if (ix < 0) return 0;
    if (ix) {
        /* a covered access lies inside w, so it is among w's candidates */
        if (!index_candidates(kb, l, w, ap)) return 0;
        for (size_t i = 0; i < kb->cand_n; i++) {
            access *it = &l->items[kb->cand[i]];
            if (covers(w, it)) {
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
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!covers(w, &l->items[i]))
            l->items[m++] = l->items[i];
        else if (m < l->summarized)
            l->summarized = m; /* the items from here on move down: summarize them again */
    }
    l->n = m;
    return 1;
}

static int record(gs_kb *kb, const access *acc, const gs_ap *ap)
{
    region *r = region_of(kb->tr, ap);
    if (!r) return 0;
    if (acc->write && acc->dense &&
        (!prune(kb, &r->reads, acc, ap) || !prune(kb, &r->writes, acc, ap)))
        return 0;
    access_list *l = acc->write ? &r->writes : &r->reads;
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

static int cmp_access(const void *x, const void *y)
{
    const access *a = x, *b = y;
    return (a->instr > b->instr) - (a->instr < b->instr);
}

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
    memcpy(dst->items + dst->n, src->items, src->n * sizeof *src->items);
    dst->n += src->n;
    return 1;
}

/*
 * A new pool may occupy bytes that released pools used, under new buffer ids. Each of its
 * buffers inherits the access history of every released buffer it overlaps (footprints are in
 * absolute bytes, so the overlap checks stay exact), so the first accesses to the new tiles wait
 * for the last accesses of the old ones exactly as they would in one buffer. Without this a
 * kernel that releases and re-creates pools (bmm: one matmul per batch) loses its WAR/WAW
 * dependencies and the model may run a load before the previous tile's last reader.
 */
static int inherit_history(gs_kb *kb, const gs_pool *pool)
{
    tracker *t = kb->tr;
    for (unsigned b = 0; b < pool->bufs; b++) {
        int32_t nid = pool->first_buffer + (int32_t)b;
        const gs_buffer_info *nb = gs_program_buffer(kb->p, nid);
        int copied = 0;
        for (int32_t old = 0; old < pool->first_buffer; old++) {
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
        }
        if (copied) {
            region *nr = &t->buf[nid];
            qsort(nr->reads.items, nr->reads.n, sizeof *nr->reads.items, cmp_access);
            qsort(nr->writes.items, nr->writes.n, sizeof *nr->writes.items, cmp_access);
            nr->reads.summarized = nr->writes.summarized = 0; /* items moved */
        }
    }
    return 1;
}

/* ---- operand validation ---- */

/* Operand names for messages: a table rather than snprintf, because emit() names every operand
 * of every instruction up front and huge programs have hundreds of thousands of them. */
static const char *operand_name(int is_out, int k)
{
    static const char *const outs[GS_INSTR_MAX_OUT] = {"out0", "out1"};
    static const char *const ins[GS_INSTR_MAX_IN] = {"in0", "in1", "in2"};
    if (k < 0) return "?";
    if (is_out) return k < GS_INSTR_MAX_OUT ? outs[k] : "out?";
    return k < GS_INSTR_MAX_IN ? ins[k] : "in?";
}

static gs_status check_ap(gs_kb *kb, const char *file, int line, const gs_instr *in,
                          const gs_ap *a, const char *what)
{
    const char *op = gs_opcode_name(in->op);
    if (a->bad_view == GS_AP_BAD_STRIDE)
        return kb_fail(kb, file, line, GS_ERR_INVALID,
                       "%s %s: a stride does not fit in 32 bits (access patterns hold strides as "
                       "int32_t: at most %" PRId32 " elements)",
                       op, what, INT32_MAX);
    if (a->bad_view)
        return kb_fail(kb, file, line, GS_ERR_BOUNDS,
                       "%s %s: view outside its tile or tensor (requested range exceeds it)", op,
                       what);
    if (!gs_ap_is_valid(a))
        return kb_fail(kb, file, line, GS_ERR_INVALID,
                       "%s %s: invalid access pattern (unallocated tile, zero size or bad rank)",
                       op, what);
    if (!(kb->cfg->dtypes & (1u << a->dtype)))
        return kb_fail(kb, file, line, GS_ERR_UNSUPPORTED, "unsupported: %s %s dtype %s on this target",
                       op, what, gs_dtype_name(a->dtype));
    int64_t lo, hi;
    ap_bbox(a, &lo, &hi);
    if (a->space == GS_MEM_HBM) {
        const gs_tensor_info *ti = gs_program_tensor(kb->p, a->tensor);
        if (!ti)
            return kb_fail(kb, file, line, GS_ERR_INVALID, "%s %s: no HBM tensor %d", op, what,
                           (int)a->tensor);
        if (ti->dtype != a->dtype)
            return kb_fail(kb, file, line, GS_ERR_INVALID,
                           "%s %s: tensor '%s' is %s, access pattern says %s", op, what, ti->name,
                           gs_dtype_name(ti->dtype), gs_dtype_name(a->dtype));
        if (lo < 0 || hi > (int64_t)ti->elems)
            return kb_fail(kb, file, line, GS_ERR_BOUNDS,
                           "%s %s: elements [%" PRId64 ", %" PRId64 ") outside tensor '%s' of %" PRIu64
                           " elements",
                           op, what, lo, hi, ti->name, ti->elems);
        return GS_OK;
    }
    const gs_buffer_info *bi = gs_program_buffer(kb->p, a->tensor);
    if (!bi || bi->space != a->space || bi->core != a->core)
        return kb_fail(kb, file, line, GS_ERR_INVALID, "%s %s: not an allocated %s tile of core %u",
                       op, what, gs_memspace_name(a->space), kb->core);
    if (a->core != kb->core)
        return kb_fail(kb, file, line, GS_ERR_INVALID, "%s %s: tile of core %u used on core %u", op,
                       what, a->core, kb->core);
    if (kb->tr->released[a->tensor])
        return kb_fail(kb, file, line, GS_ERR_INVALID,
                       "%s %s: tile of buffer '%s' used after its pool was released", op, what,
                       bi->name);
    uint32_t tparts = kb->tr->tile_parts[a->tensor];
    uint64_t tbytes = kb->tr->tile_bytes[a->tensor];
    if ((uint64_t)a->part_start + a->part_count > tparts)
        return kb_fail(kb, file, line, GS_ERR_BOUNDS,
                       "%s %s: partitions [%u, %u) outside its tile's %u partitions (buffer '%s')",
                       op, what, a->part_start, a->part_start + a->part_count, tparts, bi->name);
    if (lo < (int64_t)bi->offset || hi > (int64_t)(bi->offset + tbytes))
        return kb_fail(kb, file, line, GS_ERR_BOUNDS,
                       "%s %s: bytes [%" PRId64 ", %" PRId64 ") of each partition outside its tile "
                       "(%" PRIu64 " bytes in buffer '%s')",
                       op, what, lo - (int64_t)bi->offset, hi - (int64_t)bi->offset, tbytes,
                       bi->name);
    return GS_OK;
}

/* Compute engines address a tile from partition 0, 32, 64 or 96 depending on its span. */
static gs_status check_alignment(gs_kb *kb, const char *file, int line, const gs_instr *in,
                                 const gs_ap *a, const char *what)
{
    if (a->space == GS_MEM_HBM) return GS_OK;
    unsigned q = kb->caps.partitions / 4;
    if (q == 0) return GS_OK;
    unsigned span = a->part_count;
    unsigned align = span > 2 * q ? kb->caps.partitions : span > q ? 2 * q : q;
    if (a->part_start % align != 0 || (a->part_start % kb->caps.partitions) + span >
                                          kb->caps.partitions)
        return kb_fail(kb, file, line, GS_ERR_INVALID,
                       "%s %s: start partition %u not allowed for %u partitions (must be a "
                       "multiple of %u)",
                       gs_opcode_name(in->op), what, a->part_start, span, align);
    return GS_OK;
}

static gs_status check_free_limit(gs_kb *kb, const char *file, int line, const gs_instr *in)
{
    int psum = 0;
    uint64_t n = 0;
    for (int k = 0; k < in->n_in; k++) {
        psum |= in->in[k].space == GS_MEM_PSUM;
        n = GS_MAX(n, gs_ap_free_elems(&in->in[k]));
    }
    for (int k = 0; k < in->n_out; k++) {
        psum |= in->out[k].space == GS_MEM_PSUM;
        n = GS_MAX(n, gs_ap_free_elems(&in->out[k]));
    }
    uint64_t lim = psum ? kb->caps.max_free_psum : kb->caps.max_free_sbuf;
    if (lim && n > lim)
        return kb_fail(kb, file, line, GS_ERR_INVALID,
                       "%s: free size %" PRIu64 " exceeds the engine limit of %" PRIu64
                       " elements %s",
                       gs_opcode_name(in->op), n, lim, psum ? "from PSUM" : "from SBUF");
    return GS_OK;
}

/* Validate generic properties, derive dependencies and append. */
static gs_status emit(gs_kb *kb, const char *file, int line, gs_instr *in)
{
    if (kb->failed) return kb->err.code;
    in->core = (uint16_t)kb->core;
    in->file = file;
    in->line = line;
    const char *op = gs_opcode_name(in->op);
    if (!(kb->cfg->ops & (1ull << in->op)))
        return kb_fail(kb, file, line, GS_ERR_UNSUPPORTED, "unsupported: %s on this target", op);
    if (!gs_config_has_engine(kb->cfg, in->engine))
        return kb_fail(kb, file, line, GS_ERR_UNSUPPORTED,
                       "unsupported: %s on the %s engine (not present on this target)", op,
                       gs_engine_name(in->engine));
    for (int k = 0; k < in->n_out; k++) {
        if (check_ap(kb, file, line, in, &in->out[k], operand_name(1, k)))
            return kb->err.code;
        if (in->engine != GS_ENG_DMA &&
            check_alignment(kb, file, line, in, &in->out[k], operand_name(1, k)))
            return kb->err.code;
    }
    for (int k = 0; k < in->n_in; k++) {
        if (in->in[k].tensor < 0) continue;
        if (check_ap(kb, file, line, in, &in->in[k], operand_name(0, k)))
            return kb->err.code;
        if (in->engine != GS_ENG_DMA && in->op != GS_OP_GATHER &&
            check_alignment(kb, file, line, in, &in->in[k], operand_name(0, k)))
            return kb->err.code;
    }
    if (in->engine != GS_ENG_DMA && in->engine != GS_ENG_TENSOR && in->op != GS_OP_GATHER &&
        check_free_limit(kb, file, line, in))
        return kb->err.code;

    kb->n_deps = 0;
    access accs[GS_INSTR_MAX_IN + GS_INSTR_MAX_OUT + 2];
    const gs_ap *aps[GS_INSTR_MAX_IN + GS_INSTR_MAX_OUT + 2];
    int na = 0;
    for (int k = 0; k < in->n_in; k++) {
        if (in->in[k].tensor < 0) continue;
        aps[na] = &in->in[k];
        footprint(aps[na], &accs[na]);
        accs[na].write = 0;
        accs[na].slot = (uint8_t)k;
        na++;
    }
    if (in->op == GS_OP_MATMUL_MX) {
        /* the moving scales: a read, held in the out[1] slot (gs/isa.h) */
        aps[na] = GS_MX_MOVING_SCALE(in);
        footprint(aps[na], &accs[na]);
        accs[na].write = 0;
        accs[na].slot = GS_INSTR_MAX_IN + 1;
        na++;
    }
    if ((in->op == GS_OP_MATMUL || in->op == GS_OP_MATMUL_MX) && (in->flags & GS_F_ACCUMULATE)) {
        /* accumulation reads the PSUM it writes */
        aps[na] = &in->out[0];
        footprint(aps[na], &accs[na]);
        accs[na].write = 0;
        accs[na].slot = GS_INSTR_MAX_IN;
        na++;
    }
    for (int k = 0; k < in->n_out; k++) {
        aps[na] = &in->out[k];
        footprint(aps[na], &accs[na]);
        accs[na].write = 1;
        accs[na].slot = (uint8_t)(GS_INSTR_MAX_IN + k);
        na++;
    }
    for (int i = 0; i < na; i++)
        if (!collect(kb, &accs[i], aps[i]))
            return kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
    int64_t idx = gs_program_append(kb->p, in, kb->deps, (uint32_t)kb->n_deps);
    if (idx < 0) return kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < na; i++) {
        accs[i].instr = (uint32_t)idx;
        if (!record(kb, &accs[i], aps[i]))
            return kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
    }
    return GS_OK;
}

/* The common one-output, one-input form. */
static gs_status emit_out_in(gs_kb *kb, const char *file, int line, gs_instr *in, gs_ap out,
                             gs_ap src)
{
    in->out[0] = out;
    in->in[0] = src;
    in->n_out = 1;
    in->n_in = 1;
    return emit(kb, file, line, in);
}

static void instr_init(gs_instr *in, gs_opcode op, gs_engine eng)
{
    memset(in, 0, sizeof *in);
    in->op = op;
    in->engine = eng;
    for (int k = 0; k < GS_INSTR_MAX_IN; k++) in->in[k].tensor = -1;
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++) in->out[k].tensor = -1;
}

static int same_shape(const gs_ap *a, const gs_ap *b)
{
    return a->part_count == b->part_count && gs_ap_free_elems(a) == gs_ap_free_elems(b);
}

#define REQUIRE(cond, code, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) return kb_fail(kb, file, line, (code), __VA_ARGS__);                          \
    } while (0)

static gs_status pick_queue(gs_kb *kb, const char *file, int line, int queue, uint16_t *out)
{
    unsigned nq = kb->caps.dma_queues;
    if (queue < 0) {
        *out = (uint16_t)(kb->rr_queue++ % nq);
        return GS_OK;
    }
    REQUIRE((unsigned)queue < nq, GS_ERR_INVALID, "DMA queue %d does not exist (target has %u)",
            queue, nq);
    *out = (uint16_t)queue;
    return GS_OK;
}

static int is_onchip(const gs_ap *a)
{
    return a->space == GS_MEM_SBUF || a->space == GS_MEM_PSUM;
}

gs_status gs_dma_copy_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src, int queue)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_DMA_COPY, GS_ENG_DMA);
    REQUIRE(dst.space != GS_MEM_PSUM && src.space != GS_MEM_PSUM, GS_ERR_INVALID,
            "dma_copy: DMA cannot access PSUM (evacuate with tensor_copy)");
    REQUIRE(dst.space == GS_MEM_SBUF || src.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "dma_copy: one side must be SBUF (HBM<->SBUF or SBUF<->SBUF)");
    REQUIRE(dst.dtype == src.dtype, GS_ERR_INVALID,
            "dma_copy: dtypes differ (%s <- %s); DMA does not convert", gs_dtype_name(dst.dtype),
            gs_dtype_name(src.dtype));
    REQUIRE(same_shape(&dst, &src), GS_ERR_INVALID,
            "dma_copy: shapes differ (%u x %" PRIu64 " <- %u x %" PRIu64 ")", dst.part_count,
            gs_ap_free_elems(&dst), src.part_count, gs_ap_free_elems(&src));
    if (pick_queue(kb, file, line, queue, &in.queue)) return kb->err.code;
    in.out[0] = dst;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 1;
    return emit(kb, file, line, &in);
}

gs_status gs_dma_transpose_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src,
                              int queue)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_DMA_TRANSPOSE, GS_ENG_DMA);
    REQUIRE(kb->caps.dma_transpose, GS_ERR_UNSUPPORTED,
            "unsupported: dma_transpose on this target");
    REQUIRE(dst.space == GS_MEM_SBUF, GS_ERR_INVALID, "dma_transpose: destination must be SBUF");
    REQUIRE(src.space != GS_MEM_PSUM, GS_ERR_INVALID, "dma_transpose: DMA cannot read PSUM");
    REQUIRE(dst.dtype == src.dtype && gs_dtype_size(src.dtype) == 2, GS_ERR_INVALID,
            "dma_transpose: needs equal 2-byte dtypes (%s <- %s)", gs_dtype_name(dst.dtype),
            gs_dtype_name(src.dtype));
    REQUIRE(dst.part_count == gs_ap_free_elems(&src) && gs_ap_free_elems(&dst) == src.part_count,
            GS_ERR_INVALID, "dma_transpose: output must be [%" PRIu64 " x %u], is [%u x %" PRIu64 "]",
            gs_ap_free_elems(&src), src.part_count, dst.part_count, gs_ap_free_elems(&dst));
    if (pick_queue(kb, file, line, queue, &in.queue)) return kb->err.code;
    in.out[0] = dst;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 1;
    return emit(kb, file, line, &in);
}

static int psum_in_one_bank(const gs_kb *kb, const gs_ap *a)
{
    int64_t lo, hi;
    ap_bbox(a, &lo, &hi);
    int64_t bank = (int64_t)kb->caps.psum_bank_bytes;
    return bank > 0 && lo / bank == (hi - 1) / bank;
}

gs_status gs_matmul_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                       gs_ap moving, int accumulate)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_MATMUL, GS_ENG_TENSOR);
    const gs_caps *c = &kb->caps;
    REQUIRE(psum.space == GS_MEM_PSUM &&
                (psum.dtype == GS_FP32 || (psum.dtype == GS_BF16 && c->matmul_bf16_psum)),
            GS_ERR_INVALID, "matmul: output must be an fp32 PSUM tile%s",
            c->matmul_bf16_psum ? " or a bf16 one"
                                : " (bf16 PSUM output needs engines.tensor.bf16_psum, a "
                                  "NeuronCore-v4 family feature)");
    REQUIRE(stationary.space == GS_MEM_SBUF && moving.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "matmul: stationary and moving operands must be in SBUF");
    REQUIRE((c->matmul_dtypes & (1u << stationary.dtype)) && (c->matmul_dtypes & (1u << moving.dtype)),
            GS_ERR_UNSUPPORTED, "unsupported: %s x %s matmul on this target",
            gs_dtype_name(stationary.dtype), gs_dtype_name(moving.dtype));
    uint64_t K = stationary.part_count, M = gs_ap_free_elems(&stationary);
    uint64_t N = gs_ap_free_elems(&moving);
    REQUIRE(moving.part_count == K, GS_ERR_INVALID,
            "matmul: contraction sizes differ (stationary %" PRIu64 ", moving %u partitions)", K,
            moving.part_count);
    REQUIRE(K <= c->pe_rows, GS_ERR_INVALID, "matmul: contraction %" PRIu64 " exceeds %u PE rows",
            K, c->pe_rows);
    REQUIRE(M <= c->pe_cols, GS_ERR_INVALID,
            "matmul: stationary free size %" PRIu64 " exceeds %u PE columns", M, c->pe_cols);
    REQUIRE(N <= c->moving_free_max, GS_ERR_INVALID,
            "matmul: moving free size %" PRIu64 " exceeds the limit of %u", N, c->moving_free_max);
    REQUIRE(psum.part_count == M && gs_ap_free_elems(&psum) == N, GS_ERR_INVALID,
            "matmul: output must be [%" PRIu64 " x %" PRIu64 "], is [%u x %" PRIu64 "]", M, N,
            psum.part_count, gs_ap_free_elems(&psum));
    REQUIRE(psum_in_one_bank(kb, &psum), GS_ERR_INVALID,
            "matmul: output [%" PRIu64 " x %" PRIu64 "] fp32 does not fit one PSUM bank (%" PRIu64
            " bytes per partition)",
            M, N, c->psum_bank_bytes);
    in.out[0] = psum;
    in.in[0] = stationary;
    in.in[1] = moving;
    in.n_out = 1;
    in.n_in = 2;
    if (accumulate) in.flags |= GS_F_ACCUMULATE;
    return emit(kb, file, line, &in);
}

/* A [P, 2, X] double-row operand: outermost free dim 2; X = the rest. */
static int dr_half(const gs_ap *a, uint64_t *x)
{
    if (a->ndim < 2 || a->shape[0] != 2) return 0;
    *x = gs_ap_free_elems(a) / 2;
    return 1;
}

gs_status gs_matmul_dr_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                          gs_ap moving, int accumulate)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_MATMUL, GS_ENG_TENSOR);
    in.flags |= GS_F_DOUBLE_ROW;
    const gs_caps *c = &kb->caps;
    REQUIRE(c->double_row_k > 0, GS_ERR_UNSUPPORTED,
            "unsupported: fp8 double-row matmul on this target (family %s)", kb->cfg->family);
    REQUIRE((c->double_row_dtypes & (1u << stationary.dtype)) &&
                (c->double_row_dtypes & (1u << moving.dtype)),
            GS_ERR_UNSUPPORTED, "unsupported: %s x %s double-row matmul (fp8 only)",
            gs_dtype_name(stationary.dtype), gs_dtype_name(moving.dtype));
    REQUIRE(psum.space == GS_MEM_PSUM && psum.dtype == GS_FP32, GS_ERR_INVALID,
            "matmul (double row): output must be an fp32 PSUM tile");
    REQUIRE(stationary.space == GS_MEM_SBUF && moving.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "matmul (double row): stationary and moving operands must be in SBUF");
    uint64_t M = 0, N = 0, P = stationary.part_count;
    REQUIRE(dr_half(&stationary, &M) && dr_half(&moving, &N), GS_ERR_INVALID,
            "matmul (double row): operands must be [P, 2, X] views (outermost free dim 2: the "
            "two halves of the contraction)");
    REQUIRE(moving.part_count == P, GS_ERR_INVALID,
            "matmul (double row): contraction sizes differ (stationary %" PRIu64
            ", moving %u partitions)",
            P, moving.part_count);
    REQUIRE(2 * P <= c->double_row_k, GS_ERR_INVALID,
            "matmul (double row): contraction %" PRIu64 " exceeds %u (2 x %u PE rows)", 2 * P,
            c->double_row_k, c->pe_rows);
    REQUIRE(M <= c->pe_cols, GS_ERR_INVALID,
            "matmul (double row): stationary free size %" PRIu64 " exceeds %u PE columns", M,
            c->pe_cols);
    REQUIRE(N <= c->moving_free_max, GS_ERR_INVALID,
            "matmul (double row): moving free size %" PRIu64 " exceeds the limit of %u", N,
            c->moving_free_max);
    REQUIRE(psum.part_count == M && gs_ap_free_elems(&psum) == N, GS_ERR_INVALID,
            "matmul (double row): output must be [%" PRIu64 " x %" PRIu64 "], is [%u x %" PRIu64
            "]",
            M, N, psum.part_count, gs_ap_free_elems(&psum));
    REQUIRE(psum_in_one_bank(kb, &psum), GS_ERR_INVALID,
            "matmul (double row): output does not fit one PSUM bank");
    in.out[0] = psum;
    in.in[0] = stationary;
    in.in[1] = moving;
    in.n_out = 1;
    in.n_in = 2;
    if (accumulate) in.flags |= GS_F_ACCUMULATE;
    return emit(kb, file, line, &in);
}

/* The MX scale layout rule: the scales of data partitions [p0, p0+P) sit in the same partition
 * quadrant, rows 32q + (p%32)/8; the scale tile covers the data tile's partitions (or, for
 * P <= 32, at least its P/8 scale rows) with the same free size. */
static gs_status check_mx_scale(gs_kb *kb, const char *file, int line, const char *what,
                                const gs_ap *data, const gs_ap *scale)
{
    uint32_t P = data->part_count;
    uint32_t need = P <= 32 ? (P + 7) / 8 : P;
    REQUIRE(scale->dtype == GS_E8M0, GS_ERR_INVALID, "%s: scales must be e8m0 (uint8), are %s",
            what, gs_dtype_name(scale->dtype));
    REQUIRE(scale->space == GS_MEM_SBUF, GS_ERR_INVALID, "%s: scales must be in SBUF", what);
    REQUIRE(data->part_start % 32 == 0 && scale->part_start == data->part_start, GS_ERR_INVALID,
            "%s: scale layout rule: the scales of a 32-partition quadrant must sit in that "
            "quadrant (data starts at partition %u, scales at %u; both must start at the same "
            "multiple of 32)",
            what, data->part_start, scale->part_start);
    REQUIRE(scale->part_count >= need, GS_ERR_INVALID,
            "%s: scale layout rule: %u data partitions need scales in partitions [%u, %u) "
            "(rows 32q + (p%%32)/8 of each quadrant), the scale view has %u",
            what, P, scale->part_start, scale->part_start + need, scale->part_count);
    REQUIRE(gs_ap_free_elems(scale) == gs_ap_free_elems(data), GS_ERR_INVALID,
            "%s: scale tile free size %" PRIu64 " must equal the data's %" PRIu64
            " (one scale per x4 column and 8-partition group)",
            what, gs_ap_free_elems(scale), gs_ap_free_elems(data));
    return GS_OK;
}

gs_status gs_matmul_mx_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                          gs_ap st_scale, gs_ap moving, gs_ap mv_scale, int accumulate)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_MATMUL_MX, GS_ENG_TENSOR);
    const gs_caps *c = &kb->caps;
    REQUIRE(c->mx_k > 0, GS_ERR_UNSUPPORTED, "unsupported: matmul_mx on this target (family %s)",
            kb->cfg->family);
    REQUIRE((c->mx_dtypes & (1u << stationary.dtype)) && (c->mx_dtypes & (1u << moving.dtype)),
            GS_ERR_UNSUPPORTED,
            "unsupported: matmul_mx of %s x %s (needs quad-packed MX dtypes the target has)",
            gs_dtype_name(stationary.dtype), gs_dtype_name(moving.dtype));
    REQUIRE(psum.space == GS_MEM_PSUM && (psum.dtype == GS_FP32 || psum.dtype == GS_BF16),
            GS_ERR_INVALID, "matmul_mx: output must be an fp32 or bf16 PSUM tile");
    REQUIRE(stationary.space == GS_MEM_SBUF && moving.space == GS_MEM_SBUF, GS_ERR_INVALID,
            "matmul_mx: stationary and moving operands must be in SBUF");
    uint64_t P = stationary.part_count, M = gs_ap_free_elems(&stationary);
    uint64_t N = gs_ap_free_elems(&moving);
    REQUIRE(moving.part_count == P, GS_ERR_INVALID,
            "matmul_mx: contraction sizes differ (stationary %" PRIu64 ", moving %u partitions)", P,
            moving.part_count);
    REQUIRE(P % 8 == 0, GS_ERR_INVALID,
            "matmul_mx: %" PRIu64 " partitions is not a whole number of 8-partition scaling "
            "groups (32 values = 8 partitions x 4)",
            P);
    REQUIRE(4 * P <= c->mx_k, GS_ERR_INVALID,
            "matmul_mx: contraction %" PRIu64 " values exceeds %u (4 x %u PE rows)", 4 * P, c->mx_k,
            c->pe_rows);
    REQUIRE(M <= c->pe_cols, GS_ERR_INVALID,
            "matmul_mx: stationary free size %" PRIu64 " exceeds %u PE columns", M, c->pe_cols);
    REQUIRE(N <= c->moving_free_max, GS_ERR_INVALID,
            "matmul_mx: moving free size %" PRIu64 " exceeds the limit of %u", N,
            c->moving_free_max);
    REQUIRE(psum.part_count == M && gs_ap_free_elems(&psum) == N, GS_ERR_INVALID,
            "matmul_mx: output must be [%" PRIu64 " x %" PRIu64 "], is [%u x %" PRIu64 "]", M, N,
            psum.part_count, gs_ap_free_elems(&psum));
    REQUIRE(psum_in_one_bank(kb, &psum), GS_ERR_INVALID,
            "matmul_mx: output does not fit one PSUM bank");
    if (check_mx_scale(kb, file, line, "matmul_mx stationary", &stationary, &st_scale))
        return kb->err.code;
    if (check_mx_scale(kb, file, line, "matmul_mx moving", &moving, &mv_scale)) return kb->err.code;
    in.out[0] = psum;
    in.in[0] = stationary;
    in.in[1] = moving;
    in.in[2] = st_scale;
    *GS_MX_MOVING_SCALE(&in) = mv_scale;
    in.n_out = 1;
    in.n_in = 3;
    /* emit checks in[] and out[0]; the moving scales (in the out[1] slot) are checked here */
    if (check_ap(kb, file, line, &in, &mv_scale, "moving scale") ||
        check_alignment(kb, file, line, &in, &mv_scale, "moving scale"))
        return kb->err.code;
    if (accumulate) in.flags |= GS_F_ACCUMULATE;
    return emit(kb, file, line, &in);
}

gs_status gs_quantize_mx_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap scale,
                            gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_QUANTIZE_MX, GS_ENG_VECTOR);
    const gs_caps *c = &kb->caps;
    REQUIRE(c->quantize_mx_dtypes, GS_ERR_UNSUPPORTED,
            "unsupported: quantize_mx on this target (family %s)", kb->cfg->family);
    REQUIRE(dst.dtype != GS_FP4_E2M1_X4, GS_ERR_UNSUPPORTED,
            "unsupported: quantize_mx to fp4_e2m1_x4 (Quantize-MX has no fp4 output; quantize "
            "fp4 offline)");
    REQUIRE(c->quantize_mx_dtypes & (1u << dst.dtype), GS_ERR_UNSUPPORTED,
            "unsupported: quantize_mx to %s (MXFP8 x4 outputs only)", gs_dtype_name(dst.dtype));
    REQUIRE(src.dtype == GS_BF16 || src.dtype == GS_FP16, GS_ERR_INVALID,
            "quantize_mx: source must be bf16 or fp16, is %s", gs_dtype_name(src.dtype));
    REQUIRE(src.space == GS_MEM_SBUF && dst.space == GS_MEM_SBUF && scale.space == GS_MEM_SBUF,
            GS_ERR_INVALID, "quantize_mx: source, data and scales must all be in SBUF");
    uint32_t P = src.part_count;
    uint64_t F = gs_ap_free_elems(&src);
    REQUIRE(P % 32 == 0 && P <= c->partitions, GS_ERR_INVALID,
            "quantize_mx: source partitions %u must be a multiple of 32 (whole quadrants of "
            "8-partition groups), at most %u",
            P, c->partitions);
    REQUIRE(F % 4 == 0 && src.stride[src.ndim - 1] == 1, GS_ERR_INVALID,
            "quantize_mx: source free size %" PRIu64 " must be a multiple of 4 with unit "
            "innermost stride (groups of 4 consecutive values per partition)",
            F);
    REQUIRE(src.shape[src.ndim - 1] % 4 == 0, GS_ERR_INVALID,
            "quantize_mx: the innermost source dim (%u) must be a multiple of 4",
            src.shape[src.ndim - 1]);
    REQUIRE(dst.part_count == P && gs_ap_free_elems(&dst) * 4 == F, GS_ERR_INVALID,
            "quantize_mx: data output must be [%u x %" PRIu64 "] x4, is [%u x %" PRIu64 "]", P,
            F / 4, dst.part_count, gs_ap_free_elems(&dst));
    if (check_mx_scale(kb, file, line, "quantize_mx", &dst, &scale)) return kb->err.code;
    in.out[0] = dst;
    in.out[1] = scale;
    in.in[0] = src;
    in.n_out = 2;
    in.n_in = 1;
    return emit(kb, file, line, &in);
}

gs_status gs_transpose_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_TRANSPOSE, GS_ENG_TENSOR);
    const gs_caps *c = &kb->caps;
    REQUIRE(psum.space == GS_MEM_PSUM, GS_ERR_INVALID, "transpose: output must be a PSUM tile");
    REQUIRE(psum.dtype == GS_FP32 || psum.dtype == src.dtype, GS_ERR_INVALID,
            "transpose: output dtype must be fp32 or the input's");
    REQUIRE(src.space == GS_MEM_SBUF, GS_ERR_INVALID, "transpose: input must be in SBUF");
    REQUIRE(c->matmul_dtypes & (1u << src.dtype), GS_ERR_UNSUPPORTED,
            "unsupported: %s transpose on the tensor engine", gs_dtype_name(src.dtype));
    uint64_t P = src.part_count, F = gs_ap_free_elems(&src);
    REQUIRE(P <= c->pe_rows && F <= c->pe_cols, GS_ERR_INVALID,
            "transpose: input [%" PRIu64 " x %" PRIu64 "] exceeds the %u x %u PE array", P, F,
            c->pe_rows, c->pe_cols);
    REQUIRE(psum.part_count == F && gs_ap_free_elems(&psum) == P, GS_ERR_INVALID,
            "transpose: output must be [%" PRIu64 " x %" PRIu64 "]", F, P);
    REQUIRE(psum_in_one_bank(kb, &psum), GS_ERR_INVALID,
            "transpose: output does not fit one PSUM bank");
    in.out[0] = psum;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 1;
    return emit(kb, file, line, &in);
}

static int is_col(const gs_ap *a, unsigned parts)
{
    return a->part_count == parts && gs_ap_free_elems(a) == 1;
}

gs_status gs_activation_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                           gs_act func, gs_operand scale, gs_operand bias, const gs_ap *acc_out)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_ACTIVATION, GS_ENG_SCALAR);
    REQUIRE((int)func >= 0 && func < GS_ACT_COUNT, GS_ERR_INVALID, "activation: bad function");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "activation: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "activation: input and output shapes differ");
    in.act = func;
    in.out[0] = out;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 3;
    if (scale.is_ap) {
        REQUIRE(is_col(&scale.ap, src.part_count), GS_ERR_INVALID,
                "activation: per-partition scale must be [%u x 1]", src.part_count);
        in.in[1] = scale.ap;
        in.flags |= GS_F_SCALE_AP;
    } else {
        in.imm[0] = scale.imm;
    }
    if (bias.is_ap) {
        REQUIRE(is_col(&bias.ap, src.part_count), GS_ERR_INVALID,
                "activation: per-partition bias must be [%u x 1]", src.part_count);
        in.in[2] = bias.ap;
        in.flags |= GS_F_BIAS_AP;
    } else {
        in.imm[1] = bias.imm;
    }
    if (acc_out) {
        REQUIRE(is_col(acc_out, src.part_count) && acc_out->dtype == GS_FP32, GS_ERR_INVALID,
                "activation: accumulate output must be an fp32 [%u x 1] pattern", src.part_count);
        in.out[1] = *acc_out;
        in.n_out = 2;
        in.flags |= GS_F_ACC_OUT;
    }
    return emit(kb, file, line, &in);
}

gs_status gs_exponential_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                            gs_operand sub, const gs_ap *acc_out)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_EXPONENTIAL, GS_ENG_VECTOR);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "exponential: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "exponential: input and output shapes differ");
    in.act = GS_ACT_EXP;
    in.out[0] = out;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 3;
    if (sub.is_ap) {
        REQUIRE(is_col(&sub.ap, src.part_count), GS_ERR_INVALID,
                "exponential: per-partition subtrahend must be [%u x 1]", src.part_count);
        in.in[2] = sub.ap;
        in.flags |= GS_F_BIAS_AP;
    } else {
        in.imm[1] = sub.imm;
    }
    if (acc_out) {
        REQUIRE(is_col(acc_out, src.part_count) && acc_out->dtype == GS_FP32, GS_ERR_INVALID,
                "exponential: accumulate output must be an fp32 [%u x 1] pattern", src.part_count);
        in.out[1] = *acc_out;
        in.n_out = 2;
        in.flags |= GS_F_ACC_OUT;
    }
    return emit(kb, file, line, &in);
}

gs_status gs_tensor_tensor_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap a, gs_ap b,
                              gs_alu op)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR);
    REQUIRE((int)op >= 0 && op < GS_ALU_COUNT, GS_ERR_INVALID, "tensor_tensor: bad op");
    REQUIRE(is_onchip(&out) && is_onchip(&a) && is_onchip(&b), GS_ERR_INVALID,
            "tensor_tensor: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &a) && same_shape(&out, &b), GS_ERR_INVALID,
            "tensor_tensor: shapes differ (out %u x %" PRIu64 ", a %u x %" PRIu64 ", b %u x %" PRIu64
            ")",
            out.part_count, gs_ap_free_elems(&out), a.part_count, gs_ap_free_elems(&a),
            b.part_count, gs_ap_free_elems(&b));
    in.alu0 = op;
    in.out[0] = out;
    in.in[0] = a;
    in.in[1] = b;
    in.n_out = 1;
    in.n_in = 2;
    return emit(kb, file, line, &in);
}

static gs_status check_engine_choice(gs_kb *kb, const char *file, int line, const char *op,
                                     gs_engine e, int allow_scalar)
{
    REQUIRE(e == GS_ENG_VECTOR || e == GS_ENG_GPSIMD || (allow_scalar && e == GS_ENG_SCALAR),
            GS_ERR_INVALID, "%s: engine %s cannot run it", op, gs_engine_name(e));
    return GS_OK;
}

gs_status gs_tensor_scalar_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                              gs_ap src, gs_alu op0, gs_operand s0, gs_alu op1, gs_operand s1)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    if (check_engine_choice(kb, file, line, "tensor_scalar", engine, 1)) return kb->err.code;
    gs_instr in;
    instr_init(&in, GS_OP_TENSOR_SCALAR, engine);
    REQUIRE((int)op0 >= 0 && op0 < GS_ALU_COUNT && (int)op1 >= 0 && op1 < GS_ALU_COUNT,
            GS_ERR_INVALID, "tensor_scalar: bad op");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "tensor_scalar: operands must be SBUF/PSUM tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "tensor_scalar: input and output shapes differ");
    in.alu0 = op0;
    in.alu1 = op1;
    in.out[0] = out;
    in.in[0] = src;
    in.n_out = 1;
    in.n_in = 3;
    if (s0.is_ap) {
        REQUIRE(is_col(&s0.ap, src.part_count), GS_ERR_INVALID,
                "tensor_scalar: per-partition operand 0 must be [%u x 1]", src.part_count);
        in.in[1] = s0.ap;
        in.flags |= GS_F_SCALE_AP;
    } else {
        in.imm[0] = s0.imm;
    }
    if (op1 != GS_ALU_BYPASS) {
        in.flags |= GS_F_HAS_OP1;
        if (s1.is_ap) {
            REQUIRE(is_col(&s1.ap, src.part_count), GS_ERR_INVALID,
                    "tensor_scalar: per-partition operand 1 must be [%u x 1]", src.part_count);
            in.in[2] = s1.ap;
            in.flags |= GS_F_BIAS_AP;
        } else {
            in.imm[1] = s1.imm;
        }
    }
    return emit(kb, file, line, &in);
}

gs_status gs_tensor_reduce_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                              gs_alu op, int axes)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_TENSOR_REDUCE, GS_ENG_VECTOR);
    REQUIRE(op == GS_ALU_ADD || op == GS_ALU_MAX || op == GS_ALU_MIN, GS_ERR_INVALID,
            "tensor_reduce: op must be add, max or min");
    REQUIRE(axes >= 1 && axes <= src.ndim, GS_ERR_INVALID,
            "tensor_reduce: axes %d outside 1..%d (the input's free dims)", axes, src.ndim);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "tensor_reduce: operands must be SBUF/PSUM tiles");
    uint64_t outer = 1;
    for (int k = 0; k < src.ndim - axes; k++) outer *= src.shape[k];
    REQUIRE(out.part_count == src.part_count && gs_ap_free_elems(&out) == outer, GS_ERR_INVALID,
            "tensor_reduce: output must be [%u x %" PRIu64 "]", src.part_count, outer);
    in.alu0 = op;
    in.iimm[0] = axes;
    return emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_bn_stats_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_BN_STATS, GS_ENG_VECTOR);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID, "bn_stats: operands must be tiles");
    REQUIRE(out.dtype == GS_FP32 && out.part_count == src.part_count && gs_ap_free_elems(&out) == 3,
            GS_ERR_INVALID, "bn_stats: output must be fp32 [%u x 3]", src.part_count);
    return emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_bn_aggr_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_BN_AGGR, GS_ENG_VECTOR);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID, "bn_aggr: operands must be tiles");
    REQUIRE(src.dtype == GS_FP32 && gs_ap_free_elems(&src) % 3 == 0, GS_ERR_INVALID,
            "bn_aggr: input must be fp32 [P x 3k] bn_stats chunks");
    REQUIRE(out.dtype == GS_FP32 && out.part_count == src.part_count && gs_ap_free_elems(&out) == 2,
            GS_ERR_INVALID, "bn_aggr: output must be fp32 [%u x 2] (mean, variance)",
            src.part_count);
    return emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_tensor_copy_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                            gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    if (check_engine_choice(kb, file, line, "tensor_copy", engine, 1)) return kb->err.code;
    gs_instr in;
    instr_init(&in, GS_OP_TENSOR_COPY, engine);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "tensor_copy: operands must be SBUF/PSUM tiles (use dma_copy for HBM)");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "tensor_copy: shapes differ");
    return emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_memset_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                       float value)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    if (check_engine_choice(kb, file, line, "memset", engine, 0)) return kb->err.code;
    gs_instr in;
    instr_init(&in, GS_OP_MEMSET, engine);
    REQUIRE(is_onchip(&out), GS_ERR_INVALID, "memset: output must be an SBUF/PSUM tile");
    in.imm[0] = value;
    in.out[0] = out;
    in.n_out = 1;
    return emit(kb, file, line, &in);
}

gs_status gs_iota_at(gs_kb *kb, const char *file, int line, gs_ap out, int64_t base,
                     int64_t part_mult, int64_t free_mult)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_IOTA, GS_ENG_GPSIMD);
    REQUIRE(is_onchip(&out), GS_ERR_INVALID, "iota: output must be an SBUF tile");
    in.iimm[0] = base;
    in.iimm[1] = part_mult;
    in.iimm[2] = free_mult;
    in.out[0] = out;
    in.n_out = 1;
    return emit(kb, file, line, &in);
}

static int is_compare(gs_alu op)
{
    return op == GS_ALU_EQ || op == GS_ALU_NE || op == GS_ALU_GT || op == GS_ALU_GE ||
           op == GS_ALU_LT || op == GS_ALU_LE;
}

gs_status gs_affine_select_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                              gs_alu cmp, int64_t base, int64_t part_mult, int64_t free_mult,
                              float fill)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_AFFINE_SELECT, GS_ENG_GPSIMD);
    REQUIRE(is_compare(cmp), GS_ERR_INVALID, "affine_select: cmp must be a comparison");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "affine_select: operands must be tiles");
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID, "affine_select: shapes differ");
    in.alu0 = cmp;
    in.iimm[0] = base;
    in.iimm[1] = part_mult;
    in.iimm[2] = free_mult;
    in.imm[0] = fill;
    return emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_partition_reduce_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src,
                                 gs_alu op)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_PARTITION_REDUCE, GS_ENG_GPSIMD);
    REQUIRE(op == GS_ALU_ADD || op == GS_ALU_MAX || op == GS_ALU_MIN, GS_ERR_INVALID,
            "partition_reduce: op must be add, max or min");
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "partition_reduce: operands must be tiles");
    REQUIRE(gs_ap_free_elems(&out) == gs_ap_free_elems(&src), GS_ERR_INVALID,
            "partition_reduce: free sizes differ");
    in.alu0 = op;
    return emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_partition_broadcast_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_PARTITION_BROADCAST, GS_ENG_GPSIMD);
    REQUIRE(is_onchip(&out) && is_onchip(&src), GS_ERR_INVALID,
            "partition_broadcast: operands must be tiles");
    REQUIRE(src.part_count == 1 && gs_ap_free_elems(&out) == gs_ap_free_elems(&src),
            GS_ERR_INVALID, "partition_broadcast: input must be one partition of the output's size");
    return emit_out_in(kb, file, line, &in, out, src);
}

gs_status gs_gather_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap table, gs_ap idx)
{
    if (!kb || kb->failed) return gs_kb_status(kb);
    gs_instr in;
    instr_init(&in, GS_OP_GATHER, GS_ENG_GPSIMD);
    REQUIRE(out.space == GS_MEM_SBUF && idx.space == GS_MEM_SBUF && table.space == GS_MEM_HBM,
            GS_ERR_INVALID, "gather: out and idx must be SBUF tiles, table an HBM tensor view");
    REQUIRE(idx.dtype == GS_INT32 && is_col(&idx, out.part_count), GS_ERR_INVALID,
            "gather: idx must be int32 [%u x 1]", out.part_count);
    REQUIRE(out.dtype == table.dtype && gs_ap_free_elems(&out) == gs_ap_free_elems(&table),
            GS_ERR_INVALID, "gather: output rows must match the table's rows (dtype and length)");
    REQUIRE(table.ndim == 1 && table.stride[0] == 1, GS_ERR_INVALID,
            "gather: table rows must be contiguous (a gs_hbm_rows view)");
    in.out[0] = out;
    in.in[0] = table;
    in.in[1] = idx;
    in.n_out = 1;
    in.n_in = 2;
    return emit(kb, file, line, &in);
}
