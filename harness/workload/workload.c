/* workload.c - loading and checking a workload file (workload.h): libyaml's document, walked as
 * the calibration case loader walks its file, every problem at its file:line:col. */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/dtype.h"
#include "gs/strbuf.h"
#include "gs/yamldoc.h"
#include "suite.h"

typedef struct loader {
    gs_workload *w;
    gs_diags *d;
    yaml_document_t doc;
    const char *const *sets;
    size_t n_sets;
} loader;

#define LERR(L, nd, ...)                                                                           \
    gs_diags_add((L)->d, GS_ERR_PARSE, (L)->w->path, (int)(nd)->start_mark.line + 1,               \
                 (int)(nd)->start_mark.column + 1, __VA_ARGS__)

static int copy_str(loader *L, yaml_node_t *n, const char *key, char *buf, size_t size)
{
    return gs_yaml_copy_str(L->d, L->w->path, n, key, buf, size);
}

/* An expression scalar evaluated on the dimensions known so far; must be >= 1. The column of a
 * problem is the one of the character at fault (plain and quoted scalars on one line). */
static int eval_node(loader *L, yaml_node_t *n, const char *key, const char *text, int64_t *out)
{
    const char *s = text ? text : gs_yaml_scalar(n);
    if (!s || !s[0] || (!text && strlen(s) != n->data.scalar.length)) {
        LERR(L, n, "%s: expected an integer expression of the dimensions", key);
        return 0;
    }
    const gs_workload *w = L->w;
    const char *names[GS_WL_MAX_DIMS];
    for (int i = 0; i < w->n_dims; i++)
        names[i] = w->dim_names[i];
    gs_error err;
    gs_error_clear(&err);
    size_t pos = 0;
    int64_t v = 0;
    if (gs_wl_expr_eval(s, names, w->dim_values, w->n_dims, &v, &pos, &err) != GS_OK) {
        const int quoted = n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                           n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        const int on_one_line = n->start_mark.line == n->end_mark.line && !text;
        gs_diags_add(L->d, GS_ERR_PARSE, w->path, (int)n->start_mark.line + 1,
                     (int)n->start_mark.column + 1 + (on_one_line ? (int)pos + quoted : 0),
                     "%s: %s (in '%s')", key, err.message, s);
        return 0;
    }
    if (v < 1 || v > ((int64_t)1 << 40)) {
        LERR(L, n, "%s: '%s' is %lld; a dimension must be in 1 .. 2^40", key, s, (long long)v);
        return 0;
    }
    *out = v;
    return 1;
}

static void load_dims(loader *L, yaml_node_t *m)
{
    gs_workload *w = L->w;
    if (m->type != YAML_MAPPING_NODE) {
        LERR(L, m, "dims: expected a mapping NAME: expression");
        return;
    }
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
        char name[GS_WL_NAME_MAX];
        if (!copy_str(L, kn, "dims", name, sizeof name)) continue;
        int ok = name[0] == '_' || (name[0] >= 'a' && name[0] <= 'z') ||
                 (name[0] >= 'A' && name[0] <= 'Z');
        for (const char *c = name; *c; c++)
            ok &= *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9');
        for (int i = 0; i < w->n_dims; i++)
            if (!strcmp(w->dim_names[i], name)) ok = 0;
        if (!ok || w->n_dims >= GS_WL_MAX_DIMS) {
            LERR(L, kn, "dims: '%s' is not a new name (letters, digits, _) or too many dims", name);
            continue;
        }
        /* a --dim NAME=VALUE replaces the file's value */
        const char *text = NULL;
        size_t len = strlen(name);
        for (size_t i = 0; i < L->n_sets; i++)
            if (!strncmp(L->sets[i], name, len) && L->sets[i][len] == '=')
                text = L->sets[i] + len + 1;
        char key[GS_WL_NAME_MAX + 8];
        snprintf(key, sizeof key, "dims.%s", name);
        int64_t v = 0;
        if (!eval_node(L, vn, key, text, &v)) continue;
        snprintf(w->dim_names[w->n_dims], GS_WL_NAME_MAX, "%s", name);
        w->dim_values[w->n_dims++] = v;
        if (!strcmp(name, "batch")) w->batch = v;
    }
}

