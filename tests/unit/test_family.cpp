// test_family.cpp - generation families (gs/family.h): the table and the config checks, gen3's
// fp8 double-row matmul and gen4's MX matmul / Quantize-MX (builder rules, semantics, cost).
// Every feature test also runs with the feature switched off and expects the difference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gs/cost.h"
#include "gs/exec.h"
#include "gs/family.h"
#include "gs/builder.h"

namespace
{

const std::string kConfigs = std::string(GS_SOURCE_DIR) + "/configs";

struct Cfg {
    gs_config *c = nullptr;
    gs_diags d;
    Cfg() { gs_diags_init(&d); }
    ~Cfg()
    {
        gs_config_free(c);
        gs_diags_free(&d);
    }
    std::string errors() const
    {
        std::string s;
        for (size_t i = 0; i < d.count; i++)
            s += std::string(d.items[i].message) + "\n";
        return s;
    }
};

void load(Cfg &c, const std::string &yaml)
{
    c.c = gs_config_load_string(yaml.data(), yaml.size(), "t.yaml", kConfigs.c_str(), &c.d);
}

// A program on one config with a builder for core 0.
struct Prog {
    gs_program *p = nullptr;
    gs_kb *kb = nullptr;
    explicit Prog(const gs_config *c)
    {
        p = gs_program_create(c);
        kb = gs_kb_create(p, 0);
    }
    ~Prog()
    {
        gs_kb_free(kb);
        gs_program_free(p);
    }
    std::string error() const { return gs_kb_error(kb)->message; }
};

double cycles_of(const gs_config *c, const gs_instr *in)
{
    gs_cost_state st;
    gs_cost_state_init(&st);
    return gs_cost_compute_cycles(c, in, &st);
}

TEST(Family, TableHoldsEveryGeneration)
{
    for (const char *n : {"gen1", "gen2", "gen3", "gen4"}) {
        const gs_family *f = gs_family_find(n);
        ASSERT_NE(f, nullptr) << n;
        EXPECT_STREQ(f->name, n);
    }
    EXPECT_EQ(gs_family_find("gen9"), nullptr);
    EXPECT_EQ(gs_family_find(nullptr), nullptr);
    char list[128];
    gs_family_list(list, sizeof list);
    EXPECT_STREQ(list, "gen1, gen2, gen3, gen4");
    EXPECT_EQ(gs_family_extension_ops(), (1ull << GS_OP_MATMUL_MX) | (1ull << GS_OP_QUANTIZE_MX) |
                                             (1ull << GS_OP_EXPONENTIAL));
}

TEST(Family, UnknownFamilyListsTheKnownOnes)
{
    Cfg c;
    load(c, "extends: gen2\nfamily: gen7\n");
    ASSERT_EQ(c.c, nullptr);
    EXPECT_NE(c.errors().find("unknown family 'gen7'; expected one of gen1, gen2, gen3, gen4"),
              std::string::npos)
        << c.errors();
}

TEST(Family, FeatureTheFamilyLacksIsAConfigError)
{
    // MX matmul on a gen3-family config; double row on gen2; fine on gen4
    Cfg a;
    load(a, "extends: gen4\nfamily: gen3\n");
    ASSERT_EQ(a.c, nullptr);
    EXPECT_NE(a.errors().find("ops: matmul_mx enables mx_matmul, which family gen3 does not "
                              "have (families with it: gen4)"),
              std::string::npos)
        << a.errors();
    EXPECT_NE(a.errors().find("quantize_mx"), std::string::npos) << a.errors();
    Cfg b;
    load(b, "extends: gen3\nfamily: gen2\n");
    ASSERT_EQ(b.c, nullptr);
    EXPECT_NE(b.errors().find("double_row"), std::string::npos) << b.errors();
    Cfg ok;
    load(ok, "extends: gen4\n");
    ASSERT_NE(ok.c, nullptr) << ok.errors();
    // the family's own check: double row needs an fp8 matmul
    Cfg d;
    load(d, "extends: gen3\ndtypes: [fp32, bf16, fp16, int8, int32]\n");
    ASSERT_EQ(d.c, nullptr);
    EXPECT_NE(d.errors().find("double_row: needs an fp8 matmul"), std::string::npos) << d.errors();
}

TEST(Family, SetCannotEnableAFeatureTheFamilyLacks)
{
    Cfg c;
    load(c, "extends: gen2\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    EXPECT_NE(gs_config_set(c.c, "engines.tensor.double_row=true", &c.d), GS_OK);
    EXPECT_FALSE(c.c->tensor.double_row);
}

// ---- gen3: fp8 double row ----

TEST(DoubleRow, CapsAndPeak)
{
    Cfg c;
    load(c, "extends: gen3\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    Prog g(c.c);
    const gs_caps *k = gs_kb_caps(g.kb);
    EXPECT_EQ(k->double_row_k, 256u);
    EXPECT_EQ(k->double_row_dtypes, (1u << GS_FP8_E4M3) | (1u << GS_FP8_E5M2));
    EXPECT_DOUBLE_EQ(gs_config_peak_flops(c.c, GS_FP8_E4M3),
                     2 * gs_config_peak_flops(c.c, GS_BF16));
    // switched off: no double row, fp8 peaks at the bf16 rate
    ASSERT_EQ(gs_config_set(c.c, "engines.tensor.double_row=false", &c.d), GS_OK);
    Prog h(c.c);
    EXPECT_EQ(gs_kb_caps(h.kb)->double_row_k, 0u);
    EXPECT_DOUBLE_EQ(gs_config_peak_flops(c.c, GS_FP8_E4M3), gs_config_peak_flops(c.c, GS_BF16));
}

// K = 256 in one instruction, as long as a bf16 K = 128 one, exact semantics.
TEST(DoubleRow, SemanticsAndCost)
{
    Cfg c;
    load(c, "extends: gen3\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    Prog g(c.c);
    const unsigned M = 128, N = 512, P = 128;
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "in", 2, 2 * N);
    gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, N * 4);
    gs_tile a = gs_tile_alloc(sb, GS_FP8_E4M3, P, 2 * M);
    gs_tile b = gs_tile_alloc(sb, GS_FP8_E4M3, P, 2 * N);
    gs_tile acc = gs_tile_alloc(ps, GS_FP32, M, N);
    ASSERT_EQ(gs_matmul_dr(g.kb, acc.ap, gs_tile_view2(&a, 0, P, 0, 2, M, M),
                           gs_tile_view2(&b, 0, P, 0, 2, N, N), 0),
              GS_OK)
        << g.error();
    const gs_instr *dr = gs_program_instr(g.p, gs_program_count(g.p) - 1);
    EXPECT_EQ(gs_cost_tensor_flops(dr), 2.0 * 256 * M * N);

    // the same instruction time as a bf16 K = 128 matmul
    gs_tile a16 = gs_tile_alloc(sb, GS_BF16, P, M);
    gs_tile b16 = gs_tile_alloc(sb, GS_BF16, P, N);
    ASSERT_EQ(gs_matmul(g.kb, acc.ap, a16.ap, b16.ap, 0), GS_OK) << g.error();
    const gs_instr *bf = gs_program_instr(g.p, gs_program_count(g.p) - 1);
    EXPECT_DOUBLE_EQ(cycles_of(c.c, dr), cycles_of(c.c, bf));
    EXPECT_DOUBLE_EQ(cycles_of(c.c, dr), N); // max(min(64, M), N)

    // semantics: out[m][n] = sum over (p, half) of a[p][h][m] * b[p][h][n]
    gs_error err;
    gs_mem *mem = gs_mem_create(g.p, &err);
    ASSERT_NE(mem, nullptr);
    uint8_t *sbuf = gs_mem_space(mem, GS_MEM_SBUF, 0);
    size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> code(0, 0x7E); // finite e4m3, both signs below
    std::vector<double> A(256 * M), B(256 * N);
    for (unsigned p = 0; p < P; p++)
        for (unsigned h = 0; h < 2; h++) {
            for (unsigned m = 0; m < M; m++) {
                uint8_t v = (uint8_t)(code(rng) | ((rng() & 1) << 7));
                sbuf[p * pb + a.ap.offset + h * M + m] = v;
                A[(h * P + p) * M + m] = gs_e4m3_to_f32(v);
            }
            for (unsigned n = 0; n < N; n++) {
                uint8_t v = (uint8_t)((code(rng) % 0x40) | ((rng() & 1) << 7));
                sbuf[p * pb + b.ap.offset + h * N + n] = v;
                B[(h * P + p) * N + n] = gs_e4m3_to_f32(v);
            }
        }
    ASSERT_EQ(gs_exec_instr(mem, g.p, gs_program_count(g.p) - 2, &err), GS_OK) << err.message;
    const float *out = (const float *)(gs_mem_space(mem, GS_MEM_PSUM, 0) + acc.ap.offset);
    size_t ppb = gs_mem_partition_stride(mem, GS_MEM_PSUM) / 4;
    double worst = 0;
    for (unsigned m = 0; m < M; m += 7)
        for (unsigned n = 0; n < N; n += 13) {
            double ref = 0, mag = 0;
            for (unsigned k = 0; k < 256; k++) {
                ref += A[k * M + m] * B[k * N + n];
                mag += std::fabs(A[k * M + m] * B[k * N + n]);
            }
            double e = std::fabs((double)out[m * ppb + n] - ref) / std::max(mag, 1e-30);
            worst = std::max(worst, e);
        }
    EXPECT_LT(worst, 256 * std::ldexp(1.0, -24)) << "fp32 accumulation bound";
    gs_mem_free(mem);
}

TEST(DoubleRow, BuilderRules)
{
    Cfg c;
    load(c, "extends: gen3\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    {
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "in", 2, 1024);
        gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
        gs_tile a = gs_tile_alloc(sb, GS_BF16, 128, 256);
        gs_tile b = gs_tile_alloc(sb, GS_BF16, 128, 256);
        gs_tile acc = gs_tile_alloc(ps, GS_FP32, 128, 128);
        EXPECT_EQ(gs_matmul_dr(g.kb, acc.ap, gs_tile_view2(&a, 0, 128, 0, 2, 128, 128),
                               gs_tile_view2(&b, 0, 128, 0, 2, 128, 128), 0),
                  GS_ERR_UNSUPPORTED);
        EXPECT_NE(g.error().find("fp8 only"), std::string::npos) << g.error();
    }
    {
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "in", 2, 1024);
        gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
        gs_tile a = gs_tile_alloc(sb, GS_FP8_E4M3, 128, 256);
        gs_tile b = gs_tile_alloc(sb, GS_FP8_E5M2, 128, 256);
        gs_tile acc = gs_tile_alloc(ps, GS_FP32, 128, 128);
        // not [P, 2, X]
        EXPECT_EQ(gs_matmul_dr(g.kb, acc.ap, a.ap, b.ap, 0), GS_ERR_INVALID);
        EXPECT_NE(g.error().find("[P, 2, X]"), std::string::npos) << g.error();
    }
    {
        // the output shape names the matmul and both sizes (shared with matmul_mx)
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "in", 2, 1024);
        gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
        gs_tile a = gs_tile_alloc(sb, GS_FP8_E4M3, 128, 256);
        gs_tile b = gs_tile_alloc(sb, GS_FP8_E4M3, 128, 256);
        gs_tile acc = gs_tile_alloc(ps, GS_FP32, 128, 64);
        EXPECT_EQ(gs_matmul_dr(g.kb, acc.ap, gs_tile_view2(&a, 0, 128, 0, 2, 128, 128),
                               gs_tile_view2(&b, 0, 128, 0, 2, 128, 128), 0),
                  GS_ERR_INVALID);
        EXPECT_NE(g.error().find("matmul (double row): output must be [128 x 128], is [128 x 64]"),
                  std::string::npos)
            << g.error();
    }
    ASSERT_EQ(gs_config_set(c.c, "engines.tensor.double_row=false", &c.d), GS_OK);
    {
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "in", 2, 1024);
        gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
        gs_tile a = gs_tile_alloc(sb, GS_FP8_E4M3, 128, 256);
        gs_tile b = gs_tile_alloc(sb, GS_FP8_E4M3, 128, 256);
        gs_tile acc = gs_tile_alloc(ps, GS_FP32, 128, 128);
        EXPECT_EQ(gs_matmul_dr(g.kb, acc.ap, gs_tile_view2(&a, 0, 128, 0, 2, 128, 128),
                               gs_tile_view2(&b, 0, 128, 0, 2, 128, 128), 0),
                  GS_ERR_UNSUPPORTED);
        EXPECT_NE(g.error().find("double-row matmul on this target"), std::string::npos)
            << g.error();
    }
}

