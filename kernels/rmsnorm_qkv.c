/*
 * rmsnorm_qkv.c - the normalisation and QKV projection at the start of a Llama-class decoder
 * layer: Y [T x N] = (X / sqrt(mean(X^2) + 1e-6) * gamma) W, X [T x D] (tokens x hidden),
 * gamma [D], W [D x N] (N = the q, k and v widths side by side).
 *
 * The contraction runs over D, which must be on partitions for the tensor engine: the
 * normalised tokens are the stationary operand XNT [D x T] (tokens are the stationary free
 * dim M, so the output has tokens on partitions as Y wants), W is the moving operand. X
 * arrives with tokens on partitions, which is also the layout the normalisation wants (the sum
 * of squares is a free-dim reduction), so each block of 128 tokens is normalised as rmsnorm.c
 * does (scalar-engine square with accumulate, rsqrt, scaling by 1/rms on the scalar engine and
 * by gamma on the vector engine, rounded to the compute dtype) and then transposed on the
 * tensor engine (identity trick, up to a PSUM bank of D-tiles per evacuation).
 *
 * Variant "unfused": the transposed normalised tokens go to an HBM scratch tensor XNT [D x T]
 * (checked), then the pipelined matmul (matmul.c) computes Y = XNT^T W: XNT is written once and
 * read back, and the two phases do not overlap.
 * Variant "fused": the transposed tiles never leave SBUF. They live in a ring of token-tile
 * buffers that holds a block of tokens (all of T when it fits next to the weight panels) as the
 * resident stationary operand while W streams through in double-buffered panels (up to four
 * PSUM banks wide), each multiplied by every token tile of the block and evacuated alternately
 * by the vector and scalar engines, loads and stores on disjoint DMA queues. W is read once per
 * block; the ring's spare tiles let the next block's first tiles be normalised during this
 * block's panels.
 * Params: tn, bufs, mb, nb as matmul (the unfused matmul; tn also the fused panel width).
 */
#include "matmul.h"
#include "kernel_util.h"
#include "gs/kernel.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define RQ_EPS 1e-6
#define RQ_CHUNK_CAP 2048 /* free elements per normalisation instruction */

enum { RQ_UNFUSED, RQ_FUSED };
enum { T_X, T_G, T_W, T_Y, T_XNT };

/* The normalisation stage: pools for one 128-token block at a time. */
typedef struct rq_norm {
    gs_kb *kb;
    const gs_kernel_args *a;
    const gs_caps *c;
    int64_t D, chunk, nch, TK, KT;
    unsigned TC;  /* columns per transpose (pe_cols) */
    unsigned gsz; /* D-tiles transposed into one PSUM bank */
    gs_tile gamma;
    gs_pool *pg, *px, *pxn, *pst, *pcol, *pfs, *ptr, *pstage;
} rq_norm;

