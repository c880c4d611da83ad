// The sweep library (harness/sweep/sweep.h) without the gensweep binary: planning and its
// diagnostics, the output directory's lock, jobs run in forked children with -j1 (the real `run`
// through the worker, and fake jobs that crash, hang or leave no record), progress callbacks and
// the results document.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

extern "C" {
#include "commands.h" /* gs_run_serve: the real job server (C, no extern "C" of its own) */
}
#include "jobspec.h"
#include "results.h"
#include "sweep.h"
#include "worker.h"

namespace
{

const std::string kSrc = GS_SOURCE_DIR;

std::string tmpdir(const std::string &name)
{
    std::string d =
        std::string(GS_BINARY_DIR) + "/test_sweep_lib/" + name + "-" + std::to_string(getpid());
    std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return d;
}

std::vector<std::string> messages(const gs_diags &d)
{
    std::vector<std::string> v;
    for (size_t i = 0; i < d.count; i++) {
        char buf[2048];
        gs_error_format(&d.items[i], buf, sizeof buf);
        v.push_back(buf);
    }
    return v;
}

struct Diags {
    gs_diags d;
    Diags() { gs_diags_init(&d); }
    ~Diags() { gs_diags_free(&d); }
};

struct Progress {
    std::vector<gs_sweep_progress> calls;
    std::vector<std::string> ids;
};

void record_progress(void *ctx, const gs_sweep_progress *p)
{
    auto *pr = static_cast<Progress *>(ctx);
    pr->calls.push_back(*p);
    pr->ids.push_back(p->id ? p->id : "");
}

gs_sweep_opts opts_for(const std::vector<const char *> &cfgs)
{
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    static std::vector<const char *> keep;
    keep = cfgs;
    o.configs = keep.data();
    o.n_configs = keep.size();
    o.jobs = 1;
    o.no_report = 1;
    return o;
}

const std::string kGen1 = kSrc + "/configs/gen1.yaml";
const std::string kGen2 = kSrc + "/configs/gen2.yaml";

TEST(SweepLib, PlansConfigsTimesKernelsSortedUniqueAndSharded)
{
    gs_sweep_opts o = opts_for({kGen1.c_str(), kGen2.c_str()});
    o.kernels = "elementwise_add,softmax";
    Diags d;
    gs_sweep *s = gs_sweep_create(&o, &d.d);
    ASSERT_NE(s, nullptr) << (d.d.count ? d.d.items[0].message : "");
    ASSERT_EQ(gs_sweep_plan(s, &d.d), 0);
    EXPECT_EQ(d.d.count, 0u);
    EXPECT_EQ(gs_sweep_config_count(s), 2u);
    size_t n = gs_sweep_job_count(s);
    ASSERT_GT(n, 4u);
    size_t per_gen[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        std::string id = gs_sweep_job_id(s, i);
        if (i) {
            EXPECT_LT(std::string(gs_sweep_job_id(s, i - 1)), id) << "sorted, no duplicates";
        }
        ASSERT_TRUE(id.rfind("gen1/", 0) == 0 || id.rfind("gen2/", 0) == 0) << id;
        per_gen[id[3] - '1']++;
        EXPECT_TRUE(id.find("/elementwise_add/") != std::string::npos ||
                    id.find("/softmax/") != std::string::npos)
            << id;
        /* every planned id parses back into a spec with the same id */
        const gs_config *cfg = gs_sweep_config(s, id[3] == '1' ? 0 : 1);
        gs_job_spec spec;
        gs_error err;
        gs_error_clear(&err);
        ASSERT_EQ(gs_job_spec_from_id(id.c_str(), cfg, &spec, &err), GS_OK) << err.message;
    }
    EXPECT_EQ(per_gen[0], per_gen[1]) << "the same jobs on every generation";
    EXPECT_EQ(gs_sweep_job_id(s, n), nullptr);

    /* shards 1/3, 2/3, 3/3 partition the plan */
    std::vector<std::string> all;
    for (int k = 1; k <= 3; k++) {
        gs_sweep_opts so = o;
        so.shard_index = k;
        so.shard_count = 3;
        gs_sweep *sh = gs_sweep_create(&so, &d.d);
        ASSERT_NE(sh, nullptr);
        ASSERT_EQ(gs_sweep_plan(sh, &d.d), 0);
        for (size_t i = 0; i < gs_sweep_job_count(sh); i++)
            all.push_back(gs_sweep_job_id(sh, i));
        gs_sweep_free(sh);
    }
    ASSERT_EQ(all.size(), n);
    std::sort(all.begin(), all.end());
    for (size_t i = 0; i < n; i++)
        EXPECT_EQ(all[i], gs_sweep_job_id(s, i));
    gs_sweep_free(s);
}

// A directory of more than 256 *.yaml files is refused whole, not cut to its first 256.
TEST(SweepLib, ConfigDirectoryOfTooManyFilesIsRefusedNotCut)
{
    std::string dir = tmpdir("many") + "/cfgs";
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    for (int i = 0; i < 300; i++)
        std::ofstream(dir + "/g" + std::to_string(i) + ".yaml") << "name: g\n";
    Diags d;
    gs_sweep_opts o = opts_for({dir.c_str()});
    EXPECT_EQ(gs_sweep_create(&o, &d.d), nullptr);
    ASSERT_EQ(d.d.count, 1u);
    EXPECT_EQ(messages(d.d)[0],
              "--configs " + dir + ": more than 256 *.yaml files (give the files, or fewer)");
}

TEST(SweepLib, ProblemsComeBackAsDiagnosticsNotOutput)
{
    std::string dir = tmpdir("diags");
    /* nothing may reach the terminal: stderr and stdout go to a file while the library runs */
    std::string cap = dir + "/captured.txt";
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    FILE *f = std::fopen(cap.c_str(), "w");
    ASSERT_NE(f, nullptr);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);

