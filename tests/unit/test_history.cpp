// `gensweep history`: recording sweeps per commit (idempotent), show/export with change points,
// the gate against the last good run, schema migrations, concurrent writers, and damaged or
// foreign databases refused without touching them.
#include <gtest/gtest.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "history.h"

namespace
{

int run(const std::string &args, std::string *out)
{
    std::string cmd = std::string(GS_GENSWEEP_BIN) + " " + args + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    out->clear();
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out->append(buf, n);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void spit(const std::string &path, const std::string &text)
{
    std::ofstream f(path, std::ios::binary);
    f << text;
}

bool exists(const std::string &path)
{
    struct stat sb;
    return stat(path.c_str(), &sb) == 0;
}

std::string tmpdir()
{
    char dir[] = "/tmp/gs-test-history-XXXXXX";
    if (!mkdtemp(dir)) return "/tmp";
    return dir;
}

long long sql_int(const std::string &db, const std::string &sql)
{
    sqlite3 *h = nullptr;
    long long v = -1;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt *st = nullptr;
        if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return v;
}

// A key that changes whenever the file does (device, inode, size, modification time).
std::string file_key(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return "none";
    return std::to_string(sb.st_dev) + "-" + std::to_string(sb.st_ino) + "-" +
           std::to_string(sb.st_size) + "-" + std::to_string(sb.st_mtim.tv_sec) + "." +
           std::to_string(sb.st_mtim.tv_nsec);
}

// One real check sweep (two kernels, one generation) shared by the tests. CTest runs each test
// in its own process: the sweep runs once per gensweep binary and gen1.yaml (both in the key),
// written to a directory of its own and renamed into the build tree, so a concurrent test
// process sees the whole results.json or none; each test copies it into its own directory.
class History : public ::testing::Test
{
  protected:
    static std::string dir_, results_;

    static void SetUpTestSuite()
    {
        dir_ = tmpdir();
        const std::string cache =
            std::string(GS_BINARY_DIR) + "/test_history-sweep-" + file_key(GS_GENSWEEP_BIN) + "-" +
            file_key((std::string(GS_SOURCE_DIR) + "/configs/gen1.yaml").c_str());
        std::string out;
        if (!exists(cache + "/results.json")) {
            const std::string fresh = dir_ + "/fresh";
            int rc =
                run(std::string("sweep --quiet -j 2 --no-report --kernels elementwise_add,softmax "
                                "--configs ") +
                        GS_SOURCE_DIR + "/configs/gen1.yaml --out " + fresh,
                    &out);
            ASSERT_EQ(rc, 0) << out;
            // another test process may have renamed its own first: either is the same sweep
            if (rename(fresh.c_str(), cache.c_str()) != 0)
                ASSERT_TRUE(exists(cache + "/results.json")) << cache;
        }
        ASSERT_EQ(mkdir((dir_ + "/sweep").c_str(), 0755), 0);
        results_ = dir_ + "/sweep/results.json";
        spit(results_, slurp(cache + "/results.json"));
    }

    // Each test process made dir_ (the shared sweep's copy and the variants): it leaves no trace.
    static void TearDownTestSuite()
    {
        if (dir_.rfind("/tmp/gs-test-history-", 0) == 0)
            std::system(("rm -rf '" + dir_ + "'").c_str());
    }

    // results_ with the first job's time scaled by f (and its status set when given).
    static std::string variant(const std::string &name, double f, const char *status = nullptr)
    {
        cJSON *doc = cJSON_Parse(slurp(results_).c_str());
        cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "jobs"), 0);
        cJSON *t = cJSON_GetObjectItem(j, "time_ns");
        cJSON_SetNumberValue(t, t->valuedouble * f);
        if (status) cJSON_ReplaceItemInObject(j, "status", cJSON_CreateString(status));
        char *s = cJSON_Print(doc);
        std::string path = dir_ + "/" + name + ".json";
        spit(path, s);
        cJSON_free(s);
        cJSON_Delete(doc);
        return path;
    }

