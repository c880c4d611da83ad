// Tests for the kernel builder (gs/kernel.h): dependency derivation, allocation and operand
// errors, and the functional executor (gs/exec.h) on small programs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gs/exec.h"
#include "gs/builder.h"
#include "test_config_builders.h"

namespace
{

struct Fixture {
    gs_config cfg;
    gs_program *p = nullptr;
    gs_kb *kb = nullptr;
    explicit Fixture(void (*make)(gs_config *) = gs_test_config_gen2_like)
    {
        make(&cfg);
        p = gs_program_create(&cfg);
        kb = gs_kb_create(p, 0);
    }
    ~Fixture()
    {
        gs_kb_free(kb);
        gs_program_free(p);
    }
    gs_tensor tensor(const char *name, gs_dtype t, int64_t r, int64_t c,
                     gs_tensor_kind kind = GS_TENSOR_INPUT)
    {
        int64_t shape[2] = {r, c};
        gs_error err;
        int32_t id = gs_program_add_tensor(p, name, t, kind, 2, shape, &err);
        EXPECT_GE(id, 0) << err.message;
        gs_tensor h{};
        h.id = id;
        h.dtype = t;
        h.ndim = 2;
        h.shape[0] = r;
        h.shape[1] = c;
        return h;
    }
    const gs_instr *last() { return gs_program_instr(p, gs_program_count(p) - 1); }
    std::vector<uint32_t> deps_of(size_t i)
    {
        const gs_instr *in = gs_program_instr(p, i);
        std::vector<uint32_t> d(in->deps, in->deps + in->n_deps);
        std::sort(d.begin(), d.end());
        return d;
    }
    std::string error() { return gs_kb_error(kb)->message; }
};

TEST(Builder, CapsComeFromTheConfig)
{
    Fixture f;
    const gs_caps *c = gs_kb_caps(f.kb);
    EXPECT_EQ(c->partitions, (unsigned)f.cfg.partitions.v);
    EXPECT_EQ(c->pe_rows, (unsigned)f.cfg.tensor.rows.v);
    EXPECT_EQ(c->sbuf_partition_bytes, (uint64_t)(f.cfg.sbuf_bytes.v / f.cfg.partitions.v));
    EXPECT_EQ(c->psum_bank_bytes,
              (uint64_t)(f.cfg.psum_bytes.v / f.cfg.partitions.v / f.cfg.psum_banks.v));
    EXPECT_TRUE(c->has_gpsimd);
    Fixture g(gs_test_config_gen1_like);
    EXPECT_FALSE(gs_kb_caps(g.kb)->has_gpsimd);
}

TEST(Builder, RawWarWawDependencies)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 128, 512);
    gs_tensor C = f.tensor("C", GS_BF16, 128, 512, GS_TENSOR_OUTPUT);
    gs_pool *pool = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(pool, GS_BF16, 128, 512);
    ASSERT_EQ(gs_dma_copy(f.kb, t.ap, gs_hbm_rows(&A, 0, 128, 0, 512), 0), GS_OK); // 0
    ASSERT_EQ(gs_activation(f.kb, t.ap, t.ap, GS_ACT_EXP, gs_imm(1), gs_imm(0), nullptr),
              GS_OK);                                                              // 1
    ASSERT_EQ(gs_dma_copy(f.kb, gs_hbm_rows(&C, 0, 128, 0, 512), t.ap, 1), GS_OK); // 2
    // same buffer again (bufs=1): the new load must wait for the store's read (WAR) and
    // the activation's write (WAW)
    gs_tile t2 = gs_tile_alloc(pool, GS_BF16, 128, 512);
    ASSERT_EQ(gs_dma_copy(f.kb, t2.ap, gs_hbm_rows(&A, 0, 128, 0, 512), 2), GS_OK); // 3
    EXPECT_EQ(f.deps_of(0), std::vector<uint32_t>{});
    EXPECT_EQ(f.deps_of(1), std::vector<uint32_t>{0});
    EXPECT_EQ(f.deps_of(2), std::vector<uint32_t>{1});
    // 3 overwrites the tile: WAW on 1 and WAR on 2 (0's record was pruned by 1's dense write)
    EXPECT_EQ(f.deps_of(3), (std::vector<uint32_t>{1, 2}));
}

TEST(Builder, DoubleBufferingRemovesFalseDependencies)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 128, 1024);
    gs_pool *pool = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 2, 1024);
    gs_tile t0 = gs_tile_alloc(pool, GS_BF16, 128, 512);
    gs_dma_copy(f.kb, t0.ap, gs_hbm_rows(&A, 0, 128, 0, 512), -1); // 0
    gs_tile t1 = gs_tile_alloc(pool, GS_BF16, 128, 512);
    gs_dma_copy(f.kb, t1.ap, gs_hbm_rows(&A, 0, 128, 512, 512), -1); // 1
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    EXPECT_NE(t0.ap.tensor, t1.ap.tensor);
    EXPECT_TRUE(f.deps_of(1).empty());
    EXPECT_NE(gs_program_instr(f.p, 0)->queue, gs_program_instr(f.p, 1)->queue)
        << "queue -1 round-robins";
}

TEST(Builder, PartialOverlapIsExact)
{
    Fixture f;
    gs_pool *pool = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 2048);
    gs_tile t = gs_tile_alloc(pool, GS_FP32, 128, 512);
    // write columns [0,256) then read [256,512): disjoint -> no dependency
    gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 0, 128, 0, 256), 1.0f);   // 0
    gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 0, 128, 256, 256), 2.0f); // 1
    // read [255, 257): overlaps both
    gs_tile o = gs_tile_alloc(gs_pool_create(f.kb, GS_MEM_SBUF, "o", 1, 64), GS_FP32, 128, 2);
    gs_tensor_copy(f.kb, GS_ENG_VECTOR, o.ap, gs_tile_view(&t, 0, 128, 255, 2)); // 2
    // different partitions: [0,32) vs [32,64) of the same columns
    gs_memset(f.kb, GS_ENG_GPSIMD, gs_tile_view(&t, 32, 32, 0, 256), 3.0f); // 3
    // strided even/odd columns interleaved: exact check says disjoint
    gs_ap even = gs_tile_view2(&t, 0, 32, 0, 64, 1, 2);
    gs_ap odd = gs_tile_view2(&t, 0, 32, 1, 64, 1, 2);
    gs_memset(f.kb, GS_ENG_VECTOR, even, 4.0f); // 4
    gs_memset(f.kb, GS_ENG_GPSIMD, odd, 5.0f);  // 5
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    EXPECT_TRUE(f.deps_of(1).empty());
    EXPECT_EQ(f.deps_of(2), (std::vector<uint32_t>{0, 1}));
    // 3 writes partitions [32,64) of columns [0,256): WAW with 0, WAR with 2 (column 255)
    EXPECT_EQ(f.deps_of(3), (std::vector<uint32_t>{0, 2}));
    // 4 writes even columns < 128 of partitions [0,32): WAW with 0 only
    EXPECT_EQ(f.deps_of(4), (std::vector<uint32_t>{0}));
    // 5 writes the odd columns: the exact check sees it is disjoint from 4
    EXPECT_EQ(f.deps_of(5), (std::vector<uint32_t>{0}));
}