static int rq_norm_init(rq_norm *s, gs_kb *kb, const gs_kernel_args *a, int staged)
{
    const gs_caps *c = gs_kb_caps(kb);
    memset(s, 0, sizeof *s);
    s->kb = kb;
    s->a = a;
    s->c = c;
    s->D = a->dims[1];
    size_t es = gs_dtype_size(a->dtype);
    int64_t TM = GS_MIN((int64_t)c->pe_cols, (int64_t)c->partitions);
    s->TK = GS_MIN((int64_t)c->pe_rows, (int64_t)c->partitions);
    s->KT = (s->D + s->TK - 1) / s->TK;
    s->TC = (unsigned)GS_MIN((int64_t)c->pe_cols, s->TK);
    if (gs_row_chunks(kb, "rmsnorm_qkv", s->D, 0, RQ_CHUNK_CAP, 1, &s->chunk, &s->nch) != GS_OK)
        return -1;
    uint64_t per = c->psum_bank_bytes / ((uint64_t)TM * es);
    s->gsz = (unsigned)GS_MAX(1, GS_MIN(per, (uint64_t)8));
    unsigned gp = (unsigned)GS_MIN((int64_t)c->partitions, a->dims[0]);
    gs_pool *pg = s->pg = gs_pool_create(kb, GS_MEM_SBUF, "gamma", 1, (uint64_t)s->D * es);
    s->px = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, (uint64_t)s->D * es);
    s->pxn = gs_pool_create(kb, GS_MEM_SBUF, "xn", 1, (uint64_t)s->D * es);
    s->pst = gs_pool_create(kb, GS_MEM_SBUF, "partials", 2, (uint64_t)s->nch * 4);
    s->pcol = gs_pool_create(kb, GS_MEM_SBUF, "rowstats", 2, 2 * 4);
    s->pfs = gs_pool_create(kb, GS_MEM_SBUF, "scaled", 2, (uint64_t)s->chunk * 4);
    s->ptr = gs_pool_create(kb, GS_MEM_PSUM, "transpose", 2, c->psum_bank_bytes);
    if (staged)
        s->pstage = gs_pool_create(kb, GS_MEM_SBUF, "xnt_stage", 2, (uint64_t)s->gsz * TM * es);
    s->gamma = gs_tile_alloc(pg, a->dtype, gp, (uint32_t)s->D);
    const uint32_t shp[1] = {(uint32_t)s->D};
    const int64_t str[1] = {1};
    gs_dma_copy(kb, s->gamma.ap, gs_hbm_ap(&a->t[T_G], 0, gp, 0, 1, shp, str), -1);
    return gs_kb_ok(kb) ? 0 : -1;
}

/*
 * Normalise tokens [t0, t0 + nt) (nt <= 128) and transpose them: D-tile kt of the block lands
 * either in `dst` (resident XNT, free offset kt * dst_pitch + dst_f0) or, with dst NULL, in the
 * HBM tensor XNT rows [kt * TK, ...) columns [t0, t0 + nt) through a staging tile.
 */
