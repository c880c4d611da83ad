#!/usr/bin/env bash
# Never green on missing work: a 3-shard sweep (gen3 and gen4, perf suite, two kernels) with
# shard 2 deleted and shard 3 made an interrupted shard that lacks its first job, merged with
# `merge --report`. The merge exits 1 (incomplete) and still writes
# results.json, junit.xml and report.html; results.json lists the jobs not run by id and shard
# ("not_run"); junit.xml names each of them by id with its shard (valid against the strict
# Jenkins schema); the report names the missing shard before the verdict and marks the speedup
# partial. The report is left in WORK_DIR/all for the browser test (report_browser_incomplete).
# usage: incomplete_merge_test.sh SOURCE_DIR GENSWEEP_BINARY WORK_DIR
set -euo pipefail
src=$1 gs=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$src"
for i in 1 2 3; do
    "$gs" sweep --configs configs/gen3.yaml configs/gen4.yaml --kernels elementwise_add,rmsnorm \
        --suite perf --quiet --no-report --shard "$i/3" --out "$work/shard-$i" -j 1
done
# the shard's jobs, as the plan gave them to it: the ids the merge must name
want=$(grep -o '"id": *"[^"]*"' "$work/shard-2/results.json" | sed 's/.*"\([^"]*\)"$/\1/' | sort)
[ -n "$want" ] || { echo "FAIL: shard 2 ran no job" >&2; exit 1; }
rm -rf "$work/shard-2"
# shard 3 as a shard interrupted after all but its first job: the merge names that job too, as
# not run because its shard was interrupted (not as a missing shard)
mkdir -p "$work/shard-3i"
cut=$(grep -m1 -o '^{"id":"[^"]*"' "$work/shard-3/results.json" | sed 's/^{"id":"//; s/"$//')
[ -n "$cut" ] && [ "$(grep -c '^{"id":' "$work/shard-3/results.json")" -ge 2 ] ||
    { echo "FAIL: shard 3 has fewer than two jobs" >&2; exit 1; }
sed -e '/^{"id":"'"${cut//\//\\/}"'",/d' -e 's/^"interrupted": false,$/"interrupted": true,/' \
    "$work/shard-3/results.json" >"$work/shard-3i/results.json"
rc=0
"$gs" merge --out "$work/all" --report "$work/shard-1" "$work/shard-3i" >"$work/merge.out" \
    2>"$work/merge.err" || rc=$?
fail() { echo "FAIL: $*" >&2; cat "$work/merge.err" >&2; exit 1; }
[ "$rc" -eq 1 ] || fail "merge exited $rc, not 1 (incomplete)"
for f in results.json junit.xml report.html; do
    [ -s "$work/all/$f" ] || fail "merge --report wrote no $f"
done
grep -q "report: $work/all/report.html" "$work/merge.out" || fail "merge does not name the report"
grep -q '^"complete": false,$' "$work/all/results.json" || fail "results not marked incomplete"
for id in $want; do
    grep -qF "{\"id\":\"$id\",\"shard\":2,\"shards\":3}" "$work/all/results.json" ||
        fail "results.json \"not_run\" lacks $id (shard 2/3)"
    grep -qF "not run: $id (shard 2/3)" "$work/merge.err" || fail "merge's stderr does not name $id"
    grep -qF "name=\"$id\"" "$work/all/junit.xml" || fail "junit.xml has no test case named $id"
done
n=$(grep -c 'message="not run: shard 2/3 missing"' "$work/all/junit.xml")
[ "$n" -eq "$(echo "$want" | wc -l)" ] || fail "junit.xml: $n not-run cases, want $(echo "$want" | wc -l)"
grep -q 'name="not run [0-9]' "$work/all/junit.xml" && fail "junit.xml still counts jobs instead of naming them"
# the job the interrupted shard did not run: named, with why, and shard 3 is not missing
grep -qF "{\"id\":\"$cut\",\"shard\":3,\"shards\":3,\"why\":\"interrupted\"}" "$work/all/results.json" ||
    fail "results.json \"not_run\" lacks $cut (shard 3/3, interrupted)"
grep -qF "not run: $cut (shard 3/3: interrupted)" "$work/merge.err" || fail "merge's stderr does not name $cut"
grep -qF "name=\"$cut\"" "$work/all/junit.xml" || fail "junit.xml has no test case named $cut"
[ "$(grep -c 'message="not run: interrupted (shard 3/3)"' "$work/all/junit.xml")" -eq 1 ] ||
    fail "junit.xml: $cut is not one case not run because shard 3/3 was interrupted"
if command -v xmllint >/dev/null; then
    xmllint --noout --schema tests/junit/jenkins-junit.xsd "$work/all/junit.xml" 2>"$work/xmllint.err" ||
        { cat "$work/xmllint.err" >&2; fail "junit.xml is not valid against the Jenkins schema"; }
fi
html=$work/all/report.html
# the notice comes before the verdict, names the missing shard and a job not run
head=$(sed -n '/<main>/,/<section id="verdict">/p' "$html")
grep -q 'id="incomplete"' <<<"$head" || fail "no incomplete notice before the verdict"
grep -q 'Missing shards: <b class="missing-shards">2/3</b>' <<<"$head" || fail "the notice does not name shard 2/3"
grep -qF "$(echo "$want" | head -1)" <<<"$head" || fail "the notice does not name the jobs not run"
grep -qF "$cut</code> (shard 3/3, interrupted)" <<<"$head" ||
    fail "the notice does not name $cut as not run in interrupted shard 3/3"
grep -q '<title>gensweep report: INCOMPLETE' "$html" || fail "the title does not say incomplete"
# the speedup is marked partial, and no "No job failed." claims a clean run
grep -q '<div class="verdict partial" data-partial="1"><h3>gen4 vs gen3: .*partial' "$html" ||
    fail "the gen4 vs gen3 speedup is not marked partial"
grep -q '<p>No job failed.</p>' "$html" && fail "the report says \"No job failed.\" on incomplete results"
# the whole merge, for contrast: complete, no notice, no partial verdict
"$gs" sweep --configs configs/gen3.yaml configs/gen4.yaml --kernels elementwise_add,rmsnorm \
    --suite perf --quiet --no-report --shard 2/3 --out "$work/shard-2" -j 1
"$gs" merge --out "$work/whole" --report "$work"/shard-{1,2,3} >/dev/null 2>"$work/merge.err" ||
    fail "the complete merge failed"
grep -q '"not_run"' "$work/whole/results.json" && fail "a complete merge has \"not_run\""
grep -q 'id="incomplete"\|data-partial' "$work/whole/report.html" && fail "a complete report says incomplete"
rm -rf "$work"/shard-* "$work/whole"
echo "an incomplete merge names its missing shard and jobs, and its speedups are partial"
# CI shows this report and junit.xml however the merge ended: in the sweep workflow, the steps
# that write the report and keep junit.xml run `if: always()` (a red merge does not skip them)
wf=$src/.github/workflows/sweep.yml
for step in "report" "JUnit"; do
    # every step whose name starts with it, and at least one
    awk -v s="$step" 'function done_step() { if (hit) { n++; if (!cond) bad = 1 } }
        /^      - / { done_step(); hit = index($0, "- name: " s) == 7; cond = 0 }
        /^        if: always\(\)/ { cond = 1 }
        END { done_step(); exit n && !bad ? 0 : 1 }' "$wf" ||
        fail "sweep.yml: a $step step does not run if: always()"
done
grep -q 'gensweep merge --out out/all --report' "$wf" || fail "sweep.yml: the merge does not write the report"
echo "sweep.yml: the report and JUnit steps run if: always()"
