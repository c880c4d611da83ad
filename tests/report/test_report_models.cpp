// The report's model-layers section from workloads.json documents in memory (label "report"):
// absent input says so; speedups from the layer totals, pairs of consecutive generations or
// against --base-gen, no speedup for an incomplete layer; hostile strings escaped and
// wrong-typed fields rendered without a number that is not one. (The section on a real model
// sweep's output: tests/unit/test_model_suite.cpp.)
#include <gtest/gtest.h>

#include <cstring>
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

// Hostile strings in a valid workloads.json are escaped.
TEST(ReportModels, HostileStringsAreEscaped)
{
    std::string doc = kWorkloads;
    for (const char *from : {"\"layer-x\"", "\"mlp\""}) {
        const size_t at = doc.find(from);
        ASSERT_NE(at, std::string::npos);
        doc.replace(at, strlen(from),
                    from[1] == 'l' ? "\"<script>alert(1)</script>\"" : "\"<i>s\"");
    }
    const std::string s = section(doc.c_str());
    EXPECT_EQ(s.find("<script>"), std::string::npos);
    EXPECT_NE(s.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << s;
    EXPECT_EQ(s.find("<i>s"), std::string::npos);
    EXPECT_EQ(s.find("nan"), std::string::npos) << s;
}

// The message of rendering workloads (next to results) that must be refused; "" when rendered.
std::string refused(const std::string &workloads, const char *results = kResults)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    gs_error_clear(&err);
    const char *texts[] = {workloads.c_str()};
    const char *names[] = {"wl.json"};
    gs_report_opts o = {nullptr, 0, names, texts, 1};
    gs_status st = gs_report_render(results, "results", nullptr, nullptr, &o, &sb, &err);
    gs_sb_free(&sb);
    if (st == GS_OK) return "";
    EXPECT_EQ(st, GS_ERR_INVALID) << err.message;
    EXPECT_STREQ(err.file, "wl.json");
    return err.message;
}

std::string replaced(const std::string &from, const std::string &to)
{
    std::string doc = kWorkloads;
    const size_t at = doc.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) doc.replace(at, from.size(), to);
    return doc;
}

// A malformed or foreign workloads.json was rendered with exit 0: a layer of "1e+299 s", an
// "inf%" share, wrong-typed fields shown as blanks, full speedups beside an interrupted
// results.json. Each is refused now, naming the file (err.file) and the field.
TEST(ReportModels, MalformedOrForeignWorkloadsAreRefused)
{
    EXPECT_EQ(refused(kWorkloads), "");
    struct Case {
        std::string doc;
        const char *field;
    } cases[] = {
        {replaced("\"time_ns\": 3000", "\"time_ns\": 1e308"),
         "workloads[0].results[0].time_ns: must be the sum of its rows' times (3000 ns)"},
        {replaced("\"share\": 0.8", "\"share\": 1e400"),
         "workloads[0].results[0].rows[0].share: must be a number in 0 .. 1"},
        {replaced("\"share\": 0.8", "\"share\": \"big\""),
         "workloads[0].results[0].rows[0].share: must be a number in 0 .. 1"},
        {replaced("\"time_ns\": 2400", "\"time_ns\": -5"),
         "workloads[0].results[0].rows[0].time_ns: must be a positive number"},
        {replaced("\"status\": \"does-not-fit\"", "\"status\": \"great\""),
         "workloads[0].results[2].rows[1].status: 'great' is not a job status"},
        {replaced("\"phase\": \"decode\"", "\"phase\": 3"), "workloads[0].phase: must be"},
        {replaced("\"rows\": [", "\"rows\": \"none\", \"x\": ["), "workloads[0].results[0].rows"},
        {replaced("{\"generation\": \"c\", \"time_ns\": 500, \"complete\": false",
                  "{\"generation\": \"c\", \"time_ns\": 500, \"complete\": true"),
         "workloads[0].results[2].complete: true, but 1 of its steps did not run"},
        {replaced("\"generations\": [\"a\", \"b\", \"c\"]",
                  "\"generations\": [\"a\", \"b\", \"z\"]"),
         "generations[2]: 'z' is not a generation of the results file: not the same sweep"},
        {replaced("\"complete\": false,", "\"complete\": true,"),
         "\"complete\": true, but a layer did not run every step"},
        {replaced("\"complete\": false,", "\"complete\": \"no\","), "\"complete\" and"},
    };
    for (const Case &c : cases)
        EXPECT_NE(refused(c.doc).find(c.field), std::string::npos) << c.field;
    // an uninterrupted workloads.json beside interrupted results is another sweep's
    const char *interrupted =
        "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"interrupted\": true, "
        "\"complete\": false, \"configs\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": "
        "\"c\"}], \"jobs\": []}";
    EXPECT_NE(refused(kWorkloads, interrupted)
                  .find("\"interrupted\": false, but the results file was interrupted"),
              std::string::npos);
}

} // namespace
