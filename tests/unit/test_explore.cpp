// tune and whatif as library calls (gs_tune_run, gs_whatif_run), without the gensweep binary:
// the sweep's jobs are forks of this test process running a registered stand-in for `run` whose
// simulated times follow a known formula, so the search's and the study's answers are known
// exactly. What is tested is the search and the study, not the simulator.
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "parse.h"
#include "gs/strbuf.h"
#include "jobspec.h"
#include "record.h"
#include "results.h"
#include "tune.h"
#include "whatif.h"
#include "worker.h"

namespace
{

const std::string kGen2 = std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml";

std::string scratch(const char *name)
{
    std::string d =
        std::string(GS_BINARY_DIR) + "/test_explore-" + name + "-" + std::to_string(getpid());
    EXPECT_EQ(std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str()), 0);
    return d;
}

// matmul: a base time per variant, tn best at 256, bufs best at 3, mb and nb never change the
// program. Any other kernel: 1e9 / the DMA bandwidth per engine (GB/s), so time goes exactly as
// bandwidth^-1.
double fake_time(const gs_job_spec &s, double *instructions)
{
    const gs_kernel_def *k = s.kernel;
    if (!strcmp(k->name, "matmul")) {
        static const double base[] = {5000, 4000, 3000, 1500, 2000}; // naive .. spmd
        int64_t tn = s.params[0], bufs = s.params[1];
        double t = base[s.variant % 5];
        t += tn ? 50.0 * std::fabs(std::log2((double)tn / 256.0)) : 500.0;
        t += bufs ? 20.0 * (double)std::llabs(bufs - 3) : 300.0;
        *instructions = 1e6 + 10.0 * (double)tn + (double)bufs;
        return t;
    }
    *instructions = 1000;
    return 1e9 / gs_config_get(s.cfg, "core.dma.bandwidth_per_engine")->v;
}

// The stand-in for the job server: the request as the sweep starts a job; writes the job's
// record.
int fake_serve(const gs_job_request *rq)
{
    if (!rq->spec || !rq->spec->cfg || !rq->spec->kernel || !rq->record) return 3;
    const gs_job_spec &s = *rq->spec;
    const gs_config *cfg = s.cfg;
    const char *record = rq->record, *kernel = s.kernel->name,
               *variant = s.kernel->variants[s.variant], *dtype = gs_dtype_name(s.dtype);
    double instructions = 0, t = fake_time(s, &instructions);
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_puts(&sb, "{\"id\":");
    gs_sb id;
    gs_sb_init(&id);
    gs_job_spec_id(&id, &s);
    gs_sb_json_str(&sb, gs_sb_cstr(&id));
    gs_sb_free(&id);
    gs_sb_printf(&sb, ",\"generation\":\"%s\",\"kernel\":\"%s\",\"variant\":\"%s\",", cfg->name,
                 kernel, variant);
    gs_sb_printf(&sb, "\"dtype\":\"%s\",\"shape\":[", dtype);
    for (int i = 0; i < s.n_dims; i++)
        gs_sb_printf(&sb, "%s%lld", i ? "," : "", (long long)s.dims[i]);
    gs_sb_puts(&sb, "],\"status\":\"pass\",\"time_ns\":");
    gs_sb_json_num(&sb, t);
    gs_sb_puts(&sb, ",\"instructions\":");
    gs_sb_json_num(&sb, instructions);
    gs_sb_puts(&sb, ",\"roofline_ratio\":2}\n");
    gs_error err;
    gs_error_clear(&err);
    int rc = gs_sb_write_file(&sb, record, &err) == GS_OK ? 0 : 3;
    gs_sb_free(&sb);
    return rc;
}

class Explore : public ::testing::Test
{
  protected:
    void SetUp() override { gs_worker_set_server(fake_serve); }
    void TearDown() override { gs_worker_set_server(nullptr); }
};

void collect(void *ctx, const char *text)
{
    static_cast<std::string *>(ctx)->append(text);
}

TEST_F(Explore, TuneTunesTheFastestVariantAndFindsTheBestParams)
{
    const std::string dir = scratch("tune");
    const std::string file = dir + "/tuning.json";
    gs_tune_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    o.sweep.jobs = 2;
    o.config = kGen2.c_str();
    o.kernel = "matmul";
    o.shape = "256x256x256";
    o.write = file.c_str();
    std::string text;
    o.progress = collect;
    o.progress_ctx = &text;
    gs_tune_result r;
    gs_diags d;
    gs_diags_init(&d);
    ASSERT_EQ(gs_tune_run(&o, &r, &d), GS_OK) << (d.count ? d.items[0].message : "") << text;
    EXPECT_EQ(d.count, 0u);
    ASSERT_TRUE(r.ok);
    EXPECT_STREQ(r.kernel->variants[r.variant], "pipelined") << text;
    EXPECT_NE(text.find(" tuning pipelined\n"), std::string::npos) << text;
    // tn and bufs change the program, mb and nb never do
    EXPECT_EQ(r.n_used, 2);
    EXPECT_TRUE(r.used[0] && r.used[1] && !r.used[2] && !r.used[3]);
    EXPECT_EQ(r.rows[0].p[0], 256);
    EXPECT_EQ(r.rows[0].p[1], 3);
    EXPECT_EQ(r.rows[0].p[2], 0);
    EXPECT_EQ(r.rows[0].p[3], 0);
    EXPECT_DOUBLE_EQ(r.rows[0].t, 1500.0);
    EXPECT_DOUBLE_EQ(r.default_ns, 1500.0 + 500.0 + 300.0);
    char pb[128];
    gs_tune_format_params(&r, r.rows[0].p, pb, sizeof pb);
    EXPECT_STREQ(pb, "tn=256 bufs=3");
    // ranked, one row per program
    for (int i = 1; i < r.n_rows; i++) {
        EXPECT_LE(r.rows[i - 1].t, r.rows[i].t);
        for (int j = 0; j < i; j++)
            EXPECT_FALSE(r.rows[i].p[0] == r.rows[j].p[0] && r.rows[i].p[1] == r.rows[j].p[1]);
    }
    // the full product ran: every (tn, bufs) pair is a row
    EXPECT_NE(text.find("combinations of the used params"), std::string::npos) << text;
    EXPECT_EQ(r.merged, 0);
    EXPECT_STREQ(r.written, file.c_str());
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_json_read_file(file.c_str(), &err);
    ASSERT_NE(doc, nullptr) << err.message;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "kernels"),
                                         "matmul"),
        "params");
    EXPECT_EQ(gs_json_num(p, "tn"), 256);
    EXPECT_EQ(gs_json_num(p, "bufs"), 3);
    cJSON_Delete(doc);
    gs_tune_result_free(&r);
    gs_diags_free(&d);
}

