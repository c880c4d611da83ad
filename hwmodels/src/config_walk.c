/*
 * config_walk.c - the schema walk: the merged YAML tree is walked against the key table
 * (config_schema.c) into a gs_config. Each value is checked for its type and unit, its
 * provenance tag ("VALUE [SOURCE]", "[assumed: why]", "[fit: how]") is resolved against the
 * file's `sources:`, and its file:line:col is kept with it; unknown keys get a suggestion, and
 * required keys, sections and lists that were never written are reported where they were
 * expected. It is separate because it is the only part that reads the tree into the struct:
 * the YAML and file parts never see a gs_config, and the consistency checks
 * (config_validate.c) never see the tree.
 */
#include "config_internal.h"

#include <stdio.h>
#include <string.h>

#include "gs/units.h"

/* ------------------------------------------------------------------------------------------ */
/* values                                                                                     */

/* The dtype (is_ops 0) or op names in enum order, from dtype.c / isa.c; returns the count. */
static size_t name_list(int is_ops, const char **out)
{
    if (is_ops) {
        for (int k = 0; k < GS_OPCODE_COUNT; k++)
            out[k] = gs_opcode_name((gs_opcode)k);
        return GS_OPCODE_COUNT;
    }
    for (int k = 0; k < GS_DTYPE_COUNT; k++)
        out[k] = gs_dtype_name((gs_dtype)k);
    return GS_DTYPE_COUNT;
}

static int is_key_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-' || ch == '.';
}

static int valid_ident(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (!is_key_char(*s)) return 0;
    return 1;
}

static int source_index(const gs_config *c, const char *key)
{
    for (size_t i = 0; i < c->n_sources; i++)
        if (!strcmp(c->source_keys[i], key)) return (int)i;
    return -1;
}

/* Split "VALUE [TAG]" and resolve the tag. On success fills *vlen (length of the value part),
 * *src and *note (interned). Returns 0, or -1 after reporting (with has_tag telling whether a
 * tag was present at all). */
