/*
 * calibrate_fit.c - running a loaded calibration file's cases (timing-only jobs through the sweep
 * library), comparing each with its measurement, and fitting named [assumed] parameters per
 * generation by coordinate descent on the squared log error (see calibrate.h). Loading the
 * case file is calibrate.c's.
 */
#include "calibrate_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs/strbuf.h"
#include "gs/units.h"
#include "jobspec.h"
#include "proc.h"
#include "record.h"
#include "results.h"

/* Pull towards the starting value (squared log distance), small next to a case's error: it
 * only decides between values the cases cannot tell apart. */
#define CAL_PRIOR_WEIGHT 1e-3
/* Search range of a fitted value: its starting value / and x this factor (values may be 0:
 * the search runs over log(1 + v / unit)). */
#define CAL_RANGE 64.0

/* ---- running ---- */

/* A config value as a --set assignment in base units ("core.dma.fixed_latency=123.5ns"). */
static void set_text(char *buf, size_t size, const char *key, gs_unit u, double v)
{
    snprintf(buf, size, "%s=%.17g%s", key, v, gs_unit_base_name(u));
}

typedef struct cal_point {
    size_t n_keys;
    const char *keys[16];
    gs_unit units[16];
    double v[16];
} cal_point;

/* The job of case k on config cfg; rep 1 is a per_step case's second run (dims[0] doubled). */
static gs_job_spec case_spec(const cal_case *k, const gs_config *cfg, int rep)
{
    gs_job_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.cfg = cfg;
    spec.kernel = k->kernel;
    spec.variant = k->variant;
    spec.dtype = k->dtype;
    spec.n_dims = k->n_dims;
    memcpy(spec.dims, k->dims, sizeof spec.dims);
    if (rep) spec.dims[0] *= 2;
    memcpy(spec.params, k->params, sizeof spec.params);
    spec.seed = 1;
    return spec;
}

/* Is case k run by this pass? (fit_only: the fit's own evaluations, which need only the fit
 * cases; the validation cases are rerun once at the fitted values.) */
static int case_runs(const cal_case *k, size_t g, int fit_only)
{
    return k->cfg == g && (!fit_only || k->role == CAL_ROLE_FIT);
}

/* The mirror file of an NKI case, or "" with why (the case's skip reason) when the mirror's
 * variable is unset or the file is not there: a case file's NKI cases run where the mirrors are
 * and are said skipped elsewhere (CI without them still checks the cases it has). */
static int nki_file(const cal_nki *n, char *path, size_t size, char *why, size_t why_size)
{
    const char *root = getenv(n->mirror);
    path[0] = '\0';
    if (!root || !*root) {
        snprintf(why, why_size, "skipped: $%s not set", n->mirror);
        return 0;
    }
    struct stat sb;
    int len = snprintf(path, size, "%s/%s", root, n->file);
    if (len < 0 || (size_t)len >= size || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(why, why_size, "skipped: $%s/%s: no such file", n->mirror, n->file);
        path[0] = '\0';
        return 0;
    }
    return 1;
}

/* Run NKI case i as `gensweep nki run FILE --kernel K --config CFG --arg ... --json` in a child
 * process (this binary: the same code path as the command), its record on stdout in a file of
 * the scratch directory. Fills *model_ns from the record's time_ns or time_with_launch_ns. */
