/* jobspec.c - job spec <-> run options <-> id (see jobspec.h). */
#include "jobspec.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void gs_job_spec_to_argv(const gs_job_spec *spec, gs_job_argv *out)
{
    const gs_kernel_def *k = spec->kernel;
    memset(out, 0, sizeof *out);
    size_t w = 0;
    for (int i = 0; i < spec->n_dims && w < sizeof out->shape - 24; i++)
        w += (size_t)snprintf(out->shape + w, sizeof out->shape - w, "%s%" PRId64, i ? "x" : "",
                              spec->dims[i]);
    int a = 0;
    out->argv[a++] = "--kernel";
    out->argv[a++] = k->name;
    out->argv[a++] = "--variant";
    out->argv[a++] = k->variants[spec->variant];
    out->argv[a++] = "--dtype";
    out->argv[a++] = gs_dtype_name(spec->dtype);
    out->argv[a++] = "--shape";
    out->argv[a++] = out->shape;
    for (int p = 0; p < k->n_params && p < GS_KERNEL_MAX_PARAMS; p++) {
        if (!spec->params[p]) continue;
        snprintf(out->params[p], sizeof out->params[p], "%s=%" PRId64, k->param_names[p],
                 spec->params[p]);
        out->argv[a++] = "--param";
        out->argv[a++] = out->params[p];
    }
    if (spec->seed != 1) {
        snprintf(out->seed, sizeof out->seed, "%" PRIu64, spec->seed);
        out->argv[a++] = "--seed";
        out->argv[a++] = out->seed;
    }
    out->argv[a] = NULL;
    out->argc = a;
}

void gs_job_options_init(gs_job_options *a)
{
    memset(a, 0, sizeof *a);
    a->seed = 1;
}

int gs_job_options_take(gs_job_options *a, int argc, char *const *argv, int *i, gs_error *err)
{
    if (!a) return 0;
    const char *o = argv[*i];
    const char **slot = NULL;
    if (!strcmp(o, "--kernel") || !strcmp(o, "-k"))
        slot = &a->kernel;
    else if (!strcmp(o, "--variant"))
        slot = &a->variant;
    else if (!strcmp(o, "--dtype"))
        slot = &a->dtype;
    else if (!strcmp(o, "--shape") || !strcmp(o, "-s"))
        slot = &a->shape;
    else if (strcmp(o, "--param") != 0 && strcmp(o, "--seed") != 0)
        return 0;
    if (*i + 1 >= argc) {
        gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "option %s needs a value", o);
        return -1;
    }
    const char *v = argv[++*i];
    if (slot) {
        *slot = v;
    } else if (!strcmp(o, "--param")) {
        if (a->n_params >= GS_KERNEL_MAX_PARAMS) {
            gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "too many --param options");
            return -1;
        }
        a->params[a->n_params++] = v;
    } else {
        gs_error e;
        gs_error_clear(&e);
        if (gs_parse_uint(v, UINT64_MAX, &a->seed, &e) != 0) {
            gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "--seed: %s", e.message);
            return -1;
        }
    }
    return 1;
}

/* Append " a b c" (names) to a message of at most size bytes at buf + *w. */
static void append_names(char *buf, size_t size, size_t *w, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n && *w < size; i++) {
        int r = snprintf(buf + *w, size - *w, " %s", names[i]);
        if (r < 0) return;
        *w += (size_t)r;
    }
}

const gs_kernel_def *gs_job_find_kernel(const char *name, gs_error *err)
{
    const gs_kernel_def *k = gs_suite_find(name);
    if (k) return k;
    char msg[GS_ERROR_MSG_MAX];
    size_t w = (size_t)snprintf(msg, sizeof msg, "unknown kernel '%s'; known:", name);
    for (size_t i = 0; i < gs_suite_count() && w < sizeof msg; i++) {
        const char *n = gs_suite_kernel(i)->name;
        append_names(msg, sizeof msg, &w, &n, 1);
    }
    gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "%s", msg);
    return NULL;
}

static gs_status set_variant(const gs_kernel_def *k, const char *name, gs_job_spec *spec,
                             gs_error *err)
{
    spec->variant = gs_suite_variant(k, name);
    if (spec->variant >= 0) return GS_OK;
    char msg[GS_ERROR_MSG_MAX];
    size_t w = (size_t)snprintf(msg, sizeof msg,
                                "kernel %s has no variant '%s'; variants:", k->name, name);
    append_names(msg, sizeof msg, &w, k->variants, (size_t)k->n_variants);
    return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "%s", msg);
}

static gs_status check_dims(const gs_kernel_def *k, const gs_job_spec *spec, const char *what,
                            gs_error *err)
{
    if (spec->n_dims == k->n_dims) return GS_OK;
    char names[GS_SUITE_MAX_DIMS * 40] = "";
    size_t w = 0;
    for (int i = 0; i < k->n_dims && w < sizeof names; i++)
        w += (size_t)snprintf(names + w, sizeof names - w, "%s%s", i ? "x" : "", k->dim_names[i]);
    return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "kernel %s takes %d dims (%s), %s gave %d",
                        k->name, k->n_dims, names, what, spec->n_dims);
}

