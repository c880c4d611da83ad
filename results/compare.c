/* compare.c - regressions between result sets, baselines (see compare.h). */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gs/jsonw.h"
#include "job_status.h"

static const char *const verdict_names[] = {
#define GS_VERDICT_NAME(e, n) n,
    GS_VERDICT_TABLE(GS_VERDICT_NAME)
#undef GS_VERDICT_NAME
};

const char *gs_verdict_name(gs_verdict v)
{
    return (int)v >= 0 && v < GS_VERDICT_COUNT ? verdict_names[v] : "?";
}

int gs_verdict_is_regression(gs_verdict v)
{
    return v == GS_VERDICT_REGRESSION || v == GS_VERDICT_MISSING;
}

/* Severity of a status name; one the table does not know counts as a failure. */
static int severity(const char *s)
{
    return gs_job_status_severity((gs_job_status)gs_job_status_parse(s));
}

/* max abs error of a job in either form (results: error.max_abs; baseline: max_abs). */
static double job_max_abs(const cJSON *j)
{
    double v = gs_json_num(j, "max_abs");
    if (isnan(v)) v = gs_json_num(cJSON_GetObjectItemCaseSensitive(j, "error"), "max_abs");
    return v;
}

/* absolute tolerance of a job in either form (results: error.tol_abs; baseline: tol_abs) */
static double job_tol_abs(const cJSON *j)
{
    double v = gs_json_num(j, "tol_abs");
    if (isnan(v)) v = gs_json_num(cJSON_GetObjectItemCaseSensitive(j, "error"), "tol_abs");
    return v;
}

int gs_compare_covers(const gs_json_index *cur, const char *id)
{
    const char *s1 = id ? strchr(id, '/') : NULL;
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s2) return 0;
    return gs_json_index_has_prefix(cur, id, (size_t)(s2 - id) + 1);
}

/* Why a job with the same status on both sides cannot be compared (compare.h), or NULL. A
 * time is judged only between two positive times; an error only between two recorded ones. */
static const char *uncomparable(const gs_job_diff *d)
{
    int hb = !isnan(d->base_ns), hc = !isnan(d->cur_ns);
    if (hb && !(isfinite(d->base_ns) && d->base_ns > 0))
        return "the baseline's time_ns is not a positive number";
    if (hc && !(isfinite(d->cur_ns) && d->cur_ns > 0))
        return "the new time_ns is not a positive number";
    if (hb && !hc) return "no time in the new results (time_ns null)";
    if (!hb && hc) return "no time in the baseline (time_ns null)";
    if (!hb && !hc && gs_job_status_parse(d->cur_status) == (int)GS_JOB_PASS)
        return "a pass without a time on either side (time_ns null)";
    int eb = !isnan(d->base_err), ec = !isnan(d->cur_err);
    if (eb && !ec) return "no check record in the new results (error.max_abs null)";
    if (!eb && ec) return "no check record in the baseline (max_abs null)";
    return NULL;
}

