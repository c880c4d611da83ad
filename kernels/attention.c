/*
 * attention.c - single-head attention forward, O = softmax(Q K^T / sqrt(D) [+ causal mask]) V,
 * with Q, K, V, O [S x D] (D = head dim, 64 and 128 in the shape sets), tiled flash-style with
 * an online softmax.
 *
 * Tiles come from the target: query tile TQ = min(partitions, PE rows, PE cols) rows (the
 * stationary free size of QK^T and the partition count of the score tile); key tile TK =
 * min(moving free max, one PSUM bank of fp32, param 0 "tk") keys, a multiple of the key chunk
 * KC = min(partitions, PE rows, PE cols) that the PV contraction and the transposes use; head
 * dim chunk DC = min(PE rows, PE cols) for the QK^T contraction (a gen with a 64-column array
 * contracts D = 128 in two accumulating matmuls).
 *
 * Prologue: K^T [D x S] (tensor-engine transposes of K row blocks) and V [S x D] row blocks
 * are made resident in SBUF once. Per query tile: Q^T by transposes; running max m, running
 * sum l and an fp32 accumulator O in SBUF; per key tile:
 *   S = Q K^T (tensor engine into PSUM), [causal, diagonal tile: copy to SBUF and mask with
 *   affine_select on gpsimd], tile max (vector), m' = max(m, tile max), P = exp(S/sqrt(D) -
 *   m'/sqrt(D)) on the scalar engine with its accumulate output giving the row sums, alpha =
 *   exp((m - m')/sqrt(D)), l = l * alpha + rowsum, P^T by transposes, PV (tensor engine),
 *   O = O * alpha + PV (vector).
 * Finally O / l is stored. P is rounded to the compute dtype for the PV matmul (as on the
 * hardware); everything else stays fp32.
 * Variant "causal" skips key tiles entirely above the diagonal (keys > last query of the tile)
 * and masks only the diagonal tiles; "noncausal" attends to all keys. The causal mask needs
 * affine_select (gpsimd): a target without it reports "unsupported". Params: tk, bufs (SBUF
 * buffers per streaming pool, default 2).
 */
#include <math.h>
#include <stdio.h>

#include "kernel_util.h"
#include "gs/kernel.h"

enum { AT_CAUSAL, AT_NONCAUSAL };

/* A finite "minus infinity" for the running max and the mask fill: exp of it (scaled) is 0
 * and, unlike -inf, m_old - m_new never becomes inf - inf = NaN. */
