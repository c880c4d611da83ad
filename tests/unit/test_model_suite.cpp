// `gensweep sweep --suite model` end to end on gen2 and gen3 with the tiny workloads of
// tests/workloads/: workloads.json (each layer total is the sum of its rows, each row the fastest
// passing variant of its jobs in results.json x its count, a step that does not fit gen2 listed
// with its status), a job shared by two workloads run once, the report's model-layers section
// (the workload, the speedup computed from workloads.json, the dominant steps), usage errors,
// and Ctrl-C: workloads.json is still written, the steps not run marked missing.
#include <gtest/gtest.h>

#include "../support/cli_run.h"
#include "../support/proc_wait.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace
{

const std::string kSrc = GS_SOURCE_DIR;
const std::string kFiles = "tests/workloads/tiny-decode.yaml,tests/workloads/tiny-prefill.yaml";

std::string tmpdir(const std::string &name)
{
    std::string d =
        std::string(GS_BINARY_DIR) + "/test_model_suite-" + name + "-" + std::to_string(getpid());
    EXPECT_EQ(std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str()), 0);
    return d;
}

struct Doc {
    cJSON *d;
    explicit Doc(const std::string &path) : d(cJSON_Parse(gs_test_slurp(path).c_str())) {}
    ~Doc() { cJSON_Delete(d); }
    Doc(const Doc &) = delete;
    Doc &operator=(const Doc &) = delete;
};

const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

std::string str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

const cJSON *by(const cJSON *arr, const char *key, const std::string &value)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, arr)
    {
        if (str(x, key) == value) return x;
    }
    return nullptr;
}

// The one model sweep every test of the suite reads (it runs once: about a second).
struct ModelSweep {
    std::string dir;
    CliRun run;
};

const ModelSweep &model_sweep()
{
    static ModelSweep s;
    if (s.dir.empty()) {
        s.dir = tmpdir("sweep");
        s.run = gs_test_gensweep("sweep --suite model --workloads " + kFiles +
                                 " --configs configs/gen2.yaml configs/gen3.yaml -j 2 --out '" +
                                 s.dir + "'");
    }
    return s;
}

