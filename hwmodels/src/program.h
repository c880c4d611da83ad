/*
 * program.h - private view of gs_program for the kernel builder (kb.c). Not installed; kernels
 * and the TLM layer use the accessors of gs/isa.h.
 */
#ifndef GS_PROGRAM_PRIVATE_H
#define GS_PROGRAM_PRIVATE_H

#include "gs/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Register an SBUF/PSUM buffer; returns its id or -1 on OOM. */
int32_t gs_program_add_buffer(gs_program *p, const gs_buffer_info *b);
/* Record per-partition usage of a space so the high-water marks are right. */
void gs_program_note_usage(gs_program *p, gs_memspace space, uint64_t bytes_per_partition);
/* Append an instruction whose deps are given in a temporary array (copied); its operands are
 * copied into the program's pattern pool (gs/isa.h), its own deps pointer is ignored. */
int64_t gs_program_append(gs_program *p, const gs_instr_draft *in, const uint32_t *deps,
                          uint32_t n_deps);

/* Opaque per-program state owned by the kernel builder (dependency tracking shared by the
 * builders of every core), freed with the program. */
void *gs_program_builder_state(const gs_program *p);
void gs_program_set_builder_state(gs_program *p, void *state, void (*free_fn)(void *));

#ifdef __cplusplus
}
#endif
#endif
