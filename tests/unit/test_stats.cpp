/*
 * test_stats.cpp - run statistics from a hand-made timeline, without SystemC (gs/stats.h):
 * engine and queue counters, the roofline on machine ceilings and on minimum traffic, the
 * critical path and the bottleneck, and the errors for timelines that do not fit the program.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "gs/cost.h"
#include "gs/isa.h"
#include "gs/stats.h"
#include "test_config_builders.h"

namespace
{

struct ProgramDeleter {
    void operator()(gs_program *p) const { gs_program_free(p); }
};
using ProgramPtr = std::unique_ptr<gs_program, ProgramDeleter>;

constexpr uint32_t kCols = 512; /* free elements per partition of every tile */

gs_ap local_ap(gs_memspace space, gs_dtype t, uint32_t free_elems)
{
    gs_ap a;
    memset(&a, 0, sizeof a);
    a.space = space;
    a.dtype = t;
    a.tensor = -1;
    a.ndim = 1;
    a.part_count = 128;
    a.shape[0] = free_elems;
    a.stride[0] = 1;
    return a;
}

gs_ap hbm_ap(int32_t tensor, uint32_t free_elems)
{
    gs_ap a = local_ap(GS_MEM_HBM, GS_BF16, free_elems);
    a.tensor = tensor;
    a.part_stride = free_elems;
    return a;
}

gs_instr_draft instr(gs_opcode op, gs_engine e, unsigned queue)
{
    gs_instr_draft in;
    memset(&in, 0, sizeof in);
    in.op = op;
    in.engine = e;
    in.queue = (uint16_t)queue;
    in.file = "test_stats.cpp";
    in.line = 1;
    in.n_in = 1;
    in.n_out = 1;
    return in;
}

void append(gs_program *p, gs_instr_draft in, std::vector<uint32_t> deps)
{
    in.n_deps = (uint32_t)deps.size();
    in.deps = deps.empty() ? nullptr : deps.data();
    ASSERT_GE(gs_program_append_raw(p, &in), 0);
}

/* load X (queue 0) -> matmul on the tensor engine -> store Y (queue 1); with `reload`, a
 * fourth instruction loads X again (queue 0, after the store). */
struct Fixture {
    gs_config cfg;
    ProgramPtr prog;
    int32_t x = -1, y = -1;

    explicit Fixture(bool reload = false)
    {
        gs_test_config_gen2_like(&cfg);
        prog.reset(gs_program_create(&cfg));
        const int64_t shape[2] = {128, kCols};
        gs_error err;
        x = gs_program_add_tensor(prog.get(), "x", GS_BF16, GS_TENSOR_INPUT, 2, shape, &err);
        y = gs_program_add_tensor(prog.get(), "y", GS_BF16, GS_TENSOR_OUTPUT, 2, shape, &err);
        gs_instr_draft load = instr(GS_OP_DMA_COPY, GS_ENG_DMA, 0);
        load.in[0] = hbm_ap(x, kCols);
        load.out[0] = local_ap(GS_MEM_SBUF, GS_BF16, kCols);
        append(prog.get(), load, {});
        gs_instr_draft mm = instr(GS_OP_MATMUL, GS_ENG_TENSOR, 0);
        mm.n_in = 2;
        mm.in[0] = local_ap(GS_MEM_SBUF, GS_BF16, 128);
        mm.in[1] = local_ap(GS_MEM_SBUF, GS_BF16, kCols);
        mm.out[0] = local_ap(GS_MEM_PSUM, GS_FP32, kCols);
        append(prog.get(), mm, {0});
        gs_instr_draft store = instr(GS_OP_DMA_COPY, GS_ENG_DMA, 1);
        store.in[0] = local_ap(GS_MEM_SBUF, GS_BF16, kCols);
        store.out[0] = hbm_ap(y, kCols);
        append(prog.get(), store, {1});
        if (reload) append(prog.get(), load, {2});
    }
    const gs_instr *at(size_t i) const { return gs_program_instr(prog.get(), i); }
};

