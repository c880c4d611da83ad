// Traced NKI programs (.gsk, harness/run/nki_prog.h) built through the job pipeline: the
// dependency tracker's cost per instruction stays flat for the loop a runaway kernel traces
// (load a tile, store it over the same HBM region, every round) up to its --max-instructions
// cap. Counted (gs_job_tracker_work), not timed. Each store used to depend on every earlier
// one: a 20,000-instruction cap took minutes to report.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "gs/config.h"
#include "job.h"
#include "jobspec.h"
#include "nki_prog.h"
#include "suite.h"

namespace
{

// `rounds` rounds of: a tile of the site's pool (two buffers), x -> tile, tile -> out.
std::string loop_program(int rounds)
{
    std::string s = "gsk 1\nkernel loads\nfile 0 loops.py\nreduction 1\n"
                    "tensor 0 in fp32 x 128x64 -1.0 1.0 0\n"
                    "tensor 1 out fp32 out 128x64 -1.0 1.0 0\n"
                    "core 0\npool 0 sbuf 2 256 0 10 loops.py:10\n";
    for (int i = 0; i < rounds; i++) {
        s += "tile " + std::to_string(i) + " 0 fp32 128 64 0 10\n";
        s += "dma_copy 0 10 T" + std::to_string(i) + ",0,128,0,1,64,1 H0,0,128,64,1,64,1 -1\n";
        s += "dma_copy 0 11 H1,0,128,64,1,64,1 T" + std::to_string(i) + ",0,128,0,1,64,1 -1\n";
    }
    return s;
}

struct Work {
    double work = -1;
    double instrs = 0;
};

Work build(const gs_config *cfg, int rounds)
{
    char path[] = "/tmp/gs-test-nki-prog-XXXXXX";
    int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    std::string text = loop_program(rounds);
    EXPECT_EQ(write(fd, text.data(), text.size()), (ssize_t)text.size());
    close(fd);
    gs_error err;
    gs_error_clear(&err);
    gs_nki_prog *p = gs_nki_prog_load(path, &err);
    unlink(path);
    Work w;
    if (!p) {
        ADD_FAILURE() << err.message;
        return w;
    }
    const gs_kernel_def *k = gs_nki_prog_kernel(p);
    gs_suite_set_extra(k);
    gs_job_options o;
    gs_job_options_init(&o);
    o.kernel = k->name;
    o.shape = gs_nki_prog_shape(p);
    o.dtype = gs_nki_prog_dtype(p);
    gs_job_spec spec;
    gs_job *job = nullptr;
    if (gs_job_spec_from_options(&o, cfg, &spec, &err) != GS_OK ||
        gs_job_build(&spec, &job, &err) != GS_OK) {
        ADD_FAILURE() << err.message;
    } else {
        w.work = (double)gs_job_tracker_work(job);
        w.instrs = (double)gs_program_count(gs_job_program(job));
    }
    gs_job_free(job);
    gs_suite_set_extra(nullptr);
    gs_nki_prog_free(p);
    return w;
}

} // namespace

TEST(NkiProg, RepeatedTileStoreTrackerWorkPerInstructionIsFlat)
{
    gs_diags d;
    gs_diags_init(&d);
    std::string path = std::string(GS_SOURCE_DIR) + "/configs/gen3.yaml";
    gs_config *cfg = gs_config_load(path.c_str(), &d);
    gs_diags_free(&d);
    ASSERT_NE(cfg, nullptr);
    Work a = build(cfg, 500), b = build(cfg, 10000);
    gs_config_free(cfg);
    ASSERT_GT(a.work, 0);
    ASSERT_GT(b.work, 0);
    EXPECT_EQ(a.instrs, 1000);
    EXPECT_EQ(b.instrs, 20000);
    double ua = a.work / a.instrs, ub = b.work / b.instrs;
    std::printf("%.0f instructions: %.1f entries each; %.0f instructions: %.1f entries each\n",
                a.instrs, ua, b.instrs, ub);
    EXPECT_LE(ub / ua, 1.5) << "tracker work per instruction grows " << ub / ua << "x";
}
