/* results.c - results documents: read, write deterministically, CSV, JUnit, merge (see
 * results.h). */
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job_status.h"

double gs_json_num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

const char *gs_json_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The writer must take any document cJSON parses. */
_Static_assert(CJSON_NESTING_LIMIT <= GS_JW_MAX_DEPTH, "gs_jw too shallow for cJSON documents");

void gs_json_write(gs_jw *w, const cJSON *v)
{
    if (cJSON_IsFalse(v)) {
        gs_jw_bool(w, 0);
    } else if (cJSON_IsTrue(v)) {
        gs_jw_bool(w, 1);
    } else if (cJSON_IsNumber(v)) {
        gs_jw_num(w, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        gs_jw_str(w, v->valuestring ? v->valuestring : "");
    } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        int obj = cJSON_IsObject(v);
        if (obj)
            gs_jw_begin_object(w, GS_JW_COMPACT);
        else
            gs_jw_begin_array(w, GS_JW_COMPACT);
        const cJSON *c;
        cJSON_ArrayForEach(c, v)
        {
            if (obj) gs_jw_key(w, c->string ? c->string : "");
            gs_json_write(w, c);
        }
        if (obj)
            gs_jw_end_object(w);
        else
            gs_jw_end_array(w);
    } else { /* NULL, null, or an invalid item */
        gs_jw_null(w);
    }
}

gs_status gs_json_emit(gs_sb *sb, const cJSON *v)
{
    gs_jw w;
    gs_jw_init(&w, sb);
    gs_json_write(&w, v);
    return gs_jw_finish(&w, NULL);
}

cJSON *gs_results_load(const char *path, gs_error *err)
{
    cJSON *doc = gs_json_read_file(path, err);
    if (!doc) return NULL;
    if (gs_results_validate(doc, path, err) == GS_OK) return doc;
    cJSON_Delete(doc);
    return NULL;
}

typedef struct job_ref {
    const char *id;
    size_t pos;
    cJSON *item;
} job_ref;

static int job_cmp(const void *a, const void *b)
{
    const job_ref *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c) return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos; /* stable */
}

void gs_results_sort_jobs(cJSON *doc)
{
    cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    size_t n = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, jobs) n++;
    if (n < 2) return;
    job_ref *v = gs_calloc(n, sizeof *v);
    if (!v) return;
    size_t i = 0;
    cJSON_ArrayForEach(c, jobs)
    {
        v[i].id = gs_json_str(c, "id");
        v[i].pos = i;
        v[i].item = c;
        i++;
    }
    qsort(v, n, sizeof *v, job_cmp);
    /* relink in place (cJSON keeps the tail in child->prev): detaching and re-adding through
     * the index-based API would be quadratic */
    for (i = 0; i < n; i++) {
        v[i].item->next = i + 1 < n ? v[i + 1].item : NULL;
        v[i].item->prev = i > 0 ? v[i - 1].item : v[n - 1].item;
    }
    jobs->child = v[0].item;
    gs_free(v);
}

gs_status gs_results_emit(gs_sb *sb, const cJSON *doc)
{
    gs_jw w;
    gs_jw_init(&w, sb);
    gs_jw_begin_object(&w, GS_JW_LINES);
    const cJSON *c;
    cJSON_ArrayForEach(c, doc)
    {
        gs_jw_key(&w, c->string ? c->string : "");
        /* the long arrays one element a line */
        if (cJSON_IsArray(c) && c->string &&
            (!strcmp(c->string, "jobs") || !strcmp(c->string, "configs"))) {
            gs_jw_begin_array(&w, GS_JW_LINES);
            const cJSON *e;
            cJSON_ArrayForEach(e, c) gs_json_write(&w, e);
            gs_jw_end_array(&w);
        } else {
            gs_json_write(&w, c);
        }
    }
    gs_jw_end_object(&w);
    gs_sb_putc(sb, '\n');
    return gs_jw_finish(&w, NULL);
}

