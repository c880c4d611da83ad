/*
 * ap_geom.h - footprints of access patterns (ap.c), for the builder and its dependency tracker:
 * bounding boxes, whether a pattern is one contiguous run, row patterns and exact overlap.
 * Internal to hwmodels; pure functions of the patterns (no builder state).
 */
#ifndef GS_AP_GEOM_H
#define GS_AP_GEOM_H

#include "gs/isa.h"
#include "program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a / b rounded towards minus infinity (b != 0). */
static inline int64_t gs_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Min and max (inclusive) of sum(i_k * stride_k) over the free dims (and, for HBM, the
 * partition dim), in elements. Returns 0, or -1 when a product or sum does not fit in int64_t:
 * a pattern read from a program file can hold anything, and a wrapped sum would look like a
 * small box inside the tensor (the builder refuses such patterns, check_ap_fixed). */
static inline int gs_ap_extent(const gs_ap *a, int64_t *mn, int64_t *mx)
{
    int64_t lo = 0, hi = 0, span;
    int bad = 0;
    for (int k = 0; k < a->ndim; k++) {
        bad |= __builtin_mul_overflow((int64_t)a->shape[k] - 1, (int64_t)a->stride[k], &span);
        bad |= span < 0 ? __builtin_add_overflow(lo, span, &lo)
                        : __builtin_add_overflow(hi, span, &hi);
    }
    if (a->space == GS_MEM_HBM) {
        bad |= __builtin_mul_overflow((int64_t)a->part_count - 1, (int64_t)a->part_stride, &span);
        bad |= span < 0 ? __builtin_add_overflow(lo, span, &lo)
                        : __builtin_add_overflow(hi, span, &hi);
    }
    *mn = lo;
    *mx = hi;
    return bad ? -1 : 0;
}

/* Bounding box [lo, hi) of an access pattern in region units: bytes within a partition
 * (SBUF/PSUM) or elements (HBM). Returns 0, or -1 when the box does not fit in int64_t (then
 * lo and hi mean nothing; callers on patterns that passed the builder's checks never see it).
 * Inline: every operand of every instruction needs it (checks and tracking). */
static inline int gs_ap_bbox(const gs_ap *a, int64_t *lo, int64_t *hi)
{
    int64_t mn, mx;
    int bad = gs_ap_extent(a, &mn, &mx) != 0;
    if (a->space == GS_MEM_HBM) {
        bad |= __builtin_add_overflow(a->offset, mn, lo);
        bad |= __builtin_add_overflow(a->offset, mx, hi);
        bad |= __builtin_add_overflow(*hi, 1, hi);
    } else {
        int64_t es = (int64_t)gs_dtype_size(a->dtype);
        bad |= __builtin_mul_overflow(mn, es, &mn);
        bad |= __builtin_mul_overflow(mx, es, &mx);
        bad |= __builtin_add_overflow(a->offset, mn, lo);
        bad |= __builtin_add_overflow(a->offset, mx, hi);
        bad |= __builtin_add_overflow(*hi, es, hi);
    }
    return bad ? -1 : 0;
}

/* f's footprint facts (GS_FACT_FOOTPRINT: bounding box, partitions, dense) for pattern `a`,
 * computed unless already known; `a` must be a valid pattern (checked). Returns f. */
const gs_ap_facts *gs_ap_footprint_facts(const gs_ap *a, gs_ap_facts *f);
static inline const gs_ap_facts *gs_ap_footprint(const gs_ap *a, gs_ap_facts *f)
{
    return (f->known & GS_FACT_FOOTPRINT) ? f : gs_ap_footprint_facts(a, f);
}

/* A pattern as `rows` runs of `n` units, the first at `base`, one every `pitch` units (units:
 * elements in HBM, bytes in SBUF/PSUM; partitions of SBUF/PSUM are compared separately). */
typedef struct gs_row_pattern {
    int64_t base, pitch, n;
    int64_t rows;
} gs_row_pattern;
/* Describe the common shapes (one contiguous run per HBM partition-row, or up to two free dims
 * with a contiguous inner one) as row patterns; 0 for anything else. */
int gs_ap_as_rows(const gs_ap *a, gs_row_pattern *r);
/* Exact overlap of two row patterns with the same pitch, in O(1); -1 when the pitches differ
 * (not decided here). */
int gs_rows_overlap(const gs_row_pattern *x, const gs_row_pattern *y);
/* Whether two patterns of the same region whose bounding boxes overlap share an element: exact
 * when both have at most a few thousand contiguous runs, else 1 (conservative). Not
 * reentrant (shared scratch buffers), like the builder. */
int gs_ap_overlap_exact(const gs_ap *a, const gs_ap *b);

#ifdef __cplusplus
}
#endif
#endif
