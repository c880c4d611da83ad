// Structure tests of the HTML report (label "report"): generated from the committed fixtures in
// tests/report/ (regenerate with make_fixtures.py), checked for well-formedness with Debian's
// tidy, every section, escaping of hostile strings, no external URLs, the size limit on a large
// synthetic sweep, and clear errors for missing or invalid results files.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "report.h"

namespace
{

const std::string kFixtures = std::string(GS_SOURCE_DIR) + "/tests/report/";
const std::string kOut = std::string(GS_BINARY_DIR) + "/tests/report_out/";
const char *const kSections[] = {"verdict",     "heatmap",     "rooflines", "summary",
                                 "generations", "portability", "engines",   "timelines",
                                 "correctness", "baseline",    "variants",  "whatif"};

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void spit(const std::string &path, const std::string &text)
{
    std::ofstream f(path, std::ios::binary);
    f << text;
}

std::string out_path(const std::string &name)
{
    mkdir(kOut.c_str(), 0777);
    return kOut + name;
}

// Writes the report for a fixture (and optional baseline) and returns its text.
// what-if and tuning files (the fixtures' own) are added unless `extra` is false.
std::string render(const std::string &fixture, const std::string &baseline = "",
                   const std::string &name = "", const std::string &whatif = "whatif.json")
{
    std::string out = out_path(name.empty() ? fixture + ".html" : name);
    gs_error err;
    gs_error_clear(&err);
    std::string b = baseline.empty() ? "" : kFixtures + baseline;
    std::string w = kFixtures + whatif, t = kFixtures + "tuning-gen2.json";
    const char *extra[] = {w.c_str(), t.c_str()};
    gs_report_opts o = {nullptr, 0, extra, nullptr, whatif.empty() ? 0 : 2};
    gs_status st = gs_report_write_opts((kFixtures + fixture).c_str(),
                                        b.empty() ? nullptr : b.c_str(), out.c_str(), &o, &err);
    EXPECT_EQ(st, GS_OK) << err.file << ": " << err.message;
    return slurp(out);
}

// Runs a shell command, returns its exit status and output.
int run(const std::string &cmd, std::string *output)
{
    FILE *p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    output->clear();
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        output->append(buf, n);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool have_tidy()
{
    std::string out;
    return run("tidy -v", &out) == 0;
}

// Every start tag outside <script>/<style> content: name and raw attribute text.
struct Tag {
    std::string name;
    std::vector<std::pair<std::string, std::string>> attrs;
};

std::vector<Tag> tags(const std::string &html)
{
    std::vector<Tag> out;
    size_t i = 0;
    while ((i = html.find('<', i)) != std::string::npos) {
        size_t j = i + 1;
        if (j < html.size() && (html[j] == '/' || html[j] == '!')) {
            i = j;
            continue;
        }
        Tag t;
        while (j < html.size() &&
               (isalnum((unsigned char)html[j]) || html[j] == '-' || html[j] == ':'))
            t.name += (char)tolower(html[j++]);
        // attributes: name[="value"]; values never contain a raw '"' (they are escaped)
        while (j < html.size() && html[j] != '>') {
            while (j < html.size() && isspace((unsigned char)html[j]))
                j++;
            std::string an;
            while (j < html.size() && !isspace((unsigned char)html[j]) && html[j] != '=' &&
                   html[j] != '>' && html[j] != '/')
                an += (char)tolower(html[j++]);
            std::string av;
            if (j < html.size() && html[j] == '=') {
                j++;
                if (html[j] == '"') {
                    size_t e = html.find('"', j + 1);
                    av = html.substr(j + 1, e - j - 1);
                    j = e + 1;
                } else {
                    while (j < html.size() && !isspace((unsigned char)html[j]) && html[j] != '>')
                        av += html[j++];
                }
            }
            if (!an.empty()) t.attrs.emplace_back(an, av);
            if (j < html.size() && html[j] == '/') j++;
        }
        out.push_back(t);
        if (t.name == "script" || t.name == "style") {
            size_t e = html.find("</" + t.name, j);
            i = e == std::string::npos ? html.size() : e;
        } else {
            i = j;
        }
    }
    return out;
}

size_t count(const std::string &s, const std::string &what)
{
    size_t n = 0;
    for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1))
        n++;
    return n;
}

