// Per-instruction semantics of the functional executor across every dtype combination the ISA
// allows, on random bit patterns (so NaN, infinities, zeros, subnormals and saturation all
// occur), against a naive element-by-element reference written here: decode the input element,
// apply the fp32 operation, encode to the output dtype. Data goes HBM -> SBUF -> engine -> SBUF
// -> HBM, so addressing, DMA and conversion are covered too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gs/cost.h"
#include "gs/exec.h"
#include "gs/builder.h"
#include "test_config_builders.h"

namespace
{

const gs_dtype kAll[] = {GS_FP32, GS_BF16, GS_FP16, GS_FP8_E4M3, GS_FP8_E5M2, GS_INT8, GS_INT32};
constexpr unsigned P = 64;
constexpr uint32_t F = 33;

// Random element bits; one in eight is a special value for the float types.
void fill_random(gs_dtype t, void *buf, size_t n, std::mt19937_64 &rng)
{
    size_t es = gs_dtype_size(t);
    uint8_t *b = static_cast<uint8_t *>(buf);
    const float specials[] = {0.0f,    -0.0f, INFINITY,  -INFINITY, NAN,  1e-40f,
                              -3e-39f, 1e30f, -65504.0f, 448.0f,    1.0f, -1.0f};
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng();
        if (t == GS_FP32 || t == GS_INT32) {
            float v;
            if (r % 8 == 0)
                v = specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
            else
                v = std::ldexp((float)((r >> 8) % 2000001) / 1000000.0f - 1.0f,
                               (int)((r >> 40) % 21) - 10);
            gs_dtype_store(t, b, i, v);
        } else {
            std::memcpy(b + i * es, &r, es); // every bit pattern of the small types
        }
    }
}

bool same_value(gs_dtype t, float got, float want)
{
    if (std::isnan(want)) return std::isnan(got);
    if (gs_dtype_is_float(t) && want == 0.0f)
        return got == 0.0f && std::signbit(got) == std::signbit(want);
    return got == want;
}

struct Prog {
    gs_config cfg;
    gs_program *p;
    gs_kb *kb;
    gs_tensor in[2], out;
    gs_tile tin[2], tout;
    Prog(gs_dtype tin_dt, gs_dtype tout_dt, uint32_t out_free = F, int dma_cast = 0)
    {
        gs_test_config_gen3_like(&cfg);
        cfg.dma.cast = dma_cast;
        cfg.dtypes = 0;
        for (gs_dtype t : kAll)
            cfg.dtypes |= 1u << t;
        p = gs_program_create(&cfg);
        kb = gs_kb_create(p, 0);
        for (int i = 0; i < 2; i++) {
            int64_t shape[2] = {P, F};
            char name[8];
            snprintf(name, sizeof name, "in%d", i);
            gs_error err;
            in[i] = {gs_program_add_tensor(p, name, tin_dt, GS_TENSOR_INPUT, 2, shape, &err),
                     tin_dt,
                     2,
                     {P, F, 0, 0}};
        }
        int64_t oshape[2] = {P, out_free};
        gs_error err;
        out = {gs_program_add_tensor(p, "out", tout_dt, GS_TENSOR_OUTPUT, 2, oshape, &err),
               tout_dt,
               2,
               {P, out_free, 0, 0}};
        gs_pool *pool = gs_pool_create(kb, GS_MEM_SBUF, "t", 3, F * 4);
        for (int i = 0; i < 2; i++) {
            tin[i] = gs_tile_alloc(pool, tin_dt, P, F);
            gs_dma_copy(kb, tin[i].ap, gs_hbm_rows(&in[i], 0, P, 0, F), -1);
        }
        tout = gs_tile_alloc(pool, tout_dt, P, out_free);
    }
    ~Prog()
    {
        gs_kb_free(kb);
        gs_program_free(p);
    }
    // store the output tile, run, and hand back memory
    gs_mem *run(std::mt19937_64 &rng, std::string *why)
    {
        gs_dma_copy(kb, gs_hbm_rows(&out, 0, P, 0, out.shape[1]), tout.ap, -1);
        if (!gs_kb_ok(kb)) {
            *why = gs_kb_error(kb)->message;
            return nullptr;
        }
        gs_error err;
        gs_mem *m = gs_mem_create(p, &err);
        for (int i = 0; i < 2; i++)
            fill_random(in[i].dtype, gs_mem_tensor(m, in[i].id), (size_t)P * F, rng);
        if (gs_exec_program(m, p, &err) != GS_OK) {
            *why = err.message;
            gs_mem_free(m);
            return nullptr;
        }
        return m;
    }
};

