// gs_instr_format / gs_ap_format (printf-free since the trace formats every instruction): the
// exact text of a known instruction, and snprintf-style truncation at every buffer size.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "gs/builder.h"
#include "test_config_builders.h"

namespace
{

TEST(IsaFormat, KnownLineAndTruncationAtEverySize)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    gs_program *p = gs_program_create(&cfg);
    gs_kb *kb = gs_kb_create(p, 0);
    int64_t shape[2] = {128, 1024};
    gs_error err;
    gs_tensor t{};
    t.id = gs_program_add_tensor(p, "A", GS_BF16, GS_TENSOR_INPUT, 2, shape, &err);
    t.dtype = GS_BF16;
    t.ndim = 2;
    t.shape[0] = 128;
    t.shape[1] = 1024;
    gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "x", 1, 2048);
    gs_tile tile = gs_tile_alloc(pool, GS_BF16, 128, 512);
    gs_dma_copy(kb, tile.ap, gs_hbm_rows(&t, 0, 128, 512, 512), 3);
    gs_tensor_scalar(kb, GS_ENG_VECTOR, tile.ap, tile.ap, GS_ALU_MUL, gs_imm(-2.5f), GS_ALU_BYPASS,
                     gs_imm(0.0f));
    ASSERT_TRUE(gs_kb_ok(kb)) << gs_kb_error(kb)->message;

    char full[1024];
    gs_instr_format(p, 0, full, sizeof full);
    std::string line(full);
    EXPECT_EQ(line.substr(0, 46), "     0 c0 dma.q3   dma_copy            sbuf[c0");
    EXPECT_NE(line.find(" <- hbm[t0 +512 128x1024 (512:1)]bf16"), std::string::npos) << line;
    EXPECT_NE(line.find("  @unit/test_isa_format.cpp:"), std::string::npos) << line;
    gs_instr_format(p, 1, full, sizeof full);
    std::string line1(full);
    EXPECT_NE(line1.find(" op0=mul s0=-2.5 deps=0"), std::string::npos) << line1;

    char ap[256];
    gs_ap_format(&tile.ap, ap, sizeof ap);
    EXPECT_STREQ(ap, "sbuf[c0 b0 p0:128 +0B (512:1)]bf16");

    for (size_t size = 1; size <= line1.size() + 1; size++) {
        char buf[1024];
        memset(buf, 'Z', sizeof buf);
        gs_instr_format(p, 1, buf, size);
        EXPECT_EQ(std::string(buf), line1.substr(0, size - 1)) << "size " << size;
        EXPECT_EQ(buf[size], 'Z') << "wrote past the buffer at size " << size;
    }
    gs_kb_free(kb);
    gs_program_free(p);
}

} // namespace
