/*
 * exec.c - device memory images and the functional semantics of every instruction.
 *
 * Data is held encoded (bf16 = 2 bytes per element); arithmetic is fp32 as on the engines,
 * rounded to the output dtype (round-to-nearest-even). Matmul multiplies the converted fp32
 * tiles with OpenBLAS sgemm (single-threaded, so results are the same on every run) and
 * accumulates in fp32 PSUM. Reductions (activation accumulate, tensor_reduce add, bn_stats)
 * accumulate in double and round once; this is documented as a modelling choice.
 */
#include "gs/exec.h"

#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "gs/config.h"
#include "gs/dtype.h"
#include "ops_topk.h"

struct gs_mem {
    const gs_program *p;
    void **tensors;
    size_t n_tensors;
    unsigned cores;
    unsigned partitions;
    /* bytes from one partition to the next in space[s][c]: the furthest byte any buffer or
     * operand of the program addresses in a partition, not the partition's full size */
    size_t stride[GS_MEMSPACE_COUNT];
    uint8_t *space[GS_MEMSPACE_COUNT][GS_MAX_CORES];
    float *scratch[4];
    size_t scratch_n[4];
};

/* Set every SBUF/PSUM byte the program's buffers cover (all of SBUF/PSUM for a hand-made
 * program without buffers). Nothing else is ever addressed: every SBUF/PSUM operand is
 * bounds-checked against its tile. Touching all of SBUF (24-28 MiB per core) instead cost each
 * short check job ~8K page faults, about half of its run time. */
static void fill_buffers(gs_mem *m, uint8_t byte)
{
    size_t nb = gs_program_buffer_count(m->p);
    if (nb == 0) {
        for (unsigned c = 0; c < m->cores; c++)
            for (int s = GS_MEM_SBUF; s <= GS_MEM_PSUM; s++)
                memset(m->space[s][c], byte, m->partitions * m->stride[s]);
        return;
    }
    for (size_t b = 0; b < nb; b++) {
        const gs_buffer_info *bi = gs_program_buffer(m->p, (int32_t)b);
        if (!bi || (bi->space != GS_MEM_SBUF && bi->space != GS_MEM_PSUM)) continue;
        if (bi->core >= m->cores) continue;
        size_t pb = m->stride[bi->space];
        if (bi->offset >= pb) continue;
        size_t len = (size_t)GS_MIN(bi->bytes, pb - bi->offset);
        uint8_t *base = m->space[bi->space][bi->core];
        for (uint32_t p = bi->part_start; p < bi->part_start + bi->part_count && p < m->partitions;
             p++)
            memset(base + (size_t)p * pb + bi->offset, byte, len);
    }
}

/* One past the last byte of a partition-row that pattern `a` touches, or `full` when it could
 * reach outside [0, full) (then the space keeps its full partition size). */