    static std::string first_job_id()
    {
        cJSON *doc = cJSON_Parse(slurp(results_).c_str());
        std::string id = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "jobs"), 0), "id"));
        cJSON_Delete(doc);
        return id;
    }

    std::string db(const std::string &name)
    {
        std::string p = dir_ + "/" + name + ".db";
        unlink(p.c_str());
        unlink((p + "-wal").c_str());
        unlink((p + "-shm").c_str());
        return p;
    }
};
std::string History::dir_, History::results_;

TEST_F(History, AddIsIdempotentPerCommit)
{
    std::string d = db("idem"), out;
    ASSERT_EQ(run("history add " + results_ + " --db " + d + " --commit aaa", &out), 0) << out;
    EXPECT_NE(out.find("recorded"), std::string::npos) << out;
    long long jobs = sql_int(d, "SELECT count(*) FROM jobs");
    EXPECT_GT(jobs, 10);
    ASSERT_EQ(run("history add " + variant("slow", 2.0) + " --db " + d + " --commit aaa", &out), 0)
        << out;
    EXPECT_NE(out.find("unchanged"), std::string::npos) << out;
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM runs"), 1);
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM jobs"), jobs);
    // the first job's time is still the original one
    std::string q = "SELECT time_ns FROM jobs WHERE job_id = '" + first_job_id() + "'";
    long long t0 = sql_int(d, q);
    ASSERT_EQ(
        run("history add " + variant("slow", 2.0) + " --db " + d + " --commit aaa --replace", &out),
        0)
        << out;
    EXPECT_NE(out.find("replaced"), std::string::npos) << out;
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM runs"), 1);
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM jobs"), jobs);
    EXPECT_NEAR((double)sql_int(d, q), 2.0 * (double)t0, 2.0);
    EXPECT_EQ(sql_int(d, "PRAGMA user_version"), GS_HISTORY_SCHEMA_VERSION);
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM configs"), 1);
}

TEST_F(History, BadArgumentsAreUsageErrors)
{
    std::string d = db("bad"), out;
    EXPECT_EQ(run("history add " + results_, &out), 2) << out; // no --db
    EXPECT_NE(out.find("--db"), std::string::npos) << out;
    EXPECT_EQ(run("history add " + results_ + " --db " + d + " --date yesterday", &out), 2);
    EXPECT_NE(out.find("yesterday"), std::string::npos) << out;
    EXPECT_EQ(run("history add " + results_ + " --db " + d + " --commit 'a b'", &out), 2);
    EXPECT_EQ(run("history add /nonexistent/results.json --db " + d, &out), 2);
    EXPECT_EQ(run("history show --db " + d + " --last 0", &out), 2);
    EXPECT_EQ(run("history frobnicate --db " + d, &out), 2);
    // show on a missing database: an error, and no file created
    EXPECT_EQ(run("history show --db " + d, &out), 2);
    EXPECT_FALSE(exists(d));
    // export refusing to replace a symlink is a usage error, as everywhere
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c1 --date 2026-01-01", &out), 0)
        << out;
    const std::string link = dir_ + "/export-link.json";
    unlink(link.c_str());
    ASSERT_EQ(symlink("/nonexistent/target.json", link.c_str()), 0);
    EXPECT_EQ(run("history export --db " + d + " -o " + link, &out), 2) << out;
    EXPECT_NE(out.find("is a symbolic link"), std::string::npos) << out;
    unlink(link.c_str());
}

// Dates that do not exist, and dates in the future (a run dated 2999 would stay the newest and
// so the gate's base for ever), are refused; nothing is recorded.
TEST_F(History, InvalidAndFutureDatesAreRefused)
{
    std::string d = db("dates"), out;
    for (const char *date : {"2026-02-31", "2025-02-29", "2026-04-31", "2026-13-01"}) {
        EXPECT_EQ(
            run("history add " + results_ + " --db " + d + " --commit c1 --date " + date, &out), 2)
            << date << "\n"
            << out;
        EXPECT_NE(out.find("is not a valid"), std::string::npos) << out;
    }
    EXPECT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c1 --date 2999-01-01", &out), 2)
        << out;
    EXPECT_NE(out.find("in the future"), std::string::npos) << out;
    EXPECT_FALSE(exists(d)) << "nothing recorded, no database created";
    // a leap day is a date
    EXPECT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c1 --date 2024-02-29", &out), 0)
        << out;
}

