// gensweep attribute: which parameter changes explain a speedup between two configs. Small
// configs (gen2 and a child of it with two changed values) and one kernel keep it quick.
#include <gtest/gtest.h>

#include "../support/cli_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace
{

std::string slurp(const std::string &path)
{
    return gs_test_slurp(path);
}

std::string dir()
{
    static std::string d;
    if (d.empty()) {
        d = std::string(GS_BINARY_DIR) + "/test_attribute-" + std::to_string(getpid());
        EXPECT_EQ(std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "' && cp '" +
                               GS_SOURCE_DIR + "/configs/gen2.yaml' '" + d + "/a.yaml'")
                                  .c_str()),
                  0);
        // the child changes one value that moves DMA-bound times and one that moves nothing
        std::ofstream(d + "/b.yaml") << "name: gen2-fastdma\nextends: a\n"
                                        "description: gen2 with 2x per-engine DMA (test)\n"
                                        "core:\n  dma:\n    bandwidth_per_engine: \"34B/ns "
                                        "[assumed: test, 2x gen2]\"\n"
                                        "chip:\n  hbm:\n    capacity: \"64GiB [assumed: test]\"\n";
    }
    return d;
}

CliRun gensweep(const std::string &args)
{
    return gs_test_gensweep(args);
}

const cJSON *param(const cJSON *doc, const char *key)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(doc, "params"))
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(p, "key");
        if (cJSON_IsString(k) && std::string(k->valuestring) == key) return p;
    }
    return nullptr;
}

double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

TEST(Attribute, SharesOfTwoChanges)
{
    std::string out = dir() + "/out";
    CliRun r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() +
                        "/b.yaml' --suite perf --kernels elementwise_add,softmax -j 2 --out '" +
                        out + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("2 numeric parameters differ"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("core.dma.bandwidth_per_engine"), std::string::npos);
    std::string text = slurp(out + "/attribute.json");
    cJSON *doc = cJSON_Parse(text.c_str());
    ASSERT_NE(doc, nullptr) << text;
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(doc, "schema")->valuestring,
                 "gensweep-attribute");
    const cJSON *dma = param(doc, "core.dma.bandwidth_per_engine");
    const cJSON *cap = param(doc, "chip.hbm.capacity");
    ASSERT_NE(dma, nullptr);
    ASSERT_NE(cap, nullptr);
    // HBM capacity does not enter any time: exactly 1x alone, no share
    EXPECT_EQ(num(cap, "geomean"), 1.0);
    EXPECT_EQ(num(cap, "share"), 0.0);
    // faster DMA makes these memory-bound kernels faster and explains (nearly) all of it
    double all = num(cJSON_GetObjectItemCaseSensitive(doc, "all"), "geomean");
    EXPECT_GT(all, 1.05);
    EXPECT_GT(num(dma, "share"), 0.9);
    // shares + interactions add up to 1 by construction of the log-space split
    EXPECT_NEAR(num(dma, "share") + num(cap, "share") + num(doc, "interaction_share"), 1.0, 1e-9);
    // B differs from A in these two values only: every change applied == B itself
    EXPECT_DOUBLE_EQ(all, num(cJSON_GetObjectItemCaseSensitive(doc, "to_all"), "geomean"));
    EXPECT_GT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "jobs")), 2);
    cJSON_Delete(doc);
    // the report renders it in the verdict for the pair and in the attribution table
    std::string html = dir() + "/r.html";
    r = gensweep("report '" + out + "/from/results.json' --attribute '" + out +
                 "/attribute.json' -o '" + html + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::string page = slurp(html);
    EXPECT_NE(page.find("<h3 id=\"attribution\">Attribution</h3>"), std::string::npos);
    EXPECT_NE(page.find("<code>core.dma.bandwidth_per_engine</code>"), std::string::npos);
}

TEST(Attribute, BadInputIsExit2)
{
    CliRun r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() + "/a.yaml'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("no numeric parameter differs"), std::string::npos) << r.err;
    r = gensweep("attribute --from '" + dir() + "/a.yaml'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--from A.yaml and --to B.yaml are required"), std::string::npos);
    r = gensweep("attribute --from '" + dir() + "/missing.yaml' --to '" + dir() + "/a.yaml'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
    r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() +
                 "/b.yaml' --set core.sbuf=x2");
    EXPECT_EQ(r.rc, 2);
    r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() +
                 "/b.yaml' --kernels no_such_kernel --out '" + dir() + "/out-bad'");
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
}

} // namespace
