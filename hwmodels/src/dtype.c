/*
 * dtype.c - element types and exact conversions (gs/dtype.h).
 *
 * Every narrowing conversion goes through integer arithmetic on the fp32 bit pattern, so the
 * result does not depend on the FPU's rounding mode or flush-to-zero settings:
 *  - bf16 is the top half of fp32: one add for round-to-nearest-even.
 *  - fp16, fp8 e4m3, fp8 e5m2 share gs_round_mag(), which rounds the magnitude to a format with
 *    `mbits` mantissa bits and exponent bias `bias`; subnormal results fall out of the same
 *    shift (the shift grows by the number of binades below the smallest normal).
 * Widening: bf16 by a shift, fp16 by exponent rebiasing (with an exact float subtraction for
 * subnormals), e5m2 as the top byte of an fp16, e4m3 from a 256-entry table built once.
 */
#include "gs/dtype.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

static const char *const dtype_names[] = {
#define GS_DTYPE_NAME(e, name, bytes, isf) name,
    GS_DTYPE_TABLE(GS_DTYPE_NAME)
#undef GS_DTYPE_NAME
};
static const size_t dtype_sizes[] = {
#define GS_DTYPE_SIZE(e, name, bytes, isf) bytes,
    GS_DTYPE_TABLE(GS_DTYPE_SIZE)
#undef GS_DTYPE_SIZE
};
static const int dtype_is_float[] = {
#define GS_DTYPE_ISF(e, name, bytes, isf) isf,
    GS_DTYPE_TABLE(GS_DTYPE_ISF)
#undef GS_DTYPE_ISF
};

static int dtype_valid(gs_dtype t)
{
    return (int)t >= 0 && t < GS_DTYPE_COUNT;
}

const char *gs_dtype_name(gs_dtype t)
{
    return dtype_valid(t) ? dtype_names[t] : "?";
}

/* Case-insensitive equality without relying on POSIX strcasecmp. */
static int name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

int gs_dtype_parse(const char *name, gs_dtype *out)
{
    static const struct {
        const char *name;
        gs_dtype t;
    } aliases[] = {
        {"fp32", GS_FP32},
        {"float32", GS_FP32},
        {"f32", GS_FP32},
        {"float", GS_FP32},
        {"bf16", GS_BF16},
        {"bfloat16", GS_BF16},
        {"fp16", GS_FP16},
        {"float16", GS_FP16},
        {"f16", GS_FP16},
        {"half", GS_FP16},
        {"fp8_e4m3", GS_FP8_E4M3},
        {"fp8e4m3", GS_FP8_E4M3},
        {"e4m3", GS_FP8_E4M3},
        {"float8_e4m3", GS_FP8_E4M3},
        {"float8_e4m3fn", GS_FP8_E4M3},
        {"fp8_e4m3fn", GS_FP8_E4M3},
        {"fp8_e5m2", GS_FP8_E5M2},
        {"fp8e5m2", GS_FP8_E5M2},
        {"e5m2", GS_FP8_E5M2},
        {"float8_e5m2", GS_FP8_E5M2},
        {"int8", GS_INT8},
        {"i8", GS_INT8},
        {"int32", GS_INT32},
        {"i32", GS_INT32},
        {"fp8_e4m3_x4", GS_FP8_E4M3_X4},
        {"float8_e4m3fn_x4", GS_FP8_E4M3_X4},
        {"fp8_e5m2_x4", GS_FP8_E5M2_X4},
        {"float8_e5m2_x4", GS_FP8_E5M2_X4},
        {"fp4_e2m1_x4", GS_FP4_E2M1_X4},
        {"float4_e2m1fn_x4", GS_FP4_E2M1_X4},
        {"e8m0", GS_E8M0},
        {"float8_e8m0fnu", GS_E8M0},
    };
    if (!name) return -1;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (name_eq(name, aliases[i].name)) {
            if (out) *out = aliases[i].t;
            return 0;
        }
    }
    return -1;
}

