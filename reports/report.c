/*
 * report.c - the HTML performance report (see report.h): reading and checking results files,
 * then one function per section. Charts come from svg.c; interaction is a small inline script
 * that only sorts and filters rows already in the page, so the static HTML carries everything.
 */
#include "report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

/* Job statuses as results files write them, with whether each counts as a failure. Mirrors
 * GS_JOB_STATUS_TABLE in harness/job.h (reports sit below the harness and cannot include it;
 * test_report checks the two agree). Order = severity for a portability cell, worst last. */
static const struct {
    const char *name;
    int failure;
} statuses[] = {
    {"pass", 0},  {"unsupported", 0}, {"does-not-fit", 0}, {"fail", 1},
    {"error", 1}, {"timeout", 1},     {"deadlock", 1},     {"crash", 1},
};

/* -1 for a status this reader does not know (shown, and counted as a failure). */
static int status_index(const char *s)
{
    for (size_t i = 0; i < GS_ARRAY_LEN(statuses); i++)
        if (!strcmp(statuses[i].name, s)) return (int)i;
    return -1;
}

static int status_is_failure(const char *s)
{
    int i = status_index(s);
    return i < 0 ? 1 : statuses[i].failure;
}

int gs_report_status_known(const char *status, int *is_failure)
{
    int i = status ? status_index(status) : -1;
    if (is_failure) *is_failure = i < 0 ? 1 : statuses[i].failure;
    return i >= 0;
}

/* CSS class of a status: its own name when known (safe characters), else "unknown". */
static const char *status_class(const char *s)
{
    int i = status_index(s);
    return i < 0 ? "unknown" : statuses[i].name;
}

/* Engines in display order; the results file may lack some (gpsimd on gen1). */
static const char *const engine_names[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};
#define N_ENGINES ((int)GS_ARRAY_LEN(engine_names))
static const char *const stall_keys[] = {"busy_ns", "stall_dep_ns", "stall_dma_ns",
                                         "stall_port_ns"};
static const char *const stall_labels[] = {"busy", "waiting on a dependency",
                                           "waiting on DMA", "waiting on a port"};

/* Limits that keep a full sweep's report light (issue 7: under 5 MB). */
#define MAX_GENS 64
#define TIMELINE_TOTAL_SLICES 12000 /* rectangles over all timelines */
#define TIMELINE_MIN_SLICES 60      /* per timeline, whatever the share */
#define TIMELINE_MAX_TRACKS 24      /* per timeline; the rest are counted, not drawn */

typedef struct rjob {
    const cJSON *o;
    const char *id, *gen, *kernel, *variant, *dtype, *status, *reason;
    char shape[96];
    double size; /* product of the shape's dims: "largest shape" = largest size */
    double time_ns;
    int gen_i;
    int row_i; /* kernel row (kernel/variant/dtype) */
} rjob;

typedef struct krow {
    const char *kernel, *variant, *dtype;
} krow;

typedef struct rep {
    const cJSON *root;
    const cJSON *cfg[MAX_GENS]; /* NULL for a generation seen only in jobs */
    const char *gens[MAX_GENS];
    int n_gens;
    rjob *jobs;
    size_t n_jobs;
    krow *rows;
    size_t n_rows;
    const cJSON *broot; /* baseline or NULL */
    rjob *bjobs;
    size_t n_bjobs;
    const char *results_name, *baseline_name;
    const cJSON *whatif[GS_REPORT_MAX_EXTRA]; /* "gensweep-whatif" documents */
    int n_whatif;
    const cJSON *tuning[GS_REPORT_MAX_EXTRA]; /* "gensweep-tuning" documents */
    int n_tuning;
    int base_gen;
    double regress_pct;
    gs_sb *sb;
} rep;

/* ---- JSON access: absent or wrong-typed fields read as "" / NaN, never crash ---- */

static const cJSON *jget(const cJSON *o, const char *k)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = jget(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = jget(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* ---- output helpers ---- */

/* Escaped text. Control characters (other than tab/newline) are replaced: they are not allowed
 * in HTML text and a results file may carry them in an error message. */
static void h(gs_sb *sb, const char *s)
{
    if (!s) return;
    size_t n = strlen(s);
    int clean = 1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') clean = 0;
    if (clean) {
        gs_sb_html(sb, s);
        return;
    }
    char *c = gs_strdup(s);
    if (!c) {
        sb->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)c[i] < 0x20 && c[i] != '\n' && c[i] != '\t') c[i] = '?';
    gs_sb_html(sb, c);
    gs_free(c);
}

/* A time in ns as text with a readable unit; "—" when unknown. */
static void put_time(gs_sb *sb, double ns)
{
    if (!isfinite(ns))
        gs_sb_puts(sb, "—");
    else if (ns < 1e3)
        gs_sb_printf(sb, "%.3g ns", ns);
    else if (ns < 1e6)
        gs_sb_printf(sb, "%.4g µs", ns / 1e3);
    else if (ns < 1e9)
        gs_sb_printf(sb, "%.4g ms", ns / 1e6);
    else
        gs_sb_printf(sb, "%.4g s", ns / 1e9);
}

static void put_num(gs_sb *sb, double v)
{
    if (isfinite(v))
        gs_sb_printf(sb, "%.4g", v);
    else
        gs_sb_puts(sb, "—");
}

/* data-v attribute for sorting numbers ("" for unknown: sorted last by the script). */
static void put_dv(gs_sb *sb, double v)
{
    if (isfinite(v))
        gs_sb_printf(sb, " data-v=\"%.9g\"", v);
    else
        gs_sb_puts(sb, " data-v=\"\"");
}

/* <td> with a number and its sort value. */
static void td_num(gs_sb *sb, double v)
{
    gs_sb_puts(sb, "<td class=\"n\"");
    put_dv(sb, v);
    gs_sb_puts(sb, ">");
    put_num(sb, v);
    gs_sb_puts(sb, "</td>");
}

static void td_time(gs_sb *sb, double ns)
{
    gs_sb_puts(sb, "<td class=\"n\"");
    put_dv(sb, ns);
    gs_sb_puts(sb, ">");
    put_time(sb, ns);
    gs_sb_puts(sb, "</td>");
}

static void td_text(gs_sb *sb, const char *s)
{
    gs_sb_puts(sb, "<td>");
    h(sb, s);
    gs_sb_puts(sb, "</td>");
}

static void status_badge(gs_sb *sb, const char *status)
{
    gs_sb_printf(sb, "<span class=\"st %s\">", status_class(status));
    h(sb, status);
    gs_sb_puts(sb, "</span>");
}

static void row_label(gs_sb *sb, const krow *r)
{
    h(sb, r->kernel);
    gs_sb_puts(sb, "/");
    h(sb, r->variant);
    gs_sb_puts(sb, " ");
    h(sb, r->dtype);
}

/* Attributes the filter script matches on: data-gen, data-kernel, data-status; each a
 * '|'-separated list (a matrix row spans several generations and statuses). */
static void filter_attrs(gs_sb *sb, const char *gens, const char *kernel, const char *status)
{
    gs_sb_puts(sb, " data-gen=\"");
    h(sb, gens);
    gs_sb_puts(sb, "\" data-kernel=\"");
    h(sb, kernel);
    gs_sb_puts(sb, "\" data-status=\"");
    h(sb, status);
    gs_sb_puts(sb, "\"");
}

/* ---- loading ---- */

static gs_status read_file(const char *path, char **out, gs_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot read: %s",
                            strerror(errno));
    gs_sb sb;
    gs_sb_init(&sb);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        gs_sb_putn(&sb, buf, n);
        if (sb.len > GS_REPORT_MAX_INPUT_BYTES) {
            fclose(f);
            gs_sb_free(&sb);
            return gs_error_set(err, GS_ERR_INVALID, path, 0, 0,
                                "results file larger than %zu bytes",
                                (size_t)GS_REPORT_MAX_INPUT_BYTES);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        gs_sb_free(&sb);
        return gs_error_set(err, GS_ERR_IO, path, 0, 0, "read error");
    }
    if (!gs_sb_ok(&sb)) {
        gs_sb_free(&sb);
        return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory reading the file");
    }
    gs_sb_cstr(&sb);
    *out = gs_sb_take(&sb);
    if (!*out) {
        *out = gs_strdup("");
        if (!*out) return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
    }
    return GS_OK;
}

/* Parse and check the envelope: schema name, version, jobs array. */
static gs_status parse_results(const char *text, const char *name, cJSON **out, gs_error *err)
{
    *out = NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line = 1, col = 1;
        for (const char *p = text; end && p < end && *p; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        if (!*text) return gs_error_set(err, GS_ERR_PARSE, name, 0, 0, "empty file, not JSON");
        return gs_error_set(err, GS_ERR_PARSE, name, line, col, "malformed JSON");
    }
    gs_status st = GS_OK;
    const cJSON *ver = jget(root, "schema_version");
    if (!cJSON_IsObject(root))
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                          "not a results file: the top level is not a JSON object");
    else if (strcmp(jstr(root, "schema"), "gensweep-results") != 0)
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                          "not a results file: \"schema\" is not \"gensweep-results\"");
    else if (!cJSON_IsNumber(ver))
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "\"schema_version\" is missing");
    else if (ver->valuedouble != GS_REPORT_SCHEMA_VERSION)
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                          "results schema_version %g is not supported (this gensweep reads "
                          "version %d; rebuild the report with a matching gensweep)",
                          ver->valuedouble, GS_REPORT_SCHEMA_VERSION);
    else if (!cJSON_IsArray(jget(root, "jobs")))
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "\"jobs\" is missing or not an array");
    else if (jget(root, "configs") && !cJSON_IsArray(jget(root, "configs")))
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "\"configs\" is not an array");
    if (st != GS_OK) {
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return GS_OK;
}

/* A what-if or tuning document: "gensweep-whatif" / "gensweep-tuning", version 1. */
static gs_status parse_extra(rep *r, const char *text, const char *name, cJSON **out,
                             gs_error *err)
{
    *out = NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line = 1;
        for (const char *p = text; end && p < end && *p; p++) line += *p == '\n';
        return gs_error_set(err, GS_ERR_PARSE, name, line, 0, "malformed JSON");
    }
    const char *schema = jstr(root, "schema");
    int whatif = !strcmp(schema, "gensweep-whatif"), tuning = !strcmp(schema, "gensweep-tuning");
    gs_status st = GS_OK;
    if (!whatif && !tuning)
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                          "not a what-if or tuning file: \"schema\" is neither "
                          "\"gensweep-whatif\" nor \"gensweep-tuning\"");
    else if (jnum(root, "schema_version") != 1)
        st = gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                          "%s schema_version %g is not supported (this gensweep reads 1)", schema,
                          jnum(root, "schema_version"));
    if (st != GS_OK) {
        cJSON_Delete(root);
        return st;
    }
    if (whatif)
        r->whatif[r->n_whatif++] = root;
    else
        r->tuning[r->n_tuning++] = root;
    *out = root;
    return GS_OK;
}

