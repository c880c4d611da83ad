// The facts the kernel builder keeps per distinct (interned) access pattern (program.h): a cached
// fact must equal the one computed afresh from the pattern, and the checks that depend on the
// builder's state (the tile now in a buffer, a released pool, the builder's core) must still run
// on every use of a pattern whose fixed checks passed before.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gs/builder.h"
#include "gs/config.h"
#include "job.h"
#include "kb_internal.h"
#include "program.h"
#include "shipped_configs.h"
#include "suite_job.h"
#include "test_config_builders.h"

namespace
{

std::vector<std::string> config_files()
{
    return gs_test_shipped_configs();
}

// Every operand of every instruction of p: interning it again finds the same copy, and the
// facts kept beside it equal the facts recomputed from the pattern. Counts into *checked.
void expect_facts_fresh(gs_program *p, const std::string &what, size_t *footprints, size_t *checked)
{
    for (size_t i = 0; i < gs_program_count(p); i++) {
        const gs_instr *in = gs_program_instr(p, i);
        const gs_ap *ops[] = {in->out[0], in->out[1], in->in[0], in->in[1], in->in[2]};
        for (const gs_ap *a : ops) {
            gs_ap_facts *f = nullptr;
            ASSERT_EQ(gs_program_intern(p, a, &f), a) << what << ": instruction " << i;
            ASSERT_NE(f, nullptr);
            if (f->known & GS_FACT_FOOTPRINT) {
                gs_ap_facts fresh;
                std::memset(&fresh, 0, sizeof fresh);
                gs_ap_footprint_facts(a, &fresh);
                ASSERT_EQ(f->lo, fresh.lo) << what << ": instruction " << i;
                ASSERT_EQ(f->hi, fresh.hi) << what << ": instruction " << i;
                ASSERT_EQ(f->p0, fresh.p0) << what << ": instruction " << i;
                ASSERT_EQ(f->p1, fresh.p1) << what << ": instruction " << i;
                ASSERT_EQ(f->dense, fresh.dense) << what << ": instruction " << i;
                // and the footprint is what it says: the bounding box of the pattern
                int64_t lo, hi;
                gs_ap_bbox(a, &lo, &hi);
                ASSERT_EQ(f->lo, lo);
                ASSERT_EQ(f->hi, hi);
                ++*footprints;
            }
            if ((f->known & GS_FACT_CHECKED) && a->space != GS_MEM_HBM) {
                const gs_buffer_info *bi = gs_program_buffer(p, a->tensor);
                ASSERT_NE(bi, nullptr) << what;
                ASSERT_EQ(f->buf_offset, bi->offset) << what << ": instruction " << i;
                ++*checked;
            }
        }
    }
}

class SuiteFacts : public testing::TestWithParam<std::string>
{
};

TEST_P(SuiteFacts, CachedFactsEqualRecomputedOnes)
{
    gs_config *cfg = gs_test_load_config(GetParam());
    ASSERT_NE(cfg, nullptr) << GetParam();
    size_t programs = 0, footprints = 0, checked = 0;
    for (size_t k = 0; k < gs_suite_count(); k++) {
        const gs_kernel_def *def = gs_suite_kernel(k);
        for (int v = 0; v < def->n_variants; v++)
            for (int s = 0; s < GS_SUITE_MAX_SHAPES && def->check_shapes[s].n; s++) {
                const gs_shape &sh = def->check_shapes[s];
                const gs_job_spec spec = gs_test_suite_spec(
                    cfg, def, v, (def->dtypes & (1u << GS_BF16)) ? GS_BF16 : GS_FP32, sh);
                gs_job *job = nullptr;
                gs_error err;
                gs_error_clear(&err);
                if (gs_job_build(&spec, &job, &err) == GS_OK) {
                    std::string what = std::string(def->name) + "/" + def->variants[v];
                    // interning an existing pattern only finds it: the program is not changed
                    gs_program *p = const_cast<gs_program *>(gs_job_program(job));
                    expect_facts_fresh(p, what, &footprints, &checked);
                    programs++;
                }
                gs_job_free(job);
                if (HasFatalFailure()) break;
            }
    }
    gs_config_free(cfg);
    std::printf("%zu programs, %zu footprints and %zu checks compared\n", programs, footprints,
                checked);
    EXPECT_GT(programs, 20u);
    EXPECT_GT(footprints, 1000u);
    EXPECT_GT(checked, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Configs, SuiteFacts, testing::ValuesIn(config_files()),
                         [](const testing::TestParamInfo<std::string> &i) {
                             return gs_test_config_name(i.param);
                         });

struct Fixture {
    gs_config cfg;
    gs_program *p = nullptr;
    gs_kb *kb = nullptr;
    Fixture()
    {
        gs_test_config_gen2_like(&cfg);
        p = gs_program_create(&cfg);
        kb = gs_kb_create(p, 0);
    }
    ~Fixture()
    {
        gs_kb_free(kb);
        gs_program_free(p);
    }
    std::string error(const gs_kb *k) { return gs_kb_error(k)->message; }
};

// A view checked once (its fixed facts cached) and used again after its buffer was handed to a
// smaller tile: the second use must fail (stale), though its pattern's checks are cached.
TEST(KbFacts, ReusedViewSeesTheTileNowInItsBuffer)
{
    Fixture f;
    gs_pool *pool = gs_pool_create(f.kb, GS_MEM_SBUF, "one", 1, 1024);
    gs_tile big = gs_tile_alloc(pool, GS_FP32, 128, 256);
    gs_ap view = gs_tile_view(&big, 0, 128, 0, 256);
    ASSERT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, view, 0.0f), GS_OK) << f.error(f.kb);
    ASSERT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, view, 1.0f), GS_OK) << f.error(f.kb);
    gs_tile small = gs_tile_alloc(pool, GS_FP32, 128, 64); // the same (only) buffer, smaller
    ASSERT_EQ(small.ap.tensor, big.ap.tensor);
    EXPECT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, view, 2.0f), GS_ERR_INVALID);
    EXPECT_NE(f.error(f.kb).find("stale tile: tile 1 of pool 'one'"), std::string::npos)
        << f.error(f.kb);
    EXPECT_EQ(gs_program_count(f.p), 2u);

    // the same pattern (checked and cached) through the newer tile's handle is fine: the
    // allocation number is the handle's, not the interned pattern's
    Fixture g;
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "one", 1, 1024);
    gs_tile old_tile = gs_tile_alloc(q, GS_FP32, 128, 64);
    ASSERT_EQ(gs_memset(g.kb, GS_ENG_VECTOR, old_tile.ap, 0.0f), GS_OK) << g.error(g.kb);
    gs_tile new_tile = gs_tile_alloc(q, GS_FP32, 128, 64);
    ASSERT_EQ(gs_memset(g.kb, GS_ENG_VECTOR, new_tile.ap, 1.0f), GS_OK) << g.error(g.kb);
    EXPECT_EQ(gs_memset(g.kb, GS_ENG_VECTOR, old_tile.ap, 1.0f), GS_ERR_INVALID);
    EXPECT_NE(g.error(g.kb).find("stale tile: tile 1 of pool 'one'"), std::string::npos)
        << g.error(g.kb);

    // a pattern widened by hand past its (current) tile: the bounds check still speaks
    Fixture k;
    gs_pool *r = gs_pool_create(k.kb, GS_MEM_SBUF, "one", 1, 1024);
    gs_tile narrow = gs_tile_alloc(r, GS_FP32, 32, 64);
    gs_ap wide = narrow.ap;
    wide.part_count = 128;
    EXPECT_EQ(gs_memset(k.kb, GS_ENG_VECTOR, wide, 1.0f), GS_ERR_BOUNDS);
    EXPECT_NE(k.error(k.kb).find("partitions [0, 128) outside its tile's 32 partitions"),
              std::string::npos)
        << k.error(k.kb);
}

