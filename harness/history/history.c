/* history.c - the performance history database (history.h) on SQLite. */
#include "history.h"

#include <ctype.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gs/strbuf.h"
#include "job.h"
#include "results.h"

/* Long enough for a CI job that is writing a whole check sweep (a few thousand rows). */
#define HISTORY_BUSY_MS 30000

struct gs_history {
    sqlite3 *db;
    char *path;
    int version;
};

/* What an SQLite error means for the caller: the file not matching the schema (a missing
 * table or column, a damaged or foreign file) is bad input (GS_ERR_INVALID, exit 2); a full
 * disk, an I/O error, a lock held too long are a write that failed (GS_ERR_IO, exit 1). */
static gs_status db_status(gs_history *h)
{
    switch (sqlite3_errcode(h->db) & 0xff) {
    case SQLITE_ERROR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_SCHEMA:
    case SQLITE_MISMATCH:
    case SQLITE_FORMAT:
        return GS_ERR_INVALID;
    default:
        return GS_ERR_IO;
    }
}

static gs_status db_error(gs_history *h, gs_error *err, const char *what)
{
    return gs_error_set(err, db_status(h), h->path, 0, 0, "%s: %s", what, sqlite3_errmsg(h->db));
}

static gs_status exec(gs_history *h, const char *sql, gs_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(h->db, sql, NULL, NULL, &msg) == SQLITE_OK) return GS_OK;
    const gs_status code = db_status(h);
    gs_error_set(err, code, h->path, 0, 0, "%s", msg ? msg : sqlite3_errmsg(h->db));
    sqlite3_free(msg);
    return code;
}

/* One integer from a query with no parameters; -1 on error (err set). */
static long long query_int(gs_history *h, const char *sql, gs_error *err)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_error(h, err, "cannot read the database");
        return -1;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_DONE)
        db_error(h, err, "cannot read the database");
    else
        v = 0;
    sqlite3_finalize(st);
    return v;
}

/* The IN-list of failing job statuses, from GS_JOB_STATUS_TABLE so it follows the table. */
static void failing_statuses(gs_sb *sb)
{
    gs_sb_puts(sb, "(");
    int first = 1;
    for (int s = 0; s < GS_JOB_STATUS_COUNT; s++) {
        if (!gs_job_status_is_failure((gs_job_status)s)) continue;
        gs_sb_printf(sb, "%s'%s'", first ? "" : ",", gs_job_status_name((gs_job_status)s));
        first = 0;
    }
    gs_sb_puts(sb, ")");
}

/* Migrations: entry v-1 takes a version v-1 database to version v. Never edit a shipped entry;
 * add one (and bump GS_HISTORY_SCHEMA_VERSION). */
static gs_status migrate_1(gs_history *h, gs_error *err)
{
    return exec(h,
                "CREATE TABLE runs(id INTEGER PRIMARY KEY, commit_id TEXT NOT NULL UNIQUE,"
                " date TEXT NOT NULL, suite TEXT NOT NULL, tool_version TEXT NOT NULL,"
                " complete INTEGER NOT NULL, planned_jobs INTEGER, overrides TEXT NOT NULL,"
                " added_at TEXT NOT NULL);"
                "CREATE TABLE configs(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE "
                "CASCADE, name TEXT NOT NULL, path TEXT NOT NULL, json TEXT NOT NULL,"
                " PRIMARY KEY(run_id, name));"
                "CREATE TABLE jobs(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                " job_id TEXT NOT NULL, generation TEXT NOT NULL, kernel TEXT NOT NULL,"
                " status TEXT NOT NULL, time_ns REAL, max_abs REAL, PRIMARY KEY(run_id, job_id));"
                "CREATE INDEX runs_date ON runs(date, id);",
                err);
}

/* Version 2: runs carry `good` (complete, no failing job) for the CI gate; existing runs get
 * it from their jobs. An index for `show --kernel/--gen`. */
