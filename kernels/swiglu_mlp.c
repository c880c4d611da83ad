/*
 * swiglu_mlp.c - the SwiGLU feed-forward block of Llama-class models,
 *     Y = (silu(X Wg) * (X Wu)) Wd,  X [T x D], Wg and Wu [D x F], Wd [F x D],
 * computed with features on partitions as mlp.c does: X is given transposed as XT [D x T], the
 * hidden activations are HT = silu(Wg^T XT) * (Wu^T XT) [F x T] (an HBM scratch tensor, in the
 * compute dtype, checked like an output), and the output is YT = Wd^T HT [D x T].
 *
 * Variant "unfused": what separate framework ops do: the gate and up projections are two
 * pipelined matmuls (matmul.c) to fp32 HBM tensors G and U, an elementwise pass computes
 * HT = silu(G) * U (scalar-engine silu, vector-engine multiply), and the down projection is a
 * third pipelined matmul. G and U are fp32 round trips through HBM (checked too).
 * Variant "fused": the gate and up projections share their moving operand and their
 * evacuation. XT stays resident in SBUF for as many tokens as fit (all of them at the perf
 * shapes, so each weight is read once); per feature tile the Wg and Wu column panels are
 * loaded (double-buffered), both products accumulate into PSUM side by side, and the
 * evacuation is the SwiGLU itself: silu of the gate bank on the scalar engine, times the up
 * bank on the vector engine, written once as HT in the compute dtype. G and U never leave
 * PSUM. The down projection uses the same schedule with HT as the resident moving operand
 * (blocks of as many tokens as SBUF holds after the Wd panels), loads and stores on disjoint
 * DMA queues.
 * Params: tn (tokens per matmul), bufs, mb, nb as matmul (the unfused variant's matmuls), chunk
 * (free elements per tile of the unfused elementwise pass, 0: 2048).
 */
#include "matmul.h"
#include "kernel_util.h"
#include "gs/kernel.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { SW_UNFUSED, SW_FUSED };

/* tensors: XT, Wg, Wu, Wd (inputs), YT (output), HT, then G, U for "unfused" (scratch) */
enum { T_XT, T_WG, T_WU, T_WD, T_YT, T_HT, T_G, T_U };

/* HT = silu(G) * U over [F x T] fp32 HBM tensors, tiled [partitions x chunk]. */
static void swiglu_pass(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *G = &a->t[T_G], *U = &a->t[T_U], *HT = &a->t[T_HT];
    int64_t T = a->dims[0], F = a->dims[2];
    int64_t chunk = gs_kernel_param(a, "chunk", 2048);
    chunk = GS_MIN(GS_MIN(chunk, T), (int64_t)c->max_free_sbuf);
    gs_pool *pg = gs_pool_create(kb, GS_MEM_SBUF, "g", 2, (uint64_t)chunk * 4);
    gs_pool *pu = gs_pool_create(kb, GS_MEM_SBUF, "u", 2, (uint64_t)chunk * 4);
    gs_pool *ps = gs_pool_create(kb, GS_MEM_SBUF, "silu", 2, (uint64_t)chunk * 4);
    gs_pool *ph =
        gs_pool_create(kb, GS_MEM_SBUF, "h", 2, (uint64_t)chunk * gs_dtype_size(a->dtype));
    for (int64_t f0 = 0; f0 < F && gs_kb_ok(kb); f0 += c->partitions) {
        unsigned fp = (unsigned)GS_MIN((int64_t)c->partitions, F - f0);
        for (int64_t t0 = 0; t0 < T && gs_kb_ok(kb); t0 += chunk) {
            uint32_t tw = (uint32_t)GS_MIN(chunk, T - t0);
            gs_tile g = gs_tile_alloc(pg, GS_FP32, fp, tw);
            gs_tile u = gs_tile_alloc(pu, GS_FP32, fp, tw);
            gs_dma_copy(kb, g.ap, gs_hbm_rows(G, f0, fp, t0, tw), -1);
            gs_dma_copy(kb, u.ap, gs_hbm_rows(U, f0, fp, t0, tw), -1);
            gs_tile s = gs_tile_alloc(ps, GS_FP32, fp, tw);
            gs_activation(kb, s.ap, g.ap, GS_ACT_SILU, gs_imm(1.0f), gs_imm(0.0f), NULL);
            gs_tile h = gs_tile_alloc(ph, a->dtype, fp, tw);
            gs_tensor_tensor(kb, h.ap, s.ap, u.ap, GS_ALU_MUL);
            gs_dma_copy(kb, gs_hbm_rows(HT, f0, fp, t0, tw), h.ap, -1);
        }
    }
    gs_pool_release(kb, pg);
}

