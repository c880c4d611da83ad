// The top-k selection instructions max8, find_index8 and match_replace8 (hwmodels/src/ops_topk.c):
// functional results against hand-computed ones (ties, negative values, NaN, a ragged prime free
// size, values not found), builder errors for bad operands (fewer than 8 or more than 16384
// elements, wrong shapes and dtypes, HBM operands, a target without the ops), and the cost: one
// pass over the data at the fp32 rate, linear in F.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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
    explicit Cfg(const std::string &yaml)
    {
        gs_diags_init(&d);
        c = gs_config_load_string(yaml.data(), yaml.size(), "t.yaml", kConfigs.c_str(), &d);
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

const float kNaN = std::nanf("");

// fp32 [P x F] tile contents in the executor's SBUF image
struct Sbuf {
    gs_mem *mem;
    uint8_t *base;
    size_t pb;
    explicit Sbuf(const gs_program *p)
    {
        gs_error err;
        mem = gs_mem_create(p, &err);
        base = gs_mem_space(mem, GS_MEM_SBUF, 0);
        pb = gs_mem_partition_stride(mem, GS_MEM_SBUF);
    }
    ~Sbuf() { gs_mem_free(mem); }
    Sbuf(const Sbuf &) = delete;
    Sbuf &operator=(const Sbuf &) = delete;
    void put(const gs_tile &t, unsigned p, const std::vector<float> &v)
    {
        std::memcpy(base + p * pb + t.ap.offset, v.data(), 4 * v.size());
    }
    std::vector<float> f32(const gs_tile &t, unsigned p, size_t n)
    {
        std::vector<float> v(n);
        std::memcpy(v.data(), base + p * pb + t.ap.offset, 4 * n);
        return v;
    }
    std::vector<int32_t> i32(const gs_tile &t, unsigned p)
    {
        std::vector<int32_t> v(8);
        std::memcpy(v.data(), base + p * pb + t.ap.offset, 32);
        return v;
    }
};

void expect_values(const std::vector<float> &got, const std::vector<float> &want, int row)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++) {
        if (std::isnan(want[i]))
            EXPECT_TRUE(std::isnan(got[i])) << "row " << row << " slot " << i;
        else
            EXPECT_EQ(got[i], want[i]) << "row " << row << " slot " << i;
    }
}

