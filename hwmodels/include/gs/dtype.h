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
 *
 * Microscaling (OCP MX v1.0) types, for the MX matmul of generations that have it:
 *  - fp8_e4m3_x4, fp8_e5m2_x4, fp4_e2m1_x4: quad-packed elements (4 bytes, 4 bytes, 2 bytes),
 *    each holding four values ("lanes" j = 0..3: byte j, or bits 4j..4j+3 for fp4). Their
 *    values are reached with gs_mx_lane / gs_mx_set_lane; the scalar load/store of this header
 *    treat such an element as its bit pattern read as an unsigned integer (exact for the 16-bit
 *    fp4 x4; fp8 x4 patterns above 2^24 are not exact, so fp8 x4 tensors are made on chip by
 *    quantize_mx, never loaded as kernel inputs).
 *  - fp4 e2m1 (OCP): sign, 2 exponent bits (bias 1), 1 mantissa bit; values 0, 0.5, 1, 1.5, 2,
 *    3, 4, 6; no infinities or NaN. Conversion: round to nearest even, saturating to +-6; NaN
 *    -> +0 (a block holding a NaN gets a NaN scale, which is what carries it).
 *  - e8m0: an unsigned power-of-two scale 2^(b - 127), b = 0..254; b = 255 is NaN. Conversion
 *    from fp32 keeps the largest power of two not above |v| (clamped to 2^-127 .. 2^127);
 *    v <= 0, infinities and NaN -> NaN (no zero, sign or infinity in the format).
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
    X(GS_INT32, "int32", 4, 0)                                                                     \
    X(GS_FP8_E4M3_X4, "fp8_e4m3_x4", 4, 0)                                                         \
    X(GS_FP8_E5M2_X4, "fp8_e5m2_x4", 4, 0)                                                         \
    X(GS_FP4_E2M1_X4, "fp4_e2m1_x4", 2, 0)                                                         \
    X(GS_E8M0, "e8m0", 1, 1)

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

uint8_t gs_f32_to_e2m1(float f); /* a 4-bit code in the low bits */
float gs_e2m1_to_f32(uint8_t code);
uint8_t gs_f32_to_e8m0(float f);
float gs_e8m0_to_f32(uint8_t b);

/* ---- microscaling ---- */
#define GS_MX_LANES 4 /* values per quad-packed element */
/* The value type inside a quad-packed type (fp8_e4m3 for fp8_e4m3_x4; GS_FP4_E2M1_X4 itself
 * for fp4, which has no scalar dtype); GS_DTYPE_COUNT for a type that is not quad-packed. */
gs_dtype gs_dtype_mx_element(gs_dtype t);
int gs_dtype_is_mx(gs_dtype t); /* quad-packed */
/* Largest finite value and the exponent of the largest normal (emax) of an MX element type:
 * e4m3 448 / 8, e5m2 57344 / 15, e2m1 6 / 2. */
double gs_mx_elem_max(gs_dtype t);
int gs_mx_elem_emax(gs_dtype t);
/* Lane j of quad-packed element i of buf: its code, and its value. */
uint8_t gs_mx_lane_code(gs_dtype t, const void *buf, size_t i, int j);
float gs_mx_lane(gs_dtype t, const void *buf, size_t i, int j);
void gs_mx_set_lane(gs_dtype t, void *buf, size_t i, int j, uint8_t code);
/* Value of one element code of quad-packed type t; code of a value (RNE, saturating to
 * +-gs_mx_elem_max: the MX element conversion). */
float gs_mx_code_to_f32(gs_dtype t, uint8_t code);
uint8_t gs_mx_f32_to_code(gs_dtype t, float v);
/*
 * OCP MX quantisation of one scaling group of n values into element type t (quad-packed):
 * shared exponent e = floor(log2(max |x|)) - emax(t), clamped to [-127, 127]; scale 2^e; each
 * element = x / 2^e rounded to nearest even and saturated to the element's largest finite value.
 * All-zero group: scale 2^-127 and zero elements. A NaN or infinity anywhere: NaN scale (255).
 * Writes n codes and returns the e8m0 scale byte.
 */
uint8_t gs_mx_quantize_group(gs_dtype t, const float *x, size_t n, uint8_t *codes);

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
