// test_ops.cpp - ALU ops and activation functions against double-precision libm references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "gs/isa.h"

namespace
{

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Relative error with an absolute floor (for results near zero).
::testing::AssertionResult near_rel(double got, double want, double rel, double abs_floor)
{
    if (std::isnan(want))
        return std::isnan(got) ? ::testing::AssertionSuccess()
                               : ::testing::AssertionFailure() << "got " << got << " want NaN";
    if (std::isinf(want))
        return got == want ? ::testing::AssertionSuccess()
                           : ::testing::AssertionFailure() << "got " << got << " want " << want;
    double err = std::fabs(got - want);
    if (err <= abs_floor || err <= rel * std::fabs(want)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << " want " << want << " err " << err;
}

double ref_act(gs_act f, double x)
{
    switch (f) {
    case GS_ACT_IDENTITY:
        return x;
    case GS_ACT_RELU:
        return x > 0 ? x : 0;
    case GS_ACT_GELU:
        return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case GS_ACT_GELU_TANH: {
        double k = std::sqrt(2.0 / M_PI);
        // 0.5 x (1 + tanh u), written as x / (1 + exp(-2u)) so the double reference does not
        // lose its own precision to cancellation in the negative tail.
        return x / (1.0 + std::exp(-2.0 * k * (x + 0.044715 * x * x * x)));
    }
    case GS_ACT_SILU:
        return x / (1.0 + std::exp(-x));
    case GS_ACT_SIGMOID:
        return 1.0 / (1.0 + std::exp(-x));
    case GS_ACT_TANH:
        return std::tanh(x);
    case GS_ACT_EXP:
        return std::exp(x);
    case GS_ACT_LOG:
        return std::log(x);
    case GS_ACT_SQRT:
        return std::sqrt(x);
    case GS_ACT_RSQRT:
        return 1.0 / std::sqrt(x);
    case GS_ACT_RECIPROCAL:
        return 1.0 / x;
    case GS_ACT_SQUARE:
        return x * x;
    case GS_ACT_ABS:
        return std::fabs(x);
    default:
        return NAN;
    }
}

} // namespace

TEST(Ops, NamesParseRoundTrip)
{
    for (int i = 0; i < GS_ALU_COUNT; i++) {
        gs_alu out = GS_ALU_COUNT;
        ASSERT_EQ(gs_alu_parse(gs_alu_name((gs_alu)i), &out), 0) << i;
        EXPECT_EQ(out, (gs_alu)i);
    }
    for (int i = 0; i < GS_ACT_COUNT; i++) {
        gs_act out = GS_ACT_COUNT;
        ASSERT_EQ(gs_act_parse(gs_act_name((gs_act)i), &out), 0) << i;
        EXPECT_EQ(out, (gs_act)i);
    }
    EXPECT_STREQ(gs_alu_name(GS_ALU_GE), "is_ge");
    EXPECT_STREQ(gs_act_name(GS_ACT_GELU_TANH), "gelu_tanh");
    EXPECT_STREQ(gs_alu_name((gs_alu)-1), "?");
    EXPECT_STREQ(gs_act_name(GS_ACT_COUNT), "?");
    gs_alu a;
    gs_act f;
    EXPECT_NE(gs_alu_parse("plus", &a), 0);
    EXPECT_NE(gs_alu_parse(nullptr, &a), 0);
    EXPECT_NE(gs_act_parse("softmax", &f), 0);
}

TEST(Ops, AluArithmeticIsCorrectlyRoundedFp32)
{
    // double has more than 2*24+2 bits, so rounding the exact double result to float gives the
    // correctly rounded fp32 result for + - * /.
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-1000.0f, 1000.0f);
    for (int i = 0; i < 20000; i++) {
        float a = d(rng), b = d(rng);
        EXPECT_EQ(gs_alu_apply(GS_ALU_ADD, a, b), (float)((double)a + (double)b));
        EXPECT_EQ(gs_alu_apply(GS_ALU_SUB, a, b), (float)((double)a - (double)b));
        EXPECT_EQ(gs_alu_apply(GS_ALU_MUL, a, b), (float)((double)a * (double)b));
        EXPECT_EQ(gs_alu_apply(GS_ALU_DIV, a, b), (float)((double)a / (double)b));
        EXPECT_EQ(gs_alu_apply(GS_ALU_MAX, a, b), std::max(a, b));
        EXPECT_EQ(gs_alu_apply(GS_ALU_MIN, a, b), std::min(a, b));
        EXPECT_EQ(gs_alu_apply(GS_ALU_BYPASS, a, b), a);
        float pa = std::fabs(a) / 100.0f, pb = b / 300.0f;
        EXPECT_TRUE(
            near_rel(gs_alu_apply(GS_ALU_POW, pa, pb), std::pow((double)pa, pb), 4e-7, 1e-37))
            << pa << "^" << pb;
    }
}

