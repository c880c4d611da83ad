/*
 * kernel_util.h - small helpers shared by the kernels (written against gs/kernel.h only).
 */
#ifndef GS_KERNEL_UTIL_H
#define GS_KERNEL_UTIL_H

#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The engine for a kernel's elementwise work from its `engine` param: 0 = the kernel's default
 * `dflt`, 1 vector, 2 scalar, 3 gpsimd. A gpsimd choice on a target without one is
 * "unsupported"; any other value is an invalid-parameter error naming `kernel`. Errors carry the
 * caller's source line.
 */
#define gs_pick_engine(kb, kernel, param, dflt, out)                                               \
    gs_pick_engine_at((kb), __FILE__, __LINE__, (kernel), (param), (dflt), (out))
gs_status gs_pick_engine_at(gs_kb *kb, const char *file, int line, const char *kernel,
                            int64_t param, gs_engine dflt, gs_engine *out);

/*
 * Split a row of w elements into chunks for a kernel that keeps `slots` per-chunk partials of
 * each row in one instruction's free dimension (so slots x chunks <= caps.max_free_sbuf, and a
 * chunk is at most max_free_sbuf). given > 0 is the caller's `chunk` param, else dflt is the
 * kernel's preferred size, raised when the row needs larger chunks. Sets *chunk and *nch and
 * returns GS_OK; otherwise fails the build: does-not-fit when even chunks of max_free_sbuf are
 * too many (a limit of the target), invalid when the caller's chunk is too small.
 */
#define gs_row_chunks(kb, kernel, w, given, dflt, slots, chunk, nch)                               \
    gs_row_chunks_at((kb), __FILE__, __LINE__, (kernel), (w), (given), (dflt), (slots), (chunk),   \
                     (nch))
gs_status gs_row_chunks_at(gs_kb *kb, const char *file, int line, const char *kernel, int64_t w,
                           int64_t given, int64_t dflt, unsigned slots, int64_t *chunk,
                           int64_t *nch);

/*
 * Tolerances (gs_kernel_def.error_bound): rounding a value x to dtype t is off by at most
 * gs_dtype_eps(t) |x| + gs_tol_floor(t), the second term being half the spacing of t's
 * subnormals (where a relative bound fails: an fp16 result of 2e-6 is off by up to 3e-8).
 */
static inline double gs_tol_floor(gs_dtype t)
{
    switch (t) {
    case GS_FP32:
        return 0x1p-150; /* smallest subnormal 2^-149 */
    case GS_BF16:
        return 0x1p-134; /* fp32's exponent range, 7 fraction bits */
    case GS_FP16:
        return 0x1p-25;
    case GS_FP8_E4M3:
        return 0x1p-10;
    case GS_FP8_E5M2:
        return 0x1p-17;
    default:
        return 0.0; /* integers: exact */
    }
}

/* The bound on rounding x to t (above). */
static inline double gs_tol_round(gs_dtype t, double x)
{
    return gs_dtype_eps(t) * (x < 0 ? -x : x) + gs_tol_floor(t);
}

/*
 * Reference products in double: c[M x N] = op(a) x op(b) (row-major; ta/tb nonzero = the operand
 * is stored transposed, lda/ldb/ldc are row pitches). Computed with cblas_dgemm: the data path
 * multiplies through sgemm in fp32 (hwmodels exec), so the double reference stays an independent
 * computation on the same rounded inputs. The result differs from a plain triple loop only by
 * the order of the double additions.
 */
void gs_ref_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const double *a, int64_t lda,
                 const double *b, int64_t ldb, double *c, int64_t ldc);

/*
 * Use the scalar triple loop instead of dgemm in gs_ref_gemm (process-wide; tests). The
 * environment variable GS_BASELINE_PATHS (=1, =all, or a list naming "reference") does the same
 * for a whole process: `gensweep bench` measures the old path against the new one that way.
 */
void gs_ref_set_scalar(int on);

#ifdef __cplusplus
}
#endif
#endif