// Rows of a ragged prime length (13): ties, negatives, NaN; and an 8-element row with only two
// numbers. Expected results worked by hand from the rules of ops_topk.c.
TEST(TopK8, SemanticsOnTiesNegativesAndNaN)
{
    Cfg c("extends: gen3\n");
    ASSERT_NE(c.c, nullptr);
    Prog g(c.c);
    const unsigned P = 4, F = 13;
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "t", 8, 4 * F);
    gs_tile x = gs_tile_alloc(sb, GS_FP32, P, F), v = gs_tile_alloc(sb, GS_FP32, P, 8);
    gs_tile fi = gs_tile_alloc(sb, GS_INT32, P, 8), y = gs_tile_alloc(sb, GS_FP32, P, F);
    gs_tile mi = gs_tile_alloc(sb, GS_INT32, P, 8), nf = gs_tile_alloc(sb, GS_FP32, P, 8);
    gs_tile ni = gs_tile_alloc(sb, GS_INT32, P, 8), z = gs_tile_alloc(sb, GS_FP32, P, F);
    ASSERT_EQ(gs_max8(g.kb, v.ap, x.ap), GS_OK) << g.error();
    ASSERT_EQ(gs_find_index8(g.kb, fi.ap, x.ap, v.ap), GS_OK) << g.error();
    ASSERT_EQ(gs_match_replace8(g.kb, y.ap, &mi.ap, x.ap, v.ap, -100.0f), GS_OK) << g.error();
    // vals with a value the row lacks (99): index -1, nothing replaced for it
    ASSERT_EQ(gs_find_index8(g.kb, ni.ap, x.ap, nf.ap), GS_OK) << g.error();
    ASSERT_EQ(gs_match_replace8(g.kb, z.ap, nullptr, x.ap, nf.ap, -100.0f), GS_OK) << g.error();

    Sbuf m(g.p);
    const std::vector<std::vector<float>> rows = {
        {-1, 5, 3, 5, -2, 7, 0, 5, -3, 2, 7, 1, -4},
        {-5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17},
        {kNaN, 1, 2, kNaN, 3, 4, 5, 6, 7, 8, -1, kNaN, 0},
        {kNaN, 1, kNaN, -0.0f, 2, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN},
    };
    for (unsigned p = 0; p < P; p++) {
        m.put(x, p, rows[p]);
        m.put(nf, p, {rows[p][1], 99, rows[p][4], 0, 0, 0, 0, 0});
    }
    gs_error err;
    ASSERT_EQ(gs_exec_program(m.mem, g.p, &err), GS_OK) << err.message;

    // max8: descending, equal values each fill a slot, NaN below every number
    expect_values(m.f32(v, 0, 8), {7, 7, 5, 5, 5, 3, 2, 1}, 0);
    expect_values(m.f32(v, 1, 8), {-5, -6, -7, -8, -9, -10, -11, -12}, 1);
    expect_values(m.f32(v, 2, 8), {8, 7, 6, 5, 4, 3, 2, 1}, 2);
    expect_values(m.f32(v, 3, 8), {2, 1, -0.0f, kNaN, kNaN, kNaN, kNaN, kNaN}, 3);
    // find_index8: duplicates pair with ascending positions
    EXPECT_EQ(m.i32(fi, 0), (std::vector<int32_t>{5, 10, 1, 3, 7, 2, 9, 11}));
    EXPECT_EQ(m.i32(fi, 1), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(m.i32(fi, 2), (std::vector<int32_t>{9, 8, 7, 6, 5, 4, 2, 1}));
    // NaN vals match NaN elements, one each, in ascending order
    EXPECT_EQ(m.i32(fi, 3), (std::vector<int32_t>{4, 1, 3, 0, 2, 5, 6, 7}));
    // match_replace8: vals matched 7 down to 0, duplicates pair with descending positions
    EXPECT_EQ(m.i32(mi, 0), (std::vector<int32_t>{10, 5, 7, 3, 1, 2, 9, 11}));
    EXPECT_EQ(m.i32(mi, 3), (std::vector<int32_t>{4, 1, 3, 7, 6, 5, 2, 0}));
    expect_values(m.f32(y, 0, F),
                  {-1, -100, -100, -100, -2, -100, 0, -100, -3, -100, -100, -100, -4}, 0);
    expect_values(m.f32(y, 1, F),
                  {-100, -100, -100, -100, -100, -100, -100, -100, -13, -14, -15, -16, -17}, 1);
    // not found: -1 and no replacement (row 0: 5 at 1, -2 at 4, then 0 at 6 for the five 0s,
    // which match once only: a position is matched at most once)
    EXPECT_EQ(m.i32(ni, 0), (std::vector<int32_t>{1, -1, 4, 6, -1, -1, -1, -1}));
    expect_values(m.f32(z, 0, F), {-1, -100, 3, 5, -100, 7, -100, 5, -3, 2, 7, 1, -4}, 0);
}

// In place (dst = data), as a top-k round does it; the replaced row feeds the next max8.
TEST(TopK8, InPlaceRoundsGiveTheNextEight)
{
    Cfg c("extends: gen2\n");
    ASSERT_NE(c.c, nullptr);
    Prog g(c.c);
    const unsigned F = 17;
    gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "t", 4, 4 * F);
    gs_tile x = gs_tile_alloc(sb, GS_FP32, 1, F), a = gs_tile_alloc(sb, GS_FP32, 1, 8);
    gs_tile b = gs_tile_alloc(sb, GS_FP32, 1, 8);
    ASSERT_EQ(gs_max8(g.kb, a.ap, x.ap), GS_OK);
    ASSERT_EQ(gs_match_replace8(g.kb, x.ap, nullptr, x.ap, a.ap, -INFINITY), GS_OK);
    ASSERT_EQ(gs_max8(g.kb, b.ap, x.ap), GS_OK) << g.error();
    Sbuf m(g.p);
    std::vector<float> row(F);
    for (unsigned i = 0; i < F; i++)
        row[i] = (float)((i * 7) % F) - 8.0f; // a permutation of -8..8
    m.put(x, 0, row);
    gs_error err;
    ASSERT_EQ(gs_exec_program(m.mem, g.p, &err), GS_OK) << err.message;
    expect_values(m.f32(a, 0, 8), {8, 7, 6, 5, 4, 3, 2, 1}, 0);
    expect_values(m.f32(b, 0, 8), {0, -1, -2, -3, -4, -5, -6, -7}, 0);
}

