// Results library: the CI gate's error rule (tolerance, not exact equality), the schema
// validator shared by merge/compare/baseline/report, merge completeness, and merge/compare
// scaling. Synthetic documents only: no sweep, no BLAS.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "compare.h"
#include "job_status.h"
#include "results.h"

namespace
{

// A results.json-shaped document with one job per (id, max_abs, tol_abs).
struct Job {
    std::string id;
    double max_abs;
    double tol_abs; // NAN: no tolerance recorded
    double time_ns = 1000.0;
    const char *status = "pass";
};

cJSON *make_doc(const std::vector<Job> &jobs)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "schema", GS_RESULTS_SCHEMA);
    cJSON_AddNumberToObject(d, "schema_version", GS_RESULTS_SCHEMA_VERSION);
    cJSON *arr = cJSON_AddArrayToObject(d, "jobs");
    for (const Job &j : jobs) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", j.id.c_str());
        cJSON_AddStringToObject(o, "status", j.status);
        cJSON_AddNumberToObject(o, "time_ns", j.time_ns);
        cJSON *e = cJSON_AddObjectToObject(o, "error");
        cJSON_AddBoolToObject(e, "checked", 1);
        cJSON_AddNumberToObject(e, "max_abs", j.max_abs);
        if (std::isnan(j.tol_abs))
            cJSON_AddNullToObject(e, "tol_abs");
        else
            cJSON_AddNumberToObject(e, "tol_abs", j.tol_abs);
        cJSON_AddItemToArray(arr, o);
    }
    return d;
}

gs_compare_summary compare(cJSON *a, cJSON *b, std::string *text = nullptr)
{
    gs_compare_summary s;
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gs_compare_docs(a, b, 0.02, f, &s);
    fclose(f);
    if (text) *text = buf ? buf : "";
    free(buf);
    return s;
}

const char *kId = "gen1/mlp/unfused/fp32/256x128x128";

} // namespace

// The errors seen on a CPU whose OpenBLAS picks other kernels: same job, errors differing in
// the last bits and a little more, far inside the tolerance. Not a regression.
TEST(CompareGate, ErrorsDifferingInTheLastBitsAreNotRegressions)
{
    const double tol = 6.1e-5;
    cJSON *base = make_doc({{kId, 5.4756025580360301e-06, tol}});
    cJSON *cur = make_doc({{kId, 5.53081e-06, tol}});
    std::string text;
    gs_compare_summary s = compare(base, cur, &text);
    EXPECT_EQ(s.regressions, 0) << text;
    EXPECT_EQ(s.compared, 1);
    cJSON_Delete(cur);
    // one ulp above, too
    cur = make_doc({{kId, std::nextafter(5.4756025580360301e-06, 1.0), tol}});
    EXPECT_EQ(compare(base, cur).regressions, 0);
    cJSON_Delete(cur);
    cJSON_Delete(base);
}

TEST(CompareGate, ErrorGrowingPastAFractionOfTheToleranceRegresses)
{
    const double tol = 1e-4, be = 1e-5;
    cJSON *base = make_doc({{kId, be, tol}});
    cJSON *ok = make_doc({{kId, be + 0.9 * GS_COMPARE_ERR_TOL_FRACTION * tol, tol}});
    cJSON *bad = make_doc({{kId, be + 1.1 * GS_COMPARE_ERR_TOL_FRACTION * tol, tol}});
    EXPECT_EQ(compare(base, ok).regressions, 0);
    std::string text;
    EXPECT_EQ(compare(base, bad, &text).regressions, 1);
    EXPECT_NE(text.find("REGRESSION  " + std::string(kId) + ": max abs error"), std::string::npos)
        << text;
    EXPECT_NE(text.find("of the tolerance"), std::string::npos) << text;
    // shrinking is never a regression
    EXPECT_EQ(compare(bad, base).regressions, 0);
    cJSON_Delete(base);
    cJSON_Delete(ok);
    cJSON_Delete(bad);
}

// A committed baseline written before tolerances were recorded: the new results' tolerance
// decides; with no tolerance anywhere a relative rule applies, still not exact equality.
TEST(CompareGate, ToleranceFromEitherSideOrRelativeFallback)
{
    const double nan = NAN;
    cJSON *base = make_doc({{kId, 5.4756025580360301e-06, nan}});
    cJSON *cur = make_doc({{kId, 5.53081e-06, 6.1e-5}});
    EXPECT_EQ(compare(base, cur).regressions, 0);
    cJSON_Delete(cur);
    cur = make_doc({{kId, 5.53081e-06, nan}});
    EXPECT_EQ(compare(base, cur).regressions, 0);
    cJSON_Delete(cur);
    cur = make_doc({{kId, 5.4756025580360301e-06 * (1.0 + 2 * GS_COMPARE_ERR_REL_FALLBACK), nan}});
    EXPECT_EQ(compare(base, cur).regressions, 1);
    cJSON_Delete(cur);
    // a baseline carrying the tolerance is used when the new side has none
    cJSON *tb = make_doc({{kId, 1e-5, 1e-4}});
    cur = make_doc({{kId, 1e-5 + 0.5e-5, nan}});
    EXPECT_EQ(compare(tb, cur).regressions, 0);
    cJSON_Delete(cur);
    cur = make_doc({{kId, 1e-5 + 2e-5, nan}});
    EXPECT_EQ(compare(tb, cur).regressions, 1);
    cJSON_Delete(cur);
    cJSON_Delete(tb);
    cJSON_Delete(base);
}