static void rq_norm_block(rq_norm *s, int64_t t0, unsigned nt, const gs_tile *dst,
                          uint32_t dst_pitch, uint32_t dst_f0, int qload, int qstore)
{
    gs_kb *kb = s->kb;
    const gs_kernel_args *a = s->a;
    gs_dtype dt = a->dtype;
    int64_t D = s->D;
    gs_tile x = gs_tile_alloc(s->px, dt, nt, (uint32_t)D);
    gs_tile xn = gs_tile_alloc(s->pxn, dt, nt, (uint32_t)D);
    gs_tile part = gs_tile_alloc(s->pst, GS_FP32, nt, (uint32_t)s->nch);
    gs_tile cs = gs_tile_alloc(s->pcol, GS_FP32, nt, 2);
    gs_ap ss = gs_tile_view(&cs, 0, nt, 0, 1), rstd = gs_tile_view(&cs, 0, nt, 1, 1);
    gs_dma_copy(kb, x.ap, gs_hbm_rows(&a->t[T_X], t0, nt, 0, (uint32_t)D), qload);
    for (int64_t k = 0; k < s->nch && gs_kb_ok(kb); k++) {
        int64_t c0 = k * s->chunk;
        uint32_t nf = (uint32_t)GS_MIN(s->chunk, D - c0);
        gs_tile sq = gs_tile_alloc(s->pfs, GS_FP32, nt, nf); /* scratch: only the sum is kept */
        gs_ap acc = gs_tile_view(&part, 0, nt, (uint32_t)k, 1);
        gs_activation(kb, sq.ap, gs_tile_view(&x, 0, nt, (uint32_t)c0, nf), GS_ACT_SQUARE,
                      gs_imm(1.0f), gs_imm(0.0f), &acc);
    }
    gs_tensor_reduce(kb, ss, part.ap, GS_ALU_ADD, 1);
    gs_activation(kb, rstd, ss, GS_ACT_RSQRT, gs_imm((float)(1.0 / (double)D)),
                  gs_imm((float)RQ_EPS), NULL);
    for (int64_t k = 0; k < s->nch && gs_kb_ok(kb); k++) {
        int64_t c0 = k * s->chunk;
        uint32_t nf = (uint32_t)GS_MIN(s->chunk, D - c0);
        gs_tile f = gs_tile_alloc(s->pfs, GS_FP32, nt, nf);
        gs_activation(kb, f.ap, gs_tile_view(&x, 0, nt, (uint32_t)c0, nf), GS_ACT_IDENTITY,
                      gs_per_partition(rstd), gs_imm(0.0f), NULL);
        gs_tensor_tensor(kb, gs_tile_view(&xn, 0, nt, (uint32_t)c0, nf), f.ap,
                         gs_tile_view(&s->gamma, 0, nt, (uint32_t)c0, nf), GS_ALU_MUL);
    }
    /* transposes: groups of gsz full D-tiles per PSUM bank; a ragged last tile alone */
    for (int64_t k0 = 0; k0 < s->KT && gs_kb_ok(kb);) {
        unsigned dk = (unsigned)GS_MIN(s->TK, D - k0 * s->TK);
        unsigned g = 1;
        while (dk == s->TK && g < s->gsz && k0 + g < s->KT && D - (k0 + g) * s->TK >= s->TK)
            g++;
        gs_tile pt = gs_tile_alloc(s->ptr, dt, dk, g * nt);
        /* a transpose's input is at most pe_cols wide: a D-tile of pe_rows in pieces */
        for (unsigned i = 0; i < g; i++)
            for (unsigned p0 = 0; p0 < dk; p0 += s->TC) {
                unsigned pc = GS_MIN(s->TC, dk - p0);
                gs_transpose(kb, gs_tile_view(&pt, p0, pc, i * nt, nt),
                             gs_tile_view(&xn, 0, nt, (uint32_t)((k0 + i) * s->TK) + p0, pc));
            }
        gs_ap src = gs_tile_view2(&pt, 0, dk, 0, g, nt, nt);
        if (dst) {
            gs_tensor_copy(
                kb, GS_ENG_VECTOR,
                gs_tile_view2(dst, 0, dk, (uint32_t)k0 * dst_pitch + dst_f0, g, nt, dst_pitch),
                src);
        } else {
            gs_tile st = gs_tile_alloc(s->pstage, dt, dk, g * nt);
            gs_tensor_copy(kb, GS_ENG_VECTOR, st.ap, pt.ap);
            for (unsigned i = 0; i < g; i++)
                gs_dma_copy(kb, gs_hbm_rows(&a->t[T_XNT], (k0 + i) * s->TK, dk, t0, nt),
                            gs_tile_view(&st, 0, dk, i * nt, nt), qstore);
        }
        k0 += g;
    }
}

/*
 * The fused variant. The normalised, transposed tokens live in a ring of token-tile buffers
 * (one [D x 128 tokens] stationary tile each): a block of TB tokens (all of T when it fits next
 * to the W panels) is resident while W streams through it in double-buffered panels of WB
 * columns (several PSUM banks wide where SBUF allows: a wider panel is a longer row per DMA
 * descriptor), so W is read ceil(T / TB) times. The ring holds PRE tiles more than a block:
 * the first PRE tiles of the next block are normalised during this block's panels (one per
 * panel), and the rest just before their first matmul, so the vector and scalar engines work
 * while the tensor engine multiplies.
 */
#define RQ_PRE 2

