/*
 * test_model.cpp - the SystemC model through its C facade (gs/model.h): engine overlap, DMA
 * bandwidth and HBM contention, roofline, functional equality with the pure-C executor,
 * deadlock and time limits, determinism, and the trace file. Every run goes through
 * gs_test_run_isolated (SystemC elaborates once per process).
 */
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gs/cost.h"
#include "gs/exec.h"
#include "gs/isa.h"
#include "gs/builder.h"
#include "gs/model.h"
#include "instr_view.h"
#include "isolated_run.h"
#include "test_config_builders.h"

namespace
{

struct ConfigCase {
    const char *name;
    void (*build)(gs_config *);
};
const ConfigCase kConfigs[] = {
    {"gen1", gs_test_config_gen1_like},
    {"gen2", gs_test_config_gen2_like},
    {"gen3", gs_test_config_gen3_like},
};

struct ProgramDeleter {
    void operator()(gs_program *p) const { gs_program_free(p); }
};
struct MemDeleter {
    void operator()(gs_mem *m) const { gs_mem_free(m); }
};
using ProgramPtr = std::unique_ptr<gs_program, ProgramDeleter>;
using MemPtr = std::unique_ptr<gs_mem, MemDeleter>;

std::string tmp_path(const char *stem)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s/test_model_%s_%d.json", GS_BINARY_DIR, stem, (int)getpid());
    return buf;
}

std::string read_file(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/* ---- hand-built access patterns and instructions (timing tests: operands need no buffers) -- */

gs_ap sbuf_ap(gs_memspace space, gs_dtype t, unsigned parts, uint32_t free_elems)
{
    gs_ap a;
    memset(&a, 0, sizeof a);
    a.space = space;
    a.dtype = t;
    a.tensor = 0;
    a.ndim = 1;
    a.part_count = parts;
    a.shape[0] = free_elems;
    a.stride[0] = 1;
    return a;
}

gs_ap hbm_ap(int32_t tensor, gs_dtype t, unsigned parts, uint32_t free_elems, int64_t offset)
{
    gs_ap a = sbuf_ap(GS_MEM_HBM, t, parts, free_elems);
    a.tensor = tensor;
    a.part_stride = free_elems;
    a.offset = offset;
    return a;
}

gs_instr_draft base_instr(gs_opcode op, gs_engine e, unsigned core, int line)
{
    gs_instr_draft in;
    memset(&in, 0, sizeof in);
    in.op = op;
    in.engine = e;
    in.core = (uint16_t)core;
    in.file = "test_model.cpp";
    in.line = line;
    return in;
}

gs_instr_draft matmul_instr(unsigned core, uint32_t n)
{
    gs_instr_draft in = base_instr(GS_OP_MATMUL, GS_ENG_TENSOR, core, 100);
    in.n_in = 2;
    in.n_out = 1;
    in.in[0] = sbuf_ap(GS_MEM_SBUF, GS_BF16, 128, 128);
    in.in[1] = sbuf_ap(GS_MEM_SBUF, GS_BF16, 128, n);
    in.out[0] = sbuf_ap(GS_MEM_PSUM, GS_FP32, 128, n);
    return in;
}

gs_instr_draft vector_add_instr(unsigned core, uint32_t n)
{
    gs_instr_draft in = base_instr(GS_OP_TENSOR_TENSOR, GS_ENG_VECTOR, core, 200);
    in.n_in = 2;
    in.n_out = 1;
    in.alu0 = GS_ALU_ADD;
    in.in[0] = sbuf_ap(GS_MEM_SBUF, GS_BF16, 128, n);
    in.in[1] = sbuf_ap(GS_MEM_SBUF, GS_BF16, 128, n);
    in.out[0] = sbuf_ap(GS_MEM_SBUF, GS_BF16, 128, n);
    return in;
}

gs_instr_draft dma_load_instr(unsigned core, unsigned queue, int32_t tensor, uint32_t free_elems,
                              int64_t offset)
{
    gs_instr_draft in = base_instr(GS_OP_DMA_COPY, GS_ENG_DMA, core, 300);
    in.queue = (uint16_t)queue;
    in.n_in = 1;
    in.n_out = 1;
    in.in[0] = hbm_ap(tensor, GS_BF16, 128, free_elems, offset);
    in.out[0] = sbuf_ap(GS_MEM_SBUF, GS_BF16, 128, free_elems);
    return in;
}

void append(gs_program *p, gs_instr_draft in, std::vector<uint32_t> deps = {})
{
    in.n_deps = (uint32_t)deps.size();
    in.deps = deps.empty() ? nullptr : deps.data();
    ASSERT_GE(gs_program_append_raw(p, &in), 0);
}

double compute_ns(const gs_config *cfg, const gs_instr_draft &in)
{
    gs_cost_state st;
    gs_cost_state_init(&st);
    return gs_cost_compute_ns(cfg, view(in), &st);
}

gs_status run_timing(const gs_config *cfg, const gs_program *p, gs_run_stats *st, gs_error *err,
                     const char *trace = nullptr, double sim_limit_ns = 0)
{
    gs_run_opts o;
    memset(&o, 0, sizeof o);
    o.trace_path = trace;
    o.sim_limit_ns = sim_limit_ns;
    o.wall_limit_s = 120;
    return gs_test_run_isolated(cfg, p, nullptr, &o, st, err);
}

/* The parts of the critical path add up to the total. */
void expect_critical_path_sums(const gs_run_stats &st)
{
    double sum = st.critical_path_hbm_ns;
    for (int e = 0; e < GS_ENGINE_COUNT; ++e)
        sum += st.critical_path_ns[e];
    EXPECT_NEAR(sum, st.total_ns, 1e-6 * (1 + st.total_ns));
}

/* ---- random programs through the kernel builder ---- */

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    uint32_t next()
    {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return (uint32_t)(s >> 11);
    }
    uint32_t below(uint32_t n) { return next() % n; }
};

gs_tensor make_tensor(gs_program *p, const char *name, gs_dtype t, gs_tensor_kind kind,
                      int64_t rows, int64_t cols)
{
    int64_t shape[2] = {rows, cols};
    gs_error err;
    gs_tensor h;
    memset(&h, 0, sizeof h);
    h.id = gs_program_add_tensor(p, name, t, kind, 2, shape, &err);
    EXPECT_GE(h.id, 0) << err.message;
    h.dtype = t;
    h.ndim = 2;
    h.shape[0] = rows;
    h.shape[1] = cols;
    return h;
}