static size_t pattern_end(const gs_ap *a, size_t full)
{
    const int64_t es = (int64_t)gs_dtype_size(a->dtype);
    int64_t lo = 0, hi = 0;
    for (unsigned k = 0; k < a->ndim && k < GS_AP_MAX_DIMS; k++) {
        if (a->shape[k] == 0) return 0; /* empty: touches nothing */
        const int64_t span = (int64_t)(a->shape[k] - 1) * a->stride[k];
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    const int64_t first = a->offset + lo * es, end = a->offset + (hi + 1) * es;
    if (first < 0 || end < 0 || (uint64_t)end > full) return full;
    return (size_t)end;
}

/*
 * Partition stride of SBUF and PSUM: the end of the furthest buffer or operand in each space
 * over every core (64-byte aligned), all of the partition for a program without buffers. A check
 * job addresses a few KiB of each 192 KiB SBUF partition; packing the partitions at that stride
 * instead of the hardware's keeps the pages it touches (and their first-touch faults) to the
 * bytes used.
 */
static void space_strides(const gs_program *p, const size_t full[GS_MEMSPACE_COUNT],
                          size_t stride[GS_MEMSPACE_COUNT])
{
    const size_t nb = gs_program_buffer_count(p);
    size_t end[GS_MEMSPACE_COUNT] = {0};
    for (size_t b = 0; b < nb; b++) {
        const gs_buffer_info *bi = gs_program_buffer(p, (int32_t)b);
        if (bi->space == GS_MEM_SBUF || bi->space == GS_MEM_PSUM)
            end[bi->space] = GS_MAX(end[bi->space], bi->offset + bi->bytes);
    }
    for (size_t i = 0, n = nb ? gs_program_count(p) : 0; i < n; i++) {
        const gs_instr *in = gs_program_instr(p, i);
        const int n_out = in->op == GS_OP_MATMUL_MX ? 2 : in->n_out;
        for (int k = 0; k < in->n_in + n_out; k++) {
            const gs_ap *a = k < in->n_in ? in->in[k] : in->out[k - in->n_in];
            if ((a->space == GS_MEM_SBUF || a->space == GS_MEM_PSUM) && a->tensor >= 0)
                end[a->space] = GS_MAX(end[a->space], pattern_end(a, full[a->space]));
        }
    }
    for (int s = GS_MEM_SBUF; s <= GS_MEM_PSUM; s++) {
        const size_t e = (end[s] + 63) & ~(size_t)63;
        stride[s] = nb == 0 ? full[s] : e == 0 ? 64 : GS_MIN(e, full[s]);
    }
}

gs_mem *gs_mem_create(const gs_program *p, gs_error *err)
{
    return gs_mem_create_filled(p, 0, err);
}

gs_mem *gs_mem_create_filled(const gs_program *p, uint8_t fill, gs_error *err)
{
    const gs_config *cfg = gs_program_config(p);
    gs_mem *m = gs_calloc(1, sizeof *m);
    if (!m) goto oom;
    m->p = p;
    m->n_tensors = gs_program_tensor_count(p);
    m->tensors = gs_calloc(m->n_tensors ? m->n_tensors : 1, sizeof *m->tensors);
    if (!m->tensors) goto oom;
    for (size_t t = 0; t < m->n_tensors; t++) {
        m->tensors[t] = gs_calloc(1, gs_program_tensor(p, (int32_t)t)->bytes);
        if (!m->tensors[t]) goto oom;
    }
    m->cores = gs_program_cores_used(p);
    if (m->cores > GS_MAX_CORES) m->cores = GS_MAX_CORES;
    m->partitions = (unsigned)cfg->partitions.v;
    const size_t full[GS_MEMSPACE_COUNT] = {
        [GS_MEM_SBUF] = gs_config_sbuf_partition_bytes(cfg),
        [GS_MEM_PSUM] = gs_config_psum_partition_bytes(cfg),
    };
    space_strides(p, full, m->stride);
    for (unsigned c = 0; c < m->cores; c++)
        for (int s = GS_MEM_SBUF; s <= GS_MEM_PSUM; s++) {
            size_t bytes;
            if (!gs_size_mul(m->partitions, m->stride[s], &bytes)) goto oom;
            /* not gs_calloc: fill_buffers sets every byte that can be addressed */
            m->space[s][c] = gs_malloc(bytes);
            if (!m->space[s][c]) goto oom;
            gs_prefault(m->space[s][c], bytes);
        }
    fill_buffers(m, fill);
    /* one thread: identical results on every run, and the sweep runs jobs in parallel. Only
     * when not set yet: the call restarts OpenBLAS's worker threads in a forked process */
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
    return m;
oom:
    gs_mem_free(m);
    gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory allocating device memory");
    return NULL;
}

void gs_mem_free(gs_mem *m)
{
    if (!m) return;
    if (m->tensors)
        for (size_t t = 0; t < m->n_tensors; t++)
            gs_free(m->tensors[t]);
    gs_free(m->tensors);
    for (unsigned c = 0; c < GS_MAX_CORES; c++)
        for (int s = 0; s < GS_MEMSPACE_COUNT; s++)
            gs_free(m->space[s][c]);
    for (int i = 0; i < 4; i++)
        gs_free(m->scratch[i]);
    gs_free(m);
}

void *gs_mem_tensor(gs_mem *m, int32_t id)
{
    if (!m || id < 0 || (size_t)id >= m->n_tensors) return NULL;
    return m->tensors[id];
}

uint8_t *gs_mem_space(gs_mem *m, gs_memspace space, unsigned core)
{
    if (!m || (space != GS_MEM_SBUF && space != GS_MEM_PSUM) || core >= m->cores) return NULL;
    return m->space[space][core];
}

size_t gs_mem_partition_stride(const gs_mem *m, gs_memspace space)
{
    if (!m || (space != GS_MEM_SBUF && space != GS_MEM_PSUM)) return 0;
    return m->stride[space];
}

void gs_mem_poison(gs_mem *m, uint8_t byte)
{
    fill_buffers(m, byte);
}

static float *scratch(gs_mem *m, int slot, size_t n)
{
    if (n <= m->scratch_n[slot]) return m->scratch[slot];
    float *f = gs_realloc(m->scratch[slot], n * sizeof *f);
    if (!f) return NULL;
    m->scratch[slot] = f;
    m->scratch_n[slot] = n;
    return f;
}

/* ---- element addressing ---- */

/* Pointer to element (p, 0, 0, ...) of pattern a; element strides are a->stride. */
static uint8_t *row_base(gs_mem *m, const gs_ap *a, uint32_t p)
{
    size_t es = gs_dtype_size(a->dtype);
    if (a->space == GS_MEM_HBM) {
        uint8_t *t = m->tensors[a->tensor];
        return t + (a->offset + (int64_t)p * a->part_stride) * (int64_t)es;
    }
    uint8_t *s = m->space[a->space][a->core];
    return s + (size_t)(a->part_start + p) * m->stride[a->space] + a->offset;
}

/* Visit the innermost runs of one partition-row: fn(ptr, stride, n, flat_index). */
#define FOR_EACH_RUN(m, a, p, BODY)                                                                \
    do {                                                                                           \
        const gs_ap *ap_ = (a);                                                                    \
        uint8_t *base_ = row_base((m), ap_, (p));                                                  \
        size_t es_ = gs_dtype_size(ap_->dtype);                                                    \
        int nd_ = ap_->ndim;                                                                       \
        uint32_t sh_[4] = {1, 1, 1, 1};                                                            \
        int64_t st_[4] = {0, 0, 0, 0};                                                             \
        for (int k_ = 0; k_ < nd_; k_++) {                                                         \
            sh_[4 - nd_ + k_] = ap_->shape[k_];                                                    \
            st_[4 - nd_ + k_] = ap_->stride[k_];                                                   \
        }                                                                                          \
        size_t flat_ = 0;                                                                          \
        for (uint32_t i0 = 0; i0 < sh_[0]; i0++)                                                   \
            for (uint32_t i1 = 0; i1 < sh_[1]; i1++)                                               \
                for (uint32_t i2 = 0; i2 < sh_[2]; i2++) {                                         \
                    uint8_t *run_ptr =                                                             \
                        base_ + (i0 * st_[0] + i1 * st_[1] + i2 * st_[2]) * (int64_t)es_;          \
                    int64_t run_stride = st_[3];                                                   \
                    size_t run_n = sh_[3];                                                         \
                    size_t run_flat = flat_;                                                       \
                    BODY;                                                                          \
                    flat_ += run_n;                                                                \
                }                                                                                  \
    } while (0)

static void load_row(gs_mem *m, const gs_ap *a, uint32_t p, float *dst)
{
    FOR_EACH_RUN(m, a, p, gs_dtype_to_f32(ap_->dtype, run_ptr, run_stride, dst + run_flat, run_n));
}

static void store_row(gs_mem *m, const gs_ap *a, uint32_t p, const float *src)
{
    FOR_EACH_RUN(m, a, p,
                 gs_dtype_from_f32(ap_->dtype, src + run_flat, run_ptr, run_stride, run_n));
}

/* Raw byte copy of one row's elements into/out of a packed buffer (same dtype: exact, keeps NaN
 * payloads). */
static void gather_bytes(gs_mem *m, const gs_ap *a, uint32_t p, uint8_t *dst)
{
    FOR_EACH_RUN(m, a, p, {
        if (run_stride == 1) {
            memcpy(dst + run_flat * es_, run_ptr, run_n * es_);
        } else {
            for (size_t e = 0; e < run_n; e++)
                memcpy(dst + (run_flat + e) * es_, run_ptr + (int64_t)e * run_stride * (int64_t)es_,
                       es_);
        }
    });
}

static void scatter_bytes(gs_mem *m, const gs_ap *a, uint32_t p, const uint8_t *src)
{
    FOR_EACH_RUN(m, a, p, {
        if (run_stride == 1) {
            memcpy(run_ptr, src + run_flat * es_, run_n * es_);
        } else {
            for (size_t e = 0; e < run_n; e++)
                memcpy(run_ptr + (int64_t)e * run_stride * (int64_t)es_, src + (run_flat + e) * es_,
                       es_);
        }
    });
}

/* Per-partition scalar operand: in[k] if flag set, else the immediate. */
static float operand(gs_mem *m, const gs_instr *in, int k, uint32_t flag, float imm, uint32_t p)
{
    if (!(in->flags & flag)) return imm;
    float v = 0.0f;
    load_row(m, in->in[k], p, &v);
    return v;
}

/* printf-checked: the format names what went wrong and the values that made it wrong. */
static gs_status fail(const gs_instr *in, gs_error *err, gs_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static gs_status fail(const gs_instr *in, gs_error *err, gs_status code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gs_error_set(err, code, in->file, in->line, 0, "%s: %s", gs_opcode_name(in->op), msg);
}

/* c[M x N] (+)= a[K x M]^T b[K x N] into out (fp32 PSUM in place when dense, else through a
 * scratch and the output dtype's rounding). */
static gs_status mm_finish(gs_mem *m, const gs_instr *in, gs_error *err, const float *a,
                           const float *b, size_t K, size_t M, size_t N)
{
    const gs_ap *out = in->out[0];
    float beta = (in->flags & GS_F_ACCUMULATE) ? 1.0f : 0.0f;
    if (out->ndim == 1 && out->stride[0] == 1 && out->dtype == GS_FP32) {
        /* dense fp32 PSUM rows: sgemm writes in place, partition stride as ldc */
        float *c = (float *)row_base(m, out, 0);
        int ldc = (int)(m->stride[GS_MEM_PSUM] / sizeof(float));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a,
                    (int)M, b, (int)N, beta, c, ldc);
        return GS_OK;
    }
    float *c = scratch(m, 2, M * N);
    if (!c) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (size_t i = 0; i < M; i++) {
        if (beta != 0.0f)
            load_row(m, out, (uint32_t)i, c + i * N);
        else
            memset(c + i * N, 0, N * sizeof *c);
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a, (int)M, b,
                (int)N, 1.0f, c, (int)N);
    for (size_t i = 0; i < M; i++)
        store_row(m, out, (uint32_t)i, c + i * N);
    return GS_OK;
}

static gs_status exec_matmul(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *st = in->in[0], *mv = in->in[1];
    /* Double row: row p of [P, 2, M] is [half 0: M][half 1: M], which is rows 2p and 2p+1 of a
     * [2P x M] operand, so the same loads give the 2P contraction. */
    size_t h = (in->flags & GS_F_DOUBLE_ROW) ? 2 : 1;
    size_t K = (size_t)st->part_count * h;
    size_t M = gs_ap_free_elems(st) / h, N = gs_ap_free_elems(mv) / h;
    float *a = scratch(m, 0, K * M), *b = scratch(m, 1, K * N);
    if (!a || !b) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < st->part_count; p++) {
        load_row(m, st, p, a + (size_t)p * h * M);
        load_row(m, mv, p, b + (size_t)p * h * N);
    }
    return mm_finish(m, in, err, a, b, K, M, N);
}