// Hardware descriptor generation (v3 DGE): no per-descriptor software cost; switched off, each
// descriptor costs descriptor_overhead again.
TEST(Gen3, DescriptorGenerationInHardware)
{
    Cfg c;
    load(c, "extends: gen3\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    Prog g(c.c);
    int64_t shape[2] = {128, 2048};
    gs_error err;
    int32_t id = gs_program_add_tensor(g.p, "A", GS_BF16, GS_TENSOR_INPUT, 2, shape, &err);
    ASSERT_GE(id, 0);
    gs_tensor A{};
    A.id = id;
    A.dtype = GS_BF16;
    A.ndim = 2;
    A.shape[0] = 128;
    A.shape[1] = 2048;
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 1, 4096);
    gs_tile t = gs_tile_alloc(sb, GS_BF16, 128, 2048);
    ASSERT_EQ(gs_dma_copy(g.kb, t.ap, gs_hbm_rows(&A, 0, 128, 0, 2048), 0), GS_OK) << g.error();
    const gs_instr *in = gs_program_instr(g.p, 0);
    gs_dma_plan plan;
    gs_cost_dma_plan(c.c, in, &plan);
    EXPECT_EQ(plan.descriptor_ns, 0.0);
    ASSERT_EQ(gs_config_set(c.c, "core.dma.hw_descriptors=false", &c.d), GS_OK);
    gs_cost_dma_plan(c.c, in, &plan);
    EXPECT_EQ(plan.descriptor_ns, c.c->dma.descriptor_overhead.v);
    EXPECT_EQ(plan.descriptors, 128.0);
    EXPECT_GT(c.c->dma.descriptor_overhead.v, 0.0);
}