struct Timeline {
    gs_timeline tl;
    Timeline(const gs_config &cfg, size_t n)
    {
        gs_error err;
        EXPECT_EQ(gs_timeline_init(&tl, n, (unsigned)cfg.cores.v, (unsigned)cfg.dma.queues.v,
                                   (unsigned)cfg.dma.engines.v, &err),
                  GS_OK)
            << err.message;
    }
    ~Timeline() { gs_timeline_free(&tl); }
    /* instruction i ran on `stream` from start to end (ps), pred set its start */
    void set(size_t i, unsigned stream, uint64_t start, uint64_t end, uint64_t hbm_wait,
             int64_t pred)
    {
        gs_timeline_instr &x = tl.instr[i];
        x.stream = (uint16_t)stream;
        x.start_ps = start;
        x.end_ps = end;
        x.hbm_wait_ps = hbm_wait;
        x.pred = (int32_t)pred;
        x.done = 1;
        tl.completed++;
    }
};

constexpr uint64_t kSem = 500; /* ps between a predecessor's end and the next start */

/* The three-instruction timeline: load 0..10 ns (2 ns HBM wait), matmul from 10.5 ns for
 * `mm_ps`, store for 10 ns after it (1 ns HBM wait). */
void fill_three(Timeline &t, const Fixture &f, uint64_t mm_ps)
{
    const unsigned q0 = gs_timeline_stream_id(&t.tl, 0, GS_ENG_DMA, 0);
    const unsigned q1 = gs_timeline_stream_id(&t.tl, 0, GS_ENG_DMA, 1);
    const unsigned pe = gs_timeline_stream_id(&t.tl, 0, GS_ENG_TENSOR, 0);
    const uint64_t mm_end = 10000 + kSem + mm_ps;
    t.set(0, q0, 0, 10000, 2000, -1);
    t.set(1, pe, 10000 + kSem, mm_end, 0, 0);
    t.set(2, q1, mm_end + kSem, mm_end + kSem + 10000, 1000, 1);
    const double bytes = (double)gs_ap_bytes(f.at(0)->out[0]);
    t.tl.stream[q0] = {8000, 0, 0, 2000, 1, bytes, 1};
    t.tl.stream[pe] = {mm_ps, 0, kSem, 0, 1, 0, 0};
    t.tl.stream[q1] = {9000, kSem, 0, 1000, 1, bytes, 1};
    t.tl.dma[0] = {7000, 1500, bytes, 1};
    t.tl.dma[1] = {6000, 500, bytes, 1};
}

