/*
 * gs/kernel.h - the kernel-facing API. Kernels (kernels/) include this header and nothing else
 * from gensweep: the builder API, capabilities, dtypes, tunables by name and the registration
 * struct. It names no program, instruction or config (the harness side, gs/builder.h and
 * gs/isa.h, does); the kernel_header_hides_internals test checks that.
 *
 * A kernel is a C function `gs_status k(gs_kb *kb, const gs_kernel_args *args)`. It asks the
 * target for its capabilities (gs_kb_caps), allocates SBUF/PSUM tiles from pools, and issues
 * instructions through the macros below, which record the kernel's __FILE__:__LINE__ on each
 * instruction. The builder validates every operand and derives dependencies (RAW, WAR, WAW) from
 * the exact regions each instruction reads and writes, so independent work overlaps and
 * double-buffering comes from pools with more than one buffer.
 *
 * Errors: the first failing call records a gs_error naming the kernel source line; every later
 * call is a no-op, so a kernel may check gs_kb_ok() only where it matters and simply return
 * gs_kb_status(kb) at the end. Capacity problems are GS_ERR_DOES_NOT_FIT, missing capabilities
 * GS_ERR_UNSUPPORTED (also raised by the kernel itself via gs_kb_fail).
 */
#ifndef GS_KERNEL_H
#define GS_KERNEL_H

#include <string.h>

#include "gs/common.h"
#include "gs/dtype.h"
#include "gs/isa_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel may ask of its target. Plain numbers; no generation names. */
typedef struct gs_caps {
    unsigned partitions;      /* SBUF/PSUM partitions = engine lanes (128) */
    unsigned pe_rows;         /* tensor engine contraction size K per matmul */
    unsigned pe_cols;         /* max stationary free size M per matmul */
    unsigned moving_free_max; /* max moving free size N per matmul */
    uint64_t sbuf_partition_bytes;
    uint64_t psum_partition_bytes;
    uint64_t psum_bank_bytes; /* per partition */
    unsigned psum_banks;
    unsigned max_free_sbuf;             /* vector/scalar free elements per instruction from SBUF */
    unsigned max_free_psum;             /* ... from PSUM */
    unsigned cores;                     /* cores on the chip */
    unsigned core_id;                   /* this kernel invocation's core (SPMD) */
    unsigned dma_queues;                /* queue IDs per core (a dma instruction's `queue`) */
    unsigned dma_engines;               /* DMA engines per core: one transfer is split over them */
    unsigned dma_partitions_per_engine; /* partitions per engine: a transfer touching fewer
                                           than partitions uses fewer engines */
    int has_gpsimd;
    int dma_transpose;
    int dma_cast;                       /* dma_copy converts between float dtypes (core.dma.cast) */
    uint32_t dtypes;                    /* bit (1u << gs_dtype) */
    uint32_t matmul_dtypes;             /* dtypes the tensor engine multiplies */
    double matmul_rate[GS_DTYPE_COUNT]; /* relative to bf16 = 1 (fp32 0.25, ...) */
    uint64_t ops;                       /* bit (1ull << gs_opcode) */
    /* Family features (gs/family.h); 0 where the target lacks them. */
    unsigned double_row_k;       /* fp8 double-row matmul (gs_matmul_dr): max contraction per
                                    instruction (2 x pe_rows) */
    uint32_t double_row_dtypes;  /* dtypes double-row matmul multiplies (fp8) */
    unsigned mx_k;               /* MX matmul (gs_matmul_mx): max contraction in values per
                                    instruction (4 x pe_rows) */
    unsigned mx_group;           /* MX scaling group: values sharing one scale (32) */
    uint32_t mx_dtypes;          /* quad-packed dtypes gs_matmul_mx multiplies */
    uint32_t quantize_mx_dtypes; /* quad-packed dtypes gs_quantize_mx produces */
    int matmul_bf16_psum;        /* gs_matmul may write a bf16 PSUM tile */
} gs_caps;

typedef struct gs_kb gs_kb;     /* the kernel builder (opaque) */
typedef struct gs_pool gs_pool; /* a pool of rotating SBUF/PSUM buffers (opaque) */

/* A tile: an allocated SBUF/PSUM region [part_count partitions x free elements] of one dtype.
 * `ap` covers the whole tile as a 1-D free pattern. */