static gs_status run_nki_case(gs_calib *c, size_t i, const char *cfg_path, const char *const *sets,
                              size_t n_sets, double *model_ns, gs_error *err)
{
    const cal_case *k = &c->cases[i];
    const cal_nki *n = k->nki;
    char file[PATH_MAX];
    if (!nki_file(n, file, sizeof file, c->skipped[i], sizeof c->skipped[i])) return GS_OK;
    char exe[PATH_MAX];
    const ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el <= 0)
        return gs_error_set(err, GS_ERR_IO, NULL, 0, 0,
                            "cannot find its own binary (/proc/self/exe): %s", strerror(errno));
    exe[el] = '\0';
    char out[PATH_MAX], errf[PATH_MAX], wall[32];
    snprintf(out, sizeof out, "%s/nki-case-%zu.json", c->o.out_dir, i);
    snprintf(errf, sizeof errf, "%s/nki-case-%zu.err", c->o.out_dir, i);
    const double limit = c->o.timeout_s > 0 ? c->o.timeout_s : GS_SWEEP_DEFAULT_TIMEOUT;
    snprintf(wall, sizeof wall, "%g", limit);
    const char *argv[24 + 2 * CAL_NKI_MAX_ARGS + 2 * GS_SWEEP_MAX_LIST];
    size_t a = 0;
    argv[a++] = exe;
    argv[a++] = "nki";
    argv[a++] = "run";
    argv[a++] = file;
    argv[a++] = "--kernel";
    argv[a++] = n->kernel;
    argv[a++] = "--config";
    argv[a++] = cfg_path;
    if (n->grid[0]) argv[a++] = "--grid", argv[a++] = n->grid;
    for (int j = 0; j < n->n_args; j++)
        argv[a++] = "--arg", argv[a++] = n->args[j];
    for (size_t j = 0; j < n_sets; j++)
        argv[a++] = "--set", argv[a++] = sets[j];
    if (n->reference[0])
        argv[a++] = "--reference", argv[a++] = n->reference;
    else
        argv[a++] = "--timing-only";
    argv[a++] = "--json";
    argv[a++] = "--wall-limit";
    argv[a++] = wall;
    argv[a] = NULL;
    gs_proc_opts po;
    memset(&po, 0, sizeof po);
    po.kind = GS_PROC_EXEC;
    po.exe = exe;
    po.argv = argv;
    po.out = GS_PROC_FILE;
    po.out_path = out;
    po.err = GS_PROC_FILE;
    po.err_path = errf;
    po.tail_bytes = 1024;
    po.timeout_s = 2 * limit + 10; /* the child holds its own limits; this is a backstop */
    po.exec_fail_who = "gensweep calibrate";
    gs_proc *proc = gs_proc_start(&po);
    if (!proc)
        return gs_error_set(err, GS_ERR_IO, c->path, k->line, 0,
                            "case %s: cannot start %s nki run: %s", k->name, exe, strerror(errno));
    const gs_proc_result *r = gs_proc_wait(proc);
    char tail[1024];
    snprintf(tail, sizeof tail, "%s", r->tail ? r->tail : "");
    const int exited = r->exited, code = r->exit_code, sig = r->signal;
    gs_proc_free(proc);
    cJSON *rec = NULL;
    {
        FILE *f = fopen(out, "rb");
        gs_sb sb;
        gs_sb_init(&sb);
        char buf[8192];
        size_t got;
        while (f && (got = fread(buf, 1, sizeof buf, f)) > 0)
            gs_sb_putn(&sb, buf, got);
        if (f) fclose(f);
        rec = gs_sb_ok(&sb) ? cJSON_Parse(gs_sb_cstr(&sb)) : NULL;
        gs_sb_free(&sb);
    }
    unlink(out);
    unlink(errf);
    const char *status = rec ? gs_json_str(rec, "status") : "";
    if (!exited || code != 0 || strcmp(status, "pass") != 0) {
        /* the first line of the child's complaint: its last lines, as it wrote them */
        gs_status st =
            gs_error_set(err, GS_ERR_INVALID, c->path, k->line, 0,
                         "case %s: gensweep nki run %s (%s) did not pass (%s%s%s): %s", k->name,
                         n->file, n->kernel,
                         !exited     ? "killed by "
                         : status[0] ? "status "
                                     : "exit status ",
                         !exited     ? gs_proc_signal_name(sig)
                         : status[0] ? status
                                     : "",
                         exited && !status[0] ? (code == 2 ? "2: could not be traced" : "1") : "",
                         tail[0] ? tail
                         : rec   ? gs_json_str(rec, "reason")
                                 : "no output");
        cJSON_Delete(rec);
        return st;
    }
    *model_ns =
        gs_json_num(rec, k->measure == CAL_KERNEL_WITH_LAUNCH ? "time_with_launch_ns" : "time_ns");
    cJSON_Delete(rec);
    return GS_OK;
}

/* Run the cases of generation `cfg` (every case when cfg == SIZE_MAX; only the fit cases when
 * fit_only) at point p; fills model[i] (ns, NAN when not run) and engines[i]. Returns GS_OK, or
 * an error when a job did not pass. */
