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

/*
 * Facts about one interned pattern that the kernel builder computes once per distinct pattern
 * instead of once per operand use (a kernel's operands repeat heavily, gs/isa.h), kept beside
 * the pattern in the program's pool. All zero when the pattern is first interned; `known` says
 * which facts the builder has filled (GS_FACT_*). The builder (kb.c, deps.c) defines them: only
 * facts that depend on the pattern alone, or on what never changes once made (the program's
 * config, tensors and buffers), may be cached here.
 */
typedef struct gs_ap_facts {
    int64_t lo, hi;      /* GS_FACT_FOOTPRINT: bounding box (gs_ap_bbox) */
    uint64_t buf_offset; /* GS_FACT_CHECKED, SBUF/PSUM: the byte offset of its buffer */
    uint32_t p0, p1;     /* GS_FACT_FOOTPRINT: partitions [p0, p1) of the footprint (HBM: [0, 1)) */
    uint8_t known;       /* GS_FACT_* bits */
    uint8_t dense; /* GS_FACT_FOOTPRINT: the pattern is one contiguous run (its bounding box) */
} gs_ap_facts;

enum {
    GS_FACT_FOOTPRINT = 1u << 0, /* lo, hi, p0, p1, dense are filled */
    GS_FACT_CHECKED = 1u << 1,   /* the operand checks that depend on no builder state passed */
    GS_FACT_ALIGNED = 1u << 2,   /* a compute engine may address its partitions (kb.c) */
};

/* The program's copy of pattern `a` (an existing equal one, or a new one) and, in *facts, its
 * facts; NULL on OOM. The copy lives as long as the program (gs/isa.h). */
const gs_ap *gs_program_intern(gs_program *p, const gs_ap *a, gs_ap_facts **facts);
/* gs_program_intern of every operand slot of a draft (used or not), in one call: out[k], fout[k]
 * for in->out[k] and ins[k], fin[k] for in->in[k]. 0 on OOM. */
int gs_program_intern_operands(gs_program *p, const gs_instr_draft *in,
                               const gs_ap *out[GS_INSTR_MAX_OUT],
                               gs_ap_facts *fout[GS_INSTR_MAX_OUT],
                               const gs_ap *ins[GS_INSTR_MAX_IN],
                               gs_ap_facts *fin[GS_INSTR_MAX_IN]);
/* gs_program_append with the operands already interned (gs_program_intern): out[k] and in[k]
 * stand for the draft's operands, which are not read. */
int64_t gs_program_append_interned(gs_program *p, const gs_instr_draft *in,
                                   const gs_ap *const out[GS_INSTR_MAX_OUT],
                                   const gs_ap *const ins[GS_INSTR_MAX_IN], const uint32_t *deps,
                                   uint32_t n_deps);

/* Opaque per-program state owned by the kernel builder (dependency tracking shared by the
 * builders of every core), freed with the program. */
void *gs_program_builder_state(const gs_program *p);
void gs_program_set_builder_state(gs_program *p, void *state, void (*free_fn)(void *));

#ifdef __cplusplus
}
#endif
#endif
