/*
 * softmax.c - Y[r][c] = exp(X[r][c] - max_r) / sum_c exp(X[r][c] - max_r) along the rows of
 * X [R x C]. Rows map to partitions in blocks of `partitions`; the row is processed in column
 * chunks of `chunk` elements (param 0; default min(C, 2048, engine free-size limit)).
 *
 * Variant "three_pass": three separate sweeps over the row chunks, each streaming from HBM:
 *   1. load X, tensor_reduce max per chunk (vector), combine -> row max;
 *   2. load X again, exp(x - max) (activation), tensor_reduce add of the exps (vector), store
 *      the exps to Y;
 *   3. load Y back, multiply by 1 / sum (tensor_scalar), store Y.
 *   HBM traffic: 2 reads of X, 1 read and 2 writes of Y; nothing but one chunk needs SBUF.
 * Variant "fused": the row block stays in SBUF (one HBM read, one write). Pass 1 loads the
 *   chunks and reduces their maxima; pass 2 computes exp(x - max) with the activation's
 *   accumulate output giving the chunk sums in the same instruction (no separate reduction),
 *   then scales and stores. Needs C x (dtype + fp32) bytes per partition: a row longer than SBUF
 *   holds is "does not fit" (use three_pass).
 * Variant "fused_vexp": "fused" with pass 2 on the vector engine's exponential instruction
 *   (exp(x - max) and the row sum in one instruction, no scalar-engine function table) where the
 *   target has it (caps.ops: exponential); "unsupported: vector exponential" elsewhere.
 * Exps are kept in fp32 (in SBUF) or in the output dtype (three_pass, in Y itself, as a real
 * three-kernel pipeline would); sums and maxima are fp32. bufs (param 1, default max(2, DMA
 * queues / 4)) sets buffers per streaming pool.
 */
#include <math.h>
#include <stdio.h>

#include "gs/kernel.h"
#include "kernel_util.h"

enum { SM_THREE_PASS, SM_FUSED, SM_FUSED_VEXP };

