/* nki_prog.c - load a traced NKI kernel (.gsk) and replay it through the builder (nki_prog.h). */
#define _GNU_SOURCE /* mkdtemp */
#include "nki_prog.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs/strbuf.h"
#include "nki_prog_internal.h"

/* The program whose kernel is in use (gs_kernel_def callbacks have no context pointer). */
static gs_nki_prog *g_active;

gs_nki_prog *gs_nki_prog_active(void)
{
    return g_active;
}

int gs_nki_unescape(const char *in, char *out, size_t size)
{
    size_t n = 0;
    for (const char *s = in; *s; s++) {
        int c = (unsigned char)*s;
        if (c == '%') {
            unsigned v;
            char hex[3] = {s[1], s[1] ? s[2] : 0, 0};
            char *end;
            if (!hex[0] || !hex[1]) return -1;
            v = (unsigned)strtoul(hex, &end, 16);
            if (*end) return -1;
            c = (int)v;
            s += 2;
        }
        if (n + 1 >= size) return -1;
        out[n++] = (char)c;
    }
    if (n >= size) return -1;
    out[n] = '\0';
    return 0;
}

/* Text from the program file as every later use sees it (errors, listings, records, the
 * terminal): control characters and bidi controls as \xNN (gs_sb_term). NULL: out of memory. */
static char *term_dup(const char *s)
{
    if (!s[0]) return gs_strdup("");
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_term(&sb, s);
    char *out = gs_sb_ok(&sb) ? gs_sb_take(&sb) : NULL;
    gs_sb_free(&sb);
    return out;
}

void gs_nki_prog_free(gs_nki_prog *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_texts; i++)
        gs_free(p->texts[i]);
    gs_free(p->texts);
    if (g_active == p) g_active = NULL;
    for (int i = 0; i < p->n_files; i++)
        gs_free(p->files[i]);
    gs_free(p->files);
    gs_free(p->ref_args);
    for (size_t i = 0; i < p->n_stmts; i++)
        gs_free(p->stmts[i].buf);
    gs_free(p->stmts);
    for (int i = 0; i < p->n_tensors; i++)
        gs_free(p->tensors[i].data);
    gs_free(p);
}

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *out = v;
    return 0;
}

static int parse_f64(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE && fabs(v) > 1.0) return -1;
    if (end == s || *end) return -1;
    *out = v;
    return 0;
}

static int parse_shape(const char *s, gs_tensor_decl *d)
{
    d->ndim = 0;
    int64_t elems = 1;
    const char *q = s;
    while (*q) {
        if (d->ndim == GS_AP_MAX_DIMS) return -1;
        char *end;
        errno = 0;
        long long v = strtoll(q, &end, 10);
        if (errno || end == q || v <= 0) return -1;
        /* the builder's limit (2^50 elements): load_data's and the reference's products of
         * the dims, and their sizes in bytes, cannot overflow below it */
        if (v > ((int64_t)1 << 50) || (d->ndim > 0 && elems > ((int64_t)1 << 50) / v)) return -2;
        elems *= v;
        d->shape[d->ndim++] = v;
        if (*end == 'x')
            q = end + 1;
        else if (*end == '\0')
            q = end;
        else
            return -1;
    }
    return d->ndim > 0 ? 0 : -1;
}

static gs_status bad(gs_error *err, const gs_nki_prog *p, int line, const char *what)
{
    return gs_error_set(err, GS_ERR_INVALID, p->path, line, 0,
                        "traced program: %s (the NKI front end and this gensweep disagree on the "
                        "program format: rebuild both from one checkout)",
                        what);
}

/* Open a regular file for reading, as the config loader does (config_file.c): O_NONBLOCK so a
 * FIFO with no writer cannot block the open before fstat refuses it. NULL with why set. */
