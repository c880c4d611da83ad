/*
 * matmul.c - C[M x N] = A[M x K] x B[K x N], with A given transposed as AT [K x M] (the
 * layout the tensor engine's stationary operand wants, as in NKI's matmul tutorial), as an
 * optimisation ladder of schedules (matmul.h). Also the schedules bmm, mlp and matmul_fp8 use.
 *
 * Tiles come from the target: TM = pe_cols (stationary free), TK = pe_rows (contraction),
 * TN = min(moving_free_max, one PSUM bank of fp32). Every schedule handles tails with smaller
 * tiles. The rungs:
 *  - naive: for every output tile and K-tile, load the AT and B tiles, matmul-accumulate into a
 *    PSUM bank, evacuate (vector engine, converting to the output dtype) and store.
 *  - hoisted: loads hoisted out of the inner loops: the AT column panel [K x TM] of an M tile
 *    is loop-invariant over N and loaded once per M tile; the B panel [K x TN] of an output
 *    tile is loaded before its K loop (all K-tiles in flight at once over the queues) rather
 *    than one K-tile at a time inside it. B is still loaded once per (M tile, N tile).
 *  - blocked: an AT block [K x MB] and a B block [K x NB] stay resident in SBUF; every AT
 *    element is loaded N/NB times and every B element M/MB times, with wide (MB or NB
 *    elements) rows per DMA descriptor. Single-buffered: the next block's loads wait for the
 *    last matmul reading the current one, and stores share the queues with loads.
 *  - blocked and pipelined use fp8 "double row" matmuls (caps.double_row_k: K-tiles of
 *    2 x pe_rows as two halves, each matmul as long as a bf16 one of pe_rows) where the target
 *    has them and both operands are fp8.
 *  - pipelined: the same blocks with the AT block double-buffered (the next block loads while
 *    this one is multiplied), loads and stores on disjoint DMA queues (an in-order queue never
 *    holds a load behind a store waiting for its evacuation), the stationary AT tile reused for
 *    G matmuls back to back across the moving free dimension (G PSUM banks, double-buffered),
 *    evacuation alternating between the vector and scalar engines, and one store per G tiles.
 * Block sizes (params mb, nb) default to what SBUF holds after the other pools, so they follow
 * the target's SBUF size and the problem's K.
 */
#include "matmul.h"

#include "kernel_util.h"
#include "gs/kernel.h"

#include <stdio.h>
#include <string.h>

/* PSUM banks one group of pipelined matmuls may use */
#define GS_MAX_PSUM_GROUP 16

typedef struct mm_state {
    gs_kb *kb;
    const gs_caps *c;
    const gs_mm_problem *p;
    gs_dtype in_dt, out_dt;
    size_t ies, oes;
    int64_t TM, TK, TN, KT, PK; /* PK: partitions of a K-tile buffer (min(TK, K)) */
    int64_t dr; /* blocked/pipelined: values per PE row (2: fp8 double row, K-tile = 2 halves) */
    unsigned bufs;
    int64_t mb_param, nb_param; /* block columns asked for (0: derive from SBUF) */
    int split_queues;           /* pipelined: loads and stores on disjoint queues */
    unsigned q_store_n, q_next_load, q_next_store;
    gs_pool *pbias;
    gs_pool *first; /* the first pool this build created: released (with all later) at the end */
    gs_tile bias;
} mm_state;

static gs_pool *mk_pool(mm_state *s, gs_memspace space, const char *name, unsigned bufs,
                        uint64_t bytes)
{
    gs_pool *pl = gs_pool_create(s->kb, space, name, bufs, bytes);
    if (!s->first) s->first = pl;
    return pl;
}

static int q_load(mm_state *s)
{
    if (!s->split_queues) return -1;
    unsigned nload = s->c->dma_queues - s->q_store_n;
    return (int)(s->q_store_n + s->q_next_load++ % nload);
}

static int q_store(mm_state *s)
{
    if (!s->split_queues) return -1;
    return (int)(s->q_next_store++ % s->q_store_n);
}