// ---- gen4: MX matmul and Quantize-MX ----

// quantize_mx then matmul_mx of the quantised operands: checked against the dtype module's
// OCP quantiser and a double product of the dequantised values.
TEST(MX, QuantizeThenMatmulMatchesTheReference)
{
    Cfg c;
    load(c, "extends: gen4\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    Prog g(c.c);
    const gs_caps *k = gs_kb_caps(g.kb);
    EXPECT_EQ(k->mx_k, 512u);
    EXPECT_EQ(k->mx_group, 32u);
    EXPECT_EQ(k->quantize_mx_dtypes, (1u << GS_FP8_E4M3_X4) | (1u << GS_FP8_E5M2_X4));
    const unsigned P = 128, M = 64, N = 96; // x4 columns
    gs_pool *src = gs_pool_create(g.kb, GS_MEM_SBUF, "src", 2, 4 * N * 2);
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "q", 2, N * 4);
    gs_pool *s = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 2, N);
    gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
    gs_tile xa = gs_tile_alloc(src, GS_BF16, P, 4 * M), xb = gs_tile_alloc(src, GS_BF16, P, 4 * N);
    gs_tile qa = gs_tile_alloc(q, GS_FP8_E4M3_X4, P, M),
            qb = gs_tile_alloc(q, GS_FP8_E5M2_X4, P, N);
    gs_tile sa = gs_tile_alloc(s, GS_E8M0, P, M), sbt = gs_tile_alloc(s, GS_E8M0, P, N);
    gs_tile acc = gs_tile_alloc(ps, GS_FP32, M, N);
    ASSERT_EQ(gs_quantize_mx(g.kb, qa.ap, sa.ap, xa.ap), GS_OK) << g.error();
    ASSERT_EQ(gs_quantize_mx(g.kb, qb.ap, sbt.ap, xb.ap), GS_OK) << g.error();
    ASSERT_EQ(gs_matmul_mx(g.kb, acc.ap, qa.ap, sa.ap, qb.ap, sbt.ap, 0), GS_OK) << g.error();

    gs_error err;
    gs_mem *mem = gs_mem_create(g.p, &err);
    ASSERT_NE(mem, nullptr);
    uint8_t *sbuf = gs_mem_space(mem, GS_MEM_SBUF, 0);
    size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    // bf16 sources, each 8-partition group with its own magnitude
    std::vector<float> va(P * 4 * M), vb(P * 4 * N);
    auto fill = [&](std::vector<float> &v, const gs_tile &t, unsigned cols) {
        for (unsigned p = 0; p < P; p++)
            for (unsigned i = 0; i < cols; i++) {
                float x = gs_bf16_to_f32(gs_f32_to_bf16(std::ldexp(nd(rng), (int)(p / 8) - 8)));
                v[p * cols + i] = x;
                uint16_t h = gs_f32_to_bf16(x);
                std::memcpy(sbuf + p * pb + t.ap.offset + i * 2, &h, 2);
            }
    };
    fill(va, xa, 4 * M);
    fill(vb, xb, 4 * N);
    ASSERT_EQ(gs_exec_program(mem, g.p, &err), GS_OK) << err.message;

    // the reference: quantise each group (8 partitions x 4 values) with the dtype module
    auto deq = [&](const std::vector<float> &v, unsigned cols, gs_dtype t, const gs_tile &qt,
                   const gs_tile &st, std::vector<double> &outv) {
        outv.assign((size_t)4 * P * cols / 4, 0.0);
        for (unsigned g0 = 0; g0 < P; g0 += 8)
            for (unsigned x = 0; x < cols / 4; x++) {
                float grp[32];
                uint8_t codes[32];
                for (unsigned r = 0; r < 8; r++)
                    for (unsigned j = 0; j < 4; j++)
                        grp[r * 4 + j] = v[(g0 + r) * cols + x * 4 + j];
                uint8_t sc = gs_mx_quantize_group(t, grp, 32, codes);
                // the device wrote the same codes and scale (scale row 32q + (p%32)/8)
                unsigned srow = 32 * (g0 / 32) + (g0 % 32) / 8;
                EXPECT_EQ(sbuf[srow * pb + st.ap.offset + x], sc) << g0 << " " << x;
                for (unsigned r = 0; r < 8; r++)
                    for (unsigned j = 0; j < 4; j++) {
                        uint8_t dev =
                            gs_mx_lane_code(t, sbuf + (g0 + r) * pb + qt.ap.offset, x, (int)j);
                        EXPECT_EQ(dev, codes[r * 4 + j]);
                        outv[((size_t)(g0 + r) * 4 + j) * (cols / 4) + x] =
                            (double)gs_mx_code_to_f32(t, codes[r * 4 + j]) *
                            (double)gs_e8m0_to_f32(sc);
                    }
            }
    };
    std::vector<double> A, B;
    deq(va, 4 * M, GS_FP8_E4M3_X4, qa, sa, A);
    deq(vb, 4 * N, GS_FP8_E5M2_X4, qb, sbt, B);
    const float *out = (const float *)(gs_mem_space(mem, GS_MEM_PSUM, 0) + acc.ap.offset);
    size_t ppb = gs_mem_partition_stride(mem, GS_MEM_PSUM) / 4;
    double worst = 0;
    for (unsigned m = 0; m < M; m++)
        for (unsigned n = 0; n < N; n++) {
            double ref = 0, mag = 0;
            for (unsigned kk = 0; kk < 4 * P; kk++) {
                ref += A[kk * M + m] * B[kk * N + n];
                mag += std::fabs(A[kk * M + m] * B[kk * N + n]);
            }
            worst =
                std::max(worst, std::fabs((double)out[m * ppb + n] - ref) / std::max(mag, 1e-30));
        }
    EXPECT_LT(worst, 512 * std::ldexp(1.0, -24)) << "fp32 accumulation bound";
    gs_mem_free(mem);

    // cost: 4x the bf16 work in the time of one bf16 matmul; quantize at 4 values per cycle
    const gs_instr *mm = gs_program_instr(g.p, 2);
    EXPECT_EQ(gs_cost_tensor_flops(mm), 2.0 * 4 * P * M * N);
    EXPECT_DOUBLE_EQ(cycles_of(c.c, mm), std::max(64.0, (double)N));
    const gs_instr *qi = gs_program_instr(g.p, 1);
    EXPECT_DOUBLE_EQ(cycles_of(c.c, qi), std::max(64.0, 4.0 * N / 4.0));
}