TEST(Builder, PoolsRunOutCleanly)
{
    Fixture f;
    uint64_t cap = gs_kb_caps(f.kb)->sbuf_partition_bytes;
    EXPECT_NE(gs_pool_create(f.kb, GS_MEM_SBUF, "big", 1, cap / 2), nullptr);
    EXPECT_EQ(gs_pool_create(f.kb, GS_MEM_SBUF, "too-big", 2, cap / 2), nullptr);
    EXPECT_EQ(gs_kb_status(f.kb), GS_ERR_DOES_NOT_FIT);
    EXPECT_NE(f.error().find("does not fit: pool 'too-big'"), std::string::npos) << f.error();
    EXPECT_NE(std::string(gs_kb_error(f.kb)->file).find("test_builder.cpp"), std::string::npos);
    EXPECT_GT(gs_kb_error(f.kb)->line, 0);
    // later calls are no-ops
    EXPECT_EQ(gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 64), nullptr);
}

TEST(Builder, PoolReleaseReusesSpaceAndTracksHighWater)
{
    Fixture f;
    uint64_t cap = gs_kb_caps(f.kb)->sbuf_partition_bytes;
    gs_pool *a = gs_pool_create(f.kb, GS_MEM_SBUF, "a", 1, cap * 3 / 4);
    gs_pool_release(f.kb, a);
    EXPECT_NE(gs_pool_create(f.kb, GS_MEM_SBUF, "b", 1, cap * 3 / 4), nullptr);
    EXPECT_TRUE(gs_kb_ok(f.kb)) << f.error();
    EXPECT_GE(gs_program_sbuf_high_water(f.p), cap * 3 / 4);
    EXPECT_LE(gs_program_sbuf_high_water(f.p), cap);
}

// Regression: a pool created after gs_pool_release reuses the released bytes under new buffer
// ids; its first writes must still wait for the old tiles' last accesses (bmm and mlp/unfused
// gave wrong results through the model before this was tracked).
TEST(Builder, ReleasedPoolBytesKeepTheirDependencies)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 128, 256);
    gs_tensor C = f.tensor("C", GS_BF16, 128, 256, GS_TENSOR_OUTPUT);
    gs_pool *p1 = gs_pool_create(f.kb, GS_MEM_SBUF, "first", 1, 512);
    gs_tile t1 = gs_tile_alloc(p1, GS_BF16, 128, 256);
    gs_dma_copy(f.kb, t1.ap, gs_hbm_rows(&A, 0, 128, 0, 256), 0); // 0: write
    gs_dma_copy(f.kb, gs_hbm_rows(&C, 0, 128, 0, 256), t1.ap, 1); // 1: read
    gs_pool_release(f.kb, p1);
    gs_pool *p2 = gs_pool_create(f.kb, GS_MEM_SBUF, "second", 2, 256);
    gs_tile t2 = gs_tile_alloc(p2, GS_BF16, 128, 128);
    gs_tile t3 = gs_tile_alloc(p2, GS_BF16, 128, 128);
    gs_memset(f.kb, GS_ENG_VECTOR, t2.ap, 0.0f); // 2: bytes [0,256)
    gs_memset(f.kb, GS_ENG_VECTOR, t3.ap, 0.0f); // 3: bytes [256,512)
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    EXPECT_NE(t1.ap.tensor, t2.ap.tensor);
    EXPECT_EQ(f.deps_of(2), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(f.deps_of(3), (std::vector<uint32_t>{0, 1}));
    // the released tile itself may not be used again
    gs_memset(f.kb, GS_ENG_VECTOR, t1.ap, 1.0f);
    EXPECT_EQ(gs_kb_status(f.kb), GS_ERR_INVALID);
    EXPECT_NE(f.error().find("after its pool was released"), std::string::npos) << f.error();
}

TEST(Builder, TileLargerThanPoolBuffer)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "small", 2, 256);
    gs_tile_alloc(p, GS_FP32, 128, 65);
    EXPECT_EQ(gs_kb_status(f.kb), GS_ERR_DOES_NOT_FIT);
    EXPECT_NE(f.error().find("exceeds pool 'small'"), std::string::npos) << f.error();
}

TEST(Builder, AccessOutsideTileIsAnError)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 64, 100);
    gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 0, 64, 90, 20), 0.0f);
    EXPECT_EQ(gs_kb_status(f.kb), GS_ERR_BOUNDS);
    EXPECT_NE(f.error().find("outside tile of pool 'x'"), std::string::npos) << f.error();
    EXPECT_EQ(gs_program_count(f.p), 0u);
}

TEST(Builder, HbmViewOutsideTensor)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 100, 100);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 128, 100);
    gs_dma_copy(f.kb, t.ap, gs_hbm_rows(&A, 0, 128, 0, 100), -1);
    EXPECT_EQ(gs_kb_status(f.kb), GS_ERR_BOUNDS);
}

TEST(Builder, StrideOutsideInt32IsAnError)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 100, 100);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 2, 2);
    const uint32_t shape[1] = {2};
    const int64_t big[1] = {INT64_C(1) << 32};
    const int64_t one[1] = {1};
    // a free-dim stride that does not fit the 32-bit stride field
    gs_dma_copy(f.kb, t.ap, gs_hbm_ap(&A, 0, 2, 100, 1, shape, big), -1);
    EXPECT_EQ(gs_kb_status(f.kb), GS_ERR_INVALID);
    EXPECT_NE(f.error().find("does not fit in 32 bits"), std::string::npos) << f.error();
    EXPECT_EQ(gs_program_count(f.p), 0u);
    // the same for the partition stride
    Fixture g;
    gs_tensor B = g.tensor("B", GS_BF16, 100, 100);
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile u = gs_tile_alloc(q, GS_BF16, 2, 2);
    gs_dma_copy(g.kb, u.ap, gs_hbm_ap(&B, 0, 2, -(INT64_C(1) << 31) - 1, 1, shape, one), -1);
    EXPECT_EQ(gs_kb_status(g.kb), GS_ERR_INVALID);
    EXPECT_NE(g.error().find("does not fit in 32 bits"), std::string::npos) << g.error();
    // compact records: a pattern is 64 bytes; an instruction points to its five (gs/isa.h,
    // "Operand storage") instead of holding them
    EXPECT_EQ(sizeof(gs_ap), 64u);
    EXPECT_LE(sizeof(gs_instr), 88u); // integer immediates kept by the program, not the record
}

