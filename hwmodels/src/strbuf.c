/* strbuf.c - growable string builder and escaping (see gs/strbuf.h). */
/* O_TMPFILE (Linux) for temp files that vanish with a killed process */
#define _GNU_SOURCE 1
#include "gs/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

/* Length of the leading run of printable ASCII that needs no escape. */
static size_t plain_run(const unsigned char *p)
{
    const unsigned char *q = p;
    while (*q >= 0x20 && *q < 0x7F && *q != '"' && *q != '\\' && *q != '<')
        q++;
    return (size_t)(q - p);
}

void gs_sb_json_str(gs_sb *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n0 = plain_run(p);
    if (!p[n0]) { /* nothing to escape (keys, names, ids): one append */
        if (!sb_reserve(sb, n0 + 2)) return;
        char *d = sb->data + sb->len;
        d[0] = '"';
        memcpy(d + 1, p, n0);
        d[n0 + 1] = '"';
        sb->len += n0 + 2;
        sb->data[sb->len] = '\0';
        return;
    }
    gs_sb_putc(sb, '"');
    while (*p) {
        /* a run of printable ASCII that needs no escape, copied at once */
        size_t run = plain_run(p);
        if (run) gs_sb_putn(sb, (const char *)p, run);
        p += run;
        if (!*p) break;
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
    /* range first: casting a double outside long long's range is undefined behaviour */
    if (fabs(v) < 1e15 && v == (double)(long long)v) {
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

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISLNK(m)) return "a symbolic link";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* write(2) all of buf, retrying on EINTR and short writes. 0 or an errno. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno;
        if (w == 0) return EIO;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Open the temp file for path. An unnamed one (O_TMPFILE) where the file system has it: it
 * disappears by itself if the process is killed while writing and gets a name only for the
 * instant between linkat and rename. Otherwise tmp itself (O_EXCL). *named says which. */
static int open_temp(const char *path, const char *tmp, int *named)
{
    int fd = -1;
    *named = 0;
#ifdef O_TMPFILE
    size_t plen = strlen(path);
    char *dir = gs_malloc(plen + 2);
    if (dir) {
        memcpy(dir, path, plen + 1);
        char *slash = strrchr(dir, '/');
        if (!slash)
            memcpy(dir, ".", 2);
        else if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
        fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        gs_free(dir);
    }
    if (fd >= 0) return fd;
#else
    (void)path;
#endif
    *named = 1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) { /* left by a killed process that had our pid */
        unlink(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    return fd;
}

gs_status gs_out_open(gs_out *o, const char *path, gs_error *err)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    /* Only a regular file is ever replaced: renaming over a symlink, device or FIFO would
     * silently turn it into a regular file (as root, --record /dev/full replaced the device). */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return gs_error_set(err, GS_ERR_USAGE, path, 0, 0,
                            "is %s, not a regular file: refusing to replace it",
                            kind_of(st.st_mode));
    size_t tlen = strlen(path) + 48;
    o->tmp = gs_malloc(tlen);
    o->path = gs_strdup(path);
    if (!o->tmp || !o->path) {
        gs_free(o->tmp);
        gs_free(o->path);
        memset(o, 0, sizeof *o);
        o->fd = -1;
        return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
    }
    snprintf(o->tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    o->fd = open_temp(path, o->tmp, &o->named);
    if (o->fd < 0) {
        int e = errno;
        gs_out_abort(o);
        return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(e));
    }
    return GS_OK;
}

void gs_out_abort(gs_out *o)
{
    if (!o) return;
    if (o->fd >= 0) close(o->fd);
    if (o->named && o->tmp) unlink(o->tmp);
    gs_free(o->tmp);
    gs_free(o->path);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}

gs_status gs_out_commit(gs_out *o, gs_error *err)
{
    if (o->fd < 0 || !o->tmp || !o->path)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "output not open");
    int e = 0;
    if (!o->named) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
        unlink(o->tmp); /* a leftover of a killed process that had our pid */
        if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) != 0)
            e = errno;
        else
            o->named = 1;
    }
    if (close(o->fd) != 0 && !e) e = errno;
    o->fd = -1;
    if (!e && rename(o->tmp, o->path) != 0) e = errno;
    if (!e) o->named = 0; /* renamed: nothing of ours left to remove */
    gs_status rc = GS_OK;
    if (e) rc = gs_error_set(err, GS_ERR_IO, o->path, 0, 0, "cannot write: %s", strerror(e));
    gs_out_abort(o);
    return rc;
}

gs_status gs_sb_write_file(gs_sb *sb, const char *path, gs_error *err)
{
    if (sb->oom)
        return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory building output");
    gs_out o;
    gs_status rc = gs_out_open(&o, path, err);
    if (rc != GS_OK) return rc;
    int e = write_all(o.fd, sb->data ? sb->data : "", sb->len);
    if (e) {
        gs_out_abort(&o);
        return gs_error_set(err, GS_ERR_IO, path, 0, 0, "cannot write: %s", strerror(e));
    }
    return gs_out_commit(&o, err);
}

gs_status gs_sb_check_output(const char *path, gs_error *err)
{
    struct stat st;
    if (!path || !path[0]) return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "empty output path");
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return gs_error_set(err, GS_ERR_USAGE, path, 0, 0,
                            "is %s, not a regular file: refusing to replace it",
                            kind_of(st.st_mode));
    size_t n = strlen(path);
    char *dir = gs_malloc(n + 2);
    if (!dir) return gs_error_set(err, GS_ERR_NOMEM, path, 0, 0, "out of memory");
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash)
        memcpy(dir, ".", 2);
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    gs_status rc = GS_OK;
    if (stat(dir, &st) != 0)
        rc = gs_error_set(err, GS_ERR_USAGE, path, 0, 0, "cannot write: directory %s: %s", dir,
                          strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc =
            gs_error_set(err, GS_ERR_USAGE, path, 0, 0, "cannot write: %s is not a directory", dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = gs_error_set(err, GS_ERR_USAGE, path, 0, 0, "cannot write in %s: %s", dir,
                          strerror(errno));
    gs_free(dir);
    return rc;
}

/* A Unicode direction control at p in UTF-8: U+061C (D8 9C), U+200E-F (E2 80 8E-8F),
 * U+202A-E (E2 80 AA-AE), U+2066-9 (E2 81 A6-A9). */
static int term_bidi(const unsigned char *p)
{
    if (p[0] == 0xD8) return p[1] == 0x9C;
    if (p[0] != 0xE2) return 0;
    if (p[1] == 0x80) return p[2] == 0x8E || p[2] == 0x8F || (p[2] >= 0xAA && p[2] <= 0xAE);
    return p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9;
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
        } else if (term_bidi(p)) {
            gs_sb_printf(sb, "\\x%02x\\x%02x", p[0], p[1]);
            if (p[0] == 0xE2) gs_sb_printf(sb, "\\x%02x", p[2]);
            p += p[0] == 0xE2 ? 2 : 1;
        } else {
            gs_sb_putc(sb, (char)*p);
        }
    }
}