static gs_status migrate_2(gs_history *h, gs_error *err)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_puts(&sb, "ALTER TABLE runs ADD COLUMN good INTEGER NOT NULL DEFAULT 0;"
                    "UPDATE runs SET good = complete AND NOT EXISTS(SELECT 1 FROM jobs WHERE "
                    "jobs.run_id = runs.id AND jobs.status IN ");
    failing_statuses(&sb);
    gs_sb_puts(&sb, ");CREATE INDEX jobs_kernel ON jobs(kernel, generation);");
    gs_status st = exec(h, gs_sb_cstr(&sb), err);
    gs_sb_free(&sb);
    return st;
}

static gs_status (*const migrations[])(gs_history *, gs_error *) = {migrate_1, migrate_2};

static gs_status check_snapshot(gs_history *h, int create, gs_error *err);

/* Refuse what is not a gensweep history before anything writes to the file. */
static gs_status check_database(gs_history *h, int create, gs_error *err)
{
    /* the version and the table count from one snapshot: a concurrent first writer creates
     * the tables and sets the version in one transaction, and reading the two outside one
     * could see its tables with the old version 0 */
    gs_status begun = exec(h, "BEGIN", err);
    if (begun != GS_OK) return begun;
    gs_status st = check_snapshot(h, create, err);
    sqlite3_exec(h->db, st == GS_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return st;
}

/* The first read of the file failed: a damaged or foreign file is bad input; an I/O error or a
 * full disk (the shared-memory file of a WAL database cannot be made) is not the file's fault. */
static gs_status unreadable(gs_history *h, gs_error *err)
{
    const gs_status code = db_status(h);
    if (code == GS_ERR_IO)
        return gs_error_set(err, code, h->path, 0, 0, "cannot read the history database: %s",
                            sqlite3_errmsg(h->db));
    return gs_error_set(err, code, h->path, 0, 0,
                        "not a gensweep history database (or damaged): %s", sqlite3_errmsg(h->db));
}

static gs_status check_snapshot(gs_history *h, int create, gs_error *err)
{
    /* user_version is any 32-bit integer: read it on its own, so that a negative one is told
     * apart from a failed read */
    sqlite3_stmt *vs = NULL;
    long long ver = 0;
    int vrc = sqlite3_prepare_v2(h->db, "PRAGMA user_version", -1, &vs, NULL);
    if (vrc == SQLITE_OK) vrc = sqlite3_step(vs);
    if (vrc == SQLITE_ROW) ver = sqlite3_column_int64(vs, 0);
    sqlite3_finalize(vs);
    if (vrc != SQLITE_ROW) return unreadable(h, err);
    if (ver < 0)
        return gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0,
                            "not a gensweep history database (user_version %lld is no schema "
                            "version)",
                            ver);
    long long tables = query_int(h, "SELECT count(*) FROM sqlite_master", err);
    if (tables < 0) return unreadable(h, err);
    if (ver == 0 && tables > 0)
        return gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0,
                            "an SQLite database, but not a gensweep history (user_version 0 and "
                            "%lld tables)",
                            tables);
    if (ver == 0 && !create)
        return gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0,
                            "empty database: no runs recorded (gensweep history add)");
    if (ver > GS_HISTORY_SCHEMA_VERSION)
        return gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0,
                            "history schema version %lld is newer than this gensweep's (%d); "
                            "use a newer gensweep",
                            ver, GS_HISTORY_SCHEMA_VERSION);
    if (ver > 0) {
        sqlite3_stmt *st = NULL;
        int ok = 0;
        if (sqlite3_prepare_v2(h->db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            const char *r = (const char *)sqlite3_column_text(st, 0);
            ok = r && !strcmp(r, "ok");
            if (!ok)
                gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0, "damaged database: %s",
                             r ? r : "?");
        } else {
            gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0, "damaged database: %s",
                         sqlite3_errmsg(h->db));
        }
        sqlite3_finalize(st);
        if (!ok) return GS_ERR_INVALID;
        if (query_int(h,
                      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                      "('runs', 'jobs', 'configs')",
                      err) != 3)
            return gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0,
                                "not a gensweep history database (tables runs, jobs, configs "
                                "missing)");
    }
    return GS_OK;
}