float ld(gs_mem *m, const gs_tensor &t, size_t i)
{
    return gs_dtype_load(t.dtype, gs_mem_tensor(m, t.id), i);
}

// Count mismatches of out against a per-element reference fn(a, b).
template <class Fn> int compare(gs_mem *m, Prog &pr, Fn fn, std::string *first)
{
    int bad = 0;
    for (size_t i = 0; i < (size_t)P * F; i++) {
        float want = gs_dtype_round(pr.out.dtype, fn(ld(m, pr.in[0], i), ld(m, pr.in[1], i)));
        float got = ld(m, pr.out, i);
        if (!same_value(pr.out.dtype, got, want)) {
            if (!bad++)
                *first = "element " + std::to_string(i) +
                         ": a=" + std::to_string(ld(m, pr.in[0], i)) +
                         " b=" + std::to_string(ld(m, pr.in[1], i)) + " got " +
                         std::to_string(got) + " want " + std::to_string(want);
        }
    }
    return bad;
}

std::string combo(gs_dtype a, gs_dtype b)
{
    return std::string(gs_dtype_name(a)) + "->" + gs_dtype_name(b);
}

TEST(ExecDtypes, TensorCopyEveryPair)
{
    std::mt19937_64 rng(1);
    for (gs_dtype a : kAll)
        for (gs_dtype b : kAll) {
            Prog pr(a, b);
            gs_tensor_copy(pr.kb, GS_ENG_VECTOR, pr.tout.ap, pr.tin[0].ap);
            std::string why, first;
            gs_mem *m = pr.run(rng, &why);
            ASSERT_NE(m, nullptr) << combo(a, b) << ": " << why;
            EXPECT_EQ(compare(
                          m, pr, [](float x, float) { return x; }, &first),
                      0)
                << combo(a, b) << " " << first;
            gs_mem_free(m);
        }
}

// A converting DMA (core.dma.cast) between every pair of float dtypes, SBUF to SBUF: the
// element decoded, rounded to nearest even into the destination dtype (as a tensor_copy does).
TEST(ExecDtypes, DmaCastEveryFloatPair)
{
    const gs_dtype floats[] = {GS_FP32, GS_BF16, GS_FP16, GS_FP8_E4M3, GS_FP8_E5M2};
    std::mt19937_64 rng(3);
    for (gs_dtype a : floats)
        for (gs_dtype b : floats) {
            Prog pr(a, b, F, 1);
            gs_dma_copy(pr.kb, pr.tout.ap, pr.tin[0].ap, -1);
            std::string why, first;
            gs_mem *m = pr.run(rng, &why);
            ASSERT_NE(m, nullptr) << combo(a, b) << ": " << why;
            EXPECT_EQ(compare(
                          m, pr, [](float x, float) { return x; }, &first),
                      0)
                << combo(a, b) << " " << first;
            gs_mem_free(m);
        }
}

// Without core.dma.cast a converting copy is unsupported; integer or MX sides are invalid.
TEST(ExecDtypes, DmaCastNeedsTheTargetAndFloatDtypes)
{
    {
        Prog pr(GS_FP32, GS_BF16);
        EXPECT_EQ(gs_dma_copy(pr.kb, pr.tout.ap, pr.tin[0].ap, -1), GS_ERR_UNSUPPORTED);
        EXPECT_NE(std::string(gs_kb_error(pr.kb)->message).find("core.dma.cast"),
                  std::string::npos);
    }
    {
        Prog pr(GS_FP32, GS_INT8, F, 1);
        EXPECT_EQ(gs_dma_copy(pr.kb, pr.tout.ap, pr.tin[0].ap, -1), GS_ERR_INVALID);
        EXPECT_NE(std::string(gs_kb_error(pr.kb)->message).find("cannot convert int8 <- fp32"),
                  std::string::npos)
            << gs_kb_error(pr.kb)->message;
    }
}

