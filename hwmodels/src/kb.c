/*
 * kb.c - the kernel builder: capabilities, SBUF/PSUM pools and tiles, views, and the emission
 * of an instruction (operand validation, then its dependencies from the tracker in deps.c).
 * The instruction API of gs/kernel.h (one checker per operation) is in kb_ops.c.
 */
#include "gs/builder.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/family.h"
#include "kb_internal.h"
#include "program.h"

_Static_assert(GS_ENGINE_COUNT <= 32, "gs_kb.engines holds one bit per engine");

/* GS_BASELINE_PATHS=1, =all or a value naming "build" in the environment: scan every history
 * in full and record every access at once, as before the index and the lazy HBM reads of
 * deps.c (`gensweep bench` measures the old build against the new one in the same run; the
 * tests compare the dependencies of both). Read for every builder: a test switches it
 * in-process. */
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

gs_status gs_kb_failf(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gs_status st = kb_failv(kb, file, line, code, fmt, ap);
    va_end(ap);
    return st;
}

gs_status gs_kb_fail_at(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt, ...)
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
    c->dma_cast = cfg->dma.cast;
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

gs_program *gs_kb_program(gs_kb *kb)
{
    return kb ? kb->p : NULL;
}

uint64_t gs_kb_tracker_work(const gs_kb *kb)
{
    return kb ? kb->work : 0;
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
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (gs_config_has_engine(cfg, (gs_engine)e)) kb->engines |= 1u << e;
    kb->tr = gs_program_builder_state(p);
    if (!kb->tr) {
        kb->tr = gs_calloc(1, sizeof *kb->tr);
        if (!kb->tr) {
            gs_free(kb);
            return NULL;
        }
        gs_program_set_builder_state(p, kb->tr, gs_kb_tracker_free);
    }
    if (core >= kb->caps.cores)
        gs_kb_failf(kb, NULL, 0, GS_ERR_INVALID, "core %u does not exist (target has %u cores)",
                    core, kb->caps.cores);
    return kb;
}

void gs_kb_free(gs_kb *kb)
{
    if (!kb) return;
    for (size_t i = 0; i < kb->n_pools; i++)
        gs_free(kb->pools[i]);
    gs_free(kb->pools);
    gs_free(kb->deps);
    gs_free(kb->dep_set);
    gs_free(kb->match[0]);
    gs_free(kb->match[1]);
    gs_free(kb->cand);
    gs_free(kb->cand_bits);
    gs_free(kb);
}

/* ---- pools and tiles ---- */

static uint64_t space_capacity(const gs_kb *kb, gs_memspace s)
{
    return s == GS_MEM_SBUF ? kb->caps.sbuf_partition_bytes : kb->caps.psum_partition_bytes;
}

