// The topk kernel's lessons (kernels/README.md, "What top-k teaches") as checks of the model:
// two_stage spreads few long rows over the idle lanes and beats rounds; several rows per
// partition lengthen the DMA rows of MoE routing; rounds refuses a row past one max8; no run
// beats its bound.
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

enum { P_BUFS, P_CHUNKS, P_ROWS };

gs_job_spec spec_of(const gs_config *cfg, const char *variant, int64_t R, int64_t C, int64_t K,
                    int param = -1, int64_t value = 0)
{
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = gs_suite_find("topk");
    EXPECT_NE(spec.kernel, nullptr);
    if (!spec.kernel) return spec;
    spec.variant = gs_suite_variant(spec.kernel, variant);
    spec.dtype = GS_BF16;
    spec.dims[spec.n_dims++] = R;
    spec.dims[spec.n_dims++] = C;
    spec.dims[spec.n_dims++] = K;
    if (param >= 0) spec.params[param] = value;
    spec.seed = 11;
    return spec;
}

// Simulated time (timing only); the build's status in *st.
gs_run_stats timed(const gs_job_spec &spec, gs_status *st, std::string *msg = nullptr)
{
    gs_run_stats stats;
    std::memset(&stats, 0, sizeof stats);
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    *st = gs_job_build(&spec, &job, &err);
    if (msg) *msg = err.message;
    if (*st == GS_OK) {
        gs_run_opts ro{};
        ro.functional = 0;
        ro.wall_limit_s = 60;
        *st = gs_test_run_isolated(spec.cfg, gs_job_program(job), nullptr, &ro, &stats, &err);
    }
    gs_job_free(job);
    return stats;
}

double ns(const gs_job_spec &spec)
{
    gs_status st;
    gs_run_stats s = timed(spec, &st);
    EXPECT_EQ(st, GS_OK);
    EXPECT_GE(s.total_ns, s.roofline_ns) << "beats its roofline";
    return s.total_ns;
}

TEST(TopkKernel, TwoStageUsesTheIdleLanesOfFewLongRows)
{
    for (const char *gen : {"gen2", "gen3", "gen4"}) {
        Config c(gen);
        ASSERT_NE(c.cfg, nullptr);
        const double r1 = ns(spec_of(c.cfg, "rounds", 1, 8192, 64));
        const double t1 = ns(spec_of(c.cfg, "two_stage", 1, 8192, 64));
        const double r8 = ns(spec_of(c.cfg, "rounds", 8, 8192, 8));
        const double t8 = ns(spec_of(c.cfg, "two_stage", 8, 8192, 8));
        std::printf("%s topk 1x8192x64: rounds %.1f us, two_stage %.1f us; 8x8192x8: %.1f, %.1f\n",
                    gen, r1 / 1e3, t1 / 1e3, r8 / 1e3, t8 / 1e3);
        EXPECT_LT(1.3 * t1, r1) << gen;
        EXPECT_LT(1.1 * t8, r8) << gen;
        // one chunk is rounds exactly
        EXPECT_DOUBLE_EQ(ns(spec_of(c.cfg, "two_stage", 8, 8192, 8, P_CHUNKS, 1)), r8) << gen;
    }
}

TEST(TopkKernel, RowsPerPartitionLengthenTheDmaRowsOfMoeRouting)
{
    for (const char *gen : {"gen2", "gen3", "gen4"}) {
        Config c(gen);
        ASSERT_NE(c.cfg, nullptr);
        const double one = ns(spec_of(c.cfg, "rounds", 4096, 64, 8, P_ROWS, 1));
        const double dflt = ns(spec_of(c.cfg, "rounds", 4096, 64, 8));
        std::printf("%s topk 4096x64x8: rows=1 %.1f us, default %.1f us\n", gen, one / 1e3,
                    dflt / 1e3);
        EXPECT_LT(3.0 * dflt, one) << gen;
    }
}

TEST(TopkKernel, RoundsRefusesARowPastOneMax8AndGen1HasNoTopk)
{
    Config g3("gen3"), g1("gen1");
    ASSERT_NE(g3.cfg, nullptr);
    ASSERT_NE(g1.cfg, nullptr);
    gs_status st;
    std::string msg;
    timed(spec_of(g3.cfg, "rounds", 8, 32000, 8), &st, &msg);
    EXPECT_EQ(st, GS_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("reads at most 16384 elements (C = 32000)"), std::string::npos) << msg;
    timed(spec_of(g3.cfg, "two_stage", 8, 32000, 8), &st, &msg);
    EXPECT_EQ(st, GS_OK) << msg;
    timed(spec_of(g1.cfg, "two_stage", 8, 1000, 8), &st, &msg);
    EXPECT_EQ(st, GS_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("unsupported: top-k needs"), std::string::npos) << msg;
}

} // namespace
