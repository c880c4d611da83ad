// The builder's exact overlap test for HBM row patterns (kb.c rows_overlap, the O(1) path used
// for every gs_hbm_rows-style access): on random patterns, a write after a write gets a
// dependency exactly when the two element sets intersect (checked by brute force).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gs/builder.h"
#include "test_config_builders.h"

namespace
{

constexpr int64_t kRows = 64, kCols = 64; // HBM tensor: 4096 fp32 elements

struct Pattern {
    int64_t offset = 0;
    unsigned parts = 1;
    int64_t part_stride = 0;
    int ndim = 1;
    uint32_t shape[2] = {1, 1};
    int64_t stride[2] = {1, 1};
    uint64_t free_elems() const { return ndim == 1 ? shape[0] : (uint64_t)shape[0] * shape[1]; }
    std::set<int64_t> elements() const
    {
        std::set<int64_t> s;
        for (unsigned p = 0; p < parts; p++)
            for (uint32_t i = 0; i < shape[0]; i++)
                for (uint32_t j = 0; j < (ndim == 2 ? shape[1] : 1u); j++)
                    s.insert(offset + (int64_t)p * part_stride + (int64_t)i * stride[0] +
                             (ndim == 2 ? (int64_t)j * stride[1] : 0));
        return s;
    }
    int64_t last() const { return *elements().rbegin(); }
    std::string str() const
    {
        return "off " + std::to_string(offset) + " parts " + std::to_string(parts) + "x" +
               std::to_string(part_stride) + " shape " + std::to_string(shape[0]) +
               (ndim == 2 ? "x" + std::to_string(shape[1]) : "") + " stride " +
               std::to_string(stride[0]) + (ndim == 2 ? "," + std::to_string(stride[1]) : "");
    }
};

Pattern random_pattern(std::mt19937 &rng)
{
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (;;) {
        Pattern p;
        p.offset = pick(0, 200);
        switch (pick(0, 3)) {
        case 0: // rows of one run (gs_hbm_rows)
        case 1:
            p.parts = (unsigned)pick(1, 8);
            p.part_stride = pick(1, 40);
            p.shape[0] = (uint32_t)pick(1, 24);
            break;
        case 2: // one partition, 2D rows x run
            p.ndim = 2;
            p.shape[0] = (uint32_t)pick(1, 8);
            p.shape[1] = (uint32_t)pick(1, 24);
            p.stride[0] = pick(1, 40);
            break;
        default: // strided: not a row pattern (the general path)
            p.parts = (unsigned)pick(1, 4);
            p.part_stride = pick(1, 40);
            p.shape[0] = (uint32_t)pick(1, 12);
            p.stride[0] = pick(2, 3);
            break;
        }
        if (p.last() < kRows * kCols) return p;
    }
}

gs_ap to_ap(const gs_tensor *t, const Pattern &p)
{
    return gs_hbm_ap(t, p.offset, p.parts, p.part_stride, p.ndim, p.shape, p.stride);
}

TEST(KbOverlap, RowPatternsDependExactlyWhenTheyIntersect)
{
    std::mt19937 rng(12345);
    int with_dep = 0, without = 0;
    for (int trial = 0; trial < 3000; trial++) {
        gs_config cfg;
        gs_test_config_gen2_like(&cfg);
        gs_program *p = gs_program_create(&cfg);
        gs_kb *kb = gs_kb_create(p, 0);
        int64_t shape[2] = {kRows, kCols};
        gs_error err;
        gs_tensor t{};
        t.id = gs_program_add_tensor(p, "T", GS_FP32, GS_TENSOR_OUTPUT, 2, shape, &err);
        t.dtype = GS_FP32;
        t.ndim = 2;
        t.shape[0] = kRows;
        t.shape[1] = kCols;
        Pattern a = random_pattern(rng), b = random_pattern(rng);
        gs_pool *pa = gs_pool_create(kb, GS_MEM_SBUF, "a", 1, 4096);
        gs_pool *pb = gs_pool_create(kb, GS_MEM_SBUF, "b", 1, 4096);
        gs_tile ta = gs_tile_alloc(pa, GS_FP32, a.parts, (uint32_t)a.free_elems());
        gs_tile tb = gs_tile_alloc(pb, GS_FP32, b.parts, (uint32_t)b.free_elems());
        gs_dma_copy(kb, to_ap(&t, a), ta.ap, 0);
        gs_dma_copy(kb, to_ap(&t, b), tb.ap, 1);
        ASSERT_TRUE(gs_kb_ok(kb)) << gs_kb_error(kb)->message << " a: " << a.str()
                                  << " b: " << b.str();
        ASSERT_EQ(gs_program_count(p), 2u);
        std::set<int64_t> ea = a.elements(), eb = b.elements();
        bool intersect = false;
        for (int64_t e : ea)
            intersect = intersect || eb.count(e);
        const gs_instr *in = gs_program_instr(p, 1);
        EXPECT_EQ(in->n_deps == 1, intersect) << "a: " << a.str() << " | b: " << b.str();
        (intersect ? with_dep : without)++;
        gs_kb_free(kb);
        gs_program_free(p);
    }
    // the random patterns exercise both outcomes
    EXPECT_GT(with_dep, 300);
    EXPECT_GT(without, 300);
}

} // namespace

