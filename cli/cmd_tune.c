/*
 * cmd_tune.c - `gensweep tune`: parse the options, run the search (tune.c), print the ranking,
 * map the exit status.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "tune.h"

void gs_help_tune(void)
{
    printf("usage: gensweep tune --config FILE --kernel NAME [--shape AxB..] [--variant V]\n"
           "                     [--dtype T] [--top N] [--write [FILE]] [-j N] [--timeout S]\n\n"
           "Search the kernel's tunable params on one generation with timing-only jobs (one\n"
           "process each). Without --variant every variant runs once with its default params\n"
           "and the fastest is tuned. The default and each param alone run first (engine\n"
           "choices 1..3, buffer counts 1..4, tile sizes as powers of two up to the engine\n"
           "limits); a param that never changes the program is not used by the variant and is\n"
           "left out. Then the product of the used params (up to %d combinations) or the best\n"
           "of each combined. Prints the top N (one row per program) with the time against\n"
           "the default and the roofline ratio.\n"
           "--write stores the best params in <config dir>/tuning/<generation>.json (or FILE),\n"
           "which sweeps then use as the kernel's default params (sweep --no-tuning ignores it).\n"
           "The shape defaults to the kernel's first perf shape.\n",
           GS_TUNE_FULL_PRODUCT_MAX);
}

static void print_text(void *ctx, const char *text)
{
    (void)ctx;
    fputs(text, stdout);
}

/* The option's value (argv[*i + 1]), or NULL after saying it is missing. */
static const char *value(int argc, char **argv, int *i)
{
    if (*i + 1 < argc) return argv[++*i];
    fprintf(stderr, "gensweep tune: option %s needs a value\n", argv[*i]);
    return NULL;
}

static void print_ranking(const gs_tune_result *r, int top)
{
    const gs_kernel_def *k = r->kernel;
    const double def_t = r->default_ns;
    char pb[256];
    if (r->merged)
        printf("(%d param sets gave exactly the program of a better-ranked one: listed once)\n",
               r->merged);
    if (isnan(def_t))
        printf("the kernel default does not run here: %s%s%s\n", r->default_status,
               r->default_reason[0] ? ": " : "", r->default_reason);
    printf("%-4s %-40s %14s %10s %10s\n", "rank", "params (0 = kernel default)", "time us",
           "vs default", "x roofline");
    for (int i = 0; i < r->n_rows && i < top; i++) {
        const gs_tune_row *row = &r->rows[i];
        gs_tune_format_params(r, row->p, pb, sizeof pb);
        if (isnan(row->t)) {
            printf("%-4d %-40s %14s %10s %10s %s\n", i + 1, pb, "-", "-", "-", row->status);
            continue;
        }
        printf("%-4d %-40s %14.3f ", i + 1, pb, row->t / 1e3);
        if (isnan(def_t))
            printf("%10s", "-");
        else
            printf("%9.3fx", def_t / row->t);
        printf(" %9.3fx\n", row->roofline_ratio);
    }
    if (!r->ok) {
        fprintf(stderr, "gensweep tune: no candidate passed\n");
        return;
    }
    const gs_tune_row *b = &r->rows[0];
    gs_tune_format_params(r, b->p, pb, sizeof pb);
    if (isnan(def_t))
        printf("best: %s  %.3f us (%.3gx the roofline bound) on %s; the default does not run "
               "here (%s), so there is no gain over it\n",
               pb, b->t / 1e3, b->roofline_ratio, r->generation, r->default_status);
    else
        printf("best: %s  %.3f us vs default %.3f us: %.3fx (%.1f%% less time, %.3gx the "
               "roofline bound) on %s\n",
               pb, b->t / 1e3, def_t / 1e3, def_t / b->t, 100.0 * (1.0 - b->t / def_t),
               b->roofline_ratio, r->generation);
    if (r->written[0])
        printf("wrote %s (sweeps of %s now use these params for %s)\n", r->written, r->generation,
               k->name);
}

int gs_cmd_tune(int argc, char **argv)
{
    gs_tune_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    int top = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const char **dst = !strcmp(a, "--config") || !strcmp(a, "-c")   ? &o.config
                           : !strcmp(a, "--kernel") || !strcmp(a, "-k") ? &o.kernel
                           : !strcmp(a, "--shape") || !strcmp(a, "-s")  ? &o.shape
                           : !strcmp(a, "--variant")                    ? &o.variant
                           : !strcmp(a, "--dtype")                      ? &o.dtype
                                                                        : NULL;
        int64_t n = 0;
        if (dst) {
            if (!(*dst = value(argc, argv, &i))) return GS_EXIT_USAGE;
        } else if (!strcmp(a, "--write")) {
            o.write = (i + 1 < argc && argv[i + 1][0] != '-') ? argv[++i] : "";
        } else if (!strcmp(a, "--top") || !strcmp(a, "-j") || !strcmp(a, "--jobs") ||
                   (!strncmp(a, "-j", 2) && a[2])) {
            /* --top N, -j N, --jobs N, or -jN as sweep takes it */
            int is_top = !strcmp(a, "--top");
            if (a[1] == 'j' && a[2]) {
                v = a + 2;
            } else if (!(v = value(argc, argv, &i))) {
                return GS_EXIT_USAGE;
            }
            if (gs_parse_int(v, 1, is_top ? 1000000 : 100000, &n, NULL) != 0) {
                fprintf(stderr, "gensweep tune: %s needs a positive integer\n",
                        is_top ? "--top" : "-j");
                return GS_EXIT_USAGE;
            }
            *(is_top ? &top : &o.sweep.jobs) = (int)n;
        } else if (!strcmp(a, "--timeout")) {
            if (!(v = value(argc, argv, &i))) return GS_EXIT_USAGE;
            if (gs_parse_real(v, 0.0, 1e9, &o.sweep.timeout_s, NULL) != 0 ||
                !(o.sweep.timeout_s > 0)) {
                fprintf(stderr, "gensweep tune: --timeout needs a positive number of seconds\n");
                return GS_EXIT_USAGE;
            }
        } else {
            fprintf(stderr, "gensweep tune: unknown option '%s' (see gensweep tune --help)\n", a);
            return GS_EXIT_USAGE;
        }
    }
    char config_buf[GS_CLI_PATH_MAX];
    if (o.config && !(o.config = gs_cli_data_file("tune", "--config", "configs", "config", o.config,
                                                  config_buf)))
        return GS_EXIT_USAGE;
    o.progress = print_text;
    gs_tune_result r;
    gs_diags d;
    gs_diags_init(&d);
    gs_status st = gs_tune_run(&o, &r, &d);
    if (r.n_rows > 0) print_ranking(&r, top);
    fflush(stdout);
    gs_cli_print_diags("tune", &d);
    int rc = st == GS_ERR_USAGE                      ? GS_EXIT_USAGE
             : st != GS_OK || !r.ok || r.interrupted ? GS_EXIT_FAIL
                                                     : GS_EXIT_OK;
    gs_diags_free(&d);
    gs_tune_result_free(&r);
    return rc;
}
