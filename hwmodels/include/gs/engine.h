/*
 * gs/engine.h - engine ids: the compute engines of a core plus its DMA.
 *
 * Its own header because both sides name engines: a kernel picks the engine of an instruction
 * (gs/kernel.h) and a config says which engines a generation has (gs/config.h), and a kernel
 * must not see the config.
 */
#ifndef GS_ENGINE_H
#define GS_ENGINE_H

#ifdef __cplusplus
extern "C" {
#endif

#define GS_ENGINE_TABLE(X)                                                                         \
    X(GS_ENG_TENSOR, "tensor")                                                                     \
    X(GS_ENG_VECTOR, "vector")                                                                     \
    X(GS_ENG_SCALAR, "scalar")                                                                     \
    X(GS_ENG_GPSIMD, "gpsimd")                                                                     \
    X(GS_ENG_DMA, "dma")

typedef enum gs_engine {
#define GS_ENGINE_ENUM(e, n) e,
    GS_ENGINE_TABLE(GS_ENGINE_ENUM)
#undef GS_ENGINE_ENUM
        GS_ENGINE_COUNT
} gs_engine;
const char *gs_engine_name(gs_engine e);

#ifdef __cplusplus
}
#endif
#endif