TEST(Stats, ThreeInstructionRooflineAndCriticalPath)
{
    Fixture f;
    const gs_instr *mm = f.at(1);
    const double peak_ns = gs_cost_peak_ns(&f.cfg, mm);
    ASSERT_GT(peak_ns, 0);
    /* the matmul takes twice its peak time: the compute bound is the peak time */
    const uint64_t mm_ps = (uint64_t)(2 * peak_ns * 1000);
    Timeline t(f.cfg, 3);
    fill_three(t, f, mm_ps);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_OK) << err.message;

    const double total_ns = (double)(10000 + kSem + mm_ps + kSem + 10000) / 1000.0;
    EXPECT_DOUBLE_EQ(st.total_ns, total_ns);
    EXPECT_EQ(st.instructions, 3u);
    EXPECT_EQ(st.cores_used, 1u);

    /* counters land on their engine and queue */
    const double bytes = (double)gs_ap_bytes(f.at(0)->out[0]);
    EXPECT_DOUBLE_EQ(st.engine[0][GS_ENG_TENSOR].busy_ns, (double)mm_ps / 1000.0);
    EXPECT_DOUBLE_EQ(st.engine[0][GS_ENG_TENSOR].stall_dma_ns, kSem / 1000.0);
    EXPECT_EQ(st.engine_total[GS_ENG_DMA].instructions, 2u);
    EXPECT_DOUBLE_EQ(st.queue[0][0].busy_ns, 10.0);
    EXPECT_DOUBLE_EQ(st.queue[0][1].busy_ns, 10.0);
    EXPECT_DOUBLE_EQ(st.queue[0][1].bytes, bytes);
    EXPECT_DOUBLE_EQ(st.dma_bytes, 2 * bytes);
    EXPECT_DOUBLE_EQ(st.dma_engine[0][1].busy_ns, 6.0);
    const double engines = f.cfg.dma.engines.v;
    ASSERT_GE(engines, 2.0);
    EXPECT_DOUBLE_EQ(st.engine[0][GS_ENG_DMA].busy_ns, 5.5 / engines + 5.5 / engines);
    EXPECT_DOUBLE_EQ(st.engine[0][GS_ENG_DMA].stall_port_ns, 1.5 / engines + 0.5 / engines);

    /* roofline: machine ceilings for one core, the schedule's and the minimum traffic */
    EXPECT_DOUBLE_EQ(st.flops, gs_cost_flops(mm));
    EXPECT_GT(st.flops, 0);
    EXPECT_EQ(st.compute_engines, 1u << GS_ENG_TENSOR);
    EXPECT_DOUBLE_EQ(st.compute_bound_ns, peak_ns);
    EXPECT_DOUBLE_EQ(st.compute_ceiling_flops, gs_config_peak_flops(&f.cfg, GS_BF16));
    EXPECT_DOUBLE_EQ(st.hbm_bytes, 2 * bytes);
    EXPECT_DOUBLE_EQ(st.hbm_ceiling_bytes_per_s, f.cfg.hbm_bandwidth.v * 1e9);
    EXPECT_DOUBLE_EQ(st.dma_ceiling_bytes_per_s,
                     f.cfg.dma.engines.v * f.cfg.dma.bandwidth_per_engine.v * 1e9);
    const double mem_ceiling = std::min(st.hbm_ceiling_bytes_per_s, st.dma_ceiling_bytes_per_s);
    EXPECT_DOUBLE_EQ(st.memory_ceiling_bytes_per_s, mem_ceiling);
    const double memory_ns = std::max(2 * bytes / f.cfg.hbm_bandwidth.v,
                                      2 * bytes / (st.dma_ceiling_bytes_per_s * 1e-9));
    EXPECT_DOUBLE_EQ(st.memory_bound_ns, memory_ns);
    EXPECT_DOUBLE_EQ(st.roofline_ns, std::max(peak_ns, memory_ns));
    EXPECT_DOUBLE_EQ(st.roofline_ratio, total_ns / st.roofline_ns);
    EXPECT_DOUBLE_EQ(st.min_traffic_bytes, 2 * bytes); /* x read once, y written once */
    /* (the hand-made times beat the ceilings, so no ratio >= 1 here: the formulas are checked) */
    EXPECT_DOUBLE_EQ(st.min_memory_bound_ns, 2 * bytes / (mem_ceiling * 1e-9));
    EXPECT_DOUBLE_EQ(st.min_roofline_ns, std::max(peak_ns, st.min_memory_bound_ns));
    EXPECT_DOUBLE_EQ(st.min_roofline_ratio, total_ns / st.min_roofline_ns);

    /* the per-engine bound: the matmul at its peak rate on the tensor engine, nothing on the
     * others; the bound is the larger of that and the memory bounds, named by what it is */
    EXPECT_DOUBLE_EQ(st.engine_bound_ns[GS_ENG_TENSOR], peak_ns);
    EXPECT_EQ(st.engine_bound_ns[GS_ENG_VECTOR], 0.0);
    EXPECT_EQ(st.engine_bound_ns[GS_ENG_SCALAR], 0.0);
    EXPECT_EQ(st.engine_bound_ns[GS_ENG_DMA], 0.0);
    EXPECT_DOUBLE_EQ(st.bound_ns, std::max(peak_ns, memory_ns));
    EXPECT_DOUBLE_EQ(st.bound_ratio, total_ns / st.bound_ns);
    const double hbm_ns = 2 * bytes / f.cfg.hbm_bandwidth.v;
    EXPECT_STREQ(st.bound_engine, peak_ns >= memory_ns  ? "tensor"
                                  : hbm_ns >= memory_ns ? "hbm"
                                                        : "dma");

    /* critical path: store <- matmul <- load; each wait for the predecessor goes to the
     * waiting engine, HBM waits to "hbm"; the parts add up to the total */
    EXPECT_DOUBLE_EQ(st.critical_path_ns[GS_ENG_DMA], (8000.0 + 9000.0 + kSem) / 1000.0);
    EXPECT_DOUBLE_EQ(st.critical_path_ns[GS_ENG_TENSOR], (double)(mm_ps + kSem) / 1000.0);
    EXPECT_DOUBLE_EQ(st.critical_path_hbm_ns, 3.0);
    double sum = st.critical_path_hbm_ns;
    for (int e = 0; e < GS_ENGINE_COUNT; ++e)
        sum += st.critical_path_ns[e];
    EXPECT_DOUBLE_EQ(sum, total_ns);
    ASSERT_GT(mm_ps + kSem, 17500u) << "the matmul must dominate for this check";
    EXPECT_EQ(st.bottleneck, GS_ENG_TENSOR);
    EXPECT_STREQ(st.bottleneck_name, "tensor");

    EXPECT_DOUBLE_EQ(st.first_trigger_ns, 0.0);
    EXPECT_DOUBLE_EQ(st.first_end_ns, 10.0);
}