/*
 * A random tile program per core: load a weight tile, then per row block load x, and do a
 * random mix of matmul (+ PSUM evacuation), activation, vector and gpsimd elementwise work,
 * stores. Independent work lands on different engines and queues, so engines overlap.
 */
ProgramPtr random_program(const gs_config *cfg, uint64_t seed, unsigned cores)
{
    Rng rng(seed);
    ProgramPtr p(gs_program_create(cfg));
    if (!p) return p;
    const uint32_t n_choices[] = {64, 128, 256, 512};
    for (unsigned core = 0; core < cores; ++core) {
        const unsigned blocks = 1 + rng.below(5);
        const uint32_t n = n_choices[rng.below(4)];
        char name[32];
        snprintf(name, sizeof name, "x%u", core);
        gs_tensor X = make_tensor(p.get(), name, GS_BF16, GS_TENSOR_INPUT, 128 * blocks, n);
        snprintf(name, sizeof name, "w%u", core);
        gs_tensor W = make_tensor(p.get(), name, GS_BF16, GS_TENSOR_INPUT, 128, 128);
        snprintf(name, sizeof name, "y%u", core);
        gs_tensor Y = make_tensor(p.get(), name, GS_BF16, GS_TENSOR_OUTPUT, 128 * blocks, n);

        gs_kb *kb = gs_kb_create(p.get(), core);
        const gs_caps *caps = gs_kb_caps(kb);
        gs_pool *wp = gs_pool_create(kb, GS_MEM_SBUF, "w", 1, 128 * 2);
        gs_pool *xp = gs_pool_create(kb, GS_MEM_SBUF, "x", 2 + rng.below(2), 512 * 2);
        gs_pool *yp = gs_pool_create(kb, GS_MEM_SBUF, "y", 2, 512 * 2);
        gs_pool *pp = gs_pool_create(kb, GS_MEM_PSUM, "acc", 2, 512 * 4);
        /* Contraction K and stationary width M as the PE array allows (gen1: 64 columns). */
        const unsigned K = std::min(128u, caps->pe_rows), M = std::min(128u, caps->pe_cols);
        gs_tile w = gs_tile_alloc(wp, GS_BF16, K, M);
        gs_dma_copy(kb, w.ap, gs_hbm_rows(&W, 0, K, 0, M), -1);
        for (unsigned b = 0; b < blocks; ++b) {
            gs_tile x = gs_tile_alloc(xp, GS_BF16, 128, n);
            gs_dma_copy(kb, x.ap, gs_hbm_rows(&X, 128 * b, 128, 0, n), -1);
            gs_tile y = gs_tile_alloc(yp, GS_BF16, 128, n);
            switch (rng.below(4)) {
            case 0: {
                gs_tile acc = gs_tile_alloc(pp, GS_FP32, M, n);
                const gs_ap moving = gs_tile_view(&x, 0, K, 0, n);
                gs_matmul(kb, acc.ap, w.ap, moving, 0);
                if (rng.below(2)) gs_matmul(kb, acc.ap, w.ap, moving, 1);
                gs_tensor_copy(kb, rng.below(2) ? GS_ENG_VECTOR : GS_ENG_SCALAR,
                               gs_tile_view(&y, 0, M, 0, n), acc.ap);
                break;
            }
            case 1:
                gs_activation(kb, y.ap, x.ap, rng.below(2) ? GS_ACT_GELU : GS_ACT_EXP, gs_imm(0.5f),
                              gs_imm(0.25f), nullptr);
                break;
            case 2:
                gs_tensor_tensor(kb, y.ap, x.ap, x.ap, GS_ALU_MUL);
                break;
            default:
                gs_tensor_scalar(kb, caps->has_gpsimd ? GS_ENG_GPSIMD : GS_ENG_VECTOR, y.ap, x.ap,
                                 GS_ALU_MUL, gs_imm(2.0f), GS_ALU_ADD, gs_imm(1.0f));
                break;
            }
            gs_dma_copy(kb, gs_hbm_rows(&Y, 128 * b, 128, 0, n), y.ap, -1);
        }
        EXPECT_EQ(gs_kb_status(kb), GS_OK) << gs_kb_error(kb)->message;
        gs_kb_free(kb);
    }
    return p;
}

void fill_inputs(const gs_program *p, gs_mem *m, uint64_t seed)
{
    Rng rng(seed);
    for (size_t t = 0; t < gs_program_tensor_count(p); ++t) {
        const gs_tensor_info *ti = gs_program_tensor(p, (int32_t)t);
        if (ti->kind != GS_TENSOR_INPUT) continue;
        void *data = gs_mem_tensor(m, (int32_t)t);
        for (uint64_t i = 0; i < ti->elems; ++i)
            gs_dtype_store(ti->dtype, data, i, (float)((int)rng.below(2001) - 1000) / 500.0f);
    }
}

bool same_stats(gs_run_stats a, gs_run_stats b)
{
    a.wall_s = b.wall_s = 0;
    return memcmp(&a, &b, sizeof a) == 0;
}

} // namespace

/* ---- engine overlap ---- */

TEST(ModelOverlap, IndependentEnginesTakeTheMax)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_instr_draft mm = matmul_instr(0, 512), va = vector_add_instr(0, 2048);
    append(p.get(), mm);
    append(p.get(), va);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
    const double a = compute_ns(&cfg, mm), b = compute_ns(&cfg, va);
    EXPECT_NEAR(st.total_ns, std::max(a, b), 0.002);
    EXPECT_EQ(st.instructions, 2u);
    EXPECT_EQ(st.engine[0][GS_ENG_TENSOR].instructions, 1u);
    EXPECT_NEAR(st.engine[0][GS_ENG_TENSOR].busy_ns, a, 0.002);
    EXPECT_NEAR(st.engine[0][GS_ENG_VECTOR].busy_ns, b, 0.002);
    EXPECT_STREQ(st.bottleneck_name, a > b ? "tensor" : "vector");
    expect_critical_path_sums(st);
}

