/*
 * config_file.c - files and `extends:` for the config loader: reading a config (regular files
 * only, at most GS_CONFIG_MAX_BYTES, no blocking on a FIFO), resolving a parent named by
 * `extends:` relative to the child, refusing cycles (by device and inode) and chains longer
 * than GS_CONFIG_MAX_EXTENDS, applying the child's `delete:` list to what it inherited, and
 * deep-merging the child's tree over the parent's. It is separate because it is the only part
 * that touches the file system; it works on trees (config_yaml.c) and never on a gs_config.
 */
#include "config_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs/strbuf.h"

/* Read a whole file (at most GS_CONFIG_MAX_BYTES + 1 bytes, so the size check can fire).
 * Returns NULL and fills why on failure. The buffer is NUL-terminated; free with gs_free. */
char *gs_cfg_read_file(const char *path, size_t *len, dev_t *dev, ino_t *ino, char *why,
                       size_t why_size)
{
    /* O_NONBLOCK: opening a FIFO with no writer would block before fstat could refuse it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "not a regular file (%s)",
                 S_ISDIR(st.st_mode)                          ? "a directory"
                 : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                              : "a special file");
        close(fd);
        return NULL;
    }
    if (st.st_size > GS_CONFIG_MAX_BYTES) {
        snprintf(why, why_size, "file is larger than %d bytes (%lld bytes)", GS_CONFIG_MAX_BYTES,
                 (long long)st.st_size);
        close(fd);
        return NULL;
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    /* one byte more than the size, so a file that grew is caught by the size check */
    size_t cap = (size_t)st.st_size + 1;
    char *buf = gs_malloc(cap + 1);
    if (!buf) {
        snprintf(why, why_size, "out of memory");
        close(fd);
        return NULL;
    }
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, why_size, "read error: %s", strerror(errno));
            close(fd);
            gs_free(buf);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    if (dev) *dev = st.st_dev;
    if (ino) *ino = st.st_ino;
    return buf;
}

int gs_cfg_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* dir/rel with "x/.." and "./" segments folded lexically, for readable messages. Any length;
 * NULL when out of memory. Free with gs_free. */
static char *join_path(const char *dir, const char *rel)
{
    gs_sb tmp;
    gs_sb_init(&tmp);
    if (!dir || !*dir || !strcmp(dir, "."))
        gs_sb_puts(&tmp, rel);
    else
        gs_sb_printf(&tmp, "%s/%s", dir, rel);
    char *t = gs_sb_take(&tmp);
    if (!t) return NULL;
    /* split into segments (at most one per two bytes) and fold */
    size_t tl = strlen(t);
    const char **segs = gs_calloc(tl / 2 + 2, sizeof *segs);
    size_t *lens = gs_calloc(tl / 2 + 2, sizeof *lens);
    if (!segs || !lens) {
        gs_free(segs);
        gs_free(lens);
        gs_free(t);
        return NULL;
    }
    size_t n = 0;
    int absolute = t[0] == '/';
    for (char *p = t; *p;) {
        while (*p == '/')
            p++;
        if (!*p) break;
        char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 1 && p[0] == '.') {
            /* skip */
        } else if (l == 2 && p[0] == '.' && p[1] == '.' && n > 0 &&
                   !(lens[n - 1] == 2 && !strncmp(segs[n - 1], "..", 2))) {
            n--;
        } else {
            segs[n] = p;
            lens[n++] = l;
        }
        p += l;
    }
    gs_sb out;
    gs_sb_init(&out);
    if (absolute) gs_sb_putc(&out, '/');
    for (size_t i = 0; i < n; i++) {
        if (i) gs_sb_putc(&out, '/');
        gs_sb_putn(&out, segs[i], lens[i]);
    }
    if (n == 0 && !absolute) gs_sb_putc(&out, '.');
    gs_free(segs);
    gs_free(lens);
    gs_free(t);
    return gs_sb_take(&out);
}

/* The directory part of path ("." when none). NULL when out of memory; free with gs_free. */
char *gs_cfg_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return gs_strdup(".");
    if (slash == path) return gs_strdup("/");
    return gs_strndup(path, (size_t)(slash - path));
}