TEST(Stats, ComputeBoundNeverExceedsTheInstructionsTime)
{
    Fixture f;
    const double peak_ns = gs_cost_peak_ns(&f.cfg, f.at(1));
    /* a matmul that (impossibly) finished in half its peak time bounds with what it took */
    const uint64_t mm_ps = (uint64_t)(peak_ns * 500);
    ASSERT_GT(mm_ps, 0u);
    Timeline t(f.cfg, 3);
    fill_three(t, f, mm_ps);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_OK) << err.message;
    EXPECT_DOUBLE_EQ(st.compute_bound_ns, (double)mm_ps / 1000.0);
    EXPECT_LT(st.compute_bound_ns, peak_ns);
}

TEST(Stats, MinimumTrafficCountsARereadOnce)
{
    Fixture f(true);
    Timeline t(f.cfg, 4);
    fill_three(t, f, 100000);
    const unsigned q0 = gs_timeline_stream_id(&t.tl, 0, GS_ENG_DMA, 0);
    const uint64_t s = t.tl.instr[2].end_ps + kSem;
    t.set(3, q0, s, s + 10000, 0, 2);
    const double bytes = (double)gs_ap_bytes(f.at(0)->out[0]);
    t.tl.stream[q0].bytes += bytes;
    t.tl.stream[q0].transfers++;
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_OK) << err.message;
    EXPECT_DOUBLE_EQ(st.hbm_bytes, 3 * bytes);
    EXPECT_DOUBLE_EQ(st.dma_bytes, 3 * bytes);
    EXPECT_DOUBLE_EQ(st.min_traffic_bytes, 2 * bytes);
    EXPECT_LT(st.min_memory_bound_ns, st.memory_bound_ns);
}

TEST(Stats, HbmWaitsCanBeTheBottleneck)
{
    Fixture f;
    Timeline t(f.cfg, 3);
    fill_three(t, f, 1000);
    /* the store spends almost all of a long transfer waiting for HBM */
    gs_timeline_instr &st2 = t.tl.instr[2];
    st2.end_ps = st2.start_ps + 1000000;
    st2.hbm_wait_ps = 990000;
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_OK) << err.message;
    EXPECT_STREQ(st.bottleneck_name, "hbm");
    EXPECT_EQ(st.bottleneck, GS_ENG_DMA);
    EXPECT_DOUBLE_EQ(st.critical_path_hbm_ns, 992.0);
}

TEST(Stats, NothingRanMeansNoBottleneck)
{
    Fixture f;
    Timeline t(f.cfg, 3);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_OK) << err.message;
    EXPECT_EQ(st.total_ns, 0.0);
    EXPECT_EQ(st.instructions, 0u);
    EXPECT_STREQ(st.bottleneck_name, "none");
    EXPECT_EQ(st.roofline_ratio, 0.0);
    EXPECT_STREQ(st.bound_kind, "");
    char label[32];
    EXPECT_STREQ(gs_run_stats_label(&st, label, sizeof label), "none");
}

