/* parse.c - the strict parsers of numbers, sizes, shapes, kernel params and thresholds
 * (see parse.h). */
#include "parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/common.h"
#include "gs/strbuf.h"

/* Show at most this much of a bad value in an error. */
#define SHOW 60

int gs_parse_uint(const char *s, uint64_t hi, uint64_t *out, gs_error *err)
{
    if (!s || !*s)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "missing value (expected an integer)"),
               -1;
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            /* skip the rest of the digits so the message is about the range */
            while (p[1] >= '0' && p[1] <= '9')
                p++;
            if (!p[1])
                return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                                    "'%.*s' is out of range (0 .. %llu)", SHOW, s,
                                    (unsigned long long)hi),
                       -1;
            break;
        }
        v = v * 10 + d;
    }
    if (p == s || *p)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                            "'%.*s' is not a non-negative integer (digits only)", SHOW, s),
               -1;
    if (v > hi)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "'%.*s' is out of range (0 .. %llu)",
                            SHOW, s, (unsigned long long)hi),
               -1;
    *out = v;
    return 0;
}

int gs_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out, gs_error *err)
{
    const char *p = s ? s : "";
    int neg = *p == '-';
    p += neg;
    size_t len = 0;
    while (p[len] >= '0' && p[len] <= '9')
        len++;
    if (!len || p[len] || (neg && lo >= 0))
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "'%.*s' is not an integer%s", SHOW,
                            s ? s : "",
                            lo >= 0 ? " >= 0 (digits only)" : " (digits, optional leading -)"),
               -1;
    /* accumulate the magnitude; anything past 2^63 is out of range whatever the sign */
    uint64_t mag = 0;
    int over = 0;
    for (size_t i = 0; i < len && !over; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (mag > ((uint64_t)INT64_MAX + 1 - d) / 10)
            over = 1;
        else
            mag = mag * 10 + d;
    }
    int64_t v = 0;
    if (!over) {
        if (neg)
            v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        else if (mag > (uint64_t)INT64_MAX)
            over = 1;
        else
            v = (int64_t)mag;
    }
    if (over || v < lo || v > hi)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "'%.*s' is out of range (%lld .. %lld)",
                            SHOW, s, (long long)lo, (long long)hi),
               -1;
    *out = v;
    return 0;
}

/* Length of a decimal number at s: -?digits(.digits)?([eE][+-]?digits)?, 0 if none. */
static size_t decimal_len(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '-') i++;
    while (s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        size_t ed = 0;
        while (s[j] >= '0' && s[j] <= '9')
            j++, ed++;
        if (ed) i = j;
    }
    return i;
}

/* Parse the decimal at the start of s (length n) with strtod on a copy of exactly those bytes
 * (any length). NAN on overflow. */
static double decimal_value(const char *s, size_t n)
{
    char small[128];
    char *buf = n < sizeof small ? small : gs_malloc(n + 1);
    if (!buf) return NAN;
    memcpy(buf, s, n);
    buf[n] = '\0';
    double v = strtod(buf, NULL);
    if (buf != small) gs_free(buf);
    return isfinite(v) ? v : (double)NAN;
}

int gs_parse_real(const char *s, double lo, double hi, double *out, gs_error *err)
{
    size_t n = s ? decimal_len(s) : 0;
    if (!n || s[n])
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "'%.*s' is not a decimal number", SHOW,
                            s ? s : ""),
               -1;
    double v = decimal_value(s, n);
    if (!(v >= lo && v <= hi))
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "'%.*s' is out of range (%g .. %g)",
                            SHOW, s, lo, hi),
               -1;
    *out = v == 0 ? 0.0 : v; /* no -0 */
    return 0;
}

