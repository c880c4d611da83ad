/*
 * bmm.c - batched matmul: C[b] = A[b] x B[b] for b < Bt, with A given transposed as
 * AT [Bt, K, M], B [Bt, K, N], C [Bt, M, N].
 *
 * Each batch is one matmul problem on the schedules of matmul.c (rows b*K.. of the 2-D views
 * of AT and B, b*M.. of C); SBUF is released between batches and the builder's dependencies
 * let batch b+1's loads start as soon as the space they reuse is free. Variants: "pipelined"
 * (the top of the matmul ladder) and "naive" (its bottom). Params as matmul.
 */
#include "matmul.h"
#include "gs/kernel.h"

#include <stdio.h>
#include <string.h>

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    int64_t Bt = a->dims[0];
    for (int64_t b = 0; b < Bt && gs_kb_ok(kb); b++) {
        gs_mm_problem p;
        memset(&p, 0, sizeof p);
        p.at = &a->t[0];
        p.b = &a->t[1];
        p.c = &a->t[2];
        p.M = a->dims[1];
        p.K = a->dims[2];
        p.N = a->dims[3];
        p.at_row0 = b * p.K;
        p.b_row0 = b * p.K;
        p.c_row0 = b * p.M;
        p.m_hi = p.M;
        p.act = GS_ACT_IDENTITY;
        gs_mm_build(kb, &p, a->variant == 0 ? GS_MM_PIPELINED : GS_MM_NAIVE, a->param);
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    int64_t Bt = a->dims[0], M = a->dims[1], K = a->dims[2], N = a->dims[3];
    if (Bt <= 0 || M <= 0 || K <= 0 || N <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "bmm: B, M, K, N must be positive"),
               -1;
    const struct {
        const char *name;
        gs_tensor_kind kind;
        int64_t r, c;
    } spec[3] = {
        {"AT", GS_TENSOR_INPUT, K, M}, {"B", GS_TENSOR_INPUT, K, N}, {"C", GS_TENSOR_OUTPUT, M, N}};
    for (int i = 0; i < 3; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", spec[i].name);
        t[i].kind = spec[i].kind;
        t[i].dtype = a->dtype;
        t[i].ndim = 3;
        t[i].shape[0] = Bt;
        t[i].shape[1] = spec[i].r;
        t[i].shape[2] = spec[i].c;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 3;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t Bt = a->dims[0], M = a->dims[1], K = a->dims[2], N = a->dims[3];
    for (int64_t b = 0; b < Bt; b++)
        gs_mm_reference(M, K, N, in[0] + b * K * M, in[1] + b * K * N, out[0] + b * M * N);
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[2];
}

const gs_kernel_def gs_kernel_bmm = {
    .name = "bmm",
    .summary = "batched C[b] = A[b] x B[b] (A given as AT [B, K, M])",
    .n_dims = 4,
    .dim_names = {"B", "M", "K", "N"},
    .n_variants = 2,
    .variants = {"pipelined", "naive"},
    .n_params = GS_MM_N_PARAMS,
    .param_names = {"tn", "bufs", "mb", "nb"},
    .param_help = {"moving free size per matmul (0: largest a PSUM bank and the engine allow)",
                   "buffers per streamed pool (0: 2)",
                   "pipelined: AT block columns, rounded up to TM (0: what SBUF holds)",
                   "pipelined: B block columns, rounded up to TN (0: half of SBUF)"},
    .check_shapes = {{4, {2, 128, 128, 256}}, {4, {3, 70, 150, 200}}},
    .perf_shapes = {{4, {16, 512, 512, 512}}, {4, {8, 2048, 1024, 2048}}, {4, {64, 128, 64, 128}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