// bf16 matmul results in PSUM (v4): fp32 in the array, rounded to bf16 on write; accumulation
// adds the bf16 PSUM value in fp32 and rounds again. Switched off (or on gen3): a builder error.
TEST(Gen4, Bf16PsumOutput)
{
    Cfg c;
    load(c, "extends: gen4\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    const unsigned K = 128, M = 32, N = 64;
    Prog g(c.c);
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "in", 2, 2 * N);
    gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2 * N);
    gs_tile a = gs_tile_alloc(sb, GS_BF16, K, M), b = gs_tile_alloc(sb, GS_BF16, K, N);
    gs_tile acc = gs_tile_alloc(ps, GS_BF16, M, N);
    ASSERT_EQ(gs_matmul(g.kb, acc.ap, a.ap, b.ap, 0), GS_OK) << g.error();
    ASSERT_EQ(gs_matmul(g.kb, acc.ap, a.ap, b.ap, 1), GS_OK) << g.error();
    gs_error err;
    gs_mem *mem = gs_mem_create(g.p, &err);
    ASSERT_NE(mem, nullptr);
    uint8_t *sbuf = gs_mem_space(mem, GS_MEM_SBUF, 0);
    size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> A(K * M), B(K * N);
    for (unsigned k = 0; k < K; k++) {
        for (unsigned m = 0; m < M; m++) {
            uint16_t h = gs_f32_to_bf16(u(rng));
            A[k * M + m] = gs_bf16_to_f32(h);
            std::memcpy(sbuf + k * pb + a.ap.offset + 2 * m, &h, 2);
        }
        for (unsigned n = 0; n < N; n++) {
            uint16_t h = gs_f32_to_bf16(u(rng));
            B[k * N + n] = gs_bf16_to_f32(h);
            std::memcpy(sbuf + k * pb + b.ap.offset + 2 * n, &h, 2);
        }
    }
    ASSERT_EQ(gs_exec_instr(mem, g.p, 0, &err), GS_OK) << err.message;
    const uint8_t *psum = gs_mem_space(mem, GS_MEM_PSUM, 0) + acc.ap.offset;
    size_t ppb = gs_mem_partition_stride(mem, GS_MEM_PSUM);
    std::vector<float> first(M * N);
    int exact = 0;
    for (unsigned m = 0; m < M; m++)
        for (unsigned n = 0; n < N; n++) {
            double ref = 0;
            for (unsigned k = 0; k < K; k++)
                ref += (double)A[k * M + m] * (double)B[k * N + n];
            uint16_t h;
            std::memcpy(&h, psum + m * ppb + 2 * n, 2);
            first[m * N + n] = gs_bf16_to_f32(h);
            // one bf16 rounding of an fp32 sum: within 1 bf16 ulp (+ fp32 accumulation)
            EXPECT_LE(std::fabs((double)first[m * N + n] - ref),
                      std::ldexp(std::fabs(ref), -8) + K * std::ldexp(1.0, -24) * 128);
            exact += first[m * N + n] == gs_bf16_to_f32(gs_f32_to_bf16((float)ref));
        }
    EXPECT_GT(exact, (int)(M * N) * 9 / 10);
    ASSERT_EQ(gs_exec_instr(mem, g.p, 1, &err), GS_OK) << err.message;
    for (unsigned m = 0; m < M; m++)
        for (unsigned n = 0; n < N; n++) {
            uint16_t h;
            std::memcpy(&h, psum + m * ppb + 2 * n, 2);
            // accumulate: result + bf16 value in fp32, rounded to bf16 once more
            float twice = gs_bf16_to_f32(h);
            EXPECT_EQ(twice, gs_bf16_to_f32(gs_f32_to_bf16(2.0f * first[m * N + n])))
                << m << " " << n;
        }
    gs_mem_free(mem);

    ASSERT_EQ(gs_config_set(c.c, "engines.tensor.bf16_psum=false", &c.d), GS_OK);
    Prog off(c.c);
    gs_pool *sb2 = gs_pool_create(off.kb, GS_MEM_SBUF, "in", 2, 2 * N);
    gs_pool *ps2 = gs_pool_create(off.kb, GS_MEM_PSUM, "acc", 1, 2 * N);
    gs_tile a2 = gs_tile_alloc(sb2, GS_BF16, K, M), b2 = gs_tile_alloc(sb2, GS_BF16, K, N);
    gs_tile acc2 = gs_tile_alloc(ps2, GS_BF16, M, N);
    EXPECT_EQ(gs_matmul(off.kb, acc2.ap, a2.ap, b2.ap, 0), GS_ERR_INVALID);
    EXPECT_NE(off.error().find("bf16 PSUM output needs engines.tensor.bf16_psum"),
              std::string::npos)
        << off.error();
    Cfg g3;
    load(g3, "extends: gen3\nengines:\n  tensor:\n    bf16_psum: true\n");
    ASSERT_EQ(g3.c, nullptr);
    EXPECT_NE(g3.errors().find("bf16_psum, which family gen3 does not have"), std::string::npos)
        << g3.errors();
}

