/* tune.c - the parameter search behind `gensweep tune` (see tune.h). */
#include "tune.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "gs/builder.h"
#include "jobspec.h"
#include "record.h"
#include "results.h"

int gs_tune_candidates(const char *name, const gs_caps *c, int64_t *out)
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
    for (int64_t v = lo; v <= hi && n < GS_TUNE_MAX_CAND; v *= 2)
        out[n++] = v;
    return n;
}

static void progress(const gs_tune_opts *o, const char *fmt, ...) GS_PRINTF(2, 3);
static void progress(const gs_tune_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, buf);
}

static int row_cmp(const void *a, const void *b)
{
    const gs_tune_row *x = a, *y = b;
    int xo = !isnan(x->t) && !strcmp(x->status, "pass");
    int yo = !isnan(y->t) && !strcmp(y->status, "pass");
    if (xo != yo) return yo - xo;
    if (xo && x->t != y->t) return x->t < y->t ? -1 : 1;
    return memcmp(x->p, y->p, sizeof x->p);
}

/* Run a list of param sets; fills rows (time NAN when not pass). Returns 0, 1 when interrupted
 * or the jobs could not run, 2 on a usage error (the sweep's problems appended to d). */
static int run_params(const gs_sweep_opts *o, const gs_job_spec *base,
                      int64_t (*ps)[GS_KERNEL_MAX_PARAMS], int n, gs_tune_row *rows, gs_diags *d)
{
    gs_sweep *s = gs_sweep_create(o, d);
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
    if (!doc && err.code != GS_OK)
        gs_diags_add(d, err.code, err.file[0] ? err.file : NULL, err.line, err.column, "%s",
                     err.message);
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
        cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
        {
            if (strcmp(gs_json_str(j, "id"), gs_sb_cstr(&id)) != 0) continue;
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

void gs_tune_format_params(const gs_tune_result *r, const int64_t *p, char *buf, size_t n)
{
    const gs_kernel_def *k = r->kernel;
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < k->n_params && w < n; i++)
        if (r->used[i])
            w += (size_t)snprintf(buf + w, n - w, "%s%s=%" PRId64, w ? " " : "", k->param_names[i],
                                  p[i]);
    if (!buf[0]) snprintf(buf, n, "default");
}

/* The job spec of the search from the options: kernel, dtype, variant, shape. GS_ERR_USAGE with
 * the problem in d. */
static gs_status make_spec(const gs_tune_opts *o, gs_job_spec *spec, gs_diags *d)
{
    memset(spec, 0, sizeof *spec);
    const gs_kernel_def *k = o->kernel ? gs_suite_find(o->kernel) : NULL;
    if (!o->config || !o->kernel)
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--config and --kernel are required");
    else if (!k)
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "unknown kernel '%s'", o->kernel);
    else if (k->n_params == 0)
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "kernel %s has no tunable params", k->name);
    if (!o->config || !k || k->n_params == 0) return GS_ERR_USAGE;
    spec->kernel = k;
    spec->seed = 1;
    spec->dtype = (k->dtypes & (1u << GS_BF16)) ? GS_BF16 : GS_FP32;
    if (o->dtype && gs_dtype_parse(o->dtype, &spec->dtype) != 0) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "unknown dtype '%s'", o->dtype);
        return GS_ERR_USAGE;
    }
    if (o->variant && (spec->variant = gs_suite_variant(k, o->variant)) < 0) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "kernel %s has no variant '%s'", k->name,
                     o->variant);
        return GS_ERR_USAGE;
    }
    gs_error err;
    gs_error_clear(&err);
    if (o->shape) {
        if (gs_parse_shape(o->shape, spec->dims, GS_SUITE_MAX_DIMS, &spec->n_dims, &err) != 0 ||
            spec->n_dims != k->n_dims) {
            gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "--shape '%s': %s", o->shape,
                         err.message[0] ? err.message : "wrong number of dims");
            return GS_ERR_USAGE;
        }
    } else {
        const gs_shape *sh = k->perf_shapes[0].n ? &k->perf_shapes[0] : &k->check_shapes[0];
        spec->n_dims = sh->n;
        memcpy(spec->dims, sh->d, sizeof spec->dims);
    }
    return GS_OK;
}

/* Whether the kernel refuses spec (its build fails with GS_ERR_INVALID: the shape, params or
 * dtype, which `run` calls a usage error) on the search's config; the refusal goes to d. Only
 * asked after a job errored, so a search that runs builds nothing here. */
