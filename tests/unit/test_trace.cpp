/*
 * test_trace.cpp - the streaming trace writer (gs/trace.h) without SystemC: the file is valid
 * JSON, slices carry their fields with exact microsecond timestamps, a dependency on another
 * track becomes an s/f flow pair and one on the same track does not, a rate counter writes its
 * steps (coalescing changes at one time), and an unwritable path is an I/O error.
 */
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gs/trace.h"

namespace
{

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string tmp_path()
{
    return std::string(GS_BINARY_DIR) + "/test_trace_" + std::to_string(getpid()) + ".json";
}

std::vector<cJSON *> events_of(cJSON *doc, const char *ph)
{
    std::vector<cJSON *> out;
    cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(doc, "traceEvents"))
    {
        if (!strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, ph)) out.push_back(ev);
    }
    return out;
}

TEST(Trace, SlicesFlowsAndCounters)
{
    const std::string path = tmp_path();
    gs_error err;
    gs_trace *t = gs_trace_open(path.c_str(), &err);
    ASSERT_NE(t, nullptr) << err.message;
    gs_trace_process_name(t, 0, "core \"0\"");
    gs_trace_thread_name(t, 0, 1, "vector");
    const uint32_t dep0[] = {0}, dep1[] = {1};
    gs_trace_complete(t, 0, 0, "matmul", 1500, 2000000, 0, "a, b", nullptr, 0, "kernels/k.c", 12,
                      0);
    gs_trace_complete(t, 0, 1, "tensor_copy", 2001500, 250, 1, "", dep0, 1, "kernels/k.c", 13, 40);
    gs_trace_complete(t, 0, 1, "activation", 2001750, 1, 2, "", dep1, 1, nullptr, 14, 0);
    gs_trace_rate *r = gs_trace_rate_create(t, 1, "HBM", "GB/s");
    ASSERT_NE(r, nullptr);
    gs_trace_rate_add(r, 0, 1000, 2.0);
    gs_trace_rate_add(r, 500, 1500, 1.0);
    gs_trace_rate_add(r, 500, 700, 4.0); /* same time as the previous change: one sample */
    ASSERT_EQ(gs_trace_close(t, &err), GS_OK) << err.message;

    const std::string text = slurp(path);
    unlink(path.c_str());
    cJSON *doc = cJSON_Parse(text.c_str());
    ASSERT_NE(doc, nullptr) << text;
    EXPECT_STREQ(cJSON_GetObjectItem(doc, "displayTimeUnit")->valuestring, "ns");

    std::vector<cJSON *> m = events_of(doc, "M");
    ASSERT_EQ(m.size(), 2u);
    EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetObjectItem(m[0], "args"), "name")->valuestring,
                 "core \"0\"");

    std::vector<cJSON *> x = events_of(doc, "X");
    ASSERT_EQ(x.size(), 3u);
    EXPECT_NE(text.find("\"ts\":0.001500,\"dur\":2.000000"), std::string::npos) << text;
    cJSON *a1 = cJSON_GetObjectItem(x[1], "args");
    EXPECT_STREQ(cJSON_GetObjectItem(a1, "src")->valuestring, "kernels/k.c:13");
    EXPECT_NE(text.find("\"hbm_wait_us\":0.000040"), std::string::npos);
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a1, "deps")), 1);
    EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetObjectItem(x[2], "args"), "src")->valuestring,
                 "?:14");

    /* 1 depends on 0 on another track: one flow; 2 on 1 on the same track: none */
    std::vector<cJSON *> s = events_of(doc, "s"), f = events_of(doc, "f");
    ASSERT_EQ(s.size(), 1u);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(cJSON_GetObjectItem(s[0], "tid")->valueint, 0);
    EXPECT_EQ(cJSON_GetObjectItem(f[0], "tid")->valueint, 1);
    EXPECT_EQ(cJSON_GetObjectItem(s[0], "id")->valueint, cJSON_GetObjectItem(f[0], "id")->valueint);
    EXPECT_STREQ(cJSON_GetObjectItem(f[0], "bp")->valuestring, "e");

    /* steps: 2 from 0, 7 from 500 (1 + 4 added at the same time), 3 from 700, 1 from 1000,
     * 0 from 1500 */
    std::vector<cJSON *> c = events_of(doc, "C");
    const double want_ts[] = {0, 0.0005, 0.0007, 0.001, 0.0015};
    const double want_v[] = {2, 7, 3, 1, 0};
    ASSERT_EQ(c.size(), 5u) << text;
    for (size_t k = 0; k < c.size(); ++k) {
        EXPECT_DOUBLE_EQ(cJSON_GetObjectItem(c[k], "ts")->valuedouble, want_ts[k]) << k;
        EXPECT_DOUBLE_EQ(
            cJSON_GetObjectItem(cJSON_GetObjectItem(c[k], "args"), "GB/s")->valuedouble, want_v[k])
            << k;
    }
    cJSON_Delete(doc);
}