TEST(Builder, StartPartitionAlignment)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_FP32, 128, 64);
    EXPECT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 32, 32, 0, 64), 0.f), GS_OK);
    EXPECT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 64, 64, 0, 64), 0.f), GS_OK);
    EXPECT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 32, 64, 0, 64), 0.f), GS_ERR_INVALID);
    EXPECT_NE(f.error().find("start partition 32 not allowed for 64 partitions"), std::string::npos)
        << f.error();
}

// core.partition_quadrants sets the start-partition rule: with 2 halves of 128, 32 partitions
// must start at 0 or 64.
void halves(gs_config *c)
{
    gs_test_config_gen2_like(c);
    gs_test_num_set(&c->partition_quadrants, 2);
}

TEST(Builder, StartPartitionRuleFollowsTheConfig)
{
    Fixture f(halves);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_FP32, 128, 64);
    EXPECT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 64, 32, 0, 64), 0.f), GS_OK);
    EXPECT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 32, 32, 0, 64), 0.f), GS_ERR_INVALID);
    EXPECT_NE(f.error().find("start partition 32 not allowed for 32 partitions (must be a "
                             "multiple of 64)"),
              std::string::npos)
        << f.error();
}

// core.pool_alignment rounds each SBUF pool buffer up to its boundary.
void align256(gs_config *c)
{
    gs_test_config_gen2_like(c);
    gs_test_num_set(&c->pool_alignment, 256);
}

TEST(Builder, PoolBuffersStartOnTheConfiguredAlignment)
{
    for (int k = 0; k < 2; k++) {
        Fixture f(k ? align256 : gs_test_config_gen2_like);
        gs_pool_create(f.kb, GS_MEM_SBUF, "a", 1, 100);
        gs_pool_create(f.kb, GS_MEM_SBUF, "b", 1, 100);
        ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
        ASSERT_EQ(gs_program_buffer_count(f.p), 2u);
        EXPECT_EQ(gs_program_buffer(f.p, 1)->offset, k ? 256u : 128u);
    }
}

TEST(Builder, MatmulChecks)
{
    Fixture f;
    gs_pool *sb = gs_pool_create(f.kb, GS_MEM_SBUF, "s", 2, 2048);
    gs_pool *ps = gs_pool_create(f.kb, GS_MEM_PSUM, "p", 2, 2048);
    gs_tile st = gs_tile_alloc(sb, GS_BF16, 128, 128);
    gs_tile mv = gs_tile_alloc(sb, GS_BF16, 128, 512);
    gs_tile out = gs_tile_alloc(ps, GS_FP32, 128, 512);
    EXPECT_EQ(gs_matmul(f.kb, out.ap, st.ap, mv.ap, 0), GS_OK);
    // a moving free size the output can't hold in one bank
    Fixture g;
    gs_pool *sb2 = gs_pool_create(g.kb, GS_MEM_SBUF, "s", 1, 4096);
    gs_pool *ps2 = gs_pool_create(g.kb, GS_MEM_PSUM, "p", 1, 4096);
    gs_tile st2 = gs_tile_alloc(sb2, GS_BF16, 128, 128);
    gs_tile mv2 = gs_tile_alloc(sb2, GS_BF16, 128, 600);
    gs_tile out2 = gs_tile_alloc(ps2, GS_FP32, 128, 600);
    EXPECT_EQ(gs_matmul(g.kb, out2.ap, st2.ap, mv2.ap, 0), GS_ERR_INVALID);
    EXPECT_NE(g.error().find("exceeds the limit"), std::string::npos) << g.error();
    // an fp32 output in SBUF is not a PSUM tile
    Fixture h;
    gs_pool *sb3 = gs_pool_create(h.kb, GS_MEM_SBUF, "s", 3, 2048);
    gs_tile a = gs_tile_alloc(sb3, GS_BF16, 128, 128);
    gs_tile b = gs_tile_alloc(sb3, GS_BF16, 128, 128);
    gs_tile c = gs_tile_alloc(sb3, GS_FP32, 128, 128);
    EXPECT_EQ(gs_matmul(h.kb, c.ap, a.ap, b.ap, 0), GS_ERR_INVALID);
}

TEST(Builder, MissingEngineAndDtypeAreUnsupported)
{
    Fixture f(gs_test_config_gen1_like);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_FP32, 128, 64);
    EXPECT_EQ(gs_iota(f.kb, t.ap, 0, 1, 1), GS_ERR_UNSUPPORTED);
    EXPECT_NE(f.error().find("unsupported"), std::string::npos);
    Fixture g;
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile_alloc(q, GS_FP8_E4M3, 128, 64);
    gs_tile t8 = gs_tile_alloc(q, GS_FP8_E4M3, 128, 64);
    EXPECT_EQ(gs_memset(g.kb, GS_ENG_VECTOR, t8.ap, 0.f), GS_ERR_UNSUPPORTED);
}

TEST(Builder, FreeSizeLimit)
{
    Fixture f;
    unsigned lim = gs_kb_caps(f.kb)->max_free_psum;
    ASSERT_LE((uint64_t)(lim + 1) * 2, gs_kb_caps(f.kb)->psum_partition_bytes);
    gs_pool *ps = gs_pool_create(f.kb, GS_MEM_PSUM, "p", 1, (uint64_t)(lim + 1) * 2);
    gs_tile t = gs_tile_alloc(ps, GS_BF16, 128, lim + 1);
    EXPECT_EQ(gs_memset(f.kb, GS_ENG_VECTOR, t.ap, 0.f), GS_ERR_INVALID);
    EXPECT_NE(f.error().find("exceeds the engine limit"), std::string::npos) << f.error();
}

// ---- errors that teach: each range error names the tile or tensor, the range asked for
// against its extent, and the capability (caps field and config key) to size from ----

// Every substring of `want` appears in the builder's error.
static void expect_error_has(Fixture &f, gs_status code, std::initializer_list<std::string> want)
{
    EXPECT_EQ(gs_kb_status(f.kb), code) << f.error();
    for (const std::string &w : want)
        EXPECT_NE(f.error().find(w), std::string::npos)
            << "missing \"" << w << "\" in: " << f.error();
}

