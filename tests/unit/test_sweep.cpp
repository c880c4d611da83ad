// Sweep tests: job records, isolation of crashing/hanging/deadlocking/memory-hungry
// jobs (test-only kernels in gensweep_faults), Ctrl-C, shard + merge == full sweep, determinism
// across -j, compare detecting an injected regression, and the results schema round trip.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/proc_wait.h"
#include "compare.h"
#include "results.h"
#include "sweep.h"

#if defined(__SANITIZE_ADDRESS__)
#define GS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_TEST_ASAN 1
#endif
#endif

namespace
{

const std::string kSrc = GS_SOURCE_DIR;

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

void spit(const std::string &path, const std::string &text)
{
    std::ofstream f(path);
    f << text;
}

std::string tmpdir(const std::string &name)
{
    std::string d =
        std::string(GS_BINARY_DIR) + "/test_sweep/" + name + "-" + std::to_string(getpid());
    std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return d;
}

CliRun exec(const std::string &bin, const std::string &args)
{
    static int n = 0;
    std::string base = std::string(GS_BINARY_DIR) + "/test_sweep/run-" + std::to_string(getpid()) +
                       "-" + std::to_string(n++);
    std::system(("mkdir -p '" + std::string(GS_BINARY_DIR) + "/test_sweep'").c_str());
    std::string cmd =
        "cd '" + kSrc + "' && '" + bin + "' " + args + " >'" + base + ".out' 2>'" + base + ".err'";
    int st = std::system(cmd.c_str());
    CliRun r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    return r;
}

CliRun faults(const std::string &args)
{
    return exec(GS_FAULTS_BIN, args);
}

CliRun gensweep(const std::string &args)
{
    return exec(GS_GENSWEEP_BIN, args);
}

struct Doc {
    cJSON *d = nullptr;
    explicit Doc(const std::string &path)
    {
        gs_error err;
        gs_error_clear(&err);
        d = gs_results_load(path.c_str(), &err);
        EXPECT_NE(d, nullptr) << err.message;
    }
    ~Doc() { cJSON_Delete(d); }
    const cJSON *job(const std::string &prefix) const
    {
        const cJSON *j;
        cJSON_ArrayForEach(j,
                           cJSON_GetObjectItemCaseSensitive(
                               d, "jobs")) if (std::string(gs_json_str(j, "id")).rfind(prefix, 0) ==
                                               0) return j;
        return nullptr;
    }
    int jobs() const { return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "jobs")); }
};

// results.json text without the "wall" member (the last one, on its own line).
std::string without_wall(const std::string &path)
{
    std::string t = slurp(path);
    size_t p = t.find(",\n\"wall\": ");
    EXPECT_NE(p, std::string::npos) << path;
    return t.substr(0, p);
}

const char *kEw = "--configs configs/gen2.yaml --kernels elementwise_add";

// The processes whose parent is pid (field 4 of /proc/PID/stat).
std::vector<pid_t> children_of(pid_t parent)
{
    std::vector<pid_t> kids;
    DIR *d = opendir("/proc");
    if (!d) return kids;
    struct dirent *de;
    while ((de = readdir(d)) != nullptr) {
        char *end = nullptr;
        long pid = strtol(de->d_name, &end, 10);
        if (pid <= 0 || *end) continue;
        std::string st = slurp("/proc/" + std::string(de->d_name) + "/stat");
        size_t rp = st.rfind(')'); /* the command name may hold spaces and parentheses */
        if (rp == std::string::npos) continue;
        std::istringstream in(st.substr(rp + 1));
        std::string state;
        long ppid = 0;
        in >> state >> ppid;
        if (ppid == parent) kids.push_back((pid_t)pid);
    }
    closedir(d);
    return kids;
}

// Start `gensweep_faults sweep` of fault_hang alone into dir (its jobs forked, or exec'd when
// paths is "exec") and wait until its job process runs: the sweep's pid, the job's in *job
// (0 when none appeared within a generous bound).
pid_t start_hanging_sweep(const std::string &dir, const char *paths, pid_t *job)
{
    *job = 0;
    pid_t pid = fork();
    if (pid < 0) return pid;
    if (pid == 0) {
        if (chdir(kSrc.c_str()) != 0) _exit(99);
        if (paths)
            setenv("GS_BASELINE_PATHS", paths, 1);
        else
            unsetenv("GS_BASELINE_PATHS");
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execl(GS_FAULTS_BIN, GS_FAULTS_BIN, "sweep", "--configs", "configs/gen2.yaml", "--kernels",
              "fault_hang", "--timeout", "600", "-j", "1", "--out", dir.c_str(), (char *)nullptr);
        _exit(98);
    }
    auto t0 = std::chrono::steady_clock::now();
    while (gs_test_seconds_since(t0) < 120) {
        std::vector<pid_t> kids = children_of(pid);
        if (!kids.empty()) {
            *job = kids[0];
            break;
        }
        if (waitpid(pid, nullptr, WNOHANG) == pid) return -1; /* the sweep ended: no hang */
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return pid;
}

} // namespace

