// The matmul family through the SystemC model and the executor:
//  - the optimisation ladder: on gen2 at a large shape (timing-only), every rung is faster than
//    the one before it and none beats its roofline; the times are printed;
//  - capability gating: fp8 matmul unsupported on gen1 and correct on gen3; the DMA transpose
//    unsupported on gen1/gen2 and correct on gen3.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "gs/config.h"
#include "gs/model.h"
#include "isolated_run.h"
#include "job.h"

namespace
{

struct Config {
    gs_config *cfg = nullptr;
    explicit Config(const char *gen)
    {
        std::string path = std::string(GS_SOURCE_DIR) + "/configs/" + gen + ".yaml";
        gs_diags d;
        gs_diags_init(&d);
        cfg = gs_config_load(path.c_str(), &d);
        EXPECT_NE(cfg, nullptr) << path;
        gs_diags_free(&d);
    }
    ~Config() { gs_config_free(cfg); }
    Config(const Config &) = delete;
    Config &operator=(const Config &) = delete;
};

gs_job_spec make_spec(const gs_config *cfg, const char *kernel, const char *variant,
                      std::initializer_list<int64_t> dims, gs_dtype dt = GS_BF16)
{
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = gs_suite_find(kernel);
    EXPECT_NE(spec.kernel, nullptr) << kernel;
    if (!spec.kernel) return spec;
    spec.variant = gs_suite_variant(spec.kernel, variant);
    EXPECT_GE(spec.variant, 0) << kernel << "/" << variant;
    spec.dtype = dt;
    for (int64_t v : dims)
        spec.dims[spec.n_dims++] = v;
    spec.seed = 11;
    return spec;
}

// Build and run timing-only on the model; returns the stats.
gs_run_stats time_variant(const gs_config *cfg, const char *kernel, const char *variant,
                          std::initializer_list<int64_t> dims, gs_dtype dt = GS_BF16)
{
    gs_run_stats stats;
    std::memset(&stats, 0, sizeof stats);
    gs_job_spec spec = make_spec(cfg, kernel, variant, dims, dt);
    if (!spec.kernel || spec.variant < 0) return stats;
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_job_build(&spec, &job, &err);
    EXPECT_EQ(st, GS_OK) << variant << ": " << err.message;
    if (st == GS_OK) {
        gs_run_opts ro{};
        ro.functional = 0;
        ro.wall_limit_s = 60;
        st = gs_test_run_isolated(cfg, gs_job_program(job), nullptr, &ro, &stats, &err);
        EXPECT_EQ(st, GS_OK) << variant << ": " << err.message;
    }
    gs_job_free(job);
    return stats;
}

TEST(MatmulLadder, EachRungFasterOnGen2AndNoneBeatsRoofline)
{
    Config c("gen2");
    ASSERT_NE(c.cfg, nullptr);
    const char *rungs[] = {"naive", "hoisted", "blocked", "pipelined"};
    double prev = 0.0;
    for (const char *v : rungs) {
        gs_run_stats s = time_variant(c.cfg, "matmul", v, {4096, 4096, 4096});
        std::printf("gen2 matmul/%-9s 4096x4096x4096 bf16: %10.1f us, roofline %8.1f us, "
                    "ratio %5.2f, bottleneck %s\n",
                    v, s.total_ns / 1e3, s.roofline_ns / 1e3, s.roofline_ratio, s.bottleneck_name);
        EXPECT_GT(s.total_ns, 0.0) << v;
        EXPECT_GE(s.total_ns, s.roofline_ns) << v << " beats its roofline";
        if (prev > 0.0) {
            EXPECT_LT(s.total_ns, prev) << v << " is not faster than the rung before";
        }
        prev = s.total_ns;
    }
}

TEST(MatmulSpmd, ShardsAcrossCoresAndBeatsOneCore)
{
    Config c("gen2");
    ASSERT_NE(c.cfg, nullptr);
    gs_run_stats one = time_variant(c.cfg, "matmul", "pipelined", {2048, 2048, 2048});
    gs_run_stats all = time_variant(c.cfg, "matmul", "spmd", {2048, 2048, 2048});
    std::printf("gen2 matmul 2048^3: pipelined %.1f us on 1 core, spmd %.1f us on %u cores\n",
                one.total_ns / 1e3, all.total_ns / 1e3, all.cores_used);
    EXPECT_EQ(all.cores_used, (unsigned)c.cfg->cores.v);
    EXPECT_LT(all.total_ns, one.total_ns);
    EXPECT_GE(all.total_ns, all.roofline_ns);
}

// Build + run through the C executor + check; returns the build status.
gs_status run_checked(const gs_config *cfg, const char *kernel, const char *variant,
                      std::initializer_list<int64_t> dims, gs_error *err, gs_dtype dt = GS_BF16)
{
    gs_job_spec spec = make_spec(cfg, kernel, variant, dims, dt);
    if (!spec.kernel || spec.variant < 0) return GS_ERR_USAGE;
    gs_job *job = nullptr;
    gs_error_clear(err);
    gs_status st = gs_job_build(&spec, &job, err);
    if (st == GS_OK) {
        st = gs_job_init_memory(job, err);
        if (st == GS_OK) st = gs_exec_program(gs_job_memory(job), gs_job_program(job), err);
        gs_job_check chk;
        if (st == GS_OK) st = gs_job_check_outputs(job, &chk, err);
    }
    gs_job_free(job);
    return st;
}

TEST(MatmulFp8, UnsupportedOnGen1PassesOnGen3)
{
    Config g1("gen1"), g3("gen3");
    ASSERT_NE(g1.cfg, nullptr);
    ASSERT_NE(g3.cfg, nullptr);
    gs_error err;
    EXPECT_EQ(run_checked(g1.cfg, "matmul_fp8", "default", {200, 300, 700}, &err),
              GS_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(err.message, "unsupported: fp8 matmul"), nullptr) << err.message;
    EXPECT_EQ(run_checked(g3.cfg, "matmul_fp8", "default", {200, 300, 700}, &err), GS_OK)
        << err.message;
    EXPECT_EQ(run_checked(g3.cfg, "matmul_fp8", "default", {130, 257, 520}, &err, GS_FP32), GS_OK)
        << err.message;
}

TEST(TransposeDma, UnsupportedOnGen1AndGen2PassesOnGen3)
{
    gs_error err;
    for (const char *gen : {"gen1", "gen2"}) {
        Config c(gen);
        ASSERT_NE(c.cfg, nullptr);
        EXPECT_EQ(run_checked(c.cfg, "transpose", "dma", {200, 300}, &err), GS_ERR_UNSUPPORTED)
            << gen;
        EXPECT_NE(std::strstr(err.message, "unsupported"), nullptr) << err.message;
        EXPECT_EQ(run_checked(c.cfg, "transpose", "tensor_engine", {200, 300}, &err), GS_OK)
            << gen << ": " << err.message;
    }
    Config g3("gen3");
    ASSERT_NE(g3.cfg, nullptr);
    EXPECT_EQ(run_checked(g3.cfg, "transpose", "dma", {200, 300}, &err), GS_OK) << err.message;
}

} // namespace