TEST(BuilderErrors, TileViewPartitionsOutOfRange)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "acts", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_FP32, 128, 64);
    gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 96, 64, 0, 64), 0.f);
    expect_error_has(f, GS_ERR_BOUNDS,
                     {"memset out0: view outside tile of pool 'acts'", "[128 x 64] fp32",
                      "partitions [96, 160) of 128 (out of range)",
                      "elements [0, 64) of 64 per partition;",
                      "SBUF has 128 partitions (caps.partitions, core.partitions)"});
    EXPECT_EQ(gs_program_count(f.p), 0u);
}

TEST(BuilderErrors, TileViewElementsOutOfRange)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 64, 100);
    gs_pool *q = gs_pool_create(f.kb, GS_MEM_SBUF, "y", 1, 1024);
    gs_tile out = gs_tile_alloc(q, GS_BF16, 64, 120);
    // 2-D: rows of 40 every 50 elements from 10 reach element 150 of 100
    gs_tensor_copy(f.kb, GS_ENG_VECTOR, out.ap, gs_tile_view2(&t, 0, 64, 10, 3, 40, 50));
    expect_error_has(f, GS_ERR_BOUNDS,
                     {"tensor_copy in0: view outside tile of pool 'x' (buffer 'x.0'",
                      "partitions [0, 64) of 64,",
                      "elements [10, 150) of 100 per partition (out of range)",
                      "size views from the tile (gs_tile_alloc)", "SBUF has 128 partitions"});
}

TEST(BuilderErrors, EmptyTileView)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_PSUM, "acc", 1, 2048);
    gs_tile t = gs_tile_alloc(p, GS_FP32, 128, 16);
    gs_memset(f.kb, GS_ENG_VECTOR, gs_tile_view(&t, 0, 0, 0, 16), 0.f);
    expect_error_has(f, GS_ERR_BOUNDS, {"empty view of tile of pool 'acc'", "0 partitions"});
}

TEST(BuilderErrors, HbmRowsOutOfRange)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 100, 100);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 128, 100);
    gs_dma_copy(f.kb, t.ap, gs_hbm_rows(&A, 0, 128, 0, 100), -1);
    expect_error_has(f, GS_ERR_BOUNDS,
                     {"dma_copy in0: view outside tensor 'A' (seen as [100 x 100] bf16)",
                      "rows [0, 128) of 100 (out of range)", "cols [0, 100) of 100;",
                      "rows map to partitions", "gs_tensor.shape",
                      "SBUF has 128 partitions (caps.partitions, core.partitions)"});
}

// The column start survives even where the flat offset r0 * C + c0 would hide it (c0 >= C).
TEST(BuilderErrors, HbmColsPastTheRowEnd)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 100, 100);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 2, 20);
    gs_dma_copy(f.kb, gs_hbm_rows(&A, 3, 2, 130, 20), t.ap, -1);
    expect_error_has(f, GS_ERR_BOUNDS,
                     {"dma_copy out0: view outside tensor 'A'", "rows [3, 5) of 100,",
                      "cols [130, 150) of 100 (out of range)"});
    Fixture g;
    gs_tensor B = g.tensor("B", GS_BF16, 100, 100);
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile u = gs_tile_alloc(q, GS_BF16, 2, 10);
    gs_dma_copy(g.kb, u.ap, gs_hbm_rows(&B, -1, 2, 0, 10), -1);
    expect_error_has(g, GS_ERR_BOUNDS, {"tensor 'B'", "rows [-1, 1) of 100 (out of range)"});
}

TEST(BuilderErrors, HbmColumnsOnPartitions)
{
    Fixture f;
    gs_tensor A = f.tensor("weights", GS_BF16, 100, 100);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 8, 10);
    gs_dma_copy(f.kb, t.ap, gs_hbm_cols(&A, 0, 10, 96, 8), -1);
    expect_error_has(f, GS_ERR_BOUNDS,
                     {"view outside tensor 'weights'", "rows [0, 10) of 100,",
                      "cols [96, 104) of 100 (out of range)", "columns map to partitions"});
}

TEST(BuilderErrors, HbmGeneralPattern)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_BF16, 100, 100);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile t = gs_tile_alloc(p, GS_BF16, 2, 20);
    const uint32_t shape[1] = {20};
    const int64_t one[1] = {1};
    gs_dma_copy(f.kb, t.ap, gs_hbm_ap(&A, 0, 2, 100, 0, shape, one), -1);
    expect_error_has(f, GS_ERR_INVALID, {"gs_hbm_ap view of tensor 'A' with 0 free dims"});
    // a well-formed pattern past the end of the tensor
    Fixture g;
    gs_tensor B = g.tensor("B", GS_BF16, 100, 100);
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile u = gs_tile_alloc(q, GS_BF16, 2, 20);
    gs_dma_copy(g.kb, u.ap, gs_hbm_ap(&B, 9990, 2, 100, 1, shape, one), -1);
    expect_error_has(g, GS_ERR_BOUNDS,
                     {"in0: elements [9990, 10110) outside tensor 'B' of 10000 elements",
                      "shape [100 x 100] bf16", "gs_tensor.shape"});
}

// A view made before its buffer went to a newer tile of the same (rotating) pool is stale,
// whether or not the newer tile covers it.
TEST(BuilderErrors, ViewOfAReallocatedBuffer)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "rot", 1, 1024);
    gs_tile big = gs_tile_alloc(p, GS_BF16, 128, 64);
    gs_ap v = gs_tile_view(&big, 64, 64, 0, 64);
    gs_tile_alloc(p, GS_BF16, 32, 64);
    gs_memset(f.kb, GS_ENG_VECTOR, v, 0.f);
    expect_error_has(f, GS_ERR_INVALID,
                     {"memset out0: stale tile: tile 1 of pool 'rot' (buffer 'rot.0')",
                      "gave its buffer to tile 2 (allocated at ", "test_builder.cpp:"});

    Fixture g; // a newer tile as large as the old one: the same bytes, still another tile
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "rot", 1, 1024);
    gs_tile first = gs_tile_alloc(q, GS_BF16, 128, 64);
    gs_tile second = gs_tile_alloc(q, GS_BF16, 128, 64);
    ASSERT_EQ(gs_memset(g.kb, GS_ENG_VECTOR, second.ap, 0.f), GS_OK) << g.error();
    gs_memset(g.kb, GS_ENG_VECTOR, first.ap, 0.f);
    expect_error_has(g, GS_ERR_INVALID, {"stale tile: tile 1 of pool 'rot'", "to tile 2"});

    Fixture k; // two buffers: a tile lives until the pool comes back to its buffer
    gs_pool *r = gs_pool_create(k.kb, GS_MEM_SBUF, "two", 2, 1024);
    gs_tile t0 = gs_tile_alloc(r, GS_BF16, 128, 64);
    gs_tile t1 = gs_tile_alloc(r, GS_BF16, 128, 64);
    ASSERT_EQ(gs_tensor_tensor(k.kb, t1.ap, t0.ap, t1.ap, GS_ALU_ADD), GS_OK) << k.error();
    gs_tile_alloc(r, GS_BF16, 128, 64); // t0's buffer again
    ASSERT_EQ(gs_memset(k.kb, GS_ENG_VECTOR, t1.ap, 0.f), GS_OK) << k.error();
    gs_memset(k.kb, GS_ENG_VECTOR, gs_tile_view(&t0, 0, 32, 0, 8), 0.f);
    expect_error_has(k, GS_ERR_INVALID,
                     {"stale tile: tile 1 of pool 'two' (buffer 'two.0')", "to tile 2"});
}