gs_pool *gs_pool_create_at(gs_kb *kb, const char *file, int line, gs_memspace space,
                           const char *name, unsigned bufs, uint64_t bytes_per_partition)
{
    if (!kb || kb->failed) return NULL;
    name = name ? name : "pool";
    if (space != GS_MEM_SBUF && space != GS_MEM_PSUM) {
        gs_kb_failf(kb, file, line, GS_ERR_INVALID, "pool '%s': pools live in sbuf or psum", name);
        return NULL;
    }
    if (bufs == 0 || bufs > GS_POOL_MAX_BUFS || bytes_per_partition == 0) {
        gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                    "pool '%s': %u buffers of %" PRIu64 " bytes (need 1..%u buffers, > 0 bytes)",
                    name, bufs, bytes_per_partition, GS_POOL_MAX_BUFS);
        return NULL;
    }
    uint64_t cap = space_capacity(kb, space);
    uint64_t bytes;
    if (space == GS_MEM_PSUM) {
        /* PSUM buffers are whole banks, so a matmul output never straddles two */
        uint64_t bank = kb->caps.psum_bank_bytes;
        bytes = (bytes_per_partition + bank - 1) / bank * bank;
    } else {
        const uint64_t align = (uint64_t)kb->cfg->pool_alignment.v; /* core.pool_alignment */
        bytes = (bytes_per_partition + align - 1) / align * align;
    }
    /* bytes_per_partition <= cap first: bytes * bufs cannot overflow then */
    uint64_t need = bytes_per_partition > cap ? UINT64_MAX : bytes * bufs;
    if (bytes_per_partition > cap || need > cap - kb->top[space]) {
        gs_kb_failf(kb, file, line, GS_ERR_DOES_NOT_FIT,
                    "does not fit: pool '%s' needs %u x %" PRIu64 " bytes per partition of %s, "
                    "%" PRIu64 " of %" PRIu64 " free (%s)",
                    name, bufs, bytes, gs_memspace_name(space), cap - kb->top[space], cap,
                    space == GS_MEM_SBUF
                        ? "caps.sbuf_partition_bytes: core.sbuf / core.partitions"
                        : "caps.psum_partition_bytes: core.psum.size / core.partitions, in "
                          "banks of caps.psum_bank_bytes");
        return NULL;
    }
    if (kb->n_pools == kb->cap_pools) {
        size_t nc = kb->cap_pools ? kb->cap_pools * 2 : 8;
        gs_pool **np = gs_realloc(kb->pools, nc * sizeof(gs_pool *));
        if (!np) {
            gs_kb_failf(kb, file, line, GS_ERR_NOMEM, "out of memory");
            return NULL;
        }
        kb->pools = np;
        kb->cap_pools = nc;
    }
    gs_pool *pool = gs_calloc(1, sizeof *pool);
    if (!pool) {
        gs_kb_failf(kb, file, line, GS_ERR_NOMEM, "out of memory");
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
        bi.file = file;
        bi.line = line;
        int32_t id = gs_program_add_buffer(kb->p, &bi);
        if (id < 0 || !gs_kb_tracker_note_buffer(kb->tr, id)) {
            gs_free(pool);
            gs_kb_failf(kb, file, line, GS_ERR_NOMEM, "out of memory");
            return NULL;
        }
        if (b == 0) pool->first_buffer = id;
    }
    if (!gs_kb_inherit_history(kb, pool)) {
        gs_free(pool);
        gs_kb_failf(kb, file, line, GS_ERR_NOMEM, "out of memory");
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
        for (unsigned b = 0; b < q->bufs; b++) {
            kb->tr->released[q->first_buffer + (int32_t)b] = 1;
            kb->tr->held[kb->tr->n_held++] = q->first_buffer + (int32_t)b;
        }
        gs_free(q);
    }
    kb->n_pools = first;
}

gs_tile gs_tile_alloc_at(gs_pool *pool, const char *file, int line, gs_dtype dtype, unsigned parts,
                         uint32_t free_elems)
{
    gs_tile t;
    memset(&t, 0, sizeof t);
    t.ap.tensor = -1;
    if (!pool) return t; /* the pool's creation already recorded the error */
    gs_kb *kb = pool->kb;
    if (kb->failed) return t;
    if ((int)dtype < 0 || dtype >= GS_DTYPE_COUNT) {
        gs_kb_failf(kb, file, line, GS_ERR_INVALID, "tile in pool '%s': invalid dtype", pool->name);
        return t;
    }
    if (parts == 0 || parts > kb->caps.partitions || free_elems == 0) {
        gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                    "tile in pool '%s': %u partitions x %u elements (need 1..%u partitions, > 0 "
                    "elements: %s has %u partitions, caps.partitions from core.partitions)",
                    pool->name, parts, free_elems, kb->caps.partitions,
                    pool->space == GS_MEM_PSUM ? "PSUM" : "SBUF", kb->caps.partitions);
        return t;
    }
    uint64_t bytes = (uint64_t)free_elems * gs_dtype_size(dtype);
    if (bytes > pool->bytes) {
        gs_kb_failf(kb, file, line, GS_ERR_DOES_NOT_FIT,
                    "does not fit: tile of %u x %s (%" PRIu64 " bytes per partition) exceeds pool "
                    "'%s' buffers of %" PRIu64 " bytes (size tiles from the pool's "
                    "bytes_per_partition; the pool is sized from caps.%s_partition_bytes)",
                    free_elems, gs_dtype_name(dtype), bytes, pool->name, pool->bytes,
                    pool->space == GS_MEM_PSUM ? "psum" : "sbuf");
        return t;
    }
    int32_t id = pool->first_buffer + (int32_t)pool->next;
    const gs_buffer_info *bi = gs_program_buffer(kb->p, id);
    if (++pool->next == pool->bufs) pool->next = 0; /* round robin (no division) */
    kb->tr->tile_parts[id] = parts;
    kb->tr->tile_bytes[id] = bytes;
    tile_alloc *ta = &kb->tr->alloc[id];
    ta->gen = (uint16_t)(ta->gen + 1u);
    if (ta->gen == 0) ta->gen = 1; /* 0 is no allocation's: a pattern made by hand */
    ta->file = file;
    ta->line = line;
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
    t.ap.gen = ta->gen;
    t.free_elems = free_elems;
    return t;
}

