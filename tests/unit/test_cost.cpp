// test_cost.cpp - the cost model against hand calculations on hand-built configs
// (tests/support/test_config_builders.h), one test per formula branch, plus the roofline
// property: no matmul is ever faster than its FLOPs at the tensor engine's peak.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gs/cost.h"
#include "instr_view.h"
#include "test_config_builders.h"

namespace
{

// A dense [P x F] tile pattern in SBUF (or PSUM / HBM).
gs_ap tile(gs_dtype t, uint32_t P, uint32_t F, gs_memspace sp = GS_MEM_SBUF)
{
    gs_ap a;
    std::memset(&a, 0, sizeof a);
    a.space = sp;
    a.dtype = t;
    a.tensor = 0;
    a.ndim = 1;
    a.part_count = P;
    a.part_stride = sp == GS_MEM_HBM ? F : 0;
    a.shape[0] = F;
    a.stride[0] = 1;
    return a;
}

gs_instr_draft instr(gs_opcode op, gs_engine eng)
{
    return empty_draft(op, eng);
}

gs_instr_draft unary(gs_opcode op, gs_engine eng, const gs_ap &out, const gs_ap &in0)
{
    gs_instr_draft in = instr(op, eng);
    in.n_out = 1;
    in.n_in = 1;
    in.out[0] = out;
    in.in[0] = in0;
    return in;
}

gs_instr_draft matmul(gs_dtype ts, gs_dtype tm, uint32_t K, uint32_t M, uint32_t N)
{
    gs_instr_draft in = instr(GS_OP_MATMUL, GS_ENG_TENSOR);
    in.n_in = 2;
    in.n_out = 1;
    in.in[0] = tile(ts, K, M);
    in.in[1] = tile(tm, K, N);
    in.out[0] = tile(GS_FP32, M, N, GS_MEM_PSUM);
    return in;
}

gs_instr_draft dma(const gs_ap &dst, const gs_ap &src, gs_opcode op = GS_OP_DMA_COPY)
{
    return unary(op, GS_ENG_DMA, dst, src);
}

double cycles(const gs_config &c, const gs_instr_draft &in, gs_cost_state *st = nullptr)
{
    return gs_cost_compute_cycles(&c, view(in), st);
}

class Cost : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        gs_test_config_gen2_like(&g2);
        gs_test_config_gen3_like(&g3);
    }
    gs_config g2, g3;
};

} // namespace

// ---- access patterns ----

TEST(CostAp, SizesAndRuns)
{
    gs_ap a = tile(GS_BF16, 128, 512);
    EXPECT_EQ(gs_ap_free_elems(&a), 512u);
    EXPECT_EQ(gs_ap_bytes(&a), 128u * 512 * 2);
    EXPECT_EQ(gs_ap_runs_per_row(&a), 1u);

    gs_ap b = a; // [4 x 64] rows of 64 with stride 128: 4 runs
    b.ndim = 2;
    b.shape[0] = 4;
    b.stride[0] = 128;
    b.shape[1] = 64;
    b.stride[1] = 1;
    EXPECT_EQ(gs_ap_free_elems(&b), 256u);
    EXPECT_EQ(gs_ap_runs_per_row(&b), 4u);
    b.stride[0] = 64; // now the rows abut: one run
    EXPECT_EQ(gs_ap_runs_per_row(&b), 1u);
    b.stride[1] = 2; // strided innermost: every element is a run
    EXPECT_EQ(gs_ap_runs_per_row(&b), 256u);

    gs_ap c = a; // size-1 dims never break contiguity
    c.ndim = 3;
    c.shape[0] = 2;
    c.stride[0] = 32;
    c.shape[1] = 1;
    c.stride[1] = 999;
    c.shape[2] = 32;
    c.stride[2] = 1;
    EXPECT_EQ(gs_ap_runs_per_row(&c), 1u);
    c.stride[2] = 0; // broadcast innermost
    EXPECT_EQ(gs_ap_runs_per_row(&c), 64u);
    gs_ap d = tile(GS_FP8_E4M3, 3, 7);
    EXPECT_EQ(gs_ap_bytes(&d), 21u);
}

// ---- tensor engine ----

TEST_F(Cost, ClocksAndNs)
{
    EXPECT_EQ(gs_cost_clock_hz(&g2, GS_ENG_TENSOR), g2.tensor.clock.v);
    EXPECT_EQ(gs_cost_clock_hz(&g2, GS_ENG_VECTOR), g2.vector.clock.v);
    EXPECT_EQ(gs_cost_clock_hz(&g2, GS_ENG_SCALAR), g2.scalar.clock.v);
    EXPECT_EQ(gs_cost_clock_hz(&g2, GS_ENG_GPSIMD), g2.gpsimd.clock.v);
    EXPECT_EQ(gs_cost_clock_hz(&g2, GS_ENG_DMA), 0.0);
    gs_instr_draft mm = matmul(GS_BF16, GS_BF16, 128, 128, 512);
    EXPECT_DOUBLE_EQ(gs_cost_compute_ns(&g2, view(mm), nullptr),
                     cycles(g2, mm) * 1e9 / g2.tensor.clock.v);
}

TEST_F(Cost, MatmulBf16)
{
    // max(min_ii, max(min(stationary_load, M), N / rate)) + fixed_overhead
    gs_instr_draft mm = matmul(GS_BF16, GS_BF16, 128, 128, 512);
    EXPECT_EQ(cycles(g2, mm), 512.0 + 8.0);
}