// A database whose schema does not match (a column dropped) is bad input, exit 2 like any
// damaged or foreign file, not a failed write; a negative user_version is named as such.
TEST_F(History, ForeignSchemasAreUsageErrors)
{
    std::string d = db("nocolumn"), out;
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c1 --date 2026-01-01", &out), 0)
        << out;
    sqlite3 *h = nullptr;
    ASSERT_EQ(sqlite3_open(d.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "ALTER TABLE jobs DROP COLUMN max_abs", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(h);
    EXPECT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c2 --date 2026-01-02", &out), 2)
        << out;
    EXPECT_NE(out.find("no column named max_abs"), std::string::npos) << out;
    std::string v = db("negative"), out2;
    ASSERT_EQ(
        run("history add " + results_ + " --db " + v + " --commit c1 --date 2026-01-01", &out2), 0)
        << out2;
    ASSERT_EQ(sqlite3_open(v.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "PRAGMA user_version = -1", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
    EXPECT_EQ(run("history show --db " + v, &out2), 2) << out2;
    EXPECT_NE(out2.find("user_version -1"), std::string::npos) << out2;
    EXPECT_EQ(out2.find("not an error"), std::string::npos) << out2;
}

// A reader (show, export, gate) leaves the file as it is: a rollback-journal database stays
// one. And a healthy database it cannot write (no write permission, or a read-only mount) is
// read, not called damaged. Run as another user (setpriv) and in a private read-only bind
// mount (unshare) when the machine allows it (root, as CI runs).
TEST_F(History, ReadersNeitherWriteNorNeedToWrite)
{
    const std::string dir = tmpdir();
    const std::string d = dir + "/ro.db";
    std::string out;
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c1 --date 2026-01-01", &out), 0)
        << out;
    sqlite3 *h = nullptr;
    ASSERT_EQ(sqlite3_open(d.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
    ASSERT_EQ(run("history show --db " + d, &out), 0) << out;
    {
        sqlite3 *r = nullptr;
        ASSERT_EQ(sqlite3_open_v2(d.c_str(), &r, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
        sqlite3_stmt *st = nullptr;
        ASSERT_EQ(sqlite3_prepare_v2(r, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
        ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
        EXPECT_STREQ((const char *)sqlite3_column_text(st, 0), "delete");
        sqlite3_finalize(st);
        sqlite3_close(r);
    }
    // back to WAL, as add leaves it, for the read-only readers
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c2 --date 2026-01-02", &out), 0)
        << out;
    if (geteuid() != 0 || std::system("command -v setpriv >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "needs root and setpriv to read as a user without write permission";
    // the user may enter the directories and read the files, and write none of them
    chmod(dir.c_str(), 0755);
    chmod(dir_.c_str(), 0755);
    chmod((dir_ + "/sweep").c_str(), 0755);
    chmod(d.c_str(), 0644);
    chmod(results_.c_str(), 0644);
    const std::string bin = GS_GENSWEEP_BIN;
    std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    for (const std::string &sub : {"show --db " + d, "export --db " + d,
                                   "gate --db " + d + " " + results_ + " --commit c3"}) {
        std::string cmd = as_nobody + bin + " history " + sub + " 2>&1";
        FILE *p = popen(cmd.c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string text;
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0)
            text.append(buf, n);
        int st = pclose(p);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << sub << "\n" << text;
        EXPECT_EQ(text.find("damaged"), std::string::npos) << text;
    }
    // a read-only mount of the directory, in a mount namespace of its own
    const std::string ro = "unshare -m sh -c 'mount --bind " + dir + " " + dir +
                           " && mount -o remount,bind,ro " + dir + " && ";
    if (std::system((ro + "true' >/dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << "cannot make a read-only bind mount here";
    for (const std::string &sub : {"show --db " + d, "export --db " + d,
                                   "gate --db " + d + " " + results_ + " --commit c3"}) {
        std::string cmd = ro + bin + " history " + sub + "' 2>&1";
        FILE *p = popen(cmd.c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string text;
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0)
            text.append(buf, n);
        int st = pclose(p);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << sub << "\n" << text;
        EXPECT_EQ(text.find("damaged"), std::string::npos) << text;
    }
    std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_F(History, ExportFlagsChangePointsWithTheirCommit)
{
    std::string d = db("export"), out;
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit c1 --date 2026-01-01", &out), 0)
        << out;
    ASSERT_EQ(run("history add " + variant("up10", 1.10) + " --db " + d +
                      " --commit c2 --date 2026-01-02",
                  &out),
              0)
        << out;
    ASSERT_EQ(run("history add " + variant("up11", 1.11) + " --db " + d +
                      " --commit c3 --date 2026-01-03",
                  &out),
              0)
        << out;
    std::string json = dir_ + "/history.json";
    ASSERT_EQ(run("history export --db " + d + " --last 3 --threshold 2% -o " + json, &out), 0)
        << out;
    cJSON *doc = cJSON_Parse(slurp(json).c_str());
    ASSERT_NE(doc, nullptr);
    EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "schema")), "gensweep-history");
    const cJSON *runs = cJSON_GetObjectItem(doc, "runs");
    ASSERT_EQ(cJSON_GetArraySize(runs), 3);
    EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 0), "commit")),
                 "c1");
    EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 2), "commit")),
                 "c3");
    int with_changes = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(doc, "jobs"))
    {
        EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(j, "time_ns")), 3);
        const cJSON *ch = cJSON_GetObjectItem(j, "changes");
        if (!cJSON_GetArraySize(ch)) continue;
        with_changes++;
        EXPECT_EQ(first_job_id(), cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")));
        // +10% at c2 is a change point; +0.9% at c3 is under the threshold
        ASSERT_EQ(cJSON_GetArraySize(ch), 1);
        const cJSON *c = cJSON_GetArrayItem(ch, 0);
        EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(c, "commit")), "c2");
        EXPECT_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(c, "ratio")), 1.10, 1e-9);
        EXPECT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(c, "direction")), "slower");
    }
    EXPECT_EQ(with_changes, 1);
    cJSON_Delete(doc);
    // the last two runs only: no change point left
    ASSERT_EQ(run("history export --db " + d + " --last 2", &out), 0) << out;
    doc = cJSON_Parse(out.c_str());
    ASSERT_NE(doc, nullptr) << out;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(doc, "jobs"))
        EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(j, "changes")), 0);
    cJSON_Delete(doc);
    // show: filters by kernel, flags the change with its commit
    ASSERT_EQ(run("history show --db " + d + " --kernel softmax", &out), 0) << out;
    EXPECT_EQ(out.find("elementwise_add/"), std::string::npos) << out;
    EXPECT_NE(out.find("gen1/softmax/"), std::string::npos) << out;
    ASSERT_EQ(run("history show --db " + d + " --gen gen1", &out), 0) << out;
    EXPECT_NE(out.find("+10.0% at c2"), std::string::npos) << out;
}