/* ---- views ---- */

/* Does a stride fit the 32-bit stride fields of gs_ap? */
static int fits_i32(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* A bad HBM view keeps what the kernel asked for, for the error that reports it when the view
 * is used (views are pure: no builder to report to here). An HBM view of gs_hbm_rows/_cols has
 * one free dim and no core, so `core` holds the view's kind and the unused shape[2..3] /
 * stride[2..3] hold r0 and c0 exactly (the offset r0 * C + c0 cannot tell them apart when c0
 * is out of range). Such a pattern is never executed: using it is an error. */
enum { HBM_VIEW_ROWS = 1, HBM_VIEW_COLS = 2, HBM_VIEW_GENERAL = 3 };

static void stash_request(gs_ap *a, unsigned kind, int64_t r0, int64_t c0)
{
    a->core = (uint16_t)kind;
    a->shape[2] = (uint32_t)((uint64_t)r0 >> 32);
    a->shape[3] = (uint32_t)(uint64_t)r0;
    a->stride[2] = (int32_t)(uint32_t)((uint64_t)c0 >> 32);
    a->stride[3] = (int32_t)(uint32_t)(uint64_t)c0;
}

static void stashed_request(const gs_ap *a, int64_t *r0, int64_t *c0)
{
    *r0 = (int64_t)(((uint64_t)a->shape[2] << 32) | a->shape[3]);
    *c0 = (int64_t)(((uint64_t)(uint32_t)a->stride[2] << 32) | (uint32_t)a->stride[3]);
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
    for (int i = 0; i + 1 < t->ndim; i++)
        r *= t->shape[i];
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
    if (a.bad_view == GS_AP_BAD_RANGE) stash_request(&a, HBM_VIEW_ROWS, r0, c0);
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
    if (a.bad_view == GS_AP_BAD_RANGE) stash_request(&a, HBM_VIEW_COLS, r0, c0);
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
        stash_request(&a, HBM_VIEW_GENERAL, ndim, 0);
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

/* ---- operand validation ---- */

/* Operand names for messages: a table rather than snprintf, because gs_kb_emit() names every
 * operand of every instruction up front and huge programs have hundreds of thousands of them. */
static const char *operand_name(int is_out, int k)
{
    static const char *const outs[GS_INSTR_MAX_OUT] = {"out0", "out1"};
    static const char *const ins[GS_INSTR_MAX_IN] = {"in0", "in1", "in2"};
    if (k < 0) return "?";
    if (is_out) return k < GS_INSTR_MAX_OUT ? outs[k] : "out?";
    return k < GS_INSTR_MAX_IN ? ins[k] : "in?";
}

/* "[100 x 64]": an HBM tensor's declared shape. */
static void format_shape(const gs_tensor_info *ti, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "[");
    for (int i = 0; i < ti->ndim && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%" PRId64, i ? " x " : "", ti->shape[i]);
    if (n < size) snprintf(out + n, size - n, "]");
}

/* The kernel's label for a buffer: its pool's name (buffers are named "<pool>.<index>"). */
static void pool_label(const gs_buffer_info *bi, char *out, size_t size)
{
    snprintf(out, size, "%s", bi->name);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = '\0';
}

const char *gs_kb_ap_label(const gs_kb *kb, const gs_ap *a, char *buf, size_t size)
{
    if (a->space == GS_MEM_HBM) {
        const gs_tensor_info *ti = gs_program_tensor(kb->p, a->tensor);
        if (ti)
            snprintf(buf, size, "tensor '%s'", ti->name);
        else
            snprintf(buf, size, "no tensor");
        return buf;
    }
    const gs_buffer_info *bi = gs_program_buffer(kb->p, a->tensor);
    if (!bi) {
        snprintf(buf, size, "an unallocated tile");
        return buf;
    }
    char pool[48];
    pool_label(bi, pool, sizeof pool);
    snprintf(buf, size, "tile of pool '%s'", pool);
    return buf;
}

/* " (out of range)" after the range of a view that exceeds its extent. */
static const char *mark(int bad)
{
    return bad ? " (out of range)" : "";
}

/* The capability a partition range is sized from, e.g. "SBUF has 128 partitions
 * (caps.partitions, core.partitions)". */
static void partitions_cap(const gs_kb *kb, gs_memspace space, char *out, size_t size)
{
    snprintf(out, size, "%s has %u partitions (caps.partitions, core.partitions)",
             space == GS_MEM_PSUM ? "PSUM" : "SBUF", kb->caps.partitions);
}

/* A view a helper refused as out of range (GS_AP_BAD_RANGE): name the tile or tensor, the range
 * asked for against its extent, and what to size the view from. */
static gs_status bad_range(gs_kb *kb, const char *file, int line, const char *op, const char *what,
                           const gs_ap *a)
{
    char cap[96];
    partitions_cap(kb, a->space, cap, sizeof cap);
    if (a->space != GS_MEM_HBM) {
        const gs_buffer_info *bi = gs_program_buffer(kb->p, a->tensor);
        if (!bi || a->tensor < 0 || (size_t)a->tensor >= kb->tr->n_tile)
            return gs_kb_failf(kb, file, line, GS_ERR_BOUNDS,
                               "%s %s: view of an unallocated tile (gs_tile_alloc failed or was "
                               "not called)",
                               op, what);
        char pool[48];
        pool_label(bi, pool, sizeof pool);
        uint64_t dsize = gs_dtype_size(a->dtype);
        uint32_t tparts = kb->tr->tile_parts[a->tensor];
        uint64_t tfree = dsize ? kb->tr->tile_bytes[a->tensor] / dsize : 0;
        int64_t f0 = dsize ? (a->offset - (int64_t)bi->offset) / (int64_t)dsize : 0;
        int64_t f1 = f0;
        int empty = a->part_count == 0;
        for (unsigned k = 0; k < a->ndim && k < GS_AP_MAX_DIMS; k++) {
            if (a->shape[k] == 0)
                empty = 1;
            else
                f1 += (int64_t)(a->shape[k] - 1) * (int64_t)a->stride[k];
        }
        f1 += 1;
        if (empty)
            return gs_kb_failf(kb, file, line, GS_ERR_BOUNDS,
                               "%s %s: empty view of tile of pool '%s' (buffer '%s'): %u "
                               "partitions x %" PRIu64 " elements asked for; a view needs at "
                               "least one partition and one element",
                               op, what, pool, bi->name, a->part_count, gs_kb_free_elems(a));
        uint64_t p1 = (uint64_t)a->part_start + a->part_count;
        return gs_kb_failf(
            kb, file, line, GS_ERR_BOUNDS,
            "%s %s: view outside tile of pool '%s' (buffer '%s', [%u x %" PRIu64
            "] %s): partitions [%u, %" PRIu64 ") of %u%s, elements [%" PRId64 ", %" PRId64
            ") of %" PRIu64 " per partition%s; size views from the tile (gs_tile_alloc) and "
            "the target: %s",
            op, what, pool, bi->name, tparts, tfree, gs_dtype_name(a->dtype), a->part_start, p1,
            tparts, mark(p1 > tparts), f0, f1, tfree, mark(f0 < 0 || (uint64_t)f1 > tfree), cap);
    }
    const gs_tensor_info *ti = gs_program_tensor(kb->p, a->tensor);
    if (!ti)
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID, "%s %s: no HBM tensor %d", op, what,
                           (int)a->tensor);
    int64_t R = 1, C = ti->ndim >= 1 ? ti->shape[ti->ndim - 1] : 0;
    for (int i = 0; i + 1 < ti->ndim; i++)
        R *= ti->shape[i];
    int64_t r0, c0;
    stashed_request(a, &r0, &c0);
    if (a->core == HBM_VIEW_GENERAL)
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                           "%s %s: gs_hbm_ap view of tensor '%s' with %" PRId64
                           " free dims (need 1..%d) or without shape/stride arrays",
                           op, what, ti->name, r0, GS_AP_MAX_DIMS);
    if (a->core != HBM_VIEW_ROWS && a->core != HBM_VIEW_COLS)
        return gs_kb_failf(kb, file, line, GS_ERR_BOUNDS,
                           "%s %s: view outside tensor '%s' (requested range exceeds it)", op, what,
                           ti->name);
    int rows_on_parts = a->core == HBM_VIEW_ROWS;
    int64_t nr = rows_on_parts ? a->part_count : a->shape[0];
    int64_t nc = rows_on_parts ? a->shape[0] : a->part_count;
    const char *empty =
        nr == 0 || nc == 0 ? " (empty: a view needs at least one row and column)" : "";
    return gs_kb_failf(
        kb, file, line, GS_ERR_BOUNDS,
        "%s %s: view outside tensor '%s' (seen as [%" PRId64 " x %" PRId64 "] %s): rows [%" PRId64
        ", %" PRId64 ") of %" PRId64 "%s, cols [%" PRId64 ", %" PRId64 ") of %" PRId64 "%s%s; %s "
        "map to partitions: size the blocks from the tensor's shape (gs_tensor.shape) and the "
        "target: %s",
        op, what, ti->name, R, C, gs_dtype_name(ti->dtype), r0, r0 + nr, R,
        mark(r0 < 0 || r0 + nr > R), c0, c0 + nc, C, mark(c0 < 0 || c0 + nc > C), empty,
        rows_on_parts ? "rows" : "columns", cap);
}