/* Throughput-bound: the matmul keeps the tensor engine busy for nearly the whole run. */
TEST(Stats, ABusyEngineIsThroughputBound)
{
    Fixture f;
    const double bytes = (double)gs_ap_bytes(f.at(0)->out[0]);
    const double hbm_ns = 2 * bytes / f.cfg.hbm_bandwidth.v;
    const uint64_t mm_ps = (uint64_t)(20 * hbm_ns * 1000);
    Timeline t(f.cfg, 3);
    fill_three(t, f, mm_ps);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_OK) << err.message;
    const double share = (double)mm_ps / 1000.0 / st.total_ns;
    ASSERT_GE(share, GS_THROUGHPUT_SHARE);
    EXPECT_STREQ(st.bound_kind, "throughput");
    EXPECT_STREQ(st.busiest, "tensor");
    EXPECT_DOUBLE_EQ(st.busiest_share, share);
    char want[96], got[128];
    snprintf(want, sizeof want, "throughput-bound on tensor (busy %.0f%%)", 100 * share);
    EXPECT_STREQ(gs_run_stats_label(&st, got, sizeof got), want);
}

/* Latency-bound: a long store that moves few bytes (no HBM or DMA engine saturated, the tensor
 * engine idle most of the time); the label names the critical path's parts, largest first. */
TEST(Stats, NoSaturatedResourceIsLatencyBound)
{
    Fixture f;
    const double bytes = (double)gs_ap_bytes(f.at(0)->out[0]);
    const double hbm_ns = 2 * bytes / f.cfg.hbm_bandwidth.v;
    const uint64_t mm_ps = (uint64_t)(2 * hbm_ns * 1000);
    Timeline t(f.cfg, 3);
    fill_three(t, f, mm_ps);
    gs_timeline_instr &store = t.tl.instr[2];
    store.end_ps = store.start_ps + (uint64_t)(10 * hbm_ns * 1000);
    store.hbm_wait_ps = 0;
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_OK) << err.message;
    EXPECT_STREQ(st.bound_kind, "latency");
    EXPECT_LT(st.busiest_share, GS_THROUGHPUT_SHARE);
    /* the tensor engine (2/12 of the run) is busier than HBM at its bandwidth (1/12) */
    EXPECT_STREQ(st.busiest, "tensor");
    EXPECT_DOUBLE_EQ(st.busiest_share, (double)mm_ps / 1000.0 / st.total_ns);
    const double dma = st.critical_path_ns[GS_ENG_DMA] / st.total_ns;
    const double tensor = st.critical_path_ns[GS_ENG_TENSOR] / st.total_ns;
    ASSERT_GT(dma, tensor);
    ASSERT_GE(tensor, 0.05);
    ASSERT_LT(st.critical_path_hbm_ns, 0.05 * st.total_ns); /* the load's 2 ns wait: not listed */
    char want[128], got[128];
    snprintf(want, sizeof want, "latency-bound (critical path: dma %.0f%%, tensor %.0f%%)",
             100 * dma, 100 * tensor);
    EXPECT_STREQ(gs_run_stats_label(&st, got, sizeof got), want);
    /* a short buffer is cut, never overrun */
    char tiny[12];
    EXPECT_EQ(strlen(gs_run_stats_label(&st, tiny, sizeof tiny)), sizeof tiny - 1);
}

/* Traffic per memory level: load X to SBUF, two matmuls into one PSUM tile (the second
 * accumulates: a read-modify-write), the PSUM tile copied to SBUF as bf16, stored to Y. Every
 * operand is counted at its bytes; an instruction that did not complete counts nothing. */