TEST(BuilderErrors, TileAllocPartitionsAndPoolSize)
{
    Fixture f;
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "wide", 1, 1024);
    gs_tile_alloc(p, GS_BF16, 160, 16);
    expect_error_has(f, GS_ERR_INVALID,
                     {"tile in pool 'wide': 160 partitions", "need 1..128 partitions",
                      "SBUF has 128 partitions, caps.partitions from core.partitions"});
    Fixture g;
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "small", 2, 256);
    gs_tile_alloc(q, GS_FP32, 128, 65);
    expect_error_has(g, GS_ERR_DOES_NOT_FIT,
                     {"exceeds pool 'small' buffers of 256 bytes", "caps.sbuf_partition_bytes"});
    Fixture h;
    uint64_t cap = gs_kb_caps(h.kb)->psum_partition_bytes;
    gs_pool_create(h.kb, GS_MEM_PSUM, "acc", 2, cap);
    expect_error_has(h, GS_ERR_DOES_NOT_FIT,
                     {"does not fit: pool 'acc'", "of psum",
                      "caps.psum_partition_bytes: core.psum.size / core.partitions"});
    Fixture k;
    gs_pool_create(k.kb, GS_MEM_SBUF, "huge", 1, gs_kb_caps(k.kb)->sbuf_partition_bytes + 1);
    expect_error_has(k, GS_ERR_DOES_NOT_FIT,
                     {"pool 'huge'", "caps.sbuf_partition_bytes: core.sbuf / core.partitions"});
    // more than 64 buffers (a K=8192 matmul keeping its 64 K-tiles of two operands: the
    // tutorial's block-free rung) is a pool like any other; what decides is the space
    Fixture m;
    gs_pool *many = gs_pool_create(m.kb, GS_MEM_SBUF, "many", 128, 1024);
    ASSERT_NE(many, nullptr) << m.error();
    gs_tile last{};
    for (int i = 0; i < 128; i++)
        last = gs_tile_alloc(many, GS_BF16, 128, 512);
    ASSERT_EQ(gs_memset(m.kb, GS_ENG_VECTOR, last.ap, 0.f), GS_OK) << m.error();
    Fixture n; // 4096 buffers of 1 KiB: more than the partition holds
    gs_pool_create(n.kb, GS_MEM_SBUF, "lots", 4096, 1024);
    expect_error_has(n, GS_ERR_DOES_NOT_FIT, {"does not fit: pool 'lots' needs 4096 x 1024"});
    Fixture o; // past the bound: refused by name, no overflow in the size arithmetic
    gs_pool_create(o.kb, GS_MEM_SBUF, "absurd", GS_POOL_MAX_BUFS + 1, 1);
    expect_error_has(o, GS_ERR_INVALID, {"pool 'absurd': 65537 buffers", "need 1..65536 buffers"});
}

static void gen2_with_64_pe_rows(gs_config *c)
{
    gs_test_config_gen2_like(c);
    c->tensor.rows.v = 64;
}

TEST(BuilderErrors, MatmulSizesNameOperandAndCapability)
{
    Fixture f(gen2_with_64_pe_rows);
    gs_pool *sb = gs_pool_create(f.kb, GS_MEM_SBUF, "weights", 1, 1024);
    gs_pool *mv = gs_pool_create(f.kb, GS_MEM_SBUF, "acts", 1, 1024);
    gs_pool *ps = gs_pool_create(f.kb, GS_MEM_PSUM, "acc", 1, 2048);
    gs_tile st = gs_tile_alloc(sb, GS_BF16, 128, 128);
    gs_tile m = gs_tile_alloc(mv, GS_BF16, 128, 256);
    gs_tile o = gs_tile_alloc(ps, GS_FP32, 128, 256);
    gs_matmul(f.kb, o.ap, st.ap, m.ap, 0);
    expect_error_has(f, GS_ERR_INVALID,
                     {"contraction 128 exceeds 64 PE rows", "stationary tile of pool 'weights'",
                      "moving tile of pool 'acts'", "caps.pe_rows, from engines.tensor.rows"});

    Fixture g;
    gs_pool *sb2 = gs_pool_create(g.kb, GS_MEM_SBUF, "weights", 1, 1024);
    gs_pool *ps2 = gs_pool_create(g.kb, GS_MEM_PSUM, "acc", 1, 2048);
    gs_tile st2 = gs_tile_alloc(sb2, GS_BF16, 128, 200);
    gs_tile o2 = gs_tile_alloc(ps2, GS_FP32, 128, 200);
    gs_matmul(g.kb, gs_tile_view(&o2, 0, 128, 0, 128), st2.ap, gs_tile_view(&st2, 0, 128, 0, 128),
              0);
    expect_error_has(g, GS_ERR_INVALID,
                     {"stationary free size 200 exceeds 128 PE columns",
                      "stationary tile of pool 'weights'",
                      "caps.pe_cols, from engines.tensor.cols"});

    Fixture h;
    gs_pool *sb3 = gs_pool_create(h.kb, GS_MEM_SBUF, "s", 1, 4096);
    gs_pool *ps3 = gs_pool_create(h.kb, GS_MEM_PSUM, "p", 1, 4096);
    gs_tile st3 = gs_tile_alloc(sb3, GS_BF16, 128, 128);
    gs_tile mv3 = gs_tile_alloc(sb3, GS_BF16, 128, 600);
    gs_tile out3 = gs_tile_alloc(ps3, GS_FP32, 128, 600);
    gs_matmul(h.kb, out3.ap, st3.ap, mv3.ap, 0);
    expect_error_has(h, GS_ERR_INVALID,
                     {"moving free size 600 exceeds the limit of 512", "moving tile of pool 's'",
                      "caps.moving_free_max, from engines.tensor.moving_free_max"});

    // 512 fp32 columns fill one 2 KiB bank exactly; starting at column 256 straddles two
    Fixture k;
    gs_pool *sb4 = gs_pool_create(k.kb, GS_MEM_SBUF, "s", 1, 2048);
    gs_pool *ps4 = gs_pool_create(k.kb, GS_MEM_PSUM, "acc", 1, 4096);
    gs_tile st4 = gs_tile_alloc(sb4, GS_BF16, 128, 128);
    gs_tile mv4 = gs_tile_alloc(sb4, GS_BF16, 128, 512);
    gs_tile out4 = gs_tile_alloc(ps4, GS_FP32, 128, 1024);
    gs_matmul(k.kb, gs_tile_view(&out4, 0, 128, 256, 512), st4.ap, mv4.ap, 0);
    expect_error_has(k, GS_ERR_INVALID,
                     {"does not fit one PSUM bank (2048 bytes per partition",
                      "output tile of pool 'acc'",
                      "core.psum.size / core.partitions / core.psum.banks"});
}