TEST(ModelOverlap, DependentWorkTakesTheSumPlusSemaphore)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_instr_draft mm = matmul_instr(0, 512), va = vector_add_instr(0, 2048);
    append(p.get(), mm);
    append(p.get(), va, {0});
    /* Same engine, in order: no semaphore. */
    append(p.get(), vector_add_instr(0, 2048), {1});
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
    const double a = compute_ns(&cfg, mm), b = compute_ns(&cfg, va);
    EXPECT_NEAR(st.total_ns, a + cfg.sem_latency.v + 2 * b, 0.003);
    EXPECT_NEAR(st.engine[0][GS_ENG_VECTOR].stall_dep_ns, a + cfg.sem_latency.v, 0.002);
    EXPECT_EQ(st.engine[0][GS_ENG_VECTOR].stall_dma_ns, 0.0);
    EXPECT_NEAR(st.critical_path_ns[GS_ENG_TENSOR], a, 0.002);
    EXPECT_NEAR(st.critical_path_ns[GS_ENG_VECTOR], cfg.sem_latency.v + 2 * b, 0.003);
    expect_critical_path_sums(st);
}

TEST(ModelOverlap, TwoCoresRunInParallel)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_instr_draft mm0 = matmul_instr(0, 512), mm1 = matmul_instr(1, 512);
    append(p.get(), mm0);
    append(p.get(), mm1);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
    EXPECT_NEAR(st.total_ns, compute_ns(&cfg, mm0), 0.002);
    EXPECT_EQ(st.cores_used, 2u);
    EXPECT_GT(st.flops, 0);
    EXPECT_DOUBLE_EQ(st.peak_flops, 2 * gs_config_peak_flops(&cfg, GS_BF16));
}

/* ---- DMA ---- */

namespace
{
struct DmaSetup {
    gs_config cfg;
    ProgramPtr p;
    int32_t tensor = -1;
};

void dma_setup(DmaSetup &s, unsigned transfers_per_queue, unsigned queues, unsigned cores,
               uint32_t free_elems)
{
    s.p.reset(gs_program_create(&s.cfg));
    int64_t shape[2] = {(int64_t)128 * transfers_per_queue * queues * cores, free_elems};
    gs_error err;
    s.tensor = gs_program_add_tensor(s.p.get(), "src", GS_BF16, GS_TENSOR_INPUT, 2, shape, &err);
    ASSERT_GE(s.tensor, 0) << err.message;
    int64_t row = 0;
    for (unsigned c = 0; c < cores; ++c)
        for (unsigned q = 0; q < queues; ++q)
            for (unsigned t = 0; t < transfers_per_queue; ++t, row += 128)
                append(s.p.get(), dma_load_instr(c, q, s.tensor, free_elems, row * free_elems));
}
} // namespace

/* Uncontended time of one transfer from its trigger: issue, then the slowest share (its fixed
 * cost, descriptors and bytes at the engine rate) with the HBM latency. */
static double one_transfer_ns(const gs_config &cfg, const gs_instr *in)
{
    gs_dma_plan d;
    gs_cost_dma_plan(&cfg, in, &d);
    return gs_dma_plan_uncontended_ns(&d) + (d.hbm ? cfg.hbm_latency.v : 0.0);
}

TEST(ModelDma, OneTransferRunsOnEveryEngineOfItsPartitions)
{
    for (const ConfigCase &cc : kConfigs) {
        SCOPED_TRACE(cc.name);
        DmaSetup s;
        cc.build(&s.cfg);
        dma_setup(s, 1, 1, 1, 4096);
        const gs_instr *in = gs_program_instr(s.p.get(), 0);
        gs_dma_plan d;
        gs_cost_dma_plan(&s.cfg, in, &d);
        ASSERT_TRUE(d.hbm);
        ASSERT_EQ(d.engines_used, (unsigned)s.cfg.dma.engines.v);
        gs_run_stats st;
        gs_error err;
        ASSERT_EQ(run_timing(&s.cfg, s.p.get(), &st, &err), GS_OK) << err.message;
        const double expect = one_transfer_ns(s.cfg, in);
        EXPECT_NEAR(st.total_ns, expect, 0.002);
        EXPECT_DOUBLE_EQ(st.queue[0][0].bytes, d.bytes);
        EXPECT_EQ(st.queue[0][0].transfers, 1u);
        EXPECT_NEAR(st.queue[0][0].busy_ns, st.total_ns, 0.002);
        for (unsigned e = 0; e < d.n_engines; ++e) {
            EXPECT_EQ(st.dma_engine[0][e].shares, 1u) << e;
            EXPECT_DOUBLE_EQ(st.dma_engine[0][e].bytes, d.share[e].bytes) << e;
        }
        EXPECT_DOUBLE_EQ(st.dma_bytes, d.bytes);
        EXPECT_DOUBLE_EQ(st.hbm_bytes, gs_cost_hbm_bytes(in));
        EXPECT_EQ(st.engine[0][GS_ENG_DMA].stall_port_ns, 0.0);
        EXPECT_STREQ(st.bottleneck_name, "dma");
    }
}

TEST(ModelDma, FourPartitionsUseOneEngine)
{
    /* A[4, 4096] bf16: one partition group, so one engine moves all 32 KiB. */
    gs_config cfg;
    gs_test_config_gen3_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_error err;
    const int32_t t = make_tensor(p.get(), "A", GS_BF16, GS_TENSOR_INPUT, 4, 4096).id;
    ASSERT_GE(t, 0);
    gs_instr_draft in = dma_load_instr(0, 0, t, 4096, 0);
    in.in[0].part_count = 4;
    in.out[0].part_count = 4;
    append(p.get(), in);
    gs_run_stats st;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
    EXPECT_EQ(st.dma_engine[0][0].shares, 1u);
    EXPECT_DOUBLE_EQ(st.dma_engine[0][0].bytes, 32768.0);
    for (unsigned e = 1; e < 16; ++e)
        EXPECT_EQ(st.dma_engine[0][e].shares, 0u) << e;
    EXPECT_NEAR(st.total_ns, one_transfer_ns(cfg, gs_program_instr(p.get(), 0)), 0.002);
}

