/*
 * matmul_mx.c - C[M x N] = A[M x K] x B[K x N] through the MX matmul of targets that have one
 * (caps.mx_k, caps.quantize_mx_dtypes): both operands quantised to OCP MX formats, one E8M0
 * scale per 32 consecutive values along K, multiplied by the tensor engine with fp32
 * accumulation in PSUM; output bf16 or fp32 (the kernel's dtype).
 *
 * Variants:
 *  - mxfp8: AT [K x M] and B [K x N] bf16 in HBM, both quantised on the vector engine to MXFP8
 *    (e4m3) with quantize_mx.
 *  - mxfp4: the stationary operand (weights) comes quantised offline as MXFP4, as Quantize-MX
 *    has no fp4 output: ATq [K/4 x M] fp4_e2m1_x4 (element (r, m) packs k = 4r .. 4r+3) and
 *    ATs [K/32 x M] e8m0 scales; B [K x N] bf16 is quantised on chip to MXFP8 (e4m3). K must
 *    be a multiple of 32 (whole groups).
 *
 * Layout (gs/isa.h, matmul_mx): within a K-tile of up to 4 x 128 values, partition p holds
 * k = 4p .. 4p+3 as the four lanes of each x4 element, so a scaling group (8 partitions x 4
 * lanes) is 32 consecutive k. A bf16 operand is loaded with one contiguous DMA per lane j
 * (rows 4p + j -> lane block j), interleaved into [p][column][j] by a strided tensor_copy on
 * the scalar engine, then quantised by quantize_mx (which puts each scale in its quadrant). A
 * tail K-tile is zero-padded to whole 32-partition quadrants (zeros change neither a group's
 * scale nor the sum). B is quantised once per column block and stays resident; A panels
 * (128 columns, all K-tiles) are double-buffered, the bf16 staging tiles four-deep; each output
 * tile [128 x TN] accumulates its K-tiles in an fp32 PSUM bank, is evacuated to the output dtype
 * and stored.
 *
 * Reference (double): the same inputs quantised with the dtype module's OCP quantiser
 * (gs_mx_quantize_group, bit-identical to the instruction's), then multiplied exactly, so the
 * check measures the device's fp32 accumulation and output rounding, not the (intended) MX
 * quantisation error. Params: nb (B block columns, 0: what SBUF holds).
 */
#include "gs/kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_MXFP8, V_MXFP4 };
enum { N_PARAMS = 1 }; /* nb */

#define LANES 4 /* values per x4 element */
#define GROUP 32
#define STAGE_BUFS 4u

typedef struct mx_state {
    gs_kb *kb;
    const gs_caps *c;
    int64_t M, K, N;
    int64_t TK;                                    /* values per K-tile (mx_k) */
    int64_t KT;                                    /* K-tiles */
    int64_t TN;                                    /* output tile columns */
    gs_pool *ld, *il;                              /* bf16 staging: contiguous load, interleaved */
    unsigned q_store_n, q_next_load, q_next_store; /* loads and stores on disjoint queues */
} mx_state;

/* Loads and stores on disjoint DMA queues: a queue runs in order, so a store waiting for its
 * matmul must not hold the loads that matmul (or the next one) needs behind it. */
static int q_load(mx_state *s)
{
    unsigned n = s->c->dma_queues;
    if (n < 2) return -1;
    return (int)(s->q_store_n + s->q_next_load++ % (n - s->q_store_n));
}

static int q_store(mx_state *s)
{
    if (s->c->dma_queues < 2) return -1;
    return (int)(s->q_next_store++ % s->q_store_n);
}

static unsigned tile_rows(const mx_state *s, int64_t kt)
{
    return (unsigned)GS_MIN(s->TK, s->K - kt * s->TK);
}

/* Partitions of K-tile kt: a whole number of 32-partition quadrants. */
static unsigned tile_parts(const mx_state *s, int64_t kt)
{
    unsigned p = (tile_rows(s, kt) + LANES - 1) / LANES;
    return (p + 31) / 32 * 32;
}

