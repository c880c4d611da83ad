// Outputs: only regular files are replaced, every write is checked, nothing is announced that
// was not written, temp files never outlive the writer, one sweep per output directory.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "gs/strbuf.h"

namespace
{

struct CliRun {
    int rc = -1;
    std::string out, err;
};

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string tmpdir(const std::string &name)
{
    std::string d =
        std::string(GS_BINARY_DIR) + "/test_outputs/" + name + "-" + std::to_string(getpid());
    std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return d;
}

CliRun gensweep(const std::string &args, const std::string &prefix = "",
                const std::string &cwd = GS_SOURCE_DIR)
{
    static int n = 0;
    std::string base = std::string(GS_BINARY_DIR) + "/test_outputs/run-" +
                       std::to_string(getpid()) + "-" + std::to_string(n++);
    std::system(("mkdir -p '" + std::string(GS_BINARY_DIR) + "/test_outputs'").c_str());
    std::string cmd = prefix + "cd '" + cwd + "' && '" + GS_GENSWEEP_BIN + "' " + args + " >'" +
                      base + ".out' 2>'" + base + ".err'";
    int st = std::system(cmd.c_str());
    CliRun r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    return r;
}

// Names in dir containing needle.
int count_entries(const std::string &dir, const char *needle)
{
    int n = 0;
    DIR *d = opendir(dir.c_str());
    if (!d) return 0;
    while (struct dirent *de = readdir(d))
        n += strstr(de->d_name, needle) != nullptr;
    closedir(d);
    return n;
}

gs_status write_text(const std::string &path, const std::string &text, gs_error *err)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_puts(&sb, text.c_str());
    gs_error_clear(err);
    gs_status st = gs_sb_write_file(&sb, path.c_str(), err);
    gs_sb_free(&sb);
    return st;
}

const char *kRun = "run --config configs/gen2.yaml --kernel elementwise_add --shape 128x512";

} // namespace