static int is_present_false(const node *v)
{
    node *p = gs_cfg_map_get(v, "present");
    return p && p->kind == N_SCALAR && p->text && !strncmp(p->text, "false", 5);
}

/* Deep-merge src over dst (both maps). Consumes src: its entries are moved into dst or freed.
 * A child map that says `present: false` replaces the parent's map instead of merging, so a
 * derived config can remove an engine. */
static int merge(node *dst, node *src)
{
    int rc = 0;
    for (size_t i = 0; i < src->n; i++) {
        node *k = src->keys[i], *v = src->vals[i];
        int j = gs_cfg_map_find(dst, k->text);
        if (j < 0) {
            if (rc == 0 && gs_cfg_node_push(dst, k, v) == 0) continue;
            rc = -1;
            gs_cfg_node_free(k);
            gs_cfg_node_free(v);
        } else if (dst->vals[j]->kind == N_MAP && v->kind == N_MAP && !is_present_false(v)) {
            if (merge(dst->vals[j], v) < 0) rc = -1;
            gs_cfg_node_free(k);
        } else {
            gs_cfg_node_free(dst->keys[j]);
            gs_cfg_node_free(dst->vals[j]);
            dst->keys[j] = k;
            dst->vals[j] = v;
        }
    }
    gs_free(src->keys);
    gs_free(src->vals);
    gs_free(src->text);
    gs_free(src);
    return rc;
}

/* Resolve and load the parent named by `ext` (a scalar node). Returns its merged tree or NULL
 * after reporting. */
static node *load_parent(loader *L, node *ext, const char *dir, int depth)
{
    if (ext->poisoned) return NULL;
    if (ext->kind != N_SCALAR || !ext->text || !ext->text[0]) {
        ERR_NODE(L, ext, "extends", "expected the name of a config (gen2) or a relative path");
        return NULL;
    }
    const char *v = ext->text;
    if (v[0] == '/') {
        ERR_NODE(L, ext, "extends",
                 "'%s' is an absolute path; use a config name or a path relative to this file", v);
        return NULL;
    }
    gs_sb relb;
    gs_sb_init(&relb);
    gs_sb_puts(&relb, v);
    if (!gs_cfg_ends_with(v, ".yaml") && !gs_cfg_ends_with(v, ".yml")) gs_sb_puts(&relb, ".yaml");
    char *full = gs_sb_ok(&relb) ? join_path(dir, gs_sb_cstr(&relb)) : NULL;
    gs_sb_free(&relb);
    if (!full) {
        gs_diags_add(L->d, GS_ERR_NOMEM, ext->file, 0, 0, "out of memory");
        return NULL;
    }
    node *parent = NULL;
    char *ptext = NULL, *pdir = NULL;
    if (depth + 1 > GS_CONFIG_MAX_EXTENDS) {
        ERR_NODE(L, ext, "extends", "extends chain longer than %d files", GS_CONFIG_MAX_EXTENDS);
        goto out;
    }
    size_t plen;
    dev_t dev;
    ino_t ino;
    char why[256];
    ptext = gs_cfg_read_file(full, &plen, &dev, &ino, why, sizeof why);
    if (!ptext) {
        ERR_NODE(L, ext, "extends", "cannot load '%s': %s", full, why);
        goto out;
    }
    const char *pfile = gs_cfg_store_cstr(L->c, full);
    for (size_t i = 0; i < L->chain_len; i++) {
        if (L->chain[i].dev != dev || L->chain[i].ino != ino) continue;
        gs_sb sb;
        gs_sb_init(&sb);
        for (size_t k = i; k < L->chain_len; k++)
            gs_sb_printf(&sb, "%s -> ", L->chain[k].display);
        gs_sb_puts(&sb, full);
        ERR_NODE(L, ext, "extends", "extends cycle: %s", gs_sb_cstr(&sb));
        gs_sb_free(&sb);
        goto out;
    }
    pdir = pfile ? gs_cfg_dir_of(full) : NULL;
    if (!pdir) goto out;
    L->chain[L->chain_len].dev = dev;
    L->chain[L->chain_len].ino = ino;
    L->chain[L->chain_len].display = pfile;
    L->chain_len++;
    size_t before = gs_cfg_diag_total(L->d);
    parent = gs_cfg_load_tree(L, ptext, plen, pfile, pdir, depth + 1);
    L->chain_len--;
    if (!parent && gs_cfg_diag_total(L->d) == before)
        ERR_NODE(L, ext, "extends", "cannot load '%s'", full);
out:
    gs_free(ptext);
    gs_free(pdir);
    gs_free(full);
    return parent;
}