// The bytes of a converting copy: HBM traffic is the HBM side's (bf16 read, 2 bytes per
// element), the DMA engines stream the larger side (fp32 written, 4 bytes) [assumed there].
TEST(ExecDtypes, DmaCastCountsEachSidesBytes)
{
    Prog pr(GS_BF16, GS_FP32, F, 1);
    gs_tile wide = gs_tile_alloc(gs_pool_create(pr.kb, GS_MEM_SBUF, "w", 1, F * 4), GS_FP32, P, F);
    ASSERT_EQ(gs_dma_copy(pr.kb, wide.ap, gs_hbm_rows(&pr.in[0], 0, P, 0, F), -1), GS_OK)
        << gs_kb_error(pr.kb)->message;
    const gs_instr *in = gs_program_instr(pr.p, gs_program_count(pr.p) - 1);
    ASSERT_EQ(in->op, GS_OP_DMA_COPY);
    EXPECT_EQ(gs_cost_hbm_bytes(in), (double)P * F * 2);
    gs_dma_plan plan;
    gs_cost_dma_plan(&pr.cfg, in, &plan);
    EXPECT_EQ(plan.bytes, (double)P * F * 4);
    // the other way (fp32 SBUF -> bf16 HBM): the HBM side is the destination, 2 bytes
    Prog back(GS_FP32, GS_BF16, F, 1);
    ASSERT_EQ(gs_dma_copy(back.kb, gs_hbm_rows(&back.out, 0, P, 0, F), back.tin[0].ap, -1), GS_OK);
    const gs_instr *st = gs_program_instr(back.p, gs_program_count(back.p) - 1);
    EXPECT_EQ(gs_cost_hbm_bytes(st), (double)P * F * 2);
    gs_cost_dma_plan(&back.cfg, st, &plan);
    EXPECT_EQ(plan.bytes, (double)P * F * 4);
}

TEST(ExecDtypes, TensorTensorEveryOpAndPair)
{
    std::mt19937_64 rng(2);
    for (int op = 0; op < GS_ALU_COUNT; op++)
        for (gs_dtype a : kAll)
            for (gs_dtype b : {GS_FP32, GS_FP8_E4M3, GS_INT8}) {
                Prog pr(a, b);
                gs_tensor_tensor(pr.kb, pr.tout.ap, pr.tin[0].ap, pr.tin[1].ap, (gs_alu)op);
                std::string why, first;
                gs_mem *m = pr.run(rng, &why);
                ASSERT_NE(m, nullptr) << why;
                EXPECT_EQ(compare(
                              m, pr,
                              [op](float x, float y) { return gs_alu_apply((gs_alu)op, x, y); },
                              &first),
                          0)
                    << gs_alu_name((gs_alu)op) << " " << combo(a, b) << " " << first;
                gs_mem_free(m);
            }
}

TEST(ExecDtypes, TensorScalarTwoOpsOnEachEngine)
{
    std::mt19937_64 rng(3);
    for (gs_engine e : {GS_ENG_VECTOR, GS_ENG_SCALAR, GS_ENG_GPSIMD})
        for (gs_dtype a : kAll) {
            Prog pr(a, GS_FP32);
            gs_tensor_scalar(pr.kb, e, pr.tout.ap, pr.tin[0].ap, GS_ALU_MUL, gs_imm(0.5f),
                             GS_ALU_SUB, gs_imm(3.0f));
            std::string why, first;
            gs_mem *m = pr.run(rng, &why);
            ASSERT_NE(m, nullptr) << why;
            EXPECT_EQ(compare(
                          m, pr, [](float x, float) { return x * 0.5f - 3.0f; }, &first),
                      0)
                << gs_engine_name(e) << " " << gs_dtype_name(a) << " " << first;
            gs_mem_free(m);
        }
}

