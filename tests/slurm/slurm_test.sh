#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine (munged + slurmctld + slurmd, loopback only,
# configured in the build tree): submits scripts/slurm/sweep.sbatch as a job array (one shard
# per task) and the dependent scripts/slurm/merge.sbatch, waits (bounded), and checks that the
# merged results equal an unsharded sweep apart from "wall". Stops every daemon it started.
# Needs Debian's slurm-wlm and munge (.ci/deps installs them) and root; without them it exits
# 77, which CTest reports as skipped (under CI=true a missing package fails the test instead).
# usage: slurm_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1
build=$2
gs=$build/cli/gensweep
shards=3
sweep_args="--kernels elementwise_add,softmax --configs $src/configs/gen1.yaml $src/configs/gen2.yaml"
timeout_s=150

fail() { echo "FAIL: $*" >&2; exit 1; }

need=()
for t in munged slurmctld slurmd sbatch squeue scontrol; do
    command -v "$t" >/dev/null || need+=("$t")
done
if [ ${#need[@]} -gt 0 ]; then
    # the test installs nothing (a test that takes the package lock fails by chance): .ci/deps
    # installs slurm-wlm and munge before the tests run
    if [ "${CI:-}" = true ]; then
        fail "Slurm/munge not installed (${need[*]} missing): .ci/deps installs slurm-wlm and munge"
    fi
    echo "SKIP: Slurm/munge not installed (${need[*]} missing; bash .ci/test installs them)" >&2
    exit 77
fi
# slurmd runs jobs as the submitting user and the daemons here run as that user too
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: the single-node cluster needs root (slurmd runs jobs as their user)" >&2
    exit 77
fi

base=$build/slurm-test
rm -rf "$base"
mkdir -p "$base"/{etc,state,spool,log,munge,run}
chmod 700 "$base/munge"
pids=()
jobs_submitted=""
cleanup() {
    if [ -n "$jobs_submitted" ] && squeue -h -j "${jobs_submitted// /,}" 2>/dev/null | grep . >/dev/null; then
        scancel $jobs_submitted 2>/dev/null
        sleep 2
    fi
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null
    done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$p" 2>/dev/null
    done
    for p in "${pids[@]}"; do
        if kill -0 "$p" 2>/dev/null; then echo "daemon $p still running" >&2; fi
    done
    [ -z "${watchdog:-}" ] || kill "$watchdog" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Two free loopback ports (slurmctld, slurmd) picked by the kernel.
free_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 20000))
        (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
    done
    return 1
}
ctld_port=$(free_port) && slurmd_port=$(free_port) || fail "no free port"
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))

echo "== munged (own key and socket)"
m=$base/munge
dd if=/dev/urandom of="$m/munge.key" bs=1024 count=1 status=none
chmod 600 "$m/munge.key"
munged --force --key-file="$m/munge.key" --socket="$m/munge.socket" --pid-file="$m/munged.pid" \
    --log-file="$m/munged.log" --seed-file="$m/munged.seed" --foreground 2>>"$m/munged.log" &
pids+=($!)
for _ in $(seq 50); do [ -S "$m/munge.socket" ] && break; sleep 0.1; done
[ -S "$m/munge.socket" ] || fail "munged did not start: $(cat "$m/munged.log" 2>/dev/null)"

echo "== slurm.conf (loopback, this machine's CPUs and memory)"
node=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]*//' -e 's/ UpTime=.*//')
[ -n "$node" ] || fail "slurmd -C gave no node description"
conf=$base/etc/slurm.conf
cat >"$conf" <<CONF
ClusterName=gensweeptest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$m/munge.socket
StateSaveLocation=$base/state
SlurmdSpoolDir=$base/spool
SlurmctldPidFile=$base/slurmctld.pid
SlurmdPidFile=$base/slurmd.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1$node State=UNKNOWN
PartitionName=gensweep Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$conf

