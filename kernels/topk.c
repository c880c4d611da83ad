/*
 * topk.c - the K largest values of each row and their column indices: X [R x C] ->
 * V [R x K] (X's dtype, descending) and I [R x K] (int32), for sampling over a vocabulary
 * (few rows, C = 32k-128k) and mixture-of-experts routing (thousands of tokens, 64-256 experts).
 *
 * Built on the vector engine's top-k instructions (gs_max8, gs_find_index8, gs_match_replace8;
 * hwmodels/src/ops_topk.c). One round on a tile of rows: max8 gives the 8 largest values per
 * partition, find_index8 their positions, match_replace8 overwrites them with -inf so the next
 * round finds the next 8; ceil(K/8) rounds, the last one trimmed to K. Every instruction reads
 * the whole tile: a round is 3 passes over it.
 *
 * Tie rule (the check's, and the reference's): equal values come out in the order of their
 * column (a stable sort by descending value). The instructions give it: find_index8 pairs
 * duplicates of one round with ascending positions and match_replace8 removes the same first
 * occurrences, so the next round continues with the later ones. (match_replace8's own dst_idx
 * pairs duplicates with descending positions, so it cannot replace find_index8 here without
 * breaking the rule: the third pass is the price of a defined tie order.)
 *
 * Variants:
 *  - rounds: rows on partitions, a whole row per tile (C <= 16384, the most one max8 reads:
 *    unsupported above), the rounds over the row. A tile of 8 rows uses 8 of 128 lanes.
 *  - two_stage: each row split into NC chunks of L columns, and the chunks of a block of rows
 *    spread over the partitions (chunk j of row r on partition j R_t + r): stage 1 runs the
 *    rounds on every chunk at once (ceil(K/8) 8 candidates per chunk, with local indices),
 *    stage 2 gathers each row's NC x K8 candidates onto its partition (SBUF-to-SBUF DMA) and
 *    runs the rounds over them; a candidate's position maps back to its column through a
 *    one-hot product over the candidates (no per-partition gather in the model), 5 K NC K8
 *    element operations per row. Few long rows (sampling) gain lanes and shorter passes; rows
 *    longer than 16384 need it. NC (param `chunks`, 0: derived) balances the stage-1 passes
 *    3 K8/8 C/NC against the stage-2 work NC K8 (3 K8/8 + 5 K), within the lanes free for the
 *    rows (P / R_t chunks per row) and above C / 16384; with one chunk it is `rounds`.
 *  - rounds places `rows` (T) consecutive rows on each partition when there are more than P
 *    (MoE routing: 4096 tokens), so one DMA row is T C elements instead of C: a row of 64
 *    bf16 experts is 128 bytes, below the DMA's efficient chunk, and T = 16 makes it 2 KiB.
 * Params: bufs (input tiles in flight, default 2), chunks (two_stage only), rows (rounds only).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel_util.h"
#include "gs/kernel.h"

enum { TK_ROUNDS, TK_TWO_STAGE };

static gs_ap view2(const gs_tile *t, unsigned np, uint32_t off, uint32_t n0, uint32_t n1,
                   int32_t s0, int32_t s1)
{
    gs_ap v = gs_tile_view(t, 0, np, off, 1);
    v.ndim = 2;
    v.shape[0] = n0;
    v.shape[1] = n1;
    v.stride[0] = s0;
    v.stride[1] = s1;
    return v;
}

/* The rounds over x [np x F] (destroyed): values into v [np x 8 rounds], indices into idx. */
static void rounds(gs_kb *kb, const gs_tile *x, unsigned np, uint32_t F, unsigned n,
                   const gs_tile *v, const gs_tile *idx)
{
    gs_ap xa = gs_tile_view(x, 0, np, 0, F);
    for (unsigned r = 0; r < n && gs_kb_ok(kb); r++) {
        gs_ap vr = gs_tile_view(v, 0, np, 8 * r, 8);
        gs_max8(kb, vr, xa);
        gs_find_index8(kb, gs_tile_view(idx, 0, np, 8 * r, 8), xa, vr);
        if (r + 1 < n) gs_match_replace8(kb, xa, NULL, xa, vr, -INFINITY);
    }
}

