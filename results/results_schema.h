/*
 * results_schema.h - reading and validating results and baseline files: the one schema check
 * shared by merge, compare, baseline and the report (results/RESULTS.md), plus an id index so
 * consumers look jobs up in O(log n).
 *
 * Only gs_core and cJSON are needed (no model, no report), so any consumer can link it
 * (library gs_results_schema).
 */
#ifndef GS_RESULTS_SCHEMA_H
#define GS_RESULTS_SCHEMA_H

#include <cjson/cJSON.h>

#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_RESULTS_SCHEMA "gensweep-results"
#define GS_RESULTS_SCHEMA_VERSION 1
#define GS_BASELINE_SCHEMA "gensweep-baseline"
#define GS_BASELINE_SCHEMA_VERSION 1

/* Largest JSON file any consumer reads (a 100,000-job results file is about 150 MB). */
#define GS_JSON_MAX_BYTES (1024.0 * 1024 * 1024)

/* Read and parse a JSON file. Only regular files are read (a FIFO, device or directory is a
 * GS_ERR_IO error, never a hang), up to GS_JSON_MAX_BYTES. NULL with err set (GS_ERR_IO /
 * GS_ERR_PARSE with the line). The caller frees with cJSON_Delete. */
cJSON *gs_json_read_file(const char *path, gs_error *err);
/* Parse len bytes of JSON text; text[len] must be '\0' (a NUL before it is an error). name
 * labels the error. */
cJSON *gs_json_parse_text(const char *text, size_t len, const char *name, gs_error *err);

/* Check a parsed results document against results/RESULTS.md: "schema" and "schema_version",
 * the types of the top-level members, every job an object with a non-empty string id, known
 * status, numbers-or-null metrics, no duplicate ids, and no more jobs than "planned_jobs".
 * name labels the errors (a path; may be NULL). GS_ERR_INVALID with err set. */
gs_status gs_results_validate(const cJSON *doc, const char *name, gs_error *err);
/* The same for a baseline file (schema "gensweep-baseline"). */
gs_status gs_baseline_validate(const cJSON *doc, const char *name, gs_error *err);

/* A generation name usable in a file name: [A-Za-z0-9_.-], not starting with '.'. */
int gs_results_safe_name(const char *s);

/*
 * Jobs (or an object's members) sorted by key for O(log n) lookups. by_member_name: key is each
 * member's name (e.g. wall.jobs); otherwise each element's "id" string (elements without one
 * are skipped). The index points into container, which must outlive it and not change.
 */
typedef struct gs_json_index gs_json_index;
gs_json_index *gs_json_index_create(const cJSON *container, int by_member_name);
void gs_json_index_destroy(gs_json_index *ix);
/* The element whose key is key, or NULL. */
const cJSON *gs_json_index_find(const gs_json_index *ix, const char *key);
/* Is there an element whose key starts with prefix (first n bytes)? */
int gs_json_index_has_prefix(const gs_json_index *ix, const char *prefix, size_t n);
/* A key that occurs twice, or NULL. */
const char *gs_json_index_duplicate(const gs_json_index *ix);

#ifdef __cplusplus
}
#endif
#endif