TEST(SweepRecord, RunWritesAJobRecordWithTimeline)
{
    std::string d = tmpdir("record");
    CliRun r = gensweep("run --config configs/gen2.yaml --kernel elementwise_add --record '" + d +
                        "/rec.json' --timeline");
    ASSERT_EQ(r.rc, 0) << r.err;
    gs_error err;
    gs_error_clear(&err);
    cJSON *j = gs_json_read_file((d + "/rec.json").c_str(), &err);
    ASSERT_NE(j, nullptr) << err.message;
    EXPECT_STREQ(gs_json_str(j, "status"), "pass");
    EXPECT_EQ(std::string(gs_json_str(j, "id")).rfind("gen2/elementwise_add/", 0), 0u);
    EXPECT_GT(gs_json_num(j, "time_ns"), 0.0);
    EXPECT_GE(gs_json_num(j, "roofline_ratio"), 1.0); // nothing beats its roofline
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "checked")));
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(j, "timeline");
    ASSERT_TRUE(cJSON_IsObject(tl));
    const cJSON *t;
    int tracks = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(tl, "tracks"))
    {
        tracks++;
        EXPECT_LE(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "slices")), 300);
    }
    EXPECT_GT(tracks, 0);
    EXPECT_FALSE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "wall_s")));
    cJSON_Delete(j);
    // the scratch trace for the timeline is gone
    EXPECT_NE(access((d + "/rec.json.trace.json").c_str(), F_OK), 0);
}

// A trace that cannot be written (here: a directory where one job's trace goes) is a warning
// recorded with that job: it keeps its status and its times, the others their traces, and the
// sweep's exit status is unchanged.
void unwritable_trace_is_a_warning(const char *name)
{
    std::string d = tmpdir(name);
    std::string t = d + "/traces";
    const std::string bad = t + "/gen2_elementwise_add_default_bf16_1x5.json";
    ASSERT_EQ(std::system(("mkdir -p '" + bad + "'").c_str()), 0);
    CliRun r = gensweep("sweep " + std::string(kEw) + " -j 2 --out '" + d + "/out' --trace-dir '" +
                        t + "'");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("gen2/elementwise_add/default/bf16/1x5: warning: trace not written"),
              std::string::npos)
        << r.err;
    Doc doc(d + "/out/results.json");
    ASSERT_NE(doc.d, nullptr);
    int warned = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc.d, "jobs"))
    {
        std::string id = gs_json_str(j, "id");
        EXPECT_STREQ(gs_json_str(j, "status"), "pass") << id;
        EXPECT_GT(gs_json_num(j, "time_ns"), 0.0) << id;
        const cJSON *te = cJSON_GetObjectItemCaseSensitive(j, "trace_error");
        const cJSON *tr = cJSON_GetObjectItemCaseSensitive(j, "trace");
        if (id == "gen2/elementwise_add/default/bf16/1x5") {
            warned++;
            ASSERT_TRUE(cJSON_IsString(te)) << id;
            EXPECT_NE(std::string(te->valuestring).find("cannot create trace file"),
                      std::string::npos);
            EXPECT_TRUE(cJSON_IsNull(tr)) << id; // never announce a path that was not written
        } else {
            EXPECT_EQ(te, nullptr) << id;
            ASSERT_TRUE(cJSON_IsString(tr)) << id;
            EXPECT_EQ(access(tr->valuestring, R_OK), 0) << tr->valuestring;
        }
    }
    EXPECT_EQ(warned, 1);
}

TEST(SweepTrace, UnwritableTraceIsAWarningNotAJobError)
{
    unwritable_trace_is_a_warning("tracefail");
}

// A trace whose writing fails part way (a file-size limit: EFBIG) is reported with the reason;
// `run` keeps the job's status and numbers and exits 1 for the missing output, and no partial
// trace is left at the path.
TEST(SweepTrace, TraceWriteFailureNamesTheReason)
{
    std::string d = tmpdir("tracefull");
    std::string cmd = "cd '" + kSrc + "' && trap '' XFSZ && ulimit -f 16 && '" +
                      std::string(GS_GENSWEEP_BIN) +
                      "' run --config configs/gen2.yaml --kernel matmul --shape 256x256x256 "
                      "--trace '" +
                      d + "/t.json' >'" + d + "/out' 2>'" + d + "/err'";
    int st = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 1);
    std::string err = slurp(d + "/err"), out = slurp(d + "/out");
    EXPECT_NE(err.find("error writing trace file: File too large"), std::string::npos) << err;
    EXPECT_NE(out.find("pass"), std::string::npos) << out;
    EXPECT_NE(access((d + "/t.json").c_str(), F_OK), 0);
}

// the same when each job is an exec'd `gensweep run` (the fallback without the fork server)
TEST(SweepTrace, UnwritableTraceIsAWarningInExecdJobsToo)
{
    setenv("GS_BASELINE_PATHS", "exec", 1);
    unwritable_trace_is_a_warning("tracefail-exec");
    unsetenv("GS_BASELINE_PATHS");
}

