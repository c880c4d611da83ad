/* results.c - results documents: read, write deterministically, CSV, JUnit, merge (see
 * results.h). */
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

double gs_json_num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

const char *gs_json_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

void gs_json_emit(gs_sb *sb, const cJSON *v)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsInvalid(v)) {
        gs_sb_puts(sb, "null");
    } else if (cJSON_IsFalse(v)) {
        gs_sb_puts(sb, "false");
    } else if (cJSON_IsTrue(v)) {
        gs_sb_puts(sb, "true");
    } else if (cJSON_IsNumber(v)) {
        gs_sb_json_num(sb, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        gs_sb_json_str(sb, v->valuestring);
    } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        int obj = cJSON_IsObject(v);
        gs_sb_putc(sb, obj ? '{' : '[');
        const cJSON *c;
        int first = 1;
        cJSON_ArrayForEach(c, v)
        {
            if (!first) gs_sb_putc(sb, ',');
            first = 0;
            if (obj) {
                gs_sb_json_str(sb, c->string ? c->string : "");
                gs_sb_putc(sb, ':');
            }
            gs_json_emit(sb, c);
        }
        gs_sb_putc(sb, obj ? '}' : ']');
    } else {
        gs_sb_puts(sb, "null");
    }
}

cJSON *gs_json_read_file(const char *path, gs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: %s", strerror(errno));
        return NULL;
    }
    gs_sb sb;
    gs_sb_init(&sb);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        gs_sb_putn(&sb, buf, n);
    fclose(f);
    if (!gs_sb_ok(&sb)) {
        gs_sb_free(&sb);
        gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
        return NULL;
    }
    const char *text = gs_sb_cstr(&sb);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
    if (!j) {
        int line = 1;
        for (const char *p = text; end && p < end; p++)
            line += *p == '\n';
        gs_error_set(err, GS_ERR_PARSE, path, line, 0, "malformed JSON");
    }
    gs_sb_free(&sb);
    return j;
}

cJSON *gs_results_load(const char *path, gs_error *err)
{
    cJSON *doc = gs_json_read_file(path, err);
    if (!doc) return NULL;
    const char *schema = gs_json_str(doc, "schema");
    double ver = gs_json_num(doc, "schema_version");
    if (strcmp(schema, GS_RESULTS_SCHEMA) != 0) {
        gs_error_set(err, GS_ERR_INVALID, path, 0, 0,
                     "not a gensweep results file (\"schema\" is '%s', expected '%s')", schema,
                     GS_RESULTS_SCHEMA);
    } else if (ver != GS_RESULTS_SCHEMA_VERSION) {
        gs_error_set(err, GS_ERR_INVALID, path, 0, 0,
                     "schema_version %g is not supported by this gensweep (it reads %d)", ver,
                     GS_RESULTS_SCHEMA_VERSION);
    } else if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "jobs"))) {
        gs_error_set(err, GS_ERR_INVALID, path, 0, 0, "no \"jobs\" array");
    } else {
        return doc;
    }
    cJSON_Delete(doc);
    return NULL;
}

static int job_cmp(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(gs_json_str(x, "id"), gs_json_str(y, "id"));
}

void gs_results_sort_jobs(cJSON *doc)
{
    cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    int n = cJSON_GetArraySize(jobs);
    if (n < 2) return;
    cJSON **v = gs_calloc((size_t)n, sizeof *v);
    if (!v) return;
    for (int i = n - 1; i >= 0; i--)
        v[i] = cJSON_DetachItemFromArray(jobs, i);
    qsort(v, (size_t)n, sizeof *v, job_cmp);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(jobs, v[i]);
    gs_free(v);
}

