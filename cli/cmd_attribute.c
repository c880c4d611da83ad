/*
 * cmd_attribute.c - `gensweep attribute`: the options, the changes and each run as they come,
 * the speedup table and the summary, over the attribution library (attribute.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "cli_util.h"
#include "commands.h"
#include "record.h"
#include "results.h"
#include "sweep.h"

void gs_help_attribute(void)
{
    printf("usage: gensweep attribute --from A.yaml --to B.yaml [--keys] [--pairs N]\n"
           "                          [--suite perf|check|all] [--kernels LIST] [-j N]\n"
           "                          [--out DIR] [--timeout S]\n\n"
           "Why is B faster (or slower) than A? Lists the numeric parameters that differ,\n"
           "gathered into the config schema's parameter groups (configs/SCHEMA.md: all tensor\n"
           "rates, all DMA costs, HBM bandwidth and latency, ...; --keys: one key each), runs\n"
           "the suite timing-only on A, on A with each group swapped alone (all its keys), on A\n"
           "with every change, on B, and on A with each pair of the N groups that move most\n"
           "alone (--pairs, default %d, 0 .. %d), and reports each kernel's speedup over A and\n"
           "the share of it each group explains (log space: ln(speedup alone) / ln(speedup\n"
           "with every change); the rest is the interaction, broken down by pair: ln(pair) -\n"
           "ln(first alone) - ln(second alone), so two groups that only help together show as\n"
           "their pair). Tuning files are not used (they differ per generation and would blur\n"
           "the attribution). Writes DIR/attribute.json (default DIR %s), which `gensweep\n"
           "report --attribute` renders.\n"
           "Exit 0 ok, 1 failed jobs, 2 usage (bad configs, nothing differs).\n",
           GS_ATTRIBUTE_DEFAULT_PAIRS, GS_ATTRIBUTE_MAX_PAIR_ITEMS, GS_ATTRIBUTE_DEFAULT_OUT);
}

typedef struct attr_ctx {
    int quiet;
} attr_ctx;

static void print_changes(void *ctx, const gs_attribute_result *r)
{
    (void)ctx;
    for (int i = 0; i < r->n_one_sided; i++)
        printf("  %-44s %s only (not attributed: a capability, not a value)\n", r->one_sided[i],
               r->one_sided_on[i]);
    if (!r->n_changes) return;
    printf("%s -> %s: %d numeric parameters differ", r->from_name, r->to_name, r->n_changes);
    if (r->n_items && r->items[0].group)
        printf(", in %d parameter groups:\n", r->n_items);
    else
        printf(":\n");
    for (int g = 0; g < r->n_items; g++) {
        const gs_attribute_item *it = &r->items[g];
        if (it->group) printf("  %s\n", it->name);
        for (int i = 0; i < r->n_changes; i++) {
            const gs_attribute_change *c = &r->changes[i];
            if (c->item != g) continue;
            printf("  %s%-44s %s -> %s\n", it->group ? "  " : "", c->key, c->from_text, c->to_text);
        }
        if (!it->alone_ok) printf("    (invalid alone: %s)\n", it->why);
    }
}

static void print_run(void *ctx, int run, int n, const char *label, int failures)
{
    const attr_ctx *a = ctx;
    if (!a->quiet) printf("run %d/%d: %s%s\n", run + 1, n, label, failures ? " (failures)" : "");
    fflush(stdout);
}

/* A number of the document (NAN for null or absent). */
static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

