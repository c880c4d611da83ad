/*
 * calibrate.c - loading a calibration case file (see calibrate.h): the YAML read and every case
 * checked against the loaded configs, each problem a diagnostic with its file:line:col. Running
 * the cases and fitting are calibrate_fit.c's.
 */
#include "calibrate_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gs/strbuf.h"
#include "gs/units.h"
#include "gs/yamldoc.h"
#include "jobspec.h"
#include "record.h"
#include "results.h"

#define CAL_MAX_FILE (1024 * 1024)

const char *const gs_calib_measure_names[4] = {"kernel", "transfer", "per_step",
                                               "kernel_with_launch"};
const char *const gs_calib_role_names[2] = {"fit", "validate"};

size_t gs_calib_case_count(const gs_calib *c)
{
    return c ? c->n : 0;
}

int gs_calib_has_target(const gs_calib *c)
{
    return c && c->target_validate > 0;
}

void gs_calib_free(gs_calib *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++)
        gs_free(c->cases[i].nki);
    gs_sweep_free(c->cfgs);
    gs_free(c->path);
    gs_free(c);
}

/* ---- loading ---- */

typedef struct loader {
    gs_calib *c;
    gs_diags *d;
    yaml_document_t doc;
} loader;

#define LERR(L, nd, ...)                                                                           \
    gs_diags_add((L)->d, GS_ERR_PARSE, (L)->c->path, (int)(nd)->start_mark.line + 1,               \
                 (int)(nd)->start_mark.column + 1, __VA_ARGS__)

static int copy_str(loader *L, yaml_node_t *n, const char *key, char *buf, size_t size)
{
    return gs_yaml_copy_str(L->d, L->c->path, n, key, buf, size);
}

static int parse_int(loader *L, yaml_node_t *n, const char *key, int64_t lo, int64_t hi,
                     int64_t *out)
{
    const char *s = gs_yaml_scalar(n);
    char *end = NULL;
    long long v = 0;
    if (s && s[0]) v = strtoll(s, &end, 10);
    if (!s || !s[0] || !end || *end || v < lo || v > hi) {
        LERR(L, n, "%s: expected a whole number in %lld..%lld", key, (long long)lo, (long long)hi);
        return 0;
    }
    *out = v;
    return 1;
}

/* A measured value with its unit, in [lo, hi] (ns for a time, bytes/ns = GB/s for a
 * bandwidth): what a micro-benchmark can measure, so that a typo (1e-300 ns, 1e300 GB/s)
 * is refused where it is written instead of printing 300-digit numbers. */
static int parse_unit(loader *L, yaml_node_t *n, const char *key, gs_unit u, double lo, double hi,
                      const char *range, double *out)
{
    const char *s = gs_yaml_scalar(n);
    char msg[160];
    if (!s || gs_units_parse(s, u, out, msg, sizeof msg) != GS_OK) {
        LERR(L, n, "%s: %s", key, s ? msg : "expected a value with a unit");
        return 0;
    }
    if (!(*out > 0) || !isfinite(*out)) {
        LERR(L, n, "%s: must be greater than zero", key);
        return 0;
    }
    if (*out < lo || *out > hi) {
        LERR(L, n, "%s: '%.60s' is out of range (%s)", key, s, range);
        return 0;
    }
    return 1;
}

static int find_config(const gs_calib *c, const char *name, size_t *out)
{
    for (size_t i = 0; i < gs_sweep_config_count(c->cfgs); i++)
        if (!strcmp(gs_sweep_config(c->cfgs, i)->name, name)) {
            *out = i;
            return 1;
        }
    return 0;
}

static int is_ident(const char *s, int upper)
{
    if (!s || !s[0] || (s[0] >= '0' && s[0] <= '9')) return 0;
    for (const char *p = s; *p; p++) {
        const int ok = (*p >= '0' && *p <= '9') || *p == '_' || (*p >= 'A' && *p <= 'Z') ||
                       (!upper && *p >= 'a' && *p <= 'z');
        if (!ok) return 0;
    }
    return 1;
}

/* A path inside the mirror: relative, no "..", no empty part. */
static int is_inside_path(const char *s)
{
    if (!s[0] || s[0] == '/') return 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, '/');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.')) return 0;
        p += n;
        if (*p) p++;
    }
    return 1;
}

/* The directory of the case file (for an NKI case's reference, a file of the project). */
static void case_file_dir(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, size, ".");
    else
        snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* nki: {mirror: ENV, file: PATH, kernel: NAME, args: [NAME=VALUE, ...], grid: AxB,
 *       reference: FILE.py:FUNC, repository: OWNER/NAME, commit: SHA} */
