/* results_schema.c - reading and validating results/baseline files, id index (see
 * results_schema.h). */
#include "results_schema.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs/strbuf.h"
#include "job_status.h"

cJSON *gs_json_read_file(const char *path, gs_error *err)
{
    /* O_NONBLOCK: opening a FIFO with no writer must not block before fstat can refuse it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: not a regular file (%s)",
                     S_ISDIR(st.st_mode)                          ? "a directory"
                     : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                  : "a special file");
        close(fd);
        return NULL;
    }
    if ((double)st.st_size > GS_JSON_MAX_BYTES) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0,
                     "file of %.0f bytes is larger than the %.0f MiB limit", (double)st.st_size,
                     GS_JSON_MAX_BYTES / (1024.0 * 1024));
        close(fd);
        return NULL;
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    gs_sb sb;
    gs_sb_init(&sb);
    char buf[65536];
    int rd_err = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rd_err = errno;
            break;
        }
        if (n == 0) break;
        gs_sb_putn(&sb, buf, (size_t)n);
        /* the file may grow while it is read */
        if ((double)sb.len > GS_JSON_MAX_BYTES) {
            rd_err = EFBIG;
            break;
        }
    }
    close(fd);
    if (rd_err) {
        gs_sb_free(&sb);
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: %s", strerror(rd_err));
        return NULL;
    }
    if (!gs_sb_ok(&sb)) {
        gs_sb_free(&sb);
        gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
        return NULL;
    }
    cJSON *j = gs_json_parse_text(gs_sb_cstr(&sb), sb.len, path, err);
    gs_sb_free(&sb);
    return j;
}

cJSON *gs_json_parse_text(const char *text, size_t len, const char *name, gs_error *err)
{
    size_t blank = 0;
    while (blank < len && (text[blank] == ' ' || text[blank] == '\t' || text[blank] == '\n' ||
                           text[blank] == '\r'))
        blank++;
    if (blank == len) {
        gs_error_set(err, GS_ERR_PARSE, name, 0, 0, "empty file, not JSON");
        return NULL;
    }
    if (memchr(text, 0, len)) {
        gs_error_set(err, GS_ERR_PARSE, name, 0, 0, "malformed JSON: contains a NUL byte");
        return NULL;
    }
    const char *end = NULL;
    /* len + 1: cJSON's "nothing after the value" check looks for the terminator */
    cJSON *j = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!j) {
        int line = 1;
        for (const char *p = text; end && p < end && p < text + len; p++)
            line += *p == '\n';
        gs_error_set(err, GS_ERR_PARSE, name, line, 0, "malformed JSON");
    }
    return j;
}

/* ---- index ---- */

typedef struct ix_ent {
    const char *key;
    const cJSON *item;
} ix_ent;

struct gs_json_index {
    ix_ent *v;
    size_t n;
};

static int ent_cmp(const void *a, const void *b)
{
    const ix_ent *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    /* equal keys keep document order (deterministic duplicate reports) */
    return x->item < y->item ? -1 : x->item > y->item;
}

gs_json_index *gs_json_index_create(const cJSON *container, int by_member_name)
{
    gs_json_index *ix = gs_calloc(1, sizeof *ix);
    if (!ix) return NULL;
    size_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, container) n++;
    ix->v = gs_calloc(n ? n : 1, sizeof *ix->v);
    if (!ix->v) {
        gs_free(ix);
        return NULL;
    }
    cJSON_ArrayForEach(c, container)
    {
        const char *k = NULL;
        if (by_member_name) {
            k = c->string;
        } else {
            const cJSON *id = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, "id") : NULL;
            k = id && cJSON_IsString(id) ? id->valuestring : NULL;
        }
        if (!k) continue;
        ix->v[ix->n].key = k;
        ix->v[ix->n].item = c;
        ix->n++;
    }
    if (ix->n > 1) qsort(ix->v, ix->n, sizeof *ix->v, ent_cmp);
    return ix;
}

void gs_json_index_destroy(gs_json_index *ix)
{
    if (!ix) return;
    gs_free(ix->v);
    gs_free(ix);
}

