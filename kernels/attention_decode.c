/*
 * attention_decode.c - attention for decoding: one new query token per sequence against its
 * KV cache, for a batch of B sequences with Hq query heads sharing Hkv key/value heads
 * (grouped-query attention, G = Hq / Hkv query heads per KV head; Hkv = Hq is multi-head,
 * Hkv = 1 multi-query). For sequence b and query head h, with g = h / G its KV head:
 *     O[b, h] = softmax(Q[b, h] K[b, g]^T / sqrt(D)) V[b, g]   over the L cached tokens.
 * Layouts: Q and O [B*Hq x D] (one row per (sequence, head)); the K cache transposed per head,
 * KT [B*Hkv*D x L] (row (b Hkv + g) D + d holds dim d of every cached key: the layout the
 * tensor engine's moving operand wants, one column appended per decoded token); V
 * [B*Hkv*L x D] (token-major, as written).
 *
 * Per (sequence, KV head) and a block of `nq` of its query heads, flash-style over key tiles
 * of TL = min(moving free max, one PSUM bank of fp32) keys: scores S [nq x TL] = Q^T (the
 * stationary [D x nq], loaded once through a transposing DMA) times the KT tile (moving); the
 * tile max, the running max m, P = exp(S/sqrt(D) - m/sqrt(D)) on the scalar engine with its row
 * sum, the rescale alpha, then P^T by tensor-engine transposes of KC-key chunks and O += P V
 * (stationary P^T [KC x nq], moving the V chunk [KC x D]), O rescaled by alpha (all fp32; P is
 * rounded to the dtype for the PV matmul, as on the hardware). Finally O / l is stored.
 * Variant "per_head": nq = 1, every query head on its own: each KV head's cache is read G times
 * (what a multi-head kernel does on a grouped cache). Variant "grouped": nq = G, the G query
 * heads of a KV head share every K and V tile (one read of the cache) and each matmul has G
 * stationary columns instead of 1. Decode is cache-bandwidth-bound: the G-fold traffic is
 * the difference.
 * Each (sequence, KV head, query block) is a stream with a chain of ~15 dependent instructions
 * per key tile across the tensor, vector and scalar engines, each engine running its queue in
 * order. `streams` of them are interleaved per key tile in three phases (scores and softmax
 * statistics of every stream; the P^T transposes of every stream; the PV products and
 * accumulator updates), so that the next instruction in each engine's queue belongs to another
 * stream rather than waiting on the one before it. Params: bufs (K/V tiles in flight per
 * stream, default 2), streams (default 8).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "kernel_util.h"
#include "gs/kernel.h"

enum { AD_PER_HEAD, AD_GROUPED };

#define AD_NEG_BIG (-1.0e30f) /* finite "minus infinity": m_old - m_new never inf - inf */
#define AD_MAX_STREAMS 16     /* (sequence, KV head) streams interleaved at most */
#define AD_MAX_CHUNKS 16      /* P^T chunks (KC keys) per key tile */

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *Q = &a->t[0], *KT = &a->t[1], *V = &a->t[2], *O = &a->t[3];
    int64_t B = a->dims[0], Hq = a->dims[1], Hkv = a->dims[2], L = a->dims[3], D = a->dims[4];
    int64_t G = Hq / Hkv;
    gs_dtype dt = a->dtype;
    size_t es = gs_dtype_size(dt);
    if (!(c->matmul_dtypes & (1u << dt)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul", gs_dtype_name(dt));
    if (D > (int64_t)c->pe_rows || D > (int64_t)c->moving_free_max ||
        (uint64_t)D * 4 > c->psum_bank_bytes)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: head dim %" PRId64 " exceeds one matmul's contraction "
                          "(%u PE rows) or one PV output (moving free max %u)",
                          D, c->pe_rows, c->moving_free_max);
    int64_t nq = a->variant == AD_GROUPED ? G : 1;
    if (nq > (int64_t)c->pe_cols || nq > (int64_t)c->partitions)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: %" PRId64 " query heads per KV head exceed the %u "
                          "stationary columns",
                          nq, c->pe_cols);
    int64_t bufs = gs_kernel_param(a, "bufs", 2);
    int64_t ng = gs_kernel_param(a, "streams", 8);
    if (bufs <= 0 || bufs > 16 || ng <= 0 || ng > AD_MAX_STREAMS)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "attention_decode: bufs must be in 1..16 and streams in 1..%d",
                          AD_MAX_STREAMS);
    int64_t KC = GS_MIN(GS_MIN((int64_t)c->partitions, (int64_t)c->pe_rows), (int64_t)c->pe_cols);
    /* vector/scalar instructions span a head (D), a key chunk (KC) and a key tile (TL) */
    if (D > (int64_t)c->max_free_sbuf || KC > (int64_t)c->max_free_sbuf)
        return gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                          "does not fit: a head of %" PRId64 " or a key chunk of %" PRId64
                          " elements exceeds an instruction's %u free elements "
                          "(caps.max_free_sbuf)",
                          D, KC, c->max_free_sbuf);
    int64_t TL = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    TL = GS_MIN(TL, (int64_t)c->max_free_sbuf);
    TL = GS_MIN(TL / KC * KC, L);
    if (TL <= 0) return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: no tensor engine tiles");
    int64_t nkc_max = (TL + KC - 1) / KC; /* P^T chunks per key tile */
    if (nkc_max > AD_MAX_CHUNKS)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: %" PRId64 " transposes per key tile (at most %d)", nkc_max,
                          AD_MAX_CHUNKS);
    float scale = (float)(1.0 / sqrt((double)D));
    unsigned nb = (unsigned)bufs;

    /* PSUM (a buffer per bank): scores, transposes, PV; double-buffered when the banks allow */
    unsigned pb2 = c->psum_banks >= 6 ? 2 : 1, pbs = c->psum_banks >= 8 ? 4 : pb2;
    unsigned NG = (unsigned)ng;
    gs_pool *ps_s = gs_pool_create(kb, GS_MEM_PSUM, "s", pbs, (uint64_t)TL * 4);
    gs_pool *ps_t = gs_pool_create(kb, GS_MEM_PSUM, "t", 2, (uint64_t)nq * es);
    gs_pool *ps_o = gs_pool_create(kb, GS_MEM_PSUM, "pv", pb2, (uint64_t)D * 4);
    /* SBUF: per interleaved stream its Q^T, stats and accumulator; K and V tiles nb deep per
     * stream so the next tiles load while one is processed */
    gs_pool *pq = gs_pool_create(kb, GS_MEM_SBUF, "qT", NG, (uint64_t)nq * es);
    gs_pool *pst = gs_pool_create(kb, GS_MEM_SBUF, "stats", NG, 8 * 4);
    gs_pool *pacc = gs_pool_create(kb, GS_MEM_SBUF, "oacc", NG, (uint64_t)D * 4);
    gs_pool *pk = gs_pool_create(kb, GS_MEM_SBUF, "kT", nb * NG, (uint64_t)TL * es);
    gs_pool *pv =
        gs_pool_create(kb, GS_MEM_SBUF, "v", nb * NG, (uint64_t)((TL + KC - 1) / KC * D) * es);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_SBUF, "p", NG, (uint64_t)TL * es);
    gs_pool *ppt = gs_pool_create(kb, GS_MEM_SBUF, "pT", NG * (unsigned)nkc_max, (uint64_t)nq * es);
    gs_pool *pout = gs_pool_create(kb, GS_MEM_SBUF, "out", 2, (uint64_t)D * es);
    if (!gs_kb_ok(kb)) return gs_kb_status(kb);

    /* streams: (sequence, KV head, block of nq query heads), NG at a time, their key tiles
     * interleaved in program order */
    int64_t per_kv = G / nq, nstreams = B * Hkv * per_kv;
    typedef struct stream {
        int64_t qrow, kvh;
        gs_tile qt, st, oacc;
        gs_ap col[8];
        int cur;
    } stream;
    stream sm[AD_MAX_STREAMS];
    unsigned tq = (unsigned)nq;
    for (int64_t s0 = 0; s0 < nstreams && gs_kb_ok(kb); s0 += NG) {
        unsigned ns = (unsigned)GS_MIN((int64_t)NG, nstreams - s0);
        for (unsigned i = 0; i < ns; i++) {
            stream *x = &sm[i];
            int64_t id = s0 + i, kvh = id / per_kv;
            x->kvh = kvh;
            x->qrow = (kvh / Hkv) * Hq + (kvh % Hkv) * G + (id % per_kv) * nq;
            x->qt = gs_tile_alloc(pq, dt, (unsigned)D, tq);
            gs_dma_copy(kb, x->qt.ap, gs_hbm_cols(Q, x->qrow, tq, 0, (unsigned)D), -1);
            /* stats: 0/1 running max (ping-pong), 2 tile max, 3 -m'/sqrt(D), 4 alpha,
             * 5 row sum of this tile, 6 running sum l, 7 1/l */
            x->st = gs_tile_alloc(pst, GS_FP32, tq, 8);
            for (unsigned k = 0; k < 8; k++)
                x->col[k] = gs_tile_view(&x->st, 0, tq, k, 1);
            x->oacc = gs_tile_alloc(pacc, GS_FP32, tq, (uint32_t)D);
            gs_memset(kb, GS_ENG_VECTOR, x->col[0], AD_NEG_BIG);
            gs_memset(kb, GS_ENG_VECTOR, x->col[6], 0.0f);
            gs_memset(kb, GS_ENG_VECTOR, x->oacc.ap, 0.0f);
            x->cur = 0;
        }
        /* per key tile, three phases over the streams, so that each in-order engine finds
         * independent work next in its queue: (1) loads, scores, softmax statistics and P (the
         * exponential frees the scores' PSUM bank); (2) P^T; (3) the PV products, the row sum
         * and the rescaled accumulation */
        for (int64_t k0 = 0; k0 < L && gs_kb_ok(kb); k0 += TL) {
            unsigned tl = (unsigned)GS_MIN(TL, L - k0);
            unsigned nkc = (unsigned)((tl + KC - 1) / KC);
            gs_tile vt[AD_MAX_STREAMS], pt_[AD_MAX_STREAMS];
            for (unsigned i = 0; i < ns && gs_kb_ok(kb); i++) {
                stream *x = &sm[i];
                gs_ap *col = x->col;
                gs_tile kt = gs_tile_alloc(pk, dt, (unsigned)D, tl);
                gs_dma_copy(kb, kt.ap, gs_hbm_rows(KT, x->kvh * D, (unsigned)D, k0, tl), -1);
                /* V chunk j (KC keys) at free offset j * D */
                vt[i] = gs_tile_alloc(pv, dt, (unsigned)GS_MIN(KC, (int64_t)tl), nkc * (uint32_t)D);
                for (unsigned j = 0; j < nkc; j++) {
                    unsigned kc = (unsigned)GS_MIN(KC, (int64_t)(tl - j * KC));
                    gs_dma_copy(kb, gs_tile_view(&vt[i], 0, kc, j * (uint32_t)D, (uint32_t)D),
                                gs_hbm_rows(V, x->kvh * L + k0 + j * KC, kc, 0, (uint32_t)D), -1);
                }
                gs_ap m_old = col[x->cur], m_new = col[1 - x->cur];
                gs_tile sc = gs_tile_alloc(ps_s, GS_FP32, tq, tl);
                gs_matmul(kb, sc.ap, x->qt.ap, kt.ap, 0);
                gs_tensor_reduce(kb, col[2], sc.ap, GS_ALU_MAX, 1);
                gs_tensor_tensor(kb, m_new, m_old, col[2], GS_ALU_MAX);
                gs_tensor_scalar(kb, GS_ENG_VECTOR, col[3], m_new, GS_ALU_MUL, gs_imm(-scale),
                                 GS_ALU_BYPASS, gs_imm(0));
                pt_[i] = gs_tile_alloc(pp, dt, tq, tl);
                gs_activation(kb, pt_[i].ap, sc.ap, GS_ACT_EXP, gs_imm(scale),
                              gs_per_partition(col[3]), &col[5]);
                gs_activation(kb, col[4], m_old, GS_ACT_EXP, gs_imm(scale),
                              gs_per_partition(col[3]), NULL);
            }
            /* P^T chunk j of stream i: pts[i][j] */
            gs_tile pts[AD_MAX_STREAMS][AD_MAX_CHUNKS];
            for (unsigned i = 0; i < ns && gs_kb_ok(kb); i++)
                for (unsigned j = 0; j < nkc; j++) {
                    unsigned kc = (unsigned)GS_MIN(KC, (int64_t)(tl - j * KC));
                    gs_tile t = gs_tile_alloc(ps_t, dt, kc, tq);
                    gs_transpose(kb, t.ap, gs_tile_view(&pt_[i], 0, tq, j * (uint32_t)KC, kc));
                    pts[i][j] = gs_tile_alloc(ppt, dt, kc, tq);
                    gs_tensor_copy(kb, j % 2 ? GS_ENG_VECTOR : GS_ENG_SCALAR, pts[i][j].ap, t.ap);
                }
            for (unsigned i = 0; i < ns && gs_kb_ok(kb); i++) {
                stream *x = &sm[i];
                gs_tile o = gs_tile_alloc(ps_o, GS_FP32, tq, (uint32_t)D);
                for (unsigned j = 0; j < nkc; j++) {
                    unsigned kc = (unsigned)GS_MIN(KC, (int64_t)(tl - j * KC));
                    gs_matmul(kb, o.ap, pts[i][j].ap,
                              gs_tile_view(&vt[i], 0, kc, j * (uint32_t)D, (uint32_t)D), j > 0);
                }
                gs_tensor_scalar(kb, GS_ENG_VECTOR, x->col[6], x->col[6], GS_ALU_MUL,
                                 gs_per_partition(x->col[4]), GS_ALU_ADD,
                                 gs_per_partition(x->col[5]));
                gs_tensor_scalar(kb, GS_ENG_VECTOR, x->oacc.ap, x->oacc.ap, GS_ALU_MUL,
                                 gs_per_partition(x->col[4]), GS_ALU_BYPASS, gs_imm(0));
                gs_tensor_tensor(kb, x->oacc.ap, x->oacc.ap, o.ap, GS_ALU_ADD);
                x->cur = 1 - x->cur;
            }
        }
        for (unsigned i = 0; i < ns && gs_kb_ok(kb); i++) {
            stream *x = &sm[i];
            gs_activation(kb, x->col[7], x->col[6], GS_ACT_RECIPROCAL, gs_imm(1.0f), gs_imm(0.0f),
                          NULL);
            gs_tile out = gs_tile_alloc(pout, dt, tq, (uint32_t)D);
            gs_tensor_scalar(kb, GS_ENG_VECTOR, out.ap, x->oacc.ap, GS_ALU_MUL,
                             gs_per_partition(x->col[7]), GS_ALU_BYPASS, gs_imm(0));
            gs_dma_copy(kb, gs_hbm_rows(O, x->qrow, tq, 0, (uint32_t)D), out.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static void decl(gs_tensor_decl *t, const char *name, gs_tensor_kind kind, gs_dtype dt, int64_t r,
                 int64_t cols, double lo, double hi)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->dtype = dt;
    t->ndim = 2;
    t->shape[0] = r;
    t->shape[1] = cols;
    t->lo = lo;
    t->hi = hi;
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 4) return -1;
    int64_t B = a->dims[0], Hq = a->dims[1], Hkv = a->dims[2], L = a->dims[3], D = a->dims[4];
    if (B <= 0 || Hq <= 0 || Hkv <= 0 || L <= 0 || D <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "attention_decode: B, Hq, Hkv, L, D must be positive"),
               -1;
    if (Hq % Hkv)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "attention_decode: Hq = %" PRId64 " query heads are not a multiple "
                            "of Hkv = %" PRId64 " KV heads",
                            Hq, Hkv),
               -1;
    gs_dtype dt = a->dtype;
    /* larger queries sharpen the softmax, so the running max and rescaling matter */
    decl(&t[0], "Q", GS_TENSOR_INPUT, dt, B * Hq, D, -3.0, 3.0);
    decl(&t[1], "KT", GS_TENSOR_INPUT, dt, B * Hkv * D, L, -1.0, 1.0);
    decl(&t[2], "V", GS_TENSOR_INPUT, dt, B * Hkv * L, D, -1.0, 1.0);
    decl(&t[3], "O", GS_TENSOR_OUTPUT, dt, B * Hq, D, -1.0, 1.0);
    return 4;
}

