/*
 * reduce.c - row reductions: Y[r] = sum_c X[r][c] (variant "sum") or max_c X[r][c] ("max"),
 * X [R x C], Y [R x 1].
 *
 * Rows map to partitions in blocks of `partitions`: in a group of g full blocks, row s0 + p*g + b
 * is block b's row on partition p, so each partition's g results are consecutive in Y and are
 * stored together; the last R mod partitions rows are a block of their own. Each row block is
 * swept in column chunks of `chunk` elements (param 0; default: the largest the input pool and
 * the engine's free-size limit allow, capped at 8192). Every chunk is reduced on the vector
 * engine into one column of an fp32 partials tile, and the partials are reduced once more at
 * the end, so a row of any length is one pass over HBM and the reduction stays in fp32
 * throughout. With bufs (param 1, default max(2, DMA queues / 4)) > 1 the loads of the next
 * chunks overlap the reduction of this one. Column tails use smaller tiles.
 */
#include <math.h>
#include <stdio.h>

#include "kernel_util.h"
#include "gs/kernel.h"

enum { RED_SUM, RED_MAX };

/* Cap on the default chunk: past a few thousand elements the per-instruction overhead is
 * already amortised, and smaller chunks give the DMA/compute overlap more steps. */
#define RED_DEFAULT_CHUNK_CAP 8192

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *Y = &a->t[1];
    int64_t R = a->dims[0], W = a->dims[1];
    gs_alu op = a->variant == RED_MAX ? GS_ALU_MAX : GS_ALU_ADD;
    /* default: a load in flight per four DMA queues, so loads overlap their latency */
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0 ? (unsigned)gs_kernel_param(a, "bufs", 0)
                                                      : GS_MAX(2u, c->dma_queues / 4);
    size_t es = gs_dtype_size(a->dtype);
    int64_t chunk = gs_kernel_param(a, "chunk", 0);
    const int chunk_given = chunk > 0;
    if (!chunk_given) {
        /* most of SBUF goes to the input pool; the partials and output tiles are tiny (not even
         * one element per buffer: the pool below says it does not fit) */
        int64_t fit = (int64_t)(c->sbuf_partition_bytes / 2 / (bufs * es));
        chunk = GS_MAX(
            GS_MIN(GS_MIN(fit, (int64_t)RED_DEFAULT_CHUNK_CAP), (int64_t)c->max_free_sbuf), 1);
    }
    if (chunk > W) chunk = W;
    int64_t nchunks = (W + chunk - 1) / chunk;
    /* a chunk the SBUF sized is a capacity limit of the target; one the caller chose is theirs */
    if (nchunks > (int64_t)c->max_free_sbuf)
        return gs_kb_fail(kb, chunk_given ? GS_ERR_INVALID : GS_ERR_DOES_NOT_FIT,
                          "reduce: %lld chunks per row exceed the engine's free-size limit %u; "
                          "%s",
                          (long long)nchunks, c->max_free_sbuf,
                          chunk_given ? "use a larger chunk"
                                      : "the SBUF holds no larger chunk per buffer");
    /* Full row blocks map row s0 + p*g + b to partition p, column b of a result tile, so the g
     * results of a partition are consecutive in Y and one store per g blocks writes them (a
     * [partitions x 1] store per block was a descriptor per element); each load still reads one
     * row per partition. The last R mod partitions rows form one block of their own. */
    int64_t P = c->partitions, nbt = R / P;
    int64_t G = GS_MIN(GS_MIN(nbt, (int64_t)2048), (int64_t)c->max_free_sbuf);
    G = GS_MIN(G, (int64_t)(c->sbuf_partition_bytes / 4 / (8 + 2 * es)));
    G = GS_MAX(G, (int64_t)1);
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", bufs, (uint64_t)chunk * es);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_SBUF, "partials", 2, (uint64_t)nchunks * 4);
    gs_pool *pr = gs_pool_create(kb, GS_MEM_SBUF, "row", 2, (uint64_t)G * 4);
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "out", 2, (uint64_t)G * es);
    for (int64_t s0 = 0; s0 <= R && gs_kb_ok(kb);) {
        int64_t g = s0 < nbt * P ? GS_MIN(G, nbt - s0 / P) : 1; /* blocks in this group */
        unsigned np = s0 < nbt * P ? (unsigned)P : (unsigned)(R - s0);
        if (np == 0) break;
        gs_tile row = gs_tile_alloc(pr, GS_FP32, np, (uint32_t)g);
        for (int64_t b = 0; b < g && gs_kb_ok(kb); b++) {
            gs_ap dst = gs_tile_view(&row, 0, np, (uint32_t)b, 1);
            gs_tile part = {0};
            if (nchunks > 1) part = gs_tile_alloc(pp, GS_FP32, np, (uint32_t)nchunks);
            for (int64_t k = 0; k < nchunks && gs_kb_ok(kb); k++) {
                int64_t c0 = k * chunk;
                uint32_t nf = (uint32_t)GS_MIN(chunk, W - c0);
                gs_tile tx = gs_tile_alloc(px, a->dtype, np, nf);
                const uint32_t shape[1] = {nf};
                const int64_t stride[1] = {1};
                gs_dma_copy(kb, tx.ap, gs_hbm_ap(X, (s0 + b) * W + c0, np, g * W, 1, shape, stride),
                            -1);
                gs_tensor_reduce(kb, nchunks > 1 ? gs_tile_view(&part, 0, np, (uint32_t)k, 1) : dst,
                                 tx.ap, op, 1);
            }
            if (nchunks > 1) gs_tensor_reduce(kb, dst, part.ap, op, 1);
        }
        gs_tile out = gs_tile_alloc(po, a->dtype, np, (uint32_t)g);
        gs_tensor_copy(kb, GS_ENG_VECTOR, out.ap, row.ap);
        const uint32_t oshape[1] = {(uint32_t)g};
        const int64_t ostride[1] = {1};
        gs_dma_copy(kb, gs_hbm_ap(Y, s0, np, g, 1, oshape, ostride), out.ap, -1);
        s0 += (int64_t)np * g;
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 2) return -1;
    if (a->dims[0] <= 0 || a->dims[1] <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "reduce: R and C must be positive"),
               -1;
    snprintf(t[0].name, sizeof t[0].name, "X");
    t[0].kind = GS_TENSOR_INPUT;
    t[0].shape[0] = a->dims[0];
    t[0].shape[1] = a->dims[1];
    snprintf(t[1].name, sizeof t[1].name, "Y");
    t[1].kind = GS_TENSOR_OUTPUT;
    t[1].shape[0] = a->dims[0];
    t[1].shape[1] = 1;
    for (int i = 0; i < 2; i++) {
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 2;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t R = a->dims[0], W = a->dims[1];
    for (int64_t r = 0; r < R; r++) {
        const double *x = in[0] + r * W;
        double acc = x[0];
        for (int64_t i = 1; i < W; i++)
            acc = a->variant == RED_MAX ? (x[i] > acc ? x[i] : acc) : acc + x[i];
        out[0][r] = acc;
    }
}