static void fused(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    int64_t T = a->dims[0], D = a->dims[1], N = a->dims[2];
    gs_dtype dt = a->dtype;
    size_t es = gs_dtype_size(dt);
    int64_t TM = GS_MIN((int64_t)c->pe_cols, (int64_t)c->partitions);
    int64_t TN = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    if (gs_kernel_param(a, "tn", 0) > 0) TN = GS_MIN(TN, gs_kernel_param(a, "tn", 0));
    unsigned nq = c->dma_queues, nst = nq >= 2 ? GS_MAX(1u, nq / 4) : 0, nld = nq - nst;
    unsigned ql = 0, qs = 0, ev = 0;
#define RQ_QLOAD() (nst ? (int)(nst + ql++ % nld) : -1)
#define RQ_QSTORE() (nst ? (int)(qs++ % nst) : -1)
    rq_norm s;
    if (rq_norm_init(&s, kb, a, 0) != 0) return;
    int64_t KT = s.KT, MT = (T + TM - 1) / TM; /* token tiles */
    unsigned PK = (unsigned)GS_MIN(s.TK, D);
    uint64_t tile_bytes = (uint64_t)(KT * GS_MIN(TM, T)) * es;
    /* SBUF after the normalisation pools (gamma, x, xn: 3 D; partials, scaled: fp32) and the
     * evacuation tiles: the widest W panel (4 TN down to TN / 4 columns, double-buffered) that
     * leaves a ring of 4 token tiles (or all of them) wins */
    uint64_t used = 3 * (uint64_t)D * es + 2 * (uint64_t)(s.nch + 2 + s.chunk) * 4 +
                    2 * (uint64_t)TN * es + 4096;
    int64_t WB = 4 * TN, nring = 0;
    for (;; WB /= 2) {
        uint64_t wbytes = 2 * (uint64_t)(KT * WB) * es;
        uint64_t avail =
            c->sbuf_partition_bytes > used + wbytes ? c->sbuf_partition_bytes - used - wbytes : 0;
        nring = GS_MIN((int64_t)(avail / tile_bytes), MT);
        /* at least 4 panels, so that W loads pipeline with the matmuls */
        if (WB > TN && N < 4 * WB) continue;
        if (nring >= GS_MIN(MT, 4 + RQ_PRE) || WB <= TN / 4 || WB <= 1) break;
    }
    /* token tiles per block: all of them, or the ring less the prefetched tiles */
    int64_t nbm = nring >= MT ? MT : nring - RQ_PRE;
    if (nbm < 1) {
        gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                   "does not fit: rmsnorm_qkv: the W panels (%" PRIu64 " bytes per partition) "
                   "leave no room for %d token tiles of %" PRIu64 " bytes",
                   2 * (uint64_t)(KT * WB) * es, 1 + RQ_PRE, tile_bytes);
        return;
    }
    TN = GS_MIN(TN, WB);
    gs_tile *xt = gs_malloc((size_t)MT * sizeof *xt);
    unsigned char *ready = gs_malloc((size_t)MT);
    if (!xt || !ready) {
        gs_free(xt);
        gs_free(ready);
        gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT, "does not fit: rmsnorm_qkv: out of host memory");
        return;
    }
    memset(ready, 0, (size_t)MT);
    gs_pool *pxt = gs_pool_create(kb, GS_MEM_SBUF, "xnt", (unsigned)nring, tile_bytes);
    gs_pool *pw = gs_pool_create(kb, GS_MEM_SBUF, "w", 2, (uint64_t)(KT * WB) * es);
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", 2, (uint64_t)TN * es);
    gs_pool *pacc = gs_pool_create(kb, GS_MEM_PSUM, "acc", 2, c->psum_bank_bytes);
    int64_t next = 0; /* token tiles are normalised in order: the ring's buffers rotate */
