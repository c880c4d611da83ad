// Checks that cannot depend on luck: every kernel x every variant x every shipped config, each of
// its check shapes (in the sweep's dtypes: every shape in the default dtype, the other dtypes on
// the first shape), with seeds 1..20 (in two binaries, below), through the functional executor.
// Every run must pass: a tolerance that holds for one seed's data and not another's is not derived
// from what the kernel computes (kernels/README.md, "Correctness policy").
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "gs/config.h"
#include "gs/exec.h"
#include "job.h"
#include "shipped_configs.h"

namespace
{

// Seeds GS_SEED_FIRST..GS_SEED_LAST (tests/CMakeLists.txt builds this file twice): seeds 1..3 in
// the test pass (test_kernel_seeds_quick), 4..20 under the slow label, which CI runs in its gate
// stage; together every case sees seeds 1..20 once.
#ifndef GS_SEED_FIRST
#define GS_SEED_FIRST 1
#endif
#ifndef GS_SEED_LAST
#define GS_SEED_LAST 20
#endif
#ifndef GS_SEEDS_NAME
#define GS_SEEDS_NAME Seeds1To20
#endif
constexpr uint64_t kSeedFirst = GS_SEED_FIRST;
constexpr uint64_t kSeedLast = GS_SEED_LAST;

struct Case {
    std::string config;
    const gs_kernel_def *kernel;
    int variant;
};

void PrintTo(const Case &c, std::ostream *os)
{
    *os << c.config << " " << c.kernel->name << "/" << c.kernel->variants[c.variant];
}

std::vector<Case> all_cases()
{
    std::vector<Case> cases;
    for (const auto &cfg : gs_test_shipped_configs())
        for (size_t k = 0; k < gs_suite_count(); k++) {
            const gs_kernel_def *def = gs_suite_kernel(k);
            for (int v = 0; v < def->n_variants; v++)
                cases.push_back({cfg, def, v});
        }
    return cases;
}

std::string case_name(const testing::TestParamInfo<Case> &info)
{
    const Case &c = info.param;
    std::string n =
        gs_test_config_name(c.config) + "_" + c.kernel->name + "_" + c.kernel->variants[c.variant];
    for (auto &ch : n)
        if (!isalnum((unsigned char)ch)) ch = '_';
    return n;
}

// The sweep's check-suite dtypes (sweep_plan.c): bf16 when the kernel takes it, else its first.
gs_dtype default_dtype(const gs_kernel_def *k)
{
    if (k->dtypes & (1u << GS_BF16)) return GS_BF16;
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (k->dtypes & (1u << t)) return (gs_dtype)t;
    return GS_BF16;
}

std::string shape_text(const gs_shape &sh)
{
    std::string s;
    for (int i = 0; i < sh.n; i++)
        s += (i ? "x" : "") + std::to_string(sh.d[i]);
    return s;
}

class KernelSeeds : public testing::TestWithParam<Case>
{
};

TEST_P(KernelSeeds, EveryCheckShapePassesWithEverySeed)
{
    const Case &c = GetParam();
    gs_config *cfg = gs_test_load_config(c.config);
    ASSERT_NE(cfg, nullptr) << c.config;
    const gs_kernel_def *k = c.kernel;
    const gs_dtype dt0 = default_dtype(k);
    std::ostringstream failures;
    int runs = 0, failed = 0;
    for (int si = 0; si < GS_SUITE_MAX_SHAPES && k->check_shapes[si].n; si++)
        for (int t = 0; t < GS_DTYPE_COUNT; t++) {
            if (!(k->dtypes & (1u << t))) continue;
            if ((gs_dtype)t != dt0 && si != 0) continue;
            gs_job_spec spec{};
            spec.cfg = cfg;
            spec.kernel = k;
            spec.variant = c.variant;
            spec.dtype = (gs_dtype)t;
            spec.n_dims = k->check_shapes[si].n;
            for (int i = 0; i < spec.n_dims; i++)
                spec.dims[i] = k->check_shapes[si].d[i];
            spec.seed = 1;
            const std::string where =
                shape_text(k->check_shapes[si]) + " " + gs_dtype_name((gs_dtype)t);
            gs_job *job = nullptr;
            gs_error err;
            gs_error_clear(&err);
            // one build serves every seed: the program does not depend on the data
            gs_status st = gs_job_build(&spec, &job, &err);
            if (st == GS_ERR_UNSUPPORTED) { // a missing capability, not a check
                gs_job_free(job);
                continue;
            }
            if (st != GS_OK) {
                runs++;
                failed++;
                failures << "  " << where << ": build: " << err.message << "\n";
                gs_job_free(job);
                continue;
            }
            for (uint64_t seed = kSeedFirst; seed <= kSeedLast; seed++) {
                runs++;
                gs_job_set_seed(job, seed);
                gs_job_check chk{};
                if (gs_job_init_memory(job, &err) != GS_OK ||
                    gs_exec_program(gs_job_memory(job), gs_job_program(job), &err) != GS_OK ||
                    gs_job_check_outputs(job, &chk, &err) != GS_OK) {
                    failed++;
                    failures << "  " << where << " seed " << seed << ": " << err.message << "\n";
                }
            }
            gs_job_free(job);
        }
    gs_config_free(cfg);
    EXPECT_EQ(failed, 0) << failed << " of " << runs << " runs failed:\n" << failures.str();
    RecordProperty("runs", runs);
    RecordProperty("seeds", std::to_string(kSeedFirst) + ".." + std::to_string(kSeedLast));
}

// the two binaries' tests differ by name: Seeds1To3/KernelSeeds..., Seeds4To20/KernelSeeds...
INSTANTIATE_TEST_SUITE_P(GS_SEEDS_NAME, KernelSeeds, testing::ValuesIn(all_cases()), case_name);

} // namespace
