/*
 * cmd_whatif.c - `gensweep whatif`: parse the options, run the study (whatif.c), print its
 * sensitivity table or grids from the document, map the exit status.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "results.h"
#include "whatif.h"

void gs_help_whatif(void)
{
    printf("usage: gensweep whatif --config FILE --param KEY --values V1,V2,...\n"
           "                       [--param KEY2 --values W1,W2,...]\n"
           "                       [--kernels LIST] [--suite check|perf] [-j N] [--out DIR]\n"
           "                       [--set KEY=VALUE]... [--timeout S] [--quiet]\n\n"
           "Run the suite once per value of one config parameter (relative 0.5x / x2 or\n"
           "absolute values with units, as --set takes them) and record every job's simulated\n"
           "time per value, its sensitivity (d ln time / d ln value between the smallest and\n"
           "largest value) and the sensitivity of each step between neighbouring values, with\n"
           "inversions (more of a resource made the job slower, or more of a cost faster, by\n"
           "over 1%%) and non-monotonic curves flagged, in DIR/whatif.json (format:\n"
           "results/RESULTS.md); each value's full results go to DIR/<value>/. With a second\n"
           "--param/--values pair the suite runs on every combination (a 2-D grid, results in\n"
           "DIR/<value>_<value2>/) and the report draws it as a heatmap.\n"
           "Default DIR: " GS_WHATIF_DEFAULT_OUT ".\n");
}

static void print_text(void *ctx, const char *text)
{
    (void)ctx;
    fputs(text, stdout);
}

static const char *label(const cJSON *doc, const char *values, int i)
{
    return gs_json_str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, values), i),
                       "label");
}

static double num_at(const cJSON *a, int i)
{
    return cJSON_IsNumber(cJSON_GetArrayItem(a, i)) ? cJSON_GetArrayItem(a, i)->valuedouble
                                                    : (double)NAN;
}

/* One parameter: a row per job with its times, sensitivity, steps and flags. */
static void print_table(const cJSON *doc)
{
    int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "values")), flagged = 0;
    printf("\n%-52s %s:\n%-52s", "sensitivity of simulated time (us) to", gs_json_str(doc, "param"),
           "job");
    for (int v = 0; v < n; v++)
        printf(" %10s", label(doc, "values", v));
    printf(" %8s  %s\n", "d ln t/d ln p", "per step");
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "time_ns");
        const cJSON *steps = cJSON_GetObjectItemCaseSensitive(j, "steps");
        int inv = (int)gs_json_num(j, "inversions");
        int nonmono = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "non_monotonic"));
        printf("%-52.52s", gs_json_str(j, "id"));
        for (int v = 0; v < n; v++)
            printf(" %10.3f", num_at(t, v) / 1e3);
        printf(" %8.3f ", gs_json_num(j, "sensitivity"));
        for (int s = 0; s < cJSON_GetArraySize(steps); s++)
            printf(" %.2f", num_at(steps, s));
        if (inv) printf("  INVERSION");
        if (nonmono) printf("  NON-MONOTONIC");
        printf("\n");
        flagged += inv || nonmono;
    }
    printf("%d jobs with an inversion or a non-monotonic curve\n", flagged);
}

/* Two parameters: a grid of times per job. */
static void print_grids(const cJSON *doc)
{
    int n1 = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "values"));
    int n2 = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "values2"));
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        printf("\n%s: time (us), rows %s, columns %s\n%12s", gs_json_str(j, "id"),
               gs_json_str(doc, "param"), gs_json_str(doc, "param2"), "");
        for (int b = 0; b < n2; b++)
            printf(" %10s", label(doc, "values2", b));
        printf("\n");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "time_grid");
        for (int a = 0; a < n1; a++) {
            printf("%12s", label(doc, "values", a));
            for (int b = 0; b < n2; b++)
                printf(" %10.3f", num_at(cJSON_GetArrayItem(g, a), b) / 1e3);
            printf("\n");
        }
    }
}

int gs_cmd_whatif(int argc, char **argv)
{
    gs_whatif_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    o.sweep.no_report = 1;
    const char *cfgs[GS_SWEEP_MAX_LIST], *sets[GS_SWEEP_MAX_LIST];
    size_t n_cfg = 0, n_sets = 0;
    int nvals = 0;
    for (int i = 1; i < argc; i++) {
        int r = gs_sweep_parse_common(argc, argv, &i, &o.sweep, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r > 0) continue;
        if (strcmp(argv[i], "--param") != 0 && strcmp(argv[i], "--values") != 0) {
            fprintf(stderr, "gensweep whatif: unknown option '%s'\n", argv[i]);
            return GS_EXIT_USAGE;
        }
        int is_param = !strcmp(argv[i], "--param");
        if (i + 1 >= argc) {
            fprintf(stderr, "gensweep whatif: option %s needs a value\n", argv[i]);
            return GS_EXIT_USAGE;
        }
        if ((is_param ? o.n_params : nvals) == 2) {
            fprintf(stderr, "gensweep whatif: at most two --param/--values pairs\n");
            return GS_EXIT_USAGE;
        }
        *(is_param ? &o.param[o.n_params++] : &o.values[nvals++]) = argv[++i];
    }
    if (n_cfg != 1 || o.n_params != nvals) o.n_params = 0; /* the run says what is missing */
    o.config = n_cfg ? cfgs[0] : NULL;
    char config_buf[GS_CLI_PATH_MAX];
    if (n_cfg == 1 && !(o.config = gs_cli_data_file("whatif", "--config", "configs", "config",
                                                    cfgs[0], config_buf)))
        return GS_EXIT_USAGE;
    o.sets = sets;
    o.n_sets = n_sets;
    o.out_dir = o.sweep.out_dir;
    o.progress = o.sweep.quiet ? NULL : print_text;
    if (!o.sweep.quiet) o.sweep.progress = gs_sweep_cli_progress; /* each cell's jobs */
    gs_whatif_result r;
    gs_diags d;
    gs_diags_init(&d);
    gs_status st = gs_whatif_run(&o, &r, &d);
    if (r.doc && !o.sweep.quiet) (o.n_params == 1 ? print_table : print_grids)(r.doc);
    if (r.written && !o.sweep.quiet) printf("whatif: %s\n", r.path);
    if (r.report_written && !o.sweep.quiet) printf("report: %s\n", r.report);
    fflush(stdout);
    gs_cli_print_diags("whatif", &d);
    gs_diags_free(&d);
    gs_whatif_result_free(&r);
    if (st == GS_ERR_USAGE) return GS_EXIT_USAGE;
    return st != GS_OK || r.failed_cells ? GS_EXIT_FAIL : GS_EXIT_OK;
}