TEST(ModelDma, LimitedByHbmWhenHbmIsSlower)
{
    DmaSetup s;
    gs_test_config_gen2_like(&s.cfg);
    gs_test_num_set(&s.cfg.hbm_bandwidth, s.cfg.dma.bandwidth_per_engine.v / 2);
    dma_setup(s, 1, 1, 1, 8192);
    gs_dma_plan d;
    gs_cost_dma_plan(&s.cfg, gs_program_instr(s.p.get(), 0), &d);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&s.cfg, s.p.get(), &st, &err), GS_OK) << err.message;
    /* the 16 shares start together and pass the HBM one after another */
    const double expect = d.issue_ns + d.fixed_ns + d.descriptor_ns * d.share[0].descriptors +
                          s.cfg.hbm_latency.v + d.eff_bytes / s.cfg.hbm_bandwidth.v;
    EXPECT_NEAR(st.total_ns, expect, 0.05); /* each share's HBM time is rounded up to a ps */
    EXPECT_GE(st.total_ns, st.memory_bound_ns);
    EXPECT_GT(st.engine[0][GS_ENG_DMA].stall_port_ns, 0.0);
}

TEST(ModelDma, QueuesShareTheEngines)
{
    /* Two queues with one full-width transfer each: both need all 16 engines, so together they
     * take two shares' time, not one (queues add concurrency, not bandwidth). */
    DmaSetup one, two;
    gs_test_config_gen2_like(&one.cfg);
    gs_test_config_gen2_like(&two.cfg);
    dma_setup(one, 1, 1, 1, 4096);
    dma_setup(two, 1, 2, 1, 4096);
    gs_run_stats a, b;
    gs_error err;
    ASSERT_EQ(run_timing(&one.cfg, one.p.get(), &a, &err), GS_OK) << err.message;
    ASSERT_EQ(run_timing(&two.cfg, two.p.get(), &b, &err), GS_OK) << err.message;
    gs_dma_plan d;
    gs_cost_dma_plan(&one.cfg, gs_program_instr(one.p.get(), 0), &d);
    EXPECT_NEAR(b.total_ns - a.total_ns, gs_dma_share_ns(&d, 0), 0.01);
    for (unsigned e = 0; e < 16; ++e)
        EXPECT_EQ(b.dma_engine[0][e].shares, 2u);
}

TEST(ModelDma, AQueuePipelinesItsIssueLatency)
{
    /* Four independent transfers in one queue: the issue latency is paid once, the shares run
     * back to back on the engines, in queue order. */
    DmaSetup s;
    gs_test_config_gen2_like(&s.cfg);
    dma_setup(s, 4, 1, 1, 4096);
    gs_dma_plan d;
    gs_cost_dma_plan(&s.cfg, gs_program_instr(s.p.get(), 0), &d);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&s.cfg, s.p.get(), &st, &err), GS_OK) << err.message;
    /* the HBM latency delays each share's end, but the engine starts the next share meanwhile */
    const double share = gs_dma_share_ns(&d, 0);
    EXPECT_NEAR(st.total_ns, d.issue_ns + 4 * share + s.cfg.hbm_latency.v, 0.01);
    EXPECT_LT(st.total_ns, 4 * (d.issue_ns + share));
}

TEST(ModelDma, QueuesShareHbmBandwidth)
{
    /* 2 cores x 16 queues x 4 transfers of 1 MiB through an HBM of 2 engines' bandwidth:
     * HBM-bound, so the data time is total bytes / hbm_bw. */
    DmaSetup s;
    gs_test_config_gen2_like(&s.cfg);
    gs_test_num_set(&s.cfg.hbm_bandwidth, 2 * s.cfg.dma.bandwidth_per_engine.v);
    const unsigned queues = (unsigned)s.cfg.dma.queues.v;
    dma_setup(s, 4, queues, 2, 4096);
    gs_dma_plan d;
    gs_cost_dma_plan(&s.cfg, gs_program_instr(s.p.get(), 0), &d);
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&s.cfg, s.p.get(), &st, &err), GS_OK) << err.message;
    const double n = 4.0 * queues * 2;
    const double data_ns = n * d.eff_bytes / s.cfg.hbm_bandwidth.v;
    EXPECT_GE(st.total_ns, data_ns);
    EXPECT_LE(st.total_ns, data_ns + d.issue_ns + d.fixed_ns +
                               d.share[0].descriptors * d.descriptor_ns + s.cfg.hbm_latency.v +
                               0.001 * n * d.engines_used) /* each share rounds up to a ps */
        << "data " << data_ns;
    EXPECT_NEAR(st.memory_bound_ns, st.hbm_bytes / s.cfg.hbm_bandwidth.v, 1e-6);
    EXPECT_GE(st.total_ns, st.roofline_ns);
    EXPECT_GE(st.total_ns, st.min_roofline_ns);
    EXPECT_GT(st.engine_total[GS_ENG_DMA].stall_port_ns, 0.0);
    EXPECT_GT(st.critical_path_hbm_ns, 0.0);
    EXPECT_EQ(st.engine_total[GS_ENG_DMA].instructions, (uint64_t)n);
    double qbytes = 0;
    for (unsigned c = 0; c < 2; ++c)
        for (unsigned q = 0; q < queues; ++q) {
            EXPECT_EQ(st.queue[c][q].transfers, 4u);
            qbytes += st.queue[c][q].bytes;
        }
    EXPECT_DOUBLE_EQ(qbytes, st.dma_bytes);
    expect_critical_path_sums(st);
}

TEST(ModelDma, SameTimeTransfersReserveInProgramOrder)
{
    /* A small and a large transfer on two queues, both triggered at time 0 and both needing
     * every engine: whichever reserves first runs first. The order is the program's (the
     * arbiter's), whichever queue each is on; before, it was the order in which SystemC ran
     * the queues' threads, which does not depend on the program: one of these two programs
     * put the large transfer first. */
    for (int small_queue = 0; small_queue < 2; ++small_queue) {
        SCOPED_TRACE(small_queue);
        gs_config cfg;
        gs_test_config_gen2_like(&cfg);
        ProgramPtr p(gs_program_create(&cfg));
        gs_error err;
        const int32_t t = make_tensor(p.get(), "src", GS_BF16, GS_TENSOR_INPUT, 256, 8192).id;
        ASSERT_GE(t, 0);
        const int large_queue = 1 - small_queue;
        append(p.get(), dma_load_instr(0, (unsigned)small_queue, t, 512, 0));
        append(p.get(), dma_load_instr(0, (unsigned)large_queue, t, 8192, 128 * 8192));
        const double small_ns = one_transfer_ns(cfg, gs_program_instr(p.get(), 0));
        const double large_ns = one_transfer_ns(cfg, gs_program_instr(p.get(), 1));
        ASSERT_LT(small_ns * 2, large_ns);
        gs_run_stats st;
        ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
        /* the small one (instruction 0) took the engines first: it ran as if alone, and the
         * large one waited for its shares */
        EXPECT_NEAR(st.queue[0][small_queue].busy_ns, small_ns, 0.002);
        EXPECT_GT(st.queue[0][large_queue].busy_ns, large_ns + 1.0);
        EXPECT_LT(st.total_ns, small_ns + large_ns);
    }
}

