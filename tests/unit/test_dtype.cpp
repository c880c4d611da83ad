// test_dtype.cpp - dtype conversions: exhaustive round trips, known vectors, random values
// against an independent long-double reference, and bulk-vs-scalar agreement.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gs/dtype.h"

namespace
{

uint32_t bits_of(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float float_of(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Same value and, for zeros, same sign; NaN equals NaN.
bool same_value(float a, float b)
{
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

// ---- an independent reference: formats described by numbers, arithmetic in long double ----

struct Fmt {
    gs_dtype t;
    int ebits, mbits, bias;
    bool ieee;     // has inf (all-ones exponent reserved); else e4m3fn-style
    double maxval; // largest finite
};

const Fmt kBF16{GS_BF16, 8, 7, 127, true, 0};
const Fmt kFP16{GS_FP16, 5, 10, 15, true, 65504.0};
const Fmt kE4M3{GS_FP8_E4M3, 4, 3, 7, false, 448.0};
const Fmt kE5M2{GS_FP8_E5M2, 5, 2, 15, true, 57344.0};

double fmt_max(const Fmt &f)
{
    return f.t == GS_BF16 ? std::ldexp(255.0, 120) : f.maxval;
}

// Decode bits by the textbook formula.
long double ref_decode(const Fmt &f, uint32_t b)
{
    uint32_t mmask = (1u << f.mbits) - 1;
    uint32_t emask = (1u << f.ebits) - 1;
    bool neg = (b >> (f.ebits + f.mbits)) & 1;
    uint32_t e = (b >> f.mbits) & emask, m = b & mmask;
    long double v;
    if (f.ieee && e == emask) {
        v = m ? std::numeric_limits<long double>::quiet_NaN()
              : std::numeric_limits<long double>::infinity();
    } else if (!f.ieee && e == emask && m == mmask) {
        v = std::numeric_limits<long double>::quiet_NaN();
    } else if (e == 0) {
        v = std::ldexp((long double)m, 1 - f.bias - f.mbits);
    } else {
        v = std::ldexp((long double)(m | (1u << f.mbits)), (int)e - f.bias - f.mbits);
    }
    return neg ? -v : v;
}

// Round x to the format, round-to-nearest-even, with the format's overflow rule.
long double ref_round(const Fmt &f, long double x)
{
    if (std::isnan(x)) return x;
    bool neg = std::signbit(x);
    long double a = std::fabs(x);
    long double maxv = fmt_max(f);
    long double r;
    if (std::isinf(a)) {
        r = f.ieee ? a : maxv;
    } else if (a == 0) {
        r = 0;
    } else {
        int k;
        std::frexp(a, &k); // a = m * 2^k, m in [0.5, 1)
        int E = std::max(k - 1, 1 - f.bias);
        long double q = std::ldexp(1.0L, E - f.mbits);
        long double n = a / q; // exact (power-of-two scaling)
        long double fl = std::floor(n);
        long double d = n - fl;
        if (d > 0.5L || (d == 0.5L && std::fmod(fl, 2.0L) != 0)) fl += 1;
        r = fl * q;
        if (r > maxv) r = f.ieee ? std::numeric_limits<long double>::infinity() : maxv;
    }
    return neg ? -r : r;
}

uint32_t encode(const Fmt &f, float x)
{
    switch (f.t) {
    case GS_BF16:
        return gs_f32_to_bf16(x);
    case GS_FP16:
        return gs_f32_to_fp16(x);
    case GS_FP8_E4M3:
        return gs_f32_to_e4m3(x);
    default:
        return gs_f32_to_e5m2(x);
    }
}

float decode(const Fmt &f, uint32_t b)
{
    switch (f.t) {
    case GS_BF16:
        return gs_bf16_to_f32((uint16_t)b);
    case GS_FP16:
        return gs_fp16_to_f32((uint16_t)b);
    case GS_FP8_E4M3:
        return gs_e4m3_to_f32((uint8_t)b);
    default:
        return gs_e5m2_to_f32((uint8_t)b);
    }
}

bool is_nan_code(const Fmt &f, uint32_t b)
{
    return std::isnan((double)ref_decode(f, b));
}

void exhaustive_round_trip(const Fmt &f)
{
    uint32_t n = 1u << (1 + f.ebits + f.mbits);
    int failures = 0;
    for (uint32_t b = 0; b < n && failures < 10; b++) {
        float v = decode(f, b);
        long double ref = ref_decode(f, b);
        bool ok = std::isnan(ref) ? std::isnan(v)
                                  : ((long double)v == ref && std::signbit(v) == std::signbit(ref));
        if (!ok) {
            ADD_FAILURE() << gs_dtype_name(f.t) << " decode of 0x" << std::hex << b << " gave " << v
                          << " want " << (double)ref;
            failures++;
        }
        uint32_t back = encode(f, v);
        if (std::isnan(v)) {
            if (!is_nan_code(f, back)) {
                ADD_FAILURE() << gs_dtype_name(f.t) << " NaN 0x" << std::hex << b
                              << " re-encoded as non-NaN 0x" << back;
                failures++;
            }
        } else if (back != b) {
            ADD_FAILURE() << gs_dtype_name(f.t) << " round trip 0x" << std::hex << b << " -> 0x"
                          << back;
            failures++;
        }
        // Rounding through the type is idempotent.
        if (!same_value(gs_dtype_round(f.t, v), v)) {
            ADD_FAILURE() << gs_dtype_name(f.t) << " gs_dtype_round moved 0x" << std::hex << b;
            failures++;
        }
    }
}

void check_random_against_reference(const Fmt &f, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<uint32_t> any_bits;
    std::uniform_int_distribution<int> exp_in_range(-f.bias - f.mbits - 3, f.bias + 3);
    std::uniform_real_distribution<float> mant(1.0f, 2.0f);
    int failures = 0;
    for (int i = 0; i < 200000 && failures < 10; i++) {
        float x;
        if (i % 2 == 0) {
            x = float_of(any_bits(rng));
        } else {
            // Near the format's range, with ties made likely by clearing low bits sometimes.
            x = std::ldexp(mant(rng), exp_in_range(rng));
            if (i % 6 == 1) x = float_of(bits_of(x) & ~((1u << (22 - f.mbits)) - 1));
            if (i % 4 == 3) x = -x;
        }
        long double want = ref_round(f, (long double)x);
        float got = decode(f, encode(f, x));
        bool ok = std::isnan(want)
                      ? std::isnan(got)
                      : ((long double)got == want && std::signbit(got) == std::signbit(want));
        if (!ok) {
            ADD_FAILURE() << gs_dtype_name(f.t) << " x=" << std::hexfloat << x << " got " << got
                          << " want " << (double)want;
            failures++;
        }
    }
}

} // namespace

TEST(Dtype, NamesSizesAndParse)
{
    EXPECT_STREQ(gs_dtype_name(GS_BF16), "bf16");
    EXPECT_STREQ(gs_dtype_name(GS_FP8_E4M3), "fp8_e4m3");
    EXPECT_STREQ(gs_dtype_name((gs_dtype)99), "?");
    EXPECT_EQ(gs_dtype_size(GS_FP32), 4u);
    EXPECT_EQ(gs_dtype_size(GS_BF16), 2u);
    EXPECT_EQ(gs_dtype_size(GS_FP8_E5M2), 1u);
    EXPECT_EQ(gs_dtype_size(GS_INT32), 4u);
    EXPECT_EQ(gs_dtype_size((gs_dtype)99), 0u);
    EXPECT_TRUE(gs_dtype_is_float(GS_FP16));
    EXPECT_FALSE(gs_dtype_is_float(GS_INT8));
    for (int t = 0; t < GS_DTYPE_COUNT; t++) {
        gs_dtype out = GS_DTYPE_COUNT;
        ASSERT_EQ(gs_dtype_parse(gs_dtype_name((gs_dtype)t), &out), 0);
        EXPECT_EQ(out, (gs_dtype)t);
    }
    gs_dtype out;
    EXPECT_EQ(gs_dtype_parse("bfloat16", &out), 0);
    EXPECT_EQ(out, GS_BF16);
    EXPECT_EQ(gs_dtype_parse("Float32", &out), 0);
    EXPECT_EQ(out, GS_FP32);
    EXPECT_EQ(gs_dtype_parse("float8_e4m3fn", &out), 0);
    EXPECT_EQ(out, GS_FP8_E4M3);
    EXPECT_EQ(gs_dtype_parse("fp8e5m2", &out), 0);
    EXPECT_EQ(out, GS_FP8_E5M2);
    EXPECT_NE(gs_dtype_parse("fp64", &out), 0);
    EXPECT_NE(gs_dtype_parse("", &out), 0);
    EXPECT_NE(gs_dtype_parse(nullptr, &out), 0);
}

TEST(Dtype, MaxAndEps)
{
    EXPECT_EQ(gs_dtype_max(GS_FP32), (double)FLT_MAX);
    EXPECT_EQ(gs_dtype_max(GS_BF16), (double)gs_bf16_to_f32(0x7F7F));
    EXPECT_EQ(gs_dtype_max(GS_FP16), 65504.0);
    EXPECT_EQ(gs_dtype_max(GS_FP8_E4M3), 448.0);
    EXPECT_EQ(gs_dtype_max(GS_FP8_E5M2), 57344.0);
    EXPECT_EQ(gs_dtype_max(GS_INT8), 127.0);
    EXPECT_EQ(gs_dtype_max(GS_INT32), 2147483647.0);
    EXPECT_EQ(gs_dtype_eps(GS_FP32), std::ldexp(1.0, -24));
    EXPECT_EQ(gs_dtype_eps(GS_BF16), std::ldexp(1.0, -8));
    EXPECT_EQ(gs_dtype_eps(GS_FP16), std::ldexp(1.0, -11));
    EXPECT_EQ(gs_dtype_eps(GS_FP8_E4M3), std::ldexp(1.0, -4));
    EXPECT_EQ(gs_dtype_eps(GS_FP8_E5M2), std::ldexp(1.0, -3));
    EXPECT_EQ(gs_dtype_eps(GS_INT8), 0.0);
    // The max of each float type survives a round trip through it.
    for (gs_dtype t : {GS_FP32, GS_BF16, GS_FP16, GS_FP8_E4M3, GS_FP8_E5M2})
        EXPECT_EQ((double)gs_dtype_round(t, (float)gs_dtype_max(t)), gs_dtype_max(t))
            << gs_dtype_name(t);
}

TEST(Dtype, ExhaustiveBf16)
{
    exhaustive_round_trip(kBF16);
}
TEST(Dtype, ExhaustiveFp16)
{
    exhaustive_round_trip(kFP16);
}
TEST(Dtype, ExhaustiveE4m3)
{
    exhaustive_round_trip(kE4M3);
}
TEST(Dtype, ExhaustiveE5m2)
{
    exhaustive_round_trip(kE5M2);
}

TEST(Dtype, RandomAgainstReferenceBf16)
{
    check_random_against_reference(kBF16, 1);
}
TEST(Dtype, RandomAgainstReferenceFp16)
{
    check_random_against_reference(kFP16, 2);
}
TEST(Dtype, RandomAgainstReferenceE4m3)
{
    check_random_against_reference(kE4M3, 3);
}
TEST(Dtype, RandomAgainstReferenceE5m2)
{
    check_random_against_reference(kE5M2, 4);
}

TEST(Dtype, KnownVectorsBf16)
{
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(gs_f32_to_bf16(1.0f), 0x3F80);
    EXPECT_EQ(gs_f32_to_bf16(-2.0f), 0xC000);
    EXPECT_EQ(gs_f32_to_bf16(-0.0f), 0x8000);
    EXPECT_EQ(gs_f32_to_bf16(0.0f), 0x0000);
    EXPECT_EQ(gs_f32_to_bf16(inf), 0x7F80);
    EXPECT_EQ(gs_f32_to_bf16(-inf), 0xFF80);
    EXPECT_EQ(gs_f32_to_bf16((float)gs_dtype_max(GS_BF16)), 0x7F7F);
    EXPECT_EQ(gs_f32_to_bf16(FLT_MAX), 0x7F80);                // rounds past the max: inf
    EXPECT_EQ(gs_f32_to_bf16(std::ldexp(1.0f, -133)), 0x0001); // min subnormal
    EXPECT_EQ(gs_bf16_to_f32(0x0001), std::ldexp(1.0f, -133));
    EXPECT_EQ(gs_f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);     // tie -> even (down)
    EXPECT_EQ(gs_f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82); // tie -> even (up)
    EXPECT_EQ(gs_f32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
    uint16_t n = gs_f32_to_bf16(std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(std::isnan(gs_bf16_to_f32(n)));
    // A signalling NaN whose payload lives only in the low bits must not become inf.
    uint16_t s = gs_f32_to_bf16(float_of(0x7F800001u));
    EXPECT_TRUE(std::isnan(gs_bf16_to_f32(s)));
    EXPECT_EQ(gs_bf16_to_f32(0x7F80), inf);
}

TEST(Dtype, KnownVectorsFp16)
{
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(gs_f32_to_fp16(1.0f), 0x3C00);
    EXPECT_EQ(gs_f32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ(gs_f32_to_fp16(65504.0f), 0x7BFF);
    EXPECT_EQ(gs_f32_to_fp16(65519.0f), 0x7BFF);
    EXPECT_EQ(gs_f32_to_fp16(65520.0f), 0x7C00); // halfway to 2^16, ties to even = inf
    EXPECT_EQ(gs_f32_to_fp16(1e6f), 0x7C00);
    EXPECT_EQ(gs_f32_to_fp16(-1e6f), 0xFC00);
    EXPECT_EQ(gs_f32_to_fp16(inf), 0x7C00);
    EXPECT_EQ(gs_f32_to_fp16(std::ldexp(1.0f, -24)), 0x0001); // min subnormal
    EXPECT_EQ(gs_f32_to_fp16(std::ldexp(1.0f, -25)), 0x0000); // tie -> even (0)
    EXPECT_EQ(gs_f32_to_fp16(std::ldexp(1.0f, -25) * 1.0000001f), 0x0001);
    EXPECT_EQ(gs_f32_to_fp16(3 * std::ldexp(1.0f, -25)), 0x0002); // tie -> even (2)
    EXPECT_EQ(gs_f32_to_fp16(-std::ldexp(1.0f, -30)), 0x8000);
    EXPECT_EQ(gs_f32_to_fp16(std::ldexp(1.0f, -14)), 0x0400);    // min normal
    EXPECT_EQ(gs_f32_to_fp16(std::ldexp(1023.5f, -24)), 0x0400); // largest subnormal rounds up
    EXPECT_EQ(gs_f32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
    EXPECT_EQ(gs_f32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
    EXPECT_EQ(gs_fp16_to_f32(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(gs_fp16_to_f32(0x8001), -std::ldexp(1.0f, -24));
    EXPECT_EQ(gs_fp16_to_f32(0x7C00), inf);
    EXPECT_TRUE(std::isnan(gs_fp16_to_f32(gs_f32_to_fp16(NAN))));
    EXPECT_TRUE(std::isnan(gs_fp16_to_f32(gs_f32_to_fp16(float_of(0xFF800001u)))));
    EXPECT_EQ(gs_f32_to_fp16(float_of(1)), 0x0000); // fp32 subnormal
}

TEST(Dtype, KnownVectorsE4m3)
{
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(gs_f32_to_e4m3(1.0f), 0x38);
    EXPECT_EQ(gs_f32_to_e4m3(-1.0f), 0xB8);
    EXPECT_EQ(gs_f32_to_e4m3(-0.0f), 0x80);
    EXPECT_EQ(gs_f32_to_e4m3(448.0f), 0x7E);
    EXPECT_EQ(gs_f32_to_e4m3(464.0f), 0x7E); // would round to 480 (the NaN code): saturate
    EXPECT_EQ(gs_f32_to_e4m3(1e6f), 0x7E);
    EXPECT_EQ(gs_f32_to_e4m3(-1e6f), 0xFE);
    EXPECT_EQ(gs_f32_to_e4m3(inf), 0x7E); // fn variant: no inf, saturate
    EXPECT_EQ(gs_f32_to_e4m3(-inf), 0xFE);
    EXPECT_EQ(gs_f32_to_e4m3(NAN), 0x7F);
    EXPECT_TRUE(std::isnan(gs_e4m3_to_f32(0x7F)));
    EXPECT_TRUE(std::isnan(gs_e4m3_to_f32(0xFF)));
    EXPECT_EQ(gs_e4m3_to_f32(0x7E), 448.0f);
    EXPECT_EQ(gs_e4m3_to_f32(0x78), 256.0f);               // exponent all ones is finite in e4m3fn
    EXPECT_EQ(gs_f32_to_e4m3(std::ldexp(1.0f, -9)), 0x01); // min subnormal
    EXPECT_EQ(gs_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
    EXPECT_EQ(gs_f32_to_e4m3(std::ldexp(1.0f, -10)), 0x00);     // tie -> even (0)
    EXPECT_EQ(gs_f32_to_e4m3(3 * std::ldexp(1.0f, -10)), 0x02); // tie -> even (2)
    EXPECT_EQ(gs_f32_to_e4m3(1.0625f), 0x38);                   // 1 + 1/16: tie -> 1.0
    EXPECT_EQ(gs_f32_to_e4m3(1.1875f), 0x3A);                   // 1 + 3/16: tie -> 1.25
}

TEST(Dtype, KnownVectorsE5m2)
{
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(gs_f32_to_e5m2(1.0f), 0x3C);
    EXPECT_EQ(gs_f32_to_e5m2(-0.0f), 0x80);
    EXPECT_EQ(gs_f32_to_e5m2(57344.0f), 0x7B);
    EXPECT_EQ(gs_f32_to_e5m2(61439.0f), 0x7B);
    EXPECT_EQ(gs_f32_to_e5m2(61440.0f), 0x7C); // halfway, ties to even: inf
    EXPECT_EQ(gs_f32_to_e5m2(1e6f), 0x7C);
    EXPECT_EQ(gs_f32_to_e5m2(-inf), 0xFC);
    EXPECT_EQ(gs_e5m2_to_f32(0x7C), inf);
    EXPECT_TRUE(std::isnan(gs_e5m2_to_f32(gs_f32_to_e5m2(NAN))));
    EXPECT_EQ(gs_f32_to_e5m2(std::ldexp(1.0f, -16)), 0x01); // min subnormal
    EXPECT_EQ(gs_e5m2_to_f32(0x01), std::ldexp(1.0f, -16));
    EXPECT_EQ(gs_f32_to_e5m2(std::ldexp(1.0f, -17)), 0x00);
    EXPECT_EQ(gs_f32_to_e5m2(1.125f), 0x3C); // tie -> even
    EXPECT_EQ(gs_f32_to_e5m2(1.375f), 0x3E); // tie -> even (1.5)
}

TEST(Dtype, Integers)
{
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(gs_f32_to_i8(2.5f), 2);
    EXPECT_EQ(gs_f32_to_i8(3.5f), 4);
    EXPECT_EQ(gs_f32_to_i8(-2.5f), -2);
    EXPECT_EQ(gs_f32_to_i8(-3.5f), -4);
    EXPECT_EQ(gs_f32_to_i8(-0.5f), 0);
    EXPECT_EQ(gs_f32_to_i8(0.5000001f), 1);
    EXPECT_EQ(gs_f32_to_i8(126.5f), 126);
    EXPECT_EQ(gs_f32_to_i8(127.5f), 127);
    EXPECT_EQ(gs_f32_to_i8(200.0f), 127);
    EXPECT_EQ(gs_f32_to_i8(-128.5f), -128);
    EXPECT_EQ(gs_f32_to_i8(-1e30f), -128);
    EXPECT_EQ(gs_f32_to_i8(inf), 127);
    EXPECT_EQ(gs_f32_to_i8(-inf), -128);
    EXPECT_EQ(gs_f32_to_i8(NAN), 0);
    EXPECT_EQ(gs_f32_to_i32(2.5f), 2);
    EXPECT_EQ(gs_f32_to_i32(-1.5f), -2);
    EXPECT_EQ(gs_f32_to_i32(8388607.5f), 8388608);
    EXPECT_EQ(gs_f32_to_i32(8388609.0f), 8388609);
    EXPECT_EQ(gs_f32_to_i32(2147483520.0f), 2147483520); // largest fp32 below 2^31
    EXPECT_EQ(gs_f32_to_i32(2147483648.0f), INT32_MAX);
    EXPECT_EQ(gs_f32_to_i32(-2147483648.0f), INT32_MIN);
    EXPECT_EQ(gs_f32_to_i32(1e20f), INT32_MAX);
    EXPECT_EQ(gs_f32_to_i32(-inf), INT32_MIN);
    EXPECT_EQ(gs_f32_to_i32(NAN), 0);
    EXPECT_EQ(gs_dtype_round(GS_INT32, 16777217.0f), 16777216.0f);
    EXPECT_EQ(gs_dtype_round(GS_INT8, -7.5f), -8.0f);

    // Random values against a long-double reference with explicit half-even and saturation.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> small(-300.0f, 300.0f);
    std::uniform_int_distribution<uint32_t> any_bits;
    auto ref = [](float f, long double lo, long double hi) -> long double {
        if (std::isnan(f)) return 0;
        long double x = f, fl = std::floor(x), d = x - fl;
        if (d > 0.5L || (d == 0.5L && std::fmod(fl, 2.0L) != 0)) fl += 1;
        return std::min(hi, std::max(lo, fl));
    };
    for (int i = 0; i < 100000; i++) {
        float f = (i % 2) ? small(rng) : float_of(any_bits(rng));
        if (i % 3 == 0) f = std::round(f * 2.0f) / 2.0f; // many exact halves
        ASSERT_EQ((long double)gs_f32_to_i8(f), ref(f, -128, 127)) << f;
        ASSERT_EQ((long double)gs_f32_to_i32(f), ref(f, INT32_MIN, INT32_MAX)) << f;
    }
}

TEST(Dtype, GenericLoadStore)
{
    for (int t = 0; t < GS_DTYPE_COUNT; t++) {
        gs_dtype dt = (gs_dtype)t;
        unsigned char buf[64] = {0};
        const float vals[] = {1.0f, -2.5f, 0.333f, 100.0f};
        for (size_t i = 0; i < 4; i++)
            gs_dtype_store(dt, buf, i, vals[i]);
        for (size_t i = 0; i < 4; i++)
            EXPECT_TRUE(same_value(gs_dtype_load(dt, buf, i), gs_dtype_round(dt, vals[i])))
                << gs_dtype_name(dt) << " element " << i;
    }
}

TEST(Dtype, BulkMatchesScalar)
{
    std::mt19937 rng(11);
    std::uniform_int_distribution<uint32_t> any_bits;
    std::uniform_real_distribution<float> moderate(-500.0f, 500.0f);
    const size_t n = 4099;
    std::vector<float> src(n);
    for (size_t i = 0; i < n; i++) {
        src[i] = (i % 3 == 0) ? float_of(any_bits(rng)) : moderate(rng);
        if (i % 97 == 0) src[i] = std::ldexp(moderate(rng), -140); // fp32 subnormals
    }
    src[1] = NAN;
    src[2] = -std::numeric_limits<float>::infinity();
    for (int t = 0; t < GS_DTYPE_COUNT; t++) {
        gs_dtype dt = (gs_dtype)t;
        size_t sz = gs_dtype_size(dt);
        for (ptrdiff_t stride : {(ptrdiff_t)1, (ptrdiff_t)3}) {
            std::vector<unsigned char> bulk(n * sz * (size_t)stride, 0xA5);
            std::vector<unsigned char> scalar(n * sz * (size_t)stride, 0xA5);
            gs_dtype_from_f32(dt, src.data(), bulk.data(), stride, n);
            for (size_t i = 0; i < n; i++)
                gs_dtype_store(dt, scalar.data(), i * (size_t)stride, src[i]);
            ASSERT_EQ(bulk, scalar) << gs_dtype_name(dt) << " stride " << stride;

            std::vector<float> back(n);
            gs_dtype_to_f32(dt, bulk.data(), stride, back.data(), n);
            for (size_t i = 0; i < n; i++) {
                float want = gs_dtype_load(dt, bulk.data(), i * (size_t)stride);
                ASSERT_EQ(bits_of(back[i]), bits_of(want))
                    << gs_dtype_name(dt) << " stride " << stride << " element " << i;
            }
        }
    }
}

TEST(Dtype, BulkNegativeStride)
{
    uint16_t buf[4];
    const float src[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    // Write backwards from the last element.
    gs_dtype_from_f32(GS_BF16, src, &buf[3], -1, 4);
    EXPECT_EQ(gs_bf16_to_f32(buf[3]), 1.0f);
    EXPECT_EQ(gs_bf16_to_f32(buf[0]), 4.0f);
    float back[4];
    gs_dtype_to_f32(GS_BF16, &buf[3], -1, back, 4);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(back[i], src[i]);
}

// ---- microscaling (OCP MX) types ----

namespace
{

// fp4 e2m1 from its fields: sign, exponent e (bias 1), mantissa m.
double e2m1_value(unsigned code)
{
    unsigned s = (code >> 3) & 1, e = (code >> 1) & 3, m = code & 1;
    double v = e == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, (int)e - 1);
    return s ? -v : v;
}

// Brute-force RNE with saturation over the finite codes of an MX element type: the nearest
// value of the input's sign, ties to the even code, beyond the largest finite value -> it.
uint8_t brute_code(gs_dtype t, double x)
{
    unsigned ncodes = t == GS_FP4_E2M1_X4 ? 16 : 256;
    unsigned sign = t == GS_FP4_E2M1_X4 ? 8 : 0x80;
    bool neg = std::signbit(x);
    double mx = gs_mx_elem_max(t);
    if (std::fabs(x) > mx) x = neg ? -mx : mx;
    int best = -1;
    double bd = 0;
    for (unsigned c = 0; c < ncodes; c++) {
        if (((c & sign) != 0) != neg) continue;
        double v = gs_mx_code_to_f32(t, (uint8_t)c);
        if (!std::isfinite(v)) continue;
        double d = std::fabs(v - x);
        if (best < 0 || d < bd || (d == bd && (c & 1) == 0 && (best & 1) == 1)) {
            best = (int)c;
            bd = d;
        }
    }
    return (uint8_t)best;
}

} // namespace

TEST(DtypeMX, E2M1AllSixteenCodes)
{
    for (unsigned c = 0; c < 16; c++) {
        float v = gs_e2m1_to_f32((uint8_t)c);
        EXPECT_EQ((double)v, e2m1_value(c)) << c;
        EXPECT_EQ(gs_f32_to_e2m1(v), c) << c; // round trip, -0 keeps its sign
    }
    EXPECT_EQ(gs_e2m1_to_f32(7), 6.0f);
    EXPECT_EQ(gs_e2m1_to_f32(1), 0.5f);
}

TEST(DtypeMX, E2M1RoundsToNearestEvenAndSaturates)
{
    struct {
        float in, out;
    } v[] = {{0.25f, 0.0f}, {0.26f, 0.5f},    {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f},
             {2.5f, 2.0f},  {3.5f, 4.0f},     {5.0f, 4.0f},  {5.1f, 6.0f},  {7.0f, 6.0f},
             {1e30f, 6.0f}, {-100.0f, -6.0f}, {-0.2f, -0.0f}};
    for (auto &t : v) {
        float got = gs_e2m1_to_f32(gs_f32_to_e2m1(t.in));
        EXPECT_EQ(got, t.out) << t.in;
        EXPECT_EQ(std::signbit(got), std::signbit(t.out)) << t.in;
    }
    EXPECT_EQ(gs_f32_to_e2m1(NAN), 0);
    // every bf16 value against the brute-force rounding
    for (uint32_t h = 0; h < 65536; h++) {
        float f = gs_bf16_to_f32((uint16_t)h);
        if (std::isnan(f)) continue;
        ASSERT_EQ(gs_mx_f32_to_code(GS_FP4_E2M1_X4, f), brute_code(GS_FP4_E2M1_X4, f)) << f;
    }
}

TEST(DtypeMX, E8M0AllCodes)
{
    for (unsigned b = 0; b < 255; b++) {
        float v = gs_e8m0_to_f32((uint8_t)b);
        EXPECT_EQ((double)v, std::ldexp(1.0, (int)b - 127)) << b;
        EXPECT_EQ(gs_f32_to_e8m0(v), b) << b;
        // anything in [2^e, 2^(e+1)) keeps 2^e
        if (b < 254) {
            EXPECT_EQ(gs_f32_to_e8m0(std::nextafter(2 * v, 0.0f)), b) << b;
        }
    }
    EXPECT_TRUE(std::isnan(gs_e8m0_to_f32(255)));
    EXPECT_EQ(gs_f32_to_e8m0(NAN), 255);
    EXPECT_EQ(gs_f32_to_e8m0(0.0f), 255);
    EXPECT_EQ(gs_f32_to_e8m0(-1.0f), 255);
    EXPECT_EQ(gs_f32_to_e8m0(INFINITY), 255);
    EXPECT_EQ(gs_f32_to_e8m0(1e-45f), 0); // below 2^-127: clamped
    EXPECT_EQ(gs_f32_to_e8m0(3.0f), 128); // 2^1
    // generic store/load (a kernel's scale tensor)
    uint8_t buf[1];
    gs_dtype_store(GS_E8M0, buf, 0, 0.3f);
    EXPECT_EQ(gs_dtype_load(GS_E8M0, buf, 0), 0.25f);
}

TEST(DtypeMX, QuadPackedLanesRoundTrip)
{
    EXPECT_EQ(gs_dtype_size(GS_FP8_E4M3_X4), 4u);
    EXPECT_EQ(gs_dtype_size(GS_FP4_E2M1_X4), 2u);
    EXPECT_EQ(gs_dtype_mx_element(GS_FP8_E5M2_X4), GS_FP8_E5M2);
    EXPECT_FALSE(gs_dtype_is_mx(GS_BF16));
    for (gs_dtype t : {GS_FP8_E4M3_X4, GS_FP8_E5M2_X4, GS_FP4_E2M1_X4}) {
        unsigned ncodes = t == GS_FP4_E2M1_X4 ? 16 : 256;
        std::vector<uint8_t> buf(3 * gs_dtype_size(t), 0xA5);
        for (unsigned c = 0; c < ncodes; c++)
            for (int j = 0; j < 4; j++) {
                gs_mx_set_lane(t, buf.data(), 1, j, (uint8_t)c);
                ASSERT_EQ(gs_mx_lane_code(t, buf.data(), 1, j), c);
                // neighbours untouched
                ASSERT_EQ(buf[0], 0xA5);
                ASSERT_EQ(buf[buf.size() - 1], 0xA5);
                // every code's value converts back to the code (finite codes)
                float v = gs_mx_code_to_f32(t, (uint8_t)c);
                if (std::isfinite(v)) {
                    ASSERT_EQ(gs_mx_f32_to_code(t, v), c) << c;
                }
            }
        // the scalar view of a packed element is its bit pattern (fp4 x4: 16 bits, exact)
        if (t == GS_FP4_E2M1_X4) {
            uint16_t bits;
            std::memcpy(&bits, buf.data() + 2, 2);
            EXPECT_EQ(gs_dtype_load(t, buf.data(), 1), (float)bits);
            gs_dtype_store(t, buf.data(), 0, 4660.0f);
            std::memcpy(&bits, buf.data(), 2);
            EXPECT_EQ(bits, 4660);
        }
    }
}

TEST(DtypeMX, GroupQuantisationFollowsOcp)
{
    uint8_t codes[32];
    float x[32];
    // max exactly 448: scale 2^0, elements exact
    for (int i = 0; i < 32; i++)
        x[i] = (float)(i - 16) * 0.5f;
    x[5] = 448.0f;
    EXPECT_EQ(gs_mx_quantize_group(GS_FP8_E4M3_X4, x, 32, codes), 127);
    for (int i = 0; i < 32; i++)
        EXPECT_EQ(gs_e4m3_to_f32(codes[i]), x[i]) << i;
    // 480: floor(log2) = 8, scale 2^0, element saturates to 448 (no NaN)
    x[5] = 480.0f;
    EXPECT_EQ(gs_mx_quantize_group(GS_FP8_E4M3_X4, x, 32, codes), 127);
    EXPECT_EQ(gs_e4m3_to_f32(codes[5]), 448.0f);
    // all zero: the smallest scale and zero elements
    for (float &v : x)
        v = 0.0f;
    EXPECT_EQ(gs_mx_quantize_group(GS_FP8_E5M2_X4, x, 32, codes), 0);
    for (uint8_t c : codes)
        EXPECT_EQ(c & 0x7F, 0);
    // a NaN or infinity: NaN scale
    x[3] = NAN;
    EXPECT_EQ(gs_mx_quantize_group(GS_FP4_E2M1_X4, x, 32, codes), 255);
    x[3] = INFINITY;
    EXPECT_EQ(gs_mx_quantize_group(GS_FP8_E4M3_X4, x, 32, codes), 255);
    // fp4: max 6 -> scale 2^0; 5 rounds to 4 (tie to even), 0.25 to 0
    for (float &v : x)
        v = 0.0f;
    x[0] = 6.0f;
    x[1] = 5.0f;
    x[2] = -0.25f;
    EXPECT_EQ(gs_mx_quantize_group(GS_FP4_E2M1_X4, x, 32, codes), 127);
    EXPECT_EQ(gs_e2m1_to_f32(codes[1]), 4.0f);
    EXPECT_EQ(gs_e2m1_to_f32(codes[2]), -0.0f);

    // random groups of every magnitude against the formula and brute-force rounding
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::uniform_int_distribution<int> ex(-140, 120);
    for (gs_dtype t : {GS_FP8_E4M3_X4, GS_FP8_E5M2_X4, GS_FP4_E2M1_X4})
        for (int it = 0; it < 3000; it++) {
            int e0 = ex(rng);
            float amax = 0;
            for (float &v : x) {
                v = gs_bf16_to_f32(gs_f32_to_bf16(std::ldexp(nd(rng), e0)));
                amax = std::max(amax, std::fabs(v));
            }
            uint8_t sc = gs_mx_quantize_group(t, x, 32, codes);
            int e = amax > 0 ? std::ilogb(amax) - gs_mx_elem_emax(t) : -127;
            e = std::min(127, std::max(-127, e));
            ASSERT_EQ(sc, e + 127) << gs_dtype_name(t) << " amax " << amax;
            for (int i = 0; i < 32; i++)
                ASSERT_EQ(codes[i], brute_code(t, std::ldexp((double)x[i], -e)))
                    << gs_dtype_name(t) << " x " << x[i] << " e " << e;
        }
}