/* The raw bytes of row p of a pattern into a packed buffer (any dtype). */
static void row_bytes(gs_mem *m, const gs_ap *a, uint32_t p, uint8_t *dst)
{
    gather_bytes(m, a, p, dst);
}

/* Scale row of data partition p (gs/isa.h: row 32*(p/32) + (p%32)/8 of the scale tile). */
static uint32_t mx_scale_row(uint32_t p)
{
    return 32u * (p / 32u) + (p % 32u) / 8u;
}

/* Decode an MX operand [P, X] x4 with its scales into a [4P x X] fp32 matrix: row 4p + j holds
 * lane j of partition p, times the scale of its group. */
static gs_status mx_decode(gs_mem *m, const gs_instr *in, gs_error *err, const gs_ap *d,
                           const gs_ap *s, float *out, int slot)
{
    uint32_t P = d->part_count;
    size_t X = gs_ap_free_elems(d);
    uint8_t *raw = (uint8_t *)scratch(m, slot, (X * gs_dtype_size(d->dtype) + 3) / 4 + X);
    if (!raw) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    uint8_t *sc = raw + ((X * gs_dtype_size(d->dtype) + 3) / 4) * 4;
    for (uint32_t p = 0; p < P; p++) {
        row_bytes(m, d, p, raw);
        row_bytes(m, s, mx_scale_row(p), sc);
        for (size_t x = 0; x < X; x++) {
            float scale = gs_e8m0_to_f32(sc[x]);
            for (int j = 0; j < GS_MX_LANES; j++)
                out[((size_t)p * GS_MX_LANES + (size_t)j) * X + x] =
                    gs_mx_lane(d->dtype, raw, x, j) * scale;
        }
    }
    return GS_OK;
}

