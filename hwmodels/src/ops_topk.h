/*
 * ops_topk.h - the per-partition semantics of the top-k selection instructions max8,
 * find_index8 and match_replace8 (ops_topk.c), shared by the functional executor (exec.c).
 * Internal to hwmodels.
 */
#ifndef GS_OPS_TOPK_H
#define GS_OPS_TOPK_H

#include <stddef.h>

/* out[0..7] = the 8 largest of x[0..n) (n >= 8), descending. */
void gs_topk_max8_row(const float *x, size_t n, float out[8]);
/* idx[j] = the position in x[0..n) of vals[j], duplicates paired with ascending positions
 * (j = 0 first); -1 where not found. */
void gs_topk_find_index8_row(const float *x, size_t n, const float vals[8], float idx[8]);
/* Replace in x[0..n) the first occurrence of each of vals (j = 7 down to 0) by imm; idx[j]
 * receives its position, or -1 when not found (nothing replaced). */
void gs_topk_match_replace8_row(float *x, size_t n, const float vals[8], float imm, float idx[8]);

#endif