/* The checks of an operand that depend only on its pattern and on what never changes once made
 * (the program's config, tensors and buffers): their success holds for every later use of the
 * same pattern on any core (GS_FACT_CHECKED). Fills the pattern's bounding box. */
static gs_status check_ap_fixed(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                                const gs_ap *a, const char *what, int64_t *lo_out, int64_t *hi_out)
{
    const char *op = gs_opcode_name(in->op);
    if (a->bad_view == GS_AP_BAD_STRIDE)
        return gs_kb_failf(
            kb, file, line, GS_ERR_INVALID,
            "%s %s: a stride does not fit in 32 bits (access patterns hold strides as "
            "int32_t: at most %" PRId32 " elements)",
            op, what, INT32_MAX);
    if (a->bad_view) return bad_range(kb, file, line, op, what, a);
    if (!gs_ap_is_valid(a))
        return gs_kb_failf(
            kb, file, line, GS_ERR_INVALID,
            "%s %s: invalid access pattern (unallocated tile, zero size or bad rank)", op, what);
    if (!(kb->cfg->dtypes & (1u << a->dtype)))
        return gs_kb_failf(kb, file, line, GS_ERR_UNSUPPORTED,
                           "unsupported: %s %s dtype %s on this target", op, what,
                           gs_dtype_name(a->dtype));
    int64_t lo, hi;
    if (gs_ap_bbox(a, &lo, &hi))
        /* before anything compares the box: a wrapped box passes every bounds check */
        return gs_kb_failf(kb, file, line, GS_ERR_BOUNDS,
                           "%s %s: %s offset %" PRId64 " plus the pattern's extent overflows "
                           "64-bit arithmetic: no tensor or tile reaches that far",
                           op, what, gs_memspace_name(a->space), a->offset);
    *lo_out = lo;
    *hi_out = hi;
    if (a->space == GS_MEM_HBM) {
        const gs_tensor_info *ti = gs_program_tensor(kb->p, a->tensor);
        if (!ti)
            return gs_kb_failf(kb, file, line, GS_ERR_INVALID, "%s %s: no HBM tensor %d", op, what,
                               (int)a->tensor);
        if (ti->dtype != a->dtype)
            return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                               "%s %s: tensor '%s' is %s, access pattern says %s", op, what,
                               ti->name, gs_dtype_name(ti->dtype), gs_dtype_name(a->dtype));
        if (lo < 0 || hi > (int64_t)ti->elems) {
            char shape[96];
            format_shape(ti, shape, sizeof shape);
            return gs_kb_failf(kb, file, line, GS_ERR_BOUNDS,
                               "%s %s: elements [%" PRId64 ", %" PRId64
                               ") outside tensor '%s' of %" PRIu64 " elements (shape %s %s); "
                               "size the view from the tensor's shape (gs_tensor.shape)",
                               op, what, lo, hi, ti->name, ti->elems, shape,
                               gs_dtype_name(ti->dtype));
        }
        return GS_OK;
    }
    const gs_buffer_info *bi = gs_program_buffer(kb->p, a->tensor);
    if (!bi || bi->space != a->space || bi->core != a->core)
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                           "%s %s: not an allocated %s tile of core %u", op, what,
                           gs_memspace_name(a->space), kb->core);
    return GS_OK;
}