gs_status gs_mkdirs(const char *dir, gs_error *err)
{
    char *path = gs_strdup(dir);
    if (!path) return gs_error_set(err, GS_ERR_NOMEM, dir, 0, 0, "out of memory");
    gs_status st = GS_OK;
    for (char *p = path + 1; *p && st == GS_OK; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            st = gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot create directory: %s",
                              strerror(errno));
        *p = '/';
    }
    if (st == GS_OK && mkdir(path, 0777) != 0 && errno != EEXIST)
        st = gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot create directory: %s",
                          strerror(errno));
    struct stat sb;
    if (st == GS_OK && (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        st = gs_error_set(err, GS_ERR_USAGE, path, 0, 0,
                          "exists and is not a directory (an output directory was expected)");
    gs_free(path);
    return st;
}

static void csv_num(gs_sb *sb, const cJSON *obj, const char *key)
{
    gs_sb_putc(sb, ',');
    double v = gs_json_num(obj, key);
    if (!isnan(v)) gs_sb_json_num(sb, v);
}

static void csv_str(gs_sb *sb, const char *s)
{
    gs_sb_putc(sb, ',');
    gs_sb_csv(sb, s);
}

static const char *const csv_engines[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};

gs_status gs_results_write_csv(const cJSON *doc, const char *path, gs_error *err)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_puts(&sb, "id,generation,kernel,variant,dtype,shape,params,mode,status,reason,time_ns,"
                    "instructions,flops,hbm_bytes,achieved_tflops,peak_tflops,achieved_hbm_gbps,"
                    "peak_hbm_gbps,roofline_ns,roofline_ratio,bottleneck,max_abs_err,max_rel_err,"
                    "mismatches,sbuf_high_water,psum_high_water");
    for (size_t e = 0; e < GS_ARRAY_LEN(csv_engines); e++)
        gs_sb_printf(&sb, ",%s_busy_ns", csv_engines[e]);
    gs_sb_puts(&sb, "\r\n");
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        gs_sb_csv(&sb, gs_json_str(j, "id"));
        csv_str(&sb, gs_json_str(j, "generation"));
        csv_str(&sb, gs_json_str(j, "kernel"));
        csv_str(&sb, gs_json_str(j, "variant"));
        csv_str(&sb, gs_json_str(j, "dtype"));
        gs_sb tmp;
        gs_sb_init(&tmp);
        const cJSON *x;
        int first = 1;
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "shape"))
        {
            gs_sb_puts(&tmp, first ? "" : "x");
            first = 0;
            gs_sb_json_num(&tmp, x->valuedouble);
        }
        csv_str(&sb, gs_sb_cstr(&tmp));
        gs_sb_reset(&tmp);
        first = 1;
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "params"))
        {
            gs_sb_printf(&tmp, "%s%s=", first ? "" : ";", x->string);
            first = 0;
            gs_sb_json_num(&tmp, x->valuedouble);
        }
        csv_str(&sb, gs_sb_cstr(&tmp));
        gs_sb_free(&tmp);
        csv_str(&sb, gs_json_str(j, "mode"));
        csv_str(&sb, gs_json_str(j, "status"));
        csv_str(&sb, gs_json_str(j, "reason"));
        static const char *const nums[] = {
            "time_ns",     "instructions",      "flops",         "hbm_bytes",   "achieved_tflops",
            "peak_tflops", "achieved_hbm_gbps", "peak_hbm_gbps", "roofline_ns", "roofline_ratio"};
        for (size_t i = 0; i < GS_ARRAY_LEN(nums); i++)
            csv_num(&sb, j, nums[i]);
        csv_str(&sb, gs_json_str(j, "bottleneck"));
        const cJSON *er = cJSON_GetObjectItemCaseSensitive(j, "error");
        csv_num(&sb, er, "max_abs");
        csv_num(&sb, er, "max_rel");
        csv_num(&sb, er, "mismatches");
        csv_num(&sb, j, "sbuf_high_water");
        csv_num(&sb, j, "psum_high_water");
        const cJSON *eng = cJSON_GetObjectItemCaseSensitive(j, "engines");
        for (size_t e = 0; e < GS_ARRAY_LEN(csv_engines); e++)
            csv_num(&sb, cJSON_GetObjectItemCaseSensitive(eng, csv_engines[e]), "busy_ns");
        gs_sb_puts(&sb, "\r\n");
    }
    gs_status st = gs_sb_write_file(&sb, path, err);
    gs_sb_free(&sb);
    return st;
}