    Diags missing, bad, dup_gen, unknown;
    std::string nofile = dir + "/nope.yaml";
    gs_sweep_opts o = opts_for({nofile.c_str()});
    gs_sweep *s1 = gs_sweep_create(&o, &missing.d);

    std::string badyaml = dir + "/bad.yaml";
    std::ofstream(badyaml) << "name: [unclosed\n";
    o = opts_for({badyaml.c_str()});
    gs_sweep *s2 = gs_sweep_create(&o, &bad.d);

    o = opts_for({kGen1.c_str(), kGen1.c_str()});
    gs_sweep *s3 = gs_sweep_create(&o, &dup_gen.d);

    o = opts_for({kGen1.c_str()});
    o.kernels = "elementwise_add,nope";
    gs_sweep *s4 = gs_sweep_create(&o, &unknown.d);
    int plan4 = s4 ? gs_sweep_plan(s4, &unknown.d) : 0;

    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    std::fclose(f);

    EXPECT_EQ(s1, nullptr);
    ASSERT_EQ(missing.d.count, 1u);
    EXPECT_EQ(missing.d.items[0].file[0], '\0') << "the sweep's own: no file";
    EXPECT_EQ(messages(missing.d)[0], "--configs " + nofile + ": No such file or directory");

    EXPECT_EQ(s2, nullptr);
    ASSERT_GE(bad.d.count, 1u);
    EXPECT_EQ(std::string(bad.d.items[0].file), badyaml) << "the loader's: located";
    EXPECT_GT(bad.d.items[0].line, 0);

    EXPECT_EQ(s3, nullptr);
    ASSERT_EQ(dup_gen.d.count, 1u);
    EXPECT_EQ(messages(dup_gen.d)[0], kGen1 + " and " + kGen1 + " both define generation 'gen1'");

    ASSERT_NE(s4, nullptr);
    EXPECT_EQ(plan4, -1);
    ASSERT_EQ(unknown.d.count, 1u);
    EXPECT_EQ(messages(unknown.d)[0].rfind("unknown kernel 'nope'; known: elementwise_add", 0), 0u)
        << messages(unknown.d)[0];
    gs_sweep_free(s4);

    std::ifstream in(cap);
    std::string printed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(printed, "") << "the library printed";
}

