/*
 * config.c - the generation config loader's entry points (see gs/config.h, configs/SCHEMA.md
 * and, for how the loader is split into parts, config_internal.h): gs_config_load and
 * gs_config_load_string drive the pipeline (read, parse and resolve extends:, walk, check
 * required keys, validate) over one loader context; this file also owns what every part
 * shares at run time: engine names, the per-config string store that gs_num provenance points
 * into, the error helpers, gs_config_free and the derived numbers (pure functions of a loaded
 * config). It stays separate from the parts so a reader sees the whole load in one function.
 */
#include "config_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "gs/family.h"
#include "gs/strbuf.h"
#include "gs/units.h"

/* The ops list is stored as bits in gs_opcode order; these pin the order config files rely on
 * (a reordering of GS_OPCODE_TABLE must be a deliberate, visible change). */
_Static_assert(GS_OPCODE_COUNT == 20, "ops: update the config loader and SCHEMA.md");
_Static_assert(GS_OP_DMA_COPY == 0 && GS_OP_MATMUL == 2 && GS_OP_MEMSET == 11 &&
                   GS_OP_GATHER == 16 && GS_OP_MATMUL_MX == 17 && GS_OP_QUANTIZE_MX == 18 &&
                   GS_OP_EXPONENTIAL == 19,
               "gs_opcode order changed: config ops bits depend on it");
_Static_assert(GS_OPCODE_COUNT <= 64, "ops is a uint64_t bit set");
_Static_assert(GS_DTYPE_COUNT <= 32, "dtypes is a uint32_t bit set");

/* ------------------------------------------------------------------------------------------ */
/* names                                                                                      */

static const char *const engine_names[] = {
#define GS_ENGINE_NAME(e, n) n,
    GS_ENGINE_TABLE(GS_ENGINE_NAME)
#undef GS_ENGINE_NAME
};

const char *gs_engine_name(gs_engine e)
{
    if ((int)e < 0 || e >= GS_ENGINE_COUNT) return "?";
    return engine_names[e];
}