static int parse_tag(loader *L, const node *nd, const char *path, int tag_required, size_t *vlen,
                     const char **src, const char **note)
{
    const char *s = nd->text;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    *src = NULL;
    *note = NULL;
    const char *lb = memchr(s, '[', n);
    if (!lb || n == 0 || s[n - 1] != ']') {
        *vlen = n;
        if (lb) {
            ERR_NODE(L, nd, path, "malformed provenance tag in '%s': expected 'VALUE [SOURCE]'", s);
            return -1;
        }
        if (!tag_required) return 0;
        ERR_NODE(L, nd, path,
                 "'%s' has no provenance tag: write 'VALUE [SOURCE]' with a key of sources:, or "
                 "'VALUE [assumed: why]'",
                 s);
        return -1;
    }
    *vlen = (size_t)(lb - s);
    const char *t = lb + 1, *tend = s + n - 1;
    while (t < tend && (*t == ' ' || *t == '\t'))
        t++;
    const char *colon = tend > t ? memchr(t, ':', (size_t)(tend - t)) : NULL;
    const char *kend = colon ? colon : tend;
    while (kend > t && (kend[-1] == ' ' || kend[-1] == '\t'))
        kend--;
    char key[64];
    size_t klen = (size_t)(kend - t);
    int ok = klen > 0 && klen < sizeof key;
    for (size_t i = 0; ok && i < klen; i++)
        if (!is_key_char(t[i])) ok = 0;
    if (!ok) {
        ERR_NODE(L, nd, path,
                 "malformed provenance tag '[%.*s]': expected [SOURCE], [SOURCE: note], "
                 "[assumed: why] or [fit: how]",
                 (int)GS_MIN((size_t)(tend - (lb + 1)), (size_t)80), lb + 1);
        return -1;
    }
    memcpy(key, t, klen);
    key[klen] = '\0';
    if (colon) {
        const char *ns = colon + 1, *ne = tend;
        while (ns < ne && (*ns == ' ' || *ns == '\t'))
            ns++;
        while (ne > ns && (ne[-1] == ' ' || ne[-1] == '\t'))
            ne--;
        if (ne > ns) *note = gs_cfg_store_intern(L->c, ns, (size_t)(ne - ns));
    }
    if (!strcmp(key, "assumed") || !strcmp(key, "fit")) {
        /* fit: fitted by `gensweep calibrate` from cited measurements (the note says which) */
        *src = gs_cfg_store_cstr(L->c, key);
        return 0;
    }
    if (source_index(L->c, key) < 0) {
        const char *cands[64];
        size_t nc = 0;
        cands[nc++] = "assumed";
        cands[nc++] = "fit";
        for (size_t i = 0; i < L->c->n_sources && nc < 64; i++)
            cands[nc++] = L->c->source_keys[i];
        char dym[128];
        ERR_NODE(L, nd, path,
                 "unknown source '%s' in provenance tag%s; define it under sources: "
                 "or write [assumed: why]",
                 key, gs_cfg_did_you_mean(dym, sizeof dym, key, cands, nc));
        return -1;
    }
    *src = gs_cfg_store_cstr(L->c, key);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* tree -> struct                                                                             */

static void join_key(char *out, size_t size, const char *parent, const char *key)
{
    if (*parent)
        snprintf(out, size, "%s.%s", parent, key);
    else
        snprintf(out, size, "%s", key);
}

static const char *kind_word(nkind k)
{
    return k == N_MAP ? "a mapping" : k == N_SEQ ? "a list" : "a scalar";
}

static void set_loc(gs_loc *l, const node *nd)
{
    l->file = nd->file;
    l->line = nd->line;
    l->col = nd->col;
}

static void walk_number(loader *L, node *nd, const char *path, size_t fi)
{
    gs_num *num = gs_cfg_num_at(L->c, fi);
    /* Mark as written even when bad, so it is not also reported missing; "" is never a valid
     * source, and a config with errors is discarded. */
    num->src = "";
    if (nd->poisoned) {
        L->bad[fi] = 1;
        return;
    }
    if (nd->kind != N_SCALAR) {
        ERR_NODE(L, nd, path, "expected a %s value, got %s",
                 gs_unit_kind_name(gs_cfg_fields[fi].unit), kind_word(nd->kind));
        L->bad[fi] = 1;
        return;
    }
    size_t vlen;
    const char *src, *note;
    int tag_ok = parse_tag(L, nd, path, 1, &vlen, &src, &note) == 0;
    while (vlen > 0 && (nd->text[vlen - 1] == ' ' || nd->text[vlen - 1] == '\t'))
        vlen--;
    char val[256];
    snprintf(val, sizeof val, "%.*s", (int)GS_MIN(vlen, sizeof val - 1), nd->text);
    char msg[256];
    double v = 0;
    if (vlen == 0 && nd->text[0] == '\0') {
        ERR_NODE(L, nd, path, "missing value (expected a %s)",
                 gs_unit_kind_name(gs_cfg_fields[fi].unit));
        L->bad[fi] = 1;
        return;
    }
    if (gs_units_parse(val, gs_cfg_fields[fi].unit, &v, msg, sizeof msg) != GS_OK) {
        ERR_NODE(L, nd, path, "%s", msg);
        L->bad[fi] = 1;
        return;
    }
    char rb[128];
    const char *why = gs_cfg_check_value(fi, v, rb, sizeof rb);
    if (why) {
        ERR_NODE(L, nd, path, "%s %s", val, why);
        L->bad[fi] = 1;
    }
    if (!tag_ok) L->bad[fi] = 1;
    num->v = v;
    num->src = src ? src : "";
    num->note = note;
    num->file = nd->file;
    num->line = nd->line;
    num->col = nd->col;
}

/* Returns 0/1, or -1 after reporting. Bools may carry an optional provenance tag. */
static int walk_bool(loader *L, node *nd, const char *path)
{
    if (nd->poisoned) return -1;
    if (nd->kind != N_SCALAR) {
        ERR_NODE(L, nd, path, "expected true or false, got %s", kind_word(nd->kind));
        return -1;
    }
    size_t vlen;
    const char *src, *note;
    if (parse_tag(L, nd, path, 0, &vlen, &src, &note) < 0) return -1;
    while (vlen > 0 && (nd->text[vlen - 1] == ' ' || nd->text[vlen - 1] == '\t'))
        vlen--;
    if (vlen == 4 && !strncmp(nd->text, "true", 4)) return 1;
    if (vlen == 5 && !strncmp(nd->text, "false", 5)) return 0;
    ERR_NODE(L, nd, path, "expected true or false, got '%.*s'", (int)GS_MIN(vlen, (size_t)80),
             nd->text);
    return -1;
}

static const char *walk_string(loader *L, node *nd, const char *path)
{
    if (nd->poisoned) return NULL;
    if (nd->kind != N_SCALAR) {
        ERR_NODE(L, nd, path, "expected a string, got %s", kind_word(nd->kind));
        return NULL;
    }
    return nd->text;
}

static void walk_list(loader *L, node *nd, const char *path, int is_ops)
{
    if (nd->poisoned) return;
    if (nd->kind != N_SEQ) {
        ERR_NODE(L, nd, path, "expected a list of %s names, got %s", is_ops ? "op" : "dtype",
                 kind_word(nd->kind));
        return;
    }
    const char *names[GS_OPCODE_COUNT + GS_DTYPE_COUNT];
    size_t count = name_list(is_ops, names);
    struct gs_config_store *st = gs_cfg_store_get(L->c);
    if (nd->n == 0) ERR_NODE(L, nd, path, "the list is empty");
    for (size_t i = 0; i < nd->n; i++) {
        node *it = nd->vals[i];
        if (it->poisoned) continue;
        if (it->kind != N_SCALAR) {
            ERR_NODE(L, it, path, "expected %s name, got %s", is_ops ? "an op" : "a dtype",
                     kind_word(it->kind));
            continue;
        }
        size_t k = 0;
        while (k < count && strcmp(names[k], it->text))
            k++;
        if (k == count) {
            char dym[128];
            ERR_NODE(L, it, path, "unknown %s '%s'%s", is_ops ? "op" : "dtype", it->text,
                     gs_cfg_did_you_mean(dym, sizeof dym, it->text, names, count));
            continue;
        }
        if (is_ops) {
            if (L->c->ops & (1ull << k)) {
                ERR_NODE(L, it, path, "'%s' is listed twice", it->text);
                continue;
            }
            L->c->ops |= 1ull << k;
            if (st) set_loc(&st->ops_loc[k], it);
        } else {
            if (L->c->dtypes & (1u << k)) {
                ERR_NODE(L, it, path, "'%s' is listed twice", it->text);
                continue;
            }
            L->c->dtypes |= 1u << k;
            if (st) set_loc(&st->dtype_loc[k], it);
        }
    }
}

void gs_cfg_walk_sources(loader *L, node *nd)
{
    if (nd->poisoned) return;
    if (nd->kind != N_MAP) {
        ERR_NODE(L, nd, "sources", "expected a mapping of KEY: citation, got %s",
                 kind_word(nd->kind));
        return;
    }
    gs_config *c = L->c;
    c->source_keys = gs_calloc(nd->n ? nd->n : 1, sizeof(char *));
    c->source_refs = gs_calloc(nd->n ? nd->n : 1, sizeof(char *));
    if (!c->source_keys || !c->source_refs) return;
    for (size_t i = 0; i < nd->n; i++) {
        node *k = nd->keys[i], *v = nd->vals[i];
        char path[160];
        snprintf(path, sizeof path, "sources.%.100s", k->text);
        if (!valid_ident(k->text) || strlen(k->text) >= 48) {
            ERR_NODE(L, k, path,
                     "a source key must be a short name of letters, digits, '_', '-', '.'");
            continue;
        }
        if (!strcmp(k->text, "assumed") || !strcmp(k->text, "fit") || !strcmp(k->text, "--set")) {
            ERR_NODE(L, k, path, "'%s' is reserved and cannot be a source key", k->text);
            continue;
        }
        if (v->poisoned) continue;
        if (v->kind != N_SCALAR || !v->text[0]) {
            ERR_NODE(L, v, path, "expected a citation (URL or document name)");
            continue;
        }
        char *ks = gs_strdup(k->text), *vs = gs_strdup(v->text);
        if (!ks || !vs) {
            gs_free(ks);
            gs_free(vs);
            continue;
        }
        c->source_keys[c->n_sources] = ks;
        c->source_refs[c->n_sources] = vs;
        c->n_sources++;
    }
}

static gs_simd_cfg *simd_of(gs_config *c, int eng)
{
    return eng == GS_ENG_VECTOR ? &c->vector : eng == GS_ENG_SCALAR ? &c->scalar : &c->gpsimd;
}

static void unknown_key(loader *L, node *key, const char *parent, const char *full)
{
    char dym[160];
    if (gs_cfg_is_dtype_map(parent)) {
        const char *names[GS_DTYPE_COUNT];
        name_list(0, names);
        ERR_NODE(L, key, full, "unknown dtype '%s'%s", key->text,
                 gs_cfg_did_you_mean(dym, sizeof dym, key->text, names, GS_DTYPE_COUNT));
        return;
    }
    gs_cfg_unknown_key_hint(dym, sizeof dym, parent, key->text);
    ERR_NODE(L, key, full, "unknown key%s", dym);
}

void gs_cfg_walk_map(loader *L, node *m, const char *path)
{
    int eng = gs_cfg_engine_of_path(path);
    int is_engine_map = eng >= 0 && strchr(path + 8, '.') == NULL; /* engines.X itself */
    int absent = 0;
    if (is_engine_map) {
        node *pv = gs_cfg_map_get(m, "present");
        gs_simd_cfg *sc = simd_of(L->c, eng);
        sc->present = 1;
        if (pv) {
            char full[160];
            join_key(full, sizeof full, path, "present");
            int b = walk_bool(L, pv, full);
            if (b >= 0) sc->present = b;
            struct gs_config_store *st = gs_cfg_store_get(L->c);
            if (st) set_loc(&st->present_loc[eng], pv);
        }
        absent = !sc->present;
    }
    for (size_t i = 0; i < m->n; i++) {
        node *k = m->keys[i], *v = m->vals[i];
        char full[192];
        join_key(full, sizeof full, path, k->text);
        if (k->poisoned) continue;
        if (is_engine_map && !strcmp(k->text, "present")) continue;
        int fi = gs_cfg_field_index(full);
        const special_def *sp = fi < 0 ? gs_cfg_special_find(full) : NULL;
        if (fi < 0 && !sp) {
            unknown_key(L, k, path, full);
            continue;
        }
        if (absent) {
            ERR_NODE(L, k, full, "%s has 'present: false', so it takes no other keys", path);
            continue;
        }
        if (fi >= 0) {
            walk_number(L, v, full, (size_t)fi);
            continue;
        }
        switch (sp->kind) {
        case SK_MAP:
            if (v->poisoned) break;
            if (v->kind != N_MAP)
                ERR_NODE(L, v, full, "expected a mapping, got %s", kind_word(v->kind));
            else
                gs_cfg_walk_map(L, v, full);
            break;
        case SK_BOOL: {
            int b = walk_bool(L, v, full);
            if (b < 0) break;
            if (!strcmp(full, "core.dma.transpose")) {
                L->c->dma.transpose = b;
                struct gs_config_store *st = gs_cfg_store_get(L->c);
                if (st) set_loc(&st->transpose_loc, v);
            } else if (!strcmp(full, "core.dma.hw_descriptors")) {
                L->c->dma.hw_descriptors = b;
            } else if (!strcmp(full, "core.dma.cast")) {
                L->c->dma.cast = b;
            } else if (!strcmp(full, "engines.tensor.double_row")) {
                L->c->tensor.double_row = b;
            } else if (!strcmp(full, "engines.tensor.bf16_psum")) {
                L->c->tensor.bf16_psum = b;
            }
            break;
        }
        case SK_DTYPES:
            walk_list(L, v, full, 0);
            break;
        case SK_OPS:
            walk_list(L, v, full, 1);
            break;
        case SK_SOURCES:
            break; /* read before the walk */
        case SK_STRING: {
            const char *s = walk_string(L, v, full);
            if (!s) break;
            if (!strcmp(full, "name")) {
                if (!valid_ident(s) || strlen(s) > 64) {
                    ERR_NODE(L, v, full,
                             "a name must be letters, digits, '_', '-', '.' (at most "
                             "64 characters)");
                    break;
                }
                gs_free(L->c->name);
                L->c->name = gs_strdup(s);
            } else if (!strcmp(full, "family")) {
                /* Checked against the registered families (gs/family.h) after the walk. */
                struct gs_config_store *st = gs_cfg_store_get(L->c);
                if (st) set_loc(&st->family_loc, v);
                gs_free(L->c->family);
                L->c->family = gs_strdup(s);
            } else if (!strcmp(full, "description")) {
                gs_free(L->c->description);
                L->c->description = gs_strdup(s);
            }
            break;
        }
        }
    }
}

/* Location to blame for a missing key: the deepest map on its path that exists. Also returns
 * how many path components were found. */
static const node *locate(const node *root, const char *path, size_t *found, size_t *total)
{
    const node *cur = root;
    char buf[192];
    snprintf(buf, sizeof buf, "%s", path);
    size_t comps = 1;
    for (const char *p = buf; *p; p++)
        comps += *p == '.';
    *total = comps;
    *found = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        node *nx = gs_cfg_map_get(cur, tok);
        if (!nx || nx->kind != N_MAP) break;
        cur = nx;
        (*found)++;
    }
    return cur;
}

