// test_scan.cpp - the vector engine's tensor_tensor_scan (nki.isa.tensor_tensor_scan): values
// against a hand-computed scan (ragged sizes, immediate and per-partition initial), a cost that
// grows with the free size at one element per cycle per lane, and the builder's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gs/builder.h"
#include "gs/cost.h"
#include "gs/exec.h"

namespace
{

const std::string kConfigs = std::string(GS_SOURCE_DIR) + "/configs";

struct Cfg {
    gs_config *c = nullptr;
    gs_diags d;
    explicit Cfg(const char *gen)
    {
        gs_diags_init(&d);
        std::string y = std::string("extends: ") + gen + "\n";
        c = gs_config_load_string(y.data(), y.size(), "t.yaml", kConfigs.c_str(), &d);
    }
    ~Cfg()
    {
        gs_config_free(c);
        gs_diags_free(&d);
    }
    Cfg(const Cfg &) = delete;
    Cfg &operator=(const Cfg &) = delete;
};

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
    Prog(const Prog &) = delete;
    Prog &operator=(const Prog &) = delete;
    std::string error() const { return gs_kb_error(kb)->message; }
};

double cycles_of(const gs_config *c, const gs_instr *in)
{
    gs_cost_state st;
    gs_cost_state_init(&st);
    return gs_cost_compute_cycles(c, in, &st);
}

void put(uint8_t *base, size_t pb, const gs_ap &ap, unsigned p, unsigned i, float v)
{
    std::memcpy(base + p * pb + ap.offset + 4 * i, &v, 4);
}

float get(const uint8_t *base, size_t pb, const gs_ap &ap, unsigned p, unsigned i)
{
    float v;
    std::memcpy(&v, base + p * pb + ap.offset + 4 * i, 4);
    return v;
}

// The tiny example by hand: h = 2 h + 1 from h = 1 gives 3, 7, 15, 31.
TEST(Scan, HandExample)
{
    Cfg c("gen2");
    ASSERT_NE(c.c, nullptr);
    Prog g(c.c);
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 3, 64);
    gs_tile a = gs_tile_alloc(sb, GS_FP32, 1, 4), b = gs_tile_alloc(sb, GS_FP32, 1, 4),
            o = gs_tile_alloc(sb, GS_FP32, 1, 4);
    ASSERT_EQ(gs_tensor_tensor_scan(g.kb, o.ap, a.ap, b.ap, gs_imm(1.0f), GS_ALU_MUL, GS_ALU_ADD),
              GS_OK)
        << g.error();
    gs_error err;
    gs_mem *mem = gs_mem_create(g.p, &err);
    ASSERT_NE(mem, nullptr);
    uint8_t *s = gs_mem_space(mem, GS_MEM_SBUF, 0);
    size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    for (unsigned i = 0; i < 4; i++) {
        put(s, pb, a.ap, 0, i, 2.0f);
        put(s, pb, b.ap, 0, i, 1.0f);
    }
    ASSERT_EQ(gs_exec_instr(mem, g.p, 0, &err), GS_OK) << err.message;
    const float want[4] = {3.0f, 7.0f, 15.0f, 31.0f};
    for (unsigned i = 0; i < 4; i++)
        EXPECT_EQ(get(s, pb, o.ap, 0, i), want[i]) << i;
    gs_mem_free(mem);
}