static int gen_index(rep *r, const char *g)
{
    for (int i = 0; i < r->n_gens; i++)
        if (!strcmp(r->gens[i], g)) return i;
    return -1;
}

/* Fill jobs (n = size of "jobs"); for the main file also register generations and rows. */
static gs_status load_jobs(rep *r, const cJSON *root, const char *name, rjob **out, size_t *n,
                           int main_file, gs_error *err)
{
    const cJSON *jobs = jget(root, "jobs");
    size_t cnt = (size_t)cJSON_GetArraySize(jobs);
    rjob *js = gs_calloc(cnt ? cnt : 1, sizeof *js);
    if (!js) return gs_error_set(err, GS_ERR_NOMEM, name, 0, 0, "out of memory");
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, jobs)
    {
        rjob *j = &js[i];
        if (!cJSON_IsObject(o)) {
            gs_free(js);
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0, "jobs[%zu] is not an object", i);
        }
        j->o = o;
        j->id = jstr(o, "id");
        j->gen = jstr(o, "generation");
        j->kernel = jstr(o, "kernel");
        j->variant = jstr(o, "variant");
        j->dtype = jstr(o, "dtype");
        j->status = jstr(o, "status");
        j->reason = jstr(o, "reason");
        j->time_ns = jnum(o, "time_ns");
        if (!*j->id || !*j->gen || !*j->kernel || !*j->status) {
            gs_free(js);
            return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                "jobs[%zu] lacks \"id\", \"generation\", \"kernel\" or \"status\"",
                                i);
        }
        j->size = 1;
        size_t sl = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, jget(o, "shape"))
        {
            double v = cJSON_IsNumber(d) ? d->valuedouble : 0;
            j->size *= v;
            int w = snprintf(j->shape + sl, sizeof j->shape - sl, "%s%.0f", sl ? "x" : "", v);
            if (w > 0 && (size_t)w < sizeof j->shape - sl) sl += (size_t)w;
        }
        j->gen_i = gen_index(r, j->gen);
        j->row_i = -1;
        if (main_file) {
            if (j->gen_i < 0) {
                if (r->n_gens == MAX_GENS) {
                    gs_free(js);
                    return gs_error_set(err, GS_ERR_INVALID, name, 0, 0,
                                        "more than %d generations in one report", MAX_GENS);
                }
                r->gens[r->n_gens] = j->gen;
                j->gen_i = r->n_gens++;
            }
            for (size_t k = 0; k < r->n_rows; k++)
                if (!strcmp(r->rows[k].kernel, j->kernel) &&
                    !strcmp(r->rows[k].variant, j->variant) && !strcmp(r->rows[k].dtype, j->dtype))
                    j->row_i = (int)k;
            if (j->row_i < 0) {
                krow *nr = gs_realloc(r->rows, (r->n_rows + 1) * sizeof *nr);
                if (!nr) {
                    gs_free(js);
                    return gs_error_set(err, GS_ERR_NOMEM, name, 0, 0, "out of memory");
                }
                r->rows = nr;
                r->rows[r->n_rows] = (krow){j->kernel, j->variant, j->dtype};
                j->row_i = (int)r->n_rows++;
            }
        }
        i++;
    }
    *out = js;
    *n = cnt;
    return GS_OK;
}

/* The representative job of a kernel row on a generation: the largest shape, preferring one
 * that has a time. NULL when the row never ran there. */
static const rjob *representative(const rep *r, size_t row, int gen)
{
    const rjob *best = NULL;
    for (size_t i = 0; i < r->n_jobs; i++) {
        const rjob *j = &r->jobs[i];
        if (j->row_i != (int)row || j->gen_i != gen) continue;
        int jt = isfinite(j->time_ns), bt = best && isfinite(best->time_ns);
        if (!best || (jt && !bt) || (jt == bt && j->size > best->size)) best = j;
    }
    return best;
}

static const rjob *find_baseline(const rep *r, const char *id)
{
    for (size_t i = 0; i < r->n_bjobs; i++)
        if (!strcmp(r->bjobs[i].id, id)) return &r->bjobs[i];
    return NULL;
}

/* Baseline verdict for a job: 1 regression, -1 improvement, 0 neither; *pct = time change. */
static int baseline_verdict(const rep *r, const rjob *j, const rjob *b, double *pct)
{
    *pct = NAN;
    if (!b) return 0;
    int fj = status_is_failure(j->status), fb = status_is_failure(b->status);
    if (isfinite(j->time_ns) && isfinite(b->time_ns) && b->time_ns > 0)
        *pct = 100.0 * (j->time_ns - b->time_ns) / b->time_ns;
    if (fj && !fb) return 1;
    if (!fj && fb) return -1;
    if (isfinite(*pct) && *pct > r->regress_pct) return 1;
    if (isfinite(*pct) && *pct < -r->regress_pct) return -1;
    return 0;
}

/* ---- sections ---- */

static void section_open(gs_sb *sb, const char *id, const char *title)
{
    gs_sb_printf(sb, "<section id=\"%s\"><h2>%s</h2>\n", id, title);
}

static void section_close(gs_sb *sb)
{
    gs_sb_puts(sb, "</section>\n");
}

static void sec_summary(rep *r)
{
    gs_sb *sb = r->sb;
    const cJSON *tool = jget(r->root, "tool"), *wall = jget(r->root, "wall");
    section_open(sb, "summary", "1. Summary");
    gs_sb_puts(sb, "<dl class=\"facts\"><dt>results</dt><dd>");
    h(sb, r->results_name);
    gs_sb_puts(sb, "</dd><dt>date</dt><dd>");
    h(sb, *jstr(wall, "started") ? jstr(wall, "started") : "unknown");
    gs_sb_puts(sb, "</dd><dt>tool</dt><dd>gensweep ");
    h(sb, jstr(tool, "version"));
    gs_sb_puts(sb, ", commit ");
    h(sb, jstr(tool, "commit"));
    gs_sb_puts(sb, "</dd><dt>suite</dt><dd>");
    h(sb, jstr(r->root, "suite"));
    if (cJSON_IsFalse(jget(r->root, "complete")))
        gs_sb_puts(sb, " <strong class=\"warn\">(incomplete: interrupted or one shard)</strong>");
    gs_sb_puts(sb, "</dd><dt>configs</dt><dd>");
    for (int g = 0; g < r->n_gens; g++) {
        if (g) gs_sb_puts(sb, ", ");
        h(sb, r->gens[g]);
    }
    const cJSON *ov;
    int first = 1;
    cJSON_ArrayForEach(ov, jget(r->root, "overrides"))
    {
        if (!cJSON_IsString(ov)) continue;
        gs_sb_puts(sb, first ? " with overrides <code>" : "</code>, <code>");
        h(sb, ov->valuestring);
        first = 0;
    }
    if (!first) gs_sb_puts(sb, "</code>");
    double sim = 0;
    for (size_t i = 0; i < r->n_jobs; i++)
        if (isfinite(r->jobs[i].time_ns)) sim += r->jobs[i].time_ns;
    gs_sb_puts(sb, "</dd><dt>total simulated time</dt><dd>");
    put_time(sb, sim);
    gs_sb_puts(sb, "</dd><dt>wall time</dt><dd>");
    double ws = jnum(wall, "total_s");
    if (isfinite(ws))
        gs_sb_printf(sb, "%.1f s", ws);
    else
        gs_sb_puts(sb, "—");
    gs_sb_printf(sb, "</dd><dt>jobs</dt><dd>%zu</dd></dl>\n", r->n_jobs);

    /* counts by status, known statuses in table order, then unknown ones */
    gs_sb_puts(sb, "<table class=\"counts\"><thead><tr><th>status</th><th>jobs</th></tr></thead>"
                   "<tbody>");
    for (size_t s = 0; s < GS_ARRAY_LEN(statuses); s++) {
        size_t c = 0;
        for (size_t i = 0; i < r->n_jobs; i++)
            if (!strcmp(r->jobs[i].status, statuses[s].name)) c++;
        gs_sb_puts(sb, "<tr><td>");
        status_badge(sb, statuses[s].name);
        gs_sb_printf(sb, "</td><td class=\"n\">%zu</td></tr>", c);
    }
    size_t unknown = 0;
    for (size_t i = 0; i < r->n_jobs; i++)
        if (status_index(r->jobs[i].status) < 0) unknown++;
    if (unknown)
        gs_sb_printf(sb, "<tr><td><span class=\"st unknown\">unknown status</span></td>"
                         "<td class=\"n\">%zu</td></tr>",
                     unknown);
    gs_sb_puts(sb, "</tbody></table>\n");

    size_t nfail = 0;
    for (size_t i = 0; i < r->n_jobs; i++) nfail += status_is_failure(r->jobs[i].status) != 0;
    gs_sb_printf(sb, "<h3 id=\"failures\">Failures (%zu)</h3>", nfail);
    if (nfail) {
        gs_sb_puts(sb, "<ul class=\"problems\">");
        for (size_t i = 0; i < r->n_jobs; i++) {
            const rjob *j = &r->jobs[i];
            if (!status_is_failure(j->status)) continue;
            gs_sb_printf(sb, "<li><a href=\"#job-%zu\">", i);
            h(sb, j->id);
            gs_sb_puts(sb, "</a> ");
            status_badge(sb, j->status);
            if (*j->reason) {
                gs_sb_puts(sb, " ");
                h(sb, j->reason);
            }
            gs_sb_puts(sb, "</li>");
        }
        gs_sb_puts(sb, "</ul>\n");
    } else {
        gs_sb_puts(sb, "<p>No job failed.</p>\n");
    }
    if (r->broot) {
        size_t nreg = 0;
        double pct;
        for (size_t i = 0; i < r->n_jobs; i++)
            nreg += baseline_verdict(r, &r->jobs[i], find_baseline(r, r->jobs[i].id), &pct) > 0;
        gs_sb_printf(sb, "<h3>Regressions against the baseline (%zu)</h3>", nreg);
        if (nreg) {
            gs_sb_puts(sb, "<ul class=\"problems\">");
            for (size_t i = 0; i < r->n_jobs; i++) {
                const rjob *j = &r->jobs[i];
                if (baseline_verdict(r, j, find_baseline(r, j->id), &pct) <= 0) continue;
                gs_sb_printf(sb, "<li><a href=\"#base-%zu\">", i);
                h(sb, j->id);
                gs_sb_puts(sb, "</a>");
                if (isfinite(pct)) gs_sb_printf(sb, " %+.1f %%", pct);
                gs_sb_puts(sb, "</li>");
            }
            gs_sb_puts(sb, "</ul>\n");
        } else {
            gs_sb_puts(sb, "<p>No regression.</p>\n");
        }
    }
    section_close(sb);
}

