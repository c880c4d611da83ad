/*
 * gen3.h - NeuronCore-v3 behaviour that later families reuse (gen4 has double-row fp8 too).
 */
#ifndef GS_GEN3_H
#define GS_GEN3_H

#include "gs/family.h"

/* engines.tensor.double_row needs an fp8 matmul rate. */
void gs_gen3_validate(const gs_config *c, gs_diags *d);
/* Tell kernels the double-row contraction limit (2 x pe_rows) and its dtypes. */
void gs_gen3_caps_fixup(const gs_config *c, gs_caps *caps);
/* The cost of a double-row matmul; 0 (not priced) for every other instruction. */
int gs_gen3_compute_cycles(const gs_config *c, const gs_instr *in, double *cycles);

#endif