/*
 * The fused variant's projections: OUT [M x T] from the moving operand B [K x T] (XT, or HT
 * for the down projection) kept resident in SBUF for TB tokens at a time, and the weight column
 * panels [K x TF] of W1 (and W2) streamed, double-buffered. With W2 (the gate and up
 * projections) OUT = silu(W1^T B) * (W2^T B), evacuated from the two PSUM banks by the scalar
 * and vector engines; without it OUT = W1^T B, evacuated alternately by the vector and scalar
 * engines.
 */
static void proj_resident(gs_kb *kb, const gs_kernel_args *a, const gs_tensor *B,
                          const gs_tensor *W1, const gs_tensor *W2, const gs_tensor *OUT, int64_t K,
                          int64_t M)
{
    const gs_caps *c = gs_kb_caps(kb);
    int64_t T = a->dims[0];
    gs_dtype dt = a->dtype;
    size_t es = gs_dtype_size(dt);
    unsigned nw = W2 ? 2 : 1;
    int64_t TK = GS_MIN((int64_t)c->pe_rows, (int64_t)c->partitions);
    int64_t TF = GS_MIN((int64_t)c->pe_cols, (int64_t)c->partitions);
    int64_t TN = GS_MIN((int64_t)c->moving_free_max, (int64_t)(c->psum_bank_bytes / 4));
    TN = GS_MIN(TN, gs_kernel_param(a, "tn", TN));
    if (TK <= 0 || TF <= 0 || TN <= 0) {
        gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: target has no tensor engine tiles");
        return;
    }
    int64_t KT = (K + TK - 1) / TK;
    unsigned PK = (unsigned)GS_MIN(TK, K);
    /* SBUF: the weight blocks (g feature tiles wide: rows of g TF elements per DMA
     * descriptor) double-buffered, the evacuation tiles, and B for TB tokens. The widest block
     * that still leaves room for 4 TN tokens of B (or all of T) wins; a reload of the weights
     * per token block is what a smaller TB costs. */
    uint64_t ebytes = 2 * (uint64_t)TN * (4 + es) + 4096;
    int64_t g = 4, TB = 0;
    uint64_t wbytes = 0;
    for (; g >= 1; g /= 2) {
        wbytes = 2 * nw * (uint64_t)(KT * g * TF) * es;
        uint64_t avail = c->sbuf_partition_bytes > wbytes + ebytes
                             ? c->sbuf_partition_bytes - wbytes - ebytes
                             : 0;
        TB = (int64_t)(avail / ((uint64_t)KT * es));
        TB = GS_MIN(T, TB >= TN ? TB / TN * TN : TB);
        if (TB >= GS_MIN(T, 4 * TN) || g == 1) break;
    }
    if (TB < 1) {
        gs_kb_fail(kb, GS_ERR_DOES_NOT_FIT,
                   "does not fit: swiglu_mlp: the weight panels (%" PRIu64 " bytes per "
                   "partition) leave no room for a moving block of one token",
                   wbytes);
        return;
    }
    int64_t WB = g * TF;
    unsigned pbufs = c->psum_banks >= 2 * nw ? 2 : 1;
    /* loads and stores on disjoint queues (as the pipelined matmul): a queue runs its
     * transfers in order, so a weight load queued behind a store would wait for that store's
     * evacuation, and the tensor engine for the load */
    unsigned nq = c->dma_queues, nst = nq >= 2 ? GS_MAX(1u, nq / 4) : 0, nld = nq - nst;
    unsigned ql = 0, qs = 0, ev = 0;
#define SW_QLOAD() (nst ? (int)(nst + ql++ % nld) : -1)
#define SW_QSTORE() (nst ? (int)(qs++ % nst) : -1)
    gs_pool *pw = gs_pool_create(kb, GS_MEM_SBUF, "w", 2 * nw, (uint64_t)(KT * WB) * es);
    gs_pool *pb = gs_pool_create(kb, GS_MEM_SBUF, "moving", 1, (uint64_t)(KT * TB) * es);
    gs_pool *ps = gs_pool_create(kb, GS_MEM_SBUF, "silu", 2, (uint64_t)TN * 4);
    gs_pool *ph = gs_pool_create(kb, GS_MEM_SBUF, "out", 2, (uint64_t)TN * es);
    gs_pool *pacc = gs_pool_create(kb, GS_MEM_PSUM, "acc", nw * pbufs, c->psum_bank_bytes);
    for (int64_t b0 = 0; b0 < T && gs_kb_ok(kb); b0 += TB) {
        int64_t tb = GS_MIN(TB, T - b0);
        /* K-tile kt of the block at free offset kt * tb */
        gs_tile bt = gs_tile_alloc(pb, dt, PK, (uint32_t)(KT * tb));
        for (int64_t kt = 0; kt < KT; kt++) {
            unsigned tk = (unsigned)GS_MIN(TK, K - kt * TK);
            gs_dma_copy(kb, gs_tile_view(&bt, 0, tk, (uint32_t)(kt * tb), (uint32_t)tb),
                        gs_hbm_rows(B, kt * TK, tk, b0, (uint32_t)tb), SW_QLOAD());
        }
        for (int64_t w0 = 0; w0 < M && gs_kb_ok(kb); w0 += WB) {
            uint32_t wb = (uint32_t)GS_MIN(WB, M - w0);
            /* weight block i: K-tile kt at free offset kt * wb */
            gs_tile w[2];
            for (unsigned i = 0; i < nw; i++) {
                w[i] = gs_tile_alloc(pw, dt, PK, (uint32_t)KT * wb);
                for (int64_t kt = 0; kt < KT; kt++) {
                    unsigned tk = (unsigned)GS_MIN(TK, K - kt * TK);
                    gs_dma_copy(kb, gs_tile_view(&w[i], 0, tk, (uint32_t)kt * wb, wb),
                                gs_hbm_rows(i ? W2 : W1, kt * TK, tk, w0, wb), SW_QLOAD());
                }
            }
            for (uint32_t j = 0; j < wb && gs_kb_ok(kb); j += (uint32_t)TF) {
                unsigned tf = (unsigned)GS_MIN(TF, (int64_t)(wb - j));
                int64_t f0 = w0 + j;
                for (int64_t n0 = 0; n0 < tb && gs_kb_ok(kb); n0 += TN) {
                    uint32_t tn = (uint32_t)GS_MIN(TN, tb - n0);
                    gs_tile acc[2];
                    for (unsigned i = 0; i < nw; i++)
                        acc[i] = gs_tile_alloc(pacc, GS_FP32, tf, tn);
                    for (int64_t kt = 0; kt < KT; kt++) {
                        unsigned tk = (unsigned)GS_MIN(TK, K - kt * TK);
                        gs_ap mv = gs_tile_view(&bt, 0, tk, (uint32_t)(kt * tb + n0), tn);
                        for (unsigned i = 0; i < nw; i++)
                            gs_matmul(kb, acc[i].ap,
                                      gs_tile_view(&w[i], 0, tk, (uint32_t)kt * wb + j, tf), mv,
                                      kt > 0);
                    }
                    gs_tile h = gs_tile_alloc(ph, dt, tf, tn);
                    if (W2) {
                        gs_tile sg = gs_tile_alloc(ps, GS_FP32, tf, tn);
                        gs_activation(kb, sg.ap, acc[0].ap, GS_ACT_SILU, gs_imm(1.0f), gs_imm(0.0f),
                                      NULL);
                        gs_tensor_tensor(kb, h.ap, sg.ap, acc[1].ap, GS_ALU_MUL);
                    } else {
                        gs_tensor_copy(kb, ev++ % 2 ? GS_ENG_SCALAR : GS_ENG_VECTOR, h.ap,
                                       acc[0].ap);
                    }
                    gs_dma_copy(kb, gs_hbm_rows(OUT, f0, tf, b0 + n0, tn), h.ap, SW_QSTORE());
                }
            }
        }
    }
#undef SW_QLOAD
#undef SW_QSTORE
    gs_pool_release(kb, pw);
}

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    if (!(c->matmul_dtypes & (1u << a->dtype)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED, "unsupported: %s matmul on this target",
                          gs_dtype_name(a->dtype));
    int64_t chunk = gs_kernel_param(a, "chunk", 2048), tn = gs_kernel_param(a, "tn", 512);
    if (chunk <= 0 || tn <= 0)
        return gs_kb_fail(kb, GS_ERR_INVALID, "swiglu_mlp: tn and chunk must be positive");
    int64_t T = a->dims[0], D = a->dims[1], F = a->dims[2];
    gs_mm_problem p;
    memset(&p, 0, sizeof p);
    p.act = GS_ACT_IDENTITY;
    if (a->variant == SW_FUSED) {
        proj_resident(kb, a, &a->t[T_XT], &a->t[T_WG], &a->t[T_WU], &a->t[T_HT], D, F);
        proj_resident(kb, a, &a->t[T_HT], &a->t[T_WD], NULL, &a->t[T_YT], F, D);
        return gs_kb_status(kb);
    }
    {
        p.b = &a->t[T_XT]; /* K = D, N = T */
        p.K = D;
        p.N = T;
        p.M = p.m_hi = F;
        p.at = &a->t[T_WG];
        p.c = &a->t[T_G];
        gs_mm_build(kb, &p, GS_MM_PIPELINED, a->param);
        p.at = &a->t[T_WU];
        p.c = &a->t[T_U];
        gs_mm_build(kb, &p, GS_MM_PIPELINED, a->param);
        swiglu_pass(kb, a);
    }
    /* down projection: YT [D x T] = Wd^T HT, Wd [F x D] stationary, HT [F x T] moving */
    p.at = &a->t[T_WD];
    p.b = &a->t[T_HT];
    p.c = &a->t[T_YT];
    p.K = F;
    p.N = T;
    p.M = p.m_hi = D;
    return gs_mm_build(kb, &p, GS_MM_PIPELINED, a->param);
}