/* matmul_mx: both operands dequantised exactly (an MX value times a power-of-two scale is exact
 * in fp32), then the fp32 product as for matmul. */
static gs_status exec_matmul_mx(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *st = in->in[0], *mv = in->in[1];
    size_t K = (size_t)st->part_count * GS_MX_LANES;
    size_t M = gs_ap_free_elems(st), N = gs_ap_free_elems(mv);
    float *a = scratch(m, 0, K * M), *b = scratch(m, 1, K * N);
    if (!a || !b) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    gs_status rc = mx_decode(m, in, err, st, in->in[2], a, 2);
    if (rc == GS_OK) rc = mx_decode(m, in, err, mv, GS_MX_MOVING_SCALE(in), b, 3);
    if (rc != GS_OK) return rc;
    return mm_finish(m, in, err, a, b, K, M, N);
}

/* quantize_mx: each group of 8 partitions x 4 consecutive values -> one scale and 32 codes. */
static gs_status exec_quantize_mx(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *src = in->in[0], *dst = in->out[0], *sc = in->out[1];
    uint32_t P = src->part_count;
    size_t F = gs_ap_free_elems(src), X = F / GS_MX_LANES;
    size_t es = gs_dtype_size(dst->dtype);
    float *v = scratch(m, 0, 8 * F);
    uint8_t *codes = (uint8_t *)scratch(m, 1, (8 * X * es + X + 32 + 3) / 4);
    if (!v || !codes)
        return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    uint8_t *packed = codes + 32, *srow = packed + 8 * X * es;
    for (uint32_t g0 = 0; g0 < P; g0 += 8) {
        for (uint32_t r = 0; r < 8; r++)
            load_row(m, src, g0 + r, v + (size_t)r * F);
        /* gather_bytes keeps the parts of the rows this instruction does not write */
        for (uint32_t r = 0; r < 8; r++)
            row_bytes(m, dst, g0 + r, packed + (size_t)r * X * es);
        row_bytes(m, sc, mx_scale_row(g0), srow);
        for (size_t x = 0; x < X; x++) {
            float grp[32];
            for (uint32_t r = 0; r < 8; r++)
                for (int j = 0; j < GS_MX_LANES; j++)
                    grp[r * GS_MX_LANES + (uint32_t)j] =
                        v[(size_t)r * F + x * GS_MX_LANES + (size_t)j];
            srow[x] = gs_mx_quantize_group(dst->dtype, grp, 32, codes);
            for (uint32_t r = 0; r < 8; r++)
                for (int j = 0; j < GS_MX_LANES; j++)
                    gs_mx_set_lane(dst->dtype, packed + (size_t)r * X * es, x, j,
                                   codes[r * GS_MX_LANES + (uint32_t)j]);
        }
        for (uint32_t r = 0; r < 8; r++)
            scatter_bytes(m, dst, g0 + r, packed + (size_t)r * X * es);
        scatter_bytes(m, sc, mx_scale_row(g0), srow);
    }
    return GS_OK;
}

