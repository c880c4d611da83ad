/*
 * cmd_bench.c - `gensweep bench`: parse the options, measure (bench.c), print the report as it
 * is measured, write the JSON, map the exit status: 0 whenever the measurements could be taken
 * (1 with --check-targets when a target is missed), 1 when a measurement failed, 2 usage.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli_util.h"
#include "commands.h"
#include "gs/strbuf.h"
#include "parse.h"
#include "results.h"

void gs_help_bench(void)
{
    printf(
        "usage: gensweep bench [--quick] [--json FILE] [--configs DIR] [--no-sweep]\n"
        "                      [--check-targets]\n"
        "                      [--scaling [--scaling-kernels K,...] [--point-cpu-limit S]]\n\n"
        "Measure the simulator itself and compare with its targets:\n"
        "  1. timing-only simulated instructions per wall second (large matmul and an\n"
        "     instruction-dense elementwise_add) on every generation of DIR\n"
        "  2. functional matmul data path GFLOP/s (model run and C executor) next to plain\n"
        "     single-threaded OpenBLAS sgemm on the same M, N, K, in the same process\n"
        "  3. `gensweep sweep --suite check` wall time at -j1 and -j2 and the speedup\n"
        "  4. peak RSS: functional job at check shapes, timing-only job at the largest perf\n"
        "     shape, the sweep parent process\n"
        "  5. trace cost: run time and RSS with and without --trace\n"
        "  6. end to end against the old paths in the same run (GS_BASELINE_PATHS=1: exec'd\n"
        "     jobs, scalar references, full-scan dependency tracking): the largest\n"
        "     timing-only job and a functional matmul as sweep jobs, the check sweep's CPU\n"
        "     time (section 3), and the SystemC floor (two SC_THREADs, timed ping-pong)\n"
        "  8. with --scaling, instead of 1-6: CPU and peak RSS per simulated instruction of\n"
        "     every suite kernel at about 10k, 100k and 1M instructions (timing-only, the\n"
        "     last generation; one dimension of the first perf shape scaled; --quick: 100x\n"
        "     fewer), and the spread of the CPU figure (target: within 1.5x)\n"
        "The generations are every DIR/NAME.yaml in name order; the first runs the largest\n"
        "timing-only job of section 6, the second the functional, memory and trace runs.\n"
        "Every model run is its own child process. Use a Release build for figures.\n"
        "  --quick          smaller shapes (seconds, for tests and smoke runs)\n"
        "  --json FILE      also write the figures as JSON ('-' for stdout)\n"
        "  --configs DIR    the generation configs (default: configs, else the installed ones)\n"
        "  --no-sweep       skip the sweep timings (section 3 and its old-path run)\n"
        "  --check-targets  exit 1 when a target is missed\n"
        "  --scaling        run section 8 only (a few minutes)\n"
        "  --scaling-kernels K,...  section 8 on these suite kernels only\n"
        "  --point-cpu-limit S  section 8: CPU seconds a measured point may take (whole\n"
        "                   seconds, 1..86400; default 120); a size over it is reported as\n"
        "                   not reached (cpu-limit) and the kernel's larger sizes are not tried\n"
        "exit status: 0 measured, 1 a measurement failed (or a target was missed with\n"
        "--check-targets), 2 usage error\n");
}

static void print_text(void *ctx, const char *text)
{
    (void)ctx;
    fputs(text, stdout);
}

/* The figures as JSON to path ('-': stdout). 0, or -1 after saying why. */
static int write_json(const cJSON *doc, const char *path)
{
    gs_sb sb;
    gs_sb_init(&sb);
    gs_json_emit(&sb, doc);
    gs_sb_putc(&sb, '\n');
    gs_error err;
    gs_error_clear(&err);
    int rc = 0;
    if (!gs_sb_ok(&sb)) {
        fprintf(stderr, "gensweep bench: out of memory building the JSON\n");
        rc = -1;
    } else if (!strcmp(path, "-")) {
        fputs(gs_sb_cstr(&sb), stdout);
    } else if (gs_sb_write_file(&sb, path, &err) != GS_OK) {
        char buf[1024];
        gs_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "gensweep bench: %s\n", buf);
        rc = -1;
    }
    gs_sb_free(&sb);
    return rc;
}

int gs_cmd_bench(int argc, char **argv)
{
    gs_bench_opts o;
    memset(&o, 0, sizeof o);
    const char *json = NULL;
    int check_targets = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) {
            o.quick = 1;
        } else if (!strcmp(a, "--no-sweep")) {
            o.no_sweep = 1;
        } else if (!strcmp(a, "--scaling")) {
            o.scaling = 1;
        } else if (!strcmp(a, "--check-targets")) {
            check_targets = 1;
        } else if (!strcmp(a, "--point-cpu-limit")) {
            gs_error err;
            gs_error_clear(&err);
            int64_t v = 0;
            if (i + 1 >= argc) {
                fprintf(stderr, "gensweep bench: option %s needs a value\n", a);
                return GS_EXIT_USAGE;
            }
            if (gs_parse_int(argv[++i], 1, 86400, &v, &err) != 0) {
                char buf[512];
                gs_error_format(&err, buf, sizeof buf);
                fprintf(stderr, "gensweep bench: --point-cpu-limit: %s\n", buf);
                return GS_EXIT_USAGE;
            }
            o.point_cpu_limit = (double)v;
        } else if (!strcmp(a, "--json") || !strcmp(a, "--configs") ||
                   !strcmp(a, "--scaling-kernels")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gensweep bench: option %s needs a value\n", a);
                return GS_EXIT_USAGE;
            }
            const char **dst = !strcmp(a, "--json")      ? &json
                               : !strcmp(a, "--configs") ? &o.configs
                                                         : &o.scaling_kernels;
            *dst = argv[++i];
        } else {
            fprintf(stderr, "gensweep bench: unknown option '%s' (see gensweep bench --help)\n", a);
            return GS_EXIT_USAGE;
        }
    }
    o.progress = print_text;
    gs_bench_result r;
    gs_diags d;
    gs_diags_init(&d);
    gs_status st = gs_bench_run(&o, &r, &d);
    fflush(stdout);
    gs_cli_print_diags("bench", &d);
    gs_diags_free(&d);
    int rc = st == GS_ERR_USAGE                                         ? GS_EXIT_USAGE
             : st != GS_OK || r.failures || (check_targets && r.missed) ? GS_EXIT_FAIL
                                                                        : GS_EXIT_OK;
    if (r.doc && json && write_json(r.doc, json) != 0) rc = GS_EXIT_FAIL;
    gs_bench_result_free(&r);
    return rc;
}
