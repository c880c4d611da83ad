// Model-level workloads: the shape expression evaluator, workload file errors at their
// file:line:col (library calls), and `gensweep workload run` end to end on gen2 with a tiny
// layer (total = sum of the rows, the JSON fields, a step gen2 cannot run: exit 1).
#include <gtest/gtest.h>

#include "../support/cli_run.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "workload.h"

namespace
{

const char *const kNames[] = {"hidden", "heads", "kv_heads", "head_dim"};
const int64_t kValues[] = {4096, 32, 8, 128};

gs_status eval(const char *e, int64_t *v, size_t *pos, std::string *msg)
{
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_wl_expr_eval(e, kNames, kValues, 4, v, pos, &err);
    if (msg) *msg = err.message;
    return st;
}

TEST(WorkloadExpr, Values)
{
    int64_t v = 0;
    ASSERT_EQ(eval("(heads + 2 * kv_heads) * head_dim", &v, nullptr, nullptr), GS_OK);
    EXPECT_EQ(v, 6144);
    ASSERT_EQ(eval("hidden / heads", &v, nullptr, nullptr), GS_OK);
    EXPECT_EQ(v, 128);
    ASSERT_EQ(eval("hidden - heads * head_dim + 1", &v, nullptr, nullptr), GS_OK);
    EXPECT_EQ(v, 1);
    ASSERT_EQ(eval("-(3 - 5) * 2", &v, nullptr, nullptr), GS_OK);
    EXPECT_EQ(v, 4);
    ASSERT_EQ(eval("  7  ", &v, nullptr, nullptr), GS_OK);
    EXPECT_EQ(v, 7);
}

TEST(WorkloadExpr, Errors)
{
    int64_t v = 0;
    size_t pos = 99;
    std::string m;
    EXPECT_EQ(eval("hidden * nheads", &v, &pos, &m), GS_ERR_PARSE);
    EXPECT_EQ(pos, 9u);
    EXPECT_NE(m.find("unknown dimension 'nheads'"), std::string::npos) << m;
    EXPECT_EQ(eval("hidden / (heads - 32)", &v, &pos, &m), GS_ERR_PARSE);
    EXPECT_EQ(pos, 7u);
    EXPECT_NE(m.find("division by zero"), std::string::npos) << m;
    EXPECT_EQ(eval("hidden / 3", &v, &pos, &m), GS_ERR_PARSE);
    EXPECT_NE(m.find("inexact"), std::string::npos) << m;
    EXPECT_EQ(eval("4611686018427387904 * 2", &v, &pos, &m), GS_ERR_PARSE);
    EXPECT_NE(m.find("overflow"), std::string::npos) << m;
    EXPECT_EQ(eval("99999999999999999999", &v, &pos, &m), GS_ERR_PARSE);
    EXPECT_NE(m.find("too large"), std::string::npos) << m;
    EXPECT_EQ(eval("(hidden", &v, &pos, &m), GS_ERR_PARSE);
    EXPECT_NE(m.find("expected ')'"), std::string::npos) << m;
    EXPECT_EQ(eval("hidden heads", &v, &pos, &m), GS_ERR_PARSE);
    EXPECT_EQ(pos, 7u);
    EXPECT_EQ(eval("", &v, &pos, &m), GS_ERR_PARSE);
}

std::string dir()
{
    static std::string d;
    if (d.empty()) {
        d = std::string(GS_BINARY_DIR) + "/test_workload-" + std::to_string(getpid());
        EXPECT_EQ(std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str()), 0);
    }
    return d;
}

std::string write(const std::string &name, const std::string &text)
{
    std::string p = dir() + "/" + name;
    std::ofstream(p) << text;
    return p;
}

const char kHead[] = "name: tiny\nphase: decode\ndims:\n  hidden: 256\n  batch: 128\n"
                     "  tokens: batch\n";