// With several outputs the check's "worst at" names the output where the worst element is:
// fault_two_outputs is wrong only in Y[3, 7] of its first output Y; Z, checked last, matches.
TEST(SweepRecord, WorstAtNamesTheOutputWithTheWorstError)
{
    CliRun r =
        faults("run --config configs/gen2.yaml --kernel fault_two_outputs --dtype fp32 --json");
    EXPECT_EQ(r.rc, 1) << r.err;
    cJSON *j = cJSON_Parse(r.out.c_str());
    ASSERT_NE(j, nullptr) << r.out;
    EXPECT_STREQ(gs_json_str(j, "status"), "fail");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    EXPECT_STREQ(gs_json_str(e, "worst"), "Y[3, 7]");
    EXPECT_EQ(gs_json_num(e, "mismatches"), 1.0);
    EXPECT_NE(std::string(gs_json_str(j, "reason")).find("worst at Y[3, 7]:"), std::string::npos)
        << gs_json_str(j, "reason");
    cJSON_Delete(j);
}

// The record's timeline comes from the run itself, not from its trace: per track it must hold
// exactly the instructions the trace shows on that engine or queue, over the same time span.
TEST(SweepRecord, TimelineAgreesWithTheTraceOfTheSameRun)
{
    std::string d = tmpdir("timeline");
    CliRun r = gensweep("run --config configs/gen3.yaml --kernel attention --record '" + d +
                        "/rec.json' --timeline --trace '" + d + "/t.json'");
    ASSERT_EQ(r.rc, 0) << r.err;
    gs_error err;
    gs_error_clear(&err);
    cJSON *trace = gs_json_read_file((d + "/t.json").c_str(), &err);
    ASSERT_NE(trace, nullptr) << err.message;
    cJSON *rec = gs_json_read_file((d + "/rec.json").c_str(), &err);
    ASSERT_NE(rec, nullptr) << err.message;
    // the trace's instruction slices per track name ("c0 tensor", "c0 dma q1"), as the report
    // names them; DMA engine tracks hold shares, not instructions
    struct Span {
        int n = 0;
        double t0 = 1e300, t1 = -1;
    };
    std::map<std::pair<int, int>, std::string> names;
    std::map<std::string, Span> want;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(trace, "traceEvents"))
    {
        std::string ph = gs_json_str(e, "ph") ? gs_json_str(e, "ph") : "";
        const int pid = (int)gs_json_num(e, "pid"), tid = (int)gs_json_num(e, "tid");
        if (ph == "M" && std::string(gs_json_str(e, "name")) == "thread_name")
            names[{pid, tid}] = "c" + std::to_string(pid) + " " +
                                gs_json_str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name");
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(trace, "traceEvents"))
    {
        std::string ph = gs_json_str(e, "ph") ? gs_json_str(e, "ph") : "";
        if (ph != "X") continue;
        std::string name = names[{(int)gs_json_num(e, "pid"), (int)gs_json_num(e, "tid")}];
        if (name.find(" dma engine ") != std::string::npos) continue;
        Span &s = want[name];
        s.n++;
        s.t0 = std::min(s.t0, gs_json_num(e, "ts") * 1e3);
        s.t1 = std::max(s.t1, (gs_json_num(e, "ts") + gs_json_num(e, "dur")) * 1e3);
    }
    ASSERT_GT(want.size(), 2u); // engines and queues
    const cJSON *t;
    size_t tracks = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(rec, "timeline"), "tracks"))
    {
        tracks++;
        const std::string name = gs_json_str(t, "name");
        ASSERT_TRUE(want.count(name)) << name << " is not a track of the trace";
        const cJSON *sl = cJSON_GetObjectItemCaseSensitive(t, "slices");
        int n = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, sl) n += (int)cJSON_GetArrayItem(x, 4)->valuedouble;
        EXPECT_EQ(n, want[name].n) << name;
        EXPECT_EQ(cJSON_GetArrayItem(cJSON_GetArrayItem(sl, 0), 0)->valuedouble, want[name].t0)
            << name;
        double t1 = 0;
        cJSON_ArrayForEach(x, sl) t1 = std::max(t1, cJSON_GetArrayItem(x, 1)->valuedouble);
        EXPECT_EQ(t1, want[name].t1) << name;
    }
    EXPECT_EQ(tracks, want.size());
    cJSON_Delete(trace);
    cJSON_Delete(rec);
}

TEST(SweepIsolation, CrashHangDeadlockAndMemoryAreRecordedOthersSurvive)
{
    std::string d = tmpdir("faults");
#ifdef GS_TEST_ASAN
    const std::string oom = ""; // RLIMIT_AS cannot be used under ASan
    const std::string lim = "";
#else
    const std::string oom = ",fault_oom";
    const std::string lim = " --mem-limit 1GiB";
#endif
    // No job here may meet the timeout, however loaded the machine: a generous one that the
    // normal case never comes near. The hang, which always costs its whole timeout, runs in a
    // sweep of its own with a short one, where it races nothing.
    CliRun r = faults("sweep --configs configs/gen2.yaml --kernels "
                      "fault_crash,fault_deadlock,elementwise_add" +
                      oom + " --timeout 600 -j 2" + lim + " --out '" + d + "'");
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    const std::string dh = tmpdir("faults-hang");
    CliRun rh = faults("sweep --configs configs/gen2.yaml --kernels fault_hang --timeout 1 -j 1 "
                       "--out '" +
                       dh + "'");
    EXPECT_EQ(rh.rc, 1) << rh.out << rh.err;
    Doc hdoc(dh + "/results.json");
    ASSERT_NE(hdoc.d, nullptr);
    const cJSON *h = hdoc.job("gen2/fault_hang/");
    ASSERT_NE(h, nullptr);
    EXPECT_STREQ(gs_json_str(h, "status"), "timeout");
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hdoc.d, "complete")));
    EXPECT_NE(slurp(dh + "/junit.xml").find("<error message=\"timeout"), std::string::npos);
    Doc doc(d + "/results.json");
    ASSERT_NE(doc.d, nullptr);
    const cJSON *c = doc.job("gen2/fault_crash/");
    ASSERT_NE(c, nullptr);
    EXPECT_STREQ(gs_json_str(c, "status"), "crash");
    // a signal normally; under ASan a sanitizer report ("SEGV on unknown address")
    EXPECT_NE(std::string(gs_json_str(c, "reason")).find("SEGV"), std::string::npos)
        << gs_json_str(c, "reason");
    EXPECT_NE(std::string(gs_json_str(c, "stderr_tail")).find("about to crash"), std::string::npos);
    const cJSON *dl = doc.job("gen2/fault_deadlock/");
    ASSERT_NE(dl, nullptr);
    EXPECT_STREQ(gs_json_str(dl, "status"), "deadlock");
    EXPECT_NE(std::string(gs_json_str(dl, "reason")).find("deadlock"), std::string::npos);