TEST(ModelDma, EachTransferIsSplitByItsOwnShapesPlan)
{
    /* One queue cycles through three transfer shapes (a DMA queue keeps the plans of its last
     * two shapes): every transfer's bytes must reach the engines its own plan gives, whichever
     * plans the queue holds. The bytes per engine do not depend on contention, so the
     * expectation is the plans' shares summed in program order. */
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_error err;
    const int32_t t = make_tensor(p.get(), "src", GS_BF16, GS_TENSOR_INPUT, 256, 8192).id;
    ASSERT_GE(t, 0);
    struct Shape {
        unsigned parts, start;
        uint32_t free_elems;
    } shapes[] = {{128, 0, 256}, {40, 8, 1000}, {16, 96, 64}};
    for (int round = 0; round < 4; ++round)
        for (const Shape &sh : shapes) {
            gs_instr_draft in = dma_load_instr(0, 0, t, sh.free_elems, 0);
            in.in[0] = hbm_ap(t, GS_BF16, sh.parts, sh.free_elems, 0);
            in.out[0] = sbuf_ap(GS_MEM_SBUF, GS_BF16, sh.parts, sh.free_elems);
            in.out[0].part_start = sh.start;
            append(p.get(), in);
        }
    double want_bytes[GS_MAX_QUEUES] = {0};
    uint64_t want_shares[GS_MAX_QUEUES] = {0};
    unsigned engines = 0;
    for (size_t i = 0; i < gs_program_count(p.get()); ++i) {
        gs_dma_plan plan;
        gs_cost_dma_plan(&cfg, gs_program_instr(p.get(), i), &plan);
        engines = plan.n_engines;
        for (unsigned e = 0; e < plan.n_engines; ++e) {
            want_bytes[e] += plan.share[e].bytes;
            want_shares[e] += plan.share[e].bytes > 0;
        }
    }
    ASSERT_GT(engines, 1u);
    gs_run_stats st;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
    for (unsigned e = 0; e < engines; ++e) {
        EXPECT_DOUBLE_EQ(st.dma_engine[0][e].bytes, want_bytes[e]) << e;
        EXPECT_EQ(st.dma_engine[0][e].shares, want_shares[e]) << e;
    }
}

/* ---- roofline ---- */

namespace
{
struct ConfigDeleter {
    void operator()(gs_config *c) const { gs_config_free(c); }
};
using ConfigPtr = std::unique_ptr<gs_config, ConfigDeleter>;

/* The shipped generation configs (configs/genN.yaml). */
std::vector<std::pair<std::string, ConfigPtr>> shipped_configs()
{
    std::vector<std::pair<std::string, ConfigPtr>> out;
    for (const char *g : {"gen1", "gen2", "gen3"}) {
        const std::string path = std::string(GS_SOURCE_DIR) + "/configs/" + g + ".yaml";
        gs_diags d;
        gs_diags_init(&d);
        gs_config *c = gs_config_load(path.c_str(), &d);
        EXPECT_NE(c, nullptr) << path << ": " << (d.count ? d.items[0].message : "");
        gs_diags_free(&d);
        if (c) out.emplace_back(g, ConfigPtr(c));
    }
    return out;
}

void check_random_programs(const gs_config &cfg, uint64_t first_seed, int count)
{
    for (uint64_t seed = first_seed; seed < first_seed + (uint64_t)count; ++seed) {
        SCOPED_TRACE(seed);
        const unsigned cores = 1 + (unsigned)(seed % (unsigned)cfg.cores.v);
        ProgramPtr p = random_program(&cfg, seed, cores);
        ASSERT_TRUE(p);
        gs_run_stats st;
        gs_error err;
        ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
        EXPECT_EQ(st.instructions, gs_program_count(p.get()));
        EXPECT_GT(st.roofline_ns, 0.0);
        EXPECT_GE(st.total_ns, st.roofline_ns);
        EXPECT_GE(st.total_ns, st.compute_bound_ns);
        EXPECT_GE(st.total_ns, st.memory_bound_ns);
        EXPECT_GE(st.roofline_ratio, 1.0);
        expect_critical_path_sums(st);
        for (unsigned c = 0; c < cores; ++c)
            for (int e = 0; e < GS_ENGINE_COUNT; ++e) {
                const gs_engine_stats &es = st.engine[c][e];
                if (e == GS_ENG_DMA) continue; /* a sum over parallel queues */
                EXPECT_LE(es.busy_ns + es.stall_dep_ns + es.stall_dma_ns + es.stall_port_ns,
                          st.total_ns + 1e-6);
            }
        EXPECT_NE(std::string(st.bottleneck_name), "none");
    }
}
} // namespace

TEST(ModelRoofline, NoRandomProgramBeatsItsRoofline)
{
    for (const ConfigCase &cc : kConfigs) {
        SCOPED_TRACE(cc.name);
        gs_config cfg;
        cc.build(&cfg);
        check_random_programs(cfg, 1, 12);
    }
}

TEST(ModelRoofline, ShippedConfigsNeverBeatTheRoofline)
{
    auto configs = shipped_configs();
    ASSERT_EQ(configs.size(), 3u);
    for (auto &c : configs) {
        SCOPED_TRACE(c.first);
        check_random_programs(*c.second, 50, 10);
    }
}

/* ---- functional ---- */

