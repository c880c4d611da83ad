// junit.xml as CI servers read it: valid against the strict Jenkins JUnit schema
// (tests/junit/jenkins-junit.xsd, checked with xmllint) for a full sweep, a shard, a merge with a
// shard missing and a results file with a skipped job; the planned jobs a merge lacks are failed
// test cases ("not run: shard missing"), so an incomplete merge is never green; each job's
// simulated time is a property.
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "../support/cli_run.h"

namespace
{

const std::string kXsd = std::string(GS_SOURCE_DIR) + "/tests/junit/jenkins-junit.xsd";

size_t count(const std::string &s, const std::string &what)
{
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size()))
        ++n;
    return n;
}

/* The value of attribute `attr` of the first `<elem ` in xml (-1 if absent). */
long attr_of(const std::string &xml, const std::string &elem, const std::string &attr)
{
    const size_t e = xml.find("<" + elem + " ");
    if (e == std::string::npos) return -1;
    const size_t end = xml.find('>', e);
    const size_t a = xml.find(" " + attr + "=\"", e);
    if (a == std::string::npos || a > end) return -1;
    return std::strtol(xml.c_str() + a + attr.size() + 3, nullptr, 10);
}

/* xmllint's verdict on `path` against the schema ("" when valid, else its messages). */
std::string schema_errors(const std::string &path)
{
    const std::string out = path + ".xmllint";
    const std::string cmd =
        "xmllint --noout --schema '" + kXsd + "' '" + path + "' >'" + out + "' 2>&1";
    const int st = std::system(cmd.c_str());
    std::string msg = gs_test_slurp(out);
    std::remove(out.c_str());
    return st == 0 ? "" : (msg.empty() ? "xmllint failed" : msg);
}

TEST(JUnit, ValidAgainstTheStrictSchemaAndAnIncompleteMergeFails)
{
    ASSERT_EQ(std::system("command -v xmllint >/dev/null 2>&1"), 0)
        << "xmllint not found (Debian package libxml2-utils, installed by .ci/deps)";
    char dir[] = "/tmp/gs-test-junit-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string d = dir;
    const std::string sel = " --configs configs/gen1.yaml configs/gen2.yaml --kernels "
                            "elementwise_add --quiet -j 2 --out '" +
                            d;
    for (int s = 1; s <= 3; ++s) {
        const CliRun r = gs_test_gensweep("sweep --shard " + std::to_string(s) + "/3" + sel + "/s" +
                                          std::to_string(s) + "'");
        ASSERT_EQ(r.rc, 0) << r.err;
    }
    const CliRun full = gs_test_gensweep("sweep" + sel + "/full'");
    ASSERT_EQ(full.rc, 0) << full.err;
    const CliRun m = gs_test_gensweep("merge --out '" + d + "/part' '" + d + "/s1' '" + d + "/s3'");
    ASSERT_EQ(m.rc, 1) << "a merge with a shard missing is incomplete\n" << m.err;
    // a results file with a skipped (unsupported) job
    const CliRun fx = gs_test_gensweep("merge --out '" + d + "/fixture' tests/report/check.json");
    ASSERT_NE(fx.rc, 2) << fx.err;

    for (const char *sub : {"full", "s2", "part", "fixture"}) {
        const std::string path = d + "/" + sub + "/junit.xml";
        ASSERT_FALSE(gs_test_slurp(path).empty()) << path;
        EXPECT_EQ(schema_errors(path), "") << sub;
    }
    EXPECT_GT(count(gs_test_slurp(d + "/fixture/junit.xml"), "<skipped "), 0u);

    // the merge of shards 1 and 3: shard 2's jobs are failed test cases
    cJSON *part = cJSON_Parse(gs_test_slurp(d + "/part/results.json").c_str());
    cJSON *s2 = cJSON_Parse(gs_test_slurp(d + "/s2/results.json").c_str());
    ASSERT_NE(part, nullptr);
    ASSERT_NE(s2, nullptr);
    const int planned = (int)cJSON_GetObjectItemCaseSensitive(part, "planned_jobs")->valuedouble;
    const int present = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(part, "jobs"));
    const int lost = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s2, "jobs"));
    ASSERT_GT(lost, 0);
    EXPECT_EQ(present + lost, planned);
    const std::string xml = gs_test_slurp(d + "/part/junit.xml");
    EXPECT_EQ(attr_of(xml, "testsuites", "tests"), planned);
    EXPECT_GE(attr_of(xml, "testsuites", "failures"), lost);
    // each by its id, with the shard that was to run it (merge plans the sweep again)
    EXPECT_EQ(count(xml, "<failure message=\"not run: shard 2/3 missing\""), (size_t)lost);
    const cJSON *lj;
    cJSON_ArrayForEach(lj, cJSON_GetObjectItemCaseSensitive(s2, "jobs"))
    {
        const std::string id = cJSON_GetObjectItemCaseSensitive(lj, "id")->valuestring;
        EXPECT_NE(xml.find("name=\"" + id + "\""), std::string::npos) << id;
    }
    EXPECT_EQ(count(xml, "<testcase "), (size_t)planned);
    // a complete sweep has none, and its counts are its jobs
    const std::string fxml = gs_test_slurp(d + "/full/junit.xml");
    EXPECT_EQ(count(fxml, "not run"), 0u);
    EXPECT_EQ(attr_of(fxml, "testsuites", "tests"), planned);
    EXPECT_EQ(attr_of(fxml, "testsuites", "failures"), 0);
    // a shard's own file is judged against its share of the plan
    EXPECT_EQ(count(gs_test_slurp(d + "/s2/junit.xml"), "not run"), 0u);

    // every job's simulated time as a property of its suite, equal to the results'
    const cJSON *j;
    size_t timed = 0;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(part, "jobs"))
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "time_ns");
        if (!cJSON_IsNumber(t)) continue;
        ++timed;
        const std::string key =
            "<property name=\"" +
            std::string(cJSON_GetObjectItemCaseSensitive(j, "id")->valuestring) +
            ".simulated_time_ns\" value=\"";
        const size_t p = xml.find(key);
        ASSERT_NE(p, std::string::npos) << key;
        const double v = std::strtod(xml.c_str() + p + key.size(), nullptr);
        EXPECT_EQ(v, t->valuedouble) << key;
    }
    EXPECT_GT(timed, 0u);
    cJSON_Delete(part);
    cJSON_Delete(s2);
    std::system(("rm -rf '" + d + "'").c_str());
}

