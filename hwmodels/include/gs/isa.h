/*
 * gs/isa.h - the tile instruction set: memory spaces, access patterns, instructions, programs.
 *
 * A program is what a kernel builds (gs/kernel.h) and what the executors run: the pure-C
 * functional executor (gs/exec.h) and the SystemC model (gs/model.h). Instructions are stored in
 * program (issue) order; each engine of each core executes its own instructions in that order.
 * Dependencies always point to earlier instructions.
 *
 * Addressing:
 *  - HBM: tensor `tensor`, element index = offset + p * part_stride + sum_k(i_k * stride[k])
 *    for partition-row p in [0, part_count).
 *  - SBUF / PSUM of core `core`: partition part_start + p, byte offset within the partition
 *    = offset + sum_k(i_k * stride[k]) * dtype_size. `tensor` names the buffer (allocation) the
 *    access falls in, for bounds checks and dependency tracking.
 * Free dimensions are listed outermost first; shape[ndim-1] is the innermost.
 *
 * Operand storage: an instruction (gs_instr) holds pointers to its operands' access patterns,
 * not the patterns. The program keeps each distinct pattern once (interned: equal patterns share
 * one copy) in chunks that never move, so the pointers stay valid while the program grows and
 * until it is freed. A kernel's operands repeat heavily (its tiles are few; an HBM view repeats
 * when a tile is reloaded): gen1's largest matmul (397,312 instructions, 925,696 operands) has
 * 11,273 distinct patterns, so an instruction takes 88 bytes instead of 392 with five inline
 * 64-byte patterns (a variable operand count alone would have kept ~250). The integer
 * immediates, which three opcodes use, are not in the record at all: the program keeps those of
 * the instructions that have any, by instruction index (gs_program_iimm).
 *
 * Every one of the GS_INSTR_MAX_IN + GS_INSTR_MAX_OUT slots is stored, used or not: an unused
 * slot points to the (interned) tensor = -1 pattern the builder left in it. So a read of any
 * slot sees exactly what the builder wrote, never another instruction's operand, and needs no
 * bounds check: `in->in[2]->tensor >= 0` as "is there a bias operand?" and matmul_mx's moving
 * scales in out[1] (beyond n_out) read as they did from inline arrays. Instructions are written
 * as a gs_instr_draft (inline operands, the old layout) and copied in by gs_program_append /
 * gs_program_append_raw (the kernel builder interns a draft's operands itself first, to check
 * them and derive dependencies from the interned copies). A pattern's identity is its value
 * (its 62 bytes of fields, not its padding), never its address: nothing may compare operand
 * pointers to mean "the same view".
 *
 * The vocabulary a kernel names (memory spaces, access patterns, opcodes, ALU ops, activation
 * functions) is in gs/isa_types.h, which gs/kernel.h includes; this header adds instructions
 * and programs, which kernels never see.
 */
#ifndef GS_ISA_H
#define GS_ISA_H

#include <stdio.h>
#include "gs/common.h"
#include "gs/config.h"
#include "gs/dtype.h"
#include "gs/isa_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- instruction flags ---- */
enum {
    GS_F_ACCUMULATE = 1u << 0, /* matmul: add into PSUM instead of overwrite */
    GS_F_SCALE_AP = 1u << 1,   /* activation: scale from in[1] ([P,1]) instead of imm[0];
                                  tensor_scalar: operand 0 from in[1] */
    GS_F_BIAS_AP = 1u << 2,    /* activation: bias from in[2]; tensor_scalar: operand 1 from
                                  in[2] */
    GS_F_ACC_OUT = 1u << 3,    /* activation: out[1] ([P,1] fp32) = sum along free of result */
    GS_F_HAS_OP1 = 1u << 4,    /* tensor_scalar: second op present; tensor_tensor: scalar op */
    GS_F_DOUBLE_ROW = 1u << 5, /* matmul: fp8 double-row mode (contraction 2 x partitions) */
};