TEST(ModelFunctional, OutputsEqualThePureCExecutorBitForBit)
{
    for (const ConfigCase &cc : kConfigs) {
        SCOPED_TRACE(cc.name);
        gs_config cfg;
        cc.build(&cfg);
        for (uint64_t seed = 100; seed < 104; ++seed) {
            ProgramPtr p = random_program(&cfg, seed, (unsigned)cfg.cores.v);
            ASSERT_TRUE(p);
            gs_error err;
            MemPtr ref(gs_mem_create(p.get(), &err)), got(gs_mem_create(p.get(), &err));
            ASSERT_TRUE(ref && got) << err.message;
            fill_inputs(p.get(), ref.get(), seed);
            fill_inputs(p.get(), got.get(), seed);
            ASSERT_EQ(gs_exec_program(ref.get(), p.get(), &err), GS_OK) << err.message;
            gs_run_opts o;
            memset(&o, 0, sizeof o);
            o.functional = 1;
            gs_run_stats fst, tst;
            ASSERT_EQ(gs_test_run_isolated(&cfg, p.get(), got.get(), &o, &fst, &err), GS_OK)
                << err.message;
            size_t outputs = 0;
            for (size_t t = 0; t < gs_program_tensor_count(p.get()); ++t) {
                const gs_tensor_info *ti = gs_program_tensor(p.get(), (int32_t)t);
                if (ti->kind != GS_TENSOR_OUTPUT) continue;
                ++outputs;
                EXPECT_EQ(memcmp(gs_mem_tensor(ref.get(), (int32_t)t),
                                 gs_mem_tensor(got.get(), (int32_t)t), (size_t)ti->bytes),
                          0)
                    << "output " << ti->name;
            }
            EXPECT_GT(outputs, 0u);
            /* Timing-only mode: identical timing and statistics. */
            o.functional = 0;
            ASSERT_EQ(gs_test_run_isolated(&cfg, p.get(), nullptr, &o, &tst, &err), GS_OK)
                << err.message;
            EXPECT_TRUE(same_stats(fst, tst));
        }
    }
}

/* ---- deadlock and limits ---- */

TEST(ModelErrors, DependencyOnALaterInstructionIsADeadlock)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    append(p.get(), matmul_instr(0, 128));
    gs_instr_draft first = vector_add_instr(0, 64);
    first.line = 41;
    append(p.get(), first, {2}); /* #1 waits for #2, later on the same engine */
    append(p.get(), vector_add_instr(0, 64));
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_ERR_DEADLOCK);
    const std::string msg = err.message;
    EXPECT_NE(msg.find("#1 tensor_tensor"), std::string::npos) << msg;
    EXPECT_NE(msg.find("#2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("test_model.cpp:41"), std::string::npos) << msg;
    EXPECT_NE(msg.find("core 0 vector"), std::string::npos) << msg;
    EXPECT_EQ(err.line, 41);
    /* Statistics as far as the run got: the matmul finished. */
    EXPECT_EQ(st.instructions, 1u);
    EXPECT_GT(st.total_ns, 0.0);
}

TEST(ModelErrors, CrossEngineCycleIsADeadlock)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    append(p.get(), vector_add_instr(0, 64), {1});
    append(p.get(), matmul_instr(0, 64), {0});
    append(p.get(), dma_load_instr(0, 3, -1, 64, 0), {5}); /* a dependency that does not exist */
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_ERR_DEADLOCK);
    const std::string msg = err.message;
    EXPECT_NE(msg.find("#0 tensor_tensor"), std::string::npos) << msg;
    EXPECT_NE(msg.find("#1 matmul"), std::string::npos) << msg;
    EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
    EXPECT_EQ(st.instructions, 0u);
}

TEST(ModelErrors, SimulatedTimeLimit)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    for (int i = 0; i < 100; ++i)
        append(p.get(), vector_add_instr(0, 4096));
    gs_run_stats st;
    gs_error err;
    const std::string trace = tmp_path("timeout");
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err, trace.c_str(), 10000.0), GS_ERR_TIMEOUT);
    EXPECT_NE(std::string(err.message).find("simulated time limit"), std::string::npos)
        << err.message;
    EXPECT_GT(st.instructions, 0u);
    EXPECT_LT(st.instructions, 100u);
    EXPECT_LE(st.total_ns, 10000.0);
    /* The trace is still valid JSON. */
    cJSON *j = cJSON_Parse(read_file(trace).c_str());
    EXPECT_NE(j, nullptr);
    cJSON_Delete(j);
    remove(trace.c_str());
}

TEST(ModelErrors, InvalidPlacementIsReportedBeforeRunning)
{
    gs_config cfg;
    gs_test_config_gen1_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_instr_draft g = base_instr(GS_OP_MEMSET, GS_ENG_GPSIMD, 0, 77);
    g.n_out = 1;
    g.out[0] = sbuf_ap(GS_MEM_SBUF, GS_BF16, 128, 64);
    append(p.get(), g);
    gs_run_stats st;
    gs_error err;
    EXPECT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_ERR_UNSUPPORTED);
    EXPECT_EQ(err.line, 77);
    ProgramPtr q(gs_program_create(&cfg));
    append(q.get(), dma_load_instr(0, 99, -1, 64, 0));
    EXPECT_EQ(run_timing(&cfg, q.get(), &st, &err), GS_ERR_INVALID);
}

TEST(ModelErrors, SecondRunInOneProcessIsAUsageError)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    append(p.get(), vector_add_instr(0, 64));
    fflush(stdout);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        gs_error err;
        gs_run_stats st;
        gs_model *m = gs_model_create(&cfg, &err);
        int code = 0;
        if (!m || gs_model_run(m, p.get(), nullptr, nullptr, &st, &err) != GS_OK)
            code = 1;
        else if (gs_model_run(m, p.get(), nullptr, nullptr, &st, &err) != GS_ERR_USAGE)
            code = 2;
        else if (!strstr(err.message, "one model per process"))
            code = 3;
        _exit(code);
    }
    int ws = 0;
    ASSERT_EQ(waitpid(pid, &ws, 0), pid);
    ASSERT_TRUE(WIFEXITED(ws));
    EXPECT_EQ(WEXITSTATUS(ws), 0);
}

/* ---- determinism and traces ---- */

