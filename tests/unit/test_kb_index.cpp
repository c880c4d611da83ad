// The builder's index of long HBM histories (kb.c) must derive exactly the dependencies of a full
// scan of every history (GS_BASELINE_PATHS set: the builder without the index). Compared
// instruction by instruction, in order:
//  - on every kernel x variant x generation config in configs/, at the check shapes and at the
//    perf shapes quartered in every dimension (long enough histories to be indexed);
//  - on random mixes of reads, sparse writes and dense (pruning) writes of one HBM tensor,
//    including strided patterns that are not rows of the tensor's pitch and wide accesses;
//  - on random mixes of column-slice reads and writes of one SBUF tile by the compute engines and
//    DMA (a tile's own history indexed: a scan writing one column per step), including whole-tile
//    and partial-partition accesses.
// Built twice (tests/CMakeLists.txt): the test pass runs the above with seeds 1..3 (HBM) and 1..2
// (tile); GS_KB_INDEX_SLOW (label slow, the CI gate stage) runs the perf shapes only halved
// (longer histories, a few times the time) and seeds 4..8 and 3..6.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "program_deps.h"
#include "gs/builder.h"
#include "gs/config.h"
#include "job.h"
#include "shipped_configs.h"
#include "suite_job.h"
#include "test_config_builders.h"

