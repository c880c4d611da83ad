/*
 * gs/yamldoc.h - read a whole YAML file as a libyaml document tree, for the harness's own file
 * formats (calibration cases, workloads). Generation configs have their own reader
 * (gs/config.h), which keeps every value's line and column through `extends:`.
 */
#ifndef GS_YAMLDOC_H
#define GS_YAMLDOC_H

#include <yaml.h>

#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse the file at `path` into *doc (free it with yaml_document_delete). 1, or 0 after adding
 * one diagnostic at path: "cannot open <what>" (IO), or "YAML: <problem>" at its line and column
 * (PARSE); *doc is then not to be deleted. */
int gs_yaml_load_file(const char *path, const char *what, yaml_document_t *doc, gs_diags *d);

#ifdef __cplusplus
}
#endif
#endif
