/*
 * history.h - the performance history: one SQLite database holding every recorded sweep (one
 * run per commit) so a kernel's simulated time can be followed across commits.
 *
 * The database is versioned with SQLite's `user_version` (GS_HISTORY_SCHEMA_VERSION); opening
 * an older database migrates it in one transaction, a newer one is refused. It is opened in WAL
 * mode with a busy timeout so several CI jobs can add runs at once. A file that is not a
 * gensweep history (or is damaged) is refused before anything is written to it.
 *
 * Tables (version 2):
 *   runs(id, commit_id UNIQUE, date, suite, tool_version, complete, planned_jobs, overrides,
 *        added_at, good)         good = complete and no job failed
 *   configs(run_id, name, path, json)        the results file's config entries
 *   jobs(run_id, job_id, generation, kernel, status, time_ns, max_abs)
 */
#ifndef GS_HISTORY_H
#define GS_HISTORY_H

#include <cjson/cJSON.h>

#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_HISTORY_SCHEMA_VERSION 2
#define GS_HISTORY_EXPORT_SCHEMA "gensweep-history"
#define GS_HISTORY_EXPORT_SCHEMA_VERSION 1

typedef struct gs_history gs_history;

/* Open (create = 1: create if missing) the database at path, migrating it to target_version
 * (0 = GS_HISTORY_SCHEMA_VERSION; tests build older databases with smaller values). On error
 * *out is NULL and err names the file and the problem. */
gs_status gs_history_open(const char *path, int create, int target_version, gs_history **out,
                          gs_error *err);
/* NULL is a no-op. */
void gs_history_close(gs_history *h);
/* The schema version of the open database. */
int gs_history_version(const gs_history *h);

typedef enum gs_history_added {
    GS_HISTORY_ADDED,     /* a new run */
    GS_HISTORY_UNCHANGED, /* the commit was already recorded; nothing written */
    GS_HISTORY_REPLACED   /* the commit's run was replaced (replace = 1) */
} gs_history_added;

/* Which run a results document records: its commit and date (UTC, "YYYY-MM-DDTHH:MM:SSZ"). */
typedef struct gs_history_key {
    char commit[65];
    char date[21];
} gs_history_key;

/* Resolve and check the key of a results document before anything is opened: commit NULL
 * takes the results' tool.commit, date NULL the results' wall.started (else now); a given date
 * is ISO 8601 "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ". GS_ERR_USAGE / GS_ERR_INVALID with err
 * set. */
gs_status gs_history_key_of(const cJSON *results, const char *commit, const char *date,
                            gs_history_key *key, gs_error *err);

/* Record a results document (results/RESULTS.md) as the run `key`. Idempotent per commit:
 * adding a recorded commit again writes nothing unless replace is set. The run is good when
 * the sweep was complete and no job failed, unless mark_bad (e.g. it failed a CI gate), so
 * the gate never takes it as its reference. */
gs_status gs_history_add(gs_history *h, const cJSON *results, const gs_history_key *key,
                         int replace, int mark_bad, gs_history_added *outcome, gs_error *err);

/* The last n runs (oldest first) and, per job (optionally only those of kernel / generation),
 * its time and status in each run and the change points: consecutive recorded times whose ratio
 * differs from 1 by more than threshold, flagged with the run (commit) that caused them.
 * Shape: the `history export` section of results/RESULTS.md. NULL with err set. */
cJSON *gs_history_export(gs_history *h, int n, const char *kernel, const char *generation,
                         double threshold, gs_error *err);

/* The most recent run marked good whose commit differs from exclude_commit (may be NULL), as a
 * document {"commit": .., "date": .., "jobs": [{"id", "generation", "kernel", "status",
 * "time_ns", "max_abs"}]} that gs_compare_docs reads as a baseline. *found = 0 (and a NULL
 * return without an error) when there is none. */
cJSON *gs_history_last_good(gs_history *h, const char *exclude_commit, int *found, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
