// test_stt.cpp - nki.isa.scalar_tensor_tensor on the vector engine ((data op0 s) op1 operand1, a
// tensor_tensor with a scalar step): values by hand with an immediate and a per-partition
// operand0 and reversed operands, the cost of a tensor_tensor of the same shape, builder errors.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

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

// Two partitions of three: x = (1, 2, 3) + 10 p, operand1 = (100, 200, 300), s = p + 2.
//   plain:    (x - s) * y;   reversed: y - (s / x).
TEST(ScalarTensorTensor, HandValues)
{
    Cfg c("gen2");
    ASSERT_NE(c.c, nullptr);
    Prog g(c.c);
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 5, 64);
    gs_tile x = gs_tile_alloc(sb, GS_FP32, 2, 3), y = gs_tile_alloc(sb, GS_FP32, 2, 3),
            s = gs_tile_alloc(sb, GS_FP32, 2, 1), o1 = gs_tile_alloc(sb, GS_FP32, 2, 3),
            o2 = gs_tile_alloc(sb, GS_FP32, 2, 3);
    ASSERT_EQ(gs_scalar_tensor_tensor_at(g.kb, __FILE__, __LINE__, o1.ap, x.ap, GS_ALU_SUB,
                                         gs_per_partition(s.ap), 0, GS_ALU_MUL, y.ap, 0),
              GS_OK)
        << g.error();
    ASSERT_EQ(gs_scalar_tensor_tensor_at(g.kb, __FILE__, __LINE__, o2.ap, x.ap, GS_ALU_DIV,
                                         gs_imm(6.0f), 1, GS_ALU_SUB, y.ap, 1),
              GS_OK)
        << g.error();
    gs_error err;
    gs_mem *mem = gs_mem_create(g.p, &err);
    ASSERT_NE(mem, nullptr);
    uint8_t *sp = gs_mem_space(mem, GS_MEM_SBUF, 0);
    size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    for (unsigned p = 0; p < 2; p++) {
        put(sp, pb, s.ap, p, 0, (float)p + 2.0f);
        for (unsigned i = 0; i < 3; i++) {
            put(sp, pb, x.ap, p, i, (float)(i + 1 + 10 * p));
            put(sp, pb, y.ap, p, i, (float)(100 * (i + 1)));
        }
    }
    ASSERT_EQ(gs_exec_instr(mem, g.p, 0, &err), GS_OK) << err.message;
    ASSERT_EQ(gs_exec_instr(mem, g.p, 1, &err), GS_OK) << err.message;
    for (unsigned p = 0; p < 2; p++)
        for (unsigned i = 0; i < 3; i++) {
            float xv = (float)(i + 1 + 10 * p), yv = (float)(100 * (i + 1));
            EXPECT_EQ(get(sp, pb, o1.ap, p, i), (xv - ((float)p + 2.0f)) * yv) << p << "," << i;
            EXPECT_EQ(get(sp, pb, o2.ap, p, i), yv - 6.0f / xv) << p << "," << i;
        }
    gs_mem_free(mem);
    char buf[512];
    gs_instr_format(g.p, 1, buf, sizeof buf);
    EXPECT_NE(std::string(buf).find("op0=div s0=6 op1=sub reverse0 reverse1"), std::string::npos)
        << buf;
}

// The ISA page: about a tensor_tensor's latency; the model costs it as one of the same shape
// (and the slow-op factor when either op is a divide).
TEST(ScalarTensorTensor, CostsAsTensorTensor)
{
    for (const char *gen : {"gen2", "gen3", "gen4"}) {
        Cfg c(gen);
        ASSERT_NE(c.c, nullptr);
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 4, 8192);
        gs_tile x = gs_tile_alloc(sb, GS_BF16, 128, 1024),
                y = gs_tile_alloc(sb, GS_BF16, 128, 1024), s = gs_tile_alloc(sb, GS_FP32, 128, 1),
                o = gs_tile_alloc(sb, GS_BF16, 128, 1024);
        ASSERT_EQ(gs_tensor_tensor(g.kb, o.ap, x.ap, y.ap, GS_ALU_MUL), GS_OK) << g.error();
        ASSERT_EQ(gs_scalar_tensor_tensor(g.kb, o.ap, x.ap, GS_ALU_MUL, gs_per_partition(s.ap),
                                          GS_ALU_MUL, y.ap),
                  GS_OK)
            << g.error();
        ASSERT_EQ(
            gs_scalar_tensor_tensor(g.kb, o.ap, x.ap, GS_ALU_DIV, gs_imm(2.0f), GS_ALU_MUL, y.ap),
            GS_OK)
            << g.error();
        gs_cost_state st;
        gs_cost_state_init(&st);
        double tt = gs_cost_compute_cycles(c.c, gs_program_instr(g.p, 0), &st);
        double stt = gs_cost_compute_cycles(c.c, gs_program_instr(g.p, 1), &st);
        double slow = gs_cost_compute_cycles(c.c, gs_program_instr(g.p, 2), &st);
        EXPECT_GT(tt, 0.0) << gen;
        EXPECT_EQ(stt, tt) << gen;
        EXPECT_GT(slow, stt) << gen;
    }
}

TEST(ScalarTensorTensor, BuilderErrors)
{
    Cfg c("gen3");
    ASSERT_NE(c.c, nullptr);
    struct {
        int which;
        const char *msg;
    } bads[] = {{0, "scalar_tensor_tensor: data and operand1 cannot both be in PSUM"},
                {1, "scalar_tensor_tensor: shapes differ"},
                {2, "scalar_tensor_tensor: per-partition operand0 must be [64 x 1]"},
                {3, "scalar_tensor_tensor: bad op"}};
    for (const auto &b : bads) {
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 4, 256);
        gs_pool *ps = gs_pool_create(g.kb, GS_MEM_PSUM, "p", 2, 256);
        gs_tile x = gs_tile_alloc(sb, GS_FP32, 64, 32), y = gs_tile_alloc(sb, GS_FP32, 64, 16),
                w = gs_tile_alloc(sb, GS_FP32, 64, 2), o = gs_tile_alloc(sb, GS_FP32, 64, 32);
        gs_tile p0 = gs_tile_alloc(ps, GS_FP32, 64, 32), p1 = gs_tile_alloc(ps, GS_FP32, 64, 32);
        gs_status st = GS_OK;
        if (b.which == 0)
            st = gs_scalar_tensor_tensor(g.kb, o.ap, p0.ap, GS_ALU_ADD, gs_imm(1.0f), GS_ALU_ADD,
                                         p1.ap);
        else if (b.which == 1)
            st = gs_scalar_tensor_tensor(g.kb, o.ap, x.ap, GS_ALU_ADD, gs_imm(1.0f), GS_ALU_ADD,
                                         y.ap);
        else if (b.which == 2)
            st = gs_scalar_tensor_tensor(g.kb, o.ap, x.ap, GS_ALU_ADD, gs_per_partition(w.ap),
                                         GS_ALU_ADD, o.ap);
        else
            st = gs_scalar_tensor_tensor(g.kb, o.ap, x.ap, GS_ALU_COUNT, gs_imm(1.0f), GS_ALU_ADD,
                                         o.ap);
        EXPECT_NE(st, GS_OK) << b.msg;
        EXPECT_NE(g.error().find(b.msg), std::string::npos) << g.error();
    }
}

} // namespace