// A tile checked on its own core and then named by another core's builder: the core check runs on
// every use, not once per pattern.
TEST(KbFacts, ReusedViewOnAnotherCoreIsRefused)
{
    Fixture f;
    ASSERT_GE(f.cfg.cores.v, 2.0);
    gs_pool *pool = gs_pool_create(f.kb, GS_MEM_SBUF, "c0", 1, 1024);
    gs_tile t = gs_tile_alloc(pool, GS_FP32, 128, 64);
    ASSERT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, t.ap, 0.0f), GS_OK) << f.error(f.kb);
    gs_kb *kb1 = gs_kb_create(f.p, 1);
    ASSERT_NE(kb1, nullptr);
    EXPECT_EQ(gs_memset(kb1, GS_ENG_VECTOR, t.ap, 1.0f), GS_ERR_INVALID);
    EXPECT_NE(f.error(kb1).find("tile of core 0 used on core 1"), std::string::npos)
        << f.error(kb1);
    gs_kb_free(kb1);
    EXPECT_EQ(gs_program_count(f.p), 1u);
}

// A pattern that failed its fixed checks is checked again on its next use (only success is
// cached): a second builder of the same program reports the same error.
TEST(KbFacts, FailedChecksAreNotCached)
{
    Fixture f;
    int64_t shape[2] = {64, 64};
    gs_error err;
    int32_t id = gs_program_add_tensor(f.p, "A", GS_BF16, GS_TENSOR_INPUT, 2, shape, &err);
    ASSERT_GE(id, 0);
    gs_ap bad;
    std::memset(&bad, 0, sizeof bad);
    bad.space = GS_MEM_HBM;
    bad.dtype = GS_BF16;
    bad.tensor = id;
    bad.part_count = 64;
    bad.part_stride = 64;
    bad.offset = 64; // one row past the end
    bad.ndim = 1;
    bad.shape[0] = 64;
    bad.stride[0] = 1;
    gs_pool *pool = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 256);
    gs_tile t = gs_tile_alloc(pool, GS_BF16, 64, 64);
    EXPECT_EQ(gs_dma_copy(f.kb, t.ap, bad, 0), GS_ERR_BOUNDS);
    std::string first = f.error(f.kb);
    EXPECT_NE(first.find("outside tensor 'A'"), std::string::npos) << first;
    gs_kb *kb2 = gs_kb_create(f.p, 0);
    gs_pool *pool2 = gs_pool_create(kb2, GS_MEM_SBUF, "y", 1, 256);
    gs_tile t2 = gs_tile_alloc(pool2, GS_BF16, 64, 64);
    EXPECT_EQ(gs_dma_copy(kb2, t2.ap, bad, 0), GS_ERR_BOUNDS);
    EXPECT_NE(f.error(kb2).find("outside tensor 'A'"), std::string::npos) << f.error(kb2);
    gs_kb_free(kb2);
    EXPECT_EQ(gs_program_count(f.p), 0u);
}

