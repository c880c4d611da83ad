/*
 * gs/isa_types.h - the vocabulary of the tile instruction set: memory spaces, access patterns,
 * opcodes, ALU ops, activation functions and HBM tensor kinds.
 *
 * Split from gs/isa.h so that gs/kernel.h can give kernels these names without instructions,
 * programs or configs (gs/isa.h includes this header and adds them). Addressing of an access
 * pattern is described in gs/isa.h.
 */
#ifndef GS_ISA_TYPES_H
#define GS_ISA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "gs/dtype.h"
#include "gs/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_MEMSPACE_TABLE(X) X(GS_MEM_HBM, "hbm") X(GS_MEM_SBUF, "sbuf") X(GS_MEM_PSUM, "psum")
typedef enum gs_memspace {
#define GS_MS_ENUM(e, n) e,
    GS_MEMSPACE_TABLE(GS_MS_ENUM)
#undef GS_MS_ENUM
        GS_MEMSPACE_COUNT
} gs_memspace;
const char *gs_memspace_name(gs_memspace m);

#define GS_AP_MAX_DIMS 4

/*
 * An access pattern: a [partitions x free-dims] view of one memory region.
 *
 * Kept compact (64 bytes; a program stores each distinct one once, gs/isa.h): strides are 32-bit
 * (the view helpers of gs/kernel.h refuse a stride outside int32_t with a builder error,
 * GS_AP_BAD_STRIDE), enums are 8-bit bit-fields, and the fields are ordered so that no padding
 * falls between them (a program compares patterns by their 62 bytes of fields).
 *
 * The last 2 bytes, `gen`, are not part of a pattern's identity: they say which allocation of
 * its SBUF/PSUM buffer the kernel's handle came from (gs_tile_alloc numbers the tiles of each
 * buffer 1, 2, ...; views copy it). The builder refuses a handle whose buffer its pool has
 * since given to a newer tile. A program's copy of a pattern keeps whichever value it was first
 * interned with: nothing after the builder reads it.
 */
typedef struct gs_ap {
    int64_t offset;      /* HBM: element offset; SBUF/PSUM: byte offset within a partition */
    int32_t part_stride; /* HBM only: elements between consecutive partition-rows */
    int32_t tensor;      /* HBM tensor id, or SBUF/PSUM buffer id; -1 = none (unused operand) */
    uint32_t part_start; /* SBUF/PSUM first partition (0 for HBM) */
    uint32_t part_count; /* number of partition-rows */
    uint32_t shape[GS_AP_MAX_DIMS];
    int32_t stride[GS_AP_MAX_DIMS]; /* elements */
    uint16_t core;                  /* SBUF/PSUM: owning core */
    gs_memspace space : 8;
    gs_dtype dtype : 8;
    uint8_t ndim;     /* number of free dims, 1..GS_AP_MAX_DIMS */
    uint8_t bad_view; /* set by view helpers (GS_AP_BAD_*) when the requested view cannot be
                         expressed; using such a pattern is an error naming the kernel line */
    uint16_t gen;     /* SBUF/PSUM: the allocation of its buffer the handle belongs to (mod 2^16;
                         0 for HBM and unused patterns); not part of the pattern's identity */
} gs_ap;

/* gs_ap.bad_view values (0 = a good view). */
enum {
    GS_AP_BAD_RANGE = 1,  /* the requested range exceeds the tile or tensor */
    GS_AP_BAD_STRIDE = 2, /* a stride or partition stride does not fit in int32_t */
};

/* Elements per partition-row (product of shape). */
uint64_t gs_ap_free_elems(const gs_ap *a);
/* Total bytes the pattern touches (partitions x free elems x dtype size). */
uint64_t gs_ap_bytes(const gs_ap *a);
/* Number of maximal contiguous runs per partition-row (1 for a dense row). */
uint64_t gs_ap_runs_per_row(const gs_ap *a);
/* Is the pattern valid (ndim in range, non-zero sizes)? */
int gs_ap_is_valid(const gs_ap *a);
/* Print "sbuf[c0 buf3 p0:128, +0 (2x64:1)] bf16" style text. */
void gs_ap_format(const gs_ap *a, char *buf, size_t size);