TEST(Outputs, OnlyRegularFilesAreReplaced)
{
    std::string d = tmpdir("regular");
    gs_error err;
    // a regular file is replaced
    ASSERT_EQ(write_text(d + "/f.json", "old", &err), GS_OK) << err.message;
    ASSERT_EQ(write_text(d + "/f.json", "new", &err), GS_OK) << err.message;
    EXPECT_EQ(slurp(d + "/f.json"), "new");
    // a symlink is not followed nor replaced
    ASSERT_EQ(symlink("f.json", (d + "/link.json").c_str()), 0);
    EXPECT_EQ(write_text(d + "/link.json", "x", &err), GS_ERR_USAGE);
    EXPECT_NE(std::string(err.message).find("a symbolic link"), std::string::npos) << err.message;
    struct stat st;
    ASSERT_EQ(lstat((d + "/link.json").c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    EXPECT_EQ(slurp(d + "/f.json"), "new");
    // a FIFO, a directory and a device
    ASSERT_EQ(mkfifo((d + "/fifo").c_str(), 0600), 0);
    EXPECT_EQ(write_text(d + "/fifo", "x", &err), GS_ERR_USAGE);
    EXPECT_NE(std::string(err.message).find("a FIFO"), std::string::npos) << err.message;
    EXPECT_EQ(write_text(d, "x", &err), GS_ERR_USAGE);
    EXPECT_EQ(write_text("/dev/full", "x", &err), GS_ERR_USAGE);
    EXPECT_NE(std::string(err.message).find("a device"), std::string::npos) << err.message;
    ASSERT_EQ(stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    EXPECT_EQ(count_entries(d, ".tmp."), 0);
}

// A write that fails part-way (here EFBIG from RLIMIT_FSIZE, the way ENOSPC fails a write on a
// full disk) is reported with the path and the reason; the old file stays as it was and no
// temp file is left.
TEST(Outputs, FailedWriteIsReportedAndLeavesNothing)
{
    std::string d = tmpdir("efbig");
    std::string path = d + "/out.json";
    gs_error err;
    ASSERT_EQ(write_text(path, "previous", &err), GS_OK);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        gs_error e;
        gs_status st = write_text(path, std::string(100000, 'x'), &e);
        int ok = st == GS_ERR_IO && strstr(e.message, "cannot write") &&
                 strstr(e.message, strerror(EFBIG)) && !strcmp(e.file, path.c_str());
        _exit(ok ? 0 : 1);
    }
    int wst = 0;
    ASSERT_EQ(waitpid(pid, &wst, 0), pid);
    ASSERT_TRUE(WIFEXITED(wst));
    EXPECT_EQ(WEXITSTATUS(wst), 0);
    EXPECT_EQ(slurp(path), "previous");
    EXPECT_EQ(count_entries(d, ".tmp."), 0);
    EXPECT_EQ(count_entries(d, "#"), 0);
}

// gensweep run: --record /dev/full is refused (exit 2) before the run, the device survives;
// an unwritable --trace is the same usage error.
TEST(Outputs, RunRefusesBadOutputPathsBeforeRunning)
{
    std::string d = tmpdir("run");
    CliRun r = gensweep(std::string(kRun) + " --record /dev/full");
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("/dev/full: is a device"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("status"), std::string::npos) << "ran anyway: " << r.out;
    struct stat st;
    ASSERT_EQ(stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    CliRun t = gensweep(std::string(kRun) + " --trace '" + d + "/no/such/dir/t.json'");
    EXPECT_EQ(t.rc, 2) << t.out << t.err;
    CliRun rr = gensweep(std::string(kRun) + " --record '" + d + "/no/such/dir/r.json'");
    EXPECT_EQ(rr.rc, 2) << rr.out << rr.err;
    // a full disk after the run: exit 1 (failure), not 0, and the reason
    CliRun full = gensweep(std::string(kRun) + " --record '" + d + "/rec.json'",
                           "trap '' XFSZ; ulimit -f 1; ");
    EXPECT_EQ(full.rc, 1) << full.out << full.err;
    EXPECT_NE(full.err.find(strerror(EFBIG)), std::string::npos) << full.err;
    EXPECT_EQ(count_entries(d, ".tmp."), 0);
}

TEST(Outputs, SweepOutputDirectoryIsLockedAndMustBeADirectory)
{
    std::string d = tmpdir("lock");
    // another sweep holds the lock
    ASSERT_EQ(std::system(("mkdir -p '" + d + "/out'").c_str()), 0);
    int fd = open((d + "/out/.gensweep.lock").c_str(), O_RDWR | O_CREAT, 0666);
    ASSERT_GE(fd, 0);
    pid_t holder = fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (fcntl(fd, F_SETLK, &fl) != 0) _exit(3);
        pause();
        _exit(0);
    }
    // wait until the holder has the lock
    for (int i = 0; i < 500; i++) {
        struct flock q;
        memset(&q, 0, sizeof q);
        q.l_type = F_WRLCK;
        q.l_whence = SEEK_SET;
        ASSERT_EQ(fcntl(fd, F_GETLK, &q), 0);
        if (q.l_type != F_UNLCK) break;
        usleep(10000);
    }
    CliRun r =
        gensweep("sweep --configs configs/gen2.yaml --kernels elementwise_add --quiet --out '" + d +
                 "/out'");
    // a workload run into that directory is refused the same way, before any step runs
    CliRun wr = gensweep("workload run tests/workloads/tiny-decode.yaml --config gen2 --out '" + d +
                         "/out'");
    kill(holder, SIGKILL);
    waitpid(holder, nullptr, 0);
    close(fd);
    EXPECT_EQ(wr.rc, 2) << wr.out << wr.err;
    EXPECT_NE(wr.err.find("is in use by another sweep (pid " + std::to_string(holder) + ")"),
              std::string::npos)
        << wr.err;
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("is in use by another sweep (pid " + std::to_string(holder) + ")"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(count_entries(d + "/out", "results"), 0);
    // with the holder gone (however it ended) the directory is free again
    CliRun ok = gensweep(
        "sweep --configs configs/gen2.yaml --kernels elementwise_add --quiet --no-report --out '" +
        d + "/out'");
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_EQ(count_entries(d + "/out", ".jobs-"), 0); // the job scratch directory is removed
    // --out and --trace-dir naming a file: one usage error before any job runs
    std::ofstream(d + "/file") << "x";
    CliRun f =
        gensweep("sweep --configs configs/gen2.yaml --kernels elementwise_add --quiet --out '" + d +
                 "/file'");
    EXPECT_EQ(f.rc, 2) << f.err;
    EXPECT_NE(f.err.find("not a directory"), std::string::npos) << f.err;
    CliRun td =
        gensweep("sweep --configs configs/gen2.yaml --kernels elementwise_add --quiet --out '" + d +
                 "/o2' --trace-dir '" + d + "/file'");
    EXPECT_EQ(td.rc, 2) << td.err;
    EXPECT_EQ(slurp(d + "/file"), "x");
}

// A sweep that cannot write its results exits 1 and does not print "results: PATH".
TEST(Outputs, SweepNeverAnnouncesAFileItDidNotWrite)
{
    std::string d = tmpdir("announce");
    ASSERT_EQ(std::system(("mkdir -p '" + d + "/out/results.json'").c_str()), 0);
    CliRun r = gensweep("sweep --configs configs/gen2.yaml --kernels elementwise_add --out '" + d +
                        "/out'");
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("results.json: is a directory"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("results: "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("report: "), std::string::npos) << r.out;
    // the results are written but the report cannot be: still exit 1, and no "report:" line
    ASSERT_EQ(std::system(("mkdir -p '" + d + "/out2/report.html'").c_str()), 0);
    CliRun rep = gensweep("sweep --configs configs/gen2.yaml --kernels elementwise_add --out '" +
                          d + "/out2'");
    EXPECT_EQ(rep.rc, 1) << rep.out << rep.err;
    EXPECT_NE(rep.err.find("report.html: is a directory"), std::string::npos) << rep.err;
    EXPECT_EQ(rep.out.find("report: "), std::string::npos) << rep.out;
    EXPECT_NE(rep.out.find("results: "), std::string::npos) << rep.out;
}

// `baseline update` whose own check sweep cannot write results.json (a full disk: here
// RLIMIT_FSIZE, EFBIG) must not fall back on the results.json an earlier run left in the sweep
// directory: it wrote the committed baselines from that stale file and exited 0.
TEST(Outputs, BaselineUpdateNeverReadsAResultsFileItsSweepDidNotWrite)
{
    std::string d = tmpdir("baseline-stale");
    ASSERT_EQ(std::system(("mkdir -p '" + d + "/build/sweep-baseline'").c_str()), 0);
    // small enough for its baseline to fit under the limit below
    std::ofstream(d + "/build/sweep-baseline/results.json")
        << R"({"schema":"gensweep-results","schema_version":1,"suite":"check","jobs":[)"
        << R"({"id":"gen2/elementwise_add/v/bf16/128x512","generation":"gen2",)"
        << R"("status":"pass","time_ns":12345}]})";
    const std::string args = "baseline update --configs '" + std::string(GS_SOURCE_DIR) +
                             "/configs/gen2.yaml' --kernels elementwise_add -j 2 --quiet --out bl";
    // the limit on gensweep alone: its stderr goes through a pipe to a writer without it
    const std::string log = d + "/full.log";
    const std::string cmd = "cd '" + d + "' && { (trap '' XFSZ; ulimit -f 2; '" + GS_GENSWEEP_BIN +
                            "' " + args + "); echo \"rc=$?\"; } 2>&1 | cat >'" + log + "'";
    const int sh = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(sh) && WEXITSTATUS(sh) == 0) << sh;
    const std::string full = slurp(log);
    EXPECT_NE(full.find("rc=1"), std::string::npos) << full;
    EXPECT_NE(full.find("did not write build/sweep-baseline/results.json"), std::string::npos)
        << full;
    EXPECT_NE(full.find(std::string("results.json: cannot write: ") + strerror(EFBIG)),
              std::string::npos)
        << full; // the cause
    EXPECT_NE(full.find("no baseline written"), std::string::npos) << full;
    struct stat st;
    EXPECT_NE(stat((d + "/bl").c_str(), &st), 0) << "a baseline was written from the stale file";
    // with room to write, the sweep's own results become the baseline
    CliRun ok = gensweep(args, "", d);
    EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
    std::string bl = slurp(d + "/bl/check-gen2.json");
    EXPECT_NE(bl.find("elementwise_add"), std::string::npos) << bl;
    EXPECT_EQ(bl.find("12345"), std::string::npos) << bl;
}

// A writer killed at any moment (SIGKILL: no handler runs) leaves the old file or the whole new
// one, and no temp file: the temp file has no name until the instant before the rename.
TEST(Outputs, WriterKilledMidWriteLeavesNoTempFile)
{
    std::string d = tmpdir("killed");
    std::string path = d + "/big.json";
    gs_error err;
    ASSERT_EQ(write_text(path, "old", &err), GS_OK);
    const std::string big(64u << 20, 'n');
    for (int delay_us : {0, 2000, 10000, 30000, 80000}) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            gs_error e;
            for (;;)
                write_text(path, big, &e);
        }
        usleep((useconds_t)delay_us);
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        struct stat st;
        ASSERT_EQ(stat(path.c_str(), &st), 0);
        EXPECT_TRUE(st.st_size == 3 || (size_t)st.st_size == big.size()) << st.st_size;
        EXPECT_EQ(count_entries(d, ".tmp."), 0) << "after " << delay_us << " us";
    }
}

// A sweep whose --out cannot take a write (a full disk: here RLIMIT_FSIZE, EFBIG): the jobs
// cannot write their records nor their stderr, so the sweep says for each why ("its output
// folder cannot be written" and the system's reason), not only that no record came; it exits 1.
TEST(Outputs, SweepJobsOnAFullOutSayWhy)
{
    std::string d = tmpdir("sweep-full");
    const std::string log = d + "/full.log";
    const std::string cmd = "cd '" + d + "' && { (trap '' XFSZ; ulimit -f 1; '" + GS_GENSWEEP_BIN +
                            "' sweep --configs '" + GS_SOURCE_DIR +
                            "/configs/gen2.yaml' --kernels elementwise_add --timelines -j 2 " +
                            "--out out); echo \"rc=$?\"; } 2>&1 | cat >'" + log + "'";
    const int sh = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(sh) && WEXITSTATUS(sh) == 0) << sh;
    const std::string full = slurp(log);
    EXPECT_NE(full.find("rc=1"), std::string::npos) << full;
    EXPECT_NE(
        full.find(std::string("its output folder cannot be written (") + strerror(EFBIG) + ")"),
        std::string::npos)
        << full;
    EXPECT_EQ(count_entries(d + "/out", "probe-"), 0);
}
