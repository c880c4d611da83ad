// The CI gate (`gensweep compare`, the gs_compare_docs run that `sweep --baseline` and
// `history gate` use) and the report's baseline section (`gensweep report --baseline`) judge
// every job alike: every baseline status x new status, time within / beyond the threshold, an
// error grown within / beyond its tolerance, missing, not-run and new jobs. Both are driven
// through the command line, and both are checked against the rule written out here (so they
// cannot agree on a wrong answer).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "../support/cli_run.h"

namespace
{

const char *const kStatuses[] = {"pass",  "fail",    "unsupported", "does-not-fit",
                                 "crash", "timeout", "deadlock",    "error"};

// The documented rule (results/compare.h), written out independently of the library.
int severity(const std::string &s)
{
    if (s == "pass") return 0;
    if (s == "unsupported" || s == "does-not-fit") return 1;
    return 2;
}

struct Side {
    std::string status = "pass";
    double time_ns = 1000;
    double max_abs = 1e-4;
    double tol_abs = 1e-3; // <= 0: no tolerance recorded
};

struct Case {
    std::string kernel; // the job's kernel (one per case, so coverage is per case)
    bool in_base = true, in_cur = true;
    Side base, cur;
    std::string expect; // regression, improvement, same, new, missing, not-run
};

std::string job_json(const std::string &kernel, const Side &s)
{
    char buf[512];
    std::string tol = s.tol_abs > 0 ? std::to_string(s.tol_abs) : "null";
    std::snprintf(buf, sizeof buf,
                  "{\"id\":\"gen2/%s/v/bf16/128\",\"generation\":\"gen2\",\"kernel\":\"%s\","
                  "\"variant\":\"v\",\"dtype\":\"bf16\",\"shape\":[128],\"status\":\"%s\","
                  "\"time_ns\":%.17g,\"error\":{\"max_abs\":%.17g,\"tol_abs\":%s}}",
                  kernel.c_str(), kernel.c_str(), s.status.c_str(), s.time_ns, s.max_abs,
                  tol.c_str());
    return buf;
}

std::string doc_json(const std::vector<std::string> &jobs)
{
    std::string d = "{\"schema\":\"gensweep-results\",\"schema_version\":1,\"suite\":\"check\","
                    "\"configs\":[{\"name\":\"gen2\"}],\"jobs\":[";
    for (size_t i = 0; i < jobs.size(); i++)
        d += (i ? ",\n" : "\n") + jobs[i];
    return d + "]}\n";
}

std::vector<Case> cases()
{
    std::vector<Case> v;
    int n = 0;
    auto name = [&n](const char *what) { return std::string(what) + std::to_string(n++); };
    // every status transition, same time and error
    for (const char *b : kStatuses)
        for (const char *c : kStatuses) {
            Case k;
            k.kernel = name("st");
            k.base.status = b;
            k.cur.status = c;
            int sb = severity(b), sc = severity(c);
            k.expect = sc > sb ? "regression" : sc < sb ? "improvement" : "same";
            v.push_back(k);
        }
    // a worse or better status is judged on the status alone, whatever the time did
    {
        Case k;
        k.kernel = name("st_fast");
        k.base.status = "pass";
        k.cur.status = "fail";
        k.cur.time_ns = 500;
        k.expect = "regression";
        v.push_back(k);
        k.kernel = name("st_slow");
        k.base.status = "crash";
        k.cur.status = "pass";
        k.cur.time_ns = 5000;
        k.expect = "improvement";
        v.push_back(k);
    }
    // time against the 2 % threshold (pass -> pass)
    for (double t : {1000.0, 1010.0, 1019.0, 1030.0, 2000.0, 990.0, 970.0, 500.0}) {
        Case k;
        k.kernel = name("time");
        k.cur.time_ns = t;
        double rel = t / 1000.0 - 1.0;
        k.expect = rel > 0.02 ? "regression" : rel < -0.02 ? "improvement" : "same";
        v.push_back(k);
    }
    // error growth: within / beyond 10 % of the tolerance, the new side's tolerance first, then
    // the baseline's, then 10 % of the old error
    struct E {
        double b, c, tol_b, tol_c;
        const char *expect;
    };
    for (const E &e : std::vector<E>{{1e-4, 1.5e-4, 1e-3, 1e-3, "same"},
                                     {1e-4, 2.5e-4, 1e-3, 1e-3, "regression"},
                                     {1e-4, 1.5e-4, 1e-3, 0, "same"},
                                     {1e-4, 2.5e-4, 1e-3, 0, "regression"},
                                     {1e-4, 2.5e-4, 0, 1e-2, "same"},
                                     {1e-4, 1.05e-4, 0, 0, "same"},
                                     {1e-4, 1.2e-4, 0, 0, "regression"},
                                     {3e-4, 1e-4, 1e-3, 1e-3, "same"}}) {
        Case k;
        k.kernel = name("err");
        k.base.max_abs = e.b;
        k.cur.max_abs = e.c;
        k.base.tol_abs = e.tol_b;
        k.cur.tol_abs = e.tol_c;
        k.expect = e.expect;
        v.push_back(k);
    }
    // faster but with an error grown past its tolerance: a regression
    {
        Case k;
        k.kernel = name("fast_err");
        k.cur.time_ns = 500;
        k.cur.max_abs = 5e-4;
        k.expect = "regression";
        v.push_back(k);
    }
    // missing: another shape of the same generation and kernel ran; not run: nothing of its
    // kernel ran; new: only in the new results
    {
        Case k;
        k.kernel = name("gone");
        k.in_cur = false;
        k.expect = "not-run";
        v.push_back(k);
        k.kernel = name("new");
        k.in_base = false;
        k.in_cur = true;
        k.expect = "new";
        v.push_back(k);
    }
    return v;
}

std::string id_of(const Case &c)
{
    return "gen2/" + c.kernel + "/v/bf16/128";
}

class GateAndReport : public ::testing::Test
{
  protected:
    std::string dir = std::string(GS_BINARY_DIR) + "/test_verdict_agreement";
    void SetUp() override
    {
        ASSERT_EQ(std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
    }
};

} // namespace

TEST_F(GateAndReport, AgreeOnEveryTransition)
{
    std::vector<Case> cs = cases();
    std::vector<std::string> base, cur;
    for (const Case &c : cs) {
        if (c.in_base) base.push_back(job_json(c.kernel, c.base));
        if (c.in_cur) cur.push_back(job_json(c.kernel, c.cur));
    }
    // a missing job: its kernel ran at another shape in the new results
    base.push_back(
        "{\"id\":\"gen2/cov/v/bf16/64\",\"generation\":\"gen2\",\"kernel\":\"cov\",\"status\":"
        "\"pass\",\"time_ns\":100}");
    cur.push_back(
        "{\"id\":\"gen2/cov/v/bf16/128\",\"generation\":\"gen2\",\"kernel\":\"cov\",\"status\":"
        "\"pass\",\"time_ns\":100}");
    base.push_back(
        "{\"id\":\"gen2/cov/v/bf16/128\",\"generation\":\"gen2\",\"kernel\":\"cov\",\"status\":"
        "\"pass\",\"time_ns\":100}");
    std::map<std::string, std::string> expect;
    for (const Case &c : cs)
        expect[id_of(c)] = c.expect;
    expect["gen2/cov/v/bf16/64"] = "missing";
    expect["gen2/cov/v/bf16/128"] = "same";
    {
        std::FILE *f = std::fopen((dir + "/base.json").c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(doc_json(base).c_str(), f);
        std::fclose(f);
        f = std::fopen((dir + "/new.json").c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(doc_json(cur).c_str(), f);
        std::fclose(f);
    }

    // the gate: one line per finding; a job with any REGRESSION line is a regression
    CliRun gate =
        gs_test_gensweep("compare --threshold 2% '" + dir + "/base.json' '" + dir + "/new.json'");
    ASSERT_TRUE(gate.rc == 0 || gate.rc == 1) << gate.err;
    std::map<std::string, std::string> gate_v;
    std::regex line("^(REGRESSION|improved|changed|new) +([^:]+): (.*)$");
    std::istringstream in(gate.out);
    for (std::string l; std::getline(in, l);) {
        std::smatch m;
        if (!std::regex_match(l, m, line)) continue;
        std::string id = m[2], kind = m[1], &v = gate_v[id];
        if (kind == "REGRESSION")
            v = m[3].str().find("missing from") == 0 ? "missing" : "regression";
        else if (kind == "improved" && v.empty())
            v = "improvement";
        else if (kind == "new")
            v = "new";
    }

    // the report: a row per regression (missing ones included) and improvement, and counts
    CliRun rep = gs_test_gensweep("report '" + dir + "/new.json' --baseline '" + dir +
                                  "/base.json' --threshold 2 -o '" + dir + "/r.html'");
    ASSERT_EQ(rep.rc, 0) << rep.err;
    std::string html = gs_test_slurp(dir + "/r.html");
    std::map<std::string, std::string> rep_v;
    std::regex row(
        "<tr id=\"base-m?[0-9]+\" class=\"(bad|good)\"[^>]*><td>([^<]+)</td><td>([a-z-]+)");
    for (std::sregex_iterator it(html.begin(), html.end(), row), end; it != end; ++it)
        rep_v[(*it)[2]] = (*it)[3];

    int n_reg = 0, n_imp = 0, n_same = 0, n_new = 0, n_notrun = 0, n_missing = 0;
    for (const auto &e : expect) {
        const std::string &id = e.first, &want = e.second;
        SCOPED_TRACE(id + ": expected " + want);
        std::string g = gate_v.count(id) ? gate_v[id] : "";
        std::string r = rep_v.count(id) ? rep_v[id] : "";
        if (want == "regression" || want == "improvement" || want == "missing") {
            EXPECT_EQ(g, want);
            EXPECT_EQ(r, want);
        } else if (want == "new") {
            EXPECT_EQ(g, "new");
            EXPECT_EQ(r, "");
        } else { // same, not-run: no finding in either
            EXPECT_EQ(g, "");
            EXPECT_EQ(r, "");
        }
        n_reg += want == "regression" || want == "missing";
        n_missing += want == "missing";
        n_imp += want == "improvement";
        n_same += want == "same";
        n_new += want == "new";
        n_notrun += want == "not-run";
    }
    // the totals both print
    char sum[160];
    std::snprintf(sum, sizeof sum, "%d regressions, %d improvements", n_reg, n_imp);
    EXPECT_NE(gate.out.find(sum), std::string::npos) << gate.out;
    std::snprintf(sum, sizeof sum, "%d new, %d missing", n_new, n_missing);
    EXPECT_NE(gate.out.find(sum), std::string::npos) << gate.out;
    EXPECT_EQ(gate.rc, n_reg ? 1 : 0);
    std::snprintf(sum, sizeof sum, "</code>: %d regressions (", n_reg);
    EXPECT_NE(html.find(sum), std::string::npos);
    std::snprintf(sum, sizeof sum, "and kernel ran: %d), %d improvements", n_missing, n_imp);
    EXPECT_NE(html.find(sum), std::string::npos);
    std::snprintf(sum, sizeof sum, "%d unchanged, %d new jobs, %d jobs not run", n_same, n_new,
                  n_notrun);
    EXPECT_NE(html.find(sum), std::string::npos);
    std::snprintf(sum, sizeof sum, "Regressions against the baseline (%d)", n_reg);
    EXPECT_NE(html.find(sum), std::string::npos);
}