void gs_results_emit(gs_sb *sb, const cJSON *doc)
{
    gs_sb_puts(sb, "{\n");
    const cJSON *c;
    int first = 1;
    cJSON_ArrayForEach(c, doc)
    {
        if (!first) gs_sb_puts(sb, ",\n");
        first = 0;
        gs_sb_json_str(sb, c->string ? c->string : "");
        gs_sb_puts(sb, ": ");
        /* the long arrays one element a line */
        if (cJSON_IsArray(c) && c->string &&
            (!strcmp(c->string, "jobs") || !strcmp(c->string, "configs"))) {
            gs_sb_puts(sb, "[");
            const cJSON *e;
            int f2 = 1;
            cJSON_ArrayForEach(e, c)
            {
                gs_sb_puts(sb, f2 ? "\n" : ",\n");
                f2 = 0;
                gs_json_emit(sb, e);
            }
            gs_sb_puts(sb, f2 ? "]" : "\n]");
        } else {
            gs_json_emit(sb, c);
        }
    }
    gs_sb_puts(sb, "\n}\n");
}

gs_status gs_mkdirs(const char *dir, gs_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return gs_error_set(err, GS_ERR_IO, dir, 0, 0, "path too long");
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot create directory: %s",
                                strerror(errno));
        *p = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot create directory: %s",
                            strerror(errno));
    return GS_OK;
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

/* JUnit: which element a status becomes. */
static const char *junit_kind(const char *status)
{
    if (!strcmp(status, "pass")) return NULL;
    if (!strcmp(status, "unsupported") || !strcmp(status, "does-not-fit")) return "skipped";
    if (!strcmp(status, "fail") || !strcmp(status, "deadlock")) return "failure";
    return "error"; /* crash, timeout, error, anything unknown */
}

gs_status gs_results_write_junit(const cJSON *doc, const char *path, gs_error *err)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    const cJSON *wall =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "wall"), "jobs");
    int counts[3] = {0, 0, 0}; /* failures, errors, skipped */
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        const char *k = junit_kind(gs_json_str(j, "status"));
        if (k) counts[k[0] == 'f' ? 0 : k[0] == 'e' ? 1 : 2]++;
    }
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_printf(&sb,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<testsuites name=\"gensweep\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
                 "skipped=\"%d\">\n",
                 cJSON_GetArraySize(jobs), counts[0], counts[1], counts[2]);
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
        }
        const char *id = gs_json_str(j, "id");
        double secs = gs_json_num(wall, id);
        gs_sb_puts(&sb, "    <testcase classname=\"");
        gs_sb_xml(&sb, gen);
        gs_sb_putc(&sb, '.');
        gs_sb_xml(&sb, gs_json_str(j, "kernel"));
        gs_sb_puts(&sb, "\" name=\"");
        gs_sb_xml(&sb, id);
        gs_sb_printf(&sb, "\" time=\"%.3f\"", isnan(secs) ? 0.0 : secs);
        const char *status = gs_json_str(j, "status");
        const char *kind = junit_kind(status);
        if (!kind) {
            gs_sb_puts(&sb, "/>\n");
            continue;
        }
        const char *reason = gs_json_str(j, "reason");
        gs_sb_printf(&sb, ">\n      <%s message=\"", kind);
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
        gs_sb_puts(&sb, "    </testcase>\n");
    }
    if (cur) gs_sb_puts(&sb, "  </testsuite>\n");
    gs_sb_puts(&sb, "</testsuites>\n");
    gs_status st = gs_sb_write_file(&sb, path, err);
    gs_sb_free(&sb);
    return st;
}

gs_status gs_results_write_dir(const cJSON *doc, const char *dir, gs_error *err)
{
    gs_status st = gs_mkdirs(dir, err);
    if (st != GS_OK) return st;
    char path[4096];
    gs_sb sb;
    gs_sb_init(&sb);
    gs_results_emit(&sb, doc);
    snprintf(path, sizeof path, "%s/results.json", dir);
    st = gs_sb_write_file(&sb, path, err);
    gs_sb_free(&sb);
    if (st != GS_OK) return st;
    snprintf(path, sizeof path, "%s/results.csv", dir);
    st = gs_results_write_csv(doc, path, err);
    if (st != GS_OK) return st;
    snprintf(path, sizeof path, "%s/junit.xml", dir);
    return gs_results_write_junit(doc, path, err);
}