static void decl(gs_tensor_decl *t, const char *name, gs_tensor_kind kind, gs_dtype dt, int64_t r,
                 int64_t cols)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->dtype = dt;
    t->ndim = 2;
    t->shape[0] = r;
    t->shape[1] = cols;
    t->lo = -1.0;
    t->hi = 1.0;
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 8) return -1;
    int64_t T = a->dims[0], D = a->dims[1], F = a->dims[2];
    if (T <= 0 || D <= 0 || F <= 0)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "swiglu_mlp: T, D, F must be positive"),
               -1;
    gs_dtype dt = a->dtype;
    decl(&t[T_XT], "XT", GS_TENSOR_INPUT, dt, D, T);
    decl(&t[T_WG], "Wg", GS_TENSOR_INPUT, dt, D, F);
    decl(&t[T_WU], "Wu", GS_TENSOR_INPUT, dt, D, F);
    decl(&t[T_WD], "Wd", GS_TENSOR_INPUT, dt, F, D);
    decl(&t[T_YT], "YT", GS_TENSOR_OUTPUT, dt, D, T);
    decl(&t[T_HT], "HT", GS_TENSOR_SCRATCH, dt, F, T);
    if (a->variant == SW_FUSED) return 6;
    decl(&t[T_G], "G", GS_TENSOR_SCRATCH, GS_FP32, F, T);
    decl(&t[T_U], "U", GS_TENSOR_SCRATCH, GS_FP32, F, T);
    return 8;
}

