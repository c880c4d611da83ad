/*
 * results.h - results files as documents: read results.json (cJSON), write it back
 * deterministically (through the JSON writer, gs/jsonw.h), derive results.csv and junit.xml,
 * and merge shard outputs. Schema: results/RESULTS.md.
 *
 * Layout of a written results.json: top-level keys one per line, one config and one job per
 * line, jobs sorted by id, so `diff` and `jq 'del(.wall)'` work on it.
 */
#ifndef GS_RESULTS_H
#define GS_RESULTS_H

#include <cjson/cJSON.h>

#include "gs/common.h"
#include "gs/jsonw.h"
#include "gs/strbuf.h"
#include "results_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write v as one compact JSON value through w (numbers with gs_sb_json_num, strings with
 * gs_sb_json_str, so writing a parsed file back gives the same bytes); NULL writes null. */
void gs_json_write(gs_jw *w, const cJSON *v);
/* The same into sb on its own. GS_OK, or GS_ERR_NOMEM when sb ran out of memory. */
gs_status gs_json_emit(gs_sb *sb, const cJSON *v);
/* Read a results.json and validate it (gs_results_validate: schema, version, types, ids). NULL
 * with err set. */
cJSON *gs_results_load(const char *path, gs_error *err);
/* Sort doc.jobs by id (stable; ids are unique in a valid file). O(n log n). */
void gs_results_sort_jobs(cJSON *doc);
/* Append the whole document in the line layout described above (and a final newline); status
 * as gs_json_emit's. */
gs_status gs_results_emit(gs_sb *sb, const cJSON *doc);

/* results.json, results.csv and junit.xml into dir (created if missing). */
gs_status gs_results_write_dir(const cJSON *doc, const char *dir, gs_error *err);
gs_status gs_results_write_csv(const cJSON *doc, const char *path, gs_error *err);
gs_status gs_results_write_junit(const cJSON *doc, const char *path, gs_error *err);

/* Merge shard results (each a results.json) into one document equal to the unsharded sweep's
 * (apart from "wall"). Refuses invalid files, different schema versions, suites, overrides,
 * configs or shard counts, and duplicate job ids (NULL with err set). "complete" is false when
 * a shard is missing, a shard was interrupted, or fewer jobs than "planned_jobs" are present;
 * then *why (if not NULL) gets a gs_free'd sentence saying what is missing. O(n log n). */
cJSON *gs_results_merge(const char *const *paths, size_t n, char **why, gs_error *err);
/* The same, and the inputs' "not_run" lists (a shard that was interrupted names the jobs it did
 * not run) joined in the merged document; *shards (if not NULL; gs_free'd by the caller) gets an
 * array indexed 1..N by shard: 0 the shard is missing, 1 merged, 2 merged but interrupted, and
 * *n_shards N. */
cJSON *gs_results_merge_ex(const char *const *paths, size_t n, char **why, unsigned char **shards,
                           size_t *n_shards, gs_error *err);

/* Small accessors: a member's number (NAN when absent or null) / string ("" when absent). */
double gs_json_num(const cJSON *obj, const char *key);
const char *gs_json_str(const cJSON *obj, const char *key);

/* mkdir -p. GS_ERR_IO with err set. */
gs_status gs_mkdirs(const char *dir, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