/* JUnit: which element a status becomes (NULL: a passing testcase; "error" when unknown). */
static const char *junit_kind(const char *status)
{
    return gs_job_status_junit((gs_job_status)gs_job_status_parse(status));
}

/* How many planned jobs a results document lacks, and why they did not run: a sweep records
 * every job it ran (a crash, hang or deadlock included), so a job of the plan that is missing
 * from an uninterrupted document was in a shard that is missing from the merge. A shard's own
 * file is judged against its share of the plan (job k of the plan is in shard (k - 1) mod N + 1).
 */
static int junit_not_run(const cJSON *doc, const char **why)
{
    const double planned = gs_json_num(doc, "planned_jobs");
    if (isnan(planned)) return 0;
    const cJSON *shard = cJSON_GetObjectItemCaseSensitive(doc, "shard");
    const double idx = gs_json_num(shard, "index"), cnt = gs_json_num(shard, "count");
    double expected = planned;
    if (!isnan(idx) && !isnan(cnt) && cnt > 1)
        expected = planned >= idx ? floor((planned - idx) / cnt) + 1 : 0;
    const int have = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "jobs"));
    const int missing = expected > have ? (int)GS_MIN(expected - have, 1e7) : 0;
    *why = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "interrupted"))
               ? "not run: interrupted"
               : "not run: shard missing";
    return missing;
}

/* A job's simulated time as JUnit text ("" when it has none). */
static void junit_sim_time(gs_sb *sb, const cJSON *job)
{
    const double t = gs_json_num(job, "time_ns");
    if (!isnan(t)) gs_sb_printf(sb, "%.17g", t);
}