int gs_engine_parse(const char *name, gs_engine *out)
{
    if (!name) return -1;
    for (int i = 0; i < GS_ENGINE_COUNT; i++)
        if (!strcmp(name, engine_names[i])) {
            if (out) *out = (gs_engine)i;
            return 0;
        }
    return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* the store: strings owned by a config, and locations of non-numeric values                 */

typedef struct store_str {
    struct store_str *next;
    char s[];
} store_str;

struct gs_config_store *gs_cfg_store_get(gs_config *c)
{
    if (!c->store) c->store = gs_calloc(1, sizeof *c->store);
    return c->store;
}

/* Copy of s[0..n) owned by the config's store; NULL on OOM. Equal strings are shared. */
const char *gs_cfg_store_intern(gs_config *c, const char *s, size_t n)
{
    struct gs_config_store *st = gs_cfg_store_get(c);
    if (!st || !s) return NULL;
    for (store_str *p = st->strs; p; p = p->next)
        if (strlen(p->s) == n && memcmp(p->s, s, n) == 0) return p->s;
    store_str *p = gs_malloc(sizeof *p + n + 1);
    if (!p) return NULL;
    memcpy(p->s, s, n);
    p->s[n] = '\0';
    p->next = st->strs;
    st->strs = p;
    return p->s;
}
const char *gs_cfg_store_cstr(gs_config *c, const char *s)
{
    return s ? gs_cfg_store_intern(c, s, strlen(s)) : NULL;
}

static void store_free(struct gs_config_store *st)
{
    if (!st) return;
    for (store_str *p = st->strs, *n; p; p = n) {
        n = p->next;
        gs_free(p);
    }
    gs_free(st);
}

/* ------------------------------------------------------------------------------------------ */
/* loader context and error helpers                                                           */

size_t gs_cfg_diag_total(const gs_diags *d)
{
    return d->count + d->dropped;
}

void gs_cfg_errat(loader *L, const char *file, int line, int col, const char *path, const char *fmt,
                  ...)
{
    char msg[GS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (path && *path)
        gs_diags_add(L->d, GS_ERR_INVALID, file, line, col, "%s: %s", path, msg);
    else
        gs_diags_add(L->d, GS_ERR_INVALID, file, line, col, "%s", msg);
}

/* ------------------------------------------------------------------------------------------ */
/* load entry points                                                                          */

/* Values rejected during the walk were marked with src ""; clear that so nothing downstream
 * mistakes them for written ones (the config is discarded anyway). */
static gs_config *finish(loader *L, gs_diags *local)
{
    int failed = gs_cfg_diag_total(L->d) != L->start;
    if (local) gs_diags_free(local);
    if (failed) {
        gs_config_free(L->c);
        return NULL;
    }
    return L->c;
}

static gs_config *load_common(const char *text, size_t len, const char *display, const char *dir,
                              int have_id, dev_t dev, ino_t ino, gs_diags *diags)
{
    gs_diags local;
    gs_diags_init(&local);
    loader L;
    memset(&L, 0, sizeof L);
    L.d = diags ? diags : &local;
    L.start = gs_cfg_diag_total(L.d);
    L.c = gs_calloc(1, sizeof *L.c);
    if (!L.c || !gs_cfg_store_get(L.c)) {
        gs_diags_add(L.d, GS_ERR_NOMEM, display, 0, 0, "out of memory");
        gs_config_free(L.c);
        gs_diags_free(&local);
        return NULL;
    }
    gs_cfg_apply_defaults(L.c);
    L.c->path = gs_strdup(display);
    const char *file = gs_cfg_store_cstr(L.c, display);
    if (have_id) {
        L.chain[0].dev = dev;
        L.chain[0].ino = ino;
        L.chain[0].display = file;
        L.chain_len = 1;
    }
    node *root = file ? gs_cfg_load_tree(&L, text, len, file, dir ? dir : ".", 0) : NULL;
    if (!root) {
        if (gs_cfg_diag_total(L.d) == L.start)
            gs_diags_add(L.d, GS_ERR_NOMEM, display, 0, 0, "out of memory");
        return finish(&L, diags ? NULL : &local);
    }
    L.root = root;
    node *src = gs_cfg_map_get(root, "sources");
    if (src) gs_cfg_walk_sources(&L, src);
    gs_cfg_walk_map(&L, root, "");
    gs_cfg_check_required(&L);
    if (!L.c->name) {
        /* default: the file's base name without extension */
        const char *base = strrchr(display, '/');
        base = base ? base + 1 : display;
        size_t n = strlen(base);
        if (gs_cfg_ends_with(base, ".yaml"))
            n -= 5;
        else if (gs_cfg_ends_with(base, ".yml"))
            n -= 4;
        L.c->name = gs_strndup(base, n);
    }
    /* A failed copy of a present name/family would otherwise pass silently. */
    if (!L.c->name || (!L.c->family && gs_cfg_diag_total(L.d) == L.start))
        gs_diags_add(L.d, GS_ERR_NOMEM, display, 0, 0, "out of memory");
    gs_cfg_validate(L.c, L.bad, L.d);
    gs_cfg_node_free(root);
    return finish(&L, diags ? NULL : &local);
}

gs_config *gs_config_load(const char *path, gs_diags *diags)
{
    gs_diags local;
    gs_diags_init(&local);
    gs_diags *d = diags ? diags : &local;
    if (!path) {
        gs_diags_add(d, GS_ERR_USAGE, NULL, 0, 0, "no config path given");
        gs_diags_free(&local);
        return NULL;
    }
    size_t len;
    dev_t dev;
    ino_t ino;
    char why[256];
    char *text = gs_cfg_read_file(path, &len, &dev, &ino, why, sizeof why);
    if (!text) {
        gs_diags_add(d, GS_ERR_IO, path, 0, 0, "%s", why);
        gs_diags_free(&local);
        return NULL;
    }
    char *dir = gs_cfg_dir_of(path);
    gs_config *c = dir ? load_common(text, len, path, dir, 1, dev, ino, d) : NULL;
    if (!dir) gs_diags_add(d, GS_ERR_NOMEM, path, 0, 0, "out of memory");
    gs_free(dir);
    gs_free(text);
    gs_diags_free(&local);
    return c;
}

gs_config *gs_config_load_string(const char *text, size_t len, const char *name, const char *dir,
                                 gs_diags *diags)
{
    dev_t z = 0;
    ino_t zi = 0;
    return load_common(text ? text : "", text ? len : 0, name ? name : "<string>", dir, 0, z, zi,
                       diags);
}

void gs_config_free(gs_config *c)
{
    if (!c) return;
    gs_free(c->name);
    gs_free(c->family);
    gs_free(c->description);
    gs_free(c->path);
    for (size_t i = 0; i < c->n_sources; i++) {
        gs_free(c->source_keys[i]);
        gs_free(c->source_refs[i]);
    }
    gs_free(c->source_keys);
    gs_free(c->source_refs);
    store_free(c->store);
    gs_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* derived numbers                                                                            */

static size_t to_size(double v)
{
    if (!(v >= 0) || !isfinite(v) || v > 9007199254740992.0) return 0;
    return (size_t)v;
}

size_t gs_config_sbuf_partition_bytes(const gs_config *c)
{
    if (!c || !(c->partitions.v > 0)) return 0;
    return to_size(c->sbuf_bytes.v / c->partitions.v);
}

size_t gs_config_psum_partition_bytes(const gs_config *c)
{
    if (!c || !(c->partitions.v > 0)) return 0;
    return to_size(c->psum_bytes.v / c->partitions.v);
}

size_t gs_config_psum_bank_bytes(const gs_config *c)
{
    if (!c || !(c->partitions.v > 0) || !(c->psum_banks.v > 0)) return 0;
    return to_size(c->psum_bytes.v / c->partitions.v / c->psum_banks.v);
}

double gs_config_peak_flops(const gs_config *c, gs_dtype t)
{
    if (!c || (int)t < 0 || t >= GS_DTYPE_COUNT) return 0;
    const gs_num *r = &c->tensor.rate[t];
    if (!r->src || !(r->v > 0)) return 0;
    /* values contracted per PE row per column: 2 in fp8 double-row mode, 4 for the quad-packed
     * MX types (one x4 element per PE per cycle) */
    double k = 1.0;
    if (c->tensor.double_row && (t == GS_FP8_E4M3 || t == GS_FP8_E5M2)) k = 2.0;
    if (t == GS_FP8_E4M3_X4 || t == GS_FP8_E5M2_X4 || t == GS_FP4_E2M1_X4) k = 4.0;
    return 2.0 * k * c->tensor.rows.v * c->tensor.cols.v * c->tensor.clock.v * r->v;
}

unsigned gs_config_dma_partitions_per_engine(const gs_config *c)
{
    if (c->dma.partitions_per_engine.v >= 1) return (unsigned)c->dma.partitions_per_engine.v;
    const double e = c->dma.engines.v >= 1 ? c->dma.engines.v : 1;
    const double p = ceil(c->partitions.v / e);
    return p >= 1 ? (unsigned)p : 1u;
}

double gs_config_dma_core_bytes_per_ns(const gs_config *c)
{
    return c->dma.engines.v * c->dma.bandwidth_per_engine.v;
}

double gs_config_hbm_bytes_per_s(const gs_config *c)
{
    return c ? c->hbm_bandwidth.v * 1e9 : 0;
}

int gs_config_has_dtype(const gs_config *c, gs_dtype t)
{
    if (!c || (int)t < 0 || t >= GS_DTYPE_COUNT) return 0;
    return (c->dtypes >> t) & 1u;
}

int gs_config_has_engine(const gs_config *c, gs_engine e)
{
    if (!c) return 0;
    switch (e) {
    case GS_ENG_TENSOR:
    case GS_ENG_DMA:
        return 1;
    case GS_ENG_VECTOR:
        return c->vector.present;
    case GS_ENG_SCALAR:
        return c->scalar.present;
    case GS_ENG_GPSIMD:
        return c->gpsimd.present;
    default:
        return 0;
    }
}

void gs_cfg_node_free(node *nd)
{
    if (!nd) return;
    for (size_t i = 0; i < nd->n; i++) {
        if (nd->keys) gs_cfg_node_free(nd->keys[i]);
        gs_cfg_node_free(nd->vals[i]);
    }
    gs_free(nd->keys);
    gs_free(nd->vals);
    gs_free(nd->text);
    gs_free(nd);
}

int gs_cfg_node_push(node *parent, node *key, node *val)
{
    if (parent->n == parent->cap) {
        size_t ncap = parent->cap ? parent->cap * 2 : 8;
        node **nv = gs_realloc(parent->vals, ncap * sizeof *nv);
        if (!nv) return -1;
        parent->vals = nv;
        if (parent->kind == N_MAP) {
            node **nk = gs_realloc(parent->keys, ncap * sizeof *nk);
            if (!nk) return -1;
            parent->keys = nk;
        }
        parent->cap = ncap;
    }
    if (parent->kind == N_MAP) parent->keys[parent->n] = key;
    parent->vals[parent->n++] = val;
    return 0;
}

int gs_cfg_map_find(const node *m, const char *key)
{
    if (!m || m->kind != N_MAP || !key) return -1;
    for (size_t i = 0; i < m->n; i++)
        if (m->keys[i]->text && !strcmp(m->keys[i]->text, key)) return (int)i;
    return -1;
}

node *gs_cfg_map_get(const node *m, const char *key)
{
    int i = gs_cfg_map_find(m, key);
    return i < 0 ? NULL : m->vals[i];
}

/* Remove key from m; returns the value (caller frees) and frees the key node. */
node *gs_cfg_map_take(node *m, const char *key)
{
    int i = gs_cfg_map_find(m, key);
    if (i < 0) return NULL;
    node *v = m->vals[i];
    gs_cfg_node_free(m->keys[i]);
    for (size_t j = (size_t)i + 1; j < m->n; j++) {
        m->keys[j - 1] = m->keys[j];
        m->vals[j - 1] = m->vals[j];
    }
    m->n--;
    return v;
}

/* ------------------------------------------------------------------------------------------ */
/* input checks and YAML parsing                                                              */

/* Returns 0 when text is valid UTF-8; else the 1-based line/column of the first bad byte. */
static int check_utf8(const unsigned char *s, size_t n, int *line, int *col)
{
    int ln = 1, cl = 1;
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        size_t need;
        uint32_t cp;
        if (b < 0x80) {
            need = 0;
            cp = b;
        } else if ((b & 0xE0) == 0xC0) {
            need = 1;
            cp = b & 0x1F;
        } else if ((b & 0xF0) == 0xE0) {
            need = 2;
            cp = b & 0x0F;
        } else if ((b & 0xF8) == 0xF0) {
            need = 3;
            cp = b & 0x07;
        } else {
            goto bad;
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) goto bad;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
        if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
            goto bad;
        if (b == '\n') {
            ln++;
            cl = 1;
        } else {
            cl++;
        }
        i += need + 1;
    }
    return 0;
bad:
    *line = ln;
    *col = cl;
    return -1;
}

typedef struct frame {
    node *nd;
    node *pending_key; /* map: key read, value not yet */
    int dup;           /* map: the pending key is a duplicate; drop its value */
} frame;

static node *new_node(loader *L, nkind k, const char *file, yaml_mark_t m)
{
    node *nd = gs_calloc(1, sizeof *nd);
    if (!nd) return NULL;
    nd->kind = k;
    nd->file = file;
    nd->line = (int)m.line + 1;
    nd->col = (int)m.column + 1;
    L->nodes++;
    return nd;
}

/* Attach a finished node to the frame on top of the stack. Returns -1 on a fatal problem. */
static int attach(loader *L, frame *f, node *nd)
{
    node *p = f->nd;
    if (p->kind == N_SEQ) {
        if (gs_cfg_node_push(p, NULL, nd) == 0) return 0;
        gs_cfg_node_free(nd);
        goto oom;
    }
    if (!f->pending_key) {
        if (nd->kind != N_SCALAR) {
            ERR_NODE(L, nd, NULL, "mapping keys must be plain strings");
            gs_cfg_node_free(nd);
            return -1;
        }
        int prev = gs_cfg_map_find(p, nd->text);
        f->dup = prev >= 0;
        if (f->dup)
            ERR_NODE(L, nd, nd->text, "duplicate key (first defined at line %d)",
                     p->keys[prev]->line);
        f->pending_key = nd;
        return 0;
    }
    if (f->dup) {
        gs_cfg_node_free(f->pending_key);
        gs_cfg_node_free(nd);
    } else if (gs_cfg_node_push(p, f->pending_key, nd) < 0) {
        gs_cfg_node_free(f->pending_key);
        f->pending_key = NULL;
        gs_cfg_node_free(nd);
        goto oom;
    }
    f->pending_key = NULL;
    f->dup = 0;
    return 0;
oom:
    gs_diags_add(L->d, GS_ERR_NOMEM, p->file, 0, 0, "out of memory");
    return -1;
}

#define MAX_NODES 200000

/* Parse one YAML document into a tree. Returns NULL after reporting when nothing usable was
 * read (syntax error, empty file, ...). */
node *gs_cfg_parse_yaml(loader *L, const char *text, size_t len, const char *file)
{
    if (len > GS_CONFIG_MAX_BYTES) {
        gs_cfg_errat(L, file, 0, 0, NULL, "file is larger than %d bytes (%zu bytes)",
                     GS_CONFIG_MAX_BYTES, len);
        return NULL;
    }
    int bl, bc;
    if (check_utf8((const unsigned char *)text, len, &bl, &bc) < 0) {
        gs_cfg_errat(L, file, bl, bc, NULL, "invalid UTF-8 (config files must be UTF-8 text)");
        return NULL;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        gs_diags_add(L->d, GS_ERR_NOMEM, file, 0, 0, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

    frame stack[GS_CONFIG_MAX_DEPTH + 1];
    size_t depth = 0;
    node *root = NULL;
    int docs = 0, fatal = 0, done = 0;
    while (!done && !fatal) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            yaml_mark_t m = parser.problem_mark;
            const char *what = parser.problem ? parser.problem : "malformed YAML";
            /* The usual cause: a value with a note holding ": " left unquoted
             * (bandwidth: 23GB/s [DMA: per engine: measured]) */
            const char *hint =
                strstr(what, "mapping values are not allowed")
                    ? " (hint: a value whose [SOURCE: note] contains ': ' must be quoted, e.g. "
                      "key: \"23GB/s [DMA: note]\")"
                    : "";
            if (parser.context)
                gs_cfg_errat(L, file, (int)m.line + 1, (int)m.column + 1, NULL,
                             "YAML syntax error: %s %s%s", what, parser.context, hint);
            else
                gs_cfg_errat(L, file, (int)m.line + 1, (int)m.column + 1, NULL,
                             "YAML syntax error: %s%s", what, hint);
            fatal = 1;
            break;
        }
        yaml_mark_t m = ev.start_mark;
        const unsigned char *anchor = NULL, *tag = NULL;
        node *made = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                gs_cfg_errat(L, file, (int)m.line + 1, (int)m.column + 1, NULL,
                             "more than one YAML document in a config file");
                fatal = 1;
            }
            break;
        case YAML_ALIAS_EVENT:
            gs_cfg_errat(L, file, (int)m.line + 1, (int)m.column + 1, NULL,
                         "YAML aliases (*%s) are not allowed in config files (they can expand "
                         "exponentially); use 'extends:' to share values",
                         ev.data.alias.anchor ? (const char *)ev.data.alias.anchor : "");
            /* A placeholder keeps the structure (an alias may be a key); it stays quiet. */
            made = new_node(L, N_SCALAR, file, m);
            if (made) {
                made->poisoned = 1;
                made->text = gs_strdup("");
                if (!made->text) {
                    gs_cfg_node_free(made);
                    made = NULL;
                    gs_diags_add(L->d, GS_ERR_NOMEM, file, 0, 0, "out of memory");
                    fatal = 1;
                }
            }
            break;
        case YAML_SCALAR_EVENT:
            anchor = ev.data.scalar.anchor;
            tag = ev.data.scalar.tag;
            made = new_node(L, N_SCALAR, file, m);
            if (made) {
                made->text = gs_strndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
                if (!made->text) {
                    gs_cfg_node_free(made);
                    made = NULL;
                } else if (memchr(ev.data.scalar.value, 0, ev.data.scalar.length)) {
                    /* a "\0" escape would silently cut the string at C's terminator */
                    ERR_NODE(L, made, NULL, "a NUL character (\\0) in a string is not allowed");
                    made->poisoned = 1;
                } else {
                    /* "\e[2J" and friends: text from a config ends up on terminals and in
                     * reports, so control characters (other than tab and newline) are refused */
                    const unsigned char *v = ev.data.scalar.value;
                    for (size_t q = 0; q < ev.data.scalar.length; q++) {
                        unsigned ch = v[q];
                        int c1 = ch == 0xC2 && q + 1 < ev.data.scalar.length && v[q + 1] >= 0x80 &&
                                 v[q + 1] <= 0x9F;
                        if ((ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || ch == 0x7F ||
                            c1) {
                            ERR_NODE(L, made, NULL,
                                     "a control character (\\x%02x) in a string is not allowed",
                                     c1 ? v[q + 1] : ch);
                            made->poisoned = 1;
                            break;
                        }
                    }
                }
            }
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT: {
            int is_map = ev.type == YAML_MAPPING_START_EVENT;
            anchor = is_map ? ev.data.mapping_start.anchor : ev.data.sequence_start.anchor;
            tag = is_map ? ev.data.mapping_start.tag : ev.data.sequence_start.tag;
            if (depth >= GS_CONFIG_MAX_DEPTH) {
                gs_cfg_errat(L, file, (int)m.line + 1, (int)m.column + 1, NULL,
                             "nesting deeper than %d levels", GS_CONFIG_MAX_DEPTH);
                fatal = 1;
                break;
            }
            node *nd = new_node(L, is_map ? N_MAP : N_SEQ, file, m);
            if (!nd) {
                fatal = 1;
                gs_diags_add(L->d, GS_ERR_NOMEM, file, 0, 0, "out of memory");
                break;
            }
            if (anchor)
                ERR_NODE(L, nd, NULL, "YAML anchors (&%s) are not allowed in config files",
                         (const char *)anchor);
            if (tag)
                ERR_NODE(L, nd, NULL, "explicit YAML tags (%s) are not allowed in config files",
                         (const char *)tag);
            if (anchor || tag) nd->poisoned = 1;
            stack[depth].nd = nd;
            stack[depth].pending_key = NULL;
            stack[depth].dup = 0;
            depth++;
            anchor = tag = NULL;
            break;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            if (depth == 0) break;
            made = stack[--depth].nd;
            if (stack[depth].pending_key) gs_cfg_node_free(stack[depth].pending_key);
            break;
        default:
            break;
        }
        if (ev.type == YAML_SCALAR_EVENT && !made && !fatal) {
            gs_diags_add(L->d, GS_ERR_NOMEM, file, 0, 0, "out of memory");
            fatal = 1;
        }
        if (made && (anchor || tag)) {
            if (anchor)
                ERR_NODE(L, made, NULL, "YAML anchors (&%s) are not allowed in config files",
                         (const char *)anchor);
            if (tag)
                ERR_NODE(L, made, NULL, "explicit YAML tags (%s) are not allowed in config files",
                         (const char *)tag);
            made->poisoned = 1;
        }
        if (made) {
            if (depth == 0) {
                if (root) gs_cfg_node_free(root);
                root = made;
            } else if (attach(L, &stack[depth - 1], made) < 0) {
                fatal = 1;
            }
        }
        if (L->nodes > MAX_NODES && !fatal) {
            gs_cfg_errat(L, file, (int)m.line + 1, (int)m.column + 1, NULL,
                         "too many YAML nodes (more than %d)", MAX_NODES);
            fatal = 1;
        }
        yaml_event_delete(&ev);
    }
    while (depth > 0) {
        depth--;
        gs_cfg_node_free(stack[depth].pending_key);
        gs_cfg_node_free(stack[depth].nd);
    }
    yaml_parser_delete(&parser);
    if (fatal) {
        gs_cfg_node_free(root);
        return NULL;
    }
    /* A document that is only a YAML null ("", "~", "null") is an empty config. */
    if (!root || (root->kind == N_SCALAR && !root->poisoned &&
                  (!root->text || !root->text[0] || !strcmp(root->text, "~") ||
                   !strcmp(root->text, "null")))) {
        gs_cfg_errat(L, file, 1, 1, NULL, "empty config (no YAML content)");
        gs_cfg_node_free(root);
        return NULL;
    }
    if (root->kind != N_MAP) {
        ERR_NODE(L, root, NULL, "the top level of a config must be a mapping of keys");
        gs_cfg_node_free(root);
        return NULL;
    }
    return root;
}