namespace
{

// Many writes to one tensor (more than one block of the builder's history summaries), none of
// them dense (so none is pruned): every write depends on exactly the earlier writes it
// intersects.
TEST(KbOverlap, LongHistoriesKeepEveryDependency)
{
    std::mt19937 rng(777);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    gs_program *p = gs_program_create(&cfg);
    gs_kb *kb = gs_kb_create(p, 0);
    int64_t shape[2] = {kRows, kCols};
    gs_error err;
    gs_tensor t{};
    t.id = gs_program_add_tensor(p, "T", GS_FP32, GS_TENSOR_OUTPUT, 2, shape, &err);
    t.dtype = GS_FP32;
    t.ndim = 2;
    t.shape[0] = kRows;
    t.shape[1] = kCols;
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "src", 1, 4096);
    gs_tile src = gs_tile_alloc(pool, GS_FP32, 8, 24);
    std::vector<std::set<int64_t>> written;
    const int n = 200;
    for (int w = 0; w < n; w++) {
        Pattern a;
        do {
            a = Pattern();
            a.offset = pick(0, 3800);
            a.parts = (unsigned)pick(2, 8);
            a.shape[0] = (uint32_t)pick(1, 24);
            a.part_stride = a.shape[0] + pick(1, 40); // gaps between rows: never dense
        } while (a.last() >= kRows * kCols);
        gs_dma_copy(kb, to_ap(&t, a), gs_tile_view(&src, 0, a.parts, 0, a.shape[0]), -1);
        ASSERT_TRUE(gs_kb_ok(kb)) << gs_kb_error(kb)->message;
        written.push_back(a.elements());
    }
    for (int w = 0; w < n; w++) {
        std::set<uint32_t> expect;
        for (int e = 0; e < w; e++)
            for (int64_t x : written[(size_t)w])
                if (written[(size_t)e].count(x)) {
                    expect.insert((uint32_t)e);
                    break;
                }
        const gs_instr *in = gs_program_instr(p, (size_t)w);
        std::set<uint32_t> got(in->deps, in->deps + in->n_deps);
        EXPECT_EQ(got, expect) << "write " << w;
    }
    gs_kb_free(kb);
    gs_program_free(p);
}

} // namespace