static FILE *open_regular(const char *path, const char *mode, off_t *size, char *why,
                          size_t why_size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "not a regular file (%s)",
                 S_ISDIR(st.st_mode)                          ? "a directory"
                 : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                              : "a special file");
        close(fd);
        return NULL;
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, mode);
    if (!f) {
        snprintf(why, why_size, "cannot open: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (size) *size = st.st_size;
    return f;
}

static gs_status load_data(gs_nki_prog *p, tensor_def *t, const char *path, int line, gs_error *err)
{
    uint64_t n = 1;
    for (int d = 0; d < t->decl.ndim; d++)
        n *= (uint64_t)t->decl.shape[d];
    char why[256];
    off_t size = 0;
    FILE *f = open_regular(path, "rb", &size, why, sizeof why);
    if (!f) return gs_error_set(err, GS_ERR_IO, p->path, line, 0, "input data %s: %s", path, why);
    /* the size first: a short or long file is refused before its tensor is allocated */
    if ((uint64_t)size != n * sizeof(double)) {
        fclose(f);
        return gs_error_set(err, GS_ERR_INVALID, p->path, line, 0,
                            "input data %s holds %lld bytes, tensor '%s' has %" PRIu64
                            " float64 values",
                            path, (long long)size, t->decl.name, n);
    }
    gs_free(t->data); /* a second data line for the tensor replaces the first */
    t->data = gs_malloc((size_t)n * sizeof(double));
    if (!t->data) {
        fclose(f);
        return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    size_t got = fread(t->data, sizeof(double), (size_t)n, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != n || extra)
        return gs_error_set(err, GS_ERR_INVALID, p->path, line, 0,
                            "input data %s holds %s values, tensor '%s' has %" PRIu64, path,
                            got != n ? "fewer" : "more", t->decl.name, n);
    t->elems = n;
    return GS_OK;
}

/* Split a line into tokens in place (single spaces). */
static int split(char *s, char **tok, int max)
{
    int n = 0;
    while (*s) {
        if (n == max) return -1;
        tok[n++] = s;
        char *sp = strchr(s, ' ');
        if (!sp) break;
        *sp = '\0';
        s = sp + 1;
    }
    return n;
}

static gs_status header_stmt(gs_nki_prog *p, char **tok, int n, int line, gs_error *err)
{
    char text[1024];
    if (!strcmp(tok[0], "kernel") && n == 2) {
        char *name = gs_nki_unescape(tok[1], text, sizeof text) ? NULL : term_dup(text);
        int fits = name && name[0] && strlen(name) < sizeof p->name;
        if (fits) memcpy(p->name, name, strlen(name) + 1);
        gs_free(name);
        return fits ? GS_OK : bad(err, p, line, "kernel");
    }
    if (!strcmp(tok[0], "file") && n == 3) {
        int64_t idx;
        if (parse_i64(tok[1], &idx) || idx != p->n_files ||
            gs_nki_unescape(tok[2], text, sizeof text))
            return bad(err, p, line, "file");
        char **nf = gs_realloc(p->files, (size_t)(p->n_files + 1) * sizeof *nf);
        if (!nf) return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        p->files = nf;
        p->files[p->n_files] = term_dup(text);
        if (!p->files[p->n_files])
            return gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        p->n_files++;
        return GS_OK;
    }
    if (!strcmp(tok[0], "reduction") && n == 2) {
        if (parse_f64(tok[1], &p->reduction) || !(p->reduction >= 1.0))
            return bad(err, p, line, "reduction");
        return GS_OK;
    }
    if (!strcmp(tok[0], "reference") && n == 3) {
        /* an older front end's: noted, never run (nki_prog.h) */
        p->names_reference = 1;
        return GS_OK;
    }
    if (!strcmp(tok[0], "refargs") && n == 2) {
        gs_free(p->ref_args);
        p->ref_args = gs_strdup(tok[1]);
        return p->ref_args ? GS_OK : gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    if (!strcmp(tok[0], "tensor") && (n == 6 || n == 9)) {
        int64_t idx;
        if (parse_i64(tok[1], &idx) || idx != p->n_tensors)
            return bad(err, p, line, "tensor index");
        if (p->n_tensors == GS_KERNEL_MAX_TENSORS)
            return gs_error_set(err, GS_ERR_UNSUPPORTED, p->path, line, 0,
                                "unsupported: more than %d HBM tensors in one kernel",
                                GS_KERNEL_MAX_TENSORS);
        tensor_def *t = &p->tensors[p->n_tensors];
        memset(t, 0, sizeof *t);
        gs_tensor_decl *d = &t->decl;
        if (!strcmp(tok[2], "in"))
            d->kind = GS_TENSOR_INPUT;
        else if (!strcmp(tok[2], "out"))
            d->kind = GS_TENSOR_OUTPUT;
        else if (!strcmp(tok[2], "scratch"))
            d->kind = GS_TENSOR_SCRATCH;
        else
            return bad(err, p, line, "tensor kind");
        if (gs_dtype_parse(tok[3], &d->dtype)) return bad(err, p, line, "tensor dtype");
        if (gs_nki_unescape(tok[4], text, sizeof text) || strlen(text) >= sizeof d->name ||
            !text[0] ||
            strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_.") != strlen(text) ||
            text[0] == '.')
            return bad(err, p, line, "tensor name (letters, digits, '_', '.')");
        memcpy(d->name, text, strlen(text) + 1);
        int shape_st = parse_shape(tok[5], d);
        if (shape_st == -2)
            return gs_error_set(err, GS_ERR_INVALID, p->path, line, 0,
                                "traced program: tensor shape %s has more than 2^50 elements",
                                tok[5]);
        if (shape_st) return bad(err, p, line, "tensor shape");
        d->lo = -1.0;
        d->hi = 1.0;
        if (n == 9) {
            int64_t integer;
            if (parse_f64(tok[6], &d->lo) || parse_f64(tok[7], &d->hi) || !(d->lo < d->hi) ||
                parse_i64(tok[8], &integer))
                return bad(err, p, line, "tensor value range");
            d->integer = integer != 0;
        }
        p->n_tensors++;
        return GS_OK;
    }
    if (!strcmp(tok[0], "data") && n == 3) {
        int64_t idx;
        if (parse_i64(tok[1], &idx) || idx < 0 || idx >= p->n_tensors ||
            p->tensors[idx].decl.kind != GS_TENSOR_INPUT ||
            gs_nki_unescape(tok[2], text, sizeof text))
            return bad(err, p, line, "data");
        return load_data(p, &p->tensors[idx], text, line, err);
    }
    return bad(err, p, line, "unknown statement");
}

gs_nki_prog *gs_nki_prog_load(const char *path, gs_error *err)
{
    char why[256];
    FILE *f = open_regular(path, "r", NULL, why, sizeof why);
    if (!f) {
        gs_error_set(err, GS_ERR_IO, path, 0, 0, "%s", why);
        return NULL;
    }
    gs_nki_prog *p = gs_nki_prog_load_stream(f, path, err);
    fclose(f);
    return p;
}

gs_nki_prog *gs_nki_prog_load_stream(FILE *f, const char *path, gs_error *err)
{
    gs_nki_prog *p = gs_calloc(1, sizeof *p);
    if (!p) {
        gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    snprintf(p->path, sizeof p->path, "%s", path);
    p->reduction = 1.0;
    p->max_tile = p->max_pool = -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, core = 0;
    gs_status st = GS_OK;
    while (st == GS_OK && (len = getline(&line, &cap, f)) >= 0) {
        if (lineno == INT_MAX) {
            st = bad(err, p, lineno, "more lines than a program holds");
            break;
        }
        lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, "gsk 1") != 0) st = bad(err, p, 1, "not a version 1 .gsk file");
            continue;
        }
        if (len == 0) continue;
        char *copy = gs_strdup(line);
        if (!copy) {
            st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
            break;
        }
        char *tok[MAX_TOKENS];
        int n = split(copy, tok, MAX_TOKENS);
        if (n <= 0) {
            gs_free(copy);
            st = bad(err, p, lineno, "too many tokens");
            break;
        }
        if (!strcmp(tok[0], "core")) {
            int64_t c = 0;
            if (n != 2 || parse_i64(tok[1], &c) || c < 0 || c > 4096)
                st = bad(err, p, lineno, "core");
            core = (int)c;
            if (core > p->max_core) p->max_core = core;
            gs_free(copy);
            continue;
        }
        int is_builder = !strcmp(tok[0], "pool") || !strcmp(tok[0], "tile") || n >= 3;
        if (is_builder && strcmp(tok[0], "tensor") && strcmp(tok[0], "file") &&
            strcmp(tok[0], "data") && strcmp(tok[0], "reference") && strcmp(tok[0], "refargs")) {
            if (p->n_stmts == p->cap_stmts) {
                size_t nc = p->cap_stmts ? p->cap_stmts * 2 : 256;
                stmt *ns = gs_realloc(p->stmts, nc * sizeof *ns);
                if (!ns) {
                    gs_free(copy);
                    st = gs_error_set(err, GS_ERR_NOMEM, NULL, 0, 0, "out of memory");
                    break;
                }
                p->stmts = ns;
                p->cap_stmts = nc;
            }
            stmt *s = &p->stmts[p->n_stmts++];
            s->core = core;
            s->lineno = lineno;
            s->ntok = n;
            s->buf = copy;
            for (int i = 0; i < n; i++)
                s->tok[i] = tok[i];
            int64_t idx;
            if (!strcmp(tok[0], "tile") && n == 8 && !parse_i64(tok[1], &idx) && idx < INT32_MAX &&
                idx > p->max_tile)
                p->max_tile = (int)idx;
            if (!strcmp(tok[0], "pool") && n == 8 && !parse_i64(tok[1], &idx) && idx < INT32_MAX &&
                idx > p->max_pool)
                p->max_pool = (int)idx;
            continue;
        }
        st = header_stmt(p, tok, n, lineno, err);
        gs_free(copy);
    }
    free(line);
    if (st == GS_OK && lineno == 0) st = bad(err, p, 0, "empty file");
    if (st == GS_OK && !p->name[0]) st = bad(err, p, 0, "no kernel statement");
    if (st == GS_OK && p->n_tensors == 0) st = bad(err, p, 0, "no tensors");
    /* tile and pool indices are below the statement count (the front end numbers them in
     * program order): the replay's tables, sized by them, stay within the file's size */
    if (st == GS_OK && ((p->max_tile >= 0 && (size_t)p->max_tile >= p->n_stmts) ||
                        (p->max_pool >= 0 && (size_t)p->max_pool >= p->n_stmts)))
        st = bad(err, p, 0, "a tile or pool index beyond the program's statements");
    if (st != GS_OK) {
        gs_nki_prog_free(p);
        return NULL;
    }
    return p;
}

/* ---- replay ---- */

typedef struct replay {
    gs_nki_prog *p;
    gs_kb *kb;
    const gs_kernel_args *args;
    gs_pool **pools;
    gs_tile *tiles;
    const stmt *s;
    char why[256]; /* what parse_ap found wrong beyond the format, for malformed() */
} replay;

static const char *file_of(const replay *r, const char *tok, int *ok)
{
    int64_t i;
    if (parse_i64(tok, &i) || i < 0 || i >= r->p->n_files) {
        *ok = 0;
        return "?";
    }
    return r->p->files[i];
}

/* A malformed statement: the program file's line (not the kernel's) is at fault. */
static gs_status malformed(replay *r, const char *what)
{
    if (r->why[0])
        return gs_kb_fail_at(r->kb, r->p->path, r->s->lineno, GS_ERR_INVALID,
                             "traced program: '%s': %s", r->s->tok[0], r->why);
    return gs_kb_fail_at(r->kb, r->p->path, r->s->lineno, GS_ERR_INVALID,
                         "traced program: bad %s in '%s' (the front end and this gensweep "
                         "disagree on the program format)",
                         what, r->s->tok[0]);
}

static int parse_ints(const char *s, int64_t *v, int max)
{
    int n = 0;
    while (1) {
        if (n == max) return -1;
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (errno || end == s) return -1;
        v[n++] = x;
        if (*end == '\0') return n;
        if (*end != ',') return -1;
        s = end + 1;
    }
}

/* The lowest and highest element (inclusive) that `off` plus a view of nd dims (and, with
 * np > 1, np partition-rows pstride apart) reaches, with the file's own 64-bit values: 0, or
 * -1 when that arithmetic overflows. */
static int view_reach(int64_t off, int64_t np, int64_t pstride, int nd, const uint32_t *shape,
                      const int64_t *stride, int64_t *lo, int64_t *hi)
{
    int bad = 0;
    int64_t span;
    *lo = *hi = off;
    for (int d = 0; d <= nd; d++) {
        if (d < nd)
            bad |= __builtin_mul_overflow((int64_t)shape[d] - 1, stride[d], &span);
        else
            bad |= __builtin_mul_overflow(np - 1, pstride, &span);
        bad |= span < 0 ? __builtin_add_overflow(*lo, span, lo)
                        : __builtin_add_overflow(*hi, span, hi);
    }
    return bad ? -1 : 0;
}

/* Refuse a view whose arithmetic overflows (the builder's bounds checks compare the box it
 * spans; a wrapped box passes them and the executor then touches memory outside the tensor):
 * -1 with r->why set. */
static int overflows(replay *r, const char *tok, int64_t off)
{
    snprintf(r->why, sizeof r->why,
             "operand %.64s: offset %" PRId64
             " plus the view's extent overflows 64-bit arithmetic (no tensor or tile reaches that "
             "far)",
             tok, off);
    return -1;
}

/* Parse an operand pattern token into a; 0 on success. Range errors of views become the
 * builder's bad_view (reported at the kernel line when used); overflowing arithmetic is the
 * program file's fault (-1, r->why). */
static int parse_ap(replay *r, const char *tok, gs_ap *a)
{
    int64_t v[5 + 2 * GS_AP_MAX_DIMS];
    if (tok[0] != 'H' && tok[0] != 'T') return -1;
    int n = parse_ints(tok + 1, v, 5 + 2 * GS_AP_MAX_DIMS);
    if (n < 7) return -1;
    int64_t nd = v[4];
    if (nd < 1 || nd > GS_AP_MAX_DIMS || n != 5 + 2 * nd) return -1;
    uint32_t shape[GS_AP_MAX_DIMS];
    int64_t stride[GS_AP_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        if (v[5 + 2 * d] <= 0 || v[5 + 2 * d] > UINT32_MAX) return -1;
        shape[d] = (uint32_t)v[5 + 2 * d];
        stride[d] = v[6 + 2 * d];
    }
    if (v[2] <= 0 || v[2] > UINT32_MAX) return -1;
    if (tok[0] == 'H') {
        if (v[0] < 0 || v[0] >= r->args->n_tensors) return -1;
        int64_t lo, hi;
        if (view_reach(v[1], v[2], v[3], (int)nd, shape, stride, &lo, &hi) || hi == INT64_MAX)
            return overflows(r, tok, v[1]); /* hi == INT64_MAX: the box's end, hi + 1, too */
        *a = gs_hbm_ap(&r->args->t[v[0]], v[1], (unsigned)v[2], v[3], (int)nd, shape, stride);
        return 0;
    }
    if (v[0] < 0 || v[0] > r->p->max_tile) return -1;
    const gs_tile *t = &r->tiles[v[0]];
    if (t->ap.tensor < 0) return -1; /* a tile this core never allocated */
    *a = t->ap;
    int64_t p0 = v[1], np = v[2], off = v[3], p1;
    /* the lowest and highest element the view reaches within a partition */
    int64_t lo, hi;
    if (view_reach(off, 1, 0, (int)nd, shape, stride, &lo, &hi)) return overflows(r, tok, off);
    if (__builtin_add_overflow(p0, np, &p1)) return overflows(r, tok, p0);
    int in_range = p0 >= 0 && np >= 1 && p1 <= (int64_t)t->ap.part_count && lo >= 0 &&
                   hi < (int64_t)t->free_elems;
    for (int d = 0; d < nd; d++)
        if (stride[d] < INT32_MIN || stride[d] > INT32_MAX) a->bad_view = GS_AP_BAD_STRIDE;
    if (!in_range) a->bad_view = GS_AP_BAD_RANGE;
    a->part_start = t->ap.part_start + (uint32_t)(in_range ? p0 : 0);
    a->part_count = (uint32_t)np;
    a->offset = t->ap.offset + (in_range ? off : 0) * (int64_t)gs_dtype_size(t->ap.dtype);
    a->ndim = (uint8_t)nd;
    for (int d = 0; d < GS_AP_MAX_DIMS; d++) {
        a->shape[d] = d < nd ? shape[d] : 0;
        a->stride[d] = d < nd ? (int32_t)stride[d] : 0;
    }
    return 0;
}

/* A float value of the file: a finite double beyond float's range has no float (converting it
 * is undefined behaviour); infinities and NaN convert. 0 on success. */
static int parse_f32(const char *s, float *out)
{
    double v;
    if (parse_f64(s, &v) || (isfinite(v) && fabs(v) > (double)FLT_MAX)) return -1;
    *out = (float)v;
    return 0;
}

static int parse_operand(replay *r, const char *tok, gs_operand *o)
{
    if (tok[0] == '#') {
        float v;
        if (parse_f32(tok + 1, &v)) return -1;
        *o = gs_imm(v);
        return 0;
    }
    gs_ap a;
    if (parse_ap(r, tok, &a)) return -1;
    *o = gs_per_partition(a);
    return 0;
}

static int parse_engine(const char *tok, gs_engine *e)
{
    for (int i = 0; i < GS_ENGINE_COUNT; i++)
        if (!strcmp(tok, gs_engine_name((gs_engine)i))) {
            *e = (gs_engine)i;
            return 0;
        }
    return -1;
}

static gs_status replay_pool(replay *r)
{
    const stmt *s = r->s;
    int64_t idx, bufs, bytes, line;
    int ok = 1;
    char name[NAME_MAX_LEN];
    if (s->ntok != 8 || parse_i64(s->tok[1], &idx) || idx < 0 || idx > r->p->max_pool ||
        parse_i64(s->tok[3], &bufs) || bufs < 1 || bufs > UINT32_MAX ||
        parse_i64(s->tok[4], &bytes) || bytes < 1 || parse_i64(s->tok[6], &line) || line < 0 ||
        line > INT32_MAX || gs_nki_unescape(s->tok[7], name, sizeof name))
        return malformed(r, "pool");
    gs_memspace space = !strcmp(s->tok[2], "psum") ? GS_MEM_PSUM : GS_MEM_SBUF;
    if (strcmp(s->tok[2], "psum") && strcmp(s->tok[2], "sbuf")) return malformed(r, "pool space");
    const char *file = file_of(r, s->tok[5], &ok);
    if (!ok) return malformed(r, "file index");
    /* the pool's name must outlive the build: kept by the program, escaped for the terminal */
    char *keep = term_dup(name);
    char **nt = keep ? gs_realloc(r->p->texts, (size_t)(r->p->n_texts + 1) * sizeof *nt) : NULL;
    if (!nt) {
        gs_free(keep);
        return gs_kb_fail(r->kb, GS_ERR_NOMEM, "out of memory");
    }
    r->p->texts = nt;
    r->p->texts[r->p->n_texts++] = keep;
    r->pools[idx] =
        gs_pool_create_at(r->kb, file, (int)line, space, keep, (unsigned)bufs, (uint64_t)bytes);
    return gs_kb_status(r->kb);
}

static gs_status replay_tile(replay *r)
{
    const stmt *s = r->s;
    int64_t idx, pool, parts, free_elems, line;
    gs_dtype dt;
    int ok = 1;
    if (s->ntok != 8 || parse_i64(s->tok[1], &idx) || idx < 0 || idx > r->p->max_tile ||
        parse_i64(s->tok[2], &pool) || pool < 0 || pool > r->p->max_pool || !r->pools[pool] ||
        gs_dtype_parse(s->tok[3], &dt) || parse_i64(s->tok[4], &parts) || parts < 1 ||
        parts > UINT32_MAX || parse_i64(s->tok[5], &free_elems) || free_elems < 1 ||
        free_elems > UINT32_MAX || parse_i64(s->tok[7], &line) || line < 0 || line > INT32_MAX)
        return malformed(r, "tile");
    const char *file = file_of(r, s->tok[6], &ok);
    if (!ok) return malformed(r, "file index");
    r->tiles[idx] = gs_tile_alloc_at(r->pools[pool], file, (int)line, dt, (unsigned)parts,
                                     (uint32_t)free_elems);
    return gs_kb_status(r->kb);
}

static gs_status replay_fail(replay *r, const char *file, int line)
{
    const stmt *s = r->s;
    if (s->ntok != 5) return malformed(r, "fail");
    gs_status code = !strcmp(s->tok[3], "unsupported")    ? GS_ERR_UNSUPPORTED
                     : !strcmp(s->tok[3], "does-not-fit") ? GS_ERR_DOES_NOT_FIT
                     : !strcmp(s->tok[3], "invalid")      ? GS_ERR_INVALID
                                                          : GS_OK;
    char msg[1024];
    if (code == GS_OK || gs_nki_unescape(s->tok[4], msg, sizeof msg)) return malformed(r, "fail");
    char *text = term_dup(msg); /* the kernel's message, for the terminal */
    gs_status st = gs_kb_fail_at(r->kb, file, line, code, "%s", text ? text : msg);
    gs_free(text);
    return st;
}

/* One builder call. Argument counts are fixed per opcode (the table in nki_prog.h). */
static gs_status replay_op(replay *r)
{
    const stmt *s = r->s;
    char *const *t = s->tok;
    int ok = 1;
    int64_t line64;
    if (s->ntok < 3 || parse_i64(t[2], &line64) || line64 < 0 || line64 > INT32_MAX)
        return malformed(r, "source line");
    const char *file = file_of(r, t[1], &ok);
    if (!ok) return malformed(r, "file index");
    const int line = (int)line64;
    const char *op = t[0];
    const int n = s->ntok - 3;
    char *const *a = t + 3;
    gs_kb *kb = r->kb;
    gs_ap x, y, z;
    gs_operand o0, o1;
    gs_alu alu, alu1;
    gs_act act;
    gs_engine eng;
    int64_t i0, i1, i2;
    float f0;
    if (!strcmp(op, "fail")) return replay_fail(r, file, line);
    if (!strcmp(op, "dma_copy") || !strcmp(op, "dma_transpose")) {
        if (n != 3 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || parse_i64(a[2], &i0))
            return malformed(r, "operands");
        return op[4] == 'c' ? gs_dma_copy_at(kb, file, line, x, y, (int)i0)
                            : gs_dma_transpose_at(kb, file, line, x, y, (int)i0);
    }
    if (!strcmp(op, "matmul")) { /* 4 more operands: a PE array tile (row, col, rows, cols) */
        int tile[4];
        if ((n != 4 && n != 8) || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) ||
            parse_ap(r, a[2], &z) || parse_i64(a[3], &i0))
            return malformed(r, "operands");
        for (int k = 0; n == 8 && k < 4; k++) {
            int64_t v;
            if (parse_i64(a[4 + k], &v) || v < 0 || v > 4096) return malformed(r, "operands");
            tile[k] = (int)v;
        }
        return n == 8 ? gs_matmul_tile_at(kb, file, line, x, y, z, (int)i0, tile)
                      : gs_matmul_at(kb, file, line, x, y, z, (int)i0);
    }
    if (!strcmp(op, "transpose")) {
        if (n != 2 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y))
            return malformed(r, "operands");
        return gs_transpose_at(kb, file, line, x, y);
    }
    if (!strcmp(op, "activation")) {
        gs_ap acc;
        if (n != 6 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || gs_act_parse(a[2], &act) ||
            parse_operand(r, a[3], &o0) || parse_operand(r, a[4], &o1) ||
            (strcmp(a[5], "-") && parse_ap(r, a[5], &acc)))
            return malformed(r, "operands");
        return gs_activation_at(kb, file, line, x, y, act, o0, o1, strcmp(a[5], "-") ? &acc : NULL);
    }
    if (!strcmp(op, "exponential")) {
        gs_ap acc;
        if (n != 4 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) ||
            parse_operand(r, a[2], &o0) || (strcmp(a[3], "-") && parse_ap(r, a[3], &acc)))
            return malformed(r, "operands");
        return gs_exponential_at(kb, file, line, x, y, o0, strcmp(a[3], "-") ? &acc : NULL);
    }
    if (!strcmp(op, "tensor_tensor")) {
        if (n != 4 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || parse_ap(r, a[2], &z) ||
            gs_alu_parse(a[3], &alu))
            return malformed(r, "operands");
        return gs_tensor_tensor_at(kb, file, line, x, y, z, alu);
    }
    if (!strcmp(op, "scalar_tensor_tensor")) { /* out data op0 operand0 rev0 op1 operand1 rev1 */
        int64_t r0 = 0, r1 = 0;
        if (n != 8 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || gs_alu_parse(a[2], &alu) ||
            parse_operand(r, a[3], &o0) || parse_i64(a[4], &r0) || (r0 != 0 && r0 != 1) ||
            gs_alu_parse(a[5], &alu1) || parse_ap(r, a[6], &z) || parse_i64(a[7], &r1) ||
            (r1 != 0 && r1 != 1))
            return malformed(r, "operands");
        return gs_scalar_tensor_tensor_at(kb, file, line, x, y, alu, o0, (int)r0, alu1, z, (int)r1);
    }
    if (!strcmp(op, "stream_shuffle")) { /* dst src m0 .. m31 */
        int mask[32];
        if (n != 2 + 32 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y))
            return malformed(r, "operands");
        for (int k = 0; k < 32; k++) {
            int64_t v;
            if (parse_i64(a[2 + k], &v) || v < 0 || v > 255) return malformed(r, "operands");
            mask[k] = (int)v;
        }
        return gs_stream_shuffle_at(kb, file, line, x, y, mask);
    }
    if (!strcmp(op, "tensor_tensor_scan")) {
        if (n != 6 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || parse_ap(r, a[2], &z) ||
            parse_operand(r, a[3], &o0) || gs_alu_parse(a[4], &alu) || gs_alu_parse(a[5], &alu1))
            return malformed(r, "operands");
        return gs_tensor_tensor_scan_at(kb, file, line, x, y, z, o0, alu, alu1);
    }
    if (!strcmp(op, "tensor_scalar")) {
        if (n != 7 || parse_engine(a[0], &eng) || parse_ap(r, a[1], &x) || parse_ap(r, a[2], &y) ||
            gs_alu_parse(a[3], &alu) || parse_operand(r, a[4], &o0) || gs_alu_parse(a[5], &alu1) ||
            parse_operand(r, a[6], &o1))
            return malformed(r, "operands");
        return gs_tensor_scalar_at(kb, file, line, eng, x, y, alu, o0, alu1, o1);
    }
    if (!strcmp(op, "tensor_reduce")) { /* a 5th operand 1: negate (older programs have 4) */
        int64_t neg = 0;
        if ((n != 4 && n != 5) || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) ||
            gs_alu_parse(a[2], &alu) || parse_i64(a[3], &i0) ||
            (n == 5 && (parse_i64(a[4], &neg) || (neg != 0 && neg != 1))))
            return malformed(r, "operands");
        return gs_tensor_reduce_neg_at(kb, file, line, x, y, alu, (int)i0, (int)neg);
    }
    if (!strcmp(op, "tensor_copy")) {
        if (n != 3 || parse_engine(a[0], &eng) || parse_ap(r, a[1], &x) || parse_ap(r, a[2], &y))
            return malformed(r, "operands");
        return gs_tensor_copy_at(kb, file, line, eng, x, y);
    }
    if (!strcmp(op, "memset")) {
        if (n != 3 || parse_engine(a[0], &eng) || parse_ap(r, a[1], &x) || parse_f32(a[2], &f0))
            return malformed(r, "operands");
        return gs_memset_at(kb, file, line, eng, x, f0);
    }
    if (!strcmp(op, "iota")) {
        if (n != 4 || parse_ap(r, a[0], &x) || parse_i64(a[1], &i0) || parse_i64(a[2], &i1) ||
            parse_i64(a[3], &i2))
            return malformed(r, "operands");
        return gs_iota_at(kb, file, line, x, i0, i1, i2);
    }
    if (!strcmp(op, "affine_select")) {
        if (n != 7 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || gs_alu_parse(a[2], &alu) ||
            parse_i64(a[3], &i0) || parse_i64(a[4], &i1) || parse_i64(a[5], &i2) ||
            parse_f32(a[6], &f0))
            return malformed(r, "operands");
        return gs_affine_select_at(kb, file, line, x, y, alu, i0, i1, i2, f0);
    }
    if (!strcmp(op, "partition_reduce")) {
        if (n != 3 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || gs_alu_parse(a[2], &alu))
            return malformed(r, "operands");
        return gs_partition_reduce_at(kb, file, line, x, y, alu);
    }
    if (!strcmp(op, "partition_broadcast")) {
        if (n != 2 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y))
            return malformed(r, "operands");
        return gs_partition_broadcast_at(kb, file, line, x, y);
    }
    if (!strcmp(op, "gather")) {
        if (n != 3 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || parse_ap(r, a[2], &z))
            return malformed(r, "operands");
        return gs_gather_at(kb, file, line, x, y, z);
    }
    if (!strcmp(op, "max8")) {
        if (n != 2 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y))
            return malformed(r, "operands");
        return gs_max8_at(kb, file, line, x, y);
    }
    if (!strcmp(op, "find_index8")) {
        if (n != 3 || parse_ap(r, a[0], &x) || parse_ap(r, a[1], &y) || parse_ap(r, a[2], &z))
            return malformed(r, "operands");
        return gs_find_index8_at(kb, file, line, x, y, z);
    }
    if (!strcmp(op, "match_replace8")) {
        /* dst, dst_idx or "-", data, vals, imm */
        gs_ap idx;
        if (n != 5 || parse_ap(r, a[0], &x) || (strcmp(a[1], "-") && parse_ap(r, a[1], &idx)) ||
            parse_ap(r, a[2], &y) || parse_ap(r, a[3], &z) || parse_f32(a[4], &f0))
            return malformed(r, "operands");
        return gs_match_replace8_at(kb, file, line, x, strcmp(a[1], "-") ? &idx : NULL, y, z, f0);
    }
    return malformed(r, "opcode");
}