/* first entry whose key is >= key (compared over the first n bytes when n != SIZE_MAX) */
static size_t lower_bound(const gs_json_index *ix, const char *key, size_t n)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = n == SIZE_MAX ? strcmp(ix->v[mid].key, key) : strncmp(ix->v[mid].key, key, n);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const cJSON *gs_json_index_find(const gs_json_index *ix, const char *key)
{
    if (!ix || !key) return NULL;
    size_t i = lower_bound(ix, key, SIZE_MAX);
    return i < ix->n && !strcmp(ix->v[i].key, key) ? ix->v[i].item : NULL;
}

int gs_json_index_has_prefix(const gs_json_index *ix, const char *prefix, size_t n)
{
    if (!ix || !prefix) return 0;
    size_t i = lower_bound(ix, prefix, n);
    return i < ix->n && !strncmp(ix->v[i].key, prefix, n);
}

const char *gs_json_index_duplicate(const gs_json_index *ix)
{
    for (size_t i = 1; ix && i < ix->n; i++)
        if (!strcmp(ix->v[i - 1].key, ix->v[i].key)) return ix->v[i].key;
    return NULL;
}

/* ---- validation ---- */

/* "null", "a number", ... for messages. */
static const char *json_type(const cJSON *v)
{
    return cJSON_IsNull(v)     ? "null"
           : cJSON_IsBool(v)   ? "a boolean"
           : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsString(v) ? "a string"
           : cJSON_IsArray(v)  ? "an array"
                               : "not a JSON value";
}

static int num_or_null(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return !v || cJSON_IsNull(v) || cJSON_IsNumber(v);
}

static int integral(double v, double lo, double hi)
{
    return v >= lo && v <= hi && v == floor(v);
}

/* The envelope both file kinds share: schema name and version, a jobs array. */
static gs_status check_envelope(const cJSON *doc, const char *name, const char *schema, int version,
                                gs_error *err)
{
    if (!cJSON_IsObject(doc))
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "not a JSON object");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "schema_version");
    if (!cJSON_IsString(s) || strcmp(s->valuestring, schema) != 0)
        return gs_error_set(
            err, GS_ERR_INVALID, name, 0, 0, "not a %s file (\"schema\" must be \"%s\")",
            !strcmp(schema, GS_RESULTS_SCHEMA) ? "gensweep results" : "gensweep baseline", schema);
    if (!cJSON_IsNumber(v))
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                            "\"schema_version\" is missing or not a number");
    if (v->valuedouble != version)
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                            "schema_version %g is not supported by this gensweep (it reads %d)",
                            v->valuedouble, version);
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "jobs")))
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "no \"jobs\" array");
    return GS_OK;
}

/* Every job: an object, a non-empty string id, a known status, the listed members numbers or
 * null; then no id twice. */