/* One block of rows: np partitions x T rows each (row r0 + p T + t on partition p). */
static void rounds_block(gs_kb *kb, const gs_kernel_args *a, gs_pool *px, gs_pool *pv, gs_pool *pi,
                         int64_t r0, unsigned np, unsigned T)
{
    const gs_tensor *X = &a->t[0], *V = &a->t[1], *I = &a->t[2];
    const int64_t C = a->dims[1], K = a->dims[2];
    const unsigned n = (unsigned)((K + 7) / 8), K8 = 8 * n;
    const uint32_t shape_x[1] = {(uint32_t)(T * C)}, shape_o[1] = {(uint32_t)(T * K)};
    const int64_t unit[1] = {1};
    gs_tile x = gs_tile_alloc(px, a->dtype, np, (uint32_t)(T * C));
    gs_dma_copy(kb, x.ap, gs_hbm_ap(X, r0 * C, np, T * C, 1, shape_x, unit), -1);
    gs_tile v = gs_tile_alloc(pv, a->dtype, np, T * K8),
            idx = gs_tile_alloc(pi, GS_INT32, np, T * K8);
    for (unsigned t = 0; t < T && gs_kb_ok(kb); t++) {
        gs_tile xt = x, vt = v, it = idx; /* row t of each partition: a window of the tiles */
        xt.ap = gs_tile_view(&x, 0, np, (uint32_t)(t * C), (uint32_t)C);
        xt.free_elems = (uint32_t)C;
        vt.ap = gs_tile_view(&v, 0, np, t * K8, K8);
        it.ap = gs_tile_view(&idx, 0, np, t * K8, K8);
        vt.free_elems = it.free_elems = K8;
        rounds(kb, &xt, np, (uint32_t)C, n, &vt, &it);
    }
    /* the first K of each row's K8 slots */
    gs_ap vs = view2(&v, np, 0, T, (uint32_t)K, (int32_t)K8, 1);
    gs_ap is = view2(&idx, np, 0, T, (uint32_t)K, (int32_t)K8, 1);
    gs_dma_copy(kb, gs_hbm_ap(V, r0 * K, np, T * K, 1, shape_o, unit), vs, -1);
    gs_dma_copy(kb, gs_hbm_ap(I, r0 * K, np, T * K, 1, shape_o, unit), is, -1);
}

/* Whole rows per tile; `rows` rows per partition (T) in the blocks of P T rows, then the rest
 * one row per partition. */