/* out[F, P] = in[P, F] (values, with dtype conversion through fp32). */
static gs_status exec_transpose(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *src = in->in[0], *out = in->out[0];
    uint32_t P = src->part_count;
    size_t F = gs_ap_free_elems(src);
    float *a = scratch(m, 0, (size_t)P * F), *row = scratch(m, 1, P);
    if (!a || !row) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < P; p++)
        load_row(m, src, p, a + (size_t)p * F);
    for (size_t f = 0; f < F; f++) {
        for (uint32_t p = 0; p < P; p++)
            row[p] = a[(size_t)p * F + f];
        store_row(m, out, (uint32_t)f, row);
    }
    return GS_OK;
}

static gs_status exec_dma_copy(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *src = in->in[0], *dst = in->out[0];
    if (src->dtype != dst->dtype) {
        /* a converting copy (core.dma.cast): through fp32, which holds every castable dtype
         * exactly; the store rounds to nearest even */
        float *row = (float *)scratch(m, 0, gs_ap_free_elems(src));
        if (!row) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
        for (uint32_t p = 0; p < src->part_count; p++) {
            load_row(m, src, p, row);
            store_row(m, dst, p, row);
        }
        return GS_OK;
    }
    size_t bytes = gs_ap_free_elems(src) * gs_dtype_size(src->dtype);
    uint8_t *buf = (uint8_t *)scratch(m, 0, (bytes + 3) / 4);
    if (!buf) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < src->part_count; p++) {
        gather_bytes(m, src, p, buf);
        scatter_bytes(m, dst, p, buf);
    }
    return GS_OK;
}

static gs_status exec_dma_transpose(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *src = in->in[0], *dst = in->out[0];
    uint32_t P = src->part_count;
    size_t F = gs_ap_free_elems(src), es = gs_dtype_size(src->dtype);
    uint8_t *a = (uint8_t *)scratch(m, 0, ((size_t)P * F * es + 3) / 4);
    uint8_t *row = (uint8_t *)scratch(m, 1, ((size_t)P * es + 3) / 4);
    if (!a || !row) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < P; p++)
        gather_bytes(m, src, p, a + (size_t)p * F * es);
    for (size_t f = 0; f < F; f++) {
        for (uint32_t p = 0; p < P; p++)
            memcpy(row + p * es, a + ((size_t)p * F + f) * es, es);
        scatter_bytes(m, dst, (uint32_t)f, row);
    }
    return GS_OK;
}