/* Load rows [kt*TK, +tk) x columns [c0, c0+w) of a bf16 [K x cols] tensor, interleave and
 * quantise into columns [f0, f0+w) of the MX tiles q (data) and sc (scales). */
static void quantize_tile(mx_state *s, const gs_tensor *t, int64_t kt, int64_t c0, uint32_t w,
                          gs_tile *q, gs_tile *sc, uint32_t f0)
{
    gs_kb *kb = s->kb;
    unsigned tk = tile_rows(s, kt), P = tile_parts(s, kt);
    int64_t k0 = kt * s->TK, cols = t->shape[1];
    gs_tile ld = gs_tile_alloc(s->ld, GS_BF16, P, LANES * w);
    if ((unsigned)tk < P * LANES) gs_memset(kb, GS_ENG_VECTOR, ld.ap, 0.0f);
    for (unsigned j = 0; j < LANES && j < tk; j++) {
        unsigned np = (tk - j + LANES - 1) / LANES; /* partitions p with 4p + j < tk */
        uint32_t shape[1] = {w};
        int64_t stride[1] = {1};
        gs_dma_copy(kb, gs_tile_view(&ld, 0, np, j * w, w),
                    gs_hbm_ap(t, (k0 + j) * cols + c0, np, LANES * cols, 1, shape, stride),
                    q_load(s));
    }
    /* [p][j][x] -> [p][x][j]: read the lanes with stride w, write densely */
    gs_tile il = gs_tile_alloc(s->il, GS_BF16, P, LANES * w);
    gs_ap src = gs_tile_view(&ld, 0, P, 0, LANES * w);
    src.ndim = 2;
    src.shape[0] = w;
    src.stride[0] = 1;
    src.shape[1] = LANES;
    src.stride[1] = (int32_t)w;
    gs_tensor_copy(kb, GS_ENG_SCALAR, il.ap, src);
    gs_quantize_mx(kb, gs_tile_view(q, 0, P, f0, w), gs_tile_view(sc, 0, P, f0, w), il.ap);
}