static gs_status run_cases_in(gs_calib *c, size_t cfg, const cal_point *p, int fit_only,
                              double *model, unsigned *engines, gs_error *err)
{
    gs_status result = GS_OK;
    const size_t ncfg = gs_sweep_config_count(c->cfgs);
    for (size_t g = 0; g < ncfg; g++) {
        if (cfg != SIZE_MAX && g != cfg) continue;
        int any = 0, any_nki = 0;
        for (size_t i = 0; i < c->n; i++) {
            const int runs = case_runs(&c->cases[i], g, fit_only);
            any |= runs && !c->cases[i].nki;
            any_nki |= runs && c->cases[i].nki;
        }
        if (!any && !any_nki) continue;
        char sets_buf[16][256];
        const char *sets[GS_SWEEP_MAX_LIST];
        size_t n_sets = 0;
        for (size_t k = 0; k < c->o.n_sets && n_sets < GS_SWEEP_MAX_LIST; k++)
            sets[n_sets++] = c->o.sets[k];
        for (size_t k = 0; p && k < p->n_keys && n_sets < GS_SWEEP_MAX_LIST; k++) {
            set_text(sets_buf[k], sizeof sets_buf[k], p->keys[k], p->units[k], p->v[k]);
            sets[n_sets++] = sets_buf[k];
        }
        const char *path = gs_sweep_config_path(c->cfgs, g);
        /* the NKI cases first, one child process each (nki run's own path) */
        for (size_t i = 0; i < c->n; i++) {
            if (!case_runs(&c->cases[i], g, fit_only) || !c->cases[i].nki) continue;
            c->skipped[i][0] = '\0';
            model[i] = NAN;
            gs_status st = run_nki_case(c, i, path, sets, n_sets, &model[i], err);
            if (st != GS_OK) return st;
        }
        if (!any) continue;
        gs_sweep_opts o = c->o;
        o.configs = &path;
        o.n_configs = 1;
        o.sets = sets;
        o.n_sets = n_sets;
        o.suite = GS_SWEEP_CUSTOM;
        o.timelines = 0;
        gs_diags cd;
        gs_diags_init(&cd);
        gs_sweep *s = gs_sweep_create(&o, &cd);
        if (!s) {
            char why[GS_ERROR_MSG_MAX] = "";
            if (cd.count) gs_error_format(&cd.items[0], why, sizeof why);
            gs_diags_free(&cd);
            return gs_error_set(err, GS_ERR_INVALID, c->path, 0, 0,
                                "config %s did not load with the fitted values%s%s",
                                gs_sweep_config(c->cfgs, g)->name, why[0] ? ": " : "", why);
        }
        gs_diags_free(&cd);
        /* per_step cases run twice: dims[0] = N and 2N */
        for (size_t i = 0; i < c->n; i++) {
            const cal_case *k = &c->cases[i];
            if (!case_runs(k, g, fit_only) || k->nki) continue;
            for (int rep = 0; rep < (k->measure == CAL_PER_STEP ? 2 : 1); rep++) {
                const gs_job_spec spec = case_spec(k, gs_sweep_config(s, 0), rep);
                if (gs_sweep_add(s, 0, &spec, 0) != 0) {
                    gs_sweep_free(s);
                    return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                }
            }
        }
        int intr = 0;
        gs_error xerr;
        gs_error_clear(&xerr);
        cJSON *doc = gs_sweep_execute(s, &intr, &xerr);
        if (!doc || intr) {
            cJSON_Delete(doc);
            gs_sweep_free(s);
            return intr ? gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0, "interrupted")
                        : gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0,
                                       "the case jobs could not run: %s", xerr.message);
        }
        for (size_t i = 0; i < c->n; i++) {
            const cal_case *k = &c->cases[i];
            if (!case_runs(k, g, fit_only) || k->nki) continue;
            double t[2] = {NAN, NAN};
            for (int rep = 0; rep < (k->measure == CAL_PER_STEP ? 2 : 1); rep++) {
                const gs_job_spec spec = case_spec(k, gs_sweep_config(s, 0), rep);
                gs_sb id;
                gs_sb_init(&id);
                gs_job_spec_id(&id, &spec);
                const cJSON *j, *found = NULL;
                cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
                {
                    if (!strcmp(gs_json_str(j, "id"), gs_sb_cstr(&id))) found = j;
                }
                if (!found || strcmp(gs_json_str(found, "status"), "pass") != 0) {
                    if (result == GS_OK)
                        result = gs_error_set(
                            err, GS_ERR_INVALID, c->path, k->line, 0,
                            "case %s: job %s did not pass (%s%s%s)", k->name, gs_sb_cstr(&id),
                            found ? gs_json_str(found, "status") : "missing", found ? ": " : "",
                            found ? gs_json_str(found, "reason") : "");
                    gs_sb_free(&id);
                    continue;
                }
                gs_sb_free(&id);
                if (k->measure == CAL_TRANSFER) {
                    const cJSON *fi = cJSON_GetObjectItemCaseSensitive(found, "first_instr");
                    t[rep] = gs_json_num(fi, "end_ns") - gs_json_num(fi, "start_ns");
                    engines[i] = (unsigned)gs_json_num(fi, "dma_engines");
                } else {
                    t[rep] = gs_json_num(found, k->measure == CAL_KERNEL_WITH_LAUNCH
                                                    ? "time_with_launch_ns"
                                                    : "time_ns");
                }
            }
            model[i] = k->measure == CAL_PER_STEP ? (t[1] - t[0]) / (double)k->dims[0] : t[0];
        }
        cJSON_Delete(doc);
        gs_sweep_free(s);
    }
    return result;
}

