/*
 * matmul.h - the matmul schedules (the optimisation ladder) shared by the matmul-family kernels
 * (matmul, bmm, mlp, matmul_fp8). Sees only gs/kernel.h, like every kernel.
 *
 * A problem is C[M x N] = AT^T x B with AT [K x M] and B [K x N] (2-D views of HBM tensors,
 * starting at given rows so a batched kernel can address one batch), optionally followed by an
 * epilogue applied while PSUM is evacuated: C = act(acc + bias[m]) with bias an [M x 1] tensor
 * (a per-partition operand, because output rows are partitions).
 */
#ifndef GS_KERNELS_MATMUL_H
#define GS_KERNELS_MATMUL_H

#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ladder, in order; each is a different schedule (matmul.c says how). */
typedef enum gs_mm_schedule {
    GS_MM_NAIVE,     /* reload both operands for every output tile and K-tile */
    GS_MM_HOISTED,   /* an AT column panel [K x TM] loaded once per M tile */
    GS_MM_BLOCKED,   /* AT and B blocks resident in SBUF, single-buffered */
    GS_MM_PIPELINED, /* blocks + double-buffered AT, queues split loads/stores, stationary reuse */
    GS_MM_SCHEDULE_COUNT
} gs_mm_schedule;

/* Tunables (indices into gs_kernel_args.param; 0 = derive from the capabilities). */
enum { GS_MM_P_TN, GS_MM_P_BUFS, GS_MM_P_MB, GS_MM_P_NB, GS_MM_N_PARAMS };

typedef struct gs_mm_problem {
    const gs_tensor *at, *b, *c;
    int64_t at_row0, b_row0, c_row0; /* first row of this problem in each tensor's 2-D view */
    int64_t M, K, N;
    int64_t m_lo, m_hi;    /* rows of C this invocation computes (SPMD shards M) */
    const gs_tensor *bias; /* NULL, or [M x 1] added per output row before `act` */
    gs_act act;            /* epilogue function (GS_ACT_IDENTITY with no bias: plain copy) */
} gs_mm_problem;

/* Issue one problem with schedule s and tunables param[GS_MM_N_PARAMS]. Errors (unsupported
 * dtype, does not fit, bad tunables) are recorded in kb and returned. The SBUF/PSUM pools it
 * creates are released before it returns, so it may be called once per batch. */
gs_status gs_mm_build(gs_kb *kb, const gs_mm_problem *p, gs_mm_schedule s, const int64_t *param);

/* Rows [lo, hi) of M that core `core` of `cores` owns when M is sharded in whole tiles of tm
 * rows (empty, lo == hi, for cores past the work). */
void gs_mm_shard(int64_t M, int64_t tm, unsigned cores, unsigned core, int64_t *lo, int64_t *hi);

/* The reference: c[M x N] = at[K x M]^T x b[K x N] in double (row-major). */
void gs_mm_reference(int64_t M, int64_t K, int64_t N, const double *at, const double *b, double *c);

#ifdef __cplusplus
}
#endif
#endif
