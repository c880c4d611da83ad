/* jsonw.c - the JSON writer on the string builder (see gs/jsonw.h). */
#include "gs/jsonw.h"

#include <string.h>

/* Per-level state: the layout in the low bits, then flags. Level 0 is the top level (no
 * container): JW_ANY there means the one value has been written. */
enum {
    JW_LAYOUT = 0x3,
    JW_OBJ = 0x4, /* an object (else an array) */
    JW_ANY = 0x8, /* has a member already: the next one needs a comma */
    JW_KEY = 0x10 /* a key was written, its value is due */
};

static void fail(gs_jw *w, const char *why)
{
    if (!w->error) w->error = why;
}

static int is_lines(unsigned s)
{
    unsigned l = s & JW_LAYOUT;
    return l == GS_JW_LINES || l == GS_JW_LINES_CLOSE;
}

/* The separator before a member of a container in state s (comma and layout whitespace): up to
 * two bytes into out, returns how many. */
static size_t separator(unsigned s, char *out)
{
    size_t n = 0;
    if (s & JW_ANY) out[n++] = ',';
    if (is_lines(s))
        out[n++] = '\n';
    else if ((s & JW_ANY) && (s & JW_LAYOUT) == GS_JW_SPACED)
        out[n++] = ' ';
    return n;
}

/* Before any value: checks it may come here and puts its separator in pre (up to two bytes; the
 * caller appends it with the value, one append for short values). -1: write nothing. */
static int before_value(gs_jw *w, char *pre)
{
    if (w->error) return -1;
    unsigned char *s = &w->st[w->depth];
    if (w->depth == 0) {
        if (*s & JW_ANY) {
            fail(w, "a second value at the top level");
            return -1;
        }
        *s |= JW_ANY;
        return 0;
    }
    if (*s & JW_OBJ) {
        if (!(*s & JW_KEY)) {
            fail(w, "a value without a key in an object");
            return -1;
        }
        *s &= (unsigned char)~JW_KEY;
        return 0;
    }
    size_t n = separator(*s, pre);
    *s |= JW_ANY;
    return (int)n;
}

/* pre (np bytes) then text (n bytes) in one append when they fit a small buffer. */
static void put_value(gs_sb *sb, const char *pre, int np, const char *text, size_t n)
{
    char buf[64];
    if (np == 0) {
        gs_sb_putn(sb, text, n);
    } else if (n <= sizeof buf - 2) {
        memcpy(buf, pre, (size_t)np);
        memcpy(buf + np, text, n);
        gs_sb_putn(sb, buf, (size_t)np + n);
    } else {
        gs_sb_putn(sb, pre, (size_t)np);
        gs_sb_putn(sb, text, n);
    }
}

void gs_jw_init(gs_jw *w, gs_sb *sb)
{
    w->sb = sb;
    w->error = NULL;
    w->depth = 0;
    w->st[0] = 0;
}

static void begin(gs_jw *w, gs_jw_layout layout, int obj)
{
    if ((unsigned)layout > GS_JW_LINES_CLOSE) {
        fail(w, "an unknown layout");
        return;
    }
    if (w->depth >= GS_JW_MAX_DEPTH) {
        fail(w, "nesting deeper than GS_JW_MAX_DEPTH");
        return;
    }
    char pre[2];
    int np = before_value(w, pre);
    if (np < 0) return;
    put_value(w->sb, pre, np, obj ? "{" : "[", 1);
    w->st[++w->depth] = (unsigned char)((unsigned)layout | (obj ? JW_OBJ : 0u));
}

static void end(gs_jw *w, int obj)
{
    if (w->error) return;
    if (w->depth == 0) {
        fail(w, obj ? "an object closed with nothing open" : "an array closed with nothing open");
        return;
    }
    unsigned s = w->st[w->depth];
    if (!(s & JW_OBJ) != !obj) {
        fail(w, obj ? "an object closed while an array is open"
                    : "an array closed while an object is open");
        return;
    }
    if (s & JW_KEY) {
        fail(w, "an object closed after a key without its value");
        return;
    }
    char close[2];
    size_t n = 0;
    if ((s & JW_LAYOUT) == GS_JW_LINES_CLOSE || (is_lines(s) && (s & JW_ANY))) close[n++] = '\n';
    close[n++] = obj ? '}' : ']';
    gs_sb_putn(w->sb, close, n);
    w->depth--;
}

void gs_jw_begin_object(gs_jw *w, gs_jw_layout layout)
{
    begin(w, layout, 1);
}

void gs_jw_end_object(gs_jw *w)
{
    end(w, 1);
}

void gs_jw_begin_array(gs_jw *w, gs_jw_layout layout)
{
    begin(w, layout, 0);
}

void gs_jw_end_array(gs_jw *w)
{
    end(w, 0);
}

/* Needs c no escape in a JSON string (printable ASCII other than " \\ <)? */
static int plain(unsigned char c)
{
    return c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '<';
}

