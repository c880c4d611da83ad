/* units.c - quantities with units in config values (see gs/units.h). */
#include "gs/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit_def {
    gs_unit kind;
    const char *name;
    double scale; /* base units per one of this unit */
} unit_def;

/* Order matters twice: gs_unit_list prints it, and gs_units_format prefers earlier units when
 * two spellings are equally short. */
static const unit_def units[] = {
    {GS_UNIT_BYTES, "B", 1.0},
    {GS_UNIT_BYTES, "KiB", 1024.0},
    {GS_UNIT_BYTES, "MiB", 1024.0 * 1024.0},
    {GS_UNIT_BYTES, "GiB", 1024.0 * 1024.0 * 1024.0},
    {GS_UNIT_BYTES, "TiB", 1024.0 * 1024.0 * 1024.0 * 1024.0},
    {GS_UNIT_BYTES, "KB", 1e3},
    {GS_UNIT_BYTES, "MB", 1e6},
    {GS_UNIT_BYTES, "GB", 1e9},
    {GS_UNIT_BYTES, "TB", 1e12},
    {GS_UNIT_BANDWIDTH, "GB/s", 1.0},
    {GS_UNIT_BANDWIDTH, "B/ns", 1.0},
    {GS_UNIT_BANDWIDTH, "GiB/s", 1.073741824},
    {GS_UNIT_BANDWIDTH, "TB/s", 1e3},
    {GS_UNIT_BANDWIDTH, "MB/s", 1e-3},
    {GS_UNIT_BANDWIDTH, "MiB/s", 1.048576e-3},
    {GS_UNIT_FREQ, "GHz", 1e9},
    {GS_UNIT_FREQ, "MHz", 1e6},
    {GS_UNIT_FREQ, "kHz", 1e3},
    {GS_UNIT_FREQ, "Hz", 1.0},
    {GS_UNIT_TIME, "ns", 1.0},
    {GS_UNIT_TIME, "us", 1e3},
    {GS_UNIT_TIME, "ms", 1e6},
    {GS_UNIT_TIME, "s", 1e9},
};

static int kind_has_units(gs_unit k)
{
    return k == GS_UNIT_BYTES || k == GS_UNIT_BANDWIDTH || k == GS_UNIT_FREQ || k == GS_UNIT_TIME;
}

/* Per kind: its human name, the base unit it is stored in (an absolute --set value with it
 * means base units), its name in records and documents, and the unit names it accepts. */
static const struct {
    const char *kind, *base, *record, *list;
} kinds[] = {
    [GS_UNIT_COUNT] = {"count", "", "count", ""},
    [GS_UNIT_REAL] = {"number", "", "", ""},
    [GS_UNIT_BYTES] = {"size", "B", "B", "B, KiB, MiB, GiB, TiB, KB, MB, GB, TB"},
    [GS_UNIT_BANDWIDTH] = {"bandwidth", "B/ns", "B/ns", "GB/s, B/ns, GiB/s, TB/s, MB/s, MiB/s"},
    [GS_UNIT_FREQ] = {"frequency", "Hz", "Hz", "GHz, MHz, kHz, Hz"},
    [GS_UNIT_TIME] = {"time", "ns", "ns", "ns, us, ms, s"},
    [GS_UNIT_CYCLES] = {"cycle count", "", "cycles", ""},
};

static int kind_ok(gs_unit k)
{
    return (int)k >= 0 && (size_t)k < sizeof kinds / sizeof kinds[0];
}

const char *gs_unit_kind_name(gs_unit kind)
{
    return kind_ok(kind) ? kinds[kind].kind : "?";
}

const char *gs_unit_base_name(gs_unit kind)
{
    return kind_ok(kind) ? kinds[kind].base : "";
}

const char *gs_unit_record_name(gs_unit kind)
{
    return kind_ok(kind) ? kinds[kind].record : "";
}

const char *gs_unit_list(gs_unit kind)
{
    return kind_ok(kind) ? kinds[kind].list : "";
}

