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
    printf("usage: gensweep attribute --from A.yaml --to B.yaml [--suite perf|check|all]\n"
           "                          [--kernels LIST] [-j N] [--out DIR] [--timeout S]\n\n"
           "Why is B faster (or slower) than A? Lists the numeric parameters that differ, runs\n"
           "the suite timing-only on A, on A with each change alone, on A with every change,\n"
           "and on B, and reports each kernel's speedup over A and the share of it each\n"
           "parameter explains (log space: ln(speedup alone) / ln(speedup with every change);\n"
           "the rest is the interaction between changes). Tuning files are not used (they\n"
           "differ per generation and would blur the attribution). Writes DIR/attribute.json\n"
           "(default DIR %s), which `gensweep report --attribute` renders.\n"
           "Exit 0 ok, 1 failed jobs, 2 usage (bad configs, nothing differs).\n",
           GS_ATTRIBUTE_DEFAULT_OUT);
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
    printf("%s -> %s: %d numeric parameters differ:\n", r->from_name, r->to_name, r->n_changes);
    for (int i = 0; i < r->n_changes; i++) {
        const gs_attribute_change *c = &r->changes[i];
        printf("  %-44s %.6g -> %.6g %s%s%s\n", c->key, c->from, c->to,
               gs_unit_record_name(c->unit),
               c->alone_ok ? "" : "  (invalid alone: ", c->alone_ok ? "" : c->why);
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

/* The table and the summary, from the attribute.json document. */
static void print_doc(const gs_attribute_result *r)
{
    const int nc = r->n_changes;
    const cJSON *doc = r->doc;
    printf("\n%-52s %9s", "job (speedup over the 'from' config)", "all");
    for (int c = 0; c < nc; c++)
        printf(" %9.9s", strrchr(r->changes[c].key, '.') + 1);
    printf(" %9s\n", r->to_name);
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(doc, "jobs"))
    {
        printf("%-52.52s %8.3fx", gs_json_str(j, "key"), num(j, "speedup_all"));
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(j, "speedup");
        for (int c = 0; c < nc; c++)
            printf(" %8.3fx", num_at(sp, c));
        double to = num(j, "speedup_to");
        if (isfinite(to))
            printf(" %8.3fx\n", to);
        else
            printf(" %9s\n", "-");
    }
    const int njok = r->jobs;
    if (!njok) return;
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(doc, "all"),
                *to_all = cJSON_GetObjectItemCaseSensitive(doc, "to_all");
    printf("\n%s vs %s: %.3fx geomean over %d jobs with every numeric change on %s (%s "
           "itself: %.3fx over %d jobs)\n",
           r->to_name, r->from_name, num(all, "geomean"), njok, r->from_name, r->to_name,
           num(to_all, "geomean"), (int)num(to_all, "jobs"));
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(doc, "params");
    for (int c = 0; c < nc; c++) {
        const cJSON *p = cJSON_GetArrayItem(params, c);
        if (!r->changes[c].alone_ok) {
            printf("  %-44s cannot run alone (counted in the interactions)\n", r->changes[c].key);
            continue;
        }
        printf("  %-44s %7.3fx alone, explains %5.1f%%%s\n", r->changes[c].key, num(p, "geomean"),
               100 * num(p, "share"), c == r->best ? "  <- most" : "");
    }
    double inter = num(doc, "interaction_share");
    if (isfinite(inter))
        printf("  %-44s explains %5.1f%%%s\n", "interactions (parts do not add up)", 100 * inter,
               fabs(inter) >= 0.05 ? "" : " (negligible)");
}

int gs_cmd_attribute(int argc, char **argv)
{
    gs_attribute_opts o;
    memset(&o, 0, sizeof o);
    gs_sweep_opts_default(&o.sweep);
    o.sweep.suite = GS_SWEEP_PERF;
    o.sweep.no_tuning = 1;
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