gs_verdict gs_compare_job(const cJSON *base, const cJSON *cur, int cur_ran_kernel, double threshold,
                          gs_job_diff *out)
{
    gs_job_diff d;
    memset(&d, 0, sizeof d);
    d.id = gs_json_str(base ? base : cur, "id");
    d.base_status = gs_json_str(base, "status");
    d.cur_status = gs_json_str(cur, "status");
    d.base_ns = gs_json_num(base, "time_ns");
    d.cur_ns = gs_json_num(cur, "time_ns");
    d.base_err = job_max_abs(base);
    d.cur_err = job_max_abs(cur);
    d.time_rel = d.err_tol = NAN;
    if (!isnan(d.base_ns) && !isnan(d.cur_ns) && d.base_ns > 0)
        d.time_rel = d.cur_ns / d.base_ns - 1.0;
    if (!base || !cur) {
        d.verdict = !base            ? GS_VERDICT_NEW
                    : cur_ran_kernel ? GS_VERDICT_MISSING
                                     : GS_VERDICT_NOT_RUN;
        if (out) *out = d;
        return d.verdict;
    }
    int sb = severity(d.base_status), sc = severity(d.cur_status);
    d.status_change = sc > sb ? 1 : sc < sb ? -1 : 0;
    if (d.status_change) {
        /* a status that got worse or better is the finding; its time or error say nothing */
        d.verdict = d.status_change > 0 ? GS_VERDICT_REGRESSION : GS_VERDICT_IMPROVEMENT;
        if (out) *out = d;
        return d.verdict;
    }
    d.status_renamed = strcmp(d.base_status, d.cur_status) != 0;
    if (!d.status_renamed) d.uncomparable = uncomparable(&d);
    if (d.uncomparable) {
        d.verdict = GS_VERDICT_REGRESSION;
        if (out) *out = d;
        return d.verdict;
    }
    if (!isnan(d.time_rel))
        d.time_change = d.time_rel > threshold ? 1 : d.time_rel < -threshold ? -1 : 0;
    /* Simulated time is exact (the model is deterministic), but the reference results come from
     * the host's BLAS, whose kernels differ between CPUs: an error is judged against the job's
     * tolerance, never by exact equality. */
    if (!isnan(d.base_err) && !isnan(d.cur_err) && d.cur_err > d.base_err) {
        double tol = job_tol_abs(cur);
        if (!(tol > 0)) tol = job_tol_abs(base);
        double allowed = tol > 0 ? GS_COMPARE_ERR_TOL_FRACTION * tol
                                 : GS_COMPARE_ERR_REL_FALLBACK * fabs(d.base_err);
        if (tol > 0) d.err_tol = tol;
        d.err_regressed = d.cur_err - d.base_err > allowed;
    }
    d.verdict = d.time_change > 0 || d.err_regressed ? GS_VERDICT_REGRESSION
                : d.time_change < 0                  ? GS_VERDICT_IMPROVEMENT
                                                     : GS_VERDICT_SAME;
    if (out) *out = d;
    return d.verdict;
}

/* One finding: a line printed with every control character escaped (ids and statuses come
 * from files). */
static void report(FILE *out, const char *fmt, ...) GS_PRINTF(2, 3);
static void report(FILE *out, const char *fmt, ...)
{
    if (!out) return;
    gs_sb raw, esc;
    gs_sb_init(&raw);
    gs_sb_init(&esc);
    va_list ap;
    va_start(ap, fmt);
    gs_sb_vprintf(&raw, fmt, ap);
    va_end(ap);
    gs_sb_term(&esc, gs_sb_cstr(&raw));
    fprintf(out, "%s\n", gs_sb_cstr(&esc));
    gs_sb_free(&raw);
    gs_sb_free(&esc);
}

void gs_compare_print(FILE *out, const gs_job_diff *d)
{
    if (!out || !d) return;
    const char *id = d->id;
    switch (d->verdict) {
    case GS_VERDICT_MISSING:
        report(out, "REGRESSION  %s: missing from the new results", id);
        return;
    case GS_VERDICT_NEW:
        report(out, "new         %s: %s (not in the baseline)", id, d->cur_status);
        return;
    case GS_VERDICT_NOT_RUN:
        return;
    default:
        break;
    }
    if (d->status_change) {
        report(out, "%s %s: status %s -> %s", d->status_change > 0 ? "REGRESSION " : "improved   ",
               id, d->base_status, d->cur_status);
        return;
    }
    if (d->uncomparable) {
        report(out, "REGRESSION  %s: cannot compare: %s", id, d->uncomparable);
        return;
    }
    if (d->status_renamed)
        report(out, "changed     %s: status %s -> %s", id, d->base_status, d->cur_status);
    if (d->time_change)
        report(out, "%s %s: time %.6g ns -> %.6g ns (%+.2f%%)",
               d->time_change > 0 ? "REGRESSION " : "improved   ", id, d->base_ns, d->cur_ns,
               100.0 * d->time_rel);
    if (d->err_regressed) {
        if (d->err_tol > 0)
            report(out,
                   "REGRESSION  %s: max abs error %.6g -> %.6g (grew by %.3g%% of the "
                   "tolerance %.6g)",
                   id, d->base_err, d->cur_err, 100.0 * (d->cur_err - d->base_err) / d->err_tol,
                   d->err_tol);
        else
            report(out, "REGRESSION  %s: max abs error %.6g -> %.6g", id, d->base_err, d->cur_err);
    }
}

int gs_compare_failed(const gs_compare_summary *sum)
{
    return sum->regressions > 0 || sum->incomplete || sum->uncompared > 0 || sum->no_baseline > 0;
}

