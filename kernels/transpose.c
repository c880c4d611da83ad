/*
 * transpose.c - Y[C x R] = X[R x C]^T.
 *
 * Variant "tensor_engine": X is loaded in row strips [TP rows x up to TS columns] (TP = pe_rows,
 * rows on partitions); each [TP x TF] block (TF = pe_cols) is transposed by the tensor engine
 * (identity trick) into a PSUM bank, evacuated to SBUF by the vector engine and stored as rows
 * of Y. Variant "dma": the DMA engines transpose [TP x TF] blocks on the way from HBM into SBUF
 * (gs_dma_transpose: 2-byte dtypes, only where the target has DMA transpose; elsewhere
 * "unsupported"), then the blocks are stored. Params: strip columns (ts), buffers (bufs).
 */
#include <stdio.h>

#include "gs/kernel.h"

enum { V_TENSOR_ENGINE, V_DMA };

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *Y = &a->t[1];
    int64_t R = a->dims[0], C = a->dims[1];
    size_t es = gs_dtype_size(a->dtype);
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0
                        ? (unsigned)GS_MIN(gs_kernel_param(a, "bufs", 0), (int64_t)64)
                        : 2u;
    int64_t TP = GS_MIN((int64_t)c->pe_rows, (int64_t)c->partitions);
    int64_t TF = GS_MIN((int64_t)c->pe_cols, (int64_t)c->partitions);
    if (a->variant == V_DMA) {
        if (!c->dma_transpose)
            return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                              "unsupported: dma transpose (the target's DMA cannot transpose)");
        if (es != 2)
            return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                              "unsupported: dma transpose of %s (2-byte dtypes only)",
                              gs_dtype_name(a->dtype));
        TP = TF = c->partitions;
        gs_pool *pt = gs_pool_create(kb, GS_MEM_SBUF, "t", bufs * 2, (uint64_t)TP * es);
        for (int64_t r0 = 0; r0 < R && gs_kb_ok(kb); r0 += TP) {
            unsigned rp = (unsigned)GS_MIN(TP, R - r0);
            for (int64_t c0 = 0; c0 < C && gs_kb_ok(kb); c0 += TF) {
                unsigned cf = (unsigned)GS_MIN(TF, C - c0);
                gs_tile t = gs_tile_alloc(pt, a->dtype, cf, rp);
                gs_dma_transpose(kb, t.ap, gs_hbm_rows(X, r0, rp, c0, cf), -1);
                gs_dma_copy(kb, gs_hbm_rows(Y, c0, cf, r0, rp), t.ap, -1);
            }
        }
        return gs_kb_status(kb);
    }
    if (!(c->matmul_dtypes & (1u << a->dtype)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s transpose on the tensor engine",
                          gs_dtype_name(a->dtype));
    /* a strip: several blocks side by side, so each load descriptor carries a longer row */
    int64_t TS = gs_kernel_param(a, "ts", 0) > 0 ? gs_kernel_param(a, "ts", 0) : 4 * TF;
    TS = GS_MAX(TF, TS / TF * TF);
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", bufs, (uint64_t)TS * es);
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "y", bufs * 2, (uint64_t)TP * es);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_PSUM, "t", bufs, c->psum_bank_bytes);
    for (int64_t r0 = 0; r0 < R && gs_kb_ok(kb); r0 += TP) {
        unsigned rp = (unsigned)GS_MIN(TP, R - r0);
        for (int64_t s0 = 0; s0 < C && gs_kb_ok(kb); s0 += TS) {
            uint32_t sw = (uint32_t)GS_MIN(TS, C - s0);
            gs_tile x = gs_tile_alloc(px, a->dtype, rp, sw);
            gs_dma_copy(kb, x.ap, gs_hbm_rows(X, r0, rp, s0, sw), -1);
            for (uint32_t f0 = 0; f0 < sw && gs_kb_ok(kb); f0 += (uint32_t)TF) {
                unsigned cf = (unsigned)GS_MIN(TF, (int64_t)(sw - f0));
                gs_tile t = gs_tile_alloc(pp, a->dtype, cf, rp);
                gs_transpose(kb, t.ap, gs_tile_view(&x, 0, rp, f0, cf));
                gs_tile y = gs_tile_alloc(po, a->dtype, cf, rp);
                gs_tensor_copy(kb, GS_ENG_VECTOR, y.ap, t.ap);
                gs_dma_copy(kb, gs_hbm_rows(Y, s0 + f0, cf, r0, rp), y.ap, -1);
            }
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 2) return -1;
    int64_t R = a->dims[0], C = a->dims[1];
    if (R <= 0 || C <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "transpose: R and C must be positive"),
               -1;
    for (int i = 0; i < 2; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", i ? "Y" : "X");
        t[i].kind = i ? GS_TENSOR_OUTPUT : GS_TENSOR_INPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = i ? C : R;
        t[i].shape[1] = i ? R : C;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 2;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t R = a->dims[0], C = a->dims[1];
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++)
            out[0][c * R + r] = in[0][r * C + c];
}

const gs_kernel_def gs_kernel_transpose = {
    .name = "transpose",
    .summary = "Y = X^T, [R x C] -> [C x R] (tensor engine or DMA transpose)",
    .n_dims = 2,
    .dim_names = {"R", "C"},
    .n_variants = 2,
    .variants = {"tensor_engine", "dma"},
    .n_params = 2,
    .param_names = {"ts", "bufs"},
    .param_help = {"tensor_engine: columns per loaded strip, a multiple of pe_cols (0: 4 blocks)",
                   "buffers per pool (0: 2)"},
    .check_shapes = {{2, {256, 384}},
                     {2, {200, 300}},
                     {2, {1, 7}},
                     {2, {1, 8192}},
                     {2, {1, 8191}},
                     {2, {131, 1031}}},
    .perf_shapes = {{2, {8192, 8192}}, {2, {4096, 1024}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
};
