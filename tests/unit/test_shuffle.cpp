// test_shuffle.cpp - the vector engine's stream_shuffle (nki.isa.nc_stream_shuffle): the mask's
// packing into the instruction's integer immediates, values moved within quadrants (a broadcast
// from one partition, a permutation in place with partitions left unchanged), the disassembly,
// a cost like a copy's, and the builder's errors.
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

// Every entry value at every position survives the packing, the ones straddling two words
// (positions 10, 21) included, and neighbours stay apart.
TEST(StreamShuffle, MaskPacking)
{
    for (unsigned v = 0; v <= GS_SHUFFLE_KEEP; v++) {
        int64_t iimm[3] = {0, 0, 0};
        for (unsigned i = 0; i < GS_SHUFFLE_ENTRIES; i++)
            gs_shuffle_set(iimm, i, (v + i) % (GS_SHUFFLE_KEEP + 1));
        for (unsigned i = 0; i < GS_SHUFFLE_ENTRIES; i++)
            ASSERT_EQ(gs_shuffle_entry(iimm, i), (v + i) % (GS_SHUFFLE_KEEP + 1)) << v << " " << i;
    }
}

// 64 partitions of 3: a broadcast of source partition 0 to 32 partitions, then in place each
// quadrant reversed on even partitions, odd ones (255) unchanged.
TEST(StreamShuffle, Values)
{
    Cfg c("gen3");
    ASSERT_NE(c.c, nullptr);
    Prog g(c.c);
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 3, 64);
    gs_tile x = gs_tile_alloc(sb, GS_FP32, 64, 3), b = gs_tile_alloc(sb, GS_FP32, 32, 3);
    int zero[32] = {0}, rev[32];
    for (int i = 0; i < 32; i++)
        rev[i] = i % 2 ? 255 : 31 - i;
    gs_ap row0 = x.ap;
    row0.part_count = 1;
    ASSERT_EQ(gs_stream_shuffle(g.kb, b.ap, row0, zero), GS_OK) << g.error();
    ASSERT_EQ(gs_stream_shuffle(g.kb, x.ap, x.ap, rev), GS_OK) << g.error();
    gs_error err;
    gs_mem *mem = gs_mem_create(g.p, &err);
    ASSERT_NE(mem, nullptr);
    uint8_t *s = gs_mem_space(mem, GS_MEM_SBUF, 0);
    size_t pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    for (unsigned p = 0; p < 64; p++)
        for (unsigned i = 0; i < 3; i++)
            put(s, pb, x.ap, p, i, (float)(100 * p + i));
    ASSERT_EQ(gs_exec_instr(mem, g.p, 0, &err), GS_OK) << err.message;
    ASSERT_EQ(gs_exec_instr(mem, g.p, 1, &err), GS_OK) << err.message;
    for (unsigned p = 0; p < 32; p++)
        for (unsigned i = 0; i < 3; i++)
            EXPECT_EQ(get(s, pb, b.ap, p, i), (float)i) << p;
    for (unsigned p = 0; p < 64; p++) {
        unsigned from = p % 2 ? p : 32 * (p / 32) + 31 - p % 32;
        for (unsigned i = 0; i < 3; i++)
            EXPECT_EQ(get(s, pb, x.ap, p, i), (float)(100 * from + i)) << p;
    }
    gs_mem_free(mem);
    char buf[512];
    gs_instr_format(g.p, 1, buf, sizeof buf);
    EXPECT_NE(std::string(buf).find(" mask=31,-,29,-,27,"), std::string::npos) << buf;
    // data movement on the vector engine: no flops, a cost that grows with the free size
    EXPECT_EQ(gs_cost_flops(gs_program_instr(g.p, 1)), 0.0);
    EXPECT_EQ(gs_program_instr(g.p, 1)->engine, GS_ENG_VECTOR);
}

TEST(StreamShuffle, CostGrowsWithTheFreeSize)
{
    Cfg c("gen2");
    ASSERT_NE(c.c, nullptr);
    Prog g(c.c);
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 4, 16384);
    int m[32] = {0};
    gs_tile a = gs_tile_alloc(sb, GS_BF16, 32, 256), b = gs_tile_alloc(sb, GS_BF16, 32, 256),
            c2 = gs_tile_alloc(sb, GS_BF16, 32, 4096), d = gs_tile_alloc(sb, GS_BF16, 32, 4096);
    ASSERT_EQ(gs_stream_shuffle(g.kb, b.ap, a.ap, m), GS_OK) << g.error();
    ASSERT_EQ(gs_stream_shuffle(g.kb, d.ap, c2.ap, m), GS_OK) << g.error();
    gs_cost_state st;
    gs_cost_state_init(&st);
    double small = gs_cost_compute_cycles(c.c, gs_program_instr(g.p, 0), &st);
    double big = gs_cost_compute_cycles(c.c, gs_program_instr(g.p, 1), &st);
    EXPECT_GT(small, 0.0);
    EXPECT_GT(big, 8.0 * small);
}

TEST(StreamShuffle, BuilderErrors)
{
    Cfg c("gen3");
    ASSERT_NE(c.c, nullptr);
    struct {
        int which;
        const char *msg;
    } bads[] = {{0, "nc_stream_shuffle: dst partition 0 reads src partition 2; src has 2"},
                {1, "nc_stream_shuffle: dst (bf16) and src (fp32) dtypes differ"},
                {2, "nc_stream_shuffle: dst has 16 elements per partition, src 32"},
                {3, "nc_stream_shuffle: mask entry 5 is 32 (0..31, or 255: unchanged)"}};
    for (const auto &b : bads) {
        Prog g(c.c);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 4, 256);
        gs_tile x = gs_tile_alloc(sb, GS_FP32, 32, 32), h = gs_tile_alloc(sb, GS_BF16, 32, 32),
                y = gs_tile_alloc(sb, GS_FP32, 32, 16), o = gs_tile_alloc(sb, GS_FP32, 32, 32);
        int m[32] = {0};
        gs_ap two = x.ap;
        two.part_count = 2;
        gs_status st = GS_OK;
        if (b.which == 0) {
            for (int &e : m)
                e = 2;
            st = gs_stream_shuffle(g.kb, o.ap, two, m);
        } else if (b.which == 1) {
            st = gs_stream_shuffle(g.kb, h.ap, x.ap, m);
        } else if (b.which == 2) {
            st = gs_stream_shuffle(g.kb, y.ap, x.ap, m);
        } else {
            m[5] = 32;
            st = gs_stream_shuffle(g.kb, o.ap, x.ap, m);
        }
        EXPECT_NE(st, GS_OK) << b.msg;
        EXPECT_NE(g.error().find(b.msg), std::string::npos) << g.error();
    }
}

} // namespace
