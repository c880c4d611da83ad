/*
 * ap.c - size and contiguity queries on access patterns (gs/isa.h): what the cost model needs
 * to count bytes and DMA descriptors. Validation and formatting of patterns live in isa.c.
 */
#include "gs/isa.h"

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
