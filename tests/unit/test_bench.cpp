// `gensweep bench`: --quick runs (without the sweep), its JSON is valid and has every section,
// and bad options are usage errors. Performance figures themselves are not asserted here (the
// benchmark program reports them against the targets; timed unit tests would be flaky).
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "bench.h"

namespace
{

int run(const std::string &args, std::string *out, const char *bin = GS_GENSWEEP_BIN)
{
    std::string cmd = std::string(bin) + " " + args + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    out->clear();
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out->append(buf, n);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// The *.yaml files directly in dir: the generations bench measures.
int yaml_count(const std::string &dir)
{
    int n = 0;
    DIR *d = opendir(dir.c_str());
    while (struct dirent *e = d ? readdir(d) : nullptr) {
        std::string f = e->d_name;
        if (f.size() > 5 && f[0] != '.' && f.compare(f.size() - 5, 5, ".yaml") == 0) n++;
    }
    if (d) closedir(d);
    return n;
}

TEST(Bench, QuickRunWritesValidJsonWithEverySection)
{
    char dir[] = "/tmp/gs-test-bench-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string json = std::string(dir) + "/bench.json";
    std::string out;
    int rc = run(std::string("bench --quick --no-sweep --configs ") + GS_SOURCE_DIR +
                     "/configs --json " + json,
                 &out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("targets"), std::string::npos) << out;
    std::string text = slurp(json);
    cJSON *doc = cJSON_Parse(text.c_str());
    ASSERT_NE(doc, nullptr) << text;
    EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "schema")), "gensweep-bench/1");
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(doc, "quick")));
    const cJSON *speed = cJSON_GetObjectItem(doc, "sim_speed");
    ASSERT_TRUE(cJSON_IsArray(speed));
    EXPECT_EQ(cJSON_GetArraySize(speed), 2 * yaml_count(std::string(GS_SOURCE_DIR) + "/configs"))
        << "every generation of the directory x 2 workloads";
    const cJSON *row;
    cJSON_ArrayForEach(row, speed)
    {
        EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "status")), "pass");
        EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "instructions")), 0);
        EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "instr_per_s")), 0);
        EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "rss_kb")), 0);
    }
    const cJSON *fm = cJSON_GetObjectItem(doc, "functional_matmul");
    ASSERT_TRUE(cJSON_IsObject(fm));
    EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(fm, "status")), "pass");
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(fm, "exec_check_pass")));
    EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(fm, "sgemm_gflops")), 0);
    EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(fm, "model_gflops")), 0);
    EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "sweep"), "ran")));
    const cJSON *mem = cJSON_GetObjectItem(doc, "memory");
    EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(mem, "functional_check_rss_kb")), 0);
    EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(mem, "timing_largest_rss_kb")), 0);
    const cJSON *trace = cJSON_GetObjectItem(doc, "trace");
    ASSERT_TRUE(cJSON_IsArray(trace));
    EXPECT_EQ(cJSON_GetArraySize(trace), 4);
    cJSON_ArrayForEach(row, trace)
    {
        bool traced = cJSON_IsTrue(cJSON_GetObjectItem(row, "trace"));
        double bytes = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "trace_bytes"));
        EXPECT_EQ(traced, bytes > 0) << "a trace file is written exactly when asked for";
    }
    const cJSON *targets = cJSON_GetObjectItem(doc, "targets");
    ASSERT_TRUE(cJSON_IsArray(targets));
    EXPECT_EQ(cJSON_GetArraySize(targets), 11);
    // section 6: both paths of both jobs ran and passed; the floor was measured
    const cJSON *e2e = cJSON_GetObjectItem(doc, "end_to_end");
    ASSERT_TRUE(cJSON_IsObject(e2e));
    EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(e2e, "floor_ns_per_switch")), 0);
    for (const char *k :
         {"timing_largest_current", "timing_largest_old", "functional_current", "functional_old"}) {
        const cJSON *j = cJSON_GetObjectItem(e2e, k);
        ASSERT_TRUE(cJSON_IsObject(j)) << k;
        EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")), "pass") << k;
        EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "cpu_s")), 0) << k;
        EXPECT_GT(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "instructions")), 0) << k;
    }
    cJSON_ArrayForEach(row, targets)
    {
        const cJSON *met = cJSON_GetObjectItem(row, "met");
        EXPECT_TRUE(cJSON_IsBool(met) || cJSON_IsNull(met));
    }
    EXPECT_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "failed_measurements")), 0);
    cJSON_Delete(doc);
    unlink(json.c_str());
    rmdir(dir);
}

TEST(Bench, BadOptionsAreUsageErrors)
{
    std::string out;
    EXPECT_EQ(run("bench --bogus", &out), 2);
    EXPECT_NE(out.find("unknown option '--bogus'"), std::string::npos) << out;
    EXPECT_EQ(run("bench --json", &out), 2);
    EXPECT_NE(out.find("--json needs a value"), std::string::npos) << out;
    EXPECT_EQ(run("bench --quick --configs /nonexistent-dir", &out), 2);
    EXPECT_NE(out.find("cannot read /nonexistent-dir"), std::string::npos) << out;
    for (const char *v : {"0", "-3", "1.5", "abc", "86401"}) {
        EXPECT_EQ(run(std::string("bench --scaling --point-cpu-limit ") + v, &out), 2) << v;
        EXPECT_NE(out.find("--point-cpu-limit: "), std::string::npos) << out;
    }
    EXPECT_EQ(run("bench --scaling --point-cpu-limit", &out), 2);
    EXPECT_NE(out.find("--point-cpu-limit needs a value"), std::string::npos) << out;
}

