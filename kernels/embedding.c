/*
 * embedding.c - Y[n][:] = T[idx[n]][:]: gather rows of an HBM table T [V x D] by int32 indices
 * idx [N x 1] (values in [0, V)).
 *
 * Per block of `partitions` indices: the indices are loaded into an int32 [n x 1] tile, one
 * gather on the gpsimd engine fetches each partition's table row (in column chunks of `dchunk`
 * elements, param 0, default min(D, 4096)) straight from HBM into SBUF, and the block is stored.
 * bufs (param 1, default 2) overlaps the next block's gather with this block's store.
 * The gather needs a gpsimd engine (and int32 data): a target without one reports
 * "unsupported". No static-DMA adaptation is honest here: the rows to fetch are data, and a
 * one-hot matmul would need iota/compare on the same missing engine.
 */
#include <stdio.h>

#include "gs/kernel.h"

#define EMB_DEFAULT_DCHUNK_CAP 4096 /* elements per gathered row piece */

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *T = &a->t[0], *I = &a->t[1], *Y = &a->t[2];
    int64_t N = a->dims[0], V = a->dims[1], D = a->dims[2];
    if (!c->has_gpsimd || !(c->ops & (1ull << GS_OP_GATHER)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: embedding needs gather on a gpsimd engine (none here)");
    if (!(c->dtypes & (1u << GS_INT32)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: embedding needs int32 indices");
    if (V > (int64_t)UINT32_MAX)
        return gs_kb_fail(kb, GS_ERR_INVALID, "embedding: V=%lld rows is too many for one view",
                          (long long)V);
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0 ? (unsigned)gs_kernel_param(a, "bufs", 0) : 2;
    size_t es = gs_dtype_size(a->dtype);
    int64_t dchunk = gs_kernel_param(a, "dchunk", 0) > 0 ? gs_kernel_param(a, "dchunk", 0)
                                                         : EMB_DEFAULT_DCHUNK_CAP;
    dchunk = GS_MIN(dchunk, D);
    gs_pool *pi = gs_pool_create(kb, GS_MEM_SBUF, "idx", bufs, 4);
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "rows", bufs, (uint64_t)dchunk * es);
    for (int64_t n0 = 0; n0 < N && gs_kb_ok(kb); n0 += c->partitions) {
        unsigned np = (unsigned)GS_MIN((int64_t)c->partitions, N - n0);
        gs_tile ti = gs_tile_alloc(pi, GS_INT32, np, 1);
        gs_dma_copy(kb, ti.ap, gs_hbm_rows(I, n0, np, 0, 1), -1);
        for (int64_t d0 = 0; d0 < D && gs_kb_ok(kb); d0 += dchunk) {
            uint32_t nd = (uint32_t)GS_MIN(dchunk, D - d0);
            gs_tile ty = gs_tile_alloc(py, a->dtype, np, nd);
            gs_gather(kb, ty.ap, gs_hbm_rows(T, 0, (unsigned)V, d0, nd), ti.ap);
            gs_dma_copy(kb, gs_hbm_rows(Y, n0, np, d0, nd), ty.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    int64_t N = a->dims[0], V = a->dims[1], D = a->dims[2];
    if (N <= 0 || V <= 0 || D <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "embedding: N, V and D must be positive"),
               -1;
    if (V > ((int64_t)1 << 31) - 1)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "embedding: V=%lld does not fit int32 indices", (long long)V),
               -1;
    snprintf(t[0].name, sizeof t[0].name, "T");
    t[0].kind = GS_TENSOR_INPUT;
    t[0].dtype = a->dtype;
    t[0].ndim = 2;
    t[0].shape[0] = V;
    t[0].shape[1] = D;
    t[0].lo = -1.0;
    t[0].hi = 1.0;
    snprintf(t[1].name, sizeof t[1].name, "idx");
    t[1].kind = GS_TENSOR_INPUT;
    t[1].dtype = GS_INT32;
    t[1].ndim = 2;
    t[1].shape[0] = N;
    t[1].shape[1] = 1;
    t[1].lo = 0.0;
    t[1].hi = (double)V;
    t[1].integer = 1;
    snprintf(t[2].name, sizeof t[2].name, "Y");
    t[2].kind = GS_TENSOR_OUTPUT;
    t[2].dtype = a->dtype;
    t[2].ndim = 2;
    t[2].shape[0] = N;
    t[2].shape[1] = D;
    return 3;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t N = a->dims[0], D = a->dims[2];
    for (int64_t n = 0; n < N; n++) {
        int64_t r = (int64_t)in[1][n];
        for (int64_t d = 0; d < D; d++)
            out[0][n * D + d] = in[0][r * D + d];
    }
}

const gs_kernel_def gs_kernel_embedding = {
    .name = "embedding",
    .summary = "Y[n] = T[idx[n]]: row gather from an HBM table (gpsimd)",
    .n_dims = 3,
    .dim_names = {"N", "V", "D"},
    .n_variants = 1,
    .variants = {"default"},
    .n_params = 2,
    .param_names = {"dchunk", "bufs"},
    .param_help = {"row elements per gather (0: min(D, 4096))",
                   "buffers per pool (2 = double buffering)"},
    .check_shapes = {{3, {128, 1000, 64}}, {3, {300, 50, 129}}, {3, {1, 1, 1}}},
    .perf_shapes = {{3, {8192, 32000, 4096}}, {3, {4096, 8192, 1024}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
};