TEST(Ops, AluComparisons)
{
    const float vals[] = {-1.0f, 0.0f, -0.0f, 2.0f, kInf, -kInf, kNaN};
    for (float a : vals) {
        for (float b : vals) {
            EXPECT_EQ(gs_alu_apply(GS_ALU_EQ, a, b), a == b ? 1.0f : 0.0f) << a << " " << b;
            EXPECT_EQ(gs_alu_apply(GS_ALU_NE, a, b), a != b ? 1.0f : 0.0f) << a << " " << b;
            EXPECT_EQ(gs_alu_apply(GS_ALU_GT, a, b), a > b ? 1.0f : 0.0f) << a << " " << b;
            EXPECT_EQ(gs_alu_apply(GS_ALU_GE, a, b), a >= b ? 1.0f : 0.0f) << a << " " << b;
            EXPECT_EQ(gs_alu_apply(GS_ALU_LT, a, b), a < b ? 1.0f : 0.0f) << a << " " << b;
            EXPECT_EQ(gs_alu_apply(GS_ALU_LE, a, b), a <= b ? 1.0f : 0.0f) << a << " " << b;
        }
    }
}

TEST(Ops, AluSpecialValues)
{
    EXPECT_EQ(gs_alu_apply(GS_ALU_DIV, 1.0f, 0.0f), kInf);
    EXPECT_EQ(gs_alu_apply(GS_ALU_DIV, -1.0f, 0.0f), -kInf);
    EXPECT_EQ(gs_alu_apply(GS_ALU_DIV, 1.0f, -0.0f), -kInf);
    EXPECT_TRUE(std::isnan(gs_alu_apply(GS_ALU_DIV, 0.0f, 0.0f)));
    EXPECT_TRUE(std::isnan(gs_alu_apply(GS_ALU_ADD, kInf, -kInf)));
    // max/min propagate NaN (a NaN must reach the correctness check, not vanish in a reduce).
    EXPECT_TRUE(std::isnan(gs_alu_apply(GS_ALU_MAX, kNaN, 1.0f)));
    EXPECT_TRUE(std::isnan(gs_alu_apply(GS_ALU_MAX, 1.0f, kNaN)));
    EXPECT_TRUE(std::isnan(gs_alu_apply(GS_ALU_MIN, kNaN, 1.0f)));
    EXPECT_TRUE(std::isnan(gs_alu_apply(GS_ALU_MIN, 1.0f, kNaN)));
    EXPECT_EQ(gs_alu_apply(GS_ALU_MAX, -kInf, 3.0f), 3.0f);
    EXPECT_EQ(gs_alu_apply(GS_ALU_POW, 2.0f, 10.0f), 1024.0f);
    EXPECT_EQ(gs_alu_apply(GS_ALU_POW, 0.0f, -1.0f), kInf);
    EXPECT_TRUE(std::isnan(gs_alu_apply(GS_ALU_POW, -2.0f, 0.5f)));
}