// Double row on gen3: the fp8 matmuls take half the tensor time of the same kernel without it
// (and of bf16), and the kernel is faster end to end on a tensor-bound shape.
TEST(MatmulFp8, DoubleRowHalvesTheTensorTimeOnGen3)
{
    Config g3("gen3");
    ASSERT_NE(g3.cfg, nullptr);
    gs_run_stats dr = time_variant(g3.cfg, "matmul_fp8", "default", {1024, 4096, 2048});
    gs_run_stats bf = time_variant(g3.cfg, "matmul", "pipelined", {1024, 4096, 2048});
    gs_diags d;
    gs_diags_init(&d);
    ASSERT_EQ(gs_config_set(g3.cfg, "engines.tensor.double_row=false", &d), GS_OK);
    gs_diags_free(&d);
    gs_run_stats sr = time_variant(g3.cfg, "matmul_fp8", "default", {1024, 4096, 2048});
    double t_dr = dr.engine[0][GS_ENG_TENSOR].busy_ns, t_sr = sr.engine[0][GS_ENG_TENSOR].busy_ns;
    double t_bf = bf.engine[0][GS_ENG_TENSOR].busy_ns;
    std::printf("gen3 1024x4096x2048: bf16 %.1f us (tensor %.1f), fp8 double row %.1f us (tensor "
                "%.1f), fp8 single row %.1f us (tensor %.1f)\n",
                bf.total_ns / 1e3, t_bf / 1e3, dr.total_ns / 1e3, t_dr / 1e3, sr.total_ns / 1e3,
                t_sr / 1e3);
    EXPECT_NEAR(t_sr / t_dr, 2.0, 0.01);
    EXPECT_NEAR(t_bf / t_dr, 2.0, 0.01);
    EXPECT_LT(dr.total_ns, sr.total_ns);
    EXPECT_LT(dr.total_ns * 1.5, bf.total_ns);
    EXPECT_GE(dr.total_ns, dr.roofline_ns);
}

