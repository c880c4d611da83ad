/*
 * ops.c - ALU ops and activation functions in fp32 (gs/isa.h): the arithmetic of the vector,
 * scalar and gpsimd engines, shared by the functional executor and the reference checks.
 *
 * NaN handling: every op propagates NaN (max/min too, unlike fmaxf), so a NaN produced inside
 * a kernel reaches the output and the correctness check instead of being silently dropped by a
 * reduction. Comparisons follow IEEE (NaN compares unequal to everything).
 */
#include <math.h>
#include <string.h>

#include "gs/isa.h"

static const char *const alu_names[] = {
#define GS_ALU_NAME(e, n) n,
    GS_ALU_TABLE(GS_ALU_NAME)
#undef GS_ALU_NAME
};

static const char *const act_names[] = {
#define GS_ACT_NAME(e, n) n,
    GS_ACT_TABLE(GS_ACT_NAME)
#undef GS_ACT_NAME
};

const char *gs_alu_name(gs_alu op)
{
    if ((int)op < 0 || op >= GS_ALU_COUNT) return "?";
    return alu_names[op];
}

int gs_alu_parse(const char *name, gs_alu *out)
{
    if (!name) return -1;
    for (int i = 0; i < GS_ALU_COUNT; i++) {
        if (strcmp(name, alu_names[i]) == 0) {
            if (out) *out = (gs_alu)i;
            return 0;
        }
    }
    return -1;
}

const char *gs_act_name(gs_act f)
{
    if ((int)f < 0 || f >= GS_ACT_COUNT) return "?";
    return act_names[f];
}

int gs_act_parse(const char *name, gs_act *out)
{
    if (!name) return -1;
    for (int i = 0; i < GS_ACT_COUNT; i++) {
        if (strcmp(name, act_names[i]) == 0) {
            if (out) *out = (gs_act)i;
            return 0;
        }
    }
    return -1;
}

float gs_alu_apply(gs_alu op, float a, float b)
{
    switch (op) {
    case GS_ALU_BYPASS:
        return a;
    case GS_ALU_ADD:
        return a + b;
    case GS_ALU_SUB:
        return a - b;
    case GS_ALU_MUL:
        return a * b;
    case GS_ALU_DIV:
        return a / b; /* IEEE: x/0 = +-inf, 0/0 = NaN */
    case GS_ALU_MAX:
        if (a != a || b != b) return a + b; /* propagate NaN */
        return a > b ? a : b;
    case GS_ALU_MIN:
        if (a != a || b != b) return a + b;
        return a < b ? a : b;
    case GS_ALU_POW:
        return powf(a, b);
    case GS_ALU_EQ:
        return a == b ? 1.0f : 0.0f;
    case GS_ALU_NE:
        return a != b ? 1.0f : 0.0f;
    case GS_ALU_GT:
        return a > b ? 1.0f : 0.0f;
    case GS_ALU_GE:
        return a >= b ? 1.0f : 0.0f;
    case GS_ALU_LT:
        return a < b ? 1.0f : 0.0f;
    case GS_ALU_LE:
        return a <= b ? 1.0f : 0.0f;
    default:
        return NAN;
    }
}

/* sqrt(2/pi) and the cubic coefficient of the usual tanh approximation of GELU. */
#define GS_GELU_TANH_K 0.7978845608028654f
#define GS_GELU_TANH_C 0.044715f
/* 1/sqrt(2); M_SQRT1_2 is not part of C11. */
#define GS_SQRT1_2 0.70710678118654752f

float gs_act_apply(gs_act f, float x)
{
    switch (f) {
    case GS_ACT_IDENTITY:
        return x;
    case GS_ACT_RELU:
        return x > 0.0f ? x : (x != x ? x : 0.0f);
    case GS_ACT_GELU:
        /* x * Phi(x) = 0.5 x erfc(-x / sqrt 2): erfc keeps precision in the negative tail where
         * 1 + erf(x) cancels. -inf gives 0 rather than -inf * 0. */
        if (isinf(x)) return x > 0.0f ? x : 0.0f;
        return 0.5f * x * erfcf(-x * GS_SQRT1_2);
    case GS_ACT_GELU_TANH: {
        if (isinf(x)) return x > 0.0f ? x : 0.0f;
        float u = GS_GELU_TANH_K * (x + GS_GELU_TANH_C * x * x * x);
        /* 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)): the same function without the cancellation
         * of 1 + tanh u for negative x. */
        return x / (1.0f + expf(-2.0f * u));
    }
    case GS_ACT_SILU:
        if (isinf(x)) return x > 0.0f ? x : 0.0f;
        return x / (1.0f + expf(-x));
    case GS_ACT_SIGMOID:
        return 1.0f / (1.0f + expf(-x));
    case GS_ACT_TANH:
        return tanhf(x);
    case GS_ACT_EXP:
        return expf(x);
    case GS_ACT_LOG:
        return logf(x);
    case GS_ACT_SQRT:
        return sqrtf(x);
    case GS_ACT_RSQRT:
        return 1.0f / sqrtf(x);
    case GS_ACT_RECIPROCAL:
        return 1.0f / x;
    case GS_ACT_SQUARE:
        return x * x;
    case GS_ACT_ABS:
        return fabsf(x);
    default:
        return NAN;
    }
}