// The first problem's text "file:line:col: message" of loading text.
std::string load_error(const std::string &text)
{
    std::string p = write("bad.yaml", text);
    gs_diags d;
    gs_diags_init(&d);
    gs_workload *w = gs_workload_load(p.c_str(), nullptr, 0, &d);
    EXPECT_EQ(w, nullptr);
    gs_workload_free(w);
    std::string out;
    if (d.count) {
        char buf[2048];
        gs_error_format(&d.items[0], buf, sizeof buf);
        out = buf;
        out = out.substr(out.find("bad.yaml"));
    }
    gs_diags_free(&d);
    return out;
}

TEST(WorkloadFile, ErrorsAtTheirPlace)
{
    const std::string h = kHead;
    EXPECT_EQ(load_error(h + "steps:\n  - name: a\n    kernel: rmsnorm\n    shape: [tokens, "
                             "hiden * 2]\n")
                  .substr(0, 17),
              "bad.yaml:10:21: s")
        << "unknown name at its column";
    EXPECT_NE(load_error(h + "steps:\n  - name: a\n    kernel: rmsnorm\n    shape: [tokens, "
                             "hiden * 2]\n")
                  .find("unknown dimension 'hiden'"),
              std::string::npos);
    EXPECT_EQ(load_error(h + "steps:\n  - name: a\n    kernel: rmsnorm\n    shape: [tokens, "
                             "\"hidden / (batch - 128)\"]\n")
                  .substr(0, 16),
              "bad.yaml:10:29: ")
        << "division by zero at the '/', inside quotes";
    EXPECT_NE(load_error(h + "steps:\n  - name: a\n    kernel: rmsnorm\n    shape: [tokens, "
                             "batch - 128 - 1]\n")
                  .find("bad.yaml:10:21: shape[1] (D): 'batch - 128 - 1' is -1"),
              std::string::npos);
    EXPECT_NE(load_error(h + "steps:\n  - name: a\n    kernel: rmsnrom\n    shape: [1, 1]\n")
                  .find("bad.yaml:9:13: kernel: unknown kernel 'rmsnrom'"),
              std::string::npos);
    EXPECT_NE(load_error(h + "steps:\n  - name: a\n    kernel: rmsnorm\n    shape: [1, 1, 1]\n")
                  .find("bad.yaml:10:12: shape: rmsnorm takes 2 dims [R, D], got 3"),
              std::string::npos);
    EXPECT_NE(load_error(h + "steps:\n  - name: a\n    kernel: rmsnorm\n    shape: [1, 1]\n"
                             "    shapes: [1]\n")
                  .find("bad.yaml:11:5: unknown step key 'shapes'"),
              std::string::npos);
    EXPECT_NE(load_error(h + "steps:\n  - name: a\n   kernel: x\n").find("bad.yaml:9:"),
              std::string::npos)
        << "YAML error with its place";
    EXPECT_NE(load_error("name: x\nphase: decode\ndims:\n  a: 9223372036854775807 + 1\nsteps: []\n")
                  .find("bad.yaml:4:26: dims.a: overflow"),
              std::string::npos);
}

// A name is matched over its whole length: a 64-character identifier used to be cut to 63 and
// silently take the value of the dimension those 63 characters name.
TEST(WorkloadExpr, LongNamesAreNotCut)
{
    const std::string n63(63, 'd'), n64 = n63 + "x";
    const char *names[] = {n63.c_str()};
    const int64_t values[] = {7};
    gs_error err;
    gs_error_clear(&err);
    int64_t v = 0;
    EXPECT_EQ(gs_wl_expr_eval(n64.c_str(), names, values, 1, &v, nullptr, &err), GS_ERR_PARSE)
        << "took " << v;
    EXPECT_NE(std::string(err.message).find("unknown dimension '" + n63 + "...'"),
              std::string::npos)
        << err.message;
    gs_error_clear(&err);
    ASSERT_EQ(gs_wl_expr_eval((n63 + " * 2").c_str(), names, values, 1, &v, nullptr, &err), GS_OK)
        << err.message;
    EXPECT_EQ(v, 14);
}