size_t gs_dtype_size(gs_dtype t)
{
    return dtype_valid(t) ? dtype_sizes[t] : 0;
}

int gs_dtype_is_float(gs_dtype t)
{
    return dtype_valid(t) ? dtype_is_float[t] : 0;
}

double gs_dtype_max(gs_dtype t)
{
    switch (t) {
    case GS_FP32:
        return FLT_MAX;
    case GS_BF16:
        return ldexp(255.0, 120); /* 0x7F7F: 1.1111111b x 2^127 */
    case GS_FP16:
        return 65504.0;
    case GS_FP8_E4M3:
        return 448.0;
    case GS_FP8_E5M2:
        return 57344.0;
    case GS_INT8:
        return 127.0;
    case GS_INT32:
        return 2147483647.0;
    case GS_FP8_E4M3_X4:
    case GS_FP8_E5M2_X4:
        return 4294967295.0; /* the bit pattern as an unsigned integer */
    case GS_FP4_E2M1_X4:
        return 65535.0;
    case GS_E8M0:
        return ldexp(1.0, 127);
    default:
        return 0.0;
    }
}

double gs_dtype_eps(gs_dtype t)
{
    switch (t) {
    case GS_FP32:
        return ldexp(1.0, -24);
    case GS_BF16:
        return ldexp(1.0, -8);
    case GS_FP16:
        return ldexp(1.0, -11);
    case GS_FP8_E4M3:
        return ldexp(1.0, -4);
    case GS_FP8_E5M2:
        return ldexp(1.0, -3);
    default:
        return 0.0;
    }
}

/* ---- bit helpers ---- */

static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/*
 * Round a finite fp32 magnitude `a` (bits without sign) to a binary format with `mbits`
 * explicit mantissa bits and exponent bias `bias`, round-to-nearest-even. Returns the encoded
 * magnitude (exponent field << mbits | mantissa); values beyond the format's range come back as
 * codes >= the all-ones exponent, and the caller decides between inf and saturation.
 */
static inline uint32_t gs_round_mag(uint32_t a, int mbits, int bias)
{
    int e = (int)(a >> 23);
    uint32_t sig;
    int E;
    if (e == 0) { /* fp32 subnormal: sig * 2^(-126-23) */
        sig = a & 0x7FFFFFu;
        E = -126;
    } else {
        sig = (a & 0x7FFFFFu) | 0x800000u;
        E = e - 127;
    }
    int te = E + bias; /* target exponent field if the result is normal */
    int shift = 23 - mbits + (te < 1 ? 1 - te : 0);
    if (shift >= 25) return 0; /* below half the smallest subnormal: sig < 2^24 <= half */
    uint32_t q = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    if (te < 1) return q; /* subnormal (q == 2^mbits becomes the smallest normal) */
    /* q in [2^mbits, 2^(mbits+1)]: adding carries a mantissa overflow into the exponent. */
    return ((uint32_t)(te - 1) << mbits) + q;
}

/* ---- bf16 ---- */