TEST_F(Cost, MatmulFp32FourTimesSlower)
{
    gs_instr_draft mm = matmul(GS_FP32, GS_FP32, 128, 128, 512);
    EXPECT_EQ(cycles(g2, mm), 512.0 * 4 + 8.0);
    // Mixed operand dtypes take the slower rate.
    gs_instr_draft mixed = matmul(GS_BF16, GS_FP32, 128, 128, 512);
    EXPECT_EQ(cycles(g2, mixed), 512.0 * 4 + 8.0);
}

TEST_F(Cost, MatmulFp8TwiceFasterOnGen3)
{
    gs_instr_draft mm = matmul(GS_FP8_E4M3, GS_FP8_E4M3, 128, 128, 512);
    EXPECT_EQ(cycles(g3, mm), 256.0 + 8.0);
    gs_instr_draft e5 = matmul(GS_FP8_E5M2, GS_FP8_E4M3, 128, 128, 512);
    EXPECT_EQ(cycles(g3, e5), 256.0 + 8.0);
    gs_instr_draft half = matmul(GS_FP8_E4M3, GS_BF16, 128, 128, 512); // fp8 x bf16: bf16 rate
    EXPECT_EQ(cycles(g3, half), 512.0 + 8.0);
}

TEST_F(Cost, MatmulMinIiFloor)
{
    gs_instr_draft mm = matmul(GS_BF16, GS_BF16, 128, 16, 32);
    EXPECT_EQ(cycles(g2, mm), g2.tensor.min_ii.v + 8.0);
}

TEST_F(Cost, MatmulStationaryLoadTerm)
{
    gs_test_num_set(&g2.tensor.min_ii, 16);
    // Stationary load min(64, M) dominates a short moving tensor.
    EXPECT_EQ(cycles(g2, matmul(GS_BF16, GS_BF16, 128, 128, 40)), 64.0 + 8.0);
    EXPECT_EQ(cycles(g2, matmul(GS_BF16, GS_BF16, 128, 30, 20)), 30.0 + 8.0);
    EXPECT_EQ(cycles(g2, matmul(GS_BF16, GS_BF16, 128, 30, 50)), 50.0 + 8.0);
}

TEST_F(Cost, TransposeOnTensorEngine)
{
    // Input [P, F] is stationary (M = F), a [P x P] identity is moving (N = P).
    gs_instr_draft t = unary(GS_OP_TRANSPOSE, GS_ENG_TENSOR, tile(GS_BF16, 64, 128, GS_MEM_PSUM),
                             tile(GS_BF16, 128, 64));
    EXPECT_EQ(cycles(g2, t), 128.0 + 8.0);
    t.in[0] = tile(GS_FP32, 128, 64);
    EXPECT_EQ(cycles(g2, t), 128.0 * 4 + 8.0);
    t.in[0] = tile(GS_BF16, 32, 128); // M = 128 -> stationary_load 64 > N = 32
    EXPECT_EQ(cycles(g2, t), 64.0 + 8.0);
    EXPECT_EQ(gs_cost_flops(view(t)), 0.0);
}

// ---- vector / scalar / gpsimd ----

TEST_F(Cost, VectorOneAndTwoInputs)
{
    gs_instr_draft ts = unary(GS_OP_TENSOR_SCALAR, GS_ENG_VECTOR, tile(GS_BF16, 128, 1000),
                              tile(GS_BF16, 128, 1000));
    ts.alu0 = GS_ALU_MUL;
    EXPECT_EQ(cycles(g2, ts), 1000.0);

    gs_instr_draft tt = ts;
    tt.op = GS_OP_TENSOR_TENSOR;
    tt.alu0 = GS_ALU_ADD;
    tt.n_in = 2;
    tt.in[1] = tile(GS_BF16, 128, 1000);
    EXPECT_EQ(cycles(g2, tt), 2000.0); // two_input_factor 2

    // A [P,1] per-partition operand is a broadcast, not a second streamed input.
    gs_instr_draft tsap = ts;
    tsap.n_in = 2;
    tsap.flags = GS_F_SCALE_AP;
    tsap.in[1] = tile(GS_FP32, 128, 1);
    EXPECT_EQ(cycles(g2, tsap), 1000.0);
    // ... and does not cost the bf16 fast path on gen3 (bf16 2 elems/cycle).
    EXPECT_EQ(cycles(g3, tsap), 500.0);
}

TEST_F(Cost, VectorPassesOverLanes)
{
    gs_test_num_set(&g2.vector.lanes, 48);
    gs_instr_draft ts = unary(GS_OP_TENSOR_SCALAR, GS_ENG_VECTOR, tile(GS_BF16, 128, 1000),
                              tile(GS_BF16, 128, 1000));
    EXPECT_EQ(cycles(g2, ts), 3.0 * 1000.0); // ceil(128 / 48) = 3 passes
}

TEST_F(Cost, VectorDtypeRateIsTheSlowestOperand)
{
    gs_instr_draft cp =
        unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, tile(GS_BF16, 128, 1024), tile(GS_BF16, 128, 1024));
    EXPECT_EQ(cycles(g3, cp), 512.0); // bf16 -> bf16 at 2 elems/cycle
    cp.in[0] = tile(GS_FP32, 128, 1024);
    EXPECT_EQ(cycles(g3, cp), 1024.0); // fp32 -> bf16 at the fp32 rate
}

TEST_F(Cost, VectorLargestOperandSetsN)
{
    gs_instr_draft cp =
        unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, tile(GS_BF16, 128, 300), tile(GS_BF16, 128, 200));
    EXPECT_EQ(cycles(g2, cp), 300.0);
}

