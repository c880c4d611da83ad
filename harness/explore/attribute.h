/*
 * attribute.h - why is B faster than A? (`gensweep attribute --from A.yaml --to B.yaml`)
 *
 * Lists the numeric parameters whose values differ between the two configs and gathers them
 * into the config schema's parameter groups (gs_config_groups: all tensor rates, all DMA costs,
 * ...; with by_keys one item per key), then runs the suite (timing only; the sweep library, one
 * process per job) on A as it is, on A with each item alone (every key of the group as a
 * `--set KEY=<B's value>`), on A with every change together, on B itself, and on A with each
 * pair of the top `pairs` items together. For every job (matched by kernel/variant/dtype/shape,
 * reports/speedup.h) and overall (geometric means) it gives the speedup of each run over A and
 * the share of the all-changes speedup each item explains in log space:
 * share_i = ln(speedup_i) / ln(speedup_all). The shares add up to 1 when the effects multiply
 * independently; the rest (1 - sum) is the interaction, of which each pair explains
 * (ln(speedup_ij) - ln(speedup_i) - ln(speedup_j)) / ln(speedup_all) (two items that only help
 * together show as their pair); what no pair explains is the residual.
 * Differences the numeric parameters cannot express (dtypes, ops, family, a parameter present on
 * one side only) show as the gap between "all changes" and B itself.
 *
 * Output: DIR/attribute.json (schema "gensweep-attribute", results/RESULTS.md), which
 * `gensweep report --attribute` renders in the verdict; each run's results in DIR/<run>/.
 * Never prints and never exits: problems come back in a gs_diags, the document and the changes
 * in the result, each run's end through the progress callback.
 */
#ifndef GS_ATTRIBUTE_H
#define GS_ATTRIBUTE_H

#include <cjson/cJSON.h>

#include "gs/common.h"
#include "gs/units.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_ATTRIBUTE_DEFAULT_OUT "build/attribute"
/* Most differing parameters (with by_keys each is one more sweep). */
#define GS_ATTRIBUTE_MAX_PARAMS 96
/* Items whose pairwise interactions are run by default, and at most (pairs = K(K-1)/2). The
 * top items are ranked by their effect alone, which misses an item that only helps together
 * with another (HBM bandwidth with more cores); 6 covers every pair of a typical generation
 * pair's groups at 15 runs, so the ranking only matters beyond that. */
#define GS_ATTRIBUTE_DEFAULT_PAIRS 6
#define GS_ATTRIBUTE_MAX_PAIR_ITEMS 8
#define GS_ATTRIBUTE_MAX_PAIRS (GS_ATTRIBUTE_MAX_PAIR_ITEMS * (GS_ATTRIBUTE_MAX_PAIR_ITEMS - 1) / 2)

struct gs_attribute_result;

typedef struct gs_attribute_opts {
    gs_sweep_opts sweep;   /* for every run (suite, kernels, jobs, timeout, progress ...); configs,
                              sets and out_dir are replaced per run */
    const char *from, *to; /* the two config files */
    const char *out_dir;   /* NULL: GS_ATTRIBUTE_DEFAULT_OUT */
    int by_keys;           /* one item per differing key instead of one per parameter group */
    int pairs;             /* pairwise interactions among the top this many items (0: none; at most
                              GS_ATTRIBUTE_MAX_PAIR_ITEMS) */
    /* once the changes are known (r: the names, changes and one-sided parameters so far; also
     * when they are unusable), before any run */
    void (*on_changes)(void *ctx, const struct gs_attribute_result *r);
    /* after each run: its index (0-based) of n, its label, whether it had failures */
    void (*progress)(void *ctx, int run, int n, const char *label, int failures);
    void *progress_ctx;
} gs_attribute_opts;

/* One numeric parameter that differs. */
typedef struct gs_attribute_change {
    const char *key;
    gs_unit unit;
    double from, to;
    char from_text[48], to_text[48]; /* in the unit that reads best (gs_units_format) */
    char assign[320];                /* "key=<to><unit>" for --set */
    int item;                        /* the item (group or key) it is swapped with */
} gs_attribute_change;

/* What is swapped as one: a parameter group's differing keys, or one key (by_keys). */
typedef struct gs_attribute_item {
    char name[96]; /* the group's name, or the key */
    int group;     /* 1 for a parameter group */
    int n_changes; /* its changes (gs_attribute_change.item == this item's index) */
    int alone_ok;  /* the item alone gives a valid config (some only hold together) */
    char why[256]; /* the config error when not */
} gs_attribute_item;

/* Two items swapped together, for their interaction. */
typedef struct gs_attribute_pair {
    int a, b; /* item indices */
    int ok;   /* valid together (else why) */
    char why[256];
} gs_attribute_pair;

typedef struct gs_attribute_result {
    char from_name[64], to_name[64]; /* the configs' generation names */
    /* parameters present on one side only (not attributed: a capability, not a value): the key
     * and the name of the side that has it */
    const char *one_sided[GS_ATTRIBUTE_MAX_PARAMS];
    const char *one_sided_on[GS_ATTRIBUTE_MAX_PARAMS];
    int n_one_sided;
    gs_attribute_change changes[GS_ATTRIBUTE_MAX_PARAMS];
    int n_changes;
    gs_attribute_item items[GS_ATTRIBUTE_MAX_PARAMS];
    int n_items;
    gs_attribute_pair pairs[GS_ATTRIBUTE_MAX_PAIRS]; /* set once the single runs are done */
    int n_pairs;
    cJSON *doc;      /* the attribute.json document once every run finished, or NULL */
    int jobs;        /* jobs that passed in every run (attributed) */
    int best;        /* the item that explains most, or -1 */
    int failed_runs; /* runs with failing jobs */
    int written;     /* path written */
    char path[4200]; /* DIR/attribute.json */
} gs_attribute_result;

/*
 * Run the attribution. GS_OK when attribute.json was written (r->failed_runs may be non-zero);
 * GS_ERR_USAGE for bad input (a config that does not load, nothing or too much differs, a run's
 * usage error), with the problems in d (config problems keep their file:line:col); GS_ERR_INVALID
 * when no job passed in every run (nothing to attribute; r->doc is kept); any other status when a
 * run left no results or the file could not be written. Free r with gs_attribute_result_free.
 */
gs_status gs_attribute_run(const gs_attribute_opts *o, gs_attribute_result *r, gs_diags *d);
void gs_attribute_result_free(gs_attribute_result *r); /* NULL ok */

#ifdef __cplusplus
}
#endif
#endif