/* A handle `gen` to the buffer of `a` (an SBUF/PSUM operand that passed check_ap_fixed) whose
 * pool has since given the buffer to a newer tile: the handle would read or write that tile's
 * data. Names the handle's tile, the pool, and where the tile now in the buffer came from; the
 * error's file:line is the instruction's. */
static gs_status stale_tile(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                            const gs_ap *a, uint16_t gen, const char *what)
{
    const gs_buffer_info *bi = gs_program_buffer(kb->p, a->tensor);
    const tile_alloc *now = &kb->tr->alloc[a->tensor];
    char pool[48];
    pool_label(bi, pool, sizeof pool);
    if (gen == 0)
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                           "%s %s: a pattern of buffer '%s' (pool '%s') that no gs_tile_alloc "
                           "made (view tiles with gs_tile_view; the buffer holds tile %u, "
                           "allocated at %s:%d)",
                           gs_opcode_name(in->op), what, bi->name, pool, (unsigned)now->gen,
                           now->file ? now->file : "?", (int)now->line);
    return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                       "%s %s: stale tile: tile %u of pool '%s' (buffer '%s') used after the "
                       "pool gave its buffer to tile %u (allocated at %s:%d), whose data it "
                       "would see; use a tile before allocating past it, or give the pool more "
                       "buffers (a pool of N buffers hands each one out again every N "
                       "allocations)",
                       gs_opcode_name(in->op), what, (unsigned)gen, pool, bi->name,
                       (unsigned)now->gen, now->file ? now->file : "?", (int)now->line);
}