static void set_msg(char *msg, size_t size, const char *fmt, ...) GS_PRINTF(3, 4);
static void set_msg(char *msg, size_t size, const char *fmt, ...)
{
    if (!msg || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of a decimal number at s per the grammar in gs/units.h; 0 if there is none. */
static size_t number_len(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-') i++;
    while (is_digit(s[i]))
        i++, digits++;
    if (s[i] == '.') {
        i++;
        while (is_digit(s[i]))
            i++, digits++;
    }
    if (digits == 0) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (is_digit(s[j])) {
            while (is_digit(s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

gs_status gs_units_parse(const char *text, gs_unit kind, double *out, char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    if (!text) text = "";
    while (is_blank(*text))
        text++;
    size_t end = strlen(text);
    while (end > 0 && is_blank(text[end - 1]))
        end--;
    if (end == 0) {
        set_msg(msg, msg_size, "missing value");
        return GS_ERR_PARSE;
    }
    size_t nlen = number_len(text);
    if (nlen == 0) {
        set_msg(msg, msg_size, "'%.*s' is not a number", (int)GS_MIN(end, (size_t)80), text);
        return GS_ERR_PARSE;
    }
    /* any length: a valid decimal with many digits is still a number */
    char small[72];
    char *num = nlen < sizeof small ? small : gs_malloc(nlen + 1);
    if (!num) {
        set_msg(msg, msg_size, "out of memory");
        return GS_ERR_NOMEM;
    }
    memcpy(num, text, nlen);
    num[nlen] = '\0';
    errno = 0;
    double v = strtod(num, NULL);
    int range = errno == ERANGE;
    if (num != small) gs_free(num);
    if (range && fabs(v) > 1.0) {
        set_msg(msg, msg_size, "number '%.*s%s' is out of range", (int)GS_MIN(nlen, (size_t)40),
                text, nlen > 40 ? "..." : "");
        return GS_ERR_INVALID;
    }
    if (range) v = 0.0; /* underflow to a denormal/zero: the range check decides */

    size_t u = nlen;
    while (u < end && is_blank(text[u]))
        u++;
    size_t ulen = end - u;
    if (ulen == 0) {
        if (kind_has_units(kind)) {
            set_msg(msg, msg_size, "missing unit: a %s needs one of %s", gs_unit_kind_name(kind),
                    gs_unit_list(kind));
            return GS_ERR_PARSE;
        }
        *out = v;
        return GS_OK;
    }
    const unit_def *found = NULL;
    for (size_t i = 0; i < GS_ARRAY_LEN(units); i++)
        if (strlen(units[i].name) == ulen && memcmp(units[i].name, text + u, ulen) == 0) {
            found = &units[i];
            break;
        }
    int shown = (int)GS_MIN(ulen, (size_t)40);
    if (!kind_has_units(kind)) {
        if (found)
            set_msg(msg, msg_size, "'%.*s' is a %s unit; a %s takes a plain number", shown,
                    text + u, gs_unit_kind_name(found->kind), gs_unit_kind_name(kind));
        else
            set_msg(msg, msg_size, "unexpected '%.*s' after the number; a %s takes a plain number",
                    shown, text + u, gs_unit_kind_name(kind));
        return GS_ERR_PARSE;
    }
    if (!found) {
        set_msg(msg, msg_size, "unknown unit '%.*s'; a %s takes one of %s", shown, text + u,
                gs_unit_kind_name(kind), gs_unit_list(kind));
        return GS_ERR_PARSE;
    }
    if (found->kind != kind) {
        set_msg(msg, msg_size, "'%s' is a %s unit; expected a %s (%s)", found->name,
                gs_unit_kind_name(found->kind), gs_unit_kind_name(kind), gs_unit_list(kind));
        return GS_ERR_PARSE;
    }
    double r = v * found->scale;
    if (!isfinite(r)) {
        set_msg(msg, msg_size, "'%.*s' is out of range", (int)GS_MIN(end, (size_t)80), text);
        return GS_ERR_INVALID;
    }
    *out = r;
    return GS_OK;
}

void gs_units_format(double v, gs_unit kind, char *buf, size_t size)
{
    if (!buf || size == 0) return;
    if (!kind_has_units(kind) || !isfinite(v)) {
        snprintf(buf, size, "%.12g", v);
        double back = strtod(buf, NULL);
        if (back != v) snprintf(buf, size, "%.17g", v);
        return;
    }
    char best[64] = "";
    size_t best_len = (size_t)-1;
    for (size_t i = 0; i < GS_ARRAY_LEN(units); i++) {
        if (units[i].kind != kind) continue;
        char cand[64];
        snprintf(cand, sizeof cand, "%.12g%s", v / units[i].scale, units[i].name);
        double back;
        /* Only spellings that read back to the same value qualify. */
        if (gs_units_parse(cand, kind, &back, NULL, 0) != GS_OK || back != v) continue;
        size_t len = strlen(cand);
        if (len < best_len) {
            best_len = len;
            memcpy(best, cand, len + 1);
        }
    }
    if (best_len == (size_t)-1) snprintf(best, sizeof best, "%.17g%s", v, gs_unit_base_name(kind));
    snprintf(buf, size, "%s", best);
}