static int kernel_refuses(const gs_sweep_opts *so, const gs_job_spec *spec, gs_diags *d)
{
    gs_config *cfg = gs_config_load_with(so->configs[0], so->sets, so->n_sets, NULL);
    if (!cfg) return 0;
    gs_job_spec s = *spec;
    s.cfg = cfg;
    gs_job *job = NULL;
    gs_error err;
    gs_error_clear(&err);
    const int refused = gs_job_build(&s, &job, &err) == GS_ERR_INVALID;
    if (refused) {
        char why[GS_ERROR_MSG_MAX + GS_ERROR_FILE_MAX + 32];
        gs_error_format(&err, why, sizeof why);
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0,
                     "kernel %s refused the arguments (--shape/--dtype): %s", spec->kernel->name,
                     why);
    }
    gs_job_free(job);
    gs_config_free(cfg);
    return refused;
}

/* No variant named: each variant runs once with its default params and the fastest (the most
 * optimised one on this generation and shape) is tuned. */
static gs_status choose_variant(const gs_tune_opts *o, const gs_sweep_opts *so, gs_job_spec *spec,
                                gs_tune_result *r, gs_diags *d)
{
    const gs_kernel_def *k = spec->kernel;
    int64_t zero[1][GS_KERNEL_MAX_PARAMS] = {{0}};
    gs_tune_row vr;
    int best_v = -1, all_errors = 1;
    double best_t = INFINITY;
    progress(o, "tune %s on %s: choosing the variant (each with its default params):", k->name,
             r->generation);
    for (int v = 0; v < k->n_variants; v++) {
        gs_job_spec vs = *spec;
        vs.variant = v;
        if (run_params(so, &vs, zero, 1, &vr, d) == 2) return GS_ERR_USAGE;
        if (!isnan(vr.t))
            progress(o, " %s %.3f us;", k->variants[v], vr.t / 1e3);
        else
            progress(o, " %s %s;", k->variants[v], vr.status);
        if (!isnan(vr.t) && vr.t < best_t) {
            best_t = vr.t;
            best_v = v;
        }
        all_errors &= !strcmp(vr.status, "error");
    }
    if (best_v < 0) {
        progress(o, "\n");
        /* every variant errored: the kernel refusing the shape is the caller's, as in run */
        if (all_errors && kernel_refuses(so, spec, d)) return GS_ERR_USAGE;
        gs_diags_add(d, GS_ERR_UNSUPPORTED, NULL, 0, 0,
                     "no variant of %s runs at this shape on %s with its default params; name "
                     "one with --variant",
                     k->name, r->generation);
        return GS_ERR_UNSUPPORTED;
    }
    spec->variant = best_v;
    progress(o, " tuning %s\n", k->variants[best_v]);
    return GS_OK;
}

/* Which params change the program: a candidate that ran and gave another program than the
 * default (rows[0]); a value the kernel rejects proves nothing. */
static void find_used(gs_tune_result *r, const gs_tune_row *rows, int n)
{
    const gs_kernel_def *k = r->kernel;
    const gs_tune_row *def = &rows[0];
    for (int i = 1; i < n; i++) {
        int p = 0;
        while (p < k->n_params && rows[i].p[p] == 0)
            p++;
        int changed = !isnan(rows[i].t) && (isnan(def->t) || rows[i].t != def->t ||
                                            rows[i].instructions != def->instructions);
        if (p < k->n_params && changed) r->used[p] = 1;
    }
    for (int p = 0; p < k->n_params; p++)
        r->n_used += r->used[p];
}

/* Step 2's param sets into ps2: the full product of the used params when small, else the best
 * of each combined. Returns how many (0 when fewer than two params are used). */
static int combine(const gs_tune_opts *o, const gs_tune_result *r,
                   int64_t (*cand)[GS_TUNE_MAX_CAND], const int *nc, const gs_tune_row *rows, int n,
                   int64_t (*ps2)[GS_KERNEL_MAX_PARAMS])
{
    const gs_kernel_def *k = r->kernel;
    long product = 1;
    for (int p = 0; p < k->n_params; p++)
        if (r->used[p]) product *= nc[p];
    if (r->n_used < 2) return 0;
    int n2 = 0;
    if (product <= GS_TUNE_FULL_PRODUCT_MAX) {
        for (long c = 0; c < product; c++) {
            long rest = c;
            memset(ps2[n2], 0, sizeof ps2[n2]);
            for (int p = 0; p < k->n_params; p++) {
                if (!r->used[p]) continue;
                ps2[n2][p] = cand[p][rest % nc[p]];
                rest /= nc[p];
            }
            n2++;
        }
        progress(o, "then the %d combinations of the used params\n", n2);
        return n2;
    }
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
    progress(o, "then the best of each combined\n");
    return 1;
}