/* The rest of the checks of an SBUF/PSUM operand that passed check_ap_fixed (bounding box lo,
 * hi): the builder's core and the current state of its buffer (released, the tile in it). */
static gs_status check_ap_tile(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                               const gs_ap *a, const char *what, int64_t lo, int64_t hi)
{
    const gs_buffer_info *bi = gs_program_buffer(kb->p, a->tensor);
    if (a->core != kb->core)
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID, "%s %s: tile of core %u used on core %u",
                           gs_opcode_name(in->op), what, a->core, kb->core);
    if (kb->tr->released[a->tensor])
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                           "%s %s: tile of buffer '%s' used after its pool was released",
                           gs_opcode_name(in->op), what, bi->name);
    uint32_t tparts = kb->tr->tile_parts[a->tensor];
    uint64_t tbytes = kb->tr->tile_bytes[a->tensor];
    if ((uint64_t)a->part_start + a->part_count > tparts ||
        (lo < (int64_t)bi->offset || hi > (int64_t)(bi->offset + tbytes))) {
        /* a pattern widened by hand past its tile (a view of an older tile of the buffer is
         * refused as stale before this: stale_tile) */
        char pool[48], cap[96];
        pool_label(bi, pool, sizeof pool);
        partitions_cap(kb, a->space, cap, sizeof cap);
        if ((uint64_t)a->part_start + a->part_count > tparts)
            return gs_kb_failf(kb, file, line, GS_ERR_BOUNDS,
                               "%s %s: partitions [%u, %u) outside its tile's %u partitions "
                               "(pool '%s', buffer '%s'; a pattern changed by hand?); "
                               "size views from the tile (gs_tile_alloc) and the target: %s",
                               gs_opcode_name(in->op), what, a->part_start,
                               a->part_start + a->part_count, tparts, pool, bi->name, cap);
        return gs_kb_failf(kb, file, line, GS_ERR_BOUNDS,
                           "%s %s: bytes [%" PRId64 ", %" PRId64
                           ") of each partition outside its tile (%" PRIu64
                           " bytes in pool '%s', buffer '%s'; a pattern changed by hand?); "
                           "size views from the tile (gs_tile_alloc)",
                           gs_opcode_name(in->op), what, lo - (int64_t)bi->offset,
                           hi - (int64_t)bi->offset, tbytes, pool, bi->name);
    }
    return GS_OK;
}