/* run_cases_in with the sweeps' job records in the options' output directory or, without one
 * (`gensweep calibrate`: it writes no results), in a private scratch directory under $TMPDIR
 * removed afterwards: before, every run left an empty ./build/sweep wherever it ran. */
static gs_status run_cases(gs_calib *c, size_t cfg, const cal_point *p, int fit_only, double *model,
                           unsigned *engines, gs_error *err)
{
    if (c->o.out_dir) return run_cases_in(c, cfg, p, fit_only, model, engines, err);
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s/gensweep-calibrate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof dir || !mkdtemp(dir))
        return gs_error_set(err, GS_ERR_IO, tmp && *tmp ? tmp : "/tmp", 0, 0,
                            "cannot make a scratch directory for the case jobs: %s",
                            strerror(errno));
    c->o.out_dir = dir;
    gs_status st = run_cases_in(c, cfg, p, fit_only, model, engines, err);
    c->o.out_dir = NULL;
    rmdir(dir); /* the sweep removed its job folder in it: empty */
    return st;
}

/* The measured time of case i given the model's engine count (engine_bandwidth cases: one
 * engine's bytes at the measured rate). 0: no timed measurement. */
static double measured_ns(const cal_case *k, unsigned engines)
{
    if (k->time_ns > 0) return k->time_ns;
    if (k->engine_bw > 0 && engines > 0) {
        double bytes = (double)gs_dtype_size(k->dtype);
        for (int d = 0; d < k->n_dims; d++)
            bytes *= (double)k->dims[d];
        return bytes / engines / k->engine_bw;
    }
    return 0;
}

/* Does case i count for generation g (every generation when SIZE_MAX) and role (every role
 * when < 0)? */
static int case_counts(const cal_case *k, size_t g, int role)
{
    return (g == SIZE_MAX || k->cfg == g) && (role < 0 || (int)k->role == role);
}

/* Sum of squared log errors over the timed fit cases of generation g (all when SIZE_MAX): what
 * the fit minimises. */
static double log_error(const gs_calib *c, size_t g, const double *model, const unsigned *engines,
                        int *n_timed)
{
    double e = 0;
    int n = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!case_counts(&c->cases[i], g, CAL_ROLE_FIT)) continue;
        const double m = measured_ns(&c->cases[i], engines[i]);
        if (!(m > 0)) continue;
        const double r = model[i] / m;
        e += r > 0 && isfinite(r) ? log(r) * log(r) : 1e6;
        n++;
    }
    if (n_timed) *n_timed = n;
    return e;
}

/* Geometric-mean error factor over the timed cases of generation g (SIZE_MAX: all) and role
 * (< 0: both): exp(mean |ln(model / measured)|) (1 = exact). */
static double geomean_error(const gs_calib *c, size_t g, int role, const double *model,
                            const unsigned *engines)
{
    int n = 0;
    double s = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!case_counts(&c->cases[i], g, role)) continue;
        const double m = measured_ns(&c->cases[i], engines[i]);
        if (!(m > 0) || !(model[i] > 0)) continue;
        s += fabs(log(model[i] / m));
        n++;
    }
    return n ? exp(s / n) : (double)NAN;
}

typedef struct fit_ctx {
    gs_calib *c;
    size_t g;
    cal_point p;
    double start[16];
    int at_bound[16];       /* the fitted value sits at its search range's end: -1 low, +1 high */
    int bound_is_limit[16]; /* ... and that end is the config's own limit */
    double *model;
    unsigned *engines;
    gs_error *err;
    gs_status st;
    int evals;
} fit_ctx;

static double objective(fit_ctx *f)
{
    if (f->st != GS_OK) return INFINITY;
    f->evals++;
    f->st = run_cases(f->c, f->g, &f->p, 1, f->model, f->engines, f->err);
    if (f->st != GS_OK) return INFINITY;
    double e = log_error(f->c, f->g, f->model, f->engines, NULL);
    for (size_t k = 0; k < f->p.n_keys; k++) {
        const double d = log((1 + f->p.v[k]) / (1 + f->start[k]));
        e += CAL_PRIOR_WEIGHT * d * d;
    }
    return e;
}