gs_status gs_results_write_junit(const cJSON *doc, const char *path, gs_error *err)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    gs_json_index *wall = gs_json_index_create(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "wall"), "jobs"), 1);
    if (!wall) return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
    int counts[3] = {0, 0, 0}; /* failures, errors, skipped */
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        const char *k = junit_kind(gs_json_str(j, "status"));
        if (k) counts[k[0] == 'f' ? 0 : k[0] == 'e' ? 1 : 2]++;
    }
    const char *not_run_why = "";
    const int not_run = junit_not_run(doc, &not_run_why);
    gs_sb sb;
    gs_sb_init(&sb);
    /* the strict Jenkins schema (tests/junit/jenkins-junit.xsd) has no skipped= on <testsuites>;
     * each <testsuite> says it */
    gs_sb_printf(&sb,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<testsuites name=\"gensweep\" tests=\"%d\" failures=\"%d\" errors=\"%d\">\n",
                 cJSON_GetArraySize(jobs) + not_run, counts[0] + not_run, counts[1]);
    /* one testsuite per generation, in job (id) order */
    const char *cur = NULL;
    cJSON_ArrayForEach(j, jobs)
    {
        const char *gen = gs_json_str(j, "generation");
        if (!cur || strcmp(cur, gen) != 0) {
            if (cur) gs_sb_puts(&sb, "  </testsuite>\n");
            cur = gen;
            int n = 0, c[3] = {0, 0, 0};
            const cJSON *q;
            cJSON_ArrayForEach(q, jobs)
            {
                if (strcmp(gs_json_str(q, "generation"), gen) != 0) continue;
                n++;
                const char *k = junit_kind(gs_json_str(q, "status"));
                if (k) c[k[0] == 'f' ? 0 : k[0] == 'e' ? 1 : 2]++;
            }
            gs_sb_puts(&sb, "  <testsuite name=\"gensweep.");
            gs_sb_xml(&sb, gen);
            gs_sb_printf(&sb, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n", n,
                         c[0], c[1], c[2]);
            /* the simulated time of each job as a property (the schema has properties per
             * testsuite only): "<job id>.simulated_time_ns" */
            int any = 0;
            cJSON_ArrayForEach(q, jobs)
            {
                if (strcmp(gs_json_str(q, "generation"), gen) != 0) continue;
                if (isnan(gs_json_num(q, "time_ns"))) continue;
                if (!any++) gs_sb_puts(&sb, "    <properties>\n");
                gs_sb_puts(&sb, "      <property name=\"");
                gs_sb_xml(&sb, gs_json_str(q, "id"));
                gs_sb_puts(&sb, ".simulated_time_ns\" value=\"");
                junit_sim_time(&sb, q);
                gs_sb_puts(&sb, "\"/>\n");
            }
            if (any) gs_sb_puts(&sb, "    </properties>\n");
        }
        const char *id = gs_json_str(j, "id");
        const cJSON *w = gs_json_index_find(wall, id);
        double secs = cJSON_IsNumber(w) ? w->valuedouble : (double)NAN;
        gs_sb_puts(&sb, "    <testcase classname=\"");
        gs_sb_xml(&sb, gen);
        gs_sb_putc(&sb, '.');
        gs_sb_xml(&sb, gs_json_str(j, "kernel"));
        gs_sb_puts(&sb, "\" name=\"");
        gs_sb_xml(&sb, id);
        gs_sb_printf(&sb, "\" time=\"%.3f\">\n", isnan(secs) ? 0.0 : secs);
        const char *status = gs_json_str(j, "status");
        const char *kind = junit_kind(status);
        if (kind) {
            const char *reason = gs_json_str(j, "reason");
            gs_sb_printf(&sb, "      <%s message=\"", kind);
            gs_sb_xml(&sb, status);
            if (reason[0]) {
                gs_sb_puts(&sb, ": ");
                gs_sb_xml(&sb, reason);
            }
            gs_sb_puts(&sb, "\"");
            const char *tail = gs_json_str(j, "stderr_tail");
            if (strcmp(kind, "skipped") != 0) {
                gs_sb_printf(&sb, " type=\"%s\">", status);
                gs_sb_xml(&sb, reason);
                if (tail[0]) {
                    gs_sb_puts(&sb, "\n--- stderr (tail) ---\n");
                    gs_sb_xml(&sb, tail);
                }
                gs_sb_printf(&sb, "</%s>\n", kind);
            } else {
                gs_sb_puts(&sb, "/>\n");
            }
        }
        if (!isnan(gs_json_num(j, "time_ns"))) {
            gs_sb_puts(&sb, "      <system-out>simulated time: ");
            junit_sim_time(&sb, j);
            gs_sb_puts(&sb, " ns</system-out>\n");
        }
        gs_sb_puts(&sb, "    </testcase>\n");
    }
    if (cur) gs_sb_puts(&sb, "  </testsuite>\n");
    /* the planned jobs that did not run, as failures: by id and shard when merge could name
     * them ("not_run"), else counted (their ids are in no file: a shard missing from a merge) */
    if (not_run) {
        gs_sb_printf(&sb,
                     "  <testsuite name=\"gensweep.not-run\" tests=\"%d\" failures=\"%d\" "
                     "errors=\"0\" skipped=\"0\">\n",
                     not_run, not_run);
        const cJSON *nr = cJSON_GetObjectItemCaseSensitive(doc, "not_run"), *x;
        int named = 0;
        cJSON_ArrayForEach(x, nr)
        {
            if (named == not_run) break;
            const char *id = gs_json_str(x, "id");
            const double si = gs_json_num(x, "shard"), sn = gs_json_num(x, "shards");
            const char *slash = strchr(id, '/');
            gs_sb_puts(&sb, "    <testcase classname=\"gensweep.not-run.");
            /* the generation, as the test cases that ran are classed by it */
            char gen[256];
            snprintf(gen, sizeof gen, "%.*s", slash ? (int)GS_MIN(slash - id, 255) : 255, id);
            gs_sb_xml(&sb, gen);
            gs_sb_puts(&sb, "\" name=\"");
            gs_sb_xml(&sb, id);
            /* why: absent for a shard missing from a merge; "interrupted" (the sweep or its
             * shard was stopped) or "no result" otherwise */
            const char *wy = gs_json_str(x, "why");
            gs_sb_puts(&sb, "\" time=\"0.000\">\n      <failure message=\"not run: ");
            if (!*wy) {
                gs_sb_printf(&sb, "shard %.0f/%.0f missing", si, sn);
            } else {
                gs_sb_xml(&sb, wy);
                if (sn > 1) gs_sb_printf(&sb, " (shard %.0f/%.0f)", si, sn);
            }
            gs_sb_puts(&sb, "\" type=\"not-run\">planned job ");
            gs_sb_xml(&sb, id);
            if (sn > 1) gs_sb_printf(&sb, " of shard %.0f/%.0f", si, sn);
            gs_sb_puts(&sb, " has no result</failure>\n    </testcase>\n");
            named++;
        }
        for (int k = named + 1; k <= not_run; k++)
            gs_sb_printf(&sb,
                         "    <testcase classname=\"gensweep.not-run\" name=\"not run %d of %d\" "
                         "time=\"0.000\">\n"
                         "      <failure message=\"%s\" type=\"not-run\">%d of the plan's jobs "
                         "have no result</failure>\n"
                         "    </testcase>\n",
                         k, not_run, not_run_why, not_run);
        gs_sb_puts(&sb, "  </testsuite>\n");
    }
    gs_sb_puts(&sb, "</testsuites>\n");
    gs_json_index_destroy(wall);
    gs_status st = gs_sb_write_file(&sb, path, err);
    gs_sb_free(&sb);
    return st;
}

