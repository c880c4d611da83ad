/*
 * ap.c - geometry of access patterns (gs/isa.h): sizes and contiguity, what the cost model
 * needs to count bytes and DMA descriptors; and footprints, what the builder's dependency
 * tracker (deps.c) needs to tell whether two accesses overlap (ap_geom.h). Pure functions of
 * the patterns: nothing here knows the builder. Validation and formatting of patterns live in
 * isa.c.
 */
#include "ap_geom.h"

#include <stdlib.h>

#define RUN_LIMIT 4096 /* runs per pattern compared exactly (beyond: bounding boxes) */

uint64_t gs_ap_free_elems(const gs_ap *a)
{
    if (!a || a->ndim == 0 || a->ndim > GS_AP_MAX_DIMS) return 0;
    uint64_t n = 1;
    for (unsigned k = 0; k < a->ndim; k++)
        n *= a->shape[k];
    return n;
}

uint64_t gs_ap_bytes(const gs_ap *a)
{
    if (!a) return 0;
    return (uint64_t)a->part_count * gs_ap_free_elems(a) * gs_dtype_size(a->dtype);
}

/*
 * A row is a set of equal-length contiguous runs: grow the contiguous block from the innermost
 * dimension outwards while each dimension's stride equals the block length so far (size-1
 * dimensions never break contiguity); runs = elements / block. An innermost stride other than
 * 1 (strided, reversed or broadcast) makes every element its own run.
 */
uint64_t gs_ap_runs_per_row(const gs_ap *a)
{
    uint64_t elems = gs_ap_free_elems(a);
    if (elems == 0) return 0;
    uint64_t block = 1;
    for (int k = (int)a->ndim - 1; k >= 0; k--) {
        if (a->shape[k] == 1) continue;
        if (a->stride[k] != (int64_t)block) break;
        block *= a->shape[k];
    }
    return elems / block;
}

/* ---- footprints ---- */

typedef struct run {
    int64_t lo, hi; /* [lo, hi) in bytes (SBUF/PSUM, within a partition) or elements (HBM) */
} run;