TEST(BuilderErrors, FreeLimitAndQueueNameTheirCapability)
{
    Fixture f;
    unsigned lim = gs_kb_caps(f.kb)->max_free_psum;
    gs_pool *ps = gs_pool_create(f.kb, GS_MEM_PSUM, "p", 1, (uint64_t)(lim + 1) * 2);
    gs_tile t = gs_tile_alloc(ps, GS_BF16, 128, lim + 1);
    gs_memset(f.kb, GS_ENG_VECTOR, t.ap, 0.f);
    expect_error_has(
        f, GS_ERR_INVALID,
        {"exceeds the engine limit", "caps.max_free_psum, engines.vector.max_free_psum"});
    Fixture g;
    gs_tensor A = g.tensor("A", GS_BF16, 128, 64);
    gs_pool *q = gs_pool_create(g.kb, GS_MEM_SBUF, "x", 1, 1024);
    gs_tile u = gs_tile_alloc(q, GS_BF16, 128, 64);
    gs_dma_copy(g.kb, u.ap, gs_hbm_rows(&A, 0, 128, 0, 64), 99);
    expect_error_has(g, GS_ERR_INVALID,
                     {"DMA queue 99 does not exist", "caps.dma_queues, from core.dma.queues"});
}

// ---- executor ----

static float get(gs_mem *m, const gs_program *p, int32_t id, size_t i)
{
    return gs_dtype_load(gs_program_tensor(p, id)->dtype, gs_mem_tensor(m, id), i);
}

TEST(Executor, RoundTripThroughSbufWithActivationAndAccumulate)
{
    Fixture f;
    gs_tensor A = f.tensor("A", GS_FP32, 4, 8);
    gs_tensor S = f.tensor("S", GS_FP32, 4, 1, GS_TENSOR_OUTPUT);
    gs_tensor C = f.tensor("C", GS_BF16, 4, 8, GS_TENSOR_OUTPUT);
    gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 3, 64);
    gs_tile a = gs_tile_alloc(p, GS_FP32, 4, 8);
    gs_tile s = gs_tile_alloc(p, GS_FP32, 4, 1);
    gs_tile c = gs_tile_alloc(p, GS_BF16, 4, 8);
    gs_dma_copy(f.kb, a.ap, gs_hbm_rows(&A, 0, 4, 0, 8), -1);
    gs_activation(f.kb, c.ap, a.ap, GS_ACT_SQUARE, gs_imm(2.0f), gs_imm(1.0f), &s.ap);
    gs_dma_copy(f.kb, gs_hbm_rows(&C, 0, 4, 0, 8), c.ap, -1);
    gs_dma_copy(f.kb, gs_hbm_rows(&S, 0, 4, 0, 1), s.ap, -1);
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    gs_error err;
    gs_mem *m = gs_mem_create(f.p, &err);
    ASSERT_NE(m, nullptr);
    float *ad = (float *)gs_mem_tensor(m, A.id);
    for (int i = 0; i < 32; i++)
        ad[i] = 0.1f * (float)i - 1.0f;
    ASSERT_EQ(gs_exec_program(m, f.p, &err), GS_OK) << err.message;
    for (int r = 0; r < 4; r++) {
        double sum = 0;
        for (int j = 0; j < 8; j++) {
            float x = ad[r * 8 + j] * 2.0f + 1.0f;
            float want = gs_dtype_round(GS_BF16, x * x);
            EXPECT_EQ(get(m, f.p, C.id, (size_t)(r * 8 + j)), want);
            sum += (double)(x * x);
        }
        EXPECT_NEAR(get(m, f.p, S.id, (size_t)r), sum, 1e-5 * std::fabs(sum));
    }
    gs_mem_free(m);
}

// tensor_scalar with negative operands and inputs, non-commutative ops and both operand
// forms in both positions (immediate first then per-partition, and the reverse): out = (x op0
// s0) op1 s1 exactly as fp32 computes it. A sign dropped from an operand or the input, or the
// operands swapped, changes the result.
TEST(Executor, TensorScalarKeepsSignsAndOperandOrder)
{
    const int P = 4, N = 8;
    for (int order = 0; order < 2; order++) {
        Fixture f;
        gs_tensor X = f.tensor("X", GS_FP32, P, N);
        gs_tensor S = f.tensor("S", GS_FP32, P, 1);
        gs_tensor Y = f.tensor("Y", GS_FP32, P, N, GS_TENSOR_OUTPUT);
        gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 3, 64);
        gs_tile x = gs_tile_alloc(p, GS_FP32, P, N);
        gs_tile s = gs_tile_alloc(p, GS_FP32, P, 1);
        gs_tile y = gs_tile_alloc(p, GS_FP32, P, N);
        gs_dma_copy(f.kb, x.ap, gs_hbm_rows(&X, 0, P, 0, N), -1);
        gs_dma_copy(f.kb, s.ap, gs_hbm_rows(&S, 0, P, 0, 1), -1);
        const float imm = -3.0f;
        if (order == 0)
            gs_tensor_scalar(f.kb, GS_ENG_VECTOR, y.ap, x.ap, GS_ALU_SUB, gs_imm(imm), GS_ALU_DIV,
                             gs_per_partition(s.ap));
        else
            gs_tensor_scalar(f.kb, GS_ENG_VECTOR, y.ap, x.ap, GS_ALU_DIV, gs_per_partition(s.ap),
                             GS_ALU_SUB, gs_imm(imm));
        gs_dma_copy(f.kb, gs_hbm_rows(&Y, 0, P, 0, N), y.ap, -1);
        ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
        gs_error err;
        gs_mem *m = gs_mem_create(f.p, &err);
        ASSERT_NE(m, nullptr);
        float *xd = (float *)gs_mem_tensor(m, X.id), *sd = (float *)gs_mem_tensor(m, S.id);
        for (int i = 0; i < P * N; i++)
            xd[i] = 0.5f * (float)i - 7.0f; // negative and positive, zero included
        const float per_part[P] = {-2.0f, 4.0f, -0.5f, 8.0f};
        for (int r = 0; r < P; r++)
            sd[r] = per_part[r];
        ASSERT_EQ(gs_exec_program(m, f.p, &err), GS_OK) << err.message;
        for (int r = 0; r < P; r++)
            for (int j = 0; j < N; j++) {
                const float xv = xd[r * N + j];
                const float want = order == 0 ? (xv - imm) / per_part[r] : xv / per_part[r] - imm;
                EXPECT_EQ(get(m, f.p, Y.id, (size_t)(r * N + j)), want)
                    << "order " << order << " at [" << r << ", " << j << "]";
            }
        gs_mem_free(m);
    }
}