TEST_F(Cost, SlowOps)
{
    gs_instr_draft tt = instr(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR);
    tt.n_in = 2;
    tt.n_out = 1;
    tt.out[0] = tile(GS_FP32, 128, 100);
    tt.in[0] = tile(GS_FP32, 128, 100);
    tt.in[1] = tile(GS_FP32, 128, 100);
    tt.alu0 = GS_ALU_DIV;
    EXPECT_EQ(cycles(g2, tt), 100.0 * 2 * 8);
    tt.alu0 = GS_ALU_POW;
    EXPECT_EQ(cycles(g2, tt), 100.0 * 2 * 8);
    tt.alu0 = GS_ALU_MAX;
    EXPECT_EQ(cycles(g2, tt), 200.0);

    gs_instr_draft ts =
        unary(GS_OP_TENSOR_SCALAR, GS_ENG_VECTOR, tile(GS_FP32, 128, 100), tile(GS_FP32, 128, 100));
    ts.alu0 = GS_ALU_MUL;
    ts.alu1 = GS_ALU_DIV;
    EXPECT_EQ(cycles(g2, ts), 100.0); // alu1 unused without GS_F_HAS_OP1
    ts.flags = GS_F_HAS_OP1;
    EXPECT_EQ(cycles(g2, ts), 800.0);

    // reciprocal: a divide on the vector engine, a table function on the scalar engine.
    gs_instr_draft rv =
        unary(GS_OP_ACTIVATION, GS_ENG_VECTOR, tile(GS_FP32, 128, 100), tile(GS_FP32, 128, 100));
    rv.act = GS_ACT_RECIPROCAL;
    EXPECT_EQ(cycles(g2, rv), 800.0);
    gs_instr_draft rs = rv;
    rs.engine = GS_ENG_SCALAR;
    gs_cost_state st;
    gs_cost_state_init(&st);
    EXPECT_EQ(cycles(g2, rs, &st), 100.0 + g2.scalar.fixed_overhead.v + g2.scalar.table_load.v);
}

TEST_F(Cost, PsumReadFactor)
{
    gs_instr_draft cp = unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, tile(GS_BF16, 128, 512),
                              tile(GS_FP32, 128, 512, GS_MEM_PSUM));
    EXPECT_EQ(cycles(g2, cp), 512.0 * 1.5);
    // Writing to PSUM is not a PSUM read.
    gs_instr_draft w = unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, tile(GS_FP32, 128, 512, GS_MEM_PSUM),
                             tile(GS_FP32, 128, 512));
    EXPECT_EQ(cycles(g2, w), 512.0);
    // An engine without the key has no penalty (unset factor = 1).
    gs_instr_draft gp = cp;
    gp.engine = GS_ENG_GPSIMD;
    EXPECT_EQ(cycles(g2, gp), 512.0 + g2.gpsimd.fixed_overhead.v);
}

// The vector performance mode (perf_mode_elems_per_cycle) applies to tensor_copy and
// tensor_scalar only, and only when every streamed operand is in SBUF, contiguous innermost and
// of a dtype with a mode rate; everything else costs what it costs without the mode.
TEST_F(Cost, VectorPerformanceModeOnlyForCopyAndScalarFromContiguousSbuf)
{
    gs_config on = g3, off = g3;
    for (gs_config *c : {&on, &off}) {
        c->vector.elems_per_cycle[GS_BF16].v = 2;
        c->vector.elems_per_cycle[GS_FP16].v = 2;
        c->vector.fixed_overhead.v = 0;
    }
    on.vector.perf_mode_epc[GS_BF16].v = 4;
    on.vector.perf_mode_epc[GS_FP16].v = 4;
    const gs_ap b = tile(GS_BF16, 128, 4096), h = tile(GS_FP16, 128, 4096);
    // eligible: bf16 -> fp16 copy and a bf16 tensor_scalar, SBUF to SBUF, contiguous
    gs_instr_draft cp = unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, h, b);
    EXPECT_EQ(cycles(on, cp), 4096.0 / 4);
    EXPECT_EQ(cycles(off, cp), 4096.0 / 2);
    gs_instr_draft ts = unary(GS_OP_TENSOR_SCALAR, GS_ENG_VECTOR, b, b);
    EXPECT_EQ(cycles(on, ts), 4096.0 / 4);
    // the roofline's engine bound uses the mode's rate too (never above what is charged)
    EXPECT_DOUBLE_EQ(gs_cost_peak_ns(&on, view(cp)),
                     128.0 * 4096 / (on.vector.lanes.v * 4) / on.vector.clock.v * 1e9);
    // not eligible, so exactly the cost without the mode:
    std::vector<gs_instr_draft> slow;
    slow.push_back(
        unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, b, tile(GS_BF16, 128, 4096, GS_MEM_PSUM)));
    slow.push_back(
        unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, tile(GS_BF16, 128, 4096, GS_MEM_PSUM), b));
    slow.push_back(unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, tile(GS_FP32, 128, 4096), b));
    gs_ap strided = b;
    strided.stride[0] = 2;
    slow.push_back(unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, b, strided));
    gs_instr_draft tt = unary(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR, b, b);
    tt.n_in = 2;
    tt.in[1] = b;
    slow.push_back(tt);
    slow.push_back(unary(GS_OP_TENSOR_REDUCE, GS_ENG_VECTOR, tile(GS_BF16, 128, 1), b));
    gs_instr_draft on_gpsimd = cp;
    on_gpsimd.engine = GS_ENG_GPSIMD;
    slow.push_back(on_gpsimd);
    for (size_t i = 0; i < slow.size(); i++) {
        EXPECT_EQ(cycles(on, slow[i]), cycles(off, slow[i])) << "case " << i;
        EXPECT_GT(cycles(on, slow[i]), cycles(on, cp)) << "case " << i;
    }
}