typedef struct gs_tile {
    gs_ap ap;
    uint32_t free_elems;
} gs_tile;

/* An HBM tensor handle as the kernel sees it. */
typedef struct gs_tensor {
    int32_t id;
    gs_dtype dtype;
    int ndim;
    int64_t shape[GS_AP_MAX_DIMS];
} gs_tensor;

#define GS_KERNEL_MAX_TENSORS 8
#define GS_KERNEL_MAX_PARAMS 8
/*
 * Arguments the harness passes: tensors (inputs then outputs), problem sizes and tunables.
 *
 * t[] follows the order of the kernel's tensor declarations (gs_kernel_def `tensors`): inputs
 * first, then outputs, each with the shape declared there. For matmul-class kernels the layouts are
 * (kernels/README.md has every kernel's):
 *   AT [K x M]  the left operand given transposed (K, the contraction, on partitions: it is the
 *               stationary operand, loaded K rows x M columns)
 *   B  [K x N]  the right operand (moving: K rows x N columns)
 *   C  [M x N]  the result (M rows on partitions, accumulated in PSUM in fp32)
 * dims[] are the kernel's named dims in order (gs_kernel_def dim_names, e.g. M, K, N).
 *
 * param[] holds the tunables in the order of the kernel's param_names (gs_kernel_def); 0 means
 * "choose a default from the capabilities". Read them by name with gs_kernel_param() rather
 * than by position, so reordering or adding a param cannot silently swap two of them.
 */
typedef struct gs_kernel_args {
    gs_tensor t[GS_KERNEL_MAX_TENSORS];
    int n_tensors;
    int64_t dims[8];                     /* problem sizes, kernel-specific meaning (e.g. M, K, N) */
    int64_t param[GS_KERNEL_MAX_PARAMS]; /* tunables; 0 = choose a default from caps */
    gs_dtype dtype;                      /* compute dtype */
    int variant;                         /* kernel-specific variant index */
    const char *const *param_names;      /* the kernel's param names, parallel to param[] */
    int n_params;
} gs_kernel_args;

/* The tunable called name, or dflt when it is 0 (not given). A name the kernel did not
 * register is a bug in the kernel: it returns -1, which every kernel's range check rejects
 * ("must be positive"), so it cannot pass unnoticed. */
static inline int64_t gs_kernel_param(const gs_kernel_args *a, const char *name, int64_t dflt)
{
    for (int i = 0; a->param_names && i < a->n_params && i < GS_KERNEL_MAX_PARAMS; i++) {
        const char *p = a->param_names[i], *q = name;
        while (*p && *p == *q)
            p++, q++;
        if (*p == *q) return a->param[i] ? a->param[i] : dflt;
    }
    return -1;
}

typedef gs_status (*gs_kernel_fn)(gs_kb *kb, const gs_kernel_args *args);

/* ---- registration ----
 * A kernel source defines one `const gs_kernel_def gs_kernel_<name>` (kernels/suite.c lists
 * them; kernels/README.md, "Adding a kernel"). */
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
    double lo, hi;      /* input values drawn uniformly from [lo, hi) (then rounded to dtype) */
    int integer;        /* input values are integers in [lo, hi) */
    const double *init; /* NULL: seeded values from [lo, hi); else the input's values, row-major
                           (rounded to dtype; kept by the kernel until the job is freed) */
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
    /* Reference in double: in[i] are the decoded inputs, out[j] receive the outputs. NULL: the
     * kernel has none, and its outputs are not checked (the job's check says so). */
    void (*reference)(const gs_kernel_args *args, const double *const *in, double *const *out);
    /* Whether the last reference call produced values (a reference run in another process, as
     * NKI's, can fail: its error then replaces the check, and no output is compared against
     * values it did not give). NULL: the reference always does. */
    gs_status (*reference_status)(gs_error *err);
    /* Length of the longest reduction an output element comes from (for tolerances); NULL:
     * no reduction (1). */
    double (*reduction_len)(const gs_kernel_args *args);
    /* The check's tolerance per output element, derived from the dtypes and the operations the
     * kernel performs (kernels/README.md, "Correctness policy"): bound[j][e] receives a bound
     * on |got - ref| of output j's element e that holds for every correct execution on any
     * inputs (a worst-case bound from the inputs in[] and the reference outputs ref[], never a
     * statistic of the data drawn). When set it replaces the default rule (reduction_len). */
    void (*error_bound)(const gs_kernel_args *args, const double *const *in,
                        const double *const *ref, double *const *bound);
} gs_kernel_def;

