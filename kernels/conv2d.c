/*
 * conv2d.c - 2-D convolution (cross-correlation, as in every ML framework), stride S, zero
 * padding P on each side:
 *   Y[co][n][oh][ow] = sum_{kh, kw < K} sum_{ci < Cin} Wt[(kh K + kw) Cin + ci][co]
 *                                         * X[ci][n][oh S - P + kh][ow S - P + kw]
 * (terms outside the image are zero), OH = (H + 2P - K) / S + 1, OW likewise.
 * Dims N x Cin x H x W x Cout x K x S x pad: pad 1 is "valid" (P = 0), pad 2 is "same"
 * (P = (K - 1) / 2, K odd; OH = ceil(H / S)), the two paddings of ResNet-class networks.
 * Layouts, channels first so the contraction Cin lies on partitions for the tensor engine:
 *   X  [Cin x N*H*W]        channel rows, then image, row, column
 *   Wt [K*K*Cin x Cout]     one [Cin x Cout] block per tap (kh, kw), tap-major: each block is
 *                           the stationary operand of one matmul
 *   Y  [Cout x N*OH*OW]
 *
 * Tiles. An output tile is [ni images x nr rows x nc columns] of one Cout block (at most
 * caps.pe_cols channels on its PSUM partitions), at most one PSUM bank of fp32 and
 * caps.moving_free_max columns: nc = min(OW, that), nr = min(OH, that / nc), and several whole
 * images per tile when one image is smaller (ni = that / (OH OW), e.g. 2 of 14 x 14). Its input
 * is a band of the (nr - 1) S + K rows it reads (whole images when ni > 1) of each Cin block of
 * at most caps.pe_rows channels, loaded once (contiguous runs) and shared by every Cout block
 * and column block; bands are buffered `bufs` deep (default 4), so the next band loads during this
 * one's matmuls. The weights are loaded once and stay resident (every tap of every Cin block: K^2
 * ceil(Cin / pe_rows) Cout elements per partition).
 *
 * Every output tile is one PSUM accumulation group of K^2 ceil(Cin / pe_rows) matmuls, one per
 * (Cin block, tap). Padding is never materialised: a tap whose window leaves the image for some
 * of the tile's outputs accumulates only into the sub-rectangle [rows' x cols'] where it is
 * inside (strided 3-D views of the PSUM tile and of the band); the first matmul of the group
 * (accumulate = 0, it defines the whole tile) is the tap (kh, kw) = (P, P), which is inside the
 * image for every output when 2P <= K - 1 (row oh S - P + P = oh S >= 0, and
 * (OH - 1) S + P <= H - 1 since (OH - 1) S <= H + 2P - K), true of both paddings.
 *
 * Variants:
 *  - shifted: each matmul's moving operand is a strided view into the band,
 *    [ni, rows', cols'] with strides (band image, S W, S) starting at the tap's offset; no copy.
 *  - im2col: the naive baseline: for each (tile, Cin block) the K^2 shifted windows are first
 *    copied into a contiguous column tile [cp x K^2 ntile] (tensor_copy, alternating between the
 *    vector and scalar engines; zeroed first where a tap is partly outside the image), then the
 *    same matmuls read contiguous moving operands. K^2 ntile extra element reads and writes per
 *    tile and partition on the vector/scalar engines, K^2 times the band's SBUF footprint.
 * Evacuation (PSUM -> SBUF in the dtype) alternates between the vector and scalar engines; loads
 * and stores use disjoint DMA queues.
 *
 * What the cost model charges (hwmodels/src/cost.c, tensor_cycles): a matmul costs
 * max(min(stationary_load, M), N / rate) cycles whatever the moving operand's strides, so the
 * shifted views are as cheap as contiguous ones; the builder accepts any in-tile view of up to
 * GS_AP_MAX_DIMS free dims as the moving operand and any one-bank view as its PSUM output.
 */
#include "gs/kernel.h"
#include "kernel_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

enum { CV_SHIFTED, CV_IM2COL };
enum { CV_VALID = 1, CV_SAME = 2 }; /* the pad dim */

typedef struct cv_dims {
    int64_t N, Cin, H, W, Cout, K, S, pad, P, OH, OW;
} cv_dims;