TEST(SweepLib, AnUnreadableTuningFileIsAWarningAndThePlanGoesOn)
{
    std::string dir = tmpdir("tuning");
    ASSERT_EQ(std::system(("cp '" + kGen1 + "' '" + dir + "/gen1.yaml' && mkdir '" + dir +
                           "/tuning' && echo '{not json' > '" + dir + "/tuning/gen1.json'")
                              .c_str()),
              0);
    std::string cfg = dir + "/gen1.yaml";
    gs_sweep_opts o = opts_for({cfg.c_str()});
    o.kernels = "elementwise_add";
    Diags d;
    gs_sweep *s = gs_sweep_create(&o, &d.d);
    ASSERT_NE(s, nullptr) << (d.d.count ? messages(d.d)[0] : "");
    ASSERT_EQ(gs_sweep_plan(s, &d.d), 0);
    EXPECT_GT(gs_sweep_job_count(s), 0u);
    ASSERT_EQ(d.d.count, 1u);
    EXPECT_EQ(messages(d.d)[0].rfind("ignoring tuning file: " + dir + "/tuning/gen1.json", 0), 0u)
        << messages(d.d)[0];
    char path[4096];
    EXPECT_EQ(gs_sweep_tuning_path(s, 0, path, sizeof path), 1);
    gs_sweep_free(s);

    o.no_tuning = 1; /* --no-tuning: not read at all */
    Diags d2;
    s = gs_sweep_create(&o, &d2.d);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(gs_sweep_plan(s, &d2.d), 0);
    EXPECT_EQ(d2.d.count, 0u);
    gs_sweep_free(s);
}

