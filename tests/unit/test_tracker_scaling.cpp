// The dependency tracker's cost per instruction must not grow with the program: at 270K-410K
// instructions it may be at most 1.5x what it is at ~10K, for a matmul (long read histories,
// tiles of the output; the naive and the pipelined schedule) and an instruction-dense
// elementwise_add (an output written in 64-column tiles). The cost is counted, not timed
// (gs_job_tracker_work: the history entries the tracker examined), so the check is exact and
// the same on a loaded machine; CPU time per instruction is a benchmark (`gensweep bench
// --scaling`). GS_BASELINE_PATHS=1 (full history scans) makes the elementwise check fail (13x).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "gs/config.h"
#include "job.h"

namespace
{

constexpr double kMaxGrowth = 1.5;

struct Work {
    double work = -1;
    double instrs = 0;
};

Work build(const gs_job_spec &spec)
{
    gs_job *job = nullptr;
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_job_build(&spec, &job, &err);
    Work w;
    if (st == GS_OK) {
        w.work = (double)gs_job_tracker_work(job);
        w.instrs = (double)gs_program_count(gs_job_program(job));
    } else {
        ADD_FAILURE() << "build failed: " << err.message;
    }
    gs_job_free(job);
    return w;
}

gs_config *load_gen(const char *gen = "gen1")
{
    gs_diags d;
    gs_diags_init(&d);
    std::string path = std::string(GS_SOURCE_DIR) + "/configs/" + gen + ".yaml";
    gs_config *cfg = gs_config_load(path.c_str(), &d);
    gs_diags_free(&d);
    return cfg;
}

int param_index(const gs_kernel_def *k, const char *name)
{
    for (int i = 0; i < k->n_params; i++)
        if (!std::strcmp(k->param_names[i], name)) return i;
    return -1;
}

void check_growth(const char *kernel, const char *variant, int n, const int64_t *small,
                  const int64_t *large, int chunk_param, const char *gen = "gen1",
                  double small_min = 8000, double small_max = 15000)
{
    gs_config *cfg = load_gen(gen);
    ASSERT_NE(cfg, nullptr);
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = gs_suite_find(kernel);
    ASSERT_NE(spec.kernel, nullptr);
    spec.variant = gs_suite_variant(spec.kernel, variant);
    spec.dtype = GS_BF16;
    spec.seed = 1;
    spec.n_dims = n;
    if (chunk_param >= 0) spec.params[chunk_param] = 64;
    std::copy(small, small + n, spec.dims);
    Work a = build(spec);
    std::copy(large, large + n, spec.dims);
    Work b = build(spec);
    gs_config_free(cfg);
    ASSERT_GT(a.work, 0) << kernel << ": the small build failed or did no tracking";
    ASSERT_GT(b.work, 0) << kernel << ": the large build failed or did no tracking";
    EXPECT_GE(a.instrs, small_min);
    EXPECT_LE(a.instrs, small_max);
    EXPECT_GE(b.instrs, 250000);
    double ua = a.work / a.instrs, ub = b.work / b.instrs;
    std::printf("%s/%s: %.0f instructions %.1f entries each, %.0f instructions %.1f entries "
                "each: %.2fx\n",
                kernel, variant, a.instrs, ua, b.instrs, ub, ub / ua);
    EXPECT_LE(ub / ua, kMaxGrowth)
        << kernel << ": tracker work per instruction grows " << ub / ua << "x from " << a.instrs
        << " to " << b.instrs << " instructions";
}

const char *first_variant(const char *kernel)
{
    const gs_kernel_def *k = gs_suite_find(kernel);
    return k && k->n_variants > 0 ? k->variants[0] : "";
}

} // namespace

TEST(TrackerScaling, MatmulWorkPerInstructionIsFlat)
{
    const int64_t small[3] = {256, 8192, 8192}, large[3] = {8192, 8192, 8192};
    check_growth("matmul", "naive", 3, small, large, -1);
}

TEST(TrackerScaling, PipelinedMatmulWorkPerInstructionIsFlat)
{
    const int64_t small[3] = {256, 8192, 8192}, large[3] = {8192, 8192, 8192};
    check_growth("matmul", "pipelined", 3, small, large, -1);
}

TEST(TrackerScaling, DenseElementwiseWorkPerInstructionIsFlat)
{
    // 4 instructions per 128 x 64 tile: 2560 rows ~10K instructions, 102400 rows ~410K
    const int64_t small[2] = {2560, 8192}, large[2] = {102400, 8192};
    const gs_kernel_def *k = gs_suite_find("elementwise_add");
    ASSERT_NE(k, nullptr);
    const int chunk = param_index(k, "chunk");
    ASSERT_GE(chunk, 0);
    check_growth("elementwise_add", "default", 2, small, large, chunk);
}