namespace
{

struct TileRounds {
    gs_config cfg;
    gs_program *p = nullptr;
    gs_kb *kb = nullptr;
    gs_tensor a{}, b{};
    TileRounds()
    {
        gs_test_config_gen2_like(&cfg);
        p = gs_program_create(&cfg);
        kb = gs_kb_create(p, 0);
        int64_t shape[2] = {128, 1};
        gs_error err;
        for (gs_tensor *t : {&a, &b}) {
            t->id = gs_program_add_tensor(p, t == &a ? "A" : "B", GS_FP32, GS_TENSOR_INPUT, 2,
                                          shape, &err);
            t->dtype = GS_FP32;
            t->ndim = 2;
            t->shape[0] = 128;
            t->shape[1] = 1;
        }
    }
    ~TileRounds()
    {
        gs_kb_free(kb);
        gs_program_free(p);
    }
    const gs_instr *last() const { return gs_program_instr(p, gs_program_count(p) - 1); }
};

// A tile written a column at a time and read whole every round (fused_elementwise's per-row
// scale and bias at an Rx1 shape): each round's reads on the one engine make the earlier ones
// redundant, so a column write depends on a bounded number of instructions however many rounds
// ran (it used to depend on every earlier round's read: quadratic in the rounds).
TEST(KbOverlap, ReadsOfOneEngineDoNotPileUp)
{
    TileRounds r;
    gs_pool *pab = gs_pool_create(r.kb, GS_MEM_SBUF, "ab", 1, 8);
    gs_pool *pout = gs_pool_create(r.kb, GS_MEM_SBUF, "o", 2, 8);
    gs_tile ab = gs_tile_alloc(pab, GS_FP32, 128, 2);
    uint32_t last_read = 0;
    for (int round = 0; round < 200; round++) {
        gs_dma_copy(r.kb, gs_tile_view(&ab, 0, 128, 0, 1), gs_hbm_rows(&r.a, 0, 128, 0, 1), -1);
        gs_dma_copy(r.kb, gs_tile_view(&ab, 0, 128, 1, 1), gs_hbm_rows(&r.b, 0, 128, 0, 1), -1);
        gs_tile o = gs_tile_alloc(pout, GS_FP32, 128, 2);
        gs_tensor_copy(r.kb, GS_ENG_VECTOR, o.ap, ab.ap);
        last_read = (uint32_t)gs_program_count(r.p) - 1;
    }
    gs_dma_copy(r.kb, gs_tile_view(&ab, 0, 128, 0, 1), gs_hbm_rows(&r.a, 0, 128, 0, 1), -1);
    ASSERT_TRUE(gs_kb_ok(r.kb)) << gs_kb_error(r.kb)->message;
    const gs_instr *w = r.last();
    // WAW on the previous write of the column, WAR on the last whole-tile read
    ASSERT_EQ(w->n_deps, 2u);
    EXPECT_EQ(w->deps[1], last_read);
}

// Reads on different engines are not ordered with each other: a write after them waits for
// each, and a partial read is not made redundant by a later whole one on another engine.
TEST(KbOverlap, ReadsOfDifferentEnginesAreAllKept)
{
    TileRounds r;
    gs_pool *pt = gs_pool_create(r.kb, GS_MEM_SBUF, "t", 1, 8);
    gs_pool *pout = gs_pool_create(r.kb, GS_MEM_SBUF, "o", 4, 8);
    gs_tile t = gs_tile_alloc(pt, GS_FP32, 128, 2);
    gs_tile o1 = gs_tile_alloc(pout, GS_FP32, 128, 2);
    gs_tile o2 = gs_tile_alloc(pout, GS_FP32, 128, 2);
    gs_tile o3 = gs_tile_alloc(pout, GS_FP32, 128, 1);
    gs_tensor_copy(r.kb, GS_ENG_SCALAR, o3.ap, gs_tile_view(&t, 0, 128, 0, 1)); // 0
    gs_tensor_copy(r.kb, GS_ENG_VECTOR, o1.ap, t.ap);                           // 1
    gs_tensor_copy(r.kb, GS_ENG_SCALAR, o2.ap, t.ap);                           // 2: drops 0
    gs_tensor_copy(r.kb, GS_ENG_VECTOR, o1.ap, t.ap);                           // 3: drops 1
    gs_dma_copy(r.kb, gs_tile_view(&t, 0, 128, 0, 1), gs_hbm_rows(&r.a, 0, 128, 0, 1), -1);
    ASSERT_TRUE(gs_kb_ok(r.kb)) << gs_kb_error(r.kb)->message;
    const gs_instr *w = r.last();
    ASSERT_EQ(w->n_deps, 2u);
    EXPECT_EQ(w->deps[0], 2u);
    EXPECT_EQ(w->deps[1], 3u);
}

} // namespace

