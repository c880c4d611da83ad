/*
 * config_yaml.c - the YAML front end of the config loader: bytes -> (size and UTF-8 checks) ->
 * libyaml events -> a small tree of nodes, each with its file:line:col. Everything YAML allows
 * but a config must not use is refused here, where the marks are known: anchors, aliases,
 * explicit tags, duplicate keys, non-string keys, NUL and control characters, more than one
 * document, deep nesting and node floods. It is separate because it is the only part that
 * knows libyaml; the rest of the loader sees the tree (config_internal.h).
 */
#include "config_internal.h"

#include <stdint.h>
#include <string.h>
#include <yaml.h>

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