void gs_compare_summary_line(gs_sb *sb, const gs_compare_summary *sum)
{
    gs_sb_printf(sb, "%d compared, %d regressions, %d improvements, %d changed, %d new, %d missing",
                 sum->compared, sum->regressions, sum->improvements, sum->changed, sum->added,
                 sum->missing);
    if (sum->uncompared) gs_sb_printf(sb, ", %d cannot be compared", sum->uncompared);
    if (sum->no_baseline)
        gs_sb_printf(sb, ", %d generation%s without a baseline", sum->no_baseline,
                     sum->no_baseline == 1 ? "" : "s");
    if (sum->incomplete) gs_sb_puts(sb, ", incomplete");
}

/* Each generation of cur's ids (the first '/'-separated field) of which base (bix) holds no
 * job: one line each, naming how many new jobs it has; returns how many. */
static int generations_without_baseline(const gs_json_index *bix, const cJSON *cur, FILE *out)
{
    int n = 0;
    const char *prev = "";
    size_t prev_len = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cur, "jobs"))
    {
        const char *id = gs_json_str(c, "id");
        const char *slash = strchr(id, '/');
        if (!slash) continue;
        size_t len = (size_t)(slash - id) + 1;
        /* results are sorted by id: a run of one generation is looked at once */
        int same = len == prev_len && !strncmp(id, prev, len);
        prev = id;
        prev_len = len;
        if (same || gs_json_index_has_prefix(bix, id, len)) continue;
        /* the generation's first job reports it, with the count of its jobs */
        const cJSON *first = NULL;
        int jobs = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(cur, "jobs"))
        {
            if (strncmp(gs_json_str(p, "id"), id, len) != 0) continue;
            if (!first) first = p;
            jobs++;
        }
        if (first != c) continue;
        n++;
        report(out,
               "NO BASELINE generation %.*s: none of its %d jobs is in the baseline (a baseline "
               "file missing?); nothing of it can be compared",
               (int)(len - 1), id, jobs);
    }
    return n;
}

char *gs_compare_gaps(const cJSON *cur)
{
    if (strcmp(gs_json_str(cur, "schema"), GS_RESULTS_SCHEMA) != 0) return NULL;
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(cur, "jobs");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(cur, "shard");
    double idx = 1, cnt = 1;
    if (cJSON_IsObject(sh)) {
        idx = gs_json_num(sh, "index");
        cnt = gs_json_num(sh, "count");
        if (isnan(idx) || isnan(cnt)) idx = cnt = 1;
    }
    int sharded = cnt > 1;
    gs_sb note;
    gs_sb_init(&note);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cur, "interrupted")))
        gs_sb_puts(&note, "the sweep was interrupted");
    else if (!sharded && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cur, "complete")))
        gs_sb_puts(&note, "the file is marked \"complete\": false");
    /* validated: planned_jobs is a non-negative integer, the shard 1 <= index <= count */
    double pl = gs_json_num(cur, "planned_jobs");
    int have = cJSON_GetArraySize(jobs);
    if (!isnan(pl)) {
        double share = pl >= idx ? floor((pl - idx) / cnt) + 1 : 0;
        if (have < share)
            gs_sb_printf(&note, "%s%d of %.0f planned jobs present", note.len ? "; " : "", have,
                         share);
    }
    if (!sharded) {
        gs_json_index *ix = gs_json_index_create(jobs, 0);
        int listed = 0, more = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cur, "configs"))
        {
            const char *name = gs_json_str(c, "name");
            if (!*name) continue;
            gs_sb pre;
            gs_sb_init(&pre);
            gs_sb_printf(&pre, "%s/", name);
            int ran =
                ix && gs_sb_ok(&pre) ? gs_json_index_has_prefix(ix, gs_sb_cstr(&pre), pre.len) : 1;
            gs_sb_free(&pre);
            if (ran) continue;
            if (listed == 8) {
                more++;
                continue;
            }
            gs_sb_printf(&note, "%sgeneration %.100s (in \"configs\") has no jobs",
                         note.len ? "; " : "", name);
            listed++;
        }
        if (more) gs_sb_printf(&note, " (and %d more)", more);
        gs_json_index_destroy(ix);
    }
    if (!note.len) {
        gs_sb_free(&note);
        return NULL;
    }
    char *why = gs_sb_ok(&note) ? gs_sb_take(&note) : NULL;
    gs_sb_free(&note);
    /* out of memory: still a gap, said without the detail */
    return why ? why : gs_strdup("the new results are incomplete");
}

