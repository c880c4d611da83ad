/*
 * matmul_fp8.c - C[M x N] = A[M x K] x B[K x N] with fp8 e4m3 inputs (A given as AT [K x M]),
 * fp32 accumulation in PSUM and a bf16 or fp32 output (the kernel's dtype).
 *
 * Runs the pipelined schedule of matmul.c: fp8 halves the bytes per operand element, so blocks
 * hold twice the columns, and where the target has fp8 "double row" matmul (caps.double_row_k)
 * each matmul contracts 2 x pe_rows in the time of a bf16 one of pe_rows; elsewhere fp8
 * multiplies at its matmul_rate. A target whose tensor engine does not multiply fp8_e4m3 gets
 * "unsupported: fp8 matmul". Params as matmul.
 */
#include "matmul.h"
#include "gs/kernel.h"

#include <stdio.h>
#include <string.h>

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    if (!(c->matmul_dtypes & (1u << GS_FP8_E4M3)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: fp8 matmul (the tensor engine does not multiply fp8_e4m3)");
    gs_mm_problem p;
    memset(&p, 0, sizeof p);
    p.at = &a->t[0];
    p.b = &a->t[1];
    p.c = &a->t[2];
    p.M = a->dims[0];
    p.K = a->dims[1];
    p.N = a->dims[2];
    p.m_hi = p.M;
    p.act = GS_ACT_IDENTITY;
    return gs_mm_build(kb, &p, GS_MM_PIPELINED, a->param);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    int64_t M = a->dims[0], K = a->dims[1], N = a->dims[2];
    if (M <= 0 || K <= 0 || N <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "matmul_fp8: M, K, N must be positive"),
               -1;
    const struct {
        const char *name;
        gs_tensor_kind kind;
        gs_dtype dt;
        int64_t r, c;
    } spec[3] = {{"AT", GS_TENSOR_INPUT, GS_FP8_E4M3, K, M},
                 {"B", GS_TENSOR_INPUT, GS_FP8_E4M3, K, N},
                 {"C", GS_TENSOR_OUTPUT, a->dtype, M, N}};
    for (int i = 0; i < 3; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", spec[i].name);
        t[i].kind = spec[i].kind;
        t[i].dtype = spec[i].dt;
        t[i].ndim = 2;
        t[i].shape[0] = spec[i].r;
        t[i].shape[1] = spec[i].c;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 3;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    gs_mm_reference(a->dims[0], a->dims[1], a->dims[2], in[0], in[1], out[0]);
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1];
}

const gs_kernel_def gs_kernel_matmul_fp8 = {
    .name = "matmul_fp8",
    .summary = "C = A x B with fp8 e4m3 inputs, fp32 accumulation, bf16/fp32 output",
    .n_dims = 3,
    .dim_names = {"M", "K", "N"},
    .n_variants = 1,
    .variants = {"default"},
    .n_params = GS_MM_N_PARAMS,
    .param_names = {"tn", "bufs", "mb", "nb"},
    .param_help = {"moving free size per matmul (0: largest a PSUM bank and the engine allow)",
                   "buffers per streamed pool (0: 2)",
                   "AT block columns, rounded up to TM (0: what SBUF holds)",
                   "B block columns, rounded up to TN (0: half of SBUF)"},
    .check_shapes = {{3, {128, 256, 512}}, {3, {200, 300, 700}}},
    .perf_shapes = {{3, {4096, 4096, 4096}}, {3, {8192, 8192, 8192}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
