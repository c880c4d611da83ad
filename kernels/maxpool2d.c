/*
 * maxpool2d.c - 2-D max pooling, window K x K with stride S ("valid": windows inside the
 * image), of X [C x H x W] into Y [C x OH x OW], OH = (H - K) / S + 1, OW = (W - K) / S + 1.
 * C counts independent planes (batch x channels: every (image, channel) plane pools alone), so
 * a batch of images fills the partitions.
 *
 * Planes map to partitions in blocks of `partitions`. Each tile holds the input rows of OHc
 * output rows ((OHc - 1) S + K rows of W elements, one contiguous run per plane; with K > S
 * consecutive tiles share K - S halo rows, loaded by both). The max is exact (one of the
 * inputs), so every intermediate is kept in the dtype.
 * Variant "window": one vector-engine tensor_reduce(max) per tile over a 4-D view
 * [OHc, OW, K, K] of the rows (strides S W, S, W, 1): K^2 elements read per output.
 * Variant "separable": the max over the window's columns first (a reduce over [rows, OW, K],
 * strides W, S, 1, into a [rows x OW] tile), then over its rows (a reduce over [OHc, OW, K],
 * strides S OW, 1, OW): K (rows / OHc) + K elements per output, about K (1 + 1/S) against
 * K^2: 1.5x fewer at 3x3 stride 1, 2.5x at 5x5 stride 1, equal at 3x3 stride 2 and worse at
 * 2x2 stride 2 (6 against 4). Params: chunk (input elements per partition per tile, default
 * max(4096, K W)), bufs (default 4: the loads of the next tiles run while one is reduced; halved
 * while the pools do not fit).
 */
#include "gs/kernel.h"

#include <inttypes.h>
#include <stdio.h>

enum { MP_WINDOW, MP_SEPARABLE };

