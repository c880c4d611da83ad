/*
 * cmd_tune.c - `gensweep whatif` (a parameter range, sensitivity of every kernel's time) and
 * `gensweep tune` (search a kernel's tunable params on one generation, timing-only jobs).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "gs/builder.h"
#include "jobspec.h"
#include "record.h"
#include "report.h"
#include "results.h"
#include "speedup.h"
#include "sweep.h"

static int need(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "gensweep %s: option %s needs a value\n", argv[0], argv[*i]);
        return 0;
    }
    (*i)++;
    return 1;
}

static void print_diags(gs_diags *d)
{
    char buf[2048];
    for (size_t i = 0; i < d->count; i++) {
        gs_error_format(&d->items[i], buf, sizeof buf);
        fprintf(stderr, "%s\n", buf);
    }
}

/* Load a config with overrides; NULL after printing the problems. */
static gs_config *load_with(const char *path, const char *const *sets, size_t n_sets,
                            const char *extra)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *c = gs_config_load(path, &d);
    for (size_t i = 0; c && i <= n_sets; i++) {
        const char *a = i < n_sets ? sets[i] : extra;
        if (a && gs_config_set(c, a, &d) != GS_OK) {
            gs_config_free(c);
            c = NULL;
        }
    }
    if (!c) print_diags(&d);
    gs_diags_free(&d);
    return c;
}

void gs_help_whatif(void)
{
    printf("usage: gensweep whatif --config FILE --param KEY --values V1,V2,...\n"
           "                       [--param KEY2 --values W1,W2,...]\n"
           "                       [--kernels LIST] [--suite check|perf] [-j N] [--out DIR]\n"
           "                       [--set KEY=VALUE]... [--timeout S] [--quiet]\n\n"
           "Run the suite once per value of one config parameter (relative 0.5x / x2 or\n"
           "absolute values with units, as --set takes them) and record every job's simulated\n"
           "time per value, its sensitivity (d ln time / d ln value between the smallest and\n"
           "largest value) and the sensitivity of each step between neighbouring values, with\n"
           "inversions (more of a resource made the job slower, or more of a cost faster, by\n"
           "over 1%%) and non-monotonic curves flagged, in DIR/whatif.json (format:\n"
           "harness/RESULTS.md); each value's full results go to DIR/<value>/. With a second\n"
           "--param/--values pair the suite runs on every combination (a 2-D grid, results in\n"
           "DIR/<value>_<value2>/) and the report draws it as a heatmap.\n"
           "Default DIR: build/whatif.\n");
}

#define WHATIF_MAX_VALUES 32

/* One swept parameter: key, unit, configured value and the values to try. */
typedef struct wparam {
    const char *key;
    const char *unit;
    double base;
    char buf[2048];
    char *labels[WHATIF_MAX_VALUES];
    double vals[WHATIF_MAX_VALUES];
    int n;
    int base_i; /* the unchanged value: "1x"/"x1", else the configured value, else 0 */
} wparam;

/* Validate a --param/--values pair against the config (each value applied before anything
 * runs). Returns 0, or -1 after printing the problem. */