static cv_dims cv_get(const gs_kernel_args *a)
{
    cv_dims d;
    d.N = a->dims[0];
    d.Cin = a->dims[1];
    d.H = a->dims[2];
    d.W = a->dims[3];
    d.Cout = a->dims[4];
    d.K = a->dims[5];
    d.S = a->dims[6];
    d.pad = a->dims[7];
    d.P = d.pad == CV_SAME ? (d.K - 1) / 2 : 0;
    d.OH = d.S > 0 ? (d.H + 2 * d.P - d.K) / d.S + 1 : 0;
    d.OW = d.S > 0 ? (d.W + 2 * d.P - d.K) / d.S + 1 : 0;
    return d;
}

/* A view of np partitions of tile t starting `off` elements in: nd free dims (strides in
 * elements), with dims of size 1 dropped and contiguous neighbours merged, so a DMA of it
 * sees its longest contiguous runs. */
static gs_ap view(const gs_tile *t, unsigned np, int64_t off, int nd, const uint32_t *shape,
                  const int32_t *stride)
{
    gs_ap v = t->ap;
    v.part_count = np;
    v.offset = t->ap.offset + off * (int64_t)gs_dtype_size(t->ap.dtype);
    int n = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 1) continue;
        if (n > 0 && v.stride[n - 1] == (int32_t)shape[i] * stride[i]) {
            v.shape[n - 1] *= shape[i];
            v.stride[n - 1] = stride[i];
            continue;
        }
        v.shape[n] = shape[i];
        v.stride[n] = stride[i];
        n++;
    }
    if (n == 0) {
        v.shape[0] = 1;
        v.stride[0] = 1;
        n = 1;
    }
    v.ndim = (uint8_t)n;
    return v;
}

/* The same for an HBM tensor (element offset, partition stride). */
static gs_ap hbm_view(const gs_tensor *t, int64_t off, unsigned np, int64_t pstride, int nd,
                      const uint32_t *shape, const int64_t *stride)
{
    uint32_t sh[GS_AP_MAX_DIMS];
    int64_t st[GS_AP_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 1) continue;
        if (n > 0 && st[n - 1] == (int64_t)shape[i] * stride[i]) {
            sh[n - 1] *= shape[i];
            st[n - 1] = stride[i];
            continue;
        }
        sh[n] = shape[i];
        st[n] = stride[i];
        n++;
    }
    if (n == 0) {
        sh[0] = 1;
        st[0] = 1;
        n = 1;
    }
    return gs_hbm_ap(t, off, np, pstride, n, sh, st);
}

/* Output positions o in [o0, o0 + no) whose input index o S - P + k lies in [0, L): the
 * sub-range [*lo, *hi) (empty when *lo >= *hi). */
static void tap_range(int64_t o0, int64_t no, int64_t S, int64_t P, int64_t k, int64_t L,
                      int64_t *lo, int64_t *hi)
{
    int64_t a = P - k > 0 ? (P - k + S - 1) / S : 0;              /* o S - P + k >= 0 */
    int64_t b = L - 1 + P - k >= 0 ? (L - 1 + P - k) / S + 1 : 0; /* o S - P + k <= L - 1 */
    *lo = GS_MAX(o0, a);
    *hi = GS_MIN(o0 + no, b);
}

typedef struct cv_tile {
    int64_t n0, oh0, oc0;
    uint32_t ni, nr, nc;
    int64_t ih0;    /* first input row of the band */
    uint32_t brows; /* rows in the band */
} cv_tile;

/* The moving/source window of tap (kh, kw) for the tile's outputs, restricted to where the tap
 * is inside the image: band view, PSUM/column-tile element offset and shape. Returns 0 when the
 * tap touches none of the tile's outputs. */
typedef struct cv_win {
    int64_t src_off, dst_off;
    uint32_t shape[3];
    int32_t src_stride[3], dst_stride[3];
    int full; /* covers the whole tile */
} cv_win;

