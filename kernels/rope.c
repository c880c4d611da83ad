/*
 * rope.c - rotary position embedding (the "rotate half" form of GPT-NeoX / Llama) applied to
 * every head of a token's query or key row: X [T x H*D] (T tokens, H heads of head dim D, heads
 * side by side as a QKV projection writes them), with cos and sin tables [T x D/2] for the
 * tokens' positions (a model precomputes them: cos(pos_t * theta_i), theta_i = base^(-2i/D)).
 * For each token t, head h and i < D/2, with x1 = X[t][h*D + i] and x2 = X[t][h*D + D/2 + i]:
 *     Y[t][h*D + i]       = x1 cos[t][i] - x2 sin[t][i]
 *     Y[t][h*D + D/2 + i] = x2 cos[t][i] + x1 sin[t][i]
 *
 * Tokens map to partitions in blocks of `partitions`. Six vector-engine tensor_tensor
 * operations per rotation (four products into fp32 tiles, a difference and a sum that write
 * the output dtype); the vector engine is the kernel's bottleneck on every generation.
 * Variant "naive": one head at a time: per (token block, head) the head's [tp x D] slice and
 * both tables are loaded, six instructions on [tp x D/2] operands, one store; the tables are
 * loaded H times and every instruction pays the engine's fixed issue cost on D/2 elements.
 * Variant "fused": per token block the tables are loaded once; the heads are processed
 * `chunk / D` at a time, each instruction covering all of them through 2-D views [heads x D/2]
 * whose table operand has head stride 0 (one table row broadcast over the heads), so a token
 * block is six instructions when its row fits one tile. Params: chunk (X elements per
 * partition per tile, default max(4096, D)), bufs (buffers per streaming pool, default 2).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernel_util.h"
#include "gs/kernel.h"

enum { ROPE_NAIVE, ROPE_FUSED };

#define ROPE_DEFAULT_CHUNK 4096 /* X elements per partition per tile */

