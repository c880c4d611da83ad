/*
 * fuzz_wl_expr.c - libFuzzer target for the workload shape expressions (gs_wl_expr_eval,
 * harness/workload/wl_expr.c): decimal literals, dimension names, + - * /, unary -, parentheses,
 * over int64 with overflow, inexact division and unknown names refused. Besides memory safety
 * and undefined behaviour (the asan preset's UBSan: a signed overflow or INT64_MIN / -1 would
 * stop it) it checks the contract: an error says where (its offset is inside the text) and why
 * (a message); a valid expression in parentheses is valid with the same value (up to the
 * nesting limit); a long name is never matched by a prefix. Built only with GS_FUZZ=ON (clang,
 * the asan preset); CTest runs a short smoke (label fuzz).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A name of GS_WL_NAME_MAX - 1 characters: an expression naming it with one more character
 * must not match it (a copy into a name-sized buffer would). */
#define LONG63 "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"

static const char *const names[] = {"hidden", "heads",  "kv_heads", "head_dim", "batch", "zero",
                                    "one",    "minus1", "max",      "min",      LONG63};
static const int64_t values[] = {4096, 32, 8, 128, 64, 0, 1, -1, INT64_MAX, INT64_MIN, 7};
#define N_NAMES ((int)(sizeof names / sizeof names[0]))

static gs_status eval(const char *s, int64_t *v, size_t *pos, gs_error *err)
{
    gs_error_clear(err);
    *pos = (size_t)-1;
    *v = 0;
    return gs_wl_expr_eval(s, names, values, N_NAMES, v, pos, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    /* the text up to the first NUL, as a C string, and the same in parentheses */
    const size_t len = strnlen((const char *)data, size);
    char *s = malloc(len + 3);
    if (!s) return 0;
    s[0] = '(';
    memcpy(s + 1, data, len);
    s[len + 1] = ')';
    s[len + 2] = '\0';
    char *wrapped = s;
    s[len + 1] = '\0';
    char *plain = s + 1;
    gs_error err;
    int64_t v = 0;
    size_t pos = 0;
    gs_status st = eval(plain, &v, &pos, &err);
    if (st != GS_OK && st != GS_ERR_PARSE) abort();
    if (st != GS_OK && (pos > len || !err.message[0])) abort();
    /* a name one character longer than a known one never takes its value */
    if (st == GS_OK && strstr(plain, LONG63 "d") != NULL) abort();
    s[len + 1] = ')';
    int64_t w = 0;
    gs_status st2 = eval(wrapped, &w, &pos, &err);
    /* a valid expression in parentheses is valid with the same value (the converse does not
     * hold: "1)+(1" is not valid, "(1)+(1)" is) */
    if (st == GS_OK && !(st2 != GS_OK && strstr(err.message, "nested too deeply")) &&
        (st2 != GS_OK || v != w))
        abort();
    free(s);
    return 0;
}
