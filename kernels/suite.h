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

/* The kernels (one source each). */
extern const gs_kernel_def gs_kernel_elementwise_add;
extern const gs_kernel_def gs_kernel_matmul;
extern const gs_kernel_def gs_kernel_fused_elementwise;
extern const gs_kernel_def gs_kernel_softmax;
extern const gs_kernel_def gs_kernel_layernorm;
extern const gs_kernel_def gs_kernel_rmsnorm;
extern const gs_kernel_def gs_kernel_attention;
extern const gs_kernel_def gs_kernel_reduce;
extern const gs_kernel_def gs_kernel_embedding;
extern const gs_kernel_def gs_kernel_transpose;
extern const gs_kernel_def gs_kernel_bmm;
extern const gs_kernel_def gs_kernel_mlp;
extern const gs_kernel_def gs_kernel_avgpool2d;
extern const gs_kernel_def gs_kernel_matmul_fp8;
extern const gs_kernel_def gs_kernel_ubench_dma;
extern const gs_kernel_def gs_kernel_ubench_chain;
extern const gs_kernel_def gs_kernel_ubench_matmul_stream;
extern const gs_kernel_def gs_kernel_matmul_mx;
extern const gs_kernel_def gs_kernel_rope;
extern const gs_kernel_def gs_kernel_swiglu_mlp;
extern const gs_kernel_def gs_kernel_maxpool2d;
extern const gs_kernel_def gs_kernel_attention_decode;

#ifdef __cplusplus
}
#endif
#endif