// Ragged partitions and a prime free size, both kinds of initial, two op pairs; fp32 in and out,
// so the result is the same fp32 chain computed here.
TEST(Scan, RaggedValues)
{
    Cfg c("gen3");
    ASSERT_NE(c.c, nullptr);
    const unsigned P = 7, N = 37;
    struct Case {
        gs_alu op0, op1;
        bool tile_initial;
    } cases[] = {{GS_ALU_MUL, GS_ALU_ADD, false},
                 {GS_ALU_MUL, GS_ALU_ADD, true},
                 {GS_ALU_ADD, GS_ALU_MAX, true},
                 {GS_ALU_SUB, GS_ALU_MUL, false}};
    for (const Case &k : cases) {
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 3, 4 * N);
        gs_pool *col = gs_pool_create(g.kb, GS_MEM_SBUF, "c", 1, 4);
        gs_tile a = gs_tile_alloc(sb, GS_FP32, P, N), b = gs_tile_alloc(sb, GS_FP32, P, N),
                o = gs_tile_alloc(sb, GS_FP32, P, N), init = gs_tile_alloc(col, GS_FP32, P, 1);
        gs_operand iv = k.tile_initial ? gs_per_partition(init.ap) : gs_imm(0.25f);
        ASSERT_EQ(gs_tensor_tensor_scan(g.kb, o.ap, a.ap, b.ap, iv, k.op0, k.op1), GS_OK)
            << g.error();
        gs_error err;
        gs_mem *mem = gs_mem_create(g.p, &err);
        ASSERT_NE(mem, nullptr);
        uint8_t *s = gs_mem_space(mem, GS_MEM_SBUF, 0);
        size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> A(P * N), B(P * N), I(P);
        for (unsigned p = 0; p < P; p++) {
            I[p] = u(rng);
            put(s, pb, init.ap, p, 0, I[p]);
            for (unsigned i = 0; i < N; i++) {
                A[p * N + i] = u(rng);
                B[p * N + i] = u(rng);
                put(s, pb, a.ap, p, i, A[p * N + i]);
                put(s, pb, b.ap, p, i, B[p * N + i]);
            }
        }
        ASSERT_EQ(gs_exec_instr(mem, g.p, 0, &err), GS_OK) << err.message;
        for (unsigned p = 0; p < P; p++) {
            float h = k.tile_initial ? I[p] : 0.25f;
            for (unsigned i = 0; i < N; i++) {
                float t = k.op0 == GS_ALU_MUL   ? A[p * N + i] * h
                          : k.op0 == GS_ALU_ADD ? A[p * N + i] + h
                                                : A[p * N + i] - h;
                h = k.op1 == GS_ALU_ADD   ? t + B[p * N + i]
                    : k.op1 == GS_ALU_MAX ? std::fmax(t, B[p * N + i])
                                          : t * B[p * N + i];
                ASSERT_EQ(get(s, pb, o.ap, p, i), h) << p << " " << i;
            }
        }
        gs_mem_free(mem);
    }
}

// The cost grows linearly with the free size, at one element per cycle per lane at most (a bf16
// scan is no faster than an fp32 one even where bf16 streams faster), and never below a
// tensor_tensor of the same operands.
TEST(Scan, CostScalesWithFreeSize)
{
    for (const char *gen : {"gen2", "gen3", "gen4"}) {
        Cfg c(gen);
        ASSERT_NE(c.c, nullptr) << gen;
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 6, 2 * 8192);
        double cyc[3];
        const unsigned sizes[3] = {1024, 2048, 4096};
        for (int k = 0; k < 3; k++) {
            gs_tile a = gs_tile_alloc(sb, GS_FP32, 128, sizes[k]),
                    b = gs_tile_alloc(sb, GS_FP32, 128, sizes[k]);
            ASSERT_EQ(
                gs_tensor_tensor_scan(g.kb, a.ap, a.ap, b.ap, gs_imm(0.0f), GS_ALU_MUL, GS_ALU_ADD),
                GS_OK)
                << g.error();
            cyc[k] = cycles_of(c.c, gs_program_instr(g.p, gs_program_count(g.p) - 1));
        }
        EXPECT_GT(cyc[1], cyc[0]) << gen;
        EXPECT_NEAR(cyc[2] - cyc[1], 2.0 * (cyc[1] - cyc[0]), 1e-6 * cyc[2]) << gen;
        // at least N cycles for N elements per lane
        EXPECT_GE(cyc[1] - cyc[0], 1024.0) << gen;

        gs_tile x = gs_tile_alloc(sb, GS_BF16, 128, 2048),
                y = gs_tile_alloc(sb, GS_BF16, 128, 2048);
        ASSERT_EQ(
            gs_tensor_tensor_scan(g.kb, x.ap, x.ap, y.ap, gs_imm(0.0f), GS_ALU_MUL, GS_ALU_ADD),
            GS_OK);
        double bf = cycles_of(c.c, gs_program_instr(g.p, gs_program_count(g.p) - 1));
        ASSERT_EQ(gs_tensor_tensor(g.kb, x.ap, x.ap, y.ap, GS_ALU_MUL), GS_OK);
        double tt = cycles_of(c.c, gs_program_instr(g.p, gs_program_count(g.p) - 1));
        EXPECT_GE(bf, tt) << gen;
        EXPECT_GE(bf, 2048.0) << gen;
    }
}

