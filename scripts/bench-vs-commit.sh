#!/usr/bin/env bash
# Measure this checkout against an older commit on the same work, in one session: the check
# sweep (same job list) and the largest timing-only job, CPU time (user + system, children
# included) of alternating runs, best of N each, and their ratio. `gensweep bench` measures the
# old *paths* inside the current binary (GS_BASELINE_PATHS); this measures the old *binary*,
# which is what "today's figure" of a target meant when it was set.
#
# usage: scripts/bench-vs-commit.sh OLD_COMMIT [RUNS]
#   OLD_COMMIT  a commit of this repository (built in a temporary worktree, Release)
#   RUNS        alternating runs of each measurement (default 3)
# The current binary is build/release/cli/gensweep (build it first with the release preset).
# Job list: the old commit's check suite on its configs/*.yaml; the current binary runs the
# current configs of the same generation names, restricted to the old commit's kernels (new
# variants or shapes of those kernels make the current side's list a superset: reported).
set -euo pipefail

die() { echo "bench-vs-commit: $*" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/bench-vs-commit.sh OLD_COMMIT [RUNS]"
old=$1
runs=${2:-3}
[[ $runs =~ ^[1-9][0-9]?$ ]] || die "RUNS must be a number from 1 to 99, not '$runs'"
root=$(git rev-parse --show-toplevel 2>/dev/null) || die "not inside the gensweep repository"
cd "$root"
git rev-parse --verify --quiet "$old^{commit}" > /dev/null || die "no commit '$old' here"
new_gs=$root/build/release/cli/gensweep
[ -x "$new_gs" ] || die "$new_gs not built (cmake --preset release && cmake --build --preset release)"

work=$(mktemp -d "${TMPDIR:-/tmp}/gs-vs-commit.XXXXXX")
cleanup() {
    git worktree remove --force "$work/old" > /dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "building $old (Release, in a temporary worktree) ..."
git worktree add --detach --quiet "$work/old" "$old"
cmake -S "$work/old" -B "$work/old/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGS_WERROR=OFF \
    > "$work/old-configure.log" 2>&1 || die "configuring $old failed: $work/old-configure.log"
cmake --build "$work/old/build" --target gensweep -j2 > "$work/old-build.log" 2>&1 ||
    die "building $old failed (log: $work/old-build.log)"
old_gs=$work/old/build/cli/gensweep
# commits from before the commands moved to cli/ built the binary in harness/
[ -x "$old_gs" ] || old_gs=$work/old/build/harness/gensweep

# the same generations (file names) and kernels on both sides
mkdir -p "$work/cfg-new"
gens=()
for f in "$work/old/configs/"*.yaml; do
    g=$(basename "$f")
    [ -f "configs/$g" ] || die "the current configs/ has no $g"
    cp "configs/$g" "$work/cfg-new/"
    gens+=("${g%.yaml}")
done
[ ${#gens[@]} -gt 0 ] || die "$old has no configs/*.yaml"
kernels=$("$old_gs" list kernels --names | paste -sd, -)

cpu() { # CMD... -> prints user+sys seconds of CMD and its children
    local t
    t=$( { TIMEFORMAT='%U %S'; time "$@" > /dev/null 2>&1; } 2>&1 | tail -1)
    awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.3f", a[1] + a[2] }'
}
best() { printf '%s\n' "$@" | sort -g | head -1; }

echo "generations: ${gens[*]}; kernels: $kernels"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
so=() sn=() lo=() ln=()
for ((r = 1; r <= runs; r++)); do
    rm -rf "$work/sw-old" "$work/sw-new"
    so+=("$(cpu "$old_gs" sweep --configs "$work/old/configs" --suite check --out "$work/sw-old" -j2 --quiet)")
    sn+=("$(cpu "$new_gs" sweep --configs "$work/cfg-new" --kernels "$kernels" --suite check --out "$work/sw-new" -j2 --quiet)")
    lo+=("$(cpu "$old_gs" run --config "$work/old/configs/${gens[0]}.yaml" --kernel matmul --shape 8192x8192x8192 --timing-only)")
    ln+=("$(cpu "$new_gs" run --config "$work/cfg-new/${gens[0]}.yaml" --kernel matmul --shape 8192x8192x8192 --timing-only)")
    echo "run $r: sweep old ${so[-1]} s, new ${sn[-1]} s; largest job old ${lo[-1]} s, new ${ln[-1]} s"
done
ids() { tail -n +2 "$1" | cut -d, -f1 | sort -u; }
n_old=$(ids "$work/sw-old/results.csv" | wc -l)
n_new=$(ids "$work/sw-new/results.csv" | wc -l)
n_common=$(comm -12 <(ids "$work/sw-old/results.csv") <(ids "$work/sw-new/results.csv") | wc -l)
bo=$(best "${so[@]}") bn=$(best "${sn[@]}") blo=$(best "${lo[@]}") bln=$(best "${ln[@]}")
instrs=$("$new_gs" run --config "$work/cfg-new/${gens[0]}.yaml" --kernel matmul \
    --shape 8192x8192x8192 --timing-only --json 2>/dev/null |
    grep -o '"instructions": *[0-9]*' | head -1 | grep -o '[0-9]*$' || true)
echo
echo "check sweep, CPU s (best of $runs): old $bo ($n_old jobs), new $bn ($n_new jobs, $n_common of them the old ones)"
awk -v o="$bo" -v n="$bn" 'BEGIN { printf "  new / old = %.2f\n", n / o }'
echo "largest timing-only job (${gens[0]} matmul 8192^3), CPU s (best of $runs): old $blo, new $bln"
awk -v o="$blo" -v n="$bln" -v i="${instrs:-0}" 'BEGIN {
    printf "  new / old = %.2f", n / o
    if (i > 0) printf "; new: %.0f instructions per CPU s (%d instructions)", i / n, i
    printf "\n" }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
