/* whatif.c - the what-if study (see whatif.h). */
#include "whatif.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explore_internal.h"
#include "parse.h"
#include "gs/jsonw.h"
#include "record.h"
#include "report.h"
#include "results.h"
#include "speedup.h"

/* One swept parameter: key, unit, configured value and the values to try. */
typedef struct wparam {
    const char *key;
    const char *unit;
    double base;
    char buf[2048];
    char *labels[GS_WHATIF_MAX_VALUES];
    char dirs[GS_WHATIF_MAX_VALUES][80]; /* the label as one directory name (see dir_name) */
    double vals[GS_WHATIF_MAX_VALUES];
    int n;
    int base_i; /* the unchanged value: "1x"/"x1", else the configured value, else 0 */
} wparam;

/* A value's label as one directory name: letters, digits, '.', '-', '+' and '_' are kept,
 * anything else ('/' of GB/s, spaces) becomes '_', so a label never makes a nested or hidden
 * directory. */
static void dir_name(const char *label, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = label; *p && k + 1 < n; p++) {
        const unsigned char c = (unsigned char)*p;
        out[k++] = (isalnum(c) || c == '.' || c == '-' || c == '+' || c == '_') ? (char)c : '_';
    }
    out[k] = '\0';
    if (out[0] == '.') out[0] = '_';
}

/* Validate a --param/--values pair against the config (each value applied before anything
 * runs): no empty value, no value twice (two runs would write one directory). GS_OK, or
 * GS_ERR_USAGE with the problem in d. */
/* The base config (o->config with o->sets) with one more override, applied last. */
static gs_config *load_with_one_more(const gs_whatif_opts *o, const char *assign, gs_diags *d)
{
    const char **all = gs_calloc(o->n_sets + 1, sizeof *all);
    if (!all) {
        gs_diags_add(d, GS_ERR_NOMEM, "--set", 0, 0, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < o->n_sets; i++)
        all[i] = o->sets[i];
    all[o->n_sets] = assign;
    gs_config *c = gs_config_load_with(o->config, all, o->n_sets + 1, d);
    gs_free(all);
    return c;
}

static gs_status whatif_param(const gs_whatif_opts *o, const gs_config *base, const char *key,
                              const char *values, wparam *w, gs_diags *d)
{
    const gs_num *bn = gs_config_get(base, key);
    if (!bn || !bn->src) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                     "--param %s: not a numeric key of %s (see gensweep show-config)", key,
                     o->config);
        return GS_ERR_USAGE;
    }
    w->key = key;
    w->base = bn->v;
    w->unit = "";
    size_t nf = 0;
    const gs_config_field *fields = gs_config_fields(&nf);
    for (size_t i = 0; i < nf; i++)
        if (!strcmp(fields[i].path, key)) w->unit = gs_unit_record_name(fields[i].unit);
    if (strlen(values) >= sizeof w->buf) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--values for %s is too long", key);
        return GS_ERR_USAGE;
    }
    snprintf(w->buf, sizeof w->buf, "%s", values);
    w->n = 0;
    w->base_i = -1;
    for (char *t = w->buf, *next; t; t = next) {
        next = strchr(t, ',');
        if (next) *next++ = '\0';
        if (!*t) {
            gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--values for %s: value %d is empty ('%s')",
                         key, w->n + 1, values);
            return GS_ERR_USAGE;
        }
        if (w->n == GS_WHATIF_MAX_VALUES) {
            gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "at most %d values per parameter",
                         GS_WHATIF_MAX_VALUES);
            return GS_ERR_USAGE;
        }
        if (strlen(t) > 400) {
            gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                         "--values for %s: value %d is longer than 400 characters", key, w->n + 1);
            return GS_ERR_USAGE;
        }
        char assign[512];
        snprintf(assign, sizeof assign, "%.100s=%.400s", key, t);
        gs_config *c = load_with_one_more(o, assign, d);
        if (!c) return GS_ERR_USAGE;
        w->labels[w->n] = t;
        w->vals[w->n] = gs_config_get(c, key)->v;
        dir_name(t, w->dirs[w->n], sizeof w->dirs[w->n]);
        gs_config_free(c);
        for (int i = 0; i < w->n; i++) {
            if (w->vals[i] == w->vals[w->n]) {
                gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                             "--values for %s: '%s' and '%s' are the same value (%.6g %s)", key,
                             w->labels[i], t, w->vals[i], w->unit);
                return GS_ERR_USAGE;
            }
            if (!strcmp(w->dirs[i], w->dirs[w->n])) {
                gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                             "--values for %s: '%s' and '%s' would share the directory '%s'", key,
                             w->labels[i], t, w->dirs[i]);
                return GS_ERR_USAGE;
            }
        }
        if (!strcmp(t, "1x") || !strcmp(t, "x1")) w->base_i = w->n;
        w->n++;
    }
    if (w->n < 2) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--values for %s needs at least two values", key);
        return GS_ERR_USAGE;
    }
    for (int i = 0; i < w->n && w->base_i < 0; i++)
        if (w->vals[i] == w->base) w->base_i = i;
    if (w->base_i < 0) w->base_i = 0;
    return GS_OK;
}