TEST(Executor, MatmulAccumulatesInPsum)
{
    Fixture f;
    const int K = 3, M = 2, N = 4;
    gs_tensor AT = f.tensor("AT", GS_FP32, K, M);
    gs_tensor B = f.tensor("B", GS_FP32, K, N);
    gs_tensor C = f.tensor("C", GS_FP32, M, N, GS_TENSOR_OUTPUT);
    gs_pool *sb = gs_pool_create(f.kb, GS_MEM_SBUF, "s", 3, 64);
    gs_pool *ps = gs_pool_create(f.kb, GS_MEM_PSUM, "p", 1, 64);
    gs_tile at = gs_tile_alloc(sb, GS_FP32, K, M);
    gs_tile b = gs_tile_alloc(sb, GS_FP32, K, N);
    gs_tile c = gs_tile_alloc(sb, GS_FP32, M, N);
    gs_tile acc = gs_tile_alloc(ps, GS_FP32, M, N);
    gs_dma_copy(f.kb, at.ap, gs_hbm_rows(&AT, 0, K, 0, M), -1);
    gs_dma_copy(f.kb, b.ap, gs_hbm_rows(&B, 0, K, 0, N), -1);
    gs_matmul(f.kb, acc.ap, at.ap, b.ap, 0);
    gs_matmul(f.kb, acc.ap, at.ap, b.ap, 1); // accumulate: 2 * A x B
    gs_tensor_copy(f.kb, GS_ENG_SCALAR, c.ap, acc.ap);
    gs_dma_copy(f.kb, gs_hbm_rows(&C, 0, M, 0, N), c.ap, -1);
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    // the second matmul depends on the first (accumulation reads PSUM)
    const gs_instr *mm2 = gs_program_instr(f.p, 3);
    ASSERT_EQ(mm2->op, GS_OP_MATMUL);
    EXPECT_NE(std::find(mm2->deps, mm2->deps + mm2->n_deps, 2u), mm2->deps + mm2->n_deps);
    gs_error err;
    gs_mem *m = gs_mem_create(f.p, &err);
    float *atd = (float *)gs_mem_tensor(m, AT.id), *bd = (float *)gs_mem_tensor(m, B.id);
    for (int i = 0; i < K * M; i++)
        atd[i] = (float)(i + 1);
    for (int i = 0; i < K * N; i++)
        bd[i] = (float)(i % 5) - 2.0f;
    ASSERT_EQ(gs_exec_program(m, f.p, &err), GS_OK) << err.message;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int k = 0; k < K; k++)
                want += atd[k * M + i] * bd[k * N + j];
            EXPECT_EQ(get(m, f.p, C.id, (size_t)(i * N + j)), 2 * want);
        }
    gs_mem_free(m);
}

TEST(Executor, GatherChecksIndicesAtRunTime)
{
    Fixture f;
    gs_tensor T = f.tensor("T", GS_FP32, 10, 4);
    gs_tensor I = f.tensor("I", GS_INT32, 3, 1);
    gs_tensor O = f.tensor("O", GS_FP32, 3, 4, GS_TENSOR_OUTPUT);
    gs_pool *sb = gs_pool_create(f.kb, GS_MEM_SBUF, "s", 2, 64);
    gs_tile idx = gs_tile_alloc(sb, GS_INT32, 3, 1);
    gs_tile out = gs_tile_alloc(sb, GS_FP32, 3, 4);
    gs_dma_copy(f.kb, idx.ap, gs_hbm_rows(&I, 0, 3, 0, 1), -1);
    gs_gather(f.kb, out.ap, gs_hbm_rows(&T, 0, 10, 0, 4), idx.ap);
    gs_dma_copy(f.kb, gs_hbm_rows(&O, 0, 3, 0, 4), out.ap, -1);
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    gs_error err;
    gs_mem *m = gs_mem_create(f.p, &err);
    float *td = (float *)gs_mem_tensor(m, T.id);
    for (int i = 0; i < 40; i++)
        td[i] = (float)i;
    int32_t *id = (int32_t *)gs_mem_tensor(m, I.id);
    id[0] = 9;
    id[1] = 0;
    id[2] = 4;
    ASSERT_EQ(gs_exec_program(m, f.p, &err), GS_OK) << err.message;
    EXPECT_EQ(get(m, f.p, O.id, 0), 36.0f);
    EXPECT_EQ(get(m, f.p, O.id, 4), 0.0f);
    EXPECT_EQ(get(m, f.p, O.id, 11), 19.0f);
    id[1] = 10;
    EXPECT_EQ(gs_exec_program(m, f.p, &err), GS_ERR_BOUNDS);
    EXPECT_NE(std::string(err.message).find("index 10"), std::string::npos) << err.message;
    EXPECT_NE(std::string(err.file).find("test_builder.cpp"), std::string::npos);
    gs_mem_free(m);
}

