/* compare.c - regressions between result sets, baselines (see compare.h). */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static const cJSON *find_job(const cJSON *doc, const char *id)
{
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(
                              doc, "jobs")) if (!strcmp(gs_json_str(j, "id"), id)) return j;
    return NULL;
}

/* "gen2/matmul/..." -> does cur have any job of that generation and kernel? */
static int covers(const cJSON *cur, const char *id)
{
    const char *s1 = strchr(id, '/');
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s2) return 0;
    size_t n = (size_t)(s2 - id) + 1;
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(
                              cur, "jobs")) if (!strncmp(gs_json_str(j, "id"), id, n)) return 1;
    return 0;
}

void gs_compare_docs(const cJSON *base, const cJSON *cur, double threshold, FILE *out,
                     gs_compare_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(base, "jobs"))
    {
        const char *id = gs_json_str(b, "id");
        const cJSON *c = find_job(cur, id);
        if (!c) {
            if (covers(cur, id)) {
                sum->missing++;
                sum->regressions++;
                if (out) fprintf(out, "REGRESSION  %s: missing from the new results\n", id);
            }
            continue;
        }
        sum->compared++;
        const char *bs = gs_json_str(b, "status"), *cs = gs_json_str(c, "status");
        int rb = status_rank(bs), rc = status_rank(cs);
        if (rc > rb) {
            sum->regressions++;
            if (out) fprintf(out, "REGRESSION  %s: status %s -> %s\n", id, bs, cs);
            continue;
        }
        if (rc < rb) {
            sum->improvements++;
            if (out) fprintf(out, "improved    %s: status %s -> %s\n", id, bs, cs);
            continue;
        }
        if (strcmp(bs, cs) != 0) {
            sum->changed++;
            if (out) fprintf(out, "changed     %s: status %s -> %s\n", id, bs, cs);
        }
        double bt = gs_json_num(b, "time_ns"), ct = gs_json_num(c, "time_ns");
        int regressed = 0;
        if (!isnan(bt) && !isnan(ct) && bt > 0) {
            double rel = ct / bt - 1.0;
            if (rel > threshold) {
                regressed = 1;
                if (out)
                    fprintf(out, "REGRESSION  %s: time %.6g ns -> %.6g ns (%+.2f%%)\n", id, bt, ct,
                            100.0 * rel);
            } else if (rel < -threshold) {
                sum->improvements++;
                if (out)
                    fprintf(out, "improved    %s: time %.6g ns -> %.6g ns (%+.2f%%)\n", id, bt, ct,
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
                if (out) {
                    if (tol > 0)
                        fprintf(out,
                                "REGRESSION  %s: max abs error %.6g -> %.6g (grew by %.3g%% of "
                                "the tolerance %.6g)\n",
                                id, be, ce, 100.0 * (ce - be) / tol, tol);
                    else
                        fprintf(out, "REGRESSION  %s: max abs error %.6g -> %.6g\n", id, be, ce);
                }
            }
        }
        sum->regressions += regressed;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cur, "jobs"))
    {
        if (find_job(base, gs_json_str(c, "id"))) continue;
        sum->added++;
        if (out)
            fprintf(out, "new         %s: %s (not in the baseline)\n", gs_json_str(c, "id"),
                    gs_json_str(c, "status"));
    }
}

static cJSON *load_one(const char *path, gs_error *err)
{
    cJSON *d = gs_json_read_file(path, err);
    if (!d) return NULL;
    const char *schema = gs_json_str(d, "schema");
    double ver = gs_json_num(d, "schema_version");
    int ok = (!strcmp(schema, GS_RESULTS_SCHEMA) && ver == GS_RESULTS_SCHEMA_VERSION) ||
             (!strcmp(schema, GS_BASELINE_SCHEMA) && ver == GS_BASELINE_SCHEMA_VERSION);
    if (!ok || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(d, "jobs"))) {
        gs_error_set(err, GS_ERR_INVALID, path, 0, 0,
                     "not a results file (schema %s v%d) or a baseline (schema %s v%d): "
                     "schema '%s' version %g",
                     GS_RESULTS_SCHEMA, GS_RESULTS_SCHEMA_VERSION, GS_BASELINE_SCHEMA,
                     GS_BASELINE_SCHEMA_VERSION, schema, ver);
        cJSON_Delete(d);
        return NULL;
    }
    return d;
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
    char *names[256];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < GS_ARRAY_LEN(names)) {
        size_t len = strlen(de->d_name);
        if (len > 5 && !strcmp(de->d_name + len - 5, ".json")) names[n++] = gs_strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, str_cmp);
    cJSON *all = cJSON_CreateObject();
    cJSON *jobs = cJSON_AddArrayToObject(all, "jobs");
    for (size_t i = 0; i < n && all; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, names[i] ? names[i] : "");
        cJSON *one = load_one(p, err);
        if (!one) {
            cJSON_Delete(all);
            all = NULL;
            break;
        }
        cJSON *oj = cJSON_GetObjectItemCaseSensitive(one, "jobs");
        while (cJSON_GetArraySize(oj) > 0)
            cJSON_AddItemToArray(jobs, cJSON_DetachItemFromArray(oj, 0));
        cJSON_Delete(one);
    }
    for (size_t i = 0; i < n; i++)
        gs_free(names[i]);
    if (all && n == 0) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "no *.json baseline files in the directory");
        cJSON_Delete(all);
        return NULL;
    }
    return all;
}

gs_status gs_baseline_write(const cJSON *results, const char *dir, FILE *out, gs_error *err)
{
    gs_status st = gs_mkdirs(dir, err);
    if (st != GS_OK) return st;
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(results, "jobs");
    const cJSON *j;
    /* generations in id order: jobs are sorted, so each generation is one run */
    const char *done[64];
    size_t n_done = 0;
    cJSON_ArrayForEach(j, jobs)
    {
        const char *gen = gs_json_str(j, "generation");
        int seen = 0;
        for (size_t i = 0; i < n_done; i++)
            seen |= !strcmp(done[i], gen);
        if (seen || n_done == GS_ARRAY_LEN(done)) continue;
        done[n_done++] = gen;
        gs_sb sb;
        gs_sb_init(&sb);
        gs_sb_puts(&sb, "{\n\"schema\": ");
        gs_sb_json_str(&sb, GS_BASELINE_SCHEMA);
        gs_sb_printf(&sb,
                     ",\n\"schema_version\": %d,\n\"generation\": ", GS_BASELINE_SCHEMA_VERSION);
        gs_sb_json_str(&sb, gen);
        gs_sb_puts(&sb, ",\n\"suite\": ");
        gs_sb_json_str(&sb, gs_json_str(results, "suite"));
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
        char path[4096];
        snprintf(path, sizeof path, "%s/%s-%s.json", dir, gs_json_str(results, "suite"), gen);
        st = gs_sb_write_file(&sb, path, err);
        gs_sb_free(&sb);
        if (st != GS_OK) return st;
        if (out) fprintf(out, "wrote %s\n", path);
    }
    return GS_OK;
}

int gs_compare_parse_threshold(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || !isfinite(v)) return -1;
    if (*end == '%') {
        v /= 100.0;
        end++;
    }
    if (*end) return -1;
    *out = v;
    return 0;
}
