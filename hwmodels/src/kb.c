/*
 * kb.c - the kernel builder: capabilities, SBUF/PSUM pools and tiles, views, operand validation
 * and the instruction API (see gs/kernel.h). Each instruction's dependencies are derived by the
 * tracker in deps.c (kb_deps.h).
 */
#include "gs/kernel.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/family.h"
#include "kb_deps.h"
#include "program.h"

#define POOL_ALIGN 64 /* bytes: SBUF pool buffers start on this boundary (assumption) */

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
        gs_program_set_builder_state(p, kb->tr, gs_kb_tracker_free);
    }
    if (core >= kb->caps.cores)
        kb_fail(kb, NULL, 0, GS_ERR_INVALID, "core %u does not exist (target has %u cores)", core,
                kb->caps.cores);
    return kb;
}

void gs_kb_free(gs_kb *kb)
{
    if (!kb) return;
    for (size_t i = 0; i < kb->n_pools; i++)
        gs_free(kb->pools[i]);
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
                "pool '%s': %u buffers of %" PRIu64 " bytes (need 1..64 buffers, > 0 bytes)", name,
                bufs, bytes_per_partition);
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
        if (id < 0 || !gs_kb_tracker_note_buffer(kb->tr, id)) {
            gs_free(pool);
            kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
            return NULL;
        }
        if (b == 0) pool->first_buffer = id;
    }
    if (!gs_kb_inherit_history(kb, pool)) {
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
        for (unsigned b = 0; b < q->bufs; b++)
            kb->tr->released[q->first_buffer + (int32_t)b] = 1;
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

static gs_status check_ap(gs_kb *kb, const char *file, int line, const gs_instr *in, const gs_ap *a,
                          const char *what)
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
        return kb_fail(kb, file, line, GS_ERR_UNSUPPORTED,
                       "unsupported: %s %s dtype %s on this target", op, what,
                       gs_dtype_name(a->dtype));
    int64_t lo, hi;
    gs_kb_ap_bbox(a, &lo, &hi);
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
                           "%s %s: elements [%" PRId64 ", %" PRId64
                           ") outside tensor '%s' of %" PRIu64 " elements",
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
    if (a->part_start % align != 0 ||
        (a->part_start % kb->caps.partitions) + span > kb->caps.partitions)
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
        if (check_ap(kb, file, line, in, &in->out[k], operand_name(1, k))) return kb->err.code;
        if (in->engine != GS_ENG_DMA &&
            check_alignment(kb, file, line, in, &in->out[k], operand_name(1, k)))
            return kb->err.code;
    }
    for (int k = 0; k < in->n_in; k++) {
        if (in->in[k].tensor < 0) continue;
        if (check_ap(kb, file, line, in, &in->in[k], operand_name(0, k))) return kb->err.code;
        if (in->engine != GS_ENG_DMA && in->op != GS_OP_GATHER &&
            check_alignment(kb, file, line, in, &in->in[k], operand_name(0, k)))
            return kb->err.code;
    }
    if (in->engine != GS_ENG_DMA && in->engine != GS_ENG_TENSOR && in->op != GS_OP_GATHER &&
        check_free_limit(kb, file, line, in))
        return kb->err.code;

    if (!gs_kb_deps_append(kb, in)) return kb_fail(kb, file, line, GS_ERR_NOMEM, "out of memory");
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
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        in->in[k].tensor = -1;
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        in->out[k].tensor = -1;
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
            GS_ERR_INVALID,
            "dma_transpose: output must be [%" PRIu64 " x %u], is [%u x %" PRIu64 "]",
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
    gs_kb_ap_bbox(a, &lo, &hi);
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
    REQUIRE((c->matmul_dtypes & (1u << stationary.dtype)) &&
                (c->matmul_dtypes & (1u << moving.dtype)),
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

gs_status gs_activation_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap src, gs_act func,
                           gs_operand scale, gs_operand bias, const gs_ap *acc_out)
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
            "tensor_tensor: shapes differ (out %u x %" PRIu64 ", a %u x %" PRIu64
            ", b %u x %" PRIu64 ")",
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
    REQUIRE(same_shape(&out, &src), GS_ERR_INVALID,
            "tensor_scalar: input and output shapes differ");
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
    for (int k = 0; k < src.ndim - axes; k++)
        outer *= src.shape[k];
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
    REQUIRE(src.part_count == 1 && gs_ap_free_elems(&out) == gs_ap_free_elems(&src), GS_ERR_INVALID,
            "partition_broadcast: input must be one partition of the output's size");
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
