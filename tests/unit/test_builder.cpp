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
    EXPECT_NE(f.error().find("outside its tile"), std::string::npos) << f.error();
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
    // compact records: five access patterns make up most of an instruction
    EXPECT_EQ(sizeof(gs_ap), 64u);
    EXPECT_LE(sizeof(gs_instr), 392u);
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
            mean += get(m, f.p, A.id, (size_t)(r * 6 + c)) / 6.0;
        }
        for (int c = 0; c < 6; c++) {
            double d = get(m, f.p, A.id, (size_t)(r * 6 + c)) - mean;
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
