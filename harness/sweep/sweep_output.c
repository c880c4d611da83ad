/*
 * sweep_output.c - what a sweep leaves: the results document around its job records
 * (results/RESULTS.md: tool, suite, shard, overrides, configs, jobs, wall clock), the merged
 * --baseline documents it is compared with, and report.html with the tuning files and the
 * extra inputs the session gives (calibration results, workload results; see sweep.h).
 */
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "record.h"
#include "report.h"
#include "results.h"
#include "sweep_internal.h"
#include "version.h"

cJSON *gs_sweep_document(const gs_sweep *s, cJSON **recs, const double *walls, int interrupted,
                         const char *started, const char *finished, double total_s)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) {
        for (size_t i = 0; i < s->n_jobs; i++)
            cJSON_Delete(recs[i]);
        return NULL;
    }
    cJSON_AddStringToObject(doc, "schema", GS_RESULTS_SCHEMA);
    cJSON_AddNumberToObject(doc, "schema_version", GS_RESULTS_SCHEMA_VERSION);
    cJSON *tool = cJSON_AddObjectToObject(doc, "tool");
    cJSON_AddStringToObject(tool, "version", gs_version());
    cJSON_AddStringToObject(tool, "commit", gs_commit());
    static const char *const suite_names[] = {"", "check", "perf", "all", "custom"};
    cJSON_AddStringToObject(doc, "suite",
                            s->o.suite == GS_SWEEP_MODEL         ? "model"
                            : s->o.suite >= 1 && s->o.suite <= 4 ? suite_names[s->o.suite]
                                                                 : "custom");
    cJSON_AddBoolToObject(doc, "complete", !interrupted && s->o.shard_count == 1);
    cJSON_AddBoolToObject(doc, "interrupted", interrupted);
    cJSON *sh = cJSON_AddObjectToObject(doc, "shard");
    cJSON_AddNumberToObject(sh, "index", s->o.shard_index);
    cJSON_AddNumberToObject(sh, "count", s->o.shard_count);
    cJSON *ov = cJSON_AddArrayToObject(doc, "overrides");
    for (size_t i = 0; i < s->o.n_sets; i++)
        cJSON_AddItemToArray(ov, cJSON_CreateString(s->o.sets[i]));
    cJSON_AddNumberToObject(doc, "planned_jobs", (double)s->planned);
    cJSON *cfgs = cJSON_AddArrayToObject(doc, "configs");
    for (size_t i = 0; i < s->n_cfgs; i++) {
        gs_sb sb;
        gs_sb_init(&sb);
        gs_record_write_config(&sb, s->cfgs[i]);
        cJSON *c = gs_sb_ok(&sb) ? cJSON_Parse(gs_sb_cstr(&sb)) : NULL;
        gs_sb_free(&sb);
        if (c) cJSON_AddItemToArray(cfgs, c);
    }
    cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
    /* the planned jobs of this sweep (its shard) without a record, by id (results/RESULTS.md):
     * the report and junit.xml name them; in plan order, before "wall" */
    cJSON *nr = NULL;
    for (size_t i = 0; i < s->n_jobs; i++) {
        if (recs[i]) continue;
        if (!nr) nr = cJSON_AddArrayToObject(doc, "not_run");
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "id", s->jobs[i].id);
        cJSON_AddNumberToObject(e, "shard", s->o.shard_index);
        cJSON_AddNumberToObject(e, "shards", s->o.shard_count);
        cJSON_AddStringToObject(e, "why", interrupted ? "interrupted" : "no result");
        cJSON_AddItemToArray(nr, e);
    }
    cJSON *wall = cJSON_AddObjectToObject(doc, "wall");
    cJSON_AddStringToObject(wall, "started", started);
    cJSON_AddStringToObject(wall, "finished", finished);
    cJSON_AddNumberToObject(wall, "total_s", total_s);
    cJSON *wj = cJSON_AddObjectToObject(wall, "jobs");
    for (size_t i = 0; i < s->n_jobs; i++) {
        if (!recs[i]) continue;
        cJSON_AddItemToArray(jobs, recs[i]);
        cJSON_AddNumberToObject(wj, s->jobs[i].id, walls[i]);
    }
    gs_results_sort_jobs(doc);
    return doc;
}

cJSON *gs_sweep_load_baselines(const gs_sweep_opts *o, int *failed, gs_error *err)
{
    *failed = 0;
    cJSON *base = NULL;
    for (size_t i = 0; i < o->n_baselines; i++) {
        cJSON *b = gs_compare_load(o->baselines[i], err);
        if (!b) {
            cJSON_Delete(base);
            *failed = 1;
            return NULL;
        }
        if (!base) {
            base = b;
            continue;
        }
        cJSON *bj = cJSON_GetObjectItemCaseSensitive(b, "jobs");
        cJSON *aj = cJSON_GetObjectItemCaseSensitive(base, "jobs");
        while (bj->child)
            cJSON_AddItemToArray(aj, cJSON_DetachItemViaPointer(bj, bj->child));
        cJSON_Delete(b);
    }
    return base;
}

gs_status gs_sweep_write_report(const gs_sweep *s, const char *results_path, const char *html,
                                const char *const *extra_in, int n_extra, gs_error *err)
{
    const gs_sweep_opts *o = &s->o;
    /* the report reads results files; reduced baseline files and directories are only for the
     * regression check */
    const char *rb = NULL;
    if (o->n_baselines) {
        gs_error e2;
        gs_error_clear(&e2);
        cJSON *bd = gs_results_load(o->baselines[0], &e2);
        if (bd) rb = o->baselines[0];
        cJSON_Delete(bd);
    }
    /* the tuning files this sweep used, so the report shows the tuning gains */
    char tpaths[8][4096];
    const char *extra[GS_REPORT_MAX_EXTRA];
    gs_report_opts ro;
    memset(&ro, 0, sizeof ro);
    for (size_t ci = 0; ci < s->n_cfgs && ro.n_extra < 8; ci++)
        if (gs_sweep_tuning_path(s, ci, tpaths[ro.n_extra], sizeof tpaths[0])) {
            extra[ro.n_extra] = tpaths[ro.n_extra];
            ro.n_extra++;
        }
    for (int i = 0; i < n_extra && ro.n_extra < GS_REPORT_MAX_EXTRA; i++)
        extra[ro.n_extra++] = extra_in[i];
    ro.extra_paths = extra;
    return gs_report_write_opts(results_path, rb, html, &ro, err);
}
