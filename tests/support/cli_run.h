/*
 * cli_run.h - run the built gensweep binary from a test and capture its exit status, stdout and
 * stderr. Header-only (C++); tests that use it get GS_GENSWEEP_BIN, GS_SOURCE_DIR and
 * GS_BINARY_DIR from test_paths.h.
 */
#ifndef GS_TEST_CLI_RUN_H
#define GS_TEST_CLI_RUN_H

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

struct CliRun {
    int rc = -1; /* exit status; -1 when killed by a signal */
    std::string out, err;
};

/* The whole file as a string ("" when it cannot be read). */
inline std::string gs_test_slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/* Run `gensweep ARGS` (a shell fragment) in `cwd` (the source tree by default, "" for the
 * test's own directory); the captured output goes through files in the build tree, removed
 * afterwards. */
inline CliRun gs_test_gensweep(const std::string &args, const std::string &cwd = GS_SOURCE_DIR)
{
    static int n = 0;
    const std::string base = std::string(GS_BINARY_DIR) + "/cli_run_" + std::to_string(getpid()) +
                             "_" + std::to_string(n++);
    const std::string cd = cwd.empty() ? "" : "cd '" + cwd + "' && ";
    const std::string cmd =
        cd + "'" + GS_GENSWEEP_BIN + "' " + args + " >'" + base + ".out' 2>'" + base + ".err'";
    const int st = std::system(cmd.c_str());
    CliRun r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = gs_test_slurp(base + ".out");
    r.err = gs_test_slurp(base + ".err");
    std::remove((base + ".out").c_str());
    std::remove((base + ".err").c_str());
    return r;
}

#endif
