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
 * Prologue: K^T and Q^T [D x S] (tensor-engine transposes of K and Q row blocks) and V
 * [S x D] row blocks are made resident in SBUF once. Per query tile (a stream): running max m,
 * running sum l and an fp32 accumulator O in SBUF; per key tile:
 *   S = Q K^T (tensor engine into PSUM), [causal, diagonal tile: copy to SBUF and mask with
 *   affine_select on gpsimd], tile max (vector), m' = max(m, tile max), P = exp(S/sqrt(D) -
 *   m'/sqrt(D)) on the scalar engine with its accumulate output giving the row sums, alpha =
 *   exp((m - m')/sqrt(D)), l = l * alpha + rowsum, P^T by transposes (the key chunks side by
 *   side in one PSUM tile, one evacuation), PV (tensor engine), O = O * alpha + PV (vector).
 * Finally O * l^-1 is stored. `streams` slots each hold a query tile; every iteration takes
 * one key tile of each through four phases over the slots (scores, stats, exponentials, and
 * one key tile behind, P^T and PV), and a slot whose tile is done takes the next query tile at
 * once, so the in-order engines overlap one tile's exponentials with another's matmuls (the
 * scheduling a compiler does for NKI). P is rounded to the compute dtype for the PV matmul (as
 * on the hardware); everything else stays fp32.
 * Variant "causal" skips key tiles entirely above the diagonal (keys > last query of the tile)
 * and masks only the diagonal tiles; "noncausal" attends to all keys. The causal mask needs
 * affine_select (gpsimd): a target without it reports "unsupported". Params: tk, bufs (SBUF
 * buffers per streaming pool, default 2), streams (query tiles interleaved, default 4).
 */
#include <math.h>
#include <stdio.h>

#include "kernel_util.h"
#include "gs/kernel.h"

enum { AT_CAUSAL, AT_NONCAUSAL };

/* A finite "minus infinity" for the running max and the mask fill: exp of it (scaled) is 0
 * and, unlike -inf, m_old - m_new never becomes inf - inf = NaN. */
#define AT_NEG_BIG (-1.0e30f)

#define AT_MAX_STREAMS 8 /* query tiles interleaved at most */

/* One query tile's state while it walks its key tiles. */
typedef struct at_stream {
    int64_t q0, kend, k0;
    unsigned tq, tk;
    uint32_t qs, qo; /* Q^T chunk ci of this tile at free offset ci * qs + qo of qt */
    gs_tile qt, st, oacc, s, p;
    gs_ap col[10], src;
    int cur;
    /* the step whose PV is still to issue: its key tile, P and alpha column */
    int pend;
    int64_t pk0;
    unsigned ptk, pa, nac;
    gs_tile pp, ptt;
} at_stream;

/* The pools and operands the PV step of every stream shares. */
typedef struct at_ctx {
    gs_pool *ps_t, *ppt, *ps_o;
    gs_tile vr;
    gs_dtype dt;
    int64_t KC, D;
    gs_engine pt_eng;
} at_ctx;

/* A stream's pending step: P^T by transposes (the key chunks side by side in one PSUM tile,
 * one evacuation) ... */
static void at_pt(gs_kb *kb, const at_ctx *x, at_stream *w)
{
    gs_engine eng = x->pt_eng;
    int64_t KC = x->KC;
    unsigned nkk = (unsigned)((w->ptk + KC - 1) / KC);
    unsigned kc0 = (unsigned)GS_MIN(KC, (int64_t)w->ptk);
    gs_tile t = gs_tile_alloc(x->ps_t, x->dt, kc0, nkk * w->tq);
    for (unsigned q = 0; q < nkk; q++) {
        unsigned kcs = (unsigned)GS_MIN(KC, (int64_t)w->ptk - (int64_t)q * KC);
        gs_transpose(kb, gs_tile_view(&t, 0, kcs, q * w->tq, w->tq),
                     gs_tile_view(&w->pp, 0, w->tq, q * (uint32_t)KC, kcs));
    }
    gs_tile pt = gs_tile_alloc(x->ppt, x->dt, kc0, nkk * w->tq);
    if (w->ptk % KC == 0) {
        gs_tensor_copy(kb, eng, pt.ap, t.ap);
    } else { /* the last chunk has fewer partitions */
        for (unsigned q = 0; q < nkk; q++) {
            unsigned kcs = (unsigned)GS_MIN(KC, (int64_t)w->ptk - (int64_t)q * KC);
            gs_tensor_copy(kb, eng, gs_tile_view(&pt, 0, kcs, q * w->tq, w->tq),
                           gs_tile_view(&t, 0, kcs, q * w->tq, w->tq));
        }
    }
    w->ptt = pt;
}

/* ... then PV into PSUM and O = O * alpha + PV. */
static void at_pvm(gs_kb *kb, const at_ctx *x, at_stream *w)
{
    int64_t KC = x->KC;
    unsigned nkk = (unsigned)((w->ptk + KC - 1) / KC);
    gs_tile pt = w->ptt;
    gs_tile pv = gs_tile_alloc(x->ps_o, GS_FP32, w->tq, (uint32_t)x->D);
    for (unsigned q = 0; q < nkk; q++) {
        unsigned kcs = (unsigned)GS_MIN(KC, (int64_t)w->ptk - (int64_t)q * KC);
        int64_t j = w->pk0 / KC + q;
        gs_matmul(kb, pv.ap, gs_tile_view(&pt, 0, kcs, q * w->tq, w->tq),
                  gs_tile_view(&x->vr, 0, kcs, (uint32_t)(j * x->D), (uint32_t)x->D), q > 0);
    }
    gs_tensor_scalar(kb, GS_ENG_VECTOR, w->oacc.ap, w->oacc.ap, GS_ALU_MUL,
                     gs_per_partition(w->col[w->pa]), GS_ALU_BYPASS, gs_imm(0));
    gs_tensor_tensor(kb, w->oacc.ap, w->oacc.ap, pv.ap, GS_ALU_ADD);
    w->pend = 0;
}

/* A stream's end: O * (1/l), stored. 1/l is l^-1 on the vector engine, one element per
 * partition: a reciprocal on the scalar engine would switch its function table away from
 * exp and back for every query tile, and dividing all of O is a slow ALU op per element. */
static void at_finish(gs_kb *kb, const gs_tensor *O, at_stream *w, gs_pool *pout, int64_t D,
                      gs_dtype dt)
{
    gs_tensor_scalar(kb, GS_ENG_VECTOR, w->col[7], w->col[6], GS_ALU_POW, gs_imm(-1.0f),
                     GS_ALU_BYPASS, gs_imm(0));
    gs_tile out = gs_tile_alloc(pout, dt, w->tq, (uint32_t)D);
    gs_tensor_scalar(kb, GS_ENG_VECTOR, out.ap, w->oacc.ap, GS_ALU_MUL, gs_per_partition(w->col[7]),
                     GS_ALU_BYPASS, gs_imm(0));
    gs_dma_copy(kb, gs_hbm_rows(O, w->q0, w->tq, 0, (uint32_t)D), out.ap, -1);
}

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
    int64_t nsp = gs_kernel_param(a, "streams", 0);
    if (nsp < 0 || nsp > AT_MAX_STREAMS || bufs > 64)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "attention: streams must be in 0..%d and bufs in 0..64", AT_MAX_STREAMS);
    /* default: 4 streams, fewer where PSUM has no bank for each stream's scores next to the
     * two transpose and two PV banks */
    unsigned NS = nsp > 0 ? (unsigned)nsp : (unsigned)GS_MAX(1, GS_MIN(4, (int)c->psum_banks - 4));
    int64_t nd = (D + DC - 1) / DC, nkc = (S + KC - 1) / KC;
    float scale = (float)(1.0 / sqrt((double)D));

    /* PSUM: scores, transposes, PV; double-buffered when the banks allow */
    /* score tiles: two per stream, so the next key tile's scores do not wait for this one's
     * exponentials, where the banks allow (ps_t and ps_o take two banks each) */
    int psum2 = c->psum_banks >= 6;
    unsigned nps = c->psum_banks >= 4 + 2 * NS ? 2 * NS : GS_MAX(NS, psum2 ? 2u : 1u);
    gs_pool *ps_s = gs_pool_create(kb, GS_MEM_PSUM, "s", nps, (uint64_t)TK * 4);
    gs_pool *ps_t = gs_pool_create(kb, GS_MEM_PSUM, "t", 2,
                                   (uint64_t)GS_MAX(GS_MAX(TQ, DC), TK / KC * TQ) * es);
    gs_pool *ps_o = gs_pool_create(kb, GS_MEM_PSUM, "pv", psum2 ? 2 : 1, (uint64_t)D * 4);
    /* SBUF: resident K^T (chunk c of D at free offset c*S) and V (block j at free offset j*D) */
    gs_pool *pkt = gs_pool_create(kb, GS_MEM_SBUF, "kT", 1, (uint64_t)(nd * S) * es);
    gs_pool *pvr = gs_pool_create(kb, GS_MEM_SBUF, "v", 1, (uint64_t)(nkc * D) * es);
    /* the prologue's K and Q row blocks: deep enough that their loads overlap */
    unsigned nrow = 8u;
    gs_pool *prow = gs_pool_create(kb, GS_MEM_SBUF, "rows", GS_MAX(bufs, nrow), (uint64_t)D * es);
    /* Q^T resident as K^T where it takes at most a quarter of SBUF next to K^T and V; else
     * each stream transposes its own query tile when it starts (gen1 at S = 8192) */
    int qres = (uint64_t)(2 * nd * S + nkc * D) * es <= c->sbuf_partition_bytes / 2;
    gs_pool *pqt = gs_pool_create(kb, GS_MEM_SBUF, "qT", qres ? 1 : 2 * NS,
                                  (uint64_t)(nd * (qres ? S : TQ)) * es);
    /* per slot: the live stream's and its tail's statistics and accumulator */
    gs_pool *pst[AT_MAX_STREAMS], *pacc[AT_MAX_STREAMS];
    for (unsigned i = 0; i < NS; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "stats%u", i);
        pst[i] = gs_pool_create(kb, GS_MEM_SBUF, nm, 2, 10 * 4);
        snprintf(nm, sizeof nm, "oacc%u", i);
        pacc[i] = gs_pool_create(kb, GS_MEM_SBUF, nm, 2, (uint64_t)D * 4);
    }
    gs_pool *psm = gs_pool_create(kb, GS_MEM_SBUF, "smask", GS_MAX(bufs, NS), (uint64_t)TK * 4);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_SBUF, "p", GS_MAX(bufs, 2 * NS), (uint64_t)TK * es);
    gs_pool *ppt =
        gs_pool_create(kb, GS_MEM_SBUF, "pT", GS_MAX(bufs, 2 * NS), (uint64_t)(TK / KC * TQ) * es);
    /* P^T evacuations on the scalar engine: moving them to the vector engine (all, or every
     * other stream's) measured no faster on gen2-gen4, only a differently placed bound */
    gs_engine pt_eng = GS_ENG_SCALAR;
    gs_pool *pout = gs_pool_create(kb, GS_MEM_SBUF, "out", bufs, (uint64_t)D * es);
    if (!gs_kb_ok(kb)) return gs_kb_status(kb);

    gs_tile kt = gs_tile_alloc(pkt, dt, (unsigned)GS_MIN(DC, D), (uint32_t)(nd * S));
    gs_tile vr = gs_tile_alloc(pvr, dt, (unsigned)GS_MIN(KC, S), (uint32_t)(nkc * D));
    at_ctx x = {ps_t, ppt, ps_o, vr, dt, KC, D, pt_eng};
    gs_tile qt = {0};
    if (qres) qt = gs_tile_alloc(pqt, dt, (unsigned)GS_MIN(DC, D), (uint32_t)(nd * S));
    for (int64_t j = 0; j < nkc && gs_kb_ok(kb); j++) {
        int64_t k0 = j * KC;
        unsigned kcs = (unsigned)GS_MIN(KC, S - k0);
        gs_dma_copy(kb, gs_tile_view(&vr, 0, kcs, (uint32_t)(j * D), (uint32_t)D),
                    gs_hbm_rows(V, k0, kcs, 0, (uint32_t)D), -1);
        for (int m = 0; m < 1 + qres; m++) { /* K^T, Q^T: block j transposed chunk by chunk */
            gs_tile kr = gs_tile_alloc(prow, dt, kcs, (uint32_t)D);
            gs_dma_copy(kb, kr.ap, gs_hbm_rows(m ? Q : K, k0, kcs, 0, (uint32_t)D), -1);
            for (int64_t ci = 0; ci < nd; ci++) {
                unsigned dc = (unsigned)GS_MIN(DC, D - ci * DC);
                gs_tile t = gs_tile_alloc(ps_t, dt, dc, kcs);
                gs_transpose(kb, t.ap, gs_tile_view(&kr, 0, kcs, (uint32_t)(ci * DC), dc));
                gs_tensor_copy(kb, GS_ENG_VECTOR,
                               gs_tile_view(m ? &qt : &kt, 0, dc, (uint32_t)(ci * S + k0), kcs),
                               t.ap);
            }
        }
    }

    /* NS slots each hold a query tile (a stream) walking its key tiles; every iteration takes
     * one key tile of every live stream through four phases (scores; max and stats;
     * exponentials; and, one step behind, P^T, PV and the O update), so that each in-order
     * engine finds independent work while another stream's step waits: the tensor engine
     * computes scores while the scalar engine exponentiates. A slot whose stream has issued
     * its last key tile takes the next query tile at once; the finished stream's last PV and
     * its O / l follow as a tail in the next phase 4. */
    at_stream sv[AT_MAX_STREAMS], tail[AT_MAX_STREAMS];
    int live[AT_MAX_STREAMS] = {0}, tailed[AT_MAX_STREAMS] = {0};
    int64_t next_q = 0;
    for (;;) {
        if (!gs_kb_ok(kb)) break;
        /* phase 0: start the next query tiles in free slots */
        int any = 0;
        for (unsigned i = 0; i < NS; i++) {
            if (!live[i] && next_q < S) {
                at_stream *w = &sv[i];
                w->q0 = next_q;
                w->tq = (unsigned)GS_MIN(TQ, S - w->q0);
                next_q += TQ;
                w->kend = causal ? GS_MIN(S, w->q0 + w->tq) : S;
                w->k0 = 0;
                if (qres) { /* Q^T chunk ci of this tile at free offset ci*S + q0 */
                    w->qt = qt;
                    w->qs = (uint32_t)S;
                    w->qo = (uint32_t)w->q0;
                } else {
                    gs_tile qr = gs_tile_alloc(prow, dt, w->tq, (uint32_t)D);
                    gs_dma_copy(kb, qr.ap, gs_hbm_rows(Q, w->q0, w->tq, 0, (uint32_t)D), -1);
                    w->qt = gs_tile_alloc(pqt, dt, (unsigned)GS_MIN(DC, D), (uint32_t)(nd * w->tq));
                    w->qs = w->tq;
                    w->qo = 0;
                    for (int64_t ci = 0; ci < nd; ci++) {
                        unsigned dc = (unsigned)GS_MIN(DC, D - ci * DC);
                        gs_tile t = gs_tile_alloc(ps_t, dt, dc, w->tq);
                        gs_transpose(kb, t.ap,
                                     gs_tile_view(&qr, 0, w->tq, (uint32_t)(ci * DC), dc));
                        gs_tensor_copy(kb, GS_ENG_VECTOR,
                                       gs_tile_view(&w->qt, 0, dc, (uint32_t)(ci * w->tq), w->tq),
                                       t.ap);
                    }
                }
                /* stats columns: 0/1 running max (ping-pong), 2 tile max, 3 -m'/sqrt(D),
                 * 4 and 8 alpha (ping-pong), 5 row sum of this tile, 6 running sum l, 7 1/l */
                w->st = gs_tile_alloc(pst[i], GS_FP32, w->tq, 10);
                for (unsigned k = 0; k < 10; k++)
                    w->col[k] = gs_tile_view(&w->st, 0, w->tq, k, 1);
                w->oacc = gs_tile_alloc(pacc[i], GS_FP32, w->tq, (uint32_t)D);
                gs_memset(kb, GS_ENG_VECTOR, w->col[0], AT_NEG_BIG);
                gs_memset(kb, GS_ENG_VECTOR, w->col[6], 0.0f);
                gs_memset(kb, GS_ENG_VECTOR, w->oacc.ap, 0.0f);
                w->cur = 0;
                w->pend = 0;
                live[i] = 1;
            }
            any |= live[i] | tailed[i];
        }
        if (!any) break;
        /* phase 1: scores (and the diagonal mask) */
        for (unsigned i = 0; i < NS; i++) {
            at_stream *w = &sv[i];
            if (!live[i]) continue;
            w->tk = (unsigned)GS_MIN(TK, w->kend - w->k0);
            w->s = gs_tile_alloc(ps_s, GS_FP32, w->tq, w->tk);
            for (int64_t ci = 0; ci < nd; ci++) {
                unsigned dc = (unsigned)GS_MIN(DC, D - ci * DC);
                gs_matmul(kb, w->s.ap,
                          gs_tile_view(&w->qt, 0, dc, (uint32_t)ci * w->qs + w->qo, w->tq),
                          gs_tile_view(&kt, 0, dc, (uint32_t)(ci * S + w->k0), w->tk), ci > 0);
            }
            w->src = w->s.ap;
            if (causal && w->k0 + w->tk - 1 > w->q0) {
                /* keep key k0+j for query q0+p where (q0 - k0) + p - j >= 0 */
                gs_tile sm = gs_tile_alloc(psm, GS_FP32, w->tq, w->tk);
                gs_tensor_copy(kb, GS_ENG_VECTOR, sm.ap, w->s.ap);
                gs_affine_select(kb, sm.ap, sm.ap, GS_ALU_GE, w->q0 - w->k0, 1, -1, AT_NEG_BIG);
                w->src = sm.ap;
            }
        }
        /* phase 2: the tile max and the new running max */
        for (unsigned i = 0; i < NS; i++) {
            at_stream *w = &sv[i];
            if (!live[i]) continue;
            gs_ap m_old = w->col[w->cur], m_new = w->col[1 - w->cur];
            gs_tensor_reduce(kb, w->col[2], w->src, GS_ALU_MAX, 1);
            gs_tensor_tensor(kb, m_new, m_old, w->col[2], GS_ALU_MAX);
            gs_tensor_scalar(kb, GS_ENG_VECTOR, w->col[3], m_new, GS_ALU_MUL, gs_imm(-scale),
                             GS_ALU_BYPASS, gs_imm(0));
        }
        /* phase 3: P = exp, its row sums, alpha (a column per step parity, since the previous
         * step's PV, issued after this, still scales by its own), l */
        for (unsigned i = 0; i < NS; i++) {
            at_stream *w = &sv[i];
            if (!live[i]) continue;
            gs_ap m_old = w->col[w->cur];
            unsigned ac = w->pend && w->pa == 4 ? 8 : 4;
            w->p = gs_tile_alloc(pp, dt, w->tq, w->tk);
            gs_activation(kb, w->p.ap, w->src, GS_ACT_EXP, gs_imm(scale),
                          gs_per_partition(w->col[3]), &w->col[5]);
            gs_activation(kb, w->col[ac], m_old, GS_ACT_EXP, gs_imm(scale),
                          gs_per_partition(w->col[3]), NULL);
            gs_tensor_scalar(kb, GS_ENG_VECTOR, w->col[6], w->col[6], GS_ALU_MUL,
                             gs_per_partition(w->col[ac]), GS_ALU_ADD, gs_per_partition(w->col[5]));
            w->cur = 1 - w->cur;
            w->nac = ac;
        }
        /* phase 4: the previous key tile of the tails and of every live stream, all their
         * transposes before any PV (a PV waits for its evacuation on another engine) */
        for (unsigned i = 0; i < NS; i++) {
            if (tailed[i]) at_pt(kb, &x, &tail[i]);
            if (live[i] && sv[i].pend) at_pt(kb, &x, &sv[i]);
        }
        for (unsigned i = 0; i < NS; i++) {
            if (tailed[i]) {
                at_pvm(kb, &x, &tail[i]);
                at_finish(kb, O, &tail[i], pout, D, dt);
                tailed[i] = 0;
            }
            at_stream *w = &sv[i];
            if (!live[i]) continue;
            if (w->pend) at_pvm(kb, &x, w);
            w->pend = 1;
            w->pk0 = w->k0;
            w->ptk = w->tk;
            w->pp = w->p;
            w->pa = w->nac;
            w->k0 += TK;
            if (w->k0 >= w->kend) { /* its last key tile is issued: the slot is free */
                tail[i] = *w;
                tailed[i] = 1;
                live[i] = 0;
            }
        }
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
    .n_params = 3,
    .param_names = {"tk", "bufs", "streams"},
    .param_help =
        {"keys per score tile (0: one PSUM bank / the moving free max)",
         "buffers per streaming SBUF pool (2 = double buffering)",
         "query tiles interleaved per key tile, 1..8 (0: 4, fewer if PSUM lacks the banks)"},
    .check_shapes = {{2, {128, 64}}, {2, {600, 64}}, {2, {200, 128}}},
    .perf_shapes = {{2, {2048, 64}}, {2, {2048, 128}}, {2, {8192, 128}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