static gs_status check_ap(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                          const gs_ap *a, const char *what)
{
    int64_t lo, hi;
    if (check_ap_fixed(kb, file, line, in, a, what, &lo, &hi)) return kb->err.code;
    if (a->space == GS_MEM_HBM) return GS_OK;
    if (a->core == kb->core && !kb->tr->released[a->tensor] &&
        a->gen != kb->tr->alloc[a->tensor].gen)
        return stale_tile(kb, file, line, in, a, a->gen, what);
    return check_ap_tile(kb, file, line, in, a, what, lo, hi);
}

/* Whether check_ap_tile passes, without forming its messages: its conditions, with the buffer's
 * offset from the pattern's facts (GS_FACT_CHECKED). */
static inline int tile_ok(const gs_kb *kb, const gs_ap *a, const gs_ap_facts *f)
{
    const tracker *t = kb->tr;
    return a->core == kb->core && !t->released[a->tensor] &&
           (uint64_t)a->part_start + a->part_count <= t->tile_parts[a->tensor] &&
           f->lo >= (int64_t)f->buf_offset &&
           f->hi <= (int64_t)(f->buf_offset + t->tile_bytes[a->tensor]);
}

/* check_ap of an interned operand (program.h): the fixed checks once per distinct pattern, the
 * tile's state on every use (its messages formed by check_ap_tile when it fails). `gen` is the
 * kernel's handle's allocation number (the draft's operand: the interned copy's is not the
 * handle's). */
static gs_status check_operand(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                               const gs_ap *a, gs_ap_facts *f, uint16_t gen, const char *what)
{
    if (!(f->known & GS_FACT_CHECKED)) {
        int64_t lo, hi;
        if (check_ap_fixed(kb, file, line, in, a, what, &lo, &hi)) return kb->err.code;
        if (a->space != GS_MEM_HBM) f->buf_offset = gs_program_buffer(kb->p, a->tensor)->offset;
        f->known |= GS_FACT_CHECKED;
    }
    if (a->space == GS_MEM_HBM) return GS_OK;
    const gs_ap_facts *x = gs_ap_footprint(a, f);
    if (tile_ok(kb, a, x) && gen == kb->tr->alloc[a->tensor].gen) return GS_OK;
    if (a->core == kb->core && !kb->tr->released[a->tensor] && gen != kb->tr->alloc[a->tensor].gen)
        return stale_tile(kb, file, line, in, a, gen, what);
    return check_ap_tile(kb, file, line, in, a, what, x->lo, x->hi);
}

/* Compute engines address a tile from partition 0, 32, 64 or 96 depending on its span (with 128
 * partitions in core.partition_quadrants = 4 quarters). */
static gs_status check_alignment(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                                 const gs_ap *a, const char *what)
{
    if (a->space == GS_MEM_HBM) return GS_OK;
    unsigned q = kb->caps.partitions / (unsigned)kb->cfg->partition_quadrants.v;
    if (q == 0) return GS_OK;
    unsigned span = a->part_count;
    unsigned align = span > 2 * q ? kb->caps.partitions : span > q ? 2 * q : q;
    if (a->part_start % align != 0 ||
        (a->part_start % kb->caps.partitions) + span > kb->caps.partitions)
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                           "%s %s: start partition %u not allowed for %u partitions (must be a "
                           "multiple of %u)",
                           gs_opcode_name(in->op), what, a->part_start, span, align);
    return GS_OK;
}

/* check_alignment of an interned operand: its result depends on the pattern and the config
 * alone, so a pass is kept (GS_FACT_ALIGNED) and not repeated. */
static gs_status check_aligned(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                               const gs_ap *a, gs_ap_facts *f, const char *what)
{
    if (f->known & GS_FACT_ALIGNED) return GS_OK;
    if (check_alignment(kb, file, line, in, a, what)) return kb->err.code;
    f->known |= GS_FACT_ALIGNED;
    return GS_OK;
}