// Bad operands are builder errors naming the problem; a target without the ops refuses them.
TEST(TopK8, BadOperandsAreClearErrors)
{
    Cfg c("extends: gen3\n");
    ASSERT_NE(c.c, nullptr);
    struct Case {
        const char *want;
        int which;
    } cases[] = {
        {"max8: src has 7 elements per partition; the instruction reads 8..16384", 0},
        {"max8: src has 16385 elements per partition", 1},
        {"max8: dst must be [128 x 8], got [128 x 9]", 2},
        {"max8: dst must be fp32, bf16, fp16, fp8_e4m3 or fp8_e5m2, got int32", 3},
        {"find_index8: dst holds indices and must be int32, got fp32", 4},
        {"find_index8: vals must be [128 x 8], got [64 x 8]", 5},
        {"match_replace8: dst must have data's shape [128 x 100], got [128 x 99]", 6},
        {"match_replace8: data must be an SBUF/PSUM tile", 7},
        {"match_replace8: dst_idx holds indices and must be int32, got bf16", 8},
        {"find_index8: data must be fp32, bf16, fp16, fp8_e4m3 or fp8_e5m2, got int32", 9},
    };
    for (const Case &k : cases) {
        Prog g(c.c);
        gs_pool *bp = gs_pool_create(g.kb, GS_MEM_SBUF, "big", 1, 4 * 16385);
        gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "t", 3, 4 * 100);
        gs_tile big = gs_tile_alloc(bp, GS_FP32, 128, 16385);
        gs_tile x = gs_tile_alloc(sb, GS_FP32, 128, 100);
        gs_tile v = gs_tile_alloc(sb, GS_FP32, 128, 8);
        gs_tile i = gs_tile_alloc(sb, GS_INT32, 128, 8);
        gs_ap x7 = gs_tile_view(&x, 0, 128, 0, 7), v9 = gs_tile_view(&x, 0, 128, 0, 9);
        gs_ap x99 = gs_tile_view(&x, 0, 128, 0, 99), v64 = gs_tile_view(&v, 0, 64, 0, 8);
        gs_ap vb = v.ap;
        vb.dtype = GS_BF16;
        gs_tensor t = {};
        t.id = 0;
        t.dtype = GS_FP32;
        t.ndim = 2;
        t.shape[0] = 128;
        t.shape[1] = 100;
        gs_status st = GS_OK;
        switch (k.which) {
        case 0:
            st = gs_max8(g.kb, v.ap, x7);
            break;
        case 1:
            st = gs_max8(g.kb, v.ap, big.ap);
            break;
        case 2:
            st = gs_max8(g.kb, v9, x.ap);
            break;
        case 3:
            st = gs_max8(g.kb, i.ap, x.ap);
            break;
        case 4:
            st = gs_find_index8(g.kb, v.ap, x.ap, v.ap);
            break;
        case 5:
            st = gs_find_index8(g.kb, i.ap, x.ap, v64);
            break;
        case 6:
            st = gs_match_replace8(g.kb, x99, nullptr, x.ap, v.ap, 0.0f);
            break;
        case 7:
            st =
                gs_match_replace8(g.kb, x.ap, nullptr, gs_hbm_rows(&t, 0, 128, 0, 100), v.ap, 0.0f);
            break;
        case 8:
            st = gs_match_replace8(g.kb, x.ap, &vb, x.ap, v.ap, 0.0f);
            break;
        default:
            break;
        }
        if (k.which == 9) {
            // an int32 data operand: view the int32 tile
            Prog h(c.c);
            gs_pool *s2 = gs_pool_create(h.kb, GS_MEM_SBUF, "t", 2, 64);
            gs_tile ii = gs_tile_alloc(s2, GS_INT32, 128, 16),
                    jj = gs_tile_alloc(s2, GS_INT32, 128, 8);
            gs_tile vv = gs_tile_alloc(s2, GS_FP32, 128, 8);
            st = gs_find_index8(h.kb, jj.ap, ii.ap, vv.ap);
            EXPECT_EQ(st, GS_ERR_INVALID);
            EXPECT_NE(h.error().find(k.want), std::string::npos) << h.error();
            continue;
        }
        EXPECT_EQ(st, GS_ERR_INVALID) << k.want;
        EXPECT_NE(g.error().find(k.want), std::string::npos) << g.error();
    }

    Cfg g1("extends: gen1\n");
    ASSERT_NE(g1.c, nullptr);
    Prog h(g1.c);
    gs_pool *sb = gs_pool_create(h.kb, GS_MEM_SBUF, "t", 2, 4 * 64);
    gs_tile x = gs_tile_alloc(sb, GS_FP32, 128, 64), v = gs_tile_alloc(sb, GS_FP32, 128, 8);
    EXPECT_EQ(gs_max8(h.kb, v.ap, x.ap), GS_ERR_UNSUPPORTED);
    EXPECT_NE(h.error().find("unsupported: max8 on this target"), std::string::npos) << h.error();
}