int gs_parse_size(const char *s, double *out, gs_error *err)
{
    static const struct {
        const char *name;
        double mul;
    } units[] = {{"", 1},
                 {"B", 1},
                 {"K", 1024.0},
                 {"KiB", 1024.0},
                 {"M", 1048576.0},
                 {"MiB", 1048576.0},
                 {"G", 1073741824.0},
                 {"GiB", 1073741824.0},
                 {"T", 1099511627776.0},
                 {"TiB", 1099511627776.0}};
    size_t n = s && s[0] != '-' ? decimal_len(s) : 0;
    for (size_t u = 0; n && u < GS_ARRAY_LEN(units); u++) {
        if (strcmp(s + n, units[u].name) != 0) continue;
        double v = decimal_value(s, n) * units[u].mul;
        if (!(v >= 0 && v <= 4611686018427387904.0))
            return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "'%.*s' is out of range (0 .. 4EiB)",
                                SHOW, s),
                   -1;
        *out = floor(v);
        return 0;
    }
    return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                        "'%.*s' is not a size (e.g. 4GiB, 512MiB, 65536; units B K KiB M MiB G "
                        "GiB T TiB)",
                        SHOW, s ? s : ""),
           -1;
}

int gs_parse_shape(const char *s, int64_t *dims, int max, int *n, gs_error *err)
{
    *n = 0;
    const char *p = s ? s : "";
    if (!*p) return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "empty shape"), -1;
    for (;;) {
        if (*n >= max)
            return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "shape '%.*s': more than %d dims",
                                SHOW, s, max),
                   -1;
        size_t len = 0;
        while (p[len] >= '0' && p[len] <= '9')
            len++;
        if (!len)
            return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                                "shape '%.*s': expected a positive integer at '%.10s' (use e.g. "
                                "128x256x512)",
                                SHOW, s, *p ? p : "(end)"),
                   -1;
        uint64_t v = 0;
        int big = 0;
        for (size_t i = 0; i < len; i++) {
            if (v > ((uint64_t)1 << 40)) big = 1;
            if (!big) v = v * 10 + (uint64_t)(p[i] - '0');
        }
        if (big || v == 0 || v > ((uint64_t)1 << 40))
            return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                                "shape '%.*s': each dim must be 1 .. 2^40 (%.*s)", SHOW, s,
                                (int)GS_MIN(len, (size_t)30), p),
                   -1;
        dims[(*n)++] = (int64_t)v;
        p += len;
        if (!*p) return 0;
        if (*p != 'x' && *p != 'X' && *p != ',')
            return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                                "shape '%.*s': unexpected '%c' (use e.g. 128x256x512)", SHOW, s,
                                *p),
                   -1;
        p++; /* a separator must be followed by a dim: "128x" is an error */
    }
}

int gs_parse_param(const char *s, const char *const *names, int n_names, int *idx, int64_t *value,
                   gs_error *err)
{
    const char *eq = s ? strchr(s, '=') : NULL;
    int found = -1;
    for (int q = 0; eq && q < n_names; q++)
        if (names[q] && strlen(names[q]) == (size_t)(eq - s) &&
            !strncmp(names[q], s, (size_t)(eq - s)))
            found = q;
    if (found < 0) {
        gs_sb sb;
        gs_sb_init(&sb);
        for (int q = 0; q < n_names; q++)
            gs_sb_printf(&sb, " %s", names[q] ? names[q] : "?");
        gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0,
                     "'%.*s': expected NAME=VALUE with NAME one of:%s", SHOW, s ? s : "",
                     n_names ? gs_sb_cstr(&sb) : " (this kernel has no params)");
        gs_sb_free(&sb);
        return -1;
    }
    gs_error e2;
    gs_error_clear(&e2);
    if (gs_parse_int(eq + 1, 0, (int64_t)1 << 62, value, &e2) != 0)
        return gs_error_set(err, GS_ERR_USAGE, NULL, 0, 0, "%s: %s", names[found], e2.message), -1;
    *idx = found;
    return 0;
}

int gs_compare_parse_threshold(const char *s, double *out)
{
    size_t n = s ? strlen(s) : 0;
    int pct = n > 0 && s[n - 1] == '%';
    char *num = gs_strdup(s ? s : "");
    if (!num) return -1;
    if (pct) num[n - 1] = '\0';
    gs_error err;
    gs_error_clear(&err);
    double v;
    int rc = gs_parse_real(num, 0.0, 1e12, &v, &err);
    gs_free(num);
    if (rc != 0) return -1;
    *out = pct ? v / 100.0 : v;
    return 0;
}