TEST(ModelSuite, WorkloadsJsonRowsAreTheFastestJobsAndAddUp)
{
    const ModelSweep &s = model_sweep();
    // does-not-fit is a clean status: the sweep passes, the layer says it is incomplete
    ASSERT_EQ(s.run.rc, 0) << s.run.out << s.run.err;
    EXPECT_NE(s.run.out.find("sweep: 28 jobs (2 configs, suite model"), std::string::npos)
        << s.run.out;
    EXPECT_NE(s.run.out.find("incomplete: 1 of 3 steps could not run: wide (does-not-fit)"),
              std::string::npos)
        << s.run.out;
    Doc wl(s.dir + "/workloads.json"), res(s.dir + "/results.json");
    ASSERT_NE(wl.d, nullptr);
    ASSERT_NE(res.d, nullptr);
    EXPECT_EQ(str(wl.d, "schema"), "gensweep-workloads");
    EXPECT_EQ(num(wl.d, "schema_version"), 1);
    EXPECT_EQ(str(res.d, "suite"), "model");
    EXPECT_TRUE(cJSON_IsFalse(get(wl.d, "complete"))) << "a step did not fit gen2";
    EXPECT_TRUE(cJSON_IsFalse(get(wl.d, "interrupted")));
    const cJSON *gens = get(wl.d, "generations");
    ASSERT_EQ(cJSON_GetArraySize(gens), 2);
    EXPECT_STREQ(cJSON_GetArrayItem(gens, 0)->valuestring, "gen2");
    EXPECT_STREQ(cJSON_GetArrayItem(gens, 1)->valuestring, "gen3");
    const cJSON *jobs = get(res.d, "jobs");
    const cJSON *wls = get(wl.d, "workloads");
    ASSERT_EQ(cJSON_GetArraySize(wls), 2);
    int rows_checked = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, wls)
    {
        const cJSON *r;
        ASSERT_EQ(cJSON_GetArraySize(get(w, "results")), 2) << str(w, "workload");
        cJSON_ArrayForEach(r, get(w, "results"))
        {
            const std::string g = str(r, "generation");
            double sum = 0;
            int not_run = 0;
            const cJSON *row;
            cJSON_ArrayForEach(row, get(r, "rows"))
            {
                // the row's time: the fastest passing job of its kernel and shape on this
                // generation in results.json, times its count
                std::string shape;
                const cJSON *d;
                cJSON_ArrayForEach(d, get(row, "shape"))
                {
                    shape += (shape.empty() ? "" : "x") + std::to_string((long long)d->valuedouble);
                }
                const std::string prefix = g + "/" + str(row, "kernel") + "/";
                double best = NAN;
                int found = 0;
                const cJSON *j;
                cJSON_ArrayForEach(j, jobs)
                {
                    const std::string id = str(j, "id");
                    if (id.rfind(prefix, 0) != 0 || id.size() < shape.size() + 1 ||
                        id.compare(id.size() - shape.size() - 1, std::string::npos, "/" + shape) !=
                            0)
                        continue;
                    found++;
                    if (str(j, "status") == "pass" && !(num(j, "time_ns") >= best))
                        best = num(j, "time_ns");
                }
                EXPECT_GT(found, 0) << prefix << shape << ": its jobs are in results.json";
                if (std::isnan(best)) {
                    EXPECT_NE(str(row, "status"), "pass");
                    EXPECT_TRUE(cJSON_IsNull(get(row, "time_ns")));
                    EXPECT_TRUE(cJSON_IsNull(get(row, "variant")));
                    not_run++;
                } else {
                    EXPECT_EQ(str(row, "status"), "pass");
                    EXPECT_DOUBLE_EQ(num(row, "time_ns"), best * num(row, "count"))
                        << prefix << shape;
                    sum += num(row, "time_ns");
                }
                rows_checked++;
            }
            EXPECT_NEAR(num(r, "time_ns"), sum, 1e-9 * sum) << str(w, "workload") << " " << g;
            EXPECT_EQ(num(r, "steps_not_run"), not_run);
            EXPECT_EQ(cJSON_IsTrue(get(r, "complete")), not_run == 0);
        }
    }
    EXPECT_EQ(rows_checked, 12);
    // the step that does not fit gen2 is there with its status and reason, and runs on gen3
    const cJSON *dec = by(wls, "workload", "tiny-decode");
    ASSERT_NE(dec, nullptr);
    const cJSON *on2 = by(get(dec, "results"), "generation", "gen2");
    const cJSON *on3 = by(get(dec, "results"), "generation", "gen3");
    ASSERT_TRUE(on2 && on3);
    const cJSON *wide2 = by(get(on2, "rows"), "step", "wide");
    const cJSON *wide3 = by(get(on3, "rows"), "step", "wide");
    ASSERT_TRUE(wide2 && wide3);
    EXPECT_EQ(str(wide2, "status"), "does-not-fit");
    EXPECT_NE(str(wide2, "reason").find("does not fit"), std::string::npos);
    EXPECT_EQ(str(wide3, "status"), "pass");
    EXPECT_TRUE(cJSON_IsNull(get(on2, "tokens_per_s_per_layer")));
    EXPECT_NEAR(num(on3, "tokens_per_s_per_layer"), 64 * 1e9 / num(on3, "time_ns"), 1e-3);
    // the norm step of both workloads is one job per generation
    int shared = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        shared += str(j, "id") == "gen2/rmsnorm/default/bf16/64x256";
    }
    EXPECT_EQ(shared, 1);
    EXPECT_EQ(num(res.d, "planned_jobs"), cJSON_GetArraySize(jobs));
}

// The models section of the sweep's report: each workload, the speedup of the complete one as
// workloads.json's numbers give it, the reason the other has none, the top step per generation.
TEST(ModelSuite, ReportModelsSectionFromTheJson)
{
    const ModelSweep &s = model_sweep();
    ASSERT_EQ(s.run.rc, 0) << s.run.out << s.run.err;
    const std::string html = gs_test_slurp(s.dir + "/report.html");
    const size_t at = html.find("<section id=\"models\">");
    ASSERT_NE(at, std::string::npos);
    const std::string sec = html.substr(at, html.find("</section>", at) - at);
    EXPECT_NE(html.find("href=\"#models\""), std::string::npos);
    EXPECT_NE(sec.find("<td>tiny-prefill</td>"), std::string::npos);
    EXPECT_NE(sec.find("<td>tiny-decode</td>"), std::string::npos);
    EXPECT_NE(sec.find("gen3 vs gen2"), std::string::npos);
    Doc wl(s.dir + "/workloads.json");
    ASSERT_NE(wl.d, nullptr);
    const cJSON *pre = by(get(wl.d, "workloads"), "workload", "tiny-prefill");
    ASSERT_NE(pre, nullptr);
    const cJSON *p2 = by(get(pre, "results"), "generation", "gen2");
    const cJSON *p3 = by(get(pre, "results"), "generation", "gen3");
    ASSERT_TRUE(p2 && p3);
    char sp[64];
    std::snprintf(sp, sizeof sp, ">%.3g×</td>", num(p2, "time_ns") / num(p3, "time_ns"));
    EXPECT_NE(sec.find(sp), std::string::npos) << sp << "\n" << sec;
    // the dominant step on each generation, first in its cell: the row with the largest share,
    // with its kernel
    for (const cJSON *r : {p2, p3}) {
        const cJSON *top = nullptr, *row;
        cJSON_ArrayForEach(row, get(r, "rows"))
        {
            if (!top || num(row, "share") > num(top, "share")) top = row;
        }
        ASSERT_NE(top, nullptr);
        char want[160];
        std::snprintf(want, sizeof want, "<td><span class=\"step\">%s (%s) %.0f%%</span>",
                      str(top, "step").c_str(), str(top, "kernel").c_str(),
                      100.0 * num(top, "share"));
        EXPECT_NE(sec.find(want), std::string::npos) << want << "\n" << sec;
    }
    // tiny-decode has no total on gen2: no speedup, the reason instead
    EXPECT_NE(sec.find("gen2: could not run wide (does-not-fit)"), std::string::npos) << sec;
    EXPECT_NE(sec.find("tok/s"), std::string::npos);
    EXPECT_EQ(sec.find("nan"), std::string::npos);
    EXPECT_EQ(sec.find("inf"), std::string::npos);
}