// The checks every report must pass whatever its input.
void expect_self_contained(const std::string &html)
{
    for (const Tag &t : tags(html)) {
        for (const auto &a : t.attrs) {
            const std::string &n = a.first, &v = a.second;
            EXPECT_FALSE(n == "src" || n == "srcset" || n == "action" || n == "formaction" ||
                         n == "xlink:href" || n == "poster" || n == "background")
                << "<" << t.name << " " << n << "=" << v << "> loads a file";
            EXPECT_FALSE(n.rfind("on", 0) == 0) << "inline event handler <" << t.name << " " << n;
            if (n == "href") {
                bool anchor = !v.empty() && v[0] == '#';
                bool relative = !v.empty() && v.find(':') == std::string::npos &&
                                v.find("//") == std::string::npos && v[0] != '/' &&
                                v.find("..") == std::string::npos;
                EXPECT_TRUE(anchor || (t.name == "a" && relative)) << "external link " << v;
            }
            if (n == "style") {
                EXPECT_EQ(v.find("url("), std::string::npos) << v;
            }
        }
        EXPECT_NE(t.name, "link") << "external stylesheet or resource";
        EXPECT_NE(t.name, "iframe");
        EXPECT_NE(t.name, "img");
        EXPECT_NE(t.name, "object");
        EXPECT_NE(t.name, "embed");
    }
    EXPECT_EQ(count(html, "<script"), 1u) << "only the report's own inline script";
    EXPECT_EQ(html.find("<script src"), std::string::npos);
    EXPECT_EQ(html.find("@import"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
    // the script and the stylesheet never name a URL
    size_t s0 = html.find("<script>"), s1 = html.find("</script>");
    ASSERT_NE(s0, std::string::npos);
    std::string script = html.substr(s0, s1 - s0);
    EXPECT_EQ(script.find("http"), std::string::npos);
    EXPECT_EQ(script.find("fetch("), std::string::npos);
    EXPECT_EQ(script.find("XMLHttpRequest"), std::string::npos);
    // the ready signal the browser test waits for (tests/browser/report_browser_test.mjs)
    EXPECT_NE(script.find("data-gs-ready"), std::string::npos);
}

void expect_tidy_clean(const std::string &path)
{
    std::string out;
    int rc = run("tidy -e -q '" + path + "'", &out);
    // tidy: 0 clean, 1 warnings only, 2 errors
    EXPECT_LT(rc, 2) << "tidy -e -q " << path << ":\n" << out;
    EXPECT_EQ(out.find("Error:"), std::string::npos) << out;
}

TEST(Report, CheckFixtureHasEverySectionInOrder)
{
    std::string html = render("check.json");
    size_t last = 0;
    for (const char *s : kSections) {
        size_t at = html.find(std::string("<section id=\"") + s + "\">");
        ASSERT_NE(at, std::string::npos) << "section " << s;
        EXPECT_GT(at, last) << "section " << s << " out of order";
        last = at;
        EXPECT_NE(html.find(std::string("href=\"#") + s + "\""), std::string::npos)
            << "nav link to " << s;
    }
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST(Report, CheckFixtureContent)
{
    std::string html = render("check.json");
    // summary: tool, counts, configs
    EXPECT_NE(html.find("gensweep 0.1.0"), std::string::npos);
    EXPECT_NE(html.find("<h3 id=\"failures\">Failures (0)</h3>"), std::string::npos);
    // generations: params with sources and assumed marking, differing rows highlighted
    EXPECT_NE(html.find("<code>engines.tensor.clock</code>"), std::string::npos);
    EXPECT_NE(html.find("class=\"assumed\""), std::string::npos);
    EXPECT_NE(html.find("<tr class=\"diff\"><th scope=\"row\"><code>chip.cores</code>"),
              std::string::npos);
    EXPECT_NE(html.find("peak bf16 TFLOP/s per core"), std::string::npos);
    // portability: gen1 fp8 is unsupported with its reason in the tooltip
    EXPECT_NE(html.find("unsupported: fp8_e4m3 matmul"), std::string::npos);
    EXPECT_NE(html.find("class=\"cell unsupported\""), std::string::npos);
    // verdict first: gen2 vs gen1 geomean, the same number `compare --across gen1 gen2` gives
    // for this fixture (1.452x over 6 jobs), with what changed between them
    EXPECT_LT(html.find("id=\"verdict\""), html.find("id=\"summary\""));
    EXPECT_NE(html.find("gen2 vs gen1: <b class=\"big\">1.45×</b> faster"), std::string::npos);
    EXPECT_NE(html.find("over 6 jobs that passed on both"), std::string::npos);
    EXPECT_NE(html.find("<b>What changed</b>: <code>"), std::string::npos);
    EXPECT_NE(html.find("These results have no perf-suite"), std::string::npos);
    // heatmap: pairwise, gen1 is the base, fp8 first runs on gen2 (gen1 unsupported) and is
    // not blanked on gen3
    EXPECT_NE(html.find(">base</td>"), std::string::npos);
    EXPECT_NE(html.find(">first</td>"), std::string::npos);
    EXPECT_NE(html.find("2.68×"), std::string::npos) << "matmul 200x300x700 gen1 -> gen2";
    // per-kernel rooflines: one point per generation with the ceilings listed
    EXPECT_NE(html.find("<figure class=\"roof\">"), std::string::npos);
    EXPECT_NE(html.find(">FLOP/byte</text>"), std::string::npos);
    EXPECT_NE(html.find("<ul class=\"ceils\">"), std::string::npos);
    // engines: what bounds it (older fixture: the critical-path bottleneck)
    EXPECT_NE(html.find("<br><b>dma</b> · "), std::string::npos);
    // timelines with source lines and a relative trace link
    EXPECT_NE(html.find("kernels/matmul.c:"), std::string::npos);
    EXPECT_NE(html.find("<a href=\"traces/"), std::string::npos);
    // correctness: error next to tolerance
    EXPECT_NE(html.find("<th>max abs err / tol</th>"), std::string::npos);
    EXPECT_NE(html.find("<h3>Checked outputs</h3>"), std::string::npos);
    // no baseline given: said so
    EXPECT_NE(html.find("No baseline was given"), std::string::npos);
    // what-if curves (axis: the parameter with its unit) and tuning table
    EXPECT_NE(html.find("core.dma.bandwidth_per_engine (GB/s)"), std::string::npos);
    EXPECT_NE(html.find("<h3>Tuning gains</h3>"), std::string::npos);
    EXPECT_NE(html.find("<th>sensitivity</th>"), std::string::npos);
    expect_self_contained(html);
}

// Each heatmap cell's tooltip names the job its speedup is taken against: the same shape on the
// nearest earlier generation where it passed (gen1's fp8 matmul is unsupported, so gen2's has
// none and gen3's is against gen2).
TEST(Report, HeatmapReferencesAreTheNearestEarlierPassingJob)
{
    std::string html = render("check.json");
    EXPECT_NE(html.find("2.68× vs gen1 (213.7 µs → 79.62 µs)"), std::string::npos);
    EXPECT_NE(html.find("128x128x512: pass, no reference"), std::string::npos);
    EXPECT_NE(html.find("128x128x512: 2.9× vs gen2 (25.15 µs → 8.668 µs)"), std::string::npos);
}

TEST(Report, TidyFindsNoErrors)
{
    if (!have_tidy()) GTEST_SKIP() << "tidy is not installed (apt-get install tidy; .ci/deps does)";
    render("check.json", "", "tidy-check.html");
    render("check.json", "baseline.json", "tidy-baseline.html");
    render("hostile.json", "", "tidy-hostile.html", "hostile-whatif.json");
    render("check.json", "", "tidy-plain.html", "");
    expect_tidy_clean(out_path("tidy-plain.html"));
    expect_tidy_clean(out_path("tidy-check.html"));
    expect_tidy_clean(out_path("tidy-baseline.html"));
    expect_tidy_clean(out_path("tidy-hostile.html"));
}

TEST(Report, HostileStringsAreEscaped)
{
    std::string html = render("hostile.json", "", "", "hostile-whatif.json");
    EXPECT_EQ(html.find("<script>alert"), std::string::npos);
    EXPECT_EQ(html.find("<b>k</b>"), std::string::npos);
    EXPECT_EQ(html.find("<img"), std::string::npos);
    EXPECT_EQ(html.find("</td></tr></table>\""), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("&lt;img src=x onerror=alert(2)&gt;"), std::string::npos);
    EXPECT_NE(html.find("]]&gt;&lt;/script&gt;&lt;script&gt;alert(3)"), std::string::npos);
    EXPECT_NE(html.find("&quot;quotes&quot; &#39;single&#39;"), std::string::npos);
    // the javascript: "source URL" is text, never a link
    EXPECT_EQ(html.find("href=\"javascript"), std::string::npos);
    // hostile variant names in the variants chart legend are escaped too
    EXPECT_NE(html.find("blocked&lt;b&gt;"), std::string::npos);
    EXPECT_EQ(html.find("blocked<b>"), std::string::npos);
    // the failure the fixture injects is listed first, linked to its row
    EXPECT_NE(html.find("<h3 id=\"failures\">Failures (1)</h3>"), std::string::npos);
    EXPECT_NE(html.find("<li><a href=\"#job-"), std::string::npos);
    expect_self_contained(html);
}

TEST(Report, BaselineRegressionsAndImprovements)
{
    std::string html = render("check.json", "baseline.json");
    // the baseline fixture is 10 % faster on every third job: +11.1 % now, a regression
    EXPECT_NE(html.find("+11.1 %"), std::string::npos);
    // and 10 % slower on every fifth: -9.1 %, an improvement
    EXPECT_NE(html.find("-9.1 %"), std::string::npos);
    EXPECT_NE(html.find(">regression</td>"), std::string::npos);
    EXPECT_NE(html.find(">improvement</td>"), std::string::npos);
    // regressions are listed in the summary with links to their rows
    std::smatch m;
    std::regex link("<li><a href=\"#(base-[0-9]+)\">");
    ASSERT_TRUE(std::regex_search(html, m, link));
    EXPECT_NE(html.find("id=\"" + m[1].str() + "\""), std::string::npos);
    EXPECT_EQ(html.find("No baseline was given"), std::string::npos);
    expect_self_contained(html);
}

TEST(Report, BaseGenerationOption)
{
    std::string text = slurp(kFixtures + "check.json");
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    gs_report_opts o = {"gen3", 0, nullptr, nullptr, 0};
    ASSERT_EQ(gs_report_render(text.c_str(), "check.json", nullptr, nullptr, &o, &sb, &err), GS_OK)
        << err.message;
    std::string html = gs_sb_cstr(&sb);
    EXPECT_NE(html.find("reference: <b>gen3</b>, --base-gen"), std::string::npos);
    EXPECT_NE(html.find("gen1 vs gen3: "), std::string::npos);
    gs_sb_free(&sb);
    gs_sb_init(&sb);
    o.base_gen = "gen9";
    EXPECT_EQ(gs_report_render(text.c_str(), "check.json", nullptr, nullptr, &o, &sb, &err),
              GS_ERR_USAGE);
    EXPECT_NE(std::string(err.message).find("'gen9' is not a generation"), std::string::npos)
        << err.message;
    gs_sb_free(&sb);
}

// Errors: clear messages naming the file and the problem; the output is never written.
struct BadInput {
    const char *name;
    const char *text; // nullptr: the file does not exist
    gs_status code;
    const char *message_part;
};

// gtest prints a parameter's bytes unless told; the name says which input it is.
void PrintTo(const BadInput &b, std::ostream *os)
{
    *os << b.name;
}

class ReportBadInput : public ::testing::TestWithParam<BadInput>
{
};

TEST_P(ReportBadInput, ClearErrorAndNoOutput)
{
    const BadInput &b = GetParam();
    std::string in = out_path(std::string("bad-") + b.name + ".json");
    std::string out = out_path(std::string("bad-") + b.name + ".html");
    unlink(in.c_str());
    unlink(out.c_str());
    if (b.text) spit(in, b.text);
    gs_error err;
    gs_error_clear(&err);
    EXPECT_EQ(gs_report_write(in.c_str(), nullptr, out.c_str(), &err), b.code);
    EXPECT_NE(std::string(err.message).find(b.message_part), std::string::npos) << err.message;
    EXPECT_EQ(std::string(err.file), in);
    struct stat st;
    EXPECT_NE(stat(out.c_str(), &st), 0) << "output written despite the error";
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ReportBadInput,
    ::testing::Values(
        BadInput{"missing", nullptr, GS_ERR_IO, "cannot read: No such file"},
        BadInput{"empty", "", GS_ERR_PARSE, "empty file"},
        BadInput{"truncated", "{\"schema\": \"gensweep-results\",\n \"jobs\": [", GS_ERR_PARSE,
                 "malformed JSON"},
        BadInput{"array", "[1, 2]", GS_ERR_INVALID, "not a JSON object"},
        BadInput{"other_schema", "{\"schema\": \"x\", \"schema_version\": 1, \"jobs\": []}",
                 GS_ERR_INVALID, "\"schema\" must be \"gensweep-results\""},
        BadInput{"future_version",
                 "{\"schema\": \"gensweep-results\", \"schema_version\": 2, \"jobs\": []}",
                 GS_ERR_INVALID, "schema_version 2 is not supported"},
        BadInput{"no_version", "{\"schema\": \"gensweep-results\", \"jobs\": []}", GS_ERR_INVALID,
                 "\"schema_version\" is missing"},
        BadInput{"no_jobs", "{\"schema\": \"gensweep-results\", \"schema_version\": 1}",
                 GS_ERR_INVALID, "no \"jobs\" array"},
        BadInput{"job_not_object",
                 "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"jobs\": [3]}",
                 GS_ERR_INVALID, "jobs[0] is a number, not an object"},
        BadInput{"job_without_id",
                 "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"jobs\": [{}]}",
                 GS_ERR_INVALID, "jobs[0]: \"id\" is missing"}),
    [](const ::testing::TestParamInfo<BadInput> &i) { return std::string(i.param.name); });

TEST(Report, MalformedJsonNamesTheLine)
{
    std::string in = out_path("bad-line.json"), out = out_path("bad-line.html");
    spit(in, "{\n  \"schema\": \"gensweep-results\",\n  \"schema_version\": 1,\n  oops\n}\n");
    gs_error err;
    EXPECT_EQ(gs_report_write(in.c_str(), nullptr, out.c_str(), &err), GS_ERR_PARSE);
    EXPECT_EQ(err.line, 4);
}

TEST(Report, BadBaselineIsNamed)
{
    std::string bad = out_path("bad-baseline.json");
    spit(bad, "{\"schema\": \"gensweep-results\", \"schema_version\": 7, \"jobs\": []}");
    gs_error err;
    EXPECT_EQ(gs_report_write((kFixtures + "check.json").c_str(), bad.c_str(),
                              out_path("bad-baseline.html").c_str(), &err),
              GS_ERR_INVALID);
    EXPECT_EQ(std::string(err.file), bad);
}

TEST(Report, NoWhatIfSaysSo)
{
    std::string html = render("check.json", "", "plain.html", "");
    EXPECT_NE(html.find("No what-if or tuning results given"), std::string::npos);
}

TEST(Report, BadWhatIfFileIsNamed)
{
    std::string bad = out_path("bad-whatif.json");
    spit(bad, "{\"schema\": \"gensweep-whatif\", \"schema_version\": 3}");
    const char *extra[] = {bad.c_str()};
    gs_report_opts o = {nullptr, 0, extra, nullptr, 1};
    gs_error err;
    EXPECT_EQ(gs_report_write_opts((kFixtures + "check.json").c_str(), nullptr,
                                   out_path("bad-whatif.html").c_str(), &o, &err),
              GS_ERR_INVALID);
    EXPECT_EQ(std::string(err.file), bad);
    EXPECT_NE(std::string(err.message).find("schema_version 3 is not supported"), std::string::npos)
        << err.message;
    spit(bad, "{\"schema\": \"gensweep-results\", \"schema_version\": 1}");
    EXPECT_EQ(gs_report_write_opts((kFixtures + "check.json").c_str(), nullptr,
                                   out_path("bad-whatif.html").c_str(), &o, &err),
              GS_ERR_INVALID);
    EXPECT_NE(std::string(err.message)
                  .find("not a what-if, tuning, attribution, calibration or workloads file"),
              std::string::npos);
}

// A results file the shared validator refuses (unknown status, a string time) is refused by the
// report too, with the validator's message; fields outside the schema that are missing or of
// the wrong type (engines, timeline, config params, what-if) render as "—", never crash.
TEST(Report, SparseAndWrongTypedFieldsRender)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    const char *refused =
        "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"jobs\": [{\"id\": "
        "\"g/k/v/bf16/1\", \"generation\": \"g\", \"kernel\": \"k\", \"status\": "
        "\"weird\u0001status\"}]}";
    EXPECT_EQ(gs_report_render(refused, "sparse", nullptr, nullptr, nullptr, &sb, &err),
              GS_ERR_INVALID);
    EXPECT_NE(std::string(err.message).find("unknown status"), std::string::npos) << err.message;
    const char *text =
        "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"configs\": [{\"name\": "
        "\"g\", \"params\": {\"x\": {\"value\": \"str\"}}, \"peaks\": 5}], \"jobs\": ["
        "{\"id\": \"g/k/v/bf16/1\", \"generation\": \"g\", \"kernel\": \"k\", \"status\": "
        "\"crash\", \"engines\": 3, "
        "\"timeline\": {\"tracks\": [{\"name\": 1, \"slices\": [[1], \"x\", [0, 5, 3, 4, "
        "\"n\"]]}]}, \"error\": {\"checked\": true}},"
        "{\"id\": \"h/k/v/bf16/1\", \"generation\": \"h\", \"kernel\": \"k\", \"status\": "
        "\"pass\", \"time_ns\": 10, \"arith_intensity\": 2, \"achieved_tflops\": 1e-6, "
        "\"timeline\": {\"total_ns\": 10, \"tracks\": []}}],"
        "\"whatif\": [{\"factors\": [0, -1, \"x\"], \"curves\": [{\"time_ns\": [null]}]}],"
        "\"tuning\": [{\"best_params\": {\"a\": [1]}}]}";
    gs_sb_reset(&sb);
    ASSERT_EQ(gs_report_render(text, "sparse", nullptr, nullptr, nullptr, &sb, &err), GS_OK)
        << err.message;
    std::string html = gs_sb_cstr(&sb);
    EXPECT_NE(html.find("<h3 id=\"failures\">Failures (1)</h3>"), std::string::npos);
    gs_sb_free(&sb);
}

// Strings out: a megabyte-long reason, invalid UTF-8 and control characters. The page stays
// small (each string is cut, the full text up to a cap in a <details>), and valid UTF-8.
TEST(Report, LongAndInvalidStringsAreCutAndRepaired)
{
    std::string longreason(1000000, 'r');
    std::string text =
        "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"configs\": [], \"jobs\": ["
        "{\"id\": \"g/k/v/bf16/1\", \"generation\": \"g\", \"kernel\": \"k\", \"variant\": "
        "\"v\", \"dtype\": \"bf16\", \"status\": \"fail\", \"reason\": \"" +
        longreason + "\", \"stderr_tail\": \"" + longreason +
        "\", \"shape\": [1]},"
        "{\"id\": \"g/k/v/bf16/2\", \"generation\": \"g\", \"kernel\": \"k\xff\xfe\xc0\xaf\", "
        "\"variant\": \"v\", \"dtype\": \"bf16\", \"status\": \"crash\", \"reason\": "
        "\"bad \xed\xa0\x80 surrogate, fine \xc3\xa9\", \"shape\": [2]}]}";
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    ASSERT_EQ(gs_report_render(text.c_str(), "long", nullptr, nullptr, nullptr, &sb, &err), GS_OK)
        << err.message;
    std::string html = gs_sb_cstr(&sb);
    EXPECT_LT(html.size(), 200000u) << "a 1 MB reason (twice) must not be copied";
    EXPECT_NE(html.find("<details class=\"more\"><summary>full text</summary>"), std::string::npos);
    EXPECT_NE(html.find("[cut: 1000000 bytes in all]"), std::string::npos);
    EXPECT_NE(html.find("k\xef\xbf\xbd"), std::string::npos) << "invalid bytes become U+FFFD";
    EXPECT_NE(html.find("fine \xc3\xa9"), std::string::npos) << "valid UTF-8 is kept";
    // the whole page is valid UTF-8
    const unsigned char *u = (const unsigned char *)html.data();
    size_t n = html.size(), i = 0;
    bool valid = true;
    while (i < n && valid) {
        unsigned c = u[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        valid = len && i + len <= n && !(c == 0xC0 || c == 0xC1 || c > 0xF4) &&
                !(c == 0xED && len > 1 && u[i + 1] >= 0xA0);
        for (size_t k = 1; valid && k < len; k++)
            valid = (u[i + k] & 0xC0) == 0x80;
        i += len ? len : 1;
    }
    EXPECT_TRUE(valid) << "invalid UTF-8 at byte " << i;
    gs_sb_free(&sb);
}

// A U+202E (right-to-left override) in a job id would render the status after it reversed:
// every string with direction controls or right-to-left text is isolated (U+2068 ... U+2069),
// and an isolate control of its own cannot close the isolate early. Plain strings are as they
// were.
TEST(Report, BidiControlsInStringsAreIsolated)
{
    const std::string rlo = "\xE2\x80\xAE", fsi = "\xE2\x81\xA8", pdi = "\xE2\x81\xA9";
    std::string text =
        "{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"configs\": [], \"jobs\": ["
        "{\"id\": \"g/k/v/bf16/1" +
        rlo +
        "\", \"generation\": \"g\", \"kernel\": \"k\", \"variant\": \"v\", \"dtype\": "
        "\"bf16\", \"status\": \"fail\", \"reason\": \"early " +
        pdi + rlo + "close\", \"shape\": [1]}]}";
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    ASSERT_EQ(gs_report_render(text.c_str(), "bidi", nullptr, nullptr, nullptr, &sb, &err), GS_OK)
        << err.message;
    const std::string html = gs_sb_cstr(&sb);
    gs_sb_free(&sb);
    EXPECT_NE(html.find(fsi + "g/k/v/bf16/1" + rlo + pdi), std::string::npos);
    // the reason's own U+2069 is neutralised, its override isolated
    EXPECT_NE(html.find(fsi + "early \xEF\xBF\xBD" + rlo + "close" + pdi), std::string::npos);
    // every override is inside an isolate: no U+202E outside a FSI ... PDI pair
    int depth = 0;
    for (size_t i = 0; i + 2 < html.size(); i++) {
        const std::string c = html.substr(i, 3);
        if (c == fsi) depth++;
        if (c == pdi) depth--;
        EXPECT_GE(depth, 0) << "unbalanced isolate at byte " << i;
        if (c == rlo) {
            EXPECT_GT(depth, 0) << "override outside an isolate at byte " << i;
        }
    }
    EXPECT_EQ(depth, 0);
    // an ASCII-only string is not wrapped
    EXPECT_NE(html.find(">k<"), std::string::npos);
}

// Strings out, at scale: thousands of failed jobs with long reasons and stderr tails. Each
// string is cut, and once the page reaches its budget the tables stop and the page says so.
TEST(Report, StaysUnderItsSizeBudgetWhateverTheInput)
{
    std::string reason(3000, 'x'), tail(3000, 'y');
    std::string j =
        "{\"schema\":\"gensweep-results\",\"schema_version\":1,\"configs\":[],\"jobs\":[";
    for (int k = 0; k < 3000; k++)
        for (int g = 0; g < 2; g++) {
            std::string gen = g ? "b" : "a", kn = "k" + std::to_string(k);
            j += (k || g ? "," : "");
            j += "{\"id\":\"" + gen + "/" + kn + "/v/bf16/8\",\"generation\":\"" + gen +
                 "\",\"kernel\":\"" + kn +
                 "\",\"variant\":\"v\",\"dtype\":\"bf16\",\"shape\":[8]"
                 ",\"status\":\"crash\",\"reason\":\"" +
                 reason + "\",\"stderr_tail\":\"" + tail + "\",\"time_ns\":null}";
        }
    j += "]}";
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    ASSERT_EQ(gs_report_render(j.c_str(), "huge", nullptr, nullptr, nullptr, &sb, &err), GS_OK)
        << err.message;
    std::string html = gs_sb_cstr(&sb);
    std::printf("%zu MB of results -> %.2f MB of report\n", j.size() >> 20, html.size() / 1e6);
    EXPECT_GT(j.size(), 30u << 20) << "the input is larger than the budget";
    EXPECT_LT(html.size(), GS_REPORT_BUDGET_BYTES + (1u << 20));
    EXPECT_NE(html.find("reached its size budget"), std::string::npos);
    EXPECT_NE(html.find("</html>"), std::string::npos);
    gs_sb_free(&sb);
}

// The attribute `name` of an SVG/HTML element's opening tag (empty when absent).
std::string tag_attr(const std::string &tag, const std::string &name)
{
    const size_t a = tag.find(" " + name + "=\"");
    if (a == std::string::npos) return "";
    const size_t v = a + name.size() + 3;
    return tag.substr(v, tag.find('"', v) - v);
}

// Timelines are sampled to one row per kernel and variant: its bf16 row when that has one, else
// each row that has one (here: k/v draws bf16 only, k/w has no bf16 row and draws fp32).
TEST(Report, TimelinesAreSampledToTheBf16RowOfEachKernelAndVariant)
{
    auto job = [](const char *variant, const char *dtype) {
        return std::string("{\"id\":\"gen2/k/") + variant + "/" + dtype +
               "/128\",\"generation\":\"gen2\",\"kernel\":\"k\",\"variant\":\"" + variant +
               "\",\"dtype\":\"" + dtype +
               "\",\"shape\":[128],\"status\":\"pass\",\"time_ns\":100,\"cores_used\":1,"
               "\"timeline\":{\"total_ns\":100,\"tracks\":[{\"name\":\"c0 vector\",\"slices\":"
               "[[0,100,\"tensor_tensor\",\"kernels/k.c:3\",1]]}]},\"trace\":null}";
    };
    std::string j = "{\"schema\":\"gensweep-results\",\"schema_version\":1,\"configs\":[{\"name\":"
                    "\"gen2\",\"peaks\":{\"bf16_tflops\":90,\"hbm_gbps\":800},\"params\":{}}],"
                    "\"jobs\":[" +
                    job("v", "bf16") + "," + job("v", "fp32") + "," + job("w", "fp32") + "]}";
    const std::string in = out_path("sampled.json"), out = out_path("sampled.html");
    spit(in, j);
    gs_error err;
    ASSERT_EQ(gs_report_write(in.c_str(), nullptr, out.c_str(), &err), GS_OK) << err.message;
    const std::string html = slurp(out);
    const size_t a = html.find("id=\"timelines\""), b = html.find("id=\"correctness\"");
    ASSERT_NE(a, std::string::npos);
    const std::string tl = html.substr(a, b - a);
    EXPECT_NE(tl.find("<h4>gen2/k/v/bf16/128"), std::string::npos) << tl;
    EXPECT_EQ(tl.find("<h4>gen2/k/v/fp32/128"), std::string::npos) << tl;
    EXPECT_NE(tl.find("<h4>gen2/k/w/fp32/128"), std::string::npos) << tl;
}

// Timelines drawn from the real slices: a bar that spans idle time (a record's slice merged
// across gaps, or bars the report groups to stay within its budget) is drawn as dense as the
// track was busy in it, and every track is labelled with its busy share. Parses the SVG: for
// each track's group of bars, the ink (width x opacity) must match the track's busy time.
TEST(Report, TimelineBarsAreAsDenseAsTheTrackWasBusy)
{
    const double total = 38250;
    std::string j = "{\"schema\":\"gensweep-results\",\"schema_version\":1,\"configs\":[{\"name\":"
                    "\"gen2\",\"peaks\":{\"bf16_tflops\":90,\"hbm_gbps\":800},\"params\":{}}],"
                    "\"jobs\":[{\"id\":\"gen2/k/v/bf16/128\",\"generation\":\"gen2\",\"kernel\":"
                    "\"k\",\"variant\":\"v\",\"dtype\":\"bf16\",\"shape\":[128],\"status\":"
                    "\"pass\",\"time_ns\":38250,\"cores_used\":1,\"timeline\":{\"total_ns\":38250,"
                    "\"tracks\":[";
    // a DMA queue busy 6200 of 38250 ns whose 400 transfers the record merged into one slice
    j += "{\"name\":\"c0 dma q0\",\"busy_ns\":6200,\"slices\":[[0,38250,\"dma_copy\","
         "\"kernels/k.c:1\",400,6200]]},";
    // a tensor engine busy 1 ns in every 10 over 13000 slices: more than the report's slice
    // budget, so it groups neighbours into bars that span idle time (no busy element: the
    // slices are what ran)
    j += "{\"name\":\"c0 tensor\",\"slices\":[";
    for (int i = 0; i < 13000; i++)
        j += std::string(i ? "," : "") + "[" + std::to_string(i * 2.9423) + "," +
             std::to_string(i * 2.9423 + 0.29423) + ",\"matmul\",\"kernels/k.c:2\",1]";
    j += "]},";
    // a vector engine busy without a gap
    j += "{\"name\":\"c0 vector\",\"slices\":[[0,38250,\"tensor_tensor\",\"kernels/k.c:3\",1]]}";
    j += "]},\"trace\":null}]}";
    const std::string in = out_path("density.json"), out = out_path("density.html");
    spit(in, j);
    gs_error err;
    ASSERT_EQ(gs_report_write(in.c_str(), nullptr, out.c_str(), &err), GS_OK) << err.message;
    const std::string html = slurp(out);
    const size_t svg = html.find("<svg class=\"gantt\"");
    ASSERT_NE(svg, std::string::npos);
    const std::string gantt = html.substr(svg, html.find("</svg>", svg) - svg);

    // the plot's width in pixels per ns, from the axis: the vector track's one bar spans 0..total
    struct Track {
        const char *name;
        double busy; // fraction of the run
    };
    const Track tracks[] = {{"c0 dma q0", 6200 / total}, {"c0 tensor", 0.1}, {"c0 vector", 1.0}};
    double px_per_ns = 0;
    std::map<std::string, double> ink; // width x opacity, pixels
    std::map<std::string, size_t> bars;
    for (const Track &t : tracks) {
        // the track's name, its busy-% label, then its group of bars
        const size_t nm = gantt.find(">" + std::string(t.name) + "</text>");
        ASSERT_NE(nm, std::string::npos) << t.name;
        const size_t g = gantt.find("<g ", nm);
        ASSERT_NE(g, std::string::npos) << t.name << " has no bars";
        const size_t end = gantt.find("</g>", g);
        for (size_t r = gantt.find("<rect ", g); r < end; r = gantt.find("<rect ", r + 1)) {
            const std::string tag = gantt.substr(r, gantt.find('>', r) - r);
            const std::string op = tag_attr(tag, "opacity");
            const double w = std::stod(tag_attr(tag, "width"));
            ink[t.name] += w * (op.empty() ? 1.0 : std::stod(op));
            bars[t.name]++;
            if (!strcmp(t.name, "c0 vector")) px_per_ns = w / total;
        }
        const size_t lbl = gantt.find("class=\"busy\"", nm);
        EXPECT_LT(lbl, g) << t.name << " has no busy-% label";
        if (lbl < g) {
            const double pct = std::stod(gantt.substr(gantt.find('>', lbl) + 1));
            EXPECT_NEAR(pct, 100 * t.busy, 0.5) << t.name;
        }
    }
    ASSERT_GT(px_per_ns, 0);
    EXPECT_GT(bars["c0 tensor"], 1u);
    EXPECT_LT(bars["c0 tensor"], 13000u) << "the report did not group the slices";
    const double plot = px_per_ns * total;
    for (const Track &t : tracks)
        EXPECT_NEAR(ink[t.name] / plot, t.busy, 0.02)
            << t.name << ": drawn as " << 100 * ink[t.name] / plot << "% dense, busy "
            << 100 * t.busy << "%";
    if (have_tidy()) expect_tidy_clean(out);
}

// A large sweep: 3 generations x 40 kernel rows x 3 shapes, every job with a 24-track,
// 150-slice timeline and 60 what-if points. Without the caps the timelines alone would be
// ~20 MB of SVG; the report must stay under 5 MB and well-formed.
TEST(Report, LargeSweepStaysUnder5MB)
{
    std::string j = "{\"schema\":\"gensweep-results\",\"schema_version\":1,\"configs\":[";
    for (int g = 0; g < 3; g++)
        j += std::string(g ? "," : "") + "{\"name\":\"gen" + std::to_string(g + 1) +
             "\",\"peaks\":{\"bf16_tflops\":90,\"hbm_gbps\":800},\"params\":{}}";
    j += "],\"jobs\":[";
    bool first = true;
    for (int g = 0; g < 3; g++)
        for (int k = 0; k < 40; k++)
            for (int s = 1; s <= 3; s++) {
                std::string gen = "gen" + std::to_string(g + 1), kn = "k" + std::to_string(k);
                j += first ? "" : ",";
                first = false;
                j += "{\"id\":\"" + gen + "/" + kn + "/v/bf16/" + std::to_string(s * 128) +
                     "\",\"generation\":\"" + gen + "\",\"kernel\":\"" + kn + "\",\"variant\":\"v" +
                     std::to_string(k % 3) + "\",\"dtype\":\"bf16\",\"shape\":[" +
                     std::to_string(s * 128) +
                     "],\"status\":\"pass\",\"time_ns\":" + std::to_string(1000 * s + k) +
                     ",\"arith_intensity\":" + std::to_string(1 + k) +
                     ",\"achieved_tflops\":0.5,\"roofline_ratio\":2,\"cores_used\":1,"
                     "\"bottleneck\":\"dma\",\"engines\":{\"tensor\":{\"busy_ns\":100},"
                     "\"dma\":{\"busy_ns\":900,\"stall_dep_ns\":50}},"
                     "\"error\":{\"checked\":true,\"max_abs\":0.1,\"tol_abs\":0.2,\"max_rel\":0.01,"
                     "\"tol_rel\":0.02,\"mismatches\":0},\"timeline\":{\"total_ns\":1e6,\"tracks\":"
                     "[";
                for (int t = 0; t < 24; t++) {
                    j += std::string(t ? "," : "") + "{\"name\":\"c0 dma q" + std::to_string(t) +
                         "\",\"slices\":[";
                    for (int i = 0; i < 150; i++)
                        j += std::string(i ? "," : "") + "[" + std::to_string(i * 6000) + "," +
                             std::to_string(i * 6000 + 5000) +
                             ",\"dma_copy\",\"kernels/k.c:" + std::to_string(i) + "\",1]";
                    j += "]}";
                }
                j += "]},\"trace\":null}";
            }
    j += "],\"whatif\":[{\"generation\":\"gen2\",\"param\":\"p\",\"factors\":[";
    for (int i = 0; i < 60; i++)
        j += std::string(i ? "," : "") + std::to_string(0.25 + i * 0.1);
    j += "],\"curves\":[{\"kernel\":\"k0\",\"variant\":\"v\",\"time_ns\":[";
    for (int i = 0; i < 60; i++)
        j += std::string(i ? "," : "") + std::to_string(1000 + i);
    j += "]}]}]}";
    std::string in = out_path("large.json"), out = out_path("large.html");
    spit(in, j);
    gs_error err;
    ASSERT_EQ(gs_report_write(in.c_str(), nullptr, out.c_str(), &err), GS_OK) << err.message;
    struct stat st;
    ASSERT_EQ(stat(out.c_str(), &st), 0);
    std::printf("large sweep: %zu jobs, input %.1f MB, report %.2f MB\n", (size_t)360,
                j.size() / 1e6, st.st_size / 1e6);
    EXPECT_LT(st.st_size, 5 * 1000 * 1000);
    if (have_tidy()) expect_tidy_clean(out);
}

} // namespace

// Never green on missing work: results that lack jobs say so before the
// verdict, name the shards and jobs missing, and mark partial every speedup they may change.
namespace
{
std::string render_text(const std::string &text, gs_status want = GS_OK,
                        gs_error *err_out = nullptr)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    gs_error_clear(&err);
    gs_status st =
        gs_report_render(text.c_str(), "incomplete.json", nullptr, nullptr, nullptr, &sb, &err);
    EXPECT_EQ(st, want) << err.message;
    if (err_out) *err_out = err;
    std::string html = st == GS_OK ? std::string(gs_sb_cstr(&sb)) : "";
    gs_sb_free(&sb);
    return html;
}

std::string with_top(const std::string &members)
{
    std::string s = slurp(kFixtures + "check.json");
    size_t at = s.find("\"complete\": true");
    EXPECT_NE(at, std::string::npos);
    return s.replace(at, strlen("\"complete\": true"), members);
}

// The text between <main> and the verdict section: what the first screen shows first.
std::string before_verdict(const std::string &html)
{
    size_t m = html.find("<main>"), v = html.find("<section id=\"verdict\">");
    return m == std::string::npos || v == std::string::npos || v < m ? "" : html.substr(m, v - m);
}
} // namespace

TEST(ReportIncomplete, CompleteResultsHaveNoNoticeAndNoPartialSpeedup)
{
    std::string html = render_text(slurp(kFixtures + "check.json"));
    EXPECT_EQ(html.find("id=\"incomplete\""), std::string::npos);
    EXPECT_EQ(html.find("data-partial"), std::string::npos);
    EXPECT_EQ(html.find("INCOMPLETE"), std::string::npos);
}

TEST(ReportIncomplete, InterruptedSweepSaysSoFirstAndEverySpeedupIsPartial)
{
    std::string html = render_text(with_top("\"complete\": false, \"interrupted\": true"));
    std::string head = before_verdict(html);
    EXPECT_NE(head.find("id=\"incomplete\""), std::string::npos) << "no notice before the verdict";
    EXPECT_NE(head.find("<b>interrupted</b>"), std::string::npos) << head;
    EXPECT_NE(html.find("<title>gensweep report: INCOMPLETE: "), std::string::npos);
    // without the list of jobs not run, any pair may have lost some: every verdict is partial
    EXPECT_EQ(count(html, "<div class=\"verdict\">"), 0u) << "a pair's speedup not marked partial";
    EXPECT_GE(count(html, "<div class=\"verdict partial\" data-partial=\"1\">"), 2u);
    EXPECT_EQ(html.find("<p>No job failed.</p>"), std::string::npos);
    expect_self_contained(html);
}

TEST(ReportIncomplete, MergeListOfJobsNotRunIsNamedAndEscaped)
{
    // one job of gen1 not run (shard 2 of 3), with a hostile id: only the pair with gen1 is
    // partial, and the id is text
    std::string html = render_text(
        with_top("\"complete\": false, \"missing\": \"1 of 3 shards missing (2/3)\", \"not_run\": "
                 "[{\"id\": \"gen1/<img src=x>/naive\", \"shard\": 2, \"shards\": 3}]"));
    std::string head = before_verdict(html);
    EXPECT_NE(head.find("Missing shards: <b class=\"missing-shards\">2/3</b>"), std::string::npos)
        << head;
    EXPECT_NE(head.find("1 of 3 shards missing (2/3)"), std::string::npos);
    EXPECT_NE(head.find("gen1/&lt;img src=x&gt;/naive</code> (shard 2/3)"), std::string::npos)
        << head;
    EXPECT_EQ(html.find("<img"), std::string::npos);
    std::smatch m;
    std::regex pair_re(
        "<div class=\"verdict( partial\" data-partial=\"1)?\"><h3>(\\w+) vs (\\w+):");
    int pairs = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), pair_re);
         it != std::sregex_iterator(); ++it, ++pairs) {
        bool partial = (*it)[1].matched;
        bool has_gen1 = (*it)[2] == "gen1" || (*it)[3] == "gen1";
        EXPECT_EQ(partial, has_gen1) << (*it)[2] << " vs " << (*it)[3];
    }
    EXPECT_GE(pairs, 2);
    expect_self_contained(html);
}