TEST(Trace, FlowsReachBackOnlyOverTheWindow)
{
    const std::string path = tmp_path();
    gs_error err;
    gs_trace *t = gs_trace_open(path.c_str(), &err);
    ASSERT_NE(t, nullptr) << err.message;
    const uint32_t n = GS_TRACE_FLOW_WINDOW + 2;
    for (uint32_t i = 0; i < n; ++i)
        gs_trace_complete(t, 0, 0, "dma_copy", i, 1, i, "", nullptr, 0, "k.c", 1, 0);
    const uint32_t near_dep[] = {n - 1}, far_dep[] = {0};
    gs_trace_complete(t, 0, 1, "matmul", n, 1, n, "", far_dep, 1, "k.c", 2, 0);
    gs_trace_complete(t, 0, 1, "matmul", n + 1, 1, n + 1, "", near_dep, 1, "k.c", 3, 0);
    ASSERT_EQ(gs_trace_close(t, &err), GS_OK) << err.message;
    const std::string text = slurp(path);
    unlink(path.c_str());
    cJSON *doc = cJSON_Parse(text.c_str());
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(events_of(doc, "s").size(), 1u); /* the far dependency gets no arrow */
    cJSON_Delete(doc);
}

TEST(Trace, UnwritablePathIsAnIoError)
{
    gs_error err;
    EXPECT_EQ(gs_trace_open("/nonexistent-dir/trace.json", &err), nullptr);
    EXPECT_EQ(err.code, GS_ERR_IO);
    EXPECT_STREQ(err.file, "/nonexistent-dir/trace.json");
    EXPECT_EQ(gs_trace_close(nullptr, &err), GS_OK);
    gs_trace_complete(nullptr, 0, 0, "x", 0, 1, 0, "", nullptr, 0, "k.c", 1, 0); /* ignored */
    EXPECT_EQ(gs_trace_rate_create(nullptr, 0, "a", "b"), nullptr);
    gs_trace_rate_add(nullptr, 0, 1, 1.0);
}

// ---- atomic writes: the trace appears at its path only when complete ----

// A fresh directory of its own, so leftovers can be counted.
struct TraceDir {
    std::string dir;
    TraceDir()
    {
        dir = std::string(GS_BINARY_DIR) + "/test_trace_dir_" + std::to_string(getpid());
        std::string cmd = "rm -rf '" + dir + "'";
        EXPECT_EQ(system(cmd.c_str()), 0);
        EXPECT_EQ(mkdir(dir.c_str(), 0755), 0);
    }
    ~TraceDir()
    {
        std::string cmd = "rm -rf '" + dir + "'";
        EXPECT_EQ(system(cmd.c_str()), 0);
    }
    std::vector<std::string> entries() const
    {
        std::vector<std::string> out;
        DIR *d = opendir(dir.c_str());
        if (!d) return out;
        while (struct dirent *e = readdir(d))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) out.push_back(e->d_name);
        closedir(d);
        return out;
    }
};

void write_file(const std::string &path, const std::string &text)
{
    std::ofstream f(path, std::ios::binary);
    f << text;
}