void gs_compare_docs(const cJSON *base, const cJSON *cur, double threshold, FILE *out,
                     gs_compare_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    gs_json_index *bix = gs_json_index_create(cJSON_GetObjectItemCaseSensitive(base, "jobs"), 0);
    gs_json_index *cix = gs_json_index_create(cJSON_GetObjectItemCaseSensitive(cur, "jobs"), 0);
    if (!bix || !cix) {
        /* out of memory: make the gate fail rather than pass */
        sum->regressions++;
        report(out, "REGRESSION  (out of memory comparing the results)");
        gs_json_index_destroy(bix);
        gs_json_index_destroy(cix);
        return;
    }
    gs_job_diff d;
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(base, "jobs"))
    {
        const char *id = gs_json_str(b, "id");
        const cJSON *c = gs_json_index_find(cix, id);
        gs_verdict v = gs_compare_job(b, c, !c && gs_compare_covers(cix, id), threshold, &d);
        gs_compare_print(out, &d);
        sum->uncompared += d.uncomparable != NULL;
        sum->regressions += gs_verdict_is_regression(v) && !d.uncomparable;
        sum->missing += v == GS_VERDICT_MISSING;
        if (!c) continue;
        sum->compared++;
        sum->improvements += v == GS_VERDICT_IMPROVEMENT;
        sum->changed += d.status_renamed;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cur, "jobs"))
    {
        if (gs_json_index_find(bix, gs_json_str(c, "id"))) continue;
        sum->added++;
        gs_compare_job(NULL, c, 1, threshold, &d);
        gs_compare_print(out, &d);
    }
    sum->no_baseline = generations_without_baseline(bix, cur, out);
    char *gaps = gs_compare_gaps(cur);
    if (gaps) {
        sum->incomplete = 1;
        report(out, "INCOMPLETE  the new results did not run everything: %s", gaps);
        gs_free(gaps);
    }
    gs_json_index_destroy(bix);
    gs_json_index_destroy(cix);
}

static cJSON *load_one(const char *path, gs_error *err)
{
    cJSON *d = gs_json_read_file(path, err);
    if (!d) return NULL;
    const char *schema = gs_json_str(d, "schema");
    gs_status st;
    if (!strcmp(schema, GS_RESULTS_SCHEMA))
        st = gs_results_validate(d, path, err);
    else if (!strcmp(schema, GS_BASELINE_SCHEMA))
        st = gs_baseline_validate(d, path, err);
    else
        st = gs_error_set(err, GS_ERR_INVALID, path, 0, 0,
                          "not a results file (schema %s) or a baseline (schema %s)",
                          GS_RESULTS_SCHEMA, GS_BASELINE_SCHEMA);
    if (st == GS_OK) return d;
    cJSON_Delete(d);
    return NULL;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

cJSON *gs_compare_load(const char *path, gs_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: %s", strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(sb.st_mode)) return load_one(path, err);
    DIR *d = opendir(path);
    if (!d) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: %s", strerror(errno));
        return NULL;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int oom = 0;
    struct dirent *de;
    while (!oom && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0) continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            char **nn = gs_realloc(names, nc * sizeof *nn);
            if (!nn) {
                oom = 1;
                break;
            }
            names = nn;
            cap = nc;
        }
        names[n] = gs_strdup(de->d_name);
        oom |= !names[n++];
    }
    closedir(d);
    cJSON *all = NULL;
    if (oom) {
        gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
        goto done;
    }
    if (n == 0) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "no *.json baseline files in the directory");
        goto done;
    }
    qsort(names, n, sizeof *names, str_cmp);
    all = cJSON_CreateObject();
    cJSON *jobs = cJSON_AddArrayToObject(all, "jobs");
    for (size_t i = 0; i < n && all; i++) {
        gs_sb p;
        gs_sb_init(&p);
        gs_sb_printf(&p, "%s/%s", path, names[i]);
        cJSON *one = gs_sb_ok(&p) ? load_one(gs_sb_cstr(&p), err) : NULL;
        gs_sb_free(&p);
        if (!one) {
            cJSON_Delete(all);
            all = NULL;
            break;
        }
        cJSON *oj = cJSON_GetObjectItemCaseSensitive(one, "jobs");
        while (oj->child)
            cJSON_AddItemToArray(jobs, cJSON_DetachItemViaPointer(oj, oj->child));
        cJSON_Delete(one);
    }
    if (all) {
        gs_json_index *ix = gs_json_index_create(jobs, 0);
        const char *dup = ix ? gs_json_index_duplicate(ix) : NULL;
        if (!ix || dup) {
            if (!ix)
                gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
            else
                gs_error_set(err, GS_ERR_INVALID, path, 0, 0,
                             "job id '%.300s' is in more than one file of the directory", dup);
            gs_json_index_destroy(ix);
            cJSON_Delete(all);
            all = NULL;
        } else {
            gs_json_index_destroy(ix);
        }
    }
