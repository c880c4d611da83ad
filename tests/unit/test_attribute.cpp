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
        // DMA and HBM both binding: either alone barely helps, both together do
        std::ofstream(d + "/co.yaml") << "name: gen2-co\nextends: a\ndescription: test\n"
                                         "core:\n  dma:\n    bandwidth_per_engine: \"8B/ns "
                                         "[assumed: test]\"\n"
                                         "chip:\n  hbm:\n    bandwidth: \"128GB/s [assumed: "
                                         "test]\"\n";
        std::ofstream(d + "/co2.yaml") << "name: gen2-co2\nextends: co\ndescription: test\n"
                                          "core:\n  dma:\n    bandwidth_per_engine: \"32B/ns "
                                          "[assumed: test]\"\n"
                                          "    fixed_latency: \"1us [assumed: test]\"\n"
                                          "chip:\n  hbm:\n    bandwidth: \"512GB/s [assumed: "
                                          "test]\"\n";
        // a change that moves no time: no speedup to share out
        std::ofstream(d + "/cap.yaml") << "name: gen2-cap\nextends: a\ndescription: test\n"
                                          "chip:\n  hbm:\n    capacity: \"64GiB [assumed: "
                                          "test]\"\n";
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
    CliRun r = gensweep(
        "attribute --from '" + dir() + "/a.yaml' --to '" + dir() +
        "/b.yaml' --keys --suite perf --kernels elementwise_add,softmax -j 2 --out '" + out + "'");
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

cJSON *load(const std::string &path)
{
    std::string text = slurp(path);
    cJSON *doc = cJSON_Parse(text.c_str());
    EXPECT_NE(doc, nullptr) << text;
    return doc;
}

bool exists(const std::string &path)
{
    return access(path.c_str(), F_OK) == 0;
}

// A parameter group is one swap: every differing key of it in one run, none run alone.
TEST(Attribute, GroupSwapsAllItsKeys)
{
    std::string out = dir() + "/out-groups";
    CliRun r = gensweep("attribute --from '" + dir() + "/co.yaml' --to '" + dir() +
                        "/co2.yaml' --kernels elementwise_add -j 2 --pairs 0 --out '" + out + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("3 numeric parameters differ, in 2 parameter groups"), std::string::npos)
        << r.out;
    EXPECT_TRUE(exists(out + "/only-dma/results.json"));
    EXPECT_TRUE(exists(out + "/only-hbm/results.json"));
    EXPECT_FALSE(exists(out + "/only-core.dma.fixed_latency"));
    cJSON *doc = load(out + "/attribute.json");
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "params")), 2);
    const cJSON *dma = param(doc, "dma");
    ASSERT_NE(dma, nullptr);
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dma, "group")));
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(dma, "keys");
    ASSERT_EQ(cJSON_GetArraySize(keys), 2);
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(keys, 0), "key")->valuestring,
                 "core.dma.bandwidth_per_engine");
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(keys, 1), "key")->valuestring,
                 "core.dma.fixed_latency");
    cJSON_Delete(doc);
    // --keys: one item (and one run) per key again
    std::string outk = dir() + "/out-keys";
    r = gensweep("attribute --from '" + dir() + "/co.yaml' --to '" + dir() +
                 "/co2.yaml' --keys --kernels elementwise_add -j 2 --pairs 0 --out '" + outk + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_TRUE(exists(outk + "/only-core.dma.fixed_latency/results.json"));
    doc = load(outk + "/attribute.json");
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "params")), 3);
    cJSON_Delete(doc);
}

// Two groups that only help together: their pair carries the interaction, by name.
TEST(Attribute, PairwiseInteractionIsNamed)
{
    std::string out = dir() + "/out-pairs";
    CliRun r = gensweep("attribute --from '" + dir() + "/co.yaml' --to '" + dir() +
                        "/co2.yaml' --kernels elementwise_add -j 2 --out '" + out + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("hbm + dma together"), std::string::npos) << r.out;
    cJSON *doc = load(out + "/attribute.json");
    ASSERT_NE(doc, nullptr);
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(doc, "pairs");
    ASSERT_EQ(cJSON_GetArraySize(pairs), 1);
    const cJSON *p = cJSON_GetArrayItem(pairs, 0);
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(p, "a")->valuestring, "hbm");
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(p, "b")->valuestring, "dma");
    double inter = num(doc, "interaction_share"), ps = num(p, "share");
    // neither alone explains most of it; the pair explains the interactions
    EXPECT_LT(num(param(doc, "hbm"), "share"), 0.5);
    EXPECT_LT(num(param(doc, "dma"), "share"), 0.5);
    EXPECT_GT(inter, 0.3);
    EXPECT_GT(ps, 0.3);
    EXPECT_GT(num(p, "interaction"), 1.2);
    // with two items the pair is the whole interaction
    EXPECT_NEAR(num(doc, "residual_share"), 0.0, 1e-9);
    EXPECT_NEAR(ps, inter, 1e-9);
    cJSON_Delete(doc);
    std::string html = dir() + "/r-pairs.html";
    r = gensweep("report '" + out + "/from/results.json' --attribute '" + out +
                 "/attribute.json' -o '" + html + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(slurp(html).find("<code>hbm</code> + <code>dma</code> together"), std::string::npos);
}

// Values in their units (not 3.35544e+07 B or 4900 B/ns), numbers still numbers in JSON.
TEST(Attribute, ValuesInTheirUnits)
{
    std::string out = dir() + "/out-units";
    CliRun r = gensweep("attribute --from '" + dir() + "/co.yaml' --to '" + dir() +
                        "/co2.yaml' --kernels elementwise_add -j 2 --pairs 0 --out '" + out + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("128GB/s -> 512GB/s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("8GB/s -> 32GB/s"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("e+"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("B/ns"), std::string::npos) << r.out;
    cJSON *doc = load(out + "/attribute.json");
    ASSERT_NE(doc, nullptr);
    const cJSON *k =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(param(doc, "hbm"), "keys"), 0);
    EXPECT_EQ(num(k, "from"), 128.0);
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(k, "from_text")->valuestring, "128GB/s");
    cJSON_Delete(doc);
}

// A change that moves no time: the shares cannot be formed, and say why instead of nan.
TEST(Attribute, NoNanWhenNothingMoves)
{
    std::string out = dir() + "/out-cap";
    CliRun r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() +
                        "/cap.yaml' --kernels elementwise_add -j 2 --out '" + out + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("64GiB"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("explains -  (every change together leaves the time unchanged)"),
              std::string::npos)
        << r.out;
    std::string text = slurp(out + "/attribute.json");
    EXPECT_EQ(text.find("nan"), std::string::npos) << text;
    std::string html = dir() + "/r-cap.html";
    r = gensweep("report '" + out + "/from/results.json' --attribute '" + out +
                 "/attribute.json' -o '" + html + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::string page = slurp(html);
    EXPECT_EQ(page.find("nan"), std::string::npos);
    EXPECT_NE(page.find("every change together leaves the time unchanged"), std::string::npos);
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
    r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() + "/b.yaml' --pairs 9");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--pairs needs a count 0 .. 8"), std::string::npos) << r.err;
    r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() +
                 "/b.yaml' --set core.sbuf=x2");
    EXPECT_EQ(r.rc, 2);
    r = gensweep("attribute --from '" + dir() + "/a.yaml' --to '" + dir() +
                 "/b.yaml' --kernels no_such_kernel --out '" + dir() + "/out-bad'");
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
}

} // namespace
