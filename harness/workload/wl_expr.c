/* wl_expr.c - the integer expressions of workload shapes (workload.h, gs_wl_expr_eval): a
 * recursive-descent evaluator over int64 that refuses overflow, inexact division and unknown
 * names instead of giving a wrong shape. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "workload.h"

typedef struct ex {
    const char *s;
    size_t i;
    const char *const *names;
    const int64_t *values;
    int n;
    gs_error *err;
    size_t *pos;
    int failed;
    int depth;
} ex;

static void fail(ex *e, size_t at, const char *msg, const char *arg)
{
    if (e->failed) return;
    e->failed = 1;
    if (e->pos) *e->pos = at;
    gs_error_set(e->err, GS_ERR_PARSE, NULL, 0, 0, arg ? "%s '%s'" : "%s", msg, arg);
}

static void skip(ex *e)
{
    while (e->s[e->i] == ' ' || e->s[e->i] == '\t')
        e->i++;
}

static int64_t sum(ex *e);

static int64_t atom(ex *e)
{
    skip(e);
    const size_t at = e->i;
    const char c = e->s[at];
    if (++e->depth > 64) {
        fail(e, at, "expression nested too deeply", NULL);
        return 0;
    }
    int64_t v = 0;
    if (c == '(') {
        e->i++;
        v = sum(e);
        skip(e);
        if (e->s[e->i] != ')')
            fail(e, e->i, "expected ')'", NULL);
        else
            e->i++;
    } else if (c == '-') {
        e->i++;
        v = atom(e);
        /* -INT64_MIN does not fit: checked, never negated (undefined behaviour) */
        if (!e->failed && __builtin_sub_overflow((int64_t)0, v, &v))
            fail(e, at, "overflow in unary '-'", NULL);
    } else if (isdigit((unsigned char)c)) {
        while (isdigit((unsigned char)e->s[e->i])) {
            if (__builtin_mul_overflow(v, 10, &v) ||
                __builtin_add_overflow(v, e->s[e->i] - '0', &v)) {
                fail(e, at, "number too large", NULL);
                return 0;
            }
            e->i++;
        }
    } else if (isalpha((unsigned char)c) || c == '_') {
        size_t end = at;
        while (isalnum((unsigned char)e->s[end]) || e->s[end] == '_')
            end++;
        /* matched over its whole length: a long name cut to a buffer would match another */
        const size_t len = end - at;
        e->i = end;
        int k = 0;
        while (k < e->n && (strlen(e->names[k]) != len || strncmp(e->names[k], e->s + at, len)))
            k++;
        if (k == e->n) {
            char name[GS_WL_NAME_MAX + 4];
            const size_t shown = len < GS_WL_NAME_MAX ? len : GS_WL_NAME_MAX - 1;
            snprintf(name, sizeof name, "%.*s%s", (int)shown, e->s + at, len > shown ? "..." : "");
            fail(e, at, "unknown dimension", name);
        } else {
            v = e->values[k];
        }
    } else {
        fail(e, at, c ? "expected a number, a dimension name or '('" : "unexpected end", NULL);
    }
    e->depth--;
    return v;
}

static int64_t product(ex *e)
{
    int64_t v = atom(e);
    for (;;) {
        skip(e);
        const char op = e->s[e->i];
        if (e->failed || (op != '*' && op != '/')) return v;
        const size_t at = e->i++;
        int64_t r = atom(e);
        if (e->failed) return v;
        if (op == '*') {
            if (__builtin_mul_overflow(v, r, &v)) fail(e, at, "overflow in '*'", NULL);
        } else if (r == 0) {
            fail(e, at, "division by zero", NULL);
        } else if (r == -1 && v == INT64_MIN) {
            /* the quotient does not fit; x86's idiv traps (SIGFPE) on it, for '%' too */
            fail(e, at, "overflow in '/'", NULL);
        } else if (v % r != 0) {
            fail(e, at, "inexact division (a shape must divide evenly)", NULL);
        } else {
            v /= r;
        }
    }
}

static int64_t sum(ex *e)
{
    int64_t v = product(e);
    for (;;) {
        skip(e);
        const char op = e->s[e->i];
        if (e->failed || (op != '+' && op != '-')) return v;
        const size_t at = e->i++;
        int64_t r = product(e);
        if (e->failed) return v;
        if (op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v))
            fail(e, at, op == '+' ? "overflow in '+'" : "overflow in '-'", NULL);
    }
}

gs_status gs_wl_expr_eval(const char *expr, const char *const *names, const int64_t *values, int n,
                          int64_t *out, size_t *pos, gs_error *err)
{
    ex e = {.s = expr, .names = names, .values = values, .n = n, .err = err, .pos = pos};
    int64_t v = sum(&e);
    skip(&e);
    if (!e.failed && e.s[e.i]) fail(&e, e.i, "unexpected character after the expression", NULL);
    if (e.failed) return GS_ERR_PARSE;
    *out = v;
    return GS_OK;
}
