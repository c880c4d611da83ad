// What bounds a job, in the report (label "report"), from results documents in memory: every
// compute engine's ceiling on the kernel's roofline (not only the tensor peak), the HBM and DMA
// diagonals, the point below the lowest ceiling, the throughput/latency line in the job table
// and the engine cells, the verdict counting jobs by it; and results of an older gensweep
// (no bound_kind) falling back to the critical-path bottleneck.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "report.h"

namespace
{

// layernorm on two generations, timing-only (answer jobs): vector-bound work, a scalar engine
// with less to do, no matmul. gen3's time is 1.5x its vector bound, gen2's 1.9x.
std::string job(const char *gen, double time_ns, double vector_ns, double scalar_ns,
                const char *kind, const char *busiest, const char *label)
{
    char buf[2048];
    std::snprintf(buf, sizeof buf,
                  "{\"id\": \"%s/layernorm/bn_stats/bf16/4096x4096\", \"generation\": \"%s\","
                  " \"kernel\": \"layernorm\", \"variant\": \"bn_stats\", \"dtype\": \"bf16\","
                  " \"shape\": [4096, 4096], \"mode\": \"timing\", \"status\": \"pass\","
                  " \"time_ns\": %g, \"flops\": 1.6e8, \"hbm_bytes\": 6.7e7, \"dma_bytes\": 6.7e7,"
                  " \"arith_intensity\": %g, \"achieved_tflops\": %g, \"cores_used\": 1,"
                  " \"engine_bound_ns\": {\"tensor\": 0, \"vector\": %g, \"scalar\": %g,"
                  " \"gpsimd\": 0}, \"bound_ns\": %g, \"bound_ratio\": %g,"
                  " \"bound_engine\": \"vector\", \"hbm_ceiling_gbps\": 2900,"
                  " \"dma_ceiling_gbps\": 435.2, \"memory_ceiling_gbps\": 435.2,"
                  " \"bottleneck\": \"dma\"%s%s%s%s%s%s%s}",
                  gen, gen, time_ns, 1.6e8 / 6.7e7, 1.6e8 / time_ns / 1e3, vector_ns, scalar_ns,
                  vector_ns, time_ns / vector_ns, kind ? ", \"bound_kind\": \"" : "",
                  kind ? kind : "", kind ? "\", \"busiest\": \"" : "", kind ? busiest : "",
                  kind ? "\", \"bottleneck_label\": \"" : "", kind ? label : "", kind ? "\"" : "");
    return buf;
}

std::string results(bool with_kind)
{
    return std::string("{\"schema\": \"gensweep-results\", \"schema_version\": 1, \"configs\": "
                       "[{\"name\": \"gen2\"}, {\"name\": \"gen3\"}], \"jobs\": [") +
           job("gen2", 667000, 351000, 93600, with_kind ? "throughput" : nullptr, "vector",
               "throughput-bound on vector (busy 88%)") +
           ", " +
           job("gen3", 400000, 266000, 70000, with_kind ? "latency" : nullptr, "vector",
               "latency-bound (critical path: vector 60%, dma 30%)") +
           "]}";
}

std::string render(const std::string &doc)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_error err;
    gs_error_clear(&err);
    EXPECT_EQ(gs_report_render(doc.c_str(), "bound", nullptr, nullptr, nullptr, &sb, &err), GS_OK)
        << err.message;
    std::string html = gs_sb_ok(&sb) ? gs_sb_cstr(&sb) : "";
    gs_sb_free(&sb);
    return html;
}

size_t count(const std::string &s, const std::string &what)
{
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
        n++;
    return n;
}

// The value of attribute `name` in the first tag at or after `from` that starts with `tag`.
double attr(const std::string &html, size_t from, const std::string &tag, const std::string &name)
{
    size_t t = html.find(tag, from);
    if (t == std::string::npos) return NAN;
    size_t end = html.find('>', t);
    size_t a = html.find(" " + name + "=\"", t);
    if (a == std::string::npos || a > end) return NAN;
    return std::strtod(html.c_str() + a + name.size() + 3, nullptr);
}