static void load_bias(mm_state *s, int64_t m0, unsigned tm)
{
    if (!s->p->bias) return;
    s->bias = gs_tile_alloc(s->pbias, s->p->bias->dtype, tm, 1);
    gs_dma_copy(s->kb, s->bias.ap, gs_hbm_rows(s->p->bias, m0, tm, 0, 1), q_load(s));
}

/* PSUM -> SBUF with the output conversion and the epilogue, if any. */
static void evacuate(mm_state *s, gs_ap out, gs_ap acc, gs_engine eng, unsigned tm)
{
    const gs_mm_problem *p = s->p;
    if (p->bias || p->act != GS_ACT_IDENTITY) {
        gs_operand bias =
            p->bias ? gs_per_partition(gs_tile_view(&s->bias, 0, tm, 0, 1)) : gs_imm(0.0f);
        gs_activation(s->kb, out, acc, p->act, gs_imm(1.0f), bias, NULL);
    } else {
        gs_tensor_copy(s->kb, eng, out, acc);
    }
}

static void store(mm_state *s, int64_t m0, unsigned tm, int64_t n0, uint32_t tn, gs_ap out)
{
    gs_dma_copy(s->kb, gs_hbm_rows(s->p->c, s->p->c_row0 + m0, tm, n0, tn), out, q_store(s));
}

static gs_pool *psum_pool(mm_state *s, unsigned bufs)
{
    /* one bank per buffer: a matmul output must not cross a PSUM bank */
    return mk_pool(s, GS_MEM_PSUM, "acc", bufs, s->c->psum_bank_bytes);
}

static void sched_naive(mm_state *s)
{
    const gs_mm_problem *p = s->p;
    gs_kb *kb = s->kb;
    gs_pool *pa = mk_pool(s, GS_MEM_SBUF, "at", s->bufs, (uint64_t)s->TM * s->ies);
    gs_pool *pb = mk_pool(s, GS_MEM_SBUF, "b", s->bufs, (uint64_t)s->TN * s->ies);
    gs_pool *po = mk_pool(s, GS_MEM_SBUF, "c", s->bufs, (uint64_t)s->TN * s->oes);
    gs_pool *pp = psum_pool(s, s->bufs);
    for (int64_t m0 = p->m_lo; m0 < p->m_hi && gs_kb_ok(kb); m0 += s->TM) {
        unsigned tm = (unsigned)GS_MIN(s->TM, p->m_hi - m0);
        load_bias(s, m0, tm);
        for (int64_t n0 = 0; n0 < p->N && gs_kb_ok(kb); n0 += s->TN) {
            uint32_t tn = (uint32_t)GS_MIN(s->TN, p->N - n0);
            gs_tile acc = gs_tile_alloc(pp, GS_FP32, tm, tn);
            for (int64_t k0 = 0; k0 < p->K && gs_kb_ok(kb); k0 += s->TK) {
                unsigned tk = (unsigned)GS_MIN(s->TK, p->K - k0);
                gs_tile ta = gs_tile_alloc(pa, s->in_dt, tk, tm);
                gs_tile tb = gs_tile_alloc(pb, s->in_dt, tk, tn);
                gs_dma_copy(kb, ta.ap, gs_hbm_rows(p->at, p->at_row0 + k0, tk, m0, tm), -1);
                gs_dma_copy(kb, tb.ap, gs_hbm_rows(p->b, p->b_row0 + k0, tk, n0, tn), -1);
                gs_matmul(kb, acc.ap, ta.ap, tb.ap, k0 > 0);
            }
            gs_tile out = gs_tile_alloc(po, s->out_dt, tm, tn);
            evacuate(s, out.ap, acc.ap, GS_ENG_VECTOR, tm);
            store(s, m0, tm, n0, tn, out.ap);
        }
    }
}