void gs_jw_key(gs_jw *w, const char *key)
{
    if (w->error) return;
    unsigned char *s = &w->st[w->depth];
    if (w->depth == 0 || !(*s & JW_OBJ)) {
        fail(w, "a key outside an object");
        return;
    }
    if (*s & JW_KEY) {
        fail(w, "two keys without a value between them");
        return;
    }
    if (!key) {
        fail(w, "a NULL key");
        return;
    }
    char buf[96];
    size_t n = separator(*s, buf);
    *s |= JW_ANY | JW_KEY;
    const int space = (*s & JW_LAYOUT) != GS_JW_COMPACT;
    /* the usual key (short, nothing to escape): copied as it is scanned, one append */
    buf[n++] = '"';
    size_t k = 0;
    while (key[k] && n + k < sizeof buf - 4 && plain((unsigned char)key[k])) {
        buf[n + k] = key[k];
        k++;
    }
    if (!key[k]) {
        n += k;
        buf[n++] = '"';
        buf[n++] = ':';
        if (space) buf[n++] = ' ';
        gs_sb_putn(w->sb, buf, n);
        return;
    }
    gs_sb_putn(w->sb, buf, n - 1); /* the separator; the string quotes itself */
    gs_sb_json_str(w->sb, key);
    gs_sb_puts(w->sb, space ? ": " : ":");
}

void gs_jw_str(gs_jw *w, const char *s)
{
    char pre[2];
    int np = before_value(w, pre);
    if (np < 0) return;
    if (np) gs_sb_putn(w->sb, pre, (size_t)np);
    if (s)
        gs_sb_json_str(w->sb, s);
    else
        gs_sb_puts(w->sb, "null");
}

void gs_jw_num(gs_jw *w, double v)
{
    char pre[2];
    int np = before_value(w, pre);
    if (np < 0) return;
    if (np) gs_sb_putn(w->sb, pre, (size_t)np);
    gs_sb_json_num(w->sb, v);
}

/* Decimal digits of v ending at end (no printf: the trace writes millions of integers). */
static char *digits(char *end, uint64_t v)
{
    char *q = end;
    do {
        *--q = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    return q;
}

static void put_int(gs_jw *w, uint64_t mag, int neg)
{
    char pre[2];
    int np = before_value(w, pre);
    if (np < 0) return;
    char buf[24];
    char *e = buf + sizeof buf, *q = digits(e, mag);
    if (neg) *--q = '-';
    put_value(w->sb, pre, np, q, (size_t)(e - q));
}

void gs_jw_int(gs_jw *w, int64_t v)
{
    if (v < 0)
        put_int(w, (uint64_t)0 - (uint64_t)v, 1);
    else
        put_int(w, (uint64_t)v, 0);
}

void gs_jw_uint(gs_jw *w, uint64_t v)
{
    put_int(w, v, 0);
}

void gs_jw_bool(gs_jw *w, int v)
{
    char pre[2];
    int np = before_value(w, pre);
    if (np >= 0) put_value(w->sb, pre, np, v ? "true" : "false", v ? 4 : 5);
}

void gs_jw_null(gs_jw *w)
{
    char pre[2];
    int np = before_value(w, pre);
    if (np >= 0) put_value(w->sb, pre, np, "null", 4);
}

void gs_jw_rawn(gs_jw *w, const char *json, size_t n)
{
    if (!json || !n) {
        fail(w, "an empty raw value");
        return;
    }
    char pre[2];
    int np = before_value(w, pre);
    if (np >= 0) put_value(w->sb, pre, np, json, n);
}

void gs_jw_raw(gs_jw *w, const char *json)
{
    gs_jw_rawn(w, json, json ? strlen(json) : 0);
}

void gs_jw_kstr(gs_jw *w, const char *key, const char *s)
{
    gs_jw_key(w, key);
    gs_jw_str(w, s);
}

void gs_jw_knum(gs_jw *w, const char *key, double v)
{
    gs_jw_key(w, key);
    gs_jw_num(w, v);
}

void gs_jw_kint(gs_jw *w, const char *key, int64_t v)
{
    gs_jw_key(w, key);
    gs_jw_int(w, v);
}

void gs_jw_kbool(gs_jw *w, const char *key, int v)
{
    gs_jw_key(w, key);
    gs_jw_bool(w, v);
}

void gs_jw_knull(gs_jw *w, const char *key)
{
    gs_jw_key(w, key);
    gs_jw_null(w);
}

const char *gs_jw_error(const gs_jw *w)
{
    return w->error;
}

gs_status gs_jw_finish(const gs_jw *w, gs_error *err)
{
    if (w->error)
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0, "JSON writer: %s", w->error);
    if (w->depth > 0)
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0,
                            "JSON writer: %d container(s) left open", w->depth);
    if (!(w->st[0] & JW_ANY))
        return gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0, "JSON writer: no value written");
    if (!gs_sb_ok(w->sb))
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory writing JSON");
    return GS_OK;
}
