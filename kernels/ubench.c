/*
 * ubench.c - micro-benchmarks: the kernels `gensweep calibrate` measures the model with, each
 * the shape of a published measurement (calibration/cases.yaml). They are ordinary kernels
 * (checked against a reference, swept with the rest) so the calibrated numbers come from the
 * same code path as every other job.
 *
 * ubench_dma [P x F]: one HBM->SBUF transfer of P partitions x F elements as instruction 0 (the
 *   span calibrate reads), then a store back to HBM so the data can be checked.
 * ubench_chain [N]: N dependent tiny instructions ([1 x 1] += 1 in place) after one
 *   load; "same_engine" all on the vector engine, "cross_engine" alternating vector and scalar
 *   (a semaphore between every pair). calibrate takes the slope of time over N.
 * ubench_matmul_stream [S x K x M x N]: S back-to-back matmuls accumulating stationary [K x M]
 *   times moving [K x N] into one PSUM bank, operands loaded once: the tensor engine's
 *   streaming rate.
 */
#include <stdio.h>

#include "gs/kernel.h"
#include "kernel_util.h"

/* The queue beside queue 0 for a second stream of transfers (stores after loads, the moving
 * operand beside the stationary), or queue 0 itself on a core with one queue: a kernel never
 * names a queue the config does not have. */
static int second_queue(const gs_caps *c)
{
    return c->dma_queues > 1 ? 1 : 0;
}

/* ---- ubench_dma ---- */

static gs_status dma_build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *A = &a->t[0], *B = &a->t[1];
    const int64_t P = a->dims[0], F = a->dims[1];
    /* more rows than partitions: one transfer per block of partitions (instruction 0 is the
     * first block's load) */
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "a", 2, (uint64_t)F * gs_dtype_size(a->dtype));
    for (int64_t r0 = 0; r0 < P && gs_kb_ok(kb); r0 += c->partitions) {
        const unsigned np = (unsigned)GS_MIN((int64_t)c->partitions, P - r0);
        gs_tile t = gs_tile_alloc(pool, a->dtype, np, (uint32_t)F);
        gs_dma_copy(kb, t.ap, gs_hbm_rows(A, r0, np, 0, (uint32_t)F), 0);
        gs_dma_copy(kb, gs_hbm_rows(B, r0, np, 0, (uint32_t)F), t.ap, second_queue(c));
    }
    return gs_kb_status(kb);
}

static int dma_tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 2) return -1;
    if (a->dims[0] <= 0 || a->dims[1] <= 0 || a->dims[1] > UINT32_MAX)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "ubench_dma: P and F must be positive (F < 2^32)"),
               -1;
    const char *names[2] = {"A", "B"};
    for (int i = 0; i < 2; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i == 0 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = a->dims[0];
        t[i].shape[1] = a->dims[1];
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 2;
}

static void copy_reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    const int64_t n = a->dims[0] * a->dims[1];
    for (int64_t i = 0; i < n; i++)
        out[0][i] = in[0][i];
}

const gs_kernel_def gs_kernel_ubench_dma = {
    .name = "ubench_dma",
    .summary = "micro-benchmark: one DMA transfer of [P x F] (calibration)",
    .n_dims = 2,
    .dim_names = {"P", "F"},
    .n_variants = 1,
    .variants = {"hbm_to_sbuf"},
    .check_shapes = {{2, {4, 4096}}, {2, {128, 128}}, {2, {7, 100}}},
    .perf_shapes = {{2, {128, 2048}}, {2, {128, 8192}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32),
    .tensors = dma_tensors,
    .build = dma_build,
    .reference = copy_reference,
};

/* ---- ubench_chain ---- */

static gs_status chain_build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *A = &a->t[0], *B = &a->t[1];
    const int64_t N = a->dims[0];
    const unsigned P = 1; /* tiny: one element, so each instruction costs its minimum */
    (void)c;
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, gs_dtype_size(a->dtype));
    gs_tile t = gs_tile_alloc(pool, a->dtype, P, 1);
    gs_dma_copy(kb, t.ap, gs_hbm_rows(A, 0, P, 0, 1), 0);
    const gs_operand one = gs_imm(1.0f);
    for (int64_t i = 0; i < N && gs_kb_ok(kb); i++) {
        const gs_engine e = a->variant == 1 && (i % 2) ? GS_ENG_SCALAR : GS_ENG_VECTOR;
        gs_tensor_scalar(kb, e, t.ap, t.ap, GS_ALU_ADD, one, GS_ALU_BYPASS, one);
    }
    gs_dma_copy(kb, gs_hbm_rows(B, 0, P, 0, 1), t.ap, 0);
    return gs_kb_status(kb);
}

static int chain_tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 2) return -1;
    if (a->dims[0] < 0 || a->dims[0] > 1000000)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "ubench_chain: N must be in 0..1000000"),
               -1;
    const char *names[2] = {"A", "B"};
    for (int i = 0; i < 2; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i == 0 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = 1;
        t[i].shape[1] = 1;
        t[i].lo = -8.0;
        t[i].hi = 8.0;
        t[i].integer = 1;
    }
    return 2;
}

static void chain_reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    out[0][0] = in[0][0] + (double)a->dims[0];
}

const gs_kernel_def gs_kernel_ubench_chain = {
    .name = "ubench_chain",
    .summary = "micro-benchmark: N dependent tiny instructions (calibration)",
    .n_dims = 1,
    .dim_names = {"N"},
    .n_variants = 2,
    .variants = {"same_engine", "cross_engine"},
    .check_shapes = {{1, {16}}, {1, {1}}},
    .perf_shapes = {{1, {1000}}},
    .dtypes = 1u << GS_FP32,
    .tensors = chain_tensors,
    .build = chain_build,
    .reference = chain_reference,
};