static gs_status check_jobs(const cJSON *jobs, const char *name, const char *const *nums,
                            size_t n_nums, int baseline, gs_error *err)
{
    int i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        if (!cJSON_IsObject(j))
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "jobs[%d] is %s, not an object", i,
                                json_type(j));
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        if (!cJSON_IsString(id) || !id->valuestring[0])
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "jobs[%d]: \"id\" is missing or not a non-empty string", i);
        const char *idv = id->valuestring;
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
        if (!cJSON_IsString(st))
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "jobs[%d] (%.200s): \"status\" is missing or not a string", i, idv);
        if (gs_job_status_parse(st->valuestring) < 0)
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "jobs[%d] (%.200s): unknown status '%.100s'", i, idv,
                                st->valuestring);
        for (size_t k = 0; k < n_nums; k++)
            if (!num_or_null(j, nums[k]))
                return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                    "jobs[%d] (%.200s): \"%s\" must be a number or null", i, idv,
                                    nums[k]);
        /* a simulated time is positive: a 0 or negative one would read as a huge speed-up */
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "time_ns");
        if (cJSON_IsNumber(t) && !(isfinite(t->valuedouble) && t->valuedouble > 0))
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "jobs[%d] (%.200s): \"time_ns\" must be a positive number of "
                                "nanoseconds or null, not %g",
                                i, idv, t->valuedouble);
        if (!baseline) {
            static const char *const strs[] = {"generation",  "kernel",     "variant",
                                               "dtype",       "mode",       "reason",
                                               "stderr_tail", "trace_error"};
            for (size_t k = 0; k < GS_ARRAY_LEN(strs); k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, strs[k]);
                if (v && !cJSON_IsString(v) && !cJSON_IsNull(v))
                    return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                        "jobs[%d] (%.200s): \"%s\" must be a string", i, idv,
                                        strs[k]);
            }
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
            static const char *const enums[] = {"max_abs", "max_rel", "tol_abs", "tol_rel",
                                                "mismatches"};
            if (e && !cJSON_IsNull(e) && !cJSON_IsObject(e))
                return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                    "jobs[%d] (%.200s): \"error\" must be an object or null", i,
                                    idv);
            for (size_t k = 0; cJSON_IsObject(e) && k < GS_ARRAY_LEN(enums); k++)
                if (!num_or_null(e, enums[k]))
                    return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                        "jobs[%d] (%.200s): \"error.%s\" must be a number or null",
                                        i, idv, enums[k]);
            const cJSON *x, *sh = cJSON_GetObjectItemCaseSensitive(j, "shape");
            if (sh && !cJSON_IsArray(sh))
                return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                    "jobs[%d] (%.200s): \"shape\" must be an array", i, idv);
            cJSON_ArrayForEach(x, sh) if (!cJSON_IsNumber(x)) return gs_error_set(
                err, GS_ERR_INVALID, name, 0, 0, "jobs[%d] (%.200s): \"shape\" must hold numbers",
                i, idv);
            const cJSON *pm = cJSON_GetObjectItemCaseSensitive(j, "params");
            if (pm && !cJSON_IsObject(pm))
                return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                    "jobs[%d] (%.200s): \"params\" must be an object", i, idv);
            cJSON_ArrayForEach(x, pm) if (!cJSON_IsNumber(x)) return gs_error_set(
                err, GS_ERR_INVALID, name, 0, 0,
                "jobs[%d] (%.200s): \"params\" values must be numbers", i, idv);
        }
        i++;
    }
    gs_json_index *ix = gs_json_index_create(jobs, 0);
    if (!ix) return gs_error_set(err, GS_ERR_NOMEM, name, 0, 0, "out of memory");
    const char *dup = gs_json_index_duplicate(ix);
    gs_status st = GS_OK;
    if (dup) st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "duplicate job id '%.300s'", dup);
    gs_json_index_destroy(ix);
    return st;
}

