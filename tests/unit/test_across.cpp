// compare --across: matching jobs across generations (reports/speedup.c) and the CLI
// (cli/across.c): speedups, geomeans overall and per kernel class, no-match and bad input.
#include <gtest/gtest.h>

#include "../support/cli_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "speedup.h"

namespace
{

std::string dir()
{
    static std::string d;
    if (d.empty()) {
        d = std::string(GS_BINARY_DIR) + "/test_across-" + std::to_string(getpid());
        EXPECT_EQ(std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str()), 0);
    }
    return d;
}

std::string spit(const std::string &name, const std::string &text)
{
    std::string p = dir() + "/" + name;
    std::ofstream(p) << text;
    return p;
}

CliRun gensweep(const std::string &args)
{
    return gs_test_gensweep(args, "");
}

std::string job(const std::string &gen, const std::string &kernel, const std::string &shape_json,
                const std::string &status, double t, const std::string &mode = "timing",
                const std::string &extra_id = "")
{
    std::ostringstream o;
    std::string shape_id = shape_json.substr(1, shape_json.size() - 2);
    for (auto &c : shape_id)
        if (c == ',') c = 'x';
    o << "{\"id\":\"" << gen << "/" << kernel << "/default/bf16/" << shape_id << extra_id
      << "\",\"generation\":\"" << gen << "\",\"kernel\":\"" << kernel
      << "\",\"variant\":\"default\",\"dtype\":\"bf16\",\"shape\":" << shape_json << ",\"mode\":\""
      << mode << "\",\"status\":\"" << status << "\",\"time_ns\":";
    if (std::isfinite(t))
        o << t;
    else
        o << "null";
    o << "}";
    return o.str();
}

std::string results(const std::vector<std::string> &jobs)
{
    std::string s = "{\"schema\":\"gensweep-results\",\"schema_version\":1,\"suite\":\"perf\","
                    "\"configs\":[],\"jobs\":[";
    for (size_t i = 0; i < jobs.size(); i++)
        s += (i ? "," : "") + jobs[i];
    return s + "]}\n";
}

