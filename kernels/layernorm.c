/*
 * layernorm.c - Y = (X - mean) / sqrt(var + eps) * gamma + beta per row of X [R x D], with
 * gamma, beta [D] over the feature dim and eps = 1e-5 (population variance, as PyTorch).
 *
 * Rows map to partitions in blocks of `partitions`; a row block stays in SBUF while its
 * statistics are computed, then is normalised chunk by chunk (`chunk` elements, param 0,
 * default min(D, 2048, engine free-size limit)). gamma and beta are loaded once with a
 * broadcasting DMA (partition stride 0: every partition reads the same row).
 * Variant "bn_stats": one vector pass, bn_stats per chunk (count, mean, M2) and one bn_aggr
 *   (Chan's combination) -> mean, variance: numerically robust, one read of the data.
 * Variant "naive": a sum (tensor_reduce) and a sum of squares (x*x with tensor_tensor, then
 *   tensor_reduce) per chunk, var = E[x^2] - mean^2: three vector passes over the data.
 * Normalisation engine (param 2 "engine"): 0/2 scalar (one activation: x * rstd + (-mean *
 * rstd)), 1 vector or 3 gpsimd (tensor_scalar: (x - mean) * rstd); gpsimd on a target
 * without it is "unsupported". gamma/beta are applied on the vector engine. bufs (param 1,
 * default 2) sets buffers per streaming pool; the row pool is double-buffered when it fits.
 */
#include <math.h>
#include <stdio.h>

#include "kernel_util.h"
#include "gs/kernel.h"

enum { LN_BN_STATS, LN_NAIVE };