TEST(Stats, LevelTrafficCountsEveryOperandOfCompletedInstructions)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr prog(gs_program_create(&cfg));
    const int64_t shape[2] = {128, kCols};
    gs_error err;
    const int32_t x =
        gs_program_add_tensor(prog.get(), "x", GS_BF16, GS_TENSOR_INPUT, 2, shape, &err);
    const int32_t y =
        gs_program_add_tensor(prog.get(), "y", GS_BF16, GS_TENSOR_OUTPUT, 2, shape, &err);
    auto tile = [](gs_memspace m, gs_dtype t, uint32_t n, int32_t buf) {
        gs_ap a = local_ap(m, t, n);
        a.tensor = buf; /* a buffer id: an operand in use */
        return a;
    };
    gs_instr_draft load = instr(GS_OP_DMA_COPY, GS_ENG_DMA, 0);
    load.in[0] = hbm_ap(x, kCols);
    load.out[0] = tile(GS_MEM_SBUF, GS_BF16, kCols, 0);
    append(prog.get(), load, {});
    gs_instr_draft mm = instr(GS_OP_MATMUL, GS_ENG_TENSOR, 0);
    mm.n_in = 2;
    mm.in[0] = tile(GS_MEM_SBUF, GS_BF16, 128, 0);
    mm.in[1] = tile(GS_MEM_SBUF, GS_BF16, kCols, 0);
    mm.out[0] = tile(GS_MEM_PSUM, GS_FP32, kCols, 1);
    append(prog.get(), mm, {0});
    mm.flags |= GS_F_ACCUMULATE;
    append(prog.get(), mm, {1});
    gs_instr_draft cp = instr(GS_OP_TENSOR_COPY, GS_ENG_VECTOR, 0);
    cp.in[0] = tile(GS_MEM_PSUM, GS_FP32, kCols, 1);
    cp.out[0] = tile(GS_MEM_SBUF, GS_BF16, kCols, 2);
    append(prog.get(), cp, {2});
    gs_instr_draft store = instr(GS_OP_DMA_COPY, GS_ENG_DMA, 1);
    store.in[0] = tile(GS_MEM_SBUF, GS_BF16, kCols, 2);
    store.out[0] = hbm_ap(y, kCols);
    append(prog.get(), store, {3});
    const double bf = 128.0 * kCols * 2, f32 = 128.0 * kCols * 4, st_bytes = 128.0 * 128 * 2;
    for (const bool all : {true, false}) {
        SCOPED_TRACE(all ? "every instruction completed" : "the store did not complete");
        Timeline t(cfg, 5);
        const unsigned q0 = gs_timeline_stream_id(&t.tl, 0, GS_ENG_DMA, 0);
        const unsigned q1 = gs_timeline_stream_id(&t.tl, 0, GS_ENG_DMA, 1);
        const unsigned pe = gs_timeline_stream_id(&t.tl, 0, GS_ENG_TENSOR, 0);
        const unsigned ve = gs_timeline_stream_id(&t.tl, 0, GS_ENG_VECTOR, 0);
        t.set(0, q0, 0, 10000, 0, -1);
        t.set(1, pe, 10000, 20000, 0, 0);
        t.set(2, pe, 20000, 30000, 0, 1);
        t.set(3, ve, 30000, 40000, 0, 2);
        if (all) t.set(4, q1, 40000, 50000, 0, 3);
        gs_run_stats st;
        ASSERT_EQ(gs_run_stats_compute(&cfg, prog.get(), &t.tl, &st, &err), GS_OK) << err.message;
        const gs_level_traffic &h = st.level[GS_MEM_HBM], &sb = st.level[GS_MEM_SBUF],
                               &ps = st.level[GS_MEM_PSUM];
        EXPECT_DOUBLE_EQ(h.read_bytes, bf);
        EXPECT_DOUBLE_EQ(h.write_bytes, all ? bf : 0.0);
        /* two matmuls read the stationary and moving tiles; the store reads the copy */
        EXPECT_DOUBLE_EQ(sb.read_bytes, 2 * (st_bytes + bf) + (all ? bf : 0.0));
        EXPECT_DOUBLE_EQ(sb.write_bytes, 2 * bf); /* the load and the copy */
        EXPECT_DOUBLE_EQ(ps.write_bytes, 2 * f32);
        EXPECT_DOUBLE_EQ(ps.read_bytes, f32 + f32); /* the accumulation and the copy */
    }
}

