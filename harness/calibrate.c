/* calibrate.c - model vs measured, and fitting assumed parameters (see calibrate.h). */
#include "calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "gs/strbuf.h"
#include "gs/units.h"
#include "jobspec.h"
#include "record.h"
#include "results.h"

#define CAL_MAX_CASES 256
#define CAL_MAX_SOURCES 64
#define CAL_MAX_FILE (1024 * 1024)
/* Pull towards the starting value (squared log distance), small next to a case's error: it
 * only decides between values the cases cannot tell apart. */
#define CAL_PRIOR_WEIGHT 1e-3
/* Search range of a fitted value: its starting value / and x this factor (values may be 0:
 * the search runs over log(1 + v / unit)). */
#define CAL_RANGE 64.0

typedef enum cal_measure { CAL_KERNEL, CAL_TRANSFER, CAL_PER_STEP } cal_measure;
static const char *const measure_names[] = {"kernel", "transfer", "per_step"};

typedef struct cal_case {
    char name[64];
    char config[64];
    const gs_kernel_def *kernel;
    int variant;
    gs_dtype dtype;
    int n_dims;
    int64_t dims[GS_SUITE_MAX_DIMS];
    int64_t params[GS_KERNEL_MAX_PARAMS];
    cal_measure measure;
    double time_ns;   /* measured time, or 0 */
    double engine_bw; /* measured per-engine bytes/ns (transfer), or 0 */
    unsigned engines; /* expected engines of the transfer, or 0 */
    char source[48];
    char note[512];
    int line;
    size_t cfg; /* index into the loaded configs */
} cal_case;

struct gs_calib {
    char *path;
    gs_sweep_opts o;
    gs_sweep *cfgs; /* loaded configs (no jobs): names, paths, values */
    cal_case cases[CAL_MAX_CASES];
    size_t n;
    char src_keys[CAL_MAX_SOURCES][48];
    char src_refs[CAL_MAX_SOURCES][512];
    size_t n_src;
};

size_t gs_calib_case_count(const gs_calib *c)
{
    return c ? c->n : 0;
}