TEST(SweepLib, TheOutputDirectoryIsOneSweepsAlone)
{
    std::string dir = tmpdir("lock");
    gs_sweep_opts o = opts_for({kGen1.c_str()});
    std::string out = dir + "/out";
    o.out_dir = out.c_str();
    Diags d;
    gs_sweep *s = gs_sweep_create(&o, &d.d);
    ASSERT_NE(s, nullptr);
    gs_error err;
    gs_error_clear(&err);
    int fd = gs_sweep_lock_out(s, &err);
    ASSERT_GE(fd, 0) << err.message;
    /* POSIX locks are per process: another process must be refused */
    pid_t pid = fork();
    if (pid == 0) {
        gs_error e;
        gs_error_clear(&e);
        int r = gs_sweep_lock_out(s, &e);
        std::string want =
            "--out " + out + " is in use by another sweep (pid " + std::to_string(getppid()) + ")";
        _exit(r < 0 && std::string(e.message).rfind(want, 0) == 0 ? 0 : 1);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(fd);

    /* a file where the directory should be: an error, nothing locked */
    std::string file = dir + "/file";
    std::ofstream(file) << "x";
    o.out_dir = file.c_str();
    gs_sweep *s2 = gs_sweep_create(&o, &d.d);
    ASSERT_NE(s2, nullptr);
    gs_error_clear(&err);
    EXPECT_LT(gs_sweep_lock_out(s2, &err), 0);
    EXPECT_NE(err.code, GS_OK);
    gs_sweep_free(s2);
    gs_sweep_free(s);
}

// Two sweeps with different --out and one --trace-dir overwrote each other's traces: the trace
// directory is locked like --out (the second is refused naming the first's pid), also against a
// sweep whose --out it is; the lock goes with the sweep (gs_sweep_free). A trace directory that
// is the output directory itself is one lock.
TEST(SweepLib, TheTraceDirectoryIsOneSweepsAlone)
{
    std::string dir = tmpdir("trace-lock");
    std::string out1 = dir + "/out1", out2 = dir + "/out2", traces = dir + "/traces";
    gs_sweep_opts o = opts_for({kGen1.c_str()});
    o.out_dir = out1.c_str();
    o.trace_dir = traces.c_str();
    Diags d;
    gs_sweep *s = gs_sweep_create(&o, &d.d);
    ASSERT_NE(s, nullptr);
    gs_error err;
    gs_error_clear(&err);
    int fd = gs_sweep_lock_out(s, &err);
    ASSERT_GE(fd, 0) << err.message;
    // another process: the same --trace-dir with another --out, then --out on the trace dir
    auto other = [&](const std::string &out, const char *trace, const std::string &want) {
        pid_t pid = fork();
        if (pid == 0) {
            gs_sweep_opts o2 = opts_for({kGen1.c_str()});
            o2.out_dir = out.c_str();
            o2.trace_dir = trace;
            Diags d2;
            gs_sweep *s2 = gs_sweep_create(&o2, &d2.d);
            gs_error e;
            gs_error_clear(&e);
            int r = s2 ? gs_sweep_lock_out(s2, &e) : -1;
            int ok = want.empty() ? r >= 0 : r < 0 && std::string(e.message).rfind(want, 0) == 0;
            if (!ok) fprintf(stderr, "lock: %d, %s\n", r, e.message);
            _exit(ok ? 0 : 1);
        }
        int st = 0;
        EXPECT_EQ(waitpid(pid, &st, 0), pid);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0;
    };
    const std::string ppid = std::to_string(getpid());
    EXPECT_TRUE(other(out2, traces.c_str(),
                      "--trace-dir " + traces + " is in use by another sweep (pid " + ppid + ")"));
    EXPECT_TRUE(other(traces, nullptr,
                      "--out " + traces + " is in use by another sweep (pid " + ppid + ")"));
    // the first sweep's output directory is still its own after the refusals
    EXPECT_TRUE(other(out1, nullptr, "--out " + out1 + " is in use"));
    // the sweep is over: both are free
    gs_sweep_free(s);
    close(fd);
    EXPECT_TRUE(other(out2, traces.c_str(), ""));
    // --trace-dir the output directory itself: one lock, held
    o.trace_dir = out1.c_str();
    s = gs_sweep_create(&o, &d.d);
    ASSERT_NE(s, nullptr);
    gs_error_clear(&err);
    fd = gs_sweep_lock_out(s, &err);
    ASSERT_GE(fd, 0) << err.message;
    EXPECT_TRUE(other(out2, out1.c_str(), "--trace-dir " + out1 + " is in use"));
    gs_sweep_free(s);
    EXPECT_TRUE(other(out2, out1.c_str(), "--trace-dir " + out1 + " is in use"));
    close(fd);
}

TEST(SweepLib, WithoutOutTheDefaultDirectoryIsMadeAndLocked)
{
    std::string dir = tmpdir("default-out");
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
    ASSERT_EQ(chdir(dir.c_str()), 0);
    gs_sweep_opts o = opts_for({kGen1.c_str()});
    o.out_dir = nullptr;
    Diags d;
    gs_sweep *s = gs_sweep_create(&o, &d.d);
    gs_error err;
    gs_error_clear(&err);
    int fd = s ? gs_sweep_lock_out(s, &err) : -1;
    std::string made = s ? gs_sweep_options(s)->out_dir : "";
    int exists = access((std::string(GS_SWEEP_DEFAULT_OUT) + "/.gensweep.lock").c_str(), F_OK);
    ASSERT_EQ(chdir(cwd), 0);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(made, GS_SWEEP_DEFAULT_OUT);
    EXPECT_GE(fd, 0) << err.message;
    EXPECT_EQ(exists, 0);
    if (fd >= 0) close(fd);
    gs_sweep_free(s);
}

/* A fake job server for the fork server: the shape says what the job does. */
int fake_serve(const gs_job_request *rq)
{
    const gs_job_spec *sp = rq->spec;
    const std::string shape = std::to_string(sp->dims[0]) + "x" + std::to_string(sp->dims[1]);
    const char *record = rq->record, *kernel = sp->kernel->name,
               *variant = sp->kernel->variants[sp->variant], *dtype = gs_dtype_name(sp->dtype);
    if (shape == "1x1") {
        std::fprintf(stderr, "about to crash\n");
        std::abort();
    }
    if (shape == "2x2")
        for (;;)
            pause();
    if (shape == "3x3") {
        std::fprintf(stderr, "gave up\n");
        return 3;
    }
    std::ofstream(record) << "{\"id\": \"gen1/" << kernel << "/" << variant << "/" << dtype << "/"
                          << shape
                          << "\", \"status\": \"pass\", \"time_ns\": 42, \"wall_s\": 0.25}\n";
    return 0;
}

gs_job_spec spec_of(const gs_sweep *s, const char *kernel, int64_t d)
{
    gs_job_spec spec;
    std::memset(&spec, 0, sizeof spec);
    spec.cfg = gs_sweep_config(s, 0);
    spec.kernel = gs_suite_find(kernel);
    spec.dtype = GS_BF16;
    spec.n_dims = 2;
    spec.dims[0] = spec.dims[1] = d;
    spec.seed = 1;
    return spec;
}

const cJSON *job_by_id(const cJSON *doc, const std::string &id)
{
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        if (id == gs_json_str(j, "id")) return j;
    }
    return nullptr;
}