/* journal_mode=WAL takes an exclusive lock; a concurrent opener can get SQLITE_BUSY without the
 * busy handler, so retry for as long as the busy timeout. */
static gs_status set_wal(gs_history *h, gs_error *err)
{
    for (int ms = 0;; ms += 10) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(h->db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE) return GS_OK;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || ms >= HISTORY_BUSY_MS)
            return db_error(h, err, "cannot switch to WAL mode");
        sqlite3_sleep(10);
    }
}

static gs_status migrate(gs_history *h, int target, gs_error *err)
{
    /* at the version already (checked): nothing to write, no write lock (a reader of a
     * read-only file cannot take one) */
    long long now = query_int(h, "PRAGMA user_version", err);
    if (now >= target) {
        h->version = (int)now;
        return GS_OK;
    }
    if (sqlite3_db_readonly(h->db, "main") == 1)
        return gs_error_set(err, GS_ERR_INVALID, h->path, 0, 0,
                            "history schema version %lld needs migrating to %d, but the database "
                            "is read-only",
                            now, target);
    gs_status st = exec(h, "BEGIN IMMEDIATE", err);
    if (st != GS_OK) return st;
    /* read again under the write lock: another process may have migrated meanwhile */
    long long ver = query_int(h, "PRAGMA user_version", err);
    if (ver < 0) st = GS_ERR_IO;
    for (long long v = ver + 1; st == GS_OK && v <= target; v++) {
        st = migrations[v - 1](h, err);
        if (st == GS_OK) {
            char sql[64];
            snprintf(sql, sizeof sql, "PRAGMA user_version = %lld", v);
            st = exec(h, sql, err);
        }
    }
    if (st == GS_OK) st = exec(h, "COMMIT", err);
    if (st != GS_OK) {
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        return st;
    }
    h->version = (int)(ver > target ? ver : target);
    return GS_OK;
}

/* Whether this process may write path and create files next to it (a WAL database's -shm). */
static int writable(const char *path)
{
    if (access(path, W_OK) != 0) return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) return access(".", W_OK) == 0;
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    return access(dir, W_OK) == 0;
}

/* Reopen h's file read-only as immutable (no locks, no -shm/-wal files made): for a file this
 * process cannot write, which therefore nothing it does can change. */
static gs_status reopen_immutable(gs_history *h, gs_error *err)
{
    gs_sb uri;
    gs_sb_init(&uri);
    gs_sb_puts(&uri, "file:");
    for (const char *p = h->path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#')
            gs_sb_printf(&uri, "%%%02X", (unsigned)(unsigned char)*p);
        else
            gs_sb_putc(&uri, *p);
    }
    gs_sb_puts(&uri, "?immutable=1");
    if (!gs_sb_ok(&uri)) {
        gs_sb_free(&uri);
        return gs_error_set(err, GS_ERR_NOMEM, h->path, 0, 0, "out of memory");
    }
    sqlite3_close(h->db);
    h->db = NULL;
    int rc =
        sqlite3_open_v2(gs_sb_cstr(&uri), &h->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    gs_sb_free(&uri);
    if (rc != SQLITE_OK)
        return gs_error_set(err, GS_ERR_IO, h->path, 0, 0, "cannot open the history database: %s",
                            h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc));
    return GS_OK;
}

/* A database this process set out to create but could not write (a full disk): its file, left
 * empty, and its -wal, -shm and -journal files are removed, so that no 0-byte database remains
 * to be read later as "damaged". A file with content is kept: it is not ours (a concurrent first
 * writer's) or it holds what was written. */
