/*
 * suite.h - the kernel suite's registry: the list of every kernel (its gs_kernel_def, declared
 * in gs/kernel.h: dimensions, variants, tunable parameters, shape sets, tensor declarations and
 * plain-C reference) and lookups by name.
 *
 * Kernels themselves see only gs/kernel.h; this header is for the harness and tests.
 */
#ifndef GS_SUITE_H
#define GS_SUITE_H

#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

size_t gs_suite_count(void);
const gs_kernel_def *gs_suite_kernel(size_t i); /* NULL past the end */
/* By name: the suite's kernels, then the extra kernel (if any). */
const gs_kernel_def *gs_suite_find(const char *name);
/* One kernel found by name besides the suite (not counted, listed or swept): an NKI kernel
 * traced in this process (harness/run/nki_prog.h). NULL removes it; the caller keeps k alive. */
void gs_suite_set_extra(const gs_kernel_def *k);
/* Kernels appended to the suite (counted, listed, swept and found after its own) by a test
 * binary that carries the real commands (tests/sweep/fault_kernels.c); n = 0 removes them. The
 * caller keeps k[0..n) alive. */
void gs_suite_append(const gs_kernel_def *const *k, size_t n);
/* Variant index by name, or -1. */
int gs_suite_variant(const gs_kernel_def *k, const char *name);

/* The kernels, declared from the one list (kernels.def). */
#define GS_KERNEL(name, source) extern const gs_kernel_def gs_kernel_##name;
#include "kernels.def"
#undef GS_KERNEL

#ifdef __cplusplus
}
#endif
#endif