#ifndef GS_TEST_ASAN
    const cJSON *m = doc.job("gen2/fault_oom/");
    ASSERT_NE(m, nullptr);
    std::string ms = gs_json_str(m, "status");
    EXPECT_TRUE(ms == "error" || ms == "crash") << ms;
    EXPECT_NE(std::string(gs_json_str(m, "reason")).find("memory"), std::string::npos)
        << gs_json_str(m, "reason");
#endif
    // every elementwise_add job passed next to the failures
    int ew = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc.d, "jobs"))
    {
        if (strcmp(gs_json_str(j, "kernel"), "elementwise_add") != 0) continue;
        ew++;
        EXPECT_STREQ(gs_json_str(j, "status"), "pass") << gs_json_str(j, "id");
        EXPECT_GT(gs_json_num(j, "time_ns"), 0.0);
    }
    EXPECT_GE(ew, 3);
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc.d, "complete")));
    std::string junit = slurp(d + "/junit.xml");
    EXPECT_NE(junit.find("<error message=\"crash"), std::string::npos);
    EXPECT_NE(junit.find("<failure message=\"deadlock"), std::string::npos);
    std::string csv = slurp(d + "/results.csv");
    EXPECT_NE(csv.find("gen2/fault_crash/"), std::string::npos);
    // nothing of the killed jobs is left: no job scratch directory, no temp files
    for (const std::string &dir : {d, dh}) {
        CliRun ls = exec("/bin/ls", "-a '" + dir + "'");
        EXPECT_EQ(ls.out.find(".jobs-"), std::string::npos) << ls.out;
        EXPECT_EQ(ls.out.find(".tmp."), std::string::npos) << ls.out;
    }
}

TEST(SweepInterrupt, SigintWritesIncompleteResults)
{
    std::string d = tmpdir("sigint");
    const std::string out = d + "/out", progress = d + "/progress.txt";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (chdir(kSrc.c_str()) != 0) _exit(99);
        freopen(progress.c_str(), "w", stdout);
        execl(GS_FAULTS_BIN, GS_FAULTS_BIN, "sweep", "--configs", "configs/gen2.yaml", "--kernels",
              "elementwise_add,fault_hang", "--timeout", "600", "-j", "1", "--out", out.c_str(),
              (char *)nullptr);
        _exit(98);
    }
    // elementwise_add jobs sort first; once all but the last job are done, fault_hang (last)
    // runs until killed. Waiting for that line, not for a guess of their time, keeps a loaded
    // machine from interrupting them too (the bound is only for a sweep that never gets there).
    EXPECT_TRUE(gs_test_all_but_last_job_done(pid, progress, 300)) << slurp(progress);
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    // interrupted at once, not after the hanging job's --timeout
    EXPECT_LT(gs_test_seconds_since(t0), 120.0);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 1);
    Doc doc(out + "/results.json");
    ASSERT_NE(doc.d, nullptr);
    EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(doc.d, "complete")));
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc.d, "interrupted")));
    EXPECT_EQ(doc.job("gen2/fault_hang/"), nullptr); // killed, not recorded
    EXPECT_NE(doc.job("gen2/elementwise_add/"), nullptr);
    // the job killed is named, not only counted: in results.json ("not_run", why interrupted),
    // as a failed JUnit case by its id, and in the report's notice before the verdict
    const cJSON *nr = cJSON_GetObjectItemCaseSensitive(doc.d, "not_run");
    ASSERT_EQ(cJSON_GetArraySize(nr), 1);
    const cJSON *e = cJSON_GetArrayItem(nr, 0);
    const std::string id = gs_json_str(e, "id");
    EXPECT_EQ(id.rfind("gen2/fault_hang/", 0), 0u) << id;
    EXPECT_STREQ(gs_json_str(e, "why"), "interrupted");
    EXPECT_EQ(gs_json_num(e, "shard"), 1.0);
    EXPECT_EQ(gs_json_num(e, "shards"), 1.0);
    std::string junit = slurp(out + "/junit.xml");
    EXPECT_NE(junit.find("name=\"" + id + "\""), std::string::npos) << junit;
    EXPECT_NE(junit.find("<failure message=\"not run: interrupted\""), std::string::npos) << junit;
    EXPECT_EQ(junit.find("name=\"not run 1 of"), std::string::npos) << junit;
    std::string html = slurp(out + "/report.html");
    size_t notice = html.find("id=\"incomplete\""), verdict = html.find("<section id=\"verdict\"");
    ASSERT_NE(notice, std::string::npos);
    EXPECT_LT(notice, verdict);
    EXPECT_NE(html.find("<li><code>" + id + "</code> (interrupted)</li>", notice),
              std::string::npos);
    EXPECT_EQ(html.find("Missing shards"), std::string::npos); // no shard is missing
}