/* ---- opcodes: X(enum, name, default engine) ---- */
#define GS_OPCODE_TABLE(X)                                                                         \
    X(GS_OP_DMA_COPY, "dma_copy", GS_ENG_DMA)                                                      \
    X(GS_OP_DMA_TRANSPOSE, "dma_transpose", GS_ENG_DMA)                                            \
    X(GS_OP_MATMUL, "matmul", GS_ENG_TENSOR)                                                       \
    X(GS_OP_TRANSPOSE, "transpose", GS_ENG_TENSOR)                                                 \
    X(GS_OP_ACTIVATION, "activation", GS_ENG_SCALAR)                                               \
    X(GS_OP_TENSOR_TENSOR, "tensor_tensor", GS_ENG_VECTOR)                                         \
    X(GS_OP_TENSOR_SCALAR, "tensor_scalar", GS_ENG_VECTOR)                                         \
    X(GS_OP_TENSOR_REDUCE, "tensor_reduce", GS_ENG_VECTOR)                                         \
    X(GS_OP_BN_STATS, "bn_stats", GS_ENG_VECTOR)                                                   \
    X(GS_OP_BN_AGGR, "bn_aggr", GS_ENG_VECTOR)                                                     \
    X(GS_OP_TENSOR_COPY, "tensor_copy", GS_ENG_VECTOR)                                             \
    X(GS_OP_MEMSET, "memset", GS_ENG_GPSIMD)                                                       \
    X(GS_OP_IOTA, "iota", GS_ENG_GPSIMD)                                                           \
    X(GS_OP_AFFINE_SELECT, "affine_select", GS_ENG_GPSIMD)                                         \
    X(GS_OP_PARTITION_REDUCE, "partition_reduce", GS_ENG_GPSIMD)                                   \
    X(GS_OP_PARTITION_BROADCAST, "partition_broadcast", GS_ENG_GPSIMD)                             \
    X(GS_OP_GATHER, "gather", GS_ENG_GPSIMD)                                                       \
    X(GS_OP_MATMUL_MX, "matmul_mx", GS_ENG_TENSOR)                                                 \
    X(GS_OP_QUANTIZE_MX, "quantize_mx", GS_ENG_VECTOR)                                             \
    X(GS_OP_EXPONENTIAL, "exponential", GS_ENG_VECTOR)                                             \
    X(GS_OP_MAX8, "max8", GS_ENG_VECTOR)                                                           \
    X(GS_OP_FIND_INDEX8, "find_index8", GS_ENG_VECTOR)                                             \
    X(GS_OP_MATCH_REPLACE8, "match_replace8", GS_ENG_VECTOR)                                       \
    X(GS_OP_TENSOR_TENSOR_SCAN, "tensor_tensor_scan", GS_ENG_VECTOR)                               \
    X(GS_OP_STREAM_SHUFFLE, "stream_shuffle", GS_ENG_VECTOR)

typedef enum gs_opcode {
#define GS_OP_ENUM(e, n, eng) e,
    GS_OPCODE_TABLE(GS_OP_ENUM)
#undef GS_OP_ENUM
        GS_OPCODE_COUNT
} gs_opcode;
const char *gs_opcode_name(gs_opcode op);
gs_engine gs_opcode_default_engine(gs_opcode op);

/* ---- ALU ops (tensor_tensor, tensor_scalar, reductions): X(enum, name) ---- */
#define GS_ALU_TABLE(X)                                                                            \
    X(GS_ALU_BYPASS, "bypass") /* result = first operand */                                        \
    X(GS_ALU_ADD, "add")                                                                           \
    X(GS_ALU_SUB, "sub")                                                                           \
    X(GS_ALU_MUL, "mul")                                                                           \
    X(GS_ALU_DIV, "div")                                                                           \
    X(GS_ALU_MAX, "max")                                                                           \
    X(GS_ALU_MIN, "min")                                                                           \
    X(GS_ALU_POW, "pow")                                                                           \
    X(GS_ALU_EQ, "is_equal")                                                                       \
    X(GS_ALU_NE, "not_equal")                                                                      \
    X(GS_ALU_GT, "is_gt")                                                                          \
    X(GS_ALU_GE, "is_ge")                                                                          \
    X(GS_ALU_LT, "is_lt")                                                                          \
    X(GS_ALU_LE, "is_le")

typedef enum gs_alu {
#define GS_ALU_ENUM(e, n) e,
    GS_ALU_TABLE(GS_ALU_ENUM)
#undef GS_ALU_ENUM
        GS_ALU_COUNT
} gs_alu;
const char *gs_alu_name(gs_alu op);
int gs_alu_parse(const char *name, gs_alu *out); /* 0 on success */
/* Apply in fp32: compares give 1.0f / 0.0f. */
float gs_alu_apply(gs_alu op, float a, float b);

/* ---- activation functions (scalar engine): X(enum, name) ---- */
#define GS_ACT_TABLE(X)                                                                            \
    X(GS_ACT_IDENTITY, "identity")                                                                 \
    X(GS_ACT_RELU, "relu")                                                                         \
    X(GS_ACT_GELU, "gelu")           /* exact: x * Phi(x) */                                       \
    X(GS_ACT_GELU_TANH, "gelu_tanh") /* tanh approximation */                                      \
    X(GS_ACT_SILU, "silu")                                                                         \
    X(GS_ACT_SIGMOID, "sigmoid")                                                                   \
    X(GS_ACT_TANH, "tanh")                                                                         \
    X(GS_ACT_EXP, "exp")                                                                           \
    X(GS_ACT_LOG, "log")                                                                           \
    X(GS_ACT_SQRT, "sqrt")                                                                         \
    X(GS_ACT_RSQRT, "rsqrt")                                                                       \
    X(GS_ACT_RECIPROCAL, "reciprocal")                                                             \
    X(GS_ACT_SQUARE, "square")                                                                     \
    X(GS_ACT_ABS, "abs")

typedef enum gs_act {
#define GS_ACT_ENUM(e, n) e,
    GS_ACT_TABLE(GS_ACT_ENUM)
#undef GS_ACT_ENUM
        GS_ACT_COUNT
} gs_act;
const char *gs_act_name(gs_act f);
int gs_act_parse(const char *name, gs_act *out); /* 0 on success */
/* Evaluate in fp32 (the scalar engine's arithmetic). */
float gs_act_apply(gs_act f, float x);

/* ---- HBM tensors ---- */
typedef enum gs_tensor_kind { GS_TENSOR_INPUT, GS_TENSOR_OUTPUT, GS_TENSOR_SCRATCH } gs_tensor_kind;

#ifdef __cplusplus
}
#endif
#endif