gs_status gs_job_spec_from_options(const gs_job_options *a, const gs_config *cfg, gs_job_spec *spec,
                                   gs_error *err)
{
    memset(spec, 0, sizeof *spec);
    spec->cfg = cfg;
    spec->seed = a->seed;
    const gs_kernel_def *k = gs_job_find_kernel(a->kernel ? a->kernel : "", err);
    if (!k) return GS_ERR_USAGE;
    spec->kernel = k;
    if (a->variant && set_variant(k, a->variant, spec, err) != GS_OK) return GS_ERR_USAGE;
    spec->dtype = GS_BF16;
    if (a->dtype && gs_dtype_parse(a->dtype, &spec->dtype) != 0)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "unknown dtype '%s'", a->dtype);
    gs_error e;
    gs_error_clear(&e);
    if (a->shape) {
        if (gs_parse_shape(a->shape, spec->dims, GS_SUITE_MAX_DIMS, &spec->n_dims, &e) != 0)
            return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "--shape: %s", e.message);
    } else {
        spec->n_dims = k->check_shapes[0].n;
        for (int i = 0; i < spec->n_dims; i++)
            spec->dims[i] = k->check_shapes[0].d[i];
    }
    if (check_dims(k, spec, "--shape", err) != GS_OK) return GS_ERR_USAGE;
    for (int i = 0; i < a->n_params; i++) {
        int idx;
        int64_t v;
        if (gs_parse_param(a->params[i], k->param_names, k->n_params, &idx, &v, &e) != 0)
            return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "--param %s", e.message);
        spec->params[idx] = v;
    }
    return GS_OK;
}

void gs_job_spec_id(gs_sb *sb, const gs_job_spec *s)
{
    const gs_kernel_def *k = s->kernel;
    gs_sb_printf(sb, "%s/%s/%s/%s/", s->cfg->name, k->name, k->variants[s->variant],
                 gs_dtype_name(s->dtype));
    for (int i = 0; i < s->n_dims; i++)
        gs_sb_printf(sb, "%s%" PRId64, i ? "x" : "", s->dims[i]);
    for (int i = 0; i < k->n_params; i++)
        if (s->params[i]) gs_sb_printf(sb, "/%s=%" PRId64, k->param_names[i], s->params[i]);
}

gs_status gs_job_spec_from_id(const char *id, const gs_config *cfg, gs_job_spec *spec,
                              gs_error *err)
{
    memset(spec, 0, sizeof *spec);
    spec->cfg = cfg;
    spec->seed = 1;
    char buf[1024];
    if (strlen(id) >= sizeof buf)
        return gs_error_set(err, GS_ERR_PARSE, NULL, 0, 0, "job id longer than %zu bytes",
                            sizeof buf - 1);
    memcpy(buf, id, strlen(id) + 1);
    /* generation/kernel/variant/dtype/shape, then params */
    char *part[5 + GS_KERNEL_MAX_PARAMS + 1];
    int n = 0;
    for (char *p = buf; n < (int)GS_ARRAY_LEN(part);) {
        part[n++] = p;
        char *slash = strchr(p, '/');
        if (!slash) break;
        *slash = '\0';
        p = slash + 1;
    }
    if (n < 5 || n > 5 + GS_KERNEL_MAX_PARAMS)
        return gs_error_set(err, GS_ERR_PARSE, NULL, 0, 0,
                            "job id '%s': expected generation/kernel/variant/dtype/shape"
                            "[/param=value...]",
                            id);
    if (strcmp(part[0], cfg->name) != 0)
        return gs_error_set(err, GS_ERR_PARSE, NULL, 0, 0,
                            "job id '%s': generation '%s' is not the config's ('%s')", id, part[0],
                            cfg->name);
    gs_error e;
    gs_error_clear(&e);
    const gs_kernel_def *k = gs_job_find_kernel(part[1], &e);
    if (!k) return gs_error_set(err, GS_ERR_PARSE, NULL, 0, 0, "job id '%s': %s", id, e.message);
    spec->kernel = k;
    if (set_variant(k, part[2], spec, &e) != GS_OK ||
        (gs_dtype_parse(part[3], &spec->dtype) != 0 &&
         gs_error_set(&e, GS_ERR_PARSE, NULL, 0, 0, "unknown dtype '%s'", part[3])) ||
        (gs_parse_shape(part[4], spec->dims, GS_SUITE_MAX_DIMS, &spec->n_dims, &e) != 0) ||
        check_dims(k, spec, "the shape", &e) != GS_OK)
        return gs_error_set(err, GS_ERR_PARSE, NULL, 0, 0, "job id '%s': %s", id, e.message);
    for (int i = 5; i < n; i++) {
        int idx;
        int64_t v;
        if (gs_parse_param(part[i], k->param_names, k->n_params, &idx, &v, &e) != 0)
            return gs_error_set(err, GS_ERR_PARSE, NULL, 0, 0, "job id '%s': %s", id, e.message);
        spec->params[idx] = v;
    }
    return GS_OK;
}