// The jobs a sweep did not run, as it or a shard named them itself ("not_run" with a "why": an
// interrupted sweep), stay named through a merge that cannot plan the sweep again (no
// "planned_jobs" plan to make: the list is kept as it is), and junit.xml names each with its
// why, escaped, still valid against the strict schema.
TEST(JUnit, JobsNotRunKeepTheirNameAndWhyThroughAMerge)
{
    ASSERT_EQ(std::system("command -v xmllint >/dev/null 2>&1"), 0);
    char dir[] = "/tmp/gs-test-junit-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string d = dir;
    cJSON *doc =
        cJSON_Parse(gs_test_slurp(std::string(GS_SOURCE_DIR) + "/tests/report/check.json").c_str());
    ASSERT_NE(doc, nullptr);
    const int have = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "jobs"));
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "complete", cJSON_CreateFalse());
    cJSON_AddBoolToObject(doc, "interrupted", 1);
    cJSON_AddNumberToObject(doc, "planned_jobs", have + 2);
    cJSON *nr = cJSON_Parse("[{\"id\": \"gen2/x/a\", \"shard\": 1, \"shards\": 1, \"why\": "
                            "\"interrupted\"}, {\"id\": \"gen3/y/<b>\", \"shard\": 1, "
                            "\"shards\": 1, \"why\": \"a \\\"<q>&\"}]");
    ASSERT_NE(nr, nullptr);
    cJSON_AddItemToObject(doc, "not_run", nr);
    char *text = cJSON_Print(doc);
    std::system(("mkdir -p '" + d + "/in'").c_str());
    FILE *f = std::fopen((d + "/in/results.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text, f);
    std::fclose(f);
    cJSON_free(text);
    cJSON_Delete(doc);
    const CliRun m = gs_test_gensweep("merge --out '" + d + "/m' '" + d + "/in'");
    EXPECT_EQ(m.rc, 1) << m.err;
    const std::string xml = gs_test_slurp(d + "/m/junit.xml");
    EXPECT_EQ(schema_errors(d + "/m/junit.xml"), "");
    EXPECT_NE(xml.find("classname=\"gensweep.not-run.gen2\" name=\"gen2/x/a\""), std::string::npos)
        << xml;
    EXPECT_NE(xml.find("<failure message=\"not run: interrupted\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("name=\"gen3/y/&lt;b&gt;\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("<failure message=\"not run: a &quot;&lt;q&gt;&amp;\""), std::string::npos)
        << xml;
    EXPECT_EQ(count(xml, "not run 1 of"), 0u);
    EXPECT_NE(m.err.find("not run: gen2/x/a (shard 1/1: interrupted)"), std::string::npos) << m.err;
    std::system(("rm -rf '" + d + "'").c_str());
}

} // namespace
