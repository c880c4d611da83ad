// The report's model-layers section from workloads.json documents in memory (label "report"):
// absent input says so; speedups from the layer totals, pairs of consecutive generations or
// against --base-gen, no speedup for an incomplete layer; hostile strings escaped and
// wrong-typed fields rendered without a number that is not one. (The section on a real model
// sweep's output: tests/unit/test_model_suite.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "report.h"

namespace
{

const char kResults[] = "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"configs\": "
                        "[{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}], \"jobs\": []}";

// A layer of two steps per generation; c's second step did not fit.
const char kWorkloads[] =
    "{\"schema\": \"gensweep-workloads\", \"schema_version\": 1, \"complete\": false,"
    " \"interrupted\": false, \"generations\": [\"a\", \"b\", \"c\"], \"workloads\": [{"
    "\"workload\": \"layer-x\", \"phase\": \"decode\", \"batch\": 2, \"results\": ["
    "{\"generation\": \"a\", \"time_ns\": 3000, \"complete\": true,"
    " \"tokens_per_s_per_layer\": 666666.7, \"rows\": ["
    "  {\"step\": \"mlp\", \"kernel\": \"swiglu_mlp\", \"status\": \"pass\", \"time_ns\": 2400,"
    "   \"share\": 0.8, \"shape\": [1, 2]},"
    "  {\"step\": \"norm\", \"kernel\": \"rmsnorm\", \"status\": \"pass\", \"time_ns\": 600,"
    "   \"share\": 0.2, \"shape\": [1, 2]}]},"
    "{\"generation\": \"b\", \"time_ns\": 1000, \"complete\": true,"
    " \"tokens_per_s_per_layer\": 2000000, \"rows\": ["
    "  {\"step\": \"mlp\", \"kernel\": \"swiglu_mlp\", \"status\": \"pass\", \"time_ns\": 400,"
    "   \"share\": 0.4, \"shape\": [1, 2]},"
    "  {\"step\": \"norm\", \"kernel\": \"rmsnorm\", \"status\": \"pass\", \"time_ns\": 600,"
    "   \"share\": 0.6, \"shape\": [1, 2]}]},"
    "{\"generation\": \"c\", \"time_ns\": 500, \"complete\": false, \"steps_not_run\": 1,"
    " \"tokens_per_s_per_layer\": null, \"rows\": ["
    "  {\"step\": \"mlp\", \"kernel\": \"swiglu_mlp\", \"status\": \"pass\", \"time_ns\": 500,"
    "   \"share\": 1, \"shape\": [1, 2]},"
    "  {\"step\": \"norm\", \"kernel\": \"rmsnorm\", \"status\": \"does-not-fit\","
    "   \"reason\": \"too wide\", \"time_ns\": null, \"shape\": [1, 2]}]}]}]}";

std::string section(const char *workloads, const char *base_gen = nullptr)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    gs_error_clear(&err);
    const char *texts[] = {workloads};
    const char *names[] = {"workloads.json"};
    gs_report_opts o = {base_gen, 0, names, texts, workloads ? 1 : 0};
    EXPECT_EQ(gs_report_render(kResults, "results", nullptr, nullptr, &o, &sb, &err), GS_OK)
        << err.message;
    std::string html = gs_sb_cstr(&sb);
    gs_sb_free(&sb);
    const size_t at = html.find("<section id=\"models\">");
    EXPECT_NE(at, std::string::npos);
    if (at == std::string::npos) return "";
    return html.substr(at, html.find("</section>", at) - at);
}

TEST(ReportModels, AbsentSaysSo)
{
    EXPECT_NE(section(nullptr).find("No model-level workload results given"), std::string::npos);
}

TEST(ReportModels, SpeedupsPerConsecutivePair)
{
    const std::string s = section(kWorkloads);
    EXPECT_NE(s.find("<h3 class=\"pair\">b vs a</h3>"), std::string::npos) << s;
    EXPECT_NE(s.find("<h3 class=\"pair\">c vs b</h3>"), std::string::npos) << s;
    EXPECT_EQ(s.find("c vs a"), std::string::npos) << s;
    EXPECT_NE(s.find(">3×</td>"), std::string::npos) << "3000 ns / 1000 ns\n" << s;
    // decode: tokens/s of one layer on both sides, units shown
    EXPECT_NE(s.find("6.667e+05 tok/s &rarr; 2e+06 tok/s"), std::string::npos) << s;
    // the dominant step first: mlp on a, norm on b
    EXPECT_NE(s.find("<td><span class=\"step\">mlp (swiglu_mlp) 80%</span>"), std::string::npos);
    EXPECT_NE(s.find("<td><span class=\"step\">norm (rmsnorm) 60%</span>"), std::string::npos);
    // c is incomplete: no speedup against b, the step and its status instead
    EXPECT_NE(s.find("c: could not run norm (does-not-fit)"), std::string::npos) << s;
    EXPECT_EQ(s.find(">2×</td>"), std::string::npos) << "no speedup from an incomplete layer";
    EXPECT_NE(s.find("3 µs"), std::string::npos) << "times carry units";
    EXPECT_EQ(s.find("nan"), std::string::npos);
}

TEST(ReportModels, AgainstTheBaseGeneration)
{
    const std::string s = section(kWorkloads, "a");
    EXPECT_NE(s.find("b vs a"), std::string::npos);
    EXPECT_NE(s.find("c vs a"), std::string::npos);
    EXPECT_EQ(s.find("c vs b"), std::string::npos);
}

TEST(ReportModels, HostileAndWrongTypedFields)
{
    const char *doc =
        "{\"schema\": \"gensweep-workloads\", \"schema_version\": 1, \"generations\": [\"a\", 7,"
        " \"<b>x\"], \"workloads\": [{\"workload\": \"<script>alert(1)</script>\", \"phase\": 3,"
        " \"results\": [{\"generation\": \"a\", \"time_ns\": \"fast\", \"complete\": true,"
        " \"rows\": \"none\"}, {\"generation\": \"<b>x\", \"time_ns\": -5, \"complete\": true,"
        " \"rows\": [{\"step\": \"<i>s\", \"share\": \"big\", \"time_ns\": 1e400}, 5]}]},"
        " 4, {\"results\": 1}]}";
    const std::string s = section(doc);
    EXPECT_EQ(s.find("<script>"), std::string::npos);
    EXPECT_NE(s.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << s;
    EXPECT_EQ(s.find("<b>x"), std::string::npos);
    EXPECT_EQ(s.find("<i>s"), std::string::npos);
    EXPECT_EQ(s.find("nan"), std::string::npos) << s;
    EXPECT_EQ(s.find("inf"), std::string::npos) << s;
    EXPECT_EQ(s.find("×</td>"), std::string::npos) << "no layer total, no speedup";
}

} // namespace