void gs_calib_free(gs_calib *c)
{
    if (!c) return;
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

static const char *scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar copied into buf; an error (and 0) when it is not a scalar, empty, has a NUL or does
 * not fit. */
static int copy_str(loader *L, yaml_node_t *n, const char *key, char *buf, size_t size)
{
    const char *s = scalar(n);
    if (!s || !s[0] || strlen(s) != n->data.scalar.length) {
        LERR(L, n, "%s: expected a non-empty string", key);
        return 0;
    }
    if (strlen(s) >= size) {
        LERR(L, n, "%s: longer than %zu characters", key, size - 1);
        return 0;
    }
    snprintf(buf, size, "%s", s);
    return 1;
}

static int parse_int(loader *L, yaml_node_t *n, const char *key, int64_t lo, int64_t hi,
                     int64_t *out)
{
    const char *s = scalar(n);
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

static int parse_unit(loader *L, yaml_node_t *n, const char *key, gs_unit u, double *out)
{
    const char *s = scalar(n);
    char msg[160];
    if (!s || gs_units_parse(s, u, out, msg, sizeof msg) != GS_OK) {
        LERR(L, n, "%s: %s", key, s ? msg : "expected a value with a unit");
        return 0;
    }
    if (!(*out > 0) || !isfinite(*out)) {
        LERR(L, n, "%s: must be greater than zero", key);
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
    int ok = 1, have_shape = 0, have_kernel = 0;
    yaml_node_t *kernel_node = m, *params_node = NULL, *variant_node = NULL, *dtype_node = NULL;
    char key[80];
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
        const char *ks = scalar(kn);
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
            const char *s = scalar(vn);
            k.kernel = s ? gs_suite_find(s) : NULL;
            kernel_node = vn;
            have_kernel = 1;
            if (!k.kernel) {
                LERR(L, vn, "%s: unknown kernel '%s' (gensweep list kernels)", key, s ? s : "");
                ok = 0;
            }
        } else if (!strcmp(ks, "variant")) {
            variant_node = vn;
        } else if (!strcmp(ks, "dtype")) {
            dtype_node = vn;
        } else if (!strcmp(ks, "params")) {
            params_node = vn;
        } else if (!strcmp(ks, "shape")) {
            have_shape = 1;
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
            const char *s = scalar(vn);
            int found = 0;
            for (int i = 0; s && i < 3; i++)
                if (!strcmp(s, measure_names[i])) {
                    k.measure = (cal_measure)i;
                    found = 1;
                }
            if (!found) {
                LERR(L, vn, "%s: expected kernel, transfer or per_step", key);
                ok = 0;
            }
        } else if (!strcmp(ks, "time")) {
            ok &= parse_unit(L, vn, key, GS_UNIT_TIME, &k.time_ns);
        } else if (!strcmp(ks, "engine_bandwidth")) {
            ok &= parse_unit(L, vn, key, GS_UNIT_BANDWIDTH, &k.engine_bw);
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
                 "%s: unknown key (expected name, config, kernel, variant, dtype, params, shape, "
                 "measure, time, engine_bandwidth, engines, source, note)",
                 key);
            ok = 0;
        }
    }
    snprintf(key, sizeof key, "cases[%zu]", index);
    if (!k.name[0]) LERR(L, m, "%s: name: is required", key), ok = 0;
    if (!k.config[0]) LERR(L, m, "%s: config: is required", key), ok = 0;
    if (!have_kernel) LERR(L, m, "%s: kernel: is required", key), ok = 0;
    if (!have_shape) LERR(L, m, "%s: shape: is required", key), ok = 0;
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
    if (!ok || !k.kernel) return;
    const gs_kernel_def *kd = k.kernel;
    if (k.n_dims != kd->n_dims) {
        LERR(L, m, "%s.shape: %s takes %d sizes, got %d", key, kd->name, kd->n_dims, k.n_dims);
        return;
    }
    k.dtype = (kd->dtypes & (1u << GS_BF16)) ? GS_BF16 : GS_FP32;
    const char *ds = scalar(dtype_node);
    if (dtype_node &&
        (!ds || gs_dtype_parse(ds, &k.dtype) != 0 || !(kd->dtypes & (1u << k.dtype)))) {
        LERR(L, dtype_node, "%s.dtype: %s does not take dtype '%s'", key, kd->name, ds ? ds : "");
        return;
    }
    const char *vs = scalar(variant_node);
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
            const char *pn = scalar(yaml_document_get_node(&L->doc, p->key));
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
    c->cases[c->n++] = k;
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
    FILE *f = fopen(path, "rb");
    if (!f) {
        gs_diags_add(diags, GS_ERR_IO, path, 0, 0, "cannot open the case file");
        gs_calib_free(c);
        return NULL;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    loader L;
    memset(&L, 0, sizeof L);
    L.c = c;
    L.d = diags;
    if (!yaml_parser_load(&parser, &L.doc)) {
        gs_diags_add(diags, GS_ERR_PARSE, path, (int)parser.problem_mark.line + 1,
                     (int)parser.problem_mark.column + 1, "YAML: %s",
                     parser.problem ? parser.problem : "malformed");
        yaml_parser_delete(&parser);
        fclose(f);
        gs_calib_free(c);
        return NULL;
    }
    yaml_parser_delete(&parser);
    fclose(f);
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
            const char *ks = scalar(kn);
            if (ks && !strcmp(ks, "cases")) {
                cases = vn;
            } else if (ks && !strcmp(ks, "sources")) {
                if (vn->type != YAML_MAPPING_NODE) {
                    LERR(&L, vn, "sources: expected a mapping KEY: citation");
                    continue;
                }
                for (yaml_node_pair_t *q = vn->data.mapping.pairs.start;
                     q < vn->data.mapping.pairs.top && c->n_src < CAL_MAX_SOURCES; q++) {
                    yaml_node_t *sk = yaml_document_get_node(&L.doc, q->key);
                    yaml_node_t *sv = yaml_document_get_node(&L.doc, q->value);
                    if (copy_str(&L, sk, "sources", c->src_keys[c->n_src], 48) &&
                        copy_str(&L, sv, "sources", c->src_refs[c->n_src], 512))
                        c->n_src++;
                }
            } else {
                LERR(&L, kn, "%s: unknown key (expected sources and cases)", ks ? ks : "?");
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

/* Run the cases of generation `cfg` (every case when cfg == SIZE_MAX) at point p; fills
 * model[i] (ns, NAN when not run) and engines[i]. Returns GS_OK, or an error when a job did
 * not pass. */
static gs_status run_cases(gs_calib *c, size_t cfg, const cal_point *p, double *model,
                           unsigned *engines, gs_error *err)
{
    gs_status result = GS_OK;
    const size_t ncfg = gs_sweep_config_count(c->cfgs);
    for (size_t g = 0; g < ncfg; g++) {
        if (cfg != SIZE_MAX && g != cfg) continue;
        int any = 0;
        for (size_t i = 0; i < c->n; i++)
            any |= c->cases[i].cfg == g;
        if (!any) continue;
        char sets_buf[16][256];
        const char *sets[GS_SWEEP_MAX_LIST];
        size_t n_sets = 0;
        for (size_t k = 0; k < c->o.n_sets && n_sets < GS_SWEEP_MAX_LIST; k++)
            sets[n_sets++] = c->o.sets[k];
        for (size_t k = 0; p && k < p->n_keys && n_sets < GS_SWEEP_MAX_LIST; k++) {
            set_text(sets_buf[k], sizeof sets_buf[k], p->keys[k], p->units[k], p->v[k]);
            sets[n_sets++] = sets_buf[k];
        }
        gs_sweep_opts o = c->o;
        const char *path = gs_sweep_config_path(c->cfgs, g);
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
            if (k->cfg != g) continue;
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
            if (k->cfg != g) continue;
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
                    t[rep] = gs_json_num(found, "time_ns");
                }
            }
            model[i] = k->measure == CAL_PER_STEP ? (t[1] - t[0]) / (double)k->dims[0] : t[0];
        }
        cJSON_Delete(doc);
        gs_sweep_free(s);
    }
    return result;
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

/* Sum of squared log errors over the timed cases of generation g (all when SIZE_MAX). */
static double log_error(const gs_calib *c, size_t g, const double *model, const unsigned *engines,
                        int *n_timed)
{
    double e = 0;
    int n = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (g != SIZE_MAX && c->cases[i].cfg != g) continue;
        const double m = measured_ns(&c->cases[i], engines[i]);
        if (!(m > 0)) continue;
        const double r = model[i] / m;
        e += r > 0 && isfinite(r) ? log(r) * log(r) : 1e6;
        n++;
    }
    if (n_timed) *n_timed = n;
    return e;
}

