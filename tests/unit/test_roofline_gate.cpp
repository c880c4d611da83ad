// Physics through the job pipeline: a run that beats its roofline is a model error, in the
// default functional mode as in timing-only mode, whatever the output check says. No valid
// program or config makes the model beat the roofline, so the fault is injected at link time:
// this test binary is linked with `-Wl,--wrap=gs_model_run`, and the wrapper (below) can report
// a thousandth of the time the model took, as a model with a broken cost would. The pipeline
// under test (gs_job_run) is the shipped code, unchanged. Each run is in a forked child
// (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gs/config.h"
#include "gs/model.h"
#include "jobrun.h"
#include "suite_job.h"

namespace
{
int g_too_fast; /* 1: the wrapped model reports 1/1000 of its time; 2: a bound above its time */
} // namespace

extern "C" gs_status __real_gs_model_run(gs_model *m, const gs_program *p, gs_mem *mem,
                                         const gs_run_opts *opts, gs_run_stats *stats,
                                         gs_error *err);
extern "C" gs_status __wrap_gs_model_run(gs_model *m, const gs_program *p, gs_mem *mem,
                                         const gs_run_opts *opts, gs_run_stats *stats,
                                         gs_error *err)
{
    gs_status st = __real_gs_model_run(m, p, mem, opts, stats, err);
    if (st == GS_OK && g_too_fast == 1) stats->total_ns *= 1e-3;
    /* an engine's minimum cost above what the run took (a cost table whose best rate is slower
     * than the rate the model ran at); the rooflines stay as they were */
    if (st == GS_OK && g_too_fast == 2) stats->bound_ns = 2 * stats->total_ns;
    return st;
}

namespace
{

struct Outcome {
    int status = -1; /* gs_job_status of the run; -1: the child died */
    int roofline_error = 0;
    int outputs_checked = 0;
};

/* elementwise_add at its first check shape on gen2, in a forked child */
Outcome run_job(int functional, int too_fast)
{
    int fd[2];
    Outcome out;
    if (pipe(fd) != 0) return out;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        g_too_fast = too_fast;
        Outcome o;
        gs_diags d;
        gs_diags_init(&d);
        std::string path = std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml";
        gs_config *cfg = gs_config_load(path.c_str(), &d);
        gs_diags_free(&d);
        const gs_kernel_def *def = cfg ? gs_suite_find("elementwise_add") : nullptr;
        if (def) {
            gs_job_spec spec = gs_test_suite_spec(cfg, def, 0, GS_FP32, def->check_shapes[0]);
            gs_job_run_opts opts{};
            opts.functional = functional;
            gs_job_result r;
            if (gs_job_run(&spec, &opts, &r) == GS_OK) {
                o.status = (int)r.status;
                o.roofline_error = strstr(r.err.message, "faster than the") != nullptr;
                if (too_fast == 2)
                    o.roofline_error = strstr(r.err.message, "per-engine bound") != nullptr;
                o.outputs_checked = r.check.checked;
            }
            gs_job_result_free(&r);
        }
        gs_config_free(cfg);
        ssize_t w = write(fd[1], &o, sizeof o);
        _exit(w == (ssize_t)sizeof o ? 0 : 1);
    }
    close(fd[1]);
    if (pid > 0) {
        if (read(fd[0], &out, sizeof out) != (ssize_t)sizeof out) out = Outcome{};
        int ws = 0;
        waitpid(pid, &ws, 0);
    }
    close(fd[0]);
    return out;
}

TEST(RooflineGate, HonestRunPassesInBothModes)
{
    Outcome f = run_job(1, 0);
    EXPECT_EQ(f.status, (int)GS_JOB_PASS);
    EXPECT_EQ(f.roofline_error, 0);
    EXPECT_GT(f.outputs_checked, 0);
    Outcome t = run_job(0, 0);
    EXPECT_EQ(t.status, (int)GS_JOB_PASS);
}

TEST(RooflineGate, FunctionalRunFasterThanPhysicsIsAnError)
{
    // the outputs are right (the data path is untouched): only the physics check can catch it
    Outcome o = run_job(1, 1);
    EXPECT_EQ(o.status, (int)GS_JOB_ERROR);
    EXPECT_EQ(o.roofline_error, 1);
}

TEST(RooflineGate, TimingOnlyRunFasterThanPhysicsIsAnError)
{
    Outcome o = run_job(0, 1);
    EXPECT_EQ(o.status, (int)GS_JOB_ERROR);
    EXPECT_EQ(o.roofline_error, 1);
}

TEST(RooflineGate, RunFasterThanItsPerEngineBoundIsAnError)
{
    Outcome o = run_job(0, 2);
    EXPECT_EQ(o.status, (int)GS_JOB_ERROR);
    EXPECT_EQ(o.roofline_error, 1);
}

} // namespace
