// The child-process runner (harness/job/proc.h): exit status, signals, the wall timeout, the
// address-space limit, stderr captured and its file removed, the fork-server start, a running
// child killed and reaped when its handle is freed, children dying with a parent killed by
// SIGKILL.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <string>
#include <thread>

#include "../support/proc_wait.h"
#include "proc.h"
#include "worker.h"

#if defined(__SANITIZE_ADDRESS__)
#define GS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_TEST_ASAN 1
#endif
#endif

namespace
{

std::string tmp_path(const char *name)
{
    return "/tmp/gs-test-proc-" + std::to_string(getpid()) + "-" + name;
}

bool exists(const std::string &p)
{
    struct stat sb;
    return stat(p.c_str(), &sb) == 0;
}

gs_proc_opts sh_opts(const char *const *argv)
{
    gs_proc_opts o;
    memset(&o, 0, sizeof o);
    o.kind = GS_PROC_EXEC;
    o.exe = "/bin/sh";
    o.argv = argv;
    return o;
}

TEST(Proc, ExitStatusAndRusage)
{
    const char *argv[] = {"/bin/sh", "-c", "exit 3", nullptr};
    gs_proc_opts o = sh_opts(argv);
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_GT(gs_proc_pid(p), 0);
    const gs_proc_result *r = gs_proc_wait(p);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->exited, 1);
    EXPECT_EQ(r->exit_code, 3);
    EXPECT_EQ(r->signal, 0);
    EXPECT_EQ(r->timed_out, 0);
    EXPECT_GT(r->maxrss_kb, 0);
    EXPECT_GE(r->wall_s, 0.0);
    EXPECT_EQ(gs_proc_wait(p), r); /* reaped once, the same result after */
    gs_proc_free(p);
}

TEST(Proc, KilledBySignal)
{
    const char *argv[] = {"/bin/sh", "-c", "kill -TERM $$; sleep 5", nullptr};
    gs_proc_opts o = sh_opts(argv);
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    const gs_proc_result *r = gs_proc_wait(p);
    EXPECT_EQ(r->exited, 0);
    EXPECT_EQ(r->signal, SIGTERM);
    EXPECT_EQ(r->timed_out, 0);
    EXPECT_STREQ(gs_proc_signal_name(r->signal), "SIGTERM");
    gs_proc_free(p);
}

// How a CPU-limit stop is told from other deaths, on results as gs_proc_wait gives them: SIGXCPU
// counts whatever rusage read (it is tick-sampled and can fall a little under the limit the kernel
// enforced: the nki front end's flaky "killed by SIGXCPU"); a SIGKILL counts only with the soft
// limit used up.
TEST(Proc, StoppedAtCpuLimit)
{
    gs_proc_result r{};
    r.signal = SIGXCPU;
    r.cpu_s = 1.96; /* under a 2 s limit, as rusage can read it */
    EXPECT_EQ(gs_proc_stopped_at_cpu_limit(&r, 2.0), 1);
    EXPECT_EQ(gs_proc_stopped_at_cpu_limit(&r, 0.0), 0) << "no limit set: a SIGXCPU of its own";
    r.signal = SIGKILL;
    r.cpu_s = 2.99; /* the hard limit is ceil(1.5) + 1 = 3 s */
    EXPECT_EQ(gs_proc_stopped_at_cpu_limit(&r, 1.5), 1);
    r.cpu_s = 0.4;
    EXPECT_EQ(gs_proc_stopped_at_cpu_limit(&r, 1.5), 0) << "a SIGKILL from someone else";
    r.cpu_s = 5.0;
    r.timed_out = 1;
    EXPECT_EQ(gs_proc_stopped_at_cpu_limit(&r, 1.5), 0) << "the runner's wall timeout";
    r.timed_out = 0;
    r.signal = 0;
    r.exited = 1;
    EXPECT_EQ(gs_proc_stopped_at_cpu_limit(&r, 1.5), 0);
    EXPECT_EQ(gs_proc_stopped_at_cpu_limit(nullptr, 1.5), 0);
}

TEST(Proc, TimeoutKillsTheWholeGroup)
{
    std::string mark = tmp_path("late");
    remove(mark.c_str());
    /* the grandchild would write the mark after 1 s: killing the group must stop it too */
    std::string script = "(sleep 1; touch " + mark + ") & sleep 120";
    const char *argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
    gs_proc_opts o = sh_opts(argv);
    o.timeout_s = 0.3;
    o.own_group = 1;
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    const gs_proc_result *r = gs_proc_wait(p);
    EXPECT_EQ(r->timed_out, 1);
    EXPECT_EQ(r->signal, SIGKILL);
    EXPECT_GE(r->wall_s, 0.3);
    EXPECT_LT(r->wall_s, 60.0); /* killed at the timeout, not after the sleep: any load fits */
    gs_proc_free(p);
    usleep(1500 * 1000);
    EXPECT_FALSE(exists(mark)) << "a process of the timed-out group survived";
    remove(mark.c_str());
}