// A job that starts failing is a regression however small the numbers look.
TEST(CompareGate, FailingJobRegressesThroughItsStatus)
{
    Job b{kId, 1e-5, 1e-4};
    Job c{kId, 1e-5, 1e-4};
    c.status = "fail";
    cJSON *base = make_doc({b});
    cJSON *cur = make_doc({c});
    EXPECT_EQ(compare(base, cur).regressions, 1);
    cJSON_Delete(base);
    cJSON_Delete(cur);
}

// Equal statuses are judged on time and error whatever the status: a job failing on both sides
// whose time grew is a regression, one that got faster an improvement (a gate that looked at
// the times of passing jobs only would pass it).
TEST(CompareGate, TimesOfJobsWithEqualNonPassStatusesAreCompared)
{
    for (const char *status : {"fail", "crash"}) {
        Job b{kId, 1e-5, 1e-4, 1000.0, status};
        Job slow{kId, 1e-5, 1e-4, 1500.0, status};
        Job fast{kId, 1e-5, 1e-4, 500.0, status};
        cJSON *base = make_doc({b}), *cs = make_doc({slow}), *cf = make_doc({fast});
        std::string text;
        gs_compare_summary s = compare(base, cs, &text);
        EXPECT_EQ(s.regressions, 1) << status << "\n" << text;
        EXPECT_NE(text.find("REGRESSION  " + std::string(kId) + ": time"), std::string::npos)
            << text;
        s = compare(base, cf, &text);
        EXPECT_EQ(s.regressions, 0) << status << "\n" << text;
        EXPECT_EQ(s.improvements, 1) << status << "\n" << text;
        for (cJSON *d : {base, cs, cf})
            cJSON_Delete(d);
    }
}

// The threshold is a limit the change may reach: exactly +threshold is not a regression and
// exactly -threshold not an improvement (values exact in binary: 2 -> 3 is +50 %).
TEST(CompareGate, AChangeOfExactlyTheThresholdIsNotAFinding)
{
    cJSON *base = make_doc({{kId, 1e-5, 1e-4, 2.0}});
    cJSON *up = make_doc({{kId, 1e-5, 1e-4, 3.0}});
    cJSON *down = make_doc({{kId, 1e-5, 1e-4, 1.0}});
    cJSON *past = make_doc({{kId, 1e-5, 1e-4, std::nextafter(3.0, 4.0)}});
    gs_compare_summary s;
    gs_compare_docs(base, up, 0.5, nullptr, &s);
    EXPECT_EQ(s.regressions, 0);
    gs_compare_docs(base, down, 0.5, nullptr, &s);
    EXPECT_EQ(s.improvements, 0);
    gs_compare_docs(base, past, 0.5, nullptr, &s);
    EXPECT_EQ(s.regressions, 1);
    for (cJSON *d : {base, up, down, past})
        cJSON_Delete(d);
}

