/*
 * selective_scan.c - the Mamba selective scan (S6) of one sequence, channels on partitions:
 *
 *   h_t[c,n] = exp(dt[c,t] A[c,n]) h_{t-1}[c,n] + dt[c,t] B[n,t] x[c,t],   h_{-1} = 0
 *   y[c,t]   = sum_n C[n,t] h_t[c,n] + D[c] x[c,t]
 *
 * X, DT, Y [C x L] (channels x sequence), A [C x N] (N the state size), B, Cm [N x L] (shared
 * by every channel: each row n is broadcast to the channel tile's partitions by a DMA whose
 * partition stride is 0), D [C x 1]. Channel tiles of `partitions` rows; the sequence in chunks
 * of `chunk` elements, the state carried from chunk to chunk in an [np x N] column tile.
 * Per chunk and state n: dA = exp(dt * A[:,n]) on the scalar engine (A a per-partition scale),
 * dBx = (dt x) * B[n] on the vector engine, then the recurrence, then y += C[n] * h.
 *
 * Variants (how the recurrence runs):
 *   loop  one tensor_scalar per time step, h_t = dA_t * h_{t-1} + dBx_t with the two
 *         per-partition columns as operands: chunk x N instructions per chunk, each paying the
 *         vector engine's fixed instruction cost for one element per lane.
 *   scan  one tensor_tensor_scan (op0 mul, op1 add) per chunk and state along the sequence,
 *         the carried state as its per-partition initial; unsupported where the target lacks
 *         the instruction (gen1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gs/kernel.h"
#include "kernel_util.h"

static gs_status build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_caps *c = gs_kb_caps(kb);
    const gs_tensor *X = &a->t[0], *DT = &a->t[1], *A = &a->t[2], *B = &a->t[3], *Cm = &a->t[4],
                    *D = &a->t[5], *Y = &a->t[6];
    const int64_t CH = a->dims[0], L = a->dims[1], N = a->dims[2];
    const int scan = a->variant == 1;
    if (scan && !(c->ops & (1ull << GS_OP_TENSOR_TENSOR_SCAN)))
        return gs_kb_fail(kb, GS_ERR_UNSUPPORTED,
                          "unsupported: tensor_tensor_scan on this target (variant scan)");
    int64_t chunk = gs_kernel_param(a, "chunk", 0);
    if (chunk < 0) return gs_kb_fail(kb, GS_ERR_INVALID, "selective_scan: chunk must be >= 0");
    if (chunk == 0) chunk = 512;
    chunk = GS_MIN(GS_MIN(chunk, L), (int64_t)c->max_free_sbuf);
    const uint64_t row = (uint64_t)chunk * 4u;
    gs_pool *pcol = gs_pool_create(kb, GS_MEM_SBUF, "cols", 6, (uint64_t)N * 4u);
    gs_pool *pin = gs_pool_create(kb, GS_MEM_SBUF, "in", 4, row);
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", 2, row);
    gs_pool *pstate = gs_pool_create(kb, GS_MEM_SBUF, "state", 12, row);
    for (int64_t c0 = 0; c0 < CH && gs_kb_ok(kb); c0 += c->partitions) {
        const unsigned np = (unsigned)GS_MIN((int64_t)c->partitions, CH - c0);
        gs_tile tA = gs_tile_alloc(pcol, GS_FP32, np, (uint32_t)N);
        gs_tile tD = gs_tile_alloc(pcol, GS_FP32, np, 1);
        gs_tile carry = gs_tile_alloc(pcol, GS_FP32, np, (uint32_t)N);
        gs_dma_copy(kb, tA.ap, gs_hbm_rows(A, c0, np, 0, (uint32_t)N), -1);
        gs_dma_copy(kb, tD.ap, gs_hbm_rows(D, c0, np, 0, 1), -1);
        for (int64_t t0 = 0; t0 < L && gs_kb_ok(kb); t0 += chunk) {
            const uint32_t nf = (uint32_t)GS_MIN(chunk, L - t0);
            gs_tile tx = gs_tile_alloc(pin, GS_FP32, np, nf);
            gs_tile tdt = gs_tile_alloc(pin, GS_FP32, np, nf);
            gs_dma_copy(kb, tx.ap, gs_hbm_rows(X, c0, np, t0, nf), -1);
            gs_dma_copy(kb, tdt.ap, gs_hbm_rows(DT, c0, np, t0, nf), -1);
            gs_tile dtx = gs_tile_alloc(py, GS_FP32, np, nf);
            gs_tile ty = gs_tile_alloc(py, GS_FP32, np, nf);
            gs_tensor_tensor(kb, dtx.ap, tdt.ap, tx.ap, GS_ALU_MUL);
            gs_tensor_scalar(kb, GS_ENG_VECTOR, ty.ap, tx.ap, GS_ALU_MUL,
                             gs_per_partition(gs_tile_view(&tD, 0, np, 0, 1)), GS_ALU_BYPASS,
                             gs_imm(0.0f));
            for (int64_t n = 0; n < N && gs_kb_ok(kb); n++) {
                const uint32_t shape[1] = {nf};
                const int64_t stride[1] = {1};
                gs_tile tb = gs_tile_alloc(pstate, GS_FP32, np, nf);
                gs_tile tc = gs_tile_alloc(pstate, GS_FP32, np, nf);
                gs_dma_copy(kb, tb.ap, gs_hbm_ap(B, n * L + t0, np, 0, 1, shape, stride), -1);
                gs_dma_copy(kb, tc.ap, gs_hbm_ap(Cm, n * L + t0, np, 0, 1, shape, stride), -1);
                gs_tile da = gs_tile_alloc(pstate, GS_FP32, np, nf);
                gs_activation(kb, da.ap, tdt.ap, GS_ACT_EXP,
                              gs_per_partition(gs_tile_view(&tA, 0, np, (uint32_t)n, 1)),
                              gs_imm(0.0f), NULL);
                gs_tile dbx = gs_tile_alloc(pstate, GS_FP32, np, nf);
                gs_tensor_tensor(kb, dbx.ap, dtx.ap, tb.ap, GS_ALU_MUL);
                gs_ap cn = gs_tile_view(&carry, 0, np, (uint32_t)n, 1);
                gs_tile h = gs_tile_alloc(pstate, GS_FP32, np, nf);
                if (scan) {
                    gs_tensor_tensor_scan(kb, h.ap, da.ap, dbx.ap,
                                          t0 == 0 ? gs_imm(0.0f) : gs_per_partition(cn), GS_ALU_MUL,
                                          GS_ALU_ADD);
                } else {
                    for (uint32_t t = 0; t < nf && gs_kb_ok(kb); t++) {
                        gs_operand prev = t > 0
                                              ? gs_per_partition(gs_tile_view(&h, 0, np, t - 1, 1))
                                          : t0 > 0 ? gs_per_partition(cn)
                                                   : gs_imm(0.0f);
                        gs_tensor_scalar(kb, GS_ENG_VECTOR, gs_tile_view(&h, 0, np, t, 1),
                                         gs_tile_view(&da, 0, np, t, 1), GS_ALU_MUL, prev,
                                         GS_ALU_ADD,
                                         gs_per_partition(gs_tile_view(&dbx, 0, np, t, 1)));
                    }
                }
                if (t0 + nf < L)
                    gs_tensor_copy(kb, GS_ENG_VECTOR, cn, gs_tile_view(&h, 0, np, nf - 1, 1));
                gs_tile ch = gs_tile_alloc(pstate, GS_FP32, np, nf);
                gs_tensor_tensor(kb, ch.ap, h.ap, tc.ap, GS_ALU_MUL);
                gs_tensor_tensor(kb, ty.ap, ty.ap, ch.ap, GS_ALU_ADD);
            }
            gs_dma_copy(kb, gs_hbm_rows(Y, c0, np, t0, nf), ty.ap, -1);
        }
    }
    return gs_kb_status(kb);
}

static int tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    if (max < 7) return -1;
    const int64_t C = a->dims[0], L = a->dims[1], N = a->dims[2];
    if (C <= 0 || L <= 0 || N <= 0 || N > 256)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "selective_scan: C and L must be positive and N in [1, 256]"),
               -1;
    if (a->dtype != GS_FP32)
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "selective_scan: fp32 only (the recurrence is carried in fp32)"),
               -1;
    struct {
        const char *name;
        int64_t r, c;
        double lo, hi;
    } d[7] = {{"X", C, L, -1.0, 1.0}, {"DT", C, L, 0.001, 0.1}, {"A", C, N, -8.0, -0.5},
              {"B", N, L, -1.0, 1.0}, {"Cm", N, L, -1.0, 1.0},  {"D", C, 1, -1.0, 1.0},
              {"Y", C, L, 0.0, 0.0}};
    for (int i = 0; i < 7; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", d[i].name);
        t[i].kind = i < 6 ? GS_TENSOR_INPUT : GS_TENSOR_OUTPUT;
        t[i].dtype = GS_FP32;
        t[i].ndim = 2;
        t[i].shape[0] = d[i].r;
        t[i].shape[1] = d[i].c;
        t[i].lo = d[i].lo;
        t[i].hi = d[i].hi;
    }
    return 7;
}

/* The recurrence in double (bound = NULL), or, with bound set, the per-element error bound
 * below from the same double values. */
