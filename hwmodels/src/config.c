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
#include <stdio.h>
#include <string.h>

/* The ops list is stored as bits in gs_opcode order; these pin the order config files rely on
 * (a reordering of GS_OPCODE_TABLE must be a deliberate, visible change). */
_Static_assert(GS_OPCODE_COUNT == 25, "ops: update the config loader and SCHEMA.md");
_Static_assert(GS_OP_DMA_COPY == 0 && GS_OP_MATMUL == 2 && GS_OP_MEMSET == 11 &&
                   GS_OP_GATHER == 16 && GS_OP_MATMUL_MX == 17 && GS_OP_QUANTIZE_MX == 18 &&
                   GS_OP_EXPONENTIAL == 19,
               "gs_opcode order changed: config ops bits depend on it");
_Static_assert(GS_OP_MAX8 == 20 && GS_OP_FIND_INDEX8 == 21 && GS_OP_MATCH_REPLACE8 == 22,
               "gs_opcode order changed: config ops bits depend on it (top-k ops)");
_Static_assert(GS_OP_TENSOR_TENSOR_SCAN == 23 && GS_OP_STREAM_SHUFFLE == 24,
               "gs_opcode order changed: config ops bits depend on it");
_Static_assert(GS_OPCODE_COUNT <= 64, "ops is a uint64_t bit set");
_Static_assert(GS_DTYPE_COUNT <= 32, "dtypes is a uint32_t bit set");

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

unsigned gs_config_engine_mask(const gs_config *c)
{
    unsigned m = 0;
    for (int e = 0; e < GS_ENGINE_COUNT; e++)
        if (gs_config_has_engine(c, (gs_engine)e)) m |= 1u << e;
    return m;
}