// A workload of no steps is an error (it reported a 0 us layer with exit 0).
TEST(WorkloadFile, EmptyStepsIsAnError)
{
    EXPECT_NE(load_error("name: x\nphase: decode\ndims:\n  a: 1\nsteps: []\n")
                  .find("bad.yaml:5:8: steps: an empty list"),
              std::string::npos);
}

// A FIFO as the workload file, or among ./workloads/*.yaml, is refused as the config loader
// refuses one; it blocked forever (the bound below is never approached when it is refused).
TEST(WorkloadFile, AFifoIsRefusedNotWaitedOn)
{
    char tmpl[] = "/tmp/gs-test-wl-fifo-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string d = tmpl;
    ASSERT_EQ(std::system(("mkdir -p '" + d + "/workloads'").c_str()), 0);
    ASSERT_EQ(mkfifo((d + "/workloads/pipe.yaml").c_str(), 0600), 0);
    const std::string log = d + "/log";
    auto run = [&](const std::string &args) {
        const std::string cmd = "cd '" + d + "' && timeout -s KILL 300 '" +
                                std::string(GS_GENSWEEP_BIN) + "' " + args + " >'" + log + "' 2>&1";
        const int st = std::system(cmd.c_str());
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    };
    EXPECT_EQ(run("workload run workloads/pipe.yaml --config '" + std::string(GS_SOURCE_DIR) +
                  "/configs/gen2.yaml'"),
              2);
    std::string out = gs_test_slurp(log);
    EXPECT_NE(out.find("workloads/pipe.yaml: cannot read the workload file: not a regular file "
                       "(a FIFO)"),
              std::string::npos)
        << out;
    EXPECT_EQ(run("sweep --suite model --configs '" + std::string(GS_SOURCE_DIR) +
                  "/configs/gen2.yaml' --out o --no-report"),
              2);
    out = gs_test_slurp(log);
    EXPECT_NE(out.find("pipe.yaml: cannot read the workload file: not a regular file (a FIFO)"),
              std::string::npos)
        << out;
    std::system(("rm -rf '" + d + "'").c_str());
}