TEST_F(History, GateComparesWithTheLastGoodRun)
{
    std::string d = db("gate"), out;
    ASSERT_EQ(run("history gate --db " + d + " " + results_, &out), 2) << out; // no database
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit good1 --date 2026-01-01", &out),
        0)
        << out;
    // a later run with a failing job is not good: the gate must skip it
    ASSERT_EQ(run("history add " + variant("failed", 0.5, "fail") + " --db " + d +
                      " --commit bad2 --date 2026-01-02",
                  &out),
              0)
        << out;
    EXPECT_EQ(sql_int(d, "SELECT good FROM runs WHERE commit_id = 'bad2'"), 0);
    EXPECT_EQ(sql_int(d, "SELECT good FROM runs WHERE commit_id = 'good1'"), 1);
    // a clean run that failed a gate, recorded --bad: skipped too
    ASSERT_EQ(run("history add " + variant("gatefail", 3.0) + " --db " + d +
                      " --commit bad3 --date 2026-01-03 --bad",
                  &out),
              0)
        << out;
    EXPECT_EQ(sql_int(d, "SELECT good FROM runs WHERE commit_id = 'bad3'"), 0);
    EXPECT_EQ(run("history gate --db " + d + " " + results_ + " --commit new3", &out), 0) << out;
    EXPECT_NE(out.find("good1"), std::string::npos) << out;
    EXPECT_EQ(run("history gate --db " + d + " " + variant("slow5", 1.05) + " --commit new3", &out),
              1)
        << out;
    EXPECT_NE(out.find("REGRESSION"), std::string::npos) << out;
    EXPECT_NE(out.find(first_job_id()), std::string::npos) << out;
    EXPECT_EQ(run("history gate --db " + d + " " + variant("slow5", 1.05) +
                      " --commit new3 --threshold 10%",
                  &out),
              0)
        << out;
    // the run of the same commit is not its own baseline
    EXPECT_EQ(run("history gate --db " + d + " " + results_ + " --commit good1", &out), 0) << out;
    EXPECT_NE(out.find("nothing to compare"), std::string::npos) << out;
}