/* Rank the rows and keep one per param set (the default also comes back from the product) and
 * one per program: a set whose time and instruction count equal a better-ranked one's spells
 * the same program (e.g. an explicit value equal to the kernel default). */
static void rank(gs_tune_result *r, gs_tune_row *rows, int n)
{
    const gs_kernel_def *k = r->kernel;
    qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    int w = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int q = 0; q < w && !dup; q++) {
            /* the same values of the params the variant uses: the same program (or the same
             * failure) whatever the others say */
            dup = 1;
            for (int p = 0; p < k->n_params; p++)
                if (r->used[p] && rows[q].p[p] != rows[i].p[p]) dup = 0;
            int same = !isnan(rows[i].t) && rows[q].t == rows[i].t &&
                       rows[q].instructions == rows[i].instructions &&
                       !strcmp(rows[q].status, rows[i].status);
            if (!dup && same) {
                dup = 1;
                r->merged++;
            }
        }
        if (!dup) rows[w++] = rows[i];
    }
    r->n_rows = w;
    r->ok = w > 0 && !isnan(rows[0].t);
}

/* Store the best params in the tuning file (merged into what is there). */
static gs_status write_tuning(const gs_tune_opts *o, const gs_job_spec *spec,
                              const char *cfg_dir_of, gs_tune_result *r, gs_diags *d)
{
    const gs_kernel_def *k = r->kernel;
    const gs_tune_row *best = &r->rows[0];
    char path[4096];
    if (o->write[0]) {
        snprintf(path, sizeof path, "%s", o->write);
    } else {
        const char *slash = strrchr(cfg_dir_of, '/');
        snprintf(path, sizeof path, "%.*s/tuning/%s.json", slash ? (int)(slash - cfg_dir_of) : 1,
                 slash ? cfg_dir_of : ".", r->generation);
    }
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = access(path, R_OK) == 0 ? gs_json_read_file(path, &err) : NULL;
    if (!doc) {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", "gensweep-tuning");
        cJSON_AddNumberToObject(doc, "schema_version", 1);
        cJSON_AddStringToObject(doc, "generation", r->generation);
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
        cJSON_AddNumberToObject(pp, k->param_names[p], (double)best->p[p]);
    cJSON_AddStringToObject(e, "variant", k->variants[spec->variant]);
    cJSON_AddStringToObject(e, "dtype", gs_dtype_name(spec->dtype));
    cJSON *sh = cJSON_AddArrayToObject(e, "shape");
    for (int i = 0; i < spec->n_dims; i++)
        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)spec->dims[i]));
    cJSON_AddNumberToObject(e, "default_ns", r->default_ns);
    cJSON_AddNumberToObject(e, "best_ns", best->t);
    cJSON_AddNumberToObject(e, "gain", r->default_ns / best->t);
    gs_sb sb;
    gs_sb_init(&sb);
    gs_json_emit(&sb, doc);
    gs_sb_putc(&sb, '\n');
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = '\0';
    gs_error_clear(&err);
    gs_status st = GS_OK;
    if ((sl && gs_mkdirs(dir, &err) != GS_OK) || gs_sb_write_file(&sb, path, &err) != GS_OK) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        gs_diags_add(d, GS_ERR_IO, NULL, 0, 0, "%s", buf);
        st = GS_ERR_IO;
    } else {
        snprintf(r->written, sizeof r->written, "%s", path);
    }
    gs_sb_free(&sb);
    cJSON_Delete(doc);
    return st;
}

/* The target's capabilities, for the tile-size candidates. */
static gs_status target_caps(const gs_config *cfg, gs_caps *caps)
{
    gs_program *prog = gs_program_create(cfg);
    gs_kb *kb = prog ? gs_kb_create(prog, 0) : NULL;
    if (kb) *caps = *gs_kb_caps(kb);
    gs_kb_free(kb);
    gs_program_free(prog);
    return kb ? GS_OK : GS_ERR_NOMEM;
}