#define SM_DEFAULT_CHUNK_CAP                                                                       \
    2048 /* elements per instruction: amortises the ~64-cycle issue cost                           \
          */

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *Y = &a->t[1];
    int64_t R = a->dims[0], W = a->dims[1];
    if (a->variant == SM_FUSED_VEXP && !(c->ops & (1ull << GS_OP_EXPONENTIAL)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: vector exponential (the target has no exponential op)");
    int fused = a->variant == SM_FUSED || a->variant == SM_FUSED_VEXP;
    /* several chunks in flight so more than a couple of DMA queues work at once */
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0 ? (unsigned)gs_kernel_param(a, "bufs", 0)
                                                      : GS_MAX(2u, c->dma_queues / 4);
    size_t es = gs_dtype_size(a->dtype);
    int64_t chunk = 0, nch = 0;
    if (gs_row_chunks(kb, "softmax", W, gs_kernel_param(a, "chunk", 0), SM_DEFAULT_CHUNK_CAP, 1,
                      &chunk, &nch) != GS_OK)
        return gs_kb_status(kb);
    /* per-row statistics: chunk partials, then [max, -max, sum, 1/sum] */
    gs_pool *ppart = gs_pool_create(kb, GS_MEM_SBUF, "partials", 2, (uint64_t)nch * 4);
    gs_pool *pstat = gs_pool_create(kb, GS_MEM_SBUF, "stats", 2, 4 * 4);
    gs_pool *px = NULL, *pe = NULL, *py = NULL;
    if (fused) {
        /* whole row block resident: the input and its exps */
        px = gs_pool_create(kb, GS_MEM_SBUF, "xrow", 2, (uint64_t)W * es);
        /* two exp rows where SBUF holds them, so the next block's exponentials do not wait
         * for this block's scaling pass */
        uint64_t rows2 = 2 * (uint64_t)W * (es + 4) + (uint64_t)(bufs * chunk) * es;
        pe = gs_pool_create(kb, GS_MEM_SBUF, "erow",
                            rows2 <= c->sbuf_partition_bytes * 3 / 4 ? 2 : 1, (uint64_t)W * 4);
        py = gs_pool_create(kb, GS_MEM_SBUF, "y", bufs, (uint64_t)chunk * es);
    } else {
        px = gs_pool_create(kb, GS_MEM_SBUF, "x", bufs, (uint64_t)chunk * es);
        py = gs_pool_create(kb, GS_MEM_SBUF, "y", bufs, (uint64_t)chunk * es);
    }
    for (int64_t r0 = 0; r0 < R && gs_kb_ok(kb); r0 += c->partitions) {
        unsigned np = (unsigned)GS_MIN((int64_t)c->partitions, R - r0);
        gs_tile pmax = gs_tile_alloc(ppart, GS_FP32, np, (uint32_t)nch);
        gs_tile psum = gs_tile_alloc(ppart, GS_FP32, np, (uint32_t)nch);
        gs_tile st = gs_tile_alloc(pstat, GS_FP32, np, 4);
        gs_ap mx = gs_tile_view(&st, 0, np, 0, 1), nmx = gs_tile_view(&st, 0, np, 1, 1);
        gs_ap sum = gs_tile_view(&st, 0, np, 2, 1), rcp = gs_tile_view(&st, 0, np, 3, 1);
        gs_tile xrow = {.free_elems = 0}, erow = {.free_elems = 0};
        if (fused) {
            xrow = gs_tile_alloc(px, a->dtype, np, (uint32_t)W);
            erow = gs_tile_alloc(pe, GS_FP32, np, (uint32_t)W);
        }
        /* pass 1: row max */
        for (int64_t k = 0; k < nch && gs_kb_ok(kb); k++) {
            int64_t c0 = k * chunk;
            uint32_t nf = (uint32_t)GS_MIN(chunk, W - c0);
            gs_ap xv;
            if (fused) {
                xv = gs_tile_view(&xrow, 0, np, (uint32_t)c0, nf);
            } else {
                gs_tile tx = gs_tile_alloc(px, a->dtype, np, nf);
                xv = tx.ap;
            }
            gs_dma_copy(kb, xv, gs_hbm_rows(X, r0, np, c0, nf), -1);
            gs_tensor_reduce(kb, gs_tile_view(&pmax, 0, np, (uint32_t)k, 1), xv, GS_ALU_MAX, 1);
        }
        gs_tensor_reduce(kb, mx, pmax.ap, GS_ALU_MAX, 1);
        gs_tensor_scalar(kb, GS_ENG_VECTOR, nmx, mx, GS_ALU_MUL, gs_imm(-1.0f), GS_ALU_BYPASS,
                         gs_imm(0));
        /* pass 2: exp(x - max) and the row sum */
        for (int64_t k = 0; k < nch && gs_kb_ok(kb); k++) {
            int64_t c0 = k * chunk;
            uint32_t nf = (uint32_t)GS_MIN(chunk, W - c0);
            gs_ap part = gs_tile_view(&psum, 0, np, (uint32_t)k, 1);
            if (a->variant == SM_FUSED_VEXP) {
                gs_exponential(kb, gs_tile_view(&erow, 0, np, (uint32_t)c0, nf),
                               gs_tile_view(&xrow, 0, np, (uint32_t)c0, nf), gs_per_partition(mx),
                               &part);
            } else if (a->variant == SM_FUSED) {
                gs_activation(kb, gs_tile_view(&erow, 0, np, (uint32_t)c0, nf),
                              gs_tile_view(&xrow, 0, np, (uint32_t)c0, nf), GS_ACT_EXP,
                              gs_imm(1.0f), gs_per_partition(nmx), &part);
            } else {
                gs_tile tx = gs_tile_alloc(px, a->dtype, np, nf);
                gs_tile ty = gs_tile_alloc(py, a->dtype, np, nf);
                gs_dma_copy(kb, tx.ap, gs_hbm_rows(X, r0, np, c0, nf), -1);
                gs_activation(kb, ty.ap, tx.ap, GS_ACT_EXP, gs_imm(1.0f), gs_per_partition(nmx),
                              NULL);
                gs_tensor_reduce(kb, part, ty.ap, GS_ALU_ADD, 1);
                gs_dma_copy(kb, gs_hbm_rows(Y, r0, np, c0, nf), ty.ap, -1);
            }
        }
        gs_tensor_reduce(kb, sum, psum.ap, GS_ALU_ADD, 1);
        /* 1/sum as sum^-1 on the vector engine (one element per partition): a reciprocal on
         * the scalar engine would switch its function table away from exp and back per block */
        gs_tensor_scalar(kb, GS_ENG_VECTOR, rcp, sum, GS_ALU_POW, gs_imm(-1.0f), GS_ALU_BYPASS,
                         gs_imm(0));
        /* pass 3: scale by 1 / sum */
        for (int64_t k = 0; k < nch && gs_kb_ok(kb); k++) {
            int64_t c0 = k * chunk;
            uint32_t nf = (uint32_t)GS_MIN(chunk, W - c0);
            gs_tile ty = gs_tile_alloc(py, a->dtype, np, nf);
            gs_ap src;
            if (fused) {
                src = gs_tile_view(&erow, 0, np, (uint32_t)c0, nf);
            } else {
                gs_tile tx = gs_tile_alloc(px, a->dtype, np, nf);
                gs_dma_copy(kb, tx.ap, gs_hbm_rows(Y, r0, np, c0, nf), -1);
                src = tx.ap;
            }
            gs_tensor_scalar(kb, GS_ENG_VECTOR, ty.ap, src, GS_ALU_MUL, gs_per_partition(rcp),
                             GS_ALU_BYPASS, gs_imm(0));
            gs_dma_copy(kb, gs_hbm_rows(Y, r0, np, c0, nf), ty.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 2) return -1;
    if (a->dims[0] <= 0 || a->dims[1] <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "softmax: R and C must be positive"),
               -1;
    const char *names[2] = {"X", "Y"};
    for (int i = 0; i < 2; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i == 0 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = a->dims[0];
        t[i].shape[1] = a->dims[1];
        /* logits spread over a few units so the row max matters */
        t[i].lo = -4.0;
        t[i].hi = 4.0;
    }
    return 2;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t R = a->dims[0], W = a->dims[1];
    for (int64_t r = 0; r < R; r++) {
        const double *x = in[0] + r * W;
        double *y = out[0] + r * W;
        double m = x[0], s = 0.0;
        for (int64_t i = 1; i < W; i++)
            m = x[i] > m ? x[i] : m;
        for (int64_t i = 0; i < W; i++)
            s += (y[i] = exp(x[i] - m));
        for (int64_t i = 0; i < W; i++)
            y[i] /= s;
    }
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1]; /* the row sum */
}

const gs_kernel_def gs_kernel_softmax = {
    .name = "softmax",
    .summary = "row softmax of X [R x C]; three_pass vs fused (scalar or vector exponential)",
    .n_dims = 2,
    .dim_names = {"R", "C"},
    .n_variants = 3,
    .variants = {"three_pass", "fused", "fused_vexp"},
    .n_params = 2,
    .param_names = {"chunk", "bufs"},
    .param_help = {"free elements per instruction (0: min(C, 2048))",
                   "buffers per streaming pool (0: max(2, DMA queues / 4))"},
    .check_shapes = {{2, {128, 512}},
                     {2, {200, 3000}},
                     {2, {5, 1}},
                     {2, {1, 8192}},
                     {2, {1, 8191}},
                     {2, {131, 1031}}},
    .perf_shapes = {{2, {8192, 8192}}, {2, {4096, 2048}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