#define AT_NEG_BIG (-1.0e30f)

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *Q = &a->t[0], *K = &a->t[1], *V = &a->t[2], *O = &a->t[3];
    int64_t S = a->dims[0], D = a->dims[1];
    int causal = a->variant == AT_CAUSAL;
    gs_dtype dt = a->dtype;
    size_t es = gs_dtype_size(dt);
    if (!(c->matmul_dtypes & (1u << dt)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul", gs_dtype_name(dt));
    if (causal && !(c->has_gpsimd && (c->ops & (1ull << GS_OP_AFFINE_SELECT))))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: causal attention masks with affine_select, which needs a "
                          "gpsimd engine (none here)");
    unsigned P = c->partitions;
    int64_t TQ = GS_MIN(GS_MIN((int64_t)P, (int64_t)c->pe_rows), (int64_t)c->pe_cols);
    int64_t KC = TQ;
    int64_t DC = GS_MIN((int64_t)c->pe_rows, (int64_t)c->pe_cols);
    /* vector/scalar instructions span a head (D), a query or key chunk (TQ) and a key tile */
    if (D > (int64_t)c->max_free_sbuf || KC > (int64_t)c->max_free_sbuf)
        return gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                          "does not fit: a head of %lld or a key chunk of %lld elements exceeds "
                          "an instruction's %u free elements (caps.max_free_sbuf)",
                          (long long)D, (long long)KC, c->max_free_sbuf);
    int64_t TK = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    TK = GS_MIN(TK, (int64_t)c->max_free_sbuf);
    if (gs_kernel_param(a, "tk", 0) > 0) TK = GS_MIN(TK, gs_kernel_param(a, "tk", 0));
    TK = TK / KC * KC;
    if (TK <= 0)
        return gs_kb_fail(kb, GS_ERR_INVALID, "attention: tk must be at least %lld", (long long)KC);
    if (D > (int64_t)c->moving_free_max || (uint64_t)D * 4 > c->psum_bank_bytes)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: head dim %lld exceeds one PV matmul (moving free max %u, "
                          "PSUM bank %llu bytes)",
                          (long long)D, c->moving_free_max, (unsigned long long)c->psum_bank_bytes);
    unsigned bufs = gs_kernel_param(a, "bufs", 0) > 0 ? (unsigned)gs_kernel_param(a, "bufs", 0) : 2;
    int64_t nd = (D + DC - 1) / DC, nkc = (S + KC - 1) / KC;
    float scale = (float)(1.0 / sqrt((double)D));

    /* PSUM: scores, transposes, PV; double-buffered when the banks allow */
    int psum2 = c->psum_banks >= 6;
    gs_pool *ps_s = gs_pool_create(kb, GS_MEM_PSUM, "s", psum2 ? 2 : 1, (uint64_t)TK * 4);
    gs_pool *ps_t = gs_pool_create(kb, GS_MEM_PSUM, "t", 2, (uint64_t)GS_MAX(TQ, DC) * es);
    gs_pool *ps_o = gs_pool_create(kb, GS_MEM_PSUM, "pv", psum2 ? 2 : 1, (uint64_t)D * 4);
    /* SBUF: resident K^T (chunk c of D at free offset c*S) and V (block j at free offset j*D) */
    gs_pool *pkt = gs_pool_create(kb, GS_MEM_SBUF, "kT", 1, (uint64_t)(nd * S) * es);
    gs_pool *pvr = gs_pool_create(kb, GS_MEM_SBUF, "v", 1, (uint64_t)(nkc * D) * es);
    gs_pool *prow = gs_pool_create(kb, GS_MEM_SBUF, "rows", bufs, (uint64_t)D * es);
    gs_pool *pqt = gs_pool_create(kb, GS_MEM_SBUF, "qT", 2, (uint64_t)(nd * TQ) * es);
    gs_pool *pst = gs_pool_create(kb, GS_MEM_SBUF, "stats", 2, 8 * 4);
    gs_pool *pacc = gs_pool_create(kb, GS_MEM_SBUF, "oacc", 2, (uint64_t)D * 4);
    gs_pool *psm = gs_pool_create(kb, GS_MEM_SBUF, "smask", bufs, (uint64_t)TK * 4);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_SBUF, "p", bufs, (uint64_t)TK * es);
    gs_pool *ppt = gs_pool_create(kb, GS_MEM_SBUF, "pT", bufs, (uint64_t)TQ * es);
    gs_pool *pout = gs_pool_create(kb, GS_MEM_SBUF, "out", bufs, (uint64_t)D * es);
    if (!gs_kb_ok(kb)) return gs_kb_status(kb);

    gs_tile kt = gs_tile_alloc(pkt, dt, (unsigned)GS_MIN(DC, D), (uint32_t)(nd * S));
    gs_tile vr = gs_tile_alloc(pvr, dt, (unsigned)GS_MIN(KC, S), (uint32_t)(nkc * D));
    for (int64_t j = 0; j < nkc && gs_kb_ok(kb); j++) {
        int64_t k0 = j * KC;
        unsigned kcs = (unsigned)GS_MIN(KC, S - k0);
        gs_dma_copy(kb, gs_tile_view(&vr, 0, kcs, (uint32_t)(j * D), (uint32_t)D),
                    gs_hbm_rows(V, k0, kcs, 0, (uint32_t)D), -1);
        gs_tile kr = gs_tile_alloc(prow, dt, kcs, (uint32_t)D);
        gs_dma_copy(kb, kr.ap, gs_hbm_rows(K, k0, kcs, 0, (uint32_t)D), -1);
        for (int64_t ci = 0; ci < nd; ci++) {
            unsigned dc = (unsigned)GS_MIN(DC, D - ci * DC);
            gs_tile t = gs_tile_alloc(ps_t, dt, dc, kcs);
            gs_transpose(kb, t.ap, gs_tile_view(&kr, 0, kcs, (uint32_t)(ci * DC), dc));
            gs_tensor_copy(kb, GS_ENG_VECTOR,
                           gs_tile_view(&kt, 0, dc, (uint32_t)(ci * S + k0), kcs), t.ap);
        }
    }

    for (int64_t q0 = 0; q0 < S && gs_kb_ok(kb); q0 += TQ) {
        unsigned tq = (unsigned)GS_MIN(TQ, S - q0);
        gs_tile qr = gs_tile_alloc(prow, dt, tq, (uint32_t)D);
        gs_dma_copy(kb, qr.ap, gs_hbm_rows(Q, q0, tq, 0, (uint32_t)D), -1);
        gs_tile qt = gs_tile_alloc(pqt, dt, (unsigned)GS_MIN(DC, D), (uint32_t)(nd * tq));
        for (int64_t ci = 0; ci < nd; ci++) {
            unsigned dc = (unsigned)GS_MIN(DC, D - ci * DC);
            gs_tile t = gs_tile_alloc(ps_t, dt, dc, tq);
            gs_transpose(kb, t.ap, gs_tile_view(&qr, 0, tq, (uint32_t)(ci * DC), dc));
            gs_tensor_copy(kb, GS_ENG_VECTOR, gs_tile_view(&qt, 0, dc, (uint32_t)(ci * tq), tq),
                           t.ap);
        }
        /* stats columns: 0/1 running max (ping-pong), 2 tile max, 3 -m'/sqrt(D), 4 alpha,
         * 5 row sum of this tile, 6 running sum l, 7 1/l */
        gs_tile st = gs_tile_alloc(pst, GS_FP32, tq, 8);
        gs_ap col[8];
        for (unsigned i = 0; i < 8; i++)
            col[i] = gs_tile_view(&st, 0, tq, i, 1);
        gs_tile oacc = gs_tile_alloc(pacc, GS_FP32, tq, (uint32_t)D);
        gs_memset(kb, GS_ENG_VECTOR, col[0], AT_NEG_BIG);
        gs_memset(kb, GS_ENG_VECTOR, col[6], 0.0f);
        gs_memset(kb, GS_ENG_VECTOR, oacc.ap, 0.0f);
        int cur = 0;
        int64_t kend = causal ? GS_MIN(S, q0 + tq) : S;
        for (int64_t k0 = 0; k0 < kend && gs_kb_ok(kb); k0 += TK) {
            unsigned tk = (unsigned)GS_MIN(TK, kend - k0);
            gs_ap m_old = col[cur], m_new = col[1 - cur];
            gs_tile s = gs_tile_alloc(ps_s, GS_FP32, tq, tk);
            for (int64_t ci = 0; ci < nd; ci++) {
                unsigned dc = (unsigned)GS_MIN(DC, D - ci * DC);
                gs_matmul(kb, s.ap, gs_tile_view(&qt, 0, dc, (uint32_t)(ci * tq), tq),
                          gs_tile_view(&kt, 0, dc, (uint32_t)(ci * S + k0), tk), ci > 0);
            }
            gs_ap src = s.ap;
            if (causal && k0 + tk - 1 > q0) {
                /* keep key k0+j for query q0+p where (q0 - k0) + p - j >= 0 */
                gs_tile sm = gs_tile_alloc(psm, GS_FP32, tq, tk);
                gs_tensor_copy(kb, GS_ENG_VECTOR, sm.ap, s.ap);
                gs_affine_select(kb, sm.ap, sm.ap, GS_ALU_GE, q0 - k0, 1, -1, AT_NEG_BIG);
                src = sm.ap;
            }
            gs_tensor_reduce(kb, col[2], src, GS_ALU_MAX, 1);
            gs_tensor_tensor(kb, m_new, m_old, col[2], GS_ALU_MAX);
            gs_tensor_scalar(kb, GS_ENG_VECTOR, col[3], m_new, GS_ALU_MUL, gs_imm(-scale),
                             GS_ALU_BYPASS, gs_imm(0));
            gs_tile p = gs_tile_alloc(pp, dt, tq, tk);
            gs_activation(kb, p.ap, src, GS_ACT_EXP, gs_imm(scale), gs_per_partition(col[3]),
                          &col[5]);
            gs_activation(kb, col[4], m_old, GS_ACT_EXP, gs_imm(scale), gs_per_partition(col[3]),
                          NULL);
            gs_tensor_scalar(kb, GS_ENG_VECTOR, col[6], col[6], GS_ALU_MUL,
                             gs_per_partition(col[4]), GS_ALU_ADD, gs_per_partition(col[5]));
            gs_tile pv = gs_tile_alloc(ps_o, GS_FP32, tq, (uint32_t)D);
            for (unsigned kk = 0; kk < tk; kk += (unsigned)KC) {
                unsigned kcs = (unsigned)GS_MIN(KC, (int64_t)(tk - kk));
                gs_tile t = gs_tile_alloc(ps_t, dt, kcs, tq);
                gs_transpose(kb, t.ap, gs_tile_view(&p, 0, tq, kk, kcs));
                gs_tile pt = gs_tile_alloc(ppt, dt, kcs, tq);
                gs_tensor_copy(kb, GS_ENG_SCALAR, pt.ap, t.ap);
                int64_t j = (k0 + kk) / KC;
                gs_matmul(kb, pv.ap, pt.ap,
                          gs_tile_view(&vr, 0, kcs, (uint32_t)(j * D), (uint32_t)D), kk > 0);
            }
            gs_tensor_scalar(kb, GS_ENG_VECTOR, oacc.ap, oacc.ap, GS_ALU_MUL,
                             gs_per_partition(col[4]), GS_ALU_BYPASS, gs_imm(0));
            gs_tensor_tensor(kb, oacc.ap, oacc.ap, pv.ap, GS_ALU_ADD);
            cur = 1 - cur;
        }
        gs_activation(kb, col[7], col[6], GS_ACT_RECIPROCAL, gs_imm(1.0f), gs_imm(0.0f), NULL);
        gs_tile out = gs_tile_alloc(pout, dt, tq, (uint32_t)D);
        gs_tensor_scalar(kb, GS_ENG_VECTOR, out.ap, oacc.ap, GS_ALU_MUL, gs_per_partition(col[7]),
                         GS_ALU_BYPASS, gs_imm(0));
        gs_dma_copy(kb, gs_hbm_rows(O, q0, tq, 0, (uint32_t)D), out.ap, -1);
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 4) return -1;
    if (a->dims[0] <= 0 || a->dims[1] <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "attention: S and D must be positive"),
               -1;
    const char *names[4] = {"Q", "K", "V", "O"};
    for (int i = 0; i < 4; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i < 3 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = a->dims[0];
        t[i].shape[1] = a->dims[1];
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    /* larger queries sharpen the softmax, so the running max and rescaling matter */
    t[0].lo = -3.0;
    t[0].hi = 3.0;
    return 4;
}