// A sweep killed with SIGKILL cannot clean up: its .jobs-<pid>/ stays in --out. The next sweep
// into that directory removes it (its pid is gone), and leaves a live process's directory and
// whatever a symlink named like one points to.
TEST(SweepInterrupt, JobDirsOfKilledSweepsAreRemovedByTheNext)
{
    std::string d = tmpdir("sigkill");
    GsTestSubreaper adopt; /* the killed sweep's job becomes this test's to reap */
    ASSERT_TRUE(adopt.ok);
    pid_t job = 0;
    pid_t pid = start_hanging_sweep(d, nullptr, &job);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_NE(job, 0) << "the sweep started no job";
    EXPECT_TRUE(gs_test_ends_within(job, 30.0)) << "the job outlived its killed sweep";
    const std::string stale = d + "/.jobs-" + std::to_string(pid);
    struct stat sb;
    ASSERT_EQ(stat(stale.c_str(), &sb), 0) << "the killed sweep left no job directory";
    // a live process's directory (this test's), and a symlink to a directory outside
    const std::string live = d + "/.jobs-" + std::to_string(getpid());
    ASSERT_EQ(mkdir(live.c_str(), 0755), 0);
    spit(live + "/job-0.json", "{}");
    const std::string outside = tmpdir("sigkill-outside");
    spit(outside + "/keep.json", "{}");
    ASSERT_EQ(symlink(outside.c_str(), (d + "/.jobs-2147483646").c_str()), 0);
    CliRun r = gensweep("sweep --configs configs/gen2.yaml --kernels elementwise_add --quiet "
                        "--no-report -j 2 --out '" +
                        d + "'");
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(stat(stale.c_str(), &sb), 0) << stale << " is still there";
    EXPECT_EQ(stat((live + "/job-0.json").c_str(), &sb), 0);
    EXPECT_EQ(stat((outside + "/keep.json").c_str(), &sb), 0);
}

// A sweep killed with SIGKILL (a batch system's time limit, the OOM killer) cannot kill its jobs
// or time them out: the jobs die with it, forked or exec'd (the hanging one would otherwise run
// forever).
TEST(SweepInterrupt, JobsDieWithASweepKilledBySigkill)
{
    GsTestSubreaper adopt; /* the killed sweep's job becomes this test's to reap */
    ASSERT_TRUE(adopt.ok);
    const char *paths[] = {nullptr, "exec"};
    for (const char *how : paths) {
        SCOPED_TRACE(how ? "exec'd jobs" : "forked jobs");
        std::string d = tmpdir(how ? "sigkill-exec" : "sigkill-fork");
        pid_t job = 0;
        pid_t pid = start_hanging_sweep(d, how, &job);
        ASSERT_GT(pid, 0);
        ASSERT_EQ(kill(pid, SIGKILL), 0);
        ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
        ASSERT_NE(job, 0) << "the sweep started no job";
        EXPECT_TRUE(gs_test_ends_within(job, 30.0))
            << "the job (pid " << job << ") outlived its sweep";
    }
}

TEST(SweepShards, ShardsMergedEqualTheFullSweepAndJobsCountDoesNotMatter)
{
    std::string d = tmpdir("shards");
    std::string sel = " --configs configs/gen1.yaml configs/gen2.yaml --kernels elementwise_add"
                      " --quiet --out '" +
                      d;
    CliRun full = gensweep("sweep -j 2" + sel + "/full'");
    ASSERT_EQ(full.rc, 0) << full.err;
    CliRun j1 = gensweep("sweep -j 1" + sel + "/j1'");
    ASSERT_EQ(j1.rc, 0) << j1.err;
    EXPECT_EQ(without_wall(d + "/full/results.json"), without_wall(d + "/j1/results.json"));
    CliRun s1 = gensweep("sweep -j 2 --shard 1/2" + sel + "/s1'");
    CliRun s2 = gensweep("sweep -j 2 --shard 2/2" + sel + "/s2'");
    ASSERT_EQ(s1.rc, 0) << s1.err;
    ASSERT_EQ(s2.rc, 0) << s2.err;
    Doc a(d + "/s1/results.json"), b(d + "/s2/results.json"), f(d + "/full/results.json");
    EXPECT_GT(a.jobs(), 0);
    EXPECT_GT(b.jobs(), 0);
    EXPECT_EQ(a.jobs() + b.jobs(), f.jobs());
    EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a.d, "complete")));
    CliRun m = gensweep("merge --out '" + d + "/merged' '" + d + "/s2' '" + d + "/s1'");
    ASSERT_EQ(m.rc, 0) << m.err;
    EXPECT_EQ(without_wall(d + "/merged/results.json"), without_wall(d + "/full/results.json"));
    // duplicates and a missing shard are refused / reported
    CliRun dup = gensweep("merge --out '" + d + "/dup' '" + d + "/s1' '" + d + "/s1'");
    EXPECT_EQ(dup.rc, 2);
    EXPECT_NE(dup.err.find("twice"), std::string::npos) << dup.err;
    CliRun part = gensweep("merge --out '" + d + "/part' '" + d + "/s1'");
    EXPECT_EQ(part.rc, 1) << part.err;
    // a schema version this build does not know
    std::string t = slurp(d + "/s2/results.json");
    size_t p = t.find("\"schema_version\": 1");
    ASSERT_NE(p, std::string::npos);
    t.replace(p, 19, "\"schema_version\": 2");
    std::system(("mkdir -p '" + d + "/v2'").c_str());
    spit(d + "/v2/results.json", t);
    CliRun v2 = gensweep("merge --out '" + d + "/bad' '" + d + "/s1' '" + d + "/v2'");
    EXPECT_EQ(v2.rc, 2);
    EXPECT_NE(v2.err.find("schema_version"), std::string::npos) << v2.err;
}