// An interrupted sweep, or one whose planned jobs are absent, fails the gate: with a good run
// to compare with and without one.
TEST_F(History, GateFailsResultsThatDidNotAllRun)
{
    std::string d = db("gate-incomplete"), out;
    cJSON *doc = cJSON_Parse(slurp(results_).c_str());
    cJSON_ReplaceItemInObject(doc, "complete", cJSON_CreateFalse());
    cJSON_ReplaceItemInObject(doc, "interrupted", cJSON_CreateTrue());
    cJSON_ReplaceItemInObject(doc, "jobs", cJSON_CreateArray());
    char *s = cJSON_Print(doc);
    std::string intr = dir_ + "/interrupted.json";
    spit(intr, s);
    cJSON_free(s);
    // the same sweep with its last job lost
    cJSON_Delete(doc);
    doc = cJSON_Parse(slurp(results_).c_str());
    cJSON *jobs = cJSON_GetObjectItem(doc, "jobs");
    cJSON_DeleteItemFromArray(jobs, cJSON_GetArraySize(jobs) - 1);
    s = cJSON_Print(doc);
    std::string lost = dir_ + "/lost.json";
    spit(lost, s);
    cJSON_free(s);
    cJSON_Delete(doc);
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit good1 --date 2026-01-01", &out),
        0)
        << out;
    // nothing to compare with (the same commit), still a failure
    EXPECT_EQ(run("history gate --db " + d + " " + intr + " --commit good1", &out), 1) << out;
    EXPECT_NE(out.find("nothing to compare"), std::string::npos) << out;
    EXPECT_NE(out.find("the sweep was interrupted"), std::string::npos) << out;
    EXPECT_EQ(run("history gate --db " + d + " " + intr + " --commit new2", &out), 1) << out;
    EXPECT_NE(out.find("INCOMPLETE"), std::string::npos) << out;
    EXPECT_EQ(run("history gate --db " + d + " " + lost + " --commit new2", &out), 1) << out;
    EXPECT_NE(out.find("planned jobs present"), std::string::npos) << out;
    EXPECT_EQ(run("history gate --db " + d + " " + results_ + " --commit new2", &out), 0) << out;
}