static void remove_failed_creation(const char *path)
{
    struct stat now;
    if (stat(path, &now) != 0 || !S_ISREG(now.st_mode) || now.st_size != 0) return;
    unlink(path);
    static const char *const sidecars[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sidecars / sizeof *sidecars; i++) {
        char side[4096];
        if (snprintf(side, sizeof side, "%s%s", path, sidecars[i]) < (int)sizeof side) unlink(side);
    }
}

gs_status gs_history_open(const char *path, int create, int target_version, gs_history **out,
                          gs_error *err)
{
    *out = NULL;
    if (target_version <= 0) target_version = GS_HISTORY_SCHEMA_VERSION;
    if (target_version > GS_HISTORY_SCHEMA_VERSION)
        return gs_error_set(err, GS_ERR_USAGE, path, 0, 0, "no history schema version %d",
                            target_version);
    gs_history *h = gs_calloc(1, sizeof *h);
    if (!h) return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
    h->path = gs_strdup(path);
    struct stat before;
    const int existed = stat(path, &before) == 0;
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &h->db, flags, NULL);
    if (rc != SQLITE_OK) { /* a missing file or folder, no permission: the path given is bad */
        gs_error_set(err, GS_ERR_INVALID, path, 0, 0, "cannot open the history database: %s",
                     h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc));
        gs_history_close(h);
        return GS_ERR_INVALID;
    }
    sqlite3_busy_timeout(h->db, HISTORY_BUSY_MS);
    gs_status st = check_database(h, create, err);
    /* a reader (show, export, gate) of a file it cannot write, or on a read-only mount where a
     * WAL database's shared-memory file cannot be made: read it as an immutable file */
    if (st != GS_OK && !create && !writable(path)) {
        gs_error e2;
        gs_error_clear(&e2);
        if (reopen_immutable(h, &e2) == GS_OK) {
            gs_error_clear(err);
            st = check_database(h, create, err);
        }
    }
    /* WAL lets concurrent writers add at once: set by the writer; a reader leaves the file's
     * journal mode as it is */
    if (st == GS_OK && create) st = set_wal(h, err);
    if (st == GS_OK) st = exec(h, "PRAGMA foreign_keys = ON", err);
    if (st == GS_OK) st = migrate(h, target_version, err);
    if (st != GS_OK) {
        gs_history_close(h);
        if (create && !existed) remove_failed_creation(path);
        return st;
    }
    *out = h;
    return GS_OK;
}

void gs_history_close(gs_history *h)
{
    if (!h) return;
    sqlite3_close(h->db);
    gs_free(h->path);
    gs_free(h);
}

int gs_history_version(const gs_history *h)
{
    return h->version;
}

/* "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ" (optionally fractional seconds) -> the long form. */
static int normalize_date(const char *s, char out[21])
{
    int y, mo, d, hh = 0, mi = 0, ss = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10) return -1;
    const char *p = s + 10;
    if (*p) {
        int m = 0;
        if (sscanf(p, "T%2d:%2d:%2d%n", &hh, &mi, &ss, &m) != 3 || m != 9) return -1;
        p += m;
        if (*p == '.')
            for (p++; isdigit((unsigned char)*p); p++)
                ;
        if (strcmp(p, "Z") != 0) return -1;
    }
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || hh > 23 ||
        mi > 59 || ss > 60 || hh < 0 || mi < 0 || ss < 0)
        return -1;
    const int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo == 2 && d == 29 && !leap) return -1;
    /* every field is range-checked above: the text is exactly 20 characters */
    snprintf(out, 21, "%04u-%02u-%02uT%02u:%02u:%02uZ", (unsigned)y % 10000u, (unsigned)mo % 100u,
             (unsigned)d % 100u, (unsigned)hh % 100u, (unsigned)mi % 100u, (unsigned)ss % 100u);
    return 0;
}