static void report_missing(loader *L, const char *path, const char *what)
{
    size_t found, total;
    const node *at = locate(L->root, path, &found, &total);
    if (found + 1 >= total) {
        ERR_NODE(L, at, path, "missing required key (%s)", what);
        return;
    }
    /* Name the missing section once rather than every key in it. */
    char sect[192];
    snprintf(sect, sizeof sect, "%s", path);
    char *p = sect;
    for (size_t k = 0; k <= found; k++) {
        p = strchr(p, '.');
        if (!p) break;
        if (k == found)
            *p = '\0';
        else
            p++;
    }
    for (size_t i = 0; i < L->n_sections; i++)
        if (!strcmp(L->sections[i], sect)) return;
    if (L->n_sections < GS_ARRAY_LEN(L->sections))
        snprintf(L->sections[L->n_sections++], sizeof L->sections[0], "%.63s", sect);
    if (!strncmp(sect, "engines.", 8) && gs_cfg_engine_of_path(sect) >= 0)
        ERR_NODE(L, at, sect,
                 "missing required section (write 'present: false' under it if the "
                 "generation has no such engine)");
    else
        ERR_NODE(L, at, sect, "missing required section");
}

void gs_cfg_check_required(loader *L)
{
    gs_config *c = L->c;
    for (size_t i = 0; i < gs_cfg_n_fields; i++) {
        if (!gs_cfg_fields[i].required) continue;
        if (gs_cfg_impls[i].engine >= 0 &&
            !gs_config_has_engine(c, (gs_engine)gs_cfg_impls[i].engine))
            continue;
        if (!gs_cfg_cnum_at(c, i)->src)
            report_missing(L, gs_cfg_fields[i].path, gs_cfg_fields[i].description);
    }
    static const char *const dmaps[] = {"engines.tensor.rate", "engines.vector.elems_per_cycle",
                                        "engines.scalar.elems_per_cycle",
                                        "engines.gpsimd.elems_per_cycle"};
    for (size_t k = 0; k < GS_ARRAY_LEN(dmaps); k++) {
        int eng = gs_cfg_engine_of_path(dmaps[k]);
        if (eng >= 0 && !gs_config_has_engine(c, (gs_engine)eng)) continue;
        int any = 0;
        char full[128];
        for (int t = 0; t < GS_DTYPE_COUNT; t++) {
            snprintf(full, sizeof full, "%s.%s", dmaps[k], gs_dtype_name((gs_dtype)t));
            const gs_num *n = gs_config_get(c, full);
            if (n && n->src) any = 1;
        }
        if (!any) report_missing(L, dmaps[k], "a map of dtype: value, at least one entry");
    }
    if (!c->family && !gs_cfg_map_get(L->root, "family"))
        report_missing(L, "family", "the family whose behaviour applies (a genN/ folder)");
    if (!c->dtypes && !gs_cfg_map_get(L->root, "dtypes"))
        report_missing(L, "dtypes", "list of supported dtypes");
    if (!c->ops && !gs_cfg_map_get(L->root, "ops"))
        report_missing(L, "ops", "list of supported ops");
}