static double num_at(const cJSON *arr, int i)
{
    const cJSON *v = cJSON_GetArrayItem(arr, i);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

/* Longest item name a table column shows in full; longer ones are numbered with a legend. */
#define COL_NAME_MAX 16

/* Item c's column header into buf: its name, or "[c+1]" when longer than COL_NAME_MAX. */
static const char *col_name(const gs_attribute_result *r, int c, char *buf, size_t size)
{
    if (strlen(r->items[c].name) <= COL_NAME_MAX)
        snprintf(buf, size, "%s", r->items[c].name);
    else
        snprintf(buf, size, "[%d]", c + 1);
    return buf;
}

/* "1.234x" right-aligned in width w, or "-" when v is not a number. */
static void put_x(double v, int w)
{
    if (isfinite(v))
        printf(" %*.3fx", w - 1, v);
    else
        printf(" %*s", w, "-");
}

/* "explains 12.3%", or "explains -" with the document's reason when there is no share. */
static void put_share(double sh, const char *na)
{
    if (isfinite(sh))
        printf("explains %5.1f%%", 100 * sh);
    else
        printf("explains -  (%s)", na && *na ? na : "no share");
}

/* The table and the summary, from the attribute.json document. */
static void print_doc(const gs_attribute_result *r)
{
    const int ni = r->n_items;
    const cJSON *doc = r->doc;
    int width[GS_ATTRIBUTE_MAX_PARAMS], legend = 0, dash = 0;
    char h[48];
    for (int c = 0; c < ni; c++) {
        size_t n = strlen(col_name(r, c, h, sizeof h));
        width[c] = n > 9 ? (int)n : 9;
        legend |= h[0] == '[';
    }
    if (legend)
        for (int c = 0; c < ni; c++)
            if (strlen(r->items[c].name) > COL_NAME_MAX)
                printf("  [%d] %s\n", c + 1, r->items[c].name);
    printf("\n%-52s %9s", "job (speedup over the 'from' config)", "all");
    for (int c = 0; c < ni; c++)
        printf(" %*s", width[c], col_name(r, c, h, sizeof h));
    int wto = strlen(r->to_name) > 9 ? (int)strlen(r->to_name) : 9;
    printf(" %*s\n", wto, r->to_name);
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        printf("%-52.52s", gs_json_str(j, "key"));
        put_x(num(j, "speedup_all"), 9);
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(j, "speedup");
        for (int c = 0; c < ni; c++) {
            double v = num_at(sp, c);
            dash |= !isfinite(v);
            put_x(v, width[c]);
        }
        dash |= !isfinite(num(j, "speedup_to"));
        put_x(num(j, "speedup_to"), wto);
        printf("\n");
    }
    if (dash) printf("(-: not run, invalid alone, or the job did not pass on %s)\n", r->to_name);
    const int njok = r->jobs;
    if (!njok) return;
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(doc, "all"),
                *to_all = cJSON_GetObjectItemCaseSensitive(doc, "to_all");
    printf("\n%s vs %s: %.3fx geomean over %d jobs with every numeric change on %s (%s "
           "itself: ",
           r->to_name, r->from_name, num(all, "geomean"), njok, r->from_name, r->to_name);
    if (isfinite(num(to_all, "geomean")))
        printf("%.3fx over %d jobs)\n", num(to_all, "geomean"), (int)num(to_all, "jobs"));
    else
        printf("- , %s)\n", gs_json_str(to_all, "na"));
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(doc, "params");
    for (int c = 0; c < ni; c++) {
        const cJSON *p = cJSON_GetArrayItem(params, c);
        if (!r->items[c].alone_ok) {
            printf("  %-44s cannot run alone (counted in the interactions): %s\n", r->items[c].name,
                   r->items[c].why);
            continue;
        }
        printf("  %-44s %7.3fx alone, ", r->items[c].name, num(p, "geomean"));
        put_share(num(p, "share"), gs_json_str(p, "na"));
        printf("%s\n", c == r->best ? "  <- most" : "");
    }
    double inter = num(doc, "interaction_share");
    printf("  %-44s ", "interactions (parts do not add up)");
    put_share(inter, gs_json_str(doc, "interaction_na"));
    printf("%s\n", isfinite(inter) && fabs(inter) < 0.05 ? " (negligible)" : "");
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(doc, "pairs"), *p;
    if (!cJSON_GetArraySize(pairs)) return;
    cJSON_ArrayForEach(p, pairs)
    {
        char name[200];
        snprintf(name, sizeof name, "%s + %s together", gs_json_str(p, "a"), gs_json_str(p, "b"));
        printf("    %-42s ", name);
        if (isfinite(num(p, "interaction")))
            printf("%7.3fx beyond alone, ", num(p, "interaction"));
        else
            printf("%7s beyond alone, ", "-");
        put_share(num(p, "share"), gs_json_str(p, "na"));
        printf("\n");
    }
    printf("    %-42s ", "the rest (not pairwise among these)");
    put_share(num(doc, "residual_share"), gs_json_str(doc, "interaction_na"));
    printf("\n");
}

