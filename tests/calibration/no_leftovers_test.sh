#!/usr/bin/env bash
# `gensweep calibrate` and `gensweep workload run`, run in an empty directory, leave no empty
# ./build/ folder behind: calibrate writes nothing there (its case jobs use a scratch
# directory under $TMPDIR, removed afterwards, so $TMPDIR is left empty too), and workload run
# writes only its documented job records (build/workload/results.json, results.csv,
# junit.xml, and the directory's .gensweep.lock, as a sweep's --out has) or, with --out,
# nothing in the working directory at all.
# usage: no_leftovers_test.sh SOURCE_DIR GENSWEEP_BINARY WORK_DIR
set -euo pipefail
src=$1 gs=$2 work=$3
rm -rf "$work"
mkdir -p "$work/cwd" "$work/tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }
left() { (cd "$1" && find . -mindepth 1 | sort); }
cd "$work/cwd"
TMPDIR=$work/tmp "$gs" calibrate "$src/calibration/cases.yaml" --configs "$src/configs" -j 2 \
    >/dev/null || fail "calibrate failed"
[ -z "$(left "$work/cwd")" ] || fail "calibrate left in its working directory: $(left "$work/cwd")"
[ -z "$(left "$work/tmp")" ] || fail "calibrate left in \$TMPDIR: $(left "$work/tmp")"
wl=$src/workloads/llama3-8b-decode-4k.yaml
TMPDIR=$work/tmp "$gs" workload run "$wl" --config "$src/configs/gen3.yaml" -j 2 --out "$work/rec" \
    >/dev/null || fail "workload run --out failed"
[ -z "$(left "$work/cwd")" ] || fail "workload run --out left: $(left "$work/cwd")"
[ -s "$work/rec/results.json" ] || fail "workload run --out wrote no results.json"
TMPDIR=$work/tmp "$gs" workload run "$wl" --config "$src/configs/gen3.yaml" -j 2 >/dev/null ||
    fail "workload run failed"
want=$(printf '%s\n' ./build ./build/workload ./build/workload/.gensweep.lock \
    ./build/workload/junit.xml ./build/workload/results.csv ./build/workload/results.json)
[ "$(left "$work/cwd")" = "$want" ] || fail "workload run left other than its records: $(left "$work/cwd")"
[ -z "$(left "$work/tmp")" ] || fail "workload run left in \$TMPDIR: $(left "$work/tmp")"
rm -rf "$work"
echo "calibrate and workload run leave no empty folder"