#define RQ_NORM_NEXT()                                                                             \
    do {                                                                                           \
        unsigned nt_ = (unsigned)GS_MIN(TM, T - next * TM);                                        \
        xt[next] = gs_tile_alloc(pxt, dt, PK, (uint32_t)KT * nt_);                                 \
        rq_norm_block(&s, next *TM, nt_, &xt[next], nt_, 0, RQ_QLOAD(), -1);                       \
        ready[next++] = 1;                                                                         \
    } while (0)
    for (int64_t m0 = 0; m0 < MT && gs_kb_ok(kb); m0 += nbm) {
        int64_t m1 = GS_MIN(MT, m0 + nbm);
        for (int64_t w0 = 0; w0 < N && gs_kb_ok(kb); w0 += WB) {
            uint32_t wb = (uint32_t)GS_MIN(WB, N - w0);
            gs_tile w = gs_tile_alloc(pw, dt, PK, (uint32_t)KT * wb);
            for (int64_t kt = 0; kt < KT; kt++) {
                unsigned tk = (unsigned)GS_MIN(s.TK, D - kt * s.TK);
                gs_dma_copy(kb, gs_tile_view(&w, 0, tk, (uint32_t)kt * wb, wb),
                            gs_hbm_rows(&a->t[T_W], kt * s.TK, tk, w0, wb), RQ_QLOAD());
            }
            for (int64_t m = m0; m < m1 && gs_kb_ok(kb); m++) {
                while (!ready[m] && gs_kb_ok(kb))
                    RQ_NORM_NEXT();
                unsigned tm = (unsigned)GS_MIN(TM, T - m * TM);
                for (uint32_t j = 0; j < wb && gs_kb_ok(kb); j += (uint32_t)TN) {
                    uint32_t tn = (uint32_t)GS_MIN(TN, (int64_t)(wb - j));
                    gs_tile acc = gs_tile_alloc(pacc, GS_FP32, tm, tn);
                    for (int64_t kt = 0; kt < KT; kt++) {
                        unsigned tk = (unsigned)GS_MIN(s.TK, D - kt * s.TK);
                        gs_matmul(kb, acc.ap, gs_tile_view(&xt[m], 0, tk, (uint32_t)kt * tm, tm),
                                  gs_tile_view(&w, 0, tk, (uint32_t)kt * wb + j, tn), kt > 0);
                    }
                    gs_tile y = gs_tile_alloc(py, dt, tm, tn);
                    gs_tensor_copy(kb, ev++ % 2 ? GS_ENG_SCALAR : GS_ENG_VECTOR, y.ap, acc.ap);
                    gs_dma_copy(kb, gs_hbm_rows(&a->t[T_Y], m * TM, tm, w0 + j, tn), y.ap,
                                RQ_QSTORE());
                }
            }
            /* after the block's first panel (all of its tiles ready): prefetch the next
             * block's first tiles, one per panel, into the ring's spare buffers */
            if (w0 > 0 && next < MT && next < m1 + RQ_PRE && gs_kb_ok(kb)) RQ_NORM_NEXT();
        }
    }
#undef RQ_NORM_NEXT
#undef RQ_QLOAD
#undef RQ_QSTORE
    gs_free(xt);
    gs_free(ready);
    gs_pool_release(kb, s.pg);
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    if (!(c->matmul_dtypes & (1u << a->dtype)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul on this target",
                          gs_dtype_name(a->dtype));
    if (c->pe_rows == 0 || c->pe_cols == 0 || c->moving_free_max == 0)
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: target has no tensor engine tiles");
    if (gs_kernel_param(a, "tn", 0) < 0 || gs_kernel_param(a, "bufs", 0) < 0 ||
        gs_kernel_param(a, "mb", 0) < 0 || gs_kernel_param(a, "nb", 0) < 0)
        return gs_kb_fail(kb, GS_ERR_INVALID,
                          "rmsnorm_qkv: tn, bufs, mb, nb must be >= 0 (0: the default)");
    if (a->variant == RQ_FUSED) {
        fused(kb, a);
        return gs_kb_status(kb);
    }
    int64_t T = a->dims[0], D = a->dims[1], N = a->dims[2];
    int64_t TM = GS_MIN((int64_t)c->pe_cols, (int64_t)c->partitions);
    rq_norm s;
    if (rq_norm_init(&s, kb, a, 1) != 0) return gs_kb_status(kb);
    for (int64_t t0 = 0; t0 < T && gs_kb_ok(kb); t0 += TM)
        rq_norm_block(&s, t0, (unsigned)GS_MIN(TM, T - t0), NULL, 0, 0, -1, -1);
    /* release the normalisation pools (gamma was created first) before the matmul's */
    gs_pool_release(kb, s.pg);
    gs_mm_problem p;
    memset(&p, 0, sizeof p);
    p.act = GS_ACT_IDENTITY;
    p.at = &a->t[T_XNT];
    p.b = &a->t[T_W];
    p.c = &a->t[T_Y];
    p.M = p.m_hi = T;
    p.K = D;
    p.N = N;
    return gs_mm_build(kb, &p, GS_MM_PIPELINED, a->param);
}

