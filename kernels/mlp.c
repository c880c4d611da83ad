/*
 * mlp.c - one MLP layer Y = gelu(X x W + bias) for X [T tokens x D], W [D x F], bias [F].
 *
 * Layout: features on partitions. The kernel computes Y^T = W^T X^T, so W [D x F] is the
 * stationary operand as given, X is given transposed as XT [D x T] (the moving operand), and
 * the output is YT [F x T]: every output row is one feature, which makes the bias a
 * per-partition [F x 1] operand the scalar engine can add.
 *
 * Variant "fused": the pipelined matmul schedule of matmul.c whose PSUM evacuation is one
 * scalar-engine activation gelu(acc * 1 + bias[f]) straight to the output dtype.
 * Variant "unfused": three kernels' worth of HBM round trips, as separate framework ops would
 * do: (1) the same matmul to an fp32 HBM tensor H, (2) H2 = H + bias (vector engine) to HBM,
 * (3) YT = gelu(H2) (scalar engine). H and H2 are fp32 so the extra passes cost time, not
 * accuracy (the reference also checks them). Params as matmul; param 4 (chunk) sets the free
 * elements per tile of the elementwise passes.
 */
#include "matmul.h"
#include "kernel_util.h"
#include "gs/kernel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { V_FUSED, V_UNFUSED };

/* dst = f(src + bias) over [F x T] fp32/any HBM tensors, tiled [partitions x chunk]. */
static void elementwise_pass(gs_kb *kb, const gs_kernel_args *a, const gs_tensor *src,
                             const gs_tensor *dst, const gs_tensor *bias)
{
    const gs_caps *c = gs_kb_caps(kb);
    int64_t F = a->dims[2], T = a->dims[0];
    int64_t chunk = gs_kernel_param(a, "chunk", 0) > 0 ? gs_kernel_param(a, "chunk", 0) : 2048;
    chunk = GS_MIN(GS_MIN(chunk, T), (int64_t)c->max_free_sbuf);
    gs_pool *pin =
        gs_pool_create(kb, GS_MEM_SBUF, "in", 2, (uint64_t)chunk * gs_dtype_size(src->dtype));
    gs_pool *pout =
        gs_pool_create(kb, GS_MEM_SBUF, "out", 2, (uint64_t)chunk * gs_dtype_size(dst->dtype));
    gs_pool *pb =
        bias ? gs_pool_create(kb, GS_MEM_SBUF, "bias", 2, gs_dtype_size(bias->dtype)) : NULL;
    for (int64_t f0 = 0; f0 < F && gs_kb_ok(kb); f0 += c->partitions) {
        unsigned fp = (unsigned)GS_MIN((int64_t)c->partitions, F - f0);
        gs_tile bt;
        memset(&bt, 0, sizeof bt);
        if (bias) {
            bt = gs_tile_alloc(pb, bias->dtype, fp, 1);
            gs_dma_copy(kb, bt.ap, gs_hbm_rows(bias, f0, fp, 0, 1), -1);
        }
        for (int64_t t0 = 0; t0 < T && gs_kb_ok(kb); t0 += chunk) {
            uint32_t tw = (uint32_t)GS_MIN(chunk, T - t0);
            gs_tile x = gs_tile_alloc(pin, src->dtype, fp, tw);
            gs_tile y = gs_tile_alloc(pout, dst->dtype, fp, tw);
            gs_dma_copy(kb, x.ap, gs_hbm_rows(src, f0, fp, t0, tw), -1);
            if (bias)
                gs_tensor_scalar(kb, GS_ENG_VECTOR, y.ap, x.ap, GS_ALU_ADD, gs_per_partition(bt.ap),
                                 GS_ALU_BYPASS, gs_imm(0.0f));
            else
                gs_activation(kb, y.ap, x.ap, GS_ACT_GELU, gs_imm(1.0f), gs_imm(0.0f), NULL);
            gs_dma_copy(kb, gs_hbm_rows(dst, f0, fp, t0, tw), y.ap, -1);
        }
    }
    gs_pool_release(kb, pin);
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    gs_mm_problem p;
    memset(&p, 0, sizeof p);
    p.at = &a->t[1]; /* W [D x F]: K = D, M = F */
    p.b = &a->t[0];  /* XT [D x T]: N = T */
    p.M = a->dims[2];
    p.K = a->dims[1];
    p.N = a->dims[0];
    p.m_hi = p.M;
    if (a->variant == V_FUSED) {
        p.c = &a->t[3];
        p.bias = &a->t[2];
        p.act = GS_ACT_GELU;
        return gs_mm_build(kb, &p, GS_MM_PIPELINED, a->param);
    }
    const gs_tensor *H = &a->t[4], *H2 = &a->t[5];
    p.c = H;
    p.act = GS_ACT_IDENTITY;
    gs_mm_build(kb, &p, GS_MM_PIPELINED, a->param);
    elementwise_pass(kb, a, H, H2, &a->t[2]);
    elementwise_pass(kb, a, H2, &a->t[3], NULL);
    return gs_kb_status(kb);
}