/* For query row r: its scaled scores s[L] and the weights w[L] = softmax(s). */
static void scores(const gs_kernel_args *a, const double *const *in, int64_t r, double *s,
                   double *w)
{
    int64_t Hq = a->dims[1], Hkv = a->dims[2], L = a->dims[3], D = a->dims[4];
    int64_t b = r / Hq, g = (r % Hq) / (Hq / Hkv), kvh = b * Hkv + g;
    const double *q = in[0] + r * D, *kt = in[1] + kvh * D * L;
    double scale = 1.0 / sqrt((double)D), m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < L; j++) {
        double acc = 0.0;
        for (int64_t d = 0; d < D; d++)
            acc += q[d] * kt[d * L + j];
        s[j] = acc * scale;
        if (s[j] > m) m = s[j];
    }
    for (int64_t j = 0; j < L; j++)
        sum += (w[j] = exp(s[j] - m));
    for (int64_t j = 0; j < L; j++)
        w[j] /= sum;
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t B = a->dims[0], Hq = a->dims[1], Hkv = a->dims[2], L = a->dims[3], D = a->dims[4];
    double *s = gs_malloc((size_t)L * sizeof *s), *w = gs_malloc((size_t)L * sizeof *w);
    for (int64_t r = 0; r < B * Hq; r++) {
        if (!s || !w) { /* NaN: the check fails rather than passing on garbage */
            for (int64_t d = 0; d < D; d++)
                out[0][r * D + d] = NAN;
            continue;
        }
        int64_t kvh = (r / Hq) * Hkv + (r % Hq) / (Hq / Hkv);
        scores(a, in, r, s, w);
        for (int64_t d = 0; d < D; d++) {
            double acc = 0.0;
            for (int64_t j = 0; j < L; j++)
                acc += w[j] * in[2][(kvh * L + j) * D + d];
            out[0][r * D + d] = acc;
        }
    }
    gs_free(s);
    gs_free(w);
}