/* Does generation g's config load with point p applied after the calibration's own --set
 * values? (The fitted values go through the same validation as any --set.) */
static int point_loads(const gs_calib *c, size_t g, const cal_point *p)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *cfg = gs_config_load(gs_sweep_config_path(c->cfgs, g), &d);
    char bufs[16][256];
    const char *sets[GS_SWEEP_MAX_LIST];
    size_t n = 0;
    for (size_t k = 0; k < c->o.n_sets && n < GS_SWEEP_MAX_LIST; k++)
        sets[n++] = c->o.sets[k];
    for (size_t k = 0; k < p->n_keys && n < GS_SWEEP_MAX_LIST; k++) {
        set_text(bufs[k], sizeof bufs[k], p->keys[k], p->units[k], p->v[k]);
        sets[n++] = bufs[k];
    }
    const int ok = cfg && gs_config_set_all(cfg, sets, n, &d) == GS_OK;
    gs_config_free(cfg);
    gs_diags_free(&d);
    return ok;
}

/* The end of key k's search range towards `want` (in u = log(1 + v)) that the config still
 * accepts: want itself, or the config's limit found by bisection from u_ok (accepted). */
static double feasible_end(fit_ctx *f, size_t k, double u_ok, double want, int *limited)
{
    const double keep = f->p.v[k];
    f->p.v[k] = exp(want) - 1;
    *limited = !point_loads(f->c, f->g, &f->p);
    if (*limited) {
        double good = u_ok, bad = want;
        for (int it = 0; it < 48; it++) {
            const double mid = (good + bad) / 2;
            f->p.v[k] = exp(mid) - 1;
            if (point_loads(f->c, f->g, &f->p))
                good = mid;
            else
                bad = mid;
        }
        want = good;
    }
    f->p.v[k] = keep;
    return want;
}

/* Golden-section search of key k over u = log(1 + v) in [lo, hi]: the starting value / and x
 * CAL_RANGE (from the value the fit started at, so the range does not grow round after round),
 * clamped to what the config accepts. */
static void search_key(fit_ctx *f, size_t k)
{
    const double v0 = f->p.v[k];
    const double u0 = log(1 + v0);
    int lim_lo = 0, lim_hi = 0;
    const double lo0 = feasible_end(f, k, u0, 0.0, &lim_lo);
    const double hi0 =
        feasible_end(f, k, u0, log(1 + GS_MAX(f->start[k], 1.0) * CAL_RANGE), &lim_hi);
    double lo = lo0, hi = hi0;
    const double gr = (sqrt(5.0) - 1) / 2;
    double a = hi - gr * (hi - lo), b = lo + gr * (hi - lo);
    f->p.v[k] = exp(a) - 1;
    double fa = objective(f);
    f->p.v[k] = exp(b) - 1;
    double fb = objective(f);
    for (int it = 0; it < 24 && f->st == GS_OK; it++) {
        if (fa < fb) {
            hi = b;
            b = a;
            fb = fa;
            a = hi - gr * (hi - lo);
            f->p.v[k] = exp(a) - 1;
            fa = objective(f);
        } else {
            lo = a;
            a = b;
            fa = fb;
            b = lo + gr * (hi - lo);
            f->p.v[k] = exp(b) - 1;
            fb = objective(f);
        }
    }
    /* keep the starting value unless the search found better */
    const double best_u = fa < fb ? a : b, best_f = GS_MIN(fa, fb);
    f->p.v[k] = v0;
    const double f0 = objective(f);
    const int moved = best_f < f0;
    f->p.v[k] = moved ? exp(best_u) - 1 : v0;
    /* a best value at an end of the range: the cases want it further than the fit may go */
    const double u = moved ? best_u : u0, tol = 1e-3 * (hi0 - lo0);
    f->at_bound[k] = hi0 - u <= tol ? 1 : u - lo0 <= tol && lo0 > 0 ? -1 : 0;
    f->bound_is_limit[k] = f->at_bound[k] > 0 ? lim_hi : f->at_bound[k] < 0 ? lim_lo : 0;
}

/* The document's summary of one role: "<role>_cases" (timed ones), "geomean_error_<role>" (null
 * when none is timed) and "worst_<role>" (the case furthest from its measurement, by factor). */