#define GS_INSTR_MAX_IN 3
#define GS_INSTR_MAX_OUT 2

/*
 * One instruction. Operand conventions per opcode (P = partitions, F = free elements):
 *  dma_copy       out[0] <- in[0]; same dtype, same P, same F per row.
 *  dma_transpose  out[0] [F,P] <- in[0] [P,F] (2-byte dtypes).
 *  matmul         out[0] PSUM fp32 [M,N] (+)= in[0]^T [K,M] x in[1] [K,N]. GS_F_ACCUMULATE.
 *                 On a PE array tile (gs_matmul_tile_at): iimm[0] = row_off << 16 | col_off,
 *                 iimm[1] = rows << 16 | cols (0: the whole array); the same product.
 *                 A bf16 out[0] (engines.tensor.bf16_psum): the fp32 result, plus the bf16 PSUM
 *                 value read as fp32 when accumulating, rounded to bf16 on write.
 *                 GS_F_DOUBLE_ROW (fp8 "double row", a family feature): in[0] is [P, 2, M],
 *                 in[1] [P, 2, N] (outermost free dim 2), the contraction runs over the 2P
 *                 (partition, half) pairs: out[m][n] = sum_{p,h} in0[p][h][m] * in1[p][h][n].
 *  matmul_mx      out[0] PSUM fp32 or bf16 [M,N] (+)= MX product (a family feature) of in[0]
 *                 [P, M] (stationary) and in[1] [P, N] (moving), quad-packed MX dtypes whose
 *                 elements hold four values j = 0..3 each, with E8M0 scales in[2] (for in[0])
 *                 and GS_MX_MOVING_SCALE(in) (for in[1]: held in the unused out[1] slot, so
 *                 instructions keep three input slots; it is read, never
 *                 written, and the builder derives its dependencies as a read). The
 *                 contraction runs over the 4P (partition, j) pairs; the values of partitions
 *                 8g..8g+7 of one element column share one scale, held at partition
 *                 32*(p/32) + (p%32)/8 of the scale tile, same column:
 *                 out[m][n] = sum_{p,j} st[p][m][j] * S(st)[p][m] * mv[p][n][j] * S(mv)[p][n].
 *                 GS_F_ACCUMULATE.
 *  exponential    out[0] = exp(in[0] - s) on the vector engine (a family feature), s = imm[1]
 *                 or in[2] [P,1] (GS_F_BIAS_AP); GS_F_ACC_OUT: out[1] [P,1] fp32 = sum over
 *                 free of the result (as activation's accumulate).
 *  quantize_mx    out[0] [P, F/4] MXFP8 x4 and out[1] [P, F/4] e8m0 scales <- in[0] [P, F]
 *                 bf16/fp16 in SBUF (vector engine): each group of 8 partitions x 4 consecutive
 *                 elements gets one OCP MX scale (gs_mx_quantize_group), scales placed as for
 *                 matmul_mx.
 *  transpose      out[0] PSUM [F,P] <- in[0] [P,F] (tensor engine, identity trick).
 *  activation     out[0] = f(in[0] * scale + bias); scale = imm[0] or in[1] [P,1];
 *                 bias = imm[1] or in[2] [P,1]; func = act. GS_F_ACC_OUT: out[1] [P,1] fp32 =
 *                 sum over free of the result.
 *  tensor_tensor  out[0] = in[0] alu0 in[1]. With GS_F_HAS_OP1 (scalar_tensor_tensor):
 *                 out[0] = (in[0] alu0 s) alu1 in[1], s = imm[1] or in[2] [P,1] (GS_F_BIAS_AP);
 *                 iimm[0] = 1: s alu0 in[0]; iimm[1] = 1: in[1] alu1 (...).
 *  tensor_scalar  out[0] = (in[0] alu0 s0) alu1 s1; s0 = imm[0] or in[1] [P,1], s1 = imm[1] or
 *                 in[2] [P,1]; alu1 only with GS_F_HAS_OP1.
 *  tensor_reduce  out[0] [P, outer dims] = reduce(alu0: add/max/min) of in[0] over its innermost
 *                 `axes` free dims (iimm[0] = axes, 1..ndim); negated when iimm[1] = 1.
 *  bn_stats       out[0] [P,3] fp32 = (count, mean, M2) of in[0]'s free elements.
 *  bn_aggr        out[0] [P,2] fp32 = (mean, variance) combining in[0] [P, 3*k] chunks.
 *  tensor_copy    out[0] = in[0] with dtype conversion (e.g. PSUM fp32 -> SBUF bf16).
 *  memset         out[0] = imm[0].
 *  iota           out[0][p][j] = iimm[0] + iimm[1]*p + iimm[2]*j (j = flat free index).
 *  affine_select  out[0][p][j] = (iimm[0] + iimm[1]*p + iimm[2]*j) alu0 0 ? in[0][p][j] : imm[0]
 *                 (alu0 a comparison).
 *  partition_reduce    out[0][p][j] = reduce(alu0) over q of in[0][q][j] for every p of out[0].
 *  partition_broadcast out[0][p][j] = in[0][0][j].
 *  gather         out[0][p][:] = row idx[p] of in[0] (an HBM [V, D] tensor view), idx = in[1]
 *                 [P,1] int32; an index outside [0, V) is a run-time error.
 *  max8           out[0] [P,8] = the 8 largest of in[0] [P,F] per partition, descending (vector
 *                 engine; 8 <= F <= GS_TOPK8_FREE_MAX). Semantics, ties and NaN: ops_topk.c.
 *  find_index8    out[0] [P,8] int32 = the flat index in in[0] [P,F] of each of the 8 values
 *                 in[1] [P,8]: the first occurrence not already paired with an earlier equal
 *                 value (duplicates pair with ascending positions); not found: -1.
 *  match_replace8 out[0] [P,F] = in[0] with the first occurrence of each of the 8 values in[1]
 *                 replaced by imm[0]; out[1] (optional, n_out 2) [P,8] int32 = their indices.
 *                 The values are matched in reverse order (7 down to 0, duplicates pair with
 *                 descending positions); not found: no replacement, index -1.
 *  tensor_tensor_scan  per partition along the flat free index i (vector engine):
 *                 out[0][i] = (in[0][i] alu0 out[0][i-1]) alu1 in[1][i], out[0][-1] = imm[1]
 *                 or in[2] [P,1] (GS_F_BIAS_AP); the chain is carried in fp32
 *                 (nki.isa.tensor_tensor_scan; in[0] and in[1] not both in PSUM).
 *  stream_shuffle out[0] [Pd, F] <- in[0] [Ps, F], same dtype, within quadrants of 32
 *                 partitions (vector engine; nki.isa.nc_stream_shuffle): out[0][q] =
 *                 in[0][32 * (q / 32) + m], m = entry q % 32 of the shuffle mask
 *                 (gs_shuffle_entry), or out[0][q] unchanged when m is GS_SHUFFLE_KEEP.
 */