static gs_status build_rounds(gs_kb *kb, const gs_kernel_args *a, unsigned bufs)
{
    const gs_caps *c = gs_kb_caps(kb);
    const int64_t R = a->dims[0], C = a->dims[1], K = a->dims[2];
    const unsigned n = (unsigned)((K + 7) / 8), P = c->partitions;
    const size_t es = gs_dtype_size(a->dtype);
    if (C > (int64_t)GS_TOPK8_FREE_MAX)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: rounds holds a row in one max8, which reads at most %u "
                          "elements (C = %" PRId64 "); two_stage splits the row",
                          GS_TOPK8_FREE_MAX, C);
    if (C > (int64_t)c->max_free_sbuf)
        return gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                          "does not fit: a row of %" PRId64 " elements exceeds an instruction's "
                          "%u (caps.max_free_sbuf); two_stage splits the row",
                          C, c->max_free_sbuf);
    /* default T: as many rows per partition as the rows fill, up to 16 and a quarter of SBUF
     * for the input buffers; several rows per partition make each DMA row T C elements long */
    const int64_t fit = (int64_t)(c->sbuf_partition_bytes / 4 / (bufs * (uint64_t)C * es));
    const int64_t dflt = GS_MAX((int64_t)1, GS_MIN(GS_MIN(R / P, (int64_t)16), fit));
    const int64_t T = gs_kernel_param(a, "rows", dflt);
    if (T <= 0 || T > 64)
        return gs_kb_fail(kb, GS_ERR_INVALID, "topk: rows must be in 1..64, got %" PRId64, T);
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", bufs, (uint64_t)(T * C) * es);
    gs_pool *pv = gs_pool_create(kb, GS_MEM_SBUF, "v", 2, 8ull * n * (uint64_t)T * es);
    gs_pool *pi = gs_pool_create(kb, GS_MEM_SBUF, "idx", 2, 8ull * n * (uint64_t)T * 4);
    int64_t r0 = 0;
    for (; T > 1 && r0 + (int64_t)P * T <= R && gs_kb_ok(kb); r0 += (int64_t)P * T)
        rounds_block(kb, a, px, pv, pi, r0, P, (unsigned)T);
    for (; r0 < R && gs_kb_ok(kb); r0 += P)
        rounds_block(kb, a, px, pv, pi, r0, (unsigned)GS_MIN((int64_t)P, R - r0), 1);
    return gs_kb_status(kb);
}

/* Chunks per row for two_stage (see the header): the count minimising the element operations
 * per row, 3 n C / NC + NC K8 (3 n + 5 K), within [ceil(C / lmax), max(that, lanes)]. */
static int64_t pick_chunks(int64_t C, int64_t K, unsigned n, int64_t lanes, int64_t lmax)
{
    const int64_t K8 = 8 * (int64_t)n, lo = (C + lmax - 1) / lmax;
    const int64_t hi = GS_MAX(lo, lanes);
    int64_t best = lo;
    double best_cost = -1.0;
    for (int64_t nc = lo; nc <= hi; nc++) {
        const double cost = 3.0 * n * (double)C / (double)nc +
                            (double)nc * (double)K8 * (3.0 * n + 5.0 * (double)K);
        if (best_cost < 0.0 || cost < best_cost) best = nc, best_cost = cost;
    }
    return best;
}

