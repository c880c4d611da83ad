/*
 * gen1/family.c - NeuronCore-v1 class (Inferentia). Everything that differs from the other
 * generations is a number or a flag in configs/gen1.yaml (no GpSimd engine: `present: false`),
 * so the family has no hooks and no optional features: the generic model applies.
 */
#include "gs/family.h"

const gs_family gs_family_gen1 = {
    .name = "gen1",
    .summary = "NeuronCore-v1 class: generic model, no optional features",
};
