/*
 * bmm.c - batched matmul: C[b] = A[b] x B[b] for b < Bt, with A given transposed as
 * AT [Bt, K, M], B [Bt, K, N], C [Bt, M, N].
 *
 * Each batch is one matmul problem on the schedules of matmul.c (rows b*K.. of the 2-D views
 * of AT and B, b*M.. of C); SBUF is released between batches and the builder's dependencies
 * let batch b+1's loads start as soon as the space they reuse is free. Variants: "pipelined"
 * (the top of the matmul ladder), "naive" (its bottom) and "batched" (below: groups of small
 * matrices per transfer; larger ones run pipelined). Params as matmul.
 */
#include "matmul.h"
#include "gs/kernel.h"

#include <stdio.h>
#include <string.h>

enum { BMM_PIPELINED, BMM_NAIVE, BMM_BATCHED };

/* Variant "batched", for matrices one matmul wide (M <= pe_cols, N <= the moving free size and
 * a PSUM bank): nb batches per group move in one DMA per operand ([K-tile x nb*M] of AT,
 * [K-tile x nb*N] of B, [M x nb*N] of C, the batch a second free dimension of the HBM pattern)
 * instead of three transfers per batch, each paying the DMA's fixed latency. The group's
 * matmuls fill PSUM banks side by side, each bank evacuated by one copy, alternating the
 * vector and scalar engines. */
static gs_status build_batched(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    int64_t Bt = a->dims[0], M = a->dims[1], K = a->dims[2], N = a->dims[3];
    size_t es = gs_dtype_size(a->dtype);
    int64_t KP = GS_MIN((int64_t)c->pe_rows, (int64_t)c->partitions);
    int64_t nk = (K + KP - 1) / KP;
    unsigned bufs = a->param[GS_MM_P_BUFS] > 0 ? (unsigned)GS_MIN(a->param[GS_MM_P_BUFS], 16) : 2;
    /* batches per PSUM bank, per group: a group's operands take at most half of SBUF */
    int64_t q = GS_MAX((int64_t)1, (int64_t)(c->psum_bank_bytes / ((uint64_t)N * 4)));
    if (c->max_free_psum > 0) q = GS_MAX((int64_t)1, GS_MIN(q, (int64_t)c->max_free_psum / N));
    int64_t per = (int64_t)((uint64_t)(nk * (M + N) + N) * es * bufs);
    int64_t nb = GS_MIN(Bt, GS_MAX((int64_t)1, (int64_t)(c->sbuf_partition_bytes / 2) / per));
    nb = GS_MIN(nb, (int64_t)32);
    if (c->max_free_sbuf > 0)
        nb = GS_MAX((int64_t)1, GS_MIN(nb, (int64_t)c->max_free_sbuf / GS_MAX(M, N)));
    nb = GS_MAX((int64_t)1, nb / q * q > 0 ? nb / q * q : nb);
    gs_pool *pa =
        gs_pool_create(kb, GS_MEM_SBUF, "at", bufs * (unsigned)nk, (uint64_t)(nb * M) * es);
    gs_pool *pb =
        gs_pool_create(kb, GS_MEM_SBUF, "b", bufs * (unsigned)nk, (uint64_t)(nb * N) * es);
    gs_pool *pc = gs_pool_create(kb, GS_MEM_SBUF, "c", bufs, (uint64_t)(nb * N) * es);
    gs_pool *pp =
        gs_pool_create(kb, GS_MEM_PSUM, "acc", GS_MIN(4u, c->psum_banks), c->psum_bank_bytes);
    const gs_tensor *AT = &a->t[0], *B = &a->t[1], *C = &a->t[2];
    unsigned ev = 0;
    for (int64_t b0 = 0; b0 < Bt && gs_kb_ok(kb); b0 += nb) {
        int64_t g = GS_MIN(nb, Bt - b0);
        gs_tile ta[64], tb[64];
        for (int64_t kt = 0; kt < nk && gs_kb_ok(kb); kt++) {
            int64_t k0 = kt * KP;
            unsigned kp = (unsigned)GS_MIN(KP, K - k0);
            ta[kt] = gs_tile_alloc(pa, a->dtype, kp, (uint32_t)(g * M));
            tb[kt] = gs_tile_alloc(pb, a->dtype, kp, (uint32_t)(g * N));
            const uint32_t sa[2] = {(uint32_t)g, (uint32_t)M}, sb[2] = {(uint32_t)g, (uint32_t)N};
            const int64_t da[2] = {K * M, 1}, db[2] = {K * N, 1};
            gs_dma_copy(kb, ta[kt].ap, gs_hbm_ap(AT, (b0 * K + k0) * M, kp, M, 2, sa, da), -1);
            gs_dma_copy(kb, tb[kt].ap, gs_hbm_ap(B, (b0 * K + k0) * N, kp, N, 2, sb, db), -1);
        }
        gs_tile tc = gs_tile_alloc(pc, a->dtype, (unsigned)M, (uint32_t)(g * N));
        for (int64_t j0 = 0; j0 < g && gs_kb_ok(kb); j0 += q) {
            int64_t nj = GS_MIN(q, g - j0);
            gs_tile acc = gs_tile_alloc(pp, GS_FP32, (unsigned)M, (uint32_t)(nj * N));
            for (int64_t j = j0; j < j0 + nj; j++)
                for (int64_t kt = 0; kt < nk; kt++) {
                    unsigned kp = (unsigned)GS_MIN(KP, K - kt * KP);
                    gs_matmul(
                        kb,
                        gs_tile_view(&acc, 0, (unsigned)M, (uint32_t)((j - j0) * N), (uint32_t)N),
                        gs_tile_view(&ta[kt], 0, kp, (uint32_t)(j * M), (uint32_t)M),
                        gs_tile_view(&tb[kt], 0, kp, (uint32_t)(j * N), (uint32_t)N), kt > 0);
                }
            gs_tensor_copy(
                kb, (ev++ & 1) ? GS_ENG_SCALAR : GS_ENG_VECTOR,
                gs_tile_view(&tc, 0, (unsigned)M, (uint32_t)(j0 * N), (uint32_t)(nj * N)), acc.ap);
        }
        const uint32_t sc[2] = {(uint32_t)g, (uint32_t)N};
        const int64_t dc[2] = {M * N, 1};
        gs_dma_copy(kb, gs_hbm_ap(C, b0 * M * N, (unsigned)M, N, 2, sc, dc), tc.ap, -1);
    }
    return gs_kb_status(kb);
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    int64_t Bt = a->dims[0];
    int64_t nmax = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    int64_t KP = GS_MIN((int64_t)c->pe_rows, (int64_t)c->partitions);
    /* batched: matrices one matmul wide; others take the pipelined schedule per batch */
    if (a->variant == BMM_BATCHED && a->dims[1] <= (int64_t)c->pe_cols &&
        a->dims[1] <= (int64_t)c->partitions && a->dims[3] <= nmax &&
        (a->dims[2] + KP - 1) / KP <= 64)
        return build_batched(kb, a);
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
        gs_mm_build(kb, &p, a->variant == BMM_NAIVE ? GS_MM_NAIVE : GS_MM_PIPELINED, a->param);
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
    .n_variants = 3,
    .variants = {"pipelined", "naive", "batched"},
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