static gs_status build_two_stage(gs_kb *kb, const gs_kernel_args *a, unsigned bufs)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *V = &a->t[1], *I = &a->t[2];
    const int64_t R = a->dims[0], C = a->dims[1], K = a->dims[2];
    const unsigned n = (unsigned)((K + 7) / 8), K8 = 8 * n, P = c->partitions;
    const size_t es = gs_dtype_size(a->dtype);
    const unsigned rt = (unsigned)GS_MIN((int64_t)P, R); /* rows per block */
    const unsigned G = P / rt;                           /* chunks of a row per slab */
    /* a chunk: at most what one max8 reads, and the input pool at most half of SBUF */
    /* what one instruction reads: the ISA's 16384 and the engine's limit */
    const int64_t lim = GS_MIN((int64_t)GS_TOPK8_FREE_MAX, (int64_t)c->max_free_sbuf);
    const int64_t lmax =
        GS_MAX((int64_t)1, GS_MIN(lim, (int64_t)(c->sbuf_partition_bytes / 2 / (bufs * es))));
    int64_t nc = gs_kernel_param(a, "chunks", 0);
    /* a plan the caller chose is theirs to fix; a derived one is the target's capacity */
    const gs_status too_big = nc > 0 ? GS_ERR_INVALID : GS_ERR_DOES_NOT_FIT;
    if (nc < 0 || nc > C / 8)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "topk: chunks must be in 1..C/8 = %" PRId64 " (a chunk holds at least "
                          "the 8 elements max8 reads), got %" PRId64,
                          C / 8, nc);
    if (nc == 0) nc = C < 16 ? 1 : pick_chunks(C, K, n, G, lmax);
    int64_t L = GS_MAX((C + nc - 1) / nc, (int64_t)8);
    nc = (C + L - 1) / L;
    if (L > lmax)
        return gs_kb_fail(kb, too_big,
                          "%schunks of %" PRId64 " elements exceed the %" PRId64
                          " one max8 reads and the input pool holds (caps.sbuf_partition_bytes)",
                          too_big == GS_ERR_INVALID ? "topk: " : "does not fit: ", L, lmax);
    if (nc == 1) return build_rounds(kb, a, bufs);
    const int64_t llast = C - (nc - 1) * L;
    const int64_t M = nc * K8; /* candidates per row */
    const int64_t slabs = (nc + G - 1) / G;
    if (M > lim)
        return gs_kb_fail(kb, too_big,
                          "%s%" PRId64 " candidates per row (%" PRId64 " chunks x %u) exceed "
                          "the %" PRId64 " one instruction reads",
                          too_big == GS_ERR_INVALID ? "topk: " : "does not fit: ", M, nc, K8, lim);
    /* one-hot lookup blocks: kb_slots output slots x M candidates, 16 KiB of fp32 per partition */
    const unsigned kslots =
        (unsigned)GS_MAX((int64_t)1, GS_MIN((int64_t)K8, GS_MIN((int64_t)4096, lim) / M));
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", bufs, (uint64_t)L * es);
    gs_pool *p1 = gs_pool_create(kb, GS_MEM_SBUF, "stage1", 4, (uint64_t)K8 * 4);
    gs_pool *pc = gs_pool_create(kb, GS_MEM_SBUF, "cand", 2, (uint64_t)M * 4);
    gs_pool *pf = gs_pool_create(kb, GS_MEM_SBUF, "cand_f32", 2, (uint64_t)M * 4);
    gs_pool *pq = gs_pool_create(kb, GS_MEM_SBUF, "iota", 1, (uint64_t)M * 4);
    gs_pool *po = gs_pool_create(kb, GS_MEM_SBUF, "out", 4, (uint64_t)K8 * 4);
    gs_pool *ph = gs_pool_create(kb, GS_MEM_SBUF, "onehot", 2, (uint64_t)kslots * M * 4);
    gs_tile iota = gs_tile_alloc(pq, GS_FP32, rt, (uint32_t)M);
    gs_iota(kb, iota.ap, 0, 0, 1);
    for (int64_t r0 = 0; r0 < R && gs_kb_ok(kb); r0 += rt) {
        const unsigned nr = (unsigned)GS_MIN((int64_t)rt, R - r0);
        gs_tile cv = gs_tile_alloc(pc, a->dtype, nr, (uint32_t)M);
        gs_tile ci = gs_tile_alloc(pc, GS_INT32, nr, (uint32_t)M);
        /* stage 1: NC chunks per row, G of them per slab of partitions */
        for (int64_t s = 0; s < slabs && gs_kb_ok(kb); s++) {
            const int64_t j0 = s * G, nj = GS_MIN((int64_t)G, nc - j0);
            const unsigned np = (unsigned)nj * nr;
            gs_tile x = gs_tile_alloc(px, a->dtype, np, (uint32_t)L);
            if (j0 + nj == nc && llast < L) /* the short last chunk: -inf past its end */
                gs_memset(kb, GS_ENG_VECTOR,
                          gs_tile_view(&x, 0, np, (uint32_t)llast, (uint32_t)(L - llast)),
                          -INFINITY);
            for (int64_t j = j0; j < j0 + nj; j++) {
                const uint32_t len = (uint32_t)(j + 1 == nc ? llast : L);
                gs_dma_copy(kb, gs_tile_view(&x, (unsigned)(j - j0) * nr, nr, 0, len),
                            gs_hbm_rows(X, r0, nr, j * L, len), -1);
            }
            gs_tile v = gs_tile_alloc(p1, a->dtype, np, K8),
                    idx = gs_tile_alloc(p1, GS_INT32, np, K8);
            rounds(kb, &x, np, (uint32_t)L, n, &v, &idx);
            for (int64_t j = j0; j < j0 + nj; j++) {
                const unsigned p0 = (unsigned)(j - j0) * nr;
                gs_dma_copy(kb, gs_tile_view(&cv, 0, nr, (uint32_t)(j * K8), K8),
                            gs_tile_view(&v, p0, nr, 0, K8), -1);
                gs_dma_copy(kb, gs_tile_view(&ci, 0, nr, (uint32_t)(j * K8), K8),
                            gs_tile_view(&idx, p0, nr, 0, K8), -1);
            }
        }
        /* the candidates' columns: local index + the chunk's first column */
        gs_tile cf = gs_tile_alloc(pf, GS_FP32, nr, (uint32_t)M);
        for (int64_t j = 0; j < nc; j++)
            gs_tensor_scalar(kb, GS_ENG_VECTOR, gs_tile_view(&cf, 0, nr, (uint32_t)(j * K8), K8),
                             gs_tile_view(&ci, 0, nr, (uint32_t)(j * K8), K8), GS_ALU_ADD,
                             gs_imm((float)(j * L)), GS_ALU_BYPASS, gs_imm(0.0f));
        /* stage 2: the rounds over the candidates; pos = positions among them */
        gs_tile v = gs_tile_alloc(po, a->dtype, nr, K8), pos = gs_tile_alloc(po, GS_INT32, nr, K8);
        rounds(kb, &cv, nr, (uint32_t)M, n, &v, &pos);
        /* column of slot k = sum_m (m == pos_k) cf_m, kslots slots per instruction */
        gs_tile col = gs_tile_alloc(po, GS_INT32, nr, K8);
        for (unsigned k0 = 0; k0 < (unsigned)K && gs_kb_ok(kb); k0 += kslots) {
            const unsigned nk = (unsigned)GS_MIN((int64_t)kslots, K - k0);
            gs_tile oh = gs_tile_alloc(ph, GS_FP32, nr, nk * (uint32_t)M);
            gs_ap ohv = view2(&oh, nr, 0, nk, (uint32_t)M, (int32_t)M, 1);
            gs_tensor_tensor(kb, ohv, view2(&iota, nr, 0, nk, (uint32_t)M, 0, 1),
                             view2(&pos, nr, k0, nk, (uint32_t)M, 1, 0), GS_ALU_EQ);
            gs_tensor_tensor(kb, ohv, ohv, view2(&cf, nr, 0, nk, (uint32_t)M, 0, 1), GS_ALU_MUL);
            gs_tensor_reduce(kb, gs_tile_view(&col, 0, nr, k0, nk), ohv, GS_ALU_ADD, 1);
        }
        gs_dma_copy(kb, gs_hbm_rows(V, r0, nr, 0, (uint32_t)K),
                    gs_tile_view(&v, 0, nr, 0, (uint32_t)K), -1);
        gs_dma_copy(kb, gs_hbm_rows(I, r0, nr, 0, (uint32_t)K),
                    gs_tile_view(&col, 0, nr, 0, (uint32_t)K), -1);
    }
    return gs_kb_status(kb);
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const uint64_t need =
        (1ull << GS_OP_MAX8) | (1ull << GS_OP_FIND_INDEX8) | (1ull << GS_OP_MATCH_REPLACE8);
    if ((c->ops & need) != need)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: top-k needs the vector engine's max8, find_index8 and "
                          "match_replace8 (caps.ops)");
    if (a->variant == TK_TWO_STAGE && !c->has_gpsimd)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: two_stage numbers the candidates with iota (GpSimd)");
    const int64_t bufs = gs_kernel_param(a, "bufs", 2);
    if (bufs <= 0 || bufs > 16)
        return gs_kb_fail(kb, GS_ERR_INVALID, "topk: bufs must be in 1..16, got %" PRId64, bufs);
    if (a->variant == TK_ROUNDS && gs_kernel_param(a, "chunks", 0) != 0)
        return gs_kb_fail(kb, GS_ERR_INVALID, "topk: chunks is a two_stage parameter");
    if (a->variant == TK_TWO_STAGE && gs_kernel_param(a, "rows", 0) != 0)
        return gs_kb_fail(kb, GS_ERR_INVALID, "topk: rows is a rounds parameter");
    return a->variant == TK_ROUNDS ? build_rounds(kb, a, (unsigned)bufs)
                                   : build_two_stage(kb, a, (unsigned)bufs);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    const int64_t R = a->dims[0], C = a->dims[1], K = a->dims[2];
    if (R <= 0 || C < 8 || K <= 0 || K > C)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "topk: needs R >= 1, C >= 8 (max8 reads at least 8 elements) and "
                            "1 <= K <= C (got %" PRId64 " x %" PRId64 ", K %" PRId64 ")",
                            R, C, K),
               -1;
    const char *names[3] = {"X", "V", "I"};
    for (int i = 0; i < 3; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].kind = i == 0 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = i == 2 ? GS_INT32 : a->dtype;
        t[i].ndim = 2;
        t[i].shape[0] = R;
        t[i].shape[1] = i == 0 ? C : K;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 3;
}

