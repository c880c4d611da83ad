/*
 * gen4/family.c - NeuronCore-v4 class (Trainium3): MX matmul and Quantize-MX, plus the fp8
 * double-row matmul of NeuronCore-v3 (gen3.h).
 *
 * From the Trainium3 architecture guide and the MXFP matmul deep dive:
 *  - MX matmul: MXFP8 (e4m3, e5m2) and MXFP4 (e2m1) operands in quad-packed (x4) elements,
 *    one E8M0 scale per group of 32 values along the contraction (8 partitions x 4 values),
 *    scales held in the SBUF partition quadrant of their group; contraction up to 512 values
 *    (128 partitions x 4) per instruction at 4x the bf16 throughput; fp32 or bf16 output.
 *  - bf16 matmul results in PSUM (engines.tensor.bf16_psum): nc_matmul may write, and add to, a
 *    bf16 PSUM tile; the array accumulates in fp32 and the result is rounded (RNE) on write.
 *  - fast exponential on the vector engine (op exponential: exp(x - s) with an optional row
 *    sum), priced by the generic vector formula at the engine's element rate, with no function
 *    table to load.
 *  - Quantize-MX on the vector engine: bf16/fp16 source in SBUF to MXFP8 x4 data and E8M0
 *    scales in SBUF (no fp4 output), four input elements per partition per cycle.
 * Semantics: gs/isa.h and hwmodels/src/exec.c; builder rules: hwmodels/src/kb.c from the caps
 * set here; cost: the generic tensor formula prices an x4 column like a bf16 column (rate 1 in
 * configs/gen4.yaml), so each instruction does 4x the bf16 work in the same time, and
 * Quantize-MX is priced here from the vector engine's bf16 element rate.
 */
#include "gen3.h"

#include <math.h>

#include "gs/cost.h"

static const gs_dtype mx_types[] = {GS_FP8_E4M3_X4, GS_FP8_E5M2_X4, GS_FP4_E2M1_X4};

static void validate(const gs_config *c, gs_diags *d)
{
    gs_gen3_validate(c, d);
    int has_mm = (c->ops & (1ull << GS_OP_MATMUL_MX)) != 0;
    int has_q = (c->ops & (1ull << GS_OP_QUANTIZE_MX)) != 0;
    if ((has_mm || has_q) && !(c->dtypes & (1u << GS_E8M0)))
        gs_diags_add(d, GS_ERR_INVALID, c->path, 0, 0,
                     "dtypes: matmul_mx / quantize_mx need the e8m0 scale dtype");
    if (has_mm) {
        int any = 0;
        for (size_t i = 0; i < GS_ARRAY_LEN(mx_types); i++)
            if (c->tensor.rate[mx_types[i]].src && c->tensor.rate[mx_types[i]].v > 0) any = 1;
        if (!any)
            gs_diags_add(d, GS_ERR_INVALID, c->path, 0, 0,
                         "ops: matmul_mx needs a tensor rate for an MX dtype "
                         "(engines.tensor.rate.fp8_e4m3_x4, fp8_e5m2_x4 or fp4_e2m1_x4)");
    }
    if (has_q &&
        !(c->vector.elems_per_cycle[GS_BF16].src || c->vector.elems_per_cycle[GS_FP16].src))
        gs_diags_add(d, GS_ERR_INVALID, c->path, 0, 0,
                     "ops: quantize_mx needs engines.vector.elems_per_cycle.bf16 or .fp16 "
                     "(its rate)");
}

static void caps_fixup(const gs_config *c, gs_caps *caps)
{
    gs_gen3_caps_fixup(c, caps);
    if (c->ops & (1ull << GS_OP_MATMUL_MX)) {
        caps->mx_k = 4u * caps->pe_rows;
        caps->mx_group = 32;
        for (size_t i = 0; i < GS_ARRAY_LEN(mx_types); i++) {
            gs_dtype t = mx_types[i];
            if (c->tensor.rate[t].src && c->tensor.rate[t].v > 0 && (c->dtypes & (1u << t)))
                caps->mx_dtypes |= 1u << t;
        }
    }
    caps->matmul_bf16_psum = c->tensor.bf16_psum;
    /* Quantize-MX writes MXFP8 only (no fp4 output) */
    if (c->ops & (1ull << GS_OP_QUANTIZE_MX))
        for (int t = GS_FP8_E4M3_X4; t <= GS_FP8_E5M2_X4; t++)
            if (c->dtypes & (1u << t)) caps->quantize_mx_dtypes |= 1u << t;
}

static int compute_cycles(const gs_config *c, const gs_instr *in, double *cycles)
{
    if (gs_gen3_compute_cycles(c, in, cycles)) return 1;
    if (in->op != GS_OP_QUANTIZE_MX) return 0;
    /* four source elements per partition per cycle (the vector engine's bf16 performance
     * mode): the engine's bf16/fp16 elements per cycle, over ceil(P / lanes) passes */
    const gs_simd_cfg *v = &c->vector;
    double P = in->in[0]->part_count, F = (double)gs_ap_free_elems(in->in[0]);
    double epc = v->elems_per_cycle[in->in[0]->dtype].v;
    if (!(epc > 0.0)) epc = 1.0;
    double passes = v->lanes.v > 0.0 ? ceil(P / v->lanes.v) : P;
    *cycles = GS_MAX(v->min_ii.v, passes * F / epc) + v->fixed_overhead.v;
    return 1;
}

const gs_family gs_family_gen4 = {
    .name = "gen4",
    .summary = "NeuronCore-v4 class: MX matmul (MXFP8/MXFP4, K up to 512 at 4x bf16), "
               "Quantize-MX, fp8 double row",
    .features = (1u << GS_FEAT_FP8_DOUBLE_ROW) | (1u << GS_FEAT_MX_MATMUL) |
                (1u << GS_FEAT_QUANTIZE_MX) | (1u << GS_FEAT_BF16_PSUM) |
                (1u << GS_FEAT_VECTOR_EXP),
    .isa_ops =
        (1ull << GS_OP_MATMUL_MX) | (1ull << GS_OP_QUANTIZE_MX) | (1ull << GS_OP_EXPONENTIAL),
    .validate = validate,
    .caps_fixup = caps_fixup,
    .compute_cycles = compute_cycles,
};