static void decl(gs_tensor_decl *t, const char *name, gs_tensor_kind kind, gs_dtype dt, int ndim,
                 int64_t r, int64_t cols)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->dtype = dt;
    t->ndim = ndim;
    t->shape[0] = r;
    t->shape[1] = cols;
    t->lo = -1.0;
    t->hi = 1.0;
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 5) return -1;
    int64_t T = a->dims[0], D = a->dims[1], N = a->dims[2];
    if (T <= 0 || D <= 0 || N <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "rmsnorm_qkv: T, D, N must be positive"),
               -1;
    gs_dtype dt = a->dtype;
    decl(&t[T_X], "X", GS_TENSOR_INPUT, dt, 2, T, D);
    decl(&t[T_G], "gamma", GS_TENSOR_INPUT, dt, 1, D, 0);
    t[T_G].lo = 0.5;
    t[T_G].hi = 1.5;
    decl(&t[T_W], "W", GS_TENSOR_INPUT, dt, 2, D, N);
    decl(&t[T_Y], "Y", GS_TENSOR_OUTPUT, dt, 2, T, N);
    if (a->variant == RQ_FUSED) return 4;
    decl(&t[T_XNT], "XNT", GS_TENSOR_SCRATCH, dt, 2, D, T);
    return 5;
}

/* xn[t][d] = x / sqrt(mean(x^2) + eps) * gamma in double, row-major [T x D] */
static void ref_norm(const gs_kernel_args *a, const double *const *in, double *xn)
{
    int64_t T = a->dims[0], D = a->dims[1];
    for (int64_t t = 0; t < T; t++) {
        const double *x = in[T_X] + t * D;
        double ss = 0.0;
        for (int64_t i = 0; i < D; i++)
            ss += x[i] * x[i];
        double rs = 1.0 / sqrt(ss / (double)D + RQ_EPS);
        for (int64_t i = 0; i < D; i++)
            xn[t * D + i] = x[i] * rs * in[T_G][i];
    }
}

/* out[0] = Y, and for "unfused" out[1] = XNT. */
static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t T = a->dims[0], D = a->dims[1], N = a->dims[2];
    double *xn = gs_malloc((size_t)(T * D) * sizeof(double));
    if (!xn) {
        for (int64_t i = 0; i < T * N; i++) /* NaN: the check fails rather than passing */
            out[0][i] = NAN;
        return;
    }
    ref_norm(a, in, xn);
    gs_ref_gemm(0, 0, T, N, D, xn, D, in[T_W], N, out[0], N);
    if (a->variant == RQ_UNFUSED)
        for (int64_t t = 0; t < T; t++)
            for (int64_t d = 0; d < D; d++)
                out[1][d * T + t] = xn[t * D + d];
    gs_free(xn);
}

/*
 * Tolerance (gs_kernel_def.error_bound), u = the dtype's unit roundoff, v = fp32's,
 * gam(n) = n v / (1 - n v):
 *   the sum of squares accumulates D fp32 squares (each rounded: v) in any order: relative error
 *   gam(D) + v; 1/rms = rsqrt(ss / D + eps) carries half of it (the slope of x^-1/2) plus the
 *   scaling, the add and the rsqrt itself (RQ_RSQRT_REL v); x * rstd (v), * gamma (v), rounded
 *   to the dtype (u): |xn' - xn| <= exn = |xn| (u + (gam(D) + v) / 2 + (RQ_RSQRT_REL + 2) v
 *   + second order) + floor. The transpose is exact (a product with an identity).
 *   Y: the fp32 accumulation over D of xn' W, then the rounding to the dtype:
 *   |Y' - Y| <= ey = |W|^T-weighted sum of exn + gam(D) sum |xn'| |W|, plus u (|Y| + ey).
 * Bounds on sums of absolute values, so a cancelling output still gets the full error.
 */