/* A parameter value with a readable unit. */
static void put_param(gs_sb *sb, double v, const char *unit)
{
    if (!isfinite(v)) {
        gs_sb_puts(sb, "—");
    } else if (!strcmp(unit, "B")) {
        static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        int k = 0;
        while (k < 4 && fabs(v) >= 1024 && fmod(v, 1024) == 0) {
            v /= 1024;
            k++;
        }
        gs_sb_printf(sb, "%g %s", v, u[k]);
    } else if (!strcmp(unit, "Hz")) {
        gs_sb_printf(sb, "%g GHz", v / 1e9);
    } else if (!strcmp(unit, "B/s")) {
        gs_sb_printf(sb, "%.4g GB/s", v / 1e9);
    } else if (!strcmp(unit, "ns")) {
        put_time(sb, v);
    } else {
        gs_sb_printf(sb, "%g", v);
        if (*unit) {
            gs_sb_puts(sb, " ");
            h(sb, unit);
        }
    }
}

static void sec_generations(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "generations", "2. Generations side by side");
    gs_sb_puts(sb, "<p>Every numeric parameter of each configuration. Rows whose values differ "
                   "between generations are <span class=\"diff\">highlighted</span>. Each value "
                   "is marked with its source key (hover for the note) or as "
                   "<span class=\"assumed\">assumed</span> (no public number).</p>\n");
    gs_sb_puts(sb, "<div class=\"scroll\"><table class=\"sortable params\"><thead><tr>"
                   "<th>parameter</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        h(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    /* derived peaks first: they are what people compare */
    static const struct {
        const char *key, *label;
    } peaks[] = {{"bf16_tflops", "peak bf16 TFLOP/s per core"},
                 {"fp32_tflops", "peak fp32 TFLOP/s per core"},
                 {"fp8_tflops", "peak fp8 TFLOP/s per core"},
                 {"hbm_gbps", "HBM GB/s per chip"},
                 {"sbuf_mib", "SBUF MiB per core"},
                 {"cores", "cores per chip"}};
    for (size_t p = 0; p < GS_ARRAY_LEN(peaks); p++) {
        gs_sb_puts(sb, "<tr class=\"derived\"><th scope=\"row\">");
        gs_sb_puts(sb, peaks[p].label);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++) td_num(sb, jnum(jget(r->cfg[g], "peaks"), peaks[p].key));
        gs_sb_puts(sb, "</tr>\n");
    }
    /* parameters in the first config's (table) order, then any only later configs have */
    for (int c = 0; c < r->n_gens; c++) {
        const cJSON *prm;
        cJSON_ArrayForEach(prm, jget(r->cfg[c], "params"))
        {
            const char *key = prm->string;
            if (!key) continue;
            int seen = 0;
            for (int e = 0; e < c && !seen; e++) seen = jget(jget(r->cfg[e], "params"), key) != NULL;
            if (seen) continue;
            double v0 = NAN;
            int differs = 0, have = 0;
            for (int g = 0; g < r->n_gens; g++) {
                double v = jnum(jget(jget(r->cfg[g], "params"), key), "value");
                if (!have) {
                    v0 = v;
                    have = 1;
                } else if (!(v == v0 || (isnan(v) && isnan(v0)))) {
                    differs = 1;
                }
            }
            gs_sb_printf(sb, "<tr%s><th scope=\"row\"><code>", differs ? " class=\"diff\"" : "");
            h(sb, key);
            gs_sb_puts(sb, "</code></th>");
            for (int g = 0; g < r->n_gens; g++) {
                const cJSON *pv = jget(jget(r->cfg[g], "params"), key);
                double v = jnum(pv, "value");
                const char *src = jstr(pv, "src"), *note = jstr(pv, "note");
                gs_sb_puts(sb, "<td class=\"n\"");
                put_dv(sb, v);
                gs_sb_puts(sb, ">");
                put_param(sb, v, jstr(pv, "unit"));
                if (*src) {
                    int assumed = !strcmp(src, "assumed");
                    gs_sb_printf(sb, " <span class=\"%s\" title=\"",
                                 assumed ? "assumed" : !strcmp(src, "--set") ? "override" : "src");
                    if (!assumed) {
                        gs_sb_puts(sb, "source ");
                        h(sb, src);
                        const char *url = jstr(jget(r->cfg[g], "sources"), src);
                        if (*url) {
                            gs_sb_puts(sb, ": ");
                            h(sb, url);
                        }
                        if (*note) gs_sb_puts(sb, " — ");
                    }
                    h(sb, note);
                    gs_sb_puts(sb, "\">");
                    h(sb, src);
                    gs_sb_puts(sb, "</span>");
                }
                gs_sb_puts(sb, "</td>");
            }
            gs_sb_puts(sb, "</tr>\n");
        }
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    /* the sources, as text: the report links nowhere outside itself */
    gs_sb_puts(sb, "<h3>Sources</h3><dl class=\"sources\">");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<dt>");
        h(sb, r->gens[g]);
        if (r->cfg[g]) {
            gs_sb_puts(sb, " — ");
            h(sb, jstr(r->cfg[g], "description"));
        }
        gs_sb_puts(sb, "</dt>");
        const cJSON *s;
        cJSON_ArrayForEach(s, jget(r->cfg[g], "sources"))
        {
            gs_sb_puts(sb, "<dd><b>");
            h(sb, s->string);
            gs_sb_puts(sb, "</b> ");
            h(sb, cJSON_IsString(s) ? s->valuestring : "");
            gs_sb_puts(sb, "</dd>");
        }
    }
    gs_sb_puts(sb, "</dl>\n");
    section_close(sb);
}

static int worse_status(const char *a, const char *b)
{
    return status_index(a) < 0 ? 0 : status_index(b) < 0 ? 1 : status_index(b) > status_index(a);
}

