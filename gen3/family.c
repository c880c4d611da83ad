/*
 * gen3/family.c - NeuronCore-v3 class (Trainium2): fp8 "double row" matmul.
 *
 * The Trainium2 architecture guide: the tensor engine multiplies fp8 (e4m3, e5m2, mixed) at
 * twice the bf16 throughput by doubling the contraction of one instruction from 128 to 256: each
 * processing element holds two fp8 pairs and adds both products per cycle. The operands keep
 * 128 partitions and take an outermost free dimension of 2 (the two halves of K); the
 * instruction takes as long as a bf16 one with K = 128. Not combinable with column tiling,
 * sparse matmul or transpose mode (none of which the generic model has). A contraction that is
 * not a multiple of two must be zero-padded by the kernel.
 *
 * Semantics: gs/isa.h (GS_F_DOUBLE_ROW; the executor treats it as a 2P contraction). Builder
 * limits: gs_matmul_dr_at (hwmodels/src/kb.c) from caps.double_row_k. Cost: here.
 */
#include "gen3.h"

#include "gs/cost.h"

void gs_gen3_validate(const gs_config *c, gs_diags *d)
{
    if (!c->tensor.double_row) return;
    int fp8 = 0;
    for (int t = GS_FP8_E4M3; t <= GS_FP8_E5M2; t++)
        if (c->tensor.rate[t].src && c->tensor.rate[t].v > 0 && (c->dtypes & (1u << t))) fp8 = 1;
    if (!fp8)
        gs_diags_add(d, GS_ERR_INVALID, c->path, 0, 0,
                     "engines.tensor.double_row: needs an fp8 matmul "
                     "(engines.tensor.rate.fp8_e4m3 or .fp8_e5m2 and the dtype in dtypes)");
}

void gs_gen3_caps_fixup(const gs_config *c, gs_caps *caps)
{
    if (!c->tensor.double_row) return;
    caps->double_row_k = 2u * caps->pe_rows;
    for (int t = GS_FP8_E4M3; t <= GS_FP8_E5M2; t++)
        if (caps->matmul_dtypes & (1u << t)) caps->double_row_dtypes |= 1u << t;
}

int gs_gen3_compute_cycles(const gs_config *c, const gs_instr *in, double *cycles)
{
    if (in->op != GS_OP_MATMUL || !(in->flags & GS_F_DOUBLE_ROW)) return 0;
    const gs_tensor_cfg *t = &c->tensor;
    /* [P, 2, M] x [P, 2, N]: the array is loaded with M columns and streams N moving columns,
     * both halves at once, at the per-column rate of the dtype (the bf16 rate for fp8) */
    double M = (double)gs_ap_free_elems(in->in[0]) / 2.0;
    double N = (double)gs_ap_free_elems(in->in[1]) / 2.0;
    double rate = GS_MIN(t->rate[in->in[0]->dtype].v, t->rate[in->in[1]->dtype].v);
    if (!(rate > 0.0)) rate = 1.0;
    double formula = GS_MAX(GS_MIN(t->stationary_load.v, M), N / rate);
    *cycles = GS_MAX(t->min_ii.v, formula) + t->fixed_overhead.v;
    return 1;
}

const gs_family gs_family_gen3 = {
    .name = "gen3",
    .summary = "NeuronCore-v3 class: fp8 double-row matmul (K up to 256 at 2x bf16)",
    .features = 1u << GS_FEAT_FP8_DOUBLE_ROW,
    .validate = gs_gen3_validate,
    .caps_fixup = gs_gen3_caps_fixup,
    .compute_cycles = gs_gen3_compute_cycles,
};