/* iimm: the instruction's integer immediates (gs_program_iimm) */
static gs_status exec_elementwise(gs_mem *m, const gs_instr *in, const int64_t *iimm, gs_error *err)
{
    const gs_ap *out = in->out[0];
    size_t n = gs_ap_free_elems(out);
    float *x = scratch(m, 0, n), *y = scratch(m, 1, n);
    if (!x || !y) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < out->part_count; p++) {
        switch (in->op) {
        case GS_OP_ACTIVATION: {
            load_row(m, in->in[0], p, x);
            float sc = operand(m, in, 1, GS_F_SCALE_AP, in->imm[0], p);
            float bi = operand(m, in, 2, GS_F_BIAS_AP, in->imm[1], p);
            double acc = 0.0;
            for (size_t i = 0; i < n; i++) {
                x[i] = gs_act_apply(in->act, x[i] * sc + bi);
                acc += (double)x[i];
            }
            if (in->flags & GS_F_ACC_OUT) {
                float a = (float)acc;
                store_row(m, in->out[1], p, &a);
            }
            break;
        }
        case GS_OP_EXPONENTIAL: {
            load_row(m, in->in[0], p, x);
            float s = operand(m, in, 2, GS_F_BIAS_AP, in->imm[1], p);
            double acc = 0.0;
            for (size_t i = 0; i < n; i++) {
                x[i] = gs_act_apply(GS_ACT_EXP, x[i] - s);
                acc += (double)x[i];
            }
            if (in->flags & GS_F_ACC_OUT) {
                float a = (float)acc;
                store_row(m, in->out[1], p, &a);
            }
            break;
        }
        case GS_OP_TENSOR_TENSOR:
            load_row(m, in->in[0], p, x);
            load_row(m, in->in[1], p, y);
            if (in->flags & GS_F_HAS_OP1) { /* scalar_tensor_tensor; iimm: the reverse flags */
                float s = operand(m, in, 2, GS_F_BIAS_AP, in->imm[1], p);
                for (size_t i = 0; i < n; i++) {
                    float t =
                        iimm[0] ? gs_alu_apply(in->alu0, s, x[i]) : gs_alu_apply(in->alu0, x[i], s);
                    x[i] =
                        iimm[1] ? gs_alu_apply(in->alu1, y[i], t) : gs_alu_apply(in->alu1, t, y[i]);
                }
                break;
            }
            for (size_t i = 0; i < n; i++)
                x[i] = gs_alu_apply(in->alu0, x[i], y[i]);
            break;
        case GS_OP_TENSOR_TENSOR_SCAN: {
            load_row(m, in->in[0], p, x);
            load_row(m, in->in[1], p, y);
            float prev = operand(m, in, 2, GS_F_BIAS_AP, in->imm[1], p);
            for (size_t i = 0; i < n; i++) {
                prev = gs_alu_apply(in->alu1, gs_alu_apply(in->alu0, x[i], prev), y[i]);
                x[i] = prev;
            }
            break;
        }
        case GS_OP_TENSOR_SCALAR: {
            load_row(m, in->in[0], p, x);
            float s0 = operand(m, in, 1, GS_F_SCALE_AP, in->imm[0], p);
            for (size_t i = 0; i < n; i++)
                x[i] = gs_alu_apply(in->alu0, x[i], s0);
            if (in->flags & GS_F_HAS_OP1) {
                float s1 = operand(m, in, 2, GS_F_BIAS_AP, in->imm[1], p);
                for (size_t i = 0; i < n; i++)
                    x[i] = gs_alu_apply(in->alu1, x[i], s1);
            }
            break;
        }
        case GS_OP_TENSOR_COPY:
            load_row(m, in->in[0], p, x);
            break;
        case GS_OP_MEMSET:
            for (size_t i = 0; i < n; i++)
                x[i] = in->imm[0];
            break;
        case GS_OP_IOTA:
            for (size_t i = 0; i < n; i++)
                x[i] = (float)(iimm[0] + iimm[1] * (int64_t)p + iimm[2] * (int64_t)i);
            break;
        case GS_OP_AFFINE_SELECT:
            load_row(m, in->in[0], p, x);
            for (size_t i = 0; i < n; i++) {
                double v = (double)(iimm[0] + iimm[1] * (int64_t)p + iimm[2] * (int64_t)i);
                if (gs_alu_apply(in->alu0, (float)v, 0.0f) == 0.0f) x[i] = in->imm[0];
            }
            break;
        default:
            return gs_error_set(err, GS_ERR_INTERNAL, in->file, in->line, 0, "no semantics for %s",
                                gs_opcode_name(in->op));
        }
        store_row(m, out, p, x);
    }
    return GS_OK;
}