/* Apply a child's `delete:` list (dotted key paths) to the merged tree. Each path must name
 * something the parent defined. Returns 0, or -1 after reporting. */
static int apply_deletes(loader *L, node *merged, node *del)
{
    if (del->poisoned) return -1;
    if (del->kind != N_SEQ) {
        ERR_NODE(
            L, del, "delete",
            "expected a list of inherited keys to remove, e.g. [engines.tensor.rate.fp8_e4m3]");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < del->n; i++) {
        node *item = del->vals[i];
        if (item->poisoned) {
            rc = -1;
            continue;
        }
        if (item->kind != N_SCALAR || !item->text || !item->text[0]) {
            ERR_NODE(L, item, "delete", "expected a dotted key path (e.g. engines.gpsimd)");
            rc = -1;
            continue;
        }
        if (!strcmp(item->text, "name") || !strcmp(item->text, "family")) {
            ERR_NODE(L, item, "delete", "'%s' cannot be deleted (write a new value instead)",
                     item->text);
            rc = -1;
            continue;
        }
        /* walk to the parent map of the last segment */
        node *m = merged;
        const char *p = item->text;
        int found = 0;
        for (;;) {
            const char *dot = strchr(p, '.');
            size_t n = dot ? (size_t)(dot - p) : strlen(p);
            char *seg = gs_strndup(p, n);
            if (!seg) {
                gs_diags_add(L->d, GS_ERR_NOMEM, item->file, 0, 0, "out of memory");
                return -1;
            }
            if (!dot) {
                node *v = m->kind == N_MAP ? gs_cfg_map_take(m, seg) : NULL;
                found = v != NULL;
                gs_cfg_node_free(v);
                gs_free(seg);
                break;
            }
            node *next = m->kind == N_MAP ? gs_cfg_map_get(m, seg) : NULL;
            gs_free(seg);
            if (!next || next->kind != N_MAP) break;
            m = next;
            p = dot + 1;
        }
        if (!found) {
            ERR_NODE(L, item, "delete",
                     "'%s' is not defined by the extended config, so there is nothing to delete",
                     item->text);
            rc = -1;
        }
    }
    return rc;
}

node *gs_cfg_load_tree(loader *L, const char *text, size_t len, const char *file, const char *dir,
                       int depth)
{
    node *root = gs_cfg_parse_yaml(L, text, len, file);
    if (!root) return NULL;
    int ei = gs_cfg_map_find(root, "extends");
    if (ei < 0) {
        node *del = gs_cfg_map_get(root, "delete");
        if (del) {
            ERR_NODE(L, del, "delete", "'delete:' removes inherited keys; it needs 'extends:'");
            gs_cfg_node_free(root);
            return NULL;
        }
        return root;
    }
    node *ext = root->vals[ei];
    node *parent = load_parent(L, ext, dir, depth);
    gs_cfg_node_free(gs_cfg_map_take(root, "extends"));
    node *del = gs_cfg_map_take(root, "delete");
    if (!parent) {
        gs_cfg_node_free(del);
        gs_cfg_node_free(root);
        return NULL;
    }
    /* The name belongs to each file; a child without one is named after its file. */
    gs_cfg_node_free(gs_cfg_map_take(parent, "name"));
    /* deletions apply to what was inherited, before the child's own values are merged in */
    if (del && apply_deletes(L, parent, del) < 0) {
        gs_cfg_node_free(del);
        gs_cfg_node_free(root);
        gs_cfg_node_free(parent);
        return NULL;
    }
    gs_cfg_node_free(del);
    if (merge(parent, root) < 0) {
        gs_diags_add(L->d, GS_ERR_NOMEM, file, 0, 0, "out of memory");
        gs_cfg_node_free(parent);
        return NULL;
    }
    return parent;
}
