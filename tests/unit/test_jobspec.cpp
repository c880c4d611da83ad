// The job-spec codec (harness/job/jobspec.c): spec -> run options -> spec and spec -> id -> spec
// round trips over every kernel, variant, check shape and dtype of the suite, and the errors for
// bad options and ids.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gs/config.h"
#include "jobspec.h"

namespace
{

struct Cfg {
    gs_config *c = nullptr;
    explicit Cfg(const char *name)
    {
        gs_diags d;
        gs_diags_init(&d);
        std::string p = std::string(GS_SOURCE_DIR) + "/configs/" + name;
        c = gs_config_load(p.c_str(), &d);
        gs_diags_free(&d);
    }
    ~Cfg() { gs_config_free(c); }
};

std::string id_of(const gs_job_spec &s)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_job_spec_id(&sb, &s);
    std::string r = gs_sb_cstr(&sb);
    gs_sb_free(&sb);
    return r;
}

void expect_same(const gs_job_spec &a, const gs_job_spec &b, const std::string &what)
{
    EXPECT_EQ(a.cfg, b.cfg) << what;
    EXPECT_EQ(a.kernel, b.kernel) << what;
    EXPECT_EQ(a.variant, b.variant) << what;
    EXPECT_EQ(a.dtype, b.dtype) << what;
    ASSERT_EQ(a.n_dims, b.n_dims) << what;
    for (int i = 0; i < a.n_dims; i++)
        EXPECT_EQ(a.dims[i], b.dims[i]) << what << " dim " << i;
    for (int i = 0; i < GS_KERNEL_MAX_PARAMS; i++)
        EXPECT_EQ(a.params[i], b.params[i]) << what << " param " << i;
    EXPECT_EQ(a.seed, b.seed) << what;
}

/* Parse argv (the options of gs_job_spec_to_argv) back the way `run` does. */
gs_status from_argv(const gs_job_argv &ja, const gs_config *cfg, gs_job_spec *out, gs_error *err)
{
    gs_job_options o;
    gs_job_options_init(&o);
    std::vector<char *> argv;
    for (int i = 0; i < ja.argc; i++)
        argv.push_back(const_cast<char *>(ja.argv[i]));
    for (int i = 0; i < ja.argc; i++) {
        int r = gs_job_options_take(&o, ja.argc, argv.data(), &i, err);
        if (r != 1) return GS_ERR_USAGE;
    }
    return gs_job_spec_from_options(&o, cfg, out, err);
}

/* Every kernel x variant x dtype on its first check shape, with and without params and seed. */
std::vector<gs_job_spec> suite_specs(const gs_config *cfg)
{
    std::vector<gs_job_spec> v;
    for (size_t k = 0; k < gs_suite_count(); k++) {
        const gs_kernel_def *kd = gs_suite_kernel(k);
        for (int var = 0; var < kd->n_variants; var++)
            for (int t = 0; t < GS_DTYPE_COUNT; t++) {
                if (!(kd->dtypes & (1u << t))) continue;
                for (int si = 0; si < GS_SUITE_MAX_SHAPES && kd->check_shapes[si].n; si++) {
                    gs_job_spec s;
                    std::memset(&s, 0, sizeof s);
                    s.cfg = cfg;
                    s.kernel = kd;
                    s.variant = var;
                    s.dtype = (gs_dtype)t;
                    s.n_dims = kd->check_shapes[si].n;
                    std::memcpy(s.dims, kd->check_shapes[si].d, sizeof s.dims);
                    s.seed = 1;
                    v.push_back(s);
                    for (int p = 0; p < kd->n_params; p++)
                        s.params[p] = 64 << p; /* every param set, in the kernel's order */
                    s.seed = 12345678901234ull;
                    v.push_back(s);
                }
            }
    }
    return v;
}

TEST(JobSpec, ArgvRoundTripsEveryKernelVariantShapeAndDtype)
{
    Cfg g("gen2.yaml");
    ASSERT_NE(g.c, nullptr);
    auto specs = suite_specs(g.c);
    ASSERT_GT(specs.size(), 50u);
    for (const gs_job_spec &s : specs) {
        gs_job_argv ja;
        gs_job_spec_to_argv(&s, &ja);
        ASSERT_EQ(ja.argv[ja.argc], nullptr);
        gs_job_spec back;
        gs_error err;
        gs_error_clear(&err);
        std::string id = id_of(s);
        ASSERT_EQ(from_argv(ja, g.c, &back, &err), GS_OK) << id << ": " << err.message;
        expect_same(s, back, id);
    }
}

TEST(JobSpec, IdRoundTripsEveryKernelVariantShapeAndDtype)
{
    Cfg g("gen2.yaml");
    ASSERT_NE(g.c, nullptr);
    for (gs_job_spec s : suite_specs(g.c)) {
        s.seed = 1; /* the id does not carry the seed */
        std::string id = id_of(s);
        gs_job_spec back;
        gs_error err;
        gs_error_clear(&err);
        ASSERT_EQ(gs_job_spec_from_id(id.c_str(), g.c, &back, &err), GS_OK)
            << id << ": " << err.message;
        expect_same(s, back, id);
        EXPECT_EQ(id_of(back), id);
    }
}