/* [heads x half] of a tile starting at free element f0, heads `stride` apart (0: broadcast). */
static gs_ap heads_view(const gs_tile *t, unsigned np, uint32_t f0, uint32_t heads, uint32_t half,
                        uint32_t stride)
{
    gs_ap v = gs_tile_view2(t, 0, np, f0, heads, half, stride);
    if (heads > 1 && stride == 0) {
        /* gs_tile_view2 folds a 1-row view only; a broadcast needs the 0 stride kept */
        v = gs_tile_view(t, 0, np, f0, half);
        v.ndim = 2;
        v.shape[0] = heads;
        v.stride[0] = 0;
        v.shape[1] = half;
        v.stride[1] = 1;
    }
    return v;
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *COS = &a->t[1], *SIN = &a->t[2], *Y = &a->t[3];
    int64_t T = a->dims[0], H = a->dims[1], D = a->dims[2], Dh = D / 2;
    size_t es = gs_dtype_size(a->dtype);
    int fused = a->variant == ROPE_FUSED;
    int64_t chunk = gs_kernel_param(a, "chunk", GS_MAX((int64_t)ROPE_DEFAULT_CHUNK, D));
    int64_t bufs = gs_kernel_param(a, "bufs", 2);
    if (chunk <= 0 || bufs <= 0 || bufs > 64)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "rope: chunk must be positive and bufs in 1..64 (got %" PRId64
                          ", %" PRId64 ")",
                          chunk, bufs);
    if (chunk < D)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "rope: chunk %" PRId64 " is less than one head (D = %" PRId64 ")", chunk,
                          D);
    if (D > (int64_t)c->max_free_sbuf)
        return gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                          "does not fit: one head of %" PRId64 " elements exceeds an instruction's "
                          "%u free elements (caps.max_free_sbuf)",
                          D, c->max_free_sbuf);
    chunk = GS_MIN(chunk, (int64_t)c->max_free_sbuf);
    /* heads per tile */
    int64_t hc = fused ? GS_MIN(H, chunk / D) : 1;
    uint64_t xb = (uint64_t)(hc * D) * es, pb = (uint64_t)(hc * Dh) * 4;
    unsigned pbufs = 4; /* the two products of both halves in flight */
    if (gs_kernel_param(a, "bufs", 0) == 0 &&
        2 * (uint64_t)bufs * ((uint64_t)Dh * es + xb) + pbufs * pb > c->sbuf_partition_bytes) {
        /* a head too long to double-buffer (D in the thousands on a small SBUF): single
         * buffers rather than does-not-fit */
        bufs = 1;
        pbufs = 2;
    }
    gs_pool *ptab =
        gs_pool_create(kb, GS_MEM_SBUF, "cos_sin", 2 * (unsigned)bufs, (uint64_t)Dh * es);
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", (unsigned)bufs, xb);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_SBUF, "prod", pbufs, pb);
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", (unsigned)bufs, xb);
    for (int64_t t0 = 0; t0 < T && gs_kb_ok(kb); t0 += c->partitions) {
        unsigned np = (unsigned)GS_MIN((int64_t)c->partitions, T - t0);
        gs_tile cs, sn;
        memset(&cs, 0, sizeof cs);
        memset(&sn, 0, sizeof sn);
        for (int64_t h0 = 0; h0 < H && gs_kb_ok(kb); h0 += hc) {
            uint32_t nh = (uint32_t)GS_MIN(hc, H - h0);
            if (!fused || h0 == 0) {
                cs = gs_tile_alloc(ptab, a->dtype, np, (uint32_t)Dh);
                sn = gs_tile_alloc(ptab, a->dtype, np, (uint32_t)Dh);
                gs_dma_copy(kb, cs.ap, gs_hbm_rows(COS, t0, np, 0, (uint32_t)Dh), -1);
                gs_dma_copy(kb, sn.ap, gs_hbm_rows(SIN, t0, np, 0, (uint32_t)Dh), -1);
            }
            uint32_t nf = (uint32_t)(nh * D), hd = (uint32_t)Dh;
            gs_tile x = gs_tile_alloc(px, a->dtype, np, nf);
            gs_dma_copy(kb, x.ap, gs_hbm_rows(X, t0, np, h0 * D, nf), -1);
            gs_tile y = gs_tile_alloc(py, a->dtype, np, nf);
            gs_ap x1 = heads_view(&x, np, 0, nh, hd, (uint32_t)D);
            gs_ap x2 = heads_view(&x, np, hd, nh, hd, (uint32_t)D);
            gs_ap y1 = heads_view(&y, np, 0, nh, hd, (uint32_t)D);
            gs_ap y2 = heads_view(&y, np, hd, nh, hd, (uint32_t)D);
            gs_ap cv = heads_view(&cs, np, 0, nh, hd, 0);
            gs_ap sv = heads_view(&sn, np, 0, nh, hd, 0);
            gs_tile p0 = gs_tile_alloc(pp, GS_FP32, np, nh * hd);
            gs_tile p1 = gs_tile_alloc(pp, GS_FP32, np, nh * hd);
            gs_ap q0 = heads_view(&p0, np, 0, nh, hd, hd), q1 = heads_view(&p1, np, 0, nh, hd, hd);
            gs_tensor_tensor(kb, q0, x1, cv, GS_ALU_MUL);
            gs_tensor_tensor(kb, q1, x2, sv, GS_ALU_MUL);
            gs_tensor_tensor(kb, y1, q0, q1, GS_ALU_SUB);
            gs_tile p2 = gs_tile_alloc(pp, GS_FP32, np, nh * hd);
            gs_tile p3 = gs_tile_alloc(pp, GS_FP32, np, nh * hd);
            gs_ap q2 = heads_view(&p2, np, 0, nh, hd, hd), q3 = heads_view(&p3, np, 0, nh, hd, hd);
            gs_tensor_tensor(kb, q2, x2, cv, GS_ALU_MUL);
            gs_tensor_tensor(kb, q3, x1, sv, GS_ALU_MUL);
            gs_tensor_tensor(kb, y2, q2, q3, GS_ALU_ADD);
            gs_dma_copy(kb, gs_hbm_rows(Y, t0, np, h0 * D, nf), y.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static void decl(gs_tensor_decl *t, const char *name, gs_tensor_kind kind, gs_dtype dt, int64_t r,
                 int64_t cols)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->dtype = dt;
    t->ndim = 2;
    t->shape[0] = r;
    t->shape[1] = cols;
    t->lo = -1.0;
    t->hi = 1.0;
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 4) return -1;
    int64_t T = a->dims[0], H = a->dims[1], D = a->dims[2];
    if (T <= 0 || H <= 0 || D <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "rope: T, H, D must be positive"), -1;
    if (D % 2)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "rope: head dim D = %" PRId64 " must be even (it rotates pairs)", D),
               -1;
    decl(&t[0], "X", GS_TENSOR_INPUT, a->dtype, T, H * D);
    /* random tables in [-1, 1) rather than true cos/sin: the kernel never assumes
     * cos^2 + sin^2 = 1, and the check then covers products of any size up to 1 */
    decl(&t[1], "cos", GS_TENSOR_INPUT, a->dtype, T, D / 2);
    decl(&t[2], "sin", GS_TENSOR_INPUT, a->dtype, T, D / 2);
    decl(&t[3], "Y", GS_TENSOR_OUTPUT, a->dtype, T, H * D);
    return 4;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t T = a->dims[0], H = a->dims[1], D = a->dims[2], Dh = D / 2;
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < H; h++) {
            const double *x = in[0] + t * H * D + h * D, *cs = in[1] + t * Dh, *sn = in[2] + t * Dh;
            double *y = out[0] + t * H * D + h * D;
            for (int64_t i = 0; i < Dh; i++) {
                y[i] = x[i] * cs[i] - x[Dh + i] * sn[i];
                y[Dh + i] = x[Dh + i] * cs[i] + x[i] * sn[i];
            }
        }
}