/* The parameter's members of the top-level object ("param", "unit", ...: suffix "" or "2"). */
static void emit_values(gs_jw *jw, const wparam *w, const char *suffix)
{
    char k[32];
    snprintf(k, sizeof k, "param%s", suffix);
    gs_jw_kstr(jw, k, w->key);
    snprintf(k, sizeof k, "unit%s", suffix);
    gs_jw_kstr(jw, k, w->unit);
    snprintf(k, sizeof k, "base_value%s", suffix);
    gs_jw_knum(jw, k, w->base);
    snprintf(k, sizeof k, "values%s", suffix);
    gs_jw_key(jw, k);
    gs_jw_begin_array(jw, GS_JW_LINES_CLOSE);
    for (int v = 0; v < w->n; v++) {
        gs_jw_begin_object(jw, GS_JW_COMPACT);
        gs_jw_kstr(jw, "label", w->labels[v]);
        gs_jw_knum(jw, "value", w->vals[v]);
        gs_jw_end_object(jw);
    }
    gs_jw_end_array(jw);
}

/* Time and status of job `id` in a results document. */
static double job_time(const cJSON *doc, const char *id, const char **status)
{
    const cJSON *q;
    *status = "missing";
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        if (strcmp(gs_json_str(q, "id"), id) != 0) continue;
        *status = gs_json_str(q, "status");
        return gs_json_num(q, "time_ns");
    }
    return NAN;
}

/* End-to-end sensitivity: from the smallest to the largest value with a time. */
static double end_to_end(const double *v, const double *t, int n)
{
    int lo = -1, hi = -1;
    for (int i = 0; i < n; i++) {
        if (!(t[i] > 0) || !(v[i] > 0)) continue;
        if (lo < 0 || v[i] < v[lo]) lo = i;
        if (hi < 0 || v[i] > v[hi]) hi = i;
    }
    return lo >= 0 && hi >= 0 && v[hi] != v[lo] ? log(t[hi] / t[lo]) / log(v[hi] / v[lo])
                                                : (double)NAN;
}

static void json_str_array(gs_jw *w, const char *const *s, int n)
{
    gs_jw_begin_array(w, GS_JW_COMPACT);
    for (int i = 0; i < n; i++)
        gs_jw_str(w, s[i]);
    gs_jw_end_array(w);
}

static void json_num_array(gs_jw *w, const double *v, int n)
{
    gs_jw_begin_array(w, GS_JW_COMPACT);
    for (int i = 0; i < n; i++)
        gs_jw_num(w, v[i]);
    gs_jw_end_array(w);
}

