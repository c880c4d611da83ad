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
#include "gs/kernel.h"
#include "record.h"
#include "report.h"
#include "results.h"
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
           "                       [--kernels LIST] [--suite check|perf] [-j N] [--out DIR]\n"
           "                       [--set KEY=VALUE]... [--timeout S] [--quiet]\n\n"
           "Run the suite once per value of one config parameter (relative 0.5x / x2 or\n"
           "absolute values with units, as --set takes them) and record every job's simulated\n"
           "time per value and its sensitivity (d ln time / d ln value between the smallest and\n"
           "largest value) in DIR/whatif.json (format: harness/RESULTS.md); each value's full\n"
           "results go to DIR/<value>/. Default DIR: build/whatif.\n");
}

int gs_cmd_whatif(int argc, char **argv)
{
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
    o.no_report = 1;
    const char *cfgs[GS_SWEEP_MAX_LIST], *sets[GS_SWEEP_MAX_LIST + 1];
    size_t n_cfg = 0, n_sets = 0;
    const char *param = NULL, *values = NULL;
    for (int i = 1; i < argc; i++) {
        int r = gs_sweep_parse_common(argc, argv, &i, &o, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(argv[i], "--param")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            param = argv[i];
        } else if (!strcmp(argv[i], "--values")) {
            if (!need(argc, argv, &i)) return GS_EXIT_USAGE;
            values = argv[i];
        } else {
            fprintf(stderr, "gensweep whatif: unknown option '%s'\n", argv[i]);
            return GS_EXIT_USAGE;
        }
    }
    if (n_cfg != 1 || !param || !values) {
        fprintf(stderr, "gensweep whatif: need one --config, --param KEY and --values LIST\n");
        return GS_EXIT_USAGE;
    }
    const char *out = o.out_dir ? o.out_dir : "build/whatif";
    gs_config *base = load_with(cfgs[0], sets, n_sets, NULL);
    if (!base) return GS_EXIT_USAGE;
    const gs_num *bn = gs_config_get(base, param);
    if (!bn || !bn->src) {
        fprintf(stderr,
                "gensweep whatif: --param %s: not a numeric key of %s (see gensweep "
                "show-config)\n",
                param, cfgs[0]);
        gs_config_free(base);
        return GS_EXIT_USAGE;
    }
    size_t nf = 0;
    const gs_config_field *fields = gs_config_fields(&nf);
    const char *unit = "";
    for (size_t i = 0; i < nf; i++)
        if (!strcmp(fields[i].path, param)) unit = gs_record_unit_name(fields[i].unit);
    /* values: validate each by applying it before running anything */
    char vbuf[2048];
    snprintf(vbuf, sizeof vbuf, "%s", values);
    char *labels[32];
    double vals[32];
    int nv = 0;
    char *save = NULL;
    for (char *t = strtok_r(vbuf, ",", &save); t && nv < 32; t = strtok_r(NULL, ",", &save)) {
        char assign[512];
        snprintf(assign, sizeof assign, "%s=%s", param, t);
        gs_config *c = load_with(cfgs[0], sets, n_sets, assign);
        if (!c) {
            gs_config_free(base);
            return GS_EXIT_USAGE;
        }
        labels[nv] = t;
        vals[nv++] = gs_config_get(c, param)->v;
        gs_config_free(c);
    }
    if (nv < 2) {
        fprintf(stderr, "gensweep whatif: --values needs at least two values\n");
        gs_config_free(base);
        return GS_EXIT_USAGE;
    }
    int rc = GS_EXIT_OK;
    cJSON *res[32] = {0};
    char dirs[32][4096];
    for (int v = 0; v < nv; v++) {
        char assign[512];
        snprintf(assign, sizeof assign, "%s=%s", param, labels[v]);
        sets[n_sets] = assign;
        gs_sweep_opts ov = o;
        ov.configs = cfgs;
        ov.n_configs = 1;
        ov.sets = sets;
        ov.n_sets = n_sets + 1;
        snprintf(dirs[v], sizeof dirs[v], "%s/%s", out, labels[v]);
        ov.out_dir = dirs[v];
        if (!o.quiet) printf("== %s = %s ==\n", param, labels[v]);
        int r = gs_sweep_main(&ov);
        if (r == GS_EXIT_USAGE) {
            rc = r;
            break;
        }
        if (r != GS_EXIT_OK) rc = GS_EXIT_FAIL;
        char p[4200];
        snprintf(p, sizeof p, "%s/results.json", dirs[v]);
        gs_error err;
        gs_error_clear(&err);
        res[v] = gs_results_load(p, &err);
    }
    if (rc != GS_EXIT_USAGE) {
        gs_sb sb;
        gs_sb_init(&sb);
        gs_sb_puts(&sb,
                   "{\n\"schema\": \"gensweep-whatif\",\n\"schema_version\": 1,\n\"config\": ");
        gs_sb_json_str(&sb, base->name);
        gs_sb_puts(&sb, ",\n\"path\": ");
        gs_sb_json_str(&sb, gs_record_rel_path(base->path));
        gs_sb_puts(&sb, ",\n\"param\": ");
        gs_sb_json_str(&sb, param);
        gs_sb_puts(&sb, ",\n\"unit\": ");
        gs_sb_json_str(&sb, unit);
        gs_sb_puts(&sb, ",\n\"base_value\": ");
        gs_sb_json_num(&sb, bn->v);
        gs_sb_puts(&sb, ",\n\"values\": [");
        for (int v = 0; v < nv; v++) {
            gs_sb_puts(&sb, v ? ",\n{\"label\":" : "\n{\"label\":");
            gs_sb_json_str(&sb, labels[v]);
            gs_sb_puts(&sb, ",\"value\":");
            gs_sb_json_num(&sb, vals[v]);
            gs_sb_puts(&sb, ",\"results\":");
            gs_sb_json_str(&sb, labels[v]);
            gs_sb_puts(&sb, "}");
        }
        gs_sb_puts(&sb, "\n],\n\"jobs\": [");
        if (!o.quiet) {
            printf("\n%-52s", "sensitivity of simulated time (us) to");
            printf(" %s:\n%-52s", param, "job");
            for (int v = 0; v < nv; v++)
                printf(" %10s", labels[v]);
            printf(" %8s\n", "d ln t/d ln p");
        }
        /* jobs of the first value define the rows (ids do not depend on the value) */
        const cJSON *j;
        int first = 1;
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(res[0], "jobs"))
        {
            const char *id = gs_json_str(j, "id");
            double t[32];
            const char *st[32];
            for (int v = 0; v < nv; v++) {
                t[v] = NAN;
                st[v] = "missing";
                const cJSON *q;
                cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(
                                          res[v], "jobs")) if (!strcmp(gs_json_str(q, "id"), id))
                {
                    t[v] = gs_json_num(q, "time_ns");
                    st[v] = gs_json_str(q, "status");
                }
            }
            int lo = -1, hi = -1;
            for (int v = 0; v < nv; v++) {
                if (isnan(t[v]) || !(t[v] > 0) || !(vals[v] > 0)) continue;
                if (lo < 0 || vals[v] < vals[lo]) lo = v;
                if (hi < 0 || vals[v] > vals[hi]) hi = v;
            }
            double sens = lo >= 0 && hi >= 0 && vals[hi] != vals[lo]
                              ? log(t[hi] / t[lo]) / log(vals[hi] / vals[lo])
                              : NAN;
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
            gs_sb_puts(&sb, ",\"status\":[");
            for (int v = 0; v < nv; v++) {
                if (v) gs_sb_putc(&sb, ',');
                gs_sb_json_str(&sb, st[v]);
            }
            gs_sb_puts(&sb, "],\"time_ns\":[");
            for (int v = 0; v < nv; v++) {
                if (v) gs_sb_putc(&sb, ',');
                gs_sb_json_num(&sb, t[v]);
            }
            gs_sb_puts(&sb, "],\"sensitivity\":");
            gs_sb_json_num(&sb, sens);
            gs_sb_putc(&sb, '}');
            if (!o.quiet) {
                printf("%-52.52s", id);
                for (int v = 0; v < nv; v++)
                    printf(" %10.3f", t[v] / 1e3);
                printf(" %8.3f\n", sens);
            }
        }
        gs_sb_puts(&sb, "\n]\n}\n");
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
            /* a report of the unchanged value's sweep (1x, else the first) with the curves */
            int bi = 0;
            for (int v = 0; v < nv; v++)
                if (!strcmp(labels[v], "1x") || !strcmp(labels[v], "x1")) bi = v;
            char rp[4200], html[4200];
            snprintf(rp, sizeof rp, "%s/results.json", dirs[bi]);
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
    }
    for (int v = 0; v < nv; v++)
        cJSON_Delete(res[v]);
    gs_config_free(base);
    return rc;
}

