/*
 * gs/common.h - status codes, error objects and the allocation hook shared by every
 * gensweep module.
 *
 * Conventions (see docs/STYLE.md):
 *  - every public name carries the gs_ / GS_ prefix;
 *  - functions that can fail return gs_status and fill a caller-owned gs_error
 *    (never a global);
 *  - every heap allocation goes through gs_malloc/gs_calloc/gs_realloc/gs_free so a test or an
 *    embedding program can swap the allocator (gs_set_allocator).
 */
#ifndef GS_COMMON_H
#define GS_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GS_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define GS_PRINTF(fmt, args)
#endif

/* The status table: one X-macro row per code (name, short string). */
#define GS_STATUS_TABLE(X)                                                                         \
    X(GS_OK, "ok")                         /* success */                                           \
    X(GS_ERR_NOMEM, "out of memory")       /* an allocation failed */                              \
    X(GS_ERR_IO, "i/o error")              /* a file could not be read or written */               \
    X(GS_ERR_PARSE, "parse error")         /* malformed input text (YAML, JSON, CLI value) */      \
    X(GS_ERR_INVALID, "invalid")           /* well-formed input with a wrong value */              \
    X(GS_ERR_USAGE, "usage error")         /* bad command-line use */                              \
    X(GS_ERR_UNSUPPORTED, "unsupported")   /* the target lacks a capability */                     \
    X(GS_ERR_DOES_NOT_FIT, "does not fit") /* SBUF/PSUM/HBM capacity exceeded */                   \
    X(GS_ERR_BOUNDS, "out of bounds")      /* an access outside a tile or tensor */                \
    X(GS_ERR_DEADLOCK, "deadlock")         /* a program can never finish */                        \
    X(GS_ERR_TIMEOUT, "timeout")           /* simulated or wall-clock limit reached */             \
    X(GS_ERR_MISMATCH, "mismatch")         /* outputs differ from the reference */                 \
    X(GS_ERR_INTERNAL, "internal error")   /* a bug in gensweep itself */

typedef enum gs_status {
#define GS_STATUS_ENUM(name, str) name,
    GS_STATUS_TABLE(GS_STATUS_ENUM)
#undef GS_STATUS_ENUM
        GS_STATUS_COUNT
} gs_status;

/* Short human string for a status; never NULL ("?" for out-of-range values). */
const char *gs_status_str(gs_status st);
/* Symbolic name ("GS_ERR_PARSE"); never NULL. */
const char *gs_status_name(gs_status st);

#define GS_ERROR_MSG_MAX 1024
#define GS_ERROR_FILE_MAX 512

/*
 * One error: what went wrong and where. `file`, `line`, `column` locate the problem in the
 * input (a config file, a kernel source line); line/column are 1-based, 0 when unknown.
 */
typedef struct gs_error {
    gs_status code;
    int line;
    int column;
    char file[GS_ERROR_FILE_MAX];
    char message[GS_ERROR_MSG_MAX];
} gs_error;

/* Reset to GS_OK with empty fields. NULL is a no-op. */
void gs_error_clear(gs_error *err);
/*
 * Fill err (if not NULL) and return `code`, so callers can write
 *   return gs_error_set(err, GS_ERR_INVALID, path, line, col, "bad %s", x);
 * `file` may be NULL.
 */
gs_status gs_error_set(gs_error *err, gs_status code, const char *file, int line, int column,
                       const char *fmt, ...) GS_PRINTF(6, 7);
gs_status gs_error_setv(gs_error *err, gs_status code, const char *file, int line, int column,
                        const char *fmt, va_list ap);
/* Format as "file:line:col: message" (parts that are unknown are left out) into buf. */
void gs_error_format(const gs_error *err, char *buf, size_t size);

/*
 * A list of errors, for validators that report every problem in an input rather than the
 * first. Owned by the caller: gs_diags_init / gs_diags_free.
 */
typedef struct gs_diags {
    gs_error *items;
    size_t count;
    size_t cap;
    size_t dropped; /* errors not stored because of GS_DIAGS_MAX */
} gs_diags;
#define GS_DIAGS_MAX 1000

void gs_diags_init(gs_diags *d);
void gs_diags_free(gs_diags *d);
/* Append one error (copied). On allocation failure or past GS_DIAGS_MAX the error is counted in
 * `dropped` instead. */
void gs_diags_add(gs_diags *d, gs_status code, const char *file, int line, int column,
                  const char *fmt, ...) GS_PRINTF(6, 7);
/* Sort by (file, line, column) for stable output; order of equal keys is kept. */
void gs_diags_sort(gs_diags *d);

/* ---- allocation hook ---- */
typedef struct gs_allocator {
    void *(*malloc_fn)(size_t size, void *ud);
    void *(*realloc_fn)(void *ptr, size_t size, void *ud);
    void (*free_fn)(void *ptr, void *ud);
    void *ud;
} gs_allocator;

/* Install an allocator (NULL restores the C library's). Not thread-safe; call at start-up. */
void gs_set_allocator(const gs_allocator *a);
/* Return NULL on failure (size 0 returns a unique non-NULL pointer). */
void *gs_malloc(size_t size);
void *gs_calloc(size_t n, size_t size); /* checks n*size overflow; pages mapped at once */
void *gs_realloc(void *ptr, size_t size);
void gs_free(void *ptr);        /* NULL is a no-op */
char *gs_strdup(const char *s); /* NULL in, NULL out */
char *gs_strndup(const char *s, size_t n);

/* Map the pages of [p, p + n) now, in one system call, for memory about to be written in
 * full: each first touch of a fresh page is otherwise its own page fault, several times the
 * cost per page (Linux MADV_POPULATE_WRITE; a no-op where unsupported or for small ranges). */
void gs_prefault(void *p, size_t n);

/* Checked size arithmetic: return 0 and leave *out untouched on overflow. */
int gs_size_mul(size_t a, size_t b, size_t *out);
int gs_size_add(size_t a, size_t b, size_t *out);

/* Levenshtein distance (for "did you mean" suggestions), capped at `cap`. */
size_t gs_edit_distance(const char *a, const char *b, size_t cap);

#define GS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define GS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GS_MAX(a, b) ((a) > (b) ? (a) : (b))

#ifdef __cplusplus
}
#endif
#endif /* GS_COMMON_H */
