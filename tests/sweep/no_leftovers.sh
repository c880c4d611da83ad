#!/bin/sh
# no_leftovers.sh BUILD_DIR [BOUND_S] - run after a test run: fails when a process running a
# binary of BUILD_DIR is still alive (an orphaned job of a killed sweep, a child a test forgot to
# reap). Leftovers are listed, then killed, so a failed check leaves nothing running either.
# Only after the run: a test that still runs is not a leftover. A process that is dying (a job
# killed with its sweep a moment ago) gets up to BOUND_S seconds (default 30) to go; the normal
# case passes at once.
set -u
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
    echo "usage: no_leftovers.sh BUILD_DIR [BOUND_S]" >&2
    exit 2
fi
dir=$(cd "$1" && pwd -P)
bound=${2:-30}

# pids whose executable lies under $dir (zombies have no exe link: they are gone already)
leftovers() {
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case "$exe" in
        "$dir"/*) echo "${p#/proc/}" ;;
        esac
    done
}

waited=0
pids=$(leftovers)
while [ -n "$pids" ] && [ "$waited" -lt "$bound" ]; do
    sleep 1
    waited=$((waited + 1))
    pids=$(leftovers)
done
[ -z "$pids" ] && exit 0
echo "no_leftovers.sh: processes of $dir outlived the test run:" >&2
# shellcheck disable=SC2086 # one pid per word
ps -o pid,ppid,stat,etime,args -p "$(echo $pids | tr ' ' ',')" >&2
# shellcheck disable=SC2086
kill -KILL $pids 2>/dev/null
exit 1