static double reduction_len(const gs_kernel_args *a)
{
    /* a max is exact; a sum carries fp32 accumulation error over the row */
    return a->variant == RED_MAX ? 1.0 : (double)a->dims[1];
}

/*
 * Tolerance (gs_kernel_def.error_bound), u = the dtype's unit roundoff, v = fp32's:
 *   sum: the row's C values are added in fp32 in some order (chunks, then the partials); any
 *        order of n - 1 additions is off by at most g = (n - 1) v / (1 - (n - 1) v) times the
 *        sum of |x| (the standard summation bound), then the result is rounded to the dtype:
 *        |Y - sum x| <= g S + u (|sum x| + g S), S = sum |x|. Relative to the sum alone the
 *        error is unbounded (a row whose values cancel), so the bound is on S.
 *   max: exact (the largest of the row's values, one of them), then rounded: u |max x|.
 * Each rounding to the dtype also adds its subnormal floor (gs_tol_floor, kernel_util.h).
 */
static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    int64_t R = a->dims[0], W = a->dims[1];
    const double u = gs_dtype_eps(a->dtype), v = gs_dtype_eps(GS_FP32);
    const double g = (double)(W - 1) * v / (1.0 - (double)(W - 1) * v);
    for (int64_t r = 0; r < R; r++) {
        if (a->variant == RED_MAX) {
            bound[0][r] = gs_tol_round(a->dtype, ref[0][r]);
            continue;
        }
        double S = 0.0;
        for (int64_t i = 0; i < W; i++)
            S += fabs(in[0][r * W + i]);
        bound[0][r] = g * S + u * (fabs(ref[0][r]) + g * S) + gs_tol_floor(a->dtype);
    }
}

const gs_kernel_def gs_kernel_reduce = {
    .name = "reduce",
    .summary = "Y[r] = sum or max of row r of X [R x C]",
    .n_dims = 2,
    .dim_names = {"R", "C"},
    .n_variants = 2,
    .variants = {"sum", "max"},
    .n_params = 2,
    .param_names = {"chunk", "bufs"},
    .param_help = {"free elements per input tile (0: largest that fits, <= 8192)",
                   "input buffers (0: max(2, DMA queues / 4))"},
    .check_shapes = {{2, {128, 1024}},
                     {2, {200, 777}},
                     {2, {3, 1}},
                     {2, {1, 8192}},
                     {2, {1, 8191}},
                     {2, {131, 1031}},
                     /* rows so short that many hold their maximum in the last column (a third
                      * of them with any data): a max that skips a row's last element fails it;
                      * 130 rows also make a ragged second row block */
                     {2, {130, 3}}},
    .perf_shapes = {{2, {8192, 8192}}, {2, {4096, 1024}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
    .error_bound = error_bound,
};
