// Hostile-input corpus (tests/corpus/cli.txt): every line is a gensweep command line with its
// expected exit status and a fragment of its message. One CTest test per line.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

struct Case {
    int line = 0;
    bool no_asan = false; /* [no-asan]: needs RLIMIT_AS, which AddressSanitizer cannot run under */
    int rc = 0;
    std::string fragment, args;
};

// gtest prints the parameter of a failing case with this
void PrintTo(const Case &c, std::ostream *os)
{
    *os << "cli.txt:" << c.line << ": " << c.args;
}

std::string trim(const std::string &s)
{
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<Case> load(const std::string &path)
{
    std::vector<Case> v;
    std::ifstream f(path);
    std::string text;
    int n = 0;
    while (std::getline(f, text)) {
        n++;
        std::string t = trim(text);
        if (t.empty() || t[0] == '#') continue;
        Case c;
        c.line = n;
        if (t.rfind("[no-asan]", 0) == 0) {
            c.no_asan = true;
            t = trim(t.substr(9));
        }
        size_t p1 = t.find('|'), p2 = p1 == std::string::npos ? p1 : t.find('|', p1 + 1);
        if (p2 == std::string::npos) {
            c.rc = -100; // malformed corpus line: reported by the test
            c.args = t;
        } else {
            c.rc = std::atoi(trim(t.substr(0, p1)).c_str());
            c.fragment = trim(t.substr(p1 + 1, p2 - p1 - 1));
            c.args = trim(t.substr(p2 + 1));
        }
        v.push_back(c);
    }
    return v;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void replace_all(std::string &s, const std::string &from, const std::string &to)
{
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
}

const std::string kCorpus = std::string(GS_SOURCE_DIR) + "/tests/corpus";

class CliCorpus : public ::testing::TestWithParam<Case>
{
};

} // namespace

TEST_P(CliCorpus, ExitStatusAndMessage)
{
    const Case &c = GetParam();
#if defined(__SANITIZE_ADDRESS__)
    if (c.no_asan) GTEST_SKIP() << "needs an address-space limit";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    if (c.no_asan) GTEST_SKIP() << "needs an address-space limit";
#endif
#endif
    ASSERT_NE(c.rc, -100) << "tests/corpus/cli.txt:" << c.line
                          << ": expected EXIT | FRAGMENT | ARGS";
    std::string scratch = std::string(GS_BINARY_DIR) + "/test_corpus/cli-" +
                          std::to_string(c.line) + "-" + std::to_string(getpid());
    ASSERT_EQ(std::system(("rm -rf '" + scratch + "' && mkdir -p '" + scratch + "'").c_str()), 0);
    std::string args = c.args;
    replace_all(args, "{T}", scratch);
    replace_all(args, "{C}", kCorpus);
    std::string out = scratch + ".out", err = scratch + ".err";
    std::string cmd = std::string("cd '") + GS_SOURCE_DIR + "' && timeout 120 '" + GS_GENSWEEP_BIN +
                      "' " + args + " >'" + out + "' 2>'" + err + "' </dev/null";
    int st = std::system(cmd.c_str());
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::string o = slurp(out), e = slurp(err);
    SCOPED_TRACE("tests/corpus/cli.txt:" + std::to_string(c.line) + ": gensweep " + c.args);
    EXPECT_EQ(rc, c.rc) << "stdout:\n" << o << "stderr:\n" << e;
    EXPECT_NE((o + e).find(c.fragment), std::string::npos)
        << "missing '" << c.fragment << "'\nstdout:\n"
        << o << "stderr:\n"
        << e;
    // nothing from an input reaches the terminal as a control sequence
    EXPECT_EQ(o.find('\x1b'), std::string::npos) << o;
    EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CliCorpus, ::testing::ValuesIn(load(kCorpus + "/cli.txt")),
                         [](const ::testing::TestParamInfo<Case> &i) {
                             return "line" + std::to_string(i.param.line);
                         });
