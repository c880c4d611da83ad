// Every operation of the workload shape evaluator (wl_expr.c) is checked: INT64_MIN / -1 and
// -INT64_MIN are errors at their column (before: SIGFPE in `workload run` and
// `sweep --suite model`, and undefined behaviour), in an expression and in a workload file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "workload.h"

namespace
{

gs_status eval(const char *e, int64_t *v, size_t *pos, std::string *msg)
{
    static const char *const names[] = {"big"};
    static const int64_t values[] = {INT64_MIN};
    gs_error err;
    gs_error_clear(&err);
    gs_status st = gs_wl_expr_eval(e, names, values, 1, v, pos, &err);
    *msg = err.message;
    return st;
}

TEST(WorkloadExprChecked, NoTrapNoUndefinedBehaviour)
{
    struct {
        const char *expr;
        size_t pos;
        const char *msg;
    } cases[] = {
        {"(-9223372036854775807 - 1) / -1", 27, "overflow in '/'"},
        {"big / -1", 4, "overflow in '/'"},
        {"big / (0 - 1)", 4, "overflow in '/'"},
        {"-big", 0, "overflow in unary '-'"},
        {"-(-9223372036854775807 - 1)", 0, "overflow in unary '-'"},
        {"2 * -(-9223372036854775807 - 1)", 4, "overflow in unary '-'"},
        {"big - 1", 4, "overflow in '-'"},
        {"big + -1", 4, "overflow in '+'"},
        {"big * -1", 4, "overflow in '*'"},
        {"big / 0", 4, "division by zero"},
    };
    for (const auto &c : cases) {
        int64_t v = 0;
        size_t pos = 99;
        std::string m;
        EXPECT_EQ(eval(c.expr, &v, &pos, &m), GS_ERR_PARSE) << c.expr;
        EXPECT_EQ(pos, c.pos) << c.expr;
        EXPECT_NE(m.find(c.msg), std::string::npos) << c.expr << ": " << m;
    }
    // the values at the edges still evaluate
    int64_t v = 0;
    size_t pos = 0;
    std::string m;
    ASSERT_EQ(eval("big / 1", &v, &pos, &m), GS_OK) << m;
    EXPECT_EQ(v, INT64_MIN);
    ASSERT_EQ(eval("-(big + 1)", &v, &pos, &m), GS_OK) << m;
    EXPECT_EQ(v, INT64_MAX);
    ASSERT_EQ(eval("big / -2", &v, &pos, &m), GS_OK) << m;
    EXPECT_EQ(v, INT64_C(1) << 62);
}

// In a workload file: the error at file:line:col of the '/'.
TEST(WorkloadExprChecked, FileErrorAtItsPlace)
{
    std::string p =
        std::string(GS_BINARY_DIR) + "/test_wl_expr_checked-" + std::to_string(getpid()) + ".yaml";
    std::ofstream(p) << "name: x\nphase: decode\ndims:\n  a: (-9223372036854775807 - 1) / -1\n"
                        "steps: []\n";
    gs_diags d;
    gs_diags_init(&d);
    gs_workload *w = gs_workload_load(p.c_str(), nullptr, 0, &d);
    EXPECT_EQ(w, nullptr);
    gs_workload_free(w);
    ASSERT_GT(d.count, 0u);
    char buf[2048];
    gs_error_format(&d.items[0], buf, sizeof buf);
    gs_diags_free(&d);
    std::remove(p.c_str());
    const std::string out = buf;
    EXPECT_NE(out.find(".yaml:4:33: dims.a: overflow in '/'"), std::string::npos) << out;
}

} // namespace
