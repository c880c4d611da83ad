/*
 * fuzz_gsk.c - libFuzzer target for the traced-program (.gsk) loader and its replay: arbitrary
 * bytes through gs_nki_prog_load_stream (statements, percent-decoding, tensor shapes), and for
 * programs that load, the replay of every builder call (operand views, tiles, pools, immediates)
 * into a gen2 program, as `nki replay` and `nki disasm` build it (no model run, no reference).
 * Built only with GS_FUZZ=ON (clang, the asan preset); CTest runs a short smoke (label fuzz).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/config.h"
#include "job.h"
#include "jobspec.h"
#include "nki_prog_internal.h"
#include "suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gs_config *gen2(void)
{
    static gs_config *cfg;
    if (!cfg) {
        gs_diags d;
        gs_diags_init(&d);
        cfg = gs_config_load(GS_SOURCE_DIR "/configs/gen2.yaml", &d);
        gs_diags_free(&d);
        if (!cfg) abort();
    }
    return cfg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    /* fmemopen reads the bytes as a file, NULs included (getline keeps them) */
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f) return 0;
    gs_error err;
    gs_error_clear(&err);
    gs_nki_prog *p = gs_nki_prog_load_stream(f, "fuzz.gsk", &err);
    fclose(f);
    char buf[GS_ERROR_MSG_MAX + GS_ERROR_FILE_MAX + 32];
    gs_error_format(&err, buf, sizeof buf);
    if (!p) return 0;
    const gs_kernel_def *k = gs_nki_prog_kernel(p);
    gs_suite_set_extra(k);
    gs_job_options o;
    gs_job_options_init(&o);
    o.kernel = k->name;
    o.shape = gs_nki_prog_shape(p);
    o.dtype = gs_nki_prog_dtype(p);
    gs_job_spec spec;
    gs_error_clear(&err);
    if (gs_job_spec_from_options(&o, gen2(), &spec, &err) == GS_OK) {
        gs_job *job = NULL;
        gs_error_clear(&err);
        (void)gs_job_build(&spec, &job, &err);
        gs_error_format(&err, buf, sizeof buf);
        gs_job_free(job);
    }
    gs_suite_set_extra(NULL);
    gs_nki_prog_free(p);
    return 0;
}
