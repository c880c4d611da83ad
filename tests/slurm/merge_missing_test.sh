#!/usr/bin/env bash
# scripts/slurm/merge.sbatch without a cluster: shards 1 and 3 of 3 written, shard 2's directory
# left without results (its task failed early). The merge must still write the results and the
# report, say in results.json which shard is missing ("missing"), name the empty directory on
# stderr and exit 1 (incomplete).
# Usage: merge_missing_test.sh SOURCE_DIR GENSWEEP_BINARY WORK_DIR
set -euo pipefail
src=$1 gs=$2 work=$3
rm -rf "$work"
mkdir -p "$work/shard-2"
cd "$src"
for i in 1 3; do
    "$gs" sweep --configs configs/gen2.yaml --kernels elementwise_add --quiet --no-report \
        --shard "$i/3" --out "$work/shard-$i" -j 1
done
rc=0
GS=$gs GS_OUT=$work bash scripts/slurm/merge.sbatch >"$work/merge.out" 2>"$work/merge.err" || rc=$?
fail() { echo "FAIL: $*" >&2; cat "$work/merge.err" >&2; exit 1; }
[ "$rc" -eq 1 ] || fail "merge.sbatch exited $rc, not 1 (incomplete)"
grep -q "shard-2 has no results.json" "$work/merge.err" || fail "the empty shard is not named"
grep -q '^"complete": false,$' "$work/all/results.json" || fail "merged results not marked incomplete"
grep -q '^"missing": "1 of 3 shards missing (2/3);' "$work/all/results.json" ||
    fail "results.json does not name the missing shard"
[ -s "$work/all/report.html" ] || fail "no report written"
echo "merge.sbatch names the missing shard"