// rope (naive: 10 instructions per token block and head): the y tile is stored whole by DMA each
// round and written back in halves by the vector engine, so no single write covers a store's
// read; before reads were dropped once a covering read waits for them through a dependency, the
// stores' reads piled up and every write examined all of them (41x at 100K instructions).
TEST(TrackerScaling, RopeWorkPerInstructionIsFlat)
{
    const int64_t small[3] = {4096, 32, 128}, large[3] = {102400, 32, 128};
    check_growth("rope", "naive", 3, small, large, -1);
}

// selective_scan (loop): each step reads one column of its chunk's tiles, and waits for the
// tiles' first writes, which wait for every reader of the buffers' previous tiles (a chunk's
// worth). Looking for reads to drop through those dependencies first cost each step a binary
// search per reader: work per instruction grew with the chunk (8.9K entries per instruction at a
// 512-column chunk, 97 % of the build). The same sequence at a 64- and a 512-column chunk must
// cost about the same per instruction.
TEST(TrackerScaling, SelectiveScanWorkPerInstructionDoesNotGrowWithTheChunk)
{
    gs_config *cfg = load_gen();
    ASSERT_NE(cfg, nullptr);
    gs_job_spec spec{};
    spec.cfg = cfg;
    spec.kernel = gs_suite_find("selective_scan");
    ASSERT_NE(spec.kernel, nullptr);
    spec.variant = gs_suite_variant(spec.kernel, "loop");
    spec.dtype = GS_FP32;
    spec.seed = 1;
    spec.n_dims = 3;
    const int64_t dims[3] = {200, 2048, 8};
    std::copy(dims, dims + 3, spec.dims);
    const int chunk = param_index(spec.kernel, "chunk");
    ASSERT_GE(chunk, 0);
    spec.params[chunk] = 64;
    Work a = build(spec);
    spec.params[chunk] = 512;
    Work b = build(spec);
    gs_config_free(cfg);
    ASSERT_GT(a.work, 0);
    ASSERT_GT(b.work, 0);
    EXPECT_GE(a.instrs, 30000);
    const double ua = a.work / a.instrs, ub = b.work / b.instrs;
    std::printf("selective_scan/loop chunk 64: %.0f instructions %.1f entries each; chunk 512: "
                "%.0f instructions %.1f entries each: %.2fx\n",
                a.instrs, ua, b.instrs, ub, ub / ua);
    EXPECT_LE(ub / ua, kMaxGrowth)
        << "tracker work per instruction grows " << ub / ua << "x from a 64- to a 512-column chunk";
}

// The kernels `bench --scaling` found superlinear (BENCHMARKS.md: mlp, matmul_fp8, maxpool2d,
// attention_decode), on gen4, their first variant, one dimension of the first perf shape scaled
// from ~10K to ~250K instructions.
TEST(TrackerScaling, MlpWorkPerInstructionIsFlat)
{
    const int64_t small[3] = {4491, 4096, 4096}, large[3] = {115000, 4096, 4096};
    check_growth("mlp", first_variant("mlp"), 3, small, large, -1, "gen4");
}

TEST(TrackerScaling, MatmulFp8WorkPerInstructionIsFlat)
{
    const int64_t small[3] = {8828, 4096, 4096}, large[3] = {230000, 4096, 4096};
    check_growth("matmul_fp8", first_variant("matmul_fp8"), 3, small, large, -1, "gen4");
}

TEST(TrackerScaling, Maxpool2dWorkPerInstructionIsFlat)
{
    const int64_t small[5] = {426667, 16, 16, 2, 2}, large[5] = {10666667, 16, 16, 2, 2};
    check_growth("maxpool2d", first_variant("maxpool2d"), 5, small, large, -1, "gen4");
}

TEST(TrackerScaling, AttentionDecodeWorkPerInstructionIsFlat)
{
    const int64_t small[5] = {2, 32, 8, 4096, 128}, large[5] = {40, 32, 8, 4096, 128};
    check_growth("attention_decode", first_variant("attention_decode"), 5, small, large, -1,
                 "gen4");
}

// swiglu_mlp (unfused): 346 entries per instruction at 11K instructions (1203 tokens), 634 at
// 37K (4812 tokens) and flat from there (610 at 347K): a step at small token counts, not a
// growth with the program. Checked from 37K, where the step is behind it.
TEST(TrackerScaling, SwigluMlpWorkPerInstructionIsFlatPastItsSmallSizes)
{
    const int64_t small[3] = {4812, 2048, 8192}, large[3] = {35000, 2048, 8192};
    check_growth("swiglu_mlp", first_variant("swiglu_mlp"), 3, small, large, -1, "gen4", 30000,
                 45000);
}