/* ---- tune ---- */

#define TUNE_MAX_CAND 16
#define TUNE_FULL_PRODUCT_MAX 64

/* Candidate values of one tunable, from its name and the target's caps: buffer counts 1..4;
 * tile sizes as powers of two up to the engine limit the name refers to. 0 (the kernel's own
 * default) is always first. */
static int candidates(const char *name, const gs_caps *c, int64_t *out)
{
    int n = 0;
    out[n++] = 0;
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
           "process each): buffer counts 1..4, tile sizes as powers of two up to the engine\n"
           "limits (full product up to %d combinations, else one param at a time and then the\n"
           "best of each combined). Prints the best and the top N against the kernel default.\n"
           "--write stores the best params in <config dir>/tuning/<generation>.json (or FILE),\n"
           "which sweeps then use as the kernel's default params (sweep --no-tuning ignores it).\n"
           "The shape defaults to the kernel's first perf shape.\n",
           TUNE_FULL_PRODUCT_MAX);
}

typedef struct tune_row {
    int64_t p[GS_KERNEL_MAX_PARAMS];
    double t;
    char status[32];
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
    gs_sweep *s = gs_sweep_create(o);
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
    cJSON *doc = gs_sweep_execute(s, &intr);
    for (int i = 0; i < n; i++) {
        memcpy(rows[i].p, ps[i], sizeof rows[i].p);
        rows[i].t = NAN;
        snprintf(rows[i].status, sizeof rows[i].status, "missing");
        gs_sb id;
        gs_sb_init(&id);
        memcpy(spec.params, ps[i], sizeof spec.params);
        spec.cfg = gs_sweep_config(s, 0);
        gs_record_job_id(&id, &spec);
        const cJSON *j;
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(
                                  doc, "jobs")) if (!strcmp(gs_json_str(j, "id"), gs_sb_cstr(&id)))
        {
            snprintf(rows[i].status, sizeof rows[i].status, "%s", gs_json_str(j, "status"));
            if (!strcmp(rows[i].status, "pass")) rows[i].t = gs_json_num(j, "time_ns");
        }
        gs_sb_free(&id);
    }
    cJSON_Delete(doc);
    gs_sweep_free(s);
    return intr ? 1 : 0;
}