/* Rows of Q per score block: bounds the reference's scratch to ROW_BLOCK x S doubles. */
#define ROW_BLOCK 256

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t S = a->dims[0], D = a->dims[1];
    const double *q = in[0], *k = in[1], *v = in[2];
    double scale = 1.0 / sqrt((double)D);
    int64_t rb = GS_MIN(S, (int64_t)ROW_BLOCK);
    double *w = gs_malloc((size_t)(rb * S) * sizeof *w);
    double *sums = gs_malloc((size_t)rb * sizeof *sums);
    if (!w || !sums) {
        /* leave NaN so the check fails loudly rather than passing on garbage */
        for (int64_t i = 0; i < S * D; i++)
            out[0][i] = NAN;
        gs_free(w);
        gs_free(sums);
        return;
    }
    for (int64_t i0 = 0; i0 < S; i0 += rb) {
        int64_t nr = GS_MIN(rb, S - i0);
        /* keys a causal block can see end at its last row */
        int64_t nk = a->variant == AT_CAUSAL ? i0 + nr : S;
        gs_ref_gemm(0, 1, nr, nk, D, q + i0 * D, D, k, D, w, nk);
        for (int64_t r = 0; r < nr; r++) {
            int64_t i = i0 + r, kend = a->variant == AT_CAUSAL ? i + 1 : S;
            double *wr = w + r * nk, m = -INFINITY, sum = 0.0;
            for (int64_t j = 0; j < kend; j++) {
                wr[j] *= scale;
                if (wr[j] > m) m = wr[j];
            }
            for (int64_t j = 0; j < kend; j++)
                sum += (wr[j] = exp(wr[j] - m));
            for (int64_t j = kend; j < nk; j++)
                wr[j] = 0.0;
            sums[r] = sum;
        }
        gs_ref_gemm(0, 0, nr, D, nk, w, nk, v, D, out[0] + i0 * D, D);
        for (int64_t r = 0; r < nr; r++)
            for (int64_t d = 0; d < D; d++)
                out[0][(i0 + r) * D + d] /= sums[r];
    }
    gs_free(w);
    gs_free(sums);
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)GS_MAX(a->dims[0], a->dims[1]);
}

const gs_kernel_def gs_kernel_attention = {
    .name = "attention",
    .summary = "O = softmax(Q K^T / sqrt(D)) V, flash-style online softmax; causal or not",
    .n_dims = 2,
    .dim_names = {"S", "D"},
    .n_variants = 2,
    .variants = {"causal", "noncausal"},
    .n_params = 2,
    .param_names = {"tk", "bufs"},
    .param_help = {"keys per score tile (0: one PSUM bank / the moving free max)",
                   "buffers per streaming SBUF pool (2 = double buffering)"},
    .check_shapes = {{2, {128, 64}}, {2, {600, 64}}, {2, {200, 128}}},
    .perf_shapes = {{2, {2048, 64}}, {2, {2048, 128}}, {2, {8192, 128}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