TEST(MatmulMx, PassesOnGen4UnsupportedElsewhere)
{
    Config g4("gen4");
    ASSERT_NE(g4.cfg, nullptr);
    gs_error err;
    for (const char *v : {"mxfp8", "mxfp4"})
        for (gs_dtype dt : {GS_BF16, GS_FP32}) {
            EXPECT_EQ(run_checked(g4.cfg, "matmul_mx", v, {200, 320, 700}, &err, dt), GS_OK)
                << v << " " << err.message;
            EXPECT_EQ(run_checked(g4.cfg, "matmul_mx", v, {64, 1056, 96}, &err, dt), GS_OK)
                << v << " " << err.message;
        }
    for (const char *gen : {"gen1", "gen2", "gen3"}) {
        Config c(gen);
        ASSERT_NE(c.cfg, nullptr);
        EXPECT_EQ(run_checked(c.cfg, "matmul_mx", "mxfp8", {128, 512, 512}, &err),
                  GS_ERR_UNSUPPORTED)
            << gen;
        EXPECT_NE(std::strstr(err.message, "unsupported: MX matmul"), nullptr) << err.message;
    }
}

// MX matmul does 4x the bf16 work per tensor-engine cycle: the tensor time of the MX kernel is a
// quarter of the bf16 matmul's on the same shape.
TEST(MatmulMx, QuarterOfTheBf16TensorTimeOnGen4)
{
    Config g4("gen4");
    ASSERT_NE(g4.cfg, nullptr);
    gs_run_stats bf = time_variant(g4.cfg, "matmul", "pipelined", {1024, 2048, 2048});
    gs_run_stats mx = time_variant(g4.cfg, "matmul_mx", "mxfp8", {1024, 2048, 2048});
    double t_bf = bf.engine[0][GS_ENG_TENSOR].busy_ns, t_mx = mx.engine[0][GS_ENG_TENSOR].busy_ns;
    std::printf("gen4 1024x2048x2048: bf16 %.1f us (tensor %.1f), mxfp8 %.1f us (tensor %.1f, "
                "bottleneck %s)\n",
                bf.total_ns / 1e3, t_bf / 1e3, mx.total_ns / 1e3, t_mx / 1e3, mx.bottleneck_name);
    EXPECT_NEAR(t_bf / t_mx, 4.0, 0.01);
    EXPECT_GE(mx.total_ns, mx.roofline_ns);
}

// The v4 vector exponential in softmax: passes on gen4, moves the exps off the scalar engine,
// unsupported where the family lacks it.
TEST(SoftmaxVexp, RunsOnGen4OffTheScalarEngine)
{
    Config g3("gen3"), g4("gen4");
    ASSERT_NE(g3.cfg, nullptr);
    ASSERT_NE(g4.cfg, nullptr);
    gs_error err;
    EXPECT_EQ(run_checked(g4.cfg, "softmax", "fused_vexp", {200, 3000}, &err), GS_OK)
        << err.message;
    EXPECT_EQ(run_checked(g4.cfg, "softmax", "fused_vexp", {130, 700}, &err, GS_FP32), GS_OK)
        << err.message;
    EXPECT_EQ(run_checked(g3.cfg, "softmax", "fused_vexp", {200, 3000}, &err), GS_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(err.message, "unsupported: vector exponential"), nullptr) << err.message;
    gs_run_stats sc = time_variant(g4.cfg, "softmax", "fused", {1024, 4096});
    gs_run_stats ve = time_variant(g4.cfg, "softmax", "fused_vexp", {1024, 4096});
    std::printf("gen4 softmax 1024x4096: fused %.1f us (scalar %.1f), fused_vexp %.1f us (scalar "
                "%.1f, vector %.1f)\n",
                sc.total_ns / 1e3, sc.engine[0][GS_ENG_SCALAR].busy_ns / 1e3, ve.total_ns / 1e3,
                ve.engine[0][GS_ENG_SCALAR].busy_ns / 1e3,
                ve.engine[0][GS_ENG_VECTOR].busy_ns / 1e3);
    EXPECT_LT(ve.engine[0][GS_ENG_SCALAR].busy_ns * 4, sc.engine[0][GS_ENG_SCALAR].busy_ns);
    EXPECT_LE(ve.total_ns, sc.total_ns);
}