static void scan_ref(const gs_kernel_args *a, const double *const *in, double *y, double *bound)
{
    const int64_t C = a->dims[0], L = a->dims[1], N = a->dims[2];
    const double *x = in[0], *dt = in[1], *A = in[2], *B = in[3], *Cm = in[4], *D = in[5];
    const double v = gs_dtype_eps(GS_FP32), f = gs_tol_floor(GS_FP32);
    for (int64_t c = 0; c < C; c++) {
        for (int64_t t = 0; t < L; t++) {
            const double dx = D[c] * x[c * L + t];
            y[c * L + t] = dx;
            if (bound) bound[c * L + t] = (N + 2) * v * fabs(dx) + f;
        }
        for (int64_t n = 0; n < N; n++) {
            double h = 0.0, e = 0.0;
            for (int64_t t = 0; t < L; t++) {
                const double arg = dt[c * L + t] * A[c * N + n], da = exp(arg);
                const double b = dt[c * L + t] * x[c * L + t] * B[n * L + t];
                const double ah = da * h;
                /* e: a bound on |h_kernel - h|. dA carries the rounding of its argument
                 * through exp (slope dA) and exp's own 2v; b two fp32 products (2v, 3v kept);
                 * the step rounds dA h and the sum (v each), and dA <= 1 carries e forward. */
                e = da * e + da * (v * fabs(arg) + 2.0 * v) * fabs(h) + v * fabs(ah) +
                    v * (fabs(ah) + fabs(b)) + 3.0 * v * fabs(b) + f;
                h = ah + b;
                const double ch = Cm[n * L + t] * h;
                y[c * L + t] += ch;
                /* the product's error |C| e + v |C h|, and its share of the fp32 sum of N + 1
                 * terms, (N + 1) v |C h| (the summation bound) */
                if (bound) bound[c * L + t] += fabs(Cm[n * L + t]) * e + (N + 2) * v * fabs(ch) + f;
            }
        }
    }
}