namespace
{

// A pool created and released over and over at the same bytes (bmm: one matmul per batch): the
// new pool's first write waits for the last round's accesses to those bytes, not for every
// round's (each released buffer's history is passed on once, to the buffer that takes over all of
// its bytes).
TEST(KbOverlap, ReusedPoolBytesInheritOnlyTheLastHistory)
{
    TileRounds r;
    uint32_t last_write = 0, last_read = 0;
    for (int round = 0; round < 300; round++) {
        gs_pool *pt = gs_pool_create(r.kb, GS_MEM_SBUF, "t", 1, 8);
        gs_pool *po = gs_pool_create(r.kb, GS_MEM_SBUF, "o", 1, 8);
        gs_tile t = gs_tile_alloc(pt, GS_FP32, 128, 1);
        gs_tile o = gs_tile_alloc(po, GS_FP32, 128, 1);
        gs_dma_copy(r.kb, t.ap, gs_hbm_rows(&r.a, 0, 128, 0, 1), -1);
        last_write = (uint32_t)gs_program_count(r.p) - 1;
        gs_tensor_copy(r.kb, GS_ENG_VECTOR, o.ap, t.ap);
        last_read = (uint32_t)gs_program_count(r.p) - 1;
        gs_pool_release(r.kb, po);
        gs_pool_release(r.kb, pt);
        ASSERT_TRUE(gs_kb_ok(r.kb)) << gs_kb_error(r.kb)->message;
    }
    gs_pool *pt = gs_pool_create(r.kb, GS_MEM_SBUF, "t", 1, 8);
    gs_tile t = gs_tile_alloc(pt, GS_FP32, 128, 1);
    gs_dma_copy(r.kb, t.ap, gs_hbm_rows(&r.a, 0, 128, 0, 1), -1);
    ASSERT_TRUE(gs_kb_ok(r.kb)) << gs_kb_error(r.kb)->message;
    const gs_instr *w = r.last();
    ASSERT_EQ(w->n_deps, 2u);
    EXPECT_EQ(w->deps[0], last_write);
    EXPECT_EQ(w->deps[1], last_read);
}

} // namespace

namespace
{

// A strided (not dense) view written and read every round, as matmul_mx's MX scale tiles are:
// the accesses of the same pattern are made redundant by the next write of it (and a read by
// the next read on the same engine), so the lists do not grow with the rounds and the last write
// depends on the last round only.
TEST(KbOverlap, StridedViewsOfOnePatternDoNotPileUp)
{
    TileRounds r;
    gs_pool *pt = gs_pool_create(r.kb, GS_MEM_SBUF, "t", 1, 32);
    gs_pool *po = gs_pool_create(r.kb, GS_MEM_SBUF, "o", 2, 16);
    gs_tile t = gs_tile_alloc(pt, GS_FP32, 128, 8);
    gs_ap every_other = gs_tile_view2(&t, 0, 128, 0, 4, 1, 2); // columns 0, 2, 4, 6
    uint32_t last_write = 0, last_read = 0;
    for (int round = 0; round < 200; round++) {
        gs_tile o = gs_tile_alloc(po, GS_FP32, 128, 4);
        gs_tensor_copy(r.kb, GS_ENG_SCALAR, every_other, o.ap);
        last_write = (uint32_t)gs_program_count(r.p) - 1;
        gs_tile o2 = gs_tile_alloc(po, GS_FP32, 128, 4);
        gs_tensor_copy(r.kb, GS_ENG_VECTOR, o2.ap, every_other);
        last_read = (uint32_t)gs_program_count(r.p) - 1;
    }
    gs_tile o = gs_tile_alloc(po, GS_FP32, 128, 4);
    gs_tensor_copy(r.kb, GS_ENG_SCALAR, every_other, o.ap);
    ASSERT_TRUE(gs_kb_ok(r.kb)) << gs_kb_error(r.kb)->message;
    const gs_instr *w = r.last();
    // the tile o it reads (WAR on its last reader), the last write and read of the strided view
    std::vector<uint32_t> deps(w->deps, w->deps + w->n_deps);
    EXPECT_LE(deps.size(), 3u);
    EXPECT_NE(std::find(deps.begin(), deps.end(), last_write), deps.end());
    EXPECT_NE(std::find(deps.begin(), deps.end(), last_read), deps.end());
}

} // namespace