TEST(Proc, PollReturnsNullWhileRunningAndKillEndsIt)
{
    const char *argv[] = {"/bin/sh", "-c", "sleep 30", nullptr};
    gs_proc_opts o = sh_opts(argv);
    o.own_group = 1;
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(gs_proc_poll(p), nullptr);
    gs_proc_kill(p);
    const gs_proc_result *r = gs_proc_wait(p);
    EXPECT_EQ(r->signal, SIGKILL);
    EXPECT_EQ(r->timed_out, 0); /* killed by the caller, not the timeout */
    gs_proc_free(p);
}

TEST(Proc, FreeKillsAndReapsARunningChild)
{
    const char *argv[] = {"/bin/sh", "-c", "sleep 30", nullptr};
    gs_proc_opts o = sh_opts(argv);
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    pid_t pid = gs_proc_pid(p);
    gs_proc_free(p);
    /* reaped: no zombie left under this pid */
    EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
    gs_proc_free(nullptr);
}

TEST(Proc, StderrCapturedStdinEmptyFilesRemoved)
{
    std::string err = tmp_path("err");
    /* a read of stdin must see end of file at once (/dev/null), not wait for the terminal */
    const char *argv[] = {"/bin/sh", "-c",
                          "cat; echo first >&2; echo out; echo 'last line' >&2; exit 1", nullptr};
    gs_proc_opts o = sh_opts(argv);
    o.err = GS_PROC_FILE;
    o.err_path = err.c_str();
    o.tail_bytes = 2000;
    o.remove_outputs = 1;
    o.timeout_s = 20;
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    const gs_proc_result *r = gs_proc_wait(p);
    EXPECT_EQ(r->timed_out, 0);
    EXPECT_EQ(r->exit_code, 1);
    ASSERT_NE(r->tail, nullptr);
    EXPECT_STREQ(r->tail, "first\nlast line"); /* stdout went to /dev/null */
    EXPECT_FALSE(exists(err));
    gs_proc_free(p);
}

TEST(Proc, TailStartsAtALineBoundary)
{
    std::string err = tmp_path("tail");
    const char *argv[] = {"/bin/sh", "-c", "echo 0123456789abcdef >&2; echo end >&2", nullptr};
    gs_proc_opts o = sh_opts(argv);
    o.err = GS_PROC_FILE;
    o.err_path = err.c_str();
    o.tail_bytes = 8; /* "cdef\nend\n" does not fit: the cut line is dropped */
    o.remove_outputs = 1;
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_STREQ(gs_proc_wait(p)->tail, "end");
    gs_proc_free(p);
}