/* stream_shuffle's mask: 32 entries of 6 bits (0..31, or GS_SHUFFLE_KEEP: the partition is left
 * unchanged) packed into the instruction's iimm[3], entry i at bits 6i..6i+5 of the 192 bits
 * iimm[0] (low) .. iimm[2]. */
#define GS_SHUFFLE_ENTRIES 32
#define GS_SHUFFLE_KEEP 32u
static inline unsigned gs_shuffle_entry(const int64_t iimm[3], unsigned i)
{
    const unsigned bit = 6u * i, w = bit / 64u, sh = bit % 64u;
    uint64_t v = (uint64_t)iimm[w] >> sh;
    if (sh > 58u) v |= (uint64_t)iimm[w + 1] << (64u - sh);
    return (unsigned)(v & 63u);
}
static inline void gs_shuffle_set(int64_t iimm[3], unsigned i, unsigned entry)
{
    const unsigned bit = 6u * i, w = bit / 64u, sh = bit % 64u;
    iimm[w] = (int64_t)((uint64_t)iimm[w] | ((uint64_t)(entry & 63u) << sh));
    if (sh > 58u)
        iimm[w + 1] = (int64_t)((uint64_t)iimm[w + 1] | ((uint64_t)(entry & 63u) >> (64u - sh)));
}