static void sec_portability(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "portability", "3. Portability matrix");
    gs_sb_puts(sb, "<p>Worst status over each kernel's shapes, and the time at its largest "
                   "shape. Hover or focus a cell for every shape's status, time and reason.</p>\n"
                   "<div class=\"scroll\"><table class=\"sortable filterable matrix\"><thead><tr>"
                   "<th>kernel/variant dtype</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        h(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    gs_sb tip, gens, sts;
    gs_sb_init(&tip);
    gs_sb_init(&gens);
    gs_sb_init(&sts);
    for (size_t k = 0; k < r->n_rows; k++) {
        gs_sb_reset(&gens);
        gs_sb_reset(&sts);
        for (size_t i = 0; i < r->n_jobs; i++) {
            const rjob *j = &r->jobs[i];
            if (j->row_i != (int)k) continue;
            gs_sb_puts(&gens, r->gens[j->gen_i]);
            gs_sb_putc(&gens, '|');
            gs_sb_puts(&sts, j->status);
            gs_sb_putc(&sts, '|');
        }
        gs_sb_puts(sb, "<tr");
        filter_attrs(sb, gs_sb_cstr(&gens), r->rows[k].kernel, gs_sb_cstr(&sts));
        gs_sb_puts(sb, "><th scope=\"row\">");
        row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++) {
            const char *worst = NULL;
            gs_sb_reset(&tip);
            for (size_t i = 0; i < r->n_jobs; i++) {
                const rjob *j = &r->jobs[i];
                if (j->row_i != (int)k || j->gen_i != g) continue;
                if (!worst || worse_status(worst, j->status)) worst = j->status;
                gs_sb_printf(&tip, "%s%s: %s", tip.len ? "\n" : "", j->shape, j->status);
                if (isfinite(j->time_ns)) {
                    gs_sb_puts(&tip, ", ");
                    put_time(&tip, j->time_ns);
                }
                if (*j->reason) {
                    gs_sb_puts(&tip, " — ");
                    gs_sb_puts(&tip, j->reason);
                }
            }
            if (!worst) {
                gs_sb_puts(sb, "<td class=\"none\" data-v=\"\">not run</td>");
                continue;
            }
            const rjob *rep_job = representative(r, k, g);
            gs_sb_printf(sb, "<td class=\"cell %s\" tabindex=\"0\" title=\"", status_class(worst));
            h(sb, gs_sb_cstr(&tip));
            gs_sb_puts(sb, "\"");
            put_dv(sb, rep_job ? rep_job->time_ns : NAN);
            gs_sb_puts(sb, "><b>");
            h(sb, worst);
            gs_sb_puts(sb, "</b><br>");
            put_time(sb, rep_job ? rep_job->time_ns : NAN);
            gs_sb_puts(sb, "</td>");
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    if (!gs_sb_ok(&tip) || !gs_sb_ok(&gens) || !gs_sb_ok(&sts)) sb->oom = 1;
    gs_sb_free(&tip);
    gs_sb_free(&gens);
    gs_sb_free(&sts);
    gs_sb_puts(sb, "</tbody></table></div>\n");
    section_close(sb);
}

/* Heatmap colour for a speedup: blue tints above 1, vermillion tints below (Okabe-Ito blue and
 * vermillion, both distinguishable under the common colour-vision deficiencies). */
static void speedup_style(gs_sb *sb, double s)
{
    double t = fabs(log2(s)) / 3.0; /* full colour at 8x either way */
    if (t > 1) t = 1;
    int r0 = s >= 1 ? 0x00 : 0xD5, g0 = s >= 1 ? 0x72 : 0x5E, b0 = s >= 1 ? 0xB2 : 0x00;
    int rr = (int)(255 + (r0 - 255) * t * 0.75), gg = (int)(255 + (g0 - 255) * t * 0.75),
        bb = (int)(255 + (b0 - 255) * t * 0.75);
    gs_sb_printf(sb, " style=\"background:#%02x%02x%02x%s\"", rr, gg, bb,
                 t > 0.6 ? ";color:#fff" : "");
}

static void sec_speedups(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "speedups", "4. Cross-generation speedups");
    gs_sb_puts(sb, "<p>Time on the base generation <b>");
    h(sb, r->n_gens ? r->gens[r->base_gen] : "");
    gs_sb_puts(sb, "</b> divided by the time on each generation, per kernel at its largest shape "
                   "(higher is faster; blue faster, vermillion slower than the base).</p>\n"
                   "<div class=\"scroll\"><table class=\"sortable filterable heat\"><thead><tr>"
                   "<th>kernel/variant dtype</th><th>shape</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        h(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < r->n_rows; k++) {
        const rjob *base = representative(r, k, r->base_gen);
        gs_sb_puts(sb, "<tr");
        filter_attrs(sb, "", r->rows[k].kernel, "");
        gs_sb_puts(sb, "><th scope=\"row\">");
        row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        td_text(sb, base ? base->shape : "");
        for (int g = 0; g < r->n_gens; g++) {
            /* the same shape as the base's, so the ratio compares like with like */
            const rjob *j = NULL;
            for (size_t i = 0; base && i < r->n_jobs; i++)
                if (r->jobs[i].row_i == (int)k && r->jobs[i].gen_i == g &&
                    !strcmp(r->jobs[i].shape, base->shape))
                    j = &r->jobs[i];
            double s = base && j && j->time_ns > 0 && base->time_ns > 0 &&
                               !strcmp(j->status, "pass") && !strcmp(base->status, "pass")
                           ? base->time_ns / j->time_ns
                           : NAN;
            gs_sb_puts(sb, "<td class=\"n\"");
            put_dv(sb, s);
            if (isfinite(s)) {
                speedup_style(sb, s);
                gs_sb_printf(sb, ">%.2f×</td>", s);
            } else {
                gs_sb_puts(sb, " title=\"");
                h(sb, !j ? "not run at this shape" : j->status);
                gs_sb_puts(sb, "\">—</td>");
            }
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    section_close(sb);
}

static void sec_roofline(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "roofline", "5. Roofline per generation");
    gs_sb_puts(sb, "<p>Arithmetic intensity (FLOP per HBM byte) against achieved TFLOP/s, both "
                   "log scale, for each kernel row's largest shape. Ceilings: peak compute per "
                   "core for each dtype (horizontal) and HBM bandwidth per chip (diagonal). Hover "
                   "a point for the run.</p>\n<div class=\"charts\">");
    for (int g = 0; g < r->n_gens; g++) {
        const cJSON *pk = jget(r->cfg[g], "peaks");
        double bw = jnum(pk, "hbm_gbps");
        static const char *const dts[] = {"fp8_tflops", "bf16_tflops", "fp32_tflops"};
        static const char *const dtl[] = {"fp8 peak", "bf16 peak", "fp32 peak"};
        double ymax = 0, ymin = INFINITY, xmin = INFINITY, xmax = 0;
        for (size_t d = 0; d < GS_ARRAY_LEN(dts); d++) {
            double v = jnum(pk, dts[d]);
            if (v > ymax) ymax = v;
        }
        int npts = 0;
        for (size_t k = 0; k < r->n_rows; k++) {
            const rjob *j = representative(r, k, g);
            if (!j) continue;
            double ai = jnum(j->o, "arith_intensity"), tf = jnum(j->o, "achieved_tflops");
            double pt = jnum(j->o, "peak_tflops");
            if (!(ai > 0) || !(tf > 0)) continue;
            npts++;
            if (ai < xmin) xmin = ai;
            if (ai > xmax) xmax = ai;
            if (tf < ymin) ymin = tf;
            if (tf > ymax) ymax = tf;
            if (pt > ymax) ymax = pt;
        }
        gs_sb_puts(sb, "<figure><figcaption>");
        h(sb, r->gens[g]);
        gs_sb_puts(sb, "</figcaption>");
        if (!npts || !(ymax > 0)) {
            gs_sb_puts(sb, "<p>No job with FLOPs and HBM traffic to place.</p></figure>");
            continue;
        }
        gs_svg_plot p;
        gs_svg_plot_init(&p, 460, 320);
        p.x = (gs_svg_axis){xmin / 4, xmax * 4, 1, "arithmetic intensity (FLOP/byte)"};
        p.y = (gs_svg_axis){ymin / 4, ymax * 2, 1, "achieved (TFLOP/s)"};
        gs_svg_axis_nice(&p.x);
        gs_svg_axis_nice(&p.y);
        gs_svg_begin(sb, &p, "roofline");
        /* bandwidth diagonal up to the highest compute ceiling: TFLOP/s = AI * GB/s / 1e3 */
        if (bw > 0) {
            double x0 = p.x.lo, x1 = ymax * 1e3 / bw;
            if (x1 > p.x.hi) x1 = p.x.hi;
            if (x1 > x0) {
                gs_sb_printf(sb,
                             "<line class=\"ceil bw\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                             "y2=\"%.1f\"><title>HBM %.4g GB/s</title></line>",
                             gs_svg_px(&p, x0), gs_svg_py(&p, x0 * bw / 1e3), gs_svg_px(&p, x1),
                             gs_svg_py(&p, x1 * bw / 1e3), bw);
                char lbl[64];
                snprintf(lbl, sizeof lbl, "HBM %.4g GB/s", bw);
                gs_svg_text(sb, gs_svg_px(&p, x0) + 4, gs_svg_py(&p, x0 * bw / 1e3) - 6, "start",
                            "clbl", lbl);
            }
        }
        for (size_t d = 0; d < GS_ARRAY_LEN(dts); d++) {
            double v = jnum(pk, dts[d]);
            if (!(v > 0)) continue;
            double xs = bw > 0 ? v * 1e3 / bw : p.x.lo;
            if (xs < p.x.lo) xs = p.x.lo;
            gs_sb_printf(sb,
                         "<line class=\"ceil c%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                         "y2=\"%.1f\"/>",
                         d, gs_svg_px(&p, xs), gs_svg_py(&p, v), gs_svg_px(&p, p.x.hi),
                         gs_svg_py(&p, v));
            char lbl[64];
            snprintf(lbl, sizeof lbl, "%s %.4g TFLOP/s", dtl[d], v);
            gs_svg_text(sb, gs_svg_px(&p, p.x.hi) - 4, gs_svg_py(&p, v) - 4, "end", "clbl", lbl);
        }
        int ci = 0;
        for (size_t k = 0; k < r->n_rows; k++) {
            const rjob *j = representative(r, k, g);
            if (!j) continue;
            double ai = jnum(j->o, "arith_intensity"), tf = jnum(j->o, "achieved_tflops");
            if (!(ai > 0) || !(tf > 0)) continue;
            double x = gs_svg_px(&p, ai), y = gs_svg_py(&p, tf);
            gs_sb_printf(sb, "<g class=\"pt\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\">"
                             "<title>",
                         x, y, gs_svg_colour(ci++));
            h(sb, j->id);
            gs_sb_printf(sb, "\n%.4g FLOP/B, %.4g TFLOP/s, ", ai, tf);
            put_time(sb, j->time_ns);
            gs_sb_printf(sb, ", %.3g× the roofline bound", jnum(j->o, "roofline_ratio"));
            gs_sb_puts(sb, "</title></circle>");
            gs_svg_text(sb, x + 7, y + 4, "start", "plbl", j->kernel);
            gs_sb_puts(sb, "</g>");
        }
        gs_svg_end(sb);
        gs_sb_puts(sb, "</figure>");
    }
    gs_sb_puts(sb, "</div>\n");
    section_close(sb);
}

/* Number of DMA queues a generation has per core (to normalise summed DMA busy time). */
static double dma_queues(const rep *r, int g)
{
    double q = jnum(jget(jget(r->cfg[g], "params"), "core.dma.engines"), "value");
    return q > 0 ? q : 1;
}

static void sec_engines(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "engines", "6. Where the time goes");
    gs_sb_puts(sb, "<p>Per engine, the share of the run each engine spent busy or stalled (time "
                   "summed over cores, DMA also over its queues, divided by run time × cores × "
                   "queues), for each kernel row's largest shape. The bottleneck is the engine on "
                   "the critical path.</p>\n<p class=\"legend\">");
    for (int s = 0; s < 4; s++)
        gs_sb_printf(sb, "<span><b class=\"sw\" style=\"color:%s\">■</b> %s</span> ",
                     gs_svg_colour(s == 0 ? 3 : s == 1 ? 0 : s == 2 ? 1 : 5), stall_labels[s]);
    gs_sb_puts(sb, "</p>\n<div class=\"scroll\"><table class=\"filterable engines\"><thead><tr>"
                   "<th>kernel/variant dtype</th>");
    for (int g = 0; g < r->n_gens; g++) {
        gs_sb_puts(sb, "<th>");
        h(sb, r->gens[g]);
        gs_sb_puts(sb, "</th>");
    }
    gs_sb_puts(sb, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < r->n_rows; k++) {
        gs_sb_puts(sb, "<tr");
        filter_attrs(sb, "", r->rows[k].kernel, "");
        gs_sb_puts(sb, "><th scope=\"row\">");
        row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</th>");
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = representative(r, k, g);
            const cJSON *eng = j ? jget(j->o, "engines") : NULL;
            double t = j ? j->time_ns : NAN;
            if (!eng || !(t > 0)) {
                gs_sb_puts(sb, "<td class=\"none\">—</td>");
                continue;
            }
            double cores = jnum(j->o, "cores_used");
            if (!(cores > 0)) cores = 1;
            gs_sb_puts(sb, "<td>");
            gs_svg_plot p;
            gs_svg_plot_init(&p, 230, 18 + 14.0 * N_ENGINES + 24);
            p.left = 50;
            p.top = 8;
            p.bottom = 32;
            p.right = 12;
            p.x = (gs_svg_axis){0, 100, 0, "% of run time"};
            p.y = (gs_svg_axis){0, 1, 0, NULL};
            /* the frame without y ticks: engine names label the rows instead */
            gs_sb_printf(sb,
                         "<svg class=\"mini\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                         "height=\"%.0f\" role=\"img\" aria-label=\"engine time\">",
                         p.width, p.height, p.width, p.height);
            double x0 = p.left, x1 = p.width - p.right, y = p.top;
            for (int e = 0; e < N_ENGINES; e++, y += 14) {
                const cJSON *es = jget(eng, engine_names[e]);
                gs_svg_text(sb, x0 - 4, y + 10, "end", NULL, engine_names[e]);
                if (!es) continue;
                double denom = t * cores * (strcmp(engine_names[e], "dma") ? 1 : dma_queues(r, g));
                double acc = 0;
                for (int s = 0; s < 4; s++) {
                    double v = jnum(es, stall_keys[s]);
                    if (!(v > 0)) continue;
                    double f = v / denom * 100;
                    if (acc + f > 100) f = 100 - acc;
                    if (f <= 0) continue;
                    gs_sb_printf(sb,
                                 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"11\" "
                                 "fill=\"%s\"><title>%s %s: ",
                                 x0 + acc / 100 * (x1 - x0), y, f / 100 * (x1 - x0),
                                 gs_svg_colour(s == 0 ? 3 : s == 1 ? 0 : s == 2 ? 1 : 5),
                                 engine_names[e], stall_labels[s]);
                    put_time(sb, v);
                    gs_sb_printf(sb, " (%.1f %%)</title></rect>", v / denom * 100);
                    acc += f;
                }
            }
            gs_sb_printf(sb,
                         "<line class=\"axisl\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                         x0, y + 2, x1, y + 2);
            for (int tk = 0; tk <= 100; tk += 50)
                gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>",
                             x0 + tk / 100.0 * (x1 - x0), y + 14, tk);
            gs_svg_text(sb, (x0 + x1) / 2, y + 27, "middle", "axis", "% of run time");
            gs_sb_puts(sb, "</svg><br>bottleneck: <b>");
            h(sb, *jstr(j->o, "bottleneck") ? jstr(j->o, "bottleneck") : "—");
            gs_sb_puts(sb, "</b> · ");
            h(sb, j->shape);
            gs_sb_puts(sb, "</td>");
        }
        gs_sb_puts(sb, "</tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    section_close(sb);
}

/* A trace path is linked only when it is relative and stays below the report's folder. */
static int safe_relative_link(const char *p)
{
    if (!*p || p[0] == '/' || p[0] == '\\' || strstr(p, "..") || strchr(p, ':') ||
        strstr(p, "//"))
        return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x21 || *c == '"' || *c == '\'' || *c == '<' || *c == '>' ||
            *c == '#' || *c == '?')
            return 0;
    return 1;
}