static double silu(double x)
{
    return x / (1.0 + exp(-x));
}

/* out[0] = YT, out[1] = HT, and for "unfused" out[2] = G, out[3] = U. */
static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    int64_t T = a->dims[0], D = a->dims[1], F = a->dims[2];
    double *g = a->variant == SW_UNFUSED ? out[2] : gs_malloc((size_t)(F * T) * sizeof(double));
    double *u = a->variant == SW_UNFUSED ? out[3] : gs_malloc((size_t)(F * T) * sizeof(double));
    if (!g || !u) {
        for (int64_t i = 0; i < D * T; i++) /* NaN: the check fails rather than passing */
            out[0][i] = NAN;
    } else {
        gs_ref_gemm(1, 0, F, T, D, in[T_WG], F, in[T_XT], T, g, T);
        gs_ref_gemm(1, 0, F, T, D, in[T_WU], F, in[T_XT], T, u, T);
        for (int64_t i = 0; i < F * T; i++)
            out[1][i] = silu(g[i]) * u[i];
        gs_ref_gemm(1, 0, D, T, F, in[T_WD], D, out[1], T, out[0], T);
    }
    if (a->variant != SW_UNFUSED) {
        gs_free(g);
        gs_free(u);
    }
}

/*
 * Tolerance (gs_kernel_def.error_bound), u = the dtype's unit roundoff, v = fp32's,
 * gam(n) = n v / (1 - n v) (the summation bound for n terms in any order), |W| the elementwise
 * absolute value:
 *   G, U: fp32 accumulation over D: |G' - G| <= eg = gam(D) (|Wg|^T |XT|), eu likewise.
 *   silu in fp32 (expf within one ulp, an add and a divide: SILU_REL v relative), its input
 *   off by eg, max |silu'| = SILU_LIP: |s - silu(G)| <= es = SILU_LIP eg + SILU_REL v (|silu(G)|
 *   + SILU_LIP eg).
 *   HT = rnd(fl32(s U')): |HT - silu(G) U| <= eh = (|silu G| + es) eu + |U| es
 *   + (v + u + uv)(|silu G| + es)(|U| + eu).
 *   YT: the stored HT carries eh into a second accumulation over F, then rounds:
 *   ey = |Wd|^T eh + gam(F) |Wd|^T (|HT| + eh), |YT - ref| <= ey + u (|ref| + ey).
 * Each rounding to the dtype adds its subnormal floor (gs_tol_floor). The bounds are on sums
 * of absolute values, never on the output's size: a column whose products cancel has a small
 * output and the full accumulation error.
 */
