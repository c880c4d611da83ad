/* suite.c - the registry of kernels (see suite.h). */
#include "suite.h"

#include <string.h>

static const gs_kernel_def *const kernels[] = {
    &gs_kernel_elementwise_add,
    &gs_kernel_matmul,
    &gs_kernel_fused_elementwise,
    &gs_kernel_softmax,
    &gs_kernel_layernorm,
    &gs_kernel_rmsnorm,
    &gs_kernel_attention,
    &gs_kernel_reduce,
    &gs_kernel_embedding,
    &gs_kernel_transpose,
    &gs_kernel_bmm,
    &gs_kernel_mlp,
    &gs_kernel_avgpool2d,
    &gs_kernel_matmul_fp8,
    &gs_kernel_ubench_dma,
    &gs_kernel_ubench_chain,
    &gs_kernel_ubench_matmul_stream,
    &gs_kernel_matmul_mx,
    &gs_kernel_rope,
    &gs_kernel_swiglu_mlp,
    &gs_kernel_maxpool2d,
    &gs_kernel_attention_decode,
};

static const gs_kernel_def *const *appended;
static size_t n_appended;

size_t gs_suite_count(void)
{
    return sizeof kernels / sizeof kernels[0] + n_appended;
}

/* A kernel registered while the process runs (an NKI kernel the front end traced). */
static const gs_kernel_def *extra;

void gs_suite_set_extra(const gs_kernel_def *k)
{
    extra = k;
}

void gs_suite_append(const gs_kernel_def *const *k, size_t n)
{
    appended = n ? k : NULL;
    n_appended = appended ? n : 0;
}

const gs_kernel_def *gs_suite_find(const char *name)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(kernels[i]->name, name) == 0) return kernels[i];
    for (size_t i = 0; i < n_appended; i++)
        if (strcmp(appended[i]->name, name) == 0) return appended[i];
    if (extra && strcmp(extra->name, name) == 0) return extra;
    return NULL;
}

const gs_kernel_def *gs_suite_kernel(size_t i)
{
    const size_t n = sizeof kernels / sizeof kernels[0];
    if (i < n) return kernels[i];
    return i - n < n_appended ? appended[i - n] : NULL;
}

int gs_suite_variant(const gs_kernel_def *k, const char *name)
{
    for (int i = 0; i < k->n_variants; i++)
        if (strcmp(k->variants[i], name) == 0) return i;
    return -1;
}