static void now_utc(char out[21])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int valid_commit(const char *c)
{
    size_t n = strlen(c);
    if (n == 0 || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)c[i])) return 0;
    return 1;
}

static int status_is_failure(const char *s)
{
    for (int i = 0; i < GS_JOB_STATUS_COUNT; i++)
        if (!strcmp(s, gs_job_status_name((gs_job_status)i)))
            return gs_job_status_is_failure((gs_job_status)i);
    return 1; /* a status this build does not know cannot count as good */
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static char *json_text(const cJSON *v)
{
    if (!v) return gs_strdup("null");
    char *s = cJSON_PrintUnformatted(v);
    char *r = gs_strdup(s ? s : "null");
    cJSON_free(s);
    return r;
}

static gs_status insert_run(gs_history *h, const cJSON *res, const char *commit, const char *date,
                            int mark_bad, gs_error *err)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(res, "jobs");
    const cJSON *j;
    int good = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "complete"));
    cJSON_ArrayForEach(j, jobs) if (status_is_failure(gs_json_str(j, "status"))) good = 0;
    if (mark_bad) good = 0;
    char added[21];
    now_utc(added);
    char *overrides = json_text(cJSON_GetObjectItemCaseSensitive(res, "overrides"));
    sqlite3_stmt *st = NULL;
    gs_status rs = GS_OK;
    if (sqlite3_prepare_v2(h->db,
                           "INSERT INTO runs(commit_id, date, suite, tool_version, complete, "
                           "planned_jobs, overrides, added_at, good) VALUES(?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        gs_free(overrides);
        return db_error(h, err, "cannot record the run");
    }
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(res, "tool");
    sqlite3_bind_text(st, 1, commit, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, date, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, gs_json_str(res, "suite"), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, gs_json_str(tool, "version"), -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "complete")));
    bind_num(st, 6, gs_json_num(res, "planned_jobs"));
    sqlite3_bind_text(st, 7, overrides, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, added, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 9, good);
    if (sqlite3_step(st) != SQLITE_DONE) rs = db_error(h, err, "cannot record the run");
    sqlite3_finalize(st);
    gs_free(overrides);
    if (rs != GS_OK) return rs;
    sqlite3_int64 run = sqlite3_last_insert_rowid(h->db);

    if (sqlite3_prepare_v2(h->db, "INSERT INTO configs(run_id, name, path, json) VALUES(?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_error(h, err, "cannot record the configs");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(res, "configs"))
    {
        char *js = json_text(c);
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_text(st, 2, gs_json_str(c, "name"), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, gs_json_str(c, "path"), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, js, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        gs_free(js);
        if (rc != SQLITE_DONE) {
            rs = db_error(h, err, "cannot record the configs");
            break;
        }
    }
    sqlite3_finalize(st);
    if (rs != GS_OK) return rs;

    if (sqlite3_prepare_v2(h->db,
                           "INSERT INTO jobs(run_id, job_id, generation, kernel, status, time_ns, "
                           "max_abs) VALUES(?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_error(h, err, "cannot record the jobs");
    cJSON_ArrayForEach(j, jobs)
    {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_text(st, 2, gs_json_str(j, "id"), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, gs_json_str(j, "generation"), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, gs_json_str(j, "kernel"), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, gs_json_str(j, "status"), -1, SQLITE_STATIC);
        bind_num(st, 6, gs_json_num(j, "time_ns"));
        bind_num(st, 7, gs_json_num(cJSON_GetObjectItemCaseSensitive(j, "error"), "max_abs"));
        if (sqlite3_step(st) != SQLITE_DONE) {
            rs = db_error(h, err, "cannot record the jobs");
            break;
        }
    }
    sqlite3_finalize(st);
    return rs;
}

gs_status gs_history_key_of(const cJSON *results, const char *commit, const char *date,
                            gs_history_key *key, gs_error *err)
{
    if (!commit) commit = gs_json_str(cJSON_GetObjectItemCaseSensitive(results, "tool"), "commit");
    if (!*commit || !strcmp(commit, "unknown"))
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "the results carry no commit (tool.commit '%s'); pass --commit",
                            commit);
    if (!valid_commit(commit))
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "commit '%s' is not 1 to 64 printable characters without spaces",
                            commit);
    snprintf(key->commit, sizeof key->commit, "%s", commit);
    if (!date) {
        date = gs_json_str(cJSON_GetObjectItemCaseSensitive(results, "wall"), "started");
        if (!*date || normalize_date(date, key->date) != 0) now_utc(key->date);
    } else if (normalize_date(date, key->date) != 0) {
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "date '%s' is not a valid YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ", date);
    }
    /* a run dated in the future would stay the newest, and so the gate's "last good" base, for
     * ever: a day of clock skew at most (the text forms compare in time order) */
    char latest[21];
    time_t t = time(NULL) + 24 * 3600;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(latest, sizeof latest, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (strcmp(key->date, latest) > 0)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "date %s is in the future (a later run could never be the newest)",
                            key->date);
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(results, "jobs"))
    {
        if (!*gs_json_str(j, "id") || !*gs_json_str(j, "status") ||
            !*gs_json_str(j, "generation") || !*gs_json_str(j, "kernel"))
            return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                                "a job without id, status, generation or kernel");
    }
    return GS_OK;
}