TEST_F(Explore, TuneBadInputIsAUsageErrorBeforeAnythingRuns)
{
    gs_tune_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    o.config = kGen2.c_str();
    o.kernel = "matmul";
    o.variant = "nope";
    gs_tune_result r;
    gs_diags d;
    gs_diags_init(&d);
    EXPECT_EQ(gs_tune_run(&o, &r, &d), GS_ERR_USAGE);
    ASSERT_EQ(d.count, 1u);
    EXPECT_STREQ(d.items[0].message, "kernel matmul has no variant 'nope'");
    EXPECT_EQ(d.items[0].file[0], '\0') << "the search's own problem: no file";
    EXPECT_EQ(r.n_rows, 0);
    gs_tune_result_free(&r);
    gs_diags_free(&d);
}

TEST_F(Explore, WhatifOverATinySweepGivesTheKnownSensitivity)
{
    const std::string out = scratch("whatif");
    gs_whatif_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    o.sweep.no_report = 1;
    o.sweep.quiet = 1;
    o.sweep.jobs = 2;
    o.sweep.kernels = "elementwise_add";
    o.config = kGen2.c_str();
    o.param[0] = "core.dma.bandwidth_per_engine";
    o.values[0] = "0.5x,1x,2x";
    o.n_params = 1;
    o.out_dir = out.c_str();
    std::string text;
    o.progress = collect;
    o.progress_ctx = &text;
    gs_whatif_result r;
    gs_diags d;
    gs_diags_init(&d);
    ASSERT_EQ(gs_whatif_run(&o, &r, &d), GS_OK) << (d.count ? d.items[0].message : "");
    EXPECT_EQ(r.failed_cells, 0);
    EXPECT_TRUE(r.written);
    EXPECT_TRUE(r.report_written);
    EXPECT_NE(text.find("== core.dma.bandwidth_per_engine = 0.5x ==\n"), std::string::npos);
    ASSERT_NE(r.doc, nullptr);
    EXPECT_STREQ(gs_json_str(r.doc, "schema"), "gensweep-whatif");
    EXPECT_STREQ(gs_json_str(r.doc, "param"), "core.dma.bandwidth_per_engine");
    int n = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r.doc, "jobs"))
    {
        // time ~ bandwidth^-1 in every job: sensitivity -1 end to end and per step
        EXPECT_NEAR(gs_json_num(j, "sensitivity"), -1.0, 1e-12) << gs_json_str(j, "id");
        const cJSON *s;
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(j, "steps"))
            EXPECT_NEAR(s->valuedouble, -1.0, 1e-12);
        EXPECT_EQ(gs_json_num(j, "inversions"), 0);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "time_ns");
        ASSERT_EQ(cJSON_GetArraySize(t), 3);
        EXPECT_NEAR(cJSON_GetArrayItem(t, 0)->valuedouble,
                    2.0 * cJSON_GetArrayItem(t, 1)->valuedouble, 1e-6);
        n++;
    }
    EXPECT_GT(n, 0);
    // the document returned is the file written
    gs_error err;
    gs_error_clear(&err);
    cJSON *file = gs_json_read_file(r.path, &err);
    ASSERT_NE(file, nullptr) << err.message;
    EXPECT_TRUE(cJSON_Compare(file, r.doc, 1));
    cJSON_Delete(file);
    gs_whatif_result_free(&r);
    gs_diags_free(&d);
}

TEST_F(Explore, WhatifConfigProblemsKeepTheirPlace)
{
    gs_whatif_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    o.config = kGen2.c_str();
    o.param[0] = "core.sbuf";
    o.values[0] = "1x,2q";
    o.n_params = 1;
    gs_whatif_result r;
    gs_diags d;
    gs_diags_init(&d);
    EXPECT_EQ(gs_whatif_run(&o, &r, &d), GS_ERR_USAGE);
    ASSERT_GE(d.count, 1u);
    EXPECT_STREQ(d.items[0].file, "--set");
    EXPECT_NE(std::string(d.items[0].message).find("unknown unit 'q'"), std::string::npos);
    EXPECT_EQ(r.doc, nullptr);
    gs_whatif_result_free(&r);
    gs_diags_free(&d);
}

} // namespace