static gs_status check_free_limit(gs_kb *kb, const char *file, int line, const gs_instr_draft *in)
{
    int psum = 0;
    uint64_t n = 0;
    for (int k = 0; k < in->n_in; k++) {
        psum |= in->in[k].space == GS_MEM_PSUM;
        n = GS_MAX(n, gs_kb_free_elems(&in->in[k]));
    }
    for (int k = 0; k < in->n_out; k++) {
        psum |= in->out[k].space == GS_MEM_PSUM;
        n = GS_MAX(n, gs_kb_free_elems(&in->out[k]));
    }
    uint64_t lim = psum ? kb->caps.max_free_psum : kb->caps.max_free_sbuf;
    if (lim && n > lim)
        return gs_kb_failf(kb, file, line, GS_ERR_INVALID,
                           "%s: free size %" PRIu64 " exceeds the engine limit of %" PRIu64
                           " elements %s (caps.max_free_%s, engines.vector.max_free_%s)",
                           gs_opcode_name(in->op), n, lim, psum ? "from PSUM" : "from SBUF",
                           psum ? "psum" : "sbuf", psum ? "psum" : "sbuf");
    return GS_OK;
}

/* Validate generic properties, derive dependencies and append. */
/* For the operations of kb_ops.c; emit() calls the static forms (inlined on its hot path). */
gs_status gs_kb_check_ap(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                         const gs_ap *a, const char *what)
{
    return check_ap(kb, file, line, in, a, what);
}

gs_status gs_kb_check_alignment(gs_kb *kb, const char *file, int line, const gs_instr_draft *in,
                                const gs_ap *a, const char *what)
{
    return check_alignment(kb, file, line, in, a, what);
}

gs_status gs_kb_emit(gs_kb *kb, const char *file, int line, gs_instr_draft *in)
{
    if (kb->failed) return kb->err.code;
    in->core = (uint16_t)kb->core;
    in->file = file;
    in->line = line;
    if (!(kb->cfg->ops & (1ull << in->op)))
        return gs_kb_failf(kb, file, line, GS_ERR_UNSUPPORTED, "unsupported: %s on this target",
                           gs_opcode_name(in->op));
    if (!((unsigned)in->engine < GS_ENGINE_COUNT && (kb->engines >> in->engine) & 1u))
        return gs_kb_failf(kb, file, line, GS_ERR_UNSUPPORTED,
                           "unsupported: %s on the %s engine (not present on this target)",
                           gs_opcode_name(in->op), gs_engine_name(in->engine));
    /* every slot interned once, here: the checks, the tracker and the append share the copies
     * and the facts kept per distinct pattern */
    gs_kb_operands ops;
    if (!gs_program_intern_operands(kb->p, in, ops.out, ops.fout, ops.in, ops.fin))
        return gs_kb_failf(kb, file, line, GS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < in->n_out; k++) {
        if (check_operand(kb, file, line, in, ops.out[k], ops.fout[k], in->out[k].gen,
                          operand_name(1, k)))
            return kb->err.code;
        if (in->engine != GS_ENG_DMA &&
            check_aligned(kb, file, line, in, ops.out[k], ops.fout[k], operand_name(1, k)))
            return kb->err.code;
    }
    for (int k = 0; k < in->n_in; k++) {
        if (ops.in[k]->tensor < 0) continue;
        if (check_operand(kb, file, line, in, ops.in[k], ops.fin[k], in->in[k].gen,
                          operand_name(0, k)))
            return kb->err.code;
        if (in->engine != GS_ENG_DMA && in->op != GS_OP_GATHER &&
            check_aligned(kb, file, line, in, ops.in[k], ops.fin[k], operand_name(0, k)))
            return kb->err.code;
    }
    if (in->engine != GS_ENG_DMA && in->engine != GS_ENG_TENSOR && in->op != GS_OP_GATHER &&
        check_free_limit(kb, file, line, in))
        return kb->err.code;

    if (!gs_kb_deps_append(kb, in, &ops))
        return gs_kb_failf(kb, file, line, GS_ERR_NOMEM, "out of memory");
    return GS_OK;
}

/* The common one-output, one-input form. */
gs_status gs_kb_emit_out_in(gs_kb *kb, const char *file, int line, gs_instr_draft *in, gs_ap out,
                            gs_ap src)
{
    in->out[0] = out;
    in->in[0] = src;
    in->n_out = 1;
    in->n_in = 1;
    return gs_kb_emit(kb, file, line, in);
}
