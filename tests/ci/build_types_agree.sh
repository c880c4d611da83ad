#!/usr/bin/env bash
# Simulated results do not depend on how gensweep was built: the same check-suite jobs, run by
# two builds (CI: the release preset and the test preset, asan), give identical jobs in
# results.json, byte for byte once serialised (times, statuses, errors, bounds, timelines with
# their source lines); only the sweep's wall-clock block and the tool's commit may differ.
# That is what lets the CI gate compare the test build's check sweep with baselines written by
# the release build. usage: build_types_agree.sh GENSWEEP_A GENSWEEP_B [SOURCE_DIR]
set -uo pipefail
a=$1
b=$2
src=${3:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d /tmp/gs-build-types-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
kernels=matmul,softmax,attention,rmsnorm,transpose,embedding,conv2d
for which in a b; do
    bin=${!which}
    "$bin" sweep --configs "$src/configs/gen2.yaml" "$src/configs/gen4.yaml" --suite check \
        --kernels "$kernels" --out "$tmp/$which" --quiet -j 2 >"$tmp/$which.log" 2>&1
    rc=$?
    [ $rc -le 1 ] && [ -f "$tmp/$which/results.json" ] ||
        { cat "$tmp/$which.log" >&2; echo "FAIL: $bin sweep exited $rc" >&2; exit 1; }
done
/usr/bin/python3 - "$tmp/a/results.json" "$tmp/b/results.json" "$a" "$b" <<'PY'
import json, sys
ja, jb = (json.load(open(p))["jobs"] for p in sys.argv[1:3])
def canon(job):
    return json.dumps(job, sort_keys=True, separators=(",", ":"))
if len(ja) != len(jb) or len(ja) < 50:
    sys.exit(f"FAIL: {len(ja)} jobs from {sys.argv[3]}, {len(jb)} from {sys.argv[4]}")
bad = [(x["id"], y["id"]) for x, y in zip(ja, jb) if canon(x) != canon(y)]
for x, y in bad[:5]:
    print(f"differs: {x} / {y}", file=sys.stderr)
if bad:
    sys.exit(f"FAIL: {len(bad)} of {len(ja)} jobs differ between the two builds")
print(f"ok - {len(ja)} jobs identical from both builds")
PY
