// The non-matmul kernels (fused_elementwise, softmax, layernorm, rmsnorm, attention, reduce,
// embedding): which generations must run them and which must report "unsupported" (decided by
// capabilities, checked against every config in configs/), other dtypes and engine choices,
// bad parameters, a missing causal mask being caught, and the model's timing: fused variants
// beat their unfused counterparts and nothing beats the roofline.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gs/config.h"
#include "gs/model.h"
#include "isolated_run.h"
#include "job.h"
#include "shipped_configs.h"

namespace
{

std::vector<std::string> config_files()
{
    return gs_test_shipped_configs();
}

struct Cfg {
    gs_config *cfg = nullptr;
    explicit Cfg(const std::string &path)
    {
        gs_diags d;
        gs_diags_init(&d);
        cfg = gs_config_load(path.c_str(), &d);
        gs_diags_free(&d);
    }
    ~Cfg() { gs_config_free(cfg); }
};

std::string gen(const char *name)
{
    return std::string(GS_SOURCE_DIR) + "/configs/" + name + ".yaml";
}

struct Outcome {
    gs_status build = GS_OK, run = GS_OK, check = GS_OK;
    std::string msg;
    gs_job_check chk{};
};

// Build, run through the functional executor and check one job.
Outcome run_job(const gs_config *cfg, const char *kernel, const char *variant,
                std::vector<int64_t> dims, gs_dtype dt = GS_BF16,
                std::vector<std::pair<int, int64_t>> params = {})
{
    Outcome o;
    const gs_kernel_def *k = gs_suite_find(kernel);
    EXPECT_NE(k, nullptr) << kernel;
    if (!k) return o;
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = k;
    spec.variant = gs_suite_variant(k, variant);
    EXPECT_GE(spec.variant, 0) << variant;
    spec.dtype = dt;
    spec.n_dims = (int)dims.size();
    for (size_t i = 0; i < dims.size(); i++)
        spec.dims[i] = dims[i];
    for (auto &p : params)
        spec.params[p.first] = p.second;
    spec.seed = 11;
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    o.build = gs_job_build(&spec, &job, &err);
    o.msg = err.message;
    if (o.build == GS_OK) {
        EXPECT_EQ(gs_job_init_memory(job, &err), GS_OK);
        o.run = gs_exec_program(gs_job_memory(job), gs_job_program(job), &err);
        if (o.run == GS_OK) o.check = gs_job_check_outputs(job, &o.chk, &err);
        o.msg = err.message;
    }
    gs_job_free(job);
    return o;
}

const char *const kMine[] = {"fused_elementwise", "softmax", "layernorm", "rmsnorm",
                             "attention",         "reduce",  "embedding"};

// Every variant of every kernel runs on every config, except the gpsimd-only paths, which
// must say "unsupported" exactly where the config has no gpsimd engine, and softmax/fused_vexp,
// exactly where the config has no vector exponential.
TEST(NonMatmulKernels, RunWhereCapableUnsupportedElsewhere)
{
    auto files = config_files();
    ASSERT_GE(files.size(), 3u);
    for (const auto &f : files) {
        Cfg h(f);
        ASSERT_NE(h.cfg, nullptr) << f;
        bool gpsimd = gs_config_has_engine(h.cfg, GS_ENG_GPSIMD);
        for (const char *name : kMine) {
            const gs_kernel_def *k = gs_suite_find(name);
            ASSERT_NE(k, nullptr) << name << " is not registered";
            for (int v = 0; v < k->n_variants; v++) {
                bool needs_gpsimd =
                    !strcmp(name, "embedding") ||
                    (!strcmp(name, "attention") && !strcmp(k->variants[v], "causal"));
                const gs_shape &s = k->check_shapes[1];
                Outcome o =
                    run_job(h.cfg, name, k->variants[v], std::vector<int64_t>(s.d, s.d + s.n));
                SCOPED_TRACE(f + " " + name + "/" + k->variants[v]);
                // the vector exponential is a family feature (gen4): op exponential
                bool needs_vexp = !strcmp(k->variants[v], "fused_vexp");
                bool vexp = (h.cfg->ops & (1ull << GS_OP_EXPONENTIAL)) != 0;
                if (needs_gpsimd && !gpsimd) {
                    EXPECT_EQ(o.build, GS_ERR_UNSUPPORTED) << o.msg;
                    EXPECT_NE(o.msg.find("unsupported"), std::string::npos) << o.msg;
                    EXPECT_NE(o.msg.find("gpsimd"), std::string::npos) << o.msg;
                } else if (needs_vexp && !vexp) {
                    EXPECT_EQ(o.build, GS_ERR_UNSUPPORTED) << o.msg;
                    EXPECT_NE(o.msg.find("unsupported: vector exponential"), std::string::npos)
                        << o.msg;
                } else {
                    EXPECT_EQ(o.build, GS_OK) << o.msg;
                    EXPECT_EQ(o.run, GS_OK) << o.msg;
                    EXPECT_EQ(o.check, GS_OK) << o.msg;
                }
            }
        }
    }
}

TEST(NonMatmulKernels, Fp32AndFp16)
{
    Cfg h(gen("gen2"));
    ASSERT_NE(h.cfg, nullptr);
    struct C {
        const char *k, *v;
        std::vector<int64_t> d;
    } cases[] = {{"fused_elementwise", "fused", {130, 77}},
                 {"fused_elementwise", "unfused", {130, 77}},
                 {"softmax", "three_pass", {130, 300}},
                 {"softmax", "fused", {130, 300}},
                 {"layernorm", "bn_stats", {130, 300}},
                 {"layernorm", "naive", {130, 300}},
                 {"rmsnorm", "default", {130, 300}},
                 {"reduce", "sum", {130, 300}},
                 {"reduce", "max", {130, 300}},
                 {"embedding", "default", {130, 40, 33}}};
    for (auto &c : cases)
        for (gs_dtype dt : {GS_FP32, GS_FP16}) {
            SCOPED_TRACE(std::string(c.k) + "/" + c.v + " " + gs_dtype_name(dt));
            Outcome o = run_job(h.cfg, c.k, c.v, c.d, dt);
            EXPECT_EQ(o.build, GS_OK) << o.msg;
            EXPECT_EQ(o.check, GS_OK) << o.msg;
        }
    Outcome o = run_job(h.cfg, "attention", "causal", {300, 64}, GS_FP16);
    EXPECT_EQ(o.check, GS_OK) << o.msg;
}

// Engine choices and tile-size params give the same results; gpsimd where there is none and
// nonsense values are clean errors.
TEST(NonMatmulKernels, EngineAndTileParams)
{
    Cfg g2(gen("gen2")), g1(gen("gen1"));
    ASSERT_NE(g2.cfg, nullptr);
    ASSERT_NE(g1.cfg, nullptr);
    for (int64_t e : {1, 2, 3}) {
        SCOPED_TRACE("engine " + std::to_string(e));
        EXPECT_EQ(run_job(g2.cfg, "layernorm", "bn_stats", {200, 300}, GS_BF16, {{2, e}}).check,
                  GS_OK);
        EXPECT_EQ(run_job(g2.cfg, "rmsnorm", "default", {200, 300}, GS_BF16, {{2, e}}).check,
                  GS_OK);
        EXPECT_EQ(
            run_job(g2.cfg, "fused_elementwise", "unfused", {200, 300}, GS_BF16, {{2, e}}).check,
            GS_OK);
    }
    // small chunks: many chunks per row, ragged last chunk, single buffers
    EXPECT_EQ(run_job(g2.cfg, "softmax", "fused", {130, 1000}, GS_BF16, {{0, 96}, {1, 1}}).check,
              GS_OK);
    EXPECT_EQ(run_job(g2.cfg, "softmax", "three_pass", {130, 1000}, GS_BF16, {{0, 96}}).check,
              GS_OK);
    EXPECT_EQ(run_job(g2.cfg, "layernorm", "naive", {130, 1000}, GS_BF16, {{0, 100}}).check, GS_OK);
    EXPECT_EQ(run_job(g2.cfg, "reduce", "sum", {130, 1000}, GS_BF16, {{0, 33}, {1, 3}}).check,
              GS_OK);
    EXPECT_EQ(run_job(g2.cfg, "embedding", "default", {130, 50, 300}, GS_BF16, {{0, 64}}).check,
              GS_OK);
    EXPECT_EQ(run_job(g2.cfg, "attention", "noncausal", {300, 128}, GS_BF16, {{0, 128}}).check,
              GS_OK);
    EXPECT_EQ(run_job(g2.cfg, "attention", "causal", {300, 128}, GS_BF16, {{0, 256}}).check, GS_OK);

    Outcome o = run_job(g1.cfg, "layernorm", "bn_stats", {64, 64}, GS_BF16, {{2, 3}});
    EXPECT_EQ(o.build, GS_ERR_UNSUPPORTED);
    EXPECT_NE(o.msg.find("gpsimd"), std::string::npos) << o.msg;
    o = run_job(g2.cfg, "rmsnorm", "default", {64, 64}, GS_BF16, {{2, 9}});
    EXPECT_EQ(o.build, GS_ERR_INVALID);
    EXPECT_NE(o.msg.find("engine=9"), std::string::npos) << o.msg;
    o = run_job(g2.cfg, "attention", "noncausal", {256, 64}, GS_BF16, {{0, 5}});
    EXPECT_EQ(o.build, GS_ERR_INVALID);
    EXPECT_NE(o.msg.find("tk"), std::string::npos) << o.msg;
    o = run_job(g2.cfg, "reduce", "sum", {4, 100000}, GS_BF16, {{0, 1}});
    EXPECT_EQ(o.build, GS_ERR_INVALID) << o.msg;
}

// Attention without its mask must fail the causal reference: the check sees the mask.
gs_status attention_without_mask(gs_kb *kb, const gs_kernel_args *a)
{
    gs_kernel_args b = *a;
    b.variant = gs_suite_variant(&gs_kernel_attention, "noncausal");
    return gs_kernel_attention.build(kb, &b);
}

TEST(NonMatmulKernels, MissingCausalMaskIsCaught)
{
    Cfg h(gen("gen2"));
    ASSERT_NE(h.cfg, nullptr);
    gs_kernel_def def = gs_kernel_attention;
    def.build = attention_without_mask;
    gs_job_spec spec{};
    spec.cfg = h.cfg;
    spec.kernel = &def;
    spec.variant = gs_suite_variant(&def, "causal");
    spec.dtype = GS_BF16;
    spec.n_dims = 2;
    spec.dims[0] = 200;
    spec.dims[1] = 64;
    spec.seed = 5;
    gs_job *job = nullptr;
    gs_error err;
    ASSERT_EQ(gs_job_build(&spec, &job, &err), GS_OK) << err.message;
    ASSERT_EQ(gs_job_init_memory(job, &err), GS_OK);
    ASSERT_EQ(gs_exec_program(gs_job_memory(job), gs_job_program(job), &err), GS_OK);
    gs_job_check chk;
    EXPECT_EQ(gs_job_check_outputs(job, &chk, &err), GS_ERR_MISMATCH);
    EXPECT_GT(chk.mismatches, 200u * 64u / 2);
    gs_job_free(job);
}

// ---- timing through the SystemC model (timing-only, one forked run each) ----

double timed(const gs_config *cfg, const char *kernel, const char *variant,
             std::vector<int64_t> dims, gs_run_stats *st)
{
    const gs_kernel_def *k = gs_suite_find(kernel);
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = k;
    spec.variant = gs_suite_variant(k, variant);
    spec.dtype = GS_BF16;
    spec.n_dims = (int)dims.size();
    for (size_t i = 0; i < dims.size(); i++)
        spec.dims[i] = dims[i];
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    EXPECT_EQ(gs_job_build(&spec, &job, &err), GS_OK) << err.message;
    if (!job) return 0;
    gs_run_opts o{};
    o.functional = 0;
    o.wall_limit_s = 120;
    EXPECT_EQ(gs_test_run_isolated(cfg, gs_job_program(job), nullptr, &o, st, &err), GS_OK)
        << err.message;
    gs_job_free(job);
    EXPECT_GE(st->roofline_ratio, 1.0) << kernel << "/" << variant << " beats its roofline";
    return st->total_ns;
}

TEST(NonMatmulKernelsModel, FusedBeatsUnfusedAndNothingBeatsTheRoofline)
{
    for (const char *g : {"gen1", "gen2", "gen3"}) {
        Cfg h(gen(g));
        ASSERT_NE(h.cfg, nullptr);
        SCOPED_TRACE(g);
        gs_run_stats a{}, b{};
        double fused = timed(h.cfg, "fused_elementwise", "fused", {1024, 2048}, &a);
        double unfused = timed(h.cfg, "fused_elementwise", "unfused", {1024, 2048}, &b);
        EXPECT_LT(fused * 2.0, unfused) << "fused " << fused << " ns, unfused " << unfused << " ns";
        EXPECT_NEAR(b.hbm_bytes / a.hbm_bytes, 3.0, 0.05);
        double sm_fused = timed(h.cfg, "softmax", "fused", {1024, 2048}, &a);
        double sm_three = timed(h.cfg, "softmax", "three_pass", {1024, 2048}, &b);
        EXPECT_LT(sm_fused, sm_three) << "fused " << sm_fused << " ns, three_pass " << sm_three;
        EXPECT_NEAR(b.hbm_bytes / a.hbm_bytes, 2.5, 0.05);
    }
}

TEST(NonMatmulKernelsModel, CausalSkipsWorkAndNormsRespectTheRoofline)
{
    Cfg h(gen("gen2"));
    ASSERT_NE(h.cfg, nullptr);
    gs_run_stats a{}, b{};
    double causal = timed(h.cfg, "attention", "causal", {4096, 128}, &a);
    double full = timed(h.cfg, "attention", "noncausal", {4096, 128}, &b);
    EXPECT_LT(causal, full * 0.75) << causal << " vs " << full;
    EXPECT_LT(a.flops, b.flops * 0.75);
    for (const char *k : {"layernorm", "rmsnorm", "reduce"}) {
        const gs_kernel_def *d = gs_suite_find(k);
        for (int v = 0; v < d->n_variants; v++)
            timed(h.cfg, k, d->variants[v], {1024, 2048}, &a);
    }
    timed(h.cfg, "embedding", "default", {1024, 4096, 1024}, &a);
}

} // namespace

