/*
 * gs/dtype.h - the element types of the accelerator and exact conversions between them.
 *
 * Memory holds real encoded bytes (a bf16 element is 2 bytes), so capacities and DMA byte
 * counts are true. Arithmetic is done in fp32 (as the engines do) and rounded to the output type
 * with round-to-nearest-even.
 *
 * Per-type rules on conversion from fp32:
 *  - fp32: identity.
 *  - bf16, fp16: IEEE-style; overflow rounds to +-inf; NaN stays NaN (quiet); subnormals kept.
 *  - fp8 e4m3 (the "fn" variant: no infinities, max 448, NaN = S.1111.111): overflow and
 *    +-inf saturate to +-448; NaN -> NaN.
 *  - fp8 e5m2: IEEE-style like fp16 (max 57344, has inf and NaN); overflow -> +-inf.
 *  - int8 / int32: round to nearest even, saturate to the type's range, NaN -> 0.
 * Conversion to fp32 is exact for every type (int32 is rounded to the nearest fp32).
 */
#ifndef GS_DTYPE_H
#define GS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum, name, bytes, is_float) */
#define GS_DTYPE_TABLE(X)                                                                          \
    X(GS_FP32, "fp32", 4, 1)                                                                       \
    X(GS_BF16, "bf16", 2, 1)                                                                       \
    X(GS_FP16, "fp16", 2, 1)                                                                       \
    X(GS_FP8_E4M3, "fp8_e4m3", 1, 1)                                                               \
    X(GS_FP8_E5M2, "fp8_e5m2", 1, 1)                                                               \
    X(GS_INT8, "int8", 1, 0)                                                                       \
    X(GS_INT32, "int32", 4, 0)

typedef enum gs_dtype {
#define GS_DTYPE_ENUM(e, name, bytes, isf) e,
    GS_DTYPE_TABLE(GS_DTYPE_ENUM)
#undef GS_DTYPE_ENUM
        GS_DTYPE_COUNT
} gs_dtype;

/* "bf16" etc.; "?" for an invalid value. */
const char *gs_dtype_name(gs_dtype t);
/* Parse a name ("bf16", also "float32"/"bfloat16"/"float16"/"fp8e4m3"... aliases);
 * returns 0 on success. */
int gs_dtype_parse(const char *name, gs_dtype *out);
/* Bytes per element (0 for an invalid value). */
size_t gs_dtype_size(gs_dtype t);
int gs_dtype_is_float(gs_dtype t);
/* Largest finite value of the type (fp32 max for fp32; 127 for int8). */
double gs_dtype_max(gs_dtype t);
/* Unit roundoff: 2^-(mantissa bits + 1) (0 for integer types). */
double gs_dtype_eps(gs_dtype t);

/* Scalar conversions. Bits are returned in the low bits of the result. */
uint16_t gs_f32_to_bf16(float f);
float gs_bf16_to_f32(uint16_t h);
uint16_t gs_f32_to_fp16(float f);
float gs_fp16_to_f32(uint16_t h);
uint8_t gs_f32_to_e4m3(float f);
float gs_e4m3_to_f32(uint8_t b);
uint8_t gs_f32_to_e5m2(float f);
float gs_e5m2_to_f32(uint8_t b);
int8_t gs_f32_to_i8(float f);
int32_t gs_f32_to_i32(float f);

/* Generic: read element i of an encoded buffer as fp32; write fp32 into element i. */
float gs_dtype_load(gs_dtype t, const void *buf, size_t i);
void gs_dtype_store(gs_dtype t, void *buf, size_t i, float v);
/* Round an fp32 value through type t and back (what storing then loading gives). */
float gs_dtype_round(gs_dtype t, float v);

/* Bulk conversions (hot paths of the functional executor). `src_stride`/`dst_stride` are in
 * elements. */
void gs_dtype_to_f32(gs_dtype t, const void *src, ptrdiff_t src_stride, float *dst, size_t n);
void gs_dtype_from_f32(gs_dtype t, const float *src, void *dst, ptrdiff_t dst_stride, size_t n);

#ifdef __cplusplus
}
#endif
#endif
