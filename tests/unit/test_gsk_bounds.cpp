// Bounds checks of access patterns whose offset arithmetic overflows int64_t: the builder's
// bounding box (gs_ap_bbox) must refuse them instead of wrapping into a box inside the tensor,
// and `gensweep nki replay` must refuse such an operand of a .gsk file at its file:line, exit 2
// (before the fix: a heap write 512 bytes before the tensor, or a read outside it and "pass").
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "gs/builder.h"
#include "gs/config.h"
#include "test_config_builders.h"

namespace
{

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
    gs_tensor tensor(const char *name, gs_tensor_kind kind)
    {
        int64_t shape[2] = {128, 512};
        gs_error err;
        gs_tensor h{};
        h.id = gs_program_add_tensor(p, name, GS_FP32, kind, 2, shape, &err);
        EXPECT_GE(h.id, 0) << err.message;
        h.dtype = GS_FP32;
        h.ndim = 2;
        h.shape[0] = 128;
        h.shape[1] = 512;
        return h;
    }
};

// INT64_MAX - 127 + 127 is the last element; the box's end (+1) is the first that overflows.
const int64_t kNearMax = INT64_MAX - 127;

TEST(GskBounds, BuilderRefusesAnHbmBoxThatOverflows)
{
    for (int as_dst = 0; as_dst < 2; as_dst++) {
        Fixture f;
        gs_tensor t = f.tensor("t", as_dst ? GS_TENSOR_OUTPUT : GS_TENSOR_INPUT);
        gs_pool *pool = gs_pool_create(f.kb, GS_MEM_SBUF, "x", 1, 2048);
        gs_tile tile = gs_tile_alloc(pool, GS_FP32, 1, 128);
        const uint32_t shape[1] = {128};
        const int64_t one[1] = {1};
        gs_ap h = gs_hbm_ap(&t, kNearMax, 1, 1, 1, shape, one);
        if (as_dst)
            gs_dma_copy(f.kb, h, tile.ap, -1);
        else
            gs_dma_copy(f.kb, tile.ap, h, -1);
        EXPECT_EQ(gs_kb_status(f.kb), GS_ERR_BOUNDS) << as_dst;
        std::string msg = gs_kb_error(f.kb)->message;
        EXPECT_NE(msg.find("overflows 64-bit arithmetic"), std::string::npos) << msg;
        EXPECT_EQ(gs_program_count(f.p), 0u);
    }
}

// The add_old kernel of tests/nki/kernels/ops.py as `nki run --keep-program` writes it, with
// one operand moved to `op`.
std::string gsk(const std::string &load_a, const std::string &store)
{
    return "gsk 1\nkernel add_old\nfile 0 tests/nki/kernels/ops.py\nreduction 1\n"
           "tensor 0 in fp32 a 128x512 -1.0 1.0 0\ntensor 1 in fp32 b 128x512 -1.0 1.0 0\n"
           "tensor 2 out fp32 t0 128x512 -1.0 1.0 0\ncore 0\n"
           "pool 0 sbuf 1 2048 0 15 ops.py:15\npool 1 sbuf 1 2048 0 16 ops.py:16\n"
           "pool 2 sbuf 1 2048 0 17 ops.py:17\ntile 0 0 fp32 128 512 0 15\n"
           "dma_copy 0 15 " +
           load_a +
           " -1\n"
           "tile 1 1 fp32 128 512 0 16\n"
           "dma_copy 0 16 T1,0,128,0,1,512,1 H1,0,128,512,1,512,1 -1\n"
           "tile 2 2 fp32 128 512 0 17\n"
           "tensor_tensor 0 17 T2,0,128,0,1,512,1 T0,0,128,0,1,512,1 T1,0,128,0,1,512,1 add\n"
           "dma_copy 0 17 " +
           store + " -1\n";
}