TEST(ModelSuite, UsageErrors)
{
    const std::string d = tmpdir("usage");
    CliRun r = gs_test_gensweep("sweep --workloads " + kFiles + " --out '" + d + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--workloads needs --suite model"), std::string::npos) << r.err;
    r = gs_test_gensweep("sweep --suite model --workloads " + kFiles + " --shard 1/2 --out '" + d +
                         "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--suite model takes no --shard"), std::string::npos) << r.err;
    r = gs_test_gensweep("sweep --suite model --workloads tests/workloads/none.yaml --out '" + d +
                         "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("tests/workloads/none.yaml"), std::string::npos) << r.err;
    // the same workload twice
    r = gs_test_gensweep("sweep --suite model --workloads "
                         "tests/workloads/tiny-decode.yaml,tests/workloads/tiny-decode.yaml "
                         "--out '" +
                         d + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("both workload 'tiny-decode'"), std::string::npos) << r.err;
}

// Ctrl-C while a step hangs: results.json and workloads.json are both written, incomplete, the
// step that did not run marked missing with the reason, the one that ran kept.
TEST(ModelSuite, SigintStillWritesWorkloadsJson)
{
    const std::string d = tmpdir("sigint");
    const std::string wf = d + "/hang.yaml";
    std::ofstream(wf) << "name: hang\nphase: prefill\ndims:\n  hidden: 256\n  seq: 64\n"
                         "steps:\n  - name: norm\n    kernel: rmsnorm\n    shape: [seq, hidden]\n"
                         "  - name: stuck\n    kernel: fault_hang\n    shape: [8, 8]\n";
    const std::string out = d + "/out", progress = d + "/progress.txt";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (chdir(kSrc.c_str()) != 0) _exit(99);
        if (!freopen(progress.c_str(), "w", stdout)) _exit(97);
        execl(GS_FAULTS_BIN, GS_FAULTS_BIN, "sweep", "--suite", "model", "--workloads", wf.c_str(),
              "--configs", "configs/gen2.yaml", "--timeout", "120", "-j", "1", "--out", out.c_str(),
              (char *)nullptr);
        _exit(98);
    }
    // jobs run in the order the workloads added them (-j 1): norm first, then the hang runs
    // until interrupted. Waiting for norm's progress line ("[1/2]"), not for a guess of its
    // time, keeps a loaded machine from interrupting it too (the bound is only for a sweep that
    // never gets there).
    EXPECT_TRUE(gs_test_all_but_last_job_done(pid, progress, 120)) << gs_test_slurp(progress);
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 1);
    Doc res(out + "/results.json"), wl(out + "/workloads.json");
    ASSERT_NE(res.d, nullptr);
    ASSERT_NE(wl.d, nullptr) << "workloads.json written on Ctrl-C";
    EXPECT_TRUE(cJSON_IsTrue(get(res.d, "interrupted")));
    EXPECT_TRUE(cJSON_IsTrue(get(wl.d, "interrupted")));
    EXPECT_TRUE(cJSON_IsFalse(get(wl.d, "complete")));
    const cJSON *r =
        cJSON_GetArrayItem(get(cJSON_GetArrayItem(get(wl.d, "workloads"), 0), "results"), 0);
    const cJSON *norm = by(get(r, "rows"), "step", "norm");
    const cJSON *stuck = by(get(r, "rows"), "step", "stuck");
    ASSERT_TRUE(norm && stuck);
    EXPECT_EQ(str(norm, "status"), "pass");
    EXPECT_EQ(str(stuck, "status"), "missing");
    EXPECT_EQ(str(stuck, "reason"), "not run: the sweep was interrupted");
    EXPECT_DOUBLE_EQ(num(r, "time_ns"), num(norm, "time_ns"));
}

} // namespace