gs_status gs_results_write_dir(const cJSON *doc, const char *dir, gs_error *err)
{
    gs_status st = gs_mkdirs(dir, err);
    if (st != GS_OK) return st;
    gs_sb path, sb;
    gs_sb_init(&path);
    gs_sb_init(&sb);
    /* out of memory is reported by the write below, naming the file */
    int bug = gs_results_emit(&sb, doc) == GS_ERR_INTERNAL;
    gs_sb_printf(&path, "%s/results.json", dir);
    if (bug)
        st = gs_error_set(err, GS_ERR_INTERNAL, dir, 0, 0, "results.json: JSON writer misused");
    else
        st = gs_sb_ok(&path) ? gs_sb_write_file(&sb, gs_sb_cstr(&path), err)
                             : gs_error_set(err, GS_ERR_NOMEM, dir, 0, 0, "out of memory");
    gs_sb_free(&sb);
    if (st == GS_OK) {
        gs_sb_reset(&path);
        gs_sb_printf(&path, "%s/results.csv", dir);
        st = gs_results_write_csv(doc, gs_sb_cstr(&path), err);
    }
    if (st == GS_OK) {
        gs_sb_reset(&path);
        gs_sb_printf(&path, "%s/junit.xml", dir);
        st = gs_results_write_junit(doc, gs_sb_cstr(&path), err);
    }
    gs_sb_free(&path);
    return st;
}

/* Compact text of a member, for "must be equal in every shard" checks. */
static char *member_text(const cJSON *doc, const char *key)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_json_emit(&sb, cJSON_GetObjectItemCaseSensitive(doc, key));
    return gs_sb_take(&sb);
}

/* Move every element of from to the end of to, O(1) each. */
static void move_all(cJSON *to, cJSON *from)
{
    while (from && from->child) {
        cJSON *it = cJSON_DetachItemViaPointer(from, from->child);
        cJSON_AddItemToArray(to, it);
    }
}

cJSON *gs_results_merge(const char *const *paths, size_t n, char **why, gs_error *err)
{
    return gs_results_merge_ex(paths, n, why, NULL, NULL, err);
}