done:
    for (size_t i = 0; i < n; i++)
        gs_free(names[i]);
    gs_free(names);
    return all;
}

static int cstr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the kernel segment of a job id (generation/kernel/variant/...) equals one of the
 * comma-separated names in list */
static int id_kernel_in(const char *id, const char *list)
{
    const char *k = id ? strchr(id, '/') : NULL;
    if (!k || !list) return 0;
    k++;
    const char *ke = strchr(k, '/');
    size_t kn = ke ? (size_t)(ke - k) : strlen(k);
    for (const char *t = list; *t;) {
        const char *te = strchr(t, ',');
        size_t tn = te ? (size_t)(te - t) : strlen(t);
        if (tn == kn && !strncmp(t, k, kn)) return 1;
        if (!te) break;
        t = te + 1;
    }
    return 0;
}

/* the kernel segment of two ids is the same */
static int same_kernel(const char *a, const char *b)
{
    const char *ka = strchr(a, '/'), *kb = strchr(b, '/');
    if (!ka || !kb) return 0;
    const char *ea = strchr(ka + 1, '/'), *eb = strchr(kb + 1, '/');
    size_t na = ea ? (size_t)(ea - ka) : strlen(ka), nb = eb ? (size_t)(eb - kb) : strlen(kb);
    return na == nb && !strncmp(ka, kb, na);
}

static void baseline_job(gs_jw *w, const cJSON *q)
{
    gs_jw_begin_object(w, GS_JW_COMPACT);
    gs_jw_kstr(w, "id", gs_json_str(q, "id"));
    gs_jw_kstr(w, "status", gs_json_str(q, "status"));
    gs_jw_knum(w, "time_ns", gs_json_num(q, "time_ns"));
    gs_jw_knum(w, "max_abs", job_max_abs(q));
    gs_jw_knum(w, "tol_abs", job_tol_abs(q));
    gs_jw_end_object(w);
}

/* the new jobs of generation gen (and, with kernels, of those kernels only); with same_as, only
 * those of same_as's kernel */
static void baseline_new_jobs(gs_jw *w, const cJSON *jobs, const char *gen, const char *kernels,
                              const char *same_as)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, jobs)
    {
        const char *id = gs_json_str(q, "id");
        if (strcmp(gs_json_str(q, "generation"), gen) != 0) continue;
        if (kernels && !id_kernel_in(id, kernels)) continue;
        if (same_as && !same_kernel(id, same_as)) continue;
        baseline_job(w, q);
    }
}

/* Jobs of one generation's file. Without kernels: the results' jobs. With kernels: the old
 * file's jobs (old, NULL when there is none) with each listed kernel's jobs replaced by the
 * results' ones at the place of that kernel's first old job; a listed kernel with no old jobs
 * goes at the end. So a partial update that changes nothing rewrites the same bytes. */
static void baseline_gen_jobs(gs_jw *w, const cJSON *jobs, const char *gen, const char *kernels,
                              const cJSON *old)
{
    if (!kernels) {
        baseline_new_jobs(w, jobs, gen, NULL, NULL);
        return;
    }
    const cJSON *oj = cJSON_GetObjectItemCaseSensitive(old, "jobs");
    const cJSON *q;
    cJSON_ArrayForEach(q, oj)
    {
        const char *id = gs_json_str(q, "id");
        if (!id_kernel_in(id, kernels)) {
            baseline_job(w, q);
            continue;
        }
        int first = 1; /* the first old job of its kernel */
        for (const cJSON *p = oj->child; p && p != q; p = p->next)
            if (same_kernel(gs_json_str(p, "id"), id)) first = 0;
        if (first) baseline_new_jobs(w, jobs, gen, kernels, id);
    }
    /* listed kernels the old file did not have */
    cJSON_ArrayForEach(q, jobs)
    {
        const char *id = gs_json_str(q, "id");
        if (strcmp(gs_json_str(q, "generation"), gen) != 0 || !id_kernel_in(id, kernels)) continue;
        int seen = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, oj) seen |= same_kernel(gs_json_str(p, "id"), id);
        if (!seen) baseline_job(w, q);
    }
}