gs_status gs_history_add(gs_history *h, const cJSON *results, const gs_history_key *key,
                         int replace, int mark_bad, gs_history_added *outcome, gs_error *err)
{
    *outcome = GS_HISTORY_UNCHANGED;
    const char *commit = key->commit;
    gs_status st = exec(h, "BEGIN IMMEDIATE", err);
    if (st != GS_OK) return st;
    sqlite3_stmt *q = NULL;
    sqlite3_int64 existing = 0;
    if (sqlite3_prepare_v2(h->db, "SELECT id FROM runs WHERE commit_id = ?", -1, &q, NULL) !=
        SQLITE_OK) {
        st = db_error(h, err, "cannot read the runs");
    } else {
        sqlite3_bind_text(q, 1, commit, -1, SQLITE_STATIC);
        int rc = sqlite3_step(q);
        if (rc == SQLITE_ROW)
            existing = sqlite3_column_int64(q, 0);
        else if (rc != SQLITE_DONE)
            st = db_error(h, err, "cannot read the runs");
        sqlite3_finalize(q);
    }
    if (st == GS_OK && existing && replace) {
        char sql[96];
        snprintf(sql, sizeof sql, "DELETE FROM runs WHERE id = %lld", (long long)existing);
        st = exec(h, sql, err);
    }
    if (st == GS_OK && (!existing || replace)) {
        st = insert_run(h, results, commit, key->date, mark_bad, err);
        if (st == GS_OK) *outcome = existing ? GS_HISTORY_REPLACED : GS_HISTORY_ADDED;
    }
    if (st == GS_OK) st = exec(h, "COMMIT", err);
    if (st != GS_OK) {
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        *outcome = GS_HISTORY_UNCHANGED;
    }
    return st;
}

static cJSON *col_num(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return cJSON_CreateNull();
    return cJSON_CreateNumber(sqlite3_column_double(st, i));
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    return s ? s : "";
}

/* Change points of one job: consecutive recorded times (nulls skipped) that moved by more than
 * the threshold, each flagged with the run that moved them. */