namespace
{

#ifdef GS_KB_INDEX_SLOW
#define GS_SUITE_DEPS SuiteDepsHalvedPerfShapes
#define GS_KB_INDEX KbIndexMoreSeeds
constexpr bool kCheckShapes = false; // the test pass compares them
constexpr int64_t kPerfDivisor = 2;
constexpr uint32_t kHbmSeeds[2] = {4, 8}, kTileSeeds[2] = {3, 6};
#else
#define GS_SUITE_DEPS SuiteDeps
#define GS_KB_INDEX KbIndex
constexpr bool kCheckShapes = true;
constexpr int64_t kPerfDivisor = 4;
constexpr uint32_t kHbmSeeds[2] = {1, 3}, kTileSeeds[2] = {1, 2};
#endif

std::vector<std::string> config_files()
{
    return gs_test_shipped_configs();
}

struct Baseline {
    explicit Baseline(bool on)
    {
        if (on)
            setenv("GS_BASELINE_PATHS", "1", 1);
        else
            unsetenv("GS_BASELINE_PATHS");
    }
    ~Baseline() { unsetenv("GS_BASELINE_PATHS"); }
};

// Build one job in the given mode; false (with the status) when it does not build.
bool build(const gs_job_spec &spec, bool baseline, Deps *out, gs_status *st, std::string *msg)
{
    Baseline b(baseline);
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    *st = gs_job_build(&spec, &job, &err);
    *msg = err.message;
    if (*st == GS_OK) *out = deps_of(gs_job_program(job));
    gs_job_free(job);
    return *st == GS_OK;
}

gs_dtype first_dtype(const gs_kernel_def *k)
{
    if (k->dtypes & (1u << GS_BF16)) return GS_BF16;
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (k->dtypes & (1u << t)) return (gs_dtype)t;
    return GS_BF16;
}

class GS_SUITE_DEPS : public testing::TestWithParam<std::string>
{
};

TEST_P(GS_SUITE_DEPS, IndexedBuildDerivesTheSameDependencies)
{
    gs_config *cfg = gs_test_load_config(GetParam());
    ASSERT_NE(cfg, nullptr) << GetParam();
    size_t compared = 0, instrs = 0;
    for (size_t k = 0; k < gs_suite_count(); k++) {
        const gs_kernel_def *def = gs_suite_kernel(k);
        std::vector<gs_shape> shapes;
        for (int s = 0; kCheckShapes && s < GS_SUITE_MAX_SHAPES && def->check_shapes[s].n; s++)
            shapes.push_back(def->check_shapes[s]);
        for (int s = 0; s < GS_SUITE_MAX_SHAPES && def->perf_shapes[s].n; s++) {
            gs_shape sh = def->perf_shapes[s];
            for (int i = 0; i < sh.n; i++)
                sh.d[i] = std::max<int64_t>(1, sh.d[i] / kPerfDivisor);
            shapes.push_back(sh);
        }
        for (int v = 0; v < def->n_variants; v++)
            for (const gs_shape &sh : shapes) {
                const gs_job_spec spec = gs_test_suite_spec(cfg, def, v, first_dtype(def), sh);
                std::string what = std::string(def->name) + "/" + def->variants[v];
                for (int i = 0; i < sh.n; i++)
                    what += (i ? "x" : " ") + std::to_string(sh.d[i]);
                Deps fast, full;
                gs_status s1, s2;
                std::string m1, m2;
                bool ok1 = build(spec, false, &fast, &s1, &m1);
                bool ok2 = build(spec, true, &full, &s2, &m2);
                ASSERT_EQ(s1, s2) << what << ": " << m1 << " | " << m2;
                if (!ok1 || !ok2) continue;
                ASSERT_EQ(fast.size(), full.size()) << what;
                for (size_t i = 0; i < fast.size(); i++)
                    ASSERT_EQ(fast[i], full[i]) << what << ": instruction " << i;
                compared++;
                instrs += fast.size();
            }
    }
    gs_config_free(cfg);
    EXPECT_GT(compared, 20u);
    std::printf("%zu programs, %zu instructions compared\n", compared, instrs);
    RecordProperty("instructions", (int)instrs);
}

INSTANTIATE_TEST_SUITE_P(Configs, GS_SUITE_DEPS, testing::ValuesIn(config_files()),
                         [](const testing::TestParamInfo<std::string> &i) {
                             return gs_test_config_name(i.param);
                         });

constexpr int64_t kRows = 96, kCols = 80;

// A random access to the [kRows x kCols] tensor: a tile of rows (the index's own pitch), a
// contiguous run, a strided pattern (not rows of the pitch), or a large block (wide).
struct Access {
    int64_t offset;
    unsigned parts;
    int64_t part_stride;
    int ndim;
    uint32_t shape[2];
    int64_t stride[2];
    uint64_t free_elems() const { return ndim == 1 ? shape[0] : (uint64_t)shape[0] * shape[1]; }
    int64_t last() const
    {
        int64_t l = offset + (int64_t)(parts - 1) * part_stride;
        l += (int64_t)(shape[0] - 1) * stride[0];
        if (ndim == 2) l += (int64_t)(shape[1] - 1) * stride[1];
        return l;
    }
};

Access random_access(std::mt19937 &rng)
{
    auto pick = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    for (;;) {
        Access a{};
        a.parts = 1;
        a.ndim = 1;
        a.shape[0] = a.shape[1] = 1;
        a.stride[0] = a.stride[1] = 1;
        switch (pick(0, 5)) {
        case 0: // a tile: rows of the tensor, aligned to a 16 x 16 grid
        case 1:
            a.offset = pick(0, kRows / 16 - 1) * 16 * kCols + pick(0, kCols / 16 - 1) * 16;
            a.parts = (unsigned)pick(1, 16);
            a.part_stride = kCols;
            a.shape[0] = (uint32_t)pick(1, 16);
            break;
        case 2: // unaligned rows of the pitch
            a.offset = pick(0, kRows * kCols - 1);
            a.parts = (unsigned)pick(1, 12);
            a.part_stride = kCols;
            a.shape[0] = (uint32_t)pick(1, 40);
            break;
        case 3: // one contiguous run, maybe over several rows (dense: prunes when written)
            a.offset = pick(0, kRows * kCols - 1);
            a.shape[0] = (uint32_t)pick(1, 300);
            break;
        case 4: // rows of another pitch, or strided
            a.offset = pick(0, kRows * kCols - 1);
            a.parts = (unsigned)pick(1, 8);
            a.part_stride = pick(1, 200);
            a.shape[0] = (uint32_t)pick(1, 12);
            a.stride[0] = pick(1, 3);
            break;
        default: // wide: many rows
            a.offset = pick(0, 8) * kCols;
            a.parts = (unsigned)pick(40, 80);
            a.part_stride = kCols;
            a.shape[0] = (uint32_t)pick(1, kCols);
            break;
        }
        if (a.parts <= 128 && a.free_elems() <= 2048 && a.last() < kRows * kCols) return a;
    }
}

Deps random_program(uint32_t seed, bool baseline, size_t *n)
{
    Baseline b(baseline);
    std::mt19937 rng(seed);
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
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "s", 4, 8192);
    for (int i = 0; i < 1200; i++) {
        Access a = random_access(rng);
        gs_tile tile = gs_tile_alloc(pool, GS_FP32, a.parts, (uint32_t)a.free_elems());
        gs_ap hbm = gs_hbm_ap(&t, a.offset, a.parts, a.part_stride, a.ndim, a.shape, a.stride);
        if (std::uniform_int_distribution<int>(0, 2)(rng) == 0)
            gs_dma_copy(kb, tile.ap, hbm, -1); // read
        else
            gs_dma_copy(kb, hbm, tile.ap, -1); // write
        if (!gs_kb_ok(kb)) {
            ADD_FAILURE() << gs_kb_error(kb)->message;
            break;
        }
    }
    Deps d = deps_of(p);
    *n = 0;
    for (const auto &x : d)
        *n += x.size();
    gs_kb_free(kb);
    gs_program_free(p);
    return d;
}