TEST_F(Cost, TableLoadOnlyOnFunctionChange)
{
    const double body = 512.0 + g2.scalar.fixed_overhead.v;
    const double load = g2.scalar.table_load.v;
    gs_instr_draft a =
        unary(GS_OP_ACTIVATION, GS_ENG_SCALAR, tile(GS_BF16, 128, 512), tile(GS_BF16, 128, 512));
    gs_cost_state st;
    gs_cost_state_init(&st);
    EXPECT_EQ(st.act_loaded, -1);
    a.act = GS_ACT_EXP;
    EXPECT_EQ(cycles(g2, a, &st), body + load);
    EXPECT_EQ(st.act_loaded, (int)GS_ACT_EXP);
    EXPECT_EQ(cycles(g2, a, &st), body);
    // Table-free functions neither load nor evict.
    for (gs_act f : {GS_ACT_IDENTITY, GS_ACT_RELU, GS_ACT_SQUARE, GS_ACT_ABS}) {
        a.act = f;
        EXPECT_FALSE(gs_cost_act_uses_table(f));
        EXPECT_EQ(cycles(g2, a, &st), body) << gs_act_name(f);
    }
    a.act = GS_ACT_EXP;
    EXPECT_EQ(cycles(g2, a, &st), body);
    // tensor_copy / tensor_scalar on the scalar engine leave the table alone.
    gs_instr_draft cp =
        unary(GS_OP_TENSOR_COPY, GS_ENG_SCALAR, tile(GS_BF16, 128, 512), tile(GS_BF16, 128, 512));
    EXPECT_EQ(cycles(g2, cp, &st), body);
    cp.op = GS_OP_TENSOR_SCALAR;
    EXPECT_EQ(cycles(g2, cp, &st), body);
    EXPECT_EQ(cycles(g2, a, &st), body);
    a.act = GS_ACT_GELU;
    EXPECT_EQ(cycles(g2, a, &st), body + load);
    a.act = GS_ACT_EXP;
    EXPECT_EQ(cycles(g2, a, &st), body + load);
    // Without state every table function pays the load.
    EXPECT_EQ(cycles(g2, a, nullptr), body + load);
    // The load is not hidden under the min_ii floor.
    gs_instr_draft small =
        unary(GS_OP_ACTIVATION, GS_ENG_SCALAR, tile(GS_BF16, 128, 8), tile(GS_BF16, 128, 8));
    small.act = GS_ACT_TANH;
    EXPECT_EQ(cycles(g2, small, &st), g2.scalar.min_ii.v + g2.scalar.fixed_overhead.v + load);
}

TEST_F(Cost, ActivationAccumulateAndApOperandsAreNotStreamed)
{
    gs_instr_draft a =
        unary(GS_OP_ACTIVATION, GS_ENG_SCALAR, tile(GS_BF16, 128, 512), tile(GS_BF16, 128, 512));
    a.act = GS_ACT_IDENTITY;
    a.flags = GS_F_SCALE_AP | GS_F_BIAS_AP | GS_F_ACC_OUT;
    a.n_in = 3;
    a.in[1] = tile(GS_FP32, 128, 1);
    a.in[2] = tile(GS_FP32, 128, 1);
    a.n_out = 2;
    a.out[1] = tile(GS_FP32, 128, 1);
    EXPECT_EQ(cycles(g2, a), 512.0 + g2.scalar.fixed_overhead.v); // no two-input factor
}

TEST_F(Cost, GpsimdStartupAndCrossPartition)
{
    const double fo = g2.gpsimd.fixed_overhead.v;
    gs_instr_draft ts =
        unary(GS_OP_TENSOR_SCALAR, GS_ENG_GPSIMD, tile(GS_FP32, 128, 100), tile(GS_FP32, 128, 100));
    EXPECT_EQ(cycles(g2, ts), 100.0 + fo);
    gs_instr_draft io = instr(GS_OP_IOTA, GS_ENG_GPSIMD);
    io.n_out = 1;
    io.out[0] = tile(GS_INT32, 128, 10);
    EXPECT_EQ(cycles(g2, io), g2.gpsimd.min_ii.v + fo);

    gs_instr_draft pr = unary(GS_OP_PARTITION_REDUCE, GS_ENG_GPSIMD, tile(GS_FP32, 1, 100),
                              tile(GS_FP32, 128, 100));
    pr.alu0 = GS_ALU_ADD;
    EXPECT_EQ(cycles(g2, pr), 100.0 * 4 + fo);
    gs_instr_draft pb = unary(GS_OP_PARTITION_BROADCAST, GS_ENG_GPSIMD, tile(GS_FP32, 128, 100),
                              tile(GS_FP32, 1, 100));
    EXPECT_EQ(cycles(g2, pb), 100.0 * 4 + fo);
}