/* Row r of the reference: a stable sort by descending value (equal values by column). */
typedef struct tk_item {
    double v;
    int64_t c;
} tk_item;

static int tk_cmp(const void *pa, const void *pb)
{
    const tk_item *x = pa, *y = pb;
    if (x->v != y->v) return x->v > y->v ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    const int64_t R = a->dims[0], C = a->dims[1], K = a->dims[2];
    tk_item *row = malloc((size_t)C * sizeof *row);
    if (!row) return; /* the outputs keep their NaN fill: the check fails */
    for (int64_t r = 0; r < R; r++) {
        for (int64_t i = 0; i < C; i++)
            row[i] = (tk_item){in[0][r * C + i], i};
        qsort(row, (size_t)C, sizeof *row, tk_cmp);
        for (int64_t k = 0; k < K; k++) {
            out[0][r * K + k] = row[k].v;
            out[1][r * K + k] = (double)row[k].c;
        }
    }
    free(row);
}

/* Exact: the values are copies of inputs (max8 converts to fp32 and back to the same dtype,
 * which is exact) and the indices integers; the tie rule makes both unique. */
static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    (void)in;
    (void)ref;
    const int64_t n = a->dims[0] * a->dims[2];
    for (int j = 0; j < 2; j++)
        for (int64_t e = 0; e < n; e++)
            bound[j][e] = 0.0;
}