gs_status gs_baseline_write(const cJSON *results, const char *kernels, const char *dir, FILE *out,
                            gs_error *err)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(results, "jobs");
    const char *suite = gs_json_str(results, "suite");
    if (!gs_results_safe_name(suite))
        return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                            "suite '%.100s' cannot name a baseline file", suite);
    /* the distinct generations, sorted (each becomes one file) */
    size_t n = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs) n++;
    const char **gens = gs_calloc(n ? n : 1, sizeof *gens);
    if (!gens) return gs_error_set(err, GS_ERR_NOMEM, dir, 0, 0, "out of memory");
    size_t ng = 0;
    cJSON_ArrayForEach(j, jobs)
    {
        const char *gen = gs_json_str(j, "generation");
        if (!gs_results_safe_name(gen)) {
            gs_free(gens);
            return gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                                "job '%.300s': generation '%.100s' cannot name a baseline file "
                                "(letters, digits, '_', '-', '.')",
                                gs_json_str(j, "id"), gen);
        }
        if (kernels && !id_kernel_in(gs_json_str(j, "id"), kernels)) continue;
        gens[ng++] = gen;
    }
    qsort(gens, ng, sizeof *gens, cstr_cmp);
    size_t u = 0;
    for (size_t i = 0; i < ng; i++)
        if (!u || strcmp(gens[u - 1], gens[i]) != 0) gens[u++] = gens[i];
    ng = u;
    gs_status st = ng ? gs_mkdirs(dir, err) : GS_OK;
    if (!ng && kernels)
        st = gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0,
                          "no jobs of the kernels '%.200s' to write a baseline of", kernels);
    else if (!ng)
        st = gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "no jobs to write a baseline of");
    for (size_t g = 0; g < ng && st == GS_OK; g++) {
        const char *gen = gens[g];
        gs_sb sb, path;
        gs_sb_init(&sb);
        gs_sb_init(&path);
        gs_sb_printf(&path, "%s/%s-%s.json", dir, suite, gen);
        /* a partial update keeps the other kernels' jobs of the file it rewrites */
        cJSON *old = NULL;
        if (kernels && gs_sb_ok(&path)) {
            struct stat sbuf;
            if (stat(gs_sb_cstr(&path), &sbuf) == 0) {
                old = load_one(gs_sb_cstr(&path), err);
                if (!old)
                    st = err->code;
                else if (strcmp(gs_json_str(old, "schema"), GS_BASELINE_SCHEMA) != 0)
                    st = gs_error_set(err, GS_ERR_INVALID, gs_sb_cstr(&path), 0, 0,
                                      "not a baseline file (schema %s): not rewritten",
                                      GS_BASELINE_SCHEMA);
            }
        }
        gs_jw w;
        gs_jw_init(&w, &sb);
        gs_jw_begin_object(&w, GS_JW_LINES);
        gs_jw_kstr(&w, "schema", GS_BASELINE_SCHEMA);
        gs_jw_kint(&w, "schema_version", GS_BASELINE_SCHEMA_VERSION);
        gs_jw_kstr(&w, "generation", gen);
        gs_jw_kstr(&w, "suite", suite);
        gs_jw_key(&w, "jobs");
        gs_jw_begin_array(&w, GS_JW_LINES_CLOSE);
        if (st == GS_OK) baseline_gen_jobs(&w, jobs, gen, kernels, old);
        gs_jw_end_array(&w);
        gs_jw_end_object(&w);
        gs_sb_putc(&sb, '\n');
        cJSON_Delete(old);
        int bug = gs_jw_finish(&w, NULL) == GS_ERR_INTERNAL;
        /* an old file that could not be read stays as it is (st says why) */
        if (st == GS_OK && bug)
            st = gs_error_set(err, GS_ERR_INTERNAL, dir, 0, 0, "baseline: JSON writer misused");
        else if (st == GS_OK)
            st = gs_sb_ok(&path) ? gs_sb_write_file(&sb, gs_sb_cstr(&path), err)
                                 : gs_error_set(err, GS_ERR_NOMEM, dir, 0, 0, "out of memory");
        if (st == GS_OK && out) report(out, "wrote %s", gs_sb_cstr(&path));
        gs_sb_free(&sb);
        gs_sb_free(&path);
    }
    gs_free(gens);
    return st;
}