/* One job's row: times per cell (t, st: ncell entries) and the derived sensitivities. */
static void emit_job(gs_jw *jw, const cJSON *j, const wparam *w, int np, const double *t,
                     const char *const *st)
{
    int n1 = w[0].n, n2 = np == 2 ? w[1].n : 1;
    gs_jw_begin_object(jw, GS_JW_COMPACT);
    gs_jw_kstr(jw, "id", gs_json_str(j, "id"));
    gs_jw_kstr(jw, "kernel", gs_json_str(j, "kernel"));
    gs_jw_kstr(jw, "variant", gs_json_str(j, "variant"));
    gs_jw_kstr(jw, "dtype", gs_json_str(j, "dtype"));
    gs_jw_key(jw, "shape");
    gs_json_write(jw, cJSON_GetObjectItemCaseSensitive(j, "shape"));
    if (np == 1) {
        double steps[GS_SPEEDUP_MAX_STEPS];
        int nonmono = 0, inv = 0;
        int ns = gs_sensitivity_steps(w[0].vals, t, n1, gs_param_direction(w[0].unit), steps,
                                      &nonmono, &inv);
        gs_jw_key(jw, "status");
        json_str_array(jw, st, n1);
        gs_jw_key(jw, "time_ns");
        json_num_array(jw, t, n1);
        gs_jw_knum(jw, "sensitivity", end_to_end(w[0].vals, t, n1));
        gs_jw_key(jw, "steps");
        json_num_array(jw, steps, ns);
        gs_jw_kint(jw, "inversions", inv);
        gs_jw_kbool(jw, "non_monotonic", nonmono);
        gs_jw_end_object(jw);
        return;
    }
    /* rows: values of the first param; columns: values of the second */
    gs_jw_key(jw, "status_grid");
    gs_jw_begin_array(jw, GS_JW_COMPACT);
    for (int a = 0; a < n1; a++)
        json_str_array(jw, st + a * n2, n2);
    gs_jw_end_array(jw);
    gs_jw_key(jw, "time_grid");
    gs_jw_begin_array(jw, GS_JW_COMPACT);
    for (int a = 0; a < n1; a++)
        json_num_array(jw, t + a * n2, n2);
    gs_jw_end_array(jw);
    /* each parameter's sensitivity with the other at its unchanged value */
    double row[GS_WHATIF_MAX_VALUES], col[GS_WHATIF_MAX_VALUES];
    for (int a = 0; a < n1; a++)
        row[a] = t[a * n2 + w[1].base_i];
    for (int b = 0; b < n2; b++)
        col[b] = t[w[0].base_i * n2 + b];
    gs_jw_knum(jw, "sensitivity", end_to_end(w[0].vals, row, n1));
    gs_jw_knum(jw, "sensitivity2", end_to_end(w[1].vals, col, n2));
    gs_jw_end_object(jw);
}

/* The whatif.json text: the jobs of the unchanged cell define the rows (ids do not depend on
 * the values). GS_ERR_NOMEM / GS_ERR_INTERNAL (writer misuse) as gs_jw_finish says. */
static gs_status emit_doc(gs_sb *sb, const gs_config *base, const wparam *w, int np,
                          cJSON *const *res, int base_cell, gs_error *err)
{
    int ncell = w[0].n * (np == 2 ? w[1].n : 1);
    gs_jw jw;
    gs_jw_init(&jw, sb);
    gs_jw_begin_object(&jw, GS_JW_LINES);
    gs_jw_kstr(&jw, "schema", "gensweep-whatif");
    gs_jw_kint(&jw, "schema_version", 1);
    gs_jw_kstr(&jw, "config", base->name);
    gs_jw_kstr(&jw, "path", gs_record_rel_path(base->path));
    emit_values(&jw, &w[0], "");
    if (np == 2) emit_values(&jw, &w[1], "2");
    gs_jw_key(&jw, "jobs");
    gs_jw_begin_array(&jw, GS_JW_LINES_CLOSE);
    double *t = gs_calloc((size_t)ncell, sizeof *t);
    const char **st = gs_calloc((size_t)ncell, sizeof *st);
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(res[base_cell], "jobs"))
    {
        if (!t || !st) break;
        const char *id = gs_json_str(j, "id");
        for (int c = 0; c < ncell; c++) {
            st[c] = "missing";
            t[c] = res[c] ? job_time(res[c], id, &st[c]) : (double)NAN;
        }
        emit_job(&jw, j, w, np, t, st);
    }
    if (!t || !st) sb->oom = 1;
    gs_free(t);
    gs_free(st);
    gs_jw_end_array(&jw);
    gs_jw_end_object(&jw);
    gs_sb_putc(sb, '\n');
    return gs_jw_finish(&jw, err);
}

