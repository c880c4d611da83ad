// Program build time per instruction must not grow with the program: at 270K-410K instructions it
// may be at most 1.5x what it is at ~10K, for a matmul (long read histories, tiles of the
// output; the naive and the pipelined schedule) and an instruction-dense elementwise_add (an output
// written in 64-column tiles). A ratio measured in one run, not an absolute time: each build runs
// in a fresh child process (the same first-touch memory costs for both sizes) and is timed in CPU
// time of that process (user + system: a long build on a shared machine is preempted more often
// than a short one, which would stretch its wall time only), best of several to shed the remaining
// noise. GS_BASELINE_PATHS=1 (full history scans) makes it fail.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string>

#include "gs/config.h"
#include "job.h"

namespace
{

constexpr int kReps = 5;
constexpr double kMaxGrowth = 1.5;

double cpu_s()
{
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct Timing {
    double s = -1;
    double instrs = 0;
};

// Build once in a forked child; the child reports (seconds, instructions) through a pipe.
Timing build_in_child(const gs_job_spec &spec)
{
    int fd[2];
    if (pipe(fd) != 0) return {};
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        gs_job *job = nullptr;
        gs_error err;
        gs_error_clear(&err);
        double t0 = cpu_s();
        gs_status st = gs_job_build(&spec, &job, &err);
        double out[2] = {cpu_s() - t0,
                         st == GS_OK ? (double)gs_program_count(gs_job_program(job)) : -1.0};
        ssize_t w = write(fd[1], out, sizeof out);
        _exit(w == (ssize_t)sizeof out ? 0 : 1);
    }
    close(fd[1]);
    double in[2] = {-1, -1};
    ssize_t r = read(fd[0], in, sizeof in);
    close(fd[0]);
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (r != (ssize_t)sizeof in || in[1] <= 0) return {};
    return {in[0], in[1]};
}

// Best per-instruction time of kReps builds.
Timing best_of(const gs_job_spec &spec)
{
    Timing best;
    for (int i = 0; i < kReps; i++) {
        Timing t = build_in_child(spec);
        if (t.s < 0) return {};
        if (best.s < 0 || t.s / t.instrs < best.s / best.instrs) best = t;
    }
    return best;
}

void check_growth(const char *kernel, const char *variant, int n, const int64_t *small,
                  const int64_t *large, int chunk_param)
{
    gs_diags d;
    gs_diags_init(&d);
    std::string path = std::string(GS_SOURCE_DIR) + "/configs/gen1.yaml";
    gs_config *cfg = gs_config_load(path.c_str(), &d);
    gs_diags_free(&d);
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
    Timing a = best_of(spec);
    std::copy(large, large + n, spec.dims);
    Timing b = best_of(spec);
    gs_config_free(cfg);
    ASSERT_GT(a.s, 0) << kernel << ": the small build failed";
    ASSERT_GT(b.s, 0) << kernel << ": the large build failed";
    EXPECT_GE(a.instrs, 8000);
    EXPECT_LE(a.instrs, 15000);
    EXPECT_GE(b.instrs, 250000);
    double ua = a.s / a.instrs * 1e6, ub = b.s / b.instrs * 1e6;
    std::printf("%s/%s: %.0f instructions %.3f us each, %.0f instructions %.3f us each: %.2fx\n",
                kernel, variant, a.instrs, ua, b.instrs, ub, ub / ua);
    EXPECT_LE(ub / ua, kMaxGrowth)
        << kernel << ": build time per instruction grows " << ub / ua << "x from " << a.instrs
        << " to " << b.instrs << " instructions";
}

TEST(BuildScaling, MatmulPerInstructionIsFlat)
{
    const int64_t small[3] = {256, 8192, 8192}, large[3] = {8192, 8192, 8192};
    check_growth("matmul", "naive", 3, small, large, -1);
}

TEST(BuildScaling, PipelinedMatmulPerInstructionIsFlat)
{
    const int64_t small[3] = {256, 8192, 8192}, large[3] = {8192, 8192, 8192};
    check_growth("matmul", "pipelined", 3, small, large, -1);
}

TEST(BuildScaling, DenseElementwisePerInstructionIsFlat)
{
    // 4 instructions per 128 x 64 tile: 2560 rows ~10K instructions, 102400 rows ~410K
    const int64_t small[2] = {2560, 8192}, large[2] = {102400, 8192};
    const gs_kernel_def *k = gs_suite_find("elementwise_add");
    ASSERT_NE(k, nullptr);
    int chunk = -1;
    for (int i = 0; i < k->n_params; i++)
        if (!std::strcmp(k->param_names[i], "chunk")) chunk = i;
    ASSERT_GE(chunk, 0);
    check_growth("elementwise_add", "default", 2, small, large, chunk);
}

} // namespace
