/*
 * sweep_plan.c - the sweep's plan: load the configs (files or directories, --set applied), pick
 * the kernels, apply each generation's tuning file, and expand configs x kernels x variants x
 * shapes x dtypes into the sorted, de-duplicated, sharded job list (see sweep.h). Nothing here
 * runs a job.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "jobspec.h"
#include "results.h"
#include "sweep_internal.h"

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int add_config(gs_sweep *s, const char *path, gs_diags *diags)
{
    gs_config *c = gs_config_load_with(path, s->o.sets, s->o.n_sets, diags);
    if (!c) return -1;
    for (size_t i = 0; i < s->n_cfgs; i++)
        if (!strcmp(s->cfgs[i]->name, c->name)) {
            gs_diags_add(diags, GS_ERR_USAGE, NULL, 0, 0, "%s and %s both define generation '%s'",
                         s->cfg_paths[i], path, c->name);
            gs_config_free(c);
            return -1;
        }
    gs_config **nc = gs_realloc(s->cfgs, (s->n_cfgs + 1) * sizeof *nc);
    if (nc) s->cfgs = nc;
    char **np = gs_realloc(s->cfg_paths, (s->n_cfgs + 1) * sizeof *np);
    if (np) s->cfg_paths = np;
    char *dup = gs_strdup(path);
    if (!nc || !np || !dup) {
        gs_free(dup);
        gs_config_free(c);
        gs_diags_add(diags, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return -1;
    }
    s->cfgs[s->n_cfgs] = c;
    s->cfg_paths[s->n_cfgs++] = dup;
    return 0;
}

/* A directory contributes its *.yaml files (not subdirectories: what-if variants live in
 * configs/whatif/ and are swept only when named). */
/* A bare config name (gen3: ./configs/gen3.yaml, else the installed one; datadir.h). */
static int add_config_named(gs_sweep *s, const char *arg, gs_diags *diags)
{
    char found[4096];
    gs_error ferr;
    gs_error_clear(&ferr);
    if (gs_data_find("configs", "config", arg, found, sizeof found, &ferr) != GS_OK) {
        gs_diags_add(diags, GS_ERR_USAGE, NULL, 0, 0, "--configs %s", ferr.message);
        return -1;
    }
    return add_config(s, found, diags);
}

/* A --configs argument: a config file, a directory of *.yaml (in name order), or a bare config
 * name where no such file exists or the directory of that name holds no *.yaml (the checkout's
 * gen3/ is source code: `--configs gen3` is configs/gen3.yaml, as `run --config gen3` is). */
static int add_config_arg(gs_sweep *s, const char *arg, gs_diags *diags)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        int e = errno;
        if (e == ENOENT && !strchr(arg, '/')) return add_config_named(s, arg, diags);
        gs_diags_add(diags, GS_ERR_USAGE, NULL, 0, 0, "--configs %s: %s", arg, strerror(e));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return add_config(s, arg, diags);
    DIR *d = opendir(arg);
    if (!d) {
        gs_diags_add(diags, GS_ERR_USAGE, NULL, 0, 0, "--configs %s: %s", arg, strerror(errno));
        return -1;
    }
    char *names[256];
    size_t n = 0;
    struct dirent *de;
    int too_many = 0, too_long = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len > 5 && !strcmp(de->d_name + len - 5, ".yaml") && de->d_name[0] != '.') {
            if (n == GS_ARRAY_LEN(names)) {
                too_many = 1;
                break;
            }
            char p[4096];
            if (snprintf(p, sizeof p, "%s/%s", arg, de->d_name) >= (int)sizeof p) {
                too_long = 1;
                continue;
            }
            names[n++] = gs_strdup(p);
        }
    }
    closedir(d);
    if (too_many || too_long) {
        if (too_many)
            gs_diags_add(diags, GS_ERR_USAGE, NULL, 0, 0,
                         "--configs %s: more than %zu *.yaml files (give the files, or fewer)", arg,
                         GS_ARRAY_LEN(names));
        else
            gs_diags_add(diags, GS_ERR_USAGE, NULL, 0, 0,
                         "--configs %s: a *.yaml file whose path is over 4095 bytes", arg);
        for (size_t i = 0; i < n; i++)
            gs_free(names[i]);
        return -1;
    }
    if (!n && !strchr(arg, '/')) return add_config_named(s, arg, diags);
    qsort(names, n, sizeof *names, str_cmp);
    int rc = n ? 0 : -1;
    if (!n) gs_diags_add(diags, GS_ERR_USAGE, NULL, 0, 0, "--configs %s: no *.yaml files", arg);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && (!names[i] || add_config(s, names[i], diags) != 0)) rc = -1;
        gs_free(names[i]);
    }
    return rc;
}