const gs_kernel_def gs_kernel_topk = {
    .name = "topk",
    .summary = "the K largest values per row of X [R x C] (V [R x K], descending) and their "
               "columns (I [R x K] int32)",
    .n_dims = 3,
    .dim_names = {"R", "C", "K"},
    .n_variants = 2,
    .variants = {"rounds", "two_stage"},
    .n_params = 3,
    .param_names = {"bufs", "chunks", "rows"},
    .param_help = {"input tiles in flight (default 2)",
                   "two_stage: chunks per row (0: derived from the lanes and the cost)",
                   "rounds: rows per partition (0: R / partitions, <= 16, as SBUF allows)"},
    .check_shapes = {{3, {128, 1000, 16}},
                     {3, {130, 97, 13}},
                     {3, {3, 17, 5}},
                     {3, {1, 8192, 64}},
                     {3, {1, 8191, 24}},
                     /* 4 rows per partition in 512, then 8 rows one per partition; C = K */
                     {3, {520, 8, 8}},
                     {3, {200, 777, 40}},
                     {3, {8, 4099, 8}}},
    .perf_shapes = {{3, {8, 128256, 64}},
                    {3, {8, 32000, 8}},
                    {3, {128, 32000, 64}},
                    {3, {4096, 64, 8}},
                    {3, {4096, 256, 8}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