/* iimm: [1] = negate the result (gs_program_iimm) */
static gs_status exec_reduce(gs_mem *m, const gs_instr *in, const int64_t *iimm, gs_error *err)
{
    const gs_ap *src = in->in[0], *out = in->out[0];
    size_t n = gs_ap_free_elems(src), no = gs_ap_free_elems(out);
    size_t inner = no ? n / no : n;
    float *x = scratch(m, 0, n), *y = scratch(m, 1, no);
    if (!x || !y) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < src->part_count; p++) {
        load_row(m, src, p, x);
        for (size_t o = 0; o < no; o++) {
            const float *v = x + o * inner;
            if (in->alu0 == GS_ALU_ADD) {
                double acc = 0.0;
                for (size_t i = 0; i < inner; i++)
                    acc += (double)v[i];
                y[o] = (float)acc;
            } else {
                float acc = v[0];
                for (size_t i = 1; i < inner; i++)
                    acc = gs_alu_apply(in->alu0, acc, v[i]);
                y[o] = acc;
            }
            if (iimm[1]) y[o] = -y[o];
        }
        store_row(m, out, p, y);
    }
    return GS_OK;
}

static gs_status exec_bn(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *src = in->in[0], *out = in->out[0];
    size_t n = gs_ap_free_elems(src);
    float *x = scratch(m, 0, n);
    if (!x) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < src->part_count; p++) {
        load_row(m, src, p, x);
        if (in->op == GS_OP_BN_STATS) {
            double mean = 0.0, m2 = 0.0;
            for (size_t i = 0; i < n; i++) {
                double d = (double)x[i] - mean;
                mean += d / (double)(i + 1);
                m2 += d * ((double)x[i] - mean);
            }
            float r[3] = {(float)n, (float)mean, (float)m2};
            store_row(m, out, p, r);
        } else {
            /* Chan et al. pairwise combination of (count, mean, M2) chunks */
            double cnt = 0.0, mean = 0.0, m2 = 0.0;
            for (size_t c = 0; c + 2 < n; c += 3) {
                double nb = x[c], mb = x[c + 1], m2b = x[c + 2];
                if (nb <= 0) continue;
                double tot = cnt + nb, d = mb - mean;
                mean += d * nb / tot;
                m2 += m2b + d * d * cnt * nb / tot;
                cnt = tot;
            }
            float r[2] = {(float)mean, cnt > 0 ? (float)(m2 / cnt) : 0.0f};
            store_row(m, out, p, r);
        }
    }
    return GS_OK;
}

static gs_status exec_partition(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *src = in->in[0], *out = in->out[0];
    size_t n = gs_ap_free_elems(out);
    float *acc = scratch(m, 0, n), *x = scratch(m, 1, n);
    if (!acc || !x) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    if (in->op == GS_OP_PARTITION_BROADCAST) {
        load_row(m, src, 0, acc);
    } else {
        double *d = (double *)scratch(m, 2, 2 * n);
        if (!d) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
        load_row(m, src, 0, acc);
        for (size_t i = 0; i < n; i++)
            d[i] = acc[i];
        for (uint32_t p = 1; p < src->part_count; p++) {
            load_row(m, src, p, x);
            for (size_t i = 0; i < n; i++)
                d[i] = in->alu0 == GS_ALU_ADD ? d[i] + (double)x[i]
                                              : (double)gs_alu_apply(in->alu0, (float)d[i], x[i]);
        }
        for (size_t i = 0; i < n; i++)
            acc[i] = (float)d[i];
    }
    for (uint32_t p = 0; p < out->part_count; p++)
        store_row(m, out, p, acc);
    return GS_OK;
}

static gs_status exec_gather(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *out = in->out[0], *table = in->in[0], *idx = in->in[1];
    size_t D = gs_ap_free_elems(out), es = gs_dtype_size(out->dtype);
    uint8_t *row = (uint8_t *)scratch(m, 0, (D * es + 3) / 4);
    if (!row) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < out->part_count; p++) {
        int32_t i = -1;
        gather_bytes(m, idx, p, (uint8_t *)&i);
        if (i < 0 || (uint32_t)i >= table->part_count)
            return fail(in, err, GS_ERR_BOUNDS,
                        "index %lld at partition %lld outside the table's %lld rows", (long long)i,
                        (long long)p, (long long)table->part_count);
        gather_bytes(m, table, (uint32_t)i, row);
        scatter_bytes(m, out, p, row);
    }
    return GS_OK;
}