// Results that say they did not run everything fail the gate even with nothing to compare:
// an interrupted sweep with no jobs, a file marked incomplete, planned jobs absent, a whole
// generation of the file's configs without a job. A shard is judged on its own share.
TEST(CompareGate, NewResultsThatDidNotAllRunFailTheGate)
{
    cJSON *base = make_doc({{kId, 1e-5, 1e-4}});
    auto with = [](cJSON *d, const char *key, cJSON *v) {
        cJSON_AddItemToObject(d, key, v);
        return v;
    };
    cJSON *full = make_doc({{kId, 1e-5, 1e-4}});
    with(full, "complete", cJSON_CreateTrue());
    with(full, "interrupted", cJSON_CreateFalse());
    with(full, "planned_jobs", cJSON_CreateNumber(1));
    std::string text;
    gs_compare_summary s = compare(base, full, &text);
    EXPECT_FALSE(gs_compare_failed(&s)) << text;
    EXPECT_EQ(text.find("INCOMPLETE"), std::string::npos) << text;

    cJSON *intr = make_doc({});
    with(intr, "complete", cJSON_CreateFalse());
    with(intr, "interrupted", cJSON_CreateTrue());
    with(intr, "planned_jobs", cJSON_CreateNumber(1));
    s = compare(base, intr, &text);
    EXPECT_EQ(s.regressions, 0);
    EXPECT_EQ(s.incomplete, 1);
    EXPECT_TRUE(gs_compare_failed(&s));
    EXPECT_NE(text.find("INCOMPLETE  the new results did not run everything: the sweep was "
                        "interrupted; 0 of 1 planned jobs present"),
              std::string::npos)
        << text;

    cJSON *marked = make_doc({{kId, 1e-5, 1e-4}});
    with(marked, "complete", cJSON_CreateFalse());
    s = compare(base, marked, &text);
    EXPECT_TRUE(gs_compare_failed(&s)) << text;
    EXPECT_NE(text.find("\"complete\": false"), std::string::npos) << text;

    // gen3 is one of the file's configs and has no job left
    cJSON *nogen = make_doc({{kId, 1e-5, 1e-4}});
    cJSON *cfgs = with(nogen, "configs", cJSON_CreateArray());
    for (const char *g : {"gen1", "gen3"}) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", g);
        cJSON_AddItemToArray(cfgs, c);
    }
    s = compare(base, nogen, &text);
    EXPECT_TRUE(gs_compare_failed(&s)) << text;
    EXPECT_NE(text.find("generation gen3 (in \"configs\") has no jobs"), std::string::npos) << text;
    EXPECT_EQ(text.find("generation gen1"), std::string::npos) << text;

    // shard 2 of 2 of a 3-job plan holds 1 job: complete, not interrupted, its share is there
    cJSON *shard = make_doc({{kId, 1e-5, 1e-4}});
    with(shard, "complete", cJSON_CreateFalse());
    cJSON *sh = with(shard, "shard", cJSON_CreateObject());
    cJSON_AddNumberToObject(sh, "index", 2);
    cJSON_AddNumberToObject(sh, "count", 2);
    with(shard, "planned_jobs", cJSON_CreateNumber(3));
    s = compare(base, shard, &text);
    EXPECT_FALSE(gs_compare_failed(&s)) << text;
    cJSON_ReplaceItemInObject(shard, "planned_jobs", cJSON_CreateNumber(4));
    s = compare(base, shard, &text);
    EXPECT_TRUE(gs_compare_failed(&s)) << text;
    EXPECT_NE(text.find("1 of 2 planned jobs present"), std::string::npos) << text;

    // a baseline file records none of it: nothing to say
    EXPECT_EQ(gs_compare_gaps(base), nullptr);
    for (cJSON *d : {base, full, intr, marked, nogen, shard})
        cJSON_Delete(d);
}

// What the gate cannot compare fails it, named: a time or check record on one side only, a
// time that is not positive, and a generation of the new results with no baseline job (its
// baseline file missing). Each of these passed before as "same", "improved" or "new".
TEST(CompareGate, WhatCannotBeComparedFailsTheGate)
{
    cJSON *base = make_doc({{kId, 1e-5, 1e-4}});
    auto first_job = [](cJSON *d) { return cJSON_GetArrayItem(cJSON_GetObjectItem(d, "jobs"), 0); };
    struct Case {
        const char *what;
        std::function<void(cJSON *)> edit;
        const char *line;
    } cases[] = {
        {"time null",
         [&](cJSON *d) { cJSON_ReplaceItemInObject(first_job(d), "time_ns", cJSON_CreateNull()); },
         "cannot compare: no time in the new results (time_ns null)"},
        {"time absent", [&](cJSON *d) { cJSON_DeleteItemFromObject(first_job(d), "time_ns"); },
         "cannot compare: no time in the new results"},
        {"check record null",
         [&](cJSON *d) { cJSON_ReplaceItemInObject(first_job(d), "error", cJSON_CreateNull()); },
         "cannot compare: no check record in the new results (error.max_abs null)"},
        {"time 0",
         [&](cJSON *d) { cJSON_SetNumberValue(cJSON_GetObjectItem(first_job(d), "time_ns"), 0.0); },
         "cannot compare: the new time_ns is not a positive number"},
        {"time negative",
         [&](cJSON *d) {
             cJSON_SetNumberValue(cJSON_GetObjectItem(first_job(d), "time_ns"), -1000.0);
         },
         "cannot compare: the new time_ns is not a positive number"},
    };
    for (const Case &c : cases) {
        cJSON *cur = make_doc({{kId, 1e-5, 1e-4}});
        c.edit(cur);
        std::string text;
        gs_compare_summary s = compare(base, cur, &text);
        EXPECT_TRUE(gs_compare_failed(&s)) << c.what << "\n" << text;
        EXPECT_EQ(s.uncompared, 1) << c.what;
        EXPECT_EQ(s.improvements, 0) << c.what;
        EXPECT_NE(text.find("REGRESSION  " + std::string(kId) + ": " + c.line), std::string::npos)
            << c.what << "\n"
            << text;
        // the other way round (the baseline lacks it) cannot be compared either
        s = compare(cur, base, &text);
        EXPECT_TRUE(gs_compare_failed(&s)) << c.what << " (in the baseline)\n" << text;
        cJSON_Delete(cur);
    }
    // the same job on both sides still passes
    cJSON *same = make_doc({{kId, 1e-5, 1e-4}});
    std::string text;
    gs_compare_summary s = compare(base, same, &text);
    EXPECT_FALSE(gs_compare_failed(&s)) << text;
    // a generation without a single baseline job (check-gen2.json missing from the directory)
    cJSON *two = make_doc({{kId, 1e-5, 1e-4},
                           {"gen2/mlp/unfused/fp32/256x128x128", 1e-5, 1e-4},
                           {"gen2/mlp/unfused/fp32/512x128x128", 1e-5, 1e-4}});
    s = compare(base, two, &text);
    EXPECT_TRUE(gs_compare_failed(&s)) << text;
    EXPECT_EQ(s.no_baseline, 1) << text;
    EXPECT_EQ(s.regressions, 0) << text;
    EXPECT_NE(text.find("NO BASELINE generation gen2: none of its 2 jobs is in the baseline"),
              std::string::npos)
        << text;
    gs_sb line;
    gs_sb_init(&line);
    gs_compare_summary_line(&line, &s);
    EXPECT_NE(std::string(gs_sb_cstr(&line)).find("1 generation without a baseline"),
              std::string::npos)
        << gs_sb_cstr(&line);
    gs_sb_free(&line);
    // a new job of a generation the baseline has is listed and passes
    cJSON *more = make_doc({{kId, 1e-5, 1e-4}, {"gen1/mlp/unfused/fp32/512x128x128", 1e-5, 1e-4}});
    s = compare(base, more, &text);
    EXPECT_FALSE(gs_compare_failed(&s)) << text;
    EXPECT_EQ(s.added, 1);
    for (cJSON *d : {base, same, two, more})
        cJSON_Delete(d);
}