void some_events(gs_trace *t, int n)
{
    for (int i = 0; i < n; i++)
        gs_trace_complete(t, 0, 0, "matmul", (uint64_t)i * 1000, 500, (size_t)i, "a, b", nullptr, 0,
                          "kernels/k.c", 12, 0);
}

TEST(TraceAtomic, OldTraceStaysUntilTheNewOneIsComplete)
{
    TraceDir d;
    const std::string path = d.dir + "/t.json";
    write_file(path, "old");
    gs_error err;
    gs_trace *t = gs_trace_open(path.c_str(), &err);
    ASSERT_NE(t, nullptr) << err.message;
    some_events(t, 5000); /* more than the stdio buffer: some of it reached the temp file */
    EXPECT_EQ(slurp(path), "old");
    ASSERT_EQ(gs_trace_close(t, &err), GS_OK) << err.message;
    cJSON *doc = cJSON_Parse(slurp(path).c_str());
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(events_of(doc, "X").size(), 5000u);
    cJSON_Delete(doc);
    EXPECT_EQ(d.entries(), std::vector<std::string>{"t.json"});
}

// A job killed while tracing leaves the target as it was.
TEST(TraceAtomic, KilledWriterLeavesNoPartialTrace)
{
    TraceDir d;
    const std::string path = d.dir + "/t.json";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        gs_error err;
        gs_trace *t = gs_trace_open(path.c_str(), &err);
        if (!t) _exit(3);
        some_events(t, 20000);
        raise(SIGKILL);
        _exit(4);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exit " << WEXITSTATUS(status);
    struct stat st;
    EXPECT_NE(lstat(path.c_str(), &st), 0) << "a partial trace was left at " << path;
    /* with O_TMPFILE (Linux file systems that have it) nothing is left at all; elsewhere the
     * helper's PATH.tmp.PID, never the target */
    for (const std::string &e : d.entries())
        EXPECT_EQ(e.rfind("t.json.tmp.", 0), 0u) << e;
}

TEST(TraceAtomic, NonRegularTargetsAreRefused)
{
    TraceDir d;
    const std::string dirpath = d.dir + "/sub";
    ASSERT_EQ(mkdir(dirpath.c_str(), 0755), 0);
    gs_error err;
    EXPECT_EQ(gs_trace_open(dirpath.c_str(), &err), nullptr);
    EXPECT_EQ(err.code, GS_ERR_USAGE);
    EXPECT_STREQ(err.file, dirpath.c_str());
    EXPECT_NE(std::string(err.message).find("is a directory, not a regular file"),
              std::string::npos)
        << err.message;
    struct stat st;
    ASSERT_EQ(lstat(dirpath.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));

    /* a FIFO: refused at once (opening it for writing would block until a reader came) */
    const std::string fifo = d.dir + "/pipe";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
    EXPECT_EQ(gs_trace_open(fifo.c_str(), &err), nullptr);
    EXPECT_EQ(err.code, GS_ERR_USAGE);
    EXPECT_NE(std::string(err.message).find("is a FIFO"), std::string::npos) << err.message;
    ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(d.entries().size(), 2u); /* sub and pipe, no temp files */
}

// A write that fails part way (the file size limit: EFBIG) is an I/O error naming the path; the
// previous trace is kept and no temp file is left.
TEST(TraceAtomic, FailedWriteKeepsTheOldTrace)
{
    TraceDir d;
    const std::string path = d.dir + "/t.json";
    write_file(path, "old");
    pid_t pid = fork(); /* the limit and the ignored signal stay in the child */
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl;
        getrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = 64 * 1024;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(5);
        gs_error err;
        gs_trace *t = gs_trace_open(path.c_str(), &err);
        if (!t) _exit(3);
        some_events(t, 20000); /* about 4 MB */
        gs_status st = gs_trace_close(t, &err);
        if (st != GS_ERR_IO) _exit(6);
        if (strcmp(err.file, path.c_str()) != 0) _exit(7);
        if (!strstr(err.message, "error writing trace file")) _exit(8);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(slurp(path), "old");
    EXPECT_EQ(d.entries(), std::vector<std::string>{"t.json"});
}

} // namespace