static void progress(const gs_whatif_opts *o, const char *fmt, ...) GS_PRINTF(2, 3);
static void progress(const gs_whatif_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, buf);
}

/* Run every cell's sweep into dirs[c] and load its results into res[c]. GS_ERR_USAGE when a
 * cell's sweep refused its input (it said why). */
static gs_status run_cells(const gs_whatif_opts *o, const wparam *w, int np, const char *out,
                           cJSON **res, char (*dirs)[4096], gs_whatif_result *r, gs_diags *d)
{
    int n1 = w[0].n, n2 = np == 2 ? w[1].n : 1;
    const char **sets = gs_calloc(o->n_sets + 2, sizeof *sets);
    if (!sets) return GS_ERR_NOMEM;
    for (size_t i = 0; i < o->n_sets; i++)
        sets[i] = o->sets[i];
    const char *cl[1] = {o->config};
    gs_status st = GS_OK;
    for (int c = 0; c < n1 * n2; c++) {
        int i1 = c / n2, i2 = c % n2;
        char a1[512], a2[512];
        snprintf(a1, sizeof a1, "%s=%s", w[0].key, w[0].labels[i1]);
        sets[o->n_sets] = a1;
        size_t ns = o->n_sets + 1;
        if (np == 2) {
            snprintf(a2, sizeof a2, "%s=%s", w[1].key, w[1].labels[i2]);
            sets[ns++] = a2;
            snprintf(dirs[c], sizeof dirs[c], "%s/%s_%s", out, w[0].dirs[i1], w[1].dirs[i2]);
            progress(o, "== %s = %s, %s = %s ==\n", w[0].key, w[0].labels[i1], w[1].key,
                     w[1].labels[i2]);
        } else {
            snprintf(dirs[c], sizeof dirs[c], "%s/%s", out, w[0].dirs[i1]);
            progress(o, "== %s = %s ==\n", w[0].key, w[0].labels[i1]);
        }
        gs_sweep_opts ov = o->sweep;
        ov.configs = cl;
        ov.n_configs = 1;
        ov.sets = sets;
        ov.n_sets = ns;
        ov.out_dir = dirs[c];
        int rc = gs_explore_run_sweep(&ov, d);
        if (rc == 2) {
            st = GS_ERR_USAGE;
            break;
        }
        if (rc != 0) r->failed_cells++;
        char p[4200];
        snprintf(p, sizeof p, "%s/results.json", dirs[c]);
        gs_error err;
        gs_error_clear(&err);
        res[c] = gs_results_load(p, &err);
    }
    gs_free(sets);
    return st;
}

/* whatif.json, then a report of the unchanged values' sweep with the curves / heatmap. */
static gs_status write_outputs(const char *out, const char *base_dir, gs_sb *sb,
                               gs_whatif_result *r, gs_diags *d)
{
    snprintf(r->path, sizeof r->path, "%s/whatif.json", out);
    gs_error err;
    gs_error_clear(&err);
    char buf[2048];
    if (gs_sb_write_file(sb, r->path, &err) != GS_OK) {
        gs_error_format(&err, buf, sizeof buf);
        gs_diags_add(d, GS_ERR_IO, NULL, 0, 0, "%s", buf);
        return GS_ERR_IO; /* the study ran: a failure, not a usage error */
    }
    r->written = 1;
    char rp[4200];
    snprintf(rp, sizeof rp, "%s/results.json", base_dir);
    snprintf(r->report, sizeof r->report, "%s/report.html", out);
    const char *extra[1] = {r->path};
    gs_report_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.extra_paths = extra;
    ro.n_extra = 1;
    if (gs_report_write_opts(rp, NULL, r->report, &ro, &err) != GS_OK) {
        gs_error_format(&err, buf, sizeof buf);
        gs_diags_add(d, GS_ERR_IO, NULL, 0, 0, "report: %s", buf);
        return GS_ERR_IO;
    }
    r->report_written = 1;
    return GS_OK;
}