TEST(JobSpec, ArgvNamesOnlyWhatDiffersFromTheDefaults)
{
    Cfg g("gen1.yaml");
    ASSERT_NE(g.c, nullptr);
    gs_job_spec s;
    std::memset(&s, 0, sizeof s);
    s.cfg = g.c;
    s.kernel = gs_suite_find("matmul");
    ASSERT_NE(s.kernel, nullptr);
    ASSERT_GE(s.kernel->n_params, 2);
    s.variant = 1;
    s.dtype = GS_FP32;
    s.n_dims = 3;
    s.dims[0] = 128;
    s.dims[1] = 256;
    s.dims[2] = 512;
    s.params[1] = 7;
    s.seed = 1;
    gs_job_argv ja;
    gs_job_spec_to_argv(&s, &ja);
    std::string line;
    for (int i = 0; i < ja.argc; i++)
        line += std::string(i ? " " : "") + ja.argv[i];
    EXPECT_EQ(line, std::string("--kernel matmul --variant ") + s.kernel->variants[1] +
                        " --dtype fp32 --shape 128x256x512 --param " + s.kernel->param_names[1] +
                        "=7");
    EXPECT_EQ(id_of(s), std::string("gen1/matmul/") + s.kernel->variants[1] + "/fp32/128x256x512/" +
                            s.kernel->param_names[1] + "=7");
    s.seed = 9;
    gs_job_spec_to_argv(&s, &ja);
    ASSERT_GE(ja.argc, 2);
    EXPECT_STREQ(ja.argv[ja.argc - 2], "--seed");
    EXPECT_STREQ(ja.argv[ja.argc - 1], "9");
}

TEST(JobSpec, OptionsDefaultToTheFirstVariantBf16AndFirstCheckShape)
{
    Cfg g("gen1.yaml");
    ASSERT_NE(g.c, nullptr);
    gs_job_options o;
    gs_job_options_init(&o);
    o.kernel = "elementwise_add";
    gs_job_spec s;
    gs_error err;
    gs_error_clear(&err);
    ASSERT_EQ(gs_job_spec_from_options(&o, g.c, &s, &err), GS_OK) << err.message;
    EXPECT_EQ(s.variant, 0);
    EXPECT_EQ(s.dtype, GS_BF16);
    EXPECT_EQ(s.seed, 1u);
    ASSERT_EQ(s.n_dims, s.kernel->check_shapes[0].n);
    EXPECT_EQ(s.dims[0], s.kernel->check_shapes[0].d[0]);
}

std::string options_error(std::vector<const char *> args, const gs_config *cfg)
{
    gs_job_options o;
    gs_job_options_init(&o);
    std::vector<char *> argv;
    for (const char *a : args)
        argv.push_back(const_cast<char *>(a));
    gs_error err;
    gs_error_clear(&err);
    for (int i = 0; i < (int)argv.size(); i++) {
        int r = gs_job_options_take(&o, (int)argv.size(), argv.data(), &i, &err);
        if (r < 0) return err.message;
        if (r == 0) return std::string("not taken: ") + argv[i];
    }
    gs_job_spec s;
    if (gs_job_spec_from_options(&o, cfg, &s, &err) != GS_OK) return err.message;
    return "";
}

TEST(JobSpec, BadOptionsNameTheProblem)
{
    Cfg g("gen1.yaml");
    ASSERT_NE(g.c, nullptr);
    EXPECT_EQ(options_error({"--kernel", "elementwise_add", "--shape"}, g.c),
              "option --shape needs a value");
    EXPECT_EQ(options_error({"--kernel", "elementwise_add", "--frobnicate"}, g.c),
              "not taken: --frobnicate");
    EXPECT_EQ(options_error({"--kernel", "nope"}, g.c)
                  .rfind("unknown kernel 'nope'; known: "
                         "elementwise_add",
                         0),
              0u);
    EXPECT_EQ(options_error({"--kernel", "elementwise_add", "--shape", "2x3x4"}, g.c),
              "kernel elementwise_add takes 2 dims (RxC), --shape gave 3");
    EXPECT_EQ(options_error({"--kernel", "elementwise_add", "--dtype", "int3"}, g.c),
              "unknown dtype 'int3'");
    EXPECT_NE(options_error({"--kernel", "elementwise_add", "--variant", "zz"}, g.c)
                  .find("has no variant 'zz'; variants: default"),
              std::string::npos);
    EXPECT_EQ(
        options_error({"--kernel", "elementwise_add", "--seed", "-1"}, g.c).rfind("--seed: ", 0),
        0u);
    EXPECT_EQ(options_error({"--kernel", "elementwise_add", "--param", "nope=1"}, g.c)
                  .rfind("--param ", 0),
              0u);
}

TEST(JobSpec, BadIdsNameThePart)
{
    Cfg g("gen1.yaml");
    ASSERT_NE(g.c, nullptr);
    gs_job_spec s;
    gs_error err;
    const char *bad[] = {"gen1/elementwise_add/default/bf16",
                         "gen2/elementwise_add/default/bf16/8x8",
                         "gen1/nope/default/bf16/8x8",
                         "gen1/elementwise_add/zz/bf16/8x8",
                         "gen1/elementwise_add/default/int3/8x8",
                         "gen1/elementwise_add/default/bf16/8x8x8",
                         "gen1/elementwise_add/default/bf16/8x",
                         "gen1/elementwise_add/default/bf16/8x8/nope=1"};
    const char *why[] = {"expected generation/kernel",
                         "is not the config's",
                         "unknown kernel",
                         "no variant 'zz'",
                         "unknown dtype",
                         "takes 2 dims",
                         "",
                         "nope"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gs_error_clear(&err);
        EXPECT_EQ(gs_job_spec_from_id(bad[i], g.c, &s, &err), GS_ERR_PARSE) << bad[i];
        EXPECT_NE(std::string(err.message).find(bad[i]), std::string::npos) << err.message;
        EXPECT_NE(std::string(err.message).find(why[i]), std::string::npos) << err.message;
    }
}

} // namespace