TEST(ExecDtypes, ActivationEveryFunction)
{
    std::mt19937_64 rng(4);
    for (int f = 0; f < GS_ACT_COUNT; f++)
        for (gs_dtype a : {GS_FP32, GS_BF16, GS_FP16, GS_FP8_E5M2})
            for (gs_dtype b : {GS_FP32, GS_BF16, GS_FP8_E4M3}) {
                Prog pr(a, b);
                gs_activation(pr.kb, pr.tout.ap, pr.tin[0].ap, (gs_act)f, gs_imm(1.5f),
                              gs_imm(-0.25f), nullptr);
                std::string why, first;
                gs_mem *m = pr.run(rng, &why);
                ASSERT_NE(m, nullptr) << why;
                EXPECT_EQ(
                    compare(
                        m, pr,
                        [f](float x, float) { return gs_act_apply((gs_act)f, x * 1.5f + -0.25f); },
                        &first),
                    0)
                    << gs_act_name((gs_act)f) << " " << combo(a, b) << " " << first;
                gs_mem_free(m);
            }
}

TEST(ExecDtypes, ReduceAddMaxMin)
{
    std::mt19937_64 rng(5);
    for (gs_alu op : {GS_ALU_ADD, GS_ALU_MAX, GS_ALU_MIN})
        for (gs_dtype a : kAll) {
            Prog pr(a, GS_FP32, 1);
            gs_tensor_reduce(pr.kb, pr.tout.ap, pr.tin[0].ap, op, 1);
            std::string why;
            gs_mem *m = pr.run(rng, &why);
            ASSERT_NE(m, nullptr) << why;
            for (unsigned p = 0; p < P; p++) {
                double acc = op == GS_ALU_ADD ? 0.0 : (double)ld(m, pr.in[0], (size_t)p * F);
                for (uint32_t j = op == GS_ALU_ADD ? 0 : 1; j < F; j++) {
                    float x = ld(m, pr.in[0], (size_t)p * F + j);
                    acc = op == GS_ALU_ADD ? acc + (double)x
                                           : (double)gs_alu_apply(op, (float)acc, x);
                }
                float want = (float)acc;
                EXPECT_TRUE(same_value(GS_FP32, ld(m, pr.out, p), want))
                    << gs_alu_name(op) << " " << gs_dtype_name(a) << " row " << p << " got "
                    << ld(m, pr.out, p) << " want " << want;
            }
            gs_mem_free(m);
        }
}

TEST(ExecDtypes, MemsetSaturatesPerDtype)
{
    std::mt19937_64 rng(6);
    for (gs_dtype b : kAll) {
        Prog pr(GS_FP32, b);
        gs_memset(pr.kb, GS_ENG_VECTOR, pr.tout.ap, 1e6f);
        std::string why, first;
        gs_mem *m = pr.run(rng, &why);
        ASSERT_NE(m, nullptr) << why;
        EXPECT_EQ(compare(
                      m, pr, [](float, float) { return 1e6f; }, &first),
                  0)
            << gs_dtype_name(b) << " " << first;
        // e4m3 saturates to 448, int8 to 127, bf16 rounds, fp16 and e5m2 overflow to inf
        if (b == GS_FP8_E4M3) {
            EXPECT_EQ(ld(m, pr.out, 0), 448.0f);
        }
        if (b == GS_INT8) {
            EXPECT_EQ(ld(m, pr.out, 0), 127.0f);
        }
        if (b == GS_FP16 || b == GS_FP8_E5M2) {
            EXPECT_TRUE(std::isinf(ld(m, pr.out, 0)));
        }
        gs_mem_free(m);
    }
}

