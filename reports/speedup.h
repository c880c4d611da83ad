/*
 * speedup.h - cross-generation speedups from job records (results/RESULTS.md `jobs` elements).
 *
 * Jobs of two generations are matched by kernel, variant, dtype and shape (job ids carry the
 * generation, so ids never match across generations). A matched pair has a speedup when both
 * passed with a positive time: time on the base / time on the other (> 1: the other is faster).
 * When one generation ran a key several times (tuned params differ), the fastest passing run
 * stands for it. Geometric means are taken over the pairs with a speedup, overall and per kernel
 * class. Used by `gensweep compare --across` (cli/across.c) and by the report, so both give
 * the same numbers.
 */
#ifndef GS_SPEEDUP_H
#define GS_SPEEDUP_H

#include <cjson/cJSON.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_SPEEDUP_MAX_CLASSES 8

typedef struct gs_speedup_match {
    const cJSON *base, *other; /* the two job records */
    double speedup;            /* NAN unless both passed with a positive time */
} gs_speedup_match;

typedef struct gs_speedup_class {
    const char *name; /* gs_kernel_class() */
    int n;            /* pairs with a speedup */
    double geomean;   /* NAN when n == 0 */
    double min, max;
} gs_speedup_class;

typedef struct gs_speedup_pair {
    gs_speedup_match *m; /* matched keys, sorted by kernel, variant, dtype, shape */
    size_t n_match;
    size_t n_compared;      /* matches with a speedup */
    size_t n_base, n_other; /* distinct keys on each side */
    double geomean;         /* over the compared matches; NAN when none */
    gs_speedup_class cls[GS_SPEEDUP_MAX_CLASSES];
    int n_cls;
} gs_speedup_pair;

/* The match key of a job: "kernel/variant/dtype/AxBxC" into buf (truncated to n). */
void gs_speedup_key(const cJSON *job, char *buf, size_t n);

/* Kernel class for per-class summaries: "matmul" (matmul*, bmm, mlp), "attention",
 * "normalization" (softmax, layernorm, rmsnorm, reduce), "memory" (elementwise, transpose,
 * embedding, pooling, quantize) or "other". */
const char *gs_kernel_class(const char *kernel);

/*
 * Match the jobs of generation `base` against those of `other` among jobs[0..n) (job objects;
 * others are ignored). keep(job, ctx) may filter jobs (NULL: all). Returns 0, or -1 when out of
 * memory (out is then empty). Free with gs_speedup_pair_free.
 */
int gs_speedup_compare(const cJSON *const *jobs, size_t n, const char *base, const char *other,
                       int (*keep)(const cJSON *job, void *ctx), void *ctx, gs_speedup_pair *out);
void gs_speedup_pair_free(gs_speedup_pair *p); /* NULL ok */

/*
 * What-if steps: the points (value v[i], time t[i]) with both positive, sorted by value, and the
 * sensitivity of each step between neighbours, d ln(time) / d ln(value), into steps[] (n - 1
 * at most). *non_monotonic is set when time both rises and falls by more than 1 % over the
 * steps. expect says which way time should go as the value grows (gs_param_direction):
 * -1 never up (a resource: bytes, bandwidth, clock, counts), +1 never down (a cost: latency,
 * cycles), 0 unknown; *inversions counts the steps that go the other way by more than 1 %
 * (e.g. more SBUF making a job slower). Returns the number of steps (-1 when n exceeds
 * GS_SPEEDUP_MAX_STEPS + 1).
 */
#define GS_SPEEDUP_MAX_STEPS 63
int gs_sensitivity_steps(const double *v, const double *t, int n, int expect, double *steps,
                         int *non_monotonic, int *inversions);
/* Expected direction of time for a parameter unit as results files write it ("B", "B/ns",
 * "Hz", "count": -1; "ns", "cycles": +1; else 0). */
int gs_param_direction(const char *unit);

#ifdef __cplusplus
}
#endif
#endif
