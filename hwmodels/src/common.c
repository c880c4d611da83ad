/* common.c - status strings, error objects, diagnostics lists, allocation hook. */
/* madvise and MADV_POPULATE_WRITE are Linux/BSD extensions beyond _POSIX_C_SOURCE */
#define _DEFAULT_SOURCE 1
#include "gs/common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *const status_strs[] = {
#define GS_STATUS_STR(name, str) str,
    GS_STATUS_TABLE(GS_STATUS_STR)
#undef GS_STATUS_STR
};
static const char *const status_names[] = {
#define GS_STATUS_NAME(name, str) #name,
    GS_STATUS_TABLE(GS_STATUS_NAME)
#undef GS_STATUS_NAME
};

const char *gs_status_str(gs_status st)
{
    if ((int)st < 0 || st >= GS_STATUS_COUNT) return "?";
    return status_strs[st];
}

const char *gs_status_name(gs_status st)
{
    if ((int)st < 0 || st >= GS_STATUS_COUNT) return "?";
    return status_names[st];
}

void gs_error_clear(gs_error *err)
{
    if (!err) return;
    memset(err, 0, sizeof *err);
    err->code = GS_OK;
}

gs_status gs_error_setv(gs_error *err, gs_status code, const char *file, int line, int column,
                        const char *fmt, va_list ap)
{
    if (!err) return code;
    err->code = code;
    err->line = line;
    err->column = column;
    err->file[0] = '\0';
    if (file) snprintf(err->file, sizeof err->file, "%s", file);
    if (fmt)
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    else
        snprintf(err->message, sizeof err->message, "%s", gs_status_str(code));
    return code;
}

gs_status gs_error_set(gs_error *err, gs_status code, const char *file, int line, int column,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gs_status st = gs_error_setv(err, code, file, line, column, fmt, ap);
    va_end(ap);
    return st;
}

void gs_error_format(const gs_error *err, char *buf, size_t size)
{
    if (!buf || size == 0) return;
    buf[0] = '\0';
    if (!err) return;
    if (err->file[0] && err->line > 0 && err->column > 0)
        snprintf(buf, size, "%s:%d:%d: %s", err->file, err->line, err->column, err->message);
    else if (err->file[0] && err->line > 0)
        snprintf(buf, size, "%s:%d: %s", err->file, err->line, err->message);
    else if (err->file[0])
        snprintf(buf, size, "%s: %s", err->file, err->message);
    else
        snprintf(buf, size, "%s", err->message);
}

void gs_diags_init(gs_diags *d)
{
    memset(d, 0, sizeof *d);
}

void gs_diags_free(gs_diags *d)
{
    if (!d) return;
    gs_free(d->items);
    memset(d, 0, sizeof *d);
}

void gs_diags_add(gs_diags *d, gs_status code, const char *file, int line, int column,
                  const char *fmt, ...)
{
    if (!d) return;
    if (d->count >= GS_DIAGS_MAX) {
        d->dropped++;
        return;
    }
    if (d->count == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 16;
        gs_error *n = gs_realloc(d->items, ncap * sizeof *n);
        if (!n) {
            d->dropped++;
            return;
        }
        d->items = n;
        d->cap = ncap;
    }
    va_list ap;
    va_start(ap, fmt);
    gs_error_setv(&d->items[d->count++], code, file, line, column, fmt, ap);
    va_end(ap);
}

void gs_diags_sort(gs_diags *d)
{
    /* insertion sort: stable, and lists are short */
    for (size_t i = 1; i < d->count; i++) {
        gs_error tmp = d->items[i];
        size_t j = i;
        while (j > 0) {
            const gs_error *p = &d->items[j - 1];
            int c = strcmp(p->file, tmp.file);
            if (c == 0) c = (p->line > tmp.line) - (p->line < tmp.line);
            if (c == 0) c = (p->column > tmp.column) - (p->column < tmp.column);
            if (c <= 0) break;
            d->items[j] = d->items[j - 1];
            j--;
        }
        d->items[j] = tmp;
    }
}

/* ---- allocation ---- */
static void *libc_malloc(size_t n, void *ud)
{
    (void)ud;
    return malloc(n ? n : 1);
}
static void *libc_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return realloc(p, n ? n : 1);
}
static void libc_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}
static gs_allocator g_alloc = {libc_malloc, libc_realloc, libc_free, NULL};

void gs_set_allocator(const gs_allocator *a)
{
    if (a)
        g_alloc = *a;
    else
        g_alloc = (gs_allocator){libc_malloc, libc_realloc, libc_free, NULL};
}

void *gs_malloc(size_t size)
{
    return g_alloc.malloc_fn(size, g_alloc.ud);
}

void *gs_calloc(size_t n, size_t size)
{
    size_t total;
    if (!gs_size_mul(n, size, &total)) return NULL;
    void *p = gs_malloc(total);
    if (p) {
        gs_prefault(p, total); /* every byte is written now: map the pages in one call */
        memset(p, 0, total);
    }
    return p;
}

void *gs_realloc(void *ptr, size_t size)
{
    return g_alloc.realloc_fn(ptr, size, g_alloc.ud);
}

void gs_free(void *ptr)
{
    if (ptr) g_alloc.free_fn(ptr, g_alloc.ud);
}

char *gs_strdup(const char *s)
{
    if (!s) return NULL;
    return gs_strndup(s, strlen(s));
}

char *gs_strndup(const char *s, size_t n)
{
    if (!s) return NULL;
    size_t len = strnlen(s, n);
    char *p = gs_malloc(len + 1);
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void gs_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    static size_t page;
    if (!page) {
        const long ps = sysconf(_SC_PAGESIZE);
        page = ps > 0 ? (size_t)ps : 4096;
    }
    if (!p) return;
    /* the whole pages inside [p, p + n), by offsets from p (no integer-to-pointer casts) */
    const size_t mis = (size_t)((uintptr_t)p % page);
    const size_t head = mis ? page - mis : 0;
    if (n < head) return;
    const size_t len = (n - head) / page * page;
    /* below a few pages the call costs about what the faults it saves do */
    if (len < 4 * page) return;
    (void)madvise((char *)p + head, len, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

int gs_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

int gs_size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}

size_t gs_edit_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return cap;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        size_t best = row[0];
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (a[i - 1] != b[j - 1]);
            size_t del = row[j] + 1, ins = row[j - 1] + 1;
            row[j] = GS_MIN(sub, GS_MIN(del, ins));
            prev = cur;
            if (row[j] < best) best = row[j];
        }
        if (best >= cap) return cap;
    }
    return GS_MIN(row[lb], cap);
}