namespace
{

std::string tmpdir(const std::string &name)
{
    std::string d =
        std::string(GS_BINARY_DIR) + "/test_results/" + name + "-" + std::to_string(getpid());
    std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return d;
}

void write_doc(const cJSON *doc, const std::string &path)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_results_emit(&sb, doc);
    FILE *f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    fwrite(gs_sb_cstr(&sb), 1, sb.len, f);
    fclose(f);
    gs_sb_free(&sb);
}

std::string job_id(size_t i)
{
    char buf[96];
    snprintf(buf, sizeof buf, "gen%zu/kernel%zu/v/bf16/%zux128", i % 3 + 1, i % 7, i);
    return buf;
}

// Shard `index` of `count` of a synthetic sweep of `planned` jobs (job i is in shard
// i % count + 1, as the sweep deals them out in id order).
cJSON *make_shard(size_t planned, int index, int count)
{
    std::vector<std::string> ids;
    for (size_t i = 0; i < planned; i++)
        ids.push_back(job_id(i));
    std::sort(ids.begin(), ids.end());
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "schema", GS_RESULTS_SCHEMA);
    cJSON_AddNumberToObject(d, "schema_version", GS_RESULTS_SCHEMA_VERSION);
    cJSON_AddStringToObject(d, "suite", "check");
    cJSON_AddBoolToObject(d, "complete", count == 1);
    cJSON_AddBoolToObject(d, "interrupted", 0);
    cJSON *sh = cJSON_AddObjectToObject(d, "shard");
    cJSON_AddNumberToObject(sh, "index", index);
    cJSON_AddNumberToObject(sh, "count", count);
    cJSON_AddArrayToObject(d, "overrides");
    cJSON_AddNumberToObject(d, "planned_jobs", (double)planned);
    cJSON_AddArrayToObject(d, "configs");
    cJSON *jobs = cJSON_AddArrayToObject(d, "jobs");
    cJSON *wall = cJSON_AddObjectToObject(d, "wall");
    cJSON *wj = cJSON_AddObjectToObject(wall, "jobs");
    for (size_t i = (size_t)index - 1; i < planned; i += (size_t)count) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", ids[i].c_str());
        cJSON_AddStringToObject(o, "generation", ids[i].substr(0, 4).c_str());
        cJSON_AddStringToObject(o, "status", "pass");
        cJSON_AddNumberToObject(o, "time_ns", 1000.0 + (double)i);
        cJSON *e = cJSON_AddObjectToObject(o, "error");
        cJSON_AddNumberToObject(e, "max_abs", 1e-6);
        cJSON_AddNumberToObject(e, "tol_abs", 1e-4);
        cJSON_AddItemToArray(jobs, o);
        cJSON_AddNumberToObject(wj, ids[i].c_str(), 0.01);
    }
    return d;
}

gs_status validate_text(const std::string &json, gs_error *err)
{
    cJSON *d = cJSON_Parse(json.c_str());
    EXPECT_NE(d, nullptr) << json;
    gs_error_clear(err);
    gs_status st = gs_results_validate(d, "t.json", err);
    cJSON_Delete(d);
    return st;
}

const char *kHead = R"({"schema":"gensweep-results","schema_version":1,)";

} // namespace