// One pass over the data at the fp32 rate, whatever its dtype: cycles = max(min_ii, F / epc) +
// fixed_overhead, the same for the three; linear in F; indices and vals are side operands.
TEST(TopK8, CostIsOnePassOverTheDataLinearInF)
{
    for (const char *gen : {"gen2", "gen3", "gen4"}) {
        Cfg c(std::string("extends: ") + gen + "\n");
        ASSERT_NE(c.c, nullptr) << gen;
        const gs_simd_cfg &e = c.c->vector;
        double prev = 0.0;
        for (unsigned F : {1024u, 4096u, 16384u}) {
            Prog g(c.c);
            gs_pool *sb = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 2, 4 * F);
            gs_pool *sm = gs_pool_create(g.kb, GS_MEM_SBUF, "v", 3, 32);
            gs_tile x = gs_tile_alloc(sb, GS_FP32, 128, F), xb = gs_tile_alloc(sb, GS_BF16, 128, F);
            gs_tile v = gs_tile_alloc(sm, GS_FP32, 128, 8), i = gs_tile_alloc(sm, GS_INT32, 128, 8);
            gs_tile vb = gs_tile_alloc(sm, GS_BF16, 128, 8);
            ASSERT_EQ(gs_max8(g.kb, v.ap, x.ap), GS_OK) << g.error();
            // all bf16: still the fp32 rate (gen3/gen4 stream bf16 elementwise work faster)
            ASSERT_EQ(gs_max8(g.kb, vb.ap, xb.ap), GS_OK) << g.error();
            ASSERT_EQ(gs_find_index8(g.kb, i.ap, x.ap, v.ap), GS_OK) << g.error();
            ASSERT_EQ(gs_match_replace8(g.kb, x.ap, &i.ap, x.ap, v.ap, 0.0f), GS_OK) << g.error();
            ASSERT_EQ(gs_match_replace8(g.kb, x.ap, nullptr, x.ap, v.ap, 0.0f), GS_OK);
            const double want =
                std::max(e.min_ii.v, F / e.elems_per_cycle[GS_FP32].v) + e.fixed_overhead.v;
            for (size_t k = 0; k < 5; k++)
                EXPECT_DOUBLE_EQ(cycles_of(c.c, gs_program_instr(g.p, k)), want)
                    << gen << " F " << F << " instr " << k;
            if (prev > 0.0) {
                EXPECT_GT(want, 3.9 * prev) << gen;
            }
            prev = want;
            EXPECT_DOUBLE_EQ(gs_cost_flops(gs_program_instr(g.p, 0)), 128.0 * F);
        }
    }
}

} // namespace