TEST_F(Cost, ReductionsUseTheInputSize)
{
    gs_test_num_set(&g2.vector.min_ii, 1);
    gs_instr_draft r =
        unary(GS_OP_TENSOR_REDUCE, GS_ENG_VECTOR, tile(GS_FP32, 128, 1), tile(GS_FP32, 128, 1000));
    r.alu0 = GS_ALU_MAX;
    r.iimm[0] = 1;
    EXPECT_EQ(cycles(g2, r), 1000.0);
    gs_instr_draft bs =
        unary(GS_OP_BN_STATS, GS_ENG_VECTOR, tile(GS_FP32, 128, 3), tile(GS_FP32, 128, 2));
    EXPECT_EQ(cycles(g2, bs), 2.0); // input free size, not the 3-wide output
    EXPECT_EQ(gs_cost_flops(view(r)), 128.0 * 1000);
}

TEST_F(Cost, Gather)
{
    gs_ap table = tile(GS_BF16, 128, 64, GS_MEM_HBM); // view of rows of a [V, 64] tensor
    gs_instr_draft g = unary(GS_OP_GATHER, GS_ENG_GPSIMD, tile(GS_BF16, 128, 64), table);
    g.n_in = 2;
    g.in[1] = tile(GS_INT32, 128, 1);
    EXPECT_EQ(cycles(g2, g), 128.0 * g2.gpsimd.gather_row_cycles.v + g2.gpsimd.fixed_overhead.v);
    gs_dma_plan d;
    gs_cost_dma_plan(&g2, view(g), &d);
    EXPECT_EQ(d.bytes, 128.0 * 64 * 2);
    EXPECT_EQ(d.descriptors, 128.0);
    EXPECT_EQ(d.eff_bytes, 128.0 * 512); // 128-byte rows cost min_efficient_chunk each
    EXPECT_EQ(d.descriptor_ns, 0.0);     // descriptors come from the gpsimd engine
    EXPECT_EQ(d.issue_ns, 0.0);          // ... which issues the transfer itself
    EXPECT_EQ(d.fixed_ns, g2.dma.fixed_latency.v);
    EXPECT_EQ(d.engine_bw, g2.dma.bandwidth_per_engine.v);
    EXPECT_EQ(d.hbm, 1);
    EXPECT_EQ(d.engines_used, 16u); // rows land on all 128 partitions
    EXPECT_EQ(gs_cost_hbm_bytes(view(g)), 128.0 * 64 * 2);
    EXPECT_EQ(gs_cost_flops(view(g)), 0.0);
}

// ---- DMA ----

namespace
{
gs_dma_plan plan_of(const gs_config &c, const gs_instr_draft &in)
{
    gs_dma_plan p;
    gs_cost_dma_plan(&c, view(in), &p);
    return p;
}
} // namespace

TEST_F(Cost, DmaSameShapeMeansTheSamePlan)
{
    // Transfers that differ only where gs_cost_dma_plan does not look (HBM offset, tensor or
    // buffer id) share a plan; any field it reads makes them different.
    gs_ap sb = tile(GS_BF16, 64, 300), hb = tile(GS_BF16, 64, 300, GS_MEM_HBM);
    sb.part_start = 8; // partitions 8..71: uneven engine shares
    hb.part_stride = 1000;
    const gs_instr_draft a = dma(sb, hb);
    gs_instr_draft b = a;
    b.in[0].offset = 123456;
    b.in[0].tensor = 3;
    b.out[0].offset = 64;
    b.out[0].tensor = 2;
    ASSERT_TRUE(gs_cost_dma_same_shape(view(a), view(b)));
    for (const gs_config *c : {&g2, &g3}) {
        const gs_dma_plan pa = plan_of(*c, a), pb = plan_of(*c, b);
        EXPECT_EQ(std::memcmp(&pa, &pb, sizeof pa), 0);
    }
    // each change below alters the plan on some generation, and is seen as a different shape
    std::vector<gs_instr_draft> other(7, a);
    other[0].out[0].part_start = 16;
    other[1].out[0].part_count = 32;
    other[2].in[0].stride[0] = 2;
    other[3].out[0].shape[0] = 200;
    other[3].in[0].shape[0] = 200;
    other[4].out[0].dtype = GS_FP32;
    other[5].op = GS_OP_GATHER;
    other[6].out[0].space = GS_MEM_HBM; // HBM->HBM: rows round robin
    for (size_t k = 0; k < other.size(); ++k) {
        EXPECT_FALSE(gs_cost_dma_same_shape(view(a), view(other[k]))) << k;
        bool differs = false;
        for (const gs_config *c : {&g2, &g3}) {
            const gs_dma_plan pa = plan_of(*c, a), po = plan_of(*c, other[k]);
            differs = differs || std::memcmp(&pa, &po, sizeof pa) != 0;
        }
        EXPECT_TRUE(differs) << k;
    }
}

TEST_F(Cost, DmaSplitsOverEnginesByPartitionGroup)
{
    // 128 partitions over 16 engines: 8 partitions each, equal shares.
    gs_instr_draft d = dma(tile(GS_BF16, 128, 2048), tile(GS_BF16, 128, 2048, GS_MEM_HBM));
    gs_dma_plan c = plan_of(g2, d);
    EXPECT_EQ(c.bytes, 128.0 * 2048 * 2);
    EXPECT_EQ(c.engines_used, 16u);
    EXPECT_EQ(c.n_engines, 16u);
    for (unsigned e = 0; e < 16; ++e) {
        EXPECT_EQ(c.share[e].bytes, 8.0 * 2048 * 2) << e;
        EXPECT_EQ(c.share[e].descriptors, 8.0) << e;
    }
    EXPECT_EQ(c.descriptors, 128.0);
    EXPECT_EQ(c.eff_bytes, c.bytes);
    EXPECT_EQ(c.descriptor_ns, g2.dma.descriptor_overhead.v);
    EXPECT_EQ(c.issue_ns, g2.dma.issue_latency.v);
    EXPECT_EQ(c.hbm, 1);
    const double share = g2.dma.fixed_latency.v + 8.0 * g2.dma.descriptor_overhead.v +
                         8.0 * 2048 * 2 / g2.dma.bandwidth_per_engine.v;
    EXPECT_DOUBLE_EQ(gs_dma_share_ns(&c, 0), share);
    EXPECT_DOUBLE_EQ(gs_dma_plan_uncontended_ns(&c), g2.dma.issue_latency.v + share);
    EXPECT_EQ(gs_cost_hbm_bytes(view(d)), c.bytes);
    EXPECT_EQ(gs_cost_flops(view(d)), 0.0);
}