TEST(ResultsSchema, ValidatorRefusesWrongTypesMissingAndDuplicateIds)
{
    gs_error err;
    EXPECT_EQ(validate_text(std::string(kHead) + R"("jobs":[{"id":"a","status":"pass"}]})", &err),
              GS_OK)
        << err.message;
    struct Case {
        const char *jobs_and_more;
        const char *fragment;
    } cases[] = {
        {R"("jobs":[null]})", "jobs[0] is null"},
        {R"("jobs":[{"id":7,"status":"pass"}]})", "\"id\" is missing or not a non-empty string"},
        {R"("jobs":[{"status":"pass"}]})", "\"id\" is missing"},
        {R"("jobs":[{"id":"","status":"pass"}]})", "non-empty string"},
        {R"("jobs":[{"id":"a","status":"pass"},{"id":"a","status":"fail"}]})",
         "duplicate job id 'a'"},
        {R"("jobs":[{"id":"a","status":"great"}]})", "unknown status 'great'"},
        {R"("jobs":[{"id":"a","status":"pass","time_ns":"fast"}]})", "\"time_ns\" must be"},
        {R"("jobs":[{"id":"a","status":"pass","error":{"max_abs":"x"}}]})", "error.max_abs"},
        {R"("jobs":[{"id":"a","status":"pass","error":5}]})", "\"error\" must be"},
        {R"("jobs":[{"id":"a","status":"pass","shape":["x"]}]})", "\"shape\" must hold numbers"},
        {R"("jobs":{}})", "no \"jobs\" array"},
        {R"("jobs":[],"complete":"yes"})", "\"complete\" has the wrong type"},
        {R"("jobs":[],"shard":{"index":3,"count":2}})", "\"shard\" must be"},
        {R"("jobs":[{"id":"a","status":"pass"},{"id":"b","status":"pass"}],"planned_jobs":1})",
         "2 jobs, but the plan has 1"},
        {R"("jobs":[],"planned_jobs":-1})", "planned_jobs"},
        // a time of 0 or below would read as an infinite speed-up
        {R"("jobs":[{"id":"a","status":"pass","time_ns":0}]})",
         "\"time_ns\" must be a positive number"},
        {R"("jobs":[{"id":"a","status":"pass","time_ns":-5}]})",
         "\"time_ns\" must be a positive number"},
        {R"("jobs":[{"id":"a","status":"pass","time_ns":1e999}]})",
         "\"time_ns\" must be a positive number"},
    };
    for (const Case &c : cases) {
        EXPECT_EQ(validate_text(std::string(kHead) + c.jobs_and_more, &err), GS_ERR_INVALID)
            << c.jobs_and_more;
        EXPECT_NE(std::string(err.message).find(c.fragment), std::string::npos)
            << c.jobs_and_more << " -> " << err.message;
    }
    // baseline files too
    cJSON *bl = cJSON_Parse(R"({"schema":"gensweep-baseline","schema_version":1,)"
                            R"("jobs":[{"id":"a","status":"pass","time_ns":0}]})");
    gs_error_clear(&err);
    EXPECT_EQ(gs_baseline_validate(bl, "b.json", &err), GS_ERR_INVALID);
    EXPECT_NE(std::string(err.message).find("must be a positive number"), std::string::npos)
        << err.message;
    cJSON_Delete(bl);
    EXPECT_EQ(validate_text(R"({"schema":"gensweep-results","schema_version":2,"jobs":[]})", &err),
              GS_ERR_INVALID);
    EXPECT_EQ(validate_text(R"({"schema":7,"schema_version":1,"jobs":[]})", &err), GS_ERR_INVALID);
    EXPECT_EQ(validate_text(R"([1,2])", &err), GS_ERR_INVALID);
}

TEST(ResultsSchema, ReaderRefusesSpecialFilesAndNulBytes)
{
    std::string d = tmpdir("reader");
    gs_error err;
    gs_error_clear(&err);
    EXPECT_EQ(gs_json_read_file(d.c_str(), &err), nullptr);
    EXPECT_NE(std::string(err.message).find("not a regular file (a directory)"), std::string::npos)
        << err.message;
    gs_error_clear(&err);
    EXPECT_EQ(gs_json_read_file("/dev/zero", &err), nullptr); // would grow without bound
    EXPECT_NE(std::string(err.message).find("a device"), std::string::npos) << err.message;
    std::string fifo = d + "/fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    gs_error_clear(&err);
    EXPECT_EQ(gs_json_read_file(fifo.c_str(), &err), nullptr); // would block forever
    EXPECT_NE(std::string(err.message).find("a FIFO"), std::string::npos) << err.message;
    std::string nul = d + "/nul.json";
    FILE *f = fopen(nul.c_str(), "wb");
    fwrite("{\"a\":1}\0garbage", 1, 15, f);
    fclose(f);
    gs_error_clear(&err);
    EXPECT_EQ(gs_json_read_file(nul.c_str(), &err), nullptr);
    EXPECT_NE(std::string(err.message).find("NUL"), std::string::npos) << err.message;
}

