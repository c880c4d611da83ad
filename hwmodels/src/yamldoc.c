/* yamldoc.c - a YAML file as a document tree (gs/yamldoc.h). */
#include "gs/yamldoc.h"

#include <stdio.h>

int gs_yaml_load_file(const char *path, const char *what, yaml_document_t *doc, gs_diags *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        gs_diags_add(d, GS_ERR_IO, path, 0, 0, "cannot open %s", what);
        return 0;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    int ok = yaml_parser_load(&parser, doc);
    if (!ok)
        gs_diags_add(d, GS_ERR_PARSE, path, (int)parser.problem_mark.line + 1,
                     (int)parser.problem_mark.column + 1, "YAML: %s",
                     parser.problem ? parser.problem : "malformed");
    yaml_parser_delete(&parser);
    fclose(f);
    return ok;
}