/* Compact text of a member, for "must be equal in every shard" checks. */
static char *member_text(const cJSON *doc, const char *key)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_json_emit(&sb, cJSON_GetObjectItemCaseSensitive(doc, key));
    return gs_sb_take(&sb);
}

cJSON *gs_results_merge(const char *const *paths, size_t n, gs_error *err)
{
    if (n == 0) {
        gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "nothing to merge");
        return NULL;
    }
    cJSON *out = NULL;
    int interrupted = 0;
    double count = 0;
    unsigned char *seen = NULL;
    size_t n_seen = 0;
    static const char *const same_keys[] = {"suite", "overrides", "configs", "planned_jobs"};
    for (size_t i = 0; i < n; i++) {
        cJSON *d = gs_results_load(paths[i], err);
        if (!d) goto fail;
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(d, "shard");
        double idx = gs_json_num(sh, "index"), cnt = gs_json_num(sh, "count");
        if (!(cnt >= 1 && idx >= 1 && idx <= cnt && cnt < 100000)) {
            gs_error_set(err, GS_ERR_INVALID, paths[i], 0, 0, "bad \"shard\" member");
            cJSON_Delete(d);
            goto fail;
        }
        interrupted |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "interrupted"));
        if (!out) {
            out = d;
            count = cnt;
            n_seen = (size_t)cnt;
            seen = gs_calloc(n_seen + 1, 1);
            if (!seen) {
                gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                goto fail;
            }
            seen[(size_t)idx] = 1;
            continue;
        }
        if (cnt != count) {
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
        seen[(size_t)idx] = 1;
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
        cJSON *jobs = cJSON_GetObjectItemCaseSensitive(d, "jobs");
        cJSON *ojobs = cJSON_GetObjectItemCaseSensitive(out, "jobs");
        cJSON *owall =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "wall"), "jobs");
        const cJSON *dwall =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "wall"), "jobs");
        while (cJSON_GetArraySize(jobs) > 0) {
            cJSON *j = cJSON_DetachItemFromArray(jobs, 0);
            const char *id = gs_json_str(j, "id");
            const cJSON *o;
            int dup = 0;
            cJSON_ArrayForEach(o, ojobs) dup |= !strcmp(gs_json_str(o, "id"), id);
            if (dup) {
                gs_error_set(err, GS_ERR_INVALID, paths[i], 0, 0, "duplicate job '%s'", id);
                cJSON_Delete(j);
                cJSON_Delete(d);
                goto fail;
            }
            cJSON_AddItemToArray(ojobs, j);
            double w = gs_json_num(dwall, id);
            if (owall && !isnan(w)) cJSON_AddNumberToObject(owall, id, w);
        }
        cJSON_Delete(d);
    }
    /* duplicates inside the first file too */
    gs_results_sort_jobs(out);
    {
        const cJSON *j, *prev = NULL;
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(out, "jobs"))
        {
            if (prev && !strcmp(gs_json_str(prev, "id"), gs_json_str(j, "id"))) {
                gs_error_set(err, GS_ERR_INVALID, paths[0], 0, 0, "duplicate job '%s'",
                             gs_json_str(j, "id"));
                goto fail;
            }
            prev = j;
        }
    }
    int all = 1;
    for (size_t s = 1; s <= n_seen; s++)
        all &= seen[s];
    cJSON *sh = cJSON_CreateObject();
    cJSON_AddNumberToObject(sh, "index", 1);
    cJSON_AddNumberToObject(sh, "count", 1);
    cJSON_ReplaceItemInObjectCaseSensitive(out, "shard", sh);
    cJSON_ReplaceItemInObjectCaseSensitive(out, "complete", cJSON_CreateBool(all && !interrupted));
    cJSON_ReplaceItemInObjectCaseSensitive(out, "interrupted", cJSON_CreateBool(interrupted));
    gs_free(seen);
    return out;
fail:
    gs_free(seen);
    cJSON_Delete(out);
    return NULL;
}