static void timeline_chart(rep *r, const rjob *j, const cJSON *tl, int slice_budget)
{
    gs_sb *sb = r->sb;
    const cJSON *tracks = jget(tl, "tracks");
    int ntr = cJSON_GetArraySize(tracks), shown = ntr < TIMELINE_MAX_TRACKS ? ntr : TIMELINE_MAX_TRACKS;
    double total = jnum(tl, "total_ns");
    if (!(total > 0)) total = j->time_ns;
    if (!(total > 0) || shown == 0) {
        gs_sb_puts(sb, "<p>Empty timeline.</p>");
        return;
    }
    int nslices = 0;
    for (int t = 0; t < shown; t++)
        nslices += cJSON_GetArraySize(jget(cJSON_GetArrayItem(tracks, t), "slices"));
    /* merge consecutive slices so the whole chart stays within its budget */
    int group = nslices > slice_budget ? (nslices + slice_budget - 1) / slice_budget : 1;
    gs_svg_plot p;
    gs_svg_plot_init(&p, 900, 28 + 16.0 * shown + 44);
    p.left = 110;
    p.x = (gs_svg_axis){0, total / 1e3, 0, "time (µs)"};
    p.y = (gs_svg_axis){0, 1, 0, NULL};
    gs_svg_axis_nice(&p.x);
    gs_sb_printf(sb,
                 "<svg class=\"gantt\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                 "role=\"img\" aria-label=\"timeline\">",
                 p.width, p.height, p.width, p.height);
    double ybot = p.height - p.bottom;
    for (int i = 0; i <= 5; i++) {
        double v = p.x.lo + (p.x.hi - p.x.lo) * i / 5, x = gs_svg_px(&p, v);
        gs_sb_printf(sb, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                     x, p.top, x, ybot);
        gs_sb_printf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, ybot + 14);
        gs_svg_num(sb, v);
        gs_sb_puts(sb, "</text>");
    }
    gs_svg_text(sb, (p.left + p.width - p.right) / 2, p.height - 6, "middle", "axis",
                "time (µs)");
    for (int t = 0; t < shown; t++) {
        const cJSON *tr = cJSON_GetArrayItem(tracks, t);
        double y = p.top + 16.0 * t;
        const char *name = jstr(tr, "name");
        gs_svg_text(sb, p.left - 6, y + 11, "end", NULL, name);
        /* colour by engine kind: the track name's last word before any queue number */
        int ci = strstr(name, "tensor") ? 3 : strstr(name, "vector") ? 0 : strstr(name, "scalar") ? 5
                 : strstr(name, "gpsimd") ? 4 : 1;
        const cJSON *sl = jget(tr, "slices");
        int n = cJSON_GetArraySize(sl);
        gs_sb_printf(sb, "<g fill=\"%s\">", gs_svg_colour(ci));
        for (int i = 0; i < n; i += group) {
            double s0 = INFINITY, s1 = -INFINITY, cnt = 0;
            const char *iname = "", *src = "";
            for (int k = i; k < n && k < i + group; k++) {
                const cJSON *s = cJSON_GetArrayItem(sl, k);
                const cJSON *a = cJSON_GetArrayItem(s, 0), *b = cJSON_GetArrayItem(s, 1);
                if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b)) continue;
                if (a->valuedouble < s0) s0 = a->valuedouble;
                if (b->valuedouble > s1) s1 = b->valuedouble;
                const cJSON *c = cJSON_GetArrayItem(s, 4);
                cnt += cJSON_IsNumber(c) ? c->valuedouble : 1;
                if (k == i) {
                    const cJSON *nm = cJSON_GetArrayItem(s, 2), *sr = cJSON_GetArrayItem(s, 3);
                    iname = cJSON_IsString(nm) ? nm->valuestring : "";
                    src = cJSON_IsString(sr) ? sr->valuestring : "";
                }
            }
            if (!(s1 >= s0)) continue;
            double x0 = gs_svg_px(&p, s0 / 1e3), x1 = gs_svg_px(&p, s1 / 1e3);
            gs_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\"><title>",
                         x0, y, x1 - x0 < 0.5 ? 0.5 : x1 - x0);
            h(sb, iname);
            if (cnt > 1) gs_sb_printf(sb, " (%.0f instructions from here)", cnt);
            gs_sb_puts(sb, " — ");
            h(sb, src);
            gs_sb_printf(sb, "\n%.4g–%.4g µs</title></rect>", s0 / 1e3, s1 / 1e3);
        }
        gs_sb_puts(sb, "</g>");
    }
    gs_sb_puts(sb, "</svg>");
    if (ntr > shown)
        gs_sb_printf(sb, "<p class=\"note\">%d more tracks not drawn (see the trace).</p>",
                     ntr - shown);
}

static void sec_timelines(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "timelines", "7. Timelines");
    gs_sb_puts(sb, "<p>For each kernel row's largest shape, engines and DMA queues over time "
                   "(aggregated: a bar may stand for several instructions). Hover a bar for the "
                   "instruction and the kernel source line.</p>\n");
    int ntl = 0;
    for (size_t k = 0; k < r->n_rows; k++)
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = representative(r, k, g);
            if (j && cJSON_IsObject(jget(j->o, "timeline"))) ntl++;
        }
    if (!ntl) gs_sb_puts(sb, "<p>No job in these results carries a timeline.</p>\n");
    int budget = ntl ? TIMELINE_TOTAL_SLICES / ntl : 0;
    if (budget < TIMELINE_MIN_SLICES) budget = TIMELINE_MIN_SLICES;
    int first = 1;
    for (size_t k = 0; k < r->n_rows; k++) {
        int any = 0;
        for (int g = 0; g < r->n_gens && !any; g++) {
            const rjob *j = representative(r, k, g);
            any = j && cJSON_IsObject(jget(j->o, "timeline"));
        }
        if (!any) continue;
        gs_sb_printf(sb, "<details class=\"tl\"%s><summary>", first ? " open" : "");
        first = 0;
        row_label(sb, &r->rows[k]);
        gs_sb_puts(sb, "</summary>");
        for (int g = 0; g < r->n_gens; g++) {
            const rjob *j = representative(r, k, g);
            const cJSON *tl = j ? jget(j->o, "timeline") : NULL;
            if (!cJSON_IsObject(tl)) continue;
            gs_sb_puts(sb, "<h4>");
            h(sb, j->id);
            gs_sb_puts(sb, " — ");
            put_time(sb, j->time_ns);
            gs_sb_puts(sb, "</h4>");
            timeline_chart(r, j, tl, budget);
            const char *trace = jstr(j->o, "trace");
            if (*trace) {
                gs_sb_puts(sb, "<p class=\"note\">Full trace: ");
                if (safe_relative_link(trace)) {
                    gs_sb_puts(sb, "<a href=\"");
                    h(sb, trace);
                    gs_sb_puts(sb, "\">");
                    h(sb, trace);
                    gs_sb_puts(sb, "</a>");
                } else {
                    gs_sb_puts(sb, "<code>");
                    h(sb, trace);
                    gs_sb_puts(sb, "</code>");
                }
                gs_sb_puts(sb, " (Perfetto / chrome://tracing JSON)</p>");
            }
        }
        gs_sb_puts(sb, "</details>\n");
    }
    section_close(sb);
}

static void sec_correctness(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "correctness", "8. Correctness and every job");
    gs_sb_puts(sb, "<p>Every job: status, time, and the largest absolute and relative error "
                   "of its outputs against the reference, next to the tolerance used. Click a "
                   "column header to sort.</p>\n<div class=\"scroll\"><table id=\"jobs\" "
                   "class=\"sortable filterable\"><thead><tr><th>job</th><th>generation</th>"
                   "<th>kernel</th><th>status</th><th>time</th><th>× roofline</th>"
                   "<th>bottleneck</th><th>max abs err</th><th>tol abs</th>"
                   "<th>max rel err</th><th>tol rel</th><th>mismatches</th><th>reason</th>"
                   "</tr></thead><tbody>\n");
    for (size_t i = 0; i < r->n_jobs; i++) {
        const rjob *j = &r->jobs[i];
        const cJSON *e = jget(j->o, "error");
        gs_sb_printf(sb, "<tr id=\"job-%zu\"", i);
        filter_attrs(sb, j->gen, j->kernel, j->status);
        gs_sb_printf(sb, "%s>", status_is_failure(j->status) ? " class=\"bad\"" : "");
        td_text(sb, j->id);
        td_text(sb, j->gen);
        td_text(sb, j->kernel);
        gs_sb_puts(sb, "<td>");
        status_badge(sb, j->status);
        gs_sb_puts(sb, "</td>");
        td_time(sb, j->time_ns);
        td_num(sb, jnum(j->o, "roofline_ratio"));
        td_text(sb, jstr(j->o, "bottleneck"));
        if (cJSON_IsTrue(jget(e, "checked"))) {
            td_num(sb, jnum(e, "max_abs"));
            td_num(sb, jnum(e, "tol_abs"));
            td_num(sb, jnum(e, "max_rel"));
            td_num(sb, jnum(e, "tol_rel"));
            td_num(sb, jnum(e, "mismatches"));
        } else {
            gs_sb_puts(sb, "<td colspan=\"5\" class=\"none\" data-v=\"\">not checked</td>");
        }
        gs_sb_puts(sb, "<td class=\"reason\">");
        h(sb, j->reason);
        const char *tail = jstr(j->o, "stderr_tail");
        if (*tail) {
            gs_sb_puts(sb, "<details><summary>stderr</summary><pre>");
            h(sb, tail);
            gs_sb_puts(sb, "</pre></details>");
        }
        gs_sb_puts(sb, "</td></tr>\n");
    }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    section_close(sb);
}