TEST(Scan, BuilderErrors)
{
    Cfg c("gen3");
    ASSERT_NE(c.c, nullptr);
    struct Bad {
        int which;
        const char *msg;
    } bads[] = {{0, "tensor_tensor_scan: shapes differ"},
                {1, "tensor_tensor_scan: data0 and data1 cannot both be in PSUM"},
                {2, "tensor_tensor_scan: per-partition initial must be [64 x 1]"},
                {3, "tensor_tensor_scan: bad op"}};
    for (const Bad &b : bads) {
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 4, 4 * 128);
        gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "p", 2, 4 * 128);
        gs_tile x = gs_tile_alloc(sb, GS_FP32, 64, 100), y = gs_tile_alloc(sb, GS_FP32, 64, 100);
        gs_tile z = gs_tile_alloc(sb, GS_FP32, 64, 99), w = gs_tile_alloc(sb, GS_FP32, 32, 1);
        gs_tile p0 = gs_tile_alloc(ps, GS_FP32, 64, 100), p1 = gs_tile_alloc(ps, GS_FP32, 64, 100);
        gs_status st = GS_OK;
        switch (b.which) {
        case 0:
            st =
                gs_tensor_tensor_scan(g.kb, y.ap, x.ap, z.ap, gs_imm(0.0f), GS_ALU_MUL, GS_ALU_ADD);
            break;
        case 1:
            st = gs_tensor_tensor_scan(g.kb, y.ap, p0.ap, p1.ap, gs_imm(0.0f), GS_ALU_MUL,
                                       GS_ALU_ADD);
            break;
        case 2:
            st = gs_tensor_tensor_scan(g.kb, y.ap, x.ap, y.ap, gs_per_partition(w.ap), GS_ALU_MUL,
                                       GS_ALU_ADD);
            break;
        default:
            st = gs_tensor_tensor_scan(g.kb, y.ap, x.ap, y.ap, gs_imm(0.0f), GS_ALU_COUNT,
                                       GS_ALU_ADD);
            break;
        }
        EXPECT_EQ(st, GS_ERR_INVALID) << b.msg;
        EXPECT_NE(g.error().find(b.msg), std::string::npos) << g.error();
    }
    // one operand in PSUM is legal, and so is a PSUM destination
    Prog g(c.c);
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 2, 4 * 128);
    gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "p", 2, 4 * 128);
    gs_tile x = gs_tile_alloc(sb, GS_FP32, 64, 100), p0 = gs_tile_alloc(ps, GS_FP32, 64, 100);
    EXPECT_EQ(gs_tensor_tensor_scan(g.kb, p0.ap, x.ap, p0.ap, gs_imm(0.0f), GS_ALU_MUL, GS_ALU_ADD),
              GS_OK)
        << g.error();

    // gen1 (NeuronCore-v1: no NKI, the op is not in its list): a clean unsupported error
    Cfg c1("gen1");
    ASSERT_NE(c1.c, nullptr);
    Prog h(c1.c);
    gs_pool *sb1 = gs_pool_create(h.kb, GS_MEM_SBUF, "s", 2, 4 * 128);
    gs_tile a1 = gs_tile_alloc(sb1, GS_FP32, 64, 100), b1 = gs_tile_alloc(sb1, GS_FP32, 64, 100);
    EXPECT_EQ(
        gs_tensor_tensor_scan(h.kb, a1.ap, a1.ap, b1.ap, gs_imm(0.0f), GS_ALU_MUL, GS_ALU_ADD),
        GS_ERR_UNSUPPORTED);
    EXPECT_NE(h.error().find("unsupported: tensor_tensor_scan on this target"), std::string::npos)
        << h.error();
}

} // namespace