static void decl(gs_tensor_decl *t, const char *name, gs_tensor_kind kind, gs_dtype dt, int64_t r,
                 int64_t c)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->dtype = dt;
    t->ndim = 2;
    t->shape[0] = r;
    t->shape[1] = c;
    t->lo = -1.0;
    t->hi = 1.0;
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 6) return -1;
    int64_t T = a->dims[0], D = a->dims[1], F = a->dims[2];
    if (T <= 0 || D <= 0 || F <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "mlp: T, D, F must be positive"), -1;
    decl(&t[0], "XT", GS_TENSOR_INPUT, a->dtype, D, T);
    decl(&t[1], "W", GS_TENSOR_INPUT, a->dtype, D, F);
    decl(&t[2], "bias", GS_TENSOR_INPUT, a->dtype, F, 1);
    decl(&t[3], "YT", GS_TENSOR_OUTPUT, a->dtype, F, T);
    if (a->variant != V_UNFUSED) return 4;
    decl(&t[4], "H", GS_TENSOR_SCRATCH, GS_FP32, F, T);
    decl(&t[5], "H2", GS_TENSOR_SCRATCH, GS_FP32, F, T);
    return 6;
}

static double gelu(double x)
{
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* out[0] = YT; for "unfused" also out[1] = H, out[2] = H2 (its HBM intermediates). */
static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t T = a->dims[0], D = a->dims[1], F = a->dims[2];
    const double *xt = in[0], *w = in[1], *bias = in[2];
    /* S[F x T] = W^T XT, held in out[0] until the epilogue overwrites it */
    gs_ref_gemm(1, 0, F, T, D, w, F, xt, T, out[0], T);
    for (int64_t f = 0; f < F; f++)
        for (int64_t tk = 0; tk < T; tk++) {
            double s = out[0][f * T + tk];
            out[0][f * T + tk] = gelu(s + bias[f]);
            if (a->variant == V_UNFUSED) {
                out[1][f * T + tk] = s;
                out[2][f * T + tk] = s + bias[f];
            }
        }
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1];
}

const gs_kernel_def gs_kernel_mlp = {
    .name = "mlp",
    .summary = "YT = gelu(W^T XT + bias): one MLP layer, features on partitions",
    .n_dims = 3,
    .dim_names = {"T", "D", "F"},
    .n_variants = 2,
    .variants = {"fused", "unfused"},
    .n_params = 5,
    .param_names = {"tn", "bufs", "mb", "nb", "chunk"},
    .param_help = {"moving free size per matmul (0: largest a PSUM bank and the engine allow)",
                   "buffers per streamed pool of the matmul (0: 2)",
                   "W block columns, rounded up to TM (0: what SBUF holds)",
                   "XT block columns, rounded up to TN (0: half of SBUF)",
                   "unfused: free elements per tile of the bias and gelu passes (0: 2048)"},
    .check_shapes = {{3, {256, 128, 128}}, {3, {300, 200, 150}}},
    .perf_shapes = {{3, {4096, 4096, 4096}}, {3, {8192, 4096, 4096}}, {3, {2048, 1024, 4096}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