static int window(const cv_dims *d, const cv_tile *t, int64_t kh, int64_t kw, cv_win *w)
{
    int64_t r0, r1, c0, c1;
    tap_range(t->oh0, t->nr, d->S, d->P, kh, d->H, &r0, &r1);
    tap_range(t->oc0, t->nc, d->S, d->P, kw, d->W, &c0, &c1);
    if (r0 >= r1 || c0 >= c1) return 0;
    w->full = r0 == t->oh0 && r1 == t->oh0 + t->nr && c0 == t->oc0 && c1 == t->oc0 + t->nc;
    w->shape[0] = t->ni;
    w->shape[1] = (uint32_t)(r1 - r0);
    w->shape[2] = (uint32_t)(c1 - c0);
    w->src_off = (r0 * d->S - d->P + kh - t->ih0) * d->W + (c0 * d->S - d->P + kw);
    w->src_stride[0] = (int32_t)(t->brows * d->W);
    w->src_stride[1] = (int32_t)(d->S * d->W);
    w->src_stride[2] = (int32_t)d->S;
    w->dst_off = (r0 - t->oh0) * t->nc + (c0 - t->oc0);
    w->dst_stride[0] = (int32_t)(t->nr * t->nc);
    w->dst_stride[1] = (int32_t)t->nc;
    w->dst_stride[2] = 1;
    return 1;
}

/* The j-th tap of an accumulation group: the tap (P, P) first (it covers the whole tile, so its
 * accumulate = 0 defines every element), then the others in order. */
static int64_t tap_order(const cv_dims *d, int64_t j)
{
    const int64_t kfirst = d->P * d->K + d->P;
    return j == 0 ? kfirst : (j <= kfirst ? j - 1 : j);
}

/* Zero the part of tap block `base` of an im2col column tile that window w (the tap's inside
 * part) leaves out: the rows above and below it, and left and right of it in its rows. */
