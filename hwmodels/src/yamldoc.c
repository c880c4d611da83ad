/* yamldoc.c - a YAML file as a document tree (gs/yamldoc.h). */
#include "gs/yamldoc.h"

#include "config_internal.h"

#include <stdio.h>
#include <string.h>

int gs_yaml_load_file(const char *path, const char *what, yaml_document_t *doc, gs_diags *d)
{
    /* the config loader's reader: regular files only (a FIFO is refused, not waited on), at
     * most GS_CONFIG_MAX_BYTES */
    char why[256];
    size_t len = 0;
    char *text = gs_cfg_read_file(path, &len, NULL, NULL, why, sizeof why);
    if (!text) {
        static const char open_fail[] = "cannot open: ";
        if (!strncmp(why, open_fail, sizeof open_fail - 1))
            gs_diags_add(d, GS_ERR_IO, path, 0, 0, "cannot open %s: %s", what,
                         why + sizeof open_fail - 1);
        else
            gs_diags_add(d, GS_ERR_IO, path, 0, 0, "cannot read %s: %s", what, why);
        return 0;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int ok = yaml_parser_load(&parser, doc);
    if (!ok)
        gs_diags_add(d, GS_ERR_PARSE, path, (int)parser.problem_mark.line + 1,
                     (int)parser.problem_mark.column + 1, "YAML: %s",
                     parser.problem ? parser.problem : "malformed");
    yaml_parser_delete(&parser);
    gs_free(text);
    return ok;
}

const char *gs_yaml_scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int gs_yaml_copy_str(gs_diags *d, const char *path, const yaml_node_t *n, const char *key,
                     char *buf, size_t size)
{
    const char *s = gs_yaml_scalar(n);
    if (!s || !s[0] || strlen(s) != n->data.scalar.length) {
        gs_diags_add(d, GS_ERR_PARSE, path, n ? (int)n->start_mark.line + 1 : 0,
                     n ? (int)n->start_mark.column + 1 : 0, "%s: expected a non-empty string", key);
        return 0;
    }
    if (strlen(s) >= size) {
        gs_diags_add(d, GS_ERR_PARSE, path, (int)n->start_mark.line + 1,
                     (int)n->start_mark.column + 1, "%s: longer than %zu characters", key,
                     size - 1);
        return 0;
    }
    snprintf(buf, size, "%s", s);
    return 1;
}