#define LN_EPS 1e-5               /* the usual layernorm epsilon */
#define LN_DEFAULT_CHUNK_CAP 2048 /* elements per instruction */

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *G = &a->t[1], *Bt = &a->t[2], *Y = &a->t[3];
    int64_t R = a->dims[0], D = a->dims[1];
    const int bufs_given = gs_kernel_param(a, "bufs", 0) > 0;
    unsigned bufs = bufs_given ? (unsigned)gs_kernel_param(a, "bufs", 0) : 2;
    size_t es = gs_dtype_size(a->dtype);
    gs_engine eng = GS_ENG_SCALAR;
    if (gs_pick_engine(kb, "layernorm", gs_kernel_param(a, "engine", 0), GS_ENG_SCALAR, &eng) !=
        GS_OK)
        return gs_kb_status(kb);
    int64_t chunk = 0, nch = 0;
    if (gs_row_chunks(kb, "layernorm", D, gs_kernel_param(a, "chunk", 0), LN_DEFAULT_CHUNK_CAP, 3,
                      &chunk, &nch) != GS_OK)
        return gs_kb_status(kb);
    /* the row pool is double-buffered when two rows, gamma, beta and the chunk pools fit; by
     * default the chunk pools drop to one buffer when two do not fit a small SBUF */
    uint64_t fixed = 2u * (uint64_t)D * es + (uint64_t)bufs * chunk * (4 + es) + 4096;
    if (!bufs_given && fixed + (uint64_t)D * es > c->sbuf_partition_bytes) {
        bufs = 1;
        fixed = 2u * (uint64_t)D * es + (uint64_t)chunk * (4 + es) + 4096;
    }
    unsigned rowbufs = fixed + 2u * D * es <= c->sbuf_partition_bytes ? 2 : 1;
    gs_pool *pgb = gs_pool_create(kb, GS_MEM_SBUF, "gamma_beta", 2, (uint64_t)D * es);
    gs_pool *prow = gs_pool_create(kb, GS_MEM_SBUF, "xrow", rowbufs, (uint64_t)D * es);
    gs_pool *pst = gs_pool_create(kb, GS_MEM_SBUF, "stats", 2, (uint64_t)(3 * nch) * 4);
    gs_pool *pst2 = gs_pool_create(kb, GS_MEM_SBUF, "stats2", 2, (uint64_t)nch * 4);
    gs_pool *pcol = gs_pool_create(kb, GS_MEM_SBUF, "rowstats", 2, 8 * 4);
    gs_pool *pn = gs_pool_create(kb, GS_MEM_SBUF, "xn", bufs, (uint64_t)chunk * 4);
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", bufs, (uint64_t)chunk * es);
    unsigned P = c->partitions;
    unsigned gp = (unsigned)GS_MIN((int64_t)P, R);
    gs_tile g = gs_tile_alloc(pgb, a->dtype, gp, (uint32_t)D);
    gs_tile b = gs_tile_alloc(pgb, a->dtype, gp, (uint32_t)D);
    const uint32_t shp[1] = {(uint32_t)D};
    const int64_t str[1] = {1};
    gs_dma_copy(kb, g.ap, gs_hbm_ap(G, 0, gp, 0, 1, shp, str), -1);
    gs_dma_copy(kb, b.ap, gs_hbm_ap(Bt, 0, gp, 0, 1, shp, str), -1);
    for (int64_t r0 = 0; r0 < R && gs_kb_ok(kb); r0 += P) {
        unsigned np = (unsigned)GS_MIN((int64_t)P, R - r0);
        gs_tile x = gs_tile_alloc(prow, a->dtype, np, (uint32_t)D);
        gs_tile cs = gs_tile_alloc(pcol, GS_FP32, np, 8);
        /* cs: 0 mean, 1 var, 2 rstd, 3 -mean*rstd, 4 sum, 5 sumsq, 6 mean^2 */
        gs_ap mean = gs_tile_view(&cs, 0, np, 0, 1), var = gs_tile_view(&cs, 0, np, 1, 1);
        gs_ap rstd = gs_tile_view(&cs, 0, np, 2, 1), nb = gs_tile_view(&cs, 0, np, 3, 1);
        gs_ap sum = gs_tile_view(&cs, 0, np, 4, 1), ssq = gs_tile_view(&cs, 0, np, 5, 1);
        gs_ap msq = gs_tile_view(&cs, 0, np, 6, 1);
        gs_tile st = gs_tile_alloc(pst, GS_FP32, np, (uint32_t)(3 * nch));
        gs_tile st2 = gs_tile_alloc(pst2, GS_FP32, np, (uint32_t)nch);
        for (int64_t k = 0; k < nch && gs_kb_ok(kb); k++) {
            int64_t c0 = k * chunk;
            uint32_t nf = (uint32_t)GS_MIN(chunk, D - c0);
            gs_ap xv = gs_tile_view(&x, 0, np, (uint32_t)c0, nf);
            gs_dma_copy(kb, xv, gs_hbm_rows(X, r0, np, c0, nf), -1);
            if (a->variant == LN_BN_STATS) {
                gs_bn_stats(kb, gs_tile_view(&st, 0, np, (uint32_t)(3 * k), 3), xv);
            } else {
                gs_tile sq = gs_tile_alloc(pn, GS_FP32, np, nf);
                gs_tensor_reduce(kb, gs_tile_view(&st, 0, np, (uint32_t)k, 1), xv, GS_ALU_ADD, 1);
                gs_tensor_tensor(kb, sq.ap, xv, xv, GS_ALU_MUL);
                gs_tensor_reduce(kb, gs_tile_view(&st2, 0, np, (uint32_t)k, 1), sq.ap, GS_ALU_ADD,
                                 1);
            }
        }
        if (a->variant == LN_BN_STATS) {
            gs_bn_aggr(kb, gs_tile_view(&cs, 0, np, 0, 2), st.ap);
        } else {
            float inv = (float)(1.0 / (double)D);
            gs_tensor_reduce(kb, sum, gs_tile_view(&st, 0, np, 0, (uint32_t)nch), GS_ALU_ADD, 1);
            gs_tensor_reduce(kb, ssq, st2.ap, GS_ALU_ADD, 1);
            gs_tensor_scalar(kb, GS_ENG_VECTOR, mean, sum, GS_ALU_MUL, gs_imm(inv), GS_ALU_BYPASS,
                             gs_imm(0));
            gs_tensor_tensor(kb, msq, mean, mean, GS_ALU_MUL);
            /* var = sumsq / D - mean^2 */
            gs_tensor_scalar(kb, GS_ENG_VECTOR, var, ssq, GS_ALU_MUL, gs_imm(inv), GS_ALU_SUB,
                             gs_per_partition(msq));
        }
        gs_activation(kb, rstd, var, GS_ACT_RSQRT, gs_imm(1.0f), gs_imm((float)LN_EPS), NULL);
        gs_tensor_scalar(kb, GS_ENG_VECTOR, nb, mean, GS_ALU_MUL, gs_per_partition(rstd),
                         GS_ALU_MUL, gs_imm(-1.0f));
        for (int64_t k = 0; k < nch && gs_kb_ok(kb); k++) {
            int64_t c0 = k * chunk;
            uint32_t nf = (uint32_t)GS_MIN(chunk, D - c0);
            gs_ap xv = gs_tile_view(&x, 0, np, (uint32_t)c0, nf);
            gs_tile xn = gs_tile_alloc(pn, GS_FP32, np, nf);
            gs_tile y = gs_tile_alloc(py, a->dtype, np, nf);
            if (eng == GS_ENG_SCALAR)
                gs_activation(kb, xn.ap, xv, GS_ACT_IDENTITY, gs_per_partition(rstd),
                              gs_per_partition(nb), NULL);
            else
                gs_tensor_scalar(kb, eng, xn.ap, xv, GS_ALU_SUB, gs_per_partition(mean), GS_ALU_MUL,
                                 gs_per_partition(rstd));
            gs_tensor_tensor(kb, xn.ap, xn.ap, gs_tile_view(&g, 0, np, (uint32_t)c0, nf),
                             GS_ALU_MUL);
            gs_tensor_tensor(kb, y.ap, xn.ap, gs_tile_view(&b, 0, np, (uint32_t)c0, nf),
                             GS_ALU_ADD);
            gs_dma_copy(kb, gs_hbm_rows(Y, r0, np, c0, nf), y.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 4) return -1;
    if (a->dims[0] <= 0 || a->dims[1] <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "layernorm: R and D must be positive"),
               -1;
    const char *names[4] = {"X", "gamma", "beta", "Y"};
    for (int i = 0; i < 4; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i < 3 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = (i == 1 || i == 2) ? 1 : 2;
        t[i].shape[0] = (i == 1 || i == 2) ? a->dims[1] : a->dims[0];
        t[i].shape[1] = a->dims[1];
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    /* an offset mean makes the naive E[x^2] - mean^2 do some cancelling */
    t[0].lo = -0.5;
    t[0].hi = 1.5;
    t[1].lo = 0.5;
    t[1].hi = 1.5;
    t[2].lo = -0.5;
    t[2].hi = 0.5;
    return 4;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t R = a->dims[0], D = a->dims[1];
    for (int64_t r = 0; r < R; r++) {
        const double *x = in[0] + r * D;
        double m = 0.0, v = 0.0;
        for (int64_t i = 0; i < D; i++)
            m += x[i];
        m /= (double)D;
        for (int64_t i = 0; i < D; i++)
            v += (x[i] - m) * (x[i] - m);
        v /= (double)D;
        double rs = 1.0 / sqrt(v + LN_EPS);
        for (int64_t i = 0; i < D; i++)
            out[0][r * D + i] = (x[i] - m) * rs * in[1][i] + in[2][i];
    }
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1];
}

const gs_kernel_def gs_kernel_layernorm = {
    .name = "layernorm",
    .summary = "Y = (X - mean) / sqrt(var + 1e-5) * gamma + beta per row; bn_stats vs naive",
    .n_dims = 2,
    .dim_names = {"R", "D"},
    .n_variants = 2,
    .variants = {"bn_stats", "naive"},
    .n_params = 3,
    .param_names = {"chunk", "bufs", "engine"},
    .param_help = {"free elements per instruction (0: min(D, 2048))",
                   "buffers per streaming pool (2 = double buffering)",
                   "normalisation engine: 0/2 scalar, 1 vector, 3 gpsimd"},
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