static inline uint16_t bf16_from_bits(uint32_t u)
{
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    /* Add 0x7FFF plus the lowest kept bit: ties go to even; a carry out of the mantissa
     * propagates into the exponent, and past the largest finite value gives inf. */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

uint16_t gs_f32_to_bf16(float f)
{
    return bf16_from_bits(f2u(f));
}

float gs_bf16_to_f32(uint16_t h)
{
    return u2f((uint32_t)h << 16);
}

/* ---- fp16 ---- */

static inline uint16_t fp16_from_bits(uint32_t u)
{
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* >= 65520: rounds to inf */
    /* Fast path for the normal range [2^-14, 65520): rebias and round with one add. */
    if (a >= 0x38800000u) {
        uint32_t r = a + 0xFFFu + ((a >> 13) & 1u) - ((uint32_t)(127 - 15) << 23);
        return (uint16_t)(sign | (r >> 13));
    }
    return (uint16_t)(sign | gs_round_mag(a, 10, 15));
}

uint16_t gs_f32_to_fp16(float f)
{
    return fp16_from_bits(f2u(f));
}

float gs_fp16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t o = (uint32_t)(h & 0x7FFFu) << 13;
    uint32_t exp = o & 0x0F800000u;
    o += (uint32_t)(127 - 15) << 23;
    if (exp == 0x0F800000u) {
        o += (uint32_t)(128 - 16) << 23; /* inf / NaN: exponent all ones, payload kept */
    } else if (exp == 0) {
        /* Subnormal: build 1.m x 2^-14 and subtract the implicit 2^-14; exact in fp32. */
        o += 1u << 23;
        return u2f(sign | f2u(u2f(o) - u2f(113u << 23)));
    }
    return u2f(sign | o);
}

/* ---- fp8 ---- */

static inline uint8_t e4m3_from_bits(uint32_t u)
{
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint8_t)(sign | 0x7Fu);
    /* >= 464 rounds past 448 (0x7F would be 480, but it is NaN), as does inf: saturate. */
    if (a >= 0x43E80000u) return (uint8_t)(sign | 0x7Eu);
    if (a >= 0x3C800000u) { /* normal range [2^-6, 464): rebias and round with one add */
        uint32_t r = a + 0x7FFFFu + ((a >> 20) & 1u) - ((uint32_t)(127 - 7) << 23);
        return (uint8_t)(sign | (r >> 20));
    }
    return (uint8_t)(sign | gs_round_mag(a, 3, 7));
}

static inline uint8_t e5m2_from_bits(uint32_t u)
{
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint8_t)(sign | 0x7Eu);
    if (a >= 0x47700000u) return (uint8_t)(sign | 0x7Cu); /* >= 61440 rounds to inf */
    if (a >= 0x38800000u) {                               /* normal range [2^-14, 61440) */
        uint32_t r = a + 0xFFFFFu + ((a >> 21) & 1u) - ((uint32_t)(127 - 15) << 23);
        return (uint8_t)(sign | (r >> 21));
    }
    return (uint8_t)(sign | gs_round_mag(a, 2, 15));
}

uint8_t gs_f32_to_e4m3(float f)
{
    return e4m3_from_bits(f2u(f));
}

uint8_t gs_f32_to_e5m2(float f)
{
    return e5m2_from_bits(f2u(f));
}

/* e4m3 has no fp32-compatible sub-layout, so it decodes through a table built on first use;
 * pthread_once makes the build safe when several engine threads convert at once. */
static float e4m3_table[256];
static pthread_once_t e4m3_once = PTHREAD_ONCE_INIT;

static void e4m3_table_build(void)
{
    for (int b = 0; b < 256; b++) {
        int e = (b >> 3) & 0xF, m = b & 7;
        float v;
        if (e == 0xF && m == 7)
            v = NAN;
        else if (e == 0)
            v = ldexpf((float)m, -9); /* subnormal: m/8 x 2^(1-7) */
        else
            v = ldexpf((float)(8 + m), e - 7 - 3);
        e4m3_table[b] = (b & 0x80) ? -v : v;
    }
}

static inline const float *e4m3_decode_table(void)
{
    pthread_once(&e4m3_once, e4m3_table_build);
    return e4m3_table;
}

float gs_e4m3_to_f32(uint8_t b)
{
    return e4m3_decode_table()[b];
}

float gs_e5m2_to_f32(uint8_t b)
{
    /* e5m2 is exactly the top byte of an fp16 (same exponent width and bias). */
    return gs_fp16_to_f32((uint16_t)((uint16_t)b << 8));
}

/* ---- integers ---- */

/* Round-half-even of a float with |f| < 2^23 to an integer, on the bit pattern (independent of
 * the FPU rounding mode, and cheaper than truncf + fmodf). */