TEST(Executor, DmaTransposeAndBnStats)
{
    Fixture f(gs_test_config_gen3_like);
    gs_tensor A = f.tensor("A", GS_BF16, 4, 6);
    gs_tensor T = f.tensor("T", GS_BF16, 6, 4, GS_TENSOR_OUTPUT);
    gs_tensor MV = f.tensor("MV", GS_FP32, 4, 2, GS_TENSOR_OUTPUT);
    gs_pool *sb = gs_pool_create(f.kb, GS_MEM_SBUF, "s", 4, 64);
    gs_tile a = gs_tile_alloc(sb, GS_BF16, 4, 6);
    gs_tile t = gs_tile_alloc(sb, GS_BF16, 6, 4);
    gs_tile st = gs_tile_alloc(sb, GS_FP32, 4, 6);
    gs_tile mv = gs_tile_alloc(sb, GS_FP32, 4, 2);
    gs_dma_copy(f.kb, a.ap, gs_hbm_rows(&A, 0, 4, 0, 6), -1);
    gs_dma_transpose(f.kb, t.ap, a.ap, -1);
    gs_dma_copy(f.kb, gs_hbm_rows(&T, 0, 6, 0, 4), t.ap, -1);
    // stats of the two halves of each row, then aggregated
    gs_bn_stats(f.kb, gs_tile_view(&st, 0, 4, 0, 3), gs_tile_view(&a, 0, 4, 0, 3));
    gs_bn_stats(f.kb, gs_tile_view(&st, 0, 4, 3, 3), gs_tile_view(&a, 0, 4, 3, 3));
    gs_bn_aggr(f.kb, mv.ap, st.ap);
    gs_dma_copy(f.kb, gs_hbm_rows(&MV, 0, 4, 0, 2), mv.ap, -1);
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    gs_error err;
    gs_mem *m = gs_mem_create(f.p, &err);
    for (int i = 0; i < 24; i++)
        gs_dtype_store(GS_BF16, gs_mem_tensor(m, A.id), (size_t)i, (float)(i * i % 7));
    ASSERT_EQ(gs_exec_program(m, f.p, &err), GS_OK) << err.message;
    for (int r = 0; r < 4; r++) {
        double mean = 0, var = 0;
        for (int c = 0; c < 6; c++) {
            EXPECT_EQ(get(m, f.p, T.id, (size_t)(c * 4 + r)),
                      get(m, f.p, A.id, (size_t)(r * 6 + c)));
            mean += (double)get(m, f.p, A.id, (size_t)(r * 6 + c)) / 6.0;
        }
        for (int c = 0; c < 6; c++) {
            double d = (double)get(m, f.p, A.id, (size_t)(r * 6 + c)) - mean;
            var += d * d / 6.0;
        }
        EXPECT_NEAR(get(m, f.p, MV.id, (size_t)(r * 2)), mean, 1e-5);
        EXPECT_NEAR(get(m, f.p, MV.id, (size_t)(r * 2 + 1)), var, 1e-5);
    }
    gs_mem_free(m);
}

TEST(Executor, IotaAffineSelectBuildsACausalMask)
{
    Fixture f;
    gs_tensor O = f.tensor("O", GS_FP32, 4, 4, GS_TENSOR_OUTPUT);
    gs_pool *sb = gs_pool_create(f.kb, GS_MEM_SBUF, "s", 2, 64);
    gs_tile ones = gs_tile_alloc(sb, GS_FP32, 4, 4);
    gs_tile o = gs_tile_alloc(sb, GS_FP32, 4, 4);
    gs_memset(f.kb, GS_ENG_GPSIMD, ones.ap, 1.0f);
    // keep where p - j >= 0 (row p may see columns j <= p)
    gs_affine_select(f.kb, o.ap, ones.ap, GS_ALU_GE, 0, 1, -1, -INFINITY);
    gs_dma_copy(f.kb, gs_hbm_rows(&O, 0, 4, 0, 4), o.ap, -1);
    ASSERT_TRUE(gs_kb_ok(f.kb)) << f.error();
    gs_error err;
    gs_mem *m = gs_mem_create(f.p, &err);
    ASSERT_EQ(gs_exec_program(m, f.p, &err), GS_OK) << err.message;
    for (int p = 0; p < 4; p++)
        for (int j = 0; j < 4; j++) {
            float v = get(m, f.p, O.id, (size_t)(p * 4 + j));
            if (j <= p)
                EXPECT_EQ(v, 1.0f);
            else
                EXPECT_TRUE(std::isinf(v) && v < 0);
        }
    gs_mem_free(m);
}

} // namespace

// Per-partition scalar operands must be [partitions x 1] columns, accumulate outputs fp32
// columns; each error names the instruction and the operand, and nothing is emitted.
TEST(BuilderErrors, PerPartitionOperandsAndAccumulateOutputs)
{
    struct Case {
        const char *want;
        int which; // 0 activation bias, 1 activation acc_out, 2 exponential sub, 3 tensor_scalar s1
    };
    const Case cases[] = {
        {"activation: per-partition bias must be [64 x 1]", 0},
        {"activation: accumulate output must be an fp32 [64 x 1] pattern", 1},
        {"exponential: per-partition subtrahend must be [64 x 1]", 2},
        {"tensor_scalar: per-partition operand 1 must be [64 x 1]", 3},
    };
    for (const Case &c : cases) {
        Fixture f;
        gs_pool *p = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 4096);
        gs_tile x = gs_tile_alloc(p, GS_FP32, 64, 32);
        gs_pool *q = gs_pool_create(f.kb, GS_MEM_SBUF, "y", 1, 4096);
        gs_tile y = gs_tile_alloc(q, GS_FP32, 64, 32);
        gs_pool *r = gs_pool_create(f.kb, GS_MEM_SBUF, "col", 1, 64);
        gs_tile wide = gs_tile_alloc(r, GS_FP32, 64, 2); // two columns: not a per-partition column
        gs_pool *s = gs_pool_create(f.kb, GS_MEM_SBUF, "acc", 1, 64);
        gs_tile acc16 = gs_tile_alloc(s, GS_BF16, 64, 1); // a column, but not fp32
        switch (c.which) {
        case 0:
            gs_activation(f.kb, y.ap, x.ap, GS_ACT_IDENTITY, gs_imm(1.0f),
                          gs_per_partition(wide.ap), NULL);
            break;
        case 1:
            gs_activation(f.kb, y.ap, x.ap, GS_ACT_IDENTITY, gs_imm(1.0f), gs_imm(0.0f), &acc16.ap);
            break;
        case 2:
            gs_exponential(f.kb, y.ap, x.ap, gs_per_partition(wide.ap), NULL);
            break;
        default:
            gs_tensor_scalar(f.kb, GS_ENG_VECTOR, y.ap, x.ap, GS_ALU_MUL, gs_imm(2.0f), GS_ALU_ADD,
                             gs_per_partition(wide.ap));
        }
        expect_error_has(f, GS_ERR_INVALID, {c.want});
        EXPECT_EQ(gs_program_count(f.p), 0u) << c.want;
    }
}