// The gate fails on what it cannot compare, naming it: a new job without a time or without a
// check record, and a generation the last good run has no job of. All three passed before.
TEST_F(History, GateFailsWhatItCannotCompare)
{
    std::string d = db("gate-uncomparable"), out;
    // results_ with the first job edited
    auto edited = [&](const std::string &name, const char *key, cJSON *value) {
        cJSON *doc = cJSON_Parse(slurp(results_).c_str());
        cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "jobs"), 0);
        cJSON_ReplaceItemInObject(j, key, value);
        char *s = cJSON_Print(doc);
        std::string path = dir_ + "/" + name + ".json";
        spit(path, s);
        cJSON_free(s);
        cJSON_Delete(doc);
        return path;
    };
    ASSERT_EQ(
        run("history add " + results_ + " --db " + d + " --commit good1 --date 2026-01-01", &out),
        0)
        << out;
    const std::string id = first_job_id();
    EXPECT_EQ(run("history gate --db " + d + " " +
                      edited("time-null", "time_ns", cJSON_CreateNull()) + " --commit new2",
                  &out),
              1)
        << out;
    EXPECT_NE(out.find("REGRESSION  " + id + ": cannot compare: no time in the new results"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("1 cannot be compared"), std::string::npos) << out;
    EXPECT_EQ(run("history gate --db " + d + " " +
                      edited("error-null", "error", cJSON_CreateNull()) + " --commit new2",
                  &out),
              1)
        << out;
    EXPECT_NE(out.find("REGRESSION  " + id +
                       ": cannot compare: no check record in the new "
                       "results"),
              std::string::npos)
        << out;
    // the last good run is of another generation: nothing of gen1 can be compared
    std::string other = slurp(results_);
    for (const char *from : {"gen1/", "\"gen1\""})
        for (size_t at = other.find(from); at != std::string::npos; at = other.find(from, at))
            other.replace(at + (from[0] == '"' ? 4 : 3), 1, "0");
    spit(dir_ + "/gen0.json", other);
    std::string d0 = db("gate-other-gen");
    ASSERT_EQ(
        run("history add " + dir_ + "/gen0.json --db " + d0 + " --commit good0 --date 2026-01-01",
            &out),
        0)
        << out;
    EXPECT_EQ(run("history gate --db " + d0 + " " + results_ + " --commit new2", &out), 1) << out;
    EXPECT_NE(out.find("NO BASELINE generation gen1"), std::string::npos) << out;
    EXPECT_EQ(out.find("INCOMPLETE"), std::string::npos) << out;
    EXPECT_EQ(run("history gate --db " + d + " " + results_ + " --commit new2", &out), 0) << out;
}

// Job ids come from results files: ESC, BEL and OSC sequences in one never reach the terminal
// raw from `history show` (nor from the gate's lines).
TEST_F(History, ShowEscapesJobIds)
{
    std::string d = db("escapes"), out;
    cJSON *doc = cJSON_Parse(slurp(results_).c_str());
    cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "jobs"), 0);
    const std::string id =
        std::string(cJSON_GetStringValue(cJSON_GetObjectItem(j, "id"))) + "\x1b]0;pwned\x07\x1b[2J";
    cJSON_ReplaceItemInObject(j, "id", cJSON_CreateString(id.c_str()));
    char *s = cJSON_Print(doc);
    const std::string path = dir_ + "/escapes.json";
    spit(path, s);
    cJSON_free(s);
    cJSON_Delete(doc);
    ASSERT_EQ(run("history add " + path + " --db " + d + " --commit esc1 --date 2026-01-01", &out),
              0)
        << out;
    ASSERT_EQ(run("history show --db " + d, &out), 0) << out;
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
    EXPECT_NE(out.find("\\x1b]0;pwned\\x07\\x1b[2J"), std::string::npos) << out;
    ASSERT_EQ(run("history gate --db " + d + " " + results_ + " --commit esc2", &out), 1) << out;
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
}