static inline int32_t round_half_even(float f)
{
    uint32_t u = f2u(f);
    uint32_t a = u & 0x7FFFFFFFu;
    int e = (int)(a >> 23);
    int shift = 150 - e;      /* value = sig * 2^-shift; >= 1 because |f| < 2^23 */
    if (shift > 24) return 0; /* |f| < 0.5 */
    uint32_t sig = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t q = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (u >> 31) ? -(int32_t)q : (int32_t)q;
}

int8_t gs_f32_to_i8(float f)
{
    if (f != f) return 0;
    if (f >= 127.0f) return 127;
    if (f <= -128.0f) return -128;
    return (int8_t)round_half_even(f);
}

int32_t gs_f32_to_i32(float f)
{
    if (f != f) return 0;
    if (f >= 2147483648.0f) return INT32_MAX;
    if (f <= -2147483648.0f) return INT32_MIN;
    if (fabsf(f) >= 8388608.0f) return (int32_t)f; /* already an integer */
    return round_half_even(f);
}

/* ---- generic element access ---- */

float gs_dtype_load(gs_dtype t, const void *buf, size_t i)
{
    switch (t) {
    case GS_FP32: {
        float v;
        memcpy(&v, (const char *)buf + i * 4, 4);
        return v;
    }
    case GS_BF16: {
        uint16_t h;
        memcpy(&h, (const char *)buf + i * 2, 2);
        return gs_bf16_to_f32(h);
    }
    case GS_FP16: {
        uint16_t h;
        memcpy(&h, (const char *)buf + i * 2, 2);
        return gs_fp16_to_f32(h);
    }
    case GS_FP8_E4M3:
        return gs_e4m3_to_f32(((const uint8_t *)buf)[i]);
    case GS_FP8_E5M2:
        return gs_e5m2_to_f32(((const uint8_t *)buf)[i]);
    case GS_INT8:
        return (float)((const int8_t *)buf)[i];
    case GS_INT32: {
        int32_t v;
        memcpy(&v, (const char *)buf + i * 4, 4);
        return (float)v;
    }
    case GS_FP8_E4M3_X4:
    case GS_FP8_E5M2_X4: {
        uint32_t v;
        memcpy(&v, (const char *)buf + i * 4, 4);
        return (float)v;
    }
    case GS_FP4_E2M1_X4: {
        uint16_t v;
        memcpy(&v, (const char *)buf + i * 2, 2);
        return (float)v;
    }
    case GS_E8M0:
        return gs_e8m0_to_f32(((const uint8_t *)buf)[i]);
    default:
        return 0.0f;
    }
}

/* A packed element's bit pattern from a float: nearest integer, clamped to [0, max]. */
static double bits_of(float v, double max)
{
    if (!(v > 0.0f)) return 0.0;
    double r = nearbyint((double)v);
    return r > max ? max : r;
}

void gs_dtype_store(gs_dtype t, void *buf, size_t i, float v)
{
    switch (t) {
    case GS_FP32:
        memcpy((char *)buf + i * 4, &v, 4);
        break;
    case GS_BF16: {
        uint16_t h = gs_f32_to_bf16(v);
        memcpy((char *)buf + i * 2, &h, 2);
        break;
    }
    case GS_FP16: {
        uint16_t h = gs_f32_to_fp16(v);
        memcpy((char *)buf + i * 2, &h, 2);
        break;
    }
    case GS_FP8_E4M3:
        ((uint8_t *)buf)[i] = gs_f32_to_e4m3(v);
        break;
    case GS_FP8_E5M2:
        ((uint8_t *)buf)[i] = gs_f32_to_e5m2(v);
        break;
    case GS_INT8:
        ((int8_t *)buf)[i] = gs_f32_to_i8(v);
        break;
    case GS_INT32: {
        int32_t x = gs_f32_to_i32(v);
        memcpy((char *)buf + i * 4, &x, 4);
        break;
    }
    case GS_FP8_E4M3_X4:
    case GS_FP8_E5M2_X4: {
        uint32_t x = (uint32_t)bits_of(v, 4294967295.0);
        memcpy((char *)buf + i * 4, &x, 4);
        break;
    }
    case GS_FP4_E2M1_X4: {
        uint16_t x = (uint16_t)bits_of(v, 65535.0);
        memcpy((char *)buf + i * 2, &x, 2);
        break;
    }
    case GS_E8M0:
        ((uint8_t *)buf)[i] = gs_f32_to_e8m0(v);
        break;
    default:
        break;
    }
}