/* max8, find_index8, match_replace8: per partition, as ops_topk.c defines them. */
static gs_status exec_topk8(gs_mem *m, const gs_instr *in, gs_error *err)
{
    const gs_ap *data = in->in[0];
    size_t n = gs_ap_free_elems(data);
    float *x = scratch(m, 0, n);
    if (!x) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < data->part_count; p++) {
        float vals[8], res[8];
        load_row(m, data, p, x);
        if (in->op == GS_OP_MAX8) {
            gs_topk_max8_row(x, n, res);
            store_row(m, in->out[0], p, res);
            continue;
        }
        load_row(m, in->in[1], p, vals);
        if (in->op == GS_OP_FIND_INDEX8) {
            gs_topk_find_index8_row(x, n, vals, res);
            store_row(m, in->out[0], p, res);
            continue;
        }
        gs_topk_match_replace8_row(x, n, vals, in->imm[0], res);
        store_row(m, in->out[0], p, x);
        if (in->n_out > 1 && in->out[1]->tensor >= 0) store_row(m, in->out[1], p, res);
    }
    return GS_OK;
}

/* iimm: the shuffle mask (gs_shuffle_entry). The source rows are read first: dst may be src. */
static gs_status exec_shuffle(gs_mem *m, const gs_instr *in, const int64_t *iimm, gs_error *err)
{
    const gs_ap *src = in->in[0], *dst = in->out[0];
    const size_t row = gs_ap_free_elems(src) * gs_dtype_size(src->dtype);
    uint8_t *a = (uint8_t *)scratch(m, 0, ((size_t)src->part_count * row + 3) / 4);
    if (!a) return gs_error_set(err, GS_ERR_NOMEM, in->file, in->line, 0, "out of memory");
    for (uint32_t p = 0; p < src->part_count; p++)
        gather_bytes(m, src, p, a + (size_t)p * row);
    for (uint32_t q = 0; q < dst->part_count; q++) {
        const unsigned e = gs_shuffle_entry(iimm, q % GS_SHUFFLE_ENTRIES);
        const uint32_t from = 32u * (q / 32u) + e;
        if (e == GS_SHUFFLE_KEEP || from >= src->part_count) continue; /* the builder checked */
        scatter_bytes(m, dst, q, a + (size_t)from * row);
    }
    return GS_OK;
}

gs_status gs_exec_instr(gs_mem *m, const gs_program *p, size_t index, gs_error *err)
{
    const gs_instr *in = gs_program_instr(p, index);
    if (!in) return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0, "no instruction %zu", index);
    switch (in->op) {
    case GS_OP_DMA_COPY:
        return exec_dma_copy(m, in, err);
    case GS_OP_DMA_TRANSPOSE:
        return exec_dma_transpose(m, in, err);
    case GS_OP_MATMUL:
        return exec_matmul(m, in, err);
    case GS_OP_MATMUL_MX:
        return exec_matmul_mx(m, in, err);
    case GS_OP_QUANTIZE_MX:
        return exec_quantize_mx(m, in, err);
    case GS_OP_TRANSPOSE:
        return exec_transpose(m, in, err);
    case GS_OP_TENSOR_REDUCE:
        return exec_reduce(m, in, gs_program_iimm(p, index), err);
    case GS_OP_BN_STATS:
    case GS_OP_BN_AGGR:
        return exec_bn(m, in, err);
    case GS_OP_PARTITION_REDUCE:
    case GS_OP_PARTITION_BROADCAST:
        return exec_partition(m, in, err);
    case GS_OP_GATHER:
        return exec_gather(m, in, err);
    case GS_OP_STREAM_SHUFFLE:
        return exec_shuffle(m, in, gs_program_iimm(p, index), err);
    case GS_OP_MAX8:
    case GS_OP_FIND_INDEX8:
    case GS_OP_MATCH_REPLACE8:
        return exec_topk8(m, in, err);
    default:
        return exec_elementwise(m, in, gs_program_iimm(p, index), err);
    }
}

gs_status gs_exec_program(gs_mem *m, const gs_program *p, gs_error *err)
{
    size_t n = gs_program_count(p);
    for (size_t i = 0; i < n; i++) {
        gs_status st = gs_exec_instr(m, p, i, err);
        if (st != GS_OK) return st;
    }
    return GS_OK;
}