TEST(ModelTrace, TwoRunsGiveIdenticalStatsAndTraces)
{
    gs_config cfg;
    gs_test_config_gen3_like(&cfg);
    ProgramPtr p = random_program(&cfg, 7, 3);
    const std::string t1 = tmp_path("det1"), t2 = tmp_path("det2");
    gs_run_stats a, b;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &a, &err, t1.c_str()), GS_OK) << err.message;
    ASSERT_EQ(run_timing(&cfg, p.get(), &b, &err, t2.c_str()), GS_OK) << err.message;
    EXPECT_TRUE(same_stats(a, b));
    const std::string s1 = read_file(t1), s2 = read_file(t2);
    EXPECT_FALSE(s1.empty());
    EXPECT_EQ(s1, s2);
    remove(t1.c_str());
    remove(t2.c_str());
}

namespace
{
/* ps from a trace timestamp printed as microseconds with six decimals. */
int64_t us_to_ps(double us)
{
    return (int64_t)std::llround(us * 1e6);
}
} // namespace

TEST(ModelTrace, ValidJsonWithEventsAtTheModelsTimes)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p = random_program(&cfg, 11, 2);
    const std::string trace = tmp_path("trace");
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err, trace.c_str()), GS_OK) << err.message;

    cJSON *root = cJSON_Parse(read_file(trace).c_str());
    ASSERT_NE(root, nullptr) << "trace is not valid JSON";
    cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    ASSERT_TRUE(cJSON_IsArray(events));
    size_t slices = 0, counters = 0, thread_names = 0;
    int64_t last_end = 0;
    const int first_engine_tid = GS_ENG_DMA + (int)cfg.dma.queues.v;
    struct Share {
        int idx;
        int64_t start, end;
    };
    std::vector<Share> shares;
    std::map<int, int64_t> index_start, index_end;
    cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const char *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring;
        if (!strcmp(ph, "X") &&
            cJSON_GetObjectItemCaseSensitive(ev, "tid")->valueint >= first_engine_tid) {
            /* a DMA engine's share of a transfer: inside its instruction's span (checked below) */
            cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
            const int idx = cJSON_GetObjectItemCaseSensitive(args, "index")->valueint;
            const double ts = cJSON_GetObjectItemCaseSensitive(ev, "ts")->valuedouble;
            const double dur = cJSON_GetObjectItemCaseSensitive(ev, "dur")->valuedouble;
            shares.push_back({idx, us_to_ps(ts), us_to_ps(ts) + us_to_ps(dur)});
        } else if (!strcmp(ph, "X")) {
            ++slices;
            const double ts = cJSON_GetObjectItemCaseSensitive(ev, "ts")->valuedouble;
            const double dur = cJSON_GetObjectItemCaseSensitive(ev, "dur")->valuedouble;
            last_end = std::max(last_end, us_to_ps(ts) + us_to_ps(dur));
            cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
            ASSERT_TRUE(cJSON_IsObject(args));
            const int idx = cJSON_GetObjectItemCaseSensitive(args, "index")->valueint;
            const gs_instr *in = gs_program_instr(p.get(), (size_t)idx);
            EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring,
                         gs_opcode_name(in->op));
            /* the trace names sources relative to the repository root */
            std::string file(in->file);
            const std::string src_root = std::string(GS_SOURCE_DIR) + "/";
            if (!file.compare(0, src_root.size(), src_root)) file = file.substr(src_root.size());
            const std::string src = file + ":" + std::to_string(in->line);
            EXPECT_EQ(src, cJSON_GetObjectItemCaseSensitive(args, "src")->valuestring);
            EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(args, "deps")),
                      (int)in->n_deps);
            EXPECT_TRUE(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(args, "operands")));
            EXPECT_EQ(cJSON_GetObjectItemCaseSensitive(ev, "pid")->valueint, (int)in->core);
            index_start[idx] = us_to_ps(ts);
            index_end[idx] = us_to_ps(ts) + us_to_ps(dur);
        } else if (!strcmp(ph, "C")) {
            ++counters;
        } else if (!strcmp(ph, "M") &&
                   !strcmp(cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring,
                           "thread_name")) {
            ++thread_names;
        }
    }
    EXPECT_EQ(slices, gs_program_count(p.get()));
    EXPECT_EQ(index_start.size(), slices);
    EXPECT_GT(counters, 0u);
    EXPECT_EQ(thread_names, 2 * (4 + (size_t)cfg.dma.queues.v + (size_t)cfg.dma.engines.v));
    size_t expect_shares = 0;
    for (size_t i = 0; i < gs_program_count(p.get()); ++i) {
        const gs_instr *in = gs_program_instr(p.get(), i);
        if (in->engine != GS_ENG_DMA) continue;
        gs_dma_plan plan;
        gs_cost_dma_plan(&cfg, in, &plan);
        expect_shares += plan.engines_used;
    }
    EXPECT_GT(expect_shares, 0u);
    EXPECT_EQ(shares.size(), expect_shares);
    for (const Share &sh : shares) {
        EXPECT_GE(sh.start, index_start[sh.idx]) << sh.idx;
        EXPECT_LE(sh.end, index_end[sh.idx]) << sh.idx;
    }
    EXPECT_EQ(last_end, std::llround(st.total_ns * 1000.0));
    /* Every slice starts no earlier than its dependencies end. */
    for (const auto &kv : index_start) {
        const gs_instr *in = gs_program_instr(p.get(), (size_t)kv.first);
        for (uint32_t k = 0; k < in->n_deps; ++k)
            EXPECT_GE(kv.second, index_end[(int)in->deps[k]]);
    }
    cJSON_Delete(root);
    remove(trace.c_str());
}

TEST(ModelTrace, DependentPairTimestampsAreExact)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_instr_draft mm = matmul_instr(0, 512), va = vector_add_instr(0, 1000);
    append(p.get(), mm);
    append(p.get(), va, {0});
    const std::string trace = tmp_path("pair");
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err, trace.c_str()), GS_OK) << err.message;
    cJSON *root = cJSON_Parse(read_file(trace).c_str());
    ASSERT_NE(root, nullptr);
    const int64_t a = std::llround(compute_ns(&cfg, mm) * 1000.0);
    const int64_t b = std::llround(compute_ns(&cfg, va) * 1000.0);
    const int64_t sem = std::llround(cfg.sem_latency.v * 1000.0);
    std::map<int, std::pair<int64_t, int64_t>> t;
    cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring, "X")) continue;
        const int idx =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), "index")
                ->valueint;
        t[idx] = {us_to_ps(cJSON_GetObjectItemCaseSensitive(ev, "ts")->valuedouble),
                  us_to_ps(cJSON_GetObjectItemCaseSensitive(ev, "dur")->valuedouble)};
    }
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].first, 0);
    EXPECT_EQ(t[0].second, a);
    EXPECT_EQ(t[1].first, a + sem);
    EXPECT_EQ(t[1].second, b);
    EXPECT_EQ(std::llround(st.total_ns * 1000.0), a + sem + b);
    cJSON_Delete(root);
    remove(trace.c_str());
}