gs_status gs_whatif_run(const gs_whatif_opts *o, gs_whatif_result *r, gs_diags *d)
{
    memset(r, 0, sizeof *r);
    const int np = o->n_params;
    int named = np >= 1 && np <= 2;
    for (int p = 0; named && p < np; p++)
        named = o->param[p] && o->values[p];
    if (!o->config || !named) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                     "need one --config and --param KEY --values LIST (once, or twice for a 2-D "
                     "grid)");
        return GS_ERR_USAGE;
    }
    if (np == 2 && !strcmp(o->param[0], o->param[1])) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "the two --param keys are both %s", o->param[0]);
        return GS_ERR_USAGE;
    }
    const char *out = o->out_dir ? o->out_dir : GS_WHATIF_DEFAULT_OUT;
    gs_config *base = gs_config_load_with(o->config, o->sets, o->n_sets, d);
    if (!base) return GS_ERR_USAGE;
    wparam *w = gs_calloc(2, sizeof *w);
    if (!w) {
        gs_config_free(base);
        return GS_ERR_NOMEM;
    }
    gs_status st = GS_OK;
    for (int p = 0; p < np && st == GS_OK; p++)
        st = whatif_param(o, base, o->param[p], o->values[p], &w[p], d);
    int ncell = w[0].n * (np == 2 ? w[1].n : 1);
    cJSON **res = st == GS_OK ? gs_calloc((size_t)ncell, sizeof *res) : NULL;
    char(*dirs)[4096] = st == GS_OK ? gs_calloc((size_t)ncell, sizeof *dirs) : NULL;
    if (st == GS_OK && (!res || !dirs)) st = GS_ERR_NOMEM;
    if (st == GS_OK) st = run_cells(o, w, np, out, res, dirs, r, d);
    int base_cell = w[0].base_i * (np == 2 ? w[1].n : 1) + (np == 2 ? w[1].base_i : 0);
    if (st == GS_OK && !res[base_cell]) {
        gs_diags_add(d, GS_ERR_IO, NULL, 0, 0, "the unchanged values' sweep left no results");
        st = GS_ERR_IO;
    }
    if (st == GS_OK) {
        gs_sb sb;
        gs_sb_init(&sb);
        gs_error jerr;
        gs_error_clear(&jerr);
        gs_status js = emit_doc(&sb, base, w, np, res, base_cell, &jerr);
        r->doc = js == GS_OK ? cJSON_Parse(gs_sb_cstr(&sb)) : NULL;
        if (js == GS_ERR_INTERNAL) {
            gs_diags_add(d, js, NULL, 0, 0, "whatif.json: %s", jerr.message);
            st = js;
        } else if (!r->doc) {
            gs_diags_add(d, GS_ERR_NOMEM, NULL, 0, 0, "out of memory building whatif.json");
            st = GS_ERR_NOMEM;
        } else {
            st = write_outputs(out, dirs[base_cell], &sb, r, d);
        }
        gs_sb_free(&sb);
    }
    for (int c = 0; res && c < ncell; c++)
        cJSON_Delete(res[c]);
    gs_free(res);
    gs_free(dirs);
    gs_free(w);
    gs_config_free(base);
    return st;
}

void gs_whatif_result_free(gs_whatif_result *r)
{
    if (!r) return;
    cJSON_Delete(r->doc);
    r->doc = NULL;
}