static void add_changes(cJSON *job, const cJSON *runs, double threshold)
{
    cJSON *changes = cJSON_AddArrayToObject(job, "changes");
    const cJSON *times = cJSON_GetObjectItemCaseSensitive(job, "time_ns");
    int n = cJSON_GetArraySize(times), prev = -1;
    for (int i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetArrayItem(times, i);
        if (!cJSON_IsNumber(t) || !(t->valuedouble > 0)) continue;
        if (prev >= 0) {
            double from = cJSON_GetArrayItem(times, prev)->valuedouble, to = t->valuedouble;
            double ratio = to / from;
            if (fabs(ratio - 1.0) > threshold) {
                cJSON *c = cJSON_CreateObject();
                cJSON_AddNumberToObject(c, "run", i);
                cJSON_AddStringToObject(c, "commit",
                                        gs_json_str(cJSON_GetArrayItem(runs, i), "commit"));
                cJSON_AddStringToObject(c, "previous_commit",
                                        gs_json_str(cJSON_GetArrayItem(runs, prev), "commit"));
                cJSON_AddNumberToObject(c, "from_ns", from);
                cJSON_AddNumberToObject(c, "to_ns", to);
                cJSON_AddNumberToObject(c, "ratio", ratio);
                cJSON_AddStringToObject(c, "direction", ratio > 1 ? "slower" : "faster");
                cJSON_AddItemToArray(changes, c);
            }
        }
        prev = i;
    }
}

cJSON *gs_history_export(gs_history *h, int n, const char *kernel, const char *generation,
                         double threshold, gs_error *err)
{
    if (n <= 0) n = 1;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", GS_HISTORY_EXPORT_SCHEMA);
    cJSON_AddNumberToObject(doc, "schema_version", GS_HISTORY_EXPORT_SCHEMA_VERSION);
    cJSON_AddNumberToObject(doc, "threshold", threshold);
    cJSON_AddItemToObject(doc, "kernel", kernel ? cJSON_CreateString(kernel) : cJSON_CreateNull());
    cJSON_AddItemToObject(doc, "generation",
                          generation ? cJSON_CreateString(generation) : cJSON_CreateNull());
    cJSON *runs = cJSON_AddArrayToObject(doc, "runs");
    cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");

    /* the runs and the jobs are read in one read transaction: a writer adding a run meanwhile
     * cannot make the two disagree */
    if (exec(h, "BEGIN", err) != GS_OK) {
        cJSON_Delete(doc);
        return NULL;
    }
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(h->db,
                                "SELECT id, commit_id, date, suite, good, complete, "
                                "(SELECT count(*) FROM jobs WHERE run_id = r.id) FROM "
                                "(SELECT * FROM runs ORDER BY date DESC, id DESC LIMIT ?) r "
                                "ORDER BY date, id",
                                -1, &st, NULL) == SQLITE_OK;
    sqlite3_int64 *ids = gs_calloc((size_t)n, sizeof *ids);
    int n_runs = 0, rc = SQLITE_DONE;
    if (ok && ids) {
        sqlite3_bind_int(st, 1, n);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            ids[n_runs++] = sqlite3_column_int64(st, 0);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "commit", col_text(st, 1));
            cJSON_AddStringToObject(r, "date", col_text(st, 2));
            cJSON_AddStringToObject(r, "suite", col_text(st, 3));
            cJSON_AddBoolToObject(r, "good", sqlite3_column_int(st, 4));
            cJSON_AddBoolToObject(r, "complete", sqlite3_column_int(st, 5));
            cJSON_AddNumberToObject(r, "jobs", sqlite3_column_int(st, 6));
            cJSON_AddItemToArray(runs, r);
        }
        ok = rc == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (ok && n_runs > 0) {
        ok = sqlite3_prepare_v2(h->db,
                                "SELECT j.job_id, j.generation, j.kernel, j.run_id, j.status, "
                                "j.time_ns FROM jobs j JOIN (SELECT id FROM runs ORDER BY date "
                                "DESC, id DESC LIMIT ?) r ON j.run_id = r.id WHERE (?2 IS NULL OR "
                                "j.kernel = ?2) AND (?3 IS NULL OR j.generation = ?3) ORDER BY "
                                "j.job_id",
                                -1, &st, NULL) == SQLITE_OK;
        if (ok) {
            sqlite3_bind_int(st, 1, n);
            if (kernel) sqlite3_bind_text(st, 2, kernel, -1, SQLITE_STATIC);
            if (generation) sqlite3_bind_text(st, 3, generation, -1, SQLITE_STATIC);
            cJSON *cur = NULL, *times = NULL, *stats = NULL;
            while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *id = col_text(st, 0);
                if (!cur || strcmp(gs_json_str(cur, "id"), id) != 0) {
                    if (cur) add_changes(cur, runs, threshold);
                    cur = cJSON_CreateObject();
                    cJSON_AddStringToObject(cur, "id", id);
                    cJSON_AddStringToObject(cur, "generation", col_text(st, 1));
                    cJSON_AddStringToObject(cur, "kernel", col_text(st, 2));
                    times = cJSON_AddArrayToObject(cur, "time_ns");
                    stats = cJSON_AddArrayToObject(cur, "status");
                    for (int i = 0; i < n_runs; i++) {
                        cJSON_AddItemToArray(times, cJSON_CreateNull());
                        cJSON_AddItemToArray(stats, cJSON_CreateNull());
                    }
                    cJSON_AddItemToArray(jobs, cur);
                }
                sqlite3_int64 run = sqlite3_column_int64(st, 3);
                for (int i = 0; i < n_runs; i++)
                    if (ids[i] == run) {
                        cJSON_ReplaceItemInArray(times, i, col_num(st, 5));
                        cJSON_ReplaceItemInArray(stats, i, cJSON_CreateString(col_text(st, 4)));
                    }
            }
            if (cur) add_changes(cur, runs, threshold);
            ok = rc == SQLITE_DONE;
        }
        sqlite3_finalize(st);
    }
    gs_free(ids);
    if (!ok) {
        db_error(h, err, "cannot read the history");
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        cJSON_Delete(doc);
        return NULL;
    }
    sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
    return doc;
}