gs_status gs_results_validate(const cJSON *doc, const char *name, gs_error *err)
{
    gs_status st = check_envelope(doc, name, GS_RESULTS_SCHEMA, GS_RESULTS_SCHEMA_VERSION, err);
    if (st != GS_OK) return st;
    static const struct {
        const char *key;
        int type; /* cJSON type bits accepted besides null */
    } top[] = {{"suite", cJSON_String},
               {"complete", cJSON_True | cJSON_False},
               {"interrupted", cJSON_True | cJSON_False},
               {"missing", cJSON_String},
               {"not_run", cJSON_Array},
               {"shard", cJSON_Object},
               {"overrides", cJSON_Array},
               {"planned_jobs", cJSON_Number},
               {"configs", cJSON_Array},
               {"wall", cJSON_Object},
               {"tool", cJSON_Object}};
    for (size_t k = 0; k < GS_ARRAY_LEN(top); k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, top[k].key);
        if (v && !cJSON_IsNull(v) && !(v->type & top[k].type))
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "\"%s\" has the wrong type",
                                top[k].key);
    }
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(doc, "shard");
    if (cJSON_IsObject(sh)) {
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(sh, "index");
        const cJSON *cn = cJSON_GetObjectItemCaseSensitive(sh, "count");
        if (!cJSON_IsNumber(ix) || !cJSON_IsNumber(cn) || !integral(cn->valuedouble, 1, 1e6) ||
            !integral(ix->valuedouble, 1, cn->valuedouble))
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "\"shard\" must be {\"index\": I, \"count\": N} with 1 <= I <= N "
                                "<= 1000000");
    }
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(doc, "planned_jobs");
    if (cJSON_IsNumber(pl) && !integral(pl->valuedouble, 0, 1e12))
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                            "\"planned_jobs\" must be a non-negative integer");
    const cJSON *x;
    /* merge: the planned jobs no file holds, by id and the shard that was to run them */
    int nr = 0;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(doc, "not_run"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "id");
        const cJSON *si = cJSON_GetObjectItemCaseSensitive(x, "shard");
        const cJSON *sn = cJSON_GetObjectItemCaseSensitive(x, "shards");
        const cJSON *wy = cJSON_GetObjectItemCaseSensitive(x, "why");
        if (!cJSON_IsObject(x) || !cJSON_IsString(id) || !id->valuestring[0] ||
            !cJSON_IsNumber(si) || !cJSON_IsNumber(sn) || !integral(sn->valuedouble, 1, 1e6) ||
            !integral(si->valuedouble, 1, sn->valuedouble) || (wy && !cJSON_IsString(wy)))
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "not_run[%d] must be {\"id\": \"...\", \"shard\": I, "
                                "\"shards\": N[, \"why\": \"...\"]} with 1 <= I <= N <= "
                                "1000000",
                                nr);
        nr++;
    }
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(doc, "overrides")) if (
        !cJSON_IsString(x)) return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                                "\"overrides\" must hold strings");
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(doc, "configs")) if (
        !cJSON_IsObject(x)) return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                                "\"configs\" must hold objects");
    const cJSON *wj =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "wall"), "jobs");
    if (wj && !cJSON_IsNull(wj) && !cJSON_IsObject(wj))
        return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "\"wall.jobs\" must be an object");
    static const char *const nums[] = {
        "time_ns",           "launch_ns",       "time_with_launch_ns",
        "instructions",      "cores_used",      "flops",
        "tensor_flops",      "hbm_bytes",       "dma_bytes",
        "arith_intensity",   "achieved_tflops", "peak_tflops",
        "achieved_hbm_gbps", "peak_hbm_gbps",   "compute_bound_ns",
        "memory_bound_ns",   "roofline_ns",     "roofline_ratio",
        "bound_ns",          "bound_ratio",     "sbuf_high_water",
        "psum_high_water",   "busy_share"};
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    st = check_jobs(jobs, name, nums, GS_ARRAY_LEN(nums), 0, err);
    if (st != GS_OK) return st;
    /* a shard holds the jobs whose plan index is index-1 modulo count */
    if (cJSON_IsNumber(pl)) {
        double planned = pl->valuedouble, most = planned;
        if (cJSON_IsObject(sh)) {
            double i = cJSON_GetObjectItemCaseSensitive(sh, "index")->valuedouble;
            double n = cJSON_GetObjectItemCaseSensitive(sh, "count")->valuedouble;
            most = planned >= i ? floor((planned - i) / n) + 1 : 0;
        }
        int have = cJSON_GetArraySize(jobs);
        if (have > most)
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "%d jobs, but the plan has %.0f for this shard", have, most);
    }
    return GS_OK;
}

gs_status gs_baseline_validate(const cJSON *doc, const char *name, gs_error *err)
{
    gs_status st = check_envelope(doc, name, GS_BASELINE_SCHEMA, GS_BASELINE_SCHEMA_VERSION, err);
    if (st != GS_OK) return st;
    static const char *const strs[] = {"generation", "suite"};
    for (size_t k = 0; k < GS_ARRAY_LEN(strs); k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, strs[k]);
        if (v && !cJSON_IsString(v))
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "\"%s\" must be a string",
                                strs[k]);
    }
    static const char *const nums[] = {"time_ns", "max_abs", "tol_abs"};
    return check_jobs(cJSON_GetObjectItemCaseSensitive(doc, "jobs"), name, nums, GS_ARRAY_LEN(nums),
                      1, err);
}

int gs_results_safe_name(const char *s)
{
    if (!s || !s[0] || s[0] == '.') return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return 0;
    return 1;
}