/*
 * Tolerance (gs_kernel_def.error_bound), u = the dtype's unit roundoff, v = fp32's. Each output
 * is y = p -+ q of two products (p = x1 cos, q = x2 sin, or x2 cos and x1 sin), computed as
 * rnd(fl32(fl32(p) -+ fl32(q))) (the executor may round the difference straight to the dtype;
 * the bound covers both): the products are off by e1 = v (|p| + |q|), the fp32 difference adds
 * v (|y| + e1), and the rounding to the dtype u (1 + v)(|y| + e1) (the difference's size bounded
 * with its error), plus the dtype's and fp32's subnormal floors (gs_tol_floor). The error scales
 * with |p| + |q|, not with |y|: where the two products cancel, |y| alone would be no bound.
 */
static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    (void)ref;
    int64_t T = a->dims[0], H = a->dims[1], D = a->dims[2], Dh = D / 2;
    const double u = gs_dtype_eps(a->dtype), v = gs_dtype_eps(GS_FP32);
    const double f = gs_tol_floor(a->dtype) + 3.0 * gs_tol_floor(GS_FP32);
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < H; h++) {
            const int64_t o = t * H * D + h * D;
            const double *x = in[0] + o, *cs = in[1] + t * Dh, *sn = in[2] + t * Dh;
            for (int64_t i = 0; i < Dh; i++)
                for (int half = 0; half < 2; half++) {
                    const double p = half ? x[Dh + i] * cs[i] : x[i] * cs[i];
                    const double q = half ? x[i] * sn[i] : x[Dh + i] * sn[i];
                    const double y = half ? p + q : p - q;
                    const double e1 = v * (fabs(p) + fabs(q));
                    bound[0][o + half * Dh + i] =
                        e1 + v * (fabs(y) + e1) + u * (1.0 + v) * (fabs(y) + e1) + f;
                }
        }
}

const gs_kernel_def gs_kernel_rope = {
    .name = "rope",
    .summary = "rotary embedding (rotate half) of X [T x H*D] with cos/sin [T x D/2]",
    .n_dims = 3,
    .dim_names = {"T", "H", "D"},
    .n_variants = 2,
    .variants = {"naive", "fused"},
    .n_params = 2,
    .param_names = {"chunk", "bufs"},
    .param_help = {"X elements per partition per tile, whole heads (0: max(4096, D))",
                   "buffers per streaming pool (0: 2)"},
    .check_shapes = {{3, {128, 4, 64}},
                     {3, {200, 3, 128}},
                     {3, {1, 64, 128}},
                     {3, {1, 1, 8192}},
                     {3, {131, 7, 34}},
                     {3, {1, 1, 2}}},
    .perf_shapes = {{3, {4096, 32, 128}}, {3, {16384, 8, 128}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
