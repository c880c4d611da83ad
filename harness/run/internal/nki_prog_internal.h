/* nki_prog_internal.h - the loaded .gsk program, shared by nki_prog.c (loading, replay) and
 * nki_ref.c (the numpy reference). Not for other modules: nki_prog.h is the interface. */
#ifndef GS_NKI_PROG_INTERNAL_H
#define GS_NKI_PROG_INTERNAL_H

#include <stdio.h>

#include "nki_prog.h"

#define MAX_TOKENS 40
#define NAME_MAX_LEN 256

/* One builder call of the program, kept as its tokens (replayed per core). */
typedef struct stmt {
    int core;
    int lineno; /* line in the .gsk file, for errors */
    int ntok;
    char *tok[MAX_TOKENS];
    char *buf; /* owns the tokens */
} stmt;

typedef struct tensor_def {
    gs_tensor_decl decl;
    double *data; /* values from a `data` line, or NULL (seeded) */
    uint64_t elems;
} tensor_def;

struct gs_nki_prog {
    char path[1024];
    char name[NAME_MAX_LEN];
    char kname[NAME_MAX_LEN + 8];
    char **files; /* terminal-escaped (as every text from the file the kernel build keeps) */
    int n_files;
    char **texts; /* pool names handed to the builder, owned here */
    int n_texts;
    double reduction;
    char ref_file[1024]; /* the reference the caller gave (gs_nki_prog_set_reference), or "" */
    char ref_func[NAME_MAX_LEN];
    int names_reference; /* the file has a `reference` line (never run: nki_prog.h) */
    char *ref_args;      /* the reference's arguments (JSON, percent-encoded as in the file) */
    char python[1024];
    char frontend[1024];
    char workdir[1024];  /* the reference's files go to workdir/ref; "": a new temp directory */
    double wall_limit_s; /* the reference's limits (gs_nki_prog_set_limits); 0: none */
    double mem_limit;
    tensor_def tensors[GS_KERNEL_MAX_TENSORS];
    int n_tensors;
    stmt *stmts;
    size_t n_stmts, cap_stmts;
    int max_core;
    int max_tile, max_pool;
    gs_kernel_def def;
    char shape_arg[128]; /* the first tensor's shape as --shape text */
    gs_status ref_st;
    gs_error ref_err;
};

/* gs_nki_prog_load on an open stream (path names it in errors): the fuzz target's way in. */
gs_nki_prog *gs_nki_prog_load_stream(FILE *f, const char *path, gs_error *err);

/* The program whose kernel is in use (NULL: none). */
gs_nki_prog *gs_nki_prog_active(void);

/* The kernel's reference callback (gs_kernel_def.reference): runs the program's numpy
 * reference in a child process; its failure is kept in the active program (ref_st, ref_err)
 * and every reference value is NaN, so nothing can pass by accident. */
void gs_nki_prog_reference(const gs_kernel_args *args, const double *const *in, double *const *out);

#endif