/* matmul_mx's fourth input, the moving operand's scales (see matmul_mx above): an instruction's
 * pointer to it (GS_MX_MOVING_SCALE) and a draft's slot (GS_MX_MOVING_SCALE_SLOT). */
#define GS_MX_MOVING_SCALE(instr) ((instr)->out[1])
#define GS_MX_MOVING_SCALE_SLOT(draft) (&(draft)->out[1])

/* The fields of an instruction other than its operands (shared by gs_instr and gs_instr_draft,
 * which differ only in how they hold the operands). */
#define GS_INSTR_FIELDS                                                                            \
    gs_opcode op : 8;                                                                              \
    gs_engine engine : 8;                                                                          \
    gs_alu alu0 : 8, alu1 : 8;                                                                     \
    gs_act act : 8;                                                                                \
    uint8_t n_in, n_out; /* operand slots in use (matmul_mx also reads out[1], see above) */       \
    uint16_t core;       /* core whose engine executes it */                                       \
    uint16_t queue;      /* DMA: queue index on that core */                                       \
    uint32_t flags;                                                                                \
    float imm[2];                                                                                  \
    uint32_t n_deps;                                                                               \
    int line;                                                                                      \
    uint32_t *deps;   /* indices of earlier instructions this one waits for (owned by program) */  \
    const char *file; /* kernel source file (string literal from __FILE__) */

/*
 * An instruction of a program. Its operands are pointers to access patterns the program owns
 * (see "Operand storage" at the top): read them as `*in->in[k]` / `in->out[k]->tensor`. Every
 * slot, used or not, points to a pattern: an unused slot to one with tensor = -1. The integer
 * immediates (iota, affine_select, tensor_reduce) are the program's: gs_program_iimm(p, i).
 */
typedef struct gs_instr {
    GS_INSTR_FIELDS
    const gs_ap *out[GS_INSTR_MAX_OUT];
    const gs_ap *in[GS_INSTR_MAX_IN];
} gs_instr;

/*
 * An instruction being written (the kernel builder, tests): the same fields with the operands
 * held inline. gs_program_append copies it into the program; unused slots hold tensor = -1 (and
 * zeros), as instructions always had.
 */
typedef struct gs_instr_draft {
    GS_INSTR_FIELDS
    int64_t iimm[3];
    gs_ap out[GS_INSTR_MAX_OUT];
    gs_ap in[GS_INSTR_MAX_IN];
} gs_instr_draft;

/* A draft seen as an instruction: `view`'s operand pointers point into `d` (valid while `d`
 * lives and is not moved). For code and tests that evaluate an instruction before, or without,
 * appending it; the integer immediates, not part of an instruction, stay in the draft. Returns
 * view. */
const gs_instr *gs_instr_draft_view(const gs_instr_draft *d, gs_instr *view);

/* ---- HBM tensors (gs_tensor_kind: gs/isa_types.h) ---- */
typedef struct gs_tensor_info {
    char name[64];
    gs_dtype dtype;
    gs_tensor_kind kind;
    int ndim;
    int64_t shape[GS_AP_MAX_DIMS];
    uint64_t elems;
    uint64_t bytes;
    uint64_t hbm_addr; /* assigned by the program, 4 KiB aligned */
} gs_tensor_info;

/* SBUF/PSUM buffers, for bounds checks, tracking and listings. */
typedef struct gs_buffer_info {
    char name[48];
    gs_memspace space;
    uint16_t core;
    uint32_t part_start, part_count;
    uint64_t offset;  /* byte offset within each partition */
    uint64_t bytes;   /* bytes per partition */
    const char *file; /* where its pool was declared (kernel source; NULL: not known) */
    int line;
} gs_buffer_info;