static void role_summary(cJSON *doc, const gs_calib *c, cal_role role, const double *model,
                         const unsigned *engines)
{
    const char *rn = gs_calib_role_names[role];
    char key[64];
    int n = 0;
    size_t worst = SIZE_MAX;
    double worst_f = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->cases[i].role != role) continue;
        const double m = measured_ns(&c->cases[i], engines[i]);
        if (!(m > 0) || !(model[i] > 0)) continue;
        n++;
        const double f = fabs(log(model[i] / m));
        if (worst == SIZE_MAX || f > worst_f) worst = i, worst_f = f;
    }
    snprintf(key, sizeof key, "%s_cases", rn);
    cJSON_AddNumberToObject(doc, key, n);
    snprintf(key, sizeof key, "geomean_error_%s", rn);
    const double g = geomean_error(c, SIZE_MAX, (int)role, model, engines);
    if (isnan(g))
        cJSON_AddNullToObject(doc, key);
    else
        cJSON_AddNumberToObject(doc, key, g);
    snprintf(key, sizeof key, "worst_%s", rn);
    if (worst == SIZE_MAX) {
        cJSON_AddNullToObject(doc, key);
        return;
    }
    cJSON *w = cJSON_AddObjectToObject(doc, key);
    cJSON_AddStringToObject(w, "name", c->cases[worst].name);
    cJSON_AddNumberToObject(w, "ratio",
                            model[worst] / measured_ns(&c->cases[worst], engines[worst]));
    cJSON_AddNumberToObject(w, "error_factor", exp(worst_f));
}

static cJSON *case_json(const cal_case *k, double model, unsigned engines, const char *skipped)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", k->name);
    cJSON_AddStringToObject(o, "role", gs_calib_role_names[k->role]);
    cJSON_AddStringToObject(o, "generation", k->config);
    if (k->nki) {
        char name[160];
        snprintf(name, sizeof name, "nki.%s", k->nki->kernel);
        cJSON_AddStringToObject(o, "kernel", name);
        cJSON_AddStringToObject(o, "variant", "published");
        cJSON_AddArrayToObject(o, "shape");
        /* what it was measured against: the public file, by repository, commit and path */
        cJSON *n = cJSON_AddObjectToObject(o, "nki");
        cJSON_AddStringToObject(n, "repository", k->nki->repository);
        cJSON_AddStringToObject(n, "commit", k->nki->commit);
        cJSON_AddStringToObject(n, "path", k->nki->file);
        cJSON_AddStringToObject(n, "mirror", k->nki->mirror);
        cJSON_AddStringToObject(n, "kernel", k->nki->kernel);
        cJSON *args = cJSON_AddArrayToObject(n, "args");
        for (int j = 0; j < k->nki->n_args; j++)
            cJSON_AddItemToArray(args, cJSON_CreateString(k->nki->args[j]));
        if (k->nki->grid[0]) cJSON_AddStringToObject(n, "grid", k->nki->grid);
    } else {
        cJSON_AddStringToObject(o, "kernel", k->kernel->name);
        cJSON_AddStringToObject(o, "variant", k->kernel->variants[k->variant]);
        cJSON_AddStringToObject(o, "dtype", gs_dtype_name(k->dtype));
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int d = 0; d < k->n_dims; d++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)k->dims[d]));
    }
    cJSON_AddStringToObject(o, "measure", gs_calib_measure_names[k->measure]);
    if (skipped && skipped[0]) cJSON_AddStringToObject(o, "skipped", skipped);
    const double m = measured_ns(k, engines);
    if (skipped && skipped[0]) {
        if (m > 0)
            cJSON_AddNumberToObject(o, "measured_ns", m);
        else
            cJSON_AddNullToObject(o, "measured_ns");
        cJSON_AddNullToObject(o, "model_ns");
        cJSON_AddNullToObject(o, "ratio");
    } else if (m > 0) {
        cJSON_AddNumberToObject(o, "measured_ns", m);
        cJSON_AddNumberToObject(o, "model_ns", model);
        cJSON_AddNumberToObject(o, "ratio", model / m);
    } else {
        cJSON_AddNullToObject(o, "measured_ns");
        cJSON_AddNumberToObject(o, "model_ns", model);
        cJSON_AddNullToObject(o, "ratio");
    }
    if (k->engine_bw > 0) cJSON_AddNumberToObject(o, "measured_engine_gbps", k->engine_bw);
    if (k->engines) {
        cJSON_AddNumberToObject(o, "expected_engines", k->engines);
        cJSON_AddNumberToObject(o, "model_engines", engines);
        cJSON_AddBoolToObject(o, "engines_match", engines == k->engines);
    }
    cJSON_AddStringToObject(o, "source", k->source);
    cJSON_AddStringToObject(o, "note", k->note);
    return o;
}