static int load_nki(loader *L, yaml_node_t *m, const char *key, cal_nki *n)
{
    if (m->type != YAML_MAPPING_NODE) {
        LERR(L, m, "%s: expected a mapping (mirror:, file:, kernel:, args:, repository:, commit:)",
             key);
        return 0;
    }
    int ok = 1;
    char k2[128];
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
        const char *ks = gs_yaml_scalar(kn);
        snprintf(k2, sizeof k2, "%s.%.40s", key, ks ? ks : "?");
        if (!ks) {
            LERR(L, kn, "%s: keys must be plain names", key);
            ok = 0;
        } else if (!strcmp(ks, "mirror")) {
            if (copy_str(L, vn, k2, n->mirror, sizeof n->mirror) && !is_ident(n->mirror, 1)) {
                LERR(L, vn,
                     "%s: expected the name of an environment variable (A-Z, 0-9, _), "
                     "e.g. GS_NKI_SAMPLES",
                     k2);
                ok = 0;
            }
        } else if (!strcmp(ks, "file")) {
            if (copy_str(L, vn, k2, n->file, sizeof n->file) && !is_inside_path(n->file)) {
                LERR(L, vn, "%s: expected a path relative to the mirror's root, without '..'", k2);
                ok = 0;
            }
        } else if (!strcmp(ks, "kernel")) {
            if (copy_str(L, vn, k2, n->kernel, sizeof n->kernel) && !is_ident(n->kernel, 0)) {
                LERR(L, vn, "%s: expected a Python function name", k2);
                ok = 0;
            }
        } else if (!strcmp(ks, "args")) {
            if (vn->type != YAML_SEQUENCE_NODE) {
                LERR(L, vn, "%s: expected a list of NAME=VALUE (as nki run's --arg)", k2);
                ok = 0;
                continue;
            }
            for (yaml_node_item_t *it = vn->data.sequence.items.start;
                 it < vn->data.sequence.items.top; it++) {
                yaml_node_t *an = yaml_document_get_node(&L->doc, *it);
                if (n->n_args == CAL_NKI_MAX_ARGS) {
                    LERR(L, an, "%s: more than %d arguments", k2, CAL_NKI_MAX_ARGS);
                    ok = 0;
                    break;
                }
                char *a = n->args[n->n_args];
                if (!copy_str(L, an, k2, a, sizeof n->args[0])) {
                    ok = 0;
                    continue;
                }
                const char *eq = strchr(a, '=');
                char name[256];
                snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : 0, a);
                if (!eq || !is_ident(name, 0) || !eq[1]) {
                    LERR(L, an,
                         "%s: '%.80s': expected NAME=VALUE (NAME=DTYPE:SHAPE for a tensor, "
                         "e.g. lhsT=bf16:8192x4096)",
                         k2, a);
                    ok = 0;
                    continue;
                }
                n->n_args++;
            }
        } else if (!strcmp(ks, "grid")) {
            if (copy_str(L, vn, k2, n->grid, sizeof n->grid) &&
                strspn(n->grid, "0123456789x") != strlen(n->grid)) {
                LERR(L, vn, "%s: expected AxB.., e.g. 4x2", k2);
                ok = 0;
            }
        } else if (!strcmp(ks, "reference")) {
            char ref[512];
            if (!copy_str(L, vn, k2, ref, sizeof ref)) {
                ok = 0;
                continue;
            }
            const char *colon = strrchr(ref, ':');
            char dir[512];
            case_file_dir(L->c->path, dir, sizeof dir);
            if (!colon || colon == ref || !is_ident(colon + 1, 0) || ref[0] == '/') {
                LERR(L, vn, "%s: expected FILE.py:FUNC, FILE relative to the case file", k2);
                ok = 0;
                continue;
            }
            snprintf(n->reference, sizeof n->reference, "%s/%s", dir, ref);
            char file[1024];
            snprintf(file, sizeof file, "%.*s", (int)(strrchr(n->reference, ':') - n->reference),
                     n->reference);
            struct stat sb;
            if (stat(file, &sb) != 0 || !S_ISREG(sb.st_mode)) {
                LERR(L, vn, "%s: %.200s: no such file", k2, file);
                ok = 0;
            }
        } else if (!strcmp(ks, "repository")) {
            if (copy_str(L, vn, k2, n->repository, sizeof n->repository) &&
                (!strchr(n->repository, '/') || strchr(n->repository, ' '))) {
                LERR(L, vn, "%s: expected OWNER/NAME, e.g. aws-neuron/nki-samples", k2);
                ok = 0;
            }
        } else if (!strcmp(ks, "commit")) {
            if (copy_str(L, vn, k2, n->commit, sizeof n->commit) &&
                (strlen(n->commit) < 7 ||
                 strspn(n->commit, "0123456789abcdef") != strlen(n->commit))) {
                LERR(L, vn, "%s: expected a commit hash (7 to 40 lower-case hex digits)", k2);
                ok = 0;
            }
        } else {
            LERR(L, kn,
                 "%s: unknown key (expected mirror, file, kernel, args, grid, reference, "
                 "repository, commit)",
                 k2);
            ok = 0;
        }
    }
    static const char *const required[] = {"mirror", "file", "kernel", "repository", "commit"};
    const char *const have[] = {n->mirror, n->file, n->kernel, n->repository, n->commit};
    for (int i = 0; i < 5; i++)
        if (ok && !have[i][0]) {
            LERR(L, m, "%s: %s: is required", key, required[i]);
            ok = 0;
        }
    return ok;
}