/* ---- programs ---- */
typedef struct gs_program gs_program;

/* Create an empty program for a validated config. NULL on OOM. */
gs_program *gs_program_create(const gs_config *cfg);
void gs_program_free(gs_program *p); /* NULL is a no-op */
const gs_config *gs_program_config(const gs_program *p);

/* Declare an HBM tensor; returns its id (>= 0), or -1 with err set (bad shape, HBM full). */
int32_t gs_program_add_tensor(gs_program *p, const char *name, gs_dtype t, gs_tensor_kind kind,
                              int ndim, const int64_t *shape, gs_error *err);
size_t gs_program_tensor_count(const gs_program *p);
const gs_tensor_info *gs_program_tensor(const gs_program *p, int32_t id);
int32_t gs_program_find_tensor(const gs_program *p, const char *name); /* -1 if absent */

size_t gs_program_buffer_count(const gs_program *p);
const gs_buffer_info *gs_program_buffer(const gs_program *p, int32_t id);

size_t gs_program_count(const gs_program *p);
const gs_instr *gs_program_instr(const gs_program *p, size_t i);
/* The integer immediates (iimm[3]) of instruction i: the program's copy, or three zeros for an
 * instruction without any (most; also for i out of range). Valid until the program is freed. */
const int64_t *gs_program_iimm(const gs_program *p, size_t i);
/* Instruction i of p copied back into a draft (operands and integer immediates by value), e.g.
 * to append a variant of it. i must be < gs_program_count(p). */
void gs_program_instr_to_draft(const gs_program *p, size_t i, gs_instr_draft *d);
/* Number of cores the program uses (max core id + 1). */
unsigned gs_program_cores_used(const gs_program *p);
/* High-water marks in bytes per partition. */
uint64_t gs_program_sbuf_high_water(const gs_program *p);
uint64_t gs_program_psum_high_water(const gs_program *p);

/*
 * Append an instruction as given (deps, file, line copied), WITHOUT deriving dependencies or
 * checking operands. For tests that need hand-made programs (e.g. deadlocks: a dependency on
 * a later instruction). Kernels use gs/kernel.h, which validates and derives dependencies.
 * Returns the new index or -1 on OOM.
 */
int64_t gs_program_append_raw(gs_program *p, const gs_instr_draft *in);

/* The program fits cfg's chip: every instruction on an existing core and on a valid engine the
 * config has, DMA copies and transposes (only they) on the DMA engine, each on an existing queue
 * ID. GS_ERR_INVALID (GS_ERR_UNSUPPORTED for an engine the config lacks) naming the first
 * instruction that does not, at its source line. */
gs_status gs_program_validate(const gs_program *p, const gs_config *cfg, gs_error *err);

/* The condition gs_program_validate checks, for one instruction, for a caller that sweeps the
 * program anyway (the model checks each instruction as it binds it to a stream, and asks
 * gs_program_validate for the error only when one fails). `engines` has bit (1u << e) set for
 * each engine e the config has (gs_config_engine_mask). */
static inline int gs_instr_placement_ok(const gs_instr *in, unsigned cores, unsigned queues,
                                        unsigned engines)
{
    const unsigned e = (unsigned)in->engine;
    const int dma_op = in->op == GS_OP_DMA_COPY || in->op == GS_OP_DMA_TRANSPOSE;
    return in->core < cores && e < (unsigned)GS_ENGINE_COUNT && ((engines >> e) & 1u) &&
           dma_op == (e == (unsigned)GS_ENG_DMA) &&
           (e != (unsigned)GS_ENG_DMA || in->queue < queues);
}

/* Text listing, one instruction per line: index, core/engine/queue, opcode, operands,
 * immediates, deps, file:line. */
void gs_program_disasm(const gs_program *p, FILE *out);
void gs_instr_format(const gs_program *p, size_t i, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