// One sweep of elementwise_add jobs of the given sizes, served by fake_serve (the size picks the
// fault): the results document, the progress calls in *pr.
cJSON *fake_sweep(const std::string &out, std::initializer_list<int64_t> sizes, double timeout_s,
                  Progress *pr)
{
    gs_worker_set_server(fake_serve);
    gs_sweep_opts o = opts_for({kGen1.c_str()});
    o.suite = GS_SWEEP_CUSTOM;
    o.out_dir = out.c_str();
    o.timeout_s = timeout_s;
    o.mem_limit = 0;
    o.progress = record_progress;
    o.progress_ctx = pr;
    Diags d;
    gs_sweep *s = gs_sweep_create(&o, &d.d);
    EXPECT_NE(s, nullptr);
    cJSON *doc = nullptr;
    if (s) {
        for (int64_t k : sizes) {
            gs_job_spec spec = spec_of(s, "elementwise_add", k);
            EXPECT_EQ(gs_sweep_add(s, 0, &spec, 0), 0);
        }
        int interrupted = -1;
        gs_error err;
        gs_error_clear(&err);
        doc = gs_sweep_execute(s, &interrupted, &err);
        EXPECT_NE(doc, nullptr) << err.message;
        EXPECT_EQ(interrupted, 0);
        gs_sweep_free(s);
    }
    gs_worker_set_server(nullptr);
    return doc;
}

TEST(SweepLib, CrashHangAndMissingRecordStayTheJobsOwn)
{
    /* The jobs that end by themselves get a timeout that no loaded machine reaches; the hang,
     * which always costs its whole timeout, runs in a sweep of its own with a short one, where
     * it races nothing. */
    std::string out = tmpdir("faults");
    Progress pr;
    cJSON *doc = fake_sweep(out, {1, 3, 4}, 600, &pr);
    ASSERT_NE(doc, nullptr);
    const std::string base = "gen1/elementwise_add/default/bf16/";
    const cJSON *crash = job_by_id(doc, base + "1x1"), *gone = job_by_id(doc, base + "3x3"),
                *ok = job_by_id(doc, base + "4x4");
    ASSERT_TRUE(crash && gone && ok);
    EXPECT_STREQ(gs_json_str(crash, "status"), "crash");
    EXPECT_NE(std::string(gs_json_str(crash, "reason")).find("signal 6 (SIGABRT)"),
              std::string::npos)
        << gs_json_str(crash, "reason");
    EXPECT_NE(std::string(gs_json_str(crash, "stderr_tail")).find("about to crash"),
              std::string::npos);
    EXPECT_STREQ(gs_json_str(gone, "status"), "error");
    EXPECT_STREQ(gs_json_str(gone, "reason"),
                 "job process exited with status 3 without writing its record");
    EXPECT_STREQ(gs_json_str(gone, "stderr_tail"), "gave up");
    EXPECT_STREQ(gs_json_str(ok, "status"), "pass");
    EXPECT_EQ(cJSON_GetObjectItemCaseSensitive(ok, "wall_s"), nullptr)
        << "wall time moves to wall.jobs";
    const cJSON *walls =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "wall"), "jobs");
    EXPECT_DOUBLE_EQ(gs_json_num(walls, (base + "4x4").c_str()), 0.25);
    EXPECT_STREQ(gs_json_str(doc, "suite"), "custom");

    /* one JOB_DONE per job, counting up, failures counted, then END */
    ASSERT_EQ(pr.calls.back().event, GS_SWEEP_END);
    int done_calls = 0;
    for (size_t i = 0; i < pr.calls.size(); i++) {
        if (pr.calls[i].event != GS_SWEEP_JOB_DONE) continue;
        done_calls++;
        EXPECT_EQ(pr.calls[i].done, (size_t)done_calls);
        EXPECT_EQ(pr.calls[i].total, 3u);
        EXPECT_EQ(pr.calls[i].failed, pr.ids[i] != base + "4x4") << pr.ids[i];
    }
    EXPECT_EQ(done_calls, 3);
    EXPECT_EQ(pr.calls.back().failures, 2);
    cJSON_Delete(doc);

    std::string hout = tmpdir("faults-hang");
    Progress hpr;
    doc = fake_sweep(hout, {2}, 1, &hpr);
    ASSERT_NE(doc, nullptr);
    const cJSON *hang = job_by_id(doc, base + "2x2");
    ASSERT_NE(hang, nullptr);
    EXPECT_STREQ(gs_json_str(hang, "status"), "timeout");
    EXPECT_EQ(hpr.calls.back().failures, 1);
    cJSON_Delete(doc);
    /* the job directories are gone */
    for (const std::string &dir : {out, hout})
        EXPECT_NE(std::system(("ls -d '" + dir + "'/.jobs-* 2>/dev/null | grep -q .").c_str()), 0);
}

