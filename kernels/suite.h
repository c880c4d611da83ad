/*
 * suite.h - the kernel suite's registry: every kernel with its dimensions, variants, tunable
 * parameters, shape sets, tensor declarations and plain-C reference.
 *
 * Kernels themselves see only gs/kernel.h; this header is for the harness and tests.
 */
#ifndef GS_SUITE_H
#define GS_SUITE_H

#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_SUITE_MAX_SHAPES 8
#define GS_SUITE_MAX_DIMS 8

typedef struct gs_shape {
    int n; /* number of dims used (0 terminates a list) */
    int64_t d[GS_SUITE_MAX_DIMS];
} gs_shape;

/* One tensor the kernel's problem declares (in order: inputs first, then outputs). */
typedef struct gs_tensor_decl {
    char name[32];
    gs_tensor_kind kind;
    gs_dtype dtype;
    int ndim;
    int64_t shape[GS_AP_MAX_DIMS];
    double lo, hi; /* input values drawn uniformly from [lo, hi) (then rounded to dtype) */
    int integer;   /* input values are integers in [lo, hi) */
} gs_tensor_decl;

typedef struct gs_kernel_def {
    const char *name;
    const char *summary;
    int n_dims;
    const char *dim_names[GS_SUITE_MAX_DIMS];
    int n_variants;
    const char *variants[8];
    int n_params;
    const char *param_names[GS_KERNEL_MAX_PARAMS];
    const char *param_help[GS_KERNEL_MAX_PARAMS];
    gs_shape check_shapes[GS_SUITE_MAX_SHAPES]; /* functional + timing, CI-sized */
    gs_shape perf_shapes[GS_SUITE_MAX_SHAPES];  /* timing-only, realistic */
    uint32_t dtypes;                            /* compute dtypes the kernel accepts */
    uint32_t spmd_variants; /* bit v set: variant v is SPMD (build runs once per core of the chip,
                               caps->core_id says which; each core owns a disjoint output part) */
    /* Declare the problem's tensors for args (dims, dtype); returns the count, or -1 with a
     * message in err for bad dims. */
    int (*tensors)(const gs_kernel_args *args, gs_tensor_decl *out, int max, gs_error *err);
    gs_kernel_fn build;
    /* Reference in double: in[i] are the decoded inputs, out[j] receive the outputs. */
    void (*reference)(const gs_kernel_args *args, const double *const *in, double *const *out);
    /* Length of the longest reduction an output element comes from (for tolerances); NULL:
     * no reduction (1). */
    double (*reduction_len)(const gs_kernel_args *args);
} gs_kernel_def;

size_t gs_suite_count(void);
const gs_kernel_def *gs_suite_kernel(size_t i); /* NULL past the end */
const gs_kernel_def *gs_suite_find(const char *name);
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

#ifdef __cplusplus
}
#endif
#endif
