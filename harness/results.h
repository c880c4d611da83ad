/*
 * results.h - results files as documents: read results.json (cJSON), write it back
 * deterministically (through gs/strbuf.h), derive results.csv and junit.xml, and merge shard
 * outputs. Schema: harness/RESULTS.md.
 *
 * Layout of a written results.json: top-level keys one per line, one config and one job per
 * line, jobs sorted by id, so `diff` and `jq 'del(.wall)'` work on it.
 */
#ifndef GS_RESULTS_H
#define GS_RESULTS_H

#include <cjson/cJSON.h>

#include "gs/common.h"
#include "gs/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_RESULTS_SCHEMA "gensweep-results"
#define GS_RESULTS_SCHEMA_VERSION 1

/* Append v as compact JSON (numbers with gs_sb_json_num, strings with gs_sb_json_str, so
 * writing a parsed file back gives the same bytes). */
void gs_json_emit(gs_sb *sb, const cJSON *v);
/* Read and parse a JSON file. NULL with err set (GS_ERR_IO / GS_ERR_PARSE with the line). The
 * caller frees with cJSON_Delete. */
cJSON *gs_json_read_file(const char *path, gs_error *err);

/* Read a results.json and check "schema" and "schema_version" (a version this build does not
 * know is refused). NULL with err set. */
cJSON *gs_results_load(const char *path, gs_error *err);
/* Sort doc.jobs by id (stable; ids are unique in a valid file). */
void gs_results_sort_jobs(cJSON *doc);
/* Append the whole document in the line layout described above. */
void gs_results_emit(gs_sb *sb, const cJSON *doc);

/* results.json, results.csv and junit.xml into dir (created if missing). */
gs_status gs_results_write_dir(const cJSON *doc, const char *dir, gs_error *err);
gs_status gs_results_write_csv(const cJSON *doc, const char *path, gs_error *err);
gs_status gs_results_write_junit(const cJSON *doc, const char *path, gs_error *err);

/* Merge shard results (each a results.json) into one document equal to the unsharded sweep's
 * (apart from "wall"). Refuses different schema versions, suites, overrides, configs or shard
 * counts, and duplicate job ids. NULL with err set. */
cJSON *gs_results_merge(const char *const *paths, size_t n, gs_error *err);

/* Small accessors: a member's number (NAN when absent or null) / string ("" when absent). */
double gs_json_num(const cJSON *obj, const char *key);
const char *gs_json_str(const cJSON *obj, const char *key);

/* mkdir -p. GS_ERR_IO with err set. */
gs_status gs_mkdirs(const char *dir, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