// Workload and step names from the file reach the terminal escaped (gs_sb_term, as compare
// and history print ids): no raw ESC/BEL, no raw U+202E that reverses what follows it.
TEST(Workload, NamesAreEscapedOnTheTerminal)
{
    const std::string p = write("escapes.yaml", "name: \"evil\\e]0;pwned\\a\"\nphase: decode\n"
                                                "dims:\n  hidden: 128\nsteps:\n"
                                                "  - name: \"norm\\u202Eevil\"\n"
                                                "    kernel: rmsnorm\n    shape: [1, hidden]\n");
    CliRun r = gs_test_gensweep("workload run '" + p + "' --config configs/gen2.yaml -j 2 --out '" +
                                dir() + "/esc'");
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("workload evil\\x1b]0;pwned\\x07 (decode)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("norm\\xe2\\x80\\xaeevil"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
    EXPECT_EQ(r.out.find('\x07'), std::string::npos);
    EXPECT_EQ(r.out.find("\xe2\x80\xae"), std::string::npos);
}

CliRun gensweep(const std::string &args)
{
    return gs_test_gensweep(args);
}

double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

const char kTiny[] = "steps:\n"
                     "  - name: norm\n    kernel: rmsnorm\n    shape: [tokens, hidden]\n"
                     "  - name: proj\n    kernel: matmul\n    shape: [tokens, hidden, hidden]\n"
                     "    count: 2\n"
                     "  - name: residual\n    kernel: elementwise_add\n"
                     "    shape: [tokens, hidden]\n";

TEST(Workload, TinyLayerOnGen2)
{
    std::string p = write("tiny.yaml", std::string(kHead) + kTiny);
    std::string js = dir() + "/tiny.json";
    CliRun r = gensweep("workload run '" + p + "' --config configs/gen2.yaml -j 2 --json '" + js +
                        "' --out '" + dir() + "/out'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("layer total:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tokens/s for this one layer"), std::string::npos) << r.out;
    cJSON *doc = cJSON_Parse(gs_test_slurp(js).c_str());
    ASSERT_NE(doc, nullptr);
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(doc, "schema")->valuestring, "gensweep-workload");
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(doc, "generation")->valuestring, "gen2");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
    ASSERT_EQ(cJSON_GetArraySize(rows), 3);
    double sum = 0, share = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(row, "status")->valuestring, "pass");
        EXPECT_TRUE(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(row, "variant")));
        EXPECT_TRUE(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(row, "bottleneck")));
        EXPECT_GT(num(row, "time_ns"), 0);
        EXPECT_GT(num(row, "bound_ns"), 0);
        EXPECT_GE(num(row, "time_ns"), num(row, "bound_ns") * 0.999);
        sum += num(row, "time_ns");
        share += num(row, "share");
    }
    const double total = num(doc, "time_ns");
    EXPECT_NEAR(total, sum, 1e-9 * total);
    EXPECT_NEAR(share, 1.0, 1e-9);
    EXPECT_NEAR(num(doc, "tokens_per_s_per_layer"), 128 * 1e9 / total, 1e-6 * 128e9 / total);
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "complete")));
    // the count multiplies one run's time: proj = 2 x matmul alone
    const cJSON *proj = cJSON_GetArrayItem(rows, 1);
    EXPECT_EQ(num(proj, "count"), 2);
    cJSON_Delete(doc);
    // the job records are in --out (the folder was made and left empty before)
    cJSON *rec = cJSON_Parse(gs_test_slurp(dir() + "/out/results.json").c_str());
    ASSERT_NE(rec, nullptr) << "no results.json in --out";
    EXPECT_GE(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "jobs")), 3);
    cJSON_Delete(rec);
    // --dim changes a dim before the shapes are evaluated
    CliRun d = gensweep("workload run '" + p +
                        "' --config configs/gen2.yaml -j 2 --dim hidden=128 "
                        "--json - --out '" +
                        dir() + "/out'");
    ASSERT_EQ(d.rc, 0) << d.out << d.err;
    EXPECT_NE(d.out.find("\"shape\":[128,128]"), std::string::npos) << d.out;
}

TEST(Workload, StepThatCannotRunIsReported)
{
    std::string p = write("nofit.yaml", std::string(kHead) + "steps:\n"
                                                             "  - name: norm\n    kernel: rmsnorm\n"
                                                             "    shape: [tokens, hidden]\n"
                                                             "  - name: huge\n    kernel: rmsnorm\n"
                                                             "    shape: [128, hidden * 4096]\n");
    CliRun r = gensweep("workload run '" + p +
                        "' --config configs/gen2.yaml -j 2 --json - --out '" + dir() + "/out2'");
    ASSERT_EQ(r.rc, 1) << r.out << r.err;
    cJSON *doc = cJSON_Parse(r.out.c_str());
    ASSERT_NE(doc, nullptr) << r.out;
    const cJSON *huge = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "rows"), 1);
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(huge, "status")->valuestring, "does-not-fit");
    EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(huge, "time_ns")));
    EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(doc, "complete")));
    EXPECT_EQ(num(doc, "steps_not_run"), 1);
    cJSON_Delete(doc);
    CliRun t = gensweep("workload run '" + p + "' --config configs/gen2.yaml -j 2 --out '" + dir() +
                        "/out2'");
    EXPECT_EQ(t.rc, 1);
    EXPECT_NE(t.out.find("incomplete: 1 step could not run on gen2: huge (does-not-fit)"),
              std::string::npos)
        << t.out;
}

} // namespace