#define RQ_RSQRT_REL 4.0 /* ss / D (v), + eps (v), rsqrt (2v) */

static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    int64_t T = a->dims[0], D = a->dims[1], N = a->dims[2];
    const double u = gs_dtype_eps(a->dtype), v = gs_dtype_eps(GS_FP32);
    const double f = gs_tol_floor(a->dtype) + gs_tol_floor(GS_FP32);
    const double gD = (double)D * v / (1.0 - (double)D * v);
    const double rel = (u + (gD + v) / 2 + (RQ_RSQRT_REL + 2) * v) * (1.0 + 4 * u);
    size_t nx = (size_t)(T * D), nw = (size_t)(D * N), ny = (size_t)(T * N);
    double *xn = gs_malloc(nx * sizeof(double)), *ex = gs_malloc(nx * sizeof(double));
    double *ax = gs_malloc(nx * sizeof(double)), *aw = gs_malloc(nw * sizeof(double));
    double *e1 = gs_malloc(ny * sizeof(double)), *e2 = gs_malloc(ny * sizeof(double));
    if (xn && ex && ax && aw && e1 && e2) {
        ref_norm(a, in, xn);
        for (size_t i = 0; i < nx; i++) {
            ex[i] = fabs(xn[i]) * rel + f;
            ax[i] = fabs(xn[i]) + ex[i];
        }
        for (size_t i = 0; i < nw; i++)
            aw[i] = fabs(in[T_W][i]);
        gs_ref_gemm(0, 0, T, N, D, ex, D, aw, N, e1, N);
        gs_ref_gemm(0, 0, T, N, D, ax, D, aw, N, e2, N);
        for (size_t i = 0; i < ny; i++) {
            const double ey = e1[i] + gD * e2[i];
            bound[0][i] = ey + u * (fabs(ref[0][i]) + ey) + f;
        }
        if (a->variant == RQ_UNFUSED)
            for (int64_t t = 0; t < T; t++)
                for (int64_t d = 0; d < D; d++)
                    bound[1][d * T + t] = ex[t * D + d];
    }
    /* out of memory: the bounds stay 0 and the check fails rather than passing unchecked */
    gs_free(xn);
    gs_free(ex);
    gs_free(ax);
    gs_free(aw);
    gs_free(e1);
    gs_free(e2);
}

const gs_kernel_def gs_kernel_rmsnorm_qkv = {
    .name = "rmsnorm_qkv",
    .summary = "Y = (X / sqrt(mean(X^2) + 1e-6) * gamma) W: RMSNorm + QKV projection",
    .n_dims = 3,
    .dim_names = {"T", "D", "N"},
    .n_variants = 2,
    .variants = {"unfused", "fused"},
    .n_params = 4,
    .param_names = {"tn", "bufs", "mb", "nb"},
    .param_help = {"moving free size per matmul (0: largest a PSUM bank and the engine allow)",
                   "buffers per streamed pool of the unfused pipelined matmul (0: 2)",
                   "unfused: stationary block columns of the matmul (0: what SBUF holds)",
                   "unfused: moving block columns of the matmul (0: half of SBUF)"},
    .check_shapes = {{3, {128, 256, 384}},
                     {3, {1, 128, 192}},
                     {3, {77, 200, 131}},
                     {3, {131, 320, 96}},
                     {3, {8, 1024, 1536}}},
    .perf_shapes = {{3, {2048, 4096, 6144}}, {3, {1, 4096, 6144}}, {3, {8, 4096, 6144}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