void gs_sweep_opts_default(gs_sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    o->suite = GS_SWEEP_CHECK;
    o->threshold = 0.02;
    o->timelines = -1;
#if defined(__SANITIZE_ADDRESS__)
#define GS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_ASAN 1
#endif
#endif
#ifdef GS_ASAN
    /* ASan reserves terabytes of address space: RLIMIT_AS would kill every job. */
    o->mem_limit = 0;
#else
    o->mem_limit = GS_SWEEP_DEFAULT_MEM_LIMIT;
#endif
}

gs_sweep *gs_sweep_create(const gs_sweep_opts *o, gs_diags *diags)
{
    gs_sweep *s = gs_calloc(1, sizeof *s);
    if (!s) {
        gs_diags_add(diags, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    s->o = *o;
    s->trace_lock_fd = -1;
    if (s->o.shard_count <= 0) s->o.shard_index = s->o.shard_count = 1;
    if (!s->o.out_dir) s->o.out_dir = GS_SWEEP_DEFAULT_OUT;
    if (s->o.timeout_s <= 0) s->o.timeout_s = GS_SWEEP_DEFAULT_TIMEOUT;
    if (s->o.jobs <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        s->o.jobs = n > 0 ? (int)n : 1;
    }
    ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
    if (n <= 0) {
        gs_diags_add(diags, GS_ERR_IO, NULL, 0, 0,
                     "cannot find its own binary (/proc/self/exe): %s", strerror(errno));
        gs_free(s);
        return NULL;
    }
    s->exe[n] = '\0';
    const char *const def_configs[] = {gs_default_configs_dir()};
    const char *const *cl = o->n_configs ? o->configs : def_configs;
    size_t ncl = o->n_configs ? o->n_configs : 1;
    for (size_t i = 0; i < ncl; i++)
        if (add_config_arg(s, cl[i], diags) != 0) {
            gs_sweep_free(s);
            return NULL;
        }
    return s;
}

void gs_sweep_free(gs_sweep *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_cfgs; i++) {
        gs_config_free(s->cfgs[i]);
        gs_free(s->cfg_paths[i]);
    }
    gs_free(s->cfgs);
    gs_free(s->cfg_paths);
    gs_free(s->jobs);
    if (s->trace_lock_fd >= 0) close(s->trace_lock_fd);
    gs_free(s);
}

const gs_sweep_opts *gs_sweep_options(const gs_sweep *s)
{
    return &s->o;
}

size_t gs_sweep_config_count(const gs_sweep *s)
{
    return s->n_cfgs;
}

const gs_config *gs_sweep_config(const gs_sweep *s, size_t i)
{
    return i < s->n_cfgs ? s->cfgs[i] : NULL;
}

const char *gs_sweep_config_path(const gs_sweep *s, size_t i)
{
    return i < s->n_cfgs ? s->cfg_paths[i] : NULL;
}

size_t gs_sweep_job_count(const gs_sweep *s)
{
    return s->n_jobs;
}

const char *gs_sweep_job_id(const gs_sweep *s, size_t i)
{
    return i < s->n_jobs ? s->jobs[i].id : NULL;
}

int gs_sweep_add(gs_sweep *s, size_t cfg_index, const gs_job_spec *spec, int functional)
{
    if (s->n_jobs == s->cap_jobs) {
        size_t nc = s->cap_jobs ? s->cap_jobs * 2 : 64;
        sweep_job *g = gs_realloc(s->jobs, nc * sizeof *g);
        if (!g) return -1;
        s->jobs = g;
        s->cap_jobs = nc;
    }
    sweep_job *j = &s->jobs[s->n_jobs++];
    memset(j, 0, sizeof *j);
    j->cfg = cfg_index;
    j->spec = *spec;
    j->spec.cfg = s->cfgs[cfg_index];
    if (!j->spec.seed) j->spec.seed = 1;
    j->functional = functional;
    gs_sb id;
    gs_sb_init(&id);
    gs_job_spec_id(&id, &j->spec);
    snprintf(j->id, sizeof j->id, "%s", gs_sb_cstr(&id));
    gs_sb_free(&id);
    s->planned = s->n_jobs; /* gs_sweep_plan sets it again after de-duplicating */
    return 0;
}

int gs_sweep_tuning_path(const gs_sweep *s, size_t ci, char *buf, size_t size)
{
    if (s->o.no_tuning || ci >= s->n_cfgs) return 0;
    const char *cp = s->cfg_paths[ci];
    const char *slash = strrchr(cp, '/');
    int dl = slash ? (int)(slash - cp) : 1;
    snprintf(buf, size, "%.*s/tuning/%s.json", dl, slash ? cp : ".", s->cfgs[ci]->name);
    return access(buf, R_OK) == 0;
}

/* Tuned default params for kernel k from <config dir>/tuning/<name>.json (written by
 * `gensweep tune --write`); params untouched when there is none, and a warning in diags when
 * it cannot be read. */
static void apply_tuning(const gs_sweep *s, size_t ci, const gs_kernel_def *k, int64_t *params,
                         gs_diags *diags)
{
    char path[4096];
    if (!gs_sweep_tuning_path(s, ci, path, sizeof path)) return;
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_json_read_file(path, &err);
    if (!doc) {
        char buf[2048];
        gs_error_format(&err, buf, sizeof buf);
        gs_diags_add(diags, err.code, NULL, 0, 0, "ignoring tuning file: %s", buf);
        return;
    }
    const cJSON *kp = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "kernels"), k->name),
        "params");
    for (int p = 0; p < k->n_params; p++) {
        double v = gs_json_num(kp, k->param_names[p]);
        if (!isnan(v) && v >= 0 && v < 1e12) params[p] = (int64_t)v;
    }
    cJSON_Delete(doc);
}