TEST_F(Cost, DmaSameRunCountsTheEqualSharesThatFollow)
{
    // same_run[e] is what the DMA model would otherwise count on every transfer: the shares from
    // e on equal to share[e] in bytes, efficient bytes and descriptors, e included.
    gs_config g1;
    gs_test_config_gen1_like(&g1);
    int checked = 0, longer = 0;
    for (const gs_config *c : {&g1, &g2, &g3})
        for (unsigned start : {0u, 4u, 8u, 13u})
            for (unsigned parts : {1u, 12u, 64u, 115u})
                for (int hbm_to_hbm = 0; hbm_to_hbm < 2; ++hbm_to_hbm) {
                    if (start + parts > 128) continue;
                    gs_ap src = tile(GS_BF16, parts, 300, GS_MEM_HBM);
                    gs_ap dst = tile(GS_BF16, parts, 300, hbm_to_hbm ? GS_MEM_HBM : GS_MEM_SBUF);
                    dst.part_start = hbm_to_hbm ? 0 : start;
                    if (hbm_to_hbm) src.part_count = dst.part_count = parts + start;
                    const gs_dma_plan pl = plan_of(*c, dma(dst, src));
                    for (unsigned e = 0; e < pl.n_engines; ++e) {
                        unsigned run = 1;
                        while (e + run < pl.n_engines &&
                               pl.share[e + run].bytes == pl.share[e].bytes &&
                               pl.share[e + run].eff_bytes == pl.share[e].eff_bytes &&
                               pl.share[e + run].descriptors == pl.share[e].descriptors)
                            ++run;
                        EXPECT_EQ(pl.same_run[e], run) << "start " << start << " parts " << parts
                                                       << " hbm " << hbm_to_hbm << " engine " << e;
                        longer += run > 1 && run < pl.n_engines - e;
                        ++checked;
                    }
                }
    EXPECT_GT(checked, 0);
    EXPECT_GT(longer, 0); // runs that end before the last engine were among the cases
}

TEST_F(Cost, DmaFewPartitionsUseFewEngines)
{
    // [4, 4096]: partitions 0-3 are one group: one engine moves everything.
    gs_instr_draft d = dma(tile(GS_BF16, 4, 4096), tile(GS_BF16, 4, 4096, GS_MEM_HBM));
    gs_dma_plan c = plan_of(g3, d);
    EXPECT_EQ(c.engines_used, 1u);
    EXPECT_EQ(c.share[0].bytes, 4.0 * 4096 * 2);
    // 12 partitions starting at partition 4: groups 0 and 1 (4 + 8 partitions).
    gs_instr_draft e = dma(tile(GS_BF16, 12, 256), tile(GS_BF16, 12, 256, GS_MEM_HBM));
    e.out[0].part_start = 4;
    gs_dma_plan ce = plan_of(g3, e);
    EXPECT_EQ(ce.engines_used, 2u);
    EXPECT_EQ(ce.share[0].bytes, 4.0 * 512);
    EXPECT_EQ(ce.share[1].bytes, 8.0 * 512);
    // An explicit partitions_per_engine overrides the derived 128 / 16.
    gs_config wide = g3;
    gs_test_num_set(&wide.dma.partitions_per_engine, 32);
    gs_dma_plan cw =
        plan_of(wide, dma(tile(GS_BF16, 128, 256), tile(GS_BF16, 128, 256, GS_MEM_HBM)));
    EXPECT_EQ(cw.engines_used, 4u);
}

TEST_F(Cost, DmaHbmToHbmSplitsRowsRoundRobin)
{
    gs_instr_draft d =
        dma(tile(GS_BF16, 20, 1024, GS_MEM_HBM), tile(GS_BF16, 20, 1024, GS_MEM_HBM));
    gs_dma_plan c = plan_of(g2, d);
    EXPECT_EQ(c.engines_used, 16u);
    EXPECT_EQ(c.share[0].bytes, 2.0 * 2048); // rows 0 and 16
    EXPECT_EQ(c.share[3].bytes, 2.0 * 2048);
    EXPECT_EQ(c.share[4].bytes, 1.0 * 2048);
    EXPECT_EQ(c.share[15].bytes, 1.0 * 2048);
}

TEST_F(Cost, DmaSmallChunksAreInefficient)
{
    gs_instr_draft d = dma(tile(GS_BF16, 128, 64), tile(GS_BF16, 128, 64, GS_MEM_HBM));
    gs_dma_plan c = plan_of(g2, d);
    EXPECT_EQ(c.bytes, 128.0 * 128);
    EXPECT_EQ(c.eff_bytes, 128.0 * g2.dma.min_efficient_chunk.v);
    // Exactly min_efficient_chunk per row is efficient.
    gs_instr_draft e = dma(tile(GS_BF16, 128, 256), tile(GS_BF16, 128, 256, GS_MEM_HBM));
    gs_dma_plan ce = plan_of(g2, e);
    EXPECT_EQ(ce.eff_bytes, ce.bytes);
}

