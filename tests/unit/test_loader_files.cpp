// Config loader and special files: only regular files are opened (a FIFO, device or directory
// is an error, never a hang), also through extends: and when scanning a configs directory;
// extends: paths of any length.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gs/config.h"

namespace
{

std::string tmpdir(const std::string &name)
{
    std::string d =
        std::string(GS_BINARY_DIR) + "/test_loader_files/" + name + "-" + std::to_string(getpid());
    EXPECT_EQ(std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str()), 0);
    return d;
}

void spit(const std::string &path, const std::string &text)
{
    std::ofstream f(path);
    f << text;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Load path; returns every diagnostic joined (empty when it loaded).
std::string load_errors(const std::string &path)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *c = gs_config_load(path.c_str(), &d);
    std::string all;
    for (size_t i = 0; i < d.count; i++) {
        char buf[2048];
        gs_error_format(&d.items[i], buf, sizeof buf);
        all += std::string(buf) + "\n";
    }
    if (c && all.empty()) all = "";
    if (!c && all.empty()) all = "(failed without a message)";
    gs_config_free(c);
    gs_diags_free(&d);
    return all;
}

struct CliRun {
    int rc = -1;
    std::string out, err;
};

CliRun gensweep(const std::string &args)
{
    std::string base =
        std::string(GS_BINARY_DIR) + "/test_loader_files/cli-" + std::to_string(getpid());
    std::string cmd = std::string("cd '") + GS_SOURCE_DIR + "' && timeout 60 '" + GS_GENSWEEP_BIN +
                      "' " + args + " >'" + base + ".out' 2>'" + base + ".err' </dev/null";
    int st = std::system(cmd.c_str());
    CliRun r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    return r;
}

const std::string kGen2 = std::string(GS_SOURCE_DIR) + "/configs/gen2.yaml";

} // namespace

TEST(LoaderFiles, SpecialFilesAreErrorsNotHangs)
{
    std::string d = tmpdir("special");
    ASSERT_EQ(mkfifo((d + "/fifo.yaml").c_str(), 0600), 0);
    ASSERT_EQ(mkdir((d + "/dir.yaml").c_str(), 0700), 0);
    std::string e = load_errors(d + "/fifo.yaml");
    EXPECT_NE(e.find("not a regular file (a FIFO)"), std::string::npos) << e;
    e = load_errors(d + "/dir.yaml");
    EXPECT_NE(e.find("not a regular file (a directory)"), std::string::npos) << e;
    e = load_errors("/dev/zero");
    EXPECT_NE(e.find("not a regular file (a device)"), std::string::npos) << e;
    // through extends:
    spit(d + "/child_fifo.yaml", "extends: fifo\n");
    e = load_errors(d + "/child_fifo.yaml");
    EXPECT_NE(e.find("child_fifo.yaml:1:10: extends: cannot load"), std::string::npos) << e;
    EXPECT_NE(e.find("not a regular file (a FIFO)"), std::string::npos) << e;
    spit(d + "/child_dir.yaml", "extends: dir.yaml\n");
    e = load_errors(d + "/child_dir.yaml");
    EXPECT_NE(e.find("not a regular file (a directory)"), std::string::npos) << e;
}

// A FIFO lying in a configs directory: list gens and sweep report it and finish.
TEST(LoaderFiles, FifoInAConfigsDirectory)
{
    std::string d = tmpdir("scan");
    ASSERT_EQ(std::system(("cp '" + kGen2 + "' '" + d + "/'").c_str()), 0);
    ASSERT_EQ(mkfifo((d + "/zz-fifo.yaml").c_str(), 0600), 0);
    CliRun l = gensweep("list gens '" + d + "'");
    EXPECT_NE(l.rc, -1) << "hung (killed by timeout)";
    EXPECT_EQ(l.rc, 1) << l.out << l.err;
    EXPECT_NE(l.err.find("zz-fifo.yaml: not a regular file (a FIFO)"), std::string::npos) << l.err;
    EXPECT_NE(l.out.find("gen2"), std::string::npos) << l.out;
    CliRun s = gensweep("sweep --configs '" + d + "' --kernels elementwise_add --quiet --out '" +
                        d + "/out'");
    EXPECT_EQ(s.rc, 2) << s.out << s.err;
    EXPECT_NE(s.err.find("not a regular file (a FIFO)"), std::string::npos) << s.err;
}

// An extends: path longer than any fixed buffer (it was cut at 511 characters and could load a
// different file).
TEST(LoaderFiles, LongExtendsPathsAreNotTruncated)
{
    std::string d = tmpdir("long");
    std::string rel;
    for (int i = 0; i < 300; i++)
        rel += "./";
    ASSERT_EQ(std::system(("cp '" + kGen2 + "' '" + d + "/gen2.yaml'").c_str()), 0);
    spit(d + "/child.yaml", "extends: " + rel + "gen2\n");
    EXPECT_EQ(load_errors(d + "/child.yaml"), "");
    // a long nonexistent name is reported whole, not cut to a shorter existing one
    std::string name = rel + "gen2" + std::string(200, 'x');
    spit(d + "/child2.yaml", "extends: " + name + "\n");
    std::string e = load_errors(d + "/child2.yaml");
    EXPECT_NE(e.find("cannot load"), std::string::npos) << e;
    EXPECT_NE(e.find("No such file"), std::string::npos) << e;
}