static void sec_baseline(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "baseline", "9. Against the baseline");
    if (!r->broot) {
        gs_sb_puts(sb, "<p>No baseline was given (<code>gensweep report RESULTS.json --baseline "
                       "BASE.json</code>).</p>\n");
        section_close(sb);
        return;
    }
    size_t nreg = 0, nimp = 0, nsame = 0, nnew = 0, ngone = 0;
    double pct;
    for (size_t i = 0; i < r->n_jobs; i++) {
        const rjob *b = find_baseline(r, r->jobs[i].id);
        int v = baseline_verdict(r, &r->jobs[i], b, &pct);
        if (!b)
            nnew++;
        else if (v > 0)
            nreg++;
        else if (v < 0)
            nimp++;
        else
            nsame++;
    }
    for (size_t i = 0; i < r->n_bjobs; i++) {
        int found = 0;
        for (size_t k = 0; k < r->n_jobs && !found; k++) found = !strcmp(r->jobs[k].id, r->bjobs[i].id);
        ngone += !found;
    }
    gs_sb_puts(sb, "<p>Baseline <code>");
    h(sb, r->baseline_name);
    gs_sb_printf(sb, "</code>: %zu regressions, %zu improvements (time change beyond ±%.3g %% or "
                     "a status change), %zu unchanged, %zu new jobs, %zu jobs no longer run.</p>\n",
                 nreg, nimp, r->regress_pct, nsame, nnew, ngone);
    gs_sb_puts(sb, "<div class=\"scroll\"><table class=\"sortable filterable\"><thead><tr>"
                   "<th>job</th><th>verdict</th><th>baseline</th><th>now</th><th>change</th>"
                   "<th>status then → now</th></tr></thead><tbody>\n");
    /* regressions first, then improvements */
    for (int pass = 1; pass >= -1; pass -= 2)
        for (size_t i = 0; i < r->n_jobs; i++) {
            const rjob *j = &r->jobs[i], *b = find_baseline(r, j->id);
            if (baseline_verdict(r, j, b, &pct) != pass) continue;
            gs_sb_printf(sb, "<tr id=\"base-%zu\" class=\"%s\"", i, pass > 0 ? "bad" : "good");
            filter_attrs(sb, j->gen, j->kernel, j->status);
            gs_sb_puts(sb, ">");
            td_text(sb, j->id);
            td_text(sb, pass > 0 ? "regression" : "improvement");
            td_time(sb, b->time_ns);
            td_time(sb, j->time_ns);
            gs_sb_puts(sb, "<td class=\"n\"");
            put_dv(sb, pct);
            if (isfinite(pct))
                gs_sb_printf(sb, ">%+.1f %%</td>", pct);
            else
                gs_sb_puts(sb, ">—</td>");
            gs_sb_puts(sb, "<td>");
            status_badge(sb, b->status);
            gs_sb_puts(sb, " → ");
            status_badge(sb, j->status);
            gs_sb_puts(sb, "</td></tr>\n");
        }
    gs_sb_puts(sb, "</tbody></table></div>\n");
    section_close(sb);
}

/* Grouped bars: one group per generation, one bar per variant (time in µs). */
static void sec_variants(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "variants", "10. Variants");
    gs_sb_puts(sb, "<p>Kernels with more than one variant (the matmul ladder, fused vs "
                   "unfused): time of each variant at its largest shape, per generation (lower "
                   "is better).</p>\n<div class=\"charts\">");
    int any = 0;
    for (size_t k = 0; k < r->n_rows; k++) {
        /* one chart per kernel+dtype, drawn at the first row of that pair */
        int first = 1, nvar = 0;
        for (size_t e = 0; e < k && first; e++)
            first = !(strcmp(r->rows[e].kernel, r->rows[k].kernel) == 0 &&
                      strcmp(r->rows[e].dtype, r->rows[k].dtype) == 0);
        if (!first) continue;
        size_t vrows[16];
        for (size_t e = k; e < r->n_rows && nvar < 16; e++)
            if (!strcmp(r->rows[e].kernel, r->rows[k].kernel) &&
                !strcmp(r->rows[e].dtype, r->rows[k].dtype))
                vrows[nvar++] = e;
        if (nvar < 2) continue;
        any = 1;
        double ymax = 0;
        for (int v = 0; v < nvar; v++)
            for (int g = 0; g < r->n_gens; g++) {
                const rjob *j = representative(r, vrows[v], g);
                if (j && j->time_ns / 1e3 > ymax) ymax = j->time_ns / 1e3;
            }
        gs_svg_plot p;
        gs_svg_plot_init(&p, 460, 300);
        p.top = 48;
        p.x = (gs_svg_axis){0, 1, 0, "generation"};
        p.y = (gs_svg_axis){0, ymax > 0 ? ymax : 1, 0, "time (µs)"};
        gs_svg_axis_nice(&p.y);
        gs_sb_puts(sb, "<figure><figcaption>");
        h(sb, r->rows[k].kernel);
        gs_sb_puts(sb, " ");
        h(sb, r->rows[k].dtype);
        gs_sb_puts(sb, "</figcaption>");
        /* y axis only: the x positions are categories */
        gs_sb_printf(sb,
                     "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                     "height=\"%.0f\" role=\"img\" aria-label=\"variants\">",
                     p.width, p.height, p.width, p.height);
        for (int i = 0; i <= 5; i++) {
            double v = p.y.lo + (p.y.hi - p.y.lo) * i / 5, y = gs_svg_py(&p, v);
            gs_sb_printf(sb,
                         "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                         p.left, y, p.width - p.right, y, p.left - 4, y + 4);
            gs_svg_num(sb, v);
            gs_sb_puts(sb, "</text>");
        }
        gs_sb_printf(sb, "<g transform=\"translate(14 %.1f) rotate(-90)\">",
                     (p.top + p.height - p.bottom) / 2);
        gs_svg_text(sb, 0, 0, "middle", "axis", "time (µs)");
        gs_sb_puts(sb, "</g>");
        double gw = (p.width - p.left - p.right) / (r->n_gens ? r->n_gens : 1);
        double bw = gw * 0.8 / nvar;
        for (int g = 0; g < r->n_gens; g++) {
            double gx = p.left + gw * g + gw * 0.1;
            gs_svg_text(sb, gx + gw * 0.4, p.height - p.bottom + 14, "middle", NULL, r->gens[g]);
            for (int v = 0; v < nvar; v++) {
                const rjob *j = representative(r, vrows[v], g);
                if (!j || !(j->time_ns > 0)) continue;
                double y = gs_svg_py(&p, j->time_ns / 1e3);
                gs_sb_printf(sb,
                             "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                             "fill=\"%s\"><title>",
                             gx + bw * v, y, bw * 0.9, p.height - p.bottom - y, gs_svg_colour(v));
                h(sb, j->id);
                gs_sb_puts(sb, ": ");
                put_time(sb, j->time_ns);
                gs_sb_puts(sb, "</title></rect>");
            }
        }
        gs_svg_text(sb, (p.left + p.width - p.right) / 2, p.height - 6, "middle", "axis",
                    "generation (bars: variants)");
        const char *labels[16], *colours[16];
        for (int v = 0; v < nvar; v++) {
            labels[v] = r->rows[vrows[v]].variant;
            colours[v] = gs_svg_colour(v);
        }
        gs_svg_plot lp = p;
        lp.top = 24;
        gs_svg_legend(sb, &lp, labels, colours, nvar);
        gs_svg_end(sb);
        gs_sb_puts(sb, "</figure>");
    }
    gs_sb_puts(sb, "</div>\n");
    if (!any) gs_sb_puts(sb, "<p>No kernel in these results has more than one variant.</p>\n");
    section_close(sb);
}

/* The most sensitive curves drawn per what-if chart (all are in the table). */
#define WHATIF_MAX_CURVES 8

/*
 * What-if and tuning come from their own files (harness/RESULTS.md: whatif.json with schema
 * "gensweep-whatif", tuning files with "gensweep-tuning"), passed with --whatif / --tuning.
 */
static void whatif_chart(rep *r, const cJSON *w)
{
    gs_sb *sb = r->sb;
    const cJSON *vals = jget(w, "values"), *jobs = jget(w, "jobs");
    int nv = cJSON_GetArraySize(vals);
    double vmin = INFINITY, vmax = 0, tmin = INFINITY, tmax = 0;
    for (int i = 0; i < nv; i++) {
        double v = jnum(cJSON_GetArrayItem(vals, i), "value");
        if (v > 0 && v < vmin) vmin = v;
        if (v > vmax) vmax = v;
    }
    /* pick the curves with the largest |sensitivity| (ties: file order) */
    const cJSON *pick[WHATIF_MAX_CURVES];
    int np = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        double s = fabs(jnum(j, "sensitivity"));
        if (!isfinite(s)) s = -1;
        if (np < WHATIF_MAX_CURVES) {
            pick[np++] = j;
        } else {
            int lo = 0;
            for (int k = 1; k < np; k++)
                if (fabs(jnum(pick[k], "sensitivity")) < fabs(jnum(pick[lo], "sensitivity")))
                    lo = k;
            double sl = fabs(jnum(pick[lo], "sensitivity"));
            if (!isfinite(sl) || s > sl) pick[lo] = j;
        }
    }
    for (int k = 0; k < np; k++) {
        const cJSON *t;
        cJSON_ArrayForEach(t, jget(pick[k], "time_ns"))
        {
            if (!cJSON_IsNumber(t) || !(t->valuedouble > 0)) continue;
            if (t->valuedouble < tmin) tmin = t->valuedouble;
            if (t->valuedouble > tmax) tmax = t->valuedouble;
        }
    }
    gs_sb_puts(sb, "<figure><figcaption>");
    h(sb, jstr(w, "config"));
    gs_sb_puts(sb, ": <code>");
    h(sb, jstr(w, "param"));
    gs_sb_puts(sb, "</code></figcaption>");
    if (!(vmax > 0) || !(tmax > 0)) {
        gs_sb_puts(sb, "<p>No usable points.</p></figure>");
        return;
    }
    char xl[160];
    snprintf(xl, sizeof xl, "%.100s (%.40s)", jstr(w, "param"),
             *jstr(w, "unit") ? jstr(w, "unit") : "value");
    gs_svg_plot p;
    gs_svg_plot_init(&p, 460, 300);
    p.top = 48;
    p.x = (gs_svg_axis){vmin, vmax, 1, xl};
    p.y = (gs_svg_axis){tmin / 1e3 / 1.5, tmax / 1e3 * 1.5, 1, "time (µs)"};
    gs_svg_axis_nice(&p.x);
    gs_svg_axis_nice(&p.y);
    gs_svg_begin(sb, &p, "what-if sensitivity");
    double base = jnum(w, "base_value");
    if (base > 0)
        gs_sb_printf(sb, "<line class=\"axisl\" stroke-dasharray=\"3 3\" x1=\"%.1f\" y1=\"%.1f\" "
                         "x2=\"%.1f\" y2=\"%.1f\"><title>configured value</title></line>",
                     gs_svg_px(&p, base), p.top, gs_svg_px(&p, base), p.height - p.bottom);
    const char *labels[WHATIF_MAX_CURVES], *colours[WHATIF_MAX_CURVES];
    char lbuf[WHATIF_MAX_CURVES][64];
    for (int k = 0; k < np; k++) {
        const cJSON *ts = jget(pick[k], "time_ns");
        gs_sb_printf(sb, "<g class=\"curve\" stroke=\"%s\" fill=\"%s\"><polyline points=\"",
                     gs_svg_colour(k), gs_svg_colour(k));
        for (int i = 0; i < nv; i++) {
            double v = jnum(cJSON_GetArrayItem(vals, i), "value");
            const cJSON *t = cJSON_GetArrayItem(ts, i);
            if (!(v > 0) || !cJSON_IsNumber(t) || !(t->valuedouble > 0)) continue;
            gs_sb_printf(sb, "%.1f,%.1f ", gs_svg_px(&p, v), gs_svg_py(&p, t->valuedouble / 1e3));
        }
        gs_sb_puts(sb, "\"/>");
        for (int i = 0; i < nv; i++) {
            double v = jnum(cJSON_GetArrayItem(vals, i), "value");
            const cJSON *t = cJSON_GetArrayItem(ts, i);
            if (!(v > 0) || !cJSON_IsNumber(t) || !(t->valuedouble > 0)) continue;
            gs_sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>", gs_svg_px(&p, v),
                         gs_svg_py(&p, t->valuedouble / 1e3));
            h(sb, jstr(pick[k], "id"));
            gs_sb_puts(sb, " at ");
            h(sb, jstr(cJSON_GetArrayItem(vals, i), "label"));
            gs_sb_puts(sb, ": ");
            put_time(sb, t->valuedouble);
            gs_sb_puts(sb, "</title></circle>");
        }
        gs_sb_puts(sb, "</g>");
        snprintf(lbuf[k], sizeof lbuf[k], "%.30s/%.20s", jstr(pick[k], "kernel"),
                 jstr(pick[k], "variant"));
        labels[k] = lbuf[k];
        colours[k] = gs_svg_colour(k);
    }
    gs_svg_plot lp = p;
    lp.top = 24;
    gs_svg_legend(sb, &lp, labels, colours, np > 3 ? 3 : np); /* the rest: hover and table */
    gs_svg_end(sb);
    gs_sb_puts(sb, "</figure>");
}