cJSON *gs_calib_run(gs_calib *c, const gs_calib_fit_opts *fit, gs_error *err)
{
    double model[CAL_MAX_CASES], model0[CAL_MAX_CASES];
    unsigned engines[CAL_MAX_CASES], engines0[CAL_MAX_CASES];
    for (size_t i = 0; i < CAL_MAX_CASES; i++)
        model[i] = model0[i] = NAN, engines[i] = engines0[i] = 0;
    if (run_cases(c, SIZE_MAX, NULL, 0, model0, engines0, err) != GS_OK) return NULL;
    memcpy(model, model0, sizeof model);
    memcpy(engines, engines0, sizeof engines);

    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "gensweep-calibration");
    cJSON_AddNumberToObject(doc, "schema_version", 1);
    cJSON_AddStringToObject(doc, "cases_file", c->path);
    cJSON *srcs = cJSON_AddObjectToObject(doc, "sources");
    for (size_t i = 0; i < c->n_src; i++)
        cJSON_AddStringToObject(srcs, c->src_keys[i], c->src_refs[i]);
    cJSON_AddNumberToObject(doc, "geomean_error_before",
                            geomean_error(c, SIZE_MAX, -1, model0, engines0));
    cJSON_AddNumberToObject(doc, "geomean_error_fit_before",
                            geomean_error(c, SIZE_MAX, CAL_ROLE_FIT, model0, engines0));
    cJSON_AddNumberToObject(doc, "geomean_error_validate_before",
                            geomean_error(c, SIZE_MAX, CAL_ROLE_VALIDATE, model0, engines0));

    gs_sb yaml;
    gs_sb_init(&yaml);
    if (fit && fit->n_keys) {
        cJSON *fits = cJSON_AddArrayToObject(doc, "fit");
        const size_t ncfg = gs_sweep_config_count(c->cfgs);
        for (size_t g = 0; g < ncfg; g++) {
            int n_timed = 0;
            log_error(c, g, model0, engines0, &n_timed);
            if (!n_timed) continue;
            const gs_config *cfg = gs_sweep_config(c->cfgs, g);
            fit_ctx f;
            memset(&f, 0, sizeof f);
            f.c = c;
            f.g = g;
            f.model = model;
            f.engines = engines;
            f.err = err;
            size_t nf = 0;
            const gs_config_field *fields = gs_config_fields(&nf);
            for (size_t k = 0; k < fit->n_keys && f.p.n_keys < 16; k++) {
                const gs_num *num = gs_config_get(cfg, fit->keys[k]);
                if (!num || !num->src) continue; /* checked by the caller */
                if (strcmp(num->src, "assumed") != 0 && strcmp(num->src, "fit") != 0) {
                    cJSON *skip = cJSON_CreateObject();
                    cJSON_AddStringToObject(skip, "generation", cfg->name);
                    cJSON_AddStringToObject(skip, "key", fit->keys[k]);
                    cJSON_AddStringToObject(skip, "skipped", "sourced, not assumed");
                    cJSON_AddItemToArray(fits, skip);
                    continue;
                }
                gs_unit u = GS_UNIT_REAL;
                for (size_t fi = 0; fi < nf; fi++)
                    if (!strcmp(fields[fi].path, fit->keys[k])) u = fields[fi].unit;
                f.p.keys[f.p.n_keys] = fit->keys[k];
                f.p.units[f.p.n_keys] = u;
                f.p.v[f.p.n_keys] = num->v;
                f.start[f.p.n_keys] = num->v;
                f.p.n_keys++;
            }
            if (!f.p.n_keys) continue;
            const double before = geomean_error(c, g, CAL_ROLE_FIT, model0, engines0);
            const int rounds = fit->rounds > 0 ? fit->rounds : 3;
            for (int r = 0; r < rounds && f.st == GS_OK; r++) {
                for (size_t k = 0; k < f.p.n_keys && f.st == GS_OK; k++)
                    search_key(&f, k);
                if (fit->progress) {
                    char line[256];
                    snprintf(line, sizeof line, "%s: round %d of %d, %d evaluations", cfg->name,
                             r + 1, rounds, f.evals);
                    fit->progress(line, fit->ctx);
                }
            }
            if (f.st != GS_OK) {
                gs_sb_free(&yaml);
                cJSON_Delete(doc);
                return NULL;
            }
            /* four significant digits: the value written to the config is the one reported */
            for (size_t k = 0; k < f.p.n_keys; k++) {
                char digits[32];
                snprintf(digits, sizeof digits, "%.4g", f.p.v[k]);
                const double exact = f.p.v[k];
                f.p.v[k] = strtod(digits, NULL);
                /* rounded past the config's limit: the value at the limit, unrounded */
                if (!point_loads(c, g, &f.p)) f.p.v[k] = exact;
            }
            /* the cases at the fitted values */
            if (run_cases(c, g, &f.p, 0, model, engines, err) != GS_OK) {
                gs_sb_free(&yaml);
                cJSON_Delete(doc);
                return NULL;
            }
            const double after = geomean_error(c, g, CAL_ROLE_FIT, model, engines);
            gs_sb_printf(&yaml, "# %s (%s)\n", cfg->name, gs_sweep_config_path(c->cfgs, g));
            for (size_t k = 0; k < f.p.n_keys; k++) {
                if (f.p.v[k] == f.start[k]) {
                    /* the search kept the starting value: these cases do not tell it */
                    cJSON *skip = cJSON_CreateObject();
                    cJSON_AddStringToObject(skip, "generation", cfg->name);
                    cJSON_AddStringToObject(skip, "key", f.p.keys[k]);
                    cJSON_AddStringToObject(skip, "skipped",
                                            "unchanged: the search kept the current value (the "
                                            "cases do not tell a better one)");
                    cJSON_AddItemToArray(fits, skip);
                    continue;
                }
                char val[64];
                gs_units_format(f.p.v[k], f.p.units[k], val, sizeof val);
                gs_sb_printf(&yaml, "%s: \"%s [fit: %s, %d cases, geomean error %.3f -> %.3f]\"\n",
                             f.p.keys[k], val, c->path, n_timed, before, after);
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "generation", cfg->name);
                cJSON_AddStringToObject(o, "key", f.p.keys[k]);
                cJSON_AddNumberToObject(o, "before", f.start[k]);
                cJSON_AddNumberToObject(o, "after", f.p.v[k]);
                cJSON_AddStringToObject(o, "unit", gs_unit_base_name(f.p.units[k]));
                cJSON_AddNumberToObject(o, "cases", n_timed);
                cJSON_AddNumberToObject(o, "geomean_error_before", before);
                cJSON_AddNumberToObject(o, "geomean_error_after", after);
                cJSON_AddNumberToObject(o, "evaluations", f.evals);
                if (f.at_bound[k])
                    cJSON_AddStringToObject(
                        o, "at_bound",
                        f.at_bound[k] > 0 ? (f.bound_is_limit[k] ? "upper: the config's limit"
                                                                 : "upper: the search range")
                                          : (f.bound_is_limit[k] ? "lower: the config's limit"
                                                                 : "lower: the search range"));
                cJSON_AddItemToArray(fits, o);
            }
        }
    }
    cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
    int engines_ok = 1, n_skipped = 0;
    for (size_t i = 0; i < c->n; i++) {
        n_skipped += c->skipped[i][0] != '\0';
        cJSON_AddItemToArray(cases, case_json(&c->cases[i], model[i], engines[i], c->skipped[i]));
        if (c->cases[i].engines && c->cases[i].engines != engines[i]) engines_ok = 0;
    }
    cJSON_AddNumberToObject(doc, "skipped_cases", n_skipped);
    cJSON_AddNumberToObject(doc, "geomean_error", geomean_error(c, SIZE_MAX, -1, model, engines));
    role_summary(doc, c, CAL_ROLE_FIT, model, engines);
    role_summary(doc, c, CAL_ROLE_VALIDATE, model, engines);
    if (c->target_validate > 0) {
        const double v = geomean_error(c, SIZE_MAX, CAL_ROLE_VALIDATE, model, engines);
        cJSON_AddNumberToObject(doc, "target_validate_geomean_error", c->target_validate);
        cJSON_AddNumberToObject(doc, "target_line", c->target_line);
        /* no timed validation case: nothing to hold to the target, which is a failure too */
        cJSON_AddBoolToObject(doc, "target_ok", !isnan(v) && v <= c->target_validate);
    }
    cJSON_AddBoolToObject(doc, "structure_ok", engines_ok);
    cJSON_AddStringToObject(doc, "yaml", gs_sb_cstr(&yaml));
    gs_sb_free(&yaml);
    return doc;
}
