/*
 * lines_kernels.c - two small kernels for test_lines.cpp, each with one cost a kernel engineer
 * could not see by line before `run --lines`: a 4 KiB bias load that costs about as much DMA
 * time as the 1 MiB input it is added to (DMA fixed costs), and a single-buffered pool whose
 * next load waits for the previous tile's cast (a WAR on the rotating buffer). The lines the
 * tests look for are exported (lines_test_*_line).
 */
#include <stdio.h>

#include "gs/kernel.h"

int lines_test_bias_load_line, lines_test_input_load_line, lines_test_pool_line,
    lines_test_reuse_load_line;

static int decls(const gs_kernel_args *a, gs_tensor_decl *t, int max, int n, const char **names,
                 const int64_t (*shapes)[2], const gs_tensor_kind *kinds)
{
    if (max < n) return -1;
    for (int i = 0; i < n; i++) {
        gs_tensor_decl *d = &t[i];
        snprintf(d->name, sizeof d->name, "%s", names[i]);
        d->kind = kinds[i];
        d->dtype = i == n - 1 && a->dtype == GS_BF16 ? GS_BF16 : GS_FP32;
        d->ndim = 2;
        d->shape[0] = shapes[i][0];
        d->shape[1] = shapes[i][1];
        d->lo = -1.0;
        d->hi = 1.0;
    }
    return n;
}

/* Y [128 x 2048] fp32 = X + bias[:, 0]; bias is [128 x 8] fp32 (4 KiB), X 1 MiB. */
static gs_status bias_build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_tensor *X = &a->t[0], *bias = &a->t[1], *Y = &a->t[2];
    gs_pool *px = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, 2048 * 4);
    gs_pool *pb = gs_pool_create(kb, GS_MEM_SBUF, "bias", 1, 8 * 4);
    gs_pool *py = gs_pool_create(kb, GS_MEM_SBUF, "y", 1, 2048 * 4);
    gs_tile tx = gs_tile_alloc(px, GS_FP32, 128, 2048);
    gs_tile tb = gs_tile_alloc(pb, GS_FP32, 128, 8);
    gs_tile ty = gs_tile_alloc(py, GS_FP32, 128, 2048);
    lines_test_bias_load_line = __LINE__ + 1;
    gs_dma_copy(kb, tb.ap, gs_hbm_rows(bias, 0, 128, 0, 8), 1);
    lines_test_input_load_line = __LINE__ + 1;
    gs_dma_copy(kb, tx.ap, gs_hbm_rows(X, 0, 128, 0, 2048), 0);
    gs_tensor_scalar(kb, GS_ENG_VECTOR, ty.ap, tx.ap, GS_ALU_ADD,
                     gs_per_partition(gs_tile_view(&tb, 0, 128, 0, 1)), GS_ALU_BYPASS, gs_imm(0));
    gs_dma_copy(kb, gs_hbm_rows(Y, 0, 128, 0, 2048), ty.ap, 0);
    return gs_kb_status(kb);
}

static int bias_tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    (void)err;
    static const char *names[] = {"X", "bias", "Y"};
    static const int64_t shapes[][2] = {{128, 2048}, {128, 8}, {128, 2048}};
    static const gs_tensor_kind kinds[] = {GS_TENSOR_INPUT, GS_TENSOR_INPUT, GS_TENSOR_OUTPUT};
    return decls(a, t, max, 3, names, shapes, kinds);
}

const gs_kernel_def lines_test_bias = {
    .name = "lines_test_bias",
    .summary = "a tiny bias load beside a big input load",
    .n_dims = 1,
    .dim_names = {"N"},
    .n_variants = 1,
    .variants = {"default"},
    .check_shapes = {{1, {1}}},
    .dtypes = 1u << GS_FP32,
    .tensors = bias_tensors,
    .build = bias_build,
};

/* Y [128 x 4096] bf16 = X [128 x 4096] fp32 cast, in 4 tiles through ONE single-buffered pool:
 * each tile's load overwrites the buffer the previous tile's cast still reads. */
static gs_status reuse_build(gs_kb *kb, const gs_kernel_args *a)
{
    const gs_tensor *X = &a->t[0], *Y = &a->t[1];
    lines_test_pool_line = __LINE__ + 1;
    gs_pool *pin = gs_pool_create(kb, GS_MEM_SBUF, "in", 1, 1024 * 4);
    gs_pool *pout = gs_pool_create(kb, GS_MEM_SBUF, "out", 2, 1024 * 2);
    for (int64_t c0 = 0; c0 < 4096 && gs_kb_ok(kb); c0 += 1024) {
        gs_tile ti = gs_tile_alloc(pin, GS_FP32, 128, 1024);
        gs_tile to = gs_tile_alloc(pout, GS_BF16, 128, 1024);
        lines_test_reuse_load_line = __LINE__ + 1;
        gs_dma_copy(kb, ti.ap, gs_hbm_rows(X, 0, 128, c0, 1024), 0);
        gs_tensor_copy(kb, GS_ENG_VECTOR, to.ap, ti.ap);
        gs_dma_copy(kb, gs_hbm_rows(Y, 0, 128, c0, 1024), to.ap, 1);
    }
    return gs_kb_status(kb);
}

static int reuse_tensors(const gs_kernel_args *a, gs_tensor_decl *t, int max, gs_error *err)
{
    (void)err;
    static const char *names[] = {"X", "Y"};
    static const int64_t shapes[][2] = {{128, 4096}, {128, 4096}};
    static const gs_tensor_kind kinds[] = {GS_TENSOR_INPUT, GS_TENSOR_OUTPUT};
    return decls(a, t, max, 2, names, shapes, kinds);
}

const gs_kernel_def lines_test_reuse = {
    .name = "lines_test_reuse",
    .summary = "two tiles of one single-buffered pool",
    .n_dims = 1,
    .dim_names = {"N"},
    .n_variants = 1,
    .variants = {"default"},
    .check_shapes = {{1, {1}}},
    .dtypes = 1u << GS_BF16,
    .tensors = reuse_tensors,
    .build = reuse_build,
};