static int whatif_param(const char *cfg, const char *const *sets, size_t n_sets,
                        const gs_config *base, const char *key, const char *values, wparam *w)
{
    const gs_num *bn = gs_config_get(base, key);
    if (!bn || !bn->src) {
        fprintf(stderr,
                "gensweep whatif: --param %s: not a numeric key of %s (see gensweep "
                "show-config)\n",
                key, cfg);
        return -1;
    }
    w->key = key;
    w->base = bn->v;
    w->unit = "";
    size_t nf = 0;
    const gs_config_field *fields = gs_config_fields(&nf);
    for (size_t i = 0; i < nf; i++)
        if (!strcmp(fields[i].path, key)) w->unit = gs_record_unit_name(fields[i].unit);
    if (strlen(values) >= sizeof w->buf) {
        fprintf(stderr, "gensweep whatif: --values for %s is too long\n", key);
        return -1;
    }
    snprintf(w->buf, sizeof w->buf, "%s", values);
    w->n = 0;
    w->base_i = -1;
    char *save = NULL;
    for (char *t = strtok_r(w->buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (w->n == WHATIF_MAX_VALUES) {
            fprintf(stderr, "gensweep whatif: at most %d values per parameter\n",
                    WHATIF_MAX_VALUES);
            return -1;
        }
        char assign[512];
        snprintf(assign, sizeof assign, "%s=%s", key, t);
        gs_config *c = load_with(cfg, sets, n_sets, assign);
        if (!c) return -1;
        w->labels[w->n] = t;
        w->vals[w->n] = gs_config_get(c, key)->v;
        if (!strcmp(t, "1x") || !strcmp(t, "x1")) w->base_i = w->n;
        w->n++;
        gs_config_free(c);
    }
    if (w->n < 2) {
        fprintf(stderr, "gensweep whatif: --values for %s needs at least two values\n", key);
        return -1;
    }
    for (int i = 0; i < w->n && w->base_i < 0; i++)
        if (w->vals[i] == w->base) w->base_i = i;
    if (w->base_i < 0) w->base_i = 0;
    return 0;
}

static void emit_values(gs_sb *sb, const wparam *w, const char *suffix)
{
    gs_sb_printf(sb, ",\n\"param%s\": ", suffix);
    gs_sb_json_str(sb, w->key);
    gs_sb_printf(sb, ",\n\"unit%s\": ", suffix);
    gs_sb_json_str(sb, w->unit);
    gs_sb_printf(sb, ",\n\"base_value%s\": ", suffix);
    gs_sb_json_num(sb, w->base);
    gs_sb_printf(sb, ",\n\"values%s\": [", suffix);
    for (int v = 0; v < w->n; v++) {
        gs_sb_puts(sb, v ? ",\n{\"label\":" : "\n{\"label\":");
        gs_sb_json_str(sb, w->labels[v]);
        gs_sb_puts(sb, ",\"value\":");
        gs_sb_json_num(sb, w->vals[v]);
        gs_sb_puts(sb, "}");
    }
    gs_sb_puts(sb, "\n]");
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

int gs_cmd_whatif(int argc, char **argv)
{
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.no_report = 1;
    const char *cfgs[GS_SWEEP_MAX_LIST], *sets[GS_SWEEP_MAX_LIST + 2];
    size_t n_cfg = 0, n_sets = 0;
    const char *param[2] = {NULL, NULL}, *values[2] = {NULL, NULL};
    int np = 0, nvals = 0;
    for (int i = 1; i < argc; i++) {
        int r = gs_sweep_parse_common(argc, argv, &i, &o, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(argv[i], "--param") || !strcmp(argv[i], "--values")) {
            int is_param = !strcmp(argv[i], "--param");
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            if ((is_param ? np : nvals) == 2) {
                fprintf(stderr, "gensweep whatif: at most two --param/--values pairs\n");
                return GS_EXIT_USAGE;
            }
            if (is_param)
                param[np++] = argv[i];
            else
                values[nvals++] = argv[i];
        } else {
            fprintf(stderr, "gensweep whatif: unknown option '%s'\n", argv[i]);
            return GS_EXIT_USAGE;
        }
    }
    if (n_cfg != 1 || !np || np != nvals) {
        fprintf(stderr, "gensweep whatif: need one --config and --param KEY --values LIST (once, "
                        "or twice for a 2-D grid)\n");
        return GS_EXIT_USAGE;
    }
    if (np == 2 && !strcmp(param[0], param[1])) {
        fprintf(stderr, "gensweep whatif: the two --param keys are both %s\n", param[0]);
        return GS_EXIT_USAGE;
    }
    const char *out = o.out_dir ? o.out_dir : "build/whatif";
    gs_config *base = load_with(cfgs[0], sets, n_sets, NULL);
    if (!base) return GS_EXIT_USAGE;
    static wparam w[2];
    for (int p = 0; p < np; p++)
        if (whatif_param(cfgs[0], sets, n_sets, base, param[p], values[p], &w[p]) != 0) {
            gs_config_free(base);
            return GS_EXIT_USAGE;
        }
    int n1 = w[0].n, n2 = np == 2 ? w[1].n : 1, ncell = n1 * n2;
    int rc = GS_EXIT_OK;
    cJSON **res = gs_calloc((size_t)ncell, sizeof *res);
    char(*dirs)[4096] = gs_calloc((size_t)ncell, sizeof *dirs);
    if (!res || !dirs) {
        gs_free(res);
        gs_free(dirs);
        gs_config_free(base);
        return GS_EXIT_FAIL;
    }
    for (int c = 0; c < ncell; c++) {
        int i1 = c / n2, i2 = c % n2;
        char a1[512], a2[512];
        snprintf(a1, sizeof a1, "%s=%s", w[0].key, w[0].labels[i1]);
        sets[n_sets] = a1;
        size_t ns = n_sets + 1;
        if (np == 2) {
            snprintf(a2, sizeof a2, "%s=%s", w[1].key, w[1].labels[i2]);
            sets[ns++] = a2;
            snprintf(dirs[c], sizeof dirs[c], "%s/%s_%s", out, w[0].labels[i1], w[1].labels[i2]);
        } else {
            snprintf(dirs[c], sizeof dirs[c], "%s/%s", out, w[0].labels[i1]);
        }
        gs_sweep_opts ov = o;
        ov.configs = cfgs;
        ov.n_configs = 1;
        ov.sets = sets;
        ov.n_sets = ns;
        ov.out_dir = dirs[c];
        if (!o.quiet) {
            if (np == 2)
                printf("== %s = %s, %s = %s ==\n", w[0].key, w[0].labels[i1], w[1].key,
                       w[1].labels[i2]);
            else
                printf("== %s = %s ==\n", w[0].key, w[0].labels[i1]);
        }
        int r = gs_sweep_main(&ov);
        if (r == GS_EXIT_USAGE) {
            rc = r;
            break;
        }
        if (r != GS_EXIT_OK) rc = GS_EXIT_FAIL;
        char p[4200];
        snprintf(p, sizeof p, "%s/results.json", dirs[c]);
        gs_error err;
        gs_error_clear(&err);
        res[c] = gs_results_load(p, &err);
    }
    int base_cell = w[0].base_i * n2 + (np == 2 ? w[1].base_i : 0);
    if (rc != GS_EXIT_USAGE && res[base_cell]) {
        gs_sb sb;
        gs_sb_init(&sb);
        gs_sb_puts(&sb,
                   "{\n\"schema\": \"gensweep-whatif\",\n\"schema_version\": 1,\n\"config\": ");
        gs_sb_json_str(&sb, base->name);
        gs_sb_puts(&sb, ",\n\"path\": ");
        gs_sb_json_str(&sb, gs_record_rel_path(base->path));
        emit_values(&sb, &w[0], "");
        if (np == 2) emit_values(&sb, &w[1], "2");
        gs_sb_puts(&sb, ",\n\"jobs\": [");
        int flagged = 0;
        if (!o.quiet && np == 1) {
            printf("\n%-52s", "sensitivity of simulated time (us) to");
            printf(" %s:\n%-52s", w[0].key, "job");
            for (int v = 0; v < n1; v++)
                printf(" %10s", w[0].labels[v]);
            printf(" %8s  %s\n", "d ln t/d ln p", "per step");
        }
        /* jobs of the unchanged cell define the rows (ids do not depend on the values) */
        const cJSON *j;
        int first = 1;
        double *t = gs_calloc((size_t)ncell, sizeof *t);
        const char **st = gs_calloc((size_t)ncell, sizeof *st);
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(res[base_cell], "jobs"))
        {
            if (!t || !st) break;
            const char *id = gs_json_str(j, "id");
            for (int c = 0; c < ncell; c++) {
                st[c] = "missing";
                t[c] = res[c] ? job_time(res[c], id, &st[c]) : (double)NAN;
            }
            gs_sb_puts(&sb, first ? "\n{\"id\":" : ",\n{\"id\":");
            first = 0;
            gs_sb_json_str(&sb, id);
            gs_sb_puts(&sb, ",\"kernel\":");
            gs_sb_json_str(&sb, gs_json_str(j, "kernel"));
            gs_sb_puts(&sb, ",\"variant\":");
            gs_sb_json_str(&sb, gs_json_str(j, "variant"));
            gs_sb_puts(&sb, ",\"dtype\":");
            gs_sb_json_str(&sb, gs_json_str(j, "dtype"));
            gs_sb_puts(&sb, ",\"shape\":");
            gs_json_emit(&sb, cJSON_GetObjectItemCaseSensitive(j, "shape"));
            if (np == 1) {
                double steps[GS_SPEEDUP_MAX_STEPS];
                int nonmono = 0, inv = 0;
                int ns = gs_sensitivity_steps(w[0].vals, t, n1, gs_param_direction(w[0].unit),
                                              steps, &nonmono, &inv);
                double sens = end_to_end(w[0].vals, t, n1);
                gs_sb_puts(&sb, ",\"status\":[");
                for (int v = 0; v < n1; v++) {
                    if (v) gs_sb_putc(&sb, ',');
                    gs_sb_json_str(&sb, st[v]);
                }
                gs_sb_puts(&sb, "],\"time_ns\":[");
                for (int v = 0; v < n1; v++) {
                    if (v) gs_sb_putc(&sb, ',');
                    gs_sb_json_num(&sb, t[v]);
                }
                gs_sb_puts(&sb, "],\"sensitivity\":");
                gs_sb_json_num(&sb, sens);
                gs_sb_puts(&sb, ",\"steps\":[");
                for (int s = 0; s < ns; s++) {
                    if (s) gs_sb_putc(&sb, ',');
                    gs_sb_json_num(&sb, steps[s]);
                }
                gs_sb_printf(&sb, "],\"inversions\":%d,\"non_monotonic\":%s}", inv,
                             nonmono ? "true" : "false");
                flagged += inv || nonmono;
                if (!o.quiet) {
                    printf("%-52.52s", id);
                    for (int v = 0; v < n1; v++)
                        printf(" %10.3f", t[v] / 1e3);
                    printf(" %8.3f ", sens);
                    for (int s = 0; s < ns; s++)
                        printf(" %.2f", steps[s]);
                    if (inv) printf("  INVERSION");
                    if (nonmono) printf("  NON-MONOTONIC");
                    printf("\n");
                }
            } else {
                /* rows: values of the first param; columns: values of the second */
                gs_sb_puts(&sb, ",\"status_grid\":[");
                for (int a = 0; a < n1; a++) {
                    gs_sb_puts(&sb, a ? ",[" : "[");
                    for (int b = 0; b < n2; b++) {
                        if (b) gs_sb_putc(&sb, ',');
                        gs_sb_json_str(&sb, st[a * n2 + b]);
                    }
                    gs_sb_putc(&sb, ']');
                }
                gs_sb_puts(&sb, "],\"time_grid\":[");
                for (int a = 0; a < n1; a++) {
                    gs_sb_puts(&sb, a ? ",[" : "[");
                    for (int b = 0; b < n2; b++) {
                        if (b) gs_sb_putc(&sb, ',');
                        gs_sb_json_num(&sb, t[a * n2 + b]);
                    }
                    gs_sb_putc(&sb, ']');
                }
                /* each parameter's sensitivity with the other at its unchanged value */
                double row[WHATIF_MAX_VALUES], col[WHATIF_MAX_VALUES];
                for (int a = 0; a < n1; a++)
                    row[a] = t[a * n2 + w[1].base_i];
                for (int b = 0; b < n2; b++)
                    col[b] = t[w[0].base_i * n2 + b];
                gs_sb_puts(&sb, "],\"sensitivity\":");
                gs_sb_json_num(&sb, end_to_end(w[0].vals, row, n1));
                gs_sb_puts(&sb, ",\"sensitivity2\":");
                gs_sb_json_num(&sb, end_to_end(w[1].vals, col, n2));
                gs_sb_putc(&sb, '}');
                if (!o.quiet) {
                    printf("\n%s: time (us), rows %s, columns %s\n%12s", id, w[0].key, w[1].key,
                           "");
                    for (int b = 0; b < n2; b++)
                        printf(" %10s", w[1].labels[b]);
                    printf("\n");
                    for (int a = 0; a < n1; a++) {
                        printf("%12s", w[0].labels[a]);
                        for (int b = 0; b < n2; b++)
                            printf(" %10.3f", t[a * n2 + b] / 1e3);
                        printf("\n");
                    }
                }
            }
        }
        gs_free(t);
        gs_free(st);
        gs_sb_puts(&sb, "\n]\n}\n");
        if (!o.quiet && np == 1)
            printf("%d jobs with an inversion or a non-monotonic curve\n", flagged);
        char p[4200];
        snprintf(p, sizeof p, "%s/whatif.json", out);
        gs_error err;
        gs_error_clear(&err);
        if (gs_sb_write_file(&sb, p, &err) != GS_OK) {
            char buf[2048];
            gs_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "gensweep whatif: %s\n", buf);
            rc = GS_EXIT_FAIL;
        } else {
            if (!o.quiet) printf("whatif: %s\n", p);
            /* a report of the unchanged values' sweep with the curves / heatmap */
            char rp[4200], html[4200];
            snprintf(rp, sizeof rp, "%s/results.json", dirs[base_cell]);
            snprintf(html, sizeof html, "%s/report.html", out);
            const char *extra[1] = {p};
            gs_report_opts ro;
            memset(&ro, 0, sizeof ro);
            ro.extra_paths = extra;
            ro.n_extra = 1;
            if (gs_report_write_opts(rp, NULL, html, &ro, &err) != GS_OK) {
                char buf[2048];
                gs_error_format(&err, buf, sizeof buf);
                fprintf(stderr, "gensweep whatif: report: %s\n", buf);
                rc = GS_EXIT_FAIL;
            } else if (!o.quiet) {
                printf("report: %s\n", html);
            }
        }
        gs_sb_free(&sb);
    } else if (rc != GS_EXIT_USAGE) {
        fprintf(stderr, "gensweep whatif: the unchanged values' sweep left no results\n");
        rc = GS_EXIT_FAIL;
    }
    for (int c = 0; c < ncell; c++)
        cJSON_Delete(res[c]);
    gs_free(res);
    gs_free(dirs);
    gs_config_free(base);
    return rc;
}