int gs_cmd_attribute(int argc, char **argv)
{
    gs_attribute_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    o.sweep.suite = GS_SWEEP_PERF;
    o.sweep.no_tuning = 1;
    o.pairs = GS_ATTRIBUTE_DEFAULT_PAIRS;
    const char *cfgs[GS_SWEEP_MAX_LIST], *sets[GS_SWEEP_MAX_LIST];
    size_t n_cfg = 0, n_sets = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--from") || !strcmp(argv[i], "--to")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gensweep attribute: %s needs a config file\n", argv[i]);
                return GS_EXIT_USAGE;
            }
            if (argv[i][2] == 'f')
                o.from = argv[++i];
            else
                o.to = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--keys")) {
            o.by_keys = 1;
            continue;
        }
        if (!strcmp(argv[i], "--pairs")) {
            int64_t v = 0;
            gs_error err;
            gs_error_clear(&err);
            if (i + 1 >= argc ||
                gs_parse_int(argv[i + 1], 0, GS_ATTRIBUTE_MAX_PAIR_ITEMS, &v, &err) != 0) {
                fprintf(stderr, "gensweep attribute: --pairs needs a count 0 .. %d\n",
                        GS_ATTRIBUTE_MAX_PAIR_ITEMS);
                return GS_EXIT_USAGE;
            }
            o.pairs = (int)v;
            i++;
            continue;
        }
        int r = gs_sweep_parse_common(argc, argv, &i, &o.sweep, cfgs, &n_cfg, sets, &n_sets);
        if (r < 0) return GS_EXIT_USAGE;
        if (r == 0 || n_cfg || n_sets) {
            fprintf(stderr,
                    "gensweep attribute: unknown option '%s' (see gensweep attribute "
                    "--help)\n",
                    argv[i]);
            return GS_EXIT_USAGE;
        }
    }
    if (!o.from || !o.to) {
        fprintf(stderr, "gensweep attribute: --from A.yaml and --to B.yaml are required\n");
        return GS_EXIT_USAGE;
    }
    char from_buf[GS_CLI_PATH_MAX], to_buf[GS_CLI_PATH_MAX];
    o.from = gs_cli_data_file("attribute", "--from", "configs", "config", o.from, from_buf);
    o.to = o.from ? gs_cli_data_file("attribute", "--to", "configs", "config", o.to, to_buf) : NULL;
    if (!o.to) return GS_EXIT_USAGE;
    o.out_dir = o.sweep.out_dir;
    o.sweep.progress = gs_sweep_cli_progress; /* quiet runs: failed jobs only */
    attr_ctx ctx = {o.sweep.quiet};
    o.on_changes = print_changes;
    o.progress = print_run;
    o.progress_ctx = &ctx;
    gs_attribute_result r;
    gs_diags d;
    gs_diags_init(&d);
    gs_status st = gs_attribute_run(&o, &r, &d);
    if (r.doc) print_doc(&r);
    gs_cli_print_diags("attribute", &d);
    gs_diags_free(&d);
    int rc = st == GS_ERR_USAGE             ? GS_EXIT_USAGE
             : st != GS_OK || r.failed_runs ? GS_EXIT_FAIL
                                            : GS_EXIT_OK;
    if (r.written) printf("attribute: %s\n", r.path);
    gs_attribute_result_free(&r);
    return rc;
}