/*
 * Tolerance (gs_kernel_def.error_bound), u = the dtype's unit roundoff, v = fp32's,
 * gam(n) = n v / (1 - n v), per query row with exact scaled scores s_j, weights w_j =
 * softmax(s)_j, output O:
 *   a score accumulates D products in fp32 and is scaled: off by e_j = gam(D) scale sum_d |q_d
 *   k_jd| + v |s_j|; the exponential's argument scale x + bias rounds (2v (|s_j| + |m|), m =
 *   max s) and expf is within EXP_REL v, so each unnormalised weight carries a relative error
 *   b_j = expm1(e_j + 2v (|s_j| + |m|)) + EXP_REL v, and one more u where P is rounded to the
 *   dtype for the PV product (a_j = b_j + u). The softmax is invariant to the subtracted max,
 *   so its error cancels. The running rescales by alpha multiply the accumulator and the row
 *   sum by the same value: 2 v per key tile (nt tiles) on each, in r = 2 nt v + 2 v.
 *   The PV accumulation and the row sum over L terms: gam(L) of their absolute sums.
 *   With N = sum_j w_j |v_j| and the ratio numerator / row sum:
 *     |O' - O| <= (sum_j w_j |v_j| (a_j + r) + gam(L) N (1 + A) + |O| (max_j b_j + r + gam(L)))
 *                 / (1 - max_j b_j - r - gam(L)),  A = max_j a_j,
 *   then the output rounding u (|O| + that) and the dtype's subnormal floor.
 */