// Shard files of a perf sweep of gen1 with every kernel, made from its plan without running it
// (job k of the id-sorted plan is in shard k mod N + 1): merge names every planned job that has
// no result by id and shard, also a kernel whose jobs were all in the missing shards (the plan
// made again with the kernels present is not the file's; with every kernel it is), and says why
// one did not run: a shard missing (no "why"), or "interrupted" in a shard that was; a shard's
// own list of the jobs it did not run is kept.
TEST(SweepShards, MergeNamesTheJobsOfMissingAndInterruptedShards)
{
    const std::string cfg = kSrc + "/configs/gen1.yaml";
    const char *cfgs[] = {cfg.c_str()};
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.suite = GS_SWEEP_PERF;
    o.configs = cfgs;
    o.n_configs = 1;
    o.no_report = 1;
    gs_diags dg;
    gs_diags_init(&dg);
    gs_sweep *s = gs_sweep_create(&o, &dg);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(gs_sweep_plan(s, &dg), 0);
    gs_diags_free(&dg);
    const size_t P = gs_sweep_job_count(s);
    std::vector<std::string> ids;
    for (size_t i = 0; i < P; i++)
        ids.push_back(gs_sweep_job_id(s, i));
    gs_sweep_free(s);
    ASSERT_GE(P, 12u);
    const size_t N = 4;
    auto kernel = [](const std::string &id) {
        size_t a = id.find('/') + 1;
        return id.substr(a, id.find('/', a) - a);
    };
    // shards 3 and 4 are missing; shard 2 was interrupted after its first job and lists the
    // second as not run; a kernel has jobs in the missing shards only
    std::map<std::string, int> in_merged;
    for (size_t i = 0; i < P; i++)
        if (i % N == 0 || i == 1) in_merged[kernel(ids[i])] = 1;
    bool kernel_lost = false;
    for (size_t i = 0; i < P; i++)
        kernel_lost |= !in_merged.count(kernel(ids[i]));
    ASSERT_TRUE(kernel_lost) << "the plan has no kernel whose jobs are all in shards 3 and 4";
    std::string d = tmpdir("merge-names");
    for (size_t sh = 1; sh <= 2; sh++) {
        std::string j, nr;
        for (size_t i = sh - 1; i < P; i += N) {
            if (sh == 2 && i > 1) {
                if (i == 1 + N)
                    nr = "{\"id\": \"" + ids[i] +
                         "\", \"shard\": 2, \"shards\": 4, \"why\": "
                         "\"interrupted\"}";
                continue;
            }
            j += std::string(j.empty() ? "" : ",\n") + "{\"id\": \"" + ids[i] +
                 "\", \"generation\": \"gen1\", \"kernel\": \"" + kernel(ids[i]) +
                 "\", \"status\": \"pass\", \"time_ns\": 1000}";
        }
        std::string doc =
            "{\"schema\": \"gensweep-results\", \"schema_version\": 1,\n"
            "\"tool\": {\"version\": \"0\", \"commit\": \"c\"}, \"suite\": "
            "\"perf\",\n\"complete\": false, \"interrupted\": " +
            std::string(sh == 2 ? "true" : "false") +
            ", \"shard\": {\"index\": " + std::to_string(sh) +
            ", \"count\": 4},\n\"overrides\": [], \"planned_jobs\": " + std::to_string(P) +
            ",\n\"configs\": [{\"name\": \"gen1\", \"path\": \"" + cfg + "\"}],\n\"jobs\": [" + j +
            "],\n" + (nr.empty() ? "" : "\"not_run\": [" + nr + "],\n") +
            "\"wall\": {\"jobs\": {}}}\n";
        std::system(("mkdir -p '" + d + "/s" + std::to_string(sh) + "'").c_str());
        spit(d + "/s" + std::to_string(sh) + "/results.json", doc);
    }
    CliRun r = gensweep("merge --out '" + d + "/all' '" + d + "/s1' '" + d + "/s2'");
    EXPECT_EQ(r.rc, 1) << r.err;
    Doc m(d + "/all/results.json");
    ASSERT_NE(m.d, nullptr) << r.err;
    std::map<std::string, const cJSON *> listed;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(m.d, "not_run"))
    {
        EXPECT_EQ(listed.count(gs_json_str(x, "id")), 0u) << gs_json_str(x, "id");
        listed[gs_json_str(x, "id")] = x;
    }
    size_t want = 0;
    std::string junit = slurp(d + "/all/junit.xml");
    for (size_t i = 0; i < P; i++) {
        const size_t sh = i % N + 1;
        if (sh == 1 || i == 1) continue;
        want++;
        ASSERT_EQ(listed.count(ids[i]), 1u) << ids[i] << " not named\n" << r.err;
        const cJSON *e = listed[ids[i]];
        EXPECT_EQ(gs_json_num(e, "shard"), (double)sh) << ids[i];
        EXPECT_EQ(gs_json_num(e, "shards"), 4.0) << ids[i];
        EXPECT_STREQ(gs_json_str(e, "why"), sh == 2 ? "interrupted" : "") << ids[i];
        EXPECT_NE(junit.find("name=\"" + ids[i] + "\""), std::string::npos) << ids[i];
    }
    EXPECT_EQ(listed.size(), want);
    EXPECT_NE(junit.find("message=\"not run: interrupted (shard 2/4)\""), std::string::npos);
    EXPECT_NE(junit.find("message=\"not run: shard 3/4 missing\""), std::string::npos);
    EXPECT_EQ(junit.find("name=\"not run 1 of"), std::string::npos);
    EXPECT_NE(r.err.find("(shard 2/4: interrupted)"), std::string::npos) << r.err;
}

