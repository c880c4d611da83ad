/* strbuf.c - growable string builder and escaping (see gs/strbuf.h). */
#include "gs/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void gs_sb_init(gs_sb *sb)
{
    memset(sb, 0, sizeof *sb);
}

void gs_sb_free(gs_sb *sb)
{
    if (!sb) return;
    gs_free(sb->data);
    memset(sb, 0, sizeof *sb);
}

void gs_sb_reset(gs_sb *sb)
{
    sb->len = 0;
    if (sb->data) sb->data[0] = '\0';
}

int gs_sb_ok(const gs_sb *sb)
{
    return !sb->oom;
}

static int sb_reserve(gs_sb *sb, size_t extra)
{
    if (sb->oom) return 0;
    size_t need;
    if (!gs_size_add(sb->len, extra, &need) || !gs_size_add(need, 1, &need)) {
        sb->oom = 1;
        return 0;
    }
    if (need <= sb->cap) return 1;
    size_t ncap = sb->cap ? sb->cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    char *n = gs_realloc(sb->data, ncap);
    if (!n) {
        sb->oom = 1;
        return 0;
    }
    sb->data = n;
    sb->cap = ncap;
    return 1;
}

const char *gs_sb_cstr(gs_sb *sb)
{
    if (!sb->data) return "";
    return sb->data;
}

char *gs_sb_take(gs_sb *sb)
{
    if (sb->oom) {
        gs_sb_free(sb);
        return NULL;
    }
    if (!sb->data && !sb_reserve(sb, 0)) return NULL;
    sb->data[sb->len] = '\0';
    char *p = sb->data;
    memset(sb, 0, sizeof *sb);
    return p;
}

void gs_sb_putn(gs_sb *sb, const char *s, size_t n)
{
    if (!sb_reserve(sb, n)) return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void gs_sb_putc(gs_sb *sb, char c)
{
    gs_sb_putn(sb, &c, 1);
}

void gs_sb_puts(gs_sb *sb, const char *s)
{
    if (s) gs_sb_putn(sb, s, strlen(s));
}

void gs_sb_vprintf(gs_sb *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof small) {
        gs_sb_putn(sb, small, (size_t)n);
    } else if (sb_reserve(sb, (size_t)n)) {
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void gs_sb_printf(gs_sb *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gs_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

/* Length of a valid UTF-8 sequence starting at s, or 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned min;
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        min = 0x80;
        c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        min = 0x800;
        c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    return n;
}

void gs_sb_json_str(gs_sb *sb, const char *s)
{
    gs_sb_putc(sb, '"');
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned char c = *p;
        switch (c) {
        case '"':
            gs_sb_puts(sb, "\\\"");
            p++;
            continue;
        case '\\':
            gs_sb_puts(sb, "\\\\");
            p++;
            continue;
        case '\n':
            gs_sb_puts(sb, "\\n");
            p++;
            continue;
        case '\r':
            gs_sb_puts(sb, "\\r");
            p++;
            continue;
        case '\t':
            gs_sb_puts(sb, "\\t");
            p++;
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == 0x7F) {
            gs_sb_printf(sb, "\\u%04x", c);
            p++;
            continue;
        }
        /* '<' escaped too, so JSON embedded in an HTML <script> can never close the tag */
        if (c == '<') {
            gs_sb_puts(sb, "\\u003c");
            p++;
            continue;
        }
        size_t n = utf8_len(p);
        if (n == 0) {
            gs_sb_puts(sb, "\\ufffd");
            p++;
            continue;
        }
        gs_sb_putn(sb, (const char *)p, n);
        p += n;
    }
    gs_sb_putc(sb, '"');
}

void gs_sb_json_num(gs_sb *sb, double v)
{
    if (!isfinite(v)) {
        gs_sb_puts(sb, "null");
        return;
    }
    if (v == (double)(long long)v && fabs(v) < 1e15) {
        gs_sb_printf(sb, "%lld", (long long)v);
        return;
    }
    gs_sb_printf(sb, "%.17g", v);
}

void gs_sb_html(gs_sb *sb, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '&':
            gs_sb_puts(sb, "&amp;");
            break;
        case '<':
            gs_sb_puts(sb, "&lt;");
            break;
        case '>':
            gs_sb_puts(sb, "&gt;");
            break;
        case '"':
            gs_sb_puts(sb, "&quot;");
            break;
        case '\'':
            gs_sb_puts(sb, "&#39;");
            break;
        default:
            gs_sb_putc(sb, *p);
            break;
        }
    }
}

void gs_sb_xml(gs_sb *sb, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') continue;
        char one[2] = {*p, 0};
        gs_sb_html(sb, one);
    }
}

void gs_sb_csv(gs_sb *sb, const char *s)
{
    s = s ? s : "";
    if (!strpbrk(s, ",\"\r\n")) {
        gs_sb_puts(sb, s);
        return;
    }
    gs_sb_putc(sb, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"') gs_sb_putc(sb, '"');
        gs_sb_putc(sb, *p);
    }
    gs_sb_putc(sb, '"');
}

gs_status gs_sb_write_file(gs_sb *sb, const char *path, gs_error *err)
{
    if (sb->oom)
        return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory building output");
    size_t plen = strlen(path);
    char *tmp = gs_malloc(plen + 32);
    if (!tmp) return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        gs_status st =
            gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
        gs_free(tmp);
        return st;
    }
    size_t w = sb->len ? fwrite(sb->data, 1, sb->len, f) : 0;
    int bad = (w != sb->len) | (fflush(f) != 0);
    bad |= (fclose(f) != 0);
    if (bad || rename(tmp, path) != 0) {
        gs_status st =
            gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
        remove(tmp);
        gs_free(tmp);
        return st;
    }
    gs_free(tmp);
    return GS_OK;
}

void gs_sb_term(gs_sb *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (; *p; p++) {
        if (*p < 0x20 || *p == 0x7F) {
            gs_sb_printf(sb, "\\x%02x", *p);
        } else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
            gs_sb_printf(sb, "\\xc2\\x%02x", p[1]);
            p++;
        } else if (*p == '\\') {
            gs_sb_puts(sb, "\\\\");
        } else {
            gs_sb_putc(sb, (char)*p);
        }
    }
}