// v4 fast exponential on the vector engine: exp(x - s) with the row sum, no function table,
// at the vector engine's element rate. Switched off (op not listed, or on gen3): unsupported /
// a config error.
TEST(Gen4, VectorExponential)
{
    Cfg c;
    load(c, "extends: gen4\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    const unsigned P = 128, N = 512;
    Prog g(c.c);
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 2, 2 * N);
    gs_pool *col = gs_pool_create(g.kb, GS_MEM_SBUF, "c", 2, 4);
    gs_tile x = gs_tile_alloc(sb, GS_BF16, P, N), y = gs_tile_alloc(sb, GS_BF16, P, N);
    gs_tile mx = gs_tile_alloc(col, GS_FP32, P, 1), sum = gs_tile_alloc(col, GS_FP32, P, 1);
    gs_ap sum_ap = sum.ap;
    ASSERT_EQ(gs_exponential(g.kb, y.ap, x.ap, gs_per_partition(mx.ap), &sum_ap), GS_OK)
        << g.error();
    ASSERT_EQ(gs_activation(g.kb, y.ap, x.ap, GS_ACT_EXP, gs_imm(1.0f), gs_imm(0.0f), nullptr),
              GS_OK)
        << g.error();
    const gs_instr *e = gs_program_instr(g.p, 0), *a = gs_program_instr(g.p, 1);
    double ve = cycles_of(c.c, e);
    EXPECT_DOUBLE_EQ(ve,
                     std::max(c.c->vector.min_ii.v, N / c.c->vector.elems_per_cycle[GS_BF16].v));
    double ns_e = ve / c.c->vector.clock.v, ns_a = cycles_of(c.c, a) / c.c->scalar.clock.v;
    EXPECT_LT(2 * ns_e, ns_a) << "the vector exponential is at least 2x the scalar activation";

    gs_error err;
    gs_mem *mem = gs_mem_create(g.p, &err);
    ASSERT_NE(mem, nullptr);
    uint8_t *sbuf = gs_mem_space(mem, GS_MEM_SBUF, 0);
    size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    std::vector<float> X(P * N), M(P);
    for (unsigned p = 0; p < P; p++) {
        M[p] = u(rng);
        std::memcpy(sbuf + p * pb + mx.ap.offset, &M[p], 4);
        for (unsigned i = 0; i < N; i++) {
            uint16_t h = gs_f32_to_bf16(u(rng));
            X[p * N + i] = gs_bf16_to_f32(h);
            std::memcpy(sbuf + p * pb + x.ap.offset + 2 * i, &h, 2);
        }
    }
    ASSERT_EQ(gs_exec_instr(mem, g.p, 0, &err), GS_OK) << err.message;
    for (unsigned p = 0; p < P; p += 9) {
        double s = 0;
        for (unsigned i = 0; i < N; i++) {
            float r = std::exp(X[p * N + i] - M[p]);
            s += (double)r;
            uint16_t h;
            std::memcpy(&h, sbuf + p * pb + y.ap.offset + 2 * i, 2);
            EXPECT_NEAR(gs_bf16_to_f32(h), r, std::ldexp(std::fabs(r), -8)) << p << " " << i;
        }
        float got;
        std::memcpy(&got, sbuf + p * pb + sum.ap.offset, 4);
        EXPECT_NEAR(got, s, 1e-5 * s) << p;
    }
    gs_mem_free(mem);

    // off: a gen4 config without the op, and gen3 with it
    Cfg off;
    load(off, "extends: gen4\nops: [dma_copy, matmul, activation, tensor_copy, memset]\n");
    ASSERT_NE(off.c, nullptr) << off.errors();
    Prog h(off.c);
    gs_pool *sb2 = gs_pool_create(h.kb, GS_MEM_SBUF, "x", 2, 2 * N);
    gs_tile x2 = gs_tile_alloc(sb2, GS_BF16, P, N), y2 = gs_tile_alloc(sb2, GS_BF16, P, N);
    EXPECT_EQ(gs_exponential(h.kb, y2.ap, x2.ap, gs_imm(0.0f), nullptr), GS_ERR_UNSUPPORTED);
    EXPECT_NE(h.error().find("unsupported: exponential"), std::string::npos) << h.error();
    Cfg g3;
    load(g3, "extends: gen3\nops: [dma_copy, matmul, exponential]\n");
    ASSERT_EQ(g3.c, nullptr);
    EXPECT_NE(g3.errors().find("vector_exponential, which family gen3 does not have"),
              std::string::npos)
        << g3.errors();
}

