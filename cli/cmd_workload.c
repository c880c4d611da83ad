/*
 * cmd_workload.c - `gensweep workload run`: load a workload file (harness/workload), run its
 * steps on one generation, print the per-step table, the layer total and, for decode, the
 * tokens per second of the layer; write the JSON; map the exit status.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "gs/jsonw.h"
#include "gs/strbuf.h"
#include "workload.h"

void gs_help_workload(void)
{
    printf("usage: gensweep workload run FILE --config CFG [--json FILE|-] [--set KEY=VALUE]...\n"
           "                            [--dim NAME=EXPR]... [-j N] [--timeout S] [--out DIR]\n\n"
           "Run a model layer (workloads/*.yaml: suite-kernel invocations whose shapes are\n"
           "integer expressions of the model's dims) on one generation, timing only. Each\n"
           "step runs every variant of its kernel (SPMD variants over all cores included) at\n"
           "the kernel's default params; the fastest that passed is the step's time (x its\n"
           "count). Prints per step: kernel, variant, shape, time, share of the layer,\n"
           "bound_ns and bound_ratio, bottleneck; then the layer total and, for a decode\n"
           "workload, tokens/s of this one layer (batch / layer time). A step no variant can\n"
           "run (unsupported, does-not-fit) is listed with its status and named in the\n"
           "total's note. --set changes the config (as in run); --dim replaces a dim of the\n"
           "file. --json writes the rows and the total (time_ns) as JSON ('-': stdout).\n"
           "FILE and --config are files or names: llama3-8b-decode-4k is\n"
           "./workloads/llama3-8b-decode-4k.yaml, gen3 ./configs/gen3.yaml, else the ones\n"
           "installed with gensweep.\n"
           "The job records (results.json, results.csv, junit.xml) go to --out\n"
           "(default %s), with the .gensweep.lock that keeps a second run or sweep\n"
           "out of the directory while this one writes it.\n"
           "exit status: 0 every step ran, 1 a step could not run (or a job failed, or the\n"
           "records could not be written), 2 bad option, workload file or config, --out\n"
           "not a directory or in use.\n",
           GS_WL_DEFAULT_OUT);
}

static const char *value(int argc, char **argv, int *i)
{
    if (*i + 1 < argc) return argv[++*i];
    fprintf(stderr, "gensweep workload: option %s needs a value\n", argv[*i]);
    return NULL;
}

static void shape_str(const gs_wl_step *st, char *buf, size_t n)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < st->n_dims && w < n; i++)
        w += (size_t)snprintf(buf + w, n - w, "%s%" PRId64, i ? "x" : "", st->dims[i]);
}

/* Names and reasons come from the workload file and the results: printed escaped (gs_cli_term). */
static void print_table(const gs_workload *w, const gs_wl_result *r)
{
    gs_sb e1, e2, e3;
    gs_sb_init(&e1);
    gs_sb_init(&e2);
    gs_sb_init(&e3);
    printf("workload %s (%s) on ", gs_cli_term(&e1, w->name), w->phase);
    printf("%s, timing only\n", gs_cli_term(&e1, r->generation));
    printf("%-14s %-16s %-10s %-22s %6s %12s %6s %12s %7s %s\n", "step", "kernel", "variant",
           "shape", "count", "time us", "share", "bound us", "x bound", "bottleneck");
    char sh[160];
    for (int i = 0; i < w->n_steps; i++) {
        const gs_wl_step *st = &w->steps[i];
        const gs_wl_row *row = &r->rows[i];
        shape_str(st, sh, sizeof sh);
        if (row->variant < 0) {
            printf("%-14s %-16s %-10s %-22s %6" PRId64 " %12s %6s %12s %7s %s%s%s\n",
                   gs_cli_term(&e1, st->name), st->kernel->name, "-", sh, st->count, "-", "-", "-",
                   "-", gs_cli_term(&e2, row->status), row->reason[0] ? ": " : "",
                   gs_cli_term(&e3, row->reason));
            continue;
        }
        printf("%-14s %-16s %-10s %-22s %6" PRId64 " %12.3f %5.1f%% ", gs_cli_term(&e1, st->name),
               st->kernel->name, st->kernel->variants[row->variant], sh, st->count,
               row->time_ns / 1e3, 100.0 * row->time_ns / r->time_ns);
        if (isnan(row->bound_ns))
            printf("%12s %7s", "-", "-");
        else
            printf("%12.3f %6.2fx", row->bound_ns / 1e3, row->bound_ratio);
        printf(" %s\n", gs_cli_term(&e1, row->bottleneck));
    }
    printf("layer total: %.3f us", r->time_ns / 1e3);
    if (r->n_failed) {
        printf(" (incomplete: %d step%s could not run on %s:", r->n_failed,
               r->n_failed > 1 ? "s" : "", gs_cli_term(&e1, r->generation));
        for (int i = 0; i < w->n_steps; i++)
            if (r->rows[i].variant < 0)
                printf(" %s (%s)", gs_cli_term(&e1, w->steps[i].name),
                       gs_cli_term(&e2, r->rows[i].status));
        printf("; the total leaves them out)");
    }
    printf("\n");
    if (!strcmp(w->phase, "decode") && r->time_ns > 0 && !r->n_failed)
        printf("decode: %.1f tokens/s for this one layer (batch %" PRId64
               " / layer time; a model of L layers: divide by L)\n",
               (double)w->batch * 1e9 / r->time_ns, w->batch);
    gs_sb_free(&e1);
    gs_sb_free(&e2);
    gs_sb_free(&e3);
}