TEST_F(Cost, DmaDescriptorsFromTheLessContiguousSide)
{
    gs_ap src = tile(GS_BF16, 128, 64, GS_MEM_HBM);
    src.ndim = 2; // [2 x 32] with a gap: 2 runs per row
    src.shape[0] = 2;
    src.stride[0] = 100;
    src.shape[1] = 32;
    src.stride[1] = 1;
    gs_instr_draft d = dma(tile(GS_BF16, 128, 64), src);
    gs_dma_plan c = plan_of(g2, d);
    EXPECT_EQ(c.descriptors, 256.0);
    EXPECT_EQ(c.eff_bytes, 256.0 * 512); // 64-byte chunks
    EXPECT_EQ(c.share[0].descriptors, 16.0);
    // The same on the destination side.
    gs_instr_draft r = dma(src, tile(GS_BF16, 128, 64));
    EXPECT_EQ(plan_of(g2, r).descriptors, 256.0);
    // Element-strided: one descriptor per element.
    src.ndim = 1;
    src.shape[0] = 64;
    src.stride[0] = 3;
    gs_instr_draft s = dma(tile(GS_BF16, 128, 64), src);
    EXPECT_EQ(plan_of(g2, s).descriptors, 128.0 * 64);
}

TEST_F(Cost, DmaHardwareDescriptors)
{
    gs_instr_draft d = dma(tile(GS_BF16, 128, 2048), tile(GS_BF16, 128, 2048, GS_MEM_HBM));
    gs_dma_plan c = plan_of(g3, d);
    EXPECT_EQ(c.descriptors, 128.0); // still counted (chunk efficiency) ...
    EXPECT_EQ(c.descriptor_ns, 0.0); // ... but not charged
    EXPECT_DOUBLE_EQ(gs_dma_share_ns(&c, 5),
                     g3.dma.fixed_latency.v + c.share[5].bytes / g3.dma.bandwidth_per_engine.v);
}

TEST_F(Cost, DmaTransposeFactor)
{
    gs_instr_draft d =
        dma(tile(GS_BF16, 64, 128), tile(GS_BF16, 128, 64, GS_MEM_HBM), GS_OP_DMA_TRANSPOSE);
    gs_dma_plan c = plan_of(g3, d);
    EXPECT_EQ(c.engine_bw, g3.dma.bandwidth_per_engine.v / g3.dma.transpose_factor.v);
    EXPECT_EQ(c.bytes, 128.0 * 64 * 2);
    EXPECT_EQ(c.descriptors, 64.0); // destination partition-rows
    EXPECT_EQ(c.engines_used, 8u);  // 64 destination partitions
    gs_instr_draft cp = d;
    cp.op = GS_OP_DMA_COPY;
    EXPECT_EQ(plan_of(g3, cp).engine_bw, g3.dma.bandwidth_per_engine.v);
}

TEST_F(Cost, DmaSbufToSbufIsNotHbm)
{
    gs_instr_draft d = dma(tile(GS_BF16, 128, 256), tile(GS_BF16, 128, 256));
    EXPECT_EQ(plan_of(g2, d).hbm, 0);
    EXPECT_EQ(gs_cost_hbm_bytes(view(d)), 0.0);
    gs_instr_draft w = dma(tile(GS_BF16, 128, 256, GS_MEM_HBM), tile(GS_BF16, 128, 256));
    EXPECT_EQ(plan_of(g2, w).hbm, 1);
}

TEST_F(Cost, PeakTimeNeverExceedsCost)
{
    gs_instr_draft mm = matmul(GS_BF16, GS_BF16, 128, 128, 512);
    EXPECT_DOUBLE_EQ(gs_cost_peak_ns(&g2, view(mm)),
                     2.0 * 128 * 128 * 512 / gs_config_peak_flops(&g2, GS_BF16) * 1e9);
    EXPECT_LE(gs_cost_peak_ns(&g2, view(mm)), gs_cost_compute_ns(&g2, view(mm), nullptr));
    gs_instr_draft tt = instr(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR);
    tt.n_in = 2;
    tt.in[0] = tile(GS_BF16, 128, 4096);
    tt.in[1] = tile(GS_BF16, 128, 4096);
    tt.n_out = 1;
    tt.out[0] = tile(GS_BF16, 128, 4096);
    const double peak = gs_cost_peak_ns(&g2, view(tt));
    EXPECT_DOUBLE_EQ(peak, 128.0 * 4096 /
                               (g2.vector.lanes.v * g2.vector.elems_per_cycle[GS_BF16].v) /
                               g2.vector.clock.v * 1e9);
    EXPECT_LT(peak,
              gs_cost_compute_ns(&g2, view(tt), nullptr)); // two inputs cost 2x, not the ceiling
}

// ---- statistics ----

