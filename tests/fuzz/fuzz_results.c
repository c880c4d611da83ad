/*
 * fuzz_results.c - libFuzzer target for the results-file reader every consumer shares
 * (gs_json_parse_text + gs_results_validate / gs_baseline_validate), and for documents that
 * validate: sorting, re-emitting (which must parse and validate again), indexing and
 * comparing with itself (no regressions by definition). Built only with GS_FUZZ=ON (clang, the
 * asan preset); CTest runs a short smoke (label fuzz).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    gs_error err;
    gs_error_clear(&err);
    cJSON *doc = gs_json_parse_text(text, size, "fuzz.json", &err);
    free(text);
    if (!doc) return 0;
    int results = gs_results_validate(doc, "fuzz.json", &err) == GS_OK;
    int baseline = !results && gs_baseline_validate(doc, "fuzz.json", &err) == GS_OK;
    if (results || baseline) {
        if (results) {
            gs_results_sort_jobs(doc);
            /* what the library writes, it reads back as valid */
            gs_sb sb;
            gs_sb_init(&sb);
            gs_results_emit(&sb, doc);
            if (gs_sb_ok(&sb)) {
                gs_error e2;
                gs_error_clear(&e2);
                cJSON *again = gs_json_parse_text(gs_sb_cstr(&sb), sb.len, "emit.json", &e2);
                if (!again || gs_results_validate(again, "emit.json", &e2) != GS_OK) abort();
                cJSON_Delete(again);
            }
            gs_sb_free(&sb);
        }
        gs_compare_summary s;
        gs_compare_docs(doc, doc, 0.02, NULL, &s);
        if (s.regressions != 0 || s.added != 0 || s.missing != 0) abort();
    }
    cJSON_Delete(doc);
    return 0;
}