static void sched_hoisted(mm_state *s)
{
    const gs_mm_problem *p = s->p;
    gs_kb *kb = s->kb;
    /* Panels: K-tile kt at free offset kt * width. The AT panel of an M tile is loaded once per
     * M tile; the B panel of an N tile once per output tile, all its K-tiles issued together
     * (so they spread over the queues) before the K loop instead of one at a time inside it.
     * The B panel is double-buffered when SBUF holds two. */
    uint64_t at_bytes = (uint64_t)(s->KT * s->TM) * s->ies;
    uint64_t b_bytes = (uint64_t)(s->KT * s->TN) * s->ies;
    uint64_t out_bytes = (uint64_t)s->bufs * (uint64_t)s->TN * s->oes;
    unsigned bbufs = at_bytes + 2 * b_bytes + out_bytes <= s->c->sbuf_partition_bytes ? 2u : 1u;
    gs_pool *pa = mk_pool(s, GS_MEM_SBUF, "at_panel", 1, at_bytes);
    gs_pool *pb = mk_pool(s, GS_MEM_SBUF, "b_panel", bbufs, b_bytes);
    gs_pool *po = mk_pool(s, GS_MEM_SBUF, "c", s->bufs, (uint64_t)s->TN * s->oes);
    gs_pool *pp = psum_pool(s, s->bufs);
    for (int64_t m0 = p->m_lo; m0 < p->m_hi && gs_kb_ok(kb); m0 += s->TM) {
        unsigned tm = (unsigned)GS_MIN(s->TM, p->m_hi - m0);
        load_bias(s, m0, tm);
        gs_tile panel = gs_tile_alloc(pa, s->in_dt, (unsigned)s->PK, (uint32_t)(s->KT * s->TM));
        for (int64_t kt = 0; kt < s->KT; kt++) {
            int64_t k0 = kt * s->TK;
            unsigned tk = (unsigned)GS_MIN(s->TK, p->K - k0);
            gs_dma_copy(kb, gs_tile_view(&panel, 0, tk, (uint32_t)(kt * s->TM), tm),
                        gs_hbm_rows(p->at, p->at_row0 + k0, tk, m0, tm), -1);
        }
        for (int64_t n0 = 0; n0 < p->N && gs_kb_ok(kb); n0 += s->TN) {
            uint32_t tn = (uint32_t)GS_MIN(s->TN, p->N - n0);
            gs_tile bp = gs_tile_alloc(pb, s->in_dt, (unsigned)s->PK, (uint32_t)(s->KT * s->TN));
            for (int64_t kt = 0; kt < s->KT; kt++) {
                int64_t k0 = kt * s->TK;
                unsigned tk = (unsigned)GS_MIN(s->TK, p->K - k0);
                gs_dma_copy(kb, gs_tile_view(&bp, 0, tk, (uint32_t)(kt * s->TN), tn),
                            gs_hbm_rows(p->b, p->b_row0 + k0, tk, n0, tn), -1);
            }
            gs_tile acc = gs_tile_alloc(pp, GS_FP32, tm, tn);
            for (int64_t kt = 0; kt < s->KT && gs_kb_ok(kb); kt++) {
                unsigned tk = (unsigned)GS_MIN(s->TK, p->K - kt * s->TK);
                gs_matmul(kb, acc.ap, gs_tile_view(&panel, 0, tk, (uint32_t)(kt * s->TM), tm),
                          gs_tile_view(&bp, 0, tk, (uint32_t)(kt * s->TN), tn), kt > 0);
            }
            gs_tile out = gs_tile_alloc(po, s->out_dt, tm, tn);
            evacuate(s, out.ap, acc.ap, GS_ENG_VECTOR, tm);
            store(s, m0, tm, n0, tn, out.ap);
        }
    }
}

/* Load columns [c0, c0+w) of every K-tile of an operand into a block tile: K-tile kt lands at
 * free offset kt * bw, one DMA (one w-element descriptor per partition row) per K-tile. With
 * double row (dr 2) a K-tile of tk rows is two halves at free offsets (2 kt + h) * bw: rows
 * [0, ph) and [ph, tk) on partitions 0.. (ph = ceil(tk / 2)); an odd tk leaves the last row of
 * half 1 short, which is zeroed (the contraction must be padded with zeros). */
