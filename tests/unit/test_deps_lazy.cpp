// The dependency tracker's lazy HBM read lists (deps.c): an HBM read is kept as a handle until a
// write of the same tensor needs the reads list, and is then recorded as the eager path would
// have recorded it. Checked on one HBM tensor read hundreds of times (its reads list long enough
// to be indexed) and then written, densely (pruning the reads it covers) and not, interleaved
// with more reads:
//  - every instruction's dependencies on the tensor against a model computed here element by
//    element (a write depends on every earlier access it intersects, a read on every earlier
//    write it intersects, minus the accesses a dense write in between covers);
//  - the whole program against the eager, unindexed reference build (GS_BASELINE_PATHS);
//  - every allocation failure during the write that materialises an indexed list's pending
//    reads: a clean out-of-memory error and nothing leaked (ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "program_deps.h"
#include "gs/builder.h"
#include "gs/common.h"
#include "test_config_builders.h"

namespace
{

constexpr int64_t kRows = 64, kCols = 96; // the HBM tensor T: fp32 [kRows x kCols]
constexpr int64_t kElems = kRows * kCols;
constexpr int64_t kWords = (kElems + 63) / 64;
using Bits = std::vector<uint64_t>; // a set of T's elements, one bit each

struct Pattern {
    int64_t offset = 0;
    unsigned parts = 1;
    int64_t part_stride = 0;
    int ndim = 1;
    uint32_t shape[2] = {1, 1};
    int64_t stride[2] = {1, 1};
    uint64_t free_elems() const { return ndim == 1 ? shape[0] : (uint64_t)shape[0] * shape[1]; }
    // the elements it touches, as a bitmap over T
    Bits elements() const
    {
        Bits s((size_t)kWords, 0);
        for (unsigned p = 0; p < parts; p++)
            for (uint32_t i = 0; i < shape[0]; i++)
                for (uint32_t j = 0; j < (ndim == 2 ? shape[1] : 1u); j++) {
                    int64_t e = offset + (int64_t)p * part_stride + (int64_t)i * stride[0] +
                                (ndim == 2 ? (int64_t)j * stride[1] : 0);
                    if (e >= 0 && e < kElems) s[(size_t)e / 64] |= 1ull << (e % 64);
                }
        return s;
    }
    int64_t last() const
    {
        int64_t l =
            offset + (int64_t)(parts - 1) * part_stride + (int64_t)(shape[0] - 1) * stride[0];
        return ndim == 2 ? l + (int64_t)(shape[1] - 1) * stride[1] : l;
    }
    std::string str() const
    {
        return "off " + std::to_string(offset) + " parts " + std::to_string(parts) + "x" +
               std::to_string(part_stride) + " shape " + std::to_string(shape[0]) +
               (ndim == 2 ? "x" + std::to_string(shape[1]) : "") + " stride " +
               std::to_string(stride[0]) + (ndim == 2 ? "," + std::to_string(stride[1]) : "");
    }
};

// One access of the model: the instruction, whether it writes, its elements, and whether a
// dense write after it has covered it (the tracker drops such an access).
struct Access {
    uint32_t instr;
    bool write;
    Bits elems;
    bool covered = false;
};

bool intersect(const Bits &a, const Bits &b)
{
    for (size_t i = 0; i < a.size(); i++)
        if (a[i] & b[i]) return true;
    return false;
}

bool subset(const Bits &a, const Bits &b)
{
    for (size_t i = 0; i < a.size(); i++)
        if (a[i] & ~b[i]) return false;
    return true;
}

// One contiguous run (the pattern is dense).
bool contiguous(const Bits &a)
{
    std::vector<bool> v((size_t)kElems);
    for (int64_t e = 0; e < kElems; e++)
        v[(size_t)e] = (a[(size_t)e / 64] >> (e % 64)) & 1u;
    auto first = std::find(v.begin(), v.end(), true);
    auto past = std::find(first, v.end(), false);
    return std::find(past, v.end(), true) == v.end();
}

int pick(std::mt19937 &rng, int lo, int hi)
{
    return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A read: tiles of rows (aligned or not), runs, 2D and strided patterns.
Pattern random_read(std::mt19937 &rng)
{
    for (;;) {
        Pattern p;
        switch (pick(rng, 0, 4)) {
        case 0: // a 16 x 16 tile of rows
            p.offset = pick(rng, 0, (int)(kRows / 16) - 1) * 16 * kCols + pick(rng, 0, 5) * 16;
            p.parts = 16;
            p.part_stride = kCols;
            p.shape[0] = 16;
            break;
        case 1: // unaligned rows of the pitch
            p.offset = pick(rng, 0, (int)kElems - 1);
            p.parts = (unsigned)pick(rng, 1, 12);
            p.part_stride = kCols;
            p.shape[0] = (uint32_t)pick(rng, 1, 40);
            break;
        case 2: // one run
            p.offset = pick(rng, 0, (int)kElems - 1);
            p.shape[0] = (uint32_t)pick(rng, 1, 200);
            break;
        case 3: // one partition, 2D rows x run
            p.offset = pick(rng, 0, (int)kElems - 1);
            p.ndim = 2;
            p.shape[0] = (uint32_t)pick(rng, 1, 8);
            p.shape[1] = (uint32_t)pick(rng, 1, 24);
            p.stride[0] = kCols;
            break;
        default: // strided, not rows of the pitch
            p.offset = pick(rng, 0, (int)kElems - 1);
            p.parts = (unsigned)pick(rng, 1, 6);
            p.part_stride = pick(rng, 1, 150);
            p.shape[0] = (uint32_t)pick(rng, 1, 12);
            p.stride[0] = pick(rng, 2, 3);
            break;
        }
        if (p.last() < kElems && p.free_elems() <= 1024) return p;
    }
}

// A write: dense (one run, often whole rows: it covers and so prunes earlier accesses) or not
// (rows with gaps, strided).
Pattern random_write(std::mt19937 &rng, bool dense)
{
    for (;;) {
        Pattern p;
        if (dense) {
            if (pick(rng, 0, 1)) {
                p.offset = pick(rng, 0, (int)kRows - 1) * kCols;
                p.shape[0] = (uint32_t)(pick(rng, 1, 8) * kCols);
            } else {
                p.offset = pick(rng, 0, (int)kElems - 1);
                p.shape[0] = (uint32_t)pick(rng, 1, 400);
            }
        } else if (pick(rng, 0, 1)) {
            p.offset = pick(rng, 0, (int)kElems - 1);
            p.parts = (unsigned)pick(rng, 2, 16);
            p.shape[0] = (uint32_t)pick(rng, 1, 40);
            p.part_stride = kCols;
            if ((int64_t)p.shape[0] >= kCols) p.shape[0] = (uint32_t)(kCols - 1);
        } else {
            p.offset = pick(rng, 0, (int)kElems - 1);
            p.parts = (unsigned)pick(rng, 1, 4);
            p.part_stride = pick(rng, 50, 300);
            p.shape[0] = (uint32_t)pick(rng, 2, 20);
            p.stride[0] = 2;
        }
        if (p.last() < kElems && p.free_elems() <= 1024 && contiguous(p.elements()) == dense)
            return p;
    }
}

// The script of one program: reads, then writes among more reads.
struct Step {
    bool write;
    Pattern p;
};

std::vector<Step> script(uint32_t seed, int first_reads, int steps)
{
    std::mt19937 rng(seed);
    std::vector<Step> s;
    for (int i = 0; i < first_reads; i++)
        s.push_back({false, random_read(rng)});
    for (int i = 0; i < steps; i++) {
        int k = pick(rng, 0, 9);
        if (k == 0)
            s.push_back({true, random_write(rng, true)});
        else if (k == 1)
            s.push_back({true, random_write(rng, false)});
        else
            s.push_back({false, random_read(rng)});
    }
    return s;
}

// A program over T built step by step; the caller drives it.
struct Build {
    gs_config cfg;
    gs_program *p = nullptr;
    gs_kb *kb = nullptr;
    gs_tensor t{};
    gs_tile rd{}, src{};
    Build()
    {
        gs_test_config_gen2_like(&cfg);
        p = gs_program_create(&cfg);
        kb = gs_kb_create(p, 0);
        int64_t shape[2] = {kRows, kCols};
        gs_error err;
        t.id = gs_program_add_tensor(p, "T", GS_FP32, GS_TENSOR_OUTPUT, 2, shape, &err);
        t.dtype = GS_FP32;
        t.ndim = 2;
        t.shape[0] = kRows;
        t.shape[1] = kCols;
        // reads land in one tile, writes come from another that nothing writes: the writes'
        // only dependencies are on T
        rd = gs_tile_alloc(gs_pool_create(kb, GS_MEM_SBUF, "rd", 1, 4096), GS_FP32, 128, 1024);
        src = gs_tile_alloc(gs_pool_create(kb, GS_MEM_SBUF, "src", 1, 4096), GS_FP32, 128, 1024);
    }
    ~Build()
    {
        gs_kb_free(kb);
        gs_program_free(p);
    }
    Build(const Build &) = delete;
    Build &operator=(const Build &) = delete;
    gs_status step(const Step &s)
    {
        const Pattern &a = s.p;
        gs_ap hbm = gs_hbm_ap(&t, a.offset, a.parts, a.part_stride, a.ndim, a.shape, a.stride);
        const gs_tile &tile = s.write ? src : rd;
        gs_ap sb = gs_tile_view(&tile, 0, a.parts, 0, (uint32_t)a.free_elems());
        return s.write ? gs_dma_copy(kb, hbm, sb, -1) : gs_dma_copy(kb, sb, hbm, -1);
    }
};

Deps build_deps(const std::vector<Step> &steps, bool baseline)
{
    if (baseline)
        setenv("GS_BASELINE_PATHS", "1", 1);
    else
        unsetenv("GS_BASELINE_PATHS");
    Build b;
    unsetenv("GS_BASELINE_PATHS");
    for (const Step &s : steps)
        if (b.step(s) != GS_OK) {
            ADD_FAILURE() << gs_kb_error(b.kb)->message << " at " << s.p.str();
            return {};
        }
    return deps_of(b.p);
}

TEST(DepsLazy, WritesAfterManyReadsDependOnExactlyTheIntersectingAccesses)
{
    size_t checked_writes = 0, dense_writes = 0, war_deps = 0, pruned = 0;
    for (uint32_t seed = 1; seed <= 6; seed++) {
        std::vector<Step> steps = script(seed, 300, 500);
        unsetenv("GS_BASELINE_PATHS");
        Build b;
        std::vector<Access> model;
        for (size_t i = 0; i < steps.size(); i++) {
            const Step &s = steps[i];
            ASSERT_EQ(b.step(s), GS_OK) << gs_kb_error(b.kb)->message << " at " << s.p.str();
            ASSERT_EQ(gs_program_count(b.p), i + 1);
            Bits el = s.p.elements();
            // RAW for a read; RAW, WAR and WAW for a write
            std::vector<uint32_t> expect;
            for (const Access &x : model)
                if (!x.covered && (s.write || x.write) && intersect(x.elems, el)) {
                    expect.push_back(x.instr);
                    if (s.write && !x.write) war_deps++;
                }
            const gs_instr *in = gs_program_instr(b.p, i);
            std::vector<uint32_t> got(in->deps, in->deps + in->n_deps);
            if (!s.write) {
                // a read's tile also waits for the earlier reads into it: keep the writes of T
                std::vector<uint32_t> on_t;
                for (uint32_t d : got)
                    if (steps[d].write) on_t.push_back(d);
                got = on_t;
            }
            ASSERT_EQ(got, expect) << "seed " << seed << ", instruction " << i
                                   << (s.write ? " (write " : " (read ") << s.p.str() << ")";
            if (s.write) {
                checked_writes++;
                if (contiguous(el)) {
                    dense_writes++;
                    for (Access &x : model)
                        if (!x.covered && subset(x.elems, el)) {
                            x.covered = true;
                            pruned++;
                        }
                }
            }
            model.push_back({(uint32_t)i, s.write, el});
        }
    }
    // the scripts exercise what they are for: writes of both kinds, WAR dependencies on the
    // lazily kept reads, and reads dropped under dense writes
    EXPECT_GT(checked_writes, 400u);
    EXPECT_GT(dense_writes, 200u);
    EXPECT_GT(war_deps, 10000u);
    EXPECT_GT(pruned, 1000u);
}

TEST(DepsLazy, SameDependenciesAsTheEagerReference)
{
    for (uint32_t seed = 11; seed <= 14; seed++) {
        std::vector<Step> steps = script(seed, 200, 600);
        Deps lazy = build_deps(steps, false), eager = build_deps(steps, true);
        ASSERT_EQ(lazy.size(), steps.size());
        ASSERT_EQ(lazy.size(), eager.size());
        for (size_t i = 0; i < lazy.size(); i++)
            ASSERT_EQ(lazy[i], eager[i]) << "seed " << seed << ", instruction " << i;
    }
}

// ---- allocation failures ----

long g_budget = -1; // allocations left before they fail; -1: no limit

void *fail_malloc(size_t n, void *)
{
    if (g_budget == 0) return nullptr;
    if (g_budget > 0) g_budget--;
    return malloc(n ? n : 1);
}
void *fail_realloc(void *p, size_t n, void *)
{
    if (g_budget == 0) return nullptr;
    if (g_budget > 0) g_budget--;
    return realloc(p, n ? n : 1);
}
void plain_free(void *p, void *)
{
    free(p);
}

TEST(DepsLazy, SurvivesEveryAllocationFailureWhileMaterialising)
{
    // 200 reads, a write (the reads list is indexed), 100 more reads (pending), then the write
    // that materialises them into the indexed list, with the k-th allocation failing
    std::vector<Step> steps = script(21, 200, 0);
    std::mt19937 rng(22);
    steps.push_back({true, random_write(rng, false)});
    for (int i = 0; i < 100; i++)
        steps.push_back({false, random_read(rng)});
    Step last{true, random_write(rng, false)};
    std::vector<Step> all = steps;
    all.push_back(last);
    unsetenv("GS_BASELINE_PATHS");
    Deps want = build_deps(all, false);
    ASSERT_EQ(want.size(), all.size());
    ASSERT_FALSE(want.back().empty());

    gs_allocator a = {fail_malloc, fail_realloc, plain_free, nullptr};
    bool succeeded = false;
    long budget = 0;
    int failed = 0;
    for (; budget < 100000 && !succeeded; budget++) {
        Build b;
        for (const Step &s : steps)
            ASSERT_EQ(b.step(s), GS_OK);
        gs_set_allocator(&a);
        g_budget = budget;
        gs_status st = b.step(last);
        g_budget = -1;
        gs_set_allocator(nullptr);
        if (st == GS_OK) {
            succeeded = true;
            EXPECT_EQ(deps_of(b.p), want) << "budget " << budget;
        } else {
            failed++;
            EXPECT_EQ(st, GS_ERR_NOMEM) << "budget " << budget;
            EXPECT_FALSE(gs_kb_ok(b.kb));
        }
    }
    EXPECT_TRUE(succeeded);
    // the write allocates (the list, its index) before it succeeds
    EXPECT_GT(failed, 10);
}

} // namespace