TEST(MX, BuilderRules)
{
    Cfg c;
    load(c, "extends: gen4\n");
    ASSERT_NE(c.c, nullptr) << c.errors();
    auto setup = [](Prog &g, gs_tile *x, gs_tile *q, gs_tile *s, gs_tile *acc) {
        gs_pool *src = gs_pool_create(g.kb, GS_MEM_SBUF, "src", 2, 1024);
        gs_pool *qp = gs_pool_create(g.kb, GS_MEM_SBUF, "q", 2, 512);
        gs_pool *sp = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 2, 128);
        gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
        *x = gs_tile_alloc(src, GS_BF16, 128, 512);
        q[0] = gs_tile_alloc(qp, GS_FP8_E4M3_X4, 128, 128);
        q[1] = gs_tile_alloc(qp, GS_FP8_E4M3_X4, 128, 128);
        s[0] = gs_tile_alloc(sp, GS_E8M0, 128, 128);
        s[1] = gs_tile_alloc(sp, GS_E8M0, 128, 128);
        *acc = gs_tile_alloc(ps, GS_BF16, 128, 128);
    };
    gs_tile x, q[2], s[2], acc;
    {
        // scales must sit in the quadrant of their group
        Prog g(c.c);
        setup(g, &x, q, s, &acc);
        EXPECT_EQ(gs_matmul_mx(g.kb, acc.ap, gs_tile_view(&q[0], 0, 32, 0, 128),
                               gs_tile_view(&s[0], 32, 32, 0, 128),
                               gs_tile_view(&q[1], 0, 32, 0, 128),
                               gs_tile_view(&s[1], 0, 32, 0, 128), 0),
                  GS_ERR_INVALID);
        EXPECT_NE(g.error().find("scale layout rule"), std::string::npos) << g.error();
    }
    {
        // too few scale partitions for 128 data partitions
        Prog g(c.c);
        setup(g, &x, q, s, &acc);
        EXPECT_EQ(gs_matmul_mx(g.kb, acc.ap, q[0].ap, gs_tile_view(&s[0], 0, 16, 0, 128), q[1].ap,
                               s[1].ap, 0),
                  GS_ERR_INVALID);
        EXPECT_NE(g.error().find("scale layout rule: 128 data partitions"), std::string::npos)
            << g.error();
    }
    {
        // no fp4 output from Quantize-MX
        Prog g(c.c);
        setup(g, &x, q, s, &acc);
        gs_pool *p4 = gs_pool_create(g.kb, GS_MEM_SBUF, "q4", 1, 256);
        gs_tile q4 = gs_tile_alloc(p4, GS_FP4_E2M1_X4, 128, 128);
        EXPECT_EQ(gs_quantize_mx(g.kb, q4.ap, s[0].ap, x.ap), GS_ERR_UNSUPPORTED);
        EXPECT_NE(g.error().find("no fp4 output"), std::string::npos) << g.error();
    }
    {
        // PSUM source
        Prog g(c.c);
        setup(g, &x, q, s, &acc);
        EXPECT_EQ(gs_quantize_mx(g.kb, q[0].ap, s[0].ap, gs_tile_view(&acc, 0, 128, 0, 128)),
                  GS_ERR_INVALID);
        EXPECT_NE(g.error().find("must all be in SBUF"), std::string::npos) << g.error();
    }
    {
        // K beyond 512 values cannot happen with 128 partitions; fp32 operands are refused
        Prog g(c.c);
        setup(g, &x, q, s, &acc);
        EXPECT_EQ(gs_matmul_mx(g.kb, acc.ap, x.ap, s[0].ap, q[1].ap, s[1].ap, 0),
                  GS_ERR_UNSUPPORTED);
    }
    {
        // the moving scales (held in the out[1] slot) are a tracked read: a matmul_mx depends on
        // the DMA that wrote them, and a later write to them depends on the matmul
        Prog g(c.c);
        setup(g, &x, q, s, &acc);
        int64_t shape[2] = {128, 128};
        gs_error err;
        int32_t id = gs_program_add_tensor(g.p, "S", GS_E8M0, GS_TENSOR_INPUT, 2, shape, &err);
        ASSERT_GE(id, 0);
        gs_tensor S{};
        S.id = id;
        S.dtype = GS_E8M0;
        S.ndim = 2;
        S.shape[0] = 128;
        S.shape[1] = 128;
        ASSERT_EQ(gs_dma_copy(g.kb, s[1].ap, gs_hbm_rows(&S, 0, 128, 0, 128), 0), GS_OK)
            << g.error();
        size_t dma = gs_program_count(g.p) - 1;
        ASSERT_EQ(gs_matmul_mx(g.kb, gs_tile_view(&acc, 0, 128, 0, 128), q[0].ap, s[0].ap, q[1].ap,
                               s[1].ap, 0),
                  GS_OK)
            << g.error();
        size_t mm = gs_program_count(g.p) - 1;
        const gs_instr *in = gs_program_instr(g.p, mm);
        EXPECT_NE(std::find(in->deps, in->deps + in->n_deps, (uint32_t)dma), in->deps + in->n_deps);
        ASSERT_EQ(gs_dma_copy(g.kb, s[1].ap, gs_hbm_rows(&S, 0, 128, 0, 128), 1), GS_OK)
            << g.error();
        const gs_instr *w = gs_program_instr(g.p, gs_program_count(g.p) - 1);
        EXPECT_NE(std::find(w->deps, w->deps + w->n_deps, (uint32_t)mm), w->deps + w->n_deps);
    }
    // switched off: the same calls on gen3 (no MX) are unsupported
    Cfg g3;
    load(g3, "extends: gen3\n");
    ASSERT_NE(g3.c, nullptr) << g3.errors();
    Prog g(g3.c);
    EXPECT_EQ(gs_kb_caps(g.kb)->mx_k, 0u);
    gs_pool *sp = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_pool *pp = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
    gs_tile t = gs_tile_alloc(sp, GS_BF16, 128, 128), a = gs_tile_alloc(pp, GS_FP32, 128, 128);
    EXPECT_EQ(gs_matmul_mx(g.kb, a.ap, t.ap, t.ap, t.ap, t.ap, 0), GS_ERR_UNSUPPORTED);
    EXPECT_NE(g.error().find("matmul_mx on this target (family gen3)"), std::string::npos)
        << g.error();
}

} // namespace