static void load_block(mm_state *s, gs_tile *blk, int64_t bw, const gs_tensor *t, int64_t row0,
                       int64_t c0, uint32_t w)
{
    for (int64_t kt = 0; kt < s->KT; kt++) {
        int64_t k0 = kt * s->TK;
        unsigned tk = (unsigned)GS_MIN(s->TK, s->p->K - k0);
        if (s->dr == 1) {
            gs_dma_copy(s->kb, gs_tile_view(blk, 0, tk, (uint32_t)(kt * bw), w),
                        gs_hbm_rows(t, row0 + k0, tk, c0, w), q_load(s));
            continue;
        }
        unsigned ph = (tk + 1) / 2;
        for (unsigned h = 0; h < 2; h++) {
            unsigned rows = h ? tk - ph : ph;
            uint32_t f0 = (uint32_t)((2 * kt + h) * bw);
            if (rows < ph) gs_memset(s->kb, GS_ENG_VECTOR, gs_tile_view(blk, 0, ph, f0, w), 0.0f);
            if (rows)
                gs_dma_copy(s->kb, gs_tile_view(blk, 0, rows, f0, w),
                            gs_hbm_rows(t, row0 + k0 + h * ph, rows, c0, w), q_load(s));
        }
    }
}

/* One matmul of K-tile kt: stationary columns [sf, sf+tm) of block a (block width ab), moving
 * columns [mf, mf+n) of block b (width bb). */
static void kt_matmul(mm_state *s, gs_ap acc, const gs_tile *a, int64_t ab, uint32_t sf,
                      unsigned tm, const gs_tile *b, int64_t bb, uint32_t mf, uint32_t n,
                      int64_t kt)
{
    unsigned tk = (unsigned)GS_MIN(s->TK, s->p->K - kt * s->TK);
    if (s->dr == 1) {
        gs_matmul(s->kb, acc, gs_tile_view(a, 0, tk, (uint32_t)(kt * ab) + sf, tm),
                  gs_tile_view(b, 0, tk, (uint32_t)(kt * bb) + mf, n), kt > 0);
        return;
    }
    unsigned ph = (tk + 1) / 2;
    gs_matmul_dr(s->kb, acc,
                 gs_tile_view2(a, 0, ph, (uint32_t)(2 * kt * ab) + sf, 2, tm, (uint32_t)ab),
                 gs_tile_view2(b, 0, ph, (uint32_t)(2 * kt * bb) + mf, 2, n, (uint32_t)bb), kt > 0);
}

static int64_t round_up(int64_t v, int64_t m)
{
    return (v + m - 1) / m * m;
}

/* PSUM groups of the pipelined schedule (see sched_blocked). */
static int64_t pipelined_group(const gs_caps *c)
{
    return GS_MIN(GS_MAX((int64_t)1, (int64_t)c->psum_banks / 2), (int64_t)GS_MAX_PSUM_GROUP);
}