static void load_case(loader *L, yaml_node_t *m, size_t index)
{
    gs_calib *c = L->c;
    if (m->type != YAML_MAPPING_NODE) {
        LERR(L, m, "cases[%zu]: expected a mapping (name:, config:, kernel:, ...)", index);
        return;
    }
    if (c->n >= CAL_MAX_CASES) {
        LERR(L, m, "cases: more than %d cases", CAL_MAX_CASES);
        return;
    }
    cal_case k;
    memset(&k, 0, sizeof k);
    k.line = (int)m->start_mark.line + 1;
    k.measure = CAL_KERNEL;
    int ok = 1, have_shape = 0, have_kernel = 0, have_role = 0;
    yaml_node_t *nki_node = NULL;
    cal_nki nki;
    memset(&nki, 0, sizeof nki);
    yaml_node_t *kernel_node = m, *params_node = NULL, *variant_node = NULL, *dtype_node = NULL,
                *shape_node = m;
    char key[80];
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
        const char *ks = gs_yaml_scalar(kn);
        if (!ks) {
            LERR(L, kn, "cases[%zu]: keys must be plain names", index);
            ok = 0;
            continue;
        }
        snprintf(key, sizeof key, "cases[%zu].%.40s", index, ks);
        if (!strcmp(ks, "name")) {
            ok &= copy_str(L, vn, key, k.name, sizeof k.name);
        } else if (!strcmp(ks, "config")) {
            if ((ok &= copy_str(L, vn, key, k.config, sizeof k.config)) &&
                !find_config(c, k.config, &k.cfg)) {
                LERR(L, vn, "%s: no loaded config is named '%s' (see --configs)", key, k.config);
                ok = 0;
            }
        } else if (!strcmp(ks, "kernel")) {
            const char *s = gs_yaml_scalar(vn);
            k.kernel = s ? gs_suite_find(s) : NULL;
            kernel_node = vn;
            have_kernel = 1;
            if (!k.kernel) {
                LERR(L, vn, "%s: unknown kernel '%s' (gensweep list kernels)", key, s ? s : "");
                ok = 0;
            }
        } else if (!strcmp(ks, "nki")) {
            nki_node = vn;
            ok &= load_nki(L, vn, key, &nki);
        } else if (!strcmp(ks, "variant")) {
            variant_node = vn;
        } else if (!strcmp(ks, "dtype")) {
            dtype_node = vn;
        } else if (!strcmp(ks, "params")) {
            params_node = vn;
        } else if (!strcmp(ks, "shape")) {
            have_shape = 1;
            shape_node = vn;
            if (vn->type != YAML_SEQUENCE_NODE) {
                LERR(L, vn, "%s: expected a list of sizes, e.g. [4, 4096]", key);
                ok = 0;
                continue;
            }
            for (yaml_node_item_t *it = vn->data.sequence.items.start;
                 it < vn->data.sequence.items.top; it++) {
                if (k.n_dims >= GS_SUITE_MAX_DIMS) {
                    LERR(L, vn, "%s: more than %d sizes", key, GS_SUITE_MAX_DIMS);
                    ok = 0;
                    break;
                }
                ok &= parse_int(L, yaml_document_get_node(&L->doc, *it), key, 1, (int64_t)1 << 40,
                                &k.dims[k.n_dims++]);
            }
        } else if (!strcmp(ks, "measure")) {
            const char *s = gs_yaml_scalar(vn);
            int found = 0;
            for (int i = 0; s && i < 4; i++)
                if (!strcmp(s, gs_calib_measure_names[i])) {
                    k.measure = (cal_measure)i;
                    found = 1;
                }
            if (!found) {
                LERR(L, vn, "%s: expected kernel, kernel_with_launch, transfer or per_step", key);
                ok = 0;
            }
        } else if (!strcmp(ks, "role")) {
            const char *s = gs_yaml_scalar(vn);
            int found = 0;
            for (int i = 0; s && i < 2; i++)
                if (!strcmp(s, gs_calib_role_names[i])) {
                    k.role = (cal_role)i;
                    found = 1;
                }
            have_role = 1;
            if (!found) {
                LERR(L, vn,
                     "%s: expected fit (a measurement --fit may use) or validate (one the model "
                     "is checked against, never fitted to)",
                     key);
                ok = 0;
            }
        } else if (!strcmp(ks, "time")) {
            ok &= parse_unit(L, vn, key, GS_UNIT_TIME, 1e-3, 1e12, "1 ps .. 1000 s", &k.time_ns);
        } else if (!strcmp(ks, "engine_bandwidth")) {
            ok &= parse_unit(L, vn, key, GS_UNIT_BANDWIDTH, 1e-3, 1e6, "1 MB/s .. 1 PB/s",
                             &k.engine_bw);
        } else if (!strcmp(ks, "engines")) {
            int64_t v = 0;
            ok &= parse_int(L, vn, key, 1, GS_MAX_QUEUES, &v);
            k.engines = (unsigned)v;
        } else if (!strcmp(ks, "source")) {
            ok &= copy_str(L, vn, key, k.source, sizeof k.source);
        } else if (!strcmp(ks, "note")) {
            ok &= copy_str(L, vn, key, k.note, sizeof k.note);
        } else {
            LERR(L, kn,
                 "%s: unknown key (expected name, config, kernel or nki, variant, dtype, params, "
                 "shape, measure, role, time, engine_bandwidth, engines, source, note)",
                 key);
            ok = 0;
        }
    }
    snprintf(key, sizeof key, "cases[%zu]", index);
    if (!k.name[0]) LERR(L, m, "%s: name: is required", key), ok = 0;
    if (!k.config[0]) LERR(L, m, "%s: config: is required", key), ok = 0;
    if (nki_node) {
        /* an NKI kernel's shapes are its args; it has no suite variant, dtype or params */
        yaml_node_t *const extra[] = {have_kernel ? kernel_node : NULL,
                                      have_shape ? shape_node : NULL, variant_node, dtype_node,
                                      params_node};
        static const char *const extra_names[] = {"kernel", "shape", "variant", "dtype", "params"};
        for (int i = 0; i < 5; i++)
            if (extra[i])
                LERR(L, extra[i], "%s.%s: not with nki: (the NKI kernel's args: give its shapes)",
                     key, extra_names[i]),
                    ok = 0;
        if (k.measure != CAL_KERNEL && k.measure != CAL_KERNEL_WITH_LAUNCH)
            LERR(L, m, "%s: an nki: case measures kernel or kernel_with_launch", key), ok = 0;
    } else {
        if (!have_kernel) LERR(L, m, "%s: kernel: (or nki:) is required", key), ok = 0;
        if (!have_shape) LERR(L, m, "%s: shape: is required", key), ok = 0;
    }
    if (!have_role) LERR(L, m, "%s: role: is required (fit or validate)", key), ok = 0;
    if (!k.source[0]) LERR(L, m, "%s: source: is required (a key of sources:)", key), ok = 0;
    if (k.source[0]) {
        int found = 0;
        for (size_t i = 0; i < c->n_src; i++)
            found |= !strcmp(c->src_keys[i], k.source);
        if (!found) LERR(L, m, "%s.source: '%s' is not a key of sources:", key, k.source), ok = 0;
    }
    if (!ok) return;
    if (!k.time_ns && !k.engine_bw && !k.engines)
        LERR(L, m, "%s: nothing to compare: give time:, engine_bandwidth: or engines:", key),
            ok = 0;
    if (k.time_ns && k.engine_bw)
        LERR(L, m, "%s: give time: or engine_bandwidth:, not both", key), ok = 0;
    if ((k.engine_bw || k.engines) && k.measure != CAL_TRANSFER)
        LERR(L, m, "%s: engine_bandwidth: and engines: need measure: transfer", key), ok = 0;
    for (size_t i = 0; i < c->n; i++)
        if (k.name[0] && !strcmp(c->cases[i].name, k.name))
            LERR(L, m, "%s.name: '%s' is used twice (first at line %d)", key, k.name,
                 c->cases[i].line),
                ok = 0;
    if (ok && nki_node) {
        k.nki = gs_malloc(sizeof *k.nki);
        if (!k.nki) {
            LERR(L, m, "%s: out of memory", key);
            return;
        }
        *k.nki = nki;
        c->cases[c->n++] = k;
        return;
    }
    if (!ok || !k.kernel) return;
    const gs_kernel_def *kd = k.kernel;
    if (k.n_dims != kd->n_dims) {
        LERR(L, m, "%s.shape: %s takes %d sizes, got %d", key, kd->name, kd->n_dims, k.n_dims);
        return;
    }
    k.dtype = (kd->dtypes & (1u << GS_BF16)) ? GS_BF16 : GS_FP32;
    const char *ds = gs_yaml_scalar(dtype_node);
    if (dtype_node &&
        (!ds || gs_dtype_parse(ds, &k.dtype) != 0 || !(kd->dtypes & (1u << k.dtype)))) {
        LERR(L, dtype_node, "%s.dtype: %s does not take dtype '%s'", key, kd->name, ds ? ds : "");
        return;
    }
    const char *vs = gs_yaml_scalar(variant_node);
    if (variant_node && (!vs || (k.variant = gs_suite_variant(kd, vs)) < 0)) {
        LERR(L, variant_node, "%s.variant: %s has no variant '%s'", key, kd->name, vs ? vs : "");
        return;
    }
    if (params_node) {
        if (params_node->type != YAML_MAPPING_NODE) {
            LERR(L, params_node, "%s.params: expected a mapping of param: value", key);
            return;
        }
        for (yaml_node_pair_t *p = params_node->data.mapping.pairs.start;
             p < params_node->data.mapping.pairs.top; p++) {
            const char *pn = gs_yaml_scalar(yaml_document_get_node(&L->doc, p->key));
            int idx = -1;
            for (int i = 0; pn && i < kd->n_params; i++)
                if (!strcmp(kd->param_names[i], pn)) idx = i;
            if (idx < 0) {
                LERR(L, params_node, "%s.params: %s has no param '%s'", key, kd->name,
                     pn ? pn : "");
                return;
            }
            if (!parse_int(L, yaml_document_get_node(&L->doc, p->value), key, 0, INT64_MAX / 2,
                           &k.params[idx]))
                return;
        }
    }
    (void)kernel_node;
    /* the kernel must take the shape, and a per_step case's second run (N doubled) too: a
     * refusal is the case file's problem, said here rather than as a failed job */
    for (int rep = 0; rep < (k.measure == CAL_PER_STEP ? 2 : 1); rep++) {
        gs_kernel_args ka;
        memset(&ka, 0, sizeof ka);
        for (int d = 0; d < k.n_dims; d++)
            ka.dims[d] = k.dims[d];
        if (rep) ka.dims[0] *= 2;
        memcpy(ka.param, k.params, sizeof ka.param);
        ka.dtype = k.dtype;
        ka.variant = k.variant;
        ka.param_names = kd->param_names;
        ka.n_params = kd->n_params;
        gs_tensor_decl decl[GS_KERNEL_MAX_TENSORS];
        gs_error kerr;
        gs_error_clear(&kerr);
        if (kd->tensors(&ka, decl, GS_KERNEL_MAX_TENSORS, &kerr) < 0) {
            LERR(L, shape_node, "%s.shape: %s refuses %s%lld: %s", key, kd->name,
                 rep ? "the per_step case's second run, N = 2 x " : "N = ", (long long)k.dims[0],
                 kerr.message[0] ? kerr.message : "bad shape");
            return;
        }
    }
    c->cases[c->n++] = k;
}