TEST(SweepCompare, InjectedRegressionIsDetectedImprovementListed)
{
    std::string d = tmpdir("compare");
    CliRun r = gensweep(std::string("sweep ") + kEw + " --quiet --out '" + d + "/base'");
    ASSERT_EQ(r.rc, 0) << r.err;
    Doc base(d + "/base/results.json");
    ASSERT_NE(base.d, nullptr);
    // slow one job down by 10%, make another fail
    cJSON *jobs = cJSON_GetObjectItemCaseSensitive(base.d, "jobs");
    ASSERT_GE(cJSON_GetArraySize(jobs), 2);
    cJSON *j0 = cJSON_GetArrayItem(jobs, 0), *j1 = cJSON_GetArrayItem(jobs, 1);
    std::string id0 = gs_json_str(j0, "id"), id1 = gs_json_str(j1, "id");
    double t0 = gs_json_num(j0, "time_ns");
    cJSON_ReplaceItemInObjectCaseSensitive(j0, "time_ns", cJSON_CreateNumber(t0 * 1.10));
    cJSON_ReplaceItemInObjectCaseSensitive(j1, "status", cJSON_CreateString("fail"));
    gs_sb sb;
    gs_sb_init(&sb);
    gs_results_emit(&sb, base.d);
    spit(d + "/new.json", gs_sb_cstr(&sb));
    gs_sb_free(&sb);
    CliRun c = gensweep("compare '" + d + "/base/results.json' '" + d + "/new.json'");
    EXPECT_EQ(c.rc, 1) << c.out << c.err;
    EXPECT_NE(c.out.find("REGRESSION  " + id0 + ": time"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("REGRESSION  " + id1 + ": status pass -> fail"), std::string::npos)
        << c.out;
    // the other way round it is an improvement, not a regression
    CliRun back = gensweep("compare '" + d + "/new.json' '" + d + "/base/results.json'");
    EXPECT_EQ(back.rc, 0) << back.out;
    EXPECT_NE(back.out.find("improved    " + id0), std::string::npos) << back.out;
    // under a 20% threshold the time change is not a regression (the status change still is)
    CliRun thr =
        gensweep("compare --threshold 20% '" + d + "/base/results.json' '" + d + "/new.json'");
    EXPECT_EQ(thr.out.find(id0 + ": time"), std::string::npos) << thr.out;
    // sweep --baseline with a baseline file written by `baseline update --from`
    CliRun bu = gensweep("baseline update --from '" + d + "/new.json' --out '" + d + "/bl'");
    ASSERT_EQ(bu.rc, 0) << bu.err;
    CliRun sb2 = gensweep(std::string("sweep ") + kEw + " --quiet --out '" + d +
                          "/again' --baseline '" + d + "/bl'");
    EXPECT_EQ(sb2.rc, 0) << sb2.err; // against the slowed/failed baseline everything improved
    CliRun sb3 = gensweep(std::string("sweep ") + kEw + " --quiet --out '" + d +
                          "/again2' --baseline '" + d + "/base/results.json'");
    EXPECT_EQ(sb3.rc, 0) << sb3.err;
}

TEST(SweepSchema, WriteReadWriteIsIdentical)
{
    std::string d = tmpdir("schema");
    CliRun r = gensweep(std::string("sweep ") + kEw + " --quiet --out '" + d + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::string text = slurp(d + "/results.json");
    Doc doc(d + "/results.json");
    ASSERT_NE(doc.d, nullptr);
    gs_sb sb;
    gs_sb_init(&sb);
    gs_results_emit(&sb, doc.d);
    EXPECT_EQ(std::string(gs_sb_cstr(&sb)), text);
    gs_sb_free(&sb);
    // every documented job key is present
    const cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc.d, "jobs"), 0);
    for (const char *k : {"id",
                          "generation",
                          "kernel",
                          "variant",
                          "dtype",
                          "shape",
                          "dims",
                          "params",
                          "mode",
                          "status",
                          "reason",
                          "stderr_tail",
                          "time_ns",
                          "instructions",
                          "flops",
                          "hbm_bytes",
                          "achieved_tflops",
                          "peak_tflops",
                          "roofline_ns",
                          "roofline_ratio",
                          "bottleneck",
                          "critical_path_ns",
                          "engines",
                          "sbuf_high_water",
                          "psum_high_water",
                          "error",
                          "trace"})
        EXPECT_NE(cJSON_GetObjectItemCaseSensitive(j, k), nullptr) << k;
    EXPECT_EQ(cJSON_GetObjectItemCaseSensitive(j, "wall_s"), nullptr); // moved to "wall"
    const cJSON *cfg = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc.d, "configs"), 0);
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cfg, "params"), "engines.tensor.clock");
    ASSERT_NE(clock, nullptr);
    EXPECT_STREQ(gs_json_str(clock, "unit"), "Hz");
    EXPECT_GT(gs_json_num(clock, "value"), 1e8);
}