static void sched_blocked(mm_state *s, int pipelined)
{
    const gs_mm_problem *p = s->p;
    gs_kb *kb = s->kb;
    const gs_caps *c = s->c;
    /* G: matmuls sharing one stationary tile back to back, one PSUM bank each, with a second
     * set of G banks so evacuation overlaps the next group's matmuls. */
    int64_t G = pipelined ? pipelined_group(c) : 1;
    unsigned nat = pipelined ? 2u : 1u; /* AT blocks (double-buffered when pipelined) */
    uint64_t out_bytes = (uint64_t)s->bufs * (uint64_t)(G * s->TN) * s->oes;
    uint64_t bias_bytes = p->bias ? 2u * gs_dtype_size(p->bias->dtype) : 0u;
    int64_t col = s->KT * s->dr * (int64_t)s->ies; /* bytes per partition per block column */
    int64_t avail = (int64_t)c->sbuf_partition_bytes - (int64_t)(out_bytes + bias_bytes);
    /* B gets up to half of what is left, AT the rest (nat blocks of it); the smallest block is
     * one tile, and a block larger than the problem is pointless */
    int64_t NB = s->nb_param > 0 ? round_up(s->nb_param, s->TN)
                                 : (avail > 0 ? avail / 2 / col : 0) / s->TN * s->TN;
    NB = GS_MIN(GS_MAX(NB, s->TN), round_up(p->N, s->TN));
    int64_t left = avail - NB * col;
    int64_t MB = s->mb_param > 0 ? round_up(s->mb_param, s->TM)
                                 : (left > 0 ? left / ((int64_t)nat * col) : 0) / s->TM * s->TM;
    MB = GS_MIN(GS_MAX(MB, s->TM), round_up(p->m_hi - p->m_lo, s->TM));
    G = GS_MIN(G, NB / s->TN);

    gs_pool *pbb = mk_pool(s, GS_MEM_SBUF, "b_block", 1, (uint64_t)(s->KT * s->dr * NB) * s->ies);
    gs_pool *pab =
        mk_pool(s, GS_MEM_SBUF, "at_block", nat, (uint64_t)(s->KT * s->dr * MB) * s->ies);
    gs_pool *po = mk_pool(s, GS_MEM_SBUF, "c", s->bufs, (uint64_t)(G * s->TN) * s->oes);
    gs_pool *pp = psum_pool(s, pipelined ? (unsigned)(2 * G) : s->bufs);
    unsigned eng_turn = 0;
    for (int64_t nb0 = 0; nb0 < p->N && gs_kb_ok(kb); nb0 += NB) {
        uint32_t nbw = (uint32_t)GS_MIN(NB, p->N - nb0);
        gs_tile bblk =
            gs_tile_alloc(pbb, s->in_dt, (unsigned)s->PK, (uint32_t)(s->KT * s->dr * NB));
        load_block(s, &bblk, NB, p->b, p->b_row0, nb0, nbw);
        for (int64_t mb0 = p->m_lo; mb0 < p->m_hi && gs_kb_ok(kb); mb0 += MB) {
            uint32_t mbw = (uint32_t)GS_MIN(MB, p->m_hi - mb0);
            gs_tile ablk =
                gs_tile_alloc(pab, s->in_dt, (unsigned)s->PK, (uint32_t)(s->KT * s->dr * MB));
            load_block(s, &ablk, MB, p->at, p->at_row0, mb0, mbw);
            for (uint32_t mi = 0; mi < mbw && gs_kb_ok(kb); mi += (uint32_t)s->TM) {
                unsigned tm = (unsigned)GS_MIN(s->TM, (int64_t)(mbw - mi));
                int64_t m0 = mb0 + mi;
                load_bias(s, m0, tm);
                /* one group = G output tiles [tm x TN] side by side along N */
                for (uint32_t ng = 0; ng < nbw && gs_kb_ok(kb); ng += (uint32_t)(G * s->TN)) {
                    uint32_t gw = (uint32_t)GS_MIN(G * s->TN, (int64_t)(nbw - ng));
                    int ntile = (int)((gw + s->TN - 1) / s->TN);
                    gs_tile acc[GS_MAX_PSUM_GROUP];
                    for (int g = 0; g < ntile; g++)
                        acc[g] = gs_tile_alloc(pp, GS_FP32, tm,
                                               (uint32_t)GS_MIN(s->TN, (int64_t)gw - g * s->TN));
                    /* the same stationary tile for every matmul of the group */
                    for (int64_t kt = 0; kt < s->KT && gs_kb_ok(kb); kt++)
                        for (int g = 0; g < ntile; g++)
                            kt_matmul(s, acc[g].ap, &ablk, MB, mi, tm, &bblk, NB,
                                      ng + (uint32_t)(g * s->TN), acc[g].free_elems, kt);
                    gs_tile out = gs_tile_alloc(po, s->out_dt, tm, gw);
                    for (int g = 0; g < ntile; g++) {
                        /* pipelined: spread evacuation over two engines */
                        gs_engine eng =
                            pipelined && (eng_turn++ & 1u) ? GS_ENG_SCALAR : GS_ENG_VECTOR;
                        evacuate(
                            s, gs_tile_view(&out, 0, tm, (uint32_t)(g * s->TN), acc[g].free_elems),
                            acc[g].ap, eng, tm);
                    }
                    store(s, m0, tm, nb0 + ng, gw, out.ap);
                }
            }
        }
    }
}