float gs_dtype_round(gs_dtype t, float v)
{
    switch (t) {
    case GS_FP32:
        return v;
    case GS_BF16:
        return gs_bf16_to_f32(gs_f32_to_bf16(v));
    case GS_FP16:
        return gs_fp16_to_f32(gs_f32_to_fp16(v));
    case GS_FP8_E4M3:
        return gs_e4m3_to_f32(gs_f32_to_e4m3(v));
    case GS_FP8_E5M2:
        return gs_e5m2_to_f32(gs_f32_to_e5m2(v));
    case GS_INT8:
        return (float)gs_f32_to_i8(v);
    case GS_INT32:
        return (float)gs_f32_to_i32(v);
    case GS_FP8_E4M3_X4:
    case GS_FP8_E5M2_X4:
        return (float)bits_of(v, 4294967295.0);
    case GS_FP4_E2M1_X4:
        return (float)bits_of(v, 65535.0);
    case GS_E8M0:
        return gs_e8m0_to_f32(gs_f32_to_e8m0(v));
    default:
        return 0.0f;
    }
}

/* ---- bulk conversions: one switch per call, a tight loop per type ---- */

void gs_dtype_to_f32(gs_dtype t, const void *src, ptrdiff_t src_stride, float *dst, size_t n)
{
    const char *s = (const char *)src;
    ptrdiff_t step = src_stride * (ptrdiff_t)gs_dtype_size(t); /* bytes */
    switch (t) {
    case GS_FP32:
        if (src_stride == 1) {
            memcpy(dst, src, n * sizeof(float));
        } else {
            for (size_t i = 0; i < n; i++, s += step)
                memcpy(&dst[i], s, 4);
        }
        break;
    case GS_BF16:
        for (size_t i = 0; i < n; i++, s += step) {
            uint16_t h;
            memcpy(&h, s, 2);
            dst[i] = u2f((uint32_t)h << 16);
        }
        break;
    case GS_FP16:
        for (size_t i = 0; i < n; i++, s += step) {
            uint16_t h;
            memcpy(&h, s, 2);
            dst[i] = gs_fp16_to_f32(h);
        }
        break;
    case GS_FP8_E4M3: {
        const float *tab = e4m3_decode_table();
        for (size_t i = 0; i < n; i++, s += step)
            dst[i] = tab[*(const uint8_t *)s];
        break;
    }
    case GS_FP8_E5M2:
        for (size_t i = 0; i < n; i++, s += step)
            dst[i] = gs_fp16_to_f32((uint16_t)((uint16_t) * (const uint8_t *)s << 8));
        break;
    case GS_INT8:
        for (size_t i = 0; i < n; i++, s += step)
            dst[i] = (float)*(const int8_t *)s;
        break;
    case GS_INT32:
        for (size_t i = 0; i < n; i++, s += step) {
            int32_t v;
            memcpy(&v, s, 4);
            dst[i] = (float)v;
        }
        break;
    default: /* the MX types: element by element */
        for (size_t i = 0; i < n; i++, s += step)
            dst[i] = gs_dtype_load(t, s, 0);
        break;
    }
}