static void zero_outside(gs_kb *kb, gs_engine eng, const gs_tile *col, unsigned cp, int64_t base,
                         const cv_tile *t, const cv_win *w)
{
    const uint32_t ra = (uint32_t)(w->dst_off / t->nc), ca = (uint32_t)(w->dst_off % t->nc);
    const uint32_t rb = ra + w->shape[1], cb = ca + w->shape[2];
    const int32_t st[3] = {(int32_t)(t->nr * t->nc), (int32_t)t->nc, 1};
    const uint32_t part[4][3] = {{t->ni, ra, t->nc},
                                 {t->ni, t->nr - rb, t->nc},
                                 {t->ni, rb - ra, ca},
                                 {t->ni, rb - ra, t->nc - cb}};
    const int64_t off[4] = {0, (int64_t)rb * t->nc, (int64_t)ra * t->nc, (int64_t)ra * t->nc + cb};
    for (int i = 0; i < 4; i++)
        if (part[i][1] > 0 && part[i][2] > 0)
            gs_memset(kb, eng, view(col, cp, base + off[i], 3, part[i], st), 0.0f);
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *Wt = &a->t[1], *Y = &a->t[2];
    const cv_dims d = cv_get(a);
    const int im2col = a->variant == CV_IM2COL;
    const size_t es = gs_dtype_size(a->dtype);
    int64_t bufs = gs_kernel_param(a, "bufs", 4);
    if (bufs <= 0 || bufs > 16)
        return gs_kb_fail(kb, GS_ERR_INVALID, "conv2d: bufs must be in 1..16 (got %" PRId64 ")",
                          bufs);
    if (!(c->matmul_dtypes & (1u << a->dtype)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul on this target",
                          gs_dtype_name(a->dtype));
    if (c->pe_rows == 0 || c->pe_cols == 0 || c->moving_free_max == 0 || c->psum_bank_bytes < 4)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: target has no tensor engine tiles");
    /* one output tile: at most one PSUM bank of fp32 and the moving free size */
    int64_t tile_max = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    /* ... and what one vector/scalar instruction may touch: the PSUM evacuation reads a whole
     * tile, the im2col copies write one per tap */
    if (c->max_free_psum > 0) tile_max = GS_MIN(tile_max, (int64_t)c->max_free_psum);
    if (im2col && c->max_free_sbuf > 0) tile_max = GS_MIN(tile_max, (int64_t)c->max_free_sbuf);
    if (tile_max <= 0 || d.OW <= 0 || d.OH <= 0)
        return gs_kb_fail(kb, GS_ERR_INVALID, "conv2d: empty output or PSUM bank");
    const int64_t nc = GS_MIN(d.OW, tile_max);
    const int64_t nr = GS_MIN(d.OH, tile_max / nc);
    const int64_t ni =
        nr == d.OH && nc == d.OW ? GS_MAX((int64_t)1, GS_MIN(d.N, tile_max / (d.OH * d.OW))) : 1;
    const int64_t ntile = ni * nr * nc;
    const int64_t brows = ni > 1 ? d.H : GS_MIN(d.H, (nr - 1) * d.S + d.K);
    const int64_t KK = d.K * d.K;
    const unsigned pr = c->pe_rows, pc = GS_MIN(c->pe_cols, c->partitions);
    const int64_t ncb = (d.Cin + pr - 1) / pr, nob = (d.Cout + pc - 1) / pc;
    const unsigned nq = c->dma_queues > 0 ? c->dma_queues : 1;
    const unsigned nq_load = nq > 1 ? nq / 2 : 1;
    unsigned ql = 0, qs = 0;

    gs_pool *pw = gs_pool_create(kb, GS_MEM_SBUF, "w", (unsigned)ncb, (uint64_t)(KK * d.Cout) * es);
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", (unsigned)(bufs * ncb),
                                 (uint64_t)(ni * brows * d.W) * es);
    gs_pool *pcol = im2col ? gs_pool_create(kb, GS_MEM_SBUF, "col", (unsigned)(bufs * ncb),
                                            (uint64_t)(KK * ntile) * es)
                           : NULL;
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", (unsigned)(2 * bufs), (uint64_t)ntile * es);
    gs_pool *pp = gs_pool_create(kb, GS_MEM_PSUM, "acc",
                                 (unsigned)GS_MAX(1u, GS_MIN(c->psum_banks, 2u * (unsigned)bufs)),
                                 c->psum_bank_bytes);
    if (!gs_kb_ok(kb)) return gs_kb_status(kb);

    /* the weights, resident: per Cin block one tile [cp x K^2 Cout], tap t at column t Cout */
    gs_tile wt[64];
    if (ncb > (int64_t)(sizeof wt / sizeof wt[0]))
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "conv2d: Cin %" PRId64 " needs %" PRId64
                          " contraction blocks of %u (caps.pe_rows); at most 64",
                          d.Cin, ncb, pr);
    for (int64_t cb = 0; cb < ncb && gs_kb_ok(kb); cb++) {
        unsigned cp = (unsigned)GS_MIN((int64_t)pr, d.Cin - cb * pr);
        wt[cb] = gs_tile_alloc(pw, a->dtype, cp, (uint32_t)(KK * d.Cout));
    }
    int w_loaded = 0;

    const int64_t NHW = d.N * d.H * d.W, NOHW = d.N * d.OH * d.OW;
    int evac = 0, copies = 0;
    for (int64_t n0 = 0; n0 < d.N && gs_kb_ok(kb); n0 += ni)
        for (int64_t oh0 = 0; oh0 < d.OH && gs_kb_ok(kb); oh0 += nr) {
            cv_tile t;
            t.n0 = n0;
            t.oh0 = oh0;
            t.ni = (uint32_t)GS_MIN(ni, d.N - n0);
            t.nr = (uint32_t)GS_MIN(nr, d.OH - oh0);
            t.ih0 = ni > 1 ? 0 : GS_MAX((int64_t)0, oh0 * d.S - d.P);
            int64_t ih1 = ni > 1 ? d.H : GS_MIN(d.H, (oh0 + t.nr - 1) * d.S - d.P + d.K);
            t.brows = (uint32_t)(ih1 - t.ih0);
            /* the band of every Cin block */
            gs_tile xb[64];
            for (int64_t cb = 0; cb < ncb; cb++) {
                unsigned cp = (unsigned)GS_MIN((int64_t)pr, d.Cin - cb * pr);
                xb[cb] = gs_tile_alloc(px, a->dtype, cp, (uint32_t)(t.ni * t.brows * d.W));
                const uint32_t sh[2] = {t.ni, (uint32_t)(t.brows * d.W)};
                const int64_t st[2] = {d.H * d.W, 1};
                const int32_t dst_st[2] = {(int32_t)(t.brows * d.W), 1};
                gs_dma_copy(
                    kb, view(&xb[cb], cp, 0, 2, sh, dst_st),
                    hbm_view(X, cb * pr * NHW + n0 * d.H * d.W + t.ih0 * d.W, cp, NHW, 2, sh, st),
                    (int)(ql++ % nq_load));
            }
            if (!w_loaded) {
                /* after the first band, one transfer per tap in the order the matmuls use
                 * them, so the first matmul waits for one [Cin x Cout] block, not for all */
                for (int64_t cb = 0; cb < ncb; cb++) {
                    unsigned cp = (unsigned)GS_MIN((int64_t)pr, d.Cin - cb * pr);
                    for (int64_t j = 0; j < KK; j++) {
                        int64_t k = tap_order(&d, j);
                        gs_dma_copy(
                            kb,
                            gs_tile_view(&wt[cb], 0, cp, (uint32_t)(k * d.Cout), (uint32_t)d.Cout),
                            gs_hbm_rows(Wt, k * d.Cin + cb * pr, cp, 0, (uint32_t)d.Cout),
                            (int)(ql++ % nq_load));
                    }
                }
                w_loaded = 1;
            }
            for (int64_t oc0 = 0; oc0 < d.OW && gs_kb_ok(kb); oc0 += nc) {
                t.oc0 = oc0;
                t.nc = (uint32_t)GS_MIN(nc, d.OW - oc0);
                const uint32_t nt = t.ni * t.nr * t.nc;
                gs_tile col[64];
                if (im2col) {
                    /* materialise the K^2 shifted windows: col[cb] tap k at columns k nt */
                    for (int64_t cb = 0; cb < ncb; cb++) {
                        unsigned cp = (unsigned)GS_MIN((int64_t)pr, d.Cin - cb * pr);
                        col[cb] = gs_tile_alloc(pcol, a->dtype, cp, (uint32_t)(KK * nt));
                        const gs_engine zeng = c->has_gpsimd ? GS_ENG_GPSIMD : GS_ENG_VECTOR;
                        for (int64_t k = 0; k < KK; k++) {
                            cv_win w;
                            if (!window(&d, &t, k / d.K, k % d.K, &w)) {
                                gs_memset(kb, zeng,
                                          gs_tile_view(&col[cb], 0, cp, (uint32_t)(k * nt), nt),
                                          0.0f);
                                continue;
                            }
                            if (!w.full) zero_outside(kb, zeng, &col[cb], cp, k * nt, &t, &w);
                            gs_tensor_copy(
                                kb, (copies++ & 1) ? GS_ENG_SCALAR : GS_ENG_VECTOR,
                                view(&col[cb], cp, k * nt + w.dst_off, 3, w.shape, w.dst_stride),
                                view(&xb[cb], cp, w.src_off, 3, w.shape, w.src_stride));
                        }
                    }
                }
                for (int64_t ob = 0; ob < nob && gs_kb_ok(kb); ob++) {
                    const unsigned co = (unsigned)GS_MIN((int64_t)pc, d.Cout - ob * pc);
                    gs_tile acc = gs_tile_alloc(pp, GS_FP32, co, nt);
                    int first = 1;
                    for (int64_t cb = 0; cb < ncb; cb++) {
                        unsigned cp = (unsigned)GS_MIN((int64_t)pr, d.Cin - cb * pr);
                        for (int64_t j = 0; j < KK; j++) {
                            int64_t k = tap_order(&d, j);
                            gs_ap st =
                                gs_tile_view(&wt[cb], 0, cp, (uint32_t)(k * d.Cout + ob * pc), co);
                            if (im2col) {
                                gs_matmul(kb, acc.ap, st,
                                          gs_tile_view(&col[cb], 0, cp, (uint32_t)(k * nt), nt),
                                          !first);
                                first = 0;
                                continue;
                            }
                            cv_win w;
                            if (!window(&d, &t, k / d.K, k % d.K, &w)) continue;
                            gs_matmul(kb, view(&acc, co, w.dst_off, 3, w.shape, w.dst_stride), st,
                                      view(&xb[cb], cp, w.src_off, 3, w.shape, w.src_stride),
                                      !first);
                            first = 0;
                        }
                    }
                    gs_tile y = gs_tile_alloc(py, a->dtype, co, nt);
                    gs_tensor_copy(kb, (evac++ & 1) ? GS_ENG_SCALAR : GS_ENG_VECTOR, y.ap, acc.ap);
                    const uint32_t sh[3] = {t.ni, t.nr, t.nc};
                    const int64_t st[3] = {d.OH * d.OW, d.OW, 1};
                    const int32_t src_st[3] = {(int32_t)(t.nr * t.nc), (int32_t)t.nc, 1};
                    gs_dma_copy(kb,
                                hbm_view(Y, ob * pc * NOHW + n0 * d.OH * d.OW + oh0 * d.OW + oc0,
                                         co, NOHW, 3, sh, st),
                                view(&y, co, 0, 3, sh, src_st),
                                nq > 1 ? (int)(nq_load + qs++ % (nq - nq_load)) : 0);
                }
            }
        }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 3) return -1;
    const cv_dims d = cv_get(a);
    if (d.N <= 0 || d.Cin <= 0 || d.H <= 0 || d.W <= 0 || d.Cout <= 0 || d.K <= 0 || d.S <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "conv2d: N, Cin, H, W, Cout, K, S must be positive"),
               -1;
    if (d.pad != CV_VALID && d.pad != CV_SAME)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "conv2d: pad must be 1 (valid) or 2 (same), got %" PRId64, d.pad),
               -1;
    if (d.pad == CV_SAME && d.K % 2 == 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "conv2d: same padding needs an odd window (K = %" PRId64
                            " would pad the sides unequally)",
                            d.K),
               -1;
    if (d.K > d.H + 2 * d.P || d.K > d.W + 2 * d.P)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "conv2d: window %" PRId64 " larger than the padded %" PRId64 "x%" PRId64
                            " image",
                            d.K, d.H + 2 * d.P, d.W + 2 * d.P),
               -1;
    if (d.N * d.H * d.W > INT32_MAX || d.N * d.OH * d.OW > INT32_MAX ||
        d.K * d.K * d.Cin > INT32_MAX || d.Cin * d.Cout * d.K * d.K > INT32_MAX)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "conv2d: tensors larger than 2^31 elements per row"),
               -1;
    snprintf(t[0].name, sizeof t[0].name, "X");
    t[0].kind = GS_TENSOR_INPUT;
    t[0].shape[0] = d.Cin;
    t[0].shape[1] = d.N * d.H * d.W;
    snprintf(t[1].name, sizeof t[1].name, "Wt");
    t[1].kind = GS_TENSOR_INPUT;
    t[1].shape[0] = d.K * d.K * d.Cin;
    t[1].shape[1] = d.Cout;
    snprintf(t[2].name, sizeof t[2].name, "Y");
    t[2].kind = GS_TENSOR_OUTPUT;
    t[2].shape[0] = d.Cout;
    t[2].shape[1] = d.N * d.OH * d.OW;
    for (int i = 0; i < 3; i++) {
        t[i].dtype = a->dtype;
        t[i].ndim = 2;
        t[i].lo = -1.0;
        t[i].hi = 1.0;
    }
    return 3;
}

