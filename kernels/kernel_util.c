/* kernel_util.c - helpers shared by the kernels (see kernel_util.h). */
#include "kernel_util.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

gs_status gs_pick_engine_at(gs_kb *kb, const char *file, int line, const char *kernel,
                            int64_t param, gs_engine dflt, gs_engine *out)
{
    switch (param) {
    case 0:
        *out = dflt;
        return GS_OK;
    case 1:
        *out = GS_ENG_VECTOR;
        return GS_OK;
    case 2:
        *out = GS_ENG_SCALAR;
        return GS_OK;
    case 3:
        if (!gs_kb_caps(kb)->has_gpsimd)
            return gs_kb_fail_at(kb, file, line, GS_ERR_UNSUPPORTED,
                                 "unsupported: engine=3 (gpsimd) but the target has no gpsimd "
                                 "engine");
        *out = GS_ENG_GPSIMD;
        return GS_OK;
    default:
        return gs_kb_fail_at(kb, file, line, GS_ERR_INVALID,
                             "%s: engine=%lld (use 1 vector, 2 scalar, 3 gpsimd)", kernel,
                             (long long)param);
    }
}

gs_status gs_row_chunks_at(gs_kb *kb, const char *file, int line, const char *kernel, int64_t w,
                           int64_t given, int64_t dflt, unsigned slots, int64_t *chunk,
                           int64_t *nch)
{
    const int64_t lim = (int64_t)gs_kb_caps(kb)->max_free_sbuf;
    const int64_t max_chunks = slots ? lim / slots : lim;
    int64_t c = GS_MIN(GS_MIN(given > 0 ? given : dflt, w), lim);
    if (c < 1) c = 1;
    /* the kernel's own size grows until the partials fit (never past the engine's limit) */
    if (given <= 0 && max_chunks > 0 && (w + c - 1) / c > max_chunks)
        c = GS_MIN(lim, (w + max_chunks - 1) / max_chunks);
    int64_t n = (w + c - 1) / c;
    *chunk = c;
    *nch = n;
    if (max_chunks > 0 && n <= max_chunks) return GS_OK;
    if (given > 0 && given < lim)
        return gs_kb_fail_at(kb, file, line, GS_ERR_INVALID,
                             "%s: chunk=%lld gives %lld chunks per row, more than the %lld an "
                             "instruction holds; use a larger chunk",
                             kernel, (long long)given, (long long)n, (long long)max_chunks);
    return gs_kb_fail_at(kb, file, line, GS_ERR_DOES_NOT_FIT,
                         "does not fit: a row of %lld elements needs %lld chunks of at most %lld "
                         "elements; one instruction holds the partials of %lld "
                         "(caps.max_free_sbuf %lld, %u per chunk)",
                         (long long)w, (long long)n, (long long)c, (long long)max_chunks,
                         (long long)lim, slots);
}

/* -1: not decided yet (GS_BASELINE_PATHS=1, =all or naming "reference" in the environment,
 * read once: `gensweep bench` measures the old path in child processes that way); never set by
 * a kernel. */
static int ref_scalar = -1;

void gs_ref_set_scalar(int on)
{
    ref_scalar = on;
}

static void gemm_scalar(int ta, int tb, int64_t M, int64_t N, int64_t K, const double *a,
                        int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc)
{
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
            c[m * ldc + n] = 0.0;
    for (int64_t k = 0; k < K; k++)
        for (int64_t m = 0; m < M; m++) {
            double av = ta ? a[k * lda + m] : a[m * lda + k];
            double *cr = c + m * ldc;
            if (tb)
                for (int64_t n = 0; n < N; n++)
                    cr[n] += av * b[n * ldb + k];
            else
                for (int64_t n = 0; n < N; n++)
                    cr[n] += av * b[k * ldb + n];
        }
}

void gs_ref_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const double *a, int64_t lda,
                 const double *b, int64_t ldb, double *c, int64_t ldc)
{
    if (M <= 0 || N <= 0) return;
    /* cblas takes int sizes; a problem beyond them (never a check shape) uses the loop */
    int fits = M <= INT_MAX && N <= INT_MAX && K <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX &&
               ldc <= INT_MAX;
    if (ref_scalar < 0) {
        const char *env = getenv("GS_BASELINE_PATHS");
        ref_scalar = env && (!strcmp(env, "1") || !strcmp(env, "all") || strstr(env, "reference"));
    }
    if (ref_scalar || !fits || K <= 0) {
        gemm_scalar(ta, tb, M, N, K, a, lda, b, ldb, c, ldc);
        return;
    }
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)K, 1.0, a, (int)lda, b, (int)ldb, 0.0, c, (int)ldc);
}