#define SILU_LIP 1.1 /* max silu'(x) = 1.0998 near x = 2.4 */
#define SILU_REL 5.0 /* expf (2v), 1 + e (v), x / (1 + e) (v), plus second-order terms */

static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    int64_t T = a->dims[0], D = a->dims[1], F = a->dims[2];
    const double u = gs_dtype_eps(a->dtype), v = gs_dtype_eps(GS_FP32);
    const double f = gs_tol_floor(a->dtype) + gs_tol_floor(GS_FP32);
    const double gD = (double)D * v / (1.0 - (double)D * v);
    const double gF = (double)F * v / (1.0 - (double)F * v);
    size_t nx = (size_t)(D * T), nw = (size_t)(D * F), nh = (size_t)(F * T);
    double *ax = gs_malloc(nx * sizeof(double)), *awg = gs_malloc(nw * sizeof(double));
    double *awu = gs_malloc(nw * sizeof(double)), *awd = gs_malloc(nw * sizeof(double));
    double *g = gs_malloc(nh * sizeof(double)), *uu = gs_malloc(nh * sizeof(double));
    double *ag = gs_malloc(nh * sizeof(double)), *au = gs_malloc(nh * sizeof(double));
    double *eh = gs_malloc(nh * sizeof(double)), *hh = gs_malloc(nh * sizeof(double));
    double *ey1 = gs_malloc(nx * sizeof(double)), *ey2 = gs_malloc(nx * sizeof(double));
    if (ax && awg && awu && awd && g && uu && ag && au && eh && hh && ey1 && ey2) {
        for (size_t i = 0; i < nx; i++)
            ax[i] = fabs(in[T_XT][i]);
        for (size_t i = 0; i < nw; i++) {
            awg[i] = fabs(in[T_WG][i]);
            awu[i] = fabs(in[T_WU][i]);
            awd[i] = fabs(in[T_WD][i]);
        }
        gs_ref_gemm(1, 0, F, T, D, in[T_WG], F, in[T_XT], T, g, T);
        gs_ref_gemm(1, 0, F, T, D, in[T_WU], F, in[T_XT], T, uu, T);
        gs_ref_gemm(1, 0, F, T, D, awg, F, ax, T, ag, T);
        gs_ref_gemm(1, 0, F, T, D, awu, F, ax, T, au, T);
        for (size_t i = 0; i < nh; i++) {
            const double eg = gD * ag[i], eu = gD * au[i], sg = fabs(silu(g[i]));
            const double es = SILU_LIP * eg + SILU_REL * v * (sg + SILU_LIP * eg) + f;
            eh[i] = (sg + es) * eu + fabs(uu[i]) * es +
                    (v + u + u * v) * (sg + es) * (fabs(uu[i]) + eu) + f;
            hh[i] = fabs(ref[1][i]) + eh[i];
            bound[1][i] = eh[i];
            if (a->variant == SW_UNFUSED) {
                bound[2][i] = eg + f;
                bound[3][i] = eu + f;
            }
        }
        gs_ref_gemm(1, 0, D, T, F, awd, D, eh, T, ey1, T);
        gs_ref_gemm(1, 0, D, T, F, awd, D, hh, T, ey2, T);
        for (size_t i = 0; i < nx; i++) {
            const double ey = ey1[i] + gF * ey2[i];
            bound[0][i] = ey + u * (fabs(ref[0][i]) + ey) + f;
        }
    }
    /* out of memory: the bounds stay 0 and the check fails rather than passing unchecked */
    gs_free(ax);
    gs_free(awg);
    gs_free(awu);
    gs_free(awd);
    gs_free(g);
    gs_free(uu);
    gs_free(ag);
    gs_free(au);
    gs_free(eh);
    gs_free(hh);
    gs_free(ey1);
    gs_free(ey2);
}

const gs_kernel_def gs_kernel_swiglu_mlp = {
    .name = "swiglu_mlp",
    .summary = "YT = Wd^T (silu(Wg^T XT) * (Wu^T XT)): SwiGLU feed-forward, fused or not",
    .n_dims = 3,
    .dim_names = {"T", "D", "F"},
    .n_variants = 2,
    .variants = {"unfused", "fused"},
    .n_params = 5,
    .param_names = {"tn", "bufs", "mb", "nb", "chunk"},
    .param_help = {"moving free size per matmul (0: largest a PSUM bank and the engine allow)",
                   "buffers per streamed pool of the pipelined matmuls (0: 2)",
                   "stationary block columns of the pipelined matmuls (0: what SBUF holds)",
                   "moving block columns of the pipelined matmuls (0: half of SBUF)",
                   "unfused: free elements per tile of the SwiGLU pass (0: 2048)"},
    .check_shapes = {{3, {128, 128, 256}}, {3, {37, 200, 131}}, {3, {1, 64, 1024}}},
    .perf_shapes = {{3, {2048, 2048, 8192}}, {3, {512, 4096, 11008}}},
    .dtypes = (1u << GS_BF16) | (1u << GS_FP32) | (1u << GS_FP16),
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