/* SBUF bytes per partition the schedule needs at its smallest blocks (one tile wide). */
static uint64_t min_sbuf_bytes(const mm_state *s, gs_mm_schedule sched, const gs_mm_problem *p)
{
    const uint64_t ies = s->ies, oes = s->oes, KT = (uint64_t)s->KT;
    const uint64_t TM = (uint64_t)s->TM, TN = (uint64_t)s->TN;
    uint64_t bias = p->bias ? 2u * gs_dtype_size(p->bias->dtype) : 0u;
    switch (sched) {
    case GS_MM_NAIVE:
        return bias + s->bufs * ((TM + TN) * ies + TN * oes);
    case GS_MM_HOISTED:
        return bias + KT * (TM + TN) * ies + s->bufs * TN * oes;
    default: {
        const int pipelined = sched == GS_MM_PIPELINED;
        const uint64_t G = pipelined ? (uint64_t)pipelined_group(s->c) : 1u;
        return bias + s->bufs * G * TN * oes + KT * TN * ies +
               (pipelined ? 2u : 1u) * KT * TM * ies;
    }
    }
}

void gs_mm_shard(int64_t M, int64_t tm, unsigned cores, unsigned core, int64_t *lo, int64_t *hi)
{
    int64_t tiles = (M + tm - 1) / tm;
    int64_t per = (tiles + (int64_t)cores - 1) / (int64_t)GS_MAX(cores, 1u);
    *lo = GS_MIN(M, (int64_t)core * per * tm);
    *hi = GS_MIN(M, *lo + per * tm);
}

gs_status gs_mm_build(gs_kb *kb, const gs_mm_problem *p, gs_mm_schedule sched, const int64_t *param)
{
    mm_state s;
    memset(&s, 0, sizeof s);
    s.kb = kb;
    s.c = gs_kb_caps(kb);
    s.p = p;
    s.in_dt = p->at->dtype;
    s.out_dt = p->c->dtype;
    s.ies = gs_dtype_size(s.in_dt);
    s.oes = gs_dtype_size(s.out_dt);
    if (!(s.c->matmul_dtypes & (1u << s.in_dt)) || !(s.c->matmul_dtypes & (1u << p->b->dtype)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul on this target",
                          gs_dtype_name(s.in_dt));
    if (p->m_lo >= p->m_hi) return gs_kb_status(kb); /* an SPMD core with no rows */
    s.TM = s.c->pe_cols;
    s.TK = s.c->pe_rows;
    s.TN = GS_MIN((int64_t)s.c->moving_free_max, (int64_t)(s.c->psum_bank_bytes / 4));
    if (param[GS_MM_P_TN] > 0) s.TN = GS_MIN(s.TN, param[GS_MM_P_TN]);
    if (s.TM <= 0 || s.TK <= 0 || s.TN <= 0)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: target has no tensor engine tiles");
    /* fp8 double row where the target has it (blocked schedules): K-tiles of 2 x pe_rows */
    s.dr = 1;
    if ((sched == GS_MM_BLOCKED || sched == GS_MM_PIPELINED) && s.c->double_row_k &&
        (s.c->double_row_dtypes & (1u << s.in_dt)) &&
        (s.c->double_row_dtypes & (1u << p->b->dtype))) {
        s.dr = 2;
        s.TK = s.c->double_row_k;
    }
    s.KT = (p->K + s.TK - 1) / s.TK;
    s.PK = s.dr == 1 ? GS_MIN(s.TK, p->K)
                     : GS_MIN((int64_t)s.c->pe_rows, (GS_MIN(s.TK, p->K) + 1) / 2);
    if (param[GS_MM_P_BUFS] > 64) return gs_kb_fail(kb, GS_ERR_INVALID, "bufs must be <= 64");
    s.bufs = param[GS_MM_P_BUFS] > 0 ? (unsigned)param[GS_MM_P_BUFS] : 2u;
    s.mb_param = param[GS_MM_P_MB];
    s.nb_param = param[GS_MM_P_NB];
    s.bias.ap.tensor = -1;
    /* Default tile width: shrink TN (512 -> 256 -> 128 -> 64) until the schedule's smallest
     * blocks fit SBUF, so a small-SBUF target runs the schedule with narrower tiles rather than
     * reporting does-not-fit. An explicit tn is taken as given. */
    if (param[GS_MM_P_TN] <= 0)
        while (s.TN > 64 && min_sbuf_bytes(&s, sched, p) > s.c->sbuf_partition_bytes)
            s.TN /= 2;
    if (sched == GS_MM_PIPELINED) {
        s.split_queues = s.c->dma_queues >= 2;
        s.q_store_n = GS_MAX(1u, s.c->dma_queues / 4);
    }
    if (p->bias) s.pbias = mk_pool(&s, GS_MEM_SBUF, "bias", 2, gs_dtype_size(p->bias->dtype));
    switch (sched) {
    case GS_MM_NAIVE:
        sched_naive(&s);
        break;
    case GS_MM_HOISTED:
        sched_hoisted(&s);
        break;
    case GS_MM_BLOCKED:
        sched_blocked(&s, 0);
        break;
    case GS_MM_PIPELINED:
        sched_blocked(&s, 1);
        break;
    default:
        return gs_kb_fail(kb, GS_ERR_INVALID, "matmul: no schedule %d", (int)sched);
    }
    /* SBUF/PSUM go back to the caller (a batched kernel calls this once per batch); later
     * reuse of the space is ordered after these instructions by the builder's dependencies */
    gs_pool_release(kb, s.first);
    return gs_kb_status(kb);
}

/* ---- the matmul kernel ---- */

enum { V_NAIVE, V_HOISTED, V_BLOCKED, V_PIPELINED, V_SPMD };

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
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
    gs_mm_schedule sched = (gs_mm_schedule)a->variant;
    if (a->variant == V_SPMD) {
        gs_mm_shard(p.M, c->pe_cols, c->cores, c->core_id, &p.m_lo, &p.m_hi);
        sched = GS_MM_PIPELINED;
    }
    return gs_mm_build(kb, &p, sched, a->param);
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
    } spec[3] = {
        {"AT", GS_TENSOR_INPUT, K, M}, {"B", GS_TENSOR_INPUT, K, N}, {"C", GS_TENSOR_OUTPUT, M, N}};
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
    gs_mm_reference(a->dims[0], a->dims[1], a->dims[2], in[0], in[1], out[0]);
}