static gs_dtype default_dtype(const gs_kernel_def *k)
{
    if (k->dtypes & (1u << GS_BF16)) return GS_BF16;
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        if (k->dtypes & (1u << t)) return (gs_dtype)t;
    return GS_BF16;
}

static int job_cmp(const void *a, const void *b)
{
    return strcmp(((const sweep_job *)a)->id, ((const sweep_job *)b)->id);
}

/* The kernels named in --kernels (every kernel when none): their count, or -1 with the unknown
 * one in diags. */
static int select_kernels(const gs_sweep *s, const gs_kernel_def **sel, size_t max, gs_diags *diags)
{
    size_t n_sel = 0;
    if (!s->o.kernels || !s->o.kernels[0]) {
        for (size_t i = 0; i < gs_suite_count() && n_sel < max; i++)
            sel[n_sel++] = gs_suite_kernel(i);
        return (int)n_sel;
    }
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", s->o.kernels);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        gs_error err;
        gs_error_clear(&err);
        const gs_kernel_def *k = gs_job_find_kernel(t, &err);
        if (!k) {
            gs_diags_add(diags, err.code, NULL, 0, 0, "%s", err.message);
            return -1;
        }
        if (n_sel < max) sel[n_sel++] = k;
    }
    return (int)n_sel;
}

int gs_sweep_plan(gs_sweep *s, gs_diags *diags)
{
    const gs_kernel_def *sel[256];
    int n_sel = select_kernels(s, sel, GS_ARRAY_LEN(sel), diags);
    if (n_sel < 0) return -1;
    for (size_t ci = 0; ci < s->n_cfgs; ci++)
        for (int ki = 0; ki < n_sel; ki++) {
            const gs_kernel_def *k = sel[ki];
            gs_job_spec spec;
            memset(&spec, 0, sizeof spec);
            spec.kernel = k;
            spec.seed = 1;
            apply_tuning(s, ci, k, spec.params, diags);
            gs_dtype dt0 = default_dtype(k);
            for (int v = 0; v < k->n_variants; v++) {
                spec.variant = v;
                for (int part = 0; part < 2; part++) {
                    int functional = part == 0;
                    if (!(s->o.suite & (functional ? GS_SWEEP_CHECK : GS_SWEEP_PERF))) continue;
                    const gs_shape *shapes = functional ? k->check_shapes : k->perf_shapes;
                    for (int si = 0; si < GS_SUITE_MAX_SHAPES && shapes[si].n; si++) {
                        spec.n_dims = shapes[si].n;
                        memcpy(spec.dims, shapes[si].d, sizeof spec.dims);
                        /* Every shape in the default dtype; the kernel's other dtypes on the
                         * first check shape only, which keeps the check suite small while
                         * still covering each dtype path (and "unsupported" where a generation
                         * lacks it). */
                        for (int t = 0; t < GS_DTYPE_COUNT; t++) {
                            if (!(k->dtypes & (1u << t))) continue;
                            if ((gs_dtype)t != dt0 && !(functional && si == 0)) continue;
                            spec.dtype = (gs_dtype)t;
                            if (gs_sweep_add(s, ci, &spec, functional) != 0) {
                                gs_diags_add(diags, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                                return -1;
                            }
                        }
                    }
                }
            }
        }
    qsort(s->jobs, s->n_jobs, sizeof *s->jobs, job_cmp);
    /* the same id from the check and the perf suite: keep the functional one */
    size_t w = 0;
    for (size_t i = 0; i < s->n_jobs; i++)
        if (!w || strcmp(s->jobs[w - 1].id, s->jobs[i].id) != 0) s->jobs[w++] = s->jobs[i];
    s->n_jobs = w;
    s->planned = w;
    if (s->o.shard_count > 1) {
        w = 0;
        for (size_t i = 0; i < s->n_jobs; i++)
            if ((int)(i % (size_t)s->o.shard_count) == s->o.shard_index - 1)
                s->jobs[w++] = s->jobs[i];
        s->n_jobs = w;
    }
    return 0;
}