// SBUF/PSUM images pack partitions at the furthest byte the program addresses, not at the
// hardware's partition size (fewer pages touched); the stride must cover every buffer and every
// operand, and a hand-made program without buffers keeps whole partitions.
size_t sbuf_end(const gs_program *p)
{
    size_t end = 0;
    for (size_t b = 0; b < gs_program_buffer_count(p); b++) {
        const gs_buffer_info *bi = gs_program_buffer(p, (int32_t)b);
        if (bi->space == GS_MEM_SBUF && bi->core == 0)
            end = std::max<size_t>(end, bi->offset + bi->bytes);
    }
    return end;
}

gs_instr_draft raw_memset(uint32_t parts, int64_t offset, uint32_t n, float v)
{
    gs_instr_draft in;
    std::memset(&in, 0, sizeof in);
    in.op = GS_OP_MEMSET;
    in.engine = GS_ENG_VECTOR;
    in.n_out = 1;
    in.imm[0] = v;
    in.file = __FILE__;
    in.line = __LINE__;
    gs_ap &a = in.out[0];
    a.space = GS_MEM_SBUF;
    a.dtype = GS_FP32;
    a.tensor = 0;
    a.ndim = 1;
    a.part_count = parts;
    a.offset = offset;
    a.shape[0] = n;
    a.stride[0] = 1;
    return in;
}

TEST(MemLayout, PartitionsArePackedAtTheFurthestBufferByte)
{
    std::mt19937_64 rng(8);
    Prog pr(GS_FP32, GS_FP32);
    gs_memset(pr.kb, GS_ENG_VECTOR, pr.tout.ap, 2.5f);
    std::string why;
    gs_mem *m = pr.run(rng, &why);
    ASSERT_NE(m, nullptr) << why;
    const size_t end = sbuf_end(pr.p);
    ASSERT_GT(end, 0u);
    EXPECT_EQ(gs_mem_partition_stride(m, GS_MEM_SBUF), (end + 63) / 64 * 64);
    EXPECT_LT(gs_mem_partition_stride(m, GS_MEM_SBUF), gs_config_sbuf_partition_bytes(&pr.cfg));
    for (size_t i = 0; i < (size_t)P * F; i++)
        ASSERT_EQ(ld(m, pr.out, i), 2.5f) << i;
    gs_mem_free(m);
}

TEST(MemLayout, AnOperandBeyondEveryBufferWidensTheStride)
{
    std::mt19937_64 rng(9);
    Prog pr(GS_FP32, GS_FP32);
    const int64_t off = (int64_t)sbuf_end(pr.p) + 4096; // outside every buffer
    gs_instr_draft in = raw_memset(P, off, 16, 7.0f);
    ASSERT_GE(gs_program_append_raw(pr.p, &in), 0);
    std::string why;
    gs_mem *m = pr.run(rng, &why);
    ASSERT_NE(m, nullptr) << why;
    const size_t stride = gs_mem_partition_stride(m, GS_MEM_SBUF);
    EXPECT_GE(stride, (size_t)off + 16 * 4);
    const uint8_t *sbuf = gs_mem_space(m, GS_MEM_SBUF, 0);
    for (unsigned p = 0; p < P; p++)
        for (unsigned j = 0; j < 16; j++) {
            float v;
            std::memcpy(&v, sbuf + p * stride + (size_t)off + j * 4, 4);
            ASSERT_EQ(v, 7.0f) << "partition " << p << " element " << j;
        }
    gs_mem_free(m);
}

TEST(MemLayout, WithoutBuffersPartitionsAreWhole)
{
    gs_config cfg;
    gs_test_config_gen3_like(&cfg);
    gs_program *p = gs_program_create(&cfg);
    gs_instr_draft in = raw_memset(128, 0, 8, 1.0f);
    ASSERT_GE(gs_program_append_raw(p, &in), 0);
    gs_error err;
    gs_mem *m = gs_mem_create(p, &err);
    ASSERT_NE(m, nullptr) << err.message;
    EXPECT_EQ(gs_mem_partition_stride(m, GS_MEM_SBUF), gs_config_sbuf_partition_bytes(&cfg));
    EXPECT_EQ(gs_mem_partition_stride(m, GS_MEM_PSUM), gs_config_psum_partition_bytes(&cfg));
    gs_mem_free(m);
    gs_program_free(p);
}

} // namespace