static int cmp_run(const void *x, const void *y)
{
    const run *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Enumerate the contiguous runs of a pattern (sorted, merged). Returns the count, or -1 if it
 * would exceed `limit`. */
static long ap_runs(const gs_ap *a, run *out, long limit)
{
    /* dims as (shape, stride) including HBM's partition dim as the outermost */
    uint32_t shape[GS_AP_MAX_DIMS + 1];
    int64_t stride[GS_AP_MAX_DIMS + 1];
    int nd = 0;
    if (a->space == GS_MEM_HBM) {
        shape[nd] = a->part_count;
        stride[nd++] = a->part_stride;
    }
    for (int k = 0; k < a->ndim; k++) {
        shape[nd] = a->shape[k];
        stride[nd++] = a->stride[k];
    }
    int64_t unit = a->space == GS_MEM_HBM ? 1 : (int64_t)gs_dtype_size(a->dtype);
    int64_t base = a->offset;
    /* the innermost dim is one run if its stride is 1 */
    int64_t inner_len = 1;
    int inner_dims = nd;
    if (nd > 0 && stride[nd - 1] == 1) {
        inner_len = shape[nd - 1];
        inner_dims = nd - 1;
    }
    long count = 1;
    for (int k = 0; k < inner_dims; k++) {
        if (count > limit / (long)GS_MAX(shape[k], 1u)) return -1;
        count *= (long)shape[k];
    }
    if (count > limit) return -1;
    uint32_t idx[GS_AP_MAX_DIMS + 1] = {0};
    for (long r = 0; r < count; r++) {
        int64_t off = 0;
        for (int k = 0; k < inner_dims; k++)
            off += (int64_t)idx[k] * stride[k];
        if (a->space == GS_MEM_HBM) {
            out[r].lo = base + off;
            out[r].hi = base + off + inner_len;
        } else {
            out[r].lo = base + off * unit;
            out[r].hi = base + (off + inner_len) * unit;
        }
        for (int k = inner_dims - 1; k >= 0; k--) {
            if (++idx[k] < shape[k]) break;
            idx[k] = 0;
        }
    }
    /* row-major patterns with increasing strides enumerate their runs in order already */
    int sorted = 1;
    for (long r = 1; r < count && sorted; r++)
        sorted = out[r - 1].lo <= out[r].lo;
    if (!sorted) qsort(out, (size_t)count, sizeof *out, cmp_run);
    long m = 0;
    for (long r = 0; r < count; r++) {
        if (m > 0 && out[r].lo <= out[m - 1].hi) {
            if (out[r].hi > out[m - 1].hi) out[m - 1].hi = out[r].hi;
        } else {
            out[m++] = out[r];
        }
    }
    return m;
}

static run g_runs_a[RUN_LIMIT], g_runs_b[RUN_LIMIT];

/* Exact overlap when both run lists are small, else bounding boxes (already known to overlap). */
int gs_ap_overlap_exact(const gs_ap *a, const gs_ap *b)
{
    long na = ap_runs(a, g_runs_a, RUN_LIMIT);
    if (na < 0) return 1;
    long nb = ap_runs(b, g_runs_b, RUN_LIMIT);
    if (nb < 0) return 1;
    long i = 0, j = 0;
    while (i < na && j < nb) {
        if (g_runs_a[i].hi <= g_runs_b[j].lo)
            i++;
        else if (g_runs_b[j].hi <= g_runs_a[i].lo)
            j++;
        else
            return 1;
    }
    return 0;
}

/* Whether the pattern is one contiguous run: ap_runs(a, ..., 2) == 1, without enumerating
 * when the count of unmerged runs decides it (0: none; 1: one; over 2: more than ap_runs
 * enumerates). Only a count of exactly 2 (two runs that may touch) is enumerated. The count is
 * ap_runs' own, step by step. */
static int is_dense(const gs_ap *a)
{
    uint32_t shape[GS_AP_MAX_DIMS + 1];
    int64_t stride[GS_AP_MAX_DIMS + 1];
    int nd = 0;
    if (a->space == GS_MEM_HBM) {
        shape[nd] = a->part_count;
        stride[nd++] = a->part_stride;
    }
    for (int k = 0; k < a->ndim; k++) {
        shape[nd] = a->shape[k];
        stride[nd++] = a->stride[k];
    }
    const int inner_dims = nd > 0 && stride[nd - 1] == 1 ? nd - 1 : nd;
    long count = 1;
    for (int k = 0; k < inner_dims; k++) {
        if (count > 2 / (long)GS_MAX(shape[k], 1u)) return 0;
        count *= (long)shape[k];
    }
    if (count != 2) return count == 1;
    return ap_runs(a, g_runs_a, 2) == 1;
}

const gs_ap_facts *gs_ap_footprint_facts(const gs_ap *a, gs_ap_facts *f)
{
    if (f->known & GS_FACT_FOOTPRINT) return f;
    if (a->space == GS_MEM_HBM) {
        f->p0 = 0;
        f->p1 = 1;
    } else {
        f->p0 = a->part_start;
        f->p1 = a->part_start + a->part_count;
    }
    (void)gs_ap_bbox(a, &f->lo, &f->hi); /* fits: `a` passed check_ap_fixed */
    f->dense = (uint8_t)is_dense(a);
    f->known |= GS_FACT_FOOTPRINT;
    return f;
}

/* Describe the common shapes (one contiguous run per HBM partition-row, or up to two free dims
 * with a contiguous inner one) as row patterns; 0 for anything else. */
int gs_ap_as_rows(const gs_ap *a, gs_row_pattern *r)
{
    const int hbm = a->space == GS_MEM_HBM;
    const int64_t unit = hbm ? 1 : (int64_t)gs_dtype_size(a->dtype);
    const int nd = a->ndim;
    if (nd < 1 || nd > 2) return 0;
    const uint32_t inner = a->shape[nd - 1];
    if (inner > 1 && a->stride[nd - 1] != 1) return 0;
    r->base = a->offset;
    r->n = (int64_t)inner * unit;
    if (nd == 1) {
        r->rows = hbm ? a->part_count : 1;
        r->pitch = hbm ? a->part_stride : 0;
    } else {
        if (hbm && a->part_count > 1) return 0;
        r->rows = a->shape[0];
        r->pitch = a->stride[0] * unit;
    }
    if (r->rows > 1 && r->pitch <= 0) return 0;
    return 1;
}

/* Exact overlap of two row patterns with the same pitch, in O(1): runs of row i of x and row j
 * of y intersect iff d - n_x < k * pitch < d + n_y with d = base_y - base_x and k = i - j.
 * Returns -1 when the pitches differ (not decided here). */
int gs_rows_overlap(const gs_row_pattern *x, const gs_row_pattern *y)
{
    int64_t pitch = x->rows > 1 ? x->pitch : y->pitch;
    if (x->rows > 1 && y->rows > 1 && x->pitch != y->pitch) return -1;
    const int64_t d = y->base - x->base;
    const int64_t kmin = -(y->rows - 1), kmax = x->rows - 1;
    if (kmin == 0 && kmax == 0) return d - x->n < 0 && 0 < d + y->n;
    int64_t k = gs_floor_div(d - x->n, pitch) + 1; /* smallest k with k * pitch > d - n_x */
    if (k < kmin) k = kmin;
    return k <= kmax && k * pitch < d + y->n;
}