static void reference(const gs_kernel_args *a, const double *const *in, double *const *out)
{
    scan_ref(a, in, out[0], NULL);
}

/*
 * Tolerance (gs_kernel_def.error_bound), v = fp32's unit roundoff. The state's error e_t obeys
 * e_t <= dA_t e_{t-1} + (the step's new roundings), dA_t = exp(dt A) in (0, 1]: the bound grows
 * with the sequence length (linearly at worst, when dA is near 1 and nothing decays) and is
 * computed along the same recurrence as the reference, so a long sequence gets the bound its
 * recurrence earns rather than a fixed multiple of v. See scan_ref for the terms; the output
 * adds |C| e per state and the fp32 summation of its N + 1 terms.
 */
static void error_bound(const gs_kernel_args *a, const double *const *in, const double *const *ref,
                        double *const *bound)
{
    (void)ref;
    const int64_t n = a->dims[0] * a->dims[1];
    double *tmp = (double *)malloc((size_t)n * sizeof *tmp);
    if (!tmp) {
        for (int64_t i = 0; i < n; i++)
            bound[0][i] = INFINITY;
        return;
    }
    scan_ref(a, in, tmp, bound[0]);
    free(tmp);
}

const gs_kernel_def gs_kernel_selective_scan = {
    .name = "selective_scan",
    .summary = "Mamba selective scan: h = exp(dt A) h + dt B x, y = C . h + D x",
    .n_dims = 3,
    .dim_names = {"C", "L", "N"},
    .n_variants = 2,
    .variants = {"loop", "scan"},
    .n_params = 1,
    .param_names = {"chunk"},
    .param_help = {"sequence elements per chunk (0: 512)"},
    .check_shapes = {{3, {128, 64, 4}},
                     {3, {131, 97, 3}},
                     {3, {1, 1031, 2}},
                     {3, {200, 600, 16}},
                     {3, {1, 8191, 2}}},
    .perf_shapes = {{3, {2048, 1024, 16}}, {3, {5120, 512, 16}}},
    .dtypes = 1u << GS_FP32,
    .tensors = tensors,
    .build = build,
    .reference = reference,
    .error_bound = error_bound,
};