// Shards of one plan made by different builds are not one run stamped with one commit: refused,
// naming both commits (the merge used to stamp the whole with the first shard's commit).
TEST(ResultsMerge, ShardsOfDifferentCommitsAreRefused)
{
    std::string d = tmpdir("merge-commits");
    const char *commits[] = {"aaa111", "bbb222"};
    for (int s = 1; s <= 2; s++) {
        cJSON *doc = make_shard(10, s, 2);
        cJSON *tool = cJSON_AddObjectToObject(doc, "tool");
        cJSON_AddStringToObject(tool, "version", "0.1.0");
        cJSON_AddStringToObject(tool, "commit", commits[s - 1]);
        write_doc(doc, d + "/s" + std::to_string(s) + ".json");
        // the same shard by the first commit
        cJSON_ReplaceItemInObject(tool, "commit", cJSON_CreateString(commits[0]));
        write_doc(doc, d + "/same" + std::to_string(s) + ".json");
        cJSON_Delete(doc);
    }
    std::string p1 = d + "/s1.json", p2 = d + "/s2.json";
    const char *paths[] = {p1.c_str(), p2.c_str()};
    gs_error err;
    gs_error_clear(&err);
    char *why = nullptr;
    cJSON *bad = gs_results_merge(paths, 2, &why, &err);
    EXPECT_EQ(bad, nullptr);
    cJSON_Delete(bad);
    EXPECT_EQ(err.code, GS_ERR_INVALID);
    std::string msg = err.message;
    EXPECT_NE(msg.find("made by commit 'bbb222'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("by commit 'aaa111'"), std::string::npos) << msg;
    EXPECT_STREQ(err.file, p2.c_str());
    std::string q1 = d + "/same1.json", q2 = d + "/same2.json";
    const char *same[] = {q1.c_str(), q2.c_str()};
    gs_error_clear(&err);
    cJSON *m = gs_results_merge(same, 2, &why, &err);
    ASSERT_NE(m, nullptr) << err.message;
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "complete")));
    EXPECT_STREQ(gs_json_str(cJSON_GetObjectItemCaseSensitive(m, "tool"), "commit"), "aaa111");
    cJSON_Delete(m);
    gs_free(why);
}

TEST(ResultsMerge, AllShardsCompleteMissingJobOrShardIncomplete)
{
    std::string d = tmpdir("merge");
    for (int s = 1; s <= 3; s++) {
        cJSON *doc = make_shard(20, s, 3);
        write_doc(doc, d + "/s" + std::to_string(s) + ".json");
        cJSON_Delete(doc);
    }
    std::string p1 = d + "/s1.json", p2 = d + "/s2.json", p3 = d + "/s3.json";
    const char *all[] = {p1.c_str(), p2.c_str(), p3.c_str()};
    gs_error err;
    gs_error_clear(&err);
    char *why = nullptr;
    cJSON *m = gs_results_merge(all, 3, &why, &err);
    ASSERT_NE(m, nullptr) << err.message;
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "complete")));
    EXPECT_EQ(why, nullptr);
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "jobs")), 20);
    cJSON_Delete(m);
    // one shard missing
    m = gs_results_merge(all, 2, &why, &err);
    ASSERT_NE(m, nullptr) << err.message;
    EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(m, "complete")));
    ASSERT_NE(why, nullptr);
    EXPECT_NE(std::string(why).find("1 of 3 shards missing (3/3)"), std::string::npos) << why;
    gs_free(why);
    cJSON_Delete(m);
    // a job deleted from a shard: all shards there, but not all jobs
    cJSON *s2 = make_shard(20, 2, 3);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(s2, "jobs"), 1);
    write_doc(s2, p2);
    cJSON_Delete(s2);
    m = gs_results_merge(all, 3, &why, &err);
    ASSERT_NE(m, nullptr) << err.message;
    EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(m, "complete")));
    ASSERT_NE(why, nullptr);
    EXPECT_NE(std::string(why).find("shard 2/3 has 6 of its 7 planned jobs"), std::string::npos)
        << why;
    EXPECT_NE(std::string(why).find("19 of 20 planned jobs present"), std::string::npos) << why;
    gs_free(why);
    cJSON_Delete(m);
    // a null job: refused before anything is merged
    s2 = make_shard(20, 2, 3);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItemCaseSensitive(s2, "jobs"), 0, cJSON_CreateNull());
    write_doc(s2, p2);
    cJSON_Delete(s2);
    EXPECT_EQ(gs_results_merge(all, 3, &why, &err), nullptr);
    EXPECT_NE(std::string(err.message).find("jobs[0] is null"), std::string::npos) << err.message;
    // the same job in two shards (one of shard 2's replaced by one of shard 1's)
    s2 = make_shard(20, 2, 3);
    cJSON *s1 = make_shard(20, 1, 3);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(s2, "jobs"), 0);
    cJSON_AddItemToArray(
        cJSON_GetObjectItemCaseSensitive(s2, "jobs"),
        cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s1, "jobs"), 0), 1));
    write_doc(s2, p2);
    cJSON_Delete(s1);
    cJSON_Delete(s2);
    EXPECT_EQ(gs_results_merge(all, 3, &why, &err), nullptr);
    EXPECT_NE(std::string(err.message).find("duplicate job"), std::string::npos) << err.message;
}