echo "== slurmctld, slurmd"
slurmctld -D -i 2>>"$base/log/slurmctld.stderr" &
pids+=($!)
slurmd -D -N localhost 2>>"$base/log/slurmd.stderr" &
pids+=($!)
# if this script is killed outright (SIGKILL from a CTest timeout), a watchdog cancels the jobs
# (ids in $base/jobs) so their step daemons end, then stops the daemons
(
    trap '' INT TERM
    while kill -0 $$ 2>/dev/null; do sleep 1; done
    if [ -s "$base/jobs" ]; then
        # shellcheck disable=SC2046 # the job ids, one word each
        scancel $(cat "$base/jobs") 2>/dev/null
        sleep 2
    fi
    kill "${pids[@]}" 2>/dev/null
) &
watchdog=$!
up=""
for _ in $(seq 100); do
    if sinfo -h -o '%T' 2>/dev/null | grep -E '^(idle|mixed)' >/dev/null; then up=1; break; fi
    sleep 0.3
done
[ -n "$up" ] || fail "node not idle: $(sinfo 2>&1); $(tail -5 "$base"/log/*.log)"

echo "== sbatch: array of $shards shards, then the dependent merge"
run=$base/run
export GS=$gs GS_OUT=$run/out GS_SWEEP_ARGS=$sweep_args
cd "$run" || fail "cd $run"
jid=$(sbatch --parsable --array=1-$shards --cpus-per-task=1 "$src/scripts/slurm/sweep.sbatch") ||
    fail "sbatch of the array failed"
jobs_submitted=$jid
echo "$jobs_submitted" >"$base/jobs"
mid=$(sbatch --parsable --dependency=afterany:"$jid" "$src/scripts/slurm/merge.sbatch") ||
    fail "sbatch of the merge failed"
jobs_submitted="$jid $mid"
echo "$jobs_submitted" >"$base/jobs"
echo "array job $jid, merge job $mid"
start=$SECONDS
while squeue -h -j "$jid,$mid" 2>/dev/null | grep . >/dev/null; do
    [ $((SECONDS - start)) -lt $timeout_s ] ||
        fail "jobs not done after ${timeout_s}s: $(squeue 2>&1)"
    sleep 1
done
echo "done in $((SECONDS - start)) s"
for t in $(seq 1 $shards); do
    st=$(scontrol show job "${jid}_$t" 2>/dev/null | grep -o 'JobState=[A-Z]*' | head -1)
    [ "$st" = JobState=COMPLETED ] || fail "shard $t: $st; $(cat slurm-gensweep-sweep-"${jid}"_"$t".out)"
    [ -f "out/shard-$t/results.json" ] || fail "no results from shard $t"
done
st=$(scontrol show job "$mid" | grep -o 'JobState=[A-Z]*' | head -1)
[ "$st" = JobState=COMPLETED ] || fail "merge: $st; $(cat slurm-gensweep-merge-"$mid".out)"
[ -f out/all/report.html ] || fail "merge wrote no report"

echo "== unsharded sweep, compared without \"wall\""
# shellcheck disable=SC2086
"$gs" sweep --quiet -j 2 --no-report $sweep_args --out "$run/unsharded" >/dev/null ||
    fail "unsharded sweep failed"
n=$(grep -c '^{"id"' "$run/unsharded/results.json")
[ "$n" -gt 0 ] || fail "the unsharded sweep has no jobs"
for t in $(seq 1 $shards); do
    k=$(grep -c '^{"id"' "out/shard-$t/results.json")
    [ "$k" -gt 0 ] && [ "$k" -lt "$n" ] || fail "shard $t has $k of $n jobs"
done
diff <(sed '/^"wall":/,$d' "$run/unsharded/results.json") <(sed '/^"wall":/,$d' out/all/results.json) \
    >"$run/diff.txt" || fail "merged results differ from the unsharded sweep: $(head -c 2000 "$run/diff.txt")"
grep '^"complete": true' out/all/results.json >/dev/null || fail "merged results not complete"
echo "slurm test: ok ($n jobs in $shards shards)"