static void load_step(loader *L, yaml_node_t *m)
{
    gs_workload *w = L->w;
    if (m->type != YAML_MAPPING_NODE) {
        LERR(L, m, "steps: expected a mapping with name:, kernel:, shape:");
        return;
    }
    if (w->n_steps >= GS_WL_MAX_STEPS) {
        LERR(L, m, "steps: more than %d", GS_WL_MAX_STEPS);
        return;
    }
    gs_wl_step *st = &w->steps[w->n_steps];
    memset(st, 0, sizeof *st);
    st->count = 1;
    st->variant = -1;
    yaml_node_t *variant = NULL;
    st->line = (int)m->start_mark.line + 1;
    yaml_node_t *shape = NULL;
    int ok = 1;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
        const char *k = gs_yaml_scalar(kn);
        if (k && !strcmp(k, "name")) {
            ok &= copy_str(L, vn, "name", st->name, sizeof st->name);
        } else if (k && !strcmp(k, "kernel")) {
            const char *s = gs_yaml_scalar(vn);
            st->kernel = s ? gs_suite_find(s) : NULL;
            if (!st->kernel) {
                LERR(L, vn, "kernel: unknown kernel '%s' (gensweep list kernels)", s ? s : "");
                ok = 0;
            }
        } else if (k && !strcmp(k, "shape")) {
            shape = vn;
        } else if (k && !strcmp(k, "variant")) {
            variant = vn;
        } else if (k && !strcmp(k, "count")) {
            ok &= eval_node(L, vn, "count", NULL, &st->count);
        } else if (k && !strcmp(k, "note")) {
            ok &= copy_str(L, vn, "note", st->note, sizeof st->note);
        } else {
            LERR(L, kn, "unknown step key '%s' (name, kernel, shape, variant, count, note)",
                 k ? k : "");
            ok = 0;
        }
    }
    if (!st->name[0] || !st->kernel || !shape) {
        if (ok) LERR(L, m, "a step needs name:, kernel: and shape:");
        return;
    }
    if (variant) {
        const char *s = gs_yaml_scalar(variant);
        st->variant = s ? gs_suite_variant(st->kernel, s) : -1;
        if (st->variant < 0) {
            LERR(L, variant, "variant: %s has no variant '%s'", st->kernel->name, s ? s : "");
            return;
        }
    }
    if (shape->type != YAML_SEQUENCE_NODE) {
        LERR(L, shape, "shape: expected a list of expressions, one per kernel dim");
        return;
    }
    const int n = (int)(shape->data.sequence.items.top - shape->data.sequence.items.start);
    if (n != st->kernel->n_dims) {
        gs_sb names;
        gs_sb_init(&names);
        for (int i = 0; i < st->kernel->n_dims; i++)
            gs_sb_printf(&names, "%s%s", i ? ", " : "", st->kernel->dim_names[i]);
        LERR(L, shape, "shape: %s takes %d dims [%s], got %d", st->kernel->name, st->kernel->n_dims,
             gs_sb_cstr(&names), n);
        gs_sb_free(&names);
        return;
    }
    for (int i = 0; i < n; i++) {
        char key[96];
        snprintf(key, sizeof key, "shape[%d] (%s)", i, st->kernel->dim_names[i]);
        ok &= eval_node(L, yaml_document_get_node(&L->doc, shape->data.sequence.items.start[i]),
                        key, NULL, &st->dims[i]);
    }
    st->n_dims = n;
    if (ok) w->n_steps++;
}