/* ---- queries ---- */
const gs_caps *gs_kb_caps(const gs_kb *kb);
int gs_kb_ok(const gs_kb *kb);
gs_status gs_kb_status(const gs_kb *kb);
const gs_error *gs_kb_error(const gs_kb *kb);
/* Record an error (first one wins) from the kernel itself, e.g. "unsupported: fp8 matmul".
 * Returns code so a kernel can `return gs_kb_fail(...)`. */
#define gs_kb_fail(kb, code, ...) gs_kb_fail_at((kb), __FILE__, __LINE__, (code), __VA_ARGS__)
gs_status gs_kb_fail_at(gs_kb *kb, const char *file, int line, gs_status code, const char *fmt, ...)
    GS_PRINTF(5, 6);

/* ---- memory ---- */
/* A pool of `bufs` rotating buffers, each `bytes_per_partition` bytes on `partitions`
 * partitions starting at 0, in SBUF or PSUM. Fails with DOES_NOT_FIT when the space is full.
 * Pools are released in reverse order of creation (gs_pool_release), like a stack. `bufs` is
 * 1..GS_POOL_MAX_BUFS; what decides in practice is the space: bufs x the aligned buffer size
 * must fit what is free. */
/* A bound against nonsense only (a pool of buffers at the 64-byte alignment fills a 192 KiB
 * SBUF partition with 3072) */
#define GS_POOL_MAX_BUFS 65536u
#define gs_pool_create(kb, space, name, bufs, bytes_per_partition)                                 \
    gs_pool_create_at((kb), __FILE__, __LINE__, (space), (name), (bufs), (bytes_per_partition))
gs_pool *gs_pool_create_at(gs_kb *kb, const char *file, int line, gs_memspace space,
                           const char *name, unsigned bufs, uint64_t bytes_per_partition);
/* Release a pool and every pool created after it. NULL is a no-op. */
void gs_pool_release(gs_kb *kb, gs_pool *pool);
/* The next buffer of the pool, as a tile of [parts x free_elems] dtype (starting at
 * partition 0). Fails when it does not fit the pool's buffer. */
#define gs_tile_alloc(pool, dtype, parts, free_elems)                                              \
    gs_tile_alloc_at((pool), __FILE__, __LINE__, (dtype), (parts), (free_elems))
gs_tile gs_tile_alloc_at(gs_pool *pool, const char *file, int line, gs_dtype dtype, unsigned parts,
                         uint32_t free_elems);

/* ---- views (pure: no instruction issued; invalid views are caught when used) ----
 * Access patterns hold strides as int32_t: a view whose stride (including the HBM row pitch
 * of gs_hbm_rows/gs_hbm_cols) does not fit is refused with a builder error when used. */
/* Partitions [p0, p0+np) and free elements [f0, f0+nf) of a tile, 1-D. */
gs_ap gs_tile_view(const gs_tile *t, unsigned p0, unsigned np, uint32_t f0, uint32_t nf);
/* The same tile region seen as 2-D free [rows x cols] with row stride `row_stride` elements. */
gs_ap gs_tile_view2(const gs_tile *t, unsigned p0, unsigned np, uint32_t f0, uint32_t rows,
                    uint32_t cols, uint32_t row_stride);
/* HBM: rows [r0, r0+nr) x cols [c0, c0+nc) of a 2-D view of tensor t (a tensor of rank > 2 is
 * seen as [prod(leading dims), last dim]); rows map to partitions. */
gs_ap gs_hbm_rows(const gs_tensor *t, int64_t r0, unsigned nr, int64_t c0, uint32_t nc);
/* HBM: columns as partitions: element [r][c] for c in [c0,c0+nc) (partitions) and r in
 * [r0, r0+nr) (free) -- a transposing (strided) DMA pattern. */
gs_ap gs_hbm_cols(const gs_tensor *t, int64_t r0, uint32_t nr, int64_t c0, unsigned nc);
/* HBM: a general pattern. */
gs_ap gs_hbm_ap(const gs_tensor *t, int64_t offset, unsigned part_count, int64_t part_stride,
                int ndim, const uint32_t *shape, const int64_t *stride);

