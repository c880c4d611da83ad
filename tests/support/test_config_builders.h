/*
 * test_config_builders.h - hand-built generation configs for unit tests that must not depend on
 * the YAML loader (cost model, executor, builder tests).
 *
 * The configs are filled into caller-owned storage; their strings point to static text, so a
 * built config must NOT be passed to gs_config_free. Every value is tagged src = "test".
 * The numbers follow the public Neuron documentation where a number is published (gen2: 128x128 PE
 * at 2.8 GHz, vector 1.12 GHz, scalar 1.4 GHz, 17 B/ns per DMA engine ...) and are round
 * assumptions elsewhere; tests that check formulas should read the values back from the struct
 * rather than repeat them.
 */
#ifndef GS_TEST_CONFIG_BUILDERS_H
#define GS_TEST_CONFIG_BUILDERS_H

#include "gs/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gen2-like: GpSimd present, no fp8 matmul, no DMA transpose, software DMA descriptors. */
void gs_test_config_gen2_like(gs_config *c);
/* gen3-like: gen2-like plus fp8 e4m3/e5m2 at 2x the bf16 matmul rate, bf16 2x on the vector
 * engine, dma_transpose (transpose_factor 2) and hardware descriptor generation. */
void gs_test_config_gen3_like(gs_config *c);
/* gen1-like: gen2-like without the GpSimd engine (and its iota, affine_select, partition
 * ops and gather). */
void gs_test_config_gen1_like(gs_config *c);

/* Set one gs_num to v with src "test". */
void gs_test_num_set(gs_num *n, double v);

#ifdef __cplusplus
}
#endif
#endif