TEST(ReportIncomplete, ShardFileAloneSaysWhichShard)
{
    std::string s = with_top("\"complete\": false");
    size_t at = s.find("\"count\": 1");
    ASSERT_NE(at, std::string::npos);
    s.replace(at, strlen("\"count\": 1"), "\"count\": 4");
    std::string head = before_verdict(render_text(s));
    EXPECT_NE(head.find("<b>shard 1 of 4</b> only"), std::string::npos) << head;
}

TEST(ReportIncomplete, BadNotRunListIsNamed)
{
    gs_error err;
    render_text(with_top("\"complete\": false, \"not_run\": [{\"id\": \"x\", \"shard\": 4, "
                         "\"shards\": 3}]"),
                GS_ERR_INVALID, &err);
    EXPECT_NE(std::string(err.message).find("not_run[0]"), std::string::npos) << err.message;
    EXPECT_EQ(std::string(err.file), "incomplete.json");
}

TEST(ReportIncomplete, JobsNotRunInAShardThatRanAreNotAMissingShard)
{
    // an interrupted shard 2 named its job not run ("why"), shard 3 is missing: only 3/3 is a
    // missing shard; each job says why it did not run, a hostile why as text; an unsharded
    // interrupted sweep's job says "(interrupted)" with no shard
    std::string html = render_text(with_top(
        "\"complete\": false, \"interrupted\": true, \"not_run\": [{\"id\": \"gen1/a\", "
        "\"shard\": 2, \"shards\": 3, \"why\": \"interrupted\"}, {\"id\": \"gen1/b\", \"shard\": "
        "3, \"shards\": 3}, {\"id\": \"gen2/c\", \"shard\": 1, \"shards\": 1, \"why\": "
        "\"<i>x</i>\"}]"));
    std::string head = before_verdict(html);
    EXPECT_NE(head.find("Missing shards: <b class=\"missing-shards\">3/3</b>"), std::string::npos)
        << head;
    EXPECT_NE(head.find("gen1/a</code> (shard 2/3, interrupted)"), std::string::npos) << head;
    EXPECT_NE(head.find("gen1/b</code> (shard 3/3)"), std::string::npos) << head;
    EXPECT_NE(head.find("gen2/c</code> (&lt;i&gt;x&lt;/i&gt;)"), std::string::npos) << head;
    EXPECT_EQ(html.find("<i>x"), std::string::npos);
    // an interrupted sweep alone: its jobs, and no "Missing shards"
    head = before_verdict(render_text(
        with_top("\"complete\": false, \"interrupted\": true, \"not_run\": [{\"id\": \"gen1/a\", "
                 "\"shard\": 1, \"shards\": 1, \"why\": \"interrupted\"}]")));
    EXPECT_EQ(head.find("Missing shards"), std::string::npos) << head;
    EXPECT_NE(head.find("<p>Jobs not run (1):</p>"), std::string::npos) << head;
    EXPECT_NE(head.find("gen1/a</code> (interrupted)"), std::string::npos) << head;
}

TEST(ReportIncomplete, NotRunWhyMustBeAString)
{
    gs_error err;
    render_text(with_top("\"complete\": false, \"not_run\": [{\"id\": \"x\", \"shard\": 1, "
                         "\"shards\": 1, \"why\": 3}]"),
                GS_ERR_INVALID, &err);
    EXPECT_NE(std::string(err.message).find("not_run[0]"), std::string::npos) << err.message;
}