/* ---- instructions: each macro records the caller's file:line ---- */
#define GS_KB_SITE(kb) (kb), __FILE__, __LINE__

/* queue < 0: round-robin over the core's queues. */
#define gs_dma_copy(kb, dst, src, queue) gs_dma_copy_at(GS_KB_SITE(kb), (dst), (src), (queue))
gs_status gs_dma_copy_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src, int queue);
#define gs_dma_transpose(kb, dst, src, queue)                                                      \
    gs_dma_transpose_at(GS_KB_SITE(kb), (dst), (src), (queue))
gs_status gs_dma_transpose_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src,
                              int queue);

#define gs_matmul(kb, psum, stationary, moving, accumulate)                                        \
    gs_matmul_at(GS_KB_SITE(kb), (psum), (stationary), (moving), (accumulate))
gs_status gs_matmul_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                       gs_ap moving, int accumulate);
/* fp8 "double row" matmul (caps.double_row_k > 0): stationary [P, 2, M] and moving [P, 2, N]
 * views (outermost free dim 2: the two halves of a contraction of 2P), fp8 dtypes
 * (caps.double_row_dtypes), P <= pe_rows; output fp32 PSUM [M, N]. */
#define gs_matmul_dr(kb, psum, stationary, moving, accumulate)                                     \
    gs_matmul_dr_at(GS_KB_SITE(kb), (psum), (stationary), (moving), (accumulate))
gs_status gs_matmul_dr_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                          gs_ap moving, int accumulate);
/* MX matmul (caps.mx_k > 0): stationary [P, M] and moving [P, N] in quad-packed MX dtypes
 * (caps.mx_dtypes), each with an e8m0 scale tile of the same free size whose scales sit in the
 * partition quadrant of their group (gs/isa.h, matmul_mx). Output fp32 or bf16 PSUM [M, N]. */
#define gs_matmul_mx(kb, psum, stationary, st_scale, moving, mv_scale, accumulate)                 \
    gs_matmul_mx_at(GS_KB_SITE(kb), (psum), (stationary), (st_scale), (moving), (mv_scale),        \
                    (accumulate))
gs_status gs_matmul_mx_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                          gs_ap st_scale, gs_ap moving, gs_ap mv_scale, int accumulate);
/* Quantize-MX on the vector engine (caps.quantize_mx_dtypes != 0): src [P, F] bf16/fp16 in
 * SBUF, P a multiple of 32, F a multiple of 4 with unit innermost stride; dst [P, F/4] MXFP8
 * x4 and scale [P, F/4] e8m0, both in SBUF. */
#define gs_quantize_mx(kb, dst, scale, src) gs_quantize_mx_at(GS_KB_SITE(kb), (dst), (scale), (src))
gs_status gs_quantize_mx_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap scale,
                            gs_ap src);
#define gs_transpose(kb, psum, in) gs_transpose_at(GS_KB_SITE(kb), (psum), (in))
gs_status gs_transpose_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap in);

/* Scale/bias operands: a scalar immediate or a per-partition [P,1] access pattern. */
typedef struct gs_operand {
    int is_ap;
    float imm;
    gs_ap ap;
} gs_operand;
static inline gs_operand gs_imm(float v)
{
    gs_operand o;
    memset(&o, 0, sizeof o); /* the unused pattern is all zeros, never indeterminate */
    o.is_ap = 0;
    o.imm = v;
    o.ap.tensor = -1;
    return o;
}
static inline gs_operand gs_per_partition(gs_ap ap)
{
    gs_operand o;
    memset(&o, 0, sizeof o);
    o.is_ap = 1;
    o.imm = 0.0f;
    o.ap = ap;
    return o;
}

/* acc_out: NULL, or a [P,1] fp32 pattern receiving the sum over the free dim of the result. */
#define gs_activation(kb, out, in, func, scale, bias, acc_out)                                     \
    gs_activation_at(GS_KB_SITE(kb), (out), (in), (func), (scale), (bias), (acc_out))
gs_status gs_activation_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in, gs_act func,
                           gs_operand scale, gs_operand bias, const gs_ap *acc_out);

/* Vector-engine exponential (targets whose ops include exponential: caps.ops):
 * out = exp(in - sub), sub an immediate or a [P,1] pattern; acc_out NULL or an fp32 [P,1]
 * pattern receiving the row sum of the result. */