static void load_root(loader *L, yaml_node_t *root)
{
    gs_workload *w = L->w;
    yaml_node_t *steps = NULL, *dims = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
        const char *k = gs_yaml_scalar(kn);
        if (k && !strcmp(k, "name")) {
            copy_str(L, vn, "name", w->name, sizeof w->name);
        } else if (k && !strcmp(k, "phase")) {
            const char *s = gs_yaml_scalar(vn);
            if (!s || (strcmp(s, "prefill") != 0 && strcmp(s, "decode") != 0))
                LERR(L, vn, "phase: expected prefill or decode");
            else
                snprintf(w->phase, sizeof w->phase, "%s", s);
        } else if (k && !strcmp(k, "dtype")) {
            const char *s = gs_yaml_scalar(vn);
            if (!s || gs_dtype_parse(s, &w->dtype) != 0)
                LERR(L, vn, "dtype: unknown dtype '%s'", s ? s : "");
        } else if (k && !strcmp(k, "dims")) {
            dims = vn;
        } else if (k && !strcmp(k, "steps")) {
            steps = vn;
        } else if (k && !strcmp(k, "description")) {
            /* free text for the reader */
        } else {
            LERR(L, kn, "unknown key '%s' (name, description, phase, dtype, dims, steps)",
                 k ? k : "");
        }
    }
    const size_t before = L->d->count;
    if (dims) load_dims(L, dims);
    for (size_t i = 0; i < L->n_sets; i++) {
        const char *eq = strchr(L->sets[i], '=');
        int found = 0;
        for (int j = 0; eq && j < w->n_dims; j++)
            found |= strlen(w->dim_names[j]) == (size_t)(eq - L->sets[i]) &&
                     !strncmp(w->dim_names[j], L->sets[i], (size_t)(eq - L->sets[i]));
        if (!found && L->d->count == before) /* a --dim that failed is already reported */
            gs_diags_add(L->d, GS_ERR_PARSE, w->path, 0, 0,
                         "--dim '%s': expected NAME=EXPR with NAME one of the file's dims",
                         L->sets[i]);
    }
    if (!steps || steps->type != YAML_SEQUENCE_NODE || !w->name[0] || !w->phase[0]) {
        LERR(L, root, "a workload needs name:, phase: and a list steps:");
        return;
    }
    if (L->d->count != before) return; /* a bad dim would make every shape using it wrong too */
    for (yaml_node_item_t *it = steps->data.sequence.items.start;
         it < steps->data.sequence.items.top; it++)
        load_step(L, yaml_document_get_node(&L->doc, *it));
    /* a layer of no steps would report a 0 us layer time */
    if (steps->data.sequence.items.top == steps->data.sequence.items.start)
        LERR(L, steps, "steps: an empty list (a workload runs at least one step)");
}

gs_workload *gs_workload_load(const char *path, const char *const *dim_sets, size_t n_dim_sets,
                              gs_diags *d)
{
    gs_workload *w = gs_calloc(1, sizeof *w);
    if (!w) {
        gs_diags_add(d, GS_ERR_NOMEM, path, 0, 0, "out of memory");
        return NULL;
    }
    snprintf(w->path, sizeof w->path, "%s", path);
    w->dtype = GS_BF16;
    w->batch = 1;
    loader L;
    memset(&L, 0, sizeof L);
    L.w = w;
    L.d = d;
    L.sets = dim_sets;
    L.n_sets = n_dim_sets;
    if (!gs_yaml_load_file(path, "the workload file", &L.doc, d)) {
        gs_free(w);
        return NULL;
    }
    const size_t before = d->count;
    yaml_node_t *root = yaml_document_get_root_node(&L.doc);
    if (!root || root->type != YAML_MAPPING_NODE)
        gs_diags_add(d, GS_ERR_PARSE, path, 1, 1, "expected a mapping with name:, dims:, steps:");
    else
        load_root(&L, root);
    yaml_document_delete(&L.doc);
    if (d->count != before) {
        gs_free(w);
        return NULL;
    }
    return w;
}

void gs_workload_free(gs_workload *w)
{
    gs_free(w);
}