TEST(Ops, ActivationsAgainstLibm)
{
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> wide(-20.0f, 20.0f);
    std::uniform_real_distribution<float> narrow(-4.0f, 4.0f);
    std::uniform_real_distribution<float> pos(1e-6f, 1000.0f);
    for (int fi = 0; fi < GS_ACT_COUNT; fi++) {
        gs_act f = (gs_act)fi;
        bool positive_only = f == GS_ACT_LOG || f == GS_ACT_SQRT || f == GS_ACT_RSQRT;
        for (int i = 0; i < 5000; i++) {
            float x = positive_only ? pos(rng) : (i % 2 ? wide(rng) : narrow(rng));
            if (f == GS_ACT_RECIPROCAL && x == 0.0f) continue;
            double want = ref_act(f, x);
            // float libm functions are within a few ulp; composite formulas add a few more,
            // and rounding the argument of exp/erfc in fp32 is amplified by the function's
            // condition number |x f'(x) / f(x)| (large in the negative tails of gelu/silu).
            double h = 1e-6 * std::fabs((double)x) + 1e-9;
            double deriv = (ref_act(f, (double)x + h) - ref_act(f, (double)x - h)) / (2 * h);
            double cond = want != 0 ? std::fabs((double)x * deriv / want) : 0;
            double rel = 2e-6 + 4 * cond * std::ldexp(1.0, -24);
            EXPECT_TRUE(near_rel(gs_act_apply(f, x), want, rel, 1e-30))
                << gs_act_name(f) << "(" << x << ") cond " << cond;
        }
    }
}

TEST(Ops, ActivationSpecialValues)
{
    EXPECT_EQ(gs_act_apply(GS_ACT_RELU, -3.0f), 0.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_RELU, 3.0f), 3.0f);
    EXPECT_TRUE(std::isnan(gs_act_apply(GS_ACT_RELU, kNaN)));
    EXPECT_EQ(gs_act_apply(GS_ACT_GELU, 0.0f), 0.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_GELU, kInf), kInf);
    EXPECT_EQ(gs_act_apply(GS_ACT_GELU, -kInf), 0.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_GELU_TANH, -kInf), 0.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_GELU_TANH, kInf), kInf);
    EXPECT_EQ(gs_act_apply(GS_ACT_SILU, -kInf), 0.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_SILU, kInf), kInf);
    EXPECT_EQ(gs_act_apply(GS_ACT_SIGMOID, -kInf), 0.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_SIGMOID, kInf), 1.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_SIGMOID, 0.0f), 0.5f);
    EXPECT_EQ(gs_act_apply(GS_ACT_TANH, kInf), 1.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_EXP, -kInf), 0.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_EXP, 100.0f), kInf);
    EXPECT_EQ(gs_act_apply(GS_ACT_LOG, 0.0f), -kInf);
    EXPECT_TRUE(std::isnan(gs_act_apply(GS_ACT_LOG, -1.0f)));
    EXPECT_TRUE(std::isnan(gs_act_apply(GS_ACT_SQRT, -1.0f)));
    EXPECT_EQ(gs_act_apply(GS_ACT_RSQRT, 0.0f), kInf);
    EXPECT_EQ(gs_act_apply(GS_ACT_RSQRT, 4.0f), 0.5f);
    EXPECT_EQ(gs_act_apply(GS_ACT_RECIPROCAL, 0.0f), kInf);
    EXPECT_EQ(gs_act_apply(GS_ACT_RECIPROCAL, -0.0f), -kInf);
    EXPECT_EQ(gs_act_apply(GS_ACT_SQUARE, -3.0f), 9.0f);
    EXPECT_EQ(gs_act_apply(GS_ACT_ABS, -0.0f), 0.0f);
    EXPECT_FALSE(std::signbit(gs_act_apply(GS_ACT_ABS, -0.0f)));
    // GELU's negative tail keeps relative precision (erfc, not 1 + erf).
    EXPECT_TRUE(near_rel(gs_act_apply(GS_ACT_GELU, -8.0f), ref_act(GS_ACT_GELU, -8.0), 1e-5, 0));
    for (int fi = 0; fi < GS_ACT_COUNT; fi++)
        EXPECT_TRUE(std::isnan(gs_act_apply((gs_act)fi, kNaN))) << gs_act_name((gs_act)fi);
}