// `mode`: --timing-only, or "" to run the executor too (iota's values are computed there).
int replay(const std::string &text, const std::string &name, std::string *out,
           const char *mode = "--timing-only")
{
    std::string path = std::string(GS_BINARY_DIR) + "/test_gsk_bounds_" + name + ".gsk";
    std::ofstream(path) << text;
    std::string cmd = std::string("cd '") + GS_SOURCE_DIR + "' && '" + GS_BINARY_DIR +
                      "/cli/gensweep' nki replay '" + path + "' --config configs/gen2.yaml " +
                      mode + " 2>&1";
    FILE *f = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        out->append(buf, n);
    int st = f ? pclose(f) : -1;
    std::remove(path.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

const char *kLoadA = "T0,0,128,0,1,512,1 H0,0,128,512,1,512,1";
const char *kStore = "H2,0,128,512,1,512,1 T2,0,128,0,1,512,1";

TEST(GskBounds, ReplayRefusesAnOperandWhoseOffsetOverflows)
{
    std::string out;
    ASSERT_EQ(replay(gsk(kLoadA, kStore), "ok", &out), 0) << out;
    const std::string big = std::to_string(kNearMax);
    struct {
        const char *name;
        std::string load_a, store;
        int line;
    } cases[] = {
        {"dst", kLoadA, "H2," + big + ",1,1,1,128,1 T2,0,1,0,1,128,1", 18},
        {"src", "T0,0,1,0,1,128,1 H0," + big + ",1,1,1,128,1", kStore, 13},
        // a tile view: offset plus extent wraps below the tile's size
        {"tile", "T0,0,1," + std::to_string(INT64_MAX - 10) + ",1,128,1 H0,0,1,1,1,128,1", kStore,
         13},
        // a partition start whose sum with the count overflows
        {"parts", "T0," + std::to_string(INT64_MAX) + ",1,0,1,128,1 H0,0,1,1,1,128,1", kStore, 13},
        // a stride whose product with the shape overflows
        {"stride", kLoadA, "H2,0,1,1,2,128,4611686018427387904,2,1 T2,0,1,0,1,256,1", 18},
    };
    for (const auto &c : cases) {
        out.clear();
        EXPECT_EQ(replay(gsk(c.load_a, c.store), c.name, &out), 2) << c.name << ": " << out;
        std::string where = std::string("test_gsk_bounds_") + c.name +
                            ".gsk:" + std::to_string(c.line) +
                            ": traced program: 'dma_copy': operand ";
        EXPECT_NE(out.find(where), std::string::npos) << c.name << ": " << out;
        EXPECT_NE(out.find("overflows 64-bit arithmetic"), std::string::npos) << c.name << out;
    }
}

TEST(GskBounds, ReplayRefusesATensorOfMoreThan2To50Elements)
{
    std::string text = gsk(kLoadA, kStore);
    text.replace(text.find("a 128x512"), 9, "a 1073741824x1073741824x16");
    std::string out;
    EXPECT_EQ(replay(text, "huge", &out), 2) << out;
    EXPECT_NE(out.find("test_gsk_bounds_huge.gsk:5: traced program: tensor shape "
                       "1073741824x1073741824x16 has more than 2^50 elements"),
              std::string::npos)
        << out;
}

} // namespace

namespace
{

// iota's and affine_select's base + part_mult * p + free_mult * i, computed by the executor in
// int64_t from values a .gsk file sets: an overflow is refused when built (before: undefined
// behaviour in the executor, UBSan's abort in the asan build).
TEST(GskBounds, ReplayRefusesAnIotaThatOverflows)
{
    const std::string iota = "iota 0 17 T2,0,128,0,1,512,1 ";
    std::string text = gsk(kLoadA, kStore);
    const size_t at = text.find("tensor_tensor");
    std::string out;
    ASSERT_EQ(replay(text.substr(0, at) + iota + "9223372036854775296 0 1\n" + text.substr(at),
                     "iota_ok", &out, ""),
              0)
        << out; // the last element is INT64_MAX
    const char *bad[] = {"9223372036854775297 0 1", "0 144115188037855232 1",
                         "-9223372036854775807 -1 -1"};
    for (const char *args : bad) {
        out.clear();
        EXPECT_EQ(
            replay(text.substr(0, at) + iota + args + "\n" + text.substr(at), "iota", &out, ""), 2)
            << args << ": " << out;
        EXPECT_NE(out.find("ops.py:17: iota: base "), std::string::npos) << args << ": " << out;
        EXPECT_NE(out.find("overflows 64-bit arithmetic"), std::string::npos) << args << out;
    }
    out.clear();
    const std::string sel =
        "affine_select 0 17 T2,0,128,0,1,512,1 T0,0,128,0,1,512,1 is_ge 0 144115188037855232 1 0\n";
    EXPECT_EQ(replay(text.substr(0, at) + sel + text.substr(at), "select", &out, ""), 2) << out;
    EXPECT_NE(out.find("ops.py:17: affine_select: base 0 + 144115188037855232 * partition"),
              std::string::npos)
        << out;
}

} // namespace
