/*
 * avgpool2d.c - 2-D average pooling, window R x R with stride R ("valid": trailing rows and
 * columns that do not fill a window are dropped), of X [C x H x W] into Y [C x OH x OW],
 * OH = H / R, OW = W / R. (The suite's conv/pool kernel: pooling rather than conv2d.)
 *
 * Channels map to partitions in blocks of `partitions`. Each tile holds OHc whole window rows
 * (OHc * R input rows of W elements, one contiguous run per channel); the vector engine sums
 * each window with one tensor_reduce over a 4-D view [OHc, OW, R, R] (strides R*W, R, W, 1)
 * into fp32, and a tensor_scalar multiply by 1 / R^2 writes the output dtype. Params: chunk
 * (input elements per partition per tile; default as large as the double-buffered pools
 * allow, capped at 8192) and bufs.
 */
#include "gs/kernel.h"

#include <inttypes.h>
#include <stdio.h>

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *Y = &a->t[1];
    int64_t C = a->dims[0], H = a->dims[1], W = a->dims[2], R = a->dims[3];
    int64_t OH = H / R, OW = W / R;
    size_t es = gs_dtype_size(a->dtype);
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0
                        ? (unsigned)GS_MIN(gs_kernel_param(a, "bufs", 0), (int64_t)64)
                        : 2u;
    int64_t chunk = gs_kernel_param(a, "chunk", 0) > 0 ? gs_kernel_param(a, "chunk", 0) : 8192;
    chunk = GS_MIN(chunk, (int64_t)c->max_free_sbuf);
    int64_t OHc = GS_MIN(OH, chunk / (R * W));
    if (OHc < 1)
        return gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                          "does not fit: one window row needs %" PRId64 " elements per partition "
                          "(chunk %" PRId64 ")",
                          R * W, chunk);
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", bufs, (uint64_t)(OHc * R * W) * es);
    gs_pool *ps = gs_pool_create(kb, GS_MEM_SBUF, "sum", bufs, (uint64_t)(OHc * OW) * 4);
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", bufs, (uint64_t)(OHc * OW) * es);
    for (int64_t c0 = 0; c0 < C && gs_kb_ok(kb); c0 += c->partitions) {
        unsigned cp = (unsigned)GS_MIN((int64_t)c->partitions, C - c0);
        for (int64_t oh0 = 0; oh0 < OH && gs_kb_ok(kb); oh0 += OHc) {
            uint32_t nh = (uint32_t)GS_MIN(OHc, OH - oh0);
            gs_tile x = gs_tile_alloc(px, a->dtype, cp, (uint32_t)(nh * R * W));
            gs_dma_copy(kb, x.ap, gs_hbm_rows(X, c0, cp, oh0 * R * W, (uint32_t)(nh * R * W)), -1);
            gs_ap win = x.ap; /* [nh, OW, R, R] windows of the loaded rows */
            win.ndim = 4;
            win.shape[0] = nh;
            win.shape[1] = (uint32_t)OW;
            win.shape[2] = (uint32_t)R;
            win.shape[3] = (uint32_t)R;
            /* in-tile strides: at most the tile's free elements (which fit its pool) */
            win.stride[0] = (int32_t)(R * W);
            win.stride[1] = (int32_t)R;
            win.stride[2] = (int32_t)W;
            win.stride[3] = 1;
            gs_tile sum = gs_tile_alloc(ps, GS_FP32, cp, (uint32_t)(nh * OW));
            gs_tensor_reduce(kb, gs_tile_view2(&sum, 0, cp, 0, nh, (uint32_t)OW, (uint32_t)OW), win,
                             GS_ALU_ADD, 2);
            gs_tile y = gs_tile_alloc(py, a->dtype, cp, (uint32_t)(nh * OW));
            gs_tensor_scalar(kb, GS_ENG_VECTOR, y.ap, sum.ap, GS_ALU_MUL,
                             gs_imm((float)(1.0 / (double)(R * R))), GS_ALU_BYPASS, gs_imm(0.0f));
            gs_dma_copy(kb, gs_hbm_rows(Y, c0, cp, oh0 * OW, (uint32_t)(nh * OW)), y.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 2) return -1;
    int64_t C = a->dims[0], H = a->dims[1], W = a->dims[2], R = a->dims[3];
    if (C <= 0 || H <= 0 || W <= 0 || R <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "avgpool2d: C, H, W, R must be positive"),
               -1;
    if (R > H || R > W)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "avgpool2d: window %" PRId64 " larger than the %" PRId64 "x%" PRId64
                            " image",
                            R, H, W),
               -1;
    snprintf(t[0].name, sizeof t[0].name, "X");
    t[0].kind = GS_TENSOR_INPUT;
    t[0].shape[1] = H * W;
    snprintf(t[1].name, sizeof t[1].name, "Y");
    t[1].kind = GS_TENSOR_OUTPUT;
    t[1].shape[1] = (H / R) * (W / R);
    for (int i = 0; i < 2; i++) {
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = C;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 2;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t C = a->dims[0], H = a->dims[1], W = a->dims[2], R = a->dims[3];
    int64_t OH = H / R, OW = W / R;
    for (int64_t c = 0; c < C; c++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double s = 0.0;
                for (int64_t r = 0; r < R; r++)
                    for (int64_t q = 0; q < R; q++)
                        s += in[0][c * H * W + (oh * R + r) * W + ow * R + q];
                out[0][c * OH * OW + oh * OW + ow] = s / (double)(R * R);
            }
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)(a->dims[3] * a->dims[3]);
}

const gs_kernel_def gs_kernel_avgpool2d = {
    .name = "avgpool2d",
    .summary = "Y = average pool R x R, stride R, of X [C x H x W] (valid)",
    .n_dims = 4,
    .dim_names = {"C", "H", "W", "R"},
    .n_variants = 1,
    .variants = {"default"},
    .n_params = 2,
    .param_names = {"chunk", "bufs"},
    .param_help = {"input elements per partition per tile (0: 8192)", "buffers per pool (0: 2)"},
    .check_shapes = {{4, {128, 16, 16, 2}}, {4, {200, 17, 23, 3}}, {4, {1, 3, 3, 3}}},
    .perf_shapes = {{4, {512, 224, 224, 2}}, {4, {8192, 64, 64, 4}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
