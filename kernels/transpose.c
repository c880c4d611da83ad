/*
 * transpose.c - Y[C x R] = X[R x C]^T.
 *
 * Variant "tensor_engine": X is loaded in row strips [TP rows x up to TS columns] (TP = pe_rows,
 * rows on partitions); each [TP x TF] block (TF = pe_cols) is transposed by the tensor engine
 * (identity trick) into a PSUM bank, evacuated to SBUF by the vector engine and stored as rows
 * of Y; the blocks of G row strips (param rg) are stored together, so each stored row of Y is
 * G*TP elements long. Variant "dma": the DMA engines transpose [TP x TF] blocks on the way from HBM
 * into SBUF (gs_dma_transpose: 2-byte dtypes, only where the target has DMA transpose; elsewhere
 * "unsupported"), then the blocks are stored. Params: strip columns (ts), buffers (bufs), row
 * strips per store (rg).
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
    /* A strip: several blocks side by side, so each load descriptor carries a longer row;
     * a row group: G row strips whose transposed blocks are stored together, so each stored
     * row of Y is G*TP elements long instead of TP. Both default to 4 KiB rows: a descriptor
     * per 256 B row made the stores DMA-bound where descriptors cost (software DGE). The
     * blocks of GB strips are transposed side by side into one PSUM bank and evacuated by one
     * copy. */
    int64_t row_elems = (int64_t)(4096 / es);
    int64_t TS =
        gs_kernel_param(a, "ts", 0) > 0 ? gs_kernel_param(a, "ts", 0) : GS_MAX(4 * TF, row_elems);
    TS = GS_MAX(TF, TS / TF * TF);
    int64_t GB = GS_MAX((int64_t)1, (int64_t)(c->psum_bank_bytes / ((uint64_t)TP * es)));
    if (c->max_free_psum > 0) GB = GS_MAX((int64_t)1, GS_MIN(GB, (int64_t)c->max_free_psum / TP));
    if (c->max_free_sbuf > 0) GB = GS_MAX((int64_t)1, GS_MIN(GB, (int64_t)c->max_free_sbuf / TP));
    int64_t G =
        gs_kernel_param(a, "rg", 0) > 0 ? gs_kernel_param(a, "rg", 0) : GS_MAX(GB, row_elems / TP);
    G = GS_MAX((int64_t)1, GS_MIN(G, (R + TP - 1) / TP));
    TS = GS_MIN(TS, (C + TF - 1) / TF * TF);
    /* SBUF per partition: bufs strips of G*TS and 2*bufs outputs of G*TP; halve to fit */
    while ((uint64_t)bufs * (uint64_t)G * (uint64_t)(TS + 2 * TP) * es > c->sbuf_partition_bytes &&
           (G > 1 || TS > TF)) {
        if (G > 1 && (G * TP >= TS || TS <= TF))
            G /= 2;
        else
            TS = GS_MAX(TF, TS / 2 / TF * TF);
    }
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", bufs, (uint64_t)(G * TS) * es);
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "y", bufs * 2, (uint64_t)(G * TP) * es);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_PSUM, "t", bufs, c->psum_bank_bytes);
    for (int64_t r0 = 0; r0 < R && gs_kb_ok(kb); r0 += G * TP) {
        int64_t gr = GS_MIN(G * TP, R - r0); /* rows in this group */
        unsigned ng = (unsigned)((gr + TP - 1) / TP);
        unsigned rp0 = (unsigned)GS_MIN(TP, gr); /* partitions of the first strip */
        for (int64_t s0 = 0; s0 < C && gs_kb_ok(kb); s0 += TS) {
            uint32_t sw = (uint32_t)GS_MIN(TS, C - s0);
            gs_tile x = gs_tile_alloc(px, a->dtype, rp0, (uint32_t)(ng * sw));
            for (unsigned g = 0; g < ng; g++) {
                unsigned rp = (unsigned)GS_MIN(TP, gr - (int64_t)g * TP);
                gs_dma_copy(kb, gs_tile_view(&x, 0, rp, g * sw, sw),
                            gs_hbm_rows(X, r0 + (int64_t)g * TP, rp, s0, sw), -1);
            }
            for (uint32_t f0 = 0; f0 < sw && gs_kb_ok(kb); f0 += (uint32_t)TF) {
                unsigned cf = (unsigned)GS_MIN(TF, (int64_t)(sw - f0));
                gs_tile y = gs_tile_alloc(po, a->dtype, cf, (uint32_t)gr);
                for (unsigned b0 = 0; b0 < ng && gs_kb_ok(kb); b0 += (unsigned)GB) {
                    unsigned nb = (unsigned)GS_MIN(GB, (int64_t)(ng - b0));
                    uint32_t br = (uint32_t)GS_MIN((int64_t)nb * TP, gr - (int64_t)b0 * TP);
                    gs_tile t = gs_tile_alloc(pp, a->dtype, cf, br);
                    for (unsigned g = b0; g < b0 + nb; g++) {
                        unsigned rp = (unsigned)GS_MIN(TP, gr - (int64_t)g * TP);
                        gs_transpose(kb, gs_tile_view(&t, 0, cf, (g - b0) * (uint32_t)TP, rp),
                                     gs_tile_view(&x, 0, rp, g * sw + f0, cf));
                    }
                    gs_tensor_copy(kb, GS_ENG_VECTOR,
                                   gs_tile_view(&y, 0, cf, b0 * (uint32_t)TP, br), t.ap);
                }
                gs_dma_copy(kb, gs_hbm_rows(Y, s0 + f0, cf, r0, (int64_t)gr), y.ap, -1);
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
    .n_params = 3,
    .param_names = {"ts", "bufs", "rg"},
    .param_help = {"tensor_engine: columns per loaded strip, a multiple of pe_cols (0: 4 KiB rows)",
                   "buffers per pool (0: 2)",
                   "tensor_engine: row strips per store (0: 4 KiB stored rows)"},
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