TEST(Stats, DeadlockReportNamesEachStuckStream)
{
    Fixture f;
    Timeline t(f.cfg, 3);
    t.set(0, gs_timeline_stream_id(&t.tl, 0, GS_ENG_DMA, 0), 0, 10000, 0, -1);
    const unsigned pe = gs_timeline_stream_id(&t.tl, 0, GS_ENG_TENSOR, 0);
    const unsigned q1 = gs_timeline_stream_id(&t.tl, 0, GS_ENG_DMA, 1);
    t.tl.instr[1].stream = pe;
    t.tl.instr[2].stream = q1;
    t.tl.wait[pe] = {1, 7}; /* the matmul waits for an instruction that does not exist */
    t.tl.wait[q1] = {2, 1}; /* the store waits for the matmul */
    gs_error err;
    EXPECT_EQ(gs_timeline_deadlock_error(&t.tl, f.prog.get(), &err), GS_ERR_DEADLOCK);
    EXPECT_STREQ(err.message,
                 "deadlock: 2 of 3 instructions can never complete; #1 matmul (core 0 tensor, "
                 "test_stats.cpp:1) waits for #7, which does not exist; #2 dma_copy (core 0 dma "
                 "q1, test_stats.cpp:1) waits for #1 matmul (core 0 tensor, test_stats.cpp:1), "
                 "not completed;");
    EXPECT_STREQ(err.file, "test_stats.cpp");
    /* a wait on a later instruction of the same stream says so */
    t.tl.wait[pe] = {-1, -1};
    t.tl.instr[1].stream = q1;
    t.tl.wait[q1] = {1, 2};
    EXPECT_EQ(gs_timeline_deadlock_error(&t.tl, f.prog.get(), &err), GS_ERR_DEADLOCK);
    EXPECT_NE(strstr(err.message, "later in the same in-order stream"), nullptr) << err.message;
}

TEST(Stats, TimelinesThatDoNotFitAreRejected)
{
    Fixture f;
    gs_run_stats st;
    gs_error err;
    {
        Timeline t(f.cfg, 2); /* the program has 3 instructions */
        EXPECT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_ERR_INVALID);
        EXPECT_NE(strstr(err.message, "3"), nullptr) << err.message;
    }
    {
        Timeline t(f.cfg, 3);
        fill_three(t, f, 1000);
        t.tl.instr[1].stream = t.tl.cores * t.tl.streams_per_core; /* no such stream */
        EXPECT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_ERR_INVALID);
        EXPECT_STREQ(err.file, "test_stats.cpp");
    }
    {
        Timeline t(f.cfg, 3);
        fill_three(t, f, 1000);
        t.tl.instr[2].pred = 3; /* no such instruction */
        EXPECT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_ERR_INVALID);
    }
    {
        Timeline t(f.cfg, 3);
        fill_three(t, f, 1000);
        t.tl.instr[0].pred = 2; /* 2 <- 1 <- 0 <- 2 ... */
        EXPECT_EQ(gs_run_stats_compute(&f.cfg, f.prog.get(), &t.tl, &st, &err), GS_ERR_INVALID);
        EXPECT_NE(strstr(err.message, "cycle"), nullptr) << err.message;
    }
    gs_timeline bad;
    EXPECT_EQ(gs_timeline_init(&bad, 3, 0, 1, 1, &err), GS_ERR_INVALID);
    EXPECT_EQ(gs_timeline_init(&bad, 3, 1, GS_MAX_QUEUES + 1, 1, &err), GS_ERR_INVALID);
    /* more instructions than an int32_t predecessor can name: refused before allocating */
    EXPECT_EQ(gs_timeline_init(&bad, (size_t)INT32_MAX + 1, 1, 1, 1, &err), GS_ERR_INVALID);
    EXPECT_NE(strstr(err.message, "instructions"), nullptr) << err.message;
    gs_timeline_free(nullptr);
}

} // namespace