void gs_mm_reference(int64_t M, int64_t K, int64_t N, const double *at, const double *b, double *c)
{
    gs_ref_gemm(1, 0, M, N, K, at, M, b, N, c, N);
}

static double reduction_len(const gs_kernel_args *a)
{
    return (double)a->dims[1];
}

const gs_kernel_def gs_kernel_matmul = {
    .name = "matmul",
    .summary = "C = A x B (A given as AT [K x M]); optimisation ladder + SPMD",
    .n_dims = 3,
    .dim_names = {"M", "K", "N"},
    .n_variants = 5,
    .variants = {"naive", "hoisted", "blocked", "pipelined", "spmd"},
    .spmd_variants = 1u << V_SPMD,
    .n_params = GS_MM_N_PARAMS,
    .param_names = {"tn", "bufs", "mb", "nb"},
    .param_help = {"moving free size per matmul (0: largest a PSUM bank and the engine allow)",
                   "buffers per streamed pool (0: 2 = double buffering)",
                   "blocked/pipelined: AT block columns, rounded up to TM (0: what SBUF holds)",
                   "blocked/pipelined: B block columns, rounded up to TN (0: half of SBUF)"},
    .check_shapes = {{3, {128, 128, 512}},
                     {3, {200, 300, 700}},
                     {3, {1, 1, 1}},
                     {3, {1, 8191, 257}},
                     {3, {131, 257, 263}}},
    .perf_shapes = {{3, {4096, 4096, 4096}}, {3, {8192, 8192, 8192}}, {3, {2048, 8192, 2048}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16) | (1u << GS_FP8_E4M3),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .reduction_len = reduction_len,
};
