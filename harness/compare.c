/* compare.c - regressions between result sets, baselines (see compare.h). */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_util.h"

/* Status rank: higher is worse. Unknown statuses count as errors. */
static int status_rank(const char *s)
{
    if (!strcmp(s, "pass")) return 0;
    if (!strcmp(s, "unsupported") || !strcmp(s, "does-not-fit")) return 1;
    return 2;
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

/* "gen2/matmul/..." -> does cur have any job of that generation and kernel? */
static int covers(const gs_json_index *cur, const char *id)
{
    const char *s1 = strchr(id, '/');
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s2) return 0;
    return gs_json_index_has_prefix(cur, id, (size_t)(s2 - id) + 1);
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
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(base, "jobs"))
    {
        const char *id = gs_json_str(b, "id");
        const cJSON *c = gs_json_index_find(cix, id);
        if (!c) {
            if (covers(cix, id)) {
                sum->missing++;
                sum->regressions++;
                report(out, "REGRESSION  %s: missing from the new results", id);
            }
            continue;
        }
        sum->compared++;
        const char *bs = gs_json_str(b, "status"), *cs = gs_json_str(c, "status");
        int rb = status_rank(bs), rc = status_rank(cs);
        if (rc > rb) {
            sum->regressions++;
            report(out, "REGRESSION  %s: status %s -> %s", id, bs, cs);
            continue;
        }
        if (rc < rb) {
            sum->improvements++;
            report(out, "improved    %s: status %s -> %s", id, bs, cs);
            continue;
        }
        if (strcmp(bs, cs) != 0) {
            sum->changed++;
            report(out, "changed     %s: status %s -> %s", id, bs, cs);
        }
        double bt = gs_json_num(b, "time_ns"), ct = gs_json_num(c, "time_ns");
        int regressed = 0;
        if (!isnan(bt) && !isnan(ct) && bt > 0) {
            double rel = ct / bt - 1.0;
            if (rel > threshold) {
                regressed = 1;
                report(out, "REGRESSION  %s: time %.6g ns -> %.6g ns (%+.2f%%)", id, bt, ct,
                       100.0 * rel);
            } else if (rel < -threshold) {
                sum->improvements++;
                report(out, "improved    %s: time %.6g ns -> %.6g ns (%+.2f%%)", id, bt, ct,
                       100.0 * rel);
            }
        }
        /* Simulated time is exact (the model is deterministic), but the reference results come
         * from the host's BLAS, whose kernels differ between CPUs: an error is judged against
         * the job's tolerance, never by exact equality. */
        double be = job_max_abs(b), ce = job_max_abs(c);
        if (!isnan(be) && !isnan(ce) && ce > be) {
            double tol = job_tol_abs(c);
            if (!(tol > 0)) tol = job_tol_abs(b);
            double allowed = tol > 0 ? GS_COMPARE_ERR_TOL_FRACTION * tol
                                     : GS_COMPARE_ERR_REL_FALLBACK * fabs(be);
            if (ce - be > allowed) {
                regressed = 1;
                if (tol > 0)
                    report(out,
                           "REGRESSION  %s: max abs error %.6g -> %.6g (grew by %.3g%% of the "
                           "tolerance %.6g)",
                           id, be, ce, 100.0 * (ce - be) / tol, tol);
                else
                    report(out, "REGRESSION  %s: max abs error %.6g -> %.6g", id, be, ce);
            }
        }
        sum->regressions += regressed;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cur, "jobs"))
    {
        if (gs_json_index_find(bix, gs_json_str(c, "id"))) continue;
        sum->added++;
        report(out, "new         %s: %s (not in the baseline)", gs_json_str(c, "id"),
               gs_json_str(c, "status"));
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

gs_status gs_baseline_write(const cJSON *results, const char *dir, FILE *out, gs_error *err)
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
        gens[ng++] = gen;
    }
    qsort(gens, ng, sizeof *gens, cstr_cmp);
    size_t u = 0;
    for (size_t i = 0; i < ng; i++)
        if (!u || strcmp(gens[u - 1], gens[i]) != 0) gens[u++] = gens[i];
    ng = u;
    gs_status st = ng ? gs_mkdirs(dir, err) : GS_OK;
    if (!ng) st = gs_error_set(err, GS_ERR_INVALID, NULL, 0, 0, "no jobs to write a baseline of");
    for (size_t g = 0; g < ng && st == GS_OK; g++) {
        const char *gen = gens[g];
        gs_sb sb, path;
        gs_sb_init(&sb);
        gs_sb_init(&path);
        gs_sb_puts(&sb, "{\n\"schema\": ");
        gs_sb_json_str(&sb, GS_BASELINE_SCHEMA);
        gs_sb_printf(&sb,
                     ",\n\"schema_version\": %d,\n\"generation\": ", GS_BASELINE_SCHEMA_VERSION);
        gs_sb_json_str(&sb, gen);
        gs_sb_puts(&sb, ",\n\"suite\": ");
        gs_sb_json_str(&sb, suite);
        gs_sb_puts(&sb, ",\n\"jobs\": [");
        int first = 1;
        const cJSON *q;
        cJSON_ArrayForEach(q, jobs)
        {
            if (strcmp(gs_json_str(q, "generation"), gen) != 0) continue;
            gs_sb_puts(&sb, first ? "\n{\"id\":" : ",\n{\"id\":");
            first = 0;
            gs_sb_json_str(&sb, gs_json_str(q, "id"));
            gs_sb_puts(&sb, ",\"status\":");
            gs_sb_json_str(&sb, gs_json_str(q, "status"));
            gs_sb_puts(&sb, ",\"time_ns\":");
            gs_sb_json_num(&sb, gs_json_num(q, "time_ns"));
            gs_sb_puts(&sb, ",\"max_abs\":");
            gs_sb_json_num(&sb, job_max_abs(q));
            gs_sb_puts(&sb, ",\"tol_abs\":");
            gs_sb_json_num(&sb, job_tol_abs(q));
            gs_sb_putc(&sb, '}');
        }
        gs_sb_puts(&sb, "\n]\n}\n");
        gs_sb_printf(&path, "%s/%s-%s.json", dir, suite, gen);
        st = gs_sb_ok(&path) ? gs_sb_write_file(&sb, gs_sb_cstr(&path), err)
                             : gs_error_set(err, GS_ERR_NOMEM, dir, 0, 0, "out of memory");
        if (st == GS_OK && out) report(out, "wrote %s", gs_sb_cstr(&path));
        gs_sb_free(&sb);
        gs_sb_free(&path);
    }
    gs_free(gens);
    return st;
}

int gs_compare_parse_threshold(const char *s, double *out)
{
    size_t n = s ? strlen(s) : 0;
    int pct = n > 0 && s[n - 1] == '%';
    char *num = gs_strdup(s ? s : "");
    if (!num) return -1;
    if (pct) num[n - 1] = '\0';
    gs_error err;
    gs_error_clear(&err);
    double v;
    int rc = gs_parse_real(num, 0.0, 1e12, &v, &err);
    gs_free(num);
    if (rc != 0) return -1;
    *out = pct ? v / 100.0 : v;
    return 0;
}
