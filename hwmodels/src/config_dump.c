/*
 * config_dump.c - show-config: a resolved gs_config written back as YAML that reads as a
 * config, each number as "VALUE [source]" (or "[source: note]") with the file:line:col it came
 * from as a comment, defaulted optional keys as comments, sections in key-table order. It is
 * separate because it is output only: it reads the struct and the key table (config_schema.c)
 * and shares nothing with loading but them.
 */
#include "config_internal.h"

#include <stdio.h>
#include <string.h>

#include "gs/units.h"

/* A YAML double-quoted string. */
static void put_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void indent(FILE *out, size_t level)
{
    for (size_t i = 0; i < level; i++)
        fputs("  ", out);
}

static void put_num_line(FILE *out, size_t level, const char *key, const gs_num *n, gs_unit u)
{
    char val[64];
    gs_units_format(n->v, u, val, sizeof val);
    indent(out, level);
    if (!n->src) {
        fprintf(out, "# %s: %s (default)\n", key, val);
        return;
    }
    char text[512];
    if (n->note)
        snprintf(text, sizeof text, "%s [%s: %s]", val, n->src, n->note);
    else
        snprintf(text, sizeof text, "%s [%s]", val, n->src);
    int w = fprintf(out, "%s: ", key);
    /* Quote when the text would not read back as one plain scalar. */
    if (strstr(text, ": ") || strchr(text, '#') || strchr(text, '"')) {
        put_quoted(out, text);
        w += 2 + (int)strlen(text);
    } else {
        w += fprintf(out, "%s", text);
    }
    int col = (int)(level * 2) + w;
    if (n->file && n->line > 0)
        fprintf(out, "%*s# %s:%d:%d", col < 56 ? 56 - col : 1, "", n->file, n->line, n->col);
    else if (n->file)
        fprintf(out, "%*s# %s", col < 56 ? 56 - col : 1, "", n->file);
    fputc('\n', out);
}

static size_t split_path(const char *path, char comps[][48], size_t max)
{
    size_t n = 0;
    const char *p = path;
    while (*p && n < max) {
        const char *e = strchr(p, '.');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        snprintf(comps[n++], 48, "%.*s", (int)GS_MIN(l, (size_t)47), p);
        p += l;
        if (*p == '.') p++;
    }
    return n;
}

static void on_open(FILE *out, const gs_config *c, const char *section, size_t level)
{
    if (!strcmp(section, "core.dma")) {
        indent(out, level);
        fprintf(out, "transpose: %s\n", c->dma.transpose ? "true" : "false");
        indent(out, level);
        fprintf(out, "hw_descriptors: %s\n", c->dma.hw_descriptors ? "true" : "false");
        indent(out, level);
        fprintf(out, "cast: %s\n", c->dma.cast ? "true" : "false");
    }
    if (!strcmp(section, "engines.tensor")) {
        indent(out, level);
        fprintf(out, "double_row: %s\n", c->tensor.double_row ? "true" : "false");
        indent(out, level);
        fprintf(out, "bf16_psum: %s\n", c->tensor.bf16_psum ? "true" : "false");
    }
    int e = gs_cfg_engine_of_path(section);
    if (e >= 0 && !strchr(section + 8, '.')) {
        indent(out, level);
        fprintf(out, "present: true\n");
    }
}

void gs_config_dump_yaml(const gs_config *c, FILE *out)
{
    if (!c || !out) return;
    fprintf(out, "# gensweep show-config: %s, resolved (extends and --set applied)\n",
            c->path ? c->path : "?");
    fprintf(out, "# every number: VALUE [source] and, as a comment, the file:line:col it came "
                 "from\n");
    fputs("name: ", out);
    put_quoted(out, c->name ? c->name : "");
    fputs("\nfamily: ", out);
    put_quoted(out, c->family ? c->family : "");
    fputc('\n', out);
    if (c->description) {
        fputs("description: ", out);
        put_quoted(out, c->description);
        fputc('\n', out);
    }
    fputs("sources:\n", out);
    for (size_t i = 0; i < c->n_sources; i++) {
        fprintf(out, "  %s: ", c->source_keys[i]);
        put_quoted(out, c->source_refs[i]);
        fputc('\n', out);
    }
    char prev[8][48];
    size_t prev_n = 0; /* open sections */
    for (size_t i = 0; i < gs_cfg_n_fields; i++) {
        const gs_num *n = gs_cfg_cnum_at(c, i);
        if (gs_cfg_impls[i].engine >= 0 &&
            !gs_config_has_engine(c, (gs_engine)gs_cfg_impls[i].engine))
            continue;
        if (gs_cfg_impls[i].dtype >= 0 && !n->src) continue;
        if (!strcmp(gs_cfg_fields[i].path, "core.dma.transpose_factor") && !n->src) continue;
        char comps[8][48];
        size_t k = split_path(gs_cfg_fields[i].path, comps, 8);
        size_t common = 0;
        while (common < prev_n && common + 1 < k && !strcmp(prev[common], comps[common]))
            common++;
        char section[sizeof comps + 8] = "";
        for (size_t j = 0; j + 1 < k; j++) {
            size_t used = strlen(section);
            snprintf(section + used, sizeof section - used, "%s%s", j ? "." : "", comps[j]);
            if (j < common) continue;
            indent(out, j);
            fprintf(out, "%s:\n", comps[j]);
            on_open(out, c, section, j + 1);
        }
        for (size_t j = 0; j + 1 < k; j++)
            memcpy(prev[j], comps[j], 48);
        prev_n = k - 1;
        put_num_line(out, k - 1, comps[k - 1], n, gs_cfg_fields[i].unit);
    }
    if (!c->gpsimd.present) fputs("  gpsimd:\n    present: false\n", out);
    fputs("dtypes: [", out);
    for (int t = 0, first = 1; t < GS_DTYPE_COUNT; t++)
        if (c->dtypes & (1u << t)) {
            fprintf(out, "%s%s", first ? "" : ", ", gs_dtype_name((gs_dtype)t));
            first = 0;
        }
    fputs("]\nops: [", out);
    for (int op = 0, first = 1; op < GS_OPCODE_COUNT; op++)
        if (c->ops & (1ull << op)) {
            fprintf(out, "%s%s", first ? "" : ", ", gs_opcode_name((gs_opcode)op));
            first = 0;
        }
    fputs("]\n", out);
}