/* The search once the spec, config and caps are known. */
static gs_status search(const gs_tune_opts *o, const gs_sweep_opts *so, gs_job_spec *spec,
                        const gs_caps *caps, gs_tune_result *r, gs_diags *d)
{
    const gs_kernel_def *k = spec->kernel;
    gs_status st = GS_OK;
    if (!o->variant && k->n_variants > 1) st = choose_variant(o, so, spec, r, d);
    if (st != GS_OK) return st;
    r->variant = spec->variant;
    int64_t cand[GS_KERNEL_MAX_PARAMS][GS_TUNE_MAX_CAND];
    int nc[GS_KERNEL_MAX_PARAMS] = {0};
    int n_single = 0;
    for (int p = 0; p < k->n_params; p++) {
        nc[p] = gs_tune_candidates(k->param_names[p], caps, cand[p]);
        n_single += nc[p] - 1;
    }
    size_t cap = (size_t)GS_TUNE_FULL_PRODUCT_MAX + (size_t)n_single + 2;
    int64_t(*ps)[GS_KERNEL_MAX_PARAMS] = gs_calloc(cap, sizeof *ps);
    r->rows = gs_calloc(cap, sizeof *r->rows);
    if (!ps || !r->rows) {
        gs_free(ps);
        return GS_ERR_NOMEM;
    }
    /* 1: the default and each param alone. A param whose every candidate leaves time and
     * instruction count exactly as the default's is not used by this variant: it is left at its
     * default and out of the search (and of the printed params). */
    int n = 0;
    memset(ps[n++], 0, sizeof ps[0]);
    for (int p = 0; p < k->n_params; p++)
        for (int c = 1; c < nc[p]; c++) {
            memset(ps[n], 0, sizeof ps[n]);
            ps[n][p] = cand[p][c];
            n++;
        }
    progress(o, "tune %s/%s on %s: the default and %d single-param runs (timing only)\n", k->name,
             k->variants[spec->variant], r->generation, n - 1);
    int rc = run_params(so, spec, ps, n, r->rows, d);
    if (rc == 0) {
        find_used(r, r->rows, n);
        if (r->n_used == 0)
            progress(o,
                     "no tunable param changes the %s program at this shape: nothing to "
                     "search\n",
                     k->variants[spec->variant]);
        else {
            progress(o, "params that change the %s program here:", k->variants[spec->variant]);
            for (int p = 0; p < k->n_params; p++)
                if (r->used[p]) progress(o, " %s", k->param_names[p]);
            progress(o, "\n");
        }
        /* 2: the full product of the used params when small, else the best of each combined */
        int n2 = combine(o, r, cand, nc, r->rows, n, ps + n);
        if (n2) rc = run_params(so, spec, ps + n, n2, r->rows + n, d);
        n += n2;
    }
    gs_free(ps);
    if (rc == 2) return GS_ERR_USAGE;
    r->interrupted = rc == 1;
    r->default_ns = r->rows[0].t;
    snprintf(r->default_status, sizeof r->default_status, "%s", r->rows[0].status);
    snprintf(r->default_reason, sizeof r->default_reason, "%s", r->rows[0].reason);
    rank(r, r->rows, n);
    if (!r->interrupted && !strcmp(r->rows[0].status, "error") && kernel_refuses(so, spec, d))
        return GS_ERR_USAGE;
    return GS_OK;
}

gs_status gs_tune_run(const gs_tune_opts *o, gs_tune_result *r, gs_diags *d)
{
    memset(r, 0, sizeof *r);
    r->default_ns = NAN;
    gs_job_spec spec;
    gs_status st = make_spec(o, &spec, d);
    if (st != GS_OK) return st;
    r->kernel = spec.kernel;
    r->variant = spec.variant;
    gs_sweep_opts so = o->sweep;
    const char *cl[1] = {o->config};
    so.no_report = 1;
    so.quiet = 1;
    so.timelines = 0;
    so.configs = cl;
    so.n_configs = 1;
    so.no_tuning = 1; /* candidates are explicit */
    so.out_dir = GS_TUNE_DEFAULT_OUT;
    gs_config *cfg = gs_config_load_with(o->config, NULL, 0, d);
    if (!cfg) return GS_ERR_USAGE;
    snprintf(r->generation, sizeof r->generation, "%s", cfg->name);
    gs_caps caps;
    st = target_caps(cfg, &caps);
    gs_config_free(cfg);
    if (st == GS_OK) st = search(o, &so, &spec, &caps, r, d);
    if (st == GS_OK && r->ok && o->write) st = write_tuning(o, &spec, o->config, r, d);
    return st;
}

void gs_tune_result_free(gs_tune_result *r)
{
    if (!r) return;
    gs_free(r->rows);
    r->rows = NULL;
    r->n_rows = 0;
}
