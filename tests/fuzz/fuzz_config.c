/*
 * fuzz_config.c - libFuzzer target for the config loader: arbitrary bytes through
 * gs_config_load_string (YAML parsing, extends resolution against configs/, validation),
 * and for inputs that load, show-config and --set. Also the unit parser on the raw text.
 * Built only with GS_FUZZ=ON (clang, the asan preset); CTest runs a short smoke (label fuzz).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gs/config.h"
#include "gs/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gs_diags d;
    gs_diags_init(&d);
    gs_config *c =
        gs_config_load_string((const char *)data, size, "fuzz.yaml", GS_SOURCE_DIR "/configs", &d);
    if (c) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink) {
            gs_config_dump_yaml(c, sink);
            fclose(sink);
        }
        gs_config_set(c, "core.sbuf=x2", &d);
        gs_config_set(c, "core.dma.transpose=true", &d);
        gs_config_set(c, "engines.gpsimd.clock=1GHz", &d);
        (void)gs_config_peak_flops(c, GS_BF16);
        (void)gs_config_psum_bank_bytes(c);
        gs_config_free(c);
    }
    char buf[GS_ERROR_MSG_MAX + GS_ERROR_FILE_MAX + 32];
    for (size_t i = 0; i < d.count; i++)
        gs_error_format(&d.items[i], buf, sizeof buf);
    gs_diags_free(&d);

    /* the unit parser on a NUL-terminated prefix of the input */
    char text[256];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    for (int u = GS_UNIT_COUNT; u <= GS_UNIT_CYCLES; u++) {
        double v;
        char msg[128];
        if (gs_units_parse(text, (gs_unit)u, &v, msg, sizeof msg) == GS_OK)
            gs_units_format(v, (gs_unit)u, msg, sizeof msg);
    }
    return 0;
}