TEST(ModelRoofline, MatmulStreamsAreCloseToButNeverBelowTheComputeBound)
{
    for (const ConfigCase &cc : kConfigs) {
        SCOPED_TRACE(cc.name);
        gs_config cfg;
        cc.build(&cfg);
        for (gs_dtype t : {GS_BF16, GS_FP32, GS_FP8_E4M3}) {
            if (!(gs_config_peak_flops(&cfg, t) > 0)) continue;
            SCOPED_TRACE(gs_dtype_name(t));
            ProgramPtr p(gs_program_create(&cfg));
            for (int i = 0; i < 200; ++i) {
                gs_instr_draft mm = matmul_instr((unsigned)(i % 2), 512);
                mm.in[0].dtype = mm.in[1].dtype = t;
                append(p.get(), mm);
            }
            gs_run_stats st;
            gs_error err;
            ASSERT_EQ(run_timing(&cfg, p.get(), &st, &err), GS_OK) << err.message;
            EXPECT_GT(st.compute_bound_ns, 0.0);
            EXPECT_GE(st.total_ns, st.compute_bound_ns);
            EXPECT_LT(st.roofline_ratio, 1.25);
            EXPECT_DOUBLE_EQ(st.peak_flops, 2 * gs_config_peak_flops(&cfg, t));
            EXPECT_STREQ(st.bottleneck_name, "tensor");
            /* the per-engine bound: the tensor engine's, which sets it */
            EXPECT_STREQ(st.bound_engine, "tensor");
            EXPECT_DOUBLE_EQ(st.bound_ns, st.engine_bound_ns[GS_ENG_TENSOR]);
            EXPECT_DOUBLE_EQ(st.bound_ns, st.compute_bound_ns);
            EXPECT_EQ(st.engine_bound_ns[GS_ENG_VECTOR], 0.0);
            EXPECT_GE(st.bound_ratio, 1.0);
        }
    }
}

TEST(ModelFunctional, GatherGoesThroughHbmAndMatchesTheExecutor)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    gs_tensor table = make_tensor(p.get(), "table", GS_BF16, GS_TENSOR_INPUT, 256, 64);
    gs_tensor out = make_tensor(p.get(), "out", GS_BF16, GS_TENSOR_OUTPUT, 128, 64);
    gs_kb *kb = gs_kb_create(p.get(), 0);
    gs_pool *ip = gs_pool_create(kb, GS_MEM_SBUF, "idx", 1, 4);
    gs_pool *rp = gs_pool_create(kb, GS_MEM_SBUF, "rows", 1, 64 * 2);
    gs_tile idx = gs_tile_alloc(ip, GS_INT32, 128, 1);
    gs_tile rows = gs_tile_alloc(rp, GS_BF16, 128, 64);
    gs_iota(kb, idx.ap, 1, 2, 0); /* row 1 + 2p */
    gs_gather(kb, rows.ap, gs_hbm_rows(&table, 0, 256, 0, 64), idx.ap);
    gs_dma_copy(kb, gs_hbm_rows(&out, 0, 128, 0, 64), rows.ap, -1);
    ASSERT_EQ(gs_kb_status(kb), GS_OK) << gs_kb_error(kb)->message;
    gs_kb_free(kb);

    gs_error err;
    MemPtr ref(gs_mem_create(p.get(), &err)), got(gs_mem_create(p.get(), &err));
    fill_inputs(p.get(), ref.get(), 5);
    fill_inputs(p.get(), got.get(), 5);
    ASSERT_EQ(gs_exec_program(ref.get(), p.get(), &err), GS_OK) << err.message;
    gs_run_opts o;
    memset(&o, 0, sizeof o);
    o.functional = 1;
    gs_run_stats st;
    ASSERT_EQ(gs_test_run_isolated(&cfg, p.get(), got.get(), &o, &st, &err), GS_OK) << err.message;
    EXPECT_EQ(
        memcmp(gs_mem_tensor(ref.get(), out.id), gs_mem_tensor(got.get(), out.id), 128 * 64 * 2),
        0);
    EXPECT_EQ(st.engine[0][GS_ENG_GPSIMD].instructions, 2u);
    const gs_instr *g = gs_program_instr(p.get(), 1);
    ASSERT_EQ(g->op, GS_OP_GATHER);
    gs_cost_state cs;
    gs_cost_state_init(&cs);
    const double gather_ns = gs_cost_compute_ns(&cfg, g, &cs) + one_transfer_ns(cfg, g);
    EXPECT_GE(st.engine[0][GS_ENG_GPSIMD].busy_ns, gather_ns * 0.99);
    EXPECT_DOUBLE_EQ(st.hbm_bytes,
                     gs_cost_hbm_bytes(g) + gs_cost_hbm_bytes(gs_program_instr(p.get(), 2)));
}

TEST(ModelErrors, WallClockLimit)
{
    gs_config cfg;
    gs_test_config_gen2_like(&cfg);
    ProgramPtr p(gs_program_create(&cfg));
    for (int i = 0; i < 200000; ++i)
        append(p.get(), vector_add_instr((unsigned)(i % 2), 64));
    gs_run_opts o;
    memset(&o, 0, sizeof o);
    o.wall_limit_s = 1e-4;
    gs_run_stats st;
    gs_error err;
    ASSERT_EQ(gs_test_run_isolated(&cfg, p.get(), nullptr, &o, &st, &err), GS_ERR_TIMEOUT);
    EXPECT_NE(std::string(err.message).find("wall-clock limit"), std::string::npos) << err.message;
    EXPECT_LT(st.instructions, 200000u);
}