// A point of `bench --scaling` that spins (fault_spin, in the gensweep_faults binary) is stopped
// at its CPU limit (RLIMIT_CPU: CPU time, so the same however loaded the machine): the kernel's
// sizes are reported as not reached, in the text and the JSON, and the section ends (exit 1: a
// measurement could not be taken) instead of running on.
TEST(Bench, ScalingPointOverItsCpuLimitIsNotReachedAndTheSectionEnds)
{
    char dir[] = "/tmp/gs-test-bench-cpu-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string json = std::string(dir) + "/b.json";
    std::string out;
    EXPECT_EQ(run(std::string("bench --scaling --quick --scaling-kernels fault_spin "
                              "--point-cpu-limit 1 --configs ") +
                      GS_SOURCE_DIR + "/configs --json " + json,
                  &out, GS_FAULTS_BIN),
              1)
        << out;
    EXPECT_NE(out.find("at most 1 CPU s a point"), std::string::npos) << out;
    EXPECT_NE(out.find("not reached (cpu-limit)"), std::string::npos) << out;
    EXPECT_NE(out.find("1 kernel not measured at every size"), std::string::npos) << out;
    EXPECT_EQ(out.find("target met"), std::string::npos) << out;
    cJSON *doc = cJSON_Parse(slurp(json).c_str());
    ASSERT_NE(doc, nullptr) << slurp(json);
    const cJSON *rows = cJSON_GetObjectItem(doc, "scaling");
    ASSERT_EQ(cJSON_GetArraySize(rows), 1);
    const cJSON *row = cJSON_GetArrayItem(rows, 0);
    EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "kernel")), "fault_spin");
    const cJSON *sizes = cJSON_GetObjectItem(row, "sizes");
    ASSERT_EQ(cJSON_GetArraySize(sizes), 3);
    const cJSON *z;
    cJSON_ArrayForEach(z, sizes)
    {
        EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(z, "status")), "cpu-limit");
        EXPECT_EQ(cJSON_GetObjectItem(z, "cpu_s"), nullptr);
    }
    cJSON_Delete(doc);
    unlink(json.c_str());
    rmdir(dir);
}

TEST(Bench, UnwritableJsonPathFails)
{
    std::string out;
    EXPECT_EQ(run(std::string("bench --quick --no-sweep --configs ") + GS_SOURCE_DIR +
                      "/configs --json /nonexistent-dir/b.json",
                  &out),
              1);
    EXPECT_NE(out.find("gensweep bench:"), std::string::npos) << out;
}

// The generations of a configs directory, in the library (no binary): every DIR/NAME.yaml in
// name order with the name inside it; subdirectories, hidden files and other files are not
// generations; a config that does not load is a usage error naming its file and line.
TEST(BenchLib, GenerationsAreTheYamlFilesOfTheDirectory)
{
    char dir[] = "/tmp/gs-test-bench-gens-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string d = dir, src = std::string(GS_SOURCE_DIR) + "/configs/";
    ASSERT_EQ(std::system(("cp " + src + "gen2.yaml " + d + "/b.yaml && cp " + src + "gen1.yaml " +
                           d + "/a.yaml && mkdir " + d + "/sub && cp " + src + "gen3.yaml " + d +
                           "/sub/c.yaml && cp " + src + "gen3.yaml " + d + "/.h.yaml && touch " +
                           d + "/notes.txt")
                              .c_str()),
              0);
    gs_bench_gen *g = nullptr;
    size_t n = 0;
    gs_diags diags;
    gs_diags_init(&diags);
    ASSERT_EQ(gs_bench_find_generations(dir, &g, &n, &diags), GS_OK);
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(std::string(g[0].path), d + "/a.yaml");
    EXPECT_STREQ(g[0].stem, "a");
    EXPECT_STREQ(g[0].name, "gen1");
    EXPECT_STREQ(g[1].name, "gen2");
    gs_bench_generations_free(g, n);

    std::ofstream(d + "/c.yaml") << "name: broken\nchip: [\n";
    EXPECT_EQ(gs_bench_find_generations(dir, &g, &n, &diags), GS_ERR_USAGE);
    ASSERT_GE(diags.count, 1u);
    EXPECT_EQ(std::string(diags.items[0].file), d + "/c.yaml");
    EXPECT_GT(diags.items[0].line, 0);
    gs_diags_free(&diags);

    // a run over a directory without generations stops before measuring anything
    gs_bench_opts o{};
    o.configs = "/nonexistent-dir";
    gs_bench_result r;
    gs_diags_init(&diags);
    EXPECT_EQ(gs_bench_run(&o, &r, &diags), GS_ERR_USAGE);
    EXPECT_EQ(r.doc, nullptr);
    ASSERT_EQ(diags.count, 1u);
    EXPECT_NE(std::string(diags.items[0].message).find("cannot read /nonexistent-dir"),
              std::string::npos);
    gs_diags_free(&diags);
    EXPECT_EQ(std::system(("rm -rf '" + d + "'").c_str()), 0);
}

} // namespace