cJSON *gs_history_last_good(gs_history *h, const char *exclude_commit, int *found, gs_error *err)
{
    *found = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h->db,
                           "SELECT id, commit_id, date FROM runs WHERE good AND (?1 IS NULL OR "
                           "commit_id <> ?1) ORDER BY date DESC, id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK) {
        db_error(h, err, "cannot read the runs");
        return NULL;
    }
    if (exclude_commit) sqlite3_bind_text(st, 1, exclude_commit, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        if (rc != SQLITE_DONE) db_error(h, err, "cannot read the runs");
        sqlite3_finalize(st);
        return NULL;
    }
    sqlite3_int64 run = sqlite3_column_int64(st, 0);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "commit", col_text(st, 1));
    cJSON_AddStringToObject(doc, "date", col_text(st, 2));
    sqlite3_finalize(st);
    cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
    if (sqlite3_prepare_v2(h->db,
                           "SELECT job_id, generation, kernel, status, time_ns, max_abs FROM jobs "
                           "WHERE run_id = ? ORDER BY job_id",
                           -1, &st, NULL) != SQLITE_OK) {
        db_error(h, err, "cannot read the jobs");
        cJSON_Delete(doc);
        return NULL;
    }
    sqlite3_bind_int64(st, 1, run);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", col_text(st, 0));
        cJSON_AddStringToObject(j, "generation", col_text(st, 1));
        cJSON_AddStringToObject(j, "kernel", col_text(st, 2));
        cJSON_AddStringToObject(j, "status", col_text(st, 3));
        cJSON_AddItemToObject(j, "time_ns", col_num(st, 4));
        cJSON_AddItemToObject(j, "max_abs", col_num(st, 5));
        cJSON_AddItemToArray(jobs, j);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        db_error(h, err, "cannot read the jobs");
        cJSON_Delete(doc);
        return NULL;
    }
    *found = 1;
    return doc;
}