static void sec_whatif(rep *r)
{
    gs_sb *sb = r->sb;
    section_open(sb, "whatif", "11. What-if and tuning");
    if (!r->n_whatif && !r->n_tuning)
        gs_sb_puts(sb, "<p>No what-if or tuning results given (<code>gensweep report RESULTS.json "
                       "--whatif WHATIF.json --tuning configs/tuning/GEN.json</code>).</p>\n");
    if (r->n_whatif) {
        gs_sb_puts(sb, "<h3>Sensitivity</h3><p>Each kernel's time as one parameter varies (the "
                       "dashed line is the configured value; the most sensitive kernels are "
                       "drawn). Sensitivity = d ln(time) / d ln(value): −1 fully bound by the "
                       "parameter, 0 insensitive.</p><div class=\"charts\">");
        for (int i = 0; i < r->n_whatif; i++) whatif_chart(r, r->whatif[i]);
        gs_sb_puts(sb, "</div>\n<div class=\"scroll\"><table class=\"sortable filterable\"><thead>"
                       "<tr><th>config</th><th>parameter</th><th>job</th><th>sensitivity</th>"
                       "</tr></thead><tbody>\n");
        for (int i = 0; i < r->n_whatif; i++) {
            const cJSON *j;
            cJSON_ArrayForEach(j, jget(r->whatif[i], "jobs"))
            {
                gs_sb_puts(sb, "<tr");
                filter_attrs(sb, jstr(r->whatif[i], "config"), jstr(j, "kernel"), "");
                gs_sb_puts(sb, ">");
                td_text(sb, jstr(r->whatif[i], "config"));
                td_text(sb, jstr(r->whatif[i], "param"));
                td_text(sb, jstr(j, "id"));
                td_num(sb, jnum(j, "sensitivity"));
                gs_sb_puts(sb, "</tr>\n");
            }
        }
        gs_sb_puts(sb, "</tbody></table></div>\n");
    }
    if (r->n_tuning) {
        gs_sb_puts(sb, "<h3>Tuning gains</h3><div class=\"scroll\"><table class=\"sortable "
                       "filterable\"><thead><tr><th>generation</th><th>kernel/variant</th>"
                       "<th>shape</th><th>default</th><th>tuned</th><th>speedup</th>"
                       "<th>best parameters</th></tr></thead><tbody>\n");
        for (int i = 0; i < r->n_tuning; i++) {
            const char *gen = jstr(r->tuning[i], "generation");
            const cJSON *t;
            cJSON_ArrayForEach(t, jget(r->tuning[i], "kernels"))
            {
                double d = jnum(t, "default_ns"), b = jnum(t, "best_ns");
                gs_sb_puts(sb, "<tr");
                filter_attrs(sb, gen, t->string, "");
                gs_sb_puts(sb, ">");
                td_text(sb, gen);
                gs_sb_puts(sb, "<td>");
                h(sb, t->string);
                gs_sb_puts(sb, "/");
                h(sb, jstr(t, "variant"));
                gs_sb_puts(sb, "</td><td>");
                const cJSON *d2;
                int first = 1;
                cJSON_ArrayForEach(d2, jget(t, "shape"))
                {
                    gs_sb_printf(sb, "%s%.0f", first ? "" : "x",
                                 cJSON_IsNumber(d2) ? d2->valuedouble : 0);
                    first = 0;
                }
                gs_sb_puts(sb, "</td>");
                td_time(sb, d);
                td_time(sb, b);
                double gain = d > 0 && b > 0 ? d / b : NAN;
                gs_sb_puts(sb, "<td class=\"n\"");
                put_dv(sb, gain);
                if (isfinite(gain))
                    gs_sb_printf(sb, ">%.3g×</td>", gain);
                else
                    gs_sb_puts(sb, ">—</td>");
                gs_sb_puts(sb, "<td>");
                const cJSON *bp;
                first = 1;
                cJSON_ArrayForEach(bp, jget(t, "params"))
                {
                    if (!first) gs_sb_puts(sb, ", ");
                    h(sb, bp->string);
                    gs_sb_puts(sb, "=");
                    if (cJSON_IsNumber(bp))
                        gs_sb_printf(sb, "%g", bp->valuedouble);
                    else
                        h(sb, cJSON_IsString(bp) ? bp->valuestring : "?");
                    first = 0;
                }
                gs_sb_puts(sb, "</td></tr>\n");
            }
        }
        gs_sb_puts(sb, "</tbody></table></div>\n");
    }
    section_close(sb);
}

/* ---- page ---- */