/* ---- tune ---- */

#define TUNE_MAX_CAND 16
#define TUNE_FULL_PRODUCT_MAX 64

/* Candidate values of one tunable, from its name and the target's caps: engine choices 1..3;
 * buffer counts 1..4;
 * tile sizes as powers of two up to the engine limit the name refers to. 0 (the kernel's own
 * default) is always first. */
static int candidates(const char *name, const gs_caps *c, int64_t *out)
{
    int n = 0;
    out[n++] = 0;
    if (strstr(name, "engine")) { /* an engine choice: 1 vector, 2 scalar, 3 gpsimd */
        for (int e = 1; e <= 3; e++)
            out[n++] = e;
        return n;
    }
    if (strstr(name, "buf")) {
        for (int b = 1; b <= 4; b++)
            out[n++] = b;
        return n;
    }
    int64_t lo = 64, hi = GS_MIN((int64_t)c->max_free_sbuf, 8192);
    if (!strcmp(name, "tk") || !strcmp(name, "k")) {
        lo = 32;
        hi = c->pe_rows;
    } else if (!strcmp(name, "tm") || !strcmp(name, "m")) {
        lo = 32;
        hi = c->pe_cols;
    } else if (!strcmp(name, "tn") || !strcmp(name, "n")) {
        hi = c->moving_free_max;
    } else if (strstr(name, "chunk") || strstr(name, "free") || strstr(name, "tile")) {
        lo = 256;
    }
    for (int64_t v = lo; v <= hi && n < TUNE_MAX_CAND; v *= 2)
        out[n++] = v;
    return n;
}

