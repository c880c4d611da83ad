/*
 * config_internal.h - private to the config loader (gs/config.h): the types and calls shared by
 * its parts. Not installed; everything else uses gs/config.h.
 *
 *   config.c          names, the string store, the loader context, load entry points, derived
 *                     numbers
 *   config_yaml.c     libyaml events -> a tree of nodes with file:line:col
 *   config_file.c     reading files, `extends:` (merge, `delete:` lists, cycles)
 *   config_schema.c   the key table (FIELDS), key lookup, suggestions, per-value range rules
 *   config_walk.c     the tree walked against the key table into a gs_config (provenance tags)
 *   config_validate.c cross-field consistency checks and --set
 *   config_dump.c     show-config's YAML
 *
 * Pipeline: bytes -> (size, UTF-8 checks) -> libyaml events -> a small tree with line/column
 * per node (anchors, aliases, tags, duplicate keys and deep nesting rejected there) ->
 * `extends:` resolved by loading the parent tree and deep-merging the child over it -> the tree
 * is walked against the schema (unknown keys, types, units, provenance tags, per-value ranges)
 * into a gs_config -> cross-field consistency checks on the struct (the same checks re-run
 * after every --set). Every problem is appended to the caller's gs_diags; nothing stops at the
 * first error except YAML syntax errors (libyaml cannot resume after one).
 */
#ifndef GS_CONFIG_INTERNAL_H
#define GS_CONFIG_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "gs/config.h"
#include "gs/isa.h"

/* ---- the key table (config_schema.c) ---- */

enum {
    FF_ZERO_OK = 1u << 0, /* 0 is a valid value (overheads that can vanish) */
};

typedef struct field_impl {
    size_t off; /* offsetof(gs_config, the gs_num) */
    unsigned flags;
    int engine; /* -1, or the engine that must be present for the key to apply */
    int dtype;  /* -1, or the dtype of a per-dtype entry (rate, elems_per_cycle) */
    double def; /* value of an optional key that is not written */
} field_impl;

/* Upper bound of the number of numeric keys (checked where the table is defined): sizes the
 * loader's per-key flags and the --set candidate list. */
#define GS_CFG_MAX_FIELDS 256

/* Every numeric key: the public description (gs_config_fields) and, at the same index, how the
 * loader stores it. */
extern const gs_config_field gs_cfg_fields[];
extern const field_impl gs_cfg_impls[];
extern const size_t gs_cfg_n_fields;

/* Index of a numeric key by dotted path, or -1. */
int gs_cfg_field_index(const char *path);
/* Index of the numeric key stored at offsetof(gs_config, ...) == off, or -1. */
int gs_cfg_field_index_by_off(size_t off);
/* The gs_num of key i in c. */
gs_num *gs_cfg_num_at(gs_config *c, size_t i);
const gs_num *gs_cfg_cnum_at(const gs_config *c, size_t i);
/* Every numeric key to its default value; every SIMD engine present. */
void gs_cfg_apply_defaults(gs_config *c);

/* Non-numeric keys: where they are allowed and what they hold. */
typedef enum { SK_STRING, SK_BOOL, SK_DTYPES, SK_OPS, SK_SOURCES, SK_MAP } special_kind;
typedef struct special_def {
    const char *path;
    special_kind kind;
} special_def;

const special_def *gs_cfg_special_find(const char *path);
/* Is path a per-dtype map (engines.tensor.rate, engines.X.elems_per_cycle)? */
int gs_cfg_is_dtype_map(const char *path);
/* GS_ENG_VECTOR / SCALAR / GPSIMD when path is (under) engines.vector / scalar / gpsimd, else
 * -1. */
int gs_cfg_engine_of_path(const char *path);

/* Format " (did you mean 'x'?)" into buf, or "" when nothing is close. */
const char *gs_cfg_did_you_mean(char *buf, size_t size, const char *word, const char *const *cands,
                                size_t n);
/* The hint for an unknown key `key` under map path `parent` ("" = top level): the closest
 * sibling key, else the section where a key of that name exists, else "". */
void gs_cfg_unknown_key_hint(char *buf, size_t size, const char *parent, const char *key);

/* Range rules shared by the loader and --set. Returns NULL when v is acceptable, else a reason
 * (possibly written into buf). */
const char *gs_cfg_check_value(size_t fi, double v, char *buf, size_t size);

/* ---- the store (config.c): strings owned by a config, locations of non-numeric values ---- */

typedef struct gs_loc {
    const char *file;
    int line, col;
} gs_loc;

struct store_str;