namespace
{
// Merge two shards of n jobs, write the result and compare it with itself.
void merge_write_and_compare(size_t n, const std::string &d)
{
    std::string p1 = d + "/a1.json", p2 = d + "/a2.json";
    cJSON *s1 = make_shard(n, 1, 2), *s2 = make_shard(n, 2, 2);
    write_doc(s1, p1);
    write_doc(s2, p2);
    cJSON_Delete(s1);
    cJSON_Delete(s2);
    const char *paths[] = {p1.c_str(), p2.c_str()};
    gs_error err;
    gs_error_clear(&err);
    char *why = nullptr;
    cJSON *m = gs_results_merge(paths, 2, &why, &err);
    ASSERT_NE(m, nullptr) << err.message;
    EXPECT_EQ(why, nullptr) << why;
    EXPECT_EQ((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "jobs")), n);
    EXPECT_EQ(gs_results_write_dir(m, (d + "/out").c_str(), &err), GS_OK) << err.message;
    gs_compare_summary s;
    gs_compare_docs(m, m, 0.02, nullptr, &s);
    EXPECT_EQ((size_t)s.compared, n);
    EXPECT_EQ(s.regressions, 0);
    cJSON_Delete(m);
}
} // namespace

// 100,000 jobs merge, write and compare whole. The complexity bound is CTest's timeout for this
// binary (120 s, tests/CMakeLists.txt) against about 5 s under ASan: quadratic code took minutes
// at 85,000 jobs. No wall-clock figure is asserted here (a test must not depend on the machine's
// speed or load); the run time at scale is a benchmark (BENCHMARKS.md, report at 100,000 jobs).
TEST(ResultsScale, HundredThousandJobsMergeWriteAndCompare)
{
    merge_write_and_compare(100000, tmpdir("scale"));
}

// The one status table: a status is a failure exactly when its severity is "failed", and every
// name parses back to its own entry.
TEST(JobStatusTable, FailureSeverityAndNamesAgree)
{
    for (int s = 0; s < GS_JOB_STATUS_COUNT; s++) {
        const gs_job_status st = (gs_job_status)s;
        const char *name = gs_job_status_name(st);
        EXPECT_EQ(gs_job_status_parse(name), s) << name;
        EXPECT_EQ(gs_job_status_is_failure(st), gs_job_status_severity(st) == GS_JOB_SEVERITY_FAIL)
            << name;
        EXPECT_EQ(gs_job_status_junit(st) == nullptr, st == GS_JOB_PASS) << name;
    }
    EXPECT_EQ(gs_job_status_parse("bogus"), -1);
    EXPECT_EQ(gs_job_status_parse(nullptr), -1);
    EXPECT_EQ(gs_job_status_is_failure((gs_job_status)-1), 1);
    EXPECT_EQ(gs_job_status_severity(GS_JOB_STATUS_COUNT), GS_JOB_SEVERITY_FAIL);
}

// gs_compare_job on its own: a job that got faster but whose error grew past its tolerance is a
// regression (and only that in the gate's summary).
TEST(CompareGate, FasterWithALargerErrorIsOneRegression)
{
    Job b{kId, 1e-4, 1e-3};
    Job c{kId, 5e-4, 1e-3};
    c.time_ns = 500;
    cJSON *base = make_doc({b}), *cur = make_doc({c});
    gs_job_diff d;
    EXPECT_EQ(gs_compare_job(cJSON_GetArrayItem(cJSON_GetObjectItem(base, "jobs"), 0),
                             cJSON_GetArrayItem(cJSON_GetObjectItem(cur, "jobs"), 0), 1, 0.02, &d),
              GS_VERDICT_REGRESSION);
    EXPECT_EQ(d.time_change, -1);
    EXPECT_TRUE(d.err_regressed);
    std::string text;
    gs_compare_summary s = compare(base, cur, &text);
    EXPECT_EQ(s.regressions, 1) << text;
    EXPECT_EQ(s.improvements, 0) << text;
    EXPECT_NE(text.find("improved    " + std::string(kId) + ": time"), std::string::npos) << text;
    EXPECT_NE(text.find("REGRESSION  " + std::string(kId) + ": max abs error"), std::string::npos)
        << text;
    cJSON_Delete(base);
    cJSON_Delete(cur);
}