void gs_help_tune(void)
{
    printf("usage: gensweep tune --config FILE --kernel NAME [--shape AxB..] [--variant V]\n"
           "                     [--dtype T] [--top N] [--write [FILE]] [-j N] [--timeout S]\n\n"
           "Search the kernel's tunable params on one generation with timing-only jobs (one\n"
           "process each). Without --variant every variant runs once with its default params\n"
           "and the fastest is tuned. The default and each param alone run first (engine\n"
           "choices 1..3, buffer counts 1..4, tile sizes as powers of two up to the engine\n"
           "limits); a param that never changes the program is not used by the variant and is\n"
           "left out. Then the product of the used params (up to %d combinations) or the best\n"
           "of each combined. Prints the top N (one row per program) with the time against\n"
           "the default and the roofline ratio.\n"
           "--write stores the best params in <config dir>/tuning/<generation>.json (or FILE),\n"
           "which sweeps then use as the kernel's default params (sweep --no-tuning ignores it).\n"
           "The shape defaults to the kernel's first perf shape.\n",
           TUNE_FULL_PRODUCT_MAX);
}

typedef struct tune_row {
    int64_t p[GS_KERNEL_MAX_PARAMS];
    double t;
    double roofline_ratio; /* time / roofline bound (NAN when not passed) */
    double instructions;   /* with t, tells whether a param changed the program */
    char status[32];
    char reason[160];
} tune_row;