std::string section(const std::string &html, const std::string &id)
{
    size_t a = html.find("id=\"" + id + "\"");
    if (a == std::string::npos) return "";
    size_t b = html.find("</section>", a);
    return html.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

TEST(ReportBound, RooflineDrawsEveryEngineCeilingTheKernelUses)
{
    const std::string roof = section(render(results(true)), "rooflines");
    ASSERT_NE(roof.find("<figure class=\"roof\">"), std::string::npos);
    // per generation: the vector and scalar ceilings, the HBM and DMA diagonals; no tensor or
    // gpsimd line (the kernel gives them no work)
    EXPECT_EQ(count(roof, "class=\"ceil roof-vector\""), 2u);
    EXPECT_EQ(count(roof, "class=\"ceil roof-scalar\""), 2u);
    EXPECT_EQ(count(roof, "class=\"ceil roof-tensor\""), 0u);
    EXPECT_EQ(count(roof, "class=\"ceil roof-gpsimd\""), 0u);
    EXPECT_EQ(count(roof, "class=\"ceil roof-dma\""), 2u);
    // the ceiling values listed under the chart: flops / engine bound
    char want[64];
    std::snprintf(want, sizeof want, "vector %.3g,", 1.6e8 / 351000 / 1e3);
    EXPECT_NE(roof.find(want), std::string::npos) << want;
    std::snprintf(want, sizeof want, "scalar %.3g,", 1.6e8 / 93600 / 1e3);
    EXPECT_NE(roof.find(want), std::string::npos) << want;
    EXPECT_NE(roof.find("1.9× its bound (vector)"), std::string::npos);
    // each point lies below its generation's vector ceiling (SVG y grows downwards), and the
    // scalar ceiling lies above the vector one (a smaller bound is a higher rate)
    size_t at = roof.find("class=\"ceil roof-vector\"");
    const double vy = attr(roof, at - 6, "<line", "y1");
    const double sy = attr(roof, roof.find("class=\"ceil roof-scalar\"") - 6, "<line", "y1");
    const double cy = attr(roof, roof.find("<circle"), "<circle", "cy");
    ASSERT_TRUE(vy == vy && sy == sy && cy == cy) << "no coordinates found";
    EXPECT_GT(cy, vy);
    EXPECT_LT(sy, vy);
}

TEST(ReportBound, TablesSayThroughputOrLatencyBound)
{
    const std::string html = render(results(true));
    // the every-job table and the engine cells carry the line as the run wrote it
    EXPECT_NE(html.find("<th>what bounds it</th>"), std::string::npos);
    EXPECT_NE(html.find("throughput-bound on vector (busy 88%)"), std::string::npos);
    EXPECT_NE(html.find("latency-bound (critical path: vector 60%, dma 30%)"), std::string::npos);
    // the verdict counts jobs by kind, without the numbers
    const std::string verdict = section(html, "verdict");
    EXPECT_NE(verdict.find("throughput-bound on vector <span class=\"note\">(1 of 1)"),
              std::string::npos)
        << verdict.substr(0, 4000);
    EXPECT_NE(verdict.find("latency-bound <span class=\"note\">(1 of 1)"), std::string::npos);
    EXPECT_EQ(html.find(">dma <span class=\"note\">(1 of 1)"), std::string::npos)
        << "the critical-path bottleneck must not stand in for the bound kind";
}

TEST(ReportBound, OlderResultsFallBackToTheCriticalPathBottleneck)
{
    const std::string html = render(results(false));
    EXPECT_EQ(html.find("throughput-bound on vector"), std::string::npos);
    EXPECT_NE(html.find(">dma <span class=\"note\">(1 of 1)"), std::string::npos);
}

// Memory levels: a job's bytes per level (read, written, their sum over its time) in the
// engines section; a job without them (an older results file) shows a dash.
TEST(ReportBound, MemoryLevelsTableShowsEachLevelsTraffic)
{
    std::string doc = results(true);
    const std::string at = "\"bottleneck\": \"dma\"";
    const size_t first = doc.find(at); // the gen2 job
    ASSERT_NE(first, std::string::npos);
    doc.insert(first + at.size(),
               ", \"levels\": {\"hbm\": {\"read_bytes\": 3.35e7, \"write_bytes\": 3.35e7},"
               " \"sbuf\": {\"read_bytes\": 1.2e8, \"write_bytes\": 6.7e7},"
               " \"psum\": {\"read_bytes\": 0, \"write_bytes\": 0}}");
    const std::string html = render(doc);
    const size_t h = html.find("<h3>Memory levels</h3>");
    ASSERT_NE(h, std::string::npos);
    const size_t end = html.find("</table>", h);
    ASSERT_NE(end, std::string::npos);
    const std::string table = html.substr(h, end - h);
    EXPECT_EQ(count(table, "<td class=\"levels\">"), 1u) << table;
    EXPECT_EQ(count(table, "<td class=\"none\">"), 1u) << table;
    // 1.87e8 bytes over 667 us: 280.4 GB/s
    EXPECT_NE(table.find("<b>SBUF</b> 120 MB read, 67 MB written · 280.4 GB/s"), std::string::npos)
        << table;
    EXPECT_NE(table.find("<b>HBM</b> 33.5 MB read, 33.5 MB written · 100.4 GB/s"),
              std::string::npos);
    EXPECT_NE(table.find("<b>PSUM</b> 0 B read, 0 B written · 0 GB/s"), std::string::npos);
}

} // namespace