/* mxfp4 weights: rows [kt*TK/4, ...) of ATq and their scale rows of ATs, columns [c0, +w). */
static void load_fp4_tile(mx_state *s, const gs_tensor *q4, const gs_tensor *s4, int64_t kt,
                          int64_t c0, uint32_t w, gs_tile *q, gs_tile *sc, uint32_t f0)
{
    gs_kb *kb = s->kb;
    unsigned tk = tile_rows(s, kt), P = tile_parts(s, kt);
    unsigned rows = tk / LANES, groups = tk / GROUP;
    if (rows < P) {
        /* zero data (and finite scales) on the padding partitions */
        gs_memset(kb, GS_ENG_VECTOR, gs_tile_view(q, 0, P, f0, w), 0.0f);
        gs_memset(kb, GS_ENG_VECTOR, gs_tile_view(sc, 0, P, f0, w), 1.0f);
    }
    gs_dma_copy(kb, gs_tile_view(q, 0, rows, f0, w),
                gs_hbm_rows(q4, kt * s->TK / LANES, rows, c0, w), q_load(s));
    /* group g of the tile -> scale row 32 (g / 4) + g % 4 (its quadrant) */
    for (unsigned g0 = 0; g0 < groups; g0 += 4) {
        unsigned n = GS_MIN(4u, groups - g0);
        gs_dma_copy(kb, gs_tile_view(sc, 32 * (g0 / 4), n, f0, w),
                    gs_hbm_rows(s4, kt * s->TK / GROUP + g0, n, c0, w), q_load(s));
    }
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    if (!c->mx_k || !(c->quantize_mx_dtypes & (1u << GS_FP8_E4M3_X4)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: MX matmul (the target has no matmul_mx / quantize_mx)");
    gs_dtype st_dt = a->variant == V_MXFP4 ? GS_FP4_E2M1_X4 : GS_FP8_E4M3_X4;
    if (!(c->mx_dtypes & (1u << st_dt)) || !(c->mx_dtypes & (1u << GS_FP8_E4M3_X4)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul_mx on this target",
                          gs_dtype_name(st_dt));
    mx_state s;
    memset(&s, 0, sizeof s);
    s.kb = kb;
    s.c = c;
    s.M = a->dims[0];
    s.K = a->dims[1];
    s.N = a->dims[2];
    s.TK = c->mx_k;
    s.KT = (s.K + s.TK - 1) / s.TK;
    s.TN = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    s.q_store_n = GS_MAX(1u, c->dma_queues / 4);
    const int64_t TM = c->pe_cols;
    const gs_tensor *C = a->variant == V_MXFP4 ? &a->t[3] : &a->t[2];
    const gs_tensor *B = a->variant == V_MXFP4 ? &a->t[2] : &a->t[1];
    size_t oes = gs_dtype_size(C->dtype), ses = gs_dtype_size(st_dt);

    /* SBUF per partition: staging 2 x STAGE_BUFS x (4 TN bf16), outputs 2 x TN, A panels
     * 2 x KT x TM x (data + scale), the B block KT x NB x (4 + 1) */
    uint64_t stage = 2u * STAGE_BUFS * ((uint64_t)LANES * (uint64_t)s.TN) * 2u;
    uint64_t outb = 2u * (uint64_t)s.TN * oes;
    uint64_t apan = 2u * (uint64_t)(s.KT * TM) * (ses + 1u);
    int64_t avail = (int64_t)c->sbuf_partition_bytes - (int64_t)(stage + outb + apan);
    int64_t per_col = s.KT * (int64_t)(gs_dtype_size(GS_FP8_E4M3_X4) + 1);
    int64_t NB = gs_kernel_param(a, "nb", 0) > 0 ? gs_kernel_param(a, "nb", 0)
                                                 : (avail > 0 ? avail / per_col : 0);
    NB = NB / s.TN * s.TN;
    if (NB < s.TN) NB = s.TN;
    NB = GS_MIN(NB, (s.N + s.TN - 1) / s.TN * s.TN);

    /* four staging buffers: loads of the next tiles overlap the interleave and quantise */
    s.ld = gs_pool_create(kb, GS_MEM_SBUF, "ld", STAGE_BUFS, (uint64_t)(LANES * s.TN) * 2u);
    s.il = gs_pool_create(kb, GS_MEM_SBUF, "il", STAGE_BUFS, (uint64_t)(LANES * s.TN) * 2u);
    gs_pool *pbq = gs_pool_create(kb, GS_MEM_SBUF, "bq", 1, (uint64_t)(s.KT * NB) * 4u);
    gs_pool *pbs = gs_pool_create(kb, GS_MEM_SBUF, "bs", 1, (uint64_t)(s.KT * NB));
    gs_pool *paq = gs_pool_create(kb, GS_MEM_SBUF, "aq", 2, (uint64_t)(s.KT * TM) * ses);
    gs_pool *pas = gs_pool_create(kb, GS_MEM_SBUF, "as", 2, (uint64_t)(s.KT * TM));
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "c", 2, (uint64_t)s.TN * oes);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_PSUM, "acc", 2, c->psum_bank_bytes);
    unsigned P0 = tile_parts(&s, 0);

    for (int64_t nb0 = 0; nb0 < s.N && gs_kb_ok(kb); nb0 += NB) {
        int64_t nbw = GS_MIN(NB, s.N - nb0);
        /* the B block, quantised once: K-tile kt at free offset kt * NB */
        gs_tile bq = gs_tile_alloc(pbq, GS_FP8_E4M3_X4, P0, (uint32_t)(s.KT * NB));
        gs_tile bs = gs_tile_alloc(pbs, GS_E8M0, P0, (uint32_t)(s.KT * NB));
        for (int64_t kt = 0; kt < s.KT; kt++)
            for (int64_t n0 = 0; n0 < nbw && gs_kb_ok(kb); n0 += s.TN) {
                uint32_t w = (uint32_t)GS_MIN(s.TN, nbw - n0);
                quantize_tile(&s, B, kt, nb0 + n0, w, &bq, &bs, (uint32_t)(kt * NB + n0));
            }
        for (int64_t m0 = 0; m0 < s.M && gs_kb_ok(kb); m0 += TM) {
            uint32_t tm = (uint32_t)GS_MIN(TM, s.M - m0);
            gs_tile aq = gs_tile_alloc(paq, st_dt, P0, (uint32_t)(s.KT * TM));
            gs_tile as = gs_tile_alloc(pas, GS_E8M0, P0, (uint32_t)(s.KT * TM));
            for (int64_t kt = 0; kt < s.KT; kt++) {
                if (a->variant == V_MXFP4)
                    load_fp4_tile(&s, &a->t[0], &a->t[1], kt, m0, tm, &aq, &as,
                                  (uint32_t)(kt * TM));
                else
                    quantize_tile(&s, &a->t[0], kt, m0, tm, &aq, &as, (uint32_t)(kt * TM));
            }
            for (int64_t n0 = 0; n0 < nbw && gs_kb_ok(kb); n0 += s.TN) {
                uint32_t tn = (uint32_t)GS_MIN(s.TN, nbw - n0);
                gs_tile acc = gs_tile_alloc(pp, GS_FP32, tm, tn);
                for (int64_t kt = 0; kt < s.KT; kt++) {
                    unsigned P = tile_parts(&s, kt);
                    uint32_t fa = (uint32_t)(kt * TM), fb = (uint32_t)(kt * NB + n0);
                    gs_matmul_mx(kb, acc.ap, gs_tile_view(&aq, 0, P, fa, tm),
                                 gs_tile_view(&as, 0, P, fa, tm), gs_tile_view(&bq, 0, P, fb, tn),
                                 gs_tile_view(&bs, 0, P, fb, tn), kt > 0);
                }
                gs_tile out = gs_tile_alloc(po, C->dtype, tm, tn);
                gs_tensor_copy(kb, GS_ENG_VECTOR, out.ap, acc.ap);
                gs_dma_copy(kb, gs_hbm_rows(C, m0, tm, nb0 + n0, tn), out.ap, q_store(&s));
            }
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    int64_t M = a->dims[0], K = a->dims[1], N = a->dims[2];
    if (M <= 0 || K <= 0 || N <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "matmul_mx: M, K, N must be positive"),
               -1;
    if (a->variant == V_MXFP4 && K % GROUP != 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "matmul_mx mxfp4: K (%lld) must be a multiple of 32 (whole MX groups "
                            "of the offline-quantised weights)",
                            (long long)K),
               -1;
    int n = a->variant == V_MXFP4 ? 4 : 3;
    if (max < n) return -1;
    memset(t, 0, (size_t)n * sizeof *t);
    int i = 0;
    if (a->variant == V_MXFP4) {
        snprintf(t[i].name, sizeof t[i].name, "ATq");
        t[i].dtype = GS_FP4_E2M1_X4; /* random bit patterns: every fp4 code */
        t[i].shape[0] = K / LANES;
        t[i].shape[1] = M;
        t[i].lo = 0.0;
        t[i].hi = 65536.0;
        t[i].integer = 1;
        i++;
        snprintf(t[i].name, sizeof t[i].name, "ATs");
        t[i].dtype = GS_E8M0; /* powers of two 2^-3 .. 2^2 */
        t[i].shape[0] = K / GROUP;
        t[i].shape[1] = M;
        t[i].lo = 0.125;
        t[i].hi = 8.0;
        i++;
    } else {
        snprintf(t[i].name, sizeof t[i].name, "AT");
        t[i].dtype = GS_BF16;
        t[i].shape[0] = K;
        t[i].shape[1] = M;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
        i++;
    }
    snprintf(t[i].name, sizeof t[i].name, "B");
    t[i].dtype = GS_BF16;
    t[i].shape[0] = K;
    t[i].shape[1] = N;
    t[i].lo = -1.0;
    t[i].hi = 1.0;
    i++;
    snprintf(t[i].name, sizeof t[i].name, "C");
    t[i].kind = GS_TENSOR_OUTPUT;
    t[i].dtype = a->dtype;
    t[i].shape[0] = M;
    t[i].shape[1] = N;
    i++;
    for (int k = 0; k < n; k++) {
        t[k].ndim = 2;
        if (k < n - 1) t[k].kind = GS_TENSOR_INPUT;
    }
    return n;
}

/* Quantise columns of a [K x cols] operand along K in groups of 32 (zero-padded at the end),
 * as quantize_mx does, into dequantised values q (same shape). */
static void mx_quantize_cols(const double *x, int64_t K, int64_t cols, double *q)
{
    for (int64_t col = 0; col < cols; col++)
        for (int64_t g0 = 0; g0 < K; g0 += GROUP) {
            float grp[GROUP];
            uint8_t codes[GROUP];
            int64_t n = GS_MIN((int64_t)GROUP, K - g0);
            for (int64_t i = 0; i < GROUP; i++)
                grp[i] = i < n ? (float)x[(g0 + i) * cols + col] : 0.0f;
            double scale = gs_e8m0_to_f32(gs_mx_quantize_group(GS_FP8_E4M3_X4, grp, GROUP, codes));
            for (int64_t i = 0; i < n; i++)
                q[(g0 + i) * cols + col] =
                    (double)gs_mx_code_to_f32(GS_FP8_E4M3_X4, codes[i]) * scale;
        }
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t M = a->dims[0], K = a->dims[1], N = a->dims[2];
    double *qa = calloc((size_t)(K * M), sizeof *qa);
    double *qb = calloc((size_t)(K * N), sizeof *qb);
    if (!qa || !qb) {
        /* no memory for the reference: NaN outputs fail the check rather than pass it */
        for (int64_t i = 0; i < M * N; i++)
            out[0][i] = NAN;
        free(qa);
        free(qb);
        return;
    }
    const double *B = a->variant == V_MXFP4 ? in[2] : in[1];
    if (a->variant == V_MXFP4) {
        /* decode the offline MXFP4 weights: lane j of element (r, m) is k = 4r + j */
        for (int64_t r = 0; r < K / LANES; r++)
            for (int64_t m = 0; m < M; m++) {
                unsigned bits = (unsigned)in[0][r * M + m];
                double scale = in[1][(r * LANES / GROUP) * M + m];
                for (int j = 0; j < LANES; j++)
                    qa[(r * LANES + j) * M + m] =
                        (double)gs_e2m1_to_f32((uint8_t)((bits >> (4 * j)) & 0xFu)) * scale;
            }
    } else {
        mx_quantize_cols(in[0], K, M, qa);
    }
    mx_quantize_cols(B, K, N, qb);
    for (int64_t i = 0; i < M * N; i++)
        out[0][i] = 0.0;
    for (int64_t k = 0; k < K; k++)
        for (int64_t m = 0; m < M; m++) {
            double av = qa[k * M + m];
            for (int64_t n = 0; n < N; n++)
                out[0][m * N + n] += av * qb[k * N + n];
        }
    free(qa);
    free(qb);
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1];
}

const gs_kernel_def gs_kernel_matmul_mx = {
    .name = "matmul_mx",
    .summary = "C = A x B through MX matmul: MXFP8 (both quantised on chip) or MXFP4 weights",
    .n_dims = 3,
    .dim_names = {"M", "K", "N"},
    .n_variants = 2,
    .variants = {"mxfp8", "mxfp4"},
    .n_params = N_PARAMS,
    .param_names = {"nb"},
    .param_help = {"B block columns, rounded down to the output tile (0: what SBUF holds)"},
    .check_shapes = {{3, {128, 512, 512}}, {3, {200, 320, 700}}, {3, {1, 32, 1}}},
    .perf_shapes = {{3, {2048, 2048, 2048}}, {3, {4096, 4096, 4096}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