static int row_cmp(const void *a, const void *b)
{
    const tune_row *x = a, *y = b;
    int xo = !isnan(x->t) && !strcmp(x->status, "pass");
    int yo = !isnan(y->t) && !strcmp(y->status, "pass");
    if (xo != yo) return yo - xo;
    if (xo && x->t != y->t) return x->t < y->t ? -1 : 1;
    return memcmp(x->p, y->p, sizeof x->p);
}

/* Run a list of param sets; fills rows (time NAN when not pass). Returns 0, 2 on usage. */
static int run_params(const gs_sweep_opts *o, const gs_job_spec *base,
                      int64_t (*ps)[GS_KERNEL_MAX_PARAMS], int n, tune_row *rows)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_sweep *s = gs_sweep_create(o, &d);
    gs_sweep_print_diags(&d);
    gs_diags_free(&d);
    if (!s) return 2;
    gs_job_spec spec = *base;
    for (int i = 0; i < n; i++) {
        memcpy(spec.params, ps[i], sizeof spec.params);
        if (gs_sweep_add(s, 0, &spec, 0) != 0) {
            gs_sweep_free(s);
            return 2;
        }
    }
    int intr = 0;
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_sweep_execute(s, &intr, &err);
    if (!doc) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "gensweep sweep: %s\n", buf);
    }
    for (int i = 0; i < n; i++) {
        memcpy(rows[i].p, ps[i], sizeof rows[i].p);
        rows[i].t = NAN;
        rows[i].roofline_ratio = NAN;
        rows[i].instructions = NAN;
        rows[i].reason[0] = '\0';
        snprintf(rows[i].status, sizeof rows[i].status, "missing");
        gs_sb id;
        gs_sb_init(&id);
        memcpy(spec.params, ps[i], sizeof spec.params);
        spec.cfg = gs_sweep_config(s, 0);
        gs_job_spec_id(&id, &spec);
        const cJSON *j;
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(
                                  doc, "jobs")) if (!strcmp(gs_json_str(j, "id"), gs_sb_cstr(&id)))
        {
            snprintf(rows[i].status, sizeof rows[i].status, "%s", gs_json_str(j, "status"));
            snprintf(rows[i].reason, sizeof rows[i].reason, "%s", gs_json_str(j, "reason"));
            rows[i].instructions = gs_json_num(j, "instructions");
            if (!strcmp(rows[i].status, "pass")) {
                rows[i].t = gs_json_num(j, "time_ns");
                rows[i].roofline_ratio = gs_json_num(j, "roofline_ratio");
            }
        }
        gs_sb_free(&id);
    }
    cJSON_Delete(doc);
    gs_sweep_free(s);
    return intr ? 1 : 0;
}

/* The params the variant uses (used[i]), as "tn=256 bufs=2"; "default" when none. */
static void print_params(const gs_kernel_def *k, const int64_t *p, const int *used, char *buf,
                         size_t n)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < k->n_params && w < n; i++)
        if (used[i])
            w += (size_t)snprintf(buf + w, n - w, "%s%s=%" PRId64, w ? " " : "", k->param_names[i],
                                  p[i]);
    if (!buf[0]) snprintf(buf, n, "default");
}