/* ---- ubench_matmul_stream ---- */

static gs_status mm_build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *S = &a->t[0], *Mv = &a->t[1], *O = &a->t[2];
    const int64_t reps = a->dims[0], K = a->dims[1], M = a->dims[2], N = a->dims[3];
    if (N > c->moving_free_max)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "ubench_matmul_stream: N = %lld must fit one matmul (N <= %u)",
                          (long long)N, c->moving_free_max);
    /* M wider than the PE array: one stream per block of pe_cols stationary columns; K deeper
     * than it: every step accumulates over the K blocks */
    const unsigned mb = GS_MIN((unsigned)M, c->pe_cols);
    const unsigned kb_rows = GS_MIN((unsigned)K, c->pe_rows);
    const int64_t KT = (K + kb_rows - 1) / kb_rows;
    const size_t es = gs_dtype_size(a->dtype);
    gs_pool *ps = gs_pool_create(kb, GS_MEM_SBUF, "stationary", 1, (uint64_t)(KT * M) * es);
    gs_pool *pm = gs_pool_create(kb, GS_MEM_SBUF, "moving", 1, (uint64_t)(KT * N) * es);
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "out", 2, (uint64_t)N * 4);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_PSUM, "acc", 2, (uint64_t)N * 4);
    gs_tile ts = gs_tile_alloc(ps, a->dtype, kb_rows, (uint32_t)(KT * M));
    gs_tile tm = gs_tile_alloc(pm, a->dtype, kb_rows, (uint32_t)(KT * N));
    for (int64_t kt = 0; kt < KT; kt++) {
        const unsigned tk = (unsigned)GS_MIN((int64_t)kb_rows, K - kt * kb_rows);
        gs_dma_copy(kb, gs_tile_view(&ts, 0, tk, (uint32_t)(kt * M), (uint32_t)M),
                    gs_hbm_rows(S, kt * kb_rows, tk, 0, (uint32_t)M), 0);
        gs_dma_copy(kb, gs_tile_view(&tm, 0, tk, (uint32_t)(kt * N), (uint32_t)N),
                    gs_hbm_rows(Mv, kt * kb_rows, tk, 0, (uint32_t)N), second_queue(c));
    }
    for (int64_t m0 = 0; m0 < M && gs_kb_ok(kb); m0 += mb) {
        const unsigned w = (unsigned)GS_MIN((int64_t)mb, M - m0);
        gs_tile to = gs_tile_alloc(po, GS_FP32, w, (uint32_t)N);
        gs_tile acc = gs_tile_alloc(pp, GS_FP32, w, (uint32_t)N);
        for (int64_t r = 0; r < reps && gs_kb_ok(kb); r++)
            for (int64_t kt = 0; kt < KT; kt++) {
                const unsigned tk = (unsigned)GS_MIN((int64_t)kb_rows, K - kt * kb_rows);
                gs_matmul(kb, acc.ap, gs_tile_view(&ts, 0, tk, (uint32_t)(kt * M + m0), w),
                          gs_tile_view(&tm, 0, tk, (uint32_t)(kt * N), (uint32_t)N),
                          r > 0 || kt > 0);
            }
        gs_tensor_copy(kb, GS_ENG_VECTOR, to.ap, acc.ap);
        gs_dma_copy(kb, gs_hbm_rows(O, m0, w, 0, (uint32_t)N), to.ap, 0);
    }
    return gs_kb_status(kb);
}

static int mm_tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    for (int i = 0; i < 4; i++)
        if (a->dims[i] <= 0 || a->dims[i] > 1000000)
            return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                                "ubench_matmul_stream: S, K, M, N must be in 1..1000000"),
                   -1;
    const int64_t K = a->dims[1], M = a->dims[2], N = a->dims[3];
    const char *names[3] = {"S", "V", "O"};
    const int64_t rows[3] = {K, K, M}, cols[3] = {M, N, N};
    for (int i = 0; i < 3; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i < 2 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = i < 2 ? a->dtype : GS_FP32;
        t[i].ndim = 2;
        t[i].shape[0] = rows[i];
        t[i].shape[1] = cols[i];
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 3;
}

/* S accumulations of the same product: S x (A^T B), the product through the shared
 * double-precision GEMM reference (BLAS speed, the same rounded inputs). */
static void mm_reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    const int64_t reps = a->dims[0], K = a->dims[1], M = a->dims[2], N = a->dims[3];
    gs_ref_gemm(1, 0, M, N, K, in[0], M, in[1], N, out[0], N);
    for (int64_t i = 0; i < M * N; i++)
        out[0][i] *= (double)reps;
}

static double mm_reduction_len(const gs_kernel_args *a)
{
    return (double)(a->dims[0] * a->dims[1]);
}

const gs_kernel_def gs_kernel_ubench_matmul_stream = {
    .name = "ubench_matmul_stream",
    .summary = "micro-benchmark: S back-to-back accumulating matmuls (calibration)",
    .n_dims = 4,
    .dim_names = {"S", "K", "M", "N"},
    .n_variants = 1,
    .variants = {"default"},
    .check_shapes = {{4, {8, 128, 128, 512}}, {4, {3, 64, 32, 100}}},
    .perf_shapes = {{4, {1000, 128, 128, 512}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32),
    .tensors = mm_tensors,
    .build = mm_build,
    .reference = mm_reference,
    .reduction_len = mm_reduction_len,
};