/* Geometric-mean error factor: exp(mean |ln(model / measured)|) (1 = exact). */
static double geomean_error(const gs_calib *c, size_t g, const double *model,
                            const unsigned *engines)
{
    int n = 0;
    double s = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (g != SIZE_MAX && c->cases[i].cfg != g) continue;
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
    f->st = run_cases(f->c, f->g, &f->p, f->model, f->engines, f->err);
    if (f->st != GS_OK) return INFINITY;
    double e = log_error(f->c, f->g, f->model, f->engines, NULL);
    for (size_t k = 0; k < f->p.n_keys; k++) {
        const double d = log((1 + f->p.v[k]) / (1 + f->start[k]));
        e += CAL_PRIOR_WEIGHT * d * d;
    }
    return e;
}

/* Golden-section search of key k over u = log(1 + v) in [lo, hi]. */
static void search_key(fit_ctx *f, size_t k)
{
    const double v0 = f->p.v[k];
    double lo = 0.0, hi = log(1 + GS_MAX(v0, 1.0) * CAL_RANGE);
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
    f->p.v[k] = best_f < f0 ? exp(best_u) - 1 : v0;
}

static cJSON *case_json(const cal_case *k, double model, unsigned engines)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", k->name);
    cJSON_AddStringToObject(o, "generation", k->config);
    cJSON_AddStringToObject(o, "kernel", k->kernel->name);
    cJSON_AddStringToObject(o, "variant", k->kernel->variants[k->variant]);
    cJSON_AddStringToObject(o, "dtype", gs_dtype_name(k->dtype));
    cJSON *sh = cJSON_AddArrayToObject(o, "shape");
    for (int d = 0; d < k->n_dims; d++)
        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)k->dims[d]));
    cJSON_AddStringToObject(o, "measure", measure_names[k->measure]);
    const double m = measured_ns(k, engines);
    if (m > 0) {
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
    if (run_cases(c, SIZE_MAX, NULL, model0, engines0, err) != GS_OK) return NULL;
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
                            geomean_error(c, SIZE_MAX, model0, engines0));

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
            const double before = geomean_error(c, g, model0, engines0);
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
                f.p.v[k] = strtod(digits, NULL);
            }
            /* the cases at the fitted values */
            if (run_cases(c, g, &f.p, model, engines, err) != GS_OK) {
                gs_sb_free(&yaml);
                cJSON_Delete(doc);
                return NULL;
            }
            const double after = geomean_error(c, g, model, engines);
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
                cJSON_AddItemToArray(fits, o);
            }
        }
    }
    cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
    int engines_ok = 1;
    for (size_t i = 0; i < c->n; i++) {
        cJSON_AddItemToArray(cases, case_json(&c->cases[i], model[i], engines[i]));
        if (c->cases[i].engines && c->cases[i].engines != engines[i]) engines_ok = 0;
    }
    cJSON_AddNumberToObject(doc, "geomean_error", geomean_error(c, SIZE_MAX, model, engines));
    cJSON_AddBoolToObject(doc, "structure_ok", engines_ok);
    cJSON_AddStringToObject(doc, "yaml", gs_sb_cstr(&yaml));
    gs_sb_free(&yaml);
    return doc;
}