/* Y and, when abs_sum is set, the same sum over |Wt| |X| (for the error bound). */
static void conv_ref(const gs_kernel_args *a, const double *x, const double *w, double *y,
                     int abs_sum)
{
    const cv_dims d = cv_get(a);
    const int64_t NHW = d.N * d.H * d.W, NOHW = d.N * d.OH * d.OW;
    for (int64_t i = 0; i < d.Cout * NOHW; i++)
        y[i] = 0.0;
    for (int64_t kh = 0; kh < d.K; kh++)
        for (int64_t kw = 0; kw < d.K; kw++)
            for (int64_t ci = 0; ci < d.Cin; ci++) {
                const double *wr = w + ((kh * d.K + kw) * d.Cin + ci) * d.Cout;
                for (int64_t n = 0; n < d.N; n++)
                    for (int64_t oh = 0; oh < d.OH; oh++) {
                        int64_t ih = oh * d.S - d.P + kh;
                        if (ih < 0 || ih >= d.H) continue;
                        for (int64_t ow = 0; ow < d.OW; ow++) {
                            int64_t iw = ow * d.S - d.P + kw;
                            if (iw < 0 || iw >= d.W) continue;
                            double xv = x[ci * NHW + (n * d.H + ih) * d.W + iw];
                            if (abs_sum) xv = fabs(xv);
                            double *yc = y + (n * d.OH + oh) * d.OW + ow;
                            for (int64_t co = 0; co < d.Cout; co++)
                                yc[co * NOHW] += (abs_sum ? fabs(wr[co]) : wr[co]) * xv;
                        }
                    }
            }
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    conv_ref(a, in[0], in[1], out[0], 0);
}

