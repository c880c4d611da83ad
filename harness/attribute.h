/*
 * attribute.h - `gensweep attribute --from A.yaml --to B.yaml`: why is B faster than A?
 *
 * Lists the numeric parameters whose values differ between the two configs, then runs the suite
 * (timing only; the sweep library, one process per job) on A as it is, on A with each change
 * alone (`--set KEY=<B's value>`), on A with every change together, and on B itself. For every
 * job (matched by kernel/variant/dtype/shape, reports/speedup.h) and overall (geometric means)
 * it reports the speedup of each run over A and the share of the all-changes speedup each
 * parameter explains in log space: share_i = ln(speedup_i) / ln(speedup_all). The shares add up
 * to 1 when the effects multiply independently; the rest (1 - sum) is the interaction.
 * Differences the numeric parameters cannot express (dtypes, ops, family, a parameter present on
 * one side only) show as the gap between "all changes" and B itself.
 *
 * Output: DIR/attribute.json (schema "gensweep-attribute", results/RESULTS.md), which
 * `gensweep report --attribute` renders in the verdict; each run's results in DIR/<run>/.
 */
#ifndef GS_ATTRIBUTE_H
#define GS_ATTRIBUTE_H

#ifdef __cplusplus
extern "C" {
#endif

#define GS_ATTRIBUTE_DEFAULT_OUT "build/attribute"
/* Most differing parameters attributed one by one (each is one more sweep). */
#define GS_ATTRIBUTE_MAX_PARAMS 48

#ifdef __cplusplus
}
#endif
#endif