TEST(Proc, OneFileForStdoutAndStderrKeptWhenAsked)
{
    std::string log = tmp_path("log");
    const char *argv[] = {"/bin/sh", "-c", "echo a; echo b >&2; echo c", nullptr};
    gs_proc_opts o = sh_opts(argv);
    o.out = o.err = GS_PROC_FILE;
    o.out_path = o.err_path = log.c_str();
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(gs_proc_wait(p)->exit_code, 0);
    gs_proc_free(p);
    FILE *f = fopen(log.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char buf[64] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    EXPECT_EQ(std::string(buf, n), "a\nb\nc\n");
    remove(log.c_str());
}

TEST(Proc, ExecFailureIsExit127WithAMessage)
{
    std::string err = tmp_path("noexec");
    const char *argv[] = {"/nonexistent/gs-binary", nullptr};
    gs_proc_opts o;
    memset(&o, 0, sizeof o);
    o.exe = argv[0];
    o.argv = argv;
    o.err = GS_PROC_FILE;
    o.err_path = err.c_str();
    o.exec_fail_who = "tester";
    o.tail_bytes = 500;
    o.remove_outputs = 1;
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    const gs_proc_result *r = gs_proc_wait(p);
    EXPECT_EQ(r->exit_code, 127);
    EXPECT_NE(strstr(r->tail, "tester: cannot run /nonexistent/gs-binary:"), nullptr) << r->tail;
    gs_proc_free(p);
}

int env_probe(void *ctx)
{
    const char *v = getenv(static_cast<const char *>(ctx));
    return v && !strcmp(v, "yes") ? 7 : 8;
}

TEST(Proc, FunctionChildWithEnvironment)
{
    gs_proc_opts o;
    memset(&o, 0, sizeof o);
    o.kind = GS_PROC_FUNCTION;
    o.fn = env_probe;
    o.fn_ctx = const_cast<char *>("GS_TEST_PROC_VAR");
    o.env_name = "GS_TEST_PROC_VAR";
    o.env_value = "yes";
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(gs_proc_wait(p)->exit_code, 7);
    gs_proc_free(p);
    EXPECT_EQ(getenv("GS_TEST_PROC_VAR"), nullptr); /* set in the child only */
}

int big_alloc(void *)
{
    /* 1 GiB touched: cannot succeed under a 256 MiB address-space limit */
    size_t n = static_cast<size_t>(1) << 30;
    char *p = static_cast<char *>(malloc(n));
    if (!p) return 4;
    memset(p, 1, n);
    free(p);
    return 0;
}

TEST(Proc, MemoryLimitStopsTheChildOnly)
{
#ifdef GS_TEST_ASAN
    GTEST_SKIP() << "ASan reserves terabytes of shadow memory: an address-space limit breaks it";
#endif
    struct rlimit before;
    ASSERT_EQ(getrlimit(RLIMIT_AS, &before), 0);
    gs_proc_opts o;
    memset(&o, 0, sizeof o);
    o.kind = GS_PROC_FUNCTION;
    o.fn = big_alloc;
    o.mem_limit = 256.0 * 1024 * 1024;
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    const gs_proc_result *r = gs_proc_wait(p);
    EXPECT_EQ(r->exit_code, 4);
    gs_proc_free(p);
    /* the parent keeps no limit */
    struct rlimit rl;
    ASSERT_EQ(getrlimit(RLIMIT_AS, &rl), 0);
    EXPECT_EQ(rl.rlim_cur, before.rlim_cur);
}

int fake_serve(const gs_job_request *rq)
{
    /* exit 5 when it got the request it was given */
    return rq && rq->record && !strcmp(rq->record, "x") ? 5 : 6;
}

TEST(Proc, WorkerStartServesTheRequestInTheFork)
{
    gs_worker_set_server(fake_serve);
    const char *argv[] = {"/nonexistent/gensweep", "run", "x", nullptr};
    gs_job_request rq;
    memset(&rq, 0, sizeof rq);
    rq.record = "x";
    gs_proc_opts o;
    memset(&o, 0, sizeof o);
    o.kind = GS_PROC_WORKER;
    o.exe = argv[0];
    o.argv = argv;
    o.request = &rq;
    o.env_name = "GS_BASELINE_PATHS";
    o.env_value = nullptr; /* forked, whatever the test's environment says */
    gs_proc *p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(gs_proc_wait(p)->exit_code, 5);
    gs_proc_free(p);
    /* with the old paths asked for, the job is exec'd: the missing binary is exit 127 */
    o.env_value = "1";
    p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(gs_proc_wait(p)->exit_code, 127);
    gs_proc_free(p);
    /* without a request there is nothing to serve: exec'd */
    o.env_value = nullptr;
    o.request = nullptr;
    p = gs_proc_start(&o);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(gs_proc_wait(p)->exit_code, 127);
    gs_proc_free(p);
    gs_worker_set_server(nullptr);
}

int sleep_forever(void *)
{
    for (;;)
        pause();
}

int serve_forever(const gs_job_request *)
{
    for (;;)
        pause();
}

// A parent killed with SIGKILL (a batch system's time limit, the OOM killer) cannot kill or time
// out its children: every way the runner starts one, the child must die with the parent anyway.
TEST(Proc, ChildrenDieWithAParentKilledBySigkill)
{
    GsTestSubreaper adopt; /* the parent's orphans become this test's to reap */
    ASSERT_TRUE(adopt.ok);
    int fd[2];
    ASSERT_EQ(pipe(fd), 0);
    pid_t parent = fork();
    ASSERT_GE(parent, 0);
    if (parent == 0) {
        close(fd[0]);
        gs_worker_set_server(serve_forever);
        unsetenv("GS_BASELINE_PATHS");
        const char *argv[] = {"/bin/sleep", "600", nullptr};
        gs_job_request rq;
        memset(&rq, 0, sizeof rq);
        gs_proc_opts o[4];
        for (int i = 0; i < 4; i++) {
            memset(&o[i], 0, sizeof o[i]);
            o[i].exe = argv[0];
            o[i].argv = argv;
        }
        o[0].kind = GS_PROC_EXEC; /* exec'd, in its own group as the sweep's jobs are */
        o[0].own_group = 1;
        o[1].kind = GS_PROC_FUNCTION; /* a function in the fork */
        o[1].fn = sleep_forever;
        o[2].kind = GS_PROC_WORKER; /* the fork server */
        o[2].request = &rq;
        o[2].own_group = 1;
        o[3].kind = GS_PROC_WORKER; /* the fork server's exec fallback */
        o[3].own_group = 1;
        pid_t pids[4];
        for (int i = 0; i < 4; i++) {
            gs_proc *p = gs_proc_start(&o[i]);
            if (!p) _exit(2);
            pids[i] = gs_proc_pid(p); /* never freed: that would kill it */
        }
        if (write(fd[1], pids, sizeof pids) != (ssize_t)sizeof pids) _exit(3);
        for (;;)
            pause();
    }
    close(fd[1]);
    pid_t pids[4];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof pids && (n = read(fd[0], (char *)pids + got, sizeof pids - got)) > 0)
        got += (size_t)n;
    close(fd[0]);
    kill(parent, SIGKILL);
    int st = 0;
    ASSERT_EQ(waitpid(parent, &st, 0), parent);
    ASSERT_EQ(got, sizeof pids) << "the parent did not start its children";
    const char *kind[] = {"exec", "function", "fork server", "fork server's exec"};
    for (int i = 0; i < 4; i++)
        EXPECT_TRUE(gs_test_ends_within(pids[i], 30.0))
            << kind[i] << ": pid " << pids[i] << " outlived its parent";
}

} // namespace