/*
 * Tolerance (gs_kernel_def.error_bound), u = the dtype's unit roundoff, v = fp32's. Each output
 * is a sum of L = K^2 Cin products w x accumulated in fp32 PSUM (taps and Cin blocks in any
 * order; the terms outside the image are absent, not zero products): each product is exact in
 * fp32 for bf16, fp16 and fp8 inputs and rounded once (v) for fp32 ones, and the standard
 * summation bound adds (L - 1) v sum |w x|, so the accumulated value is off by at most
 * e = L v sum |w| |x|. The evacuation rounds it once to the dtype: |got - ref| <= e +
 * u (|ref| + e) + floor(dtype). im2col's copies are exact (same dtype). A bound on the sum of
 * absolute values, not a statistic of the data: outputs where the products cancel keep the
 * rounding error of the terms.
 */
static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    const cv_dims d = cv_get(a);
    const double L = (double)(d.K * d.K * d.Cin);
    const double v = gs_dtype_eps(GS_FP32), u = gs_dtype_eps(a->dtype);
    const int64_t n = d.Cout * d.N * d.OH * d.OW;
    conv_ref(a, in[0], in[1], bound[0], 1);
    for (int64_t i = 0; i < n; i++) {
        double e = L * v * bound[0][i];
        bound[0][i] = e + u * (fabs(ref[0][i]) + e) + gs_tol_floor(a->dtype);
    }
}