TEST(SweepCli, UsageErrorsExitTwo)
{
    EXPECT_EQ(gensweep("sweep --kernels no_such_kernel --quiet").rc, 2);
    EXPECT_EQ(gensweep("sweep --shard 3/2").rc, 2);
    EXPECT_EQ(gensweep("sweep --configs /nonexistent.yaml").rc, 2);
    EXPECT_EQ(gensweep("sweep --suite nightly").rc, 2);
    EXPECT_EQ(gensweep("compare only_one.json").rc, 2);
    EXPECT_EQ(gensweep("sweep --set no.such.key=1 --configs configs/gen2.yaml").rc, 2);
}

// tune --write stores the best params next to the config; a later sweep of that config uses
// them and its report shows the tuning gain.
TEST(SweepTuning, TunedParamsAreUsedAndReported)
{
    std::string d = tmpdir("tuning");
    ASSERT_EQ(std::system(("mkdir -p '" + d + "/cfg' && cp '" + GS_SOURCE_DIR +
                           "/configs/gen2.yaml' '" + d + "/cfg/'")
                              .c_str()),
              0);
    CliRun t = gensweep("tune --config '" + d +
                        "/cfg/gen2.yaml' --kernel elementwise_add --variant default --shape "
                        "256x2048 --write");
    ASSERT_EQ(t.rc, 0) << t.out << t.err;
    std::string tf = slurp(d + "/cfg/tuning/gen2.json");
    ASSERT_NE(tf.find("elementwise_add"), std::string::npos) << tf;
    CliRun s = gensweep("sweep --configs '" + d +
                        "/cfg/gen2.yaml' --kernels elementwise_add --quiet --out '" + d + "/out'");
    ASSERT_EQ(s.rc, 0) << s.out << s.err;
    std::string html = slurp(d + "/out/report.html");
    size_t g = html.find("Tuning gains");
    ASSERT_NE(g, std::string::npos);
    EXPECT_NE(html.find("elementwise_add/default", g), std::string::npos);
    // --no-tuning ignores the file: the report then has no tuning rows
    CliRun n =
        gensweep("sweep --no-tuning --configs '" + d +
                 "/cfg/gen2.yaml' --kernels elementwise_add --quiet --out '" + d + "/plain'");
    ASSERT_EQ(n.rc, 0) << n.out << n.err;
    std::string plain = slurp(d + "/plain/report.html");
    EXPECT_EQ(plain.find("elementwise_add/default", plain.find("Tuning gains")), std::string::npos);
}

// Jobs start as forks of the sweep process running `run` in-process with the config the sweep
// already loaded (harness/job/worker.h); the results must be byte-identical to exec'd jobs
// (GS_BASELINE_PATHS=exec), apart from wall times, also with a relative override (applied once,
// not again on the sweep's already overridden config). Two kernels (their variants, dtypes and
// params) on two generations, over 100 jobs.
TEST(SweepForkServer, ForkedJobsWriteWhatExecdJobsWrite)
{
    std::string d = tmpdir("forkserver");
    std::string sel = " --configs configs/gen1.yaml configs/gen3.yaml --set "
                      "core.dma.bandwidth_per_engine=x1.5 --kernels "
                      "matmul,elementwise_add -j 2 --quiet --no-report --out '" +
                      d;
    CliRun forked = gensweep("sweep" + sel + "/fork'");
    ASSERT_EQ(forked.rc, 0) << forked.err;
    CliRun execd = exec("env", std::string("GS_BASELINE_PATHS=exec '") + GS_GENSWEEP_BIN +
                                   "' sweep" + sel + "/exec'");
    ASSERT_EQ(execd.rc, 0) << execd.err;
    EXPECT_GT(Doc(d + "/fork/results.json").jobs(), 50);
    EXPECT_EQ(without_wall(d + "/fork/results.json"), without_wall(d + "/exec/results.json"));
    EXPECT_EQ(slurp(d + "/fork/results.csv"), slurp(d + "/exec/results.csv"));
}
