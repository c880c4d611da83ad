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
/* The text of scalar node n, or NULL when n is not a scalar. */
const char *gs_yaml_scalar(const yaml_node_t *n);
/* Scalar n copied into buf; 0 after an error at n's line and column of `path` ("KEY: expected
 * a non-empty string", or "longer than ...") when it is not a scalar, is empty, holds a NUL or
 * does not fit. */
int gs_yaml_copy_str(gs_diags *d, const char *path, const yaml_node_t *n, const char *key,
                     char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