const gs_kernel_def gs_kernel_conv2d = {
    .name = "conv2d",
    .summary = "Y = conv2d(X, Wt), stride S, zero padding P, as K^2 accumulating matmuls; "
               "shifted (strided window views) or im2col (copied windows)",
    .n_dims = 8,
    .dim_names = {"N", "Cin", "H", "W", "Cout", "K", "S", "pad"},
    .n_variants = 2,
    .variants = {"shifted", "im2col"},
    .n_params = 1,
    .param_names = {"bufs"},
    .param_help = {"band / column buffers per Cin block, PSUM tiles up to the banks (0: 4)"},
    .check_shapes = {{8, {1, 16, 8, 8, 32, 3, 1, 2}},
                     {8, {2, 131, 13, 11, 67, 3, 1, 2}},
                     {8, {1, 3, 17, 19, 200, 3, 2, 2}},
                     {8, {3, 200, 7, 9, 131, 1, 1, 1}},
                     {8, {1, 64, 15, 15, 64, 3, 2, 1}},
                     {8, {1, 5, 5, 601, 7, 3, 1, 1}},
                     {8, {2, 7, 6, 5, 9, 5, 2, 2}}},
    .perf_shapes = {{8, {1, 64, 56, 56, 64, 3, 1, 2}},
                    {8, {8, 64, 56, 56, 64, 3, 1, 2}},
                    {8, {1, 128, 28, 28, 128, 3, 1, 2}},
                    {8, {8, 128, 28, 28, 128, 3, 1, 2}},
                    {8, {1, 256, 14, 14, 256, 3, 1, 2}},
                    {8, {8, 256, 14, 14, 256, 3, 1, 2}},
                    {8, {8, 256, 56, 56, 64, 1, 1, 1}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16) | (1u << GS_FP8_E4M3),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