// The engines a builder takes from its config once (gs_kb.engines): an instruction on an engine
// the config lacks is refused, on one it has accepted, as gs_config_has_engine says.
TEST(KbFacts, EnginesAreTheConfigs)
{
    int seen[2] = {0, 0}; // configs without and with the engine
    for (auto make : {gs_test_config_gen1_like, gs_test_config_gen2_like}) {
        gs_config cfg;
        make(&cfg);
        gs_program *p = gs_program_create(&cfg);
        gs_kb *kb = gs_kb_create(p, 0);
        gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, 256);
        gs_tile t = gs_tile_alloc(pool, GS_FP32, 128, 64);
        gs_status st = gs_memset(kb, GS_ENG_GPSIMD, t.ap, 0.0f);
        seen[gs_config_has_engine(&cfg, GS_ENG_GPSIMD) ? 1 : 0]++;
        if (gs_config_has_engine(&cfg, GS_ENG_GPSIMD)) {
            EXPECT_EQ(st, GS_OK) << gs_kb_error(kb)->message;
            EXPECT_EQ(gs_program_count(p), 1u);
        } else {
            EXPECT_EQ(st, GS_ERR_UNSUPPORTED);
            EXPECT_NE(std::string(gs_kb_error(kb)->message)
                          .find("unsupported: memset on the gpsimd engine (not present on this "
                                "target)"),
                      std::string::npos)
                << gs_kb_error(kb)->message;
            EXPECT_EQ(gs_program_count(p), 0u);
        }
        gs_kb_free(kb);
        gs_program_free(p);
    }
    EXPECT_EQ(seen[0], 1);
    EXPECT_EQ(seen[1], 1);
}

// The builder's inline free-element count is gs_ap_free_elems.
TEST(KbFacts, InlineFreeElemsIsTheLibraryOne)
{
    gs_ap a;
    std::memset(&a, 0, sizeof a);
    EXPECT_EQ(gs_kb_free_elems(&a), gs_ap_free_elems(&a)); // ndim 0
    EXPECT_EQ(gs_kb_free_elems(nullptr), gs_ap_free_elems(nullptr));
    for (uint8_t nd = 1; nd <= GS_AP_MAX_DIMS + 1; nd++) {
        a.ndim = nd;
        for (int k = 0; k < GS_AP_MAX_DIMS; k++)
            a.shape[k] = (uint32_t)(3 + 5 * k);
        EXPECT_EQ(gs_kb_free_elems(&a), gs_ap_free_elems(&a)) << (int)nd;
        a.shape[0] = 0;
        EXPECT_EQ(gs_kb_free_elems(&a), gs_ap_free_elems(&a)) << (int)nd;
    }
}

} // namespace
