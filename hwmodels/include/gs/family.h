/*
 * gs/family.h - generation families: the behaviour a config's `family:` selects.
 *
 * Numbers live in configs/genN.yaml; behaviour that a number cannot express lives in the genN/
 * folder of the family, which registers one gs_family entry (genN/CMakeLists.txt adds its
 * source to gs_core and its name to the family list; the build generates the table from that
 * list). Every hook may be NULL, which means the generic model (hwmodels/) alone:
 *
 *  - features:       the optional hardware features the family has (GS_FEATURE_TABLE). A config
 *                    that enables a feature its family lacks is a config error naming both.
 *  - validate:       extra consistency checks of a loaded config (errors go to diags).
 *  - caps_fixup:     adjust what kernels are told about the target (gs_caps), e.g. the
 *                    double-row contraction limit.
 *  - compute_cycles: cost override for compute-engine instructions: return 1 and set *cycles to
 *                    price the instruction, 0 to leave it to the generic formulas (gs/cost.h).
 *  - isa_ops:        extension opcodes (gs/isa.h) the family's engines execute; a config may
 *                    list such an op only when its family has it.
 *
 * A family may reuse another family's hooks (gen4 calls gen3's double-row cost).
 */
#ifndef GS_FAMILY_H
#define GS_FAMILY_H

#include "gs/config.h"
#include "gs/isa.h"
#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum, name, what enables it in a config, whether config `c` enables it): the one place a
 * feature is declared; its detection is the last column (gs_config_features), not code. */
#define GS_FEATURE_TABLE(X)                                                                        \
    X(GS_FEAT_FP8_DOUBLE_ROW, "fp8_double_row", "engines.tensor.double_row: true",                 \
      c->tensor.double_row)                                                                        \
    X(GS_FEAT_MX_MATMUL, "mx_matmul", "ops: matmul_mx", (c->ops >> GS_OP_MATMUL_MX) & 1u)          \
    X(GS_FEAT_QUANTIZE_MX, "quantize_mx", "ops: quantize_mx", (c->ops >> GS_OP_QUANTIZE_MX) & 1u)  \
    X(GS_FEAT_BF16_PSUM, "bf16_psum", "engines.tensor.bf16_psum: true", c->tensor.bf16_psum)       \
    X(GS_FEAT_VECTOR_EXP, "vector_exponential", "ops: exponential",                                \
      (c->ops >> GS_OP_EXPONENTIAL) & 1u)

typedef enum gs_feature {
#define GS_FEAT_ENUM(e, n, how, on) e,
    GS_FEATURE_TABLE(GS_FEAT_ENUM)
#undef GS_FEAT_ENUM
        GS_FEATURE_COUNT
} gs_feature;
const char *gs_feature_name(gs_feature f);
/* How a config enables feature f (for messages and docs). */
const char *gs_feature_config_key(gs_feature f);
/* Bit set (1u << gs_feature) of the features a config enables. */
uint32_t gs_config_features(const gs_config *c);

typedef struct gs_family {
    const char *name;    /* the `family:` value, e.g. "gen3" */
    const char *summary; /* one line for `list gens` and docs */
    uint32_t features;   /* bit (1u << gs_feature) */
    uint64_t isa_ops;    /* bit (1ull << gs_opcode) of extension opcodes */
    void (*validate)(const gs_config *c, gs_diags *d);
    void (*caps_fixup)(const gs_config *c, gs_caps *caps);
    int (*compute_cycles)(const gs_config *c, const gs_instr *in, double *cycles);
} gs_family;

/* The registered families, in build order. */
size_t gs_family_count(void);
const gs_family *gs_family_at(size_t i);
/* NULL when no family has that name (or name is NULL). */
const gs_family *gs_family_find(const char *name);
/* "gen1, gen2, ..." into buf (for messages). */
void gs_family_list(char *buf, size_t size);
/* Extension opcodes: those some family registers in isa_ops (not available by default). */
uint64_t gs_family_extension_ops(void);

/* Check a config against its family: known family, features and extension ops the family
 * has, then the family's validate hook. Errors are added to diags at file:line:col (where
 * `family:` was written); returns their number. */
size_t gs_family_check_config(const gs_config *c, const char *file, int line, int col,
                              gs_diags *diags);

#ifdef __cplusplus
}
#endif
#endif