// Two files, one generation each (the way gen3.json and gen4.json come from separate sweeps).
TEST(Across, SpeedupsAndGeomeansAcrossFiles)
{
    std::string a = spit("a.json", results({job("g3", "matmul", "[64,64,64]", "pass", 800),
                                            job("g3", "softmax", "[128,256]", "pass", 300),
                                            job("g3", "transpose", "[32,32]", "pass", 100),
                                            job("g3", "embedding", "[8,8]", "unsupported", NAN)}));
    std::string b = spit("b.json", results({job("g4", "matmul", "[64,64,64]", "pass", 100),
                                            job("g4", "softmax", "[128,256]", "pass", 600),
                                            job("g4", "transpose", "[32,32]", "pass", 50),
                                            job("g4", "embedding", "[8,8]", "pass", 10),
                                            job("g4", "matmul", "[1,1,1]", "pass", 10)}));
    CliRun r = gensweep("compare --across g3 g4 '" + a + "' '" + b + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    // 8x, 0.5x, 2x: geomean (8 * 0.5 * 2)^(1/3) = 2
    EXPECT_NE(r.out.find("geomean: 2.000x over 3 jobs (4 matched, 1 not compared; 0 only on g3, "
                         "1 only on g4)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("matmul/default/bf16/64x64x64"), std::string::npos);
    EXPECT_NE(r.out.find("8.000x"), std::string::npos);
    EXPECT_NE(r.out.find("matmul           8.000x  (1 jobs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("normalization    0.500x"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("memory           2.000x"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not compared (unsupported -> pass)"), std::string::npos) << r.out;
    // the other direction inverts every ratio
    r = gensweep("compare --across g4 g3 --quiet '" + a + "' '" + b + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("geomean: 0.500x over 3 jobs"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("64x64x64"), std::string::npos) << "--quiet prints the summary only";
}

TEST(Across, ModeFilterAndFastestOfDuplicates)
{
    std::string a =
        spit("m.json", results({job("x", "matmul", "[4,4,4]", "pass", 400, "functional"),
                                job("x", "matmul", "[8,8,8]", "pass", 400),
                                job("y", "matmul", "[4,4,4]", "pass", 100, "functional"),
                                job("y", "matmul", "[8,8,8]", "pass", 400),
                                job("y", "matmul", "[8,8,8]", "pass", 100, "timing", "/tn=128")}));
    CliRun r = gensweep("compare --across x y --quiet '" + a + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    // tuned duplicate on y: the fastest run (100) stands for the key; 4x and 4x
    EXPECT_NE(r.out.find("geomean: 4.000x over 2 jobs"), std::string::npos) << r.out;
    r = gensweep("compare --across x y --quiet --mode functional '" + a + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("geomean: 4.000x over 1 jobs"), std::string::npos) << r.out;
}

TEST(Across, NothingMatchesIsExit2)
{
    std::string a = spit("n.json", results({job("p", "matmul", "[64,64,64]", "pass", 800),
                                            job("q", "matmul", "[32,32,32]", "pass", 100)}));
    CliRun r = gensweep("compare --across p q '" + a + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("no job of p matches a job of q by kernel/variant/dtype/shape"),
              std::string::npos)
        << r.err;
    // matched, but never passed on both
    std::string b = spit("u.json", results({job("p", "attention", "[4,4]", "unsupported", NAN),
                                            job("q", "attention", "[4,4]", "pass", 100)}));
    r = gensweep("compare --across p q '" + b + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("1 jobs match, but none passed with a time on both"), std::string::npos)
        << r.err;
    // a generation in no file names the ones there
    r = gensweep("compare --across p gen9 '" + a + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("'gen9' has no job in the results (generations there: p, q)"),
              std::string::npos)
        << r.err;
}

TEST(Across, BadInputIsExit2)
{
    std::string ok = spit("ok.json", results({job("p", "matmul", "[1,1,1]", "pass", 1)}));
    std::string bad = spit("bad.json", "{\"schema\":\"gensweep-results\",\"jobs\":[");
    std::string other = spit("other.json", "{\"schema\":\"something-else\",\"jobs\":[]}");
    CliRun r = gensweep("compare --across p q '" + ok + "' '" + bad + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
    r = gensweep("compare --across p q '" + other + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("other.json"), std::string::npos) << r.err;
    r = gensweep("compare --across p '" + ok + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("two generation names"), std::string::npos) << r.err;
    r = gensweep("compare --across p p '" + ok + "'");
    EXPECT_EQ(r.rc, 2);
    r = gensweep("compare --across p q --bogus '" + ok + "'");
    EXPECT_EQ(r.rc, 2);
    r = gensweep("compare --across p q '" + dir() + "/missing.json'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
}

// Control characters in names from a results file never reach the terminal raw.
TEST(Across, EscapesControlCharacters)
{
    std::string a = spit("esc.json", results({job("p", "mat\\u001b[31mmul", "[2]", "pass", 4),
                                              job("q", "mat\\u001b[31mmul", "[2]", "pass", 2)}));
    CliRun r = gensweep("compare --across p q '" + a + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
    EXPECT_NE(r.out.find("mat?[31mmul"), std::string::npos) << r.out;
}

TEST(Speedup, KernelClasses)
{
    EXPECT_STREQ(gs_kernel_class("matmul_fp8"), "matmul");
    EXPECT_STREQ(gs_kernel_class("bmm"), "matmul");
    EXPECT_STREQ(gs_kernel_class("softmax"), "normalization");
    EXPECT_STREQ(gs_kernel_class("fused_elementwise"), "memory");
    EXPECT_STREQ(gs_kernel_class("attention"), "attention");
    EXPECT_STREQ(gs_kernel_class("something_new"), "other");
    EXPECT_STREQ(gs_kernel_class(nullptr), "other");
}

TEST(Speedup, LibraryMatchesBySortedKeys)
{
    std::string doc = results(
        {job("a", "reduce", "[9,9]", "pass", 90), job("b", "reduce", "[9,9]", "pass", 30),
         job("a", "matmul", "[2,2,2]", "fail", 5), job("b", "matmul", "[2,2,2]", "pass", 5)});
    cJSON *root = cJSON_Parse(doc.c_str());
    ASSERT_NE(root, nullptr);
    std::vector<const cJSON *> jobs;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(root, "jobs")) jobs.push_back(j);
    gs_speedup_pair p;
    ASSERT_EQ(gs_speedup_compare(jobs.data(), jobs.size(), "a", "b", nullptr, nullptr, &p), 0);
    EXPECT_EQ(p.n_match, 2u);
    EXPECT_EQ(p.n_compared, 1u);
    EXPECT_DOUBLE_EQ(p.geomean, 3.0);
    ASSERT_EQ(p.n_cls, 1);
    EXPECT_STREQ(p.cls[0].name, "normalization");
    gs_speedup_pair_free(&p);
    gs_speedup_pair_free(nullptr);
    cJSON_Delete(root);
}

// What-if steps: a knee shows per step; more of a resource making a job slower is an inversion.
TEST(Speedup, SensitivityStepsKneesAndInversions)
{
    double st[GS_SPEEDUP_MAX_STEPS];
    int nonmono = -1, inv = -1;
    // unsorted input: 4x, 0.5x, 2x, 1x; steeply bound up to 1x, flat after
    double v[] = {4, 0.5, 2, 1}, t[] = {100, 200, 100, 100};
    ASSERT_EQ(gs_sensitivity_steps(v, t, 4, -1, st, &nonmono, &inv), 3);
    EXPECT_DOUBLE_EQ(st[0], -1.0);
    EXPECT_DOUBLE_EQ(st[1], 0.0);
    EXPECT_DOUBLE_EQ(st[2], 0.0);
    EXPECT_EQ(nonmono, 0);
    EXPECT_EQ(inv, 0);
    // more SBUF made it 15 % slower from 0.5x to 1x, faster to 2x, 5 % slower to 4x: the two
    // slower steps are inversions, and time both rises and falls
    double t2[] = {100, 100, 95, 115};
    ASSERT_EQ(gs_sensitivity_steps(v, t2, 4, -1, st, &nonmono, &inv), 3);
    EXPECT_GT(st[0], 0.1);
    EXPECT_EQ(inv, 2);
    EXPECT_EQ(nonmono, 1);
    // the same numbers for a latency (more is expected slower): only the faster step inverts
    ASSERT_EQ(gs_sensitivity_steps(v, t2, 4, +1, st, &nonmono, &inv), 3);
    EXPECT_EQ(inv, 1) << "the step from 1x to 2x got faster";
    // points without a time are skipped
    double t3[] = {NAN, 200, -1, 100};
    ASSERT_EQ(gs_sensitivity_steps(v, t3, 4, 0, st, &nonmono, &inv), 1);
    EXPECT_DOUBLE_EQ(st[0], -1.0);
    EXPECT_EQ(gs_param_direction("B/ns"), -1);
    EXPECT_EQ(gs_param_direction("ns"), 1);
    EXPECT_EQ(gs_param_direction(""), 0);
}

} // namespace
