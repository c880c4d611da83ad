// Results library: the CI gate's error rule (tolerance, not exact equality), the schema
// validator shared by merge/compare/baseline/report, merge completeness, and merge/compare
// scaling. Synthetic documents only: no sweep, no BLAS.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <string>
#include <vector>

#include "compare.h"
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
