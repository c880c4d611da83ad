/*
 * proc_wait.h - waiting on the processes a test starts by events, not by guesses of their time:
 * a sweep's progress line, a process's end; and adopting the orphans a killed sweep leaves, so
 * a test reaps them itself. Header-only (C++); Linux (prctl).
 */
#ifndef GS_TEST_PROC_WAIT_H
#define GS_TEST_PROC_WAIT_H

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

/* While alive: this process adopts the orphans of the processes it starts (a child subreaper),
 * so a test sees and reaps them itself instead of leaving them to init. */
struct GsTestSubreaper {
    int ok;
    GsTestSubreaper() : ok(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0) {}
    ~GsTestSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

inline double gs_test_seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/* Whether the child (or adopted orphan) pid ends within bound seconds; reaped if so, else
 * killed and reaped, so a failure leaves nothing running. Polled: the normal case returns at
 * once, only a failure waits out the (generous) bound. */
inline bool gs_test_ends_within(pid_t pid, double bound)
{
    auto t0 = std::chrono::steady_clock::now();
    pid_t w;
    while ((w = waitpid(pid, nullptr, WNOHANG)) == 0) {
        if (gs_test_seconds_since(t0) > bound) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return w == pid; /* -1: not a child of this process, nothing to judge by */
}

/* Whether the sweep pid, whose stdout goes to the file progress, printed the progress line of
 * all its jobs but the last ("[ N-1/N]") within bound seconds (false also when it ended first).
 * The sweep is left running: the caller interrupts the last job. */
inline bool gs_test_all_but_last_job_done(pid_t pid, const std::string &progress, double bound)
{
    auto t0 = std::chrono::steady_clock::now();
    while (gs_test_seconds_since(t0) < bound && waitpid(pid, nullptr, WNOHANG) == 0) {
        std::ifstream f(progress);
        std::string line;
        size_t done = 0, total = 0;
        while (std::getline(f, line))
            if (std::sscanf(line.c_str(), "[ %zu/%zu]", &done, &total) == 2 && total > 1 &&
                done == total - 1)
                return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

#endif