static void print_params(const gs_kernel_def *k, const int64_t *p, char *buf, size_t n)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < k->n_params && w < n; i++)
        w += (size_t)snprintf(buf + w, n - w, "%s%s=%" PRId64, i ? " " : "", k->param_names[i],
                              p[i]);
}

int gs_cmd_tune(int argc, char **argv)
{
    gs_sweep_opts o;
    gs_sweep_opts_default(&o);
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
    int64_t cand[GS_KERNEL_MAX_PARAMS][TUNE_MAX_CAND];
    int nc[GS_KERNEL_MAX_PARAMS];
    long product = 1;
    for (int p = 0; p < k->n_params; p++) {
        nc[p] = candidates(k->param_names[p], &caps, cand[p]);
        product *= nc[p];
    }
    int64_t(*ps)[GS_KERNEL_MAX_PARAMS] =
        gs_calloc(TUNE_FULL_PRODUCT_MAX + 16 * GS_KERNEL_MAX_PARAMS, sizeof *ps);
    tune_row *rows = gs_calloc(TUNE_FULL_PRODUCT_MAX + 16 * GS_KERNEL_MAX_PARAMS + 1, sizeof *rows);
    if (!ps || !rows) {
        gs_free(ps);
        gs_free(rows);
        gs_config_free(cfg);
        return GS_EXIT_FAIL;
    }
    int n = 0, rc = 0;
    if (product <= TUNE_FULL_PRODUCT_MAX) {
        for (long c = 0; c < product; c++) {
            long r = c;
            for (int p = 0; p < k->n_params; p++) {
                ps[n][p] = cand[p][r % nc[p]];
                r /= nc[p];
            }
            n++;
        }
        printf("tune %s on %s: %d combinations (timing only, -j %d)\n", k->name, cfg->name, n,
               o.jobs > 0 ? o.jobs : 0);
        rc = run_params(&o, &spec, ps, n, rows);
    } else {
        /* one param at a time around the default, then the best of each combined */
        for (int p = 0; p < k->n_params; p++)
            for (int c = (p ? 1 : 0); c < nc[p]; c++) {
                memset(ps[n], 0, sizeof ps[n]);
                ps[n][p] = cand[p][c];
                n++;
            }
        printf("tune %s on %s: %d single-param runs + 1 combined (timing only)\n", k->name,
               cfg->name, n);
        rc = run_params(&o, &spec, ps, n, rows);
        int64_t best[GS_KERNEL_MAX_PARAMS] = {0};
        for (int p = 0; p < k->n_params; p++) {
            double bt = INFINITY;
            for (int i = 0; i < n; i++) {
                int only_p = 1;
                for (int q = 0; q < k->n_params; q++)
                    if (q != p && rows[i].p[q]) only_p = 0;
                if (only_p && !isnan(rows[i].t) && rows[i].t < bt) {
                    bt = rows[i].t;
                    best[p] = rows[i].p[p];
                }
            }
        }
        memcpy(ps[n], best, sizeof best);
        if (rc == 0) rc = run_params(&o, &spec, ps + n, 1, rows + n);
        n++;
    }
    if (rc == 2) {
        gs_free(ps);
        gs_free(rows);
        gs_config_free(cfg);
        return GS_EXIT_USAGE;
    }
    double def_t = NAN;
    for (int i = 0; i < n; i++) {
        int zero = 1;
        for (int p = 0; p < k->n_params; p++)
            zero &= rows[i].p[p] == 0;
        if (zero) def_t = rows[i].t;
    }
    qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    char pb[256];
    printf("%-4s %-40s %14s %10s\n", "rank", "params", "time us", "vs default");
    for (int i = 0; i < n && i < top; i++) {
        print_params(k, rows[i].p, pb, sizeof pb);
        printf("%-4d %-40s %14.3f %9.3fx %s\n", i + 1, pb, rows[i].t / 1e3, def_t / rows[i].t,
               strcmp(rows[i].status, "pass") ? rows[i].status : "");
    }
    int ok = n > 0 && !isnan(rows[0].t);
    if (!ok || isnan(def_t)) {
        fprintf(stderr, "gensweep tune: %s\n",
                ok ? "the default params did not run; no gain to report" : "no candidate passed");
    } else {
        print_params(k, rows[0].p, pb, sizeof pb);
        printf("best: %s  %.3f us vs default %.3f us: %.3fx (%.1f%% less time) on %s\n", pb,
               rows[0].t / 1e3, def_t / 1e3, def_t / rows[0].t, 100.0 * (1.0 - rows[0].t / def_t),
               cfg->name);
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