#define EXP_REL 4.0 /* expf within one ulp (2v), doubled for the fp32 scaling of its input */

static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    int64_t B = a->dims[0], Hq = a->dims[1], Hkv = a->dims[2], L = a->dims[3], D = a->dims[4];
    const double u = gs_dtype_eps(a->dtype), v = gs_dtype_eps(GS_FP32);
    const double gD = (double)D * v / (1.0 - (double)D * v);
    const double gL = (double)L * v / (1.0 - (double)L * v);
    const double scale = 1.0 / sqrt((double)D);
    /* key tiles: the bound cannot see the target's tile (TL); ceil(L / 64) counts at least as
     * many as any target with 64 or more keys per tile runs (512 on every shipped one) */
    const int64_t tiles = (L + 63) / 64;
    const double nt = (double)tiles;
    const double r_scale = 2.0 * nt * v + 2.0 * v;
    double *s = gs_malloc((size_t)L * sizeof *s), *w = gs_malloc((size_t)L * sizeof *w);
    double *ea = gs_malloc((size_t)L * sizeof *ea), *eb = gs_malloc((size_t)L * sizeof *eb);
    for (int64_t r = 0; r < B * Hq; r++) {
        if (!s || !w || !ea || !eb) break; /* bounds stay 0: the check fails */
        int64_t kvh = (r / Hq) * Hkv + (r % Hq) / (Hq / Hkv);
        const double *q = in[0] + r * D, *kt = in[1] + kvh * D * L;
        scores(a, in, r, s, w);
        double m = -INFINITY, bmax = 0.0, amax = 0.0;
        for (int64_t j = 0; j < L; j++)
            m = s[j] > m ? s[j] : m;
        for (int64_t j = 0; j < L; j++) {
            double sa = 0.0;
            for (int64_t d = 0; d < D; d++)
                sa += fabs(q[d] * kt[d * L + j]);
            const double e = gD * scale * sa + v * fabs(s[j]);
            eb[j] = expm1(e + 2.0 * v * (fabs(s[j]) + fabs(m))) + EXP_REL * v;
            ea[j] = eb[j] + u;
            bmax = GS_MAX(bmax, eb[j]);
            amax = GS_MAX(amax, ea[j]);
        }
        const double den = 1.0 - bmax - r_scale - gL;
        for (int64_t d = 0; d < D; d++) {
            double num = 0.0, N = 0.0;
            for (int64_t j = 0; j < L; j++) {
                const double wv = w[j] * fabs(in[2][(kvh * L + j) * D + d]);
                N += wv;
                num += wv * (ea[j] + r_scale);
            }
            const double o = fabs(ref[0][r * D + d]);
            const double e = den > 0.0
                                 ? (num + gL * N * (1.0 + amax) + o * (bmax + r_scale + gL)) / den
                                 : (double)INFINITY;
            bound[0][r * D + d] = e + u * (o + e) + gs_tol_floor(a->dtype);
        }
    }
    gs_free(s);
    gs_free(w);
    gs_free(ea);
    gs_free(eb);
}

const gs_kernel_def gs_kernel_attention_decode = {
    .name = "attention_decode",
    .summary = "one query token per sequence against its KV cache, grouped-query heads",
    .n_dims = 5,
    .dim_names = {"B", "Hq", "Hkv", "L", "D"},
    .n_variants = 2,
    .variants = {"per_head", "grouped"},
    .n_params = 2,
    .param_names = {"bufs", "streams"},
    .param_help = {"K/V tiles in flight per stream (0: 2)",
                   "(sequence, KV head) streams interleaved, 1..16 (0: 8)"},
    .check_shapes = {{5, {2, 4, 2, 300, 64}},
                     {5, {1, 8, 1, 1024, 128}},
                     {5, {3, 3, 3, 131, 32}},
                     {5, {1, 1, 1, 1, 8}}},
    .perf_shapes = {{5, {8, 32, 8, 4096, 128}}, {5, {1, 32, 8, 32768, 128}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