/* targets: {validate_geomean_error: X}: the committed ceiling of the validation cases' geomean
 * error factor (>= 1), which `calibrate --check` holds the model to. */
static void load_targets(loader *L, yaml_node_t *m)
{
    if (m->type != YAML_MAPPING_NODE) {
        LERR(L, m, "targets: expected a mapping (validate_geomean_error: X)");
        return;
    }
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
        const char *ks = gs_yaml_scalar(kn), *vs = gs_yaml_scalar(vn);
        if (!ks || strcmp(ks, "validate_geomean_error") != 0) {
            LERR(L, kn, "targets.%.40s: unknown key (expected validate_geomean_error)",
                 ks ? ks : "?");
            continue;
        }
        char *end = NULL;
        const double v = vs && vs[0] ? strtod(vs, &end) : (double)NAN;
        if (!vs || !vs[0] || !end || *end || !isfinite(v) || v < 1 || v > 1000) {
            LERR(L, vn,
                 "targets.validate_geomean_error: expected a number in 1..1000 (an error "
                 "factor: 1 = exact)");
            continue;
        }
        L->c->target_validate = v;
        L->c->target_line = (int)vn->start_mark.line + 1;
    }
}

gs_calib *gs_calib_load(const char *path, const gs_sweep_opts *o, gs_diags *diags)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        gs_diags_add(diags, GS_ERR_IO, path, 0, 0, "cannot read the case file: %s",
                     stat(path, &sb) != 0 ? "no such file" : "not a regular file");
        return NULL;
    }
    if (sb.st_size > CAL_MAX_FILE) {
        gs_diags_add(diags, GS_ERR_INVALID, path, 0, 0, "case file larger than %d bytes",
                     CAL_MAX_FILE);
        return NULL;
    }
    gs_calib *c = gs_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->path = gs_strdup(path);
    c->o = *o;
    c->o.quiet = 1;
    c->o.no_report = 1;
    /* the configs' own problems first, then what they mean for the case file */
    c->cfgs = gs_sweep_create(&c->o, diags);
    if (!c->cfgs || !c->path) {
        gs_diags_add(diags, GS_ERR_INVALID, path, 0, 0, "the configs did not load (see above)");
        gs_calib_free(c);
        return NULL;
    }
    loader L;
    memset(&L, 0, sizeof L);
    L.c = c;
    L.d = diags;
    if (!gs_yaml_load_file(path, "the case file", &L.doc, diags)) {
        gs_calib_free(c);
        return NULL;
    }
    const size_t before = diags->count;
    yaml_node_t *root = yaml_document_get_root_node(&L.doc);
    yaml_node_t *cases = NULL;
    if (!root || root->type != YAML_MAPPING_NODE) {
        gs_diags_add(diags, GS_ERR_PARSE, path, 1, 1,
                     "expected a mapping with sources: and cases:");
    } else {
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
             p++) {
            yaml_node_t *kn = yaml_document_get_node(&L.doc, p->key);
            yaml_node_t *vn = yaml_document_get_node(&L.doc, p->value);
            const char *ks = gs_yaml_scalar(kn);
            if (ks && !strcmp(ks, "cases")) {
                cases = vn;
            } else if (ks && !strcmp(ks, "targets")) {
                load_targets(&L, vn);
            } else if (ks && !strcmp(ks, "sources")) {
                if (vn->type != YAML_MAPPING_NODE) {
                    LERR(&L, vn, "sources: expected a mapping KEY: citation");
                    continue;
                }
                for (yaml_node_pair_t *q = vn->data.mapping.pairs.start;
                     q < vn->data.mapping.pairs.top; q++) {
                    yaml_node_t *sk = yaml_document_get_node(&L.doc, q->key);
                    yaml_node_t *sv = yaml_document_get_node(&L.doc, q->value);
                    if (c->n_src == CAL_MAX_SOURCES) {
                        LERR(&L, sk, "sources: more than %d sources", CAL_MAX_SOURCES);
                        break;
                    }
                    if (copy_str(&L, sk, "sources", c->src_keys[c->n_src], 48) &&
                        copy_str(&L, sv, "sources", c->src_refs[c->n_src], 512))
                        c->n_src++;
                }
            } else {
                LERR(&L, kn, "%s: unknown key (expected sources, targets and cases)",
                     ks ? ks : "?");
            }
        }
        if (!cases || cases->type != YAML_SEQUENCE_NODE) {
            gs_diags_add(diags, GS_ERR_PARSE, path, 1, 1, "cases: a list of cases is required");
        } else {
            size_t i = 0;
            for (yaml_node_item_t *it = cases->data.sequence.items.start;
                 it < cases->data.sequence.items.top; it++, i++)
                load_case(&L, yaml_document_get_node(&L.doc, *it), i);
            if (i == 0) LERR(&L, cases, "cases: the list is empty");
        }
    }
    yaml_document_delete(&L.doc);
    if (diags->count > before) {
        gs_calib_free(c);
        return NULL;
    }
    return c;
}
