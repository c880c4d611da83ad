/*
 * gen2/family.c - NeuronCore-v2 class (Trainium1 / Inferentia2): the baseline the generic model
 * describes (gs/cost.h). No hooks and no optional features.
 */
#include "gs/family.h"

const gs_family gs_family_gen2 = {
    .name = "gen2",
    .summary = "NeuronCore-v2 class: generic model, no optional features",
};