TEST_F(Cost, Flops)
{
    gs_instr_draft mm = matmul(GS_BF16, GS_BF16, 100, 50, 300);
    EXPECT_EQ(gs_cost_flops(view(mm)), 2.0 * 100 * 50 * 300);
    EXPECT_EQ(gs_cost_tensor_flops(view(mm)), 2.0 * 100 * 50 * 300);
    gs_instr_draft tt =
        unary(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR, tile(GS_FP32, 128, 70), tile(GS_FP32, 128, 70));
    tt.n_in = 2;
    tt.in[1] = tile(GS_FP32, 128, 70);
    EXPECT_EQ(gs_cost_flops(view(tt)), 128.0 * 70);
    EXPECT_EQ(gs_cost_tensor_flops(view(tt)), 0.0);
    gs_instr_draft cp =
        unary(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, tile(GS_FP32, 128, 70), tile(GS_FP32, 128, 70));
    EXPECT_EQ(gs_cost_flops(view(cp)), 0.0);
    EXPECT_EQ(gs_cost_hbm_bytes(view(mm)), 0.0);
}

// ---- the roofline property ----

namespace
{

// Peak matmul FLOP/s of one core for dtype t, computed here (not through config.c) so this
// test stands alone: 2 * rows * cols * clock * rate.
// Values per PE per cycle: 2 for fp8 in double-row mode, 4 for the quad-packed MX dtypes.
double k_factor(const gs_config &c, gs_dtype t)
{
    if (c.tensor.double_row && (t == GS_FP8_E4M3 || t == GS_FP8_E5M2)) return 2.0;
    return gs_dtype_is_mx(t) ? 4.0 : 1.0;
}

double peak_flops(const gs_config &c, gs_dtype t)
{
    return 2.0 * k_factor(c, t) * c.tensor.rows.v * c.tensor.cols.v * c.tensor.clock.v *
           c.tensor.rate[t].v;
}

void check_roofline(gs_config c, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<gs_dtype> dts;
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (c.tensor.rate[t].src && c.tensor.rate[t].v > 0) dts.push_back((gs_dtype)t);
    ASSERT_FALSE(dts.empty());
    std::uniform_int_distribution<size_t> pick(0, dts.size() - 1);
    std::uniform_int_distribution<uint32_t> K(1, (uint32_t)c.tensor.rows.v);
    std::uniform_int_distribution<uint32_t> M(1, (uint32_t)c.tensor.cols.v);
    std::uniform_int_distribution<uint32_t> N(1, (uint32_t)c.tensor.moving_free_max.v);
    std::uniform_int_distribution<uint32_t> over(1, 3);
    const gs_num min_ii = c.tensor.min_ii, fixed = c.tensor.fixed_overhead;
    for (int i = 0; i < 20000; i++) {
        // The tightest case: no floor or overhead to hide behind.
        if (i % 2 == 0) {
            gs_test_num_set(&c.tensor.min_ii, 0);
            gs_test_num_set(&c.tensor.fixed_overhead, 0);
        }
        gs_dtype a = dts[pick(rng)], b = dts[pick(rng)];
        uint32_t k = K(rng), m = M(rng), n = N(rng);
        // Now and then an operand beyond the array (rejected by the builder, still costed
        // without breaking the bound).
        if (i % 10 == 0) {
            k *= over(rng);
            m *= over(rng);
        }
        gs_instr_draft mm = matmul(a, b, k, m, n);
        double ns = gs_cost_compute_ns(&c, view(mm), nullptr);
        gs_dtype slow = c.tensor.rate[a].v <= c.tensor.rate[b].v ? a : b;
        double bound_ns = gs_cost_flops(view(mm)) / peak_flops(c, slow) * 1e9;
        ASSERT_GE(ns, bound_ns * (1.0 - 1e-12)) << gs_dtype_name(a) << " x " << gs_dtype_name(b)
                                                << " K=" << k << " M=" << m << " N=" << n;
        if (i % 2 == 0) {
            c.tensor.min_ii = min_ii;
            c.tensor.fixed_overhead = fixed;
        }
    }
}

} // namespace

TEST_F(Cost, MatmulNeverBeatsRooflineGen2)
{
    check_roofline(g2, 21);
}
TEST_F(Cost, MatmulNeverBeatsRooflineGen3)
{
    check_roofline(g3, 22);
}

// The same property on the shipped generation configs, against gs_config_peak_flops.
TEST(CostShippedConfigs, MatmulNeverBeatsRoofline)
{
    for (const char *gen : {"gen1", "gen2", "gen3", "gen4"}) {
        std::string path = std::string(GS_SOURCE_DIR) + "/configs/" + gen + ".yaml";
        gs_diags diags;
        gs_diags_init(&diags);
        gs_config *c = gs_config_load(path.c_str(), &diags);
        ASSERT_NE(c, nullptr) << path << ": " << (diags.count ? diags.items[0].message : "");
        gs_diags_free(&diags);
        for (int t = 0; t < GS_DTYPE_COUNT; t++) {
            double peak = gs_config_peak_flops(c, (gs_dtype)t);
            if (peak > 0) {
                EXPECT_DOUBLE_EQ(peak, peak_flops(*c, (gs_dtype)t)) << gen;
            }
        }
        check_roofline(*c, 23);
        gs_config_free(c);
    }
}

TEST_F(Cost, MatmulFullTileReachesPeak)
{
    // A full 128x128x512 bf16 matmul with no overheads runs exactly at peak: the bound is tight.
    gs_test_num_set(&g2.tensor.fixed_overhead, 0);
    gs_instr_draft mm = matmul(GS_BF16, GS_BF16, 128, 128, 512);
    double ns = gs_cost_compute_ns(&g2, view(mm), nullptr);
    EXPECT_DOUBLE_EQ(ns, gs_cost_flops(view(mm)) / peak_flops(g2, GS_BF16) * 1e9);
}