int gs_cmd_tune(int argc, char **argv)
{
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.progress = gs_sweep_cli_progress;
    o.no_report = 1;
    o.quiet = 1;
    o.timelines = 0;
    const char *cfg_path = NULL, *kname = NULL, *shape = NULL, *variant = NULL, *dtype = NULL;
    const char *write = NULL;
    int top = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--config") || !strcmp(a, "-c")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            cfg_path = argv[i];
        } else if (!strcmp(a, "--kernel") || !strcmp(a, "-k")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            kname = argv[i];
        } else if (!strcmp(a, "--shape") || !strcmp(a, "-s")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            shape = argv[i];
        } else if (!strcmp(a, "--variant")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            variant = argv[i];
        } else if (!strcmp(a, "--dtype")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            dtype = argv[i];
        } else if (!strcmp(a, "--top")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            int64_t v = 0;
            if (gs_parse_int(argv[i], 1, 1000000, &v, NULL) != 0) {
                fprintf(stderr, "gensweep tune: --top needs a positive integer\n");
                return GS_EXIT_USAGE;
            }
            top = (int)v;
        } else if (!strcmp(a, "--write")) {
            write = (i + 1 < argc && argv[i + 1][0] != '-') ? argv[++i] : "";
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            int64_t v = 0;
            if (gs_parse_int(argv[i], 1, 100000, &v, NULL) != 0) {
                fprintf(stderr, "gensweep tune: -j needs a positive integer\n");
                return GS_EXIT_USAGE;
            }
            o.jobs = (int)v;
        } else if (!strcmp(a, "--timeout")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            if (gs_parse_real(argv[i], 0.0, 1e9, &o.timeout_s, NULL) != 0 || !(o.timeout_s > 0)) {
                fprintf(stderr, "gensweep tune: --timeout needs a positive number of seconds\n");
                return GS_EXIT_USAGE;
            }
        } else {
            fprintf(stderr, "gensweep tune: unknown option '%s' (see gensweep tune --help)\n", a);
            return GS_EXIT_USAGE;
        }
    }
    if (!cfg_path || !kname) {
        fprintf(stderr, "gensweep tune: --config and --kernel are required\n");
        return GS_EXIT_USAGE;
    }
    const gs_kernel_def *k = gs_suite_find(kname);
    if (!k) {
        fprintf(stderr, "gensweep tune: unknown kernel '%s'\n", kname);
        return GS_EXIT_USAGE;
    }
    if (k->n_params == 0) {
        fprintf(stderr, "gensweep tune: kernel %s has no tunable params\n", k->name);
        return GS_EXIT_USAGE;
    }
    gs_job_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kernel = k;
    spec.seed = 1;
    spec.dtype = (k->dtypes & (1u << GS_BF16)) ? GS_BF16 : GS_FP32;
    if (dtype && gs_dtype_parse(dtype, &spec.dtype) != 0) {
        fprintf(stderr, "gensweep tune: unknown dtype '%s'\n", dtype);
        return GS_EXIT_USAGE;
    }
    if (variant && (spec.variant = gs_suite_variant(k, variant)) < 0) {
        fprintf(stderr, "gensweep tune: kernel %s has no variant '%s'\n", k->name, variant);
        return GS_EXIT_USAGE;
    }
    gs_error err;
    gs_error_clear(&err);
    if (shape) {
        if (gs_parse_shape(shape, spec.dims, GS_SUITE_MAX_DIMS, &spec.n_dims, &err) != 0 ||
            spec.n_dims != k->n_dims) {
            fprintf(stderr, "gensweep tune: --shape '%s': %s\n", shape,
                    err.message[0] ? err.message : "wrong number of dims");
            return GS_EXIT_USAGE;
        }
    } else {
        const gs_shape *sh = k->perf_shapes[0].n ? &k->perf_shapes[0] : &k->check_shapes[0];
        spec.n_dims = sh->n;
        memcpy(spec.dims, sh->d, sizeof spec.dims);
    }
    const char *cl[1] = {cfg_path};
    o.configs = cl;
    o.n_configs = 1;
    o.no_tuning = 1; /* candidates are explicit */
    o.out_dir = "build/tune";
    gs_config *cfg = load_with(cfg_path, NULL, 0, NULL);
    if (!cfg) return GS_EXIT_USAGE;
    gs_program *prog = gs_program_create(cfg);
    gs_kb *kb = prog ? gs_kb_create(prog, 0) : NULL;
    if (!kb) {
        gs_program_free(prog);
        gs_config_free(cfg);
        return GS_EXIT_FAIL;
    }
    gs_caps caps = *gs_kb_caps(kb);
    gs_kb_free(kb);
    gs_program_free(prog);
    /* no --variant: each variant runs once with its default params and the fastest (the most
     * optimised one on this generation and shape) is tuned */
    if (!variant && k->n_variants > 1) {
        int64_t zero[1][GS_KERNEL_MAX_PARAMS] = {{0}};
        tune_row vr;
        int best_v = -1;
        double best_t = INFINITY;
        printf("tune %s on %s: choosing the variant (each with its default params):", k->name,
               cfg->name);
        for (int v = 0; v < k->n_variants; v++) {
            gs_job_spec vs = spec;
            vs.variant = v;
            if (run_params(&o, &vs, zero, 1, &vr) == 2) {
                gs_config_free(cfg);
                return GS_EXIT_USAGE;
            }
            if (!isnan(vr.t))
                printf(" %s %.3f us;", k->variants[v], vr.t / 1e3);
            else
                printf(" %s %s;", k->variants[v], vr.status);
            if (!isnan(vr.t) && vr.t < best_t) {
                best_t = vr.t;
                best_v = v;
            }
        }
        if (best_v < 0) {
            printf("\n");
            fprintf(stderr,
                    "gensweep tune: no variant of %s runs at this shape on %s with its "
                    "default params; name one with --variant\n",
                    k->name, cfg->name);
            gs_config_free(cfg);
            return GS_EXIT_FAIL;
        }
        spec.variant = best_v;
        printf(" tuning %s\n", k->variants[best_v]);
    }
    int64_t cand[GS_KERNEL_MAX_PARAMS][TUNE_MAX_CAND];
    int nc[GS_KERNEL_MAX_PARAMS];
    int n_single = 0;
    for (int p = 0; p < k->n_params; p++) {
        nc[p] = candidates(k->param_names[p], &caps, cand[p]);
        n_single += nc[p] - 1;
    }
    size_t cap = (size_t)TUNE_FULL_PRODUCT_MAX + (size_t)n_single + 2;
    int64_t(*ps)[GS_KERNEL_MAX_PARAMS] = gs_calloc(cap, sizeof *ps);
    tune_row *rows = gs_calloc(cap, sizeof *rows);
    if (!ps || !rows) {
        gs_free(ps);
        gs_free(rows);
        gs_config_free(cfg);
        return GS_EXIT_FAIL;
    }
    /* 1: the default and each param alone. A param whose every candidate leaves time and
     * instruction count exactly as the default's is not used by this variant: it is left at its
     * default and out of the search (and of the printed params). */
    int n = 0, rc = 0;
    memset(ps[n++], 0, sizeof ps[0]);
    for (int p = 0; p < k->n_params; p++)
        for (int c = 1; c < nc[p]; c++) {
            memset(ps[n], 0, sizeof ps[n]);
            ps[n][p] = cand[p][c];
            n++;
        }
    printf("tune %s/%s on %s: the default and %d single-param runs (timing only)\n", k->name,
           k->variants[spec.variant], cfg->name, n - 1);
    rc = run_params(&o, &spec, ps, n, rows);
    const tune_row *def = &rows[0];
    int used[GS_KERNEL_MAX_PARAMS] = {0}, n_used = 0;
    long product = 1;
    for (int i = 1; i < n && rc == 0; i++) {
        int p = 0;
        while (p < k->n_params && rows[i].p[p] == 0)
            p++;
        /* evidence of use: a candidate that ran and gave another program than the default
         * (a value the kernel rejects proves nothing) */
        int changed = !isnan(rows[i].t) && (isnan(def->t) || rows[i].t != def->t ||
                                            rows[i].instructions != def->instructions);
        if (p < k->n_params && changed) used[p] = 1;
    }
    for (int p = 0; p < k->n_params; p++)
        if (used[p]) {
            n_used++;
            product *= nc[p];
        }
    if (rc == 0 && n_used == 0)
        printf("no tunable param changes the %s program at this shape: nothing to search\n",
               k->variants[spec.variant]);
    else if (rc == 0) {
        printf("params that change the %s program here:", k->variants[spec.variant]);
        for (int p = 0; p < k->n_params; p++)
            if (used[p]) printf(" %s", k->param_names[p]);
        printf("\n");
    }
    /* 2: the full product of the used params when small, else the best of each combined */
    int n2 = 0;
    int64_t(*ps2)[GS_KERNEL_MAX_PARAMS] = ps + n;
    if (rc == 0 && n_used > 1 && product <= TUNE_FULL_PRODUCT_MAX) {
        for (long c = 0; c < product; c++) {
            long r = c;
            memset(ps2[n2], 0, sizeof ps2[n2]);
            for (int p = 0; p < k->n_params; p++) {
                if (!used[p]) continue;
                ps2[n2][p] = cand[p][r % nc[p]];
                r /= nc[p];
            }
            n2++;
        }
        printf("then the %d combinations of the used params\n", n2);
    } else if (rc == 0 && n_used > 1) {
        memset(ps2[0], 0, sizeof ps2[0]);
        for (int p = 0; p < k->n_params; p++) {
            double bt = INFINITY;
            for (int i = 0; i < n; i++) {
                int only_p = 1;
                for (int q = 0; q < k->n_params; q++)
                    if (q != p && rows[i].p[q]) only_p = 0;
                if (only_p && !isnan(rows[i].t) && rows[i].t < bt) {
                    bt = rows[i].t;
                    ps2[0][p] = rows[i].p[p];
                }
            }
        }
        n2 = 1;
        printf("then the best of each combined\n");
    }
    if (rc == 0 && n2) rc = run_params(&o, &spec, ps2, n2, rows + n);
    n += n2;
    if (rc == 2) {
        gs_free(ps);
        gs_free(rows);
        gs_config_free(cfg);
        return GS_EXIT_USAGE;
    }
    double def_t = rows[0].t;
    char def_status[32], def_reason[160];
    snprintf(def_status, sizeof def_status, "%s", rows[0].status);
    snprintf(def_reason, sizeof def_reason, "%s", rows[0].reason);
    qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    /* one row per param set (the default also comes back from the product), and one per
     * program: a set whose time and instruction count equal a better-ranked one's spells the
     * same program (e.g. an explicit value equal to the kernel default) */
    int w = 0, merged = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int q = 0; q < w && !dup; q++) {
            /* the same values of the params the variant uses: the same program (or the same
             * failure) whatever the others say */
            dup = 1;
            for (int p = 0; p < k->n_params; p++)
                if (used[p] && rows[q].p[p] != rows[i].p[p]) dup = 0;
            int same = !isnan(rows[i].t) && rows[q].t == rows[i].t &&
                       rows[q].instructions == rows[i].instructions &&
                       !strcmp(rows[q].status, rows[i].status);
            if (!dup && same) {
                dup = 1;
                merged++;
            }
        }
        if (!dup) rows[w++] = rows[i];
    }
    n = w;
    if (merged)
        printf("(%d param sets gave exactly the program of a better-ranked one: listed once)\n",
               merged);
    char pb[256];
    if (isnan(def_t))
        printf("the kernel default does not run here: %s%s%s\n", def_status,
               def_reason[0] ? ": " : "", def_reason);
    printf("%-4s %-40s %14s %10s %10s\n", "rank", "params (0 = kernel default)", "time us",
           "vs default", "x roofline");
    for (int i = 0; i < n && i < top; i++) {
        print_params(k, rows[i].p, used, pb, sizeof pb);
        if (isnan(rows[i].t)) {
            printf("%-4d %-40s %14s %10s %10s %s\n", i + 1, pb, "-", "-", "-", rows[i].status);
            continue;
        }
        printf("%-4d %-40s %14.3f ", i + 1, pb, rows[i].t / 1e3);
        if (isnan(def_t))
            printf("%10s", "-");
        else
            printf("%9.3fx", def_t / rows[i].t);
        printf(" %9.3fx\n", rows[i].roofline_ratio);
    }
    int ok = n > 0 && !isnan(rows[0].t);
    if (!ok) {
        fprintf(stderr, "gensweep tune: no candidate passed\n");
    } else {
        print_params(k, rows[0].p, used, pb, sizeof pb);
        if (isnan(def_t))
            printf("best: %s  %.3f us (%.3gx the roofline bound) on %s; the default does not "
                   "run here (%s), so there is no gain over it\n",
                   pb, rows[0].t / 1e3, rows[0].roofline_ratio, cfg->name, def_status);
        else
            printf("best: %s  %.3f us vs default %.3f us: %.3fx (%.1f%% less time, %.3gx the "
                   "roofline bound) on %s\n",
                   pb, rows[0].t / 1e3, def_t / 1e3, def_t / rows[0].t,
                   100.0 * (1.0 - rows[0].t / def_t), rows[0].roofline_ratio, cfg->name);
    }
    if (ok && write) {
        char path[4096];
        if (write[0]) {
            snprintf(path, sizeof path, "%s", write);
        } else {
            const char *slash = strrchr(cfg_path, '/');
            snprintf(path, sizeof path, "%.*s/tuning/%s.json", slash ? (int)(slash - cfg_path) : 1,
                     slash ? cfg_path : ".", cfg->name);
        }
        cJSON *doc = access(path, R_OK) == 0 ? gs_json_read_file(path, &err) : NULL;
        if (!doc) {
            doc = cJSON_CreateObject();
            cJSON_AddStringToObject(doc, "schema", "gensweep-tuning");
            cJSON_AddNumberToObject(doc, "schema_version", 1);
            cJSON_AddStringToObject(doc, "generation", cfg->name);
            cJSON_AddObjectToObject(doc, "kernels");
        }
        cJSON *ks = cJSON_GetObjectItemCaseSensitive(doc, "kernels");
        if (!cJSON_IsObject(ks)) {
            cJSON_DeleteItemFromObjectCaseSensitive(doc, "kernels");
            ks = cJSON_AddObjectToObject(doc, "kernels");
        }
        cJSON_DeleteItemFromObjectCaseSensitive(ks, k->name);
        cJSON *e = cJSON_AddObjectToObject(ks, k->name);
        cJSON *pp = cJSON_AddObjectToObject(e, "params");
        for (int p = 0; p < k->n_params; p++)
            cJSON_AddNumberToObject(pp, k->param_names[p], (double)rows[0].p[p]);
        cJSON_AddStringToObject(e, "variant", k->variants[spec.variant]);
        cJSON_AddStringToObject(e, "dtype", gs_dtype_name(spec.dtype));
        cJSON *sh = cJSON_AddArrayToObject(e, "shape");
        for (int d = 0; d < spec.n_dims; d++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)spec.dims[d]));
        cJSON_AddNumberToObject(e, "default_ns", def_t);
        cJSON_AddNumberToObject(e, "best_ns", rows[0].t);
        cJSON_AddNumberToObject(e, "gain", def_t / rows[0].t);
        gs_sb sb;
        gs_sb_init(&sb);
        gs_json_emit(&sb, doc);
        gs_sb_putc(&sb, '\n');
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *sl = strrchr(dir, '/');
        if (sl) *sl = '\0';
        gs_error_clear(&err);
        if ((sl && gs_mkdirs(dir, &err) != GS_OK) || gs_sb_write_file(&sb, path, &err) != GS_OK) {
            char buf[2048];
            gs_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "gensweep tune: %s\n", buf);
            rc = 1;
        } else {
            printf("wrote %s (sweeps of %s now use these params for %s)\n", path, cfg->name,
                   k->name);
        }
        gs_sb_free(&sb);
        cJSON_Delete(doc);
    }
    gs_free(ps);
    gs_free(rows);
    gs_config_free(cfg);
    return rc || !ok ? GS_EXIT_FAIL : GS_EXIT_OK;
}