TEST_F(History, MigratesAVersion1Database)
{
    std::string d = db("v1");
    gs_error err;
    gs_error_clear(&err);
    gs_history *h = nullptr;
    ASSERT_EQ(gs_history_open(d.c_str(), 1, 1, &h, &err), GS_OK) << err.message;
    EXPECT_EQ(gs_history_version(h), 1);
    gs_history_close(h);
    EXPECT_EQ(sql_int(d, "PRAGMA user_version"), 1);
    // fill it as version 1 wrote it: one clean run and one with a crashed job
    sqlite3 *db1 = nullptr;
    ASSERT_EQ(sqlite3_open(d.c_str(), &db1), SQLITE_OK);
    const char *fill =
        "INSERT INTO runs VALUES(1,'old1','2025-01-01T00:00:00Z','check','0.1.0',1,2,'[]',"
        "'2025-01-01T00:00:00Z');"
        "INSERT INTO runs VALUES(2,'old2','2025-01-02T00:00:00Z','check','0.1.0',1,2,'[]',"
        "'2025-01-02T00:00:00Z');"
        "INSERT INTO jobs VALUES(1,'gen1/k/v/bf16/8','gen1','k','pass',100.0,0.0);"
        "INSERT INTO jobs VALUES(1,'gen1/k/v/bf16/16','gen1','k','pass',200.0,0.0);"
        "INSERT INTO jobs VALUES(2,'gen1/k/v/bf16/8','gen1','k','pass',150.0,0.0);"
        "INSERT INTO jobs VALUES(2,'gen1/k/v/bf16/16','gen1','k','crash',NULL,NULL);";
    ASSERT_EQ(sqlite3_exec(db1, fill, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db1);

    std::string out;
    ASSERT_EQ(run("history show --db " + d, &out), 0) << out;
    EXPECT_EQ(sql_int(d, "PRAGMA user_version"), GS_HISTORY_SCHEMA_VERSION);
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM jobs"), 4);
    EXPECT_EQ(sql_int(d, "SELECT good FROM runs WHERE commit_id = 'old1'"), 1);
    EXPECT_EQ(sql_int(d, "SELECT good FROM runs WHERE commit_id = 'old2'"), 0);
    EXPECT_NE(out.find("+50.0% at old2"), std::string::npos) << out;
    // a new run goes in next to the migrated ones
    ASSERT_EQ(run("history add " + results_ + " --db " + d + " --commit new", &out), 0) << out;
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM runs"), 3);
}

TEST_F(History, RefusesANewerSchema)
{
    std::string d = db("newer"), out;
    ASSERT_EQ(run("history add " + results_ + " --db " + d + " --commit x", &out), 0) << out;
    sqlite3 *h = nullptr;
    ASSERT_EQ(sqlite3_open(d.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
    EXPECT_EQ(run("history add " + results_ + " --db " + d + " --commit y", &out), 2) << out;
    EXPECT_NE(out.find("newer"), std::string::npos) << out;
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM runs"), 1);
}

// Damaged or foreign files: exit 2 with a message naming the file, and the file byte-identical
// afterwards (no WAL switch, no migration, no new tables).
TEST_F(History, DamagedOrForeignDatabasesAreLeftUntouched)
{
    std::string out;
    // 1. not SQLite at all
    std::string junk = db("junk");
    std::string bytes(8192, '\0');
    for (size_t i = 0; i < bytes.size(); i++)
        bytes[i] = (char)(i * 7919 % 251);
    spit(junk, bytes);
    EXPECT_EQ(run("history add " + results_ + " --db " + junk + " --commit a", &out), 2) << out;
    EXPECT_NE(out.find(junk), std::string::npos) << out;
    EXPECT_NE(out.find("not a gensweep history"), std::string::npos) << out;
    EXPECT_EQ(slurp(junk), bytes);
    EXPECT_FALSE(exists(junk + "-wal"));

    // 2. a real history with a page overwritten in the middle
    std::string dmg = db("damaged");
    ASSERT_EQ(run("history add " + results_ + " --db " + dmg + " --commit a", &out), 0) << out;
    ASSERT_EQ(run("history add " + variant("v2", 1.5) + " --db " + dmg + " --commit b", &out), 0)
        << out;
    ASSERT_FALSE(exists(dmg + "-wal")); // the last connection checkpointed and removed it
    std::string good = slurp(dmg);
    ASSERT_GT(good.size(), 3 * 4096u);
    std::string bad = good;
    for (size_t i = 2 * 4096; i < 3 * 4096; i++)
        bad[i] = (char)0xA5;
    spit(dmg, bad);
    for (const char *cmd : {"add", "show", "gate"}) {
        std::string args = std::string("history ") + cmd + " --db " + dmg;
        if (std::string(cmd) != "show") args += " " + results_ + " --commit c";
        EXPECT_EQ(run(args, &out), 2) << cmd << ": " << out;
        EXPECT_NE(out.find("damaged"), std::string::npos) << cmd << ": " << out;
        EXPECT_EQ(slurp(dmg), bad) << cmd;
    }

    // 3. somebody else's SQLite database
    std::string foreign = db("foreign");
    sqlite3 *h = nullptr;
    ASSERT_EQ(sqlite3_open(foreign.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(
        sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(h);
    std::string before = slurp(foreign);
    EXPECT_EQ(run("history add " + results_ + " --db " + foreign + " --commit a", &out), 2) << out;
    EXPECT_NE(out.find("not a gensweep history"), std::string::npos) << out;
    EXPECT_EQ(slurp(foreign), before);
}

// Two CI jobs adding at once, starting from no database: every run lands whole, nothing is
// lost, and the database stays intact.
TEST_F(History, ConcurrentWritersLoseNothing)
{
    std::string d = db("concurrent"), out;
    const int rounds = 8;
    std::string script = "set -e; for i in $(seq 1 " + std::to_string(rounds) + "); do " +
                         GS_GENSWEEP_BIN + " history add " + results_ + " --db " + d +
                         " --commit a$i >/dev/null & p1=$!; " + GS_GENSWEEP_BIN + " history add " +
                         results_ + " --db " + d +
                         " --commit b$i >/dev/null & p2=$!; wait $p1; wait $p2; done";
    std::string path = dir_ + "/concurrent.sh";
    spit(path, script);
    int st = system(("bash " + path).c_str());
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    long long per_run = sql_int(d, "SELECT count(*) FROM jobs WHERE run_id = 1");
    EXPECT_GT(per_run, 10);
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM runs"), 2 * rounds);
    EXPECT_EQ(sql_int(d, "SELECT count(*) FROM jobs"), 2 * rounds * per_run);
    EXPECT_EQ(sql_int(d, "SELECT count(DISTINCT run_id) FROM jobs"), 2 * rounds);
    ASSERT_EQ(run("history show --db " + d + " --last 100", &out), 0) << out;
    sqlite3 *h = nullptr;
    ASSERT_EQ(sqlite3_open(d.c_str(), &h), SQLITE_OK);
    sqlite3_stmt *q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &q, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    EXPECT_STREQ((const char *)sqlite3_column_text(q, 0), "ok");
    sqlite3_finalize(q);
    sqlite3_close(h);
}

} // namespace

// `history add` that creates a database on a full disk (here RLIMIT_FSIZE: EFBIG, the way
// ENOSPC fails a write) is a write that failed: exit 1, and no 0-byte database is left to be
// read later as "damaged". A database that exists stays as it was. A path that cannot be opened
// at all is bad input (exit 2).
TEST_F(History, AddOnAFullDiskExits1AndLeavesNoEmptyDatabase)
{
    const std::string d = db("fulldisk"), log = d + ".log";
    const std::string add = std::string(GS_GENSWEEP_BIN) + " history add " + results_ + " --db " +
                            d + " --commit c1 --date 2026-01-01";
    // the limit on gensweep alone: its output goes through a pipe to a writer without it
    const std::string cmd =
        "{ (trap '' XFSZ; ulimit -f 2; " + add + "); echo \"rc=$?\"; } 2>&1 | cat >'" + log + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const std::string said = slurp(log);
    EXPECT_NE(said.find("rc=1"), std::string::npos) << said;
    EXPECT_NE(said.find("I/O error"), std::string::npos) << said;
    EXPECT_FALSE(exists(d)) << said;
    EXPECT_FALSE(exists(d + "-wal"));
    EXPECT_FALSE(exists(d + "-journal"));
    // with room, the same command records the run
    std::string out;
    ASSERT_EQ(run(add.substr(std::string(GS_GENSWEEP_BIN).size() + 1), &out), 0) << out;
    const std::string kept = slurp(d);
    ASSERT_FALSE(kept.empty());
    // a second run on a full disk fails (exit 1) and leaves the database it did not create
    const std::string add2 = std::string(GS_GENSWEEP_BIN) + " history add " + results_ + " --db " +
                             d + " --commit c2 --date 2026-01-02";
    const std::string cmd2 =
        "{ (trap '' XFSZ; ulimit -f 2; " + add2 + "); echo \"rc=$?\"; } 2>&1 | cat >'" + log + "'";
    ASSERT_EQ(std::system(cmd2.c_str()), 0);
    const std::string said2 = slurp(log);
    EXPECT_NE(said2.find("rc=1"), std::string::npos) << said2;
    ASSERT_EQ(run("history show --db " + d, &out), 0) << out;
    EXPECT_NE(out.find("c1"), std::string::npos) << out;
    // no such folder: the path is bad, not the disk
    EXPECT_EQ(run("history add " + results_ + " --db " + d +
                      ".missing/x.db --commit c1 --date "
                      "2026-01-01",
                  &out),
              2)
        << out;
    EXPECT_NE(out.find("cannot open the history database"), std::string::npos) << out;
}