void gs_dtype_from_f32(gs_dtype t, const float *src, void *dst, ptrdiff_t dst_stride, size_t n)
{
    char *d = (char *)dst;
    ptrdiff_t step = dst_stride * (ptrdiff_t)gs_dtype_size(t); /* bytes */
    switch (t) {
    case GS_FP32:
        if (dst_stride == 1) {
            memcpy(dst, src, n * sizeof(float));
        } else {
            for (size_t i = 0; i < n; i++, d += step)
                memcpy(d, &src[i], 4);
        }
        break;
    case GS_BF16:
        for (size_t i = 0; i < n; i++, d += step) {
            uint16_t h = bf16_from_bits(f2u(src[i]));
            memcpy(d, &h, 2);
        }
        break;
    case GS_FP16:
        for (size_t i = 0; i < n; i++, d += step) {
            uint16_t h = fp16_from_bits(f2u(src[i]));
            memcpy(d, &h, 2);
        }
        break;
    case GS_FP8_E4M3:
        for (size_t i = 0; i < n; i++, d += step)
            *(uint8_t *)d = e4m3_from_bits(f2u(src[i]));
        break;
    case GS_FP8_E5M2:
        for (size_t i = 0; i < n; i++, d += step)
            *(uint8_t *)d = e5m2_from_bits(f2u(src[i]));
        break;
    case GS_INT8:
        for (size_t i = 0; i < n; i++, d += step)
            *(int8_t *)d = gs_f32_to_i8(src[i]);
        break;
    case GS_INT32:
        for (size_t i = 0; i < n; i++, d += step) {
            int32_t v = gs_f32_to_i32(src[i]);
            memcpy(d, &v, 4);
        }
        break;
    default: /* the MX types: element by element */
        for (size_t i = 0; i < n; i++, d += step)
            gs_dtype_store(t, d, 0, src[i]);
        break;
    }
}

/* ---- microscaling (OCP MX v1.0) ---- */

/* fp4 e2m1 magnitudes by code 0..7 */
static const float e2m1_mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

float gs_e2m1_to_f32(uint8_t code)
{
    float m = e2m1_mag[code & 7u];
    return (code & 8u) ? -m : m;
}

uint8_t gs_f32_to_e2m1(float f)
{
    if (isnan(f)) return 0;
    uint8_t sign = signbit(f) ? 8u : 0u;
    float a = fabsf(f);
    if (a >= 6.0f) return sign | 7u;
    /* the two neighbours; a tie goes to the even code (mantissa bit 0) */
    uint8_t k = 0;
    while (k < 7 && e2m1_mag[k + 1] <= a)
        k++;
    if (e2m1_mag[k] == a || k == 7) return sign | k;
    float lo = a - e2m1_mag[k], hi = e2m1_mag[k + 1] - a;
    uint8_t c = lo < hi ? k : hi < lo ? (uint8_t)(k + 1) : ((k & 1u) ? (uint8_t)(k + 1) : k);
    return sign | c;
}

float gs_e8m0_to_f32(uint8_t b)
{
    if (b == 0xFFu) return NAN;
    return ldexpf(1.0f, (int)b - 127);
}

uint8_t gs_f32_to_e8m0(float f)
{
    if (!(f > 0.0f) || isinf(f)) return 0xFFu;
    int e;
    frexpf(f, &e); /* f = m * 2^e, m in [0.5, 1): floor(log2 f) = e - 1 */
    int x = e - 1;
    if (x < -127) x = -127;
    if (x > 127) x = 127;
    return (uint8_t)(x + 127);
}

gs_dtype gs_dtype_mx_element(gs_dtype t)
{
    switch (t) {
    case GS_FP8_E4M3_X4:
        return GS_FP8_E4M3;
    case GS_FP8_E5M2_X4:
        return GS_FP8_E5M2;
    case GS_FP4_E2M1_X4:
        return GS_FP4_E2M1_X4;
    default:
        return GS_DTYPE_COUNT;
    }
}

