/*
 * elementwise_add.c - C = A + B over an [R x C] tensor: the bandwidth-bound baseline.
 *
 * Rows map to partitions in blocks of `partitions`; columns are processed in chunks of
 * `chunk` elements (param 0; default: as large as the double-buffered pools allow, capped at
 * 4096). With bufs (param 1, default 2) > 1 the loads of the next chunk overlap the add and
 * store of this one. Tails in both dimensions use smaller tiles.
 *
 * Variant "spmd": the same schedule on every core of the chip, each core owning a disjoint
 * range of whole row blocks (caps->core_id of caps->cores); all cores share HBM bandwidth.
 */
#include <stdio.h>

#include "gs/kernel.h"

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *A = &a->t[0], *B = &a->t[1], *C = &a->t[2];
    int64_t R = a->dims[0], W = a->dims[1];
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0 ? (unsigned)gs_kernel_param(a, "bufs", 0) : 2;
    size_t es = gs_dtype_size(a->dtype);
    int64_t chunk = gs_kernel_param(a, "chunk", 0);
    if (chunk <= 0) {
        /* three pools (a, b, out) of `bufs` buffers in SBUF */
        int64_t fit = (int64_t)(c->sbuf_partition_bytes / (3u * (uint64_t)bufs * es));
        /* not even one element per buffer: the pools below say it does not fit */
        chunk = GS_MAX(GS_MIN(GS_MIN(fit, (int64_t)4096), (int64_t)c->max_free_sbuf), 1);
    }
    if (chunk > W) chunk = W;
    int64_t r_lo = 0, r_hi = R;
    if (a->variant == 1) {
        int64_t blocks = (R + c->partitions - 1) / c->partitions;
        int64_t per = (blocks + c->cores - 1) / GS_MAX(c->cores, 1u);
        r_lo = GS_MIN(R, (int64_t)c->core_id * per * c->partitions);
        r_hi = GS_MIN(R, r_lo + per * c->partitions);
        if (r_lo >= r_hi) return gs_kb_status(kb); /* more cores than row blocks */
    }
    gs_pool *pa = gs_pool_create(kb, GS_MEM_SBUF, "a", bufs, (uint64_t)chunk * es);
    gs_pool *pb = gs_pool_create(kb, GS_MEM_SBUF, "b", bufs, (uint64_t)chunk * es);
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "out", bufs, (uint64_t)chunk * es);
    for (int64_t r0 = r_lo; r0 < r_hi && gs_kb_ok(kb); r0 += c->partitions) {
        unsigned np = (unsigned)GS_MIN((int64_t)c->partitions, r_hi - r0);
        for (int64_t c0 = 0; c0 < W && gs_kb_ok(kb); c0 += chunk) {
            uint32_t nf = (uint32_t)GS_MIN(chunk, W - c0);
            gs_tile ta = gs_tile_alloc(pa, a->dtype, np, nf);
            gs_tile tb = gs_tile_alloc(pb, a->dtype, np, nf);
            gs_tile to = gs_tile_alloc(po, a->dtype, np, nf);
            gs_dma_copy(kb, ta.ap, gs_hbm_rows(A, r0, np, c0, nf), -1);
            gs_dma_copy(kb, tb.ap, gs_hbm_rows(B, r0, np, c0, nf), -1);
            gs_tensor_tensor(kb, to.ap, ta.ap, tb.ap, GS_ALU_ADD);
            gs_dma_copy(kb, gs_hbm_rows(C, r0, np, c0, nf), to.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    if (a->dims[0] <= 0 || a->dims[1] <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "elementwise_add: R and C must be positive"),
               -1;
    const char *names[3] = {"A", "B", "C"};
    for (int i = 0; i < 3; i++) {
        gs_tensor_decl *d = &t[i];
        snprintf(d->name, sizeof d->name, "%s", names[i]);
        d->kind = i < 2 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        d->dtype = a->dtype;
        d->ndim = 2;
        d->shape[0] = a->dims[0];
        d->shape[1] = a->dims[1];
        d->lo = -1.0;
        d->hi = 1.0;
    }
    return 3;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t n = a->dims[0] * a->dims[1];
    for (int64_t i = 0; i < n; i++)
        out[0][i] = in[0][i] + in[1][i];
}

const gs_kernel_def gs_kernel_elementwise_add = {
    .name = "elementwise_add",
    .summary = "C = A + B (bandwidth-bound baseline)",
    .n_dims = 2,
    .dim_names = {"R", "C"},
    .n_variants = 2,
    .variants = {"default", "spmd"},
    .spmd_variants = 1u << 1,
    .n_params = 2,
    .param_names = {"chunk", "bufs"},
    .param_help = {"free elements per tile (0: largest that fits, <= 4096)",
                   "buffers per pool (2 = double buffering)"},
    .check_shapes = {{2, {256, 1024}},
                     {2, {200, 777}},
                     {2, {1, 5}},
                     {2, {1, 8192}},
                     {2, {1, 8191}},
                     {2, {131, 1031}}},
    .perf_shapes = {{2, {8192, 8192}}, {2, {4096, 2048}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
};
