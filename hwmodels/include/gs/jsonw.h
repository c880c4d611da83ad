/*
 * gs/jsonw.h - the JSON writer every JSON output of gensweep goes through: values appended to a
 * string builder (gs/strbuf.h) with the separators (commas, colons, layout whitespace) kept by
 * the writer, so no caller tracks "first item" flags. Strings and numbers are formatted by
 * gs_sb_json_str and gs_sb_json_num, so all files escape and print numbers the same way.
 *
 *   gs_jw w;
 *   gs_jw_init(&w, &sb);
 *   gs_jw_begin_object(&w, GS_JW_COMPACT);
 *   gs_jw_kstr(&w, "id", id);
 *   gs_jw_key(&w, "shape");
 *   gs_jw_begin_array(&w, GS_JW_COMPACT);
 *   gs_jw_int(&w, 128);
 *   gs_jw_end_array(&w);
 *   gs_jw_end_object(&w);
 *   if (gs_jw_finish(&w, &err) != GS_OK) ...
 *
 * The writer appends only, so the builder may be flushed and reset between values (a trace
 * streamed to a file). It writes one value: an object, an array or a scalar; the builder may
 * hold text before it and get more after it (a record inside a larger document, a final
 * newline).
 *
 * Misuse - a value without a key in an object, a key outside an object, two keys in a row, a
 * close that does not match the open container, nesting deeper than GS_JW_MAX_DEPTH, a second
 * top-level value - is a sticky error: the writer appends nothing more, and gs_jw_error /
 * gs_jw_finish report the first misuse. Out of memory is the builder's own flag (gs_sb_ok).
 */
#ifndef GS_JSONW_H
#define GS_JSONW_H

#include <stdint.h>

#include "gs/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whitespace of one container, chosen when it is opened (inner containers choose their
 * own). The layouts gensweep's files have always had, so converting a writer keeps its bytes. */
typedef enum gs_jw_layout {
    GS_JW_COMPACT, /* {"a":1,"b":[1,2]} */
    GS_JW_SPACED,  /* {"a": 1, "b": 2} */
    /* one member a line, the close on its own line: {\n"a": 1,\n"b": 2\n}; empty: {} */
    GS_JW_LINES,
    /* as GS_JW_LINES, but the close is on its own line even when empty: [\n] */
    GS_JW_LINES_CLOSE
} gs_jw_layout;

/* As deep as cJSON parses (its CJSON_NESTING_LIMIT), so any parsed document can be written back
 * (results.c checks this at compile time). One byte a level. */
#define GS_JW_MAX_DEPTH 1000

typedef struct gs_jw {
    gs_sb *sb;
    const char *error;                     /* the first misuse, or NULL */
    int depth;                             /* open containers */
    unsigned char st[GS_JW_MAX_DEPTH + 1]; /* per level: layout, object?, has items, after key */
} gs_jw;

/* Start writing one value into sb (appended to what sb holds). */
void gs_jw_init(gs_jw *w, gs_sb *sb);

void gs_jw_begin_object(gs_jw *w, gs_jw_layout layout);
void gs_jw_end_object(gs_jw *w);
void gs_jw_begin_array(gs_jw *w, gs_jw_layout layout);
void gs_jw_end_array(gs_jw *w);

/* The next member's name (escaped as a string). Only inside an object, once per value. */
void gs_jw_key(gs_jw *w, const char *key);

/* A string; NULL writes null. */
void gs_jw_str(gs_jw *w, const char *s);
/* A number as gs_sb_json_num writes it (integral values without a fraction, otherwise %.17g;
 * NaN and infinities as null). */
void gs_jw_num(gs_jw *w, double v);
/* Integers printed exactly (as %PRId64 / %PRIu64 print them), at any magnitude. */
void gs_jw_int(gs_jw *w, int64_t v);
void gs_jw_uint(gs_jw *w, uint64_t v);
void gs_jw_bool(gs_jw *w, int v);
void gs_jw_null(gs_jw *w);
/* A value the caller has already formatted as JSON (a number in a fixed format, a fragment
 * written by another writer). Copied as it is: the caller vouches that it is one valid value. */
void gs_jw_raw(gs_jw *w, const char *json);
void gs_jw_rawn(gs_jw *w, const char *json, size_t n);

/* key + value in one call. */
void gs_jw_kstr(gs_jw *w, const char *key, const char *s);
void gs_jw_knum(gs_jw *w, const char *key, double v);
void gs_jw_kint(gs_jw *w, const char *key, int64_t v);
void gs_jw_kbool(gs_jw *w, const char *key, int v);
void gs_jw_knull(gs_jw *w, const char *key);

/* The first misuse ("a value without a key in an object", ...), or NULL. */
const char *gs_jw_error(const gs_jw *w);
/* After the value: GS_OK when exactly one complete value was written; GS_ERR_INTERNAL (a bug
 * in the caller) naming the misuse, or an unclosed container, or nothing written; GS_ERR_NOMEM
 * when the builder ran out of memory. */
gs_status gs_jw_finish(const gs_jw *w, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
