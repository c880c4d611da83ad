// Instruction operands stored out of line (gs/isa.h, "Operand storage"): a program keeps each
// distinct access pattern once, every slot of an instruction reads exactly what its draft held
// (unused slots included), the patterns never move as the program grows, and a draft round-trips.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "gs/builder.h"
#include "gs/isa.h"
#include "instr_view.h"
#include "test_config_builders.h"

namespace
{

gs_ap sbuf(uint32_t parts, uint32_t free_elems, uint64_t offset = 0)
{
    gs_ap a;
    std::memset(&a, 0, sizeof a);
    a.space = GS_MEM_SBUF;
    a.dtype = GS_BF16;
    a.tensor = 0;
    a.part_count = parts;
    a.ndim = 1;
    a.shape[0] = free_elems;
    a.stride[0] = 1;
    a.offset = (int64_t)offset;
    return a;
}

gs_instr_draft draft(gs_opcode op, gs_engine e)
{
    gs_instr_draft d = empty_draft(op, e);
    d.file = "test_instr_operands.cpp";
    d.line = 1;
    return d;
}

bool same_fields(const gs_ap &a, const gs_ap &b)
{
    if (a.offset != b.offset || a.part_stride != b.part_stride || a.tensor != b.tensor ||
        a.part_start != b.part_start || a.part_count != b.part_count || a.core != b.core ||
        a.space != b.space || a.dtype != b.dtype || a.ndim != b.ndim || a.bad_view != b.bad_view)
        return false;
    for (int k = 0; k < GS_AP_MAX_DIMS; k++)
        if (a.shape[k] != b.shape[k] || a.stride[k] != b.stride[k]) return false;
    return true;
}

struct Prog {
    gs_config cfg;
    gs_program *p;
    Prog()
    {
        gs_test_config_gen2_like(&cfg);
        p = gs_program_create(&cfg);
    }
    ~Prog() { gs_program_free(p); }
    Prog(const Prog &) = delete;
    Prog &operator=(const Prog &) = delete;
};

TEST(InstrOperands, EqualPatternsShareOneCopy)
{
    Prog g;
    gs_instr_draft a = draft(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR);
    a.n_in = 2;
    a.n_out = 1;
    a.in[0] = sbuf(128, 512);
    a.in[1] = sbuf(128, 512, 1024);
    a.out[0] = sbuf(128, 512);
    ASSERT_EQ(gs_program_append_raw(g.p, &a), 0);
    gs_instr_draft b = a;
    b.in[1].offset = 2048; // differs from every pattern so far
    ASSERT_EQ(gs_program_append_raw(g.p, &b), 1);
    const gs_instr *x = gs_program_instr(g.p, 0), *y = gs_program_instr(g.p, 1);
    EXPECT_EQ(x->in[0], x->out[0]); // equal values within one instruction
    EXPECT_EQ(x->in[0], y->in[0]);  // and across instructions
    EXPECT_NE(x->in[1], y->in[1]);
    EXPECT_NE(x->in[0], x->in[1]);
    EXPECT_TRUE(same_fields(*x->in[1], a.in[1]));
    EXPECT_TRUE(same_fields(*y->in[1], b.in[1]));
    EXPECT_EQ(y->in[1]->offset, 2048);
}

TEST(InstrOperands, TailPaddingDoesNotMakeADifferentPattern)
{
    Prog g;
    gs_instr_draft a = draft(GS_OP_TENSOR_COPY, GS_ENG_VECTOR);
    a.n_in = a.n_out = 1;
    gs_ap p0 = sbuf(64, 32), p1;
    std::memset(&p1, 0xa5, sizeof p1); // the padding bytes of p1 differ from p0's
    p1.offset = p0.offset;
    p1.part_stride = p0.part_stride;
    p1.tensor = p0.tensor;
    p1.part_start = p0.part_start;
    p1.part_count = p0.part_count;
    for (int k = 0; k < GS_AP_MAX_DIMS; k++) {
        p1.shape[k] = p0.shape[k];
        p1.stride[k] = p0.stride[k];
    }
    p1.core = p0.core;
    p1.space = p0.space;
    p1.dtype = p0.dtype;
    p1.ndim = p0.ndim;
    p1.bad_view = p0.bad_view;
    a.in[0] = p0;
    a.out[0] = p1;
    ASSERT_EQ(gs_program_append_raw(g.p, &a), 0);
    const gs_instr *x = gs_program_instr(g.p, 0);
    EXPECT_EQ(x->in[0], x->out[0]);
    // each field is part of the identity: changing any one of them gives another pattern
    for (int field = 0; field < 10; field++) {
        gs_ap q = p0;
        switch (field) {
        case 0:
            q.offset++;
            break;
        case 1:
            q.part_stride++;
            break;
        case 2:
            q.tensor++;
            break;
        case 3:
            q.part_start++;
            break;
        case 4:
            q.part_count++;
            break;
        case 5:
            q.shape[3] = 1;
            break;
        case 6:
            q.stride[3] = 7;
            break;
        case 7:
            q.core++;
            break;
        case 8:
            q.dtype = GS_FP32;
            break;
        default:
            q.bad_view = GS_AP_BAD_RANGE;
            break;
        }
        gs_instr_draft d = a;
        d.in[0] = q;
        const int64_t i = gs_program_append_raw(g.p, &d);
        ASSERT_GE(i, 0);
        const gs_instr *z = gs_program_instr(g.p, (size_t)i);
        EXPECT_NE(z->in[0], x->in[0]) << "field " << field;
        EXPECT_TRUE(same_fields(*z->in[0], q)) << "field " << field;
    }
}

// Every slot reads what the draft held, used or not: an unused slot is the tensor = -1 pattern,
// and a slot beyond n_in / n_out that holds a pattern (matmul_mx's moving scales in out[1]) is
// kept as well; nothing reads another instruction's operand.
TEST(InstrOperands, EverySlotReadsItsDraft)
{
    Prog g;
    gs_instr_draft a = draft(GS_OP_DMA_COPY, GS_ENG_DMA);
    a.n_in = a.n_out = 1;
    a.in[0] = sbuf(128, 64);
    a.out[0] = sbuf(128, 64, 512);
    ASSERT_EQ(gs_program_append_raw(g.p, &a), 0);
    gs_instr_draft m = draft(GS_OP_MATMUL_MX, GS_ENG_TENSOR);
    m.n_in = 3;
    m.n_out = 1;
    m.in[0] = sbuf(32, 16, 4096);
    m.in[1] = sbuf(32, 16, 8192);
    m.in[2] = sbuf(32, 16, 12288);
    *GS_MX_MOVING_SCALE_SLOT(&m) = sbuf(32, 16, 16384);
    m.out[0] = sbuf(16, 16, 0);
    ASSERT_EQ(gs_program_append_raw(g.p, &m), 1);

    const gs_instr *x = gs_program_instr(g.p, 0), *y = gs_program_instr(g.p, 1);
    for (int k = 1; k < GS_INSTR_MAX_IN; k++) {
        EXPECT_EQ(x->in[k]->tensor, -1);
        EXPECT_TRUE(same_fields(*x->in[k], a.in[k]));
    }
    EXPECT_EQ(x->out[1]->tensor, -1);
    EXPECT_EQ(x->in[1], x->out[1]); // the unused-slot pattern is one copy too
    EXPECT_TRUE(same_fields(*GS_MX_MOVING_SCALE(y), *GS_MX_MOVING_SCALE_SLOT(&m)));
    EXPECT_EQ(GS_MX_MOVING_SCALE(y)->offset, 16384);
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        EXPECT_TRUE(same_fields(*y->in[k], m.in[k])) << k;
    // the listing shows the moving scales after the inputs, as with inline operands
    char line[1024];
    gs_instr_format(g.p, 1, line, sizeof line);
    EXPECT_NE(std::string(line).find("+16384B"), std::string::npos) << line;
}

// Patterns are stored in chunks that never move: pointers taken early stay valid and unchanged
// while tens of thousands of distinct patterns are added (several chunk and hash-set growths).
TEST(InstrOperands, PatternsStayPutAsTheProgramGrows)
{
    Prog g;
    gs_instr_draft a = draft(GS_OP_TENSOR_COPY, GS_ENG_VECTOR);
    a.n_in = a.n_out = 1;
    a.out[0] = sbuf(128, 64);
    const int n = 40000;
    for (int i = 0; i < n; i++) {
        a.in[0] = sbuf(128, 64, (uint64_t)i * 2);
        ASSERT_EQ(gs_program_append_raw(g.p, &a), i);
    }
    const gs_ap *first = gs_program_instr(g.p, 0)->in[0];
    const gs_ap *out = gs_program_instr(g.p, 0)->out[0];
    std::set<const gs_ap *> distinct;
    for (int i = 0; i < n; i++) {
        const gs_instr *x = gs_program_instr(g.p, (size_t)i);
        ASSERT_EQ(x->in[0]->offset, (int64_t)i * 2) << i;
        ASSERT_EQ(x->out[0], out);
        distinct.insert(x->in[0]);
    }
    EXPECT_EQ(distinct.size(), (size_t)n);
    // appending equal patterns again finds the existing copies
    a.in[0] = sbuf(128, 64, 0);
    const int64_t again = gs_program_append_raw(g.p, &a);
    ASSERT_EQ(again, n);
    EXPECT_EQ(gs_program_instr(g.p, (size_t)again)->in[0], first);
}

TEST(InstrOperands, DraftViewAndRoundTrip)
{
    Prog g;
    gs_instr_draft a = draft(GS_OP_ACTIVATION, GS_ENG_SCALAR);
    a.n_in = 3;
    a.n_out = 2;
    a.act = GS_ACT_GELU;
    a.flags = GS_F_BIAS_AP | GS_F_ACC_OUT;
    a.imm[0] = 2.5f;
    a.iimm[2] = -7;
    a.in[0] = sbuf(128, 100);
    a.in[2] = sbuf(128, 1, 4000);
    a.out[0] = sbuf(128, 100, 2000);
    a.out[1] = sbuf(128, 1, 4004);
    gs_instr v;
    const gs_instr *pv = gs_instr_draft_view(&a, &v);
    EXPECT_EQ(pv, &v);
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        EXPECT_EQ(v.in[k], &a.in[k]);
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        EXPECT_EQ(v.out[k], &a.out[k]);
    EXPECT_EQ(v.act, GS_ACT_GELU);
    EXPECT_EQ(v.flags, a.flags);
    EXPECT_EQ(v.imm[0], 2.5f);

    ASSERT_EQ(gs_program_append_raw(g.p, &a), 0);
    EXPECT_EQ(gs_program_iimm(g.p, 0)[0], 0);
    EXPECT_EQ(gs_program_iimm(g.p, 0)[2], -7); // integer immediates, kept by the program
    gs_instr_draft b;
    gs_program_instr_to_draft(g.p, 0, &b);
    EXPECT_EQ(b.iimm[2], -7);
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        EXPECT_TRUE(same_fields(b.in[k], a.in[k])) << k;
    for (int k = 0; k < GS_INSTR_MAX_OUT; k++)
        EXPECT_TRUE(same_fields(b.out[k], a.out[k])) << k;
    ASSERT_EQ(gs_program_append_raw(g.p, &b), 1);
    char l0[1024], l1[1024];
    gs_instr_format(g.p, 0, l0, sizeof l0);
    gs_instr_format(g.p, 1, l1, sizeof l1);
    // the same line but for the index column
    EXPECT_EQ(std::string(l0).substr(6), std::string(l1).substr(6));
    const gs_instr *x = gs_program_instr(g.p, 0), *y = gs_program_instr(g.p, 1);
    for (int k = 0; k < GS_INSTR_MAX_IN; k++)
        EXPECT_EQ(x->in[k], y->in[k]);
    // immediates of many instructions (several storage blocks) each keep their own values
    gs_instr_draft io = draft(GS_OP_IOTA, GS_ENG_GPSIMD);
    io.n_out = 1;
    io.out[0] = sbuf(128, 8);
    for (int i = 0; i < 3000; i++) {
        io.iimm[0] = i;
        io.iimm[1] = -i;
        io.iimm[2] = i % 3 == 0 ? 0 : i;
        ASSERT_EQ(gs_program_append_raw(g.p, &io), 2 + i);
    }
    for (int i = 0; i < 3000; i++) {
        const int64_t *z = gs_program_iimm(g.p, (size_t)(2 + i));
        ASSERT_EQ(z[0], i);
        ASSERT_EQ(z[1], -i);
        ASSERT_EQ(z[2], i % 3 == 0 ? 0 : i);
    }
    // instructions without any (the round-tripped one is appended with a's), and indices past
    // the end, read zeros
    EXPECT_EQ(gs_program_iimm(g.p, 1)[2], -7);
    EXPECT_EQ(gs_program_iimm(g.p, 2)[2], 0); // i = 0: all zero, not stored
    const int64_t *past = gs_program_iimm(g.p, 1u << 20);
    EXPECT_EQ(past[0] | past[1] | past[2], 0);
}

// A kernel's operands repeat: a tile loop of matmuls keeps a few patterns per tile, so the
// program holds far fewer patterns than operands (the reason operands are shared).
TEST(InstrOperands, KernelOperandsAreMostlyShared)
{
    Prog g;
    gs_kb *kb = gs_kb_create(g.p, 0);
    ASSERT_NE(kb, nullptr);
    gs_pool *sb = gs_pool_create(kb, GS_MEM_SBUF, "sb", 2, 4096);
    gs_pool *ps = gs_pool_create(kb, GS_MEM_PSUM, "ps", 2, 2048);
    for (int i = 0; i < 64; i++) {
        gs_tile st = gs_tile_alloc(sb, GS_BF16, 128, 128);
        gs_tile mv = gs_tile_alloc(sb, GS_BF16, 128, 512);
        gs_tile acc = gs_tile_alloc(ps, GS_FP32, 128, 512);
        gs_matmul(kb, acc.ap, st.ap, mv.ap, 0);
    }
    ASSERT_TRUE(gs_kb_ok(kb)) << gs_kb_error(kb)->message;
    std::set<const gs_ap *> distinct;
    size_t operands = 0;
    for (size_t i = 0; i < gs_program_count(g.p); i++) {
        const gs_instr *x = gs_program_instr(g.p, i);
        for (int k = 0; k < x->n_in; k++, operands++)
            distinct.insert(x->in[k]);
        for (int k = 0; k < x->n_out; k++, operands++)
            distinct.insert(x->out[k]);
    }
    EXPECT_EQ(operands, 64u * 3);
    EXPECT_LE(distinct.size(), 6u); // two buffers for each of the three operands
    gs_kb_free(kb);
}

} // namespace