TEST(GS_KB_INDEX, RandomHistoriesGiveTheSameDependencies)
{
    size_t total = 0;
    for (uint32_t seed = kHbmSeeds[0]; seed <= kHbmSeeds[1]; seed++) {
        size_t n1 = 0, n2 = 0;
        Deps fast = random_program(seed, false, &n1);
        Deps full = random_program(seed, true, &n2);
        ASSERT_EQ(fast.size(), full.size()) << "seed " << seed;
        for (size_t i = 0; i < fast.size(); i++)
            ASSERT_EQ(fast[i], full[i]) << "seed " << seed << ", instruction " << i;
        total += n1;
    }
    // the mix produces dependencies (and so exercises the comparison)
    EXPECT_GT(total, 3000u);
}

// One SBUF tile [128 x kTileCols] fp32 whose columns are read and written at random: engine
// copies between column slices (partitions and widths at random, some whole-tile), DMA loads of
// columns from HBM and stores of columns to it.
constexpr uint32_t kTileCols = 512;

Deps random_tile_program(uint32_t seed, bool baseline, size_t *n)
{
    Baseline b(baseline);
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    gs_program *p = gs_program_create(&cfg);
    gs_kb *kb = gs_kb_create(p, 0);
    int64_t shape[2] = {128, kTileCols};
    gs_error err;
    gs_tensor t{};
    t.id = gs_program_add_tensor(p, "T", GS_FP32, GS_TENSOR_OUTPUT, 2, shape, &err);
    t.dtype = GS_FP32;
    t.ndim = 2;
    t.shape[0] = 128;
    t.shape[1] = kTileCols;
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "s", 1, kTileCols * 4);
    gs_tile tile = gs_tile_alloc(pool, GS_FP32, 128, kTileCols);
    const gs_engine engines[3] = {GS_ENG_VECTOR, GS_ENG_SCALAR, GS_ENG_GPSIMD};
    for (int i = 0; i < 3000 && gs_kb_ok(kb); i++) {
        uint32_t w = pick(0, 9) == 0 ? kTileCols / 2 : (uint32_t)pick(1, 4);
        // engines start a partition range at a multiple of its size: quarters of the tile
        const bool quarter = pick(0, 3) == 0;
        unsigned p0 = quarter ? 32u * (unsigned)pick(0, 3) : 0;
        unsigned np = quarter ? 32 : 128;
        uint32_t c0 = (uint32_t)pick(0, (int)(kTileCols - w));
        gs_ap col = gs_tile_view(&tile, p0, np, c0, w);
        switch (pick(0, 4)) {
        case 0:
            gs_dma_copy(kb, col, gs_hbm_rows(&t, p0, np, c0, w), -1);
            break;
        case 1:
            gs_dma_copy(kb, gs_hbm_rows(&t, p0, np, c0, w), col, -1);
            break;
        default: {
            uint32_t c1 = (uint32_t)pick(0, (int)(kTileCols - w));
            gs_tensor_copy(kb, engines[pick(0, 2)], gs_tile_view(&tile, p0, np, c1, w), col);
            break;
        }
        }
    }
    if (!gs_kb_ok(kb)) ADD_FAILURE() << gs_kb_error(kb)->message;
    Deps d = deps_of(p);
    *n = 0;
    for (const auto &x : d)
        *n += x.size();
    gs_kb_free(kb);
    gs_program_free(p);
    return d;
}

TEST(GS_KB_INDEX, RandomTileHistoriesGiveTheSameDependencies)
{
    size_t total = 0;
    for (uint32_t seed = kTileSeeds[0]; seed <= kTileSeeds[1]; seed++) {
        size_t n1 = 0, n2 = 0;
        Deps fast = random_tile_program(seed, false, &n1);
        Deps full = random_tile_program(seed, true, &n2);
        ASSERT_EQ(fast.size(), full.size()) << "seed " << seed;
        for (size_t i = 0; i < fast.size(); i++)
            ASSERT_EQ(fast[i], full[i]) << "seed " << seed << ", instruction " << i;
        total += n1;
    }
    EXPECT_GT(total, 10000u);
}

} // namespace