/* Move the entries of d's "not_run" (if any) to the end of *all (created on first use). */
static int take_not_run(cJSON *d, cJSON **all)
{
    cJSON *nr = cJSON_DetachItemFromObjectCaseSensitive(d, "not_run");
    if (!nr) return 0;
    if (!*all) *all = cJSON_CreateArray();
    if (!*all) {
        cJSON_Delete(nr);
        return -1;
    }
    move_all(*all, nr);
    cJSON_Delete(nr);
    return 0;
}

cJSON *gs_results_merge_ex(const char *const *paths, size_t n, char **why, unsigned char **shards,
                           size_t *n_shards, gs_error *err)
{
    if (why) *why = NULL;
    if (shards) *shards = NULL;
    if (n_shards) *n_shards = 0;
    cJSON *nr_all = NULL;
    if (n == 0) {
        gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "nothing to merge");
        return NULL;
    }
    cJSON *out = NULL;
    int interrupted = 0;
    double count = 0, planned = NAN;
    unsigned char *seen = NULL;
    size_t n_seen = 0;
    gs_sb note;
    gs_sb_init(&note);
    static const char *const same_keys[] = {"suite", "overrides", "configs", "planned_jobs"};
    for (size_t i = 0; i < n; i++) {
        cJSON *d = gs_results_load(paths[i], err);
        if (!d) goto fail;
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(d, "shard");
        if (!cJSON_IsObject(sh)) {
            gs_error_set(err, GS_ERR_INVALID, paths[i], 0, 0, "no \"shard\" member");
            cJSON_Delete(d);
            goto fail;
        }
        /* validated: integers with 1 <= index <= count <= 1e6 */
        double idx = gs_json_num(sh, "index"), cnt = gs_json_num(sh, "count");
        int intr = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "interrupted"));
        interrupted |= intr;
        if (intr)
            gs_sb_printf(&note, "%sshard %g/%g was interrupted", note.len ? "; " : "", idx, cnt);
        if (!out) {
            count = cnt;
            n_seen = (size_t)cnt;
            seen = gs_calloc(n_seen + 1, 1);
            if (!seen) {
                gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                cJSON_Delete(d);
                goto fail;
            }
        } else if (cnt != count) {
            gs_error_set(err, GS_ERR_INVALID, paths[i], 0, 0,
                         "shard of %g, but %s is a shard of %g", cnt, paths[0], count);
            cJSON_Delete(d);
            goto fail;
        }
        if (seen[(size_t)idx]) {
            gs_error_set(err, GS_ERR_INVALID, paths[i], 0, 0, "shard %g/%g given twice", idx, cnt);
            cJSON_Delete(d);
            goto fail;
        }
        seen[(size_t)idx] = intr ? 2 : 1;
        if (take_not_run(d, &nr_all) != 0) {
            gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
            cJSON_Delete(d);
            goto fail;
        }
        /* a shard with fewer jobs than its share of the plan lost some */
        double pl = gs_json_num(d, "planned_jobs");
        if (!isnan(pl)) {
            double share = pl >= idx ? floor((pl - idx) / cnt) + 1 : 0;
            int have = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "jobs"));
            if (have < share && !intr)
                gs_sb_printf(&note, "%sshard %g/%g has %d of its %.0f planned jobs",
                             note.len ? "; " : "", idx, cnt, have, share);
            planned = pl;
        }
        if (!out) {
            out = d;
            continue;
        }
        /* one run is stamped with one commit: shards made by different builds are not one */
        const char *c0 = gs_json_str(cJSON_GetObjectItemCaseSensitive(out, "tool"), "commit");
        const char *ci = gs_json_str(cJSON_GetObjectItemCaseSensitive(d, "tool"), "commit");
        if (strcmp(c0, ci) != 0) {
            gs_error_set(err, GS_ERR_INVALID, paths[i], 0, 0,
                         "made by commit '%.100s', but %s by commit '%.100s': not shards of one "
                         "sweep",
                         *ci ? ci : "(none)", paths[0], *c0 ? c0 : "(none)");
            cJSON_Delete(d);
            goto fail;
        }
        for (size_t k = 0; k < GS_ARRAY_LEN(same_keys); k++) {
            char *a = member_text(out, same_keys[k]), *b = member_text(d, same_keys[k]);
            int differ = !a || !b || strcmp(a, b) != 0;
            gs_free(a);
            gs_free(b);
            if (differ) {
                gs_error_set(err, GS_ERR_INVALID, paths[i], 0, 0,
                             "\"%s\" differs from %s: not shards of one sweep", same_keys[k],
                             paths[0]);
                cJSON_Delete(d);
                goto fail;
            }
        }
        move_all(cJSON_GetObjectItemCaseSensitive(out, "jobs"),
                 cJSON_GetObjectItemCaseSensitive(d, "jobs"));
        cJSON *owall =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "wall"), "jobs");
        cJSON *dwall =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "wall"), "jobs");
        if (cJSON_IsObject(owall)) move_all(owall, dwall);
        cJSON_Delete(d);
    }
    /* ids are unique within each file (validated); across files, sorted neighbours */
    gs_results_sort_jobs(out);
    {
        const cJSON *j, *prev = NULL;
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(out, "jobs"))
        {
            if (prev && !strcmp(gs_json_str(prev, "id"), gs_json_str(j, "id"))) {
                gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                             "duplicate job '%.300s' in more than one shard", gs_json_str(j, "id"));
                goto fail;
            }
            prev = j;
        }
    }
    int all = 1;
    size_t n_missing = 0;
    for (size_t s = 1; s <= n_seen; s++)
        n_missing += !seen[s];
    if (n_missing) {
        all = 0;
        gs_sb_printf(&note, "%s%zu of %zu shards missing (", note.len ? "; " : "", n_missing,
                     n_seen);
        int first = 1;
        for (size_t s = 1; s <= n_seen && s < 1000; s++)
            if (!seen[s]) {
                gs_sb_printf(&note, "%s%zu/%zu", first ? "" : ", ", s, n_seen);
                first = 0;
            }
        gs_sb_puts(&note, n_missing > 0 && n_seen >= 1000 ? ", ...)" : ")");
    }
    int total = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(out, "jobs"));
    if (!isnan(planned) && total < planned) {
        all = 0;
        gs_sb_printf(&note, "%s%d of %.0f planned jobs present", note.len ? "; " : "", total,
                     planned);
    }
    if (note.len) all = 0;
    cJSON *sh = cJSON_CreateObject();
    cJSON_AddNumberToObject(sh, "index", 1);
    cJSON_AddNumberToObject(sh, "count", 1);
    cJSON_ReplaceItemInObjectCaseSensitive(out, "shard", sh);
    cJSON_ReplaceItemInObjectCaseSensitive(out, "complete", cJSON_CreateBool(all && !interrupted));
    cJSON_ReplaceItemInObjectCaseSensitive(out, "interrupted", cJSON_CreateBool(interrupted));
    /* what the merged file lacks, in the file itself (a merge run by a batch job has no one
     * reading its stderr); "wall" stays the last member */
    cJSON_DeleteItemFromObjectCaseSensitive(out, "missing");
    if (note.len || nr_all) {
        cJSON *wall = cJSON_DetachItemFromObjectCaseSensitive(out, "wall");
        if (note.len) cJSON_AddStringToObject(out, "missing", gs_sb_cstr(&note));
        if (nr_all) cJSON_AddItemToObject(out, "not_run", nr_all);
        nr_all = NULL;
        if (wall) cJSON_AddItemToObject(out, "wall", wall);
    }
    if (shards) {
        *shards = seen;
        seen = NULL;
    }
    if (n_shards) *n_shards = n_seen;
    gs_free(seen);
    if (why && note.len) *why = gs_sb_take(&note);
    gs_sb_free(&note);
    return out;
fail:
    gs_free(seen);
    gs_sb_free(&note);
    cJSON_Delete(nr_all);
    cJSON_Delete(out);
    return NULL;
}