struct gs_config_store {
    struct store_str *strs;
    gs_loc ops_loc[GS_OPCODE_COUNT];
    gs_loc dtype_loc[GS_DTYPE_COUNT];
    gs_loc present_loc[GS_ENGINE_COUNT];
    gs_loc transpose_loc;
    gs_loc family_loc;
};

/* The config's store, created on first use; NULL on OOM. */
struct gs_config_store *gs_cfg_store_get(gs_config *c);
/* Copy of s[0..n) owned by the config's store; NULL on OOM. Equal strings are shared. */
const char *gs_cfg_store_intern(gs_config *c, const char *s, size_t n);
const char *gs_cfg_store_cstr(gs_config *c, const char *s);

/* ---- the YAML tree (config_yaml.c) ---- */

typedef enum { N_SCALAR, N_MAP, N_SEQ } nkind;

typedef struct node node;
struct node {
    nkind kind;
    int poisoned;     /* already reported (alias, anchor): later checks stay quiet */
    const char *file; /* interned in the config store */
    int line, col;
    char *text; /* scalar value */
    size_t n, cap;
    node **keys; /* map: key scalars, parallel to vals */
    node **vals; /* map values, sequence items */
};

void gs_cfg_node_free(node *nd); /* NULL is a no-op */
/* Append key: val to a map (key NULL for a sequence). Returns 0, or -1 on OOM. */
int gs_cfg_node_push(node *parent, node *key, node *val);
/* Index of key in map m, or -1. */
int gs_cfg_map_find(const node *m, const char *key);
node *gs_cfg_map_get(const node *m, const char *key);
/* Remove key from m; returns the value (caller frees) and frees the key node. */
node *gs_cfg_map_take(node *m, const char *key);

/* ---- the loader context (config.c) ---- */

typedef struct chain_ent {
    dev_t dev;
    ino_t ino;
    const char *display;
} chain_ent;

typedef struct loader {
    gs_diags *d;
    gs_config *c;
    size_t start; /* d->count + d->dropped when loading began */
    size_t nodes; /* nodes parsed so far (all files) */
    chain_ent chain[GS_CONFIG_MAX_EXTENDS + 2];
    size_t chain_len;
    unsigned char bad[GS_CFG_MAX_FIELDS]; /* field index -> value was rejected (skip
                                             consistency checks) */
    node *root;                           /* merged tree, for locating missing keys */
    char sections[16][64];                /* missing sections already reported */
    size_t n_sections;
} loader;

/* Problems reported so far (kept and dropped). */
size_t gs_cfg_diag_total(const gs_diags *d);
/* Report "path: message" (or just the message when path is NULL or "") at file:line:col. */
void gs_cfg_errat(loader *L, const char *file, int line, int col, const char *path, const char *fmt,
                  ...) GS_PRINTF(6, 7);
#define ERR_NODE(L, nd, path, ...)                                                                 \
    gs_cfg_errat(L, (nd)->file, (nd)->line, (nd)->col, path, __VA_ARGS__)

/* ---- parsing, files and extends (config_yaml.c, config_file.c) ---- */

/* Parse one YAML document into a tree. Returns NULL after reporting when nothing usable was
 * read (syntax error, empty file, ...). */
node *gs_cfg_parse_yaml(loader *L, const char *text, size_t len, const char *file);
/* Parse text and resolve its `extends:` chain (paths relative to dir); the merged tree, or
 * NULL after reporting. depth: files above this one in the chain. */
node *gs_cfg_load_tree(loader *L, const char *text, size_t len, const char *file, const char *dir,
                       int depth);
/* Read a whole regular file of at most GS_CONFIG_MAX_BYTES. Returns NULL and fills why on
 * failure. The buffer is NUL-terminated; free with gs_free. */
char *gs_cfg_read_file(const char *path, size_t *len, dev_t *dev, ino_t *ino, char *why,
                       size_t why_size);
int gs_cfg_ends_with(const char *s, const char *suffix);
/* The directory part of path ("." when none). NULL when out of memory; free with gs_free. */
char *gs_cfg_dir_of(const char *path);

/* ---- tree -> struct (config_walk.c) ---- */

/* Read the `sources:` map (before the walk: provenance tags refer to it). */
void gs_cfg_walk_sources(loader *L, node *nd);
/* Walk map m at dotted path (""= the top level) into L->c. */
void gs_cfg_walk_map(loader *L, node *m, const char *path);
/* Report every required key, section and list the walk did not see. */
void gs_cfg_check_required(loader *L);

/* ---- consistency checks (config_validate.c) ---- */

/* Cross-field checks of a filled config (load and --set); bad: per-key flags of values already
 * rejected (NULL: none). */
void gs_cfg_validate(const gs_config *c, const unsigned char *bad, gs_diags *d);

#endif