static gs_ap view(const gs_tile *t, unsigned np, int nd, const uint32_t *shape,
                  const int32_t *stride)
{
    gs_ap v = t->ap; /* in-tile strides: every view stays inside the tile (see the header) */
    v.part_count = np;
    v.ndim = (uint8_t)nd;
    for (int i = 0; i < nd; i++) {
        v.shape[i] = shape[i];
        v.stride[i] = stride[i];
    }
    return v;
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *Y = &a->t[1];
    int64_t C = a->dims[0], H = a->dims[1], W = a->dims[2], K = a->dims[3], S = a->dims[4];
    int64_t OH = (H - K) / S + 1, OW = (W - K) / S + 1;
    size_t es = gs_dtype_size(a->dtype);
    int sep = a->variant == MP_SEPARABLE;
    int64_t bufs = gs_kernel_param(a, "bufs", 4);
    int64_t chunk = gs_kernel_param(a, "chunk", GS_MAX((int64_t)4096, K * W));
    if (bufs <= 0 || bufs > 64 || chunk <= 0)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "maxpool2d: bufs must be in 1..64 and chunk positive (got %" PRId64
                          ", %" PRId64 ")",
                          bufs, chunk);
    if (K * W > (int64_t)c->max_free_sbuf)
        return gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                          "does not fit: one window row of %" PRId64 " x %" PRId64
                          " elements exceeds an instruction's %u (caps.max_free_sbuf)",
                          K, W, c->max_free_sbuf);
    if (chunk < K * W)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "maxpool2d: chunk %" PRId64 " is less than one window row (%" PRId64
                          " elements)",
                          chunk, K * W);
    chunk = GS_MIN(chunk, (int64_t)c->max_free_sbuf);
    int64_t OHc = GS_MIN(OH, (chunk / W - K) / S + 1);
    int64_t rows_max = (OHc - 1) * S + K;
    uint64_t per_buf = (uint64_t)(rows_max * W + (sep ? rows_max * OW : 0) + OHc * OW) * es;
    /* a long row on a small SBUF: fewer buffers rather than does-not-fit */
    while (gs_kernel_param(a, "bufs", 0) == 0 && bufs > 1 &&
           (uint64_t)bufs * per_buf > c->sbuf_partition_bytes)
        bufs /= 2;
    gs_pool *px =
        gs_pool_create(kb, GS_MEM_SBUF, "x", (unsigned)bufs, (uint64_t)(rows_max * W) * es);
    gs_pool *pc = sep ? gs_pool_create(kb, GS_MEM_SBUF, "colmax", (unsigned)bufs,
                                       (uint64_t)(rows_max * OW) * es)
                      : NULL;
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", (unsigned)bufs, (uint64_t)(OHc * OW) * es);
    for (int64_t c0 = 0; c0 < C && gs_kb_ok(kb); c0 += c->partitions) {
        unsigned cp = (unsigned)GS_MIN((int64_t)c->partitions, C - c0);
        for (int64_t oh0 = 0; oh0 < OH && gs_kb_ok(kb); oh0 += OHc) {
            uint32_t nh = (uint32_t)GS_MIN(OHc, OH - oh0);
            uint32_t rows = (uint32_t)((nh - 1) * S + K);
            gs_tile x = gs_tile_alloc(px, a->dtype, cp, (uint32_t)(rows * W));
            gs_dma_copy(kb, x.ap, gs_hbm_rows(X, c0, cp, oh0 * S * W, (uint32_t)(rows * W)), -1);
            gs_tile y = gs_tile_alloc(py, a->dtype, cp, (uint32_t)(nh * OW));
            const uint32_t yshape[2] = {nh, (uint32_t)OW};
            const int32_t ystride[2] = {(int32_t)OW, 1};
            gs_ap yv = view(&y, cp, 2, yshape, ystride);
            if (!sep) {
                const uint32_t sh[4] = {nh, (uint32_t)OW, (uint32_t)K, (uint32_t)K};
                const int32_t st[4] = {(int32_t)(S * W), (int32_t)S, (int32_t)W, 1};
                gs_tensor_reduce(kb, yv, view(&x, cp, 4, sh, st), GS_ALU_MAX, 2);
            } else {
                gs_tile cm = gs_tile_alloc(pc, a->dtype, cp, rows * (uint32_t)OW);
                const uint32_t sh1[3] = {rows, (uint32_t)OW, (uint32_t)K};
                const int32_t st1[3] = {(int32_t)W, (int32_t)S, 1};
                const uint32_t csh[2] = {rows, (uint32_t)OW};
                const int32_t cst[2] = {(int32_t)OW, 1};
                gs_tensor_reduce(kb, view(&cm, cp, 2, csh, cst), view(&x, cp, 3, sh1, st1),
                                 GS_ALU_MAX, 1);
                const uint32_t sh2[3] = {nh, (uint32_t)OW, (uint32_t)K};
                const int32_t st2[3] = {(int32_t)(S * OW), 1, (int32_t)OW};
                gs_tensor_reduce(kb, yv, view(&cm, cp, 3, sh2, st2), GS_ALU_MAX, 1);
            }
            gs_dma_copy(kb, gs_hbm_rows(Y, c0, cp, oh0 * OW, (uint32_t)(nh * OW)), y.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 2) return -1;
    int64_t C = a->dims[0], H = a->dims[1], W = a->dims[2], K = a->dims[3], S = a->dims[4];
    if (C <= 0 || H <= 0 || W <= 0 || K <= 0 || S <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "maxpool2d: C, H, W, K, S must be positive"),
               -1;
    if (K > H || K > W)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "maxpool2d: window %" PRId64 " larger than the %" PRId64 "x%" PRId64
                            " image",
                            K, H, W),
               -1;
    if (S > K)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "maxpool2d: stride %" PRId64 " larger than the window %" PRId64
                            " (inputs no window reads)",
                            S, K),
               -1;
    int64_t OH = (H - K) / S + 1, OW = (W - K) / S + 1;
    snprintf(t[0].name, sizeof t[0].name, "X");
    t[0].kind = GS_TENSOR_INPUT;
    t[0].shape[1] = H * W;
    snprintf(t[1].name, sizeof t[1].name, "Y");
    t[1].kind = GS_TENSOR_OUTPUT;
    t[1].shape[1] = OH * OW;
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
    int64_t C = a->dims[0], H = a->dims[1], W = a->dims[2], K = a->dims[3], S = a->dims[4];
    int64_t OH = (H - K) / S + 1, OW = (W - K) / S + 1;
    for (int64_t ch = 0; ch < C; ch++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                const double *x = in[0] + ch * H * W + oh * S * W + ow * S;
                double m = x[0];
                for (int64_t r = 0; r < K; r++)
                    for (int64_t q = 0; q < K; q++)
                        m = x[r * W + q] > m ? x[r * W + q] : m;
                out[0][ch * OH * OW + oh * OW + ow] = m;
            }
}

/*
 * Tolerance (gs_kernel_def.error_bound): none. The max of values of the dtype is one of them,
 * and every intermediate (the column maxima of "separable") is such a value stored in the
 * same dtype, so a correct kernel reproduces the reference exactly; any difference is a wrong
 * element (a window off by one row or column, a halo row missed).
 */
static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    (void)in;
    (void)ref;
    int64_t C = a->dims[0], H = a->dims[1], W = a->dims[2], K = a->dims[3], S = a->dims[4];
    int64_t n = C * ((H - K) / S + 1) * ((W - K) / S + 1);
    for (int64_t i = 0; i < n; i++)
        bound[0][i] = 0.0;
}

const gs_kernel_def gs_kernel_maxpool2d = {
    .name = "maxpool2d",
    .summary = "Y = max pool K x K, stride S, of X [C x H x W] (valid); window or separable",
    .n_dims = 5,
    .dim_names = {"C", "H", "W", "K", "S"},
    .n_variants = 2,
    .variants = {"window", "separable"},
    .n_params = 2,
    .param_names = {"chunk", "bufs"},
    .param_help = {"input elements per partition per tile (0: max(4096, K W))",
                   "buffers per pool (0: 4, fewer when they do not fit)"},
    .check_shapes = {{5, {128, 16, 16, 2, 2}},
                     {5, {200, 17, 23, 3, 2}},
                     {5, {131, 13, 29, 3, 1}},
                     {5, {1, 3, 8191, 3, 3}},
                     {5, {3, 5, 5, 5, 1}}},
    .perf_shapes = {{5, {256, 112, 112, 3, 2}}, {5, {2048, 32, 32, 5, 1}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