// Any document cJSON parses is written back through the JSON writer unchanged, however deep
// (the writer's stack is as deep as cJSON's nesting limit) and with every kind of value.
TEST(ResultsEmit, ParsedDocumentsAreWrittenBackByteForByte)
{
    const std::string deep = std::string(CJSON_NESTING_LIMIT - 2, '[') + "{\"a\":[]}" +
                             std::string(CJSON_NESTING_LIMIT - 2, ']');
    const std::string mixed = R"({"s":"q\"\\\n\u003c\u0001é",)"
                              R"("n":[0,-1,0.5,-2.25,1125899906842624,null],)"
                              R"("b":[true,false],"o":{},"e":[],"k\u003c":{"x":{"y":[[]]}}})";
    for (const std::string &text : {deep, mixed}) {
        cJSON *doc = cJSON_Parse(text.c_str());
        ASSERT_NE(doc, nullptr);
        gs_sb sb;
        gs_sb_init(&sb);
        EXPECT_EQ(gs_json_emit(&sb, doc), GS_OK);
        EXPECT_EQ(std::string(gs_sb_cstr(&sb)), text);
        gs_sb_free(&sb);
        cJSON_Delete(doc);
    }
}

namespace
{
// a results document of generation gen2, suite check (make_doc plus what the writer needs)
cJSON *gen2_results(const std::vector<Job> &jobs)
{
    cJSON *d = make_doc(jobs);
    cJSON_AddStringToObject(d, "suite", "check");
    cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(d, "jobs"))
        cJSON_AddStringToObject(j, "generation", "gen2");
    return d;
}

std::string read_text(const std::string &path)
{
    std::string s;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) return s;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        s.append(buf, n);
    fclose(f);
    return s;
}

// the ids in a baseline file, in order, with their times: "id=time,..."
std::string baseline_ids(const std::string &path)
{
    gs_error err;
    gs_error_clear(&err);
    cJSON *d = gs_compare_load(path.c_str(), &err);
    std::string s;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(d, "jobs"))
    {
        char t[64];
        snprintf(t, sizeof t, "=%g,", gs_json_num(j, "time_ns"));
        s += gs_json_str(j, "id") + std::string(t);
    }
    cJSON_Delete(d);
    return s;
}
} // namespace

// `baseline update --kernels a` replaces kernel a's jobs where they were and keeps the other
// kernels' jobs of the file, even when the results hold other kernels too; a listed kernel the
// file did not have goes at the end; without a list the file is the results' jobs; a partial
// update that changes nothing rewrites the same bytes.
TEST(BaselineUpdate, KernelsListReplacesOnlyThoseKernelsInPlace)
{
    char tmpl[] = "/tmp/gs-baseline-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl, file = dir + "/check-gen2.json";
    gs_error err;
    gs_error_clear(&err);
    cJSON *full = gen2_results({{"gen2/b/v/bf16/1", 0, NAN, 10},
                                {"gen2/a/v/bf16/1", 0, NAN, 20},
                                {"gen2/a/v/bf16/2", 0, NAN, 21},
                                {"gen2/c/v/bf16/1", 0, NAN, 30}});
    ASSERT_EQ(gs_baseline_write(full, nullptr, dir.c_str(), nullptr, &err), GS_OK) << err.message;
    const std::string before = read_text(file);
    ASSERT_EQ(baseline_ids(file), "gen2/b/v/bf16/1=10,gen2/a/v/bf16/1=20,gen2/a/v/bf16/2=21,"
                                  "gen2/c/v/bf16/1=30,");

    // nothing changed: the same bytes
    ASSERT_EQ(gs_baseline_write(full, "a", dir.c_str(), nullptr, &err), GS_OK) << err.message;
    EXPECT_EQ(read_text(file), before);

    // a's jobs replaced (one shape gone, one time moved), b's new numbers ignored, d appended
    cJSON *part = gen2_results({{"gen2/a/v/bf16/1", 0, NAN, 25},
                                {"gen2/b/v/bf16/1", 0, NAN, 99},
                                {"gen2/d/v/bf16/1", 0, NAN, 40}});
    ASSERT_EQ(gs_baseline_write(part, "d,a", dir.c_str(), nullptr, &err), GS_OK) << err.message;
    EXPECT_EQ(baseline_ids(file),
              "gen2/b/v/bf16/1=10,gen2/a/v/bf16/1=25,gen2/c/v/bf16/1=30,gen2/d/v/bf16/1=40,");

    // a kernel the results do not have: nothing to write, the file stays
    const std::string kept = read_text(file);
    EXPECT_EQ(gs_baseline_write(part, "zz", dir.c_str(), nullptr, &err), GS_ERR_INVALID);
    EXPECT_NE(std::string(err.message).find("no jobs of the kernels 'zz'"), std::string::npos)
        << err.message;
    EXPECT_EQ(read_text(file), kept);

    // no list: the file is exactly the results' jobs
    ASSERT_EQ(gs_baseline_write(part, nullptr, dir.c_str(), nullptr, &err), GS_OK);
    EXPECT_EQ(baseline_ids(file), "gen2/a/v/bf16/1=25,gen2/b/v/bf16/1=99,gen2/d/v/bf16/1=40,");
    cJSON_Delete(full);
    cJSON_Delete(part);
    unlink(file.c_str());
    rmdir(dir.c_str());
}
