/*
 * rmsnorm.c - Y = X / sqrt(mean(X^2) + eps) * gamma per row of X [R x D], gamma [D] over the
 * feature dim, eps = 1e-6 (the usual RMSNorm epsilon).
 *
 * Rows map to partitions in blocks of `partitions`; the row block stays in SBUF while its
 * sum of squares is computed with the scalar engine's activation(square) and its accumulate
 * output (one instruction per chunk, no separate reduction), then 1/rms = rsqrt(ss / D + eps)
 * in one more activation, then each chunk is scaled by 1/rms (engine param) and by gamma
 * (vector) and stored. gamma is loaded once with a broadcasting DMA (partition stride 0).
 * Params: chunk (elements per instruction, default min(D, 2048)), bufs (streaming buffers,
 * default 2), engine for the 1/rms scaling (0/1 vector, 2 scalar, 3 gpsimd; gpsimd on a target
 * without it is "unsupported").
 */
#include <math.h>
#include <stdio.h>

#include "kernel_util.h"
#include "gs/kernel.h"

#define RMS_EPS 1e-6
#define RMS_DEFAULT_CHUNK_CAP 2048 /* elements per instruction */

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *G = &a->t[1], *Y = &a->t[2];
    int64_t R = a->dims[0], D = a->dims[1];
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0 ? (unsigned)gs_kernel_param(a, "bufs", 0) : 2;
    size_t es = gs_dtype_size(a->dtype);
    gs_engine eng = GS_ENG_VECTOR;
    if (gs_pick_engine(kb, "rmsnorm", gs_kernel_param(a, "engine", 0), GS_ENG_VECTOR, &eng) !=
        GS_OK)
        return gs_kb_status(kb);
    int64_t chunk = 0, nch = 0;
    if (gs_row_chunks(kb, "rmsnorm", D, gs_kernel_param(a, "chunk", 0), RMS_DEFAULT_CHUNK_CAP, 1,
                      &chunk, &nch) != GS_OK)
        return gs_kb_status(kb);
    /* the squares' scratch gets its own pool when SBUF holds it next to one row buffer:
     * sharing xn's makes the next row tile's squares (scalar engine) wait for this tile's
     * scaling (vector engine) to free a buffer; very long rows share it to fit */
    uint64_t fixed = (uint64_t)D * es + (uint64_t)bufs * chunk * (8 + es) + 4096;
    const int own_squares = fixed + (uint64_t)D * es <= c->sbuf_partition_bytes;
    if (!own_squares) fixed = (uint64_t)D * es + (uint64_t)bufs * chunk * (4 + es) + 4096;
    unsigned rowbufs = fixed + 2u * D * es <= c->sbuf_partition_bytes ? 2 : 1;
    gs_pool *pg = gs_pool_create(kb, GS_MEM_SBUF, "gamma", 1, (uint64_t)D * es);
    gs_pool *prow = gs_pool_create(kb, GS_MEM_SBUF, "xrow", rowbufs, (uint64_t)D * es);
    gs_pool *pst = gs_pool_create(kb, GS_MEM_SBUF, "partials", 2, (uint64_t)nch * 4);
    gs_pool *pcol = gs_pool_create(kb, GS_MEM_SBUF, "rowstats", 2, 2 * 4);
    gs_pool *pn = gs_pool_create(kb, GS_MEM_SBUF, "xn", bufs, (uint64_t)chunk * 4);
    gs_pool *psq =
        own_squares ? gs_pool_create(kb, GS_MEM_SBUF, "squares", bufs, (uint64_t)chunk * 4) : pn;
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", bufs, (uint64_t)chunk * es);
    unsigned P = c->partitions;
    unsigned gp = (unsigned)GS_MIN((int64_t)P, R);
    gs_tile g = gs_tile_alloc(pg, a->dtype, gp, (uint32_t)D);
    const uint32_t shp[1] = {(uint32_t)D};
    const int64_t str[1] = {1};
    gs_dma_copy(kb, g.ap, gs_hbm_ap(G, 0, gp, 0, 1, shp, str), -1);
    for (int64_t r0 = 0; r0 < R && gs_kb_ok(kb); r0 += P) {
        unsigned np = (unsigned)GS_MIN((int64_t)P, R - r0);
        gs_tile x = gs_tile_alloc(prow, a->dtype, np, (uint32_t)D);
        gs_tile part = gs_tile_alloc(pst, GS_FP32, np, (uint32_t)nch);
        gs_tile cs = gs_tile_alloc(pcol, GS_FP32, np, 2);
        gs_ap ss = gs_tile_view(&cs, 0, np, 0, 1), rstd = gs_tile_view(&cs, 0, np, 1, 1);
        for (int64_t k = 0; k < nch && gs_kb_ok(kb); k++) {
            int64_t c0 = k * chunk;
            uint32_t nf = (uint32_t)GS_MIN(chunk, D - c0);
            gs_ap xv = gs_tile_view(&x, 0, np, (uint32_t)c0, nf);
            gs_dma_copy(kb, xv, gs_hbm_rows(X, r0, np, c0, nf), -1);
            /* the squares themselves are scratch; only the accumulated sum is kept */
            gs_tile sq = gs_tile_alloc(psq, GS_FP32, np, nf);
            gs_ap acc = gs_tile_view(&part, 0, np, (uint32_t)k, 1);
            gs_activation(kb, sq.ap, xv, GS_ACT_SQUARE, gs_imm(1.0f), gs_imm(0.0f), &acc);
        }
        gs_tensor_reduce(kb, ss, part.ap, GS_ALU_ADD, 1);
        gs_activation(kb, rstd, ss, GS_ACT_RSQRT, gs_imm((float)(1.0 / (double)D)),
                      gs_imm((float)RMS_EPS), NULL);
        for (int64_t k = 0; k < nch && gs_kb_ok(kb); k++) {
            int64_t c0 = k * chunk;
            uint32_t nf = (uint32_t)GS_MIN(chunk, D - c0);
            gs_ap xv = gs_tile_view(&x, 0, np, (uint32_t)c0, nf);
            gs_tile xn = gs_tile_alloc(pn, GS_FP32, np, nf);
            gs_tile y = gs_tile_alloc(py, a->dtype, np, nf);
            if (eng == GS_ENG_SCALAR)
                gs_activation(kb, xn.ap, xv, GS_ACT_IDENTITY, gs_per_partition(rstd), gs_imm(0.0f),
                              NULL);
            else
                gs_tensor_scalar(kb, eng, xn.ap, xv, GS_ALU_MUL, gs_per_partition(rstd),
                                 GS_ALU_BYPASS, gs_imm(0));
            gs_tensor_tensor(kb, y.ap, xn.ap, gs_tile_view(&g, 0, np, (uint32_t)c0, nf),
                             GS_ALU_MUL);
            gs_dma_copy(kb, gs_hbm_rows(Y, r0, np, c0, nf), y.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    if (a->dims[0] <= 0 || a->dims[1] <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "rmsnorm: R and D must be positive"),
               -1;
    const char *names[3] = {"X", "gamma", "Y"};
    for (int i = 0; i < 3; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i < 2 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = i == 1 ? 1 : 2;
        t[i].shape[0] = i == 1 ? a->dims[1] : a->dims[0];
        t[i].shape[1] = a->dims[1];
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    t[1].lo = 0.5;
    t[1].hi = 1.5;
    return 3;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t R = a->dims[0], D = a->dims[1];
    for (int64_t r = 0; r < R; r++) {
        const double *x = in[0] + r * D;
        double ss = 0.0;
        for (int64_t i = 0; i < D; i++)
            ss += x[i] * x[i];
        double rs = 1.0 / sqrt(ss / (double)D + RMS_EPS);
        for (int64_t i = 0; i < D; i++)
            out[0][r * D + i] = x[i] * rs * in[1][i];
    }
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1];
}

const gs_kernel_def gs_kernel_rmsnorm = {
    .name = "rmsnorm",
    .summary = "Y = X / sqrt(mean(X^2) + 1e-6) * gamma per row",
    .n_dims = 2,
    .dim_names = {"R", "D"},
    .n_variants = 1,
    .variants = {"default"},
    .n_params = 3,
    .param_names = {"chunk", "bufs", "engine"},
    .param_help = {"free elements per instruction (0: min(D, 2048))",
                   "buffers per streaming pool (2 = double buffering)",
                   "1/rms scaling engine: 0/1 vector, 2 scalar, 3 gpsimd"},
    .check_shapes = {{2, {128, 512}},
                     {2, {200, 3000}},
                     {2, {1, 7}},
                     {2, {1, 8192}},
                     {2, {1, 8191}},
                     {2, {131, 1031}}},
    .perf_shapes = {{2, {8192, 4096}}, {2, {2048, 8192}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