// rmsnorm_qkv: where the resident block holds every token (so W is read once either way), the
// fused variant moves exactly the XNT round trip (written and read back: 2 T D bf16 bytes)
// less than the unfused one, and is faster.
TEST(RmsnormQkvModel, FusedSkipsTheScratchRoundTrip)
{
    const int64_t T = 256, D = 1024, N = 1536;
    for (const char *g : {"gen2", "gen3"}) {
        Cfg h(gen(g));
        ASSERT_NE(h.cfg, nullptr);
        SCOPED_TRACE(g);
        gs_run_stats a{}, b{};
        double fused = timed(h.cfg, "rmsnorm_qkv", "fused", {T, D, N}, &a);
        double unfused = timed(h.cfg, "rmsnorm_qkv", "unfused", {T, D, N}, &b);
        EXPECT_LT(fused, unfused) << "fused " << fused << " ns, unfused " << unfused << " ns";
        const double minimum = 2.0 * (double)(T * D + D * N + T * N + D);
        EXPECT_GE(a.hbm_bytes, minimum);
        EXPECT_LE(a.hbm_bytes, minimum + 2.0 * (double)(127 * D)); /* gamma broadcast rows */
        EXPECT_GE(b.hbm_bytes - a.hbm_bytes, 2.0 * 2.0 * (double)(T * D));
    }
}