static int run(int argc, char **argv)
{
    gs_sweep_opts so;
    gs_sweep_opts_default(&so);
    const char *file = NULL, *config = NULL, *json = NULL, *sets[GS_SWEEP_MAX_LIST],
               *dims[GS_WL_MAX_DIMS];
    size_t n_sets = 0, n_dims = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int64_t n = 0;
        if (!strcmp(a, "--config") || !strcmp(a, "-c")) {
            if (!(config = value(argc, argv, &i))) return GS_EXIT_USAGE;
        } else if (!strcmp(a, "--json")) {
            if (!(json = value(argc, argv, &i))) return GS_EXIT_USAGE;
        } else if (!strcmp(a, "--out")) {
            if (!(so.out_dir = value(argc, argv, &i))) return GS_EXIT_USAGE;
        } else if (!strcmp(a, "--set") || !strcmp(a, "--dim")) {
            const int is_set = !strcmp(a, "--set");
            if (!(v = value(argc, argv, &i))) return GS_EXIT_USAGE;
            if (!strchr(v, '=') ||
                (is_set ? n_sets >= GS_SWEEP_MAX_LIST : n_dims >= GS_WL_MAX_DIMS)) {
                fprintf(stderr, "gensweep workload: %s needs NAME=VALUE (at most %d)\n", a,
                        is_set ? GS_SWEEP_MAX_LIST : GS_WL_MAX_DIMS);
                return GS_EXIT_USAGE;
            }
            if (is_set)
                sets[n_sets++] = v;
            else
                dims[n_dims++] = v;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || (!strncmp(a, "-j", 2) && a[2])) {
            /* -j N, --jobs N, or -jN as sweep takes it */
            if (a[1] == 'j' && a[2]) {
                v = a + 2;
            } else if (!(v = value(argc, argv, &i))) {
                return GS_EXIT_USAGE;
            }
            if (gs_parse_int(v, 1, 100000, &n, NULL) != 0) {
                fprintf(stderr, "gensweep workload: -j needs a positive integer\n");
                return GS_EXIT_USAGE;
            }
            so.jobs = (int)n;
        } else if (!strcmp(a, "--timeout")) {
            if (!(v = value(argc, argv, &i))) return GS_EXIT_USAGE;
            if (gs_parse_real(v, 0.0, 1e9, &so.timeout_s, NULL) != 0 || !(so.timeout_s > 0)) {
                fprintf(stderr,
                        "gensweep workload: --timeout needs a positive number of seconds\n");
                return GS_EXIT_USAGE;
            }
        } else if (a[0] == '-' || file) {
            fprintf(stderr,
                    "gensweep workload: unknown option '%s' (see gensweep workload --help)\n", a);
            return GS_EXIT_USAGE;
        } else {
            file = a;
        }
    }
    if (!file || !config) {
        fprintf(stderr, "gensweep workload run: a workload FILE and --config are required\n");
        return GS_EXIT_USAGE;
    }
    gs_error err;
    gs_error_clear(&err);
    if (json && strcmp(json, "-") != 0 && gs_sb_check_output(json, &err) != GS_OK) {
        fprintf(stderr, "gensweep workload: --json %s: %s\n", json, err.message);
        return GS_EXIT_USAGE;
    }
    char file_buf[GS_CLI_PATH_MAX], config_buf[GS_CLI_PATH_MAX];
    if (!(file = gs_cli_data_file("workload run", NULL, "workloads", "workload", file, file_buf)) ||
        !(config = gs_cli_data_file("workload run", "--config", "configs", "config", config,
                                    config_buf)))
        return GS_EXIT_USAGE;
    gs_diags d;
    gs_diags_init(&d);
    gs_workload *w = gs_workload_load(file, dims, n_dims, &d);
    if (!w) {
        gs_cli_print_diags("workload", &d);
        gs_diags_free(&d);
        return GS_EXIT_USAGE;
    }
    const char *cl[1] = {config};
    so.configs = cl;
    so.n_configs = 1;
    so.sets = sets;
    so.n_sets = n_sets;
    gs_wl_result r;
    gs_status st = gs_workload_run(w, &so, &r, &d);
    int rc = st == GS_ERR_USAGE ? GS_EXIT_USAGE : st != GS_OK ? GS_EXIT_FAIL : GS_EXIT_OK;
    if (st == GS_OK) {
        if (!json || strcmp(json, "-") != 0) print_table(w, &r);
        if (r.n_failed || r.interrupted || r.records_unwritten) rc = GS_EXIT_FAIL;
        if (json) {
            gs_sb sb;
            gs_sb_init(&sb);
            gs_workload_json(&sb, w, &r);
            if (!strcmp(json, "-")) {
                fputs(gs_sb_cstr(&sb), stdout);
            } else if (gs_sb_write_file(&sb, json, &err) != GS_OK) {
                fprintf(stderr, "gensweep workload: %s: %s\n", json, err.message);
                rc = GS_EXIT_FAIL;
            } else {
                printf("wrote %s\n", json);
            }
            gs_sb_free(&sb);
        }
    }
    fflush(stdout);
    gs_cli_print_diags("workload", &d);
    gs_diags_free(&d);
    gs_workload_free(w);
    return rc;
}

int gs_cmd_workload(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "run")) return run(argc, argv);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        gs_help_workload();
        return GS_EXIT_OK;
    }
    fprintf(stderr, "gensweep workload: expected 'run' (see gensweep workload --help)\n");
    return GS_EXIT_USAGE;
}
