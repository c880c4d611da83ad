/*
 * gs/strbuf.h - a growable string builder (after Lua's luaL_Buffer), with the escaping every
 * text output needs: JSON strings, HTML text/attributes, CSV fields, XML.
 *
 * All JSON, CSV, XML and HTML that gensweep writes goes through this module, so escaping lives
 * in one place (JSON documents through the writer on top of it, gs/jsonw.h, which keeps the
 * commas). A builder that fails to grow sets `oom` and ignores further appends; check
 * gs_sb_ok() once at the end instead of after every append.
 */
#ifndef GS_STRBUF_H
#define GS_STRBUF_H

#include <stdio.h>
#include "gs/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_sb {
    char *data; /* always NUL-terminated when len > 0 or after gs_sb_cstr() */
    size_t len;
    size_t cap;
    int oom;
} gs_sb;

void gs_sb_init(gs_sb *sb);
void gs_sb_free(gs_sb *sb);  /* NULL is a no-op */
void gs_sb_reset(gs_sb *sb); /* length 0, keeps memory */
int gs_sb_ok(const gs_sb *sb);
/* The text so far; "" for an empty builder. Owned by sb. */
const char *gs_sb_cstr(gs_sb *sb);
/* Hand the buffer to the caller (free with gs_free) and reset sb; NULL on OOM. */
char *gs_sb_take(gs_sb *sb);

void gs_sb_putc(gs_sb *sb, char c);
void gs_sb_puts(gs_sb *sb, const char *s);
void gs_sb_putn(gs_sb *sb, const char *s, size_t n);
void gs_sb_printf(gs_sb *sb, const char *fmt, ...) GS_PRINTF(2, 3);
void gs_sb_vprintf(gs_sb *sb, const char *fmt, va_list ap);

/* "..." with JSON escapes (control characters as \u00XX; invalid UTF-8 bytes as U+FFFD). */
void gs_sb_json_str(gs_sb *sb, const char *s);
/* A JSON number: finite doubles with %.17g round-trip precision; NaN/Inf become null. */
void gs_sb_json_num(gs_sb *sb, double v);
/* HTML text/attribute escaping of & < > " ' */
void gs_sb_html(gs_sb *sb, const char *s);
/* XML escaping (as HTML, plus control characters dropped, as XML 1.0 forbids them). */
void gs_sb_xml(gs_sb *sb, const char *s);
/* Text for a terminal: control characters (C0, DEL, and C1 encoded in UTF-8, which can start
 * escape sequences) and the Unicode direction controls (U+061C, U+200E-F, U+202A-E,
 * U+2066-9, which reorder what follows them) as \xNN bytes, so untrusted ids and reasons
 * printed to a terminal can never move the cursor, retitle the window, hide or reverse text. */
void gs_sb_term(gs_sb *sb, const char *s);
/* A CSV field, quoted when it contains , " CR or LF (RFC 4180). */
void gs_sb_csv(gs_sb *sb, const char *s);

/* Write the whole buffer to path atomically (temp file + rename). Only a regular file (or
 * nothing) at path is replaced: a symlink, device, FIFO or directory there is GS_ERR_USAGE.
 * Every write is checked (ENOSPC, EFBIG, EIO: GS_ERR_IO naming path and the reason; path is
 * then untouched). The temp file is unnamed where the file system allows (O_TMPFILE), so a
 * process killed while writing leaves nothing behind; otherwise PATH.tmp.PID, removed on every
 * error path. */
gs_status gs_sb_write_file(gs_sb *sb, const char *path, gs_error *err);
/* The same for output written as it is produced (a trace): gs_out_open checks path as
 * gs_sb_write_file does and opens the temp file (o->fd, to write to); gs_out_commit renames it
 * over path (GS_ERR_IO naming path if that fails; path untouched); gs_out_abort (any failure
 * before) removes it. Both release o; abort of a released or failed-to-open o is a no-op. */
typedef struct gs_out {
    int fd;    /* write here; -1 once released */
    int named; /* the temp file has a name (tmp) that must be removed on failure */
    char *tmp, *path;
} gs_out;
gs_status gs_out_open(gs_out *o, const char *path, gs_error *err);
gs_status gs_out_commit(gs_out *o, gs_error *err);
void gs_out_abort(gs_out *o);

/* Can gs_sb_write_file (or a plain create) write path? Checked before work starts so a bad
 * output path is a usage error, not a lost run: GS_ERR_USAGE when something other than a
 * regular file is there or the directory does not exist / is not writable. */
gs_status gs_sb_check_output(const char *path, gs_error *err);

#ifdef __cplusplus
}
#endif
#endif
