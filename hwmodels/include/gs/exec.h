/*
 * gs/exec.h - device memory images and the pure-C functional semantics of every instruction.
 *
 * "What happens" lives here; "how long it takes" lives in gs/cost.h. The SystemC model calls
 * gs_exec_instr() when an instruction executes; gs_exec_program() runs a whole program in issue
 * order (a valid order, since dependencies point backwards) for fast correctness checks.
 */
#ifndef GS_EXEC_H
#define GS_EXEC_H

#include "gs/common.h"
#include "gs/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_mem gs_mem; /* HBM tensors + per-core SBUF and PSUM (opaque) */

/* Create memory for a program: every HBM tensor (zeroed) and SBUF/PSUM for every core the
 * program uses, zeroed where the program's buffers lie (all of it for a program without
 * buffers; the rest cannot be addressed and is left untouched, so costs no memory). NULL with
 * err set on OOM. */
gs_mem *gs_mem_create(const gs_program *p, gs_error *err);
/* The same with SBUF/PSUM set to `fill` instead of zero (gs_mem_poison without a second pass). */
gs_mem *gs_mem_create_filled(const gs_program *p, uint8_t fill, gs_error *err);
void gs_mem_free(gs_mem *m); /* NULL ok */

/* Encoded bytes of HBM tensor `id` (row-major, tensor's dtype). */
void *gs_mem_tensor(gs_mem *m, int32_t id);
/* SBUF/PSUM of a core: partitions x gs_mem_partition_stride bytes, partition-major. NULL if
 * the core is not used by the program. */
uint8_t *gs_mem_space(gs_mem *m, gs_memspace space, unsigned core);
/* Bytes from one partition to the next in gs_mem_space: the furthest byte the program's
 * buffers and operands reach in a partition (64-byte aligned), not the hardware's partition
 * size (the rest cannot be addressed); the full partition for a program without buffers. */
size_t gs_mem_partition_stride(const gs_mem *m, gs_memspace space);
/* Fill SBUF/PSUM with a pattern (to catch reads of uninitialised tiles): every byte of the
 * program's buffers (nothing else can be addressed), or all of it when it has none. */
void gs_mem_poison(gs_mem *m, uint8_t byte);

/* Execute one instruction's semantics. Errors (e.g. a gather index out of range) name the
 * instruction's kernel source line. */
gs_status gs_exec_instr(gs_mem *m, const gs_program *p, size_t index, gs_error *err);
/* All instructions in issue order; stops at the first error. */
gs_status gs_exec_program(gs_mem *m, const gs_program *p, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