#define gs_exponential(kb, out, in, sub, acc_out)                                                  \
    gs_exponential_at(GS_KB_SITE(kb), (out), (in), (sub), (acc_out))
gs_status gs_exponential_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in,
                            gs_operand sub, const gs_ap *acc_out);

#define gs_tensor_tensor(kb, out, a, b, op)                                                        \
    gs_tensor_tensor_at(GS_KB_SITE(kb), (out), (a), (b), (op))
gs_status gs_tensor_tensor_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap a, gs_ap b,
                              gs_alu op);
/* (data op0 operand0) op1 operand1 on the vector engine (nki.isa.scalar_tensor_tensor): operand0
 * a scalar or a [P,1] column, operand1 a tile of data's shape; reverse0/reverse1 swap the two
 * operands of op0/op1 (operand0 op0 data, operand1 op1 tmp). */
#define gs_scalar_tensor_tensor(kb, out, data, op0, s0, op1, operand1)                             \
    gs_scalar_tensor_tensor_at(GS_KB_SITE(kb), (out), (data), (op0), (s0), 0, (op1), (operand1), 0)
gs_status gs_scalar_tensor_tensor_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap data,
                                     gs_alu op0, gs_operand operand0, int reverse0, gs_alu op1,
                                     gs_ap operand1, int reverse1);
/* Cross-partition movement within quadrants of 32 partitions on the vector engine
 * (nki.isa.nc_stream_shuffle): out partition q takes in partition 32 * (q / 32) + mask[q % 32]
 * (partitions counted from each pattern's first), or stays unchanged where mask[q % 32] is 255.
 * Same dtype and free size; a source partition beyond in's is an error. */
#define gs_stream_shuffle(kb, out, in, mask)                                                       \
    gs_stream_shuffle_at(GS_KB_SITE(kb), (out), (in), (mask))
gs_status gs_stream_shuffle_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in,
                               const int mask[32]);
/* gs_matmul on a tile of the PE array (nki.isa.nc_matmul tile_position / tile_size): tile =
 * {row offset, column offset, rows, columns}, sizes 32, 64 or the whole array's, offsets
 * multiples of them; the stationary must fit the tile. The product is the plain matmul's; the
 * tile is kept in the instruction (disasm). Tiles running side by side are not modelled: each
 * costs a matmul of its shape on the whole engine. */
gs_status gs_matmul_tile_at(gs_kb *kb, const char *file, int line, gs_ap psum, gs_ap stationary,
                            gs_ap moving, int accumulate, const int tile[4]);
/* Vector-engine scan along the free dim (targets whose ops include tensor_tensor_scan):
 * out[i] = (data0[i] op0 out[i-1]) op1 data1[i], out[-1] = initial (an immediate or a [P,1]
 * pattern); e.g. op0 = mul, op1 = add gives the linear recurrence h = a * h + b. */
#define gs_tensor_tensor_scan(kb, out, data0, data1, initial, op0, op1)                            \
    gs_tensor_tensor_scan_at(GS_KB_SITE(kb), (out), (data0), (data1), (initial), (op0), (op1))
gs_status gs_tensor_tensor_scan_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap data0,
                                   gs_ap data1, gs_operand initial, gs_alu op0, gs_alu op1);
/* engine: GS_ENG_VECTOR, GS_ENG_SCALAR or GS_ENG_GPSIMD. op1 = GS_ALU_BYPASS for none. */
#define gs_tensor_scalar(kb, engine, out, in, op0, s0, op1, s1)                                    \
    gs_tensor_scalar_at(GS_KB_SITE(kb), (engine), (out), (in), (op0), (s0), (op1), (s1))
gs_status gs_tensor_scalar_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                              gs_ap in, gs_alu op0, gs_operand s0, gs_alu op1, gs_operand s1);
#define gs_tensor_reduce(kb, out, in, op, axes)                                                    \
    gs_tensor_reduce_at(GS_KB_SITE(kb), (out), (in), (op), (axes))
gs_status gs_tensor_reduce_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in, gs_alu op,
                              int axes);
/* The same with negate != 0: out = -reduce(in) (nki.isa.tensor_reduce(negate=True); the sign is
 * applied to the result, the instruction and its cost are tensor_reduce's). */
gs_status gs_tensor_reduce_neg_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in,
                                  gs_alu op, int axes, int negate);