int gs_dtype_is_mx(gs_dtype t)
{
    return gs_dtype_mx_element(t) != GS_DTYPE_COUNT;
}

double gs_mx_elem_max(gs_dtype t)
{
    switch (t) {
    case GS_FP8_E4M3_X4:
        return 448.0;
    case GS_FP8_E5M2_X4:
        return 57344.0;
    case GS_FP4_E2M1_X4:
        return 6.0;
    default:
        return 0.0;
    }
}

int gs_mx_elem_emax(gs_dtype t)
{
    switch (t) {
    case GS_FP8_E4M3_X4:
        return 8;
    case GS_FP8_E5M2_X4:
        return 15;
    case GS_FP4_E2M1_X4:
        return 2;
    default:
        return 0;
    }
}

uint8_t gs_mx_lane_code(gs_dtype t, const void *buf, size_t i, int j)
{
    const uint8_t *b = buf;
    if (t == GS_FP4_E2M1_X4) {
        uint8_t byte = b[i * 2 + (size_t)(j >> 1)];
        return (j & 1) ? (uint8_t)(byte >> 4) : (uint8_t)(byte & 0x0Fu);
    }
    return b[i * 4 + (size_t)j];
}

void gs_mx_set_lane(gs_dtype t, void *buf, size_t i, int j, uint8_t code)
{
    uint8_t *b = buf;
    if (t == GS_FP4_E2M1_X4) {
        uint8_t *p = &b[i * 2 + (size_t)(j >> 1)];
        *p = (j & 1) ? (uint8_t)((*p & 0x0Fu) | (uint8_t)(code << 4))
                     : (uint8_t)((*p & 0xF0u) | (code & 0x0Fu));
        return;
    }
    b[i * 4 + (size_t)j] = code;
}

float gs_mx_code_to_f32(gs_dtype t, uint8_t code)
{
    switch (t) {
    case GS_FP8_E4M3_X4:
        return gs_e4m3_to_f32(code);
    case GS_FP8_E5M2_X4:
        return gs_e5m2_to_f32(code);
    case GS_FP4_E2M1_X4:
        return gs_e2m1_to_f32(code);
    default:
        return 0.0f;
    }
}

uint8_t gs_mx_f32_to_code(gs_dtype t, float v)
{
    /* saturate first: MX element conversion clamps to the largest finite value */
    float mx = (float)gs_mx_elem_max(t);
    if (v > mx) v = mx;
    if (v < -mx) v = -mx;
    switch (t) {
    case GS_FP8_E4M3_X4:
        return gs_f32_to_e4m3(v);
    case GS_FP8_E5M2_X4:
        return gs_f32_to_e5m2(v);
    case GS_FP4_E2M1_X4:
        return gs_f32_to_e2m1(v);
    default:
        return 0;
    }
}

float gs_mx_lane(gs_dtype t, const void *buf, size_t i, int j)
{
    return gs_mx_code_to_f32(t, gs_mx_lane_code(t, buf, i, j));
}

uint8_t gs_mx_quantize_group(gs_dtype t, const float *x, size_t n, uint8_t *codes)
{
    float amax = 0.0f;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            bad = 1;
        else if (fabsf(x[i]) > amax)
            amax = fabsf(x[i]);
    }
    if (bad) {
        for (size_t i = 0; i < n; i++)
            codes[i] = 0;
        return 0xFFu;
    }
    int e = -127;
    if (amax > 0.0f) {
        int fe;
        frexpf(amax, &fe);
        e = (fe - 1) - gs_mx_elem_emax(t);
        if (e < -127) e = -127;
        if (e > 127) e = 127;
    }
    for (size_t i = 0; i < n; i++)
        /* x / 2^e: exact in double for every finite fp32 x and e in [-127, 127] */
        codes[i] = gs_mx_f32_to_code(t, (float)ldexp((double)x[i], -e));
    return (uint8_t)(e + 127);
}