static int nki_tensors(const gs_kernel_args *args, gs_tensor_decl *out, int max, gs_error *err)
{
    (void)args;
    const gs_nki_prog *p = g_active;
    if (!p || p->n_tensors > max) {
        gs_error_set(err, GS_ERR_INTERNAL, NULL, 0, 0, "no traced NKI program is active");
        return -1;
    }
    for (int i = 0; i < p->n_tensors; i++) {
        out[i] = p->tensors[i].decl;
        out[i].init = p->tensors[i].data;
    }
    return p->n_tensors;
}

static gs_status nki_build(gs_kb *kb, const gs_kernel_args *args)
{
    gs_nki_prog *p = g_active;
    if (!p) return gs_kb_fail(kb, GS_ERR_INTERNAL, "no traced NKI program is active");
    const int core = (int)gs_kb_caps(kb)->core_id;
    replay r = {p, kb, args, NULL, NULL, NULL, ""};
    r.pools = gs_calloc((size_t)p->max_pool + 2, sizeof *r.pools);
    r.tiles = gs_calloc((size_t)p->max_tile + 2, sizeof *r.tiles);
    if (!r.pools || !r.tiles) {
        gs_free(r.pools);
        gs_free(r.tiles);
        return gs_kb_fail(kb, GS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i <= p->max_tile; i++)
        r.tiles[i].ap.tensor = -1;
    gs_status st = GS_OK;
    for (size_t i = 0; i < p->n_stmts && st == GS_OK; i++) {
        if (p->stmts[i].core != core) continue;
        r.s = &p->stmts[i];
        r.why[0] = '\0';
        if (!strcmp(r.s->tok[0], "pool"))
            st = replay_pool(&r);
        else if (!strcmp(r.s->tok[0], "tile"))
            st = replay_tile(&r);
        else
            st = replay_op(&r);
        if (st == GS_OK) st = gs_kb_status(kb);
    }
    gs_free(r.pools);
    gs_free(r.tiles);
    return st;
}

/* The reference ran in its own process; a failure there (an exception, a limit) is the check's
 * result, not a comparison against the NaNs put in place of its values. */
static gs_status nki_reference_status(gs_error *err)
{
    const gs_nki_prog *p = gs_nki_prog_active();
    if (!p || p->ref_st == GS_OK) return GS_OK;
    if (err) *err = p->ref_err;
    return p->ref_st;
}

static double nki_reduction_len(const gs_kernel_args *args)
{
    (void)args;
    return g_active ? g_active->reduction : 1.0;
}

const gs_kernel_def *gs_nki_prog_kernel(gs_nki_prog *p)
{
    gs_kernel_def *k = &p->def;
    memset(k, 0, sizeof *k);
    snprintf(p->kname, sizeof p->kname, "nki.%s", p->name);
    k->name = p->kname;
    k->summary = "an NKI kernel traced by the front end (docs/NKI.md)";
    const gs_tensor_decl *first = &p->tensors[0].decl;
    static const char *const dim_names[GS_SUITE_MAX_DIMS] = {"d0", "d1", "d2", "d3",
                                                             "d4", "d5", "d6", "d7"};
    k->n_dims = first->ndim;
    for (int i = 0; i < first->ndim; i++)
        k->dim_names[i] = dim_names[i];
    /* no check shapes: its dims are the traced tensor's (the caller passes them as --shape), and
     * not fitting a generation is a clean does-not-fit, as for a C kernel's perf shape */
    k->n_variants = 1;
    k->variants[0] = "nki";
    k->dtypes = (1u << GS_DTYPE_COUNT) - 1u;
    snprintf(p->shape_arg, sizeof p->shape_arg, "%" PRId64, first->shape[0]);
    for (int i = 1; i < first->ndim; i++) {
        size_t l = strlen(p->shape_arg);
        snprintf(p->shape_arg + l, sizeof p->shape_arg - l, "x%" PRId64, first->shape[i]);
    }
    k->spmd_variants = p->max_core > 0 ? 1u : 0u;
    k->tensors = nki_tensors;
    k->build = nki_build;
    k->reference = p->ref_file[0] ? gs_nki_prog_reference : NULL;
    k->reference_status = p->ref_file[0] ? nki_reference_status : NULL;
    k->reduction_len = nki_reduction_len;
    g_active = p;
    return k;
}

gs_status gs_nki_prog_set_reference(gs_nki_prog *p, const char *path, const char *func,
                                    gs_error *err)
{
    if (strlen(path) >= sizeof p->ref_file || strlen(func) >= sizeof p->ref_func)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "reference %s:%s: name too long", path,
                            func);
    memcpy(p->ref_file, path, strlen(path) + 1);
    memcpy(p->ref_func, func, strlen(func) + 1);
    return GS_OK;
}

void gs_nki_prog_set_limits(gs_nki_prog *p, double wall_s, double mem_bytes)
{
    p->wall_limit_s = wall_s > 0 ? wall_s : 0;
    p->mem_limit = mem_bytes > 0 ? mem_bytes : 0;
}

void gs_nki_prog_set_workdir(gs_nki_prog *p, const char *dir)
{
    snprintf(p->workdir, sizeof p->workdir, "%s", dir);
}

int gs_nki_prog_names_reference(const gs_nki_prog *p)
{
    return p->names_reference;
}

void gs_nki_prog_set_python(gs_nki_prog *p, const char *python, const char *frontend_dir)
{
    snprintf(p->python, sizeof p->python, "%s", python);
    snprintf(p->frontend, sizeof p->frontend, "%s", frontend_dir);
}

gs_status gs_nki_prog_reference_status(const gs_nki_prog *p, gs_error *err)
{
    if (p->ref_st != GS_OK && err) *err = p->ref_err;
    return p->ref_st;
}

const char *gs_nki_prog_shape(const gs_nki_prog *p)
{
    return p->shape_arg;
}

const char *gs_nki_prog_dtype(const gs_nki_prog *p)
{
    return gs_dtype_name(p->tensors[0].decl.dtype);
}
