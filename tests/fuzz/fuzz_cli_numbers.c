/*
 * fuzz_cli_numbers.c - libFuzzer target for the strict command-line parsers (cli_util.h):
 * integers, seeds, reals, sizes, shapes, kernel params and compare thresholds. Besides memory
 * safety it checks the contract: an accepted value is in range, and an accepted integer
 * printed back in decimal is the same text (no silent saturation or junk). Built only with
 * GS_FUZZ=ON (clang, the asan preset); CTest runs a short smoke (label fuzz).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    gs_error err;
    int64_t i;
    if (gs_parse_int(s, -1000, INT64_MAX, &i, &err) == 0) {
        char back[32];
        snprintf(back, sizeof back, "%" PRId64, i);
        /* "-0" and leading zeros are the only other spellings of an accepted integer */
        if (i < -1000 || (strcmp(back, s) != 0 && strspn(s, "-0") == 0)) abort();
    }
    uint64_t u;
    if (gs_parse_uint(s, UINT64_MAX, &u, &err) == 0 && strspn(s, "0123456789") != strlen(s))
        abort();
    double r;
    if (gs_parse_real(s, -1e6, 1e6, &r, &err) == 0 && !(r >= -1e6 && r <= 1e6)) abort();
    if (gs_parse_size(s, &r, &err) == 0 && !(r >= 0 && r <= 4611686018427387904.0)) abort();
    int64_t dims[8];
    int n = 0;
    if (gs_parse_shape(s, dims, 8, &n, &err) == 0) {
        if (n < 1 || n > 8) abort();
        for (int k = 0; k < n; k++)
            if (dims[k] < 1 || dims[k] > ((int64_t)1 << 40)) abort();
    }
    static const char *const names[] = {"tn", "bufs", "mb", "nb"};
    int idx;
    int64_t v;
    if (gs_parse_param(s, names, 4, &idx, &v, &err) == 0 &&
        (idx < 0 || idx >= 4 || v < 0 || v > ((int64_t)1 << 62)))
        abort();
    if (gs_compare_parse_threshold(s, &r) == 0 && !(r >= 0 && isfinite(r))) abort();
    free(s);
    return 0;
}
