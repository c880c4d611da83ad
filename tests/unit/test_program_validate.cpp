/*
 * test_program_validate.cpp - gs_program_validate without SystemC: a program must fit the
 * config's chip (cores, engines, DMA queue IDs) before the model runs it.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "gs/isa.h"
#include "test_config_builders.h"

namespace
{

struct ProgramDeleter {
    void operator()(gs_program *p) const { gs_program_free(p); }
};
using ProgramPtr = std::unique_ptr<gs_program, ProgramDeleter>;

gs_instr_draft make(gs_opcode op, gs_engine e, unsigned core, unsigned queue, int line)
{
    gs_instr_draft in;
    memset(&in, 0, sizeof in);
    in.op = op;
    in.engine = e;
    in.core = (uint16_t)core;
    in.queue = (uint16_t)queue;
    in.file = "prog.c";
    in.line = line;
    return in;
}

/* The status of validating a program of one good instruction followed by `bad` on cfg. */
gs_status validate_with(const gs_config *cfg, const gs_instr_draft &bad, gs_error *err)
{
    ProgramPtr p(gs_program_create(cfg));
    const gs_instr_draft good = make(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR, 0, 0, 1);
    EXPECT_GE(gs_program_append_raw(p.get(), &good), 0);
    EXPECT_GE(gs_program_append_raw(p.get(), &bad), 0);
    return gs_program_validate(p.get(), cfg, err);
}

TEST(ProgramValidate, AProgramThatFitsIsOk)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    gs_error err;
    const unsigned last_queue = (unsigned)cfg.dma.queues.v - 1;
    EXPECT_EQ(validate_with(&cfg, make(GS_OP_DMA_COPY, GS_ENG_DMA, 0, last_queue, 2), &err), GS_OK)
        << err.message;
    ProgramPtr empty(gs_program_create(&cfg));
    EXPECT_EQ(gs_program_validate(empty.get(), &cfg, &err), GS_OK);
}

TEST(ProgramValidate, EachMisfitNamesTheInstructionAndItsLine)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    const unsigned cores = (unsigned)cfg.cores.v, queues = (unsigned)cfg.dma.queues.v;
    struct Case {
        gs_instr_draft in;
        gs_status want;
        const char *says;
    } cases[] = {
        {make(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR, cores, 0, 7), GS_ERR_INVALID, "core"},
        {make(GS_OP_TENSOR_TENSOR, (gs_engine)GS_ENGINE_COUNT, 0, 0, 7), GS_ERR_INVALID,
         "invalid engine"},
        {make(GS_OP_DMA_COPY, GS_ENG_VECTOR, 0, 0, 7), GS_ERR_INVALID, "cannot run on"},
        {make(GS_OP_TENSOR_TENSOR, GS_ENG_DMA, 0, 0, 7), GS_ERR_INVALID, "cannot run on"},
        {make(GS_OP_DMA_COPY, GS_ENG_DMA, 0, queues, 7), GS_ERR_INVALID, "queue"},
    };
    for (const Case &c : cases) {
        gs_error err;
        EXPECT_EQ(validate_with(&cfg, c.in, &err), c.want) << c.says;
        EXPECT_NE(strstr(err.message, c.says), nullptr) << err.message;
        EXPECT_NE(strstr(err.message, "instruction 1 "), nullptr) << err.message;
        EXPECT_STREQ(err.file, "prog.c");
        EXPECT_EQ(err.line, 7);
    }
}

TEST(ProgramValidate, AnEngineTheConfigLacksIsUnsupported)
{
    gs_config gen1;
    gs_test_config_gen1_like(&gen1); /* no GpSimd engine */
    ASSERT_FALSE(gs_config_has_engine(&gen1, GS_ENG_GPSIMD));
    gs_error err;
    EXPECT_EQ(validate_with(&gen1, make(GS_OP_IOTA, GS_ENG_GPSIMD, 0, 0, 9), &err),
              GS_ERR_UNSUPPORTED);
    EXPECT_NE(strstr(err.message, "gpsimd"), nullptr) << err.message;
    gs_config gen2;
    gs_test_config_gen2_like(&gen2);
    EXPECT_EQ(validate_with(&gen2, make(GS_OP_IOTA, GS_ENG_GPSIMD, 0, 0, 9), &err), GS_OK)
        << err.message;
}

/* The model checks each instruction with gs_instr_placement_ok as it binds it and asks
 * gs_program_validate for the message only when one fails: both must follow the placement
 * rules on every placement, or the model would run a misplaced instruction (or fail with no
 * message). */
TEST(ProgramValidate, PlacementPredicateAndValidationFollowTheRules)
{
    gs_config gen1, gen2;
    gs_test_config_gen1_like(&gen1);
    gs_test_config_gen2_like(&gen2);
    const gs_opcode ops[] = {GS_OP_DMA_COPY, GS_OP_DMA_TRANSPOSE, GS_OP_MATMUL, GS_OP_TENSOR_TENSOR,
                             GS_OP_IOTA};
    int ok = 0, bad = 0;
    for (const gs_config *cfg : {&gen1, &gen2}) {
        const unsigned cores = (unsigned)cfg->cores.v, queues = (unsigned)cfg->dma.queues.v;
        const unsigned engines = gs_config_engine_mask(cfg);
        for (gs_opcode op : ops)
            for (int e = 0; e <= GS_ENGINE_COUNT; e++)
                for (unsigned core : {0u, cores - 1, cores})
                    for (unsigned q : {0u, queues - 1, queues}) {
                        const gs_instr_draft d = make(op, (gs_engine)e, core, q, 5);
                        gs_instr view;
                        const int fits = gs_instr_placement_ok(gs_instr_draft_view(&d, &view),
                                                               cores, queues, engines);
                        /* the rules of gs/isa.h's gs_program_validate, written out here */
                        const bool dma = op == GS_OP_DMA_COPY || op == GS_OP_DMA_TRANSPOSE;
                        const bool want = core < cores && e < GS_ENGINE_COUNT &&
                                          gs_config_has_engine(cfg, (gs_engine)e) &&
                                          dma == (e == GS_ENG_DMA) &&
                                          (e != GS_ENG_DMA || q < queues);
                        EXPECT_EQ(fits != 0, want) << gs_opcode_name(op) << " engine " << e
                                                   << " core " << core << " queue " << q;
                        gs_error err;
                        const gs_status st = validate_with(cfg, d, &err);
                        EXPECT_EQ(st == GS_OK, want)
                            << gs_opcode_name(op) << " engine " << e << " core " << core
                            << " queue " << q << ": " << err.message;
                        if (st != GS_OK) {
                            EXPECT_NE(st, GS_ERR_INTERNAL) << err.message;
                            EXPECT_EQ(err.line, 5);
                        }
                        (fits ? ok : bad)++;
                    }
    }
    EXPECT_GT(ok, 0);
    EXPECT_GT(bad, 0);
    /* the mask is the config's engines */
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        EXPECT_EQ((gs_config_engine_mask(&gen1) >> e) & 1u,
                  (unsigned)gs_config_has_engine(&gen1, (gs_engine)e));
    EXPECT_EQ(gs_config_engine_mask(nullptr), 0u);
}

TEST(ProgramValidate, NoProgramIsAUsageError)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    gs_error err;
    EXPECT_EQ(gs_program_validate(nullptr, &cfg, &err), GS_ERR_USAGE);
}

} // namespace