#define gs_bn_stats(kb, out, in) gs_bn_stats_at(GS_KB_SITE(kb), (out), (in))
gs_status gs_bn_stats_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in);
#define gs_bn_aggr(kb, out, in) gs_bn_aggr_at(GS_KB_SITE(kb), (out), (in))
gs_status gs_bn_aggr_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in);
/* engine: vector, scalar or gpsimd */
#define gs_tensor_copy(kb, engine, out, in) gs_tensor_copy_at(GS_KB_SITE(kb), (engine), (out), (in))
gs_status gs_tensor_copy_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                            gs_ap in);
/* engine: gpsimd or vector */
#define gs_memset(kb, engine, out, value) gs_memset_at(GS_KB_SITE(kb), (engine), (out), (value))
gs_status gs_memset_at(gs_kb *kb, const char *file, int line, gs_engine engine, gs_ap out,
                       float value);
#define gs_iota(kb, out, base, part_mult, free_mult)                                               \
    gs_iota_at(GS_KB_SITE(kb), (out), (base), (part_mult), (free_mult))
gs_status gs_iota_at(gs_kb *kb, const char *file, int line, gs_ap out, int64_t base,
                     int64_t part_mult, int64_t free_mult);
/* keep in[p][j] where (base + part_mult*p + free_mult*j) cmp 0, else fill */
#define gs_affine_select(kb, out, in, cmp, base, part_mult, free_mult, fill)                       \
    gs_affine_select_at(GS_KB_SITE(kb), (out), (in), (cmp), (base), (part_mult), (free_mult),      \
                        (fill))
gs_status gs_affine_select_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in,
                              gs_alu cmp, int64_t base, int64_t part_mult, int64_t free_mult,
                              float fill);
#define gs_partition_reduce(kb, out, in, op)                                                       \
    gs_partition_reduce_at(GS_KB_SITE(kb), (out), (in), (op))
gs_status gs_partition_reduce_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in,
                                 gs_alu op);
#define gs_partition_broadcast(kb, out, in) gs_partition_broadcast_at(GS_KB_SITE(kb), (out), (in))
gs_status gs_partition_broadcast_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap in);
#define gs_gather(kb, out, table, idx) gs_gather_at(GS_KB_SITE(kb), (out), (table), (idx))
gs_status gs_gather_at(gs_kb *kb, const char *file, int line, gs_ap out, gs_ap table, gs_ap idx);

/* ---- top-k selection on the vector engine (targets whose ops include max8, find_index8,
 * match_replace8: caps.ops). NKI ISA nki.isa.max8 / nc_find_index8 / nc_match_replace8:
 * https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.max8.html
 * Inputs of any float dtype are compared as fp32; indices are int32 (the ISA's uint32, same
 * bits below 2^31). Ties, NaN and values not found: hwmodels/src/ops_topk.c. ---- */
/* Elements per partition the three read at most (the ISA pages: "between 8 and 16,384"). */
#define GS_TOPK8_FREE_MAX 16384u
/* dst [P,8] = the 8 largest values of src [P,F] per partition, descending, 8 <= F. */
#define gs_max8(kb, dst, src) gs_max8_at(GS_KB_SITE(kb), (dst), (src))
gs_status gs_max8_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap src);
/* dst [P,8] int32 = the index in data [P,F] of each of vals [P,8] (8 <= F). */
#define gs_find_index8(kb, dst, data, vals) gs_find_index8_at(GS_KB_SITE(kb), (dst), (data), (vals))
gs_status gs_find_index8_at(gs_kb *kb, const char *file, int line, gs_ap dst, gs_ap data,
                            gs_ap vals);
/* dst [P,F] = data with the first occurrence of each of vals [P,8] replaced by imm (dst may be
 * data itself); dst_idx NULL or an int32 [P,8] pattern receiving the indices matched. */
#define gs_match_replace8(kb, dst, dst_idx, data, vals, imm)                                       \
    gs_match_replace8_at(GS_KB_SITE(kb), (dst), (dst_idx), (data), (vals), (imm))
gs_status gs_match_replace8_at(gs_kb *kb, const char *file, int line, gs_ap dst,
                               const gs_ap *dst_idx, gs_ap data, gs_ap vals, float imm);

#ifdef __cplusplus
}
#endif
#endif