static const char css[] =
    ":root{--fg:#1a1a1a;--mut:#555;--line:#ccc;--pass:#d9f0e8;--fail:#f7d4c0;--skip:#e8e8e8;"
    "--nofit:#fbe7b8}"
    "*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,"
    "sans-serif;color:var(--fg);margin:0;background:#fff}"
    "header{background:#0b3954;color:#fff;padding:12px 20px}header h1{margin:0;font-size:20px}"
    "nav{position:sticky;top:0;background:#f4f6f8;border-bottom:1px solid var(--line);"
    "padding:6px 20px;z-index:2;display:flex;flex-wrap:wrap;gap:4px 14px}"
    "nav a{color:#0b3954;text-decoration:none;white-space:nowrap}nav a:hover{text-decoration:"
    "underline}main{padding:0 20px 40px;max-width:1500px}"
    "section{margin-top:18px;border-top:2px solid #0b3954;padding-top:4px}h2{font-size:18px;"
    "margin:6px 0}h3{font-size:15px;margin:14px 0 4px}h4{font-size:13px;margin:10px 0 2px;"
    "font-weight:600}"
    "table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid "
    "var(--line);padding:3px 6px;text-align:left;vertical-align:top}thead th{background:#eef1f4;"
    "position:sticky;top:0}table.sortable thead th{cursor:pointer}"
    "th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:"
    "' \\25BC'}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".scroll{overflow-x:auto;max-width:100%}"
    "tr.diff th,tr.diff td{background:#fff4d6}tr.derived th{font-style:italic}"
    ".assumed{color:#8a4b00;font-size:11px;border:1px dashed #8a4b00;padding:0 3px;"
    "border-radius:3px}.src,.override{color:var(--mut);font-size:11px}.override{color:#6a1b6a}"
    ".st{padding:0 5px;border-radius:3px;white-space:nowrap}.st.pass,.cell.pass{background:"
    "var(--pass)}.st.fail,.st.crash,.st.timeout,.st.deadlock,.st.error,.st.unknown,.cell.fail,"
    ".cell.crash,.cell.timeout,.cell.deadlock,.cell.error,.cell.unknown{background:var(--fail)}"
    ".st.unsupported,.cell.unsupported{background:var(--skip)}.st[class~=does-not-fit],"
    ".cell[class~=does-not-fit]{background:var(--nofit)}"
    ".cell{text-align:center;white-space:nowrap}td.none{color:var(--mut)}"
    "tr.bad td:first-child{border-left:4px solid #D55E00}tr.good td:first-child{border-left:"
    "4px solid #0072B2}.warn{color:#a33}"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}dl.facts dt{"
    "color:var(--mut)}dl.facts dd{margin:0}dl.sources dd{margin-left:16px;word-break:break-all;"
    "font-size:12px}"
    ".charts{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}figcaption{font-weight:600}"
    "svg{max-width:100%;height:auto;font-size:11px;font-family:inherit}svg text{fill:#333}"
    "svg .grid{stroke:#e3e3e3}svg .frame{fill:none;stroke:#888}svg .axis{font-size:12px;"
    "fill:#111}svg .ceil{stroke-width:2}svg .bw{stroke:#000}svg .c0{stroke:#CC79A7}svg .c1{"
    "stroke:#0072B2}svg .c2{stroke:#E69F00;stroke-dasharray:5 3}svg .clbl{font-size:10px}"
    "svg .plbl{font-size:10px}svg .curve polyline{fill:none;stroke-width:2}svg .axisl{"
    "stroke:#888}"
    ".legend .sw{font-size:16px;line-height:1}.legend span{margin-right:12px}.note{color:var(--mut);font-size:12px}"
    "details.tl{margin:6px 0}details.tl>summary{cursor:pointer;font-weight:600}"
    "#filters{background:#f9fafb;border:1px solid var(--line);padding:6px 10px;margin-top:10px}"
    "#filters label{margin-right:12px}td.reason{max-width:420px;word-break:break-word}"
    "pre{white-space:pre-wrap;margin:2px 0;font-size:12px}"
    "@media (max-width:900px){main{padding:0 8px}nav{padding:6px 8px}}";

/* Sorting (click or Enter on a header) and filtering (rows carry data-gen/kernel/status, each a
 * '|'-separated list). Works on the rows already in the page; with scripts off nothing is lost
 * but the controls, which stay hidden. */
static const char script[] =
    "(function(){'use strict';"
    "var f=document.getElementById('filters');f.hidden=false;"
    "function key(td){if(!td)return '';var v=td.getAttribute('data-v');"
    "return v===null?td.textContent.trim():v;}"
    "function num(s){return s!==''&&isFinite(s)?parseFloat(s):null;}"
    "function sortBy(th){var t=th.closest('table'),tb=t.tBodies[0],i=th.cellIndex;"
    "var asc=th.getAttribute('aria-sort')!=='ascending';"
    "t.querySelectorAll('thead th').forEach(function(h){h.removeAttribute('aria-sort');});"
    "th.setAttribute('aria-sort',asc?'ascending':'descending');"
    "var rows=Array.prototype.slice.call(tb.rows);"
    "rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);"
    "if(x==='')return y===''?0:1;if(y==='')return -1;var nx=num(x),ny=num(y);"
    "var c=(nx!==null&&ny!==null)?nx-ny:x.localeCompare(y);return asc?c:-c;});"
    "rows.forEach(function(r){tb.appendChild(r);});}"
    "document.querySelectorAll('table.sortable thead th').forEach(function(th){"
    "th.tabIndex=0;th.addEventListener('click',function(){sortBy(th);});"
    "th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){"
    "e.preventDefault();sortBy(th);}});});"
    "function has(r,a,v){if(!v)return true;var s=r.getAttribute(a);"
    "if(s===null||s==='')return true;return s.split('|').indexOf(v)>=0;}"
    "var sel={gen:document.getElementById('f-gen'),kernel:document.getElementById('f-kernel'),"
    "status:document.getElementById('f-status')};"
    "function apply(){var n=0,m=0;document.querySelectorAll('table.filterable tbody tr')"
    ".forEach(function(r){var ok=has(r,'data-gen',sel.gen.value)&&"
    "has(r,'data-kernel',sel.kernel.value)&&has(r,'data-status',sel.status.value);"
    "r.hidden=!ok;m++;if(ok)n++;});"
    "document.getElementById('f-count').textContent=n+' of '+m+' rows shown';}"
    "Object.keys(sel).forEach(function(k){sel[k].addEventListener('change',apply);});"
    "document.getElementById('f-reset').addEventListener('click',function(){"
    "Object.keys(sel).forEach(function(k){sel[k].value='';});apply();});apply();})();";

/* <select> options: every distinct value of a job field, in first-seen order. */
static void filter_select(rep *r, const char *id, const char *label, int field)
{
    gs_sb *sb = r->sb;
    gs_sb_printf(sb, "<label>%s <select id=\"%s\"><option value=\"\">all</option>", label, id);
    for (size_t i = 0; i < r->n_jobs; i++) {
        const char *v = field == 0 ? r->jobs[i].gen : field == 1 ? r->jobs[i].kernel
                                                                 : r->jobs[i].status;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            const char *w = field == 0 ? r->jobs[k].gen : field == 1 ? r->jobs[k].kernel
                                                                     : r->jobs[k].status;
            seen = !strcmp(v, w);
        }
        if (seen) continue;
        gs_sb_puts(sb, "<option value=\"");
        h(sb, v);
        gs_sb_puts(sb, "\">");
        h(sb, v);
        gs_sb_puts(sb, "</option>");
    }
    gs_sb_puts(sb, "</select></label>");
}

static void render_page(rep *r)
{
    gs_sb *sb = r->sb;
    gs_sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<title>gensweep report: ");
    for (int g = 0; g < r->n_gens; g++) {
        if (g) gs_sb_puts(sb, ", ");
        h(sb, r->gens[g]);
    }
    gs_sb_puts(sb, "</title>\n<style>");
    gs_sb_puts(sb, css);
    gs_sb_puts(sb, "</style>\n</head>\n<body>\n<header><h1>gensweep performance report</h1>"
                   "</header>\n<nav aria-label=\"sections\">"
                   "<a href=\"#summary\">Summary</a><a href=\"#generations\">Generations</a>"
                   "<a href=\"#portability\">Portability</a><a href=\"#speedups\">Speedups</a>"
                   "<a href=\"#roofline\">Roofline</a><a href=\"#engines\">Engines</a>"
                   "<a href=\"#timelines\">Timelines</a><a href=\"#correctness\">Correctness</a>"
                   "<a href=\"#baseline\">Baseline</a><a href=\"#variants\">Variants</a>"
                   "<a href=\"#whatif\">What-if</a></nav>\n<main>\n"
                   "<div id=\"filters\" hidden>Filter tables: ");
    filter_select(r, "f-gen", "generation", 0);
    filter_select(r, "f-kernel", "kernel", 1);
    filter_select(r, "f-status", "status", 2);
    gs_sb_puts(sb, "<button type=\"button\" id=\"f-reset\">reset</button> "
                   "<span id=\"f-count\" class=\"note\"></span></div>\n");
    sec_summary(r);
    sec_generations(r);
    sec_portability(r);
    sec_speedups(r);
    sec_roofline(r);
    sec_engines(r);
    sec_timelines(r);
    sec_correctness(r);
    sec_baseline(r);
    sec_variants(r);
    sec_whatif(r);
    gs_sb_puts(sb, "</main>\n<script>");
    gs_sb_puts(sb, script);
    gs_sb_puts(sb, "</script>\n</body>\n</html>\n");
}

gs_status gs_report_render(const char *results_text, const char *results_name,
                           const char *baseline_text, const char *baseline_name,
                           const gs_report_opts *opts, gs_sb *out, gs_error *err)
{
    rep r;
    memset(&r, 0, sizeof r);
    r.results_name = results_name ? results_name : "results";
    r.baseline_name = baseline_name ? baseline_name : "baseline";
    r.regress_pct = opts && opts->regress_pct > 0 ? opts->regress_pct : 2.0;
    r.sb = out;
    cJSON *root = NULL, *broot = NULL;
    gs_status st = parse_results(results_text ? results_text : "", r.results_name, &root, err);
    if (st == GS_OK && baseline_text)
        st = parse_results(baseline_text, r.baseline_name, &broot, err);
    cJSON *extra[GS_REPORT_MAX_EXTRA] = {NULL};
    int n_extra = opts ? opts->n_extra : 0;
    if (st == GS_OK && n_extra > GS_REPORT_MAX_EXTRA)
        st = gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "more than %d what-if/tuning files",
                          GS_REPORT_MAX_EXTRA);
    for (int i = 0; st == GS_OK && i < n_extra; i++)
        st = parse_extra(&r, opts->extra_texts && opts->extra_texts[i] ? opts->extra_texts[i] : "",
                         opts->extra_paths ? opts->extra_paths[i] : "what-if/tuning file",
                         &extra[i], err);
    if (st != GS_OK) goto out;
    r.root = root;
    r.broot = broot;
    const cJSON *c;
    cJSON_ArrayForEach(c, jget(root, "configs"))
    {
        const char *name = jstr(c, "name");
        if (!*name || gen_index(&r, name) >= 0) continue;
        if (r.n_gens == MAX_GENS) {
            st = gs_error_set(err, GS_ERR_INVALID, r.results_name, 0, 0,
                              "more than %d generations in one report", MAX_GENS);
            goto out;
        }
        r.cfg[r.n_gens] = c;
        r.gens[r.n_gens++] = name;
    }
    st = load_jobs(&r, root, r.results_name, &r.jobs, &r.n_jobs, 1, err);
    if (st == GS_OK && broot) st = load_jobs(&r, broot, r.baseline_name, &r.bjobs, &r.n_bjobs, 0, err);
    if (st != GS_OK) goto out;
    if (opts && opts->base_gen) {
        r.base_gen = gen_index(&r, opts->base_gen);
        if (r.base_gen < 0) {
            st = gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                              "--base-gen '%s' is not a generation in %s", opts->base_gen,
                              r.results_name);
            goto out;
        }
    }
    render_page(&r);
    if (!gs_sb_ok(out)) st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
out:
    gs_free(r.jobs);
    gs_free(r.bjobs);
    gs_free(r.rows);
    cJSON_Delete(root);
    cJSON_Delete(broot);
    for (int i = 0; i < GS_REPORT_MAX_EXTRA; i++) cJSON_Delete(extra[i]);
    return st;
}

gs_status gs_report_write_opts(const char *results_json_path, const char *baseline_path_or_NULL,
                               const char *out_html, const gs_report_opts *opts, gs_error *err)
{
    if (!results_json_path || !out_html)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "results and output paths are needed");
    char *text = NULL, *btext = NULL, *etext[GS_REPORT_MAX_EXTRA] = {NULL};
    gs_report_opts o = {NULL, 0, NULL, NULL, 0};
    if (opts) o = *opts;
    gs_status st = GS_OK;
    if (o.n_extra > GS_REPORT_MAX_EXTRA || o.n_extra < 0 || (o.n_extra && !o.extra_paths))
        st = gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "at most %d what-if/tuning files",
                          GS_REPORT_MAX_EXTRA);
    if (st == GS_OK) st = read_file(results_json_path, &text, err);
    if (st == GS_OK && baseline_path_or_NULL) st = read_file(baseline_path_or_NULL, &btext, err);
    for (int i = 0; st == GS_OK && i < o.n_extra; i++) st = read_file(o.extra_paths[i], &etext[i], err);
    o.extra_texts = (const char *const *)etext;
    gs_sb sb;
    gs_sb_init(&sb);
    if (st == GS_OK)
        st = gs_report_render(text, results_json_path, btext, baseline_path_or_NULL, &o, &sb, err);
    if (st == GS_OK) st = gs_sb_write_file(&sb, out_html, err);
    gs_sb_free(&sb);
    gs_free(text);
    gs_free(btext);
    for (int i = 0; i < GS_REPORT_MAX_EXTRA; i++) gs_free(etext[i]);
    return st;
}

gs_status gs_report_write(const char *results_json_path, const char *baseline_path_or_NULL,
                          const char *out_html, gs_error *err)
{
    return gs_report_write_opts(results_json_path, baseline_path_or_NULL, out_html, NULL, err);
}