TEST(SweepLib, RealJobsThroughTheWorkerGiveTheResultsDocument)
{
    gs_worker_set_server(gs_run_serve);
    std::string out = tmpdir("real");
    const char *sets[] = {"chip.hbm.bandwidth=x2"};
    gs_sweep_opts o = opts_for({kGen1.c_str()});
    o.kernels = "elementwise_add";
    o.out_dir = out.c_str();
    o.sets = sets;
    o.n_sets = 1;
    Progress pr;
    o.progress = record_progress;
    o.progress_ctx = &pr;
    Diags d;
    gs_sweep *s = gs_sweep_create(&o, &d.d);
    ASSERT_NE(s, nullptr) << (d.d.count ? messages(d.d)[0] : "");
    ASSERT_EQ(gs_sweep_plan(s, &d.d), 0);
    const size_t n = gs_sweep_job_count(s);
    ASSERT_GT(n, 2u);
    int interrupted = -1;
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_sweep_execute(s, &interrupted, &err);
    gs_worker_set_server(nullptr);
    ASSERT_NE(doc, nullptr) << err.message;
    EXPECT_EQ(interrupted, 0);
    EXPECT_STREQ(gs_json_str(doc, "suite"), "check");
    EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "complete")));
    EXPECT_EQ(gs_json_num(doc, "planned_jobs"), (double)n);
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(doc, "overrides");
    ASSERT_EQ(cJSON_GetArraySize(ov), 1);
    EXPECT_STREQ(cJSON_GetArrayItem(ov, 0)->valuestring, sets[0]);
    EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "configs")), 1);
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    ASSERT_EQ((size_t)cJSON_GetArraySize(jobs), n);
    for (size_t i = 0; i < n; i++) {
        const cJSON *j = job_by_id(doc, gs_sweep_job_id(s, i));
        ASSERT_NE(j, nullptr) << gs_sweep_job_id(s, i);
        EXPECT_STREQ(gs_json_str(j, "status"), "pass") << gs_json_str(j, "reason");
        EXPECT_GT(gs_json_num(j, "time_ns"), 0);
        EXPECT_FALSE(gs_sweep_record_failed(j));
    }
    size_t done = 0;
    for (const auto &c : pr.calls)
        done += c.event == GS_SWEEP_JOB_DONE;
    EXPECT_EQ(done, n);
    EXPECT_EQ(pr.calls.back().event, GS_SWEEP_END);
    EXPECT_EQ(pr.calls.back().failures, 0);
    cJSON_Delete(doc);
    gs_sweep_free(s);
}

} // namespace
