/*
 * matmul.c - C[M x N] = A[M x K] x B[K x N], with A given transposed as AT [K x M] (the
 * layout the tensor engine's stationary operand wants, as in NKI's matmul tutorial).
 *
 * Variant "naive": for every output tile [TM x TN] and every K-tile, load the AT and B tiles
 * from HBM, multiply-accumulate into one PSUM bank, then evacuate PSUM -> SBUF (converting to
 * the output dtype on the vector engine) and store. Tile sizes come from the target: TM =
 * pe_cols, TK = pe_rows, TN = min(moving_free_max, PSUM bank / 4 bytes). Tails use smaller
 * tiles. Param 0 (tn) overrides TN; param 1 (bufs) sets buffers per pool (default 2).
 */
#include "suite.h"

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *AT = &a->t[0], *B = &a->t[1], *C = &a->t[2];
    int64_t M = a->dims[0], K = a->dims[1], N = a->dims[2];
    if (!(c->matmul_dtypes & (1u << a->dtype)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul", gs_dtype_name(a->dtype));
    int64_t TM = c->pe_cols, TK = c->pe_rows;
    int64_t TN = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    if (a->param[0] > 0) TN = GS_MIN(TN, a->param[0]);
    unsigned bufs = a->param[1] > 0 ? (unsigned)a->param[1] : 2;
    size_t es = gs_dtype_size(a->dtype);
    gs_pool *pa = gs_pool_create(kb, GS_MEM_SBUF, "at", bufs, (uint64_t)TM * es);
    gs_pool *pb = gs_pool_create(kb, GS_MEM_SBUF, "b", bufs, (uint64_t)TN * es);
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "c", bufs, (uint64_t)TN * es);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_PSUM, "acc", bufs, (uint64_t)TN * 4);
    for (int64_t m0 = 0; m0 < M && gs_kb_ok(kb); m0 += TM) {
        unsigned tm = (unsigned)GS_MIN(TM, M - m0);
        for (int64_t n0 = 0; n0 < N && gs_kb_ok(kb); n0 += TN) {
            uint32_t tn = (uint32_t)GS_MIN(TN, N - n0);
            gs_tile acc = gs_tile_alloc(pp, GS_FP32, tm, tn);
            for (int64_t k0 = 0; k0 < K && gs_kb_ok(kb); k0 += TK) {
                unsigned tk = (unsigned)GS_MIN(TK, K - k0);
                gs_tile ta = gs_tile_alloc(pa, a->dtype, tk, tm);
                gs_tile tb = gs_tile_alloc(pb, a->dtype, tk, tn);
                gs_dma_copy(kb, ta.ap, gs_hbm_rows(AT, k0, tk, m0, tm), -1);
                gs_dma_copy(kb, tb.ap, gs_hbm_rows(B, k0, tk, n0, tn), -1);
                gs_matmul(kb, acc.ap, ta.ap, tb.ap, k0 > 0);
            }
            gs_tile out = gs_tile_alloc(po, a->dtype, tm, tn);
            gs_tensor_copy(kb, GS_ENG_VECTOR, out.ap, acc.ap);
            gs_dma_copy(kb, gs_hbm_rows(C, m0, tm, n0, tn), out.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    int64_t M = a->dims[0], K = a->dims[1], N = a->dims[2];
    if (M <= 0 || K <= 0 || N <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "matmul: M, K, N must be positive"),
               -1;
    const struct {
        const char *name;
        gs_tensor_kind kind;
        int64_t r, c;
    } spec[3] = {{"AT", GS_TENSOR_INPUT, K, M}, {"B", GS_TENSOR_INPUT, K, N},
                 {"C", GS_TENSOR_OUTPUT, M, N}};
    for (int i = 0; i < 3; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", spec[i].name);
        t[i].kind = spec[i].kind;
        t[i].dtype = a->dtype;
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
    int64_t M = a->dims[0], K = a->dims[1], N = a->dims[2];
    const double *at = in[0], *b = in[1];
    double *c = out[0];
    for (int64_t i = 0; i < M * N; i++) c[i] = 0.0;
    for (int64_t k = 0; k < K; k++)
        for (int64_t m = 0; m < M; m++) {
            double av = at[k * M + m];
            for (int64_t n = 0; n < N; n++) c[m * N + n] += av * b[k * N + n];
        }
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1];
}

const gs_kernel_def gs_kernel_matmul = {
    .name = "matmul",
    .summary = "C = A x B (A given as AT [K x M])",
    .n_dims = 3,
    .dim_names = {"M", "K", "N"},
    .n_variants = 1,
    .variants = {"naive"},
    .n_params = 2,
    .param_names = {"tn", "bufs"},
    .param_help = {"moving free size per matmul (0: largest a PSUM bank and the engine allow)",
                   "buffers per pool (2 = double buffering)"},
    .check_shapes = {{3, {128, 128, 512}}, {3, {200, 300, 700}}, {3, {1, 1, 1}}},
    .perf_shapes = {{3, {4096, 4096, 4096}}, {3, {8192, 8192, 8192}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16) | (1u << GS_FP8_E4M3),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
